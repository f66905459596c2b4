"""JSON arguments to typed Python values: containers and the binding driver.

Binding follows schema validation but never trusts it: any JSON value, valid or not, either
binds or raises :class:`~mcpkit.errors.ArgumentsInvalid` with its fixed message
and a private :class:`~mcpkit.errors.ArgumentsFailure` reason.  Every cost is priced before it
is paid:

- each value counts one node against ``max_json_nodes``; a container pays for all its
  members when it is opened, before any of them is bound;
- every container opened counts one level against ``max_json_depth``;
- integers, fixed-width ranges and floats are priced by their leaves (``_bind_leaves``).

The type analysis is done once: :class:`Binder` compiles a ``TypeModel`` into *leaves*, plain
functions ``(value, budget, depth) -> bound`` with their parameters bound in, and one shared
plan per object type: ``(json name, key, leaf or container, absent rule, default)`` per
field, the key being the attribute (a pydantic model's is the published name, as the model
is built by ``model_validate``).  A scalar union binds by the value's JSON type, an object
union by its tag member, each then by the arm's own leaf or frame.  Scalars, enums, literals
and containers whose types nest at most ``_INLINE`` containers are leaves, bound by direct
calls.  Deeper and recursive types bind in generator frames that one driver loop keeps on an
explicit stack, so the Python stack never grows with the input.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from decimal import Decimal
from functools import partial
from typing import Any, Final, TypeAlias

from mcpkit.errors import ArgumentsFailure, ArgumentsInvalid
from mcpkit.json import JsonArray, JsonObject
from mcpkit.limits import Limits
from mcpkit.schema import _typeinfo as ti
from mcpkit.schema._bind_leaves import (
    NODES,
    SCALAR_LEAVES,
    Budget,
    Leaf,
    enum_leaf,
    integer_leaf,
    literal_leaf,
    nullable_leaf,
    refuse,
)
from mcpkit.schema._formats import FORMAT_LEAVES

__all__ = ["Binder", "bind"]

F = ArgumentsFailure
_INLINE: Final = 8  # containers one leaf may nest: bounds Python recursion by the type, not input
_END: Final = object()
_OBJECTS: Final = frozenset({JsonObject, dict})
_ARRAYS: Final = frozenset({JsonArray, list, tuple})
_LISTS: Final = (list, tuple)
# An absent property: refused, left out (a dataclass default or a missing TypedDict key
# applies), or filled with the plan's default (None for ``T | None``, a parameter's default).
_REQUIRED, _OMIT, _FILL = 0, 1, 2

Request: TypeAlias = "tuple[_Container | None, Any]"  # (None, result) closes a frame
Frame: TypeAlias = Generator["Request", object, None]
Opener: TypeAlias = Callable[[Any, Budget, int], Frame]  # (value, budget, members' depth)
Field: TypeAlias = "tuple[str, str, Leaf | None, _Container | None, int, object]"
# A type expression is a chain of wrappers around one terminal type (see _chain).
_Wrapper: TypeAlias = "ti.NullableInfo | ti.ArrayInfo | ti.MapInfo"
_Terminal: TypeAlias = (
    "ti.ScalarInfo | ti.LiteralInfo | ti.RefInfo | ti.ScalarUnionInfo | ti.ObjectUnionInfo"
)
_TERMINALS: Final = (
    ti.ScalarInfo, ti.LiteralInfo, ti.RefInfo, ti.ScalarUnionInfo, ti.ObjectUnionInfo
)  # fmt: skip
_JSON_KINDS: Final = {"string": str, "boolean": bool, "integer": int, "number": int}


def bind(model: ti.TypeModel, value: object, limits: Limits) -> object:
    """Bind a JSON value to ``model``'s type, or raise :class:`ArgumentsInvalid`.

    Compiles a :class:`Binder` on every call; keep the ``Binder`` to bind many values.
    """
    return Binder(model, limits)(value)


class Binder:
    """A ``TypeModel`` compiled for binding under ``limits``; immutable and shared by calls."""

    __slots__ = ("_max_chars", "_max_depth", "_max_nodes", "_root")

    def __init__(self, model: ti.TypeModel, limits: Limits) -> None:
        self._max_nodes = limits.max_json_nodes
        self._max_depth = limits.max_json_depth
        self._max_chars = limits.max_binding_integer_chars
        self._root = _Compiler(model, limits).compile()

    def __call__(self, value: Any) -> object:
        """Bind ``value``, or raise :class:`ArgumentsInvalid`."""
        budget = [self._max_nodes - 1, self._max_chars]  # the root value is one node
        node = self._root
        if not isinstance(node, _Container):
            return node(value, budget, 0)
        if value is None and node.nullable:
            return None
        max_depth = self._max_depth
        stack: list[Frame] = []
        while True:  # open a frame for ``value``, then resume frames until one asks for another
            depth = _open(value, node.exact, node.base, budget, len(stack), max_depth)
            stack.append(node.open(value, budget, depth))
            result: object = None
            while True:
                request, value = stack[-1].send(result)
                if request is None:
                    stack.pop()
                    if not stack:
                        return value
                    result = value
                elif value is None and request.nullable:
                    result = None
                else:
                    node = request
                    break


class _Plan:
    """How to bind one object type; shared by every use of it, so recursion costs nothing."""

    __slots__ = ("fields", "target")

    def __init__(self, target: Callable[..., object] | None) -> None:
        self.target = target  # a dataclass to construct; None returns the members dict
        self.fields: tuple[Field, ...] = ()


class _Container:
    """An array, map or object type too deep (or recursive) to be a leaf: bound in a frame."""

    __slots__ = ("base", "exact", "nullable", "open")

    def __init__(self, opener: Opener, is_array: bool, nullable: bool = False) -> None:
        self.open = opener  # a frame function with the type's parameters bound in
        self.exact = _ARRAYS if is_array else _OBJECTS
        self.base: type | tuple[type, ...] = _LISTS if is_array else dict
        self.nullable = nullable

    def nullable_copy(self) -> _Container:
        return _Container(self.open, self.exact is _ARRAYS, nullable=True)


def _split(child: Leaf | _Container) -> tuple[Leaf | None, _Container | None]:
    """A member type as (leaf, None), bound inline, or (None, container), bound in a frame."""
    return (None, child) if isinstance(child, _Container) else (child, None)


def _open(
    value: Any,
    exact: frozenset[type],
    base: type | tuple[type, ...],
    budget: Budget,
    depth: int,
    max_depth: int,
) -> int:
    """What opening a container checks, in the driver's order; returns its members' depth."""
    if type(value) not in exact and not isinstance(value, base):
        refuse(F.TYPE)
    if depth >= max_depth:
        refuse(F.DEPTH)
    budget[NODES] -= len(value)
    if budget[NODES] < 0:
        refuse(F.NODES)
    return depth + 1


def _absent(out: dict[str, object], attr: str, absent: int, default: object) -> None:
    if absent == _REQUIRED:
        refuse(F.MISSING_PROPERTY)
    if absent == _FILL:
        out[attr] = default


# --- frames: generators that yield (container, value) for members that need a frame -----------


def _object_frame(plan: _Plan, source: Any, budget: Budget, depth: int) -> Frame:
    get = source.get
    out: dict[str, object] = {}
    matched = 0
    for name, attr, leaf, nested, absent, default in plan.fields:
        value = get(name, _END)
        if value is _END:
            _absent(out, attr, absent, default)
            continue
        matched += 1
        out[attr] = leaf(value, budget, depth) if leaf is not None else (yield nested, value)
    if matched != len(source):
        refuse(F.UNKNOWN_PROPERTY)
    result: object = out
    if plan.target is not None:
        try:
            result = plan.target(**out)
        except Exception as exc:  # __post_init__ checks are the application's validation
            raise ArgumentsInvalid(F.CONSTRUCTOR) from exc
    yield None, result


def _array_frame(
    leaf: Leaf | None,
    nested: _Container | None,
    as_tuple: bool,
    source: Any,
    budget: Budget,
    depth: int,
) -> Frame:
    if leaf is not None:  # the items already nest _INLINE containers
        out = [leaf(item, budget, depth) for item in source]
    else:
        out = []
        for item in source:
            out.append((yield nested, item))
    yield None, tuple(out) if as_tuple else out


def _map_frame(
    leaf: Leaf | None, nested: _Container | None, source: Any, budget: Budget, depth: int
) -> Frame:
    out: dict[str, object] = {}
    for key, member in source.items():
        if type(key) is not str and not isinstance(key, str):
            refuse(F.MEMBER_NAME)
        out[key] = leaf(member, budget, depth) if leaf is not None else (yield nested, member)
    yield None, out


# --- inline containers: leaves that check what opening a frame checks ---------------------------


def _inline_object(plan: _Plan, max_depth: int) -> Leaf:
    def bind_object(value: Any, budget: Budget, depth: int) -> object:
        # ``_open``'s checks, in its order, inline: most arguments are one such object
        if type(value) not in _OBJECTS and not isinstance(value, dict):
            refuse(F.TYPE)
        if depth >= max_depth:
            refuse(F.DEPTH)
        budget[NODES] -= len(value)
        if budget[NODES] < 0:
            refuse(F.NODES)
        depth += 1
        get = value.get
        out: dict[str, object] = {}
        absent_fields = 0  # names are distinct: every other field matched one member
        for name, attr, leaf, _, absent, default in plan.fields:
            member = get(name, _END)
            if member is _END:
                _absent(out, attr, absent, default)
                absent_fields += 1
                continue
            out[attr] = leaf(member, budget, depth)  # type: ignore[misc]
        if len(plan.fields) - absent_fields != len(value):
            refuse(F.UNKNOWN_PROPERTY)
        if plan.target is None:
            return out
        try:
            return plan.target(**out)
        except Exception as exc:  # __post_init__ checks are the application's validation
            raise ArgumentsInvalid(F.CONSTRUCTOR) from exc

    return bind_object


def _inline_array(item: Leaf, as_tuple: bool, max_depth: int) -> Leaf:
    def bind_array(value: Any, budget: Budget, depth: int) -> object:
        depth = _open(value, _ARRAYS, _LISTS, budget, depth, max_depth)
        out = [item(member, budget, depth) for member in value]
        return tuple(out) if as_tuple else out

    return bind_array


def _inline_map(item: Leaf, max_depth: int) -> Leaf:
    def bind_map(value: Any, budget: Budget, depth: int) -> object:
        depth = _open(value, _OBJECTS, dict, budget, depth, max_depth)
        out: dict[str, object] = {}
        for key, member in value.items():
            if type(key) is not str and not isinstance(key, str):
                refuse(F.MEMBER_NAME)
            out[key] = item(member, budget, depth)
        return out

    return bind_map


# --- unions -----------------------------------------------------------------------------------


def _scalar_union(leaves: dict[type, Leaf]) -> Leaf:
    """Bind by the value's JSON type: the arms' types are distinct (integer and number are one
    kind here, as the analysis allows only one of them)."""
    booleans, strings, numbers = leaves.get(bool), leaves.get(str), leaves.get(int)

    def bind_scalar_union(value: Any, budget: Budget, depth: int) -> object:
        if value is True or value is False:
            leaf = booleans
        elif isinstance(value, str):
            leaf = strings
        elif isinstance(value, int | Decimal):
            leaf = numbers
        else:
            leaf = None
        if leaf is None:
            refuse(F.TYPE)
        return leaf(value, budget, depth)

    return bind_scalar_union


def _arm(value: Any, name: str, find: Callable[[object], int]) -> int:
    """The arm an object binds to, by its tag member."""
    tag = value.get(name, _END)
    if tag is _END:
        refuse(F.MISSING_PROPERTY)
    arm = find(tag)
    if arm < 0:
        refuse(F.LITERAL)
    return arm


def _tagged_leaf(name: str, find: Callable[[object], int], arms: list[Leaf]) -> Leaf:
    def bind_tagged(value: Any, budget: Budget, depth: int) -> object:
        if type(value) not in _OBJECTS and not isinstance(value, dict):
            refuse(F.TYPE)
        return arms[_arm(value, name, find)](value, budget, depth)  # the arm opens the object

    return bind_tagged


def _tagged_frame(
    name: str, find: Callable[[object], int], arms: list[Opener], source: Any, budget: Budget,
    depth: int,
) -> Frame:  # fmt: skip
    return arms[_arm(source, name, find)](source, budget, depth)  # the driver opened it


class _Compiler:
    """TypeModel to leaves and containers.  A type expression is a chain (one child per level),
    compiled by a loop; each named type is compiled once and used by reference."""

    def __init__(self, model: ti.TypeModel, limits: Limits) -> None:
        self.model = model
        self.max_depth = limits.max_json_depth
        self.max_chars = limits.max_integer_chars
        self.levels = self.named_levels()
        self.plans: dict[int, tuple[_Plan, ti.ObjectInfo]] = {}  # filled in by compile()
        self.named: list[Leaf | _Container] = []
        for index, (info, level) in enumerate(zip(model.named, self.levels, strict=True)):
            if isinstance(info, ti.EnumInfo):
                self.named.append(enum_leaf(info))
                continue
            target = {"dataclass": info.target, "model": info.build}.get(info.kind)
            plan = _Plan(target)
            self.plans[index] = (plan, info)
            if level is None:
                self.named.append(_Container(partial(_object_frame, plan), is_array=False))
            else:
                self.named.append(_inline_object(plan, self.max_depth))

    def compile(self) -> Leaf | _Container:
        for plan, info in self.plans.values():
            by_name = info.kind == "model"  # model_validate takes the published names
            plan.fields = tuple(self.field(field, by_name) for field in info.fields)
        return self.compile_type(self.model.root)[0]

    def named_levels(self) -> list[int | None]:
        """How many containers each named type nests (an enum none, an object at least one),
        or None past ``_INLINE``.  Pass ``n`` settles the types that nest ``n``, so recursive
        types, which never settle, stay None."""
        named = self.model.named
        levels: list[int | None] = [0 if isinstance(i, ti.EnumInfo) else None for i in named]
        for _ in range(_INLINE):
            for index, info in enumerate(named):
                if levels[index] is not None or isinstance(info, ti.EnumInfo):
                    continue
                deepest = 0
                for field in info.fields:
                    level = self.level(field.type, levels)
                    if level is None:
                        break
                    deepest = max(deepest, level)
                else:
                    levels[index] = deepest + 1 if deepest < _INLINE else None
        return levels

    @staticmethod
    def level(info: ti.TypeInfo, levels: list[int | None]) -> int | None:
        """Containers ``info`` nests, given the named types' levels (None: not known yet)."""
        wrappers, info = _chain(info)
        count = sum(not isinstance(wrapper, ti.NullableInfo) for wrapper in wrappers)
        arms = info.arms if isinstance(info, ti.ObjectUnionInfo) else (info,)
        inner = 0
        for arm in arms:
            if isinstance(arm, ti.RefInfo):
                found = levels[arm.index]
                if found is None:
                    return None
                inner = max(inner, found)
        return count + inner

    def field(self, info: ti.FieldInfo, by_name: bool = False) -> Field:
        node = self.compile_type(info.type)[0]
        if info.required:
            absent, default = _REQUIRED, None
        elif info.absent is ti.Absent.OMIT:
            absent, default = _OMIT, None
        else:
            absent, default = _FILL, info.default  # None for Absent.NONE
        return (info.name, info.name if by_name else info.attr, *_split(node), absent, default)

    def compile_type(self, info: ti.TypeInfo) -> tuple[Leaf | _Container, int | None]:
        """The compiled type, and how many containers it nests (None: it needs frames)."""
        wrappers, terminal = _chain(info)
        node, level = self.terminal(terminal)
        for wrapper in reversed(wrappers):
            if isinstance(wrapper, ti.NullableInfo):
                node = node.nullable_copy() if isinstance(node, _Container) else nullable_leaf(node)
                continue
            is_array = isinstance(wrapper, ti.ArrayInfo)
            as_tuple = isinstance(wrapper, ti.ArrayInfo) and wrapper.as_tuple
            if level is not None and level < _INLINE and not isinstance(node, _Container):
                level += 1
                if is_array:
                    node = _inline_array(node, as_tuple, self.max_depth)
                else:
                    node = _inline_map(node, self.max_depth)
            else:
                level = None
                if is_array:
                    node = _Container(partial(_array_frame, *_split(node), as_tuple), is_array)
                else:
                    node = _Container(partial(_map_frame, *_split(node)), is_array)
        return node, level

    def terminal(self, info: _Terminal) -> tuple[Leaf | _Container, int | None]:
        if isinstance(info, ti.RefInfo):
            return self.named[info.index], self.levels[info.index]
        if isinstance(info, ti.LiteralInfo):
            return literal_leaf(info.values), 0
        if isinstance(info, ti.ScalarUnionInfo):
            arms = {_JSON_KINDS[ti.JSON_TYPES[arm.kind]]: self.scalar(arm) for arm in info.arms}
            return _scalar_union(arms), 0
        if isinstance(info, ti.ObjectUnionInfo):
            return self.tagged(info)
        return self.scalar(info), 0

    def scalar(self, info: ti.ScalarInfo) -> Leaf:
        if info.kind == "int":
            width = info.width
            low, high = (None, None) if width is None else (width.minimum, width.maximum)
            return integer_leaf(low, high, self.max_chars)
        return SCALAR_LEAVES.get(info.kind) or FORMAT_LEAVES[info.kind]

    def tagged(self, info: ti.ObjectUnionInfo) -> tuple[Leaf | _Container, int | None]:
        tag = self.model.tags[info.tag]
        find = tag.arm_of()
        nodes = [self.named[arm.index] for arm in info.arms]
        leaves = [node for node in nodes if not isinstance(node, _Container)]
        if len(leaves) == len(nodes):
            levels = [self.levels[arm.index] or 0 for arm in info.arms]  # leaves: all known
            return _tagged_leaf(tag.name, find, leaves), max(levels)
        # An arm needs frames, so every arm binds in one (a leaf arm's plan works there too).
        openers: list[Opener] = [
            partial(_object_frame, self.plans[arm.index][0]) for arm in info.arms
        ]
        return _Container(partial(_tagged_frame, tag.name, find, openers), is_array=False), None


def _chain(info: ti.TypeInfo) -> tuple[list[_Wrapper], _Terminal]:
    """A type expression as its wrappers, outermost first, and the type they wrap."""
    wrappers: list[_Wrapper] = []
    while not isinstance(info, _TERMINALS):
        wrappers.append(info)
        if isinstance(info, ti.NullableInfo):
            info = info.inner
        else:
            info = info.item if isinstance(info, ti.ArrayInfo) else info.value
    return wrappers, info
