"""Inline binding and frame binding agree (TD-06, TD-12, JL-03/04).

Containers whose types nest at most ``_INLINE`` containers bind by direct calls; recursive and
deeper types bind in generator frames on an explicit stack.  Every case here binds both ways
(``_INLINE`` patched to 0 puts every container in a frame) and must give the same value or the
same refusal reason; further tests reach what only one of the two paths has.
"""

from __future__ import annotations

import dataclasses
import enum
from decimal import Decimal
from typing import Any, NotRequired, TypedDict

import pytest

import mcpkit.schema._bind as binding
from mcpkit.errors import ArgumentsFailure as F
from mcpkit.errors import ArgumentsInvalid
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.schema._analyze import analyze_type
from mcpkit.schema._bind import Binder, bind


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass(frozen=True)
class Leafy:
    name: str
    score: float | None = None


@dataclasses.dataclass(frozen=True)
class Shallow:
    leafy: Leafy
    counts: dict[str, int]
    levels: list[Level]
    maybe: list[Leafy | None]
    grid: tuple[tuple[int, ...], ...] = ()


@dataclasses.dataclass(frozen=True)
class Node:
    name: str
    children: list[Node]
    index: dict[str, Node] = dataclasses.field(default_factory=dict)
    spare: list[Node | None] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class Checked:
    n: int
    more: list[Checked]

    def __post_init__(self) -> None:
        if self.n < 0:
            raise ValueError("n must not be negative")


@dataclasses.dataclass(frozen=True)
class Seven:  # nests 8 containers with itself: the deepest inline object
    grid: list[list[list[list[list[list[list[int]]]]]]]


@dataclasses.dataclass(frozen=True)
class Eight:  # nests 9: a frame whose member is an inline leaf
    grid: list[list[list[list[list[list[list[list[int]]]]]]]]


class Doc(TypedDict):
    title: str
    parts: NotRequired[list[Doc]]


NODE = {"name": "r", "children": [{"name": "a", "children": []}], "index": {}}
CASES: list[tuple[object, object]] = [
    (Shallow, {"leafy": {"name": "x"}, "counts": {"a": 1}, "levels": [1, 2.0], "maybe": []}),
    (Shallow, {"leafy": {"name": "x", "score": 2}, "counts": {}, "levels": [], "maybe": [None]}),
    (Shallow, {"leafy": {"name": "x"}, "counts": {}, "levels": [], "maybe": [], "grid": [[1]]}),
    (Shallow, {"leafy": [], "counts": {}, "levels": [], "maybe": []}),  # type
    (Shallow, {"leafy": {"name": "x"}, "counts": [], "levels": [], "maybe": []}),  # type
    (Shallow, {"leafy": {"name": "x"}, "counts": {}, "levels": {}, "maybe": []}),  # type
    (Shallow, {"leafy": {}, "counts": {}, "levels": [], "maybe": []}),  # missing
    (Shallow, {"leafy": {"name": "x", "z": 1}, "counts": {}, "levels": [], "maybe": []}),
    (Shallow, {"leafy": {"name": "x"}, "counts": {1: 1}, "levels": [], "maybe": []}),  # key
    (Shallow, {"leafy": {"name": "x"}, "counts": {}, "levels": [3], "maybe": []}),  # enum
    (Node, NODE),
    (Node, {**NODE, "index": {"k": NODE}, "spare": [None, NODE]}),
    (Node, {"name": "r", "children": {}}),  # type
    (Node, {"name": "r", "children": [{"name": "a"}]}),  # missing
    (Node, {"name": "r", "children": [], "extra": 1}),  # unknown
    (Node, {"name": "r", "children": [], "index": {1: NODE}}),  # member name
    (Node, {"name": "r", "children": [], "spare": [1]}),  # type of a nullable member
    (Checked, {"n": 1, "more": [{"n": 2, "more": []}]}),
    (Checked, {"n": 1, "more": [{"n": -2, "more": []}]}),  # constructor
    (Doc, {"title": "t", "parts": [{"title": "u"}]}),
    (Doc, {"title": "t", "parts": [{"title": 1}]}),  # type
    (Seven, {"grid": [[[[[[[1]]]]]]]}),
    (Eight, {"grid": [[[[[[[[1]]]]]]]]}),
    (Eight, {"grid": [[[[[[[[True]]]]]]]]}),  # type
    (list[Node] | None, None),
    (dict[str, list[Node | None]] | None, {"a": [None, NODE]}),
]


def outcome(tp: object, value: object, limits: Limits = DEFAULT_LIMITS) -> tuple[str, object]:
    try:
        return ("bound", bind(analyze_type(tp, limits=limits), value, limits))
    except ArgumentsInvalid as exc:
        return ("refused", exc.reason)


@pytest.mark.parametrize(("tp", "value"), CASES, ids=lambda v: repr(v)[:40])
def test_frames_and_inline_agree(
    tp: object, value: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    inline = outcome(tp, value)
    monkeypatch.setattr(binding, "_INLINE", 0)  # every container in a frame
    assert outcome(tp, value) == inline


def test_the_cases_reach_every_container_reason() -> None:
    reasons = {
        result for tp, value in CASES for kind, result in [outcome(tp, value)] if kind == "refused"
    }
    expected = {F.TYPE, F.MISSING_PROPERTY, F.UNKNOWN_PROPERTY, F.MEMBER_NAME, F.ENUM}
    assert expected | {F.CONSTRUCTOR} <= reasons


def test_recursive_values_bind() -> None:
    leaf = Node("a", [])
    assert outcome(Node, {**NODE, "index": {"k": NODE}, "spare": [None, NODE]}) == (
        "bound",
        Node("r", [leaf], {"k": Node("r", [leaf])}, [None, Node("r", [leaf])]),
    )
    assert outcome(Doc, {"title": "t", "parts": [{"title": "u"}]}) == (
        "bound",
        {"title": "t", "parts": [{"title": "u"}]},
    )
    assert outcome(list[Node] | None, None) == ("bound", None)
    assert outcome(Checked, {"n": 1, "more": [{"n": -2, "more": []}]}) == (
        "refused",
        F.CONSTRUCTOR,
    )


def _nested(levels: int, wrap: Any, leaf: object, value: object) -> tuple[object, object]:
    tp: Any = leaf
    for _ in range(levels):
        tp = wrap(tp)
        value = {"k": value} if wrap is _map else [value]
    return tp, value


def _map(tp: Any) -> Any:
    return dict[str, tp]


def _list(tp: Any) -> Any:
    return list[tp]


@pytest.mark.parametrize("wrap", [_map, _list])
@pytest.mark.parametrize("levels", [8, 9, 12])
def test_nesting_past_the_inline_bound_binds_in_frames(wrap: Any, levels: int) -> None:
    """Up to ``_INLINE`` containers bind inline; the outer ones get frames whose members are
    those inline leaves."""
    tp, value = _nested(levels, wrap, int, 7)
    assert outcome(tp, value) == ("bound", value)
    limits = Limits(max_json_depth=levels - 1)
    assert outcome(tp, value, limits) == ("refused", F.DEPTH)
    assert outcome(tp, value, Limits(max_json_depth=levels)) == ("bound", value)
    assert outcome(tp, value, Limits(max_json_nodes=levels)) == ("refused", F.NODES)
    assert outcome(tp, value, Limits(max_json_nodes=levels + 1)) == ("bound", value)


@dataclasses.dataclass(frozen=True)
class Outer:
    inner: Leafy


@pytest.mark.parametrize(
    ("tp", "value", "depth", "nodes"),
    [
        (Outer, {"inner": {"name": "x"}}, 2, 3),  # inline objects
        (dict[str, dict[str, int]], {"a": {"b": 1}}, 2, 3),  # inline maps
        (list[list[int]], [[1]], 2, 3),  # inline arrays
        (Node, NODE, 4, 7),  # frames: r, children, a, a.children
        (Seven, {"grid": [[[[[[[1]]]]]]]}, 8, 9),
        (Eight, {"grid": [[[[[[[[1]]]]]]]]}, 9, 10),
    ],
)
def test_depth_and_nodes_at_the_limit_and_one_past(
    tp: object, value: object, depth: int, nodes: int
) -> None:
    """Each container opened counts one level; each value one node, inline or in a frame."""
    assert outcome(tp, value, Limits(max_json_depth=depth))[0] == "bound"
    assert outcome(tp, value, Limits(max_json_depth=depth - 1)) == ("refused", F.DEPTH)
    assert outcome(tp, value, Limits(max_json_nodes=nodes))[0] == "bound"
    assert outcome(tp, value, Limits(max_json_nodes=nodes - 1)) == ("refused", F.NODES)


@pytest.mark.parametrize(
    ("tp", "framed"), [(Seven, False), (Eight, True), (Node, True), (list[Node] | None, True)]
)
def test_frames_only_where_nesting_needs_them(tp: object, framed: bool) -> None:
    """Python recursion while binding is bounded by ``_INLINE`` containers, never by input."""
    root = Binder(analyze_type(tp, limits=DEFAULT_LIMITS), DEFAULT_LIMITS)._root
    assert isinstance(root, binding._Container) is framed


def test_int_subclasses_bind_as_plain_ints() -> None:
    model = analyze_type(list[int], limits=DEFAULT_LIMITS)
    bound = Binder(model, DEFAULT_LIMITS)([1, Level.HIGH])
    assert bound == [1, 2] and [type(item) for item in bound] == [int, int]


def test_a_binder_is_reusable() -> None:
    binder = Binder(analyze_type(dict[str, Decimal], limits=DEFAULT_LIMITS), DEFAULT_LIMITS)
    assert binder({"a": Decimal("1.50")}) == {"a": Decimal("1.50")}
    with pytest.raises(ArgumentsInvalid):
        binder({"a": "x"})
    assert binder({}) == {}
