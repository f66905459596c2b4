"""Endpoint lifespans: entered when the server starts, left when it stops.

An endpoint's ``lifespan`` (an async context manager factory) opens what every request shares,
a database pool or an HTTP client, and what it yields is each handler's ``ctx.state``.  The
server enters each distinct lifespan once, in registry order, and leaves them in reverse order
after the executors have stopped, so no handler runs without its state.  A handler that runs
while its lifespan is not entered (an app mounted where the ASGI lifespan never reaches it)
gets :data:`NOT_STARTED`, which explains itself in the log on first touch instead of failing
with a bare ``AttributeError``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from contextlib import AsyncExitStack
from typing import Final, NoReturn

from mcpkit.errors import ConfigurationError
from mcpkit.model import Endpoint, Lifespan

__all__ = ["NOT_STARTED", "Lifespans"]

log = logging.getLogger("mcpkit.server")

_NOT_STARTED_TEXT: Final = (
    "the endpoint's lifespan has not run, so ctx.state is not available: serve with "
    "Server.run(), Server.serve() or mcpkit serve, or, where the app is mounted in another "
    "ASGI app, enter Server.lifespan(app) from that app's lifespan"
)


class _NotStarted:
    """``ctx.state`` of an endpoint whose lifespan was not entered."""

    __slots__ = ()

    def __getattr__(self, name: str) -> NoReturn:
        log.error("mcpkit: %s", _NOT_STARTED_TEXT)
        raise ConfigurationError(_NOT_STARTED_TEXT)

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "<lifespan not started>"


NOT_STARTED: Final = _NotStarted()


class Lifespans:
    """The entered lifespans of a set of endpoints, and what each yielded."""

    __slots__ = ("_stack", "states")

    def __init__(self) -> None:
        self._stack: AsyncExitStack | None = None
        self.states: Mapping[Lifespan, object] = {}

    async def enter(self, endpoints: Iterable[Endpoint]) -> Mapping[Lifespan, object]:
        """Enter every distinct lifespan of ``endpoints`` (none twice); if one fails, those
        already entered are left again and the failure propagates (the server does not
        start)."""
        if self._stack is not None:
            return self.states  # already running
        stack = AsyncExitStack()
        states: dict[Lifespan, object] = {}
        try:
            for endpoint in endpoints:
                lifespan = endpoint.lifespan
                if lifespan is not None and lifespan not in states:
                    states[lifespan] = await stack.enter_async_context(lifespan())
        except BaseException:
            await stack.aclose()
            raise
        self._stack, self.states = stack, states
        return states

    async def leave(self) -> None:
        """Leave every entered lifespan, last entered first."""
        stack, self._stack, self.states = self._stack, None, {}
        if stack is not None:
            await stack.aclose()
