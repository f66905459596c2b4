"""What a transport hands the engine for one HTTP request, and how the engine answers.

The transport only moves bytes (DESIGN.md §2, layer 6): it reads the body up to the configured
limit, notices a disconnect and writes what the engine tells it to.  Every decision -- status,
headers, body -- is the engine's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from mcpkit.limits import Limits

__all__ = ["HttpEngine", "HttpExchange", "HttpRequest", "Signal", "StdioSession", "Writer"]


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
      loopback ``Host`` aliases must name it, soklet4-digest §1.2).
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
    client left" needs no watcher task per request."""

    def __init__(self) -> None:
        super().__init__()
        self._callbacks: list[Callable[[], object]] = []

    def set(self) -> None:
        super().set()
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def add_callback(self, callback: Callable[[], object]) -> None:
        """Call ``callback()`` when the signal is set (at once if it already is)."""
        if self.is_set():
            callback()
        else:
            self._callbacks.append(callback)

    def remove_callback(self, callback: Callable[[], object]) -> None:
        if callback in self._callbacks:
            self._callbacks.remove(callback)


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


class StdioSession(Protocol):
    """What the stdio transport needs of the engine: one per process connection."""

    async def receive(self, line: bytes, write: Writer) -> None:
        """Handle one line (one JSON-RPC message, without its newline)."""

    async def reject_oversized(self, write: Writer) -> None:
        """Answer a line that was longer than the limit (it was skipped, not parsed)."""

    async def shutdown(self) -> None:
        """Cancel what is still running (stdin closed and the grace period passed)."""
