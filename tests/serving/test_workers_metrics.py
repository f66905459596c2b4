"""The parts of ``mcpkit serve --workers`` that run inside one process, tested in this one: a
socket of its own for each worker (``bind_workers``), and each worker's share in the metrics of
all of them (``SharedMetrics``, the files in the supervisor's directory).  The real processes
are in tests/cli/test_workers.py."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import subprocess
from pathlib import Path
from typing import ClassVar

import pytest

from mcpkit import ConfigurationError, Server, endpoint, tool
from mcpkit.server._metrics import Snapshot
from mcpkit.serving import SharedMetrics, _workers, bind_workers, shared_metrics
from mcpkit.serving._workers import (
    METRICS_SHARE,
    _read_snapshot,
    _retire,
    _snapshot_path,
    _write_snapshot,
)
from mcpkit.testing import TestClient

from ..server.test_metrics import call, parse, requests


@endpoint(path="/mcp", name="adder", version="1.0.0")
class Adder:
    @tool
    def add(self, a: int, b: int) -> str:
        """Adds."""
        return str(a + b)


OK = ("tools/call", "2026-07-28", "ok")


def _close(groups: list[list[socket.socket]]) -> None:
    for group in groups:
        for listener in group:
            listener.close()


# --- sockets -------------------------------------------------------------------------------------


@pytest.mark.skipif(not _workers._REUSE_PORT, reason="SO_REUSEPORT balances on Linux only")
def test_each_worker_gets_a_socket_of_its_own_on_one_port() -> None:
    groups = bind_workers(Server(Adder, port=0), 3)
    try:
        assert len(groups) == 3 and all(len(group) == 1 for group in groups)
        names = {group[0].getsockname() for group in groups}
        assert len(names) == 1 and next(iter(names))[1] != 0
        assert len({group[0].fileno() for group in groups}) == 3
        for group in groups:
            assert group[0].getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT) == 1
    finally:
        _close(groups)


def test_without_so_reuseport_the_workers_share_one_socket(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_workers, "_REUSE_PORT", False)
    groups = bind_workers(Server(Adder, port=0), 3)
    try:
        assert len(groups) == 1 and len(groups[0]) == 1
        assert groups[0][0].getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT) == 0
    finally:
        _close(groups)


@pytest.mark.skipif(not _workers._REUSE_PORT, reason="SO_REUSEPORT balances on Linux only")
def test_a_port_another_server_listens_on_is_refused_even_with_so_reuseport() -> None:
    other = socket.socket()
    other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    other.bind(("127.0.0.1", 0))
    other.listen()
    try:
        port = other.getsockname()[1]
        with pytest.raises(OSError, match=r"cannot listen on .*another process listens there"):
            bind_workers(Server(Adder, port=port), 2)
    finally:
        other.close()


@pytest.mark.skipif(not _workers._REUSE_PORT, reason="SO_REUSEPORT balances on Linux only")
def test_when_so_reuseport_fails_the_workers_share_one_socket(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    bound: list[socket.socket] = []
    ports: list[int] = []
    real = Server.bind

    def bind(
        self: Server, *, port: int | None = None, reuse_port: bool = False
    ) -> list[socket.socket]:
        if reuse_port and bound:
            raise OSError(92, "Protocol not available")
        sockets = real(self, port=port, reuse_port=reuse_port)
        if reuse_port:
            bound.extend(sockets)
            ports.append(sockets[0].getsockname()[1])
        return sockets

    monkeypatch.setattr(Server, "bind", bind)
    with caplog.at_level(logging.WARNING, logger="mcpkit"):
        groups = bind_workers(Server(Adder, port=0), 2)
    try:
        assert len(groups) == 1
        assert groups[0][0].getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT) == 0
        assert groups[0][0].getsockname()[1] == ports[0]  # the same port
        assert bound[0].fileno() == -1  # the first worker's socket was closed
        assert "SO_REUSEPORT cannot give each worker a socket (Protocol not available)" in (
            caplog.text
        )
    finally:
        _close(groups)


# --- the snapshot files --------------------------------------------------------------------------


def _engine_with(calls: int) -> tuple[Server, TestClient]:
    server = Server(Adder, metrics=True)
    client = TestClient(server)
    client.__enter__()
    for _ in range(calls):
        assert call(client, "add", {"a": 1, "b": 2}).status == 200
    return server, client


def _snapshot(calls: int, gauges: dict[str, int | None]) -> Snapshot:
    server, client = _engine_with(calls)
    client.__exit__(None, None, None)
    metrics = server.engine.metrics
    assert metrics is not None
    return Snapshot.decode(metrics.snapshot(gauges).encode())


def test_a_dead_workers_file_keeps_its_counts_and_loses_its_gauges(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    directory = str(tmp_path)
    path = _snapshot_path(directory, 1)
    _retire(directory, 1)  # no file yet: nothing to do
    assert not os.path.exists(path)
    _write_snapshot(path, _snapshot(2, {"mcpkit_queued_requests": 3}).encode())
    _retire(directory, 1)
    retired = _read_snapshot(path)
    assert retired is not None and retired.gauges == {}
    assert retired.series[OK[:2]].outcomes[0] == 2
    written = os.stat(path).st_mtime_ns
    _retire(directory, 1)  # no gauge left: not written again
    assert os.stat(path).st_mtime_ns == written
    assert not caplog.text
    Path(path).write_bytes(b"{")
    _retire(directory, 1)
    assert "cannot clear the gauges of worker 1 from its metrics file" in caplog.text


def test_a_workers_share_publishes_reads_the_others_and_takes_over_a_dead_ones_counts(
    tmp_path: Path,
) -> None:
    directory = str(tmp_path)
    # worker 1 died having counted 3; worker 2 counted 5 and reports a queued request
    _write_snapshot(_snapshot_path(directory, 1), _snapshot(3, {}).encode())
    _write_snapshot(
        _snapshot_path(directory, 2), _snapshot(5, {"mcpkit_queued_requests": 1}).encode()
    )
    server, client = _engine_with(0)
    with client:
        shared = SharedMetrics(server.engine, directory, 1, 4)  # worker 1's replacement
        assert server.engine.metrics is not None and server.engine.metrics.shared is shared
        assert call(client, "add", {"a": 1, "b": 2}).status == 200
        found = parse(client.post("/metrics", b"", method="GET").body)
        # 3 inherited + 1 here + 5 from worker 2 (worker 0 and 3 have no file yet)
        assert requests(found) == {OK: 9}
        assert found.value("mcpkit_queued_requests") == 1
        own = _read_snapshot(_snapshot_path(directory, 1))  # published by the scrape
        assert own is not None and own.series[OK[:2]].outcomes[0] == 4
        written = os.stat(_snapshot_path(directory, 1)).st_mtime_ns
        shared.exchange(own)  # the same counts: not written again
        assert os.stat(_snapshot_path(directory, 1)).st_mtime_ns == written


def test_a_workers_share_publishes_while_serving_and_at_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_workers, "_PUBLISH_SECONDS", 0.01)
    directory = str(tmp_path)
    path = _snapshot_path(directory, 0)
    server, client = _engine_with(2)
    with client:
        shared = SharedMetrics(server.engine, directory, 0, 2)

        async def serving() -> Snapshot | None:
            shared.start()
            for _ in range(500):
                await asyncio.sleep(0.01)
                found = _read_snapshot(path)
                if found is not None:
                    return found
            return None  # pragma: no cover - the publication did not come

        published = asyncio.run(serving())
        assert published is not None and published.series[OK[:2]].outcomes[0] == 2
        assert published.gauges["mcpkit_queued_requests"] == 0  # a live worker's gauges
        shared.close()
        last = _read_snapshot(path)
        assert last is not None and last.gauges == {}  # gone with the worker
        assert last.series[OK[:2]].outcomes[0] == 2
    never_started = SharedMetrics(server.engine, directory, 1, 2)
    never_started.close()
    assert _read_snapshot(_snapshot_path(directory, 1)) is not None


def test_an_unreadable_or_unwritable_file_is_skipped_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    directory = str(tmp_path / "metrics")
    os.mkdir(directory)
    Path(_snapshot_path(directory, 1)).write_bytes(b"not a snapshot")
    server, client = _engine_with(1)
    with client:
        shared = SharedMetrics(server.engine, directory, 0, 2)
        found = parse(client.post("/metrics", b"", method="GET").body)
        assert requests(found) == {OK: 1}  # this worker's own counts, the other skipped
        os.remove(_snapshot_path(directory, 1))
        os.remove(_snapshot_path(directory, 0))
        os.rmdir(directory)  # gone: nothing can be written
        assert call(client, "add", {"a": 1, "b": 2}).status == 200
        found = parse(client.post("/metrics", b"", method="GET").body)
        assert requests(found) == {OK: 2}
        shared.close()
    warnings = [r for r in caplog.records if "metrics file cannot be read or written" in r.message]
    assert len(warnings) == 1


def test_a_worker_shares_its_metrics_only_when_its_supervisor_asks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = Server(Adder, metrics=True)
    assert shared_metrics(server) is None  # not a worker
    monkeypatch.setenv(METRICS_SHARE, f"0:2:{tmp_path}")
    assert shared_metrics(Server(Adder)) is None  # no metrics, nothing to share
    assert METRICS_SHARE not in os.environ
    monkeypatch.setenv(METRICS_SHARE, f"1:2:{tmp_path}:with:colons")
    shared = shared_metrics(server)
    assert isinstance(shared, SharedMetrics) and server.engine.metrics is not None
    assert server.engine.metrics.shared is shared
    for value in ("2:2:/tmp", "x:2:/tmp", "1:2:", "1:2", "1", "\u0661:2:/tmp", "100:200:/tmp"):
        monkeypatch.setenv(METRICS_SHARE, value)
        with pytest.raises(ConfigurationError, match=f"{METRICS_SHARE} is set by mcpkit serve"):
            shared_metrics(Server(Adder, metrics=True))


# --- the supervisor's part -----------------------------------------------------------------------


class FakeChild:
    """A ``subprocess.Popen`` that notes how it was started."""

    started: ClassVar[list[tuple[dict[str, str], tuple[int, ...]]]] = []

    def __init__(self, command: list[str], *, env: dict[str, str], pass_fds: tuple[int, ...]):
        FakeChild.started.append((env, tuple(pass_fds)))


def test_each_worker_is_handed_its_own_socket_and_the_metrics_directory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    FakeChild.started = []
    monkeypatch.setattr(subprocess, "Popen", FakeChild)
    seen: list[tuple[str, int]] = []

    def supervise(self: _workers.Supervisor) -> int:
        directory = self._directory
        assert directory is not None
        seen.append((directory, os.stat(directory).st_mode & 0o777))
        return 0

    monkeypatch.setattr(_workers.Supervisor, "_supervise", supervise)
    groups = [[socket.socket()], [socket.socket()]]
    fds = [group[0].fileno() for group in groups]
    assert _workers.Supervisor(["serve"], groups, 2, metrics=True).run() == 0
    [(directory, mode)] = seen
    assert mode == 0o700  # private to this user
    assert not os.path.exists(directory)  # removed once stopped
    assert all(group[0].fileno() == -1 for group in groups)  # closed once stopped
    [(first, first_fds), (second, second_fds)] = FakeChild.started
    assert (first_fds, second_fds) == ((fds[0],), (fds[1],))
    assert first[_workers.LISTEN_FDS] == str(fds[0]) and second[_workers.LISTEN_FDS] == str(fds[1])
    assert first[METRICS_SHARE] == f"0:2:{directory}"
    assert second[METRICS_SHARE] == f"1:2:{directory}"
    # without metrics, no directory; one group of sockets is every worker's
    FakeChild.started = []
    monkeypatch.setattr(_workers.Supervisor, "_supervise", lambda self: 0)
    shared = [socket.socket()]
    fd = shared[0].fileno()
    assert _workers.Supervisor(["serve"], [shared], 2).run() == 0
    assert [fds for _, fds in FakeChild.started] == [(fd,), (fd,)]
    assert all(METRICS_SHARE not in env for env, _ in FakeChild.started)
