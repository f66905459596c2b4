"""``TaskRunner.heard``: a task change published by another node (through a shared
broadcaster) reaches the task's work where it runs: a cancellation recorded elsewhere stops
it, and the last answer of a ``tasks/update`` recorded elsewhere lets it go on.  (The cluster
test in tests/scale shows both across real processes.)"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

from mcpkit import Server, TaskSupport, endpoint, tool
from mcpkit.errors import TaskStoreUnavailable
from mcpkit.limits import Limits
from mcpkit.server import Change, ChangeKind, MemoryTaskStore, TaskRecord, TaskStatus
from mcpkit.server._task_store import new_task_id
from mcpkit.server._tasks import Running, TaskRunner

LIMITS = Limits()


def record() -> TaskRecord:
    now = time.time()
    return TaskRecord(
        task_id=new_task_id(),
        owner="alice",
        endpoint="/mcp",
        tool="slow",
        status=TaskStatus.WORKING,
        created_at=now,
        updated_at=now,
        ttl_seconds=60.0,
    )


async def running_here(runner: TaskRunner, stored: TaskRecord) -> Running:
    """``stored`` as if its work ran in this process (the runner's table of running work)."""
    running = Running(stored.key)
    running.task = asyncio.get_running_loop().create_task(asyncio.sleep(10))
    runner._running[stored.task_id] = running
    return running


async def settle(runner: TaskRunner) -> None:
    for _ in range(5):
        await asyncio.sleep(0)
    await asyncio.gather(*runner._checks)


def test_a_cancel_recorded_elsewhere_stops_the_work_here() -> None:
    async def scenario() -> Running:
        store = MemoryTaskStore()
        runner = TaskRunner(store, LIMITS)
        stored = record()
        await store.create(stored, LIMITS)
        running = await running_here(runner, stored)
        await store.cancel(stored.key)  # what tasks/cancel on another node does
        runner.heard(stored.task_id)
        await settle(runner)
        running.task.cancel() if running.task else None
        return running

    running = asyncio.run(scenario())
    assert running.cancelled and running.stopped.is_set() and running.token.cancelled


def test_the_last_answer_recorded_elsewhere_lets_the_work_go_on() -> None:
    async def scenario() -> tuple[bool, bool]:
        store = MemoryTaskStore()
        runner = TaskRunner(store, LIMITS)
        stored = record()
        await store.create(stored, LIMITS)
        running = await running_here(runner, stored)
        await store.ask(stored.key, b'{"q":{}}')
        runner.heard(stored.task_id)  # still waiting for input: nothing to do
        await settle(runner)
        before = running.answered.is_set()
        await store.answer(stored.key, {"q": b"{}"})  # tasks/update on another node
        runner.heard(stored.task_id)
        await settle(runner)
        return before, running.answered.is_set()

    assert asyncio.run(scenario()) == (False, True)


@pytest.mark.parametrize("case", ["unknown", "none", "ended", "gone", "stopped", "unavailable"])
def test_changes_that_call_for_nothing(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    async def scenario() -> Running:
        store = MemoryTaskStore()
        runner = TaskRunner(store, LIMITS)
        stored = record()
        await store.create(stored, LIMITS)
        running = await running_here(runner, stored)
        await store.cancel(stored.key)
        if case == "ended":
            await store.finish(stored.key, TaskStatus.COMPLETED, result=b"{}")
        elif case == "gone":
            await store.expire(time.time() + 3600)
        elif case == "stopped":
            running.stopped.set()
        elif case == "unavailable":

            async def unavailable(*_args: object) -> None:
                raise TaskStoreUnavailable()

            monkeypatch.setattr(store, "get", unavailable)
        runner.heard({"unknown": "no-such-task", "none": None}.get(case, stored.task_id))
        await settle(runner)
        if running.task is not None:
            running.task.cancel()
        return running

    running = asyncio.run(scenario())
    assert not running.cancelled


class Fanout:
    """A broadcaster of its own (not the in-process one): it keeps its receivers."""

    def __init__(self) -> None:
        self.receivers: list[Callable[[Change], None]] = []

    def publish(self, change: Change) -> None:
        for receiver in self.receivers:
            receiver(change)

    def attach(self, receiver: Callable[[Change], None]) -> None:
        self.receivers.append(receiver)

    def detach(self, receiver: Callable[[Change], None]) -> None:
        self.receivers.remove(receiver)


@endpoint(path="/mcp", name="jobs", version="1.0.0")
class Jobs:
    @tool(task_support=TaskSupport.OPTIONAL)
    def job(self) -> str:
        """Runs as a task."""
        return "done"


def test_a_shared_broadcaster_s_task_changes_reach_the_runner(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    heard: list[str | None] = []
    monkeypatch.setattr(TaskRunner, "heard", lambda self, task_id: heard.append(task_id))
    fanout = Fanout()
    Server(Jobs, task_store=MemoryTaskStore(), broadcaster=fanout)
    fanout.publish(Change(ChangeKind.TASK, "/mcp", task="t-1"))
    fanout.publish(Change(ChangeKind.TOOLS, "/mcp"))
    assert heard == ["t-1"]
    assert len(fanout.receivers) == 2  # the audience's, and the runner's
    heard.clear()
    Server(Jobs, task_store=MemoryTaskStore())  # in one process the runner acts already
    assert heard == []
