"""One request's response on HTTP: a JSON body, or an SSE stream once a notification is sent.

Progress and log notifications belong on the originating request's stream, so the first one commits
the response to ``text/event-stream`` and the result becomes the stream's last event; a request
that sends none is answered with one JSON body.

Handlers report from worker threads or from the loop.  A notification is queued and written,
in order, by the request's own coroutine between waits for the handler.  The queue holds at
most ``budget`` bytes (the response limit): a ``def`` handler that reports faster than the
client reads is blocked until there is room (backpressure, never loss), while an ``async def``
handler, which must not block the loop, has a notification over the budget dropped -- it only
happens when it queues megabytes without ever awaiting.

Once the request has an outcome (a result, an error, a deadline, a client that left) the
responder is closed: a reporter blocked on a full queue wakes at once, and every later report
returns without sending anything.  So a handler that keeps reporting to a client that is gone,
or that stopped reading, never blocks its slot; when the client is gone, what was still queued
is dropped with the request rather than written into a dead connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import Awaitable, Sequence
from threading import get_ident
from typing import Final, TypeVar

from mcpkit.protocol import Envelope, sse_event
from mcpkit.server._events import Journal
from mcpkit.server._http import HttpExchange, Signal
from mcpkit.server._listen import Listener

__all__ = ["JSON_HEADERS", "RETRY_AFTER", "SSE_HEADERS", "Responder", "base_headers", "respond"]

# How often a blocked reporting thread re-checks that the request is still open.
_BLOCKED_POLL_SECONDS: Final = 0.05
NO_STORE: Final = (b"cache-control", b"no-store")
RETRY_AFTER: Final = (b"retry-after", b"1")
"""On every 503: overload and shutdown are brief, so a client may retry after a second."""
JSON_HEADERS: Final = ((b"content-type", b"application/json"), NO_STORE)
SSE_HEADERS: Final = (
    (b"content-type", b"text/event-stream"),
    NO_STORE,
    (b"x-accel-buffering", b"no"),
)
KEEPALIVE: Final = b": keep-alive\n\n"
"""An SSE comment: written on an idle stream so that proxies do not close it."""
T = TypeVar("T")


def base_headers(extra: Sequence[tuple[bytes, bytes]] = ()) -> list[tuple[bytes, bytes]]:
    """``Cache-Control: no-store`` on every response, plus ``extra``."""
    return [NO_STORE, *extra]


class Responder:
    """Writes one response through ``exchange``; see the module docstring."""

    __slots__ = (
        "_budget", "_closed", "_committed", "_drainer", "_exchange", "_extra", "_journal",
        "_loop", "_pending", "_queued", "_room", "_stopping", "_thread", "_wake",
        "disconnected",
    )  # fmt: skip

    _wake: asyncio.Event
    _pending: deque[bytes]

    def __init__(
        self,
        exchange: HttpExchange,
        extra: Sequence[tuple[bytes, bytes]] = (),
        *,
        budget: int = 4 * 1024 * 1024,
        disconnected: asyncio.Event | None = None,
    ) -> None:
        self._exchange = exchange
        self.disconnected = Signal() if disconnected is None else disconnected
        """Set by the transport when the client goes away."""
        self._extra = tuple(extra)
        self._loop = asyncio.get_running_loop()
        self._thread = get_ident()
        self._committed = False
        self._closed = False
        self._budget = budget
        self._queued = 0  # bytes accepted and not yet written; guarded by _room
        self._room: threading.Condition | None = None  # made by the first notification
        self._drainer: asyncio.Task[None] | None = None  # started by the first notification
        self._stopping = False
        self._journal: Journal | None = None  # a 2025 session's request: resumable

    def notify(self, message: bytes) -> None:
        """Queue a notification message; callable from any thread (see the module docstring
        for what happens when the queue is full)."""
        size = len(message)
        on_loop = get_ident() == self._thread
        room = self._room
        if room is None:
            room = self._room = threading.Condition()
        with room:
            while self._queued and self._queued + size > self._budget:
                if on_loop or self._closed:
                    return
                room.wait(_BLOCKED_POLL_SECONDS)
            if self._closed:
                return
            self._queued += size
        if on_loop:
            self._push(message)
        else:
            with contextlib.suppress(RuntimeError):  # a closed loop: the request is long gone
                self._loop.call_soon_threadsafe(self._push, message)

    def close(self) -> None:
        """No more notifications: wake a reporter blocked on a full queue, and make every later
        report a no-op.  If the client is gone, what is still queued is dropped (nothing can
        be written to it) and its memory released now.  Idempotent; on the loop."""
        room = self._room
        if room is None:
            self._closed = True
            return
        gone = self.disconnected.is_set()
        with room:
            self._closed = True
            if gone:
                self._queued = 0
                if self._drainer is not None:
                    self._pending.clear()
            room.notify_all()

    def _push(self, message: bytes) -> None:
        if self._closed and self.disconnected.is_set():
            return  # queued from a thread just before the close: nobody to write it to
        if self._drainer is None:
            # The queue and the event are made with the drainer: most requests need none.
            self._pending = deque((message,))
            self._wake = asyncio.Event()
            self._drainer = self._loop.create_task(self._drain_loop())
        else:
            self._pending.append(message)
            self._wake.set()

    async def _drain_loop(self) -> None:
        """Write notifications as they come, until the result is ready."""
        while True:
            await self._drain()
            if self._stopping:
                return
            # ``_drain`` returned with nothing queued (no await after its last check), so
            # anything new sets the event again after this clear.
            self._wake.clear()
            await self._wake.wait()

    def _written(self, size: int) -> None:
        room = self._room
        assert room is not None  # a notification made it before anything was queued
        with room:
            # never below zero: a close for a client that left has already zeroed the count
            self._queued = max(self._queued - size, 0)
            room.notify_all()

    async def _commit(self) -> None:
        """Start the event stream (with its priming event, when it is resumable)."""
        self._committed = True
        await self._exchange.start(200, [*SSE_HEADERS, *self._extra])
        journal = self._journal
        if journal is not None:
            opening = await journal.start()
            if opening:
                await self._exchange.write(opening, more=True)

    async def _event(self, message: bytes) -> bytes:
        journal = self._journal
        return sse_event(message) if journal is None else await journal.event(message)

    async def _drain(self) -> None:
        pending = self._pending
        while pending:
            message = pending.popleft()
            if not self._committed:
                await self._commit()
            await self._exchange.write(await self._event(message), more=True)
            self._written(len(message))
            if pending:
                # One turn of the loop between writes: a write that found the connection
                # broken has scheduled the server's ``connection_lost``, which must run before
                # the next write (otherwise every further write into the dead socket is logged).
                await asyncio.sleep(0)

    # --- the pipeline's channel (``Channel``) ----------------------------------------------

    def opened(self, envelope: Envelope) -> None:
        """Nothing to note: one HTTP request carries one message."""

    async def refuse(
        self, status: int, message: bytes | None, extra: Sequence[tuple[bytes, bytes]] = ()
    ) -> None:
        await respond(self._exchange, status, message, [*self._extra, *extra])

    async def accepted(self) -> None:
        await respond(self._exchange, 202, None, self._extra)

    def header(self, name: bytes, value: bytes) -> None:
        self._extra = (*self._extra, (name, value))

    def _end_journal(self) -> None:
        """A resumable stream has its last event: streams that follow it end."""
        if self._journal is not None:
            self._journal.close()

    def keep(self, journal: Journal) -> None:
        """The request is a 2025 session's: its events go through ``journal`` (kept for
        replay, written with ids), and the client leaving no longer stops it -- a 2025 client
        cancels with ``notifications/cancelled``, and may resume the stream with
        ``Last-Event-ID``.  From now on ``disconnected`` is set only by such a stop; writes to a
        client that left are dropped by the transport."""
        self._journal = journal
        self.disconnected = Signal()

    async def abandon(self) -> None:
        """End the response with no answer (the client cancelled the request): a committed
        stream ends after what was queued, without a result event; an uncommitted response
        is an event stream with no events."""
        self.close()
        if self._drainer is not None:
            await self._stop(self._drainer)
        if not self._committed:
            await self._exchange.start(200, [*SSE_HEADERS, *self._extra])
        await self._exchange.write(b"", more=False)
        self._end_journal()

    async def listen(self, listener: Listener) -> None:
        """A ``subscriptions/listen`` stream: its events, keep-alive comments between them, and
        its ``complete`` result as the last event.  A stream that ends otherwise (the client
        left, or it was cut off because the client does not read) is left unfinished, so the
        server closes the connection."""
        self._committed = True
        exchange = self._exchange
        await exchange.start(200, [*SSE_HEADERS, *self._extra])

        async def write(frame: bytes | None, last: bool) -> None:
            await exchange.write(KEEPALIVE if frame is None else sse_event(frame), more=not last)

        await listener.run(self.disconnected, write)

    async def run(self, work: Awaitable[T], token: object = None) -> T:
        """Await ``work``; the notifications it queues meanwhile are written in order by a
        drainer task that exists only once a first notification arrives, so a request that
        sends none costs no extra task.  (``token`` is the channel's: the transport stops a
        request by setting ``disconnected``, so the responder has no use for it.)"""
        try:
            result = await work
        except Exception:
            # An error, a deadline or a client that left: the handler may still be running
            # (the non-forcible rule), so it must not stay blocked on a full queue.
            self.close()
            if self._drainer is not None:
                await self._stop(self._drainer)
            if self.disconnected.is_set():
                self._end_journal()  # stopped: no answer follows (else ``finish`` ends it)
            raise
        except BaseException:
            # This request's own task is being cancelled (a server shutting down): nothing
            # more is written, so nothing is waited for.
            self.close()
            if self._drainer is not None:
                self._drainer.cancel()
            self._end_journal()
            raise
        if self._drainer is not None:
            await self._stop(self._drainer)
        return result

    async def _stop(self, drainer: asyncio.Task[None]) -> None:
        """Let the drainer write what is queued, then end it; write anything left.  (Nothing
        is ever queued without a drainer: the first notification starts it.)"""
        self._stopping = True
        self._wake.set()
        try:
            await drainer
        except asyncio.CancelledError:
            drainer.cancel()
            raise
        await self._drain()

    async def finish(self, status: int, message: bytes) -> None:
        """End the response: the last SSE event on a committed stream (whatever ``status``
        would have been, the stream is already 200), else a JSON body or an empty one."""
        if self._room is None:
            self._closed = True  # ``close()``'s case without a notification, inline: most ends
        else:
            self.close()
        if self._drainer is not None:
            await self._stop(self._drainer)  # what was queued before the end is written first
        exchange = self._exchange
        if self._committed:
            try:
                await exchange.write(await self._event(message), more=False)
            finally:
                self._end_journal()
            return
        # ``respond``'s JSON body, without a coroutine of its own: every request ends here
        await exchange.start(status, _json_headers(status, message, self._extra))
        await exchange.write(message, more=False)


async def respond(
    exchange: HttpExchange,
    status: int,
    message: bytes | None,
    extra: Sequence[tuple[bytes, bytes]] = (),
) -> None:
    """A complete uncommitted response: a JSON body, or no body (``message=None``)."""
    if message is None:
        length = [] if status == 204 else [(b"content-length", b"0")]  # RFC 9110 §8.6
        if status == 503:
            length.append(RETRY_AFTER)
        await exchange.start(status, base_headers([*length, *extra]))
        await exchange.write(b"", more=False)
        return
    await exchange.start(status, _json_headers(status, message, extra))
    await exchange.write(message, more=False)


def _json_headers(
    status: int, message: bytes, extra: Sequence[tuple[bytes, bytes]]
) -> list[tuple[bytes, bytes]]:
    """A JSON body's headers: its type, ``no-store`` and its length, ``Retry-After`` on a 503
    (the server is overloaded or stopping: a client may try again shortly), then ``extra``."""
    if status == 503:
        return [*JSON_HEADERS, (b"content-length", b"%d" % len(message)), RETRY_AFTER, *extra]
    return [*JSON_HEADERS, (b"content-length", b"%d" % len(message)), *extra]
