"""The ``Mcp-Param-*`` mirrored-header check of ``tools/call``.

A tool property annotated ``x-mcp-header: "Tenant"`` (``ToolSchema.headers``, one
:class:`~mcpkit.schema.HeaderDeclaration` each) is mirrored by the client into the HTTP header
``Mcp-Param-Tenant``.  :func:`check_mirrored_headers` checks that both copies agree; it runs
after admission and before the handler, and every failure is the one fixed
:class:`~mcpkit.errors.HeaderMismatch` (-32020, HTTP 400, ``"Header mismatch"``): neither
header nor argument text ever reaches the error.  Both copies are untrusted, so the
JSON side is checked as strictly as the header side.

Rules, in the order they are applied:

1. **Collect.**  One pass over ``headers`` (pairs or a mapping).  A name is matched
   case-insensitively, ASCII only: a name that is not ASCII is never a declared header (so
   ``str.lower`` cannot fold, e.g., the Kelvin sign ``U+212A`` into ``k``).  A declared header
   that occurs more than once, in any spelling of its name, is refused.  ``Mcp-Param-*`` headers
   that no declaration names are **ignored**: the MCP specification requires only that a
   *recognized* ``Mcp-Param-*`` header be valid, and an unrecognized one is never read or used.
2. Then each declaration, in order:

   a. **Locate the argument** by following ``declaration.path`` through JSON objects.  An absent
      argument (or a path through a non-object) counts as ``null``.
   b. **Absent or null argument**: the header never supplies it, so a header that is
      present is refused (a header alone is insufficient); with no header, there is
      nothing to mirror and the declaration passes (a null or absent value
      means the header must be absent).
   c. **Missing header** for a non-null argument is refused.
   d. **Decode the header value.**  Optional whitespace (SP, HTAB) around it is trimmed.  A
      value of the exact form ``=?base64?<payload>?=`` (lowercase markers) is the SEP-2243
      sentinel: the payload must be canonical standard base64 (alphabet ``A-Za-z0-9+/``, ``=``
      padding required, no whitespace, zero trailing bits; i.e. it re-encodes to itself) of
      valid UTF-8; decoded controls are allowed, because a value that needs them is exactly
      what the sentinel exists for.  Any other value is literal and must be visible ASCII,
      space or tab.  Either way the decoded value is at most ``limits.max_header_param_bytes``
      (16 KiB) UTF-8 bytes; the length is checked before anything is decoded.
   e. **Compare** by the declared type:

      * ``string``: the argument is a JSON string equal to the decoded value, code point for
        code point (no normalisation, no case folding).
      * ``boolean``: the argument is a JSON boolean and the decoded value is exactly ``true``
        or ``false`` (lowercase).
      * ``integer``: the decoded value is canonical decimal ``0|-?[1-9][0-9]*`` of ASCII digits
        (``+1``, ``01``, ``-0``, ``1.0`` and Unicode digits are refused); the argument is
        a JSON number (never a boolean) with an integral value, so ``1.0`` and ``1e0`` match
        ``1``; both lie within ±9,007,199,254,740,991; and they are
        numerically equal.  A decimal argument is judged from its sign, digits and exponent, so
        ``1e999999999`` is refused at once as out of range, never expanded.

Work is linear in the size of the headers and of the arguments on the declared paths; there is
no recursion.  Repetition can only be detected when the caller passes the header pairs as they
arrived; a mapping that already merged repeated fields cannot show it.
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Final

from mcpkit._grammar import FIELD_TEXT, OWS_CHARS
from mcpkit.errors import HeaderMismatch
from mcpkit.json import JsonObject, JsonValue
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.schema import HeaderDeclaration

__all__ = ["MAX_SAFE_INTEGER", "PARAM_HEADER_PREFIX", "check_mirrored_headers"]

PARAM_HEADER_PREFIX: Final = "mcp-param-"
MAX_SAFE_INTEGER: Final = 9_007_199_254_740_991
_MAX_SAFE_DIGITS: Final = len(str(MAX_SAFE_INTEGER))  # 16

_SENTINEL_OPEN: Final = "=?base64?"
_SENTINEL_CLOSE: Final = "?="
_INTEGER: Final = re.compile(r"0|-?[1-9][0-9]*", re.ASCII)


def check_mirrored_headers(
    declarations: tuple[HeaderDeclaration, ...],
    arguments: JsonObject,
    headers: Sequence[tuple[str, str]] | Mapping[str, str],
    *,
    limits: Limits = DEFAULT_LIMITS,
) -> None:
    """Check every ``Mcp-Param-*`` header a tool declares against its JSON argument.

    Returns ``None`` when all declarations agree; raises :class:`HeaderMismatch` otherwise.
    The rules and their order are in the module docstring.
    """
    if not declarations:
        return
    wanted = {declaration.suffix.lower() for declaration in declarations}
    found = _collect(wanted, headers)
    for declaration in declarations:
        value = _locate(arguments, declaration.path)
        suffix = declaration.suffix.lower()
        header = found.get(suffix)
        if value is None:
            if header is not None:
                raise HeaderMismatch(PARAM_HEADER_PREFIX + suffix)
            continue
        if header is None:
            raise HeaderMismatch(PARAM_HEADER_PREFIX + suffix)
        try:
            text = _decode(header, limits.max_header_param_bytes)
        except HeaderMismatch:
            raise HeaderMismatch(PARAM_HEADER_PREFIX + suffix) from None
        if declaration.type == "string":
            agrees = type(value) is str and value == text
        elif declaration.type == "integer":
            agrees = _integer_agrees(value, text)
        else:
            agrees = type(value) is bool and text == ("true" if value else "false")
        if not agrees:
            raise HeaderMismatch(PARAM_HEADER_PREFIX + suffix)


def _collect(
    wanted: set[str], headers: Sequence[tuple[str, str]] | Mapping[str, str]
) -> dict[str, str]:
    """The raw value of each declared header (keyed by lowercase suffix); refuse repeats."""
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    found: dict[str, str] = {}
    prefix_length = len(PARAM_HEADER_PREFIX)
    for name, value in pairs:
        if not name.isascii():
            continue
        lowered = name.lower()
        if not lowered.startswith(PARAM_HEADER_PREFIX):
            continue
        suffix = lowered[prefix_length:]
        if suffix not in wanted:
            continue  # an undeclared Mcp-Param-* header is ignored (module docstring, rule 1)
        if suffix in found:
            raise HeaderMismatch(PARAM_HEADER_PREFIX + suffix)
        found[suffix] = value
    return found


def _locate(arguments: JsonObject, path: tuple[str, ...]) -> JsonValue:
    """The argument at ``path``, or ``None`` when it is absent, null or behind a non-object."""
    current: JsonValue = arguments
    for key in path:
        if not isinstance(current, Mapping):
            return None
        current = current.get(key)
    return current


def _decode(raw: str, limit: int) -> str:
    """The decoded text of one header value (rule 2d), or raise."""
    value = raw.strip(OWS_CHARS)
    if (
        value.startswith(_SENTINEL_OPEN)
        and value.endswith(_SENTINEL_CLOSE)
        and len(value) >= len(_SENTINEL_OPEN) + len(_SENTINEL_CLOSE)
    ):
        payload = value[len(_SENTINEL_OPEN) : len(value) - len(_SENTINEL_CLOSE)]
        # 4 payload characters per 3 bytes: a longer payload cannot decode within the limit.
        if len(payload) > 4 * -(-limit // 3) or not payload.isascii():
            raise HeaderMismatch()
        encoded = payload.encode("ascii")
        try:
            data = binascii.a2b_base64(encoded, strict_mode=True)
        except binascii.Error:
            raise HeaderMismatch() from None
        if len(data) > limit or binascii.b2a_base64(data, newline=False) != encoded:
            raise HeaderMismatch()
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise HeaderMismatch() from None
    if len(value) > limit or FIELD_TEXT.fullmatch(value) is None:
        raise HeaderMismatch()
    return value


def _integer_agrees(value: JsonValue, text: str) -> bool:
    """Rule 2e for ``integer``: canonical, safe header; integral, safe argument; equal."""
    if not text.isascii() or _INTEGER.fullmatch(text) is None:
        return False
    if len(text.lstrip("-")) > _MAX_SAFE_DIGITS:
        return False
    header = int(text)
    if abs(header) > MAX_SAFE_INTEGER:
        return False
    if type(value) is int:
        number: int | None = value
    elif type(value) is Decimal:
        number = _safe_integral(value)
    else:
        return False  # a string, a boolean (never a number), null, or a container
    return number is not None and abs(number) <= MAX_SAFE_INTEGER and number == header


def _safe_integral(value: Decimal) -> int | None:
    """The integer ``value`` denotes, or ``None`` if it is not integral or has more than 16 digits.

    Judged from the sign, digit tuple and exponent, so the work is linear in the digits the
    JSON text actually held: ``1e999999999`` is refused without ever being expanded.
    """
    if not value.is_finite():
        return None
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)  # finite
    if not any(digits):
        return 0
    if exponent < 0:
        if any(digits[exponent:]):
            return None  # a nonzero fractional digit
        digits = digits[:exponent]
        exponent = 0
    # A nonzero Decimal's digit tuple has no leading zero, so its length is the magnitude's.
    if len(digits) + exponent > _MAX_SAFE_DIGITS:
        return None
    magnitude = int("".join(map(str, digits)) + "0" * exponent)  # at most 16 characters
    return -magnitude if sign else magnitude
