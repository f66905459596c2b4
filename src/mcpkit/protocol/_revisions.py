"""The revision table: what each MCP revision can carry on the wire.

This is the one place that knows how 2025-06-18, 2025-11-25 and 2026-07-28 differ.  Every
other module asks ``profile(revision).<flag>`` and never compares revisions or wire strings, so
adding a revision, or correcting one difference, is an edit to one row of ``_TABLE``.

The rows follow the official schemas of each revision and mcpkit's rules for serving the 2025
revisions.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Final

from mcpkit.model import Revision

__all__ = ["CatalogOrder", "RevisionProfile", "profile"]


class CatalogOrder(enum.Enum):
    """How a static catalog (``tools/list`` and the other three lists) is ordered."""

    REGISTRATION = "registration"
    """The endpoint's registration order: the stateless revision."""
    CANONICAL = "canonical"
    """Code-point order of the entry's key, a tool or prompt name, a resource URI or a template
    string: the 2025 revisions."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RevisionProfile:
    """The wire features of one revision, as flags the protocol layer branches on."""

    revision: Revision
    stateless: bool
    """No handshake: every request names its revision and client capabilities in ``_meta`` and
    carries the ``Mcp-Method`` / ``Mcp-Name`` headers; errors keep their own HTTP status
    (2026-07-28).  The 2025 revisions negotiate with ``initialize`` and answer every error after
    the revision is known with HTTP 200."""
    icons: bool
    """``icons`` exist on tools, prompts, resources, templates and resource links; 2025-06-18 has
    none."""
    tool_title: bool
    """``Tool.title`` exists (all three revisions)."""
    tool_output_schema: bool
    """``Tool.outputSchema`` exists (all three; root ``type: object`` on 2025, enforced when the
    tool is registered)."""
    structured_content: bool
    """``CallToolResult.structuredContent`` exists (all three)."""
    structured_content_object_only: bool
    """Structured content must be a JSON object: the 2025 revisions."""
    result_type: bool
    """Every result carries ``resultType`` (2026-07-28)."""
    cache_hints: bool
    """Cacheable results (the four lists, ``resources/read``, discovery) carry ``ttlMs`` and
    ``cacheScope`` (2026-07-28)."""
    server_info_meta: bool
    """Results carry ``_meta["io.modelcontextprotocol/serverInfo"]`` (2026-07-28); the 2025
    revisions report the server once, in ``initialize``."""
    full_implementation: bool
    """``Implementation`` has ``description``, ``websiteUrl`` and ``icons`` (2025-11-25 on);
    2025-06-18 knows only ``name``, ``title`` and ``version``."""
    catalog_order: CatalogOrder
    resource_not_found_code: int
    """The JSON-RPC code of ``resources/read`` for an unknown URI: -32002 on 2025, -32602 on
    2026-07-28."""
    invalid_arguments_as_tool_error: bool
    """Arguments that fail the tool's input schema or binding are an ``isError`` tool result
    (2025-11-25 on, SEP-1303) rather than JSON-RPC -32602 (2025-06-18)."""
    elicitation_mode: bool
    """``elicitation/create`` params carry ``mode`` (``form`` or ``url``; 2025-11-25 on);
    2025-06-18 knows form elicitation only, without ``mode``."""
    priming_event: bool
    """A session's event stream starts with a priming event (its id, ``retry:`` and empty
    data) so a client can resume it from the start (2025-11-25, SEP-1699); 2025-06-18 has no
    such event and 2026-07-28 no resumable streams."""
    apps: bool
    """MCP Apps exist (2026-07-28): a tool result or resource read may carry App HTML
    (``text/html;profile=mcp-app``); on a 2025 revision such content is a contract failure."""


_JUNE_2025: Final = RevisionProfile(
    stateless=False,
    revision=Revision.V2025_06_18,
    icons=False,
    tool_title=True,
    tool_output_schema=True,
    structured_content=True,
    structured_content_object_only=True,
    result_type=False,
    cache_hints=False,
    server_info_meta=False,
    full_implementation=False,
    catalog_order=CatalogOrder.CANONICAL,
    resource_not_found_code=-32002,
    invalid_arguments_as_tool_error=False,
    elicitation_mode=False,
    priming_event=False,
    apps=False,
)
# Each later row is the row before it plus what its revision changed.
_NOVEMBER_2025: Final = replace(
    _JUNE_2025,
    revision=Revision.V2025_11_25,
    icons=True,
    full_implementation=True,
    invalid_arguments_as_tool_error=True,
    elicitation_mode=True,
    priming_event=True,
)
_JULY_2026: Final = replace(
    _NOVEMBER_2025,
    revision=Revision.V2026_07_28,
    stateless=True,
    structured_content_object_only=False,
    result_type=True,
    cache_hints=True,
    server_info_meta=True,
    catalog_order=CatalogOrder.REGISTRATION,
    resource_not_found_code=-32602,
    priming_event=False,
    apps=True,
)

_TABLE: Final = MappingProxyType(
    {row.revision: row for row in (_JUNE_2025, _NOVEMBER_2025, _JULY_2026)}
)


profile: Final[Callable[[Revision], RevisionProfile]] = _TABLE.__getitem__
"""The profile of a revision; every ``Revision`` has exactly one.  The table's own lookup,
called several times per request: a C call, with no Python frame."""
