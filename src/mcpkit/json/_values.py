"""Immutable JSON values and JSON equality.

JSON scalars are plain Python values (``str``, ``int``, ``Decimal``, ``bool``, ``None``), so
handlers read arguments without unwrapping; the two containers are immutable subclasses of
``dict`` and ``tuple`` so reading them runs at C speed.  What Python's own ``==`` gets wrong
for JSON (``True == 1``) is fixed by :func:`json_equal`, which the containers' ``==`` and
``hash`` use: booleans are never numbers, numbers compare by value ignoring scale, objects
ignore member order, arrays do not.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Iterator, Mapping
from decimal import Decimal
from typing import Final, NoReturn, TypeAlias

from mcpkit._grammar import SURROGATE
from mcpkit.errors import InvalidValueError

__all__ = [
    "JsonArray",
    "JsonObject",
    "JsonValue",
    "from_python",
    "json_equal",
    "json_hash",
    "string",
    "utf16_units",
]

JsonValue: TypeAlias = "JsonObject | JsonArray | str | int | Decimal | bool | None"

# Deeper Python data is refused by from_python: it is the hard ceiling of Limits.max_json_depth,
# and it stops cycles before they reach the interpreter's recursion limit.
_MAX_CONVERT_DEPTH: Final = 512
_TRUE_HASH: Final = hash("mcpkit.json:true")
_FALSE_HASH: Final = hash("mcpkit.json:false")
_NULL_HASH: Final = hash("mcpkit.json:null")


def string(text: str) -> str:
    """Return ``text`` if it is well-formed (no unpaired surrogate), else raise.

    Well-formed text is kept exactly: empty strings, controls, emoji, combining marks and
    distinct normalisation forms are not touched.
    """
    if type(text) is not str:
        if not isinstance(text, str):
            raise InvalidValueError("a JSON string must be a str")
        text = str.__str__(text)
    if not text.isascii() and SURROGATE.search(text) is not None:
        raise InvalidValueError("text contains an unpaired surrogate")
    return text


def utf16_units(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (a supplementary character counts 2)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _immutable(*_args: object, **_kwargs: object) -> NoReturn:
    raise TypeError("JSON values are immutable")


class JsonObject(dict[str, "JsonValue"]):
    """An immutable JSON object: member names are ``str``, member order is insertion order.

    ``JsonObject({"a": [1, 2.5]})`` converts its contents like :func:`from_python`; repeated
    names in a sequence of pairs are refused, as the codec refuses them.
    """

    __slots__ = ()

    def __init__(
        self, members: Mapping[str, object] | Iterable[tuple[str, object]] = (), /
    ) -> None:
        if len(self):
            _immutable()
        pairs = members.items() if isinstance(members, Mapping) else members
        dict.update(self, _convert_container(_Frame(pairs, True), 0))  # type: ignore[arg-type]

    __setitem__ = _immutable
    __delitem__ = _immutable
    __ior__ = _immutable
    clear = _immutable
    pop = _immutable
    popitem = _immutable
    setdefault = _immutable
    update = _immutable

    def copy(self) -> JsonObject:
        return self

    def __copy__(self) -> JsonObject:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> JsonObject:
        return self

    def __reduce__(self) -> tuple[type[JsonObject], tuple[list[tuple[str, JsonValue]]]]:
        return (JsonObject, (list(self.items()),))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return json_equal(self, other)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return not json_equal(self, other)
        return NotImplemented

    def __hash__(self) -> int:  # type: ignore[override]
        return json_hash(self)

    def __repr__(self) -> str:
        return f"JsonObject({dict.__repr__(self)})"


class JsonArray(tuple["JsonValue", ...]):
    """An immutable JSON array; ``JsonArray([1, "a"])`` converts like :func:`from_python`."""

    __slots__ = ()

    def __new__(cls, items: Iterable[object] = (), /) -> JsonArray:
        return tuple.__new__(cls, [_convert(item, 1) for item in items])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (tuple, list)):
            return json_equal(self, other)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        if isinstance(other, (tuple, list)):
            return not json_equal(self, other)
        return NotImplemented

    def __hash__(self) -> int:
        return json_hash(self)

    def __repr__(self) -> str:
        return f"JsonArray({list(self)!r})"


# Bound once: these wrap several values per request, and each saved lookup counts there.
_new_dict: Final = dict.__new__
_fill_dict: Final = dict.update
_new_tuple: Final = tuple.__new__


def _object_from_dict(members: Mapping[str, JsonValue]) -> JsonObject:
    """Wrap members the codec has already validated (no conversion, no checks)."""
    obj: JsonObject = _new_dict(JsonObject)
    _fill_dict(obj, members)
    return obj


def _array_from_list(items: Iterable[JsonValue]) -> JsonArray:
    """Wrap items the codec has already validated (no conversion, no checks)."""
    return _new_tuple(JsonArray, items)


wrap_object = _object_from_dict
"""``JsonObject`` of members that already are JSON values (``str`` names; scalars,
``JsonObject`` and ``JsonArray`` values), without converting or checking anything: for
framework code that assembles values it built itself, on the hot path.  Anything else must
go through ``JsonObject(...)``."""

wrap_array = _array_from_list
"""``JsonArray`` of items that already are JSON values; unchecked, like :data:`wrap_object`."""


def from_python(value: object) -> JsonValue:
    """Convert JSON-like Python data into an immutable :data:`JsonValue`.

    Accepts mappings with ``str`` keys, lists and tuples, ``str``, ``int``, ``bool``, ``None``,
    finite ``Decimal`` and finite ``float`` (kept as ``Decimal(repr(value))``, its shortest
    exact spelling).  Anything else, an unpaired surrogate or a non-finite number raises
    :class:`~mcpkit.errors.InvalidValueError`.
    """
    return _convert(value, 0)


class _Container:
    """Marks a value that :func:`_leaf` cannot convert on its own."""


_CONTAINER: Final = _Container()


def _leaf(value: object) -> JsonValue | _Container:
    """Convert a scalar (or pass through an already built container); else _CONTAINER."""
    if value is None or value is True or value is False:
        return value
    kind = type(value)
    if kind is str:
        return string(value)  # type: ignore[arg-type]
    if kind is int or kind is JsonObject or kind is JsonArray:
        return value  # type: ignore[return-value]
    if isinstance(value, str):
        return string(value)
    if isinstance(value, int):
        return operator.index(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise InvalidValueError("a JSON number must be finite")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidValueError("a JSON number must be finite")
        return Decimal(repr(value))
    if isinstance(value, (Mapping, list, tuple)):
        return _CONTAINER
    raise InvalidValueError(f"a JSON value cannot be a {type(value).__name__}")


class _Frame:
    """One container being converted: its remaining source items and what is built so far."""

    __slots__ = ("items", "name", "out")

    def __init__(self, items: Iterable[object], is_object: bool) -> None:
        self.items: Iterator[object] = iter(items)
        self.out: JsonObject | list[JsonValue] = dict.__new__(JsonObject) if is_object else []
        self.name = ""

    def next_child(self) -> object:
        """The next source value to convert; raises StopIteration when there is none."""
        item = next(self.items)
        if not isinstance(self.out, JsonObject):
            return item
        name: object
        member: object
        name, member = item  # type: ignore[misc]
        if not isinstance(name, str):
            raise InvalidValueError("a JSON member name must be a str")
        key = string(name)
        if key in dict.keys(self.out):
            raise InvalidValueError("a JSON object cannot repeat a member name")
        self.name = key
        return member

    def add(self, value: JsonValue) -> None:
        if isinstance(self.out, list):
            self.out.append(value)
        else:
            dict.__setitem__(self.out, self.name, value)

    def finish(self) -> JsonValue:
        if isinstance(self.out, list):
            return tuple.__new__(JsonArray, self.out)
        return self.out


def _frame(value: object) -> _Frame:
    if isinstance(value, Mapping):
        return _Frame(value.items(), True)
    return _Frame(value, False)  # type: ignore[arg-type]


def _convert(value: object, depth: int) -> JsonValue:
    """Convert ``value``, inside ``depth`` open containers."""
    leaf = _leaf(value)
    if not isinstance(leaf, _Container):
        return leaf
    return _convert_container(_frame(value), depth)


def _convert_container(root: _Frame, depth: int) -> JsonValue:
    """Convert without recursion, so deep or cyclic input meets the depth ceiling rather than
    the interpreter's recursion limit."""
    frames = [root]
    while True:
        frame = frames[-1]
        try:
            child = frame.next_child()
        except StopIteration:
            frames.pop()
            done = frame.finish()
            if not frames:
                return done
            frames[-1].add(done)
            continue
        leaf = _leaf(child)
        if not isinstance(leaf, _Container):
            frame.add(leaf)
        elif depth + len(frames) >= _MAX_CONVERT_DEPTH:
            raise InvalidValueError("a JSON value nests too deeply")
        else:
            frames.append(_frame(child))


def _is_number(value: object) -> bool:
    return isinstance(value, (int, Decimal, float)) and not isinstance(value, bool)


def _number(value: int | Decimal | float) -> int | Decimal:
    # A float means what its shortest repr spells, exactly as from_python stores it.
    if isinstance(value, float):
        return Decimal(repr(value)) if math.isfinite(value) else Decimal(value)
    return value


def json_equal(a: object, b: object) -> bool:
    """JSON equality of two JSON-like values (``1``, ``1.0`` and ``1E+0`` are equal)."""
    if a is b:
        return not (isinstance(a, (Decimal, float)) and a != a)  # NaN is never equal
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return False  # identical booleans and None were caught above
    if isinstance(a, str):
        return isinstance(b, str) and a == b
    if _is_number(a):
        return _is_number(b) and _number(a) == _number(b)  # type: ignore[arg-type]
    if isinstance(a, Mapping):
        if not isinstance(b, Mapping) or len(a) != len(b):
            return False
        for name, member in a.items():
            if name not in b or not json_equal(member, b[name]):
                return False
        return True
    if isinstance(a, (list, tuple)):
        if not isinstance(b, (list, tuple)) or len(a) != len(b):
            return False
        return all(map(json_equal, a, b))
    return False


def json_hash(value: object) -> int:
    """A hash consistent with :func:`json_equal`.

    Numbers use Python's numeric hash, which is scale-insensitive and computes powers of ten
    modulo a prime, so ``1E+999999999`` hashes without being expanded.
    """
    if value is True:
        return _TRUE_HASH
    if value is False:
        return _FALSE_HASH
    if value is None:
        return _NULL_HASH
    if isinstance(value, str):
        return hash(value)
    if _is_number(value):
        return hash(_number(value))  # type: ignore[arg-type]
    if isinstance(value, Mapping):
        return hash(frozenset((name, json_hash(member)) for name, member in value.items()))
    if isinstance(value, (list, tuple)):
        return hash(tuple(map(json_hash, value)))
    raise InvalidValueError(f"a JSON value cannot be a {type(value).__name__}")
