"""Several ``mcpkit serve`` nodes behind a real HAProxy, sharing a real Redis: the scale-out
deployment of ``docs/tutorials/deployment.md``, on loopback, for the tests of this folder.

``running_cluster(directory)`` starts a ``redis-server`` (``tests/redis_server``), three nodes
of ``examples/everything_cluster.py`` (``--health --metrics``, one shared request-state key)
and HAProxy (the Debian package, ``make services``) in front of them: round robin, no
stickiness, health checks on ``/readyz`` every 500 ms (down after 2 failures, up after 2
successes), streams (SSE) passed through as they come.  It yields a :class:`Cluster`; every
process it started is stopped by its PID on the way out, on failure too.  A missing
``haproxy`` or ``redis-server`` is a failure, not a skip.
"""

from __future__ import annotations

import contextlib
import csv
import http.client
import io
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from mcpkit.testing import stateless_headers, stateless_request

from ..redis_server import RedisServer, free_port, running_redis

ROOT: Final = Path(__file__).resolve().parents[2]
APP: Final = ROOT / "examples" / "everything_cluster.py"
HAPROXY: Final = shutil.which("haproxy") or "/usr/sbin/haproxy"
NODES: Final = 3
WAIT: Final = 30.0
"""Seconds for a process to start or stop."""
CHECK_INTERVAL: Final = 0.5
"""HAProxy's health check period (``inter``); a node is down after 2 failed checks."""

_CONFIG: Final = """\
global
    maxconn 4096
    log stdout format raw local0 info

defaults
    mode http
    log global
    option httplog
    timeout connect 5s
    # long enough for a listen or task stream (SSE) that stays open
    timeout client 1h
    timeout server 1h
    # a new server-side connection per request; the client's may stay open
    option http-server-close
    # a connection refused by a node that died is tried again, on another node the last time
    retries 2
    option redispatch 1

frontend mcp
    bind 127.0.0.1:{port}
    default_backend nodes

backend nodes
    balance roundrobin
    option httpchk
    http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host 127.0.0.1
    http-check expect status 200
    default-server check inter {inter}ms fall 2 rise 2
{servers}

listen stats
    bind 127.0.0.1:{stats_port}
    stats enable
    stats uri /stats
"""


def haproxy_config(port: int, stats_port: int, nodes: Mapping[str, int]) -> str:
    """HAProxy's configuration: ``port`` spread round robin over ``nodes`` (name to port),
    its statistics at ``http://127.0.0.1:<stats_port>/stats``."""
    servers = "\n".join(f"    server {name} 127.0.0.1:{port}" for name, port in nodes.items())
    inter = round(CHECK_INTERVAL * 1000)
    return _CONFIG.format(port=port, stats_port=stats_port, servers=servers, inter=inter)


def get(port: int, path: str, timeout: float = 5.0) -> tuple[int, bytes]:
    """``GET path`` on a loopback port: status and body."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", path, headers={"Host": f"127.0.0.1:{port}"})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def metric_totals(text: str) -> dict[str, float]:
    """A Prometheus text exposition summed by metric name (over every label set)."""
    totals: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        series, _, value = line.rpartition(" ")
        name = series.partition("{")[0]
        totals[name] = totals.get(name, 0.0) + float(value)
    return totals


def stop_process(process: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    """Signal a process started here (by its PID) and wait; SIGKILL it if it lingers."""
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(WAIT)
        except subprocess.TimeoutExpired:  # pragma: no cover - only if it hangs
            process.kill()
            process.wait(WAIT)


@dataclass
class Node:
    """One ``mcpkit serve examples/everything_cluster.py`` process."""

    name: str
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def metrics(self) -> dict[str, float]:
        """Its ``/metrics``, summed by metric name."""
        status, body = get(self.port, "/metrics")
        assert status == 200, body
        return metric_totals(body.decode())

    def requests(self) -> float:
        """How many MCP messages it has answered (``mcpkit_requests_total``)."""
        return self.metrics().get("mcpkit_requests_total", 0.0)

    def kill(self) -> None:
        """SIGKILL, by its PID: it gets no chance to clean up (its task lease just lapses)."""
        self.process.kill()
        self.process.wait(WAIT)


@dataclass
class Cluster:
    """The nodes, the Redis they share, and HAProxy in front at ``url``."""

    redis: RedisServer
    nodes: list[Node]
    haproxy: subprocess.Popen[bytes]
    port: int
    stats_port: int
    directory: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def post(
        self,
        method: str,
        name: str | None,
        params: Mapping[str, object],
        *,
        capabilities: Mapping[str, object] | None = None,
        timeout: float = 10.0,
    ) -> tuple[int, bytes]:
        """One 2026-07-28 request through HAProxy, on a connection of its own: status, body."""
        body = json.dumps(stateless_request(method, params, capabilities=capabilities))
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            connection.request("POST", "/mcp", body.encode(), stateless_headers(method, name))
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def server_states(self) -> dict[str, str]:
        """HAProxy's view of each node (``UP``, ``DOWN``, ``UP 1/2``...), from its stats."""
        status, body = get(self.stats_port, "/stats;csv")
        assert status == 200, body
        rows = csv.DictReader(io.StringIO(body.decode().removeprefix("# ")))
        return {row["svname"]: row["status"] for row in rows if row["pxname"] == "nodes"}

    def wait_states(self, wanted: Mapping[str, str], within: float) -> float:
        """Wait until HAProxy sees every node of ``wanted`` in its state; the seconds it took."""
        start = time.monotonic()
        while True:
            states = self.server_states()
            if all(states.get(name) == state for name, state in wanted.items()):
                return time.monotonic() - start
            assert time.monotonic() - start < within, f"HAProxy sees {states}, not {wanted}"
            time.sleep(0.05)

    def logs(self) -> str:
        """Every process's log, for an assertion message."""
        parts = [f"--- {node.name}\n{node.log()}" for node in self.nodes]
        parts.append(f"--- haproxy\n{(self.directory / 'haproxy.log').read_text(errors='replace')}")
        return "\n".join(parts)


def _wait_ready(node: Node) -> None:
    """Wait until the node answers ``/readyz`` with 200."""
    deadline = time.monotonic() + WAIT
    while True:
        assert node.process.poll() is None, f"{node.name} exited:\n{node.log()}"
        with contextlib.suppress(OSError, http.client.HTTPException):
            if get(node.port, "/readyz", timeout=1.0)[0] == 200:
                return
        assert time.monotonic() < deadline, f"{node.name} is not ready:\n{node.log()}"
        time.sleep(0.05)


def _start_node(
    name: str, directory: Path, env: Mapping[str, str], stack: contextlib.ExitStack
) -> Node:
    port = free_port()
    log_path = directory / f"{name}.log"
    command = [sys.executable, "-m", "mcpkit", "serve", str(APP), "--port", str(port)]
    # HAProxy keeps the client's Host header (127.0.0.1 and HAProxy's port), which a node
    # accepts only when the name is allowed: any port of an allowed name is
    command += ["--allowed-host", "127.0.0.1", "--health", "--metrics"]
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env={**env, "MCPKIT_NODE": name},
        )
    stack.callback(stop_process, process)
    return Node(name, port, process, log_path)


def _start_haproxy(
    directory: Path, nodes: list[Node], stack: contextlib.ExitStack
) -> tuple[subprocess.Popen[bytes], int, int]:
    assert os.access(HAPROXY, os.X_OK), (
        "haproxy is not installed: run make services (apt-get install haproxy)"
    )
    port, stats_port = free_port(), free_port()
    config = directory / "haproxy.cfg"
    config.write_text(haproxy_config(port, stats_port, {n.name: n.port for n in nodes}))
    check = subprocess.run([HAPROXY, "-c", "-q", "-f", str(config)], capture_output=True)
    assert check.returncode == 0, check.stderr.decode(errors="replace")
    with (directory / "haproxy.log").open("wb") as log:
        process = subprocess.Popen(
            [HAPROXY, "-db", "-f", str(config)],  # -db: in the foreground, one process
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=directory,
        )
    stack.callback(stop_process, process)  # SIGTERM: HAProxy stops at once
    deadline = time.monotonic() + WAIT
    while True:
        assert process.poll() is None, (directory / "haproxy.log").read_text(errors="replace")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1.0).close()
            socket.create_connection(("127.0.0.1", stats_port), timeout=1.0).close()
            return process, port, stats_port
        except OSError:
            assert time.monotonic() < deadline, "HAProxy did not start"
            time.sleep(0.05)


@contextlib.contextmanager
def running_cluster(
    directory: Path,
    *,
    lease_seconds: float = 15.0,
    task_ttl_seconds: float = 3600.0,
) -> Iterator[Cluster]:
    """Redis, ``NODES`` nodes and HAProxy, all up (HAProxy sees every node ``UP``); each is
    stopped by its PID when the block ends.  ``lease_seconds`` is the task store's lease,
    ``task_ttl_seconds`` the tasks' TTL (the nodes sweep every quarter of it, at most every
    minute)."""
    directory.mkdir(parents=True, exist_ok=True)
    with running_redis() as redis, contextlib.ExitStack() as stack:
        env: dict[str, str] = {
            **os.environ,
            "PYTHONUNBUFFERED": "1",
            "MCPKIT_REDIS_URL": redis.url,
            "MCPKIT_KEYRING_KEY": secrets.token_hex(32),
            "MCPKIT_TASK_LEASE_SECONDS": str(lease_seconds),
            "MCPKIT_TASK_TTL_SECONDS": str(task_ttl_seconds),
        }
        env.pop("COVERAGE_PROCESS_START", None)
        nodes = [_start_node(f"node{i}", directory, env, stack) for i in range(NODES)]
        for node in nodes:
            _wait_ready(node)
        haproxy, port, stats_port = _start_haproxy(directory, nodes, stack)
        cluster = Cluster(redis, nodes, haproxy, port, stats_port, directory)
        cluster.wait_states({node.name: "UP" for node in nodes}, within=WAIT)
        yield cluster
