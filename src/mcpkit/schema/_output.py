"""A typed return value to JSON, validated against the derived output schema.

Conversion is strict: each value must already be what its declared type says (a dataclass
instance of the declared class, an enum member, a finite float, an aware ``datetime``, ...);
nothing is coerced from an unrelated type.  Dataclasses and pydantic models are written field
by field under their published names, enums by value, ``Decimal`` as is, ``float`` as
``Decimal(repr(f))``, ``datetime``/``date``/``UUID`` canonically (``_formats``); a ``T | None``
property holding ``None`` is left out.  A scalar union writes the value by the first member
that takes it (their JSON types are distinct), an object union by the member class it is an
instance of (a ``TypedDict`` member by its tag key).
The JSON value is then evaluated against the compiled output schema, so what reaches the
client always satisfies the schema it was promised.  Any failure raises
:class:`~mcpkit.errors.OutputError` and nothing partial is returned.

Conversion uses an explicit stack bounded by ``max_json_depth`` (which also stops reference
cycles), and stops after ``max_response_bytes`` values: every value writes at least one byte,
so a longer result could never be written anyway.

:class:`Converter` is the conversion compiled once per model.  A dataclass whose fields are all
scalars (``T | None`` too), the common tool result, is written by one loop over a precomputed
field plan; that loop makes the same checks in the same order and raises the same failures as
the general conversion, which it only skips when the value count can never reach the limit.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator
from decimal import Decimal
from typing import Final, NoReturn, TypeAlias

from mcpkit.errors import InvalidValueError, OutputError, OutputFailure
from mcpkit.json import JsonValue, string, wrap_array, wrap_object
from mcpkit.limits import Limits
from mcpkit.schema import _typeinfo as ti
from mcpkit.schema._compile import ToolSchema
from mcpkit.schema._evaluate import Outcome
from mcpkit.schema._formats import write

__all__ = ["Converter"]

_END: Final = object()


def _fail(reason: OutputFailure = OutputFailure.SCHEMA) -> NoReturn:
    raise OutputError(reason)


# A container's members to convert, each as (name, or "" for an item; type; value).
_Children: TypeAlias = "Iterator[tuple[str, ti.TypeInfo, object]]"
# A scalar field: (name, attribute, kind, the exact type written unchanged, None is absent).
# ``operator.index`` returns an exact int itself and ``_scalar`` returns bools as they are, so
# values of that exact type need no call for those kinds.
_Field = tuple[str, str, str, type | None, bool]
_UNCHANGED: Final[dict[str, type | None]] = {
    "int": int, "float": int, "decimal": int, "bool": bool, "str": None, "datetime": None,
    "date": None, "uuid": None,
}  # fmt: skip
_FORMATTED: Final = frozenset(ti.FORMATS)


class Converter:
    """``convert`` compiled for one model and limits; immutable and shared by calls.

    A dataclass root whose fields are all scalars (``T | None`` properties too) is written by
    one loop over its field plan; any other model or value goes the general way.
    """

    __slots__ = ("_fields", "_limits", "_model", "_target")

    def __init__(self, model: ti.TypeModel, limits: Limits) -> None:
        self._model = model
        self._limits = limits
        self._target: type | None = None  # set when the root is a dataclass of scalar fields
        self._fields: tuple[_Field, ...] = ()
        root = model.root
        if not isinstance(root, ti.RefInfo):
            return
        info = model.named[root.index]
        # The general conversion counts the root and each field written against the limit;
        # when even all of them fit, the count can never fail and is left out.
        if not isinstance(info, ti.ObjectInfo) or info.kind != "dataclass":
            return
        if len(info.fields) >= limits.max_response_bytes:
            return
        fields: list[_Field] = []
        for field in info.fields:
            if not isinstance(field.type, ti.ScalarInfo):
                return
            kind = field.type.kind
            fields.append((field.name, field.attr, kind, _UNCHANGED[kind], field.none_is_absent))
        self._target = info.target  # type: ignore[assignment]
        self._fields = tuple(fields)

    def __call__(self, value: object) -> JsonValue:
        """Convert ``value`` (without schema validation), or raise :class:`OutputError`."""
        target = self._target
        if target is None or not isinstance(value, target):
            return _Conversion(self._model, self._limits).run(value)
        out: dict[str, JsonValue] = {}
        for name, attr, kind, unchanged, absent in self._fields:
            member = getattr(value, attr)
            if type(member) is unchanged:
                out[name] = member  # type: ignore[assignment]  # an exact int or bool
            elif member is not None or not absent:  # else None is written as absent
                out[name] = _scalar(kind, member)
        return wrap_object(out)

    def to_json(self, schema: ToolSchema, value: object) -> JsonValue:
        """Convert ``value`` and validate it against ``schema``, or raise :class:`OutputError`."""
        result = self(value)
        if schema.evaluate(result) is not Outcome.VALID:
            _fail()
        return result


class _Frame:
    """A container being written: its remaining (type, value) children and the output."""

    __slots__ = ("children", "key", "out")

    def __init__(self, children: _Children, is_object: bool) -> None:
        self.children = children
        self.out: dict[str, JsonValue] | list[JsonValue] = {} if is_object else []
        self.key = ""

    def add(self, value: JsonValue) -> None:
        if isinstance(self.out, list):
            self.out.append(value)
        else:
            self.out[self.key] = value

    def finish(self) -> JsonValue:
        # Every member was converted here already: wrap without converting again.
        if isinstance(self.out, list):
            return wrap_array(self.out)
        return wrap_object(self.out)


def _items(info: ti.TypeInfo, values: Iterator[object]) -> _Children:
    for value in values:
        yield "", info, value


def _members(info: ti.TypeInfo, value: dict[object, object]) -> _Children:
    for key, member in value.items():
        if not isinstance(key, str):
            _fail(OutputFailure.MEMBER_NAME)
        yield key, info, member


def _dataclass(fields: tuple[ti.FieldInfo, ...], value: object) -> _Children:
    for field in fields:
        member = getattr(value, field.attr)
        if member is None and field.none_is_absent:
            continue
        yield field.name, field.type, member


def _model(fields: tuple[ti.FieldInfo, ...], value: object) -> _Children:
    for field in fields:
        member = getattr(value, field.attr, _END)  # model_construct() may leave one out
        if member is _END:
            _fail()
        if member is None and field.none_is_absent:
            continue
        yield field.name, field.type, member


def _typeddict(fields: tuple[ti.FieldInfo, ...], value: dict[object, object]) -> _Children:
    seen = 0
    for field in fields:
        member = value.get(field.attr, _END)
        if member is _END:
            if field.required:
                _fail()
            continue
        seen += 1
        if member is None and field.none_is_absent:
            continue
        yield field.name, field.type, member
    if seen != len(value):
        _fail()  # keys the TypedDict does not declare


class _Conversion:
    __slots__ = ("max_depth", "model", "nodes")

    def __init__(self, model: ti.TypeModel, limits: Limits) -> None:
        self.model = model
        self.max_depth = limits.max_json_depth
        self.nodes = limits.max_response_bytes

    def run(self, value: object) -> JsonValue:
        result = self.start(self.model.root, value)
        if not isinstance(result, _Frame):
            return result
        stack = [result]
        while True:
            frame = stack[-1]
            child = next(frame.children, None)
            if child is None:
                stack.pop()
                done = frame.finish()
                if not stack:
                    return done
                stack[-1].add(done)
                continue
            frame.key = child[0]
            result = self.start(child[1], child[2])
            if isinstance(result, _Frame):
                if len(stack) >= self.max_depth:
                    _fail(OutputFailure.DEPTH)
                stack.append(result)
            else:
                frame.add(result)

    def start(self, info: ti.TypeInfo, value: object) -> JsonValue | _Frame:
        self.nodes -= 1
        if self.nodes < 0:
            _fail(OutputFailure.SIZE)
        while isinstance(info, ti.NullableInfo):
            if value is None:
                return None
            info = info.inner
        if isinstance(info, ti.ScalarInfo):
            return _scalar(info.kind, value)
        if isinstance(info, ti.ScalarUnionInfo):
            return _scalar_union(info, value)
        if isinstance(info, ti.ObjectUnionInfo):
            return self.tagged(info, value)
        if isinstance(info, ti.LiteralInfo):
            for member in info.values:
                if type(member) is type(value) and member == value:
                    return member
        elif isinstance(info, ti.ArrayInfo):
            if isinstance(value, list | tuple):
                return _Frame(_items(info.item, iter(value)), False)
        elif isinstance(info, ti.MapInfo):
            if isinstance(value, dict):
                return _Frame(_members(info.value, value), True)
        else:
            return self.named(info, value)
        _fail()

    def named(self, info: ti.RefInfo, value: object) -> JsonValue | _Frame:
        named = self.model.named[info.index]
        if isinstance(named, ti.EnumInfo):
            if isinstance(value, named.cls):
                return value.value  # type: ignore[no-any-return]
            _fail()
        return _object(named, value)

    def tagged(self, info: ti.ObjectUnionInfo, value: object) -> _Frame:
        tag = self.model.tags[info.tag]
        for arm, attr, members in zip(info.arms, tag.attrs, tag.values, strict=True):
            named = self.model.named[arm.index]
            assert isinstance(named, ti.ObjectInfo)
            if named.kind != "typeddict":
                if isinstance(value, named.target):  # type: ignore[arg-type]
                    return _object(named, value)
            elif isinstance(value, dict):
                key = value.get(attr, _END)
                if any(type(key) is type(member) and key == member for member in members):
                    return _object(named, value)
        _fail()


def _object(info: ti.ObjectInfo, value: object) -> _Frame:
    if info.kind == "dataclass" and isinstance(value, info.target):  # type: ignore[arg-type]
        return _Frame(_dataclass(info.fields, value), True)
    if info.kind == "typeddict" and isinstance(value, dict):
        return _Frame(_typeddict(info.fields, value), True)
    if info.kind == "model" and isinstance(value, info.target):  # type: ignore[arg-type]
        return _Frame(_model(info.fields, value), True)
    _fail()


def _scalar_union(info: ti.ScalarUnionInfo, value: object) -> JsonValue:
    for arm in info.arms:  # distinct JSON types: the first member that takes it is the one
        try:
            return _scalar(arm.kind, value)
        except OutputError as error:
            if error.reason is not OutputFailure.SCHEMA:
                raise  # an unpaired surrogate in a str member
    _fail()


def _scalar(kind: str, value: object) -> JsonValue:
    if kind == "str":
        if isinstance(value, str):
            try:
                return string(value)
            except InvalidValueError:
                _fail(OutputFailure.SURROGATE)
    elif kind == "bool" or isinstance(value, bool):
        if kind == "bool" and (value is True or value is False):
            return value
    elif isinstance(value, int):
        if kind not in _FORMATTED:  # an int is no date: only int values pay this check
            return operator.index(value)  # int subclasses (IntEnum members) as plain int
    elif kind == "float" and isinstance(value, float) and math.isfinite(value):
        return Decimal(repr(value))
    elif kind == "decimal" and isinstance(value, Decimal) and value.is_finite():
        return value
    elif kind in _FORMATTED:
        text = write(kind, value)
        if text is not None:
            return text
    _fail()
