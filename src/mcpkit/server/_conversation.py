"""What a transport remembers between one client's messages.

A ``Conversation`` is handed to the pipeline with every message.  A stdio process is one client,
so it keeps one for the process: the revision ``initialize`` negotiated and the level
``logging/setLevel`` chose.  Stateless HTTP remembers nothing: every request gets the shared
``STATELESS`` conversation, on which remembering does nothing.  A 2025 session is a
conversation kept under its ``Mcp-Session-Id``.

A conversation that outlives a request can also carry the server's own requests to the client
(2025 input: ``_exchange``); the client's answers come back through ``answered``.
"""

from __future__ import annotations

from typing import Final

from mcpkit.json import JsonObject, JsonValue
from mcpkit.limits import Limits
from mcpkit.model import Revision
from mcpkit.server._exchange import Exchange

__all__ = ["HANDSHAKE_LOG_LEVEL", "STATELESS", "Conversation"]

HANDSHAKE_LOG_LEVEL: Final = "info"
"""The minimum level of a handshake revision's log messages until the client sets one."""


class Conversation:
    """One client's remembered state; see the module docstring."""

    __slots__ = ("_exchange", "log_level", "revision")

    # What ``initialize`` said about the client, where a conversation remembers it (a 2025
    # session); class-level, so a conversation that does not costs no storage.
    client_info: JsonObject | None = None
    client_capabilities: JsonObject | None = None

    def __init__(self) -> None:
        self.revision: Revision | None = None
        """The revision ``initialize`` negotiated: a later request that names none has it."""
        self.log_level = HANDSHAKE_LOG_LEVEL
        self._exchange: Exchange | None = None  # made by the first request for input

    def negotiated(self, revision: Revision) -> None:
        """``initialize`` succeeded on ``revision``."""
        self.revision = revision

    def set_log_level(self, level: str) -> None:
        """``logging/setLevel`` succeeded: ``level`` is a wire name."""
        self.log_level = level

    async def saved(self) -> None:
        """Its log level or subscriptions changed: a conversation kept elsewhere too (a
        session in a shared store) keeps the change there.  Here there is nothing to do."""

    def remember(self, client_info: JsonValue, capabilities: JsonValue) -> None:
        """What ``initialize`` said about the client; a conversation that keeps it stores it
        (the caller has bounded it).  Here it is forgotten."""

    def cancel(self, request_id: object) -> None:
        """``notifications/cancelled`` named ``request_id`` (anything the client sent): stop
        that request if this conversation is running it.  Here there is nothing to stop."""

    def exchange(self, limits: Limits) -> Exchange | None:
        """Where the server's requests to this client wait for their answers (made on first
        use, on the loop), or ``None`` when the server cannot send it any."""
        if self._exchange is None:
            first = self.first_request_id
            self._exchange = Exchange(limits.max_pending_client_requests, first=first)
        return self._exchange

    @property
    def first_request_id(self) -> int:
        """The id of the server's first request to this client (then counted up)."""
        return 1

    def answered(self, request_id: object, message: JsonObject) -> None:
        """The client's response ``message`` to the server's request ``request_id``; dropped
        when nothing with that id is waiting."""
        if self._exchange is not None:
            self._exchange.answered(request_id, message)

    def hang_up(self) -> None:
        """The conversation ended: every request still waiting for an answer fails."""
        if self._exchange is not None:
            self._exchange.close()


class _Stateless(Conversation):
    """Nothing is remembered: each request stands alone."""

    __slots__ = ()

    def negotiated(self, revision: Revision) -> None:
        pass

    def set_log_level(self, level: str) -> None:
        pass

    def exchange(self, limits: Limits) -> Exchange | None:
        return None  # each request stands alone: nothing can answer the server


STATELESS: Final[Conversation] = _Stateless()
