"""mcpkit.testing: the in-process client, its responses and the request helpers
(docs/design/server.md §4)."""

from __future__ import annotations

import asyncio
import base64
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from mcpkit.errors import ParseError
from mcpkit.json import JsonObject
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.server._http import HttpExchange, HttpRequest
from mcpkit.testing import (
    TestClient,
    TestResponse,
    handshake_request,
    stateless_headers,
    stateless_request,
)
from mcpkit.transports import McpApp
from mcpkit.transports._asgi import ASGIApp, Message, Receive, Scope, Send

Responder = Callable[[HttpRequest, HttpExchange, asyncio.Event], Awaitable[None]]
JSON = [(b"content-type", b"application/json")]
SSE = [(b"content-type", b"text/event-stream")]


async def echo(request: HttpRequest, exchange: HttpExchange, _: asyncio.Event) -> None:
    """Answers with the request body as the response body."""
    await exchange.start(200, [*JSON, (b"x-Seen", b"one"), (b"x-seen", b"two")])
    await exchange.write(request.body, more=False)


class FakeEngine:
    """An HttpEngine that records requests and lifespan events and answers with ``responder``."""

    def __init__(self, responder: Responder = echo, limits: Limits = DEFAULT_LIMITS) -> None:
        self._limits = limits
        self.responder = responder
        self.requests: list[HttpRequest] = []
        self.events: list[str] = []
        self.fail: set[str] = set()
        self.loops: set[asyncio.AbstractEventLoop] = set()

    @property
    def limits(self) -> Limits:
        return self._limits

    async def startup(self) -> None:
        self.events.append("startup")
        if "startup" in self.fail:
            raise RuntimeError("startup broke")

    async def shutdown(self) -> None:
        self.events.append("shutdown")
        if "shutdown" in self.fail:
            raise RuntimeError("shutdown broke")

    async def handle_http(
        self, request: HttpRequest, exchange: HttpExchange, disconnected: asyncio.Event
    ) -> None:
        self.requests.append(request)
        self.loops.add(asyncio.get_running_loop())
        await self.responder(request, exchange, disconnected)


def header_map(request: HttpRequest) -> dict[str, str]:
    return dict(request.headers)


# --- requests -------------------------------------------------------------------------------


def test_post_encodes_an_object_body_and_adds_default_headers() -> None:
    engine = FakeEngine()
    with TestClient(McpApp(engine)) as client:
        response = client.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"})
    (request,) = engine.requests
    assert request.method == "POST"
    assert request.raw_path == "/mcp"
    assert request.body == b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    assert request.headers == (
        ("host", "127.0.0.1:8000"),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("content-length", str(len(request.body))),
    )
    assert request.client == ("127.0.0.1", 50000)
    assert response.status == 200
    assert response.json == {"jsonrpc": "2.0", "id": 1, "method": "ping"}


def test_given_headers_replace_defaults_case_insensitively_and_keep_repeats() -> None:
    engine = FakeEngine()
    with TestClient(McpApp(engine)) as client:
        client.post(
            "/mcp",
            bytearray(b"[]"),
            headers=[("Accept", "*/*"), ("X-Twice", "1"), ("x-twice", "2")],
            method="PUT",
        )
        client.post("/mcp", b"raw", headers={"HOST": "evil.example"}, default_headers=False)
    first, second = engine.requests
    assert first.method == "PUT"
    assert first.body == b"[]"
    assert first.headers == (
        ("host", "127.0.0.1:8000"),
        ("content-type", "application/json"),
        ("content-length", "2"),
        ("accept", "*/*"),
        ("x-twice", "1"),
        ("x-twice", "2"),
    )
    assert second.headers == (("host", "evil.example"),)
    assert second.body == b"raw"


def test_path_keeps_its_raw_spelling_and_drops_the_query() -> None:
    seen: list[Scope] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append(scope)
        await McpApp(FakeEngine())(scope, receive, send)

    with TestClient(app, lifespan=False) as client:
        client.post("/a%20b/mcp?x=1&y=2", b"")
    (scope,) = seen
    assert scope["path"] == "/a b/mcp"
    assert scope["raw_path"] == b"/a%20b/mcp"
    assert scope["query_string"] == b"x=1&y=2"


def test_server_objects_are_served_through_their_asgi_app() -> None:
    engine = FakeEngine()

    class Server:
        def asgi(self) -> ASGIApp:
            return McpApp(engine)

    with TestClient(Server()) as client:
        assert client.post("/mcp", [1]).json == [1]
    assert engine.events == ["startup", "shutdown"]


def test_requests_share_one_loop_and_can_overlap() -> None:
    both = asyncio.Event()
    arrived: list[int] = []

    async def meet(request: HttpRequest, exchange: HttpExchange, gone: asyncio.Event) -> None:
        arrived.append(1)
        if len(arrived) == 2:
            both.set()
        await asyncio.wait_for(both.wait(), 5)  # neither answers until both are in flight
        await echo(request, exchange, gone)

    engine = FakeEngine(meet)
    with TestClient(McpApp(engine)) as client:
        first = client.submit("/mcp", {"n": 1})
        second = client.submit("/mcp", {"n": 2})
        assert first.result(5).json == {"n": 1}
        assert second.result(5).json == {"n": 2}
        client.post("/mcp", {"n": 3})
    assert len(engine.loops) == 1


def test_an_app_that_hangs_times_out() -> None:
    async def hang(request: HttpRequest, exchange: HttpExchange, gone: asyncio.Event) -> None:
        await asyncio.Event().wait()

    with (
        TestClient(McpApp(FakeEngine(hang)), timeout=0.05) as client,
        pytest.raises(TimeoutError, match=r"no answer within 0\.05 s"),
    ):
        client.post("/mcp", {})


def test_close_cancels_requests_still_in_flight() -> None:
    started = threading.Event()
    cancelled: list[bool] = []

    async def hang(request: HttpRequest, exchange: HttpExchange, gone: asyncio.Event) -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    client = TestClient(McpApp(FakeEngine(hang)))
    future = client.submit("/mcp", {})
    assert started.wait(5)
    client.close()
    assert future.cancelled()
    assert cancelled == [True]


def test_closed_client_refuses_requests_and_closes_once() -> None:
    client = TestClient(McpApp(FakeEngine()))
    client.close()  # never started: nothing to stop
    client.close()
    with pytest.raises(RuntimeError, match="closed"):
        client.post("/mcp", {})


# --- app misbehaviour -----------------------------------------------------------------------


def test_incomplete_response_fails_the_request() -> None:
    async def half(request: HttpRequest, exchange: HttpExchange, gone: asyncio.Event) -> None:
        await exchange.start(200, JSON)
        await exchange.write(b"{", more=True)

    with (
        TestClient(McpApp(FakeEngine(half))) as client,
        pytest.raises(RuntimeError, match="without completing"),
    ):
        client.post("/mcp", {})


@pytest.mark.parametrize(
    "messages",
    [
        [{"type": "http.response.body", "body": b""}],
        [{"type": "http.response.start", "status": 200}] * 2,
        [
            {"type": "http.response.start", "status": 200},
            {"type": "http.response.body"},
            {"type": "http.response.body", "body": b"late"},
        ],
        [{"type": "http.response.trailers"}],
    ],
)
def test_out_of_order_messages_fail_the_request(messages: list[Message]) -> None:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        for message in messages:
            await send(message)

    with TestClient(app, lifespan=False) as client, pytest.raises(RuntimeError, match="unexpected"):
        client.post("/mcp", {})


def test_app_exception_reaches_the_test() -> None:
    async def failing(request: HttpRequest, exchange: HttpExchange, gone: asyncio.Event) -> None:
        raise KeyError("engine bug")

    with TestClient(McpApp(FakeEngine(failing))) as client, pytest.raises(KeyError):
        client.post("/mcp", {})


# --- disconnecting clients ------------------------------------------------------------------


def test_client_leaving_before_the_head_gets_nothing() -> None:
    watched: list[bool] = []

    async def slow(request: HttpRequest, exchange: HttpExchange, gone: asyncio.Event) -> None:
        await asyncio.wait_for(gone.wait(), 5)
        watched.append(gone.is_set())
        await echo(request, exchange, gone)  # dropped: the client has left

    with TestClient(McpApp(FakeEngine(slow))) as client:
        assert client.post_disconnecting("/mcp", {}, after=0.01) is None
    assert watched == [True]


def test_client_leaving_mid_stream_keeps_what_arrived() -> None:
    first_event = threading.Event()

    async def stream(request: HttpRequest, exchange: HttpExchange, gone: asyncio.Event) -> None:
        await exchange.start(200, SSE)
        await exchange.write(b"event: message\ndata: 1\n\n", more=True)
        first_event.set()
        await asyncio.wait_for(gone.wait(), 5)
        await exchange.write(b"data: 2\n\n", more=False)

    with TestClient(McpApp(FakeEngine(stream))) as client:
        response = client.post_disconnecting("/mcp", {}, after=first_event)
    assert response is not None
    assert response.status == 200
    assert response.messages == (1,)


def test_response_completed_before_leaving_is_whole() -> None:
    never = threading.Event()
    with TestClient(McpApp(FakeEngine())) as client:
        response = client.post_disconnecting("/mcp", [2], after=never)
        assert response is not None
        assert response.json == [2]
        response = client.post_disconnecting("/mcp", [3], after=5.0)
        assert response is not None
        assert response.json == [3]


# --- lifespan -------------------------------------------------------------------------------


def test_lifespan_is_run_around_the_client() -> None:
    engine = FakeEngine()
    client = TestClient(McpApp(engine))
    assert engine.events == []
    client.post("/mcp", {})  # first use starts the loop and runs startup
    assert engine.events == ["startup"]
    client.close()
    assert engine.events == ["startup", "shutdown"]


def test_lifespan_can_be_left_out() -> None:
    engine = FakeEngine()
    with TestClient(McpApp(engine), lifespan=False) as client:
        client.post("/mcp", {})
    assert engine.events == []


def test_lifespan_startup_failure_is_raised() -> None:
    engine = FakeEngine()
    engine.fail.add("startup")
    client = TestClient(McpApp(engine))
    with pytest.raises(RuntimeError, match="lifespan startup failed") as raised:
        client.__enter__()
    assert isinstance(raised.value.__cause__, RuntimeError)
    assert str(raised.value.__cause__) == "startup broke"
    with pytest.raises(RuntimeError, match="startup failed"):
        client.post("/mcp", {})
    client.close()  # no shutdown after a failed startup, as ASGI servers do
    assert engine.events == ["startup"]


def test_lifespan_shutdown_failure_is_raised_by_close() -> None:
    engine = FakeEngine()
    engine.fail.add("shutdown")
    client = TestClient(McpApp(engine))
    client.post("/mcp", {})
    with pytest.raises(RuntimeError, match="lifespan shutdown failed"):
        client.close()
    with pytest.raises(RuntimeError, match="closed"):
        client.post("/mcp", {})


def test_app_without_lifespan_support_is_served() -> None:
    async def http_only(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            raise ValueError("no lifespan here")
        await McpApp(FakeEngine())(scope, receive, send)

    with TestClient(http_only) as client:
        assert client.post("/mcp", {"ok": True}).json == {"ok": True}


def test_app_returning_after_startup_fails_shutdown() -> None:
    async def short_lived(scope: Scope, receive: Receive, send: Send) -> None:
        await receive()
        await send({"type": "lifespan.startup.complete"})

    client = TestClient(short_lived)
    client.__enter__()
    with pytest.raises(RuntimeError, match="lifespan shutdown failed"):
        client.close()


# --- responses ------------------------------------------------------------------------------


def response(body: bytes, content_type: str | None = "application/json") -> TestResponse:
    headers = () if content_type is None else (("content-type", content_type),)
    return TestResponse(200, headers, body)


def test_header_lookup_is_case_insensitive_and_joins_repeats() -> None:
    with TestClient(McpApp(FakeEngine())) as client:
        answered = client.post("/mcp", {})
    assert answered.headers[1:] == (("x-seen", "one"), ("x-seen", "two"))
    assert answered.header("X-Seen") == "one, two"
    assert answered.header("Content-Type") == "application/json"
    assert answered.header("x-absent") is None


def test_sse_messages_are_every_event_in_order() -> None:
    stream = (
        b": comment\n\n"
        b'event: message\r\nid: 7\r\ndata: {"a":\r\ndata:1}\r\n\r\n'
        b"retry: 10\rdata: [2]\r\r"
        b"data\n\n"
        b"data: null\n\n"
    )
    answer = response(stream, "Text/Event-Stream; charset=utf-8")
    # "data" with no colon is an empty data line: an event with empty data (a priming event)
    # is not dispatched, as WHATWG SSE says
    assert answer.messages == ({"a": 1}, (2,), None)
    two_lines = response(b"data\ndata\n\n", "text/event-stream")
    with pytest.raises(ParseError):  # two empty lines are the data "\n": not JSON
        two_lines.messages  # noqa: B018


@pytest.mark.parametrize("stream", [b"data: 1\n\ndata: 2", b"data: 1\n\ndata: 2\n"])
def test_truncated_event_streams_are_refused(stream: bytes) -> None:
    with pytest.raises(ValueError, match="ends inside"):
        response(stream, "text/event-stream").messages  # noqa: B018


def test_json_and_empty_bodies() -> None:
    assert response(b'{"id":1}').messages == ({"id": 1},)
    assert response(b"").messages == ()
    assert response(b"", None).messages == ()
    assert isinstance(response(b"{}").json, JsonObject)


def test_json_needs_exactly_one_message() -> None:
    with pytest.raises(ValueError, match="exactly one message, got 0"):
        response(b"").json  # noqa: B018
    with pytest.raises(ValueError, match="exactly one message, got 2"):
        response(b"data: 1\n\ndata: 2\n\n", "text/event-stream").json  # noqa: B018


@pytest.mark.parametrize("content_type", [None, "text/plain"])
def test_other_bodies_are_not_messages(content_type: str | None) -> None:
    with pytest.raises(ValueError, match="not JSON-RPC"):
        response(b"Not Found", content_type).messages  # noqa: B018


def test_responses_are_decoded_beyond_the_default_request_limit() -> None:
    big = b'"' + b"x" * (DEFAULT_LIMITS.max_request_bytes + 1) + b'"'
    (text,) = response(big).messages
    assert isinstance(text, str)
    assert len(text) == DEFAULT_LIMITS.max_request_bytes + 1


# --- helpers --------------------------------------------------------------------------------


def test_modern_headers() -> None:
    assert stateless_headers("tools/list") == {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/list",
    }
    headers = stateless_headers("tools/call", "inventory.search", version="2099-01-01")
    assert headers["Mcp-Name"] == "inventory.search"
    assert headers["MCP-Protocol-Version"] == "2099-01-01"


@pytest.mark.parametrize(
    "name", ["caf\u00e9", " padded", "padded\t", "line\nbreak", "", "=?base64?Zm9v?="]
)
def test_unsafe_names_are_sent_in_base64(name: str) -> None:
    value = stateless_headers("prompts/get", name)["Mcp-Name"]
    assert value.startswith("=?base64?")
    assert value.endswith("?=")
    assert base64.b64decode(value[9:-2], validate=True).decode("utf-8") == name


def test_inner_spaces_and_tabs_stay_literal() -> None:
    assert stateless_headers("prompts/get", "a b\tc")["Mcp-Name"] == "a b\tc"
    assert stateless_headers("resources/read", "=?base64?x")["Mcp-Name"] == "=?base64?x"


def test_modern_request_adds_meta() -> None:
    assert stateless_request("tools/list") == {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/list",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
    }
    request = stateless_request(
        "tools/call",
        {"name": "t", "_meta": {"progressToken": 5, "io.modelcontextprotocol/protocolVersion": 7}},
        id="a",
        capabilities={"sampling": {}},
        version="2025-11-25",
    )
    assert request["id"] == "a"
    assert request["params"] == {
        "name": "t",
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": 7,  # the caller's own value wins
            "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
            "progressToken": 5,
        },
    }


def test_modern_request_keeps_a_malformed_meta_and_makes_notifications() -> None:
    request = stateless_request("notifications/cancelled", {"_meta": [1]}, id=None)
    assert request == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"_meta": [1]},
    }


def test_legacy_request() -> None:
    assert handshake_request("ping") == {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert handshake_request("initialize", {"protocolVersion": "2025-06-18"}, id=9) == {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18"},
    }
    assert handshake_request("notifications/initialized", id=None) == {
        "jsonrpc": "2.0",
        "method": "notifications/initialized",
    }


def test_helpers_round_trip_through_the_client() -> None:
    engine = FakeEngine()
    body = stateless_request("tools/call", {"name": "caf\u00e9"})
    with TestClient(McpApp(engine)) as client:
        answered = client.post("/mcp", body, headers=stateless_headers("tools/call", "caf\u00e9"))
    (request,) = engine.requests
    names = [name for name, _ in request.headers]
    assert names.count("content-type") == 1
    assert names.count("accept") == 1
    assert dict(request.headers)["mcp-method"] == "tools/call"
    reply: Any = answered.json
    assert reply["params"]["name"] == "caf\u00e9"
