"""2026-07-28 tasks (the ``io.modelcontextprotocol/tasks`` extension) against inline
``tools/call``: mcpkit compared with itself.

Run from the project root as ``python -m bench.http.tasks`` (``make bench`` runs it after the
others; ``QUICK=1`` for a smoke run).  The official SDK (mcp 2.3.0) and fastmcp 4.1.6 have no
task runtime, so there is no peer to measure: every figure here is mcpkit's.

The server is ``mcpkit serve bench/http/app_tasks.py`` (embedded uvicorn, httptools on
asyncio, one worker, pinned to CPU 0 as in the other benchmarks): ``async def add(a, b)`` with
``task_support=TaskSupport.OPTIONAL``, once with ``MemoryTaskStore`` and once with
``SqliteTaskStore`` on a fresh file in a temporary directory.  On each server, in turn (the
order reversed on every other repetition):

* ``inline``: ``tools/call add(2, 3)`` without the extension, so answered inline: the
  baseline, sent by this script's client;
* ``inline (wrk)``: the same request sent by ``wrk -t1`` with ``mcp_post.lua``, as in the other
  benchmarks (skipped when wrk is missing): how much this script's client costs;
* ``tasks``: ``tools/call add(2, 3)`` declaring the extension in
  ``_meta["io.modelcontextprotocol/clientCapabilities"]["extensions"]``, answered with a
  ``CreateTaskResult``, then ``tasks/get`` (headers ``Mcp-Method: tasks/get``, ``Mcp-Name:
  <taskId>``) until the task is ``completed``, each poll sent as soon as the previous one
  answered ``working``, without sleeping: the most polls a client can ask for, so the server's
  worst case;
* ``tasks-paced``: the same, each poll sent once the ``pollIntervalMs`` the previous answer
  advised has passed, as a client that follows the server's advice does.  The server advises
  1 ms (``task_poll_interval_seconds=0.001``, the least ``Limits`` takes), so the interval
  barely adds to the latency.

A task counts when its completed result (the tool result inlined under ``result``, checked to
be ``{"result": 5}``) is read; its latency runs from the ``tools/call`` sent to that read.

The client: ``CONNECTIONS`` (16) keep-alive HTTP/1.1 connections on one asyncio loop (uvloop
when installed) in this process, pinned to CPU 1 (wrk's); each sends its next request when the
previous one is answered (or, paced, when the interval has passed).  Every response must be
HTTP 200 with the expected result; any other ends the run as failed.  The server's and the
client's CPU over each run are read from ``/proc``; a run during which other processes used
more than ``BENCH_NOISE_LIMIT`` cores (0.25) is measured again, at most
``BENCH_NOISE_RETRIES`` (2) times, as in ``run.py``.

Tasks are kept for ``BENCH_TASK_TTL`` seconds (default 2) after their creation: a store then
holds about rate x TTL tasks, and a tasks run is warmed up for at least that long, so it is
measured with the store at its steady size.  ``SqliteTaskStore.create`` counts the tasks kept
(all of them, and the caller's) on every call, so its figures fall as the TTL grows: the short
default is its best case.  The limits on tasks kept are raised out of the way
(``app_tasks.py``).  Each figure is the median of ``BENCH_REPS`` runs of ``BENCH_DURATION``
seconds after a ``BENCH_WARMUP``-second warm-up.  ``QUICK=1``: 1 repetition, 1 s warm-up, 2 s
runs.  Writes ``bench/results/<date>-tasks.md`` (``<date>-tasks-quick.md`` for a quick run).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from bench.http.common import (
    CLIENT_CPU,
    EXPECT_CALL,
    HERE,
    META,
    PROJECT_VENV,
    RESULTS,
    REV_2026,
    TASKSET,
    BenchError,
    RunningServer,
    ServerSpec,
    children_cpu_seconds,
    env_int,
    log,
    machine,
    machine_busy_seconds,
    quietest,
    run_wrk,
    start_server,
)

CONNECTIONS: Final = 16
STORES: Final = ("memory", "sqlite")
WORKLOADS: Final = ("inline", "inline-wrk", "tasks", "tasks-paced")
TASK_WORKLOADS: Final = ("tasks", "tasks-paced")
LABELS: Final = {
    "inline": "tools/call, inline",
    "inline-wrk": "tools/call, inline (wrk)",
    "tasks": "task, polled at once",
    "tasks-paced": "task, polled after pollIntervalMs",
}
TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
TASK_META: Final = {
    "io.modelcontextprotocol/protocolVersion": REV_2026,
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXTENSION: {}}},
}
ARGUMENTS: Final = {"a": 2, "b": 3}
_EXPECT: Final = EXPECT_CALL.encode()
_UNFINISHED: Final = frozenset({"working", "input_required"})


@dataclass(frozen=True)
class TaskServer(ServerSpec):
    """``app_tasks.py`` with one store, started as the other mcpkit benchmark servers are
    (``mcpkit serve``, through ``common.start_server``)."""

    db: str = ""
    ttl: float = 2.0

    def command(self, port: int) -> list[str]:
        mcpkit = PROJECT_VENV / "bin" / "mcpkit"
        return [str(mcpkit), "serve", str(HERE / "app_tasks.py"), "--port", str(port)]

    def environment(self) -> dict[str, str]:
        env = super().environment()
        env["BENCH_TASK_STORE"] = self.variant.removeprefix("tasks-")
        env["BENCH_TASK_DB"] = self.db
        env["BENCH_TASK_TTL"] = str(self.ttl)
        env["BENCH_TASK_POLL_MS"] = "1"
        return env


# --- the client ------------------------------------------------------------------------------


def _body(method: str, params: dict[str, object]) -> bytes:
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return json.dumps(message, separators=(",", ":")).encode()


def _head(port: int, method: str, name: str, length: int) -> bytes:
    """The request head ``mcp_post.lua`` sends on 2026-07-28."""
    return (
        "POST /mcp HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{port}\r\n"
        "Content-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\n"
        f"MCP-Protocol-Version: {REV_2026}\r\n"
        f"Mcp-Method: {method}\r\n"
        f"Mcp-Name: {name}\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


class Requests:
    """The requests of one server, written once (a ``tasks/get`` is spliced around its id)."""

    def __init__(self, port: int) -> None:
        self.port = port
        inline = _body("tools/call", {"name": "add", "arguments": ARGUMENTS, "_meta": META})
        self.inline = _head(port, "tools/call", "add", len(inline)) + inline
        create = _body("tools/call", {"name": "add", "arguments": ARGUMENTS, "_meta": TASK_META})
        self.create = _head(port, "tools/call", "add", len(create)) + create
        # A placeholder for the id: ids are URL-safe base64 (43 characters), spliced in as is.
        marker = "TASK-ID"
        body = _body("tasks/get", {"taskId": marker, "_meta": TASK_META})
        before, after = body.split(marker.encode())
        self._get = (before, after)

    def get(self, task_id: str) -> bytes:
        before, after = self._get
        body = before + task_id.encode() + after
        return _head(self.port, "tasks/get", task_id, len(body)) + body


class Failed(Exception):
    """A response that is not the expected one: the run fails with its description."""


@dataclass
class Tally:
    """What the clients did during the measured window."""

    measuring: bool = False
    stopping: bool = False
    operations: int = 0
    """Inline calls answered, or tasks whose completed result was read."""
    requests: int = 0
    polls: int = 0
    latencies: list[float] = field(default_factory=list)
    failure: str | None = None
    failed: asyncio.Event = field(default_factory=asyncio.Event)


class Connection:
    """One keep-alive HTTP/1.1 connection; one request at a time."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @staticmethod
    async def open(port: int) -> Connection:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return Connection(reader, writer)

    async def post(self, request: bytes) -> bytes:
        """Send ``request``; the body of its answer (a 200 with a ``content-length``)."""
        self.writer.write(request)
        head = await self.reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200 "):
            status = head.split(b"\r\n", 1)[0].decode(errors="replace")
            body = await self.reader.read(300)
            raise Failed(f"{status}: {body!r}")
        lower = head.lower()
        start = lower.find(b"\r\ncontent-length:")
        if start < 0:
            raise Failed(f"no content-length: {head[:300]!r}")
        end = lower.index(b"\r\n", start + 2)
        return await self.reader.readexactly(int(lower[start + 17 : end]))

    def close(self) -> None:
        self.writer.close()


async def _inline_client(connection: Connection, requests: Requests, tally: Tally) -> None:
    request = requests.inline
    clock = time.perf_counter
    while not tally.stopping:
        started = clock()
        body = await connection.post(request)
        if _EXPECT not in body:
            raise Failed(f"inline call: {body[:300]!r}")
        if tally.measuring:
            tally.operations += 1
            tally.requests += 1
            tally.latencies.append(clock() - started)


async def _task_client(
    connection: Connection, requests: Requests, tally: Tally, *, paced: bool
) -> None:
    """Tasks, one after the other; ``paced``: each ``tasks/get`` is sent once the
    ``pollIntervalMs`` of the previous answer has passed (else at once)."""
    clock = time.perf_counter
    while not tally.stopping:
        started = clock()
        body = await connection.post(requests.create)
        result = json.loads(body).get("result") or {}
        task_id = result.get("taskId")
        if result.get("resultType") != "task" or not isinstance(task_id, str):
            raise Failed(f"tools/call did not create a task: {body[:300]!r}")
        get = requests.get(task_id)
        polls = 0
        while True:
            if paced:
                await asyncio.sleep(result.get("pollIntervalMs", 0) / 1000)
            body = await connection.post(get)
            polls += 1
            result = json.loads(body).get("result") or {}
            status = result.get("status")
            if status == "completed":
                break
            if status not in _UNFINISHED:
                raise Failed(f"tasks/get: {body[:300]!r}")
        if _EXPECT not in body:
            raise Failed(f"a completed task without the expected result: {body[:300]!r}")
        if tally.measuring:
            tally.operations += 1
            tally.requests += 1 + polls
            tally.polls += polls
            tally.latencies.append(clock() - started)


async def _guarded(work: Coroutine[Any, Any, None], tally: Tally) -> None:
    """Run one client; its first failure stops every client."""
    try:
        await work
    except Exception as error:  # a response not as expected, a connection lost...
        if tally.failure is None:
            tally.failure = f"{type(error).__name__}: {error}"[:300]
        tally.stopping = True
        tally.failed.set()


async def _pause(tally: Tally, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(tally.failed.wait(), seconds)


@dataclass
class Run:
    """One measured run of one workload on one server."""

    store: str
    workload: str
    rep: int
    rate: float = 0.0
    """Inline calls, or tasks completed, per second."""
    requests_per_s: float = 0.0
    p50_ms: float = 0.0
    p99_ms: float = 0.0
    polls: float = 0.0
    """Mean ``tasks/get`` per task."""
    server_cpu_us: float = 0.0
    """Server CPU per inline call or per task."""
    client_cpu: float = 0.0
    """The client's CPU over the run, in cores."""
    other_cpu: float = 0.0
    """Every other process's CPU over the run, in cores."""
    failure: str | None = None
    attempts: int = 1


def _percentiles(values: Sequence[float]) -> tuple[float, float]:
    if len(values) < 2:
        return (values[0] * 1e3, values[0] * 1e3) if values else (0.0, 0.0)
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return cuts[49] * 1e3, cuts[98] * 1e3


async def _drive(
    server: RunningServer, workload: str, warmup: float, duration: float, rep: int
) -> Run:
    run = Run(server.spec.variant.removeprefix("tasks-"), workload, rep)
    requests = Requests(server.port)
    tally = Tally()
    connections = [await Connection.open(server.port) for _ in range(CONNECTIONS)]
    clients = [
        asyncio.create_task(
            _guarded(
                _inline_client(c, requests, tally)
                if workload == "inline"
                else _task_client(c, requests, tally, paced=workload == "tasks-paced"),
                tally,
            )
        )
        for c in connections
    ]
    try:
        await _pause(tally, warmup)
        before, busy0, cpu0 = server.sample(), machine_busy_seconds(), time.process_time()
        started = time.perf_counter()
        tally.measuring = True
        await _pause(tally, duration)
        tally.measuring = False
        elapsed = time.perf_counter() - started
        after, busy1, cpu1 = server.sample(), machine_busy_seconds(), time.process_time()
        tally.stopping = True
        await asyncio.wait_for(asyncio.gather(*clients), 30)
    finally:
        for task in clients:
            task.cancel()
        for connection in connections:
            connection.close()
    if tally.failure is not None or not tally.operations:
        run.failure = tally.failure or "nothing was answered"
        return run
    server_cpu = after.cpu_seconds - before.cpu_seconds
    run.rate = tally.operations / elapsed
    run.requests_per_s = tally.requests / elapsed
    run.p50_ms, run.p99_ms = _percentiles(tally.latencies)
    run.polls = tally.polls / tally.operations
    run.server_cpu_us = server_cpu / tally.operations * 1e6
    run.client_cpu = (cpu1 - cpu0) / elapsed
    run.other_cpu = max(0.0, (busy1 - busy0) - server_cpu - (cpu1 - cpu0)) / elapsed
    return run


def _client_run(
    server: RunningServer, workload: str, warmup: float, duration: float, rep: int
) -> Run:
    main = _drive(server, workload, warmup, duration, rep)
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)


def _wrk_run(server: RunningServer, warmup: int, duration: int, rep: int) -> Run:
    run = Run(server.spec.variant.removeprefix("tasks-"), "inline-wrk", rep)
    warm = run_wrk(server.url, REV_2026, "tools/call", CONNECTIONS, warmup, EXPECT_CALL)
    if warm.failure:
        run.failure = f"warm-up: {warm.failure}"
        return run
    before, busy0, wrk0 = server.sample(), machine_busy_seconds(), children_cpu_seconds()
    result = run_wrk(server.url, REV_2026, "tools/call", CONNECTIONS, duration, EXPECT_CALL)
    after, busy1, wrk1 = server.sample(), machine_busy_seconds(), children_cpu_seconds()
    run.failure = result.failure
    if result.failure or not result.duration_s:
        return run
    server_cpu = after.cpu_seconds - before.cpu_seconds
    run.rate = run.requests_per_s = result.rps
    run.p50_ms, run.p99_ms = result.p50_ms, result.p99_ms
    run.server_cpu_us = server_cpu / result.requests * 1e6
    run.client_cpu = (wrk1 - wrk0) / result.duration_s
    other = (busy1 - busy0) - server_cpu - (wrk1 - wrk0)
    run.other_cpu = max(0.0, other / result.duration_s)
    return run


# --- the benchmark ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    reps: int
    warmup: int
    duration: int
    ttl: float
    quick: bool
    wrk: bool
    noise_limit: float
    noise_retries: int

    @staticmethod
    def from_env() -> Settings:
        quick = os.environ.get("QUICK", "") not in ("", "0")
        return Settings(
            reps=env_int("BENCH_REPS", 1 if quick else 5),
            warmup=env_int("BENCH_WARMUP", 1 if quick else 2),
            duration=env_int("BENCH_DURATION", 2 if quick else 5),
            ttl=float(os.environ.get("BENCH_TASK_TTL", "") or 2),
            quick=quick,
            wrk=shutil.which("wrk") is not None,
            noise_limit=float(os.environ.get("BENCH_NOISE_LIMIT", "") or 0.25),
            noise_retries=env_int("BENCH_NOISE_RETRIES", 2),
        )


def _measured(server: RunningServer, workload: str, rep: int, settings: Settings) -> Run:
    """One run of ``workload``; a run during which other processes used more than
    ``settings.noise_limit`` cores is measured again (``settings.noise_retries`` times at
    most) and the quietest attempt kept, as ``run.py`` does."""
    warmup: float = settings.warmup
    if workload in TASK_WORKLOADS:
        # A tasks run starts from an empty store: it is warmed up until the first tasks
        # expire, so it is measured with the store at its steady size.
        warmup = max(warmup, settings.ttl)

    def measure() -> Run:
        if workload == "inline-wrk":
            return _wrk_run(server, settings.warmup, settings.duration, rep)
        return _client_run(server, workload, warmup, settings.duration, rep)

    return quietest(measure, settings.noise_limit, settings.noise_retries)


def _server_notes(server: RunningServer) -> list[str]:
    """What the server logged while it served, besides its start line (warnings, errors)."""
    text = server.log_path.read_text(errors="replace")
    return [line for line in text.splitlines() if line and not line.startswith("mcpkit: serving")]


def measure_store(store: str, rep: int, settings: Settings) -> tuple[list[Run], list[str]]:
    """A fresh server with ``store``, each workload measured on it once."""
    order = [w for w in WORKLOADS if settings.wrk or w != "inline-wrk"]
    if rep % 2:
        order.reverse()
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="mcpkit-bench-tasks-") as folder:
        db = str(Path(folder) / "tasks.db") if store == "sqlite" else ""
        try:
            server = start_server(TaskServer("mcpkit", f"tasks-{store}", db=db, ttl=settings.ttl))
        except BenchError as error:
            lines = [line for line in str(error).splitlines() if line.strip()]
            failure = " ".join(lines[:1] + lines[-1:] if len(lines) > 1 else lines)[:300]
            log(f"  {store}: FAILED: {failure}")
            return [Run(store, "server", rep, failure=failure)], []
        try:
            for workload in order:
                run = _measured(server, workload, rep, settings)
                runs.append(run)
                status = f"FAILED: {run.failure}" if run.failure else ""
                log(
                    f"  {store:6} {LABELS[workload]:34} {run.rate:8.0f}/s "
                    f"({run.requests_per_s:6.0f} req/s) p50 {run.p50_ms:6.2f} p99 "
                    f"{run.p99_ms:6.2f} ms polls {run.polls:4.2f} cpu {run.server_cpu_us:5.0f} µs "
                    f"(client {run.client_cpu:.2f}, others {run.other_cpu:.2f} cores) {status}"
                )
            if server.process.poll() is not None:
                runs.append(Run(store, "server", rep, failure="the server exited"))
            notes = _server_notes(server)  # before it stops: its stop is logged
        finally:
            server.stop()
    return runs, notes


def _median(runs: Sequence[Run], attribute: str) -> float:
    return float(statistics.median(getattr(run, attribute) for run in runs))


def _filesystem(path: str) -> str:
    """The file system type of ``path`` (``df --output=fstype``), for the report."""
    out = subprocess.run(
        ["df", "--output=fstype", path], capture_output=True, text=True, check=False
    ).stdout.split()
    return out[-1] if len(out) > 1 else "unknown"


def _ratios(settings: Settings, runs: Sequence[Run]) -> list[str]:
    """Per store and way of polling: tasks/s over inline calls/s, both of this client (and
    over wrk's inline figure)."""
    lines = []
    for store in STORES:
        mine = {w: [r for r in runs if r.store == store and r.workload == w] for w in WORKLOADS}
        for workload in TASK_WORKLOADS:
            text = f"- {store}, {LABELS[workload]}: "
            if not mine[workload] or not mine["inline"]:
                lines.append(text + "not measured (a run failed)")
                continue
            rate = _median(mine[workload], "rate")
            text += f"**{rate / _median(mine['inline'], 'rate'):.3f}**"
            if mine["inline-wrk"]:
                text += f" ({rate / _median(mine['inline-wrk'], 'rate'):.3f} of wrk's)"
            lines.append(text + f"; the store held about {rate * settings.ttl:,.0f} tasks")
    return lines


def report(
    settings: Settings, runs: Sequence[Run], notes: Sequence[str], started: datetime.datetime
) -> str:
    info = machine()
    temp = tempfile.gettempdir()
    quick = " (QUICK smoke run: not for comparison)" if settings.quick else ""
    ok = [run for run in runs if not run.failure]
    loop = "asyncio with uvloop" if _has_uvloop() else "asyncio"
    lines = [
        f"# 2026-07-28 tasks vs inline tools/call: mcpkit, {started:%Y-%m-%d}{quick}",
        "",
        "mcpkit compared with itself: the official SDK (mcp 2.3.0) and fastmcp 4.1.6 have no "
        "task runtime.",
        "",
        f"- Machine: {info['nproc']} CPUs, {info['cpu']}; commit {info['commit']}; "
        f"pinning: {'server CPU 0, client and wrk CPU 1' if TASKSET else 'no (not pinned)'}.",
        f"- Method: bench/http/tasks.py; `mcpkit serve bench/http/app_tasks.py` (async def "
        f"add, task_support OPTIONAL), one server per store and repetition; {CONNECTIONS} "
        f"keep-alive connections, each sending its next request when answered (client: Python, "
        f"{loop}). Median of {settings.reps} run(s) of {settings.duration} s after a "
        f"{settings.warmup} s warm-up (tasks: {max(settings.warmup, settings.ttl):g} s).",
        "- Polling: *at once*: the next tasks/get as soon as one answers `working` (the most "
        "polls a client can ask for); *after pollIntervalMs*: once the interval the last answer "
        "advised has passed (the server advises 1 ms, task_poll_interval_seconds=0.001).",
        f"- Tasks kept {settings.ttl:g} s (task_ttl_seconds): a store holds about rate x "
        f"{settings.ttl:g} s of them; SqliteTaskStore on a fresh file in {temp} "
        f"({_filesystem(temp)}), WAL, synchronous=NORMAL. Its create counts the tasks kept, so "
        f"a longer TTL lowers its figures.",
        "- A task counts when its completed result is read; its latency runs from the "
        "tools/call sent to that read. CPU: server utime+stime per call or per task.",
        "",
        "| store | workload | per s (median) | runs | HTTP req/s | p50 ms | p99 ms "
        "| tasks/get per task | server CPU µs | client cores |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for store in STORES:
        for workload in WORKLOADS:
            mine = [r for r in runs if r.store == store and r.workload == workload]
            if not mine:
                continue
            good = [r for r in mine if not r.failure]
            if not good:
                lines.append(
                    f"| {store} | {LABELS[workload]} | FAILED: {mine[0].failure} | | | | | | | |"
                )
                continue
            task = workload in TASK_WORKLOADS
            polls = f"{_median(good, 'polls'):.2f}" if task else "—"
            lines.append(
                f"| {store} | {LABELS[workload]} | **{_median(good, 'rate'):,.0f}** "
                f"{'tasks' if task else 'calls'} | {', '.join(f'{r.rate:,.0f}' for r in good)} | "
                f"{_median(good, 'requests_per_s'):,.0f} | {_median(good, 'p50_ms'):.2f} | "
                f"{_median(good, 'p99_ms'):.2f} | {polls} | {_median(good, 'server_cpu_us'):,.0f} "
                f"| {_median(good, 'client_cpu'):.2f} |"
            )
    lines += [
        "",
        "Ratio tasks/s : inline tools/call/s (medians, same server, same client):",
        "",
        *_ratios(settings, ok),
    ]
    failed = [run for run in runs if run.workload == "server"]
    if failed:
        lines += ["", "Servers that failed:", ""]
        lines += [f"- {run.store}, repetition {run.rep + 1}: {run.failure}" for run in failed]
    if ok:
        lines += [
            "",
            f"Other processes used a median of {_median(ok, 'other_cpu'):.2f} and at most "
            f"{max(r.other_cpu for r in ok):.2f} cores during the kept runs "
            f"({sum(1 for r in runs if r.attempts > 1)} run(s) repeated for noise above "
            f"{settings.noise_limit} cores).",
        ]
    if notes:
        lines += ["", f"The servers logged {len(notes)} line(s); the first: `{notes[0][:200]}`"]
    return "\n".join(lines) + "\n"


def _has_uvloop() -> bool:
    return importlib.util.find_spec("uvloop") is not None


def main() -> int:
    settings = Settings.from_env()
    if not (PROJECT_VENV / "bin" / "mcpkit").exists():
        raise BenchError(f"missing: {PROJECT_VENV}/bin/mcpkit (make venv)")
    if TASKSET and (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {int(CLIENT_CPU)})  # the client's CPU is wrk's
    started = datetime.datetime.now()
    log(
        f"tasks benchmark: {settings.reps} repetition(s), stores {', '.join(STORES)}, "
        f"runs of {settings.duration} s, task TTL {settings.ttl:g} s"
        + ("" if settings.wrk else " (wrk missing: no wrk baseline)")
    )
    runs: list[Run] = []
    notes: list[str] = []
    for rep in range(settings.reps):
        order = STORES if rep % 2 == 0 else tuple(reversed(STORES))
        log(f"repetition {rep + 1}/{settings.reps}: {', '.join(order)}")
        for store in order:
            store_runs, store_notes = measure_store(store, rep, settings)
            runs.extend(store_runs)
            notes.extend(store_notes)
    text = report(settings, runs, notes, started)
    print(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{started:%Y-%m-%d}-tasks{'-quick' if settings.quick else ''}.md"
    path.write_text(text)
    log(f"written: {path.relative_to(RESULTS.parent.parent)}")
    return 1 if any(run.failure for run in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
