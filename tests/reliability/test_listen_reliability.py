"""``subscriptions/listen`` under load, in-process over the ASGI app: listen streams that come
and go leave memory where it was; a client that stops reading is cut off at its queue bound
while another listener on the same server hears everything; a catalog swap in the middle of
concurrent calls loses no call and mixes no two catalogs.

The app is driven directly (``Server.asgi()``) with hand-written ``receive``/``send`` pairs, so
a test decides exactly when each client reads, stops reading or leaves.
"""

from __future__ import annotations

import asyncio
import gc
import json
import threading
import time
import tracemalloc
from collections.abc import Callable, MutableMapping
from concurrent.futures import Future
from typing import Any

import pytest

from mcpkit import (
    CompleteResult,
    Lease,
    Limits,
    ResourceOutput,
    Revision,
    Server,
    SubscriptionRequest,
    TextResourceContents,
    endpoint,
    resource,
    tool,
)
from mcpkit.json import JsonValue, encode, from_python
from mcpkit.testing import TestClient, TestResponse, stateless_headers, stateless_request
from mcpkit.transports import McpApp

from ..spec_schemas import schema_errors

MODERN = "2026-07-28"
TAG = "io.modelcontextprotocol/subscriptionId"
WAIT = 5.0  # seconds: an upper bound for things that happen at once


# --- the endpoints --------------------------------------------------------------------------


@endpoint(
    path="/mcp", name="listening", version="1.0.0", revisions={Revision.V2026_07_28}, listen=True
)
class VersionA:
    @tool(name="which")
    def which(self, hold: bool) -> CompleteResult:
        """``"a"``; a held call waits in its worker thread until the test lets it go."""
        if hold:
            held.arrive()
        return CompleteResult.from_tool_text("a")

    @resource(uri="test://doc", name="doc", mime_type="text/plain")
    def doc(self) -> ResourceOutput:
        contents = TextResourceContents(uri="test://doc", text="doc", mime_type="text/plain")
        return ResourceOutput(contents=(contents,))


@endpoint(
    path="/mcp", name="listening", version="1.0.0", revisions={Revision.V2026_07_28}, listen=True
)
class VersionB:
    @tool(name="which")
    def which(self, hold: bool) -> CompleteResult:
        return CompleteResult.from_tool_text("b")

    @tool(name="added")
    def added(self) -> CompleteResult:
        return CompleteResult.from_tool_text("added")

    @resource(uri="test://doc", name="doc", mime_type="text/plain")
    def doc(self) -> ResourceOutput:
        contents = TextResourceContents(uri="test://doc", text="doc", mime_type="text/plain")
        return ResourceOutput(contents=(contents,))


class Held:
    """Counts the held calls that entered their handler; each waits for ``go``."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entered = 0
        self.go = threading.Event()

    def arrive(self) -> None:
        with self.lock:
            self.entered += 1
        self.go.wait(WAIT)


held = Held()


def grant(request: SubscriptionRequest) -> Lease:
    return Lease(60.0)


def serve(limits: Limits | None = None) -> Server:
    return Server(VersionA, limits=limits or Limits(), subscription_authorizer=grant)


def listens(server: Server) -> int:
    return server.engine.deployment.audience.listens


# --- one HTTP request, from the client's side of the ASGI server ----------------------------


def scope(method: str, body: bytes) -> dict[str, Any]:
    headers = {
        **stateless_headers(method),
        "Host": "127.0.0.1:8000",
        "Content-Length": str(len(body)),
    }
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }


def listen_body(request_id: str | int, uris: list[str]) -> bytes:
    notifications = {"toolsListChanged": True, "resourceSubscriptions": uris}
    message = stateless_request(
        "subscriptions/listen", {"notifications": notifications}, id=request_id
    )
    return encode(from_python(message))


class Stream:
    """A listen request whose client reads every event it is sent, and leaves on ``leave()``.

    ``events`` are the JSON-RPC messages of the SSE stream, in order, each tagged with the
    listen's id (and, when ``checked``, valid against the schema); ``status`` is the
    response's.
    """

    def __init__(self, request_id: str | int, uris: list[str], *, checked: bool = True) -> None:
        self.id = request_id
        self.body: bytes | None = listen_body(request_id, uris)
        self.checked = checked
        self.status: int | None = None
        self.finished = False  # a body chunk with more_body false arrived
        self.events: list[dict[str, Any]] = []
        self.updates = 0  # notifications/resources/updated among the events
        self.gone = asyncio.Event()

    async def run(self, app: McpApp) -> None:
        await app(scope("subscriptions/listen", self.body or b""), self.receive, self.send)

    def leave(self) -> None:
        self.gone.set()

    async def receive(self) -> dict[str, Any]:
        if self.body is not None:
            body, self.body = self.body, None
            return {"type": "http.request", "body": body, "more_body": False}
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            assert self.status is None
            self.status = message["status"]
            return
        assert message["type"] == "http.response.body" and not self.finished
        self.finished = not message.get("more_body", False)
        for line in bytes(message["body"]).split(b"\n"):
            if line.startswith(b"data: "):
                event = json.loads(line[6:])
                if self.checked:
                    assert not schema_errors(MODERN, "JSONRPCNotification", event), event
                assert event["params"]["_meta"][TAG] == self.id
                self.events.append(event)
                self.updates += event["method"] == "notifications/resources/updated"

    def updated(self) -> list[str]:
        """The URIs of the ``notifications/resources/updated`` received, in order."""
        return [
            e["params"]["uri"]
            for e in self.events
            if e["method"] == "notifications/resources/updated"
        ]

    @property
    def acknowledged(self) -> bool:
        return bool(self.events) and (
            self.events[0]["method"] == "notifications/subscriptions/acknowledged"
        )


class Stalled(Stream):
    """A client that stops reading: its ASGI server's ``send`` of the first body chunk (the
    acknowledgement) never completes, as when the socket's buffers are full.  ``attempts``
    counts every body chunk the app tried to send."""

    def __init__(self, request_id: str | int, uris: list[str]) -> None:
        super().__init__(request_id, uris)
        self.attempts = 0
        self.stuck = asyncio.Event()  # the first body chunk is being sent

    async def send(self, message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            await super().send(message)
            return
        self.attempts += 1
        self.stuck.set()
        await asyncio.Event().wait()  # never: the client does not read


async def until(ready: Callable[[], bool], what: str) -> None:
    """Poll until ``ready()``; fail after ``WAIT`` seconds."""
    deadline = time.monotonic() + WAIT
    while not ready():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        await asyncio.sleep(0.001)


def every(streams: list[Stream], ready: Callable[[Stream], bool]) -> Callable[[], bool]:
    return lambda: all(ready(stream) for stream in streams)


def heard(stream: Stream, updates: int) -> Callable[[], bool]:
    return lambda: stream.updates == updates


# --- memory ---------------------------------------------------------------------------------

BATCH = 100  # listens open at once: under max_listens_per_owner below


async def churn(server: Server, app: McpApp, count: int) -> None:
    """``count`` listens, ``BATCH`` at a time: each is acknowledged, hears an update of its
    own resource, and its client leaves; every app call has returned at the end."""
    for first in range(0, count, BATCH):
        streams = [
            Stream(n, [f"test://item/{n}"], checked=False) for n in range(first, first + BATCH)
        ]
        tasks = [asyncio.create_task(stream.run(app)) for stream in streams]
        await until(every(streams, lambda s: s.acknowledged), "acknowledgements")
        for stream in streams:
            server.notify_resource_updated(f"TEST://item/{stream.id}")
        await until(every(streams, lambda s: s.updates > 0), "updates")
        assert all(s.updated() == [f"test://item/{s.id}"] for s in streams)
        for stream in streams:
            stream.leave()
        await asyncio.wait_for(asyncio.gather(*tasks), WAIT)
        assert all(s.status == 200 and not s.finished for s in streams)
    assert listens(server) == 0


def traced() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def test_a_thousand_listens_come_and_go_and_memory_comes_back() -> None:
    """1,000 listen streams opened, notified and left by their clients give back what they
    took: the audience is empty, and the memory Python holds is back within 5% (or 64 KiB)
    of where a warm server started.  The streams run in this process, so the measure is
    ``tracemalloc``'s count of live allocations, finer than the served process's RSS the
    session test reads."""
    server = serve(Limits(max_listens_per_owner=BATCH))
    app = server.asgi()

    async def scenario() -> None:
        await churn(server, app, 200)  # the baseline includes what a warm server holds
        before = traced()
        await churn(server, app, 1_000)
        after = traced()
        assert after - before <= max(before * 0.05, 64 * 1024), (before, after)

    tracemalloc.start()
    try:
        asyncio.run(asyncio.wait_for(scenario(), 6 * WAIT))
    finally:
        tracemalloc.stop()


# --- a client that does not read ------------------------------------------------------------

QUEUE = 8


def test_a_listener_that_never_reads_is_cut_off_and_another_hears_everything() -> None:
    """Listener A stops reading at its acknowledgement; B reads.  Each follows the same
    ``QUEUE + 1`` resources, updated one at a time: B hears every update (once each, URIs
    being distinct), while A's queue fills, and the update past its bound cuts A off: its app
    call returns at once without sending anything more (not even the result), and its place
    in the audience is freed.  B goes on listening afterwards."""
    server = serve(Limits(max_listen_queue=QUEUE))
    app = server.asgi()
    uris = [f"test://doc/{n}" for n in range(QUEUE + 1)]

    async def scenario() -> None:
        a, b = Stalled("a", uris), Stream("b", uris)
        task_a = asyncio.create_task(a.run(app))
        task_b = asyncio.create_task(b.run(app))
        await asyncio.wait_for(a.stuck.wait(), WAIT)
        await until(lambda: b.acknowledged, "B's acknowledgement")
        assert listens(server) == 2

        for count, uri in enumerate(uris, start=1):
            assert not task_a.done()  # A lives until its queue is past the bound
            server.notify_resource_updated(uri)
            await until(heard(b, count), f"B's update {count}")
        cut_at = time.monotonic()
        await asyncio.wait_for(task_a, WAIT)
        assert time.monotonic() - cut_at < 1.0
        assert a.status == 200 and a.attempts == 1 and not a.events
        assert listens(server) == 1

        assert b.updated() == uris
        server.notify_resource_updated(uris[0])
        await until(heard(b, QUEUE + 2), "B's update after A's cut")
        assert not task_b.done()
        b.leave()
        await asyncio.wait_for(task_b, WAIT)
        assert listens(server) == 0

    asyncio.run(asyncio.wait_for(scenario(), 3 * WAIT))


# --- a swap amid calls ----------------------------------------------------------------------

HELD = 8
RACING = 8


def which(client: TestClient, hold: bool) -> Future[TestResponse]:
    body = stateless_request("tools/call", {"name": "which", "arguments": {"hold": hold}})
    return client.submit("/mcp", body, headers=stateless_headers("tools/call", "which"))


def marker(response: TestResponse) -> str:
    """The text of a successful ``tools/call`` answer (any error fails the test)."""
    assert response.status == 200, response
    message: JsonValue = response.json
    assert isinstance(message, dict) and "error" not in message, message
    plain = json.loads(encode(from_python(message)))
    assert not schema_errors(MODERN, "CallToolResult", plain["result"]), plain
    content = plain["result"]["content"]
    assert plain["result"].get("isError") is not True and len(content) == 1, plain
    text: str = content[0]["text"]
    return text


def test_a_swap_amid_sixteen_calls_loses_none_and_mixes_none() -> None:
    """Sixteen ``tools/call`` in flight while another thread swaps version B in: eight entered
    version A's handler before the swap and finish after it (``"a"``, on the catalog they were
    routed to); eight more are sent from their own threads at the moment of the swap (``"a"``
    or ``"b"``, whichever catalog they were routed to; ``"b"`` for each sent after the swap
    returned).  Every one is a 200 with a valid result, never an error; afterwards every call
    is B's, and B's added tool is served."""
    global held
    held = Held()
    server = serve()
    with TestClient(server) as client:
        first = [which(client, True) for _ in range(HELD)]
        deadline = time.monotonic() + WAIT
        while held.entered < HELD:
            assert time.monotonic() < deadline, "the held calls did not start"
            time.sleep(0.001)

        start = threading.Barrier(RACING + 1)
        racing: list[tuple[float, str]] = []
        lock = threading.Lock()
        swapped_at: list[float] = []

        def race() -> None:
            start.wait(WAIT)
            sent = time.monotonic()
            text = marker(which(client, False).result(WAIT))
            with lock:
                racing.append((sent, text))

        def swap() -> None:
            start.wait(WAIT)
            server.swap(VersionB)
            swapped_at.append(time.monotonic())

        threads = [threading.Thread(target=race) for _ in range(RACING)]
        threads.append(threading.Thread(target=swap))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT)
        assert not any(thread.is_alive() for thread in threads)
        assert len(swapped_at) == 1 and len(racing) == RACING

        held.go.set()
        assert [marker(future.result(WAIT)) for future in first] == ["a"] * HELD
        assert {text for _, text in racing} <= {"a", "b"}
        assert all(text == "b" for sent, text in racing if sent > swapped_at[0]), racing
        assert [marker(which(client, False).result(WAIT)) for _ in range(4)] == ["b"] * 4
        added = stateless_request("tools/call", {"name": "added", "arguments": {}})
        response = client.post("/mcp", added, headers=stateless_headers("tools/call", "added"))
        assert marker(response) == "added"
