"""JwtVerifier, IntrospectionVerifier and the JWKS cache against a real loopback
authorization server (``authserver``), with real keys and PyJWT-signed tokens (``keys``).

The JWKS cache runs on an injected clock, so refresh intervals are crossed without sleeping;
the only real waits are the short ``verifier_timeout_seconds`` of the hanging-server tests.
"""

from __future__ import annotations

import asyncio
import base64
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Final, TypeVar
from urllib.parse import parse_qs

import httpx
import jwt
import pytest

from mcpkit.errors import ConfigurationError
from mcpkit.limits import Limits
from mcpkit.server._access_token import (
    AccessToken,
    TokenProblem,
    TokenRejected,
    TokenVerifier,
    VerifierUnavailable,
    scope_set,
)
from mcpkit.server._introspection import IntrospectionVerifier
from mcpkit.server._jwt_verifier import JwtVerifier
from mcpkit.server._token_fetch import JsonFetcher

from .authserver import AuthServer, Mode, closed_port, running
from .keys import (
    AUDIENCE,
    ISSUER,
    SigningKey,
    claims,
    ec_key,
    ed_key,
    hand_built,
    hmac_signed,
    rsa_key,
    segment,
    token,
)

TIMEOUT: Final = 0.3
LIMITS: Final = Limits().replace(
    verifier_timeout_seconds=TIMEOUT,
    max_verifier_response_bytes=8192,
    max_jwks_keys=8,
    max_token_scopes=4,
)
REFRESH: Final = 300.0
MIN_REFRESH: Final = 30.0
CLIENT_ID: Final = "resource-server"
CLIENT_SECRET: Final = "s3cret-Value-that-must-not-leak"

RSA: Final = rsa_key("rsa-1")  # published with alg RS256
RSA_NOALG: Final = rsa_key("rsa-noalg", n=1)  # published without alg
EC: Final = ec_key("ec-1")
ED: Final = ed_key("ed-1")
STRANGER: Final = rsa_key("rsa-1", n=2)  # not published; borrows a published kid

T = TypeVar("T")


class FakeClock:
    """A monotonic clock moved only by the test."""

    def __init__(self, now: float = 1_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def server() -> Iterator[AuthServer]:
    with running() as state:
        state.jwks = {
            "keys": [
                RSA.jwk(),
                RSA_NOALG.jwk(declare_alg=False),
                EC.jwk(),
                ED.jwk(),
            ]
        }
        yield state


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def verifier(server: AuthServer, clock: FakeClock, **options: Any) -> JwtVerifier:
    settings: dict[str, Any] = {
        "jwks_refresh_seconds": REFRESH,
        "jwks_min_refresh_seconds": MIN_REFRESH,
        "limits": LIMITS,
        "clock": clock,
    }
    settings.update(options)
    return JwtVerifier(ISSUER, server.jwks_uri, **settings)


def run(closing: JwtVerifier | IntrospectionVerifier, body: Callable[[], Awaitable[T]]) -> T:
    """Run ``body`` in a fresh event loop, closing the verifier's pool in that loop."""

    async def scenario() -> T:
        try:
            return await body()
        finally:
            await closing.aclose()

    return asyncio.run(scenario())


def verify(v: TokenVerifier, bearer: str) -> AccessToken:
    closing = v
    assert isinstance(closing, (JwtVerifier, IntrospectionVerifier))
    return run(closing, lambda: v.verify(bearer))


def problem(v: JwtVerifier | IntrospectionVerifier, bearer: str) -> TokenProblem:
    with pytest.raises(TokenRejected) as caught:
        verify(v, bearer)
    assert str(caught.value) == caught.value.problem.name
    return caught.value.problem


async def outcome(v: TokenVerifier, bearer: str) -> TokenProblem | AccessToken | str:
    """What one verification gives, as a value (for many at once)."""
    try:
        return await v.verify(bearer)
    except TokenRejected as error:
        return error.problem
    except VerifierUnavailable:
        return "unavailable"


# --- valid tokens -----------------------------------------------------------------------------


@pytest.mark.parametrize("key", [RSA, EC, ED], ids=["RS256", "ES256", "EdDSA"])
def test_a_valid_token_of_each_key_type_verifies(
    server: AuthServer, clock: FakeClock, key: SigningKey
) -> None:
    payload = claims()
    access = verify(verifier(server, clock), token(key, payload))
    assert access == AccessToken(
        subject="alice",
        client_id="app-1",
        scopes=frozenset({"notes:read", "notes:write"}),
        issuer=ISSUER,
        audience=frozenset({AUDIENCE}),
        expires_at=payload["exp"],  # type: ignore[arg-type]
        claims=payload,
    )
    assert access.claims == payload
    assert access.granted == frozenset()
    assert access.token is None
    assert server.hits["/jwks"] == 1


def test_claims_are_read_from_their_alternative_names(server: AuthServer, clock: FakeClock) -> None:
    payload = claims(client_id=None, azp="app-2", scope=None, scp=["a", "b:c"],
                     aud=[AUDIENCE, "https://other.example", 7])  # fmt: skip
    access = verify(verifier(server, clock), token(RSA, payload))
    assert access.client_id == "app-2"
    assert access.scopes == frozenset({"a", "b:c"})
    assert access.audience == frozenset({AUDIENCE, "https://other.example"})


def test_scope_wins_over_scp_and_missing_claims_are_none(
    server: AuthServer, clock: FakeClock
) -> None:
    payload = claims(sub=None, client_id=None, scope="x", scp=["y"], aud=None,
                     exp=time.time() + 600.5)  # fmt: skip
    access = verify(verifier(server, clock), token(RSA, payload))
    assert access.subject is None
    assert access.client_id is None
    assert access.scopes == frozenset({"x"})
    assert access.audience == frozenset()
    assert access.expires_at is None  # a float exp is honoured by PyJWT but not reported


@pytest.mark.parametrize(
    ("scope", "expected"),
    [("", frozenset()), (None, frozenset()), ("a b c d", frozenset("abcd"))],
    ids=["empty", "absent", "at-the-limit"],
)
def test_scope_edges(
    server: AuthServer, clock: FakeClock, scope: str | None, expected: frozenset[str]
) -> None:
    access = verify(verifier(server, clock), token(RSA, claims(scope=scope)))
    assert access.scopes == expected


def test_an_audience_that_is_neither_str_nor_list_is_empty(
    server: AuthServer, clock: FakeClock
) -> None:
    assert verify(verifier(server, clock), token(RSA, claims(aud=7))).audience == frozenset()


@pytest.mark.parametrize("typ", [None, "JWT", "jwt", "at+jwt", "AT+JWT", "application/at+jwt"])
def test_accepted_token_types(server: AuthServer, clock: FakeClock, typ: str | None) -> None:
    assert verify(verifier(server, clock), token(RSA, header={"typ": typ})).subject == "alice"


def test_a_key_without_alg_accepts_any_algorithm_of_its_type(
    server: AuthServer, clock: FakeClock
) -> None:
    for alg in ("RS256", "PS256", "RS512"):
        assert verify(verifier(server, clock), token(RSA_NOALG, alg=alg)).subject == "alice"


def test_leeway_is_honoured_at_the_edge(server: AuthServer, clock: FakeClock) -> None:
    now = int(time.time())
    lenient = verifier(server, clock, leeway=60)
    assert verify(lenient, token(RSA, claims(exp=now - 20))).subject == "alice"
    assert verify(lenient, token(RSA, claims(nbf=now + 20))).subject == "alice"
    assert problem(lenient, token(RSA, claims(exp=now - 120))) is TokenProblem.EXPIRED
    assert problem(lenient, token(RSA, claims(nbf=now + 120))) is TokenProblem.NOT_YET_VALID
    strict = verifier(server, clock, leeway=0)
    assert problem(strict, token(RSA, claims(exp=now - 5))) is TokenProblem.EXPIRED
    assert problem(strict, token(RSA, claims(nbf=now + 5))) is TokenProblem.NOT_YET_VALID


# --- the hostile table ------------------------------------------------------------------------

NOW: Final = int(time.time())


def _alg_none() -> str:
    return hand_built({"alg": "none", "typ": "at+jwt", "kid": "rsa-1"}, claims())


def _key_confusion() -> str:
    """HS256 keyed with the RSA public key's PEM: a verifier that lets the token pick the
    algorithm would check it with the public key as an HMAC secret."""
    return hmac_signed({"alg": "HS256", "typ": "at+jwt", "kid": "rsa-1"}, claims(),
                       RSA.public_pem())  # fmt: skip


def _tampered() -> str:
    head, _, signature = token(RSA).split(".")
    return f"{head}.{segment(claims(sub='mallory'))}.{signature}"


def _payload_not_json() -> str:
    signing_input = f"{segment({'alg': 'RS256', 'kid': 'rsa-1'})}.{'bm90IGpzb24'}"
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    from .keys import b64, rsa_private

    signature = rsa_private(0).sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input}.{b64(signature)}"


HOSTILE: Final[list[tuple[str, Callable[[], str], TokenProblem]]] = [
    ("expired", lambda: token(RSA, claims(exp=NOW - 3600)), TokenProblem.EXPIRED),
    ("not-yet-valid", lambda: token(RSA, claims(nbf=NOW + 3600)), TokenProblem.NOT_YET_VALID),
    ("wrong-issuer", lambda: token(RSA, claims(iss="https://evil.example")), TokenProblem.ISSUER),
    ("missing-exp", lambda: token(RSA, claims(exp=None)), TokenProblem.MALFORMED),
    ("missing-iss", lambda: token(RSA, claims(iss=None)), TokenProblem.MALFORMED),
    ("exp-not-a-number", lambda: token(RSA, claims(exp="soon")), TokenProblem.MALFORMED),
    ("iat-not-a-number", lambda: token(RSA, claims(iat="then")), TokenProblem.MALFORMED),
    ("bad-signature", lambda: token(STRANGER), TokenProblem.SIGNATURE),
    ("tampered-payload", _tampered, TokenProblem.SIGNATURE),
    ("empty-signature", lambda: token(RSA).rsplit(".", 1)[0] + ".", TokenProblem.SIGNATURE),
    ("alg-none", _alg_none, TokenProblem.ALGORITHM),
    ("hs256-key-confusion", _key_confusion, TokenProblem.ALGORITHM),
    ("alg-unknown", lambda: hand_built({"alg": "XY999", "kid": "rsa-1"}, claims()),
     TokenProblem.ALGORITHM),
    ("alg-missing", lambda: hand_built({"kid": "rsa-1"}, claims()), TokenProblem.ALGORITHM),
    ("alg-a-list", lambda: hand_built({"alg": ["RS256"], "kid": "rsa-1"}, claims()),
     TokenProblem.ALGORITHM),
    ("alg-an-object", lambda: hand_built({"alg": {"RS256": 1}, "kid": "rsa-1"}, claims()),
     TokenProblem.ALGORITHM),
    ("unknown-kid", lambda: token(RSA.with_kid("rsa-9")), TokenProblem.UNKNOWN_KEY),
    ("kid-a-number", lambda: hand_built({"alg": "RS256", "kid": 5}, claims()),
     TokenProblem.MALFORMED),
    ("kid-null", lambda: hand_built({"alg": "RS256", "kid": None}, claims()),
     TokenProblem.MALFORMED),
    ("not-a-jwt", lambda: "hello", TokenProblem.MALFORMED),
    ("empty", lambda: "", TokenProblem.MALFORMED),
    ("bad-base64", lambda: "!!!.e30.AA", TokenProblem.MALFORMED),
    ("header-not-json", lambda: "bm90IGpzb24.e30.AA", TokenProblem.MALFORMED),
    ("header-a-json-array", lambda: hand_built(["RS256"], claims()), TokenProblem.MALFORMED),
    ("payload-not-json", _payload_not_json, TokenProblem.MALFORMED),
    ("typ-jose", lambda: token(RSA, header={"typ": "JOSE"}), TokenProblem.MALFORMED),
    ("typ-id-token", lambda: token(RSA, header={"typ": "id+jwt"}), TokenProblem.MALFORMED),
    ("typ-a-number", lambda: token(RSA, header={"typ": 5}), TokenProblem.MALFORMED),
    ("jwk-alg-rs256-header-ps256", lambda: token(RSA, alg="PS256"), TokenProblem.ALGORITHM),
    ("rsa-key-es256-header",
     lambda: token(SigningKey("rsa-noalg", EC.private, "ES256")), TokenProblem.ALGORITHM),
    ("ec-key-eddsa-header",
     lambda: token(SigningKey("ec-1", ED.private, "EdDSA")), TokenProblem.ALGORITHM),
    ("scope-a-number", lambda: token(RSA, claims(scope=7)), TokenProblem.MALFORMED),
    ("scope-an-object", lambda: token(RSA, claims(scope={"a": 1})), TokenProblem.MALFORMED),
    ("scp-a-number", lambda: token(RSA, claims(scope=None, scp=7)), TokenProblem.MALFORMED),
    ("scp-item-not-str", lambda: token(RSA, claims(scope=None, scp=["a", 1])),
     TokenProblem.MALFORMED),
    ("scope-with-quote", lambda: token(RSA, claims(scope='a "b"')), TokenProblem.MALFORMED),
    ("scope-with-backslash", lambda: token(RSA, claims(scope="a\\b")), TokenProblem.MALFORMED),
    ("scope-with-double-space", lambda: token(RSA, claims(scope="a  b")),
     TokenProblem.MALFORMED),
    ("scope-non-ascii", lambda: token(RSA, claims(scope="caf\u00e9")), TokenProblem.MALFORMED),
    ("scope-too-long", lambda: token(RSA, claims(scope="a" * 129)), TokenProblem.MALFORMED),
    ("too-many-scopes", lambda: token(RSA, claims(scope="a b c d e")), TokenProblem.MALFORMED),
    ("too-many-scp", lambda: token(RSA, claims(scope=None, scp=list("abcde"))),
     TokenProblem.MALFORMED),
]  # fmt: skip


@pytest.mark.parametrize(
    ("make", "expected"),
    [(make, expected) for _, make, expected in HOSTILE],
    ids=[name for name, _, _ in HOSTILE],
)
def test_hostile_tokens_are_refused(
    server: AuthServer, clock: FakeClock, make: Callable[[], str], expected: TokenProblem
) -> None:
    assert problem(verifier(server, clock), make()) is expected
    assert server.hits["/jwks"] <= 1


@pytest.mark.parametrize(
    "bearer",
    [_alg_none, _key_confusion, lambda: hand_built({"alg": ["RS256"]}, claims()), lambda: "x"],
    ids=["alg-none", "hs256", "alg-a-list", "not-a-jwt"],
)
def test_header_problems_are_judged_before_any_key_is_fetched(
    server: AuthServer, clock: FakeClock, bearer: Callable[[], str]
) -> None:
    problem(verifier(server, clock), bearer())
    assert server.hits["/jwks"] == 0


def test_an_algorithm_outside_the_configured_list_is_refused(
    server: AuthServer, clock: FakeClock
) -> None:
    only_rs256 = verifier(server, clock, algorithms=["RS256"])
    assert verify(only_rs256, token(RSA_NOALG)).subject == "alice"
    assert problem(only_rs256, token(RSA_NOALG, alg="PS256")) is TokenProblem.ALGORITHM
    assert problem(only_rs256, token(EC)) is TokenProblem.ALGORITHM
    assert problem(only_rs256, token(ED)) is TokenProblem.ALGORITHM
    assert server.hits["/jwks"] == 1  # only the accepted token needed the keys


def test_a_kid_that_is_not_a_str_is_malformed_even_where_pyjwt_lets_it_through(
    server: AuthServer, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PyJWT >= 2.10 refuses a non-string kid itself; 2.8 and 2.9 (which the oauth extra
    allows) hand it on, and the verifier must refuse it then too."""
    monkeypatch.setattr(jwt, "get_unverified_header", lambda _: {"alg": "RS256", "kid": 5})
    assert problem(verifier(server, clock), token(RSA)) is TokenProblem.MALFORMED
    assert server.hits["/jwks"] == 0


def test_a_symmetric_key_in_the_jwks_is_skipped(server: AuthServer, clock: FakeClock) -> None:
    server.jwks = {"keys": [{"kty": "oct", "kid": "shared", "k": segment("secret")}]}
    forged = token(SigningKey("shared", RSA.private, "RS256"))
    assert problem(verifier(server, clock), forged) is TokenProblem.UNKNOWN_KEY


# --- the JWKS cache ---------------------------------------------------------------------------


def test_keys_are_fetched_once_for_many_tokens(server: AuthServer, clock: FakeClock) -> None:
    v = verifier(server, clock)

    async def many() -> list[str | None]:
        subjects = []
        for n in range(20):
            key = (RSA, EC, ED, RSA_NOALG)[n % 4]
            subjects.append((await v.verify(token(key, claims(sub=f"u{n}")))).subject)
            clock.advance(10)  # 190 s in all: within the refresh interval
        return subjects

    assert run(v, many) == [f"u{n}" for n in range(20)]
    assert server.hits["/jwks"] == 1
    assert server.requests[0].method == "GET"
    assert server.requests[0].headers["accept"] == "application/json"


def test_a_rotated_key_is_found_by_one_early_refresh(server: AuthServer, clock: FakeClock) -> None:
    v = verifier(server, clock)
    rotated = rsa_key("rsa-2", n=3)

    async def scenario() -> list[object]:
        seen: list[object] = [await outcome(v, token(RSA))]
        server.jwks = {"keys": [RSA.jwk(), rotated.jwk()]}
        clock.advance(MIN_REFRESH - 1)
        seen.append(await outcome(v, token(rotated)))  # too soon after the last fetch
        seen.append(server.hits["/jwks"])
        clock.advance(1)
        seen.append(await outcome(v, token(rotated)))
        seen.append(await outcome(v, token(rotated)))
        seen.append(await outcome(v, token(RSA)))
        return seen

    seen = run(v, scenario)
    assert seen[1] is TokenProblem.UNKNOWN_KEY
    assert seen[2] == 1
    assert all(isinstance(item, AccessToken) for item in (seen[0], *seen[3:]))
    assert server.hits["/jwks"] == 2


def test_a_flood_of_made_up_kids_costs_one_fetch_per_interval(
    server: AuthServer, clock: FakeClock
) -> None:
    v = verifier(server, clock)

    async def flood() -> list[object]:
        first = await outcome(v, token(RSA))
        clock.advance(MIN_REFRESH)
        results: list[object] = [first]
        for n in range(200):
            results.append(await outcome(v, token(RSA.with_kid(f"made-up-{n}"))))
            clock.advance(0.5)  # 200 tokens over 100 s
        return results

    results = run(v, flood)
    assert isinstance(results[0], AccessToken)
    assert results[1:] == [TokenProblem.UNKNOWN_KEY] * 200
    # the first fetch, then one at 30, 60, 90 s into the flood (and none at 100 s: too soon)
    assert server.hits["/jwks"] == 1 + 4


def test_a_concurrent_flood_of_made_up_kids_shares_one_fetch(
    server: AuthServer, clock: FakeClock
) -> None:
    v = verifier(server, clock)

    async def flood() -> list[object]:
        await v.verify(token(RSA))
        clock.advance(MIN_REFRESH)
        made_up = [token(RSA.with_kid(f"made-up-{n}")) for n in range(200)]
        return list(await asyncio.gather(*(outcome(v, bearer) for bearer in made_up)))

    assert run(v, flood) == [TokenProblem.UNKNOWN_KEY] * 200
    assert server.hits["/jwks"] == 2


def test_concurrent_first_use_shares_one_fetch(server: AuthServer, clock: FakeClock) -> None:
    v = verifier(server, clock)
    bearers = [token((RSA, EC, ED)[n % 3], claims(sub=f"u{n}")) for n in range(50)]

    async def together() -> list[object]:
        return list(await asyncio.gather(*(outcome(v, bearer) for bearer in bearers)))

    results = run(v, together)
    assert [getattr(item, "subject", item) for item in results] == [f"u{n}" for n in range(50)]
    assert server.hits["/jwks"] == 1


def test_concurrent_tokens_with_a_rotated_kid_wait_for_the_running_refresh(
    server: AuthServer, clock: FakeClock
) -> None:
    v = verifier(server, clock)
    rotated = rsa_key("rsa-2", n=3)

    async def scenario() -> list[object]:
        await v.verify(token(RSA))
        server.jwks = {"keys": [RSA.jwk(), rotated.jwk()]}
        clock.advance(MIN_REFRESH)
        bearers = [token(rotated, claims(sub=f"u{n}")) for n in range(20)]
        return list(await asyncio.gather(*(outcome(v, bearer) for bearer in bearers)))

    results = run(v, scenario)
    assert [getattr(item, "subject", item) for item in results] == [f"u{n}" for n in range(20)]
    assert server.hits["/jwks"] == 2


def test_keys_are_refreshed_after_refresh_seconds(server: AuthServer, clock: FakeClock) -> None:
    v = verifier(server, clock)

    async def scenario() -> list[object]:
        seen: list[object] = [await outcome(v, token(RSA))]
        server.jwks = {"keys": [EC.jwk()]}  # RSA withdrawn
        clock.advance(REFRESH - 1)
        seen.append(await outcome(v, token(RSA)))
        seen.append(server.hits["/jwks"])
        clock.advance(1)
        seen.append(await outcome(v, token(RSA)))
        seen.append(await outcome(v, token(EC)))
        return seen

    seen = run(v, scenario)
    assert isinstance(seen[0], AccessToken)
    assert isinstance(seen[1], AccessToken)
    assert seen[2] == 1
    assert seen[3] is TokenProblem.UNKNOWN_KEY
    assert isinstance(seen[4], AccessToken)
    assert server.hits["/jwks"] == 2


def test_a_failing_refresh_keeps_the_old_keys(server: AuthServer, clock: FakeClock) -> None:
    v = verifier(server, clock)

    async def scenario() -> list[object]:
        seen: list[object] = [await outcome(v, token(RSA))]
        server.serve("/jwks", "status500")
        clock.advance(REFRESH)
        seen.append(await outcome(v, token(RSA)))  # refresh fails: old keys
        seen.append(await outcome(v, token(EC)))  # stale, but too soon to try again
        seen.append(server.hits["/jwks"])
        seen.append(await outcome(v, token(RSA.with_kid("nope"))))
        clock.advance(MIN_REFRESH)
        seen.append(await outcome(v, token(ED)))  # tries again, fails again
        seen.append(server.hits["/jwks"])
        server.serve("/jwks", "ok")
        server.jwks = {"keys": [ED.jwk()]}
        clock.advance(MIN_REFRESH)
        seen.append(await outcome(v, token(RSA)))  # the refresh works: RSA is gone
        return seen

    seen = run(v, scenario)
    assert [type(item).__name__ for item in seen[:3]] == ["AccessToken"] * 3
    assert seen[3] == 2
    assert seen[4] is TokenProblem.UNKNOWN_KEY
    assert isinstance(seen[5], AccessToken)
    assert seen[6] == 3
    assert seen[7] is TokenProblem.UNKNOWN_KEY
    assert server.hits["/jwks"] == 4


def test_no_keys_and_the_endpoint_failing_is_unavailable_without_hammering(
    server: AuthServer, clock: FakeClock
) -> None:
    server.serve("/jwks", "status500")
    v = verifier(server, clock)

    async def scenario() -> list[object]:
        seen: list[object] = [await outcome(v, token(RSA))]
        clock.advance(MIN_REFRESH - 1)
        seen.append(await outcome(v, token(RSA)))
        seen.append(server.hits["/jwks"])
        clock.advance(1)
        server.serve("/jwks", "ok")
        seen.append(await outcome(v, token(RSA)))
        return seen

    seen = run(v, scenario)
    assert seen[:3] == ["unavailable", "unavailable", 1]
    assert isinstance(seen[3], AccessToken)
    assert server.hits["/jwks"] == 2


def test_an_unreachable_jwks_endpoint_is_unavailable(clock: FakeClock) -> None:
    v = JwtVerifier(ISSUER, f"http://127.0.0.1:{closed_port()}/jwks", limits=LIMITS, clock=clock)

    async def twice() -> list[object]:
        return [await outcome(v, token(RSA)), await outcome(v, token(RSA))]

    started = time.monotonic()
    assert run(v, twice) == ["unavailable", "unavailable"]
    assert time.monotonic() - started < TIMEOUT + 1


@pytest.mark.parametrize("mode", ["hang", "hang_body"])
def test_a_hanging_jwks_endpoint_is_unavailable_within_the_timeout(
    server: AuthServer, clock: FakeClock, mode: Mode
) -> None:
    server.serve("/jwks", mode)
    v = verifier(server, clock)
    started = time.monotonic()
    with pytest.raises(VerifierUnavailable):
        verify(v, token(RSA))
    elapsed = time.monotonic() - started
    assert TIMEOUT * 0.9 <= elapsed < TIMEOUT + 1


@pytest.mark.parametrize(
    ("mode", "document"),
    [
        ("garbage", None),
        ("html", None),
        ("status500", None),
        ("redirect", None),
        ("oversize", None),
        ("array", None),
        ("close", None),
        ("ok", {"keys": [RSA.jwk()] * 9}),  # more than max_jwks_keys
        ("ok", {"keys": {"rsa-1": RSA.jwk()}}),
        ("ok", {"keys": "none"}),
        ("ok", {"no-keys": []}),
        ("ok", {"keys": [RSA.jwk()], "x": 1e999}),  # json.dumps writes Infinity: not JSON
    ],
    ids=["garbage", "html", "500", "redirect", "oversize", "array", "close", "too-many-keys",
         "keys-an-object", "keys-a-str", "keys-missing", "infinity"],
)  # fmt: skip
def test_an_unreadable_jwks_is_unavailable(
    server: AuthServer, clock: FakeClock, mode: Mode, document: object
) -> None:
    server.serve("/jwks", mode)
    server.oversize_bytes = LIMITS.max_verifier_response_bytes
    if document is not None:
        server.jwks = document
    with pytest.raises(VerifierUnavailable):
        verify(verifier(server, clock), token(RSA))
    assert server.hits["/jwks"] == 1


def test_a_jwks_at_the_size_and_count_limits_is_read(server: AuthServer, clock: FakeClock) -> None:
    keys = [RSA.jwk(), *(EC.with_kid(f"ec-{n}").jwk() for n in range(7))]
    server.jwks = {"keys": keys}
    import json

    size = len(json.dumps(server.jwks).encode())
    assert size <= LIMITS.max_verifier_response_bytes
    server.jwks = {
        "keys": keys,
        "pad": "x" * (LIMITS.max_verifier_response_bytes - size - len(', "pad": ""')),
    }
    assert len(json.dumps(server.jwks).encode()) == LIMITS.max_verifier_response_bytes
    assert verify(verifier(server, clock), token(EC.with_kid("ec-6"))).subject == "alice"


def test_unusable_keys_are_skipped(server: AuthServer, clock: FakeClock) -> None:
    duplicate = rsa_key("dup", n=3)
    server.jwks = {
        "keys": [
            "not a key",
            RSA.jwk(use="enc"),
            {"kty": "XYZ", "kid": "weird"},
            {"kty": "EC", "crv": "P-999", "x": "AA", "y": "AA", "kid": "bad-curve"},
            {"kty": "RSA", "n": "AQAB", "e": "AQAB", "kid": "broken"},
            RSA_NOALG.jwk(kid=7),
            RSA_NOALG.jwk(kid=""),
            RSA_NOALG.jwk(kid="k" * 257),
            EC.jwk(kid="k" * 256, x5c=["MIIB"], ext={"nested": [1, {"a": True}]}),
            duplicate.jwk(),
            rsa_key("dup", n=4).jwk(),
            RSA.jwk(),
        ]
    }
    v = verifier(server, clock, limits=LIMITS.replace(max_jwks_keys=12))
    assert verify(v, token(RSA)).subject == "alice"
    assert set(v._jwks._keys) == {"k" * 256, "dup", "rsa-1"}
    assert verify(v, token(EC.with_kid("k" * 256))).subject == "alice"
    assert verify(v, token(duplicate)).subject == "alice"  # the first "dup" stands
    assert problem(v, token(rsa_key("dup", n=4))) is TokenProblem.SIGNATURE
    clock.advance(MIN_REFRESH)
    assert problem(v, token(RSA.with_kid("weird"))) is TokenProblem.UNKNOWN_KEY
    assert server.hits["/jwks"] == 2


def test_a_token_without_kid_needs_a_set_of_exactly_one_key(
    server: AuthServer, clock: FakeClock
) -> None:
    anonymous = RSA.with_kid(None)
    assert problem(verifier(server, clock), token(anonymous)) is TokenProblem.UNKNOWN_KEY
    server.jwks = {"keys": [RSA.jwk()]}  # one key, with a kid
    assert verify(verifier(server, clock), token(anonymous)).subject == "alice"
    server.jwks = {"keys": [RSA.with_kid(None).jwk()]}  # one key, without a kid
    v = verifier(server, clock)
    assert verify(v, token(anonymous)).subject == "alice"
    assert problem(v, token(RSA)) is TokenProblem.UNKNOWN_KEY  # it names a kid the set lacks
    server.jwks = {"keys": []}
    assert problem(verifier(server, clock), token(anonymous)) is TokenProblem.UNKNOWN_KEY


# --- the fetcher ------------------------------------------------------------------------------


def test_aclose_closes_the_pool(server: AuthServer, clock: FakeClock) -> None:
    v = verifier(server, clock)
    fetcher = v._jwks._fetcher

    async def scenario() -> httpx.AsyncClient | None:
        await v.aclose()  # nothing to close yet
        await v.verify(token(RSA))
        client = fetcher._client
        assert client is not None and not client.is_closed
        await v.aclose()
        assert fetcher._client is None
        await v.aclose()
        return client

    client = asyncio.run(scenario())
    assert client is not None and client.is_closed


def test_a_new_event_loop_gets_a_new_pool(server: AuthServer, clock: FakeClock) -> None:
    v = verifier(server, clock)
    fetcher = v._jwks._fetcher
    clients: list[object] = []

    async def once() -> str | None:
        subject = (await v.verify(token(RSA))).subject
        clients.append(fetcher._client)
        return subject

    assert asyncio.run(once()) == "alice"
    clock.advance(REFRESH)  # the second loop must fetch again
    assert run(v, once) == "alice"
    assert server.hits["/jwks"] == 2
    assert clients[0] is not clients[1]
    assert isinstance(clients[0], httpx.AsyncClient)


def test_the_fetcher_reuses_its_pool_within_a_loop(server: AuthServer) -> None:
    fetcher = JsonFetcher(LIMITS, LIMITS.max_verifier_response_bytes)

    async def scenario() -> bool:
        try:
            await fetcher.get(server.jwks_uri)
            first = fetcher._client
            await fetcher.get(server.jwks_uri)
            return first is fetcher._client
        finally:
            await fetcher.aclose()

    assert asyncio.run(scenario()) is True


def test_an_error_that_is_not_the_remotes_is_not_masked() -> None:
    """A URL httpx cannot even parse is a bug of the configuration, not an outage."""
    fetcher = JsonFetcher(LIMITS, LIMITS.max_verifier_response_bytes)

    async def scenario() -> None:
        try:
            await fetcher.get("http://[::1")
        finally:
            await fetcher.aclose()

    with pytest.raises(httpx.InvalidURL):
        asyncio.run(scenario())


# --- introspection ----------------------------------------------------------------------------

WALL: Final = 1_700_000_000.0


def introspector(server: AuthServer, **options: Any) -> IntrospectionVerifier:
    settings: dict[str, Any] = {
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
        "limits": LIMITS,
        "clock": lambda: WALL,
    }
    settings.update(options)
    return IntrospectionVerifier(server.introspection_endpoint, **settings)


def test_an_active_token_is_accepted(server: AuthServer) -> None:
    answer = {
        "active": True,
        "sub": "alice",
        "client_id": "app-1",
        "scope": "notes:read",
        "iss": ISSUER,
        "aud": [AUDIENCE],
        "exp": int(WALL) + 60,
        "token_type": "Bearer",
    }
    server.introspection = answer
    access = verify(introspector(server, issuer=ISSUER), "opaque-token-1")
    assert access == AccessToken(
        subject="alice",
        client_id="app-1",
        scopes=frozenset({"notes:read"}),
        issuer=ISSUER,
        audience=frozenset({AUDIENCE}),
        expires_at=int(WALL) + 60,
        claims=answer,
    )
    assert dict(access.claims) == answer


def test_the_introspection_request_authenticates_and_names_the_token(
    server: AuthServer,
) -> None:
    verify(introspector(server), "opaque token/+=")
    [request] = server.requests
    assert request.method == "POST"
    assert request.path == "/introspect"
    expected = base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
    assert request.headers["authorization"] == f"Basic {expected}"
    assert request.headers["content-type"] == "application/x-www-form-urlencoded"
    assert request.headers["accept"] == "application/json"
    assert parse_qs(request.body.decode(), strict_parsing=True) == {
        "token": ["opaque token/+="],
        "token_type_hint": ["access_token"],
    }


def test_an_answer_without_exp_or_issuer_check_is_accepted(server: AuthServer) -> None:
    server.introspection = {"active": True, "scp": ["a"], "azp": "app-3", "sub": 42}
    access = verify(introspector(server), "t")
    assert (access.subject, access.client_id, access.scopes) == (None, "app-3", frozenset("a"))
    assert (access.issuer, access.expires_at, access.audience) == (None, None, frozenset())


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ({"active": False}, TokenProblem.INACTIVE),
        ({"active": False, "sub": "alice", "exp": int(WALL) + 60}, TokenProblem.INACTIVE),
        ({}, TokenProblem.INACTIVE),
        ({"active": "true"}, TokenProblem.INACTIVE),
        ({"active": 1}, TokenProblem.INACTIVE),
        ({"active": True, "exp": int(WALL) - 1}, TokenProblem.EXPIRED),
        ({"active": True, "exp": int(WALL)}, TokenProblem.EXPIRED),
        ({"active": True, "exp": WALL + 60.5}, TokenProblem.EXPIRED),
        ({"active": True, "exp": str(int(WALL) + 60)}, TokenProblem.EXPIRED),
        ({"active": True, "exp": True}, TokenProblem.EXPIRED),
        ({"active": True, "iss": "https://evil.example"}, TokenProblem.ISSUER),
        ({"active": True}, TokenProblem.ISSUER),
        ({"active": True, "iss": ISSUER, "scope": "a b c d e"}, TokenProblem.MALFORMED),
        ({"active": True, "iss": ISSUER, "scope": 7}, TokenProblem.MALFORMED),
    ],
    ids=["inactive", "inactive-with-claims", "empty", "active-a-str", "active-a-number",
         "expired", "expires-now", "exp-a-float", "exp-a-str", "exp-a-bool", "wrong-issuer",
         "missing-issuer", "too-many-scopes", "scope-a-number"],
)  # fmt: skip
def test_introspection_refusals(
    server: AuthServer, answer: dict[str, object], expected: TokenProblem
) -> None:
    server.introspection = answer
    assert problem(introspector(server, issuer=ISSUER), "opaque") is expected


@pytest.mark.parametrize(
    "mode", ["hang", "hang_body", "garbage", "html", "status500", "redirect", "array", "close"]
)
def test_an_unreadable_introspection_endpoint_is_unavailable(
    server: AuthServer, mode: Mode
) -> None:
    server.serve("/introspect", mode)
    started = time.monotonic()
    with pytest.raises(VerifierUnavailable):
        verify(introspector(server), "opaque")
    assert time.monotonic() - started < TIMEOUT + 1


def test_an_oversize_introspection_answer_is_unavailable(server: AuthServer) -> None:
    server.serve("/introspect", "oversize")
    server.oversize_bytes = LIMITS.max_verifier_response_bytes
    with pytest.raises(VerifierUnavailable):
        verify(introspector(server), "opaque")


def test_an_unreachable_introspection_endpoint_is_unavailable() -> None:
    v = IntrospectionVerifier(
        f"http://127.0.0.1:{closed_port()}/introspect",
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
        limits=LIMITS,
    )
    with pytest.raises(VerifierUnavailable):
        verify(v, "opaque")


# --- construction -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"issuer": "as.example"},
        {"issuer": "ftp://as.example"},
        {"issuer": 7},
        {"jwks_uri": "/jwks"},
        {"jwks_uri": None},
        {"algorithms": ["HS256"]},
        {"algorithms": ["RS256", "HS256"]},
        {"algorithms": ["none"]},
        {"algorithms": []},
        {"algorithms": "RS256"},
        {"algorithms": ["rs256"]},
        {"leeway": -1},
        {"leeway": 300.5},
        {"jwks_min_refresh_seconds": 0},
        {"jwks_min_refresh_seconds": -1},
        {"jwks_refresh_seconds": 10, "jwks_min_refresh_seconds": 11},
    ],
    ids=lambda options: "-".join(f"{k}={v!r}" for k, v in options.items()),
)
def test_jwt_verifier_refuses_a_bad_configuration(options: dict[str, Any]) -> None:
    settings: dict[str, Any] = {"issuer": ISSUER, "jwks_uri": "https://as.example/jwks"}
    settings.update(options)
    issuer, jwks_uri = settings.pop("issuer"), settings.pop("jwks_uri")
    with pytest.raises(ConfigurationError, match="JwtVerifier"):
        JwtVerifier(issuer, jwks_uri, **settings)


def test_jwt_verifier_accepts_the_edges_of_its_ranges() -> None:
    for leeway in (0, 300):
        JwtVerifier(ISSUER, "http://127.0.0.1:1/jwks", leeway=leeway)
    JwtVerifier(ISSUER, "https://as.example/jwks", algorithms=("EdDSA",),
                jwks_refresh_seconds=5, jwks_min_refresh_seconds=5)  # fmt: skip
    v = JwtVerifier(ISSUER, "https://as.example/jwks")
    assert repr(v) == "JwtVerifier(issuer='https://as.example')"
    assert isinstance(v, TokenVerifier)


@pytest.mark.parametrize(
    "options",
    [
        {"endpoint": "as.example/introspect"},
        {"endpoint": 7},
        {"client_id": ""},
        {"client_secret": ""},
        {"client_id": None},
        {"client_secret": b"secret"},
    ],
    ids=lambda options: "-".join(f"{k}={v!r}" for k, v in options.items()),
)
def test_introspection_verifier_refuses_a_bad_configuration(options: dict[str, Any]) -> None:
    settings: dict[str, Any] = {
        "endpoint": "https://as.example/introspect",
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
    }
    settings.update(options)
    endpoint = settings.pop("endpoint")
    with pytest.raises(ConfigurationError, match="IntrospectionVerifier"):
        IntrospectionVerifier(endpoint, **settings)


def test_introspection_verifier_repr_shows_no_secret() -> None:
    v = IntrospectionVerifier(
        "https://as.example/introspect", client_id=CLIENT_ID, client_secret=CLIENT_SECRET
    )
    assert repr(v) == "IntrospectionVerifier(endpoint='https://as.example/introspect')"
    assert CLIENT_SECRET not in repr(v)
    assert isinstance(v, TokenVerifier)


def test_the_verifiers_need_the_oauth_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jwt", None)
    with pytest.raises(ConfigurationError, match=r"mcpkit\[oauth\]"):
        JwtVerifier(ISSUER, "https://as.example/jwks")
    monkeypatch.setitem(sys.modules, "httpx", None)
    with pytest.raises(ConfigurationError, match=r"mcpkit\[oauth\]"):
        IntrospectionVerifier("https://as.example/i", client_id="a", client_secret="b")


# --- the shared pieces ------------------------------------------------------------------------


def test_an_access_token_repr_shows_neither_the_token_nor_its_claims() -> None:
    access = AccessToken(subject="alice", client_id=None, scopes=frozenset(),
                         claims={"secret-claim": 1}, token="raw-bearer-value")  # fmt: skip
    assert "raw-bearer-value" not in repr(access)
    assert "secret-claim" not in repr(access)
    assert "subject='alice'" in repr(access)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, frozenset()),
        ("", frozenset()),
        ("a", frozenset("a")),
        ("a b a", frozenset("ab")),
        (["a", "b"], frozenset("ab")),
        ([], frozenset()),
        (("a", "b"), frozenset("ab")),  # a JSON array from the strict codec is a tuple
        ("!#[]~", frozenset({"!#[]~"})),
    ],
)
def test_scope_set_reads(value: object, expected: frozenset[str]) -> None:
    assert scope_set(value, 3) == expected


@pytest.mark.parametrize(
    "value",
    [7, {"a"}, {"a": 1}, " a", "a ", "a b c d", ["a", "b", "c", "d"], [None], ['"'], ["\x7f"],
     ["a b"], "x" * 129],
)  # fmt: skip
def test_scope_set_refuses(value: object) -> None:
    with pytest.raises(TokenRejected) as caught:
        scope_set(value, 3)
    assert caught.value.problem is TokenProblem.MALFORMED
