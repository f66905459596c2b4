"""The endpoint registry: ordered, immutable, non-empty, unique paths, exact routing
(RG-01, RG-04, RG-05, RG-08..10, CT-01, EP-09, EP-10)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.errors import ConfigurationError
from mcpkit.json import JsonObject
from mcpkit.model import Revision
from mcpkit.model._context import InvocationFeatures, RequestContext, ToolArguments
from mcpkit.model._endpoint import Endpoint
from mcpkit.model._implementation import Implementation
from mcpkit.model._registry import EndpointRegistry
from mcpkit.model._results import CompleteResult, OperationResult
from mcpkit.model._tools import ToolRegistration

MODERN = Revision.V2026_07_28
JUNE = Revision.V2025_06_18


def _any(value: object) -> Any:
    """Pass a deliberately wrong value past the type checker."""
    return value


def raw(
    ctx: RequestContext, arguments: ToolArguments[JsonObject], features: InvocationFeatures
) -> OperationResult:
    return CompleteResult.from_tool_text("ok")


def endpoint(path: str, *tools: ToolRegistration, revisions: Any = (MODERN,)) -> Endpoint:
    return Endpoint(path, Implementation("inventory", "1.0.0"), revisions, tools=tools)


def tool(name: str, revisions: Any = (MODERN,)) -> ToolRegistration:
    return ToolRegistration.json_object(name=name, revisions=revisions, handler=raw)


A, B, C = endpoint("/a/mcp"), endpoint("/b/mcp"), endpoint("/caf%C3%A9/mcp")


def test_rg_04_rg_08_from_endpoints_keeps_the_order_given() -> None:
    registry = EndpointRegistry.from_endpoints([C, A, B])
    assert registry.endpoints == (C, A, B)
    assert isinstance(registry.endpoints, tuple)
    assert list(registry) == [C, A, B]
    assert len(registry) == 3


def test_rg_01_a_registry_is_immutable_and_built_by_its_factory() -> None:
    endpoints = [A, B]
    registry = EndpointRegistry.from_endpoints(endpoints)
    endpoints.append(C)
    assert registry.endpoints == (A, B)
    with pytest.raises(AttributeError, match="immutable"):
        registry.endpoints = ()
    with pytest.raises(AttributeError, match="immutable"):
        del registry.endpoints
    with pytest.raises(TypeError, match=r"EndpointRegistry\.from_endpoints"):
        EndpointRegistry([A])


def test_rg_01_the_repr_is_short() -> None:
    assert repr(EndpointRegistry.from_endpoints((A,))) == "<EndpointRegistry 1 endpoint>"
    assert repr(EndpointRegistry.from_endpoints((A, B))) == "<EndpointRegistry 2 endpoints>"


def test_rg_05_with_endpoint_appends_and_leaves_the_original_unchanged() -> None:
    first = EndpointRegistry.from_endpoints([A])
    second = first.with_endpoint(B)
    assert second.endpoints == (A, B)
    assert first.endpoints == (A,)
    assert first.endpoint_for_path("/b/mcp") is None
    assert second.endpoint_for_path("/b/mcp") is B


def test_rg_09_a_registry_holds_at_least_one_endpoint() -> None:
    with pytest.raises(ConfigurationError) as caught:
        EndpointRegistry.from_endpoints([])
    assert str(caught.value) == (
        "EndpointRegistry.from_endpoints: a registry needs at least one endpoint"
    )


def test_rg_10_two_endpoints_may_not_declare_the_same_path() -> None:
    other = endpoint("/a/mcp", revisions=(JUNE,))
    with pytest.raises(ConfigurationError) as caught:
        EndpointRegistry.from_endpoints([A, B, other])
    assert str(caught.value) == (
        "EndpointRegistry: <Endpoint '/a/mcp' [2025-06-18]> and <Endpoint '/a/mcp' "
        "[2026-07-28]> declare the same path; paths must be unique within a registry"
    )
    with pytest.raises(ConfigurationError, match="paths must be unique within a registry"):
        EndpointRegistry.from_endpoints([A]).with_endpoint(A)


@pytest.mark.parametrize("endpoints", [A, {A}, iter([A]), None])
def test_rg_04_endpoints_are_a_list_or_tuple(endpoints: object) -> None:
    with pytest.raises(ConfigurationError) as caught:
        EndpointRegistry.from_endpoints(_any(endpoints))
    assert str(caught.value) == (
        "EndpointRegistry.from_endpoints: endpoints must be a list or tuple of Endpoint, in the "
        "order to serve them"
    )


def test_rg_04_every_item_is_an_endpoint() -> None:
    with pytest.raises(ConfigurationError) as caught:
        EndpointRegistry.from_endpoints(_any([A, "/b/mcp"]))
    assert str(caught.value) == (
        "EndpointRegistry.from_endpoints: endpoints[1] must be an Endpoint, not str"
    )
    with pytest.raises(ConfigurationError, match=r"endpoints\[1\] must be an Endpoint"):
        EndpointRegistry.from_endpoints([A]).with_endpoint(_any(None))


@pytest.mark.parametrize(
    "raw_path",
    ["/a/mcp/", "/A/mcp", "/a/%6Dcp", "/a/mcp?x=1", "/a/mcp#f", "/a//mcp", "/a/./mcp", "a/mcp",
     "/caf%c3%a9/mcp", "/café/mcp", "", "/"],
)  # fmt: skip
def test_ct_01_routing_is_an_exact_raw_path_match(raw_path: str) -> None:
    registry = EndpointRegistry.from_endpoints([A, C])
    assert registry.endpoint_for_path("/a/mcp") is A
    assert registry.endpoint_for_path("/caf%C3%A9/mcp") is C
    assert registry.endpoint_for_path(raw_path) is None


def test_ep_09_ep_10_the_same_name_on_two_paths_does_not_leak() -> None:
    left = endpoint("/left/mcp", tool("inventory.search"))
    right = endpoint("/right/mcp", tool("inventory.search"), tool("inventory.only.right"))
    empty = endpoint("/empty/mcp")
    registry = EndpointRegistry.from_endpoints([left, right, empty])
    routed_left = registry.endpoint_for_path("/left/mcp")
    routed_right = registry.endpoint_for_path("/right/mcp")
    routed_empty = registry.endpoint_for_path("/empty/mcp")
    assert routed_left is left and routed_right is right and routed_empty is empty
    assert routed_left.find_tool("inventory.search", MODERN) is left.tools[0]
    assert routed_right.find_tool("inventory.search", MODERN) is right.tools[0]
    assert routed_left.find_tool("inventory.only.right", MODERN) is None
    assert routed_empty.capabilities(MODERN) == {}
    assert routed_left.capabilities(MODERN) == {"tools": {}}
