"""Built-in protection of request state: the ``soklet-mcp-protection-v1`` profile.

State the framework hands to a client is sealed with AES-256-GCM under a key derived per
sealer epoch from the keyring's active master key, and carried as
``soklet-mcp-request-state-v1.`` plus canonical unpadded base64url of a binary envelope. The
profile is frozen and shared with Soklet, so every byte here is fixed by its labels and its test
vector; a changed byte is a new profile.

Failure channels (the same for every cause within each, so nothing is an oracle):

- :class:`~mcpkit.errors.InvalidParams`: malformed, tampered, unknown-key, wrong-binding,
  non-canonical, expired, over-round or same-request state;
- :class:`~mcpkit.errors.ProtectorUnavailable`: entropy or the cryptographic provider failed,
  or the sealer epochs are exhausted;
- :class:`~mcpkit.errors.InternalError`: what the handler asked to seal cannot be sealed
  (not JSON, too large, expired meanwhile, past the round cap).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mcpkit._grammar import TCHAR
from mcpkit.errors import (
    ConfigurationError,
    InternalError,
    InvalidParams,
    InvalidValueError,
    ParseError,
    ProtectorUnavailable,
)
from mcpkit.json import JsonValue, decode
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.server._keyring import MAX_EPOCH, PREFIX_BYTES, Keyring, draw_random
from mcpkit.server._state_codec import (
    PlaintextState,
    binding_digest,
    decode_plaintext,
    encode_plaintext,
)

__all__ = [
    "PROFILE",
    "SALT",
    "WIRE_PREFIX",
    "Envelope",
    "Opened",
    "RequestStateProtector",
    "associated_data",
    "build_header",
    "derive_epoch_key",
    "derive_prk",
    "open_envelope",
    "parse_envelope",
    "seal_envelope",
    "sealer_epoch",
]

PROFILE: Final = "soklet-mcp-protection-v1"
WIRE_PREFIX: Final = "soklet-mcp-request-state-v1."
_PROFILE_BYTES: Final = PROFILE.encode("ascii")
SALT: Final = hashlib.sha256(_PROFILE_BYTES + b"\x00").digest()
"""The HKDF-extract salt: SHA-256 of the profile id and one NUL."""
_INFO_LABEL: Final = b"soklet-mcp-request-state-aead-v1\x00"
_AAD_LABEL: Final = b"soklet-mcp-request-state-gcm-aad-v1\x00"
_VERSION: Final = 1
_NONCE_BYTES: Final = 12
_TAG_BYTES: Final = 16
_SEALER_EPOCH_BYTES: Final = PREFIX_BYTES + 8
# Header bytes around the key id: version, id length, profile length, profile, epoch, nonce.
_FIXED_HEADER_BYTES: Final = 3 + len(_PROFILE_BYTES) + _SEALER_EPOCH_BYTES + _NONCE_BYTES
_SUFFIX: Final = re.compile(r"[A-Za-z0-9_-]+", re.ASCII)
_KEY_ID: Final = re.compile((TCHAR + "{1,64}").encode("ascii"))


# --- key schedule ---------------------------------------------------------------------------


def derive_prk(material: bytes) -> bytes:
    """HKDF-SHA-256 extract of a master key with the profile salt."""
    return hmac.new(SALT, material, hashlib.sha256).digest()


def sealer_epoch(prefix: bytes, epoch: int) -> bytes:
    """The 32 envelope bytes naming an epoch key: activation prefix and ``u64be(epoch)``."""
    if len(prefix) != PREFIX_BYTES or not 0 <= epoch <= MAX_EPOCH:
        raise ValueError("sealer_epoch: a 24-byte prefix and an unsigned 64-bit epoch")
    return prefix + epoch.to_bytes(8, "big")


def _epoch_key(material: bytes, epoch_bytes: bytes) -> bytes:
    # One HKDF-expand block (counter 0x01) is exactly the 32-byte AES-256 key.
    info = _INFO_LABEL + epoch_bytes
    return hmac.new(derive_prk(material), info + b"\x01", hashlib.sha256).digest()


def derive_epoch_key(material: bytes, prefix: bytes, epoch: int) -> bytes:
    """The AES-256-GCM key of one sealer epoch of one master key."""
    return _epoch_key(material, sealer_epoch(prefix, epoch))


# --- envelope -------------------------------------------------------------------------------


def build_header(key_id: str, epoch_bytes: bytes, nonce: bytes) -> bytes:
    """The envelope bytes before the ciphertext; they are authenticated through the AAD."""
    name = key_id.encode("ascii")
    return b"".join(
        (
            bytes((_VERSION, len(name))),
            name,
            bytes((len(_PROFILE_BYTES),)),
            _PROFILE_BYTES,
            epoch_bytes,
            nonce,
        )
    )


def associated_data(header: bytes, binding: bytes) -> bytes:
    """AES-GCM associated data: the label, then the header and the binding, length-framed."""
    return b"".join(
        (
            _AAD_LABEL,
            len(header).to_bytes(4, "big"),
            header,
            len(binding).to_bytes(4, "big"),
            binding,
        )
    )


@dataclass(frozen=True, slots=True)
class Envelope:
    """A structurally valid envelope; nothing in it is trusted until the tag verifies."""

    key_id: str
    sealer_epoch: bytes
    nonce: bytes
    header: bytes
    sealed: bytes
    """Ciphertext followed by the 16-byte tag."""


def parse_envelope(value: object, *, max_encoded_bytes: int, max_decoded_bytes: int) -> Envelope:
    """Check the wire string's shape, cheapest first, and split it; no cryptography.  Every
    failure is the same :class:`~mcpkit.errors.InvalidParams`."""
    if (
        not isinstance(value, str)
        or len(value) > max_encoded_bytes  # characters never outnumber UTF-8 bytes
        or not value.startswith(WIRE_PREFIX)
    ):
        raise InvalidParams()
    suffix = value[len(WIRE_PREFIX) :]
    # The alphabet is ASCII, so from here characters are bytes; len * 3 // 4 is the exact
    # decoded size of unpadded base64, known before decoding.
    if (
        _SUFFIX.fullmatch(suffix) is None
        or len(suffix) % 4 == 1
        or len(suffix) * 3 // 4 > max_decoded_bytes
    ):
        raise InvalidParams()
    raw = base64.urlsafe_b64decode(suffix + "=" * (-len(suffix) % 4))
    if base64.urlsafe_b64encode(raw).rstrip(b"=") != suffix.encode("ascii"):
        raise InvalidParams()  # non-zero unused bits: not the canonical spelling
    if len(raw) < 2 or raw[0] != _VERSION:
        raise InvalidParams()
    id_end = 2 + raw[1]
    header_end = _FIXED_HEADER_BYTES + raw[1]
    if (
        len(raw) < header_end + 1 + _TAG_BYTES  # at least one ciphertext byte
        or _KEY_ID.fullmatch(raw, 2, id_end) is None
        or raw[id_end] != len(_PROFILE_BYTES)
        or raw[id_end + 1 : id_end + 1 + len(_PROFILE_BYTES)] != _PROFILE_BYTES
    ):
        raise InvalidParams()
    epoch_start = id_end + 1 + len(_PROFILE_BYTES)
    return Envelope(
        key_id=raw[2:id_end].decode("ascii"),
        sealer_epoch=raw[epoch_start : epoch_start + _SEALER_EPOCH_BYTES],
        nonce=raw[header_end - _NONCE_BYTES : header_end],
        header=raw[:header_end],
        sealed=raw[header_end:],
    )


def seal_envelope(
    *,
    key_id: str,
    material: bytes,
    sealer_epoch: bytes,
    nonce: bytes,
    binding: bytes,
    plaintext: bytes,
) -> str:
    """Encrypt ``plaintext`` and return the wire string; a provider failure is
    :class:`~mcpkit.errors.ProtectorUnavailable`."""
    header = build_header(key_id, sealer_epoch, nonce)
    try:
        aead = AESGCM(_epoch_key(material, sealer_epoch))
        sealed = aead.encrypt(nonce, plaintext, associated_data(header, binding))
    except Exception:
        raise ProtectorUnavailable() from None
    return WIRE_PREFIX + base64.urlsafe_b64encode(header + sealed).rstrip(b"=").decode("ascii")


def open_envelope(envelope: Envelope, *, material: bytes, binding: bytes) -> bytes:
    """Authenticate and decrypt; a wrong tag is :class:`~mcpkit.errors.InvalidParams`, any other
    provider failure :class:`~mcpkit.errors.ProtectorUnavailable`."""
    aad = associated_data(envelope.header, binding)
    try:
        aead = AESGCM(_epoch_key(material, envelope.sealer_epoch))
        return aead.decrypt(envelope.nonce, envelope.sealed, aad)
    except InvalidTag:
        raise InvalidParams() from None
    except Exception:
        raise ProtectorUnavailable() from None


# --- the protector --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Opened:
    """Verified state of a retry; pass it back to :meth:`RequestStateProtector.seal` to
    continue the same exchange (same issue and expiry, next round)."""

    state: JsonValue
    round: int
    issued_at_ns: int
    expires_at_ns: int


def _same_id(a: str | int, b: str | int) -> bool:
    """Typed JSON-RPC id equality: ``"7"`` and ``7`` are different ids."""
    return isinstance(a, str) is isinstance(b, str) and a == b


def _positive(value: object, name: str, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise ConfigurationError(f"RequestStateProtector.{name}: an int from 1 to {maximum}")
    return value


class RequestStateProtector:
    """Seals and opens framework-protected request state with a :class:`Keyring`.

    Defaults are the profile's: 65,536 encoded bytes (the wire string), 49,152 decoded bytes
    (both the plaintext and the decoded envelope), a 15-minute lifetime and 10 rounds.
    ``limits`` bounds parsing an opened plaintext; ``clock_ns`` and ``random`` exist for tests.
    """

    __slots__ = (
        "_clock_ns",
        "_keyring",
        "_lifetime_ns",
        "_limits",
        "_max_decoded",
        "_max_encoded",
        "_max_rounds",
        "_random",
    )

    def __init__(
        self,
        keyring: Keyring,
        *,
        max_encoded_bytes: int = 65_536,
        max_decoded_bytes: int = 49_152,
        lifetime_seconds: float = 900.0,
        max_rounds: int = 10,
        clock_ns: Callable[[], int] = time.time_ns,
        random: Callable[[int], bytes] = secrets.token_bytes,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        if not isinstance(keyring, Keyring):
            raise ConfigurationError("RequestStateProtector: keyring must be a Keyring")
        if (
            isinstance(lifetime_seconds, bool)
            or not isinstance(lifetime_seconds, (int, float))
            or not math.isfinite(lifetime_seconds)
            or round(lifetime_seconds * 1_000_000_000) < 1
        ):
            raise ConfigurationError("RequestStateProtector.lifetime_seconds: a positive number")
        if not isinstance(limits, Limits):
            raise ConfigurationError("RequestStateProtector.limits: a mcpkit.Limits")
        self._keyring = keyring
        self._max_encoded = _positive(max_encoded_bytes, "max_encoded_bytes", 2**31 - 1)
        self._max_decoded = _positive(max_decoded_bytes, "max_decoded_bytes", 2**31 - 1)
        self._max_rounds = _positive(max_rounds, "max_rounds", 2**31 - 1)
        self._lifetime_ns = round(lifetime_seconds * 1_000_000_000)
        self._clock_ns = clock_ns
        self._random = random
        self._limits = limits

    @property
    def keyring(self) -> Keyring:
        return self._keyring

    def _parse(self, value: object) -> Envelope:
        return parse_envelope(
            value, max_encoded_bytes=self._max_encoded, max_decoded_bytes=self._max_decoded
        )

    def check_shape(self, value: object) -> str:
        """The early, key-free check of a submitted ``requestState`` (prefix, size, canonical
        base64url, header grammar, known profile); returns it, or raises
        :class:`~mcpkit.errors.InvalidParams`.  Opening waits until after admission, so
        cryptographic validity is never visible to a caller who has not been admitted."""
        self._parse(value)
        assert isinstance(value, str)
        return value

    def open(self, value: str, *, binding: bytes, request_id: str | int) -> Opened:
        """Verify state submitted with request ``request_id`` under ``binding`` and return it.
        Every reason to refuse is the same :class:`~mcpkit.errors.InvalidParams`."""
        envelope = self._parse(value)
        material = self._keyring._material(envelope.key_id)
        if material is None:
            raise InvalidParams()  # unknown and removed keys look like a bad tag
        plaintext = decode_plaintext(
            open_envelope(envelope, material=material, binding=binding), limits=self._limits
        )
        expected = binding_digest(binding).encode("ascii")
        lifetime = plaintext.expires_at_ns - plaintext.issued_at_ns
        if not (
            hmac.compare_digest(plaintext.binding_digest.encode("utf-8"), expected)
            and 0 < lifetime <= self._lifetime_ns
            and self._clock_ns() < plaintext.expires_at_ns
            and 1 <= plaintext.round <= self._max_rounds
            and not _same_id(request_id, plaintext.originating_request_id)
        ):
            raise InvalidParams()
        return Opened(
            state=plaintext.state,
            round=plaintext.round,
            issued_at_ns=plaintext.issued_at_ns,
            expires_at_ns=plaintext.expires_at_ns,
        )

    def seal(
        self, state: JsonValue, *, binding: bytes, request_id: str | int, previous: Opened | None
    ) -> str:
        """Seal ``state`` emitted by request ``request_id``: round 1 of a new exchange, or the
        round after ``previous`` with its issue and expiry kept.  State that cannot be sealed
        (expired meanwhile, past the round cap, not JSON, too large) is the handler's fault:
        :class:`~mcpkit.errors.InternalError`."""
        now = self._clock_ns()
        if previous is None:
            round_, issued, expires = 1, now, now + self._lifetime_ns
        elif now >= previous.expires_at_ns or previous.round >= self._max_rounds:
            raise InternalError()
        else:
            round_, issued, expires = (
                previous.round + 1,
                previous.issued_at_ns,
                previous.expires_at_ns,
            )
        record = PlaintextState(binding_digest(binding), issued, expires, round_, request_id, state)
        try:
            plaintext = encode_plaintext(record, max_chars=self._max_decoded)
            decode(plaintext, limits=self._limits)  # never seal what could not be opened
        except (InvalidValueError, ParseError):
            raise InternalError() from None
        if len(plaintext) > self._max_decoded:
            raise InternalError()
        reservation = self._keyring._reserve()
        decoded_bytes = _FIXED_HEADER_BYTES + len(reservation.key_id) + len(plaintext) + _TAG_BYTES
        encoded_bytes = len(WIRE_PREFIX) + (decoded_bytes * 4 + 2) // 3
        if decoded_bytes > self._max_decoded or encoded_bytes > self._max_encoded:
            raise InternalError()
        return seal_envelope(
            key_id=reservation.key_id,
            material=reservation.material,
            sealer_epoch=reservation.sealer_epoch,
            nonce=draw_random(self._random, _NONCE_BYTES),
            binding=binding,
            plaintext=plaintext,
        )
