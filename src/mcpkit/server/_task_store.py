"""Where tasks live: the ``TaskStore`` interface, the record it keeps and the in-memory store.

A task (the ``io.modelcontextprotocol/tasks`` extension) is a ``tools/call`` whose answer comes
later: the server returns its id at once and the client polls ``tasks/get``.  The store is the
authority on every task: its status, its result or error, the input it waits for and whether
its cancellation was asked for.  Whatever runs the task's work (the server's own runner, or
the application's workers through ``TaskHandle``) changes it only through the store, and a
``tasks/*`` request only reads what the store holds.

Every lookup and change names the task by its ``TaskKey``: its id together with the caller
(the authorization partition admission returned) and the endpoint.  A key that names another
caller's task finds nothing, exactly as an id never issued: the two are indistinguishable.

The rules of the record live here, once, for every store: a task starts ``working``; it goes
``working`` <-> ``input_required`` any number of times; it ends ``completed``, ``failed`` or
``cancelled``, and a task that ended never changes again (a later change is ignored and the
stored record returned).  ``MemoryTaskStore`` keeps tasks in this process (lost on restart;
for tests and development, never chosen silently); ``SqliteTaskStore`` keeps them in a file.
"""

from __future__ import annotations

import enum
import heapq
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Final, NamedTuple, Protocol

from mcpkit.errors import TaskQuota
from mcpkit.json import JsonObject, JsonValue, decode, encode
from mcpkit.limits import Limits

__all__ = [
    "Change",
    "MemoryTaskStore",
    "TaskKey",
    "TaskRecord",
    "TaskStatus",
    "TaskStore",
    "answering",
    "asking",
    "cancelling",
    "finishing",
    "new_task_id",
    "working",
]

_ID_BYTES: Final = 32
"""256 random bits per task id (``secrets``), written as 43 URL-safe characters."""


def new_task_id() -> str:
    """A fresh, unguessable task id."""
    return secrets.token_urlsafe(_ID_BYTES)


class TaskStatus(enum.Enum):
    """Where a task is; the value is its wire spelling."""

    WORKING = "working"
    INPUT_REQUIRED = "input_required"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        """Whether the task has ended (``completed``, ``failed`` or ``cancelled``): then it
        never changes again."""
        return self in _TERMINAL


_TERMINAL: Final = frozenset({TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED})


class TaskKey(NamedTuple):
    """Which task, asked by whom, where: every store call names a task by all three."""

    task_id: str
    owner: str | None
    """The caller's authorization partition (``None``: the anonymous partition)."""
    endpoint: str
    """The path of the endpoint whose tool started the task."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskRecord:
    """One task as the store keeps it.

    The payloads are JSON text (UTF-8 bytes, written by the server's codec), kept byte for byte:
    ``result`` (``completed``: the tool result object), ``error`` (``failed``: the JSON-RPC
    error object), ``input_requests`` (``input_required``: the outstanding requests, an object
    keyed by the ids the client answers with), ``responses`` (answers received and not yet
    handed to the task's work) and ``arguments`` (the call's arguments, kept for a tool that
    may be run again after a restart).  ``repr`` shows none of them (they hold what the client
    sent or will be sent).
    """

    task_id: str
    owner: str | None
    endpoint: str
    tool: str
    """The name of the tool whose call started the task (its output schema checks the result
    when it is delivered)."""
    status: TaskStatus
    created_at: float
    """Wall-clock seconds (``time.time()``) when the task was created."""
    updated_at: float
    ttl_seconds: float
    """How long after ``created_at`` the task is kept; then the store removes it."""
    managed: bool = True
    """Whether the server runs the task's work (its runner) rather than the application: only
    managed tasks are failed, or run again, when they were running at a restart."""
    rerun: bool = False
    """Whether the tool said it may be run again (idempotent): a managed task that was running
    at a restart is started afresh rather than failed."""
    status_message: str | None = None
    result: bytes | None = None
    error: bytes | None = None
    input_requests: bytes | None = None
    responses: bytes | None = None
    arguments: bytes | None = None
    cancel_requested: bool = False
    rounds: int = 0
    """How many times the task asked for input: input request ids are made unique across the
    task's life with it."""

    @property
    def key(self) -> TaskKey:
        return TaskKey(self.task_id, self.owner, self.endpoint)

    def expired(self, now: float) -> bool:
        return now >= self.created_at + self.ttl_seconds

    def __repr__(self) -> str:
        return f"TaskRecord({self.status.value}, tool={self.tool!r})"


class TaskStore(Protocol):
    """Where tasks are kept.  The server calls it from its event loop; an implementation that
    blocks should be quick (a local file), or hand its work to a thread.

    Methods that look a task up return ``None`` for a key that finds nothing (unknown, expired
    or another caller's).  A store that cannot read or write raises ``TaskStoreUnavailable``
    (and keeps what it held); ``create`` raises ``TaskQuota`` at ``limits.max_tasks`` or at
    ``limits.max_tasks_per_owner`` for the record's owner, counting every task it still keeps.
    """

    async def create(self, record: TaskRecord, limits: Limits) -> None:
        """Keep a new task (``working``, its id fresh); once this returns, ``get`` finds it."""
        ...

    async def get(self, key: TaskKey) -> TaskRecord | None:
        """The task as stored now (a task past its TTL is not found)."""
        ...

    async def working(self, key: TaskKey, message: str | None = None) -> TaskRecord | None:
        """Back to (or still) ``working``, with a new status message (``None`` clears it);
        outstanding input requests are dropped.  Ignored once the task has ended."""
        ...

    async def ask(self, key: TaskKey, requests: bytes) -> TaskRecord | None:
        """``input_required``: ``requests`` (a JSON object, non-empty) are outstanding;
        ``rounds`` goes up by one.  Ignored once the task has ended."""
        ...

    async def answer(self, key: TaskKey, responses: Mapping[str, bytes]) -> TaskRecord | None:
        """Record answers (each a JSON value's text) to outstanding requests; ids that are not
        outstanding are ignored.  An answered request is no longer outstanding; once none is,
        the task is ``working`` again with its answers waiting in ``responses`` for
        ``take_responses``.  Ignored unless the task is ``input_required``."""
        ...

    async def take_responses(self, key: TaskKey) -> bytes | None:
        """The answers recorded so far (a JSON object's text), cleared as they are handed
        over; ``None`` when there are none or no such task."""
        ...

    async def finish(
        self,
        key: TaskKey,
        status: TaskStatus,
        *,
        result: bytes | None = None,
        error: bytes | None = None,
        message: str | None = None,
    ) -> TaskRecord | None:
        """End the task: ``completed`` with its ``result``, ``failed`` with its ``error``, or
        ``cancelled`` with neither.  A task that already ended keeps its end (the stored record
        is returned unchanged)."""
        ...

    async def cancel(self, key: TaskKey) -> TaskRecord | None:
        """Record that cancellation was asked for (durably; the task's work observes it).  The
        status is not changed here."""
        ...

    async def expire(self, now: float) -> list[TaskKey]:
        """Remove every task past its TTL; the keys of those removed."""
        ...

    async def interrupted(self) -> list[TaskRecord]:
        """Managed tasks that have not ended: at a server's start, tasks whose work stopped
        with the process that ran it."""
        ...

    async def close(self) -> None:
        """Release what the store holds open (a file); later calls may fail."""
        ...


def _object(text: bytes | None) -> dict[str, JsonValue]:
    value = decode(text) if text else None
    return dict(value) if isinstance(value, JsonObject) else {}


Change = Callable[[TaskRecord, float], "TaskRecord | None"]
"""One change to a stored task (the rules of the record, for every store): given the record
as stored and the time, the record to store instead, or ``None`` to leave it as it is."""


def working(message: str | None) -> Change:
    """``TaskStore.working``: back to (or still) ``working``; nothing once ended."""

    def change(record: TaskRecord, now: float) -> TaskRecord | None:
        if record.status.terminal:
            return None
        return replace(
            record,
            status=TaskStatus.WORKING,
            status_message=message,
            input_requests=None,
            updated_at=now,
        )

    return change


def asking(requests: bytes) -> Change:
    """``TaskStore.ask``: ``input_required`` with ``requests``, one more round."""

    def change(record: TaskRecord, now: float) -> TaskRecord | None:
        if record.status.terminal:
            return None
        return replace(
            record,
            status=TaskStatus.INPUT_REQUIRED,
            input_requests=requests,
            rounds=record.rounds + 1,
            updated_at=now,
        )

    return change


def answering(responses: Mapping[str, bytes]) -> Change:
    """``TaskStore.answer``: answers to outstanding requests are kept (others ignored); once
    none is outstanding the task is ``working`` again.  Only an ``input_required`` task."""

    def change(record: TaskRecord, now: float) -> TaskRecord | None:
        if record.status is not TaskStatus.INPUT_REQUIRED:
            return None
        requests = _object(record.input_requests)
        received = _object(record.responses)
        for request_id, text in responses.items():
            if request_id in requests:
                del requests[request_id]
                received[request_id] = decode(text)
        return replace(
            record,
            status=TaskStatus.INPUT_REQUIRED if requests else TaskStatus.WORKING,
            input_requests=encode(JsonObject(requests)) if requests else None,
            responses=encode(JsonObject(received)),
            updated_at=now,
        )

    return change


def finishing(
    status: TaskStatus, result: bytes | None, error: bytes | None, message: str | None
) -> Change:
    """``TaskStore.finish``: the end (``ValueError`` now for a status that is not one); a task
    that already ended keeps its own."""
    if not status.terminal:
        raise ValueError("finish takes completed, failed or cancelled")

    def change(record: TaskRecord, now: float) -> TaskRecord | None:
        if record.status.terminal:
            return None
        return replace(
            record,
            status=status,
            result=result if status is TaskStatus.COMPLETED else None,
            error=error if status is TaskStatus.FAILED else None,
            status_message=message,
            input_requests=None,
            responses=None,
            updated_at=now,
        )

    return change


def cancelling(record: TaskRecord, now: float) -> TaskRecord | None:
    """``TaskStore.cancel``: cancellation asked for, once, of a task that has not ended."""
    if record.status.terminal or record.cancel_requested:
        return None
    return replace(record, cancel_requested=True, updated_at=now)


class MemoryTaskStore:
    """Tasks kept in this process, bounded by the ``Limits`` given to ``create``: lost when the
    process ends, so for tests and development (a server never picks it by itself).  Expired
    tasks are removed as new ones are created and by ``expire``.  Thread-safe."""

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._tasks: dict[str, TaskRecord] = {}
        self._owned: dict[str | None, int] = {}
        self._ends: list[tuple[float, str]] = []  # (end of TTL, id): a heap, soonest first
        self._lock = threading.Lock()
        self._clock = clock

    def __len__(self) -> int:
        return len(self._tasks)

    def __repr__(self) -> str:
        return f"MemoryTaskStore({len(self._tasks)} tasks)"

    def _find(self, key: TaskKey) -> TaskRecord | None:
        record = self._tasks.get(key.task_id)
        if record is None or record.owner != key.owner or record.endpoint != key.endpoint:
            return None
        if record.expired(self._clock()):
            return None
        return record

    def _put(self, record: TaskRecord) -> TaskRecord:
        self._tasks[record.task_id] = record
        return record

    def _drop(self, task_id: str) -> None:
        record = self._tasks.pop(task_id)
        left = self._owned[record.owner] - 1
        if left:
            self._owned[record.owner] = left
        else:
            del self._owned[record.owner]

    async def create(self, record: TaskRecord, limits: Limits) -> None:
        with self._lock:
            self._expire(self._clock())
            if record.task_id in self._tasks:
                raise ValueError("a task with this id is stored already")
            if len(self._tasks) >= limits.max_tasks:
                raise TaskQuota()
            if self._owned.get(record.owner, 0) >= limits.max_tasks_per_owner:
                raise TaskQuota()
            self._tasks[record.task_id] = record
            self._owned[record.owner] = self._owned.get(record.owner, 0) + 1
            heapq.heappush(self._ends, (record.created_at + record.ttl_seconds, record.task_id))

    async def get(self, key: TaskKey) -> TaskRecord | None:
        with self._lock:
            return self._find(key)

    def _change(self, key: TaskKey, change: Change) -> TaskRecord | None:
        with self._lock:
            record = self._find(key)
            changed = None if record is None else change(record, self._clock())
            return record if changed is None else self._put(changed)

    async def working(self, key: TaskKey, message: str | None = None) -> TaskRecord | None:
        return self._change(key, working(message))

    async def ask(self, key: TaskKey, requests: bytes) -> TaskRecord | None:
        return self._change(key, asking(requests))

    async def answer(self, key: TaskKey, responses: Mapping[str, bytes]) -> TaskRecord | None:
        return self._change(key, answering(responses))

    async def take_responses(self, key: TaskKey) -> bytes | None:
        with self._lock:
            record = self._find(key)
            if record is None or record.responses is None:
                return None
            self._put(replace(record, responses=None))
            return record.responses

    async def finish(
        self,
        key: TaskKey,
        status: TaskStatus,
        *,
        result: bytes | None = None,
        error: bytes | None = None,
        message: str | None = None,
    ) -> TaskRecord | None:
        return self._change(key, finishing(status, result, error, message))

    async def cancel(self, key: TaskKey) -> TaskRecord | None:
        return self._change(key, cancelling)

    def _expire(self, now: float) -> list[TaskKey]:
        """Remove the tasks past their TTL, soonest first: no scan of the tasks kept."""
        gone: list[TaskKey] = []
        ends = self._ends
        while ends and ends[0][0] <= now:
            # One entry per kept task (pushed by ``create``, popped only here), and a task's
            # end never changes: the entry's task is kept, and expired.
            _, task_id = heapq.heappop(ends)
            gone.append(self._tasks[task_id].key)
            self._drop(task_id)
        return gone

    async def expire(self, now: float) -> list[TaskKey]:
        with self._lock:
            return self._expire(now)

    async def interrupted(self) -> list[TaskRecord]:
        return []  # nothing outlives the process that ran it

    async def close(self) -> None:
        return None
