"""``mcpkit dev``: the target resolved without importing it, the client configurations, the
supervisor's restarts and stops (in-process, with a stand-in child and change feed), the
watcher on a real directory, and one real run: serve, edit, see the new tool, Ctrl-C.

Servers listen on 127.0.0.1 on free ports and are stopped by PID.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpkit.cli import _dev, main
from mcpkit.cli._dev import DevTarget, client_configs, dev_target, supervise
from mcpkit.errors import ConfigurationError
from mcpkit.testing import stateless_headers, stateless_request

READY_SECONDS = 30.0
STOP_SECONDS = 15.0

APP = """\
from mcpkit import CompleteResult, Revision, Server, endpoint, tool


@endpoint(path="/mcp", name="devapp", version="1.0.0", revisions={Revision.V2026_07_28})
class DevApp:
    @tool(name="echo")
    def echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)
# more tools here


server = Server(DevApp)
"""

SHOUT = """\
    @tool(name="shout")
    def shout(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text.upper())
"""


# --- the target ---------------------------------------------------------------------------------


def test_a_file_target_is_made_absolute_and_its_directory_watched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "app.py").write_text(APP)
    monkeypatch.chdir(tmp_path)
    found = dev_target("app.py:server")
    absolute = f"{tmp_path / 'app.py'}:server"
    assert found == DevTarget(absolute, tmp_path, ("-m", "mcpkit", "serve", absolute), {})
    with pytest.raises(ConfigurationError, match=r"^mcpkit dev: no such file: gone\.py$"):
        dev_target("gone.py")


def test_a_module_target_is_looked_up_here_first_and_given_to_stdio_clients_by_pythonpath(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "dev_module_app.py").write_text(APP)
    package = tmp_path / "dev_package_app"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "main.py").write_text(APP)
    (tmp_path / "dev_namespace_app").mkdir()
    monkeypatch.chdir(tmp_path)
    path = list(sys.path)
    module = dev_target("dev_module_app")
    assert module == DevTarget(
        "dev_module_app",
        tmp_path,
        ("-m", "mcpkit", "serve", "dev_module_app"),
        {"PYTHONPATH": str(tmp_path)},
    )
    assert dev_target("dev_package_app.main:server").directory == package
    assert dev_target("dev_namespace_app.x").directory == tmp_path / "dev_namespace_app"
    assert sys.path == path  # looked up, not left on the path
    assert "dev_module_app" not in sys.modules  # nor imported
    for name in ("dev_absent_app", "sys", "not-a-name"):
        with pytest.raises(ConfigurationError) as caught:
            dev_target(name)
        top = name.partition(".")[0]
        assert str(caught.value) == f"mcpkit dev: no module named {top!r} here or on sys.path"


# --- client configurations ----------------------------------------------------------------------


def test_client_configurations_for_a_file_target() -> None:
    target = DevTarget("/srv/app.py", Path("/srv"), ("-m", "mcpkit", "serve", "/srv/app.py"), {})
    endpoint = {
        "name": "notes",
        "version": "1.2.0",
        "path": "/mcp",
        "url": "http://127.0.0.1:8000/mcp",
    }
    text = client_configs([endpoint], target)
    python = sys.executable
    args = ["-m", "mcpkit", "serve", "/srv/app.py", "--stdio", "--path", "/mcp"]
    url = "http://127.0.0.1:8000/mcp"
    assert (
        text
        == "\n".join(
            [
                f"notes 1.2.0 at {url}",
                "  Claude Code:",
                f"    claude mcp add --transport http notes {url}",
                "  VS Code (.vscode/mcp.json):",
                "    " + json.dumps({"servers": {"notes": {"type": "http", "url": url}}}),
                "  Cursor (.cursor/mcp.json):",
                "    " + json.dumps({"mcpServers": {"notes": {"url": url}}}),
                "  Claude Desktop (claude_desktop_config.json, stdio):",
                "    " + json.dumps({"mcpServers": {"notes": {"command": python, "args": args}}}),
                "  Codex (~/.codex/config.toml, stdio):",
                "    [mcp_servers.notes]",
                f"    command = {json.dumps(python)}",
                f"    args = {json.dumps(args)}",
                "  MCP Inspector:",
                f"    npx @modelcontextprotocol/inspector --transport http --server-url {url}",
                f"    npx @modelcontextprotocol/inspector --cli {url} --transport http "
                "--method tools/list",
            ]
        )
        + "\n"
    )


def test_client_configurations_for_a_module_and_names_that_need_quoting() -> None:
    target = DevTarget(
        "app", Path("/srv"), ("-m", "mcpkit", "serve", "app"), {"PYTHONPATH": "/srv"}
    )
    endpoints = [
        {"name": "my notes", "version": "1", "path": "/a", "url": "http://127.0.0.1:1/a"},
        {"name": "b", "version": "2", "path": "/b", "url": "http://127.0.0.1:1/b"},
    ]
    first, second = client_configs(endpoints, target).split("\n\n")
    assert "claude mcp add --transport http 'my notes' http://127.0.0.1:1/a" in first
    assert '    [mcp_servers."my notes"]\n' in first
    assert '    env = { PYTHONPATH = "/srv" }\n' in first
    desktop = json.loads(first.split("\n")[8])
    assert desktop["mcpServers"]["my notes"]["env"] == {"PYTHONPATH": "/srv"}
    assert desktop["mcpServers"]["my notes"]["args"][-2:] == ["--path", "/a"]
    assert second.startswith("b 2 at http://127.0.0.1:1/b\n") and second.endswith("\n")


# --- the supervisor -----------------------------------------------------------------------------


class FakeChild:
    """A child process: ``exit_with`` ends it; a signal ends it with 0 unless ``stubborn``."""

    def __init__(self, ready: Path | None = None, *, stubborn: bool = False) -> None:
        self.status: int | None = None
        self.signals: list[int] = []
        self.killed = False
        self.stubborn = stubborn
        if ready is not None:
            ready.write_text(json.dumps([{"name": "x"}]))

    def poll(self) -> int | None:
        return self.status

    def send_signal(self, sig: int, /) -> None:
        self.signals.append(sig)
        if not self.stubborn:
            self.status = 0

    def wait(self, timeout: float | None = None) -> int:
        if self.status is None:
            raise subprocess.TimeoutExpired("child", timeout or 0)
        return self.status

    def kill(self) -> None:
        self.killed = True
        self.status = -9


def feed(*steps: bool) -> Iterator[bool]:
    """Changes to the supervisor: ``True`` a change, ``False`` a quiet tick; then it ends."""
    yield from steps


def test_the_first_child_failing_ends_dev_with_its_status(tmp_path: Path) -> None:
    ready = tmp_path / "ready.json"
    for status, expected in ((2, 2), (1, 1), (-15, 2), (0, 2)):
        child = FakeChild()
        child.status = status
        shown: list[object] = []

        def spawn(child: FakeChild = child) -> FakeChild:
            return child

        result = supervise(spawn, ready, feed(False), threading.Event(), shown.append)
        assert (result, shown) == (expected, [])
        assert child.signals == []  # it had ended: nothing to stop


def test_restarts_on_a_change_and_waits_after_a_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ready = tmp_path / "ready.json"
    children: list[FakeChild] = []
    stop = threading.Event()

    def spawn() -> FakeChild:
        children.append(FakeChild(ready if not children else None))
        return children[-1]

    shown: list[object] = []

    def changes() -> Iterator[bool]:
        yield False  # the first child is ready: configurations shown once
        yield True  # a change: the first child is stopped, a second started
        children[-1].status = 1  # the edit broke it
        yield False  # noticed: waits for the next change
        yield False
        yield True  # a change: a third child
        yield False
        stop.set()
        yield False

    assert supervise(spawn, ready, changes(), stop, shown.append) == 0
    assert shown == [[{"name": "x"}]]
    first, second, third = children
    assert first.signals == [signal.SIGTERM] and second.signals == []
    assert third.signals == [signal.SIGTERM]  # stopped on the way out
    assert capsys.readouterr().err == (
        "mcpkit dev: a .py file changed; restarting\n"
        "mcpkit dev: the server exited with status 1; waiting for a change\n"
        "mcpkit dev: a .py file changed; restarting\n"
    )


def test_a_child_that_does_not_stop_in_time_is_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Here the change feed ends (as the watcher does once ``stop`` is set)."""
    child = FakeChild(tmp_path / "ready.json", stubborn=True)
    stop = threading.Event()
    monkeypatch.setattr(_dev, "_STOP_WAIT", 0.01)
    assert supervise(lambda: child, tmp_path / "ready.json", feed(False), stop, print) == 0
    assert child.signals == [signal.SIGTERM] and child.killed


def test_the_watcher_reports_python_changes_and_ends_when_stopped(tmp_path: Path) -> None:
    stop = threading.Event()
    seen: list[bool] = []

    def edit() -> None:
        time.sleep(0.5)
        (tmp_path / "notes.txt").write_text("not python")
        (tmp_path / "app.py").write_text("x = 1\n")

    writer = threading.Thread(target=edit)
    writer.start()
    deadline = time.monotonic() + READY_SECONDS
    for changed in _dev._changes(tmp_path, stop):
        seen.append(changed)
        if changed or time.monotonic() > deadline:
            stop.set()
    writer.join()
    assert seen[-1] is True and False in seen  # quiet ticks, then the change


def test_dev_runs_the_supervisor_and_a_signal_stops_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "app.py").write_text(APP)
    monkeypatch.chdir(tmp_path)
    commands: list[list[str]] = []

    def popen(command: list[str], **options: Any) -> FakeChild:
        commands.append(command)
        assert options == {"stdin": subprocess.DEVNULL}
        ready = Path(command[command.index("--ready-file") + 1])
        child = FakeChild()
        ready.write_text(json.dumps([{"name": "devapp", "version": "1.0.0", "path": "/mcp",
                                      "url": "http://127.0.0.1:8123/mcp"}]))  # fmt: skip
        return child

    def changes(directory: Path, stop: threading.Event) -> Iterator[bool]:
        assert directory == tmp_path
        yield False
        os.kill(os.getpid(), signal.SIGINT)  # as Ctrl-C: the handler sets stop
        yield False
        raise AssertionError("not stopped")  # pragma: no cover - only if the signal was lost

    monkeypatch.setattr(subprocess, "Popen", popen)
    monkeypatch.setattr(_dev, "_changes", changes)
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    assert main(["dev", "app.py", "--port", "8123"]) == 0
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
    (command,) = commands
    assert command[:12] == [
        sys.executable, "-m", "mcpkit", "serve", str(tmp_path / "app.py"), "--host", "127.0.0.1",
        "--port", "8123", "--debug", "--drain", "2.0",
    ]  # fmt: skip
    assert not Path(command[-1]).exists()  # the scratch directory is gone
    out, err = capsys.readouterr()
    assert out.startswith("devapp 1.0.0 at http://127.0.0.1:8123/mcp\n  Claude Code:\n")
    assert err == (
        f"mcpkit dev: restarting when a .py file under {tmp_path} changes; Ctrl-C stops\n"
    )


def test_dev_with_a_target_that_does_not_exist_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["dev", "gone.py"]) == 2
    assert capsys.readouterr().err == "mcpkit: mcpkit dev: no such file: gone.py\n"


# --- a real run ---------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def tool_names(port: int) -> list[str] | None:
    """``tools/list`` at ``/mcp``; ``None`` while nothing answers with a list (a restart
    refuses what arrives while it drains)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5.0)
    body = json.dumps(stateless_request("tools/list")).encode()
    try:
        connection.request("POST", "/mcp", body, stateless_headers("tools/list"))
        response = connection.getresponse()
        message = json.loads(response.read())
    except (OSError, ValueError):
        return None
    finally:
        connection.close()
    if "result" not in message:
        return None
    return [tool["name"] for tool in message["result"]["tools"]]


def wait_until(check: Any, process: subprocess.Popen[bytes], logs: list[Path]) -> Any:
    deadline = time.monotonic() + READY_SECONDS
    while (value := check()) is None or value is False:
        assert process.poll() is None, [log.read_text() for log in logs]
        assert time.monotonic() < deadline, [log.read_text() for log in logs]
        time.sleep(0.1)
    return value


def test_mcpkit_dev_serves_reloads_on_an_edit_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    app.write_text(APP)
    port = free_port()
    out, err = tmp_path / "stdout.log", tmp_path / "stderr.log"
    command = [sys.executable, "-m", "mcpkit", "dev", "app.py", "--port", str(port)]
    with out.open("wb") as stdout, err.open("wb") as stderr:
        # Its own session: should the test fail midway, the group (it and its child) is killed.
        process = subprocess.Popen(
            command,
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
        logs = [out, err]
        try:
            url = f"http://127.0.0.1:{port}/mcp"
            wait_until(
                lambda: f"mcpkit: serving devapp 1.0.0 at {url}" in err.read_text(), process, logs
            )
            assert wait_until(lambda: tool_names(port), process, logs) == ["echo"]
            wait_until(lambda: "--method tools/list" in out.read_text(), process, logs)
            time.sleep(0.5)  # the watcher is running by the time the configurations are out
            app.write_text(APP.replace("# more tools here\n", SHOUT))
            wait_until(lambda: tool_names(port) == ["echo", "shout"], process, logs)
            process.send_signal(signal.SIGINT)
            status = process.wait(STOP_SECONDS)
        finally:
            if process.poll() is None:  # pragma: no cover - only when the test failed midway
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(STOP_SECONDS)
    printed, logged = out.read_text(), err.read_text()
    assert status == 0, logged
    assert "Traceback" not in logged and "KeyboardInterrupt" not in logged
    assert printed.count(f"claude mcp add --transport http devapp {url}") == 1  # once, at start
    assert logged.count("mcpkit dev: a .py file changed; restarting") == 1
    assert logged.count("mcpkit: serving devapp 1.0.0") == 2
    assert logged.splitlines()[-1] == "mcpkit: stopped: 0 call(s) finished"
    assert tool_names(port) is None  # the child is gone too
