"""Binding validated JSON arguments to typed values: every family member, defaults, and the one
fixed failure (TD-01, TD-06, TD-07, TD-08, IV-02..04)."""

from __future__ import annotations

import dataclasses
import enum
from decimal import Decimal
from typing import Annotated, Any, Generic, Literal, NotRequired, TypedDict, TypeVar

import pytest

from mcpkit.errors import ArgumentsFailure as F
from mcpkit.errors import ArgumentsInvalid
from mcpkit.json import JsonObject, decode
from mcpkit.limits import DEFAULT_LIMITS
from mcpkit.schema._analyze import analyze_type
from mcpkit.schema._bind import bind
from mcpkit.schema._typed import Arg, Int8, derive_input

T = TypeVar("T")


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass(frozen=True)
class Item:
    sku: str
    qty: Int8 = 1
    tags: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class Box(Generic[T]):
    value: T


@dataclasses.dataclass(frozen=True)
class Everything:
    text: str
    flag: bool
    count: int
    ratio: float
    price: Decimal
    color: Color
    level: Level
    mode: Literal["a", "b", 3, True]
    items: list[Item]
    pair: tuple[int, ...]
    scores: dict[str, float]
    box: Box[Decimal]
    maybe: list[int | None]
    note: str | None = None
    limit: int | None = 10


@dataclasses.dataclass(frozen=True)
class Tree:
    name: str
    children: list[Tree]


@dataclasses.dataclass(frozen=True)
class Positive:
    n: int

    def __post_init__(self) -> None:
        if self.n <= 0:
            raise ValueError(f"n must be positive, got {self.n}")


class Movie(TypedDict):
    title: str
    year: NotRequired[int]
    rating: float | None


EVERYTHING = (
    b'{"text":"t","flag":true,"count":-7,"ratio":1.5e2,"price":1.50,"color":"blue",'
    b'"level":2.0,"mode":3,"items":[{"sku":"a"},{"sku":"b","qty":-128,"tags":["x"]}],'
    b'"pair":[1,2],"scores":{"x":0,"y":-0.5},"box":{"value":1E+1},"maybe":[1,null]}'
)


def bind_json(tp: object, data: bytes, **options: Any) -> object:
    return derive_input(tp, **options).bind(decode(data))  # type: ignore[arg-type]


def refused(tp: object, data: bytes) -> F:
    """Bind and expect the fixed failure; returns the private reason."""
    with pytest.raises(ArgumentsInvalid) as caught:
        bind_json(tp, data)
    assert str(caught.value) == "Arguments do not match the tool's inputSchema."
    assert caught.value.args == ("Arguments do not match the tool's inputSchema.",)
    return caught.value.reason


def test_every_family_member_binds_TD_01() -> None:
    value = bind_json(Everything, EVERYTHING)
    assert value == Everything(
        text="t",
        flag=True,
        count=-7,
        ratio=150.0,
        price=Decimal("1.50"),
        color=Color.BLUE,
        level=Level.HIGH,
        mode=3,
        items=[Item("a"), Item("b", -128, ["x"])],
        pair=(1, 2),
        scores={"x": 0.0, "y": -0.5},
        box=Box(Decimal("1E+1")),
        maybe=[1, None],
        note=None,
        limit=10,
    )
    assert isinstance(value, Everything)
    assert type(value.count) is int and type(value.ratio) is float
    assert type(value.scores["x"]) is float and type(value.pair) is tuple
    assert value.level is Level.HIGH and type(value.mode) is int


def test_decimal_is_kept_exactly_as_parsed_TD_07() -> None:
    value = bind_json(Everything, EVERYTHING.replace(b"1.50", b"1.500E-0"))
    assert isinstance(value, Everything)
    assert str(value.price) == "1.500"
    assert value.price.as_tuple() == Decimal("1.500").as_tuple()
    big = bind_json(Box[Decimal], b'{"value":1e999999999}')
    assert isinstance(big, Box) and big.value == Decimal("1E+999999999")


def test_integral_numbers_bind_to_int() -> None:
    for spelling, expected in [(b"1.0", 1), (b"1E+2", 100), (b"-0", 0), (b"12.5e1", 125)]:
        value = bind_json(Box[int], b'{"value":' + spelling + b"}")
        assert isinstance(value, Box) and value.value == expected and type(value.value) is int


def test_absent_optional_properties_get_defaults_or_none() -> None:
    value = bind_json(Item, b'{"sku":"a"}')
    assert value == Item("a", 1, [])
    movie = bind_json(Movie, b'{"title":"x"}')
    assert movie == {"title": "x", "rating": None}  # NotRequired stays out; T | None is None
    movie = bind_json(Movie, b'{"title":"x","year":1999,"rating":4}')
    assert movie == {"title": "x", "year": 1999, "rating": 4.0}


def test_function_parameters_bind_to_keyword_arguments_TD_08() -> None:
    marker = object()

    def search(
        self: object,
        query: Annotated[str, Arg(name="q")],
        ctx: Color,
        limit: int | None = None,
        page: int = 1,
        default: object = marker,
        *,
        sort: Literal["asc", "desc"] = "asc",
    ) -> None:
        raise NotImplementedError

    model = derive_input(search, excluded={Color, object})
    assert model.bind(JsonObject({"q": "x"})) == {
        "query": "x",
        "limit": None,
        "page": 1,
        "sort": "asc",
    }
    assert model.bind(JsonObject({"q": "x", "page": 3, "sort": "desc"})) == {
        "query": "x",
        "limit": None,
        "page": 3,
        "sort": "desc",
    }


def test_recursive_types_bind() -> None:
    tree = bind_json(Tree, b'{"name":"r","children":[{"name":"c","children":[]}]}')
    assert tree == Tree("r", [Tree("c", [])])


def test_dict_roots_bind_TD_08() -> None:
    assert bind_json(dict[str, list[int]], b'{"a":[1,2],"b":[]}') == {"a": [1, 2], "b": []}


@pytest.mark.parametrize(
    "data",
    [
        b'{"sku":1}',  # wrong type
        b'{"qty":1}',  # missing required
        b'{"sku":"a","extra":1}',  # unknown property
        b'{"sku":"a","qty":1.5}',  # not an integer
        b'{"sku":"a","qty":128}',  # outside Int8
        b'{"sku":"a","tags":null}',  # null for an optional, non-nullable property
        b'{"sku":"a","tags":"x"}',
    ],
)
def test_schema_failures_are_arguments_invalid_IV_02(data: bytes) -> None:
    assert refused(Item, data) is F.INVALID


def test_constructor_failures_are_arguments_invalid_IV_03() -> None:
    with pytest.raises(ArgumentsInvalid) as caught:
        bind_json(Positive, b'{"n":-5}')
    assert str(caught.value) == "Arguments do not match the tool's inputSchema."
    assert "-5" not in str(caught.value)  # IV-04: nothing submitted is echoed
    assert caught.value.reason is F.CONSTRUCTOR


def test_floats_must_be_finite() -> None:
    assert refused(Box[float], b'{"value":1e309}') is F.INVALID  # the schema's finite maximum
    model = analyze_type(list[float], limits=DEFAULT_LIMITS)
    with pytest.raises(ArgumentsInvalid, match="inputSchema") as caught:
        bind(model, decode(b"[1e309]"), DEFAULT_LIMITS)
    assert caught.value.reason is F.FLOAT_RANGE
    with pytest.raises(ArgumentsInvalid) as caught:
        bind(model, [10**400], DEFAULT_LIMITS)
    assert caught.value.reason is F.FLOAT_RANGE
    assert bind(model, decode(b"[-0, 5e-324, 1.7976931348623157e308]"), DEFAULT_LIMITS) == [
        0.0,
        5e-324,
        1.7976931348623157e308,
    ]


UNVALIDATED: list[tuple[object, object, F]] = [
    (str, 1, F.TYPE),
    (bool, 1, F.TYPE),
    (int, True, F.TYPE),
    (int, "1", F.TYPE),
    (int, Decimal("1.5"), F.NOT_INTEGER),
    (int, Decimal("NaN"), F.NOT_INTEGER),
    (int, Decimal("Infinity"), F.NOT_INTEGER),
    (float, True, F.TYPE),
    (float, "1", F.TYPE),
    (float, Decimal("-Infinity"), F.FLOAT_RANGE),
    (float, Decimal("sNaN"), F.FLOAT_RANGE),
    (Decimal, True, F.TYPE),
    (Decimal, Decimal("NaN"), F.TYPE),
    (Decimal, 1.5, F.TYPE),
    (Color, "green", F.ENUM),
    (Color, 1, F.ENUM),
    (Level, True, F.ENUM),
    (Level, Decimal("NaN"), F.ENUM),
    (Level, 3, F.ENUM),
    (Literal[1], True, F.LITERAL),
    (Literal[True], 1, F.LITERAL),
    (Literal["a"], None, F.TYPE),
    (Literal[1], Decimal("sNaN"), F.TYPE),
    (list[int], {"a": 1}, F.TYPE),
    (list[int], "12", F.TYPE),
    (dict[str, int], [1], F.TYPE),
    (dict[str, int], {1: 1}, F.MEMBER_NAME),
    (Item, [("sku", "a")], F.TYPE),
    (Item, {"sku": "a", "qty": None}, F.TYPE),
    (int | None, "x", F.TYPE),
    (Item, {"sku": "a", "unknown": 1}, F.UNKNOWN_PROPERTY),
    (Item, {"qty": 1}, F.MISSING_PROPERTY),
]


@pytest.mark.parametrize(("tp", "value", "reason"), UNVALIDATED, ids=lambda v: repr(v)[:30])
def test_the_binder_never_trusts_validation_TD_06(tp: object, value: object, reason: F) -> None:
    model = analyze_type(tp, limits=DEFAULT_LIMITS)
    with pytest.raises(ArgumentsInvalid) as caught:
        bind(model, value, DEFAULT_LIMITS)
    assert caught.value.reason is reason


def test_the_binder_accepts_what_validation_accepts_for_numbers() -> None:
    levels = analyze_type(list[Level], limits=DEFAULT_LIMITS)
    assert bind(levels, decode(b"[1, 2.0, 1E+0, 20e-1]"), DEFAULT_LIMITS) == [
        Level.LOW,
        Level.HIGH,
        Level.LOW,
        Level.HIGH,
    ]
    literal = analyze_type(list[Literal[7, "7", True]], limits=DEFAULT_LIMITS)
    bound = bind(literal, decode(b'[7.0, "7", true, 70e-1]'), DEFAULT_LIMITS)
    assert bound == [7, "7", True, 7]
    assert [type(v) for v in bound] == [int, str, bool, int]


def test_unvalidated_objects_are_checked_member_by_member() -> None:
    model = analyze_type(Item, limits=DEFAULT_LIMITS)
    for value, expected in [
        ({"sku": "a", "unknown": 1}, F.UNKNOWN_PROPERTY),
        ({"qty": 1}, F.MISSING_PROPERTY),
        ({"sku": "a", "qty": None}, F.TYPE),
    ]:
        with pytest.raises(ArgumentsInvalid) as caught:
            bind(model, value, DEFAULT_LIMITS)
        assert caught.value.reason == expected
