"""Python annotations to a frozen TypeInfo tree: the closed typed family (DESIGN.md §5, TD-01/10).

Analysis runs once, at registration, and refuses everything outside the family with a
``SchemaError`` that names the type and where it was found (P1-03: fail at construction).
Named types (frozen dataclasses, TypedDicts, enums) are analysed once each from a work queue and
referred to by index, so recursive types need no cyclic structure.  Anonymous type expressions
(``list[dict[str, int | None]]``) have one child per level, so they are walked by a loop: no
input drives Python recursion here.  Nesting is capped by ``max_schema_depth`` and the number of
named types by ``max_schema_nodes``, the bounds the compiled schema must meet anyway.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import re
import types
import typing
from collections import deque
from collections.abc import Callable, Hashable, Mapping
from decimal import Decimal
from typing import Annotated, Any, Final, Literal, TypeVar, Union

from mcpkit.errors import SchemaError
from mcpkit.limits import Limits
from mcpkit.schema._typeinfo import (
    MAX_FLOAT,
    Absent,
    Arg,
    ArrayInfo,
    EnumInfo,
    FieldInfo,
    LiteralInfo,
    MapInfo,
    NullableInfo,
    ObjectInfo,
    RefInfo,
    ScalarInfo,
    TypeInfo,
    TypeModel,
    Width,
    check_text,
)

__all__ = ["analyze_function", "analyze_type"]

_NONE: Final = type(None)
_SCALARS: Final[dict[type, Any]] = {
    str: "str", bool: "bool", int: "int", float: "float", Decimal: "decimal"
}  # fmt: skip
_UNIONS: Final = (Union, types.UnionType)


def _describe(tp: object) -> str:
    """``SearchArgs``, ``set[int]``, ``typing.Any``: how a developer spells the type."""
    if isinstance(tp, type) and typing.get_origin(tp) is None and tp.__module__ != "typing":
        return tp.__qualname__
    return repr(tp)


def _label(tp: object, depth: int = 0) -> str:
    """A stable ``$defs`` base name: the qualified name, plus type arguments for generics."""
    origin = typing.get_origin(tp)
    if origin is Annotated:
        return _label(typing.get_args(tp)[0], depth)
    if origin is not None:
        base = "Union" if origin in _UNIONS else _label(origin, depth)
        if depth >= 4:
            return base
        args = [arg for arg in typing.get_args(tp) if arg is not Ellipsis]
        return "-".join([base, *(_label(arg, depth + 1) for arg in args)])
    if tp is _NONE:
        return "None"
    name = getattr(tp, "__qualname__", None) or type(tp).__name__
    name = ".".join(part for part in name.split(".") if part != "<locals>")
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def _hints(obj: object, label: str) -> dict[str, Any]:
    try:
        return typing.get_type_hints(obj, include_extras=True)
    except Exception as exc:  # NameError, TypeError, SyntaxError from string annotations
        raise SchemaError(f"cannot resolve the annotations of {label}: {exc}") from exc


def _substitute(hint: Any, env: Mapping[object, Any]) -> Any:
    """Replace type variables by a generic instantiation's arguments."""
    if not env:
        return hint
    if isinstance(hint, TypeVar):
        return env.get(hint, hint)
    params = getattr(hint, "__parameters__", ())
    if typing.get_origin(hint) is None or not params:
        return hint
    return hint[tuple(env.get(p, p) for p in params)]


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


def analyze_type(tp: object, *, limits: Limits) -> TypeModel:
    """Analyse a type annotation (a tool input or output type)."""
    analyzer = _Analyzer(limits)
    root, _, _ = analyzer.expression(tp, "the root type", prop=False)
    return analyzer.finish(root)


def analyze_function(
    fn: Callable[..., object], *, excluded: frozenset[object], limits: Limits
) -> TypeModel:
    """Analyse a handler's parameters as the synthetic root object (TD-08).

    A leading ``self``/``cls`` and parameters annotated with an ``excluded`` type (framework
    context markers) are not arguments.  ``Arg(name=...)`` renames; a default makes the
    property optional and is what binding passes when it is absent.
    """
    analyzer = _Analyzer(limits)
    analyzer.parameters(fn, excluded)
    return analyzer.finish(RefInfo(index=0))


class _Analyzer:
    def __init__(self, limits: Limits) -> None:
        self.max_depth = limits.max_schema_depth
        self.max_named = limits.max_schema_nodes
        self.index: dict[Hashable, int] = {}
        self.named: list[ObjectInfo | EnumInfo | None] = []
        self.is_object: list[bool] = []
        self.refcounts: list[int] = []
        self.edges: list[set[int]] = []
        self.strong: list[set[int]] = []  # edges through required, non-null, direct fields
        self.queue: deque[tuple[int, Any]] = deque()
        self.owner = -1  # the named type whose fields are being analysed; -1 for the root

    def fail(self, where: str, tp: object, problem: str = "is not supported") -> SchemaError:
        return SchemaError(f"{where}: {_describe(tp)} {problem}")

    def finish(self, root: TypeInfo) -> TypeModel:
        while self.queue:
            index, tp = self.queue.popleft()
            self.owner = index
            self.named[index] = self.define(tp)
        strong = _cycles(self.strong)
        if strong:
            label = self.named[min(strong)].label  # type: ignore[union-attr]
            raise SchemaError(
                f"{label} can only reach itself through required fields, so no value of it is "
                "finite; make one of those fields T | None, a list or a dict"
            )
        named = tuple(info for info in self.named if info is not None)
        return TypeModel(root, named, tuple(self.refcounts), frozenset(_cycles(self.edges)))

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

    def expression(self, tp: Any, where: str, *, prop: bool) -> tuple[TypeInfo, Arg | None, bool]:
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
            if origin in _UNIONS:
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

    def wrap(self, info: TypeInfo, levels: list[tuple[str, Arg | None]]) -> TypeInfo:
        for kind, arg in reversed(levels):
            doc = _doc(arg)
            if kind == "nullable":
                info = NullableInfo(inner=info)
            elif kind == "map":
                info = MapInfo(value=info, **doc)
            else:
                info = ArrayInfo(item=info, as_tuple=kind == "tuple", **doc)
        return info

    def leaf(self, tp: Any, arg: Arg | None, width: Width | None, where: str) -> TypeInfo:
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
            return ScalarInfo(kind=kind, minimum=low, maximum=high, width=width, **doc)
        if typing.get_origin(tp) is Literal:
            values = typing.get_args(tp)
            if not all(type(value) in (str, int, bool) for value in values):
                raise self.fail(where, tp, "is not supported: Literal members are str, int, bool")
            for value in values:
                if isinstance(value, str):
                    check_text(f"{where}: a Literal member", value)
            return LiteralInfo(values=values, **doc)
        return RefInfo(index=self.reference(tp, where), **doc)

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

    def define(self, tp: Any) -> ObjectInfo | EnumInfo:
        origin = typing.get_origin(tp)
        cls = tp if origin is None else origin
        label = _label(tp)
        if issubclass(cls, enum.Enum):
            return _enum(cls, label)
        env = dict(zip(cls.__parameters__, typing.get_args(tp), strict=True)) if origin else {}
        hints = _hints(cls, label)
        fields: list[FieldInfo] = []
        if typing.is_typeddict(cls):
            required_keys = cls.__required_keys__
            for key, hint in hints.items():
                check_text(f"key {key!r} of {label}", key)
                # From the wrapper, not only __required_keys__: Python 3.11 misses wrappers
                # spelled as strings (``from __future__ import annotations``).
                must = key in required_keys
                if typing.get_origin(hint) in (typing.Required, typing.NotRequired):
                    must = typing.get_origin(hint) is typing.Required
                    hint = typing.get_args(hint)[0]
                where = f"key {key!r} of {label}"
                fields.append(self.field(key, _substitute(hint, env), where, must, None))
            return ObjectInfo(label, "typeddict", cls, self.named_fields(fields, label))
        declared = {f.name: f for f in dataclasses.fields(cls)}
        for name in cls.__dataclass_fields__:
            if name not in declared and isinstance(hints.get(name), dataclasses.InitVar):
                raise SchemaError(f"field {name!r} of {label}: InitVar is not supported")
        for name, f in declared.items():
            where = f"field {name!r} of {label}"
            if not f.init:
                raise SchemaError(f"{where}: init=False fields are not supported")
            has_default = f.default is not dataclasses.MISSING or (
                f.default_factory is not dataclasses.MISSING
            )
            default = Absent.OMIT if has_default else None
            hint = _substitute(hints[name], env)
            fields.append(self.field(name, hint, where, True, default))
        return ObjectInfo(label, "dataclass", cls, self.named_fields(fields, label))

    def parameters(self, fn: Callable[..., object], excluded: frozenset[object]) -> None:
        label = _label(fn)
        self.register(("parameters", id(fn)), True, None)
        self.owner = 0
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError) as exc:
            raise SchemaError(f"cannot read the parameters of {label}: {exc}") from exc
        hints = _hints(inspect.unwrap(getattr(fn, "__func__", fn)), label)
        params = list(signature.parameters.values())
        if params and params[0].name in ("self", "cls"):
            params = params[1:]
        fields: list[FieldInfo] = []
        for param in params:
            where = f"parameter {param.name!r} of {label}"
            if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
                raise SchemaError(f"{where}: only named parameters can be tool arguments")
            if param.name not in hints:
                raise SchemaError(f"{where}: a type annotation is required")
            hint = hints[param.name]
            if _is_excluded(hint, excluded):
                continue
            field = self.field(param.name, hint, where, True, None)
            if param.default is not param.empty:
                field = dataclasses.replace(
                    field, required=False, absent=Absent.DEFAULT, default=param.default
                )
            fields.append(field)
        self.named[0] = ObjectInfo(label, "parameters", fn, self.named_fields(fields, label))

    def field(
        self, attr: str, hint: Any, where: str, must: bool, absent: Absent | None
    ) -> FieldInfo:
        """One property; ``must`` is False for a TypedDict NotRequired key, ``absent`` set when
        the field has a default."""
        info, arg, optional = self.expression(hint, where, prop=True)
        required = must and not optional and absent is None
        if absent is None:
            absent = Absent.NONE if optional and must else Absent.OMIT
        if required and isinstance(info, RefInfo) and self.is_object[info.index]:
            self.strong[self.owner].add(info.index)
        name = attr if arg is None or arg.name is None else arg.name
        header = None if arg is None else arg.header
        return FieldInfo(attr, name, info, required, absent, None, header, optional)

    @staticmethod
    def named_fields(fields: list[FieldInfo], label: str) -> tuple[FieldInfo, ...]:
        seen: set[str] = set()
        for f in fields:
            if f.name in seen:
                raise SchemaError(f"{label}: the property name {f.name!r} is used twice")
            seen.add(f.name)
        return tuple(fields)


def _has_bounds(arg: Arg) -> bool:
    return arg.minimum is not None or arg.maximum is not None


def _doc(arg: Arg | None) -> dict[str, str | None]:
    return {} if arg is None else {"title": arg.title, "description": arg.description}


def _is_excluded(hint: object, excluded: frozenset[object]) -> bool:
    try:
        return hint in excluded or typing.get_origin(hint) in excluded
    except TypeError:  # unhashable metadata: not a marker
        return False


def _enum(cls: type[enum.Enum], label: str) -> EnumInfo:
    members = list(cls)
    values = tuple(member.value for member in members)
    if not members:
        raise SchemaError(f"{label}: an enum needs at least one member")
    if all(type(value) is str for value in values):
        for value in values:
            check_text(f"{label}: an enum value", value)
        json_type: Literal["string", "integer"] = "string"
    elif all(type(value) is int for value in values):
        json_type = "integer"
    else:
        raise SchemaError(f"{label}: enum values must be all str or all int")
    by_value = types.MappingProxyType(dict(zip(values, members, strict=True)))
    return EnumInfo(label, cls, json_type, values, by_value)
