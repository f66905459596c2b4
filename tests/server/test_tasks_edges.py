"""The task runner's rarer paths: a task that waits past its deadline for a slot, a runner that
stops while a task waits for one, a stored result that cannot be read, and a task store given
as a class."""

from __future__ import annotations

import asyncio
import time

import pytest

import mcpkit
from mcpkit import (
    CompleteResult,
    ConfigurationError,
    InputRequiredResult,
    Limits,
    MemoryTaskStore,
    Revision,
    Server,
    TaskSupport,
)
from mcpkit.errors import OutputError
from mcpkit.server._task_store import TaskKey, TaskStatus
from mcpkit.server._tasks import Running, TaskHandle, TaskRunner
from mcpkit.testing import TestClient

from .tasks_support import INTERNAL, error, get, on_loop, reach, runner, start


@mcpkit.endpoint(path="/mcp", name="edges", version="1.0.0", revisions={Revision.V2026_07_28})
class Edges:
    @mcpkit.tool(task_support=TaskSupport.OPTIONAL)
    async def nap(self, seconds: float) -> CompleteResult:
        await asyncio.sleep(seconds)
        return CompleteResult.from_tool_text("rested")

    @mcpkit.tool(task_support=TaskSupport.OPTIONAL)
    def block(self) -> CompleteResult:
        time.sleep(0.8)  # ignores its token: its slot stays taken until it returns
        return CompleteResult.from_tool_text("late")


def test_a_task_that_waits_past_its_deadline_for_a_slot_fails_with_the_timeout() -> None:
    limits = Limits(max_running_tasks=1, task_timeout_seconds=0.3)
    server = Server(Edges, task_store=MemoryTaskStore(), limits=limits)
    with TestClient(server) as client:
        first = start(client, "block")
        second = start(client, "nap", {"seconds": 0.0})  # waits for the one slot, too long
        timed_out = {"code": -32603, "message": "Request timed out"}
        assert reach(client, second, "failed")["error"] == timed_out
        assert reach(client, first, "failed")["error"] == timed_out


def test_a_task_whose_runner_stopped_fails_with_the_overload_error() -> None:
    server = Server(Edges, task_store=MemoryTaskStore())
    with TestClient(server) as client:
        runner(server).executor.shutdown()  # no slot will ever be given
        task_id = start(client, "nap", {"seconds": 0.0})
        failed = reach(client, task_id, "failed")
        assert failed["error"] == {"code": -32603, "message": "Server overloaded; retry later"}


def test_a_stored_result_that_cannot_be_read_is_not_delivered() -> None:
    store = MemoryTaskStore()
    server = Server(Edges, task_store=store)
    with TestClient(server) as client:
        task_id = start(client, "nap", {"seconds": 0.0})
        reach(client, task_id, "completed")
        key = TaskKey(task_id, None, "/mcp")
        record = store._tasks[task_id]
        store._tasks[task_id] = type(record)(
            **{**{f: getattr(record, f) for f in record.__dataclass_fields__}, "result": b"{"}
        )
        refused = get(client, task_id)
        assert refused.status == 500 and error(refused) == INTERNAL
        # the stored task is left as it is
        found = on_loop(client, store.get(key))
        assert found is not None and found.status is TaskStatus.COMPLETED
        assert found.result == b"{"


def test_a_task_store_given_as_a_class_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="instance"):
        Server(Edges, task_store=MemoryTaskStore)  # type: ignore[arg-type]


def test_a_result_of_exactly_max_task_result_bytes_is_kept_and_one_more_byte_fails() -> None:
    limit = 2048
    limits = Limits(max_task_result_bytes=limit)

    async def settled(size: int) -> TaskStatus:
        store = MemoryTaskStore()
        task_runner = TaskRunner(store, limits)
        record = await task_runner.create(
            owner=None, endpoint="/mcp", tool=_NAP, managed=True, origin=None
        )
        text = b'{"content":[],"pad":"' + b"x" * (size - 23) + b'"}'
        assert len(text) == size
        await task_runner._settle(Running(record.key), text)
        found = await store.get(record.key)
        assert found is not None
        assert (found.result == text) is (found.status is TaskStatus.COMPLETED)
        await task_runner.shutdown()
        return found.status

    assert asyncio.run(settled(limit)) is TaskStatus.COMPLETED
    assert asyncio.run(settled(limit + 1)) is TaskStatus.FAILED


_NAP = next(
    tool
    for tool in mcpkit.EndpointRegistry.from_classes(Edges).endpoints[0].tools
    if tool.name == "nap"
)


def test_a_handle_asking_more_than_max_task_result_bytes_stores_nothing() -> None:
    limits = Limits(max_task_result_bytes=1024)

    def form(message: str) -> dict[str, object]:
        schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        params = {"mode": "form", "message": message, "requestedSchema": schema}
        return {"method": "elicitation/create", "params": params}

    async def asked(message: str) -> tuple[TaskStatus, bool]:
        store = MemoryTaskStore()
        task_runner = TaskRunner(store, limits)
        record = await task_runner.create(owner=None, endpoint="/mcp", tool=_NAP, managed=False)
        handle = TaskHandle(record.key, task_runner, lambda value: b"{}")
        refused = False
        try:
            await handle.ask(InputRequiredResult(input_requests={"ok": form(message)}))
        except OutputError:
            refused = True
        await task_runner.shutdown()
        found = await store.get(record.key)
        assert found is not None
        return found.status, refused

    assert asyncio.run(asked("fits?")) == (TaskStatus.INPUT_REQUIRED, False)
    assert asyncio.run(asked("x" * 1024)) == (TaskStatus.WORKING, True)  # nothing stored
