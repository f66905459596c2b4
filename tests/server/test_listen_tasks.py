"""``notifications/tasks`` on ``subscriptions/listen`` streams (the tasks extension): only the
caller's existing tasks are followed and acknowledged, at most ``max_listen_task_ids`` may be
asked for, asking needs the extension, and each notification is the task as stored when it is
written (a hint: polling stays authoritative); a task the store cannot look up when it changes
is looked up again later, the stream left open."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import pytest

import mcpkit
from mcpkit import (
    Admitted,
    CompleteResult,
    Lease,
    Limits,
    MemoryTaskStore,
    Revision,
    Server,
    SubscriptionRequest,
    TaskCreatedResult,
    TaskCreation,
    TaskKey,
    TaskRecord,
    TaskSupport,
)
from mcpkit.errors import TaskStoreUnavailable
from mcpkit.json import JsonObject
from mcpkit.server._broadcast import Change, ChangeKind
from mcpkit.server._listen import read_listen
from mcpkit.testing import TestClient, TestResponse, stateless_headers, stateless_request

MODERN = Revision.V2026_07_28
WAIT = 10.0
TAG = "io.modelcontextprotocol/subscriptionId"
TASKS: dict[str, object] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
RELEASE = threading.Event()


@dataclass(frozen=True)
class Done:
    text: str


@mcpkit.endpoint(path="/mcp", name="tasking", version="1.0.0", revisions={MODERN}, listen=True)
class Tasking:
    @mcpkit.tool(task_support=TaskSupport.OPTIONAL)
    async def wait(self) -> CompleteResult:
        while not RELEASE.is_set():
            await asyncio.sleep(0.005)
        return CompleteResult.from_tool_text("done")

    @mcpkit.tool
    async def made(self, features: mcpkit.InvocationFeatures) -> TaskCreatedResult[Done]:
        handle = await features.require(TaskCreation).create()
        await handle.complete(CompleteResult.from_tool_text("no structured content"))
        return TaskCreatedResult(task_id=handle.task_id)


@mcpkit.endpoint(path="/plain", name="plain", version="1.0.0", revisions={MODERN}, listen=True)
class Plain:
    @mcpkit.tool
    def echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)


def grant(request: SubscriptionRequest) -> Lease:
    return Lease(60.0)


def owners(request: mcpkit.AdmissionRequest) -> Admitted:
    """Each caller names its own partition in a header."""
    http = request.http_request
    who = None if http is None else dict(http.headers).get("x-who")
    return Admitted(identity=who, authorization=who)


def served(**options: Any) -> Server:
    options.setdefault("subscription_authorizer", grant)
    options.setdefault("task_store", MemoryTaskStore())
    return Server([Tasking, Plain], **options)


@pytest.fixture
def client() -> Iterator[tuple[Server, TestClient]]:
    RELEASE.clear()
    server = served(admission=owners)
    with TestClient(server) as test_client:
        yield server, test_client
    RELEASE.set()


def request(
    client: TestClient,
    method: str,
    params: dict[str, object],
    name: str | None = None,
    *,
    who: str = "alice",
    capabilities: Mapping[str, object] = TASKS,
    path: str = "/mcp",
) -> Any:
    body = stateless_request(method, params, capabilities=capabilities)
    headers = {**stateless_headers(method, name), "x-who": who}
    return client.post(path, body, headers=headers).json


def start(client: TestClient, tool: str = "wait", *, who: str = "alice") -> str:
    result = request(client, "tools/call", {"name": tool, "arguments": {}}, tool, who=who)
    task_id: str = result["result"]["taskId"]
    return task_id


def listen(
    client: TestClient,
    notifications: object,
    *,
    who: str = "alice",
    capabilities: Mapping[str, object] = TASKS,
    path: str = "/mcp",
) -> Future[TestResponse]:
    body = stateless_request(
        "subscriptions/listen", {"notifications": notifications}, id="L", capabilities=capabilities
    )
    headers = {**stateless_headers("subscriptions/listen"), "x-who": who}
    return client.submit(path, body, headers=headers)


def until(condition: Any, seconds: float = WAIT) -> None:
    loop_deadline = threading.Event()
    timer = threading.Timer(seconds, loop_deadline.set)
    timer.start()
    try:
        while not condition():
            assert not loop_deadline.is_set(), "timed out"
            loop_deadline.wait(0.005)
    finally:
        timer.cancel()


def drain(client: TestClient, server: Server) -> None:
    loop = client._running_loop()
    asyncio.run_coroutine_threadsafe(server.engine.drain(0.5), loop).result(WAIT)


def status(client: TestClient, task_id: str, who: str = "alice") -> str:
    found = request(client, "tasks/get", {"taskId": task_id}, task_id, who=who)
    value: str = found["result"]["status"]
    return value


def test_a_listen_follows_its_callers_tasks_and_hears_their_end(
    client: tuple[Server, TestClient],
) -> None:
    server, test_client = client
    mine = start(test_client)
    theirs = start(test_client, who="bob")
    stream = listen(test_client, {"taskIds": [mine, theirs, "unknown", mine]})
    until(lambda: server.engine.deployment.audience.listens == 1)
    RELEASE.set()
    until(lambda: status(test_client, mine) == "completed")
    until(lambda: status(test_client, theirs, "bob") == "completed")
    polled = dict(request(test_client, "tasks/get", {"taskId": mine}, mine)["result"])
    until(lambda: _queued(server) == 0)
    drain(test_client, server)
    messages: Any = stream.result(WAIT).messages
    first, *middle, last = messages
    # only the caller's own, existing task is followed (another's is as unknown as "unknown")
    assert first == {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"notifications": {"taskIds": [mine]}, "_meta": {TAG: "L"}},
    }
    assert middle, "the task's end was told"
    told: Any = middle[-1]
    assert told["method"] == "notifications/tasks"
    params = dict(told["params"])
    assert params.pop("_meta") == {TAG: "L"}
    polled.pop("resultType"), polled.pop("_meta")
    assert params == polled  # the notification is the task as tasks/get shows it
    assert all(message["params"]["taskId"] == mine for message in middle)
    assert last == {
        "jsonrpc": "2.0",
        "id": "L",
        "result": {"resultType": "complete", "_meta": {TAG: "L"}},
    }


def _messages(stream: Future[TestResponse]) -> Any:
    """The stream's messages, to index without casts."""
    return stream.result(WAIT).messages


def _queued(server: Server) -> int:
    audience = server.engine.deployment.audience
    return sum(listener.queued for group in audience._listeners.values() for listener in group)


def test_task_ids_need_the_extension(client: tuple[Server, TestClient]) -> None:
    server, test_client = client
    task_id = start(test_client)
    refused = listen(test_client, {"taskIds": [task_id]}, capabilities={}).result(WAIT)
    assert refused.status == 400
    error: Any = refused.json
    assert error["error"]["code"] == -32021
    assert error["error"]["data"] == {"requiredCapabilities": TASKS}
    assert server.engine.deployment.audience.listens == 0


def test_task_ids_at_the_limit_and_one_past() -> None:
    limit = 3
    server = served(limits=Limits(max_listen_task_ids=limit))
    with TestClient(server) as test_client:
        ids = [f"t{index}" for index in range(limit)]
        body = stateless_request(
            "subscriptions/listen", {"notifications": {"taskIds": ids}}, capabilities=TASKS
        )
        at_limit = test_client.submit(
            "/mcp", body, headers=stateless_headers("subscriptions/listen")
        )
        until(lambda: server.engine.deployment.audience.listens == 1)
        drain(test_client, server)
        first: Any = at_limit.result(WAIT).messages[0]
        assert first["params"]["notifications"] == {}  # none of them exists
        past = stateless_request(
            "subscriptions/listen",
            {"notifications": {"taskIds": [*ids, "one-more"]}},
            capabilities=TASKS,
        )
        server.engine.pipeline.stopping = False
        refused = test_client.post("/mcp", past, headers=stateless_headers("subscriptions/listen"))
        assert refused.status == 400
        assert refused.json == {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32602, "message": "Invalid params"},
        }


def test_an_endpoint_without_tasks_follows_none(client: tuple[Server, TestClient]) -> None:
    server, test_client = client
    stream = listen(test_client, {"taskIds": ["anything"]}, path="/plain")
    until(lambda: server.engine.deployment.audience.listens == 1)
    drain(test_client, server)
    first: Any = stream.result(WAIT).messages[0]
    assert first["params"]["notifications"] == {}


def test_a_result_that_cannot_be_delivered_is_not_told(
    client: tuple[Server, TestClient],
) -> None:
    """``made`` completes its typed task with a result its output schema refuses: tasks/get
    answers -32603, and a listen hears nothing of it (the stored task is left as it is)."""
    server, test_client = client
    task_id = start(test_client, "made")
    stream = listen(test_client, {"taskIds": [task_id]})
    until(lambda: server.engine.deployment.audience.listens == 1)
    server.engine.broadcaster.publish(Change(ChangeKind.TASK, "/mcp", task=task_id))
    until(lambda: _queued(server) == 0)
    drain(test_client, server)
    first, last = _messages(stream)
    assert first["params"]["notifications"] == {"taskIds": [task_id]}
    assert last["result"]["resultType"] == "complete"
    assert (
        request(test_client, "tasks/get", {"taskId": task_id}, task_id)["error"]["code"] == -32603
    )


def test_a_task_gone_before_it_is_told_is_skipped(client: tuple[Server, TestClient]) -> None:
    server, test_client = client
    task_id = start(test_client)
    stream = listen(test_client, {"taskIds": [task_id]})
    until(lambda: server.engine.deployment.audience.listens == 1)
    store = server.engine.operations.tasks
    assert store is not None
    memory = store.store
    assert isinstance(memory, MemoryTaskStore)
    memory._drop(task_id)  # expired and removed meanwhile
    server.engine.broadcaster.publish(Change(ChangeKind.TASK, "/mcp", task=task_id))
    server.engine.broadcaster.publish(Change(ChangeKind.TASK, "/other", task=task_id))
    until(lambda: _queued(server) == 0)
    drain(test_client, server)
    _, last = _messages(stream)
    assert last["result"]["resultType"] == "complete"


def test_the_filter_reads_task_ids() -> None:
    read = read_listen(JsonObject({"notifications": JsonObject({"taskIds": ("a", "b", "a")})}))
    assert read.task_ids == ("a", "b")
    assert read.to_json() == {"taskIds": ["a", "b"]}
    for wrong in ("a", (1,), ("",), ("x" * 257,)):
        with pytest.raises(mcpkit.InvalidParams):
            read_listen(JsonObject({"notifications": JsonObject({"taskIds": wrong})}))
    assert read_listen(JsonObject({"notifications": JsonObject({"taskIds": ("x" * 256,)})}))


# --- a task store that cannot answer --------------------------------------------------------

UNAVAILABLE = (
    "mcpkit: a listen stream cannot look a task up now (TaskStoreUnavailable); trying again later"
)


class Wavering(MemoryTaskStore):
    """A memory store whose ``get`` fails while ``down``; it counts both outcomes."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False
        self.refused = 0
        self.answered = 0

    async def get(self, key: TaskKey) -> TaskRecord | None:
        if self.down:
            self.refused += 1
            raise TaskStoreUnavailable()
        found = await super().get(key)
        self.answered += 1
        return found


def _told(messages: Any) -> list[tuple[str, str]]:
    """The task notifications between the acknowledgement and the complete result."""
    first, *middle, last = messages
    assert first["method"] == "notifications/subscriptions/acknowledged"
    assert last["result"]["resultType"] == "complete"
    assert all(message["method"] == "notifications/tasks" for message in middle)
    return [(message["params"]["taskId"], message["params"]["status"]) for message in middle]


def test_a_change_the_store_cannot_look_up_is_told_a_keep_alive_period_later(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The stream stays open, looks the task up again every keep-alive period while the store
    fails (logged once, by type), and tells the task once the store answers."""
    RELEASE.clear()
    store = Wavering()
    server = served(admission=owners, task_store=store, limits=Limits(stream_keepalive_seconds=0.1))
    with TestClient(server) as test_client:
        task_id = start(test_client)
        stream = listen(test_client, {"taskIds": [task_id]})
        until(lambda: server.engine.deployment.audience.listens == 1)
        with caplog.at_level(logging.WARNING, "mcpkit.server"):
            store.down = True
            server.engine.broadcaster.publish(Change(ChangeKind.TASK, "/mcp", task=task_id))
            until(lambda: store.refused >= 3)  # the change, then two periods in vain
            answered = store.answered
            store.down = False
            until(lambda: store.answered > answered)
            drain(test_client, server)
            told = _told(_messages(stream))
        RELEASE.set()
    assert told == [(task_id, "working")]
    assert caplog.messages == [UNAVAILABLE]
    assert task_id not in caplog.text


def test_a_change_the_store_cannot_look_up_is_told_with_the_next_one_it_can(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Another followed task's change, looked up once the store answers, brings the missed
    one along (long before the next keep-alive period)."""
    RELEASE.clear()
    store = Wavering()
    server = served(admission=owners, task_store=store)
    with TestClient(server) as test_client:
        missed, next_one = start(test_client), start(test_client)
        stream = listen(test_client, {"taskIds": [missed, next_one]})
        until(lambda: server.engine.deployment.audience.listens == 1)
        answered = store.answered
        with caplog.at_level(logging.WARNING, "mcpkit.server"):
            store.down = True
            server.engine.broadcaster.publish(Change(ChangeKind.TASK, "/mcp", task=missed))
            until(lambda: store.refused == 1)
            store.down = False
            server.engine.broadcaster.publish(Change(ChangeKind.TASK, "/mcp", task=next_one))
            until(lambda: store.answered == answered + 2)
            drain(test_client, server)
            told = _told(_messages(stream))
        RELEASE.set()
    assert told == [(next_one, "working"), (missed, "working")]
    assert caplog.messages == [UNAVAILABLE]
