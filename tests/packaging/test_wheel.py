"""The wheel as a user gets it: built from this checkout, installed with pip into a clean
virtual environment (its runtime dependencies come from the package index, so this needs the
index and fails without it), with none of the development tools, and serving a tiny endpoint
through the installed ``mcpkit`` script: ``initialize`` and ``tools/list`` over HTTP.

The sources are copied first, so building leaves nothing in the working tree.  The server
listens on 127.0.0.1 on a free port and is stopped by PID.
"""

from __future__ import annotations

import http.client
import json
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PIP_SECONDS = 600
READY_SECONDS = 30.0
STOP_SECONDS = 15.0
NOVEMBER = "2025-11-25"
DEV_ONLY = ("pytest", "pydantic", "mcp", "hypothesis", "mypy", "starlette")

TINY = """\
from mcpkit import CompleteResult, Revision, Server, endpoint, tool


@endpoint(path="/mcp", name="tiny", version="0.1.0",
          revisions={Revision.V2025_11_25, Revision.V2026_07_28})
class Tiny:
    @tool(name="echo")
    def echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)


server = Server(Tiny)
"""


def run(command: list[str], cwd: Path) -> str:
    completed = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=PIP_SECONDS, check=False
    )
    assert completed.returncode == 0, (command, completed.stdout, completed.stderr)
    return completed.stdout


def build_wheel(tmp_path: Path) -> Path:
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "src",
        source / "src",
        ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.egg-info"),
    )
    wheels = tmp_path / "wheels"
    run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
         "-w", str(wheels), str(source)],
        tmp_path,
    )  # fmt: skip
    (wheel,) = wheels.glob("mcpkit-*.whl")
    return wheel


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def post(port: int, message: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10.0)
    try:
        connection.request(
            "POST",
            "/mcp",
            json.dumps(message).encode(),
            {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
             **headers},
        )  # fmt: skip
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def test_the_wheel_installs_alone_and_serves(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    python = venv / "bin" / "python"
    run([str(python), "-m", "pip", "install", "--quiet", str(wheel)], tmp_path)

    installed = {
        re.split(r"[=\s]", line)[0].lower()
        for line in run([str(python), "-m", "pip", "freeze", "--all"], tmp_path).splitlines()
    }
    assert {"mcpkit", "uvicorn", "httptools", "cryptography"} <= installed
    assert not installed & set(DEV_ONLY), installed & set(DEV_ONLY)

    script = venv / "bin" / "mcpkit"
    assert "FILE_OR_MODULE" in run([str(script), "serve", "--help"], tmp_path)
    assert "dev" in run([str(script), "--help"], tmp_path)

    app = tmp_path / "app"
    app.mkdir()
    (app / "tiny.py").write_text(TINY)
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [str(script), "serve", "tiny.py", "--port", str(port)],
            cwd=app,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + READY_SECONDS
            while f"at http://127.0.0.1:{port}/mcp" not in log.read_text():
                assert process.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
            initialize = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": NOVEMBER,
                    "capabilities": {},
                    "clientInfo": {"name": "wheel-test", "version": "1"},
                },
            }
            status, initialized = post(port, initialize, {})
            assert status == 200, initialized
            assert initialized["result"]["serverInfo"] == {"name": "tiny", "version": "0.1.0"}
            listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
            status, listed = post(port, listing, {"MCP-Protocol-Version": NOVEMBER})
            assert status == 200, listed
            assert [tool["name"] for tool in listed["result"]["tools"]] == ["echo"]
            process.send_signal(signal.SIGTERM)
            assert process.wait(STOP_SECONDS) == 0, log.read_text()
        finally:
            if process.poll() is None:  # pragma: no cover - only when the test failed midway
                process.kill()
                process.wait(STOP_SECONDS)
    assert "Traceback" not in log.read_text()
