"""``Signal``: an ``asyncio.Event`` built lazily, with callbacks run once when it is set."""

from __future__ import annotations

import asyncio

import pytest

from mcpkit.server import Signal


def test_a_signal_is_an_event_that_starts_unset() -> None:
    signal = Signal()
    assert isinstance(signal, asyncio.Event)
    assert not signal.is_set()
    assert repr(signal).endswith(" [unset]>")
    signal.set()
    assert signal.is_set()
    assert repr(signal).startswith("<mcpkit.server._http.Signal object at ")
    assert repr(signal).endswith(" [set]>")


def test_set_wakes_every_waiter_and_a_set_signal_does_not_block() -> None:
    async def scenario() -> list[bool]:
        signal = Signal()
        waiters = [asyncio.ensure_future(signal.wait()) for _ in range(3)]
        await asyncio.sleep(0)
        assert not any(waiter.done() for waiter in waiters)
        signal.set()
        woken = list(await asyncio.gather(*waiters))
        assert signal._futures == []  # each waiter took its future away
        return [*woken, await signal.wait()]

    assert asyncio.run(scenario()) == [True, True, True, True]


def test_clear_rearms_the_signal() -> None:
    async def scenario() -> bool:
        signal = Signal()
        signal.set()
        signal.clear()
        assert not signal.is_set()
        waiter = asyncio.ensure_future(signal.wait())
        await asyncio.sleep(0)
        assert not waiter.done()
        signal.set()
        return await waiter

    assert asyncio.run(scenario()) is True


def test_a_waiter_cancelled_before_the_signal_is_set_stays_cancelled() -> None:
    async def scenario() -> None:
        signal = Signal()
        cancelled = asyncio.ensure_future(signal.wait())
        waiting = asyncio.ensure_future(signal.wait())
        await asyncio.sleep(0)
        cancelled.cancel()  # its future is done now; the task has not run its cleanup yet
        signal.set()
        assert await waiting is True
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        assert signal._futures == []

    asyncio.run(scenario())


def test_callbacks_run_once_in_order_and_a_removed_one_never_runs() -> None:
    calls: list[str] = []
    signal = Signal()
    signal.remove_callback(lambda: None)  # none registered yet: nothing happens

    def second() -> None:
        calls.append("second")

    signal.add_callback(lambda: calls.append("first"))
    signal.add_callback(second)
    signal.add_callback(lambda: calls.append("third"))
    signal.remove_callback(second)
    signal.set()
    signal.set()  # already set: nothing runs again
    assert calls == ["first", "third"]
    signal.clear()
    signal.add_callback(lambda: calls.append("after clear"))
    signal.set()
    assert calls == ["first", "third", "after clear"]
