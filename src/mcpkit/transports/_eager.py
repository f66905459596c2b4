"""A coroutine's first step run at once, in the task that goes on with it if it waits.

A task's first step waits for a turn of the loop (a handle on its ready queue), and its end
for another (its done callbacks).  ``start_eagerly`` runs the first step right away instead,
as Python 3.12's eager tasks do (3.11 has none): a coroutine that finishes in it needs no
task at all, and one that waits goes on in a task from where it stopped.
"""

from __future__ import annotations

import asyncio
import contextvars
from asyncio.tasks import _enter_task, _leave_task
from collections.abc import Coroutine, Generator
from typing import Any, Final

__all__ = ["start_eagerly"]

_Running = dict[asyncio.AbstractEventLoop, "asyncio.Task[Any]"]
_CURRENT: Final[_Running] = asyncio.tasks._current_tasks  # type: ignore[attr-defined]
"""The running task of each loop, as ``asyncio.current_task`` reads it (without its frame)."""
_TAKEN: Final = object()
"""What ``_Resumed`` holds once the first step's outcome has been taken."""


def start_eagerly(
    loop: asyncio.AbstractEventLoop,
    coroutine: Coroutine[Any, Any, None],
    context: contextvars.Context,
) -> asyncio.Task[None] | None:
    """Run ``coroutine``'s first step now, in ``context``: the task that goes on with it if it
    waited, ``None`` if it finished.

    The task exists from the start and is the loop's current task during the step (any task
    current around the call is set aside meanwhile), so what relies on ``current_task()`` --
    ``asyncio.timeout``, task groups, anyio -- finds the same task before and after a wait.
    The task itself starts only if the step waits: before that, its own methods are not to be
    called.  An exception out of the step is raised here (a task would keep it).
    """
    task: asyncio.Task[None] = asyncio.Task.__new__(asyncio.Task)
    outer = _CURRENT.get(loop)
    if outer is not None:
        _leave_task(loop, outer)
    _enter_task(loop, task)
    try:
        pending = context.run(coroutine.send, None)
    except StopIteration:
        return None
    finally:
        _leave_task(loop, task)
        if outer is not None:
            _enter_task(loop, outer)
    asyncio.Task.__init__(task, _Resumed(coroutine, pending), loop=loop, context=context)
    return task


class _Resumed(Coroutine[Any, Any, None]):
    """``coroutine`` after a first step that yielded ``pending`` (the future it waits for, or
    ``None`` to let the loop turn once): to its task, the first step is taking ``pending``;
    every later one is the coroutine's."""

    __slots__ = ("_coroutine", "_pending")

    def __init__(self, coroutine: Coroutine[Any, Any, None], pending: object) -> None:
        self._coroutine = coroutine
        self._pending = pending

    def send(self, value: Any) -> Any:
        pending = self._pending
        if pending is _TAKEN:
            return self._coroutine.send(value)
        self._pending = _TAKEN
        return pending

    def throw(self, *error: Any) -> Any:
        pending = self._pending
        if pending is not _TAKEN:
            # The task was cancelled before its first step, while the coroutine waits for
            # ``pending``: as for a task cancelled in a wait, what it waits for is cancelled.
            self._pending = _TAKEN
            if asyncio.isfuture(pending):
                pending.cancel()
        return self._coroutine.throw(*error)

    def close(self) -> None:
        self._coroutine.close()

    def __await__(self) -> Generator[Any, None, None]:
        raise NotImplementedError  # only a task runs it
