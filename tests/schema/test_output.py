"""Typed outputs to JSON, validated against the derived output schema (TD-09, TD-11, JL-21).

Every mismatch is ``OutputError`` (JSON-RPC -32603, HTTP 200) with a reason for the logs; no
partial value is ever returned."""

from __future__ import annotations

import dataclasses
import enum
import sys
from decimal import Decimal
from typing import Annotated, Any, Literal, NotRequired, TypedDict

import pytest

from mcpkit.errors import OutputError, OutputFailure
from mcpkit.json import JsonArray, JsonObject, encode
from mcpkit.limits import Limits
from mcpkit.schema._typed import Arg, Int8, derive_output


class Color(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    LOW = 1


class Other(enum.Enum):
    RED = "red"


@dataclasses.dataclass(frozen=True)
class Item:
    sku: str
    qty: Int8 = 0
    note: str | None = None


@dataclasses.dataclass(frozen=True)
class SubItem(Item):
    extra: int = 0


@dataclasses.dataclass(frozen=True)
class Result:
    items: list[Item]
    total: Decimal
    ratio: float
    color: Color
    level: Level
    mode: Literal["a", 1, True]
    flags: tuple[bool, ...]
    scores: dict[str, float | None]
    ok: bool


@dataclasses.dataclass(frozen=True)
class Tree:
    name: str
    children: list[Tree]


class Movie(TypedDict):
    title: str
    year: NotRequired[int]
    rating: float | None


@dataclasses.dataclass(frozen=True)
class Bounded:
    n: Annotated[int, Arg(minimum=0, maximum=10)]


def failure(tp: object, value: object, **options: Any) -> OutputFailure:
    with pytest.raises(OutputError) as caught:
        derive_output(tp, **options).to_json(value)
    assert str(caught.value) == "Internal error"
    assert (caught.value.jsonrpc_code, caught.value.http_status) == (-32603, 200)
    return caught.value.reason


def test_values_convert_by_their_declared_type_TD_11() -> None:
    result = Result(
        items=[Item("a"), Item("b", -3, "n")],
        total=Decimal("10.50"),
        ratio=0.1,
        color=Color.RED,
        level=Level.LOW,
        mode=True,
        flags=(True, False),
        scores={"x": 1.5, "y": None},
        ok=False,
    )
    value = derive_output(Result).to_json(result)
    assert isinstance(value, JsonObject)
    assert encode(value) == (
        b'{"items":[{"sku":"a","qty":0},{"sku":"b","qty":-3,"note":"n"}],"total":10.50,'
        b'"ratio":0.1,"color":"red","level":1,"mode":true,"flags":[true,false],'
        b'"scores":{"x":1.5,"y":null},"ok":false}'
    )
    assert type(value["level"]) is int  # an IntEnum is written as its plain value


def test_scalar_and_container_roots() -> None:
    assert derive_output(int).to_json(5) == 5
    assert derive_output(float).to_json(1e300) == Decimal("1e300")
    assert derive_output(float).to_json(3) == 3
    assert derive_output(Decimal).to_json(Decimal("-0.00")).as_tuple() == (  # type: ignore[union-attr]
        Decimal("-0.00").as_tuple()
    )
    assert derive_output(str | None).to_json(None) is None
    assert derive_output(list[int | None]).to_json([1, None]) == JsonArray([1, None])
    assert derive_output(dict[str, Color]).to_json({"k": Color.RED}) == {"k": "red"}
    assert derive_output(Literal["x"]).to_json("x") == "x"


def test_optional_properties_holding_none_are_left_out() -> None:
    assert encode(derive_output(Item).to_json(Item("a"))) == b'{"sku":"a","qty":0}'
    movie: Movie = {"title": "x", "rating": None}
    assert encode(derive_output(Movie).to_json(movie)) == b'{"title":"x"}'
    movie = {"title": "x", "year": 2000, "rating": 2.5}
    assert encode(derive_output(Movie).to_json(movie)) == b'{"title":"x","year":2000,"rating":2.5}'


def test_subclass_instances_are_written_as_the_declared_class() -> None:
    assert encode(derive_output(Item).to_json(SubItem("a", extra=9))) == b'{"sku":"a","qty":0}'


def test_recursive_values() -> None:
    tree = Tree("r", [Tree("a", []), Tree("b", [Tree("c", [])])])
    assert encode(derive_output(Tree).to_json(tree)) == (
        b'{"name":"r","children":[{"name":"a","children":[]},'
        b'{"name":"b","children":[{"name":"c","children":[]}]}]}'
    )


WRONG: list[tuple[object, object]] = [
    (int, "1"),
    (int, True),
    (int, 1.0),
    (int, Decimal(1)),
    (bool, 1),
    (str | None, 1),
    (float, float("nan")),
    (float, float("inf")),
    (float, True),
    (float, Decimal("1.5")),
    (Decimal, Decimal("NaN")),
    (Decimal, 1.5),
    (Color, "red"),
    (Color, Other.RED),
    (Level, 1),
    (Literal["a", 1], True),
    (Literal[True], 1),
    (list[int], {1, 2}),
    (list[int], "12"),
    (list[int], [1, "2"]),
    (dict[str, int], [("a", 1)]),
    (Item, {"sku": "a"}),
    (Item, Item(1)),  # type: ignore[arg-type]
    (Item, Item("a", qty=None)),  # type: ignore[arg-type]
    (Movie, {"year": 1}),  # a required key is missing
    (Movie, {"title": "x", "rating": 1.0, "extra": 1}),  # an undeclared key
    (Int8, 128),  # the schema's range
    (Bounded, Bounded(11)),  # an Arg bound
    (Tree, Tree("r", [None])),  # type: ignore[list-item]
]


@pytest.mark.parametrize(("tp", "value"), WRONG, ids=lambda v: repr(v)[:30])
def test_mismatches_are_output_errors_TD_11(tp: object, value: object) -> None:
    assert failure(tp, value) is OutputFailure.SCHEMA


def test_other_failures_keep_their_reasons() -> None:
    assert failure(str | None, "\ud800") is OutputFailure.SURROGATE
    assert failure(dict[str, int], {1: 1}) is OutputFailure.MEMBER_NAME
    cycle = Tree("r", [])
    cycle.children.append(cycle)  # a reference cycle meets the depth limit
    assert failure(Tree, cycle) is OutputFailure.DEPTH
    assert failure(Tree, _deep_tree(200)) is OutputFailure.DEPTH
    small = Limits(max_response_bytes=3)
    assert failure(list[int], [1, 2, 3], limits=small) is OutputFailure.SIZE  # 4 values


def test_exhausted_evaluation_budget_is_an_output_error_JL_21() -> None:
    tight = Limits(max_evaluation_operations=10)
    model = derive_output(list[int], limits=tight)
    assert model.to_json([1]) == JsonArray([1])
    with pytest.raises(OutputError) as caught:
        model.to_json(list(range(100)))
    assert caught.value.reason is OutputFailure.SCHEMA


def _deep_tree(depth: int) -> Tree:
    tree = Tree("leaf", [])
    for _ in range(depth):
        tree = Tree("node", [tree])
    return tree


def test_deep_values_convert_without_recursion() -> None:
    limits = Limits(max_json_depth=512)
    model = derive_output(Tree, limits=limits)
    tree = _deep_tree(250)  # 501 nested containers
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back  # type: ignore[assignment]
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + 60)
    try:
        value = model.to_json(tree)
    finally:
        sys.setrecursionlimit(old)
    assert isinstance(value, JsonObject) and value["name"] == "node"
