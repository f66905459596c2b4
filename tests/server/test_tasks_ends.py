"""A task's end that the task store cannot take when the work ends (``TaskStoreUnavailable``):
the runner keeps it and offers it again, the pause doubling from 0.1 s to 2 s, until the store
takes it, the task's TTL passes or the server stops; an end recorded elsewhere meanwhile is
never overwritten.  On the runner directly, with stores that fail on cue, and through a server
on a real Redis that is restarted or hung while a task's work ends."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
import redis

import mcpkit
from mcpkit import CompleteResult, Limits, RedisTaskStore, Revision, Server, TaskSupport
from mcpkit.errors import TaskStoreUnavailable
from mcpkit.json import decode
from mcpkit.server import _tasks
from mcpkit.server._task_store import (
    MemoryTaskStore,
    TaskKey,
    TaskRecord,
    TaskStatus,
    new_task_id,
)
from mcpkit.server._tasks import Running, TaskRunner
from mcpkit.testing import TestClient

from ..redis_server import RedisServer
from .tasks_support import Gates, reach, start, until

LIMITS = Limits()
RESULT = b'{"content":[{"type":"text","text":"done"}]}'
INTERRUPTED = {
    "code": -31903,
    "message": "The task was interrupted by a server restart; call the tool again",
}
WARNED = "mcpkit: a task's end cannot be stored now; trying again"
GIVEN_UP = "mcpkit: a task's end could not be stored; it stays as stored"
SLEEP = asyncio.sleep
"""The real one: tests replace ``asyncio.sleep`` to see the runner's pauses."""


class Flaky(MemoryTaskStore):
    """A memory store whose named methods fail their next ``failures`` calls (one count for
    all of them); with ``landed``, a failing ``finish`` writes the end all the same (its
    answer lost on the way back).  ``interrupted`` reports what has not ended, as a durable
    store reports what a stopped process left."""

    def __init__(self, failures: int, *methods: str, landed: bool = False) -> None:
        super().__init__()
        self.failures = failures
        self.methods = set(methods)
        self.landed = landed
        self.calls: list[str] = []

    def _fails(self, method: str) -> bool:
        self.calls.append(method)
        if method in self.methods and self.failures:
            self.failures -= 1
            return True
        return False

    async def get(self, key: TaskKey) -> TaskRecord | None:
        if self._fails("get"):
            raise TaskStoreUnavailable()
        return await super().get(key)

    async def finish(self, key: TaskKey, status: TaskStatus, **payload: Any) -> TaskRecord | None:
        if self._fails("finish"):
            if self.landed:
                await super().finish(key, status, **payload)
            raise TaskStoreUnavailable()
        return await super().finish(key, status, **payload)

    async def interrupted(self) -> list[TaskRecord]:
        return [task for task in self._tasks.values() if not task.status.terminal]


def record(ttl: float = 60.0) -> TaskRecord:
    now = time.time()
    return TaskRecord(
        task_id=new_task_id(),
        owner="alice",
        endpoint="/mcp",
        tool="job",
        status=TaskStatus.WORKING,
        created_at=now,
        updated_at=now,
        ttl_seconds=ttl,
    )


async def done(running: Running) -> bytes:
    return RESULT


def runner_of(store: MemoryTaskStore) -> tuple[TaskRunner, list[TaskKey]]:
    """A runner on ``store``, and the changes it tells (as to listen streams)."""
    runner = TaskRunner(store, LIMITS)
    told: list[TaskKey] = []
    runner.changed = told.append
    return runner, told


async def launched(runner: TaskRunner, store: MemoryTaskStore, ttl: float = 60.0) -> TaskRecord:
    stored = record(ttl)
    await store.create(stored, LIMITS)
    runner.launch(stored, done)
    return stored


async def ended(runner: TaskRunner) -> None:
    """Until no task of ``runner`` is running or waiting to store its end."""
    while runner.running or runner._ending:
        await SLEEP(0.001)


def pauses(
    monkeypatch: pytest.MonkeyPatch, then: Callable[[int], Awaitable[None]] | None = None
) -> list[float]:
    """The runner's pauses between offers, recorded and not waited for (``then`` runs at each,
    given its number)."""
    seen: list[float] = []

    async def pause(seconds: float) -> None:
        seen.append(seconds)
        if then is not None:
            await then(len(seen))
        await SLEEP(0)

    monkeypatch.setattr(asyncio, "sleep", pause)  # the runner's too
    return seen


# --- the runner, directly -------------------------------------------------------------------


def test_an_end_is_offered_again_with_a_doubling_pause_until_the_store_takes_it(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    store = Flaky(7, "get", "finish")
    runner, told = runner_of(store)
    waited = pauses(monkeypatch)

    async def scenario() -> TaskRecord | None:
        stored = await launched(runner, store)
        await ended(runner)
        return await store.get(stored.key)

    with caplog.at_level(logging.INFO, "mcpkit.server"):
        found = asyncio.run(scenario())
    assert found is not None and found.status is TaskStatus.COMPLETED and found.result == RESULT
    assert waited == [0.1, 0.2, 0.4, 0.8, 1.6, 2.0, 2.0]  # doubling, up to its cap
    assert told == [found.key]  # listeners hear of the end once, when it is stored
    assert caplog.messages == [WARNED]  # once per task, naming nothing of it
    assert found.task_id not in caplog.text


@pytest.mark.parametrize("elsewhere", ["cancelled", "cancel asked"])
def test_an_end_recorded_elsewhere_while_one_waits_is_never_overwritten(
    elsewhere: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another node ends the task (or records ``tasks/cancel``) while this one's end waits:
    the next offer finds it and stops; the stored end stays (or the task ends cancelled)."""
    store = Flaky(1, "finish")
    runner, told = runner_of(store)
    key: list[TaskKey] = []

    async def other_node(count: int) -> None:
        if elsewhere == "cancelled":
            await store.finish(key[0], TaskStatus.CANCELLED)
        else:
            await store.cancel(key[0])

    waited = pauses(monkeypatch, other_node)

    async def scenario() -> TaskRecord | None:
        stored = await launched(runner, store)
        key.append(stored.key)
        await ended(runner)
        return await store.get(stored.key)

    found = asyncio.run(scenario())
    assert found is not None and found.status is TaskStatus.CANCELLED and found.result is None
    assert waited == [0.1]  # one more offer, no further
    # ours refused, then theirs (the retry found it ended), or ours again: cancelled
    assert store.calls.count("finish") == 2
    assert told == [found.key]


def test_an_offer_whose_answer_was_lost_is_found_stored_and_told(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = Flaky(1, "finish", landed=True)
    runner, told = runner_of(store)
    pauses(monkeypatch)

    async def scenario() -> TaskRecord | None:
        stored = await launched(runner, store)
        await ended(runner)
        return await store.get(stored.key)

    found = asyncio.run(scenario())
    assert found is not None and found.status is TaskStatus.COMPLETED and found.result == RESULT
    assert store.calls.count("finish") == 1  # the retry read it as ended: not written again
    assert told == [found.key]


def test_an_end_is_given_up_once_the_task_s_ttl_has_passed(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    store = Flaky(10**9, "get")
    runner, told = runner_of(store)
    seen: list[float] = []

    async def pause(seconds: float) -> None:
        seen.append(seconds)
        await SLEEP(seconds)

    monkeypatch.setattr(asyncio, "sleep", pause)  # the runner's too

    async def scenario() -> None:
        await launched(runner, store, ttl=0.5)
        await ended(runner)

    began = time.monotonic()
    with caplog.at_level(logging.INFO, "mcpkit.server"):
        asyncio.run(scenario())
    assert time.monotonic() - began < 1.5
    assert seen[:2] == [0.1, 0.2] and len(seen) == 3 and seen[2] < 0.4  # cut at the TTL
    assert caplog.messages == [WARNED, GIVEN_UP]
    assert told == []


def test_stopping_gives_up_an_end_waiting_to_be_offered_again(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The server stops while an end waits: it is given up at once (not after its pause), the
    task left ``working`` as stored, and the next start fails it as interrupted."""
    monkeypatch.setattr(_tasks, "_RETRY_FIRST", 60.0)
    store = Flaky(10**9, "finish")
    runner, _ = runner_of(store)

    async def scenario() -> TaskRecord:
        stored = await launched(runner, store)
        while not any(running.retrying for running in runner._ending.values()):
            await asyncio.sleep(0.001)
        began = time.monotonic()
        await runner.shutdown()
        assert time.monotonic() - began < 1.0 and not runner._ending
        return stored

    with caplog.at_level(logging.INFO, "mcpkit.server"):
        stored = asyncio.run(scenario())
    assert caplog.messages == [WARNED, GIVEN_UP]
    left = asyncio.run(store.get(stored.key))
    assert left is not None and left.status is TaskStatus.WORKING
    store.failures = 0

    async def next_start() -> TaskRecord | None:
        await TaskRunner(store, LIMITS).ready()
        return await store.get(stored.key)

    failed = asyncio.run(next_start())
    assert failed is not None and failed.status is TaskStatus.FAILED
    assert decode(failed.error or b"") == INTERRUPTED


class Held(MemoryTaskStore):
    """A memory store whose ``get`` waits until ``release`` is set, then fails if told."""

    def __init__(self, *, fail: bool) -> None:
        super().__init__()
        self.fail = fail
        self.entered: asyncio.Event | None = None
        self.release: asyncio.Event | None = None
        self.gets = 0

    async def get(self, key: TaskKey) -> TaskRecord | None:
        assert self.entered is not None and self.release is not None
        self.gets += 1
        self.entered.set()
        await self.release.wait()
        if self.fail:
            raise TaskStoreUnavailable()
        return await super().get(key)


@pytest.mark.parametrize("fail", [False, True], ids=["taken", "refused"])
def test_stopping_waits_for_an_offer_in_flight(
    fail: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """An end being offered when the server stops is waited for: stored if the store takes it,
    else given up at once (no offer after the stop)."""
    store = Held(fail=fail)
    runner, _ = runner_of(store)

    async def scenario() -> TaskRecord | None:
        store.entered, store.release = asyncio.Event(), asyncio.Event()
        stored = await launched(runner, store)
        await store.entered.wait()
        stopping = asyncio.ensure_future(runner.shutdown())
        await asyncio.sleep(0.01)
        assert not stopping.done()  # waiting for the offer
        store.release.set()
        await stopping
        assert not runner._ending and not runner._stopping  # a later start begins afresh
        return await MemoryTaskStore.get(store, stored.key)

    with caplog.at_level(logging.INFO, "mcpkit.server"):
        found = asyncio.run(scenario())
    assert found is not None and store.gets == 1
    if fail:
        assert found.status is TaskStatus.WORKING
        assert caplog.messages == [GIVEN_UP]
    else:
        assert found.status is TaskStatus.COMPLETED and found.result == RESULT
        assert caplog.messages == []


# --- through a server on a real Redis -------------------------------------------------------

gates = Gates()


@mcpkit.endpoint(path="/mcp", name="ends", version="1.0.0", revisions={Revision.V2026_07_28})
class Ends:
    @mcpkit.tool(task_support=TaskSupport.OPTIONAL)
    async def job(self, text: str) -> CompleteResult:
        while not gates(text).is_set():
            await asyncio.sleep(0.005)
        return CompleteResult.from_tool_text(text)


@pytest.fixture
def _gates() -> Iterator[Gates]:
    yield gates
    gates.clear()  # a job still waiting ends


@pytest.mark.parametrize("outage", ["restarted", "hung"])
def test_a_task_whose_work_ends_while_redis_is_away_completes_once_it_is_back(
    outage: str, redis_server: RedisServer, caplog: pytest.LogCaptureFixture, _gates: Gates
) -> None:
    store = RedisTaskStore(redis_server.url, node="node", timeout_seconds=0.3)
    limits = Limits(task_ttl_seconds=120.0, task_timeout_seconds=120.0)
    try:
        with TestClient(Server(Ends, task_store=store, limits=limits)) as client:
            task_id = start(client, "job", {"text": "through"})
            pid = redis_server.pid
            assert pid is not None
            if outage == "restarted":  # kept in its dump file, read again at its start
                kept = redis.Redis.from_url(redis_server.url)
                kept.save()
                kept.close()
                redis_server.stop()
            else:
                os.kill(pid, signal.SIGSTOP)
            try:
                with caplog.at_level(logging.WARNING, "mcpkit.server"):
                    gates("through").set()
                    until(lambda: WARNED in caplog.messages)
                    time.sleep(0.5)  # an offer or two more, refused
            finally:
                if outage == "restarted":
                    redis_server.start()
                else:
                    os.kill(pid, signal.SIGCONT)
            finished = reach(client, task_id, "completed")
            assert finished["result"]["content"] == [{"type": "text", "text": "through"}]
        assert GIVEN_UP not in caplog.messages
        assert task_id not in caplog.text
    finally:
        asyncio.run(store.close())
