"""Python annotations to a frozen TypeInfo tree: the closed typed family.

Analysis runs once, at registration, and refuses everything outside the family with a
``SchemaError`` that names the type and where it was found (fail at construction).
Named types (frozen dataclasses, TypedDicts, enums) are analysed once each from a work queue and
referred to by index, so recursive types need no cyclic structure; ``_named`` reads their fields
(and a handler's parameters), handing each annotation back to ``_Analyzer.field``.  Anonymous
type expressions (``list[dict[str, int | None]]``) have one child per level, so they are walked
by a loop: no input drives Python recursion here.  Nesting is capped by ``max_schema_depth``
and the number of named types by ``max_schema_nodes``, the bounds the compiled schema must meet
anyway.
"""

from __future__ import annotations

import dataclasses
import enum
import typing
from collections import deque
from collections.abc import Callable, Hashable
from decimal import Decimal
from typing import Annotated, Any, Final, Literal, TypeVar

from mcpkit.errors import SchemaError
from mcpkit.limits import Limits
from mcpkit.schema import _typeinfo as ti
from mcpkit.schema._named import UNIONS, define, parameters_object
from mcpkit.schema._typeinfo import MAX_FLOAT, Absent, Arg, Width, check_text

__all__ = ["analyze_function", "analyze_type"]

_NONE: Final = type(None)
_SCALARS: Final[dict[type, Any]] = {
    str: "str", bool: "bool", int: "int", float: "float", Decimal: "decimal"
}  # fmt: skip


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
        return ti.TypeModel(root, named, tuple(self.refcounts), frozenset(_cycles(self.edges)))

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
        levels: list[tuple[str, Arg | None]] = []  # wrappers, outermost first
        arg: Arg | None = None
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
                    elif isinstance(item, Width) and width is None:
                        width = item
                    else:
                        raise SchemaError(
                            f"{where}: Annotated metadata {item!r} is not supported "
                            "(one Arg and one Width at most)"
                        )
            origin = typing.get_origin(tp)
            if origin in UNIONS:
                arms = typing.get_args(tp)
                rest = [a for a in arms if a is not _NONE]
                if len(rest) != 1 or len(rest) == len(arms):
                    raise self.fail(where, tp, "is not supported: the only union is T | None")
                if prop and not levels:
                    optional = True  # an optional property, not a nullable value
                else:
                    levels.append(("nullable", None))
                tp = rest[0]
                continue
            if arg is not None and (arg.name is not None or arg.header is not None):
                if not (prop and not levels):
                    raise SchemaError(f"{where}: Arg name and header belong on a field itself")
                prop_arg = arg
            if origin not in (list, tuple, dict):
                return self.wrap(self.leaf(tp, arg, width, where), levels), prop_arg, optional
            args = typing.get_args(tp)
            if origin is tuple and (len(args) != 2 or args[1] is not Ellipsis):
                raise self.fail(where, tp, "is not supported: use tuple[T, ...]")
            if origin is dict and args and args[0] is not str:
                raise self.fail(where, tp, "is not supported: object keys are str")
            if len(args) != (1 if origin is list else 2):
                raise self.fail(where, tp, "is not supported: give its type arguments")
            if width is not None or (arg is not None and _has_bounds(arg)):
                raise SchemaError(f"{where}: Width and Arg bounds apply to numbers only")
            levels.append(({list: "array", tuple: "tuple", dict: "map"}[origin], arg))
            arg, width, tp = None, None, args[-1] if origin is dict else args[0]

    def wrap(self, info: ti.TypeInfo, levels: list[tuple[str, Arg | None]]) -> ti.TypeInfo:
        for kind, arg in reversed(levels):
            doc = _doc(arg)
            if kind == "nullable":
                info = ti.NullableInfo(inner=info)
            elif kind == "map":
                info = ti.MapInfo(value=info, **doc)
            else:
                info = ti.ArrayInfo(item=info, as_tuple=kind == "tuple", **doc)
        return info

    def leaf(self, tp: Any, arg: Arg | None, width: Width | None, where: str) -> ti.TypeInfo:
        doc = _doc(arg)
        kind = _SCALARS.get(tp) if isinstance(tp, type) else None
        low, high = (None, None) if arg is None else (arg.minimum, arg.maximum)
        if width is not None and kind != "int":
            raise self.fail(where, tp, "cannot take a Width; it applies to int")
        if (low is not None or high is not None) and kind not in ("int", "float", "decimal"):
            raise self.fail(where, tp, "cannot take Arg minimum/maximum; they apply to numbers")
        if kind is not None:
            if width is not None or kind == "float":
                floor, ceiling = (
                    (width.minimum, width.maximum) if width else (-MAX_FLOAT, MAX_FLOAT)
                )
                if (low is not None and low < floor) or (high is not None and high > ceiling):
                    raise SchemaError(f"{where}: Arg bounds exceed the range of {_describe(tp)}")
                low, high = floor if low is None else low, ceiling if high is None else high
            return ti.ScalarInfo(kind=kind, minimum=low, maximum=high, width=width, **doc)
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
        elif typing.is_typeddict(cls):
            pass
        elif dataclasses.is_dataclass(cls):
            if not cls.__dataclass_params__.frozen:  # type: ignore[attr-defined]
                raise self.fail(where, tp, "is not supported: dataclasses must be frozen")
        elif cls in (list, dict, tuple):
            raise self.fail(where, tp, "is not supported: give its type arguments")
        elif issubclass(cls, set | frozenset):
            raise self.fail(where, tp, "is not supported: use list[T]")
        elif issubclass(cls, str | int | float | Decimal):
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


def _has_bounds(arg: Arg) -> bool:
    return arg.minimum is not None or arg.maximum is not None


def _doc(arg: Arg | None) -> dict[str, str | None]:
    return {} if arg is None else {"title": arg.title, "description": arg.description}
