"""``RedisBroadcaster`` against a real redis-server on loopback: two broadcasters on one URL
are two nodes.  Every change reaches every receiver on both nodes once, in its publisher's
order; what is not a change is ignored and counted; ``publish`` never waits and a full queue
drops; the subscription comes back after Redis does; ``close`` ends both threads; and a
listener on one server hears a resource change notified on another."""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis

import mcpkit
from mcpkit import ConfigurationError, Lease, Revision, Server, SubscriptionRequest
from mcpkit.server import Change, ChangeKind, RedisBroadcaster, _redis_broadcast
from mcpkit.server._redis_broadcast import PUBLISHER_THREAD, SUBSCRIBER_THREAD
from mcpkit.testing import TestClient, TestResponse, stateless_headers, stateless_request

from ..redis_server import RedisServer, free_port

WAIT = 10.0
CHANNEL = "mcpkit:test-changes"


# --- helpers -------------------------------------------------------------------------------


def until(condition: Callable[[], bool], seconds: float = WAIT) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


class Heard:
    """A receiver that keeps what it is told, thread-safely."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.changes: list[Change] = []

    def __call__(self, change: Change) -> None:
        with self._lock:
            self.changes.append(change)

    def __len__(self) -> int:
        return len(self.changes)


def our_threads() -> list[str]:
    names = {PUBLISHER_THREAD, SUBSCRIBER_THREAD}
    return [thread.name for thread in threading.enumerate() if thread.name in names]


@pytest.fixture
def nodes(redis_server: RedisServer) -> Iterator[Callable[..., RedisBroadcaster]]:
    """Makes broadcasters (nodes) on the shared Redis, closed at the end of the test."""
    made: list[RedisBroadcaster] = []

    def node(url: str | None = None, **options: Any) -> RedisBroadcaster:
        options.setdefault("channel", CHANNEL)
        broadcaster = RedisBroadcaster(url or redis_server.url, **options)
        made.append(broadcaster)
        return broadcaster

    yield node
    for broadcaster in made:
        broadcaster.close()
    assert our_threads() == []


def two_nodes(
    node: Callable[..., RedisBroadcaster], **options: Any
) -> tuple[RedisBroadcaster, Heard, RedisBroadcaster, Heard]:
    a, b = node(**options), node(**options)
    heard_a, heard_b = Heard(), Heard()
    a.attach(heard_a)
    b.attach(heard_b)
    until(lambda: a.connected and b.connected)
    return a, heard_a, b, heard_b


UPDATED = Change(ChangeKind.RESOURCE, uri="test://doc")


# --- every node, once, in order ------------------------------------------------------------


def test_a_change_reaches_every_receiver_on_every_node_once(
    nodes: Callable[..., RedisBroadcaster],
) -> None:
    a, heard_a, b, heard_b = two_nodes(nodes)
    also_a = Heard()
    a.attach(also_a)
    a.attach(also_a)  # twice: still one receiver
    a.publish(UPDATED)
    until(lambda: len(heard_a) == len(also_a) == len(heard_b) == 1)
    tools = Change(ChangeKind.TOOLS, path="/mcp")
    task = Change(ChangeKind.TASK, path="/mcp", task="t-1")
    b.publish(tools)
    b.publish(task)
    until(lambda: len(heard_a) == len(also_a) == len(heard_b) == 3)
    time.sleep(0.2)  # nothing else comes: not delivered locally as well
    assert heard_a.changes == also_a.changes == heard_b.changes == [UPDATED, tools, task]
    assert a.pending == b.pending == 0 and a.dropped == b.dropped == 0
    assert repr(a) == f"<RedisBroadcaster redis://127.0.0.1:{a_port(a)}/0 {CHANNEL!r} live>"


def a_port(broadcaster: RedisBroadcaster) -> str:
    return repr(broadcaster).split(":")[2].split("/")[0]


def test_changes_keep_their_publishers_order(nodes: Callable[..., RedisBroadcaster]) -> None:
    a, heard_a, b, heard_b = two_nodes(nodes)
    from_a = [Change(ChangeKind.RESOURCE, uri=f"test://a/{i}") for i in range(300)]
    from_b = [Change(ChangeKind.RESOURCE, uri=f"test://b/{i}") for i in range(300)]
    for change_a, change_b in zip(from_a, from_b, strict=True):
        a.publish(change_a)
        b.publish(change_b)
    until(lambda: len(heard_a) == len(heard_b) == 600)
    for heard in (heard_a, heard_b):
        assert sorted(heard.changes, key=str) == sorted(from_a + from_b, key=str)
        assert [c for c in heard.changes if c.uri and c.uri.startswith("test://a/")] == from_a
        assert [c for c in heard.changes if c.uri and c.uri.startswith("test://b/")] == from_b


def test_a_detached_receiver_hears_nothing_more(nodes: Callable[..., RedisBroadcaster]) -> None:
    a, heard_a, b, heard_b = two_nodes(nodes)
    b.detach(heard_b)
    b.detach(heard_b)  # not attached: nothing happens
    a.publish(UPDATED)
    until(lambda: len(heard_a) == 1)
    time.sleep(0.1)
    assert len(heard_b) == 0


def test_a_receiver_that_fails_is_logged_and_the_others_still_hear(
    nodes: Callable[..., RedisBroadcaster], caplog: pytest.LogCaptureFixture
) -> None:
    def fails(change: Change) -> None:
        raise RuntimeError("boom")

    a = nodes()
    heard = Heard()
    a.attach(fails)
    a.attach(heard)
    until(lambda: a.connected)
    with caplog.at_level(logging.ERROR, "mcpkit.server"):
        a.publish(UPDATED)
        until(lambda: len(heard) == 1)
    assert [r.getMessage() for r in caplog.records] == ["RedisBroadcaster: a receiver failed"]


# --- what is not a change ------------------------------------------------------------------

NOT_CHANGES = [
    b"not json",
    b"[]",
    b'"text"',
    b"{}",
    b'{"v": 1}',
    b'{"kind": "notifications/tools/list_changed"}',
    b'{"v": 2, "kind": "notifications/tools/list_changed"}',
    b'{"v": "1", "kind": "notifications/tools/list_changed"}',
    b'{"v": true, "kind": "notifications/tools/list_changed"}',
    b'{"v": 1.0, "kind": "notifications/tools/list_changed"}',
    b'{"v": 1, "kind": "notifications/nothing"}',
    b'{"v": 1, "kind": {"a": 1}}',
    b'{"v": 1, "kind": 7}',
    b'{"v": 1, "kind": "notifications/resources/updated", "uri": null}',
    b'{"v": 1, "kind": "notifications/resources/updated", "uri": 3}',
    b'{"v": 1, "kind": "notifications/tools/list_changed", "extra": "x"}',
    b'{"v": 1, "kind": "notifications/tools/list_changed", "path": ["/mcp"]}',
]


def test_what_is_not_exactly_a_change_is_ignored_and_counted(
    nodes: Callable[..., RedisBroadcaster], redis_server: RedisServer
) -> None:
    a, heard_a, b, heard_b = two_nodes(nodes)
    plain = redis.Redis.from_url(redis_server.url)
    try:
        for data in NOT_CHANGES:
            plain.publish(CHANNEL, data)
        good = b'{"kind": "notifications/tasks", "v": 1, "path": "/mcp", "task": "t"}'
        plain.publish(CHANNEL, good)
    finally:
        plain.close()
    until(lambda: len(heard_a) == len(heard_b) == 1)
    assert heard_a.changes == heard_b.changes == [Change(ChangeKind.TASK, "/mcp", task="t")]
    assert a.ignored == b.ignored == len(NOT_CHANGES)


def test_the_wire_form_round_trips_every_kind() -> None:
    for kind in ChangeKind:
        change = Change(kind, path="/p", uri="u://x", task="t")
        assert _redis_broadcast.decode_change(_redis_broadcast.encode_change(change)) == change
    bare = _redis_broadcast.encode_change(Change(ChangeKind.PROMPTS))
    assert bare == b'{"v":1,"kind":"notifications/prompts/list_changed"}'


# --- Redis away ----------------------------------------------------------------------------


def test_publish_never_waits_and_a_full_queue_drops(
    nodes: Callable[..., RedisBroadcaster], caplog: pytest.LogCaptureFixture
) -> None:
    nowhere = f"redis://:hunter2@127.0.0.1:{free_port()}/0?password=hunter2"
    a = nodes(nowhere, max_pending=3)
    a.attach(Heard())
    with caplog.at_level(logging.INFO, "mcpkit.server"):
        started = time.perf_counter()
        a.publish(UPDATED)
        took = time.perf_counter() - started
        assert took < 0.010
        for _ in range(9):
            a.publish(UPDATED)
        assert a.pending == 3 and a.dropped == 7
        time.sleep(0.4)  # the threads fail more than once; logged once each
        assert not a.connected
        assert "hunter2" not in repr(a) and "not connected" in repr(a)
        a.close()
    assert a.dropped == 10 and a.pending == 0  # closed while Redis is away: the rest dropped
    messages = [r.getMessage() for r in caplog.records]
    where = nowhere.split("@")[1].split("?")[0]
    assert sorted(messages) == [
        f"RedisBroadcaster: 3 changes queued for Redis at redis://{where}; dropping changes",
        f"RedisBroadcaster: no subscription at Redis at redis://{where} (ConnectionError); "
        "retrying",
    ]
    assert "hunter2" not in caplog.text


def test_the_subscription_comes_back_with_redis(
    redis_server: RedisServer,
    nodes: Callable[..., RedisBroadcaster],
    caplog: pytest.LogCaptureFixture,
) -> None:
    a, heard_a, b, heard_b = two_nodes(nodes)
    with caplog.at_level(logging.INFO, "mcpkit.server"):
        redis_server.stop()
        until(lambda: not a.connected and not b.connected)
        during = Change(ChangeKind.RESOURCE, uri="test://during")
        a.publish(during)  # queued while Redis is away: held until the subscription is back
        time.sleep(0.2)
        assert a.pending == 1
        redis_server.start()
        until(lambda: a.connected and b.connected)
        until(lambda: a.pending == 0)
        after = Change(ChangeKind.RESOURCE, uri="test://after")
        a.publish(after)
        until(lambda: after in heard_a.changes and after in heard_b.changes)
    messages = [r.getMessage() for r in caplog.records]
    assert f"RedisBroadcaster: subscribed to Redis at {redis_server.url} again" in messages
    assert during in heard_a.changes  # this node's own subscription was live when it was sent


def test_a_hung_redis_ends_the_subscription_once_a_health_check_goes_unanswered(
    redis_server: RedisServer,
    nodes: Callable[..., RedisBroadcaster],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Redis hung (or the connection dead without a word): the subscription is given up once
    a health check goes unanswered for the socket timeout, and made again once Redis answers;
    it used to wait, ``connected``, for as long as the kernel kept the connection."""
    monkeypatch.setattr(_redis_broadcast, "_HEALTH_CHECK", 0.2)
    monkeypatch.setattr(_redis_broadcast, "_SOCKET_TIMEOUT", 0.3)
    a = nodes()
    heard = Heard()
    a.attach(heard)
    until(lambda: a.connected)
    pid = redis_server.pid
    assert pid is not None
    with caplog.at_level(logging.INFO, "mcpkit.server"):
        os.kill(pid, signal.SIGSTOP)  # accepts connections, answers nothing
        try:
            began = time.monotonic()
            until(lambda: not a.connected, seconds=5.0)
            assert time.monotonic() - began < 0.2 + 0.3 + 1.0
            time.sleep(0.5)  # subscribing again meets the same silence
            assert not a.connected
        finally:
            os.kill(pid, signal.SIGCONT)
        until(lambda: a.connected)
        a.publish(UPDATED)
        until(lambda: len(heard) == 1)
    assert caplog.messages == [
        f"RedisBroadcaster: no subscription at Redis at {redis_server.url} (TimeoutError); "
        "retrying",
        f"RedisBroadcaster: subscribed to Redis at {redis_server.url} again",
    ]


def test_a_publish_redis_refuses_is_retried_with_backoff(
    redis_server: RedisServer,
    nodes: Callable[..., RedisBroadcaster],
    caplog: pytest.LogCaptureFixture,
) -> None:
    admin = redis.Redis.from_url(redis_server.url)
    try:
        admin.acl_setuser("node", enabled=True, passwords=["+hunter2"], keys="*",
                          channels="*", commands=["+@all", "-publish"])  # fmt: skip
        url = redis_server.url.replace("//", "//node:hunter2@")
        a = nodes(url)
        heard = Heard()
        a.attach(heard)
        until(lambda: a.connected)
        with caplog.at_level(logging.INFO, "mcpkit.server"):
            a.publish(UPDATED)
            time.sleep(0.4)  # refused more than once; logged once
            assert a.pending == 1 and len(heard) == 0
            admin.acl_setuser("node", commands=["+publish"])
            until(lambda: len(heard) == 1)
    finally:
        admin.close()
    where = redis_server.url
    assert [r.getMessage() for r in caplog.records] == [
        f"RedisBroadcaster: publishing to Redis at {where} failed (NoPermissionError); retrying",
        f"RedisBroadcaster: publishing to Redis at {where} again",
    ]
    assert "hunter2" not in caplog.text and "hunter2" not in repr(a)


# --- the lifecycle -------------------------------------------------------------------------


def test_the_threads_start_on_the_first_attach_and_close_ends_them(
    nodes: Callable[..., RedisBroadcaster],
) -> None:
    before = len(our_threads())
    a = nodes()
    a.publish(UPDATED)  # before any attach: queued
    assert len(our_threads()) == before and a.pending == 1
    heard = Heard()
    a.attach(heard)
    assert len(our_threads()) == before + 2
    until(lambda: len(heard) == 1)  # the queued change was sent once the threads started
    a.publish(UPDATED)
    a.close()  # sends what is queued, then stops
    assert our_threads() == [] and not a.connected
    a.close()  # again: nothing happens
    a.publish(UPDATED)
    assert a.dropped == 1
    with pytest.raises(ConfigurationError, match="closed"):
        a.attach(heard)


def test_a_receiver_may_close_its_broadcaster(nodes: Callable[..., RedisBroadcaster]) -> None:
    a = nodes()
    closing = threading.Event()

    def closes(change: Change) -> None:
        a.close()
        closing.set()

    a.attach(closes)
    until(lambda: a.connected)
    a.publish(UPDATED)
    assert closing.wait(WAIT)
    until(lambda: our_threads() == [])


def test_close_without_attach_drops_what_was_queued(redis_server: RedisServer) -> None:
    with RedisBroadcaster(redis_server.url) as a:
        a.publish(UPDATED)
    assert a.dropped == 1 and a.pending == 0 and our_threads() == []


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:6379", "redis://127.0.0.1:port/0", "", "redis://h/?db=x"]
)
def test_a_bad_url_is_a_configuration_error_that_does_not_repeat_it(url: str) -> None:
    with pytest.raises(ConfigurationError, match="redis://, rediss:// or unix://") as caught:
        RedisBroadcaster(url)
    assert url == "" or url not in str(caught.value)


def test_bad_options_are_refused() -> None:
    with pytest.raises(TypeError, match="url must be a str"):
        RedisBroadcaster(b"redis://127.0.0.1")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="channel"):
        RedisBroadcaster("redis://127.0.0.1", channel="")
    for bad in (0, True, 1.5):
        with pytest.raises(ConfigurationError, match="max_pending"):
            RedisBroadcaster("redis://127.0.0.1", max_pending=bad)  # type: ignore[arg-type]


def test_without_the_extra_it_says_which_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    find_spec = importlib.util.find_spec

    def no_redis(name: str, package: str | None = None) -> Any:
        return None if name == "redis" else find_spec(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", no_redis)
    with pytest.raises(ConfigurationError, match=r"pip install 'mcpkit\[redis\]'"):
        RedisBroadcaster("redis://127.0.0.1")


def test_the_facade_exports_it() -> None:
    assert mcpkit.RedisBroadcaster is RedisBroadcaster


# --- two servers, two nodes ----------------------------------------------------------------

MODERN = Revision.V2026_07_28


@mcpkit.endpoint(path="/mcp", name="node", version="1.0.0", revisions={MODERN}, listen=True)
class Node:
    @mcpkit.resource(uri="test://doc", name="doc")
    def doc(self) -> mcpkit.ResourceOutput:
        contents = mcpkit.TextResourceContents(uri="test://doc", text="doc")
        return mcpkit.ResourceOutput(contents=(contents,))


def grant(request: SubscriptionRequest) -> Lease:
    return Lease(60.0)


def test_a_listener_on_one_server_hears_a_change_notified_on_another(
    nodes: Callable[..., RedisBroadcaster],
) -> None:
    node_a, node_b = nodes(), nodes()
    server_a = Server([Node], subscription_authorizer=grant, broadcaster=node_a)
    server_b = Server([Node], subscription_authorizer=grant, broadcaster=node_b)
    reached_b = Heard()  # attached after the server's audience: told after it queued
    node_b.attach(reached_b)
    until(lambda: node_a.connected and node_b.connected)
    audience_b = server_b.engine.deployment.audience
    with TestClient(server_b) as client:
        params = {"notifications": {"resourceSubscriptions": ["test://doc"]}}
        body = stateless_request("subscriptions/listen", params, id="L")
        stream = client.submit("/mcp", body, headers=stateless_headers("subscriptions/listen"))
        until(lambda: audience_b.listens == 1)
        server_a.notify_resource_updated("test://doc")
        until(lambda: len(reached_b) == 1)

        def queued() -> int:
            return sum(x.queued for group in audience_b._listeners.values() for x in group)

        until(lambda: queued() == 0)
        loop = client._running_loop()
        asyncio.run_coroutine_threadsafe(server_b.engine.drain(0.5), loop).result(WAIT)
        received: TestResponse = stream.result(WAIT)
    messages: list[Any] = list(received.messages)
    methods = [message.get("method") for message in messages]
    assert methods == [
        "notifications/subscriptions/acknowledged",
        "notifications/resources/updated",
        None,  # the listen's complete result
    ]
    assert messages[1]["params"]["uri"] == "test://doc"
