"""Field checks for the model's frozen values.

A check takes the value a caller supplied and returns the value to store: converted (a float
priority becomes a ``Decimal``), copied (binary data becomes immutable ``bytes``) or as given.
It raises ``InvalidValueError(rule)`` with a fixed rule and never the value; :func:`validate`
runs a class's ``_CHECKS`` table in order and adds the field, so every message reads
``"Class.field: rule"``.  The classes and their tables are the value modules' (``_content`` and
the others); the check of ``icons`` needs ``Icon``, so it is ``_content.icon_tuple``.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
from collections.abc import Callable, Mapping
from datetime import datetime
from decimal import Decimal
from types import MemberDescriptorType
from typing import Any, Final, TypeAlias, TypeVar

from mcpkit.errors import InvalidValueError
from mcpkit.json import JsonObject, string
from mcpkit.model._media import parse_media_type

__all__ = [
    "OPTIONAL_MEDIA_TYPE",
    "OPTIONAL_TEXT",
    "Check",
    "Checks",
    "absolute_uri",
    "byte_size",
    "exact_int",
    "icon_sizes",
    "icon_theme",
    "instance_of",
    "json_object",
    "media_type",
    "meta_object",
    "optional",
    "private_bytes",
    "sequence_of",
    "timestamp",
    "unchecked_factory",
    "unit_interval",
    "validate",
]

T = TypeVar("T")

# RFC 3986 §3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), then ":".
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
# Never part of a URI (RFC 3986) or an IRI (RFC 3987): space, C0, DEL and C1 controls.
_NOT_IN_URI: Final = re.compile(r"[\x00-\x20\x7f-\x9f]")
_SIZE: Final = re.compile(r"[0-9]+x[0-9]+")
_THEMES: Final = ("light", "dark")
_MAX_EXACT_INT: Final = 2**53 - 1

Check: TypeAlias = Callable[[Any], object]
Checks: TypeAlias = tuple[tuple[str, Check], ...]


def validate(obj: Any) -> None:
    """Run the class's field checks in order and store what they return (converted or copied).

    A check raises ``InvalidValueError(rule)``; this adds the field, so every message reads
    ``"Class.field: rule"`` and never contains the value.
    """
    for name, check in obj._CHECKS:
        try:
            object.__setattr__(obj, name, check(getattr(obj, name)))
        except InvalidValueError as error:
            raise InvalidValueError(f"{type(obj).__name__}.{name}: {error.rule}") from None


def unchecked_factory(cls: type[T]) -> Callable[..., T]:
    """A constructor of frozen ``cls`` values from values the framework has already validated,
    without running the class's checks again (the server's per-request hot path).  It takes
    every dataclass field, none optional, in field order (positionally or by name) and stores
    each past the frozen ``__setattr__``, in that order.  Application input must never come
    through here.  Build one per class, once, at import.
    """
    names = [field.name for field in dataclasses.fields(cls)]  # type: ignore[arg-type]
    # Generated as source, as ``dataclasses`` builds ``__init__``: one straight-line store per
    # field, no loop and no keyword dict.  A slot is stored through its member descriptor's
    # own ``__set__`` (bound once here), which skips the attribute lookup ``setattr`` makes.
    # Helper names start with ``__``: a class body mangles such names, so no field has one.
    tools: dict[str, object] = {
        "__new": object.__new__,
        "__cls": cls,
        "__setattr": object.__setattr__,
    }
    maker = f"__unchecked_{cls.__name__}"  # the name profiles and tracebacks show
    lines = [f"def {maker}({', '.join(names)}):", "    __obj = __new(__cls)"]
    for index, name in enumerate(names):
        slot = inspect.getattr_static(cls, name, None)
        if isinstance(slot, MemberDescriptorType):
            tools[f"__set{index}"] = slot.__set__
            lines.append(f"    __set{index}(__obj, {name})")
        else:  # a field kept in the instance ``__dict__`` (a class without slots)
            lines.append(f"    __setattr(__obj, {name!r}, {name})")
    lines.append("    return __obj")
    exec("\n".join(lines), tools)  # source made here from the field names alone
    make: Callable[..., T] = tools[maker]  # type: ignore[assignment]
    return make


def optional(check: Check) -> Check:
    return lambda value: None if value is None else check(value)


def absolute_uri(value: str) -> str:
    """An absolute URI: a scheme is required, nothing is normalised."""
    value = string(value)
    if _SCHEME.match(value) is None:
        raise InvalidValueError("must be an absolute URI that starts with a scheme (RFC 3986)")
    if _NOT_IN_URI.search(value) is not None:
        raise InvalidValueError("a URI cannot contain spaces or control characters")
    return value


def media_type(value: str) -> str:
    return parse_media_type(value).text


def private_bytes(value: object) -> bytes:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise InvalidValueError("must be bytes, bytearray or memoryview")
    return bytes(value)  # a private copy of any mutable buffer


def json_object(value: object) -> JsonObject:
    """``value`` itself when it is already a ``JsonObject`` (the server's case: no copy)."""
    if isinstance(value, JsonObject):
        return value
    if not isinstance(value, Mapping):
        raise InvalidValueError("must be a JSON object")
    return JsonObject(value)


def meta_object(value: object) -> JsonObject | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise InvalidValueError("must be a mapping")
    return JsonObject(value)


def sequence_of(value: object, item: type, rule: str) -> tuple[Any, ...]:
    if not isinstance(value, (list, tuple)):
        raise InvalidValueError("must be a tuple or a list")
    if not all(isinstance(each, item) for each in value):
        raise InvalidValueError(rule)
    return tuple(value)


def instance_of(kinds: tuple[type, ...], rule: str) -> Check:
    def check(value: object) -> object:
        if not isinstance(value, kinds):
            raise InvalidValueError(rule)
        return value

    return check


def unit_interval(value: object) -> Decimal | int:
    """A JSON number in [0, 1]; a float becomes the ``Decimal`` of its shortest repr."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        raise InvalidValueError("must be an int, float or Decimal")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidValueError("must be finite")
        value = Decimal(repr(value))
    elif isinstance(value, Decimal) and not value.is_finite():
        raise InvalidValueError("must be finite")
    if not 0 <= value <= 1:
        raise InvalidValueError("must be between 0 and 1 inclusive")
    return value if isinstance(value, Decimal) else int(value)


def timestamp(value: str) -> str:
    """ISO 8601 as ``datetime.fromisoformat`` reads it, plus a trailing ``Z``; kept as spelt."""
    value = string(value)
    spelling = value[:-1] + "+00:00" if value.endswith("Z") else value
    if spelling.isascii():
        try:
            datetime.fromisoformat(spelling)
        except ValueError:
            pass
        else:
            return value
    raise InvalidValueError("must be an ISO 8601 date-time")


def icon_sizes(value: object) -> tuple[str, ...] | None:
    """ASCII-decimal ``WxH`` with a lowercase ``x``, or exactly ``any``."""
    if value is None:
        return None
    sizes = tuple(map(str.__str__, sequence_of(value, str, "every size must be a str")))
    for size in sizes:
        if size != "any" and _SIZE.fullmatch(size) is None:
            raise InvalidValueError(
                "every size must be ASCII-decimal WxH with a lowercase x, or any"
            )
    return sizes or None


def icon_theme(value: str) -> str:
    if string(value) not in _THEMES:
        raise InvalidValueError("must be 'light' or 'dark'")
    return str.__str__(value)


def exact_int(type_rule: str) -> Check:
    """An ``int`` from 0 to 2**53 - 1, which every client reads exactly (JavaScript included);
    ``type_rule`` refuses anything else, so an ``optional`` field can say that ``None`` is
    allowed too."""

    def check(value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidValueError(type_rule)
        if not 0 <= value <= _MAX_EXACT_INT:
            raise InvalidValueError("must be between 0 and 2**53 - 1")
        return int(value)

    return check


def byte_size(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidValueError("must be a non-negative int")
    return int(value)


OPTIONAL_TEXT: Final = optional(string)
OPTIONAL_MEDIA_TYPE: Final = optional(media_type)
