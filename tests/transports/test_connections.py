"""The guarded HTTP protocol: the connection limits of the embedded server.

Most tests run a real ``mcpkit.Server`` on a background thread's own loop and speak raw HTTP to
it over loopback sockets: each limit at its value (served) and one past it (the fixed refusal).
The protocol is also driven through a fake transport, for what a real socket cannot produce
on demand: a client that stops reading, pipelining, the exact slicing of a chunk.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import os
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any

import httptools
import pytest
import uvicorn
from uvicorn.server import ServerState

from mcpkit import CompleteResult, Limits, Revision, Server, endpoint, tool
from mcpkit.errors import InvalidRequest, Overloaded
from mcpkit.protocol import error_message
from mcpkit.testing import stateless_headers, stateless_request
from mcpkit.transports._connections import (
    BAD_REQUEST,
    HEAD_ALLOWANCE,
    HEADERS_TOO_LARGE,
    OVERLOADED,
    REQUEST_TIMEOUT,
    URI_TOO_LONG,
    GuardedProtocol,
    guarded_protocol,
)

from .fakes import FakeTransport

WAIT = 10.0
SHORT = 0.3  # the timeouts under test
KiB = 1024
MiB = 1024 * KiB

RELEASE = threading.Event()  # lets the ``hold`` tool return


@endpoint(path="/mcp", name="guarded", version="1.0.0", revisions={Revision.V2026_07_28})
class Guarded:
    @tool(name="echo")
    def echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)

    @tool(name="hold")
    def hold(self) -> CompleteResult:
        RELEASE.wait(WAIT)
        return CompleteResult.from_tool_text("released")


def refusal(status: str, body: bytes, extra: bytes = b"") -> bytes:
    head = f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncache-control: no-store\r\n"
    tail = f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    return head.encode() + extra + tail.encode() + body


INVALID = error_message(None, InvalidRequest())
OVERLOADED_BODY = error_message(None, Overloaded())
EXPECTED = {
    400: refusal("400 Bad Request", INVALID),
    408: refusal("408 Request Timeout", INVALID),
    414: refusal("414 URI Too Long", INVALID),
    431: refusal("431 Request Header Fields Too Large", INVALID),
    503: refusal("503 Service Unavailable", OVERLOADED_BODY, b"retry-after: 1\r\n"),
}


def test_the_fixed_answers_echo_nothing_and_close() -> None:
    fixed = {
        400: BAD_REQUEST,
        408: REQUEST_TIMEOUT,
        414: URI_TOO_LONG,
        431: HEADERS_TOO_LARGE,
        503: OVERLOADED,
    }
    assert fixed == EXPECTED
    assert json.loads(INVALID) == {
        "jsonrpc": "2.0",
        "error": {"code": -32600, "message": "Invalid Request"},
    }
    assert json.loads(OVERLOADED_BODY)["error"] == {
        "code": -32603,
        "message": "Server overloaded; retry later",
    }


def test_each_server_gets_its_own_class_and_idle_registry() -> None:
    limits = Limits(max_header_bytes=2 * KiB, max_request_target_bytes=100)
    first, second = guarded_protocol(limits), guarded_protocol(limits)
    assert issubclass(first, GuardedProtocol) and first is not second
    assert first.idle_connections is not second.idle_connections
    assert first.head_budget == 2 * KiB + 100 + HEAD_ALLOWANCE
    assert (first.max_header_count, first.max_header_bytes, first.max_target_bytes) == (
        100,
        2 * KiB,
        100,
    )
    assert (first.header_timeout, first.body_timeout, first.keep_alive_timeout) == (60, 60, 5)
    assert (first.write_timeout, first.max_connections) == (30, 8192)


# --- a real server ------------------------------------------------------------------------------


class Captured(Server):
    """A ``Server`` that keeps its uvicorn server, so that a test can stop it."""

    uvicorn_server: Any = None

    def _uvicorn(self) -> Any:
        self.uvicorn_server = super()._uvicorn()
        return self.uvicorn_server


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


WATCHED = ("uvicorn", "uvicorn.error", "mcpkit", "asyncio")


class Running:
    """``Server(Guarded, port=0, limits=limits).serve()`` on its own thread and loop."""

    def __init__(self, limits: Limits) -> None:
        self.server = Captured(Guarded, port=0, limits=limits)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_until_complete, args=(self.server.serve(),), daemon=True
        )
        self.sockets: list[socket.socket] = []
        self.log = Records()
        self.thread.start()
        deadline = time.monotonic() + WAIT
        while self.server.engine.port is None:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.01)
        self.port: int = self.server.engine.port
        # uvicorn configures its loggers as it starts: watch them from now on.
        for name in WATCHED:
            logging.getLogger(name).addHandler(self.log)
        logging.getLogger("mcpkit").setLevel(logging.DEBUG)

    def connect(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=WAIT)
        self.sockets.append(sock)
        return sock

    def on_loop(self, work: Callable[[], Any]) -> Any:
        async def call() -> Any:
            return work()

        return asyncio.run_coroutine_threadsafe(call(), self.loop).result(WAIT)

    def open_connections(self) -> int:
        return int(self.on_loop(lambda: len(self.server.uvicorn_server.server_state.connections)))

    def live_timers(self) -> list[asyncio.TimerHandle]:
        """Timer handles, not cancelled, that call back into a guarded protocol."""

        def collect() -> list[asyncio.TimerHandle]:
            scheduled: list[asyncio.TimerHandle] = self.loop._scheduled  # type: ignore[attr-defined]
            return [
                handle
                for handle in scheduled
                if not handle.cancelled()
                and isinstance(getattr(handle._callback, "__self__", None), GuardedProtocol)  # type: ignore[attr-defined]
            ]

        result: list[asyncio.TimerHandle] = self.on_loop(collect)
        return result

    def stop(self) -> None:
        for sock in self.sockets:
            sock.close()
        deadline = time.monotonic() + WAIT
        while self.open_connections():
            assert time.monotonic() < deadline, "connections stayed open"
            time.sleep(0.01)
        assert self.live_timers() == []  # nothing is left armed once every connection closed
        for name in WATCHED:
            logging.getLogger(name).removeHandler(self.log)
        logging.getLogger("mcpkit").setLevel(logging.NOTSET)
        loud = [r.getMessage() for r in self.log.records if r.levelno > logging.DEBUG]
        self.loop.call_soon_threadsafe(setattr, self.server.uvicorn_server, "should_exit", True)
        self.thread.join(WAIT)
        assert not self.thread.is_alive()
        self.loop.close()
        assert loud == []  # no refusal is logged above DEBUG


@pytest.fixture
def serve() -> Iterator[Callable[..., Running]]:
    RELEASE.clear()
    started: list[Running] = []

    def start(**limits: Any) -> Running:
        running = Running(Limits(**limits))
        started.append(running)
        return running

    yield start
    RELEASE.set()
    for running in started:
        running.stop()


def mcp_request(
    port: int,
    *,
    target: str = "/mcp",
    extra: Sequence[tuple[str, str]] = (),
    text: str = "hi",
    tool_name: str = "echo",
) -> tuple[bytes, bytes]:
    """The head and body of a 2026-07-28 ``tools/call``."""
    arguments = {"text": text} if tool_name == "echo" else {}
    body = json.dumps(stateless_request("tools/call", {"name": tool_name, "arguments": arguments}))
    headers = [
        ("Host", f"127.0.0.1:{port}"),
        *stateless_headers("tools/call", tool_name).items(),
        ("Content-Length", str(len(body))),
        *extra,
    ]
    lines = [f"POST {target} HTTP/1.1", *(f"{name}: {value}" for name, value in headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode(), body.encode()


def field_bytes(head: bytes) -> tuple[int, int]:
    """A head's header field count and bytes as the limits count them."""
    fields = head.split(b"\r\n")[1:-2]
    return len(fields), sum(len(field) + 2 for field in fields)  # "name: value" + CRLF


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes (a reset, after our late bytes, too)."""
    received = b""
    try:
        while chunk := sock.recv(65_536):
            received += chunk
    except ConnectionResetError:
        pass
    return received


def read_response(sock: socket.socket) -> tuple[int, bytes]:
    """One response with a ``content-length`` (what the server writes): status and body."""
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = sock.recv(65_536)
        assert chunk, f"closed before a response: {received!r}"
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    fields = dict(line.lower().split(": ", 1) for line in lines[1:])
    length = int(fields["content-length"])
    while len(body) < length:
        chunk = sock.recv(65_536)
        assert chunk
        body += chunk
    assert len(body) == length
    return int(lines[0].split()[1]), body


def answered(body: bytes, text: str = "hi") -> bool:
    message = json.loads(body)
    return bool(message["result"]["content"] == [{"type": "text", "text": text}])


def is_closed(sock: socket.socket, within: float = WAIT) -> bool:
    sock.settimeout(within)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    finally:
        sock.settimeout(WAIT)


def exchange(running: Running, head: bytes, body: bytes = b"") -> bytes:
    with running.connect() as sock:
        sock.sendall(head + body)
        return read_until_closed(sock)


# --- head limits --------------------------------------------------------------------------------


def test_header_count_at_the_limit_is_served_and_one_more_is_431(
    serve: Callable[..., Running],
) -> None:
    running = serve(max_header_count=10)
    head, body = mcp_request(running.port, extra=[("X-A", "1"), ("X-B", "2"), ("X-C", "3")])
    assert field_bytes(head)[0] == 10
    with running.connect() as sock:
        sock.sendall(head + body)
        status, answer = read_response(sock)
    assert status == 200 and answered(answer)
    head, body = mcp_request(
        running.port, extra=[("X-A", "1"), ("X-B", "2"), ("X-C", "3"), ("X-D", "4")]
    )
    assert field_bytes(head)[0] == 11
    assert exchange(running, head, body) == EXPECTED[431]


def test_header_bytes_at_the_limit_are_served_and_one_more_is_431(
    serve: Callable[..., Running],
) -> None:
    running = serve(max_header_bytes=2 * KiB)
    plain, _ = mcp_request(running.port, extra=[("X-Pad", "")])
    pad = "p" * (2 * KiB - field_bytes(plain)[1])
    head, body = mcp_request(running.port, extra=[("X-Pad", pad)])
    assert field_bytes(head)[1] == 2 * KiB
    with running.connect() as sock:
        sock.sendall(head + body)
        status, answer = read_response(sock)
    assert status == 200 and answered(answer)
    head, body = mcp_request(running.port, extra=[("X-Pad", pad + "p")])
    assert exchange(running, head, body) == EXPECTED[431]


def test_target_bytes_at_the_limit_are_served_and_one_more_is_414(
    serve: Callable[..., Running],
) -> None:
    running = serve(max_request_target_bytes=64)
    target = "/mcp?q=" + "x" * (64 - 7)
    assert len(target) == 64
    head, body = mcp_request(running.port, target=target)
    with running.connect() as sock:
        sock.sendall(head + body)
        status, answer = read_response(sock)
    assert status == 200 and answered(answer)
    head, body = mcp_request(running.port, target=target + "x")
    assert exchange(running, head, body) == EXPECTED[414]


def vm_rss() -> int:
    with open(f"/proc/{os.getpid()}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * KiB
    raise AssertionError("no VmRSS")


def test_an_unterminated_huge_header_is_refused_promptly_without_growing_memory(
    serve: Callable[..., Running],
) -> None:
    running = serve()
    chunk = b"a" * MiB
    before = vm_rss()
    started = time.monotonic()
    sent = 0
    with running.connect() as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: x\r\nX-Huge: ")
        with pytest.raises((BrokenPipeError, ConnectionResetError)):
            while sent < 100 * MiB:
                sock.sendall(chunk)
                sent += len(chunk)
        answer = sock.recv(65_536)
    assert time.monotonic() - started < 5.0
    assert sent < 100 * MiB  # refused long before the whole header was sent
    assert answer == EXPECTED[431]
    assert vm_rss() - before < 8 * MiB


def test_an_unterminated_long_target_is_refused_without_waiting(
    serve: Callable[..., Running],
) -> None:
    running = serve(max_request_target_bytes=64)
    with running.connect() as sock:
        sock.sendall(b"POST /" + b"t" * 4096)
        assert read_until_closed(sock) == EXPECTED[414]


def test_a_head_that_fills_the_budget_in_one_chunk_with_its_body_is_served(
    serve: Callable[..., Running],
) -> None:
    """A body arriving with its head is not charged to the head: 1 MiB of body and a head that
    takes almost the whole budget, sent at once, are served."""
    running = serve(max_header_bytes=1 * KiB, max_request_target_bytes=16)
    text = "t" * MiB
    plain, _ = mcp_request(running.port, text=text, extra=[("X-Pad", "")])
    pad = "p" * (1 * KiB - field_bytes(plain)[1])
    head, body = mcp_request(running.port, text=text, extra=[("X-Pad", pad)])
    with running.connect() as sock:
        sock.sendall(head + body)
        status, answer = read_response(sock)
    assert status == 200 and answered(answer, text)


@pytest.mark.parametrize(
    "line",
    [
        b"POST http://evil.example/mcp HTTP/1.1",
        b"POST http://127.0.0.1/mcp HTTP/1.1",
        b"OPTIONS * HTTP/1.1",
        b"CONNECT evil.example:443 HTTP/1.1",
    ],
)
def test_only_the_origin_form_of_the_target_is_served(
    serve: Callable[..., Running], line: bytes
) -> None:
    running = serve()
    head, body = mcp_request(running.port)
    head = line + head[head.index(b"\r\n") :]
    assert exchange(running, head, body) == EXPECTED[400]


def test_an_upgrade_is_refused(serve: Callable[..., Running]) -> None:
    running = serve()
    head, body = mcp_request(running.port, extra=[("Connection", "upgrade"), ("Upgrade", "h2c")])
    assert exchange(running, head, body) == EXPECTED[400]
    websocket = (
        f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{running.port}\r\nConnection: Upgrade\r\n"
        "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    )
    assert exchange(running, websocket.encode()) == EXPECTED[400]


@pytest.mark.parametrize(
    "raw",
    [
        b"GARBAGE\r\n\r\n",
        b"POST /mcp HTTP/9.9\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nBad Name: x\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
        b"POST /\xff HTTP/1.1\r\nHost: x\r\n\r\n",
    ],
)
def test_a_parse_error_is_the_fixed_400_and_not_logged(
    serve: Callable[..., Running], raw: bytes
) -> None:
    running = serve()
    assert exchange(running, raw) == EXPECTED[400]
    logged = [(r.name, r.levelno, r.getMessage()) for r in running.log.records]
    assert ("mcpkit.http", logging.DEBUG, "mcpkit: HTTP 400, connection closed") in logged
    # (the fixture checks that nothing was logged above DEBUG)


# --- deadlines ----------------------------------------------------------------------------------


def trickle(sock: socket.socket, data: bytes, pause: float) -> bytes:
    """Send ``data`` a byte at a time until the server answers or closes; what it answered."""
    sock.settimeout(pause)
    try:
        for byte in data:
            sock.sendall(bytes([byte]))
            try:
                received = sock.recv(65_536)
            except TimeoutError:
                continue
            sock.settimeout(WAIT)
            return received + read_until_closed(sock)
    except (BrokenPipeError, ConnectionResetError):  # it answered and closed between two bytes
        sock.settimeout(WAIT)
        return read_until_closed(sock)
    raise AssertionError("the server never answered")


def test_a_slow_head_is_served_within_the_header_timeout(serve: Callable[..., Running]) -> None:
    running = serve(header_timeout_seconds=SHORT)
    head, body = mcp_request(running.port)
    with running.connect() as sock:
        for start in range(0, len(head), len(head) // 4 + 1):
            sock.sendall(head[start : start + len(head) // 4 + 1])
            time.sleep(SHORT / 8)
        sock.sendall(body)
        status, answer = read_response(sock)
    assert status == 200 and answered(answer)


def test_a_slowloris_head_gets_408_at_the_header_timeout(serve: Callable[..., Running]) -> None:
    running = serve(header_timeout_seconds=SHORT)
    head, _ = mcp_request(running.port)
    with running.connect() as sock:
        started = time.monotonic()
        answer = trickle(sock, head, 0.05)
        elapsed = time.monotonic() - started
    assert answer == EXPECTED[408]
    assert SHORT * 0.9 <= elapsed < SHORT + 2.0


def test_a_silent_connection_gets_408_at_the_header_timeout(
    serve: Callable[..., Running],
) -> None:
    running = serve(header_timeout_seconds=SHORT)
    with running.connect() as sock:
        started = time.monotonic()
        answer = read_until_closed(sock)
        elapsed = time.monotonic() - started
    assert answer == EXPECTED[408]
    assert SHORT * 0.9 <= elapsed < SHORT + 2.0


def test_the_next_head_on_a_kept_alive_connection_has_its_own_deadline(
    serve: Callable[..., Running],
) -> None:
    running = serve(header_timeout_seconds=SHORT, keep_alive_timeout_seconds=WAIT)
    head, body = mcp_request(running.port)
    with running.connect() as sock:
        sock.sendall(head + body)
        status, answer = read_response(sock)
        assert status == 200 and answered(answer)
        time.sleep(SHORT * 1.5)  # idle, under the keep-alive timeout
        started = time.monotonic()
        sock.sendall(head[:20])
        answer = read_until_closed(sock)
        elapsed = time.monotonic() - started
    assert answer == EXPECTED[408]
    assert SHORT * 0.9 <= elapsed < SHORT + 2.0


def test_a_body_within_the_body_timeout_is_served(serve: Callable[..., Running]) -> None:
    running = serve(body_timeout_seconds=SHORT)
    head, body = mcp_request(running.port)
    with running.connect() as sock:
        sock.sendall(head + body[:10])
        time.sleep(SHORT / 3)
        sock.sendall(body[10:])
        status, answer = read_response(sock)
    assert status == 200 and answered(answer)


def test_a_trickled_body_gets_408_at_the_body_timeout(serve: Callable[..., Running]) -> None:
    running = serve(body_timeout_seconds=SHORT)
    head, body = mcp_request(running.port)
    with running.connect() as sock:
        sock.sendall(head)
        started = time.monotonic()
        answer = trickle(sock, body, 0.05)
        elapsed = time.monotonic() - started
    assert answer == EXPECTED[408]
    assert SHORT * 0.9 <= elapsed < SHORT + 2.0


def test_an_idle_kept_alive_connection_is_closed_at_the_keep_alive_timeout(
    serve: Callable[..., Running],
) -> None:
    running = serve(keep_alive_timeout_seconds=SHORT)
    head, body = mcp_request(running.port)
    with running.connect() as sock:
        sock.sendall(head + body)
        assert read_response(sock)[0] == 200
        time.sleep(SHORT / 3)
        sock.sendall(head + body)  # within the timeout: served on the same connection
        assert read_response(sock)[0] == 200
        started = time.monotonic()
        assert read_until_closed(sock) == b""  # closed without an answer
        elapsed = time.monotonic() - started
    assert SHORT * 0.9 <= elapsed < SHORT + 2.0


# --- the connection cap -------------------------------------------------------------------------


def test_at_the_cap_the_oldest_idle_connection_makes_room(serve: Callable[..., Running]) -> None:
    running = serve(max_connections=4)
    head, body = mcp_request(running.port)
    idle = []
    for _ in range(4):
        sock = running.connect()
        sock.sendall(head + body)
        assert read_response(sock)[0] == 200  # served, then idle in this order
        idle.append(sock)
    fifth = running.connect()
    fifth.sendall(head + body)
    status, answer = read_response(fifth)
    assert status == 200 and answered(answer)
    assert is_closed(idle[0])  # the oldest idle one, closed without an answer
    assert not any(is_closed(sock, within=0.1) for sock in idle[1:])
    assert running.open_connections() == 4


def test_a_connection_that_never_sent_a_byte_is_idle(serve: Callable[..., Running]) -> None:
    running = serve(max_connections=4)
    silent = [running.connect() for _ in range(4)]
    deadline = time.monotonic() + WAIT
    while running.open_connections() < 4:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    head, body = mcp_request(running.port)
    fifth = running.connect()
    fifth.sendall(head + body)
    assert read_response(fifth)[0] == 200
    assert is_closed(silent[0])
    assert not any(is_closed(sock, within=0.1) for sock in silent[1:])


def test_at_the_cap_with_none_idle_a_new_connection_gets_503(
    serve: Callable[..., Running],
) -> None:
    running = serve(max_connections=4)
    hold_head, hold_body = mcp_request(running.port, tool_name="hold")
    busy = []
    for _ in range(2):  # a request in flight
        sock = running.connect()
        sock.sendall(hold_head + hold_body)
        busy.append(sock)
    for _ in range(2):  # a partial head
        sock = running.connect()
        sock.sendall(hold_head[:30])
        busy.append(sock)
    deadline = time.monotonic() + WAIT
    while running.open_connections() < 4 or not running.on_loop(
        lambda: not running.server.uvicorn_server.config.http.idle_connections
    ):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    with running.connect() as fifth:
        assert read_until_closed(fifth) == EXPECTED[503]
    assert running.open_connections() == 4  # the refused one was never counted
    RELEASE.set()
    for sock in busy[:2]:
        status, answer = read_response(sock)
        assert status == 200 and answered(answer, "released")
    assert not any(is_closed(sock, within=0.1) for sock in busy)


# --- the protocol on a fake transport -----------------------------------------------------------


class App:
    """Answers each request with its body once ``gate`` is open; records what it received."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.gate.set()
        self.received: list[dict[str, Any]] = []

    async def __call__(
        self,
        scope: dict[str, Any],
        receive: Callable[[], Awaitable[dict[str, Any]]],
        send: Callable[[dict[str, Any]], Awaitable[None]],
    ) -> None:
        body = b""
        while True:
            message = await receive()
            self.received.append(message)
            if message["type"] == "http.disconnect":
                return
            body += message["body"]
            if not message["more_body"]:
                break
        await self.gate.wait()
        length = str(len(body)).encode()
        await send(
            {"type": "http.response.start", "status": 200, "headers": [(b"content-length", length)]}
        )
        await send({"type": "http.response.body", "body": body})


class Harness:
    def __init__(self, limits: Limits, app: App | None = None) -> None:
        self.app = app or App()
        self.config = uvicorn.Config(self.app, lifespan="off", log_config=None, access_log=False)
        self.state = ServerState()
        self.cls = guarded_protocol(limits)

    def connect(self) -> tuple[GuardedProtocol, FakeTransport]:
        protocol = self.cls(self.config, self.state, {}, asyncio.get_running_loop())
        transport = FakeTransport()
        protocol.connection_made(transport)
        return protocol, transport

    def lose(self, protocol: GuardedProtocol, exc: Exception | None = None) -> None:
        protocol.connection_lost(exc)
        assert protocol._keep_alive_timer is None  # no timer outlives its connection


def post(body: bytes = b"{}", target: bytes = b"/mcp", extra: bytes = b"") -> bytes:
    return (
        b"POST " + target + b" HTTP/1.1\r\nHost: x\r\n" + extra
        + b"Content-Length: %d\r\n\r\n" % len(body) + body
    )  # fmt: skip


def timers(protocol: GuardedProtocol) -> list[asyncio.TimerHandle | float | None]:
    """The deadlines armed: the head's, the body's, the writer's and the keep-alive one."""
    return [
        protocol._header_timer,
        protocol._body_timer,
        protocol._write_timer,
        protocol._keep_alive_until,
    ]


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(scenario())  # type: ignore[arg-type]


def test_a_request_in_one_chunk_arms_no_timer() -> None:
    async def scenario() -> None:
        app = App()
        harness = Harness(Limits(), app)
        protocol, transport = harness.connect()
        assert protocol._header_timer is not None  # the first head's deadline
        assert list(harness.cls.idle_connections) == [protocol]
        app.gate.clear()
        protocol.data_received(post(b"one"))
        assert protocol.idle_connections == {} and protocol._header_timer is None
        app.gate.set()
        await settle()
        assert transport.written.endswith(b"\r\n\r\none")
        assert list(harness.cls.idle_connections) == [protocol]
        assert protocol._keep_alive_until is not None  # while idle
        app.gate.clear()
        protocol.data_received(post(b"two"))
        assert timers(protocol) == [None, None, None, None]  # nothing armed while busy
        app.gate.set()
        await settle()
        assert transport.written.endswith(b"\r\n\r\ntwo")
        harness.lose(protocol)
        assert timers(protocol) == [None, None, None, None]
        assert harness.cls.idle_connections == {}

    run(scenario)


class CountingParser:
    """The protocol's parser, recording the size of each piece fed to it."""

    def __init__(self, parser: Any) -> None:
        self.parser = parser
        self.fed: list[int] = []

    def feed_data(self, data: bytes | memoryview) -> None:
        self.fed.append(len(data))
        self.parser.feed_data(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.parser, name)


def test_a_chunk_past_the_head_budget_is_fed_head_first() -> None:
    async def scenario() -> None:
        harness = Harness(Limits(max_header_bytes=1 * KiB, max_request_target_bytes=16))
        budget = harness.cls.head_budget
        protocol, transport = harness.connect()
        parser = CountingParser(protocol.parser)
        protocol.parser = parser  # type: ignore[assignment]
        first, second = post(b"b" * (3 * budget)), post(b"x" * 5)
        protocol.data_received(first + second)  # the first body goes past the budget
        assert parser.fed == [budget, len(first) + len(second) - budget]
        await settle()
        await settle()
        assert transport.written.count(b"HTTP/1.1 200 OK") == 2
        assert transport.written.endswith(b"xxxxx")
        parser.fed.clear()
        small = post(b"y")  # under the budget: fed whole, uncopied
        protocol.data_received(small)
        assert parser.fed == [len(small)]
        await settle()
        parser.fed.clear()
        # A head alone past the budget is cut at it, and refused.
        protocol.data_received(post(extra=b"X-Pad: " + b"p" * budget + b"\r\n"))
        assert parser.fed == [budget]
        assert transport.written.endswith(HEADERS_TOO_LARGE) and transport.closing
        harness.lose(protocol)
        assert timers(protocol) == [None, None, None, None]

    run(scenario)


def test_two_heads_in_one_chunk_are_each_charged_to_their_own_budget() -> None:
    async def scenario() -> None:
        harness = Harness(Limits(max_header_bytes=1 * KiB, max_request_target_bytes=16))
        budget = harness.cls.head_budget
        protocol, transport = harness.connect()
        first = post(b"1", extra=b"X-Pad: " + b"p" * 900 + b"\r\n")
        second = post(b"2", extra=b"X-Pad: " + b"p" * 900 + b"\r\n")
        assert len(first) <= budget < len(first + second)
        protocol.data_received(first + second)
        await settle()
        await settle()
        assert transport.written.count(b"HTTP/1.1 200 OK") == 2 and not transport.closing
        # A budget used up exactly by a partial head: the next byte is refused.
        partial = b"POST /mcp HTTP/1.1\r\nX-Pad: " + b"p" * budget
        protocol.data_received(partial[:budget])
        assert not transport.closing and protocol._head_room == 0
        protocol.data_received(b"p")
        assert transport.written.endswith(HEADERS_TOO_LARGE) and transport.closing
        harness.lose(protocol)

    run(scenario)


@pytest.mark.parametrize(
    ("partial", "answer"),
    [
        (b"POST /mcp HTTP/1.1\r\n" + b"X: y\r\n" * 12, HEADERS_TOO_LARGE),  # 11 parsed
        (b"POST /mcp HTTP/1.1\r\nX: " + b"p" * 1020 + b"\r\nY: z", HEADERS_TOO_LARGE),
        (b"POST /" + b"t" * 64, URI_TOO_LONG),
    ],
)
def test_an_incomplete_head_past_a_limit_is_refused_at_once(partial: bytes, answer: bytes) -> None:
    """Not when the head ends or times out: as soon as a chunk leaves it over a limit."""

    async def scenario() -> None:
        limits = Limits(max_header_count=10, max_header_bytes=1 * KiB, max_request_target_bytes=64)
        harness = Harness(limits)
        protocol, transport = harness.connect()
        assert len(partial) <= harness.cls.head_budget
        protocol.data_received(partial)
        assert bytes(transport.written) == answer and transport.closing
        harness.lose(protocol)
        assert timers(protocol) == [None, None, None, None]

    run(scenario)


def test_an_incomplete_head_within_the_limits_waits() -> None:
    async def scenario() -> None:
        limits = Limits(max_header_count=10, max_header_bytes=1 * KiB, max_request_target_bytes=64)
        harness = Harness(limits)
        protocol, transport = harness.connect()
        partial = b"POST /" + b"t" * 63 + b" HTTP/1.1\r\n" + b"X: y\r\n" * 8 + b"Z: " + b"z" * 900
        protocol.data_received(partial)
        assert transport.written == b"" and not transport.closing
        protocol.data_received(b"\r\nContent-Length: 0\r\n\r\n")  # the tenth field ends it
        await settle()
        assert transport.written.startswith(b"HTTP/1.1 200 OK")
        harness.lose(protocol)

    run(scenario)


def test_a_head_pipelined_behind_a_body_in_one_chunk_is_still_checked() -> None:
    """The bytes of a head that begins inside a chunk after a body are not charged to its
    budget, but the head's fields are still checked and counted exactly."""

    async def scenario() -> None:
        harness = Harness(Limits(max_header_bytes=1 * KiB, max_request_target_bytes=16))
        protocol, transport = harness.connect()
        pad = b"X-Pad: " + b"p" * 900 + b"\r\n"
        protocol.data_received(post(b"b" * 5000))
        await settle()
        protocol.data_received(post(b"b" * 5000)[:-10])
        protocol.data_received(b"b" * 10 + post(b"1", extra=pad) + post(b"2", extra=pad)[:-30])
        await settle()
        await settle()
        assert transport.written.count(b"HTTP/1.1 200 OK") == 3  # the last head ends later
        assert not transport.closing
        # The next head, over the limit, begins in the chunk that ends the last one: refused,
        # and without an answer, as the last one's is still owed.
        written = len(transport.written)
        protocol.data_received(post(b"2", extra=pad)[-30:] + post(b"3", extra=pad + pad))
        assert transport.closing and protocol.cycle.disconnected
        await settle()
        assert len(transport.written) == written
        harness.lose(protocol)

    run(scenario)


def test_a_refusal_never_answers_for_an_earlier_request() -> None:
    async def scenario() -> None:
        app = App()
        harness = Harness(Limits(), app)
        protocol, transport = harness.connect()
        app.gate.clear()
        protocol.data_received(post(b"first"))
        await settle()
        protocol.data_received(b"GET http://evil.example/ HTTP/1.1\r\n\r\n")  # pipelined
        assert transport.written == b"" and transport.closing  # a 400 would answer the first
        assert protocol.cycle.disconnected
        app.gate.set()
        await settle()
        assert transport.written == b""  # the app's late answer goes nowhere
        assert app.received == [{"type": "http.request", "body": b"first", "more_body": False}]
        harness.lose(protocol)

    run(scenario)


def test_a_body_timeout_disconnects_the_app_and_answers_408() -> None:
    async def scenario() -> None:
        app = App()
        harness = Harness(Limits(body_timeout_seconds=0.05), app)
        protocol, transport = harness.connect()
        protocol.data_received(post(b"abcdef")[:-3])
        assert protocol._body_timer is not None and protocol._header_timer is None
        protocol.data_received(b"d")  # the deadline runs from the end of the head
        body_timer = protocol._body_timer
        assert body_timer is not None
        await asyncio.sleep(0.1)
        assert bytes(transport.written) == REQUEST_TIMEOUT and transport.closing
        assert protocol._body_timer is None
        await settle()
        assert app.received == [  # the app read the first part as soon as it arrived
            {"type": "http.request", "body": b"abc", "more_body": True},
            {"type": "http.request", "body": b"d", "more_body": True},
            {"type": "http.disconnect"},
        ]
        harness.lose(protocol)
        assert timers(protocol) == [None, None, None, None]

    run(scenario)


def test_a_connection_lost_mid_body_leaves_no_deadline() -> None:
    async def scenario() -> None:
        app = App()
        harness = Harness(Limits(), app)
        protocol, _ = harness.connect()
        protocol.data_received(post(b"abcdef")[:-3])
        assert protocol._body_timer is not None
        harness.lose(protocol, ConnectionResetError())
        assert timers(protocol) == [None, None, None, None]
        await settle()
        assert app.received[-1] == {"type": "http.disconnect"}

    run(scenario)


def test_a_body_timeout_after_an_early_answer_still_answers_408() -> None:
    async def scenario() -> None:
        class Early(App):
            async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
                await send(
                    {"type": "http.response.start", "status": 413,
                     "headers": [(b"content-length", b"0")]}
                )  # fmt: skip
                await send({"type": "http.response.body", "body": b""})

        harness = Harness(Limits(body_timeout_seconds=0.05), Early())
        protocol, transport = harness.connect()
        protocol.data_received(post(b"abcdef")[:-3])
        await settle()
        assert transport.written.startswith(b"HTTP/1.1 413 ")
        assert protocol.idle_connections == {}  # the body is still arriving: not idle
        protocol.data_received(b"d")
        await asyncio.sleep(0.1)
        assert transport.written.endswith(REQUEST_TIMEOUT) and transport.closing
        harness.lose(protocol, ConnectionResetError())
        assert timers(protocol) == [None, None, None, None]

    run(scenario)


def test_a_body_timeout_while_an_earlier_response_is_owed_closes_without_an_answer() -> None:
    async def scenario() -> None:
        app = App()
        harness = Harness(Limits(body_timeout_seconds=0.05), app)
        protocol, transport = harness.connect()
        app.gate.clear()
        protocol.data_received(post(b"first") + post(b"second")[:-2])  # pipelined, partial
        await asyncio.sleep(0.1)
        assert transport.written == b"" and transport.closing
        harness.lose(protocol)

    run(scenario)


def test_a_stalled_reader_is_aborted_at_the_write_timeout() -> None:
    async def scenario() -> None:
        harness = Harness(Limits(write_timeout_seconds=0.05))
        protocol, transport = harness.connect()
        protocol.pause_writing()
        first = protocol._write_timer
        protocol.pause_writing()
        assert first is not None and protocol._write_timer is first
        protocol.resume_writing()  # the client read: no deadline
        assert protocol._write_timer is None and first.cancelled()
        protocol.resume_writing()
        protocol.pause_writing()
        await asyncio.sleep(0.1)
        assert transport.aborted and protocol._write_timer is None
        harness.lose(protocol, ConnectionResetError())
        assert timers(protocol) == [None, None, None, None]

    run(scenario)


def test_a_closing_connection_with_unsent_bytes_gets_the_write_deadline() -> None:
    async def scenario() -> None:
        harness = Harness(Limits(write_timeout_seconds=0.05))
        protocol, transport = harness.connect()
        transport.buffered = 10
        protocol.data_received(b"GARBAGE\r\n\r\n")
        assert transport.closing and protocol._write_timer is not None
        protocol.pause_writing()
        protocol.resume_writing()  # drained below the mark, not out: the deadline stays
        assert protocol._write_timer is not None
        await asyncio.sleep(0.1)
        assert transport.aborted
        harness.lose(protocol)

        # A response that closes its connection, its last bytes still buffered.
        protocol, transport = harness.connect()
        transport.buffered = 10
        protocol.data_received(post(b"bye", extra=b"Connection: close\r\n"))
        await settle()
        assert transport.closing and protocol._write_timer is not None
        harness.lose(protocol)
        assert timers(protocol) == [None, None, None, None]

        # Nothing buffered: no deadline.
        protocol, transport = harness.connect()
        protocol.data_received(post(b"bye", extra=b"Connection: close\r\n"))
        await settle()
        assert transport.closing and protocol._write_timer is None
        harness.lose(protocol)

    run(scenario)


def test_the_keep_alive_timeout_closes_and_forgets_an_idle_connection() -> None:
    async def scenario() -> None:
        harness = Harness(Limits(keep_alive_timeout_seconds=0.05))
        protocol, transport = harness.connect()
        protocol.data_received(post())
        await settle()
        assert list(harness.cls.idle_connections) == [protocol]
        await asyncio.sleep(0.1)
        assert transport.closing and transport.written.count(b"HTTP/1.1") == 1
        assert harness.cls.idle_connections == {} and protocol._keep_alive_until is None
        harness.lose(protocol)

    run(scenario)


def test_the_keep_alive_timeout_runs_from_the_last_response_with_one_timer() -> None:
    async def scenario() -> None:
        harness = Harness(Limits(keep_alive_timeout_seconds=0.2))
        protocol, transport = harness.connect()
        protocol.data_received(post(b"one"))
        timer = protocol._keep_alive_timer
        assert timer is not None
        await asyncio.sleep(0.1)
        protocol.data_received(post(b"two"))  # the timer stays, the deadline moves
        await asyncio.sleep(0)  # the answer is written as the loop's turn ends (the outbox)
        assert protocol._keep_alive_timer is timer and transport.written.endswith(b"two")
        await asyncio.sleep(0.15)  # the first deadline has passed: set again, not closed
        assert not transport.closing and protocol._keep_alive_timer is not timer
        await asyncio.sleep(0.1)
        assert transport.closing and harness.cls.idle_connections == {}
        harness.lose(protocol)

    run(scenario)


def test_a_request_in_progress_outlasts_the_keep_alive_timeout() -> None:
    async def scenario() -> None:
        app = App()
        harness = Harness(Limits(keep_alive_timeout_seconds=0.05), app)
        protocol, transport = harness.connect()
        protocol.data_received(post(b"one"))
        app.gate.clear()
        protocol.data_received(post(b"two"))
        await asyncio.sleep(0.1)  # the timer fired while busy, and rests
        assert not transport.closing and protocol._keep_alive_timer is None
        app.gate.set()
        await settle()
        assert transport.written.endswith(b"two") and protocol._keep_alive_timer is not None
        await asyncio.sleep(0.1)
        assert transport.closing
        harness.lose(protocol)

    run(scenario)


def test_the_cap_evicts_the_oldest_idle_connection_or_answers_503() -> None:
    async def scenario() -> None:
        harness = Harness(Limits(max_connections=2))
        (a, a_transport), (b, b_transport) = harness.connect(), harness.connect()
        assert list(harness.cls.idle_connections) == [a, b]
        a.data_received(post())
        await settle()
        assert list(harness.cls.idle_connections) == [b, a]  # a is idle again, newest
        c, _ = harness.connect()
        assert b_transport.closing and b_transport.written == b"" and not a_transport.closing
        harness.lose(b)
        assert list(harness.cls.idle_connections) == [a, c]
        a.data_received(b"POST /mcp HTTP/1.1\r\n")
        c.data_received(b"POST /mcp HTTP/1.1\r\n")
        assert harness.cls.idle_connections == {}
        refused, transport = harness.connect()
        assert bytes(transport.written) == OVERLOADED and transport.closing
        assert len(harness.state.connections) == 2  # never counted
        harness.lose(refused)
        for protocol in (a, c):
            harness.lose(protocol)
            assert timers(protocol) == [None, None, None, None]

    run(scenario)


def test_the_first_head_deadline_runs_from_the_opening_and_is_not_rearmed() -> None:
    async def scenario() -> None:
        harness = Harness(Limits(header_timeout_seconds=0.05))
        protocol, transport = harness.connect()
        protocol.data_received(b"POST /mcp HTTP/1.1\r\n")
        timer = protocol._header_timer
        protocol.data_received(b"Host: x\r\n")  # the deadline is not re-armed
        assert protocol._header_timer is timer
        await asyncio.sleep(0.1)
        assert bytes(transport.written) == REQUEST_TIMEOUT
        harness.lose(protocol)

    run(scenario)


def test_expect_100_continue_is_still_honoured() -> None:
    async def scenario() -> None:
        harness = Harness(Limits())
        protocol, transport = harness.connect()
        protocol.data_received(post(b"", extra=b"Expect: 100-continue\r\n")[:-2])
        protocol.data_received(b"\r\n")
        assert protocol.expect_100_continue  # read once the head is complete
        await settle()
        assert transport.written.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK")
        protocol.data_received(post(b"", extra=b"Expect: nothing\r\n"))
        assert not protocol.expect_100_continue
        harness.lose(protocol)

    run(scenario)


def test_an_upgrade_error_from_the_parser_is_a_400() -> None:
    async def scenario() -> None:
        harness = Harness(Limits())
        protocol, transport = harness.connect()

        class Upgrading:
            def feed_data(self, data: bytes) -> None:
                raise httptools.HttpParserUpgrade(0)

        protocol.parser = Upgrading()  # type: ignore[assignment]
        protocol.data_received(b"x")
        assert bytes(transport.written) == BAD_REQUEST
        harness.lose(protocol)

    run(scenario)


# --- starting a request ---------------------------------------------------------------------


def test_a_request_answered_in_its_first_step_is_answered_before_the_callback_returns() -> None:
    async def scenario() -> None:
        harness = Harness(Limits())
        protocol, transport = harness.connect()
        protocol.data_received(post(b"one"))
        assert protocol.cycle.response_complete and transport.written == b""  # held
        assert harness.state.tasks == set()  # no task was needed
        await asyncio.sleep(0)  # the loop's turn ends: the outbox writes it, in one piece
        assert transport.written.endswith(b"\r\n\r\none") and transport.writes == 1
        assert list(harness.cls.idle_connections) == [protocol]
        harness.lose(protocol)

    run(scenario)


def test_a_request_that_waits_goes_on_in_a_task_uvicorn_tracks() -> None:
    async def scenario() -> None:
        app = App()
        harness = Harness(Limits(), app)
        protocol, transport = harness.connect()
        app.gate.clear()
        protocol.data_received(post(b"one"))
        assert transport.written == b"" and len(harness.state.tasks) == 1
        app.gate.set()
        await settle()
        assert transport.written.endswith(b"\r\n\r\none")
        assert harness.state.tasks == set()
        harness.lose(protocol)

    run(scenario)


def test_under_a_task_factory_a_request_starts_as_uvicorn_starts_it() -> None:
    made: list[object] = []

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **options: Any) -> asyncio.Task[Any]:
        made.append(coro)
        return asyncio.Task(coro, loop=loop, **options)

    async def scenario() -> None:
        asyncio.get_running_loop().set_task_factory(factory)
        harness = Harness(Limits())
        protocol, transport = harness.connect()
        protocol.data_received(post(b"one"))
        assert transport.written == b"" and len(made) == 1  # the factory made its task
        await settle()
        assert transport.written.endswith(b"\r\n\r\none")
        harness.lose(protocol)

    run(scenario)


SEEN: contextvars.ContextVar[str] = contextvars.ContextVar("SEEN", default="fresh")


@pytest.mark.parametrize("reset", [False, True])
def test_a_request_runs_in_a_copy_of_the_context_or_a_fresh_one(reset: bool) -> None:
    seen: list[str] = []

    class Recording(App):
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            seen.append(SEEN.get())
            SEEN.set("the request's")
            await super().__call__(scope, receive, send)

    async def scenario() -> None:
        harness = Harness(Limits(), Recording())
        harness.config.reset_contextvars = reset
        protocol, transport = harness.connect()
        SEEN.set("the connection's")
        protocol.data_received(post(b"one"))
        await asyncio.sleep(0)
        assert transport.written.endswith(b"\r\n\r\none")
        assert seen == ["fresh" if reset else "the connection's"]
        assert SEEN.get() == "the connection's"  # the request's own setting stays its own
        harness.lose(protocol)

    run(scenario)
