"""The official JSON-Schema-Test-Suite (draft 2020-12), run differentially.

Every test of every group whose schema stays inside Tool Schema Profile 1 (docs/design/schema.md) is
evaluated by mcpkit and by ``jsonschema``; both must agree with the suite's ``valid``.  The
suite comes from the installed ``jsonschema``'s sdist (``suite.py``); fetching it is part of
collection, and a fetch failure is a collection error, never a skip.  ``conftest.py`` prints
the kept/skipped/ran/passed counts at the end of the run.
"""

from __future__ import annotations

import functools
from decimal import Decimal
from typing import Final

import jsonschema
import pytest

from mcpkit.errors import SchemaError
from mcpkit.json import JsonObject
from mcpkit.schema import KEYWORDS, Outcome, ToolSchema, compile_schema

from .suite import (
    PROFILE_1_KEYWORDS,
    SELECTION_KEY,
    Case,
    Group,
    Selection,
    exclusions,
    load_groups,
    select,
)

# Groups inside Profile 1 by keyword that the compiler refuses for a rule docs/design/schema.md
# names (unsafe recursion, a $ref into enum data, the node or depth limit):
# (file, group description) -> the rule.  None today: every keyword-selected group compiles.
# An entry must keep being refused (test_named_rejections); a refusal not listed here fails
# that group's cases.
NAMED_REJECTIONS: Final[dict[tuple[str, str], str]] = {}

# Floors on what the filter keeps (jsonschema 4.26.0: 132 groups, 516 cases), so a filter that
# silently drops groups fails; and files whose keywords are all Profile 1 or mostly so.
MIN_KEPT_GROUPS: Final = 130
MIN_KEPT_CASES: Final = 512
FILES_THAT_MUST_RUN: Final = (
    "additionalProperties",
    "allOf",
    "anchor",
    "anyOf",
    "boolean_schema",
    "const",
    "default",
    "enum",
    "format",
    "if-then-else",
    "infinite-loop-detection",
    "items",
    "maxLength",
    "maximum",
    "minLength",
    "minimum",
    "pattern",
    "properties",
    "ref",
    "required",
    "type",
)


def _is_integer(_checker: object, instance: object) -> bool:
    """2020-12 ``integer``: any integral number, so ``Decimal("1.0")`` too.

    ``jsonschema`` counts integral *floats* but not integral ``Decimal``s; with exact numbers
    (``parse_float=Decimal``) it would otherwise contradict the suite ("a float with zero
    fractional part is an integer").
    """
    if isinstance(instance, Decimal):
        return instance == instance.to_integral_value()
    return isinstance(instance, int) and not isinstance(instance, bool)


# extend() is untyped in types-jsonschema.
ExactValidator: Final = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer),
)


@functools.cache
def selection() -> Selection:
    return select(NAMED_REJECTIONS)


@functools.cache
def _groups() -> dict[tuple[str, int], Group]:
    return {(group.file, group.index): group for group in load_groups()}


@functools.cache
def _compiled(file: str, index: int) -> ToolSchema:
    return compile_schema(_groups()[(file, index)].schema, object_root=False)


@functools.cache
def _oracle(file: str, index: int) -> jsonschema.protocols.Validator:
    schema = _groups()[(file, index)].plain_schema
    validator: jsonschema.protocols.Validator = ExactValidator(schema)
    return validator


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One test id per kept suite case: ``file/group/description``."""
    if "case" in metafunc.fixturenames:
        chosen = selection()
        metafunc.config.stash[SELECTION_KEY] = chosen
        cases = chosen.kept_cases
        metafunc.parametrize("case", cases, ids=[case.test_id for case in cases])


@pytest.fixture(scope="session")
def suite_selection() -> Selection:
    """The fetched, partitioned suite (fetched at most once per run and cached in build/)."""
    return selection()


def test_case(case: Case) -> None:
    outcome = _compiled(case.file, case.group_index).evaluate(case.data)
    oracle = _oracle(case.file, case.group_index).is_valid(case.plain_data)
    expected = Outcome.VALID if case.valid else Outcome.INVALID
    assert (outcome, oracle) == (expected, case.valid)


def test_named_rejections(suite_selection: Selection) -> None:
    """Each named rejection exists in the suite and is still refused by the compiler."""
    assert {group.key for group in suite_selection.rejected} == set(NAMED_REJECTIONS)
    for group in suite_selection.rejected:
        with pytest.raises(SchemaError):
            _compiled(group.file, group.index)


def test_selection_floor(suite_selection: Selection) -> None:
    kept_files = {group.file for group in suite_selection.kept}
    assert len(suite_selection.kept) >= MIN_KEPT_GROUPS
    assert len(suite_selection.kept_cases) >= MIN_KEPT_CASES
    assert set(FILES_THAT_MUST_RUN) <= kept_files
    total = sum(len(group.cases) for group in load_groups())
    skipped = sum(len(group.cases) for group in suite_selection.skipped)
    rejected = sum(len(group.cases) for group in suite_selection.rejected)
    assert len(suite_selection.kept_cases) + skipped + rejected == total


def test_filter_matches_the_compilers_keyword_set() -> None:
    assert frozenset(KEYWORDS) == PROFILE_1_KEYWORDS


@pytest.mark.parametrize(
    ("schema", "reasons"),
    [
        # Names under properties/$defs are not keywords; enum/const/default/examples are data.
        ({"properties": {"minItems": {"type": "string"}}, "$defs": {"not": True}}, set()),
        ({"enum": [{"$id": "x", "not": {}}], "const": {"$ref": "a.json"}}, set()),
        ({"default": {"oneOf": []}, "examples": [{"$schema": "x"}]}, set()),
        ({"$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": "#/$defs/a"}, set()),
        ({"items": {"not": {}}}, {"keyword not"}),
        ({"allOf": [True, {"anyOf": [{"if": {"then": {"minItems": 1}}}]}]}, {"keyword minItems"}),
        ({"additionalProperties": {"else": {"$id": "x"}}}, {"$id"}),
        ({"$ref": "other.json#/a"}, {"$ref to a URI"}),
        (
            {"$defs": {"a": {"$schema": "https://json-schema.org/draft/2020-12/schema"}}},
            {"$schema below the root"},
        ),
        (
            {"$schema": "http://json-schema.org/draft-07/schema#"},
            {"$schema http://json-schema.org/draft-07/schema#"},
        ),
    ],
)
def test_exclusions(schema: dict[str, object], reasons: set[str]) -> None:
    assert exclusions(JsonObject(schema)) == reasons
