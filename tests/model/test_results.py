"""What handlers return (OR-01..13, TR-14): the sealed result family, the three payloads and
their wire bodies, checked against the official schemas of every revision.
"""

from __future__ import annotations

import dataclasses
import json
from decimal import Decimal
from typing import Any

import pytest

from mcpkit.errors import InvalidValueError
from mcpkit.json import JsonArray, JsonObject, encode, from_python
from mcpkit.model import (
    BlobResourceContents,
    EmbeddedResource,
    Icon,
    ImageContent,
    ResourceLink,
    Role,
    TextContent,
    TextResourceContents,
)
from mcpkit.model._implementation import CachePolicy, Implementation
from mcpkit.model._input import InputRequestKind
from mcpkit.model._outputs import (
    UNSET,
    PromptMessage,
    PromptOutput,
    ResourceOutput,
    ToolOutput,
    Unset,
)
from mcpkit.model._results import (
    MAX_REQUEST_STATE_BYTES,
    CompleteResult,
    InputRequiredResult,
    OperationResult,
    TaskCreatedResult,
)

from ..spec_schemas import schema_errors

SECRET = "SECRET-7f3a"
TEXT = TextContent(text="hello")
IMAGE = ImageContent(data=b"\x89PNG", mime_type="image/png")
LINK = ResourceLink(uri="file:///a.txt", name="a")
README = TextResourceContents(uri="file:///readme", text="# hi", mime_type="text/markdown")
BLOB = BlobResourceContents(uri="file:///a.bin", blob=b"\x00\x01")
ELICIT = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "GitHub user?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
}


SAMPLING = {
    "method": "sampling/createMessage",
    "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
        "maxTokens": 50,
    },
}


def refusal(build: Any) -> str:
    with pytest.raises(InvalidValueError) as caught:
        build()
    assert SECRET not in str(caught.value)
    return str(caught.value)


# --- the official schemas ----------------------------------------------------------------------

REVISIONS = ["2025-06-18", "2025-11-25", "2026-07-28"]


def body(result: Any, revision: str, **extra: Any) -> Any:
    """The result as written on ``revision``: the body plus, on 2026-07-28, ``resultType``
    (what ``mcpkit.protocol`` adds), read back as plain Python."""
    written = json.loads(encode(result.to_json()))
    if revision == "2026-07-28":
        written = {**written, "resultType": extra.pop("result_type", "complete"), **extra}
    return written


# --- OR-01 / TR-14: the sealed family ------------------------------------------------------------


def test_three_families_OR_01() -> None:
    """OR-01: an advanced handler returns one of exactly three result families."""
    for family in (CompleteResult, InputRequiredResult, TaskCreatedResult):
        assert issubclass(family, OperationResult)
    assert isinstance(CompleteResult.from_tool_text("x"), OperationResult)
    assert isinstance(InputRequiredResult(request_state="s"), OperationResult)
    assert isinstance(TaskCreatedResult[int](task_id="t"), OperationResult)


@pytest.mark.parametrize(
    "base", [OperationResult, CompleteResult, InputRequiredResult, TaskCreatedResult]
)
def test_no_other_subclass_TR_14(base: type) -> None:
    """TR-14: ``McpOperationResult`` is sealed to framework-owned families."""
    with pytest.raises(TypeError, match=r"^OperationResult is sealed"):
        type("CompleteResult", (base,), {})


def test_the_base_cannot_be_instantiated_TR_14() -> None:
    with pytest.raises(TypeError, match=r"^OperationResult is sealed"):
        OperationResult()


# --- OR-02 / OR-07: the tool factories -----------------------------------------------------------


def test_from_tool_text_OR_02() -> None:
    result = CompleteResult.from_tool_text("No matching items")
    assert result.payload == ToolOutput(content=(TextContent(text="No matching items"),))
    assert result.meta == {} and result.is_tool and not result.is_prompt and not result.is_resource
    assert body(result, "2025-06-18") == {
        "content": [{"type": "text", "text": "No matching items"}]
    }


def test_from_tool_structured_content_OR_02() -> None:
    result = CompleteResult.from_tool_structured_content({"count": 3, "ratio": 0.5})
    assert isinstance(result.payload, ToolOutput)
    assert result.payload.content == ()
    assert result.payload.structured_content == {"count": 3, "ratio": Decimal("0.5")}
    assert body(result, "2025-06-18") == {
        "content": [],
        "structuredContent": {"count": 3, "ratio": 0.5},
    }
    assert result.payload.structured_content == {"count": 3, "ratio": Decimal("0.5")}


def test_from_tool_structured_content_needs_a_value_OR_02() -> None:
    message = refusal(lambda: CompleteResult.from_tool_structured_content(UNSET))
    assert message == "ToolOutput.structured_content: must be a JSON value"
    message = refusal(lambda: CompleteResult.from_tool_structured_content({SECRET: {1}}))
    assert message == "ToolOutput.structured_content: a JSON value cannot be a set"


def test_from_tool_error_text_OR_02_OR_07() -> None:
    """OR-07: an application error is a completed result with ``isError: true``, not an
    exception; its text is the application's own."""
    result = CompleteResult.from_tool_error_text("The catalog is temporarily unavailable")
    assert isinstance(result.payload, ToolOutput) and result.payload.is_error
    assert body(result, "2026-07-28") == {
        "content": [{"type": "text", "text": "The catalog is temporarily unavailable"}],
        "isError": True,
        "resultType": "complete",
    }


@pytest.mark.parametrize(
    "factory", [CompleteResult.from_tool_text, CompleteResult.from_tool_error_text]
)
def test_tool_text_must_be_well_formed_OR_02(factory: Any) -> None:
    assert refusal(lambda: factory(SECRET + "\ud800")) == (
        "TextContent.text: text contains an unpaired surrogate"
    )


# --- OR-03 / OR-04 / OR-05: payload, metadata, copies ---------------------------------------------


def test_complete_result_wraps_one_payload_and_meta_OR_03() -> None:
    output = ToolOutput(content=(TEXT,))
    result = CompleteResult(payload=output, meta={"com.example/trace": [1, "a"]})
    assert CompleteResult(payload=output, meta=result.meta).meta is result.meta
    assert result.payload is output and type(result.meta) is JsonObject
    assert isinstance(result.meta["com.example/trace"], JsonArray)
    assert body(result, "2025-11-25") == {
        "content": [{"type": "text", "text": "hello"}],
        "_meta": {"com.example/trace": [1, "a"]},
    }


@pytest.mark.parametrize(
    "payload", [TEXT, None, {"content": []}, CompleteResult.from_tool_text("")]
)
def test_payload_must_be_one_of_three_OR_03(payload: Any) -> None:
    message = refusal(lambda: CompleteResult(payload=payload))
    assert message == "CompleteResult.payload: must be a ToolOutput, PromptOutput or ResourceOutput"


@pytest.mark.parametrize(
    "key",
    [
        "",
        "a",
        "a1",
        "a.b-c_d",
        "com.example/trace",
        "com.example/",
        "com.example.mcp/x",  # the second label is "example": not reserved
        "mcp/x",  # a single label: not reserved
        "modelcontextprotocol/x",
        "a-1.b2/Z",
    ],
)
def test_meta_keys_follow_the_mcp_key_syntax_OR_03(key: str) -> None:
    assert list(CompleteResult.from_tool_text("x").replace(meta={key: 1}).meta) == [key]


SYNTAX = "every key must follow the MCP _meta key syntax"
RESERVED = "keys with a reserved MCP prefix belong to the framework"


@pytest.mark.parametrize(
    ("key", "rule"),
    [
        ("-a", SYNTAX),
        ("a-", SYNTAX),
        ("a b", SYNTAX),
        ("1com.example/x", SYNTAX),
        ("com-/x", SYNTAX),
        ("com..example/x", SYNTAX),
        ("/x", SYNTAX),
        ("com/x/y", SYNTAX),
        ("\u00e9", SYNTAX),
        (SECRET + "\n", SYNTAX),
        ("io.modelcontextprotocol/serverInfo", RESERVED),
        ("dev.mcp/x", RESERVED),
        ("org.modelcontextprotocol.api/x", RESERVED),
        ("com.mcp.tools/", RESERVED),
        ("IO.MCP/x", RESERVED),
    ],
)
def test_meta_keys_are_checked_OR_03(key: str, rule: str) -> None:
    """Result ``_meta`` shares its object with the framework's reserved members, so reserved
    prefixes are refused rather than silently overwritten."""
    output = ToolOutput()
    assert refusal(lambda: CompleteResult(payload=output, meta={key: 1})) == (
        f"CompleteResult.meta: {rule}"
    )


@pytest.mark.parametrize("meta", [[("a", 1)], "a", None])
def test_meta_must_be_a_json_object_OR_03(meta: Any) -> None:
    message = refusal(lambda: CompleteResult(payload=ToolOutput(), meta=meta))
    assert message == "CompleteResult.meta: must be a JSON object"


def test_with_factories_have_empty_meta_OR_04() -> None:
    """OR-04: ``withToolOutput`` / ``withPromptOutput`` / ``withResourceOutput`` start with
    empty metadata."""
    tool = CompleteResult.with_tool_output(ToolOutput(is_error=True))
    prompt = CompleteResult.with_prompt_output(PromptOutput(messages=()))
    resource = CompleteResult.with_resource_output(ResourceOutput(contents=(README,)))
    assert (tool.is_tool, prompt.is_prompt, resource.is_resource) == (True, True, True)
    assert tool.meta == prompt.meta == resource.meta == {}
    assert not tool.is_prompt and not prompt.is_resource and not resource.is_tool


@pytest.mark.parametrize(
    ("factory", "rule"),
    [
        (CompleteResult.with_tool_output, "must be a ToolOutput"),
        (CompleteResult.with_prompt_output, "must be a PromptOutput"),
        (CompleteResult.with_resource_output, "must be a ResourceOutput"),
    ],
)
def test_with_factories_check_the_payload_kind_OR_04(factory: Any, rule: str) -> None:
    wrong = ResourceOutput(contents=(README,)) if "Tool" in rule else ToolOutput()
    assert refusal(lambda: factory(wrong)) == f"CompleteResult.payload: {rule}"


def test_replace_keeps_what_it_is_not_given_OR_05() -> None:
    """OR-05: Soklet's ``toBuilder()``: replace the payload or the metadata selectively."""
    original = CompleteResult.from_tool_text("a").replace(meta={"k": 1})
    assert original.replace() == original
    new_payload = original.replace(payload=PromptOutput(messages=()))
    assert new_payload.is_prompt and new_payload.meta == {"k": 1}
    new_meta = original.replace(meta={})
    assert new_meta.payload is original.payload and new_meta.meta == {}
    assert original.meta == {"k": 1} and original.is_tool


def test_replace_checks_again_OR_05() -> None:
    result = CompleteResult.from_tool_text("a")
    assert refusal(lambda: result.replace(meta={"io.mcp/x": 1})).startswith("CompleteResult.meta")
    assert refusal(lambda: result.replace(meta={"k": {SECRET}})) == (
        "CompleteResult.meta: a JSON value cannot be a set"
    )
    message = refusal(lambda: result.replace(payload=TEXT))  # type: ignore[arg-type]
    assert message.startswith("CompleteResult.payload: ")


def test_results_are_immutable() -> None:
    result = CompleteResult.from_tool_text("a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.meta = JsonObject()  # type: ignore[misc]
    assert not hasattr(result, "__dict__") and hash(result) == hash(
        CompleteResult.from_tool_text("a")
    )
    with pytest.raises(TypeError):
        CompleteResult(ToolOutput())  # type: ignore[call-arg]


# --- OR-06 / OR-12: ToolOutput -------------------------------------------------------------------


def test_tool_output_keeps_blocks_in_order_OR_06() -> None:
    """OR-06: ordered content blocks, optional structured JSON and an error flag."""
    output = ToolOutput(content=[LINK, TEXT, IMAGE], is_error=False)  # type: ignore[arg-type]
    assert output.content == (LINK, TEXT, IMAGE) and type(output.content) is tuple
    assert output.structured_content is UNSET and not output.is_error
    written = json.loads(encode(output.to_json()))
    assert [block["type"] for block in written["content"]] == ["resource_link", "text", "image"]
    assert ToolOutput().to_json() == {"content": []}


@pytest.mark.parametrize(
    ("values", "rule"),
    [
        ({"content": TEXT}, "content: must be a tuple or a list"),
        ({"content": (TEXT, "text")}, "content: every item must be a content block"),
        ({"content": (README,)}, "content: every item must be a content block"),
        ({"is_error": 1}, "is_error: must be a bool"),
        ({"is_error": None}, "is_error: must be a bool"),
        ({"structured_content": float("nan")}, "structured_content: a JSON number must be finite"),
        ({"structured_content": object()}, "structured_content: a JSON value cannot be a object"),
    ],
)
def test_tool_output_fields_are_checked_OR_06(values: dict[str, Any], rule: str) -> None:
    assert refusal(lambda: ToolOutput(**values)) == f"ToolOutput.{rule}"


@pytest.mark.parametrize(
    "value",
    [{"a": 1}, [1, "two", None], "text", 42, Decimal("1.50"), True, False, None, {}, []],
    ids=repr,
)
def test_structured_content_may_be_any_json_value_OR_12(value: Any) -> None:
    """OR-12: any JSON value on 2026-07-28, JSON null included; ``UNSET`` means none."""
    output = ToolOutput(structured_content=value)
    assert output.structured_content == value and output.structured_content is not UNSET
    assert "structuredContent" in output.to_json()
    assert output.to_json()["structuredContent"] == value


def test_structured_content_is_an_immutable_copy_OR_12() -> None:
    source = {"items": [1, 2]}
    output = ToolOutput(structured_content=source)
    source["items"].append(3)
    assert output.structured_content == {"items": [1, 2]}
    assert isinstance(output.structured_content, JsonObject)


def test_unset_is_a_singleton_distinct_from_null_OR_12() -> None:
    assert UNSET is Unset.UNSET and repr(UNSET) == "UNSET" and UNSET is not None
    assert ToolOutput(structured_content=None).to_json() == {
        "content": [],
        "structuredContent": None,
    }


def test_text_mirroring_is_not_done_by_the_model_OR_13() -> None:
    """OR-13: the text mirror is a registration option applied at write time; the result the
    application built is not changed."""
    assert CompleteResult.from_tool_structured_content({"a": 1}).payload == ToolOutput(
        structured_content=JsonObject({"a": 1})
    )


def test_tool_output_repr_shows_no_payload() -> None:
    output = ToolOutput(content=(TextContent(text=SECRET),), structured_content={"k": SECRET})
    assert (
        repr(output)
        == "ToolOutput(content=<1 blocks>, structured_content=<JSON value>, is_error=False)"
    )
    assert (
        repr(ToolOutput())
        == "ToolOutput(content=<0 blocks>, structured_content=UNSET, is_error=False)"
    )


# --- prompts and resources -----------------------------------------------------------------------


def test_prompt_output() -> None:
    messages = [
        PromptMessage(role=Role.USER, content=TextContent(text="Summarise SKU 1")),
        PromptMessage(role=Role.ASSISTANT, content=EmbeddedResource(resource=README)),
    ]
    output = PromptOutput(messages=messages, description="A summary")  # type: ignore[arg-type]
    assert output.messages == tuple(messages) and output.description == "A summary"
    assert json.loads(encode(output.to_json())) == {
        "description": "A summary",
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Summarise SKU 1"}},
            {"role": "assistant", "content": {"type": "resource", "resource": README.to_json()}},
        ],
    }
    assert PromptOutput(messages=()).to_json() == {"messages": []}


BLOCK_RULE = "must be a content block"


@pytest.mark.parametrize(
    ("kind", "values", "rule"),
    [
        (PromptMessage, {"role": "user", "content": TEXT}, "role: must be a Role"),
        (PromptMessage, {"role": Role.USER, "content": (TEXT,)}, f"content: {BLOCK_RULE}"),
        (PromptMessage, {"role": Role.USER, "content": README}, f"content: {BLOCK_RULE}"),
        (PromptOutput, {"messages": (TEXT,)}, "messages: every item must be a PromptMessage"),
        (PromptOutput, {"messages": None}, "messages: must be a tuple or a list"),
        (
            PromptOutput,
            {"messages": (), "description": SECRET + "\udfff"},
            "description: text contains an unpaired surrogate",
        ),
    ],
)
def test_prompt_fields_are_checked(kind: Any, values: dict[str, Any], rule: str) -> None:
    assert refusal(lambda: kind(**values)) == f"{kind.__name__}.{rule}"


def test_resource_output() -> None:
    output = ResourceOutput(contents=[README, BLOB])  # type: ignore[arg-type]
    assert output.contents == (README, BLOB)
    assert json.loads(encode(output.to_json())) == {
        "contents": [
            {"uri": "file:///readme", "mimeType": "text/markdown", "text": "# hi"},
            {"uri": "file:///a.bin", "blob": "AAE="},
        ]
    }


@pytest.mark.parametrize(
    ("contents", "rule"),
    [
        ((), "must not be empty; raise ResourceNotFound for a missing resource"),
        ([], "must not be empty; raise ResourceNotFound for a missing resource"),
        ((TEXT,), "every item must be a TextResourceContents or a BlobResourceContents"),
        (README, "must be a tuple or a list"),
    ],
)
def test_resource_contents_are_checked(contents: Any, rule: str) -> None:
    """A missing resource is an error, never an empty ``contents`` array (spec MUST)."""
    assert refusal(lambda: ResourceOutput(contents=contents)) == f"ResourceOutput.contents: {rule}"


# --- InputRequiredResult -------------------------------------------------------------------------


def test_input_required_result() -> None:
    result = InputRequiredResult(
        input_requests={"login": ELICIT, "roots": {"method": "roots/list"}},
        request_state="opaque",
        meta={"com.example/round": 1},
    )
    assert result.input_requests == {"login": ELICIT, "roots": {"method": "roots/list"}}
    assert isinstance(result.input_requests["login"], JsonObject)
    assert json.loads(encode(result.to_json())) == {
        "inputRequests": {"login": ELICIT, "roots": {"method": "roots/list"}},
        "requestState": "opaque",
        "_meta": {"com.example/round": 1},
    }
    assert InputRequiredResult(request_state=" ").to_json() == {"requestState": " "}
    requests_only = InputRequiredResult(input_requests=JsonObject({"q": ELICIT}))
    assert requests_only.request_state is None and requests_only.framework_state is UNSET
    assert requests_only.to_json() == {"inputRequests": {"q": ELICIT}}


def test_input_required_result_classifies_its_requests() -> None:
    """``request_kinds``: what the server checks against the operation's declarations and the
    client's capabilities (AN-03; the checks themselves are the server's)."""
    url = {"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": "x:"}}
    result = InputRequiredResult(
        input_requests={"a": ELICIT, "b": url, "c": {"method": "roots/list"}, "d": ELICIT}
    )
    assert result.request_kinds == {
        InputRequestKind.ELICITATION_FORM,
        InputRequestKind.ELICITATION_URL,
        InputRequestKind.ROOTS,
    }
    assert InputRequiredResult(request_state="s").request_kinds == frozenset()
    assert dataclasses.replace(result, input_requests={"s": SAMPLING}).request_kinds == {
        InputRequestKind.SAMPLING
    }


@pytest.mark.parametrize("state", [{"cart": [1, 2.5]}, None, "text", 0, [], {}])
def test_input_required_result_carries_framework_state(state: object) -> None:
    """The JSON the framework seals (``FRAMEWORK_PROTECTED``): any JSON value, JSON null
    included, stored immutable; never written by ``to_json`` (the server writes the sealed
    string as ``requestState``)."""
    result = InputRequiredResult(framework_state=state)
    assert result.framework_state == from_python(state)
    assert type(result.framework_state) is type(from_python(state))
    assert result.request_state is None
    assert result.to_json() == {}
    with_requests = InputRequiredResult(input_requests={"q": ELICIT}, framework_state=state)
    assert with_requests.to_json() == {"inputRequests": {"q": ELICIT}}


def test_input_required_request_state_is_bounded_in_utf8_bytes() -> None:
    """APPLICATION_PROTECTED state: at most 65,536 UTF-8 bytes, kept exactly."""
    assert MAX_REQUEST_STATE_BYTES == 65_536
    longest = "a" * 65_536
    assert InputRequiredResult(request_state=longest).request_state == longest
    wide = "é" * 32_768  # 2 bytes each
    assert InputRequiredResult(request_state=wide).request_state == wide
    for over in ("a" * 65_537, "é" * 32_768 + "a", "🚀" * 16_385):
        rule = refusal(lambda over=over: InputRequiredResult(request_state=over))
        assert rule == "InputRequiredResult.request_state: must be at most 65536 UTF-8 bytes"


def test_input_required_result_repr_hides_state() -> None:
    result = InputRequiredResult(input_requests={"q": ELICIT}, request_state=SECRET)
    framework = InputRequiredResult(framework_state={"k": SECRET})
    assert SECRET not in repr(result) and SECRET not in repr(framework)


NEITHER = "InputRequiredResult: input_requests, request_state or framework_state is required"
BOTH = "InputRequiredResult: request_state and framework_state exclude each other"
METHOD = "every request's method must be elicitation/create, sampling/createMessage or roots/list"
MEMBERS = "a request has only the members method and params"
PARAMS = "params are required for elicitation and sampling requests"


@pytest.mark.parametrize(
    ("values", "rule"),
    [
        ({}, NEITHER),
        ({"input_requests": {}}, NEITHER),
        ({"input_requests": {}, "framework_state": UNSET}, NEITHER),
        ({"request_state": "s", "framework_state": None}, BOTH),
        ({"input_requests": {"q": ELICIT}, "request_state": "s", "framework_state": {}}, BOTH),
        ({"request_state": ""}, "request_state: must not be empty"),
        ({"request_state": 5}, "request_state: a JSON string must be a str"),
        ({"framework_state": {SECRET}}, "framework_state: a JSON value cannot be a set"),
        ({"framework_state": float("nan")}, "framework_state: a JSON number must be finite"),
        ({"input_requests": [ELICIT]}, "input_requests: must be a JSON object"),
        ({"input_requests": {"q": "x"}}, "input_requests: every request must be a JSON object"),
        (
            {"input_requests": {"q": {"method": "tools/call", "params": {}}}},
            f"input_requests: {METHOD}",
        ),
        ({"input_requests": {"q": {"params": {}}}}, f"input_requests: {METHOD}"),
        ({"input_requests": {"q": {**ELICIT, "id": 1}}}, f"input_requests: {MEMBERS}"),
        ({"input_requests": {"q": {**ELICIT, "jsonrpc": "2.0"}}}, f"input_requests: {MEMBERS}"),
        ({"input_requests": {"q": {"method": "elicitation/create"}}}, f"input_requests: {PARAMS}"),
        (
            {"input_requests": {"q": {"method": "sampling/createMessage"}}},
            f"input_requests: {PARAMS}",
        ),
        (
            {"input_requests": {"q": {"method": "roots/list", "params": []}}},
            "input_requests: a request's params must be a JSON object",
        ),
        (
            {"request_state": SECRET + "\ud800"},
            "request_state: text contains an unpaired surrogate",
        ),
        ({"request_state": "s", "meta": {"io.modelcontextprotocol/x": 1}}, f"meta: {RESERVED}"),
    ],
)
def test_input_required_fields_are_checked(values: dict[str, Any], rule: str) -> None:
    """Only the three kinds of request a 2026-07-28 server may embed, each as ``{method,
    params}`` with no JSON-RPC framing; and at least one of requests and state (spec MUST)."""
    expected = rule if rule in (NEITHER, BOTH) else f"InputRequiredResult.{rule}"
    assert refusal(lambda: InputRequiredResult(**values)) == expected


# --- OR-09 / OR-10: TaskCreatedResult ------------------------------------------------------------


def test_task_created_result_carries_only_the_id_OR_09_OR_10() -> None:
    """OR-10: ``R`` is a schema contract; the value holds the task id and metadata, no future."""
    result: TaskCreatedResult[dict[str, int]] = TaskCreatedResult(task_id="task-1")
    assert result.task_id == "task-1" and result.meta == {}
    assert [field.name for field in dataclasses.fields(result)] == ["task_id", "meta"]
    assert TaskCreatedResult[int](task_id="t", meta={"k": 1}).meta == {"k": 1}
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.task_id = "other"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("values", "rule"),
    [
        ({"task_id": ""}, "task_id: must not be empty"),
        ({"task_id": 1}, "task_id: a JSON string must be a str"),
        ({"task_id": SECRET + "\ud800"}, "task_id: text contains an unpaired surrogate"),
        ({"task_id": "t", "meta": {"a b": 1}}, f"meta: {SYNTAX}"),
    ],
)
def test_task_created_fields_are_checked_OR_10(values: dict[str, Any], rule: str) -> None:
    assert refusal(lambda: TaskCreatedResult(**values)) == f"TaskCreatedResult.{rule}"


# --- wire bodies against the official schemas ----------------------------------------------------

ICON_LINK = ResourceLink(
    uri="file:///a.txt", name="a", icons=(Icon(src="https://example.com/i.png"),)
)
TOOL_RESULTS = [
    CompleteResult.from_tool_text("No matching items"),
    CompleteResult.from_tool_error_text("The catalog is temporarily unavailable"),
    CompleteResult.from_tool_structured_content({"items": [{"sku": "1", "name": "x"}]}),
    CompleteResult.with_tool_output(
        ToolOutput(content=(TEXT, IMAGE, LINK, EmbeddedResource(resource=BLOB)), is_error=False)
    ).replace(meta={"com.example/k": {"v": 1}}),
]


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("result", TOOL_RESULTS, ids=repr)
def test_tool_results_match_the_official_schema_OR_02_OR_06(
    revision: str, result: CompleteResult
) -> None:
    assert schema_errors(revision, "CallToolResult", body(result, revision)) == []


@pytest.mark.parametrize("value", [[1, 2], "text", 3, True, None], ids=repr)
def test_non_object_structured_content_is_modern_only_OR_12(value: Any) -> None:
    """OR-12: arrays, scalars and null are valid on 2026-07-28 and invalid on both 2025
    revisions, which is why the protocol layer refuses to project them there."""
    result = CompleteResult.from_tool_structured_content(value)
    assert schema_errors("2026-07-28", "CallToolResult", body(result, "2026-07-28")) == []
    for revision in ("2025-06-18", "2025-11-25"):
        assert schema_errors(revision, "CallToolResult", body(result, revision)) != []


def test_link_icons_need_projection_on_june_OR_06() -> None:
    result = CompleteResult.with_tool_output(ToolOutput(content=(ICON_LINK,)))
    assert schema_errors("2025-11-25", "CallToolResult", body(result, "2025-11-25")) == []
    assert schema_errors("2025-06-18", "CallToolResult", body(result, "2025-06-18")) != []


def test_result_meta_with_server_info_matches_the_2026_schema_OR_03() -> None:
    result = CompleteResult.from_tool_text("x").replace(meta={"com.example/k": 1})
    written = body(result, "2026-07-28")
    written["_meta"]["io.modelcontextprotocol/serverInfo"] = Implementation("srv", "1").to_json()
    assert schema_errors("2026-07-28", "CallToolResult", json.loads(encode(written))) == []


@pytest.mark.parametrize("revision", REVISIONS)
def test_prompt_results_match_the_official_schema(revision: str) -> None:
    output = PromptOutput(
        messages=(
            PromptMessage(role=Role.USER, content=TEXT),
            PromptMessage(role=Role.ASSISTANT, content=IMAGE),
            PromptMessage(role=Role.USER, content=EmbeddedResource(resource=README)),
            PromptMessage(role=Role.USER, content=LINK),
        ),
        description="A summary",
    )
    for result in (
        CompleteResult.with_prompt_output(output),
        CompleteResult.with_prompt_output(PromptOutput(messages=())).replace(meta={"k": 1}),
    ):
        assert schema_errors(revision, "GetPromptResult", body(result, revision)) == []
    assert schema_errors(revision, "PromptMessage", output.messages[0].to_json()) == []


@pytest.mark.parametrize("revision", REVISIONS)
def test_resource_results_match_the_official_schema(revision: str) -> None:
    """On 2026-07-28 a read is cacheable: the protocol layer adds the cache policy's members,
    which the schema requires."""
    result = CompleteResult.with_resource_output(ResourceOutput(contents=(README, BLOB)))
    cache = CachePolicy.PRIVATE_NO_CACHE.to_json() if revision == "2026-07-28" else {}
    assert schema_errors(revision, "ReadResourceResult", body(result, revision, **cache)) == []
    if revision == "2026-07-28":
        assert schema_errors(revision, "ReadResourceResult", body(result, revision)) != []


def test_input_required_results_match_the_2026_schema() -> None:
    results = [
        InputRequiredResult(
            input_requests={"login": ELICIT, "q1": SAMPLING, "roots": {"method": "roots/list"}},
            request_state="opaque",
        ),
        InputRequiredResult(request_state="come back later", meta={"com.example/k": 1}),
    ]
    for result in results:
        written = body(result, "2026-07-28", result_type="input_required")
        assert schema_errors("2026-07-28", "InputRequiredResult", written) == []
