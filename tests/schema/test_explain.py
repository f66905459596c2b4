"""Why arguments failed their input schema (issue 19): the location and the constraint, in the
schema's own words, so a model can correct its call; never a submitted value or a member name
the schema does not declare."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.json import from_python
from mcpkit.schema import compile_schema

CANARY = "c4n4ry-s3cret"

SCHEMA: Any = {
    "type": "object",
    "properties": {
        "limit": {"type": "integer", "minimum": 1, "maximum": 50},
        "query": {"type": "string"},
        "mode": {"enum": ["fast", "slow"]},
        "level": {"enum": list(range(9))},
        "shape": {"enum": [{"kind": "circle"}]},
        "word": {"enum": ["x" * 150, "y" * 150]},
        "fixed": {"const": "exact"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "meta": {"type": "object", "additionalProperties": {"type": "integer"}},
        "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        "never": False,
        "choice": {"type": ["string", "null"]},
        "nested": {
            "type": "object",
            "properties": {"inner": {"type": "object", "required": ["id"]}},
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"query": "q", "limit": 51}, "limit: must be at most 50"),
        ({"query": "q", "limit": 0}, "limit: must be at least 1"),
        ({"limit": 5}, "query: required"),
        ({"query": 1}, "query: must be a string"),
        ({"query": "q", "limit": "1"}, "limit: must be an integer"),
        ({"query": "q", "choice": 1}, "choice: must be a null or string"),
        ({"query": "q", "mode": CANARY}, 'mode: must be one of "fast", "slow"'),
        ({"query": "q", "level": 99}, "level: must be one of the values the schema lists"),
        ({"query": "q", "shape": {}}, "shape: must be one of the values the schema lists"),
        ({"query": "q", "word": CANARY}, "word: must be one of the values the schema lists"),
        ({"query": "q", "fixed": CANARY}, "fixed: must be the one value the schema allows"),
        ({"query": "q", "tags": ["a", 2]}, "tags[1]: must be a string"),
        ({"query": "q", "meta": {CANARY: CANARY}}, "meta.*: must be an integer"),
        ({"query": "q", "either": []}, "either: must match one of the forms the schema allows"),
        ({"query": "q", "never": 1}, "never: is not allowed"),
        ({"query": "q", CANARY: 1}, "arguments: has a member the schema does not allow"),
        ({"query": "q", "nested": {"inner": {}}}, "nested.inner.id: required"),
        ([], "arguments: must be an object"),
    ],
)
def test_a_refusal_says_where_and_why_in_the_schemas_words(arguments: object, said: str) -> None:
    schema = compile_schema(SCHEMA)
    assert schema.explain(from_python(arguments)) == said
    assert CANARY not in said


def test_a_budget_past_its_end_says_so() -> None:
    schema = compile_schema(SCHEMA)
    arguments = from_python({"query": "q", "tags": ["a"] * 50})
    said = schema.explain(arguments, max_operations=5)
    assert said == "arguments: too complex to check within the evaluation budget"
