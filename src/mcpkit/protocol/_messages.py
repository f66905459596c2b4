"""Every JSON-RPC message the server writes (docs/design/server.md §1.2).

One codec and one shape: results, errors and notifications are written here with
:func:`mcpkit.json.encode` and nowhere else, so the member order, the compact spelling and the
output limits are the same on every transport.  Results and notifications count against
``limits`` whole, envelope included (one complete response), and raise
:class:`OutputError` when they do not fit.  Error messages never fail: they are the server's
last word on a request, so whatever goes wrong while writing one degrades to a smaller message
instead of raising.
"""

from __future__ import annotations

import re
from typing import Final

from mcpkit.errors import ProtocolError
from mcpkit.json import JsonObject, encode, from_python
from mcpkit.limits import DEFAULT_LIMITS, Limits

__all__ = [
    "error_message",
    "error_object",
    "notification_message",
    "raw_notification_message",
    "raw_result_message",
    "result_message",
    "sse_event",
]

_ID_HEAD: Final = b'{"jsonrpc":"2.0","id":'
_RESULT_MEMBER: Final = b',"result":'
_ERROR_MEMBER: Final = b',"error":'
_NO_ID_ERROR_HEAD: Final = b'{"jsonrpc":"2.0","error":'
_SSE_HEAD: Final = b"event: message\ndata: "
_SSE_TAIL: Final = b"\n\n"
# The last resort when even a fixed error object cannot be written (a broken subclass).
_INTERNAL_ERROR: Final = b'{"code":-32603,"message":"Internal error"}'
# An id was read from a request body under the configured limits, which never exceed these,
# so an id that decoded can always be written again, whatever the server's limits are.
_WIDEST: Final = 16 * 1024 * 1024
_ID_LIMITS: Final = Limits(
    max_response_bytes=_WIDEST, max_string_units=_WIDEST, max_token_units=_WIDEST
)


_EVENT_ID: Final = re.compile(r"[!-~]{1,256}")


def result_message(id: str | int, result: JsonObject, *, limits: Limits = DEFAULT_LIMITS) -> bytes:
    """``{"jsonrpc":"2.0","id":…,"result":…}``; raises ``OutputError`` past ``limits``."""
    return encode({"jsonrpc": "2.0", "id": id, "result": result}, limits=limits)


def raw_result_message(id: str | int, result: bytes) -> bytes:
    """The same around a result encoded ahead of time (catalog pages), without re-encoding it."""
    return _ID_HEAD + encode(id, limits=_ID_LIMITS) + _RESULT_MEMBER + result + b"}"


def error_message(id: str | int | None, error: ProtocolError) -> bytes:
    """``{"jsonrpc":"2.0","id":…,"error":{…}}``; the ``id`` member is left out when ``None``.

    Never raises: an ``id`` that cannot be written is left out (as an unreadable one is), and
    ``data`` that cannot be written is dropped, keeping the fixed code and message.
    """
    return _error_head(id) + _error_object(error) + b"}"


def notification_message(
    method: str, params: JsonObject, *, limits: Limits = DEFAULT_LIMITS
) -> bytes:
    """``{"jsonrpc":"2.0","method":…,"params":…}``; raises ``OutputError`` past ``limits``."""
    return encode({"jsonrpc": "2.0", "method": method, "params": params}, limits=limits)


def raw_notification_message(method: str, params: bytes) -> bytes:
    """The same around params encoded ahead of time (a stored task's payload), as written."""
    head = encode({"jsonrpc": "2.0", "method": method})
    return head[:-1] + b',"params":' + params + b"}"


def request_message(
    id: str | int, method: str, params: JsonObject, *, limits: Limits = DEFAULT_LIMITS
) -> bytes:
    """``{"jsonrpc":"2.0","id":…,"method":…,"params":…}``: a request of the server's to the
    client (2025 input); raises ``OutputError`` past ``limits``."""
    return encode({"jsonrpc": "2.0", "id": id, "method": method, "params": params}, limits=limits)


def sse_event(message: bytes, event_id: str | None = None) -> bytes:
    """One Server-Sent Events ``message`` event carrying one written message, with its
    ``id:`` line when ``event_id`` is given (a resumable 2025 session stream).

    The codec never writes a line break, so the message fits one ``data:`` line; anything
    else would split or inject events, and is refused, as is an id that is not 1 to 256
    visible ASCII characters.
    """
    if b"\n" in message or b"\r" in message:
        raise ValueError("sse_event: a message must not contain a line break")
    if event_id is None:
        return _SSE_HEAD + message + _SSE_TAIL
    if _EVENT_ID.fullmatch(event_id) is None:
        raise ValueError("sse_event: an event id must be 1 to 256 visible ASCII characters")
    return b"id: " + event_id.encode("ascii") + b"\n" + _SSE_HEAD + message + _SSE_TAIL


def _error_head(id: str | int | None) -> bytes:
    """Everything before the error object: with the ``id`` when it can be written."""
    if id is None:
        return _NO_ID_ERROR_HEAD
    try:
        return _ID_HEAD + encode(id, limits=_ID_LIMITS) + _ERROR_MEMBER
    except Exception:  # never fails (docs/design/server.md §1.2): leave the id out
        return _NO_ID_ERROR_HEAD


def error_object(error: ProtocolError) -> bytes:
    """The encoded error object alone (a failed task keeps it); never raises."""
    return _error_object(error)


def _error_object(error: ProtocolError) -> bytes:
    """``{"code","message","data"?}`` from the error's class values and framework data."""
    members: dict[str, object] = {"code": error.jsonrpc_code, "message": error.message}
    if error.data is not None:
        try:
            return encode({**members, "data": from_python(error.data)})
        except Exception:  # never fails: write the error without data
            pass
    try:
        return encode(members)
    except Exception:  # never fails
        return _INTERNAL_ERROR
