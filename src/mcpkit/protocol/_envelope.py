"""The JSON-RPC 2.0 envelope of one decoded message (docs/design/server.md §1.1).

MCP narrows JSON-RPC: one message per HTTP body or stdio line (no batches), ids are strings or
integers, ``params`` is an object.  :func:`parse_envelope` checks only that outer shape and
sorts the message into a request, a notification or a response; what ``params`` must hold is
each method's own business.  Every refusal is the one fixed :class:`InvalidRequest` (-32600),
so nothing the client sent reaches the error.  Members outside JSON-RPC are refused rather
than ignored (anything unrecognised is refused, not guessed at).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final, TypeGuard

from mcpkit.errors import InvalidRequest
from mcpkit.json import JsonObject, JsonValue
from mcpkit.model._checks import unchecked_factory

__all__ = ["Envelope", "MessageKind", "parse_envelope", "readable_id"]

_REQUEST_MEMBERS: Final = frozenset({"jsonrpc", "id", "method", "params"})
_RESPONSE_MEMBERS: Final = frozenset({"jsonrpc", "id", "result", "error"})
_ABSENT: Final = object()  # ``get``'s default: tells an absent member from a JSON null


class MessageKind(enum.Enum):
    """What a message is, decided by which members it has."""

    REQUEST = "request"
    """``method`` and ``id``: the sender waits for exactly one response."""
    NOTIFICATION = "notification"
    """``method`` without ``id``: no response is ever sent."""
    RESPONSE = "response"
    """``result`` or ``error``: a reply the client sent; the server sends no requests, so it
    is accepted and ignored."""


@dataclass(frozen=True, slots=True)
class Envelope:
    """The checked outer shape of one message.

    ``id`` is ``None`` for a notification and may be ``None`` for a response; ``method`` is
    ``None`` only for a response; ``params`` is ``None`` when the member is absent.
    """

    kind: MessageKind
    id: str | int | None
    method: str | None
    params: JsonObject | None


_new_envelope: Final = unchecked_factory(Envelope)
"""``Envelope``'s fields stored as given, for the values ``parse_envelope`` has just checked:
faster than the frozen dataclass ``__init__`` (an ``object.__setattr__`` per field)."""


def parse_envelope(value: JsonValue) -> Envelope:
    """Sort a decoded message by kind after checking its envelope; raise ``InvalidRequest``."""
    if not isinstance(value, JsonObject):
        raise InvalidRequest()  # a batch (JsonArray) or a scalar
    jsonrpc = value.get("jsonrpc")
    if type(jsonrpc) is not str or jsonrpc != "2.0":
        raise InvalidRequest()
    # A request or a notification, checked inline: one per message, on every message's path.
    method = value.get("method", _ABSENT)
    if method is _ABSENT:
        return _response(value)
    if not isinstance(method, str) or not method:
        raise InvalidRequest()
    params = value.get("params", _ABSENT)
    if params is _ABSENT:
        params = None
    elif not isinstance(params, JsonObject):
        raise InvalidRequest()  # null, an array (by-position params) or a scalar
    if not _REQUEST_MEMBERS.issuperset(value):
        raise InvalidRequest()
    request_id = value.get("id", _ABSENT)
    if request_id is _ABSENT:
        return _new_envelope(MessageKind.NOTIFICATION, None, method, params)
    # The exact types first: the fallback decides only for a subclass or a refusal.
    if (
        type(request_id) is not int
        and type(request_id) is not str
        and not _is_request_id(request_id)
    ):
        raise InvalidRequest()  # null, a boolean, a fraction or a container
    return _new_envelope(MessageKind.REQUEST, request_id, method, params)


def readable_id(value: JsonValue) -> str | int | None:
    """The ``id`` of a refused message when it can still be read, so its error can echo it."""
    if not isinstance(value, JsonObject):
        return None
    candidate = value.get("id")
    return candidate if _is_request_id(candidate) else None


def _response(value: JsonObject) -> Envelope:
    if "id" not in value or ("result" in value) == ("error" in value):
        raise InvalidRequest()
    if not _RESPONSE_MEMBERS.issuperset(value):
        raise InvalidRequest()
    response_id = value["id"]
    if response_id is None or _is_request_id(response_id):
        return Envelope(MessageKind.RESPONSE, response_id, None, None)
    raise InvalidRequest()


def _is_request_id(value: object) -> TypeGuard[str | int]:
    """A JSON-RPC id as MCP allows it: a string or an integer, never a boolean."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))
