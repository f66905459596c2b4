"""Which revision serves a request.

One URL may serve several revisions.  A request takes the *stateless* path when its
``MCP-Protocol-Version`` header or its ``_meta`` protocol version is present and is not a 2025
revision: it then self-describes on every request, and disagreements are refused in the spec's
order (a missing body version is -32602, header vs body -32020, an unknown version -32022).
Everything else takes the *handshake* path: ``initialize`` negotiates, later requests name the
negotiated revision in the header.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

from mcpkit.errors import HeaderMismatch, InvalidParams, UnsupportedProtocolVersion
from mcpkit.model import Revision
from mcpkit.protocol._request_meta import RequestMeta
from mcpkit.protocol._revisions import profile
from mcpkit.protocol._routing import PROTOCOL_VERSION_HEADER

__all__ = [
    "is_stateless_request",
    "is_stateless_version",
    "negotiate",
    "select_handshake",
    "select_stateless",
    "supported",
]

_BY_WIRE: Final = {revision.wire: revision for revision in Revision}
_HANDSHAKE_WIRES: Final = frozenset(r.wire for r in Revision if not profile(r).stateless)
_STATELESS_WIRES: Final = frozenset(r.wire for r in Revision if profile(r).stateless)
_STATELESS_BY_WIRE: Final = {
    wire: revision for wire, revision in _BY_WIRE.items() if wire in _STATELESS_WIRES
}


def supported(served: Collection[Revision]) -> tuple[str, ...]:
    """The served revisions' wire strings, newest first (``data.supported`` of -32022)."""
    return tuple(sorted((revision.wire for revision in served), reverse=True))


def is_stateless_request(header_version: str | None, meta: RequestMeta) -> bool:
    """Whether the request takes the stateless path: its ``_meta`` names a protocol version
    that is not a 2025 revision (an unknown one then gets -32020 or -32022 in the stateless
    order), or its ``MCP-Protocol-Version`` header names the stateless revision.  A request
    with no ``_meta`` version and any other header is a 2025 request: an unknown header then
    gets the handshake path's 400 / -32022."""
    return is_stateless_version(header_version, meta.protocol_version)


def is_stateless_version(header_version: str | None, body_version: str | None) -> bool:
    """:func:`is_stateless_request` from the ``_meta`` protocol version alone (a string, or
    ``None``), for a caller that has not shape-checked the rest of ``_meta`` yet."""
    if body_version is not None and body_version not in _HANDSHAKE_WIRES:
        return True
    return header_version in _STATELESS_WIRES


def select_stateless(
    header_version: str | None, meta: RequestMeta, served: Collection[Revision]
) -> Revision:
    """The revision of a stateless request, or the first refusal in the spec's order."""
    body = meta.protocol_version
    if body is None or meta.client_capabilities is None:
        raise InvalidParams()  # missing required _meta comes first
    if header_version is None or header_version != body:
        raise HeaderMismatch(PROTOCOL_VERSION_HEADER)
    revision = _STATELESS_BY_WIRE.get(body)  # only stateless revisions: no profile() per request
    if revision is None or revision not in served:
        raise UnsupportedProtocolVersion(supported(served), body)
    return revision


def _newest_handshake(served: Collection[Revision]) -> Revision | None:
    handshake = [revision for revision in served if not profile(revision).stateless]
    return max(handshake, key=lambda revision: revision.wire) if handshake else None


def select_handshake(header_version: str | None, served: Collection[Revision]) -> Revision:
    """A later handshake request's revision: the header's, or the newest served 2025 revision
    when the header is absent (stateless: no session remembers the negotiated one)."""
    if header_version is None:
        newest = _newest_handshake(served)
        if newest is None:
            raise UnsupportedProtocolVersion(supported(served))
        return newest
    revision = _BY_WIRE.get(header_version)
    if revision is None or revision not in served or profile(revision).stateless:
        raise UnsupportedProtocolVersion(supported(served), header_version)
    return revision


def negotiate(requested: object, served: Collection[Revision]) -> Revision:
    """``initialize``: the requested 2025 revision when it is served, else the newest served
    2025 revision (the client decides whether it can speak it)."""
    if isinstance(requested, str):
        revision = _BY_WIRE.get(requested)
        if revision is not None and revision in served and not profile(revision).stateless:
            return revision
    newest = _newest_handshake(served)
    if newest is None:
        raise UnsupportedProtocolVersion(supported(served), requested)
    return newest
