"""The conformance fixture: every tool, prompt and resource of the official MCP conformance
suite's server scenarios that mcpkit can serve today, written with mcpkit's decorators.

``mcpkit serve examples/everything.py --port 3001`` serves it at ``http://127.0.0.1:3001/mcp``
on all three revisions; point the conformance harness at that URL (a loopback host: the
DNS-rebinding scenario needs one).  The names, arguments and outputs are the ones the harness's
scenarios call and check, so do not rename anything here.

Tools: ``test_simple_text``, ``test_image_content``, ``test_audio_content``,
``test_embedded_resource``, ``test_multiple_content_types``, ``test_tool_with_logging``,
``test_tool_with_progress``, ``test_error_handling``, ``json_schema_2020_12_tool`` (all
revisions); ``test_x_mcp_header``, ``test_missing_capability`` and the diagnostics
``test_logging_tool`` and ``test_streaming_elicitation`` (2026-07-28 only).  The tools that ask
the client for input are written once, as 2026-07-28 multi-round input, and serve every
revision: ``test_sampling``, ``test_elicitation``, ``test_elicitation_sep1034_defaults``,
``test_elicitation_sep1330_enums`` and the ``test_input_required_result_*`` tools with the prompt
``test_input_required_result_prompt``.  On 2026-07-28 the client gets an input-required result
and retries (the request-state ones seal their state with a development keyring); in a 2025
session the framework sends the requests to the client on the call's stream and runs the handler
again with the answers.
``touch_watched_resource`` (not a conformance fixture) publishes an update of
``test://watched-resource`` to the sessions subscribed to it and the listen streams following
it.  ``test_trigger_tool_change`` and ``test_trigger_prompt_change`` change the catalog while
the server runs (they swap in the endpoint with ``test_dynamic_tool`` or
``test_dynamic_prompt`` added, or taken out again), so that the clients listening on
2026-07-28 (``subscriptions/listen``) and the 2025 sessions' ``GET`` streams are told.
Resources: ``test://static-text``, ``test://static-binary``, ``test://watched-resource`` and the
template ``test://template/{id}/data``.  Prompts: ``test_simple_prompt``,
``test_prompt_with_arguments`` (with completion of ``arg1``),
``test_prompt_with_embedded_resource`` and ``test_prompt_with_image``.

The tasks extension (2026-07-28): ``greet`` never runs as a task; ``slow_compute``,
``protocol_error_job``, ``confirm_delete`` and ``multi_input`` run as one when the request
declares the extension, ``failing_job`` only as one; ``test_tool_with_task`` gathers a name by
multi-round input, then creates its task itself and finishes it in the background.  Tasks are
kept in memory unless ``mcpkit serve --tasks-db FILE`` names a SQLite file.

Fixture left out: ``test_reconnection`` (SEP-1699 polling: the server closes a stream mid-call
for the client to resume; a handler has no way to end its stream).

Sync (``def``) and async (``async def``) handlers both appear: ``test_tool_with_logging``,
``test_tool_with_progress`` and the template resource are ``async def``, the rest are ``def``.
"""

from __future__ import annotations

import asyncio
import io
import math
import struct
import wave
import zlib
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Final, TypeVar
from urllib.parse import quote

from mcpkit import (
    Arg,
    AudioContent,
    BlobResourceContents,
    CompleteResult,
    Completion,
    CorsPolicy,
    ElicitationResponse,
    EmbeddedResource,
    Endpoint,
    EndpointRegistry,
    ImageContent,
    InputRequestDeclaration,
    InputRequestKind,
    InputRequiredResult,
    InternalError,
    InvalidParams,
    InvalidValueError,
    InvocationFeatures,
    Keyring,
    Lease,
    MemoryTaskStore,
    MissingClientCapability,
    ProgressReporter,
    PromptMessage,
    PromptOutput,
    PromptRegistration,
    RequestContext,
    RequestLogger,
    RequestStateMode,
    ResourceOutput,
    Revision,
    Role,
    SamplingResponse,
    Server,
    SkillBundle,
    SkillRegistration,
    SubscriptionRequest,
    TaskCreatedResult,
    TaskCreation,
    TaskHandle,
    TaskSupport,
    TextContent,
    TextResourceContents,
    ToolArguments,
    ToolError,
    ToolOutput,
    ToolRegistration,
    UriParam,
    __version__,
    endpoint,
    prompt,
    resource,
    tool,
)
from mcpkit.json import JsonObject, encode, from_python


def _elicit(message: str, field: str, kind: str = "string") -> dict[str, object]:
    """An ``elicitation/create`` input request for one required field."""
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


def _sample(question: str, max_tokens: int) -> dict[str, object]:
    """A ``sampling/createMessage`` input request asking the client's model one question."""
    return {
        "method": "sampling/createMessage",
        "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": question}}],
            "maxTokens": max_tokens,
        },
    }


NAME_REQUEST: Final = _elicit("What is your name?", "name")
STEP1_REQUEST: Final = _elicit("Step 1: What is your name?", "name")
COLOR_REQUEST: Final = _elicit("Step 2: What is your favorite color?", "color")
CONFIRM_STATE_REQUEST: Final = _elicit("Please confirm", "ok", "boolean")
CONTEXT_REQUEST: Final = _elicit("What context should the prompt use?", "context")
CAPITAL_REQUEST: Final = _sample("What is the capital of France?", 100)
GREETING_REQUEST: Final = _sample("Say hello to the user", 50)
ROOTS_REQUEST: Final = {"method": "roots/list"}


DELETE_REQUEST: Final = _elicit("Delete the file?", "confirm", "boolean")


@dataclass(frozen=True)
class Greeting:
    greeting: str


_BACKGROUND: set[asyncio.Task[None]] = set()


def _in_background(work: Coroutine[object, object, None]) -> None:
    """Run ``work`` on the loop, kept referenced until it ends."""
    task = asyncio.get_running_loop().create_task(work)
    _BACKGROUND.add(task)
    task.add_done_callback(_BACKGROUND.discard)


async def _greet_later(handle: TaskHandle, name: str) -> None:
    await asyncio.sleep(0.2)
    await handle.complete(Greeting(greeting=f"Hello, {name}!"))


def _accepted(answer: ElicitationResponse | None, field: str) -> str | None:
    """The accepted text value of ``field``, or ``None`` (absent, declined or another kind)."""
    if answer is None or not answer.accepted or answer.content is None:
        return None
    value = answer.content.get(field)
    return value if isinstance(value, str) else None


def _sampled_text(answer: SamplingResponse) -> str:
    texts = [block.get("text") for block in answer.blocks if block.get("type") == "text"]
    return " ".join(text for text in texts if isinstance(text, str)) or "(no text)"


def _confirmed(ctx: RequestContext, done: str) -> CompleteResult | InputRequiredResult:
    """Round 1 asks for a confirmation and seals ``{"step": "confirm"}``; round 2 finishes
    only with that exact sealed state and an accepted confirmation."""
    answer = ctx.elicitation("confirm")
    confirmed = answer is not None and answer.accepted and answer.content is not None
    if ctx.framework_state == {"step": "confirm"} and confirmed:
        return CompleteResult.from_tool_text(done)
    return InputRequiredResult(
        input_requests={"confirm": CONFIRM_STATE_REQUEST}, framework_state={"step": "confirm"}
    )


def _form(message: str, fields: Mapping[str, object]) -> dict[str, object]:
    """An ``elicitation/create`` form request for ``fields``, every one of them required."""
    return {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": dict(fields),
                "required": list(fields),
            },
        },
    }


def _ask_form(
    ctx: RequestContext, key: str, message: str, fields: Mapping[str, object], done: str
) -> CompleteResult | InputRequiredResult:
    """Ask for the form ``fields`` under ``key``; once answered, report the action and the
    content as JSON after ``done``."""
    answer = ctx.elicitation(key)
    if answer is None:
        return InputRequiredResult(input_requests={key: _form(message, fields)})
    content = {} if answer.content is None else answer.content
    json = encode(from_python(content)).decode("utf-8")
    return CompleteResult.from_tool_text(f"{done}: action={answer.action}, content={json}")


USER_FIELDS: Final = {
    "username": {"type": "string", "description": "User's response"},
    "email": {"type": "string", "description": "User's email address"},
}
DEFAULT_FIELDS: Final = {
    "name": {"type": "string", "default": "John Doe"},
    "age": {"type": "integer", "default": 30},
    "score": {"type": "number", "default": 95.5},
    "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
    "verified": {"type": "boolean", "default": True},
}
_OPTIONS: Final = ["option1", "option2", "option3"]
ENUM_FIELDS: Final = {
    "untitledSingle": {"type": "string", "enum": _OPTIONS},
    "titledSingle": {
        "type": "string",
        "oneOf": [
            {"const": "value1", "title": "First Option"},
            {"const": "value2", "title": "Second Option"},
            {"const": "value3", "title": "Third Option"},
        ],
    },
    "legacyEnum": {
        "type": "string",
        "enum": ["opt1", "opt2", "opt3"],
        "enumNames": ["Option One", "Option Two", "Option Three"],
    },
    "untitledMulti": {"type": "array", "items": {"type": "string", "enum": _OPTIONS}},
    "titledMulti": {
        "type": "array",
        "items": {
            "anyOf": [
                {"const": "value1", "title": "First Choice"},
                {"const": "value2", "title": "Second Choice"},
                {"const": "value3", "title": "Third Choice"},
            ]
        },
    },
}


CONFIRM_REQUEST: Final = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Please confirm",
        "requestedSchema": {
            "type": "object",
            "properties": {"ok": {"type": "boolean"}},
            "required": ["ok"],
        },
    },
}

# --- media, generated once at import -----------------------------------------------------------


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    """One PNG chunk: length, type, data, CRC-32 of type and data."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def make_png(size: int = 16) -> bytes:
    """A ``size`` x ``size`` 8-bit RGB PNG: a two-colour checkerboard of 4-pixel squares."""
    rows = bytearray()
    for y in range(size):
        rows.append(0)  # filter type None for every scanline
        for x in range(size):
            rows += b"\x1f\x6f\xeb" if (x // 4 + y // 4) % 2 == 0 else b"\xf5\xf5\xf5"
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)  # depth 8, RGB, no interlace
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", zlib.compress(bytes(rows), 9))
        + _png_chunk(b"IEND", b"")
    )


def make_wav(*, frequency: float = 440.0, seconds: float = 0.1, rate: int = 8000) -> bytes:
    """A mono 16-bit PCM WAV file holding a sine tone."""
    frames = b"".join(
        struct.pack("<h", round(12_000 * math.sin(2 * math.pi * frequency * n / rate)))
        for n in range(round(seconds * rate))
    )
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(rate)
        writer.writeframes(frames)
    return buffer.getvalue()


PNG: Final = make_png()
WAV: Final = make_wav()

SIMPLE_TEXT: Final = "This is a simple text response for testing."
STATIC_TEXT: Final = "This is the content of the static text resource."
WATCHED_TEXT: Final = "This is the watched resource. Subscribe to it for update notifications."
ERROR_TEXT: Final = "This tool intentionally returns an error for testing."
LOG_MESSAGES: Final = (
    "Tool execution started",
    "Tool processing data",
    "Tool execution completed",
)
STEP_SECONDS: Final = 0.05
ARG1_SUGGESTIONS: Final = ("paris", "park", "parse", "testValue1", "testing", "tokyo")


def complete_arg1(ctx: RequestContext, value: str, arguments: Mapping[str, str]) -> Completion:
    """Suggestions for ``test_prompt_with_arguments``'s ``arg1``: those starting with what the
    client typed (all of them for an empty prefix)."""
    return Completion(tuple(word for word in ARG1_SUGGESTIONS if word.startswith(value)))


def _image() -> ImageContent:
    return ImageContent(data=PNG, mime_type="image/png")


# --- the endpoint ------------------------------------------------------------------------------


@endpoint(
    path="/mcp",
    name="mcpkit-everything",
    version=__version__,
    revisions={Revision.V2025_06_18, Revision.V2025_11_25, Revision.V2026_07_28},
    # 2025 clients get a session (Mcp-Session-Id); 2026-07-28 stays stateless at the same URL
    session_revisions={Revision.V2025_06_18, Revision.V2025_11_25},
    # 2026-07-28 clients hear of changes on subscriptions/listen streams
    listen=True,
    title="mcpkit conformance fixture",
    description="Every fixture of the MCP conformance suite that mcpkit serves",
)
class Everything:
    """The conformance fixture endpoint; the default instance provider makes one per call."""

    # tools

    @tool(name="test_simple_text", description="Returns a simple text response")
    def simple_text(self) -> CompleteResult:
        return CompleteResult.from_tool_text(SIMPLE_TEXT)

    @tool(name="test_image_content", description="Returns a small PNG image")
    def image_content(self) -> CompleteResult:
        return CompleteResult.with_tool_output(ToolOutput(content=(_image(),)))

    @tool(name="test_audio_content", description="Returns a short WAV audio clip")
    def audio_content(self) -> CompleteResult:
        audio = AudioContent(data=WAV, mime_type="audio/wav")
        return CompleteResult.with_tool_output(ToolOutput(content=(audio,)))

    @tool(name="test_embedded_resource", description="Returns an embedded text resource")
    def embedded_resource(self) -> CompleteResult:
        contents = TextResourceContents(
            uri="test://embedded-resource",
            text="This is an embedded resource content.",
            mime_type="text/plain",
        )
        block = EmbeddedResource(resource=contents)
        return CompleteResult.with_tool_output(ToolOutput(content=(block,)))

    @tool(
        name="test_multiple_content_types",
        description="Returns text, an image and an embedded JSON resource",
    )
    def multiple_content_types(self) -> CompleteResult:
        document = encode(from_python({"test": "data", "value": 123})).decode("utf-8")
        contents = TextResourceContents(
            uri="test://mixed-content-resource", text=document, mime_type="application/json"
        )
        blocks = (
            TextContent(text="Multiple content types test:"),
            _image(),
            EmbeddedResource(resource=contents),
        )
        return CompleteResult.with_tool_output(ToolOutput(content=blocks))

    @tool(
        name="test_tool_with_logging",
        description="Sends three info log messages, 50 ms apart, while it runs",
    )
    async def tool_with_logging(self, logger: RequestLogger | None) -> CompleteResult:
        for number, message in enumerate(LOG_MESSAGES):
            if number:
                await asyncio.sleep(STEP_SECONDS)
            if logger is not None:
                logger.info(message, logger="everything")
        return CompleteResult.from_tool_text("Logging test completed")

    @tool(
        name="test_tool_with_progress",
        description="Reports progress 0, 50 and 100 of 100, 50 ms apart, while it runs",
    )
    async def tool_with_progress(self, progress: ProgressReporter | None) -> CompleteResult:
        for number, value in enumerate((0, 50, 100)):
            if number:
                await asyncio.sleep(STEP_SECONDS)
            if progress is not None:
                progress.report(value, 100)
        return CompleteResult.from_tool_text("Progress test completed")

    @tool(
        name="test_logging_tool",
        revisions={Revision.V2026_07_28},
        description="Logs one info message when the request's _meta sets a log level",
    )
    def logging_tool(self, logger: RequestLogger | None) -> CompleteResult:
        # server-stateless calls it without a log level: then there is no logger and nothing
        # may be logged (SEP-2575)
        if logger is not None:
            logger.info("test_logging_tool ran", logger="everything")
        return CompleteResult.from_tool_text("Logging tool completed")

    @tool(name="test_error_handling", description="Always fails with a tool error result")
    def error_handling(self) -> CompleteResult:
        # A raised exception would become the fixed -32603 error; the scenario wants isError.
        return CompleteResult.from_tool_error_text(ERROR_TEXT)

    @tool(
        name="test_x_mcp_header",
        revisions={Revision.V2026_07_28},
        description="Echoes its region argument, mirrored in the Mcp-Param-Region header",
    )
    def x_mcp_header(
        self, region: Annotated[str, Arg(header="Region", description="A region name")]
    ) -> CompleteResult:
        return CompleteResult.from_tool_text(f"Region: {region}")

    @tool(
        name="test_missing_capability",
        revisions={Revision.V2026_07_28},
        description="Requires the client's sampling capability",
    )
    def missing_capability(self, ctx: RequestContext) -> CompleteResult:
        if "sampling" not in ctx.client_capabilities:
            raise MissingClientCapability({"sampling": {}})
        return CompleteResult.from_tool_text("The client declared the sampling capability")

    @tool(
        name="test_streaming_elicitation",
        revisions={Revision.V2026_07_28},
        description="Asks the user to confirm through an input-required result, then answers",
        input_requests=[InputRequestDeclaration.elicitation_form()],
    )
    def streaming_elicitation(self, ctx: RequestContext) -> CompleteResult | InputRequiredResult:
        # 2026-07-28 has no server-to-client requests: elicitation is an input-required result
        # the client answers by retrying with inputResponses (server-stateless checks that the
        # response stream never carries an independent request).
        responses = ctx.input_responses
        answer = None if responses is None else responses.get("confirm")
        if isinstance(answer, Mapping):
            return CompleteResult.from_tool_text(f"Elicitation answered: {answer.get('action')}")
        if "elicitation" not in ctx.client_capabilities:
            raise MissingClientCapability({"elicitation": {}})
        return InputRequiredResult(input_requests={"confirm": CONFIRM_REQUEST})

    # --- tasks (2026-07-28, the io.modelcontextprotocol/tasks extension) --------------------
    # A task tool is an ordinary tool with ``task_support``: when the request declares the
    # extension the server answers with a task handle at once and runs the same method in the
    # background; the client polls tasks/get.

    @tool(description="Greets someone, always at once (never a task)")
    def greet(self, name: str) -> CompleteResult:
        return CompleteResult.from_tool_text(f"Hello, {name}!")

    @tool(
        description="Works for the given number of seconds, then reports; a task when the "
        "client can take one",
        task_support=TaskSupport.OPTIONAL,
    )
    async def slow_compute(
        self, seconds: Annotated[int, Arg(minimum=0, maximum=600)], label: str | None = None
    ) -> CompleteResult:
        await asyncio.sleep(seconds)  # tasks/cancel stops the coroutine here
        return CompleteResult.from_tool_text(f"Computed {label or 'a result'} in {seconds} s")

    @tool(
        description="A job that fails as a tool after a moment (only runs as a task)",
        revisions={Revision.V2026_07_28},
        task_support=TaskSupport.REQUIRED,
    )
    async def failing_job(self) -> CompleteResult:
        await asyncio.sleep(0.5)
        raise ToolError("The job failed")

    @tool(
        description="A job that fails with a protocol error",
        revisions={Revision.V2026_07_28},
        task_support=TaskSupport.OPTIONAL,
    )
    async def protocol_error_job(self) -> CompleteResult:
        await asyncio.sleep(0.1)
        raise InternalError()

    @tool(
        description="Asks for a confirmation before it deletes the file",
        input_requests=[InputRequestDeclaration.elicitation_form()],
        task_support=TaskSupport.OPTIONAL,
    )
    def confirm_delete(
        self, ctx: RequestContext, filename: str
    ) -> CompleteResult | InputRequiredResult:
        answer = ctx.elicitation("confirm")
        if answer is None:
            return InputRequiredResult(input_requests={"confirm": DELETE_REQUEST})
        if not answer.accepted:
            return CompleteResult.from_tool_text("Kept the file")
        return CompleteResult.from_tool_text("Deleted the file")

    @tool(
        description="Asks two questions at once, then answers with both",
        input_requests=[InputRequestDeclaration.elicitation_form()],
        task_support=TaskSupport.OPTIONAL,
    )
    def multi_input(self, ctx: RequestContext) -> CompleteResult | InputRequiredResult:
        first = _accepted(ctx.elicitation("first"), "name")
        second = _accepted(ctx.elicitation("second"), "name")
        if first is None or second is None:
            asked = {"first": NAME_REQUEST, "second": NAME_REQUEST}
            return InputRequiredResult(input_requests=asked)
        return CompleteResult.from_tool_text(f"Got {first} and {second}")

    @tool(
        name="test_tool_with_task",
        description="Asks for a name, then greets it from a task it creates itself",
        revisions={Revision.V2026_07_28},
        input_requests=[InputRequestDeclaration.elicitation_form()],
    )
    async def tool_with_task(
        self, ctx: RequestContext, features: InvocationFeatures
    ) -> TaskCreatedResult[Greeting] | InputRequiredResult:
        name = _accepted(ctx.elicitation("user_name"), "name")
        if name is None:
            return InputRequiredResult(input_requests={"user_name": NAME_REQUEST})
        handle = await features.require(TaskCreation).create()
        _in_background(_greet_later(handle, name))  # work the application runs elsewhere
        return TaskCreatedResult(task_id=handle.task_id)

    # --- multi-round input (2026-07-28, SEP-2322) -----------------------------------------
    # Each tool declares every input request it may emit; the framework checks the client's
    # capabilities, writes the requests inside the input-required result and seals the state.

    @tool(
        name="test_input_required_result_elicitation",
        description="Asks for the user's name, then greets them",
        input_requests=[InputRequestDeclaration.elicitation_form()],
    )
    def input_elicitation(self, ctx: RequestContext) -> CompleteResult | InputRequiredResult:
        name = _accepted(ctx.elicitation("user_name"), "name")
        if name is None:  # absent, declined or the wrong shape: ask (again), never fail
            return InputRequiredResult(input_requests={"user_name": NAME_REQUEST})
        return CompleteResult.from_tool_text(f"Hello, {name}!")

    @tool(
        name="test_input_required_result_sampling",
        description="Asks the client's model a question, then reports the answer",
        input_requests=[InputRequestDeclaration.sampling()],
    )
    def input_sampling(self, ctx: RequestContext) -> CompleteResult | InputRequiredResult:
        answer = ctx.sampling("capital_question")
        if answer is None:
            return InputRequiredResult(input_requests={"capital_question": CAPITAL_REQUEST})
        return CompleteResult.from_tool_text(f"The model answered: {_sampled_text(answer)}")

    @tool(
        name="test_input_required_result_list_roots",
        description="Asks for the client's roots, then lists them",
        input_requests=[InputRequestDeclaration.roots()],
    )
    def input_roots(self, ctx: RequestContext) -> CompleteResult | InputRequiredResult:
        answer = ctx.roots("client_roots")
        if answer is None:
            return InputRequiredResult(input_requests={"client_roots": ROOTS_REQUEST})
        uris = ", ".join(root.uri for root in answer.roots) or "none"
        return CompleteResult.from_tool_text(f"Client roots: {uris}")

    @tool(
        name="test_input_required_result_request_state",
        description="Asks for a confirmation and carries sealed state across the round trip",
        input_requests=[InputRequestDeclaration.elicitation_form()],
        request_state_mode=RequestStateMode.FRAMEWORK_PROTECTED,
    )
    def input_request_state(self, ctx: RequestContext) -> CompleteResult | InputRequiredResult:
        return _confirmed(ctx, "state-ok: the confirmation arrived with the sealed state")

    @tool(
        name="test_input_required_result_tampered_state",
        description="Like the request-state tool: a tampered state is refused by the framework",
        input_requests=[InputRequestDeclaration.elicitation_form()],
        request_state_mode=RequestStateMode.FRAMEWORK_PROTECTED,
    )
    def input_tampered_state(self, ctx: RequestContext) -> CompleteResult | InputRequiredResult:
        return _confirmed(ctx, "state-ok: the sealed state verified")

    @tool(
        name="test_input_required_result_multiple_inputs",
        description="Asks for a name, a model greeting and the roots at once, with sealed state",
        input_requests=[
            InputRequestDeclaration.elicitation_form(),
            InputRequestDeclaration.sampling(),
            InputRequestDeclaration.roots(),
        ],
        request_state_mode=RequestStateMode.FRAMEWORK_PROTECTED,
    )
    def input_multiple(self, ctx: RequestContext) -> CompleteResult | InputRequiredResult:
        name = ctx.elicitation("user_name")
        greeting = ctx.sampling("greeting")
        roots = ctx.roots("client_roots")
        if ctx.framework_state != {"step": "all"} or None in (name, greeting, roots):
            return InputRequiredResult(
                input_requests={
                    "user_name": NAME_REQUEST,
                    "greeting": GREETING_REQUEST,
                    "client_roots": ROOTS_REQUEST,
                },
                framework_state={"step": "all"},
            )
        return CompleteResult.from_tool_text("All three inputs arrived")

    @tool(
        name="test_input_required_result_multi_round",
        description="Asks for a name, then a colour, carrying sealed state between rounds",
        input_requests=[InputRequestDeclaration.elicitation_form()],
        request_state_mode=RequestStateMode.FRAMEWORK_PROTECTED,
    )
    def input_multi_round(self, ctx: RequestContext) -> CompleteResult | InputRequiredResult:
        # The sealed state says which round this is; the framework verified it was not
        # changed, belongs to this call and has not expired.
        state = ctx.framework_state
        round_number = state.get("round") if isinstance(state, Mapping) else None
        color = _accepted(ctx.elicitation("step2"), "color")
        if round_number == 2 and color is not None and isinstance(state, Mapping):
            return CompleteResult.from_tool_text(f"{state.get('name')} likes {color}")
        name = _accepted(ctx.elicitation("step1"), "name")
        if round_number == 1 and name is not None:
            return InputRequiredResult(
                input_requests={"step2": COLOR_REQUEST},
                framework_state={"round": 2, "name": name},
            )
        return InputRequiredResult(
            input_requests={"step1": STEP1_REQUEST}, framework_state={"round": 1}
        )

    @tool(
        name="touch_watched_resource",
        description="Publishes an update of test://watched-resource to its subscribers",
    )
    def touch_watched_resource(self) -> CompleteResult:
        # How an application announces a change: the server tells every 2025 session
        # subscribed to the URI, on its GET stream (``server`` is defined below).
        server.notify_resource_updated("test://watched-resource")
        return CompleteResult.from_tool_text("Subscribers of test://watched-resource notified")

    @tool(
        name="test_trigger_tool_change",
        description="Adds test_dynamic_tool to the catalog, or takes it out again",
    )
    def trigger_tool_change(self) -> CompleteResult:
        # A def handler runs in a worker thread: the new catalog is built here, off the loop.
        current = _current()
        server.swap(current.replace(tools=_toggled(current.tools, DYNAMIC_TOOL)))
        return CompleteResult.from_tool_text("The tool list changed")

    @tool(
        name="test_trigger_prompt_change",
        description="Adds test_dynamic_prompt to the catalog, or takes it out again",
    )
    def trigger_prompt_change(self) -> CompleteResult:
        current = _current()
        server.swap(current.replace(prompts=_toggled(current.prompts, DYNAMIC_PROMPT)))
        return CompleteResult.from_tool_text("The prompt list changed")

    # --- the 2025 client requests of the conformance suite --------------------------------
    # Written once, as 2026-07-28 multi-round input: on a 2025 session the framework sends
    # the request to the client on the call's stream and runs the handler again with the
    # answer; on 2026-07-28 the client gets an input-required result and retries.

    @tool(
        name="test_sampling",
        description="Asks the client's model the prompt, then reports the answer",
        input_requests=[InputRequestDeclaration.sampling()],
    )
    def sampling(
        self, ctx: RequestContext, prompt: Annotated[str, Arg(description="The prompt")]
    ) -> CompleteResult | InputRequiredResult:
        answer = ctx.sampling("answer")
        if answer is None:
            return InputRequiredResult(input_requests={"answer": _sample(prompt, 100)})
        return CompleteResult.from_tool_text(f"LLM response: {_sampled_text(answer)}")

    @tool(
        name="test_elicitation",
        description="Asks the user for a username and an email address, then reports them",
        input_requests=[InputRequestDeclaration.elicitation_form()],
    )
    def elicitation(
        self, ctx: RequestContext, message: Annotated[str, Arg(description="What to ask")]
    ) -> CompleteResult | InputRequiredResult:
        return _ask_form(ctx, "user", message, USER_FIELDS, "User response")

    @tool(
        name="test_elicitation_sep1034_defaults",
        description="Asks for a form whose every field has a default (SEP-1034)",
        input_requests=[InputRequestDeclaration.elicitation_form()],
    )
    def elicitation_defaults(self, ctx: RequestContext) -> CompleteResult | InputRequiredResult:
        review = "Please review your details"
        return _ask_form(ctx, "defaults", review, DEFAULT_FIELDS, "Elicitation completed")

    @tool(
        name="test_elicitation_sep1330_enums",
        description="Asks for a form with every enum variant (SEP-1330)",
        input_requests=[InputRequestDeclaration.elicitation_form()],
    )
    def elicitation_enums(self, ctx: RequestContext) -> CompleteResult | InputRequiredResult:
        return _ask_form(ctx, "choices", "Please choose", ENUM_FIELDS, "Elicitation completed")

    @tool(
        name="test_input_required_result_capabilities",
        description="Asks only for the inputs the client declared it can give",
        input_requests=[
            InputRequestDeclaration.elicitation_form(),
            InputRequestDeclaration.sampling(),
            InputRequestDeclaration.roots(),
        ],
    )
    def input_capabilities(self, ctx: RequestContext) -> CompleteResult | InputRequiredResult:
        if ctx.input_responses:
            return CompleteResult.from_tool_text("Inputs received")
        wanted = {
            InputRequestKind.ELICITATION_FORM: ("user_name", NAME_REQUEST),
            InputRequestKind.SAMPLING: ("greeting", GREETING_REQUEST),
            InputRequestKind.ROOTS: ("client_roots", ROOTS_REQUEST),
        }
        requests = {
            key: request
            for kind, (key, request) in wanted.items()
            if kind.declared_by(ctx.client_capabilities)
        }
        if not requests:
            return CompleteResult.from_tool_text("The client declared no input capability")
        return InputRequiredResult(input_requests=requests)

    # resources

    @resource(uri="test://static-text", name="static-text", mime_type="text/plain",
              description="A static text resource")  # fmt: skip
    def static_text(self) -> ResourceOutput:
        contents = TextResourceContents(
            uri="test://static-text", text=STATIC_TEXT, mime_type="text/plain"
        )
        return ResourceOutput(contents=(contents,))

    @resource(uri="test://static-binary", name="static-binary", mime_type="image/png",
              description="A static PNG image")  # fmt: skip
    def static_binary(self) -> ResourceOutput:
        contents = BlobResourceContents(uri="test://static-binary", blob=PNG, mime_type="image/png")
        return ResourceOutput(contents=(contents,))

    @resource(uri="test://watched-resource", name="watched-resource", mime_type="text/plain",
              description="The resource the subscription scenarios watch")  # fmt: skip
    def watched_resource(self) -> ResourceOutput:
        contents = TextResourceContents(
            uri="test://watched-resource", text=WATCHED_TEXT, mime_type="text/plain"
        )
        return ResourceOutput(contents=(contents,))

    @resource(uri="test://template/{id}/data", name="template-data",
              mime_type="application/json", description="JSON data for any id")  # fmt: skip
    async def template_data(self, item_id: Annotated[str, UriParam("id")]) -> ResourceOutput:
        # item_id arrives percent-decoded; the contents' URI is the template expanded again
        document = {"id": item_id, "templateTest": True, "data": f"Data for ID: {item_id}"}
        contents = TextResourceContents(
            uri=f"test://template/{quote(item_id, safe='')}/data",
            text=encode(from_python(document)).decode("utf-8"),
            mime_type="application/json",
        )
        return ResourceOutput(contents=(contents,))

    # prompts

    @prompt(name="test_simple_prompt", description="A prompt with no arguments")
    def simple_prompt(self) -> PromptOutput:
        text = TextContent(text="This is a simple prompt for testing.")
        return PromptOutput(messages=(PromptMessage(role=Role.USER, content=text),))

    @prompt(
        name="test_prompt_with_arguments",
        description="A prompt that repeats its two arguments",
        completions={"arg1": complete_arg1},
    )
    def prompt_with_arguments(
        self,
        arg1: Annotated[str, Arg(description="First test argument")],
        arg2: Annotated[str, Arg(description="Second test argument")],
    ) -> PromptOutput:
        text = TextContent(text=f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
        return PromptOutput(messages=(PromptMessage(role=Role.USER, content=text),))

    @prompt(
        name="test_prompt_with_embedded_resource",
        description="A prompt that embeds the resource it is given",
    )
    def prompt_with_embedded_resource(
        self,
        resource_uri: Annotated[
            str, Arg(name="resourceUri", description="URI of the resource to embed")
        ],
    ) -> PromptOutput:
        try:
            contents = TextResourceContents(
                uri=resource_uri, text="Embedded resource content for testing.",
                mime_type="text/plain",
            )  # fmt: skip
        except InvalidValueError:
            raise InvalidParams() from None  # not an absolute URI; never echoed
        messages = (
            PromptMessage(role=Role.USER, content=EmbeddedResource(resource=contents)),
            PromptMessage(
                role=Role.USER, content=TextContent(text="Please process the embedded resource.")
            ),
        )
        return PromptOutput(messages=messages)

    @prompt(
        name="test_input_required_result_prompt",
        description="Asks the user for context before building the prompt",
        input_requests=[InputRequestDeclaration.elicitation_form()],
    )
    def input_prompt(self, ctx: RequestContext) -> PromptOutput | InputRequiredResult:
        context = _accepted(ctx.elicitation("user_context"), "context")
        if context is None:
            return InputRequiredResult(input_requests={"user_context": CONTEXT_REQUEST})
        return PromptOutput(
            messages=(
                PromptMessage(role=Role.USER, content=TextContent(text=f"Context: {context}")),
            )
        )

    @prompt(name="test_prompt_with_image", description="A prompt carrying an image")
    def prompt_with_image(self) -> PromptOutput:
        messages = (
            PromptMessage(role=Role.USER, content=_image()),
            PromptMessage(role=Role.USER, content=TextContent(text="Please analyze the image.")),
        )
        return PromptOutput(messages=messages)


# --- json_schema_2020_12_tool ------------------------------------------------------------------
# Profile 1 expresses the harness's schema exactly ($schema, $defs with $anchor, $ref, allOf /
# anyOf, if / then / else, additionalProperties), but the decorators derive schemas from method
# signatures and cannot publish an authored document, so this one tool is registered with the
# programmatic factory and joined to the decorated endpoint below.

JSON_SCHEMA_2020_12: Final = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


def json_schema_2020_12(
    ctx: RequestContext, arguments: ToolArguments[JsonObject], features: InvocationFeatures
) -> CompleteResult:
    """Echo the arguments that passed the 2020-12 schema."""
    return CompleteResult.from_tool_text(f"Received: {encode(arguments.raw).decode('utf-8')}")


JSON_SCHEMA_TOOL: Final = ToolRegistration.authored(
    name="json_schema_2020_12_tool",
    revisions={Revision.V2025_06_18, Revision.V2025_11_25, Revision.V2026_07_28},
    input_schema=JSON_SCHEMA_2020_12,
    handler=json_schema_2020_12,
    description="Tool with JSON Schema 2020-12 features",
)


@endpoint(
    path="/mcp",
    name="mcpkit-everything",
    version=__version__,
    revisions={Revision.V2025_06_18, Revision.V2025_11_25, Revision.V2026_07_28},
)
class _Dynamic:
    """What the trigger tools add to the catalog and take out again (never served alone)."""

    @tool(name="test_dynamic_tool", description="A tool that comes and goes")
    def dynamic_tool(self) -> CompleteResult:
        return CompleteResult.from_tool_text("Here for now")

    @prompt(name="test_dynamic_prompt", description="A prompt that comes and goes")
    def dynamic_prompt(self) -> PromptOutput:
        text = TextContent(text="Here for now")
        return PromptOutput(messages=(PromptMessage(role=Role.USER, content=text),))


_Named = TypeVar("_Named", ToolRegistration, PromptRegistration)
DYNAMIC_TOOL: Final = EndpointRegistry.from_classes(_Dynamic).endpoints[0].tools[0]
DYNAMIC_PROMPT: Final = EndpointRegistry.from_classes(_Dynamic).endpoints[0].prompts[0]


def _toggled(registered: Sequence[_Named], dynamic: _Named) -> list[_Named]:
    """``registered`` without ``dynamic`` if it is there (by name), else with it, by name."""
    kept = [item for item in registered if item.name != dynamic.name]
    if len(kept) == len(registered):
        kept.append(dynamic)
    return sorted(kept, key=lambda item: item.name)


def _current() -> Endpoint:
    """The endpoint served at ``/mcp`` now (the trigger tools swap it)."""
    found = server.registry.endpoint_for_path("/mcp")
    assert found is not None
    return found


def grant_listen(request: SubscriptionRequest) -> Lease:
    """Every listen is granted for a minute at a time, then checked again: this fixture serves
    loopback clients only.  A production authorizer looks at ``request.identity`` (what
    admission established) and the resources in ``request.notifications``."""
    return Lease(60.0)


# The Skills extension's scenarios read this bundle (2026-07-28 only; 2025 views omit it).
PDF_SKILL: Final = SkillRegistration(
    SkillBundle.from_directory(Path(__file__).parent / "skills" / "pdf-processing")
)

_decorated = EndpointRegistry.from_classes(Everything).endpoints[0]
registry = EndpointRegistry.from_endpoints(
    [
        _decorated.replace(
            tools=sorted((*_decorated.tools, JSON_SCHEMA_TOOL), key=lambda t: t.name),
            skills=[PDF_SKILL],
        )
    ]
)
# Sealed request state needs keys.  Development keys live in this process only (the server logs a
# warning saying so); a production server loads a Keyring of operator-generated keys instead.
server = Server(
    registry,
    cors=CorsPolicy.loopback(),
    keyring=Keyring.development_ephemeral(),
    subscription_authorizer=grant_listen,
    task_store=MemoryTaskStore(),  # development: tasks end with the process
)
