"""The stdio side of the engine: one JSON-RPC message per line, through the same pipeline as
HTTP minus the HTTP-only groups (routing, Host, Origin, media types, headers).

A stdio process is one client, so its connection is its ``Conversation``: 2025 clients start
with ``initialize`` and the negotiated revision and ``logging/setLevel`` are remembered for the
process, while 2026-07-28 requests name their revision in ``_meta`` on every request.  Requests
run concurrently: the transport gives each line its own task, up to its bound, and hands a line
past it to ``refuse_overloaded``.

Each request is settled exactly once, by whichever comes first: its own answer, the client's
``notifications/cancelled`` (then nothing at all is written for it), or ``shutdown`` (then it
is answered with the overload error).  So a request is never answered twice, and never left
unanswered unless the client asked for that.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Sequence
from typing import Final

from mcpkit.errors import Overloaded, ParseError, ProtocolError
from mcpkit.json import JsonObject, JsonValue, decode
from mcpkit.limits import Limits
from mcpkit.model import CancellationToken
from mcpkit.protocol import (
    Envelope,
    MessageKind,
    error_message,
    parse_envelope,
    readable_id,
    wire_error,
)
from mcpkit.server._call import Runtime
from mcpkit.server._conversation import Conversation
from mcpkit.server._engine import Engine
from mcpkit.server._events import Journal
from mcpkit.server._http import Signal, Writer
from mcpkit.server._listen import Listener
from mcpkit.server._pipeline import notified

__all__ = ["StdioConnection"]

_BLOCKED_POLL_SECONDS: Final = 0.05
"""How often a report waiting for room re-checks that its request is still open."""
_NEVER: Final = Signal()
"""The ``disconnected`` of a line that is not a request: nothing stops it (never set)."""
_OVERLOADED: Final = wire_error(Overloaded(), None)[1]  # the same body on every revision


class _Flight:
    """One request from its arrival until it is settled.

    ``stopped`` is the request's cancel signal: once it is set the executor stops waiting for
    the handler (a ``def`` handler's thread runs on by itself) and no more notifications are
    written.  ``token`` is the handler's cancellation token, once the call is built.
    """

    __slots__ = ("id", "listener", "settled", "stopped", "token")

    def __init__(self, request_id: str | int) -> None:
        self.id = request_id
        self.token: CancellationToken | None = None
        self.listener: Listener | None = None  # a subscriptions/listen's stream
        self.stopped = Signal()
        self.settled = False

    def settle(self) -> bool:
        """Take the one decision on what is written for this request; ``False`` when it was
        already taken."""
        if self.settled:
            return False
        self.settled = True
        return True

    @property
    def cancelled(self) -> bool:
        """Whether the handler's token was cancelled (a deadline, too, cancels it)."""
        return self.token is not None and self.token.cancelled

    def stop(self) -> None:
        if self.token is not None:
            self.token.cancel()
        self.stopped.set()


class _Outbox:
    """Notification bytes handlers have sent and the writer has not yet taken, bounded by
    ``budget`` (the response limit) for the whole connection, as an HTTP response's queue
    is: a ``def`` handler that reports faster than the client reads waits for room, and an
    ``async def`` handler, which must not block the loop, has a notification over the budget
    dropped.  A waiting report gives up once its request is settled."""

    __slots__ = ("_budget", "_held", "_room", "_thread")

    def __init__(self, budget: int) -> None:
        self._budget = budget
        self._held = 0
        self._room = threading.Condition()
        self._thread = threading.get_ident()  # the loop's

    def take(self, size: int, flight: _Flight) -> bool:
        """Make room for ``size`` bytes; ``False`` when the notification is not to be sent."""
        on_loop = threading.get_ident() == self._thread
        with self._room:
            while self._held and self._held + size > self._budget:
                if on_loop or flight.settled or flight.cancelled:
                    return False
                self._room.wait(_BLOCKED_POLL_SECONDS)
            if flight.settled:
                return False
            self._held += size
            return True

    def give_back(self, size: int) -> None:
        with self._room:
            self._held -= size
            self._room.notify_all()


class StdioConnection(Conversation):
    """One stdio client of one endpoint, and what is remembered of it."""

    def __init__(self, engine: Engine, runtime: Runtime) -> None:
        super().__init__()
        self._engine = engine
        self._path = runtime.endpoint.path  # its runtime is looked up per line: swaps apply
        self._flights: set[_Flight] = set()
        self._outbox: _Outbox | None = None  # made on the loop by the first request

    @property
    def limits(self) -> Limits:
        return self._engine.limits

    async def receive(self, line: bytes, write: Writer) -> None:
        channel = _Line(self, write)
        try:
            runtime = self._engine.runtime(self._path)
            await self._engine.pipeline.handle(runtime, line, channel, self)
        finally:
            if channel.flight is not None:
                self._flights.discard(channel.flight)

    async def reject_oversized(self, write: Writer) -> None:
        await write(error_message(None, ParseError()))

    async def refuse_overloaded(self, line: bytes, write: Writer) -> None:
        """Answer a request with the overload error without running it; still honour
        ``notifications/cancelled`` and take a client's answer to the server's request (the
        call waiting for it is in flight already); drop any other notification.  Only the
        envelope is read (the line is at most ``max_request_bytes``); a line that is not a
        valid message gets the error it would get anyway."""
        request_id: str | int | None = None
        try:
            value = decode(line, limits=self._engine.limits)
            try:
                envelope = parse_envelope(value)
            except ProtocolError:
                request_id = readable_id(value)
                raise
        except ProtocolError as error:
            await write(error_message(request_id, wire_error(error, None)[1]))
            return
        if envelope.kind is MessageKind.REQUEST:
            await write(error_message(envelope.id, _OVERLOADED))
        elif envelope.kind is MessageKind.RESPONSE:
            assert isinstance(value, JsonObject)  # parse_envelope checked it
            self.answered(envelope.id, value)
        else:
            notified(envelope, self)  # a cancel still cancels; any other is dropped

    async def shutdown(self, write: Writer) -> int:
        """Stop every request not yet settled and answer it with the overload error (a listen:
        with its ``complete`` result, its graceful end); return how many there were.
        Requests the client cancelled stay unanswered."""
        self.hang_up()
        stopped = [flight for flight in self._flights if flight.settle()]
        for flight in stopped:
            flight.stop()
        for flight in stopped:
            listener = flight.listener
            if listener is None:
                await write(error_message(flight.id, _OVERLOADED))
            else:
                await write(listener.completion())
        return len(stopped)

    def remember(self, client_info: JsonValue, capabilities: JsonValue) -> None:
        """What ``initialize`` said (the line was at most ``max_request_bytes``): the client
        capabilities the server's requests for input are checked against."""
        self.client_info = client_info if isinstance(client_info, JsonObject) else None
        self.client_capabilities = capabilities if isinstance(capabilities, JsonObject) else None

    def cancel(self, request_id: object) -> None:
        if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
            return
        for flight in list(self._flights):
            if flight.id == request_id and flight.settle():  # "5" is not 5: ids keep their type
                flight.stop()

    def outbox(self) -> _Outbox:
        """The connection's one notification budget, made on the loop by the first request."""
        if self._outbox is None:
            self._outbox = _Outbox(self._engine.limits.max_response_bytes)
        return self._outbox


class _Line:
    """The pipeline's channel for one line: a request's notifications and then its answer are
    written, and nothing more once it is settled otherwise (the client cancelled it, or the
    server stopped it); a notification or a response is never answered."""

    __slots__ = ("_connection", "_loop", "_outbox", "_pending", "_request", "_write", "flight")

    def __init__(self, connection: StdioConnection, write: Writer) -> None:
        self._connection = connection
        self._write = write
        self._request = True  # until the envelope says otherwise: a parse error is answered
        self.flight: _Flight | None = None
        self._pending: set[asyncio.Future[None]] = set()

    @property
    def disconnected(self) -> asyncio.Event:
        return _NEVER if self.flight is None else self.flight.stopped

    def opened(self, envelope: Envelope) -> None:
        self._request = envelope.kind is MessageKind.REQUEST
        if self._request:
            assert envelope.id is not None  # a request always has one
            self.flight = _Flight(envelope.id)
            self._connection._flights.add(self.flight)

    def notify(self, message: bytes) -> None:
        flight = self.flight
        assert flight is not None  # only a dispatched request notifies
        outbox = self._outbox
        size = len(message)
        if not outbox.take(size, flight):
            return
        loop = self._loop
        pending = self._pending

        def written(task: asyncio.Future[None]) -> None:
            pending.discard(task)
            outbox.give_back(size)

        def start() -> None:
            if flight.settled:
                outbox.give_back(size)
                return
            task = asyncio.ensure_future(self._write(message))
            pending.add(task)
            task.add_done_callback(written)

        loop.call_soon_threadsafe(start)

    async def run(self, work: Awaitable[bytes], token: CancellationToken) -> bytes:
        assert self.flight is not None
        self.flight.token = token
        # Both taken here, on the loop: notifications come from worker threads too.
        self._loop = asyncio.get_running_loop()
        self._outbox = self._connection.outbox()
        try:
            return await work
        finally:
            if self._pending:
                await asyncio.gather(*self._pending, return_exceptions=True)

    async def finish(self, status: int, message: bytes) -> None:
        await self._answer(message)

    async def refuse(
        self, status: int, message: bytes | None, extra: Sequence[tuple[bytes, bytes]] = ()
    ) -> None:
        if message is not None and self._request:
            await self._answer(message)

    async def accepted(self) -> None:
        """Nothing to write: stdio acknowledges nothing."""

    def header(self, name: bytes, value: bytes) -> None:  # pragma: no cover - no sessions here
        """stdio has no headers (and no sessions: the process is the conversation)."""

    def keep(self, journal: Journal) -> None:  # pragma: no cover - no sessions here
        """stdio has no streams to resume (the process is the conversation)."""

    async def listen(self, listener: Listener) -> None:
        """A ``subscriptions/listen``: its messages go out as lines among the other traffic,
        with no keep-alives (a pipe does not idle out), until it ends with its ``complete``
        result (even when it was cut off because the client stopped reading), or with nothing
        more once the client cancelled it."""
        flight = self.flight
        assert flight is not None  # a listen is a request
        flight.listener = listener
        connection_write = self._write

        async def write(frame: bytes | None, last: bool) -> None:
            if frame is None:
                return  # a pipe does not idle out
            if last:
                if not flight.settle():
                    return  # cancelled, or answered by a shutdown, meanwhile
            elif flight.settled:
                return
            await connection_write(frame)

        await listener.run(flight.stopped, write)
        if flight.settle():
            # Cut off (the client stopped reading stdout): it still gets its answer, as every
            # request not cancelled does, once the pipe has room.
            await connection_write(listener.completion())

    async def abandon(self) -> None:  # pragma: no cover - stdio requests are never tracked
        """A cancelled request writes nothing: ``cancel`` settled it."""

    async def _answer(self, message: bytes) -> None:
        """Write the answer of a request nothing else settled (or of a line that never became
        one: ``flight`` is ``None`` until the envelope is read)."""
        if self.flight is None or self.flight.settle():
            await self._write(message)
