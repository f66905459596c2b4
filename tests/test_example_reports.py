"""``examples/reports.py``: a long-running tool served as a task, end to end through the
in-process test client -- a client with the tasks extension gets a task and polls it to the
typed report, one without gets the report inline, a cancelled build ends ``cancelled`` and
stops, and the confirmation of ``email_report`` goes through ``tasks/update`` (or a retry)."""

from __future__ import annotations

import asyncio
import importlib.util
import itertools
import json
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any, Final

import jsonschema
import pytest

from mcpkit import SqliteTaskStore
from mcpkit.testing import TestClient, stateless_headers, stateless_request

PATH: Final = Path(__file__).resolve().parents[1] / "examples" / "reports.py"
TASKS: Final[dict[str, object]] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
ELICITATION: Final[dict[str, object]] = {"elicitation": {}}
WAIT: Final = 10.0
_LOADS = itertools.count()


def load(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """A fresh copy of the example (it opens its task store when imported), in
    ``sys.modules`` until the test ends."""
    spec = importlib.util.spec_from_file_location(f"mcpkit_example_reports_{next(_LOADS)}", PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


def close(module: ModuleType) -> None:
    store = module.server.task_store
    assert isinstance(store, SqliteTaskStore)
    asyncio.run(store.close())


class Sleeps:
    """The example's ``time``: months take ``step`` seconds, counted as they pass."""

    def __init__(self, step: float) -> None:
        self.step = step
        self.count = 0
        self._lock = threading.Lock()

    def sleep(self, seconds: float) -> None:
        time.sleep(self.step)
        with self._lock:
            self.count += 1


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps(0.02)


@pytest.fixture
def example(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sleeps: Sleeps
) -> Iterator[ModuleType]:
    monkeypatch.setenv("MCPKIT_REPORTS_DB", str(tmp_path / "reports-test.db"))
    module = load(monkeypatch)
    monkeypatch.setattr(module, "time", SimpleNamespace(sleep=sleeps.sleep))
    yield module
    close(module)


@pytest.fixture
def client(example: ModuleType) -> Iterator[TestClient]:
    with TestClient(example.server) as client:
        yield client


def post(
    client: TestClient,
    method: str,
    name: str | None,
    params: dict[str, Any],
    capabilities: dict[str, object] | None = None,
) -> Any:
    """One request; its JSON-RPC message."""
    body = stateless_request(
        method, params, capabilities=TASKS if capabilities is None else capabilities
    )
    response = client.post("/mcp", body, headers=stateless_headers(method, name))
    assert response.header("content-type") == "application/json"
    return json.loads(response.body)


def call(
    client: TestClient, tool: str, arguments: dict[str, Any], capabilities: dict[str, object]
) -> Any:
    message = post(client, "tools/call", tool, {"name": tool, "arguments": arguments}, capabilities)
    return message["result"]


def get(client: TestClient, task_id: str) -> Any:
    return post(client, "tasks/get", task_id, {"taskId": task_id})["result"]


def poll(client: TestClient, task_id: str, *waiting: str) -> tuple[Any, list[str]]:
    """``tasks/get`` until the task's status is not one of ``waiting``: the task, and the
    status messages seen meanwhile."""
    messages: list[str] = []
    deadline = time.monotonic() + WAIT
    while (task := get(client, task_id))["status"] in waiting:
        if "statusMessage" in task and task["statusMessage"] not in messages:
            messages.append(task["statusMessage"])
        assert time.monotonic() < deadline, task
        time.sleep(0.005)
    return task, messages


def output_schema(client: TestClient, tool: str) -> Any:
    listed = post(client, "tools/list", None, {})
    (found,) = [entry for entry in listed["result"]["tools"] if entry["name"] == tool]
    return found["outputSchema"]


def check_report(client: TestClient, result: Any, region: str, months: int) -> None:
    assert result.get("isError", False) is False
    report = result["structuredContent"]
    jsonschema.validate(report, output_schema(client, "build_report"))
    assert (report["region"], report["months"]) == (region, months)
    assert len(report["monthly_sales"]) == months
    assert report["total_sales"] == sum(report["monthly_sales"])


# --- build_report -------------------------------------------------------------------------------


def test_with_the_extension_the_call_is_a_task_polled_to_the_typed_report(
    client: TestClient, sleeps: Sleeps
) -> None:
    sleeps.step = 0.1  # slow enough that the polls see the months go by
    created = call(client, "build_report", {"region": "EMEA", "months": 3}, TASKS)
    assert created["resultType"] == "task" and created["status"] == "working"
    assert set(created) >= {"taskId", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"}
    task, messages = poll(client, created["taskId"], "working")
    assert task["status"] == "completed" and task["taskId"] == created["taskId"]
    check_report(client, task["result"], "EMEA", 3)
    assert messages and set(messages) <= {f"EMEA: month {n} of 3 done" for n in (1, 2, 3)}
    assert sleeps.count == 3


def test_without_the_extension_the_report_comes_inline(client: TestClient) -> None:
    result = call(client, "build_report", {"region": "APAC", "months": 2}, {})
    assert result["resultType"] == "complete" and "taskId" not in result
    check_report(client, result, "APAC", 2)
    again = call(client, "build_report", {"region": "APAC", "months": 2}, {})
    assert again["structuredContent"] == result["structuredContent"]  # the same figures


def test_a_cancelled_build_ends_cancelled_and_stops(client: TestClient, sleeps: Sleeps) -> None:
    created = call(client, "build_report", {"region": "LATAM", "months": 24}, TASKS)
    task_id = created["taskId"]
    deadline = time.monotonic() + WAIT
    while sleeps.count == 0:  # the build is under way
        assert time.monotonic() < deadline
        time.sleep(0.005)
    cancelled = post(client, "tasks/cancel", task_id, {"taskId": task_id})
    assert cancelled["result"].get("resultType", "complete") == "complete"
    task, _ = poll(client, task_id, "working")
    assert task["status"] == "cancelled"
    assert "result" not in task and "error" not in task
    time.sleep(0.1)  # a month or so: the build saw its token and gave up
    built = sleeps.count
    time.sleep(0.1)
    assert sleeps.count == built < 24
    assert get(client, task_id)["status"] == "cancelled"


# --- email_report -------------------------------------------------------------------------------


def test_a_confirmation_asked_by_a_task_is_answered_through_tasks_update(
    client: TestClient,
) -> None:
    arguments = {"region": "EMEA", "recipients": ["ana@example.com", "bo@example.com"]}
    created = call(client, "email_report", arguments, {**TASKS, **ELICITATION})
    task_id = created["taskId"]
    task, _ = poll(client, task_id, "working")
    assert task["status"] == "input_required"
    ((key, request),) = task["inputRequests"].items()
    assert request["method"] == "elicitation/create"
    assert request["params"]["message"] == "Email the EMEA report to 2 recipient(s)?"
    answer = {"action": "accept", "content": {"send": True}}
    update = {"taskId": task_id, "inputResponses": {key: answer}}
    post(client, "tasks/update", task_id, update)
    task, _ = poll(client, task_id, "working", "input_required")
    assert task["status"] == "completed"
    assert task["result"]["content"] == [
        {"type": "text", "text": "Sent the EMEA report to ana@example.com, bo@example.com"}
    ]


def test_a_declined_confirmation_sends_nothing_inline(client: TestClient) -> None:
    arguments = {"region": "APAC", "recipients": ["ana@example.com"]}
    asked = call(client, "email_report", arguments, ELICITATION)
    assert asked["resultType"] == "input_required"
    assert list(asked["inputRequests"]) == ["confirm"]
    params = {
        "name": "email_report",
        "arguments": arguments,
        "inputResponses": {"confirm": {"action": "decline"}},
    }
    answered = post(client, "tools/call", "email_report", params, ELICITATION)
    assert answered["result"]["content"] == [{"type": "text", "text": "Not sent"}]


# --- where tasks are kept -----------------------------------------------------------------------


def test_tasks_are_kept_in_reports_db_in_the_working_directory_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MCPKIT_REPORTS_DB", raising=False)
    monkeypatch.chdir(tmp_path)
    module = load(monkeypatch)
    try:
        assert (tmp_path / "reports.db").is_file()
        assert module.STEP_SECONDS == 1.0
    finally:
        close(module)
