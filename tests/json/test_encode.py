"""The writer: compact output for every accepted type, and every OutputFailure reason.

The writer is the last line before the wire, so it must refuse (never repair) what would make
invalid JSON: non-finite numbers, surrogates, non-str names, unknown types and cycles.
"""

from __future__ import annotations

import enum
import math
import sys
from decimal import Decimal as D

import pytest

from mcpkit.errors import OutputFailure as O
from mcpkit.json import JsonArray, JsonObject

from .helpers import Impl, limits


class _Small(enum.IntEnum):
    THREE = 3


class _LoudInt(int):
    def __repr__(self) -> str:
        return "loud"

    def __str__(self) -> str:
        return "loud"


ENCODED: list[tuple[str, object, bytes]] = [
    ("null", None, b"null"),
    ("true", True, b"true"),
    ("false", False, b"false"),
    ("int", -5, b"-5"),
    ("int-big", 10**100, b"1" + b"0" * 100),
    ("int-enum", _Small.THREE, b"3"),
    ("int-subclass", _LoudInt(7), b"7"),
    ("decimal-scale", D("1.0"), b"1.0"),
    ("decimal-exponent", D("1E+2"), b"1E+2"),
    ("decimal-negative-zero", D("-0"), b"-0"),
    ("decimal-small", D("1E-7"), b"1E-7"),
    ("decimal-huge-exponent", D("1E+999999999"), b"1E+999999999"),
    ("decimal-largest-readable", D("15E+999999998"), b"1.5E+999999999"),
    ("decimal-smallest-readable", D("1E-999999999"), b"1E-999999999"),
    ("float", 1.5, b"1.5"),
    ("float-tenth", 0.1, b"0.1"),
    ("float-integral", 2.0, b"2.0"),
    ("float-exponent", 1e300, b"1e+300"),
    ("string", "a\u00e9", '"a\u00e9"'.encode()),
    ("empty-string", "", b'""'),
    ("list", [1, "a", None], b'[1,"a",null]'),
    ("tuple", (1, (2,)), b"[1,[2]]"),
    ("empty-containers", [[], {}, ()], b"[[],{},[]]"),
    ("dict-order", {"b": 1, "a": [True]}, b'{"b":1,"a":[true]}'),
    ("json-object", JsonObject({"z": JsonArray([D("2.50")])}), b'{"z":[2.50]}'),
    ("nested", {"a": {"b": {"c": [{"d": None}]}}}, b'{"a":{"b":{"c":[{"d":null}]}}}'),
]


@pytest.mark.parametrize(("value", "expected"), [pytest.param(v, e, id=i) for i, v, e in ENCODED])
def test_encode_compact(impl: Impl, value: object, expected: bytes) -> None:
    """Compact UTF-8, members in mapping order, numbers spelled by ``str``/``repr``."""
    assert impl.encode(value) == expected


def _cyclic_list() -> object:
    cycle: list[object] = [1]
    cycle.append(cycle)
    return cycle


def _cyclic_dict() -> object:
    cycle: dict[str, object] = {}
    cycle["self"] = [cycle]
    return cycle


def _nested_lists(depth: int) -> object:
    value: list[object] = []
    for _ in range(depth - 1):
        value = [value]
    return value


FAILURES: list[tuple[str, object, O]] = [
    ("float-nan", math.nan, O.NUMBER),
    ("float-inf", math.inf, O.NUMBER),
    ("float-minus-inf", -math.inf, O.NUMBER),
    ("decimal-nan", D("NaN"), O.NUMBER),
    ("decimal-snan", D("sNaN"), O.NUMBER),
    ("decimal-infinity", D("Infinity"), O.NUMBER),
    ("decimal-minus-infinity", D("-Infinity"), O.NUMBER),
    ("nan-in-object", {"a": [1, math.nan]}, O.NUMBER),
    # the reader refuses a 10-digit exponent, so the writer never writes one
    ("decimal-unreadable-exponent", D("15E+999999999"), O.NUMBER),
    ("decimal-unreadable-negative-exponent", D("1E-1000000000"), O.NUMBER),
    ("int-key", {1: 2}, O.MEMBER_NAME),
    ("none-key", {None: 1}, O.MEMBER_NAME),
    ("bytes-key", {b"a": 1}, O.MEMBER_NAME),
    ("tuple-key", {("a",): 1}, O.MEMBER_NAME),
    ("nested-bad-key", [{"a": {1: 1}}], O.MEMBER_NAME),
    ("set", {1}, O.TYPE),
    ("frozenset", frozenset(), O.TYPE),
    ("object", object(), O.TYPE),
    ("bytes", b"a", O.TYPE),
    ("bytearray", bytearray(b"a"), O.TYPE),
    ("complex", 1j, O.TYPE),
    ("type", int, O.TYPE),
    ("nested-set", {"a": [{1}]}, O.TYPE),
    ("cyclic-list", _cyclic_list(), O.DEPTH),
    ("cyclic-dict", _cyclic_dict(), O.DEPTH),
    ("depth-129", _nested_lists(129), O.DEPTH),
    ("lone-high-surrogate", "\ud800", O.SURROGATE),
    ("lone-low-surrogate", "a\udfffb", O.SURROGATE),
    ("surrogate-code-point-pair", "\ud83d\ude80", O.SURROGATE),
    ("surrogate-in-name", {"\udc00": 1}, O.SURROGATE),
    ("surrogate-nested", [{"a": ["ok", "\ud800"]}], O.SURROGATE),
    ("size", ["x" * 1_048_576] * 4, O.SIZE),
    ("token-units", "\x01" * 174_763, O.TOKEN_UNITS),
    ("string-units-via-tokens", "a" * 1_048_577, O.TOKEN_UNITS),
]


@pytest.mark.parametrize(("value", "reason"), [pytest.param(v, r, id=i) for i, v, r in FAILURES])
def test_encode_failures_JL_21(impl: Impl, value: object, reason: O) -> None:
    """JL-21: every refusal is an OutputError with the contract's reason."""
    assert impl.output_failure(value) is reason


def test_depth_128_written_JL_03(impl: Impl) -> None:
    """JL-03: the writer allows exactly the reader's depth; a configured depth binds too."""
    assert impl.encode(_nested_lists(128)) == b"[" * 128 + b"]" * 128
    assert impl.encode([[]], limits=limits(max_json_depth=2)) == b"[[]]"
    assert impl.output_failure([[[]]], limits(max_json_depth=2)) is O.DEPTH
    assert impl.output_failure({"a": {"b": {}}}, limits(max_json_depth=2)) is O.DEPTH


def test_string_units_isolated_JL_11(impl: Impl) -> None:
    """JL-11: with the token ceiling raised, the decoded-unit ceiling alone binds."""
    roomy = limits(max_token_units=16 * 1_048_576)
    assert impl.output_failure("a" * 1_048_577, roomy) is O.STRING_UNITS
    assert impl.output_failure({"a" * 1_048_577: 0}, roomy) is O.STRING_UNITS
    assert len(impl.encode("a" * 1_048_576)) == 1_048_578


@pytest.mark.skipif(
    not 0 < sys.get_int_max_str_digits() < 5000, reason="int string conversion is unlimited"
)
def test_int_python_refuses_to_spell(impl: Impl) -> None:
    """An int whose decimal spelling Python refuses (over the int-to-str limit) is NUMBER."""
    assert impl.output_failure(10**5000) is O.NUMBER
