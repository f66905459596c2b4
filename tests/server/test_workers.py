"""The worker threads ``def`` handlers run in: hand-off, results, failures, thread reuse and
shutdown (queued calls cancelled, running ones left to finish)."""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterator

import pytest

from mcpkit.server._workers import Workers

WAIT = 5.0
NAME: contextvars.ContextVar[str] = contextvars.ContextVar("NAME")


@pytest.fixture
def workers() -> Iterator[Workers]:
    pool = Workers(2, "test-worker")
    yield pool
    pool.shutdown()


def run(main: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        await asyncio.wait_for(main(), WAIT)

    asyncio.run(bounded())


def test_a_call_runs_in_a_named_thread_with_the_callers_context(workers: Workers) -> None:
    async def main() -> None:
        NAME.set("caller")
        answer = await workers.submit(lambda: (threading.current_thread(), NAME.get()))
        assert isinstance(answer, tuple)
        thread, seen = answer
        assert isinstance(thread, threading.Thread)
        assert thread is not threading.current_thread()
        assert thread.name == "test-worker_0"
        assert thread.daemon
        assert seen == "caller"

    run(main)


def test_failures_reach_the_caller_unchanged(workers: Workers) -> None:
    error = KeyboardInterrupt()

    def fails() -> object:
        raise error

    async def main() -> None:
        with pytest.raises(KeyboardInterrupt) as raised:
            await workers.submit(fails)
        assert raised.value is error

    run(main)


def test_an_idle_thread_is_reused_and_threads_never_exceed_the_size(workers: Workers) -> None:
    async def main() -> None:
        for _ in range(5):
            await workers.submit(threading.get_ident)
        assert workers._started == 1  # each call found the one idle thread
        release = threading.Event()
        blocked = [workers.submit(lambda: release.wait(WAIT)) for _ in range(4)]
        await asyncio.sleep(0.05)
        assert workers._started == 2  # the size bounds the threads; the rest queue
        release.set()
        assert await asyncio.gather(*blocked) == [True] * 4

    run(main)


def test_shutdown_cancels_queued_calls_lets_running_ones_finish_and_refuses_more() -> None:
    workers = Workers(1, "test-worker")
    started, release = threading.Event(), threading.Event()
    ran: list[str] = []

    def running() -> str:
        started.set()
        release.wait(WAIT)
        ran.append("running")
        return "finished"

    told: list[asyncio.Future[object]] = []  # ``then``: called as each future settles

    async def main() -> None:
        first = workers.submit(running, told.append)
        second = workers.submit(lambda: ran.append("queued"), told.append)
        third = workers.submit(lambda: ran.append("queued"))  # no ``then``
        assert await asyncio.to_thread(started.wait, WAIT)
        workers.shutdown()
        workers.shutdown()  # again: nothing more to cancel, the threads still told to end
        with pytest.raises(RuntimeError, match="shut down"):
            workers.submit(lambda: None)
        await asyncio.sleep(0)  # the cancellation is delivered through the loop
        assert second.cancelled() and third.cancelled() and told == [second]
        release.set()
        assert await first == "finished"
        assert told == [second, first]

    run(main)
    assert ran == ["running"]


@pytest.mark.parametrize("fails", [False, True])
def test_a_result_for_a_cancelled_caller_is_dropped(fails: bool) -> None:
    workers = Workers(1, "test-worker")  # one thread: results are settled in call order
    release, done = threading.Event(), threading.Event()

    def call() -> str:
        release.wait(WAIT)
        if fails:
            raise ValueError("nobody listens")
        return "nobody listens"

    async def main() -> None:
        future = workers.submit(call)
        future.cancel()
        release.set()
        follow = workers.submit(done.set)  # queued behind the first call on one thread
        await follow
        assert future.cancelled()

    try:
        run(main)
    finally:
        workers.shutdown()
    assert done.is_set()


def test_a_caller_whose_loop_closed_does_not_stop_the_thread() -> None:
    workers = Workers(1, "test-worker")
    release = threading.Event()

    async def leaves() -> None:
        workers.submit(lambda: release.wait(WAIT))  # its loop is gone when it returns

    async def comes_back() -> None:
        release.set()
        assert await workers.submit(lambda: "still working") == "still working"

    try:
        asyncio.run(leaves())
        run(comes_back)
        assert workers._started == 1
    finally:
        workers.shutdown()


def test_then_sees_a_failure_settled_before_any_done_callback(workers: Workers) -> None:
    async def main() -> None:
        told: list[tuple[bool, bool]] = []
        heard: list[str] = []

        def fails() -> None:
            raise ValueError("no")

        def then(future: asyncio.Future[object]) -> None:
            told.append((future.done(), bool(heard)))

        future = workers.submit(fails, then)
        future.add_done_callback(lambda _: heard.append("done callback"))
        with pytest.raises(ValueError, match="no"):
            await future
        assert told == [(True, False)]  # settled, and told before the done callbacks ran

    run(main)


def test_workers_run_under_sched_batch_and_the_caller_keeps_its_policy(workers: Workers) -> None:
    # A woken worker must not preempt the loop that holds the GIL it needs (Linux only).
    get_policy = getattr(os, "sched_getscheduler", None)

    async def main() -> None:
        if get_policy is None or not hasattr(os, "SCHED_BATCH"):
            assert await workers.submit(lambda: "ran") == "ran"
            return
        caller = get_policy(0)
        assert await workers.submit(lambda: get_policy(0)) == os.SCHED_BATCH
        assert get_policy(0) == caller

    run(main)


@pytest.mark.parametrize("platform", ["refuses", "lacks the call"])
def test_a_thread_whose_policy_may_not_change_still_runs_calls(
    platform: str, workers: Workers, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(pid: int, policy: int, param: object) -> None:
        raise PermissionError("not allowed here")  # as under a strict seccomp profile

    if platform == "refuses":
        monkeypatch.setattr(os, "sched_setscheduler", refused, raising=False)
    else:  # macOS, Windows
        monkeypatch.delattr(os, "sched_setscheduler", raising=False)

    async def main() -> None:
        assert await workers.submit(lambda: "ran") == "ran"

    run(main)


def _hold_then_finish_together(
    workers: Workers, count: int, then: Callable[[asyncio.Future[object]], None] | None = None
) -> list[asyncio.Future[object]]:
    """``count`` calls on one thread, all settled before the loop runs again: the loop thread
    blocks (on purpose) until every result is in its mailbox."""
    release = threading.Event()
    futures = [workers.submit(lambda: release.wait(WAIT), then)]
    futures += [workers.submit(lambda: "quick", then) for _ in range(count - 1)]
    release.set()
    mailbox = workers._mailbox
    assert mailbox is not None
    deadline = time.monotonic() + WAIT
    while len(mailbox._settles) < count and time.monotonic() < deadline:
        time.sleep(0.001)
    assert len(mailbox._settles) == count
    return futures


def test_calls_that_finish_together_wake_the_loop_once(monkeypatch: pytest.MonkeyPatch) -> None:
    workers = Workers(1, "test-worker")
    wakeups: list[object] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        wake = loop.call_soon_threadsafe

        def counted(callback: Callable[..., object], *args: object) -> asyncio.Handle:
            wakeups.append(callback)
            return wake(callback, *args)

        monkeypatch.setattr(loop, "call_soon_threadsafe", counted)
        futures = _hold_then_finish_together(workers, 20)
        assert await asyncio.gather(*futures) == [True] + ["quick"] * 19
        assert len(wakeups) == 1
        assert await workers.submit(lambda: "later") == "later"  # an empty mailbox: woken again
        assert len(wakeups) == 2

    try:
        run(main)
    finally:
        workers.shutdown()


def test_a_failing_settle_is_reported_and_the_others_still_settle() -> None:
    workers = Workers(1, "test-worker")
    reported: list[object] = []
    told: list[asyncio.Future[object]] = []

    def then(future: asyncio.Future[object]) -> None:
        told.append(future)
        if len(told) == 1:
            raise LookupError("a broken then")

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _loop, context: reported.append(context["exception"]))
        futures = _hold_then_finish_together(workers, 3, then)
        assert await asyncio.gather(*futures) == [True, "quick", "quick"]
        assert told == futures
        assert [type(error) for error in reported] == [LookupError]

    try:
        run(main)
    finally:
        workers.shutdown()
