"""``mcpkit serve --workers N``: refused while any store lives in one process, and otherwise N
real processes on one socket, supervised: a worker that dies is replaced, SIGTERM stops
them all."""

from __future__ import annotations

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
from mcpkit.serving import inherited_sockets, single_process_reasons
from mcpkit.serving._workers import LISTEN_FDS, Supervisor
from mcpkit.testing import stateless_headers, stateless_request

from ..interop.conftest import free_port

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


def ask_pid(port: int) -> str:
    body = json.dumps(stateless_request("tools/call", {"name": "pid", "arguments": {}})).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp",
        data=body,
        headers={**stateless_headers("tools/call", "pid"), "Connection": "close"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=5) as response:
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
    target: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("mcpkit.serving._workers._MIN_UPTIME", 0.5)  # serving a while: 0.5 s
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
        for listener in self._listeners:
            listener.close()
        return 0

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
