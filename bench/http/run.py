"""Side-by-side HTTP benchmark: mcpkit against the official SDK (mcp 2.3.0) and fastmcp 4.1.6.

Run from the project root as ``python -m bench.http.run`` (``make bench`` runs
``bench/http/setup.sh`` first, which makes the peers' venv and installs ``wrk``).

Method (issue 7): one server at a time on 127.0.0.1, uvicorn with one worker, pinned to CPU 0;
``wrk -t1`` with ``mcp_post.lua`` on CPU 1.  The order of the servers is reversed on every other
repetition.  Each cell is the median of ``BENCH_REPS`` runs of ``BENCH_DURATION`` seconds, each
after a ``BENCH_WARMUP``-second warm-up at the same concurrency and a correctness probe.  A run
with any non-2xx response, a body without the expected result, or a socket error or timeout
fails its cell.  Server CPU per request is the utime+stime delta of the server process over the
measured run divided by the responses; idle RSS is read after start, before any request, and
peak RSS is ``VmHWM`` when the server stops.

Cells: ``tools/call add(2, 3)`` on 2026-07-28 and 2025-11-25 with a ``def`` and an ``async def``
handler at concurrency 1, 16 and 64; ``tools/list`` and ``tools/call`` with 101 tools at 16;
a raw ASGI app under mcpkit's uvicorn settings (the ceiling) at 16; and the idle RSS of
``examples/inventory.py``.

Environment: ``BENCH_REPS`` (5), ``BENCH_WARMUP`` (2 s), ``BENCH_DURATION`` (5 s),
``QUICK=1`` (a smoke run: 1 repetition, 1 s warm-up, 2 s runs; written to
``results/<date>-quick.md`` and never to ``latest.md``), ``BENCH_ONLY`` (comma-separated
frameworks or server keys, e.g. ``mcpkit,ceiling`` or ``mcp-async``), ``BENCH_CONCURRENCY``
(e.g. ``16``), ``BENCH_PEERS_STACK`` (``plain``: h11 + asyncio as in the peers survey, or
``fast``: httptools + uvloop), ``BENCH_TAG`` (suffix of the result file names),
``BENCH_NOISE_LIMIT`` (0.25) and ``BENCH_NOISE_RETRIES`` (2): the machine is shared, so a run
during which other processes used more than 0.25 cores (``/proc/stat`` less the server and
wrk) is measured again, at most twice, and the quietest attempt kept.
"""

from __future__ import annotations

import datetime
import json
import os
import statistics
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Final

from bench.http.common import (
    EXPECT_CALL,
    EXPECT_LIST,
    PEERS_STACK,
    PEERS_VENV,
    PROJECT_VENV,
    RESULTS,
    REV_2025,
    REV_2026,
    BenchError,
    RunningServer,
    ServerSpec,
    children_cpu_seconds,
    env_int,
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

FRAMEWORKS: Final = ("mcpkit", "mcp", "fastmcp")
LABELS: Final = {"mcpkit": "mcpkit", "mcp": "mcp", "fastmcp": "fastmcp", "ceiling": "raw ASGI"}
HANDLERS: Final = ("async", "def")
REVISIONS: Final = (REV_2026, REV_2025)
CONCURRENCIES: Final = (1, 16, 64)
EXAMPLE: Final = ServerSpec("mcpkit", "example", "/inventory/mcp")
EXAMPLE_EXPECT: Final = '"name":"inventory.search"'


@dataclass(frozen=True)
class Cell:
    """One measured workload on one server."""

    framework: str
    variant: str  # def | async | tools101 | raw
    rev: str
    method: str
    conc: int
    authorization: str = ""  # the Authorization header of every request (bench/http/oauth.py)

    @property
    def spec(self) -> ServerSpec:
        return ServerSpec(self.framework, self.variant)

    @property
    def expect(self) -> str:
        return EXPECT_LIST if self.method == "tools/list" else EXPECT_CALL

    @property
    def workload(self) -> tuple[str, str, str, int]:
        """The same workload on another server has the same key (framework left out)."""
        return (self.variant, self.rev, self.method, self.conc)

    @property
    def label(self) -> str:
        if self.variant == "raw":
            return "raw ASGI ceiling: read body, fixed 100-byte JSON"
        if self.variant == "tools101":
            what = "tools/list" if self.method == "tools/list" else "tools/call add"
            return f"{what}, 101 tools, {self.rev}, def"
        bearer = ", Bearer JWT" if self.authorization else ""
        return f"tools/call add, {self.rev}, {self.variant}{bearer}"


@dataclass
class Run:
    cell: Cell
    rep: int
    rps: float = 0.0
    p50_ms: float = 0.0
    p99_ms: float = 0.0
    cpu_us: float = 0.0
    client_cpu: float = 0.0  # wrk's CPU over the run, in cores
    other_cpu: float = 0.0  # CPU of every other process on the machine over the run, in cores
    requests: int = 0
    body_bytes: int = 0
    attempts: int = 1
    failure: str | None = None


@dataclass
class ServerRun:
    key: str
    rep: int
    idle_rss_kib: int = 0
    peak_rss_kib: int = 0
    failure: str | None = None


@dataclass
class Settings:
    reps: int
    warmup: int
    duration: int
    quick: bool
    only: tuple[str, ...]
    concurrencies: tuple[int, ...]
    tag: str
    noise_limit: float
    noise_retries: int

    @staticmethod
    def from_env() -> Settings:
        quick = os.environ.get("QUICK", "") not in ("", "0")
        only = tuple(x.strip() for x in os.environ.get("BENCH_ONLY", "").split(",") if x.strip())
        conc = os.environ.get("BENCH_CONCURRENCY", "")
        concurrencies = tuple(int(c) for c in conc.split(",") if c.strip()) or CONCURRENCIES
        return Settings(
            # Five short repetitions rather than three long ones: this shared host's speed drifts
            # by up to 40% over minutes, and a median of five spread over the run resists that.
            reps=env_int("BENCH_REPS", 1 if quick else 5),
            warmup=env_int("BENCH_WARMUP", 1 if quick else 2),
            duration=env_int("BENCH_DURATION", 2 if quick else 5),
            quick=quick,
            only=only,
            concurrencies=concurrencies,
            tag=os.environ.get("BENCH_TAG", ""),
            noise_limit=float(os.environ.get("BENCH_NOISE_LIMIT", "0.25")),
            noise_retries=env_int("BENCH_NOISE_RETRIES", 2),
        )


def plan(settings: Settings) -> list[tuple[ServerSpec, list[Cell]]]:
    """Servers in their base order, each with its cells."""
    servers: list[tuple[ServerSpec, list[Cell]]] = []
    for variant in HANDLERS:
        for framework in FRAMEWORKS:
            cells = [
                Cell(framework, variant, rev, "tools/call", conc)
                for rev in REVISIONS
                for conc in settings.concurrencies
            ]
            servers.append((ServerSpec(framework, variant), cells))
    for framework in FRAMEWORKS:
        cells = [
            Cell(framework, "tools101", REV_2026, method, 16)
            for method in ("tools/list", "tools/call")
        ]
        servers.append((ServerSpec(framework, "tools101"), cells))
    servers.append(
        (ServerSpec("ceiling", "raw"), [Cell("ceiling", "raw", REV_2026, "tools/call", 16)])
    )
    if settings.only:
        wanted = set(settings.only)
        servers = [(s, c) for s, c in servers if s.framework in wanted or s.key in wanted]
    return servers


def measure_cell(server: RunningServer, cell: Cell, rep: int, settings: Settings) -> Run:
    """Probe, warm up, then one measured run; a run during which other processes used more
    than ``settings.noise_limit`` cores is measured again (``settings.noise_retries`` times at
    most) and the quietest attempt is kept."""
    try:
        body_bytes = probe(
            server.url, cell.rev, cell.method, cell.expect, authorization=cell.authorization
        )
        if settings.warmup > 0:
            warm = run_wrk(
                server.url,
                cell.rev,
                cell.method,
                cell.conc,
                settings.warmup,
                cell.expect,
                authorization=cell.authorization,
            )
            if warm.failure:
                raise BenchError(f"warm-up: {warm.failure}")

        def measure() -> Run:
            run = measured_run(server, cell, rep, settings)
            run.body_bytes = body_bytes
            return run

        return quietest(measure, settings.noise_limit, settings.noise_retries)
    except BenchError as error:
        return Run(cell, rep, failure=str(error).splitlines()[0][:200])


def measured_run(server: RunningServer, cell: Cell, rep: int, settings: Settings) -> Run:
    run = Run(cell, rep)
    before, busy0, wrk0 = server.sample(), machine_busy_seconds(), children_cpu_seconds()
    result = run_wrk(
        server.url,
        cell.rev,
        cell.method,
        cell.conc,
        settings.duration,
        cell.expect,
        authorization=cell.authorization,
    )
    after, busy1, wrk1 = server.sample(), machine_busy_seconds(), children_cpu_seconds()
    run.failure = result.failure
    run.requests = result.requests
    run.rps = result.rps
    run.p50_ms = result.p50_ms
    run.p99_ms = result.p99_ms
    server_cpu = after.cpu_seconds - before.cpu_seconds
    if result.requests:
        run.cpu_us = server_cpu / result.requests * 1e6
    if result.duration_s:
        run.client_cpu = (wrk1 - wrk0) / result.duration_s
        other = (busy1 - busy0) - server_cpu - (wrk1 - wrk0)
        run.other_cpu = max(0.0, other / result.duration_s)
    return run


def measure_server(
    spec: ServerSpec, cells: Sequence[Cell], rep: int, settings: Settings
) -> tuple[ServerRun, list[Run]]:
    server_run = ServerRun(spec.key, rep)
    try:
        server = start_server(spec)
    except BenchError as error:
        server_run.failure = str(error).splitlines()[0][:200]
        return server_run, [Run(c, rep, failure=f"server: {server_run.failure}") for c in cells]
    runs: list[Run] = []
    try:
        time.sleep(0.5)
        idle = server.sample()
        server_run.idle_rss_kib = idle.rss_kib
        for cell in cells:
            run = measure_cell(server, cell, rep, settings)
            runs.append(run)
            status = f"FAILED: {run.failure}" if run.failure else ""
            log(
                f"  {cell.framework:8} {cell.label:44} c={cell.conc:<3} {run.rps:9.0f} req/s "
                f"p50 {run.p50_ms:7.2f} p99 {run.p99_ms:7.2f} ms cpu {run.cpu_us:7.0f} µs "
                f"(wrk {run.client_cpu:.2f}, others {run.other_cpu:.2f} cores) {status}"
            )
        server_run.peak_rss_kib = server.sample().hwm_kib
        if server.process.poll() is not None:
            server_run.failure = f"exited with {server.process.returncode}"
    finally:
        server.stop()
    return server_run, runs


def measure_example(rep: int) -> ServerRun:
    """Idle RSS of ``mcpkit serve examples/inventory.py`` (read before any request)."""
    result = ServerRun(EXAMPLE.key, rep)
    try:
        server = start_server(EXAMPLE)
    except BenchError as error:
        result.failure = str(error).splitlines()[0][:200]
        return result
    try:
        time.sleep(0.5)
        result.idle_rss_kib = server.sample().rss_kib
        probe(server.url, REV_2026, "tools/list", EXAMPLE_EXPECT)
        result.peak_rss_kib = server.sample().hwm_kib
    except BenchError as error:
        result.failure = str(error).splitlines()[0][:200]
    finally:
        server.stop()
    return result


# --- aggregation and report -----------------------------------------------------------------


@dataclass
class Summary:
    cell: Cell
    rps: float
    rps_min: float
    rps_max: float
    p50_ms: float
    p99_ms: float
    cpu_us: float
    body_bytes: int
    failure: str | None
    runs: int


def summarise(runs: Iterable[Run]) -> dict[Cell, Summary]:
    by_cell: dict[Cell, list[Run]] = {}
    for run in runs:
        by_cell.setdefault(run.cell, []).append(run)
    out: dict[Cell, Summary] = {}
    for cell, items in by_cell.items():
        failures = [r.failure for r in items if r.failure]
        ok = [r for r in items if not r.failure] or items
        out[cell] = Summary(
            cell=cell,
            rps=statistics.median(r.rps for r in ok),
            rps_min=min(r.rps for r in ok),
            rps_max=max(r.rps for r in ok),
            p50_ms=statistics.median(r.p50_ms for r in ok),
            p99_ms=statistics.median(r.p99_ms for r in ok),
            cpu_us=statistics.median(r.cpu_us for r in ok),
            body_bytes=max(r.body_bytes for r in items),
            failure=f"{len(failures)}/{len(items)} runs failed: {failures[0]}"
            if failures
            else None,
            runs=len(items),
        )
    return out


def memory(server_runs: Iterable[ServerRun]) -> dict[str, tuple[float, float]]:
    """Per server key: median idle RSS and median peak RSS, in MiB."""
    by_key: dict[str, list[ServerRun]] = {}
    for item in server_runs:
        if not item.failure:
            by_key.setdefault(item.key, []).append(item)
    return {
        key: (
            statistics.median(i.idle_rss_kib for i in items) / 1024,
            statistics.median(i.peak_rss_kib for i in items) / 1024,
        )
        for key, items in by_key.items()
    }


def ratio(a: float | None, b: float | None) -> str:
    if not a or not b:
        return "—"
    value = a / b
    return f"{value:.2f}x" if value < 10 else f"{value:.1f}x"


@dataclass
class Report:
    settings: Settings
    summaries: dict[Cell, Summary]
    mem: dict[str, tuple[float, float]]
    started: datetime.datetime
    info: dict[str, dict[str, str]] = field(default_factory=dict)

    def get(self, framework: str, workload: tuple[str, str, str, int]) -> Summary | None:
        variant, rev, method, conc = workload
        return self.summaries.get(Cell(framework, variant, rev, method, conc))

    def rps(self, framework: str, workload: tuple[str, str, str, int]) -> float | None:
        found = self.get(framework, workload)
        return None if found is None or found.failure else found.rps

    def ceiling(self) -> float | None:
        return self.rps("ceiling", ("raw", REV_2026, "tools/call", 16))

    def table(self) -> str:
        head = (
            "| workload | c | server | req/s | range of runs | p50 ms | p99 ms | server CPU µs/req "
            "| RSS idle / peak MiB | mcpkit/mcp | mcpkit/fastmcp | mcpkit/ceiling |"
        )
        lines = [head, "|" + "---|" * 12]
        workloads: list[tuple[str, str, str, int]] = []
        for cell in self.summaries:
            if cell.workload not in workloads:
                workloads.append(cell.workload)
        order = {"async": 0, "def": 1, "tools101": 2, "raw": 3}
        workloads.sort(key=lambda w: (order[w[0]], w[1] != REV_2026, w[2] != "tools/list", w[3]))
        ceiling = self.ceiling()
        for workload in workloads:
            for framework in (*FRAMEWORKS, "ceiling"):
                found = self.get(framework, workload)
                if found is None:
                    continue
                cell = found.cell
                idle, peak = self.mem.get(cell.spec.key, (0.0, 0.0))
                rss = f"{idle:.1f} / {peak:.1f}" if idle else "—"
                ratios = ["", "", ""]
                if framework == "mcpkit" and not found.failure:
                    ratios = [
                        ratio(found.rps, self.rps("mcp", workload)),
                        ratio(found.rps, self.rps("fastmcp", workload)),
                        ratio(found.rps, ceiling) if cell.conc == 16 else "—",
                    ]
                if found.failure:
                    numbers = [f"**FAILED** ({found.failure})", "", "", "", ""]
                else:
                    numbers = [
                        f"**{found.rps:,.0f}**",
                        f"{found.rps_min:,.0f}-{found.rps_max:,.0f}",
                        f"{found.p50_ms:.2f}",
                        f"{found.p99_ms:.2f}",
                        f"{found.cpu_us:,.0f}",
                    ]
                lines.append(
                    "| "
                    + " | ".join(
                        [cell.label, str(cell.conc), LABELS[framework], *numbers, rss, *ratios]
                    )
                    + " |"
                )
        if "mcpkit-example" in self.mem:
            idle, peak = self.mem["mcpkit-example"]
            lines.append(
                f"| idle, examples/inventory.py (`mcpkit serve`) | — | mcpkit | | | | | "
                f"| {idle:.1f} / {peak:.1f} | | | |"
            )
        return "\n".join(lines)

    def targets(self) -> list[tuple[str, str, bool | None]]:
        """(target, measured, passed); ``None`` when a cell needed for it was not measured."""
        out: list[tuple[str, str, bool | None]] = []

        def against_mcp(text: str, workload: tuple[str, str, str, int], factor: float) -> None:
            if self.get("mcpkit", workload) is None or self.get("mcp", workload) is None:
                out.append((text, "not measured", None))
                return
            ours, theirs = self.rps("mcpkit", workload), self.rps("mcp", workload)
            if ours is None or theirs is None:
                out.append((text, "a cell failed", False))
                return
            out.append(
                (
                    text,
                    f"{ours:,.0f} / {theirs:,.0f} = {ours / theirs:.2f}x",
                    ours / theirs >= factor,
                )
            )

        against_mcp(
            "2026-07-28 tools/call, async def, c=16: ≥ 5x mcp",
            ("async", REV_2026, "tools/call", 16),
            5,
        )
        against_mcp(
            "2026-07-28 tools/call, def, c=16: ≥ 4x mcp", ("def", REV_2026, "tools/call", 16), 4
        )
        against_mcp(
            "2025-11-25 tools/call, async def, c=16: ≥ 5x mcp",
            ("async", REV_2025, "tools/call", 16),
            5,
        )
        against_mcp(
            "2025-11-25 tools/call, def, c=16: ≥ 5x mcp", ("def", REV_2025, "tools/call", 16), 5
        )
        against_mcp(
            "tools/list, 101 tools, c=16: ≥ 20x mcp", ("tools101", REV_2026, "tools/list", 16), 20
        )
        ours, ceiling = self.rps("mcpkit", ("async", REV_2026, "tools/call", 16)), self.ceiling()
        text = "2026-07-28 tools/call, async def, c=16: ≥ 50% of the raw ASGI ceiling"
        if ours is None or ceiling is None:
            out.append((text, "not measured or failed", None))
        else:
            out.append(
                (
                    text,
                    f"{ours:,.0f} / {ceiling:,.0f} = {ours / ceiling:.0%}",
                    ours / ceiling >= 0.5,
                )
            )
        for variant in HANDLERS:
            for rev in REVISIONS:
                workload = (variant, rev, "tools/call", 64)
                ours_s, theirs_s = self.get("mcpkit", workload), self.get("mcp", workload)
                text = f"c=64 {rev} {variant}: mcpkit p99 < mcp p50"
                if ours_s is None or theirs_s is None or ours_s.failure or theirs_s.failure:
                    out.append((text, "not measured or failed", None))
                else:
                    out.append(
                        (
                            text,
                            f"{ours_s.p99_ms:.2f} ms < {theirs_s.p50_ms:.2f} ms",
                            ours_s.p99_ms < theirs_s.p50_ms,
                        )
                    )
        text = "idle RSS of examples/inventory.py ≤ 50 MiB"
        if "mcpkit-example" in self.mem:
            idle = self.mem["mcpkit-example"][0]
            out.append((text, f"{idle:.1f} MiB", idle <= 50))
        else:
            out.append((text, "not measured or failed", None))
        return out

    def header(self) -> str:
        m = self.info["machine"]
        noise = self.info["noise"]
        ours = self.info["project"]
        peers = self.info["peers"]
        s = self.settings
        mode = " (QUICK smoke run: not for comparison)" if s.quick else ""
        peer_stack = (
            "httptools + uvloop" if PEERS_STACK == "fast" else "h11 + asyncio (plain uvicorn)"
        )
        return "\n".join(
            [
                f"# HTTP benchmark: mcpkit vs mcp vs fastmcp, {self.started:%Y-%m-%d}{mode}",
                "",
                f"- Machine: {m['nproc']} CPUs, {m['cpu']}, {m['memory']}, Linux {m['kernel']}; "
                f"{m['wrk']}; pinning: {m['taskset']}.",
                f"- mcpkit {ours.get('mcpkit')} (commit {m['commit']}), "
                f"Python {ours.get('python')}, "
                f"uvicorn {ours.get('uvicorn')} with httptools {ours.get('httptools')} on "
                f"asyncio (`mcpkit serve`, its default loop; 1 worker).",
                f"- Peers (`{PEERS_VENV.name}` venv): Python {peers.get('python')}, "
                f"mcp {peers.get('mcp')}, "
                f"fastmcp {peers.get('fastmcp')}, uvicorn {peers.get('uvicorn')} on {peer_stack}, "
                f"starlette {peers.get('starlette')}, pydantic {peers.get('pydantic')}, "
                f"anyio {peers.get('anyio')}; stateless, JSON responses, 1 worker.",
                f"- Method: one server at a time on 127.0.0.1, server order reversed every other "
                f"repetition; median of {s.reps} run(s) of {s.duration} s after a {s.warmup} s "
                f"warm-up (`wrk -t1`, bench/http/mcp_post.lua); every response checked 2xx with "
                f"the expected result. CPU = server utime+stime ÷ responses. Ratios are of req/s "
                f"medians in this run; mcpkit/ceiling only at c=16.",
                f"- Noise: other processes used a median of {noise['other_median']} and at most "
                f"{noise['other_max']} cores during the kept runs ({noise['repeated']} run(s) "
                f"repeated for noise above {s.noise_limit} cores); wrk itself used at most "
                f"{noise['wrk_max']} of its core.",
                "",
            ]
        )

    def render(self) -> str:
        lines = [self.header(), self.table(), "", "## Targets (issue 7)", ""]
        lines.append("| target | measured | result |")
        lines.append("|---|---|---|")
        for text, measured, passed in self.targets():
            verdict = "not measured" if passed is None else ("PASS" if passed else "**FAIL**")
            lines.append(f"| {text} | {measured} | {verdict} |")
        bodies = sorted(
            {
                (s.cell.framework, s.body_bytes)
                for s in self.summaries.values()
                if s.cell.method == "tools/list"
            }
        )
        if bodies:
            sizes = ", ".join(f"{LABELS[f]} {b:,} B" for f, b in bodies)
            lines += ["", f"tools/list response body with 101 tools: {sizes}."]
        return "\n".join(lines) + "\n"


def main() -> int:
    settings = Settings.from_env()
    servers = plan(settings)
    frameworks = {spec.framework: True for spec, _ in servers}
    require_tools(frameworks)
    started = datetime.datetime.now()
    total = sum(len(c) for _, c in servers) * settings.reps
    log(
        f"HTTP benchmark: {len(servers)} servers, {total} runs of {settings.duration} s "
        f"(+{settings.warmup} s warm-up), {settings.reps} repetition(s)"
    )
    runs: list[Run] = []
    server_runs: list[ServerRun] = []
    with_example = (
        not settings.only or "mcpkit" in settings.only or "mcpkit-example" in settings.only
    )
    for rep in range(settings.reps):
        ordered = servers if rep % 2 == 0 else list(reversed(servers))
        log(f"repetition {rep + 1}/{settings.reps}: {', '.join(s.key for s, _ in ordered)}")
        for spec, cells in ordered:
            server_run, cell_runs = measure_server(spec, cells, rep, settings)
            server_runs.append(server_run)
            runs.extend(cell_runs)
            if server_run.failure:
                log(f"  {spec.key}: FAILED: {server_run.failure}")
        if with_example:
            example = measure_example(rep)
            server_runs.append(example)
            idle = example.idle_rss_kib / 1024
            log(f"  mcpkit-example idle RSS {idle:.1f} MiB {example.failure or ''}")
    report = Report(settings, summarise(runs), memory(server_runs), started)
    measured = [r for r in runs if not r.failure]
    noise = {
        "other_median": f"{statistics.median(r.other_cpu for r in measured):.2f}"
        if measured
        else "?",
        "other_max": f"{max(r.other_cpu for r in measured):.2f}" if measured else "?",
        "wrk_max": f"{max(r.client_cpu for r in measured):.2f}" if measured else "?",
        "repeated": str(sum(1 for r in runs if r.attempts > 1)),
    }
    report.info = {
        "noise": noise,
        "machine": machine(),
        "project": versions(PROJECT_VENV / "bin" / "python", ["mcpkit", "uvicorn", "httptools"]),
        "peers": versions(
            PEERS_VENV / "bin" / "python",
            ["mcp", "fastmcp", "uvicorn", "starlette", "pydantic", "pydantic-core", "anyio"],
        ),
    }
    text = report.render()
    print(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    stem = (
        f"{started:%Y-%m-%d}"
        + ("-quick" if settings.quick else "")
        + (f"-{settings.tag}" if settings.tag else "")
    )
    (RESULTS / f"{stem}.md").write_text(text)
    raw = {
        "settings": asdict(settings),
        "info": report.info,
        "runs": [asdict(r) for r in runs],
        "servers": [asdict(s) for s in server_runs],
    }
    (RESULTS / f"{stem}.json").write_text(json.dumps(raw, indent=1, default=str) + "\n")
    if not settings.quick and not settings.only and not settings.tag:
        (RESULTS / "latest.md").write_text(text)
    log(
        f"written: bench/results/{stem}.md"
        + (
            ""
            if settings.quick or settings.only or settings.tag
            else " and bench/results/latest.md"
        )
    )
    failed = [s for s in report.summaries.values() if s.failure]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
