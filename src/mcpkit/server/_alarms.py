"""Timers for the short waits of the request path, at a fraction of a loop timer's cost.

A loop timer is a ``TimerHandle`` in the loop's heap, ordered there by a Python ``__lt__``,
and made, pushed, cancelled and later popped in Python code.  A request that waits for a
worker thread sets two (its deadline, and the transport's disconnect watch) and, almost
always, cancels both a moment later.  ``Alarms`` keeps such entries in a heap of lists, which
compare in C, behind one loop timer armed for the earliest entry: setting one is a push, and
cancelling it clears it in place.  A due entry's callback is handed to the loop with the
context captured when it was set, so it runs as a timer's callback would, in a callback of its
own (which cancelling the entry still stops, until it runs).  Cancelled entries are dropped
when they come up, or all at once when they are most of the heap (as the loop does for its
timers), so the heap stays bounded by the live entries.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from contextvars import copy_context
from heapq import heapify, heappop, heappush
from typing import Any, Final

__all__ = ["Alarm", "Alarms", "alarms_for"]

Alarm = list[Any]
"""One entry: ``[when, order, callback, context, handle]``; ``callback`` is ``None`` once it
was cancelled or handed to the loop, as ``handle``.  ``order`` is unique, so callbacks are
never compared."""

_COMPACT_AFTER: Final = 64
"""Cancelled entries tolerated in the heap before they may be dropped all at once."""


class Alarms:
    """Callbacks at given times of one loop; used from that loop's thread only."""

    __slots__ = ("_armed", "_dead", "_heap", "_order", "_timer", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._heap: list[Alarm] = []
        self._order = itertools.count()
        self._timer: asyncio.TimerHandle | None = None
        self._armed = 0.0  # when the timer fires, while there is one
        self._dead = 0  # cancelled entries still in the heap

    def at(self, when: float, callback: Callable[[], object]) -> Alarm:
        """Call ``callback()`` at loop time ``when`` (unless the entry is cancelled first)."""
        alarm = [when, next(self._order), callback, copy_context(), None]
        heappush(self._heap, alarm)
        if self._timer is None or when < self._armed:
            self._arm(when)
        return alarm

    def cancel(self, alarm: Alarm) -> None:
        """Forget ``alarm``: its callback does not run unless it already has (idempotent)."""
        if alarm[2] is None:
            handle = alarm[4]
            if handle is not None:  # handed to the loop: stopped there, if it has not run yet
                alarm[4] = None
                handle.cancel()
            return
        alarm[2] = alarm[3] = None
        dead = self._dead = self._dead + 1
        if dead > _COMPACT_AFTER and 2 * dead > len(self._heap):
            live = [entry for entry in self._heap if entry[2] is not None]
            heapify(live)
            self._heap = live
            self._dead = 0

    def _arm(self, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._armed = when
        self._timer = self.loop.call_at(when, self._fire)

    def _fire(self) -> None:
        """Hand every due entry to the loop, then arm for the earliest one left."""
        self._timer = None
        due = max(self.loop.time(), self._armed)  # what the loop found due
        heap = self._heap
        while heap:
            alarm = heap[0]
            callback = alarm[2]
            if callback is not None and alarm[0] > due:
                self._arm(alarm[0])
                return
            heappop(heap)
            if callback is None:
                self._dead -= 1
                continue
            alarm[4] = self.loop.call_soon(callback, context=alarm[3])
            alarm[2] = alarm[3] = None


_latest: Alarms | None = None


def alarms_for(loop: asyncio.AbstractEventLoop) -> Alarms:
    """The ``Alarms`` of ``loop`` (a server runs on one loop: the last one used is kept)."""
    global _latest
    alarms = _latest
    if alarms is None or alarms.loop is not loop:
        alarms = _latest = Alarms(loop)
    return alarms
