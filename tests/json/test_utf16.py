"""The seed's UTF-16 accounting table, read and written (JL-15, JL-16, JL-17, JL-18).

Each row is checked by decoding or encoding it three times over under limits set to exactly
its units (fits), one token unit less (TOKEN_UNITS) and one decoded unit less (STRING_UNITS),
for string values and member names alike.  That pins both counts without trusting any helper.
"""

from __future__ import annotations

import pytest

from mcpkit.errors import OutputFailure, ParseFailure
from mcpkit.json import JsonObject, utf16_units

from .helpers import Impl, limits

REPEAT = 3
ROCKET = "\U0001f680"

# Writing: (character, spelling the writer must use, decoded units, token units)
WRITE_TABLE: list[tuple[str, bytes, int, int]] = [
    ("a", b"a", 1, 1),
    ('"', b'\\"', 1, 2),
    ("\\", b"\\\\", 1, 2),
    ("\n", b"\\n", 1, 2),
    ("\t", b"\\t", 1, 2),
    ("\r", b"\\r", 1, 2),
    ("\b", b"\\b", 1, 2),
    ("\f", b"\\f", 1, 2),
    ("\x01", b"\\u0001", 1, 6),
    ("\x00", b"\\u0000", 1, 6),
    ("\x0b", b"\\u000b", 1, 6),
    ("\x1b", b"\\u001b", 1, 6),
    ("\x1f", b"\\u001f", 1, 6),
    ("/", b"/", 1, 1),
    ("\x7f", b"\x7f", 1, 1),
    ("\u00e9", "\u00e9".encode(), 1, 1),
    ("\u2028", "\u2028".encode(), 1, 1),
    ("\ufeff", "\ufeff".encode(), 1, 1),
    (ROCKET, ROCKET.encode(), 2, 2),
    ("\U0010ffff", "\U0010ffff".encode(), 2, 2),
]

# Reading: (client spelling, decoded text, decoded units, token units)
READ_TABLE: list[tuple[bytes, str, int, int]] = [
    (b"a", "a", 1, 1),
    (b'\\"', '"', 1, 2),
    (b"\\\\", "\\", 1, 2),
    (b"\\/", "/", 1, 2),
    (b"\\n", "\n", 1, 2),
    (b"\\t", "\t", 1, 2),
    (b"\\r", "\r", 1, 2),
    (b"\\b", "\b", 1, 2),
    (b"\\f", "\f", 1, 2),
    (b"\\u0001", "\x01", 1, 6),
    (b"\\u0061", "a", 1, 6),
    (b"\\uD83D\\uDE80", ROCKET, 2, 12),
    (ROCKET.encode(), ROCKET, 2, 2),
    ("\u00e9".encode(), "\u00e9", 1, 1),
    ("\u20ac".encode(), "\u20ac", 1, 1),
    (b"\x7f", "\x7f", 1, 1),
]


def _read_id(row: tuple[bytes, str, int, int]) -> str:
    return f"{row[0]!r}-{row[2]}/{row[3]}"


def _write_id(row: tuple[str, bytes, int, int]) -> str:
    return f"U+{ord(row[0]):04X}-{row[2]}/{row[3]}"


@pytest.mark.parametrize(
    ("text", "units"), [("", 0), ("a", 1), ("\u00e9", 1), (ROCKET, 2), ("a" + ROCKET + "b", 4)]
)
def test_utf16_units_JL_15(text: str, units: int) -> None:
    """JL-15: a supplementary character is two UTF-16 units, everything else one."""
    assert utf16_units(text) == units


@pytest.mark.parametrize(
    ("char", "spelling", "decoded", "tokens"),
    [pytest.param(*r, id=_write_id(r)) for r in WRITE_TABLE],
)
@pytest.mark.parametrize("as_name", [False, True], ids=["value", "member-name"])
def test_write_table_JL_15_JL_18(
    impl: Impl, as_name: bool, char: str, spelling: bytes, decoded: int, tokens: int
) -> None:
    """JL-15/JL-18: the writer's spelling and both unit counts of each table row."""
    text = char * REPEAT

    def value(text: str) -> object:
        return {text: 0} if as_name else text

    expected = b'"' + spelling * REPEAT + b'"'
    expected = b"{" + expected + b":0}" if as_name else expected
    exact = limits(max_token_units=tokens * REPEAT, max_string_units=decoded * REPEAT)
    assert impl.encode(value(text), limits=exact) == expected
    fewer_tokens = limits(max_token_units=tokens * REPEAT - 1)
    assert impl.output_failure(value(text), fewer_tokens) is OutputFailure.TOKEN_UNITS
    fewer_units = limits(max_string_units=decoded * REPEAT - 1)
    assert impl.output_failure(value(text), fewer_units) is OutputFailure.STRING_UNITS


@pytest.mark.parametrize(
    ("spelling", "text", "decoded", "tokens"),
    [pytest.param(*r, id=_read_id(r)) for r in READ_TABLE],
)
@pytest.mark.parametrize("as_name", [False, True], ids=["value", "member-name"])
def test_read_table_JL_15_JL_17(
    impl: Impl, as_name: bool, spelling: bytes, text: str, decoded: int, tokens: int
) -> None:
    """JL-15/JL-17: incoming token units follow the client's spelling (``\\u0061`` is 6)."""
    quoted = b'"' + spelling * REPEAT + b'"'
    document = b"{" + quoted + b":0}" if as_name else quoted
    exact = limits(max_token_units=tokens * REPEAT, max_string_units=decoded * REPEAT)
    value = impl.decode(document, limits=exact)
    assert value == (JsonObject({text * REPEAT: 0}) if as_name else text * REPEAT)
    fewer_tokens = limits(max_token_units=tokens * REPEAT - 1)
    assert impl.parse_failure(document, fewer_tokens) is ParseFailure.TOKEN_UNITS
    fewer_units = limits(max_string_units=decoded * REPEAT - 1)
    assert impl.parse_failure(document, fewer_units) is ParseFailure.STRING_UNITS


def test_both_counts_exceeded_reports_tokens_JL_12(impl: Impl) -> None:
    """JL-12: when both ceilings are exceeded, TOKEN_UNITS is reported (checked first)."""
    tight = limits(max_token_units=2, max_string_units=2)
    assert impl.parse_failure(b'"\\u0061\\u0061\\u0061"', tight) is ParseFailure.TOKEN_UNITS
    assert impl.output_failure("\x01\x01\x01", tight) is OutputFailure.TOKEN_UNITS


def test_all_c0_controls_written_JL_18(impl: Impl) -> None:
    """JL-18: every C0 control uses a two-character escape or lowercase ``\\u00xx``."""
    short = {0x08: b"\\b", 0x09: b"\\t", 0x0A: b"\\n", 0x0C: b"\\f", 0x0D: b"\\r"}
    text = "".join(map(chr, range(0x20)))
    expected = b"".join(short.get(cp, b"\\u%04x" % cp) for cp in range(0x20))
    assert impl.encode(text) == b'"' + expected + b'"'


def test_non_ascii_written_directly_JL_18(impl: Impl) -> None:
    """JL-18: non-ASCII, DEL, separators and emoji are written as UTF-8, never as ``\\u``."""
    text = "caf\u00e9 \u20ac \u2028\u2029 \x7f \U0001f680 \ufeff </script>"
    assert impl.encode(text) == b'"' + text.encode() + b'"'
    assert impl.encode({text: text}) == b'{"' + text.encode() + b'":"' + text.encode() + b'"}'


NEWLINES_AT_LIMIT = 524_288


@pytest.mark.parametrize(
    ("count", "fits"), [(NEWLINES_AT_LIMIT, True), (NEWLINES_AT_LIMIT + 1, False)]
)
def test_newline_only_string_written_JL_16(impl: Impl, count: int, fits: bool) -> None:
    """JL-16: a newline-only string fits at 524,288 newlines when written."""
    if fits:
        assert impl.encode("\n" * count) == b'"' + b"\\n" * count + b'"'
    else:
        assert impl.output_failure("\n" * count) is OutputFailure.TOKEN_UNITS


@pytest.mark.parametrize(
    ("count", "fits"), [(NEWLINES_AT_LIMIT, True), (NEWLINES_AT_LIMIT + 1, False)]
)
def test_newline_only_string_read_JL_16(impl: Impl, count: int, fits: bool) -> None:
    """JL-16: read as ``\\n`` escapes, the same string fits at 524,288 and fails one past."""
    document = b'"' + b"\\n" * count + b'"'
    if fits:
        assert impl.decode(document) == "\n" * count
    else:
        assert impl.parse_failure(document) is ParseFailure.TOKEN_UNITS
