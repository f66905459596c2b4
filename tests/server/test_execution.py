"""Bounded execution: slots, the FIFO queue, deadlines, disconnects and
the non-forcible rule, checked for exact slot accounting.

Each test drives its own event loop with ``asyncio.run``.  Work is held open with events the
test releases, so the interleavings are chosen, not timed; only the deadline tests wait for a
(short) deadline to pass.
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest

from mcpkit.errors import (
    Cancelled,
    ConfigurationError,
    DeadlineExceeded,
    InternalError,
    Overloaded,
)
from mcpkit.model import CancellationToken
from mcpkit.server._execution import Executor

SHORT = 0.02  # seconds: a deadline meant to pass
WAIT = 5.0  # seconds: a bound on waiting for a worker thread, never reached when all is well

REQUEST: contextvars.ContextVar[str] = contextvars.ContextVar("REQUEST")


@pytest.fixture
def executor() -> Iterator[Executor]:
    ex = Executor(slots=1, queue=4, thread_name_prefix="test-handler")
    yield ex
    ex.shutdown()


def run(main: Callable[[], Awaitable[None]]) -> None:
    """Drive ``main`` on a fresh loop; a lost slot fails the test instead of hanging it."""

    async def bounded() -> None:
        await asyncio.wait_for(main(), WAIT)

    asyncio.run(bounded())


def queued(ex: Executor, count: int) -> Callable[[], bool]:
    return lambda: ex.queued == count


def later(seconds: float = 60.0) -> float:
    return asyncio.get_running_loop().time() + seconds


async def until(predicate: Callable[[], bool]) -> None:
    """Yield to the loop until ``predicate`` holds (bounded, so a bug fails, not hangs)."""
    stop = time.monotonic() + WAIT
    while not predicate():
        assert time.monotonic() < stop, "condition not reached"
        await asyncio.sleep(0)


def value(result: object) -> Callable[[], object]:
    return lambda: result


def never_called(calls: list[str], name: str) -> Callable[[], object]:
    def call() -> object:
        calls.append(name)
        return None

    return call


class Blocked:
    """A sync handler that holds its slot until the test releases it."""

    def __init__(self, result: object = "late", error: BaseException | None = None) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.finished = threading.Event()
        self.thread: threading.Thread | None = None
        self.result = result
        self.error = error

    def __call__(self) -> object:
        self.thread = threading.current_thread()
        self.started.set()
        try:
            assert self.release.wait(WAIT)
            if self.error is not None:
                raise self.error
            return self.result
        finally:
            self.finished.set()

    async def wait_started(self) -> None:
        assert await asyncio.to_thread(self.started.wait, WAIT)


class Stubborn:
    """An async handler that ignores the first cancellation, waiting for the test's release."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.cancels = 0
        self.error = error

    def __call__(self) -> Awaitable[object]:
        return self.work()

    async def work(self) -> object:
        self.started.set()
        while not self.release.is_set():
            try:
                await self.release.wait()
            except asyncio.CancelledError:
                self.cancels += 1
                if self.cancels > 1:  # a second cancel (asyncio.run's clean-up) ends it
                    raise
        if self.error is not None:
            raise self.error
        return "late"


def start(
    ex: Executor,
    call: Callable[[], object],
    *,
    is_async: bool = False,
    deadline: float | None = None,
    token: CancellationToken | None = None,
    disconnected: asyncio.Event | None = None,
) -> asyncio.Task[object]:
    """Run ``call`` in a task, so the test can hold several requests at once."""
    return asyncio.ensure_future(
        ex.run(
            call,
            is_async=is_async,
            deadline=later() if deadline is None else deadline,
            token=token or CancellationToken(),
            disconnected=disconnected,
        )
    )


def collect_loop_errors() -> list[dict[str, Any]]:
    """Record what asyncio would log (e.g. "exception was never retrieved")."""
    errors: list[dict[str, Any]] = []
    asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: errors.append(ctx))
    return errors


# --- construction ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"slots": 0}, "Executor.slots: must be an int of at least 1"),
        ({"slots": True}, "Executor.slots: must be an int of at least 1"),
        ({"slots": 2.0}, "Executor.slots: must be an int of at least 1"),
        ({"queue": -1}, "Executor.queue: must be an int of at least 0"),
    ],
)
def test_bounds_are_checked_at_construction(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        Executor(**kwargs)


def test_defaults_are_the_seed_limits() -> None:
    ex = Executor()
    try:
        assert repr(ex) == "Executor(slots=32, queue=128, active=0, queued=0)"
        assert (ex.active, ex.queued) == (0, 0)
    finally:
        ex.shutdown()


# --- running ----------------------------------------------------------------------------------


def test_sync_call_runs_on_a_worker_thread_with_the_callers_context(executor: Executor) -> None:
    seen: dict[str, object] = {}

    def handler() -> object:
        seen["thread"] = threading.current_thread()
        seen["request"] = REQUEST.get()
        return "result"

    async def main() -> None:
        REQUEST.set("req-1")
        result = await executor.run(
            handler, is_async=False, deadline=later(), token=CancellationToken()
        )
        assert result == "result"
        assert executor.active == 0  # released before run returns

    run(main)
    thread = seen["thread"]
    assert isinstance(thread, threading.Thread)
    assert thread is not threading.current_thread()
    assert thread.name.startswith("test-handler")
    assert seen["request"] == "req-1"


def test_async_call_runs_as_a_task_on_the_loop(executor: Executor) -> None:
    async def handler() -> object:
        await asyncio.sleep(0)
        return (threading.current_thread(), REQUEST.get())

    async def main() -> None:
        REQUEST.set("req-2")
        result = await executor.run(
            handler, is_async=True, deadline=later(), token=CancellationToken()
        )
        assert result == (threading.current_thread(), "req-2")
        assert executor.active == 0

    run(main)


@pytest.mark.parametrize("is_async", [False, True])
def test_the_calls_exception_propagates(executor: Executor, is_async: bool) -> None:
    error = ValueError("handler failed")

    def sync_handler() -> object:
        raise error

    async def async_handler() -> object:
        raise error

    async def main() -> None:
        with pytest.raises(ValueError) as raised:
            await executor.run(
                async_handler if is_async else sync_handler,
                is_async=is_async,
                deadline=later(),
                token=CancellationToken(),
            )
        assert raised.value is error
        assert executor.active == 0

    run(main)


def test_an_async_call_that_fails_to_start_frees_its_slot(executor: Executor) -> None:
    def refuses() -> object:
        raise KeyError("before any awaitable")

    async def main() -> None:
        with pytest.raises(TypeError, match="must return an awaitable"):
            await executor.run(
                value(42), is_async=True, deadline=later(), token=CancellationToken()
            )
        with pytest.raises(KeyError):
            await executor.run(refuses, is_async=True, deadline=later(), token=CancellationToken())
        assert (executor.active, executor.queued) == (0, 0)
        assert (
            await executor.run(
                value(7), is_async=False, deadline=later(), token=CancellationToken()
            )
            == 7
        )

    run(main)


def test_work_that_cancels_itself_is_reported_as_cancelled(executor: Executor) -> None:
    async def handler() -> object:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        await asyncio.sleep(0)
        return "unreachable"

    async def main() -> None:
        with pytest.raises(Cancelled):
            await executor.run(handler, is_async=True, deadline=later(), token=CancellationToken())
        assert executor.active == 0

    run(main)


# --- slots and queue --------------------------------------------------------------------------


def test_slots_fill_then_the_queue_fills_then_overloaded() -> None:
    ex = Executor(slots=2, queue=2)
    holds = [Stubborn() for _ in range(4)]
    calls: list[str] = []

    async def main() -> None:
        tasks = [start(ex, hold, is_async=True) for hold in holds]
        await until(lambda: ex.queued == 2 and holds[1].started.is_set())
        assert (ex.active, ex.queued) == (2, 2)
        assert [hold.started.is_set() for hold in holds] == [True, True, False, False]
        with pytest.raises(Overloaded):
            await ex.run(
                never_called(calls, "fifth"),
                is_async=False,
                deadline=later(),
                token=CancellationToken(),
            )
        assert (ex.active, ex.queued) == (2, 2)
        for hold in holds:
            hold.release.set()
        assert await asyncio.gather(*tasks) == ["late"] * 4
        assert (ex.active, ex.queued) == (0, 0)

    try:
        run(main)
    finally:
        ex.shutdown()
    assert calls == []


def test_one_slot_and_no_queue() -> None:
    ex = Executor(slots=1, queue=0)
    hold = Stubborn()
    calls: list[str] = []

    async def main() -> None:
        task = start(ex, hold, is_async=True)
        await hold.started.wait()
        assert (ex.active, ex.queued) == (1, 0)
        with pytest.raises(Overloaded):
            await ex.run(
                never_called(calls, "second"),
                is_async=True,
                deadline=later(),
                token=CancellationToken(),
            )
        hold.release.set()
        assert await task == "late"
        assert (
            await ex.run(
                value("again"), is_async=False, deadline=later(), token=CancellationToken()
            )
            == "again"
        )
        assert (ex.active, ex.queued) == (0, 0)

    try:
        run(main)
    finally:
        ex.shutdown()
    assert calls == []


def test_waiters_are_served_in_fifo_order(executor: Executor) -> None:
    order: list[str] = []

    def handler(name: str) -> Callable[[], Awaitable[object]]:
        async def work() -> object:
            order.append(name)
            await asyncio.sleep(0)
            return name

        return work

    async def main() -> None:
        hold = Stubborn()
        first = start(executor, hold, is_async=True)
        await hold.started.wait()
        waiting = []
        for count, name in enumerate("BCD", start=1):
            waiting.append(start(executor, handler(name), is_async=True))
            await until(queued(executor, count))
        hold.release.set()
        assert await asyncio.gather(first, *waiting) == ["late", "B", "C", "D"]
        assert (executor.active, executor.queued) == (0, 0)

    run(main)
    assert order == ["B", "C", "D"]


# --- waiting ----------------------------------------------------------------------------------


def test_a_deadline_passing_while_queued_is_overloaded_and_never_dispatched(
    executor: Executor,
) -> None:
    calls: list[str] = []

    async def main() -> None:
        hold = Stubborn()
        first = start(executor, hold, is_async=True)
        await hold.started.wait()
        with pytest.raises(Overloaded):
            await executor.run(
                never_called(calls, "queued"),
                is_async=False,
                deadline=later(SHORT),
                token=CancellationToken(),
            )
        assert (executor.active, executor.queued) == (1, 0)
        hold.release.set()
        assert await first == "late"
        assert executor.active == 0

    run(main)
    assert calls == []


def test_a_request_that_is_already_late_or_gone_is_never_dispatched(executor: Executor) -> None:
    calls: list[str] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        with pytest.raises(Overloaded):
            await executor.run(
                never_called(calls, "late"),
                is_async=False,
                deadline=loop.time(),
                token=CancellationToken(),
            )
        gone = asyncio.Event()
        gone.set()
        with pytest.raises(Cancelled):
            await executor.run(
                never_called(calls, "gone"),
                is_async=False,
                deadline=later(),
                token=CancellationToken(),
                disconnected=gone,
            )
        assert (executor.active, executor.queued) == (0, 0)

    run(main)
    assert calls == []


def test_a_disconnect_while_queued_is_cancelled_and_never_dispatched(executor: Executor) -> None:
    calls: list[str] = []

    async def main() -> None:
        hold = Stubborn()
        first = start(executor, hold, is_async=True)
        await hold.started.wait()
        gone = asyncio.Event()
        waiting = start(executor, never_called(calls, "queued"), disconnected=gone)
        await until(lambda: executor.queued == 1)
        gone.set()
        with pytest.raises(Cancelled):
            await waiting
        assert (executor.active, executor.queued) == (1, 0)
        hold.release.set()
        assert await first == "late"
        assert executor.active == 0

    run(main)
    assert calls == []


def test_a_cancelled_waiter_leaves_the_queue(executor: Executor) -> None:
    calls: list[str] = []

    async def main() -> None:
        hold = Stubborn()
        first = start(executor, hold, is_async=True)
        await hold.started.wait()
        waiting = start(executor, never_called(calls, "queued"))
        behind = start(executor, value("behind"))
        await until(lambda: executor.queued == 2)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert (executor.active, executor.queued) == (1, 1)
        hold.release.set()
        assert [await first, await behind] == ["late", "behind"]
        assert (executor.active, executor.queued) == (0, 0)

    run(main)
    assert calls == []


@pytest.mark.parametrize("leave", ["cancel", "disconnect"])
def test_a_slot_handed_to_a_leaving_waiter_is_passed_on(executor: Executor, leave: str) -> None:
    """The slot is handed over, then the waiter leaves before it resumes: the next waiter
    must get the slot, or it would be lost for good."""
    calls: list[str] = []

    async def main() -> None:
        hold = Stubborn()
        first = start(executor, hold, is_async=True)
        await hold.started.wait()
        gone = asyncio.Event()
        leaving = start(executor, never_called(calls, "leaving"), disconnected=gone)
        behind = start(executor, value("behind"))
        await until(lambda: executor.queued == 2)
        hold.release.set()
        # The hand-off pops the waiter synchronously; the waiter resumes a few steps later.
        await until(lambda: executor.queued == 1)
        assert not leaving.done()
        if leave == "cancel":
            leaving.cancel()
            with pytest.raises(asyncio.CancelledError):
                await leaving
        else:
            gone.set()
            with pytest.raises(Cancelled):
                await leaving
        assert [await first, await behind] == ["late", "behind"]
        assert (executor.active, executor.queued) == (0, 0)

    run(main)
    assert calls == []


# --- running past the deadline, disconnects, cancellation (the non-forcible rule) ------------


@pytest.mark.parametrize("error", [None, ValueError("late failure")])
def test_a_sync_handler_past_its_deadline_keeps_its_slot_until_it_returns(
    executor: Executor, error: BaseException | None
) -> None:
    blocked = Blocked(error=error)
    token = CancellationToken()

    async def main() -> None:
        errors = collect_loop_errors()
        with pytest.raises(DeadlineExceeded):
            await executor.run(blocked, is_async=False, deadline=later(SHORT), token=token)
        assert token.cancelled
        assert not blocked.finished.is_set()
        assert (executor.active, executor.queued) == (1, 0)
        # Residual work holds the only slot: the next request queues behind it.
        nxt = start(executor, value("next"))
        await until(lambda: executor.queued == 1)
        blocked.release.set()
        assert await nxt == "next"
        assert blocked.finished.is_set()
        assert (executor.active, executor.queued) == (0, 0)
        gc.collect()
        assert errors == []  # the late result or failure was discarded silently

    run(main)
    assert blocked.thread is not None and blocked.thread.name.startswith("test-handler")


@pytest.mark.parametrize("error", [None, ValueError("late failure")])
def test_an_async_handler_ignoring_cancellation_keeps_its_slot_until_it_ends(
    executor: Executor, error: BaseException | None
) -> None:
    stubborn = Stubborn(error=error)
    token = CancellationToken()

    async def main() -> None:
        errors = collect_loop_errors()
        with pytest.raises(DeadlineExceeded):
            await executor.run(stubborn, is_async=True, deadline=later(SHORT), token=token)
        assert token.cancelled
        await until(lambda: stubborn.cancels == 1)  # the task was cancelled, and ignored it
        assert (executor.active, executor.queued) == (1, 0)
        nxt = start(executor, value("next"))
        await until(lambda: executor.queued == 1)
        stubborn.release.set()
        assert await nxt == "next"
        assert (executor.active, executor.queued) == (0, 0)
        gc.collect()
        assert errors == []

    run(main)


def test_a_result_ready_when_the_deadline_passes_is_kept(executor: Executor) -> None:
    async def handler() -> object:
        time.sleep(SHORT * 2)  # blocks the loop: the result and the deadline are due together
        return "in time"

    async def main() -> None:
        result = await executor.run(
            handler, is_async=True, deadline=later(SHORT), token=CancellationToken()
        )
        assert result == "in time"
        assert executor.active == 0

    run(main)


@pytest.mark.parametrize("is_async", [False, True])
def test_a_disconnect_while_running_cancels_at_once_and_keeps_the_slot(
    executor: Executor, is_async: bool
) -> None:
    blocked = Blocked()
    stubborn = Stubborn()
    token = CancellationToken()

    async def main() -> None:
        gone = asyncio.Event()
        task = start(
            executor,
            stubborn if is_async else blocked,
            is_async=is_async,
            token=token,
            disconnected=gone,
        )
        if is_async:
            await stubborn.started.wait()
        else:
            await blocked.wait_started()
        gone.set()
        with pytest.raises(Cancelled):
            await task
        assert token.cancelled
        assert executor.active == 1
        nxt = start(executor, value("next"))
        await until(lambda: executor.queued == 1)
        stubborn.release.set()
        blocked.release.set()
        assert await nxt == "next"
        assert (executor.active, executor.queued) == (0, 0)

    run(main)
    assert stubborn.cancels == (1 if is_async else 0)


@pytest.mark.parametrize("is_async", [False, True])
def test_a_cancelled_caller_abandons_the_work_and_reraises(
    executor: Executor, is_async: bool
) -> None:
    blocked = Blocked()
    stubborn = Stubborn()
    token = CancellationToken()

    async def main() -> None:
        task = start(executor, stubborn if is_async else blocked, is_async=is_async, token=token)
        if is_async:
            await stubborn.started.wait()
        else:
            await blocked.wait_started()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert token.cancelled
        assert executor.active == 1
        stubborn.release.set()
        blocked.release.set()
        await until(lambda: executor.active == 0)

    run(main)
    assert stubborn.cancels == (1 if is_async else 0)


def test_a_cancelled_caller_of_cooperative_async_work_frees_the_slot(executor: Executor) -> None:
    started = asyncio.Event()

    async def handler() -> object:
        started.set()
        await asyncio.Event().wait()  # ends only by cancellation
        return "unreachable"

    async def main() -> None:
        task = start(executor, handler, is_async=True)
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await until(lambda: executor.active == 0)

    run(main)


# --- shutdown ---------------------------------------------------------------------------------


def test_shutdown_cancels_running_tokens_and_refuses_the_rest() -> None:
    ex = Executor(slots=1, queue=2)
    blocked = Blocked(result="finished")
    token = CancellationToken()
    calls: list[str] = []

    async def main() -> None:
        running = start(ex, blocked, token=token)
        await blocked.wait_started()
        waiting = start(ex, never_called(calls, "queued"))
        await until(lambda: ex.queued == 1)

        ex.shutdown()  # returns while the handler thread is still blocked
        assert token.cancelled
        assert not blocked.finished.is_set()
        with pytest.raises(Overloaded):
            await ex.run(
                never_called(calls, "new"),
                is_async=True,
                deadline=later(),
                token=CancellationToken(),
            )

        blocked.release.set()
        assert await running == "finished"  # work that still finishes keeps its result
        with pytest.raises(Overloaded):
            await waiting  # handed the freed slot, refused, and the slot given back
        assert (ex.active, ex.queued) == (0, 0)

    run(main)
    assert calls == []


# --- in_pool: more thread work from work that already holds a slot ---------------------------


def test_in_pool_runs_on_a_worker_thread_and_propagates(executor: Executor) -> None:
    error = ValueError("pool work failed")

    def fails() -> object:
        raise error

    async def main() -> None:
        REQUEST.set("req-3")
        seen = await executor.in_pool(lambda: (threading.current_thread(), REQUEST.get()))
        assert isinstance(seen, tuple)
        thread, request = seen
        assert thread is not threading.current_thread()
        assert request == "req-3"
        with pytest.raises(ValueError) as raised:
            await executor.in_pool(fails)
        assert raised.value is error

    run(main)


def test_in_pool_holds_a_cancellation_until_the_thread_returns(executor: Executor) -> None:
    blocked = Blocked()

    async def settle() -> None:
        for _ in range(5):
            await asyncio.sleep(0)

    async def main() -> None:
        task = asyncio.ensure_future(executor.in_pool(blocked))
        await blocked.wait_started()
        task.cancel()
        await settle()
        assert not task.done()  # still waiting for the thread
        task.cancel()  # a second cancellation is held back too
        await settle()
        assert not task.done()
        blocked.release.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert blocked.finished.is_set()

    run(main)


# --- at_once: coroutines that finish in their first step run inline ---------------------------


def test_an_at_once_call_runs_inline_in_a_copy_of_the_context(executor: Executor) -> None:
    seen: dict[str, object] = {}

    async def handler() -> object:
        seen["task"] = asyncio.current_task()
        seen["active"] = executor.active
        seen["request"] = REQUEST.get()
        REQUEST.set("changed by the handler")
        return "result"

    async def main() -> None:
        REQUEST.set("req-3")
        before = asyncio.all_tasks()
        result = await executor.run(
            handler, is_async=True, at_once=True, deadline=later(), token=CancellationToken()
        )
        assert result == "result"
        assert seen["task"] is asyncio.current_task()  # no task of its own
        assert asyncio.all_tasks() == before
        assert seen["active"] == 1  # it held a slot while it ran ...
        assert executor.active == 0  # ... and gave it back
        assert seen["request"] == "req-3"
        assert REQUEST.get() == "req-3"  # its context changes stay in its copy, as in a task

    run(main)


def test_at_once_is_ignored_for_a_def_call(executor: Executor) -> None:
    async def main() -> None:
        result = await executor.run(
            lambda: threading.current_thread(),
            is_async=False,
            at_once=True,
            deadline=later(),
            token=CancellationToken(),
        )
        assert result is not threading.current_thread()

    run(main)


def test_an_at_once_calls_exception_propagates_and_frees_the_slot(executor: Executor) -> None:
    error = ValueError("handler failed")

    async def handler() -> object:
        raise error

    async def cancels_itself() -> object:
        raise asyncio.CancelledError

    async def main() -> None:
        with pytest.raises(ValueError) as raised:
            await executor.run(
                handler, is_async=True, at_once=True, deadline=later(), token=CancellationToken()
            )
        assert raised.value is error
        with pytest.raises(Cancelled):
            await executor.run(
                cancels_itself,
                is_async=True,
                at_once=True,
                deadline=later(),
                token=CancellationToken(),
            )
        assert (executor.active, executor.queued) == (0, 0)

    run(main)


def test_an_at_once_call_that_suspends_after_all_fails_closed(
    executor: Executor, caplog: pytest.LogCaptureFixture
) -> None:
    finished: list[bool] = []

    async def waits() -> object:
        try:
            await asyncio.sleep(0)
        finally:
            finished.append(True)  # closed, not left suspended
        return "never"

    async def main() -> None:
        with pytest.raises(InternalError):
            await executor.run(
                waits, is_async=True, at_once=True, deadline=later(), token=CancellationToken()
            )
        assert (executor.active, executor.queued) == (0, 0)

    run(main)
    assert finished == [True]
    assert "suspended" in caplog.text


def test_an_at_once_call_must_return_a_coroutine(executor: Executor) -> None:
    async def main() -> None:
        future: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        future.set_result("done")
        with pytest.raises(TypeError, match="must return a coroutine"):
            await executor.run(
                lambda: future,
                is_async=True,
                at_once=True,
                deadline=later(),
                token=CancellationToken(),
            )
        assert (executor.active, executor.queued) == (0, 0)

    run(main)


def test_an_at_once_call_whose_executor_shut_down_meanwhile_is_overloaded(
    executor: Executor,
) -> None:
    async def handler() -> object:
        return "never"

    async def main() -> None:
        # The slot was granted, then a shutdown (from another thread) closed the executor
        # before the call started: it is refused and the slot given back.
        assert executor.take_now(later())
        executor.shutdown()
        with pytest.raises(Overloaded):
            executor.run_at_once(handler, CancellationToken())
        assert (executor.active, executor.queued) == (0, 0)

    run(main)


def test_a_slot_handed_over_after_the_deadline_passed_is_overloaded(executor: Executor) -> None:
    """An at_once call that ends hands its slot to the oldest waiter; a waiter whose deadline
    passed meanwhile is refused (never dispatched) and gives the slot back."""
    calls: list[str] = []

    async def done() -> object:
        return "done"

    async def main() -> None:
        assert executor.take_now(later())  # the only slot, held as ``Operations._run`` does
        late = start(executor, never_called(calls, "late"), deadline=later(SHORT))
        await until(queued(executor, 1))
        time.sleep(2 * SHORT)  # the deadline passes while the loop is held: no timer has run
        assert executor.run_at_once(done, CancellationToken()) == "done"
        assert (executor.active, executor.queued) == (1, 0)  # handed over, not given back
        with pytest.raises(Overloaded):
            await late
        assert (executor.active, executor.queued) == (0, 0)

    run(main)
    assert calls == []


def test_outside_waits_count_for_a_drain_and_end_when_it_starts() -> None:
    """``outside`` awaits work without a slot: the result when it completes, a drain that
    starts stops it with ``Overloaded`` (and a new one is refused while draining), and a
    cancel of the caller is a cancel, not an overload."""
    ex = Executor(slots=1, queue=0)

    async def scenario() -> None:
        assert await ex.outside(lambda: asyncio.sleep(0, "done")) == "done"
        forever = asyncio.ensure_future(ex.outside(asyncio.Event().wait))
        await asyncio.sleep(0.01)
        assert ex.calls == 1
        cancelled = asyncio.ensure_future(ex.outside(asyncio.Event().wait))
        await asyncio.sleep(0.01)
        cancelled.cancel()
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        assert await ex.drain(1.0) == 0
        with pytest.raises(Overloaded):
            await forever
        with pytest.raises(Overloaded):
            await ex.outside(lambda: asyncio.sleep(0))
        assert ex.calls == 0

    asyncio.run(scenario())
    ex.shutdown()
