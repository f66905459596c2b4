"""The server under test for the interop tests: ``mcpkit serve examples/everything.py`` in a
subprocess on a free loopback port, started once for the session and stopped by its PID; and
what several interop tests share: :func:`serving` any target, the official Python client's
:func:`handshake` at a given revision, and the conformance :func:`runner` that installs Node
and npm packages."""

from __future__ import annotations

import contextlib
import http.client
import importlib.util
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import IO

import mcp.types as types
import pytest
from mcp.client import ClientSession
from mcp.types.version import LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION

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


@contextlib.contextmanager
def serving(target: str, log_dir: Path) -> Iterator[str]:
    """``http://127.0.0.1:<port>/mcp`` of ``mcpkit serve TARGET`` in a subprocess, once it
    answers; stopped by its PID on exit."""
    port = free_port()
    command = [
        sys.executable, "-m", "mcpkit", "serve", target,
        "--host", "127.0.0.1", "--port", str(port),
    ]  # fmt: skip
    with (log_dir / "stderr.log").open("w+b") as log:
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


@pytest.fixture(scope="session")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``http://127.0.0.1:<port>/mcp`` of a running ``mcpkit serve examples/everything.py``."""
    with serving(str(EVERYTHING), tmp_path_factory.mktemp("interop-server")) as url:
        yield url


async def handshake(
    session: ClientSession, revision: str, client_info: types.Implementation
) -> None:
    """Negotiate ``revision`` the way the official Python client does it: ``server/discover``
    on 2026-07-28, its own ``initialize`` at its newest 2025 revision, and an older one through
    its public request-and-adopt API (it offers no other way to ask for one)."""
    if revision == LATEST_MODERN_VERSION:
        await session.discover()
    elif revision == LATEST_HANDSHAKE_VERSION:
        await session.initialize()
    else:
        request = types.InitializeRequest(
            params=types.InitializeRequestParams(
                protocol_version=revision,
                capabilities=types.ClientCapabilities(),
                client_info=client_info,
            )
        )
        session.adopt(await session.send_request(request, types.InitializeResult))
        await session.send_notification(types.InitializedNotification())
    assert session.protocol_version == revision


def runner() -> ModuleType:
    """``tools/run_conformance.py``, which owns installing Node and npm packages."""
    spec = importlib.util.spec_from_file_location(
        "mcpkit_run_conformance", ROOT / "tools" / "run_conformance.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
