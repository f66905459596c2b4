"""``RedisTaskStore`` against a real ``redis-server`` (``tests/redis_server``), for what is its
own (the task-store contract it shares with the other stores is ``test_task_store``): several
nodes on one Redis, quotas and ends under concurrent changes, the keys it writes and their
TTLs, node leases and the recovery of a dead node's tasks, Redis down, hung or restarted, its
settings, and whole servers on several nodes."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import os
import re
import signal
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
import redis

import mcpkit
from mcpkit import (
    CompleteResult,
    Limits,
    RedisTaskStore,
    RequestContext,
    Revision,
    TaskSupport,
    endpoint,
    tool,
)
from mcpkit.errors import ConfigurationError, TaskQuota, TaskStoreUnavailable
from mcpkit.server import _redis_task_store
from mcpkit.server._task_store import TaskRecord, TaskStatus, new_task_id
from mcpkit.testing import TestClient

from ..redis_server import RedisServer
from .tasks_support import Gates, get, reach, result, start, status_of, until

LIMITS = Limits()
OWNER = "alice:secret-bearer-credential"
TASK_KEY = re.compile(r"mcpkit:tasks:(t|o):[0-9a-f]{64}")
INTERRUPTED = {
    "code": -31903,
    "message": "The task was interrupted by a server restart; call the tool again",
}


def task(owner: str | None = OWNER, *, ttl: float = 60.0, **fields: Any) -> TaskRecord:
    now = time.time()
    fields.setdefault("task_id", new_task_id())
    return TaskRecord(
        owner=owner,
        endpoint="/mcp",
        tool="slow",
        status=TaskStatus.WORKING,
        created_at=now,
        updated_at=now,
        ttl_seconds=ttl,
        **fields,
    )


def keys(server: RedisServer) -> list[str]:
    """Every key the Redis holds, sorted."""
    client = redis.Redis.from_url(server.url, decode_responses=True)
    try:
        return sorted(str(name) for name in client.keys("*"))
    finally:
        client.close()


def raw(server: RedisServer) -> redis.Redis:
    return redis.Redis.from_url(server.url)


@pytest.fixture
def nodes(redis_server: RedisServer) -> Iterator[list[RedisTaskStore]]:
    """Two nodes' stores on one Redis."""
    opened = [RedisTaskStore(redis_server.url, node=name) for name in ("a", "b")]
    yield opened
    for store in opened:
        asyncio.run(store.close())


# --- several nodes on one Redis --------------------------------------------------------------


def test_two_nodes_see_and_change_the_same_tasks(nodes: list[RedisTaskStore]) -> None:
    first, second = nodes

    async def scenario() -> None:
        record = task(arguments=b'{"n":1}')
        await first.create(record, LIMITS)
        assert await second.get(record.key) == record
        asked = await second.ask(record.key, b'{"r":{}}')
        assert asked is not None and asked.status is TaskStatus.INPUT_REQUIRED
        assert await first.get(record.key) == asked
        await first.answer(record.key, {"r": b"true"})
        assert await second.take_responses(record.key) == b'{"r":true}'
        assert await first.take_responses(record.key) is None
        ended = await second.finish(record.key, TaskStatus.FAILED, error=b'{"code":1}')
        assert ended is not None
        # the other node's end comes too late: the task keeps the first end
        assert await first.finish(record.key, TaskStatus.COMPLETED, result=b"{}") == ended
        assert await first.cancel(record.key) == ended
        assert await first.get(record.key) == ended
        with pytest.raises(ValueError, match="stored already"):
            await second.create(task("bob", task_id=record.task_id), LIMITS)
        assert await second.get(record.key._replace(owner="bob")) is None

    asyncio.run(scenario())


def race(url: str, prefix: str, limits: Limits, plans: list[list[str]]) -> dict[str, int]:
    """Each plan (the owners of the tasks it creates, all at once) on a node of its own, each
    node on a thread of its own; how many of each owner's were created."""
    outcomes: list[list[tuple[str, bool]]] = [[] for _ in plans]

    async def node(plan: list[str], into: list[tuple[str, bool]]) -> None:
        store = RedisTaskStore(url, prefix=prefix)

        async def one(owner: str) -> None:
            try:
                await store.create(task(owner), limits)
            except TaskQuota:
                into.append((owner, False))
            else:
                into.append((owner, True))

        await asyncio.gather(*(one(owner) for owner in plan))
        await store.close()

    threads = [
        threading.Thread(target=asyncio.run, args=(node(plan, into),))
        for plan, into in zip(plans, outcomes, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    created: dict[str, int] = {}
    for owner, done in (outcome for into in outcomes for outcome in into):
        created[owner] = created.get(owner, 0) + done
    assert sum(len(into) for into in outcomes) == sum(len(plan) for plan in plans)
    return created


def test_concurrent_creates_on_several_nodes_stop_exactly_at_the_quotas(
    redis_server: RedisServer,
) -> None:
    # one owner's 36 tasks on three nodes at once: exactly its quota of 10 is created
    owner_quota = Limits().replace(max_tasks=1_000, max_tasks_per_owner=10)
    assert race(redis_server.url, "own:", owner_quota, [["alice"] * 12] * 3) == {"alice": 10}
    # three owners' 36 on three nodes, each within its own quota: exactly the store's 25
    store_quota = Limits().replace(max_tasks=25, max_tasks_per_owner=12)
    created = race(redis_server.url, "all:", store_quota, [["bob", "carol", "dave"] * 4] * 3)
    assert sum(created.values()) == 25
    client = raw(redis_server)
    assert (client.zcard("own:all"), client.zcard("all:all")) == (10, 25)
    client.close()


def test_concurrent_ends_on_two_nodes_leave_one_end(nodes: list[RedisTaskStore]) -> None:
    first, second = nodes
    statuses = [TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED]

    async def scenario() -> None:
        record = task()
        await first.create(record, LIMITS)
        ends = await asyncio.gather(
            *(
                (first if i % 2 else second).finish(record.key, statuses[i % 3], result=b"{}")
                for i in range(30)
            ),
            *(store.cancel(record.key) for store in nodes for _ in range(5)),
        )
        stored = await first.get(record.key)
        assert stored is not None and stored.status.terminal
        assert [end for end in ends[:30] if end != stored] == []  # every node sees the one end

    asyncio.run(scenario())


def test_a_change_read_again_when_another_node_changed_the_task_in_between(
    nodes: list[RedisTaskStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = nodes
    record = task()
    asyncio.run(first.create(record, LIMITS))
    write = RedisTaskStore._write
    interleaved: list[str] = []

    async def interleaving(self: RedisTaskStore, *args: Any) -> int:
        if self is first and not interleaved:  # another node writes between read and write
            interleaved.append("x")
            await second.working(record.key, "the other node's")
        return await write(self, *args)

    monkeypatch.setattr(RedisTaskStore, "_write", interleaving)
    asked = asyncio.run(first.ask(record.key, b'{"a":{}}'))
    assert asked is not None
    # applied to what the other node wrote: its message is kept, and this change is on top
    assert (asked.status, asked.status_message) == (TaskStatus.INPUT_REQUIRED, "the other node's")
    assert asyncio.run(second.get(record.key)) == asked


def test_a_task_changed_by_others_every_time_is_reported_unavailable(
    nodes: list[RedisTaskStore], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    first, second = nodes
    record = task()
    asyncio.run(first.create(record, LIMITS))
    write = RedisTaskStore._write

    async def always(self: RedisTaskStore, *args: Any) -> int:
        if self is first:
            await second.cancel(record.key)
            await second.working(record.key)
        return await write(self, *args)

    monkeypatch.setattr(RedisTaskStore, "_write", always)
    monkeypatch.setattr(_redis_task_store, "_ATTEMPTS", 3)
    with (
        caplog.at_level(logging.ERROR, logger="mcpkit.server"),
        pytest.raises(TaskStoreUnavailable),
    ):
        asyncio.run(first.ask(record.key, b'{"a":{}}'))
    assert caplog.messages == ["mcpkit: task store failed with contention on one task"]


def test_a_task_whose_hash_ends_between_read_and_write_is_not_found(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = RedisTaskStore(redis_server.url)
    record = task()
    asyncio.run(store.create(record, LIMITS))
    write = RedisTaskStore._write
    client = raw(redis_server)

    async def vanishing(self: RedisTaskStore, *args: Any) -> int:
        for name in client.keys("mcpkit:tasks:t:*"):
            client.delete(name)  # as Redis does when the hash's TTL ends
        return await write(self, *args)

    monkeypatch.setattr(RedisTaskStore, "_write", vanishing)
    assert asyncio.run(store.cancel(record.key)) is None
    client.close()
    asyncio.run(store.close())


# --- the keys and their TTLs -----------------------------------------------------------------


def test_keys_carry_no_owner_or_task_id_and_expire_with_the_task(
    redis_server: RedisServer,
) -> None:
    store = RedisTaskStore(redis_server.url, node="node-1")
    records = [task(ttl=30.0), task(None, ttl=30.0, managed=False)]
    for record in records:
        asyncio.run(store.create(record, LIMITS))
    held = keys(redis_server)
    named = [name for name in held if TASK_KEY.fullmatch(name)]
    assert len(named) == 4  # two hashes, two owners' sets
    assert sorted(set(held) - set(named)) == [
        "mcpkit:tasks:all",
        "mcpkit:tasks:ids",
        "mcpkit:tasks:n:node-1",  # the lease of the node running the managed task
        "mcpkit:tasks:run",
    ]
    for name in held:
        assert "alice" not in name and "secret" not in name
        assert all(record.task_id not in name for record in records)
    client = raw(redis_server)
    hashes = [name for name in named if ":t:" in name]
    for name in hashes:
        assert 29_000 < client.pttl(name) <= 30_000  # Redis ends it with the record's TTL
    assert 0 < client.pttl("mcpkit:tasks:n:node-1") <= 15_000
    client.close()
    gone = asyncio.run(store.expire(time.time() + 30.0))
    assert sorted(gone) == sorted(record.key for record in records)
    assert keys(redis_server) == ["mcpkit:tasks:n:node-1"]
    asyncio.run(store.close())
    assert keys(redis_server) == []  # a node that stops ends its lease


def test_redis_removes_an_ended_ttl_and_a_sweep_still_names_the_task(
    redis_server: RedisServer,
) -> None:
    store = RedisTaskStore(redis_server.url)
    record = task(ttl=0.2)
    asyncio.run(store.create(record, LIMITS))
    time.sleep(0.3)
    assert not [name for name in keys(redis_server) if ":t:" in name]  # Redis's TTL ended it
    assert asyncio.run(store.get(record.key)) is None
    assert asyncio.run(store.cancel(record.key)) is None
    assert asyncio.run(store.expire(time.time())) == [record.key]
    assert keys(redis_server) == [f"mcpkit:tasks:n:{store.node}"]
    asyncio.run(store.close())


def test_expire_removes_any_number_in_batches(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_redis_task_store, "_SWEEP_BATCH", 2)
    store = RedisTaskStore(redis_server.url)
    records = [task(managed=False) for _ in range(5)]
    for record in records:
        asyncio.run(store.create(record, LIMITS))
    # a create sweeps one batch, and counts only what has not expired
    later = RedisTaskStore(redis_server.url, clock=lambda: time.time() + 60.0)
    asyncio.run(
        later.create(
            task(managed=False, ttl=120.0), LIMITS.replace(max_tasks=2, max_tasks_per_owner=2)
        )
    )
    assert len(raw(redis_server).hkeys("mcpkit:tasks:ids")) == 4  # 5 - 2 swept + 1 created
    gone = asyncio.run(later.expire(time.time() + 60.0))
    assert sorted(gone) == sorted(record.key for record in records[2:])
    asyncio.run(store.close())
    asyncio.run(later.close())


def test_an_expired_id_not_yet_swept_may_be_created_again(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_redis_task_store, "_SWEEP_BATCH", 0)  # no sweep at create
    store = RedisTaskStore(redis_server.url)
    old = task(ttl=0.05)
    asyncio.run(store.create(old, LIMITS))
    time.sleep(0.1)
    again = task("bob", task_id=old.task_id)
    asyncio.run(store.create(again, LIMITS))
    assert asyncio.run(store.get(again.key)) == again
    assert asyncio.run(store.interrupted()) == [again]
    asyncio.run(store.close())


def test_prefixes_keep_stores_apart(redis_server: RedisServer) -> None:
    one = RedisTaskStore(redis_server.url, prefix="one:")
    two = RedisTaskStore(redis_server.url, prefix="two:")
    record = task()
    asyncio.run(one.create(record, LIMITS))
    assert asyncio.run(two.get(record.key)) is None
    asyncio.run(two.create(record, LIMITS))  # the same id, in another store
    assert {name.partition(":")[0] for name in keys(redis_server)} == {"one", "two"}
    asyncio.run(one.close())
    asyncio.run(two.aclose())


# --- nodes, leases and recovery ---------------------------------------------------------------


def test_a_dead_node_s_tasks_are_recovered_by_one_other_node_once_its_lease_lapses(
    redis_server: RedisServer,
) -> None:
    dead = RedisTaskStore(redis_server.url, node="dead", lease_seconds=1.0)
    running, unmanaged = task(rerun=True), task(managed=False)
    waiting, ended = task(None), task()
    for record in (running, unmanaged, waiting, ended):
        asyncio.run(dead.create(record, LIMITS))
    asyncio.run(dead.ask(waiting.key, b'{"a":{}}'))
    asyncio.run(dead.finish(ended.key, TaskStatus.COMPLETED, result=b"{}"))
    # "dead" is never closed: its process died, and its lease runs out by itself
    other = RedisTaskStore(redis_server.url, node="other")
    third = RedisTaskStore(redis_server.url, node="third")
    assert asyncio.run(other.interrupted()) == []  # its lease holds: it still runs them
    time.sleep(1.1)

    async def both() -> list[list[TaskRecord]]:
        return list(await asyncio.gather(other.interrupted(), third.interrupted()))

    claimed = asyncio.run(both())
    assert sorted(len(found) for found in claimed) == [0, 2]  # one node takes them, once
    found = max(claimed, key=len)
    assert sorted(record.task_id for record in found) == sorted([running.task_id, waiting.task_id])
    taker, bystander = (other, third) if found is claimed[0] else (third, other)
    assert asyncio.run(bystander.interrupted()) == []  # the taker holds its lease
    # the taker's own tasks are named again to it, as a SQLite store names all to its process
    assert sorted(record.task_id for record in asyncio.run(taker.interrupted())) == sorted(
        record.task_id for record in found
    )
    assert raw(redis_server).hgetall("mcpkit:tasks:run") == {
        key: taker.node.encode() for key in raw(redis_server).hkeys("mcpkit:tasks:run")
    }
    for store in (dead, other, third):
        asyncio.run(store.close())


def test_a_node_named_again_recovers_its_tasks_at_once(redis_server: RedisServer) -> None:
    before = RedisTaskStore(redis_server.url, node="web-1")
    record = task()
    asyncio.run(before.create(record, LIMITS))
    # the process was killed (no close); it starts again, under the same name
    after = RedisTaskStore(redis_server.url, node="web-1")
    assert [found.task_id for found in asyncio.run(after.interrupted())] == [record.task_id]
    assert asyncio.run(RedisTaskStore(redis_server.url).interrupted()) == []
    asyncio.run(after.close())


def test_a_live_node_keeps_its_lease_and_a_closed_one_ends_it(
    redis_server: RedisServer,
) -> None:
    node = RedisTaskStore(redis_server.url, node="live", lease_seconds=1.0)
    other = RedisTaskStore(redis_server.url, node="other")
    record = task()

    async def scenario() -> None:
        await node.get(record.key)  # its loop's client, and the task keeping the lease
        await asyncio.sleep(0.4)  # a beat with no lease to keep yet
        await node.create(record, LIMITS)
        await asyncio.sleep(1.5)  # longer than the lease: renewed meanwhile
        assert await other.interrupted() == []
        await node.close()
        assert [found.task_id for found in await other.interrupted()] == [record.task_id]
        await node.close()  # once is enough

    asyncio.run(scenario())
    asyncio.run(other.close())


def test_after_an_outage_lapsed_leases_wait_a_lease_before_their_tasks_are_taken(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis away longer than a lease: every lease has lapsed when it is back, the live
    nodes' too.  A node takes over the tasks of a lapsed lease only once Redis has answered
    it for a lease on end (by when every live node renewed its own), never at once."""
    admin = raw(redis_server)
    admin.acl_setuser("taker", enabled=True, passwords=["+pw"], keys="*", channels="*",
                      commands=["+@all"])  # fmt: skip
    live = RedisTaskStore(redis_server.url, node="live", lease_seconds=1.0)
    dead = RedisTaskStore(redis_server.url, node="dead", lease_seconds=1.0)
    taker = RedisTaskStore(
        redis_server.url.replace("//", "//taker:pw@"), node="taker", lease_seconds=1.0
    )
    kept, lost = task(), task()

    async def scenario() -> list[TaskRecord]:
        await live.create(kept, LIMITS)  # its lease is renewed on this loop, every beat
        await dead.create(lost, LIMITS)
        await dead.close()  # its lease ends: it is gone
        assert await taker.expire(time.time()) == []
        admin.acl_setuser("taker", commands=["-@all"])  # Redis is away, for the taker...
        with pytest.raises(TaskStoreUnavailable):
            await taker.expire(time.time())
        await asyncio.sleep(0.4)  # (its keeper's PING fails too, silently)
        assert taker._reached is None and await taker.orphaned() == []
        admin.delete("mcpkit:tasks:n:live")  # ...and longer than a lease, for every node
        admin.acl_setuser("taker", commands=["+@all"])
        assert await taker.expire(time.time()) == []
        assert await taker.orphaned() == []  # back, but not yet for a lease
        await asyncio.sleep(1.1)  # meanwhile the live node renewed its lease
        assert await taker.expire(time.time()) == []
        return await taker.orphaned()

    with caplog.at_level(logging.WARNING, logger="mcpkit.server"):
        claimed = asyncio.run(scenario())
    assert [record.task_id for record in claimed] == [lost.task_id]
    assert admin.hget("mcpkit:tasks:run", live._names(kept.key).id) == b"live"
    assert caplog.messages == ["mcpkit: task store failed with NoPermissionError"]
    for store in (live, taker):
        asyncio.run(store.close())
    admin.close()


def test_a_store_closed_on_one_loop_ends_its_client_on_another(
    redis_server: RedisServer,
) -> None:
    store = RedisTaskStore(redis_server.url, lease_seconds=1.0)
    used = threading.Event()
    ended: list[bool] = []

    async def elsewhere() -> None:
        await store.create(task(), LIMITS)
        used.set()
        keeper = next(iter(store._links.values())).keeper
        await asyncio.wait_for(keeper, 2.0)  # it ends once the store is closed
        ended.append(True)

    thread = threading.Thread(target=lambda: asyncio.run(elsewhere()))
    thread.start()
    used.wait(5.0)
    asyncio.run(store.close())
    thread.join()
    assert ended == [True] and len(store._links) == 0


# --- Redis down, hung, restarted --------------------------------------------------------------


def test_redis_stopped_is_unavailable_at_once_and_restarted_works(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    redis_server.stop()
    store = RedisTaskStore(redis_server.url, timeout_seconds=1.0)
    record = task()
    calls: list[Callable[[], Awaitable[object]]] = [
        lambda: store.create(record, LIMITS),
        lambda: store.get(record.key),
        lambda: store.finish(record.key, TaskStatus.COMPLETED, result=b"{}"),
        lambda: store.expire(time.time()),
        store.interrupted,
    ]
    with caplog.at_level(logging.WARNING, logger="mcpkit.server"):
        for call in calls:
            began = time.monotonic()
            with pytest.raises(TaskStoreUnavailable) as raised:
                asyncio.run(call())  # type: ignore[arg-type]
            assert time.monotonic() - began < 0.5
            assert str(raised.value) == "Task store unavailable; retry later"
    assert set(caplog.messages) == {"mcpkit: task store failed with ConnectionError"}
    redis_server.start()
    asyncio.run(store.create(record, LIMITS))
    assert asyncio.run(store.get(record.key)) == record
    asyncio.run(store.close())


def test_the_pool_s_connections_work_again_once_redis_has_restarted(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Connections Redis closed while it was away are replaced, not failed: under RESP3 a
    recent client handed each one out unchecked, and every call that drew one failed (503)."""
    store = RedisTaskStore(redis_server.url, timeout_seconds=1.0)
    record = task()

    async def scenario() -> list[TaskRecord | None]:
        await store.create(record, LIMITS)
        await asyncio.gather(*(store.get(record.key) for _ in range(5)))  # five connections
        await asyncio.to_thread(redis_server.stop)  # the loop runs on: it sees them closed
        await asyncio.sleep(0.1)
        await asyncio.to_thread(redis_server.start)  # empty again: no persistence
        await store.create(record, LIMITS)
        found = await asyncio.gather(*(store.get(record.key) for _ in range(5)))
        await store.close()
        return found

    with caplog.at_level(logging.WARNING, logger="mcpkit.server"):
        assert asyncio.run(scenario()) == [record] * 5
    assert caplog.messages == []


def test_a_hung_redis_is_given_up_on_within_the_timeout(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    store = RedisTaskStore(redis_server.url, timeout_seconds=0.3)
    record = task()
    asyncio.run(store.create(record, LIMITS))
    pid = redis_server.pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)
    try:
        began = time.monotonic()
        with (
            caplog.at_level(logging.ERROR, logger="mcpkit.server"),
            pytest.raises(TaskStoreUnavailable),
        ):
            asyncio.run(store.get(record.key))
        assert time.monotonic() - began < 1.0
    finally:
        os.kill(pid, signal.SIGCONT)
    assert caplog.messages == ["mcpkit: task store failed with TimeoutError"]
    assert asyncio.run(store.get(record.key)) == record
    asyncio.run(store.close())


def test_a_lease_that_cannot_be_kept_or_ended_is_logged(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    store = RedisTaskStore(
        redis_server.url.replace("redis://", "redis://user:pw-secret@"),
        lease_seconds=1.0,
        timeout_seconds=0.5,
    )

    async def scenario() -> None:
        with contextlib.suppress(TaskStoreUnavailable):  # this Redis has no such user
            await store.create(task(), LIMITS)
        store._leased = True  # as if the create had held it
        await asyncio.sleep(0.4)  # a beat fails
        await store.close()  # and so does ending it

    with caplog.at_level(logging.WARNING, logger="mcpkit.server"):
        asyncio.run(scenario())
    assert "mcpkit: task store lease not renewed (AuthenticationError)" in caplog.messages
    assert caplog.messages[-1] == "mcpkit: task store lease not ended (AuthenticationError)"
    assert all("pw-secret" not in message for message in caplog.messages)


# --- settings ---------------------------------------------------------------------------------


def test_repr_masks_the_password() -> None:
    shown = repr(RedisTaskStore("redis://user:pw-secret@h:6380/2?password=pw2&db=1", prefix="p:"))
    assert shown == (
        "RedisTaskStore('redis://user:***@h:6380/2?password=%2A%2A%2A&db=1', prefix='p:')"
    )
    assert repr(RedisTaskStore("unix:///run/redis.sock")) == (
        "RedisTaskStore('unix:///run/redis.sock', prefix='mcpkit:tasks:')"
    )
    assert repr(RedisTaskStore("rediss://cache")) == (
        "RedisTaskStore('rediss://cache', prefix='mcpkit:tasks:')"
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"url": b"redis://h"}, "url must be a str"),
        ({"url": "http://h"}, "url must be a redis://"),
        ({"url": "redis://h:port"}, "url must be a redis://"),
        ({"url": "redis://h/db"}, "url must be a redis://"),
        ({"url": "unix://"}, "url must be a redis://"),
        ({"prefix": 1}, "prefix must be a str"),
        ({"prefix": "p" * 257}, "prefix must be a str"),
        ({"node": ""}, "node must be a printable str"),
        ({"node": "a\nb"}, "node must be a printable str"),
        ({"node": 7}, "node must be a printable str"),
        ({"lease_seconds": 0.5}, "lease_seconds must be a number from 1 to 3600"),
        ({"lease_seconds": True}, "lease_seconds must be a number"),
        ({"timeout_seconds": "1"}, "timeout_seconds must be a number from 0.01 to 60"),
    ],
)
def test_settings_are_checked(options: dict[str, Any], message: str) -> None:
    url = options.pop("url", "redis://127.0.0.1:6379/0")
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        RedisTaskStore(url, **options)


def test_without_the_redis_client_it_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigurationError, match=re.escape("pip install 'mcpkit[redis]'")):
        RedisTaskStore("redis://h")


# --- whole servers, several nodes -------------------------------------------------------------

gates = Gates()
events: list[Any] = []
LIMITS_SERVED = Limits(task_ttl_seconds=120.0, task_timeout_seconds=120.0)


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    yield
    gates.clear()
    events.clear()


@endpoint(path="/mcp", name="jobs", version="1.0.0", revisions={Revision.V2026_07_28})
class Jobs:
    @tool(task_support=TaskSupport.OPTIONAL)
    async def echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)

    @tool(task_support=TaskSupport.OPTIONAL)
    async def job(self, text: str) -> CompleteResult:
        """Not idempotent: failed when its node dies."""
        events.append(f"job {text}")
        while not gates(text).is_set():
            await asyncio.sleep(0.005)
        return CompleteResult.from_tool_text(text)

    @tool(idempotent=True, task_support=TaskSupport.OPTIONAL)
    async def again(self, text: str, ctx: RequestContext) -> CompleteResult:
        """Idempotent: run again by the node that recovers it."""
        events.append(f"again {text}")
        while not gates(text).is_set():
            await asyncio.sleep(0.005)
        return CompleteResult.from_tool_text(f"again {text}")


def served(url: str, node: str) -> tuple[mcpkit.Server, RedisTaskStore]:
    store = RedisTaskStore(url, node=node, lease_seconds=1.0)
    return mcpkit.Server(Jobs, task_store=store, limits=LIMITS_SERVED), store


def test_a_task_tool_through_servers_on_two_nodes(redis_server: RedisServer) -> None:
    first, first_store = served(redis_server.url, "first")
    second, second_store = served(redis_server.url, "second")
    with TestClient(first) as one, TestClient(second) as two:
        task_id = start(one, "echo", {"text": "h\u00e9llo"}, owner=None)
        done = reach(two, task_id, "completed")  # polled on the other node
        assert done["result"]["content"] == [{"type": "text", "text": "h\u00e9llo"}]
        assert result(get(one, task_id))["status"] == "completed"
    for store in (first_store, second_store):
        asyncio.run(store.close())


def test_a_dead_node_s_tasks_are_failed_or_run_again_by_the_next_node(
    redis_server: RedisServer,
) -> None:
    dead, dead_store = served(redis_server.url, "dead")
    with TestClient(dead) as client:
        lost = start(client, "job", {"text": "lost"})
        kept = start(client, "again", {"text": "kept"})
        until(lambda: len(events) == 2)
    # the node is gone (its store never closed): its tasks stay as stored until its lease lapses
    assert status_of(dead_store, lost) is TaskStatus.WORKING
    time.sleep(1.1)
    events.clear()
    survivor, store = served(redis_server.url, "survivor")
    with TestClient(survivor) as client:
        assert result(get(client, lost))["error"] == INTERRUPTED
        until(lambda: events == ["again kept"])  # run again here
        gates("kept").set()
        done = reach(client, kept, "completed")
        assert done["result"]["content"] == [{"type": "text", "text": "again kept"}]
    asyncio.run(store.close())
    asyncio.run(dead_store.close())


def test_a_node_already_serving_takes_over_a_dead_node_s_tasks(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("mcpkit.server._tasks._SWEEP_SECONDS", 0.2)
    survivor, store = served(redis_server.url, "survivor")
    dead, dead_store = served(redis_server.url, "dead")
    with TestClient(survivor) as client:
        with TestClient(dead) as doomed:
            lost = start(doomed, "job", {"text": "lost"})
            kept = start(doomed, "again", {"text": "kept"})
            until(lambda: len(events) == 2)
        # the dead node's lease lapses while the survivor serves; its next sweep takes over
        events.clear()
        until(lambda: events == ["again kept"])
        assert result(get(client, lost))["error"] == INTERRUPTED
        gates("kept").set()
        done = reach(client, kept, "completed")
        assert done["result"]["content"] == [{"type": "text", "text": "again kept"}]
        # and it never takes over its own running tasks
        gates("mine").clear()
        mine = start(client, "again", {"text": "mine"})
        until(lambda: events[-1] == "again mine")
        time.sleep(0.5)
        assert events.count("again mine") == 1
        gates("mine").set()
        reach(client, mine, "completed")
    asyncio.run(store.close())
    asyncio.run(dead_store.close())


def test_a_sweep_goes_on_when_the_store_is_unavailable(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("mcpkit.server._tasks._SWEEP_SECONDS", 0.1)
    server, store = served(redis_server.url, "node")
    calls: list[str] = []

    async def unavailable(*_args: object) -> list[TaskRecord]:
        calls.append("called")
        raise TaskStoreUnavailable()

    with TestClient(server) as client:
        start(client, "echo", {"text": "x"})
        monkeypatch.setattr(store, "orphaned", unavailable)
        monkeypatch.setattr(store, "expire", unavailable)
        until(lambda: len(calls) >= 4)  # both, on two sweeps at least: the sweeper lives on
    asyncio.run(store.close())
