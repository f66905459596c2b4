"""Hostile tokens through a whole server: every case of the verifier table, oversized
tokens and a JWKS endpoint that hangs or answers garbage each get their fixed answer within a
bounded time, nothing of the token is sent back or logged, and the server keeps serving a
valid caller afterwards."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any, Final

import pytest

from mcpkit import JwtVerifier, Limits, ResourceServer, Server, TokenProblem, endpoint, tool
from mcpkit.testing import TestClient, stateless_headers, stateless_request

from .authserver import AuthServer, Mode, running
from .keys import ISSUER, claims, token
from .test_verifiers import EC, ED, HOSTILE, RSA, RSA_NOALG

BASE: Final = "https://mcp.example"  # keys.AUDIENCE is its /mcp endpoint
TIMEOUT: Final = 0.3
BOUND: Final = 3.0  # seconds any refusal may take, the hanging JWKS included
CHALLENGE_TAIL: Final = f'resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp"'


@endpoint(path="/mcp", name="notes", version="1")
class Notes:
    @tool(scopes=["notes:read"])
    def read_note(self, note: str) -> str:
        """Reads a note."""
        return "note " + note


@pytest.fixture
def keys() -> Iterator[AuthServer]:
    with running() as state:
        state.jwks = {"keys": [RSA.jwk(), RSA_NOALG.jwk(declare_alg=False), EC.jwk(), ED.jwk()]}
        yield state


def serve(keys: AuthServer) -> Server:
    verifier = JwtVerifier(ISSUER, keys.jwks_uri, jwks_min_refresh_seconds=0.05)
    auth = ResourceServer(BASE, authorization_servers=[ISSUER], verifier=verifier)
    limits = Limits().replace(verifier_timeout_seconds=TIMEOUT, max_token_scopes=4)
    return Server(Notes, auth=auth, limits=limits)


def read(client: TestClient, bearer: str) -> tuple[Any, float]:
    body = stateless_request("tools/call", {"name": "read_note", "arguments": {"note": "n"}})
    headers = {**stateless_headers("tools/call", "read_note"), "authorization": "Bearer " + bearer}
    started = time.monotonic()
    response = client.post("/mcp", body, headers=headers)
    return response, time.monotonic() - started


def assert_refused(response: Any, bearer: str, problem: TokenProblem) -> None:
    assert response.status == 401
    assert response.header("www-authenticate") == (
        f'Bearer error="invalid_token", error_description="{problem.value}", {CHALLENGE_TAIL}'
    )
    assert response.json["error"]["code"] == -31901
    if len(bearer) > 8:  # a short bearer may occur in the fixed texts by chance
        assert bearer not in response.body.decode()


def test_every_hostile_token_gets_its_fixed_answer_and_the_server_keeps_serving(
    keys: AuthServer, caplog: pytest.LogCaptureFixture
) -> None:
    bearers: list[str] = []
    with caplog.at_level(logging.DEBUG), TestClient(serve(keys)) as client:
        for _name, make, problem in HOSTILE:
            bearer = make()
            if not bearer or any(c in bearer for c in "!"):  # not token68: refused unread
                problem = TokenProblem.MALFORMED
            response, took = read(client, bearer)
            assert_refused(response, bearer, problem)
            assert took < BOUND
            bearers.append(bearer)
        valid, _ = read(client, token(RSA, claims(scope="notes:read")))
        assert valid.status == 200
        assert valid.json["result"]["content"][0]["text"] == "note n"
    assert not any(bearer in caplog.text for bearer in bearers if len(bearer) > 8)


def test_oversized_tokens_are_refused_unread(keys: AuthServer) -> None:
    with TestClient(serve(keys)) as client:
        limit = Limits().max_bearer_token_bytes
        for size in (limit + 1, 60_000):
            response, took = read(client, "a" * size)
            assert_refused(response, "a" * size, TokenProblem.TOO_LARGE)
            assert took < BOUND
        assert keys.hits["/jwks"] == 0  # no key was fetched for them
        assert read(client, token(RSA, claims(scope="notes:read")))[0].status == 200


@pytest.mark.parametrize("mode", ["hang", "hang_body", "garbage", "html", "status500", "close"])
def test_a_broken_jwks_endpoint_is_503_in_bounded_time_then_recovers(
    keys: AuthServer, mode: Mode
) -> None:
    good = token(RSA, claims(scope="notes:read"))
    keys.serve("/jwks", mode)
    with TestClient(serve(keys)) as client:
        for _ in range(2):
            response, took = read(client, good)
            assert response.status == 503
            assert response.json["error"]["message"] == (
                "The access token cannot be verified right now; retry later"
            )
            assert took < BOUND
            time.sleep(0.06)  # past jwks_min_refresh_seconds: the next one fetches again
        keys.serve("/jwks", "ok")
        assert read(client, good)[0].status == 200


def test_a_flood_of_made_up_key_ids_costs_few_fetches(keys: AuthServer) -> None:
    forged = [token(RSA.with_kid(f"made-up-{n}")) for n in range(100)]
    with TestClient(serve(keys)) as client:
        started = time.monotonic()
        for bearer in forged:
            response, _ = read(client, bearer)
            assert response.status == 401
        elapsed = time.monotonic() - started
        assert read(client, token(RSA, claims(scope="notes:read")))[0].status == 200
    # one fetch on first use, then at most one per jwks_min_refresh_seconds (0.05 s)
    assert keys.hits["/jwks"] <= 2 + int(elapsed / 0.05)


def test_a_cancelled_fetch_needs_no_retrieval() -> None:
    import asyncio

    from mcpkit.server._jwks import _retrieved

    async def cancelled() -> None:
        task = asyncio.ensure_future(asyncio.sleep(10))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        _retrieved(task)  # no exception to mark, and none raised

    asyncio.run(cancelled())
