"""The live key ring of built-in request-state protection.

A :class:`Keyring` holds one active key, which seals, and any number of verification-only
keys, which still open state sealed before a rotation.  It also owns the active key's sealer
epoch: a random 24-byte activation prefix drawn at every activation and a 64-bit epoch number
that advances after :data:`RESERVATIONS_PER_EPOCH` seals, so no AES-GCM key ever sees more
random nonces than the profile allows.  Every operation runs under one lock, so a rotation is
atomic with respect to seals on other threads.

Key material never leaves through the public surface: :meth:`Keyring.snapshot` gives ids, roles
and a fingerprint, and reprs never show bytes.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

from mcpkit._grammar import TCHAR
from mcpkit.errors import ConfigurationError, ProtectorUnavailable

__all__ = ["Keyring", "KeyringSnapshot", "ProtectionKey"]

MIN_MATERIAL_BYTES: Final = 32
PREFIX_BYTES: Final = 24
RESERVATIONS_PER_EPOCH = 2**32
"""Seals per epoch key (the profile's cap); a module variable so tests can lower it."""
MAX_EPOCH = 2**64 - 1
"""The last epoch number; past it sealing fails closed until the next activation."""

_KEY_ID: Final = re.compile(TCHAR + "{1,64}")  # an HTTP token
_EPHEMERAL_ID: Final = "development-ephemeral"
_FINGERPRINT_LABEL: Final = b"mcpkit-keyring-fingerprint-v1\x00soklet-mcp-protection-v1\x00"
_ACTIVE: Final = b"\x01"
_VERIFICATION: Final = b"\x02"


def draw_random(random: Callable[[int], bytes], size: int) -> bytes:
    """``size`` bytes from ``random``; any failure or short draw is
    :class:`~mcpkit.errors.ProtectorUnavailable` (temporary entropy trouble, 503)."""
    try:
        data = random(size)
    except Exception:
        raise ProtectorUnavailable() from None
    if not isinstance(data, bytes) or len(data) != size:
        raise ProtectorUnavailable()
    return data


@dataclass(frozen=True, slots=True, eq=False)
class ProtectionKey:
    """One master key: an id (1-64 ASCII HTTP-token characters; it travels in every envelope,
    so it is not secret) and at least 32 bytes of CSPRNG material, which ``repr`` hides.

    Equality is identity: comparing material with ``==`` would not be constant-time.
    """

    key_id: str
    material: bytes = field(repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.key_id, str) or _KEY_ID.fullmatch(self.key_id) is None:
            raise ConfigurationError(
                "ProtectionKey.key_id must be 1-64 ASCII HTTP token characters"
            )
        if not isinstance(self.material, (bytes, bytearray, memoryview)):
            raise ConfigurationError("ProtectionKey.material must be bytes")
        material = bytes(self.material)  # a private copy of a mutable buffer
        if len(material) < MIN_MATERIAL_BYTES:
            raise ConfigurationError(
                f"ProtectionKey.material must be at least {MIN_MATERIAL_BYTES} bytes"
            )
        object.__setattr__(self, "material", material)


@dataclass(frozen=True, slots=True)
class KeyringSnapshot:
    """What an operator compares across a fleet before and after a rotation.

    ``fingerprint`` is ``"kfp1." + base64url(SHA-256(F))`` (43 characters, unpadded), where
    ``F`` is the label ``mcpkit-keyring-fingerprint-v1 NUL soklet-mcp-protection-v1 NUL``,
    then ``u32be(number of keys)``, then for the active key and then each verification key in
    ascending id order: ``u8(role)`` (1 active, 2 verification), ``u8(len(id)) || id``,
    ``u32be(len(material)) || material``.  Every length is explicit, so the exact raw bytes
    and role of every key are covered and no two different rings share an ``F``.  It is a
    one-way commitment to keys of 256-bit entropy, reveals no material and is no key itself;
    equal rings have equal fingerprints, which is observable, so do not log it per request.
    """

    active_id: str
    verification_ids: tuple[str, ...]
    fingerprint: str


@dataclass(frozen=True, slots=True)
class Reservation:
    """One sealing slot: the active key and the sealer epoch (prefix and u64 epoch)."""

    key_id: str
    material: bytes = field(repr=False)
    sealer_epoch: bytes


class Keyring:
    """The live protection keys of a server, safe to use and change from any thread.

    ``Keyring(active, verification)`` refuses repeated ids and material reused under a second
    id (:class:`~mcpkit.errors.ConfigurationError`).  ``random`` supplies activation prefixes;
    only tests replace it.
    """

    __slots__ = (
        "_active_id",
        "_ephemeral",
        "_epoch",
        "_keys",
        "_lock",
        "_prefix",
        "_random",
        "_reserved",
    )

    def __init__(
        self,
        active: ProtectionKey,
        verification: Sequence[ProtectionKey] = (),
        *,
        random: Callable[[int], bytes] = secrets.token_bytes,
    ) -> None:
        keys: dict[str, bytes] = {}
        for key in (active, *verification):
            if not isinstance(key, ProtectionKey):
                raise ConfigurationError("Keyring: keys must be ProtectionKey instances")
            if key.key_id in keys:
                raise ConfigurationError("Keyring: two keys have the same id")
            _refuse_reused_material(keys, key)
            keys[key.key_id] = key.material
        self._keys = keys
        self._active_id = active.key_id
        self._random = random
        self._prefix = draw_random(random, PREFIX_BYTES)
        self._epoch = 0
        self._reserved = 0
        self._ephemeral = False
        self._lock = threading.Lock()

    @classmethod
    def development_ephemeral(cls) -> Keyring:
        """A ring of one random key that lives only in this process: state does not survive a
        restart or move to another node.  For development, never production."""
        material = draw_random(secrets.token_bytes, MIN_MATERIAL_BYTES)
        ring = cls(ProtectionKey(_EPHEMERAL_ID, material))
        ring._ephemeral = True
        return ring

    @property
    def is_ephemeral(self) -> bool:
        """Whether this ring came from :meth:`development_ephemeral`."""
        return self._ephemeral

    def stage(self, key: ProtectionKey) -> None:
        """Add ``key`` as verification-only (the first step of a fleet rotation).  Staging a
        key that is already present with the same bytes does nothing; the same id with other
        bytes, or the same bytes under another id, is refused."""
        with self._lock:
            self._stage(key)

    def activate(self, key_id: str) -> None:
        """Make the present key ``key_id`` the sealing key; the old active key stays for
        verification.  Starts a fresh activation: a new random prefix and epoch 0."""
        with self._lock:
            if key_id not in self._keys:
                raise ConfigurationError("Keyring.activate: no key has that id")
            self._activate(key_id, draw_random(self._random, PREFIX_BYTES))

    def rotate(self, key: ProtectionKey) -> None:
        """Stage and activate ``key`` at once: a single-node convenience, since other nodes
        cannot open what this one seals until they have the key too."""
        with self._lock:
            prefix = draw_random(self._random, PREFIX_BYTES)  # first: a failure changes nothing
            self._stage(key)
            self._activate(key.key_id, prefix)

    def remove(self, key_id: str) -> bool:
        """Forget a verification-only key (state sealed under it stops opening).  False if no
        key has the id; removing the active key is refused."""
        with self._lock:
            if key_id == self._active_id:
                raise ConfigurationError("Keyring.remove: the active key cannot be removed")
            return self._keys.pop(key_id, None) is not None

    def snapshot(self) -> KeyringSnapshot:
        """Ids, roles and the ring fingerprint; never key material."""
        with self._lock:
            verification = tuple(sorted(i for i in self._keys if i != self._active_id))
            digest = hashlib.sha256(_FINGERPRINT_LABEL)
            digest.update(len(self._keys).to_bytes(4, "big"))
            for role, key_id in [(_ACTIVE, self._active_id)] + [
                (_VERIFICATION, i) for i in verification
            ]:
                name = key_id.encode("ascii")
                material = self._keys[key_id]
                digest.update(role + bytes((len(name),)) + name)
                digest.update(len(material).to_bytes(4, "big") + material)
            active_id = self._active_id
        encoded = base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode("ascii")
        return KeyringSnapshot(active_id, verification, "kfp1." + encoded)

    # --- for the protector only (private: these hand out material) --------------------------

    def _reserve(self) -> Reservation:
        """Take one sealing slot under the active key's current epoch.  A slot is never given
        back, even if the seal later fails; past the last epoch this fails closed
        (:class:`~mcpkit.errors.ProtectorUnavailable`) until the next activation."""
        with self._lock:
            if self._reserved >= RESERVATIONS_PER_EPOCH:
                if self._epoch >= MAX_EPOCH:
                    raise ProtectorUnavailable()
                self._epoch += 1
                self._reserved = 0
            self._reserved += 1
            return Reservation(
                self._active_id,
                self._keys[self._active_id],
                self._prefix + self._epoch.to_bytes(8, "big"),
            )

    def _material(self, key_id: str) -> bytes | None:
        """The material of the active or a verification key, for opening; None if unknown."""
        with self._lock:
            return self._keys.get(key_id)

    # --- under the lock -----------------------------------------------------------------------

    def _stage(self, key: ProtectionKey) -> None:
        if not isinstance(key, ProtectionKey):
            raise ConfigurationError("Keyring: keys must be ProtectionKey instances")
        present = self._keys.get(key.key_id)
        if present is not None:
            if not secrets.compare_digest(present, key.material):
                raise ConfigurationError("Keyring.stage: that id already has other material")
            return
        _refuse_reused_material(self._keys, key)
        self._keys[key.key_id] = key.material

    def _activate(self, key_id: str, prefix: bytes) -> None:
        self._active_id = key_id
        self._prefix = prefix
        self._epoch = 0
        self._reserved = 0


def _refuse_reused_material(keys: dict[str, bytes], key: ProtectionKey) -> None:
    """The profile forbids one material under two ids."""
    for material in keys.values():
        if secrets.compare_digest(material, key.material):
            raise ConfigurationError("Keyring: the same key material appears under two ids")
