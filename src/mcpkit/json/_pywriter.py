"""The pure-Python reference encoder of docs/design/json-codec.md (the C twin is ``_speedups.c``).

Invariants:

- Output is compact UTF-8 JSON, members in mapping order, strings escaped by one fixed table
  (``_ESCAPES``); every string written passes the decoder's string checks under the same
  limits.
- The output never holds more than ``max_response_bytes``: a piece that would take it past
  the limit is dropped and writing stops.  One piece is at most one string's or number's
  spelling, and a string with more characters than ``max_token_units`` is refused before it
  is spelled.
- No recursion: open containers live on an explicit stack, and nesting is bounded by
  ``max_json_depth``, which also stops cycles.
- Only the base types' own methods spell values (``int.__repr__``, ``float.__repr__``,
  ``Decimal.__str__``, ``dict``/``list``/``tuple`` iteration), and types are tested on
  ``type(value)``, so no code of the value's class runs and overrides or a faked
  ``__class__`` cannot change what is written.

Failure order (the C encoder reports the same reason for every value): writing proceeds
depth-first, left to right, as a sequence of pieces -- ``[ ] { } , :``, each literal or number
spelling, and each string or member name as one quoted piece.  Before a piece is appended, if
the output would become longer than ``max_response_bytes`` -> SIZE.  A ``,`` is appended before
the next item or member is looked at.  Per value, in this order of type tests:

1. ``None``/``True``/``False`` -> the literal.
2. ``str`` (or subclass): a surrogate code point -> SURROGATE; then token units (the escaped
   spelling, quotes excluded) over ``max_token_units`` -> TOKEN_UNITS; then decoded UTF-16
   units over ``max_string_units`` -> STRING_UNITS; then the quoted piece (SIZE).
3. ``int`` (or subclass, ``bool`` excluded by 1): ``int.__repr__`` raising ``ValueError`` ->
   NUMBER.  ``float``: NaN or infinity -> NUMBER, else ``float.__repr__``.  ``Decimal``: not
   finite -> NUMBER, else ``Decimal.__str__``.
4. ``dict`` (or subclass): already ``max_json_depth`` containers open -> DEPTH, before ``{``.
   Each member: a non-``str`` name -> MEMBER_NAME, then the name as in 2, then ``:``, then
   the member value.  ``list``/``tuple`` (or subclass): DEPTH as for ``dict``, then ``[`` and
   the items.  Anything else -> TYPE.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Final, cast

from mcpkit._grammar import SURROGATE
from mcpkit.errors import OutputError, OutputFailure
from mcpkit.limits import Limits

__all__ = ["encode"]

# The escape table: seven two-character escapes, every other C0 control as \u00xx (lowercase
# hex); everything else, DEL and non-ASCII included, is written as itself.
_ESCAPES: Final[dict[int, str]] = {code: f"\\u{code:04x}" for code in range(0x20)}
_ESCAPES.update({0x22: '\\"', 0x5C: "\\\\", 0x0A: "\\n", 0x09: "\\t", 0x0D: "\\r"})
_ESCAPES.update({0x08: "\\b", 0x0C: "\\f"})
_NEEDS_ESCAPE: Final = re.compile('["\\\\\x00-\x1f]')
# Lead bytes of 4-byte UTF-8 sequences: one per supplementary character (2 UTF-16 units).
_LEAD4: Final = bytes(range(0xF0, 0x100))


def encode(value: object, limits: Limits) -> bytes:
    """Write ``value`` as compact JSON, or raise :class:`OutputError` with the first failure."""
    return _Writer(limits).write(value)


def _fail(reason: OutputFailure) -> OutputError:
    return OutputError(reason)


class _Writer:
    __slots__ = (
        "chunks",
        "max_bytes",
        "max_depth",
        "max_string_units",
        "max_token_units",
        "size",
    )

    def __init__(self, limits: Limits) -> None:
        self.chunks: list[bytes] = []
        self.size = 0
        self.max_bytes = limits.max_response_bytes
        self.max_depth = limits.max_json_depth
        self.max_string_units = limits.max_string_units
        self.max_token_units = limits.max_token_units

    def put(self, piece: bytes) -> None:
        size = self.size + len(piece)
        if size > self.max_bytes:
            raise _fail(OutputFailure.SIZE)
        self.chunks.append(piece)
        self.size = size

    def write(self, value: object) -> bytes:
        # Open containers, innermost last: an iterator over an array's items or over an
        # object's (name, member) pairs, and whether it is an object.
        stack: list[tuple[Iterator[object], bool]] = []
        while True:
            opened = self._value(value, stack)
            # Move to the next value to write: the first item of a container just opened, or
            # the next item of the innermost open container, closing the exhausted ones.
            while True:
                if not stack:
                    return b"".join(self.chunks)
                items, is_object = stack[-1]
                try:
                    item = next(items)
                except StopIteration:
                    stack.pop()
                    self.put(b"}" if is_object else b"]")
                    opened = False
                    continue
                if not opened:
                    self.put(b",")
                if is_object:
                    name, value = cast("tuple[object, object]", item)
                    if not issubclass(type(name), str):
                        raise _fail(OutputFailure.MEMBER_NAME)
                    self.put(self._string(cast(str, name)))
                    self.put(b":")
                else:
                    value = item
                break

    def _value(self, value: object, stack: list[tuple[Iterator[object], bool]]) -> bool:
        """Write a scalar, or open a container; return whether a container was opened."""
        if value is None:
            self.put(b"null")
            return False
        if value is True:
            self.put(b"true")
            return False
        if value is False:
            self.put(b"false")
            return False
        # type(), not isinstance(): a faked __class__ must not change how a value is written.
        kind = type(value)
        if issubclass(kind, str):
            self.put(self._string(cast(str, value)))
            return False
        if issubclass(kind, int):
            try:
                text = int.__repr__(cast(int, value))
            except ValueError:  # more digits than sys.get_int_max_str_digits() allows
                raise _fail(OutputFailure.NUMBER) from None
            self.put(text.encode("ascii"))
            return False
        if issubclass(kind, float):
            if not math.isfinite(cast(float, value)):
                raise _fail(OutputFailure.NUMBER)
            self.put(float.__repr__(cast(float, value)).encode("ascii"))
            return False
        if issubclass(kind, Decimal):
            if not Decimal.is_finite(cast(Decimal, value)):
                raise _fail(OutputFailure.NUMBER)
            text = Decimal.__str__(cast(Decimal, value))
            if not _readable_exponent(text):
                raise _fail(OutputFailure.NUMBER)
            self.put(text.encode("ascii"))
            return False
        if issubclass(kind, dict):
            if len(stack) >= self.max_depth:
                raise _fail(OutputFailure.DEPTH)
            self.put(b"{")
            stack.append((iter(dict.items(cast("dict[object, object]", value))), True))
            return True
        if issubclass(kind, (list, tuple)):
            if len(stack) >= self.max_depth:
                raise _fail(OutputFailure.DEPTH)
            self.put(b"[")
            if issubclass(kind, list):
                items = list.__iter__(cast("list[object]", value))
            else:
                items = tuple.__iter__(cast("tuple[object, ...]", value))
            stack.append((items, False))
            return True
        raise _fail(OutputFailure.TYPE)

    def _string(self, text: str) -> bytes:
        """The quoted, escaped UTF-8 spelling of a string or member name, after its checks."""
        if type(text) is not str:
            text = str.__str__(text)
        ascii_only = text.isascii()
        if not ascii_only and SURROGATE.search(text) is not None:
            raise _fail(OutputFailure.SURROGATE)
        # Every character writes at least one unit: refuse a huge string before copying it.
        if len(text) > self.max_token_units:
            raise _fail(OutputFailure.TOKEN_UNITS)
        spelling = text.translate(_ESCAPES) if _NEEDS_ESCAPE.search(text) else text
        body = spelling.encode("utf-8")
        supplementary = 0 if ascii_only else len(body) - len(body.translate(None, _LEAD4))
        if len(spelling) + supplementary > self.max_token_units:
            raise _fail(OutputFailure.TOKEN_UNITS)
        if len(text) + supplementary > self.max_string_units:
            raise _fail(OutputFailure.STRING_UNITS)
        return b'"' + body + b'"'


def _readable_exponent(text: str) -> bool:
    """Whether the exponent of a written number has at most 9 digits, as the reader requires."""
    mark = max(text.find("E"), text.find("e"))
    return mark < 0 or len(text) - mark - 2 <= 9
