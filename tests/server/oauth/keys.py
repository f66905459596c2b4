"""Real signing keys and tokens for the verifier tests: RSA 2048, EC P-256 and Ed25519 keys
made with ``cryptography``, their public JWKs, tokens signed with PyJWT, and hand-built
tokens for what PyJWT refuses to sign (``alg: none``, HMAC keyed with an RSA public key)."""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import json
import time
from dataclasses import dataclass
from typing import Any, Final

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

ISSUER: Final = "https://as.example"
AUDIENCE: Final = "https://mcp.example/mcp"

PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey


@dataclass(frozen=True)
class SigningKey:
    """A private key, the algorithm it signs with, and its kid."""

    kid: str | None
    private: PrivateKey
    alg: str

    def jwk(self, *, declare_alg: bool = True, **extra: object) -> dict[str, object]:
        """The public JWK, with ``kid`` and ``use: sig`` (and ``alg`` when declared)."""
        public = self.private.public_key()
        text: str
        if isinstance(public, rsa.RSAPublicKey):
            text = RSAAlgorithm.to_jwk(public)
        elif isinstance(public, ec.EllipticCurvePublicKey):
            text = ECAlgorithm.to_jwk(public)
        else:
            text = OKPAlgorithm.to_jwk(public)
        jwk: dict[str, object] = json.loads(text)
        jwk.pop("key_ops", None)
        jwk["use"] = "sig"
        if self.kid is not None:
            jwk["kid"] = self.kid
        if declare_alg:
            jwk["alg"] = self.alg
        jwk.update(extra)
        return jwk

    def public_pem(self) -> bytes:
        return self.private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )

    def with_kid(self, kid: str | None) -> SigningKey:
        return SigningKey(kid, self.private, self.alg)


@functools.cache
def rsa_private(n: int) -> rsa.RSAPrivateKey:
    """The n-th RSA 2048 key (made once per test run: key generation is slow)."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def rsa_key(kid: str | None = "rsa-1", n: int = 0, alg: str = "RS256") -> SigningKey:
    return SigningKey(kid, rsa_private(n), alg)


@functools.cache
def ec_private(n: int) -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def ec_key(kid: str | None = "ec-1", n: int = 0) -> SigningKey:
    return SigningKey(kid, ec_private(n), "ES256")


@functools.cache
def ed_private(n: int) -> ed25519.Ed25519PrivateKey:
    return ed25519.Ed25519PrivateKey.generate()


def ed_key(kid: str | None = "ed-1", n: int = 0) -> SigningKey:
    return SigningKey(kid, ed_private(n), "EdDSA")


def claims(**changes: object) -> dict[str, object]:
    """Good claims for ``ISSUER``; a change to ``None`` removes the claim."""
    now = int(time.time())
    values: dict[str, object] = {
        "iss": ISSUER,
        "sub": "alice",
        "client_id": "app-1",
        "scope": "notes:read notes:write",
        "aud": AUDIENCE,
        "iat": now,
        "exp": now + 600,
    }
    values.update(changes)
    return {name: value for name, value in values.items() if value is not None}


_DEFAULT_HEADER: Final[dict[str, Any]] = {"typ": "at+jwt"}


def token(
    key: SigningKey,
    payload: dict[str, object] | None = None,
    *,
    alg: str | None = None,
    header: dict[str, Any] | None = None,
) -> str:
    """``payload`` (default: ``claims()``) signed by ``key`` with PyJWT; the header carries
    ``key.kid`` (if any) and ``typ: at+jwt`` unless ``header`` overrides them (``typ: None``
    drops the typ)."""
    headers: dict[str, Any] = dict(_DEFAULT_HEADER)
    if key.kid is not None:
        headers["kid"] = key.kid
    headers.update(header or {})
    return jwt.encode(
        claims() if payload is None else payload,
        key.private,
        algorithm=alg or key.alg,
        headers=headers,
    )


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def segment(value: object) -> str:
    return b64(json.dumps(value).encode())


def hand_built(header: object, payload: object, signature: bytes = b"") -> str:
    """A compact JWS with any header and payload and the given signature bytes."""
    return f"{segment(header)}.{segment(payload)}.{b64(signature)}"


def hmac_signed(header: dict[str, object], payload: object, secret: bytes) -> str:
    """An HS256 token keyed by ``secret`` (PyJWT refuses a PEM key as an HMAC secret)."""
    signing_input = f"{segment(header)}.{segment(payload)}"
    mac = hmac.new(secret, signing_input.encode("ascii"), hashlib.sha256).digest()
    return f"{signing_input}.{b64(mac)}"
