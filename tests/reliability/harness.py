"""Start ``mcpkit serve`` on loopback as a real process, talk raw HTTP to it, and read what it
costs (RSS, file descriptors) from ``/proc``.  Everything started here is stopped by PID."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpkit.testing import stateless_headers, stateless_request

APP = Path(__file__).resolve().parent / "hostile_app.py"
ROOT = Path(__file__).resolve().parents[2]
WAIT = 20.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Served:
    """One ``mcpkit serve`` process of ``hostile_app.py``."""

    process: subprocess.Popen[bytes]
    port: int
    log_path: Path
    finished: list[int] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.process.pid

    def rss_kib(self) -> int:
        return self._status_kib("VmRSS:")

    def peak_kib(self) -> int:
        """The most memory the process has held so far (its RSS high-water mark)."""
        return self._status_kib("VmHWM:")

    def _status_kib(self, field: str) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1])
        raise AssertionError(f"no {field}")  # pragma: no cover

    def fds(self) -> int:
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    def fds_settle_to(self, baseline: int, within: float = 3.0) -> int:
        """The descriptor count once it is back at ``baseline`` (connections the server
        closed a moment ago may still be on their way out), or after ``within`` seconds."""
        end = time.monotonic() + within
        while (count := self.fds()) > baseline and time.monotonic() < end:
            time.sleep(0.05)
        return count

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def connect(self, timeout: float = WAIT) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=timeout)

    def stop(self, sig: int = signal.SIGTERM, wait: float = WAIT) -> int:
        """Signal the process and wait for it; kill it if it does not exit in ``wait``."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(wait)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(WAIT)
        return self.process.returncode


@contextlib.contextmanager
def serve(
    tmp_path: Path,
    limits: Mapping[str, Any] | None = None,
    *,
    drain: float = 5.0,
    sessions: bool = False,
) -> Iterator[Served]:
    """``mcpkit serve`` of the hostile app on a free loopback port (with its ``/sessions``
    endpoint and owner-by-header admission when ``sessions``)."""
    port = free_port()
    log_path = tmp_path / f"server-{port}.log"
    env = {
        **os.environ,
        "HOSTILE_LIMITS": json.dumps(dict(limits or {})),
        "HOSTILE_DRAIN": str(drain),
        "HOSTILE_SESSIONS": "1" if sessions else "",
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("COVERAGE_PROCESS_START", None)
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "mcpkit", "serve", str(APP), "--port", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env=env,
        )
    served = Served(process, port, log_path)
    try:
        deadline = time.monotonic() + WAIT
        while True:
            if process.poll() is not None:
                raise AssertionError("the server exited:\n" + served.log())
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        yield served
    finally:
        served.stop()


def request_bytes(
    port: int,
    tool: str,
    arguments: Mapping[str, object],
    *,
    id: int = 1,
    progress: bool = False,
) -> bytes:
    """A raw 2026-07-28 ``tools/call`` request (with a progress token if ``progress``)."""
    params: dict[str, object] = {"name": tool, "arguments": dict(arguments)}
    if progress:
        params["_meta"] = {"progressToken": f"p{id}"}
    body = json.dumps(stateless_request("tools/call", params, id=id)).encode()
    headers = {**stateless_headers("tools/call", tool), "Host": f"127.0.0.1:{port}"}
    head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    return f"POST /mcp HTTP/1.1\r\n{head}Content-Length: {len(body)}\r\n\r\n".encode() + body


def read_response(
    sock: socket.socket, limit: int = 64 * 1024 * 1024
) -> tuple[int, dict[str, str], bytes]:
    """Read one whole response (Content-Length, chunked, or until close)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed before a response head")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if status == 204:
        return status, headers, b""  # never a body (RFC 9110 §15.3.5)
    if "content-length" in headers:
        length = int(headers["content-length"])
        while len(rest) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            rest += chunk
        return status, headers, rest[:length]
    if headers.get("transfer-encoding") == "chunked":
        body = b""
        while True:
            while b"\r\n" not in rest:
                rest += _recv(sock)
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line, 16)
            while len(rest) < size + 2:
                rest += _recv(sock)
            body += rest[:size]
            rest = rest[size + 2 :]
            if size == 0 or len(body) > limit:
                return status, headers, body
    while chunk := sock.recv(65536):
        rest += chunk
    return status, headers, rest


def _recv(sock: socket.socket) -> bytes:
    chunk = sock.recv(65536)
    if not chunk:
        raise ConnectionError("closed inside a chunked body")
    return chunk


def call(
    served: Served,
    tool: str,
    arguments: Mapping[str, object],
    *,
    id: int = 1,
    timeout: float = WAIT,
    progress: bool = False,
) -> tuple[int, dict[str, str], Any]:
    """One ``tools/call`` on a fresh connection; the JSON-RPC message (or the SSE stream's last
    event) as a value."""
    with served.connect(timeout) as sock:
        sock.sendall(request_bytes(served.port, tool, arguments, id=id, progress=progress))
        status, headers, body = read_response(sock)
    if headers.get("content-type", "").startswith("text/event-stream"):
        events = [line[6:] for line in body.decode().split("\n") if line.startswith("data: ")]
        return status, headers, json.loads(events[-1])
    return status, headers, json.loads(body) if body else None
