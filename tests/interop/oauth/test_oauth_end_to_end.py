"""mcpkit's OAuth 2.1 resource server end to end: a real ``mcpkit serve`` process
(``notes_server.py``, its ``ResourceServer`` built from the environment) protected by a real
authorization server (``oidc-provider``, from ``conftest.py``), driven by the official Python
client (``mcp`` 2.3.0) and by plain HTTP where the client hides what the server said.

- the official client's ``OAuthClientProvider``, with a :class:`BrowserUser` at the provider's
  login and consent pages, starts from nothing: the 401 names the resource metadata, it finds
  the authorization server there, registers itself, gets a code with PKCE and a JWT for the
  server, and then lists and calls the protected tools (at 2025-11-25 through ``initialize``
  and at 2026-07-28 through ``server/discover``); the tool sees the user as ``ctx.identity``;
- a ``client_credentials`` service client with ``notes:read`` only sees a shorter
  ``tools/list`` and gets 403 ``insufficient_scope`` (``scope="notes:write"``) for the write;
- the same server with an ``IntrospectionVerifier`` accepts the provider's opaque tokens and
  refuses garbage with 401 ``invalid_token``;
- a valid token for another resource (same issuer, same keys) is refused for its audience.

One authorization server and one mcpkit process per configuration, for the whole module.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qs

import httpx2
import mcp.types as types
import pytest
from mcp.client import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata
from mcp.shared.exceptions import MCPError
from pydantic import AnyUrl

from ..conftest import answers, free_port, handshake, server_stderr, stop
from .conftest import (
    READER,
    RESOURCE_SERVER,
    SCOPES,
    WRITER,
    BrowserUser,
    InMemoryStorage,
    Provider,
    Runtime,
    authorization_server,
    client_credentials_token,
    jwt_claims,
)

ROOT: Final = Path(__file__).resolve().parents[3]
TARGET: Final = Path(__file__).with_name("notes_server.py")
NOVEMBER: Final = "2025-11-25"
MODERN: Final = "2026-07-28"
READY_SECONDS: Final = 30.0
TIMEOUT_SECONDS: Final = 60.0
CLIENT_INFO: Final = types.Implementation(name="mcpkit-oauth-e2e", version="1.0.0")
ALL_TOOLS: Final = {"read_note", "write_note", "whoami"}
AUDIENCE_PROBLEM: Final = "The access token was not issued for this server."
INACTIVE_PROBLEM: Final = "The access token is not active."
INSUFFICIENT_SCOPE_CODE: Final = -31902  # mcpkit's JSON-RPC code in the 403 body


# --- the server under test ------------------------------------------------------------------


@dataclass(frozen=True)
class Stack:
    """A running ``notes_server.py`` and the authorization server it trusts."""

    provider: Provider
    base: str  # http://127.0.0.1:<port>
    pid: int

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    @property
    def metadata_url(self) -> str:
        return f"{self.base}/.well-known/oauth-protected-resource/mcp"


@contextlib.contextmanager
def notes_server(port: int, environment: dict[str, str], log_dir: Path) -> Iterator[int]:
    """``mcpkit serve notes_server.py`` on ``port`` with ``environment`` added, once it
    answers; its PID.  Stopped by that PID on exit."""
    command = [
        sys.executable, "-m", "mcpkit", "serve", str(TARGET),
        "--host", "127.0.0.1", "--port", str(port),
    ]  # fmt: skip
    env = {**os.environ, **environment}
    with (log_dir / f"notes-server-{port}.log").open("w+b") as log:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + READY_SECONDS
            while not answers(port):
                if process.poll() is not None:
                    pytest.fail(
                        f"notes_server.py exited with {process.returncode}:\n" + server_stderr(log)
                    )
                if time.monotonic() > deadline:
                    pytest.fail("notes_server.py did not answer:\n" + server_stderr(log))
                time.sleep(0.05)
            yield process.pid
        finally:
            stop(process)


def jwt_environment(provider: Provider, base: str) -> dict[str, str]:
    return {
        "MCPKIT_TEST_BASE_URL": base,
        "MCPKIT_TEST_ISSUER": provider.issuer,
        "MCPKIT_TEST_VERIFIER": "jwt",
        "MCPKIT_TEST_JWKS_URI": provider.jwks_uri,
    }


def introspection_environment(provider: Provider, base: str) -> dict[str, str]:
    return {
        "MCPKIT_TEST_BASE_URL": base,
        "MCPKIT_TEST_ISSUER": provider.issuer,
        "MCPKIT_TEST_VERIFIER": "introspection",
        "MCPKIT_TEST_INTROSPECTION_ENDPOINT": provider.introspection_endpoint,
        "MCPKIT_TEST_CLIENT_ID": RESOURCE_SERVER.client_id,
        "MCPKIT_TEST_CLIENT_SECRET": RESOURCE_SERVER.secret,
    }


@pytest.fixture(scope="module")
def jwt_stack(oauth_runtime: Runtime, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """The notes server verifying JWTs (``JwtVerifier``) from a provider issuing them for it."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    logs = tmp_path_factory.mktemp("oauth-e2e-jwt")
    with contextlib.ExitStack() as running:
        provider = running.enter_context(authorization_server(f"{base}/mcp"))
        pid = running.enter_context(notes_server(port, jwt_environment(provider, base), logs))
        yield Stack(provider, base, pid)


@pytest.fixture(scope="module")
def introspection_stack(
    oauth_runtime: Runtime, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """The notes server asking the provider about its opaque tokens (``IntrospectionVerifier``
    as ``mcp-resource``)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    logs = tmp_path_factory.mktemp("oauth-e2e-introspection")
    with contextlib.ExitStack() as running:
        provider = running.enter_context(authorization_server(f"{base}/mcp", token_format="opaque"))
        environment = introspection_environment(provider, base)
        pid = running.enter_context(notes_server(port, environment, logs))
        yield Stack(provider, base, pid)


# --- HTTP without the SDK -------------------------------------------------------------------


def challenge(response: httpx2.Response) -> dict[str, str]:
    """The auth-params of the response's ``Bearer`` challenge (quoted-string values)."""
    header = response.headers.get("www-authenticate", "")
    scheme, _, rest = header.partition(" ")
    assert scheme == "Bearer", header
    params: dict[str, str] = {}
    while rest:
        name, _, rest = rest.strip().partition("=")
        assert rest.startswith('"'), header
        value, _, rest = rest[1:].partition('"')
        params[name.strip()] = value
        rest = rest.strip().removeprefix(",")
    return params


def modern_call(
    url: str, token: str | None, name: str, arguments: dict[str, Any]
) -> httpx2.Response:
    """One stateless 2026-07-28 ``tools/call`` over HTTP, with ``token`` as the bearer."""
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": name,
    }
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": CLIENT_INFO.model_dump(mode="json"),
            },
        },
    }
    return httpx2.post(url, json=body, headers=headers, timeout=TIMEOUT_SECONDS)


def modern_list(url: str, token: str) -> httpx2.Response:
    """A stateless 2026-07-28 ``tools/list`` with ``token``."""
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/list",
        "authorization": f"Bearer {token}",
    }
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}
    return httpx2.post(url, json=body, headers=headers, timeout=TIMEOUT_SECONDS)


def november_initialize(url: str, token: str | None) -> httpx2.Response:
    headers = {"accept": "application/json, text/event-stream"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": NOVEMBER,
            "capabilities": {},
            "clientInfo": CLIENT_INFO.model_dump(mode="json"),
        },
    }
    return httpx2.post(url, json=body, headers=headers, timeout=TIMEOUT_SECONDS)


def november_call(url: str, token: str, name: str, arguments: dict[str, Any]) -> httpx2.Response:
    """A 2025-11-25 session (``initialize``, ``notifications/initialized``) and one
    ``tools/call`` in it, all with ``token``; the call's response."""
    started = november_initialize(url, token)
    assert started.status_code == 200, started.text
    headers = {
        "accept": "application/json, text/event-stream",
        "authorization": f"Bearer {token}",
        "mcp-protocol-version": NOVEMBER,
    }
    if "mcp-session-id" in started.headers:
        headers["mcp-session-id"] = started.headers["mcp-session-id"]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    acknowledged = httpx2.post(url, json=initialized, headers=headers, timeout=TIMEOUT_SECONDS)
    assert acknowledged.status_code == 202, acknowledged.text
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    return httpx2.post(url, json=call, headers=headers, timeout=TIMEOUT_SECONDS)


def json_rpc(response: httpx2.Response) -> dict[str, Any]:
    """The one JSON-RPC message of a JSON or SSE response body."""
    media = response.headers.get("content-type", "").split(";")[0].strip()
    if media == "text/event-stream":
        events = [
            line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")
        ]
        messages = [json.loads(data) for data in events if data]
        assert len(messages) == 1, response.text
        message: dict[str, Any] = messages[0]
        return message
    assert media == "application/json", response.headers
    answer: dict[str, Any] = response.json()
    return answer


def tool_json(response: httpx2.Response) -> dict[str, Any]:
    """What a notes tool returned (its one text block, parsed), from a 200 ``tools/call``."""
    assert response.status_code == 200, (response.status_code, response.text)
    result = json_rpc(response)["result"]
    assert result.get("isError") is not True, result
    [block] = result["content"]
    parsed: dict[str, Any] = json.loads(block["text"])
    return parsed


def returned(result: types.CallToolResult) -> dict[str, Any]:
    """What a notes tool returned, from the official client's ``call_tool``."""
    assert not result.is_error, result
    [block] = result.content
    assert isinstance(block, types.TextContent), block
    parsed: dict[str, Any] = json.loads(block.text)
    return parsed


# --- discovery ------------------------------------------------------------------------------


def test_no_token_gets_401_naming_the_resource_metadata(jwt_stack: Stack) -> None:
    for response in (
        november_initialize(jwt_stack.url, None),
        modern_call(jwt_stack.url, None, "whoami", {}),
    ):
        assert response.status_code == 401, response.text
        # RFC 6750 §3.1: no error code when the request carried no credentials.
        assert challenge(response) == {"resource_metadata": jwt_stack.metadata_url}
    metadata = httpx2.get(jwt_stack.metadata_url, timeout=TIMEOUT_SECONDS)
    assert metadata.status_code == 200, metadata.text
    document = metadata.json()
    assert document["resource"] == jwt_stack.url == jwt_stack.provider.resource
    assert document["authorization_servers"] == [jwt_stack.provider.issuer]
    assert set(document["scopes_supported"]) == set(SCOPES.split())
    assert document["bearer_methods_supported"] == ["header"]


# --- 1. the official client, authorization code + PKCE + dynamic registration ---------------


@pytest.mark.parametrize("revision", [NOVEMBER, MODERN])
def test_official_client_signs_in_and_writes(jwt_stack: Stack, revision: str) -> None:
    provider = jwt_stack.provider
    user = BrowserUser(login="alice")
    storage = InMemoryStorage()
    auth = OAuthClientProvider(
        server_url=jwt_stack.url,
        client_metadata=OAuthClientMetadata(
            redirect_uris=[AnyUrl(f"http://127.0.0.1:{free_port()}/callback")],
            client_name="mcp 2.3.0 client",
        ),
        storage=storage,
        redirect_handler=user.redirect_handler,
        callback_handler=user.callback_handler,
    )
    seen: list[tuple[str, str, int]] = []

    async def log(response: httpx2.Response) -> None:
        request = response.request
        seen.append((request.method, str(request.url.copy_with(query=None)), response.status_code))

    async def main() -> tuple[set[str], dict[str, Any], str]:
        async with (
            httpx2.AsyncClient(
                auth=auth, event_hooks={"response": [log]}, timeout=httpx2.Timeout(30.0)
            ) as http,
            streamable_http_client(jwt_stack.url, http_client=http) as (read, write),
            ClientSession(read, write, client_info=CLIENT_INFO) as session,
        ):
            await handshake(session, revision, CLIENT_INFO)
            listed = await session.list_tools()
            written = returned(
                await session.call_tool("write_note", {"id": "e2e", "text": "from alice"})
            )
            again = returned(await session.call_tool("read_note", {"id": "e2e"}))
            return {tool.name for tool in listed.tools}, written, again["text"]

    names, written, text = asyncio.run(asyncio.wait_for(main(), TIMEOUT_SECONDS))
    assert names == ALL_TOOLS
    assert written["written"] is True
    assert text == "from alice"

    # The token the client got: a JWT for this server, from this provider, for the user.
    assert storage.tokens is not None and storage.client_info is not None
    claims = jwt_claims(storage.tokens.access_token)
    assert claims["aud"] == jwt_stack.url
    assert claims["sub"] == "alice"
    # ... and what the tool saw of it, as ctx.identity.
    assert written["caller"] == {
        "subject": "alice",
        "client_id": storage.client_info.client_id,
        "scopes": sorted(claims["scope"].split()),
        "issuer": provider.issuer,
        "audience": [jwt_stack.url],
        "has_raw_token": False,
    }
    assert {"notes:read", "notes:write"} <= set(written["caller"]["scopes"])

    # The discovery it did: 401 naming the metadata, the metadata, the AS, registration, token.
    assert seen[:5] == [
        ("POST", jwt_stack.url, 401),
        ("GET", jwt_stack.metadata_url, 200),
        ("GET", f"{provider.issuer}/.well-known/oauth-authorization-server", 200),
        ("POST", provider.registration_endpoint, 201),
        ("POST", provider.token_endpoint, 200),
    ]
    assert all(status < 400 for _, _, status in seen[5:]), seen
    assert any("/interaction/" in page for page in user.visited)


# --- 2. a service client with notes:read only -----------------------------------------------


def test_reader_service_sees_less_and_may_not_write(jwt_stack: Stack) -> None:
    provider = jwt_stack.provider
    auth = ClientCredentialsOAuthProvider(
        server_url=jwt_stack.url,
        storage=InMemoryStorage(),
        client_id=READER.client_id,
        client_secret=READER.secret,
        issuer=provider.issuer,
    )
    seen: list[tuple[str, str, int]] = []
    token_requests: list[dict[str, list[str]]] = []

    async def log(response: httpx2.Response) -> None:
        request = response.request
        seen.append((request.method, str(request.url.copy_with(query=None)), response.status_code))
        if str(request.url) == provider.token_endpoint:
            token_requests.append(parse_qs(request.content.decode()))

    async def main() -> tuple[set[str], dict[str, Any], MCPError]:
        async with (
            httpx2.AsyncClient(
                auth=auth, event_hooks={"response": [log]}, timeout=httpx2.Timeout(30.0)
            ) as http,
            streamable_http_client(jwt_stack.url, http_client=http) as (read, write),
            ClientSession(read, write, client_info=CLIENT_INFO) as session,
        ):
            await session.initialize()
            listed = await session.list_tools()
            note = returned(await session.call_tool("read_note", {"id": "welcome"}))
            with pytest.raises(MCPError) as refused:
                await session.call_tool("write_note", {"id": "x", "text": "no"})
            # The session survives the refusal.
            assert returned(await session.call_tool("whoami", {}))["client_id"] == READER.client_id
            return {tool.name for tool in listed.tools}, note, refused.value

    names, note, error = asyncio.run(asyncio.wait_for(main(), TIMEOUT_SECONDS))
    assert names == ALL_TOOLS - {"write_note"}
    assert note["text"] == "Hello from the notes server."
    assert note["caller"]["client_id"] == note["caller"]["subject"] == READER.client_id
    assert note["caller"]["scopes"] == ["notes:read"]

    # The SDK answers 403 insufficient_scope by stepping up (SEP-2350): one more token request
    # for the union of what it holds and what the challenge names, which the provider narrows
    # to notes:read again; it retries once, gets 403 again and raises the JSON-RPC error that
    # 403's body carries.
    refusal = ("POST", jwt_stack.url, 403)
    first = seen.index(refusal)
    assert seen[first:] == [
        refusal,
        ("POST", provider.token_endpoint, 200),  # the step-up
        refusal,
        ("POST", jwt_stack.url, 200),  # whoami
    ]
    assert [set(form["scope"][0].split()) for form in token_requests] == [
        {"notes:read", "notes:write"},  # from the metadata's scopes_supported
        {"notes:read", "notes:write"},  # the step-up
    ]
    assert error.error.code == INSUFFICIENT_SCOPE_CODE
    assert "lacks a scope" in error.error.message

    # The same at the HTTP level, with a token for notes:read: at 2026-07-28 (stateless) and
    # in a 2025-11-25 session.
    token = client_credentials_token(
        provider, READER.client_id, READER.secret, jwt_stack.url, "notes:read"
    )
    writer = client_credentials_token(
        provider, WRITER.client_id, WRITER.secret, jwt_stack.url, SCOPES
    )
    for response in (
        modern_call(jwt_stack.url, token, "write_note", {"id": "x", "text": "no"}),
        november_call(jwt_stack.url, token, "write_note", {"id": "x", "text": "no"}),
    ):
        assert response.status_code == 403, response.text
        assert challenge(response) == {
            "error": "insufficient_scope",
            "scope": "notes:write",
            "resource_metadata": jwt_stack.metadata_url,
            "error_description": "The access token lacks a scope this request needs.",
        }
        assert json_rpc(response)["error"]["code"] == INSUFFICIENT_SCOPE_CODE
    # ... while what the token allows works, and its tools/list (2026-07-28) is its own.
    for who, names in ((token, ALL_TOOLS - {"write_note"}), (writer, ALL_TOOLS)):
        listed = modern_list(jwt_stack.url, who)
        assert listed.status_code == 200, listed.text
        result = json_rpc(listed)["result"]
        assert {tool["name"] for tool in result["tools"]} == names
        assert result["cacheScope"] == "private"  # it depends on the caller
    assert tool_json(modern_call(jwt_stack.url, token, "read_note", {"id": "welcome"}))["caller"][
        "scopes"
    ] == ["notes:read"]


def test_writer_service_may_write(jwt_stack: Stack) -> None:
    token = client_credentials_token(
        jwt_stack.provider, WRITER.client_id, WRITER.secret, jwt_stack.url, SCOPES
    )
    answer = tool_json(modern_call(jwt_stack.url, token, "write_note", {"id": "w", "text": "t"}))
    assert answer["caller"]["client_id"] == WRITER.client_id
    assert answer["caller"]["scopes"] == sorted(SCOPES.split())
    assert tool_json(november_call(jwt_stack.url, token, "read_note", {"id": "w"}))["text"] == "t"


# --- 3. opaque tokens, by introspection -----------------------------------------------------


def test_introspection_verifier_accepts_opaque_tokens(introspection_stack: Stack) -> None:
    provider, url = introspection_stack.provider, introspection_stack.url
    token = client_credentials_token(provider, WRITER.client_id, WRITER.secret, url, SCOPES)
    assert "." not in token  # opaque: only introspection can tell what it is
    answer = tool_json(modern_call(url, token, "write_note", {"id": "o", "text": "opaque"}))
    assert answer["caller"] == {
        # oidc-provider's introspection answer for a client_credentials token has no `sub`
        # (its JWTs do, as RFC 9068 wants): mcpkit makes none up.
        "subject": None,
        "client_id": WRITER.client_id,
        "scopes": sorted(SCOPES.split()),
        "issuer": provider.issuer,
        "audience": [url],
        "has_raw_token": False,
    }
    # A reader's opaque token: the scope checks work on introspected tokens too.
    reader = client_credentials_token(provider, READER.client_id, READER.secret, url, SCOPES)
    refused = modern_call(url, reader, "write_note", {"id": "o", "text": "no"})
    assert refused.status_code == 403, refused.text
    assert challenge(refused)["scope"] == "notes:write"

    # The official client signing a user in, with opaque tokens, at 2026-07-28.
    user = BrowserUser(login="bob")
    auth = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            redirect_uris=[AnyUrl(f"http://127.0.0.1:{free_port()}/callback")],
            client_name="mcp 2.3.0 client",
        ),
        storage=InMemoryStorage(),
        redirect_handler=user.redirect_handler,
        callback_handler=user.callback_handler,
    )

    async def main() -> tuple[set[str], dict[str, Any]]:
        async with (
            httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(30.0)) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write, client_info=CLIENT_INFO) as session,
        ):
            await handshake(session, MODERN, CLIENT_INFO)
            listed = await session.list_tools()
            note = returned(await session.call_tool("read_note", {"id": "o"}))
            return {tool.name for tool in listed.tools}, note

    names, note = asyncio.run(asyncio.wait_for(main(), TIMEOUT_SECONDS))
    assert names == ALL_TOOLS
    assert note["text"] == "opaque"
    assert note["caller"]["subject"] == "bob"
    assert {"notes:read", "notes:write"} <= set(note["caller"]["scopes"])


@pytest.mark.parametrize("garbage", ["garbage", "a" * 43, "not.a.jwt"])
def test_introspection_verifier_refuses_garbage(introspection_stack: Stack, garbage: str) -> None:
    for response in (
        modern_call(introspection_stack.url, garbage, "whoami", {}),
        november_initialize(introspection_stack.url, garbage),
    ):
        assert response.status_code == 401, response.text
        assert challenge(response) == {
            "error": "invalid_token",
            "error_description": INACTIVE_PROBLEM,
            "resource_metadata": introspection_stack.metadata_url,
        }


# --- 4. a token for another resource --------------------------------------------------------


@pytest.fixture(scope="module")
def elsewhere(
    jwt_stack: Stack, introspection_stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Stack]]:
    """Two more notes servers, each trusting one of the providers above, but at another URL:
    a valid token of that provider is for another resource there."""
    logs = tmp_path_factory.mktemp("oauth-e2e-elsewhere")
    with contextlib.ExitStack() as running:
        servers: dict[str, Stack] = {}
        for kind, stack, environment in (
            ("jwt", jwt_stack, jwt_environment),
            ("introspection", introspection_stack, introspection_environment),
        ):
            port = free_port()
            base = f"http://127.0.0.1:{port}"
            pid = running.enter_context(notes_server(port, environment(stack.provider, base), logs))
            servers[kind] = Stack(stack.provider, base, pid)
        yield servers


@pytest.mark.parametrize("kind", ["jwt", "introspection"])
def test_token_for_another_resource_is_refused(
    jwt_stack: Stack, introspection_stack: Stack, elsewhere: dict[str, Stack], kind: str
) -> None:
    home = jwt_stack if kind == "jwt" else introspection_stack
    other = elsewhere[kind]
    token = client_credentials_token(
        home.provider, WRITER.client_id, WRITER.secret, home.url, SCOPES
    )
    # Good where it belongs ...
    assert tool_json(modern_call(home.url, token, "whoami", {}))["audience"] == [home.url]
    # ... refused by a server of the same issuer at another URL, whatever the revision.
    for response in (
        modern_call(other.url, token, "whoami", {}),
        november_initialize(other.url, token),
    ):
        assert response.status_code == 401, response.text
        assert challenge(response) == {
            "error": "invalid_token",
            "error_description": AUDIENCE_PROBLEM,
            "resource_metadata": other.metadata_url,
        }
    # That server's own metadata names itself, and the same authorization server.
    document = httpx2.get(other.metadata_url, timeout=TIMEOUT_SECONDS).json()
    assert document["resource"] == other.url != home.url
    assert document["authorization_servers"] == [home.provider.issuer]


def test_token_of_another_authorization_server_is_refused(
    jwt_stack: Stack, oauth_provider: Provider
) -> None:
    """A JWT from an issuer the server does not trust (signed by a key it does not know), for
    a resource nobody serves."""
    token = client_credentials_token(
        oauth_provider, WRITER.client_id, WRITER.secret, oauth_provider.resource, SCOPES
    )
    response = modern_call(jwt_stack.url, token, "whoami", {})
    assert response.status_code == 401, response.text
    # Its signature is checked before anything it claims: the key is what gives it away.
    assert challenge(response) == {
        "error": "invalid_token",
        "error_description": "The access token is signed with a key this server does not know.",
        "resource_metadata": jwt_stack.metadata_url,
    }
