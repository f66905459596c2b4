"""Task stores: ``MemoryTaskStore``, ``SqliteTaskStore`` and ``RedisTaskStore`` keep the same rules
of a task record (its transitions, its owner and endpoint partition, its TTL and the quotas of
``Limits``); the SQLite and Redis stores keep tasks across a restart, byte for byte, and name
the tasks a restart interrupted; the SQLite store refuses a second opener and fails as
``TaskStoreUnavailable`` without losing what it held (Redis's own cases:
``test_redis_task_store``)."""

from __future__ import annotations

import asyncio
import logging
import re
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import pytest
import redis

from mcpkit.errors import ConfigurationError, TaskQuota, TaskStoreUnavailable
from mcpkit.json import decode
from mcpkit.limits import Limits
from mcpkit.server._redis_task_store import RedisTaskStore
from mcpkit.server._task_sqlite import SqliteTaskStore
from mcpkit.server._task_store import (
    MemoryTaskStore,
    TaskKey,
    TaskRecord,
    TaskStatus,
    TaskStore,
    answering,
    new_task_id,
)

from ..redis_server import running_redis

T = TypeVar("T")
START = 1_000.0
TTL = 60.0
LIMITS = Limits()
TERMINAL = [TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED]
# Non-ASCII, odd spacing and a trailing newline: what the store must not normalise.
RESULT = '{ "content" :[ {"type":"text","text":"h\u00e9llo \u2603\t\U0001f600"} ] }\n'.encode()


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


def task(
    owner: str | None = "alice",
    *,
    endpoint: str = "/mcp",
    ttl: float = TTL,
    created: float = START,
    **fields: Any,
) -> TaskRecord:
    fields.setdefault("task_id", new_task_id())
    return TaskRecord(
        owner=owner,
        endpoint=endpoint,
        tool="slow",
        status=TaskStatus.WORKING,
        created_at=created,
        updated_at=created,
        ttl_seconds=ttl,
        **fields,
    )


def sqlite_rows(path: Path) -> int:
    """Tasks in a closed store's file, read by a connection of its own."""
    connection = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        (count,) = connection.execute("SELECT count(*) FROM tasks").fetchone()
    finally:
        connection.close()
    return int(count)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "tasks.db"


@pytest.fixture(scope="module")
def shared_redis() -> Iterator[str]:
    """One ``redis-server`` for the module's Redis cases (``redis_url`` empties it for each)."""
    with running_redis() as server:
        yield server.url


@pytest.fixture
def redis_url(shared_redis: str) -> str:
    """The module's Redis, emptied for this test."""
    client = redis.Redis.from_url(shared_redis)
    try:
        client.flushall()
    finally:
        client.close()
    return shared_redis


Opener = Callable[[], TaskStore]


@pytest.fixture(params=["sqlite", "redis"])
def opener(request: pytest.FixtureRequest, clock: Clock, path: Path) -> Opener:
    """Opens a durable store on the same tasks each time it is called: its file, or its Redis
    (a new node each time, as a restarted process is)."""
    if request.param == "sqlite":
        return lambda: SqliteTaskStore(path, clock=clock)
    url: str = request.getfixturevalue("redis_url")
    return lambda: RedisTaskStore(url, clock=clock)


@pytest.fixture(params=["memory", "sqlite", "redis"])
def store(request: pytest.FixtureRequest, clock: Clock, path: Path) -> Iterator[TaskStore]:
    opened: TaskStore
    if request.param == "memory":
        opened = MemoryTaskStore(clock=clock)
    elif request.param == "sqlite":
        opened = SqliteTaskStore(path, clock=clock)
    else:
        opened = RedisTaskStore(request.getfixturevalue("redis_url"), clock=clock)
    yield opened
    run(opened.close())


@pytest.fixture
def sqlite_store(clock: Clock, path: Path) -> Iterator[SqliteTaskStore]:
    opened = SqliteTaskStore(path, clock=clock)
    yield opened
    run(opened.close())


# --- the record and its keys ------------------------------------------------------------------


def test_every_field_survives_the_round_trip(store: TaskStore) -> None:
    record = task(
        managed=False,
        rerun=True,
        status_message="half way",
        result=RESULT,
        error=b'{"code":-32603,"message":"x"}',
        input_requests=b'{"r1":{"method":"elicitation/create"}}',
        responses=b'{"r0":true}',
        arguments=b'{"n": 1 ,"s":"\xc3\xa9"}',
        cancel_requested=True,
        rounds=3,
    )
    run(store.create(record, LIMITS))
    found = run(store.get(record.key))
    assert found == record
    assert found is not None and found.result == RESULT


def test_a_key_finds_only_its_owner_and_endpoint(store: TaskStore) -> None:
    mine, anonymous = task("alice"), task(None)
    run(store.create(mine, LIMITS))
    run(store.create(anonymous, LIMITS))
    assert run(store.get(mine.key)) == mine
    assert run(store.get(anonymous.key)) == anonymous
    assert run(store.get(mine.key._replace(owner="mallory"))) is None
    assert run(store.get(mine.key._replace(owner=None))) is None
    assert run(store.get(anonymous.key._replace(owner="alice"))) is None
    assert run(store.get(mine.key._replace(endpoint="/other"))) is None
    assert run(store.get(mine.key._replace(task_id=new_task_id()))) is None


def test_changes_to_an_unknown_task_find_nothing(store: TaskStore) -> None:
    record = task()
    run(store.create(record, LIMITS))
    other = record.key._replace(owner="mallory")
    assert run(store.working(other, "x")) is None
    assert run(store.ask(other, b'{"a":{}}')) is None
    assert run(store.answer(other, {"a": b"1"})) is None
    assert run(store.take_responses(other)) is None
    assert run(store.finish(other, TaskStatus.COMPLETED, result=b"{}")) is None
    assert run(store.cancel(other)) is None
    assert run(store.get(record.key)) == record


def test_a_stored_id_cannot_be_created_again(store: TaskStore) -> None:
    record = task()
    run(store.create(record, LIMITS))
    with pytest.raises(ValueError, match="stored already"):
        run(store.create(task("bob", task_id=record.task_id), LIMITS))
    assert run(store.get(record.key)) == record


def test_repr_shows_no_payload_or_path(store: TaskStore, path: Path) -> None:
    record = task(result=b"secret-result", arguments=b"secret-arguments")
    run(store.create(record, LIMITS))
    assert "secret" not in repr(record)
    assert repr(record) == "TaskRecord(working, tool='slow')"
    shown = repr(store)
    assert str(path.parent) not in shown
    assert shown in (
        "MemoryTaskStore(1 tasks)",
        "SqliteTaskStore('tasks.db')",
    ) or re.fullmatch(
        r"RedisTaskStore\('redis://127\.0\.0\.1:\d+/0', prefix='mcpkit:tasks:'\)", shown
    )


def test_new_task_ids_are_long_and_fresh() -> None:
    ids = {new_task_id() for _ in range(100)}
    assert len(ids) == 100
    assert all(len(task_id) == 43 for task_id in ids)


# --- transitions ------------------------------------------------------------------------------


def test_input_rounds(store: TaskStore, clock: Clock) -> None:
    record = task()
    run(store.create(record, LIMITS))
    key = record.key

    clock.now += 1
    asked = run(store.ask(key, b'{"a":{"q":1},"b":{"q":2}}'))
    assert asked is not None
    assert asked.status is TaskStatus.INPUT_REQUIRED
    assert asked.rounds == 1
    assert asked.updated_at == clock.now
    assert run(store.get(key)) == asked

    clock.now += 1
    partial = run(store.answer(key, {"a": b'"yes"', "zzz": b"1"}))
    assert partial is not None
    assert partial.status is TaskStatus.INPUT_REQUIRED
    assert partial.input_requests is not None
    assert decode(partial.input_requests) == decode(b'{"b":{"q":2}}')
    assert partial.updated_at == clock.now

    clock.now += 1
    done = run(store.answer(key, {"b": b"[1, 2]"}))
    assert done is not None
    assert done.status is TaskStatus.WORKING
    assert done.input_requests is None
    assert run(store.get(key)) == done

    taken = run(store.take_responses(key))
    assert taken is not None
    assert decode(taken) == decode(b'{"a":"yes","b":[1,2]}')
    assert run(store.take_responses(key)) is None
    after = run(store.get(key))
    assert after is not None and after.responses is None

    again = run(store.ask(key, b'{"c":{}}'))
    assert again is not None and again.rounds == 2


def test_answer_is_ignored_unless_input_is_required(store: TaskStore, clock: Clock) -> None:
    record = task()
    run(store.create(record, LIMITS))
    clock.now += 5
    assert run(store.answer(record.key, {"a": b"1"})) == record
    assert run(store.take_responses(record.key)) is None
    assert run(store.get(record.key)) == record


def test_working_drops_outstanding_requests(store: TaskStore, clock: Clock) -> None:
    record = task()
    run(store.create(record, LIMITS))
    run(store.ask(record.key, b'{"a":{}}'))
    run(store.answer(record.key, {"a": b"1"}))
    run(store.ask(record.key, b'{"b":{}}'))
    clock.now += 2
    back = run(store.working(record.key, "resuming"))
    assert back is not None
    assert back.status is TaskStatus.WORKING
    assert back.status_message == "resuming"
    assert back.input_requests is None
    assert back.responses == b'{"a":1}'  # answers received are still handed over
    assert back.updated_at == clock.now
    cleared = run(store.working(record.key))
    assert cleared is not None and cleared.status_message is None


@pytest.mark.parametrize("status", TERMINAL)
def test_finish_keeps_only_what_its_status_carries(
    store: TaskStore, clock: Clock, status: TaskStatus
) -> None:
    record = task()
    run(store.create(record, LIMITS))
    run(store.ask(record.key, b'{"a":{},"b":{}}'))
    run(store.answer(record.key, {"a": b"1"}))
    clock.now += 3
    ended = run(store.finish(record.key, status, result=RESULT, error=b'{"e":1}', message="m"))
    assert ended is not None
    assert ended.status is status
    assert ended.result == (RESULT if status is TaskStatus.COMPLETED else None)
    assert ended.error == (b'{"e":1}' if status is TaskStatus.FAILED else None)
    assert ended.status_message == "m"
    assert ended.input_requests is None
    assert ended.responses is None
    assert ended.updated_at == clock.now
    assert run(store.get(record.key)) == ended


@pytest.mark.parametrize("status", TERMINAL)
def test_an_ended_task_never_changes(store: TaskStore, clock: Clock, status: TaskStatus) -> None:
    record = task()
    run(store.create(record, LIMITS))
    ended = run(store.finish(record.key, status, result=b"{}", error=b"{}"))
    assert ended is not None
    clock.now += 10
    key = record.key
    assert run(store.working(key, "again")) == ended
    assert run(store.ask(key, b'{"a":{}}')) == ended
    assert run(store.answer(key, {"a": b"1"})) == ended
    for other in TERMINAL:
        assert run(store.finish(key, other, result=b"[]", error=b"[]", message="x")) == ended
    assert run(store.cancel(key)) == ended
    assert run(store.take_responses(key)) is None
    assert run(store.get(key)) == ended


@pytest.mark.parametrize("status", [TaskStatus.WORKING, TaskStatus.INPUT_REQUIRED])
def test_finish_refuses_a_status_that_does_not_end(store: TaskStore, status: TaskStatus) -> None:
    record = task()
    run(store.create(record, LIMITS))
    with pytest.raises(ValueError, match="finish takes"):
        run(store.finish(record.key, status))
    assert run(store.get(record.key)) == record


def test_cancel_is_recorded_and_leaves_the_status(store: TaskStore, clock: Clock) -> None:
    record = task()
    run(store.create(record, LIMITS))
    run(store.ask(record.key, b'{"a":{}}'))
    clock.now += 1
    cancelled = run(store.cancel(record.key))
    assert cancelled is not None
    assert cancelled.cancel_requested
    assert cancelled.status is TaskStatus.INPUT_REQUIRED
    assert cancelled.updated_at == clock.now
    clock.now += 1
    assert run(store.cancel(record.key)) == cancelled  # once asked, asking again changes nothing
    assert run(store.get(record.key)) == cancelled


# --- quotas -----------------------------------------------------------------------------------


def test_the_store_quota_holds_at_its_limit(store: TaskStore) -> None:
    limits = Limits().replace(max_tasks=3, max_tasks_per_owner=2)
    for owner in ("alice", "bob", None):
        run(store.create(task(owner), limits))
    with pytest.raises(TaskQuota):
        run(store.create(task("carol"), limits))
    assert run(store.expire(START)) == []  # nothing expired, nothing removed


def test_the_owner_quota_holds_at_its_limit(store: TaskStore) -> None:
    limits = Limits().replace(max_tasks=5, max_tasks_per_owner=2)
    for owner in ("alice", "alice", None, None):
        run(store.create(task(owner), limits))
    with pytest.raises(TaskQuota):
        run(store.create(task("alice"), limits))
    with pytest.raises(TaskQuota):
        run(store.create(task(None), limits))
    run(store.create(task("bob"), limits))  # the fifth task, another owner's
    with pytest.raises(TaskQuota):
        run(store.create(task("carol"), limits))


def test_ended_tasks_count_until_they_expire(store: TaskStore, clock: Clock) -> None:
    limits = Limits().replace(max_tasks=2, max_tasks_per_owner=2)
    first = task(ttl=10.0)
    run(store.create(first, limits))
    run(store.create(task(ttl=20.0), limits))
    run(store.finish(first.key, TaskStatus.COMPLETED, result=b"{}"))
    with pytest.raises(TaskQuota):
        run(store.create(task(created=clock.now), limits))
    clock.now = START + 10.0  # the first has expired: its place is free again
    run(store.create(task(created=clock.now), limits))
    assert run(store.get(first.key)) is None
    with pytest.raises(TaskQuota):
        run(store.create(task(created=clock.now), limits))


def test_quotas_hold_under_concurrent_creates(store: TaskStore) -> None:
    limits = Limits().replace(max_tasks=1_000, max_tasks_per_owner=30)
    created: list[str] = []
    refused: list[str] = []

    def worker() -> None:
        for _ in range(20):
            record = task()
            try:
                run(store.create(record, limits))
            except TaskQuota:
                refused.append(record.task_id)
            else:
                created.append(record.task_id)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (len(created), len(refused)) == (30, 50)


# --- TTL --------------------------------------------------------------------------------------


def test_a_task_is_found_until_its_ttl_ends(store: TaskStore, clock: Clock) -> None:
    record = task()
    run(store.create(record, LIMITS))
    clock.now = START + TTL - 0.001
    assert run(store.get(record.key)) == record
    clock.now = START + TTL
    assert run(store.get(record.key)) is None
    assert run(store.cancel(record.key)) is None
    assert run(store.working(record.key)) is None
    assert run(store.interrupted()) == []


def test_expire_removes_and_names_the_expired(store: TaskStore, clock: Clock) -> None:
    short = [task("alice", ttl=10.0), task("alice", ttl=10.0), task(None, ttl=5.0)]
    long = task("alice", ttl=100.0)
    for record in [*short, long]:
        run(store.create(record, LIMITS))
    assert run(store.expire(START + 9.0)) == [short[2].key]
    gone = run(store.expire(START + 10.0))
    assert sorted(gone) == sorted([short[0].key, short[1].key])
    assert run(store.expire(START + 10.0)) == []
    for record in short:
        assert run(store.get(record.key)) is None
    assert run(store.get(long.key)) == long
    # The removed owners' places are free: two more of alice's fit under a per-owner quota of 3.
    limits = Limits().replace(max_tasks_per_owner=3)
    run(store.create(task("alice"), limits))
    run(store.create(task("alice"), limits))
    with pytest.raises(TaskQuota):
        run(store.create(task("alice"), limits))


def _batch(store: TaskStore, clock: Clock) -> None:
    """A thousand tasks created, then all expired."""
    limits = Limits().replace(max_tasks=1_000, max_tasks_per_owner=1_000)
    created = [task(created=clock.now, arguments=b'{"n":12345}' * 20) for _ in range(1_000)]
    for record in created:
        run(store.create(record, limits))
    clock.now += TTL
    assert len(run(store.expire(clock.now))) == 1_000


def test_expired_tasks_leave_the_memory_store_empty(clock: Clock) -> None:
    store = MemoryTaskStore(clock=clock)
    _batch(store, clock)
    assert len(store) == 0
    assert run(store.interrupted()) == []
    _batch(store, clock)
    assert len(store) == 0


def test_expired_tasks_leave_the_sqlite_file_empty_and_bounded(clock: Clock, path: Path) -> None:
    store = SqliteTaskStore(path, clock=clock)

    def size() -> int:
        return sum(file.stat().st_size for file in path.parent.iterdir())

    sizes = []
    for _ in range(3):
        _batch(store, clock)
        sizes.append(size())
    run(store.close())
    # Freed pages are reused and ``expire`` empties the log, so each thousand needs the space
    # of one: the file is the high-water mark of a thousand rows (random ids split the b-trees
    # a little differently each time, a page or two), never the sum of the batches.
    assert max(sizes) <= sizes[0] * 1.05
    assert sizes[0] < 1_000_000
    assert sqlite_rows(path) == 0


# --- durability (SQLite and Redis); SQLite's file lock and faults --------------------------


def test_tasks_survive_close_and_reopen_byte_for_byte(opener: Opener) -> None:
    store = opener()
    record = task(None, result=RESULT, arguments=b'{ "x" :\t"\xe2\x98\x83" }', rounds=2)
    run(store.create(record, LIMITS))
    ended = run(store.finish(record.key, TaskStatus.COMPLETED, result=RESULT))
    run(store.close())

    reopened = opener()
    found = run(reopened.get(record.key))
    run(reopened.close())
    assert found == ended
    assert found is not None and found.result == RESULT and found.arguments == record.arguments


def test_a_second_opener_is_refused_until_the_first_closes(clock: Clock, path: Path) -> None:
    first = SqliteTaskStore(path, clock=clock)
    record = task()
    run(first.create(record, LIMITS))
    with pytest.raises(ConfigurationError, match="in use by another process"):
        SqliteTaskStore(path, clock=clock)
    assert run(first.get(record.key)) == record  # the refused opener changed nothing
    run(first.close())
    second = SqliteTaskStore(path, clock=clock)
    assert run(second.get(record.key)) == record
    run(second.close())


def test_another_process_is_refused(sqlite_store: SqliteTaskStore, path: Path) -> None:
    opener = (
        "import sys; from mcpkit.server._task_sqlite import SqliteTaskStore as S; S(sys.argv[1])"
    )
    child = subprocess.run(
        [sys.executable, "-c", opener, str(path)], capture_output=True, text=True, timeout=60
    )
    assert child.returncode == 1
    assert "ConfigurationError" in child.stderr
    assert "in use by another process" in child.stderr


def test_interrupted_names_managed_tasks_that_had_not_ended(clock: Clock, opener: Opener) -> None:
    store = opener()
    running, waiting = task(rerun=True), task(None)
    completed, failed, unmanaged, expired = task(), task(), task(managed=False), task(ttl=1.0)
    for record in (running, waiting, completed, failed, unmanaged, expired):
        run(store.create(record, LIMITS))
    run(store.ask(waiting.key, b'{"a":{}}'))
    run(store.finish(completed.key, TaskStatus.COMPLETED, result=b"{}"))
    run(store.finish(failed.key, TaskStatus.FAILED, error=b"{}"))
    run(store.close())

    clock.now += 1.0
    reopened = opener()
    found = run(reopened.interrupted())
    run(reopened.close())
    assert sorted(record.task_id for record in found) == sorted([running.task_id, waiting.task_id])
    assert {record.task_id: record.status for record in found} == {
        running.task_id: TaskStatus.WORKING,
        waiting.task_id: TaskStatus.INPUT_REQUIRED,
    }
    assert next(record for record in found if record.task_id == running.task_id).rerun


@pytest.mark.parametrize("fault", ["full", "read-only"])
def test_a_failing_file_is_unavailable_and_loses_nothing(
    clock: Clock, path: Path, caplog: pytest.LogCaptureFixture, fault: str
) -> None:
    store = SqliteTaskStore(path, clock=clock)
    kept = task()
    run(store.create(kept, LIMITS))
    connection = store._connection  # the store's own connection: a real SQLite fault on it
    if fault == "full":
        (pages,) = connection.execute("PRAGMA page_count").fetchone()
        connection.execute(f"PRAGMA max_page_count = {pages}")  # the disk is full
    else:
        connection.execute("PRAGMA query_only = ON")  # the file cannot be written
    big = b'"' + b"x" * 200_000 + b'"'

    with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
        with pytest.raises(TaskStoreUnavailable) as raised:
            run(store.create(task(arguments=big), LIMITS))
        with pytest.raises(TaskStoreUnavailable):
            run(store.finish(kept.key, TaskStatus.COMPLETED, result=big))
    assert str(raised.value) == "Task store unavailable; retry later"
    assert [record.levelno for record in caplog.records] == [logging.ERROR, logging.ERROR]
    assert caplog.records[0].getMessage() == "mcpkit: task store failed with OperationalError"
    assert run(store.get(kept.key)) == kept  # rolled back: the task is as it was
    run(store.close())

    reopened = SqliteTaskStore(path, clock=clock)
    assert run(reopened.get(kept.key)) == kept
    assert run(reopened.expire(clock.now + TTL)) == [kept.key]
    run(reopened.close())


def test_a_damaged_file_is_refused_when_opened(clock: Clock, path: Path) -> None:
    store = SqliteTaskStore(path, clock=clock)
    record = task()
    run(store.create(record, LIMITS))
    run(store.close())
    with path.open("r+b") as file:  # every page after the first (the schema's) overwritten
        file.seek(4096)
        file.write(b"\xff" * (path.stat().st_size - 4096))
    # refused when it is opened (the server does not start on it), never read as if whole
    with pytest.raises(ConfigurationError, match="cannot open the file"):
        SqliteTaskStore(path, clock=clock)


def test_a_closed_store_is_unavailable(opener: Opener) -> None:
    store = opener()
    run(store.close())
    with pytest.raises(TaskStoreUnavailable):
        run(store.get(TaskKey(new_task_id(), None, "/mcp")))
    with pytest.raises(TaskStoreUnavailable):
        run(store.expire(START))


def test_a_file_of_a_newer_schema_is_refused(path: Path) -> None:
    run(SqliteTaskStore(path).close())
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA user_version = 2")
    connection.close()
    with pytest.raises(ConfigurationError, match="schema version 2"):
        SqliteTaskStore(path)
    connection = sqlite3.connect(path)  # the refused store let go of the file, unchanged
    (version,) = connection.execute("PRAGMA user_version").fetchone()
    connection.close()
    assert version == 2


def test_another_applications_database_is_refused(path: Path) -> None:
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE notes (text)")
    connection.commit()
    connection.close()
    with pytest.raises(ConfigurationError, match="another application"):
        SqliteTaskStore(path)
    connection = sqlite3.connect(path)
    names = [name for (name,) in connection.execute("SELECT name FROM sqlite_master")]
    connection.close()
    assert names == ["notes"]


def test_a_file_that_is_not_a_database_is_refused(path: Path) -> None:
    path.write_bytes(b"not a database, " * 100)
    with pytest.raises(ConfigurationError, match="cannot open the file"):
        SqliteTaskStore(path)
    assert path.read_bytes() == b"not a database, " * 100


def test_a_path_that_cannot_be_opened_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot open the file"):
        SqliteTaskStore(tmp_path / "missing" / "tasks.db")


def test_a_database_without_a_log_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="write-ahead log"):
        SqliteTaskStore(":memory:")


def test_answering_keeps_only_outstanding_ids() -> None:
    """The one rule every store applies to ``answer`` (``_task_store.answering``)."""
    asked = replace(task(), status=TaskStatus.INPUT_REQUIRED)
    first = answering({"a": b"1"})(asked, START + 1)
    assert first is not None
    assert (first.status, first.input_requests, first.responses) == (
        TaskStatus.WORKING,
        None,
        b"{}",
    )
    waiting = replace(
        task(input_requests=b'{"a":{},"b":{}}', responses=b'{"z":0}'),
        status=TaskStatus.INPUT_REQUIRED,
    )
    second = answering({"b": b"2", "c": b"3"})(waiting, START + 1)
    assert second is not None and second.status is TaskStatus.INPUT_REQUIRED
    assert second.input_requests is not None
    assert decode(second.input_requests) == decode(b'{"a":{}}')
    assert second.responses is not None
    assert decode(second.responses) == decode(b'{"z":0,"b":2}')
    assert second.updated_at == START + 1
    assert answering({"a": b"1"})(task(), START + 1) is None  # a working task waits for nothing


def test_the_quota_counts_the_tasks_a_reopened_file_keeps(opener: Opener) -> None:
    """SQLite's counts are kept in memory while the file is open, and read again when it
    opens; Redis's are kept in Redis."""
    limits = LIMITS.replace(max_tasks_per_owner=2)
    store = opener()
    run(store.create(task(owner="alice"), limits))
    run(store.create(task(owner="alice"), limits))
    run(store.close())
    reopened = opener()
    with pytest.raises(TaskQuota):
        run(reopened.create(task(owner="alice"), limits))
    run(reopened.create(task(owner="bob"), limits))  # another owner's share is its own
    run(reopened.close())
