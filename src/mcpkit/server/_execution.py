"""Bounded execution: handler slots, an admitted FIFO queue and absolute deadlines.

Every handler runs in one of ``slots`` server-wide slots behind a queue of at most ``queue``
waiters, so no input can make the server run unbounded work.  The
outcomes are fixed: a full queue, or a deadline that passes while queued, is ``Overloaded``
(503, never dispatched); a deadline that passes while running is ``DeadlineExceeded`` (504); a
client that goes away is ``Cancelled``.  Running work is never forced: its token is cancelled
and the caller answered at once, but the slot stays taken until the work really exits (the
non-forcible rule), so residual work still counts against the bound.

All slot accounting happens on the event loop thread, in plain callbacks, so it is exact under
any interleaving without locks; the one lock guards the running tokens, which ``shutdown`` may
read from another thread.

Stopping is graceful: ``drain`` refuses new calls (``Overloaded``) while the queued and running
ones finish within a budget; then whatever is left is stopped -- its waiter answered at once
with ``Overloaded``, its token cancelled -- as on a deadline.
"""

from __future__ import annotations

import asyncio
import collections
import enum
import functools
import inspect
import logging
import threading
from collections.abc import Awaitable, Callable
from contextvars import copy_context
from types import CoroutineType
from typing import Any, Final, TypeVar

from mcpkit.errors import (
    Cancelled,
    ConfigurationError,
    DeadlineExceeded,
    InternalError,
    MCPKitError,
    Overloaded,
)
from mcpkit.model import CancellationToken
from mcpkit.server._alarms import alarms_for
from mcpkit.server._http import Signal
from mcpkit.server._workers import Workers

T = TypeVar("T")

__all__ = ["Executor"]

log = logging.getLogger("mcpkit.server")


class _Outcome(enum.Enum):
    """Why a wait ended."""

    DONE = enum.auto()
    DEADLINE = enum.auto()
    DISCONNECTED = enum.auto()
    STOPPED = enum.auto()


def _count(value: object, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigurationError(f"Executor.{name}: must be an int of at least {minimum}")
    return value


class Executor:
    """Runs handler calls within ``slots`` concurrent slots behind a FIFO queue of ``queue``.

    ``def`` handlers run in at most ``slots`` worker threads (``Workers``, never on the loop);
    ``async def`` handlers run as tasks on the loop.  Use one executor from one event loop;
    ``shutdown`` may be called from any thread.
    """

    __slots__ = (
        "_active",
        "_calls",
        "_closed",
        "_draining",
        "_holding",
        "_lock",
        "_pool",
        "_prefix",
        "_queue",
        "_running",
        "_slots",
        "_stopped",
        "_waiters",
    )  # fmt: skip

    def __init__(
        self, *, slots: int = 32, queue: int = 128, thread_name_prefix: str = "mcpkit-handler"
    ) -> None:
        self._slots = _count(slots, "slots", 1)
        self._queue = _count(queue, "queue", 0)
        self._active = 0
        # Only pending futures, oldest first; ``_release`` hands a freed slot to the head.
        # Invariant: while anyone waits, every slot is taken (a freed slot is handed on, never
        # returned), so "a slot is free" and "nobody waits" always go together.
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._running: dict[object, CancellationToken] = {}
        self._lock = threading.Lock()
        self._closed = False
        self._draining = False  # refuse new calls; queued and running ones go on
        self._stopped = _Stop()  # set when a drain's budget is spent: stop every waiter
        self._holding = _Stop()  # set when a drain starts: stop every ``outside`` wait
        self._calls = 0  # callers waiting in ``run`` (queued or running), for ``drain``
        self._prefix = thread_name_prefix
        self._pool = Workers(slots, thread_name_prefix)

    @property
    def active(self) -> int:
        """Slots in use, including work that was abandoned but has not exited yet."""
        return self._active

    @property
    def queued(self) -> int:
        """Requests waiting for a slot."""
        return len(self._waiters)

    @property
    def calls(self) -> int:
        """Callers still waiting for an outcome: queued, or running and not yet answered."""
        return self._calls

    async def run(
        self,
        call: Callable[[], object],
        is_async: bool,
        deadline: float,
        token: CancellationToken,
        disconnected: asyncio.Event | None = None,
        at_once: bool = False,
    ) -> object:
        """Run ``call`` in a slot and return its result (or raise what it raised).

        ``deadline`` is an absolute ``loop.time()``.  With ``is_async`` the call returns an
        awaitable that runs as a task on the loop; otherwise the call runs in a worker thread.
        With ``at_once`` as well, the call returns a coroutine that finishes in its first step
        (``never_suspends``), which is run inline: no task, timer or wait, since nothing could
        interrupt it anyway.  If this coroutine is itself cancelled, the work is abandoned as
        on a disconnect and the ``CancelledError`` propagates.  (Positional arguments are
        accepted too: the server's per-request call passes them so.)
        """
        loop = asyncio.get_running_loop()
        self._calls += 1
        try:
            if not self.take_now(deadline, disconnected):
                await self._wait_for_slot(loop, deadline, disconnected)
            if at_once and is_async:
                return self.run_at_once(call, token)
            # Thread work wakes this waiter itself as it settles (``_dispatch``): the caller
            # resumes a turn of the loop sooner than through the future's callbacks.
            waiter: asyncio.Future[None] | None = None if is_async else loop.create_future()
            try:
                work = self._dispatch(call, is_async, token, waiter)
            except BaseException:
                self._release()
                raise
            try:
                outcome = await _race(loop, work, deadline, disconnected, self._stopped, waiter)
            except asyncio.CancelledError:
                self._abandon(work, token, is_async)
                raise
            if outcome is _Outcome.DONE:
                if work.cancelled():
                    # Only the work itself (or a pool shut down before it started) can cancel
                    # it; a stray CancelledError must not look like this caller was cancelled.
                    raise Cancelled
                return work.result()
            self._abandon(work, token, is_async)
            raise _FAILURES[outcome]
        finally:
            self._calls -= 1

    async def outside(self, work: Callable[[], Awaitable[T]]) -> T:
        """Await ``work()`` without a slot (a 2025 call waiting for its client's answers),
        counted among the calls a drain waits for.  Nothing a drain would refuse at its next
        round is left waiting: when a drain starts (or has started) it is stopped, and the
        caller gets ``Overloaded``."""
        holding = self._holding
        if self._closed or self._draining:
            raise Overloaded()
        task = asyncio.ensure_future(work())

        def wake() -> None:
            task.cancel()

        holding.wakers.add(wake)
        self._calls += 1
        try:
            return await task
        except asyncio.CancelledError:
            if holding.flag:
                raise Overloaded() from None
            raise
        finally:
            self._calls -= 1
            holding.wakers.discard(wake)

    async def in_pool(self, call: Callable[[], object]) -> object:
        """Run ``call`` in the handler pool from work that already holds a slot (an
        interceptor's ``proceed()``).  If the awaiting task is cancelled, it still waits for
        the thread to return before it lets the cancellation through, so the slot is held
        until the work really exits."""
        future = self._pool.submit(call)
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            while not future.done():
                try:
                    await asyncio.wait((future,))
                except asyncio.CancelledError:
                    continue
            raise

    def start(self) -> None:
        """Accept work again after ``shutdown`` or ``drain`` (an ASGI host may run the app's
        lifespan more than once): fresh worker threads; work still running from before keeps
        its slots."""
        with self._lock:
            self._draining = False
            self._stopped = _Stop()
            self._holding = _Stop()
            if not self._closed:
                return
            self._pool = Workers(self._slots, self._prefix)
            self._closed = False

    async def drain(
        self, budget: float, *, hurry: Callable[[], bool] = bool, poll: float = 0.05
    ) -> int:
        """Refuse new calls, give the queued and running ones ``budget`` seconds to finish
        (less if ``hurry()`` turns true), then stop those left: each caller gets
        ``Overloaded`` at once and each token is cancelled (their slots stay taken until the
        work really exits).  Returns how many calls were stopped.  The pool keeps running:
        ``shutdown`` ends it."""
        self._draining = True
        self._holding.set()
        loop = asyncio.get_running_loop()
        end = loop.time() + budget
        while self._calls and loop.time() < end and not hurry():
            await asyncio.sleep(min(poll, max(end - loop.time(), 0)))
        left = self._calls
        if left:
            self._stopped.set()
        return left

    def shutdown(self) -> None:
        """Refuse new work, cancel every running token, and stop the pool without waiting.

        Running work is not interrupted; threads that ignore their token finish on their own.
        Queued requests are refused as the slots they wait for are handed to them.
        """
        with self._lock:
            self._closed = True
            tokens = list(self._running.values())
        for token in tokens:
            token.cancel()
        self._pool.shutdown()

    def _refusal(
        self, loop: asyncio.AbstractEventLoop, deadline: float, disconnected: asyncio.Event | None
    ) -> MCPKitError | None:
        """Why a request must not be dispatched now, or ``None``."""
        if disconnected is not None and disconnected.is_set():
            return Cancelled()
        if loop.time() >= deadline:
            return Overloaded()
        return None

    def take_now(self, deadline: float, disconnected: asyncio.Event | None = None) -> bool:
        """Take a free slot (``True``), or say the caller must queue for one (``False``);
        raise instead if it must not run or the queue is full.  Synchronous, so the common
        case -- a slot is free -- costs no coroutine: a caller with an ``at_once`` call may
        take the slot here and ``run_at_once`` itself, and ``await run(...)`` only on
        ``False`` (nothing has changed in between, so ``run`` queues it the same way)."""
        if self._closed or self._draining:
            raise Overloaded
        # ``_refusal``, inline: every call passes here
        if disconnected is not None and disconnected.is_set():
            raise Cancelled
        if asyncio.get_running_loop().time() >= deadline:
            raise Overloaded
        if self._active < self._slots and not self._waiters:
            self._active += 1
            return True
        if len(self._waiters) >= self._queue:
            raise Overloaded
        return False

    async def _wait_for_slot(
        self, loop: asyncio.AbstractEventLoop, deadline: float, disconnected: asyncio.Event | None
    ) -> None:
        """Queue for a slot in FIFO order (``take_now`` found none free and room to wait)."""
        waiter: asyncio.Future[None] = loop.create_future()
        self._waiters.append(waiter)
        try:
            outcome = await _race(loop, waiter, deadline, disconnected, self._stopped)
        except asyncio.CancelledError:
            self._leave(waiter)
            raise
        if outcome is not _Outcome.DONE:
            self._leave(waiter)
            raise Cancelled if outcome is _Outcome.DISCONNECTED else Overloaded
        # The slot is ours, but things may have changed between the hand-off and now.
        refusal = self._refusal(loop, deadline, disconnected)
        if refusal is not None:
            self._release()
            raise refusal

    def _leave(self, waiter: asyncio.Future[None]) -> None:
        """Stop waiting; a slot handed over in the meantime goes to the next waiter."""
        if waiter.done():
            self._release()
        else:
            self._waiters.remove(waiter)
            waiter.cancel()

    def _release(self) -> None:
        """Give a slot back: to the oldest waiter if there is one, else to the pool of free."""
        if self._waiters:
            self._waiters.popleft().set_result(None)
        else:
            self._active -= 1

    def _dispatch(
        self,
        call: Callable[[], object],
        is_async: bool,
        token: CancellationToken,
        waiter: asyncio.Future[None] | None = None,
    ) -> asyncio.Future[object]:
        """Start the work; the slot is released by a callback when the work really exits.
        Thread work runs that callback as it settles (``Workers.submit``), then wakes
        ``waiter``."""
        key = object()
        with self._lock:
            if self._closed:  # a shutdown while this request waited (or from another thread)
                raise Overloaded
            self._running[key] = token
        try:
            work: asyncio.Future[object]
            if is_async:
                awaitable = call()
                if not inspect.isawaitable(awaitable):
                    raise TypeError("Executor.run: an is_async call must return an awaitable")
                work = asyncio.ensure_future(awaitable)
            else:
                # Like asyncio.to_thread: the handler sees the caller's context variables.
                assert waiter is not None  # ``run`` makes one for thread work
                then = functools.partial(self._settled, key, waiter)
                return self._pool.submit(call, then)
        except BaseException:
            self._forget(key)
            raise
        work.add_done_callback(functools.partial(self._finished, key))
        return work

    def run_at_once(self, call: Callable[[], object], token: CancellationToken) -> object:
        """One step of the coroutine ``call()`` returns, in a copy of the context as a task
        would run it, in the slot the caller took (``take_now`` or ``run``); the slot is given
        back when it returns."""
        key = object()
        with self._lock:
            if self._closed:
                self._release()
                raise Overloaded
            self._running[key] = token
        try:
            coroutine = call()
            if not isinstance(coroutine, CoroutineType):  # ``inspect.iscoroutine``, inline
                raise TypeError("Executor.run: an at_once call must return a coroutine")
            try:
                copy_context().run(coroutine.send, None)
            except StopIteration as finished:
                return finished.value
            except asyncio.CancelledError:
                raise Cancelled from None  # the work cancelled itself, as a task would
            # It waited after all: ``never_suspends`` was wrong about it.  Nothing can resume
            # it properly here, so it is closed and the request fails closed.
            coroutine.close()
            log.error("mcpkit: a handler run at once suspended")
            raise InternalError
        finally:
            with self._lock:  # ``_forget``, inline on this hot path
                del self._running[key]
            self._release()

    def _settled(
        self, key: object, waiter: asyncio.Future[None], work: asyncio.Future[object]
    ) -> None:
        """Thread work settled: ``_finished``, then the caller's ``waiter`` woken (unless the
        wait already ended)."""
        self._finished(key, work)
        if not waiter.done():
            waiter.set_result(None)

    def _finished(self, key: object, work: asyncio.Future[object]) -> None:
        if not work.cancelled():
            work.exception()  # mark it retrieved: an abandoned failure is discarded silently
        self._forget(key)
        self._release()

    def _forget(self, key: object) -> None:
        with self._lock:
            del self._running[key]

    @staticmethod
    def _abandon(work: asyncio.Future[object], token: CancellationToken, is_async: bool) -> None:
        """Ask the work to stop; it keeps its slot until it does."""
        token.cancel()
        if is_async:
            work.cancel()
        # A thread's future is left alone: cancelling the asyncio wrapper would complete it
        # at once and free the slot while the thread still runs.

    def __repr__(self) -> str:
        return (
            f"Executor(slots={self._slots}, queue={self._queue}, active={self._active}, "
            f"queued={len(self._waiters)})"
        )


class _Stop:
    """The end of a drain: every wait in ``_race`` is woken and ends ``STOPPED``.  A plain
    set of wake-up callbacks (added and discarded by C calls), not a ``Signal``: every call
    that waits registers with it, and almost none ever sees it set."""

    __slots__ = ("flag", "wakers")

    def __init__(self) -> None:
        self.flag = False
        self.wakers: set[Callable[..., None]] = set()

    def set(self) -> None:
        self.flag = True
        for wake in list(self.wakers):
            wake()


# What a running call's caller gets when its wait ends without the work.
_FAILURES: Final = {
    _Outcome.DEADLINE: DeadlineExceeded,
    _Outcome.DISCONNECTED: Cancelled,
    _Outcome.STOPPED: Overloaded,
}


async def _race(
    loop: asyncio.AbstractEventLoop,
    future: asyncio.Future[Any],
    deadline: float,
    disconnected: asyncio.Event | None,
    stopped: _Stop,
    waiter: asyncio.Future[None] | None = None,
) -> _Outcome:
    """Wait until ``future`` completes, the deadline passes, ``disconnected`` is set or the
    executor is ``stopped``.

    A completed future wins over the others, so a granted slot or a finished result is
    never lost to a simultaneous timeout.  One plain future is woken by callbacks (the work's
    completion, a timer, the disconnect and stop signals): no task is created on the common
    path.  A ``waiter`` given is one that ``future``'s completion already wakes.
    """
    if not future.done():
        linked = waiter is not None
        if waiter is None:
            waiter = loop.create_future()

        def wake(*_: object) -> None:
            if not waiter.done():
                waiter.set_result(None)

        if not linked:
            future.add_done_callback(wake)
        alarms = alarms_for(loop)  # a loop timer costs several times more to set and cancel
        alarm = alarms.at(deadline, wake)
        watcher: asyncio.Task[Any] | None = None
        if isinstance(disconnected, Signal):
            disconnected.add_callback(wake)
        elif disconnected is not None:
            watcher = loop.create_task(disconnected.wait())
            watcher.add_done_callback(wake)
        wakers = stopped.wakers
        wakers.add(wake)  # a C call: the stop is never used on the request path
        if stopped.flag:
            wake()
        try:
            await waiter
        finally:
            alarms.cancel(alarm)
            if not linked:
                future.remove_done_callback(wake)
            wakers.discard(wake)
            if isinstance(disconnected, Signal):
                disconnected.remove_callback(wake)
            if watcher is not None:
                watcher.cancel()
    if future.done():
        return _Outcome.DONE
    if disconnected is not None and disconnected.is_set():
        return _Outcome.DISCONNECTED
    if stopped.flag:
        return _Outcome.STOPPED
    return _Outcome.DEADLINE
