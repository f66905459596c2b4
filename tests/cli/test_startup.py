"""``mcpkit serve`` as a person meets it, in real processes: the URL of each endpoint printed
once the server listens, a start-up failure in one line with no traceback and status 2, Ctrl-C
(SIGINT) and SIGTERM ending with one ``stopped`` line and status 0, and a module found in the
working directory by the console script.

Servers listen on 127.0.0.1 on free ports and are stopped by PID.
"""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcpkit.testing import stateless_request

ROOT = Path(__file__).resolve().parents[2]
READY_SECONDS = 30.0
STOP_SECONDS = 15.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def stop(process: subprocess.Popen[bytes]) -> None:
    """The test's own cleanup: kill what is still running."""
    if process.poll() is None:  # pragma: no cover - only when a test failed midway
        process.kill()
        process.wait(STOP_SECONDS)


def wait_for_line(log: Path, pattern: str, process: subprocess.Popen[bytes]) -> str:
    """The first line of ``log`` matching ``pattern``, waiting while the process runs."""
    deadline = time.monotonic() + READY_SECONDS
    while True:
        text = log.read_text(errors="replace")
        found = re.search(pattern, text, re.MULTILINE)
        if found is not None:
            return found.group(0)
        assert process.poll() is None, text
        assert time.monotonic() < deadline, text
        time.sleep(0.05)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_the_url_is_printed_once_listening_and_a_signal_stops_cleanly(
    tmp_path: Path, sig: signal.Signals
) -> None:
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "mcpkit",
        "serve",
        "examples/inventory.py",
        "--port",
        str(port),
    ]
    log = tmp_path / "stderr.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.DEVNULL, stderr=stderr)
        try:
            line = wait_for_line(log, r"^mcpkit: serving \S+ \S+ at .*$", process)
            url = f"http://127.0.0.1:{port}/"
            assert line.startswith("mcpkit: serving inventory ") and f" at {url}" in line
            with socket.create_connection(("127.0.0.1", port), timeout=5):
                pass  # it listens by the time it says so
            process.send_signal(sig)
            status = process.wait(STOP_SECONDS)
        finally:
            stop(process)
    text = log.read_text()
    assert status == 0, text
    assert "Traceback" not in text and "KeyboardInterrupt" not in text
    assert text.splitlines()[-1] == "mcpkit: stopped: 0 call(s) finished"


def test_a_busy_port_is_one_line_with_status_2_and_no_serving_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        completed = subprocess.run(
            [sys.executable, "-m", "mcpkit", "serve", "examples/inventory.py", "--port", str(port)],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=60,
            check=False,
        )
    assert completed.returncode == 2
    assert completed.stdout == b""
    assert completed.stderr.decode() == (
        f"mcpkit: Server: cannot listen on http://127.0.0.1:{port}: Address already in use "
        "(another process listens there: stop it or choose another port)\n"
    )


@pytest.mark.parametrize(
    ("argv", "start", "hint"),
    [
        (["serve", "absent.py"], "mcpkit: mcpkit serve: no such file: absent.py", "absent.py"),
        (
            ["serve", "examples/inventory.py", "--host", "0.0.0.0"],
            "mcpkit: Server: binding a non-loopback host requires allowed_hosts",
            "--allowed-host NAME",
        ),
    ],
)
def test_a_bad_target_or_option_is_one_line_with_status_2(
    argv: list[str], start: str, hint: str
) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "mcpkit", *argv],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
    )
    err = completed.stderr.decode()
    assert completed.returncode == 2
    assert err.startswith(start) and hint in err and err.count("\n") == 1


NOTES = """\
from mcpkit import CompleteResult, Revision, Server, endpoint, tool


@endpoint(path="/mcp", name="notes", version="1.0.0", revisions={Revision.V2026_07_28})
class Notes:
    @tool(name="echo")
    def echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)


server = Server(Notes)
"""


def test_the_console_script_finds_a_module_in_the_working_directory(tmp_path: Path) -> None:
    """``mcpkit serve notes`` (the installed script, whose ``sys.path[0]`` is its own directory)
    serves ``./notes.py`` as ``python -m mcpkit serve notes`` does."""
    (tmp_path / "notes.py").write_text(NOTES)
    script = Path(sys.executable).with_name("mcpkit")
    line = json.dumps(
        stateless_request("tools/call", {"name": "echo", "arguments": {"text": "found"}})
    )
    completed = subprocess.run(
        [str(script), "serve", "notes", "--stdio"],
        cwd=tmp_path,
        input=line.encode() + b"\n",
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    answer = json.loads(completed.stdout)
    assert answer["result"]["content"] == [{"type": "text", "text": "found"}]
