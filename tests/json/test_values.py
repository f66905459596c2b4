"""The immutable value tree and its factories (JV-01, JV-02; seed "Content and JSON values").

Values cross layers (arguments, structured content, metadata), so a handler must not be able
to mutate what another layer already validated, and factories must refuse what the writer
could never emit.
"""

from __future__ import annotations

import copy
import math
import pickle
from collections.abc import Callable
from decimal import Decimal as D

import pytest

from mcpkit.errors import InvalidValueError, OutputFailure
from mcpkit.json import JsonArray, JsonObject, JsonValue, from_python, json_equal, string

from .helpers import Impl, assert_same


def _ior(o: JsonObject) -> None:
    o |= {"x": 1}


OBJECT_MUTATORS: list[tuple[str, Callable[[JsonObject], object]]] = [
    ("__setitem__", lambda o: o.__setitem__("x", 1)),
    ("__setitem__-existing", lambda o: o.__setitem__("a", 2)),
    ("__delitem__", lambda o: o.__delitem__("a")),
    ("clear", lambda o: o.clear()),
    ("pop", lambda o: o.pop("a")),
    ("pop-default", lambda o: o.pop("missing", None)),
    ("popitem", lambda o: o.popitem()),
    ("setdefault", lambda o: o.setdefault("x", 1)),
    ("setdefault-existing", lambda o: o.setdefault("a", 1)),
    ("update", lambda o: o.update({"x": 1})),
    ("update-empty", lambda o: o.update()),
    ("__ior__", lambda o: o.__ior__({"x": 1})),
    ("__init__-again", lambda o: o.__init__({"x": 1})),  # type: ignore[misc]
    ("|=", _ior),
]


@pytest.mark.parametrize("mutate", [pytest.param(m, id=n) for n, m in OBJECT_MUTATORS])
def test_object_is_immutable_JV_01(mutate: Callable[[JsonObject], object]) -> None:
    """JV-01: every mutator of a JsonObject raises TypeError and leaves it unchanged."""
    obj = JsonObject({"a": 1, "b": JsonArray([2])})
    with pytest.raises(TypeError):
        mutate(obj)
    assert dict(obj) == {"a": 1, "b": JsonArray([2])} and list(obj) == ["a", "b"]


def test_decoded_object_is_immutable_JV_01(impl: Impl) -> None:
    """JV-01: objects built by either decoder are the same immutable type."""
    obj = impl.decode(b'{"a":[1]}')
    assert type(obj) is JsonObject
    with pytest.raises(TypeError):
        obj["b"] = 2
    assert type(obj["a"]) is JsonArray


def test_array_is_a_tuple_JV_01() -> None:
    """JV-01: JsonArray is a tuple subclass, so it has no mutators at all."""
    array = JsonArray([1, "a", None])
    assert isinstance(array, tuple)
    with pytest.raises(TypeError):
        array[0] = 2  # type: ignore[index]
    assert not hasattr(array, "append")


def test_builders_keep_insertion_order_JV_02() -> None:
    """JV-02: object members and array items keep the order they were given in."""
    names = ["z", "a", "m", "\u00e9", ""]
    assert list(JsonObject({n: i for i, n in enumerate(names)})) == names
    assert list(JsonObject([(n, i) for i, n in enumerate(names)])) == names
    assert list(JsonArray(names)) == names


def test_from_python_converts_nested_data() -> None:
    """``from_python`` makes the JSON types all the way down; floats become exact Decimals."""
    value = from_python({"a": [1, 2.5, {"b": (True, None)}], "c": "x", "d": D("1.50"), "e": 0.1})
    assert_same(
        value,
        {"a": [1, D("2.5"), {"b": [True, None]}], "c": "x", "d": D("1.50"), "e": D("0.1")},
    )
    assert_same(from_python(1e300), D("1e+300"))
    assert from_python(value) == value
    assert_same(JsonArray([[1.5], {"k": [2]}]), [[D("1.5")], {"k": [2]}])


REJECTED_BY_FROM_PYTHON: list[tuple[str, object]] = [
    ("float-nan", math.nan),
    ("float-inf", math.inf),
    ("float-minus-inf", -math.inf),
    ("decimal-nan", D("NaN")),
    ("decimal-snan", D("sNaN")),
    ("decimal-infinity", D("Infinity")),
    ("nested-nan", {"a": [1, math.nan]}),
    ("int-key", {1: "a"}),
    ("none-key", {None: "a"}),
    ("bytes-key", {b"a": 1}),
    ("set", {1, 2}),
    ("frozenset", frozenset()),
    ("object", object()),
    ("bytes", b"abc"),
    ("complex", 1j),
    ("nested-set", [[{1}]]),
]


@pytest.mark.parametrize("value", [pytest.param(v, id=i) for i, v in REJECTED_BY_FROM_PYTHON])
def test_from_python_rejects(value: object) -> None:
    """Non-finite numbers, non-str names and non-JSON types are refused at the factory."""
    with pytest.raises(InvalidValueError):
        from_python(value)


SURROGATE_TEXTS = ["\ud800", "\udfff", "a\udc00b", "\udc00\ud800", "\U0001f680\ud83d"]


@pytest.mark.parametrize("text", SURROGATE_TEXTS, ids=ascii)
@pytest.mark.parametrize(
    "factory",
    [
        string,
        from_python,
        lambda t: from_python({t: 1}),
        lambda t: from_python([{"a": [t]}]),
        lambda t: JsonArray([t]),
        lambda t: JsonObject({t: 1}),
        lambda t: JsonObject({"a": t}),
    ],
    ids=["string", "from_python", "name", "nested", "JsonArray", "JsonObject-name", "JsonObject"],
)
def test_unpaired_surrogates_rejected(factory: Callable[[str], object], text: str) -> None:
    """Seed "Content and JSON values": strings and member names refuse unpaired surrogates."""
    with pytest.raises(InvalidValueError) as info:
        factory(text)
    assert isinstance(info.value, ValueError)
    assert text not in str(info.value)


WELL_FORMED_TEXTS = [
    "",
    "\x00\x01\x1f\x7f",
    "\n\t\r",
    "\U0001f680\U0001f469\u200d\U0001f4bb",
    "e\u0301",
    "\u00e9",
    "\ufeff\ufffe\uffff",
    "\U0010ffff",
    "plain ascii",
]


@pytest.mark.parametrize("text", WELL_FORMED_TEXTS, ids=ascii)
def test_string_keeps_well_formed_text_exact(text: str) -> None:
    """Well-formed text stays exact: no normalisation, no control stripping, no trimming."""
    assert string(text) == text and type(string(text)) is str
    assert from_python(text) == text
    assert list(JsonObject({text: text}).items()) == [(text, text)]


def test_normalisation_forms_stay_distinct(impl: Impl) -> None:
    """NFC and NFD "é" are different strings and different member names."""
    nfc, nfd = "\u00e9", "e\u0301"
    assert string(nfc) != string(nfd)
    obj = JsonObject({nfc: 1, nfd: 2})
    assert len(obj) == 2
    assert impl.decode(impl.encode(obj)) == obj


def test_construction_does_not_prevalidate_output_JL_19(impl: Impl) -> None:
    """JL-19: factories check well-formedness only; size limits apply when the value is written."""
    text = "x" * (2 * 1_048_576)
    assert string(text) is text or string(text) == text
    value = JsonObject({"k": JsonArray([text])})
    assert impl.output_failure(value) is OutputFailure.TOKEN_UNITS


def test_duplicate_names_in_pairs_rejected() -> None:
    """A JsonObject built from pairs refuses a repeated name, as the decoder does."""
    with pytest.raises(InvalidValueError):
        JsonObject([("a", 1), ("a", 2)])


SAMPLE: JsonValue = JsonObject(
    {"a": JsonArray([1, D("1.50"), "\U0001f680", None, True]), "b": JsonObject({"c": "d"})}
)


@pytest.mark.parametrize(
    "clone",
    [
        copy.copy,
        copy.deepcopy,
        lambda v: pickle.loads(pickle.dumps(v, protocol=pickle.HIGHEST_PROTOCOL)),
    ],
    ids=["copy", "deepcopy", "pickle"],
)
def test_copy_and_pickle_round_trip(clone: Callable[[JsonValue], JsonValue]) -> None:
    """Copies and pickles keep the exact types, order and scale."""
    copied = clone(SAMPLE)
    assert_same(copied, SAMPLE)
    assert json_equal(copied, SAMPLE) and hash(copied) == hash(SAMPLE)
