"""The HTTP methods a 2025 session adds besides ``POST``: ``DELETE`` ends the session, ``GET``
opens its stream of change notifications.

Both name the session in ``Mcp-Session-Id`` and go through admission first (with an empty
``method``: they carry no JSON-RPC message); the session must then be the admitted owner's, at
this endpoint, on the revision of ``MCP-Protocol-Version`` (or its own when the header is
absent), exactly as for a ``POST``.
"""

from __future__ import annotations

import asyncio
from typing import Final, NamedTuple

from mcpkit.errors import ProtocolError, ReplayUnavailable, SessionQuota
from mcpkit.limits import Limits
from mcpkit.model import Revision
from mcpkit.protocol import (
    PROTOCOL_VERSION_HEADER,
    HeaderFields,
    accepts,
    error_message,
    profile,
    select_handshake,
    sse_event,
    wire_error,
)
from mcpkit.server._call import Runtime
from mcpkit.server._events import Journal, Replay
from mcpkit.server._http import HttpExchange, HttpRequest, Signal
from mcpkit.server._pipeline import Pipeline, newest, wire_headers
from mcpkit.server._policy import Rejected
from mcpkit.server._sessions import Session
from mcpkit.server._stream import KEEPALIVE, SSE_HEADERS, respond

__all__ = ["Asked", "SessionRoutes"]

_STANDALONE: Final = 0  # the number of a session's standalone stream (``_events``)


class Asked(NamedTuple):
    """One ``DELETE`` or ``GET`` as the HTTP front hands it over."""

    runtime: Runtime
    fields: HeaderFields
    request: HttpRequest
    exchange: HttpExchange
    extra: list[tuple[bytes, bytes]]
    """The headers every answer carries (CORS)."""


class SessionRoutes:
    """``DELETE`` and ``GET`` for the endpoints that keep sessions, and the open streams."""

    def __init__(self, pipeline: Pipeline, limits: Limits) -> None:
        self._pipeline = pipeline
        self._limits = limits
        assert pipeline.events is not None  # built with the sessions
        self._events = pipeline.events
        self._streams: set[asyncio.Event] = set()

    def wake_all(self) -> None:
        """The server is stopping: every open stream ends after what is queued."""
        for wake in self._streams:
            wake.set()

    async def delete(self, asked: Asked) -> None:
        """End the admitted client's session: 204."""
        session = await self._session(asked)
        if session is not None:
            await self._pipeline.end(session)
            await respond(asked.exchange, 204, None, asked.extra)

    async def stream(self, asked: Asked, disconnected: asyncio.Event) -> None:
        """A ``GET`` stream of the session; a client that does not accept
        ``text/event-stream`` gets 406.

        Without ``Last-Event-ID``, or with one of the standalone stream's own events, it is the
        session's standalone stream (one at a time: a second is 409).  With the id of an event
        of a ``POST``'s stream, it replays what followed that event and then follows the stream
        until its last event.  An id the session cannot replay from is 400 with the fixed
        ``ReplayUnavailable``, before any stream starts; past ``max_session_streams`` open
        streams, 429."""
        exchange, extra = asked.exchange, asked.extra
        if not accepts(asked.fields.get("accept"), json=False):
            await respond(exchange, 406, None, extra)
            return
        session = await self._session(asked)
        if session is None:
            return
        last = asked.fields.get("last-event-id")
        replay = None
        if last is not None:
            replay = await self._events.replay(session.id, last)
            if replay is None:
                await respond(exchange, 400, error_message(None, ReplayUnavailable()), extra)
                return
            if replay.stream != _STANDALONE:
                if session.streams_open >= self._limits.max_session_streams:
                    status, written = wire_error(SessionQuota(), session.revision)
                    await respond(exchange, status, error_message(None, written), extra)
                    return
                await self._follow(session, replay.stream, last, asked, disconnected)
                return
        await self._standalone(session, replay, asked, disconnected)

    async def _standalone(
        self,
        session: Session,
        replay: Replay | None,
        asked: Asked,
        disconnected: asyncio.Event,
    ) -> None:
        """The session's standalone stream: the events a replay names, then its queued
        notifications as they come, a keep-alive comment after ``stream_keepalive_seconds``
        without one, until the session ends, the client leaves or the server stops."""
        exchange, extra = asked.exchange, asked.extra
        wake = asyncio.Event()
        if session.streams_open >= self._limits.max_session_streams or not session.open_stream(
            wake
        ):
            await respond(exchange, 409, None, extra)
            return
        if isinstance(disconnected, Signal):
            disconnected.add_callback(wake.set)
        self._streams.add(wake)
        session.streams_open += 1
        assert session.revision is not None  # a session is opened on its revision
        priming = not session.primed and profile(session.revision).priming_event
        session.primed = True
        journal = Journal(self._events, session, priming=priming, stream=_STANDALONE)
        try:
            await exchange.start(200, [*SSE_HEADERS, *extra])
            opening = await journal.start()
            if opening:
                await exchange.write(opening, more=True)
            for event_id, message in () if replay is None else replay.events:
                await exchange.write(sse_event(message, event_id), more=True)
            await self._relay(session, journal, wake, disconnected, exchange)
        finally:
            session.streams_open -= 1
            self._streams.discard(wake)
            session.close_stream()

    async def _relay(
        self,
        session: Session,
        journal: Journal,
        wake: asyncio.Event,
        disconnected: asyncio.Event,
        exchange: HttpExchange,
    ) -> None:
        keepalive = self._limits.stream_keepalive_seconds
        while True:
            wake.clear()
            for message in session.take():
                await exchange.write(await journal.event(message), more=True)
            if session.ended or disconnected.is_set() or self._pipeline.stopping:
                break
            if session.pending:
                continue  # posted while the last event was written
            try:
                await asyncio.wait_for(wake.wait(), keepalive)
            except TimeoutError:
                await exchange.write(KEEPALIVE, more=True)
        await exchange.write(b"", more=False)

    async def _follow(
        self,
        session: Session,
        stream: int,
        last: str,
        asked: Asked,
        disconnected: asyncio.Event,
    ) -> None:
        """A ``POST``'s stream resumed after the client's ``last`` event: what followed it,
        then each new event while its call runs, until its last event (or the session ends,
        the client leaves, the server stops, or the events it needs are gone)."""
        exchange = asked.exchange
        events = self._events
        watcher = asyncio.Event()
        session.watch(watcher)  # before the first replay below: no event after it is missed
        if isinstance(disconnected, Signal):
            disconnected.add_callback(watcher.set)
        self._streams.add(watcher)
        session.streams_open += 1
        keepalive = self._limits.stream_keepalive_seconds
        try:
            await exchange.start(200, [*SSE_HEADERS, *asked.extra])
            while True:
                watcher.clear()
                # The store tells whether the stream still runs with the same read as its
                # events: one that had ended then has all of them here, its last included.
                replay = await events.replay(session.id, last)
                if replay is None:
                    break  # dropped meanwhile: the client's next resume is refused whole
                for event_id, message in replay.events:
                    await exchange.write(sse_event(message, event_id), more=True)
                    last = event_id
                if not replay.running or session.ended or disconnected.is_set():
                    break
                if self._pipeline.stopping:
                    break
                try:
                    await asyncio.wait_for(watcher.wait(), keepalive)
                except TimeoutError:
                    await exchange.write(KEEPALIVE, more=True)
            await exchange.write(b"", more=False)
        finally:
            session.streams_open -= 1
            self._streams.discard(watcher)
            session.unwatch(watcher)

    async def _session(self, asked: Asked) -> Session | None:
        """The admitted client's session, or ``None`` once the refusal is written."""
        runtime, fields, request, exchange, extra = asked
        pipeline = self._pipeline
        revision: Revision | None = None
        try:
            conversation = await pipeline.find(fields)
            version = fields.get(PROTOCOL_VERSION_HEADER)
            served = runtime.sessions
            if version is not None:
                revision = select_handshake(version, served)
            else:
                revision = conversation.revision or newest(served)
            decision = await pipeline.admit(runtime, revision, "", False, request)
            if isinstance(decision, Rejected):
                await respond(exchange, decision.status, None, [*extra, *wire_headers(decision)])
                return None
            return await pipeline.bound(conversation, runtime, revision, decision)
        except ProtocolError as error:
            status, written = wire_error(error, revision)
            await respond(exchange, status, error_message(None, written), extra)
            return None
