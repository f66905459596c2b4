"""A real ``redis-server`` (the Debian package, ``make services``) for tests: on 127.0.0.1, on a
free port, with no persistence, in a temporary directory; stopped by its PID.

``running_redis()`` yields a ``RedisServer``; ``stop()`` and ``start()`` (on the same port)
let a test take Redis away and bring it back.  A subclass changes how it runs (``arguments``)
and how it is asked whether it is up (``answers``); ``running(Kind)`` yields one of
those.  Its absence is a failure, not a skip.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

WAIT = 10.0
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def ping(port: int) -> bool:
    """Whether a Redis on ``port`` answers ``PING``."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One ``redis-server`` process; ``url`` stays the same across ``stop`` and ``start``."""

    def __init__(self, directory: Path, port: int) -> None:
        self.directory = directory
        self.port = port
        self.url = f"redis://127.0.0.1:{port}/0"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        """The process's id while it runs."""
        return None if self._process is None else self._process.pid

    def arguments(self) -> list[str]:
        """What it is run with, besides where: no persistence."""
        return ["--save", "", "--appendonly", "no"]

    def answers(self) -> bool:
        """Whether it answers ``PING``."""
        return ping(self.port)

    def start(self) -> None:
        """Start it (again, on the same port) and wait until it answers ``PING``."""
        assert os.access(REDIS_SERVER, os.X_OK), (
            "redis-server is not installed: run make services (apt-get install redis-server)"
        )
        assert self._process is None, "already running"
        log = (self.directory / "redis.log").open("ab")
        with log:
            self._process = subprocess.Popen(
                [
                    REDIS_SERVER,
                    "--bind", "127.0.0.1",
                    "--port", str(self.port),
                    *self.arguments(),
                    "--dir", str(self.directory),
                    "--daemonize", "no",
                    "--protected-mode", "yes",
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.directory,
            )  # fmt: skip
        deadline = time.monotonic() + WAIT
        while not self.answers():
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.01)

    def stop(self) -> None:
        """Stop it by its PID, paused or not (SIGCONT, SIGTERM, then SIGKILL if it lingers),
        and wait until it is gone."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            os.kill(process.pid, signal.SIGCONT)
            os.kill(process.pid, signal.SIGTERM)
            try:
                process.wait(WAIT)
            except subprocess.TimeoutExpired:  # a stuck server
                os.kill(process.pid, signal.SIGKILL)
                process.wait(WAIT)


Server = TypeVar("Server", bound=RedisServer)


@contextlib.contextmanager
def running_redis() -> Iterator[RedisServer]:
    """A fresh ``redis-server`` for the block, stopped (and its directory removed) after."""
    with running(RedisServer) as server:
        yield server


@contextlib.contextmanager
def running(kind: type[Server]) -> Iterator[Server]:
    """A fresh ``redis-server`` of ``kind`` for the block, stopped (and its directory
    removed) after."""
    with tempfile.TemporaryDirectory(prefix="mcpkit-redis-") as directory:
        for attempt in range(3):  # a free port may be taken before redis-server binds it
            server = kind(Path(directory), free_port())
            try:
                server.start()
                break
            except RuntimeError:
                if attempt == 2:
                    raise
        try:
            yield server
        finally:
            server.stop()
