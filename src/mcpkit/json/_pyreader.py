"""The pure-Python reference decoder of docs/design/json-codec.md (the C twin is ``_speedups.c``).

Invariants:

- Every limit is checked before the memory it guards is allocated: nesting when a ``[``/``{``
  is read, nodes when a value starts, both UTF-16 unit counts of a string before its ``str``
  is built.  ``b"[" * 10_485_760`` fails after 129 bytes; nothing after a failure is read.
- Work is linear in the input: strings, numbers and whitespace are consumed by compiled
  ``re`` patterns and ``bytes`` methods, never by a Python loop per byte.  The Python loop
  turns once per token (so at most a few times per node, bounded by ``max_json_nodes``),
  except over runs of simple values, which one regex validates and the standard library's C
  scanner converts (see ``_Runs``); every byte is scanned a bounded number of times.
- No recursion: open containers live on an explicit stack, so the interpreter's recursion
  limit never meets the input.
- No floats, and no ``int`` longer than 640 digits (CPython's minimum ``int_max_str_digits``,
  so ``int()`` never refuses), so the cost of a number is linear in its spelling.

Failure order (the C decoder reports the same reason for every input):

1. ``len(data) > max_request_bytes`` -> BODY_SIZE; then a leading ``EF BB BF`` -> BOM.
2. Left to right, skipping whitespace (space, tab, LF, CR) between tokens.  Where a value is
   expected, a byte that cannot start one (anything but ``{ [ " - 0-9 t f n``), or the end of
   input, -> SYNTAX.  A byte that can start one counts a node first (-> NODES), before the rest
   of the value is read; then ``[``/``{`` checks depth (-> DEPTH) before reading its contents.
3. Literals must be spelled exactly (else SYNTAX).  A number is read as far as the grammar
   ``-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?`` takes it (a ``-`` without a digit ->
   SYNTAX); then an exponent with more than 9 digits after leading zeros -> NUMBER, before the
   byte after the number is looked at (``01``, ``1.``, ``1e`` fail there, as SYNTAX).
4. A string or member name: (a) scan to the closing quote -- raw byte < 0x20, bad escape,
   short ``\\u`` or end of input -> SYNTAX; (b) token units -> TOKEN_UNITS, then decoded units
   -> STRING_UNITS; (c) the raw bytes as strict UTF-8 -> UTF8, then unpaired escaped
   surrogates -> SURROGATE.
5. In an object, ``{`` or ``,`` must be followed by a member name (``"``, else SYNTAX); once the
   name is read (4), a repeat -> DUPLICATE_MEMBER, before its ``:`` is looked at.
6. After a value: ``,`` or the matching close bracket (else SYNTAX); after the top-level value,
   only whitespace until the end (else SYNTAX).
"""

from __future__ import annotations

import functools
import json
import re
from _json import scanstring  # CPython's C helper: JSON escapes at C speed
from decimal import Decimal
from typing import Final, NamedTuple

from mcpkit._grammar import SURROGATE
from mcpkit.errors import ParseError, ParseFailure
from mcpkit.json._values import JsonValue, _array_from_list, _object_from_dict
from mcpkit.limits import Limits

__all__ = ["decode"]

_BOM: Final = b"\xef\xbb\xbf"
_WHITESPACE: Final = re.compile(rb"[ \t\n\r]*")
_WHITESPACE_BYTES: Final = frozenset(b" \t\n\r")
# The longest run the string grammar allows after an opening quote; the byte after it must be
# the closing quote.  Possessive quantifiers: no backtracking state is kept per escape.
_STRING_BODY: Final = re.compile(rb'(?:[^"\\\x00-\x1f]++|\\["\\/bfnrt]|\\u[0-9A-Fa-f]{4})*+')
_NUMBER: Final = re.compile(rb"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?(?:[eE][+-]?([0-9]+))?")
# UTF-8 continuation bytes (no UTF-16 unit of their own) and 4-byte lead bytes (two units).
_CONTINUATION: Final = bytes(range(0x80, 0xC0))
_LEAD4: Final = bytes(range(0xF0, 0x100))
_VALUE_START: Final = frozenset(b'{["-0123456789tfn')
_CONTAINER_START: Final = frozenset(b"[{")  # opens a container, so cannot start a run (_Runs)
_EAGER_INT_DIGITS: Final = 640
_RUN_STRING_CAP: Final = 256
_RUN_CHUNK: Final = 1024
_MAX_EXPONENT_DIGITS: Final = 9
_MAX_ADJUSTED: Final = 999_999_999  # |exponent| of the scientific spelling str(Decimal) writes

_OPEN_ARRAY: Final = 0x5B  # [
_CLOSE_ARRAY: Final = 0x5D  # ]
_OPEN_OBJECT: Final = 0x7B  # {
_CLOSE_OBJECT: Final = 0x7D  # }
_QUOTE: Final = 0x22  # "
_COMMA: Final = 0x2C  # ,
_COLON: Final = 0x3A  # :


def decode(data: bytes | bytearray | memoryview, limits: Limits) -> JsonValue:
    """Decode one strict JSON document, or raise :class:`ParseError` with the first failure."""
    size = data.nbytes if isinstance(data, memoryview) else len(data)
    if size > limits.max_request_bytes:  # before any copy
        raise ParseError(ParseFailure.BODY_SIZE)
    if type(data) is not bytes:
        data = bytes(data)
    if data.startswith(_BOM):
        raise ParseError(ParseFailure.BOM)
    return _Reader(data, limits).read()


class _Runs(NamedTuple):
    """Patterns for runs of simple array items or object members.

    A run is a sequence of simple values (or members), each followed by a comma, optionally
    ending with one followed by the closing bracket.  Long arrays and objects, and small flat
    ones, are mostly runs: one regex pass validates a chunk of a run and the standard library's
    C scanner converts it, instead of a Python loop turn per token.  A simple value is a
    literal, a number with at most 18 integer digits and at most 8 exponent digits (not the
    integer ``-0``), or an
    ASCII string without escapes of at most k characters (k never above either unit limit); a
    simple member has such a string as its name.  For these values the scanner builds exactly
    what the general path builds.  Nothing in a run can fail but a repeated name, checked in
    document order, or the node count: a chunk (at most _RUN_CHUNK + 1 values) is only taken
    while that many more nodes are allowed, and the general path reads the last ones one by
    one.  So runs change speed, never a result or a failure reason, and no value is built
    beyond the node limit.
    """

    array: re.Pattern[bytes]
    object: re.Pattern[bytes]


@functools.cache
def _runs(k: int) -> _Runs:
    ws = rb"[ \t\n\r]*"
    text = rb'"[^"\\\x00-\x1f\x80-\xff]{0,%d}"' % k
    # No "-0" integer (it decodes to Decimal("-0")) and at most 8 exponent digits (so the
    # adjusted-exponent check of _number can never fail inside a run).
    number = (
        rb"(?:0|-?[1-9][0-9]{0,17}|-0(?=[.eE]))(?:\.[0-9]+)?(?:[eE][+-]?[0-9]{1,8})?(?![0-9.eE])"
    )
    value = rb"(?:" + number + rb"|" + text + rb"|true|false|null)"
    member = text + ws + rb":" + ws + value
    chunk = _RUN_CHUNK
    return _Runs(
        array=re.compile(rb"(?:%s%s,%s){0,%d}+(?:%s%s\])?+" % (value, ws, ws, chunk, value, ws)),
        object=re.compile(rb"(?:%s%s,%s){0,%d}+(?:%s%s\})?+" % (member, ws, ws, chunk, member, ws)),
    )


# Converts validated runs only; objects come back as lists of (name, value) pairs, so that
# names are checked here, in order.
_RUN_SCANNER: Final = json.JSONDecoder(parse_float=Decimal, object_pairs_hook=list)


def _fail(reason: ParseFailure) -> ParseError:
    return ParseError(reason)


def _frozen(container: list[JsonValue] | dict[str, JsonValue]) -> JsonValue:
    """A complete array or object as its immutable JSON value."""
    if isinstance(container, list):
        return _array_from_list(container)
    return _object_from_dict(container)


def _skip(data: bytes, pos: int) -> int:
    """The position of the first byte at or after pos that is not JSON whitespace."""
    match = _WHITESPACE.match(data, pos)
    return pos if match is None else match.end()


class _Reader:
    __slots__ = (
        "data",
        "end",
        "max_depth",
        "max_nodes",
        "max_string_units",
        "max_token_units",
        "runs",
    )

    def __init__(self, data: bytes, limits: Limits) -> None:
        self.data = data
        self.end = len(data)
        self.max_depth = limits.max_json_depth
        self.max_nodes = limits.max_json_nodes
        self.max_string_units = limits.max_string_units
        self.max_token_units = limits.max_token_units
        self.runs = _runs(min(limits.max_token_units, limits.max_string_units, _RUN_STRING_CAP))

    def read(self) -> JsonValue:
        data, end = self.data, self.end
        # Open containers, innermost last; names[i] is the pending member name of the i-th
        # open object (arrays push nothing there).
        containers: list[list[JsonValue] | dict[str, JsonValue]] = []
        names: list[str] = []
        nodes = 0
        closed: bool
        pos = _skip(data, 0)
        while True:
            # A value is expected at pos.
            byte = data[pos] if pos < end else -1
            if byte not in _VALUE_START:
                raise _fail(ParseFailure.SYNTAX)
            nodes += 1
            if nodes > self.max_nodes:
                raise _fail(ParseFailure.NODES)
            value: JsonValue
            if byte in _CONTAINER_START:
                if len(containers) >= self.max_depth:
                    raise _fail(ParseFailure.DEPTH)
                pos = _skip(data, pos + 1)
                opened: list[JsonValue] | dict[str, JsonValue]
                opened, close = ([], _CLOSE_ARRAY) if byte == _OPEN_ARRAY else ({}, _CLOSE_OBJECT)
                if pos < end and data[pos] == close:
                    pos += 1
                else:
                    pos, nodes, closed = self._run(pos, opened, nodes)
                    if not closed:
                        containers.append(opened)
                        if isinstance(opened, dict):
                            pos = self._member_name(pos, opened, names)
                        continue
                value = _frozen(opened)
            elif byte == _QUOTE:
                value, pos = self._string(pos)
            elif byte == 0x74:  # t
                if not data.startswith(b"true", pos):
                    raise _fail(ParseFailure.SYNTAX)
                value = True
                pos += 4
            elif byte == 0x66:  # f
                if not data.startswith(b"false", pos):
                    raise _fail(ParseFailure.SYNTAX)
                value = False
                pos += 5
            elif byte == 0x6E:  # n
                if not data.startswith(b"null", pos):
                    raise _fail(ParseFailure.SYNTAX)
                value = None
                pos += 4
            else:
                value, pos = self._number(pos)

            # A value ends at pos: store it, and close every container that ends with it.
            while True:
                if not containers:
                    if _skip(data, pos) != end:
                        raise _fail(ParseFailure.SYNTAX)
                    return value
                parent = containers[-1]
                if isinstance(parent, list):
                    parent.append(value)
                    close = _CLOSE_ARRAY
                else:
                    parent[names.pop()] = value
                    close = _CLOSE_OBJECT
                if pos < end and data[pos] in _WHITESPACE_BYTES:
                    pos = _skip(data, pos)
                byte = data[pos] if pos < end else -1
                if byte == _COMMA:
                    pos = _skip(data, pos + 1)
                    if isinstance(parent, list):
                        closed = False
                        if pos < end and data[pos] not in _CONTAINER_START:
                            pos, nodes, closed = self._run(pos, parent, nodes)
                    else:
                        pos, nodes, closed = self._run(pos, parent, nodes)
                        if not closed:
                            pos = self._member_name(pos, parent, names)
                    if not closed:
                        break
                elif byte == close:
                    pos += 1
                else:
                    raise _fail(ParseFailure.SYNTAX)
                containers.pop()
                value = _frozen(parent)

    def _run(
        self, pos: int, parent: list[JsonValue] | dict[str, JsonValue], nodes: int
    ) -> tuple[int, int, bool]:
        """Add the run of simple items or members at pos (see _Runs) to parent.

        Return the position after the run, the new node count, and whether the run ended with
        the container's closing bracket.
        """
        if isinstance(parent, list):
            pattern, opening, closing = self.runs.array, "[", b"]"
        else:
            pattern, opening, closing = self.runs.object, "{", b"}"
        data = self.data
        while nodes + _RUN_CHUNK < self.max_nodes:  # room for a whole chunk of nodes
            run = pattern.match(data, pos)
            stop = pos if run is None else run.end()
            if stop == pos:
                break
            closed = data[stop - 1] == closing[0]
            text = data[pos:stop] if closed else data[pos : data.rindex(b",", pos, stop)] + closing
            values = _RUN_SCANNER.raw_decode(opening + text.decode("ascii"))[0]
            if isinstance(parent, list):
                parent += values
            else:  # (name, value) pairs
                for name, value in values:
                    if name in parent:
                        raise _fail(ParseFailure.DUPLICATE_MEMBER)
                    parent[name] = value
            nodes += len(values)
            pos = stop
            if closed:
                return pos, nodes, True
        return pos, nodes, False

    def _member_name(self, pos: int, members: dict[str, JsonValue], names: list[str]) -> int:
        """Read ``"name" :`` at pos; return the position of the member's value."""
        data = self.data
        if pos >= self.end or data[pos] != _QUOTE:
            raise _fail(ParseFailure.SYNTAX)
        name, pos = self._string(pos)
        if name in members:
            raise _fail(ParseFailure.DUPLICATE_MEMBER)
        pos = _skip(data, pos)
        if pos >= self.end or data[pos] != _COLON:
            raise _fail(ParseFailure.SYNTAX)
        names.append(name)
        return _skip(data, pos + 1)

    def _string(self, pos: int) -> tuple[str, int]:
        """Read the string whose opening quote is at pos; return it and the position after."""
        data = self.data
        start = pos + 1
        body = _STRING_BODY.match(data, start)
        close = start if body is None else body.end()
        if close >= self.end or data[close] != _QUOTE:
            raise _fail(ParseFailure.SYNTAX)  # control byte, bad escape or end of input
        raw = data[start:close]
        ascii_only = raw.isascii()

        # Unit counts from the spelling alone (exact for valid UTF-8; invalid UTF-8 fails
        # below), so an oversized string is refused before it is decoded.
        size = len(raw)
        token_units = size
        if not ascii_only:
            token_units -= size - len(raw.translate(None, _CONTINUATION))
            token_units += size - len(raw.translate(None, _LEAD4))
        if token_units > self.max_token_units:
            raise _fail(ParseFailure.TOKEN_UNITS)
        u_escapes = 0
        escaped = b"\\" in raw
        if escaped:
            # Removing the escaped backslashes left to right mirrors how escapes are read, so
            # every backslash left starts an escape other than \\, and "\u" is a \u escape.
            rest = raw.replace(b"\\\\", b"")
            u_escapes = rest.count(b"\\u")
            two_char = (size - len(rest)) // 2 + rest.count(b"\\") - u_escapes
            if token_units - two_char - 5 * u_escapes > self.max_string_units:
                raise _fail(ParseFailure.STRING_UNITS)
        elif token_units > self.max_string_units:
            raise _fail(ParseFailure.STRING_UNITS)

        if ascii_only:
            text = raw.decode("ascii")
        else:
            try:
                # CPython's strict decoder refuses overlongs, encoded surrogates, code points
                # above U+10FFFF, truncated sequences and stray continuation bytes.
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise _fail(ParseFailure.UTF8) from None
        if escaped:
            # scanstring joins a \uD800-\uDBFF escape with an immediately following
            # \uDC00-\uDFFF escape and leaves every other escaped surrogate alone; raw
            # surrogates cannot occur (refused above), so any surrogate left is unpaired.
            text = scanstring(text + '"', 0, True)[0]
            if u_escapes and not text.isascii() and SURROGATE.search(text) is not None:
                raise _fail(ParseFailure.SURROGATE)
        return text, close + 1

    def _number(self, pos: int) -> tuple[int | Decimal, int]:
        """Read the number starting at pos; return it and the position after it."""
        match = _NUMBER.match(self.data, pos)
        if match is None:
            raise _fail(ParseFailure.SYNTAX)  # "-" not followed by a digit
        fraction, exponent = match.groups()
        spelling = match.group()
        if exponent is not None and len(exponent.lstrip(b"0")) > _MAX_EXPONENT_DIGITS:
            raise _fail(ParseFailure.NUMBER)
        if fraction is None and exponent is None:
            digits = len(spelling) - (spelling[0] == 0x2D)  # the minus sign is not a digit
            if digits <= _EAGER_INT_DIGITS and spelling != b"-0":
                return int(spelling), match.end()
            # "-0" stays Decimal("-0"): an int cannot keep the sign, and writing it back must
            # give the same bytes.
        # Decimal keeps the exact value and scale; the 9-digit exponent bound keeps it within
        # what Decimal represents without consulting a context.
        number = Decimal(spelling.decode("ascii"))
        if not -_MAX_ADJUSTED <= number.adjusted() <= _MAX_ADJUSTED:
            # str(number) would need a 10-digit exponent, which this reader refuses: keep every
            # decoded value writable and readable again.
            raise _fail(ParseFailure.NUMBER)
        return number, match.end()
