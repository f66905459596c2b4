"""The server under test for the interop tests: ``mcpkit serve examples/everything.py`` in a
subprocess on a free loopback port, started once for the session and stopped by its PID."""

from __future__ import annotations

import http.client
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / "examples" / "everything.py"
PATH = "/mcp"
READY_SECONDS = 30.0
STOP_SECONDS = 10.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def answers(port: int) -> bool:
    """Whether an HTTP server answers on ``port`` (any status will do)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1.0)
    try:
        connection.request("GET", PATH)
        connection.getresponse().read()
    except OSError:
        return False
    finally:
        connection.close()
    return True


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate ``process`` (by its PID), then kill it if it does not exit in time."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(STOP_SECONDS)


def server_stderr(log: IO[bytes]) -> str:
    log.flush()
    log.seek(0)
    return log.read().decode("utf-8", "replace")


@pytest.fixture(scope="session")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``http://127.0.0.1:<port>/mcp`` of a running ``mcpkit serve examples/everything.py``."""
    port = free_port()
    log_path = tmp_path_factory.mktemp("interop-server") / "stderr.log"
    command = [
        sys.executable, "-m", "mcpkit", "serve", str(EVERYTHING),
        "--host", "127.0.0.1", "--port", str(port),
    ]  # fmt: skip
    with log_path.open("w+b") as log:
        process = subprocess.Popen(
            command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
        )
        try:
            deadline = time.monotonic() + READY_SECONDS
            while not answers(port):
                if process.poll() is not None:
                    pytest.fail(
                        f"mcpkit serve exited with {process.returncode} before answering:\n"
                        + server_stderr(log)
                    )
                if time.monotonic() > deadline:
                    pytest.fail(
                        f"mcpkit serve did not answer on port {port} within {READY_SECONDS} s:\n"
                        + server_stderr(log)
                    )
                time.sleep(0.1)
            yield f"http://127.0.0.1:{port}{PATH}"
        finally:
            stop(process)
