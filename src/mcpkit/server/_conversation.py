"""What a transport remembers between one client's messages.

A ``Conversation`` is handed to the pipeline with every message.  A stdio process is one client,
so it keeps one for the process: the revision ``initialize`` negotiated and the level
``logging/setLevel`` chose.  Stateless HTTP remembers nothing: every request gets the shared
``STATELESS`` conversation, on which remembering does nothing.  A 2025 session is a
conversation kept under its ``Mcp-Session-Id``.
"""

from __future__ import annotations

from typing import Final

from mcpkit.json import JsonObject
from mcpkit.model import Revision

__all__ = ["HANDSHAKE_LOG_LEVEL", "STATELESS", "Conversation"]

HANDSHAKE_LOG_LEVEL: Final = "info"
"""The minimum level of a handshake revision's log messages until the client sets one."""


class Conversation:
    """One client's remembered state; see the module docstring."""

    __slots__ = ("log_level", "revision")

    # What ``initialize`` said about the client, where a conversation remembers it (a 2025
    # session); class-level, so a conversation that does not costs no storage.
    client_info: JsonObject | None = None
    client_capabilities: JsonObject | None = None

    def __init__(self) -> None:
        self.revision: Revision | None = None
        """The revision ``initialize`` negotiated: a later request that names none has it."""
        self.log_level = HANDSHAKE_LOG_LEVEL

    def negotiated(self, revision: Revision) -> None:
        """``initialize`` succeeded on ``revision``."""
        self.revision = revision

    def set_log_level(self, level: str) -> None:
        """``logging/setLevel`` succeeded: ``level`` is a wire name."""
        self.log_level = level

    def cancel(self, request_id: object) -> None:
        """``notifications/cancelled`` named ``request_id`` (anything the client sent): stop
        that request if this conversation is running it.  Here there is nothing to stop."""


class _Stateless(Conversation):
    """Nothing is remembered: each request stands alone."""

    __slots__ = ()

    def negotiated(self, revision: Revision) -> None:
        pass

    def set_log_level(self, level: str) -> None:
        pass


STATELESS: Final[Conversation] = _Stateless()
