"""Never echo: what a client submits -- tool, prompt and
resource names, argument names and values, header values, ``_meta`` members, cursors -- never
comes back in a response body or header, nor in the server's log, whichever refusal path it
takes.  Framework errors are fixed texts, and a handler's exception text stays on the server.

Every scenario plants the canary in one place, asserts the exact refusal, then looks for the
canary (any case) in the status line's headers, the body and the captured log.  The one echo the
protocol requires -- ``data.requested`` of -32022, an already bounded version string -- is
tested on its own.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated

import pytest

import mcpkit
from mcpkit import (
    AdmissionRequest,
    Arg,
    CorsPolicy,
    Limits,
    PromptMessage,
    PromptOutput,
    Rejected,
    ResourceNotFound,
    ResourceOutput,
    Revision,
    Role,
    TextContent,
    TextResourceContents,
)
from mcpkit.errors import ConfigurationError, InvalidRequest, ProtocolError
from mcpkit.testing import (
    TestClient,
    TestResponse,
    handshake_request,
    stateless_headers,
    stateless_request,
)

from ..wire import assert_valid

CANARY = "CANARY-7f3a"
MODERN = "2026-07-28"
V0618 = "2025-06-18"
V1125 = "2025-11-25"
PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"

PATH = "/mcp"
LEGACY = "/legacy"

FIXED_MESSAGES = frozenset(
    {
        "Parse error",
        "Invalid Request",
        "Method not found",
        "Invalid params",
        "Internal error",
        "Server overloaded; retry later",
        "Request timed out",
        "Resource not found",
        "Header mismatch",
        "Missing required client capability",
        "Unsupported protocol version",
        "Too many sessions; retry later",
        "Session quota exceeded; end a session or wait for a call to finish",
        "The client did not answer the server's request for input; retry the call",
        "Last-Event-ID names no event this session can replay from; call again instead",
        "Mcp-Session-Id required; send initialize first",
        "Session not found; initialize a new session",
        "Too many listen streams open; end one before listening again",
        "Subscription not authorized",
        "Task not found or expired",
        "Too many tasks; wait for some to finish and expire before starting more",
        "Task store unavailable; retry later",
        "Session store unavailable; retry later",
        "The task was interrupted by a server restart; call the tool again",
        "Authentication required: send an OAuth access token for this server as "
        "'Authorization: Bearer <token>'; the WWW-Authenticate header says where to get one",
        "The access token lacks a scope this request needs; obtain a token with the scopes "
        "the WWW-Authenticate header names and retry",
        "The access token cannot be verified right now; retry later",
        "No MCP endpoint at this path. An endpoint answers at its declared path (such as /mcp); "
        "when the app is mounted under a prefix, at the prefix followed by that path (/ai/mcp "
        "under /ai).",
        "This Host header is not allowed; add the name to allowed_hosts (or --allowed-host), or "
        "use the address and port the server listens on.",
    }
)
INVALID_ARGUMENTS = "Arguments do not match the tool's inputSchema."
N_INTEGER = "n: must be an integer"
TEXT = "text: required"
UNDECLARED = "arguments: has a member the schema does not allow"  # never its name


@dataclass(frozen=True)
class Text:
    text: str


class Leaky(Exception):
    """An exception whose every rendering carries the canary."""

    def __str__(self) -> str:
        return f"{CANARY} secret"

    def __repr__(self) -> str:
        return f"Leaky({CANARY})"


@mcpkit.endpoint(path=PATH, name="privacy", version="1.0.0", revisions={Revision.V2026_07_28})
class Modern:
    @mcpkit.tool(name="echo")
    def echo(self, text: str) -> Text:
        return Text(text)

    @mcpkit.tool(name="count")
    def count(self, n: int) -> Text:
        return Text(str(n))

    @mcpkit.tool(name="tenant.echo")
    def tenant(self, tenant: Annotated[str, Arg(header="Tenant")]) -> Text:
        return Text(tenant)

    @mcpkit.tool(name="boom")
    def boom(self, text: str) -> Text:
        raise ValueError(f"{CANARY} {text}")

    @mcpkit.tool(name="boom.async")
    async def boom_async(self, text: str) -> Text:
        raise Leaky()

    @mcpkit.tool(name="boom.config")
    def boom_config(self, text: str) -> Text:
        raise ConfigurationError(f"{CANARY} detail")

    @mcpkit.prompt(name="greet")
    def greet(self, who: str) -> PromptOutput:
        if who != "ann":
            raise RuntimeError(f"{CANARY} {who}")
        return PromptOutput(
            messages=(PromptMessage(role=Role.USER, content=TextContent(text="hi")),)
        )

    @mcpkit.resource(uri="mem://items/{id}", name="item")
    def item(self, id: str) -> ResourceOutput:
        if id == "missing":
            raise ResourceNotFound()
        raise KeyError(f"{CANARY}-{id}")


@mcpkit.endpoint(
    path=LEGACY,
    name="legacy",
    version="1.0.0",
    revisions={Revision.V2025_06_18, Revision.V2025_11_25},
)
class Legacy:
    @mcpkit.tool(name="echo")
    def echo(self, text: str) -> Text:
        return Text(text)

    @mcpkit.tool(name="boom")
    def boom(self, text: str) -> Text:
        raise ValueError(f"{CANARY} {text}")

    @mcpkit.resource(uri="mem://doc", name="doc")
    def doc(self) -> ResourceOutput:
        return ResourceOutput(contents=(TextResourceContents(uri="mem://doc", text="x"),))


def reject_tools(request: AdmissionRequest) -> mcpkit.Admitted | Rejected:
    if request.method == "tools/call":
        return Rejected(403, InvalidRequest(), headers=(("WWW-Authenticate", "Bearer"),))
    return mcpkit.Admitted()


@pytest.fixture(scope="module")
def clients() -> Iterator[Mapping[str, TestClient]]:
    servers = {
        "plain": mcpkit.Server([Modern, Legacy]),
        "cors": mcpkit.Server([Modern, Legacy], cors=CorsPolicy.loopback()),
        "small": mcpkit.Server([Modern, Legacy], limits=Limits(max_request_bytes=256)),
        "admission": mcpkit.Server([Modern, Legacy], admission=reject_tools),
    }
    opened = {name: TestClient(server) for name, server in servers.items()}
    try:
        yield opened
    finally:
        for test_client in opened.values():
            test_client.close()


# --- scenarios ------------------------------------------------------------------------------


def wire(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def error(code: int, message: str, id: str | int | None = 1) -> bytes:
    head: dict[str, object] = {"jsonrpc": "2.0"}
    if id is not None:
        head["id"] = id
    return wire({**head, "error": {"code": code, "message": message}})


PARSE = error(-32700, "Parse error", None)
INVALID_REQUEST = error(-32600, "Invalid Request")
NOT_FOUND = error(-32601, "Method not found")
INVALID = error(-32602, "Invalid params")
INTERNAL = error(-32603, "Internal error")


def mismatch(header: str) -> bytes:
    """The refusal names the header by the server's own name: never what the client sent."""
    return wire(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32020, "message": "Header mismatch", "data": {"header": header}},
        }
    )


MISMATCH_METHOD = mismatch("mcp-method")
MISMATCH_NAME = mismatch("mcp-name")
MISMATCH_VERSION = mismatch("mcp-protocol-version")
MISMATCH_TENANT = mismatch("mcp-param-tenant")


def not_found(uri: str, code: int = -32002, message: str = "Resource not found") -> bytes:
    """Resource not found names the request's own target URI in ``data.uri``."""
    return wire(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": code, "message": message, "data": {"uri": uri}},
        }
    )


def invalid_arguments_result(detail: str) -> bytes:
    """The isError result of refused arguments: where and why, in the schema's own terms."""
    said = f"{INVALID_ARGUMENTS[:-1]}: {detail}."
    return wire(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "content": [{"type": "text", "text": said}],
                "isError": True,
                "resultType": "complete",
                "_meta": {SERVER_INFO: {"name": "privacy", "version": "1.0.0"}},
            },
        }
    )


@dataclass(frozen=True)
class Case:
    """One request carrying the canary and the exact answer it must get."""

    id: str
    body: object
    status: int
    expected: bytes
    headers: Sequence[tuple[str, str]] = ()
    path: str = PATH
    method: str = "POST"
    client: str = "plain"
    revision: str = MODERN
    rpc_method: str | None = None
    extra_headers: Sequence[tuple[str, str]] = field(default=())


def headers_for(method: str, name: str | None = None, **extra: str) -> list[tuple[str, str]]:
    sent = stateless_headers(method, name)
    sent.update({key.replace("_", "-"): value for key, value in extra.items()})
    return list(sent.items())


def call(name: str, arguments: object) -> dict[str, object]:
    return stateless_request("tools/call", {"name": name, "arguments": arguments})


def meta_list(meta: Mapping[str, object], method: str = "tools/list") -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"_meta": dict(meta)}}


def b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


WWW = (("www-authenticate", "Bearer"),)
URI = f"mem://{CANARY}"

INVALID_REQUEST_BODY = b'{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"}}'
# Fixed explanations, never naming the path or the Host sent.
NO_ENDPOINT_BODY = (
    b'{"jsonrpc":"2.0","error":{"code":-32600,"message":"No MCP endpoint at this path. An '
    b"endpoint answers at its declared path (such as /mcp); when the app is mounted under a "
    b'prefix, at the prefix followed by that path (/ai/mcp under /ai)."}}'
)
HOST_NOT_ALLOWED_BODY = (
    b'{"jsonrpc":"2.0","error":{"code":-32600,"message":"This Host header is not allowed; add '
    b"the name to allowed_hosts (or --allowed-host), or use the address and port the server "
    b'listens on."}}'
)

CASES = [
    # group 1-2: size and route
    Case("oversized-body", call("echo", {"text": CANARY * 40}), 413, INVALID_REQUEST_BODY,
         client="small"),
    Case("unknown-path", stateless_request("tools/list"), 404, NO_ENDPOINT_BODY,
         path=f"/{CANARY}"),
    Case("unknown-path-query", stateless_request("tools/list"), 404, NO_ENDPOINT_BODY,
         path=f"/x?{CANARY}=1"),
    # group 3: Host, Origin, CORS
    Case("host-evil", stateless_request("tools/list"), 421, HOST_NOT_ALLOWED_BODY,
         headers=[("Host", f"{CANARY}.example.com")]),
    Case("host-malformed", stateless_request("tools/list"), 400, b"",
         headers=[("Host", f"{CANARY} host")]),
    Case("host-port", stateless_request("tools/list"), 421, HOST_NOT_ALLOWED_BODY,
         headers=[("Host", f"{CANARY}:8000")]),
    Case("origin-no-policy", stateless_request("tools/list"), 403, b"",
         headers=[("Origin", f"http://{CANARY}.example")]),
    Case("origin-refused", stateless_request("tools/list"), 403, b"",
         headers=[("Origin", f"http://{CANARY}.example")], client="cors"),
    Case("preflight-refused", b"", 403, b"", method="OPTIONS", client="cors",
         headers=[("Origin", f"http://{CANARY}.example"),
                  ("Access-Control-Request-Headers", f"mcp-param-{CANARY}")]),
    Case("preflight-no-origin", b"", 405, b"", method="OPTIONS", client="cors",
         headers=[("Access-Control-Request-Headers", f"mcp-param-{CANARY}")],
         extra_headers=[("allow", "POST, OPTIONS")]),
    # group 4: method and media types
    Case("method", b"", 405, b"", method="DELETE", headers=[("X-Trace", CANARY)],
         extra_headers=[("allow", "POST, OPTIONS")]),
    Case("content-type", stateless_request("tools/list"), 415, b"",
         headers=[("Content-Type", f"text/{CANARY}")]),
    Case("accept", stateless_request("tools/list"), 406, b"",
         headers=[("Accept", f"application/{CANARY}")]),
    # groups 5-6: JSON and envelope
    Case("parse", f'{{"{CANARY}": '.encode(), 400, PARSE),
    Case("duplicate-member", f'{{"{CANARY}":1,"{CANARY}":2}}'.encode(), 400, PARSE),
    Case("bad-string", f'{{"jsonrpc":"2.0","id":1,"method":"{CANARY}\\x"}}'.encode(), 400, PARSE),
    Case("batch", [{"jsonrpc": "2.0", "id": 1, "method": CANARY}], 400,
         error(-32600, "Invalid Request", None)),
    Case("jsonrpc-version", {"jsonrpc": CANARY, "id": 1, "method": "tools/list"}, 400,
         INVALID_REQUEST),
    Case("extra-member", {"jsonrpc": "2.0", "id": 1, "method": "tools/list", CANARY: CANARY},
         400, INVALID_REQUEST),
    Case("params-array", {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [CANARY]},
         400, INVALID_REQUEST),
    Case("bad-id", {"jsonrpc": "2.0", "id": [CANARY], "method": "tools/list"}, 400,
         error(-32600, "Invalid Request", None)),
    # group 7: routing headers
    Case("mcp-method", stateless_request("tools/list"), 400, MISMATCH_METHOD,
         headers=headers_for("tools/list", Mcp_Method=CANARY)),
    Case("mcp-method-method", stateless_request(CANARY), 400, MISMATCH_METHOD,
         headers=headers_for("tools/list")),
    Case("mcp-name", call("echo", {"text": "x"}), 400, MISMATCH_NAME,
         headers=headers_for("tools/call", CANARY)),
    Case("mcp-name-base64", call("echo", {"text": "x"}), 400, MISMATCH_NAME,
         headers=headers_for("tools/call", Mcp_Name=b64(CANARY))),
    Case("mcp-name-bad-base64", call("echo", {"text": "x"}), 400, MISMATCH_NAME,
         headers=headers_for("tools/call", Mcp_Name=f"=?base64?{CANARY}?=")),
    Case("mcp-name-unnamed", stateless_request("tools/list"), 400, MISMATCH_NAME,
         headers=headers_for("tools/list", Mcp_Name=CANARY)),
    Case("mcp-name-body", call(CANARY, {}), 400, MISMATCH_NAME,
         headers=headers_for("tools/call", "echo")),
    # groups 8-9: version and _meta
    Case("version-header", stateless_request("tools/list"), 400, MISMATCH_VERSION,
         headers=headers_for("tools/list", MCP_Protocol_Version=CANARY)),
    Case("version-body", stateless_request("tools/list", version=CANARY), 400, MISMATCH_VERSION,
         headers=headers_for("tools/list")),
    Case("version-long", stateless_request("tools/list", version=CANARY * 10), 400,
         wire({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022,
               "message": "Unsupported protocol version", "data": {"supported": [MODERN]}}}),
         headers=headers_for("tools/list", MCP_Protocol_Version=CANARY * 10)),
    Case("meta-client-info", meta_list({PV: MODERN, CAPS: {},
         "io.modelcontextprotocol/clientInfo": {"name": CANARY, "version": 5}}), 400, INVALID,
         headers=headers_for("tools/list")),
    Case("meta-log-level", meta_list({PV: MODERN, CAPS: {},
         "io.modelcontextprotocol/logLevel": CANARY}), 400, INVALID,
         headers=headers_for("tools/list")),
    Case("meta-progress-token", meta_list({PV: MODERN, CAPS: {}, "progressToken": [CANARY]}),
         400, INVALID, headers=headers_for("tools/list")),
    Case("meta-traceparent", meta_list({PV: MODERN, CAPS: {}, "traceparent": CANARY * 1000}),
         400, INVALID, headers=headers_for("tools/list")),
    Case("meta-capabilities", meta_list({PV: MODERN, CAPS: CANARY}), 400, INVALID,
         headers=headers_for("tools/list")),
    Case("meta-not-object", {"jsonrpc": "2.0", "id": 1, "method": "tools/list",
         "params": {"_meta": CANARY}}, 400, INVALID, headers=headers_for("tools/list")),
    Case("unknown-method", stateless_request(f"{CANARY}/x"), 404, NOT_FOUND,
         headers=headers_for(f"{CANARY}/x")),
    # groups 10-11: params, admission, targets, mirrors
    Case("cursor-tools", stateless_request("tools/list", {"cursor": CANARY}), 400, INVALID,
         headers=headers_for("tools/list")),
    Case("cursor-prompts", stateless_request("prompts/list", {"cursor": CANARY}), 400, INVALID,
         headers=headers_for("prompts/list")),
    Case("cursor-resources", stateless_request("resources/list", {"cursor": CANARY}), 400,
         INVALID, headers=headers_for("resources/list")),
    Case("cursor-templates", stateless_request("resources/templates/list", {"cursor": CANARY}),
         400, INVALID, headers=headers_for("resources/templates/list")),
    Case("unknown-tool", call(CANARY, {}), 400, INVALID, headers=headers_for("tools/call", CANARY)),
    Case("unknown-prompt", stateless_request("prompts/get", {"name": CANARY}), 400, INVALID,
         headers=headers_for("prompts/get", CANARY)),
    Case("prompt-argument-name", stateless_request("prompts/get", {"name": "greet",
         "arguments": {"who": "ann", CANARY: "x"}}), 400, INVALID,
         headers=headers_for("prompts/get", "greet")),
    Case("prompt-argument-value", stateless_request("prompts/get", {"name": "greet",
         "arguments": {"who": [CANARY]}}), 400, INVALID,
         headers=headers_for("prompts/get", "greet")),
    Case("missing-resource", stateless_request("resources/read", {"uri": "mem://items/missing"}),
         400, not_found("mem://items/missing", -32602, "Invalid params"),
         headers=headers_for("resources/read", "mem://items/missing")),
    Case("mirror-mismatch", call("tenant.echo", {"tenant": "acme"}), 400, MISMATCH_TENANT,
         headers=headers_for("tools/call", "tenant.echo", Mcp_Param_Tenant=CANARY)),
    Case("mirror-missing", call("tenant.echo", {"tenant": CANARY}), 400, MISMATCH_TENANT,
         headers=headers_for("tools/call", "tenant.echo")),
    Case("mirror-base64", call("tenant.echo", {"tenant": "acme"}), 400, MISMATCH_TENANT,
         headers=headers_for("tools/call", "tenant.echo", Mcp_Param_Tenant=b64(CANARY))),
    Case("admission", call(CANARY, {CANARY: CANARY}), 403, INVALID_REQUEST, client="admission",
         headers=headers_for("tools/call", CANARY, Authorization=f"Bearer {CANARY}"),
         extra_headers=WWW),
    # groups 14-16: arguments and handlers
    Case("argument-name", call("echo", {"text": "x", CANARY: CANARY}), 200,
         invalid_arguments_result(UNDECLARED), headers=headers_for("tools/call", "echo"),
         rpc_method="tools/call"),
    Case("argument-value", call("count", {"n": CANARY}), 200, invalid_arguments_result(N_INTEGER),
         headers=headers_for("tools/call", "count"), rpc_method="tools/call"),
    Case("argument-missing", call("echo", {CANARY: "x"}), 200, invalid_arguments_result(TEXT),
         headers=headers_for("tools/call", "echo"), rpc_method="tools/call"),
    Case("arguments-not-object", call("echo", [CANARY]), 400, INVALID,
         headers=headers_for("tools/call", "echo")),
    Case("handler-value-error", call("boom", {"text": CANARY}), 500, INTERNAL,
         headers=headers_for("tools/call", "boom")),
    Case("handler-async", call("boom.async", {"text": CANARY}), 500, INTERNAL,
         headers=headers_for("tools/call", "boom.async")),
    Case("handler-configuration-error", call("boom.config", {"text": CANARY}), 500, INTERNAL,
         headers=headers_for("tools/call", "boom.config")),
    Case("prompt-handler", stateless_request("prompts/get", {"name": "greet",
         "arguments": {"who": CANARY}}), 500, INTERNAL,
         headers=headers_for("prompts/get", "greet")),
    Case("resource-handler", stateless_request("resources/read", {"uri": f"mem://items/{CANARY}"}),
         500, INTERNAL, headers=headers_for("resources/read", f"mem://items/{CANARY}")),
    # 2025 revisions
    Case("legacy-method", handshake_request(CANARY), 200, NOT_FOUND, path=LEGACY, revision=V1125),
    Case("legacy-log-level", handshake_request("logging/setLevel", {"level": CANARY}), 200,
         INVALID, path=LEGACY, revision=V1125),
    Case("legacy-unknown-tool", handshake_request("tools/call", {"name": CANARY, "arguments": {}}),
         200, INVALID, path=LEGACY, revision=V1125),
    Case("legacy-cursor", handshake_request("tools/list", {"cursor": CANARY}), 200, INVALID,
         path=LEGACY, revision=V1125),
    Case("legacy-arguments-0618", handshake_request("tools/call", {"name": "echo",
         "arguments": {CANARY: CANARY}}), 200, error(-32602, INVALID_ARGUMENTS), path=LEGACY,
         headers=[("MCP-Protocol-Version", V0618)], revision=V0618),
    Case("legacy-handler", handshake_request("tools/call", {"name": "boom",
         "arguments": {"text": CANARY}}), 200, INTERNAL, path=LEGACY, revision=V1125),
]  # fmt: skip


def send(clients: Mapping[str, TestClient], case: Case) -> TestResponse:
    return clients[case.client].post(
        case.path,
        case.body,
        headers=list(case.headers),
        method=case.method,
    )


def assert_no_canary(response: TestResponse, log: str) -> None:
    needle = CANARY.lower()
    assert needle.encode() not in response.body.lower()
    for name, value in response.headers:
        assert needle not in name.lower()
        assert needle not in value.lower()
    assert needle not in log.lower()


def expected_headers(case: Case) -> list[tuple[str, str]]:
    wanted = [("cache-control", "no-store"), ("content-length", str(len(case.expected)))]
    if case.expected:
        wanted.append(("content-type", "application/json"))
    wanted += case.extra_headers
    return sorted(wanted)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_no_refusal_echoes_what_the_client_sent(
    clients: Mapping[str, TestClient], case: Case, caplog: pytest.LogCaptureFixture
) -> None:
    """IV-03 / IV-04 / ER-08 / the exact fixed answer, and no trace of the
    canary in the response or the server's log."""
    caplog.set_level(logging.DEBUG)
    response = send(clients, case)
    assert response.status == case.status
    assert response.body == case.expected
    assert sorted(response.headers) == expected_headers(case)
    if response.body:
        assert_valid(case.revision, case.rpc_method, response.messages)
    assert_no_canary(response, caplog.text)


def test_every_error_message_is_a_fixed_framework_text() -> None:
    """All the error bodies above use the fixed texts, and tool argument failures the fixed
    IV-03 text."""
    texts: set[str] = set()
    for case in CASES:
        if not case.expected:
            continue
        message = json.loads(case.expected)
        if "error" in message:
            texts.add(message["error"]["message"])
        else:  # refused arguments: the fixed text, then where and why (the schema's words)
            for block in message["result"]["content"]:
                assert block["text"].startswith(INVALID_ARGUMENTS[:-1] + ": ")
                texts.add(INVALID_ARGUMENTS)
    assert texts <= FIXED_MESSAGES | {INVALID_ARGUMENTS}
    assert INVALID_ARGUMENTS in texts


@pytest.mark.parametrize(
    "error_type",
    [
        cls
        for cls in vars(mcpkit.errors).values()
        if isinstance(cls, type) and issubclass(cls, ProtocolError) and cls is not ProtocolError
    ],
)
def test_protocol_errors_render_only_their_fixed_message(error_type: type[ProtocolError]) -> None:
    error = error_type()
    assert error.message in FIXED_MESSAGES | {INVALID_ARGUMENTS, "Rate limit exceeded"}
    assert str(error) == error.message


# --- what must reach the handler exactly, and what must not come back -----------------------


def test_iv_11_a_handler_exception_is_the_fixed_internal_error(
    clients: Mapping[str, TestClient], caplog: pytest.LogCaptureFixture
) -> None:
    """IV-11 / ER-07: a handler's ``ValueError("CANARY...")`` is the fixed -32603; its text
    reaches neither the client nor the log."""
    caplog.set_level(logging.DEBUG)
    response = clients["plain"].post(
        PATH, call("boom", {"text": "x"}), headers=headers_for("tools/call", "boom")
    )
    assert response.status == 500
    assert response.body == INTERNAL
    assert_no_canary(response, caplog.text)
    assert caplog.records, "the failure is logged (by type only)"


def test_unknown_mirror_headers_and_meta_members_are_ignored_and_not_echoed(
    clients: Mapping[str, TestClient], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    body = stateless_request(
        "tools/call",
        {"name": "echo", "arguments": {"text": "ok"}, "_meta": {CANARY: CANARY}},
    )
    headers = [
        *headers_for("tools/call", "echo"),
        (f"Mcp-Param-{CANARY}", CANARY),
        ("X-Custom", CANARY),
        ("Mcp-Session-Id", CANARY),
        ("Last-Event-ID", CANARY),
    ]
    response = clients["plain"].post(PATH, body, headers=headers)
    assert response.status == 200
    assert json.loads(response.body)["result"]["structuredContent"] == {"text": "ok"}
    assert_valid(MODERN, "tools/call", response.messages)
    assert_no_canary(response, caplog.text)


@pytest.mark.parametrize("path", [PATH, LEGACY])
def test_an_unknown_version_header_past_64_characters_is_never_echoed(
    clients: Mapping[str, TestClient], path: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A 2025-style request whose ``MCP-Protocol-Version`` is unknown is refused with 400 and a
    fixed error (-32020 today, -32022 once the version is checked first; see
    test_http_pipeline); a version over 64 characters is not echoed even as
    ``data.requested``."""
    caplog.set_level(logging.DEBUG)
    version = CANARY * 6
    response = clients["plain"].post(
        path, handshake_request("tools/list"), headers={"MCP-Protocol-Version": version}
    )
    assert response.status == 400
    message = json.loads(response.body)
    assert message["error"]["message"] in FIXED_MESSAGES
    assert_valid(V1125, None, response.messages)
    assert_no_canary(response, caplog.text)


@pytest.mark.parametrize(
    ("path", "headers", "status", "expected"),
    [
        (PATH, headers_for("resources/read", URI), 400, not_found(URI, -32602, "Invalid params")),
        (LEGACY, [], 200, not_found(URI)),
    ],
    ids=["2026", "2025"],
)
def test_resource_not_found_names_only_the_requested_uri(
    clients: Mapping[str, TestClient],
    caplog: pytest.LogCaptureFixture,
    path: str,
    headers: list[tuple[str, str]],
    status: int,
    expected: bytes,
) -> None:
    """The second echo the protocol asks for: ``data.uri`` of resource not found is the
    request's own target, once, and nothing else of the request (nor in headers or the log)."""
    caplog.set_level(logging.DEBUG)
    if path == PATH:
        body = stateless_request("resources/read", {"uri": URI})
    else:
        body = handshake_request("resources/read", {"uri": URI})
    response = clients["plain"].post(path, body, headers=headers)
    assert response.status == status
    assert response.body == expected
    assert response.body.count(CANARY.encode()) == 1
    assert_valid(MODERN if path == PATH else V1125, None, response.messages)
    assert all(CANARY not in value for _, value in response.headers)
    assert CANARY not in caplog.text


def test_a_resource_uri_over_65535_characters_is_not_echoed(
    clients: Mapping[str, TestClient],
) -> None:
    uri = f"mem://{CANARY}/" + "x" * 65_536
    response = clients["plain"].post(LEGACY, handshake_request("resources/read", {"uri": uri}))
    assert response.status == 200
    assert response.body == error(-32002, "Resource not found")
    assert_valid(V1125, None, response.messages)


def test_legacy_initialize_does_not_echo_an_unknown_requested_version(
    clients: Mapping[str, TestClient],
) -> None:
    body = handshake_request(
        "initialize",
        {
            "protocolVersion": CANARY,
            "capabilities": {},
            "clientInfo": {"name": CANARY, "version": CANARY},
        },
    )
    response = clients["plain"].post(LEGACY, body)
    assert response.status == 200
    assert json.loads(response.body)["result"]["protocolVersion"] == V1125
    assert_valid(V1125, "initialize", response.messages)
    assert_no_canary(response, "")


@pytest.mark.parametrize("path", [PATH, LEGACY])
def test_the_one_required_echo_is_the_bounded_requested_version(
    clients: Mapping[str, TestClient], path: str
) -> None:
    """-32022 must name ``data.requested``; it is the version string only,
    at most 64 characters, and appears nowhere else."""
    version = f"{CANARY}-v"
    body = stateless_request("tools/list", version=version)
    headers = headers_for("tools/list", MCP_Protocol_Version=version)
    supported = [MODERN] if path == PATH else [V1125, V0618]
    response = clients["plain"].post(path, body, headers=headers)
    assert response.status == 400
    assert response.body == wire(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {
                "code": -32022,
                "message": "Unsupported protocol version",
                "data": {"supported": supported, "requested": version},
            },
        }
    )
    assert response.body.count(CANARY.encode()) == 1
    assert all(CANARY not in value for _, value in response.headers)


def test_application_chosen_text_is_the_only_exception(
    clients: Mapping[str, TestClient],
) -> None:
    """Text the application itself returns (IV-12 style feedback) is sent as written; the
    framework adds nothing of the request around it."""
    response = clients["plain"].post(
        PATH, call("echo", {"text": "app text"}), headers=headers_for("tools/call", "echo")
    )
    assert response.status == 200
    assert json.loads(response.body)["result"]["structuredContent"] == {"text": "app text"}
