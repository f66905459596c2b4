"""The public typed entry points, and properties of the whole pipeline: typed value -> JSON ->
bytes -> JSON -> typed value round-trips, and binding any JSON value only ever raises
``ArgumentsInvalid`` (IV-02..04, TD-06, TD-11)."""

from __future__ import annotations

import dataclasses
import enum
from decimal import Decimal
from typing import Any, Literal, NotRequired, TypedDict, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mcpkit.schema._typed as typed
from mcpkit.errors import ArgumentsFailure as F
from mcpkit.errors import ArgumentsInvalid
from mcpkit.json import JsonObject, JsonValue, decode, encode, from_python
from mcpkit.limits import Limits
from mcpkit.schema import ToolSchema
from mcpkit.schema._typed import InputModel, Int32, OutputModel, derive_input, derive_output

PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass(frozen=True)
class Record:
    sku: str
    qty: Int32
    price: Decimal
    ratio: float
    tags: tuple[str, ...]
    color: Color
    level: Level
    mode: Literal["a", "b", 0, False]
    flags: dict[str, bool]
    note: str | None = None
    maybe: list[int | None] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class Tree:
    name: str
    children: list[Tree]
    weight: float | None = None


class Movie(TypedDict):
    title: str
    year: NotRequired[int]
    rating: Decimal | None


# --- the public API -----------------------------------------------------------------------------


def test_exports() -> None:
    assert set(typed.__all__) == {
        "Arg", "InputModel", "Int8", "Int16", "Int32", "Int64", "OutputModel", "Width",
        "derive_input", "derive_output",
    }  # fmt: skip


def test_models_are_compiled_and_immutable() -> None:
    model = derive_input(Record)
    assert isinstance(model, InputModel)
    assert isinstance(model.schema, ToolSchema)
    assert model.document is model.schema.document
    assert model.document["type"] == "object"
    assert model.source is Record
    assert repr(model) == "<InputModel of Record>"
    with pytest.raises(AttributeError, match="immutable"):
        model.schema = model.schema

    def handler(self: object, query: str) -> None:
        raise NotImplementedError

    assert repr(derive_input(handler)).startswith("<InputModel of parameters of ")
    output = derive_output(list[Tree])
    assert isinstance(output, OutputModel)
    assert output.document["type"] == "array"
    assert repr(output) == "<OutputModel of list[tests.schema.test_typed.Tree]>"


def test_bind_validates_before_binding_IV_01() -> None:
    model = derive_input(Movie)
    with pytest.raises(ArgumentsInvalid) as caught:
        model.bind(JsonObject({"title": 1}))
    assert caught.value.reason is F.INVALID
    assert model.bind(JsonObject({"title": "x", "rating": 1})) == {"title": "x", "rating": 1}


def test_an_exhausted_budget_is_arguments_invalid_IV_13() -> None:
    model = derive_input(Tree, limits=Limits(max_evaluation_operations=20))
    tree = JsonObject(
        {"name": "r", "children": [{"name": str(i), "children": []} for i in range(9)]}
    )
    with pytest.raises(ArgumentsInvalid) as caught:
        model.bind(tree)
    assert caught.value.reason is F.BUDGET_EXHAUSTED
    assert model.bind_validated(tree) == Tree("r", [Tree(str(i), []) for i in range(9)])


# --- round trips --------------------------------------------------------------------------------

TEXT = st.text(max_size=8)
FLOATS = st.floats(allow_nan=False, allow_infinity=False)
DECIMALS = st.decimals(allow_nan=False, allow_infinity=False, places=None).filter(
    lambda d: abs(d.adjusted()) < 10_000
)
RECORDS = st.builds(
    Record,
    sku=TEXT,
    qty=st.integers(-(2**31), 2**31 - 1),
    price=DECIMALS,
    ratio=FLOATS,
    tags=st.lists(TEXT, max_size=3).map(tuple),
    color=st.sampled_from(Color),
    level=st.sampled_from(Level),
    mode=st.sampled_from(["a", "b", 0, False]),
    flags=st.dictionaries(TEXT, st.booleans(), max_size=3),
    note=st.none() | TEXT,
    maybe=st.lists(st.none() | st.integers(), max_size=3),
)
TREES: st.SearchStrategy[Tree] = st.deferred(
    lambda: st.builds(
        Tree, name=TEXT, children=st.lists(TREES, max_size=2), weight=st.none() | FLOATS
    )
)
MOVIES = st.fixed_dictionaries(
    {"title": TEXT, "rating": DECIMALS}, optional={"year": st.integers(-(10**30), 10**30)}
)


_PAIRS: dict[object, tuple[OutputModel, InputModel]] = {}


def round_trip(tp: object, value: object) -> object:
    if tp not in _PAIRS:
        _PAIRS[tp] = (derive_output(tp), derive_input(tp))
    output, input_ = _PAIRS[tp]
    written = encode(output.to_json(value))
    return input_.bind(cast(JsonObject, decode(written)))


@PROPERTY
@given(RECORDS)
def test_records_round_trip(value: Record) -> None:
    assert round_trip(Record, value) == value


@PROPERTY
@given(TREES)
def test_recursive_values_round_trip(value: Tree) -> None:
    assert round_trip(Tree, value) == value


@PROPERTY
@given(MOVIES)
def test_typeddicts_round_trip(value: Movie) -> None:
    assert round_trip(Movie, value) == value


@PROPERTY
@given(st.dictionaries(TEXT, st.lists(st.integers(-(10**1000), 10**1000), max_size=3)))
def test_maps_of_big_integers_round_trip(value: dict[str, list[int]]) -> None:
    assert round_trip(dict[str, list[int]], value) == value


# --- totality: any JSON value binds or raises ArgumentsInvalid ----------------------------------

NAMES = st.sampled_from(["sku", "qty", "price", "name", "children", "title", "x", ""])
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(-(10**1100), 10**1100)
    | st.sampled_from([Decimal("1E+9999"), Decimal("-1E+999999999"), Decimal("-0"), Decimal("1.0")])
    | DECIMALS
    | TEXT
    | st.sampled_from(["red", "a", "b"])
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(NAMES, inner, max_size=5),
    max_leaves=30,
)
MODELS = [derive_input(tp) for tp in (Record, Tree, Movie, dict[str, list[int]])]


def bind_everywhere(value: object) -> None:
    arguments = cast(JsonObject, from_python(value))
    for model in MODELS:
        for call in (model.bind, model.bind_validated):
            try:
                call(arguments)
            except ArgumentsInvalid as exc:
                assert str(exc) == "Arguments do not match the tool's inputSchema."


@PROPERTY
@given(JSON)
def test_binding_any_json_only_raises_arguments_invalid_IV_02(value: Any) -> None:
    bind_everywhere(value)


@PROPERTY
@given(st.dictionaries(NAMES, JSON, max_size=6))
def test_objects_with_known_names_only_raise_arguments_invalid(
    value: dict[str, JsonValue],
) -> None:
    bind_everywhere(value)
