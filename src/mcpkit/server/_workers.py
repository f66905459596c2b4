"""The worker threads ``def`` handlers run in: a lean hand-off from the event loop and back.

``ThreadPoolExecutor`` plus ``asyncio.wrap_future`` costs, per call, a concurrent future with
its own condition variable, a semaphore round trip, a chained asyncio future and two layers of
callbacks, all in Python.  Here a call is one tuple on a C queue, and its result a callback in
the loop's mailbox: the hand-off is what a ``def`` handler pays for never running on the loop,
so it is kept small.

What a hand-off costs is mostly context switches, not Python.  A worker woken while the loop
holds the GIL can do nothing but wait for it, so on Linux the workers run under
``SCHED_BATCH``: same priority, but a woken worker does not preempt the thread that woke it; it
runs when the loop next waits for I/O, and finds the GIL free.  On one CPU that took a
``tools/call`` from about five context switches to a fifth of one.  Results go back the same
way in bulk: a worker drops each settled call in the loop's mailbox and wakes the loop only if
the mailbox was empty, so calls that finish together cost the loop one wakeup.

Threads start on demand, one per call that finds no idle thread, up to ``size``.  They are
daemon threads: ``shutdown`` lets running calls finish on their own and does not wait, and
an interpreter that exits does not wait for a handler that ignores its cancellation either.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import functools
import os
import queue
import threading
from collections.abc import Callable

__all__ = ["Workers"]

_Then = Callable[["asyncio.Future[object]"], None]
_Item = tuple[
    contextvars.Context, Callable[[], object], "asyncio.Future[object]", _Then | None, "_Mailbox"
]


class Workers:
    """At most ``size`` threads, named ``{prefix}_{n}``, running calls for one event loop."""

    __slots__ = ("_closed", "_idle", "_items", "_lock", "_mailbox", "_prefix", "_size", "_started")

    def __init__(self, size: int, prefix: str) -> None:
        self._size = size
        self._prefix = prefix
        self._items: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0  # threads that finished a call and will take the next: one per call
        self._started = 0
        self._closed = False
        self._mailbox: _Mailbox | None = None  # the current loop's: one loop at a time

    def submit(
        self, call: Callable[[], object], then: _Then | None = None
    ) -> asyncio.Future[object]:
        """Run ``call()`` in a worker thread, in a copy of the caller's context variables (as
        ``asyncio.to_thread`` does); the future settles on the caller's loop.  A call still
        queued at ``shutdown`` has its future cancelled.

        ``then``, if given, is called with the future right after it settles (or is
        cancelled), in the same callback on the loop: what a done callback would do, a turn
        of the loop sooner and without a callback handle of its own."""
        loop = asyncio.get_running_loop()
        mailbox = self._mailbox
        if mailbox is None or mailbox.loop is not loop:
            mailbox = self._mailbox = _Mailbox(loop)
        future: asyncio.Future[object] = loop.create_future()
        with self._lock:
            if self._closed:
                raise RuntimeError("Workers.submit: shut down")
            self._items.put((contextvars.copy_context(), call, future, then, mailbox))
            if self._idle:
                self._idle -= 1
                return future
            if self._started < self._size:
                self._started += 1
                name = f"{self._prefix}_{self._started - 1}"
                threading.Thread(target=self._work, name=name, daemon=True).start()
        return future

    def shutdown(self) -> None:
        """Take no more calls, cancel the queued ones and let every thread end after its
        current call (from any thread)."""
        with self._lock:
            self._closed = True
            pending: list[_Item] = []
            while True:
                try:
                    item = self._items.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    pending.append(item)
            for _ in range(self._started):
                self._items.put(None)
        for _context, _call, future, then, mailbox in pending:
            mailbox.post(functools.partial(_cancel, future, then))

    def _work(self) -> None:
        _yield_on_wakeup()
        items = self._items
        while True:
            item = items.get()
            if item is None:
                return
            mailbox, settle = item[4], _run(item)
            del item  # hold nothing of a finished call while waiting for the next
            with self._lock:
                self._idle += 1  # before the caller can learn of the result and call again
            mailbox.post(settle)
            del settle, mailbox


class _Mailbox:
    """Settled calls waiting for one loop, and whether the loop has been woken for them.

    Workers append and the loop empties; a worker wakes the loop only when it finds no wakeup
    pending.  The flag is cleared before the loop starts emptying, so a call posted after the
    loop's last look always finds it clear and wakes the loop again: nothing is left behind."""

    __slots__ = ("_settles", "_woken", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._settles: collections.deque[Callable[[], None]] = collections.deque()
        self._woken = False

    def post(self, settle: Callable[[], None]) -> None:
        """From any thread: hand ``settle`` to the loop."""
        self._settles.append(settle)
        if not self._woken:
            self._woken = True
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits
                self.loop.call_soon_threadsafe(self._empty)

    def _empty(self) -> None:
        self._woken = False
        settles = self._settles
        try:
            while settles:
                settles.popleft()()
        finally:  # one settle failed: the loop logs it, the rest go in its next turn
            if settles and not self._woken:
                self._woken = True
                self.loop.call_soon(self._empty)


def _yield_on_wakeup() -> None:
    """On Linux, run this thread under ``SCHED_BATCH`` (see the module docstring); elsewhere,
    or where the policy may not be changed, leave it as it is."""
    set_policy = getattr(os, "sched_setscheduler", None)
    batch = getattr(os, "SCHED_BATCH", None)
    if set_policy is None or batch is None:
        return
    with contextlib.suppress(OSError):
        set_policy(0, batch, os.sched_param(0))


def _run(item: _Item) -> Callable[[], None]:
    """Call, and say how to settle the caller's future on its loop."""
    context, call, future, then, _mailbox = item
    try:
        result = context.run(call)
    except BaseException as error:  # handed to the caller, as a future would be
        return _failure(future, then, error)
    return _success(future, then, result)


def _success(
    future: asyncio.Future[object], then: _Then | None, result: object
) -> Callable[[], None]:
    def settle() -> None:
        if not future.cancelled():
            future.set_result(result)
        if then is not None:
            then(future)

    return settle


def _failure(
    future: asyncio.Future[object], then: _Then | None, error: BaseException
) -> Callable[[], None]:
    def settle() -> None:
        if not future.cancelled():
            future.set_exception(error)
        if then is not None:
            then(future)

    return settle


def _cancel(future: asyncio.Future[object], then: _Then | None) -> None:
    """A call that never ran: its future cancelled (and ``then`` told)."""
    future.cancel()
    if then is not None:
        then(future)
