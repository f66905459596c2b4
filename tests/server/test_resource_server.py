"""``ResourceServer``: the admission answers (401/400/403/503, fixed and non-echoing), the
verification cache, partitions, per-entry scopes and per-caller lists, the metadata
documents and the configuration refusals.  The verifier here is a stand-in so that every
outcome can be chosen; tests/server/oauth and tests/interop/oauth use real tokens and a real
authorization server."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mcpkit import (
    AccessToken,
    Admitted,
    CompleteResult,
    ConfigurationError,
    IntrospectionVerifier,
    JwtVerifier,
    Limits,
    Rejected,
    RequestContext,
    ResourceServer,
    Server,
    TokenProblem,
    TokenRejected,
    VerifierUnavailable,
    endpoint,
    prompt,
    resource,
    tool,
)
from mcpkit.model import ENDPOINT_ATTRIBUTE, Endpoint, Revision
from mcpkit.protocol import HeaderFields
from mcpkit.server import AdmissionRequest, HttpRequest
from mcpkit.server._resource_server import Authorization
from mcpkit.testing import TestClient, handshake_request, stateless_headers, stateless_request

BASE = "http://127.0.0.1:8000"
RESOURCE = BASE + "/mcp"
ISSUER = "https://issuer.example"
CANARY = "canary-token-0123456789"


def token_for(scopes: set[str], **changes: Any) -> AccessToken:
    values: dict[str, Any] = {
        "subject": "alice",
        "client_id": "app",
        "scopes": frozenset(scopes),
        "issuer": ISSUER,
        "audience": frozenset({RESOURCE}),
        "expires_at": int(time.time()) + 3600,
        "claims": {"sub": "alice"},
    }
    values.update(changes)
    return AccessToken(**values)


class Verifier:
    """Answers from a table: a token string to an ``AccessToken``, a ``TokenProblem``, an
    exception to raise or ``"hang"``; counts the calls."""

    def __init__(self, table: dict[str, object] | None = None) -> None:
        self.table: dict[str, object] = dict(table or {})
        self.calls = 0
        self.closed = False

    async def verify(self, token: str) -> AccessToken:
        self.calls += 1
        outcome = self.table.get(token, TokenProblem.SIGNATURE)
        if outcome == "hang":
            await asyncio.sleep(60)
        if isinstance(outcome, TokenProblem):
            raise TokenRejected(outcome)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome  # type: ignore[return-value]

    async def aclose(self) -> None:
        self.closed = True


@endpoint(path="/mcp", name="notes", version="1")
class Notes:
    @tool
    def ping(self) -> str:
        """Public."""
        return "pong"

    @tool(scopes=["notes:read"])
    def read_note(self, note: str) -> str:
        """Needs notes:read."""
        return "note " + note

    @tool(scopes=["notes:write"])
    def write_note(self, ctx: RequestContext, note: str) -> str:
        """Needs notes:write; says who wrote."""
        identity = ctx.identity
        assert isinstance(identity, AccessToken)
        return f"{identity.subject} wrote {note} with {sorted(identity.granted)}"

    @prompt(scopes=["notes:read"])
    def summary(self, topic: str) -> str:
        """A scoped prompt."""
        return "Summarize " + topic

    @resource("notes://index", mime_type="text/plain", scopes=["notes:read"])
    def index(self) -> str:
        """A scoped resource."""
        return "index"

    @resource("notes://open", mime_type="text/plain")
    def open_index(self) -> str:
        """A public resource."""
        return "open"

    @resource("notes://note/{id}", mime_type="text/plain", scopes=["notes:write"])
    def one(self, id: str) -> str:
        """A scoped template."""
        return "note " + id


NOTES: Endpoint = getattr(Notes, ENDPOINT_ATTRIBUTE)


def auth(verifier: Verifier, **options: Any) -> ResourceServer:
    return ResourceServer(BASE, authorization_servers=[ISSUER], verifier=verifier, **options)


@pytest.fixture
def verifier() -> Verifier:
    return Verifier(
        {
            "reader": token_for({"notes:read"}),
            "writer": token_for({"notes:read", "notes:write"}, subject="bob"),
            "nobody": token_for(set(), subject="carol"),
        }
    )


@pytest.fixture
def client(verifier: Verifier) -> Iterator[TestClient]:
    with TestClient(Server(Notes, auth=auth(verifier))) as test_client:
        yield test_client


def rpc(method: str, params: dict[str, Any] | None = None) -> dict[str, object]:
    return stateless_request(method, params, id=7)


def post(
    client: TestClient,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    token: str | None = None,
    name: str | None = None,
    headers: dict[str, str] | None = None,
) -> Any:
    sent = stateless_headers(method, name)
    if token is not None:
        sent["authorization"] = "Bearer " + token
    sent.update(headers or {})
    return client.post("/mcp", rpc(method, params), headers=sent)


def call(client: TestClient, tool_name: str, arguments: dict[str, Any], token: str | None) -> Any:
    params = {"name": tool_name, "arguments": arguments}
    return post(client, "tools/call", params, token=token, name=tool_name)


CHALLENGE = f'Bearer resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp"'


# --- 401, 400 and 503 ------------------------------------------------------------------------


def test_no_token_is_401_with_the_metadata_challenge(client: TestClient) -> None:
    response = call(client, "ping", {}, None)
    assert response.status == 401
    assert response.header("www-authenticate") == CHALLENGE
    assert response.json["error"]["code"] == -31901
    assert response.json["id"] == 7


def test_another_scheme_is_no_token(client: TestClient) -> None:
    response = client.post(
        "/mcp", rpc("tools/list"), headers={"authorization": "Basic " + CANARY,
                                            "mcp-protocol-version": "2026-07-28",
                                            "mcp-method": "tools/list"},
    )  # fmt: skip
    assert response.status == 401
    assert response.header("www-authenticate") == CHALLENGE
    assert CANARY not in response.body.decode()


def test_two_authorization_headers_are_400(client: TestClient) -> None:
    response = client.post(
        "/mcp",
        rpc("tools/list"),
        headers=[
            ("authorization", "Bearer reader"),
            ("authorization", "Bearer writer"),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
        ],
    )
    assert response.status == 400
    assert 'error="invalid_request"' in (response.header("www-authenticate") or "")


@pytest.mark.parametrize(
    ("problem"), list(TokenProblem), ids=[problem.name for problem in TokenProblem]
)
def test_each_refusal_has_its_fixed_description(verifier: Verifier, problem: TokenProblem) -> None:
    verifier.table[CANARY] = problem
    with TestClient(Server(Notes, auth=auth(verifier))) as test_client:
        response = call(test_client, "ping", {}, CANARY)
    assert response.status == 401
    assert response.header("www-authenticate") == (
        f'Bearer error="invalid_token", error_description="{problem.value}", '
        f'resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp"'
    )
    assert CANARY not in response.body.decode()


def test_a_token_at_the_size_limit_is_verified_and_one_byte_more_is_not(
    verifier: Verifier,
) -> None:
    limits = Limits().replace(max_bearer_token_bytes=64)
    at_limit, past = "a" * 64, "a" * 65
    verifier.table[at_limit] = token_for(set())
    with TestClient(Server(Notes, auth=auth(verifier), limits=limits)) as test_client:
        assert call(test_client, "ping", {}, at_limit).status == 200
        response = call(test_client, "ping", {}, past)
    assert response.status == 401
    assert TokenProblem.TOO_LARGE.value in (response.header("www-authenticate") or "")
    assert verifier.calls == 1


@pytest.mark.parametrize("credentials", ["", "a b", "a=b", "tok\u00e9n", "a,b", "=="])
def test_a_token_that_is_not_token68_is_malformed(
    client: TestClient, verifier: Verifier, credentials: str
) -> None:
    response = client.post(
        "/mcp",
        rpc("tools/list"),
        headers={
            "authorization": "Bearer " + credentials,
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/list",
        },
    )
    assert response.status == 401
    assert TokenProblem.MALFORMED.value in (response.header("www-authenticate") or "")
    assert verifier.calls == 0


@pytest.mark.parametrize(
    "failure",
    [VerifierUnavailable(), RuntimeError(CANARY), "hang", "not a token"],
    ids=["unavailable", "raises", "hangs", "wrong-type"],
)
def test_a_verifier_that_cannot_decide_is_503(
    verifier: Verifier, failure: object, caplog: pytest.LogCaptureFixture
) -> None:
    verifier.table[CANARY] = failure
    limits = Limits().replace(verifier_timeout_seconds=0.2)
    started = time.monotonic()
    with (
        caplog.at_level(logging.DEBUG, logger="mcpkit"),
        TestClient(Server(Notes, auth=auth(verifier), limits=limits)) as test_client,
    ):
        response = call(test_client, "ping", {}, CANARY)
        assert response.status == 503
        assert response.json["error"]["message"] == (
            "The access token cannot be verified right now; retry later"
        )
        # not remembered: the next request asks the verifier again
        verifier.table[CANARY] = token_for(set())
        assert call(test_client, "ping", {}, CANARY).status == 200
    assert time.monotonic() - started < 5
    assert CANARY not in caplog.text
    assert CANARY not in response.body.decode()


def test_the_audience_must_be_this_endpoint_or_the_server(verifier: Verifier) -> None:
    verifier.table.update(
        {
            "elsewhere": token_for(set(), audience=frozenset({"https://other.example/mcp"})),
            "server-wide": token_for(set(), audience=frozenset({BASE + "/"})),
            "shouting": token_for(set(), audience=frozenset({"HTTP://127.0.0.1:8000/mcp"})),
            "none": token_for(set(), audience=frozenset()),
            "urn": token_for(set(), audience=frozenset({"urn:example:notes"})),
        }
    )
    with TestClient(Server(Notes, auth=auth(verifier))) as test_client:
        refused = call(test_client, "ping", {}, "elsewhere")
        assert refused.status == 401
        assert call(test_client, "ping", {}, "elsewhere").status == 401  # remembered, refused
        assert TokenProblem.AUDIENCE.value in (refused.header("www-authenticate") or "")
        assert call(test_client, "ping", {}, "server-wide").status == 200
        assert call(test_client, "ping", {}, "shouting").status == 200
        assert call(test_client, "ping", {}, "none").status == 401
        assert call(test_client, "ping", {}, "urn").status == 401


def test_required_scopes_are_needed_for_any_request(verifier: Verifier) -> None:
    configured = auth(verifier, required_scopes=["mcp"], scope_implies={"notes:read": ["mcp"]})
    with TestClient(Server(Notes, auth=configured)) as test_client:
        missing = call(test_client, "ping", {}, None)
        assert missing.header("www-authenticate") == CHALLENGE + ', scope="mcp"'
        refused = call(test_client, "ping", {}, "nobody")
        assert refused.status == 403
        assert call(test_client, "ping", {}, "nobody").status == 403  # remembered, refused
        assert 'scope="mcp"' in (refused.header("www-authenticate") or "")
        assert call(test_client, "ping", {}, "reader").status == 200  # implied


# --- scopes and lists ---------------------------------------------------------------------


def test_a_missing_scope_is_403_naming_it(client: TestClient) -> None:
    response = call(client, "write_note", {"note": "n"}, "reader")
    assert response.status == 403
    assert response.header("www-authenticate") == (
        'Bearer error="insufficient_scope", scope="notes:write", '
        f'resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp", '
        'error_description="The access token lacks a scope this request needs."'
    )
    assert response.json["error"]["code"] == -31902


def test_the_handler_sees_the_access_token(client: TestClient) -> None:
    response = call(client, "write_note", {"note": "n"}, "writer")
    assert response.status == 200
    text = response.json["result"]["content"][0]["text"]
    assert text == "bob wrote n with ['notes:read', 'notes:write']"


def test_the_raw_token_reaches_handlers_only_when_asked(verifier: Verifier) -> None:
    seen: list[Any] = []

    @endpoint(path="/mcp", name="echo", version="1")
    class Echo:
        @tool
        def who(self, ctx: RequestContext) -> str:
            """Records the identity."""
            seen.append(ctx.identity)
            return "ok"

    for pass_token in (False, True):
        configured = auth(verifier, pass_token=pass_token)
        with TestClient(Server(Echo, auth=configured)) as test_client:
            assert call(test_client, "who", {}, "reader").status == 200
            assert call(test_client, "who", {}, "reader").status == 200
    assert [identity.token for identity in seen] == [None, None, "reader", "reader"]
    assert "reader" not in repr(seen[-1])


def test_each_kind_of_entry_checks_its_scopes(client: TestClient) -> None:
    prompt_get = post(client, "prompts/get", {"name": "summary", "arguments": {"topic": "x"}},
                      token="nobody", name="summary")  # fmt: skip
    assert prompt_get.status == 403
    read = post(client, "resources/read", {"uri": "notes://index"}, token="nobody",
                name="notes://index")  # fmt: skip
    assert read.status == 403
    template = post(client, "resources/read", {"uri": "notes://note/1"}, token="reader",
                    name="notes://note/1")  # fmt: skip
    assert template.status == 403
    assert 'scope="notes:write"' in (template.header("www-authenticate") or "")
    public = post(client, "resources/read", {"uri": "notes://open"}, token="nobody",
                  name="notes://open")  # fmt: skip
    assert public.status == 200
    unknown = post(client, "resources/read", {"uri": "notes://nothing"}, token="nobody",
                   name="notes://nothing")  # fmt: skip
    assert unknown.status == 400  # not found, as for anyone
    assert post(client, "prompts/get", {"name": "summary", "arguments": {"topic": "x"}},
                token="reader", name="summary").status == 200  # fmt: skip
    completion = {
        "ref": {"type": "ref/prompt", "name": "summary"},
        "argument": {"name": "topic", "value": "a"},
    }
    assert post(client, "completion/complete", completion, token="nobody").status == 403
    completion["ref"] = {"type": "ref/resource", "uri": "notes://note/{id}"}
    completion["argument"] = {"name": "id", "value": "1"}
    assert post(client, "completion/complete", completion, token="reader").status == 403
    assert post(client, "completion/complete", completion, token="writer").status != 403


def names(response: Any, member: str, key: str = "name") -> list[str]:
    assert response.status == 200, response.body
    return [entry[key] for entry in response.json["result"][member]]


def test_lists_show_each_caller_what_it_may_use(client: TestClient) -> None:
    assert names(post(client, "tools/list", token="nobody"), "tools") == ["ping"]
    assert names(post(client, "tools/list", token="reader"), "tools") == ["ping", "read_note"]
    assert names(post(client, "tools/list", token="writer"), "tools") == [
        "ping", "read_note", "write_note",
    ]  # fmt: skip
    assert names(post(client, "prompts/list", token="nobody"), "prompts") == []
    assert names(post(client, "prompts/list", token="reader"), "prompts") == ["summary"]
    assert names(post(client, "resources/list", token="nobody"), "resources", "uri") == [
        "notes://open"
    ]
    assert names(post(client, "resources/list", token="reader"), "resources", "uri") == [
        "notes://index", "notes://open",
    ]  # fmt: skip
    templates = "resources/templates/list"
    assert names(post(client, templates, token="reader"), "resourceTemplates", "uriTemplate") == []
    assert names(post(client, templates, token="writer"), "resourceTemplates", "uriTemplate") == [
        "notes://note/{id}"
    ]


def test_a_cursor_from_another_callers_view_is_refused(verifier: Verifier) -> None:
    with TestClient(Server(Notes, auth=auth(verifier), page_size=1)) as test_client:
        first = post(test_client, "tools/list", token="writer")
        cursor = first.json["result"]["nextCursor"]
        same = post(test_client, "tools/list", {"cursor": cursor}, token="writer")
        assert names(same, "tools") == ["read_note"]
        other = post(test_client, "tools/list", {"cursor": cursor}, token="nobody")
        assert other.status == 400


def test_views_are_bounded(verifier: Verifier) -> None:
    limits = Limits().replace(max_catalog_views=1)
    with TestClient(Server(Notes, auth=auth(verifier), limits=limits)) as test_client:
        for token in ("nobody", "reader", "writer", "reader", "nobody"):
            listed = names(post(test_client, "tools/list", token=token), "tools")
            assert ("write_note" in listed) == (token == "writer")
    runtime = Server(Notes, auth=auth(verifier), limits=limits).engine.runtime("/mcp")
    assert runtime.guard is not None
    assert len(runtime.guard._views) == 0


# --- the verification cache and partitions ----------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def admission(http: HttpRequest | None) -> AdmissionRequest:
    return AdmissionRequest(
        endpoint=NOTES,
        http_request=http,
        revision=Revision.V2026_07_28,
        method="tools/list",
        notification=False,
    )


def bearer(token: str) -> HttpRequest:
    return HttpRequest(
        method="POST", raw_path="/mcp", headers=(("authorization", f"Bearer {token}"),)
    )


def bound(
    verifier: Verifier, limits: Limits | None = None, **options: Any
) -> tuple[Authorization, Clock]:
    clock = Clock()
    return auth(verifier, **options).bind(limits or Limits(), clock), clock


def admit(authorization: Authorization, token: str) -> Admitted | Rejected:
    return asyncio.run(authorization.admit(admission(bearer(token))))


def test_a_verified_token_is_remembered_for_cache_seconds(verifier: Verifier) -> None:
    authorization, clock = bound(verifier, cache_seconds=30)
    first = admit(authorization, "reader")
    assert isinstance(first, Admitted)
    assert admit(authorization, "reader") is first
    assert verifier.calls == 1
    clock.now += 30
    assert isinstance(admit(authorization, "reader"), Admitted)
    assert verifier.calls == 2


def test_never_past_the_tokens_expiry(verifier: Verifier) -> None:
    verifier.table["short"] = token_for(set(), expires_at=int(time.time()) + 5)
    authorization, clock = bound(verifier, cache_seconds=60)
    admit(authorization, "short")
    clock.now += 10
    admit(authorization, "short")
    assert verifier.calls == 2


def test_a_token_without_expiry_is_remembered_for_cache_seconds(verifier: Verifier) -> None:
    verifier.table["forever"] = token_for(set(), expires_at=None)
    authorization, clock = bound(verifier, cache_seconds=30)
    admit(authorization, "forever")
    clock.now += 29
    admit(authorization, "forever")
    assert verifier.calls == 1


def test_refusals_are_remembered_but_transient_ones_are_not(verifier: Verifier) -> None:
    verifier.table.update({"bad": TokenProblem.SIGNATURE, "early": TokenProblem.NOT_YET_VALID,
                           "rotated": TokenProblem.UNKNOWN_KEY})  # fmt: skip
    authorization, _ = bound(verifier)
    for token in ("bad", "bad", "early", "early", "rotated", "rotated"):
        assert isinstance(admit(authorization, token), Rejected)
    assert verifier.calls == 5


def test_the_cache_is_bounded_and_keyed_by_digest(verifier: Verifier) -> None:
    authorization, _ = bound(verifier, Limits().replace(max_verified_tokens=2))
    for token in ("reader", "writer", "nobody"):
        admit(authorization, token)
    assert len(authorization._verified) == 2
    assert all(len(key) == 32 for key in authorization._verified)  # SHA-256, not the token
    admit(authorization, "reader")  # forgotten: verified again
    assert verifier.calls == 4


def test_the_partition_is_the_issuer_and_subject(verifier: Verifier) -> None:
    verifier.table.update(
        {
            "alice-again": token_for({"notes:write"}),
            "other-issuer": token_for(set(), issuer="https://elsewhere.example"),
            "service": token_for(set(), subject=None, client_id="svc"),
            "anonymous": token_for(set(), subject=None, client_id=None),
        }
    )
    authorization, _ = bound(verifier)
    keys = {}
    for token in ("reader", "alice-again", "writer", "other-issuer", "service", "anonymous"):
        admitted = admit(authorization, token)
        assert isinstance(admitted, Admitted)
        keys[token] = admitted.authorization
    assert keys["reader"] == keys["alice-again"]
    assert keys["reader"] is not None and keys["reader"].startswith("oauth:")
    assert len({keys["reader"], keys["writer"], keys["other-issuer"], keys["service"]}) == 4
    assert keys["anonymous"] is None
    assert not any("alice" in str(key) for key in keys.values())


def test_stdio_has_no_token(verifier: Verifier) -> None:
    authorization, _ = bound(verifier)
    refused = asyncio.run(authorization.admit(admission(None)))
    assert isinstance(refused, Rejected) and refused.status == 401


def test_shutdown_closes_the_verifier(verifier: Verifier) -> None:
    with TestClient(Server(Notes, auth=auth(verifier))) as test_client:
        call(test_client, "ping", {}, "reader")
    assert verifier.closed

    class Plain:
        async def verify(self, token: str) -> AccessToken:
            return token_for(set())

    plain = ResourceServer(BASE, authorization_servers=[ISSUER], verifier=Plain())
    with TestClient(Server(Notes, auth=plain)) as test_client:
        assert call(test_client, "ping", {}, "x").status == 200


def test_scope_hierarchies_are_transitive(verifier: Verifier) -> None:
    configured = auth(
        verifier, scope_implies={"admin": ["notes:write"], "notes:write": ["notes:read"]}
    )
    assert configured.granted(frozenset({"admin"})) == {"admin", "notes:write", "notes:read"}
    assert auth(verifier).granted(frozenset({"admin"})) == {"admin"}
    cycle = auth(verifier, scope_implies={"a": ["b"], "b": ["a"]})
    assert cycle.granted(frozenset({"a"})) == {"a", "b"}


# --- metadata documents -------------------------------------------------------------------------


def get(client: TestClient, path: str, method: str = "GET", **options: Any) -> Any:
    return client.post(path, b"", method=method, **options)


def test_metadata_documents(client: TestClient) -> None:
    endpoint_document = get(client, "/.well-known/oauth-protected-resource/mcp")
    assert endpoint_document.status == 200
    assert json.loads(endpoint_document.body) == {
        "resource": RESOURCE,
        "authorization_servers": [ISSUER],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["notes:read", "notes:write"],
    }
    root = json.loads(get(client, "/.well-known/oauth-protected-resource").body)
    assert root["resource"] == BASE
    assert get(client, "/.well-known/oauth-protected-resource/other").status == 404
    assert get(client, "/.well-known/oauth-protected-resource/mcp", method="POST").status == 405


def test_metadata_is_open_to_any_origin_and_keeps_the_host_check(client: TestClient) -> None:
    path = "/.well-known/oauth-protected-resource/mcp"
    answered = get(client, path, headers={"origin": "https://app.example"})
    assert answered.header("access-control-allow-origin") == "*"
    preflight = client.post(path, b"", method="OPTIONS", headers={"origin": "https://app.example"})
    assert preflight.status == 204
    assert preflight.header("access-control-allow-methods") == "GET"
    assert get(client, path, headers={"host": "evil.example"}).status == 421


def test_metadata_under_a_prefix_with_every_option(verifier: Verifier) -> None:
    configured = ResourceServer(
        "https://Mcp.Example.com/ai/",
        authorization_servers=[ISSUER],
        verifier=verifier,
        scopes_supported=["notes:read"],
        resource_name="Notes",
        resource_documentation="https://mcp.example.com/docs",
    )
    assert configured.url == "https://mcp.example.com/ai"
    assert repr(configured) == "ResourceServer('https://mcp.example.com/ai')"
    with TestClient(Server(Notes, auth=configured)) as test_client:
        for path in ("/.well-known/oauth-protected-resource/ai/mcp",
                     "/.well-known/oauth-protected-resource/mcp"):  # fmt: skip
            document = json.loads(get(test_client, path).body)
            assert document["resource"] == "https://mcp.example.com/ai/mcp"
            assert document["scopes_supported"] == ["notes:read"]
            assert document["resource_name"] == "Notes"
            assert document["resource_documentation"] == "https://mcp.example.com/docs"
        root = json.loads(get(test_client, "/.well-known/oauth-protected-resource/ai").body)
        assert root["resource"] == "https://mcp.example.com/ai"
        response = call(test_client, "ping", {}, None)
    assert response.header("www-authenticate") == (
        'Bearer resource_metadata="https://mcp.example.com/.well-known/'
        'oauth-protected-resource/ai/mcp"'
    )


def test_without_declared_scopes_the_documents_omit_them(verifier: Verifier) -> None:
    @endpoint(path="/mcp", name="open", version="1")
    class Open:
        @tool
        def ping(self) -> str:
            """Public."""
            return "pong"

    with TestClient(Server(Open, auth=auth(verifier))) as test_client:
        document = json.loads(get(test_client, "/.well-known/oauth-protected-resource/mcp").body)
        assert "scopes_supported" not in document
        assert names(post(test_client, "tools/list", token="reader"), "tools") == ["ping"]
    assert Server(Open, auth=auth(verifier)).engine.runtime("/mcp").guard is None


# --- configuration ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"url": "mcp.example.com"}, "http(s) URL"),
        ({"url": "ftp://mcp.example.com"}, "http(s) URL"),
        ({"url": "http://mcp.example.com"}, "must be https"),
        ({"url": "https://mcp.example.com/?q"}, "absolute URL"),
        ({"url": "https://user@mcp.example.com"}, "name a host"),
        ({"url": "https:///path"}, "name a host"),
        ({"url": 7}, "absolute URL"),
        ({"authorization_servers": []}, "non-empty list"),
        ({"authorization_servers": ISSUER}, "non-empty list"),
        ({"authorization_servers": ["issuer"]}, "http(s) URL"),
        ({"verifier": object()}, "async verify"),
        ({"required_scopes": "mcp"}, "scope strings"),
        ({"required_scopes": ["a b"]}, "scope strings"),
        ({"scopes_supported": [""]}, "scope strings"),
        ({"scope_implies": {"a b": ["c"]}}, "scope strings"),
        ({"scope_implies": {"a": "c"}}, "scope strings"),
        ({"resource_name": ""}, "non-empty str"),
        ({"resource_documentation": "docs"}, "http(s) URL"),
        ({"cache_seconds": 0}, "cache_seconds"),
        ({"cache_seconds": 3601}, "cache_seconds"),
    ],
)
def test_configuration_refusals(options: dict[str, Any], message: str) -> None:
    arguments: dict[str, Any] = {
        "url": BASE,
        "authorization_servers": [ISSUER],
        "verifier": Verifier(),
    }
    arguments.update(options)
    url = arguments.pop("url")
    with pytest.raises(ConfigurationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ResourceServer(url, **arguments)


def test_loopback_urls_may_be_plain_http() -> None:
    for url in ("http://localhost:9000", "http://[::1]:9000", "http://127.0.0.1"):
        assert ResourceServer(url, authorization_servers=[url], verifier=Verifier()).url == url


def test_server_refusals(verifier: Verifier) -> None:
    with pytest.raises(ConfigurationError, match="only a resource server can check"):
        Server(Notes)
    with pytest.raises(ConfigurationError, match="either auth="):
        Server(Notes, auth=auth(verifier), admission=lambda request: Admitted())
    with pytest.raises(ConfigurationError, match="auth must be a ResourceServer"):
        Server(Notes, auth="yes")  # type: ignore[arg-type]


def test_anonymous_callers_use_what_needs_no_scope(verifier: Verifier) -> None:
    with TestClient(Server(Notes, auth=auth(verifier, anonymous=True))) as test_client:
        assert call(test_client, "ping", {}, None).status == 200
        assert names(post(test_client, "tools/list"), "tools") == ["ping"]
        signing_in = call(test_client, "write_note", {"note": "n"}, None)
        assert signing_in.status == 401
        assert signing_in.header("www-authenticate") == CHALLENGE + ', scope="notes:write"'
        assert call(test_client, "write_note", {"note": "n"}, None).status == 401  # remembered
        basic = test_client.post(
            "/mcp",
            rpc("tools/list"),
            headers={"authorization": "Basic x", "mcp-protocol-version": "2026-07-28",
                     "mcp-method": "tools/list"},
        )  # fmt: skip
        assert basic.status == 200
        assert call(test_client, "ping", {}, "unknown-token").status == 401  # still refused
        assert call(test_client, "write_note", {"note": "n"}, "writer").status == 200


def test_anonymous_excludes_required_scopes(verifier: Verifier) -> None:
    with pytest.raises(ConfigurationError, match="give one or the other"):
        auth(verifier, anonymous=True, required_scopes=["mcp"])
    with pytest.raises(ConfigurationError, match="anonymous must be True or False"):
        auth(verifier, anonymous="yes")


def test_stdio_is_refused_at_start(verifier: Verifier) -> None:
    with pytest.raises(ConfigurationError, match="stdio carries no access token"):
        Server(Notes, auth=auth(verifier)).stdio_connection()


def test_identity_that_is_not_an_access_token_has_no_scopes(verifier: Verifier) -> None:
    authorization, _ = bound(verifier)
    runtime = Server(Notes, auth=auth(verifier)).engine.runtime("/mcp")
    guard = runtime.guard
    assert guard is not None
    refused = guard.check(Revision.V2026_07_28, "tools/call", ("read_note", {}), "someone")
    assert isinstance(refused, Rejected) and refused.status == 401
    assert guard.check(Revision.V2026_07_28, "tools/call", ("ping", {}), None) is None
    assert guard.check(Revision.V2026_07_28, "resources/read", 7, None) is None
    assert guard.check(Revision.V2026_07_28, "ping", None, None) is None
    names_seen = [tool.name for tool in guard.catalog(None).endpoint.tools]
    assert "write_note" in names_seen  # the endpoint is whole; its pages are filtered
    assert dataclasses.is_dataclass(token_for(set()))
    assert isinstance(CompleteResult, type)
    needed = frozenset({"a"})
    assert authorization.insufficient(NOTES, needed) is authorization.insufficient(NOTES, needed)


def test_grants_add_scopes_from_the_applications_policy(verifier: Verifier) -> None:
    def grants(token: AccessToken) -> list[str]:
        return ["notes:write"] if token.subject == "carol" else []

    with TestClient(Server(Notes, auth=auth(verifier, grants=grants))) as test_client:
        assert names(post(test_client, "tools/list", token="nobody"), "tools") == [
            "ping", "write_note",
        ]  # fmt: skip
        assert call(test_client, "write_note", {"note": "n"}, "nobody").status == 200
        assert call(test_client, "read_note", {"note": "n"}, "nobody").status == 403


@pytest.mark.parametrize("returned", [RuntimeError("boom"), "notes:write", ["a b"], None])
def test_a_failing_grants_policy_fails_closed(verifier: Verifier, returned: object) -> None:
    def grants(token: AccessToken) -> Any:
        if isinstance(returned, BaseException):
            raise returned
        return returned

    with TestClient(Server(Notes, auth=auth(verifier, grants=grants))) as test_client:
        assert call(test_client, "ping", {}, "reader").status == 503


def test_grants_must_be_callable(verifier: Verifier) -> None:
    with pytest.raises(ConfigurationError, match="grants must be callable"):
        auth(verifier, grants=["notes:write"])


def test_verifier_urls_follow_the_same_rules() -> None:
    JwtVerifier("https://issuer.example", "https://issuer.example/keys?tenant=a")
    IntrospectionVerifier(
        "https://issuer.example/introspect?v=2", client_id="rs", client_secret="secret"
    )
    with pytest.raises(ConfigurationError, match="JwtVerifier: jwks_uri must be https"):
        JwtVerifier("https://issuer.example", "http://issuer.example/keys")
    with pytest.raises(ConfigurationError, match="IntrospectionVerifier: endpoint must be an"):
        IntrospectionVerifier("https://issuer.example/#x", client_id="rs", client_secret="s")


def test_the_built_in_verifiers_take_the_servers_limits() -> None:
    limits = Limits().replace(max_token_scopes=3, max_verifier_response_bytes=4096)
    own = Limits().replace(max_token_scopes=5)
    jwt_default = JwtVerifier(ISSUER, ISSUER + "/keys")
    jwt_own = JwtVerifier(ISSUER, ISSUER + "/keys", limits=own)
    introspection = IntrospectionVerifier(ISSUER + "/i", client_id="rs", client_secret="s")
    introspection_own = IntrospectionVerifier(
        ISSUER + "/i", client_id="rs", client_secret="s", limits=own
    )
    for verifier in (jwt_default, jwt_own, introspection, introspection_own):
        auth(verifier).bind(limits)  # type: ignore[arg-type]
    assert jwt_default._limits is limits and jwt_default._jwks._limits is limits
    assert jwt_own._limits is own
    assert introspection._limits is limits and introspection_own._limits is own


def test_the_fast_path_answers_only_what_admit_decided(verifier: Verifier) -> None:
    authorization, clock = bound(verifier)
    http = bearer("reader")
    assert authorization.remembered("/mcp", http) is None  # not verified yet
    admitted = admit(authorization, "reader")
    assert authorization.remembered("/mcp", http) is admitted
    assert authorization.remembered("/other", http) is None  # an endpoint not yet seen
    assert authorization.remembered("/mcp", None) is None
    twice = HttpRequest(method="POST", raw_path="/mcp", headers=(*http.headers, *http.headers))
    assert authorization.remembered("/mcp", twice) is None
    # The pipeline's way: the headers already indexed, read the same
    assert authorization.remembered("/mcp", http, HeaderFields(http.headers)) is admitted
    assert authorization.remembered("/mcp", twice, HeaderFields(twice.headers)) is None
    hosted = HttpRequest(method="POST", raw_path="/mcp", headers=(("host", "h"), *http.headers))
    assert authorization.remembered("/mcp", hosted) is admitted
    basic = HttpRequest(method="POST", raw_path="/mcp", headers=(("authorization", "Basic x"),))
    assert authorization.remembered("/mcp", basic) is None
    assert authorization.remembered("/mcp", bearer("a" * 20_000)) is None
    clock.now += 3600
    assert authorization.remembered("/mcp", http) is None  # expired from the cache
    passing, _ = bound(verifier, pass_token=True)
    admit(passing, "reader")
    assert passing.remembered("/mcp", http) is None  # the token must be attached each time


def test_a_session_belongs_to_the_caller_whose_token_opened_it(verifier: Verifier) -> None:
    november = Revision.V2025_11_25

    @endpoint(path="/mcp", name="sessions", version="1", revisions={november},
              session_revisions={november})  # fmt: skip
    class Sessions:
        @tool
        def ping(self) -> str:
            """Answers."""
            return "pong"

    initialize = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    with TestClient(Server(Sessions, auth=auth(verifier))) as test_client:
        opened = test_client.post(
            "/mcp",
            handshake_request("initialize", initialize),
            headers={"authorization": "Bearer reader"},
        )
        assert opened.status == 200
        session = opened.header("mcp-session-id")
        assert session is not None

        def ping(token: str) -> int:
            headers = {
                "authorization": "Bearer " + token,
                "mcp-session-id": session,
                "mcp-protocol-version": "2025-11-25",
            }
            message = handshake_request("tools/call", {"name": "ping", "arguments": {}})
            return test_client.post("/mcp", message, headers=headers).status

        assert ping("reader") == 200
        assert ping("writer") == 404  # another subject: no such session for it
        assert ping("nobody") == 404
