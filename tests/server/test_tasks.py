"""The tasks extension (``io.modelcontextprotocol/tasks``, 2026-07-28) through the whole HTTP
pipeline, for tools the server runs as tasks itself (``task_support``): the ``CreateTaskResult``
a call becomes when the request declares the extension, the tool's support levels (inline,
refused, never a task) on every revision, ``tasks/get``, ``tasks/update`` and ``tasks/cancel``
and their refusals (capability, headers, params, another caller's or endpoint's task), what
status a task ends in for each way its handler ends, cancellation, input requests over
``tasks/update``, progress as ``statusMessage``, and the ``Limits`` of tasks at their limit and
one past it."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pytest

from mcpkit import (
    Cancelled,
    CompleteResult,
    InputRequestDeclaration,
    InputRequiredResult,
    InternalError,
    InvalidParams,
    InvocationFeatures,
    Limits,
    MemoryTaskStore,
    RequestContext,
    RequestStateMode,
    Revision,
    Server,
    TaskSupport,
    ToolError,
    endpoint,
    tool,
)
from mcpkit.server import TaskStatus
from mcpkit.server._operations import METHODS
from mcpkit.testing import TestClient, TestResponse, handshake_request

from ..wire import assert_valid
from .tasks_support import (
    INTERNAL,
    NOT_FOUND,
    NOVEMBER,
    SERVER_INFO_KEY,
    TASKS,
    TASKS_EXTENSION,
    WITH_FORMS,
    Gates,
    call,
    cancel,
    error,
    get,
    owner_by_header,
    post,
    reach,
    result,
    runner,
    start,
    status_of,
    until,
    update,
)

MODERN_ONLY = {Revision.V2026_07_28}
OPTIONAL, REQUIRED = TaskSupport.OPTIONAL, TaskSupport.REQUIRED
TTL = 120.0
LIMITS = Limits(task_ttl_seconds=TTL, task_timeout_seconds=TTL, task_poll_interval_seconds=0.25)
SERVER_INFO = {"name": "jobs", "version": "1.0.0"}
TASK_ID = re.compile(r"[A-Za-z0-9_-]{43}")
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
MISSING_TASKS = {
    "code": -32021,
    "message": "Missing required client capability",
    "data": {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
}
FORM: dict[str, Any] = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Sure?",
        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
    },
}
ACCEPT = {"action": "accept", "content": {"ok": True}}
DECLINE = {"action": "decline"}
Form = InputRequestDeclaration.elicitation_form

# What the handlers saw, in order; cleared per test.
events: list[Any] = []
gates = Gates()


@pytest.fixture(autouse=True)
def _fresh_records() -> Iterator[None]:
    events.clear()
    yield
    gates.clear()
    events.clear()


@dataclass(frozen=True)
class Shout:
    text: str
    length: int


async def _until_open(gate: str) -> None:
    """Wait (on the loop) until the test opens ``gate``; a cancellation is recorded."""
    try:
        while not gates(gate).is_set():
            await asyncio.sleep(0.002)
    except asyncio.CancelledError:
        events.append(f"{gate}: cancelled")
        raise


@endpoint(
    path="/mcp",
    name="jobs",
    version="1.0.0",
    revisions={Revision.V2026_07_28, Revision.V2025_11_25},
)
class Jobs:
    @tool(task_support=OPTIONAL)
    async def echo(self, text: str) -> CompleteResult:
        """Echoes the text (a task when the client can take one)."""
        events.append(f"echo: {text}")
        return CompleteResult.from_tool_text(text)

    @tool(task_support=OPTIONAL)
    def shout(self, text: str) -> Shout:
        """A typed tool with a def handler."""
        return Shout(text.upper(), len(text))

    @tool(revisions=MODERN_ONLY, task_support=REQUIRED)
    async def only_task(self) -> CompleteResult:
        """Runs only as a task."""
        events.append("only_task")
        return CompleteResult.from_tool_text("done")

    @tool
    def plain(self) -> CompleteResult:
        """Never a task."""
        events.append("plain")
        return CompleteResult.from_tool_text("plain")

    @tool(revisions=MODERN_ONLY, task_support=OPTIONAL)
    async def fails(self, how: str) -> CompleteResult:
        """Fails as told."""
        if how == "tool":
            raise ToolError("The job failed")
        if how == "internal":
            raise InternalError()
        if how == "params":
            raise InvalidParams()
        if how == "cancelled":  # on its own: no one cancelled the task
            raise Cancelled()
        if how == "task cancelled":  # the handler's own asyncio task, by itself
            raise asyncio.CancelledError()
        raise RuntimeError("secret: /etc/shadow")

    @tool(revisions=MODERN_ONLY, task_support=OPTIONAL)
    async def wait(self, gate: str) -> CompleteResult:
        """Waits for the test to open ``gate``."""
        events.append(f"{gate}: started")
        await _until_open(gate)
        return CompleteResult.from_tool_text(f"{gate} opened")

    @tool(revisions=MODERN_ONLY, task_support=OPTIONAL)
    def spin(self, features: InvocationFeatures) -> CompleteResult:
        """A def handler that polls its token."""
        token = features.cancellation_token
        events.append("spin: started")
        while not token.cancelled and not gates("spin").wait(0.002):
            pass
        events.append(f"spin: stopped, cancelled={token.cancelled}")
        return CompleteResult.from_tool_text("spun")

    @tool(revisions=MODERN_ONLY, task_support=OPTIONAL)
    async def report_async(
        self, features: InvocationFeatures, twice: bool = False
    ) -> CompleteResult:
        """Reports progress on the loop, then waits."""
        progress = features.progress_reporter
        assert progress is not None
        progress.report(1, 4, "first step")
        if twice:  # before the first is written: only the latest is kept
            progress.report(2, 4, "second step")
        await _until_open("report")
        return CompleteResult.from_tool_text("reported")

    @tool(revisions=MODERN_ONLY, task_support=OPTIONAL)
    def report_def(self, features: InvocationFeatures, total: bool = True) -> CompleteResult:
        """Reports progress from a worker thread, with no message, then waits."""
        progress = features.progress_reporter
        assert progress is not None
        progress.report(1, 4 if total else None)
        gates("report").wait(5.0)
        return CompleteResult.from_tool_text("reported")

    @tool(revisions=MODERN_ONLY, task_support=OPTIONAL)
    async def big(self, size: int) -> CompleteResult:
        return CompleteResult.from_tool_text("x" * size)

    @tool(
        revisions=MODERN_ONLY,
        task_support=OPTIONAL,
        input_requests=[Form()],
        request_state_mode=RequestStateMode.APPLICATION_PROTECTED,
    )
    def ask(
        self, ctx: RequestContext, features: InvocationFeatures, message: str = "Sure?"
    ) -> CompleteResult | InputRequiredResult:
        """Asks twice (two requests, then one more), carrying the first answers in its state;
        reports progress before it first asks."""
        events.append(("ask", ctx.request_state, dict(ctx.input_responses or {})))
        if ctx.request_state is None:
            progress = features.progress_reporter
            assert progress is not None
            progress.report(1, message="about to ask")
            form = {**FORM, "params": {**FORM["params"], "message": message}}
            return InputRequiredResult(
                input_requests={"confirm": form, "other": FORM}, request_state="first"
            )
        if ctx.request_state == "first":
            confirm, other = ctx.elicitation("confirm"), ctx.elicitation("other")
            assert confirm is not None and other is not None
            return InputRequiredResult(
                input_requests={"again": FORM}, request_state=f"{confirm.action} {other.action}"
            )
        again = ctx.elicitation("again")
        assert again is not None
        return CompleteResult.from_tool_text(f"{ctx.request_state} {again.action}")

    @tool(
        revisions=MODERN_ONLY,
        task_support=OPTIONAL,
        input_requests=[Form()],
        request_state_mode=RequestStateMode.APPLICATION_PROTECTED,
    )
    def rounds(
        self, ctx: RequestContext, forever: bool = False
    ) -> CompleteResult | InputRequiredResult:
        """Rounds of request state alone (no input requests): no client is asked."""
        done = int(ctx.request_state or "0")
        if forever or done < 2:
            return InputRequiredResult(request_state=str(done + 1))
        return CompleteResult.from_tool_text(f"{done} rounds")


@endpoint(path="/other", name="other", version="1.0.0", revisions=MODERN_ONLY)
class Other:
    @tool(task_support=OPTIONAL)
    async def echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)


@endpoint(path="/plain", name="plain", version="1.0.0", revisions=MODERN_ONLY)
class Plain:
    @tool
    def echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)


def served(**options: Any) -> Server:
    options.setdefault("task_store", MemoryTaskStore())
    options.setdefault("limits", LIMITS)
    options.setdefault("admission", owner_by_header)
    return Server([Jobs, Other, Plain], **options)


@pytest.fixture
def store() -> MemoryTaskStore:
    return MemoryTaskStore()


@pytest.fixture
def server(store: MemoryTaskStore) -> Server:
    return served(task_store=store)


@pytest.fixture
def client(server: Server) -> Iterator[TestClient]:
    with TestClient(server) as test_client:
        yield test_client


def iso(text: str) -> float:
    assert TIMESTAMP.fullmatch(text), text
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def raw_result(response: TestResponse) -> bytes:
    """The envelope's ``result`` member, as sent."""
    body = response.body
    assert body.startswith(b'{"jsonrpc":"2.0","id":1,"result":') and body.endswith(b"}")
    return body[len(b'{"jsonrpc":"2.0","id":1,"result":') : -1]


def stored_result(response: TestResponse) -> bytes:
    """The payload a completed task's ``tasks/get`` splices in (``result``, last), as sent."""
    body = response.body
    at = body.index(b',"result":', body.index(b'"pollIntervalMs"'))
    assert body.endswith(b"}}")
    return body[at + len(b',"result":') : -2]


# --- creating a task ----------------------------------------------------------------------


def test_a_call_declaring_the_extension_becomes_a_task_handle(client: TestClient) -> None:
    before = time.time()
    response = call(client, "wait", {"gate": "g"})
    assert response.status == 200
    created = result(response)
    assert list(created) == [
        "resultType",
        "taskId",
        "status",
        "createdAt",
        "lastUpdatedAt",
        "ttlMs",
        "pollIntervalMs",
        "_meta",
    ]
    assert created["resultType"] == "task" and created["status"] == "working"
    assert TASK_ID.fullmatch(created["taskId"])
    assert before - 0.01 <= iso(created["createdAt"]) <= time.time() + 0.01
    assert created["lastUpdatedAt"] == created["createdAt"]
    assert created["ttlMs"] == 120_000 and isinstance(created["ttlMs"], int)
    assert created["pollIntervalMs"] == 250
    assert created["_meta"] == {SERVER_INFO_KEY: SERVER_INFO}
    for absent in ("result", "error", "inputRequests", "requestState", "content"):
        assert absent not in created
    # durable: found at once, before the handler ends
    task_id = created["taskId"]
    found = result(get(client, task_id))
    assert found["taskId"] == task_id and found["status"] == "working"
    assert found["resultType"] == "complete" and found["createdAt"] == created["createdAt"]
    assert "result" not in found and "statusMessage" not in found
    gates("g").set()
    done = reach(client, task_id, "completed")
    assert done["result"] == {
        "content": [{"type": "text", "text": "g opened"}],
        "resultType": "complete",
    }
    assert iso(done["lastUpdatedAt"]) >= iso(done["createdAt"])


def test_a_completed_result_is_the_inline_result_as_written(client: TestClient) -> None:
    inline = call(client, "echo", {"text": "h\u00e9llo \u2603"}, capabilities={})
    assert "taskId" not in result(inline)
    task_id = start(client, "echo", {"text": "h\u00e9llo \u2603"})
    done = reach(client, task_id, "completed")
    meta = b',"_meta":' + json.dumps({SERVER_INFO_KEY: SERVER_INFO}, separators=(",", ":")).encode()
    # byte for byte, but for the serverInfo the inline answer carries (the task's is outside)
    assert stored_result(get(client, task_id)) == raw_result(inline).replace(meta, b"")
    assert done["result"]["resultType"] == "complete"
    assert events == ["echo: h\u00e9llo \u2603"] * 2


def test_a_typed_tool_s_task_result_has_its_structured_content(client: TestClient) -> None:
    task_id = start(client, "shout", {"text": "hey"})
    done = reach(client, task_id, "completed")
    assert done["result"]["structuredContent"] == {"text": "HEY", "length": 3}
    assert done["result"]["content"] == [{"type": "text", "text": '{"text":"HEY","length":3}'}]
    inline = call(client, "shout", {"text": "hey"}, capabilities={})
    assert stored_result(get(client, task_id)) == raw_result(inline).replace(
        b',"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"jobs","version":"1.0.0"}}', b""
    )


# --- task support and revisions ------------------------------------------------------------


def test_an_optional_tool_runs_inline_without_the_extension(client: TestClient) -> None:
    response = call(client, "echo", {"text": "now"}, capabilities={})
    assert response.status == 200
    assert result(response) == {
        "content": [{"type": "text", "text": "now"}],
        "resultType": "complete",
        "_meta": {SERVER_INFO_KEY: SERVER_INFO},
    }


@pytest.mark.parametrize(
    "capabilities",
    [{}, {"extensions": {}}, {"extensions": {TASKS_EXTENSION: True}}, {"extensions": []}],
)
def test_a_required_tool_without_the_extension_is_minus_32021_naming_it(
    client: TestClient, capabilities: dict[str, object]
) -> None:
    response = call(client, "only_task", capabilities=capabilities)
    assert response.status == 400
    assert error(response) == MISSING_TASKS
    assert events == []


def test_a_required_tool_with_the_extension_is_a_task(client: TestClient) -> None:
    task_id = start(client, "only_task")
    assert reach(client, task_id, "completed")["result"]["content"][0]["text"] == "done"


def test_a_forbidden_tool_never_becomes_a_task(client: TestClient, store: MemoryTaskStore) -> None:
    response = call(client, "plain", extra={"task": {"ttl": 1000}})
    assert result(response)["content"] == [{"type": "text", "text": "plain"}]
    assert "taskId" not in result(response)
    assert len(store) == 0


def test_the_obsolete_task_param_is_ignored(client: TestClient) -> None:
    inline = call(client, "echo", {"text": "a"}, capabilities={}, extra={"task": {"ttl": 5}})
    assert result(inline)["resultType"] == "complete"
    task_id = start(client, "echo", {"text": "b"}, extra={"task": {"ttl": 5}})
    assert reach(client, task_id, "completed")["ttlMs"] == 120_000


def test_a_2025_revision_never_creates_a_task(client: TestClient, store: MemoryTaskStore) -> None:
    headers = {"MCP-Protocol-Version": NOVEMBER}
    params = {"name": "echo", "arguments": {"text": "old"}, "task": {"ttl": 1000}}
    body = handshake_request("tools/call", params)
    response = client.post("/mcp", body, headers=headers)
    assert_valid(NOVEMBER, "tools/call", response.messages)
    assert result(response) == {"content": [{"type": "text", "text": "old"}]}
    assert len(store) == 0
    initialize = handshake_request(
        "initialize",
        {
            "protocolVersion": NOVEMBER,
            "capabilities": TASKS,
            "clientInfo": {"name": "c", "version": "1"},
        },
    )
    capabilities = result(client.post("/mcp", initialize, headers=headers))["capabilities"]
    assert "extensions" not in capabilities and "tasks" not in capabilities


# --- tasks/get, tasks/update, tasks/cancel: refusals ---------------------------------------


@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel"])
@pytest.mark.parametrize("known", [True, False])
def test_the_task_methods_need_the_extension_before_any_lookup(
    client: TestClient, method: str, known: bool
) -> None:
    task_id = start(client, "echo", {"text": "x"}) if known else "no-such-task"
    params: dict[str, object] = {"taskId": task_id}
    if method == "tasks/update":
        params["inputResponses"] = {}
    refused: list[dict[str, object]] = [
        {},
        {"extensions": {TASKS_EXTENSION: "yes"}},
        {"elicitation": {}},
    ]
    for capabilities in refused:
        response = post(client, method, params, name=task_id, capabilities=capabilities)
        assert response.status == 400
        assert error(response) == MISSING_TASKS


@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel"])
def test_an_unknown_another_caller_s_or_another_endpoint_s_task_is_the_same_not_found(
    client: TestClient, method: str
) -> None:
    mine = start(client, "echo", {"text": "x"}, owner="alice")
    elsewhere = start(client, "echo", {"text": "x"}, owner="bob", path="/other")
    reach(client, mine, "completed", owner="alice")

    def ask(task_id: str, **options: Any) -> TestResponse:
        params: dict[str, object] = {"taskId": task_id}
        if method == "tasks/update":
            params["inputResponses"] = {"1:confirm": ACCEPT}
        return post(client, method, params, name=task_id, **options)

    unknown = ask("A" * 43, owner="bob")
    assert unknown.status == 400 and error(unknown) == NOT_FOUND
    for response in (
        ask(mine, owner="bob"),  # another caller
        ask(mine),  # the anonymous partition is another caller too
        ask(mine, owner="alice", path="/other"),  # the right caller, another endpoint
        ask(elsewhere, owner="bob"),  # bob's task is at /other
    ):
        assert (response.status, response.body) == (unknown.status, unknown.body)
    assert result(get(client, mine, owner="alice"))["status"] == "completed"


@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel"])
def test_mcp_name_must_mirror_the_task_id(client: TestClient, method: str) -> None:
    task_id = start(client, "echo", {"text": "x"})
    params: dict[str, object] = {"taskId": task_id}
    if method == "tasks/update":
        params["inputResponses"] = {}
    for name in (None, "someone-else", task_id[:-1]):
        response = post(client, method, params, name=name)
        assert response.status == 400
        assert error(response) == {
            "code": -32020,
            "message": "Header mismatch",
            "data": {"header": "mcp-name"},
        }
    assert result(post(client, method, params, name=task_id))["resultType"] == "complete"


@pytest.mark.parametrize("method", ["tasks/list", "tasks/result", "tasks/delete"])
def test_task_methods_outside_the_extension_are_not_found(client: TestClient, method: str) -> None:
    task_id = start(client, "echo", {"text": "x"})
    response = post(client, method, {"taskId": task_id})
    assert response.status == 404
    assert error(response) == {"code": -32601, "message": "Method not found"}


@pytest.mark.parametrize(
    ("method", "params", "name"),
    [
        ("tasks/get", {"taskId": 5}, "5"),
        ("tasks/get", {"taskId": ""}, ""),
        ("tasks/get", {"taskId": "a" * 257}, "a" * 257),
        ("tasks/cancel", {"taskId": 5}, "5"),
        ("tasks/cancel", {"taskId": ""}, ""),
        ("tasks/update", {"taskId": "x", "inputResponses": []}, "x"),
        ("tasks/update", {"taskId": "x", "inputResponses": None}, "x"),
        ("tasks/update", {"taskId": "x"}, "x"),
        ("tasks/update", {"taskId": 7, "inputResponses": {}}, "7"),
    ],
)
def test_bad_params_are_minus_32602(
    client: TestClient, method: str, params: dict[str, object], name: str
) -> None:
    response = post(client, method, params, name=name)
    assert response.status == 400
    assert error(response) == {"code": -32602, "message": "Invalid params"}


def test_a_256_character_id_is_looked_up(client: TestClient) -> None:
    response = get(client, "a" * 256)
    assert error(response) == NOT_FOUND


def test_only_the_task_methods_need_an_endpoint_with_task_tools() -> None:
    assert {method.name for method in METHODS if method.tasks} == {
        "tasks/get",
        "tasks/update",
        "tasks/cancel",
    }


def test_an_endpoint_without_task_tools_has_no_task_methods(client: TestClient) -> None:
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        params = {"taskId": "x", "inputResponses": {}}
        response = post(client, method, params, name="x", path="/plain")
        assert response.status == 404
        assert error(response) == {"code": -32601, "message": "Method not found"}


# --- how a task ends ------------------------------------------------------------------------


def test_a_tool_error_completes_the_task_with_an_is_error_result(client: TestClient) -> None:
    done = reach(client, start(client, "fails", {"how": "tool"}), "completed")
    assert done["result"] == {
        "content": [{"type": "text", "text": "The job failed"}],
        "isError": True,
        "resultType": "complete",
    }
    assert "error" not in done


@pytest.mark.parametrize(
    ("how", "expected"),
    [
        ("internal", INTERNAL),
        ("params", {"code": -32602, "message": "Invalid params"}),
        ("crash", INTERNAL),
        ("cancelled", INTERNAL),
        ("task cancelled", INTERNAL),
    ],
)
def test_a_protocol_error_or_a_crash_fails_the_task(
    client: TestClient, how: str, expected: dict[str, object]
) -> None:
    task_id = start(client, "fails", {"how": how})
    failed = reach(client, task_id, "failed")
    assert failed["error"] == expected
    assert "result" not in failed and "inputRequests" not in failed
    assert b"shadow" not in get(client, task_id).body


def test_a_handler_past_the_task_timeout_fails_the_task() -> None:
    limits = Limits(task_ttl_seconds=TTL, task_timeout_seconds=0.1)
    with TestClient(served(limits=limits)) as test_client:
        task_id = start(test_client, "wait", {"gate": "never"})
        failed = reach(test_client, task_id, "failed")
        assert failed["error"] == {"code": -32603, "message": "Request timed out"}
        until(lambda: "never: cancelled" in events)
        # waiting for input counts as well
        asked = start(test_client, "ask", capabilities=WITH_FORMS)
        assert reach(test_client, asked, "failed")["error"]["message"] == "Request timed out"


def test_a_result_past_max_task_result_bytes_fails_the_task() -> None:
    limits = Limits(task_ttl_seconds=TTL, task_timeout_seconds=TTL, max_task_result_bytes=1024)
    with TestClient(served(limits=limits)) as test_client:
        fits = start(test_client, "big", {"size": 900})
        assert reach(test_client, fits, "completed")["result"]["content"][0]["text"] == "x" * 900
        task_id = start(test_client, "big", {"size": 1024})
        failed = reach(test_client, task_id, "failed")
        assert failed["error"] == INTERNAL and "result" not in failed
        # the input requests a task waits with are bounded the same way
        asked = start(test_client, "ask", {"message": "?" * 1024}, capabilities=WITH_FORMS)
        assert reach(test_client, asked, "failed")["error"] == INTERNAL


def test_a_tasks_get_answer_stays_within_max_response_bytes() -> None:
    limits = Limits(
        task_ttl_seconds=TTL,
        task_timeout_seconds=TTL,
        max_response_bytes=8192,
        max_task_result_bytes=8192,
    )
    store = MemoryTaskStore()
    with TestClient(served(limits=limits, page_size=1, task_store=store)) as test_client:
        fits = start(test_client, "big", {"size": 7000})
        assert reach(test_client, fits, "completed")["result"]["content"][0]["text"] == "x" * 7000
        # stored (the result alone fits), but not with the task around it
        task_id = start(test_client, "big", {"size": 8000})
        until(lambda: status_of(store, task_id) is TaskStatus.COMPLETED)
        response = get(test_client, task_id)
        assert len(response.body) <= 8192
        assert error(response) == INTERNAL


def test_a_task_that_ended_never_changes(client: TestClient) -> None:
    task_id = start(client, "echo", {"text": "x"})
    done = reach(client, task_id, "completed")
    response = cancel(client, task_id)
    assert result(response)["resultType"] == "complete"
    assert result(update(client, task_id, {"1:confirm": ACCEPT}))["resultType"] == "complete"
    assert result(get(client, task_id)) == done


# --- cancellation ---------------------------------------------------------------------------


def test_cancelling_a_running_async_handler(client: TestClient) -> None:
    task_id = start(client, "wait", {"gate": "g"})
    until(lambda: "g: started" in events)
    response = cancel(client, task_id)
    assert response.status == 200
    ack = result(response)
    assert ack["resultType"] == "complete"
    assert not {"taskId", "status", "result", "error"} & set(ack)
    cancelled = reach(client, task_id, "cancelled")
    assert not {"result", "error", "inputRequests", "statusMessage"} & set(cancelled)
    until(lambda: "g: cancelled" in events)
    # cancelling again is acknowledged and changes nothing
    assert result(cancel(client, task_id)) == ack
    assert result(get(client, task_id))["status"] == "cancelled"


def test_cancelling_a_def_handler_fires_its_token(client: TestClient) -> None:
    task_id = start(client, "spin")
    until(lambda: "spin: started" in events)
    cancel(client, task_id)
    reach(client, task_id, "cancelled")
    until(lambda: "spin: stopped, cancelled=True" in events)


def test_cancelling_a_task_waiting_for_input(client: TestClient) -> None:
    task_id = start(client, "ask", capabilities=WITH_FORMS)
    reach(client, task_id, "input_required")
    assert result(cancel(client, task_id))["resultType"] == "complete"
    cancelled = reach(client, task_id, "cancelled")
    assert "inputRequests" not in cancelled
    assert [event for event in events if event[0] == "ask"] == [("ask", None, {})]


# --- input ----------------------------------------------------------------------------------


def test_input_requests_are_answered_over_tasks_update(client: TestClient) -> None:
    task_id = start(client, "ask", capabilities=WITH_FORMS)
    waiting = reach(client, task_id, "input_required")
    assert waiting["statusMessage"] == "about to ask"  # written before the task asked
    assert waiting["inputRequests"] == {"1:confirm": FORM, "1:other": FORM}
    assert "result" not in waiting and "error" not in waiting
    # a subset: the rest stays outstanding; the wrong shape and unknown ids are ignored
    ack = update(
        client,
        task_id,
        {"1:confirm": ACCEPT, "1:other": {"ignored": True}, "confirm": ACCEPT, "9:x": ACCEPT},
    )
    assert result(ack) == {"resultType": "complete"}
    still = result(get(client, task_id))
    assert still["status"] == "input_required"
    assert still["inputRequests"] == {"1:other": FORM}
    # nothing that answers anything: acknowledged, nothing changes
    assert result(update(client, task_id, {"1:confirm": DECLINE})) == {"resultType": "complete"}
    assert result(update(client, task_id, {})) == {"resultType": "complete"}
    assert result(get(client, task_id))["inputRequests"] == {"1:other": FORM}
    update(client, task_id, {"1:other": DECLINE})
    second = reach(client, task_id, "input_required")
    assert second["inputRequests"] == {"2:again": FORM}  # unique over the task's life
    update(client, task_id, {"2:again": ACCEPT})
    done = reach(client, task_id, "completed")
    assert done["result"]["content"] == [{"type": "text", "text": "accept decline accept"}]
    # the handler saw its own keys, never the task's prefixed ones
    assert [event for event in events if event[0] == "ask"] == [
        ("ask", None, {}),
        ("ask", "first", {"confirm": ACCEPT, "other": DECLINE}),
        ("ask", "accept decline", {"again": ACCEPT}),
    ]


def test_a_request_kind_the_client_did_not_declare_fails_the_task(client: TestClient) -> None:
    task_id = start(client, "ask")  # TASKS alone: no elicitation capability
    failed = reach(client, task_id, "failed")
    assert failed["error"] == {
        "code": -32021,
        "message": "Missing required client capability",
        "data": {"requiredCapabilities": {"elicitation": {"form": {}}}},
    }


def test_request_state_alone_runs_the_next_round_at_once(client: TestClient) -> None:
    done = reach(client, start(client, "rounds"), "completed")
    assert done["result"]["content"] == [{"type": "text", "text": "2 rounds"}]


def test_a_task_asking_past_max_request_state_rounds_fails(client: TestClient) -> None:
    failed = reach(client, start(client, "rounds", {"forever": True}), "failed")
    assert failed["error"] == INTERNAL


@pytest.mark.parametrize(
    ("tool_name", "arguments", "message"),
    [
        ("report_async", {}, "first step"),
        ("report_async", {"twice": True}, "second step"),
        ("report_def", {}, "1/4"),
        ("report_def", {"total": False}, "1"),
    ],
)
def test_progress_is_the_task_s_status_message(
    client: TestClient, tool_name: str, arguments: dict[str, object], message: str
) -> None:
    task_id = start(client, tool_name, arguments)
    until(lambda: result(get(client, task_id)).get("statusMessage") == message)
    gates("report").set()
    done = reach(client, task_id, "completed")
    assert "statusMessage" not in done


def test_a_client_s_progress_token_changes_nothing(client: TestClient) -> None:
    params = {"name": "report_async", "arguments": {}, "_meta": {"progressToken": "p"}}
    response = post(client, "tools/call", params, name="report_async")
    task_id = result(response)["taskId"]
    until(lambda: result(get(client, task_id)).get("statusMessage") == "first step")
    gates("report").set()
    reach(client, task_id, "completed")


# --- limits ---------------------------------------------------------------------------------


def test_task_quotas_at_the_limit_and_one_past() -> None:
    limits = Limits(
        task_ttl_seconds=TTL, task_timeout_seconds=TTL, max_tasks_per_owner=2, max_tasks=3
    )
    with TestClient(served(limits=limits)) as test_client:
        for _ in range(2):
            start(test_client, "echo", {"text": "a"}, owner="alice")
        refused = call(test_client, "echo", {"text": "a"}, owner="alice")
        assert refused.status == 429
        assert error(refused) == {
            "code": -31999,
            "message": "Too many tasks; wait for some to finish and expire before starting more",
        }
        start(test_client, "echo", {"text": "b"}, owner="bob")  # the third in the store
        full = call(test_client, "echo", {"text": "c"}, owner="carol")
        assert (full.status, error(full)["code"]) == (429, -31999)
        # inline calls are not tasks and are never refused for them
        assert result(call(test_client, "echo", {"text": "d"}, owner="carol", capabilities={}))
        assert events.count("echo: c") == 0


def test_max_running_tasks_queues_the_next_task() -> None:
    limits = Limits(task_ttl_seconds=TTL, task_timeout_seconds=TTL, max_running_tasks=1)
    with TestClient(served(limits=limits)) as test_client:
        first = start(test_client, "wait", {"gate": "first"})
        until(lambda: "first: started" in events)
        second = start(test_client, "wait", {"gate": "second"})
        gates("second").set()
        time.sleep(0.05)
        assert "second: started" not in events
        assert result(get(test_client, second))["status"] == "working"
        gates("first").set()
        reach(test_client, first, "completed")
        reach(test_client, second, "completed")
        assert events == ["first: started", "second: started"]


def test_cancelling_a_task_still_queued() -> None:
    limits = Limits(task_ttl_seconds=TTL, task_timeout_seconds=TTL, max_running_tasks=1)
    with TestClient(served(limits=limits)) as test_client:
        first = start(test_client, "wait", {"gate": "first"})
        until(lambda: "first: started" in events)
        queued = start(test_client, "wait", {"gate": "queued"})
        cancel(test_client, queued)
        reach(test_client, queued, "cancelled")
        gates("first").set()
        reach(test_client, first, "completed")
        # its handler never ran, and its slot went to the next task
        after = start(test_client, "echo", {"text": "next"})
        reach(test_client, after, "completed")
        assert events == ["first: started", "echo: next"]


def test_the_runner_counts_its_running_tasks(server: Server, client: TestClient) -> None:
    tasks = runner(server)
    task_id = start(client, "wait", {"gate": "g"})
    until(lambda: tasks.running == 1)
    assert repr(tasks) == "TaskRunner(1 running)"
    gates("g").set()
    reach(client, task_id, "completed")
    until(lambda: tasks.running == 0)
