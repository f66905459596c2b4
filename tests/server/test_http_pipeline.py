"""The HTTP request pipeline, groups 1-9 and admission (docs/design/server.md §2.1),
driven end to end through
``mcpkit.Server`` and the in-process ``TestClient``.

Every test asserts the exact status, the exact set of response headers (each response carries
``Cache-Control: no-store``) and the exact body; every JSON-RPC body is also checked against the
official schema of its revision.  Tests that describe correct behaviour the server does not have
yet are ``xfail(strict=True)`` with the reason.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated

import pytest

import mcpkit
from mcpkit import (
    AdmissionRequest,
    Admitted,
    Arg,
    CorsPolicy,
    Limits,
    PromptMessage,
    PromptOutput,
    Rejected,
    RequestContext,
    ResourceOutput,
    Revision,
    Role,
    TextContent,
    TextResourceContents,
)
from mcpkit.errors import ConfigurationError, InvalidRequest
from mcpkit.server._http import HttpRequest
from mcpkit.testing import (
    TestClient,
    TestResponse,
    handshake_request,
    stateless_headers,
    stateless_request,
)
from mcpkit.transports._asgi import ASGIApp, Receive, Scope, Send

from ..wire import assert_valid

MODERN = "2026-07-28"
V1125 = "2025-11-25"
V0618 = "2025-06-18"
PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
INFO = "io.modelcontextprotocol/clientInfo"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"

PATH = "/mcp"  # 2026-07-28 only
DUAL = "/dual"  # 2026-07-28, 2025-11-25, 2025-06-18
NEWER = "/newer"  # 2026-07-28, 2025-11-25
ALL_SUPPORTED = [MODERN, V1125, V0618]

ALLOW = ("allow", "POST, OPTIONS")
NO_STORE = ("cache-control", "no-store")
LOCAL_ORIGIN = "http://localhost:3000"
CORS_HEADERS = (
    ("access-control-allow-origin", LOCAL_ORIGIN),
    ("vary", "Origin"),
    ("access-control-expose-headers", "WWW-Authenticate"),
)
BASE_ALLOWED_HEADERS = (
    "content-type, accept, authorization, mcp-protocol-version, mcp-method, mcp-name"
)

# The framework's fixed error texts.
PARSE = (-32700, "Parse error")
INVALID_REQUEST = (-32600, "Invalid Request")
NOT_FOUND = (-32601, "Method not found")
INVALID_PARAMS = (-32602, "Invalid params")
INTERNAL = (-32603, "Internal error")
MISMATCH = (-32020, "Header mismatch")
# The fixed explanations of a 404 (no endpoint at the path) and a 421 (a Host not allowed):
# written once, the same whatever the client sent.
NO_ENDPOINT = (
    b'{"jsonrpc":"2.0","error":{"code":-32600,"message":"No MCP endpoint at this path. An '
    b"endpoint answers at its declared path (such as /mcp); when the app is mounted under a "
    b'prefix, at the prefix followed by that path (/ai/mcp under /ai)."}}'
)
HOST_NOT_ALLOWED = (
    b'{"jsonrpc":"2.0","error":{"code":-32600,"message":"This Host header is not allowed; add '
    b"the name to allowed_hosts (or --allowed-host), or use the address and port the server "
    b'listens on."}}'
)


def named(header: str) -> dict[str, str]:
    """A header mismatch's ``data``: the header, by the server's lower-case name."""
    return {"header": header}


UNSUPPORTED = (-32022, "Unsupported protocol version")


# --- endpoints ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    text: str


@mcpkit.endpoint(path=PATH, name="pipeline", version="1.0.0", revisions={Revision.V2026_07_28})
class Modern:
    @mcpkit.tool(name="echo")
    def echo(self, text: str) -> Text:
        return Text(text)

    @mcpkit.tool(name="tenant.echo")
    def tenant(self, tenant: Annotated[str, Arg(header="Tenant")]) -> Text:
        return Text(tenant)

    @mcpkit.tool(name="whoami")
    def whoami(self, ctx: RequestContext) -> Text:
        return Text(repr(ctx.identity))

    @mcpkit.prompt(name="greet")
    def greet(self, who: str) -> PromptOutput:
        message = PromptMessage(role=Role.USER, content=TextContent(text=f"hi {who}"))
        return PromptOutput(messages=(message,))

    @mcpkit.resource(uri="mem://doc", name="doc")
    def doc(self) -> ResourceOutput:
        return ResourceOutput(contents=(TextResourceContents(uri="mem://doc", text="hello"),))


@mcpkit.endpoint(
    path=DUAL,
    name="dual",
    version="2.0.0",
    revisions={Revision.V2026_07_28, Revision.V2025_11_25, Revision.V2025_06_18},
)
class Dual:
    @mcpkit.tool(name="echo")
    def echo(self, text: str) -> Text:
        return Text(text)

    @mcpkit.tool(name="revision")
    def revision(self, ctx: RequestContext) -> Text:
        return Text(ctx.revision.wire)


@mcpkit.endpoint(
    path=NEWER,
    name="newer",
    version="3.0.0",
    revisions={Revision.V2026_07_28, Revision.V2025_11_25},
)
class Newer:
    @mcpkit.tool(name="echo")
    def echo(self, text: str) -> Text:
        return Text(text)


def server(**options: object) -> mcpkit.Server:
    return mcpkit.Server([Modern, Dual, Newer], **options)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(server()) as test_client:
        yield test_client


# --- expected responses ---------------------------------------------------------------------


def wire(value: object) -> bytes:
    """The compact JSON spelling the server writes (member order as given)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def rpc_error(
    error: tuple[int, str], id: str | int | None = 1, data: Mapping[str, object] | None = None
) -> bytes:
    """An error message; ``id=None`` leaves the member out (unreadable id)."""
    message: dict[str, object] = {"jsonrpc": "2.0"}
    if id is not None:
        message["id"] = id
    body: dict[str, object] = {"code": error[0], "message": error[1]}
    if data is not None:
        body["data"] = dict(data)
    message["error"] = body
    return wire(message)


def rpc_result(result: Mapping[str, object], id: str | int = 1) -> bytes:
    return wire({"jsonrpc": "2.0", "id": id, "result": dict(result)})


def modern_tool_result(text: str, server_name: str = "pipeline", version: str = "1.0.0") -> bytes:
    return rpc_result(
        {
            "content": [{"type": "text", "text": wire({"text": text}).decode()}],
            "structuredContent": {"text": text},
            "resultType": "complete",
            "_meta": {SERVER_INFO: {"name": server_name, "version": version}},
        }
    )


def legacy_tool_result(text: str) -> bytes:
    return rpc_result(
        {
            "content": [{"type": "text", "text": wire({"text": text}).decode()}],
            "structuredContent": {"text": text},
        }
    )


def expect(
    response: TestResponse,
    status: int,
    body: bytes = b"",
    *,
    headers: Sequence[tuple[str, str]] = (),
    revision: str = MODERN,
    method: str | None = None,
) -> None:
    """Exactly ``status``, ``body`` and these headers (order aside): ``Cache-Control:
    no-store`` and ``Content-Length`` on every response, ``Content-Type: application/json``
    with a body, plus ``headers``; a body is checked against ``revision``'s schema."""
    assert response.status == status, response.body
    assert response.body == body
    wanted = [NO_STORE, ("content-length", str(len(body))), *headers]
    if body:
        wanted.append(("content-type", "application/json"))
    assert sorted(response.headers) == sorted((name.lower(), value) for name, value in wanted)
    if body:
        assert_valid(revision, method, response.messages)


def tools_list_body(params: Mapping[str, object] | None = None) -> dict[str, object]:
    return stateless_request("tools/list", params)


def call_echo(text: str = "hi") -> dict[str, object]:
    return stateless_request("tools/call", {"name": "echo", "arguments": {"text": text}})


def plain_headers(**extra: str) -> list[tuple[str, str]]:
    """A complete header set for ``default_headers=False`` requests, minus what is left out
    by passing an empty string."""
    base = {
        "host": "127.0.0.1:8000",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        **stateless_headers("tools/list"),
    }
    merged = {name.lower(): value for name, value in base.items()}
    merged.update({name.replace("_", "-").lower(): value for name, value in extra.items()})
    return [(name, value) for name, value in merged.items() if value != ""]


def post_raw(
    client: TestClient, body: bytes, headers: Sequence[tuple[str, str]], path: str = PATH
) -> TestResponse:
    """Post with exactly ``headers`` plus a Content-Length."""
    return client.post(
        path,
        body,
        headers=[*headers, ("content-length", str(len(body)))],
        default_headers=False,
    )


# --- group 1: size --------------------------------------------------------------------------

LIMIT = 600


def padded(size: int) -> bytes:
    """A valid tools/list request padded with JSON whitespace to exactly ``size`` bytes."""
    body = wire(tools_list_body())
    assert len(body) <= size
    return body + b" " * (size - len(body))


@pytest.fixture(scope="module")
def small() -> Iterator[TestClient]:
    with TestClient(server(limits=Limits(max_request_bytes=LIMIT))) as test_client:
        yield test_client


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "streamed"])
def test_group1_a_body_at_the_limit_is_accepted(small: TestClient, declared: bool) -> None:
    body = padded(LIMIT)
    headers = plain_headers()
    if declared:
        headers.append(("content-length", str(LIMIT)))
    response = small.post(PATH, body, headers=headers, default_headers=False)
    assert response.status == 200
    assert NO_STORE in response.headers
    assert_valid(MODERN, "tools/list", response.messages)


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "streamed"])
def test_group1_a_body_one_byte_past_the_limit_is_413(small: TestClient, declared: bool) -> None:
    headers = plain_headers()
    if declared:
        headers.append(("content-length", str(LIMIT + 1)))
    response = small.post(PATH, padded(LIMIT + 1), headers=headers, default_headers=False)
    assert response.status == 413
    assert NO_STORE in response.headers


def test_group1_a_body_past_the_limit_gets_an_id_less_invalid_request(small: TestClient) -> None:
    response = small.post(PATH, padded(LIMIT + 1), headers=stateless_headers("tools/list"))
    expect(response, 413, rpc_error(INVALID_REQUEST, id=None))


def test_group1_size_comes_before_routing_and_host(small: TestClient) -> None:
    response = small.post("/nowhere", padded(LIMIT + 1), headers={"Host": "evil.example.com"})
    assert response.status == 413


# --- group 2: routing -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    ["/", "/nope", "/mcp/", "/MCP", "/Mcp", "/%6Dcp", "/mcp%2F", "//mcp", "/mcp/.", "/./mcp"],
)
def test_group2_only_the_exact_raw_path_routes(client: TestClient, path: str) -> None:
    response = client.post(path, tools_list_body(), headers=stateless_headers("tools/list"))
    expect(response, 404, NO_ENDPOINT)


def test_group2_the_query_string_is_not_part_of_the_path(client: TestClient) -> None:
    response = client.post(
        PATH + "?x=1", call_echo("q"), headers=stateless_headers("tools/call", "echo")
    )
    expect(response, 200, modern_tool_result("q"), method="tools/call")


def test_group2_routing_comes_before_host_and_method(client: TestClient) -> None:
    response = client.post("/nope", b"", method="GET", headers={"Host": "evil.example.com"})
    expect(response, 404, NO_ENDPOINT)


# --- group 3: Host --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:8000",
        "localhost:8000",
        "[::1]:8000",
        "127.0.0.1",
        "localhost",
        "[::1]",
        "LOCALHOST:8000",
        " localhost:8000 ",
    ],
)
def test_group3_loopback_hosts_with_the_listener_port_or_none(
    client: TestClient, host: str
) -> None:
    response = client.post(
        PATH, call_echo(), headers={**stateless_headers("tools/call", "echo"), "Host": host}
    )
    expect(response, 200, modern_tool_result("hi"), method="tools/call")


@pytest.mark.parametrize(
    "host",
    [
        "evil.example.com",
        "evil.example.com:8000",
        "localhost:9999",
        "127.0.0.1:80",
        "[::1]:8001",
        "127.0.0.2:8000",
        "localhost.evil.com:8000",
        "0.0.0.0:8000",
        "[::2]:8000",
    ],
)
def test_group3_other_hosts_and_port_mismatches_are_421(client: TestClient, host: str) -> None:
    response = client.post(
        PATH, tools_list_body(), headers={**stateless_headers("tools/list"), "Host": host}
    )
    expect(response, 421, HOST_NOT_ALLOWED)


@pytest.mark.parametrize(
    "host",
    [
        "",
        "local host",
        "127.0.0.1:",
        "127.0.0.1:abc",
        "localhost:80:80",
        "localhost:1234567",
        "[::1",
        "[::1]x",
        "[::1]:",
        "under_score",
        "évil.example.com",
    ],
)
def test_group3_malformed_hosts_are_400(client: TestClient, host: str) -> None:
    response = client.post(
        PATH, tools_list_body(), headers={**stateless_headers("tools/list"), "Host": host}
    )
    expect(response, 400)


@pytest.mark.parametrize("host", ["local host:8000", "under_score:8000", "a/b:8000"])
def test_group3_malformed_hosts_with_a_port_are_400(client: TestClient, host: str) -> None:
    response = client.post(
        PATH, tools_list_body(), headers={**stateless_headers("tools/list"), "Host": host}
    )
    expect(response, 400)


def test_group3_a_missing_host_is_400(client: TestClient) -> None:
    body = wire(tools_list_body())
    response = post_raw(client, body, plain_headers(host=""))
    expect(response, 400)


def test_group3_a_repeated_host_is_400(client: TestClient) -> None:
    body = wire(tools_list_body())
    headers = [*plain_headers(), ("host", "127.0.0.1:8000")]
    expect(post_raw(client, body, headers), 400)


def test_group3_forwarded_headers_never_authorize_a_host(client: TestClient) -> None:
    headers = {
        **stateless_headers("tools/list"),
        "Host": "evil.example.com",
        "X-Forwarded-Host": "localhost:8000",
        "Forwarded": "host=localhost:8000",
    }
    expect(client.post(PATH, tools_list_body(), headers=headers), 421, HOST_NOT_ALLOWED)


def test_group3_the_port_the_request_arrived_on_is_the_listener_port() -> None:
    """With an ephemeral port (0) the loopback aliases must name the port the transport
    reports (the TestClient's listener is 127.0.0.1:8000)."""
    with TestClient(server(port=0)) as test_client:
        arrived = test_client.post(
            PATH,
            call_echo(),
            headers={**stateless_headers("tools/call", "echo"), "Host": "localhost:8000"},
        )
        other = test_client.post(
            PATH,
            call_echo(),
            headers={**stateless_headers("tools/call", "echo"), "Host": "localhost:1234"},
        )
    expect(arrived, 200, modern_tool_result("hi"), method="tools/call")
    expect(other, 421, HOST_NOT_ALLOWED)


def without_server_address(app: ASGIApp) -> ASGIApp:
    """The app behind a host that does not report the listener address."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        await app({**scope, "server": None}, receive, send)

    return wrapped


@pytest.mark.parametrize("host", ["localhost:1234", "127.0.0.1:8000", "[::1]:65535"])
def test_group3_any_loopback_port_when_the_listener_port_is_unknown(host: str) -> None:
    app = without_server_address(server(port=0).asgi())
    with TestClient(app) as test_client:
        response = test_client.post(
            PATH, call_echo(), headers={**stateless_headers("tools/call", "echo"), "Host": host}
        )
    expect(response, 200, modern_tool_result("hi"), method="tools/call")


def test_group3_the_configured_port_applies_when_the_transport_reports_none() -> None:
    app = without_server_address(server(port=9000).asgi())
    with TestClient(app) as test_client:
        ok = test_client.post(
            PATH,
            call_echo(),
            headers={**stateless_headers("tools/call", "echo"), "Host": "localhost:9000"},
        )
        other = test_client.post(
            PATH,
            call_echo(),
            headers={**stateless_headers("tools/call", "echo"), "Host": "localhost:8000"},
        )
    expect(ok, 200, modern_tool_result("hi"), method="tools/call")
    expect(other, 421, HOST_NOT_ALLOWED)


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("mcp.example.com", 200),
        ("mcp.example.com:443", 200),
        ("mcp.example.com:8000", 200),
        ("MCP.Example.COM", 200),
        ("127.0.0.1:8000", 200),
        ("other.example.com", 421),
        ("example.com", 421),
        ("mcp.example.com.evil.net", 421),
    ],
)
def test_group3_allowed_hosts_accept_any_port_or_none(host: str, status: int) -> None:
    with TestClient(server(allowed_hosts=["mcp.example.com"])) as test_client:
        response = test_client.post(
            PATH, call_echo(), headers={**stateless_headers("tools/call", "echo"), "Host": host}
        )
    if status == 200:
        expect(response, 200, modern_tool_result("hi"), method="tools/call")
    else:
        expect(response, status, HOST_NOT_ALLOWED)


def test_group3_allowed_hosts_compare_case_insensitively() -> None:
    with TestClient(server(allowed_hosts=["MCP.Example.com"])) as test_client:
        response = test_client.post(
            PATH,
            call_echo(),
            headers={**stateless_headers("tools/call", "echo"), "Host": "mcp.example.com"},
        )
    expect(response, 200, modern_tool_result("hi"), method="tools/call")


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "example.com"])
def test_group3_a_non_loopback_bind_without_allowed_hosts_fails(host: str) -> None:
    with pytest.raises(ConfigurationError, match="allowed_hosts"):
        server(host=host)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1"])
def test_group3_loopback_binds_need_no_allowed_hosts(host: str) -> None:
    assert server(host=host).host == host


def test_group3_a_non_loopback_bind_with_allowed_hosts_builds() -> None:
    assert server(host="0.0.0.0", allowed_hosts=["mcp.example.com"]).host == "0.0.0.0"


def test_group3_host_comes_before_origin_and_method(client: TestClient) -> None:
    headers = {"Host": "evil.example.com", "Origin": "http://evil.example.com"}
    expect(client.post(PATH, b"", method="GET", headers=headers), 421, HOST_NOT_ALLOWED)


# --- group 3: Origin and CORS ---------------------------------------------------------------


@pytest.fixture(scope="module")
def cors_client() -> Iterator[TestClient]:
    with TestClient(server(cors=CorsPolicy.loopback())) as test_client:
        yield test_client


def test_group3_an_absent_origin_is_allowed(client: TestClient) -> None:
    response = client.post(PATH, call_echo(), headers=stateless_headers("tools/call", "echo"))
    expect(response, 200, modern_tool_result("hi"), method="tools/call")


@pytest.mark.parametrize("origin", [LOCAL_ORIGIN, "http://evil.example.com", "null"])
def test_group3_any_origin_without_a_cors_policy_is_403(client: TestClient, origin: str) -> None:
    headers = {**stateless_headers("tools/call", "echo"), "Origin": origin}
    expect(client.post(PATH, call_echo(), headers=headers), 403)


def test_group3_an_allowed_origin_gets_the_cors_headers(cors_client: TestClient) -> None:
    headers = {**stateless_headers("tools/call", "echo"), "Origin": LOCAL_ORIGIN}
    response = cors_client.post(PATH, call_echo(), headers=headers)
    expect(response, 200, modern_tool_result("hi"), headers=CORS_HEADERS, method="tools/call")


def test_group3_an_allowed_origin_keeps_the_cors_headers_on_errors(
    cors_client: TestClient,
) -> None:
    headers = {**stateless_headers("tools/list"), "Origin": LOCAL_ORIGIN, "Mcp-Method": "nope"}
    response = cors_client.post(PATH, tools_list_body(), headers=headers)
    expect(response, 400, rpc_error(MISMATCH, data=named("mcp-method")), headers=CORS_HEADERS)
    headers = {
        **stateless_headers("tools/list"),
        "Origin": LOCAL_ORIGIN,
        "Content-Type": "text/plain",
    }
    expect(cors_client.post(PATH, tools_list_body(), headers=headers), 415, headers=CORS_HEADERS)


@pytest.mark.parametrize(
    "origin",
    ["http://evil.example.com", "http://localhost.evil.com", "null", "http://localhost:3000/"],
)
def test_group3_the_loopback_policy_refuses_other_origins(
    cors_client: TestClient, origin: str
) -> None:
    headers = {**stateless_headers("tools/call", "echo"), "Origin": origin}
    expect(cors_client.post(PATH, call_echo(), headers=headers), 403)


def test_group3_the_policy_gets_the_exact_origin_and_request() -> None:
    seen: list[tuple[str, HttpRequest]] = []

    def allow(origin: str, request: HttpRequest) -> bool:
        seen.append((origin, request))
        return True

    headers = {**stateless_headers("tools/call", "echo"), "Origin": "https://app.example"}
    with TestClient(server(cors=CorsPolicy(allow))) as test_client:
        test_client.post(PATH, call_echo(), headers=headers)
    [(origin, request)] = seen
    assert origin == "https://app.example"
    assert request.method == "POST"
    assert request.raw_path == PATH
    assert ("origin", "https://app.example") in request.headers
    assert request.body == wire(call_echo())


@pytest.mark.parametrize("answer", [1, "yes", None, object()], ids=["one", "str", "none", "object"])
def test_group3_a_policy_answering_anything_but_true_refuses(answer: object) -> None:
    policy = CorsPolicy(lambda _origin, _request: answer)  # type: ignore[arg-type,return-value]
    headers = {**stateless_headers("tools/call", "echo"), "Origin": LOCAL_ORIGIN}
    with TestClient(server(cors=policy)) as test_client:
        expect(test_client.post(PATH, call_echo(), headers=headers), 403)


def test_group3_a_policy_that_raises_refuses() -> None:
    def allow(origin: str, request: HttpRequest) -> bool:
        raise RuntimeError("policy broke")

    headers = {**stateless_headers("tools/call", "echo"), "Origin": LOCAL_ORIGIN}
    with TestClient(server(cors=CorsPolicy(allow))) as test_client:
        expect(test_client.post(PATH, call_echo(), headers=headers), 403)
        preflight = {"Origin": LOCAL_ORIGIN, "Access-Control-Request-Method": "POST"}
        expect(test_client.post(PATH, b"", method="OPTIONS", headers=preflight), 403)


# --- group 3: preflight ---------------------------------------------------------------------

PREFLIGHT = {
    "Origin": LOCAL_ORIGIN,
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "content-type, mcp-method, mcp-param-tenant",
}
PREFLIGHT_HEADERS = (
    NO_STORE,
    *CORS_HEADERS,
    ("access-control-allow-methods", "POST"),
    ("access-control-allow-headers", BASE_ALLOWED_HEADERS + ", mcp-param-tenant"),
    ("access-control-max-age", "600"),
)


def test_group3_mh_21_an_allowed_preflight_lists_the_registered_mirror_headers(
    cors_client: TestClient,
) -> None:
    """The preflight allows the protocol headers, Authorization and the registered
    ``Mcp-Param-Tenant`` of ``tenant.echo`` (MH-21)."""
    response = cors_client.post(PATH, b"", method="OPTIONS", headers=PREFLIGHT)
    assert response.status == 204
    assert response.body == b""
    others = [pair for pair in response.headers if pair[0] != "content-length"]
    assert sorted(others) == sorted(PREFLIGHT_HEADERS)


def test_group3_a_preflight_of_an_endpoint_without_mirrors_lists_only_the_protocol_headers(
    cors_client: TestClient,
) -> None:
    response = cors_client.post(DUAL, b"", method="OPTIONS", headers=PREFLIGHT)
    assert response.status == 204
    assert response.header("access-control-allow-headers") == BASE_ALLOWED_HEADERS


def test_group3_a_preflight_204_has_no_content_length(cors_client: TestClient) -> None:
    response = cors_client.post(PATH, b"", method="OPTIONS", headers=PREFLIGHT)
    assert response.status == 204
    assert response.header("content-length") is None


def test_group3_a_refused_preflight_is_403(cors_client: TestClient) -> None:
    headers = {**PREFLIGHT, "Origin": "http://evil.example.com"}
    expect(cors_client.post(PATH, b"", method="OPTIONS", headers=headers), 403)


def test_group3_a_preflight_without_a_cors_policy_is_403(client: TestClient) -> None:
    expect(client.post(PATH, b"", method="OPTIONS", headers=PREFLIGHT), 403)


def test_group3_options_without_origin_is_405(cors_client: TestClient) -> None:
    response = cors_client.post(PATH, b"", method="OPTIONS", headers={})
    expect(response, 405, headers=[ALLOW])


# --- group 4: method and media types --------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT", "PATCH", "HEAD"])
def test_group4_er_16_only_post_is_served(client: TestClient, method: str) -> None:
    """GET and DELETE on a session-less endpoint are 405 (ER-16)."""
    response = client.post(PATH, b"", method=method, headers=stateless_headers("tools/list"))
    expect(response, 405, headers=[ALLOW])
    response = client.post(DUAL, b"", method=method, headers={"Accept": "text/event-stream"})
    expect(response, 405, headers=[ALLOW])


def test_group4_a_missing_content_type_is_415(client: TestClient) -> None:
    response = post_raw(client, wire(tools_list_body()), plain_headers(content_type=""))
    expect(response, 415)


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/jsonx", "application/x-www-form-urlencoded", "json"]
)
def test_group4_other_content_types_are_415(client: TestClient, content_type: str) -> None:
    headers = {**stateless_headers("tools/list"), "Content-Type": content_type}
    expect(client.post(PATH, tools_list_body(), headers=headers), 415)


@pytest.mark.parametrize(
    "content_type", ["application/json; charset=utf-8", "Application/JSON", "application/json;x=y"]
)
def test_group4_application_json_with_parameters_is_accepted(
    client: TestClient, content_type: str
) -> None:
    headers = {**stateless_headers("tools/call", "echo"), "Content-Type": content_type}
    response = client.post(PATH, call_echo(), headers=headers)
    expect(response, 200, modern_tool_result("hi"), method="tools/call")


def test_group4_a_missing_accept_is_406(client: TestClient) -> None:
    response = post_raw(client, wire(tools_list_body()), plain_headers(accept=""))
    expect(response, 406)


@pytest.mark.parametrize(
    "accept", ["application/json", "text/event-stream", "text/html", "application/json;q=0, */*"]
)
def test_group4_an_accept_without_both_types_is_406(client: TestClient, accept: str) -> None:
    headers = {**stateless_headers("tools/list"), "Accept": accept}
    expect(client.post(PATH, tools_list_body(), headers=headers), 406)


@pytest.mark.parametrize(
    "accept", ["*/*", "application/*, text/*", "text/event-stream, application/json"]
)
def test_group4_accept_wildcards_covering_both_are_accepted(
    client: TestClient, accept: str
) -> None:
    headers = {**stateless_headers("tools/call", "echo"), "Accept": accept}
    response = client.post(PATH, call_echo(), headers=headers)
    expect(response, 200, modern_tool_result("hi"), method="tools/call")


def test_group4_method_then_content_type_then_accept(client: TestClient) -> None:
    bad = {"Content-Type": "text/plain", "Accept": "text/html"}
    expect(client.post(PATH, b"{", method="PUT", headers=bad), 405, headers=[ALLOW])
    expect(client.post(PATH, b"{", headers=bad), 415)
    expect(client.post(PATH, b"{", headers={"Accept": "text/html"}), 406)


# --- groups 5-6: strict JSON and the envelope -----------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"{",
        b"not json",
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list",}',
        b'{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}',
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"a":1,"a":1}}',
        b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
        b'{"jsonrpc":"2.0","id":01,"method":"tools/list"}',
        b'{"jsonrpc":"2.0","id":NaN,"method":"tools/list"}',
        b'{"jsonrpc":"2.0","id":"\xff","method":"tools/list"}',
        b'{"jsonrpc":"2.0","id":"\\ud800","method":"tools/list"}',
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list"} {}',
    ],
    ids=[
        "empty",
        "open",
        "text",
        "trailing-comma",
        "duplicate-id",
        "duplicate-param",
        "bom",
        "leading-zero",
        "nan",
        "bad-utf8",
        "lone-surrogate",
        "two-values",
    ],
)
def test_group5_er_01_strict_json_failures_are_400_parse_error(
    client: TestClient, body: bytes
) -> None:
    """Unparseable JSON, duplicate members and the codec's other refusals are 400 / -32700 with
    no id (ER-01)."""
    response = client.post(PATH, body, headers=stateless_headers("tools/list"))
    expect(response, 400, rpc_error(PARSE, id=None))


def nested(depth: int) -> bytes:
    """A tools/list request whose total JSON depth is ``depth`` (the root object is 1)."""
    meta = wire({PV: MODERN, CAPS: {}})
    inner = depth - 2  # the root and params objects
    return (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":'
        + meta
        + b',"x":'
        + b"[" * inner
        + b"]" * inner
        + b"}}"
    )


def test_group5_json_depth_at_the_limit_is_read_and_one_past_is_a_parse_error(
    client: TestClient,
) -> None:
    """JL-03: depth 128 is read; 129 is 400 / -32700."""
    response = client.post(PATH, nested(128), headers=stateless_headers("tools/list"))
    assert response.status == 200
    assert_valid(MODERN, "tools/list", response.messages)
    response = client.post(PATH, nested(129), headers=stateless_headers("tools/list"))
    expect(response, 400, rpc_error(PARSE, id=None))


def test_group5_a_configured_depth_limit_applies() -> None:
    with TestClient(server(limits=Limits(max_json_depth=8))) as test_client:
        ok = test_client.post(PATH, nested(8), headers=stateless_headers("tools/list"))
        refused = test_client.post(PATH, nested(9), headers=stateless_headers("tools/list"))
    assert ok.status == 200
    expect(refused, 400, rpc_error(PARSE, id=None))


@pytest.mark.parametrize(
    "body",
    [
        b"[]",
        b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]',
        b"42",
        b'"tools/list"',
        b"null",
        b"true",
    ],
    ids=["empty-batch", "batch", "number", "string", "null", "bool"],
)
def test_group6_er_05_a_batch_or_non_object_is_400_invalid_request_without_id(
    client: TestClient, body: bytes
) -> None:
    """No batches in any revision; ER-05."""
    response = client.post(PATH, body, headers=stateless_headers("tools/list"))
    expect(response, 400, rpc_error(INVALID_REQUEST, id=None))


@pytest.mark.parametrize(
    ("message", "echoed"),
    [
        ({"jsonrpc": "1.0", "id": 7, "method": "tools/list"}, 7),
        ({"jsonrpc": 2.0, "id": 7, "method": "tools/list"}, 7),
        ({"id": "seven", "method": "tools/list"}, "seven"),
        ({"jsonrpc": "2.0", "id": 7, "method": ""}, 7),
        ({"jsonrpc": "2.0", "id": 7, "method": 5}, 7),
        ({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": []}, 7),
        ({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": None}, 7),
        ({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "extra": 1}, 7),
        ({"jsonrpc": "2.0", "id": 7, "result": {}, "error": {"code": 1, "message": "x"}}, 7),
        ({"jsonrpc": "2.0", "id": 7}, 7),
        ({"jsonrpc": "2.0", "id": None, "method": "tools/list"}, None),
        ({"jsonrpc": "2.0", "id": True, "method": "tools/list"}, None),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}, None),
        ({"jsonrpc": "2.0", "id": [1], "method": "tools/list"}, None),
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}, None),
        ({"jsonrpc": "2.0", "id": False, "result": {}}, None),
        ({"jsonrpc": "2.0", "result": {}}, None),
    ],
)
def test_group6_er_05_a_malformed_envelope_echoes_a_readable_id(
    client: TestClient, message: dict[str, object], echoed: str | int | None
) -> None:
    """-32600 keeps a readable string or integer id (with its type) and omits any other."""
    response = client.post(PATH, message, headers=stateless_headers("tools/list"))
    expect(response, 400, rpc_error(INVALID_REQUEST, id=echoed))


def test_group6_a_float_spelled_integer_id_is_not_readable(client: TestClient) -> None:
    body = b'{"jsonrpc":"2.0","id":1.0,"method":"tools/list"}'
    response = client.post(PATH, body, headers=stateless_headers("tools/list"))
    expect(response, 400, rpc_error(INVALID_REQUEST, id=None))


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        {"jsonrpc": "2.0", "id": "a", "result": {"x": 1}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "no"}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -1, "message": "no"}},
    ],
)
@pytest.mark.parametrize("path", [PATH, DUAL])
def test_group6_a_response_from_the_client_is_202_and_ignored(
    client: TestClient, message: dict[str, object], path: str
) -> None:
    expect(client.post(path, message, headers={}), 202)


def test_group5_json_comes_before_the_routing_headers(client: TestClient) -> None:
    expect(client.post(PATH, b"{", headers={}), 400, rpc_error(PARSE, id=None))
    expect(client.post(PATH, b"[]", headers={}), 400, rpc_error(INVALID_REQUEST, id=None))


# --- groups 7-9 on 2026-07-28 ---------------------------------------------------------------


def modern(
    client: TestClient,
    body: Mapping[str, object],
    *,
    path: str = PATH,
    drop: Sequence[str] = (),
    **headers: str,
) -> TestResponse:
    """Post ``body`` with the headers a 2026 client sends for its method and target, changed by
    ``headers`` (``Mcp_Name="x"`` sets ``Mcp-Name``) and without the names in ``drop``."""
    method = str(body.get("method"))
    params = body.get("params")
    name = None
    if isinstance(params, Mapping):
        target = params.get("uri" if method == "resources/read" else "name")
        name = target if isinstance(target, str) else None
    sent = stateless_headers(method, name)
    sent.update({key.replace("_", "-"): value for key, value in headers.items()})
    for header in drop:
        sent.pop(header)
    return client.post(path, body, headers=sent)


def test_group7_the_headers_agree_and_the_request_is_answered(client: TestClient) -> None:
    expect(modern(client, call_echo("x")), 200, modern_tool_result("x"), method="tools/call")


def test_group7_er_08_a_missing_mcp_method_is_400_header_mismatch(client: TestClient) -> None:
    response = modern(client, tools_list_body(), drop=["Mcp-Method"])
    expect(response, 400, rpc_error(MISMATCH, data=named("mcp-method")))


@pytest.mark.parametrize("value", ["TOOLS/LIST", "Tools/List", "tools/call", "tools/list/", ""])
def test_group7_mcp_method_must_equal_the_method_case_sensitively(
    client: TestClient, value: str
) -> None:
    expect(
        modern(client, tools_list_body(), Mcp_Method=value),
        400,
        rpc_error(MISMATCH, data=named("mcp-method")),
    )


def test_group7_mcp_method_whitespace_is_trimmed(client: TestClient) -> None:
    response = modern(client, call_echo(), Mcp_Method="  tools/call\t")
    expect(response, 200, modern_tool_result("hi"), method="tools/call")


def test_group7_a_repeated_mcp_method_is_a_header_mismatch(client: TestClient) -> None:
    headers = [*stateless_headers("tools/list").items(), ("Mcp-Method", "tools/list")]
    expect(
        client.post(PATH, tools_list_body(), headers=headers),
        400,
        rpc_error(MISMATCH, data=named("mcp-method")),
    )


NAMED = [
    stateless_request("tools/call", {"name": "echo", "arguments": {"text": "hi"}}),
    stateless_request("prompts/get", {"name": "greet", "arguments": {"who": "ann"}}),
    stateless_request("resources/read", {"uri": "mem://doc"}),
]
NAMED_RESULTS = [
    modern_tool_result("hi"),
    rpc_result(
        {
            "messages": [{"role": "user", "content": {"type": "text", "text": "hi ann"}}],
            "resultType": "complete",
            "_meta": {SERVER_INFO: {"name": "pipeline", "version": "1.0.0"}},
        }
    ),
    rpc_result(
        {
            "contents": [{"uri": "mem://doc", "text": "hello"}],
            "resultType": "complete",
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {SERVER_INFO: {"name": "pipeline", "version": "1.0.0"}},
        }
    ),
]
NAMED_IDS = ["tools/call", "prompts/get", "resources/read"]


@pytest.mark.parametrize(
    ("body", "result"), list(zip(NAMED, NAMED_RESULTS, strict=True)), ids=NAMED_IDS
)
def test_group7_named_methods_answer_with_a_matching_mcp_name(
    client: TestClient, body: dict[str, object], result: bytes
) -> None:
    expect(modern(client, body), 200, result, method=str(body["method"]))


@pytest.mark.parametrize("body", NAMED, ids=NAMED_IDS)
def test_group7_named_methods_without_mcp_name_are_400(
    client: TestClient, body: dict[str, object]
) -> None:
    expect(
        modern(client, body, drop=["Mcp-Name"]), 400, rpc_error(MISMATCH, data=named("mcp-name"))
    )


@pytest.mark.parametrize("body", NAMED, ids=NAMED_IDS)
@pytest.mark.parametrize("value", ["other", "ECHO", "=?base64?b3RoZXI=?=", "=?base64?!!?="])
def test_group7_named_methods_with_another_or_undecodable_mcp_name_are_400(
    client: TestClient, body: dict[str, object], value: str
) -> None:
    expect(modern(client, body, Mcp_Name=value), 400, rpc_error(MISMATCH, data=named("mcp-name")))


@pytest.mark.parametrize(
    ("body", "result", "value"),
    [
        (NAMED[0], NAMED_RESULTS[0], "=?base64?ZWNobw==?="),
        (NAMED[0], NAMED_RESULTS[0], "  echo\t"),
        (NAMED[1], NAMED_RESULTS[1], "=?base64?Z3JlZXQ=?="),
        (NAMED[1], NAMED_RESULTS[1], " greet "),
        (NAMED[2], NAMED_RESULTS[2], "=?base64?bWVtOi8vZG9j?="),
        (NAMED[2], NAMED_RESULTS[2], "\tmem://doc "),
    ],
)
def test_group7_mcp_name_may_be_base64_and_whitespace_is_trimmed(
    client: TestClient, body: dict[str, object], result: bytes, value: str
) -> None:
    expect(modern(client, body, Mcp_Name=value), 200, result, method=str(body["method"]))


@pytest.mark.parametrize("method", ["tools/list", "prompts/list", "server/discover"])
def test_group7_mcp_name_on_an_unnamed_method_is_400(client: TestClient, method: str) -> None:
    response = modern(client, stateless_request(method), Mcp_Name="echo")
    expect(response, 400, rpc_error(MISMATCH, data=named("mcp-name")))


def meta_request(meta: Mapping[str, object], method: str = "tools/list") -> dict[str, object]:
    """A request with exactly this ``_meta`` (no defaults added)."""
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"_meta": dict(meta)}}


@pytest.mark.parametrize(
    "body",
    [
        meta_request({CAPS: {}}),
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        meta_request({PV: 20260728, CAPS: {}}),
        meta_request({PV: MODERN}),
        meta_request({PV: MODERN, CAPS: []}),
        meta_request({PV: MODERN, CAPS: {}, INFO: {"name": "c"}}),
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": "x"}},
    ],
    ids=[
        "no-version",
        "no-params",
        "no-meta",
        "version-not-str",
        "no-capabilities",
        "capabilities-not-object",
        "client-info-without-version",
        "meta-not-object",
    ],
)
def test_group9_missing_or_malformed_required_meta_is_400_invalid_params(
    client: TestClient, body: dict[str, object]
) -> None:
    """2026-07-28 requires ``protocolVersion`` and ``clientCapabilities`` in ``_meta``
    : 400 / -32602."""
    expect(modern(client, body), 400, rpc_error(INVALID_PARAMS))


def test_group9_client_info_is_optional(client: TestClient) -> None:
    without = modern(client, call_echo())
    expect(without, 200, modern_tool_result("hi"), method="tools/call")
    body = stateless_request(
        "tools/call",
        {
            "name": "echo",
            "arguments": {"text": "hi"},
            "_meta": {INFO: {"name": "c", "version": "1"}},
        },
    )
    expect(modern(client, body), 200, modern_tool_result("hi"), method="tools/call")


def test_group8_a_missing_version_header_is_400_header_mismatch(client: TestClient) -> None:
    response = modern(client, tools_list_body(), drop=["MCP-Protocol-Version"])
    expect(response, 400, rpc_error(MISMATCH, data=named("mcp-protocol-version")))


def test_group8_a_header_body_version_mismatch_is_header_mismatch_before_unsupported(
    client: TestClient,
) -> None:
    """Header 2026-07-28 with body v999 is -32020, not -32022 (step 8)."""
    response = modern(client, stateless_request("tools/list", version="v999"))
    expect(response, 400, rpc_error(MISMATCH, data=named("mcp-protocol-version")))
    response = modern(client, tools_list_body(), MCP_Protocol_Version="v999")
    expect(response, 400, rpc_error(MISMATCH, data=named("mcp-protocol-version")))


def test_group9_missing_capabilities_come_before_a_version_mismatch(client: TestClient) -> None:
    """Missing ``_meta`` fields are -32602 first (docs/design/server.md §1.5)."""
    response = modern(client, meta_request({PV: "v999"}))
    expect(response, 400, rpc_error(INVALID_PARAMS))
    response = modern(client, meta_request({PV: "v999"}), MCP_Protocol_Version="v999")
    expect(response, 400, rpc_error(INVALID_PARAMS))


@pytest.mark.parametrize(
    ("path", "supported"),
    [(PATH, [MODERN]), (DUAL, ALL_SUPPORTED), (NEWER, [MODERN, V1125])],
)
def test_group8_an_unsupported_version_in_both_is_400_unsupported(
    client: TestClient, path: str, supported: list[str]
) -> None:
    """-32022 names the served versions newest first and echoes the requested one."""
    body = stateless_request("tools/list", version="v999")
    response = modern(client, body, path=path, MCP_Protocol_Version="v999")
    data = {"supported": supported, "requested": "v999"}
    expect(response, 400, rpc_error(UNSUPPORTED, data=data))


def test_group8_a_2025_version_in_both_on_the_modern_path_is_unsupported(
    client: TestClient,
) -> None:
    """A request carrying 2026 _meta rules but naming a 2025 revision at a 2026-only URL."""
    body = stateless_request("tools/list", version=V1125)
    response = modern(client, body, MCP_Protocol_Version=V1125)
    data = {"supported": [MODERN], "requested": V1125}
    expect(response, 400, rpc_error(UNSUPPORTED, data=data))


def test_group8_a_long_requested_version_is_not_echoed(client: TestClient) -> None:
    version = "v" * 65
    body = stateless_request("tools/list", version=version)
    response = modern(client, body, MCP_Protocol_Version=version)
    expect(response, 400, rpc_error(UNSUPPORTED, data={"supported": [MODERN]}))


def test_group7_the_routing_headers_come_before_the_version(client: TestClient) -> None:
    body = stateless_request("tools/list", version="v999")
    response = modern(client, body, MCP_Protocol_Version="v999", Mcp_Method="nope")
    expect(response, 400, rpc_error(MISMATCH, data=named("mcp-method")))


@pytest.mark.parametrize(
    "method",
    ["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"],
)
@pytest.mark.parametrize("path", [PATH, DUAL])
def test_group9_removed_methods_on_2026_are_404_method_not_found(
    client: TestClient, method: str, path: str
) -> None:
    params = {"level": "info"} if method == "logging/setLevel" else None
    if method.startswith("resources/"):
        params = {"uri": "mem://doc"}
    response = modern(client, stateless_request(method, params), path=path)
    expect(response, 404, rpc_error(NOT_FOUND))


@pytest.mark.parametrize("method", ["nope", "tools/nope", "prompts/list", "resources/list"])
def test_group9_unknown_or_unadvertised_methods_on_2026_are_404(
    client: TestClient, method: str
) -> None:
    """The dual endpoint has only tools: its prompt and resource lists are un-advertised."""
    response = modern(client, stateless_request(method), path=DUAL)
    expect(response, 404, rpc_error(NOT_FOUND))


@pytest.mark.parametrize("method", ["notifications/initialized", "notifications/whatever"])
def test_group9_a_2026_notification_is_202_empty(client: TestClient, method: str) -> None:
    response = modern(client, stateless_request(method, id=None))
    expect(response, 202)


def test_group9_a_notification_with_an_unsupported_version_header_is_400_empty(
    client: TestClient,
) -> None:
    """unsupported selector on a notification, 400 with no body."""
    body = stateless_request("notifications/whatever", id=None, version="v999")
    expect(modern(client, body, MCP_Protocol_Version="v999"), 400)


def test_group9_string_ids_keep_their_type(client: TestClient) -> None:
    body = {**call_echo(), "id": "1"}
    response = modern(client, body, Mcp_Method="nope")
    expect(response, 400, rpc_error(MISMATCH, data=named("mcp-method"), id="1"))
    response = modern(client, body)
    assert json.loads(response.body)["id"] == "1"


def test_mh_20_a_missing_mirror_header_is_400_header_mismatch(client: TestClient) -> None:
    """MH-02 / MH-20 / MH-18: the mirrored ``Mcp-Param-Tenant`` must be present and agree; any
    failure is the fixed 400 / -32020 "Header mismatch"."""
    body = stateless_request("tools/call", {"name": "tenant.echo", "arguments": {"tenant": "acme"}})
    expect(modern(client, body), 400, rpc_error(MISMATCH, data=named("mcp-param-tenant")))
    response = modern(client, body, Mcp_Param_Tenant="acme")
    expect(response, 200, modern_tool_result("acme"), method="tools/call")
    expect(
        modern(client, body, Mcp_Param_Tenant="other"),
        400,
        rpc_error(MISMATCH, data=named("mcp-param-tenant")),
    )


@pytest.mark.parametrize("arguments", [{}, {"tenant": None}], ids=["absent", "null"])
def test_mh_03_a_mirror_header_never_supplies_a_missing_argument(
    client: TestClient, arguments: dict[str, object]
) -> None:
    """MH-03: the header alone is no argument; it disagrees with the body and the handler never
    runs."""
    body = stateless_request("tools/call", {"name": "tenant.echo", "arguments": arguments})
    expect(
        modern(client, body, Mcp_Param_Tenant="acme"),
        400,
        rpc_error(MISMATCH, data=named("mcp-param-tenant")),
    )


# --- 2025 revisions (legacy, stateless) -----------------------------------------------------


def initialize(version: object, **params: object) -> dict[str, object]:
    return handshake_request(
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "client", "version": "1.0"},
            **params,
        },
    )


def initialize_result(version: str, name: str = "dual", server_version: str = "2.0.0") -> bytes:
    return rpc_result(
        {
            "protocolVersion": version,
            "capabilities": {"tools": {}, "logging": {}},
            "serverInfo": {"name": name, "version": server_version},
        }
    )


@pytest.mark.parametrize("version", [V0618, V1125])
def test_legacy_initialize_echoes_a_served_requested_version(
    client: TestClient, version: str
) -> None:
    response = client.post(DUAL, initialize(version))
    expect(response, 200, initialize_result(version), revision=version, method="initialize")


@pytest.mark.parametrize("version", ["1999-01-01", "2025-03-26", MODERN, 20250618, None])
def test_legacy_initialize_with_another_version_gets_the_newest_2025(
    client: TestClient, version: object
) -> None:
    response = client.post(DUAL, initialize(version))
    expect(response, 200, initialize_result(V1125), revision=V1125, method="initialize")


def test_legacy_initialize_below_the_served_versions_negotiates_down_to_served(
    client: TestClient,
) -> None:
    response = client.post(NEWER, initialize(V0618))
    expected = initialize_result(V1125, "newer", "3.0.0")
    expect(response, 200, expected, revision=V1125, method="initialize")


def test_legacy_initialize_tolerates_a_version_header(client: TestClient) -> None:
    response = client.post(DUAL, initialize(V0618), headers={"MCP-Protocol-Version": V0618})
    expect(response, 200, initialize_result(V0618), revision=V0618, method="initialize")


@pytest.mark.parametrize("meta", [MODERN, {PV: 20260728}])
def test_legacy_a_modern_version_string_outside_a_meta_object_does_not_pick_the_modern_path(
    client: TestClient, meta: object
) -> None:
    # Only ``_meta.protocolVersion`` as a string counts: a bare ``_meta`` string or a number
    # leaves the request on the legacy path, where the malformed ``_meta`` is refused in 200.
    response = client.post(DUAL, initialize(V1125, _meta=meta))
    expect(response, 200, rpc_error(INVALID_PARAMS), revision=V1125, method="initialize")


def test_legacy_initialize_ignores_and_never_mints_a_session_id(client: TestClient) -> None:
    response = client.post(DUAL, initialize(V1125), headers={"Mcp-Session-Id": "abc"})
    expect(response, 200, initialize_result(V1125), revision=V1125, method="initialize")
    assert response.header("mcp-session-id") is None


def test_legacy_notifications_initialized_is_202(client: TestClient) -> None:
    response = client.post(DUAL, handshake_request("notifications/initialized", id=None))
    expect(response, 202)
    headers = {"MCP-Protocol-Version": V0618}
    body = handshake_request("notifications/initialized", id=None)
    expect(client.post(DUAL, body, headers=headers), 202)


@pytest.mark.parametrize("version", [V0618, V1125])
def test_legacy_ping_is_an_empty_result(client: TestClient, version: str) -> None:
    response = client.post(
        DUAL, handshake_request("ping"), headers={"MCP-Protocol-Version": version}
    )
    expect(response, 200, rpc_result({}), revision=version, method="ping")


@pytest.mark.parametrize(("header", "revision"), [(None, V1125), (V0618, V0618), (V1125, V1125)])
def test_legacy_the_version_header_selects_the_revision(
    client: TestClient, header: str | None, revision: str
) -> None:
    """Without the header a stateless 2025 request is served on the newest 2025 revision."""
    headers = {} if header is None else {"MCP-Protocol-Version": header}
    body = handshake_request("tools/call", {"name": "revision", "arguments": {}})
    response = client.post(DUAL, body, headers=headers)
    expect(response, 200, legacy_tool_result(revision), revision=revision, method="tools/call")


def test_legacy_a_known_but_unserved_2025_version_header_is_400_unsupported(
    client: TestClient,
) -> None:
    body = handshake_request("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    response = client.post(NEWER, body, headers={"MCP-Protocol-Version": V0618})
    data = {"supported": [MODERN, V1125], "requested": V0618}
    expect(response, 400, rpc_error(UNSUPPORTED, data=data), revision=V1125)


@pytest.mark.parametrize("version", ["2024-11-05", "banana"])
def test_legacy_an_unknown_version_header_is_400_unsupported(
    client: TestClient, version: str
) -> None:
    body = handshake_request("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    response = client.post(DUAL, body, headers={"MCP-Protocol-Version": version})
    data = {"supported": ALL_SUPPORTED, "requested": version}
    expect(response, 400, rpc_error(UNSUPPORTED, data=data), revision=V1125)


@pytest.mark.parametrize("level", ["debug", "info", "emergency"])
def test_legacy_logging_set_level_is_an_empty_result(client: TestClient, level: str) -> None:
    body = handshake_request("logging/setLevel", {"level": level})
    response = client.post(DUAL, body, headers={"MCP-Protocol-Version": V0618})
    expect(response, 200, rpc_result({}), revision=V0618, method="logging/setLevel")


@pytest.mark.parametrize("params", [{"level": "DEBUG"}, {"level": "verbose"}, {"level": 3}, {}])
def test_legacy_an_invalid_log_level_is_invalid_params_in_200(
    client: TestClient, params: dict[str, object]
) -> None:
    response = client.post(DUAL, handshake_request("logging/setLevel", params))
    expect(response, 200, rpc_error(INVALID_PARAMS), revision=V1125)


@pytest.mark.parametrize("method", ["nope", "server/discover", "prompts/list"])
def test_legacy_an_unknown_method_is_method_not_found_in_200(
    client: TestClient, method: str
) -> None:
    response = client.post(DUAL, handshake_request(method), headers={"MCP-Protocol-Version": V0618})
    expect(response, 200, rpc_error(NOT_FOUND), revision=V0618)


def test_legacy_er_04_an_unknown_tool_is_invalid_params_in_200(client: TestClient) -> None:
    body = handshake_request("tools/call", {"name": "nope", "arguments": {}})
    response = client.post(DUAL, body, headers={"MCP-Protocol-Version": V0618})
    expect(response, 200, rpc_error(INVALID_PARAMS), revision=V0618)


def test_legacy_a_tool_call_is_answered_without_session_headers(client: TestClient) -> None:
    body = handshake_request("tools/call", {"name": "echo", "arguments": {"text": "x"}})
    response = client.post(DUAL, body, headers={"MCP-Protocol-Version": V0618})
    expect(response, 200, legacy_tool_result("x"), revision=V0618, method="tools/call")


@pytest.mark.parametrize("version", [V0618, V1125, "1999-01-01"])
def test_legacy_a_modern_only_endpoint_answers_initialize_with_unsupported(
    client: TestClient, version: str
) -> None:
    """A 2025 client at a 2026-only URL learns which versions it could use."""
    response = client.post(PATH, initialize(version))
    data = {"supported": [MODERN], "requested": version}
    expect(response, 400, rpc_error(UNSUPPORTED, data=data))


# --- admission (group 11) -------------------------------------------------------------------

WWW = (("WWW-Authenticate", "Bearer"),)


def admitting(controller: object, **options: object) -> TestClient:
    return TestClient(server(admission=controller, **options))


def test_admission_accepts_everyone_by_default(client: TestClient) -> None:
    body = stateless_request("tools/call", {"name": "whoami", "arguments": {}})
    expect(modern(client, body), 200, modern_tool_result("None"), method="tools/call")


@pytest.mark.parametrize("path", [PATH, DUAL])
def test_admission_a_rejection_gives_its_status_header_and_error(path: str) -> None:
    def controller(request: AdmissionRequest) -> Rejected:
        return Rejected(401, InvalidRequest(), headers=WWW)

    with admitting(controller) as test_client:
        response = modern(test_client, call_echo(), path=path)
    expect(response, 401, rpc_error(INVALID_REQUEST), headers=WWW)


def test_admission_a_rejection_without_error_has_no_body() -> None:
    with admitting(lambda request: Rejected(403, None, headers=WWW)) as test_client:
        expect(modern(test_client, call_echo()), 403, headers=WWW)


def test_admission_a_rejected_notification_keeps_status_and_headers_without_body() -> None:
    with admitting(lambda request: Rejected(401, InvalidRequest(), headers=WWW)) as test_client:
        response = modern(test_client, stateless_request("notifications/x", id=None))
        legacy = test_client.post(DUAL, handshake_request("notifications/initialized", id=None))
    expect(response, 401, headers=WWW)
    expect(legacy, 401, headers=WWW)


def test_admission_a_rejection_of_a_legacy_request_keeps_its_status() -> None:
    with admitting(lambda request: Rejected(401, InvalidRequest(), headers=WWW)) as test_client:
        response = test_client.post(DUAL, initialize(V0618))
    expect(response, 401, rpc_error(INVALID_REQUEST), headers=WWW, revision=V0618)


def test_admission_rejection_keeps_the_cors_headers() -> None:
    with admitting(
        lambda request: Rejected(401, None, headers=WWW), cors=CorsPolicy.loopback()
    ) as test_client:
        response = modern(test_client, call_echo(), Origin=LOCAL_ORIGIN)
    expect(response, 401, headers=[*WWW, *CORS_HEADERS])


def test_admission_runs_before_target_lookup() -> None:
    """Unknown and known targets get the same admission answer, and the
    mirrored-header check comes after admission (MH-19)."""
    with admitting(lambda request: Rejected(403, InvalidRequest())) as test_client:
        known = modern(test_client, call_echo())
        unknown = modern(
            test_client, stateless_request("tools/call", {"name": "nope", "arguments": {}})
        )
        unmirrored = modern(
            test_client,
            stateless_request("tools/call", {"name": "tenant.echo", "arguments": {"tenant": "a"}}),
        )
    for response in (known, unknown, unmirrored):
        expect(response, 403, rpc_error(INVALID_REQUEST))


@pytest.mark.parametrize(
    "params",
    [{"name": 5, "arguments": {}}, {"arguments": {}}, {"name": "echo", "arguments": [1]}],
    ids=["name-not-str", "no-name", "arguments-not-object"],
)
def test_admission_comes_after_the_cheap_parameter_checks(params: dict[str, object]) -> None:
    with admitting(lambda request: Rejected(403, InvalidRequest())) as test_client:
        response = modern(test_client, stateless_request("tools/call", params), Mcp_Name="echo")
    expect(response, 400, rpc_error(INVALID_PARAMS))


def test_without_admission_malformed_tool_call_params_are_invalid_params(
    client: TestClient,
) -> None:
    cases: list[dict[str, object]] = [
        {"name": 5, "arguments": {}},
        {"arguments": {}},
        {"name": "echo", "arguments": [1]},
    ]
    for params in cases:
        response = modern(client, stateless_request("tools/call", params), Mcp_Name="echo")
        expect(response, 400, rpc_error(INVALID_PARAMS))


def test_admission_comes_after_the_envelope_headers_and_version() -> None:
    calls: list[AdmissionRequest] = []

    def controller(request: AdmissionRequest) -> Rejected:
        calls.append(request)
        return Rejected(401)

    with admitting(controller) as test_client:
        expect(test_client.post(PATH, b"{", headers={}), 400, rpc_error(PARSE, id=None))
        expect(
            modern(test_client, call_echo(), Mcp_Name="x"),
            400,
            rpc_error(MISMATCH, data=named("mcp-name")),
        )
        expect(modern(test_client, meta_request({})), 400, rpc_error(INVALID_PARAMS))
        expect(test_client.post(PATH, {"jsonrpc": "2.0", "id": 1, "result": {}}), 202)
    assert calls == []


def test_admission_hc_10_the_identity_reaches_the_handler() -> None:
    """``Admitted(identity)`` becomes ``RequestContext.identity`` (HC-10)."""
    with admitting(lambda request: Admitted(identity="alice")) as test_client:
        body = stateless_request("tools/call", {"name": "whoami", "arguments": {}})
        response = modern(test_client, body)
    expect(response, 200, modern_tool_result("'alice'"), method="tools/call")


def test_admission_async_controllers_are_awaited() -> None:
    async def controller(request: AdmissionRequest) -> Admitted | Rejected:
        await asyncio.sleep(0)
        if request.method == "tools/list":
            return Rejected(429, None)
        return Admitted(identity=("bob", 7))

    with admitting(controller) as test_client:
        body = stateless_request("tools/call", {"name": "whoami", "arguments": {}})
        response = modern(test_client, body)
        refused = modern(test_client, tools_list_body())
    expect(response, 200, modern_tool_result("('bob', 7)"), method="tools/call")
    expect(refused, 429)


def test_admission_the_controller_gets_the_exact_request() -> None:
    calls: list[AdmissionRequest] = []

    def controller(request: AdmissionRequest) -> Admitted:
        calls.append(request)
        return Admitted()

    with admitting(controller) as test_client:
        modern(test_client, call_echo())
        modern(test_client, stateless_request("notifications/x", id=None))
        test_client.post(DUAL, initialize(V0618))
    first, second, third = calls
    assert first.endpoint is Modern.__mcp_endpoint__  # type: ignore[attr-defined]
    assert first.revision is Revision.V2026_07_28
    assert first.method == "tools/call"
    assert first.notification is False
    assert first.http_request is not None
    assert first.http_request.method == "POST"
    assert first.http_request.raw_path == PATH
    assert first.http_request.body == wire(call_echo())
    assert second.method == "notifications/x"
    assert second.notification is True
    assert third.endpoint is Dual.__mcp_endpoint__  # type: ignore[attr-defined]
    assert third.revision is Revision.V2025_06_18
    assert third.method == "initialize"


def raising(request: AdmissionRequest) -> Admitted:
    raise RuntimeError("controller broke")


async def raising_async(request: AdmissionRequest) -> Admitted:
    raise RuntimeError("controller broke")


@pytest.mark.parametrize(
    "controller",
    [
        raising,
        raising_async,
        lambda request: None,
        lambda request: True,
        lambda request: "ok",
        lambda request: Admitted,
    ],
    ids=["raises", "async-raises", "none", "true", "str", "class"],
)
def test_admission_a_failing_controller_fails_closed_with_500_internal_error(
    controller: object,
) -> None:
    with admitting(controller) as test_client:
        response = modern(test_client, call_echo())
        notification = modern(test_client, stateless_request("notifications/x", id=None))
    expect(response, 500, rpc_error(INTERNAL))
    expect(notification, 500, rpc_error(INTERNAL, id=None))


def test_admission_a_failing_controller_on_2025_is_internal_error() -> None:
    """Application contract failures are -32603 in HTTP 200 on 2025."""
    with admitting(raising) as test_client:
        response = test_client.post(DUAL, initialize(V0618))
    expect(response, 200, rpc_error(INTERNAL), revision=V0618)


def test_admission_a_controller_returning_its_own_rejection_headers_cannot_set_reserved_ones() -> (
    None
):
    """Reserved headers fail when the rejection is built, so the controller fails closed."""

    def controller(request: AdmissionRequest) -> Rejected:
        return Rejected(401, None, headers=(("Cache-Control", "public"),))

    with admitting(controller) as test_client:
        response = modern(test_client, call_echo())
    expect(response, 500, rpc_error(INTERNAL))
