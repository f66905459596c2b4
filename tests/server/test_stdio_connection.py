"""``StdioConnection``: the stdio side of the engine (docs/design/server.md §2).

``receive(line, write)`` is driven directly, one ``asyncio.run`` per test, with an async
``write`` that collects what the session writes.  Covered: the 2025 lifecycle (the process is
the session: ``initialize`` fixes the revision of later header-less requests), 2026-07-28
requests that name their revision in ``_meta``, the id-less parse error, refused envelopes
that echo a readable id, responses and notifications that write nothing, cancellation by
``notifications/cancelled`` (and malformed cancels that change nothing), ``shutdown()`` (every
request still in flight answered with the overload error, except those the client cancelled),
lines refused at the transport's bound, oversized lines, admission, the order of notifications
before the result, refused ``_meta`` and unsupported revisions.  The last section serves the
connection through the stdio transport: its bounds and end of input, end to end.

Every message received is checked against the official schema of its revision.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

import pytest

from mcpkit import (
    AdmissionRequest,
    Admitted,
    CancellationToken,
    Cancelled,
    CompleteResult,
    InvalidRequest,
    Limits,
    ProgressReporter,
    Rejected,
    RequestContext,
    RequestLogger,
    Revision,
    Server,
    endpoint,
    tool,
)
from mcpkit.json import from_python
from mcpkit.server import StdioConnection
from mcpkit.testing import handshake_request, stateless_request
from mcpkit.transports import serve_stdio

from ..wire import assert_valid

MODERN = "2026-07-28"
NOVEMBER = "2025-11-25"
JUNE = "2025-06-18"
SERVER_INFO = {"name": "stdio", "version": "1.0.0"}
MODERN_META = {"io.modelcontextprotocol/serverInfo": SERVER_INFO}
WAIT = 5.0  # seconds: an upper bound for things that happen at once


# --- the endpoints ------------------------------------------------------------------------------


class State:
    """What the handlers saw, and the events the tests steer them with; fresh per test."""

    def __init__(self) -> None:
        self.entered: dict[str, asyncio.Event] = {}
        self.release: dict[str, asyncio.Event] = {}
        self.events: list[str] = []
        self.started = threading.Event()
        self.finished = threading.Event()
        self.let_go = threading.Event()
        self.reported = threading.Event()
        self.tokens: list[bool] = []
        self.refused = 0

    def entered_event(self, name: str) -> asyncio.Event:
        return self.entered.setdefault(name, asyncio.Event())

    def release_event(self, name: str) -> asyncio.Event:
        return self.release.setdefault(name, asyncio.Event())


state = State()


@pytest.fixture(autouse=True)
def _fresh_state() -> Iterator[None]:
    global state
    state = State()
    yield
    state = State()


def text(value: str) -> CompleteResult:
    return CompleteResult.from_tool_text(value)


@endpoint(
    path="/mcp",
    name="stdio",
    version="1.0.0",
    revisions={Revision.V2025_06_18, Revision.V2025_11_25, Revision.V2026_07_28},
)
class Stdio:
    @tool(name="revision")
    def revision(self, ctx: RequestContext) -> CompleteResult:
        return text(ctx.revision.wire)

    @tool(name="whoami")
    async def whoami(self, ctx: RequestContext) -> CompleteResult:
        return text(repr(ctx.identity))

    @tool(name="gate")
    async def gate(self, name: str) -> CompleteResult:
        """Waits until the test releases ``name``."""
        state.entered_event(name).set()
        try:
            await state.release_event(name).wait()
        except asyncio.CancelledError:
            state.events.append(f"cancelled:{name}")
            raise
        state.events.append(f"released:{name}")
        return text(name)

    @tool(name="blocking")
    def blocking(
        self,
        chatty: bool,
        token: CancellationToken,
        progress: ProgressReporter | None,
        logger: RequestLogger | None,
    ) -> CompleteResult:
        """A ``def`` tool that runs until its token is cancelled; ``chatty`` reports after
        (each send on a cancelled request raises ``Cancelled``: ``state.refused`` counts)."""
        state.started.set()
        deadline = time.monotonic() + WAIT
        while not token.cancelled and time.monotonic() < deadline:
            time.sleep(0.005)
        state.tokens.append(token.cancelled)
        try:
            if chatty and progress is not None and logger is not None:
                try:
                    progress.report(1, message="stopping")
                except Cancelled:
                    state.refused += 1
                try:
                    logger.info("stopped")
                except Cancelled:
                    state.refused += 1
        finally:
            state.finished.set()
        return text("late")

    @tool(name="stubborn")
    def stubborn(self, token: CancellationToken) -> CompleteResult:
        """A ``def`` tool that ignores its token until the test lets it go."""
        state.started.set()
        state.let_go.wait(WAIT)
        state.tokens.append(token.cancelled)
        state.finished.set()
        return text("late")

    @tool(name="racing")
    def racing(self, token: CancellationToken, progress: ProgressReporter | None) -> CompleteResult:
        """Reports once when the test lets it go, then runs until its token is cancelled."""
        assert progress is not None
        state.started.set()
        state.let_go.wait(WAIT)
        progress.report(1)
        state.reported.set()
        deadline = time.monotonic() + WAIT
        while not token.cancelled and time.monotonic() < deadline:
            time.sleep(0.005)
        state.finished.set()
        return text("late")

    @tool(name="steps")
    def steps(
        self, progress: ProgressReporter | None, logger: RequestLogger | None
    ) -> CompleteResult:
        assert progress is not None and logger is not None
        progress.report(1, 2, message="half")
        logger.warning({"step": 1}, logger="steps")
        logger.debug("details")
        progress.report(2, 2)
        return text("done")

    @tool(name="log")
    def log(self, logger: RequestLogger | None) -> CompleteResult:
        assert logger is not None
        logger.info("info message")
        logger.error("error message")
        return text("logged")


@endpoint(path="/modern", name="stdio", version="1.0.0", revisions={Revision.V2026_07_28})
class ModernOnly:
    @tool(name="revision")
    def revision(self, ctx: RequestContext) -> CompleteResult:
        return text(ctx.revision.wire)


# --- driving a connection -----------------------------------------------------------------------


class Client:
    """Sends lines to one ``StdioConnection`` and keeps everything it writes, in order.

    With ``slow_notifications`` every notification takes a while to write, as on a backed-up
    pipe, so the session must wait for them before it writes the result.
    """

    def __init__(self, connection: StdioConnection, *, slow_notifications: bool = False) -> None:
        self.connection = connection
        self.written: list[bytes] = []
        self.slow = slow_notifications

    async def write(self, message: bytes) -> None:
        if self.slow and message.startswith(b'{"jsonrpc":"2.0","method"'):
            await asyncio.sleep(0.02)
        self.written.append(message)

    async def send(self, message: Mapping[str, object] | bytes) -> None:
        line = message if isinstance(message, bytes) else json.dumps(message).encode()
        await self.connection.receive(line, self.write)

    def start(self, message: Mapping[str, object]) -> asyncio.Task[None]:
        return asyncio.create_task(self.send(message))

    def messages(self) -> list[Any]:
        return [json.loads(message) for message in self.written]

    def take(self) -> list[Any]:
        messages = self.messages()
        self.written.clear()
        return messages


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(scenario(), 3 * WAIT))


def valid(revision: str, method: str | None, messages: list[Any]) -> None:
    assert_valid(revision, method, [from_python(message) for message in messages])


def connect(server: Server | None = None, path: str | None = "/mcp") -> Client:
    return Client((server or Server([Stdio, ModernOnly])).stdio_connection(path))


def call(
    name: str, arguments: Mapping[str, object] | None = None, **params: object
) -> dict[str, object]:
    return {"name": name, "arguments": dict(arguments or {}), **params}


def cancel(request_id: object) -> dict[str, object]:
    return handshake_request(
        "notifications/cancelled", {"requestId": request_id, "reason": "user"}, id=None
    )


def result(request_id: object, value: str, revision: str = NOVEMBER) -> dict[str, object]:
    body: dict[str, object] = {"content": [{"type": "text", "text": value}]}
    if revision == MODERN:
        body.update(resultType="complete", _meta=MODERN_META)
    return {"jsonrpc": "2.0", "id": request_id, "result": body}


def error(request_id: object, code: int, message: str, **data: object) -> dict[str, object]:
    body: dict[str, object] = {"code": code, "message": message}
    if data:
        body["data"] = data
    envelope: dict[str, object] = {"jsonrpc": "2.0"}
    if request_id is not None:
        envelope["id"] = request_id
    envelope["error"] = body
    return envelope


INITIALIZE = {
    "protocolVersion": JUNE,
    "capabilities": {},
    "clientInfo": {"name": "client", "version": "1.0"},
}


# --- revisions ----------------------------------------------------------------------------------


def test_initialize_fixes_the_revision_of_later_legacy_requests() -> None:
    """Before ``initialize`` a header-less request gets the newest served 2025 revision; after
    it, the negotiated one (the process is the session)."""
    client = connect()

    async def scenario() -> None:
        await client.send(handshake_request("tools/call", call("revision"), id=1))
        before = client.take()
        assert before == [result(1, NOVEMBER)]
        valid(NOVEMBER, "tools/call", before)

        await client.send(handshake_request("initialize", INITIALIZE, id="init"))
        await client.send(handshake_request("notifications/initialized", id=None))
        initialized = client.take()
        assert initialized == [
            {
                "jsonrpc": "2.0",
                "id": "init",
                "result": {
                    "protocolVersion": JUNE,
                    "capabilities": {"tools": {}, "logging": {}},
                    "serverInfo": SERVER_INFO,
                },
            }
        ]
        valid(JUNE, "initialize", initialized)

        await client.send(handshake_request("tools/call", call("revision"), id=2))
        after = client.take()
        assert after == [result(2, JUNE)]
        valid(JUNE, "tools/call", after)

    run(scenario)


def test_a_modern_request_names_its_revision_in_meta() -> None:
    """A 2026-07-28 request is served as 2026-07-28 even after a 2025 ``initialize``."""
    client = connect()

    async def scenario() -> None:
        await client.send(handshake_request("initialize", INITIALIZE, id=1))
        client.take()
        await client.send(stateless_request("tools/call", call("revision"), id=2))
        await client.send(stateless_request("server/discover", id=3))
        answered = client.take()
        assert answered[0] == result(2, MODERN, MODERN)
        assert answered[1]["id"] == 3
        assert answered[1]["result"]["supportedVersions"] == [MODERN, NOVEMBER, JUNE]
        valid(MODERN, "tools/call", answered[:1])
        valid(MODERN, "server/discover", answered[1:])

    run(scenario)


def test_an_unsupported_revision_is_refused_naming_the_supported_ones() -> None:
    client = connect()

    async def scenario() -> None:
        await client.send(
            stateless_request("tools/call", call("revision"), id=1, version="2099-01-01")
        )
        answered = client.take()
        assert answered == [
            error(
                1, -32022, "Unsupported protocol version",
                supported=[MODERN, NOVEMBER, JUNE], requested="2099-01-01",
            )
        ]  # fmt: skip
        valid(MODERN, None, answered)

    run(scenario)


def test_a_modern_only_endpoint_refuses_initialize_with_its_versions() -> None:
    client = connect(path="/modern")

    async def scenario() -> None:
        await client.send(handshake_request("initialize", INITIALIZE, id=1))
        await client.send(stateless_request("tools/call", call("revision"), id=2))
        answered = client.take()
        assert answered == [
            error(
                1, -32022, "Unsupported protocol version", supported=[MODERN], requested=JUNE
            ),
            result(2, MODERN, MODERN),
        ]  # fmt: skip
        valid(MODERN, None, answered)

    run(scenario)


def test_a_refused_meta_on_a_2025_request_is_invalid_params() -> None:
    client = connect()

    async def scenario() -> None:
        await client.send(handshake_request("tools/call", call("revision", _meta=5), id=1))
        meta = {"progressToken": True}
        await client.send(handshake_request("tools/call", call("revision", _meta=meta), id="two"))
        answered = client.take()
        assert answered == [
            error(1, -32602, "Invalid params"),
            error("two", -32602, "Invalid params"),
        ]
        valid(NOVEMBER, None, answered)

    run(scenario)


def test_modern_refusals_echo_the_id() -> None:
    client = connect()

    async def scenario() -> None:
        no_capabilities = {
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {**call("revision"), "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
            }},
        }  # fmt: skip
        await client.send(no_capabilities)
        await client.send(stateless_request("tools/call", {"name": 5}, id=2))
        await client.send(stateless_request("no/such/method", id=3))
        await client.send(stateless_request("tools/call", call("missing"), id=4))
        answered = client.take()
        assert answered == [
            error(1, -32602, "Invalid params"),
            error(2, -32602, "Invalid params"),
            error(3, -32601, "Method not found"),
            error(4, -32602, "Invalid params"),
        ]
        valid(MODERN, None, answered)

    run(scenario)


# --- what is not a request ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "line", [b"{", b"", b"\xff", b'{"jsonrpc":"2.0","id":1,"method":"ping"} x']
)
def test_a_parse_error_has_no_id(line: bytes) -> None:
    client = connect()

    async def scenario() -> None:
        await client.send(line)
        answered = client.take()
        assert answered == [error(None, -32700, "Parse error")]
        valid(NOVEMBER, None, answered)
        valid(MODERN, None, answered)

    run(scenario)


@pytest.mark.parametrize(
    ("message", "echoed"),
    [
        ({"jsonrpc": "2.0", "id": 7, "method": 5}, 7),
        ({"jsonrpc": "1.0", "id": "s", "method": "ping"}, "s"),
        ({"jsonrpc": "2.0", "id": 3, "method": "ping", "extra": 1}, 3),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None),
        ([{"jsonrpc": "2.0", "id": 1, "method": "ping"}], None),
        ("ping", None),
    ],
)
def test_an_invalid_envelope_echoes_a_readable_id(message: object, echoed: object) -> None:
    client = connect()

    async def scenario() -> None:
        await client.send(json.dumps(message).encode())
        answered = client.take()
        assert answered == [error(echoed, -32600, "Invalid Request")]
        valid(NOVEMBER, None, answered)

    run(scenario)


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "x"}},
        handshake_request("notifications/initialized", id=None),
        handshake_request("notifications/roots/list_changed", id=None),
        stateless_request("notifications/unknown", {"x": 1}, id=None),
    ],
)
def test_responses_and_notifications_write_nothing(message: dict[str, object]) -> None:
    client = connect()

    async def scenario() -> None:
        await client.send(message)
        await client.send(handshake_request("ping", id=9))
        assert client.take() == [{"jsonrpc": "2.0", "id": 9, "result": {}}]

    run(scenario)


def test_an_oversized_line_is_a_parse_error() -> None:
    client = connect()

    async def scenario() -> None:
        await client.connection.reject_oversized(client.write)
        answered = client.take()
        assert answered == [error(None, -32700, "Parse error")]
        valid(MODERN, None, answered)

    run(scenario)


# --- cancellation -------------------------------------------------------------------------------


def test_notifications_cancelled_cancels_an_async_request_which_writes_nothing() -> None:
    client = connect()

    async def scenario() -> None:
        task = client.start(stateless_request("tools/call", call("gate", {"name": "a"}), id="w"))
        await state.entered_event("a").wait()
        await client.send(cancel("w"))
        await asyncio.wait_for(task, WAIT)
        assert client.written == []
        assert state.events == ["cancelled:a"]
        # The connection still serves.
        await client.send(stateless_request("tools/call", call("revision"), id="w"))
        assert client.take() == [result("w", MODERN, MODERN)]

    run(scenario)


def test_a_def_handler_sees_its_token_cancelled_and_the_id_type_matters() -> None:
    """``"5"`` is not ``5`` (ids keep their type): only the exact id cancels."""
    client = connect()

    async def scenario() -> None:
        task = client.start(
            handshake_request("tools/call", call("blocking", {"chatty": False}), id=5)
        )
        assert await asyncio.to_thread(state.started.wait, WAIT)
        await client.send(cancel("5"))
        await asyncio.sleep(0.05)
        assert not task.done() and state.tokens == []
        await client.send(cancel(5))
        await asyncio.wait_for(task, WAIT)
        assert await asyncio.to_thread(state.finished.wait, WAIT)
        assert state.tokens == [True]
        assert client.written == []

    run(scenario)


@pytest.mark.parametrize(
    "params",
    [
        None,
        {},
        {"requestId": True},
        {"requestId": None},
        {"requestId": 1.5},
        {"requestId": [1]},
        {"requestId": {"id": 1}},
        {"requestId": "1"},
        {"requestId": 2},
    ],
)
def test_malformed_or_unknown_cancels_are_ignored(params: dict[str, object] | None) -> None:
    client = connect()

    async def scenario() -> None:
        task = client.start(stateless_request("tools/call", call("gate", {"name": "m"}), id=1))
        await state.entered_event("m").wait()
        await client.send(handshake_request("notifications/cancelled", params, id=None))
        await asyncio.sleep(0.01)
        assert not task.done() and client.written == []
        state.release_event("m").set()
        await asyncio.wait_for(task, WAIT)
        assert client.take() == [result(1, "m", MODERN)]
        assert state.events == ["released:m"]

    run(scenario)


def test_a_cancel_that_arrives_as_the_handler_finishes_still_suppresses_the_response() -> None:
    client = connect()

    async def scenario() -> None:
        task = client.start(stateless_request("tools/call", call("gate", {"name": "f"}), id=1))
        await state.entered_event("f").wait()
        state.release_event("f").set()
        await client.send(cancel(1))  # before the handler's task runs again
        await asyncio.wait_for(task, WAIT)
        assert client.written == []
        assert state.events == ["released:f"]

    run(scenario)


def test_a_finished_duplicate_id_does_not_forget_the_one_still_running() -> None:
    """Two in-flight requests reuse id ``"d"``: the first one finishing must leave the second
    one cancellable."""
    client = connect()

    async def scenario() -> None:
        first = client.start(stateless_request("tools/call", call("gate", {"name": "one"}), id="d"))
        await state.entered_event("one").wait()
        second = client.start(
            stateless_request("tools/call", call("gate", {"name": "two"}), id="d")
        )
        await state.entered_event("two").wait()
        state.release_event("one").set()
        await asyncio.wait_for(first, WAIT)
        assert client.take() == [result("d", "one", MODERN)]
        await client.send(cancel("d"))
        await asyncio.wait_for(second, WAIT)
        assert client.written == []
        assert state.events == ["released:one", "cancelled:two"]

    run(scenario)


OVERLOADED = (-32603, "Server overloaded; retry later")


def test_shutdown_answers_every_request_in_flight_with_the_overload_error() -> None:
    """Each request still running is stopped and answered at once, a ``def`` handler that
    ignores its token included (its thread runs on by itself); one the client cancelled stays
    unanswered."""
    client = connect()

    async def scenario() -> None:
        waiting = client.start(stateless_request("tools/call", call("gate", {"name": "s"}), id=1))
        stubborn = client.start(handshake_request("tools/call", call("stubborn"), id="two"))
        dropped = client.start(stateless_request("tools/call", call("gate", {"name": "c"}), id=3))
        await state.entered_event("s").wait()
        await state.entered_event("c").wait()
        assert await asyncio.to_thread(state.started.wait, WAIT)
        await client.send(cancel(3))
        await asyncio.wait_for(dropped, WAIT)

        assert await client.connection.shutdown(client.write) == 2
        answered = client.take()
        assert sorted(answered, key=lambda message: str(message["id"])) == [
            error(1, *OVERLOADED),
            error("two", *OVERLOADED),
        ]
        valid(MODERN, None, answered)
        valid(NOVEMBER, None, answered)
        # Their tasks end without writing anything more; the stubborn thread still runs.
        await asyncio.wait_for(asyncio.gather(waiting, stubborn), WAIT)
        assert not state.finished.is_set()
        state.let_go.set()
        assert await asyncio.to_thread(state.finished.wait, WAIT)
        await asyncio.sleep(0.05)
        assert client.written == []
        assert state.events == ["cancelled:c", "cancelled:s"] and state.tokens == [True]
        assert await client.connection.shutdown(client.write) == 0  # nothing left in flight
        assert client.written == []

    run(scenario)


@pytest.mark.parametrize("ending", ["shutdown", "cancel"])
def test_a_request_settled_while_it_is_admitted_never_runs(ending: str) -> None:
    """A shutdown answers it with the overload error; a client's cancel leaves it unanswered.
    Either way the handler never runs once admission decides."""
    admitting = asyncio.Event()
    decide = asyncio.Event()

    async def admission(request: AdmissionRequest) -> Admitted:
        admitting.set()
        await decide.wait()
        return Admitted()

    client = connect(Server(Stdio, admission=admission), None)

    async def scenario() -> None:
        task = client.start(stateless_request("tools/call", call("gate", {"name": "a"}), id="a"))
        await admitting.wait()
        if ending == "shutdown":
            assert await client.connection.shutdown(client.write) == 1
            assert client.take() == [error("a", *OVERLOADED)]
        else:
            await client.send(cancel("a"))
        decide.set()
        await asyncio.wait_for(task, WAIT)
        assert client.written == [] and "a" not in state.entered
        assert await client.connection.shutdown(client.write) == 0

    run(scenario)


# --- lines refused at the transport's bound -------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "revision"),
    [
        (stateless_request("tools/call", call("gate", {"name": "r"}), id="r"), MODERN),
        (handshake_request("tools/call", call("gate", {"name": "r"}), id="r"), NOVEMBER),
        (handshake_request("no/such/method", id="r"), NOVEMBER),
    ],
)
def test_a_refused_request_gets_the_overload_error_without_running(
    message: dict[str, object], revision: str
) -> None:
    client = connect()

    async def scenario() -> None:
        await client.connection.refuse_overloaded(json.dumps(message).encode(), client.write)
        answered = client.take()
        assert answered == [error("r", *OVERLOADED)]
        valid(revision, None, answered)
        assert state.entered == {}

    run(scenario)


def test_a_refused_cancel_still_cancels() -> None:
    client = connect()

    async def scenario() -> None:
        task = client.start(stateless_request("tools/call", call("gate", {"name": "o"}), id=5))
        await state.entered_event("o").wait()
        await client.connection.refuse_overloaded(json.dumps(cancel(5)).encode(), client.write)
        await asyncio.wait_for(task, WAIT)
        assert client.written == []
        assert state.events == ["cancelled:o"]

    run(scenario)


@pytest.mark.parametrize(
    ("line", "answered"),
    [
        (json.dumps(handshake_request("notifications/initialized", id=None)).encode(), []),
        (b'{"jsonrpc":"2.0","id":1,"result":{}}', []),
        (b"{", [error(None, -32700, "Parse error")]),
        (b'{"jsonrpc":"2.0","id":7,"method":5}', [error(7, -32600, "Invalid Request")]),
    ],
)
def test_other_refused_lines_are_dropped_or_get_the_error_they_would_get_anyway(
    line: bytes, answered: list[object]
) -> None:
    client = connect()

    async def scenario() -> None:
        await client.connection.refuse_overloaded(line, client.write)
        assert client.take() == answered

    run(scenario)


def test_the_connection_exposes_the_servers_limits() -> None:
    server = Server(Stdio, limits=Limits(max_stdio_requests=7))
    assert server.stdio_connection().limits is server.engine.limits
    assert server.stdio_connection().limits.max_stdio_requests == 7


def test_a_cancelled_request_sends_no_further_notifications() -> None:
    client = connect()
    meta = {"progressToken": "p", "io.modelcontextprotocol/logLevel": "debug"}

    async def scenario() -> None:
        request = stateless_request(
            "tools/call", call("blocking", {"chatty": True}, _meta=meta), id=1
        )
        task = client.start(request)
        assert await asyncio.to_thread(state.started.wait, WAIT)
        await client.send(cancel(1))
        await asyncio.wait_for(task, WAIT)
        assert await asyncio.to_thread(state.finished.wait, WAIT)
        await asyncio.sleep(0.1)  # let anything the thread scheduled reach the writer
        assert state.tokens == [True]
        assert state.refused == 2  # the report and the log each raised ``Cancelled``
        assert client.written == []

    run(scenario)


def test_a_notification_on_its_way_when_the_request_is_cancelled_is_not_written() -> None:
    client = connect()

    async def scenario() -> None:
        request = call("racing", _meta={"progressToken": "p"})
        task = client.start(stateless_request("tools/call", request, id=1))
        assert await asyncio.to_thread(state.started.wait, WAIT)
        state.let_go.set()
        # Waiting here blocks the loop, so the report's delivery stays queued behind it, and
        # the cancel below settles the request first.
        assert state.reported.wait(WAIT)
        await client.send(cancel(1))
        await asyncio.wait_for(task, WAIT)
        assert await asyncio.to_thread(state.finished.wait, WAIT)
        await asyncio.sleep(0.05)
        assert client.written == []

    run(scenario)


# --- admission ----------------------------------------------------------------------------------


def test_admission_rejected_with_an_error_answers_it_and_without_writes_nothing() -> None:
    asked: list[AdmissionRequest] = []

    def admission(request: AdmissionRequest) -> Admitted | Rejected:
        asked.append(request)
        if request.method == "ping":
            return Rejected(403)
        return Rejected(401, InvalidRequest(), headers=(("WWW-Authenticate", "Bearer"),))

    client = connect(Server(Stdio, admission=admission), None)

    async def scenario() -> None:
        await client.send(stateless_request("tools/call", call("revision"), id=1))
        await client.send(handshake_request("ping", id=2))
        answered = client.take()
        assert answered == [error(1, -32600, "Invalid Request")]
        valid(MODERN, None, answered)

    run(scenario)
    assert [(a.method, a.revision, a.http_request, a.notification) for a in asked] == [
        ("tools/call", Revision.V2026_07_28, None, False),
        ("ping", Revision.V2025_11_25, None, False),
    ]
    assert all(a.endpoint.path == "/mcp" for a in asked)


def test_an_async_admission_identity_reaches_the_handler() -> None:
    async def admission(request: AdmissionRequest) -> Admitted:
        return Admitted(identity=("alice", request.method))

    client = connect(Server(Stdio, admission=admission), None)

    async def scenario() -> None:
        await client.send(stateless_request("tools/call", call("whoami"), id=1))
        assert client.take() == [result(1, "('alice', 'tools/call')", MODERN)]

    run(scenario)


def test_a_failing_admission_is_an_internal_error() -> None:
    def admission(request: AdmissionRequest) -> Admitted:
        raise RuntimeError("secret detail")

    client = connect(Server(Stdio, admission=admission), None)

    async def scenario() -> None:
        await client.send(handshake_request("tools/call", call("revision"), id=1))
        answered = client.take()
        assert answered == [error(1, -32603, "Internal error")]
        valid(NOVEMBER, None, answered)

    run(scenario)


# --- notifications before the result ------------------------------------------------------------


def test_progress_and_log_notifications_are_written_before_the_result_in_order() -> None:
    client = Client(Server(Stdio).stdio_connection(), slow_notifications=True)
    meta = {"progressToken": "p", "io.modelcontextprotocol/logLevel": "warning"}

    async def scenario() -> None:
        await client.send(stateless_request("tools/call", call("steps", _meta=meta), id=1))
        answered = client.take()
        assert answered == [
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": "p", "progress": 1, "total": 2, "message": "half"},
            },
            {
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "warning", "logger": "steps", "data": {"step": 1}},
            },
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": "p", "progress": 2, "total": 2},
            },
            result(1, "done", MODERN),
        ]
        valid(MODERN, "tools/call", answered)

    run(scenario)


def test_a_2025_request_gets_progress_and_info_level_logs() -> None:
    """2025 requests carry no log level: the logger's minimum is ``info``."""
    client = Client(Server(Stdio).stdio_connection(), slow_notifications=True)

    async def scenario() -> None:
        meta = {"progressToken": 7}
        await client.send(handshake_request("tools/call", call("steps", _meta=meta), id=1))
        answered = client.take()
        assert [message.get("method") for message in answered] == [
            "notifications/progress",
            "notifications/message",
            "notifications/progress",
            None,
        ]
        assert answered[0]["params"]["progressToken"] == 7
        assert answered[-1] == result(1, "done")
        valid(NOVEMBER, "tools/call", answered)

    run(scenario)


def test_logging_set_level_is_remembered_for_the_stdio_connection() -> None:
    client = connect()

    async def scenario() -> None:
        await client.send(
            handshake_request("initialize", {**INITIALIZE, "protocolVersion": NOVEMBER}, id=1)
        )
        await client.send(handshake_request("logging/setLevel", {"level": "error"}, id=2))
        client.take()
        await client.send(handshake_request("tools/call", call("log"), id=3))
        answered = client.take()
        assert answered == [
            {
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "error", "data": "error message"},
            },
            result(3, "logged"),
        ]

    run(scenario)


# --- through the stdio transport ------------------------------------------------------------------


async def serve_lines(
    server: Server,
    messages: list[dict[str, object]],
    *,
    grace_seconds: float = 0.05,
    after: Callable[[], Awaitable[None]] | None = None,
) -> tuple[list[Any], bool]:
    """Serve ``messages`` to a fresh connection through the transport, then end of file (after
    ``after()`` when given); what was written, and whether work was cut off."""
    reader = asyncio.StreamReader()
    reader.feed_data(b"".join(json.dumps(message).encode() + b"\n" for message in messages))
    out = bytearray()

    async def collect(chunk: bytes) -> None:
        out.extend(chunk)

    session = server.stdio_connection()
    limit = server.engine.limits.max_request_bytes
    served = asyncio.create_task(
        serve_stdio(session, reader, collect, max_line_bytes=limit, grace_seconds=grace_seconds)
    )
    if after is not None:
        await after()
    reader.feed_eof()
    cut_off = await asyncio.wait_for(served, WAIT)
    return [json.loads(line) for line in out.splitlines()], cut_off


def gate(name: str, request_id: str | int) -> dict[str, object]:
    return stateless_request("tools/call", call("gate", {"name": name}), id=request_id)


def test_at_the_bound_requests_run_and_one_more_is_refused_with_its_id() -> None:
    """Two in flight is the bound: the third request is refused at once, a cancel past the
    bound still cancels, and what is still running at end of input is answered as overloaded
    once the grace period has passed."""
    server = Server(Stdio, limits=Limits(max_stdio_requests=2))

    async def entered() -> None:
        await state.entered_event("one").wait()
        await state.entered_event("two").wait()

    async def scenario() -> None:
        answered, cut_off = await serve_lines(
            server, [gate("one", 1), gate("two", 2), gate("three", 3), cancel(1)], after=entered
        )
        assert answered == [error(3, *OVERLOADED), error(2, *OVERLOADED)]
        valid(MODERN, None, answered)
        assert cut_off
        assert state.events == ["cancelled:one", "cancelled:two"]
        assert "three" not in state.entered

    run(scenario)


def test_a_def_handler_that_ignores_its_token_is_answered_after_the_grace_period(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario() -> None:
        started = time.monotonic()
        with caplog.at_level(logging.DEBUG, logger="mcpkit"):
            request = handshake_request("tools/call", call("stubborn"), id="slow")
            answered, cut_off = await serve_lines(Server(Stdio), [request])
        assert answered == [error("slow", *OVERLOADED)]
        valid(NOVEMBER, None, answered)
        assert cut_off
        assert time.monotonic() - started < WAIT  # the thread did not hold the answer back
        assert not state.finished.is_set()
        state.let_go.set()
        assert await asyncio.to_thread(state.finished.wait, WAIT)

    run(scenario)
    assert [(r.name, r.levelno) for r in caplog.records] == [("mcpkit.stdio", logging.WARNING)]
    assert all(record.exc_info is None for record in caplog.records)


def test_a_quick_request_at_end_of_input_is_answered_and_nothing_is_cut_off() -> None:
    async def scenario() -> None:
        answered, cut_off = await serve_lines(
            Server(Stdio), [stateless_request("tools/call", call("revision"), id=1)]
        )
        assert answered == [result(1, MODERN, MODERN)]
        assert not cut_off

    run(scenario)


def test_a_request_the_client_cancelled_stays_unanswered_at_end_of_input() -> None:
    async def entered() -> None:
        await asyncio.to_thread(state.started.wait, WAIT)

    async def scenario() -> None:
        request = handshake_request("tools/call", call("stubborn"), id=4)
        answered, cut_off = await serve_lines(Server(Stdio), [request, cancel(4)], after=entered)
        assert answered == []
        assert not cut_off
        state.let_go.set()
        assert await asyncio.to_thread(state.finished.wait, WAIT)

    run(scenario)
