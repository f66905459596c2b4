"""The protocol layer (layer 4, beside ``mcpkit.model``): the revision table, per-revision
projection of model values to the wire, and the static catalog pages.

Everything here is a pure function or an immutable value over bytes and model values
(DESIGN.md §1.5): no event loop, no socket.  Revision differences live only in
``profile(revision)`` (DESIGN.md §4).
"""

from mcpkit.protocol._catalog import DEFAULT_PAGE_SIZE as DEFAULT_PAGE_SIZE
from mcpkit.protocol._catalog import Catalog as Catalog
from mcpkit.protocol._catalog import ListKind as ListKind
from mcpkit.protocol._mirroring import check_mirrored_headers as check_mirrored_headers
from mcpkit.protocol._projection import SERVER_INFO_KEY as SERVER_INFO_KEY
from mcpkit.protocol._projection import call_tool_result as call_tool_result
from mcpkit.protocol._projection import get_prompt_result as get_prompt_result
from mcpkit.protocol._projection import implementation_info as implementation_info
from mcpkit.protocol._projection import prompt_definition as prompt_definition
from mcpkit.protocol._projection import read_resource_result as read_resource_result
from mcpkit.protocol._projection import resource_definition as resource_definition
from mcpkit.protocol._projection import tool_definition as tool_definition
from mcpkit.protocol._revisions import CatalogOrder as CatalogOrder
from mcpkit.protocol._revisions import RevisionProfile as RevisionProfile
from mcpkit.protocol._revisions import profile as profile

__all__ = (
    "DEFAULT_PAGE_SIZE",
    "SERVER_INFO_KEY",
    "Catalog",
    "CatalogOrder",
    "ListKind",
    "RevisionProfile",
    "call_tool_result",
    "check_mirrored_headers",
    "get_prompt_result",
    "implementation_info",
    "profile",
    "prompt_definition",
    "read_resource_result",
    "resource_definition",
    "tool_definition",
)
