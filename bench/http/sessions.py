"""2025-11-25 ``tools/call`` inside a session: mcpkit, with its sessions in the process and in
Redis, against the official SDK's stateful server.

Run from the project root as ``python -m bench.http.sessions`` (``make bench`` runs it after
``bench.http.run``; ``bench/http/setup.sh`` makes the peers' venv and installs ``wrk``).

Both servers run the ``session`` variant of their benchmark app: ``async def add``, 2025-11-25
kept in sessions (mcpkit: ``session_revisions``; the SDK: its session manager,
``stateless_http=False``), JSON responses.  For each run the client opens one session
(``initialize``, then ``notifications/initialized``) and ``wrk -t1 -c16`` sends every
``tools/call`` with its ``Mcp-Session-Id``; every response is checked 2xx with the result.
``mcpkit+redis`` is the same mcpkit server with ``RedisSessionStore`` (``BENCH_REDIS_URL``): a
``redis-server`` (the Debian package, ``make services``) started by this script on a loopback
port, pinned with wrk on the other CPU, holds the session.  The targets: mcpkit ≥ 5x the SDK,
mcpkit+redis ≥ 3x.
Servers alternate order on every other repetition; each figure is the median of
``BENCH_REPS`` runs of ``BENCH_DURATION`` seconds after a ``BENCH_WARMUP``-second warm-up.
Writes ``bench/results/<date>-sessions.md``.
"""

from __future__ import annotations

import datetime
import json
import os
import statistics
import urllib.request
from typing import Final

from bench.http.common import (
    EXPECT_CALL,
    RESULTS,
    REV_2025,
    SERVER_CPU,
    BenchError,
    RunningServer,
    ServerSpec,
    env_int,
    log,
    machine,
    run_wrk,
    start_server,
)
from tests.redis_server import running_redis

CONNECTIONS: Final = 16
FRAMEWORKS: Final = ("mcpkit", "mcpkit+redis", "mcp")
TARGETS: Final = {"mcpkit": 5.0, "mcpkit+redis": 3.0}
_HEADERS: Final = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": REV_2025,
}


def _post(url: str, message: dict[str, object], session: str = "") -> tuple[int, str, bytes]:
    headers = dict(_HEADERS, **({"Mcp-Session-Id": session} if session else {}))
    data = json.dumps(message).encode()
    request = urllib.request.Request(url, data=data, headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.headers.get("mcp-session-id") or "", response.read()


def open_session(server: RunningServer) -> str:
    """``initialize`` and ``notifications/initialized``; the session id, checked by one call."""
    params = {"protocolVersion": REV_2025, "capabilities": {}, "clientInfo": {"name": "bench"}}
    status, session, _ = _post(
        server.url, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    )
    if status != 200 or not session:
        raise BenchError(f"{server.spec.key}: initialize gave HTTP {status} and no session")
    _post(server.url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    call = {"name": "add", "arguments": {"a": 2, "b": 3}}
    status, _, body = _post(
        server.url, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}, session
    )
    if status != 200 or EXPECT_CALL.encode() not in body:
        raise BenchError(f"{server.spec.key}: a call in the session gave {status}: {body[:200]!r}")
    return session


def measure(framework: str, warmup: int, duration: int, redis_url: str) -> float:
    name, _, store = framework.partition("+")
    if store:
        os.environ["BENCH_REDIS_URL"] = redis_url
    try:
        server = start_server(ServerSpec(name, "session"))
    finally:
        os.environ.pop("BENCH_REDIS_URL", None)
    try:
        session = open_session(server)
        run_wrk(
            server.url, REV_2025, "tools/call", CONNECTIONS, warmup, EXPECT_CALL, session=session
        )
        result = run_wrk(
            server.url, REV_2025, "tools/call", CONNECTIONS, duration, EXPECT_CALL, session=session
        )
    finally:
        server.stop()
    if result.failure:
        raise BenchError(f"{framework}: {result.failure}")
    log(f"  {framework:12} {result.rps:9.0f} req/s p50 {result.p50_ms:7.2f} ms")
    return result.rps


def main() -> None:
    reps = env_int("BENCH_REPS", 5)
    warmup = env_int("BENCH_WARMUP", 2)
    duration = env_int("BENCH_DURATION", 5)
    runs: dict[str, list[float]] = {name: [] for name in FRAMEWORKS}
    with running_redis() as redis:
        if redis.pid is not None and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(redis.pid, {int(SERVER_CPU) ^ 1})  # with wrk, not the server
        for rep in range(reps):
            log(f"repetition {rep + 1}/{reps}")
            for framework in FRAMEWORKS if rep % 2 == 0 else tuple(reversed(FRAMEWORKS)):
                runs[framework].append(measure(framework, warmup, duration, redis.url))
    medians = {name: statistics.median(runs[name]) for name in FRAMEWORKS}
    theirs = medians["mcp"]
    info = machine()
    today = datetime.date.today()
    lines = [
        f"# 2025-11-25 tools/call inside a session: mcpkit vs mcp, {today:%Y-%m-%d}",
        "",
        f"- Machine: {info['nproc']} CPUs, {info['cpu']}; commit {info['commit']}; "
        f"pinning: {info['taskset']}.",
        f"- Method: bench/http/sessions.py; one session per run, `wrk -t1 -c{CONNECTIONS}`, "
        f"median of {reps} runs of {duration} s after a {warmup} s warm-up; mcpkit+redis: "
        "`RedisSessionStore`, redis-server on loopback pinned with wrk.",
        "",
        "| server | req/s (median) | runs |",
        "|---|---|---|",
        *(
            f"| {name} | **{statistics.median(runs[name]):,.0f}** | "
            f"{', '.join(f'{value:,.0f}' for value in runs[name])} |"
            for name in FRAMEWORKS
        ),
        "",
        *(
            f"{name}/mcp: **{medians[name] / theirs:.2f}x** (target ≥ {target:g}x: "
            f"{'PASS' if medians[name] / theirs >= target else 'FAIL'})  "
            for name, target in TARGETS.items()
        ),
        "",
    ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{today:%Y-%m-%d}-sessions.md"
    path.write_text("\n".join(lines))
    log(f"written: {path.relative_to(RESULTS.parent.parent)}")


if __name__ == "__main__":
    main()
