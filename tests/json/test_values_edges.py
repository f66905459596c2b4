"""Edges of the value model that the main value tests do not reach: factories given Python
subclasses, comparisons with foreign types, and the guards of from_python/json_hash."""

from __future__ import annotations

import enum
import math
from decimal import Decimal as D

import pytest

from mcpkit.errors import InvalidValueError, ParseError, ParseFailure
from mcpkit.json import JsonArray, JsonObject, _pyreader, from_python, json_equal, json_hash, string
from mcpkit.limits import Limits

from .helpers import Impl


class _Colour(enum.StrEnum):
    RED = "red"


class _Size(enum.IntEnum):
    BIG = 3


def test_string_factory_returns_a_plain_str_for_a_subclass_CB_16() -> None:
    value = string(_Colour.RED)
    assert value == "red"
    assert type(value) is str


def test_string_factory_refuses_a_non_str() -> None:
    with pytest.raises(InvalidValueError):
        string(5)  # type: ignore[arg-type]


def test_from_python_normalises_subclasses_JV_01() -> None:
    value = from_python({"colour": _Colour.RED, "size": _Size.BIG})
    assert type(value) is JsonObject
    assert type(value["colour"]) is str
    assert type(value["size"]) is int
    assert value == {"colour": "red", "size": 3}


def test_from_python_refuses_nesting_beyond_the_hard_depth_ceiling() -> None:
    deep: list[object] = []
    for _ in range(600):
        deep = [deep]
    with pytest.raises(InvalidValueError):
        from_python(deep)


def test_from_python_refuses_a_cycle() -> None:
    cycle: list[object] = []
    cycle.append(cycle)
    with pytest.raises(InvalidValueError):
        from_python(cycle)


def test_containers_are_unequal_to_foreign_types() -> None:
    assert JsonObject({"a": 1}) != 5
    assert not JsonObject({"a": 1}) == "a"
    assert JsonArray([1]) != 5
    assert not JsonArray([1]) == "1"


def test_copy_of_an_immutable_object_is_itself() -> None:
    value = JsonObject({"a": [1]})
    assert value.copy() is value


def test_from_python_accepts_the_deepest_allowed_nesting() -> None:
    deep: list[object] = []
    for _ in range(511):
        deep = [deep]
    converted = from_python(deep)
    for _ in range(511):
        assert type(converted) is JsonArray
        converted = converted[0]
    assert converted == []


def test_container_reprs_name_their_type() -> None:
    assert repr(JsonArray([1, "a"])) == "JsonArray([1, 'a'])"
    assert repr(JsonObject({"a": None})) == "JsonObject({'a': None})"


def test_json_equal_on_floats_uses_their_shortest_spelling_JV_04() -> None:
    assert json_equal(0.1, D("0.1"))
    assert json_equal(1.0, 1)
    assert not json_equal(math.nan, math.nan)
    assert not json_equal(1.5, math.inf)


def test_json_equal_and_hash_reject_unknown_types() -> None:
    assert not json_equal(object(), object())
    with pytest.raises(InvalidValueError):
        json_hash(object())


def test_str_subclasses_are_written_as_plain_strings(impl: Impl) -> None:
    assert impl.encode({_Colour.RED: _Colour.RED}) == b'{"red":"red"}'


def test_python_reader_checks_the_body_limit_before_copying_JL_01() -> None:
    strided = memoryview(b"[1,2]" * 4)[::2]
    with pytest.raises(ParseError) as caught:
        _pyreader.decode(strided, Limits(max_request_bytes=strided.nbytes - 1))
    assert caught.value.reason is ParseFailure.BODY_SIZE
    assert _pyreader.decode(bytearray(b"[1]"), Limits()) == [1]
