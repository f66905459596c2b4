"""Soak: 200,000 ``tools/call`` requests against one mcpkit server (issue 7).

Run from the project root as ``python -m bench.http.soak`` (``make soak``).  The server is
``bench/http/app_mcpkit.py`` (``def add`` by default, the worker-thread path) under
``mcpkit serve``; wrk sends the requests in chunks of 20,000, alternating 2026-07-28 and
2025-11-25 requests, and every response must be 2xx with the expected result.  After each chunk
(once the connections are closed) the server's RSS, open file descriptors
(``/proc/<pid>/fd``) and threads (``/proc/<pid>/task``) are read.

Pass: RSS after all requests is within 10% of RSS after the first 20,000, and the file
descriptors and threads after all requests are no more than after the first 20,000.

Environment: ``SOAK_REQUESTS`` (200000), ``SOAK_CHUNK`` (20000), ``SOAK_CONCURRENCY`` (16),
``SOAK_VARIANT`` (def, async or tools101), ``SOAK_REV`` (mixed, 2026-07-28 or 2025-11-25).
Writes ``bench/results/soak-<date>.md`` and ``bench/results/soak-latest.md``.
"""

from __future__ import annotations

import datetime
import os
import sys
import time

from bench.http.common import (
    EXPECT_CALL,
    RESULTS,
    BenchError,
    ProcSample,
    RunningServer,
    ServerSpec,
    env_int,
    log,
    machine,
    probe,
    require_tools,
    run_wrk,
    start_server,
)

MiB = 1024


def settled(server: RunningServer) -> ProcSample:
    """A sample once the file descriptor count has stopped changing (closed connections)."""
    previous = server.sample()
    for _ in range(25):
        time.sleep(0.2)
        current = server.sample()
        if current.fds == previous.fds and current.threads == previous.threads:
            return current
        previous = current
    return previous


def main() -> int:
    total = env_int("SOAK_REQUESTS", 200_000)
    chunk = env_int("SOAK_CHUNK", 20_000)
    conc = env_int("SOAK_CONCURRENCY", 16)
    variant = os.environ.get("SOAK_VARIANT", "def")
    rev = os.environ.get("SOAK_REV", "mixed")
    if chunk <= 0 or total < chunk:
        raise SystemExit("SOAK_CHUNK must be positive and at most SOAK_REQUESTS")
    require_tools({"mcpkit": True})
    started = datetime.datetime.now()
    spec = ServerSpec("mcpkit", variant)
    server = start_server(spec)
    rows: list[tuple[int, ProcSample, float]] = []
    failure: str | None = None
    done = 0
    try:
        time.sleep(0.5)
        start = server.sample()
        for probe_rev in ("2026-07-28", "2025-11-25"):
            probe(server.url, probe_rev, "tools/call", EXPECT_CALL)
        log(
            f"soak: {total:,} tools/call ({rev}) against mcpkit-{variant}, c={conc}, pid "
            f"{server.pid}; start RSS {start.rss_kib / MiB:.1f} MiB, {start.fds} fds, "
            f"{start.threads} threads"
        )
        while done < total:
            count = min(chunk, total - done)
            t0 = time.monotonic()
            result = run_wrk(server.url, rev, "tools/call", conc, 900, EXPECT_CALL, count)
            elapsed = time.monotonic() - t0
            done += result.requests
            if result.failure:
                failure = f"after {done:,} requests: {result.failure}"
                break
            if server.process.poll() is not None:
                failure = f"the server exited with {server.process.returncode}"
                break
            sample = settled(server)
            rows.append((done, sample, result.requests / elapsed))
            log(
                f"  {done:>8,} requests: RSS {sample.rss_kib / MiB:6.1f} MiB (peak "
                f"{sample.hwm_kib / MiB:.1f}), {sample.fds} fds, {sample.threads} threads, "
                f"{result.requests / elapsed:,.0f} req/s"
            )
    except BenchError as error:
        failure = str(error).splitlines()[0]
    finally:
        server.stop()

    box = machine()
    lines = [
        f"# Soak: mcpkit, {started:%Y-%m-%d %H:%M}",
        "",
        f"- {done:,} `tools/call add` requests ({rev}; `BENCH_VARIANT={variant}`), wrk c={conc} "
        f"in chunks of {chunk:,}; every response checked 2xx with the expected result.",
        f"- Machine: {box['nproc']} CPUs, {box['cpu']}; commit {box['commit']}.",
        "",
        "| requests | RSS MiB | peak RSS MiB | open fds | threads | req/s (chunk) |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {n:,} | {s.rss_kib / MiB:.1f} | {s.hwm_kib / MiB:.1f} | {s.fds} | {s.threads} "
        f"| {rps:,.0f} |"
        for n, s, rps in rows
    ]
    passed = False
    if failure is None and len(rows) >= 2:
        first, last = rows[0][1], rows[-1][1]
        growth = (last.rss_kib - first.rss_kib) / first.rss_kib
        checks = [
            (
                f"RSS after {rows[-1][0]:,} within 10% of RSS after {rows[0][0]:,}",
                f"{first.rss_kib / MiB:.1f} → {last.rss_kib / MiB:.1f} MiB ({growth:+.1%})",
                abs(growth) <= 0.10,
            ),
            (
                "open file descriptors do not grow",
                f"{first.fds} → {last.fds}",
                last.fds <= first.fds,
            ),
            (
                "threads do not grow",
                f"{first.threads} → {last.threads}",
                last.threads <= first.threads,
            ),
        ]
        passed = all(ok for _, _, ok in checks)
        lines += ["", "| check | measured | result |", "|---|---|---|"]
        lines += [f"| {t} | {m} | {'PASS' if ok else '**FAIL**'} |" for t, m, ok in checks]
    else:
        lines += ["", f"**FAILED**: {failure or 'too few samples'}"]
    lines += ["", f"Soak result: {'PASS' if passed else 'FAIL'}"]
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"soak-{started:%Y-%m-%d}.md").write_text(text)
    (RESULTS / "soak-latest.md").write_text(text)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
