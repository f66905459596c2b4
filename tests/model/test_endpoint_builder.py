"""The function-style endpoint: ``EndpointBuilder`` decorators on plain functions build the same
immutable endpoint as the class style, under the same rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

import mcpkit
from mcpkit import (
    ConfigurationError,
    EndpointBuilder,
    EndpointRegistry,
    RequestContext,
    Revision,
    Server,
)
from mcpkit.testing import TestClient, handshake_request, stateless_headers, stateless_request

JUNE, MODERN = Revision.V2025_06_18, Revision.V2026_07_28


@dataclass(frozen=True)
class Note:
    id: str
    text: str


NOTES = {"1": Note("1", "buy milk")}

notes = EndpointBuilder("notes", version="1.0.0", instructions="Notes by id.")


@notes.tool
def find(id: str) -> Note:
    """Find a note by its id."""
    return NOTES[id]


@notes.tool(name="count", read_only=True)
async def count_notes(ctx: RequestContext) -> str:
    return f"{len(NOTES)} notes via {ctx.method}"


@notes.prompt
def summarize(id: str) -> str:
    """Summarize one note."""
    return f"Summarize: {NOTES[id].text}"


@notes.resource("notes://{id}", mime_type="text/plain")
def note(id: str) -> str:
    """One note's text."""
    return NOTES[id].text


@mcpkit.endpoint(path="/mcp", name="notes", version="1.0.0", instructions="Notes by id.")
class ClassNotes:
    @mcpkit.tool
    def find(self, id: str) -> Note:
        """Find a note by its id."""
        return NOTES[id]

    @mcpkit.tool(name="count", read_only=True)
    async def count_notes(self, ctx: RequestContext) -> str:
        return f"{len(NOTES)} notes via {ctx.method}"

    @mcpkit.prompt
    def summarize(self, id: str) -> str:
        """Summarize one note."""
        return f"Summarize: {NOTES[id].text}"

    @mcpkit.resource("notes://{id}", mime_type="text/plain")
    def note(self, id: str) -> str:
        """One note's text."""
        return NOTES[id].text


def rpc(target: object, revision: Revision, method: str, params: dict[str, Any]) -> Any:
    name = params.get("name") or params.get("uri")
    with TestClient(Server(target)) as client:
        if revision is MODERN:
            body = stateless_request(method, params)
            response = client.post("/mcp", body, headers=stateless_headers(method, name))
        else:
            body = handshake_request(method, params)
            response = client.post("/mcp", body, headers={"mcp-protocol-version": revision.wire})
    assert response.status == 200, response.body
    answer: Any = response.json
    return answer["result"]


def test_functions_stay_callable() -> None:
    assert find("1") == Note("1", "buy milk")
    assert summarize("1") == "Summarize: buy milk"


@pytest.mark.parametrize("revision", [JUNE, MODERN])
@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/list", {}),
        ("prompts/list", {}),
        ("resources/templates/list", {}),
        ("tools/call", {"name": "find", "arguments": {"id": "1"}}),
        ("tools/call", {"name": "count", "arguments": {}}),
        ("prompts/get", {"name": "summarize", "arguments": {"id": "1"}}),
        ("resources/read", {"uri": "notes://1"}),
    ],
)
def test_the_function_style_answers_as_the_class_style(
    revision: Revision, method: str, params: dict[str, Any]
) -> None:
    assert rpc(notes, revision, method, params) == rpc(ClassNotes, revision, method, params)


def test_the_endpoint_is_built_once_and_closes_the_builder() -> None:
    builder = EndpointBuilder("late", version="1")
    assert repr(builder) == "<EndpointBuilder 'late' (0 operations)>"

    @builder.tool
    def first() -> str:
        return "x"

    assert repr(builder) == "<EndpointBuilder 'late' (1 operations)>"
    endpoint = builder.endpoint
    assert builder.endpoint is endpoint and endpoint.path == "/mcp"
    assert repr(builder) == "<EndpointBuilder 'late' (built)>"
    with pytest.raises(ConfigurationError, match=r"already built.*@tool on .*second"):

        @builder.tool
        def second() -> str:
            return "y"

    assert [tool.name for tool in builder.endpoint.tools] == ["first"]


def test_a_registry_and_a_server_take_a_builder() -> None:
    server = Server(notes)
    assert server.registry.endpoints[0] is notes.endpoint
    assert Server(
        [notes, EndpointRegistry.from_classes(ClassNotes).endpoints[0].replace(path="/other")]
    ).registry


def test_refusals_name_the_builder_and_the_function() -> None:
    builder = EndpointBuilder("bad", version="1")
    with pytest.raises(ConfigurationError, match="EndpointBuilder 'bad': @tool decorates a func"):
        builder.tool(print)

    def method(self: object, x: int) -> str:
        return ""

    builder.tool(method)
    with pytest.raises(
        ConfigurationError, match=r"function '.*method': tool 'method': a plain function's first"
    ):
        _ = builder.endpoint


def test_duplicates_name_both_functions() -> None:
    builder = EndpointBuilder("dupes", version="1")

    @builder.tool(name="same")
    def one() -> str:
        return "1"

    @builder.tool(name="same")
    def two() -> str:
        return "2"

    with pytest.raises(ConfigurationError, match="tool 'same' is also declared by function"):
        _ = builder.endpoint


def test_a_resource_list_and_every_option_carry_over() -> None:
    builder = EndpointBuilder(
        "full", version="2.0", path="/full", title="Full", description="All options",
        website_url="https://example.com", revisions={MODERN},
        resource_list_cache=mcpkit.CachePolicy(60_000, "public"),
    )  # fmt: skip

    @builder.resource_list
    def pages(cursor: str | None) -> mcpkit.ResourceListPage:
        return mcpkit.ResourceListPage(resources=())

    @builder.resource_list(revisions={MODERN})
    def more(cursor: str | None) -> mcpkit.ResourceListPage:
        raise AssertionError

    with pytest.raises(ConfigurationError, match=r"one @resource_list; function '.*pages' is"):
        _ = builder.endpoint

    ok = EndpointBuilder("ok", version="1", path="/ok")

    @ok.resource_list
    def listing(cursor: str | None) -> mcpkit.ResourceListPage:
        return mcpkit.ResourceListPage(resources=())

    endpoint = EndpointRegistry.from_endpoints([ok.endpoint]).endpoints[0]
    assert endpoint.resource_list is not None


def test_a_builder_without_a_str_name_still_reports() -> None:
    builder = EndpointBuilder(42, version="1")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"^EndpointBuilder: Implementation"):
        _ = builder.endpoint
