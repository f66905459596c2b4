"""Exceptions to wire errors: the one place that decides the JSON-RPC error and the HTTP
status a failure gets.

Before the revision is known (``revision=None``) and on 2026-07-28 every error keeps its own
status (``InvalidParams`` 400, ``MethodNotFound`` 404, ``InternalError`` 500, ...).  On the 2025
revisions an error about the operation is an ordinary JSON-RPC exchange in HTTP 200; only
capacity, deadline, rate-limit, session and protocol-version failures keep their status
there.

Development mode (``Server(debug=True)``) adds one thing: a handler's unexpected exception,
carried as ``HandlerFailure``, is written with its type's name in ``data.exceptionType``.
Never its message or arguments: they may hold what the client sent.
"""

from __future__ import annotations

from typing import Final

from mcpkit.errors import (
    DeadlineExceeded,
    HeaderMismatch,
    InsufficientScope,
    InternalError,
    InvalidParams,
    Overloaded,
    ProtocolError,
    RateLimited,
    ResourceNotFound,
    SessionNotFound,
    SessionRequired,
    SessionStoreUnavailable,
    Unauthorized,
    UnsupportedProtocolVersion,
)
from mcpkit.model import Revision
from mcpkit.protocol._revisions import profile

__all__ = ["HandlerFailure", "wire_error"]

_KEEP_STATUS_ON_HANDSHAKE: Final = (
    DeadlineExceeded,
    HeaderMismatch,
    Overloaded,
    RateLimited,
    SessionNotFound,
    SessionRequired,
    SessionStoreUnavailable,  # as Overloaded: the node cannot serve it now, another may
    UnsupportedProtocolVersion,
    Unauthorized,  # OAuth's 401 and 403 are HTTP answers on every revision
    InsufficientScope,
)


class HandlerFailure(InternalError):
    """An application handler raised something that is not a ``ProtocolError``: the fixed
    -32603, remembering the exception's type name for development mode."""

    def __init__(self, exception_type: str) -> None:
        super().__init__()
        self.exception_type = exception_type


def wire_error(
    error: ProtocolError, revision: Revision | None, *, debug: bool = False
) -> tuple[int, ProtocolError]:
    """The HTTP status and the error to write for ``error`` on ``revision``.

    A missing resource is -32002 on 2025 and -32602 on 2026-07-28.  ``debug`` (development
    mode) writes a ``HandlerFailure`` with ``data: {"exceptionType": name}``.
    """
    if debug and isinstance(error, HandlerFailure):
        shown = InternalError()
        shown.data = {"exceptionType": error.exception_type}
        error = shown
    if (
        isinstance(error, ResourceNotFound)
        and revision is not None
        and profile(revision).resource_not_found_code != error.jsonrpc_code
    ):
        mapped = InvalidParams()
        mapped.data = error.data
        error = mapped
    if revision is None or profile(revision).stateless:
        return error.http_status, error
    if isinstance(error, _KEEP_STATUS_ON_HANDSHAKE):
        return error.http_status, error
    return 200, error
