"""Multi-round input on 2026-07-28 through the whole HTTP pipeline (docs/design/model.md
"Multi-round input"): REQUIRED and
CONDITIONAL declarations and the client capabilities they need (-32021), undeclared requests and
request-state mode mismatches (the fixed -32603), the wire check of ``inputResponses``, what an
input-required result carries (no cache hints, never the sanitizer), the private cache of a
retried read, progress under a CONDITIONAL declaration, and the server's protection settings.
Checklist: AN-03, HC-08, OR-01, TR-13 and gap B2.

Every JSON-RPC message received is checked against the official schema of its revision.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

import pytest

from mcpkit import (
    UNSET,
    CachePolicy,
    CompleteResult,
    ConfigurationError,
    EndpointRegistry,
    InputRequestDeclaration,
    InputRequiredResult,
    InvocationFeatures,
    Limits,
    ProgressReporter,
    PromptMessage,
    PromptOutput,
    RequestContext,
    RequestLogger,
    RequestStateMode,
    Requirement,
    ResourceOutput,
    Revision,
    Role,
    Server,
    TextContent,
    TextResourceContents,
    endpoint,
    prompt,
    resource,
    tool,
)
from mcpkit.json import JsonObject, from_python
from mcpkit.model import InputRequestKind
from mcpkit.server import AdmissionRequest, Admitted, Keyring, ProtectionKey, Rejected
from mcpkit.server._continuation import Continuation, write_input_required
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
PATH = "/mcp"
SERVER_INFO = {"name": "multi", "version": "1.0.0"}
META = {"io.modelcontextprotocol/serverInfo": SERVER_INFO}
KEY = ProtectionKey("k1", bytes(range(32)))

FORM = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Your name?",
        "requestedSchema": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        },
    },
}
URL = {
    "method": "elicitation/create",
    "params": {"mode": "url", "message": "Sign in", "url": "https://example.com/login"},
}
SAMPLING = {
    "method": "sampling/createMessage",
    "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
        "maxTokens": 5,
    },
}
ROOTS = {"method": "roots/list"}
REQUESTS: Mapping[str, Mapping[str, object]] = {
    "form": FORM,
    "url": URL,
    "sampling": SAMPLING,
    "roots": ROOTS,
}
ALL_CAPABILITIES: Mapping[str, object] = {
    "elicitation": {"form": {}, "url": {}},
    "sampling": {},
    "roots": {},
}
ACCEPTED = {"action": "accept", "content": {"name": "Ada"}}

Form = InputRequestDeclaration.elicitation_form
Url = InputRequestDeclaration.elicitation_url
Sampling = InputRequestDeclaration.sampling
Roots = InputRequestDeclaration.roots
REQUIRED = Requirement.REQUIRED

# What the handlers saw, in order; cleared per test.
ran: list[tuple[str, RequestContext]] = []
reporters: list[tuple[str, ProgressReporter | None]] = []
sanitized: list[str] = []
loggers: list[tuple[str, RequestLogger | None]] = []


@pytest.fixture(autouse=True)
def _fresh_records() -> Iterator[None]:
    for records in (ran, reporters, sanitized, loggers):
        records.clear()
    yield
    for records in (ran, reporters, sanitized, loggers):
        records.clear()


def _answer(
    name: str,
    ctx: RequestContext,
    progress: ProgressReporter | None,
    emit: list[str] | None,
    app_state: str | None = None,
    sealed: str | None = None,
) -> CompleteResult | InputRequiredResult:
    """Complete, or ask for the ``emit`` kinds with the given state."""
    ran.append((name, ctx))
    reporters.append((name, progress))
    if not emit and app_state is None and sealed is None:
        return CompleteResult.from_tool_text(f"{name} ran")
    return InputRequiredResult(
        input_requests={kind: REQUESTS[kind] for kind in emit or ()},
        request_state=app_state,
        framework_state=UNSET if sealed is None else sealed,
    )


def _logged(
    name: str, ctx: RequestContext, features: InvocationFeatures
) -> CompleteResult | InputRequiredResult:
    """Log (when the server supplied a logger), then ask for a sampling."""
    logger = features.find(RequestLogger)
    loggers.append((name, logger))
    if logger is not None:
        logger.info("about to ask")
    return _answer(name, ctx, None, ["sampling"])


@endpoint(
    path=PATH,
    name="multi",
    version="1.0.0",
    revisions={Revision.V2026_07_28, Revision.V2025_11_25},
    resource_list_cache=CachePolicy(60_000, "public"),
    resource_template_list_cache=CachePolicy(30_000, "public"),
)
class Multi:
    # --- tools ------------------------------------------------------------------------------

    @tool(name="plain")
    def plain(
        self,
        ctx: RequestContext,
        progress: ProgressReporter | None,
        emit: list[str] | None = None,
        app_state: str | None = None,
        sealed: str | None = None,
    ) -> CompleteResult | InputRequiredResult:
        return _answer("plain", ctx, progress, emit, app_state, sealed)

    @tool(name="form_required", revisions={Revision.V2026_07_28}, input_requests=[Form(REQUIRED)])
    def form_required(
        self, ctx: RequestContext, progress: ProgressReporter | None, emit: list[str] | None = None
    ) -> CompleteResult | InputRequiredResult:
        return _answer("form_required", ctx, progress, emit)

    @tool(name="url_required", revisions={Revision.V2026_07_28}, input_requests=[Url(REQUIRED)])
    def url_required(
        self, ctx: RequestContext, progress: ProgressReporter | None
    ) -> CompleteResult | InputRequiredResult:
        return _answer("url_required", ctx, progress, None)

    @tool(
        name="all_required",
        revisions={Revision.V2026_07_28},
        input_requests=[Roots(REQUIRED), Sampling(REQUIRED), Url(REQUIRED), Form(REQUIRED)],
    )
    def all_required(
        self, ctx: RequestContext, progress: ProgressReporter | None, emit: list[str] | None = None
    ) -> CompleteResult | InputRequiredResult:
        if progress is not None:
            progress.report(1, 2)
        return _answer("all_required", ctx, progress, emit)

    @tool(
        name="conditional",
        revisions={Revision.V2026_07_28},
        input_requests=[Form(), Url(), Sampling(), Roots()],
    )
    def conditional(
        self, ctx: RequestContext, progress: ProgressReporter | None, emit: list[str] | None = None
    ) -> CompleteResult | InputRequiredResult:
        return _answer("conditional", ctx, progress, emit)

    @tool(
        name="mixed",
        revisions={Revision.V2026_07_28},
        input_requests=[Form(REQUIRED), Sampling()],
    )
    def mixed(
        self, ctx: RequestContext, progress: ProgressReporter | None, emit: list[str] | None = None
    ) -> CompleteResult | InputRequiredResult:
        return _answer("mixed", ctx, progress, emit)

    @tool(name="logged", revisions={Revision.V2026_07_28}, input_requests=[Sampling()])
    def logged(
        self, ctx: RequestContext, features: InvocationFeatures
    ) -> CompleteResult | InputRequiredResult:
        return _logged("logged", ctx, features)

    @tool(
        name="logged_required",
        revisions={Revision.V2026_07_28},
        input_requests=[Sampling(REQUIRED)],
    )
    def logged_required(
        self, ctx: RequestContext, features: InvocationFeatures
    ) -> CompleteResult | InputRequiredResult:
        return _logged("logged_required", ctx, features)

    @tool(name="form_only", revisions={Revision.V2026_07_28}, input_requests=[Form()])
    def form_only(
        self, ctx: RequestContext, progress: ProgressReporter | None, emit: list[str] | None = None
    ) -> CompleteResult | InputRequiredResult:
        return _answer("form_only", ctx, progress, emit)

    @tool(
        name="none_mode",
        revisions={Revision.V2026_07_28},
        input_requests=[Form()],
        request_state_mode=RequestStateMode.NONE,
    )
    def none_mode(
        self,
        ctx: RequestContext,
        progress: ProgressReporter | None,
        emit: list[str] | None = None,
        app_state: str | None = None,
        sealed: str | None = None,
    ) -> CompleteResult | InputRequiredResult:
        return _answer("none_mode", ctx, progress, emit, app_state, sealed)

    @tool(
        name="app_mode",
        revisions={Revision.V2026_07_28},
        input_requests=[Form()],
        request_state_mode=RequestStateMode.APPLICATION_PROTECTED,
    )
    def app_mode(
        self,
        ctx: RequestContext,
        progress: ProgressReporter | None,
        emit: list[str] | None = None,
        app_state: str | None = None,
        sealed: str | None = None,
    ) -> CompleteResult | InputRequiredResult:
        return _answer("app_mode", ctx, progress, emit, app_state, sealed)

    @tool(
        name="app_required",
        revisions={Revision.V2026_07_28},
        input_requests=[Form(REQUIRED)],
        request_state_mode=RequestStateMode.APPLICATION_PROTECTED,
    )
    def app_required(
        self, ctx: RequestContext, progress: ProgressReporter | None
    ) -> CompleteResult | InputRequiredResult:
        return _answer("app_required", ctx, progress, None)

    @tool(
        name="framework_mode",
        revisions={Revision.V2026_07_28},
        input_requests=[Form()],
        request_state_mode=RequestStateMode.FRAMEWORK_PROTECTED,
    )
    def framework_mode(
        self,
        ctx: RequestContext,
        progress: ProgressReporter | None,
        emit: list[str] | None = None,
        app_state: str | None = None,
        sealed: str | None = None,
    ) -> CompleteResult | InputRequiredResult:
        return _answer("framework_mode", ctx, progress, emit, app_state, sealed)

    @tool(name="async_form", revisions={Revision.V2026_07_28}, input_requests=[Form()])
    async def async_form(
        self, ctx: RequestContext, progress: ProgressReporter | None, emit: list[str] | None = None
    ) -> CompleteResult | InputRequiredResult:
        return _answer("async_form", ctx, progress, emit)

    # --- prompts ----------------------------------------------------------------------------

    @prompt(name="ask", revisions={Revision.V2026_07_28}, input_requests=[Form()])
    def ask(
        self, ctx: RequestContext, progress: ProgressReporter | None, topic: str
    ) -> PromptOutput | InputRequiredResult:
        ran.append(("ask", ctx))
        reporters.append(("ask", progress))
        name = ctx.elicitation("name")
        if name is None or name.content is None:
            return InputRequiredResult(input_requests={"name": FORM})
        text = TextContent(text=f"{topic} for {name.content['name']}")
        return PromptOutput(messages=(PromptMessage(role=Role.USER, content=text),))

    @prompt(name="ask_required", revisions={Revision.V2026_07_28}, input_requests=[Url(REQUIRED)])
    def ask_required(
        self, ctx: RequestContext, progress: ProgressReporter | None
    ) -> PromptOutput | InputRequiredResult:
        ran.append(("ask_required", ctx))
        reporters.append(("ask_required", progress))
        text = TextContent(text="ready")
        return PromptOutput(messages=(PromptMessage(role=Role.USER, content=text),))

    @prompt(name="async_ask", revisions={Revision.V2026_07_28}, input_requests=[Form()])
    async def async_ask(self, ctx: RequestContext) -> PromptOutput | InputRequiredResult:
        ran.append(("async_ask", ctx))
        if ctx.elicitation("name") is None:
            return InputRequiredResult(input_requests={"name": FORM})
        text = TextContent(text="answered")
        return PromptOutput(messages=(PromptMessage(role=Role.USER, content=text),))

    # --- resources --------------------------------------------------------------------------

    @resource(uri="test://static", name="static")
    def static(self, ctx: RequestContext) -> ResourceOutput:
        ran.append(("static", ctx))
        return ResourceOutput(contents=(TextResourceContents(uri="test://static", text="s"),))

    @resource(
        uri="test://asked", name="asked", revisions={Revision.V2026_07_28}, input_requests=[Form()]
    )
    def asked(
        self, ctx: RequestContext, progress: ProgressReporter | None
    ) -> ResourceOutput | InputRequiredResult:
        ran.append(("asked", ctx))
        reporters.append(("asked", progress))
        if ctx.elicitation("name") is None:
            return InputRequiredResult(input_requests={"name": FORM})
        return ResourceOutput(contents=(TextResourceContents(uri="test://asked", text="a"),))

    @resource(
        uri="test://async", name="async", revisions={Revision.V2026_07_28}, input_requests=[Form()]
    )
    async def async_asked(self, ctx: RequestContext) -> ResourceOutput | InputRequiredResult:
        ran.append(("async", ctx))
        if ctx.elicitation("name") is None:
            return InputRequiredResult(input_requests={"name": FORM})
        return ResourceOutput(contents=(TextResourceContents(uri="test://async", text="b"),))

    @resource(
        uri="test://items/{sku}",
        name="item",
        revisions={Revision.V2026_07_28},
        input_requests=[Form(REQUIRED)],
    )
    def item(
        self, ctx: RequestContext, progress: ProgressReporter | None, sku: str
    ) -> ResourceOutput | InputRequiredResult:
        ran.append(("item", ctx))
        reporters.append(("item", progress))
        if ctx.elicitation("name") is None:
            return InputRequiredResult(input_requests={"name": FORM})
        uri = f"test://items/{sku}"
        return ResourceOutput(contents=(TextResourceContents(uri=uri, text=sku),))


# --- helpers ------------------------------------------------------------------------------------


def post(
    client: TestClient,
    method: str,
    params: Mapping[str, object],
    *,
    name: str | None = None,
    id: str | int = 1,
    capabilities: Mapping[str, object] | None = None,
) -> TestResponse:
    body = stateless_request(method, params, id=id, capabilities=capabilities)
    response = client.post(PATH, body, headers=stateless_headers(method, name))
    assert_valid(MODERN, method, response.messages)
    return response


def call(
    client: TestClient,
    tool_name: str,
    arguments: Mapping[str, object] | None = None,
    *,
    id: str | int = 1,
    capabilities: Mapping[str, object] | None = None,
    **extra: object,
) -> TestResponse:
    params = {"name": tool_name, "arguments": dict(arguments or {}), **extra}
    return post(client, "tools/call", params, name=tool_name, id=id, capabilities=capabilities)


def read(
    client: TestClient,
    uri: str,
    *,
    capabilities: Mapping[str, object] | None = None,
    **extra: object,
) -> TestResponse:
    return post(
        client, "resources/read", {"uri": uri, **extra}, name=uri, capabilities=capabilities
    )


def body(response: TestResponse) -> Any:
    return json.loads(response.body)


def result(result: Mapping[str, object], id: str | int = 1) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": id, "result": dict(result)}


def error(code: int, message: str, data: object = None, id: str | int = 1) -> dict[str, object]:
    detail: dict[str, object] = {"code": code, "message": message}
    if data is not None:
        detail["data"] = data
    return {"jsonrpc": "2.0", "id": id, "error": detail}


def internal(id: str | int = 1) -> dict[str, object]:
    return error(-32603, "Internal error", id=id)


def invalid(id: str | int = 1) -> dict[str, object]:
    return error(-32602, "Invalid params", id=id)


def missing(required: Mapping[str, object], id: str | int = 1) -> dict[str, object]:
    data = {"requiredCapabilities": dict(required)}
    return error(-32021, "Missing required client capability", data, id=id)


def text(value: str) -> dict[str, object]:
    return {"content": [{"type": "text", "text": value}], "resultType": "complete", "_meta": META}


def asking(requests: Mapping[str, object], state: str | None = None) -> dict[str, object]:
    answer: dict[str, object] = {"resultType": "input_required"}
    if requests:
        answer["inputRequests"] = dict(requests)
    if state is not None:
        answer["requestState"] = state
    answer["_meta"] = META
    return answer


def names() -> list[str]:
    return [name for name, _ in ran]


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(Server(Multi, keyring=Keyring(KEY))) as test_client:
        yield test_client


# --- REQUIRED declarations -----------------------------------------------


def test_a_missing_required_capability_is_refused_before_the_handler_runs(
    client: TestClient,
) -> None:
    """Every missing capability of every REQUIRED declaration in one -32021, in the fixed
    order, whatever the declaration order; the handler never runs."""
    response = call(client, "all_required")
    assert response.status == 400
    assert body(response) == missing(ALL_CAPABILITIES)
    assert ran == []


def test_a_tool_with_required_declarations_is_still_listed(client: TestClient) -> None:
    """List and call deliberately differ: the capability check is no authorization."""
    response = post(client, "tools/list", {})
    listed = [item["name"] for item in body(response)["result"]["tools"]]
    assert {"all_required", "form_required", "url_required", "conditional"} <= set(listed)


@pytest.mark.parametrize(
    ("capabilities", "required"),
    [
        ({"elicitation": {}, "roots": {}}, {"elicitation": {"url": {}}, "sampling": {}}),
        ({"elicitation": {"url": {}}, "sampling": {}}, {"elicitation": {"form": {}}, "roots": {}}),
        (
            {"elicitation": {"form": True, "url": {}}, "sampling": {}, "roots": {}},
            {"elicitation": {"form": {}}},
        ),
        (
            {"elicitation": {"form": {}, "url": {}}, "sampling": True, "roots": []},
            {"sampling": {}, "roots": {}},
        ),
    ],
)
def test_only_the_missing_capabilities_are_named(
    client: TestClient, capabilities: Mapping[str, object], required: Mapping[str, object]
) -> None:
    response = call(client, "all_required", capabilities=capabilities)
    assert response.status == 400
    assert body(response) == missing(required)
    assert ran == []


def test_with_every_required_capability_the_handler_runs(client: TestClient) -> None:
    response = call(client, "all_required", capabilities=ALL_CAPABILITIES)
    assert (response.status, body(response)) == (200, result(text("all_required ran")))
    assert names() == ["all_required"]


@pytest.mark.parametrize(
    ("tool_name", "capabilities", "refused"),
    [
        ("form_required", {"elicitation": {}}, None),  # {} declares form only
        ("form_required", {"elicitation": {"form": {}}}, None),
        ("form_required", {"elicitation": {"url": {}}}, {"elicitation": {"form": {}}}),
        ("form_required", {"elicitation": {"form": {}, "url": {}}}, None),
        ("form_required", {}, {"elicitation": {"form": {}}}),
        ("form_required", {"elicitation": True}, {"elicitation": {"form": {}}}),
        ("url_required", {"elicitation": {}}, {"elicitation": {"url": {}}}),
        ("url_required", {"elicitation": {"form": {}}}, {"elicitation": {"url": {}}}),
        ("url_required", {"elicitation": {"url": {}}}, None),
        ("url_required", {"elicitation": {"url": True}}, {"elicitation": {"url": {}}}),
    ],
)
def test_form_and_url_elicitation_capabilities(
    client: TestClient,
    tool_name: str,
    capabilities: Mapping[str, object],
    refused: Mapping[str, object] | None,
) -> None:
    """``elicitation: {}`` declares form mode only; URL mode needs ``elicitation.url``; a
    capability counts only as an object."""
    response = call(client, tool_name, capabilities=capabilities)
    if refused is None:
        assert (response.status, body(response)) == (200, result(text(f"{tool_name} ran")))
        assert names() == [tool_name]
    else:
        assert (response.status, body(response)) == (400, missing(refused))
        assert ran == []


def test_required_capabilities_are_checked_for_prompts_and_template_reads(
    client: TestClient,
) -> None:
    response = post(client, "prompts/get", {"name": "ask_required"}, name="ask_required")
    assert (response.status, body(response)) == (400, missing({"elicitation": {"url": {}}}))
    response = read(client, "test://items/a1", capabilities={"elicitation": {"url": {}}})
    assert (response.status, body(response)) == (400, missing({"elicitation": {"form": {}}}))
    assert ran == []
    response = read(client, "test://items/a1", capabilities={"elicitation": {}})
    assert response.status == 200
    assert body(response) == result(asking({"name": FORM}))


def reject(request: AdmissionRequest) -> Rejected:
    return Rejected(401, headers=(("WWW-Authenticate", "Bearer"),))


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"inputResponses": []},
        {"inputResponses": {"a": {"action": "maybe"}}},
        {"requestState": ""},
    ],
)
def test_a_rejecting_admission_wins_over_every_multi_round_check(
    extra: Mapping[str, object],
) -> None:
    """Admission first (group 11): no capability, response or state check answers before it."""
    with TestClient(Server(Multi, keyring=Keyring(KEY), admission=reject)) as client:
        response = client.post(
            PATH,
            stateless_request("tools/call", {"name": "app_mode", "arguments": {}, **extra}),
            headers=stateless_headers("tools/call", "app_mode"),
        )
        assert (response.status, response.body) == (401, b"")
        assert response.header("www-authenticate") == "Bearer"
        response = client.post(
            PATH,
            stateless_request("tools/call", {"name": "all_required", "arguments": {}, **extra}),
            headers=stateless_headers("tools/call", "all_required"),
        )
        assert (response.status, response.body) == (401, b"")
    assert ran == []


def test_the_capability_check_follows_admission_and_target_lookup() -> None:
    """An admitted call of an unknown tool is the unknown tool's -32602, not -32021."""

    def admit(request: AdmissionRequest) -> Admitted:
        return Admitted(identity="ada")

    with TestClient(Server(Multi, keyring=Keyring(KEY), admission=admit)) as admitted:
        response = call(admitted, "all_required")
        assert (response.status, body(response)) == (400, missing(ALL_CAPABILITIES))
        response = call(admitted, "no_such_tool")
        assert (response.status, body(response)) == (400, invalid())
    assert ran == []


@pytest.mark.parametrize("state", ["", 7, None, True, [], {}])
def test_the_request_state_shape_is_checked_before_required_capabilities(
    client: TestClient, state: object
) -> None:
    """Group 11: the request-state shape, then the required client capabilities."""
    response = call(client, "app_required", requestState=state)
    assert (response.status, body(response)) == (400, invalid())
    response = call(client, "app_required", requestState="well-formed")
    assert (response.status, body(response)) == (400, missing({"elicitation": {"form": {}}}))
    assert ran == []


def test_a_tool_without_a_state_mode_does_not_read_request_state(client: TestClient) -> None:
    for state in ("", 7, None):
        response = call(client, "form_required", requestState=state)
        assert (response.status, body(response)) == (400, missing({"elicitation": {"form": {}}}))
        response = call(
            client, "form_required", requestState=state, capabilities={"elicitation": {}}
        )
        assert (response.status, body(response)) == (200, result(text("form_required ran")))
    assert all(ctx.request_state is None for _, ctx in ran)


# --- CONDITIONAL declarations -------------------------------------------------------------------


def test_a_conditional_declaration_is_not_checked_until_a_request_is_emitted(
    client: TestClient,
) -> None:
    response = call(client, "conditional")
    assert (response.status, body(response)) == (200, result(text("conditional ran")))


def test_every_missing_capability_of_one_result_is_reported_together(
    client: TestClient,
) -> None:
    """The handler ran (side effects are not rolled back); its result is refused whole."""
    emit = ["roots", "url", "sampling", "form"]
    response = call(client, "conditional", {"emit": emit}, capabilities={"elicitation": {}})
    assert response.status == 400
    assert body(response) == missing({"elicitation": {"url": {}}, "sampling": {}, "roots": {}})
    assert names() == ["conditional"]


@pytest.mark.parametrize(
    ("emit", "capabilities"),
    [
        (["form"], {"elicitation": {}}),
        (["url"], {"elicitation": {"url": {}}}),
        (["sampling", "roots"], {"sampling": {}, "roots": {}}),
        (["form", "url", "sampling", "roots"], ALL_CAPABILITIES),
    ],
)
def test_emitted_requests_the_client_declared_are_written_inside_the_result(
    client: TestClient, emit: list[str], capabilities: Mapping[str, object]
) -> None:
    response = call(client, "conditional", {"emit": emit}, capabilities=capabilities)
    assert response.status == 200
    assert response.header("content-type") == "application/json"
    assert body(response) == result(asking({kind: REQUESTS[kind] for kind in emit}))


def test_a_url_request_under_a_form_only_capability_is_refused(client: TestClient) -> None:
    response = call(client, "conditional", {"emit": ["url"]}, capabilities={"elicitation": {}})
    assert (response.status, body(response)) == (400, missing({"elicitation": {"url": {}}}))


# --- undeclared requests and state-mode mismatches: contract failures ----------------------------


@pytest.mark.parametrize(
    ("tool_name", "emit"),
    [
        ("form_only", ["sampling"]),
        ("form_only", ["url"]),  # a URL elicitation is its own kind
        ("form_only", ["form", "roots"]),
        ("plain", ["form"]),
        ("mixed", ["roots"]),
    ],
)
def test_an_undeclared_request_is_the_fixed_internal_error(
    client: TestClient, tool_name: str, emit: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    """Checked before the client's capabilities: the operation broke its own contract."""
    response = call(client, tool_name, {"emit": emit}, capabilities={"elicitation": {}})
    assert (response.status, body(response)) == (500, internal())
    assert (
        response.body
        == b'{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}'
    )
    messages = [record.getMessage() for record in caplog.records]
    assert messages == ["mcpkit: an operation emitted an input request it did not declare"]


@pytest.mark.parametrize(
    ("tool_name", "arguments"),
    [
        ("plain", {"app_state": "s"}),
        ("plain", {"sealed": "s"}),
        ("none_mode", {"emit": ["form"], "app_state": "s"}),
        ("none_mode", {"sealed": "s"}),
        ("app_mode", {"emit": ["form"], "sealed": "s"}),
        ("framework_mode", {"emit": ["form"], "app_state": "s"}),
        ("framework_mode", {"app_state": "s"}),
    ],
)
def test_state_that_does_not_match_the_mode_is_the_fixed_internal_error(
    client: TestClient, tool_name: str, arguments: Mapping[str, object]
) -> None:
    response = call(client, tool_name, arguments, capabilities={"elicitation": {}})
    assert (response.status, body(response)) == (500, internal())
    assert names() == [tool_name]


def test_a_mode_without_state_in_the_result_writes_no_request_state(client: TestClient) -> None:
    capabilities: Mapping[str, object] = {"elicitation": {}}
    for tool_name in ("none_mode", "app_mode", "framework_mode"):
        response = call(client, tool_name, {"emit": ["form"]}, capabilities=capabilities)
        assert (response.status, body(response)) == (200, result(asking({"form": FORM})))


def test_an_input_required_result_on_a_2025_revision_is_a_contract_failure(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    """The 2025 revisions have no multi-round input: an internal error, in HTTP 200 there."""
    params = {"name": "plain", "arguments": {"emit": ["form"]}}
    response = client.post(
        PATH,
        handshake_request("tools/call", params),
        headers={"MCP-Protocol-Version": NOVEMBER},
    )
    assert_valid(NOVEMBER, "tools/call", response.messages)
    assert (response.status, body(response)) == (200, internal())
    assert [record.getMessage() for record in caplog.records] == [
        "mcpkit: an input-required result on a 2025 revision"
    ]


def test_multi_round_params_are_not_read_on_a_2025_revision(client: TestClient) -> None:
    """2025 requests have no ``inputResponses`` or ``requestState``: unknown params."""
    params = {"name": "plain", "arguments": {}, "inputResponses": 5, "requestState": 5}
    response = client.post(
        PATH, handshake_request("tools/call", params), headers={"MCP-Protocol-Version": NOVEMBER}
    )
    assert_valid(NOVEMBER, "tools/call", response.messages)
    assert response.status == 200
    assert body(response)["result"]["content"] == [{"type": "text", "text": "plain ran"}]
    ((_, ctx),) = ran
    assert (ctx.input_responses, ctx.request_state, ctx.framework_state) == (None, None, UNSET)
    response = client.post(
        PATH,
        handshake_request("resources/read", {"uri": "test://static", "inputResponses": 5}),
        headers={"MCP-Protocol-Version": NOVEMBER},
    )
    assert_valid(NOVEMBER, "resources/read", response.messages)
    assert body(response) == result({"contents": [{"uri": "test://static", "text": "s"}]})


def test_an_interceptor_short_circuit_is_checked_like_the_handler() -> None:
    async def intercept(ctx: RequestContext, proceed: Callable[[], Awaitable[object]]) -> object:
        if ctx.operation_name == "form_only":
            return InputRequiredResult(input_requests={"s": SAMPLING})
        return InputRequiredResult(input_requests={"f": FORM})

    with TestClient(Server(Multi, keyring=Keyring(KEY), interceptor=intercept)) as client:
        response = call(client, "form_only")
        assert (response.status, body(response)) == (500, internal())
        response = call(client, "conditional")
        assert (response.status, body(response)) == (400, missing({"elicitation": {"form": {}}}))
        response = call(client, "conditional", capabilities={"elicitation": {}})
        assert (response.status, body(response)) == (200, result(asking({"f": FORM})))
    assert ran == []


# --- inputResponses ----------------------------------------------------------


@pytest.mark.parametrize(
    "responses",
    [
        [],
        "accept",
        None,
        1,
        {"name": 1},
        {"name": None},
        {"name": {}},
        {"name": {"action": "maybe"}},
        {"name": {"action": "accept", "content": {"nested": {"no": 1}}}},
        {"name": {"action": "accept", "content": {"mixed": ["a", 1]}}},
        {"name": {"role": "user", "model": "m"}},
        {"name": {"roots": [{"name": "no uri"}]}},
        {"ok": ACCEPTED, "bad": {"action": "accept", "content": None}},
    ],
)
def test_malformed_input_responses_are_invalid_params_before_the_handler(
    client: TestClient, responses: object
) -> None:
    response = call(client, "form_only", inputResponses=responses)
    assert (response.status, body(response)) == (400, invalid())
    assert ran == []


def test_malformed_input_responses_are_refused_for_prompts_and_reads(client: TestClient) -> None:
    response = post(
        client,
        "prompts/get",
        {"name": "ask", "arguments": {"topic": "t"}, "inputResponses": [1]},
        name="ask",
    )
    assert (response.status, body(response)) == (400, invalid())
    response = read(client, "test://asked", inputResponses={"name": {"action": 1}})
    assert (response.status, body(response)) == (400, invalid())
    assert ran == []


def test_input_responses_reach_the_handler_with_unknown_keys_and_members_kept(
    client: TestClient,
) -> None:
    """HC-08: open objects -- members the schema does not name are allowed, and keys are never
    compared with what was asked (the handler ignores what it did not ask for)."""
    responses = {
        "name": {"action": "accept", "content": {"name": "Ada", "age": 36}, "extra": [1]},
        "unasked": {"roots": [{"uri": "file:///tmp", "vendor": True}]},
        "model": {"role": "assistant", "model": "m", "content": {"type": "text", "text": "4"}},
    }
    response = call(client, "none_mode", inputResponses=responses)
    assert (response.status, body(response)) == (200, result(text("none_mode ran")))
    ((_, ctx),) = ran
    assert ctx.input_responses == from_python(responses)
    answer = ctx.elicitation("name")
    assert answer is not None and answer.accepted
    assert ctx.elicitation("missing") is None
    roots = ctx.roots("unasked")
    assert roots is not None and [root.uri for root in roots.roots] == ["file:///tmp"]
    sampled = ctx.sampling("model")
    assert sampled is not None and sampled.model == "m"
    assert (ctx.request_state, ctx.framework_state) == (None, UNSET)


def test_input_responses_reach_a_tool_that_declares_nothing(client: TestClient) -> None:
    response = call(client, "plain", inputResponses={"k": ACCEPTED}, requestState="ignored")
    assert (response.status, body(response)) == (200, result(text("plain ran")))
    ((_, ctx),) = ran
    assert ctx.input_responses == from_python({"k": ACCEPTED})
    assert (ctx.request_state, ctx.framework_state) == (None, UNSET)


def test_without_input_responses_the_context_has_none(client: TestClient) -> None:
    response = call(client, "none_mode")
    assert response.status == 200
    ((_, ctx),) = ran
    assert (ctx.input_responses, ctx.request_state, ctx.framework_state) == (None, None, UNSET)


def test_a_prompt_asks_then_completes_with_the_answer(client: TestClient) -> None:
    params: dict[str, object] = {"name": "ask", "arguments": {"topic": "Greeting"}}
    capabilities: Mapping[str, object] = {"elicitation": {"form": {}}}
    first = post(client, "prompts/get", params, name="ask", capabilities=capabilities)
    assert (first.status, body(first)) == (200, result(asking({"name": FORM})))
    retry = {**params, "inputResponses": {"name": ACCEPTED}}
    second = post(client, "prompts/get", retry, name="ask", id=2, capabilities=capabilities)
    assert second.status == 200
    assert body(second) == result(
        {
            "messages": [{"role": "user", "content": {"type": "text", "text": "Greeting for Ada"}}],
            "resultType": "complete",
            "_meta": META,
        },
        id=2,
    )


def test_a_prompt_input_request_needs_the_capability_when_emitted(client: TestClient) -> None:
    response = post(client, "prompts/get", {"name": "ask", "arguments": {"topic": "t"}}, name="ask")
    assert (response.status, body(response)) == (400, missing({"elicitation": {"form": {}}}))
    assert names() == ["ask"]


def test_async_handlers_ask_and_complete_the_same_way(client: TestClient) -> None:
    capabilities: Mapping[str, object] = {"elicitation": {}}
    response = call(client, "async_form", {"emit": ["form"]}, capabilities=capabilities)
    assert (response.status, body(response)) == (200, result(asking({"form": FORM})))
    response = call(client, "async_form", {"emit": ["sampling"]}, capabilities=capabilities)
    assert (response.status, body(response)) == (500, internal())
    response = call(client, "async_form", {"emit": ["form"]})
    assert (response.status, body(response)) == (400, missing({"elicitation": {"form": {}}}))
    prompt_params = {"name": "async_ask"}
    response = post(
        client, "prompts/get", prompt_params, name="async_ask", capabilities=capabilities
    )
    assert (response.status, body(response)) == (200, result(asking({"name": FORM})))
    retry = {**prompt_params, "inputResponses": {"name": ACCEPTED}}
    response = post(client, "prompts/get", retry, name="async_ask", id=2)
    assert body(response)["result"]["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "answered"}}
    ]
    response = read(client, "test://async", capabilities=capabilities)
    assert (response.status, body(response)) == (200, result(asking({"name": FORM})))
    response = read(client, "test://async", inputResponses={"name": ACCEPTED})
    assert body(response)["result"]["contents"] == [{"uri": "test://async", "text": "b"}]
    assert body(response)["result"]["cacheScope"] == "private"
    assert names() == ["async_form"] * 3 + ["async_ask"] * 2 + ["async"] * 2


# --- cache hints and the sanitizer ----------------------


def test_an_input_required_read_carries_no_cache_hints(client: TestClient) -> None:
    response = read(client, "test://asked", capabilities={"elicitation": {}})
    assert response.status == 200
    assert body(response) == result(asking({"name": FORM}))
    assert "ttlMs" not in body(response)["result"]


def test_a_first_read_keeps_the_endpoint_cache_policy(client: TestClient) -> None:
    response = read(client, "test://static")
    assert body(response) == result(
        {
            "contents": [{"uri": "test://static", "text": "s"}],
            "resultType": "complete",
            "ttlMs": 60_000,
            "cacheScope": "public",
            "_meta": META,
        }
    )


@pytest.mark.parametrize(
    ("uri", "extra", "contents"),
    [
        (
            "test://asked",
            {"inputResponses": {"name": ACCEPTED}},
            {"uri": "test://asked", "text": "a"},
        ),
        (
            "test://items/a1",
            {"inputResponses": {"name": ACCEPTED}},
            {"uri": "test://items/a1", "text": "a1"},
        ),
        ("test://static", {"inputResponses": {}}, {"uri": "test://static", "text": "s"}),
        ("test://static", {"requestState": "opaque"}, {"uri": "test://static", "text": "s"}),
    ],
)
def test_a_retried_read_is_private_with_no_freshness(
    client: TestClient, uri: str, extra: Mapping[str, object], contents: Mapping[str, object]
) -> None:
    """Results of requests carrying ``inputResponses`` or ``requestState`` are the caller's
    alone: cache scope private, TTL 0, whatever the endpoint's policy."""
    response = read(client, uri, capabilities={"elicitation": {}}, **extra)
    assert response.status == 200
    assert body(response) == result(
        {
            "contents": [dict(contents)],
            "resultType": "complete",
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": META,
        }
    )


def refusing_sanitizer(
    ctx: RequestContext, tool_name: str, raw: JsonObject, complete: CompleteResult
) -> CompleteResult:
    sanitized.append(tool_name)
    raise RuntimeError("the sanitizer refuses")


def test_an_input_required_result_never_reaches_the_sanitizer() -> None:
    with TestClient(Server(Multi, keyring=Keyring(KEY), sanitizer=refusing_sanitizer)) as client:
        emit = {"emit": ["form"], "sealed": "s"}
        response = call(client, "framework_mode", emit, capabilities={"elicitation": {}})
        assert response.status == 200
        state = body(response)["result"]["requestState"]
        assert body(response) == result(asking({"form": FORM}, state))
        assert sanitized == []
        response = call(client, "conditional")  # a complete result: the sanitizer runs
        assert (response.status, body(response)) == (500, internal())
        assert sanitized == ["conditional"]


# --- progress under CONDITIONAL declarations -------------------------


@pytest.mark.parametrize(
    ("tool_name", "present"),
    [
        ("conditional", False),
        ("mixed", False),
        ("form_only", False),
        ("all_required", True),
        ("plain", True),
        ("form_required", True),
    ],
)
def test_no_progress_reporter_while_a_conditional_request_may_still_refuse(
    client: TestClient, tool_name: str, present: bool
) -> None:
    params = {"name": tool_name, "arguments": {}, "_meta": {"progressToken": "p1"}}
    response = post(client, "tools/call", params, name=tool_name, capabilities=ALL_CAPABILITIES)
    assert response.status == 200
    ((seen, reporter),) = reporters
    assert seen == tool_name
    assert (reporter is not None) is present


def test_a_required_only_tool_reports_progress_on_the_stream(client: TestClient) -> None:
    params = {
        "name": "all_required",
        "arguments": {"emit": ["roots"]},
        "_meta": {"progressToken": 9},
    }
    response = post(
        client, "tools/call", params, name="all_required", capabilities=ALL_CAPABILITIES
    )
    assert response.status == 200
    assert response.header("content-type") == "text/event-stream"
    assert list(response.messages) == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": 9, "progress": 1, "total": 2},
        },
        result(asking({"roots": ROOTS})),
    ]


@pytest.mark.parametrize(
    ("method", "params", "target"),
    [
        ("prompts/get", {"name": "ask", "arguments": {"topic": "t"}}, "ask"),
        ("prompts/get", {"name": "ask_required"}, "ask_required"),
        ("resources/read", {"uri": "test://asked"}, "asked"),
        ("resources/read", {"uri": "test://items/x"}, "item"),
    ],
)
def test_prompts_and_reads_get_a_reporter_only_without_conditional_declarations(
    client: TestClient, method: str, params: Mapping[str, object], target: str
) -> None:
    name = str(params.get("name", params.get("uri")))
    with_token = {**params, "_meta": {"progressToken": "p"}}
    response = post(client, method, with_token, name=name, capabilities=ALL_CAPABILITIES)
    assert response.status == 200
    ((seen, reporter),) = reporters
    assert seen == target
    assert (reporter is not None) is (target in {"ask_required", "item"})


def test_a_conditional_refusal_stays_uncommitted_even_when_the_handler_could_log(
    client: TestClient,
) -> None:
    """A log message would commit the response like progress does: under a CONDITIONAL
    declaration the handler gets no logger, so the -32021 is still a 400."""
    params = {
        "name": "logged",
        "arguments": {},
        "_meta": {"io.modelcontextprotocol/logLevel": "debug", "progressToken": "p"},
    }
    response = post(client, "tools/call", params, name="logged")
    assert response.status == 400
    assert response.header("content-type") == "application/json"
    assert body(response) == missing({"sampling": {}})
    assert loggers == [("logged", None)]


def test_without_conditional_declarations_the_handler_logs_on_the_stream(
    client: TestClient,
) -> None:
    params = {
        "name": "logged_required",
        "arguments": {},
        "_meta": {"io.modelcontextprotocol/logLevel": "debug"},
    }
    response = post(client, "tools/call", params, name="logged_required")
    assert (response.status, body(response)) == (400, missing({"sampling": {}}))
    assert loggers == []  # refused before the handler
    capabilities: Mapping[str, object] = {"sampling": {}}
    response = post(client, "tools/call", params, name="logged_required", capabilities=capabilities)
    assert response.status == 200
    assert response.header("content-type") == "text/event-stream"
    assert list(response.messages) == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": "about to ask"},
        },
        result(asking({"sampling": SAMPLING})),
    ]
    ((name, logger),) = loggers
    assert name == "logged_required" and logger is not None


# --- the server's protection settings -------------------------------------


def framework_endpoint(kind: str, path: str = "/fw") -> type[Any]:
    """An endpoint whose one framework-protected operation is a ``kind``."""
    mode = RequestStateMode.FRAMEWORK_PROTECTED
    modern = {Revision.V2026_07_28}

    class Operations:
        if kind == "tool":

            @tool(name="t", request_state_mode=mode)
            def t(self) -> CompleteResult:
                return CompleteResult.from_tool_text("t")

        elif kind == "prompt":

            @prompt(name="p", request_state_mode=mode)
            def p(self) -> PromptOutput:
                raise AssertionError

        elif kind == "resource":

            @resource(uri="test://r", name="r", request_state_mode=mode)
            def r(self) -> ResourceOutput:
                raise AssertionError

        else:

            @resource(uri="test://r/{id}", name="r", request_state_mode=mode)
            def r_template(self, id: str) -> ResourceOutput:
                raise AssertionError

    decorated: type[Any] = endpoint(path=path, name="fw", version="1", revisions=modern)(Operations)
    return decorated


NO_KEYRING = (
    "an operation uses framework-protected request state: give the server a keyring "
    "(Keyring(...) in production, Keyring.development_ephemeral() to try it)"
)


@pytest.mark.parametrize("kind", ["tool", "prompt", "resource", "template"])
def test_a_framework_protected_operation_needs_a_keyring(kind: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        Server(framework_endpoint(kind))
    assert str(caught.value) == NO_KEYRING


def test_a_keyring_is_needed_whichever_endpoint_uses_framework_state() -> None:
    registry = EndpointRegistry.from_classes(Multi, framework_endpoint("prompt"))
    with pytest.raises(ConfigurationError) as caught:
        Server(registry)
    assert str(caught.value) == NO_KEYRING
    Server(registry, keyring=Keyring(KEY))


def test_a_registry_without_framework_state_needs_no_keyring() -> None:
    @endpoint(
        path="/plain",
        name="p",
        version="1",
        revisions={Revision.V2026_07_28, Revision.V2025_11_25, Revision.V2025_06_18},
    )
    class Plain:
        @tool(
            name="t",
            input_requests=[Form()],
            revisions={Revision.V2026_07_28},
            request_state_mode=RequestStateMode.APPLICATION_PROTECTED,
        )
        def t(self) -> CompleteResult:
            return CompleteResult.from_tool_text("t")

        @prompt(name="p")
        def p(self) -> PromptOutput:
            raise AssertionError

        @resource(uri="test://r/{id}", name="r")
        def r(self, id: str) -> ResourceOutput:
            raise AssertionError

    server = Server(Plain)
    assert server.engine.operations.protector is None


@pytest.mark.parametrize(
    "keyring",
    [KEY, "k1", bytes(range(32)), [KEY], object()],
    ids=["key", "str", "bytes", "list", "object"],
)
def test_a_keyring_that_is_not_a_keyring_is_refused(keyring: object) -> None:
    for target in (Multi, framework_endpoint("tool")):
        with pytest.raises(ConfigurationError) as caught:
            Server(target, keyring=keyring)  # type: ignore[arg-type]
        assert str(caught.value) == "keyring must be a Keyring or None"


EPHEMERAL_WARNING = (
    "mcpkit: request state is sealed with development-ephemeral keys: it is lost on restart and "
    "cannot move between servers; configure a Keyring for production"
)


def test_an_ephemeral_keyring_is_announced_once_when_the_server_is_built(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    server = Server(framework_endpoint("tool"), keyring=Keyring.development_ephemeral())
    records = [(r.name, r.levelno, r.getMessage()) for r in caplog.records]
    assert records == [("mcpkit", logging.WARNING, EPHEMERAL_WARNING)]
    caplog.clear()
    with TestClient(server) as client:
        for id in (1, 2):
            response = client.post(
                "/fw",
                stateless_request("tools/call", {"name": "t", "arguments": {}}, id=id),
                headers=stateless_headers("tools/call", "t"),
            )
            assert response.status == 200
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_a_production_keyring_is_not_announced(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    Server(framework_endpoint("tool"), keyring=Keyring(KEY))
    Server(Multi, keyring=Keyring(KEY), limits=Limits(max_request_state_rounds=3))
    assert caplog.records == []


def test_the_ephemeral_keyring_round_trip_works_in_process() -> None:
    """Same arguments (they are bound): the retry opens the state and the handler, seeing it,
    asks again with the next round's state."""
    arguments = {"emit": ["form"], "sealed": "s"}
    capabilities: Mapping[str, object] = {"elicitation": {}}
    with TestClient(Server(Multi, keyring=Keyring.development_ephemeral())) as client:
        first = call(client, "framework_mode", arguments, capabilities=capabilities)
        state = body(first)["result"]["requestState"]
        second = call(
            client, "framework_mode", arguments, id=2, capabilities=capabilities, requestState=state
        )
        assert second.status == 200
        again = body(second)["result"]["requestState"]
        assert body(second) == result(asking({"form": FORM}, again), id=2)
    assert [ctx.framework_state for _, ctx in ran] == [UNSET, "s"]


# --- writing an input-required result directly ---------------------------------------------------


def test_without_server_info_the_result_has_only_the_application_meta() -> None:
    """The framework always passes server info on 2026-07-28; the writer does not need it."""
    continuation = Continuation(
        mode=RequestStateMode.NONE,
        declared=frozenset({InputRequestKind.ROOTS}),
        capabilities=JsonObject({"roots": JsonObject()}),
        protector=None,
        binding=None,
        opened=None,
        request_id="r",
    )
    plain = InputRequiredResult(input_requests={"r": ROOTS})
    written = write_input_required(
        plain,
        continuation=continuation,
        request_id="r",
        revision=Revision.V2026_07_28,
        server_info=None,
        limits=Limits(),
    )
    assert json.loads(written) == result(
        {"resultType": "input_required", "inputRequests": {"r": ROOTS}}, id="r"
    )
    with_meta = InputRequiredResult(input_requests={"r": ROOTS}, meta={"example.com/k": 1})
    written = write_input_required(
        with_meta,
        continuation=continuation,
        request_id="r",
        revision=Revision.V2026_07_28,
        server_info=None,
        limits=Limits(),
    )
    assert json.loads(written) == result(
        {
            "resultType": "input_required",
            "inputRequests": {"r": ROOTS},
            "_meta": {"example.com/k": 1},
        },
        id="r",
    )
