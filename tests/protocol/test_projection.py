"""Per-revision projection of catalog entries and complete results (SP-01, LG-06..12, OR-13),
checked against the official (closed) schemas of all three revisions."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.errors import OutputError, OutputFailure
from mcpkit.json import JsonObject
from mcpkit.model import (
    BlobResourceContents,
    CachePolicy,
    CompleteResult,
    EmbeddedResource,
    ImageContent,
    Implementation,
    PromptMessage,
    PromptOutput,
    ResourceLink,
    ResourceOutput,
    Revision,
    Role,
    TextContent,
    TextResourceContents,
    ToolOutput,
)
from mcpkit.protocol import (
    SERVER_INFO_KEY,
    call_tool_result,
    get_prompt_result,
    implementation_info,
    prompt_definition,
    read_resource_result,
    resource_definition,
    tool_definition,
)

from ..spec_schemas import schema_errors
from .samples import (
    ICON,
    IMPLEMENTATION,
    JUNE,
    MODERN,
    NOVEMBER,
    REVISIONS,
    exact,
    prompt,
    raw_tool,
    template,
    typed_tool,
    wire,
)

LEGACY = [JUNE, NOVEMBER]
LINK = ResourceLink(
    uri="file:///report.pdf",
    name="report",
    title="Report",
    description="The report",
    mime_type="application/pdf",
    size=10,
    icons=(ICON,),
    meta={"example.com/k": 1},
)


def check(revision: Revision, definition: str, value: object) -> Any:
    """``value`` as a client decodes it, after asserting it is valid for ``revision``."""
    decoded = wire(value)
    assert schema_errors(revision.wire, definition, decoded) == []
    return decoded


# --- catalog entries ---------------------------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
def test_SP_01_tool_definition_fields(revision: Revision) -> None:
    registration = typed_tool()
    tool = check(revision, "Tool", tool_definition(registration, revision))
    expected = ["name", "title", "description", "icons", "inputSchema", "outputSchema"]
    expected.append("annotations")
    if revision is JUNE:
        expected.remove("icons")
    assert list(tool) == expected
    assert tool["annotations"] == {"title": "Search items", "readOnlyHint": True}
    assert tool["outputSchema"]["type"] == "object"


def test_SP_01_input_schema_is_the_exact_published_document() -> None:
    registration = typed_tool()
    for revision in REVISIONS:
        definition = tool_definition(registration, revision)
        assert definition["inputSchema"] is registration.input_schema.document
        assert registration.output_schema is not None
        assert definition["outputSchema"] is registration.output_schema.document


@pytest.mark.parametrize("revision", REVISIONS)
def test_SP_01_a_minimal_tool_has_only_name_and_input_schema(revision: Revision) -> None:
    tool = check(revision, "Tool", tool_definition(raw_tool("bare"), revision))
    assert tool == {"name": "bare", "inputSchema": {"type": "object"}}


def test_LG_11_june_catalog_entries_omit_icons_and_the_registration_keeps_them() -> None:
    entries: list[tuple[str, Any, Any]] = [
        ("Prompt", prompt("p"), prompt_definition),
        ("Resource", exact("file:///a.txt"), resource_definition),
        ("ResourceTemplate", template("x://{id}"), resource_definition),
    ]
    for definition, registration, project in entries:
        full = registration.definition()
        assert "icons" in full
        for revision in REVISIONS:
            entry = check(revision, definition, project(registration, revision))
            assert ("icons" in entry) is (revision is not JUNE)
            assert {k: v for k, v in entry.items() if k != "icons"} == {
                k: v for k, v in wire(full).items() if k != "icons"
            }
        assert registration.definition() is full and "icons" in full


def test_LG_11_entries_without_icons_are_returned_as_built() -> None:
    registration = exact("file:///b.txt")
    plain = registration.definition()
    bare = type(registration).exact(
        uri="file:///c.txt", name="c", revisions=frozenset(Revision), handler=_read
    )
    assert resource_definition(bare, JUNE) is bare.definition()
    assert resource_definition(registration, MODERN) is plain


def _read(ctx: object, features: object) -> ResourceOutput:
    raise NotImplementedError


def test_implementation_info_per_revision() -> None:
    """RV-05: every revision reports the implementation's own ``version``, never a revision."""
    june = implementation_info(IMPLEMENTATION, JUNE)
    assert wire(june) == {"name": "inventory", "title": "Inventory", "version": "1.0.0"}
    assert schema_errors(JUNE.wire, "Implementation", wire(june)) == []
    for revision in (NOVEMBER, MODERN):
        full = check(revision, "Implementation", implementation_info(IMPLEMENTATION, revision))
        assert full == wire(IMPLEMENTATION.to_json())
    bare = Implementation("a", "1")
    assert wire(implementation_info(bare, JUNE)) == {"name": "a", "version": "1"}


# --- tools/call --------------------------------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
def test_text_result(revision: Revision) -> None:
    body = check(
        revision, "CallToolResult", call_tool_result(CompleteResult.from_tool_text("hi"), revision)
    )
    expected: dict[str, Any] = {"content": [{"type": "text", "text": "hi"}]}
    if revision is MODERN:
        expected["resultType"] = "complete"
    assert body == expected


@pytest.mark.parametrize("revision", REVISIONS)
def test_error_result_and_meta_survive(revision: Revision) -> None:
    result = CompleteResult.from_tool_error_text("no stock").replace(meta={"example.com/t": "x"})
    body = check(revision, "CallToolResult", call_tool_result(result, revision))
    assert body["isError"] is True
    assert body["_meta"] == {"example.com/t": "x"}


@pytest.mark.parametrize("revision", REVISIONS)
def test_object_structured_content_is_written_on_every_revision(revision: Revision) -> None:
    result = CompleteResult.from_tool_structured_content({"count": 2})
    body = check(revision, "CallToolResult", call_tool_result(result, revision))
    assert body["structuredContent"] == {"count": 2}
    assert body["content"] == [] and "isError" not in body


NON_OBJECTS: list[object] = [[1, 2], "text", 3, 2.5, True, False, None, [], ""]


@pytest.mark.parametrize("value", NON_OBJECTS)
def test_LG_06_non_objects_are_valid_structured_content_on_2026(value: object) -> None:
    result = CompleteResult.from_tool_structured_content(value)
    body = check(MODERN, "CallToolResult", call_tool_result(result, MODERN))
    assert "structuredContent" in body
    assert body["structuredContent"] == wire(result.payload.to_json())["structuredContent"]


@pytest.mark.parametrize("revision", LEGACY)
@pytest.mark.parametrize("value", NON_OBJECTS)
@pytest.mark.parametrize("mirror", [False, True])
def test_LG_06_LG_07_LG_08_non_objects_fail_legacy_projection(
    revision: Revision, value: object, mirror: bool
) -> None:
    """LG-06, LG-07, LG-08: a non-object value fails legacy projection with the fixed internal
    error, with or without the text mirror, and is never wrapped, dropped or changed."""
    output = ToolOutput(content=(TextContent(text="[1, 2]"),), structured_content=value)
    result = CompleteResult.with_tool_output(output)
    before = wire(result.to_json())
    with pytest.raises(OutputError) as caught:
        call_tool_result(result, revision, mirror_structured_content=mirror)
    assert caught.value.reason is OutputFailure.SCHEMA
    assert caught.value.jsonrpc_code == -32603
    # Nothing wrapped, dropped or changed on the application's value (LG-07).
    assert wire(result.to_json()) == before
    assert result.payload is output
    assert not isinstance(output.structured_content, JsonObject)


def test_LG_09_LG_10_tool_resource_links_lose_icons_only_on_june() -> None:
    """LG-09, LG-10: links lose only their icons, and only on June; URI, name, the other link
    fields, the content order and the result metadata survive, and the application's values are
    unchanged."""
    image = ImageContent(data=b"\x89PNG", mime_type="image/png")
    embedded = EmbeddedResource(resource=BlobResourceContents(uri="file:///b", blob=b"\x00"))
    content = (TextContent(text="first"), LINK, image, embedded)
    result = CompleteResult.with_tool_output(ToolOutput(content=content)).replace(
        meta={"example.com/run": 7}
    )
    for revision in REVISIONS:
        body = check(revision, "CallToolResult", call_tool_result(result, revision))
        types = [block["type"] for block in body["content"]]
        assert types == ["text", "resource_link", "image", "resource"]
        link = body["content"][1]
        assert ("icons" in link) is (revision is not JUNE)
        expected = {k: v for k, v in wire(LINK.to_json()).items() if k != "icons"}
        assert {k: v for k, v in link.items() if k != "icons"} == expected
        assert body["_meta"] == {"example.com/run": 7}
    assert LINK.icons == (ICON,)
    assert result.payload.content[1] is LINK  # type: ignore[union-attr]


@pytest.mark.parametrize("revision", REVISIONS)
def test_OR_13_the_mirror_adds_one_text_block_when_there_is_no_content(
    revision: Revision,
) -> None:
    result = CompleteResult.from_tool_structured_content({"count": 2, "name": "é"})
    body = check(
        revision,
        "CallToolResult",
        call_tool_result(result, revision, mirror_structured_content=True),
    )
    assert body["content"] == [{"type": "text", "text": '{"count":2,"name":"é"}'}]
    assert body["structuredContent"] == {"count": 2, "name": "é"}
    assert result.payload.content == ()  # type: ignore[union-attr]


def test_OR_13_the_mirror_never_touches_application_content_or_plain_results() -> None:
    output = ToolOutput(content=(TextContent(text="own"),), structured_content={"a": 1})
    body = wire(
        call_tool_result(
            CompleteResult.with_tool_output(output), MODERN, mirror_structured_content=True
        )
    )
    assert body["content"] == [{"type": "text", "text": "own"}]
    plain = CompleteResult.with_tool_output(ToolOutput())
    assert wire(call_tool_result(plain, JUNE, mirror_structured_content=True)) == {"content": []}


def test_OR_13_the_mirror_of_null_on_2026() -> None:
    result = CompleteResult.from_tool_structured_content(None)
    body = wire(call_tool_result(result, MODERN, mirror_structured_content=True))
    assert body["content"] == [{"type": "text", "text": "null"}]
    assert body["structuredContent"] is None


def test_server_info_is_written_in_result_meta_on_2026_only() -> None:
    result = CompleteResult.from_tool_text("x").replace(meta={"example.com/k": 1})
    modern = check(
        MODERN, "CallToolResult", call_tool_result(result, MODERN, server_info=IMPLEMENTATION)
    )
    assert modern["_meta"] == {
        "example.com/k": 1,
        SERVER_INFO_KEY: wire(IMPLEMENTATION.to_json()),
    }
    for revision in LEGACY:
        legacy = wire(call_tool_result(result, revision, server_info=IMPLEMENTATION))
        assert legacy["_meta"] == {"example.com/k": 1}


def test_a_payload_of_another_kind_is_a_programming_error() -> None:
    prompt_result = CompleteResult.with_prompt_output(PromptOutput(messages=()))
    with pytest.raises(TypeError, match="ToolOutput"):
        call_tool_result(prompt_result, MODERN)
    with pytest.raises(TypeError, match="PromptOutput"):
        get_prompt_result(CompleteResult.from_tool_text("x"), MODERN)
    with pytest.raises(TypeError, match="ResourceOutput"):
        read_resource_result(prompt_result, MODERN)


# --- prompts/get -------------------------------------------------------------------------------


def _prompt_result(*blocks: Any, description: str | None = "Review") -> CompleteResult:
    messages = tuple(
        PromptMessage(role=Role.USER if i % 2 == 0 else Role.ASSISTANT, content=block)
        for i, block in enumerate(blocks)
    )
    return CompleteResult.with_prompt_output(
        PromptOutput(messages=messages, description=description)
    )


@pytest.mark.parametrize("revision", REVISIONS)
def test_prompt_result(revision: Revision) -> None:
    result = _prompt_result(TextContent(text="a"), LINK.icons_dropped())
    body = check(revision, "GetPromptResult", get_prompt_result(result, revision))
    assert body["description"] == "Review"
    assert [m["role"] for m in body["messages"]] == ["user", "assistant"]
    assert body["messages"][1]["content"] == wire(LINK.icons_dropped().to_json())
    assert ("resultType" in body) is (revision is MODERN)


def test_prompt_result_without_description_and_with_server_info() -> None:
    result = _prompt_result(TextContent(text="a"), description=None)
    body = check(
        MODERN, "GetPromptResult", get_prompt_result(result, MODERN, server_info=IMPLEMENTATION)
    )
    assert "description" not in body
    assert list(body["_meta"]) == [SERVER_INFO_KEY]


def test_LG_12_june_prompt_links_with_icons_fail_safely() -> None:
    """LG-12: a June prompt message whose resource link carries icons fails with the fixed
    internal error."""
    result = _prompt_result(TextContent(text="a"), LINK)
    with pytest.raises(OutputError) as caught:
        get_prompt_result(result, JUNE)
    assert caught.value.reason is OutputFailure.SCHEMA
    assert str(caught.value) == "Internal error"
    for revision in (NOVEMBER, MODERN):
        body = check(revision, "GetPromptResult", get_prompt_result(result, revision))
        assert body["messages"][1]["content"]["icons"] == [wire(ICON.to_json())]
    assert LINK.icons == (ICON,)


# --- resources/read ----------------------------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
def test_read_resource_result(revision: Revision) -> None:
    output = ResourceOutput(
        contents=(
            TextResourceContents(uri="file:///a.txt", text="abc", mime_type="text/plain"),
            BlobResourceContents(uri="file:///b.bin", blob=b"\x00\x01"),
        )
    )
    result = CompleteResult.with_resource_output(output).replace(meta={"example.com/v": True})
    body = check(revision, "ReadResourceResult", read_resource_result(result, revision))
    assert [item["uri"] for item in body["contents"]] == ["file:///a.txt", "file:///b.bin"]
    assert body["_meta"] == {"example.com/v": True}
    if revision is MODERN:
        assert (body["resultType"], body["ttlMs"], body["cacheScope"]) == ("complete", 0, "private")
    else:
        assert not {"resultType", "ttlMs", "cacheScope"} & set(body)


def test_read_resource_result_with_a_cache_policy() -> None:
    output = ResourceOutput(contents=(TextResourceContents(uri="file:///a", text=""),))
    result = CompleteResult.with_resource_output(output)
    body = check(
        MODERN,
        "ReadResourceResult",
        read_resource_result(result, MODERN, cache=CachePolicy(60_000, "public")),
    )
    assert (body["ttlMs"], body["cacheScope"]) == (60_000, "public")
    assert wire(read_resource_result(result, JUNE, cache=CachePolicy(1, "public"))) == {
        "contents": [{"uri": "file:///a", "text": ""}]
    }


def test_projection_returns_immutable_json() -> None:
    body = call_tool_result(CompleteResult.from_tool_text("x"), MODERN)
    assert isinstance(body, JsonObject)
    with pytest.raises(TypeError):
        body["isError"] = True
