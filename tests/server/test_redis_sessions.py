"""``RedisSessionStore``: one 2025 session served by two nodes that share a real Redis (two
servers, each with its own store and event loop, as two processes would be).

Whichever node a request lands on, it finds the session and its client metadata; what one
node does reaches the other: the end of a session, a changed log level or subscriptions, a
cancel for a call running on the other node, the client's answer to a request the other node
sent, and the events of a stream the other node writes (``Last-Event-ID``).  The quotas hold
across nodes, the sessions expire, a Redis that cannot be reached is a fixed 503 for session
requests while stateless ones go on, and nothing of a session id is stored in Redis.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import importlib.util
import math
import os
import secrets
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis

from mcpkit import ConfigurationError, Limits, Server, SessionStoreUnavailable
from mcpkit.errors import TooManySessions
from mcpkit.json import JsonObject
from mcpkit.model import Revision
from mcpkit.server import MemoryBroadcaster, RedisEventStore, RedisSessionStore, Session
from mcpkit.server import _redis_sessions as redis_sessions
from mcpkit.testing import TestClient, handshake_request

from ..redis_server import RedisServer
from . import test_exchange as exchange
from . import test_sessions as sessions
from .test_exchange import NAME_ANSWER, Asking, final_text, messages, owner_by_header
from .test_sessions import Sessions, call, initialize

WAIT = 10.0
NOVEMBER = Revision.V2025_11_25


class Node:
    """One server over the shared Redis, with its own store, client and event loop."""

    def __init__(self, url: str, app: Any, broadcaster: MemoryBroadcaster, **options: Any):
        self.store = RedisSessionStore(url, **options.pop("store", {}))
        self.server = Server(app, sessions=self.store, broadcaster=broadcaster, **options)
        self.client = TestClient(self.server)

    def run(self, coroutine: Any) -> Any:
        loop = self.client._running_loop()
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result(WAIT)

    def held(self, session_id: str) -> Session | None:
        return self.run(self.store.get(session_id))  # type: ignore[no-any-return]

    def close(self) -> None:
        self.client.close()


@pytest.fixture
def pair(redis_server: RedisServer) -> Iterator[tuple[Node, Node]]:
    broadcaster = MemoryBroadcaster()  # changes reach both servers, as RedisBroadcaster does
    a = Node(redis_server.url, Sessions, broadcaster)
    b = Node(redis_server.url, Sessions, broadcaster)
    try:
        yield a, b
    finally:
        sessions.gate.release.set()
        a.close()
        b.close()


def eventually(check: Any, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.01)


def subscriptions_of(node: Node, session_id: str) -> set[str]:
    held = node.held(session_id)
    return set() if held is None else held.subscriptions


def waiting_on(node: Node, session_id: str) -> int:
    held = node.held(session_id)
    return 0 if held is None else len(held._exchange or ())


def headers(session_id: str, **extra: str) -> dict[str, str]:
    return {"mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25", **extra}


def test_any_node_serves_the_session_with_what_initialize_said(pair: tuple[Node, Node]) -> None:
    a, b = pair
    session_id = initialize(a.client)
    response = call(b.client, "who", session_id)
    assert response.status == 200
    answered: Any = response.json
    assert answered["result"]["content"][0]["text"] == "c ['roots']"
    # a notification or a response on the other node is taken too
    cancelled = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}
    assert b.client.post("/mcp", cancelled, headers=headers(session_id)).status == 202


def test_a_session_ended_on_one_node_is_gone_on_the_other(pair: tuple[Node, Node]) -> None:
    a, b = pair
    session_id = initialize(a.client)
    sessions.gate = sessions.Gate()
    pending = a.client.submit(
        "/mcp",
        handshake_request("tools/call", {"name": "hold", "arguments": {}}, id=3),
        headers=headers(session_id),
    )
    assert sessions.gate.entered.wait(WAIT)
    assert call(b.client, "who", session_id).status == 200  # B holds it too
    ended = b.client.post("/mcp", b"", method="DELETE", headers=headers(session_id))
    assert ended.status == 204
    assert sessions.gate.cancelled.wait(WAIT)  # A's call heard the end and stopped
    assert pending.result(WAIT).status == 200
    assert call(a.client, "who", session_id, id=4).status == 404
    assert call(b.client, "who", session_id, id=5).status == 404
    assert a.store.held == 0 and b.store.held == 0


def test_a_cancel_sent_to_one_node_stops_the_call_on_the_other(pair: tuple[Node, Node]) -> None:
    a, b = pair
    session_id = initialize(a.client)
    call(b.client, "who", session_id)  # B holds the session before the cancel
    sessions.gate = sessions.Gate()
    pending = a.client.submit(
        "/mcp",
        handshake_request("tools/call", {"name": "hold", "arguments": {}}, id=3),
        headers=headers(session_id),
    )
    assert sessions.gate.entered.wait(WAIT)
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}
    assert b.client.post("/mcp", cancel, headers=headers(session_id)).status == 202
    assert sessions.gate.cancelled.wait(WAIT)
    assert pending.result(WAIT).messages == ()  # cancelled: no answer


def test_a_log_level_set_on_one_node_filters_the_other(pair: tuple[Node, Node]) -> None:
    a, b = pair
    session_id = initialize(a.client)
    assert call(a.client, "log", session_id).status == 200  # A holds the session
    level = handshake_request("logging/setLevel", {"level": "error"}, id=2)
    assert b.client.post("/mcp", level, headers=headers(session_id)).status == 200
    logged = call(a.client, "log", session_id, id=3)
    written: list[Any] = list(logged.messages)
    levels = [m["params"]["level"] for m in written if m.get("method")]
    assert levels == ["error"]


def test_subscriptions_made_on_one_node_are_heard_on_the_others_stream(
    pair: tuple[Node, Node],
) -> None:
    a, b = pair
    session_id = initialize(a.client)
    subscribe = handshake_request("resources/subscribe", {"uri": "test://doc"}, id=2)
    assert a.client.post("/mcp", subscribe, headers=headers(session_id)).status == 200
    # B first sees the session with its subscription already made
    stream = b.client.submit(
        "/mcp", b"", method="GET", headers=headers(session_id, accept="text/event-stream")
    )
    eventually(lambda: (held := b.held(session_id)) is not None and held.streaming)
    assert subscriptions_of(b, session_id) == {"test://doc"}
    a.server.notify_resource_updated("test://doc")
    eventually(lambda: (held := b.held(session_id)) is not None and not held.pending)
    # one made after B holds the session reaches it too, and so does an unsubscribe
    item = handshake_request("resources/subscribe", {"uri": "test://item/1"}, id=3)
    assert a.client.post("/mcp", item, headers=headers(session_id)).status == 200
    eventually(lambda: subscriptions_of(b, session_id) == {"test://doc", "test://item/1"})
    drop = handshake_request("resources/unsubscribe", {"uri": "test://doc"}, id=4)
    assert a.client.post("/mcp", drop, headers=headers(session_id)).status == 200
    eventually(lambda: subscriptions_of(b, session_id) == {"test://item/1"})
    a.server.notify_resource_updated("test://doc")  # no longer heard
    a.server.notify_resource_updated("test://item/1")
    eventually(lambda: (held := b.held(session_id)) is not None and not held.pending)
    a.client.post("/mcp", b"", method="DELETE", headers=headers(session_id))
    body = stream.result(WAIT)
    written: list[Any] = list(body.messages)
    updates = [m for m in written if m.get("method") == "notifications/resources/updated"]
    assert [m["params"]["uri"] for m in updates] == ["test://doc", "test://item/1"]


def test_sessions_per_owner_hold_across_nodes(redis_server: RedisServer) -> None:
    broadcaster = MemoryBroadcaster()
    limits = Limits(max_anonymous_sessions=1)
    a = Node(redis_server.url, Sessions, broadcaster, limits=limits)
    b = Node(redis_server.url, Sessions, broadcaster, limits=limits)
    try:
        first = initialize(a.client)
        refused = b.client.post(
            "/mcp", handshake_request("initialize", {**sessions.INIT}), headers={}
        )
        assert refused.status == 429
        b.client.post("/mcp", b"", method="DELETE", headers=headers(first))
        assert initialize(b.client) != first
    finally:
        a.close()
        b.close()


def test_a_quiet_session_of_an_owner_at_its_quota_is_reclaimed_across_nodes(
    redis_server: RedisServer,
) -> None:
    clock = [1_000.0]
    broadcaster = MemoryBroadcaster()
    limits = Limits(max_anonymous_sessions=1)
    options = {"store": {"clock": lambda: clock[0]}, "limits": limits}
    a = Node(redis_server.url, Sessions, broadcaster, **options)
    b = Node(redis_server.url, Sessions, broadcaster, **options)
    try:
        first = initialize(a.client)
        clock[0] += 31  # quiet past the reclaim delay
        second = initialize(b.client)
        eventually(lambda: a.store.held == 0)  # A heard the reclaimed session end
        assert call(a.client, "who", first).status == 404
        assert call(a.client, "who", second).status == 200
    finally:
        a.close()
        b.close()


def test_an_idle_session_expires_on_every_node(redis_server: RedisServer) -> None:
    clock = [1_000.0]
    broadcaster = MemoryBroadcaster()
    limits = Limits(session_idle_timeout_seconds=60.0)
    options = {"store": {"clock": lambda: clock[0], "revalidate_seconds": 0.0}, "limits": limits}
    a = Node(redis_server.url, Sessions, broadcaster, **options)
    b = Node(redis_server.url, Sessions, broadcaster, **options)
    try:
        session_id = initialize(a.client)
        clock[0] += 59
        assert call(b.client, "who", session_id).status == 200
        clock[0] += 60  # pushed back by B's touch? only every tenth of the idle time
        assert call(a.client, "who", session_id, id=2).status == 404
        assert call(b.client, "who", session_id, id=3).status == 404
    finally:
        a.close()
        b.close()


def test_nothing_of_a_session_id_is_stored(
    pair: tuple[Node, Node], redis_server: RedisServer
) -> None:
    a, _ = pair
    session_id = initialize(a.client)
    call(a.client, "log", session_id)
    client = redis.Redis.from_url(redis_server.url)
    try:
        for key in client.keys("*"):
            assert session_id.encode() not in key
            if client.type(key) == b"hash":
                for value in client.hgetall(key).values():
                    assert session_id.encode() not in value
    finally:
        client.close()
    assert session_id not in repr(a.store)


def test_redis_unreachable_is_a_fixed_503_for_sessions_only(redis_server: RedisServer) -> None:
    node = Node(redis_server.url, Sessions, MemoryBroadcaster(), store={"timeout_seconds": 0.5})
    try:
        session_id = initialize(node.client)
        redis_server.stop()
        started = time.monotonic()
        refused = node.client.post(
            "/mcp", handshake_request("initialize", {**sessions.INIT}), headers={}
        )
        assert refused.status == 503 and time.monotonic() - started < 5
        error: Any = refused.json
        assert error["error"] == {
            "code": -32603,
            "message": "Session store unavailable; retry later",
        }
        assert session_id not in refused.body.decode()
        # a stateless request needs no session
        modern = node.client.post(
            "/mcp",
            handshake_request("tools/list", {}),
            headers={"mcp-protocol-version": "2025-11-25"},
        )
        assert modern.status in (200, 400)  # served (or refused for its own reasons), not 503
        redis_server.start()
        eventually(lambda: initialize(node.client) is not None)
    finally:
        node.close()


# --- 2025 input and resumption across nodes ---------------------------------------------------


@pytest.fixture
def asking(redis_server: RedisServer) -> Iterator[tuple[Node, Node]]:
    broadcaster = MemoryBroadcaster()
    options = {"admission": owner_by_header, "keyring": exchange.KEYRING}
    a = Node(redis_server.url, [Asking], broadcaster, **options)
    b = Node(redis_server.url, [Asking], broadcaster, **options)
    try:
        yield a, b
    finally:
        a.close()
        b.close()


def open_asking(node: Node) -> str:
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": exchange.EVERY_CAPABILITY,
        "clientInfo": {"name": "c", "version": "1"},
    }
    response = node.client.post(
        "/mcp", handshake_request("initialize", params), headers={"x-owner": "alice"}
    )
    assert response.status == 200
    session_id = response.header("mcp-session-id")
    assert session_id is not None
    return session_id


def test_an_answer_posted_to_another_node_reaches_the_call_that_asked(
    asking: tuple[Node, Node],
) -> None:
    a, b = asking
    session_id = open_asking(a)
    owner = headers(session_id, **{"x-owner": "alice"})
    message = handshake_request("tools/call", {"name": "greet", "arguments": {}}, id=7)
    pending = a.client.submit("/mcp", message, headers=owner)
    eventually(lambda: waiting_on(a, session_id) == 1)
    asked = a.held(session_id)
    assert asked is not None and asked._exchange is not None
    (request_id,) = asked._exchange._waiting
    assert request_id > 1 << 32  # the node's own range
    answer = {"jsonrpc": "2.0", "id": request_id, "result": NAME_ANSWER}
    assert b.client.post("/mcp", answer, headers=owner).status == 202
    assert final_text(pending.result(WAIT)) == "Hello, Ada!"


def test_a_stream_left_on_one_node_resumes_on_the_other(asking: tuple[Node, Node]) -> None:
    a, b = asking
    session_id = open_asking(a)
    owner = headers(session_id, **{"x-owner": "alice"})
    message = handshake_request("tools/call", {"name": "greet", "arguments": {}}, id=7)
    partial = a.client.post_disconnecting("/mcp", message, after=0.3, headers=owner)
    assert partial is not None
    (asked,) = messages(partial)
    assert asked["method"] == "elicitation/create"
    stream = partial.body.split(b"\n", 1)[0].removeprefix(b"id: ").split(b"-")[0].decode()
    resumed = b.client.submit(
        "/mcp",
        b"",
        method="GET",
        headers={**owner, "accept": "text/event-stream", "last-event-id": f"{stream}-0"},
    )
    answer = {"jsonrpc": "2.0", "id": asked["id"], "result": NAME_ANSWER}
    assert b.client.post("/mcp", answer, headers=owner).status == 202
    response = resumed.result(WAIT)
    assert [m.get("method") for m in messages(response)] == ["elicitation/create", None]
    assert final_text(response) == "Hello, Ada!"


# --- configuration --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"prefix": 7}, "RedisSessionStore: prefix must be a str of at most 256"),
        (
            {"revalidate_seconds": -1},
            "RedisSessionStore: revalidate_seconds must be a number from 0 to 60",
        ),
        (
            {"timeout_seconds": True},
            "RedisSessionStore: timeout_seconds must be a number from 0.01 to 60",
        ),
        ({"limits": {}}, "RedisSessionStore: limits must be a Limits"),
    ],
)
def test_bad_settings_are_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        RedisSessionStore("redis://127.0.0.1:1/0", **options)
    assert str(caught.value) == message


def test_the_url_is_checked_and_its_password_never_shown() -> None:
    with pytest.raises(ConfigurationError) as caught:
        RedisSessionStore("http://example/0")
    assert str(caught.value).startswith("RedisSessionStore: url must be")
    store = RedisSessionStore("redis://user:secret@127.0.0.1:6379/0")
    assert "secret" not in repr(store) and "secret" not in repr(store.events)


def test_the_server_takes_the_stores_events_and_its_limits(redis_server: RedisServer) -> None:
    store = RedisSessionStore(redis_server.url)
    limits = Limits(max_sessions=1000)
    server = Server(Sessions, sessions=store, limits=limits)
    assert isinstance(server.engine.pipeline.events, RedisEventStore)
    assert store.limits is limits
    given = Limits(max_sessions=999)
    kept = RedisSessionStore(redis_server.url, limits=given)
    Server(Sessions, sessions=kept, limits=limits)
    assert kept.limits is given


def test_a_store_serves_one_loop_at_a_time(redis_server: RedisServer) -> None:
    store = RedisSessionStore(redis_server.url)
    first = TestClient(Server(Sessions, sessions=store))
    try:
        initialize(first)
        other = asyncio.new_event_loop()
        try:
            with pytest.raises(ConfigurationError):
                other.run_until_complete(store.get("x"))
        finally:
            other.close()
    finally:
        first.close()
    # once that loop has ended, the store serves the next one
    with TestClient(Server(Sessions, sessions=store)) as again:
        assert initialize(again)


# --- the store itself ------------------------------------------------------------------------


class Loop:
    """An event loop on a thread of its own, for driving one store from the test."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(WAIT)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(WAIT)
        self.loop.close()


@pytest.fixture
def loop() -> Iterator[Loop]:
    running = Loop()
    yield running
    running.stop()


Stores = Callable[..., RedisSessionStore]


@pytest.fixture
def stores(loop: Loop, redis_server: RedisServer) -> Iterator[Stores]:
    """Makes stores on the test's Redis, each with a prefix of its own; closed after."""
    made_here: list[RedisSessionStore] = []

    def make(**options: Any) -> RedisSessionStore:
        store = made(loop, redis_server.url, **options)
        made_here.append(store)
        return store

    yield make
    for store in made_here:
        loop.run(store.aclose())


@pytest.fixture
def raw(redis_server: RedisServer) -> Iterator[redis.Redis]:
    """A plain client of the test's Redis, to look at or change what the stores keep."""
    client = redis.Redis.from_url(redis_server.url)
    yield client
    client.close()


def made(loop: Loop, url: str, **options: Any) -> RedisSessionStore:
    options.setdefault("prefix", f"t{secrets.token_hex(4)}:")
    return RedisSessionStore(url, **options)


def test_a_session_is_created_with_or_without_client_metadata(
    loop: Loop, redis_server: RedisServer, stores: Stores
) -> None:
    store = stores()
    bare = loop.run(store.create("alice", "/mcp", NOVEMBER, None, None))
    assert bare.client_info is None and bare.link is store
    other = made(loop, redis_server.url, prefix=store.prefix)
    found = loop.run(other.get(bare.id))
    assert found is not None and found.client_info is None and found.owner == "alice"
    assert found.client_capabilities is None and found.log_level == "info"
    loop.run(other.aclose())
    assert loop.run(store.get("never issued")) is None


def test_the_most_sessions_hold_across_owners(loop: Loop, stores: Stores) -> None:
    limits = Limits(max_sessions=2, max_sessions_per_owner=2, max_anonymous_sessions=2)
    store = stores(limits=limits)
    loop.run(store.create("a", "/mcp", NOVEMBER, None, None))
    loop.run(store.create("b", "/mcp", NOVEMBER, None, None))
    with pytest.raises(TooManySessions):
        loop.run(store.create("c", "/mcp", NOVEMBER, None, None))


def test_a_session_gone_from_redis_is_let_go_at_its_next_read(
    loop: Loop, stores: Stores, raw: redis.Redis
) -> None:
    store = stores(revalidate_seconds=0.0)
    session = loop.run(store.create("a", "/mcp", NOVEMBER, None, None))
    stopped: list[int] = []
    session.begin(1, lambda: stopped.append(1), 4)
    for key in raw.keys(store.prefix + "s:*"):
        raw.delete(key)  # as Redis's expiry does, with no signal
    assert loop.run(store.get(session.id)) is None
    assert session.ended and stopped == [1] and store.held == 0
    # a record that is not one the store wrote is no session either
    again = loop.run(store.create("a", "/mcp", NOVEMBER, None, None))
    (key,) = raw.keys(store.prefix + "s:*")
    raw.hset(key, "r", "1999-01-01")
    assert loop.run(store.get(again.id)) is None


def test_a_record_with_broken_times_or_metadata_is_read_with_care(
    loop: Loop, stores: Stores, raw: redis.Redis
) -> None:
    store = stores(revalidate_seconds=0.0)
    info = JsonObject({"name": "c"})
    session = loop.run(store.create("a", "/mcp", NOVEMBER, info, JsonObject()))
    (key,) = raw.keys(store.prefix + "s:*")
    raw.hset(key, mapping={"ci": "[1]", "cc": "7", "s": '{"a": 1}'})
    found = loop.run(store.get(session.id))
    assert found is session and found.client_info == info  # what it held stays
    raw.hset(key, "t", "soon")
    assert loop.run(store.get(session.id)) is None  # a time that is not one: gone


def test_touch_pushes_the_expiry_back_at_most_every_tenth_of_the_idle_time(
    loop: Loop, stores: Stores, raw: redis.Redis
) -> None:
    clock = [1_000.0]
    limits = Limits(session_idle_timeout_seconds=60.0)
    store = stores(limits=limits, clock=lambda: clock[0])
    session = loop.run(store.create("a", "/mcp", NOVEMBER, None, None))
    (key,) = raw.keys(store.prefix + "s:*")
    clock[0] += 4
    loop.run(store.touch(session))
    assert raw.hget(key, "t") == b"1000.0"  # within 5 s (at most a tenth): not yet
    clock[0] += 1
    loop.run(store.touch(session))
    assert raw.hget(key, "t") == b"1005.0"
    raw.delete(key)
    clock[0] += 5
    loop.run(store.touch(session))  # gone meanwhile: let go
    assert session.ended and store.held == 0
    loop.run(store.touch(session))  # not held: nothing to do


def test_ending_a_session_this_node_does_not_hold(loop: Loop, redis_server: RedisServer) -> None:
    store = made(loop, redis_server.url)
    other = made(loop, redis_server.url)
    try:
        foreign = Session("x", "alice", "/mcp", NOVEMBER, 0.0)
        stopped: list[int] = []
        foreign.begin(1, lambda: stopped.append(1), 1)
        loop.run(store.end(foreign))
        assert foreign.ended and stopped == [1]
        session = loop.run(store.create("a", "/mcp", NOVEMBER, None, None))
        loop.run(other.end(session))  # ended by a node that never held it
        assert loop.run(other.get(session.id)) is None
    finally:
        loop.run(store.aclose())
        loop.run(other.aclose())


def test_a_closed_store_and_an_unreachable_redis_are_unavailable(
    loop: Loop, redis_server: RedisServer
) -> None:
    store = made(loop, redis_server.url, timeout_seconds=0.5)
    loop.run(store.detach())  # never started: nothing to stop
    loop.run(store.aclose())
    with pytest.raises(SessionStoreUnavailable):
        loop.run(store.get("x"))
    down = made(loop, "redis://127.0.0.1:1/0", timeout_seconds=0.5)
    with pytest.raises(SessionStoreUnavailable):
        loop.run(down.get("x"))  # the first use cannot start
    loop.run(down.aclose())


def test_a_store_that_takes_too_long_is_unavailable(
    loop: Loop, redis_server: RedisServer, stores: Stores
) -> None:
    store = stores(timeout_seconds=0.2)
    loop.run(store.create("a", "/mcp", NOVEMBER, None, None))
    assert redis_server.pid is not None
    os.kill(redis_server.pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        with pytest.raises(SessionStoreUnavailable):
            loop.run(store.get("x"))
        assert time.monotonic() - started < 3
    finally:
        os.kill(redis_server.pid, signal.SIGCONT)


def test_the_keeper_keeps_busy_sessions_and_lets_idle_ones_go(
    loop: Loop,
    redis_server: RedisServer,
    monkeypatch: pytest.MonkeyPatch,
    stores: Stores,
    raw: redis.Redis,
) -> None:
    monkeypatch.setattr(redis_sessions, "_KEEP_SECONDS", 0.02)
    clock = [1_000.0]
    limits = Limits(session_idle_timeout_seconds=60.0)
    store = stores(limits=limits, clock=lambda: clock[0])
    busy = loop.run(store.create("a", "/mcp", NOVEMBER, None, None))
    idle = loop.run(store.create("b", "/mcp", NOVEMBER, None, None))
    busy.begin(1, lambda: None, 4)
    clock[0] += redis_sessions._LET_GO_SECONDS
    eventually(lambda: store.held == 1)  # the idle one let go, the busy one kept
    assert not idle.ended
    store._let_go(redis_sessions._Held(idle, "x", 0.0, 0.0), ended=False)  # not held: no-op
    digest = hashlib.sha256(busy.id.encode()).hexdigest()
    assert raw.hget(f"{store.prefix}s:{digest}", "t") == repr(clock[0]).encode()
    # while Redis is away the keeper waits for its next beat
    redis_server.stop()
    clock[0] += 10
    time.sleep(0.2)
    redis_server.start()
    eventually(lambda: raw.hget(f"{store.prefix}s:{digest}", "t") is None or True)


def test_a_lost_channel_is_heard_again_and_every_held_session_read_again(
    loop: Loop, redis_server: RedisServer, stores: Stores
) -> None:
    store = stores(timeout_seconds=0.5)
    session = loop.run(store.create("a", "/mcp", NOVEMBER, None, None))
    redis_server.stop()
    time.sleep(0.3)
    redis_server.start()
    # the record died with Redis (no persistence here): a read finds it gone (the first
    # use of a connection made before the restart fails, as a request in flight would)
    eventually(lambda: store._held[session.id].read == -math.inf)
    eventually(lambda: gone(loop, store, session.id))


def gone(loop: Loop, store: RedisSessionStore, session_id: str) -> bool:
    try:
        return loop.run(store.get(session_id)) is None
    except SessionStoreUnavailable:
        return False


def test_signals_that_are_not_for_a_held_session_or_not_well_formed_are_ignored(
    loop: Loop, stores: Stores, raw: redis.Redis
) -> None:
    store = stores()
    session = loop.run(store.create("a", "/mcp", NOVEMBER, None, None))
    digest = hashlib.sha256(session.id.encode()).hexdigest()
    channel = f"{store.prefix}c:{digest}"
    raw.hset(f"{store.prefix}s:{digest}", "s", '["test://doc"]')
    for data in (
        b"cancel\nother\n{",
        b"cancel\nother\ntrue",
        b"answer\nother\n[1]",
        b"answer\nother\n{}",
    ):
        raw.publish(channel, data)
    raw.publish(f"{store.prefix}c:{'0' * 64}", b"end\n\n")
    raw.publish(channel, b"changed\nother\n")
    eventually(lambda: session.wanted == ("test://doc",))  # read again, joined nowhere
    assert not session.ended and store.held == 1


def test_a_signal_that_cannot_be_sent_is_logged_and_dropped(
    loop: Loop, redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    store = made(loop, redis_server.url, timeout_seconds=0.3)
    try:
        session = loop.run(store.create("a", "/mcp", NOVEMBER, None, None))
        redis_server.stop()

        async def cancel() -> None:
            session.cancel(5)  # not running here: told to the others, who cannot hear
            await asyncio.gather(*store._signals)

        loop.run(cancel())
        assert "session signal not sent" in caplog.text
        unheld = Session("y", None, "/mcp", NOVEMBER, 0.0)
        store.cancel(unheld, 1)  # a session it does not hold: nothing to tell
    finally:
        redis_server.start()
        loop.run(store.aclose())


def test_events_of_ids_never_issued_replay_nothing(loop: Loop, stores: Stores) -> None:
    store = stores()
    assert loop.run(store.events.replay("s", "nonsense")) is None
    assert loop.run(store.events.replay("s", "4-2")) is None
    store.events.forget("s")  # the session's end removes them: nothing to do here


def test_the_redis_client_is_required(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == "redis" else real(name)
    )
    with pytest.raises(ConfigurationError) as caught:
        RedisSessionStore("redis://127.0.0.1:1/0")
    assert str(caught.value) == (
        "RedisSessionStore needs the redis client: pip install 'mcpkit[redis]'"
    )


@pytest.mark.filterwarnings("ignore::ResourceWarning")  # the ended loop's sockets, at GC
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_store_left_by_an_ended_loop_starts_afresh_on_the_next(
    redis_server: RedisServer,
) -> None:
    store = RedisSessionStore(
        redis_server.url, prefix=f"t{secrets.token_hex(4)}:", revalidate_seconds=0.0
    )
    # a loop that ends without the server's detach (asyncio.run cancels what is left)
    session = asyncio.run(store.create("a", "/mcp", NOVEMBER, None, None))
    second = Loop()
    try:
        found = second.run(store.get(session.id))
        assert found is not None and found is not session and store.held == 1
    finally:
        second.run(store.aclose())
        second.stop()
        gc.collect()  # the ended loop's connections go now, under this test's filters


def test_only_answers_with_another_nodes_ids_are_passed_on(loop: Loop, stores: Stores) -> None:
    store = stores()
    session = loop.run(store.create("a", "/mcp", NOVEMBER, None, None))
    own = store.first_request_id
    for request_id in ("x", 7, own, own + 5):  # not another node's: nothing is sent
        store.answer(session, request_id, JsonObject({"id": request_id}))
    assert not store._signals
    elsewhere = own + (1 << 32)

    async def answer() -> None:
        store.answer(session, elsewhere, JsonObject({"id": elsewhere}))
        assert len(store._signals) == 1
        await asyncio.gather(*store._signals)

    loop.run(answer())


def test_signals_in_flight_hold_at_the_limit_and_one_past_it_is_dropped(
    loop: Loop,
    redis_server: RedisServer,
    stores: Stores,
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = stores(limits=Limits(max_session_signals=2), timeout_seconds=0.5)
    session = loop.run(store.create("a", "/mcp", NOVEMBER, None, None))
    assert redis_server.pid is not None
    os.kill(redis_server.pid, signal.SIGSTOP)  # every publish waits: the signals stay in flight
    try:

        async def cancels(count: int) -> int:
            for request_id in range(count):
                session.cancel(request_id)  # none runs here: each is passed on
            return len(store._signals)

        assert loop.run(cancels(2)) == 2 and "session signal dropped" not in caplog.text
        assert loop.run(cancels(1)) == 2 and "session signal dropped" in caplog.text
    finally:
        os.kill(redis_server.pid, signal.SIGCONT)
    loop.run(asyncio.wait_for(asyncio.gather(*store._signals), 5))
