"""The stdio side of the engine: one JSON-RPC message per line, the same pipeline minus the
HTTP-only groups (routing, Host, Origin, media types, headers; spec brief §8).

A stdio process is one client.  2025 clients start with ``initialize``; the negotiated revision
is remembered for the process (the process is the session, spec brief §8), and 2026-07-28
requests name their revision in ``_meta`` on every request.  Requests run concurrently (the
transport gives each line its own task); ``notifications/cancelled`` cancels the named request,
which then writes nothing more.
"""

from __future__ import annotations

import asyncio
from typing import Any

from mcpkit.errors import Cancelled, ParseError, ProtocolError
from mcpkit.json import JsonObject, decode
from mcpkit.model import CancellationToken, Revision
from mcpkit.protocol import (
    MessageKind,
    error_message,
    parse_envelope,
    readable_id,
    wire_error,
)
from mcpkit.server._engine import Engine, Refused, Selection, _Answer
from mcpkit.server._http import Writer
from mcpkit.server._operations import LEGACY_LOG_LEVEL, Runtime, check_params
from mcpkit.server._policy import Admitted, Rejected

__all__ = ["StdioConnection"]


class StdioConnection:
    """One stdio client of one endpoint."""

    def __init__(self, engine: Engine, runtime: Runtime) -> None:
        self._engine = engine
        self._runtime = runtime
        self._legacy: Revision | None = None
        self._log_level = LEGACY_LOG_LEVEL  # ``logging/setLevel`` is remembered: one client
        self._inflight: dict[str | int, tuple[CancellationToken, asyncio.Event]] = {}

    async def reject_oversized(self, write: Writer) -> None:
        await write(error_message(None, ParseError()))

    async def shutdown(self) -> None:
        for token, cancelled in list(self._inflight.values()):
            token.cancel()
            cancelled.set()

    def _cancel(self, params: JsonObject | None) -> None:
        target: Any = None if params is None else params.get("requestId")
        if isinstance(target, bool) or not isinstance(target, (str, int)):
            return
        found = self._inflight.get(target)
        if found is not None:
            token, cancelled = found
            token.cancel()
            cancelled.set()

    async def receive(self, line: bytes, write: Writer) -> None:
        engine = self._engine
        request_id: str | int | None = None
        revision: Revision | None = None
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
            selection = engine.select(self._runtime, envelope, None, legacy_default=self._legacy)
            revision = selection.revision
            params = envelope.params or JsonObject()
            check_params(revision, envelope.method or "", params)
            if envelope.method == "initialize":
                self._legacy = revision
            decision = await engine._admit(self._runtime, selection, None)
            if isinstance(decision, Rejected):
                if decision.error is not None:
                    await write(error_message(request_id, decision.error))
                return
            await self._dispatch(selection, request_id, decision, write)
            if envelope.method == "logging/setLevel":
                self._log_level = str(params["level"])  # checked by check_params
        except (_Answer, Cancelled):
            return
        except Refused as refused:
            _, written = wire_error(refused.error, refused.revision)
            await write(error_message(request_id, written))
        except ProtocolError as error:
            _, written = wire_error(error, revision)
            await write(error_message(request_id, written))

    async def _dispatch(
        self, selection: Selection, request_id: str | int, admitted: Admitted, write: Writer
    ) -> None:
        """Run one admitted request; its notifications and then its answer are written, and
        nothing at all once it has been cancelled (spec brief §3.8)."""
        loop = asyncio.get_running_loop()
        pending: set[asyncio.Future[None]] = set()
        cancelled = asyncio.Event()

        def notify(message: bytes) -> None:
            def start() -> None:
                if cancelled.is_set():
                    return
                task = asyncio.ensure_future(write(message))
                pending.add(task)
                task.add_done_callback(pending.discard)

            loop.call_soon_threadsafe(start)

        engine = self._engine
        call = engine._call(
            self._runtime, selection, None, admitted, notify, cancelled, self._log_level
        )
        self._inflight[request_id] = (call.token, cancelled)
        try:
            message = await engine.operations.dispatch(call)
        finally:
            if self._inflight.get(request_id, (None,))[0] is call.token:
                del self._inflight[request_id]
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
        if not cancelled.is_set():
            await write(message)
