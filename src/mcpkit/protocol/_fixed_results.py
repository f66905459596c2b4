"""The results the framework writes itself: ``server/discover``, ``initialize``, empty acks.

All are built from the endpoint, which never changes, so the server builds each once per
(endpoint, revision) and keeps the bytes.
"""

from __future__ import annotations

from mcpkit.json import JsonObject
from mcpkit.model import CachePolicy, Endpoint, Revision
from mcpkit.protocol._projection import SERVER_INFO_KEY, implementation_info
from mcpkit.protocol._revisions import profile
from mcpkit.protocol._selection import supported

__all__ = ["discover_result", "empty_result", "initialize_result", "server_capabilities"]


def server_capabilities(endpoint: Endpoint, revision: Revision) -> JsonObject:
    """The endpoint's capabilities on ``revision`` plus the server's own ``logging``: request
    log messages (``RequestLogger``) exist on every revision."""
    capabilities = dict(endpoint.capabilities(revision))
    capabilities["logging"] = JsonObject()
    return JsonObject(capabilities)


def discover_result(endpoint: Endpoint, revision: Revision, cache: CachePolicy) -> JsonObject:
    """``server/discover`` (2026-07-28): versions, capabilities,
    instructions, cache hints and ``_meta.serverInfo``; no top-level ``serverInfo``."""
    body: dict[str, object] = {
        "resultType": "complete",
        "supportedVersions": list(supported(endpoint.revisions)),
        "capabilities": server_capabilities(endpoint, revision),
    }
    if endpoint.instructions:
        body["instructions"] = endpoint.instructions
    body.update(cache.to_json())
    body["_meta"] = {SERVER_INFO_KEY: implementation_info(endpoint.implementation, revision)}
    return JsonObject(body)


def initialize_result(endpoint: Endpoint, revision: Revision) -> JsonObject:
    """``initialize`` (2025): the negotiated version, capabilities, ``serverInfo`` and the
    endpoint's instructions."""
    body: dict[str, object] = {
        "protocolVersion": revision.wire,
        "capabilities": server_capabilities(endpoint, revision),
        "serverInfo": implementation_info(endpoint.implementation, revision),
    }
    if endpoint.instructions:
        body["instructions"] = endpoint.instructions
    return JsonObject(body)


def empty_result(revision: Revision) -> JsonObject:
    """An empty acknowledgement: ``{}``, or ``{"resultType": "complete"}`` on 2026-07-28."""
    return JsonObject({"resultType": "complete"} if profile(revision).result_type else {})
