"""What the task tests share: requests of the tasks extension (2026-07-28) through the whole HTTP
pipeline, polling a task until it reaches a status, and reaching the server's loop and store
from the test's thread."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, TypeVar

from mcpkit.server import AdmissionRequest, Admitted
from mcpkit.server._task_store import TaskKey, TaskStatus, TaskStore
from mcpkit.server._tasks import TaskRunner
from mcpkit.serving import Server
from mcpkit.testing import TestClient, TestResponse, stateless_headers, stateless_request

from ..wire import assert_valid

T = TypeVar("T")

MODERN = "2026-07-28"
NOVEMBER = "2025-11-25"
PATH = "/mcp"
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
TASKS: Mapping[str, object] = {"extensions": {TASKS_EXTENSION: {}}}
"""Client capabilities that declare the tasks extension."""
WITH_FORMS: Mapping[str, object] = {**TASKS, "elicitation": {"form": {}}}
WAIT = 5.0
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
NOT_FOUND = {"code": -32602, "message": "Task not found or expired"}
INTERNAL = {"code": -32603, "message": "Internal error"}


def owner_by_header(request: AdmissionRequest) -> Admitted:
    """The caller's partition is the ``X-Owner`` header (a stand-in for a credential)."""
    assert request.http_request is not None
    return Admitted(authorization=dict(request.http_request.headers).get("x-owner"))


def post(
    client: TestClient,
    method: str,
    params: Mapping[str, object],
    *,
    name: str | None = None,
    capabilities: Mapping[str, object] | None = TASKS,
    path: str = PATH,
    owner: str | None = None,
    headers: Mapping[str, str] | None = None,
    id: str | int = 1,
) -> TestResponse:
    """One 2026-07-28 request; ``Mcp-Name`` is ``name`` (the tool, or the task id)."""
    body = stateless_request(method, params, id=id, capabilities=capabilities)
    sent = stateless_headers(method, name)
    if owner is not None:
        sent["X-Owner"] = owner
    sent.update(headers or {})
    response = client.post(path, body, headers=sent)
    # The official schema has no task results: the envelope is checked, and an inline tool
    # result against CallToolResult.
    inline = method == "tools/call" and b'"resultType":"task"' not in response.body
    assert_valid(MODERN, method if inline else None, response.messages)
    return response


def call(
    client: TestClient,
    tool: str,
    arguments: Mapping[str, object] | None = None,
    **options: Any,
) -> TestResponse:
    params = {"name": tool, "arguments": dict(arguments or {})}
    params.update(options.pop("extra", {}))
    return post(client, "tools/call", params, name=tool, **options)


def get(client: TestClient, task_id: str, **options: Any) -> TestResponse:
    return post(client, "tasks/get", {"taskId": task_id}, name=task_id, **options)


def update(
    client: TestClient, task_id: str, responses: Mapping[str, object], **options: Any
) -> TestResponse:
    params = {"taskId": task_id, "inputResponses": dict(responses)}
    return post(client, "tasks/update", params, name=task_id, **options)


def cancel(client: TestClient, task_id: str, **options: Any) -> TestResponse:
    return post(client, "tasks/cancel", {"taskId": task_id}, name=task_id, **options)


def result(response: TestResponse) -> Any:
    """The response's result, to index without casts (fails on an error response)."""
    message: Any = response.json
    assert "result" in message, message
    return message["result"]


def error(response: TestResponse) -> Any:
    """The response's error object, to index without casts (fails on a result)."""
    message: Any = response.json
    assert "error" in message, message
    return message["error"]


def start(
    client: TestClient, tool: str, arguments: Mapping[str, object] | None = None, **options: Any
) -> str:
    """Call ``tool`` as a task; its id."""
    response = call(client, tool, arguments, **options)
    assert response.status == 200, response.body
    created = result(response)
    assert created["resultType"] == "task", created
    task_id: str = created["taskId"]
    return task_id


def until(condition: Callable[[], bool], seconds: float = WAIT) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def reach(client: TestClient, task_id: str, status: str, **options: Any) -> Any:
    """Poll ``tasks/get`` until the task is ``status``; the detailed task then."""
    seen: list[Any] = []

    def there() -> bool:
        seen[:] = [result(get(client, task_id, **options))]
        return bool(seen[0]["status"] == status)

    until(there)
    return seen[0]


def on_loop(client: TestClient, coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` on the server's loop (the client's thread), from the test's."""
    return asyncio.run_coroutine_threadsafe(coroutine, client._running_loop()).result(WAIT)


def status_of(
    store: TaskStore, task_id: str, owner: str | None = None, path: str = PATH
) -> TaskStatus | None:
    """A task's status as ``store`` holds it, read from the test's thread (``None``: not
    found)."""
    found = asyncio.run(store.get(TaskKey(task_id, owner, path)))
    return None if found is None else found.status


def runner(server: Server) -> TaskRunner:
    tasks = server.engine.operations.tasks
    assert tasks is not None
    return tasks


class Gates:
    """Named ``threading.Event``s that handlers wait on and the test opens (per test)."""

    def __init__(self) -> None:
        self._events: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    def __call__(self, name: str) -> threading.Event:
        with self._lock:
            return self._events.setdefault(name, threading.Event())

    def clear(self) -> None:
        with self._lock:
            for event in self._events.values():
                event.set()  # anything still waiting ends
            self._events.clear()
