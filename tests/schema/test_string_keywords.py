"""``minLength``, ``maxLength`` and ``pattern``: the profile's string extension
(docs/design/schema.md).

Compile refusals with fixed messages, evaluation at the boundaries (code points, so an astral
character is one), strings only, the operation budget a search charges, the failure the
evaluator records and the sentence a refused call gets.  The shortcuts (flat nodes, type-only
members) must decide and charge like the general driver with these keywords too.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Final

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mcpkit.errors import SchemaError
from mcpkit.json import decode, from_python
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.schema import Outcome, ToolSchema, compile_schema
from mcpkit.schema._evaluate import _check, _Run, diagnose

from .test_fast_paths import _differential

BIG: Final = 10**9
CANARY: Final = "c4n4ry-s3cret"


def value_schema(**keywords: Any) -> ToolSchema:
    return compile_schema(keywords, object_root=False)


def tool(**properties: Any) -> ToolSchema:
    return compile_schema({"type": "object", "properties": properties})


def refused(document: Any, match: str, **options: Any) -> None:
    with pytest.raises(SchemaError, match=match):
        compile_schema(document, **options)


# --- compile --------------------------------------------------------------------------------


@pytest.mark.parametrize("keyword", ["minLength", "maxLength"])
@pytest.mark.parametrize(
    "value",
    [b"-1", b"1.5", b"-1.0", b"1e-1", b'"1"', b"true", b"null", b"[1]", b"{}"],
    ids=lambda value: value.decode(),
)
def test_a_length_must_be_a_non_negative_integer(keyword: str, value: bytes) -> None:
    document = decode(b'{"type":"object","properties":{"a":{"%s":%s}}}' % (keyword.encode(), value))
    refused(
        document,
        f"^schema at #/properties/a: {keyword} must be a non-negative integer$",
    )


@pytest.mark.parametrize(
    ("spelling", "shortest", "longest"),
    [(b"2", "ab", "ab"), (b"2.0", "ab", "ab"), (b"2E+0", "ab", "ab"), (b"0.02e2", "ab", "ab")],
)
def test_integral_numbers_are_lengths(spelling: bytes, shortest: str, longest: str) -> None:
    """2020-12: a length is a non-negative integer, and 2.0 is one."""
    at_least = value_schema(minLength=decode(spelling))
    at_most = value_schema(maxLength=decode(spelling))
    assert at_least.is_valid(shortest) and not at_least.is_valid(shortest[:-1])
    assert at_most.is_valid(longest) and not at_most.is_valid(longest + "c")


def test_lengths_past_any_string_compare_without_expansion() -> None:
    huge = decode(b"1e999999999")
    assert isinstance(huge, Decimal)
    assert not value_schema(minLength=huge).is_valid("a" * 1000)
    assert value_schema(maxLength=huge).is_valid("a" * 1000)
    assert value_schema(minLength=10**40).evaluate("a") is Outcome.INVALID
    assert value_schema(minLength=Decimal("-0")).is_valid("")
    assert value_schema(minLength=0, maxLength=0).is_valid("")


@pytest.mark.parametrize("value", [5, True, None, ["a"], {"a": "b"}])
def test_a_pattern_must_be_a_string(value: object) -> None:
    refused(
        {"type": "object", "properties": {"a": {"pattern": value}}},
        "^schema at #/properties/a: pattern must be a string$",
    )


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ("^(a)\\1$", "pattern: backreferences and octal escapes are not supported (at offset 4)"),
        ("(?=x)", "pattern: lookahead assertions are not supported (at offset 0)"),
        ("\\p{L}", "pattern: Unicode property escapes"),
        ("(?i)x", "pattern: inline flags"),
        ("(?<n>x)", "pattern: named groups are not supported"),
        ("a{2,1}", "pattern: a quantifier's minimum exceeds its maximum"),
    ],
)
def test_an_unsupported_pattern_is_refused_saying_what(source: str, problem: str) -> None:
    with pytest.raises(SchemaError) as refusal:
        compile_schema({"type": "object", "properties": {"code": {"pattern": source}}})
    assert str(refusal.value).startswith(f"schema at #/properties/code: {problem}")


def test_pattern_chars_limit_at_and_past() -> None:
    at_limit = {"type": "object", "properties": {"a": {"pattern": "a" * 1_000}}}
    assert compile_schema(at_limit).is_valid(from_python({"a": "a" * 1_000}))
    past = {"type": "object", "properties": {"a": {"pattern": "a" * 1_001}}}
    refused(past, "^schema at #/properties/a: pattern: is longer than 1000 characters$")
    small = Limits(max_pattern_chars=3)
    compile_schema({"type": "object", "properties": {"a": {"pattern": "^a$"}}}, limits=small)
    refused(
        {"type": "object", "properties": {"a": {"pattern": "^ab$"}}},
        "longer than 3 characters",
        limits=small,
    )


def test_pattern_states_limit_at_and_past() -> None:
    """``a{n}`` compiles to n states and a match state."""
    assert DEFAULT_LIMITS.max_pattern_states == 10_000
    compile_schema({"type": "object", "properties": {"a": {"pattern": "a{9999}"}}})
    refused(
        {"type": "object", "properties": {"a": {"pattern": "a{10000}"}}},
        "^schema at #/properties/a: pattern: compiles to more than 10000 states$",
    )
    refused(
        {"type": "object", "properties": {"a": {"pattern": "(a{1000}){1000}"}}},
        "compiles to more than 10000 states",
    )
    small = Limits(max_pattern_states=4)
    compile_schema({"type": "object", "properties": {"a": {"pattern": "^a$"}}}, limits=small)
    refused(
        {"type": "object", "properties": {"a": {"pattern": "^aa$"}}},
        "more than 4 states",
        limits=small,
    )


# --- evaluate -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("keywords", "valid", "invalid"),
    [
        ({"minLength": 3}, ["abc", "abcd", "\U0001f600" * 3], ["ab", "", "\U0001f600" * 2]),
        ({"maxLength": 3}, ["abc", "", "\U0001f600" * 3], ["abcd", "\U0001f600" * 4]),
        ({"minLength": 2, "maxLength": 2}, ["ab", "\U0001f600\U0001f600"], ["a", "abc"]),
        ({"minLength": 3, "maxLength": 2}, [], ["ab", "abc", ""]),
        ({"pattern": "^[A-Z]{3}$"}, ["ABC"], ["AB", "ABCD", "abc", "ABC\n"]),
        ({"pattern": "b"}, ["abc", "b"], ["", "ac"]),
        ({"pattern": "^\\d+$"}, ["123"], ["\u0661\u0662"]),
    ],
)
def test_boundaries_in_code_points(
    keywords: dict[str, Any], valid: list[str], invalid: list[str]
) -> None:
    schema = value_schema(**keywords)
    for text in valid:
        assert schema.evaluate(text) is Outcome.VALID, text
    for text in invalid:
        assert schema.evaluate(text) is Outcome.INVALID, text


def test_an_escaped_surrogate_pair_is_one_code_point() -> None:
    text = decode(b'"\\ud83d\\ude00"')
    assert value_schema(maxLength=1, minLength=1, pattern="^.$").is_valid(text)


@pytest.mark.parametrize("instance", [12, Decimal("1.5"), True, None, [], ["abcdef"], {"a": 1}])
def test_string_keywords_ignore_other_types(instance: object) -> None:
    schema = value_schema(minLength=3, maxLength=4, pattern="^x$")
    assert schema.evaluate(from_python(instance)) is Outcome.VALID
    typed = value_schema(type=["string", "integer"], minLength=3)
    assert typed.evaluate(from_python(5)) is Outcome.VALID


@pytest.mark.parametrize(
    ("keywords", "text", "keyword"),
    [
        ({"minLength": 3}, "ab", "minLength"),
        ({"maxLength": 1}, "ab", "maxLength"),
        ({"pattern": "^x"}, "ab", "pattern"),
        ({"minLength": 3, "pattern": "^x"}, "ab", "minLength"),
        ({"maxLength": 1, "pattern": "^x"}, "ab", "maxLength"),
        ({"type": "integer", "minLength": 3}, "ab", "type"),
        ({"enum": ["x"], "minLength": 3}, "ab", "enum"),
    ],
)
def test_the_failure_names_the_keyword(keywords: dict[str, Any], text: str, keyword: str) -> None:
    schema = tool(name=keywords)
    found, failure = diagnose(schema._root, from_python({"name": text}), BIG)
    assert found is Outcome.INVALID and failure is not None
    assert (failure.path, failure.keyword) == (("name",), keyword)
    assert schema.error_path(from_python({"name": text})) == ("name",)


def test_a_pattern_search_is_charged_per_state_visited() -> None:
    node = value_schema(type="string", pattern="(a|a)*b")._root
    assert node.pattern is not None
    assert node.cost == 3  # the node, "type", "pattern"
    for text in ("", "b", "aaab", "a" * 500):
        run = _Run(BIG, None)
        _check(node, text, run)
        assert BIG - run.budget == node.cost + node.pattern.search(text, BIG)[1]
    lengths = value_schema(minLength=1, maxLength=5)._root
    assert lengths.cost == 2  # one check for both bounds, like minimum and maximum


@pytest.mark.parametrize("text", ["a" * 1_000, "a" * 999 + "b", "b"])
def test_the_budget_boundary(text: str) -> None:
    schema = tool(s={"type": "string", "pattern": "(a|a)*b"})
    instance = from_python({"s": text})
    run = _Run(BIG, None)
    assert _check(schema._root.properties["s"], text, run) is text.endswith("b")
    needed = next(
        budget
        for budget in range(BIG - run.budget, BIG)
        if schema.evaluate(instance, max_operations=budget) is not Outcome.BUDGET_EXHAUSTED
    )
    assert schema.evaluate(instance, max_operations=needed - 1) is Outcome.BUDGET_EXHAUSTED
    assert schema.evaluate(instance, max_operations=needed) is (
        Outcome.VALID if text.endswith("b") else Outcome.INVALID
    )


@pytest.mark.parametrize("source", ["(a+)+$", "(a|a)*b", "(a*)*b"])
def test_pathological_patterns_stay_within_the_default_budget(source: str) -> None:
    """100,000 code points: linear, so under 1,000,000 operations; charged, not wall time."""
    schema = tool(s={"type": "string", "pattern": source})
    text = "a" * 100_000 + "!"
    node = schema._root.properties["s"]
    assert node.pattern is not None
    run = _Run(BIG, None)
    assert not _check(node, text, run)
    charged = BIG - run.budget
    assert charged <= node.cost + node.pattern.states * (len(text) + 1)
    assert charged < DEFAULT_LIMITS.max_evaluation_operations
    assert schema.evaluate(from_python({"s": text})) is Outcome.INVALID


def test_a_long_string_exhausts_the_budget_cleanly() -> None:
    schema = tool(s={"type": "string", "pattern": "(a|a)*b"})
    arguments = from_python({"s": "a" * 200_000})
    assert schema.evaluate(arguments) is Outcome.BUDGET_EXHAUSTED
    assert schema.evaluate(arguments, max_operations=2_000_000) is Outcome.INVALID
    said = schema.explain(arguments)
    assert said == "arguments: too complex to check within the evaluation budget"


# --- explain --------------------------------------------------------------------------------

SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 3, "maxLength": 40},
        "initial": {"type": "string", "minLength": 1, "maxLength": 1},
        "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "long": {"type": "string", "pattern": "^" + "(?:ab)" * 40 + "$"},
        "odd": {"pattern": "^\t$"},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 2}},
    },
}


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"name": "ab"}, "name: must be at least 3 characters"),
        ({"name": "x" * 41 + CANARY}, "name: must be at most 40 characters"),
        ({"initial": ""}, "initial: must be at least 1 character"),
        ({"initial": "ab"}, "initial: must be at most 1 character"),
        ({"code": CANARY}, "code: must match the pattern ^[A-Z]{3}$"),
        ({"long": CANARY}, "long: must match the pattern the schema gives"),
        ({"odd": CANARY}, "odd: must match the pattern the schema gives"),
        ({"tags": ["ok", CANARY]}, "tags[1]: must be at most 2 characters"),
    ],
)
def test_a_refusal_says_which_string_constraint(arguments: dict[str, Any], said: str) -> None:
    schema = compile_schema(SCHEMA)
    assert schema.explain(from_python(arguments)) == said
    assert CANARY not in said


def test_a_huge_length_is_said_as_written() -> None:
    schema = tool(a={"minLength": decode(b"1E+400")})
    assert schema.explain(from_python({"a": "x"})) == "a: must be at least 1E+400 characters"


# --- the shortcuts agree with the general driver --------------------------------------------

NAMES = st.sampled_from(["a", "b", "c"])
PATTERNS = st.sampled_from(["", "^a", "b", "^(a|b)*$", "c$", "^.{2}$", "(a|a)*b"])
STRING_LEAVES = st.one_of(
    st.builds(lambda kind: {"type": kind}, st.sampled_from(["string", "integer"])),
    st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(["string", "integer", ["string", "null"]]),
            "minLength": st.integers(0, 3),
            "maxLength": st.integers(0, 3),
            "pattern": PATTERNS,
            "enum": st.lists(st.sampled_from(["a", "ab", "abc", 1]), min_size=1, max_size=2),
        },
    ),
)
STRING_OBJECTS = st.fixed_dictionaries(
    {"type": st.just("object")},
    optional={
        "properties": st.dictionaries(NAMES, STRING_LEAVES, max_size=3),
        "additionalProperties": STRING_LEAVES,
        "required": st.lists(NAMES, unique=True, max_size=2),
        "items": STRING_LEAVES,
        "maxLength": st.integers(0, 2),
    },
)
TEXT = st.text(alphabet="abc", max_size=5)
STRING_INSTANCES = st.one_of(
    TEXT,
    st.dictionaries(NAMES, st.one_of(TEXT, st.integers(-1, 1), st.none()), max_size=4),
    st.lists(st.one_of(TEXT, st.integers(0, 1)), max_size=3),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(STRING_OBJECTS, STRING_LEAVES), STRING_INSTANCES, st.integers(0, 100))
@example({"type": "object", "properties": {"a": {"pattern": "^a"}}}, {"a": "ba"}, 0)
@example({"type": "object", "additionalProperties": {"minLength": 2}}, {"b": "a"}, 0)
@example({"type": "object", "items": {"maxLength": 1}}, ["ab"], 0)
def test_shortcuts_charge_and_decide_like_the_general_driver(
    document: Any, instance: object, budget: int
) -> None:
    _differential(document, instance, budget)


def test_string_keywords_keep_a_member_off_the_type_only_shortcut() -> None:
    root = tool(a={"type": "string"}, b={"type": "string", "maxLength": 2})._root
    assert root.flat
    assert root.properties["a"].accept == frozenset({str})
    assert root.properties["b"].accept == frozenset()
    assert not root.properties["b"].plain
