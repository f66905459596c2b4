"""The endpoint rule of MCP Apps: a tool's App names a ``ui://`` resource of the same endpoint.

The extension says the resource MUST exist on the server, and a host fetches it with
``resources/read`` before it can show anything: a dangling link is a broken App, found when
the endpoint is built rather than by a user.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from mcpkit.model._endpoint_checks import Site, describe, show, uri_of
from mcpkit.model._resources import ResourceRegistration
from mcpkit.model._tools import ToolRegistration

__all__ = ["check_app_links"]


def check_app_links(
    site: Site, tools: Iterable[ToolRegistration], exact: Sequence[ResourceRegistration]
) -> None:
    """Every App tool's ``resource_uri`` is an exact resource here declared with ``app=``."""
    apps = {uri_of(resource) for resource in exact if resource.app is not None}
    for tool in tools:
        uri = None if tool.app is None else tool.app.resource_uri
        if uri is not None and uri not in apps:
            raise site.fail(
                f"{describe(tool)} shows the App {show(uri)}, which is no "
                "resource of this endpoint declared with app=AppResource(...); register it"
            )
