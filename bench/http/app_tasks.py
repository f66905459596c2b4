"""The mcpkit server of the tasks benchmark (``tasks.py``): ``add(a, b)`` that may run as a task.

``add`` is the benchmark's trivial tool (``async def``, structured output ``{"result": int}``,
as in ``app_mcpkit.py``) with ``task_support=TaskSupport.OPTIONAL``: a 2026-07-28 call that
declares the ``io.modelcontextprotocol/tasks`` extension starts a task, and any other call is
answered inline, so one server serves both the baseline and the tasks.

Environment (read once, at import):

* ``BENCH_TASK_STORE``: ``memory`` (default, ``MemoryTaskStore``) or ``sqlite``
  (``SqliteTaskStore`` on the file ``BENCH_TASK_DB``, which must be given);
* ``BENCH_TASK_TTL``: ``task_ttl_seconds`` (default 2; the task timeout is set to the same);
* ``BENCH_TASK_POLL_MS``: ``task_poll_interval_seconds`` in milliseconds (default 1, the least
  ``Limits`` takes), the ``pollIntervalMs`` the server advises.

``max_tasks`` and ``max_tasks_per_owner`` are raised to 10,000,000: every benchmark call is
anonymous (one owner), and a store keeps every task until its TTL, so the defaults (1,000 per
owner) would refuse calls within a second.  Run it as the other benchmark servers run:
``BENCH_TASK_STORE=sqlite BENCH_TASK_DB=/tmp/t.db mcpkit serve bench/http/app_tasks.py
--port 8201`` (embedded uvicorn, httptools on asyncio, one worker).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import mcpkit
from mcpkit import Revision, TaskSupport

STORE = os.environ.get("BENCH_TASK_STORE", "memory")
TTL_SECONDS = float(os.environ.get("BENCH_TASK_TTL", "") or 2)
POLL_MS = float(os.environ.get("BENCH_TASK_POLL_MS", "") or 1)
MAX_TASKS = 10_000_000


@dataclass(frozen=True)
class Sum:
    """The structured output, as ``app_mcpkit.py``'s."""

    result: int


@mcpkit.endpoint(
    path="/mcp",
    name="bench-mcpkit-tasks",
    version="0.0.1",
    revisions={Revision.V2026_07_28, Revision.V2025_11_25},
)
class BenchTasks:
    @mcpkit.tool(name="add", description="Add two integers.", task_support=TaskSupport.OPTIONAL)
    async def add(self, a: int, b: int) -> Sum:
        return Sum(a + b)


def _store() -> mcpkit.TaskStore:
    if STORE == "memory":
        return mcpkit.MemoryTaskStore()
    if STORE == "sqlite":
        path = os.environ.get("BENCH_TASK_DB", "")
        if not path:
            raise SystemExit("BENCH_TASK_STORE=sqlite needs BENCH_TASK_DB (the SQLite file)")
        return mcpkit.SqliteTaskStore(path)
    raise SystemExit(f"BENCH_TASK_STORE must be memory or sqlite, not {STORE!r}")


server = mcpkit.Server(
    BenchTasks,
    task_store=_store(),
    limits=mcpkit.Limits(
        max_tasks=MAX_TASKS,
        max_tasks_per_owner=MAX_TASKS,
        task_ttl_seconds=TTL_SECONDS,
        task_timeout_seconds=TTL_SECONDS,
        task_poll_interval_seconds=POLL_MS / 1000,
    ),
)
