"""Property tests: totality, round trips, hash consistency, and C-versus-Python agreement.

The differential tests are the reason the pure-Python reader exists: any input on which the
two implementations disagree (value, types, scale or failure reason) is a bug in one of them.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mcpkit.json
from mcpkit.errors import OutputError, ParseError
from mcpkit.json import JsonArray, JsonObject, from_python, json_equal, json_hash
from mcpkit.json._codec import IMPLEMENTATIONS
from mcpkit.limits import DEFAULT_LIMITS, Limits

from .helpers import Impl, assert_same, decode_outcome

PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DIFFERENTIAL = settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

needs_c = pytest.mark.skipif("c" not in IMPLEMENTATIONS, reason="the C extension is not built")

# --- strategies --------------------------------------------------------------------------------

TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
DECIMALS = st.builds(
    lambda sign, digits, exponent: Decimal((sign, tuple(digits), exponent)),
    st.integers(0, 1),
    st.lists(st.integers(0, 9), min_size=1, max_size=25),
    st.integers(-400, 400),
)
INTS = st.integers(min_value=-(10**700), max_value=10**700) | st.integers(-(2**70), 2**70)
FLOATS = st.floats(allow_nan=False, allow_infinity=False)


def _values(scalars: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        scalars,
        lambda children: (
            st.lists(children, max_size=5) | st.dictionaries(TEXT, children, max_size=5)
        ),
        max_leaves=20,
    )


SCALARS = st.none() | st.booleans() | INTS | TEXT
VALUES = _values(SCALARS | DECIMALS)
JSON_LIKE = _values(SCALARS | DECIMALS | FLOATS)

# Byte soup made of JSON's own building blocks, so mutations reach deep into the grammar.
TOKENS = [
    b"[",
    b"]",
    b"{",
    b"}",
    b",",
    b":",
    b'"',
    b'"a"',
    b"\\",
    b"\\u",
    b"D83D",
    b"DE80",
    b"DC00",
    b"0061",
    b"0",
    b"1",
    b"9",
    b"-",
    b"+",
    b".",
    b"e",
    b"E",
    b"true",
    b"false",
    b"null",
    b" ",
    b"\t",
    b"\n",
    b"\xc3\xa9",
    b"\xff",
    b"\x80",
    b"\xed\xa0\x80",
    b"\xf0\x9f\x9a\x80",
    b"\x01",
    b"\xef\xbb\xbf",
    b"n",
    b"\\n",
    b"\\x",
    b"1e999999999",
    b"1e1000000000",
]
TOKEN_SOUP = st.lists(st.sampled_from(TOKENS), max_size=24).map(b"".join)
DOCUMENTS = st.binary(max_size=64) | TOKEN_SOUP

SMALL_LIMITS = st.builds(
    Limits,
    max_request_bytes=st.integers(1, 128),
    max_json_depth=st.integers(1, 5),
    max_json_nodes=st.integers(1, 16),
    max_string_units=st.integers(1, 10),
    max_token_units=st.integers(1, 14),
)
ANY_LIMITS = st.just(DEFAULT_LIMITS) | SMALL_LIMITS

MUTATIONS = st.lists(
    st.tuples(
        st.sampled_from(["insert", "delete", "replace", "flip"]),
        st.integers(0, 10**6),
        st.integers(0, 255),
    ),
    min_size=1,
    max_size=4,
)


def _mutate(document: bytes, mutations: list[tuple[str, int, int]]) -> bytes:
    data = bytearray(document)
    for op, where, byte in mutations:
        if op == "insert":
            data.insert(where % (len(data) + 1), byte)
        elif data:
            index = where % len(data)
            if op == "delete":
                del data[index]
            elif op == "replace":
                data[index] = byte
            else:
                data[index] ^= 1 << (byte % 8)
    return bytes(data)


def _respell(value: Any) -> Any:
    """A numerically equal value with different scales and reversed member order."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        value = Decimal(value)
    if isinstance(value, Decimal):
        sign, digits, exponent = value.as_tuple()
        assert isinstance(exponent, int)
        return Decimal((sign, (*digits, 0, 0), exponent - 2))
    if isinstance(value, dict):
        return {name: _respell(member) for name, member in reversed(value.items())}
    return [_respell(item) for item in value]


# --- single implementation -------------------------------------------------------------------


@PROPERTY
@given(document=DOCUMENTS, configured=ANY_LIMITS)
def test_decode_is_total(impl: Impl, document: bytes, configured: Limits) -> None:
    """Any bytes either decode or raise ParseError; never another exception or a crash."""
    decode_outcome(impl.decode, document, configured)


@PROPERTY
@given(value=VALUES)
def test_encode_decode_encode_is_stable(impl: Impl, value: Any) -> None:
    """After the first encode, decode and encode reproduce the same bytes."""
    first = impl.encode(value)
    decoded = impl.decode(first)
    assert impl.encode(decoded) == first
    assert json_equal(decoded, from_python(value))


@PROPERTY
@given(value=JSON_LIKE)
def test_round_trip_equals_from_python(impl: Impl, value: Any) -> None:
    """``decode(encode(v))`` is JSON-equal to ``from_python(v)``, floats and all."""
    assert json_equal(impl.decode(impl.encode(value)), from_python(value))


@PROPERTY
@given(value=VALUES)
def test_equal_values_hash_equal_JV_05(impl: Impl, value: Any) -> None:
    """JV-05: values equal up to scale and member order have equal hashes."""
    original, respelled = from_python(value), from_python(_respell(value))
    assert json_equal(original, respelled)
    assert json_hash(original) == json_hash(respelled)
    decoded = impl.decode(impl.encode(_respell(value)))
    assert json_hash(decoded) == json_hash(original)
    if isinstance(original, (JsonObject, JsonArray)):
        assert original == respelled == decoded
        assert hash(original) == hash(respelled) == hash(decoded)


# --- C versus Python -------------------------------------------------------------------------


def _assert_same_outcome(document: bytes, configured: Limits) -> None:
    c_decode, py_decode = IMPLEMENTATIONS["c"][0], IMPLEMENTATIONS["python"][0]
    c_outcome = decode_outcome(c_decode, document, configured)
    py_outcome = decode_outcome(py_decode, document, configured)
    assert c_outcome[0] == py_outcome[0], (c_outcome, py_outcome)
    if c_outcome[0] == "ok":
        assert_same(c_outcome[1], py_outcome[1])
    else:
        assert c_outcome[1] is py_outcome[1]


@needs_c
@DIFFERENTIAL
@given(document=DOCUMENTS, configured=ANY_LIMITS)
def test_differential_bytes(document: bytes, configured: Limits) -> None:
    """C and Python agree on arbitrary bytes and JSON-token soup, under small limits too."""
    _assert_same_outcome(document, configured)


@needs_c
@DIFFERENTIAL
@given(value=JSON_LIKE, mutations=MUTATIONS, configured=ANY_LIMITS)
def test_differential_mutated_documents(
    value: Any, mutations: list[tuple[str, int, int]], configured: Limits
) -> None:
    """C and Python agree on valid documents with bytes inserted, deleted or flipped."""
    document = IMPLEMENTATIONS["python"][1](value)
    _assert_same_outcome(document, configured)
    _assert_same_outcome(_mutate(document, mutations), configured)


BAD_LEAVES = st.sampled_from(
    [float("nan"), Decimal("Infinity"), {1: 2}, {3}, object(), "\ud800", {"\udc00": 0}]
)


@needs_c
@DIFFERENTIAL
@given(value=_values(SCALARS | DECIMALS | FLOATS), bad=st.none() | BAD_LEAVES)
def test_differential_encode(value: Any, bad: object) -> None:
    """C and Python write the same bytes, or refuse a value with one bad leaf for one reason."""
    if bad is not None:
        value = [value, bad] if not isinstance(value, dict) else {**value, "\x00bad": bad}
    outcomes: list[tuple[str, object]] = []
    for name in ("c", "python"):
        try:
            outcomes.append(("ok", IMPLEMENTATIONS[name][1](value)))
        except OutputError as error:
            outcomes.append(("error", error.reason))
    assert outcomes[0] == outcomes[1]


@needs_c
@PROPERTY
@given(document=DOCUMENTS)
def test_public_decode_matches_selected(document: bytes) -> None:
    """The public ``decode`` agrees with both implementations (it only adds the size check)."""
    try:
        public: tuple[str, object] = ("ok", mcpkit.json.decode(document))
    except ParseError as error:
        public = ("error", error.reason)
    for decode, _ in IMPLEMENTATIONS.values():
        other = decode_outcome(decode, document)
        assert public[0] == other[0]
        if public[0] == "ok":
            assert_same(other[1], public[1])
        else:
            assert public[1] is other[1]
