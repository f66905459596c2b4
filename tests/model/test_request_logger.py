"""``RequestLogger``: ``notifications/message`` for one request, and its
injection into decorated methods as ``RequestLogger | None`` (HC-01, like the progress
reporter of HC-14: a logger exists only when the client can receive log messages, so a bare
``RequestLogger`` annotation is refused).

Plain, loop-free Python: no server and no event loop.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Optional

import pytest

from mcpkit.errors import ConfigurationError, InvalidValueError
from mcpkit.json import JsonArray, JsonObject
from mcpkit.model import (
    LOG_LEVELS,
    CancellationToken,
    CompleteResult,
    Endpoint,
    InvocationFeatures,
    ProgressReporter,
    PromptMessage,
    PromptOutput,
    RequestContext,
    RequestLogger,
    Revision,
    Role,
    TextContent,
    ToolArguments,
)
from mcpkit.model._decorators import endpoint, prompt, tool

MODERN = Revision.V2026_07_28
SECRET = "SECRET-7f3a"


class Sink:
    """A ``send`` function that keeps what it was given."""

    def __init__(self) -> None:
        self.sent: list[JsonObject] = []

    def __call__(self, params: JsonObject) -> None:
        self.sent.append(params)


def refusal(build: Callable[[], object]) -> str:
    with pytest.raises(InvalidValueError) as caught:
        build()
    assert SECRET not in str(caught.value)
    return str(caught.value)


# --- levels and the minimum ---------------------------------------------------------------------


def test_levels_are_the_mcp_levels_least_severe_first() -> None:
    assert LOG_LEVELS == (
        "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency",
    )  # fmt: skip


@pytest.mark.parametrize("level", LOG_LEVELS)
def test_log_sends_level_and_data_at_every_level(level: str) -> None:
    sink = Sink()
    RequestLogger("debug", sink).log(level, {"n": 1, "items": [True, None]})
    assert sink.sent == [{"level": level, "data": {"n": 1, "items": [True, None]}}]
    sent = sink.sent[0]
    data = sent["data"]
    assert type(sent) is JsonObject and type(data) is JsonObject
    assert type(data["items"]) is JsonArray


def test_the_shorthand_methods_log_at_their_level_with_an_optional_logger_name() -> None:
    sink = Sink()
    logger = RequestLogger("debug", sink)
    logger.debug("d")
    logger.info(1, logger="db")
    logger.warning(2.5)
    logger.error(None, logger="")
    assert sink.sent == [
        {"level": "debug", "data": "d"},
        {"level": "info", "logger": "db", "data": 1},
        {"level": "warning", "data": Decimal("2.5")},
        {"level": "error", "logger": "", "data": None},
    ]
    assert list(sink.sent[1]) == ["level", "logger", "data"]


@pytest.mark.parametrize(
    ("minimum", "rank"), [(level, rank) for rank, level in enumerate(LOG_LEVELS)]
)
def test_messages_below_the_minimum_are_dropped(minimum: str, rank: int) -> None:
    sink = Sink()
    logger = RequestLogger(minimum, sink)
    assert logger.minimum == minimum
    assert [logger.enabled(level) for level in LOG_LEVELS] == [i >= rank for i in range(8)]
    for level in LOG_LEVELS:
        logger.log(level, level)
    assert [params["level"] for params in sink.sent] == list(LOG_LEVELS[rank:])


def test_the_shorthands_respect_the_minimum() -> None:
    sink = Sink()
    logger = RequestLogger("warning", sink)
    logger.debug("no")
    logger.info("no")
    logger.warning("yes")
    logger.error("yes")
    assert sink.sent == [{"level": "warning", "data": "yes"}, {"level": "error", "data": "yes"}]


def test_a_dropped_message_is_not_even_checked() -> None:
    """Below the minimum, nothing is converted: a value ``from_python`` refuses is dropped."""
    sink = Sink()
    RequestLogger("error", sink).info(object(), logger=SECRET + "\ud800")
    assert sink.sent == []


@pytest.mark.parametrize("level", ["DEBUG", "warn", "", "fatal", None, 3, SECRET])
def test_an_unknown_level_is_refused(level: Any) -> None:
    sink = Sink()
    logger = RequestLogger("debug", sink)
    rule = "RequestLogger.log: level must be an MCP log level"
    assert refusal(lambda: logger.log(level, "x")) == rule
    assert refusal(lambda: logger.enabled(level)) == rule
    assert sink.sent == []


@pytest.mark.parametrize(
    ("minimum", "send", "rule"),
    [
        ("verbose", Sink(), "RequestLogger.minimum: must be an MCP log level"),
        ("INFO", Sink(), "RequestLogger.minimum: must be an MCP log level"),
        (SECRET, Sink(), "RequestLogger.minimum: must be an MCP log level"),
        ("info", None, "RequestLogger.send: must be callable"),
        ("info", "print", "RequestLogger.send: must be callable"),
    ],
)
def test_construction_is_checked(minimum: Any, send: Any, rule: str) -> None:
    assert refusal(lambda: RequestLogger(minimum, send)) == rule


def test_an_unhashable_minimum_is_refused_as_a_type_error() -> None:
    """``minimum`` is looked up in a dict: an unhashable value raises ``TypeError`` first."""
    with pytest.raises(TypeError):
        RequestLogger([], Sink())  # type: ignore[arg-type]


# --- what may be logged -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("logger_name", "rule"),
    [
        (SECRET + "\ud800", "text contains an unpaired surrogate"),
        ("\udc00" + SECRET, "text contains an unpaired surrogate"),
        (5, "a JSON string must be a str"),
    ],
)
def test_a_malformed_logger_name_is_refused_with_the_rule(logger_name: Any, rule: str) -> None:
    sink = Sink()
    message = refusal(lambda: RequestLogger("info", sink).error("x", logger=logger_name))
    assert message == f"RequestLogger.log: {rule}"
    assert sink.sent == []


@pytest.mark.parametrize(
    ("data", "rule"),
    [
        (object(), "a JSON value cannot be a object"),
        ({1: "one"}, "a JSON member name must be a str"),
        (float("nan"), "a JSON number must be finite"),
        ([float("inf")], "a JSON number must be finite"),
        ({"text": SECRET + "\ud800"}, "text contains an unpaired surrogate"),
    ],
)
def test_data_that_is_not_json_is_refused_with_the_rule(data: object, rule: str) -> None:
    sink = Sink()
    message = refusal(lambda: RequestLogger("info", sink).info(data))
    assert message == f"RequestLogger.log: {rule}"
    assert sink.sent == []


def test_repr_names_the_minimum_only() -> None:
    assert repr(RequestLogger("notice", Sink())) == "RequestLogger(minimum='notice')"


def test_a_failing_send_propagates_and_the_logger_stays_usable() -> None:
    calls: list[JsonObject] = []

    def send(params: JsonObject) -> None:
        calls.append(params)
        if len(calls) == 1:
            raise OSError("stream closed")

    logger = RequestLogger("info", send)
    with pytest.raises(OSError):
        logger.info("first")
    logger.info("second")
    assert [params["data"] for params in calls] == ["first", "second"]


def test_calls_from_several_threads_are_serialised() -> None:
    """``send`` is never entered by two threads at once, and each thread's messages keep
    their order."""
    sent: list[JsonObject] = []
    inside = 0
    overlaps = 0

    def send(params: JsonObject) -> None:
        nonlocal inside, overlaps
        inside += 1
        if inside > 1:
            overlaps += 1
        time.sleep(0.0001)  # widen the window a second thread would slip into
        sent.append(params)
        inside -= 1

    logger = RequestLogger("debug", send)
    start = threading.Barrier(6)

    def work(thread: int) -> None:
        start.wait()
        for step in range(40):
            logger.info({"thread": thread, "step": step})

    threads = [threading.Thread(target=work, args=(thread,)) for thread in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert overlaps == 0 and len(sent) == 240
    for thread_number in range(6):
        steps = [
            data["step"]
            for params in sent
            if isinstance(data := params["data"], JsonObject) and data["thread"] == thread_number
        ]
        assert steps == list(range(40))


# --- InvocationFeatures.logger ------------------------------------------------------------------


def test_features_find_the_logger_when_present() -> None:
    logger = RequestLogger("info", Sink())
    features = InvocationFeatures(CancellationToken(), logger)
    assert features.logger is logger
    assert features.find(RequestLogger) is logger and features.require(RequestLogger) is logger
    assert repr(features) == "InvocationFeatures(CancellationToken, RequestLogger)"


def test_features_without_a_logger_give_none() -> None:
    features = InvocationFeatures(CancellationToken(), ProgressReporter("t", Sink()))
    assert features.logger is None
    with pytest.raises(LookupError, match=r"^no RequestLogger feature for this invocation$"):
        features.require(RequestLogger)


def test_two_loggers_are_refused() -> None:
    message = refusal(
        lambda: InvocationFeatures(
            CancellationToken(), RequestLogger("info", Sink()), RequestLogger("debug", Sink())
        )
    )
    assert message == "InvocationFeatures: each feature type may appear only once"


# --- injection into decorated methods -----------------------------------------------------------

seen: dict[str, object] = {}


@endpoint(path="/log/mcp", name="log", version="1", revisions={MODERN})
class Logging:
    @tool(name="work")
    def work(
        self,
        query: str,
        logger: RequestLogger | None,
        legacy: Optional[RequestLogger],  # noqa: UP045 - both spellings
        token: CancellationToken,
    ) -> CompleteResult:
        seen.update(logger=logger, legacy=legacy, token=token)
        if logger is not None:
            logger.info({"query": query})
        return CompleteResult.from_tool_text(query)

    @tool(name="async_work")
    async def async_work(self, logger: None | RequestLogger) -> CompleteResult:  # noqa: RUF036
        seen.update(logger=logger)
        return CompleteResult.from_tool_text("async")

    @prompt(name="topic")
    def topic(self, subject: str, logger: RequestLogger | None) -> PromptOutput:
        seen.update(logger=logger)
        message = PromptMessage(role=Role.USER, content=TextContent(text=subject))
        return PromptOutput(messages=(message,))


BUILT: Endpoint = Logging.__mcp_endpoint__  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def _fresh_seen() -> None:
    seen.clear()


def invoke(handler: Callable[..., object], *args: object) -> Any:
    """Call a registration's handler as the server will, awaiting an ``async def`` one."""
    outcome = handler(*args)
    return asyncio.run(outcome) if inspect.iscoroutine(outcome) else outcome


def call_tool(name: str, arguments: dict[str, object], *extra: object) -> Any:
    registration = BUILT.find_tool(name, MODERN)
    assert registration is not None and registration.input_model is not None
    raw = JsonObject(arguments)
    converted = registration.input_model.bind(raw)
    ctx = RequestContext(endpoint=BUILT, revision=MODERN, method="tools/call")
    features = InvocationFeatures(CancellationToken(), *extra)
    return invoke(registration.handler, ctx, ToolArguments(converted=converted, raw=raw), features)


def test_a_logger_parameter_is_not_published() -> None:
    work = BUILT.find_tool("work", MODERN)
    assert work is not None
    assert work.input_schema.document == {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
        "additionalProperties": False,
    }
    async_work = BUILT.find_tool("async_work", MODERN)
    assert async_work is not None
    assert async_work.input_schema.document == {
        "type": "object",
        "additionalProperties": False,
    }


def test_the_injected_logger_is_none_when_absent() -> None:
    result = call_tool("work", {"query": "q"})
    assert result == CompleteResult.from_tool_text("q")
    assert seen["logger"] is None and seen["legacy"] is None
    assert isinstance(seen["token"], CancellationToken)


def test_the_injected_logger_is_the_invocations_logger_when_present() -> None:
    sink = Sink()
    logger = RequestLogger("info", sink)
    call_tool("work", {"query": "q"}, logger)
    assert seen["logger"] is logger and seen["legacy"] is logger
    assert sink.sent == [{"level": "info", "data": {"query": "q"}}]


def test_async_methods_and_prompts_get_the_logger_too() -> None:
    logger = RequestLogger("debug", Sink())
    assert call_tool("async_work", {}, logger) == CompleteResult.from_tool_text("async")
    assert seen["logger"] is logger
    call_tool("async_work", {})
    assert seen["logger"] is None

    registration = BUILT.find_prompt("topic", MODERN)
    assert registration is not None
    assert [argument.name for argument in registration.arguments] == ["subject"]
    ctx = RequestContext(endpoint=BUILT, revision=MODERN, method="prompts/get")
    features = InvocationFeatures(CancellationToken(), logger)
    invoke(registration.handler, ctx, {"subject": "cats"}, features)
    assert seen["logger"] is logger


def refused_message(method: str, label: str, parameter: str) -> str:
    return (
        f"@endpoint class {__name__}.{method}.<locals>.Bad, method 'f': {label}: parameter "
        f"'{parameter}': annotate it RequestLogger | None; a logger exists only when the "
        "client can receive log messages"
    )


def test_a_bare_request_logger_annotation_is_refused_naming_the_parameter() -> None:
    with pytest.raises(ConfigurationError) as caught:

        @endpoint(path="/bad/mcp", name="bad", version="1", revisions={MODERN})
        class Bad:
            @tool(name="t")
            def f(self, query: str, log: RequestLogger) -> CompleteResult:
                return CompleteResult.from_tool_text(query)

    assert str(caught.value) == refused_message(
        "test_a_bare_request_logger_annotation_is_refused_naming_the_parameter", "tool 't'", "log"
    )


def test_a_bare_request_logger_on_a_prompt_is_refused_too() -> None:
    with pytest.raises(ConfigurationError) as caught:

        @endpoint(path="/bad/mcp", name="bad", version="1", revisions={MODERN})
        class Bad:
            @prompt(name="p")
            def f(self, messages: RequestLogger) -> PromptOutput:
                return PromptOutput(messages=())

    assert str(caught.value) == refused_message(
        "test_a_bare_request_logger_on_a_prompt_is_refused_too", "prompt 'p'", "messages"
    )
