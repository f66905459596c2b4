"""Numbers: exact decoding with scale, JSON equality and hashing (JV-04..JV-07).

Python's own ``==`` says ``True == 1`` and ``hash(True) == hash(1)``; JSON equality must not,
while still treating ``1``, ``1.0`` and ``1E+0`` as one number.
"""

from __future__ import annotations

from decimal import Decimal as D

import pytest

from mcpkit.json import JsonArray, JsonObject, JsonValue, json_equal, json_hash

from .helpers import Impl

# Groups of numerically equal spellings (JV-04).
EQUAL_NUMBERS: list[list[JsonValue]] = [
    [1, D("1"), D("1.0"), D("1E+0"), D("1.000"), D("0.1E+1"), D("10E-1")],
    [0, D("0"), D("-0"), D("0.0"), D("-0.0"), D("0E+5"), D("0E-5")],
    [100, D("1E+2"), D("100.00"), D("0.001E+5")],
    [-5, D("-5.0"), D("-0.5E+1")],
    [10**700, D("1E+700"), D("10E+699")],
    [D("1E+999999"), D("1.0E+999999"), D("10E+999998")],
    [D("1E+999999999"), D("1.00E+999999999")],
]


@pytest.mark.parametrize("group", EQUAL_NUMBERS, ids=lambda g: str(g[0])[:12])
def test_numbers_equal_ignoring_scale_JV_04_JV_05(group: list[JsonValue]) -> None:
    """JV-04/JV-05: equal numbers are json_equal and json_hash equal, whatever their scale."""
    for a in group:
        for b in group:
            assert json_equal(a, b), (a, b)
        assert json_hash(a) == json_hash(group[0]), a


@pytest.mark.parametrize("group", EQUAL_NUMBERS, ids=lambda g: str(g[0])[:12])
def test_containers_compare_numbers_by_value_JV_04_JV_05(group: list[JsonValue]) -> None:
    """JV-04/JV-05: the same holds for ``==`` and ``hash`` of arrays and objects."""
    first = group[0]
    for other in group[1:]:
        assert JsonArray([first]) == JsonArray([other])
        assert hash(JsonArray([first])) == hash(JsonArray([other]))
        assert JsonObject({"n": first}) == JsonObject({"n": other})
        assert hash(JsonObject({"n": first})) == hash(JsonObject({"n": other}))
        nested_a = JsonArray([JsonObject({"n": JsonArray([first])})])
        nested_b = JsonArray([JsonObject({"n": JsonArray([other])})])
        assert nested_a == nested_b and hash(nested_a) == hash(nested_b)
        assert not (nested_a != nested_b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (1, 2),
        (1, D("1.1")),
        (D("1E+2"), D("1E+3")),
        (True, 1),
        (False, 0),
        (True, D("1")),
        (False, D("0.0")),
        (None, 0),
        (None, False),
        ("1", 1),
        ("", None),
        (True, False),
        ("\u00e9", "e\u0301"),
    ],
)
def test_unequal_values_JV_04(a: JsonValue, b: JsonValue) -> None:
    """JV-04: booleans are never numbers, strings never numbers, and NFC is not NFD."""
    assert not json_equal(a, b)
    assert not json_equal(b, a)
    assert JsonArray([a]) != JsonArray([b])
    assert not (JsonArray([a]) == JsonArray([b]))
    assert JsonObject({"k": a}) != JsonObject({"k": b})


def test_booleans_hash_apart_from_numbers_JV_05() -> None:
    """JV-05: a set of arrays keeps ``[true]`` and ``[1]`` apart (equal hash alone is allowed)."""
    assert len({JsonArray([True]), JsonArray([1]), JsonArray([D("1.0")])}) == 2
    assert len({JsonArray([False]), JsonArray([0]), JsonArray([None])}) == 3


def test_object_equality_ignores_member_order() -> None:
    """Objects compare as unordered members; iteration still keeps insertion order (JV-02)."""
    a = JsonObject({"a": 1, "b": JsonArray([1, 2])})
    b = JsonObject({"b": JsonArray([D("1.0"), 2]), "a": D("1E+0")})
    assert a == b and json_equal(a, b)
    assert hash(a) == hash(b) == json_hash(b)
    assert list(a) == ["a", "b"] and list(b) == ["b", "a"]
    assert a != JsonObject({"a": 1}) and a != JsonObject({"a": 1, "b": JsonArray([1, 2]), "c": 3})


def test_array_equality_is_ordered() -> None:
    """Arrays are sequences: order and length matter."""
    assert JsonArray([1, 2]) != JsonArray([2, 1])
    assert not json_equal(JsonArray([1, 2]), JsonArray([2, 1]))
    assert JsonArray([1, 2]) != JsonArray([1, 2, 3])
    assert JsonArray([]) != JsonObject({})
    assert not json_equal(JsonArray([]), JsonObject({}))


@pytest.mark.parametrize(
    ("document", "digits", "exponent"),
    [
        (b"1.0", (1, 0), -1),
        (b"1.00", (1, 0, 0), -2),
        (b"1E+2", (1,), 2),
        (b"100e-2", (1, 0, 0), -2),
        (b"0.10", (1, 0), -2),
        (b"1E+0", (1,), 0),
    ],
)
def test_decoded_scale_kept_JV_06(
    impl: Impl, document: bytes, digits: tuple[int, ...], exponent: int
) -> None:
    """JV-06: a decoded Decimal keeps the client's scale (``1.0`` has exponent -1)."""
    value = impl.decode(document)
    assert type(value) is D
    assert value.as_tuple().digits == digits
    assert value.as_tuple().exponent == exponent
    assert impl.encode(value) == str(value).encode()


def test_constructed_scale_kept_JV_06() -> None:
    """JV-06: the containers keep a supplied Decimal (and its scale) unchanged."""
    value = D("2.500")
    assert str(JsonObject({"a": value})["a"]) == "2.500"
    assert str(JsonArray([value])[0]) == "2.500"


@pytest.mark.parametrize(
    "number", [D("1E+999999"), D("1E+999999999"), D("-7.25E-999999999"), D("9" * 5000 + "E+999")]
)
def test_hash_never_expands_exponent_JV_07(number: D) -> None:
    """JV-07: hashing a huge-exponent number completes (no expansion to 10**999999999)."""
    assert json_hash(number) == json_hash(JsonArray([number])[0])
    assert hash(JsonArray([number])) == hash(JsonArray([number]))
    assert json_equal(number, D(str(number)))
    assert isinstance(json_hash(JsonObject({"n": number})), int)


def test_decoded_huge_exponent_hashes_JV_07(impl: Impl) -> None:
    """JV-07: the same for decoded values, compared with an equal differently-scaled one."""
    a = impl.decode(b"[1e999999,1E+999999999]")
    b = impl.decode(b"[10e999998,1.0e999999999]")
    assert a == b and hash(a) == hash(b)
