"""The codec's acceptance cases: hostile inputs at full size, through both implementations.

Each must be refused (or accepted) by reading the input once, in bounded memory and roughly
linear time; the pure-Python reader runs them too, so a quadratic path would show as a hang.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from mcpkit.errors import ParseFailure
from mcpkit.limits import Limits

from .helpers import Impl, MiB, limits

BODY = 10 * MiB
WIDE_TOKENS = limits(max_token_units=16 * MiB)
DIGITS_5000 = b"1234567890" * 500

# (id, document, limits or None for the defaults, reason)
REFUSED: list[tuple[str, bytes, Limits | None, ParseFailure]] = [
    ("10-MiB-of-open-brackets-JL-03", b"[" * BODY, None, ParseFailure.DEPTH),
    (
        "10-MiB-string-of-u0061-escapes-JL-12",
        b'"' + b"\\u0061" * ((BODY - 2) // 6) + b'"',
        None,
        ParseFailure.TOKEN_UNITS,
    ),
    (
        "1048577-raw-units-is-token-first-JL-12",
        b'"' + b"a" * 1_048_577 + b'"',
        None,
        ParseFailure.TOKEN_UNITS,
    ),
    (
        "1048577-units-string-JL-11",
        b'"' + b"a" * 1_048_577 + b'"',
        WIDE_TOKENS,
        ParseFailure.STRING_UNITS,
    ),
    ("exponent-10-digits", b"1e9999999999", None, ParseFailure.NUMBER),
    ("10-MiB-of-commas-in-array-JL-04", b"[" + b"0," * (BODY // 2 - 1), None, ParseFailure.NODES),
    ("10-MiB-of-open-objects-JL-03", b'{"a":' * (BODY // 5), None, ParseFailure.DEPTH),
]


@pytest.mark.parametrize(
    ("document", "configured", "reason"),
    [pytest.param(d, lim, r, id=i) for i, d, lim, r in REFUSED],
)
def test_hostile_input_refused(
    impl: Impl, document: bytes, configured: Limits | None, reason: ParseFailure
) -> None:
    """Done-when: full-size hostile bodies fail with the documented reason."""
    assert len(document) <= BODY
    if configured is None:
        assert impl.parse_failure(document) is reason
    else:
        assert impl.parse_failure(document, configured) is reason


def test_5000_digit_integer_is_exact_decimal(impl: Impl) -> None:
    """Done-when: a 5,000-digit integer is an exact Decimal with exponent 0, never an int."""
    value = impl.decode(DIGITS_5000)
    assert type(value) is Decimal
    assert value.as_tuple().exponent == 0
    assert str(value).encode() == DIGITS_5000
    assert impl.encode(value) == DIGITS_5000
    negative = impl.decode(b"-" + DIGITS_5000)
    assert type(negative) is Decimal and str(negative).encode() == b"-" + DIGITS_5000


def test_9_digit_exponent_accepted_unexpanded(impl: Impl) -> None:
    """Done-when: ``1e999999999`` is ``Decimal("1E+999999999")`` and is written back as such."""
    value = impl.decode(b"1e999999999")
    assert type(value) is Decimal
    assert value.as_tuple() == Decimal("1E+999999999").as_tuple()
    assert impl.encode(value) == b"1E+999999999"
    assert impl.encode(impl.decode(b"[1e999999999,-2.5E-999999999]")) == (
        b"[1E+999999999,-2.5E-999999999]"
    )
