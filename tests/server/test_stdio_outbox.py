"""Notifications over stdio are bounded like an HTTP response's queue: a ``def`` handler that
reports faster than the client reads waits for room (the connection's notifications hold at
most ``max_response_bytes``), an ``async def`` one has the excess dropped, and a report waiting
for room gives up once its request is settled (cancelled, cut off, past its deadline)."""

from __future__ import annotations

import asyncio
import json
import threading
import time

from mcpkit import (
    Cancelled,
    CompleteResult,
    Limits,
    ProgressReporter,
    Revision,
    Server,
    endpoint,
    tool,
)
from mcpkit.server._stdio_connection import _Flight, _Outbox
from mcpkit.testing import handshake_request

WAIT = 10.0
PAD = "x" * 900  # one progress notification is about 1 KB


class Outcome:
    def __init__(self) -> None:
        self.reports = 0
        self.cancelled = False
        self.finished = threading.Event()


outcome = Outcome()


@endpoint(path="/mcp", name="outbox", version="1.0.0", revisions={Revision.V2025_11_25})
class Chatty:
    @tool(name="chatty")
    def chatty(self, count: int, progress: ProgressReporter | None) -> CompleteResult:
        assert progress is not None
        try:
            for step in range(1, count + 1):
                progress.report(step, message=PAD)
                outcome.reports = step
        except Cancelled:
            outcome.cancelled = True
        finally:
            outcome.finished.set()
        return CompleteResult.from_tool_text("done")


def test_a_def_handler_waits_for_a_client_that_does_not_read_and_stops_at_its_deadline() -> None:
    """The client reads nothing (every write blocks): the handler's reports stop once 8 KB are
    outstanding, and at the deadline its next report raises ``Cancelled``; nothing grows."""
    global outcome
    outcome = Outcome()
    limits = Limits(max_response_bytes=8 * 1024, request_timeout_seconds=0.5)
    connection = Server(Chatty, limits=limits).stdio_connection()
    never = asyncio.Event()
    writes: list[int] = []

    async def write(message: bytes) -> None:
        writes.append(len(message))
        await never.wait()

    request = handshake_request(
        "tools/call",
        {"name": "chatty", "arguments": {"count": 100_000}, "_meta": {"progressToken": "p"}},
        id=1,
    )

    async def scenario() -> None:
        task = asyncio.create_task(connection.receive(json.dumps(request).encode(), write))
        assert await asyncio.to_thread(outcome.finished.wait, WAIT)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    started = time.monotonic()
    asyncio.run(scenario())
    assert time.monotonic() - started < 0.5 + 2.0
    assert outcome.cancelled
    assert 0 < outcome.reports <= 10  # 8 KB of about 1 KB each, not 100,000
    assert sum(writes) <= 8 * 1024


def test_an_outbox_drops_on_the_loop_and_gives_up_for_a_settled_request() -> None:
    async def scenario() -> tuple[bool, bool, bool, bool]:
        outbox = _Outbox(10)
        flight = _Flight(1)
        first = outbox.take(8, flight)
        on_loop = outbox.take(8, flight)  # 8 + 8 > 10, on the loop: dropped, never waits
        waiting: list[bool] = []
        thread = threading.Thread(target=lambda: waiting.append(outbox.take(8, flight)))
        thread.start()
        await asyncio.sleep(0.1)
        flight.settle()  # the request ends: the waiting report gives up
        await asyncio.to_thread(thread.join, WAIT)
        outbox.give_back(8)
        settled = outbox.take(1, flight)  # room now, but the request is settled
        return first, on_loop, waiting == [False], settled

    assert asyncio.run(scenario()) == (True, False, True, False)


def test_an_outbox_wakes_a_waiting_thread_when_room_is_made() -> None:
    async def scenario() -> list[bool]:
        outbox = _Outbox(10)
        flight = _Flight(1)
        assert outbox.take(8, flight)
        taken: list[bool] = []
        thread = threading.Thread(target=lambda: taken.append(outbox.take(8, flight)))
        thread.start()
        await asyncio.sleep(0.1)
        assert taken == []
        outbox.give_back(8)
        await asyncio.to_thread(thread.join, WAIT)
        return taken

    assert asyncio.run(scenario()) == [True]


go = threading.Event()
reported = threading.Event()


@endpoint(path="/mcp", name="race", version="1.0.0", revisions={Revision.V2025_11_25})
class Race:
    @tool(name="once")
    def once(self, progress: ProgressReporter | None) -> CompleteResult:
        assert progress is not None
        go.wait(WAIT)
        progress.report(1)
        reported.set()
        return CompleteResult.from_tool_text("once")


def test_a_notification_sent_just_before_a_cancel_is_not_written() -> None:
    """The report is accepted on the handler's thread, and the client's cancel settles the
    request before the loop gets to write it: it is dropped, and its room given back."""
    go.clear()
    reported.clear()
    connection = Server(Race).stdio_connection()
    written: list[bytes] = []

    async def write(message: bytes) -> None:
        written.append(message)

    request = handshake_request(
        "tools/call", {"name": "once", "arguments": {}, "_meta": {"progressToken": "p"}}, id=1
    )

    async def scenario() -> None:
        task = asyncio.create_task(connection.receive(json.dumps(request).encode(), write))
        await asyncio.sleep(0.1)  # the handler waits for ``go`` on its thread
        go.set()
        assert reported.wait(WAIT)  # blocks the loop: the write is handed over, not yet run
        connection.cancel(1)
        await asyncio.wait_for(task, WAIT)

    asyncio.run(scenario())
    assert written == []
    outbox = connection._outbox
    assert outbox is not None and outbox._held == 0
