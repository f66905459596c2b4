"""What a transport hands the engine for one HTTP request, and how the engine answers.

The transport only moves bytes: it reads the body up to the configured
limit, notices a disconnect and writes what the engine tells it to.  Every decision -- status,
headers, body -- is the engine's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from mcpkit.limits import Limits

__all__ = ["HttpEngine", "HttpExchange", "HttpRequest", "Signal", "StdioHandler", "Writer"]


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpRequest:
    """One HTTP request as it arrived.

    * ``method``: the request method, as sent (``"POST"``).
    * ``raw_path``: the undecoded path without the query string; routing compares it exactly.
    * ``headers``: every header field in arrival order, repeats kept; names lower-cased ASCII,
      values decoded as latin-1 (so every byte survives).
    * ``body``: the body, at most ``limits.max_request_bytes`` bytes; ``body_too_large`` says
      the client sent more (the rest was not read).
    * ``client``: the peer address when the server knows it; informational only.
    * ``server_port``: the port the request arrived on, when the transport knows it (the
      loopback ``Host`` aliases must name it).
    """

    method: str
    raw_path: str
    headers: tuple[tuple[str, str], ...]
    body: bytes = b""
    body_too_large: bool = False
    client: tuple[str, int] | None = None
    server_port: int | None = None

    def __repr__(self) -> str:
        return f"HttpRequest({self.method} {len(self.body)} bytes)"


class Signal(asyncio.Event):
    """An ``asyncio.Event`` that also calls back when it is set: the disconnect signal a
    transport hands the engine, so waiting for "the work finished, the deadline passed or the
    client left" needs no watcher task per request.

    One is built per request and most are never waited on, so building one builds nothing:
    ``Event.__init__`` (a waiter deque per instance) is not run, the state starts as the
    class-level defaults below, and every ``Event`` method is implemented here on that state,
    with ``Event``'s behaviour (``set()`` wakes every waiter, ``clear()`` re-arms).  So a
    subclass has no base ``__init__`` to call either.
    """

    _flag = False
    _futures: list[asyncio.Future[None]] | None = None  # those of pending ``wait()`` calls
    _callbacks: list[Callable[[], object]] | None = None

    def __init__(self) -> None:
        """Nothing to build until the signal is used (see the class docstring)."""

    def __repr__(self) -> str:
        return f"<{object.__repr__(self)[1:-1]} [{'set' if self._flag else 'unset'}]>"

    def is_set(self) -> bool:
        return self._flag

    def set(self) -> None:
        """Set the flag, wake every waiter, then call (and forget) every callback."""
        if self._flag:
            return
        self._flag = True
        for future in self._futures or ():
            if not future.done():  # its waiter was cancelled but has not run yet
                future.set_result(None)
        callbacks = self._callbacks
        if callbacks is not None:
            self._callbacks = None
            for callback in callbacks:
                callback()

    def clear(self) -> None:
        self._flag = False

    async def wait(self) -> Literal[True]:
        if self._flag:
            return True
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        futures = self._futures
        if futures is None:
            futures = self._futures = []
        futures.append(future)
        try:
            await future
            return True
        finally:
            futures.remove(future)

    def add_callback(self, callback: Callable[[], object]) -> None:
        """Call ``callback()`` when the signal is set (at once if it already is)."""
        if self._flag:
            callback()
        elif self._callbacks is None:
            self._callbacks = [callback]
        else:
            self._callbacks.append(callback)

    def remove_callback(self, callback: Callable[[], object]) -> None:
        callbacks = self._callbacks
        if callbacks is not None and callback in callbacks:
            callbacks.remove(callback)


class HttpExchange(Protocol):
    """The transport's side of one response: a head, then body chunks."""

    async def start(self, status: int, headers: Sequence[tuple[bytes, bytes]]) -> None:
        """Send the status line and headers (exactly once, before any ``write``)."""

    async def write(self, chunk: bytes, *, more: bool) -> None:
        """Send a body chunk; ``more=False`` ends the response."""


class HttpEngine(Protocol):
    """What the ASGI transport needs of the engine."""

    @property
    def limits(self) -> Limits:
        """The server's limits (the transport reads at most ``max_request_bytes``)."""

    async def startup(self) -> None:
        """Called on ASGI lifespan startup, if the host sends it; never required."""

    async def shutdown(self) -> None:
        """Called on ASGI lifespan shutdown: cancel in-flight work, stop the worker threads."""

    async def handle_http(
        self, request: HttpRequest, exchange: HttpExchange, disconnected: asyncio.Event
    ) -> None:
        """Answer ``request`` through ``exchange``: exactly one response, always started.
        ``disconnected`` is set by the transport when the client goes away; a transport may
        watch for that only while the engine waits on it (``wait()``, or
        ``Signal.add_callback``), so an engine that must know waits rather than polls."""


Writer = Callable[[bytes], Awaitable[None]]
"""Writes one complete JSON-RPC message (no newline; the stdio transport frames it)."""


class StdioHandler(Protocol):
    """What the stdio transport needs of the engine: one per process connection."""

    @property
    def limits(self) -> Limits:
        """The server's limits (the transport bounds requests in flight and held bytes)."""

    async def receive(self, line: bytes, write: Writer) -> None:
        """Handle one line (one JSON-RPC message, without its newline)."""

    async def reject_oversized(self, write: Writer) -> None:
        """Answer a line that was longer than the limit (it was skipped, not parsed)."""

    async def refuse_overloaded(self, line: bytes, write: Writer) -> None:
        """Handle a line that arrived while ``max_stdio_requests`` were in flight: a request
        is answered with the overload error without running, ``notifications/cancelled``
        still cancels, other notifications are dropped."""

    async def shutdown(self, write: Writer) -> int:
        """Stdin closed and the grace period passed: stop what is still running, answer each
        request still in flight with the overload error, and return how many there were."""
