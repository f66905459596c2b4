"""The other operations through the whole HTTP pipeline, on every revision, with exact bodies:
``prompts/get``, ``resources/read`` (exact and templated), ``completion/complete``, an
application-owned ``resources/list`` handler, static catalog pagination, capability gating and
``server/discover`` (docs/design/server.md §2.1; checklist groups ER,
OR, CB-24..29, HC, CT-10).

Every JSON-RPC message received is checked against the official schema of its revision.
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Annotated

import pytest

import mcpkit
from mcpkit import (
    BlobResourceContents,
    CachePolicy,
    CompleteResult,
    Completion,
    EndpointRegistry,
    InvalidParams,
    Limits,
    OperationType,
    PromptMessage,
    PromptOutput,
    RequestContext,
    ResourceDescriptor,
    ResourceListPage,
    ResourceNotFound,
    ResourceOutput,
    Revision,
    Role,
    TextContent,
    TextResourceContents,
    UriParam,
    endpoint,
    prompt,
    resource,
    resource_list,
    tool,
)
from mcpkit.json import JsonArray, encode, from_python
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
LEGACY = (NOVEMBER, JUNE)
ALL = {Revision.V2025_06_18, Revision.V2025_11_25, Revision.V2026_07_28}
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
OPS_INFO = {"name": "ops", "version": "2.0.0"}
BARE_INFO = {"name": "bare", "version": "1.0.0"}
LISTING_INFO = {"name": "listing", "version": "1.0.0"}
EXACT_CACHE = {"ttlMs": 60000, "cacheScope": "public"}
TEMPLATE_CACHE = {"ttlMs": 5000, "cacheScope": "private"}
LISTING_CACHE = {"ttlMs": 30000, "cacheScope": "public"}
NO_CACHE = {"ttlMs": 0, "cacheScope": "private"}
BINARY_LIMIT = 32
NAMES = ("ada", "alan", "grace")

# What the application callbacks saw, in order; cleared per test.
seen: list[tuple[str, str | None, object]] = []


@pytest.fixture(autouse=True)
def _fresh_records() -> Iterator[None]:
    seen.clear()
    yield
    seen.clear()


def record(ctx: RequestContext, detail: object) -> None:
    assert ctx.operation_type is OperationType.for_method(ctx.method)
    seen.append((ctx.method, ctx.operation_name, detail))


def complete_name(ctx: RequestContext, value: str, arguments: Mapping[str, str]) -> Completion:
    record(ctx, ("complete_name", value, dict(arguments)))
    return Completion(tuple(name for name in NAMES if name.startswith(value)))


async def complete_item(
    ctx: RequestContext, value: str, arguments: Mapping[str, str]
) -> Completion:
    record(ctx, ("complete_item", value, dict(arguments)))
    return Completion((f"{value}1", f"{value}2"), total=10, has_more=True)


def document(value: object) -> str:
    return encode(from_python(value)).decode("utf-8")


@endpoint(
    path="/mcp",
    name="ops",
    version="2.0.0",
    revisions=ALL,
    instructions="Use the tools wisely.",
    resource_list_cache=CachePolicy(60000, "public"),
    resource_template_list_cache=CachePolicy(5000, "private"),
)
class Ops:
    @tool(name="noop")
    def noop(self) -> CompleteResult:
        return CompleteResult.from_tool_text("ok")

    @prompt(name="greet", description="Greets someone", completions={"name": complete_name})
    def greet(self, ctx: RequestContext, name: str, style: str | None = None) -> PromptOutput:
        record(ctx, {"name": name, "style": style})
        text = TextContent(text=f"Hello {name} ({style})")
        return PromptOutput(
            messages=(PromptMessage(role=Role.USER, content=text),),
            description=f"Greeting for {name}",
        )

    @prompt(name="raw")
    async def raw(self, ctx: RequestContext, topic: str) -> CompleteResult:
        record(ctx, {"topic": topic})
        output = PromptOutput(
            messages=(
                PromptMessage(role=Role.USER, content=TextContent(text=topic)),
                PromptMessage(role=Role.ASSISTANT, content=TextContent(text="ok")),
            )
        )
        return CompleteResult.with_prompt_output(output).replace(meta={"example.com/k": [1]})

    @prompt(name="broken")
    def broken(self) -> PromptOutput:
        raise ValueError("secret detail 12345")

    @prompt(name="refuses")
    def refuses(self) -> PromptOutput:
        raise InvalidParams()

    @resource(uri="test://static", name="static", mime_type="text/plain")
    def static(self, ctx: RequestContext) -> ResourceOutput:
        record(ctx, None)
        contents = TextResourceContents(
            uri="test://static", text="static text", mime_type="text/plain"
        )
        return ResourceOutput(contents=(contents,))

    @resource(
        uri="test://items/{id}/parts/{part}",
        name="item",
        completions={"id": complete_item},
    )
    async def item(
        self, ctx: RequestContext, item_id: Annotated[str, UriParam("id")], part: str
    ) -> ResourceOutput:
        record(ctx, {"id": item_id, "part": part})
        text = document({"id": item_id, "part": part})
        contents = TextResourceContents(uri="test://items/x/parts/y", text=text)
        return ResourceOutput(contents=(contents,))

    @resource(uri="test://gone", name="gone")
    def gone(self) -> ResourceOutput:
        raise ResourceNotFound()

    @resource(uri="test://blob/at-limit", name="blob-at-limit")
    def blob_at_limit(self) -> ResourceOutput:
        blob = BlobResourceContents(uri="test://blob/at-limit", blob=b"\x01" * BINARY_LIMIT)
        return ResourceOutput(contents=(blob,))

    @resource(uri="test://blob/over-limit", name="blob-over-limit")
    def blob_over_limit(self) -> ResourceOutput:
        blob = BlobResourceContents(uri="test://blob/over-limit", blob=b"\x01" * (BINARY_LIMIT + 1))
        return ResourceOutput(contents=(blob,))

    @resource(uri="test://wrong", name="wrong")
    def wrong(self) -> ResourceOutput:
        return CompleteResult.from_tool_text("not a resource")  # type: ignore[return-value]


@endpoint(path="/bare", name="bare", version="1.0.0", revisions=ALL)
class Bare:
    @tool(name="only")
    def only(self) -> CompleteResult:
        return CompleteResult.from_tool_text("ok")


LISTING_PAGES = {
    None: ResourceListPage(
        (ResourceDescriptor("test://one", "one", mime_type="text/plain"),), next_cursor="page-2"
    ),
    "page-2": ResourceListPage(
        (ResourceDescriptor("test://two", "two", size=3), ResourceDescriptor("test://3", "3")),
        next_cursor="",
    ),
    "": ResourceListPage(()),
}


@endpoint(
    path="/listing",
    name="listing",
    version="1.0.0",
    revisions=ALL,
    resource_list_cache=CachePolicy(30000, "public"),
)
class Listing:
    @resource_list()
    def pages(self, ctx: RequestContext, cursor: str | None) -> ResourceListPage:
        record(ctx, cursor)
        if cursor == "wrong":
            return "not a page"  # type: ignore[return-value]
        page = LISTING_PAGES.get(cursor)
        if page is None:
            raise InvalidParams()
        return page


REGISTRY = EndpointRegistry.from_classes(Ops, Bare, Listing)
LIMITS = Limits(max_binary_item_bytes=BINARY_LIMIT)


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(mcpkit.Server(REGISTRY, limits=LIMITS)) as test_client:
        yield test_client


# --- helpers ------------------------------------------------------------------------------------


def exchange(
    client: TestClient,
    revision: str,
    method: str,
    params: dict[str, object] | None = None,
    *,
    path: str = "/mcp",
    id: str | int = 1,
    name: str | None = None,
) -> TestResponse:
    """Send one request the way a client of ``revision`` does; check every message received."""
    headers: dict[str, str]
    if revision == MODERN:
        body = stateless_request(method, params, id=id)
        headers = stateless_headers(method, name)
    else:
        body = handshake_request(method, params, id=id)
        headers = {"MCP-Protocol-Version": revision}
    response = client.post(path, body, headers=headers)
    assert_valid(revision, method, response.messages)
    return response


def result(
    revision: str,
    body: Mapping[str, object],
    *,
    info: Mapping[str, object] = OPS_INFO,
    cache: Mapping[str, object] | None = None,
    meta: Mapping[str, object] | None = None,
    id: str | int = 1,
) -> dict[str, object]:
    """The expected response: on 2026 ``resultType``, cache hints and ``serverInfo`` too."""
    out = dict(body)
    out_meta = dict(meta or {})
    if revision == MODERN:
        out["resultType"] = "complete"
        if cache is not None:
            out.update(cache)
        out_meta[SERVER_INFO_KEY] = dict(info)
    if out_meta:
        out["_meta"] = out_meta
    return {"jsonrpc": "2.0", "id": id, "result": out}


def error(code: int, message: str, *, id: str | int = 1, data: object = None) -> dict[str, object]:
    body: dict[str, object] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": id, "error": body}


INVALID_PARAMS = (-32602, "Invalid params")
INTERNAL = (-32603, "Internal error")
NOT_FOUND = (-32601, "Method not found")


def status(revision: str, modern: int) -> int:
    return modern if revision == MODERN else 200


def assert_json(response: TestResponse, expected_status: int, expected: object) -> None:
    assert response.status == expected_status
    assert response.header("content-type") == "application/json"
    assert response.json == expected


def text(value: str) -> dict[str, object]:
    return {"type": "text", "text": value}


def get_prompt(
    client: TestClient, revision: str, name: object, arguments: object = None
) -> TestResponse:
    params: dict[str, object] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    header_name = name if isinstance(name, str) else None
    return exchange(client, revision, "prompts/get", params, name=header_name)


def read(client: TestClient, revision: str, uri: str) -> TestResponse:
    return exchange(client, revision, "resources/read", {"uri": uri}, name=uri)


# --- prompts/get --------------------------------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
def test_prompt_output_with_all_arguments(client: TestClient, revision: str) -> None:
    response = get_prompt(client, revision, "greet", {"name": "Ada", "style": "warm"})
    expected = {
        "description": "Greeting for Ada",
        "messages": [{"role": "user", "content": text("Hello Ada (warm)")}],
    }
    assert_json(response, 200, result(revision, expected))
    assert seen == [("prompts/get", "greet", {"name": "Ada", "style": "warm"})]


@pytest.mark.parametrize("revision", REVISIONS)
def test_absent_optional_prompt_argument_is_none(client: TestClient, revision: str) -> None:
    response = get_prompt(client, revision, "greet", {"name": "Ada"})
    expected = {
        "description": "Greeting for Ada",
        "messages": [{"role": "user", "content": text("Hello Ada (None)")}],
    }
    assert_json(response, 200, result(revision, expected))
    assert seen == [("prompts/get", "greet", {"name": "Ada", "style": None})]


@pytest.mark.parametrize("revision", REVISIONS)
def test_async_prompt_returning_a_complete_result_keeps_its_meta(
    client: TestClient, revision: str
) -> None:
    """OR-03: the result ``_meta`` survives; ``serverInfo`` joins it on 2026-07-28."""
    response = get_prompt(client, revision, "raw", {"topic": "cats"})
    expected = {
        "messages": [
            {"role": "user", "content": text("cats")},
            {"role": "assistant", "content": text("ok")},
        ]
    }
    assert_json(response, 200, result(revision, expected, meta={"example.com/k": [1]}))


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("greet", {"name": 5}),  # arguments must be strings
        ("greet", {"name": "Ada", "style": None}),
        ("greet", {"name": ["Ada"]}),
        ("greet", {}),  # missing required argument
        ("greet", None),  # no arguments at all
        ("greet", {"style": "warm"}),
        ("greet", {"name": "Ada", "tone": "x"}),  # unknown argument
        ("greet", ["Ada"]),  # arguments not an object
        ("greet", "Ada"),
        ("nope", {}),  # unknown prompt
        ("Greet", {"name": "Ada"}),  # names are exact
        (7, {}),  # name not a string
    ],
)
def test_bad_prompt_requests_are_invalid_params(
    client: TestClient, revision: str, name: object, arguments: object
) -> None:
    """unknown prompt, missing required argument, non-string arguments:
    -32602 (HTTP 400 on 2026-07-28, 200 on 2025), before the handler."""
    if name == 7 and revision == MODERN:
        body = stateless_request("prompts/get", {"name": 7, "arguments": arguments})
        response = client.post(
            "/mcp", body, headers={**stateless_headers("prompts/get"), "Mcp-Name": "7"}
        )
        assert_valid(revision, "prompts/get", response.messages)
    else:
        response = get_prompt(client, revision, name, arguments)
    assert_json(response, status(revision, 400), error(*INVALID_PARAMS))
    assert seen == []


@pytest.mark.parametrize("revision", REVISIONS)
def test_prompt_handler_exception_is_internal_error(client: TestClient, revision: str) -> None:
    """IV-11, ER-07 for prompts: fixed, never echoed."""
    response = get_prompt(client, revision, "broken")
    assert_json(response, status(revision, 500), error(*INTERNAL))
    assert b"secret" not in response.body


@pytest.mark.parametrize("revision", REVISIONS)
def test_prompt_raising_invalid_params_keeps_it(client: TestClient, revision: str) -> None:
    response = get_prompt(client, revision, "refuses")
    assert_json(response, status(revision, 400), error(*INVALID_PARAMS))


# --- resources/read -----------------------------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
def test_exact_resource_read(client: TestClient, revision: str) -> None:
    """``ttlMs`` / ``cacheScope`` on 2026-07-28 (the endpoint's resource
    cache policy), never on 2025."""
    response = read(client, revision, "test://static")
    contents = [{"uri": "test://static", "mimeType": "text/plain", "text": "static text"}]
    assert_json(response, 200, result(revision, {"contents": contents}, cache=EXACT_CACHE))
    assert seen == [("resources/read", "test://static", None)]


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize(
    ("uri", "variables"),
    [
        ("test://items/42/parts/head", {"id": "42", "part": "head"}),
        ("test://items/a%20b/parts/%C3%A9t%C3%A9", {"id": "a b", "part": "été"}),
        ("test://items/x%2Fy/parts/%25", {"id": "x/y", "part": "%"}),
    ],
)
def test_template_resource_read_decodes_variables(
    client: TestClient, revision: str, uri: str, variables: dict[str, str]
) -> None:
    """the template matches and its variables arrive percent-decoded; the
    template cache policy applies on 2026-07-28."""
    response = read(client, revision, uri)
    contents = [{"uri": "test://items/x/parts/y", "text": document(variables)}]
    assert_json(response, 200, result(revision, {"contents": contents}, cache=TEMPLATE_CACHE))
    assert seen == [("resources/read", uri, variables)]


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize(
    "uri", ["test://unknown", "test://static/", "TEST://static", "test://items/1/parts"]
)
def test_unknown_resource_is_not_found_per_revision(
    client: TestClient, revision: str, uri: str
) -> None:
    """-32002 in HTTP 200 on 2025, -32602 with HTTP 400 on
    2026-07-28, both with ``data.uri`` (SEP-2164); never an empty ``contents``."""
    response = read(client, revision, uri)
    if revision == MODERN:
        assert_json(response, 400, error(*INVALID_PARAMS, data={"uri": uri}))
    else:
        assert_json(response, 200, error(-32002, "Resource not found", data={"uri": uri}))
    assert seen == []


@pytest.mark.parametrize("revision", REVISIONS)
def test_handler_raising_resource_not_found_is_mapped_per_revision(
    client: TestClient, revision: str
) -> None:
    response = read(client, revision, "test://gone")
    data = {"uri": "test://gone"}
    if revision == MODERN:
        assert_json(response, 400, error(*INVALID_PARAMS, data=data))
    else:
        assert_json(response, 200, error(-32002, "Resource not found", data=data))


@pytest.mark.parametrize("revision", REVISIONS)
def test_blob_at_the_binary_limit_is_written(client: TestClient, revision: str) -> None:
    """CB-24, CB-29: exactly ``max_binary_item_bytes`` raw bytes is allowed."""
    response = read(client, revision, "test://blob/at-limit")
    blob = base64.b64encode(b"\x01" * BINARY_LIMIT).decode("ascii")
    contents = [{"uri": "test://blob/at-limit", "blob": blob}]
    assert_json(response, 200, result(revision, {"contents": contents}, cache=EXACT_CACHE))


@pytest.mark.parametrize("revision", REVISIONS)
def test_blob_over_the_binary_limit_is_internal_error_in_200(
    client: TestClient, revision: str
) -> None:
    """CB-24, CB-28, CB-29: one byte over is the fixed -32603 in HTTP 200."""
    response = read(client, revision, "test://blob/over-limit")
    assert_json(response, 200, error(*INTERNAL))


@pytest.mark.parametrize("revision", REVISIONS)
def test_resource_handler_returning_another_result_is_internal_error(
    client: TestClient, revision: str
) -> None:
    response = read(client, revision, "test://wrong")
    assert_json(response, status(revision, 500), error(*INTERNAL))


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("params", [{}, {"uri": 5}, {"uri": None}])
def test_resource_read_without_a_string_uri_is_invalid_params(
    client: TestClient, revision: str, params: dict[str, object]
) -> None:
    if revision == MODERN:
        body = stateless_request("resources/read", params)
        headers = {**stateless_headers("resources/read"), "Mcp-Name": "x"}
        response = client.post("/mcp", body, headers=headers)
        assert_valid(revision, "resources/read", response.messages)
    else:
        response = exchange(client, revision, "resources/read", params)
    assert_json(response, status(revision, 400), error(*INVALID_PARAMS))


# --- completion/complete ------------------------------------------------------------------------


def complete(
    client: TestClient,
    revision: str,
    ref: object,
    argument: object,
    context: object = None,
    *,
    path: str = "/mcp",
) -> TestResponse:
    params: dict[str, object] = {"ref": ref, "argument": argument}
    if context is not None:
        params["context"] = context
    return exchange(client, revision, "completion/complete", params, path=path)


@pytest.mark.parametrize("revision", REVISIONS)
def test_prompt_argument_completion(client: TestClient, revision: str) -> None:
    """a ``def`` completer gets the partial value and the resolved context."""
    response = complete(
        client,
        revision,
        {"type": "ref/prompt", "name": "greet"},
        {"name": "name", "value": "a"},
        {"arguments": {"style": "warm"}},
    )
    body = {"completion": {"values": ["ada", "alan"], "hasMore": False}}
    assert_json(response, 200, result(revision, body))
    assert seen == [("completion/complete", None, ("complete_name", "a", {"style": "warm"}))]


@pytest.mark.parametrize("revision", REVISIONS)
def test_template_variable_completion_with_an_async_completer(
    client: TestClient, revision: str
) -> None:
    response = complete(
        client,
        revision,
        {"type": "ref/resource", "uri": "test://items/{id}/parts/{part}"},
        {"name": "id", "value": "x"},
    )
    body = {"completion": {"values": ["x1", "x2"], "total": 10, "hasMore": True}}
    assert_json(response, 200, result(revision, body))
    assert seen == [("completion/complete", None, ("complete_item", "x", {}))]


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize(
    ("ref", "argument"),
    [
        ({"type": "ref/prompt", "name": "greet"}, "style"),
        ({"type": "ref/resource", "uri": "test://items/{id}/parts/{part}"}, "part"),
    ],
)
def test_argument_without_a_completer_completes_to_nothing(
    client: TestClient, revision: str, ref: dict[str, object], argument: str
) -> None:
    response = complete(client, revision, ref, {"name": argument, "value": "w"})
    body = {"completion": {"values": [], "hasMore": False}}
    assert_json(response, 200, result(revision, body))
    assert seen == []


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize(
    ("ref", "argument", "context"),
    [
        ({"type": "ref/prompt", "name": "nope"}, {"name": "name", "value": ""}, None),
        ({"type": "ref/prompt", "name": "greet"}, {"name": "nope", "value": ""}, None),
        ({"type": "ref/resource", "uri": "test://items/{x}"}, {"name": "x", "value": ""}, None),
        ({"type": "ref/resource", "uri": "test://static"}, {"name": "id", "value": ""}, None),
        (
            {"type": "ref/resource", "uri": "test://items/{id}/parts/{part}"},
            {"name": "nope", "value": ""},
            None,
        ),
        ({"type": "ref/tool", "name": "noop"}, {"name": "name", "value": ""}, None),  # bad type
        ({"name": "greet"}, {"name": "name", "value": ""}, None),
        ({"type": "ref/prompt"}, {"name": "name", "value": ""}, None),
        ({"type": "ref/prompt", "name": 7}, {"name": "name", "value": ""}, None),
        ({"type": "ref/resource", "uri": None}, {"name": "id", "value": ""}, None),
        ("ref/prompt", {"name": "name", "value": ""}, None),
        ({"type": "ref/prompt", "name": "greet"}, {"name": "name"}, None),
        ({"type": "ref/prompt", "name": "greet"}, {"name": "name", "value": 1}, None),
        ({"type": "ref/prompt", "name": "greet"}, ["name", "a"], None),
        ({"type": "ref/prompt", "name": "greet"}, {"name": "name", "value": ""}, []),
        (
            {"type": "ref/prompt", "name": "greet"},
            {"name": "name", "value": ""},
            {"arguments": {"style": 1}},
        ),
    ],
)
def test_bad_completion_requests_are_invalid_params(
    client: TestClient, revision: str, ref: object, argument: object, context: object
) -> None:
    """an unknown ref, an argument the ref does not have, a ref type other
    than ``ref/prompt`` / ``ref/resource``, or a malformed member is -32602."""
    response = complete(client, revision, ref, argument, context)
    assert_json(response, status(revision, 400), error(*INVALID_PARAMS))
    assert seen == []


# --- capability gating --------------------------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("prompts/list", {}),
        ("prompts/get", {"name": "greet"}),
        ("resources/list", {}),
        ("resources/templates/list", {}),
        ("resources/read", {"uri": "test://static"}),
        (
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "greet"},
                "argument": {"name": "n", "value": ""},
            },
        ),
    ],
)
def test_methods_of_unadvertised_capabilities_are_method_not_found(
    client: TestClient, revision: str, method: str, params: dict[str, object]
) -> None:
    """no ``prompts`` (or ``resources``, ``completions``)
    capability means -32601 (HTTP 404 on 2026-07-28, 200 on 2025)."""
    name = params.get("name", params.get("uri"))
    response = exchange(
        client,
        revision,
        method,
        params,
        path="/bare",
        name=name if isinstance(name, str) else None,
    )
    assert_json(response, status(revision, 404), error(*NOT_FOUND))


@pytest.mark.parametrize("revision", REVISIONS)
def test_tools_list_works_where_tools_are_advertised(client: TestClient, revision: str) -> None:
    response = exchange(client, revision, "tools/list", {}, path="/bare")
    tools = [{"name": "only", "inputSchema": {"type": "object", "additionalProperties": False}}]
    assert_json(response, 200, result(revision, {"tools": tools}, info=BARE_INFO, cache=NO_CACHE))


# --- server/discover ----------------------------------------------------------------------------


def test_discover_exact_body(client: TestClient) -> None:
    """versions newest first, capabilities, instructions,
    cache hints and ``serverInfo`` in ``_meta`` (no top-level ``serverInfo``)."""
    response = exchange(client, MODERN, "server/discover")
    expected = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "resultType": "complete",
            "supportedVersions": ["2026-07-28", "2025-11-25", "2025-06-18"],
            "capabilities": {
                "tools": {},
                "prompts": {},
                "resources": {},
                "completions": {},
                "logging": {},
            },
            "instructions": "Use the tools wisely.",
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {SERVER_INFO_KEY: OPS_INFO},
        },
    }
    assert_json(response, 200, expected)


def test_discover_uses_the_servers_cache_policy() -> None:
    server = mcpkit.Server(REGISTRY, limits=LIMITS, discover_cache=CachePolicy(3_600_000, "public"))
    with TestClient(server) as client:
        response = exchange(client, MODERN, "server/discover", path="/bare")
    expected = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "resultType": "complete",
            "supportedVersions": ["2026-07-28", "2025-11-25", "2025-06-18"],
            "capabilities": {"tools": {}, "logging": {}},
            "ttlMs": 3_600_000,
            "cacheScope": "public",
            "_meta": {SERVER_INFO_KEY: BARE_INFO},
        },
    }
    assert_json(response, 200, expected)


@pytest.mark.parametrize("revision", LEGACY)
def test_discover_does_not_exist_on_2025(client: TestClient, revision: str) -> None:
    response = exchange(client, revision, "server/discover")
    assert_json(response, 200, error(*NOT_FOUND))


# --- the resource list handler (CT-10, PE-07) ---------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
def test_resource_list_handler_pages_pass_the_cursor_through(
    client: TestClient, revision: str
) -> None:
    """CT-10: the handler's pages, its order and its cursors (``""`` is a cursor); the
    endpoint's cache policy on 2026-07-28."""

    def page(cursor: object) -> TestResponse:
        params: dict[str, object] = {} if cursor is None else {"cursor": cursor}
        return exchange(client, revision, "resources/list", params, path="/listing")

    first = page(None)
    body = {
        "resources": [{"uri": "test://one", "name": "one", "mimeType": "text/plain"}],
        "nextCursor": "page-2",
    }
    assert_json(first, 200, result(revision, body, info=LISTING_INFO, cache=LISTING_CACHE))
    second = page("page-2")
    body = {
        "resources": [
            {"uri": "test://two", "name": "two", "size": 3},
            {"uri": "test://3", "name": "3"},
        ],
        "nextCursor": "",
    }
    assert_json(second, 200, result(revision, body, info=LISTING_INFO, cache=LISTING_CACHE))
    last = page("")
    assert_json(
        last, 200, result(revision, {"resources": []}, info=LISTING_INFO, cache=LISTING_CACHE)
    )
    assert seen == [
        ("resources/list", None, None),
        ("resources/list", None, "page-2"),
        ("resources/list", None, ""),
    ]


@pytest.mark.parametrize("revision", REVISIONS)
def test_resource_list_handler_refusing_a_cursor(client: TestClient, revision: str) -> None:
    response = exchange(client, revision, "resources/list", {"cursor": "forged"}, path="/listing")
    assert_json(response, status(revision, 400), error(*INVALID_PARAMS))


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("cursor", [5, [], {}, True])
def test_non_string_cursor_is_invalid_params_before_the_handler(
    client: TestClient, revision: str, cursor: object
) -> None:
    response = exchange(client, revision, "resources/list", {"cursor": cursor}, path="/listing")
    assert_json(response, status(revision, 400), error(*INVALID_PARAMS))
    assert seen == []


@pytest.mark.parametrize("revision", [MODERN])
def test_null_cursor_is_invalid_params_before_the_handler(
    client: TestClient, revision: str
) -> None:
    response = exchange(client, revision, "resources/list", {"cursor": None}, path="/listing")
    assert_json(response, status(revision, 400), error(*INVALID_PARAMS))
    assert seen == []


@pytest.mark.parametrize("revision", REVISIONS)
def test_null_cursor_is_refused_by_the_static_catalog(client: TestClient, revision: str) -> None:
    response = exchange(client, revision, "resources/list", {"cursor": None})
    assert_json(response, status(revision, 400), error(*INVALID_PARAMS))


@pytest.mark.parametrize("revision", REVISIONS)
def test_resource_list_handler_returning_no_page_is_internal_error(
    client: TestClient, revision: str
) -> None:
    response = exchange(client, revision, "resources/list", {"cursor": "wrong"}, path="/listing")
    assert_json(response, status(revision, 500), error(*INTERNAL))


# --- static catalog pagination ------------------------------------------------------------------


@endpoint(path="/paged", name="paged", version="1.0.0", revisions=ALL)
class Paged:
    @tool(name="gamma")
    def gamma(self) -> CompleteResult:
        return CompleteResult.from_tool_text("g")

    @tool(name="alpha")
    def alpha(self) -> CompleteResult:
        return CompleteResult.from_tool_text("a")

    @tool(name="beta")
    def beta(self) -> CompleteResult:
        return CompleteResult.from_tool_text("b")


PAGED_INFO = {"name": "paged", "version": "1.0.0"}


def tool_entry(name: str) -> dict[str, object]:
    return {"name": name, "inputSchema": {"type": "object", "additionalProperties": False}}


@pytest.fixture
def paged() -> Iterator[TestClient]:
    with TestClient(mcpkit.Server(Paged, page_size=1)) as test_client:
        yield test_client


@pytest.mark.parametrize("revision", REVISIONS)
def test_tools_list_pages_follow_next_cursor(paged: TestClient, revision: str) -> None:
    """one tool per page, ``nextCursor`` on all but the last, followed to the
    end; the same cache scope on every page (2026-07-28)."""
    names: list[str] = []
    cursors: list[str] = []
    params: dict[str, object] = {}
    for _ in range(3):
        response = exchange(paged, revision, "tools/list", params, path="/paged")
        message = response.json
        assert isinstance(message, Mapping)
        page = message["result"]
        assert isinstance(page, Mapping)
        entries = page["tools"]
        assert isinstance(entries, JsonArray)
        (entry,) = entries
        assert isinstance(entry, Mapping)
        name = entry["name"]
        assert isinstance(name, str)
        names.append(name)
        body: dict[str, object] = {"tools": [tool_entry(name)]}
        if "nextCursor" in page:
            cursor = page["nextCursor"]
            assert isinstance(cursor, str)
            cursors.append(cursor)
            body["nextCursor"] = cursor
            params = {"cursor": cursor}
        expected = result(revision, body, info=PAGED_INFO, cache=NO_CACHE)
        assert_json(response, 200, expected)
    assert names == ["alpha", "beta", "gamma"]
    assert len(cursors) == 2 and len(set(cursors)) == 2


def first_cursor(client: TestClient, revision: str, method: str) -> str:
    response = exchange(client, revision, method, {}, path="/paged")
    message = response.json
    assert isinstance(message, Mapping)
    page = message["result"]
    assert isinstance(page, Mapping)
    cursor = page["nextCursor"]
    assert isinstance(cursor, str)
    return cursor


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize(
    "forged", ["", "abc", "A" * 22, None, 1, "page-2", "AAAAAAAAAAAAAAAAAAAAAAAA"]
)
def test_forged_cursor_is_invalid_params(paged: TestClient, revision: str, forged: object) -> None:
    """anything this catalog did not issue is -32602."""
    response = exchange(paged, revision, "tools/list", {"cursor": forged}, path="/paged")
    assert_json(response, status(revision, 400), error(*INVALID_PARAMS))


@pytest.mark.parametrize(("issued", "used"), [(MODERN, NOVEMBER), (NOVEMBER, JUNE), (JUNE, MODERN)])
def test_cursor_of_another_revision_is_refused(paged: TestClient, issued: str, used: str) -> None:
    cursor = first_cursor(paged, issued, "tools/list")
    response = exchange(paged, used, "tools/list", {"cursor": cursor}, path="/paged")
    assert_json(response, status(used, 400), error(*INVALID_PARAMS))


@pytest.mark.parametrize("revision", REVISIONS)
def test_tampered_cursor_is_refused(paged: TestClient, revision: str) -> None:
    cursor = first_cursor(paged, revision, "tools/list")
    tampered = cursor[:-1] + ("A" if cursor[-1] != "A" else "B")
    response = exchange(paged, revision, "tools/list", {"cursor": tampered}, path="/paged")
    assert_json(response, status(revision, 400), error(*INVALID_PARAMS))


# --- the interceptor wraps application handlers only --------------------------------------------


def intercepting(calls: list[tuple[str, str | None]]) -> Callable[..., Awaitable[object]]:
    async def intercept(ctx: RequestContext, proceed: Callable[[], Awaitable[object]]) -> object:
        calls.append((ctx.method, ctx.operation_name))
        return await proceed()

    return intercept


@pytest.mark.parametrize("revision", REVISIONS)
def test_interceptor_wraps_prompts_resources_and_the_list_handler(revision: str) -> None:
    """prompt gets, resource reads and custom resource lists are
    intercepted; static catalogs are not."""
    calls: list[tuple[str, str | None]] = []
    server = mcpkit.Server(REGISTRY, limits=LIMITS, interceptor=intercepting(calls))
    with TestClient(server) as client:
        assert get_prompt(client, revision, "greet", {"name": "Ada"}).status == 200
        assert read(client, revision, "test://items/1/parts/2").status == 200
        listed = exchange(client, revision, "resources/list", {}, path="/listing")
        assert listed.status == 200
        assert exchange(client, revision, "tools/list", {}).status == 200
        assert exchange(client, revision, "prompts/list", {}).status == 200
        assert exchange(client, revision, "resources/templates/list", {}).status == 200
    assert calls == [
        ("prompts/get", "greet"),
        ("resources/read", "test://items/1/parts/2"),
        ("resources/list", None),
    ]


def test_interceptor_does_not_wrap_completion() -> None:
    calls: list[tuple[str, str | None]] = []
    server = mcpkit.Server(REGISTRY, limits=LIMITS, interceptor=intercepting(calls))
    with TestClient(server) as client:
        response = complete(
            client, MODERN, {"type": "ref/prompt", "name": "greet"}, {"name": "name", "value": ""}
        )
    assert response.status == 200
    assert calls == []


def test_interceptor_is_not_called_for_discover() -> None:
    calls: list[tuple[str, str | None]] = []
    server = mcpkit.Server(REGISTRY, limits=LIMITS, interceptor=intercepting(calls))
    with TestClient(server) as client:
        assert exchange(client, MODERN, "server/discover").status == 200
    assert calls == []
