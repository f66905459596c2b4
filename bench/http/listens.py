"""2026-07-28 ``tools/call`` throughput with 100 idle ``subscriptions/listen`` streams open,
against the same server with none.

Run from the project root as ``python -m bench.http.listens`` (``make bench`` runs it after
the others; ``bench/http/setup.sh`` installs ``wrk``).

One server (``mcpkit serve bench/http/app_mcpkit.py`` with ``BENCH_VARIANT=listen``: ``async
def add``, listen served, every listen granted) is measured with ``wrk -t1 -c16``, in turn
with no listen open and with ``LISTENS`` streams open and acknowledged (each its own
connection, asking for every notification, never sent one); the order alternates on every
repetition.  Each figure is the median of ``BENCH_REPS`` runs of ``BENCH_DURATION`` seconds
after a ``BENCH_WARMUP``-second warm-up.  The target: within 10% of the figure with none.
Writes ``bench/results/<date>-listens.md``.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import socket
import statistics
from collections.abc import Iterator
from typing import Final

from bench.http.common import (
    EXPECT_CALL,
    META,
    RESULTS,
    REV_2026,
    BenchError,
    RunningServer,
    ServerSpec,
    env_int,
    log,
    machine,
    run_wrk,
    start_server,
)

CONNECTIONS: Final = 16
LISTENS: Final = 100
_ACK: Final = b"notifications/subscriptions/acknowledged"


def _listen_request(port: int, number: int) -> bytes:
    notifications = {
        "toolsListChanged": True,
        "promptsListChanged": True,
        "resourcesListChanged": True,
    }
    message = {
        "jsonrpc": "2.0",
        "id": number,
        "method": "subscriptions/listen",
        "params": {"_meta": META, "notifications": notifications},
    }
    body = json.dumps(message).encode()
    head = (
        "POST /mcp HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{port}\r\n"
        "Content-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\n"
        f"MCP-Protocol-Version: {REV_2026}\r\n"
        "Mcp-Method: subscriptions/listen\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


@contextlib.contextmanager
def idle_listens(server: RunningServer, count: int) -> Iterator[None]:
    """``count`` listen streams open and acknowledged for the duration, then closed."""
    sockets: list[socket.socket] = []
    try:
        for number in range(count):
            connection = socket.create_connection(("127.0.0.1", server.port), timeout=10)
            sockets.append(connection)
            connection.sendall(_listen_request(server.port, number))
            received = b""
            while _ACK not in received:
                chunk = connection.recv(65_536)
                if not chunk:
                    raise BenchError(f"listen {number} closed before its acknowledgement")
                received += chunk
        yield
    finally:
        for connection in sockets:
            connection.close()


def measure(server: RunningServer, listens: int, warmup: int, duration: int) -> float:
    with idle_listens(server, listens):
        run_wrk(server.url, REV_2026, "tools/call", CONNECTIONS, warmup, EXPECT_CALL)
        result = run_wrk(server.url, REV_2026, "tools/call", CONNECTIONS, duration, EXPECT_CALL)
    if result.failure:
        raise BenchError(f"{listens} listens: {result.failure}")
    log(f"  {listens:3} listens {result.rps:9.0f} req/s p50 {result.p50_ms:7.2f} ms")
    return result.rps


def main() -> None:
    reps = env_int("BENCH_REPS", 5)
    warmup = env_int("BENCH_WARMUP", 2)
    duration = env_int("BENCH_DURATION", 5)
    runs: dict[int, list[float]] = {0: [], LISTENS: []}
    server = start_server(ServerSpec("mcpkit", "listen"))
    try:
        for rep in range(reps):
            log(f"repetition {rep + 1}/{reps}")
            for listens in (0, LISTENS) if rep % 2 == 0 else (LISTENS, 0):
                runs[listens].append(measure(server, listens, warmup, duration))
    finally:
        server.stop()
    none, some = (statistics.median(runs[count]) for count in (0, LISTENS))
    ratio = some / none
    info = machine()
    today = datetime.date.today()
    lines = [
        f"# 2026-07-28 tools/call with {LISTENS} idle listens open, {today:%Y-%m-%d}",
        "",
        f"- Machine: {info['nproc']} CPUs, {info['cpu']}; commit {info['commit']}; "
        f"pinning: {info['taskset']}.",
        f"- Method: bench/http/listens.py; one mcpkit server, `wrk -t1 -c{CONNECTIONS}`, median "
        f"of {reps} runs of {duration} s after a {warmup} s warm-up, order alternating.",
        "",
        "| listens open | req/s (median) | runs |",
        "|---|---|---|",
        *(
            f"| {count} | **{statistics.median(values):,.0f}** | "
            f"{', '.join(f'{value:,.0f}' for value in values)} |"
            for count, values in runs.items()
        ),
        "",
        f"with/without: **{ratio:.3f}** (target ≥ 0.90: {'PASS' if ratio >= 0.9 else 'FAIL'})",
        "",
    ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{today:%Y-%m-%d}-listens.md"
    path.write_text("\n".join(lines))
    log(f"written: {path.relative_to(RESULTS.parent.parent)}")


if __name__ == "__main__":
    main()
