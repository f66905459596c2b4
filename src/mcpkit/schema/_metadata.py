"""``Annotated`` metadata besides ``Arg`` and ``Width``: annotated_types' and pydantic's.

pydantic keeps ``Field(ge=1, max_length=3)``, ``conint`` and ``constr`` as annotated_types
objects (``Ge``, ``MaxLen``, ...) or as pydantic's own (``StringConstraints``); they are read
here into ``Arg``'s vocabulary, so a model field and a dataclass field with the same metadata
derive the same schema.  annotated_types objects are recognised by module and class name, never
imported; pydantic's go to ``_pydantic``, which only metadata built by pydantic can reach.
Everything else is refused, naming the item.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from decimal import Decimal
from typing import Any, Final, TypeAlias

from mcpkit.errors import SchemaError
from mcpkit.schema._typeinfo import Arg

__all__ = ["BOUNDS", "LENGTHS", "Constraints", "arg_items", "bound", "merge", "translate"]

Constraints: TypeAlias = dict[str, Any]
"""``Arg``'s names (``minimum``, ``min_length``, ``title``, ...) plus ``exclusive_minimum`` and
``exclusive_maximum``, which only an ``int`` can take (as the next integer in)."""

BOUNDS: Final = ("minimum", "maximum", "exclusive_minimum", "exclusive_maximum")
LENGTHS: Final = ("min_length", "max_length", "pattern")
_ARG_ITEMS: Final = ("title", "description", "minimum", "maximum", *LENGTHS)

# annotated_types class -> (its attribute, the constraint it is)
_ANNOTATED_TYPES: Final[dict[str, tuple[tuple[str, str], ...]]] = {
    "Ge": (("ge", "minimum"),),
    "Le": (("le", "maximum"),),
    "Gt": (("gt", "exclusive_minimum"),),
    "Lt": (("lt", "exclusive_maximum"),),
    "Interval": (
        ("ge", "minimum"),
        ("le", "maximum"),
        ("gt", "exclusive_minimum"),
        ("lt", "exclusive_maximum"),
    ),
    "MinLen": (("min_length", "min_length"),),
    "MaxLen": (("max_length", "max_length"),),
    "Len": (("min_length", "min_length"), ("max_length", "max_length")),
}


def arg_items(arg: Arg) -> list[tuple[str, object]]:
    """What an ``Arg`` constrains or documents (its name and header are the property's)."""
    return [(key, getattr(arg, key)) for key in _ARG_ITEMS if getattr(arg, key) is not None]


def merge(found: Constraints, items: Iterable[tuple[str, object]], where: str) -> None:
    for key, value in items:
        if key in found:
            raise SchemaError(f"{where}: {key} is given twice in the Annotated metadata")
        found[key] = value


def bound(value: object, where: str) -> int | Decimal:
    """A metadata bound as an ``int`` or an exact ``Decimal`` (a float by its shortest repr)."""
    if isinstance(value, float) and math.isfinite(value):
        return Decimal(repr(value))
    if isinstance(value, Decimal) and value.is_finite():
        return value
    if type(value) is int:
        return value
    raise SchemaError(f"{where}: a bound must be a finite int, float or Decimal")


def _length(value: object, where: str) -> int:
    if type(value) is not int or value < 0:
        raise SchemaError(f"{where}: a length must be a non-negative int")
    return value


def translate(item: object, where: str) -> list[tuple[str, object]]:
    """The constraints an annotated_types or pydantic metadata item stands for, or refuse it."""
    cls = type(item)
    module = cls.__module__
    if module == "annotated_types" and cls.__name__ in _ANNOTATED_TYPES:
        items: list[tuple[str, object]] = []
        for attr, key in _ANNOTATED_TYPES[cls.__name__]:
            value = getattr(item, attr)
            if value is None:
                continue
            if key in BOUNDS:
                items.append((key, bound(value, where)))
            elif _length(value, where) > 0 or key == "max_length":  # min_length 0 says nothing
                items.append((key, value))
        return items
    if module == "pydantic" or module.startswith("pydantic."):
        from mcpkit.schema import _pydantic  # only pydantic's own objects lead here

        return _pydantic.constraints(item, where)
    raise SchemaError(
        f"{where}: Annotated metadata {item!r} is not supported (one Arg and one Width at most)"
    )
