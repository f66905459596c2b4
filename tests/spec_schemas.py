"""The official MCP JSON Schemas, for checking what mcpkit writes.

One place for the tests of every layer: where the schemas live, how a definition is
looked up, and the strictness added on top (every object definition closed with
``additionalProperties: false`` so a misspelt or extra member fails; ``*MetaObject``
definitions stay open because ``_meta`` is open by design).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

# Copies of the official schemas, one file per revision; data/spec-schemas/README.md says
# where they come from and how to refresh them.
SCHEMAS = Path(__file__).resolve().parent / "data" / "spec-schemas"


@functools.cache
def closed_document(revision: str) -> dict[str, Any]:
    """The revision's schema with its object definitions closed; fails if it is missing."""
    path = SCHEMAS / f"{revision}.json"
    if not path.is_file():
        pytest.fail(f"official schema {path} not found (see {SCHEMAS / 'README.md'})")
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    for name, definition in definitions(document).items():
        closable = "properties" in definition and "additionalProperties" not in definition
        if closable and not name.endswith("MetaObject"):
            definition["additionalProperties"] = False
    return document


def definitions(document: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = document.get("$defs") or document["definitions"]
    return found


def schema_errors(revision: str, definition: str, instance: Any) -> list[str]:
    """Messages of every way ``instance`` fails the revision's ``definition`` (empty: valid)."""
    document = closed_document(revision)
    key = "$defs" if "$defs" in document else "definitions"
    assert definition in document[key]
    validator_class = jsonschema.validators.validator_for(document)
    validator = validator_class({**document, "$ref": f"#/{key}/{definition}"})
    return [error.message for error in validator.iter_errors(instance)]
