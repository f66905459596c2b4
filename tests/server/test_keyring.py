"""The live protection key ring ("Key rotation"): keys, staging,
activation, removal, the snapshot fingerprint, sealer epochs and thread safety."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import threading
from collections import Counter
from collections.abc import Callable, Iterator

import pytest

from mcpkit.errors import ConfigurationError, ProtectorUnavailable
from mcpkit.server import _keyring
from mcpkit.server._keyring import Keyring, KeyringSnapshot, ProtectionKey, draw_random

A = bytes(range(32))
B = bytes(range(32, 64))
C = bytes(range(64, 96))


def counter_random() -> Callable[[int], bytes]:
    """Distinct, predictable draws: 1s, then 2s, ..."""
    draws: Iterator[int] = iter(range(1, 256))

    def draw(size: int) -> bytes:
        return bytes([next(draws)]) * size

    return draw


def sealer_epoch(ring: Keyring) -> bytes:
    return ring._reserve().sealer_epoch


# --- ProtectionKey ----------------------------------------------------------------------------


def test_protection_key_hides_its_material() -> None:
    key = ProtectionKey("active", A)
    assert repr(key) == "ProtectionKey(key_id='active')"
    assert A.hex() not in repr(key)
    assert key.material == A
    with pytest.raises(dataclasses.FrozenInstanceError):
        key.key_id = "other"  # type: ignore[misc]
    assert key != ProtectionKey("active", A)  # identity, not a timing-dependent byte compare
    assert key == key


def test_protection_key_copies_a_mutable_buffer() -> None:
    buffer = bytearray(A)
    key = ProtectionKey("k", buffer)  # type: ignore[arg-type]
    buffer[0] ^= 0xFF
    assert key.material == A
    assert type(key.material) is bytes
    assert ProtectionKey("k", memoryview(A)).material == A  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("key_id", "material"),
    [
        ("", A),
        ("k" * 65, A),
        ("a b", A),
        ("a@b", A),
        ("a/b", A),
        ("é", A),
        ("k\n", A),
        (b"k", A),
        (None, A),
        ("k", A[:31]),
        ("k", A.hex()),
        ("k", None),
    ],
)
def test_protection_key_validation(key_id: object, material: object) -> None:
    with pytest.raises(ConfigurationError) as info:
        ProtectionKey(key_id, material)  # type: ignore[arg-type]
    assert A.hex() not in str(info.value)


def test_protection_key_edges() -> None:
    assert ProtectionKey("k" * 64, A).key_id == "k" * 64
    assert ProtectionKey("!#$%&'*+-.^_`|~09AZaz", A + A).material == A + A


# --- construction -----------------------------------------------------------------------------


def test_construction_and_snapshot() -> None:
    ring = Keyring(ProtectionKey("b", A), [ProtectionKey("z", B), ProtectionKey("a", C)])
    snapshot = ring.snapshot()
    assert snapshot.active_id == "b"
    assert snapshot.verification_ids == ("a", "z")
    assert not ring.is_ephemeral
    assert ring._material("z") == B
    assert ring._material("nope") is None


@pytest.mark.parametrize(
    "verification",
    [
        [ProtectionKey("active", B)],  # a repeated id
        [ProtectionKey("v", B), ProtectionKey("v", C)],
        [ProtectionKey("v", A)],  # the same material under a second id
        ["v"],
    ],
)
def test_construction_refusals(verification: list[ProtectionKey]) -> None:
    with pytest.raises(ConfigurationError):
        Keyring(ProtectionKey("active", A), verification)


def test_construction_refuses_a_non_key() -> None:
    with pytest.raises(ConfigurationError):
        Keyring(A)  # type: ignore[arg-type]


def test_construction_needs_entropy() -> None:
    def broken(size: int) -> bytes:
        raise OSError("entropy")

    with pytest.raises(ProtectorUnavailable):
        Keyring(ProtectionKey("active", A), random=broken)
    with pytest.raises(ProtectorUnavailable):
        Keyring(ProtectionKey("active", A), random=lambda size: b"short")
    with pytest.raises(ProtectorUnavailable):
        draw_random(lambda size: "x" * size, 3)  # type: ignore[arg-type, return-value]
    assert draw_random(lambda size: b"\x07" * size, 3) == b"\x07\x07\x07"


def test_development_ephemeral() -> None:
    ring = Keyring.development_ephemeral()
    assert ring.is_ephemeral
    snapshot = ring.snapshot()
    assert snapshot.active_id == "development-ephemeral"
    assert snapshot.verification_ids == ()
    material = ring._material("development-ephemeral")
    assert material is not None and len(material) == 32
    assert Keyring.development_ephemeral().snapshot().fingerprint != snapshot.fingerprint


# --- live changes -----------------------------------------------------------------------------


def test_stage_activate_remove() -> None:
    ring = Keyring(ProtectionKey("one", A), random=counter_random())
    assert sealer_epoch(ring) == b"\x01" * 24 + bytes(8)
    ring.stage(ProtectionKey("two", B))
    ring.stage(ProtectionKey("two", B))  # the same key again: nothing changes
    assert ring.snapshot() == KeyringSnapshot("one", ("two",), ring.snapshot().fingerprint)
    ring.activate("two")
    snapshot = ring.snapshot()
    assert (snapshot.active_id, snapshot.verification_ids) == ("two", ("one",))
    assert sealer_epoch(ring) == b"\x02" * 24 + bytes(8)  # a fresh prefix at epoch 0
    ring.activate("two")  # re-activating draws a fresh prefix too
    assert sealer_epoch(ring) == b"\x03" * 24 + bytes(8)
    with pytest.raises(ConfigurationError):
        ring.remove("two")
    assert ring.remove("missing") is False
    assert ring.remove("one") is True
    assert ring.remove("one") is False
    assert ring._material("one") is None
    assert ring.snapshot().verification_ids == ()


def test_stage_refusals() -> None:
    ring = Keyring(ProtectionKey("one", A), [ProtectionKey("two", B)])
    before = ring.snapshot()
    with pytest.raises(ConfigurationError):
        ring.stage(ProtectionKey("two", C))  # the same id with other bytes
    with pytest.raises(ConfigurationError):
        ring.stage(ProtectionKey("one", C))
    with pytest.raises(ConfigurationError):
        ring.stage(ProtectionKey("three", B))  # the same bytes under another id
    with pytest.raises(ConfigurationError):
        ring.stage("three")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError):
        ring.activate("three")
    assert ring.snapshot() == before


def test_rotate() -> None:
    ring = Keyring(ProtectionKey("one", A), random=counter_random())
    ring.rotate(ProtectionKey("two", B))
    snapshot = ring.snapshot()
    assert (snapshot.active_id, snapshot.verification_ids) == ("two", ("one",))
    assert ring._reserve().key_id == "two"
    with pytest.raises(ConfigurationError):
        ring.rotate(ProtectionKey("three", A))
    assert ring.snapshot() == snapshot


def test_failed_entropy_changes_nothing() -> None:
    draws = [b"\x01" * 24]

    def once(size: int) -> bytes:
        if not draws:
            raise OSError("entropy")
        return draws.pop()

    ring = Keyring(ProtectionKey("one", A), [ProtectionKey("two", B)], random=once)
    before = ring.snapshot()
    with pytest.raises(ProtectorUnavailable):
        ring.activate("two")
    with pytest.raises(ProtectorUnavailable):
        ring.rotate(ProtectionKey("three", C))
    assert ring.snapshot() == before
    assert ring._material("three") is None
    assert sealer_epoch(ring) == b"\x01" * 24 + bytes(8)


# --- fingerprint ------------------------------------------------------------------------------


def expected_fingerprint(active: tuple[str, bytes], verification: list[tuple[str, bytes]]) -> str:
    """The documented construction, written out independently."""
    data = b"mcpkit-keyring-fingerprint-v1\x00soklet-mcp-protection-v1\x00"
    data += (1 + len(verification)).to_bytes(4, "big")
    for role, (key_id, material) in [(1, active)] + [(2, v) for v in sorted(verification)]:
        data += bytes((role, len(key_id))) + key_id.encode() + len(material).to_bytes(4, "big")
        data += material
    digest = hashlib.sha256(data).digest()
    return "kfp1." + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def test_fingerprint_construction() -> None:
    ring = Keyring(ProtectionKey("one", A), [ProtectionKey("zz", B), ProtectionKey("two", C)])
    fingerprint = ring.snapshot().fingerprint
    assert fingerprint == expected_fingerprint(("one", A), [("zz", B), ("two", C)])
    assert len(fingerprint) == len("kfp1.") + 43
    for material in (A, B, C):
        assert material.hex() not in fingerprint
    # Insertion order does not matter; roles and bytes do.
    same = Keyring(ProtectionKey("one", A), [ProtectionKey("two", C), ProtectionKey("zz", B)])
    assert same.snapshot().fingerprint == fingerprint
    ring.activate("two")
    assert ring.snapshot().fingerprint == expected_fingerprint(("two", C), [("one", A), ("zz", B)])
    assert ring.snapshot().fingerprint != fingerprint
    changed = Keyring(
        ProtectionKey("one", A), [ProtectionKey("zz", B), ProtectionKey("two", C[:-1] + b"\x00")]
    )
    assert changed.snapshot().fingerprint != fingerprint


# --- sealer epochs ----------------------------------------------------------------------------


def test_reservations_roll_the_epoch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_keyring, "RESERVATIONS_PER_EPOCH", 3)
    ring = Keyring(ProtectionKey("one", A), random=counter_random())
    epochs = [int.from_bytes(sealer_epoch(ring)[24:], "big") for _ in range(7)]
    assert epochs == [0, 0, 0, 1, 1, 1, 2]
    reservation = ring._reserve()
    assert reservation.key_id == "one"
    assert reservation.material == A
    assert A.hex() not in repr(reservation)


def test_epoch_exhaustion(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_keyring, "RESERVATIONS_PER_EPOCH", 1)
    monkeypatch.setattr(_keyring, "MAX_EPOCH", 1)
    ring = Keyring(ProtectionKey("one", A))
    assert [sealer_epoch(ring)[24:] for _ in range(2)] == [bytes(8), bytes(7) + b"\x01"]
    for _ in range(2):
        with pytest.raises(ProtectorUnavailable):
            ring._reserve()
    ring.activate("one")
    assert sealer_epoch(ring)[24:] == bytes(8)


def test_concurrent_reservations_never_overallocate_an_epoch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_keyring, "RESERVATIONS_PER_EPOCH", 100)
    ring = Keyring(ProtectionKey("one", A))
    seen: list[bytes] = []
    lock = threading.Lock()

    def work() -> None:
        mine = [sealer_epoch(ring) for _ in range(250)]
        with lock:
            seen.extend(mine)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    counts = Counter(int.from_bytes(epoch[24:], "big") for epoch in seen)
    assert counts == dict.fromkeys(range(20), 100)
