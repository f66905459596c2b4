"""Calling application handlers: the one module that does.

For each operation the work inside a handler slot is: input conversion and Profile 1
validation (tools), the handler, result recognition, the sanitizer (tool results), output
validation, the binary-item ceiling, projection to the request's revision and encoding of the
whole JSON-RPC response (pipeline groups 14-17).  A ``def`` handler's job runs all of that in
its worker thread, so the event loop never converts or encodes large values; an ``async def``
handler's job runs on the loop.

Failures: ``ArgumentsInvalid`` becomes the fixed ``isError`` result or -32602 as the revision
table says; protocol errors a handler raises on purpose (``InvalidParams``,
``ResourceNotFound``, ``MissingClientCapability``, ...) keep their wire form; anything else a
handler raises, returns or builds wrongly is the fixed internal error and is never echoed.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, Final, NamedTuple, cast

from mcpkit.errors import (
    ArgumentsFailure,
    ArgumentsInvalid,
    Cancelled,
    InternalError,
    InvalidValueError,
    OutputError,
    OutputFailure,
    ProtocolError,
    ToolError,
)
from mcpkit.json import JsonObject, encode
from mcpkit.limits import Limits
from mcpkit.model import (
    AudioContent,
    BlobResourceContents,
    CachePolicy,
    CompleteResult,
    EmbeddedResource,
    ImageContent,
    Implementation,
    InputRequiredResult,
    InvocationFeatures,
    OperationResult,
    PromptOutput,
    PromptRegistration,
    RequestContext,
    ResourceOutput,
    ResourceRegistration,
    Revision,
    TaskCreatedResult,
    ToolArguments,
    ToolOutput,
    ToolRegistration,
    ToolShape,
    server_arguments,
    structured_result,
)
from mcpkit.model._apps import app_contents, holds_app_html
from mcpkit.model._skills import SkillAccess, SkillAccessPolicy
from mcpkit.protocol import (
    HandlerFailure,
    call_tool_result,
    get_prompt_result,
    profile,
    read_resource_result,
    result_message,
)
from mcpkit.schema import EvaluationGate, Outcome
from mcpkit.server._continuation import Continuation, write_input_required
from mcpkit.server._policy import ResultSanitizer
from mcpkit.server._task_store import TaskRecord
from mcpkit.server._task_wire import created_message
from mcpkit.server._tasks import TaskCreation

__all__ = [
    "TASK_ROUND",
    "Job",
    "Output",
    "Proceeded",
    "ToolCall",
    "checked",
    "prompt_job",
    "resource_job",
    "result_writer",
    "skill_granted",
    "tool_job",
    "value_job",
]

log = logging.getLogger("mcpkit.server")

# A tuple, not a set: membership compares by identity in C, where a set would hash the member
# with ``Enum.__hash__``, a Python call per request.
_TYPED_SHAPES: Final = (ToolShape.TYPED, ToolShape.TYPED_TASK, ToolShape.ADVANCED)


class Job(NamedTuple):
    """One slot's work: ``run()`` returns the encoded JSON-RPC response (or a coroutine for
    it when ``is_async``); ``finish(value)`` writes a value an interceptor returned instead of
    proceeding, through the same recognition, sanitizer and output checks.  ``at_once``:
    ``run()`` returns a coroutine that finishes in its first step (the handler never
    suspends), so the executor runs it inline."""

    run: Callable[[], object]
    is_async: bool
    finish: Callable[[object], bytes]
    at_once: bool = False


@dataclass(frozen=True, slots=True)
class Proceeded:
    """What ``proceed()`` gives an interceptor: the finished response, opaque to it."""

    message: bytes

    def __repr__(self) -> str:
        return "Proceeded()"


class Output(NamedTuple):
    """What every job needs to write its result; ``continuation`` says how to write an
    input-required result (2026-07-28) and is ``None`` on 2025."""

    request_id: str | int
    revision: Revision
    server_info: Implementation | None
    limits: Limits
    continuation: Continuation | None = None


def _contract_failure(what: str) -> InternalError:
    log.error("mcpkit: %s", what)
    return InternalError()


_LOGGED_ID_CHARS: Final = 64
"""A request id is logged up to this many characters (a client chooses its length)."""


def _where(ctx: object) -> str:
    """Which operation of which endpoint a request ran, and its id, for a log line: what a
    developer needs to find the failing handler.  Of what the client sent, only the request
    id (cut short, and written with ``repr`` so that no line break gets through) and a
    registered tool or prompt name appear: a resource's URI may carry anything, so its
    handler is known by the traceback's frames instead."""
    assert isinstance(ctx, RequestContext)  # every job passes the handler's context first
    endpoint = getattr(ctx.endpoint, "path", None)
    named = ctx.method in _NAMED and ctx.operation_name is not None
    name = f" {ctx.operation_name!r}" if named else ""
    request_id = ctx.request_id
    if isinstance(request_id, str) and len(request_id) > _LOGGED_ID_CHARS:
        request_id = request_id[:_LOGGED_ID_CHARS] + "..."
    return f"{ctx.method}{name} at {endpoint!r} (request id {request_id!r})"


_NAMED: Final = frozenset({"tools/call", "prompts/get"})
"""The methods whose operation name is a registered one (the request named a known one)."""


def _guard(error: BaseException, ctx: object) -> ProtocolError:
    """The wire error for whatever a handler raised: a ``ProtocolError`` as it is, anything
    else the fixed -32603, logged once with where it happened and the traceback's frames (the
    client gets no detail; development mode adds the exception's type name, see
    ``HandlerFailure``)."""
    if isinstance(error, ProtocolError):
        return error
    if isinstance(error, Cancelled):
        return InternalError()
    # The frames say where it failed; the exception's message is left out, as it may hold
    # what the client sent (an argument in an f-string), which the server never logs.
    frames = "".join(traceback.format_list(traceback.extract_tb(error.__traceback__)))
    log.error(
        "mcpkit: the handler of %s raised %s\nTraceback (most recent call last):\n%s%s "
        "(its message is not logged)",
        _where(ctx),
        type(error).__name__,
        frames,
        type(error).__qualname__,
    )
    return HandlerFailure(type(error).__name__)


def _check_binary(blocks: Iterable[object], limits: Limits) -> None:
    """One image, audio or blob item is at most ``max_binary_item_bytes``."""
    ceiling = limits.max_binary_item_bytes
    for block in blocks:
        data: bytes | None = None
        if isinstance(block, (ImageContent, AudioContent)):
            data = block.data
        elif isinstance(block, EmbeddedResource) and isinstance(
            block.resource, BlobResourceContents
        ):
            data = block.resource.blob
        elif isinstance(block, BlobResourceContents):
            data = block.blob
        if data is not None and len(data) > ceiling:
            raise OutputError(OutputFailure.SIZE)


def _input_required(result: InputRequiredResult, out: Output) -> bytes:
    """Multi-round input: checked and written by ``_continuation`` (2026-07-28 only)."""
    return write_input_required(
        result,
        continuation=out.continuation,
        request_id=out.request_id,
        revision=out.revision,
        server_info=out.server_info,
        limits=out.limits,
    )


# --- tools -----------------------------------------------------------------------------------


TASK_ROUND: Final = None
"""A ``ToolCall.request_id`` for work that answers no request: a task's round, whose result
is written as the tool result object alone (what the task stores), not as a response."""


class ToolCall(NamedTuple):
    """One tool call's job state.  ``Output``'s members are its own (one tuple per request
    rather than two); ``out`` builds the ``Output`` for the rare input-required result.
    ``request_id`` is ``TASK_ROUND`` for a task's work."""

    tool: ToolRegistration
    ctx: RequestContext
    arguments: JsonObject
    features: InvocationFeatures
    gate: EvaluationGate
    sanitizer: ResultSanitizer | None
    request_id: str | int | None
    revision: Revision
    server_info: Implementation | None
    limits: Limits
    continuation: Continuation | None = None

    @property
    def out(self) -> Output:
        # a task's round keeps its input request (``continuation.inquiry``): no id is written
        request_id = 0 if self.request_id is None else self.request_id
        return Output(request_id, self.revision, self.server_info, self.limits, self.continuation)


def _bind(call: ToolCall) -> ToolArguments[Any]:
    tool = call.tool
    schema = tool.input_schema
    gate = call.gate
    gate.enter()  # ``with gate:`` without its two Python frames
    try:
        # the server's budget, whatever the tool was built with
        budget = min(
            call.limits.max_evaluation_operations,
            schema.limits.max_evaluation_operations,
        )
        outcome = schema.evaluate(call.arguments, max_operations=budget)
        if outcome is not Outcome.VALID:  # rare: evaluated again, to say where and why
            raise ArgumentsInvalid(
                ArgumentsFailure.BUDGET_EXHAUSTED
                if outcome is Outcome.BUDGET_EXHAUSTED
                else ArgumentsFailure.INVALID,
                schema.explain(call.arguments, max_operations=budget),
            )
    finally:
        gate.leave()
    if tool.shape in _TYPED_SHAPES and tool.input_model is not None:
        converted: object = tool.input_model.bind_validated(call.arguments)
    else:
        converted = call.arguments
    return server_arguments(converted, call.arguments)


def _recognise_tool(
    call: ToolCall, returned: object
) -> CompleteResult | InputRequiredResult | TaskRecord:
    tool = call.tool
    if tool.shape is ToolShape.TYPED or (
        tool.shape is ToolShape.TYPED_TASK and not isinstance(returned, OperationResult)
    ):  # a task's typed value (``TaskHandle.complete``) is written as a typed tool's
        if tool.output_model is None:  # pragma: no cover - typed tools always have one
            raise _contract_failure("typed tool without an output model")
        gate = call.gate
        try:
            gate.enter()  # ``with gate:`` without its two Python frames
            try:
                structured = tool.output_model.to_json(returned)
            finally:
                gate.leave()
        except OutputError:
            log.error(
                "mcpkit: the handler of %s returned %s, which its declared output type does "
                "not accept",
                _where(call.ctx),
                type(returned).__name__,
            )
            raise
        return structured_result(structured)
    if isinstance(returned, CompleteResult):
        if not returned.is_tool:
            raise _contract_failure("a tool returned a non-tool result")
        return returned
    if isinstance(returned, InputRequiredResult):
        return returned
    if isinstance(returned, TaskCreatedResult):
        return _created(call, returned)
    raise _contract_failure(
        f"the handler of {_where(call.ctx)} returned {type(returned).__name__}; a tool without "
        "a declared output type returns CompleteResult or InputRequiredResult (or a str, when "
        "its function is annotated -> str)"
    )


def _created(call: ToolCall, returned: TaskCreatedResult[Any]) -> TaskRecord:
    """The task an operation handler created through this call's ``TaskCreation`` and
    returned the id of; any other id (or a handler that could not create one) is a contract
    failure, so a client is only ever given a task that is stored and its own."""
    creation = call.features.find(TaskCreation)
    record = None if creation is None else creation.created(returned.task_id)
    if record is None:
        raise _contract_failure(
            f"the handler of {_where(call.ctx)} returned a TaskCreatedResult for no task it "
            "created through its TaskCreation"
        )
    return record


def _sanitize(call: ToolCall, sanitizer: ResultSanitizer, result: CompleteResult) -> CompleteResult:
    try:
        cleaned = sanitizer(call.ctx, call.tool.name, call.arguments, result)
    except Exception as error:
        raise _contract_failure(f"sanitizer raised {type(error).__name__}") from None
    if not isinstance(cleaned, CompleteResult) or not cleaned.is_tool:
        raise _contract_failure("sanitizer returned something other than a tool result")
    return cleaned


def _write_tool(call: ToolCall, result: CompleteResult | InputRequiredResult | TaskRecord) -> bytes:
    if type(result) is not CompleteResult:  # final: one test for the two rare kinds
        if isinstance(result, InputRequiredResult):
            return _input_required(result, call.out)
        assert isinstance(result, TaskRecord)
        # a task's own round has no TaskCreation, so ``_created`` refused any handle it returned
        assert call.request_id is not None
        return created_message(call.request_id, result, call.server_info, call.limits)
    if call.sanitizer is not None:
        result = _sanitize(call, call.sanitizer, result)
    limits = call.limits
    payload = result.payload  # recognised above: always a ToolOutput
    if isinstance(payload, ToolOutput) and payload.content:  # nothing to check without
        _check_binary(payload.content, limits)
        if not profile(call.revision).apps and holds_app_html(payload.content):
            raise _contract_failure(f"tool {call.tool.name!r} returned MCP App HTML on 2025")
    body = call_tool_result(
        result,
        call.revision,
        mirror_structured_content=call.tool.mirror_structured_content,
        server_info=call.server_info,
        limits=limits,
    )
    if call.request_id is None:  # TASK_ROUND
        return encode(body, limits=limits)
    return result_message(call.request_id, body, limits=limits)


def _invalid_arguments(call: ToolCall, error: ArgumentsInvalid) -> bytes:
    """The fixed ``isError`` result (through the sanitizer), or -32602 on June."""
    if not profile(call.revision).invalid_arguments_as_tool_error:
        raise error
    text = ArgumentsInvalid.message
    if error.detail is not None:
        text = f"{text[:-1]}: {error.detail}."  # "...inputSchema: limit: must be at most 50."
    return _write_tool(call, CompleteResult.from_tool_error_text(text))


def _tool_sync(call: ToolCall) -> bytes:
    try:
        arguments = _bind(call)
    except ArgumentsInvalid as error:
        return _invalid_arguments(call, error)
    try:
        returned = call.tool.handler(call.ctx, arguments, call.features)
    except ToolError as error:
        return _write_tool(call, CompleteResult.from_tool_error_text(error.text))
    except BaseException as error:
        raise _guard(error, call.ctx) from None
    return _write_tool(call, _recognise_tool(call, returned))


async def _tool_async(call: ToolCall) -> bytes:
    try:
        arguments = _bind(call)
    except ArgumentsInvalid as error:
        return _invalid_arguments(call, error)
    try:
        # is_async: a coroutine function (or an object whose __call__ is one); no ``cast``
        # call here, it would cost a frame per request
        returned = await call.tool.handler(call.ctx, arguments, call.features)  # type: ignore[misc]
    except ToolError as error:
        return _write_tool(call, CompleteResult.from_tool_error_text(error.text))
    except Exception as error:
        raise _guard(error, call.ctx) from None
    return _write_tool(call, _recognise_tool(call, returned))


def _short_circuit(call: ToolCall, value: object) -> bytes:
    """An interceptor's own tool result: a ``CompleteResult``, an ``InputRequiredResult`` or
    (typed tools) a value of the output type."""
    if isinstance(value, (CompleteResult, InputRequiredResult)):
        if isinstance(value, CompleteResult) and not value.is_tool:
            raise _contract_failure("an interceptor returned a non-tool result")
        return _write_tool(call, value)
    return _write_tool(call, _recognise_tool(call, value))


def result_writer(call: ToolCall) -> Callable[[object], bytes]:
    """What writes a value as ``call``'s tool result, as a handler's would be (a
    ``TaskHandle`` completing a task)."""
    return partial(_short_circuit, call)


def tool_job(call: ToolCall, *, at_once: bool = False) -> Job:
    """``at_once``: the handler never suspends (and so neither does the job's coroutine).
    C-level ``partial`` objects rather than closures: no Python frame to call them."""
    finish = partial(_short_circuit, call)
    if call.tool.is_async:
        return Job(partial(_tool_async, call), True, finish, at_once)
    return Job(partial(_tool_sync, call), False, finish)


# --- prompts and resources ---------------------------------------------------------------


def _recognised(
    returned: object, complete: CompleteResult | None, what: str
) -> CompleteResult | InputRequiredResult:
    """A prompt's or a resource's result: ``complete`` when its handler returned the plain
    output (already wrapped), else a complete result of the same kind or an input request."""
    if complete is not None:
        return complete
    if isinstance(returned, InputRequiredResult):
        return returned
    raise _contract_failure(f"{what} returned {type(returned).__name__}")


def _prompt_result(returned: object) -> CompleteResult | InputRequiredResult:
    if isinstance(returned, PromptOutput):
        return CompleteResult.with_prompt_output(returned)
    prompt = returned if isinstance(returned, CompleteResult) and returned.is_prompt else None
    return _recognised(returned, prompt, "a prompt")


def _write_prompt(out: Output, result: CompleteResult | InputRequiredResult) -> bytes:
    if isinstance(result, InputRequiredResult):
        return _input_required(result, out)
    payload = result.payload  # recognised above: always a PromptOutput
    messages = payload.messages if isinstance(payload, PromptOutput) else ()
    _check_binary((message.content for message in messages), out.limits)
    body = get_prompt_result(result, out.revision, server_info=out.server_info)
    return result_message(out.request_id, body, limits=out.limits)


def _resource_result(returned: object) -> CompleteResult | InputRequiredResult:
    if isinstance(returned, ResourceOutput):
        return CompleteResult.with_resource_output(returned)
    resource = returned if isinstance(returned, CompleteResult) and returned.is_resource else None
    return _recognised(returned, resource, "a resource handler")


def _app_result(
    resource: ResourceRegistration, out: Output, result: CompleteResult | InputRequiredResult
) -> CompleteResult | InputRequiredResult:
    """An App's contents labelled with its declaration; App HTML refused where Apps do not
    exist (a 2025 revision)."""
    if isinstance(result, InputRequiredResult):
        return result
    if resource.app is not None and resource.uri is not None:
        try:
            return app_contents(result, resource.uri, resource.app)
        except InvalidValueError as error:
            raise _contract_failure(f"resource {resource.uri!r}: {error.rule}") from None
    contents = result.payload.contents if isinstance(result.payload, ResourceOutput) else ()
    if not profile(out.revision).apps and holds_app_html(contents):
        raise _contract_failure("a resource returned MCP App HTML on a 2025 revision")
    return result


def _write_resource(
    out: Output, cache: CachePolicy, result: CompleteResult | InputRequiredResult
) -> bytes:
    if isinstance(result, InputRequiredResult):
        return _input_required(result, out)
    payload = result.payload  # recognised above: always a ResourceOutput
    _check_binary(payload.contents if isinstance(payload, ResourceOutput) else (), out.limits)
    body = read_resource_result(result, out.revision, cache=cache, server_info=out.server_info)
    return result_message(out.request_id, body, limits=out.limits)


def _job(
    handler: Callable[..., object],
    arguments: tuple[object, ...],
    is_async: bool,
    finish: Callable[[object], bytes],
    at_once: bool = False,
) -> Job:
    """A job that calls ``handler(*arguments)`` and writes what it returns with ``finish``."""

    def run_sync() -> bytes:
        try:
            returned = handler(*arguments)
        except BaseException as error:
            raise _guard(error, arguments[0]) from None
        return finish(returned)

    async def run_async() -> bytes:
        try:
            returned = await cast("Awaitable[object]", handler(*arguments))
        except Exception as error:
            raise _guard(error, arguments[0]) from None
        return finish(returned)

    return Job(run_async if is_async else run_sync, is_async, finish, is_async and at_once)


def prompt_job(
    prompt: PromptRegistration,
    ctx: RequestContext,
    arguments: Mapping[str, str],
    features: InvocationFeatures,
    out: Output,
    *,
    at_once: bool = False,
) -> Job:
    return _job(
        prompt.handler,
        (ctx, arguments, features),
        prompt.is_async,
        lambda returned: _write_prompt(out, _prompt_result(returned)),
        at_once,
    )


def resource_job(
    resource: ResourceRegistration,
    variables: Mapping[str, str] | None,
    ctx: RequestContext,
    features: InvocationFeatures,
    cache: CachePolicy,
    out: Output,
    *,
    at_once: bool = False,
) -> Job:
    arguments = (ctx, features) if variables is None else (ctx, variables, features)
    return _job(
        resource.handler,
        arguments,
        resource.is_async,
        lambda returned: _write_resource(
            out, cache, _app_result(resource, out, _resource_result(returned))
        ),
        at_once,
    )


def value_job(
    handler: Callable[..., object],
    arguments: tuple[object, ...],
    is_async: bool,
    finish: Callable[[object], bytes],
) -> Job:
    """A job for the other application callbacks (completion, the resource list handler)."""
    return _job(handler, arguments, is_async, finish)


def checked(value: object, kind: type[Any], what: str) -> Any:
    """``value`` when it is a ``kind``, else the fixed internal error."""
    if not isinstance(value, kind):
        raise _contract_failure(f"{what} returned {type(value).__name__}")
    return value


def skill_granted(policy: SkillAccessPolicy | None, access: SkillAccess) -> bool:
    """The endpoint's skill access policy's answer for ``access`` (no policy: granted).  Only
    ``True`` grants; a policy that raises denies, logged by type, so a failing policy fails
    closed and its failure looks like any denial.  Called on the loop: a policy must not
    block."""
    if policy is None:
        return True
    try:
        return policy(access) is True
    except Exception as error:
        log.warning("mcpkit: the skill access policy raised %s; denied", type(error).__name__)
        return False
