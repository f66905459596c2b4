"""The hot-path shortcuts agree with the general paths, budget included.

- Evaluation: flat nodes (checked inline, their members in one loop) and the type-only
  shortcuts are compared with the generator driver on a copy of the compiled schema that has
  every shortcut switched off.  Outcome, diagnostic path and the operations charged must be
  equal, at every budget: one short of what the evaluation uses, exactly that, and at random.
- Output: ``Converter``'s loop for dataclasses of scalars against the general conversion.
- Binding: inline objects against frames (``_INLINE`` = 0 puts every container in a frame).
"""

from __future__ import annotations

import copy
import dataclasses
import enum
from decimal import Decimal
from typing import Any
from unittest import mock

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import mcpkit.schema._bind as binding
from mcpkit.errors import ArgumentsInvalid, OutputError
from mcpkit.json import JsonObject, JsonValue, from_python
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.schema import Outcome, compile_schema, derive_input, derive_output
from mcpkit.schema._analyze import analyze_type
from mcpkit.schema._bind import Binder
from mcpkit.schema._evaluate import _drive, _Exhausted, _kind, _Run, evaluate, outcome
from mcpkit.schema._nodes import ABSENT, Node
from mcpkit.schema._output import Converter, _Conversion

PROPERTY = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BIG = 10**7
EVERY_BUDGET = 60  # evaluations that use at most this many operations are run at every budget

# --- evaluation ---------------------------------------------------------------------------------

NAMES = st.sampled_from(["a", "b", "c", "d"])
TYPE_NAME = st.sampled_from(["null", "boolean", "object", "array", "number", "string", "integer"])
TYPES = st.one_of(TYPE_NAME, st.lists(TYPE_NAME, min_size=1, max_size=3, unique=True))
NUMBERS = st.one_of(
    st.integers(-3, 3), st.sampled_from([Decimal("1.0"), Decimal("1.5"), Decimal("-0"), 10**30])
)
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, NAMES)
CONSTANTS = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(NAMES, inner, max_size=2),
    max_leaves=4,
)
REQUIRED = st.lists(NAMES, unique=True, max_size=3)
# Simple schemas: no subschema.  Type-only ones are drawn often: they take the shortcuts.
LEAVES = st.one_of(
    st.builds(lambda kind: {"type": kind}, TYPES),
    st.booleans(),
    st.fixed_dictionaries(
        {},
        optional={
            "type": TYPES,
            "enum": st.lists(CONSTANTS, min_size=1, max_size=3),
            "const": CONSTANTS,
            "minimum": NUMBERS,
            "maximum": NUMBERS,
            "required": REQUIRED,
            "title": st.just("annotation only"),
        },
    ),
)
OBJECT_TYPES = st.one_of(st.just("object"), TYPES)


def _objects(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={
            "type": OBJECT_TYPES,
            "properties": st.dictionaries(NAMES, children, max_size=4),
            "additionalProperties": children,
            "required": REQUIRED,
            "items": children,
            "const": CONSTANTS,
            "minimum": NUMBERS,
        },
    )


def _nested(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    members = children | st.just({"$ref": "#"})  # always under properties: descends
    return st.fixed_dictionaries(
        {},
        optional={
            "type": OBJECT_TYPES,
            "properties": st.dictionaries(NAMES, members, max_size=3),
            "additionalProperties": children,
            "required": REQUIRED,
            "items": children,
            "allOf": st.lists(children, min_size=1, max_size=2),
            "anyOf": st.lists(children, min_size=1, max_size=2),
            "if": children,
            "then": children,
            "else": children,
        },
    )


FLAT = _objects(LEAVES)
SCHEMAS = st.one_of(FLAT, st.recursive(FLAT | LEAVES, _nested, max_leaves=8))

VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-4, 4),
        st.integers(),
        st.sampled_from([Decimal("1.0"), Decimal("1.5"), Decimal("-0"), Decimal("1E+2")]),
        NAMES,
        st.text(max_size=3),
        st.just(1.5),  # not a JSON value: no type accepts it
    ),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(NAMES, inner, max_size=4)
    ),
    max_leaves=12,
)
INSTANCES = st.one_of(
    VALUES,
    st.dictionaries(NAMES, VALUES, max_size=4),
    st.dictionaries(NAMES, VALUES, max_size=4).map(lambda value: from_python(value)),
)

_SHORTCUTS_OFF: dict[str, object] = {
    "flat": False,
    "direct": frozenset(),
    "steps": {},
    "accept": frozenset(),
    "exact": frozenset(),
    "plain": False,
}


def _general(root: Node) -> Node:
    """A copy of a compiled schema that the generator driver evaluates everywhere."""
    general = copy.deepcopy(root, {id(ABSENT): ABSENT})  # "no const" is compared by identity
    seen: set[int] = set()
    stack = [general]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for name, value in _SHORTCUTS_OFF.items():
            setattr(node, name, value)
        subschemas = (
            *node.properties.values(),
            *node.all_of,
            *node.any_of,
            node.additional,
            node.items,
            node.if_,
            node.then,
            node.else_,
            node.ref,
        )
        stack.extend(sub for sub in subschemas if sub is not None)
    return general


Result = tuple[Outcome, "tuple[tuple[str | int, ...], str] | None", "int | None"]


def _run(root: Node, instance: object, budget: int, diagnostics: bool = False) -> Result:
    """The outcome, where and why it failed, and the budget left (what was charged)."""
    run = _Run(budget, [] if diagnostics else None)
    try:
        valid = _drive(root, instance, run)
    except _Exhausted:
        return Outcome.BUDGET_EXHAUSTED, None, None
    failure = None if run.failure is None else run.failure[:2]  # the path and the keyword
    return (Outcome.VALID if valid else Outcome.INVALID), failure, run.budget


BENCH_INPUT = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}


# Flat objects whose members mostly pass by type: the loop's shortcuts, additional ones too.
TYPE_ONLY = st.builds(lambda kind: {"type": kind}, st.sampled_from(["integer", "string", "object"]))
TYPED_OBJECTS = st.fixed_dictionaries(
    {"type": st.just("object"), "properties": st.dictionaries(NAMES, TYPE_ONLY, max_size=3)},
    optional={
        "additionalProperties": TYPE_ONLY | st.booleans(),
        "required": st.lists(NAMES, unique=True, max_size=2),
    },
)
MEMBERS: st.SearchStrategy[dict[str, object]] = st.dictionaries(
    st.sampled_from(["a", "b", "c", "d", "x", "y"]),
    st.one_of(st.integers(-2, 2), NAMES, st.just({}), st.just(Decimal("2.0")), st.none()),
    max_size=5,
)


@PROPERTY
@given(SCHEMAS, INSTANCES, st.integers(0, 300))
@example(BENCH_INPUT, {"a": 2, "b": 3}, 0)
@example(BENCH_INPUT, {"a": 2, "c": 3}, 0)
@example({"items": {"type": "integer"}}, [1, "x", 2], 0)
@example({"anyOf": [{"properties": {"a": {"type": "string"}}}, True]}, {"a": 1}, 0)
@example({"properties": {"a": {"type": "object", "required": ["b"]}}}, {"a": {}}, 0)
@example({"properties": {"a": {"type": "integer"}}}, {"a": 1, "b": 2}, 0)
@example({"minimum": 1, "properties": {"a": {"type": "integer"}}}, {"a": 1}, 0)
@example({"type": "object", "items": {"type": "integer"}}, {"a": 1}, 0)
@example({"properties": {"a": {}}}, 5, 0)
@example({"items": {"minimum": 0}}, [1, 2], 0)
def test_shortcuts_charge_and_decide_like_the_general_driver(
    document: Any, instance: object, budget: int
) -> None:
    _differential(document, instance, budget)


@PROPERTY
@given(TYPED_OBJECTS, MEMBERS, st.integers(0, 30))
@example(
    {"type": "object", "properties": {}, "additionalProperties": {"type": "integer"}}, {"x": 1}, 0
)
def test_flat_objects_charge_and_decide_like_the_general_driver(
    document: Any, instance: object, budget: int
) -> None:
    _differential(document, instance, budget)


def _differential(document: Any, instance: object, budget: int) -> None:
    fast = compile_schema(document, object_root=False)._root
    general = _general(fast)
    expected = _run(general, instance, BIG, diagnostics=True)
    assert _run(fast, instance, BIG, diagnostics=True) == expected
    budgets = [budget]
    if expected[2] is not None:  # the boundary must not move: every budget up to what was used
        used = BIG - expected[2]
        budgets += range(used + 1) if used <= EVERY_BUDGET else [used - 1, used]
    for limit in budgets:
        result = _run(general, instance, limit)
        assert _run(fast, instance, limit) == result
        assert outcome(fast, instance, limit) is result[0]
        diagnosed = _run(general, instance, limit, diagnostics=True)
        assert _run(fast, instance, limit, diagnostics=True) == diagnosed
        found, failure = diagnosed[:2]
        path = None if failure is None else failure[0]
        assert evaluate(fast, instance, limit, diagnostics=True) == (found, path)


def test_the_differential_reaches_every_shortcut() -> None:
    root = compile_schema(BENCH_INPUT)._root
    assert root.flat and root.direct and root.steps
    assert root.properties["a"].accept == frozenset({int})
    assert root.additional is not None and not root.additional.accept
    nested = compile_schema({"properties": {"a": {"items": True}}}, object_root=False)._root
    assert not nested.flat and nested.properties["a"].flat
    assert not compile_schema({"type": "integer", "enum": [1]}, object_root=False)._root.accept
    assert not compile_schema({"const": 1, "properties": {}}, object_root=False)._root.direct
    assert not compile_schema({"type": "array", "items": {}}, object_root=False)._root.direct


@PROPERTY
@given(TYPES, VALUES)
def test_exact_types_imply_the_kind(types: str | list[str], value: object) -> None:
    node = compile_schema({"type": types}, object_root=False)._root
    assert node.kinds is not None
    if type(value) in node.exact:
        assert _kind(value) in node.kinds


# --- output ----------------------------------------------------------------------------------


class Level(enum.IntEnum):
    LOW = 1


SCALAR_TYPES: dict[str, type] = {
    "int": int,
    "float": float,
    "decimal": Decimal,
    "str": str,
    "bool": bool,
}
FIELD_VALUES = st.one_of(
    st.integers(-(10**20), 10**20),
    st.booleans(),
    st.just(Level.LOW),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([Decimal("1.50"), Decimal("NaN"), Decimal("-Infinity")]),
    st.text(max_size=3),
    st.just("\ud800"),  # an unpaired surrogate
    st.none(),
    st.just(object()),
)
FIELDS = st.lists(st.tuples(st.sampled_from(sorted(SCALAR_TYPES)), st.booleans()), max_size=4)


@dataclasses.dataclass(frozen=True)
class Inner:
    n: int


def _flat_dataclass(fields: list[tuple[str, bool]]) -> type:
    annotations = [
        (f"f{index}", SCALAR_TYPES[kind] | None if optional else SCALAR_TYPES[kind])
        for index, (kind, optional) in enumerate(fields)
    ]
    return dataclasses.make_dataclass("Flat", annotations, frozen=True)


def _typed(value: JsonValue) -> object:
    """A value with its types spelled out: 1, True and Decimal("1") differ."""
    if isinstance(value, dict):
        return [(name, _typed(member)) for name, member in value.items()]
    return (type(value), repr(value))


def _converted(convert: Any, value: object) -> object:
    try:
        return ("converted", _typed(convert(value)))
    except OutputError as error:
        return ("refused", error.reason)


@PROPERTY
@given(FIELDS, st.data(), st.integers(1, 6), st.booleans())
def test_dataclass_output_matches_the_general_conversion(
    fields: list[tuple[str, bool]], data: st.DataObject, size: int, tight: bool
) -> None:
    cls = _flat_dataclass(fields)
    limits = Limits(max_response_bytes=size) if tight else DEFAULT_LIMITS
    model = analyze_type(cls, limits=limits)
    converter = Converter(model, limits)
    assert (converter._target is cls) is (len(fields) < limits.max_response_bytes)
    values = [data.draw(FIELD_VALUES) for _ in fields]
    for value in (cls(*values), Inner(1), None):
        general = _converted(_Conversion(model, limits).run, value)
        assert _converted(converter, value) == general


def test_other_outputs_take_the_general_conversion() -> None:
    @dataclasses.dataclass(frozen=True)
    class Outer:
        inner: Inner

    for tp in (Outer, list[int], Level):
        assert Converter(analyze_type(tp, limits=DEFAULT_LIMITS), DEFAULT_LIMITS)._target is None
    model = derive_output(Outer)
    assert model.to_json(Outer(Inner(2))) == JsonObject({"inner": {"n": 2}})


# --- binding -------------------------------------------------------------------------------------

ARGUMENT_VALUES = st.one_of(
    st.integers(-(10**25), 10**25),
    st.booleans(),
    st.sampled_from([Decimal("2.0"), Decimal("2.5"), Decimal("1E+3")]),
    st.text(max_size=2),
    st.none(),
    st.lists(st.integers(), max_size=2),
)


def add(a: int, b: int, c: float = 1.0, d: str | None = None) -> int:
    return a + b


def _bound(binder: Binder, value: object) -> tuple[str, object]:
    try:
        return ("bound", binder(value))
    except ArgumentsInvalid as error:
        return ("refused", error.reason)


@PROPERTY
@given(
    st.dictionaries(st.sampled_from(["a", "b", "c", "d", "e"]), ARGUMENT_VALUES, max_size=5),
    st.integers(1, 8),
    st.integers(1, 30),
    st.integers(0, 30),
)
def test_inline_objects_bind_like_frames(
    arguments: dict[str, object], nodes: int, chars: int, more: int
) -> None:
    limits = Limits(
        max_json_nodes=nodes, max_integer_chars=chars, max_binding_integer_chars=chars + more
    )
    model = derive_input(add, limits=limits)._model
    inline = Binder(model, limits)
    with mock.patch.object(binding, "_INLINE", 0):  # every container in a frame
        framed = Binder(model, limits)
    assert _bound(inline, arguments) == _bound(framed, arguments)
