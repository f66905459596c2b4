"""``examples/everything.py``: the conformance fixture (the official suite's server fixtures),
checked
through its registrations the way the server calls them, then end to end through the in-process
test client on each revision."""

import asyncio
import importlib.util
import io
import itertools
import json
import struct
import sys
import time
import wave
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Final, cast

import pytest

import mcpkit
from mcpkit import (
    AudioContent,
    CancellationToken,
    CompleteResult,
    EmbeddedResource,
    Endpoint,
    EndpointRegistry,
    ImageContent,
    InputRequestDeclaration,
    InputRequiredResult,
    InvalidParams,
    InvocationFeatures,
    Limits,
    MissingClientCapability,
    ProgressReporter,
    PromptOutput,
    RequestContext,
    RequestLogger,
    RequestStateMode,
    ResourceOutput,
    Revision,
    Role,
    Server,
    TextContent,
    TextResourceContents,
    ToolArguments,
    ToolOutput,
    ToolRegistration,
)
from mcpkit.json import JsonObject, from_python
from mcpkit.model import ToolShape
from mcpkit.schema import Outcome
from mcpkit.testing import TestClient, handshake_request, stateless_headers, stateless_request

from .wire import assert_valid

PATH = Path(__file__).resolve().parents[1] / "examples" / "everything.py"
MODERN = Revision.V2026_07_28
ALL = frozenset(Revision)


def _load() -> ModuleType:
    """Import the example by path (``examples`` is not a package)."""
    spec = importlib.util.spec_from_file_location("mcpkit_example_everything", PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


example = _load()
ENDPOINT: Endpoint = example.registry.endpoints[0]

TOOLS = {
    "confirm_delete": ALL,
    "failing_job": frozenset({MODERN}),
    "greet": ALL,
    "json_schema_2020_12_tool": ALL,
    "multi_input": ALL,
    "protocol_error_job": frozenset({MODERN}),
    "slow_compute": ALL,
    "test_audio_content": ALL,
    "test_elicitation": ALL,
    "test_elicitation_sep1034_defaults": ALL,
    "test_elicitation_sep1330_enums": ALL,
    "test_embedded_resource": ALL,
    "test_error_handling": ALL,
    "test_image_content": ALL,
    "test_input_required_result_capabilities": ALL,
    "test_input_required_result_elicitation": ALL,
    "test_input_required_result_list_roots": ALL,
    "test_input_required_result_multi_round": ALL,
    "test_input_required_result_multiple_inputs": ALL,
    "test_input_required_result_request_state": ALL,
    "test_input_required_result_sampling": ALL,
    "test_input_required_result_tampered_state": ALL,
    "test_logging_tool": frozenset({MODERN}),
    "test_missing_capability": frozenset({MODERN}),
    "test_multiple_content_types": ALL,
    "test_sampling": ALL,
    "test_simple_text": ALL,
    "test_streaming_elicitation": frozenset({MODERN}),
    "test_tool_with_logging": ALL,
    "test_tool_with_progress": ALL,
    "test_tool_with_task": frozenset({MODERN}),
    "test_x_mcp_header": frozenset({MODERN}),
    "touch_watched_resource": ALL,
    "test_trigger_tool_change": ALL,
    "test_trigger_prompt_change": ALL,
}
PROMPTS = (
    "test_input_required_result_prompt",
    "test_prompt_with_arguments",
    "test_prompt_with_embedded_resource",
    "test_prompt_with_image",
    "test_simple_prompt",
)
RESOURCES = ("test://static-binary", "test://static-text", "test://watched-resource")


def context(
    method: str, revision: Revision = MODERN, capabilities: Mapping[str, object] | None = None
) -> RequestContext:
    return RequestContext(
        endpoint=ENDPOINT,
        revision=revision,
        method=method,
        client_capabilities=JsonObject(capabilities or {}),
    )


def features(*extra: object) -> InvocationFeatures:
    return InvocationFeatures(CancellationToken(), *extra)


def invoke(handler: Any, *args: object) -> Any:
    result = handler(*args)
    return asyncio.run(result) if asyncio.iscoroutine(result) else result


def tool_registration(name: str, revision: Revision = MODERN) -> ToolRegistration:
    registration = ENDPOINT.find_tool(name, revision)
    assert registration is not None
    return registration


def call_tool(
    name: str,
    arguments: Mapping[str, object] | None = None,
    *,
    ctx: RequestContext | None = None,
    extra: tuple[object, ...] = (),
) -> Any:
    """Bind the arguments with the tool's input model and call the handler, as the server
    does; authored tools get the raw object."""
    registration = tool_registration(name)
    raw = JsonObject(dict(arguments or {}))
    assert registration.input_schema.evaluate(raw) is Outcome.VALID
    model = registration.input_model
    converted = raw if model is None else model.bind(raw)
    return invoke(
        registration.handler,
        ctx or context("tools/call"),
        ToolArguments(converted=converted, raw=raw),
        features(*extra),
    )


def tool_output(result: object) -> ToolOutput:
    assert isinstance(result, CompleteResult)
    assert isinstance(result.payload, ToolOutput)
    return result.payload


def only_text(result: object) -> str:
    output = tool_output(result)
    assert not output.is_error
    (block,) = output.content
    assert isinstance(block, TextContent)
    return block.text


def read_resource(uri: str) -> Any:
    match = ENDPOINT.find_resource(uri, MODERN)
    assert match is not None
    registration, variables = match
    if registration.template is None:
        output = invoke(registration.handler, context("resources/read"), features())
    else:
        output = invoke(registration.handler, context("resources/read"), variables, features())
    assert isinstance(output, ResourceOutput)
    (contents,) = output.contents
    assert contents.uri == uri
    return contents


def get_prompt(name: str, arguments: Mapping[str, str] | None = None) -> PromptOutput:
    registration = ENDPOINT.find_prompt(name, MODERN)
    assert registration is not None
    output = invoke(registration.handler, context("prompts/get"), arguments or {}, features())
    assert isinstance(output, PromptOutput)
    assert all(message.role is Role.USER for message in output.messages)
    return output


def png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """Split a PNG into (type, data) chunks, checking the signature and every CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, offset = [], 8
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        body = data[offset + 8 : offset + 8 + length]
        (crc,) = struct.unpack(">I", data[offset + 8 + length : offset + 12 + length])
        assert crc == zlib.crc32(kind + body)
        chunks.append((kind, body))
        offset += 12 + length
    assert offset == len(data)
    return chunks


def assert_valid_png(data: bytes) -> None:
    chunks = png_chunks(data)
    kinds = [kind for kind, _ in chunks]
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND" and b"IDAT" in kinds
    width, height, depth, colour, _, _, _ = struct.unpack(">IIBBBBB", chunks[0][1])
    assert (width, height, depth, colour) == (16, 16, 8, 2)
    pixels = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    assert len(pixels) == height * (1 + 3 * width)


def assert_valid_wav(data: bytes) -> None:
    with wave.open(io.BytesIO(data), "rb") as reader:
        assert reader.getnchannels() == 1
        assert reader.getsampwidth() == 2
        assert reader.getframerate() == 8000
        assert reader.getnframes() == 800
        frames = reader.readframes(reader.getnframes())
    samples = struct.unpack(f"<{len(frames) // 2}h", frames)
    assert max(samples) > 10_000 and min(samples) < -10_000  # a tone, not silence


# --- catalog -----------------------------------------------------------------------------------


def test_the_registry_serves_one_endpoint_on_every_revision() -> None:
    import mcpkit

    assert len(example.registry) == 1
    assert ENDPOINT.path == "/mcp"
    assert ENDPOINT.revisions == ALL
    assert ENDPOINT.implementation.name == "mcpkit-everything"
    assert ENDPOINT.implementation.version == mcpkit.__version__
    assert isinstance(example.server, Server)
    assert example.server.registry is example.registry


def test_every_fixture_is_listed_with_its_revisions() -> None:
    assert {tool.name: tool.revisions for tool in ENDPOINT.tools} == TOOLS
    assert [tool.name for tool in ENDPOINT.tools] == sorted(TOOLS)  # code-point order
    assert all(tool.description for tool in ENDPOINT.tools)  # tools-list requires one
    assert tuple(prompt.name for prompt in ENDPOINT.prompts) == PROMPTS
    assert all(prompt.description for prompt in ENDPOINT.prompts)
    assert {p.name: p.revisions for p in ENDPOINT.prompts} == dict.fromkeys(PROMPTS, ALL)
    assert tuple(r.uri for r in ENDPOINT.resources_for(MODERN)) == RESOURCES
    assert [r.template.text for r in ENDPOINT.templates_for(MODERN) if r.template] == [
        "test://template/{id}/data"
    ]
    for revision in (Revision.V2025_06_18, Revision.V2025_11_25):
        listed = {tool.name for tool in ENDPOINT.tools_for(revision)}
        assert listed == {name for name, revisions in TOOLS.items() if revision in revisions}
        assert len(ENDPOINT.prompts_for(revision)) == 5
        assert len(ENDPOINT.resources_for(revision)) == 3
    for revision in Revision:
        # every revision hears of changes: the 2025 ones in sessions (their GET streams),
        # 2026-07-28 on subscriptions/listen streams
        # and the tasks and skills extensions are 2026-07-28's alone
        tasks: dict[str, object] = (
            {
                "extensions": {
                    "io.modelcontextprotocol/skills": {"directoryRead": True},
                    "io.modelcontextprotocol/tasks": {},
                }
            }
            if revision is MODERN
            else {}
        )
        assert ENDPOINT.capabilities(revision) == {
            "tools": {"listChanged": True},
            "prompts": {"listChanged": True},
            "resources": {"subscribe": True, "listChanged": True},
            "completions": {},
            **tasks,
        }


def test_resources_declare_their_media_types() -> None:
    declared = {r.uri: r.mime_type for r in ENDPOINT.resources_for(MODERN)}
    assert declared == {
        "test://static-binary": "image/png",
        "test://static-text": "text/plain",
        "test://watched-resource": "text/plain",
    }
    (template,) = ENDPOINT.templates_for(MODERN)
    assert template.mime_type == "application/json"
    assert all(r.name for r in ENDPOINT.resources)


def test_sync_and_async_handlers_both_appear() -> None:
    assert tool_registration("test_tool_with_logging").is_async
    assert tool_registration("test_tool_with_progress").is_async
    assert not tool_registration("test_simple_text").is_async
    assert not tool_registration("json_schema_2020_12_tool").is_async
    (template,) = ENDPOINT.templates_for(MODERN)
    assert template.is_async
    assert not any(r.is_async for r in ENDPOINT.resources_for(MODERN))


def test_fixture_tools_are_advanced_and_framework_parameters_stay_unpublished() -> None:
    assert tool_registration("json_schema_2020_12_tool").shape is ToolShape.AUTHORED
    with_argument = {
        "test_sampling": {"prompt": {"type": "string", "description": "The prompt"}},
        "test_elicitation": {"message": {"type": "string", "description": "What to ask"}},
    }
    assert tool_registration("test_tool_with_task").shape is ToolShape.TYPED_TASK
    with_argument.update(
        greet={"name": {"type": "string"}},
        confirm_delete={"filename": {"type": "string"}},
    )
    tasks = {"slow_compute", "test_tool_with_task"}  # their arguments: tests/server/test_tasks.py
    for name in set(TOOLS) - {"json_schema_2020_12_tool", "test_x_mcp_header", *tasks}:
        registration = tool_registration(name)
        assert registration.shape is ToolShape.ADVANCED
        assert registration.output_schema is None
        # the logger, reporter and context parameters are injected, never arguments
        expected: dict[str, object] = {"type": "object", "additionalProperties": False}
        if name in with_argument:
            expected["properties"] = with_argument[name]
            expected["required"] = list(with_argument[name])
        assert registration.input_schema.document == expected


# --- media -------------------------------------------------------------------------------------


def test_the_png_and_the_wav_are_real_files() -> None:
    assert_valid_png(example.PNG)
    assert_valid_wav(example.WAV)
    assert len(example.PNG) < 1024 and len(example.WAV) < 4096


# --- tools -------------------------------------------------------------------------------------


def test_simple_text() -> None:
    assert only_text(call_tool("test_simple_text")) == (
        "This is a simple text response for testing."
    )


def test_image_content() -> None:
    (block,) = tool_output(call_tool("test_image_content")).content
    assert isinstance(block, ImageContent)
    assert block.mime_type == "image/png"
    assert_valid_png(block.data)
    wire: Any = block.to_json()
    assert wire["type"] == "image" and wire["mimeType"] == "image/png" and wire["data"]


def test_audio_content() -> None:
    (block,) = tool_output(call_tool("test_audio_content")).content
    assert isinstance(block, AudioContent)
    assert block.mime_type == "audio/wav"
    assert_valid_wav(block.data)


def test_embedded_resource() -> None:
    (block,) = tool_output(call_tool("test_embedded_resource")).content
    assert isinstance(block, EmbeddedResource)
    resource = block.resource
    assert isinstance(resource, TextResourceContents)
    assert resource.uri == "test://embedded-resource"
    assert resource.mime_type == "text/plain"
    assert resource.text


def test_multiple_content_types() -> None:
    text, image, embedded = tool_output(call_tool("test_multiple_content_types")).content
    assert isinstance(text, TextContent) and text.text
    assert isinstance(image, ImageContent) and image.mime_type == "image/png"
    assert_valid_png(image.data)
    assert isinstance(embedded, EmbeddedResource)
    resource = embedded.resource
    assert isinstance(resource, TextResourceContents)
    assert resource.uri == "test://mixed-content-resource"
    assert resource.mime_type == "application/json"
    assert json.loads(resource.text) == {"test": "data", "value": 123}


def test_tool_with_logging_sends_three_spaced_info_messages() -> None:
    sent: list[tuple[float, JsonObject]] = []
    logger = RequestLogger("info", lambda params: sent.append((time.monotonic(), params)))
    assert only_text(call_tool("test_tool_with_logging", extra=(logger,))) == (
        "Logging test completed"
    )
    assert len(sent) >= 3
    assert all(params["level"] == "info" and params["data"] for _, params in sent)
    assert [params["data"] for _, params in sent] == list(example.LOG_MESSAGES)
    gaps = [later - earlier for (earlier, _), (later, _) in itertools.pairwise(sent)]
    assert all(gap >= 0.04 for gap in gaps)


def test_tool_with_logging_without_a_logger_still_answers() -> None:
    assert only_text(call_tool("test_tool_with_logging")) == "Logging test completed"


def test_tool_with_logging_respects_the_minimum_level() -> None:
    sent: list[JsonObject] = []
    call_tool("test_tool_with_logging", extra=(RequestLogger("warning", sent.append),))
    assert sent == []


def test_logging_tool_logs_only_when_a_logger_is_given() -> None:
    sent: list[JsonObject] = []
    assert only_text(call_tool("test_logging_tool", extra=(RequestLogger("debug", sent.append),)))
    assert sent == [{"level": "info", "logger": "everything", "data": "test_logging_tool ran"}]
    assert only_text(call_tool("test_logging_tool")) == "Logging tool completed"


def test_tool_with_progress_reports_0_50_100_of_100() -> None:
    sent: list[JsonObject] = []
    reporter = ProgressReporter("progress-test-1", sent.append)
    assert only_text(call_tool("test_tool_with_progress", extra=(reporter,))) == (
        "Progress test completed"
    )
    assert sent == [
        {"progressToken": "progress-test-1", "progress": 0, "total": 100},
        {"progressToken": "progress-test-1", "progress": 50, "total": 100},
        {"progressToken": "progress-test-1", "progress": 100, "total": 100},
    ]


def test_tool_with_progress_without_a_reporter_still_answers() -> None:
    assert only_text(call_tool("test_tool_with_progress")) == "Progress test completed"


def test_error_handling_is_an_is_error_result() -> None:
    result = call_tool("test_error_handling")
    output = tool_output(result)
    assert output.is_error
    (block,) = output.content
    assert isinstance(block, TextContent) and block.text == example.ERROR_TEXT
    assert result.to_json()["isError"] is True


def test_x_mcp_header_declares_the_region_header() -> None:
    registration = tool_registration("test_x_mcp_header")
    document: Any = registration.input_schema.document
    assert document["properties"]["region"]["x-mcp-header"] == "Region"
    assert document["properties"]["region"]["type"] == "string"
    assert document["required"] == ["region"]
    assert [h.suffix for h in registration.input_schema.headers] == ["Region"]
    assert ENDPOINT.find_tool("test_x_mcp_header", Revision.V2025_11_25) is None
    assert only_text(call_tool("test_x_mcp_header", {"region": "eu-west-1"})) == (
        "Region: eu-west-1"
    )


def test_missing_capability_requires_sampling() -> None:
    with pytest.raises(MissingClientCapability) as raised:
        call_tool("test_missing_capability")
    assert raised.value.data == {"requiredCapabilities": {"sampling": {}}}
    assert raised.value.jsonrpc_code == -32021
    ctx = context("tools/call", capabilities={"sampling": {}})
    assert only_text(call_tool("test_missing_capability", ctx=ctx))
    assert ENDPOINT.find_tool("test_missing_capability", Revision.V2025_06_18) is None


def test_json_schema_2020_12_tool_publishes_its_schema_verbatim() -> None:
    registration = tool_registration("json_schema_2020_12_tool")
    document: Any = registration.input_schema.document
    assert document == example.JSON_SCHEMA_2020_12
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert document["$defs"]["address"]["$anchor"] == "addressDef"
    assert document["additionalProperties"] is False
    assert document["allOf"][0]["anyOf"]
    assert {"if", "then", "else"} <= set(document)


@pytest.mark.parametrize(
    ("arguments", "outcome"),
    [
        ({"contactMethod": "phone", "phone": "555-0100"}, Outcome.VALID),
        ({"email": "a@example.com", "address": {"city": "Oslo"}}, Outcome.VALID),
        ({"contactMethod": "phone", "email": "a@example.com"}, Outcome.INVALID),  # then
        ({"phone": "555-0100"}, Outcome.INVALID),  # else: email required
        ({"name": "x"}, Outcome.INVALID),  # anyOf: phone or email
        ({"email": "a@example.com", "address": {"city": 1}}, Outcome.INVALID),  # $ref
        ({"email": "a@example.com", "extra": 1}, Outcome.INVALID),  # additionalProperties
    ],
)
def test_json_schema_2020_12_tool_validates_with_2020_12_semantics(
    arguments: dict[str, object], outcome: Outcome
) -> None:
    schema = tool_registration("json_schema_2020_12_tool").input_schema
    assert schema.evaluate(from_python(arguments)) is outcome


def test_json_schema_2020_12_tool_echoes_its_arguments() -> None:
    text = only_text(call_tool("json_schema_2020_12_tool", {"email": "a@example.com"}))
    assert text == 'Received: {"email":"a@example.com"}'


# --- resources ---------------------------------------------------------------------------------


def test_static_text() -> None:
    contents = read_resource("test://static-text")
    assert isinstance(contents, TextResourceContents)
    assert contents.mime_type == "text/plain"
    assert contents.text == "This is the content of the static text resource."


def test_static_binary_is_a_png_blob() -> None:
    contents = read_resource("test://static-binary")
    assert contents.mime_type == "image/png"
    assert_valid_png(contents.blob)


def test_watched_resource() -> None:
    contents = read_resource("test://watched-resource")
    assert isinstance(contents, TextResourceContents)
    assert contents.mime_type == "text/plain" and contents.text


@pytest.mark.parametrize(
    ("written", "item"),
    [("123", "123"), ("abc", "abc"), ("a%20b", "a b"), ("caf%C3%A9", "caf\u00e9")],
)
def test_template_returns_the_id_as_json(written: str, item: str) -> None:
    contents = read_resource(f"test://template/{written}/data")
    assert isinstance(contents, TextResourceContents)
    assert contents.mime_type == "application/json"
    assert json.loads(contents.text) == {
        "id": item, "templateTest": True, "data": f"Data for ID: {item}",
    }  # fmt: skip
    if item == "123":
        assert contents.text == '{"id":"123","templateTest":true,"data":"Data for ID: 123"}'


def test_unknown_resources_are_not_found() -> None:
    assert (
        ENDPOINT.find_resource("test://nonexistent-resource-for-conformance-testing", MODERN)
        is None
    )


# --- prompts -----------------------------------------------------------------------------------


def test_simple_prompt() -> None:
    (message,) = get_prompt("test_simple_prompt").messages
    assert isinstance(message.content, TextContent) and message.content.text


def test_prompt_with_arguments_repeats_both_values() -> None:
    registration = ENDPOINT.find_prompt("test_prompt_with_arguments", MODERN)
    assert registration is not None
    assert registration.required_arguments == frozenset({"arg1", "arg2"})
    output = get_prompt("test_prompt_with_arguments", {"arg1": "testValue1", "arg2": "testValue2"})
    (message,) = output.messages
    assert isinstance(message.content, TextContent)
    assert "testValue1" in message.content.text and "testValue2" in message.content.text


@pytest.mark.parametrize(
    ("typed", "values"),
    [
        ("pa", ("paris", "park", "parse")),
        ("test", ("testValue1", "testing")),
        ("", ("paris", "park", "parse", "testValue1", "testing", "tokyo")),
        ("zzz", ()),
    ],
)
def test_arg1_completes_by_prefix(typed: str, values: tuple[str, ...]) -> None:
    registration = ENDPOINT.find_prompt("test_prompt_with_arguments", MODERN)
    assert registration is not None and set(registration.completions) == {"arg1"}
    completion = invoke(registration.completions["arg1"], context("completion/complete"), typed, {})
    assert completion.values == values
    assert all(value.startswith(typed) for value in completion.values)


def test_prompt_with_embedded_resource() -> None:
    registration = ENDPOINT.find_prompt("test_prompt_with_embedded_resource", MODERN)
    assert registration is not None
    assert registration.required_arguments == frozenset({"resourceUri"})
    output = get_prompt(
        "test_prompt_with_embedded_resource", {"resourceUri": "test://example-resource"}
    )
    first, second = output.messages
    assert isinstance(first.content, EmbeddedResource)
    resource = first.content.resource
    assert isinstance(resource, TextResourceContents)
    assert resource.uri == "test://example-resource" and resource.mime_type == "text/plain"
    assert isinstance(second.content, TextContent)


def test_prompt_with_embedded_resource_refuses_a_relative_uri() -> None:
    with pytest.raises(InvalidParams):
        get_prompt("test_prompt_with_embedded_resource", {"resourceUri": "not a uri"})


def test_prompt_with_image() -> None:
    first, second = get_prompt("test_prompt_with_image").messages
    assert isinstance(first.content, ImageContent) and first.content.mime_type == "image/png"
    assert_valid_png(first.content.data)
    assert isinstance(second.content, TextContent)


# --- end to end, through the in-process client --------------------------------------------------

LEGACY = (Revision.V2025_06_18, Revision.V2025_11_25)


def modern(client: TestClient, method: str, params: dict[str, object], name: str | None = None,
           **headers: str) -> Any:  # fmt: skip
    response = client.post(
        "/mcp",
        stateless_request(method, params),
        headers={**stateless_headers(method, name), **headers},
    )
    return response


_SESSIONS: dict[Revision, str] = {}


def legacy(client: TestClient, revision: Revision, method: str, params: dict[str, object]) -> Any:
    """A 2025 request in the session the fixture keeps for ``revision`` (opened on first use)."""
    if revision not in _SESSIONS:
        opened = client.post(
            "/mcp",
            handshake_request("initialize", {"protocolVersion": revision.wire, "capabilities": {}}),
        )
        session_id = opened.header("mcp-session-id")
        assert opened.status == 200 and session_id is not None
        _SESSIONS[revision] = session_id
    headers = {"MCP-Protocol-Version": revision.wire, "Mcp-Session-Id": _SESSIONS[revision]}
    return client.post("/mcp", handshake_request(method, params), headers=headers)


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    _SESSIONS.clear()  # sessions live with the server the module's client serves
    with TestClient(example.server) as test_client:
        yield test_client


def test_e2e_tools_list_on_each_revision(client: TestClient) -> None:
    response = modern(client, "tools/list", {})
    assert response.status == 200
    result: Any = response.json["result"]
    assert [tool["name"] for tool in result["tools"]] == sorted(TOOLS)
    assert result["resultType"] == "complete"
    by_name = {tool["name"]: tool for tool in result["tools"]}
    assert by_name["json_schema_2020_12_tool"]["inputSchema"] == example.JSON_SCHEMA_2020_12
    for revision in LEGACY:
        response = legacy(client, revision, "tools/list", {})
        assert response.status == 200
        names = [tool["name"] for tool in response.json["result"]["tools"]]
        assert names == sorted(name for name, revs in TOOLS.items() if revision in revs)


def test_e2e_simple_text_on_each_revision(client: TestClient) -> None:
    text = "This is a simple text response for testing."
    params: dict[str, object] = {"name": "test_simple_text", "arguments": {}}
    response = modern(client, "tools/call", params, "test_simple_text")
    assert response.status == 200
    assert response.json["result"]["content"] == [{"type": "text", "text": text}]
    for revision in LEGACY:
        response = legacy(client, revision, "tools/call", params)
        assert response.status == 200
        assert response.json["result"] == {"content": [{"type": "text", "text": text}]}


def test_e2e_error_handling_is_a_result_not_an_error(client: TestClient) -> None:
    params: dict[str, object] = {"name": "test_error_handling", "arguments": {}}
    for revision in LEGACY:
        message: Any = legacy(client, revision, "tools/call", params).json
        assert "error" not in message
        assert message["result"]["isError"] is True
        assert message["result"]["content"][0]["type"] == "text"


def test_e2e_progress_streams_three_notifications(client: TestClient) -> None:
    params: dict[str, object] = {
        "name": "test_tool_with_progress", "arguments": {},
        "_meta": {"progressToken": "progress-test-1"},
    }  # fmt: skip
    response = modern(client, "tools/call", params, "test_tool_with_progress")
    assert response.header("content-type").startswith("text/event-stream")
    *notifications, final = response.messages
    assert [n["method"] for n in notifications] == ["notifications/progress"] * 3
    assert [n["params"]["progress"] for n in notifications] == [0, 50, 100]
    assert {n["params"]["progressToken"] for n in notifications} == {"progress-test-1"}
    assert final["result"]["content"][0]["text"] == "Progress test completed"


def test_e2e_logging_streams_three_messages_on_2025(client: TestClient) -> None:
    params: dict[str, object] = {"name": "test_tool_with_logging", "arguments": {}}
    response = legacy(client, Revision.V2025_11_25, "tools/call", params)
    *notifications, final = response.messages
    assert len(notifications) >= 3
    assert {n["method"] for n in notifications} == {"notifications/message"}
    assert {n["params"]["level"] for n in notifications} == {"info"}
    assert final["result"]["content"][0]["text"] == "Logging test completed"


def test_e2e_no_log_message_without_a_log_level(client: TestClient) -> None:
    params: dict[str, object] = {"name": "test_logging_tool", "arguments": {}}
    quiet = modern(client, "tools/call", params, "test_logging_tool")
    assert quiet.header("content-type") == "application/json"
    assert quiet.json["result"]["content"][0]["text"] == "Logging tool completed"
    params["_meta"] = {"io.modelcontextprotocol/logLevel": "info"}
    logged = modern(client, "tools/call", params, "test_logging_tool")
    notification, final = logged.messages
    assert notification["method"] == "notifications/message"
    assert final["result"]["content"][0]["text"] == "Logging tool completed"


def test_e2e_missing_capability_is_32021(client: TestClient) -> None:
    params: dict[str, object] = {"name": "test_missing_capability", "arguments": {}}
    response = modern(client, "tools/call", params, "test_missing_capability")
    assert response.status == 400
    assert response.json["error"]["code"] == -32021
    assert response.json["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}


def test_e2e_x_mcp_header_is_mirrored(client: TestClient) -> None:
    params: dict[str, object] = {"name": "test_x_mcp_header", "arguments": {"region": "eu-west"}}
    response = modern(
        client, "tools/call", params, "test_x_mcp_header", **{"Mcp-Param-Region": "eu-west"}
    )
    assert response.status == 200
    assert response.json["result"]["content"][0]["text"] == "Region: eu-west"
    mismatch = modern(
        client, "tools/call", params, "test_x_mcp_header", **{"Mcp-Param-Region": "us-east"}
    )
    assert mismatch.status == 400 and mismatch.json["error"]["code"] == -32020


def test_e2e_template_read(client: TestClient) -> None:
    uri = "test://template/123/data"
    response = modern(client, "resources/read", {"uri": uri}, uri)
    assert response.status == 200
    (contents,) = response.json["result"]["contents"]
    assert contents == {
        "uri": uri, "mimeType": "application/json",
        "text": '{"id":"123","templateTest":true,"data":"Data for ID: 123"}',
    }  # fmt: skip


def test_e2e_prompt_with_arguments(client: TestClient) -> None:
    params: dict[str, object] = {
        "name": "test_prompt_with_arguments",
        "arguments": {"arg1": "testValue1", "arg2": "testValue2"},
    }
    response = modern(client, "prompts/get", params, "test_prompt_with_arguments")
    assert response.status == 200
    (message,) = response.json["result"]["messages"]
    assert message["role"] == "user"
    assert "testValue1" in message["content"]["text"]
    assert "testValue2" in message["content"]["text"]


def test_e2e_completion(client: TestClient) -> None:
    params: dict[str, object] = {
        "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
        "argument": {"name": "arg1", "value": "pa"},
    }
    response = modern(client, "completion/complete", params)
    assert response.json["result"]["completion"]["values"] == ["paris", "park", "parse"]


def test_e2e_loopback_origins_only(client: TestClient) -> None:
    allowed = modern(client, "tools/list", {}, Origin="http://localhost:3000")
    assert allowed.status == 200
    refused = modern(client, "tools/list", {}, Origin="http://evil.example.com")
    assert 400 <= refused.status < 500


def test_streaming_elicitation_asks_through_an_input_required_result(client: TestClient) -> None:
    """No independent server-to-client request on 2026-07-28: the elicitation is an
    ``inputRequests`` entry of the result, and the retry with the answer completes."""
    params: dict[str, object] = {"name": "test_streaming_elicitation", "arguments": {}}
    request = stateless_request("tools/call", params, capabilities={"elicitation": {}})
    headers = stateless_headers("tools/call", "test_streaming_elicitation")
    asked = client.post("/mcp", request, headers=headers)
    assert asked.status == 200
    result: Any = cast(Any, asked.json)["result"]
    assert result["resultType"] == "input_required"
    assert result["inputRequests"]["confirm"]["method"] == "elicitation/create"
    retry = stateless_request(
        "tools/call",
        {
            **params,
            "inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}},
        },
        id=2,
        capabilities={"elicitation": {}},
    )
    done = client.post("/mcp", retry, headers=headers)
    assert cast(Any, done.json)["result"]["content"] == [
        {"type": "text", "text": "Elicitation answered: accept"}
    ]
    refused = client.post("/mcp", stateless_request("tools/call", params, id=3), headers=headers)
    assert refused.status == 400
    refusal: Any = refused.json
    assert refusal["error"]["code"] == -32021
    assert refusal["error"]["data"] == {"requiredCapabilities": {"elicitation": {}}}


# --- multi-round input (2026-07-28), end to end ---------------------------------------------------
# The input-required-result fixtures: round 1 asks through an
# input-required result, the retry carries the harness's answers in ``inputResponses`` (and the
# sealed ``requestState``) with a fresh request id.  Every message is checked against the
# official 2026-07-28 schema.

SERVER_INFO: Final = {
    "io.modelcontextprotocol/serverInfo": {
        "name": "mcpkit-everything",
        "version": mcpkit.__version__,
        "title": "mcpkit conformance fixture",
        "description": "Every fixture of the MCP conformance suite that mcpkit serves",
    }
}
STATE_PREFIX: Final = "soklet-mcp-request-state-v1."
EVERY_INPUT: Final[Mapping[str, object]] = {"elicitation": {}, "sampling": {}, "roots": {}}
INVALID_PARAMS_ERROR: Final = {"code": -32602, "message": "Invalid params"}
INTERNAL_ERROR: Final = {"code": -32603, "message": "Internal error"}


def elicit_form(message: str, field: str, kind: str = "string") -> dict[str, object]:
    """The exact ``elicitation/create`` input request for one required field."""
    return {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {field: {"type": kind}},
                "required": [field],
            },
        },
    }


def sample(question: str, max_tokens: int) -> dict[str, object]:
    return {
        "method": "sampling/createMessage",
        "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": question}}],
            "maxTokens": max_tokens,
        },
    }


ASK_NAME: Final = elicit_form("What is your name?", "name")
ASK_STEP1: Final = elicit_form("Step 1: What is your name?", "name")
ASK_COLOR: Final = elicit_form("Step 2: What is your favorite color?", "color")
ASK_CONFIRM: Final = elicit_form("Please confirm", "ok", "boolean")
ASK_CONTEXT: Final = elicit_form("What context should the prompt use?", "context")
ASK_CAPITAL: Final = sample("What is the capital of France?", 100)
ASK_GREETING: Final = sample("Say hello to the user", 50)
ASK_ROOTS: Final = {"method": "roots/list"}

# The answers the conformance harness gives.
ALICE: Final = {"action": "accept", "content": {"name": "Alice"}}
PARIS: Final = {
    "role": "assistant",
    "content": {"type": "text", "text": "Paris"},
    "model": "m",
    "stopReason": "endTurn",
}
CLIENT_ROOTS: Final = {"roots": [{"uri": "file:///r", "name": "R"}]}
CONFIRMED: Final = {"action": "accept", "content": {"ok": True}}
BLUE: Final = {"action": "accept", "content": {"color": "blue"}}
CONTEXT: Final = {"action": "accept", "content": {"context": "testing"}}

_request_ids = itertools.count(1_000)


@dataclass(frozen=True)
class Reply:
    """One answer of the server, decoded as plain JSON (``json.loads``)."""

    status: int
    request_id: str | int
    message: Any

    @property
    def result(self) -> Any:
        assert self.status == 200, self.message
        assert self.message == {"jsonrpc": "2.0", "id": self.request_id, "result": ANY_VALUE}
        return self.message["result"]

    def error(self) -> tuple[int, Any]:
        assert set(self.message) == {"jsonrpc", "id", "error"}, self.message
        assert self.message["id"] == self.request_id
        return self.status, self.message["error"]

    def sealed(self) -> tuple[str, Any]:
        """The input-required result's ``requestState`` and the rest of the result."""
        rest = dict(self.result)
        state = rest.pop("requestState")
        assert isinstance(state, str) and state.startswith(STATE_PREFIX)
        return state, rest


class _AnyValue:
    """Equal to anything: lets ``Reply.result`` compare the envelope exactly."""

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = None  # type: ignore[assignment]


ANY_VALUE: Final = _AnyValue()


def send(
    client: TestClient,
    name: str,
    *,
    method: str = "tools/call",
    capabilities: Mapping[str, object] = EVERY_INPUT,
    responses: object = None,
    state: object = None,
    request_id: str | int | None = None,
) -> Reply:
    """One round of a multi-round call: a fresh id unless one is given, the answers and the
    state when given; every message of the answer is checked against the official schema."""
    params: dict[str, object] = {"name": name, "arguments": {}}
    if responses is not None:
        params["inputResponses"] = responses
    if state is not None:
        params["requestState"] = state
    if request_id is None:
        request_id = next(_request_ids)
    response = client.post(
        "/mcp",
        stateless_request(method, params, id=request_id, capabilities=capabilities),
        headers=stateless_headers(method, name),
    )
    assert_valid(MODERN.wire, method, response.messages)
    assert response.header("content-type") == "application/json"
    return Reply(response.status, request_id, json.loads(response.body))


def asks(requests: Mapping[str, object]) -> dict[str, object]:
    return {"resultType": "input_required", "inputRequests": dict(requests), "_meta": SERVER_INFO}


def says(text: str) -> dict[str, object]:
    return {
        "content": [{"type": "text", "text": text}],
        "resultType": "complete",
        "_meta": SERVER_INFO,
    }


@pytest.mark.parametrize(
    ("name", "key", "asked", "answer", "text"),
    [
        ("test_input_required_result_elicitation", "user_name", ASK_NAME, ALICE, "Hello, Alice!"),
        ("test_input_required_result_sampling", "capital_question", ASK_CAPITAL, PARIS,
         "The model answered: Paris"),
        ("test_input_required_result_list_roots", "client_roots", ASK_ROOTS, CLIENT_ROOTS,
         "Client roots: file:///r"),
    ],
)  # fmt: skip
def test_mrtr_one_input_then_complete(
    client: TestClient, name: str, key: str, asked: object, answer: object, text: str
) -> None:
    """Round 1 is the input-required result with exactly the one request (no state, no cache
    hints); the retry with the harness's answer completes with the exact text."""
    assert send(client, name).result == asks({key: asked})
    assert send(client, name, responses={key: answer}).result == says(text)


def test_mrtr_prompt_asks_for_context_then_builds_the_prompt(client: TestClient) -> None:
    name = "test_input_required_result_prompt"
    assert send(client, name, method="prompts/get").result == asks({"user_context": ASK_CONTEXT})
    done = send(client, name, method="prompts/get", responses={"user_context": CONTEXT})
    assert done.result == {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Context: testing"}}],
        "resultType": "complete",
        "_meta": SERVER_INFO,
    }


STATE_TOOLS: Final = {
    "test_input_required_result_request_state": (
        "state-ok: the confirmation arrived with the sealed state"
    ),
    "test_input_required_result_tampered_state": "state-ok: the sealed state verified",
}


@pytest.mark.parametrize(("name", "text"), STATE_TOOLS.items())
def test_mrtr_request_state_tools_complete_only_with_their_sealed_state(
    client: TestClient, name: str, text: str
) -> None:
    state, rest = send(client, name).sealed()
    assert rest == asks({"confirm": ASK_CONFIRM})
    answers = {"confirm": CONFIRMED}
    assert send(client, name, responses=answers, state=state).result == says(text)
    # Without the state the tool asks again, under a fresh state.
    again, rest = send(client, name, responses=answers).sealed()
    assert rest == asks({"confirm": ASK_CONFIRM})
    assert again != state
    # The state is not single-use: another request id may carry it again .
    assert send(client, name, responses=answers, state=state).result == says(text)
    # With the state but a declined confirmation, it asks again (the next round).
    declined = send(client, name, responses={"confirm": {"action": "decline"}}, state=state)
    following, rest = declined.sealed()
    assert rest == asks({"confirm": ASK_CONFIRM})
    assert following not in (state, again)
    assert send(client, name, responses=answers, state=following).result == says(text)


def _flip(state: str, index: int) -> str:
    """``state`` with one base64url character changed."""
    replacement = "A" if state[index] != "A" else "B"
    return state[:index] + replacement + state[index + 1 :]


TAMPERINGS: Final[Mapping[str, Callable[[str], object]]] = {
    "a ciphertext character": lambda state: _flip(state, len(state) - 30),
    "a header character": lambda state: _flip(state, len(STATE_PREFIX) + 4),
    "the last character": lambda state: _flip(state, len(state) - 1),
    "truncated": lambda state: state[:-4],
    "extended": lambda state: state + "AAAA",
    "another prefix": lambda state: "soklet-mcp-request-state-v2." + state[len(STATE_PREFIX) :],
    "padded": lambda state: state + "=",
    "empty": lambda state: "",
    "a number": lambda state: 5,
    "an object": lambda state: {"state": state},
}


@pytest.mark.parametrize("tampering", TAMPERINGS)
@pytest.mark.parametrize("name", STATE_TOOLS)
def test_mrtr_a_tampered_request_state_is_one_invalid_params(
    client: TestClient, name: str, tampering: str
) -> None:
    """Every way of changing the sealed string gets the same 400 / -32602, with nothing of
    the state echoed."""
    state, _ = send(client, name).sealed()
    changed = TAMPERINGS[tampering](state)
    refused = send(client, name, responses={"confirm": CONFIRMED}, state=changed)
    assert refused.error() == (400, INVALID_PARAMS_ERROR)


def test_mrtr_request_state_is_bound_to_its_tool_its_meta_and_another_request_id(
    client: TestClient,
) -> None:
    """A state opens only for the same tool and the same ``_meta`` (the capabilities are bound),
    and never on the request that emitted it; ids compare typed (``7`` is not ``"7"``)."""
    request_state, tampered_state = STATE_TOOLS
    answers = {"confirm": CONFIRMED}
    state, _ = send(client, request_state, request_id=7).sealed()
    other_tool = send(client, tampered_state, responses=answers, state=state)
    assert other_tool.error() == (400, INVALID_PARAMS_ERROR)
    other_meta = send(
        client, request_state, responses=answers, state=state, capabilities={"elicitation": {}}
    )
    assert other_meta.error() == (400, INVALID_PARAMS_ERROR)
    same_id = send(client, request_state, responses=answers, state=state, request_id=7)
    assert same_id.error() == (400, INVALID_PARAMS_ERROR)
    typed_id = send(client, request_state, responses=answers, state=state, request_id="7")
    assert typed_id.result == says(STATE_TOOLS[request_state])


def test_mrtr_multiple_inputs_in_one_result(client: TestClient) -> None:
    name = "test_input_required_result_multiple_inputs"
    requests = {"user_name": ASK_NAME, "greeting": ASK_GREETING, "client_roots": ASK_ROOTS}
    state, rest = send(client, name).sealed()
    assert rest == asks(requests)
    answers = {"user_name": ALICE, "greeting": PARIS, "client_roots": CLIENT_ROOTS}
    for missing in answers:  # two answers of three: all three are asked for again
        partial = {key: value for key, value in answers.items() if key != missing}
        again, rest = send(client, name, responses=partial, state=state).sealed()
        assert rest == asks(requests)
        assert again != state
    assert send(client, name, responses=answers).sealed()[1] == asks(requests)  # no state
    done = send(client, name, responses=answers, state=state)
    assert done.result == says("All three inputs arrived")


def test_mrtr_multi_round_carries_a_new_state_each_round(client: TestClient) -> None:
    name = "test_input_required_result_multi_round"
    first, rest = send(client, name).sealed()
    assert rest == asks({"step1": ASK_STEP1})
    second, rest = send(client, name, responses={"step1": ALICE}, state=first).sealed()
    assert rest == asks({"step2": ASK_COLOR})
    assert second != first
    done = send(client, name, responses={"step2": BLUE}, state=second)
    assert done.result == says("Alice likes blue")
    # The first round's state does not stand in for the second: the colour alone is not
    # enough, so step 1 is asked again.
    restart, rest = send(client, name, responses={"step2": BLUE}, state=first).sealed()
    assert rest == asks({"step1": ASK_STEP1})
    assert restart not in (first, second)


def test_mrtr_a_state_past_the_round_cap_is_the_fixed_internal_error(client: TestClient) -> None:
    """``Limits.max_request_state_rounds`` (10) counts emitted continuations: round 1 and nine
    re-emissions are answered, the tenth re-emission is a contract failure (500 / -32603)."""
    name = "test_input_required_result_multi_round"
    declined = {"step1": {"action": "decline"}}
    states = [send(client, name).sealed()[0]]
    for _ in range(9):
        state, rest = send(client, name, responses=declined, state=states[-1]).sealed()
        assert rest == asks({"step1": ASK_STEP1})
        states.append(state)
    assert len(set(states)) == 10
    assert send(client, name, responses=declined, state=states[-1]).error() == (500, INTERNAL_ERROR)
    # The last state still opens (a refused state is 400): only emitting again fails, here
    # step 2, which would be the eleventh round.
    finished = send(client, name, responses={"step1": ALICE}, state=states[-1])
    assert finished.error() == (500, INTERNAL_ERROR)
    assert send(client, name, responses={"step1": ALICE}, state=states[-2]).sealed()[1] == asks(
        {"step2": ASK_COLOR}
    )


@pytest.mark.parametrize(
    ("declared", "keys"),
    [
        (EVERY_INPUT, ("user_name", "greeting", "client_roots")),
        ({"sampling": {}}, ("greeting",)),
        ({"elicitation": {}}, ("user_name",)),
        ({"roots": {}}, ("client_roots",)),
        ({"elicitation": {"form": {}}, "roots": {}}, ("user_name", "client_roots")),
    ],
)
def test_mrtr_capabilities_asks_only_for_what_the_client_declared(
    client: TestClient, declared: Mapping[str, object], keys: tuple[str, ...]
) -> None:
    name = "test_input_required_result_capabilities"
    every = {"user_name": ASK_NAME, "greeting": ASK_GREETING, "client_roots": ASK_ROOTS}
    answers = {"user_name": ALICE, "greeting": PARIS, "client_roots": CLIENT_ROOTS}
    asked = send(client, name, capabilities=declared)
    assert asked.result == asks({key: every[key] for key in keys})
    retry = {key: answers[key] for key in keys}
    done = send(client, name, capabilities=declared, responses=retry)
    assert done.result == says("Inputs received")


def test_mrtr_capabilities_without_any_declared_capability_completes(client: TestClient) -> None:
    reply = send(client, "test_input_required_result_capabilities", capabilities={})
    assert reply.result == says("The client declared no input capability")


@pytest.mark.parametrize(
    "answer",
    [
        {"action": "decline"},
        {"action": "cancel"},
        {"action": "decline", "content": {"name": "Alice"}},
        {"action": "accept"},
        {"action": "accept", "content": {}},
        {"action": "accept", "content": {"nom": "Alice"}},
        {"action": "accept", "content": {"name": 5}},
        {"action": "accept", "content": {"name": True}},
        {"action": "accept", "content": {"name": ["Alice"]}},
    ],
)
def test_mrtr_a_declined_or_unusable_elicitation_asks_again(
    client: TestClient, answer: object
) -> None:
    name = "test_input_required_result_elicitation"
    assert send(client, name, responses={"user_name": answer}).result == asks(
        {"user_name": ASK_NAME}
    )


@pytest.mark.parametrize(
    ("name", "key", "asked", "responses"),
    [
        ("test_input_required_result_elicitation", "user_name", ASK_NAME, {}),
        ("test_input_required_result_elicitation", "user_name", ASK_NAME, {"name": ALICE}),
        ("test_input_required_result_elicitation", "user_name", ASK_NAME, {"user_name": PARIS}),
        ("test_input_required_result_elicitation", "user_name", ASK_NAME,
         {"user_name": CLIENT_ROOTS}),
        ("test_input_required_result_sampling", "capital_question", ASK_CAPITAL, {}),
        ("test_input_required_result_sampling", "capital_question", ASK_CAPITAL,
         {"capital": PARIS}),
        ("test_input_required_result_sampling", "capital_question", ASK_CAPITAL,
         {"capital_question": ALICE}),
        ("test_input_required_result_list_roots", "client_roots", ASK_ROOTS, {}),
        ("test_input_required_result_list_roots", "client_roots", ASK_ROOTS,
         {"roots": CLIENT_ROOTS}),
        ("test_input_required_result_list_roots", "client_roots", ASK_ROOTS,
         {"client_roots": PARIS}),
    ],
)  # fmt: skip
def test_mrtr_missing_or_wrong_keys_ask_again(
    client: TestClient, name: str, key: str, asked: object, responses: object
) -> None:
    """A missing key, another key or an answer of another kind is not an error: the tool
    asks again (input-required-result-missing-input-response)."""
    assert send(client, name, responses=responses).result == asks({key: asked})


def test_mrtr_extra_responses_are_ignored(client: TestClient) -> None:
    extra = {"user_name": ALICE, "unasked": CLIENT_ROOTS, "also": PARIS}
    reply = send(client, "test_input_required_result_elicitation", responses=extra)
    assert reply.result == says("Hello, Alice!")


@pytest.mark.parametrize(
    "responses",
    [
        "user_name",
        ["user_name"],
        5,
        {"user_name": "Alice"},
        {"user_name": None},
        {"user_name": {"action": "maybe"}},
        {"user_name": {"action": "accept", "content": {"name": None}}},
        {"user_name": {"action": "accept", "content": {"name": {"first": "Alice"}}}},
        {"user_name": {"action": "accept", "content": "Alice"}},
        {"user_name": {"role": "assistant", "content": {"type": "text"}, "model": "m"}},
        {"user_name": {"roots": [{"name": "R"}]}},
    ],
)
def test_mrtr_malformed_input_responses_are_invalid_params(
    client: TestClient, responses: object
) -> None:
    """The wire check of ``inputResponses`` (input-required-result-validate-input)."""
    reply = send(client, "test_input_required_result_elicitation", responses=responses)
    assert reply.error() == (400, INVALID_PARAMS_ERROR)


@pytest.mark.parametrize(
    ("name", "method", "declared", "missing"),
    [
        ("test_input_required_result_elicitation", "tools/call", {}, {"elicitation": {"form": {}}}),
        ("test_input_required_result_elicitation", "tools/call", {"elicitation": {"url": {}}},
         {"elicitation": {"form": {}}}),
        ("test_input_required_result_sampling", "tools/call", {"roots": {}}, {"sampling": {}}),
        ("test_input_required_result_list_roots", "tools/call", {"sampling": {}}, {"roots": {}}),
        ("test_input_required_result_request_state", "tools/call", {},
         {"elicitation": {"form": {}}}),
        ("test_input_required_result_multiple_inputs", "tools/call", {"sampling": {}},
         {"elicitation": {"form": {}}, "roots": {}}),
        ("test_input_required_result_multiple_inputs", "tools/call", {},
         {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}),
        ("test_input_required_result_prompt", "prompts/get", {}, {"elicitation": {"form": {}}}),
    ],
)  # fmt: skip
def test_mrtr_a_request_the_client_cannot_answer_is_32021(
    client: TestClient,
    name: str,
    method: str,
    declared: Mapping[str, object],
    missing: object,
) -> None:
    """The CONDITIONAL check when the result is emitted: every missing capability together."""
    reply = send(client, name, method=method, capabilities=declared)
    assert reply.error() == (
        400,
        {
            "code": -32021,
            "message": "Missing required client capability",
            "data": {"requiredCapabilities": missing},
        },
    )


# --- multi-round input: edge cases (each was a bug once) ------------------------------------


def test_mrtr_capabilities_with_only_url_elicitation_asks_for_nothing(client: TestClient) -> None:
    reply = send(
        client, "test_input_required_result_capabilities", capabilities={"elicitation": {"url": {}}}
    )
    assert reply.result == says("The client declared no input capability")


def _asking_endpoint(state: str) -> EndpointRegistry:
    """One tool with a conditional elicitation that logs before asking, and one with
    application-protected state ``state``."""

    @mcpkit.endpoint(path="/mcp", name="ask", version="1", revisions={MODERN})
    class Asking:
        @mcpkit.tool(
            name="log_then_ask", input_requests=[InputRequestDeclaration.elicitation_form()]
        )
        def log_then_ask(
            self, logger: RequestLogger | None
        ) -> CompleteResult | InputRequiredResult:
            if logger is not None:
                logger.info("about to ask")
            return InputRequiredResult(input_requests={"user_name": ASK_NAME})

        @mcpkit.tool(
            name="app_state",
            input_requests=[InputRequestDeclaration.elicitation_form()],
            request_state_mode=RequestStateMode.APPLICATION_PROTECTED,
        )
        def app_state(self, ctx: RequestContext) -> CompleteResult | InputRequiredResult:
            if ctx.request_state == state:
                return CompleteResult.from_tool_text("state echoed")
            return InputRequiredResult(request_state=state)

    return EndpointRegistry.from_classes(Asking)


def test_mrtr_a_conditional_refusal_after_a_log_message_is_still_400() -> None:
    with TestClient(Server(_asking_endpoint("s"))) as asking:
        params: dict[str, object] = {
            "name": "log_then_ask",
            "arguments": {},
            "_meta": {"io.modelcontextprotocol/logLevel": "info"},
        }
        response = asking.post(
            "/mcp",
            stateless_request("tools/call", params),
            headers=stateless_headers("tools/call", "log_then_ask"),
        )
        assert_valid(MODERN.wire, "tools/call", response.messages)
        assert response.status == 400
        assert response.header("content-type") == "application/json"
        error: Any = response.json
        assert error["error"]["code"] == -32021


def test_mrtr_an_application_state_the_server_writes_is_accepted_back() -> None:
    state = "s" * 2_000
    server = Server(_asking_endpoint(state), limits=Limits(max_request_state_bytes=1_024))
    with TestClient(server) as asking:
        # A state the client could not send back is refused when it is emitted, as a
        # contract failure, never written and then refused on the retry.
        assert send(asking, "app_state").error() == (500, INTERNAL_ERROR)


def test_a_server_serves_a_second_test_client_after_the_first_closed() -> None:
    server = example.server.configured()  # a copy: example.server stays usable for this module
    with TestClient(server) as first:
        assert send(first, "test_input_required_result_elicitation").result == asks(
            {"user_name": ASK_NAME}
        )
    with TestClient(server) as second:
        assert send(second, "test_input_required_result_elicitation").result == asks(
            {"user_name": ASK_NAME}
        )
