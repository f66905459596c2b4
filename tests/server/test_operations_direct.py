"""``Operations`` driven directly with a ``Call``, below the pipeline: the params readers
refuse what the operations must never see, and what a runtime answers per revision is decided
once, when it is built.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Annotated, Any

import pytest

import mcpkit
from mcpkit import EndpointRegistry, InternalError, InvalidParams, Revision
from mcpkit.json import JsonObject, decode
from mcpkit.model import CancellationToken, server_context
from mcpkit.protocol import RequestMeta
from mcpkit.server._build import EngineSettings, build_engine
from mcpkit.server._call import Call, Runtime
from mcpkit.server._conversation import STATELESS
from mcpkit.server._invoke import Job
from mcpkit.server._operations import Operations, read_params

ALL = {Revision.V2025_06_18, Revision.V2025_11_25, Revision.V2026_07_28}


@dataclass(frozen=True)
class Sum:
    total: int


@mcpkit.endpoint(path="/direct", name="direct", version="1.0.0", revisions=ALL)
class Direct:
    @mcpkit.tool(name="add")
    async def add(self, a: int, b: int) -> Sum:
        return Sum(a + b)


@mcpkit.endpoint(path="/bare", name="bare", version="1.0.0", revisions=ALL)
class Bare:
    @mcpkit.prompt(name="hello")
    def hello(self) -> mcpkit.PromptOutput:
        return mcpkit.PromptOutput(messages=())


def _operations(*classes: type) -> tuple[Operations, dict[str, Runtime]]:
    registry = EndpointRegistry.from_classes(*classes)
    engine = build_engine(registry, EngineSettings())
    return engine.operations, {e.path: engine.runtime(e.path) for e in registry}


def _call(runtime: Runtime, revision: Revision, method: str, params: JsonObject) -> Call:
    return Call(
        runtime=runtime,
        revision=revision,
        request_id=7,
        method=method,
        params=params,
        args=read_params(revision, method, params),
        meta=RequestMeta(client_capabilities=JsonObject()),
        http=None,
        headers=(),
        identity=None,
        notify=lambda message: None,
        deadline=asyncio.get_running_loop().time() + 30,
        disconnected=asyncio.Event(),
        token=CancellationToken(),
        conversation=STATELESS,
    )


def _run(coroutine: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    return asyncio.run(coroutine())


@pytest.mark.parametrize(
    "params",
    [
        JsonObject({"arguments": {"a": 1, "b": 2}}),
        JsonObject({"name": 3, "arguments": {"a": 1, "b": 2}}),
        JsonObject({"name": "add", "arguments": None}),
        JsonObject({"name": "add", "arguments": [1, 2]}),
    ],
)
def test_tools_call_params_are_refused_by_its_reader_before_any_call_exists(
    params: JsonObject,
) -> None:
    with pytest.raises(InvalidParams):
        read_params(Revision.V2026_07_28, "tools/call", params)


def test_a_method_a_revision_lacks_is_left_to_the_method_check_whatever_its_params() -> None:
    # logging/setLevel is not a 2026-07-28 method: -32601 follows, not -32602
    assert read_params(Revision.V2026_07_28, "logging/setLevel", JsonObject()) is None
    with pytest.raises(InvalidParams):
        read_params(Revision.V2025_11_25, "logging/setLevel", JsonObject())


def test_tools_call_without_arguments_binds_an_empty_object() -> None:
    operations, runtimes = _operations(Direct)

    async def dispatch() -> bytes:
        params = JsonObject({"name": "add"})
        call = _call(runtimes["/direct"], Revision.V2026_07_28, "tools/call", params)
        return await operations.dispatch(call)

    # ``a`` and ``b`` are required: the empty object fails the schema, as an isError result
    body = decode(_run(dispatch))
    assert isinstance(body, JsonObject)
    result = body["result"]
    assert isinstance(result, JsonObject)
    assert result["isError"] is True


def test_a_handler_job_that_returns_no_bytes_is_the_fixed_internal_error() -> None:
    operations, runtimes = _operations(Direct)

    async def answer() -> object:
        return "not bytes"

    async def run() -> bytes:
        params = JsonObject({"name": "add"})
        call = _call(runtimes["/direct"], Revision.V2026_07_28, "tools/call", params)
        ctx = server_context(
            endpoint=call.runtime.endpoint,
            revision=call.revision,
            method=call.method,
            request_id=call.request_id,
            operation_name="add",
            client_info=None,
            client_capabilities=JsonObject(),
            meta=JsonObject(),
            input_responses=None,
            request_state=None,
            framework_state=None,
            trace={},
            identity=None,
            http_request=None,
            state=None,
        )
        job = Job(answer, True, lambda value: b"")
        return await operations._run(call, job, ctx)

    with pytest.raises(InternalError):
        _run(run)


def test_a_runtime_answers_per_revision_what_the_revision_and_capabilities_allow() -> None:
    _, runtimes = _operations(Direct, Bare)
    direct, bare = runtimes["/direct"], runtimes["/bare"]
    modern, june = Revision.V2026_07_28, Revision.V2025_06_18
    assert "tools/call" in direct.offered[modern]
    assert "prompts/get" not in direct.offered[modern]  # no prompts: capability not advertised
    assert "prompts/get" in bare.offered[modern]
    assert "tools/call" not in bare.offered[modern]
    assert "server/discover" in direct.offered[modern]  # needs no capability
    assert "server/discover" not in direct.offered[june]  # not a 2025 method
    assert {"initialize", "logging/setLevel"} <= direct.offered[june].keys()
    assert "initialize" not in direct.offered[modern]
    assert set(direct.offered) == set(Revision)


def test_an_unoffered_method_is_refused_before_any_coroutine_exists() -> None:
    operations, runtimes = _operations(Bare)

    async def dispatch() -> None:
        params = JsonObject({"name": "add"})
        call = _call(runtimes["/bare"], Revision.V2026_07_28, "tools/call", params)
        with pytest.raises(mcpkit.MethodNotFound):
            operations.dispatch(call)  # raised by the call itself, not by awaiting

    _run(dispatch)


@mcpkit.endpoint(path="/planned", name="planned", version="1.0.0", revisions=ALL)
class Planned:
    @mcpkit.tool(name="add")
    async def add(self, a: int, b: int) -> Sum:
        return Sum(a + b)

    @mcpkit.tool(name="tenant", revisions={Revision.V2026_07_28})
    def tenant(self, tenant: Annotated[str, mcpkit.Arg(header="Tenant")]) -> Sum:
        return Sum(len(tenant))

    @mcpkit.tool(
        name="conditional",
        revisions={Revision.V2026_07_28},
        input_requests=[mcpkit.InputRequestDeclaration.elicitation_form()],
    )
    def conditional(self, ctx: mcpkit.RequestContext) -> mcpkit.CompleteResult:
        return mcpkit.CompleteResult.from_tool_error_text("unused")


def test_a_runtime_plans_every_tool_find_tool_answers_once_per_revision() -> None:
    _, runtimes = _operations(Planned)
    runtime = runtimes["/planned"]
    endpoint = runtime.endpoint
    assert set(runtime.tools) == set(Revision)
    for revision in Revision:
        plans = runtime.tools[revision]
        for name in ("add", "tenant", "conditional", "missing"):
            plan = plans.get(name)
            assert (plan and plan.tool) is endpoint.find_tool(name, revision)
    modern = runtime.tools[Revision.V2026_07_28]
    assert set(runtime.tools[Revision.V2025_11_25]) == {"add"}
    add, tenant, conditional = modern["add"], modern["tenant"], modern["conditional"]
    assert (add.mirrored, add.conditional, add.at_once) == (False, False, True)
    assert (tenant.mirrored, tenant.conditional, tenant.at_once) == (True, False, False)
    assert (conditional.mirrored, conditional.conditional) == (False, True)


@mcpkit.endpoint(
    path="/asks",
    name="asks",
    version="1.0.0",
    revisions={Revision.V2025_11_25},
    session_revisions={Revision.V2025_11_25},
)
class Asks:
    @mcpkit.tool(name="ask", input_requests=[mcpkit.InputRequestDeclaration.roots()])
    def ask(self) -> mcpkit.CompleteResult:
        return mcpkit.CompleteResult.from_tool_text("never")


def test_input_on_a_conversation_that_cannot_be_asked_is_the_fixed_internal_error() -> None:
    """Only a session (or stdio) can be asked for input, and the endpoint checks put input on a
    2025 revision only where sessions are: a stateless conversation reaching it fails closed."""
    operations, runtimes = _operations(Asks)
    assert STATELESS.exchange(operations.limits) is None

    async def dispatch() -> bytes:
        params = JsonObject({"name": "ask", "arguments": {}})
        call = _call(runtimes["/asks"], Revision.V2025_11_25, "tools/call", params)
        return await operations.dispatch(call)

    with pytest.raises(InternalError):
        _run(dispatch)
