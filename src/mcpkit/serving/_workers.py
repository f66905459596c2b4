"""``mcpkit serve --workers N``: one listening socket, N server processes.

The parent binds the socket (so a busy port fails before anything starts), then starts N
children, each ``python -m mcpkit serve`` of the same target with the socket inherited: the
kernel spreads connections over them, and each child imports the application afresh (no
thread or connection of the parent is carried across a fork).  The parent only supervises:
SIGTERM or SIGINT is passed on to every child, which drains as one server does; a child
that dies after serving a while is started again, at most once a second, and one that dies
within seconds of its start stops them all (it could not start, and would not on a retry).

A server keeps some state in its process unless told otherwise, and with several processes
that state would silently split: sessions and their event logs, change broadcasts, tasks,
per-process rate-limit buckets and a development keyring.  ``single_process_reasons`` names
each such store, and more than one worker is refused while any remains.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from types import FrameType
from typing import TYPE_CHECKING, Final

from mcpkit.server import (
    MemoryBroadcaster,
    MemoryEventStore,
    MemorySessionStore,
    MemoryTaskStore,
    SqliteTaskStore,
    TokenBucket,
)

if TYPE_CHECKING:
    from mcpkit.serving._server import Server

__all__ = ["LISTEN_FDS", "Supervisor", "inherited_sockets", "single_process_reasons"]

log = logging.getLogger("mcpkit")

LISTEN_FDS: Final = "MCPKIT_LISTEN_FDS"
"""The environment variable that hands a worker its inherited sockets' descriptors."""
_RESTART_INTERVAL: Final = 1.0
_MIN_UPTIME: Final = 5.0  # a worker that dies sooner is taken to be unable to start


def single_process_reasons(server: Server) -> list[str]:
    """Why ``server`` cannot be spread over several processes: one line per store that lives
    in this process alone (empty when it can)."""
    engine = server.engine
    registry = server.registry
    reasons: list[str] = []
    keeps_sessions = any(endpoint.session_revisions for endpoint in registry)
    if isinstance(engine.pipeline.sessions, MemorySessionStore):
        reasons.append("2025 sessions are kept in this process (sessions=MemorySessionStore)")
    if keeps_sessions and isinstance(engine.pipeline.events, MemoryEventStore):
        reasons.append("session streams are replayed from this process (events=MemoryEventStore)")
    listens = any(endpoint.listen for endpoint in registry)
    if (keeps_sessions or listens) and isinstance(engine.broadcaster, MemoryBroadcaster):
        reasons.append(
            "change notifications reach this process only (give broadcaster=RedisBroadcaster(url))"
        )
    if isinstance(server.task_store, (MemoryTaskStore, SqliteTaskStore)):
        reasons.append("tasks are kept by one process (give task_store=RedisTaskStore(url))")
    limits = server.rate_limits
    limiters = [*limits.named.values(), limits.tool, limits.request]
    if any(isinstance(limiter, TokenBucket) for limiter in limiters):
        reasons.append(
            "a TokenBucket counts in one process, so N workers would allow N times the budget "
            "(use RedisTokenBucket(url, ...))"
        )
    keyring = server.keyring
    if keyring is not None and keyring.is_ephemeral:
        reasons.append(
            "the keyring is Keyring.development_ephemeral(), so request state sealed by one "
            "process cannot be opened by another (give every process the same Keyring)"
        )
    return reasons


def inherited_sockets() -> list[socket.socket] | None:
    """The listening sockets a supervisor handed this worker, or ``None`` for a server of its
    own."""
    value = os.environ.pop(LISTEN_FDS, None)
    if not value:
        return None
    return [socket.socket(fileno=int(fd)) for fd in value.split(",")]


class Supervisor:
    """Runs ``workers`` children of ``command`` on ``listeners`` until told to stop."""

    def __init__(
        self, command: Sequence[str], listeners: Sequence[socket.socket], workers: int
    ) -> None:
        self._command = list(command)
        self._listeners = list(listeners)
        self._workers = workers
        self._children: list[subprocess.Popen[bytes]] = []
        self._started: dict[int, float] = {}  # when each worker was last started
        self._stopping = False

    def _start(self, index: int) -> subprocess.Popen[bytes]:
        fds = [listener.fileno() for listener in self._listeners]
        env = dict(os.environ)
        env[LISTEN_FDS] = ",".join(str(fd) for fd in fds)
        if index:  # one worker says where it serves; the others do not repeat it
            env["MCPKIT_WORKER_QUIET"] = "1"
        self._started[index] = time.monotonic()
        return subprocess.Popen(self._command, env=env, pass_fds=fds)

    def _stop(self, signum: int, _frame: FrameType | None) -> None:
        self._stopping = True
        for child in self._children:
            with contextlib.suppress(ProcessLookupError):
                child.send_signal(signal.SIGTERM)

    def run(self) -> int:
        """Start the workers and supervise them until a signal stops them (0), or until one
        fails within ``_MIN_UPTIME`` seconds of its start (2, as ``mcpkit serve`` answers a
        target it cannot serve: a worker that cannot start would only fail again).  A worker
        that dies after serving a while is replaced, at most once a second."""
        previous = {sig: signal.signal(sig, self._stop) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            self._children = [self._start(index) for index in range(self._workers)]
            last_restart = 0.0
            while not self._stopping:
                time.sleep(0.05)
                for index, child in enumerate(self._children):
                    code = child.poll()
                    if code is None or self._stopping:
                        continue
                    if time.monotonic() - self._started[index] < _MIN_UPTIME:
                        log.error("mcpkit: worker %d could not start (status %d); stopping",
                                  index, code)  # fmt: skip
                        self._stop(signal.SIGTERM, None)
                        self._wait()
                        return 2
                    log.warning("mcpkit: worker %d stopped (status %d); starting another",
                                index, code)  # fmt: skip
                    time.sleep(max(0.0, last_restart + _RESTART_INTERVAL - time.monotonic()))
                    last_restart = time.monotonic()
                    self._children[index] = self._start(index)
            self._wait()
            return 0
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            for listener in self._listeners:
                listener.close()

    def _wait(self) -> None:
        for child in self._children:
            child.wait()
