"""Leaf binders: JSON scalars to typed Python values.

A leaf is a plain function ``(value, budget, depth) -> bound`` with its parameters bound in; it
binds a scalar, an enum member or a literal, or raises :class:`~mcpkit.errors.ArgumentsInvalid`
with a private :class:`~mcpkit.errors.ArgumentsFailure` reason.  Leaves dispatch on the value's
exact type and use ``isinstance`` only for subclasses.  Every cost is priced before it is paid:

- an integer's expanded decimal spelling (minus sign included) is measured before the ``int``
  exists: a ``Decimal`` by ``adjusted()``, so ``1e9999`` is 10,000 characters and refused
  without expansion.  One value may spell ``max_integer_chars``, one binding
  ``max_binding_integer_chars`` in total, every conversion counted;
- fixed-width ranges are compared on the ``Decimal`` itself, before ``int()``.

``Decimal`` arguments are kept exactly as parsed; ``float`` is ``float(Decimal)`` and
must be finite.  Containers and the driver that binds them are ``_bind``'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Final, NoReturn, TypeAlias

from mcpkit.errors import ArgumentsFailure, ArgumentsInvalid
from mcpkit.schema._typeinfo import MAX_FLOAT, EnumInfo

__all__ = [
    "NODES",
    "SCALAR_LEAVES",
    "Budget",
    "Leaf",
    "enum_leaf",
    "integer_chars",
    "integer_leaf",
    "literal_leaf",
    "nullable_leaf",
    "refuse",
]

F = ArgumentsFailure
_MISSING: Final = object()
_MAX_FLOAT_INT: Final = int(MAX_FLOAT)
# floor(log10(2) * 10**50): exact digit counts of huge ints without str() (see integer_chars)
_LOG10_2: Final = 30102999566398119521373889472449302676818988146211
_SCALE: Final = 10**50
NODES, _CHARS = 0, 1  # indexes into a Budget

Budget: TypeAlias = list[int]  # [nodes left, integer characters left]: one per binding
Leaf: TypeAlias = Callable[[Any, Budget, int], object]  # (value, budget, depth index)


def refuse(reason: ArgumentsFailure) -> NoReturn:
    raise ArgumentsInvalid(reason)


def integer_chars(value: int) -> int:
    """Length of ``str(value)`` without building it when ``value`` is huge."""
    bits = value.bit_length()
    if bits <= 9_000:  # at most 2,710 digits: cheap, and inside Python's int-to-str limit
        return len(str(value))
    digits = bits * _LOG10_2 // _SCALE + 1  # the larger of the two candidates
    if abs(value) < 10 ** (digits - 1):
        digits -= 1
    return digits + (value < 0)


# --- scalar leaves: no container, so ``depth`` is not used --------------------------------------


def _str_leaf(value: Any, budget: Budget, depth: int) -> object:
    if type(value) is str or isinstance(value, str):
        return value
    refuse(F.TYPE)


def _bool_leaf(value: Any, budget: Budget, depth: int) -> object:
    if value is True or value is False:
        return value
    refuse(F.TYPE)


def _float_leaf(value: Any, budget: Budget, depth: int) -> object:
    kind = type(value)
    if kind is Decimal or (kind is not int and isinstance(value, Decimal)):
        if not value.is_finite():  # float(sNaN) would raise
            refuse(F.FLOAT_RANGE)
        result = float(value)  # overflow becomes inf: refused
        if not math.isfinite(result):
            refuse(F.FLOAT_RANGE)
        return result
    if kind is int or (isinstance(value, int) and kind is not bool):
        if not -_MAX_FLOAT_INT <= value <= _MAX_FLOAT_INT:
            refuse(F.FLOAT_RANGE)
        return float(value)
    refuse(F.TYPE)


def _decimal_leaf(value: Any, budget: Budget, depth: int) -> object:
    kind = type(value)
    if kind is Decimal or (kind is not int and isinstance(value, Decimal)):
        if value.is_finite():
            return value  # exactly as parsed
    elif kind is int or (isinstance(value, int) and kind is not bool):
        return Decimal(value)
    refuse(F.TYPE)


SCALAR_LEAVES: Final[dict[str, Leaf]] = {
    "str": _str_leaf,
    "bool": _bool_leaf,
    "float": _float_leaf,
    "decimal": _decimal_leaf,
}


def integer_leaf(low: int | None, high: int | None, max_chars: int) -> Leaf:
    def bind_integer(value: Any, budget: Budget, depth: int) -> object:
        kind = type(value)
        if kind is int:
            bits = value.bit_length()
            chars = len(str(value)) if bits <= 60 else integer_chars(value)
        elif kind is Decimal or isinstance(value, Decimal):
            if not value.is_finite() or value != value.to_integral_value():
                refuse(F.NOT_INTEGER)
            # -0, 0E+5 and 0.00 all bind to 0: one character
            chars = 1 if value.is_zero() else value.adjusted() + 1 + value.is_signed()
        elif isinstance(value, int) and kind is not bool:
            value = int(value)  # an int subclass (an IntEnum member) as a plain int
            chars = integer_chars(value)
        else:
            refuse(F.TYPE)
        if chars > max_chars:
            refuse(F.INTEGER_CHARS)
        budget[_CHARS] -= chars
        if budget[_CHARS] < 0:
            refuse(F.BINDING_INTEGER_CHARS)
        if low is not None and not low <= value <= high:
            refuse(F.INTEGER_WIDTH)
        return value if kind is int else int(value)

    return bind_integer


def _is_number(value: object) -> bool:
    if isinstance(value, Decimal):
        return value.is_finite()
    return isinstance(value, int) and not isinstance(value, bool)


def enum_leaf(info: EnumInfo) -> Leaf:
    by_value = dict(info.by_value)  # a plain dict: faster than the read-only proxy
    strings = info.json_type == "string"

    def bind_enum(value: Any, budget: Budget, depth: int) -> object:
        if strings:
            if isinstance(value, str):
                found = by_value.get(value)
                if found is not None:
                    return found
        elif _is_number(value):
            found = by_value.get(value)  # 1.0 and 1E+0 hash as 1: no expansion
            if found is not None:
                return found
        refuse(F.ENUM)

    return bind_enum


def literal_leaf(values: tuple[str | int | bool, ...]) -> Leaf:
    """The member JSON-equal to the value: one table per JSON kind, as ``True == 1``."""
    tables: dict[type, dict[object, object]] = {str: {}, int: {}, bool: {}}
    for member in values:
        tables[type(member)][member] = member

    def bind_literal(value: Any, budget: Budget, depth: int) -> object:
        if value is True or value is False:
            table = tables[bool]
        elif isinstance(value, str):
            table = tables[str]
        elif _is_number(value):
            table = tables[int]
        else:
            refuse(F.TYPE)
        found = table.get(value, _MISSING)
        if found is _MISSING:
            refuse(F.LITERAL)
        return found

    return bind_literal


def nullable_leaf(inner: Leaf) -> Leaf:
    def bind_nullable(value: Any, budget: Budget, depth: int) -> object:
        return None if value is None else inner(value, budget, depth)

    return bind_nullable
