"""Progress and log notifications on the request's own stream (sharp
edges 24 and 34; HC-14; docs/design/server.md §2.1 step 17): the first notification commits the
response to ``text/event-stream`` and the result (or an error) becomes its last event; a
request that sends none is answered with one JSON body.

Every JSON-RPC message received is checked against the official schema of its revision.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal

import pytest

import mcpkit
from mcpkit import (
    LOG_LEVELS,
    CompleteResult,
    InvalidParams,
    ProgressReporter,
    PromptMessage,
    PromptOutput,
    RequestLogger,
    Revision,
    Role,
    TextContent,
    endpoint,
    prompt,
    tool,
)
from mcpkit.json import encode, from_python
from mcpkit.testing import (
    TestClient,
    TestResponse,
    handshake_request,
    stateless_headers,
    stateless_request,
)

from ..spec_schemas import schema_errors
from ..wire import assert_valid

MODERN = "2026-07-28"
NOVEMBER = "2025-11-25"
JUNE = "2025-06-18"
REVISIONS = (MODERN, NOVEMBER, JUNE)
LEGACY = (NOVEMBER, JUNE)
PATH = "/mcp"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SERVER_INFO = {"name": "streams", "version": "1.0.0"}
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"

# Whether each invocation got a reporter / logger (the logger's minimum level); cleared per test.
reporters: list[bool] = []
loggers: list[str | None] = []


@pytest.fixture(autouse=True)
def _fresh_records() -> Iterator[None]:
    reporters.clear()
    loggers.clear()
    yield
    reporters.clear()
    loggers.clear()


def report_steps(progress: ProgressReporter | None, steps: int, fail: str) -> None:
    reporters.append(progress is not None)
    if progress is None:
        return
    for step in range(1, steps + 1):
        progress.report(step, steps, message=f"step {step}")
    if fail == "value":
        raise ValueError("secret detail 12345")
    if fail == "params":
        raise InvalidParams()
    if fail == "decrease":
        progress.report(0)


def log_everything(logger: RequestLogger | None) -> None:
    loggers.append(None if logger is None else logger.minimum)
    if logger is not None:
        for level in LOG_LEVELS:
            logger.log(level, {"at": level}, logger="streams")


@endpoint(
    path=PATH,
    name="streams",
    version="1.0.0",
    revisions={Revision.V2025_06_18, Revision.V2025_11_25, Revision.V2026_07_28},
)
class Streams:
    @tool(name="steps")
    def steps(
        self, count: int, progress: ProgressReporter | None, fail: str = ""
    ) -> CompleteResult:
        report_steps(progress, count, fail)
        return CompleteResult.from_tool_text("done")

    @tool(name="async_steps")
    async def async_steps(
        self, count: int, progress: ProgressReporter | None, fail: str = ""
    ) -> CompleteResult:
        report_steps(progress, count, fail)
        return CompleteResult.from_tool_text("done")

    @tool(name="repeats")
    def repeats(self, progress: ProgressReporter | None) -> CompleteResult:
        reporters.append(progress is not None)
        if progress is not None:
            for value in (1, 1, 2.5, 2.5, 3):
                progress.report(value)
        return CompleteResult.from_tool_text("done")

    @tool(name="logs")
    def logs(self, logger: RequestLogger | None) -> CompleteResult:
        log_everything(logger)
        return CompleteResult.from_tool_text("logged")

    @tool(name="async_logs")
    async def async_logs(self, logger: RequestLogger | None) -> CompleteResult:
        log_everything(logger)
        return CompleteResult.from_tool_text("logged")

    @tool(name="both")
    async def both(
        self, progress: ProgressReporter | None, logger: RequestLogger | None
    ) -> CompleteResult:
        if progress is not None:
            progress.report(1, 2)
        if logger is not None:
            logger.error("half way")
        if progress is not None:
            progress.report(2, 2)
        return CompleteResult.from_tool_structured_content({"ok": True})

    @tool(name="burst")
    async def burst(self, count: int, logger: RequestLogger | None) -> CompleteResult:
        if logger is not None:
            for number in range(count):
                logger.info(number)
        return CompleteResult.from_tool_text("done")

    @prompt(name="slow_prompt")
    def slow_prompt(self, progress: ProgressReporter | None) -> PromptOutput:
        if progress is not None:
            progress.report(1, 1)
        text = TextContent(text="prompted")
        return PromptOutput(messages=(PromptMessage(role=Role.USER, content=text),))


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(mcpkit.Server(Streams)) as test_client:
        yield test_client


# --- helpers ------------------------------------------------------------------------------------


def send(
    client: TestClient,
    revision: str,
    method: str,
    params: dict[str, object],
    *,
    meta: Mapping[str, object] | None = None,
    id: str | int = 1,
) -> TestResponse:
    body_params = dict(params)
    if meta is not None:
        body_params["_meta"] = dict(meta)
    name = params.get("name")
    headers: dict[str, str]
    if revision == MODERN:
        body = stateless_request(method, body_params, id=id)
        headers = stateless_headers(method, name if isinstance(name, str) else None)
    else:
        body = handshake_request(method, body_params, id=id)
        headers = {"MCP-Protocol-Version": revision}
    response = client.post(PATH, body, headers=headers)
    assert_valid(revision, method, response.messages)
    assert_notifications_valid(revision, response.messages)
    return response


NOTIFICATIONS = {
    "notifications/progress": "ProgressNotification",
    "notifications/message": "LoggingMessageNotification",
}


def assert_notifications_valid(revision: str, messages: Sequence[object]) -> None:
    """Each notification against its own definition (``assert_valid`` checks the envelope);
    the 2025-06-18 definitions leave ``jsonrpc`` to the envelope."""
    for message in messages:
        value = json.loads(encode(from_python(message)))
        if "method" not in value:
            continue
        if revision == JUNE:
            del value["jsonrpc"]
        assert schema_errors(revision, NOTIFICATIONS[value["method"]], value) == []


def call(
    client: TestClient,
    revision: str,
    name: str,
    arguments: Mapping[str, object] | None = None,
    *,
    meta: Mapping[str, object] | None = None,
    id: str | int = 1,
) -> TestResponse:
    params: dict[str, object] = {"name": name, "arguments": dict(arguments or {})}
    return send(client, revision, "tools/call", params, meta=meta, id=id)


def result(revision: str, body: Mapping[str, object], *, id: str | int = 1) -> dict[str, object]:
    out = dict(body)
    if revision == MODERN:
        out["resultType"] = "complete"
        out["_meta"] = {SERVER_INFO_KEY: SERVER_INFO}
    return {"jsonrpc": "2.0", "id": id, "result": out}


def error(code: int, message: str, *, id: str | int = 1) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}


def progress(
    token: str | int, value: object, total: object = None, message: str | None = None
) -> dict[str, object]:
    params: dict[str, object] = {"progressToken": token, "progress": value}
    if total is not None:
        params["total"] = total
    if message is not None:
        params["message"] = message
    return {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}


def log(level: str, data: object, logger: str | None = "streams") -> dict[str, object]:
    params: dict[str, object] = {"level": level}
    if logger is not None:
        params["logger"] = logger
    params["data"] = data
    return {"jsonrpc": "2.0", "method": "notifications/message", "params": params}


def text(value: str) -> dict[str, object]:
    return {"type": "text", "text": value}


DONE = {"content": [text("done")]}
LOGGED = {"content": [text("logged")]}


def assert_stream(response: TestResponse, expected: Sequence[object]) -> None:
    """A committed SSE response: HTTP 200, ``text/event-stream``, exactly these events."""
    assert response.status == 200
    assert response.header("content-type") == "text/event-stream"
    assert response.header("cache-control") == "no-store"
    assert response.header("content-length") is None
    assert list(response.messages) == expected
    assert response.body.startswith(b"event: message\ndata: {")


def assert_json(response: TestResponse, status: int, expected: object) -> None:
    assert response.status == status
    assert response.header("content-type") == "application/json"
    assert response.json == expected


def steps_events(token: str | int, count: int = 3) -> list[object]:
    return [progress(token, step, count, f"step {step}") for step in range(1, count + 1)]


# --- progress -----------------------------------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("name", ["steps", "async_steps"])
@pytest.mark.parametrize("token", ["tok-1", 7, 0, "", "7"])
def test_progress_commits_a_stream_ending_with_the_result(
    client: TestClient, revision: str, name: str, token: str | int
) -> None:
    """three progress notifications carrying the client's
    token with its JSON type, then the result as the last event (``def`` and ``async def``)."""
    response = call(client, revision, name, {"count": 3}, meta={"progressToken": token})
    assert_stream(response, [*steps_events(token), result(revision, DONE)])
    assert reporters == [True]


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("name", ["steps", "async_steps"])
def test_without_a_progress_token_there_is_no_reporter_and_plain_json(
    client: TestClient, revision: str, name: str
) -> None:
    """HC-14: the reporter exists only when the client asked for progress."""
    response = call(client, revision, name, {"count": 3})
    assert_json(response, 200, result(revision, DONE))
    assert reporters == [False]


@pytest.mark.parametrize("revision", REVISIONS)
def test_progress_token_alone_with_no_report_stays_json(client: TestClient, revision: str) -> None:
    """Only a sent notification commits the stream."""
    response = call(client, revision, "steps", {"count": 0}, meta={"progressToken": "t"})
    assert_json(response, 200, result(revision, DONE))
    assert reporters == [True]


@pytest.mark.parametrize("revision", REVISIONS)
def test_equal_progress_is_dropped(client: TestClient, revision: str) -> None:
    """progress strictly increases; a repeated value is not sent again."""
    response = call(client, revision, "repeats", meta={"progressToken": 5})
    expected = [progress(5, 1), progress(5, Decimal("2.5")), progress(5, 3), result(revision, DONE)]
    assert_stream(response, expected)


@pytest.mark.parametrize("revision", REVISIONS)
def test_request_id_type_is_kept_on_the_stream(client: TestClient, revision: str) -> None:
    response = call(client, revision, "steps", {"count": 1}, meta={"progressToken": 1}, id="1")
    assert_stream(response, [*steps_events(1, 1), result(revision, DONE, id="1")])


@pytest.mark.parametrize("revision", REVISIONS)
def test_progress_on_a_prompt(client: TestClient, revision: str) -> None:
    """Every application handler gets the reporter, not only tools."""
    response = send(
        client, revision, "prompts/get", {"name": "slow_prompt"}, meta={"progressToken": "p"}
    )
    body = {"messages": [{"role": "user", "content": text("prompted")}]}
    assert_stream(response, [progress("p", 1, 1), result(revision, body)])


@pytest.mark.parametrize("revision", [MODERN, NOVEMBER, JUNE])
@pytest.mark.parametrize("token", [True, 1.5, None, [], {}])
def test_malformed_progress_token_is_invalid_params(
    client: TestClient, revision: str, token: object
) -> None:
    """a progress token is a string or an integer; anything else is -32602
    before the handler."""
    response = call(client, revision, "steps", {"count": 1}, meta={"progressToken": token})
    status = 400 if revision == MODERN else 200
    assert_json(response, status, error(-32602, "Invalid params"))
    assert reporters == []


# --- errors after the stream is committed -------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("name", ["steps", "async_steps"])
@pytest.mark.parametrize(
    ("fail", "expected"),
    [
        ("value", error(-32603, "Internal error")),
        ("decrease", error(-32603, "Internal error")),
        ("params", error(-32602, "Invalid params")),
    ],
)
def test_error_after_the_stream_is_committed_is_its_last_event(
    client: TestClient, revision: str, name: str, fail: str, expected: dict[str, object]
) -> None:
    """once committed, the stream is HTTP 200 and the error is the
    terminal SSE event (whatever status it would have had), never echoing the exception."""
    response = call(client, revision, name, {"count": 2, "fail": fail}, meta={"progressToken": "t"})
    assert_stream(response, [*steps_events("t", 2), expected])
    assert b"secret" not in response.body


# --- logging ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["logs", "async_logs"])
@pytest.mark.parametrize("level", LOG_LEVELS)
def test_modern_logging_follows_the_requested_level(
    client: TestClient, name: str, level: str
) -> None:
    """on 2026-07-28 messages at the ``_meta`` log level or more severe,
    on the request's own stream, in order; less severe ones are dropped."""
    response = call(client, MODERN, name, meta={LOG_LEVEL_KEY: level})
    sent = LOG_LEVELS[LOG_LEVELS.index(level) :]
    assert_stream(response, [*(log(each, {"at": each}) for each in sent), result(MODERN, LOGGED)])
    assert loggers == [level]


@pytest.mark.parametrize("name", ["logs", "async_logs"])
def test_modern_logging_needs_the_log_level(client: TestClient, name: str) -> None:
    """Never a ``notifications/message`` without ``_meta`` logLevel."""
    response = call(client, MODERN, name)
    assert_json(response, 200, result(MODERN, LOGGED))
    assert loggers == [None]


@pytest.mark.parametrize("level", ["verbose", "INFO", "", 3, None])
def test_invalid_modern_log_level_is_invalid_params(client: TestClient, level: object) -> None:
    """an invalid level is -32602 (HTTP 400), before the handler."""
    response = call(client, MODERN, "logs", meta={LOG_LEVEL_KEY: level})
    assert_json(response, 400, error(-32602, "Invalid params"))
    assert loggers == []


@pytest.mark.parametrize("revision", LEGACY)
@pytest.mark.parametrize("name", ["logs", "async_logs"])
def test_legacy_logging_is_always_at_info_and_above(
    client: TestClient, revision: str, name: str
) -> None:
    """Stateless 2025 requests have no remembered ``logging/setLevel``: the server's default
    minimum, info, applies; debug is dropped."""
    response = call(client, revision, name)
    sent = LOG_LEVELS[LOG_LEVELS.index("info") :]
    assert_stream(response, [*(log(each, {"at": each}) for each in sent), result(revision, LOGGED)])
    assert loggers == ["info"]


@pytest.mark.parametrize("revision", REVISIONS)
def test_progress_and_log_messages_interleave_in_order(client: TestClient, revision: str) -> None:
    response = call(client, revision, "both", meta={"progressToken": "b", LOG_LEVEL_KEY: "debug"})
    final = result(revision, {"content": [text('{"ok":true}')], "structuredContent": {"ok": True}})
    expected = [progress("b", 1, 2), log("error", "half way", None), progress("b", 2, 2), final]
    assert_stream(response, expected)


@pytest.mark.parametrize("count", [128])
def test_a_burst_within_the_queue_capacity_arrives_whole(client: TestClient, count: int) -> None:
    """``_stream.QUEUE_CAPACITY`` (128) messages queued while the handler holds the loop."""
    response = call(client, MODERN, "burst", {"count": count}, meta={LOG_LEVEL_KEY: "info"})
    expected = [log("info", number, None) for number in range(count)]
    assert_stream(response, [*expected, result(MODERN, DONE)])


def test_log_messages_are_never_dropped(client: TestClient) -> None:
    """each log message is its own event, not a snapshot; a client that
    keeps up receives every one, in order."""
    response = call(client, MODERN, "burst", {"count": 200}, meta={LOG_LEVEL_KEY: "info"})
    expected = [log("info", number, None) for number in range(200)]
    assert_stream(response, [*expected, result(MODERN, DONE)])
