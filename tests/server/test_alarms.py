"""``Alarms``: callbacks at loop times behind one loop timer, as loop timers would run them."""

from __future__ import annotations

import asyncio
import contextvars

from mcpkit.server._alarms import _COMPACT_AFTER, Alarms, alarms_for

_SEEN: contextvars.ContextVar[str] = contextvars.ContextVar("_SEEN", default="")


def test_due_callbacks_run_in_time_order_in_the_context_they_were_set_in() -> None:
    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        alarms = Alarms(loop)
        ran: list[str] = []
        now = loop.time()
        _SEEN.set("late")
        alarms.at(now + 0.04, lambda: ran.append(_SEEN.get()))
        _SEEN.set("early")  # an earlier entry re-arms the timer
        alarms.at(now + 0.01, lambda: ran.append(_SEEN.get()))
        _SEEN.set("same")  # a later one does not
        alarms.at(now + 0.02, lambda: ran.append(_SEEN.get()))
        _SEEN.set("")
        await asyncio.sleep(0.1)
        return ran

    assert asyncio.run(main()) == ["early", "same", "late"]


def test_a_cancelled_alarm_never_runs_and_cancelling_twice_is_harmless() -> None:
    async def main() -> tuple[list[int], int]:
        loop = asyncio.get_running_loop()
        alarms = Alarms(loop)
        ran: list[int] = []
        now = loop.time()
        first = alarms.at(now + 0.01, lambda: ran.append(1))
        alarms.at(now + 0.02, lambda: ran.append(2))
        alarms.cancel(first)
        alarms.cancel(first)
        await asyncio.sleep(0.05)
        fired = alarms.at(now, lambda: ran.append(3))
        await asyncio.sleep(0.01)
        alarms.cancel(fired)  # fired already: nothing left to cancel
        return ran, alarms._dead

    assert asyncio.run(main()) == ([2, 3], 0)


def test_an_alarm_handed_to_the_loop_is_still_stopped_by_a_cancel_before_it_runs() -> None:
    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        alarms = Alarms(loop)
        ran: list[str] = []
        now = loop.time()
        target: list[list[object]] = []
        alarms.at(now + 0.01, lambda: alarms.cancel(target[0]))  # due together, runs first
        target.append(alarms.at(now + 0.01, lambda: ran.append("target")))
        await asyncio.sleep(0.05)
        alarms.cancel(target[0])  # again: nothing left to stop
        return ran

    assert asyncio.run(main()) == []


def test_the_timer_rests_when_only_cancelled_alarms_are_left() -> None:
    async def main() -> tuple[list[int], bool, int]:
        loop = asyncio.get_running_loop()
        alarms = Alarms(loop)
        ran: list[int] = []
        now = loop.time()
        alarms.at(now + 0.01, lambda: ran.append(1))
        later = alarms.at(now + 60, lambda: ran.append(2))
        alarms.cancel(later)  # dropped as it comes up, before its time
        await asyncio.sleep(0.05)
        return ran, alarms._timer is None, len(alarms._heap)

    assert asyncio.run(main()) == ([1], True, 0)


def test_cancelled_alarms_are_dropped_at_once_when_they_are_most_of_the_heap() -> None:
    async def main() -> tuple[int, int, list[int]]:
        loop = asyncio.get_running_loop()
        alarms = Alarms(loop)
        ran: list[int] = []
        now = loop.time()
        kept = [alarms.at(now + 60 + index, lambda: None) for index in range(_COMPACT_AFTER + 1)]
        alarms.at(now + 0.01, lambda: ran.append(1))
        for alarm in kept:
            alarms.cancel(alarm)  # the last one is past the bound and most of the heap
        size, dead = len(alarms._heap), alarms._dead
        await asyncio.sleep(0.05)
        return size, dead, ran

    assert asyncio.run(main()) == (1, 0, [1])


def test_each_loop_has_its_own_alarms() -> None:
    async def main() -> Alarms:
        loop = asyncio.get_running_loop()
        alarms = alarms_for(loop)
        assert alarms_for(loop) is alarms and alarms.loop is loop
        return alarms

    assert asyncio.run(main()) is not asyncio.run(main())
