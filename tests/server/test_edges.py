"""The pipeline's less travelled paths: results of every kind from prompts and resources, the
interceptor's own values, contract failures, notification budgets and unexpected failures.

Every JSON-RPC message received is checked against the official schema of its revision.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any, cast

import pytest

import mcpkit
from mcpkit import (
    Cancelled,
    CompleteResult,
    InputRequestDeclaration,
    InputRequiredResult,
    PromptMessage,
    PromptOutput,
    RequestContext,
    RequestLogger,
    ResourceNotFound,
    ResourceOutput,
    Revision,
    Role,
    TextContent,
    TextResourceContents,
)
from mcpkit.server import HttpRequest
from mcpkit.server._invoke import Proceeded
from mcpkit.server._stream import Responder
from mcpkit.testing import TestClient, handshake_request, stateless_headers, stateless_request

from ..wire import assert_valid

MODERN = Revision.V2026_07_28
JUNE = Revision.V2025_06_18
PATH = "/edges"
INPUT = {"ask": {"method": "roots/list"}}
ROOTS = InputRequestDeclaration.roots()


@mcpkit.endpoint(path=PATH, name="edges", version="1.0.0", revisions=set(Revision))
class Edges:
    @mcpkit.tool(name="cancelled_by_itself")
    def cancelled_by_itself(self) -> CompleteResult:
        raise Cancelled()  # not the server's cancellation: a contract failure

    @mcpkit.tool(name="asks", revisions={MODERN}, input_requests=[ROOTS])
    def asks(self) -> CompleteResult | InputRequiredResult:
        return InputRequiredResult(input_requests=INPUT)

    @mcpkit.tool(name="asks_on_2025")
    def asks_on_2025(self) -> CompleteResult | InputRequiredResult:
        return InputRequiredResult(input_requests=INPUT)  # no declaration exists on 2025

    @mcpkit.tool(name="text")
    def text(self) -> CompleteResult:
        return CompleteResult.from_tool_text("plain")

    @mcpkit.tool(name="chatty")
    async def chatty(self, logger: RequestLogger | None) -> CompleteResult:
        assert logger is not None
        for number in range(50):
            logger.info(f"message {number:03d} " + "x" * 200)
        return CompleteResult.from_tool_text("done")

    @mcpkit.prompt(name="complete_prompt")
    def complete_prompt(self) -> CompleteResult:
        message = PromptMessage(role=Role.USER, content=TextContent(text="hi"))
        return CompleteResult.with_prompt_output(PromptOutput(messages=(message,)))

    @mcpkit.prompt(name="asking_prompt", revisions={MODERN}, input_requests=[ROOTS])
    async def asking_prompt(self) -> InputRequiredResult:
        return InputRequiredResult(input_requests=INPUT)

    @mcpkit.prompt(name="failing_prompt")
    async def failing_prompt(self) -> PromptOutput:
        raise ValueError("secret")

    @mcpkit.prompt(name="junk_prompt")
    def junk_prompt(self) -> PromptOutput:
        return "not a prompt output"  # type: ignore[return-value]

    @mcpkit.resource(uri="test://complete", name="complete")
    def complete_resource(self) -> CompleteResult:
        contents = TextResourceContents(uri="test://complete", text="c")
        return CompleteResult.with_resource_output(ResourceOutput(contents=(contents,)))

    @mcpkit.resource(uri="test://asking", name="asking", revisions={MODERN}, input_requests=[ROOTS])
    def asking_resource(self) -> InputRequiredResult:
        return InputRequiredResult(input_requests=INPUT)

    @mcpkit.resource(uri="test://elsewhere", name="elsewhere")
    def elsewhere(self) -> ResourceOutput:
        raise ResourceNotFound("test://other")


def post(
    client: TestClient,
    revision: Revision,
    method: str,
    params: dict[str, Any],
    capabilities: dict[str, Any] | None = None,
) -> Any:
    if revision is MODERN:
        name = params.get("name", params.get("uri"))
        request = stateless_request(method, params, capabilities=capabilities)
        response = client.post(PATH, request, headers=stateless_headers(method, name))
    else:
        response = client.post(
            PATH, handshake_request(method, params), headers={"MCP-Protocol-Version": revision.wire}
        )
    assert_valid(revision.wire, method, response.messages)
    return response


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(mcpkit.Server(Edges)) as client:
        yield client


def test_a_handler_raising_cancelled_itself_is_the_fixed_internal_error(
    client: TestClient,
) -> None:
    response = post(client, MODERN, "tools/call", {"name": "cancelled_by_itself"})
    assert (response.status, response.json["error"]) == (
        500,
        {"code": -32603, "message": "Internal error"},
    )


def test_an_input_required_result_on_a_2025_revision_is_a_contract_failure(
    client: TestClient,
) -> None:
    """RV-06: there is no input-required result on the 2025 revisions."""
    response = post(client, JUNE, "tools/call", {"name": "asks_on_2025"})
    assert (response.status, response.json["error"]["code"]) == (200, -32603)


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/call", {"name": "asks"}),
        ("prompts/get", {"name": "asking_prompt"}),
        ("resources/read", {"uri": "test://asking"}),
    ],
)
def test_input_required_results_from_every_operation(
    client: TestClient, method: str, params: dict[str, Any]
) -> None:
    response = post(client, MODERN, method, params, capabilities={"roots": {}})
    result = response.json["result"]
    assert result["resultType"] == "input_required"
    assert result["inputRequests"] == INPUT
    assert "ttlMs" not in result  # never cached
    refused = post(client, MODERN, method, params)  # the client cannot answer roots/list
    assert (refused.status, refused.json["error"]) == (
        400,
        {
            "code": -32021,
            "message": "Missing required client capability",
            "data": {"requiredCapabilities": {"roots": {}}},
        },
    )


def test_complete_results_from_prompts_and_resources(client: TestClient) -> None:
    prompt = post(client, MODERN, "prompts/get", {"name": "complete_prompt"}).json["result"]
    assert prompt["messages"] == [{"role": "user", "content": {"type": "text", "text": "hi"}}]
    read = post(client, MODERN, "resources/read", {"uri": "test://complete"}).json["result"]
    assert read["contents"] == [{"uri": "test://complete", "text": "c"}]


def test_an_async_prompt_that_raises_is_the_fixed_internal_error(client: TestClient) -> None:
    response = post(client, JUNE, "prompts/get", {"name": "failing_prompt"})
    assert response.json["error"] == {"code": -32603, "message": "Internal error"}
    assert b"secret" not in response.body


def test_a_prompt_returning_something_else_is_a_contract_failure(client: TestClient) -> None:
    response = post(client, MODERN, "prompts/get", {"name": "junk_prompt"})
    assert (response.status, response.json["error"]["code"]) == (500, -32603)


def test_nothing_is_queued_once_the_response_has_ended() -> None:
    async def scenario() -> list[tuple[str, object]]:
        exchange = Recorder()
        responder = Responder(exchange)
        await responder.finish(200, b"{}")
        responder.notify(b"late")
        await asyncio.sleep(0)
        return exchange.events

    assert asyncio.run(scenario()) == [("start", 200), ("write", b"{}")]


def test_a_handler_naming_another_missing_uri_keeps_it(client: TestClient) -> None:
    response = post(client, JUNE, "resources/read", {"uri": "test://elsewhere"})
    assert response.json["error"]["data"] == {"uri": "test://other"}


def test_a_duplicated_content_type_is_refused_before_the_body_is_read(
    client: TestClient,
) -> None:
    headers = [
        ("content-type", "application/json"),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("host", "127.0.0.1:8000"),
    ]
    response = client.post(PATH, handshake_request("ping"), headers=headers, default_headers=False)
    assert response.status == 400
    assert response.json == {
        "jsonrpc": "2.0",
        "error": {"code": -32600, "message": "Invalid Request"},
    }


def test_a_legacy_notification_with_an_unsupported_version_is_an_empty_400(
    client: TestClient,
) -> None:
    body = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    response = client.post(PATH, body, headers={"MCP-Protocol-Version": "banana"})
    assert (response.status, response.body) == (400, b"")


def test_an_unexpected_failure_is_the_fixed_internal_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = mcpkit.Server(Edges)

    async def broken(call: object) -> bytes:
        raise RuntimeError("secret")

    monkeypatch.setattr(server.engine.operations, "dispatch", broken)
    with TestClient(server) as client:
        response = post(client, MODERN, "tools/call", {"name": "text"})
    assert (response.status, response.json["error"]["code"]) == (500, -32603)
    assert b"secret" not in response.body


def interceptor_server(
    interceptor: Callable[[RequestContext, Callable[[], Awaitable[object]]], object],
) -> mcpkit.Server:
    return mcpkit.Server(Edges, interceptor=interceptor)  # type: ignore[arg-type]


def test_a_plain_def_interceptor_may_answer_without_proceeding() -> None:
    def answer(ctx: RequestContext, proceed: Callable[[], Awaitable[object]]) -> object:
        return CompleteResult.from_tool_text("intercepted")

    with TestClient(interceptor_server(answer)) as client:
        response = post(client, MODERN, "tools/call", {"name": "text"})
    assert response.json["result"]["content"] == [{"type": "text", "text": "intercepted"}]


def test_an_interceptor_returning_a_non_tool_result_is_a_contract_failure() -> None:
    async def wrong(ctx: RequestContext, proceed: Callable[[], Awaitable[object]]) -> object:
        message = PromptMessage(role=Role.USER, content=TextContent(text="x"))
        return CompleteResult.with_prompt_output(PromptOutput(messages=(message,)))

    with TestClient(interceptor_server(wrong)) as client:
        response = post(client, MODERN, "tools/call", {"name": "text"})
    assert response.json["error"]["code"] == -32603


def test_proceeded_hides_the_response_it_carries() -> None:
    assert repr(Proceeded(b'{"secret":1}')) == "Proceeded()"


def test_http_request_repr_names_no_header_or_body() -> None:
    request = HttpRequest(method="POST", raw_path="/x", headers=(("x", "secret"),), body=b"123")
    assert repr(request) == "HttpRequest(POST 3 bytes)"


# --- the notification budget -----------------------------------------------------------------


class Recorder:
    """An ``HttpExchange`` that records what it is told and can hold writes back."""

    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []
        self.release = asyncio.Event()
        self.release.set()

    async def start(self, status: int, headers: object) -> None:
        self.events.append(("start", status))

    async def write(self, chunk: bytes, *, more: bool) -> None:
        await self.release.wait()
        self.events.append(("write", chunk))


def test_an_async_handler_over_the_budget_has_the_notification_dropped() -> None:
    async def scenario() -> list[tuple[str, object]]:
        exchange = Recorder()
        responder = Responder(exchange, budget=10)

        async def work() -> bytes:
            responder.notify(b"12345678")
            responder.notify(b"overflow!")  # 8 + 9 > 10, on the loop: dropped
            return b"done"

        assert await responder.run(work()) == b"done"
        await responder.finish(200, b"{}")
        return exchange.events

    events = asyncio.run(scenario())
    chunks = [value for kind, value in events if kind == "write"]
    assert chunks == [b"event: message\ndata: 12345678\n\n", b"event: message\ndata: {}\n\n"]


def test_a_thread_over_the_budget_waits_for_room_and_loses_nothing() -> None:
    async def scenario() -> list[tuple[str, object]]:
        exchange = Recorder()
        exchange.release.clear()  # the client reads nothing until released
        responder = Responder(exchange, budget=10)
        sent = threading.Event()

        def report() -> None:
            for chunk in (b"aaaaaaaa", b"bbbbbbbb", b"cccccccc"):
                responder.notify(chunk)
            sent.set()

        async def work() -> bytes:
            thread = threading.Thread(target=report)
            thread.start()
            await asyncio.sleep(0.1)
            assert not sent.is_set()  # blocked: backpressure, not loss
            exchange.release.set()
            await asyncio.get_running_loop().run_in_executor(None, thread.join)
            return b"done"

        await responder.run(work())
        await responder.finish(200, b"{}")
        return exchange.events

    chunks = [value for kind, value in asyncio.run(scenario()) if kind == "write"]
    assert chunks[:3] == [
        b"event: message\ndata: aaaaaaaa\n\n",
        b"event: message\ndata: bbbbbbbb\n\n",
        b"event: message\ndata: cccccccc\n\n",
    ]


def test_a_thread_waiting_for_room_gives_up_when_the_response_ends() -> None:
    async def scenario() -> tuple[bool, list[tuple[str, object]]]:
        exchange = Recorder()
        exchange.release.clear()  # the client reads nothing: the queue stays full
        responder = Responder(exchange, budget=10)
        responder.notify(b"12345678")
        done = threading.Event()

        def report() -> None:
            responder.notify(b"87654321")
            done.set()

        thread = threading.Thread(target=report)
        thread.start()
        await asyncio.sleep(0.1)
        assert not done.is_set()  # blocked for room
        ending = asyncio.ensure_future(responder.finish(200, b"{}"))
        await asyncio.get_running_loop().run_in_executor(None, thread.join)
        exchange.release.set()
        await ending
        return done.is_set(), exchange.events

    finished, events = asyncio.run(scenario())
    assert finished
    written = [value for kind, value in events if kind == "write"]
    assert written == [b"event: message\ndata: 12345678\n\n", b"event: message\ndata: {}\n\n"]


def test_cancelling_the_request_cancels_the_work() -> None:
    async def scenario() -> bool:
        responder = Responder(Recorder())
        started = asyncio.Event()
        cancelled = False

        async def work() -> bytes:
            nonlocal cancelled
            started.set()
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                cancelled = True
                raise
            return b""

        task = asyncio.ensure_future(responder.run(work()))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0)
        return cancelled

    assert asyncio.run(scenario())


def test_a_burst_of_logs_from_an_async_tool_all_arrive(client: TestClient) -> None:
    response = post(client, JUNE, "tools/call", {"name": "chatty"})
    logs = [message for message in response.messages if isinstance(message, Mapping)
            and message.get("method") == "notifications/message"]  # fmt: skip
    assert len(logs) == 50


def test_a_removed_method_is_not_found_whatever_its_params(client: TestClient) -> None:
    """server-stateless: ``logging/setLevel`` on 2026-07-28 is -32601 with HTTP 404, even
    without the ``level`` a 2025 request would need (the params check is the revision's)."""
    response = client.post(
        PATH, stateless_request("logging/setLevel"), headers=stateless_headers("logging/setLevel")
    )
    assert (response.status, cast(Any, response.json)["error"]["code"]) == (404, -32601)


def test_race_returns_at_once_for_work_already_done() -> None:
    from mcpkit.server._execution import _Outcome, _race, _Stop

    async def scenario() -> _Outcome:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[object] = loop.create_future()
        done.set_result(1)
        return await _race(loop, done, loop.time() + 10, None, _Stop())

    assert asyncio.run(scenario()) is _Outcome.DONE


def test_a_signal_calls_back_at_once_when_already_set() -> None:
    from mcpkit.server import Signal

    async def scenario() -> list[str]:
        calls: list[str] = []
        signal = Signal()
        signal.set()
        signal.add_callback(lambda: calls.append("now"))
        signal.remove_callback(lambda: None)  # not registered: nothing happens
        return calls

    assert asyncio.run(scenario()) == ["now"]


def test_cancelling_a_request_while_notifications_drain_cancels_the_drainer() -> None:
    async def scenario() -> bool:
        exchange = Recorder()
        exchange.release.clear()  # the first write blocks: the drainer stays busy
        responder = Responder(exchange)

        async def work() -> bytes:
            responder.notify(b"{}")
            return b"done"

        task = asyncio.ensure_future(responder.run(work()))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        drainer = responder._drainer
        assert drainer is not None
        await asyncio.sleep(0)
        return drainer.cancelled()

    assert asyncio.run(scenario())


def test_server_info_projection_is_remembered_but_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import mcpkit.protocol._projection as projection

    implementation = mcpkit.Implementation(name="x", version="1")
    monkeypatch.setattr(projection, "_MAX_REMEMBERED", 0)
    monkeypatch.setattr(projection, "_IMPLEMENTATIONS", {})
    first = projection.implementation_info(implementation, JUNE)
    assert first == {"name": "x", "version": "1"}
    assert projection._IMPLEMENTATIONS == {}  # full: computed, not stored


def test_an_executor_shut_down_by_a_lifespan_can_start_again() -> None:
    from mcpkit import CancellationToken
    from mcpkit.server import Executor

    async def scenario() -> object:
        executor = Executor(slots=1, queue=0)
        executor.start()  # already open: nothing to do
        executor.shutdown()
        executor.start()
        loop = asyncio.get_running_loop()
        return await executor.run(
            lambda: "ran", is_async=False, deadline=loop.time() + 5, token=CancellationToken()
        )

    assert asyncio.run(scenario()) == "ran"


def test_host_answers_are_remembered_but_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Remembering a Host answer never changes it: a full memory or a long value is simply
    answered afresh."""
    import mcpkit.server._engine as engine_module

    server = mcpkit.Server(Edges)
    body = stateless_request("tools/list")
    headers = stateless_headers("tools/list")
    with TestClient(server) as client:
        assert client.post(PATH, body, headers=headers).status == 200
        assert ("127.0.0.1:8000", 8000) in server.engine._hosts
        long_host = "a" * 300 + ".example"
        evil = client.post(PATH, body, headers={**headers, "Host": long_host})
        assert evil.status == 421 and (long_host, 8000) not in server.engine._hosts
        monkeypatch.setattr(engine_module, "_MAX_REMEMBERED_HOSTS", 0)
        assert client.post(PATH, body, headers={**headers, "Host": "localhost"}).status == 200
        assert ("localhost", 8000) not in server.engine._hosts
