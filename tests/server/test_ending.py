"""How a request ends when its client is gone, when it is cut off, and when the server stops:
the responder closes (blocked reporters wake, later reports do nothing, a departed client's
queue is dropped), the engine refuses new requests while draining, and every 503 says when to
come back (``Retry-After``)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Sequence

from mcpkit import CompleteResult, Limits, Revision, Server, endpoint, tool
from mcpkit.server import Signal
from mcpkit.server._stream import Responder, respond
from mcpkit.testing import TestClient, stateless_headers, stateless_request

OVERLOADED = {"code": -32603, "message": "Server overloaded; retry later"}


class Recorder:
    """An ``HttpExchange`` that records what it is told."""

    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []

    async def start(self, status: int, headers: Sequence[tuple[bytes, bytes]]) -> None:
        self.events.append(("start", (status, list(headers))))

    async def write(self, chunk: bytes, *, more: bool) -> None:
        self.events.append(("write", chunk))


def test_a_bodyless_503_carries_retry_after() -> None:
    exchange = Recorder()
    asyncio.run(respond(exchange, 503, None))
    assert exchange.events[0] == (
        "start",
        (503, [(b"cache-control", b"no-store"), (b"content-length", b"0"), (b"retry-after", b"1")]),
    )


def test_a_report_from_a_thread_after_the_client_left_is_dropped_with_the_queue() -> None:
    """The thread's message is accepted just before the close; when the loop gets to it the
    client is gone, so it is never queued, and a report blocked on a full queue wakes."""

    async def scenario() -> tuple[list[tuple[str, object]], bool]:
        gone = Signal()
        responder = Responder(Recorder(), budget=10, disconnected=gone)
        exchange = responder._exchange
        assert isinstance(exchange, Recorder)
        sent = threading.Thread(target=responder.notify, args=(b"12345678",))
        sent.start()
        sent.join()  # accepted; its hand-over to the loop is not run yet
        blocked = threading.Thread(target=responder.notify, args=(b"87654321",))
        blocked.start()  # 8 + 8 > 10: waits for room
        gone.set()
        responder.close()
        await asyncio.to_thread(blocked.join, 5)
        await asyncio.sleep(0)  # the hand-over runs now: the client is gone, nothing queued
        return exchange.events, blocked.is_alive()

    events, still_blocked = asyncio.run(scenario())
    assert (events, still_blocked) == ([], False)


def test_a_queue_is_dropped_when_the_client_left_while_it_was_being_written() -> None:
    async def scenario() -> list[tuple[str, object]]:
        gone = Signal()
        exchange = Recorder()
        responder = Responder(exchange, disconnected=gone)

        async def work() -> bytes:
            for index in range(5):
                responder.notify(b"%d" % index)
            gone.set()
            responder.close()
            raise RuntimeError("the executor saw the disconnect")

        with contextlib.suppress(RuntimeError):
            await responder.run(work())
        return exchange.events

    assert asyncio.run(scenario()) == []


def test_a_cancelled_request_stops_its_drainer_without_writing() -> None:
    async def scenario() -> tuple[list[tuple[str, object]], bool]:
        exchange = Recorder()
        responder = Responder(exchange)
        forever = asyncio.Event()

        async def work() -> bytes:
            responder.notify(b"one")
            await forever.wait()
            return b"never"

        task = asyncio.ensure_future(responder.run(work()))
        await asyncio.sleep(0)
        await asyncio.sleep(0)  # the drainer wrote "one" and waits for more
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        drainer = responder._drainer
        assert drainer is not None
        await asyncio.sleep(0)
        responder.notify(b"two")  # closed: a no-op
        return exchange.events, drainer.cancelled()

    events, drainer_cancelled = asyncio.run(scenario())
    assert drainer_cancelled
    assert [kind for kind, _ in events] == ["start", "write"]


@endpoint(path="/mcp", name="ending", version="1.0.0", revisions={Revision.V2026_07_28})
class Ending:
    @tool(name="quick")
    def quick(self) -> CompleteResult:
        return CompleteResult.from_tool_text("quick")


def post(client: TestClient, id: int) -> tuple[int, str | None, object]:
    body = stateless_request("tools/call", {"name": "quick", "arguments": {}}, id=id)
    response = client.post("/mcp", body, headers=stateless_headers("tools/call", "quick"))
    return response.status, response.header("retry-after"), response.json


def test_a_draining_engine_refuses_new_requests_with_503_until_it_starts_again() -> None:
    server = Server(Ending, limits=Limits(handler_slots=2))
    with TestClient(server) as client:
        assert post(client, 1)[0] == 200
        assert asyncio.run(server.engine.drain(5.0)) == 0  # nothing in flight: returns at once
        assert post(client, 2) == (503, "1", {"jsonrpc": "2.0", "id": 2, "error": OVERLOADED})
        asyncio.run(server.engine.startup())
        status, retry, _ = post(client, 3)
        assert (status, retry) == (200, None)


def test_a_wait_that_begins_after_the_stop_ends_at_once() -> None:
    """A queued call handed its slot just as the drain ends starts its work after the stop:
    its wait for the work ends at once, ``STOPPED``."""
    from mcpkit.server._execution import _Outcome, _race, _Stop

    async def scenario() -> _Outcome:
        loop = asyncio.get_running_loop()
        stop = _Stop()
        stop.set()
        work: asyncio.Future[object] = loop.create_future()
        return await _race(loop, work, loop.time() + 10, None, stop)

    assert asyncio.run(scenario()) is _Outcome.STOPPED
