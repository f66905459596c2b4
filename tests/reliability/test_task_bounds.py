"""Tasks leave nothing behind: 1,000 tasks created, completed and expired leave an empty store,
no running work and no growth of memory from one thousand to the next (issue 17's check)."""

from __future__ import annotations

import gc
import time
import tracemalloc
from typing import Any

import mcpkit
from mcpkit import CompleteResult, Limits, MemoryTaskStore, Revision, Server, TaskSupport
from mcpkit.testing import TestClient, stateless_headers, stateless_request

TASKS: dict[str, object] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
BATCH = 1_000


@mcpkit.endpoint(path="/mcp", name="quick", version="1.0.0", revisions={Revision.V2026_07_28})
class Quick:
    @mcpkit.tool(task_support=TaskSupport.OPTIONAL)
    async def tick(self) -> CompleteResult:
        return CompleteResult.from_tool_text("tock")


def _batch(client: TestClient) -> list[str]:
    body = stateless_request("tools/call", {"name": "tick", "arguments": {}}, capabilities=TASKS)
    headers = stateless_headers("tools/call", "tick")
    created = []
    for _ in range(BATCH):
        answer: Any = client.post("/mcp", body, headers=headers).json
        created.append(answer["result"]["taskId"])
    return created


def _settled(server: Server, store: MemoryTaskStore, seconds: float = 20.0) -> None:
    """Wait until no task runs and the store holds none (expired and swept)."""
    runner = server.engine.operations.tasks
    assert runner is not None
    deadline = time.monotonic() + seconds
    while runner.running or len(store):
        assert time.monotonic() < deadline, f"{runner.running} running, {len(store)} kept"
        time.sleep(0.02)


def test_a_thousand_tasks_expire_and_leave_the_store_and_memory_bounded() -> None:
    store = MemoryTaskStore()
    limits = Limits(task_ttl_seconds=1.0, task_timeout_seconds=1.0, max_tasks_per_owner=BATCH)
    server = Server(Quick, task_store=store, limits=limits)
    with TestClient(server) as client:
        first = _batch(client)
        assert len(set(first)) == BATCH  # every id fresh
        _settled(server, store)
        gc.collect()
        tracemalloc.start()
        try:
            _batch(client)
            _settled(server, store)
            gc.collect()
            after_one, _ = tracemalloc.get_traced_memory()
            _batch(client)
            _settled(server, store)
            gc.collect()
            after_two, _ = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert store._ends == []  # the expiry heap is empty too
        # a thousand more tasks leave (close to) nothing more behind
        assert after_two - after_one < 64 * 1024, (after_one, after_two)
        # and an expired task is gone for good
        body = stateless_request("tasks/get", {"taskId": first[0]}, capabilities=TASKS)
        gone: Any = client.post("/mcp", body, headers=stateless_headers("tasks/get", first[0]))
        assert gone.json["error"]["code"] == -32602
