"""Python annotations to a frozen TypeInfo tree: the closed typed family.

Analysis runs once, at registration, and refuses everything outside the family with a
``SchemaError`` that names the type and where it was found (fail at construction).
Named types (frozen dataclasses, pydantic models, TypedDicts, enums) are analysed once each
from a work queue and referred to by index, so recursive types need no cyclic structure;
``_named`` reads their fields (and a handler's parameters), handing each annotation back to
``_Analyzer.field``.  Anonymous type expressions (``list[dict[str, int | None]]``) have one
child per level, so they are walked by a loop: no input drives Python recursion here; a union's
members are analysed as expressions of their own (a member is never itself a union, so that is
one level), and an object union's tag is chosen once every named type is read.  Nesting is
capped by ``max_schema_depth`` and the number of named types by ``max_schema_nodes``, the bounds
the compiled schema must meet anyway.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import typing
import uuid
from collections import deque
from collections.abc import Callable, Hashable
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Annotated, Any, Final, Literal, TypeVar

from mcpkit.errors import SchemaError
from mcpkit.limits import Limits
from mcpkit.schema import _typeinfo as ti
from mcpkit.schema._metadata import BOUNDS, LENGTHS, Constraints, arg_items, merge, translate
from mcpkit.schema._named import UNIONS, define, parameters_object
from mcpkit.schema._typeinfo import (
    JSON_TYPES,
    MAX_FLOAT,
    Absent,
    Arg,
    Width,
    check_text,
    is_typeddict,
)

__all__ = ["analyze_function", "analyze_type"]

_NONE: Final = type(None)
_SCALARS: Final[dict[type, Any]] = {
    str: "str", bool: "bool", int: "int", float: "float", Decimal: "decimal",
    datetime.datetime: "datetime", datetime.date: "date", uuid.UUID: "uuid",
}  # fmt: skip
_SCALAR_BASES: Final = str | int | float | Decimal | datetime.date | uuid.UUID


def _describe(tp: object) -> str:
    """``SearchArgs``, ``set[int]``, ``typing.Any``: how a developer spells the type."""
    if isinstance(tp, type) and typing.get_origin(tp) is None and tp.__module__ != "typing":
        return tp.__qualname__
    return repr(tp)


def _cycles(edges: list[set[int]]) -> set[int]:
    """Vertices on a cycle: Tarjan's strongly connected components, without recursion."""
    count = len(edges)
    order, low, on_stack = [-1] * count, [0] * count, [False] * count
    stack: list[int] = []
    found: set[int] = set()
    counter = 0
    for start in range(count):
        if order[start] != -1:
            continue
        order[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack[start] = True
        work = [(start, iter(sorted(edges[start])))]
        while work:
            vertex, successors = work[-1]
            nxt = next(successors, None)
            if nxt is not None:
                if order[nxt] == -1:
                    order[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack[nxt] = True
                    work.append((nxt, iter(sorted(edges[nxt]))))
                elif on_stack[nxt]:
                    low[vertex] = min(low[vertex], order[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[vertex])
            if low[vertex] == order[vertex]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack[member] = False
                    component.append(member)
                    if member == vertex:
                        break
                if len(component) > 1 or vertex in edges[vertex]:
                    found.update(component)
    return found


def analyze_type(tp: object, *, limits: Limits) -> ti.TypeModel:
    """Analyse a type annotation (a tool input or output type)."""
    analyzer = _Analyzer(limits)
    root, _, _ = analyzer.expression(tp, "the root type", prop=False)
    return analyzer.finish(root)


def analyze_function(
    fn: Callable[..., object], *, excluded: frozenset[object], limits: Limits
) -> ti.TypeModel:
    """Analyse a handler's parameters as the synthetic root object.

    A leading ``self``/``cls`` and parameters annotated with an ``excluded`` type (framework
    context markers) are not arguments.  ``Arg(name=...)`` renames; a default makes the
    property optional and is what binding passes when it is absent.
    """
    analyzer = _Analyzer(limits)
    analyzer.parameters(fn, excluded)
    return analyzer.finish(ti.RefInfo(index=0))


class _Analyzer:
    def __init__(self, limits: Limits) -> None:
        self.max_depth = limits.max_schema_depth
        self.max_named = limits.max_schema_nodes
        self.index: dict[Hashable, int] = {}
        self.named: list[ti.ObjectInfo | ti.EnumInfo | None] = []
        self.is_object: list[bool] = []
        self.refcounts: list[int] = []
        self.edges: list[set[int]] = []
        self.strong: list[set[int]] = []  # edges through required, non-null, direct fields
        self.queue: deque[tuple[int, Any]] = deque()
        self.owner = -1  # the named type whose fields are being analysed; -1 for the root
        self.unions: list[tuple[tuple[ti.RefInfo, ...], str, object]] = []  # object unions

    def fail(self, where: str, tp: object, problem: str = "is not supported") -> SchemaError:
        return SchemaError(f"{where}: {_describe(tp)} {problem}")

    def finish(self, root: ti.TypeInfo) -> ti.TypeModel:
        while self.queue:
            index, tp = self.queue.popleft()
            self.owner = index
            self.named[index] = define(tp, self.field)
        strong = _cycles(self.strong)
        if strong:
            name = self.named[min(strong)].label  # type: ignore[union-attr]
            raise SchemaError(
                f"{name} can only reach itself through required fields, so no value of it is "
                "finite; make one of those fields T | None, a list or a dict"
            )
        named = tuple(info for info in self.named if info is not None)
        tags = tuple(self.tag(named, *union) for union in self.unions)
        recursive = frozenset(_cycles(self.edges))
        return ti.TypeModel(root, named, tuple(self.refcounts), recursive, tags)

    def tag(
        self,
        named: tuple[ti.ObjectInfo | ti.EnumInfo, ...],
        arms: tuple[ti.RefInfo, ...],
        where: str,
        tp: object,
    ) -> ti.TagInfo:
        """The first field of the first arm that is a required ``Literal`` in every arm, with
        values no two arms share (JSON equality): the arm a value binds to is then certain."""
        tables: list[dict[str, ti.FieldInfo]] = []
        for arm in arms:
            info = named[arm.index]
            assert isinstance(info, ti.ObjectInfo)  # union() admits objects only
            tables.append({field.name: field for field in info.fields})
        for name in tables[0]:
            chosen = [table.get(name) for table in tables]
            fields = [f for f in chosen if f is not None and f.required]
            literals = [f.type for f in fields if isinstance(f.type, ti.LiteralInfo)]
            if len(literals) != len(arms):
                continue
            keys = [{(type(value) is bool, value) for value in info.values} for info in literals]
            if len(set().union(*keys)) == sum(map(len, keys)):
                attrs = tuple(field.attr for field in fields)
                return ti.TagInfo(name, attrs, tuple(info.values for info in literals))
        raise self.fail(
            where,
            tp,
            "is not supported: a union of objects needs a Literal field, required in every "
            "member, whose values tell them apart",
        )

    def register(self, key: Hashable, is_object: bool, tp: object) -> int:
        if len(self.named) >= self.max_named:
            raise SchemaError(f"the type reaches more than {self.max_named} named types")
        index = self.index[key] = len(self.named)
        self.named.append(None)
        self.is_object.append(is_object)
        self.refcounts.append(0)
        self.edges.append(set())
        self.strong.append(set())
        if tp is not None:
            self.queue.append((index, tp))
        return index

    def expression(
        self, tp: Any, where: str, *, prop: bool
    ) -> tuple[ti.TypeInfo, Arg | None, bool]:
        """Analyse one annotation: (info, the property-level Arg, optional-property flag)."""
        levels: list[tuple[str, Constraints]] = []  # wrappers, outermost first
        arg: Arg | None = None
        found: Constraints = {}  # this level's constraints and documentation
        width: Width | None = None
        prop_arg: Arg | None = None
        optional = False
        while True:
            if len(levels) >= self.max_depth:
                raise SchemaError(f"{where}: the type nests deeper than {self.max_depth} levels")
            while typing.get_origin(tp) is Annotated:
                tp, *metadata = typing.get_args(tp)
                for item in metadata:
                    if isinstance(item, Arg) and arg is None:
                        arg = item
                        merge(found, arg_items(item), where)
                    elif isinstance(item, Width) and width is None:
                        width = item
                    elif item is not None:  # conint() and friends leave None placeholders
                        merge(found, translate(item, where), where)
            origin = typing.get_origin(tp)
            if origin in UNIONS:
                arms = typing.get_args(tp)
                rest = tuple(a for a in arms if a is not _NONE)
                if len(rest) < len(arms):
                    if prop and not levels:
                        optional = True  # an optional property, not a nullable value
                    else:
                        levels.append(("nullable", {}))
                if len(rest) == 1:
                    tp = rest[0]
                    continue
            if arg is not None and (arg.name is not None or arg.header is not None):
                if not (prop and not levels):
                    raise SchemaError(f"{where}: Arg name and header belong on a field itself")
                prop_arg = arg
            if origin in UNIONS:
                if width is not None:
                    raise self.fail(where, tp, "cannot take a Width; it applies to int")
                info = self.union(tp, rest, found, where)
                return self.wrap(info, levels), prop_arg, optional
            if origin not in (list, tuple, dict):
                return self.wrap(self.leaf(tp, found, width, where), levels), prop_arg, optional
            args = typing.get_args(tp)
            if origin is tuple and (len(args) != 2 or args[1] is not Ellipsis):
                raise self.fail(where, tp, "is not supported: use tuple[T, ...]")
            if origin is dict and args and args[0] is not str:
                raise self.fail(where, tp, "is not supported: object keys are str")
            if len(args) != (1 if origin is list else 2):
                raise self.fail(where, tp, "is not supported: give its type arguments")
            if width is not None or any(key in found for key in BOUNDS):
                raise SchemaError(f"{where}: Width and Arg bounds apply to numbers only")
            if any(key in found for key in LENGTHS):
                raise SchemaError(
                    f"{where}: min_length, max_length and pattern apply to str only "
                    "(Profile 1 has no minItems or maxItems)"
                )
            levels.append(({list: "array", tuple: "tuple", dict: "map"}[origin], found))
            arg, found, width, tp = None, {}, None, args[-1] if origin is dict else args[0]

    def union(self, tp: Any, arms: tuple[Any, ...], found: Constraints, where: str) -> ti.TypeInfo:
        """Two or more members: scalars of distinct JSON types, or tagged objects."""
        if any(key not in ("title", "description") for key in found):
            raise SchemaError(
                f"{where}: constraints on a union belong on its members, as in "
                "Annotated[str, Arg(max_length=8)] | int"
            )
        infos: list[ti.TypeInfo] = []
        for arm in arms:
            inner = arm
            while typing.get_origin(inner) is Annotated:
                inner = typing.get_args(inner)[0]
            if typing.get_origin(inner) in UNIONS:
                raise self.fail(where, tp, "is not supported: write the union flat")
            infos.append(self.expression(arm, where, prop=False)[0])
        scalars = [info for info in infos if isinstance(info, ti.ScalarInfo)]
        if len(scalars) == len(infos):
            seen: dict[str, object] = {}
            for arm, info in zip(arms, scalars, strict=True):
                if info.title is not None or info.description is not None:
                    raise SchemaError(f"{where}: title and description belong on the union")
                family = JSON_TYPES[info.kind].replace("integer", "number")
                if family in seen:
                    advice = " (an integral number is either): use one" * (family == "number")
                    raise self.fail(
                        where,
                        tp,
                        f"is not supported: {_describe(seen[family])} and {_describe(arm)} "
                        f"are both JSON {family}s{advice}",
                    )
                seen[family] = arm
            return ti.ScalarUnionInfo(arms=tuple(scalars), **_doc(found))
        refs = tuple(info for info in infos if isinstance(info, ti.RefInfo))
        if len(refs) == len(infos) and all(self.is_object[ref.index] for ref in refs):
            self.unions.append((refs, where, tp))
            return ti.ObjectUnionInfo(arms=refs, tag=len(self.unions) - 1, **_doc(found))
        raise self.fail(
            where,
            tp,
            "is not supported: a union's members are scalars of distinct JSON types, or "
            "objects told apart by a Literal field",
        )

    def wrap(self, info: ti.TypeInfo, levels: list[tuple[str, Constraints]]) -> ti.TypeInfo:
        for kind, found in reversed(levels):
            doc = _doc(found)
            if kind == "nullable":
                info = ti.NullableInfo(inner=info)
            elif kind == "map":
                info = ti.MapInfo(value=info, **doc)
            else:
                info = ti.ArrayInfo(item=info, as_tuple=kind == "tuple", **doc)
        return info

    def leaf(self, tp: Any, found: Constraints, width: Width | None, where: str) -> ti.TypeInfo:
        doc = _doc(found)
        kind = _SCALARS.get(tp) if isinstance(tp, type) else None
        if width is not None and kind != "int":
            raise self.fail(where, tp, "cannot take a Width; it applies to int")
        if any(key in found for key in BOUNDS) and kind not in ("int", "float", "decimal"):
            raise self.fail(where, tp, "cannot take Arg minimum/maximum; they apply to numbers")
        if any(key in found for key in LENGTHS) and kind != "str":
            raise self.fail(
                where, tp, "cannot take min_length, max_length or pattern; they apply to str"
            )
        if kind is not None:
            low, high = _bounds(kind, found, where)
            if width is not None or kind == "float":
                floor, ceiling = (
                    (width.minimum, width.maximum) if width else (-MAX_FLOAT, MAX_FLOAT)
                )
                if (low is not None and low < floor) or (high is not None and high > ceiling):
                    raise SchemaError(f"{where}: Arg bounds exceed the range of {_describe(tp)}")
                low, high = floor if low is None else low, ceiling if high is None else high
            shortest, longest = found.get("min_length"), found.get("max_length")
            if shortest is not None and longest is not None and shortest > longest:
                raise SchemaError(f"{where}: min_length must not exceed max_length")
            return ti.ScalarInfo(
                kind=kind,
                minimum=low,
                maximum=high,
                width=width,
                min_length=shortest,
                max_length=longest,
                pattern=found.get("pattern"),
                **doc,
            )
        if typing.get_origin(tp) is Literal:
            values = typing.get_args(tp)
            if not all(type(value) in (str, int, bool) for value in values):
                raise self.fail(where, tp, "is not supported: Literal members are str, int, bool")
            for value in values:
                if isinstance(value, str):
                    check_text(f"{where}: a Literal member", value)
            return ti.LiteralInfo(values=values, **doc)
        return ti.RefInfo(index=self.reference(tp, where), **doc)

    def reference(self, tp: Any, where: str) -> int:
        """Index of a named type (registering it on first use), or refuse ``tp``."""
        origin = typing.get_origin(tp)
        cls = tp if origin is None else origin
        if isinstance(tp, TypeVar):
            raise self.fail(where, tp, "is an unresolved type variable")
        if tp is Any or tp is object:
            raise self.fail(where, tp)
        if not isinstance(cls, type):
            raise self.fail(where, tp)
        is_enum = issubclass(cls, enum.Enum)
        if is_enum:
            if issubclass(cls, enum.Flag):
                raise self.fail(where, tp, "is not supported: enum.Flag values combine")
        elif is_typeddict(cls):
            pass
        elif dataclasses.is_dataclass(cls):
            if not cls.__dataclass_params__.frozen:  # type: ignore[attr-defined]
                raise self.fail(where, tp, "is not supported: dataclasses must be frozen")
        elif cls in (list, dict, tuple):
            raise self.fail(where, tp, "is not supported: give its type arguments")
        elif issubclass(cls, set | frozenset):
            raise self.fail(where, tp, "is not supported: use list[T]")
        elif ti.is_model(cls):
            pass  # read by _pydantic, which refuses what a model cannot publish exactly
        elif issubclass(cls, _SCALAR_BASES):
            raise self.fail(where, tp, "is not supported: only enums may subclass a scalar")
        else:
            raise self.fail(where, tp, "is not supported: use a frozen dataclass or TypedDict")
        params = cls.__dict__.get("__parameters__", ())
        if origin is None and params:
            raise self.fail(where, tp, "is generic: give its type arguments")
        if not all(isinstance(param, TypeVar) for param in params):
            raise self.fail(where, tp, "is not supported: only TypeVar parameters are")
        try:
            index = self.index.get(tp)
        except TypeError:
            raise self.fail(where, tp, "has unhashable type arguments") from None
        if index is None:
            index = self.register(tp, not is_enum, tp)
        self.refcounts[index] += 1
        if self.owner >= 0:
            self.edges[self.owner].add(index)
        return index

    def parameters(self, fn: Callable[..., object], excluded: frozenset[object]) -> None:
        self.register(("parameters", id(fn)), True, None)
        self.owner = 0
        self.named[0] = parameters_object(fn, excluded, self.field)

    def field(
        self, attr: str, hint: Any, where: str, must: bool, absent: Absent | None
    ) -> ti.FieldInfo:
        """One property; ``must`` is False for a TypedDict NotRequired key, ``absent`` set when
        the field has a default."""
        info, arg, optional = self.expression(hint, where, prop=True)
        required = must and not optional and absent is None
        if absent is None:
            absent = Absent.NONE if optional and must else Absent.OMIT
        if required and isinstance(info, ti.RefInfo) and self.is_object[info.index]:
            self.strong[self.owner].add(info.index)
        name = attr if arg is None or arg.name is None else arg.name
        header = None if arg is None else arg.header
        return ti.FieldInfo(attr, name, info, required, absent, None, header, optional)


def _bounds(
    kind: str, found: Constraints, where: str
) -> tuple[int | Decimal | None, int | Decimal | None]:
    """``minimum``/``maximum`` with exclusive bounds folded in: an ``int`` above ``gt`` is at
    least the next integer; Profile 1 has no exclusive bounds for other numbers."""
    low, high = found.get("minimum"), found.get("maximum")
    above, below = found.get("exclusive_minimum"), found.get("exclusive_maximum")
    if (above is not None or below is not None) and kind != "int":
        raise SchemaError(
            f"{where}: gt and lt (exclusive bounds) apply to int only; Profile 1 has no "
            "exclusiveMinimum or exclusiveMaximum, so use ge and le"
        )
    if above is not None:
        after = int(Decimal(above).to_integral_value(ROUND_FLOOR)) + 1
        low = after if low is None else max(low, after)
    if below is not None:
        before = int(Decimal(below).to_integral_value(ROUND_CEILING)) - 1
        high = before if high is None else min(high, before)
    if low is not None and high is not None and low > high:
        raise SchemaError(f"{where}: the bounds leave no value")
    return low, high


def _doc(found: Constraints) -> dict[str, str | None]:
    return {"title": found.get("title"), "description": found.get("description")}
