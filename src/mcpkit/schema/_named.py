"""Named types to TypeInfo: frozen dataclasses, TypedDicts, enums and a handler's parameters
(pydantic models are read by ``_pydantic``, imported only when a model is met).

``_analyze`` registers each named type once and hands it here to be read: its ``$defs`` label,
its resolved annotations (type variables replaced by a generic instantiation's arguments) and
one ``FieldInfo`` per property, in declaration order.  The field annotations themselves are
analysed by the ``FieldReader`` the analyzer passes in, so this module never recurses into
types.  Everything outside the family raises ``SchemaError`` naming the type and the field.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Final, Literal, TypeAlias, TypeVar, Union

from mcpkit.errors import SchemaError
from mcpkit.schema._typeinfo import (
    Absent,
    EnumInfo,
    FieldInfo,
    ObjectInfo,
    check_text,
    is_model,
    is_typeddict,
)

__all__ = ["UNIONS", "FieldReader", "define", "label", "parameters_object", "unique"]

UNIONS: Final = (Union, types.UnionType)
_NONE: Final = type(None)

FieldReader: TypeAlias = Callable[[str, Any, str, bool, "Absent | None"], FieldInfo]
"""``(attribute, annotation, where, must, absent) -> FieldInfo``: the analyzer's ``field``."""


def label(tp: object, depth: int = 0) -> str:
    """A stable ``$defs`` base name: the qualified name, plus type arguments for generics."""
    origin = typing.get_origin(tp)
    if origin is Annotated:
        return label(typing.get_args(tp)[0], depth)
    if origin is not None:
        base = "Union" if origin in UNIONS else label(origin, depth)
        return _joined(base, typing.get_args(tp), depth)
    if tp is _NONE:
        return "None"
    if isinstance(tp, type) and is_model(tp):
        generic = tp.__pydantic_generic_metadata__  # type: ignore[attr-defined]
        if generic["origin"] is not None:  # Box[int] is a class of its own: name it Box-int
            return _joined(label(generic["origin"], depth), generic["args"], depth)
    name = getattr(tp, "__qualname__", None) or type(tp).__name__
    name = ".".join(part for part in name.split(".") if part != "<locals>")
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def _joined(base: str, args: tuple[Any, ...], depth: int) -> str:
    if depth >= 4:
        return base
    return "-".join([base, *(label(arg, depth + 1) for arg in args if arg is not Ellipsis)])


def _hints(obj: object, name: str) -> dict[str, Any]:
    try:
        return typing.get_type_hints(obj, include_extras=True)
    except Exception as exc:  # NameError, TypeError, SyntaxError from string annotations
        raise SchemaError(f"cannot resolve the annotations of {name}: {exc}") from exc


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


def define(tp: Any, field: FieldReader) -> ObjectInfo | EnumInfo:
    """Read a registered enum, TypedDict or frozen dataclass (``tp`` may be generic)."""
    origin = typing.get_origin(tp)
    cls = tp if origin is None else origin
    name = label(tp)
    if issubclass(cls, enum.Enum):
        return _enum(cls, name)
    if is_model(cls):
        from mcpkit.schema import _pydantic  # the model's author has imported pydantic

        return _pydantic.define_model(cls, name, field)
    env = dict(zip(cls.__parameters__, typing.get_args(tp), strict=True)) if origin else {}
    hints = _hints(cls, name)
    fields: list[FieldInfo] = []
    if is_typeddict(cls):
        required_keys = cls.__required_keys__
        for key, hint in hints.items():
            check_text(f"key {key!r} of {name}", key)
            # From the wrapper, not only __required_keys__: Python 3.11 misses wrappers
            # spelled as strings (``from __future__ import annotations``).
            must = key in required_keys
            if typing.get_origin(hint) in (typing.Required, typing.NotRequired):
                must = typing.get_origin(hint) is typing.Required
                hint = typing.get_args(hint)[0]
            where = f"key {key!r} of {name}"
            fields.append(field(key, _substitute(hint, env), where, must, None))
        return ObjectInfo(name, "typeddict", cls, unique(fields, name))
    declared = {f.name: f for f in dataclasses.fields(cls)}
    for attr in cls.__dataclass_fields__:
        if attr not in declared and isinstance(hints.get(attr), dataclasses.InitVar):
            raise SchemaError(f"field {attr!r} of {name}: InitVar is not supported")
    for attr, f in declared.items():
        where = f"field {attr!r} of {name}"
        if not f.init:
            raise SchemaError(f"{where}: init=False fields are not supported")
        has_default = f.default is not dataclasses.MISSING or (
            f.default_factory is not dataclasses.MISSING
        )
        default = Absent.OMIT if has_default else None
        hint = _substitute(hints[attr], env)
        fields.append(field(attr, hint, where, True, default))
    return ObjectInfo(name, "dataclass", cls, unique(fields, name))


def parameters_object(
    fn: Callable[..., object], excluded: frozenset[object], field: FieldReader
) -> ObjectInfo:
    """Read a handler's parameters as the synthetic root object."""
    name = label(fn)
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise SchemaError(f"cannot read the parameters of {name}: {exc}") from exc
    hints = _hints(inspect.unwrap(getattr(fn, "__func__", fn)), name)
    params = list(signature.parameters.values())
    if params and params[0].name in ("self", "cls"):
        params = params[1:]
    fields: list[FieldInfo] = []
    for param in params:
        where = f"parameter {param.name!r} of {name}"
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            raise SchemaError(f"{where}: only named parameters can be tool arguments")
        if param.name not in hints:
            raise SchemaError(f"{where}: a type annotation is required")
        hint = hints[param.name]
        if _is_excluded(hint, excluded):
            continue
        info = field(param.name, hint, where, True, None)
        if param.default is not param.empty:
            info = dataclasses.replace(
                info, required=False, absent=Absent.DEFAULT, default=param.default
            )
        fields.append(info)
    return ObjectInfo(name, "parameters", fn, unique(fields, name))


def unique(fields: list[FieldInfo], name: str) -> tuple[FieldInfo, ...]:
    seen: set[str] = set()
    for f in fields:
        if f.name in seen:
            raise SchemaError(f"{name}: the property name {f.name!r} is used twice")
        seen.add(f.name)
    return tuple(fields)


def _is_excluded(hint: object, excluded: frozenset[object]) -> bool:
    try:
        return hint in excluded or typing.get_origin(hint) in excluded
    except TypeError:  # unhashable metadata: not a marker
        return False


def _enum(cls: type[enum.Enum], name: str) -> EnumInfo:
    members = list(cls)
    values = tuple(member.value for member in members)
    if not members:
        raise SchemaError(f"{name}: an enum needs at least one member")
    if all(type(value) is str for value in values):
        for value in values:
            check_text(f"{name}: an enum value", value)
        json_type: Literal["string", "integer"] = "string"
    elif all(type(value) is int for value in values):
        json_type = "integer"
    else:
        raise SchemaError(f"{name}: enum values must be all str or all int")
    by_value = types.MappingProxyType(dict(zip(values, members, strict=True)))
    return EnumInfo(name, cls, json_type, values, by_value)
