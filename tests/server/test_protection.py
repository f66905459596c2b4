"""Built-in request-state protection, ``soklet-mcp-protection-v1``:
the frozen vector, canonical JSON, the binding, the plaintext codec, the envelope grammar and
the protector's open checks, limits and failure channels."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from decimal import Decimal
from functools import partial
from typing import Any, cast

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mcpkit.errors import (
    ConfigurationError,
    InternalError,
    InvalidParams,
    InvalidValueError,
    ProtectorUnavailable,
    ProtocolError,
)
from mcpkit.json import JsonObject, JsonValue, from_python
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.server import _keyring, _state_codec
from mcpkit.server import _protection as protection
from mcpkit.server._keyring import Keyring, ProtectionKey
from mcpkit.server._protection import (
    SALT,
    WIRE_PREFIX,
    Opened,
    RequestStateProtector,
    associated_data,
    build_header,
    derive_epoch_key,
    derive_prk,
    open_envelope,
    parse_envelope,
    seal_envelope,
    sealer_epoch,
)
from mcpkit.server._state_codec import (
    PlaintextState,
    binding,
    binding_digest,
    canonical_json,
    canonical_params,
    decode_plaintext,
    encode_plaintext,
)

# --- the frozen executable vector of the profile ----------------------------------------------

KEY = bytes.fromhex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
PREFIX = bytes.fromhex("404142434445464748494a4b4c4d4e4f5051525354555657")
NONCE = bytes.fromhex("606162636465666768696a6b")
VECTOR_BINDING = bytes.fromhex("202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f")
VECTOR_PLAINTEXT = bytes.fromhex("7b227374617465223a226f6b227d")
VECTOR_SALT = "e32752b853923d1dec2b9fd7f9c6768d7669006cf82dc8a4bc5ffd1fb167e99c"
VECTOR_PRK = "d475b6dd059c218b22c4fc1bd3277462abb8e25482a65edaa3066d1437dff53a"
VECTOR_EPOCH_KEY = "6afbea4eb96db3a304ae39bde5e8e30faa29fb5babc2220f7cfec6a9aeb5afda"
VECTOR_HEADER = (
    "010661637469766518736f6b6c65742d6d63702d70726f74656374696f6e2d7631404142434445464748494a"
    "4b4c4d4e4f50515253545556570000000000000000606162636465666768696a6b"
)
VECTOR_AAD = (
    "736f6b6c65742d6d63702d726571756573742d73746174652d67636d2d6161642d7631000000004d0106616374"
    "69766518736f6b6c65742d6d63702d70726f74656374696f6e2d7631404142434445464748494a4b4c4d4e4f"
    "50515253545556570000000000000000606162636465666768696a6b00000020202122232425262728292a2b"
    "2c2d2e2f303132333435363738393a3b3c3d3e3f"
)
VECTOR_CIPHERTEXT = "3521814e7915bc5dbeb62f865723"
VECTOR_TAG = "d36248da9ccacdf2a4939ee49c87f564"
VECTOR_WIRE = (
    "soklet-mcp-request-state-v1.AQZhY3RpdmUYc29rbGV0LW1jcC1wcm90ZWN0aW9uLXYxQEFCQ0RFRkdISUpLTE1"
    "OT1BRUlNUVVZXAAAAAAAAAABgYWJjZGVmZ2hpams1IYFOeRW8Xb62L4ZXI9NiSNqcys3ypJOe5JyH9WQ"
)
LIMITS = {"max_encoded_bytes": 65_536, "max_decoded_bytes": 49_152}


def test_frozen_vector_key_schedule() -> None:
    assert SALT.hex() == VECTOR_SALT
    assert derive_prk(KEY).hex() == VECTOR_PRK
    assert derive_epoch_key(KEY, PREFIX, 0).hex() == VECTOR_EPOCH_KEY
    assert sealer_epoch(PREFIX, 0) == PREFIX + bytes(8)


def test_frozen_vector_header_aad_ciphertext_tag_and_wire() -> None:
    header = build_header("active", sealer_epoch(PREFIX, 0), NONCE)
    assert header.hex() == VECTOR_HEADER
    assert len(header) == 71 + len("active")
    aad = associated_data(header, VECTOR_BINDING)
    assert aad.hex() == VECTOR_AAD
    sealed = AESGCM(bytes.fromhex(VECTOR_EPOCH_KEY)).encrypt(NONCE, VECTOR_PLAINTEXT, aad)
    assert sealed.hex() == VECTOR_CIPHERTEXT + VECTOR_TAG
    wire = seal_envelope(
        key_id="active",
        material=KEY,
        sealer_epoch=sealer_epoch(PREFIX, 0),
        nonce=NONCE,
        binding=VECTOR_BINDING,
        plaintext=VECTOR_PLAINTEXT,
    )
    assert wire == VECTOR_WIRE


def test_frozen_vector_parses_and_opens() -> None:
    envelope = parse_envelope(VECTOR_WIRE, **LIMITS)
    assert envelope.key_id == "active"
    assert envelope.sealer_epoch == PREFIX + bytes(8)
    assert envelope.nonce == NONCE
    assert envelope.header.hex() == VECTOR_HEADER
    assert envelope.sealed.hex() == VECTOR_CIPHERTEXT + VECTOR_TAG
    assert open_envelope(envelope, material=KEY, binding=VECTOR_BINDING) == VECTOR_PLAINTEXT
    with pytest.raises(InvalidParams):
        open_envelope(envelope, material=KEY, binding=VECTOR_BINDING[:-1] + b"\x00")
    with pytest.raises(InvalidParams):
        open_envelope(envelope, material=bytes(32), binding=VECTOR_BINDING)


def test_the_protector_seals_with_the_vector_schedule() -> None:
    """The protector's own envelope under the vector key, prefix and nonce: the same header,
    and the vector epoch key with a hand-built AAD decrypts its canonical plaintext."""
    ring = Keyring(ProtectionKey("active", KEY), random=fixed(PREFIX))
    protector = RequestStateProtector(ring, clock_ns=Clock(), random=fixed(NONCE))
    wire = protector.seal("ok", binding=VECTOR_BINDING, request_id=7, previous=None)
    raw = unwire(wire)
    assert raw[:77].hex() == VECTOR_HEADER
    aad = bytes.fromhex(VECTOR_AAD)
    plaintext = AESGCM(bytes.fromhex(VECTOR_EPOCH_KEY)).decrypt(NONCE, raw[77:], aad)
    digest = base64.urlsafe_b64encode(hashlib.sha256(VECTOR_BINDING).digest()).rstrip(b"=")
    assert plaintext == (
        b'{"bindingDigest":"' + digest + b'","expiresAtEpochSecond":1.7000009E+9,'
        b'"expiresAtNanoAdjustment":123456789,"issuedAtEpochSecond":1.7E+9,'
        b'"issuedAtNanoAdjustment":123456789,"originatingRequestId":7,"round":1,'
        b'"state":"ok","version":1}'
    )


def test_sealer_epoch_refuses_a_bad_prefix_or_epoch() -> None:
    assert sealer_epoch(PREFIX, 2**64 - 1)[24:] == b"\xff" * 8
    for prefix, epoch in [(PREFIX[:-1], 0), (PREFIX + b"x", 0), (PREFIX, -1), (PREFIX, 2**64)]:
        with pytest.raises(ValueError):
            sealer_epoch(prefix, epoch)


# --- helpers ----------------------------------------------------------------------------------

T0 = 1_700_000_000_123_456_789
LIFETIME_NS = 900 * 1_000_000_000


class Clock:
    def __init__(self, now: int = T0) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def fixed(data: bytes) -> Callable[[int], bytes]:
    def draw(size: int) -> bytes:
        assert size == len(data)
        return data

    return draw


def unwire(wire: str) -> bytes:
    suffix = wire[len(WIRE_PREFIX) :]
    return base64.urlsafe_b64decode(suffix + "=" * (-len(suffix) % 4))


def rewire(raw: bytes) -> str:
    return WIRE_PREFIX + base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def ring_of(key_id: str = "active", material: bytes = KEY) -> Keyring:
    return Keyring(ProtectionKey(key_id, material))


def fails(call: Callable[[], object], error: type[ProtocolError] = InvalidParams) -> None:
    """``call`` raises exactly ``error`` with its fixed message and no chained cause."""
    with pytest.raises(error) as info:
        call()
    assert type(info.value) is error
    assert str(info.value) == error.message
    assert info.value.__cause__ is None


PARAMS = JsonObject(
    {
        "name": "deploy",
        "arguments": {"env": "prod", "requestState": "nested", "_meta": {"progressToken": 1}},
        "_meta": {
            "progressToken": "p-1",
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "tracestate": "a=b",
            "baggage": "k=v",
            "protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
        },
        "inputResponses": {"confirm": {"action": "accept"}},
        "requestState": "soklet-mcp-request-state-v1.x",
    }
)


def bind(
    params: JsonObject = PARAMS,
    *,
    endpoint_path: str = "/mcp",
    protocol_version: str = "2026-07-28",
    method: str = "tools/call",
    authorization: str | None = "tenant-1",
) -> bytes:
    return binding(
        endpoint_path=endpoint_path,
        protocol_version=protocol_version,
        method=method,
        authorization=authorization,
        params=params,
    )


def changed(path: tuple[str, ...], value: object) -> JsonObject:
    """PARAMS with the member at ``path`` set to ``value`` (or removed when ``value`` is ...)."""
    root: Any = json.loads(canonical_json(PARAMS))
    data = root
    for name in path[:-1]:
        data = data[name]
    if value is ...:
        del data[path[-1]]
    else:
        data[path[-1]] = value
    result = from_python(root)
    assert isinstance(result, JsonObject)
    return result


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def ring() -> Keyring:
    return ring_of()


@pytest.fixture
def protector(ring: Keyring, clock: Clock) -> RequestStateProtector:
    return RequestStateProtector(ring, clock_ns=clock)


STATE = from_python({"step": 2, "amount": Decimal("12.50"), "tags": ["a", "b"]})


@pytest.fixture
def wire(protector: RequestStateProtector) -> str:
    return protector.seal(STATE, binding=bind(), request_id=1, previous=None)


# --- canonical JSON ---------------------------------------------------------------------------


def test_canonical_string_escapes() -> None:
    text = "".join(map(chr, range(0x20))) + '"\\/\x7f\u2028é😀'
    assert canonical_json(text) == (
        b'"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r'
        b"\\u000e\\u000f\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019"
        b'\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f\\"\\\\/\x7f\xe2\x80\xa8\xc3\xa9'
        b'\xf0\x9f\x98\x80"'
    )
    assert canonical_json("") == b'""'
    assert canonical_json("plain") == b'"plain"'


def test_canonical_member_order_is_utf8_byte_order() -> None:
    """U+FFFF sorts before U+1F600 by UTF-8 bytes (EF.. < F0..), though UTF-16 order (a
    surrogate D83D..) would put the emoji first."""
    value = from_python({"b": 1, "a": 2, "\uffff": 3, "😀": 4, "é": 5, "Z": 6, "": 7, "aa": 8})
    assert canonical_json(value) == (
        b'{"":7,"Z":6,"a":2,"aa":8,"b":1,"\xc3\xa9":5,"\xef\xbf\xbf":3,"\xf0\x9f\x98\x80":4}'
    )
    assert isinstance(value, JsonObject)
    names = list(value)
    assert sorted(names, key=lambda n: n.encode("utf-8")) == sorted(names)
    assert sorted(names, key=lambda n: n.encode("utf-16-be")) != sorted(names)


@pytest.mark.parametrize(
    ("number", "spelling"),
    [
        (0, "0"),
        (7, "7"),
        (-5, "-5"),
        (123, "123"),
        (100, "1E+2"),
        (-120, "-1.2E+2"),
        (10**19, "1E+19"),
        (10**20 + 1, "100000000000000000001"),
        (-(10**18), "-1E+18"),
        pytest.param(10**5000, "1E+5000", id="10**5000"),
        (Decimal("1.50"), "1.5"),
        (Decimal("0.0"), "0"),
        (Decimal("-0"), "0"),
        (Decimal("-0.000E+9"), "0"),
        (Decimal("1e-7"), "1E-7"),
        (Decimal("-1.0E-7"), "-1E-7"),
        (Decimal("0.000001"), "0.000001"),
        (Decimal("0.0000010"), "0.000001"),
        (Decimal("0.00000123"), "0.00000123"),
        (Decimal("0.000000123"), "1.23E-7"),
        (Decimal("123456789e20"), "1.23456789E+28"),
        (Decimal("12.3400"), "12.34"),
        (Decimal("1234.5E+3"), "1.2345E+6"),
        (Decimal("100.0"), "1E+2"),
        (Decimal("5"), "5"),
        (Decimal("1E+999999999"), "1E+999999999"),
        (Decimal("1" * 40 + "0" * 5), "1." + "1" * 39 + "E+44"),
        (Decimal("0." + "1" * 40), "0." + "1" * 40),
    ],
)
def test_canonical_numbers_are_strip_trailing_zeros(number: int | Decimal, spelling: str) -> None:
    assert canonical_json(number) == spelling.encode("ascii")


def test_canonical_literals_and_containers() -> None:
    value = from_python({"c": [1, [2, {}], []], "b": {}, "a": [True, False, None]})
    assert canonical_json(value) == b'{"a":[true,false,null],"b":{},"c":[1,[2,{}],[]]}'
    assert canonical_json({"x": [1, (2, 3)]}) == b'{"x":[1,[2,3]]}'  # plain containers too
    assert canonical_json(JsonObject()) == b"{}"
    assert canonical_json(None) == b"null"


@pytest.mark.parametrize(
    "value",
    [
        1.5,
        {1, 2},
        object(),
        Decimal("NaN"),
        Decimal("Infinity"),
        {1: "a"},
        "\ud800",
        {"\udfff": 1},
        [[["x", b"bytes"]]],
    ],
)
def test_canonical_refuses_what_is_not_json(value: object) -> None:
    with pytest.raises(InvalidValueError):
        canonical_json(value)


def test_canonical_refuses_deep_and_cyclic_containers() -> None:
    deep: list[object] = []
    for _ in range(511):
        deep = [deep]
    assert canonical_json(deep) == b"[" * 512 + b"]" * 512
    with pytest.raises(InvalidValueError):
        canonical_json([deep])
    cyclic: list[object] = []
    cyclic.append(cyclic)
    with pytest.raises(InvalidValueError):
        canonical_json(cyclic)


def test_canonical_max_chars() -> None:
    assert canonical_json([1, 2], max_chars=5) == b"[1,2]"
    with pytest.raises(InvalidValueError):
        canonical_json([1, 2], max_chars=4)  # only the closing bracket is over
    with pytest.raises(InvalidValueError):
        canonical_json(["abcdef", 1], max_chars=3)  # stops at the first long piece


# --- binding ----------------------------------------------------------------------------------


def test_canonical_params_drops_only_the_transient_members() -> None:
    assert canonical_params(PARAMS) == (
        b'{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},'
        b'"protocolVersion":"2026-07-28"},"arguments":{"_meta":{"progressToken":1},'
        b'"env":"prod","requestState":"nested"},"name":"deploy"}'
    )
    odd = JsonObject({"_meta": "odd", "x": 1})
    assert canonical_params(odd) == b'{"_meta":"odd","x":1}'
    assert canonical_params(JsonObject()) == b"{}"


def test_canonical_params_have_their_own_headroom(monkeypatch: pytest.MonkeyPatch) -> None:
    """JL-10: the binding's canonical params are bounded separately from the state limits."""
    assert _state_codec.PARAMS_HEADROOM_CHARS == 32 * 1024 * 1024
    size = len(canonical_params(PARAMS))
    monkeypatch.setattr(_state_codec, "PARAMS_HEADROOM_CHARS", size)
    assert len(bind()) == 36 + 8 + 14 + 14 + 13 + 32
    monkeypatch.setattr(_state_codec, "PARAMS_HEADROOM_CHARS", size - 1)
    with pytest.raises(InvalidValueError):
        canonical_params(PARAMS)
    fails(bind)


def test_binding_bytes() -> None:
    params = from_python({"name": "x"})
    assert isinstance(params, JsonObject)
    digest = hashlib.sha256(
        b"soklet-mcp-request-state-params-v1\x00" + b"\x00\x00\x00\x0c" + b'{"name":"x"}'
    ).digest()
    anonymous = binding(
        endpoint_path="/mcp",
        protocol_version="2026-07-28",
        method="tools/call",
        authorization=None,
        params=params,
    )
    assert anonymous == (
        b"soklet-mcp-request-state-binding-v1\x00"
        b"\x00\x00\x00\x04/mcp"
        b"\x00\x00\x00\x0a2026-07-28"
        b"\x00\x00\x00\x0atools/call"
        b"\x00\x00\x00\x00\x00" + digest
    )
    keyed = binding(
        endpoint_path="/é",
        protocol_version="2026-07-28",
        method="tools/call",
        authorization="tenant-1",
        params=params,
    )
    assert keyed == (
        b"soklet-mcp-request-state-binding-v1\x00"
        b"\x00\x00\x00\x03/\xc3\xa9"
        b"\x00\x00\x00\x0a2026-07-28"
        b"\x00\x00\x00\x0atools/call"
        b"\x01\x00\x00\x00\x08tenant-1" + digest
    )


def test_binding_partition_key_is_one_to_256_utf8_bytes() -> None:
    assert bind(authorization="é" * 128).count(b"\xc3\xa9") == 128
    assert b"\x01\x00\x00\x01\x00" in bind(authorization="k" * 256)
    for bad in ["", "k" * 257, "é" * 128 + "k", "\ud800"]:
        fails(partial(bind, authorization=bad), InternalError)
    fails(lambda: bind(endpoint_path="/\udc00"), InternalError)


def test_binding_digest() -> None:
    assert binding_digest(b"") == "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU"
    assert len(binding_digest(VECTOR_BINDING)) == 43


# --- plaintext --------------------------------------------------------------------------------

RECORD = PlaintextState(
    binding_digest="d" * 43,
    issued_at_ns=T0,
    expires_at_ns=T0 + LIFETIME_NS,
    round=3,
    originating_request_id="7",
    state=from_python({"b": [Decimal("1.50"), None], "a": "x"}),
)
RECORD_BYTES = (
    b'{"bindingDigest":"' + b"d" * 43 + b'","expiresAtEpochSecond":1.7000009E+9,'
    b'"expiresAtNanoAdjustment":123456789,"issuedAtEpochSecond":1.7E+9,'
    b'"issuedAtNanoAdjustment":123456789,"originatingRequestId":"7","round":3,'
    b'"state":{"a":"x","b":[1.5,null]},"version":1}'
)


def test_plaintext_encodes_canonically_and_round_trips() -> None:
    assert encode_plaintext(RECORD) == RECORD_BYTES
    assert decode_plaintext(RECORD_BYTES, limits=DEFAULT_LIMITS) == RECORD


@pytest.mark.parametrize(
    ("request_id", "spelling"),
    [("7", b'"7"'), (7, b"7"), (10, b"1E+1"), (-300, b"-3E+2"), (0, b"0"), (10**639, b"1E+639")],
)
def test_plaintext_request_id_keeps_its_type(request_id: str | int, spelling: bytes) -> None:
    record = PlaintextState("d", 0, 1, 1, request_id, None)
    data = encode_plaintext(record)
    assert b'"originatingRequestId":' + spelling + b"," in data
    opened = decode_plaintext(data, limits=DEFAULT_LIMITS).originating_request_id
    assert opened == request_id
    assert type(opened) is type(request_id)


def test_plaintext_instants_before_the_epoch() -> None:
    record = PlaintextState("d", -1, 0, 1, 1, None)
    data = encode_plaintext(record)
    assert b'"issuedAtEpochSecond":-1,"issuedAtNanoAdjustment":999999999' in data
    assert decode_plaintext(data, limits=DEFAULT_LIMITS) == record


@pytest.mark.parametrize(
    "record",
    [
        PlaintextState("d", 1.5, 2, 1, 1, None),  # type: ignore[arg-type]
        PlaintextState("d", True, 2, 1, 1, None),
        PlaintextState("d", 1, 2**63 * 1_000_000_000, 1, 1, None),
        PlaintextState("d", -(2**63) * 1_000_000_000 - 1, 2, 1, 1, None),
        PlaintextState(b"d", 1, 2, 1, 1, None),  # type: ignore[arg-type]
        PlaintextState("d", 1, 2, 2**31, 1, None),
        PlaintextState("d", 1, 2, -(2**31) - 1, 1, None),
        PlaintextState("d", 1, 2, True, 1, None),
        PlaintextState("d", 1, 2, 1, True, None),
        PlaintextState("d", 1, 2, 1, 1.0, None),  # type: ignore[arg-type]
        PlaintextState("d", 1, 2, 1, 1, 1.5),  # type: ignore[arg-type]
    ],
)
def test_plaintext_encode_refuses_bad_fields(record: PlaintextState) -> None:
    with pytest.raises(InvalidValueError):
        encode_plaintext(record)


def test_plaintext_encode_bounds() -> None:
    record = PlaintextState("d", 1, 2, 2**31 - 1, 1, None)
    assert encode_plaintext(record, max_chars=len(encode_plaintext(record))) is not None
    with pytest.raises(InvalidValueError):
        encode_plaintext(record, max_chars=len(encode_plaintext(record)) - 1)
    assert b'"round":-2147483648' in encode_plaintext(PlaintextState("d", 1, 2, -(2**31), 1, None))


def members(**changes: object) -> bytes:
    """Canonical bytes of a plaintext object with some members changed (``...`` removes)."""
    value: dict[str, object] = {
        "version": 1,
        "bindingDigest": "d",
        "issuedAtEpochSecond": 1,
        "issuedAtNanoAdjustment": 0,
        "expiresAtEpochSecond": 2,
        "expiresAtNanoAdjustment": 0,
        "round": 1,
        "originatingRequestId": 1,
        "state": None,
    }
    for name, member in changes.items():
        if member is ...:
            del value[name]
        else:
            value[name] = member
    return canonical_json(value)


def test_plaintext_decode_accepts_the_extremes() -> None:
    data = members(
        issuedAtEpochSecond=-(2**63),
        expiresAtEpochSecond=2**63 - 1,
        issuedAtNanoAdjustment=999_999_999,
        round=2**31 - 1,
    )
    record = decode_plaintext(data, limits=DEFAULT_LIMITS)
    assert record.issued_at_ns == -(2**63) * 1_000_000_000 + 999_999_999
    assert record.expires_at_ns == (2**63 - 1) * 1_000_000_000
    assert record.round == 2**31 - 1


@pytest.mark.parametrize(
    "data",
    [
        b"{",
        b"[]",
        b"\xef\xbb\xbf{}",
        members(state=...),
        members(extra=1),
        members(selectedLocale="en"),
        members(version=2),
        members(version=True),
        members(version="1"),
        members(bindingDigest=1),
        members(originatingRequestId=Decimal("1.5")),
        members(originatingRequestId=Decimal("1E+640")),
        members(originatingRequestId=True),
        members(originatingRequestId=None),
        members(originatingRequestId=[1]),
        members(issuedAtEpochSecond=2**63),
        members(issuedAtEpochSecond=-(2**63) - 1),
        members(issuedAtEpochSecond=Decimal("1E+19")),
        members(issuedAtEpochSecond=Decimal("0.5")),
        members(issuedAtEpochSecond="1"),
        members(issuedAtNanoAdjustment=-1),
        members(expiresAtNanoAdjustment=10**9),
        members(round=2**31),
        members(round=-(2**31) - 1),
        members(round=False),
        members().replace(b",", b", ", 1),  # whitespace
        members().replace(b'"round":1', b'"round":1.0'),  # a non-canonical number
        members().replace(b'"round":1', b'"round":-0'),
        members().replace(b'"version":1', b'"version":1E+0'),
        b'{"version":1,' + members()[1:].replace(b',"version":1', b""),  # member order
        members(state="é").replace(b"\xc3\xa9", b"\\u00e9"),  # an unneeded escape
        members(state="\x1f").replace(b"\\u001f", b"\\u001F"),  # uppercase hex
    ],
)
def test_plaintext_decode_refuses_anything_but_canonical_version_1(data: bytes) -> None:
    fails(lambda: decode_plaintext(data, limits=DEFAULT_LIMITS))


def test_plaintext_decode_respects_limits() -> None:
    data = members(state=[[["deep"]]])
    assert decode_plaintext(data, limits=DEFAULT_LIMITS).state == (((("deep",),),))
    fails(lambda: decode_plaintext(data, limits=Limits(max_json_depth=3)))


# --- envelope shape ---------------------------------------------------------------------------


def raw_envelope(
    *,
    version: int = 1,
    key_id: bytes = b"active",
    id_length: int | None = None,
    profile: bytes = b"soklet-mcp-protection-v1",
    profile_length: int | None = None,
    body: int = 17,
) -> bytes:
    return b"".join(
        (
            bytes((version, len(key_id) if id_length is None else id_length)),
            key_id,
            bytes((len(profile) if profile_length is None else profile_length,)),
            profile,
            PREFIX + bytes(8),
            NONCE,
            b"\xaa" * body,
        )
    )


def test_shape_accepts_the_grammar(protector: RequestStateProtector) -> None:
    for key_id in [b"a", b"k" * 64, b"!#$%&'*+-.^_`|~09AZaz"]:
        value = rewire(raw_envelope(key_id=key_id))
        assert protector.check_shape(value) is value
    assert parse_envelope(rewire(raw_envelope(body=17)), **LIMITS).sealed == b"\xaa" * 17


@pytest.mark.parametrize(
    "raw",
    [
        b"\x01",
        raw_envelope(version=0),
        raw_envelope(version=2),
        raw_envelope(key_id=b""),
        raw_envelope(key_id=b"k" * 65),
        raw_envelope(key_id=b"a b"),
        raw_envelope(key_id=b"a@b"),
        raw_envelope(key_id=b"a:b"),
        raw_envelope(key_id=b"\xc3\xa9"),
        raw_envelope(key_id=b"a\x00"),
        raw_envelope(id_length=7),
        raw_envelope(id_length=5),
        raw_envelope(profile_length=23),
        raw_envelope(profile_length=25),
        raw_envelope(profile=b"soklet-mcp-protection-v2"),
        raw_envelope(profile=b"SOKLET-MCP-PROTECTION-V1"),
        raw_envelope(body=16),  # a tag but no ciphertext
        raw_envelope(body=0),
        raw_envelope()[:40],
    ],
)
def test_shape_refuses_a_bad_header(protector: RequestStateProtector, raw: bytes) -> None:
    fails(lambda: protector.check_shape(rewire(raw)))


@pytest.mark.parametrize(
    "value",
    [
        None,
        7,
        VECTOR_WIRE.encode("ascii"),
        "",
        WIRE_PREFIX,
        WIRE_PREFIX[:-1] + VECTOR_WIRE[len(WIRE_PREFIX) - 1 :].replace(".", "", 1),
        "soklet-mcp-request-state-v2." + VECTOR_WIRE[len(WIRE_PREFIX) :],
        VECTOR_WIRE.upper(),
        " " + VECTOR_WIRE,
        VECTOR_WIRE + "=",
        VECTOR_WIRE + "==",
        VECTOR_WIRE + "\n",
        VECTOR_WIRE + "AA",  # length 1 mod 4
        VECTOR_WIRE[:-1] + "R",  # the same bytes, non-zero unused bits
        VECTOR_WIRE[:60] + "+" + VECTOR_WIRE[61:],
        VECTOR_WIRE[:60] + "/" + VECTOR_WIRE[61:],
        VECTOR_WIRE[:60] + "é" + VECTOR_WIRE[61:],
        VECTOR_WIRE[:60] + " " + VECTOR_WIRE[61:],
    ],
)
def test_shape_refuses_a_bad_wire_string(protector: RequestStateProtector, value: object) -> None:
    assert protector.check_shape(VECTOR_WIRE) == VECTOR_WIRE
    fails(lambda: protector.check_shape(value))
    submitted = cast(str, value)  # not always a str: open() must cope all the same
    fails(lambda: protector.open(submitted, binding=VECTOR_BINDING, request_id=2))


# --- seal and open ----------------------------------------------------------------------------


def test_round_trip(protector: RequestStateProtector, wire: str, clock: Clock) -> None:
    assert protector.check_shape(wire) == wire
    assert parse_envelope(wire, **LIMITS).key_id == "active"
    opened = protector.open(wire, binding=bind(), request_id=2)
    assert opened == Opened(STATE, 1, T0, T0 + LIFETIME_NS)
    assert opened.state == from_python({"amount": Decimal("12.5"), "step": 2, "tags": ["a", "b"]})
    assert protector.keyring is not None
    # Continuation keeps issue and expiry and counts the round.
    clock.now += 10
    again = protector.seal("next", binding=bind(), request_id=2, previous=opened)
    assert protector.open(again, binding=bind(), request_id=3) == Opened(
        "next", 2, T0, T0 + LIFETIME_NS
    )


def test_every_seal_is_fresh(protector: RequestStateProtector) -> None:
    first = protector.seal(STATE, binding=bind(), request_id=1, previous=None)
    second = protector.seal(STATE, binding=bind(), request_id=1, previous=None)
    assert first != second


@pytest.mark.parametrize(
    "position",
    [
        0,  # version
        1,  # id length
        2,  # id
        7,  # last id byte
        8,  # profile length
        9,  # profile
        32,  # last profile byte
        33,  # epoch prefix
        57,  # epoch number
        64,  # last epoch byte
        65,  # nonce
        76,  # last nonce byte
        77,  # ciphertext
        -17,  # last ciphertext byte
        -16,  # tag
        -1,  # last tag byte
    ],
)
def test_tampering_any_byte_class_is_refused(
    protector: RequestStateProtector, wire: str, position: int
) -> None:
    raw = bytearray(unwire(wire))
    for bit in (0x01, 0x80):
        tampered = bytearray(raw)
        tampered[position] ^= bit
        value = rewire(bytes(tampered))
        fails(partial(protector.open, value, binding=bind(), request_id=2))


def test_tampering_every_byte_is_refused(protector: RequestStateProtector, wire: str) -> None:
    raw = unwire(wire)
    for position in range(len(raw)):
        tampered = bytearray(raw)
        tampered[position] ^= 0x04
        value = rewire(bytes(tampered))
        fails(partial(protector.open, value, binding=bind(), request_id=2))
    for value in [rewire(raw[:-1]), rewire(raw + b"\x00"), rewire(raw[:-16]), wire[:-1]]:
        fails(partial(protector.open, value, binding=bind(), request_id=2))
    assert protector.open(wire, binding=bind(), request_id=2).round == 1


def test_a_valid_envelope_with_foreign_plaintext_is_refused() -> None:
    """The vector's plaintext authenticates but is not a framework plaintext."""
    protector = RequestStateProtector(ring_of())
    fails(lambda: protector.open(VECTOR_WIRE, binding=VECTOR_BINDING, request_id=1))


@pytest.mark.parametrize(
    "params",
    [
        changed(("_meta", "progressToken"), "p-2"),
        changed(("_meta", "progressToken"), ...),
        changed(
            ("_meta", "traceparent"), "00-1af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        ),
        changed(("_meta", "tracestate"), ...),
        changed(("_meta", "baggage"), "k=w"),
        changed(("inputResponses",), {"confirm": {"action": "decline"}}),
        changed(("inputResponses",), ...),
        changed(("requestState",), "other"),
        changed(("requestState",), ...),
    ],
)
def test_transient_members_may_change(
    protector: RequestStateProtector, wire: str, params: JsonObject
) -> None:
    assert protector.open(wire, binding=bind(params), request_id=2).round == 1


@pytest.mark.parametrize(
    "other",
    [
        bind(endpoint_path="/mcp/"),
        bind(endpoint_path="/MCP"),
        bind(protocol_version="2025-11-25"),
        bind(method="prompts/get"),
        bind(authorization=None),
        bind(authorization="tenant-2"),
        bind(changed(("name",), "deploy2")),
        bind(changed(("arguments", "env"), "dev")),
        bind(changed(("arguments", "requestState"), "other")),
        bind(changed(("arguments", "_meta", "progressToken"), 2)),
        bind(changed(("_meta", "protocolVersion"), "2025-11-25")),
        bind(changed(("_meta", "io.modelcontextprotocol/clientInfo", "version"), "2")),
        bind(changed(("_meta", "vendor/x"), 1)),
        bind(changed(("cursor",), "c")),
        VECTOR_BINDING,
    ],
)
def test_bound_fields_may_not_change(
    protector: RequestStateProtector, wire: str, other: bytes
) -> None:
    fails(lambda: protector.open(wire, binding=other, request_id=2))


def test_expiry(protector: RequestStateProtector, wire: str, clock: Clock) -> None:
    clock.now = T0 + LIFETIME_NS - 1
    opened = protector.open(wire, binding=bind(), request_id=2)
    clock.now = T0 + LIFETIME_NS
    fails(lambda: protector.open(wire, binding=bind(), request_id=2))
    # A continuation cannot be sealed once its exchange has expired.
    fails(lambda: protector.seal(1, binding=bind(), request_id=2, previous=opened), InternalError)


def test_the_lifetime_is_checked_against_the_current_configuration(
    ring: Keyring, wire: str
) -> None:
    shorter = RequestStateProtector(ring, lifetime_seconds=899.999999999, clock_ns=Clock())
    fails(lambda: shorter.open(wire, binding=bind(), request_id=2))
    same = RequestStateProtector(ring, lifetime_seconds=900, clock_ns=Clock())
    assert same.open(wire, binding=bind(), request_id=2).round == 1


def test_round_cap(ring: Keyring, clock: Clock) -> None:
    protector = RequestStateProtector(ring, max_rounds=3, clock_ns=clock)
    wire = protector.seal(0, binding=bind(), request_id=0, previous=None)
    for round_ in (1, 2, 3):
        opened = protector.open(wire, binding=bind(), request_id=round_)
        assert opened.round == round_
        if round_ < 3:
            wire = protector.seal(round_, binding=bind(), request_id=round_, previous=opened)
    # The last round completes but cannot emit again.
    fails(lambda: protector.seal(3, binding=bind(), request_id=3, previous=opened), InternalError)
    lower = RequestStateProtector(ring, max_rounds=2, clock_ns=clock)
    fails(lambda: lower.open(wire, binding=bind(), request_id=9))


def forge(ring: Keyring, record: PlaintextState, *, binding_bytes: bytes | None = None) -> str:
    """Seal an arbitrary plaintext under the ring's key, as only a key holder could."""
    material = ring._material("active")
    assert material is not None
    return seal_envelope(
        key_id="active",
        material=material,
        sealer_epoch=sealer_epoch(PREFIX, 5),
        nonce=NONCE,
        binding=bind() if binding_bytes is None else binding_bytes,
        plaintext=encode_plaintext(record),
    )


def test_forged_records_face_every_open_check(
    protector: RequestStateProtector, ring: Keyring
) -> None:
    digest = binding_digest(bind())
    good = PlaintextState(digest, T0, T0 + LIFETIME_NS, 1, 1, "s")
    assert protector.open(forge(ring, good), binding=bind(), request_id=2).state == "s"
    future = PlaintextState(digest, T0 + 10**12, T0 + 10**12 + LIFETIME_NS, 1, 1, None)
    assert protector.open(forge(ring, future), binding=bind(), request_id=2).round == 1
    for record in [
        PlaintextState(binding_digest(VECTOR_BINDING), T0, T0 + 1, 1, 1, None),
        PlaintextState(digest[:-1], T0, T0 + 1, 1, 1, None),
        PlaintextState("é" * 43, T0, T0 + 1, 1, 1, None),
        PlaintextState(digest, T0, T0, 1, 1, None),  # issued == expires
        PlaintextState(digest, T0 + 2, T0 + 1, 1, 1, None),
        PlaintextState(digest, T0, T0 + LIFETIME_NS + 1, 1, 1, None),
        PlaintextState(digest, T0 - 10, T0, 1, 1, None),  # expired
        PlaintextState(digest, T0, T0 + 1, 0, 1, None),
        PlaintextState(digest, T0, T0 + 1, -1, 1, None),
        PlaintextState(digest, T0, T0 + 1, 11, 1, None),
        PlaintextState(digest, T0, T0 + 1, 1, 2, None),  # the same request id
    ]:
        forged = forge(ring, record)
        fails(partial(protector.open, forged, binding=bind(), request_id=2))


@pytest.mark.parametrize(
    ("sealed_by", "opened_by", "opens"),
    [(7, 7, False), (7, "7", True), ("7", "7", False), ("7", 7, True), (0, "", True)],
)
def test_the_prior_request_id_is_compared_typed(
    protector: RequestStateProtector, sealed_by: str | int, opened_by: str | int, opens: bool
) -> None:
    wire = protector.seal(None, binding=bind(), request_id=sealed_by, previous=None)
    if opens:
        assert protector.open(wire, binding=bind(), request_id=opened_by).state is None
    else:
        fails(lambda: protector.open(wire, binding=bind(), request_id=opened_by))


def test_keys_unknown_rotated_and_removed(ring: Keyring, clock: Clock) -> None:
    protector = RequestStateProtector(ring, clock_ns=clock)
    old = protector.seal(1, binding=bind(), request_id=1, previous=None)
    ring.rotate(ProtectionKey("next", bytes(range(100, 132))))
    new = protector.seal(2, binding=bind(), request_id=1, previous=None)
    assert parse_envelope(new, **LIMITS).key_id == "next"
    # The old key is verification-only now: it still opens.
    assert protector.open(old, binding=bind(), request_id=2).state == 1
    assert protector.open(new, binding=bind(), request_id=2).state == 2
    assert ring.remove("active") is True
    fails(lambda: protector.open(old, binding=bind(), request_id=2))
    stranger = RequestStateProtector(ring_of("stranger", bytes(range(50, 82))), clock_ns=clock)
    fails(lambda: stranger.open(new, binding=bind(), request_id=2))


def test_protectors_with_the_same_key_share_state(clock: Clock) -> None:
    one = RequestStateProtector(ring_of(), clock_ns=clock)
    two = RequestStateProtector(ring_of(), clock_ns=clock)
    wire = one.seal("shared", binding=bind(), request_id=1, previous=None)
    assert two.open(wire, binding=bind(), request_id=2).state == "shared"
    assert (
        one.open(
            two.seal(3, binding=bind(), request_id=1, previous=None), binding=bind(), request_id=2
        ).state
        == 3
    )
    other_bytes = RequestStateProtector(ring_of("active", bytes(range(1, 33))), clock_ns=clock)
    fails(lambda: other_bytes.open(wire, binding=bind(), request_id=2))
    other_id = RequestStateProtector(ring_of("passive"), clock_ns=clock)
    fails(lambda: other_id.open(wire, binding=bind(), request_id=2))


# --- limits -----------------------------------------------------------------------------------


def test_encoded_size_at_the_limit_and_one_past(ring: Keyring, clock: Clock) -> None:
    state = "x" * 1000
    wire = RequestStateProtector(ring, clock_ns=clock).seal(
        state, binding=bind(), request_id=1, previous=None
    )
    at = RequestStateProtector(ring, max_encoded_bytes=len(wire), clock_ns=clock)
    assert at.check_shape(wire) == wire
    again = at.seal(state, binding=bind(), request_id=1, previous=None)
    assert len(again) == len(wire)
    assert at.open(again, binding=bind(), request_id=2).state == state
    past = RequestStateProtector(ring, max_encoded_bytes=len(wire) - 1, clock_ns=clock)
    fails(lambda: past.check_shape(wire))
    fails(lambda: past.seal(state, binding=bind(), request_id=1, previous=None), InternalError)


def test_decoded_size_at_the_limit_and_one_past(ring: Keyring, clock: Clock) -> None:
    state = "x" * 1000
    wire = RequestStateProtector(ring, clock_ns=clock).seal(
        state, binding=bind(), request_id=1, previous=None
    )
    size = len(unwire(wire))
    at = RequestStateProtector(ring, max_decoded_bytes=size, clock_ns=clock)
    assert at.check_shape(wire) == wire
    assert (
        at.open(
            at.seal(state, binding=bind(), request_id=1, previous=None),
            binding=bind(),
            request_id=2,
        ).state
        == state
    )
    past = RequestStateProtector(ring, max_decoded_bytes=size - 1, clock_ns=clock)
    fails(lambda: past.check_shape(wire))
    fails(lambda: past.seal(state, binding=bind(), request_id=1, previous=None), InternalError)


def test_plaintext_size_at_the_limit_and_one_past(ring: Keyring, clock: Clock) -> None:
    """The plaintext limit counts UTF-8 bytes, not characters."""
    record = PlaintextState(binding_digest(bind()), T0, T0 + LIFETIME_NS, 1, 1, "é" * 100)
    size = len(encode_plaintext(record))
    at = RequestStateProtector(
        ring, max_decoded_bytes=size, max_encoded_bytes=10**6, clock_ns=clock
    )
    # The plaintext fits, the envelope around it does not.
    fails(lambda: at.seal("é" * 100, binding=bind(), request_id=1, previous=None), InternalError)
    for limit in (size - 1, size - 100, size - 101):  # bytes over, characters at or over
        past = RequestStateProtector(ring, max_decoded_bytes=limit, clock_ns=clock)
        seal = partial(past.seal, "é" * 100, binding=bind(), request_id=1, previous=None)
        fails(seal, InternalError)


@pytest.mark.parametrize("state", [1.5, {1, 2}, "\ud800", from_python([[[[1]]]])])
def test_unsealable_state_is_an_internal_error(ring: Keyring, state: JsonValue) -> None:
    protector = RequestStateProtector(ring, limits=Limits(max_json_depth=3))
    fails(lambda: protector.seal(state, binding=bind(), request_id=1, previous=None), InternalError)


def test_unsealable_fields_are_an_internal_error(ring: Keyring) -> None:
    protector = RequestStateProtector(ring, clock_ns=Clock((2**63 - 1) * 1_000_000_000))
    fails(lambda: protector.seal(1, binding=bind(), request_id=1, previous=None), InternalError)
    protector = RequestStateProtector(ring)
    fails(lambda: protector.seal(1, binding=bind(), request_id=True, previous=None), InternalError)


# --- epochs and failures ----------------------------------------------------------------------


def epoch_of(wire: str) -> int:
    return int.from_bytes(parse_envelope(wire, **LIMITS).sealer_epoch[24:], "big")


def test_epoch_rolls_over_at_the_reservation_cap(
    ring: Keyring, protector: RequestStateProtector, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_keyring, "RESERVATIONS_PER_EPOCH", 2)
    wires = [protector.seal(i, binding=bind(), request_id=0, previous=None) for i in range(5)]
    assert [epoch_of(w) for w in wires] == [0, 0, 1, 1, 2]
    prefixes = {parse_envelope(w, **LIMITS).sealer_epoch[:24] for w in wires}
    assert len(prefixes) == 1
    for i, w in enumerate(wires):
        assert protector.open(w, binding=bind(), request_id=1).state == i


def test_a_failed_nonce_consumes_its_slot(ring: Keyring, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_keyring, "RESERVATIONS_PER_EPOCH", 2)
    draws: list[bool] = [False, True, True]

    def flaky(size: int) -> bytes:
        if not draws.pop(0):
            raise OSError("no entropy")
        return bytes(size)

    protector = RequestStateProtector(ring, random=flaky)
    fails(
        lambda: protector.seal(1, binding=bind(), request_id=0, previous=None), ProtectorUnavailable
    )
    second = protector.seal(1, binding=bind(), request_id=0, previous=None)
    third = protector.seal(1, binding=bind(), request_id=0, previous=None)
    assert (epoch_of(second), epoch_of(third)) == (0, 1)


def test_epoch_exhaustion_fails_closed(
    ring: Keyring, protector: RequestStateProtector, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_keyring, "RESERVATIONS_PER_EPOCH", 1)
    ring._epoch = 2**64 - 2
    ring._reserved = 1
    last = protector.seal(1, binding=bind(), request_id=0, previous=None)
    assert parse_envelope(last, **LIMITS).sealer_epoch[24:] == b"\xff" * 8
    assert protector.open(last, binding=bind(), request_id=1).state == 1
    for _ in range(2):
        fails(
            lambda: protector.seal(1, binding=bind(), request_id=0, previous=None),
            ProtectorUnavailable,
        )
    ring.activate("active")  # a fresh activation starts again at epoch 0
    assert epoch_of(protector.seal(1, binding=bind(), request_id=0, previous=None)) == 0


def test_bad_randomness_is_unavailable(ring: Keyring) -> None:
    def broken(size: int) -> bytes:
        raise RuntimeError("entropy")

    for random in [broken, lambda size: bytes(size - 1), lambda size: bytearray(size)]:
        protector = RequestStateProtector(ring, random=random)  # type: ignore[arg-type]
        seal = partial(protector.seal, 1, binding=bind(), request_id=0, previous=None)
        fails(seal, ProtectorUnavailable)


class _BrokenAESGCM:
    def __init__(self, key: bytes) -> None:
        pass

    def encrypt(self, nonce: bytes, data: bytes, aad: bytes) -> bytes:
        raise RuntimeError("provider down")

    def decrypt(self, nonce: bytes, data: bytes, aad: bytes) -> bytes:
        raise RuntimeError("provider down")


def test_a_provider_failure_is_unavailable(
    protector: RequestStateProtector, wire: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(protection, "AESGCM", _BrokenAESGCM)
    fails(lambda: protector.open(wire, binding=bind(), request_id=2), ProtectorUnavailable)
    fails(
        lambda: protector.seal(1, binding=bind(), request_id=0, previous=None), ProtectorUnavailable
    )


def test_errors_carry_nothing_sensitive(protector: RequestStateProtector, wire: str) -> None:
    tampered = wire[:-2] + ("A" if wire[-2] != "A" else "B") + wire[-1]
    with pytest.raises(InvalidParams) as info:
        protector.open(tampered, binding=bind(), request_id=2)
    text = repr(info.value) + str(info.value) + repr(info.value.args)
    assert info.value.data is None
    for secret in [KEY.hex(), wire, tampered, "active", "deploy"]:
        assert secret not in text


# --- construction -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"max_encoded_bytes": 0},
        {"max_encoded_bytes": True},
        {"max_decoded_bytes": 2**31},
        {"max_decoded_bytes": 1.0},
        {"max_rounds": 0},
        {"max_rounds": 2**31},
        {"lifetime_seconds": 0},
        {"lifetime_seconds": -1.0},
        {"lifetime_seconds": 1e-10},
        {"lifetime_seconds": float("nan")},
        {"lifetime_seconds": float("inf")},
        {"lifetime_seconds": True},
        {"lifetime_seconds": "900"},
        {"limits": {}},
    ],
)
def test_construction_refuses_bad_settings(ring: Keyring, options: dict[str, object]) -> None:
    with pytest.raises(ConfigurationError):
        RequestStateProtector(ring, **options)  # type: ignore[arg-type]


def test_construction_refuses_a_non_keyring() -> None:
    with pytest.raises(ConfigurationError):
        RequestStateProtector(object())  # type: ignore[arg-type]


def test_construction_accepts_the_edges(ring: Keyring) -> None:
    RequestStateProtector(
        ring,
        max_encoded_bytes=1,
        max_decoded_bytes=2**31 - 1,
        max_rounds=2**31 - 1,
        lifetime_seconds=1e-9,
    )
