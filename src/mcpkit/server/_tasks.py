"""Running tasks: the server's task runner, and the two objects applications use.

A tool that supports tasks (``TaskSupport.OPTIONAL`` or ``REQUIRED``), called on 2026-07-28 by
a request that declares the extension, becomes a task: the runner stores it (``working``),
answers the call with its id, and runs the tool's own handler in the background, within
``max_running_tasks`` slots of its own (ordinary calls keep ``handler_slots``) and
``task_timeout_seconds``.  ``tasks/cancel`` fires the handler's ``CancellationToken``; a
progress report becomes the task's ``statusMessage``; an input-required result makes it
``input_required`` until ``tasks/update`` has answered every request, then the handler runs
again with the answers (as a 2025 session asks its client, so a handler is written once).

An application that runs work elsewhere writes an operation handler instead (a method returning
``TaskCreatedResult[R]``): it finds a ``TaskCreation`` among its features, creates the task,
and finishes it later through the ``TaskHandle``.

The store is the authority: the runner changes a task only through it, and what a client sees
is what the store holds.  An end the store cannot take (``TaskStoreUnavailable``) is kept and
offered again until it can, for as long as the task lives.  When the server stops, tasks still
running, or whose end is still waiting to be stored, are left as they are; on the next start
(``recover``) each is failed with ``TaskInterrupted``, or run again when its tool says it is
idempotent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

from mcpkit.errors import (
    Cancelled,
    DeadlineExceeded,
    InternalError,
    OutputError,
    ProtocolError,
    TaskInterrupted,
    TaskStoreUnavailable,
)
from mcpkit.json import JsonObject, JsonValue, decode, encode
from mcpkit.limits import Limits
from mcpkit.model import CancellationToken, InputRequiredResult, Revision, ToolRegistration
from mcpkit.protocol import error_object, wire_error
from mcpkit.server._execution import Executor
from mcpkit.server._task_store import (
    TaskKey,
    TaskRecord,
    TaskStatus,
    TaskStore,
    new_task_id,
)

__all__ = ["TaskCreation", "TaskHandle", "TaskRunner", "Work"]

log = logging.getLogger("mcpkit.server")

Work = Callable[["Running"], Awaitable[bytes]]
"""A managed task's work: given its ``Running`` state, the encoded tool result it ends with."""

_SWEEP_SECONDS: Final = 60.0
"""The longest time between two sweeps of expired tasks (shorter for a short TTL)."""
_RETRY_FIRST: Final = 0.1
"""Seconds before a task's end that the store could not take is offered again."""
_RETRY_MOST: Final = 2.0
"""The longest pause between two offers of an end (the pause doubles up to it), so an end is
stored within about this long of the store answering again."""


def failure(error: BaseException, *, debug: bool = False) -> bytes:
    """The stored error object of a task that failed with ``error`` (anything that is not a
    ``ProtocolError`` is the fixed internal error; ``debug``: development mode)."""
    if not isinstance(error, ProtocolError):
        error = InternalError()
    _, written = wire_error(error, Revision.V2026_07_28, debug=debug)
    return error_object(written)


@dataclass(eq=False)
class Running:
    """A managed task while its work runs in this process."""

    key: TaskKey
    expires: float = math.inf
    """When the task's TTL ends (wall-clock seconds): its end is not offered again past it."""
    token: CancellationToken = field(default_factory=CancellationToken)
    stopped: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the work must stop (cancelled, expired, the server stopping): the executor
    abandons a handler still running, and a wait for input ends."""
    answered: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when ``tasks/update`` answered the last outstanding request."""
    cancelled: bool = False
    task: asyncio.Task[None] | None = None
    progress: _Progress | None = None
    retrying: bool = False
    """Waiting to offer the task's end to the store again (what stopping the server cuts)."""

    def stop(self) -> None:
        self.token.cancel()
        self.stopped.set()
        self.answered.set()


class _Progress:
    """A handler's progress reports, kept as the task's status message: the latest one is
    written, one write at a time, from whichever thread reported it."""

    def __init__(self, runner: TaskRunner, key: TaskKey, loop: asyncio.AbstractEventLoop) -> None:
        self._runner = runner
        self._key = key
        self._loop = loop
        self._pending: str | None = None
        self._writing: asyncio.Task[None] | None = None

    def report(self, params: JsonObject) -> None:
        """A ``ProgressReporter``'s send: its message, or ``progress[/total]`` without one."""
        message = params.get("message")
        if not isinstance(message, str):
            total = params.get("total")
            progress = params.get("progress")
            message = f"{progress}" if total is None else f"{progress}/{total}"
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            self._note(message)
        else:  # a ``def`` handler, in a worker thread
            self._loop.call_soon_threadsafe(self._note, message)

    def _note(self, message: str) -> None:
        self._pending = message
        if self._writing is None or self._writing.done():
            self._writing = self._loop.create_task(self._write())

    async def _write(self) -> None:
        while self._pending is not None:
            message, self._pending = self._pending, None
            with contextlib.suppress(TaskStoreUnavailable):  # a hint; the next one may land
                await self._runner.store.working(self._key, message)

    async def settle(self) -> None:
        """Wait for the last report to be written (before the task's status changes)."""
        if self._writing is not None:
            await self._writing


class TaskRunner:
    """The server's tasks: creates them in the store, runs managed ones, relays cancellation
    and answers to the work that waits for them, and removes expired ones."""

    def __init__(self, store: TaskStore, limits: Limits, *, debug: bool = False) -> None:
        self.store = store
        self.limits = limits
        self.debug = debug
        """Development mode: a handler's unexpected exception is stored with its type name."""
        self.executor = Executor(
            slots=limits.max_running_tasks, queue=limits.max_tasks, thread_name_prefix="mcpkit-task"
        )
        self._running: dict[str, Running] = {}
        # Tasks whose work ended and whose end is not stored yet.  An end the store could not
        # take stays here, offered again, until the store takes it, the TTL passes or the
        # server stops: at most one per task this node ran (each still stored, within
        # ``max_tasks``), holding the result its work produced already.
        self._ending: dict[str, Running] = {}
        self._stopping = False
        self._checks: set[asyncio.Task[None]] = set()  # ``heard``'s look-ups in progress
        self._sweeper: asyncio.Task[None] | None = None
        self._recovered = False
        self.resume: Callable[[TaskRecord], Work | None] = _no_work
        """Gives the work of a managed task to run again after a restart (the engine's)."""
        self.changed: Callable[[TaskKey], None] | None = None
        """Told of every change the runner makes (listen streams' ``notifications/tasks``)."""

    def __repr__(self) -> str:
        return f"TaskRunner({len(self._running)} running)"

    @property
    def running(self) -> int:
        return len(self._running)

    def _tell(self, key: TaskKey) -> None:
        if self.changed is not None:
            self.changed(key)

    async def ready(self) -> TaskStore:
        """The store, once the tasks a previous process left running were recovered (at the
        first use after a start, or at the server's startup, whichever comes first)."""
        if not self._recovered:
            self._recovered = True
            await self.recover(self.resume)
        return self.store

    async def create(
        self,
        *,
        owner: str | None,
        endpoint: str,
        tool: ToolRegistration,
        managed: bool,
        origin: bytes | None = None,
    ) -> TaskRecord:
        """Store a new ``working`` task (``TaskQuota`` or ``TaskStoreUnavailable`` when it
        cannot be); once this returns, ``tasks/get`` finds it."""
        now = time.time()
        annotations = tool.annotations
        record = TaskRecord(
            task_id=new_task_id(),
            owner=owner,
            endpoint=endpoint,
            tool=tool.name,
            status=TaskStatus.WORKING,
            created_at=now,
            updated_at=now,
            ttl_seconds=self.limits.task_ttl_seconds,
            managed=managed,
            rerun=managed and annotations is not None and annotations.idempotent is True,
            arguments=origin if managed else None,
        )
        await (await self.ready()).create(record, self.limits)
        self._sweep_soon()
        return record

    def launch(self, record: TaskRecord, work: Work) -> None:
        """Run a managed task's ``work`` in the background and settle the task with what it
        ends with."""
        running = Running(record.key, expires=record.created_at + record.ttl_seconds)
        self._running[record.task_id] = running
        running.task = asyncio.get_running_loop().create_task(self._drive(running, work))

    def progress(self, running: Running) -> Callable[[JsonObject], None]:
        """The send of a task handler's ``ProgressReporter``."""
        if running.progress is None:
            running.progress = _Progress(self, running.key, asyncio.get_running_loop())
        return running.progress.report

    async def _drive(self, running: Running, work: Work) -> None:
        key = running.key
        try:
            outcome: bytes | BaseException = await work(running)
        except asyncio.CancelledError:
            return  # the server is stopping: the task is left for the next start
        except (ProtocolError, Cancelled) as error:
            outcome = error
        except Exception as error:  # a failure of the runner's own: never the client's to see
            log.error("mcpkit: a task's work failed with %s", type(error).__name__)
            outcome = InternalError()
        finally:
            self._running.pop(key.task_id, None)
        self._ending[key.task_id] = running
        try:
            if running.progress is not None:
                await running.progress.settle()
            await self._end(running, outcome)
        finally:
            self._ending.pop(key.task_id, None)

    async def _end(self, running: Running, outcome: bytes | BaseException) -> None:
        """Store the task's end; while the store is unavailable, keep it and offer it again
        after a pause that doubles from ``_RETRY_FIRST`` to ``_RETRY_MOST``, until the store
        takes it, the task's TTL has passed or the server stops.  Given up, the task stays as
        stored: ``working`` until it expires, or until a start's ``recover`` (or another
        node's, once this one's lease lapsed) fails it or runs it again."""
        pause = _RETRY_FIRST
        retried = False
        while True:
            try:
                await self._settle(running, outcome, retried=retried)
                return
            except TaskStoreUnavailable:
                pass
            now = time.time()
            if self._stopping or now >= running.expires:
                break
            if not retried:
                log.warning("mcpkit: a task's end cannot be stored now; trying again")
                retried = True
            running.retrying = True
            try:
                await asyncio.sleep(min(pause, running.expires - now))
            except asyncio.CancelledError:
                break  # the server is stopping
            finally:
                running.retrying = False
            pause = min(pause * 2, _RETRY_MOST)
        log.error("mcpkit: a task's end could not be stored; it stays as stored")

    async def _settle(
        self, running: Running, outcome: bytes | BaseException, *, retried: bool = False
    ) -> None:
        """Store the task's end (``retried``: an earlier offer failed, and may have been
        written all the same)."""
        key = running.key
        record = await self.store.get(key)
        if record is None or record.status.terminal:
            # expired, or ended by someone else (then never overwritten), or by an offer
            # whose answer was lost: listeners are told of that one here
            if retried and record is not None:
                self._tell(key)
            return
        if running.cancelled or record.cancel_requested:
            await self.store.finish(key, TaskStatus.CANCELLED)
        elif isinstance(outcome, bytes):
            if len(outcome) > self.limits.max_task_result_bytes:
                await self.store.finish(key, TaskStatus.FAILED, error=failure(OutputError()))
            else:
                await self.store.finish(key, TaskStatus.COMPLETED, result=outcome)
        else:
            await self.store.finish(
                key, TaskStatus.FAILED, error=failure(outcome, debug=self.debug)
            )
        self._tell(key)

    async def ask(
        self, running: Running, requests: Mapping[str, object], deadline: float
    ) -> JsonObject | None:
        """Make the task ``input_required`` with ``requests`` (ids already unique over its
        life), wait until ``tasks/update`` answered them all, and return the answers; raises
        ``Cancelled`` when the task was cancelled meanwhile, ``DeadlineExceeded`` past
        ``deadline`` (a ``loop.time()``)."""
        key = running.key
        if running.progress is not None:
            await running.progress.settle()
        text = self.requests_text(requests)
        running.answered.clear()
        record = await self.store.ask(key, text)
        if record is None or record.status is not TaskStatus.INPUT_REQUIRED:
            raise Cancelled()  # expired or ended meanwhile
        self._tell(key)
        remaining = deadline - asyncio.get_running_loop().time()
        try:
            await asyncio.wait_for(running.answered.wait(), max(remaining, 0.0))
        except TimeoutError:
            raise DeadlineExceeded() from None
        if running.stopped.is_set():
            raise Cancelled()
        responses = await self.store.take_responses(key)
        return None if responses is None else decode(responses)  # type: ignore[return-value]

    def requests_text(self, requests: Mapping[str, object]) -> bytes:
        """Input requests as a task keeps them: within ``max_task_result_bytes`` (else the
        fixed ``OutputError``), as any stored payload."""
        text = encode(JsonObject(requests), limits=self.limits)
        if len(text) > self.limits.max_task_result_bytes:
            raise OutputError()
        return text

    async def answer(self, key: TaskKey, responses: Mapping[str, bytes]) -> TaskRecord | None:
        """Record ``tasks/update``'s answers; the task's work goes on once none is left."""
        record = await self.store.answer(key, responses)
        if record is None:
            return None
        if record.status is TaskStatus.WORKING:
            running = self._running.get(key.task_id)
            if running is not None:
                running.answered.set()
        self._tell(key)
        return record

    async def cancel(self, key: TaskKey) -> TaskRecord | None:
        """Record that cancellation was asked for, and stop the task's work if it runs here
        (it ends ``cancelled``); ``None`` when there is no such task."""
        record = await self.store.cancel(key)
        if record is None:
            return None
        running = self._running.get(key.task_id)
        if running is not None and not record.status.terminal:
            running.cancelled = True
            running.stop()
        self._tell(key)
        return record

    def heard(self, task_id: str | None) -> None:
        """A task changed on some node (a shared broadcaster's ``TASK`` change; any thread):
        if its work runs here, act on what another node recorded, which its own
        ``cancel``/``answer`` could not reach: a requested cancellation stops the work, and
        the last answer of a ``tasks/update`` lets it go on."""
        running = None if task_id is None else self._running.get(task_id)
        if running is not None and running.task is not None:
            running.task.get_loop().call_soon_threadsafe(self._check_soon, running)

    def _check_soon(self, running: Running) -> None:
        check = asyncio.get_running_loop().create_task(self._check(running))
        self._checks.add(check)  # kept until done: the loop holds tasks only weakly
        check.add_done_callback(self._checks.discard)

    async def _check(self, running: Running) -> None:
        if running.stopped.is_set():
            return
        try:
            record = await self.store.get(running.key)
        except TaskStoreUnavailable:
            return  # the next change, or the task's own deadline, comes anyway
        if record is None or record.status.terminal:
            return
        if record.cancel_requested:
            running.cancelled = True
            running.stop()
        elif record.status is TaskStatus.WORKING and record.responses is not None:
            running.answered.set()  # every request answered, elsewhere

    # --- lifecycle --------------------------------------------------------------------------

    async def recover(self, resume: Callable[[TaskRecord], Work | None]) -> None:
        """At a start: every managed task that had not ended when its process stopped is run
        again (``resume`` gives its work: its tool is idempotent and still served) or fails
        with ``TaskInterrupted``."""
        await self._take_over(await self.store.interrupted(), resume)
        self._sweep_soon()

    async def _take_over(
        self, records: list[TaskRecord], resume: Callable[[TaskRecord], Work | None]
    ) -> None:
        """Run ``records`` (tasks whose process stopped) again, or fail them."""
        for record in records:
            work = resume(record) if record.rerun else None
            if work is None:
                await self.store.finish(
                    record.key, TaskStatus.FAILED, error=failure(TaskInterrupted())
                )
                continue
            restarted = await self.store.working(record.key)
            if restarted is not None:
                await self.store.take_responses(record.key)  # answers meant for the old run
                self.launch(restarted, work)

    def _sweep_soon(self) -> None:
        if self._sweeper is None or self._sweeper.done():
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep())

    async def _sweep(self) -> None:
        """Remove expired tasks (stopping the work of any still running), and take over the
        tasks of dead nodes where the store is shared (``orphaned``), every ``_SWEEP_SECONDS``
        or a quarter of the TTL, until the server stops."""
        pause = min(_SWEEP_SECONDS, self.limits.task_ttl_seconds / 4)
        while True:
            await asyncio.sleep(pause)
            try:
                gone = await self.store.expire(time.time())
            except TaskStoreUnavailable:
                gone = []
            for key in gone:
                running = self._running.get(key.task_id)
                if running is not None:
                    running.stop()
            # a store shared by several nodes also names the tasks of nodes that died
            orphaned = getattr(self.store, "orphaned", None)
            if orphaned is not None:
                with contextlib.suppress(TaskStoreUnavailable):
                    await self._take_over(await orphaned(), self.resume)

    async def shutdown(self) -> None:
        """Stop: running work is abandoned (its tasks stay as stored, for the next start's
        ``recover``) and the sweeper ends.  An end being stored is waited for, within the
        store's own timeout; one waiting to be offered again is given up (logged), its task
        left as stored too.  The store stays open (the application owns it)."""
        if self._sweeper is not None:
            self._sweeper.cancel()
        tasks = [running.task for running in self._running.values() if running.task]
        for running in list(self._running.values()):
            running.token.cancel()
        for task in tasks:
            task.cancel()
        self._stopping = True  # an offer that fails from now on is the last
        try:
            for running in self._ending.values():
                if running.retrying and running.task is not None:
                    running.task.cancel()
            tasks += [running.task for running in self._ending.values() if running.task]
            if tasks:
                await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            self._stopping = False  # nothing is left ending: a later start begins afresh
        self.executor.shutdown()


def _no_work(record: TaskRecord) -> Work | None:
    return None


class TaskHandle:
    """One task, for the work that finishes it: what an operation handler's
    ``TaskCreation.create()`` returns.  Every method changes the task through the store;
    once the task has ended, later changes are ignored."""

    __slots__ = ("_finish", "_key", "_runner")

    def __init__(self, key: TaskKey, runner: TaskRunner, finish: Callable[[object], bytes]) -> None:
        self._key = key
        self._runner = runner
        self._finish = finish

    @property
    def task_id(self) -> str:
        return self._key.task_id

    def __repr__(self) -> str:
        return "TaskHandle()"

    async def record(self) -> TaskRecord | None:
        """The task as stored now (``None`` once it expired)."""
        return await self._runner.store.get(self._key)

    async def cancel_requested(self) -> bool:
        """Whether the client asked to cancel (``tasks/cancel``): stop, then call
        :meth:`cancelled`."""
        record = await self.record()
        return record is None or record.cancel_requested

    async def progress(self, message: str | None) -> None:
        """Still working, with a status message for the client (``statusMessage``)."""
        await self._runner.store.working(self._key, message)
        self._runner._tell(self._key)

    async def ask(self, result: InputRequiredResult) -> None:
        """Wait for input: the task is ``input_required`` with ``result``'s requests (their
        ids must be new in this task's life) until the client answered them all through
        ``tasks/update``; then :meth:`responses` has the answers.  Requests over
        ``max_task_result_bytes`` raise ``OutputError`` (nothing is stored)."""
        if not result.input_requests:
            raise ValueError("TaskHandle.ask needs at least one input request")
        text = self._runner.requests_text(result.input_requests)
        await self._runner.store.ask(self._key, text)
        self._runner._tell(self._key)

    async def responses(self) -> Mapping[str, JsonValue] | None:
        """The answers received since the last call (``None`` when there are none)."""
        text = await self._runner.store.take_responses(self._key)
        return None if text is None else decode(text)  # type: ignore[return-value]

    async def complete(self, value: object) -> None:
        """Complete the task with the tool's result: a value of its output type, or a
        ``CompleteResult`` (an ``isError`` one too).  It is written as the call would have
        been answered (the sanitizer included); a value that cannot be written fails the
        task with the fixed internal error instead."""
        try:
            result = self._finish(value)
        except ProtocolError as error:
            await self.fail(error)
            return
        if len(result) > self._runner.limits.max_task_result_bytes:
            await self.fail(OutputError())
            return
        await self._runner.store.finish(self._key, TaskStatus.COMPLETED, result=result)
        self._runner._tell(self._key)

    async def fail(self, error: ProtocolError | None = None) -> None:
        """Fail the task with a protocol error (the fixed internal error by default); a tool
        that ran and failed should rather :meth:`complete` with an ``isError`` result."""
        await self._runner.store.finish(
            self._key, TaskStatus.FAILED, error=failure(error or InternalError())
        )
        self._runner._tell(self._key)

    async def cancelled(self) -> None:
        """End the task ``cancelled`` (after the client asked, or on the application's own
        decision)."""
        await self._runner.store.finish(self._key, TaskStatus.CANCELLED)
        self._runner._tell(self._key)


class TaskCreation:
    """Among the features of an operation handler that creates its task itself (a method
    returning ``TaskCreatedResult[R]``): ``await creation.create()`` stores a new task of
    this call's tool and caller and returns its handle; the handler then returns
    ``TaskCreatedResult(task_id=handle.task_id)``."""

    __slots__ = ("_created", "_endpoint", "_finish", "_owner", "_runner", "_tool")

    def __init__(
        self,
        runner: TaskRunner,
        *,
        owner: str | None,
        endpoint: str,
        tool: ToolRegistration,
        finish: Callable[[object], bytes],
    ) -> None:
        self._runner = runner
        self._owner = owner
        self._endpoint = endpoint
        self._tool = tool
        self._finish = finish
        self._created: dict[str, TaskRecord] = {}

    def __repr__(self) -> str:
        return "TaskCreation()"

    async def create(self) -> TaskHandle:
        """A new ``working`` task (``TaskQuota`` past the caller's or the server's share,
        ``TaskStoreUnavailable`` when it cannot be stored)."""
        record = await self._runner.create(
            owner=self._owner, endpoint=self._endpoint, tool=self._tool, managed=False
        )
        self._created[record.task_id] = record
        return TaskHandle(record.key, self._runner, self._finish)

    def created(self, task_id: str) -> TaskRecord | None:
        """The task this call created under ``task_id``, as it was created."""
        return self._created.get(task_id)
