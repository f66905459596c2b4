"""``mcpkit serve --workers N``: refused while any store lives in one process, and otherwise N
real processes on one address, supervised: a worker that dies is replaced, SIGTERM stops
them all.  On Linux each worker has a socket of its own (SO_REUSEPORT), so the kernel spreads
connections evenly, and a replacement takes over its predecessor's socket; elsewhere they
share one.  With metrics on, a scrape of any worker reports the sum of all of them, and the
totals never go backwards when a worker dies."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import socket
import sys
import textwrap
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mcpkit import (
    Keyring,
    MemoryTaskStore,
    RedisBroadcaster,
    Revision,
    Server,
    TaskSupport,
    TokenBucket,
    endpoint,
    tool,
)
from mcpkit.cli import main
from mcpkit.serving import _workers, inherited_sockets, single_process_reasons
from mcpkit.serving._workers import (
    LISTEN_FDS,
    METRICS_SHARE,
    Supervisor,
    _read_snapshot,
    _snapshot_path,
)
from mcpkit.testing import stateless_headers, stateless_request

from ..interop.conftest import free_port
from ..server.test_metrics import Scrape, parse

TARGET = """\
import os

from mcpkit import endpoint, tool

if os.environ.get("FAIL_IN_WORKER") and os.environ.get("MCPKIT_LISTEN_FDS"):
    raise SystemExit("this worker cannot start")


@endpoint(path="/mcp", name="pids", version="1.0.0")
class Pids:
    @tool
    def pid(self) -> str:
        \"\"\"The process that answered.\"\"\"
        return str(os.getpid())
"""


@endpoint(path="/mcp", name="stateless", version="1.0.0")
class Stateless:
    @tool
    def ping(self) -> str:
        """Answers."""
        return "pong"


@endpoint(path="/mcp", name="sessions", version="1.0.0", session_revisions={Revision.V2025_11_25})
class Sessions:
    @tool
    def ping(self) -> str:
        """Answers."""
        return "pong"


def test_a_stateless_server_may_have_workers() -> None:
    assert single_process_reasons(Server(Stateless)) == []


def test_every_store_of_one_process_is_named() -> None:
    reasons = single_process_reasons(
        Server(
            Sessions,
            rate_limiters={"bucket": TokenBucket()},
            tool_rate_limiter="bucket",
            keyring=Keyring.development_ephemeral(),
        )
    )
    assert [reason.split(" ")[0:2] for reason in reasons] == [
        ["2025", "sessions"],
        ["session", "streams"],
        ["change", "notifications"],
        ["a", "TokenBucket"],
        ["the", "keyring"],
    ]


def test_tasks_and_keyrings_are_named() -> None:
    @endpoint(path="/mcp", name="tasks", version="1.0.0")
    class Tasks:
        @tool(task_support=TaskSupport.OPTIONAL)
        def slow(self) -> str:
            """Runs as a task."""
            return "done"

    reasons = single_process_reasons(
        Server(Tasks, task_store=MemoryTaskStore(), keyring=Keyring.development_ephemeral())
    )
    assert [reason.split(" ")[0:2] for reason in reasons] == [["tasks", "are"], ["the", "keyring"]]


def test_a_shared_broadcaster_is_not_named() -> None:
    broadcaster = RedisBroadcaster("redis://127.0.0.1:1")
    try:
        reasons = single_process_reasons(Server(Sessions, broadcaster=broadcaster))
        assert not any(reason.startswith("change notifications") for reason in reasons)
    finally:
        broadcaster.close(timeout=1)


@pytest.fixture
def target(tmp_path: Path) -> Path:
    path = tmp_path / "pids.py"
    path.write_text(TARGET)
    return path


def test_refusals(target: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sessions = tmp_path / "sessions.py"
    sessions.write_text(
        textwrap.dedent(
            """\
            from mcpkit import Revision, endpoint, tool

            @endpoint(path="/mcp", name="s", version="1", session_revisions={Revision.V2025_11_25})
            class S:
                @tool
                def ping(self) -> str:
                    \"\"\"Answers.\"\"\"
                    return "pong"
            """
        )
    )
    assert main(["serve", str(sessions), "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert "--workers: this server keeps state in its own process" in err
    assert "MemorySessionStore" in err
    assert main(["serve", str(target), "--workers", "0"]) == 2
    assert main(["serve", str(target), "--workers", "65"]) == 2
    assert main(["serve", str(target), "--workers", "2", "--stdio"]) == 2
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    try:
        port = busy.getsockname()[1]
        assert main(["serve", str(target), "--workers", "2", "--port", str(port)]) == 2
        assert "cannot listen" in capsys.readouterr().err
    finally:
        busy.close()


def ask_pid(port: int, timeout: float = 5) -> str:
    body = json.dumps(stateless_request("tools/call", {"name": "pid", "arguments": {}})).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp",
        data=body,
        headers={**stateless_headers("tools/call", "pid"), "Connection": "close"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        text: str = json.loads(response.read())["result"]["content"][0]["text"]
        return text


def wait_serving(port: int, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            ask_pid(port)
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def pids_seen(port: int, workers: int = 2, seconds: float = 30.0) -> set[str]:
    """The processes that answer, asked until ``workers`` of them have (one socket shared by
    several processes: which one accepts a connection is the kernel's choice)."""
    seen: set[str] = set()
    deadline = time.monotonic() + seconds
    while len(seen) < workers and time.monotonic() < deadline:
        seen.add(ask_pid(port))
    return seen


def test_workers_share_the_port_are_replaced_and_stop_together(
    target: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr("mcpkit.serving._workers._MIN_UPTIME", 0.5)  # serving a while: 0.5 s
    monkeypatch.setattr(_workers, "_REUSE_PORT", False)  # one socket, as where it is missing
    caplog.set_level(logging.INFO, logger="mcpkit")
    port = free_port()
    results: list[int] = []
    pids: list[set[str]] = []

    def client() -> None:
        try:
            wait_serving(port)
            first = pids_seen(port)
            pids.append(first)
            time.sleep(0.6)
            os.kill(int(next(iter(first))), signal.SIGKILL)  # a worker dies
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:  # another takes its place
                now = pids_seen(port, seconds=2)
                if len(now) == 2 and not now & {next(iter(first))}:
                    break
                time.sleep(0.2)
            pids.append(now)
        finally:
            os.kill(os.getpid(), signal.SIGTERM)  # the supervisor's stop

    thread = threading.Thread(target=client)
    thread.start()
    results.append(main(["serve", str(target), "--workers", "2", "--port", str(port)]))
    thread.join()
    assert results == [0]
    assert "2 workers sharing one socket (no SO_REUSEPORT balancing here)" in caplog.text
    first, after = pids
    assert len(first) == 2  # the kernel spread the connections over both workers
    assert len(after) == 2 and first != after
    with pytest.raises(OSError):
        ask_pid(port)  # everything stopped


def test_a_worker_that_cannot_start_stops_them_all(
    target: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAIL_IN_WORKER", "1")
    started = time.monotonic()
    assert main(["serve", str(target), "--workers", "2", "--port", str(free_port())]) == 2
    assert time.monotonic() - started < 30


def test_the_command_carries_the_options(target: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commands: list[list[str]] = []

    def run(self: Supervisor) -> int:
        commands.append(self._command)
        groups.append(len(self._listeners))
        shared.append(self._metrics)
        for group in self._listeners:
            for listener in group:
                assert listener.getsockname()[1] == port
                listener.close()
        return 0

    groups: list[int] = []
    shared: list[bool] = []

    monkeypatch.setattr(Supervisor, "run", run)
    port = free_port()
    options = ["--workers", "3", "--port", str(port), "--allowed-host", "a.example",
               "--trusted-proxy", "10.0.0.5", "--loop", "asyncio", "--drain", "2",
               "--debug", "--metrics", "--health", "--tracing"]  # fmt: skip
    assert main(["serve", str(target), *options]) == 0
    assert commands == [
        [sys.executable, "-m", "mcpkit", "serve", str(target), "--port", str(port),
         "--host", "127.0.0.1", "--allowed-host", "a.example", "--trusted-proxy", "10.0.0.5",
         "--loop", "asyncio", "--drain", "2.0", "--debug", "--metrics", "--health",
         "--tracing"]
    ]  # fmt: skip
    assert groups == [3 if _workers._REUSE_PORT else 1]  # a socket for each worker, on Linux
    assert shared == [True]  # --metrics: summed over the workers


def test_the_operations_flags(target: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    served: list[Server] = []
    monkeypatch.setattr(Server, "run", lambda self, **options: served.append(self))
    for flags in (["--metrics", "--health", "--tracing"], ["--metrics"], []):
        assert main(["serve", str(target), *flags]) == 0
    assert [(s.metrics, s.health, s.tracing) for s in served] == [
        ("/metrics", True, True),
        ("/metrics", False, False),
        (None, False, False),
    ]


def test_stdio_refuses_the_http_only_flags(
    target: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", str(target), "--stdio", "--health"]) == 2
    assert "--metrics and --health are HTTP routes" in capsys.readouterr().err
    assert main(["serve", str(target), "--stdio", "--tracing"]) == 2
    assert "--tracing traces HTTP, not --stdio" in capsys.readouterr().err


def test_a_worker_serves_the_sockets_it_inherits(monkeypatch: pytest.MonkeyPatch) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    try:
        monkeypatch.setenv(LISTEN_FDS, str(listener.fileno()))
        inherited = inherited_sockets()
        assert inherited is not None
        assert [sock.getsockname() for sock in inherited] == [listener.getsockname()]
        assert LISTEN_FDS not in os.environ
        assert inherited_sockets() is None
        for sock in inherited:
            sock.detach()  # the same descriptor as listener's
    finally:
        listener.close()


def test_the_other_workers_do_not_announce(target: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    served: list[object] = []
    monkeypatch.setattr(Server, "run", lambda self, **options: served.append(options))
    monkeypatch.setenv("MCPKIT_WORKER_QUIET", "1")
    logger = logging.getLogger("mcpkit")
    level = logger.level
    try:
        assert main(["serve", str(target)]) == 0
        assert logger.level == logging.WARNING
        assert "MCPKIT_WORKER_QUIET" not in os.environ
    finally:
        logger.setLevel(level)
    assert served == [{"started": None, "sockets": None}]


def test_a_server_runs_on_sockets_bound_before() -> None:
    server = Server(Stateless, port=0)
    listeners = server.bind()
    port = listeners[0].getsockname()[1]
    answered: list[int] = []

    def started() -> None:
        def ask_then_stop() -> None:
            body = json.dumps(stateless_request("tools/list")).encode()
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/mcp",
                data=body,
                headers=stateless_headers("tools/list"),
                method="POST",
            )
            try:
                with urllib.request.urlopen(request, timeout=5) as response:
                    answered.append(response.status)
            finally:
                os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=ask_then_stop).start()

    server.run(started=started, sockets=listeners)
    assert answered == [200]


def test_a_worker_publishes_its_metrics_for_the_others(
    target: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker side of ``--workers N --metrics`` in this process: the supervisor's
    directory, named in the environment, gets this worker's snapshot while it serves and a
    last one, without gauges, when it stops."""
    published: list[dict[str, int]] = []
    directory = str(tmp_path)

    def run(self: Server, *, started: object, sockets: object) -> None:
        async def serving() -> None:
            assert callable(started)
            started()
            for _ in range(500):
                await asyncio.sleep(0.01)
                snapshot = _read_snapshot(_snapshot_path(directory, 1))
                if snapshot is not None:
                    published.append(snapshot.gauges)
                    return

        asyncio.run(serving())

    monkeypatch.setattr(Server, "run", run)
    monkeypatch.setattr(_workers, "_PUBLISH_SECONDS", 0.01)
    ready = tmp_path / "ready.json"
    for options in (["--ready-file", str(ready)], []):
        Path(_snapshot_path(directory, 1)).unlink(missing_ok=True)  # each run writes it
        monkeypatch.setenv(METRICS_SHARE, f"1:2:{directory}")
        assert main(["serve", str(target), "--metrics", *options]) == 0
        assert METRICS_SHARE not in os.environ
        last = _read_snapshot(_snapshot_path(directory, 1))
        assert last is not None and last.gauges == {}  # gone with the worker
    assert [sorted(gauges) for gauges in published] == [sorted(_GAUGES)] * 2  # while serving
    assert json.loads(ready.read_text())[0]["name"] == "pids"
    monkeypatch.setattr(Server, "run", lambda self, **options: None)
    ready.unlink()
    assert main(["serve", str(target), "--ready-file", str(ready)]) == 0  # not a worker
    assert not ready.exists()  # (the run above never started)


_GAUGES = (
    "mcpkit_handler_slots_busy",
    "mcpkit_queued_requests",
    "mcpkit_sessions",
    "mcpkit_listen_streams",
    "mcpkit_tasks_running",
)


def test_a_malformed_metrics_share_is_refused(
    target: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(Server, "run", lambda self, **options: None)
    monkeypatch.setenv(METRICS_SHARE, "no")
    assert main(["serve", str(target), "--metrics"]) == 2
    assert f"{METRICS_SHARE} is set by mcpkit serve --workers for its workers" in (
        capsys.readouterr().err
    )


def serve_in_thread(target: Path, port: int, options: list[str], client: Callable[[], None]) -> int:
    """``mcpkit serve --workers 2`` in this thread (its supervisor takes the signals) while
    ``client`` runs in another; SIGTERM stops the server when ``client`` ends."""
    failures: list[BaseException] = []

    def run_client() -> None:
        try:
            client()
        except BaseException as error:  # reported by the test, after the server stopped
            failures.append(error)
        finally:
            os.kill(os.getpid(), signal.SIGTERM)

    thread = threading.Thread(target=run_client)
    thread.start()
    code = main(["serve", str(target), "--workers", "2", "--port", str(port), *options])
    thread.join()
    if failures:
        raise failures[0]
    return code


@pytest.mark.skipif(not _workers._REUSE_PORT, reason="SO_REUSEPORT balances on Linux only")
def test_each_worker_has_its_own_socket_and_a_fair_share_of_the_connections(
    target: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr("mcpkit.serving._workers._MIN_UPTIME", 0.5)  # serving a while: 0.5 s
    caplog.set_level(logging.INFO, logger="mcpkit")
    port = free_port()
    counts: Counter[str] = Counter()
    after: list[str] = []

    def client() -> None:
        wait_serving(port)
        pids_seen(port)  # both listen: until then the first one takes every connection
        # fresh connections, one request each: the kernel picks a socket by the connection
        counts.update(ask_pid(port, timeout=60) for _ in range(200))
        victim = next(iter(counts))
        os.kill(int(victim), signal.SIGKILL)
        # connections the kernel gives the dead worker's socket wait for its replacement
        with ThreadPoolExecutor(20) as pool:
            after.extend(pool.map(lambda _: ask_pid(port, timeout=60), range(20)))

    assert serve_in_thread(target, port, [], client) == 0
    assert "2 workers, each on its own socket (SO_REUSEPORT)" in caplog.text
    assert len(counts) == 2 and min(counts.values()) >= 40, counts  # each at least 20%
    victim = next(iter(counts))
    assert len(after) == 20 and victim not in after
    assert set(after) - set(counts), after  # the replacement served on the dead one's socket
    with pytest.raises(OSError):
        ask_pid(port)  # everything stopped


def scrape_port(port: int) -> Scrape:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/metrics", headers={"Connection": "close"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return parse(response.read())


def calls_counted(found: Scrape) -> tuple[float, float]:
    """The ``tools/call`` messages in a scrape: by ``mcpkit_requests_total``, and by the
    latency histogram's count."""
    total = sum(
        s.value
        for s in found.samples
        if s.name == "mcpkit_requests_total" and s.labels["method"] == "tools/call"
    )
    timed = sum(
        s.value
        for s in found.samples
        if s.name == "mcpkit_request_duration_seconds_count" and s.labels["method"] == "tools/call"
    )
    return total, timed


def test_metrics_are_summed_over_the_workers_and_never_go_backwards(
    target: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("mcpkit.serving._workers._MIN_UPTIME", 0.5)  # serving a while: 0.5 s
    port = free_port()
    seen: list[float] = []  # every total scraped, in order
    made = [0]  # the tools/call answered

    def ask() -> str:
        pid = ask_pid(port, timeout=60)
        made[0] += 1
        return pid

    def settled() -> Scrape:
        """Scrapes until the total is the calls made (a worker publishes every quarter of a
        second): it is never more, and never less than a total scraped before."""
        deadline = time.monotonic() + 60
        while True:
            found = scrape_port(port)
            total, timed = calls_counted(found)
            assert total == timed and (not seen or total >= seen[-1]) and total <= made[0]
            seen.append(total)
            if total == made[0] or time.monotonic() > deadline:
                return found
            time.sleep(0.1)

    pids: list[set[str]] = []

    def client() -> None:
        wait_serving(port)
        made[0] += 1
        answered = {ask() for _ in range(60)}
        while len(answered) < 2:  # both workers counted some
            answered.add(ask())
        pids.append(answered)
        found = settled()
        assert found.value("mcpkit_queued_requests") == 0  # gauges: summed, here idle
        assert found.value("mcpkit_handler_slots_busy") == 0
        assert seen[-1] == made[0]
        os.kill(int(next(iter(answered))), signal.SIGKILL)
        later: set[str] = set()
        while not later - answered:  # until the replacement answers
            later.add(ask())
            settled()
        pids.append(later)
        for _ in range(20):
            ask()
        settled()

    assert serve_in_thread(target, port, ["--metrics"], client) == 0
    assert seen[-1] == made[0] > 80
    assert seen == sorted(seen)  # never backwards, a worker killed on the way
    before, after = pids
    assert len(before) == 2 and after - before
