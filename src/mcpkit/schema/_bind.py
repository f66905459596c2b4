"""JSON arguments to typed Python values (TD-02..07, TD-12; seed 000 "Java type derivation").

Binding follows schema validation but never trusts it: any JSON value, valid or not, either
binds or raises :class:`~mcpkit.errors.ArgumentsInvalid` with its fixed message (IV-02..04).
Every cost is priced before it is paid:

- each value visited counts one node against ``max_json_nodes`` (TD-12);
- an integer's expanded decimal spelling (minus sign included) is measured before the ``int``
  exists: a ``Decimal`` by ``adjusted()``, so ``1e9999`` is 10,000 characters and refused
  without expansion (TD-05).  One value may spell ``max_integer_chars`` (TD-02), one binding
  ``max_binding_integer_chars`` in total, every conversion counted (TD-03/04);
- fixed-width ranges are compared on the ``Decimal`` itself, before ``int()``;
- containers are bound from an explicit stack no deeper than ``max_json_depth``, so deep
  values never meet the interpreter's recursion limit.

``Decimal`` arguments are kept exactly as parsed (TD-07); ``float`` is ``float(Decimal)`` and
must be finite.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from decimal import Decimal
from typing import Final, NoReturn

from mcpkit.errors import ArgumentsInvalid
from mcpkit.limits import Limits
from mcpkit.schema._typeinfo import (
    MAX_FLOAT,
    Absent,
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
)

__all__ = ["BindingRefused", "bind", "integer_chars"]

_END: Final = object()
_MAX_FLOAT_INT: Final = int(MAX_FLOAT)
# floor(log10(2) * 10**50): exact digit counts of huge ints without str() (see integer_chars)
_LOG10_2: Final = 30102999566398119521373889472449302676818988146211
_SCALE: Final = 10**50


class BindingRefused(ArgumentsInvalid):
    """``ArgumentsInvalid`` with a private ``reason`` for logs and tests; never sent."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


def _refuse(reason: str) -> NoReturn:
    raise BindingRefused(reason)


def integer_chars(value: int) -> int:
    """Length of ``str(value)`` without building it when ``value`` is huge."""
    bits = value.bit_length()
    if bits <= 9_000:  # at most 2,710 digits: cheap, and inside Python's int-to-str limit
        return len(str(value))
    digits = bits * _LOG10_2 // _SCALE + 1  # the larger of the two candidates
    if abs(value) < 10 ** (digits - 1):
        digits -= 1
    return digits + (value < 0)


def bind(model: TypeModel, value: object, limits: Limits) -> object:
    """Bind a JSON value to ``model``'s type, or raise :class:`ArgumentsInvalid`."""
    return _Binding(model, limits).run(value)


class _Frame:
    __slots__ = ()

    def next_child(self) -> tuple[TypeInfo, object] | None:
        raise NotImplementedError

    def add(self, value: object) -> None:
        raise NotImplementedError

    def finish(self) -> object:
        raise NotImplementedError


class _ArrayFrame(_Frame):
    __slots__ = ("as_tuple", "item", "items", "out")

    def __init__(self, info: ArrayInfo, value: list[object] | tuple[object, ...]) -> None:
        self.item = info.item
        self.as_tuple = info.as_tuple
        self.items = iter(value)
        self.out: list[object] = []

    def next_child(self) -> tuple[TypeInfo, object] | None:
        value = next(self.items, _END)
        return None if value is _END else (self.item, value)

    def add(self, value: object) -> None:
        self.out.append(value)

    def finish(self) -> object:
        return tuple(self.out) if self.as_tuple else self.out


class _MapFrame(_Frame):
    __slots__ = ("items", "key", "out", "value")

    def __init__(self, info: MapInfo, value: dict[object, object]) -> None:
        self.value = info.value
        self.items = iter(value.items())
        self.out: dict[str, object] = {}
        self.key = ""

    def next_child(self) -> tuple[TypeInfo, object] | None:
        item = next(self.items, None)
        if item is None:
            return None
        if not isinstance(item[0], str):
            _refuse("member name")
        self.key = item[0]
        return self.value, item[1]

    def add(self, value: object) -> None:
        self.out[self.key] = value

    def finish(self) -> object:
        return self.out


class _ObjectFrame(_Frame):
    __slots__ = ("attr", "fields", "info", "matched", "out", "source")

    def __init__(self, info: ObjectInfo, value: dict[object, object]) -> None:
        self.info = info
        self.source = value
        self.fields: Iterator[FieldInfo] = iter(info.fields)
        self.out: dict[str, object] = {}
        self.matched = 0
        self.attr = ""

    def next_child(self) -> tuple[TypeInfo, object] | None:
        for field in self.fields:
            value = self.source.get(field.name, _END)
            if value is not _END:
                self.matched += 1
                self.attr = field.attr
                return field.type, value
            if field.required:
                _refuse("missing property")
            if field.absent is Absent.NONE:
                self.out[field.attr] = None
            elif field.absent is Absent.DEFAULT:
                self.out[field.attr] = field.default
        if self.matched != len(self.source):
            _refuse("unknown property")
        return None

    def add(self, value: object) -> None:
        self.out[self.attr] = value

    def finish(self) -> object:
        if self.info.kind != "dataclass":
            return self.out
        try:
            return self.info.target(**self.out)
        except Exception as exc:  # __post_init__ checks are the application's validation
            raise BindingRefused("constructor") from exc


class _Binding:
    __slots__ = ("chars", "max_chars", "max_depth", "max_total", "model", "nodes")

    def __init__(self, model: TypeModel, limits: Limits) -> None:
        self.model = model
        self.nodes = limits.max_json_nodes
        self.max_depth = limits.max_json_depth
        self.max_chars = limits.max_integer_chars
        self.max_total = limits.max_binding_integer_chars
        self.chars = 0

    def run(self, value: object) -> object:
        result = self.start(self.model.root, value)
        if not isinstance(result, _Frame):
            return result
        stack = [result]
        while True:
            frame = stack[-1]
            child = frame.next_child()
            if child is None:
                stack.pop()
                done = frame.finish()
                if not stack:
                    return done
                stack[-1].add(done)
                continue
            result = self.start(*child)
            if isinstance(result, _Frame):
                if len(stack) >= self.max_depth:
                    _refuse("depth")
                stack.append(result)
            else:
                frame.add(result)

    def start(self, info: TypeInfo, value: object) -> object:
        """The bound scalar, or a frame that binds a container's members."""
        self.nodes -= 1
        if self.nodes < 0:
            _refuse("nodes")
        while isinstance(info, NullableInfo):
            if value is None:
                return None
            info = info.inner
        if isinstance(info, ScalarInfo):
            return self.scalar(info, value)
        if isinstance(info, RefInfo):
            named = self.model.named[info.index]
            if isinstance(named, EnumInfo):
                return _enum(named, value)
            if isinstance(value, dict):
                return _ObjectFrame(named, value)
        elif isinstance(info, ArrayInfo):
            if isinstance(value, list | tuple):
                return _ArrayFrame(info, value)
        elif isinstance(info, MapInfo):
            if isinstance(value, dict):
                return _MapFrame(info, value)
        else:
            return _literal(info, value)
        _refuse("type")

    def scalar(self, info: ScalarInfo, value: object) -> object:
        kind = info.kind
        if kind == "str":
            if isinstance(value, str):
                return value
        elif kind == "bool":
            if value is True or value is False:
                return value
        elif kind == "int":
            return self.integer(value, info.width)
        elif kind == "float":
            return _float(value)
        elif isinstance(value, Decimal) and value.is_finite():
            return value  # TD-07: exactly as parsed
        elif isinstance(value, int) and not isinstance(value, bool):
            return Decimal(value)
        _refuse("type")

    def integer(self, value: object, width: Width | None) -> int:
        if isinstance(value, bool) or not isinstance(value, int | Decimal):
            _refuse("type")
        if isinstance(value, int):
            chars = integer_chars(value)
        elif not value.is_finite() or value != value.to_integral_value():
            _refuse("not an integer")
        elif value.is_zero():
            chars = 1  # -0, 0E+5 and 0.00 all bind to 0
        else:
            chars = value.adjusted() + 1 + value.is_signed()
        if chars > self.max_chars:
            _refuse("integer spelling")
        self.chars += chars
        if self.chars > self.max_total:
            _refuse("binding integer spelling")
        if width is not None and not width.minimum <= value <= width.maximum:
            _refuse("integer width")
        return int(value)


def _float(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        _refuse("type")
    if isinstance(value, int):
        if not -_MAX_FLOAT_INT <= value <= _MAX_FLOAT_INT:
            _refuse("float range")
        return float(value)
    result = float(value)  # NaN stays NaN, overflow becomes inf: both refused
    if not math.isfinite(result):
        _refuse("float range")
    return result


def _enum(info: EnumInfo, value: object) -> object:
    found: object = None
    if info.json_type == "string":
        if isinstance(value, str):
            found = info.by_value.get(value)
    elif _is_number(value):
        found = info.by_value.get(value)  # 1.0 and 1E+0 hash as 1: no expansion
    if found is None:
        _refuse("enum")
    return found


def _is_number(value: object) -> bool:
    if isinstance(value, Decimal):
        return value.is_finite()
    return isinstance(value, int) and not isinstance(value, bool)


def _literal(info: LiteralInfo, value: object) -> object:
    """The ``Literal`` member JSON-equal to ``value`` (booleans are never numbers)."""
    if value is True or value is False:
        kind: type = bool
    elif isinstance(value, str):
        kind = str
    elif _is_number(value):
        kind = int
    else:
        _refuse("type")
    for member in info.values:
        if type(member) is kind and member == value:
            return member
    _refuse("literal")
