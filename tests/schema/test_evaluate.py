"""The Profile 1 evaluator: 2020-12 semantics, the operation budget, no recursion, diagnostics."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from mcpkit.json import decode, from_python
from mcpkit.limits import Limits
from mcpkit.schema import EvaluationGate, Outcome, compile_schema


def check(schema: Any, instance: bytes) -> bool:
    """Evaluate a non-root schema on a JSON document given as bytes (numbers stay exact)."""
    return compile_schema(schema, object_root=False).is_valid(decode(instance))


TYPES: list[tuple[str, list[bytes], list[bytes]]] = [
    ("null", [b"null"], [b"false", b"0", b'""', b"[]", b"{}"]),
    ("boolean", [b"true", b"false"], [b"0", b"1", b"null", b'"true"']),
    ("object", [b"{}", b'{"a":1}'], [b"[]", b"null", b'"{}"']),
    ("array", [b"[]", b"[1,[2]]"], [b"{}", b'"[]"', b"null"]),
    ("string", [b'""', b'"x"'], [b"1", b"null", b"[]"]),
    ("number", [b"1", b"-1.5", b"1e400", b"0"], [b"true", b'"1"', b"null"]),
    (
        "integer",
        [b"1", b"-0", b"1.0", b"1E+2", b"10.000", b"1e999999999", b"0.0e-5", b"12.5e1"],
        [b"1.5", b"true", b"1e-1", b"0.1e0", b'"1"', b"1.000001"],
    ),
]


@pytest.mark.parametrize(("name", "good", "bad"), TYPES, ids=[t[0] for t in TYPES])
def test_type_keyword_with_2020_12_integer_semantics(
    name: str, good: list[bytes], bad: list[bytes]
) -> None:
    for instance in good:
        assert check({"type": name}, instance), instance
    for instance in bad:
        assert not check({"type": name}, instance), instance


def test_values_outside_the_json_model_match_no_type() -> None:
    schema = compile_schema({"type": ["number", "string", "object", "array"]}, object_root=False)
    for value in (1.5, b"x", {1, 2}, object()):
        assert schema.evaluate(value) is Outcome.INVALID  # type: ignore[arg-type]


def test_type_lists_accept_any_listed_type() -> None:
    assert check({"type": ["string", "null"]}, b"null")
    assert check({"type": ["string", "null"]}, b'"x"')
    assert not check({"type": ["string", "null"]}, b"0")


@pytest.mark.parametrize(
    ("schema", "good", "bad"),
    [
        ({"enum": [1, "a", None]}, [b"1", b"1.0", b"1E+0", b'"a"', b"null"], [b"true", b'"1"']),
        ({"enum": [True]}, [b"true"], [b"1", b"1.0"]),
        ({"enum": [0]}, [b"0", b"-0", b"0.00"], [b"false", b"null"]),
        (
            {"enum": [[1, 2], {"a": [1]}]},
            [b"[1,2.0]", b'{"a":[1.0]}'],
            [b"[2,1]", b'{"a":[1],"b":1}'],
        ),
        ({"enum": [{"a": 1, "b": 2}]}, [b'{"b":2,"a":1}'], [b'{"a":1}', b'{"a":true,"b":2}']),
        ({"const": 1.5}, [b"1.50", b"15e-1"], [b"1.51", b'"1.5"']),
        ({"const": None}, [b"null"], [b"0", b"false", b"{}"]),
        ({"const": {"k": [True, None]}}, [b'{"k":[true,null]}'], [b'{"k":[1,null]}']),
        ({"const": []}, [b"[]"], [b"{}", b"[[]]"]),
        ({"const": {"a": 1}}, [b'{"a":1}'], [b'{"b":1}', b"[1]", b"1"]),
        ({"const": [1]}, [b"[1]"], [b'{"0":1}', b"[1,1]"]),
        ({"const": "a"}, [b'"a"', b'"\\u0061"'], [b'"b"', b"1", b"null"]),
    ],
)
def test_enum_and_const_use_json_equality(
    schema: dict[str, Any], good: list[bytes], bad: list[bytes]
) -> None:
    for instance in good:
        assert check(schema, instance), instance
    for instance in bad:
        assert not check(schema, instance), instance


def test_minimum_and_maximum_are_inclusive_and_exact() -> None:
    schema = {"minimum": 1, "maximum": 2.5}
    for good in (b"1", b"1.0", b"2.5", b"2.50", b"25e-1", b'"x"', b"null"):
        assert check(schema, good), good
    for bad in (b"0.999999999999999999999", b"2.5000000000000000001", b"1e999999999", b"-1e9"):
        assert not check(schema, bad), bad
    assert check({"maximum": 1e300}, b"1e299")
    assert not check({"minimum": 0}, b"-1e-999999999")


def test_object_keywords() -> None:
    schema = {
        "type": "object",
        "required": ["a"],
        "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
        "additionalProperties": {"type": "boolean"},
    }
    assert check(schema, b'{"a":1}')
    assert check(schema, b'{"a":1,"b":"x","c":true}')
    assert not check(schema, b'{"b":"x"}')
    assert not check(schema, b'{"a":"1"}')
    assert not check(schema, b'{"a":1,"c":1}')
    assert check({"required": ["a"], "additionalProperties": False}, b"[]")  # only objects
    assert not check({"additionalProperties": False}, b'{"x":null}')
    assert check({"additionalProperties": False, "properties": {"x": True}}, b'{"x":null}')


def test_items_applies_to_every_item() -> None:
    assert check({"items": {"type": "integer"}}, b"[1,2,3.0]")
    assert not check({"items": {"type": "integer"}}, b"[1,2,3.5]")
    assert check({"items": False}, b"[]")
    assert not check({"items": False}, b"[0]")
    assert check({"items": False}, b'{"a":1}')


def test_applicators() -> None:
    assert check({"allOf": [{"minimum": 1}, {"maximum": 3}]}, b"2")
    assert not check({"allOf": [{"minimum": 1}, {"maximum": 3}]}, b"4")
    assert check({"anyOf": [{"type": "string"}, {"minimum": 3}]}, b"4")
    assert not check({"anyOf": [{"type": "string"}, {"minimum": 3}]}, b"2")
    conditional = {"if": {"type": "integer"}, "then": {"minimum": 0}, "else": {"type": "string"}}
    assert check(conditional, b"1")
    assert not check(conditional, b"-1")
    assert check(conditional, b'"x"')
    assert not check(conditional, b"1.5")
    assert check({"if": {"type": "integer"}}, b"1.5")  # if alone never fails
    assert check({"then": False}, b"1")  # then without if is ignored
    assert check({"if": False, "then": False}, b"1")


def test_ref_applies_alongside_sibling_keywords() -> None:
    schema = {"$defs": {"pos": {"minimum": 0}}, "$ref": "#/$defs/pos", "maximum": 10}
    assert check(schema, b"5")
    assert not check(schema, b"-1")
    assert not check(schema, b"11")
    anchored = {"$defs": {"s": {"$anchor": "str", "type": "string"}}, "items": {"$ref": "#str"}}
    assert check(anchored, b'["a"]')
    assert not check(anchored, b"[1]")


def test_annotations_do_not_assert() -> None:
    schema = {"format": "email", "title": "t", "default": 5, "deprecated": True, "readOnly": True}
    assert check(schema, b'"not an email"')


def test_deep_values_and_recursive_schemas_need_no_python_recursion() -> None:
    nested = {
        "$defs": {"n": {"type": "array", "items": {"$ref": "#/$defs/n"}}},
        "$ref": "#/$defs/n",
    }
    deep = b"[" * 128 + b"]" * 128
    assert check(nested, deep)
    assert not check(nested, b"[" * 127 + b"1" + b"]" * 127)


def test_long_reference_chains_need_no_python_recursion() -> None:
    defs: dict[str, Any] = {"d0": {"type": "integer"}}
    for index in range(1, 3000):
        defs[f"d{index}"] = {"$ref": f"#/$defs/d{index - 1}"}
    schema = compile_schema({"$ref": "#/$defs/d2999", "$defs": defs}, object_root=False)
    assert schema.is_valid(7)
    assert not schema.is_valid("7")


def _fan_out(levels: int, enum_size: int) -> dict[str, Any]:
    """A small schema whose evaluation work doubles with every level (a DAG, not a cycle)."""
    defs: dict[str, Any] = {"d0": {"enum": [[index] for index in range(enum_size)]}}
    for index in range(1, levels + 1):
        previous = {"$ref": f"#/$defs/d{index - 1}"}
        defs[f"d{index}"] = {"anyOf": [previous, previous]}
    return {"type": "object", "properties": {"a": {"$ref": f"#/$defs/d{levels}"}}, "$defs": defs}


def test_a_small_schema_exhausts_the_budget_in_bounded_time_JL_07_P1_14() -> None:
    schema = compile_schema(_fan_out(14, 64))
    assert schema.node_count < 60
    started = time.perf_counter()
    outcome = schema.evaluate(from_python({"a": "no match"}))
    elapsed = time.perf_counter() - started
    assert outcome is Outcome.BUDGET_EXHAUSTED
    assert elapsed < 30  # a sanity bound only: the budget, not the clock, stopped it
    # a matching value can be cheap: the first branch matches at once
    assert schema.evaluate(from_python({"a": [0]})) is Outcome.VALID


def test_budget_at_the_limit_and_one_past_JL_07() -> None:
    schema = compile_schema(
        {
            "type": "object",
            "properties": {"a": {"enum": [[1], [2], [3]]}, "b": {"items": {"type": "string"}}},
            "required": ["a"],
        }
    )
    value = from_python({"a": [3], "b": ["x", "y"]})
    needed = next(
        budget
        for budget in range(1, 200)
        if schema.evaluate(value, max_operations=budget) is Outcome.VALID
    )
    assert schema.evaluate(value, max_operations=needed - 1) is Outcome.BUDGET_EXHAUSTED
    assert schema.evaluate(value, max_operations=needed) is Outcome.VALID


def test_budget_defaults_to_the_limits_JL_07() -> None:
    document = _fan_out(6, 64)  # about 2**6 * 64 * 2 operations
    assert compile_schema(document).evaluate(from_python({"a": "x"})) is Outcome.INVALID
    tight = compile_schema(document, limits=Limits(max_evaluation_operations=1000))
    assert tight.evaluate(from_python({"a": "x"})) is Outcome.BUDGET_EXHAUSTED


def test_equality_checks_and_member_lookups_are_charged_P1_14() -> None:
    big = {f"k{index}": index for index in range(2000)}
    schema = compile_schema(
        {"type": "object", "properties": {"a": {"const": big}}},
        limits=Limits(max_evaluation_operations=3000),
    )
    assert schema.evaluate(from_python({"a": big})) is Outcome.BUDGET_EXHAUSTED
    assert schema.evaluate(from_python({"a": big}), max_operations=10_000) is Outcome.VALID


def test_error_path_names_the_failing_location_P1_15() -> None:
    schema = compile_schema(
        {
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": {"properties": {"n": {"type": "integer"}}}},
                "choice": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            },
        }
    )
    assert schema.error_path(from_python({"items": [{"n": 1}, {"n": "x"}]})) == ("items", 1, "n")
    assert schema.error_path(from_python({"choice": 1})) is None
    assert schema.error_path(from_python({"choice": []})) == ("choice",)
    assert schema.error_path(from_python({})) is None


def test_evaluation_gate_bounds_concurrent_evaluations_JL_08() -> None:
    gate = EvaluationGate(2)
    inside = 0
    most = 0
    lock = threading.Lock()
    release = threading.Event()

    def work() -> None:
        nonlocal inside, most
        with gate:
            with lock:
                inside += 1
                most = max(most, inside)
            release.wait(5)
            with lock:
                inside -= 1

    threads = [threading.Thread(target=work) for _ in range(5)]
    for thread in threads:
        thread.start()
    time.sleep(0.2)
    with lock:
        assert inside == 2
    release.set()
    for thread in threads:
        thread.join(5)
    assert most == 2
    assert gate.limit == 2
