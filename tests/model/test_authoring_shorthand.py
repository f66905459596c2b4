"""Shorter authoring, same strictness: ``revisions`` defaults to what the operations allow,
``-> str`` tools answer text, prompts return a string or a list of messages, resources return
``str`` or ``bytes`` under the requested URI and the decorator's media type."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Annotated, Any

import pytest

import mcpkit
from mcpkit import (
    Arg,
    CompleteResult,
    ConfigurationError,
    InputRequestDeclaration,
    InputRequestKind,
    InputRequiredResult,
    PromptMessage,
    Revision,
    Role,
    Server,
    TaskCreatedResult,
    TaskSupport,
    TextContent,
)
from mcpkit.testing import TestClient, handshake_request, stateless_headers, stateless_request

JUNE, NOVEMBER, MODERN = Revision.V2025_06_18, Revision.V2025_11_25, Revision.V2026_07_28
ALL = frozenset(Revision)


def rpc(
    target: object,
    revision: Revision,
    method: str,
    params: dict[str, Any],
    name: str | None,
    status: int = 200,
) -> Any:
    """One request on ``revision`` (2025 statelessly), answered ``status``; its JSON body."""
    with TestClient(Server(target)) as client:
        if revision is MODERN:
            body = stateless_request(method, params)
            response = client.post("/mcp", body, headers=stateless_headers(method, name))
        else:
            body = handshake_request(method, params)
            response = client.post("/mcp", body, headers={"mcp-protocol-version": revision.wire})
    assert response.status == status, response.body
    return response.json


@dataclass(frozen=True)
class Sum:
    total: int


@mcpkit.endpoint(path="/mcp", name="plain", version="1.0.0")
class Plain:
    @mcpkit.tool
    def add(self, a: int, b: int) -> Sum:
        """Add two numbers."""
        return Sum(a + b)

    @mcpkit.tool
    def greet(self, name: str) -> str:
        """Say hello."""
        return f"Hello, {name}!"

    @mcpkit.tool
    async def shout(self, name: str) -> str:
        return name.upper()

    @mcpkit.tool
    def wrong(self) -> str:
        return 42  # type: ignore[return-value]  # the server refuses it, naming what came

    @mcpkit.prompt
    def review(self, topic: str) -> str:
        """Ask for a review."""
        return f"Review {topic}."

    @mcpkit.prompt
    async def dialogue(self, topic: str) -> list[PromptMessage]:
        return [
            PromptMessage(role=Role.USER, content=TextContent(text=f"Tell me about {topic}.")),
            PromptMessage(role=Role.ASSISTANT, content=TextContent(text="Gladly.")),
        ]

    @mcpkit.resource("notes://readme", mime_type="text/markdown")
    def readme(self) -> str:
        """The project's readme."""
        return "# Notes"

    @mcpkit.resource("notes://files/{name}", mime_type="application/octet-stream")
    async def file(self, name: str) -> bytes:
        return name.encode()


def test_revisions_default_to_all_three_for_plain_operations() -> None:
    endpoint = mcpkit.EndpointRegistry.from_classes(Plain).endpoints[0]
    assert endpoint.revisions == ALL
    assert all(tool.revisions == ALL for tool in endpoint.tools)
    assert all(prompt.revisions == ALL for prompt in endpoint.prompts)
    assert all(resource.revisions == ALL for resource in endpoint.resources)


def test_docstrings_and_names_are_the_defaults() -> None:
    endpoint = mcpkit.EndpointRegistry.from_classes(Plain).endpoints[0]
    greet = endpoint.find_tool("greet", JUNE)
    assert greet is not None and greet.description == "Say hello."
    readme = endpoint.find_resource("notes://readme", JUNE)
    assert readme is not None
    assert readme[0].name == "readme" and readme[0].description == "The project's readme."


@pytest.mark.parametrize("revision", [JUNE, NOVEMBER, MODERN])
@pytest.mark.parametrize(("tool", "text"), [("greet", "Hello, Ada!"), ("shout", "ADA")])
def test_a_str_tool_answers_one_text_block(revision: Revision, tool: str, text: str) -> None:
    params = {"name": tool, "arguments": {"name": "Ada"}}
    result = rpc(Plain, revision, "tools/call", params, tool)["result"]
    assert result["content"] == [{"type": "text", "text": text}]
    assert "structuredContent" not in result and result.get("isError") in (None, False)


def test_a_str_tool_publishes_no_output_schema() -> None:
    tools = rpc(Plain, MODERN, "tools/list", {}, None)["result"]["tools"]
    greet = next(tool for tool in tools if tool["name"] == "greet")
    assert "outputSchema" not in greet
    add = next(tool for tool in tools if tool["name"] == "add")
    assert add["outputSchema"]["type"] == "object"


def test_a_str_tool_returning_something_else_is_the_fixed_internal_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    answer = rpc(Plain, MODERN, "tools/call", {"name": "wrong", "arguments": {}}, "wrong", 500)
    assert answer["error"]["code"] == -32603
    assert any("returned int" in record.getMessage() for record in caplog.records)


@pytest.mark.parametrize("revision", [JUNE, MODERN])
def test_a_str_prompt_is_one_user_message(revision: Revision) -> None:
    params = {"name": "review", "arguments": {"topic": "the plan"}}
    result = rpc(Plain, revision, "prompts/get", params, "review")["result"]
    assert result["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Review the plan."}}
    ]


def test_a_prompt_returns_its_messages_in_order() -> None:
    params = {"name": "dialogue", "arguments": {"topic": "owls"}}
    result = rpc(Plain, NOVEMBER, "prompts/get", params, "dialogue")["result"]
    assert [message["role"] for message in result["messages"]] == ["user", "assistant"]
    assert result["messages"][1]["content"]["text"] == "Gladly."


@pytest.mark.parametrize("revision", [JUNE, MODERN])
def test_a_str_resource_is_text_under_its_uri_and_media_type(revision: Revision) -> None:
    params = {"uri": "notes://readme"}
    result = rpc(Plain, revision, "resources/read", params, "notes://readme")["result"]
    assert result["contents"] == [
        {"uri": "notes://readme", "mimeType": "text/markdown", "text": "# Notes"}
    ]


def test_a_bytes_resource_is_a_blob_under_the_requested_uri() -> None:
    params = {"uri": "notes://files/a.bin"}
    result = rpc(Plain, MODERN, "resources/read", params, "notes://files/a.bin")["result"]
    (item,) = result["contents"]
    assert item["uri"] == "notes://files/a.bin"
    assert item["mimeType"] == "application/octet-stream"
    assert base64.b64decode(item["blob"]) == b"a.bin"


def test_a_resource_without_a_media_type_leaves_it_out() -> None:
    @mcpkit.endpoint(path="/mcp", name="bare", version="1")
    class Bare:
        @mcpkit.resource("notes://plain")
        def plain(self) -> str:
            return "text"

    result = rpc(Bare, JUNE, "resources/read", {"uri": "notes://plain"}, None)["result"]
    assert result["contents"] == [{"uri": "notes://plain", "text": "text"}]


@pytest.mark.parametrize(
    ("annotation", "kind"),
    [(int, "prompt"), (list[str], "prompt"), (tuple[PromptMessage], "prompt"), (int, "resource")],
)
def test_other_returns_are_refused_naming_the_shorthands(annotation: object, kind: str) -> None:
    def method(self: object) -> None:
        raise AssertionError

    method.__annotations__["return"] = annotation
    decorator = mcpkit.prompt if kind == "prompt" else mcpkit.resource("notes://x")
    also = "str, list[PromptMessage]" if kind == "prompt" else "str, bytes"
    with pytest.raises(ConfigurationError) as refused:
        mcpkit.endpoint(path="/mcp", name="bad", version="1")(
            type("Bad", (), {"m": decorator(method)})
        )
    assert str(refused.value).endswith(f"or {also}")


def test_a_tuple_of_messages_is_a_shorthand_too() -> None:
    @mcpkit.endpoint(path="/mcp", name="t", version="1")
    class Tupled:
        @mcpkit.prompt
        def p(self) -> tuple[PromptMessage, ...]:
            return (PromptMessage(role=Role.USER, content=TextContent(text="hi")),)

    result = rpc(Tupled, JUNE, "prompts/get", {"name": "p"}, None)["result"]
    assert result["messages"][0]["content"]["text"] == "hi"


def test_a_shorthand_returning_a_full_output_passes_it_on() -> None:
    """An annotation is not a promise the server can hold a function to: a ``-> str`` prompt
    that returns a ``PromptOutput`` is answered with it."""

    @mcpkit.endpoint(path="/mcp", name="t", version="1")
    class Loose:
        @mcpkit.prompt
        def p(self) -> str:
            message = PromptMessage(role=Role.USER, content=TextContent(text="full"))
            return mcpkit.PromptOutput(messages=(message,))  # type: ignore[return-value]

        @mcpkit.resource("notes://r")
        def r(self) -> bytes:
            contents = mcpkit.TextResourceContents(uri="notes://r", text="full")
            return mcpkit.ResourceOutput(contents=(contents,))  # type: ignore[return-value]

    prompt = rpc(Loose, JUNE, "prompts/get", {"name": "p"}, None)["result"]
    assert prompt["messages"][0]["content"]["text"] == "full"
    read = rpc(Loose, JUNE, "resources/read", {"uri": "notes://r"}, None)["result"]
    assert read["contents"] == [{"uri": "notes://r", "text": "full"}]


# --- revisions the operations allow ------------------------------------------------------


@dataclass(frozen=True)
class Tenant:
    tenant: Annotated[str, Arg(header="Tenant")]


def _revisions_of(cls: type) -> tuple[frozenset[Revision], dict[str, frozenset[Revision]]]:
    endpoint = mcpkit.EndpointRegistry.from_classes(cls).endpoints[0]
    operations = {tool.name: tool.revisions for tool in endpoint.tools}
    operations.update({prompt.name: prompt.revisions for prompt in endpoint.prompts})
    return endpoint.revisions, operations


def test_an_operation_that_can_only_serve_2026_selects_only_it() -> None:
    @mcpkit.endpoint(path="/mcp", name="mixed", version="1")
    class Mixed:
        @mcpkit.tool
        def plain(self) -> str:
            return "x"

        @mcpkit.tool
        def listed(self) -> list[int]:  # a non-object output: 2026 only
            return [1]

        @mcpkit.tool
        def mirrored(self, tenant: Annotated[str, Arg(header="Tenant")]) -> str:
            return tenant

        @mcpkit.tool(task_support=TaskSupport.REQUIRED)
        def slow(self) -> str:
            return "done"

        @mcpkit.prompt(input_requests=(InputRequestDeclaration(InputRequestKind.ELICITATION_FORM),))
        def asking(self) -> InputRequiredResult | CompleteResult:
            raise AssertionError

    served, operations = _revisions_of(Mixed)
    assert served == ALL
    assert operations["plain"] == ALL
    only = frozenset({MODERN})
    assert operations["listed"] == operations["mirrored"] == operations["slow"] == only
    assert operations["asking"] == only  # no session_revisions: a 2025 client has nobody to ask


def test_input_requests_select_the_session_revisions() -> None:
    @mcpkit.endpoint(path="/mcp", name="asks", version="1", session_revisions={NOVEMBER})
    class Asks:
        @mcpkit.tool(input_requests=(InputRequestDeclaration(InputRequestKind.ELICITATION_FORM),))
        def asking(self) -> InputRequiredResult | CompleteResult:
            raise AssertionError

    served, operations = _revisions_of(Asks)
    assert operations["asking"] == {MODERN, NOVEMBER}
    assert served == {MODERN, NOVEMBER}  # what the operations select, and the session ones


def test_the_endpoint_serves_what_its_operations_select() -> None:
    @mcpkit.endpoint(path="/mcp", name="modern", version="1")
    class Modern:
        @mcpkit.tool
        def listed(self) -> list[int]:
            return [1]

    served, _ = _revisions_of(Modern)
    assert served == {MODERN}  # a 2025 client is told the version is unsupported, not shown []

    @mcpkit.endpoint(path="/mcp", name="empty", version="1")
    class Empty:
        pass

    assert _revisions_of(Empty)[0] == ALL


def test_a_listening_endpoint_serves_2026_whatever_its_operations() -> None:
    @mcpkit.endpoint(path="/mcp", name="l", version="1", listen=True)
    class Listening:
        @mcpkit.tool(revisions={JUNE})
        def old(self) -> str:
            return "x"

    assert _revisions_of(Listening)[0] == {JUNE, MODERN}


def test_an_operation_that_fails_everywhere_reports_the_first_failure() -> None:
    with pytest.raises(ConfigurationError, match="the method needs a return annotation"):

        @mcpkit.endpoint(path="/mcp", name="bad", version="1")
        class Bad:
            @mcpkit.tool
            def nothing(self):  # type: ignore[no-untyped-def]
                pass


def test_a_2026_only_failure_is_reported_as_is() -> None:
    """An operation with input requests and no session revisions is tried on 2026-07-28 alone;
    a failure there is the refusal."""
    with pytest.raises(ConfigurationError, match="the method needs a return annotation"):

        @mcpkit.endpoint(path="/mcp", name="bad", version="1")
        class Bad:
            @mcpkit.tool(
                input_requests=(InputRequestDeclaration(InputRequestKind.ELICITATION_FORM),)
            )
            def nothing(self):  # type: ignore[no-untyped-def]
                pass


def test_given_revisions_stay_strict() -> None:
    with pytest.raises(ConfigurationError, match="2026-07-28"):

        @mcpkit.endpoint(path="/mcp", name="strict", version="1", revisions={JUNE, MODERN})
        class Strict:
            @mcpkit.tool
            def listed(self) -> list[int]:
                return [1]


def test_an_operation_with_its_own_revisions_keeps_them() -> None:
    @mcpkit.endpoint(path="/mcp", name="own", version="1")
    class Own:
        @mcpkit.tool(revisions={JUNE})
        def old(self) -> str:
            return "x"

    served, operations = _revisions_of(Own)
    assert operations["old"] == {JUNE} and served == {JUNE}


def test_a_task_creating_tool_selects_2026_only() -> None:
    @mcpkit.endpoint(path="/mcp", name="tasks", version="1")
    class Tasks:
        @mcpkit.tool
        def start(self) -> TaskCreatedResult[Sum]:
            raise AssertionError

    assert _revisions_of(Tasks)[1]["start"] == {MODERN}


def test_a_resource_list_inherits_every_revision() -> None:
    @mcpkit.endpoint(path="/mcp", name="lists", version="1")
    class Lists:
        @mcpkit.resource_list()
        def pages(self, cursor: str | None) -> mcpkit.ResourceListPage:
            raise AssertionError

    endpoint = mcpkit.EndpointRegistry.from_classes(Lists).endpoints[0]
    assert endpoint.resource_list is not None and endpoint.resource_list.revisions == ALL
    assert endpoint.revisions == ALL


def test_bad_session_revisions_are_refused_by_the_endpoint_with_defaults_too() -> None:
    with pytest.raises(ConfigurationError, match="session_revisions"):

        @mcpkit.endpoint(path="/mcp", name="bad", version="1", session_revisions="2025-11-25")  # type: ignore[arg-type]
        class Bad:
            pass


def test_a_2025_refusal_does_not_hide_the_real_fault() -> None:
    """A task-only tool (2026 alone) with an unusable parameter: the refusal names the
    parameter, not the task rule that a 2025 revision broke first."""
    with pytest.raises(ConfigurationError, match="set\\[int\\]"):

        @mcpkit.endpoint(path="/mcp", name="bad", version="1")
        class Bad:
            @mcpkit.tool(task_support=TaskSupport.REQUIRED)
            def slow(self, tags: set[int]) -> str:
                return "x"
