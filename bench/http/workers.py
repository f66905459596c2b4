"""``tools/call`` throughput of ``mcpkit serve --workers N`` (1, 2 and 4) on this machine, and of
two single-worker servers behind HAProxy (issue 20), with the CPU each request costs.

Run from the project root as ``python -m bench.http.workers`` (``bench/http/setup.sh`` installs
``wrk`` and ``haproxy``; ``QUICK=1`` for a smoke run).

Targets, all ``mcpkit serve bench/http/app_mcpkit.py`` with the ``async def add`` handler
(``BENCH_VARIANT=async``), stateless:

* ``1 worker``, ``2 workers``, ``4 workers``: ``mcpkit serve ... --workers N``.  With N > 1 a
  supervisor binds N sockets to the port with ``SO_REUSEPORT`` (Linux; one shared socket
  elsewhere) and runs N ``python -m mcpkit serve`` children, each on its own (the kernel
  spreads new connections over them); ``--workers 1`` is one process, no supervisor;
* ``HAProxy, 2 nodes x 1 worker``: two ``mcpkit serve ... --workers 1`` on their own ports
  behind ``haproxy`` (HTTP mode, ``balance roundrobin``, no stickiness, no
  ``http-buffer-request``, ``http-reuse safe``, one thread, no logging, long ``timeout
  server``/``tunnel`` for SSE), configured in a temporary directory and started on a free
  loopback port by this script, which stops it by its PID.

Nothing is pinned (``run.py`` pins its one server to CPU 0 and wrk to CPU 1): with several
server processes on a 2-core machine, the workers, HAProxy and wrk all share both cores, so
wrk competes with the workers, and a 1-worker figure here is not ``run.py``'s pinned one.

CPU per request: utime+stime over the measured run, divided by the responses, summed over
every server process: the process ``mcpkit serve`` started as, and all its descendants (the
supervisor and its workers; found by their parent PIDs in ``/proc``, as this kernel has no
``/proc/<pid>/task/<tid>/children``).  A run during which the set of server processes changed
fails.  HAProxy's own CPU is reported separately, and the split of the server CPU over the
server processes (busiest first) shows how evenly the kernel or HAProxy spread the load.

Workload: 2026-07-28 ``tools/call add(2, 3)`` (``mcp_post.lua``, the request ``run.py``
sends), concurrency 16 and 64.  Method as ``run.py``'s: targets in turn, order reversed on
every other repetition; each cell the median of ``BENCH_REPS`` runs of ``BENCH_DURATION``
seconds, each after a correctness probe and a ``BENCH_WARMUP``-second warm-up; every response
checked 2xx with the result; a run during which other processes (the machine's busy time less
the servers, HAProxy and wrk) used more than ``BENCH_NOISE_LIMIT`` cores is measured again
(``BENCH_NOISE_RETRIES`` times at most) and the quietest attempt kept.

Environment: as ``run.py`` (``BENCH_REPS``, ``BENCH_WARMUP``, ``BENCH_DURATION``, ``QUICK``,
``BENCH_TAG``, ``BENCH_NOISE_LIMIT``, ``BENCH_NOISE_RETRIES``), ``BENCH_CONCURRENCY`` (default
``16,64`` here) and ``BENCH_ONLY`` (target keys: ``w1``, ``w2``, ``w4``, ``haproxy``).  Writes
``bench/results/<date>-workers.md`` (``<date>-workers-quick.md`` for a quick run).
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Final

from bench.http.common import (
    CLK_TCK,
    EXPECT_CALL,
    LOG_DIR,
    PROJECT_VENV,
    RESULTS,
    REV_2026,
    BenchError,
    RunningServer,
    ServerSpec,
    children_cpu_seconds,
    free_port,
    log,
    machine,
    machine_busy_seconds,
    probe,
    quietest,
    require_tools,
    run_wrk,
    start_server,
    versions,
)
from bench.http.run import Cell, Run, Settings, summarise

VARIANT: Final = "async"
CONCURRENCIES: Final = (16, 64)
HAPROXY: Final = "/usr/sbin/haproxy"  # Debian's; else the one on PATH


@dataclass(frozen=True)
class Target:
    """One deployment: ``nodes`` ``mcpkit serve --workers N`` servers, behind HAProxy when
    there are several."""

    key: str
    label: str
    workers: int
    nodes: int = 1

    @property
    def processes(self) -> int:
        """The server processes it runs (a supervisor only with more than one worker)."""
        per_node = self.workers + 1 if self.workers > 1 else 1
        return per_node * self.nodes

    @property
    def proxied(self) -> bool:
        return self.nodes > 1


TARGETS: Final = (
    Target("w1", "1 worker", 1),
    Target("w2", "2 workers", 2),
    Target("w4", "4 workers", 4),
    Target("haproxy", "HAProxy, 2 nodes x 1 worker", 1, nodes=2),
)


@dataclass(frozen=True)
class WorkersSpec(ServerSpec):
    """``mcpkit serve bench/http/app_mcpkit.py --workers N``."""

    workers: int = 1
    node: int = 0
    allowed_hosts: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"{super().key}-w{self.workers}-n{self.node}"

    def command(self, port: int) -> list[str]:
        hosts = [arg for name in self.allowed_hosts for arg in ("--allowed-host", name)]
        return [*super().command(port), "--workers", str(self.workers), *hosts]


# --- process trees ---------------------------------------------------------------------------


def _processes() -> dict[int, tuple[int, float]]:
    """Every process on the machine: PID -> (parent PID, utime + stime in seconds)."""
    out: dict[int, tuple[int, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:  # gone meanwhile
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        # fields[0] is field 3 (state): the parent is field 4, utime and stime 14 and 15.
        out[int(entry)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / CLK_TCK)
    return out


def tree_cpu(roots: Sequence[int]) -> dict[int, float]:
    """CPU seconds so far of each process in the trees rooted at ``roots`` (roots included)."""
    table = _processes()
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    out: dict[int, float] = {}
    stack = [pid for pid in roots if pid in table]
    while stack:
        pid = stack.pop()
        out[pid] = table[pid][1]
        stack.extend(children.get(pid, ()))
    return out


def tree_rss_kib(roots: Sequence[int]) -> int:
    total = 0
    for pid in tree_cpu(roots):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return total


# --- HAProxy ---------------------------------------------------------------------------------


def haproxy_binary() -> str | None:
    if os.access(HAPROXY, os.X_OK):
        return HAPROXY
    return shutil.which("haproxy")


def haproxy_config(port: int, backends: Sequence[int]) -> str:
    servers = "\n".join(f"    server node{i + 1} 127.0.0.1:{p}" for i, p in enumerate(backends))
    return f"""\
global
    nbthread 1
    maxconn 4096

defaults
    mode http
    no log
    no option http-buffer-request
    http-reuse safe
    timeout connect 5s
    timeout client 60s
    timeout server 1h
    timeout tunnel 1h
    timeout http-keep-alive 60s

frontend mcp
    bind 127.0.0.1:{port}
    default_backend nodes

backend nodes
    balance roundrobin
{servers}
"""


class HAProxy:
    """``haproxy -db -f <cfg>`` in front of ``backends``, on a free loopback port."""

    def __init__(self, binary: str, port: int, backends: Sequence[int]) -> None:
        self.port = port
        self._dir = tempfile.TemporaryDirectory(prefix="bench-haproxy-")
        config = Path(self._dir.name) / "haproxy.cfg"
        config.write_text(haproxy_config(self.port, backends))
        LOG_DIR.mkdir(parents=True, exist_ok=True)
        self._log: IO[bytes] = (LOG_DIR / "haproxy.log").open("wb")
        check = subprocess.run([binary, "-c", "-q", "-f", str(config)], capture_output=True)
        if check.returncode != 0:
            self._cleanup()
            raise BenchError(f"haproxy -c: {(check.stdout + check.stderr).decode()[:500]}")
        self.process = subprocess.Popen(
            [binary, "-db", "-f", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 10
        while True:
            if self.process.poll() is not None:
                self._cleanup()
                raise BenchError(f"haproxy exited with {self.process.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise BenchError("haproxy did not listen within 10 s") from None
                time.sleep(0.05)

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        """SIGTERM to haproxy's PID, SIGKILL after 10 s."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        self._cleanup()

    def _cleanup(self) -> None:
        self._log.close()
        self._dir.cleanup()


# --- one deployment --------------------------------------------------------------------------


@dataclass
class Deployment:
    target: Target
    servers: list[RunningServer]
    proxy: HAProxy | None = None
    idle_rss_kib: int = 0

    @property
    def url(self) -> str:
        if self.proxy is not None:
            return f"http://127.0.0.1:{self.proxy.port}/mcp"
        return self.servers[0].url

    def server_cpu(self) -> dict[int, float]:
        return tree_cpu([s.pid for s in self.servers])

    def proxy_cpu(self) -> float:
        return sum(tree_cpu([self.proxy.pid]).values()) if self.proxy else 0.0

    def alive(self) -> bool:
        servers = all(s.process.poll() is None for s in self.servers)
        return servers and (self.proxy is None or self.proxy.process.poll() is None)

    def stop(self) -> None:
        if self.proxy is not None:
            self.proxy.stop()
        for server in self.servers:
            server.stop()


def deploy(target: Target, haproxy: str | None) -> Deployment:
    """Start ``target``'s servers (unpinned) and its HAProxy; return once every server
    process exists, 2 s later (the workers import the app), and every node answers a
    ``tools/call`` (each cell then probes through HAProxy too)."""
    deployment = Deployment(target, [])
    # Behind HAProxy the servers see its address in ``Host`` (127.0.0.1 with HAProxy's port,
    # not theirs): they are told to accept it, as a deployment names its public host.
    proxy_port = free_port() if target.proxied else 0
    hosts = ("127.0.0.1",) if target.proxied else ()
    try:
        for node in range(target.nodes):
            spec = WorkersSpec(
                "mcpkit", VARIANT, workers=target.workers, node=node, allowed_hosts=hosts
            )
            deployment.servers.append(start_server(spec, pin=False))
        deadline = time.monotonic() + 30
        while len(deployment.server_cpu()) < target.processes:
            if time.monotonic() > deadline:
                raise BenchError(
                    f"{target.key}: {len(deployment.server_cpu())} of {target.processes} "
                    f"server processes after 30 s"
                )
            time.sleep(0.05)
        if target.proxied:
            if haproxy is None:
                raise BenchError("haproxy is not installed (bench/http/setup.sh installs it)")
            deployment.proxy = HAProxy(haproxy, proxy_port, [s.port for s in deployment.servers])
        # Every worker imports the app afresh: let them all finish before the first request
        # (the supervisor's socket listens before any child accepts).
        time.sleep(2.0)
        deployment.idle_rss_kib = tree_rss_kib([s.pid for s in deployment.servers])
        for server in deployment.servers:
            probe(server.url, REV_2026, "tools/call", EXPECT_CALL)
    except BaseException:
        deployment.stop()
        raise
    return deployment


@dataclass
class WorkersRun(Run):
    proxy_cpu_us: float = 0.0  # HAProxy's CPU per response (0 without HAProxy)
    split: tuple[float, ...] = ()  # shares of the server CPU per server process, busiest first


def measured_run(deployment: Deployment, cell: Cell, rep: int, settings: Settings) -> WorkersRun:
    run = WorkersRun(cell, rep)
    servers0, proxy0 = deployment.server_cpu(), deployment.proxy_cpu()
    busy0, wrk0 = machine_busy_seconds(), children_cpu_seconds()
    result = run_wrk(
        deployment.url, cell.rev, cell.method, cell.conc, settings.duration, cell.expect, pin=False
    )
    servers1, proxy1 = deployment.server_cpu(), deployment.proxy_cpu()
    busy1, wrk1 = machine_busy_seconds(), children_cpu_seconds()
    run.failure = result.failure
    if set(servers0) != set(servers1) or not deployment.alive():
        run.failure = (
            f"server processes changed during the run: {sorted(servers0)} -> {sorted(servers1)}"
        )
    run.requests = result.requests
    run.rps = result.rps
    run.p50_ms = result.p50_ms
    run.p99_ms = result.p99_ms
    deltas = [servers1[pid] - servers0[pid] for pid in servers1 if pid in servers0]
    server_cpu = sum(deltas)
    proxy_cpu = proxy1 - proxy0
    if result.requests:
        run.cpu_us = server_cpu / result.requests * 1e6
        run.proxy_cpu_us = proxy_cpu / result.requests * 1e6
    if server_cpu > 0:
        run.split = tuple(sorted((d / server_cpu for d in deltas), reverse=True))
    if result.duration_s:
        run.client_cpu = (wrk1 - wrk0) / result.duration_s
        other = (busy1 - busy0) - server_cpu - proxy_cpu - (wrk1 - wrk0)
        run.other_cpu = max(0.0, other / result.duration_s)
    return run


def measure_cell(deployment: Deployment, cell: Cell, rep: int, settings: Settings) -> WorkersRun:
    """As ``run.measure_cell``: probe, warm up, one measured run, measured again (at most
    ``settings.noise_retries`` times) while other processes used more than
    ``settings.noise_limit`` cores; the quietest attempt is kept."""
    try:
        body_bytes = probe(deployment.url, cell.rev, cell.method, cell.expect)
        if settings.warmup > 0:
            warm = run_wrk(
                deployment.url,
                cell.rev,
                cell.method,
                cell.conc,
                settings.warmup,
                cell.expect,
                pin=False,
            )
            if warm.failure:
                raise BenchError(f"warm-up: {warm.failure}")

        def measure() -> WorkersRun:
            run = measured_run(deployment, cell, rep, settings)
            run.body_bytes = body_bytes
            return run

        return quietest(measure, settings.noise_limit, settings.noise_retries)
    except BenchError as error:
        return WorkersRun(cell, rep, failure=str(error).splitlines()[0][:200])


def measure_target(
    target: Target,
    concurrencies: Sequence[int],
    rep: int,
    settings: Settings,
    haproxy: str | None,
) -> tuple[list[WorkersRun], int]:
    """The target's cells in this repetition, and its idle RSS (KiB, all server processes)."""
    cells = [Cell(target.key, VARIANT, REV_2026, "tools/call", conc) for conc in concurrencies]
    try:
        deployment = deploy(target, haproxy)
    except BenchError as error:
        failure = f"start: {str(error).splitlines()[0][:200]}"
        return [WorkersRun(cell, rep, failure=failure) for cell in cells], 0
    runs = []
    try:
        for cell in cells:
            run = measure_cell(deployment, cell, rep, settings)
            runs.append(run)
            status = f"FAILED: {run.failure}" if run.failure else ""
            split = "/".join(f"{s:.0%}" for s in run.split)
            proxy = f" + haproxy {run.proxy_cpu_us:4.0f}" if target.proxied else ""
            log(
                f"  {target.label:28} c={cell.conc:<3} {run.rps:8.0f} req/s p50 "
                f"{run.p50_ms:6.2f} p99 {run.p99_ms:6.2f} ms cpu {run.cpu_us:4.0f}{proxy} µs "
                f"[{split}] (wrk {run.client_cpu:.2f}, others {run.other_cpu:.2f} cores) {status}"
            )
    finally:
        deployment.stop()
    return runs, deployment.idle_rss_kib


# --- report ----------------------------------------------------------------------------------


@dataclass
class Results:
    settings: Settings
    targets: Sequence[Target]
    concurrencies: Sequence[int]
    runs: list[WorkersRun] = field(default_factory=list)
    rss: dict[str, list[int]] = field(default_factory=dict)

    def kept(self, cell: Cell) -> list[WorkersRun]:
        return [r for r in self.runs if r.cell == cell and not r.failure]


def _split(runs: Sequence[WorkersRun]) -> str:
    """The median share of each server process (busiest first), e.g. ``51/49%``."""
    splits = [r.split for r in runs if r.split]
    if not splits:
        return "—"
    width = max(len(s) for s in splits)
    shares = [statistics.median(s[i] if i < len(s) else 0.0 for s in splits) for i in range(width)]
    return "/".join(f"{share * 100:.0f}" for share in shares) + "%"


def _busiest(runs: Sequence[WorkersRun]) -> str:
    """The busiest server process's share of the server CPU in each run, e.g. ``100, 52%``."""
    shares = [f"{r.split[0] * 100:.0f}" for r in runs if r.split]
    return ", ".join(shares) + "%" if shares else "—"


def render(results: Results, started: datetime.datetime, haproxy: str | None) -> str:
    settings = results.settings
    summaries = summarise(results.runs)
    info = machine()
    ours = versions(PROJECT_VENV / "bin" / "python", ["mcpkit", "uvicorn", "httptools"])
    haproxy_version = "absent"
    if haproxy:
        out = subprocess.run([haproxy, "-v"], capture_output=True, text=True, check=False)
        haproxy_version = out.stdout.splitlines()[0].split(" - ")[0] if out.stdout else "?"
    kept = [r for r in results.runs if not r.failure]
    other_median = f"{statistics.median(r.other_cpu for r in kept):.2f}" if kept else "?"
    other_max = f"{max(r.other_cpu for r in kept):.2f}" if kept else "?"
    wrk_max = f"{max(r.client_cpu for r in kept):.2f}" if kept else "?"
    repeated = sum(1 for r in results.runs if r.attempts > 1)
    quick = " (QUICK smoke run: not for comparison)" if settings.quick else ""
    lines = [
        f"# mcpkit serve --workers N and HAProxy: tools/call throughput and CPU per request, "
        f"{started:%Y-%m-%d}{quick}",
        "",
        f"- Machine: {info['nproc']} CPUs, {info['cpu']}, {info['memory']}, Linux "
        f"{info['kernel']}; {info['wrk']}; {haproxy_version}. **Nothing pinned**: the server "
        f"processes, HAProxy and wrk share both cores, so wrk competes with the workers for "
        f"them (run.py pins its one server to CPU 0 and wrk to CPU 1; its 1-worker figures are "
        f"not these).",
        f"- mcpkit {ours.get('mcpkit')} (commit {info['commit']}), Python {ours.get('python')}, "
        f"uvicorn {ours.get('uvicorn')} with httptools {ours.get('httptools')} on asyncio: "
        f"`BENCH_VARIANT=async mcpkit serve bench/http/app_mcpkit.py --workers N` (N > 1: a "
        f"supervisor and N children, each on its own `SO_REUSEPORT` socket; N = 1: one "
        f"process).",
        "- HAProxy: two `mcpkit serve ... --workers 1` on their own ports behind `haproxy -db "
        "-f cfg` on a free loopback port: `mode http`, `balance roundrobin`, no stickiness, "
        "`no option http-buffer-request`, `http-reuse safe`, `nbthread 1`, no logging, "
        "`timeout server`/`tunnel` 1 h (SSE), no health checks.",
        f"- Method: bench/http/workers.py with run.py's helpers; one deployment at a time on "
        f"127.0.0.1, order reversed every other repetition; median of {settings.reps} run(s) "
        f"of {settings.duration} s after a {settings.warmup} s warm-up (`wrk -t1`, "
        f"bench/http/mcp_post.lua, 2026-07-28 `tools/call add`, async handler); every response "
        f"checked 2xx with the expected result. Server CPU = utime+stime of every server "
        f"process (each `mcpkit serve` and all its descendants: supervisor and workers) ÷ "
        f"responses; HAProxy's CPU separately; total = both. Split = each server process's "
        f"share of the server CPU (medians, busiest first; the supervisor is the ~0% one).",
        f"- Noise: other processes used a median of {other_median} and at most {other_max} "
        f"cores during the kept runs ({repeated} run(s) repeated for noise above "
        f"{settings.noise_limit} cores); wrk used at most {wrk_max} cores.",
        "",
        "| server | server processes | c | req/s | runs | vs 1 worker | p50 ms | p99 ms "
        "| server CPU µs/req | HAProxy CPU µs/req | total CPU µs/req | CPU split (medians) "
        "| busiest process, per run | wrk cores | RSS idle MiB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for conc in results.concurrencies:
        base = summaries.get(Cell("w1", VARIANT, REV_2026, "tools/call", conc))
        base_rps = base.rps if base is not None and not base.failure else None
        for target in results.targets:
            cell = Cell(target.key, VARIANT, REV_2026, "tools/call", conc)
            found = summaries.get(cell)
            if found is None:
                continue
            processes = (
                f"{target.nodes} x 1"
                if target.proxied
                else (f"1 + {target.workers}" if target.workers > 1 else "1")
            )
            if found.failure:
                lines.append(
                    f"| {target.label} | {processes} | {conc} | **FAILED** ({found.failure}) "
                    + "| " * 11
                    + "|"
                )
                continue
            kept_runs = results.kept(cell)
            each = ", ".join(f"{r.rps:,.0f}" for r in kept_runs)
            proxy_us = statistics.median(r.proxy_cpu_us for r in kept_runs)
            total_us = statistics.median(r.cpu_us + r.proxy_cpu_us for r in kept_runs)
            wrk_cores = statistics.median(r.client_cpu for r in kept_runs)
            rss = results.rss.get(target.key, [])
            rss_text = f"{statistics.median(rss) / 1024:.1f}" if rss else "—"
            vs = f"{found.rps / base_rps:.2f}x" if base_rps else "—"
            lines.append(
                f"| {target.label} | {processes} | {conc} | **{found.rps:,.0f}** | {each} | {vs} "
                f"| {found.p50_ms:.2f} | {found.p99_ms:.2f} | {found.cpu_us:,.0f} "
                f"| {f'{proxy_us:,.0f}' if target.proxied else '—'} | {total_us:,.0f} "
                f"| {_split(kept_runs)} | {_busiest(kept_runs)} | {wrk_cores:.2f} | {rss_text} |"
            )
    lines += ["", *notes(results)]
    return "\n".join(lines) + "\n"


ONE_PROCESS: Final = 0.9
"""A run whose busiest server process did this share of the server CPU or more was, in
effect, served by one process."""


def notes(results: Results) -> list[str]:
    """What the CPU split says about how the connections were spread."""
    kept = [r for r in results.runs if not r.failure and r.split]
    shared = [r for r in kept if _target(r.cell.framework).workers > 1]
    lines = []
    if shared:
        lopsided = sum(1 for r in shared if r.split[0] >= ONE_PROCESS)
        lines.append(
            f"- Spread over `--workers` processes: in {lopsided} of {len(shared)} kept runs "
            f"with several workers, one process did at least {ONE_PROCESS:.0%} of the "
            f"server's work (it had accepted all, or nearly all, of wrk's connections). Each "
            f"worker listens on its own `SO_REUSEPORT` socket, so the kernel spreads new "
            f"connections over them by their addresses; the medians include any lopsided "
            f"run, and the `runs` and `busiest process, per run` columns show which they were."
        )
    for target in results.targets:
        if target.workers > 1:
            active = [
                sum(1 for share in r.split if share >= 0.05)
                for r in shared
                if r.cell.framework == target.key
            ]
            lines.append(
                f"- {target.label}: processes doing ≥ 5% of the server's work, per run: "
                f"{', '.join(map(str, active)) or '—'} (of {target.workers})."
            )
    proxied = [r for r in kept if _target(r.cell.framework).proxied]
    if proxied:
        busiest = max(r.split[0] for r in proxied)
        lines.append(
            f"- HAProxy's round robin spread the requests over its two nodes in every run (the "
            f"busier node did at most {busiest:.0%} of the servers' work); its own CPU is paid "
            f"on the same two cores."
        )
    return lines


def _target(key: str) -> Target:
    return next(t for t in TARGETS if t.key == key)


def main() -> int:
    settings = Settings.from_env()
    concurrencies = settings.concurrencies if os.environ.get("BENCH_CONCURRENCY") else CONCURRENCIES
    targets = [t for t in TARGETS if not settings.only or t.key in settings.only]
    if not targets:
        raise BenchError(f"BENCH_ONLY must name targets among {', '.join(t.key for t in TARGETS)}")
    require_tools({"mcpkit": True})
    haproxy = haproxy_binary()
    if haproxy is None and any(t.proxied for t in targets):
        raise BenchError("missing: haproxy (bench/http/setup.sh)")
    started = datetime.datetime.now()
    results = Results(settings, targets, concurrencies)
    total = len(targets) * len(concurrencies) * settings.reps
    log(
        f"workers benchmark: {len(targets)} deployments, {total} runs of {settings.duration} s "
        f"(+{settings.warmup} s warm-up), {settings.reps} repetition(s), nothing pinned"
    )
    for rep in range(settings.reps):
        ordered = targets if rep % 2 == 0 else list(reversed(targets))
        log(f"repetition {rep + 1}/{settings.reps}: {', '.join(t.key for t in ordered)}")
        for target in ordered:
            runs, rss = measure_target(target, concurrencies, rep, settings, haproxy)
            results.runs.extend(runs)
            if rss:
                results.rss.setdefault(target.key, []).append(rss)
    text = render(results, started, haproxy)
    print(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    stem = (
        f"{started:%Y-%m-%d}-workers"
        + ("-quick" if settings.quick else "")
        + (f"-{settings.tag}" if settings.tag else "")
    )
    path = RESULTS / f"{stem}.md"
    path.write_text(text)
    raw = {
        "settings": asdict(settings),
        "runs": [asdict(r) for r in results.runs],
        "rss_kib": results.rss,
    }
    (RESULTS / f"{stem}.json").write_text(json.dumps(raw, indent=1, default=str) + "\n")
    log(f"written: {path.relative_to(RESULTS.parent.parent)} (and .json)")
    return 1 if any(r.failure for r in results.runs) else 0


if __name__ == "__main__":
    sys.exit(main())
