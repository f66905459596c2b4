"""Metrics snapshots (``mcpkit serve --workers``): one process's counts and gauges encoded for
another, decoded strictly (only the fixed labels, targets and gauge names, bounded in size),
summed into one exposition, and restored by a process that takes over a dead one's counts."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpkit import Server, TokenBucket, endpoint, tool
from mcpkit.server._metrics import (
    BUCKETS,
    OUTCOMES,
    SNAPSHOT_LIMIT,
    Metrics,
    Snapshot,
)
from mcpkit.testing import TestClient

from .test_metrics import call, check_histograms, check_labels, parse, requests, scrape


@endpoint(path="/mcp", name="adder", version="1.0.0")
class Adder:
    @tool
    def add(self, a: int, b: int) -> str:
        """Adds."""
        return str(a + b)


class Peers:
    """A ``MetricsShare`` holding the other processes' snapshots, noting what it was given."""

    def __init__(self, *others: Snapshot) -> None:
        self.others = list(others)
        self.published: list[bytes] = []

    def exchange(self, own: Snapshot) -> list[Snapshot]:
        self.published.append(own.encode())
        return self.others


def counted(calls: int, *, limited: int = 0) -> Metrics:
    """The metrics of a server that answered ``calls`` tools/call (``limited`` of them
    refused by a rate limiter)."""
    bucket = TokenBucket(calls - limited, refill_tokens=1, refill_period_seconds=3600)
    server = Server(Adder, metrics=True, tool_rate_limiter=bucket)
    with TestClient(server) as client:
        for _ in range(calls):
            call(client, "add", {"a": 1, "b": 2})
    metrics = server.engine.metrics
    assert metrics is not None
    return metrics


def test_a_snapshot_survives_encoding() -> None:
    metrics = counted(4, limited=1)
    gauges = {"mcpkit_queued_requests": 2, "mcpkit_sessions": None}
    snapshot = metrics.snapshot(gauges)
    assert snapshot.gauges == {"mcpkit_queued_requests": 2}  # None: left out
    decoded = Snapshot.decode(snapshot.encode())
    assert decoded.encode() == snapshot.encode()
    assert decoded.denials == {"request": 0, "tool": 1}
    [(key, series)] = decoded.series.items()
    assert key == ("tools/call", "2026-07-28")
    assert series.outcomes[OUTCOMES.index("ok")] == 3
    assert series.outcomes[OUTCOMES.index("rate_limited")] == 1
    assert sum(series.buckets) == 4 and len(series.buckets) == len(BUCKETS) + 1
    # a float sum encoded as an integer (0) is still a sum
    document = json.loads(snapshot.encode())
    document["series"][0][4] = 0
    assert Snapshot.decode(json.dumps(document).encode()).series[key].total == 0.0


def test_the_exposition_sums_the_other_processes() -> None:
    here = counted(3)
    there = counted(5, limited=2)
    other = there.snapshot({"mcpkit_queued_requests": 4, "mcpkit_handler_slots_busy": 1})
    peers = Peers(Snapshot.decode(other.encode()))
    here.shared = peers
    found = parse(here.exposition({"mcpkit_queued_requests": 1, "mcpkit_handler_slots_busy": 0}))
    assert requests(found) == {
        ("tools/call", "2026-07-28", "ok"): 6,
        ("tools/call", "2026-07-28", "rate_limited"): 2,
    }
    check_histograms(found)
    check_labels(found)
    assert found.value("mcpkit_rate_limit_denials_total", target="tool") == 2
    assert found.value("mcpkit_queued_requests") == 5
    assert found.value("mcpkit_handler_slots_busy") == 1
    # this process published what it reported, and its own counts are unchanged by the sum
    assert [Snapshot.decode(data).series[("tools/call", "2026-07-28")].outcomes[0]
            for data in peers.published] == [3]  # fmt: skip
    here.shared = None
    assert requests(parse(here.exposition({}))) == {("tools/call", "2026-07-28", "ok"): 3}


def test_a_series_only_another_process_has_is_reported() -> None:
    here = Metrics()
    here.shared = Peers(counted(2).snapshot({}), counted(1).snapshot({}))
    found = parse(here.exposition({}))
    assert requests(found) == {("tools/call", "2026-07-28", "ok"): 3}
    check_histograms(found)


def test_restored_counts_go_on_from_the_snapshot() -> None:
    before = counted(3, limited=1)
    metrics = counted(2)
    metrics.restore(Snapshot.decode(before.snapshot({}).encode()))
    found = parse(metrics.exposition({}))
    assert requests(found) == {
        ("tools/call", "2026-07-28", "ok"): 2,
        ("tools/call", "2026-07-28", "rate_limited"): 1,
    }
    assert found.value("mcpkit_rate_limit_denials_total", target="tool") == 1


def test_a_server_counts_on_from_a_restored_snapshot() -> None:
    before = counted(3)
    server = Server(Adder, metrics=True)
    metrics = server.engine.metrics
    assert metrics is not None
    metrics.restore(before.snapshot({}))
    with TestClient(server) as client:
        call(client, "add", {"a": 1, "b": 2})
        found = scrape(client)
    assert requests(found) == {("tools/call", "2026-07-28", "ok"): 4}
    check_histograms(found)
    # the restored series is a copy: the snapshot it came from did not move
    assert before.snapshot({}).series[("tools/call", "2026-07-28")].outcomes[0] == 3


def _valid() -> dict[str, Any]:
    """A snapshot as ``encode`` writes it: one series, no denial, one gauge."""
    return {
        "series": [
            ["tools/call", "2026-07-28", [1] + [0] * (len(OUTCOMES) - 1), [1] + [0] * len(BUCKETS),
             0.001]
        ],
        "denials": {"request": 0, "tool": 0},
        "gauges": {"mcpkit_sessions": 0},
    }  # fmt: skip


def _series(**change: Any) -> dict[str, Any]:
    document = _valid()
    item = document["series"][0]
    for index, value in change.items():
        item[int(index[1:])] = value
    return document


def test_a_valid_document_is_a_snapshot() -> None:
    snapshot = Snapshot.decode(json.dumps(_valid()).encode())
    assert snapshot.gauges == {"mcpkit_sessions": 0}
    assert snapshot.series[("tools/call", "2026-07-28")].total == 0.001


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"x" * (SNAPSHOT_LIMIT + 1), "too large"),
        (b"\xff", "not JSON"),
        (b"{", "not JSON"),
        (b"[]", "not a snapshot"),
        (b'{"series":[],"denials":{}}', "not a snapshot"),
        (json.dumps({**_valid(), "series": {}}).encode(), "bad series"),
        (json.dumps({**_valid(), "series": [[]] * 10_000}).encode(), "bad series"),
        (json.dumps({**_valid(), "series": [7]}).encode(), "bad series"),
        (json.dumps({**_valid(), "series": _valid()["series"] * 2}).encode(), "a series twice"),
        (json.dumps(_series(i0="tools/other")).encode(), "unknown labels"),
        (json.dumps(_series(i1="1999-01-01")).encode(), "unknown labels"),
        (json.dumps(_series(i2=[0])).encode(), "bad outcomes"),
        (json.dumps(_series(i2="0")).encode(), "bad outcomes"),
        (json.dumps(_series(i3=[0])).encode(), "bad buckets"),
        (json.dumps(_series(i3={})).encode(), "bad buckets"),
        (json.dumps(_series(i4=-1.0)).encode(), "bad sum"),
        (json.dumps(_series(i4="1")).encode(), "bad sum"),
        (json.dumps(_series(i4=True)).encode(), "bad sum"),
        (json.dumps(_series(i4=float("inf"))).encode(), "not a number"),
        (json.dumps(_series(i4=float("nan"))).encode(), "not a number"),
        (json.dumps(_series(i2=[-1] * len(OUTCOMES))).encode(), "not a count"),
        (json.dumps(_series(i2=[True] * len(OUTCOMES))).encode(), "not a count"),
        (json.dumps(_series(i3=[0.5] * (len(BUCKETS) + 1))).encode(), "not a count"),
        (json.dumps({**_valid(), "denials": []}).encode(), "bad denials"),
        (json.dumps({**_valid(), "denials": {"request": 0}}).encode(), "bad denials"),
        (json.dumps({**_valid(), "denials": {"request": 0, "tool": "1"}}).encode(), "not a count"),
        (json.dumps({**_valid(), "gauges": []}).encode(), "bad gauges"),
        (json.dumps({**_valid(), "gauges": {"mcpkit_other": 1}}).encode(), "bad gauges"),
        (json.dumps({**_valid(), "gauges": {"mcpkit_sessions": -1}}).encode(), "not a count"),
    ],
)
def test_anything_but_a_snapshot_is_refused(data: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=f"^metrics snapshot: {message}$"):
        Snapshot.decode(data)
