"""Shared pieces of the HTTP benchmark (``run.py``) and the soak (``soak.py``).

Servers are started one at a time on 127.0.0.1, each in its own session (process group), pinned
to CPU 0 with ``taskset`` when it exists; ``wrk`` runs on CPU 1.  The server's PID is the one
that serves (``taskset`` and the venv scripts ``exec``), so ``/proc/<pid>`` gives its CPU time,
RSS, file descriptors and threads.  Everything started here is stopped here, by process group.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Final, Protocol, TypeVar

ROOT: Final = Path(__file__).resolve().parents[2]
HERE: Final = ROOT / "bench" / "http"
LUA: Final = HERE / "mcp_post.lua"
RESULTS: Final = ROOT / "bench" / "results"
PROJECT_VENV: Final = Path(os.environ.get("BENCH_PROJECT_VENV", str(ROOT / ".venv")))
PEERS_VENV: Final = Path(os.environ.get("BENCH_PEERS_VENV", str(ROOT / "build" / "bench-peers")))
LOG_DIR: Final = ROOT / "build" / "bench-logs"
# The peers run on plain uvicorn (h11 + asyncio), as in the peers survey; "fast" runs them on
# httptools + uvloop, the fastest uvicorn stack (setup.sh installs both into the peers' venv when
# asked).
PEERS_STACK: Final = os.environ.get("BENCH_PEERS_STACK", "plain")

SERVER_CPU: Final = "0"
CLIENT_CPU: Final = "1"
TASKSET: Final = shutil.which("taskset")
CLK_TCK: Final = os.sysconf("SC_CLK_TCK")

REV_2026: Final = "2026-07-28"
REV_2025: Final = "2025-11-25"
META: Final = {
    "io.modelcontextprotocol/protocolVersion": REV_2026,
    "io.modelcontextprotocol/clientCapabilities": {},
}
EXPECT_CALL: Final = '"structuredContent":{"result":5}'
EXPECT_LIST: Final = '"name":"tool_099"'


class BenchError(RuntimeError):
    """A server that would not start, a failed correctness probe or a failed wrk run."""


@dataclass(frozen=True)
class ServerSpec:
    """One benchmark server: ``framework`` is mcpkit, mcp, fastmcp or ceiling; ``variant`` is
    def, async, tools101 (or raw, or example for the inventory example)."""

    framework: str
    variant: str
    path: str = "/mcp"
    loop: str = ""  # mcpkit only: ``mcpkit serve --loop``; empty for the server's default

    @property
    def key(self) -> str:
        suffix = f"-{self.loop}" if self.loop else ""
        return f"{self.framework}-{self.variant}{suffix}"

    def command(self, port: int) -> list[str]:
        if self.framework == "mcpkit":
            target = (
                "examples/inventory.py" if self.variant == "example" else HERE / "app_mcpkit.py"
            )
            mcpkit = PROJECT_VENV / "bin" / "mcpkit"
            loop = ["--loop", self.loop] if self.loop else []
            return [str(mcpkit), "serve", str(target), "--port", str(port), *loop]
        if self.framework == "ceiling":
            python = PROJECT_VENV / "bin" / "python"
            return [str(python), str(HERE / "app_ceiling.py"), "--port", str(port)]
        uvicorn = PEERS_VENV / "bin" / "uvicorn"
        return [
            str(uvicorn),
            f"app_{self.framework}:app",
            "--app-dir",
            str(HERE),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            "1",
            "--no-access-log",
            "--log-level",
            "warning",
            "--loop",
            "uvloop" if PEERS_STACK == "fast" else "asyncio",
            "--http",
            "httptools" if PEERS_STACK == "fast" else "h11",
        ]

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env["BENCH_VARIANT"] = self.variant
        env.pop("PYTHONPATH", None)
        return env


@dataclass(frozen=True)
class ProcSample:
    """What ``/proc/<pid>`` says at one moment."""

    cpu_seconds: float  # utime + stime, all threads
    rss_kib: int
    hwm_kib: int
    fds: int
    threads: int


def proc_sample(pid: int) -> ProcSample:
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    # fields[0] is field 3 (state); utime and stime are fields 14 and 15.
    cpu = (int(fields[11]) + int(fields[12])) / CLK_TCK
    status: dict[str, str] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        status[name] = value.strip()
    return ProcSample(
        cpu_seconds=cpu,
        rss_kib=int(status["VmRSS"].split()[0]),
        hwm_kib=int(status["VmHWM"].split()[0]),
        fds=len(os.listdir(f"/proc/{pid}/fd")),
        threads=len(os.listdir(f"/proc/{pid}/task")),
    )


def machine_busy_seconds() -> float:
    """CPU seconds spent by the whole machine so far, all CPUs (``/proc/stat``; not idle and
    not iowait)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / CLK_TCK


def children_cpu_seconds() -> float:
    """utime + stime of the children this process has waited for (wrk)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def request_for(rev: str, method: str, tool: str = "add") -> tuple[dict[str, str], bytes]:
    """The headers and body ``mcp_post.lua`` sends (used for the correctness probes)."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": rev,
    }
    params: dict[str, object] = {}
    if method == "tools/call":
        params = {"name": tool, "arguments": {"a": 2, "b": 3}}
    if rev == REV_2026:
        params["_meta"] = META
        headers["Mcp-Method"] = method
        if method == "tools/call":
            headers["Mcp-Name"] = tool
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return headers, json.dumps(body, separators=(",", ":")).encode()


def post(
    url: str, rev: str, method: str, timeout: float = 10.0, authorization: str = ""
) -> tuple[int, bytes]:
    headers, body = request_for(rev, method)
    if authorization:
        headers["Authorization"] = authorization
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            status: int = response.status
            return status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def probe(url: str, rev: str, method: str, expect: str, authorization: str = "") -> int:
    """One request like wrk's (with ``authorization`` as its ``Authorization`` header, if
    any); raises ``BenchError`` unless it is 2xx with ``expect`` in the body.  Returns the body
    size."""
    status, body = post(url, rev, method, authorization=authorization)
    if not 200 <= status < 300 or expect.encode() not in body:
        raise BenchError(f"probe {method} {rev} at {url}: HTTP {status}: {body[:300]!r}")
    return len(body)


@dataclass
class RunningServer:
    spec: ServerSpec
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path
    log: IO[bytes]
    idle: ProcSample | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.spec.path}"

    def sample(self) -> ProcSample:
        return proc_sample(self.pid)

    def stop(self) -> None:
        """SIGTERM to the server's process group, SIGKILL after 10 s."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        self.log.close()


def start_server(
    spec: ServerSpec, ready_method: str = "tools/call", pin: bool = True
) -> RunningServer:
    """Start ``spec`` on a free port and wait until it listens (30 s at most); pinned to
    ``SERVER_CPU`` unless ``pin`` is false (``workers.py``: several processes, two cores)."""
    port = free_port()
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    log_path = LOG_DIR / f"{spec.key}.log"
    log = log_path.open("wb")
    command = spec.command(port)
    if TASKSET and pin:
        command = [TASKSET, "-c", SERVER_CPU, *command]
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env=spec.environment(),
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    server = RunningServer(spec, port, process, log_path, log)
    deadline = time.monotonic() + 30
    while True:
        if process.poll() is not None:
            server.stop()
            tail = log_path.read_text(errors="replace")[-2000:]
            raise BenchError(f"{spec.key} exited with {process.returncode}:\n{tail}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            if time.monotonic() > deadline:
                server.stop()
                raise BenchError(f"{spec.key} did not listen on port {port} within 30 s") from None
            time.sleep(0.05)
    return server


@dataclass(frozen=True)
class WrkResult:
    requests: int
    duration_s: float
    non2xx: int
    bad_body: int
    socket_errors: int
    p50_ms: float
    p99_ms: float
    mean_ms: float

    @property
    def rps(self) -> float:
        return self.requests / self.duration_s if self.duration_s else 0.0

    @property
    def failure(self) -> str | None:
        problems = []
        if self.requests == 0:
            problems.append("no responses")
        if self.non2xx:
            problems.append(f"{self.non2xx} non-2xx")
        if self.bad_body:
            problems.append(f"{self.bad_body} bodies without the expected result")
        if self.socket_errors:
            problems.append(f"{self.socket_errors} socket errors/timeouts")
        return ", ".join(problems) or None


def run_wrk(
    url: str,
    rev: str,
    method: str,
    connections: int,
    seconds: int,
    expect: str,
    max_responses: int = 0,
    session: str = "",
    authorization: str = "",
    pin: bool = True,
) -> WrkResult:
    """One ``wrk -t1`` run with ``mcp_post.lua``, pinned to ``CLIENT_CPU`` unless ``pin`` is
    false.  With ``max_responses`` it ends as soon as that many responses arrived (``seconds``
    is then only an upper bound); ``authorization`` is sent as every request's
    ``Authorization`` header (none when empty)."""
    wrk = shutil.which("wrk")
    if wrk is None:
        raise BenchError("wrk is not installed (bench/http/setup.sh installs it)")
    command = [wrk, "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s", "-s", str(LUA)]
    command.append(url)
    if TASKSET and pin:
        command = [TASKSET, "-c", CLIENT_CPU, *command]
    env = dict(os.environ, MCP_REV=rev, MCP_METHOD=method, MCP_EXPECT=expect, MCP_SESSION=session)
    env["MCP_AUTHORIZATION"] = authorization
    done_file = LOG_DIR / f"wrk-done-{os.getpid()}"
    done_file.unlink(missing_ok=True)
    if max_responses:
        env.update(MCP_MAX=str(max_responses), MCP_DONE_FILE=str(done_file))
    with subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    ) as process:
        if max_responses:
            while process.poll() is None and not done_file.exists():
                time.sleep(0.02)
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
        try:
            out, err = process.communicate(timeout=seconds + 60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            raise BenchError(f"wrk did not finish: {' '.join(command)}") from None
    done_file.unlink(missing_ok=True)
    for line in out.decode(errors="replace").splitlines():
        if line.startswith("WRK_JSON "):
            data = json.loads(line[len("WRK_JSON ") :])
            break
    else:
        raise BenchError(f"wrk printed no result (exit {process.returncode}): {err.decode()[:500]}")
    socket_errors = sum(
        int(data[k]) for k in ("connect_errors", "read_errors", "write_errors", "timeouts")
    )
    return WrkResult(
        requests=int(data["requests"]),
        duration_s=int(data["duration_us"]) / 1e6,
        non2xx=max(int(data["non2xx"]), int(data["status_errors"])),
        bad_body=int(data["bad_body"]),
        socket_errors=socket_errors,
        p50_ms=float(data["p50_us"]) / 1e3,
        p99_ms=float(data["p99_us"]) / 1e3,
        mean_ms=float(data["mean_us"]) / 1e3,
    )


def versions(python: Path, names: Sequence[str]) -> dict[str, str]:
    """Installed versions of ``names`` (and Python's) in the venv of ``python``."""
    code = (
        "import importlib.metadata as m, json, platform\n"
        "def v(n):\n"
        "    try:\n        return m.version(n)\n"
        "    except m.PackageNotFoundError:\n        return 'absent'\n"
        f"print(json.dumps({{'python': platform.python_version(), "
        f"**{{n: v(n) for n in {list(names)!r}}}}}))"
    )
    try:
        out = subprocess.run([str(python), "-c", code], capture_output=True, check=True, text=True)
    except (OSError, subprocess.CalledProcessError) as error:
        return {"error": str(error)}
    result: dict[str, str] = json.loads(out.stdout)
    return result


def machine() -> dict[str, str]:
    model = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    mem_kib = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            mem_kib = int(line.split()[1])
    wrk = shutil.which("wrk")
    wrk_version = "absent"
    if wrk:
        out = subprocess.run([wrk, "--version"], capture_output=True, text=True, check=False)
        wrk_version = (out.stdout or out.stderr).splitlines()[0].split(" [")[0]
    commit = subprocess.run(
        ["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    return {
        "nproc": str(os.cpu_count()),
        "cpu": model,
        "memory": f"{mem_kib / 1024 / 1024:.0f} GiB",
        "kernel": os.uname().release,
        "wrk": wrk_version,
        "taskset": "yes (server CPU 0, wrk CPU 1)" if TASKSET else "no (not pinned)",
        "commit": commit or "unknown",
    }


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "")
    return int(value) if value.strip() else default


class Measured(Protocol):
    """A measured run as the noise rule sees it."""

    failure: str | None
    other_cpu: float
    attempts: int


_Run = TypeVar("_Run", bound=Measured)


def quietest(measure: Callable[[], _Run], noise_limit: float, retries: int) -> _Run:
    """``measure()`` again (``retries`` times at most) while other processes used more than
    ``noise_limit`` cores during it; the quietest attempt (a failure only if all failed), with
    the number of attempts."""
    attempts: list[_Run] = []
    while True:
        run = measure()
        attempts.append(run)
        if run.failure or run.other_cpu <= noise_limit or len(attempts) > retries:
            break
        log(f"  (other processes used {run.other_cpu:.2f} cores: measuring again)")
    best = min(attempts, key=lambda r: (r.failure is not None, r.other_cpu))
    best.attempts = len(attempts)
    return best


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def require_tools(frameworks: Mapping[str, object]) -> None:
    """Fail early with a useful message when a venv or wrk is missing."""
    missing = []
    if not (PROJECT_VENV / "bin" / "mcpkit").exists():
        missing.append(f"{PROJECT_VENV}/bin/mcpkit (make venv)")
    if (
        any(f in frameworks for f in ("mcp", "fastmcp"))
        and not (PEERS_VENV / "bin" / "uvicorn").exists()
    ):
        missing.append(f"{PEERS_VENV}/bin/uvicorn (bench/http/setup.sh)")
    if shutil.which("wrk") is None:
        missing.append("wrk (bench/http/setup.sh)")
    if missing:
        raise BenchError("missing: " + "; ".join(missing))
