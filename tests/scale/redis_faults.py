"""What ``test_redis_faults.py`` runs: a ``redis-server`` that keeps its data across a restart,
``mcpkit serve`` nodes of ``redis_faults_app.py`` on it, a load of concurrent requests, and
listen streams, all on loopback ports.

- ``running(DurableRedis)`` (``tests/redis_server``) yields a :class:`DurableRedis`:
  append-only persistence on (``appendfsync everysec``) in a temporary directory, a password,
  and ``kill`` (SIGKILL), ``pause`` (SIGSTOP) and ``resume`` (SIGCONT) by its PID; ``start``
  brings it back on the same port with what it had written.
- ``start_node`` starts one node and waits for ``/readyz``; the ``ExitStack`` it is given
  stops it by its PID.
- :class:`Load` sends, from several threads, every kind of request of :data:`KINDS` to the
  nodes in turn until it is stopped, and keeps each answer with when it was sent and answered.
- :class:`ListenStream` holds a ``subscriptions/listen`` stream open in a thread and keeps the
  notifications it hears.

A missing ``redis-server`` is a failure, not a skip; every process is stopped by its PID.
"""

from __future__ import annotations

import contextlib
import http.client
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import redis

from mcpkit.testing import stateless_headers, stateless_request

from ..redis_server import RedisServer, free_port
from . import cluster
from .cluster import stop_process

ROOT: Final = Path(__file__).resolve().parents[2]
APP: Final = Path(__file__).resolve().parent / "redis_faults_app.py"
WAIT: Final = 30.0
"""Seconds for a process to start."""
PASSWORD: Final = "faults-pw-7f3a9c"
"""Redis's password: it must never appear in an answer or a log."""
TASKS: Final[dict[str, object]] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
"""The client capabilities of a request that may create or read tasks."""
WATCHED: Final = "test://watched"


# --- Redis ----------------------------------------------------------------------------------


def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)


class DurableRedis(RedisServer):
    """A ``redis-server`` with append-only persistence and a password; ``url`` (with the
    password) stays the same across ``kill`` and ``start``, which brings back what it wrote."""

    def __init__(self, directory: Path, port: int) -> None:
        super().__init__(directory, port)
        self.url = f"redis://:{PASSWORD}@127.0.0.1:{port}/0"

    def arguments(self) -> list[str]:
        return [
            "--requirepass", PASSWORD,
            "--save", "",
            "--appendonly", "yes",
            "--appendfsync", "everysec",
        ]  # fmt: skip

    def answers(self) -> bool:
        client = _client(self.url)
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()

    @property
    def running(self) -> int:
        """Its process id (it must run)."""
        assert self.pid is not None, "not running"
        return self.pid

    def kill(self) -> None:
        """SIGKILL by its PID: it ends at once, without a chance to write anything more."""
        process, self._process = self._process, None
        assert process is not None, "not running"
        os.kill(process.pid, signal.SIGKILL)
        process.wait(WAIT)

    def pause(self) -> None:
        """SIGSTOP: it hangs; connections are still accepted, nothing is answered."""
        os.kill(self.running, signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT, after ``pause``."""
        os.kill(self.running, signal.SIGCONT)

    def wake(self) -> None:
        """SIGCONT if it runs (paused or not): so that nodes stopping after a failed test do
        not wait on a Redis left hung."""
        if self._process is not None and self._process.poll() is None:
            os.kill(self._process.pid, signal.SIGCONT)

    def clients(self) -> dict[str, int]:
        """How many connections each client name holds (``CLIENT LIST``), this one's left out."""
        client = _client(self.url)
        try:
            listed: list[dict[str, Any]] = client.client_list()
        finally:
            client.close()
        names = [str(entry["name"]) for entry in listed if "client-list" not in entry["cmd"]]
        return {name: names.count(name) for name in set(names)}


# --- nodes ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    """One answer: its HTTP status, ``Retry-After``, body, and the ``Mcp-Session-Id`` a
    2025 ``initialize`` opened."""

    status: int
    retry_after: str | None
    body: bytes
    session: str = ""

    def json(self) -> Any:
        return json.loads(self.body)


def post(
    port: int,
    method: str,
    name: str | None,
    params: Mapping[str, object],
    *,
    id: int = 1,
    tasks: bool = False,
    timeout: float = 10.0,
) -> Reply:
    """One 2026-07-28 request to the node on ``port``, on a connection of its own."""
    capabilities = TASKS if tasks else None
    body = json.dumps(stateless_request(method, params, id=id, capabilities=capabilities))
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("POST", "/mcp", body.encode(), stateless_headers(method, name))
        response = connection.getresponse()
        return Reply(response.status, response.getheader("Retry-After"), response.read())
    finally:
        connection.close()


def call(port: int, tool: str, arguments: Mapping[str, object], **options: Any) -> Reply:
    """``tools/call`` of ``tool``."""
    return post(port, "tools/call", tool, {"name": tool, "arguments": arguments}, **options)


SESSION_HEADERS: Final = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}


def session_post(port: int, message: Mapping[str, object], session: str = "") -> Reply:
    """One message of a 2025-11-25 session (``session`` its id; none for ``initialize``)."""
    headers = dict(SESSION_HEADERS, **({"Mcp-Session-Id": session} if session else {}))
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10.0)
    try:
        connection.request("POST", "/mcp", json.dumps(message).encode(), headers)
        response = connection.getresponse()
        opened = response.getheader("Mcp-Session-Id") or ""
        return Reply(response.status, response.getheader("Retry-After"), response.read(), opened)
    finally:
        connection.close()


def open_session(port: int) -> str:
    """A new 2025-11-25 session on the node at ``port`` (any node serves it then): its id."""
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}}
    opened = session_post(
        port, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    )
    assert opened.status == 200 and opened.session, opened
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert session_post(port, initialized, opened.session).status == 202
    return opened.session


def session_call(
    port: int, session: str, tool: str, arguments: Mapping[str, object], *, id: int
) -> Reply:
    """``tools/call`` of ``tool`` in the session ``session``."""
    params = {"name": tool, "arguments": arguments}
    return session_post(
        port, {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}, session
    )


def text_of(reply: Reply) -> str:
    """The text of a tool's complete result (the reply must be one)."""
    assert reply.status == 200, reply
    result = reply.json()["result"]
    assert result["resultType"] == "complete", reply
    text: str = result["content"][0]["text"]
    return text


@dataclass
class Node(cluster.Node):
    """One ``mcpkit serve tests/scale/redis_faults_app.py`` process."""

    def rss_kib(self) -> int:
        """Its resident set size (``VmRSS``), in KiB."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")  # pragma: no cover - Linux always has it

    def open_files(self) -> int:
        """How many file descriptors it holds (sockets included)."""
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def broadcaster(self) -> dict[str, Any]:
        """Its broadcaster's ``pending``, ``dropped`` and ``connected``."""
        state: dict[str, Any] = json.loads(text_of(call(self.port, "broadcaster_state", {})))
        return state


def _wait_ready(node: Node) -> None:
    deadline = time.monotonic() + WAIT
    while True:
        assert node.process.poll() is None, f"{node.name} exited:\n{node.log()}"
        with contextlib.suppress(OSError, http.client.HTTPException):
            connection = http.client.HTTPConnection("127.0.0.1", node.port, timeout=1.0)
            try:
                connection.request("GET", "/readyz", headers={"Host": f"127.0.0.1:{node.port}"})
                if connection.getresponse().status == 200:
                    return
            finally:
                connection.close()
        assert time.monotonic() < deadline, f"{node.name} is not ready:\n{node.log()}"
        time.sleep(0.05)


def start_node(
    name: str,
    redis: DurableRedis,
    directory: Path,
    stack: contextlib.ExitStack,
    *,
    task_timeout_seconds: float,
    max_pending: int,
) -> Node:
    """A node named ``name`` (its task-store node and its connections' name in Redis), ready;
    ``stack`` stops it by its PID."""
    port = free_port()
    log_path = directory / f"{name}.log"
    env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "MCPKIT_REDIS_URL": f"{redis.url}?client_name={name}",
        "MCPKIT_NODE": name,
        "MCPKIT_TASK_TIMEOUT_SECONDS": str(task_timeout_seconds),
        "MCPKIT_MAX_PENDING": str(max_pending),
    }
    env.pop("COVERAGE_PROCESS_START", None)
    command = [sys.executable, "-m", "mcpkit", "serve", str(APP), "--port", str(port), "--health"]
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
            env=env,
        )  # fmt: skip
    stack.callback(stop_process, process)
    node = Node(name, port, process, log_path)
    _wait_ready(node)
    return node


# --- load -----------------------------------------------------------------------------------

KINDS: Final = ("echo", "strict", "inline", "create", "poll", "touch", "session")
"""What the load sends, in turn:

- ``echo``: ``tools/call`` of a tool whose Redis limiter has a local fallback;
- ``strict``: ``tools/call`` of a tool whose Redis limiter has none;
- ``inline``: ``tools/call`` of a task tool by a client that cannot take a task (answered at
  once; no task is stored);
- ``create``: the same call by a client that can (a task is created);
- ``poll``: ``tasks/get`` of a task that completed before the load began;
- ``touch``: ``tools/call`` of a tool that publishes a change through the broadcaster;
- ``session``: ``tools/call`` of ``echo`` in a 2025-11-25 session opened before the load (the
  same session on every node).
"""


@dataclass(frozen=True)
class Done:
    """One request of the load: what, where, with which id and text, when it was sent and
    answered, and the answer (or the name of the transport error instead)."""

    kind: str
    node: str
    id: int
    text: str
    sent: float
    answered: float
    reply: Reply | str

    @property
    def seconds(self) -> float:
        return self.answered - self.sent


class Load:
    """``threads`` threads, each sending the kinds of :data:`KINDS` in turn (starting at a
    different one) to the nodes in turn, one request at a time, until ``stop``."""

    def __init__(
        self, nodes: Sequence[Node], polled: Sequence[str], threads: int, session: str
    ) -> None:
        self.nodes = list(nodes)
        self.polled = list(polled)
        self.session = session
        self.done: list[Done] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._threads = [
            threading.Thread(target=self._run, args=(index,), name=f"load-{index}", daemon=True)
            for index in range(threads)
        ]

    def __enter__(self) -> Load:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._stopping.set()
        for thread in self._threads:
            thread.join(WAIT)
            assert not thread.is_alive(), "a load thread hangs"

    def _run(self, index: int) -> None:
        for turn in itertools.count(index):
            if self._stopping.is_set():
                return
            kind = KINDS[turn % len(KINDS)]
            node = self.nodes[(turn // len(KINDS) + index) % len(self.nodes)]
            with self._lock:
                id = next(self._ids)
            text = f"secret-{id}-\u00e9"
            sent = time.monotonic()
            try:
                reply: Reply | str = self._send(kind, node, id, text)
            except (OSError, http.client.HTTPException) as error:
                reply = type(error).__name__
            done = Done(kind, node.name, id, text, sent, time.monotonic(), reply)
            with self._lock:
                self.done.append(done)

    def _send(self, kind: str, node: Node, id: int, text: str) -> Reply:
        port = node.port
        if kind == "echo":
            return call(port, "echo", {"text": text}, id=id)
        if kind == "strict":
            return call(port, "strict_echo", {"text": text}, id=id)
        if kind == "inline":
            return call(port, "job", {"text": text}, id=id)
        if kind == "create":
            return call(port, "job", {"text": text}, id=id, tasks=True)
        if kind == "poll":
            task_id = self.polled[id % len(self.polled)]
            return post(port, "tasks/get", task_id, {"taskId": task_id}, id=id, tasks=True)
        if kind == "session":
            return session_call(port, self.session, "echo", {"text": text}, id=id)
        assert kind == "touch", kind
        return call(port, "touch", {}, id=id)

    def snapshot(self) -> list[Done]:
        with self._lock:
            return list(self.done)


# --- listen streams -------------------------------------------------------------------------


class ListenStream(threading.Thread):
    """A ``subscriptions/listen`` stream on one node, following ``uri``, read in a thread:
    ``messages`` are the JSON-RPC messages it carried, in order."""

    def __init__(self, node: Node, uri: str = WATCHED) -> None:
        super().__init__(name=f"listen-{node.name}", daemon=True)
        self.node = node
        self.messages: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        params = {"notifications": {"resourceSubscriptions": [uri]}}
        body = json.dumps(stateless_request("subscriptions/listen", params, id="listen"))
        self._connection = http.client.HTTPConnection("127.0.0.1", node.port, timeout=WAIT)
        headers = stateless_headers("subscriptions/listen")
        self._connection.request("POST", "/mcp", body.encode(), headers)
        self._response = self._connection.getresponse()
        assert self._response.status == 200, self._response.read()
        assert self._response.getheader("Content-Type") == "text/event-stream"
        self.start()

    def run(self) -> None:
        with contextlib.suppress(OSError, http.client.HTTPException, ValueError):
            while line := self._response.readline():
                if line.startswith(b"data: "):
                    message = json.loads(line.removeprefix(b"data: "))
                    with self._lock:
                        self.messages.append(message)

    def methods(self) -> list[str | None]:
        with self._lock:
            return [message.get("method") for message in self.messages]

    def updates(self) -> int:
        """How many ``notifications/resources/updated`` it heard."""
        return self.methods().count("notifications/resources/updated")

    def __enter__(self) -> ListenStream:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        sock = self._connection.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self.join(WAIT)
        self._connection.close()
