"""Endpoint path validation.

Endpoint selection is an exact match on the raw request path, with no normalisation and no
redirect, so a declared path must already be the one spelling a client, proxy or
normalising library would send: an absolute, non-root ASCII path in RFC 3986 normal form.
Anything else is refused at construction, never rewritten.

Decisions beyond the rules above:

* Percent-encoding must be ``%`` plus two *uppercase* hex digits (RFC 3986 §6.2.2.1), and must
  not encode an unreserved character such as ``%41`` or ``%7E`` (§6.2.2.2): both have a
  shorter equivalent spelling, so the path would not be "already normalized".
* ``%2E`` / ``%2e`` spell a dot, so segments such as ``%2E``, ``.%2E`` or ``%2e%2e`` are dot
  segments and are refused as such (RFC 3986 §6.2.2.3 removes them after decoding).
* Percent-encoded controls (``%00``-``%1F``, ``%7F``) are refused: no legitimate path needs
  them and intermediaries treat them inconsistently.  Other encodings (``%20``, ``%2F``,
  ``%C3%A9``) are kept as distinct raw spellings; the bytes need not be UTF-8.
"""

from __future__ import annotations

import re
from typing import Final

from mcpkit.errors import ConfigurationError

__all__ = ["validate_endpoint_path"]

# RFC 3986 pchar without pct-encoded: unreserved / sub-delims / ":" / "@".
_UNRESERVED: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_PCHAR: Final = _UNRESERVED | frozenset("!$&'()*+,;=:@")
_PERCENT: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")
_TRIPLET: Final = re.compile(r"%([0-9A-Fa-f]{2})")
_CONTROL_OR_SPACE: Final = re.compile(r"[\x00-\x20\x7f]")


def _refuse(path: str, rule: str) -> ConfigurationError:
    return ConfigurationError(f"endpoint path {path!r} {rule}")


def validate_endpoint_path(path: str) -> str:
    """Return ``path`` unchanged if it is a valid endpoint path, else raise.

    Raises :class:`~mcpkit.errors.ConfigurationError` naming the first rule broken.
    """
    if not isinstance(path, str):
        raise ConfigurationError(f"endpoint path must be a str, not {type(path).__name__}")
    if not path.isascii():
        raise _refuse(path, "must be ASCII; percent-encode non-ASCII characters")
    if _CONTROL_OR_SPACE.search(path):
        raise _refuse(path, "must not contain whitespace or control characters")
    if not path.startswith("/"):
        raise _refuse(path, "must be absolute, starting with '/'")
    if path == "/":
        raise _refuse(path, "must not be the root '/'")
    if "?" in path:
        raise _refuse(path, "must not contain a query '?'")
    if "#" in path:
        raise _refuse(path, "must not contain a fragment '#'")
    if path.endswith("/"):
        raise _refuse(path, "must not end with '/'")
    if "//" in path:
        raise _refuse(path, "must not contain repeated slashes '//'")
    if _PERCENT.search(path):
        raise _refuse(path, "has a '%' not followed by two hex digits (RFC 3986 pct-encoded)")
    for segment in path[1:].split("/"):
        _check_segment(path, segment)
    return path


def _check_segment(path: str, segment: str) -> None:
    decoded_dots = _TRIPLET.sub(lambda m: "." if m[1] in ("2E", "2e") else "%", segment)
    if decoded_dots in (".", ".."):
        raise _refuse(path, "must not contain dot segments '.' or '..', encoded or not")
    for char in segment:
        if char not in _PCHAR and char != "%":
            if char in "{}":
                raise _refuse(path, "is fixed and cannot have path parameters '{...}'")
            raise _refuse(path, f"contains {char!r}, which must be percent-encoded (RFC 3986)")
    for match in _TRIPLET.finditer(segment):
        hex_digits = match[1]
        if hex_digits != hex_digits.upper():
            raise _refuse(path, "must use uppercase hex in percent-encoding (RFC 3986 6.2.2.1)")
        code = int(hex_digits, 16)
        if chr(code) in _UNRESERVED:
            raise _refuse(
                path, f"must not percent-encode the unreserved {chr(code)!r} (RFC 3986 6.2.2.2)"
            )
        if code < 0x20 or code == 0x7F:
            raise _refuse(path, "must not percent-encode control characters")
