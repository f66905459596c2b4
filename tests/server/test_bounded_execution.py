"""Bounded execution through the whole HTTP pipeline (docs/design/server.md
§2.1 step 12): handler slots and the admitted queue
(503 / -32603), the queued and the running deadline (503 and 504 / -32603), the cancellation
token, the non-forcible rule (a slot stays taken until its handler really returns), where
``def`` and ``async def`` handlers run, and client disconnects.

Handlers are held with ``threading.Event``s the tests release, so the interleavings are
chosen; only the deadline tests wait for a short deadline to pass.  Every JSON-RPC message
received is checked against the official schema of its revision.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import Future

import pytest

import mcpkit
from mcpkit import (
    CancellationToken,
    CompleteResult,
    Limits,
    ProgressReporter,
    RequestContext,
    Revision,
    endpoint,
    tool,
)
from mcpkit.testing import (
    TestClient,
    TestResponse,
    handshake_request,
    stateless_headers,
    stateless_request,
)

from ..wire import assert_valid

MODERN = "2026-07-28"
NOVEMBER = "2025-11-25"
JUNE = "2025-06-18"
REVISIONS = (MODERN, NOVEMBER, JUNE)
PATH = "/mcp"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SERVER_INFO = {"name": "bounded", "version": "1.0.0"}
WAIT = 5.0  # seconds: a bound on waiting, never reached when all is well
DEADLINE = 0.2  # seconds: a request deadline meant to pass


class State:
    """What the handlers did, shared with the test (a fresh instance serves every call)."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.finished = threading.Event()
        self.tokens: list[CancellationToken] = []
        self.invoked: list[str] = []
        self.threads: dict[str, tuple[int, str, bool]] = {}
        self.cancelled_error = False

    def enter(self, name: str, token: CancellationToken) -> None:
        self.invoked.append(name)
        self.tokens.append(token)
        self.started.set()

    @property
    def token(self) -> CancellationToken:
        (token,) = self.tokens
        return token


state = State()


@pytest.fixture(autouse=True)
def _fresh_state() -> Iterator[None]:
    global state
    state = State()
    yield
    state.release.set()  # never leave a worker blocked


def wait_cancelled(token: CancellationToken) -> bool:
    stop = time.monotonic() + WAIT
    while not token.cancelled:
        if time.monotonic() > stop:
            return False
        time.sleep(0.005)
    return True


def where(name: str) -> None:
    try:
        asyncio.get_running_loop()
        on_loop = True
    except RuntimeError:
        on_loop = False
    thread = threading.current_thread()
    state.threads[name] = (threading.get_ident(), thread.name, on_loop)


@endpoint(
    path=PATH,
    name="bounded",
    version="1.0.0",
    revisions={Revision.V2025_06_18, Revision.V2025_11_25, Revision.V2026_07_28},
)
class Bounded:
    @tool(name="block")
    def block(self, token: CancellationToken) -> CompleteResult:
        """Holds its slot until the test releases it, whatever the token says."""
        state.enter("block", token)
        try:
            assert state.release.wait(WAIT)
        finally:
            state.finished.set()
        return CompleteResult.from_tool_text("released")

    @tool(name="cooperative")
    def cooperative(self, token: CancellationToken) -> CompleteResult:
        """Returns as soon as the token is cancelled."""
        state.enter("cooperative", token)
        try:
            cancelled = wait_cancelled(token)
        finally:
            state.finished.set()
        return CompleteResult.from_tool_text(f"cancelled={cancelled}")

    @tool(name="async_cooperative")
    async def async_cooperative(self, token: CancellationToken) -> CompleteResult:
        state.enter("async_cooperative", token)
        try:
            await asyncio.sleep(WAIT)
        except asyncio.CancelledError:
            state.cancelled_error = True
            raise
        finally:
            state.finished.set()
        return CompleteResult.from_tool_text("slept")

    @tool(name="progress_then_wait")
    def progress_then_wait(
        self, token: CancellationToken, progress: ProgressReporter | None
    ) -> CompleteResult:
        state.enter("progress_then_wait", token)
        try:
            if progress is not None:
                progress.report(1)
            wait_cancelled(token)
        finally:
            state.finished.set()
        return CompleteResult.from_tool_text("late")

    @tool(name="quick")
    def quick(self, token: CancellationToken) -> CompleteResult:
        state.invoked.append("quick")
        return CompleteResult.from_tool_text("quick")

    @tool(name="where")
    def where_sync(self) -> CompleteResult:
        where("def")
        return CompleteResult.from_tool_text("def")

    @tool(name="async_where")
    async def where_async(self) -> CompleteResult:
        where("async")
        return CompleteResult.from_tool_text("async")


def server(**limits: float) -> mcpkit.Server:
    return mcpkit.Server(Bounded, limits=Limits(**limits))  # type: ignore[arg-type]


# --- helpers ------------------------------------------------------------------------------------


def request(
    revision: str, name: str, meta: dict[str, object] | None = None
) -> tuple[object, dict[str, str]]:
    params: dict[str, object] = {"name": name, "arguments": {}}
    if meta is not None:
        params["_meta"] = meta
    if revision == MODERN:
        return stateless_request("tools/call", params), stateless_headers("tools/call", name)
    return handshake_request("tools/call", params), {"MCP-Protocol-Version": revision}


def call(client: TestClient, revision: str, name: str) -> TestResponse:
    body, headers = request(revision, name)
    response = client.post(PATH, body, headers=headers)
    assert_valid(revision, "tools/call", response.messages)
    return response


def submit(client: TestClient, revision: str, name: str) -> Future[TestResponse]:
    body, headers = request(revision, name)
    return client.submit(PATH, body, headers=headers)


def finish(revision: str, future: Future[TestResponse]) -> TestResponse:
    response = future.result(WAIT)
    assert_valid(revision, "tools/call", response.messages)
    return response


def ok(revision: str, text: str) -> dict[str, object]:
    body: dict[str, object] = {"content": [{"type": "text", "text": text}]}
    if revision == MODERN:
        body["resultType"] = "complete"
        body["_meta"] = {SERVER_INFO_KEY: SERVER_INFO}
    return {"jsonrpc": "2.0", "id": 1, "result": body}


OVERLOADED = {
    "jsonrpc": "2.0",
    "id": 1,
    "error": {"code": -32603, "message": "Server overloaded; retry later"},
}
TIMED_OUT = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "Request timed out"}}


def assert_json(response: TestResponse, status: int, expected: object) -> None:
    assert response.status == status
    assert response.header("content-type") == "application/json"
    assert response.json == expected
    # an overloaded server says when to come back; nothing else does
    assert response.header("retry-after") == ("1" if status == 503 else None)


def eventually_ok(client: TestClient, revision: str, name: str) -> TestResponse:
    """The slot of finished work is released by a callback on the loop: retry briefly."""
    stop = time.monotonic() + WAIT
    while True:
        response = call(client, revision, name)
        if response.status == 200 or time.monotonic() > stop:
            return response
        time.sleep(0.01)


# --- slots and the queue ------------------------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
def test_full_slots_and_queue_refuse_with_503(revision: str) -> None:
    """one slot, no queue: a second concurrent request is 503 /
    -32603 (on 2025 too) and is never dispatched; the first completes normally."""
    with TestClient(server(handler_slots=1, max_queued_requests=0)) as client:
        first = submit(client, revision, "block")
        assert state.started.wait(WAIT)
        second = call(client, revision, "quick")
        assert_json(second, 503, OVERLOADED)
        assert state.invoked == ["block"]
        state.release.set()
        assert_json(finish(revision, first), 200, ok(revision, "released"))
        assert_json(eventually_ok(client, revision, "quick"), 200, ok(revision, "quick"))


@pytest.mark.parametrize("revision", REVISIONS)
def test_queued_request_runs_when_the_slot_frees_and_a_full_queue_refuses(
    revision: str,
) -> None:
    """One slot and one queue place: the second waits and then runs, the third is 503."""
    bounded = server(handler_slots=1, max_queued_requests=1)
    executor = bounded.engine.operations.executor
    with TestClient(bounded) as client:
        first = submit(client, revision, "block")
        assert state.started.wait(WAIT)
        second = submit(client, revision, "quick")
        stop = time.monotonic() + WAIT
        while executor.queued == 0 and time.monotonic() < stop:
            time.sleep(0.005)
        assert (executor.active, executor.queued) == (1, 1)
        third = call(client, revision, "quick")
        assert_json(third, 503, OVERLOADED)
        assert not second.done()
        state.release.set()
        assert_json(finish(revision, first), 200, ok(revision, "released"))
        assert_json(finish(revision, second), 200, ok(revision, "quick"))
    assert state.invoked == ["block", "quick"]
    assert (executor.active, executor.queued) == (0, 0)


# --- deadlines ----------------------------------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
def test_queued_deadline_is_503_and_running_deadline_is_504(revision: str) -> None:
    """the request waiting for the slot passes its deadline: 503, never
    dispatched; the one holding the slot passes its deadline: 504, token cancelled."""
    limits = {"handler_slots": 1, "max_queued_requests": 1, "request_timeout_seconds": DEADLINE}
    with TestClient(server(**limits)) as client:
        first = submit(client, revision, "block")
        assert state.started.wait(WAIT)
        queued = call(client, revision, "quick")
        assert_json(queued, 503, OVERLOADED)
        assert_json(finish(revision, first), 504, TIMED_OUT)
        assert state.token.cancelled
        assert state.invoked == ["block"]


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("name", ["cooperative", "async_cooperative"])
def test_running_deadline_is_504_and_cancels_the_token(revision: str, name: str) -> None:
    """A handler still running at its deadline: 504 / -32603 at once, its
    ``CancellationToken`` cancelled (and an ``async def`` handler's task cancelled)."""
    with TestClient(server(request_timeout_seconds=DEADLINE)) as client:
        started = time.monotonic()
        response = call(client, revision, name)
        elapsed = time.monotonic() - started
        assert_json(response, 504, TIMED_OUT)
        assert state.finished.wait(WAIT)
    assert DEADLINE <= elapsed < WAIT
    assert state.token.cancelled
    assert state.cancelled_error is (name == "async_cooperative")


@pytest.mark.parametrize("revision", REVISIONS)
def test_slot_stays_taken_until_the_handler_returns(revision: str) -> None:
    """The non-forcible rule: after the 504 the handler still runs (it ignores its token), so
    its slot is still taken and the next request is refused; once it returns, the slot frees."""
    limits = {"handler_slots": 1, "max_queued_requests": 0, "request_timeout_seconds": DEADLINE}
    with TestClient(server(**limits)) as client:
        assert_json(call(client, revision, "block"), 504, TIMED_OUT)
        assert state.token.cancelled and not state.finished.is_set()
        assert_json(call(client, revision, "quick"), 503, OVERLOADED)
        assert state.invoked == ["block"]
        state.release.set()
        assert state.finished.wait(WAIT)
        assert_json(eventually_ok(client, revision, "quick"), 200, ok(revision, "quick"))


async def passing_interceptor(
    ctx: RequestContext, proceed: Callable[[], Awaitable[object]]
) -> object:
    return await proceed()


def test_slot_stays_taken_until_the_handler_returns_with_an_interceptor() -> None:
    """The non-forcible rule holds with an interceptor too."""
    limits = Limits(handler_slots=1, max_queued_requests=0, request_timeout_seconds=DEADLINE)
    with TestClient(
        mcpkit.Server(Bounded, limits=limits, interceptor=passing_interceptor)
    ) as client:
        assert_json(call(client, MODERN, "block"), 504, TIMED_OUT)
        assert not state.finished.is_set()
        blocked = call(client, MODERN, "quick")
        state.release.set()
        assert state.finished.wait(WAIT)
    assert_json(blocked, 503, OVERLOADED)
    assert state.invoked == ["block"]


@pytest.mark.parametrize("revision", REVISIONS)
def test_deadline_after_the_stream_is_committed_is_its_last_event(revision: str) -> None:
    """504 becomes the terminal SSE event when the stream is committed."""
    body, headers = request(revision, "progress_then_wait", {"progressToken": "p"})
    with TestClient(server(request_timeout_seconds=DEADLINE)) as client:
        response = client.post(PATH, body, headers=headers)
        assert state.finished.wait(WAIT)
    assert_valid(revision, "tools/call", response.messages)
    assert response.status == 200
    assert response.header("content-type") == "text/event-stream"
    progress = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": "p", "progress": 1},
    }
    assert list(response.messages) == [progress, TIMED_OUT]
    assert state.token.cancelled


# --- where handlers run -------------------------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
def test_async_handlers_run_on_the_loop_and_def_handlers_on_a_worker(revision: str) -> None:
    """docs/design/server.md: ``async def`` handlers run on the event loop (the thread the engine's
    own hooks, such as admission, run on), ``def`` handlers in the bounded executor's worker
    threads, never on the loop (nor on the caller's thread)."""
    loop_threads: set[int] = set()

    async def admit(request: mcpkit.AdmissionRequest) -> mcpkit.Admitted:
        loop_threads.add(threading.get_ident())
        return mcpkit.Admitted()

    with TestClient(mcpkit.Server(Bounded, admission=admit)) as client:
        assert_json(call(client, revision, "async_where"), 200, ok(revision, "async"))
        assert_json(call(client, revision, "where"), 200, ok(revision, "def"))
    async_ident, _, async_on_loop = state.threads["async"]
    def_ident, def_name, def_on_loop = state.threads["def"]
    assert async_on_loop and not def_on_loop
    assert loop_threads == {async_ident}
    assert def_ident != async_ident
    assert threading.get_ident() not in (async_ident, def_ident)
    assert def_name.startswith("mcpkit-handler")


# --- client disconnects ---------------------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("name", ["cooperative", "async_cooperative"])
def test_disconnect_cancels_the_token_and_writes_nothing(revision: str, name: str) -> None:
    """on HTTP cancellation is the stream closing; the server stops the work
    (token cancelled, an ``async def`` task cancelled) and writes no response."""
    body, headers = request(revision, name)
    with TestClient(mcpkit.Server(Bounded)) as client:
        partial = client.post_disconnecting(PATH, body, headers=headers, after=state.started)
        assert partial is None
        assert state.finished.wait(WAIT)
        assert state.token.cancelled
        assert_json(eventually_ok(client, revision, "quick"), 200, ok(revision, "quick"))
    assert state.cancelled_error is (name == "async_cooperative")


@pytest.mark.parametrize("revision", REVISIONS)
def test_disconnect_while_queued_never_runs_the_handler(revision: str) -> None:
    body, headers = request(revision, "quick")
    with TestClient(server(handler_slots=1, max_queued_requests=1)) as client:
        first = submit(client, revision, "block")
        assert state.started.wait(WAIT)
        partial = client.post_disconnecting(PATH, body, headers=headers, after=0.1)
        assert partial is None
        state.release.set()
        assert_json(finish(revision, first), 200, ok(revision, "released"))
    assert state.invoked == ["block"]


@pytest.mark.parametrize("revision", REVISIONS)
def test_disconnect_after_the_stream_is_committed_writes_no_final_event(revision: str) -> None:
    body, headers = request(revision, "progress_then_wait", {"progressToken": 3})
    with TestClient(mcpkit.Server(Bounded)) as client:
        partial = client.post_disconnecting(PATH, body, headers=headers, after=0.3)
        assert state.finished.wait(WAIT)
    assert partial is not None
    assert partial.status == 200
    assert partial.header("content-type") == "text/event-stream"
    progress = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": 3, "progress": 1},
    }
    assert list(partial.messages) == [progress]
    assert_valid(revision, "tools/call", partial.messages)
    assert state.token.cancelled
