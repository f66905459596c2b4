"""``mcpkit serve --workers N``: N server processes on one address, supervised.

The parent binds the address (so a busy port fails once, before anything starts), then starts
N children, each ``python -m mcpkit serve`` of the same target with listening sockets
inherited; each child imports the application afresh (no thread or connection of the parent is
carried across a fork).  On Linux every child gets a socket of its own, all bound to the
address with ``SO_REUSEPORT``, and the kernel spreads new connections evenly over them: with
one shared socket, whichever process wakes first accepts a whole burst (asyncio takes up to
the backlog at once), and a client that keeps its connections stays on that one process.
Elsewhere the children share one socket.  The parent keeps every socket open, so one whose
worker died keeps its queued connections for the worker that replaces it.

The parent only supervises: SIGTERM or SIGINT is passed on to every child, which drains as one
server does; a child that dies after serving a while is started again, at most once a second,
and one that dies within seconds of its start stops them all (it could not start, and would
not on a retry).

With metrics on, each child writes a snapshot of its counts and gauges to its own file in a
private directory of the parent's (``SharedMetrics``): every quarter of a second when they
changed, when it is scraped, and when it stops.  A scrape of any child sums its own counts
with the other children's files, so ``/metrics`` through the shared port reports the whole
server.  A child that replaces a dead one counts on from the dead one's file, so the totals
never go backwards, and the parent clears a dead child's gauges from its file, so gauges are
the live children's.  There is one file per worker, whatever the restarts.

A server keeps some state in its process unless told otherwise, and with several processes
that state would silently split: sessions and their event logs, change broadcasts, tasks,
per-process rate-limit buckets and a development keyring.  ``single_process_reasons`` names
each such store, and more than one worker is refused while any remains.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from types import FrameType
from typing import TYPE_CHECKING, Final

from mcpkit.errors import ConfigurationError
from mcpkit.server import (
    Engine,
    MemoryBroadcaster,
    MemoryEventStore,
    MemorySessionStore,
    MemoryTaskStore,
    SqliteTaskStore,
    TokenBucket,
)
from mcpkit.server._metrics import SNAPSHOT_LIMIT, Snapshot

if TYPE_CHECKING:
    from mcpkit.serving._server import Server

__all__ = [
    "LISTEN_FDS",
    "METRICS_SHARE",
    "SharedMetrics",
    "Supervisor",
    "bind_workers",
    "inherited_sockets",
    "shared_metrics",
    "single_process_reasons",
]

log = logging.getLogger("mcpkit")

LISTEN_FDS: Final = "MCPKIT_LISTEN_FDS"
"""The environment variable that hands a worker its inherited sockets' descriptors."""
METRICS_SHARE: Final = "MCPKIT_METRICS_SHARE"
"""The environment variable that tells a worker where the workers' metrics meet:
``INDEX:WORKERS:DIRECTORY``."""
_RESTART_INTERVAL: Final = 1.0
_MIN_UPTIME: Final = 5.0  # a worker that dies sooner is taken to be unable to start
_PUBLISH_SECONDS: Final = 0.25  # how stale another worker's counts in a scrape may be
# SO_REUSEPORT balances connections over the sockets on Linux; elsewhere (the BSDs, macOS)
# the option exists but one socket takes every connection, so the workers share one instead.
_REUSE_PORT: Final = sys.platform == "linux" and hasattr(socket, "SO_REUSEPORT")
_SHARE: Final = re.compile(r"([0-9]{1,2}):([0-9]{1,2}):(.+)", re.ASCII | re.DOTALL)


def single_process_reasons(server: Server) -> list[str]:
    """Why ``server`` cannot be spread over several processes: one line per store that lives
    in this process alone (empty when it can)."""
    engine = server.engine
    registry = server.registry
    reasons: list[str] = []
    keeps_sessions = any(endpoint.session_revisions for endpoint in registry)
    if isinstance(engine.pipeline.sessions, MemorySessionStore):
        reasons.append(
            "2025 sessions are kept in this process (sessions=MemorySessionStore: give "
            "sessions=RedisSessionStore(url))"
        )
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


def bind_workers(server: Server, workers: int) -> list[list[socket.socket]]:
    """The listening sockets of ``workers`` processes serving ``server``: one group of sockets
    (one per address of its host) for each worker, bound with ``SO_REUSEPORT``, or, where
    that does not balance connections, one group that they all share.  A busy port or a
    wrong address is an ``OSError`` here, with its hint."""
    # Bound once without SO_REUSEPORT, which fails when anything listens there, even a server
    # of this user's with SO_REUSEPORT set that the workers would otherwise silently join.
    probe = server.bind()
    if not _REUSE_PORT:
        return [probe]
    port = probe[0].getsockname()[1]  # the port of every address, chosen now if 0 was asked
    for listener in probe:
        listener.close()
    groups: list[list[socket.socket]] = []
    try:
        while len(groups) < workers:  # a loop, so that a failure closes the groups bound
            groups.append(server.bind(port=port, reuse_port=True))
    except OSError as error:
        for group in groups:
            for listener in group:
                listener.close()
        log.warning(
            "mcpkit: SO_REUSEPORT cannot give each worker a socket (%s); they share one",
            error.strerror,
        )
        return [server.bind(port=port)]
    return groups


def _snapshot_path(directory: str, index: int) -> str:
    return os.path.join(directory, f"worker-{index}.json")


def _read_snapshot(path: str) -> Snapshot | None:
    """The snapshot at ``path`` (``None`` while there is none); ``OSError`` or ``ValueError``
    when it cannot be read."""
    try:
        with open(path, "rb") as file:
            data = file.read(SNAPSHOT_LIMIT + 1)  # a longer one is refused, not read whole
    except FileNotFoundError:
        return None
    return Snapshot.decode(data)


def _write_snapshot(path: str, data: bytes) -> None:
    """Replace the snapshot at ``path`` whole: a reader sees the old one or the new one."""
    partial = f"{path}.partial"
    with open(partial, "wb") as file:
        file.write(data)
    os.replace(partial, path)


def _retire(directory: str, index: int) -> None:
    """A dead worker's file keeps its counts, for the worker that replaces it, and loses its
    gauges: they were the dead process's."""
    path = _snapshot_path(directory, index)
    try:
        snapshot = _read_snapshot(path)
        if snapshot is not None and snapshot.gauges:
            snapshot.gauges = {}
            _write_snapshot(path, snapshot.encode())
    except (OSError, ValueError):
        log.warning("mcpkit: cannot clear the gauges of worker %d from its metrics file", index)


class SharedMetrics:
    """One worker's part in the metrics of all workers (module docstring): it publishes this
    process's snapshot to its file, and gives a scrape the other workers' snapshots."""

    def __init__(self, engine: Engine, directory: str, index: int, workers: int) -> None:
        metrics = engine.metrics
        assert metrics is not None  # only a server that keeps metrics shares them
        self._engine = engine
        self._metrics = metrics
        self._path = _snapshot_path(directory, index)
        self._others = [_snapshot_path(directory, i) for i in range(workers) if i != index]
        self._written = b""
        self._timer: asyncio.TimerHandle | None = None
        self._warned = False
        inherited = self._read(self._path)
        if inherited is not None:  # the counts of the worker this one replaces
            metrics.restore(inherited)
        metrics.shared = self

    def exchange(self, own: Snapshot) -> list[Snapshot]:
        """A scrape: publish this worker's counts, so that no count it reports can be lost
        if it dies, and read the other workers' (skipping one that cannot be read)."""
        self._publish(own)
        found: list[Snapshot] = []
        for path in self._others:
            snapshot = self._read(path)
            if snapshot is not None:
                found.append(snapshot)
        return found

    def start(self) -> None:
        """Publish every ``_PUBLISH_SECONDS`` from now on (on the event loop, where the counts
        are kept)."""
        self._timer = asyncio.get_running_loop().call_later(_PUBLISH_SECONDS, self._tick)

    def _tick(self) -> None:
        self._publish(self._metrics.snapshot(self._engine.gauges()))
        self.start()

    def close(self) -> None:
        """The last publication, once serving has ended: the counts, and no gauge."""
        if self._timer is not None:
            self._timer.cancel()
        self._publish(self._metrics.snapshot({}))

    def _publish(self, snapshot: Snapshot) -> None:
        data = snapshot.encode()
        if data == self._written:
            return
        try:
            _write_snapshot(self._path, data)
        except OSError:
            self._warn()
            return
        self._written = data

    def _read(self, path: str) -> Snapshot | None:
        try:
            return _read_snapshot(path)
        except (OSError, ValueError):
            self._warn()
            return None

    def _warn(self) -> None:
        if not self._warned:  # once: it would repeat at every scrape and publication
            self._warned = True
            log.warning(
                "mcpkit: a worker's metrics file cannot be read or written; /metrics may miss "
                "some workers' counts"
            )


def shared_metrics(server: Server) -> SharedMetrics | None:
    """This worker's ``SharedMetrics`` when a supervisor asked for them (``None`` for a
    server of its own, or one that keeps no metrics)."""
    value = os.environ.pop(METRICS_SHARE, None)
    if not value or server.engine.metrics is None:
        return None
    found = _SHARE.fullmatch(value)
    if found is None or int(found[1]) >= int(found[2]):
        raise ConfigurationError(
            f"mcpkit serve: {METRICS_SHARE} is set by mcpkit serve --workers for its workers, "
            "as INDEX:WORKERS:DIRECTORY; unset it"
        )
    return SharedMetrics(server.engine, found[3], int(found[1]), int(found[2]))


class Supervisor:
    """Runs ``workers`` children of ``command`` until told to stop: each on its own group of
    ``listeners`` (``bind_workers``), or all on the one group given.  With ``metrics``, the
    children's metrics are summed in every scrape (module docstring)."""

    def __init__(
        self,
        command: Sequence[str],
        listeners: Sequence[Sequence[socket.socket]],
        workers: int,
        *,
        metrics: bool = False,
    ) -> None:
        self._command = list(command)
        self._listeners = [list(group) for group in listeners]
        self._workers = workers
        self._metrics = metrics
        self._directory: str | None = None  # the metrics files', while running
        self._children: list[subprocess.Popen[bytes]] = []
        self._started: dict[int, float] = {}  # when each worker was last started
        self._stopping = False

    def _start(self, index: int) -> subprocess.Popen[bytes]:
        group = self._listeners[index % len(self._listeners)]
        fds = [listener.fileno() for listener in group]
        env = dict(os.environ)
        env[LISTEN_FDS] = ",".join(str(fd) for fd in fds)
        if self._directory is not None:
            env[METRICS_SHARE] = f"{index}:{self._workers}:{self._directory}"
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
            if self._metrics:  # private: mkdtemp makes it 0700
                self._directory = tempfile.mkdtemp(prefix="mcpkit-metrics-")
            if len(self._listeners) > 1:
                log.info("mcpkit: %d workers, each on its own socket (SO_REUSEPORT): the "
                         "kernel spreads connections evenly", self._workers)  # fmt: skip
            else:
                log.info("mcpkit: %d workers sharing one socket (no SO_REUSEPORT balancing "
                         "here): connections may go unevenly", self._workers)  # fmt: skip
            self._children = [self._start(index) for index in range(self._workers)]
            return self._supervise()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            for group in self._listeners:
                for listener in group:
                    listener.close()
            if self._directory is not None:
                shutil.rmtree(self._directory, ignore_errors=True)

    def _supervise(self) -> int:
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
                if self._directory is not None:
                    _retire(self._directory, index)
                time.sleep(max(0.0, last_restart + _RESTART_INTERVAL - time.monotonic()))
                last_restart = time.monotonic()
                self._children[index] = self._start(index)
        self._wait()
        return 0

    def _wait(self) -> None:
        for child in self._children:
            child.wait()
