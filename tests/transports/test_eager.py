"""A coroutine's first step run at once (``start_eagerly``): what the coroutine sees is what it
would see in a task, and one that waits goes on in that task, cancellable as a task is."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from mcpkit.transports._eager import start_eagerly

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("VAR", default="unset")


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(scenario())  # type: ignore[arg-type]


def test_a_step_that_finishes_needs_no_task_and_runs_in_the_context_given() -> None:
    seen: list[Any] = []

    async def work() -> None:
        seen.append(asyncio.current_task())
        VAR.set("set in the step")

    async def scenario() -> None:
        outer = asyncio.current_task()
        context = contextvars.copy_context()
        assert start_eagerly(asyncio.get_running_loop(), work(), context) is None
        assert seen[0] is not None and seen[0] is not outer  # a task of its own
        assert asyncio.current_task() is outer  # set back once the step is over
        assert context[VAR] == "set in the step" and VAR.get() == "unset"

    run(scenario)


def test_a_step_that_waits_goes_on_in_the_task_it_ran_in() -> None:
    seen: list[Any] = []
    gate: list[asyncio.Future[str]] = []

    async def work() -> None:
        seen.append(asyncio.current_task())
        VAR.set("kept")
        async with asyncio.timeout(5):  # needs the current task, and cancels it on expiry
            seen.append(await gate[0])
        seen.append(asyncio.current_task())
        seen.append(VAR.get())

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        gate.append(loop.create_future())
        task = start_eagerly(loop, work(), contextvars.copy_context())
        assert task is not None and not task.done() and seen == [task]
        gate[0].set_result("opened")
        await task
        assert seen == [task, "opened", task, "kept"]

    run(scenario)


@pytest.mark.parametrize("waits", [False, True])
def test_outside_any_task_no_task_is_current_before_or_after(waits: bool) -> None:
    seen: list[Any] = []
    tasks: list[asyncio.Task[None] | None] = []

    async def work() -> None:
        seen.append(asyncio.current_task())
        if waits:
            await asyncio.sleep(0)
            seen.append(asyncio.current_task())

    def callback(loop: asyncio.AbstractEventLoop) -> None:  # as a transport calls a protocol
        tasks.append(start_eagerly(loop, work(), contextvars.copy_context()))
        seen.append(asyncio.current_task(loop))

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        loop.call_soon(callback, loop)
        await asyncio.sleep(0.01)
        assert seen[0] is not None and seen[1] is None
        if waits:
            assert tasks == [seen[0]] and seen[2] is seen[0]
        else:
            assert tasks == [None]

    run(scenario)


@pytest.mark.parametrize("wait", ["future", "bare yield"])
def test_a_task_cancelled_before_it_went_on_cancels_the_wait(wait: str) -> None:
    """Its first step waited for a future (cancelled with the task, as a task's wait is) or
    for the loop's next turn; either way the coroutine sees the cancellation there."""
    seen: list[str] = []

    async def work(future: asyncio.Future[None]) -> None:
        try:
            if wait == "future":
                await future
            else:
                await asyncio.sleep(0)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        task = start_eagerly(loop, work(future), contextvars.copy_context())
        assert task is not None
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert seen == ["cancelled"] and task.cancelled()
        assert future.cancelled() == (wait == "future")

    run(scenario)


def test_a_task_cancelled_after_it_went_on_is_cancelled_as_any_task() -> None:
    seen: list[str] = []

    async def work() -> None:
        await asyncio.sleep(0)
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    async def scenario() -> None:
        task = start_eagerly(asyncio.get_running_loop(), work(), contextvars.copy_context())
        assert task is not None
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert seen == ["cancelled"]

    run(scenario)


def test_closing_the_tasks_coroutine_closes_the_one_it_goes_on_with() -> None:
    seen: list[str] = []

    async def work() -> None:
        try:
            await asyncio.sleep(5)
        finally:
            seen.append("closed")

    async def scenario() -> None:
        task = start_eagerly(asyncio.get_running_loop(), work(), contextvars.copy_context())
        assert task is not None
        await asyncio.sleep(0.01)
        task.get_coro().close()
        assert seen == ["closed"]
        task.cancel()

    run(scenario)


def test_an_exception_from_the_first_step_is_raised_to_the_caller() -> None:
    async def work() -> None:
        raise LookupError("from the step")

    async def scenario() -> None:
        outer = asyncio.current_task()
        with pytest.raises(LookupError, match="from the step"):
            start_eagerly(asyncio.get_running_loop(), work(), contextvars.copy_context())
        assert asyncio.current_task() is outer

    run(scenario)
