"""``tools/call`` through the whole HTTP pipeline (docs/design/server.md §2.1 groups 10-17), on
every revision, with exact bodies: every tool shape, input validation per revision (IV), error
mapping (ER, OR-08), the 2025 structured-content rule (LG-06..08), output and binary ceilings
(ER-06, CB-24, CB-28), the sanitizer (IV-07), the interceptor (IV-06), mirrored ``Mcp-Param-*``
headers (MH) and the ``RequestContext`` a handler sees (HC).

Every JSON-RPC message received is checked against the official schema of its revision.
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, cast

import pytest

import mcpkit
from mcpkit import (
    Arg,
    AudioContent,
    BlobResourceContents,
    CompleteResult,
    ContentBlock,
    EmbeddedResource,
    Endpoint,
    EndpointRegistry,
    ImageContent,
    Int8,
    InvalidParams,
    InvocationFeatures,
    Limits,
    MissingClientCapability,
    OperationType,
    RequestContext,
    Revision,
    TextContent,
    ToolArguments,
    ToolOutput,
    ToolRegistration,
    endpoint,
    tool,
)
from mcpkit.errors import ConfigurationError
from mcpkit.json import JsonArray, JsonObject
from mcpkit.server import HttpRequest
from mcpkit.testing import (
    TestClient,
    TestResponse,
    handshake_request,
    stateless_headers,
    stateless_request,
)

from ..wire import assert_valid

MODERN = "2026-07-28"
NOVEMBER = "2025-11-25"
JUNE = "2025-06-18"
REVISIONS = (MODERN, NOVEMBER, JUNE)
PATH = "/mcp"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SERVER_INFO = {"name": "calls", "version": "1.0.0"}
INVALID_ARGUMENTS = "Arguments do not match the tool's inputSchema."
TOO_COMPLEX = "arguments: too complex to check within the evaluation budget"

# What the handlers, the sanitizer and the interceptor saw, in order; cleared per test.
invoked: list[str] = []
contexts: list[RequestContext] = []


@pytest.fixture(autouse=True)
def _fresh_records() -> Iterator[None]:
    invoked.clear()
    contexts.clear()
    yield
    invoked.clear()
    contexts.clear()


# --- the endpoint -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Total:
    total: int


@dataclass(frozen=True)
class Positive:
    """Binding refuses what the schema accepts: ``__post_init__`` is application validation."""

    value: int

    def __post_init__(self) -> None:
        if self.value <= 0:
            raise ValueError("secret detail 12345")


@endpoint(
    path=PATH,
    name="calls",
    version="1.0.0",
    revisions={Revision.V2025_06_18, Revision.V2025_11_25, Revision.V2026_07_28},
)
class Calls:
    @tool(name="add")
    def add(self, a: int, b: Int8) -> Total:
        invoked.append("add")
        return Total(a + b)

    @tool(name="async_add")
    async def async_add(self, a: int, b: int) -> Total:
        invoked.append("async_add")
        return Total(a + b)

    @tool(name="echo")
    def echo(self, text: str) -> CompleteResult:
        invoked.append("echo")
        return CompleteResult.from_tool_text(text)

    @tool(name="async_structured")
    async def async_structured(self, count: int) -> CompleteResult:
        invoked.append("async_structured")
        return CompleteResult.from_tool_structured_content({"items": list(range(count))})

    @tool(name="business_error")
    def business_error(self) -> CompleteResult:
        invoked.append("business_error")
        return CompleteResult.from_tool_error_text("No such order.")

    @tool(name="array_output")
    def array_output(self) -> CompleteResult:
        invoked.append("array_output")
        return CompleteResult.from_tool_structured_content([1, 2])

    @tool(name="array_with_text", mirror_structured_content=False)
    def array_with_text(self) -> CompleteResult:
        invoked.append("array_with_text")
        output = ToolOutput(content=(TextContent(text="[1,2]"),), structured_content=[1, 2])
        return CompleteResult.with_tool_output(output)

    @tool(name="fail")
    def fail(self, kind: str) -> CompleteResult:
        invoked.append(f"fail:{kind}")
        if kind == "value":
            raise ValueError("secret detail 12345")
        if kind == "params":
            raise InvalidParams()
        if kind == "capability":
            raise MissingClientCapability({"sampling": {}})
        if kind == "surrogate":
            return CompleteResult.from_tool_text("secret \ud800")
        return CompleteResult.from_tool_text("fine")

    @tool(name="async_fail")
    async def async_fail(self) -> CompleteResult:
        invoked.append("async_fail")
        raise ValueError("secret detail 12345")

    @tool(name="bad_total")
    async def bad_total(self) -> Total:
        invoked.append("bad_total")
        return Total(cast(int, "not an integer"))

    @tool(name="count")
    def count(self, items: list[int]) -> Total:
        invoked.append("count")
        return Total(len(items))

    @tool(name="whoami")
    def whoami(self, ctx: RequestContext) -> CompleteResult:
        contexts.append(ctx)
        return CompleteResult.from_tool_text("ok")

    @tool(name="region", revisions={Revision.V2026_07_28})
    def region(self, region: Annotated[str, Arg(header="Region")]) -> CompleteResult:
        invoked.append(f"region:{region}")
        return CompleteResult.from_tool_text(f"Region: {region}")

    @tool(name="zone", revisions={Revision.V2026_07_28})
    def zone(self, zone: Annotated[str | None, Arg(header="Zone")] = None) -> CompleteResult:
        invoked.append(f"zone:{zone}")
        return CompleteResult.from_tool_text(f"Zone: {zone}")


ALL = frozenset(Revision)


def raw_echo(
    ctx: RequestContext, arguments: ToolArguments[JsonObject], features: InvocationFeatures
) -> CompleteResult:
    invoked.append("json_object")
    return CompleteResult.from_tool_structured_content(arguments.raw)


def authored_handler(
    ctx: RequestContext, arguments: ToolArguments[JsonObject], features: InvocationFeatures
) -> CompleteResult:
    invoked.append("authored")
    assert arguments.converted is arguments.raw
    return CompleteResult.from_tool_structured_content({"n": arguments.raw["n"]})


def positive_handler(
    ctx: RequestContext, arguments: ToolArguments[Positive], features: InvocationFeatures
) -> Total:
    invoked.append("positive")
    return Total(arguments.converted.value)


def wrong_return(
    ctx: RequestContext, arguments: ToolArguments[dict[str, int]], features: InvocationFeatures
) -> Any:
    invoked.append("wrong_return")
    return "not a result"


def prompt_result(
    ctx: RequestContext, arguments: ToolArguments[JsonObject], features: InvocationFeatures
) -> Any:
    invoked.append("prompt_result")
    return CompleteResult.with_prompt_output(
        mcpkit.PromptOutput(
            messages=(mcpkit.PromptMessage(role=mcpkit.Role.USER, content=TextContent(text="x")),)
        )
    )


def counted(
    ctx: RequestContext, arguments: ToolArguments[JsonObject], features: InvocationFeatures
) -> CompleteResult:
    invoked.append("counted")
    items = arguments.raw["items"]
    assert isinstance(items, JsonArray)
    return CompleteResult.from_tool_text(str(len(items)))


AUTHORED_SCHEMA = {
    "type": "object",
    "properties": {"n": {"type": "integer", "minimum": 0}},
    "required": ["n"],
    "additionalProperties": False,
}
ITEMS_SCHEMA = {
    "type": "object",
    "properties": {"items": {"type": "array", "items": {"type": "integer"}}},
    "required": ["items"],
}

ENDPOINT: Endpoint = (
    EndpointRegistry.from_classes(Calls)
    .endpoints[0]
    .with_tools(
        ToolRegistration.json_object(name="json_object", revisions=ALL, handler=raw_echo),
        ToolRegistration.authored(
            name="authored", revisions=ALL, input_schema=AUTHORED_SCHEMA, handler=authored_handler
        ),
        ToolRegistration.typed(
            name="positive",
            revisions=ALL,
            arguments=Positive,
            output=Total,
            handler=positive_handler,
        ),
        ToolRegistration.advanced(
            name="wrong_return", revisions=ALL, arguments=dict[str, int], handler=wrong_return
        ),
        ToolRegistration.json_object(name="prompt_result", revisions=ALL, handler=prompt_result),
        ToolRegistration.authored(
            name="budget",
            revisions=ALL,
            input_schema=ITEMS_SCHEMA,
            handler=counted,
            limits=Limits(max_evaluation_operations=20),
        ),
    )
)


# --- helpers ------------------------------------------------------------------------------------


def exchange(
    client: TestClient,
    revision: str,
    method: str,
    params: dict[str, object],
    *,
    id: str | int = 1,
    name: str | None = None,
    headers: dict[str, str] | None = None,
) -> TestResponse:
    """Send one request the way a client of ``revision`` does; check every message received."""
    sent: dict[str, str]
    if revision == MODERN:
        body = stateless_request(method, params, id=id)
        sent = stateless_headers(method, name)
    else:
        body = handshake_request(method, params, id=id)
        sent = {"MCP-Protocol-Version": revision}
    sent.update(headers or {})
    response = client.post(PATH, body, headers=sent)
    assert_valid(revision, method, response.messages)
    return response


def call(
    client: TestClient,
    revision: str,
    name: str,
    arguments: object = None,
    *,
    id: str | int = 1,
    meta: dict[str, object] | None = None,
    headers: dict[str, str] | None = None,
) -> TestResponse:
    params: dict[str, object] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    if meta is not None:
        params["_meta"] = meta
    return exchange(client, revision, "tools/call", params, id=id, name=name, headers=headers)


def result(revision: str, body: Mapping[str, object], *, id: str | int = 1) -> dict[str, object]:
    """The expected response holding ``body``: ``resultType`` and ``serverInfo`` on 2026."""
    out = dict(body)
    if revision == MODERN:
        out["resultType"] = "complete"
        out["_meta"] = {SERVER_INFO_KEY: SERVER_INFO}
    return {"jsonrpc": "2.0", "id": id, "result": out}


def error(code: int, message: str, *, id: str | int = 1, data: object = None) -> dict[str, object]:
    body: dict[str, object] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": id, "error": body}


def text(value: str) -> dict[str, object]:
    return {"type": "text", "text": value}


def invalid_arguments(revision: str, detail: str | None = None) -> tuple[int, dict[str, object]]:
    """IV-01..03, IV-09: the isError result saying where and why (``detail``, in the schema's
    terms), or the fixed -32602 in HTTP 200 on 2025-06-18."""
    if revision == JUNE:
        return 200, error(-32602, INVALID_ARGUMENTS)
    said = INVALID_ARGUMENTS if detail is None else f"{INVALID_ARGUMENTS[:-1]}: {detail}."
    return 200, result(revision, {"content": [text(said)], "isError": True})


def status(revision: str, modern: int) -> int:
    """Errors keep their class status on 2026-07-28 and are HTTP 200 on the 2025 revisions."""
    return modern if revision == MODERN else 200


def assert_json(response: TestResponse, expected_status: int, expected: object) -> None:
    assert response.status == expected_status
    assert response.header("content-type") == "application/json"
    assert response.header("cache-control") == "no-store"
    assert response.json == expected


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(mcpkit.Server(ENDPOINT)) as test_client:
        yield test_client


# --- success, every shape -----------------------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("name", ["add", "async_add"])
def test_typed_tools_return_structured_content_and_its_text_mirror(
    client: TestClient, revision: str, name: str
) -> None:
    """OR-12, OR-13: a typed ``def`` and ``async def`` tool; the structured content is mirrored
    into one text block."""
    response = call(client, revision, name, {"a": 40, "b": 2})
    expected = {"content": [text('{"total":42}')], "structuredContent": {"total": 42}}
    assert_json(response, 200, result(revision, expected))
    assert invoked == [name]


@pytest.mark.parametrize("revision", REVISIONS)
def test_advanced_def_tool_returns_its_complete_result(client: TestClient, revision: str) -> None:
    """OR-01, OR-02: an advanced tool's ``CompleteResult`` is written as it is."""
    response = call(client, revision, "echo", {"text": "héllo 🌍"})
    assert_json(response, 200, result(revision, {"content": [text("héllo 🌍")]}))
    assert invoked == ["echo"]


@pytest.mark.parametrize("revision", REVISIONS)
def test_advanced_async_tool_structured_content_is_mirrored(
    client: TestClient, revision: str
) -> None:
    """OR-13 for an ``async def`` advanced tool."""
    response = call(client, revision, "async_structured", {"count": 3})
    expected = {"content": [text('{"items":[0,1,2]}')], "structuredContent": {"items": [0, 1, 2]}}
    assert_json(response, 200, result(revision, expected))
    assert invoked == ["async_structured"]


@pytest.mark.parametrize("revision", REVISIONS)
def test_json_object_tool_gets_the_raw_object(client: TestClient, revision: str) -> None:
    """TR-09: ``json_object`` accepts any object and hands it over unchanged."""
    arguments = {"x": [1, {"y": None}], "z": "w"}
    response = call(client, revision, "json_object", arguments)
    expected = {"content": [text('{"x":[1,{"y":null}],"z":"w"}')], "structuredContent": arguments}
    assert_json(response, 200, result(revision, expected))
    assert invoked == ["json_object"]


@pytest.mark.parametrize("revision", REVISIONS)
def test_json_object_tool_without_arguments_gets_an_empty_object(
    client: TestClient, revision: str
) -> None:
    """An absent ``arguments`` member is the empty object."""
    response = call(client, revision, "json_object")
    expected = {"content": [text("{}")], "structuredContent": {}}
    assert_json(response, 200, result(revision, expected))


@pytest.mark.parametrize("revision", REVISIONS)
def test_authored_schema_tool(client: TestClient, revision: str) -> None:
    """TR-10: an authored schema validates; the handler gets the raw object."""
    response = call(client, revision, "authored", {"n": 7})
    expected = {"content": [text('{"n":7}')], "structuredContent": {"n": 7}}
    assert_json(response, 200, result(revision, expected))
    assert invoked == ["authored"]


@pytest.mark.parametrize("revision", REVISIONS)
def test_business_error_is_a_successful_exchange(client: TestClient, revision: str) -> None:
    """IV-12, OR-07, ER-18: ``from_tool_error_text`` is an ``isError`` result in HTTP 200."""
    response = call(client, revision, "business_error")
    expected = {"content": [text("No such order.")], "isError": True}
    assert_json(response, 200, result(revision, expected))


@pytest.mark.parametrize("request_id", ["1", 1, "", 0, -7, "x" * 40])
def test_request_id_is_echoed_with_its_type(client: TestClient, request_id: str | int) -> None:
    """HC-06: ids are echoed exactly; ``"1"`` is not ``1``."""
    response = call(client, MODERN, "echo", {"text": "t"}, id=request_id)
    assert_json(response, 200, result(MODERN, {"content": [text("t")]}, id=request_id))


# --- input validation (IV) ----------------------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize(
    ("name", "arguments", "detail"),
    [
        ("add", {"a": "forty", "b": 2}, "a: must be an integer"),  # wrong type
        ("add", {"a": 1}, "b: required"),  # missing property
        ("add", {"a": 1, "b": 2, "c": 3}, "arguments: has a member the schema does not allow"),
        ("add", {"a": 1, "b": 128}, "b: must be at most 127"),  # Int8 out of range
        ("async_add", {"a": 1.5, "b": 2}, "a: must be an integer"),  # not an integer
        ("echo", {"text": 5}, "text: must be a string"),
        ("async_structured", {}, "count: required"),
        ("authored", {"n": -1}, "n: must be at least 0"),
        (
            "authored",
            {"n": 1, "secret": "hunter2"},
            "arguments: has a member the schema does not allow",  # its name is never said
        ),
    ],
)
def test_schema_invalid_arguments_per_revision(
    client: TestClient, revision: str, name: str, arguments: dict[str, object], detail: str
) -> None:
    """IV-01, IV-03, IV-04, IV-05, IV-09, IV-14, ER-02, ER-03: an ``isError`` result on
    2025-11-25 and 2026-07-28 naming the location and the constraint in the schema's terms (so
    a model can correct the call), the fixed -32602 in HTTP 200 on 2025-06-18; no submitted
    value or undeclared name is echoed; the handler is never invoked."""
    response = call(client, revision, name, arguments)
    assert_json(response, *invalid_arguments(revision, detail))
    assert b"secret" not in response.body and b"hunter2" not in response.body
    assert invoked == []


@pytest.mark.parametrize("revision", REVISIONS)
def test_binding_failure_behaves_like_a_schema_failure(client: TestClient, revision: str) -> None:
    """IV-02: the schema accepts ``value: 0`` but the argument type's constructor refuses it;
    the outcome is the same fixed result, the handler is not invoked, nothing leaks."""
    response = call(client, revision, "positive", {"value": 0})
    assert_json(response, *invalid_arguments(revision))
    assert b"12345" not in response.body
    assert invoked == []
    accepted = call(client, revision, "positive", {"value": 3})
    expected = {"content": [text('{"total":3}')], "structuredContent": {"total": 3}}
    assert_json(accepted, 200, result(revision, expected))
    assert invoked == ["positive"]


@pytest.mark.parametrize("revision", REVISIONS)
def test_exhausted_evaluation_budget_is_the_same_safe_result(
    client: TestClient, revision: str
) -> None:
    """IV-13: a valid document that needs more than ``max_evaluation_operations`` (20, the
    tool's limits) gets the invalid-arguments outcome, before the handler."""
    response = call(client, revision, "budget", {"items": list(range(200))})
    assert_json(response, *invalid_arguments(revision, TOO_COMPLEX))
    assert invoked == []
    small = call(client, revision, "budget", {"items": [1]})
    assert_json(small, 200, result(revision, {"content": [text("1")]}))
    assert invoked == ["counted"]


@pytest.mark.parametrize("revision", [MODERN])
def test_server_evaluation_budget_applies_to_decorated_tools(revision: str) -> None:
    """IV-13, JL-07: ``Server(limits=Limits(max_evaluation_operations=...))`` bounds every
    tool's input evaluation, decorator-built ones included."""
    server = mcpkit.Server(ENDPOINT, limits=Limits(max_evaluation_operations=5))
    with TestClient(server) as small:
        response = call(small, revision, "count", {"items": list(range(200))})
    assert_json(response, *invalid_arguments(revision, TOO_COMPLEX))
    assert invoked == []


# --- protocol errors ----------------------------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
def test_unknown_tool_is_invalid_params(client: TestClient, revision: str) -> None:
    """IV-10, ER-04: -32602 on every revision (HTTP 400 on 2026-07-28, 200 on 2025)."""
    response = call(client, revision, "nope", {})
    assert_json(response, status(revision, 400), error(-32602, "Invalid params"))


@pytest.mark.parametrize("revision", [NOVEMBER, JUNE])
def test_tool_of_another_revision_is_unknown(client: TestClient, revision: str) -> None:
    """A tool that selects only 2026-07-28 does not exist for a 2025 request."""
    response = call(client, revision, "region", {"region": "eu"})
    assert_json(response, 200, error(-32602, "Invalid params"))
    assert invoked == []


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize(
    "params",
    [
        {},
        {"name": 7},
        {"name": None},
        {"name": "echo", "arguments": [1]},
        {"name": "echo", "arguments": "text"},
        {"name": "echo", "arguments": None},
    ],
)
def test_malformed_call_params_are_invalid_params(
    client: TestClient, revision: str, params: dict[str, object]
) -> None:
    """IV-10, IV-15, ER-05: a missing or non-string ``name`` and non-object ``arguments`` are
    -32602 before any handler."""
    name = params.get("name")
    headers = {"Mcp-Name": name if isinstance(name, str) else "x"}
    response = exchange(client, revision, "tools/call", params, headers=headers)
    assert_json(response, status(revision, 400), error(-32602, "Invalid params"))
    assert invoked == []


# --- handler failures (IV-11, ER-07, OR-08) -----------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize(("name", "arguments"), [("fail", {"kind": "value"}), ("async_fail", {})])
def test_handler_exception_is_the_fixed_internal_error(
    client: TestClient, revision: str, name: str, arguments: dict[str, object]
) -> None:
    """IV-11: a raised exception is -32603 (500 on 2026-07-28, 200 on 2025), never echoed."""
    response = call(client, revision, name, arguments)
    assert_json(response, status(revision, 500), error(-32603, "Internal error"))
    assert b"secret" not in response.body


@pytest.mark.parametrize("revision", REVISIONS)
def test_construction_exception_is_the_fixed_internal_error(
    client: TestClient, revision: str
) -> None:
    """ER-07, CB-19: building text with an unpaired surrogate fails in the handler; the value
    is not exposed."""
    response = call(client, revision, "fail", {"kind": "surrogate"})
    assert_json(response, status(revision, 500), error(-32603, "Internal error"))
    assert b"secret" not in response.body


@pytest.mark.parametrize("revision", REVISIONS)
def test_raised_invalid_params_keeps_its_code(client: TestClient, revision: str) -> None:
    """OR-08: a protocol error raised on purpose keeps its wire form."""
    response = call(client, revision, "fail", {"kind": "params"})
    assert_json(response, status(revision, 400), error(-32602, "Invalid params"))
    assert invoked == ["fail:params"]


@pytest.mark.parametrize("revision", REVISIONS)
def test_raised_missing_capability_keeps_its_code_and_data(
    client: TestClient, revision: str
) -> None:
    """OR-08: -32021 with ``data.requiredCapabilities`` as an object."""
    response = call(client, revision, "fail", {"kind": "capability"})
    expected = error(
        -32021,
        "Missing required client capability",
        data={"requiredCapabilities": {"sampling": {}}},
    )
    assert_json(response, status(revision, 400), expected)


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("name", ["wrong_return", "prompt_result"])
def test_advanced_tool_returning_no_tool_result_is_internal_error(
    client: TestClient, revision: str, name: str
) -> None:
    """OR-01: a value that is not a tool's ``CompleteResult`` is the fixed -32603."""
    arguments: dict[str, object] = {"a": 1} if name == "wrong_return" else {}
    response = call(client, revision, name, arguments)
    assert_json(response, status(revision, 500), error(-32603, "Internal error"))
    assert invoked == [name]


@pytest.mark.parametrize("name", ["array_output", "array_with_text"])
def test_non_object_structured_content_is_valid_on_2026(client: TestClient, name: str) -> None:
    """OR-12: any JSON value is structured content on 2026-07-28."""
    response = call(client, MODERN, name)
    expected = {"content": [text("[1,2]")], "structuredContent": [1, 2]}
    assert_json(response, 200, result(MODERN, expected))


@pytest.mark.parametrize("revision", [NOVEMBER, JUNE])
@pytest.mark.parametrize("name", ["array_output", "array_with_text"])
def test_non_object_structured_content_fails_on_2025(
    client: TestClient, revision: str, name: str
) -> None:
    """LG-06, LG-07, LG-08: never wrapped or dropped, a text block does not help; the fixed
    -32603 in HTTP 200, and the handler ran exactly once."""
    response = call(client, revision, name)
    assert_json(response, 200, error(-32603, "Internal error"))
    assert invoked == [name]


@pytest.mark.parametrize("revision", REVISIONS)
def test_typed_output_violating_its_schema_is_internal_error_in_200(
    client: TestClient, revision: str
) -> None:
    """ER-06, OR-12: an output-schema violation is -32603 in HTTP 200 on every revision."""
    response = call(client, revision, "bad_total")
    assert_json(response, 200, error(-32603, "Internal error"))
    assert b"not an integer" not in response.body
    assert invoked == ["bad_total"]


# --- output ceilings (ER-06, CB-24, CB-28) ------------------------------------------------------


BINARY_LIMIT = 48


@endpoint(
    path=PATH,
    name="calls",
    version="1.0.0",
    revisions={Revision.V2025_06_18, Revision.V2025_11_25, Revision.V2026_07_28},
)
class Sized:
    @tool(name="text")
    def text_of(self, size: int) -> CompleteResult:
        return CompleteResult.from_tool_text("x" * size)

    @tool(name="image")
    async def image(self, size: int) -> CompleteResult:
        block = ImageContent(data=b"\x89" * size, mime_type="image/png")
        return CompleteResult.with_tool_output(ToolOutput(content=(block,)))

    @tool(name="binary")
    def binary(self, kind: str, size: int) -> CompleteResult:
        blocks: tuple[ContentBlock, ...] = (TextContent(text="small"),)
        if kind == "audio":
            blocks += (AudioContent(data=b"\x01" * size, mime_type="audio/wav"),)
        else:
            blob = BlobResourceContents(uri="test://blob", blob=b"\x01" * size)
            blocks += (EmbeddedResource(resource=blob),)
        return CompleteResult.with_tool_output(ToolOutput(content=blocks))

    @tool(name="record")
    def record(self, size: int) -> Total:
        return Total(10**size)


@pytest.fixture
def sized() -> Iterator[TestClient]:
    limits = Limits(max_response_bytes=1024, max_binary_item_bytes=BINARY_LIMIT)
    with TestClient(mcpkit.Server(Sized, limits=limits)) as test_client:
        yield test_client


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize(("name", "size"), [("text", 1024), ("text", 5000), ("record", 1100)])
def test_output_over_the_response_limit_is_internal_error_in_200(
    sized: TestClient, revision: str, name: str, size: int
) -> None:
    """ER-06, CB-26, JL-21: a response over ``max_response_bytes`` (1,024 here) is -32603 in
    HTTP 200 on every revision, wrappers counted."""
    response = call(sized, revision, name, {"size": size})
    assert_json(response, 200, error(-32603, "Internal error"))
    assert len(response.body) < 1024


@pytest.mark.parametrize("revision", REVISIONS)
def test_output_within_the_response_limit_is_written(sized: TestClient, revision: str) -> None:
    response = call(sized, revision, "text", {"size": 500})
    assert_json(response, 200, result(revision, {"content": [text("x" * 500)]}))


@pytest.mark.parametrize("revision", REVISIONS)
def test_binary_item_at_the_limit_is_written(sized: TestClient, revision: str) -> None:
    """CB-24: exactly ``max_binary_item_bytes`` raw bytes is allowed."""
    response = call(sized, revision, "image", {"size": BINARY_LIMIT})
    data = base64.b64encode(b"\x89" * BINARY_LIMIT).decode("ascii")
    expected = {"content": [{"type": "image", "data": data, "mimeType": "image/png"}]}
    assert_json(response, 200, result(revision, expected))


@pytest.mark.parametrize("revision", REVISIONS)
def test_binary_item_over_the_limit_is_internal_error_in_200(
    sized: TestClient, revision: str
) -> None:
    """CB-24, CB-28: one byte over the per-item ceiling is the fixed -32603 in HTTP 200."""
    response = call(sized, revision, "image", {"size": BINARY_LIMIT + 1})
    assert_json(response, 200, error(-32603, "Internal error"))


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("kind", ["audio", "embedded"])
def test_audio_and_embedded_blob_items_have_the_same_ceiling(
    sized: TestClient, revision: str, kind: str
) -> None:
    """CB-24, CB-28, CB-29: audio and embedded blob items, wherever they sit in the content."""
    data = base64.b64encode(b"\x01" * BINARY_LIMIT).decode("ascii")
    block: dict[str, object]
    if kind == "audio":
        block = {"type": "audio", "data": data, "mimeType": "audio/wav"}
    else:
        block = {"type": "resource", "resource": {"uri": "test://blob", "blob": data}}
    at_limit = call(sized, revision, "binary", {"kind": kind, "size": BINARY_LIMIT})
    assert_json(at_limit, 200, result(revision, {"content": [text("small"), block]}))
    over = call(sized, revision, "binary", {"kind": kind, "size": BINARY_LIMIT + 1})
    assert_json(over, 200, error(-32603, "Internal error"))


# --- the sanitizer (IV-07) ----------------------------------------------------------------------


Seen = tuple[str | None, str, dict[str, object], CompleteResult]


def recording_sanitizer(seen: list[Seen]) -> Callable[..., CompleteResult]:
    def sanitize(
        ctx: RequestContext, tool_name: str, raw: JsonObject, result: CompleteResult
    ) -> CompleteResult:
        seen.append((ctx.operation_name, tool_name, dict(raw), result))
        payload = result.payload
        assert isinstance(payload, ToolOutput)
        output = ToolOutput(
            content=(TextContent(text="[sanitized]"),),
            structured_content=payload.structured_content,
            is_error=payload.is_error,
        )
        return result.replace(payload=output)

    return sanitize


@pytest.mark.parametrize("revision", REVISIONS)
def test_sanitizer_rewrites_every_complete_tool_result(revision: str) -> None:
    """IV-07 (the sanitizer part): typed, advanced and business-error results all pass
    through the sanitizer, which sees the context, the tool name and the raw arguments."""
    seen: list[Seen] = []
    with TestClient(mcpkit.Server(ENDPOINT, sanitizer=recording_sanitizer(seen))) as client:
        typed = call(client, revision, "add", {"a": 1, "b": 2})
        advanced = call(client, revision, "echo", {"text": "raw"})
        business = call(client, revision, "business_error")
    expected = {"content": [text("[sanitized]")], "structuredContent": {"total": 3}}
    assert_json(typed, 200, result(revision, expected))
    assert_json(advanced, 200, result(revision, {"content": [text("[sanitized]")]}))
    sanitized_error = {"content": [text("[sanitized]")], "isError": True}
    assert_json(business, 200, result(revision, sanitized_error))
    assert [(name, tool_name, raw) for name, tool_name, raw, _ in seen] == [
        ("add", "add", {"a": 1, "b": 2}),
        ("echo", "echo", {"text": "raw"}),
        ("business_error", "business_error", {}),
    ]
    assert seen[1][3].payload == ToolOutput(content=(TextContent(text="raw"),))


@pytest.mark.parametrize("revision", [MODERN, NOVEMBER])
def test_sanitizer_sees_the_generated_invalid_arguments_result(revision: str) -> None:
    """IV-07: the generated invalid-arguments result goes through the sanitizer too."""
    seen: list[Seen] = []
    with TestClient(mcpkit.Server(ENDPOINT, sanitizer=recording_sanitizer(seen))) as client:
        response = call(client, revision, "add", {"a": "x", "b": 2})
    expected = {"content": [text("[sanitized]")], "isError": True}
    assert_json(response, 200, result(revision, expected))
    assert [(name, tool_name, raw) for name, tool_name, raw, _ in seen] == [
        ("add", "add", {"a": "x", "b": 2})
    ]
    said = f"{INVALID_ARGUMENTS[:-1]}: a: must be an integer."
    assert seen[0][3].payload == ToolOutput(content=(TextContent(text=said),), is_error=True)
    assert invoked == []


def test_sanitizer_is_not_called_for_the_june_invalid_params_error() -> None:
    """IV-09: on 2025-06-18 the failure is a JSON-RPC error, not a result to sanitize."""
    seen: list[Seen] = []
    with TestClient(mcpkit.Server(ENDPOINT, sanitizer=recording_sanitizer(seen))) as client:
        response = call(client, JUNE, "add", {"a": "x", "b": 2})
    assert_json(response, 200, error(-32602, INVALID_ARGUMENTS))
    assert seen == []


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("returned", ["raise", "wrong type", "prompt result"])
def test_failing_sanitizer_is_internal_error(revision: str, returned: str) -> None:
    """A sanitizer that raises or returns something other than a tool result fails closed."""

    def sanitize(
        ctx: RequestContext, tool_name: str, raw: JsonObject, result: CompleteResult
    ) -> Any:
        if returned == "raise":
            raise RuntimeError("secret detail 12345")
        if returned == "wrong type":
            return "text"
        return CompleteResult.with_prompt_output(mcpkit.PromptOutput(messages=()))

    with TestClient(mcpkit.Server(ENDPOINT, sanitizer=sanitize)) as client:
        response = call(client, revision, "echo", {"text": "t"})
    assert_json(response, status(revision, 500), error(-32603, "Internal error"))
    assert b"secret" not in response.body


def test_async_sanitizer_is_refused_when_the_server_is_built() -> None:
    """The sanitizer runs where the result is written (in a ``def`` tool's worker thread),
    so it must be a plain ``def``; an ``async def`` one is a ``ConfigurationError`` at once,
    never a per-request failure (IV-07)."""

    async def sanitize(
        ctx: RequestContext, tool_name: str, raw: JsonObject, result: CompleteResult
    ) -> CompleteResult:
        return result

    with pytest.raises(ConfigurationError, match="plain def"):
        mcpkit.Server(ENDPOINT, sanitizer=cast(Any, sanitize))


# --- the interceptor (IV-06) --------------------------------------------------------------------


def recording_interceptor(
    seen: list[tuple[str, str | None]], results: list[object]
) -> Callable[[RequestContext, Callable[[], Awaitable[object]]], Awaitable[object]]:
    async def intercept(ctx: RequestContext, proceed: Callable[[], Awaitable[object]]) -> object:
        seen.append((ctx.method, ctx.operation_name))
        returned = await proceed()
        results.append(returned)
        return returned

    return intercept


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        (
            "add",
            {"a": 1, "b": 2},
            {"content": [text('{"total":3}')], "structuredContent": {"total": 3}},
        ),
        (
            "async_add",
            {"a": 1, "b": 2},
            {"content": [text('{"total":3}')], "structuredContent": {"total": 3}},
        ),
        ("echo", {"text": "hi"}, {"content": [text("hi")]}),
        ("authored", {"n": 3}, {"content": [text('{"n":3}')], "structuredContent": {"n": 3}}),
    ],
)
def test_interceptor_wraps_the_call_and_its_result_passes(
    revision: str, name: str, arguments: dict[str, object], expected: dict[str, object]
) -> None:
    """The interceptor runs around validation and the handler (``def`` and ``async def``);
    what ``proceed`` gave it passes unchanged to the client."""
    seen: list[tuple[str, str | None]] = []
    results: list[object] = []
    interceptor = recording_interceptor(seen, results)
    with TestClient(mcpkit.Server(ENDPOINT, interceptor=interceptor)) as client:
        response = call(client, revision, name, arguments)
    assert_json(response, 200, result(revision, expected))
    assert seen == [("tools/call", name)]
    assert len(results) == 1
    assert invoked == [name]


@pytest.mark.parametrize("revision", REVISIONS)
def test_interceptor_runs_before_validation(revision: str) -> None:
    """IV-06: the interceptor is called even when the arguments are invalid; then validation
    fails and the handler is not invoked."""
    seen: list[tuple[str, str | None]] = []
    results: list[object] = []
    interceptor = recording_interceptor(seen, results)
    with TestClient(mcpkit.Server(ENDPOINT, interceptor=interceptor)) as client:
        response = call(client, revision, "add", {"a": "x", "b": 2})
    assert_json(response, *invalid_arguments(revision, "a: must be an integer"))
    assert seen == [("tools/call", "add")]
    assert invoked == []


def test_interceptor_is_not_called_for_an_unknown_tool() -> None:
    """Target lookup (group 11) comes before the interceptor (group 13)."""
    seen: list[tuple[str, str | None]] = []
    interceptor = recording_interceptor(seen, [])
    with TestClient(mcpkit.Server(ENDPOINT, interceptor=interceptor)) as client:
        response = call(client, MODERN, "nope", {})
    assert_json(response, 400, error(-32602, "Invalid params"))
    assert seen == []


@pytest.mark.parametrize("revision", REVISIONS)
def test_interceptor_returning_an_unrecognised_value_is_internal_error(revision: str) -> None:
    """An interceptor result still goes through result recognition."""

    async def intercept(ctx: RequestContext, proceed: Callable[[], Awaitable[object]]) -> object:
        await proceed()
        return "replaced"

    with TestClient(mcpkit.Server(ENDPOINT, interceptor=intercept)) as client:
        response = call(client, revision, "echo", {"text": "t"})
    assert_json(response, status(revision, 500), error(-32603, "Internal error"))


@pytest.mark.parametrize("revision", [MODERN])
def test_interceptor_short_circuit_is_recognised_and_sanitized(revision: str) -> None:
    """an interceptor may answer without calling the handler; its
    result is recognised, sanitized and written like the handler's."""
    seen: list[Seen] = []

    async def intercept(ctx: RequestContext, proceed: Callable[[], Awaitable[object]]) -> object:
        return CompleteResult.from_tool_text("short-circuit")

    server = mcpkit.Server(ENDPOINT, interceptor=intercept, sanitizer=recording_sanitizer(seen))
    with TestClient(server) as client:
        response = call(client, revision, "echo", {"text": "t"})
    assert_json(response, 200, result(revision, {"content": [text("[sanitized]")]}))
    assert invoked == []
    assert [tool_name for _, tool_name, _, _ in seen] == ["echo"]


def test_interceptor_continuation_is_one_shot() -> None:
    """a second ``proceed()`` fails (the interceptor's own failure, a
    private internal error) and the handler runs once."""

    async def intercept(ctx: RequestContext, proceed: Callable[[], Awaitable[object]]) -> object:
        await proceed()
        return await proceed()

    with TestClient(mcpkit.Server(ENDPOINT, interceptor=intercept)) as client:
        response = call(client, MODERN, "echo", {"text": "t"})
    assert invoked == ["echo"]
    assert_json(response, 500, error(-32603, "Internal error"))


@pytest.mark.parametrize("revision", REVISIONS)
def test_interceptor_rethrowing_the_handler_error_keeps_it(revision: str) -> None:
    """rethrowing the exact exception keeps the handler's error."""
    raised: list[BaseException] = []

    async def intercept(ctx: RequestContext, proceed: Callable[[], Awaitable[object]]) -> object:
        try:
            return await proceed()
        except Exception as exc:
            raised.append(exc)
            raise

    with TestClient(mcpkit.Server(ENDPOINT, interceptor=intercept)) as client:
        response = call(client, revision, "fail", {"kind": "params"})
    assert_json(response, status(revision, 400), error(-32602, "Invalid params"))
    assert [type(exc) for exc in raised] == [InvalidParams]


@pytest.mark.parametrize("revision", REVISIONS)
def test_interceptor_raising_is_internal_error_and_skips_the_handler(revision: str) -> None:
    async def intercept(ctx: RequestContext, proceed: Callable[[], Awaitable[object]]) -> object:
        raise RuntimeError("secret detail 12345")

    with TestClient(mcpkit.Server(ENDPOINT, interceptor=intercept)) as client:
        response = call(client, revision, "echo", {"text": "t"})
    assert_json(response, status(revision, 500), error(-32603, "Internal error"))
    assert invoked == []


# --- mirrored Mcp-Param-* headers (MH) ----------------------------------------------------------


def test_agreeing_mirrored_header_is_accepted(client: TestClient) -> None:
    """MH-02: the header and the JSON argument agree."""
    headers = {"Mcp-Param-Region": "eu-west"}
    response = call(client, MODERN, "region", {"region": "eu-west"}, headers=headers)
    assert_json(response, 200, result(MODERN, {"content": [text("Region: eu-west")]}))
    assert invoked == ["region:eu-west"]


@pytest.mark.parametrize(
    ("arguments", "headers"),
    [
        ({"region": "eu"}, {}),  # MH-20: missing header
        ({"region": "eu"}, {"Mcp-Param-Region": "us"}),  # MH-02: disagreement
        ({}, {"Mcp-Param-Region": "eu"}),  # MH-03: header without argument
        ({"region": "eu"}, {"Mcp-Param-Region": "EU"}),  # values are case-sensitive
    ],
)
def test_mirrored_header_failures_are_header_mismatch_before_the_handler(
    client: TestClient, arguments: dict[str, object], headers: dict[str, str]
) -> None:
    """MH-02, MH-03, MH-18, MH-19, MH-20, ER-08: HTTP 400 / -32020 ``Header mismatch``, before
    the handler (and before argument validation)."""
    response = call(client, MODERN, "region", arguments, headers=headers)
    named = {"header": "mcp-param-region"}  # the tool's own header, never a value
    assert_json(response, 400, error(-32020, "Header mismatch", data=named))
    assert invoked == []


def test_optional_mirrored_argument_absent_without_header_is_fine(client: TestClient) -> None:
    """MH-03: an absent optional argument needs no header."""
    response = call(client, MODERN, "zone", {})
    assert_json(response, 200, result(MODERN, {"content": [text("Zone: None")]}))


@pytest.mark.parametrize("arguments", [{}, {"zone": None}])
def test_header_never_supplies_a_missing_or_null_argument(
    client: TestClient, arguments: dict[str, object]
) -> None:
    """MH-03: a header alone never stands in for the JSON argument."""
    response = call(client, MODERN, "zone", arguments, headers={"Mcp-Param-Zone": "a"})
    assert_json(response, 400, error(-32020, "Header mismatch", data={"header": "mcp-param-zone"}))
    assert invoked == []


def test_mirror_check_comes_before_the_interceptor() -> None:
    """MH-19: the header check is group 11, before the interceptor."""
    seen: list[tuple[str, str | None]] = []
    interceptor = recording_interceptor(seen, [])
    with TestClient(mcpkit.Server(ENDPOINT, interceptor=interceptor)) as client:
        response = call(client, MODERN, "region", {"region": "eu"})
    assert_json(
        response, 400, error(-32020, "Header mismatch", data={"header": "mcp-param-region"})
    )
    assert seen == []


# --- the RequestContext a handler sees (HC) -----------------------------------------------------


def test_context_of_a_modern_call(client: TestClient) -> None:
    """HC-04..10, HC-12: everything the request carried, from validated values."""
    meta = {
        "io.modelcontextprotocol/clientInfo": {"name": "probe-client", "version": "9.9"},
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "tracestate": "vendor=1",
        "custom/key": [1, 2],
    }
    capabilities: dict[str, object] = {"sampling": {}, "elicitation": {"form": {}}}
    body = stateless_request(
        "tools/call",
        {"name": "whoami", "arguments": {}, "_meta": meta},
        id="1",
        capabilities=capabilities,
    )
    response = client.post(PATH, body, headers=stateless_headers("tools/call", "whoami"))
    assert_valid(MODERN, "tools/call", response.messages)
    assert_json(response, 200, result(MODERN, {"content": [text("ok")]}, id="1"))
    (ctx,) = contexts
    assert ctx.revision is Revision.V2026_07_28
    assert ctx.method == "tools/call"
    assert ctx.operation_type is OperationType.TOOLS_CALL
    assert ctx.request_id == "1" and type(ctx.request_id) is str
    assert ctx.operation_name == "whoami"
    assert ctx.client_capabilities == capabilities
    assert ctx.client_info == {"name": "probe-client", "version": "9.9"}
    assert ctx.meta == {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        **meta,
    }
    assert dict(ctx.trace) == {
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "tracestate": "vendor=1",
    }
    assert ctx.identity is None
    assert ctx.input_responses is None and ctx.request_state is None
    assert dict(ctx.path_parameters) == {}
    assert ctx.endpoint is ENDPOINT
    request = ctx.http_request
    assert isinstance(request, HttpRequest)
    assert request.method == "POST"
    assert request.raw_path == PATH
    assert ("mcp-method", "tools/call") in request.headers
    assert ("mcp-name", "whoami") in request.headers


@pytest.mark.parametrize("revision", [NOVEMBER, JUNE])
@pytest.mark.parametrize("request_id", [1, "1"])
def test_context_of_a_legacy_call(client: TestClient, revision: str, request_id: str | int) -> None:
    """HC-06, HC-07: on 2025 there is no per-request client metadata; the id keeps its type."""
    response = call(client, revision, "whoami", {}, id=request_id)
    assert_json(response, 200, result(revision, {"content": [text("ok")]}, id=request_id))
    (ctx,) = contexts
    assert ctx.revision is Revision(revision)
    assert ctx.method == "tools/call"
    assert ctx.request_id == request_id and type(ctx.request_id) is type(request_id)
    assert ctx.operation_name == "whoami"
    assert ctx.client_capabilities == {}
    assert ctx.client_info is None
    assert ctx.meta == {}
    assert dict(ctx.trace) == {}
    assert ctx.identity is None
    assert isinstance(ctx.http_request, HttpRequest)


def test_context_carries_the_admitted_identity() -> None:
    """HC-10: the identity admission accepted reaches the handler."""
    identity = object()

    def admit(request: mcpkit.AdmissionRequest) -> mcpkit.Admitted:
        return mcpkit.Admitted(identity=identity)

    with TestClient(mcpkit.Server(ENDPOINT, admission=admit)) as client:
        response = call(client, MODERN, "whoami", {})
    assert_json(response, 200, result(MODERN, {"content": [text("ok")]}))
    (ctx,) = contexts
    assert ctx.identity is identity
