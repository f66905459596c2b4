"""``examples/remote_notes.py``: the OAuth-protected notes server of the "Deploy it remotely"
tutorial builds from its environment, refuses a missing setting clearly, challenges a client
without a token the way the MCP authorization specification asks, and advertises its scopes."""

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import mcpkit
from mcpkit import AccessToken, TokenProblem, TokenRejected
from mcpkit.testing import TestClient, stateless_headers, stateless_request

PATH = Path(__file__).resolve().parents[1] / "examples" / "remote_notes.py"
NAME = "mcpkit_example_remote_notes"
PUBLIC_URL = "http://127.0.0.1:8000"
ISSUER = "http://127.0.0.1:8080/realms/notes"
JWKS_URI = "http://127.0.0.1:8080/realms/notes/protocol/openid-connect/certs"
METADATA = "/.well-known/oauth-protected-resource/mcp"


def _load() -> ModuleType:
    """Import the example by path (``examples`` is not a package), as ``mcpkit serve`` does."""
    spec = importlib.util.spec_from_file_location(NAME, PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(spec.name, None)
    return module


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.setenv("MCPKIT_PUBLIC_URL", PUBLIC_URL)
    monkeypatch.setenv("MCPKIT_ISSUER", ISSUER)
    monkeypatch.setenv("MCPKIT_JWKS_URI", JWKS_URI)
    return monkeypatch


@pytest.fixture
def example(environment: pytest.MonkeyPatch) -> ModuleType:
    return _load()


@pytest.fixture
def client(example: ModuleType) -> Iterator[TestClient]:
    with TestClient(example.server) as client:
        yield client


def test_the_example_builds_from_its_environment(example: ModuleType) -> None:
    server = example.server
    assert isinstance(server, mcpkit.Server)
    assert server.host == "127.0.0.1"  # loopback, behind the proxy
    assert server.allowed_hosts == frozenset({"127.0.0.1"})  # the public URL's host
    [endpoint] = server.registry
    assert endpoint.path == "/mcp"
    assert sorted(endpoint.declared_scopes) == ["notes:read", "notes:write"]


@pytest.mark.parametrize("missing", ["MCPKIT_PUBLIC_URL", "MCPKIT_ISSUER", "MCPKIT_JWKS_URI"])
def test_a_missing_setting_is_named(environment: pytest.MonkeyPatch, missing: str) -> None:
    environment.delenv(missing)
    with pytest.raises(mcpkit.ConfigurationError, match=f"set {missing} "):
        _load()


def test_a_public_url_that_is_not_https_is_refused(environment: pytest.MonkeyPatch) -> None:
    environment.setenv("MCPKIT_PUBLIC_URL", "http://notes.example.com")
    with pytest.raises(mcpkit.ConfigurationError, match="must be https"):
        _load()


def test_a_request_without_a_token_is_challenged(client: TestClient) -> None:
    response = client.post(
        "/mcp", stateless_request("tools/list"), headers=stateless_headers("tools/list")
    )
    assert response.status == 401
    assert response.header("www-authenticate") == (
        f'Bearer resource_metadata="{PUBLIC_URL}{METADATA}"'
    )
    answer: Any = response.json
    assert answer["error"]["code"] == -31901


def test_the_metadata_document_names_the_issuer_and_both_scopes(client: TestClient) -> None:
    response = client.post(METADATA, b"", method="GET")
    assert response.status == 200
    assert json.loads(response.body) == {
        "resource": f"{PUBLIC_URL}/mcp",
        "authorization_servers": [ISSUER],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["notes:read", "notes:write"],
        "resource_name": "Notes",
    }


CALLERS = {
    "reader": ("alice", {"notes:read"}),
    "writer": ("bob", {"notes:read", "notes:write"}),
}


class Tokens:
    """A stand-in for the authorization server's keys: each test token names its caller."""

    async def verify(self, token: str) -> AccessToken:
        if token not in CALLERS:
            raise TokenRejected(TokenProblem.SIGNATURE)
        subject, scopes = CALLERS[token]
        return AccessToken(
            subject=subject,
            client_id="notes-cli",
            scopes=frozenset(scopes),
            issuer=ISSUER,
            audience=frozenset({f"{PUBLIC_URL}/mcp"}),
        )


def test_the_tools_need_their_scopes_and_see_the_caller(example: ModuleType) -> None:
    auth = mcpkit.ResourceServer(PUBLIC_URL, authorization_servers=[ISSUER], verifier=Tokens())
    server = mcpkit.Server(example.notes, auth=auth)

    def call(token: str, tool: str, **arguments: str) -> tuple[int, Any]:
        headers = {**stateless_headers("tools/call", tool), "Authorization": f"Bearer {token}"}
        request = stateless_request("tools/call", {"name": tool, "arguments": arguments})
        response = test_client.post("/mcp", request, headers=headers)
        return response.status, response.json

    def tools(token: str) -> list[str]:
        headers = {**stateless_headers("tools/list"), "Authorization": f"Bearer {token}"}
        listed: Any = test_client.post("/mcp", stateless_request("tools/list"), headers=headers)
        return [tool["name"] for tool in listed.json["result"]["tools"]]

    with TestClient(server) as test_client:
        assert tools("reader") == ["read_note", "search_notes"]  # write_note is hidden
        assert tools("writer") == ["read_note", "search_notes", "write_note"]
        status, _ = call("reader", "write_note", name="plan", text="ship it")
        assert status == 403
        status, answer = call("writer", "write_note", name="plan", text="ship it")
        assert status == 200
        assert answer["result"]["content"][0]["text"] == "Saved note 'plan' for bob."
        status, answer = call("reader", "search_notes", query="SHIP")
        assert answer["result"]["structuredContent"] == ["plan"]
        status, answer = call("forged", "search_notes", query="ship")
        assert status == 401
