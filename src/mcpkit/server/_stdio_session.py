"""The stdio side of the engine: one JSON-RPC message per line, the same pipeline minus the
HTTP-only groups (routing, Host, Origin, media types, headers).

A stdio process is one client.  2025 clients start with ``initialize``; the negotiated revision
is remembered for the process (the process is the session), and 2026-07-28 requests name their
revision in ``_meta`` on every request.  Requests run concurrently: the transport gives each
line its own task, up to its bound, and hands a line past it to ``refuse_overloaded``.

Each request is settled exactly once, by whichever comes first: its own answer, the client's
``notifications/cancelled`` (then nothing at all is written for it), or ``shutdown`` (then it
is answered with the overload error).  So a request is never answered twice, and never left
unanswered unless the client asked for that.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Final

from mcpkit.errors import Cancelled, Overloaded, ParseError, ProtocolError
from mcpkit.json import JsonObject, decode
from mcpkit.limits import Limits
from mcpkit.model import CancellationToken, Revision
from mcpkit.protocol import (
    MessageKind,
    error_message,
    parse_envelope,
    readable_id,
    wire_error,
)
from mcpkit.server._engine import Engine, Refused, Selection, _Answer
from mcpkit.server._http import Signal, Writer
from mcpkit.server._operations import LEGACY_LOG_LEVEL, Runtime, check_params
from mcpkit.server._policy import Admitted, Rejected

__all__ = ["StdioConnection"]

_BLOCKED_POLL_SECONDS: Final = 0.05
"""How often a report waiting for room re-checks that its request is still open."""


class _Flight:
    """One request from its arrival until it is settled.

    ``stopped`` is the request's cancel signal: once it is set the executor stops waiting for
    the handler (a ``def`` handler's thread runs on by itself) and no more notifications are
    written.  ``token`` is the handler's cancellation token, once the call is built.
    """

    __slots__ = ("id", "revision", "settled", "stopped", "token")

    def __init__(self, request_id: str | int) -> None:
        self.id = request_id
        self.revision: Revision | None = None
        self.token: CancellationToken | None = None
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


class StdioConnection:
    """One stdio client of one endpoint."""

    def __init__(self, engine: Engine, runtime: Runtime) -> None:
        self._engine = engine
        self._runtime = runtime
        self._legacy: Revision | None = None
        self._log_level = LEGACY_LOG_LEVEL  # ``logging/setLevel`` is remembered: one client
        self._flights: set[_Flight] = set()
        self._outbox: _Outbox | None = None  # made on the loop by the first request

    @property
    def limits(self) -> Limits:
        return self._engine.limits

    async def reject_oversized(self, write: Writer) -> None:
        await write(error_message(None, ParseError()))

    async def refuse_overloaded(self, line: bytes, write: Writer) -> None:
        """Answer a request with the overload error without running it; still honour
        ``notifications/cancelled``; drop any other notification.  Only the envelope is read
        (the line is at most ``max_request_bytes``); a line that is not a valid message gets
        the error it would get anyway."""
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
            await write(error_message(envelope.id, wire_error(Overloaded(), None)[1]))
        elif envelope.method == "notifications/cancelled":
            self._cancel(envelope.params)

    async def shutdown(self, write: Writer) -> int:
        """Stop every request not yet settled and answer it with the overload error; return
        how many there were.  Requests the client cancelled stay unanswered."""
        stopped = [flight for flight in self._flights if flight.settle()]
        for flight in stopped:
            flight.stop()
        for flight in stopped:
            await write(error_message(flight.id, wire_error(Overloaded(), flight.revision)[1]))
        return len(stopped)

    def _cancel(self, params: JsonObject | None) -> None:
        target: Any = None if params is None else params.get("requestId")
        if isinstance(target, bool) or not isinstance(target, (str, int)):
            return
        for flight in list(self._flights):
            if flight.id == target and flight.settle():  # "5" is not 5: ids keep their type
                flight.stop()

    async def receive(self, line: bytes, write: Writer) -> None:
        engine = self._engine
        request_id: str | int | None = None
        revision: Revision | None = None
        flight: _Flight | None = None
        try:
            value = decode(line, limits=engine.limits)
            try:
                envelope = parse_envelope(value)
            except ProtocolError:
                request_id = readable_id(value)
                raise
            if envelope.kind is MessageKind.RESPONSE:
                return
            if envelope.kind is MessageKind.NOTIFICATION:
                if envelope.method == "notifications/cancelled":
                    self._cancel(envelope.params)
                return
            request_id = envelope.id
            assert request_id is not None  # a request always has one
            flight = _Flight(request_id)
            self._flights.add(flight)
            selection = engine.select(self._runtime, envelope, None, legacy_default=self._legacy)
            revision = flight.revision = selection.revision
            params = envelope.params or JsonObject()
            check_params(revision, envelope.method or "", params)
            if envelope.method == "initialize":
                self._legacy = revision
            decision = await engine._admit(self._runtime, selection, None)
            if isinstance(decision, Rejected):
                if decision.error is not None:
                    await _answer(flight, error_message(request_id, decision.error), write)
                return
            if flight.settled:  # cancelled, or the server stopped, while it was admitted
                return
            await self._dispatch(selection, flight, decision, write)
            if envelope.method == "logging/setLevel":
                self._log_level = str(params["level"])  # checked by check_params
        except (_Answer, Cancelled):
            return
        except Refused as refused:
            _, written = wire_error(refused.error, refused.revision)
            await _answer(flight, error_message(request_id, written), write)
        except ProtocolError as error:
            _, written = wire_error(error, revision)
            await _answer(flight, error_message(request_id, written), write)
        finally:
            if flight is not None:
                self._flights.discard(flight)

    async def _dispatch(
        self, selection: Selection, flight: _Flight, admitted: Admitted, write: Writer
    ) -> None:
        """Run one admitted request; its notifications and then its answer are written, and
        nothing more once it is settled otherwise (the client cancelled it, or the server
        stopped it)."""
        loop = asyncio.get_running_loop()
        pending: set[asyncio.Future[None]] = set()
        outbox = self._outbox
        if outbox is None:
            outbox = self._outbox = _Outbox(self._engine.limits.max_response_bytes)

        def notify(message: bytes) -> None:
            size = len(message)
            if not outbox.take(size, flight):
                return

            def written(task: asyncio.Future[None]) -> None:
                pending.discard(task)
                outbox.give_back(size)

            def start() -> None:
                if flight.settled:
                    outbox.give_back(size)
                    return
                task = asyncio.ensure_future(write(message))
                pending.add(task)
                task.add_done_callback(written)

            loop.call_soon_threadsafe(start)

        engine = self._engine
        call = engine._call(
            self._runtime, selection, None, admitted, notify, flight.stopped, self._log_level
        )
        flight.token = call.token
        try:
            message = await engine.operations.dispatch(call)
        finally:
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
        await _answer(flight, message, write)


async def _answer(flight: _Flight | None, message: bytes, write: Writer) -> None:
    """Write the answer of a request nothing else settled (or of a line that never became one:
    ``flight`` is ``None`` until the envelope is read)."""
    if flight is None or flight.settle():
        await write(message)
