"""Paired comparison of ``mcpkit serve --loop asyncio`` and ``--loop uvloop``.

Both servers (the ``async def`` benchmark app) are up at once, pinned to the same core, and
short ``wrk`` runs alternate between them (``A B``, then ``B A``), so a host whose speed drifts
over minutes moves both alike.  It prints, per loop, the median server CPU per request and every
run's p99, and the median of the paired CPU ratios.  This is the measurement behind README
"Design decisions, Event loop"; a development aid, not part of ``make bench``.

    python -m bench.http.loops [--pairs 10] [--seconds 2] [--concurrency 16]
        [--rev 2026-07-28|2025-11-25]
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass, field

from bench.http.common import (
    EXPECT_CALL,
    REV_2025,
    REV_2026,
    BenchError,
    RunningServer,
    ServerSpec,
    run_wrk,
    start_server,
)

LOOPS = ("asyncio", "uvloop")


@dataclass
class Samples:
    cpu_us: list[float] = field(default_factory=list)
    p99_ms: list[float] = field(default_factory=list)


def measure(server: RunningServer, rev: str, conc: int, seconds: int) -> tuple[float, float]:
    """One run: server CPU µs per response, and the run's p99 in ms."""
    before = server.sample()
    result = run_wrk(server.url, rev, "tools/call", conc, seconds, EXPECT_CALL)
    after = server.sample()
    if result.failure:
        raise BenchError(f"{server.spec.key}: {result.failure}")
    return (after.cpu_seconds - before.cpu_seconds) / result.requests * 1e6, result.p99_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--seconds", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rev", choices=(REV_2026, REV_2025), default=REV_2026)
    args = parser.parse_args()
    servers = [start_server(ServerSpec("mcpkit", "async", loop=loop)) for loop in LOOPS]
    samples = {loop: Samples() for loop in LOOPS}
    try:
        time.sleep(0.5)
        for server in servers:  # warm-up: memos, pools, caches
            run_wrk(server.url, args.rev, "tools/call", args.concurrency, 1, EXPECT_CALL)
        for pair in range(args.pairs):
            order = servers if pair % 2 == 0 else servers[::-1]
            for server in order:
                cpu, p99 = measure(server, args.rev, args.concurrency, args.seconds)
                samples[server.spec.loop].cpu_us.append(cpu)
                samples[server.spec.loop].p99_ms.append(p99)
    finally:
        for server in servers:
            server.stop()
    print(f"{args.pairs} pairs of {args.seconds} s runs, c={args.concurrency}, {args.rev}")
    for loop in LOOPS:
        got = samples[loop]
        p99s = ", ".join(f"{p:.1f}" for p in sorted(got.p99_ms))
        cpu = statistics.median(got.cpu_us)
        print(f"{loop:8} CPU µs/request median {cpu:6.1f}; p99 ms: {p99s}")
    pairs = zip(samples["asyncio"].cpu_us, samples["uvloop"].cpu_us, strict=True)
    ratios = [uvloop / asyncio for asyncio, uvloop in pairs]
    print(f"uvloop/asyncio CPU per request, median of pairs: {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
