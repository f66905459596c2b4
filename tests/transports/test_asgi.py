"""McpApp moves bytes between an ASGI server and the engine (docs/design/server.md §3).

Most tests drive the app with a scripted ASGI server side (``Peer``) so each message the app
receives and sends is visible; the last ones run it under a real uvicorn and inside Starlette.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.routing import Mount

import mcpkit
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.model import Revision
from mcpkit.server._http import HttpExchange, HttpRequest, Signal
from mcpkit.testing import TestClient, stateless_headers, stateless_request
from mcpkit.transports import McpApp
from mcpkit.transports._asgi import _WATCH_AFTER as WATCH_AFTER
from mcpkit.transports._asgi import Message, _below

Responder = Callable[[HttpRequest, HttpExchange, asyncio.Event], Awaitable[None]]


async def answer_ok(request: HttpRequest, exchange: HttpExchange, _: asyncio.Event) -> None:
    body = b'{"jsonrpc":"2.0","id":1,"result":{}}'
    await exchange.start(200, [(b"content-type", b"application/json")])
    await exchange.write(body, more=False)


class FakeEngine:
    """An HttpEngine that records what the transport hands it and answers with ``responder``."""

    def __init__(self, responder: Responder = answer_ok, limits: Limits = DEFAULT_LIMITS) -> None:
        self._limits = limits
        self.responder = responder
        self.requests: list[HttpRequest] = []
        self.disconnected: list[asyncio.Event] = []
        self.events: list[str] = []
        self.fail: set[str] = set()

    @property
    def limits(self) -> Limits:
        return self._limits

    async def startup(self) -> None:
        self.events.append("startup")
        if "startup" in self.fail:
            raise RuntimeError("secret startup detail")

    async def shutdown(self) -> None:
        self.events.append("shutdown")
        if "shutdown" in self.fail:
            raise RuntimeError("secret shutdown detail")

    async def handle_http(
        self, request: HttpRequest, exchange: HttpExchange, disconnected: asyncio.Event
    ) -> None:
        self.requests.append(request)
        self.disconnected.append(disconnected)
        await self.responder(request, exchange, disconnected)

    @property
    def request(self) -> HttpRequest:
        (request,) = self.requests
        return request


class Peer:
    """The server side of one ASGI connection: scripted incoming messages, recorded output.

    After the script, ``receive`` waits like uvicorn does: ``http.disconnect`` once the
    response is complete (or ``leave()`` was called).
    """

    def __init__(self, *incoming: Message) -> None:
        self.incoming = list(incoming)
        self.received = 0
        self.sent: list[Message] = []
        self.ended = asyncio.Event()

    async def receive(self) -> Message:
        self.received += 1
        if self.incoming:
            return self.incoming.pop(0)
        await self.ended.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        self.sent.append(message)
        if message["type"] == "http.response.body" and not message["more_body"]:
            self.ended.set()

    def leave(self) -> None:
        self.ended.set()

    @property
    def status(self) -> int:
        assert self.sent[0]["type"] == "http.response.start"
        status: int = self.sent[0]["status"]
        return status

    @property
    def body(self) -> bytes:
        return b"".join(m["body"] for m in self.sent if m["type"] == "http.response.body")


def http_scope(headers: Sequence[tuple[bytes, bytes]] = (), **changes: object) -> dict[str, Any]:
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": list(headers),
        "client": ("203.0.113.9", 40123),
        "server": ("127.0.0.1", 8000),
    }
    scope.update(changes)
    return scope


def chunk(body: bytes, *, more: bool = False) -> Message:
    return {"type": "http.request", "body": body, "more_body": more}


def run(engine: FakeEngine, peer: Peer, scope: dict[str, Any] | None = None) -> None:
    asyncio.run(McpApp(engine)(http_scope() if scope is None else scope, peer.receive, peer.send))


# --- building the HttpRequest ---------------------------------------------------------------


def test_request_carries_method_path_headers_body_and_client() -> None:
    engine = FakeEngine()
    peer = Peer(chunk(b'{"a":', more=True), chunk(b"", more=True), chunk(b"1}"))
    headers = [
        (b"Host", b"example"),
        (b"X-Caf\xe9", b"\xff\x00 v"),
        (b"x-rep", b"1"),
        (b"x-rep", b"2"),
    ]
    run(engine, peer, http_scope(headers, method="PUT"))
    request = engine.request
    assert request.method == "PUT"
    assert request.raw_path == "/mcp"
    assert request.headers == (
        ("host", "example"),
        ("x-caf\xe9", "\xff\x00 v"),
        ("x-rep", "1"),
        ("x-rep", "2"),
    )
    assert request.body == b'{"a":1}'
    assert request.body_too_large is False
    assert request.client == ("203.0.113.9", 40123)
    assert peer.status == 200
    assert peer.body == b'{"jsonrpc":"2.0","id":1,"result":{}}'


def test_raw_path_is_used_undecoded_and_without_a_query() -> None:
    engine = FakeEngine()
    scope = http_scope(path="/a b/\u00e9", raw_path=b"/a%20b/%C3%A9?x=1")
    run(engine, Peer(chunk(b"")), scope)
    assert engine.request.raw_path == "/a%20b/%C3%A9"


def test_path_stands_in_when_the_server_gives_no_raw_path() -> None:
    engine = FakeEngine()
    run(engine, Peer(chunk(b"")), http_scope(path="/caf\u00e9/mcp", raw_path=None))
    # The UTF-8 bytes of the path, read as latin-1 like every raw path.
    assert engine.request.raw_path == "/caf\u00c3\u00a9/mcp"


def test_missing_client_is_none() -> None:
    engine = FakeEngine()
    scope = http_scope()
    del scope["client"]
    run(engine, Peer(chunk(b"")), scope)
    assert engine.request.client is None


# --- body limit -----------------------------------------------------------------------------


def test_body_at_the_limit_is_read_whole() -> None:
    engine = FakeEngine(limits=Limits(max_request_bytes=10))
    run(engine, Peer(chunk(b"12345", more=True), chunk(b"67890")))
    assert engine.request.body == b"1234567890"
    assert engine.request.body_too_large is False


def test_body_past_the_limit_stops_the_read_and_is_dropped() -> None:
    peer = Peer(chunk(b"123456", more=True), chunk(b"78901", more=True), chunk(b"rest"))
    unread: list[int] = []

    async def answer(request: HttpRequest, exchange: HttpExchange, gone: asyncio.Event) -> None:
        unread.append(len(peer.incoming))
        await asyncio.sleep(0)  # the watcher's turn
        await answer_ok(request, exchange, gone)

    engine = FakeEngine(answer, limits=Limits(max_request_bytes=10))
    run(engine, peer)
    assert unread == [1]  # reading stopped at the chunk that crossed the limit
    assert engine.request.body == b""
    assert engine.request.body_too_large is True
    # The rest of the body was left to the disconnect watcher, which discards it.
    assert peer.incoming == []
    assert peer.status == 200


def test_content_length_over_the_limit_refuses_without_reading() -> None:
    peer = Peer(chunk(b"x" * 11))
    reads: list[int] = []

    async def answer(request: HttpRequest, exchange: HttpExchange, gone: asyncio.Event) -> None:
        reads.append(peer.received)
        await answer_ok(request, exchange, gone)

    engine = FakeEngine(answer, limits=Limits(max_request_bytes=10))
    run(engine, peer, http_scope([(b"content-length", b" 11 ")]))
    assert engine.request.body_too_large is True
    assert engine.request.body == b""
    assert reads == [0]  # nothing was read before the engine had the request
    assert peer.status == 200


def test_huge_content_length_is_refused_without_converting_it() -> None:
    engine = FakeEngine(limits=Limits(max_request_bytes=10))
    huge = b"9" * 100_000  # int() of this would hit the interpreter's digit limit
    run(engine, Peer(), http_scope([(b"content-length", huge)]))
    assert engine.request.body_too_large is True


@pytest.mark.parametrize("value", [b"0000000000010", b"10", b"9"])
def test_content_length_within_the_limit_reads_the_body(value: bytes) -> None:
    engine = FakeEngine(limits=Limits(max_request_bytes=10))
    headers = [(b"content-type", b"x"), (b"content-length", value)]
    run(engine, Peer(chunk(b"0123456789")), http_scope(headers))
    assert engine.request.body == b"0123456789"


def test_repeated_content_lengths_are_judged_one_by_one() -> None:
    engine = FakeEngine(limits=Limits(max_request_bytes=10))
    headers = [(b"content-length", b"5"), (b"content-length", b"11")]  # a short one first
    run(engine, Peer(chunk(b"abc")), http_scope(headers))
    assert engine.request.body_too_large is True


@pytest.mark.parametrize("value", [b"", b"-5", b"1e9", b"\xb2\xb2", b"abc"])
def test_malformed_content_length_is_left_to_the_read(value: bytes) -> None:
    engine = FakeEngine(limits=Limits(max_request_bytes=10))
    run(engine, Peer(chunk(b"abc")), http_scope([(b"content-length", value)]))
    assert engine.request.body == b"abc"
    assert engine.request.body_too_large is False


# --- disconnects ----------------------------------------------------------------------------


def test_disconnect_while_reading_skips_the_engine() -> None:
    engine = FakeEngine()
    peer = Peer(chunk(b"{", more=True), {"type": "http.disconnect"})
    run(engine, peer)
    assert engine.requests == []
    assert peer.sent == []


def test_disconnect_while_answering_sets_the_event_and_drops_failed_writes() -> None:
    peer = Peer(chunk(b"{}"))
    seen: list[bool] = []

    async def slow(request: HttpRequest, exchange: HttpExchange, gone: asyncio.Event) -> None:
        await exchange.start(200, [(b"content-type", b"text/event-stream")])
        await exchange.write(b"event: message\ndata: 1\n\n", more=True)
        peer.leave()
        await asyncio.wait_for(gone.wait(), 5)
        seen.append(gone.is_set())
        await exchange.write(b"late", more=False)  # the server refuses it: swallowed

    async def refusing_send(message: Message) -> None:
        if peer.ended.is_set():
            raise RuntimeError("connection closed")  # a server's own error type
        await peer.send(message)

    engine = FakeEngine(slow)
    asyncio.run(McpApp(engine)(http_scope(), peer.receive, refusing_send))
    assert seen == [True]
    assert engine.disconnected[0].is_set()
    assert [m["type"] for m in peer.sent] == ["http.response.start", "http.response.body"]


def test_oserror_from_send_counts_as_a_disconnect() -> None:
    peer = Peer(chunk(b"{}"))
    seen: list[bool] = []

    async def answer(request: HttpRequest, exchange: HttpExchange, gone: asyncio.Event) -> None:
        await exchange.start(200, [])
        seen.append(gone.is_set())
        await exchange.write(b"x", more=False)

    async def closed_send(message: Message) -> None:
        raise ConnectionResetError("peer gone")  # what ASGI 2.4 servers raise

    engine = FakeEngine(answer)
    asyncio.run(McpApp(engine)(http_scope(), peer.receive, closed_send))
    assert seen == [True]


def test_send_failure_while_connected_propagates() -> None:
    peer = Peer(chunk(b"{}"))

    async def broken_send(message: Message) -> None:
        raise RuntimeError("server bug")

    with pytest.raises(RuntimeError, match="server bug"):
        asyncio.run(McpApp(FakeEngine())(http_scope(), peer.receive, broken_send))


def test_body_write_failure_while_connected_propagates() -> None:
    peer = Peer(chunk(b"{}"))

    async def body_refusing_send(message: Message) -> None:
        if message["type"] == "http.response.body":
            raise RuntimeError("server bug")
        await peer.send(message)

    with pytest.raises(RuntimeError, match="server bug"):
        asyncio.run(McpApp(FakeEngine())(http_scope(), peer.receive, body_refusing_send))
    assert [m["type"] for m in peer.sent] == ["http.response.start"]


def test_engine_failure_propagates_and_the_watcher_is_cleaned_up() -> None:
    peer = Peer(chunk(b"{}"))
    watchers: list[asyncio.Task[Any]] = []

    async def failing(request: HttpRequest, exchange: HttpExchange, gone: asyncio.Event) -> None:
        assert isinstance(gone, Signal)
        gone.add_callback(lambda: None)  # a wait that lasts starts the watcher
        await asyncio.sleep(WATCH_AFTER * 2)
        current = asyncio.current_task()
        watchers.extend(task for task in asyncio.all_tasks() if task is not current)
        raise ValueError("engine bug")

    with pytest.raises(ValueError, match="engine bug"):
        run(FakeEngine(failing), peer)
    (watcher,) = watchers
    assert watcher.cancelled()


def test_watcher_is_cancelled_when_the_engine_returns() -> None:
    watchers: list[asyncio.Task[Any]] = []

    async def answer(request: HttpRequest, exchange: HttpExchange, gone: asyncio.Event) -> None:
        assert isinstance(gone, Signal)
        gone.add_callback(lambda: None)
        await asyncio.sleep(WATCH_AFTER * 2)
        current = asyncio.current_task()
        watchers.extend(task for task in asyncio.all_tasks() if task is not current)
        await answer_ok(request, exchange, gone)

    class SilentPeer(Peer):
        async def send(self, message: Message) -> None:
            self.sent.append(message)  # never ends: the watcher waits forever unless cancelled

    engine = FakeEngine(answer)
    run(engine, SilentPeer(chunk(b"{}")))
    (watcher,) = watchers
    assert watcher.cancelled()
    assert not engine.disconnected[0].is_set()


def test_receive_failure_in_the_watcher_is_raised() -> None:
    class BrokenPeer(Peer):
        async def receive(self) -> Message:
            if self.incoming:
                return self.incoming.pop(0)
            raise OSError("receive broke")

    async def waits(request: HttpRequest, exchange: HttpExchange, gone: asyncio.Event) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(gone.wait(), 0.01)  # the watcher runs and fails meanwhile
        assert not gone.is_set()
        await answer_ok(request, exchange, gone)

    with pytest.raises(OSError, match="receive broke"):
        run(FakeEngine(waits), BrokenPeer(chunk(b"{}")))


def test_an_engine_that_never_waits_starts_no_watcher() -> None:
    others: list[asyncio.Task[Any]] = []

    async def answer(request: HttpRequest, exchange: HttpExchange, gone: asyncio.Event) -> None:
        current = asyncio.current_task()
        others.extend(task for task in asyncio.all_tasks() if task is not current)
        await answer_ok(request, exchange, gone)
        others.extend(task for task in asyncio.all_tasks() if task is not current)

    peer = Peer(chunk(b"{}"))
    engine = FakeEngine(answer)
    run(engine, peer)
    assert others == []
    assert [message["type"] for message in peer.sent] == [
        "http.response.start",
        "http.response.body",
    ]
    assert not engine.disconnected[0].is_set()


def test_a_short_wait_starts_no_watcher() -> None:
    others: list[asyncio.Task[Any]] = []

    async def answer(request: HttpRequest, exchange: HttpExchange, gone: asyncio.Event) -> None:
        assert isinstance(gone, Signal)
        gone.add_callback(lambda: None)  # waits, but less than WATCH_AFTER
        await asyncio.sleep(0)
        current = asyncio.current_task()
        others.extend(task for task in asyncio.all_tasks() if task is not current)
        await answer_ok(request, exchange, gone)

    engine = FakeEngine(answer)
    run(engine, Peer(chunk(b"{}")))
    assert others == []
    alarm = engine.disconnected[0]._timer  # type: ignore[attr-defined]
    assert alarm is not None and alarm[2] is None  # set, then cancelled before it fired


def test_waiting_on_the_signal_watches_at_once_and_only_once() -> None:
    seen: list[int] = []

    async def answer(request: HttpRequest, exchange: HttpExchange, gone: asyncio.Event) -> None:
        for _ in range(2):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(gone.wait(), 0.001)
            names = [getattr(task.get_coro(), "__name__", "") for task in asyncio.all_tasks()]
            seen.append(names.count("_watch"))
        await answer_ok(request, exchange, gone)

    run(FakeEngine(answer), Peer(chunk(b"{}")))
    assert seen == [1, 1]


def test_waiting_twice_starts_one_watcher() -> None:
    seen: list[int] = []

    async def answer(request: HttpRequest, exchange: HttpExchange, gone: asyncio.Event) -> None:
        assert isinstance(gone, Signal)
        gone.add_callback(lambda: None)
        gone.add_callback(lambda: None)
        await asyncio.sleep(WATCH_AFTER * 2)
        current = asyncio.current_task()
        seen.append(len([task for task in asyncio.all_tasks() if task is not current]))
        await answer_ok(request, exchange, gone)

    run(FakeEngine(answer), Peer(chunk(b"{}")))
    assert seen == [1]


# --- lifespan and other scopes --------------------------------------------------------------


def lifespan(engine: FakeEngine, *incoming: str) -> list[Message]:
    sent: list[Message] = []
    queue = [{"type": kind} for kind in incoming]

    async def receive() -> Message:
        return queue.pop(0)

    async def send(message: Message) -> None:
        sent.append(message)

    asyncio.run(McpApp(engine)({"type": "lifespan"}, receive, send))
    return sent


def test_lifespan_runs_startup_and_shutdown() -> None:
    engine = FakeEngine()
    sent = lifespan(engine, "lifespan.startup", "lifespan.future", "lifespan.shutdown")
    assert sent == [{"type": "lifespan.startup.complete"}, {"type": "lifespan.shutdown.complete"}]
    assert engine.events == ["startup", "shutdown"]


def test_lifespan_startup_failure_is_reported_without_its_text() -> None:
    engine = FakeEngine()
    engine.fail.add("startup")
    with pytest.raises(RuntimeError, match="secret startup detail") as raised:
        lifespan(engine, "lifespan.startup")
    assert raised.value.args == ("secret startup detail",)
    assert engine.events == ["startup"]


def test_lifespan_failure_messages_carry_no_text() -> None:
    engine = FakeEngine()
    engine.fail.update({"startup", "shutdown"})
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    for event in ("lifespan.startup", "lifespan.shutdown"):

        async def receive(event: str = event) -> Message:
            return {"type": event}

        with pytest.raises(RuntimeError):
            asyncio.run(McpApp(engine)({"type": "lifespan"}, receive, send))
    assert sent == [
        {"type": "lifespan.startup.failed", "message": ""},
        {"type": "lifespan.shutdown.failed", "message": ""},
    ]


def test_websocket_is_closed_with_policy_violation() -> None:
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "websocket.connect"}

    async def send(message: Message) -> None:
        sent.append(message)

    asyncio.run(McpApp(FakeEngine())({"type": "websocket", "path": "/mcp"}, receive, send))
    assert sent == [{"type": "websocket.close", "code": 1008}]


def test_unknown_scope_is_left_alone() -> None:
    calls: list[str] = []

    async def receive() -> Message:
        calls.append("receive")
        return {}

    async def send(message: Message) -> None:
        calls.append("send")

    engine = FakeEngine()
    asyncio.run(McpApp(engine)({"type": "webtransport"}, receive, send))
    assert calls == []
    assert engine.requests == []
    assert engine.events == []


def test_repr_names_the_engine() -> None:
    class Named(FakeEngine):
        def __repr__(self) -> str:
            return "<engine>"

    assert repr(McpApp(Named())) == "McpApp(<engine>)"


# --- under real hosts -----------------------------------------------------------------------


async def answer_sse(request: HttpRequest, exchange: HttpExchange, _: asyncio.Event) -> None:
    if request.body_too_large:
        await exchange.start(413, [(b"content-length", b"0")])
        await exchange.write(b"", more=False)
        return
    await exchange.start(200, [(b"content-type", b"text/event-stream")])
    for number in range(3):
        await exchange.write(b"event: message\ndata: %d\n\n" % number, more=True)
    await exchange.write(b"data: %d\n\n" % len(request.body), more=False)


def test_under_uvicorn_with_lifespan_and_real_bodies() -> None:
    engine = FakeEngine(answer_sse, limits=Limits(max_request_bytes=300_000))
    config = uvicorn.Config(
        McpApp(engine), host="127.0.0.1", port=0, lifespan="on", log_level="warning", ws="none"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        assert engine.events == ["startup"]

        body = bytes(range(256)) * 1000  # 256,000 bytes: many receive() chunks
        status, text = post(port, "/mcp/x?q=1", body)
        assert status == 200
        assert text == b"".join(b"event: message\ndata: %d\n\n" % n for n in range(3)) + (
            b"data: 256000\n\n"
        )
        request = engine.requests[0]
        assert request.body == body
        assert request.raw_path == "/mcp/x"
        assert ("content-length", "256000") in request.headers
        assert request.client is not None and request.client[0] == "127.0.0.1"

        too_big = b"x" * 300_001
        assert post(port, "/mcp", too_big)[0] == 413  # refused from Content-Length alone
        assert engine.requests[1].body_too_large
        chunked = [b"x" * 100_000] * 4  # no Content-Length: refused once past the limit
        assert post(port, "/mcp", chunked)[0] == 413
        assert engine.requests[2].body_too_large
    finally:
        server.should_exit = True
        thread.join(10)
    assert not thread.is_alive()
    assert engine.events == ["startup", "shutdown"]


def post(port: int, path: str, body: bytes | list[bytes]) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        if isinstance(body, list):
            connection.request("POST", path, body=iter(body), encode_chunked=True)
        else:
            connection.request("POST", path, body=body)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_mounted_in_starlette_without_lifespan() -> None:
    engine = FakeEngine()
    host = Starlette(routes=[Mount("/api", app=McpApp(engine))])
    with TestClient(host) as client:
        response = client.post("/api/mcp", b"{}")
    assert response.status == 200
    assert response.json == {"jsonrpc": "2.0", "id": 1, "result": {}}
    # The engine routes the path below the mount (root_path honoured); Starlette's lifespan
    # never reaches a mounted app.
    assert engine.request.raw_path == "/mcp"
    assert engine.events == []


@pytest.mark.parametrize(
    ("raw_path", "root", "routed"),
    [
        (b"/ai/mcp", "/ai", b"/mcp"),
        (b"/ai/mcp", "/ai/", b"/mcp"),  # a root_path written with its slash
        (b"/ai", "/ai", b"/"),
        (b"/ai/mcp?x=1", "/ai", b"/mcp?x=1"),
        (b"/aim/mcp", "/ai", b"/aim/mcp"),  # only a whole segment is a prefix
        (b"/mcp", "/ai", b"/mcp"),  # a host that already cut the path
    ],
)
def test_the_mount_prefix_is_cut_from_the_routed_path(
    raw_path: bytes, root: str, routed: bytes
) -> None:
    assert _below(raw_path, root) == routed


def test_a_real_endpoint_mounted_under_a_prefix_answers_at_the_mounted_path() -> None:
    """``app.mount("/ai", server.asgi())`` with an endpoint at ``/mcp`` serves ``/ai/mcp``."""

    @mcpkit.endpoint(path="/mcp", name="mounted", version="1.0.0", revisions={Revision.V2026_07_28})
    class Mounted:
        @mcpkit.tool
        def ping(self) -> mcpkit.CompleteResult:
            return mcpkit.CompleteResult.from_tool_text("pong")

    server = mcpkit.Server(Mounted, allowed_hosts=["testserver"])
    host = Starlette(routes=[Mount("/ai", app=server.asgi())])
    with TestClient(host) as client:
        body = stateless_request("tools/call", {"name": "ping", "arguments": {}})
        response = client.post("/ai/mcp", body, headers=stateless_headers("tools/call", "ping"))
        assert response.status == 200
        answer: Any = response.json
        assert answer["result"]["content"] == [{"type": "text", "text": "pong"}]
        assert client.post("/mcp", body, headers=stateless_headers("tools/call")).status == 404
