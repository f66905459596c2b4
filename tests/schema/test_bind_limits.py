"""Binding limits: integer spelling per value and per binding, fixed widths, nodes and depth
(TD-02..05, TD-12, JL-03/04).  Each limit is tested at the limit and one past it."""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import time
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.errors import ArgumentsFailure as F
from mcpkit.errors import ArgumentsInvalid
from mcpkit.json import JsonArray, JsonObject, decode
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.schema._analyze import analyze_type
from mcpkit.schema._bind import bind
from mcpkit.schema._bind_leaves import integer_chars
from mcpkit.schema._typed import Int8, Int16, Int32, Int64, derive_input
from mcpkit.schema._typeinfo import TypeModel


@dataclasses.dataclass(frozen=True)
class One:
    value: int


@dataclasses.dataclass(frozen=True)
class Many:
    values: list[int]


ONE = derive_input(One)
MANY = derive_input(Many)


def one(spelling: bytes) -> object:
    value = ONE.bind(decode(b'{"value":' + spelling + b"}"))  # type: ignore[arg-type]
    assert isinstance(value, One)
    return value.value


def reason(call: Any, *args: Any) -> F:
    with pytest.raises(ArgumentsInvalid) as caught:
        call(*args)
    assert str(caught.value) == "Arguments do not match the tool's inputSchema."
    return caught.value.reason


@contextlib.contextmanager
def shallow_stack(headroom: int = 60) -> Iterator[None]:
    """Allow only ``headroom`` more Python frames: proof that the code under test iterates."""
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back  # type: ignore[assignment]
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + headroom)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


# --- TD-02: 1,024 characters per integer, minus sign included -----------------------------------


@pytest.mark.parametrize("sign", [b"", b"-"])
def test_integer_spelling_at_the_limit_and_one_past_TD_02(sign: bytes) -> None:
    digits = 1024 - len(sign)
    at_limit = sign + b"9" * digits
    assert one(at_limit) == int(at_limit)
    assert reason(one, at_limit + b"9") is F.INTEGER_CHARS
    # The same values as Python ints (the decoder makes Decimals of spellings over 640 digits).
    assert ONE.bind(JsonObject({"value": int(at_limit)})) == One(int(at_limit))
    assert reason(ONE.bind, JsonObject({"value": int(at_limit + b"9")})) is F.INTEGER_CHARS


def test_compact_spellings_are_measured_expanded_TD_05() -> None:
    assert one(b"1e1023") == 10**1023  # "1" and 1,023 zeros: 1,024 characters
    assert reason(one, b"1e1024") is F.INTEGER_CHARS
    assert one(b"-1e1022") == -(10**1022)  # the minus sign makes 1,024
    assert reason(one, b"-1e1023") is F.INTEGER_CHARS
    assert one(b"1.5e1023") == 15 * 10**1022
    assert one(b"100000e-5") == 1


def test_huge_exponents_are_refused_without_expansion_TD_05() -> None:
    for spelling in (b"1e9999", b"-1e9999", b"1e999999999", b"9.99e999999998"):
        started = time.perf_counter()
        assert reason(one, spelling) is F.INTEGER_CHARS
        assert time.perf_counter() - started < 0.05
    assert reason(one, b"1.5") is F.INVALID  # the schema refuses first ...
    model = analyze_type(int, limits=DEFAULT_LIMITS)
    assert reason(bind, model, Decimal("1.5"), DEFAULT_LIMITS) is F.NOT_INTEGER  # ... and so
    assert reason(bind, model, Decimal("1E-999999999"), DEFAULT_LIMITS) is F.NOT_INTEGER


def test_zero_in_any_spelling_is_one_character() -> None:
    for spelling in (b"0", b"-0", b"0e999999999", b"0.000", b"-0.0e-5"):
        assert one(spelling) == 0


# --- TD-03/04: 4,194,304 characters per binding, repeated values counted each time -----------


def test_binding_total_at_the_limit_and_one_past_TD_03() -> None:
    value = b"9" * 1024
    at_limit = b'{"values":[' + b",".join([value] * 4096) + b"]}"
    bound = MANY.bind(decode(at_limit))  # type: ignore[arg-type]
    assert isinstance(bound, Many) and len(bound.values) == 4096
    past = b'{"values":[' + b",".join([value] * 4096) + b",1]}"
    assert reason(MANY.bind, decode(past)) is F.BINDING_INTEGER_CHARS


def test_repeated_values_count_every_time_TD_04() -> None:
    same = 10**1023  # one object, 1,024 characters
    assert len(MANY.bind_validated(JsonObject({"values": JsonArray([same] * 4096)})).values) == (  # type: ignore[attr-defined]
        4096
    )
    arguments = JsonObject({"values": JsonArray([same] * 4097)})
    assert reason(MANY.bind_validated, arguments) is F.BINDING_INTEGER_CHARS


def test_the_total_spans_the_whole_binding_TD_03() -> None:
    @dataclasses.dataclass(frozen=True)
    class Spread:
        a: dict[str, int]
        b: list[list[int]]

    limits = Limits(max_integer_chars=10, max_binding_integer_chars=20)
    model = derive_input(Spread, limits=limits)
    over = JsonObject({"a": {"x": 10**9, "y": -1}, "b": [[10**9 - 1]]})  # 10 + 2 + 9 = 21
    assert reason(model.bind, over) is F.BINDING_INTEGER_CHARS
    fits = JsonObject({"a": {"x": 10**9, "y": 1}, "b": [[10**8]]})  # 10 + 1 + 9 = 20
    assert model.bind(fits) == Spread({"x": 10**9, "y": 1}, [[10**8]])


# --- TD-05: fixed-width ranges, checked before the integer exists -------------------------------


@pytest.mark.parametrize(("tp", "bits"), [(Int8, 8), (Int16, 16), (Int32, 32), (Int64, 64)])
def test_fixed_widths_at_and_past_their_bounds_TD_05(tp: Any, bits: int) -> None:
    model = analyze_type(tp, limits=DEFAULT_LIMITS)
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    for value in (low, high, Decimal(high), Decimal(low) * Decimal("1.000")):
        assert bind(model, value, DEFAULT_LIMITS) == int(value)
    for value in (low - 1, high + 1, Decimal(high + 1), Decimal("1E+19"), Decimal("-1E+19")):
        assert reason(bind, model, value, DEFAULT_LIMITS) is F.INTEGER_WIDTH
    assert reason(bind, model, Decimal("1E+9999"), DEFAULT_LIMITS) is F.INTEGER_CHARS


def test_fixed_widths_through_the_schema() -> None:
    @dataclasses.dataclass(frozen=True)
    class Widths:
        a: Int8
        b: Int64

    model = derive_input(Widths)
    assert model.bind(decode(b'{"a":-128,"b":9223372036854775807}')) == Widths(  # type: ignore[arg-type]
        -128, 2**63 - 1
    )
    assert reason(model.bind, decode(b'{"a":128,"b":0}')) is F.INVALID
    assert reason(model.bind_validated, decode(b'{"a":1.28e2,"b":0}')) is F.INTEGER_WIDTH


def test_integer_chars_matches_str_for_huge_values() -> None:
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        for value in (10**5000, 10**5000 - 1, -(10**5000), 2**30000, -(2**30000) + 1, 7 * 10**9999):
            assert integer_chars(value) == len(str(value))
    finally:
        sys.set_int_max_str_digits(old)


@settings(max_examples=200, deadline=None)
@given(st.integers(-(10**700), 10**700) | st.integers(-(2**40000), 2**40000))
def test_integer_chars_property(value: int) -> None:
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        assert integer_chars(value) == len(str(value))
    finally:
        sys.set_int_max_str_digits(old)


# --- TD-12: 100,000 binding nodes; depth without recursion ---------------------------------------


def test_binding_nodes_at_the_limit_and_one_past_TD_12() -> None:
    # the root object and the array are 2 nodes; each item is one more
    assert len(MANY.bind_validated(JsonObject({"values": [0] * 99_998})).values) == 99_998  # type: ignore[attr-defined]
    arguments = JsonObject({"values": [0] * 99_999})
    assert reason(MANY.bind_validated, arguments) is F.NODES
    small = Limits(max_json_nodes=4)
    model = analyze_type(list[int], limits=small)
    assert bind(model, [1, 2, 3], small) == [1, 2, 3]
    assert reason(bind, model, [1, 2, 3, 4], small) is F.NODES


def _nested_list_model(levels: int) -> TypeModel:
    tp: Any = int
    for _ in range(levels):
        tp = list[tp]
    return analyze_type(tp, limits=Limits(max_schema_depth=256))


def _nested_value(levels: int) -> object:
    value: object = 7
    for _ in range(levels):
        value = JsonArray([value])
    return value


def test_a_128_deep_list_type_binds_without_recursion_JL_03() -> None:
    model = _nested_list_model(128)
    value = _nested_value(128)
    with shallow_stack():
        bound = bind(model, value, DEFAULT_LIMITS)
    for _ in range(128):
        assert isinstance(bound, list) and len(bound) == 1
        bound = bound[0]
    assert bound == 7


def test_binding_deeper_than_the_json_depth_is_refused_JL_03() -> None:
    model = _nested_list_model(129)
    assert reason(bind, model, _nested_value(129), DEFAULT_LIMITS) is F.DEPTH


@dataclasses.dataclass(frozen=True)
class Link:
    nxt: Link | None = None


def test_deep_recursive_types_bind_without_recursion() -> None:
    model = derive_input(Link)
    value: JsonObject = JsonObject({})
    for _ in range(127):
        value = JsonObject({"nxt": value})
    with shallow_stack():
        bound = model.bind(value)
    depth = 0
    while bound is not None:
        bound, depth = bound.nxt, depth + 1  # type: ignore[attr-defined]
    assert depth == 128
    assert reason(model.bind_validated, JsonObject({"nxt": value})) is F.DEPTH
