"""Formatted strings: ``datetime`` (RFC 3339 ``date-time``), ``date`` (``full-date``) and
``UUID``, bound strictly and written canonically.

``format`` is an annotation in JSON Schema, so the schema lets any string through and the binder
is what refuses a malformed one.  Its refusal is the schema's own ``ArgumentsInvalid``, with a
``detail`` in the schema's terms (``when: must be an RFC 3339 date-time ...``) and never the
value: a leaf raises :class:`Misformatted` with its sentence, and :func:`locate` finds where, by
walking the arguments again in binding order (only on this failure, so binding pays nothing).

- A date-time needs its time zone: an offset or ``Z`` (RFC 3339 has no local times), so
  a ``datetime`` argument is always aware.  ``T``/``Z`` may be lower case (RFC 3339 section
  5.6); seconds are required and ``60`` (a leap second) is refused, as Python has none;
  fractional seconds past microseconds are truncated.  At most 64 characters, checked before
  the pattern runs.  Output writes an aware ``datetime`` as ``YYYY-MM-DDTHH:MM:SS[.ffffff]``
  with ``Z`` or ``+HH:MM``; a naive one, or one whose offset is not whole minutes, is refused.
- A date is exactly ``YYYY-MM-DD`` and a real day; output refuses a ``datetime`` for a ``date``.
- A UUID is the canonical 8-4-4-4-12 hex form, either case on input (RFC 9562 section 4),
  lower case on output; no braces, ``urn:uuid:`` or bare 32 digits.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any, Final
from uuid import UUID

from mcpkit.errors import ArgumentsFailure, ArgumentsInvalid
from mcpkit.json import JsonArray, JsonObject
from mcpkit.schema import _typeinfo as ti
from mcpkit.schema._bind_leaves import Budget, Leaf, refuse

__all__ = ["FORMAT_LEAVES", "PROBLEMS", "Misformatted", "locate", "parse", "write"]

_MAX_DATETIME_CHARS: Final = 64
_DATETIME: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?"
    r"(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))"
)
_DATE: Final = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_UUID: Final = re.compile(
    r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}"
)
_MINUTE: Final = timedelta(minutes=1)

PROBLEMS: Final = {
    "datetime": "must be an RFC 3339 date-time with a time zone, such as 2024-01-31T09:30:00Z",
    "date": "must be a date such as 2024-01-31",
    "uuid": "must be a UUID such as 123e4567-e89b-12d3-a456-426614174000",
}


class Misformatted(ArgumentsInvalid):
    """A string that is not its declared format (``InputModel`` says where, with
    :func:`locate`)."""

    def __init__(self) -> None:
        super().__init__(ArgumentsFailure.INVALID)


def _datetime(text: str) -> datetime | None:
    if len(text) > _MAX_DATETIME_CHARS:
        return None
    found = _DATETIME.fullmatch(text)
    if found is None:
        return None
    year, month, day, hour, minute, second, fraction, sign, zone_h, zone_m = found.groups()
    if sign is None:
        zone = UTC
    else:
        if int(zone_h) > 23 or int(zone_m) > 59:
            return None
        offset = timedelta(hours=int(zone_h), minutes=int(zone_m))
        zone = timezone(-offset if sign == "-" else offset)
    micro = int((fraction or "0")[:6].ljust(6, "0"))
    try:  # the calendar: month and day ranges, leap years, year 0, second 60
        return datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second), micro, zone
        )
    except ValueError:
        return None


def _date(text: str) -> date | None:
    found = _DATE.fullmatch(text) if len(text) == 10 else None
    if found is None:
        return None
    try:
        return date(*map(int, found.groups()))
    except ValueError:
        return None


def _uuid(text: str) -> UUID | None:
    return UUID(text) if len(text) == 36 and _UUID.fullmatch(text) is not None else None


_PARSERS: Final = {"datetime": _datetime, "date": _date, "uuid": _uuid}


def parse(kind: str, text: str) -> object:
    """The value ``text`` spells for the formatted kind, or None."""
    return _PARSERS[kind](text)


def _leaf(kind: str) -> Leaf:
    parser = _PARSERS[kind]

    def bind_formatted(value: Any, budget: Budget, depth: int) -> object:
        if type(value) is not str and not isinstance(value, str):
            refuse(ArgumentsFailure.TYPE)
        result = parser(value)
        if result is None:
            raise Misformatted
        return result

    return bind_formatted


FORMAT_LEAVES: Final[dict[str, Leaf]] = {kind: _leaf(kind) for kind in _PARSERS}


def write(kind: str, value: object) -> str | None:
    """The canonical spelling of a ``datetime``, ``date`` or ``UUID`` output, or None."""
    if kind == "uuid":
        if not isinstance(value, UUID):
            return None
        digits = f"{value.int:032x}"  # not str(): a subclass could change it
        return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"
    if not isinstance(value, date) or isinstance(value, datetime) != (kind == "datetime"):
        return None  # a datetime is a date subclass, but not a date output
    day = f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
    if kind == "date":
        return day
    assert isinstance(value, datetime)
    offset = value.utcoffset()
    if offset is None or offset % _MINUTE:
        return None
    text = f"{day}T{value.hour:02d}:{value.minute:02d}:{value.second:02d}"
    if value.microsecond:
        text += f".{value.microsecond:06d}"
    if not offset:
        return text + "Z"
    minutes = int(abs(offset) // _MINUTE)
    return f"{text}{'-' if offset < timedelta(0) else '+'}{minutes // 60:02d}:{minutes % 60:02d}"


# --- where a Misformatted refusal happened: the arguments walked again, in binding order -------


def _where(path: list[str | int]) -> str:
    """``a.b[2].*``, as the schema's own explanations say it; ``arguments`` for the root."""
    text = ""
    for segment in path:
        if isinstance(segment, int):
            text += f"[{segment}]"
        else:
            text += f".{segment}" if text else segment
    return text or "arguments"


def _scalar_arm(info: ti.ScalarUnionInfo, value: object) -> ti.ScalarInfo | None:
    """The arm a JSON value binds to: the one of its JSON type (they are distinct)."""
    if value is True or value is False:
        wanted = "boolean"
    elif isinstance(value, str):
        wanted = "string"
    elif isinstance(value, int | Decimal):
        wanted = "number"
    else:
        return None
    for arm in info.arms:
        if ti.JSON_TYPES[arm.kind].replace("integer", "number") == wanted:
            return arm
    return None


def locate(model: ti.TypeModel, arguments: object) -> str | None:
    """``where: what it must be`` for the first malformed string in binding order, the one
    the binder refused.  The walk never passes a value binding did not already pay for."""
    finders = [tag.arm_of() for tag in model.tags]
    stack: list[tuple[ti.TypeInfo, object, list[str | int]]] = [(model.root, arguments, [])]
    while stack:
        info, value, path = stack.pop()
        if isinstance(info, ti.NullableInfo):
            if value is not None:
                stack.append((info.inner, value, path))
        elif isinstance(info, ti.ScalarUnionInfo):
            arm = _scalar_arm(info, value)
            if arm is not None:
                stack.append((arm, value, path))
        elif isinstance(info, ti.ScalarInfo):
            if info.kind in _PARSERS and isinstance(value, str) and parse(info.kind, value) is None:
                return f"{_where(path)}: {PROBLEMS[info.kind]}"
        elif isinstance(info, ti.ArrayInfo):
            if isinstance(value, JsonArray | list | tuple):
                items = [(info.item, item, [*path, index]) for index, item in enumerate(value)]
                stack.extend(reversed(items))
        elif isinstance(info, ti.MapInfo):
            if isinstance(value, JsonObject | dict):  # the member names are the client's: *
                members = [(info.value, item, [*path, "*"]) for item in value.values()]
                stack.extend(reversed(members))
        elif isinstance(info, ti.ObjectUnionInfo):
            if isinstance(value, JsonObject | dict):
                arm_index = finders[info.tag](value.get(model.tags[info.tag].name))
                if arm_index >= 0:
                    stack.append((info.arms[arm_index], value, path))
        elif isinstance(info, ti.RefInfo):
            named = model.named[info.index]
            if isinstance(named, ti.ObjectInfo) and isinstance(value, JsonObject | dict):
                members = [
                    (field.type, value[field.name], [*path, field.name])
                    for field in named.fields
                    if field.name in value
                ]
                stack.extend(reversed(members))
    return None  # pragma: no cover - the binder refused one of the strings walked
