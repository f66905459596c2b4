"""Redis taken away under load and brought back: two ``mcpkit serve`` nodes of
``redis_faults_app.py`` (2025 sessions in ``RedisSessionStore``, tasks in ``RedisTaskStore``,
changes through ``RedisBroadcaster``, tool limits in ``RedisTokenBucket``, one with a local
fallback and one without) share a real ``redis-server`` with append-only persistence
(``redis_faults.py``).  While threads send every
kind of request to both nodes, Redis is killed (SIGKILL) and restarted on the same port, or hung
(SIGSTOP) and resumed.

- While Redis is unreachable, a request of a 2025 session fails 503 with ``Retry-After: 1``
  (-32603 ``Session store unavailable; retry later``) once its node's copy of the session is
  older than ``REVALIDATE``, and works again, in the same session, once Redis is back; stateless
  ``tools/call`` keeps working wherever its limiter has a fallback, and so do a task tool called
  without the tasks extension, a tool that publishes a change, ``tools/list``,
  ``resources/read`` and a new ``subscriptions/listen`` for resources; a tool whose limiter has
  no fallback is denied 429 with ``Retry-After: 1`` (-31999), and creating, reading or
  cancelling a task, or a listen that follows tasks, fails 503 with ``Retry-After: 1`` (-32603
  ``Task store unavailable; retry later``).  Nothing else is ever answered, no answer echoes
  what was sent, and none takes longer than the store's timeout and some slack (no hang).
- Once Redis answers again every request works again without restarting a node: task calls at
  once, the limiter without fallback once its one-second pause after a failure is over; each
  node's broadcaster subscribes again and a listen stream on either node hears a change
  published on one of them after that (and the changes queued meanwhile).
- Nothing completed is lost: the tasks completed before the outage are read, with their
  results, from either node afterwards (Redis wrote them to its append-only file), and the
  tasks created after it, or running through it, complete.  A task whose work ended while
  Redis was away completes with its result once Redis is back: its node kept the end and
  stored it then (no end is given up).
- Memory stays bounded: the broadcaster's queue holds at most ``max_pending`` changes and
  drops (and counts) the rest, each node's resident memory grows by less than
  ``RSS_GROWTH_KIB``, its open files by less than ``FILES_GROWTH``, and each node holds at
  most ``CONNECTIONS`` connections to Redis once it is back (none leaked per failed call).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest

from mcpkit import Limits
from mcpkit.server._redis_broadcast import MAX_DELAY
from mcpkit.server._redis_rate_limit import _RETRY_SECONDS
from mcpkit.server._tasks import _RETRY_MOST

from ..redis_server import running
from .redis_faults import (
    PASSWORD,
    WATCHED,
    Done,
    DurableRedis,
    ListenStream,
    Load,
    Node,
    Reply,
    call,
    open_session,
    post,
    start_node,
    text_of,
)

NODES: Final = 2
THREADS: Final = 6
"""Load threads: at most this many requests are in flight at once, on all nodes together."""
TASK_TIMEOUT: Final = 1.0
"""The task store's ``timeout_seconds``: the longest a task call waits on a hung Redis."""
LIMITER_TIMEOUT: Final = Limits().rate_limit_check_timeout_seconds / 2
"""The longest a ``RedisTokenBucket`` waits on a hung Redis (then its fallback, or the fixed
denial, answers): a task call waits for it first."""
MAX_PENDING: Final = 20
"""The broadcaster's queue bound (``max_pending``)."""
WARMUP: Final = 1.5
OUTAGE: Final = 3.0
"""Seconds Redis stays away."""
AFTER: Final = _RETRY_SECONDS + 2.0
"""Seconds of load once Redis is back (past the limiter's pause after its last failure)."""
THROUGH: Final = 10.0
"""Seconds a task works across the outage (it ends once Redis is back)."""
SLACK: Final = 2.0
"""Added to every time bound: a loaded two-core machine runs the nodes, the load and Redis."""
SETTLE: Final = 0.2
"""After the signal: a request sent later meets a Redis that is gone (or hung) for sure."""
RSS_GROWTH_KIB: Final = 10 * 1024
"""What an outage may add to a node's resident memory (its highest, sampled every 50 ms,
over its size once warm).  What a node holds for an outage is bounded: at most
``MAX_PENDING`` queued changes of ~60 bytes, one fallback bucket, and pooled connections for
the calls in flight, so the growth is allocator noise (about 1 MiB when this was written).
Each node answers over a thousand calls with an outage error in the ``kill`` run: anything
kept per failed call from about 8 KiB up (a connection, a traceback) shows past this."""
FILES_GROWTH: Final = 4 * THREADS + 9
"""What an outage may add to a node's open files: pooled connections (session and task
stores and two limiters, each at most one per call in flight), the broadcaster's two, the
session store's channel, listen streams."""
CONNECTIONS: Final = 4 * (THREADS + 1) + 4
"""The most connections a node may hold to Redis once it is back: the session and task
stores' and the two limiters' pools (each at most one per call in flight: the load's and the
test's own), the broadcaster's publisher and subscriber, the session store's channel (plus one
lease renewal).  A connection leaked per failed call would be hundreds."""

UNAVAILABLE: Final = {"code": -32603, "message": "Task store unavailable; retry later"}
SESSIONS_UNAVAILABLE: Final = {"code": -32603, "message": "Session store unavailable; retry later"}
REVALIDATE: Final = 1.0
"""The session store's ``revalidate_seconds``: for that long after a node last read the
session, a request of it may still be served while Redis is away."""
DENIED: Final = {"code": -31999, "message": "Rate limit exceeded"}
ALWAYS: Final = frozenset({"echo", "inline", "touch"})
"""Kinds of the load that must keep working while Redis is unreachable."""
SHARED: Final = frozenset({"strict", "create", "poll", "session"})
"""Kinds that fail with their fixed answer while it is."""


# --- answers --------------------------------------------------------------------------------


def error_of(reply: Reply, id: int | str) -> dict[str, Any] | None:
    """The JSON-RPC error of ``reply`` if it is exactly an error answer to ``id`` (nothing
    else in it), else ``None``."""
    try:
        message = reply.json()
    except ValueError:
        return None
    if set(message) != {"jsonrpc", "id", "error"} or message["id"] != id:
        return None
    error: dict[str, Any] = message["error"]
    return error


def fixed_unavailable(reply: Reply, id: int | str) -> bool:
    """The task store's outage answer, exactly."""
    return (reply.status, reply.retry_after) == (503, "1") and error_of(reply, id) == UNAVAILABLE


def fixed_sessions_unavailable(reply: Reply, id: int | str) -> bool:
    """The session store's outage answer, exactly."""
    return (reply.status, reply.retry_after) == (503, "1") and (
        error_of(reply, id) == SESSIONS_UNAVAILABLE
    )


def fixed_denial(reply: Reply, id: int | str) -> bool:
    """The outage answer of a limiter without fallback, exactly."""
    return (reply.status, reply.retry_after) == (429, "1") and error_of(reply, id) == DENIED


def content(text: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": text}]


def verdict(done: Done, polled: Mapping[str, str]) -> str:
    """``ok`` (what a node answers while Redis is up), ``down`` (the fixed answer of an
    outage), or what else came."""
    reply = done.reply
    if isinstance(reply, str):
        return f"no answer: {reply}"
    if done.kind in SHARED:
        fixed = {"strict": fixed_denial, "session": fixed_sessions_unavailable}.get(
            done.kind, fixed_unavailable
        )
        if fixed(reply, done.id):
            return "down"
    if reply.status != 200 or reply.body[:1] != b"{":
        return f"HTTP {reply.status}: {reply.body[:300]!r}"
    result = reply.json().get("result", {})
    if done.kind == "create":
        good = result.get("resultType") == "task" and result.get("status") == "working"
    elif done.kind == "poll":
        task_id = result.get("taskId", "")
        good = result.get("status") == "completed" and result.get("result", {}).get(
            "content"
        ) == content(polled.get(task_id, "?"))
    elif done.kind == "session":  # a 2025 result: no resultType
        good = result.get("content") == content(done.text)
    else:
        text = "touched" if done.kind == "touch" else done.text
        good = result.get("resultType") == "complete" and result.get("content") == content(text)
    return "ok" if good else f"wrong result: {reply.body[:300]!r}"


# --- waiting --------------------------------------------------------------------------------


def until(condition: Callable[[], bool], within: float, what: str) -> float:
    """Wait until ``condition`` holds; the seconds it took (fails past ``within``)."""
    start = time.monotonic()
    while not condition():
        assert time.monotonic() - start < within, f"not within {within} s: {what}"
        time.sleep(0.05)
    return time.monotonic() - start


def task_state(node: Node, task_id: str) -> dict[str, Any]:
    reply = post(node.port, "tasks/get", task_id, {"taskId": task_id}, tasks=True)
    assert reply.status == 200, reply
    result: dict[str, Any] = reply.json()["result"]
    return result


def reach(node: Node, task_id: str, status: str, within: float) -> dict[str, Any]:
    """Poll the task on ``node`` until it has ``status``; the task then."""
    until(lambda: task_state(node, task_id)["status"] == status, within, f"task {status}")
    return task_state(node, task_id)


def completed_tasks(nodes: Sequence[Node], count: int) -> dict[str, str]:
    """``count`` tasks created on the nodes in turn, completed (read on the next node): their
    ids and texts."""
    made: dict[str, str] = {}
    for index in range(count):
        text = f"kept-{index}-\u00e9"
        node, other = nodes[index % len(nodes)], nodes[(index + 1) % len(nodes)]
        created = call(node.port, "job", {"text": text}, tasks=True).json()["result"]
        assert created["resultType"] == "task", created
        reach(other, created["taskId"], "completed", within=5.0)
        made[created["taskId"]] = text
    return made


class Peaks(threading.Thread):
    """Samples each node's resident memory every 50 ms until ``stop`` (or a node is gone):
    the highest seen."""

    def __init__(self, nodes: Sequence[Node]) -> None:
        super().__init__(name="rss-peaks", daemon=True)
        self.nodes = nodes
        self.highest = {node.name: node.rss_kib() for node in nodes}
        self._stopping = threading.Event()
        self.start()

    def run(self) -> None:
        with contextlib.suppress(OSError):  # a node that died: the test fails on its own
            while not self._stopping.wait(0.05):
                for node in self.nodes:
                    self.highest[node.name] = max(self.highest[node.name], node.rss_kib())

    def stop(self) -> dict[str, int]:
        self._stopping.set()
        self.join(5.0)
        return self.highest


# --- the outage ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Fault:
    """How Redis is taken away and brought back."""

    name: str
    error: str
    """The error type the nodes log while Redis is away."""

    def take(self, redis: DurableRedis) -> None:
        if self.name == "kill":
            redis.kill()
        else:
            redis.pause()

    def restore(self, redis: DurableRedis) -> None:
        if self.name == "kill":
            redis.start()  # on the same port, with what its append-only file holds
        else:
            redis.resume()
            until(redis.answers, within=SLACK, what="Redis answers once resumed")


FAULTS: Final = [Fault("kill", "ConnectionError"), Fault("pause", "TimeoutError")]


@dataclass
class Outage:
    """What the test saw around one outage."""

    lost_at: float = 0.0
    """When Redis was gone (killed) or hung."""
    restoring_at: float = 0.0
    """When it began to come back."""
    back_at: float = 0.0
    """When it answered again."""
    probes: dict[str, Reply] | None = None
    queue: list[dict[str, Any]] | None = None


def probe_during_outage(nodes: Sequence[Node], polled: Sequence[str]) -> dict[str, Reply]:
    """One of each request, on the first node, while Redis is away: those the load sends too
    (whose answers in the load depend on its timing), and those it does not send."""
    port = nodes[0].port
    task_id = polled[0]
    listen_tasks = {"notifications": {"taskIds": [task_id]}}
    return {
        "echo": call(port, "echo", {"text": "probe-echo"}, id=96),
        "strict_echo": call(port, "strict_echo", {"text": "probe-strict"}, id=97),
        "job": call(port, "job", {"text": "probe-inline"}, id=98),
        "job as a task": call(port, "job", {"text": "probe-task"}, id=99, tasks=True),
        "tasks/get": post(port, "tasks/get", task_id, {"taskId": task_id}, id=100, tasks=True),
        "tools/list": post(port, "tools/list", None, {}, id=101),
        "resources/read": post(port, "resources/read", WATCHED, {"uri": WATCHED}, id=102),
        "tasks/cancel": post(
            port, "tasks/cancel", task_id, {"taskId": task_id}, id=103, tasks=True
        ),
        "listen for tasks": post(
            port, "subscriptions/listen", None, listen_tasks, id=104, tasks=True
        ),
    }


def fill_queues(nodes: Sequence[Node]) -> list[dict[str, Any]]:
    """Publish more changes than a broadcaster holds on each node; each one's state after."""
    for node in nodes:
        for _ in range(MAX_PENDING + 5):
            assert text_of(call(node.port, "touch", {})) == "touched"
    return [node.broadcaster() for node in nodes]


@contextlib.contextmanager
def listening(nodes: Sequence[Node]) -> Iterator[list[ListenStream]]:
    streams: list[ListenStream] = []
    try:
        streams.extend(ListenStream(node) for node in nodes)
        yield streams
    finally:
        for stream in streams:
            stream.close()


def acknowledged(stream: ListenStream) -> bool:
    return stream.methods()[:1] == ["notifications/subscriptions/acknowledged"]


@pytest.mark.parametrize("fault", FAULTS, ids=[fault.name for fault in FAULTS])
def test_redis_away_under_load_fails_only_the_fixed_answers_and_everything_comes_back(
    fault: Fault, tmp_path: Path
) -> None:
    outage = Outage()
    with running(DurableRedis) as redis, contextlib.ExitStack() as stack:
        nodes = [
            start_node(
                f"node{index}", redis, tmp_path, stack,
                task_timeout_seconds=TASK_TIMEOUT, max_pending=MAX_PENDING,
            )
            for index in range(NODES)
        ]  # fmt: skip
        stack.callback(redis.wake)  # before the nodes stop (last in, first out)
        pids = [node.process.pid for node in nodes]
        polled = completed_tasks(nodes, 4)
        with listening(nodes) as streams:
            until(lambda: all(map(acknowledged, streams)), within=5.0, what="listens open")
            # a change published on one node reaches a listen stream on each: Redis is up
            assert text_of(call(nodes[0].port, "touch", {})) == "touched"
            until(lambda: [s.updates() for s in streams] == [1] * NODES, 5.0, "heard once")

            session = open_session(nodes[0].port)
            with Load(nodes, list(polled), THREADS, session) as load:
                time.sleep(WARMUP)
                base_rss = {node.name: node.rss_kib() for node in nodes}
                base_files = {node.name: node.open_files() for node in nodes}
                peaks = Peaks(nodes)
                stack.callback(peaks.stop)
                # one task's work ends while Redis is away, another's once it is back
                straddling = call(nodes[0].port, "job", {"text": "straddling", "seconds": 0.5},
                                  tasks=True).json()["result"]["taskId"]  # fmt: skip
                through = call(nodes[1].port, "job", {"text": "through", "seconds": THROUGH},
                               tasks=True).json()["result"]["taskId"]  # fmt: skip

                fault.take(redis)
                outage.lost_at = time.monotonic()
                time.sleep(SETTLE)
                heard_at_loss = [stream.updates() for stream in streams]
                outage.probes = probe_during_outage(nodes, list(polled))
                with ListenStream(nodes[1]) as opened:  # a new listen for resources opens
                    until(lambda: acknowledged(opened), within=SLACK, what="listen opens")
                outage.queue = fill_queues(nodes)
                heard_in_outage = [stream.updates() for stream in streams]
                time.sleep(max(0.0, outage.lost_at + OUTAGE - time.monotonic()))

                outage.restoring_at = time.monotonic()
                fault.restore(redis)
                outage.back_at = time.monotonic()
                time.sleep(AFTER)
            highest = peaks.stop()

            # each broadcaster subscribes again (with backoff), sends what it queued, and a
            # change published on one node reaches the listen streams on both
            def sent_all() -> bool:
                return all(
                    state["connected"] and state["pending"] == 0
                    for state in (node.broadcaster() for node in nodes)
                )

            until(sent_all, within=MAX_DELAY + SLACK, what="the broadcasters are back")
            before = [stream.updates() for stream in streams]
            assert text_of(call(nodes[0].port, "touch", {})) == "touched"
            until(
                lambda: all(s.updates() > b for s, b in zip(streams, before, strict=True)),
                within=SLACK,
                what="a change after the outage is heard on every node",
            )
            heard_after = [stream.updates() for stream in streams]

        # nothing completed is lost, read from either node
        for node in nodes:
            for task_id, text in polled.items():
                found = task_state(node, task_id)
                assert found["status"] == "completed", found
                assert found["result"]["content"] == content(text), found
        created = [done for done in load.done if done.kind == "create"]
        late = [
            done for done in created
            if verdict(done, polled) == "ok" and done.sent > outage.back_at
        ]  # fmt: skip
        for done in late:  # created once Redis was back: they complete
            assert isinstance(done.reply, Reply)
            task_id = done.reply.json()["result"]["taskId"]
            reach(nodes[0], task_id, "completed", within=SLACK)
            assert task_state(nodes[1], task_id)["result"]["content"] == content(done.text)
        # its end was kept while Redis was away, and stored once it was back
        straddled = reach(nodes[1], straddling, "completed", within=_RETRY_MOST + SLACK)
        finished = reach(nodes[0], through, "completed", within=THROUGH)
        assert finished["result"]["content"] == content("through"), finished

        states = [node.broadcaster() for node in nodes]
        rss = {node.name: node.rss_kib() for node in nodes}
        files = {node.name: node.open_files() for node in nodes}
        time.sleep(0.5)  # Redis notices the connections closed while it hung
        connections = redis.clients()
        port = redis.port
        alive = [node.process.poll() is None for node in nodes]
        logs = {node.name: node.log() for node in nodes}

    # --- what every request was answered -------------------------------------------------
    answered = load.done
    verdicts = [(d, verdict(d, polled)) for d in answered]
    print(  # shown with -s, and with a failure
        f"{fault.name}: {len(answered)} requests, "
        + ", ".join(
            f"{kind} {sum(v == 'ok' for d, v in verdicts if d.kind == kind)} ok "
            f"{sum(v == 'down' for d, v in verdicts if d.kind == kind)} down"
            for kind in sorted({d.kind for d in answered})
        )
        + f"; slowest {max(d.seconds for d in answered):.2f} s; RSS {base_rss} -> peak {highest}"
        f" -> {rss} KiB; files {base_files} -> {files}; Redis connections {connections}"
    )
    unexpected = [(d, v) for d, v in verdicts if v not in ("ok", "down")]
    assert unexpected == [], unexpected[:5]
    # stateless calls kept working throughout; only the fixed answers were ever failures
    assert all(v == "ok" for d, v in verdicts if d.kind in ALWAYS)
    away = [
        (d, v) for d, v in verdicts
        if d.sent >= outage.lost_at + SETTLE and d.answered <= outage.restoring_at
    ]  # fmt: skip
    for kind in SHARED:
        # (a node serves a session it read within REVALIDATE seconds without Redis)
        settled = outage.lost_at + SETTLE + (REVALIDATE if kind == "session" else 0.0)
        during = [v for d, v in away if d.kind == kind and d.sent >= settled]
        assert set(during) == {"down"}, (kind, during)  # one at least: the load met it
    for kind in ALWAYS:
        assert any(d.kind == kind for d, _ in away), kind
    # no hang: within the store's timeout (a hung Redis), after the limiter's, plus slack
    slowest = max(answered, key=lambda d: d.seconds)
    assert slowest.seconds <= LIMITER_TIMEOUT + TASK_TIMEOUT + SLACK, slowest
    # back without a restart of any node: task calls at once, the strict limiter once its
    # pause after the last failure is over
    assert alive == [True] * NODES and [node.process.pid for node in nodes] == pids
    for kind in SHARED:
        ready = outage.back_at + (_RETRY_SECONDS + 1.0 if kind == "strict" else 0.5)
        after = [v for d, v in verdicts if d.kind == kind and d.sent >= ready]
        assert len(after) >= 3 and set(after) == {"ok"}, (kind, after)

    # the requests no load sends
    probes = outage.probes
    assert probes is not None
    assert text_of(probes["echo"]) == "probe-echo"
    assert fixed_denial(probes["strict_echo"], 97), probes["strict_echo"]
    assert text_of(probes["job"]) == "probe-inline"
    assert fixed_unavailable(probes["job as a task"], 99), probes["job as a task"]
    assert fixed_unavailable(probes["tasks/get"], 100), probes["tasks/get"]
    assert probes["tools/list"].status == 200, probes["tools/list"]
    assert probes["resources/read"].status == 200, probes["resources/read"]
    assert fixed_unavailable(probes["tasks/cancel"], 103), probes["tasks/cancel"]
    assert fixed_unavailable(probes["listen for tasks"], 104), probes["listen for tasks"]

    # the broadcasters' queues stayed bounded, dropping (and counting) the rest
    assert outage.queue is not None
    for state in outage.queue:
        assert state["pending"] == MAX_PENDING and state["dropped"] >= 5, outage.queue
    assert all(state["pending"] == 0 for state in states), states
    # nothing was heard while Redis was away; once it was back each stream heard at least
    # what its own node had queued (published once that node's subscription was live again)
    assert heard_in_outage == heard_at_loss, (heard_at_loss, heard_in_outage)
    for count, earlier in zip(before, heard_in_outage, strict=True):
        assert count - earlier >= MAX_PENDING, (heard_in_outage, before, heard_after)

    # the task whose work ended while Redis was away completed with its result, and no node
    # gave up an end (each was kept until Redis took it)
    assert straddled["result"]["content"] == content("straddling"), straddled
    for name, text in logs.items():
        assert "a task's end could not be stored" not in text, name

    # memory, files and connections stayed bounded
    for node in nodes:
        assert highest[node.name] - base_rss[node.name] < RSS_GROWTH_KIB, (base_rss, highest)
        assert files[node.name] - base_files[node.name] < FILES_GROWTH, (base_files, files)
        assert connections.get(node.name, 0) <= CONNECTIONS, connections

    # the logs name the outage by its error type only: no password, nothing a client sent
    for name, text in logs.items():
        assert f"mcpkit: task store failed with {fault.error}" in text, text
        assert f"RedisTokenBucket cannot use Redis ({fault.error}); denying every call" in text
        assert "RedisTokenBucket cannot use Redis" in text and "the fallback limits" in text
        assert "mcpkit: RedisTokenBucket reaches Redis again" in text, text
        assert "Traceback" not in text and PASSWORD not in text and "secret-" not in text, name
    if fault.name == "kill":
        where = f"redis://127.0.0.1:{port}/0"
        for text in logs.values():
            assert f"RedisBroadcaster: no subscription at Redis at {where} (Conn" in text
            assert f"RedisBroadcaster: subscribed to Redis at {where} again" in text
