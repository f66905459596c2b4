"""``never_suspends``: which handlers the server may run inline (their coroutine finishes in
its first step).  A wrong ``True`` would be a bug (the executor fails such a call closed); a
wrong ``False`` only costs a task."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest

import mcpkit
from mcpkit import Revision
from mcpkit.model import never_suspends
from mcpkit.model._handlers import only_awaits


async def plain(a: int) -> int:
    return a + 1


async def awaits(a: int) -> int:
    await asyncio.sleep(0)
    return a


@asynccontextmanager
async def managed() -> AsyncIterator[int]:
    yield 1


async def uses_async_with() -> int:
    async with managed() as value:
        return value


async def numbers() -> AsyncIterator[int]:
    yield 1


async def uses_async_for() -> int:
    total = 0
    async for value in numbers():
        total += value
    return total


async def awaits_in_a_comprehension(items: list[Awaitable[int]]) -> list[int]:
    return [await item for item in items]


async def defines_an_awaiting_function() -> Callable[[], Awaitable[None]]:
    async def inner() -> None:
        await asyncio.sleep(0)  # inner's code, not this function's: never runs here

    return inner


def sync(a: int) -> int:
    return a


class Handler:
    async def method(self) -> int:
        return 1

    async def __call__(self) -> int:
        return 1


@pytest.mark.parametrize(
    ("handler", "expected"),
    [
        (plain, True),
        (defines_an_awaiting_function, True),
        (Handler().method, True),
        (awaits, False),
        (uses_async_with, False),
        (uses_async_for, False),
        (awaits_in_a_comprehension, False),
        (sync, False),
        (lambda: None, False),
        (numbers, False),  # an async generator function is not a coroutine function
        (Handler(), False),  # a callable object: its __call__ is not looked into
        (functools.partial(plain, 1), False),
        (print, False),
    ],
)
def test_never_suspends(handler: Callable[..., Any], expected: bool) -> None:
    assert never_suspends(handler) is expected


def test_a_coroutine_that_never_suspends_finishes_in_one_step() -> None:
    coroutine = plain(1)
    with pytest.raises(StopIteration) as finished:
        coroutine.send(None)
    assert finished.value.value == 2


def test_an_adapter_suspends_exactly_when_its_function_does() -> None:
    def adapter_for(function: Callable[..., Awaitable[int]]) -> Callable[..., Awaitable[int]]:
        async def adapter(a: int) -> int:
            return await function(a)

        only_awaits(adapter, function)
        return adapter

    assert never_suspends(adapter_for(plain)) is True
    assert never_suspends(adapter_for(awaits)) is False

    async def unmarked(a: int) -> int:
        return await plain(a)

    assert never_suspends(unmarked) is False  # it awaits: without the mark, it may suspend


def test_a_mark_naming_something_other_than_a_function_is_not_trusted() -> None:
    async def adapter() -> int:
        return 1

    only_awaits(adapter, Handler())
    assert never_suspends(adapter) is False


@dataclass(frozen=True)
class Sum:
    result: int


def test_decorated_methods_are_judged_by_the_method() -> None:
    @mcpkit.endpoint(path="/mcp", name="n", version="1", revisions={Revision.V2026_07_28})
    class Tools:
        @mcpkit.tool(name="at_once")
        async def at_once(self, a: int) -> Sum:
            return Sum(a)

        @mcpkit.tool(name="waits")
        async def waits(self, a: int) -> Sum:
            await asyncio.sleep(0)
            return Sum(a)

        @mcpkit.tool(name="sync")
        def sync(self, a: int) -> Sum:
            return Sum(a)

    server = mcpkit.Server(Tools)
    (endpoint,) = server.registry
    judged = {tool.name: never_suspends(tool.handler) for tool in endpoint.tools}
    assert judged == {"at_once": True, "waits": False, "sync": False}
    runtime = server.engine.runtime(endpoint.path)
    assert {tool.name for tool in endpoint.tools if tool.handler in runtime.at_once} == {"at_once"}
