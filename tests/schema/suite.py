"""Obtain the official JSON-Schema-Test-Suite and select the groups Profile 1 can express.

The suite is not committed: the ``jsonschema`` sdist ships it under
``json/tests/draft2020-12/``, so it is fetched with pip for the installed ``jsonschema``
version (the differential oracle and the suite then always match) and cached under
``build/`` (gitignored).  The keyword filter is written from docs/design/schema.md, not imported
from the compiler, so a compiler that wrongly accepts or drops a keyword cannot also shrink
or widen the set of cases that test it.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
import json
import subprocess
import sys
import tarfile
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any, Final

import pytest

from mcpkit.json import JsonArray, JsonObject, JsonValue, decode, from_python

ROOT: Final = Path(__file__).resolve().parents[2]
CACHE: Final = ROOT / "build" / "json-schema-test-suite"
SUITE_MEMBER_DIR: Final = "json/tests/draft2020-12/"
DRAFT_2020_12: Final = "https://json-schema.org/draft/2020-12/schema"
PIP_TIMEOUT_SECONDS: Final = 600

# docs/design/schema.md, "Compile": the recognised keywords (P1-09).
PROFILE_1_KEYWORDS: Final = frozenset(
    {
        "$schema",
        "$defs",
        "$anchor",
        "$ref",
        "$comment",
        "properties",
        "additionalProperties",
        "items",
        "allOf",
        "anyOf",
        "if",
        "then",
        "else",
        "type",
        "enum",
        "const",
        "required",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
        "x-mcp-header",
    }
)
# Where Profile 1 keywords hold subschemas; every other keyword's value is data or a scalar
# (enum/const/default/examples hold instances, the keys of properties/$defs are names).
SCHEMA_MAP_KEYWORDS: Final = ("properties", "$defs")
SCHEMA_KEYWORDS: Final = ("items", "additionalProperties", "if", "then", "else")
SCHEMA_ARRAY_KEYWORDS: Final = ("allOf", "anyOf")


@dataclasses.dataclass(frozen=True)
class Group:
    """One suite test group: its schema in both forms and why (if at all) it is excluded.

    ``schema`` is mcpkit's exact value (``mcpkit.json.decode`` of the file);
    ``plain_schema`` is ``json.loads(..., parse_float=Decimal)`` of the same bytes, for
    ``jsonschema``.
    """

    file: str
    index: int
    description: str
    schema: JsonValue
    plain_schema: Any
    cases: tuple[Case, ...]
    exclusions: frozenset[str]

    @property
    def key(self) -> tuple[str, str]:
        return (self.file, self.description)


@dataclasses.dataclass(frozen=True)
class Case:
    """One suite test: an instance in both forms and the suite's expected verdict."""

    file: str
    group_index: int
    group_description: str
    description: str
    data: JsonValue
    plain_data: Any
    valid: bool

    @property
    def test_id(self) -> str:
        return f"{self.file}/{self.group_description}/{self.description}"


def exclusions(schema: JsonValue) -> frozenset[str]:
    """Every reason the schema is outside Profile 1 (empty if it is inside).

    Reasons: ``keyword NAME`` (not recognised), ``$id`` (base URI changes), ``$ref URI`` (not a
    same-document ``#...`` fragment; remote refs included), ``$schema URI`` (not 2020-12) and
    ``$schema below the root``.  Walks with an explicit stack, like the evaluator.
    """
    found: set[str] = set()
    stack: list[tuple[JsonValue, bool]] = [(schema, True)]
    while stack:
        node, at_root = stack.pop()
        if not isinstance(node, JsonObject):
            continue  # boolean schemas; anything else is the compiler's to refuse
        for keyword, value in node.items():
            if keyword == "$id":
                found.add("$id")
            elif keyword == "$schema":
                if not at_root:
                    found.add("$schema below the root")
                elif value != DRAFT_2020_12:
                    found.add(f"$schema {value}")
            elif keyword == "$ref":
                if not (isinstance(value, str) and value.startswith("#")):
                    found.add("$ref to a URI")
            elif keyword not in PROFILE_1_KEYWORDS:
                found.add(f"keyword {keyword}")
            if keyword in SCHEMA_MAP_KEYWORDS and isinstance(value, JsonObject):
                stack.extend((child, False) for child in value.values())
            elif keyword in SCHEMA_KEYWORDS:
                stack.append((value, False))
            elif keyword in SCHEMA_ARRAY_KEYWORDS and isinstance(value, JsonArray):
                stack.extend((child, False) for child in value)
    return frozenset(found)


def jsonschema_version() -> str:
    return importlib.metadata.version("jsonschema")


@functools.cache
def suite_dir() -> Path:
    """The extracted top-level ``draft2020-12/*.json`` files; fetched once, then reused.

    Raises ``RuntimeError`` (never skips) when pip cannot fetch the sdist or the sdist lacks
    the suite: CI has PyPI, so a missing suite is a broken set-up, not a reason to pass.
    """
    version = jsonschema_version()
    target = CACHE / f"jsonschema-{version}"
    files = target / "draft2020-12"
    done = target / "extracted.ok"
    if done.is_file():
        return files
    target.mkdir(parents=True, exist_ok=True)
    sdist = target / f"jsonschema-{version}.tar.gz"
    if not sdist.is_file():
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            ":all:",
            "--disable-pip-version-check",
            f"jsonschema=={version}",
            "--dest",
            str(target),
        ]
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=PIP_TIMEOUT_SECONDS, check=False
        )
        if result.returncode != 0 or not sdist.is_file():
            raise RuntimeError(
                f"could not fetch the jsonschema {version} sdist with pip "
                f"(exit {result.returncode}):\n{result.stderr[-4000:]}"
            )
    prefix = f"jsonschema-{version}/{SUITE_MEMBER_DIR}"
    files.mkdir(exist_ok=True)
    extracted = 0
    with tarfile.open(sdist, "r:gz") as archive:
        for member in archive.getmembers():
            name = member.name.removeprefix(prefix)
            # Top-level files only: optional/ (formats, bignums) is not Profile 1; its ECMA
            # regex files are read from the sdist by test_pattern.py.
            if name == member.name or "/" in name or not name.endswith(".json"):
                continue
            stream = archive.extractfile(member) if member.isfile() else None
            if stream is None:
                continue
            (files / name).write_bytes(stream.read())
            extracted += 1
    if extracted == 0:
        raise RuntimeError(
            f"the jsonschema {version} sdist has no {SUITE_MEMBER_DIR}*.json; pin a jsonschema "
            "version whose sdist ships the suite (4.26.0 does)"
        )
    done.write_text(f"{extracted}\n")
    return files


def _load_file(path: Path) -> tuple[Group, ...]:
    """Both forms of one suite file, walked in parallel (they come from the same bytes)."""
    raw = path.read_bytes()
    exact = decode(raw)
    # decode() already returns JsonValues; from_python is the documented identity on them and
    # states which form the evaluator gets.
    exact = from_python(exact)
    plain = json.loads(raw, parse_float=Decimal)
    assert isinstance(exact, JsonArray) and isinstance(plain, list)
    assert len(exact) == len(plain)
    groups: list[Group] = []
    for index, (group, plain_group) in enumerate(zip(exact, plain, strict=True)):
        assert isinstance(group, JsonObject)
        description = group["description"]
        tests = group["tests"]
        assert isinstance(description, str) and isinstance(tests, JsonArray)
        cases: list[Case] = []
        for test, plain_test in zip(tests, plain_group["tests"], strict=True):
            assert isinstance(test, JsonObject)
            test_description = test["description"]
            valid = test["valid"]
            assert isinstance(test_description, str) and isinstance(valid, bool)
            cases.append(
                Case(
                    file=path.stem,
                    group_index=index,
                    group_description=description,
                    description=test_description,
                    data=test["data"],
                    plain_data=plain_test["data"],
                    valid=valid,
                )
            )
        groups.append(
            Group(
                file=path.stem,
                index=index,
                description=description,
                schema=group["schema"],
                plain_schema=plain_group["schema"],
                cases=tuple(cases),
                exclusions=exclusions(group["schema"]),
            )
        )
    return tuple(groups)


@functools.cache
def load_groups() -> tuple[Group, ...]:
    """Every group of every top-level draft2020-12 file, in file order."""
    return tuple(group for path in sorted(suite_dir().glob("*.json")) for group in _load_file(path))


@dataclasses.dataclass(frozen=True)
class Selection:
    """The partition of the suite's groups that the differential tests run."""

    kept: tuple[Group, ...]
    """Inside Profile 1 by keyword and not in the named rejection table: every case runs."""
    rejected: tuple[Group, ...]
    """Inside Profile 1 by keyword, refused by the compiler for a named Profile 1 rule."""
    skipped: tuple[Group, ...]
    """Outside Profile 1 by keyword, ``$id``, ``$ref`` or ``$schema``."""

    @property
    def kept_cases(self) -> tuple[Case, ...]:
        return tuple(case for group in self.kept for case in group.cases)

    def by_file(self) -> dict[str, tuple[int, int, int, int, int, int]]:
        """file -> (kept groups, kept cases, rejected groups, their cases, skipped, cases)."""
        counts: dict[str, list[int]] = {}
        for slot, groups in enumerate((self.kept, self.rejected, self.skipped)):
            for group in groups:
                row = counts.setdefault(group.file, [0] * 6)
                row[2 * slot] += 1
                row[2 * slot + 1] += len(group.cases)
        return {file: (r[0], r[1], r[2], r[3], r[4], r[5]) for file, r in sorted(counts.items())}

    def skip_reasons(self) -> Counter[str]:
        """Skipped groups per reason (a group with several reasons counts under each)."""
        return Counter(reason for group in self.skipped for reason in group.exclusions)


def select(rejections: dict[tuple[str, str], str]) -> Selection:
    """Partition the suite; ``rejections`` maps (file, group description) to its named rule."""
    kept: list[Group] = []
    rejected: list[Group] = []
    skipped: list[Group] = []
    for group in load_groups():
        if group.exclusions:
            skipped.append(group)
        elif group.key in rejections:
            rejected.append(group)
        else:
            kept.append(group)
    return Selection(tuple(kept), tuple(rejected), tuple(skipped))


SELECTION_KEY: Final = pytest.StashKey[Selection]()
"""Set when the differential cases are collected; read by conftest.py's summary."""
