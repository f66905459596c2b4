"""The key-free bytes of protected request state: canonical JSON, the binding, the plaintext.

These are the parts of the ``soklet-mcp-protection-v1`` profile that a
second implementation must reproduce byte for byte, so they live apart from the AEAD layer
(``_protection``) and can be tested against fixed bytes on their own.

Canonical JSON is the profile's dedicated spelling, not mcpkit's wire writer: members sorted by
the UTF-8 bytes of their names, no whitespace, the seven short escapes and lowercase
``\\u00xx`` for other controls, every other character as raw UTF-8, and every number in the form
of Java's ``BigDecimal.stripTrailingZeros().toString()`` (so ``100`` is ``1E+2``).  Numbers in
application state therefore come back equal in value but possibly respelled.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Final

from mcpkit.errors import InternalError, InvalidParams, InvalidValueError, ParseError
from mcpkit.json import JsonObject, JsonValue, decode
from mcpkit.limits import Limits

__all__ = [
    "PlaintextState",
    "binding",
    "binding_digest",
    "canonical_json",
    "canonical_params",
    "decode_plaintext",
    "encode_plaintext",
]

_PARAMS_LABEL: Final = b"soklet-mcp-request-state-params-v1\x00"
_BINDING_LABEL: Final = b"soklet-mcp-request-state-binding-v1\x00"
_PLAINTEXT_VERSION: Final = 1
_NS: Final = 1_000_000_000
_I64: Final = (-(2**63), 2**63 - 1)
_I32: Final = (-(2**31), 2**31 - 1)
# The longest integer id the codec decodes as an ``int`` (its eager-int bound); a longer
# integer is a Decimal there and never a request id, so no sealed id can be longer.
_MAX_ID_DIGITS: Final = 640
_MAX_PARTITION_BYTES: Final = 256
# Canonical params get their own headroom, twice the largest request body, so params
# the codec accepted always fit (respelling at most doubles a number, e.g. 1E-6 -> 0.000001).
PARAMS_HEADROOM_CHARS = 32 * 1024 * 1024
# JSON values are at most 512 deep by construction; the cap also stops a cyclic plain container.
_MAX_DEPTH: Final = 512

_ESCAPES: Final = {code: f"\\u{code:04x}" for code in range(0x20)} | {
    0x08: "\\b",
    0x09: "\\t",
    0x0A: "\\n",
    0x0C: "\\f",
    0x0D: "\\r",
    0x22: '\\"',
    0x5C: "\\\\",
}
_NEEDS_ESCAPE: Final = re.compile('["\\\\\x00-\x1f]')
# Only stripped from params: the top level, and the immediate members of params._meta.
_TRANSIENT_PARAMS: Final = frozenset({"inputResponses", "requestState"})
_TRANSIENT_META: Final = frozenset({"progressToken", "traceparent", "tracestate", "baggage"})
_MEMBERS: Final = frozenset(
    {
        "version",
        "bindingDigest",
        "issuedAtEpochSecond",
        "issuedAtNanoAdjustment",
        "expiresAtEpochSecond",
        "expiresAtNanoAdjustment",
        "round",
        "originatingRequestId",
        "state",
    }
)


# --- canonical JSON -------------------------------------------------------------------------


def _string(text: str) -> str:
    if _NEEDS_ESCAPE.search(text) is not None:
        text = text.translate(_ESCAPES)
    return f'"{text}"'


def _number(value: int | Decimal) -> str:
    """``BigDecimal.stripTrailingZeros().toString()``: Python's ``str(Decimal)`` applies the same
    plain-or-scientific rule, so only the trailing zeros need stripping (without a context,
    which would round)."""
    if type(value) is int and -(10**18) < value < 10**18 and value % 10:
        return str(value)  # the common case: nothing to strip
    number = value if isinstance(value, Decimal) else Decimal(value)
    if not number.is_finite():
        raise InvalidValueError("a JSON number must be finite")
    sign, digits, exponent = number.as_tuple()
    end = len(digits)
    while end and digits[end - 1] == 0:
        end -= 1
    if not end:
        return "0"  # every zero, of any sign or scale
    assert isinstance(exponent, int)
    return str(Decimal((sign, digits[:end], exponent + len(digits) - end)))


def _scalar(value: object) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (int, Decimal)):
        return _number(value)
    raise InvalidValueError(f"a JSON value cannot be a {type(value).__name__}")


class _Frame:
    """One open container: its children still to write and its closing bracket."""

    __slots__ = ("close", "first", "items", "names")

    def __init__(self, value: dict[object, object] | list[object] | tuple[object, ...]) -> None:
        if isinstance(value, dict):
            names: list[str] = []
            for name in value:
                if not isinstance(name, str):
                    raise InvalidValueError("a JSON member name must be a str")
                names.append(name)
            # Code-point order is UTF-8 byte order (UTF-8 preserves it), unlike UTF-16 order.
            names.sort()
            self.names: list[str] | None = names
            self.items: list[object] = [value[name] for name in names]
            self.close = "}"
        else:
            self.names = None
            self.items = list(value)
            self.close = "]"
        self.items.reverse()  # pop() from the end gives document order
        if self.names is not None:
            self.names.reverse()
        self.first = True


def canonical_json(value: object, *, max_chars: int | None = None) -> bytes:
    """The canonical UTF-8 bytes of a JSON value.

    Objects may be ``JsonObject`` or ``dict`` and arrays ``JsonArray``, ``list`` or ``tuple``.
    Written without recursion; ``max_chars`` stops early once the text is certainly longer
    (shared sub-values can make a small value's spelling huge).  Raises
    :class:`~mcpkit.errors.InvalidValueError` for anything that is not JSON.
    """
    parts: list[str] = []
    size = 0
    stack: list[_Frame] = []
    current: object = value
    while True:
        if isinstance(current, (dict, list, tuple)):
            if len(stack) >= _MAX_DEPTH:
                raise InvalidValueError("a JSON value nests too deeply")
            frame = _Frame(current)
            stack.append(frame)
            piece = "{" if frame.names is not None else "["
        else:
            piece = _scalar(current)
        parts.append(piece)
        size += len(piece)
        if max_chars is not None and size > max_chars:
            raise InvalidValueError("the JSON text is too long")
        # Find the next value to write, closing finished containers on the way.
        while stack:
            frame = stack[-1]
            if not frame.items:
                parts.append(frame.close)
                size += 1
                stack.pop()
                continue
            lead = "" if frame.first else ","
            frame.first = False
            if frame.names is not None:
                lead += _string(frame.names.pop()) + ":"
            parts.append(lead)
            size += len(lead)
            current = frame.items.pop()
            break
        else:
            break
    if max_chars is not None and size > max_chars:
        raise InvalidValueError("the JSON text is too long")
    try:
        return "".join(parts).encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidValueError("text contains an unpaired surrogate") from None


# --- binding --------------------------------------------------------------------------------


def canonical_params(params: JsonObject) -> bytes:
    """Canonical ``params`` without the members that legitimately change between retries:
    top-level ``inputResponses`` and ``requestState``, and ``_meta``'s own ``progressToken``,
    ``traceparent``, ``tracestate`` and ``baggage``.  Everything else, nested namesakes
    included, stays bound.  Over :data:`PARAMS_HEADROOM_CHARS` is
    :class:`~mcpkit.errors.InvalidValueError`."""
    kept: dict[str, object] = {
        name: member for name, member in params.items() if name not in _TRANSIENT_PARAMS
    }
    meta = kept.get("_meta")
    if isinstance(meta, dict):
        kept["_meta"] = {
            name: member for name, member in meta.items() if name not in _TRANSIENT_META
        }
    return canonical_json(kept, max_chars=PARAMS_HEADROOM_CHARS)


def _framed(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise InternalError() from None


def binding(
    *,
    endpoint_path: str,
    protocol_version: str,
    method: str,
    authorization: str | None,
    params: JsonObject,
) -> bytes:
    """The external binding bytes that sealed state is tied to.

    ``authorization`` is the application's authorization-partition key (``None`` for the
    endpoint's anonymous partition).  A key that is not 1-256 UTF-8 bytes is an application
    contract violation: :class:`~mcpkit.errors.InternalError`.  Params that cannot be bound
    (over the canonical headroom) are :class:`~mcpkit.errors.InvalidParams`.
    """
    if authorization is None:
        partition = b"\x00" + _framed(b"")
    else:
        key = _utf8(authorization)
        if not 1 <= len(key) <= _MAX_PARTITION_BYTES:
            raise InternalError()
        partition = b"\x01" + _framed(key)
    try:
        canonical = canonical_params(params)
    except InvalidValueError:
        raise InvalidParams() from None
    params_digest = hashlib.sha256(_PARAMS_LABEL + _framed(canonical)).digest()
    return b"".join(
        (
            _BINDING_LABEL,
            _framed(_utf8(endpoint_path)),
            _framed(_utf8(protocol_version)),
            _framed(_utf8(method)),
            partition,
            params_digest,
        )
    )


def binding_digest(binding_bytes: bytes) -> str:
    """The plaintext's ``bindingDigest``: unpadded base64url of SHA-256 (43 characters)."""
    digest = hashlib.sha256(binding_bytes).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


# --- plaintext ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PlaintextState:
    """What version 1 of the sealed plaintext says.  Instants are nanoseconds since the epoch;
    the wire splits each into signed 64-bit seconds and a 0..999,999,999 nanosecond part."""

    binding_digest: str
    issued_at_ns: int
    expires_at_ns: int
    round: int
    originating_request_id: str | int
    state: JsonValue


def _split(ns: int) -> tuple[int, int]:
    if isinstance(ns, bool) or not isinstance(ns, int):
        raise InvalidValueError("an instant must be an int of nanoseconds")
    seconds, nanos = divmod(ns, _NS)
    if not _I64[0] <= seconds <= _I64[1]:
        raise InvalidValueError("an instant must fit signed 64-bit epoch seconds")
    return seconds, nanos


def encode_plaintext(plaintext: PlaintextState, *, max_chars: int | None = None) -> bytes:
    """The canonical plaintext bytes; :class:`~mcpkit.errors.InvalidValueError` if a field is
    out of range, the state is not JSON, or the text is over ``max_chars``."""
    issued_seconds, issued_nanos = _split(plaintext.issued_at_ns)
    expires_seconds, expires_nanos = _split(plaintext.expires_at_ns)
    if not isinstance(plaintext.binding_digest, str):
        raise InvalidValueError("bindingDigest must be a str")
    round_ = plaintext.round
    if isinstance(round_, bool) or not isinstance(round_, int) or not -(2**31) <= round_ < 2**31:
        raise InvalidValueError("round must be a signed 32-bit int")
    request_id = plaintext.originating_request_id
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
        raise InvalidValueError("a request id must be a str or an int")
    return canonical_json(
        {
            "version": _PLAINTEXT_VERSION,
            "bindingDigest": plaintext.binding_digest,
            "issuedAtEpochSecond": issued_seconds,
            "issuedAtNanoAdjustment": issued_nanos,
            "expiresAtEpochSecond": expires_seconds,
            "expiresAtNanoAdjustment": expires_nanos,
            "round": round_,
            "originatingRequestId": request_id,
            "state": plaintext.state,
        },
        max_chars=max_chars,
    )


def _integral(value: JsonValue, max_digits: int) -> int:
    """An integral JSON number of at most ``max_digits`` digits.  Canonical spelling makes
    ``10`` a Decimal (``1E+1``), so integral Decimals count; their size is checked before an
    ``int`` is built."""
    if isinstance(value, Decimal):
        # Canonical text has no trailing zeros, so an integral value never has a negative
        # exponent here.
        exponent = value.as_tuple().exponent
        if not isinstance(exponent, int) or exponent < 0 or value.adjusted() >= max_digits:
            raise InvalidParams()
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidParams()
    return value  # the decoder builds no int longer than _MAX_ID_DIGITS digits


def _integer(value: JsonValue, low: int, high: int) -> int:
    number = _integral(value, 19)
    if not low <= number <= high:
        raise InvalidParams()
    return number


def decode_plaintext(data: bytes, *, limits: Limits) -> PlaintextState:
    """Parse opened plaintext under ``limits``; anything but the exact canonical bytes of a
    well-formed version-1 object is :class:`~mcpkit.errors.InvalidParams`."""
    try:
        value = decode(data, limits=limits)
    except ParseError:
        raise InvalidParams() from None
    if not isinstance(value, JsonObject) or value.keys() != _MEMBERS:
        raise InvalidParams()
    if canonical_json(value) != data:
        raise InvalidParams()
    version = value["version"]
    if isinstance(version, bool) or version != _PLAINTEXT_VERSION:
        raise InvalidParams()
    digest = value["bindingDigest"]
    if not isinstance(digest, str):
        raise InvalidParams()
    request_id = value["originatingRequestId"]
    if not isinstance(request_id, str):
        request_id = _integral(request_id, _MAX_ID_DIGITS)
    nanos = (0, _NS - 1)
    return PlaintextState(
        binding_digest=digest,
        issued_at_ns=_integer(value["issuedAtEpochSecond"], *_I64) * _NS
        + _integer(value["issuedAtNanoAdjustment"], *nanos),
        expires_at_ns=_integer(value["expiresAtEpochSecond"], *_I64) * _NS
        + _integer(value["expiresAtNanoAdjustment"], *nanos),
        round=_integer(value["round"], *_I32),
        originating_request_id=request_id,
        state=value["state"],
    )
