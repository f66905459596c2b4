"""Interop with the official Python SDK client (``mcp`` 2.3.0) against ``mcpkit serve
examples/everything.py``: over Streamable HTTP at every revision the client speaks, and over
stdio.

The client speaks all three revisions mcpkit serves: 2026-07-28 through ``server/discover``
(the stateless per-request envelope), 2025-11-25 through its own ``initialize`` (its newest
handshake revision), and 2025-06-18 through an ``initialize`` request pinned to that revision
and adopted into the session with the client's public ``send_request`` / ``adopt`` API (the
client offers no other way to ask for an older handshake revision).

Every HTTP response body the client receives is recorded by an httpx2 transport handed to the
client, and each JSON-RPC message in it (the JSON body, or every SSE ``data:`` event) is
checked against the official (closed) schema of the negotiated revision: the JSON-RPC envelope,
then the result definition of the method it answers or the notification's own definition;
on 2026-07-28 an ``input_required`` result is checked against
``InputRequiredResult`` instead.

On 2026-07-28 the high-level ``mcp.Client`` also completes multi-round input against the
fixture's ``test_input_required_result_*`` tools and prompt: its elicitation, sampling and
roots callbacks answer the embedded requests, and it retries with ``inputResponses`` and the
sealed ``requestState`` (over Streamable HTTP, and once over stdio).
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import httpx2
import mcp.types as types
import pytest
from mcp.client import Client, ClientSession
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from ..spec_schemas import closed_document, definitions, schema_errors
from .conftest import handshake

ROOT: Final = Path(__file__).resolve().parents[2]
EVERYTHING: Final = ROOT / "examples" / "everything.py"

JUNE: Final = "2025-06-18"
NOVEMBER: Final = "2025-11-25"
MODERN: Final = "2026-07-28"
REVISIONS: Final = (JUNE, NOVEMBER, MODERN)
TIMEOUT_SECONDS: Final = 60.0
INVALID_PARAMS: Final = -32602
RESOURCE_NOT_FOUND: Final = -32002  # 2025 revisions; 2026-07-28 answers INVALID_PARAMS

CLIENT_INFO: Final = types.Implementation(name="mcpkit-interop", version="1.0.0")
PNG_SIGNATURE: Final = b"\x89PNG\r\n\x1a\n"
SIMPLE_TEXT: Final = "This is a simple text response for testing."
STATIC_TEXT: Final = "This is the content of the static text resource."
ALL_REVISION_TOOLS: Final = frozenset(
    {
        "test_simple_text",
        "test_image_content",
        "test_audio_content",
        "test_embedded_resource",
        "test_multiple_content_types",
        "test_tool_with_logging",
        "test_tool_with_progress",
        "test_error_handling",
        "json_schema_2020_12_tool",
    }
)
MODERN_ONLY_TOOLS: Final = frozenset({"test_x_mcp_header", "test_missing_capability"})
PROMPTS: Final = frozenset(
    {
        "test_simple_prompt",
        "test_prompt_with_arguments",
        "test_prompt_with_embedded_resource",
        "test_prompt_with_image",
    }
)

# The result definition of each method's answer, and the definition of each notification.
RESULTS: Final = {
    "initialize": "InitializeResult",
    "server/discover": "DiscoverResult",
    "ping": "EmptyResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "completion/complete": "CompleteResult",
    "resources/subscribe": "EmptyResult",
    "resources/unsubscribe": "EmptyResult",
    "subscriptions/listen": "SubscriptionsListenResult",
}
NOTIFICATIONS: Final = {
    "notifications/progress": "ProgressNotification",
    "notifications/message": "LoggingMessageNotification",
    "notifications/resources/updated": "ResourceUpdatedNotification",
    "notifications/resources/list_changed": "ResourceListChangedNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
}
# What a 2025 server may ask its client (a session's input requests); 2026-07-28 asks nothing.
CLIENT_REQUESTS: Final = {
    "elicitation/create": "ElicitRequest",
    "sampling/createMessage": "CreateMessageRequest",
    "roots/list": "ListRootsRequest",
}


# The methods whose 2026-07-28 answer may be an input-required result.
MULTI_ROUND: Final = frozenset({"tools/call", "prompts/get", "resources/read"})


def _input_required(result: object) -> bool:
    """Whether ``result`` says it is an ``InputRequiredResult``: then it is checked against
    that definition instead of the method's own result."""
    return isinstance(result, dict) and result.get("resultType") == "input_required"


def envelopes(revision: str) -> tuple[str, str]:
    """The definitions of a result response and of an error response at ``revision``."""
    if revision == JUNE:
        return "JSONRPCResponse", "JSONRPCError"
    return "JSONRPCResultResponse", "JSONRPCErrorResponse"


def without_envelope(revision: str, definition: str, message: dict[str, Any]) -> dict[str, Any]:
    """``message`` as ``definition`` describes it: 2025-06-18 defines a notification's or a
    request's method and params without the JSON-RPC envelope (``jsonrpc``, a request's
    ``id``), the later revisions include it."""
    described = definitions(closed_document(revision))[definition]["properties"]
    return {
        key: value
        for key, value in message.items()
        if key in described or key not in ("jsonrpc", "id")
    }


# --- recording what the client receives -------------------------------------------------------


@dataclass
class Exchange:
    """One HTTP request of the client and the response body it read, byte for byte."""

    method: str
    request: bytes
    status: int
    content_type: str
    body: bytearray = field(default_factory=bytearray)


class _Tee(httpx2.AsyncByteStream):
    """A response stream that copies every chunk the client reads into ``sink``."""

    def __init__(self, inner: httpx2.AsyncByteStream, sink: bytearray) -> None:
        self._inner = inner
        self._sink = sink

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._sink += chunk
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class RecordingTransport(httpx2.AsyncBaseTransport):
    """The default httpx2 transport, recording each exchange in ``exchanges``."""

    def __init__(self) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self.exchanges: list[Exchange] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        sent = await request.aread()
        response = await self._inner.handle_async_request(request)
        content_type = response.headers.get("content-type", "")
        exchange = Exchange(request.method, sent, response.status_code, content_type)
        self.exchanges.append(exchange)
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        response.stream = _Tee(response.stream, exchange.body)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def sse_data(body: bytes) -> list[bytes]:
    """The data of every SSE event in ``body`` that carries any (priming events carry none)."""
    events: list[bytes] = []
    for block in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        lines = [line[5:] for line in block.split(b"\n") if line.startswith(b"data:")]
        data = b"\n".join(line[1:] if line.startswith(b" ") else line for line in lines)
        if data:
            events.append(data)
    return events


@dataclass
class Wire:
    """What the client received at one negotiated revision."""

    revision: str
    exchanges: list[Exchange]

    def messages(self) -> Iterator[tuple[str | None, Any]]:
        """Each server message with the method of the request whose HTTP response carried it
        (``None`` for a GET stream or a body that is not a JSON-RPC request)."""
        for exchange in self.exchanges:
            if not exchange.body:
                continue
            method = None
            if exchange.request:
                sent = json.loads(exchange.request)
                if isinstance(sent, dict) and "id" in sent:
                    method = sent.get("method")
            media = exchange.content_type.split(";")[0].strip().lower()
            if media == "text/event-stream":
                for data in sse_data(bytes(exchange.body)):
                    yield method, json.loads(data)
            else:
                assert media == "application/json", (exchange.status, exchange.content_type)
                yield method, json.loads(exchange.body)

    def problems(self) -> list[str]:
        """Every way a received message fails the official schema of ``revision``."""
        result_envelope, error_envelope = envelopes(self.revision)
        found: list[str] = []

        def check(definition: str, instance: Any) -> None:
            found.extend(
                f"{definition}: {error}"
                for error in schema_errors(self.revision, definition, instance)
            )

        for method, message in self.messages():
            if not isinstance(message, dict):
                found.append(f"not a JSON-RPC message object: {message!r}")
            elif "result" in message:
                check(result_envelope, message)
                result = message["result"]
                if self.revision == MODERN and _input_required(result) and method in MULTI_ROUND:
                    check("InputRequiredResult", result)
                elif method in RESULTS:
                    check(RESULTS[method], result)
                else:
                    found.append(f"a result for an unexpected method {method!r}")
            elif "error" in message:
                check(error_envelope, message)
            elif "id" in message:
                asked = CLIENT_REQUESTS.get(message.get("method", ""))
                if asked is None or self.revision == MODERN:
                    found.append(
                        f"an unexpected server-to-client request {message.get('method')!r}"
                    )
                else:
                    check("JSONRPCRequest", message)
                    check(asked, without_envelope(self.revision, asked, message))
            else:
                check("JSONRPCNotification", message)
                notification = NOTIFICATIONS.get(message.get("method", ""))
                if notification is None:
                    found.append(f"an unexpected notification {message.get('method')!r}")
                else:
                    check(notification, without_envelope(self.revision, notification, message))
        return found

    def answered(self) -> list[str]:
        """The methods of the requests that received a result, in order."""
        return [m for m, message in self.messages() if m is not None and "result" in message]

    def notifications(self, method: str) -> list[dict[str, Any]]:
        return [
            message
            for _, message in self.messages()
            if "id" not in message and message.get("method") == method
        ]


# --- driving the official client -------------------------------------------------------------

Scenario = Callable[[ClientSession], Awaitable[None]]


def drive(url: str, revision: str, scenario: Scenario) -> Wire:
    """Run ``scenario`` in a client session at ``revision``; what the client received."""
    recorder = RecordingTransport()

    async def main() -> None:
        async with (
            httpx2.AsyncClient(transport=recorder, timeout=httpx2.Timeout(30.0)) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write, client_info=CLIENT_INFO) as session,
        ):
            await handshake(session, revision, CLIENT_INFO)
            await scenario(session)

    asyncio.run(asyncio.wait_for(main(), TIMEOUT_SECONDS))
    return Wire(revision, recorder.exchanges)


def text_of(block: object) -> str:
    assert isinstance(block, types.TextContent), block
    return block.text


# --- the schema check itself -----------------------------------------------------------------


def answer(content_type: str, body: bytes) -> Exchange:
    """An exchange answering a ``tools/call`` request with ``body``."""
    call = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t"}}'
    return Exchange("POST", call, 200, content_type, bytearray(body))


@pytest.mark.parametrize("revision", REVISIONS)
def test_schema_check_reports_what_the_schema_refuses(revision: str) -> None:
    """The recorder's check is not vacuous: a wrong result, a wrong notification inside an SSE
    body and an unexpected server request are all reported; their valid forms are not."""
    tail = b',"resultType":"complete"' if revision == MODERN else b""
    result = b'{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"ok"}]%s}}'
    progress = b'{"jsonrpc":"2.0","method":"notifications/progress","params":{%s"progress":1}}'
    event = b"id: 1\r\ndata:\r\n\r\nevent: message\r\ndata: %s\r\n\r\ndata: %s\r\n\r\n"

    valid = answer("application/json", result % tail)
    assert Wire(revision, [valid]).problems() == []
    assert Wire(revision, [valid]).answered() == ["tools/call"]
    streamed = answer(
        "text/event-stream", event % (progress % b'"progressToken":1,', result % tail)
    )
    assert Wire(revision, [streamed]).problems() == []
    assert len(Wire(revision, [streamed]).notifications("notifications/progress")) == 1

    wrong = answer(
        "application/json", b'{"jsonrpc":"2.0","id":7,"result":{"content":"ok"%s}}' % tail
    )
    assert any(p.startswith("CallToolResult:") for p in Wire(revision, [wrong]).problems())
    tokenless = answer("text/event-stream", event % (progress % b"", result % tail))
    [refused] = Wire(revision, [tokenless]).problems()
    assert refused.startswith("ProgressNotification:")
    assert "progressToken" in refused
    asking = answer(
        "text/event-stream", b'data: {"jsonrpc":"2.0","id":1,"method":"roots/list"}\n\n'
    )
    # a 2025 server may ask its client for input; 2026-07-28 never sends a request
    expected = ["an unexpected server-to-client request 'roots/list'"] if revision == MODERN else []
    assert Wire(revision, [asking]).problems() == expected
    lost = answer("text/event-stream", b'data: {"jsonrpc":"2.0","id":1,"method":"roots/lost"}\n\n')
    assert Wire(revision, [lost]).problems() == [
        "an unexpected server-to-client request 'roots/lost'"
    ]


# --- Streamable HTTP, per revision -----------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
def test_handshake_results_are_valid(server_url: str, revision: str) -> None:
    async def nothing(session: ClientSession) -> None:
        info = session.server_info
        assert info is not None
        assert info.name == "mcpkit-everything"
        capabilities = session.server_capabilities
        assert capabilities is not None
        assert capabilities.tools is not None
        assert capabilities.prompts is not None
        assert capabilities.resources is not None

    wire = drive(server_url, revision, nothing)
    assert wire.problems() == []
    assert wire.answered() == ["server/discover" if revision == MODERN else "initialize"]


@pytest.mark.parametrize("revision", REVISIONS)
def test_tools(server_url: str, revision: str) -> None:
    reported: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reported.append((progress, total))

    async def scenario(session: ClientSession) -> None:
        listed = await session.list_tools()
        names = {tool.name for tool in listed.tools}
        assert names >= ALL_REVISION_TOOLS
        if revision == MODERN:
            assert names >= MODERN_ONLY_TOOLS
        else:
            assert names.isdisjoint(MODERN_ONLY_TOOLS)
        assert all(tool.input_schema.get("type") == "object" for tool in listed.tools)

        simple = await session.call_tool("test_simple_text", {})
        assert simple.is_error is False
        assert [text_of(block) for block in simple.content] == [SIMPLE_TEXT]

        image = await session.call_tool("test_image_content", {})
        assert image.is_error is False
        [block] = image.content
        assert isinstance(block, types.ImageContent)
        assert block.mime_type == "image/png"
        assert base64.b64decode(block.data, validate=True).startswith(PNG_SIGNATURE)

        failed = await session.call_tool("test_error_handling", {})
        assert failed.is_error is True
        [message] = failed.content
        assert text_of(message)

        done = await session.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
        assert done.is_error is False
        assert [text_of(block) for block in done.content] == ["Progress test completed"]

    wire = drive(server_url, revision, scenario)
    assert reported == [(0, 100), (50, 100), (100, 100)]
    assert wire.problems() == []
    assert wire.answered()[1:] == ["tools/list", *["tools/call"] * 4]
    notified = wire.notifications("notifications/progress")
    assert [n["params"]["progress"] for n in notified] == [0, 50, 100]
    assert len({json.dumps(n["params"]["progressToken"]) for n in notified}) == 1


@pytest.mark.parametrize("revision", REVISIONS)
def test_prompts(server_url: str, revision: str) -> None:
    async def scenario(session: ClientSession) -> None:
        listed = await session.list_prompts()
        assert {prompt.name for prompt in listed.prompts} >= PROMPTS
        [with_arguments] = [p for p in listed.prompts if p.name == "test_prompt_with_arguments"]
        arguments = with_arguments.arguments or []
        assert [(a.name, a.required) for a in arguments] == [("arg1", True), ("arg2", True)]

        got = await session.get_prompt(
            "test_prompt_with_arguments", {"arg1": "first-value", "arg2": "second-value"}
        )
        texts = [text_of(message.content) for message in got.messages]
        assert all(message.role == "user" for message in got.messages)
        assert any("first-value" in text for text in texts)
        assert any("second-value" in text for text in texts)

    wire = drive(server_url, revision, scenario)
    assert wire.problems() == []
    assert wire.answered()[1:] == ["prompts/list", "prompts/get"]


@pytest.mark.parametrize("revision", REVISIONS)
def test_resources(server_url: str, revision: str) -> None:
    async def scenario(session: ClientSession) -> None:
        listed = await session.list_resources()
        uris = {resource.uri for resource in listed.resources}
        assert {"test://static-text", "test://static-binary"} <= uris
        templates = await session.list_resource_templates()
        assert "test://template/{id}/data" in {t.uri_template for t in templates.resource_templates}

        text = await session.read_resource("test://static-text")
        [contents] = text.contents
        assert isinstance(contents, types.TextResourceContents)
        assert (contents.uri, contents.mime_type, contents.text) == (
            "test://static-text", "text/plain", STATIC_TEXT,
        )  # fmt: skip

        binary = await session.read_resource("test://static-binary")
        [blob] = binary.contents
        assert isinstance(blob, types.BlobResourceContents)
        assert (blob.uri, blob.mime_type) == ("test://static-binary", "image/png")
        assert base64.b64decode(blob.blob, validate=True).startswith(PNG_SIGNATURE)

        templated = await session.read_resource("test://template/42/data")
        [data] = templated.contents
        assert isinstance(data, types.TextResourceContents)
        assert (data.uri, data.mime_type) == ("test://template/42/data", "application/json")
        assert json.loads(data.text) == {
            "id": "42",
            "templateTest": True,
            "data": "Data for ID: 42",
        }

        with pytest.raises(MCPError) as missing:
            await session.read_resource("test://no-such-resource")
        assert missing.value.code == (INVALID_PARAMS if revision == MODERN else RESOURCE_NOT_FOUND)

    wire = drive(server_url, revision, scenario)
    assert wire.problems() == []
    assert wire.answered()[1:] == [
        "resources/list", "resources/templates/list", *["resources/read"] * 3,
    ]  # fmt: skip


@pytest.mark.parametrize("revision", REVISIONS)
def test_completion(server_url: str, revision: str) -> None:
    async def scenario(session: ClientSession) -> None:
        reference = types.PromptReference(name="test_prompt_with_arguments")
        completed = await session.complete(reference, {"name": "arg1", "value": "pa"})
        values = completed.completion.values
        assert "paris" in values
        assert all(value.startswith("pa") for value in values)
        everything = await session.complete(reference, {"name": "arg1", "value": ""})
        assert set(values) < set(everything.completion.values)

    wire = drive(server_url, revision, scenario)
    assert wire.problems() == []
    assert wire.answered()[1:] == ["completion/complete"] * 2


@pytest.mark.parametrize(("mode", "revision"), [("auto", MODERN), ("legacy", NOVEMBER)])
def test_high_level_client_negotiates(server_url: str, mode: str, revision: str) -> None:
    """``mcp.Client``: ``auto`` probes ``server/discover`` and settles on 2026-07-28; ``legacy``
    runs the handshake at the client's newest 2025 revision."""
    recorder = RecordingTransport()

    async def main() -> None:
        async with (
            httpx2.AsyncClient(transport=recorder, timeout=httpx2.Timeout(30.0)) as http,
            Client(streamable_http_client(server_url, http_client=http), mode=mode) as client,
        ):
            assert client.protocol_version == revision
            result = await client.call_tool("test_simple_text", {})
            assert [text_of(block) for block in result.content] == [SIMPLE_TEXT]

    asyncio.run(asyncio.wait_for(main(), TIMEOUT_SECONDS))
    wire = Wire(revision, recorder.exchanges)
    assert wire.problems() == []
    assert "tools/call" in wire.answered()


# --- stdio -----------------------------------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
def test_stdio_tools_prompts_and_resources(revision: str) -> None:
    """The client's ``stdio_client`` launches ``mcpkit serve examples/everything.py --stdio``
    and, at each revision it speaks, lists and calls a tool, gets a prompt and reads a
    resource (the same pipeline without the HTTP-only steps)."""
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcpkit", "serve", str(EVERYTHING), "--stdio"],
        cwd=ROOT,
    )

    async def main(errlog: Any) -> None:
        async with (
            stdio_client(parameters, errlog=errlog) as (read, write),
            ClientSession(read, write, client_info=CLIENT_INFO) as session,
        ):
            await handshake(session, revision, CLIENT_INFO)
            assert session.server_info is not None
            assert session.server_info.name == "mcpkit-everything"
            listed = await session.list_tools()
            names = {tool.name for tool in listed.tools}
            assert names >= ALL_REVISION_TOOLS
            if revision == MODERN:
                assert names >= MODERN_ONLY_TOOLS
            else:
                assert names.isdisjoint(MODERN_ONLY_TOOLS)
            result = await session.call_tool("test_simple_text", {})
            assert result.is_error is False
            assert [text_of(block) for block in result.content] == [SIMPLE_TEXT]
            got = await session.get_prompt(
                "test_prompt_with_arguments", {"arg1": "one", "arg2": "two"}
            )
            texts = [text_of(message.content) for message in got.messages]
            assert any("one" in text for text in texts) and any("two" in text for text in texts)
            static = await session.read_resource("test://static-text")
            [contents] = static.contents
            assert isinstance(contents, types.TextResourceContents)
            assert contents.text == STATIC_TEXT

    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        try:
            asyncio.run(asyncio.wait_for(main(errlog), TIMEOUT_SECONDS))
        except Exception as error:
            errlog.seek(0)
            pytest.fail(f"{error!r}\nserver stderr:\n{errlog.read()}")


# --- multi-round input (2026-07-28) ----------------------------------------------------------
# ``mcp.Client`` drives an input-required result itself (``mcp.client._input_required``): it
# runs each embedded request through its elicitation / sampling / roots callback, then retries
# the original request with ``inputResponses`` and the echoed ``requestState`` under a fresh id.

# What the harness answers, by the field each form asks for.
FORM_ANSWERS: Final[dict[str, Any]] = {
    "name": "Alice",
    "ok": True,
    "context": "testing",
    "color": "blue",
}
CLIENT_ROOT: Final = types.Root.model_validate({"uri": "file:///r", "name": "R"})


@dataclass
class Answerer:
    """The client's callbacks, answering as the conformance harness does and remembering what
    it was asked."""

    asked: list[str] = field(default_factory=list)

    async def elicitation(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.asked.append(params.message)
        fields = params.requested_schema["properties"]
        return types.ElicitResult(
            action="accept", content={name: FORM_ANSWERS[name] for name in fields}
        )

    async def sampling(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        [message] = params.messages
        self.asked.append(text_of(message.content))
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="Paris"),
            model="m",
            stop_reason="endTurn",
        )

    async def roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        self.asked.append("roots")
        return types.ListRootsResult(roots=[CLIENT_ROOT])


MultiRound = Callable[[Client], Awaitable[None]]


def drive_client(
    url: str,
    scenario: MultiRound,
    answerer: Answerer,
    *,
    every: bool,
    mode: str = "auto",
    message_handler: Any = None,
) -> Wire:
    """Run ``scenario`` with a high-level ``mcp.Client`` (``mode="auto"``: 2026-07-28;
    ``"legacy"``: a 2025-11-25 session) holding the elicitation callback, and the sampling and
    roots callbacks when ``every``."""
    recorder = RecordingTransport()
    revision = MODERN if mode == "auto" else NOVEMBER

    async def main() -> None:
        async with (
            httpx2.AsyncClient(transport=recorder, timeout=httpx2.Timeout(30.0)) as http,
            Client(
                streamable_http_client(url, http_client=http),
                client_info=CLIENT_INFO,
                mode=mode,
                elicitation_callback=answerer.elicitation,
                sampling_callback=answerer.sampling if every else None,
                list_roots_callback=answerer.roots if every else None,
                message_handler=message_handler,
            ) as client,
        ):
            assert client.protocol_version == revision
            await scenario(client)

    asyncio.run(asyncio.wait_for(main(), TIMEOUT_SECONDS))
    return Wire(revision, recorder.exchanges)


def rounds(wire: Wire, method: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each ``method`` request the client sent, with the result it received, in order."""
    found: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for exchange in wire.exchanges:
        sent = json.loads(exchange.request) if exchange.request else None
        if not isinstance(sent, dict) or sent.get("method") != method:
            continue
        [(_, message)] = Wire(MODERN, [exchange]).messages()
        assert message["id"] == sent["id"]
        found.append((sent, message["result"]))
    return found


def test_schema_check_reads_input_required_results() -> None:
    """On 2026-07-28 an ``input_required`` result of a multi-round method is checked against
    ``InputRequiredResult`` (so a wrong input request is reported); elsewhere it is not one."""
    asking = (
        b'{"jsonrpc":"2.0","id":7,"result":{"resultType":"input_required","inputRequests":'
        b'{"k":{"method":"roots/list"}},"requestState":"s"}}'
    )
    assert Wire(MODERN, [answer("application/json", asking)]).problems() == []
    wrong = asking.replace(b"roots/list", b"roots/lost")
    problems = Wire(MODERN, [answer("application/json", wrong)]).problems()
    assert problems and all(p.startswith("InputRequiredResult:") for p in problems)
    stateless = asking.replace(b',"requestState":"s"', b',"requestState":7')
    assert Wire(MODERN, [answer("application/json", stateless)]).problems() == [
        "InputRequiredResult: 7 is not of type 'string'"
    ]
    # On a 2025 revision there is no such result: it fails the method's own definition.
    assert any(
        p.startswith("CallToolResult:")
        for p in Wire(NOVEMBER, [answer("application/json", asking)]).problems()
    )


@pytest.mark.parametrize(
    ("tool", "every", "text", "asked"),
    [
        ("test_input_required_result_elicitation", False, "Hello, Alice!", ["What is your name?"]),
        ("test_input_required_result_sampling", True, "The model answered: Paris",
         ["What is the capital of France?"]),
        ("test_input_required_result_list_roots", True, "Client roots: file:///r", ["roots"]),
        ("test_input_required_result_capabilities", False, "Inputs received",
         ["What is your name?"]),
    ],
)  # fmt: skip
def test_high_level_client_completes_one_round_of_input(
    server_url: str, tool: str, every: bool, text: str, asked: list[str]
) -> None:
    """Round 1 is an input-required result, the client's callback answers, and the retry
    (a fresh id, the answers in ``inputResponses``, no state) completes."""
    answerer = Answerer()

    async def scenario(client: Client) -> None:
        result = await client.call_tool(tool, {})
        assert result.is_error is False
        assert [text_of(block) for block in result.content] == [text]

    wire = drive_client(server_url, scenario, answerer, every=every)
    assert wire.problems() == []
    assert answerer.asked == asked
    # (the client lists the tools after the call, to validate the final result)
    assert [m for m in wire.answered() if m != "tools/list"] == [
        "server/discover", "tools/call", "tools/call",
    ]  # fmt: skip
    (first, asking), (retry, done) = rounds(wire, "tools/call")
    assert asking["resultType"] == "input_required"
    assert "requestState" not in asking
    assert done["resultType"] == "complete"
    assert retry["id"] != first["id"]
    assert set(retry["params"]["inputResponses"]) == set(asking["inputRequests"])
    assert "requestState" not in retry["params"]


def test_high_level_client_completes_multiple_inputs_with_every_callback(server_url: str) -> None:
    answerer = Answerer()

    async def scenario(client: Client) -> None:
        result = await client.call_tool("test_input_required_result_multiple_inputs", {})
        assert [text_of(block) for block in result.content] == ["All three inputs arrived"]

    wire = drive_client(server_url, scenario, answerer, every=True)
    assert wire.problems() == []
    assert sorted(answerer.asked) == ["Say hello to the user", "What is your name?", "roots"]
    (_, asking), (retry, _) = rounds(wire, "tools/call")
    assert retry["params"]["inputResponses"] == {
        "user_name": {"action": "accept", "content": {"name": "Alice"}},
        "greeting": {
            "role": "assistant",
            "content": {"type": "text", "text": "Paris"},
            "model": "m",
            "stopReason": "endTurn",
        },
        "client_roots": {"roots": [{"uri": "file:///r", "name": "R"}]},
    }
    assert retry["params"]["requestState"] == asking["requestState"]


def test_high_level_client_carries_the_sealed_request_state(server_url: str) -> None:
    """The framework-sealed ``requestState`` goes back byte for byte with the confirmation,
    and the server completes with ``state-ok``."""
    answerer = Answerer()

    async def scenario(client: Client) -> None:
        result = await client.call_tool("test_input_required_result_request_state", {})
        assert [text_of(block) for block in result.content] == [
            "state-ok: the confirmation arrived with the sealed state"
        ]

    wire = drive_client(server_url, scenario, answerer, every=False)
    assert wire.problems() == []
    assert answerer.asked == ["Please confirm"]
    (first, asking), (retry, done) = rounds(wire, "tools/call")
    state = asking["requestState"]
    assert state.startswith("soklet-mcp-request-state-v1.")
    assert retry["params"]["requestState"] == state
    assert retry["params"]["inputResponses"] == {
        "confirm": {"action": "accept", "content": {"ok": True}}
    }
    assert retry["id"] != first["id"]
    assert done["content"] == [
        {"type": "text", "text": "state-ok: the confirmation arrived with the sealed state"}
    ]


def test_high_level_client_follows_three_rounds(server_url: str) -> None:
    answerer = Answerer()

    async def scenario(client: Client) -> None:
        result = await client.call_tool("test_input_required_result_multi_round", {})
        assert [text_of(block) for block in result.content] == ["Alice likes blue"]

    wire = drive_client(server_url, scenario, answerer, every=False)
    assert wire.problems() == []
    assert answerer.asked == ["Step 1: What is your name?", "Step 2: What is your favorite color?"]
    (one, first), (two, second), (three, _) = rounds(wire, "tools/call")
    assert "requestState" not in one["params"]
    assert two["params"]["requestState"] == first["requestState"]
    assert three["params"]["requestState"] == second["requestState"]
    assert first["requestState"] != second["requestState"]
    assert len({one["id"], two["id"], three["id"]}) == 3


def test_high_level_client_gets_the_multi_round_prompt(server_url: str) -> None:
    answerer = Answerer()

    async def scenario(client: Client) -> None:
        got = await client.get_prompt("test_input_required_result_prompt")
        assert [(m.role, text_of(m.content)) for m in got.messages] == [
            ("user", "Context: testing")
        ]

    wire = drive_client(server_url, scenario, answerer, every=False)
    assert wire.problems() == []
    assert answerer.asked == ["What context should the prompt use?"]
    assert wire.answered() == ["server/discover", "prompts/get", "prompts/get"]
    (_, asking), (retry, _) = rounds(wire, "prompts/get")
    assert asking["resultType"] == "input_required"
    assert retry["params"]["inputResponses"] == {
        "user_context": {"action": "accept", "content": {"context": "testing"}}
    }


# --- the same handlers in a 2025 session ------------------------------------------------------
# In ``mode="legacy"`` the client negotiates 2025-11-25 and gets a session: the server sends
# the handler's input requests to it as JSON-RPC requests on the call's stream, the client's
# callbacks answer them (POSTed with the session id), and the server runs the handler again.


def sent_to_client(wire: Wire) -> list[str]:
    """The methods of the requests the server sent the client, in order."""
    return [
        message["method"]
        for _, message in wire.messages()
        if isinstance(message, dict) and "method" in message and "id" in message
    ]


def test_legacy_client_completes_the_same_multiple_input_tool(server_url: str) -> None:
    """The handler ``test_high_level_client_completes_multiple_inputs_with_every_callback``
    completes on 2026-07-28, unchanged: its three requests reach the client's three callbacks
    in one round, and its state stays in the server."""
    answerer = Answerer()

    async def scenario(client: Client) -> None:
        result = await client.call_tool("test_input_required_result_multiple_inputs", {})
        assert [text_of(block) for block in result.content] == ["All three inputs arrived"]

    wire = drive_client(server_url, scenario, answerer, every=True, mode="legacy")
    assert wire.problems() == []
    assert sorted(answerer.asked) == ["Say hello to the user", "What is your name?", "roots"]
    assert sorted(sent_to_client(wire)) == [
        "elicitation/create", "roots/list", "sampling/createMessage",
    ]  # fmt: skip
    # one tools/call: the client never retried, the server asked it
    assert [m for m in wire.answered() if m == "tools/call"] == ["tools/call"]


def test_legacy_client_follows_three_rounds_and_the_prompt(server_url: str) -> None:
    answerer = Answerer()

    async def scenario(client: Client) -> None:
        result = await client.call_tool("test_input_required_result_multi_round", {})
        assert [text_of(block) for block in result.content] == ["Alice likes blue"]
        got = await client.get_prompt("test_input_required_result_prompt")
        assert [text_of(m.content) for m in got.messages] == ["Context: testing"]

    wire = drive_client(server_url, scenario, answerer, every=False, mode="legacy")
    assert wire.problems() == []
    assert answerer.asked == [
        "Step 1: What is your name?",
        "Step 2: What is your favorite color?",
        "What context should the prompt use?",
    ]


def test_legacy_client_receives_the_update_of_a_subscribed_resource(server_url: str) -> None:
    """``resources/subscribe``, then the application publishes a change (the fixture's
    ``touch_watched_resource`` calls ``server.notify_resource_updated``): the session's GET
    stream carries ``notifications/resources/updated`` for the URI."""
    updated: list[str] = []
    arrived = asyncio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))
            arrived.set()

    async def scenario(client: Client) -> None:
        # (the client deprecates subscriptions for 2026-07-28, where listen replaces them)
        with pytest.warns(MCPDeprecationWarning):
            await client.subscribe_resource("test://watched-resource")
        await client.call_tool("touch_watched_resource", {})
        await asyncio.wait_for(arrived.wait(), 10.0)
        with pytest.warns(MCPDeprecationWarning):
            await client.unsubscribe_resource("test://watched-resource")

    wire = drive_client(
        server_url, scenario, Answerer(), every=False, mode="legacy", message_handler=on_message
    )
    assert updated == ["test://watched-resource"]
    assert wire.problems() == []


def test_stdio_high_level_client_completes_an_elicitation() -> None:
    """The same multi-round call over stdio (``mcpkit serve ... --stdio``)."""
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcpkit", "serve", str(EVERYTHING), "--stdio"],
        cwd=ROOT,
    )
    answerer = Answerer()

    async def main(errlog: Any) -> None:
        async with Client(
            stdio_client(parameters, errlog=errlog),
            client_info=CLIENT_INFO,
            elicitation_callback=answerer.elicitation,
        ) as client:
            assert client.protocol_version == MODERN
            result = await client.call_tool("test_input_required_result_elicitation", {})
            assert [text_of(block) for block in result.content] == ["Hello, Alice!"]
            state = await client.call_tool("test_input_required_result_request_state", {})
            assert [text_of(block) for block in state.content] == [
                "state-ok: the confirmation arrived with the sealed state"
            ]

    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        try:
            asyncio.run(asyncio.wait_for(main(errlog), TIMEOUT_SECONDS))
        except Exception as error:
            errlog.seek(0)
            pytest.fail(f"{error!r}\nserver stderr:\n{errlog.read()}")
    assert answerer.asked == ["What is your name?", "Please confirm"]


def test_high_level_client_listens_and_hears_of_changes(server_url: str) -> None:
    """``Client.listen`` (2026-07-28): the acknowledgement, then ``tools/list_changed`` once
    the catalog is swapped (the fixture's ``test_trigger_tool_change`` calls ``server.swap``)
    and ``resources/updated`` once the application publishes (``touch_watched_resource``); the
    next ``tools/list`` shows the new catalog."""
    from mcp.shared.subscriptions import ResourceUpdated, ToolsListChanged

    events: list[object] = []
    changed: dict[str, bool] = {}

    def has_dynamic(tools: object) -> bool:
        return any(tool.name == "test_dynamic_tool" for tool in tools.tools)  # type: ignore[attr-defined]

    async def scenario(client: Client) -> None:
        before = has_dynamic(await client.list_tools())
        async with client.listen(
            tools_list_changed=True, resource_subscriptions=["test://watched-resource"]
        ) as subscription:
            assert subscription.honored.tools_list_changed
            assert subscription.honored.resource_subscriptions == ["test://watched-resource"]
            await client.call_tool("test_trigger_tool_change", {})
            events.append(await asyncio.wait_for(anext(subscription), 10.0))
            changed["now"] = has_dynamic(await client.list_tools()) != before
            await client.call_tool("touch_watched_resource", {})
            events.append(await asyncio.wait_for(anext(subscription), 10.0))
            await client.call_tool("test_trigger_tool_change", {})  # as it was, for the others
            events.append(await asyncio.wait_for(anext(subscription), 10.0))

    wire = drive_client(server_url, scenario, Answerer(), every=False)
    assert events == [
        ToolsListChanged(),
        ResourceUpdated(uri="test://watched-resource"),
        ToolsListChanged(),
    ]
    assert changed == {"now": True}
    assert wire.problems() == []
