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

from mcpkit.errors import ProtocolError
from mcpkit.limits import Limits
from mcpkit.model import Revision
from mcpkit.protocol import (
    HeaderFields,
    accepts,
    error_message,
    select_handshake,
    sse_event,
    wire_error,
)
from mcpkit.server._call import Runtime
from mcpkit.server._http import HttpExchange, HttpRequest, Signal
from mcpkit.server._pipeline import Pipeline, newest, wire_headers
from mcpkit.server._policy import Rejected
from mcpkit.server._sessions import Session
from mcpkit.server._stream import SSE_HEADERS, respond

__all__ = ["Asked", "SessionRoutes"]

_KEEPALIVE: Final = b": keep-alive\n\n"


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
        self._streams: set[asyncio.Event] = set()

    def wake_all(self) -> None:
        """The server is stopping: every open stream ends after what is queued."""
        for wake in self._streams:
            wake.set()

    async def delete(self, asked: Asked) -> None:
        """End the admitted client's session: 204."""
        session = await self._session(asked)
        if session is not None:
            self._pipeline.end(session)
            await respond(asked.exchange, 204, None, asked.extra)

    async def stream(self, asked: Asked, disconnected: asyncio.Event) -> None:
        """The session's stream: its queued notifications as SSE events, a keep-alive comment
        after ``stream_keepalive_seconds`` without one, until the session ends, the client
        leaves or the server stops.  One per session: a second is 409; a client that does not
        accept ``text/event-stream`` gets 406."""
        exchange, extra = asked.exchange, asked.extra
        if not accepts(asked.fields.get("accept"), json=False):
            await respond(exchange, 406, None, extra)
            return
        session = await self._session(asked)
        if session is None:
            return
        wake = asyncio.Event()
        if not session.open_stream(wake):
            await respond(exchange, 409, None, extra)
            return
        if isinstance(disconnected, Signal):
            disconnected.add_callback(wake.set)
        self._streams.add(wake)
        try:
            await exchange.start(200, [*SSE_HEADERS, *extra])
            await self._relay(session, wake, disconnected, exchange)
        finally:
            self._streams.discard(wake)
            session.close_stream()

    async def _relay(
        self,
        session: Session,
        wake: asyncio.Event,
        disconnected: asyncio.Event,
        exchange: HttpExchange,
    ) -> None:
        keepalive = self._limits.stream_keepalive_seconds
        while True:
            wake.clear()
            for message in session.take():
                await exchange.write(sse_event(message), more=True)
            if session.ended or disconnected.is_set() or self._pipeline.stopping:
                break
            if session.pending:
                continue  # posted while the last event was written
            try:
                await asyncio.wait_for(wake.wait(), keepalive)
            except TimeoutError:
                await exchange.write(_KEEPALIVE, more=True)
        await exchange.write(b"", more=False)

    async def _session(self, asked: Asked) -> Session | None:
        """The admitted client's session, or ``None`` once the refusal is written."""
        runtime, fields, request, exchange, extra = asked
        pipeline = self._pipeline
        revision: Revision | None = None
        try:
            conversation = pipeline.find(fields)
            version = fields.get("mcp-protocol-version")
            served = runtime.sessions
            if version is not None:
                revision = select_handshake(version, served)
            else:
                revision = conversation.revision or newest(served)
            decision = await pipeline.admit(runtime, revision, "", False, request)
            if isinstance(decision, Rejected):
                await respond(exchange, decision.status, None, [*extra, *wire_headers(decision)])
                return None
            return pipeline.bound(conversation, runtime, revision, decision)
        except ProtocolError as error:
            status, written = wire_error(error, revision)
            await respond(exchange, status, error_message(None, written), extra)
            return None
