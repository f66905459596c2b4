"""``SqliteTaskStore``: tasks kept in one SQLite file, so they outlive the server's process.

One server process owns the file: the connection takes the file's lock when it opens
(``locking_mode=EXCLUSIVE``) and holds it until ``close``, so a second process, or a second
store in this one, is refused at once rather than finding tasks changed under it.  The journal
is a write-ahead log committed with ``synchronous=NORMAL``: a killed process loses nothing
committed, while a power loss or an operating-system crash may lose the last commits (never the
file's consistency).

Every call is a short transaction on the local file, done inline on the caller's thread under a
lock; each change reads the task, applies the rules of ``_task_store`` (the same as
``MemoryTaskStore``'s) and writes it back in one transaction.  A failure of SQLite (a full disk,
an I/O error, a damaged file) rolls the transaction back and raises ``TaskStoreUnavailable``:
nothing half-written is kept, and the client learns nothing of the cause.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

from mcpkit.errors import ConfigurationError, TaskQuota, TaskStoreUnavailable
from mcpkit.limits import Limits
from mcpkit.server._task_store import (
    Change,
    TaskKey,
    TaskRecord,
    TaskStatus,
    answering,
    asking,
    cancelling,
    finishing,
    working,
)

__all__ = ["SqliteTaskStore"]

log = logging.getLogger("mcpkit.server")

_SCHEMA_VERSION: Final = 1
"""``PRAGMA user_version`` of the layout below; a file with another (a newer mcpkit's) is
refused rather than misread."""

_BUSY_TIMEOUT_MS: Final = 100
"""How long a statement waits for the file's lock: only another process can hold it, and then
the store is refused at once, not after the default five seconds."""

_EXPIRE: Final = "DELETE FROM tasks WHERE expires_at <= ? RETURNING task_id, owner, endpoint"
_SCHEMA: Final = (
    """
    CREATE TABLE tasks (
        task_id TEXT PRIMARY KEY NOT NULL,
        owner TEXT,
        endpoint TEXT NOT NULL,
        tool TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN
            ('working', 'input_required', 'completed', 'failed', 'cancelled')),
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        ttl_seconds REAL NOT NULL,
        expires_at REAL NOT NULL,
        managed INTEGER NOT NULL CHECK (managed IN (0, 1)),
        rerun INTEGER NOT NULL CHECK (rerun IN (0, 1)),
        status_message TEXT,
        result BLOB,
        error BLOB,
        input_requests BLOB,
        responses BLOB,
        arguments BLOB,
        cancel_requested INTEGER NOT NULL CHECK (cancel_requested IN (0, 1)),
        rounds INTEGER NOT NULL
    ) WITHOUT ROWID
    """,
    "CREATE INDEX tasks_by_owner ON tasks (owner)",
    "CREATE INDEX tasks_by_expiry ON tasks (expires_at)",
)
"""One row per task.  ``expires_at`` is ``created_at + ttl_seconds``, computed once in Python
so that SQL and ``TaskRecord.expired`` agree to the bit; its index serves removal, and the
owner's serves the per-owner quota."""

_COLUMNS: Final = (
    "task_id, owner, endpoint, tool, status, created_at, updated_at, ttl_seconds, managed, "
    "rerun, status_message, result, error, input_requests, responses, arguments, "
    "cancel_requested, rounds"
)
_SELECT: Final = f"SELECT {_COLUMNS} FROM tasks"
_INSERT: Final = f"INSERT INTO tasks ({_COLUMNS}, expires_at) VALUES ({', '.join('?' * 19)})"
_UPDATE: Final = (
    "UPDATE tasks SET status = ?, updated_at = ?, status_message = ?, result = ?, error = ?, "
    "input_requests = ?, responses = ?, cancel_requested = ?, rounds = ? WHERE task_id = ?"
)
_NOT_ENDED: Final = f"('{TaskStatus.WORKING.value}', '{TaskStatus.INPUT_REQUIRED.value}')"


def _record(row: Any) -> TaskRecord:
    """The record a row of ``_SELECT`` holds."""
    return TaskRecord(
        task_id=row[0],
        owner=row[1],
        endpoint=row[2],
        tool=row[3],
        status=TaskStatus(row[4]),
        created_at=row[5],
        updated_at=row[6],
        ttl_seconds=row[7],
        managed=bool(row[8]),
        rerun=bool(row[9]),
        status_message=row[10],
        result=row[11],
        error=row[12],
        input_requests=row[13],
        responses=row[14],
        arguments=row[15],
        cancel_requested=bool(row[16]),
        rounds=row[17],
    )


def _cannot_open(error: sqlite3.Error) -> ConfigurationError:
    if error.sqlite_errorcode & 0xFF == sqlite3.SQLITE_BUSY:
        return ConfigurationError(
            "SqliteTaskStore: the file is in use by another process (one server process per "
            "task store file)"
        )
    return ConfigurationError(
        f"SqliteTaskStore: cannot open the file ({type(error).__name__}: {error})"
    )


def _prepare(connection: sqlite3.Connection) -> None:
    """Set the connection up, take the file's lock and create (or check) the table."""
    connection.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
    connection.execute("PRAGMA locking_mode = EXCLUSIVE")
    (mode,) = connection.execute("PRAGMA journal_mode = WAL").fetchone()
    if mode != "wal":
        raise ConfigurationError(
            f"SqliteTaskStore: the file cannot keep a write-ahead log (journal mode {mode!r})"
        )
    connection.execute("PRAGMA synchronous = NORMAL")
    # EXCLUSIVE mode holds a lock once taken, but takes it only when the file is used: an
    # exclusive transaction now makes it the write lock at once, so a second opener (or any
    # other reader) is refused here rather than at its first task.
    connection.execute("BEGIN EXCLUSIVE")
    (version,) = connection.execute("PRAGMA user_version").fetchone()
    if version == 0:
        (objects,) = connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        if objects:
            raise ConfigurationError("SqliteTaskStore: the file is another application's database")
        for statement in _SCHEMA:
            connection.execute(statement)
        connection.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
    elif version != _SCHEMA_VERSION:
        raise ConfigurationError(
            f"SqliteTaskStore: the file has schema version {version}, this mcpkit reads "
            f"{_SCHEMA_VERSION} (written by a newer mcpkit?)"
        )
    connection.execute("COMMIT")


class SqliteTaskStore:
    """Tasks kept in the SQLite file at ``path`` (created if missing): they survive a restart,
    and ``interrupted`` names the ones whose work stopped with the previous process.  Opening a
    file another process (or another store) has open raises ``ConfigurationError``, as does a
    file of a newer schema.  Thread-safe; one connection, used under a lock.

    The file does not shrink when tasks expire, but space freed is reused, so it stays the size
    of the most tasks kept at once; the log is emptied back into it when ``expire`` removes
    tasks."""

    def __init__(
        self, path: str | os.PathLike[str], *, clock: Callable[[], float] = time.time
    ) -> None:
        self._name = os.path.basename(os.fspath(path))
        self._clock = clock
        self._lock = threading.Lock()
        try:
            connection = sqlite3.connect(
                path, check_same_thread=False, isolation_level=None, timeout=_BUSY_TIMEOUT_MS / 1000
            )
        except sqlite3.Error as error:
            raise _cannot_open(error) from None
        try:
            _prepare(connection)
            # Tasks kept, in all and per owner: counted once here (a damaged file is refused
            # now), then kept up to date by this store alone (no other process may write the
            # file while it is open).
            rows = connection.execute("SELECT owner, count(*) FROM tasks GROUP BY owner").fetchall()
        except BaseException as error:
            connection.close()
            if isinstance(error, sqlite3.Error):
                raise _cannot_open(error) from None
            raise
        self._connection = connection
        self._owned: dict[str | None, int] = dict(rows)
        self._count = sum(self._owned.values())

    def __repr__(self) -> str:
        return f"SqliteTaskStore({self._name!r})"

    @contextlib.contextmanager
    def _transaction(self, *, write: bool = True) -> Iterator[sqlite3.Connection]:
        """One transaction under the lock: committed when the block ends, rolled back when it
        raises.  A failure of SQLite becomes ``TaskStoreUnavailable``, logged by its type only
        (its message may quote the file or the data).  A read (``write=False``) does not ask
        for the write lock, so tasks can still be read from a file that can no longer be
        written."""
        with self._lock:
            connection = self._connection
            try:
                connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                yield connection
                connection.execute("COMMIT")
            except BaseException as error:
                # Fails harmlessly when no transaction is open (BEGIN failed, or SQLite ended it).
                with contextlib.suppress(sqlite3.Error):
                    connection.execute("ROLLBACK")
                if isinstance(error, sqlite3.Error):
                    log.error("mcpkit: task store failed with %s", type(error).__name__)
                    raise TaskStoreUnavailable() from None
                raise

    def _find(self, db: sqlite3.Connection, key: TaskKey, now: float) -> TaskRecord | None:
        row = db.execute(
            f"{_SELECT} WHERE task_id = ? AND owner IS ? AND endpoint = ?", key
        ).fetchone()
        if row is None:
            return None
        record = _record(row)
        return None if record.expired(now) else record

    @staticmethod
    def _put(db: sqlite3.Connection, record: TaskRecord) -> TaskRecord:
        db.execute(
            _UPDATE,
            (
                record.status.value,
                record.updated_at,
                record.status_message,
                record.result,
                record.error,
                record.input_requests,
                record.responses,
                record.cancel_requested,
                record.rounds,
                record.task_id,
            ),
        )
        return record

    async def create(self, record: TaskRecord, limits: Limits) -> None:
        owner = record.owner
        with self._transaction() as db:
            removed = db.execute(_EXPIRE, (self._clock(),)).fetchall()
            if db.execute("SELECT 1 FROM tasks WHERE task_id = ?", (record.task_id,)).fetchone():
                raise ValueError("a task with this id is stored already")
            # The counts are this process's (the file is locked to it): no scan of the table.
            count = self._count - len(removed)
            owned = self._owned.get(owner, 0) - sum(1 for row in removed if row[1] == owner)
            refused = count >= limits.max_tasks or owned >= limits.max_tasks_per_owner
            if not refused:
                self._insert(db, record)
        self._forget(removed)  # committed: the expired ones are gone either way
        if refused:
            raise TaskQuota()
        self._count += 1
        self._owned[owner] = self._owned.get(owner, 0) + 1

    def _forget(self, removed: list[tuple[str, str | None, str]]) -> None:
        """Count the rows ``removed`` (task id, owner, endpoint) out."""
        self._count -= len(removed)
        for _, owner, _ in removed:
            left = self._owned[owner] - 1
            if left:
                self._owned[owner] = left
            else:
                del self._owned[owner]

    @staticmethod
    def _insert(db: sqlite3.Connection, record: TaskRecord) -> None:
        db.execute(
            _INSERT,
            (
                record.task_id,
                record.owner,
                record.endpoint,
                record.tool,
                record.status.value,
                record.created_at,
                record.updated_at,
                record.ttl_seconds,
                record.managed,
                record.rerun,
                record.status_message,
                record.result,
                record.error,
                record.input_requests,
                record.responses,
                record.arguments,
                record.cancel_requested,
                record.rounds,
                record.created_at + record.ttl_seconds,
            ),
        )

    async def get(self, key: TaskKey) -> TaskRecord | None:
        with self._transaction(write=False) as db:
            return self._find(db, key, self._clock())

    def _change(self, key: TaskKey, change: Change) -> TaskRecord | None:
        """Read, change by the store rules and write back, in one transaction."""
        with self._transaction() as db:
            now = self._clock()
            record = self._find(db, key, now)
            changed = None if record is None else change(record, now)
            return record if changed is None else self._put(db, changed)

    async def working(self, key: TaskKey, message: str | None = None) -> TaskRecord | None:
        return self._change(key, working(message))

    async def ask(self, key: TaskKey, requests: bytes) -> TaskRecord | None:
        return self._change(key, asking(requests))

    async def answer(self, key: TaskKey, responses: Mapping[str, bytes]) -> TaskRecord | None:
        return self._change(key, answering(responses))

    async def take_responses(self, key: TaskKey) -> bytes | None:
        with self._transaction() as db:
            record = self._find(db, key, self._clock())
            if record is None or record.responses is None:
                return None
            db.execute("UPDATE tasks SET responses = NULL WHERE task_id = ?", (key.task_id,))
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

    async def expire(self, now: float) -> list[TaskKey]:
        with self._transaction() as db:
            removed = db.execute(_EXPIRE, (now,)).fetchall()
        self._forget(removed)
        gone = [TaskKey(*row) for row in removed]
        if gone:
            # Empty the log back into the file, so the files on disk stay the size of the tasks
            # kept.  A failure loses nothing (the log is emptied at the next checkpoint).
            with self._lock, contextlib.suppress(sqlite3.Error):
                self._connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return gone

    async def interrupted(self) -> list[TaskRecord]:
        with self._transaction(write=False) as db:
            rows = db.execute(
                f"{_SELECT} WHERE managed = 1 AND status IN {_NOT_ENDED} AND expires_at > ?",
                (self._clock(),),
            ).fetchall()
        return [_record(row) for row in rows]

    async def close(self) -> None:
        with self._lock:
            self._connection.close()
