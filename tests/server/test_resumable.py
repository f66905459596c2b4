"""Resumable streams of 2025 sessions: every SSE event carries an id, a 2025-11-25 stream
starts with a priming event and ``retry:``, the events are kept (bounded) for replay, and a
``GET`` with ``Last-Event-ID`` replays what followed that event and follows a call still
running; the client leaving does not cancel the call.  A replay is whole or refused.

The event store itself (ids, bounds, eviction) is ``tests/server/test_events.py``."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any, Final

import pytest

import mcpkit
from mcpkit import (
    CancellationToken,
    CompleteResult,
    Limits,
    MemoryEventStore,
    ProgressReporter,
    Revision,
    Server,
)
from mcpkit.server import Replay
from mcpkit.testing import (
    TestClient,
    TestResponse,
    handshake_request,
    stateless_headers,
    stateless_request,
)

JUNE, NOVEMBER, MODERN = Revision.V2025_06_18, Revision.V2025_11_25, Revision.V2026_07_28
WAIT: Final = 10.0
PRIMING: Final = re.compile(rb"^id: (\d+)-0\nretry: 1000\ndata: \n\n")
REPLAY_UNAVAILABLE: Final = {
    "code": -32600,
    "message": "Last-Event-ID names no event this session can replay from; call again instead",
}


class Gate:
    def __init__(self) -> None:
        self.reported = threading.Event()
        self.release = threading.Event()
        self.cancelled = threading.Event()


gate = Gate()


@mcpkit.endpoint(
    path="/mcp",
    name="resumable",
    version="1.0.0",
    revisions={JUNE, NOVEMBER, MODERN},
    session_revisions={JUNE, NOVEMBER},
)
class Resumable:
    @mcpkit.tool(name="slow")
    def slow(self, progress: ProgressReporter | None, token: CancellationToken) -> CompleteResult:
        """Reports once, waits for the test, reports again and answers."""
        assert progress is not None
        progress.report(1)
        gate.reported.set()
        while not gate.release.wait(0.01):
            if token.cancelled:
                gate.cancelled.set()
                return CompleteResult.from_tool_text("cancelled")
        progress.report(2)
        return CompleteResult.from_tool_text("done")

    @mcpkit.tool(name="quick")
    def quick(self, progress: ProgressReporter | None) -> CompleteResult:
        assert progress is not None
        progress.report(1)
        return CompleteResult.from_tool_text("quick")

    @mcpkit.tool(name="plain")
    def plain(self) -> CompleteResult:
        return CompleteResult.from_tool_text("plain")


@pytest.fixture(autouse=True)
def _fresh_gate() -> Iterator[None]:
    global gate
    gate = Gate()
    yield
    gate.release.set()


class Client:
    """A TestClient with one 2025 session."""

    def __init__(self, server: Server, revision: Revision = NOVEMBER) -> None:
        self.server = server
        self.http = TestClient(server)
        self.revision = revision
        params = {"protocolVersion": revision.wire, "capabilities": {}}
        opened = self.http.post("/mcp", handshake_request("initialize", params))
        session_id = opened.header("mcp-session-id")
        assert session_id is not None
        self.session_id = session_id

    def headers(self, **extra: str) -> dict[str, str]:
        return {
            "mcp-session-id": self.session_id,
            "mcp-protocol-version": self.revision.wire,
            **extra,
        }

    def call(self, tool: str, id: int = 7) -> Future[TestResponse]:
        params = {"name": tool, "arguments": {}, "_meta": {"progressToken": "p"}}
        message = handshake_request("tools/call", params, id=id)
        return self.http.submit("/mcp", message, headers=self.headers())

    def leave_call(self, tool: str, after: float | threading.Event) -> TestResponse | None:
        params = {"name": tool, "arguments": {}, "_meta": {"progressToken": "p"}}
        message = handshake_request("tools/call", params, id=7)
        return self.http.post_disconnecting("/mcp", message, after=after, headers=self.headers())

    def resume(self, last_event_id: str | None = None) -> Future[TestResponse]:
        extra = {"accept": "text/event-stream"}
        if last_event_id is not None:
            extra["last-event-id"] = last_event_id
        return self.http.submit("/mcp", b"", method="GET", headers=self.headers(**extra))

    def end(self) -> None:
        ended = self.http.post("/mcp", b"", method="DELETE", headers=self.headers())
        assert ended.status == 204

    def close(self) -> None:
        self.http.close()


@pytest.fixture()
def client() -> Iterator[Client]:
    c = Client(Server(Resumable))
    yield c
    c.close()


def ids(body: bytes) -> list[str]:
    return [match.decode() for match in re.findall(rb"^id: (\S+)$", body, re.MULTILINE)]


def kinds(response: TestResponse) -> list[str]:
    """Each message of the response: its method, or ``result`` / ``error``."""
    found = []
    for message in response.messages:
        assert isinstance(message, mcpkit.json.JsonObject)
        method = message.get("method")
        if not isinstance(method, str):
            method = "result" if "result" in message else "error"
        found.append(method)
    return found


# --- ids, priming and retry ----------------------------------------------------------------------


def test_a_2025_11_25_stream_is_primed_and_every_event_has_an_id(client: Client) -> None:
    response = client.call("quick").result(WAIT)
    assert response.header("content-type") == "text/event-stream"
    primed = PRIMING.match(response.body)
    assert primed is not None
    stream = primed[1].decode()
    assert ids(response.body) == [f"{stream}-0", f"{stream}-1", f"{stream}-2"]
    assert kinds(response) == ["notifications/progress", "result"]


def test_a_2025_06_18_stream_has_ids_and_no_priming_event() -> None:
    june = Client(Server(Resumable), JUNE)
    try:
        response = june.call("quick").result(WAIT)
        assert not response.body.startswith(b"id: 1-0\nretry")
        assert ids(response.body) == ["1-1", "1-2"]
    finally:
        june.close()


def test_streams_of_one_session_have_ids_of_their_own(client: Client) -> None:
    first = ids(client.call("quick", id=1).result(WAIT).body)
    second = ids(client.call("quick", id=2).result(WAIT).body)
    assert not set(first) & set(second)


def test_a_json_answer_and_a_2026_request_keep_no_events(client: Client) -> None:
    store = client.server.engine.pipeline.events
    assert isinstance(store, MemoryEventStore)
    plain = client.call("plain").result(WAIT)
    assert plain.header("content-type") == "application/json"
    params = {"name": "quick", "arguments": {}, "_meta": {"progressToken": 1}}
    modern = client.http.post(
        "/mcp",
        stateless_request("tools/call", params),
        headers=stateless_headers("tools/call", "quick"),
    )
    assert modern.header("content-type") == "text/event-stream"
    assert ids(modern.body) == [] and b"retry:" not in modern.body
    assert store.kept_bytes == 0


# --- resuming a POST's stream ------------------------------------------------------------------


def test_a_client_that_leaves_does_not_cancel_and_resumes_the_rest(client: Client) -> None:
    partial = client.leave_call("slow", after=0.3)
    assert partial is not None
    seen = ids(partial.body)
    assert seen[0].endswith("-0")  # the priming event at least
    last = seen[-1]
    follower = client.resume(last)
    gate.release.set()
    resumed = follower.result(WAIT)
    assert resumed.status == 200
    assert not gate.cancelled.is_set()  # leaving is not cancelling
    assert kinds(resumed)[-1] == "result"
    last_message: Any = resumed.messages[-1]
    assert last_message["result"]["content"][0]["text"] == "done"
    stream = last.split("-")[0]
    assert all(event_id.startswith(f"{stream}-") for event_id in ids(resumed.body))
    # nothing the client already had is sent again
    assert not set(ids(resumed.body)) & set(seen)


def test_resuming_a_finished_stream_replays_what_followed_and_ends(client: Client) -> None:
    body = client.call("quick").result(WAIT).body
    first, progress, result = ids(body)
    replayed = client.resume(first).result(WAIT)
    assert kinds(replayed) == ["notifications/progress", "result"]
    assert ids(replayed.body) == [progress, result]
    assert kinds(client.resume(progress).result(WAIT)) == ["result"]
    assert client.resume(result).result(WAIT).messages == ()  # caught up: nothing


@pytest.mark.parametrize("asked", ["99-0", "1-9", "garbage", "0-5"])
def test_an_id_the_session_cannot_replay_from_is_refused_whole(client: Client, asked: str) -> None:
    client.call("quick").result(WAIT)
    refused = client.resume(asked).result(WAIT)
    assert refused.status == 400
    assert refused.header("content-type") == "application/json"
    assert refused.json == {"jsonrpc": "2.0", "error": REPLAY_UNAVAILABLE}


def test_an_evicted_event_is_refused_not_replayed_with_a_gap() -> None:
    client = Client(Server(Resumable, limits=Limits(max_stream_events=1)))
    try:
        first = ids(client.call("quick").result(WAIT).body)[0]  # two events: one kept
        refused = client.resume(first).result(WAIT)
        assert refused.status == 400
    finally:
        client.close()


def test_another_sessions_events_are_not_this_ones(client: Client) -> None:
    body = client.call("quick").result(WAIT).body
    other = Client(client.server)
    try:
        assert other.resume(ids(body)[0]).result(WAIT).status == 400
    finally:
        other.close()


def test_a_cancel_after_the_client_left_still_stops_the_call(client: Client) -> None:
    partial = client.leave_call("slow", after=0.3)
    assert partial is not None
    follower = client.resume(ids(partial.body)[-1])
    cancel = handshake_request("notifications/cancelled", {"requestId": 7}, id=None)
    assert client.http.post("/mcp", cancel, headers=client.headers()).status == 202
    assert gate.cancelled.wait(WAIT)
    assert "result" not in kinds(follower.result(WAIT))  # the stream ends without an answer


def test_ending_the_session_ends_a_follower_and_forgets_the_events(client: Client) -> None:
    partial = client.leave_call("slow", after=0.3)
    assert partial is not None
    follower = client.resume(ids(partial.body)[-1])
    client.end()
    assert follower.result(WAIT).status == 200
    store = client.server.engine.pipeline.events
    assert isinstance(store, MemoryEventStore) and store.kept_bytes == 0


class Forgetful(MemoryEventStore):
    """An event store that can be told to have lost everything (a shared store evicting)."""

    lost = False

    async def replay(self, session_id: str, last_event_id: str) -> Replay | None:
        return None if self.lost else await super().replay(session_id, last_event_id)


def test_a_follower_whose_events_are_dropped_meanwhile_ends() -> None:
    store = Forgetful(Limits())
    client = Client(Server(Resumable, events=store))
    try:
        partial = client.leave_call("slow", after=0.3)
        assert partial is not None
        follower = client.resume(ids(partial.body)[-1])
        threading.Event().wait(0.2)  # following
        store.lost = True
        gate.release.set()
        resumed = follower.result(WAIT)
        assert resumed.status == 200 and resumed.messages == ()
    finally:
        client.close()


def test_open_streams_per_session_hold_at_the_limit_and_refuse_past_it() -> None:
    client = Client(Server(Resumable, limits=Limits(max_session_streams=2)))
    try:
        partial = client.leave_call("slow", after=0.3)
        assert partial is not None
        last = ids(partial.body)[-1]
        standalone = client.resume()
        followers = [client.resume(last)]  # two open: at the limit
        threading.Event().wait(0.2)
        past = client.resume(last).result(WAIT)
        assert past.status == 429
        gate.release.set()
        assert kinds(followers[0].result(WAIT))[-1] == "result"
        client.end()
        assert standalone.result(WAIT).status == 200
    finally:
        client.close()


def test_a_draining_server_ends_its_followers(client: Client) -> None:
    partial = client.leave_call("slow", after=0.3)
    assert partial is not None
    follower = client.resume(ids(partial.body)[-1])
    threading.Event().wait(0.1)
    loop = client.http._running_loop()
    drained = asyncio.run_coroutine_threadsafe(client.server.engine.drain(0.1), loop)
    gate.release.set()
    drained.result(WAIT)
    assert follower.result(WAIT).status == 200


# --- the standalone stream ---------------------------------------------------------------------


def test_the_standalone_stream_resumes_after_its_own_events() -> None:
    @mcpkit.endpoint(
        path="/mcp", name="docs", version="1.0.0", revisions={NOVEMBER},
        session_revisions={NOVEMBER},
    )  # fmt: skip
    class Docs:
        @mcpkit.resource(uri="test://doc", name="doc")
        def doc(self) -> mcpkit.ResourceOutput:
            text = mcpkit.TextResourceContents(uri="test://doc", text="")
            return mcpkit.ResourceOutput(contents=(text,))

    server = Server(Docs)
    client = Client(server)
    try:
        subscribe = handshake_request("resources/subscribe", {"uri": "test://doc"})
        assert client.http.post("/mcp", subscribe, headers=client.headers()).status == 200
        server.notify_resource_updated("test://doc")  # queued until a stream opens
        headers = client.headers(accept="text/event-stream")
        first = client.http.post_disconnecting(
            "/mcp", b"", after=0.3, method="GET", headers=headers
        )
        assert first is not None
        assert ids(first.body) == ["0-0", "0-1"]  # primed, then the queued update
        server.notify_resource_updated("test://doc")  # no stream open: queued again
        resumed = client.resume("0-0")
        threading.Event().wait(0.2)
        assert client.resume().result(WAIT).status == 409  # one standalone stream at a time
        client.end()
        body = resumed.result(WAIT).body
        assert ids(body) == ["0-1", "0-2"]  # what followed 0-0, then the live update
        assert b"retry:" not in body  # only the session's first standalone stream is primed
    finally:
        client.close()


def test_a_quiet_follower_sends_keep_alives_and_notices_a_plain_disconnect_event() -> None:
    """Driven below the transport: a transport may hand a plain ``asyncio.Event`` as the
    disconnect signal, which a follower notices at its next keep-alive."""
    server = Server(Resumable, limits=Limits(stream_keepalive_seconds=0.02))
    engine = server.engine

    async def scenario() -> list[bytes]:
        opened = Recorder()
        init = {"protocolVersion": "2025-11-25", "capabilities": {}}
        await engine.handle_http(
            http("POST", handshake_request("initialize", init)), opened, asyncio.Event()
        )
        session = {"mcp-session-id": opened.headers[b"mcp-session-id"].decode()}
        params = {"name": "slow", "arguments": {}, "_meta": {"progressToken": "p"}}
        call = Recorder()
        calling = asyncio.ensure_future(
            engine.handle_http(
                http("POST", handshake_request("tools/call", params, id=7), **session),
                call,
                asyncio.Event(),
            )
        )
        while not any(b"progress" in chunk for chunk in call.chunks):
            await asyncio.sleep(0.01)
        last = ids(b"".join(call.chunks))[-1]
        follower = Recorder()
        gone = asyncio.Event()
        following = asyncio.ensure_future(
            engine.handle_http(
                http("GET", None, accept="text/event-stream", **{"last-event-id": last}, **session),
                follower,
                gone,
            )
        )
        await asyncio.sleep(0.1)
        gone.set()
        await asyncio.wait_for(following, WAIT)
        gate.release.set()
        await asyncio.wait_for(calling, WAIT)
        return follower.chunks

    chunks = asyncio.run(scenario())
    assert chunks.count(b": keep-alive\n\n") >= 2 and chunks[-1] == b""


class Recorder:
    """An ``HttpExchange`` that keeps what it is given."""

    def __init__(self) -> None:
        self.status = 0
        self.headers: dict[bytes, bytes] = {}
        self.chunks: list[bytes] = []

    async def start(self, status: int, headers: Any) -> None:
        self.status, self.headers = status, dict(headers)

    async def write(self, chunk: bytes, *, more: bool) -> None:
        self.chunks.append(chunk)


def http(method: str, message: object, **headers: str) -> mcpkit.server.HttpRequest:
    body = b"" if message is None else json.dumps(message).encode()
    fields = {"host": "127.0.0.1", "content-type": "application/json", **headers}
    fields.setdefault("accept", "application/json, text/event-stream")
    fields.setdefault("mcp-protocol-version", "2025-11-25")
    return mcpkit.server.HttpRequest(
        method=method, raw_path="/mcp", headers=tuple(fields.items()), body=body
    )
