"""``RedisTaskStore``: tasks kept in one Redis, shared by every node that names it.

The rules of a task are ``_task_store``'s, applied in Python exactly as ``SqliteTaskStore``
applies them; Redis keeps the records and makes each change atomic across nodes:

- each task is one hash at ``prefix`` + ``t:`` + the SHA-256 of its endpoint, owner and id
  (so a key naming another owner or endpoint finds no hash), set to expire by Redis when the
  record's TTL ends;
- ``prefix`` + ``all`` (every task kept) and ``prefix`` + ``o:`` + the SHA-256 of the owner
  (that owner's) are sorted sets of the tasks' id digests scored by the end of their TTL: the
  quotas count the members whose TTL has not ended, and a sweep removes the others;
- ``prefix`` + ``ids`` maps a task id's digest to its hash, its owner's set and its key, so
  that an id is stored once and a sweep names what it removed;
- ``prefix`` + ``run`` maps each managed task that has not ended to the node running it, and
  ``prefix`` + ``n:`` + the node's name is that node's lease, renewed while it is up.

``create``, the sweep (``expire``) and the claim of interrupted tasks are Lua scripts, atomic in
Redis.  A change (``working``, ``ask``, ``answer``, ``finish``, ``cancel``,
``take_responses``) reads the hash, applies the rule and writes it back with a script that
checks the hash's version first (compare and set): when another node changed the task in
between, the change is read and applied again.  A task that ended therefore never changes,
whichever node tries.

Time is each node's clock (``time.time``, as the records' ``created_at``): the nodes' clocks
should agree (NTP).  Redis removes a task's hash when its TTL ends even if no node sweeps.

The ``redis`` client is an optional extra (``pip install 'mcpkit[redis]'``): this module
alone imports it, when the store is first used.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import secrets
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final, TypeVar

from mcpkit.errors import ConfigurationError, TaskQuota, TaskStoreUnavailable
from mcpkit.limits import Limits
from mcpkit.server._redis_client import (
    async_client,
    check_settings,
    check_url,
    require_redis,
)
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

__all__ = ["RedisTaskStore"]

log = logging.getLogger("mcpkit.server")

T = TypeVar("T")

_SWEEP_BATCH: Final = 1_000
"""At most this many expired tasks are removed by one script (``expire`` runs it until none
is left; ``create`` runs it once, and counts only tasks whose TTL has not ended anyway)."""
_ATTEMPTS: Final = 50
"""How many times a change is read and applied again when other nodes keep changing the task
in between; past that the store is reported unavailable."""

# The sweep, shared by the create and expire scripts.  KEYS[1]: all; KEYS[2]: ids; KEYS[3]:
# run.  The members of ``all`` scored at most ``now`` lose their hash, their place in their
# owner's set, their id and their runner; the keys removed (JSON text) are returned.
_SWEEP: Final = """\
local function sweep(prefix, now, limit)
  local gone = {}
  local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, limit)
  for _, id in ipairs(ids) do
    local meta = redis.call('HGET', KEYS[2], id)
    if meta then
      redis.call('DEL', prefix .. 't:' .. string.sub(meta, 1, 64))
      redis.call('ZREM', prefix .. 'o:' .. string.sub(meta, 65, 128), id)
      redis.call('HDEL', KEYS[2], id)
      gone[#gone + 1] = string.sub(meta, 129)
    end
    redis.call('HDEL', KEYS[3], id)
    redis.call('ZREM', KEYS[1], id)
  end
  return gone
end
"""

# KEYS: all, ids, run, the owner's set, the task's hash, this node's lease.  ARGV: prefix;
# now; the id's digest; its meta (hash digest, owner digest, key); the end of its TTL;
# max_tasks; max_tasks_per_owner; the hash's time to live (ms); this node ('' when the task
# is not one a node runs); the lease (ms); then the hash's fields and values.  Returns 0
# (created), 1 (the id is stored already) or 2 (a quota is reached).
_CREATE: Final = (
    _SWEEP
    + """\
local now = ARGV[2]
sweep(ARGV[1], now, tonumber(ARGV[11]))
local id = ARGV[3]
if redis.call('HEXISTS', KEYS[2], id) == 1 then
  local ends = redis.call('ZSCORE', KEYS[1], id)
  if ends and tonumber(ends) > tonumber(now) then return 1 end
  local meta = redis.call('HGET', KEYS[2], id)
  redis.call('DEL', ARGV[1] .. 't:' .. string.sub(meta, 1, 64))
  redis.call('ZREM', ARGV[1] .. 'o:' .. string.sub(meta, 65, 128), id)
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
  redis.call('HDEL', KEYS[3], id)
end
if redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf') >= tonumber(ARGV[6]) then return 2 end
if redis.call('ZCOUNT', KEYS[4], '(' .. now, '+inf') >= tonumber(ARGV[7]) then return 2 end
redis.call('HSET', KEYS[5], unpack(ARGV, 12, #ARGV))
redis.call('PEXPIRE', KEYS[5], ARGV[8])
redis.call('ZADD', KEYS[1], ARGV[5], id)
redis.call('ZADD', KEYS[4], ARGV[5], id)
redis.call('HSET', KEYS[2], id, ARGV[4])
if ARGV[9] ~= '' then
  redis.call('HSET', KEYS[3], id, ARGV[9])
  redis.call('SET', KEYS[6], '1', 'PX', ARGV[10])
end
return 0
"""
)

# KEYS: all, ids, run.  ARGV: prefix, now, limit.  Returns the keys removed.
_EXPIRE: Final = _SWEEP + "return sweep(ARGV[1], ARGV[2], tonumber(ARGV[3]))\n"

# KEYS: the task's hash, run.  ARGV: the version read; the id's digest; '1' when the task
# ends (it leaves run); the number of fields set; those fields and values; then the fields
# removed.  Returns 1 (changed), 0 (changed by someone else since it was read: read again)
# or -1 (the hash is gone: its TTL ended).
_CHANGE: Final = """\
local version = redis.call('HGET', KEYS[1], 'v')
if not version then return -1 end
if version ~= ARGV[1] then return 0 end
redis.call('HINCRBY', KEYS[1], 'v', 1)
local last = 4 + 2 * tonumber(ARGV[4])
if last > 4 then redis.call('HSET', KEYS[1], unpack(ARGV, 5, last)) end
if #ARGV > last then redis.call('HDEL', KEYS[1], unpack(ARGV, last + 1, #ARGV)) end
if ARGV[3] == '1' then redis.call('HDEL', KEYS[2], ARGV[2]) end
return 1
"""

# KEYS: all, ids, run, this node's lease.  ARGV: prefix, now, this node, the lease (ms).  Every
# managed task that has not ended, whose TTL has not ended, and whose node is this one or
# holds no lease any more, is claimed for this node; their hashes' fields are returned.
_CLAIM: Final = """\
redis.call('SET', KEYS[4], '1', 'PX', ARGV[4])
local found = {}
local runs = redis.call('HGETALL', KEYS[3])
for i = 1, #runs, 2 do
  local id, node = runs[i], runs[i + 1]
  local own = node == ARGV[3]
  local dead = not own and redis.call('EXISTS', ARGV[1] .. 'n:' .. node) == 0
  if (own and ARGV[5] == '1') or dead then
    local ends = redis.call('ZSCORE', KEYS[1], id)
    local meta = redis.call('HGET', KEYS[2], id)
    if ends and meta and tonumber(ends) > tonumber(ARGV[2]) then
      local task = ARGV[1] .. 't:' .. string.sub(meta, 1, 64)
      local fields = redis.call('HGETALL', task)
      if #fields > 0 then
        redis.call('HSET', task, 'nd', ARGV[3])
        redis.call('HSET', KEYS[3], id, ARGV[3])
        found[#found + 1] = fields
      end
    end
  end
end
return found
"""

_PAYLOADS: Final = (
    ("res", "result"),
    ("err", "error"),
    ("inq", "input_requests"),
    ("rsp", "responses"),
)


def _text(value: str) -> bytes:
    data = value.encode("utf-8", "surrogatepass")
    return b"%d:%s" % (len(data), data)


def _owner(owner: str | None) -> bytes:
    return b"-" if owner is None else b"=" + _text(owner)


def _digest(*parts: bytes) -> str:
    return hashlib.sha256(b"".join(parts)).hexdigest()


def _float(value: float) -> str:
    return repr(float(value))


@dataclass(frozen=True, slots=True)
class _Names:
    """The Redis keys of one task, and what the store's sets keep of it."""

    task: str
    """The task's hash."""
    owned: str
    """The owner's sorted set."""
    id: str
    """The id's digest: the task's member in every set."""
    meta: str
    """What ``ids`` keeps for it: the hash's digest, the owner's and the key as JSON."""


def _fields(record: TaskRecord) -> dict[str, bytes | str]:
    """The fields of a record's hash that a change may alter (``None``: removed)."""
    fields: dict[str, bytes | str] = {
        "st": record.status.value,
        "ua": _float(record.updated_at),
        "cx": "1" if record.cancel_requested else "0",
        "rd": str(record.rounds),
    }
    if record.status_message is not None:
        fields["msg"] = record.status_message.encode("utf-8", "surrogatepass")
    for field, name in _PAYLOADS:
        value = getattr(record, name)
        if value is not None:
            fields[field] = value
    return fields


_OPTIONAL: Final = ("msg", *(field for field, _ in _PAYLOADS))
"""The fields a change removes when the record has no value for them."""


def _record(held: Mapping[bytes, bytes]) -> TaskRecord:
    """The record a task's hash holds."""

    def text(field: bytes) -> str:
        return held[field].decode("utf-8", "surrogatepass")

    def optional(field: bytes) -> bytes | None:
        return held.get(field)

    owner = held.get(b"ow")
    message = held.get(b"msg")
    return TaskRecord(
        task_id=text(b"id"),
        owner=None if owner is None else owner.decode("utf-8", "surrogatepass"),
        endpoint=text(b"ep"),
        tool=text(b"tool"),
        status=TaskStatus(text(b"st")),
        created_at=float(held[b"ca"]),
        updated_at=float(held[b"ua"]),
        ttl_seconds=float(held[b"ttl"]),
        managed=held[b"m"] == b"1",
        rerun=held[b"rr"] == b"1",
        status_message=None if message is None else message.decode("utf-8", "surrogatepass"),
        result=optional(b"res"),
        error=optional(b"err"),
        input_requests=optional(b"inq"),
        responses=optional(b"rsp"),
        arguments=optional(b"arg"),
        cancel_requested=held[b"cx"] == b"1",
        rounds=int(held[b"rd"]),
    )


def _pairs(flat: list[bytes]) -> dict[bytes, bytes]:
    """``HGETALL``'s reply inside a script's: field, value, field, value, ..."""
    return dict(zip(flat[::2], flat[1::2], strict=True))


class _Link:
    """The client of one event loop, its scripts, and the task that keeps this node's lease
    (and closes the client when the loop ends)."""

    __slots__ = ("change", "claim", "client", "create", "expire", "keeper")

    def __init__(self, client: Any, keeper: Callable[[_Link], Coroutine[Any, Any, None]]) -> None:
        self.client = client
        self.create = client.register_script(_CREATE)
        self.expire = client.register_script(_EXPIRE)
        self.change = client.register_script(_CHANGE)
        self.claim = client.register_script(_CLAIM)
        self.keeper: asyncio.Task[None] = asyncio.get_running_loop().create_task(keeper(self))


class RedisTaskStore:
    """Tasks kept in the Redis at ``url`` (a ``redis://``, ``rediss://`` or ``unix://`` URL),
    shared by every server node that names it with the same ``prefix``: any node finds and
    changes any task, the quotas of ``Limits`` hold across all of them, and a task that ended
    never changes again, whichever node tries.  The observable rules are
    ``SqliteTaskStore``'s.

    Each node is a ``node`` name (by default a random one per store): the managed tasks it
    creates (or recovers) are marked as its own, and while it is up it renews a lease of
    ``lease_seconds`` in Redis (a task on its event loop, every third of the lease).
    ``interrupted`` claims, atomically (so that two nodes never both take one task), the
    managed tasks that have not ended and whose node is this one or has let its lease lapse:
    a node that stopped (``close`` ends its lease at once) or died (its lease lapses) leaves
    its tasks to the next node that starts.  Give each process a stable ``node`` name (say the
    host's, when one process runs per host) and its own tasks are recovered at its restart
    at once, as ``SqliteTaskStore``'s are; never give two live processes the same name.  A
    server asks ``interrupted`` once, when it starts: the tasks of a node that died are taken
    by the next node to start after its lease lapsed, not by the nodes already running.
    ``orphaned`` (a running node's sweep) takes the tasks of a lapsed lease only once Redis
    has answered this node for a whole lease on end: an outage longer than a lease lapses
    every lease, the live nodes' too, and they renew theirs within a third of one.

    A Redis that cannot be reached, fails or takes longer than ``timeout_seconds`` for a call
    makes the call raise ``TaskStoreUnavailable`` (503 to the client); the failure is logged
    by its type only, never with the URL (whose password ``repr`` masks too).  One client is
    made per event loop, when the store is first used on it, and closed when that loop ends or
    the store is closed.  After ``close`` (or ``aclose``) every call raises
    ``TaskStoreUnavailable``.

    A single Redis (or a replicated primary) is expected, not a Redis Cluster: a script
    reaches keys that it finds in the store's own sets."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "mcpkit:tasks:",
        node: str | None = None,
        lease_seconds: float = 15.0,
        timeout_seconds: float = 2.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._shown = check_url(url, "RedisTaskStore")
        if node is not None and (
            not isinstance(node, str) or not 1 <= len(node) <= 256 or not node.isprintable()
        ):
            raise ConfigurationError(
                "RedisTaskStore: node must be a printable str of 1 to 256 characters"
            )
        check_settings(
            "RedisTaskStore",
            prefix,
            (
                ("lease_seconds", lease_seconds, 1.0, 3_600.0),
                ("timeout_seconds", timeout_seconds, 0.01, 60.0),
            ),
        )
        require_redis("RedisTaskStore")
        self.prefix = prefix
        self.node = secrets.token_hex(16) if node is None else node
        self._url = url
        self._lease_ms = math.ceil(lease_seconds * 1000)
        self._beat = lease_seconds / 3
        self._timeout = float(timeout_seconds)
        self._clock = clock
        self._all = prefix + "all"
        self._ids = prefix + "ids"
        self._run = prefix + "run"
        self._lease = prefix + "n:" + self.node
        self._links: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Link] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()
        self._errors: tuple[type[BaseException], ...] = (OSError,)
        self._leased = False
        self._reached: float | None = None
        """Since when (``time.monotonic``) Redis has answered this store: ``None`` until it
        first does, and again after each failure (``orphaned`` waits a lease past it)."""
        self._closed = False

    def __repr__(self) -> str:
        return f"RedisTaskStore({self._shown!r}, prefix={self.prefix!r})"

    # --- names --------------------------------------------------------------------------

    def _names(self, key: TaskKey) -> _Names:
        """The Redis keys of the task ``key`` names (none of them holds the owner itself)."""
        owner = _owner(key.owner)
        task = _digest(b"task\n", _text(key.endpoint), owner, _text(key.task_id))
        owned = _digest(b"owner\n", owner)
        meta = task + owned + json.dumps(list(key))
        return _Names(
            task=self.prefix + "t:" + task,
            owned=self.prefix + "o:" + owned,
            id=_digest(b"id\n", _text(key.task_id)),
            meta=meta,
        )

    # --- the client of the running loop -------------------------------------------------

    def _link(self) -> _Link:
        if self._closed:
            log.error("mcpkit: task store used after it was closed")
            raise TaskStoreUnavailable()
        loop = asyncio.get_running_loop()
        with self._lock:
            link = self._links.get(loop)
            if link is None:
                link = self._links[loop] = _Link(
                    self._client(), lambda link: self._keep(loop, link)
                )
        return link

    def _client(self) -> Any:
        client, self._errors = async_client(self._url, self._timeout)
        return client

    async def _keep(self, loop: asyncio.AbstractEventLoop, link: _Link) -> None:
        """Renew this node's lease, once it holds one (else only ``PING``, to notice an outage),
        until the loop or the store ends; then close the loop's client."""
        try:
            while not self._closed:
                await asyncio.sleep(self._beat)
                try:
                    if self._leased:
                        await link.client.set(self._lease, b"1", px=self._lease_ms)
                    else:
                        await link.client.ping()
                except self._errors as error:  # the next beat tries again
                    self._reached = None
                    if self._leased:
                        log.warning("mcpkit: task store lease not renewed (%s)",
                                    type(error).__name__)  # fmt: skip
                else:
                    self._answered()
        finally:
            with self._lock:
                if self._links.get(loop) is link:
                    del self._links[loop]
            await link.client.aclose()

    async def _call(self, operation: Callable[[_Link], Awaitable[T]]) -> T:
        """Run ``operation`` with the loop's client within ``timeout_seconds``; a failure of
        Redis becomes ``TaskStoreUnavailable``, logged by its type only."""
        link = self._link()
        try:
            async with asyncio.timeout(self._timeout):
                outcome = await operation(link)
        except self._errors as error:
            self._reached = None
            log.error("mcpkit: task store failed with %s", type(error).__name__)
            raise TaskStoreUnavailable() from None
        self._answered()
        return outcome

    def _answered(self) -> None:
        if self._reached is None:
            self._reached = time.monotonic()

    # --- the protocol -------------------------------------------------------------------

    async def create(self, record: TaskRecord, limits: Limits) -> None:
        names = self._names(record.key)
        now = self._clock()
        ends = record.created_at + record.ttl_seconds
        runs = record.managed and not record.status.terminal
        hash_fields: list[bytes | str] = [
            "v", "0",
            "id", record.task_id.encode("utf-8", "surrogatepass"),
            "ep", record.endpoint.encode("utf-8", "surrogatepass"),
            "tool", record.tool.encode("utf-8", "surrogatepass"),
            "ca", _float(record.created_at),
            "ttl", _float(record.ttl_seconds),
            "m", "1" if record.managed else "0",
            "rr", "1" if record.rerun else "0",
        ]  # fmt: skip
        if record.owner is not None:
            hash_fields += ["ow", record.owner.encode("utf-8", "surrogatepass")]
        if record.arguments is not None:
            hash_fields += ["arg", record.arguments]
        if runs:
            hash_fields += ["nd", self.node]
        for field, value in _fields(record).items():
            hash_fields += [field, value]
        args = [
            self.prefix,
            _float(now),
            names.id,
            names.meta,
            _float(ends),
            limits.max_tasks,
            limits.max_tasks_per_owner,
            max(1, math.ceil((ends - now) * 1000)),
            self.node if runs else "",
            self._lease_ms,
            _SWEEP_BATCH,
            *hash_fields,
        ]
        keys = [self._all, self._ids, self._run, names.owned, names.task, self._lease]

        async def operation(link: _Link) -> int:
            return int(await link.create(keys=keys, args=args))

        outcome = await self._call(operation)
        if runs:
            self._leased = True
        if outcome == 1:
            raise ValueError("a task with this id is stored already")
        if outcome == 2:
            raise TaskQuota()

    async def _read(self, link: _Link, key: TaskKey, names: _Names) -> tuple[TaskRecord, bytes]:
        """The task as stored, unexpired, and its version (``KeyError``: not found)."""
        held: dict[bytes, bytes] = await link.client.hgetall(names.task)
        if not held:
            raise KeyError(key.task_id)
        record = _record(held)
        if record.expired(self._clock()):
            raise KeyError(key.task_id)
        return record, held[b"v"]

    async def get(self, key: TaskKey) -> TaskRecord | None:
        names = self._names(key)

        async def operation(link: _Link) -> TaskRecord | None:
            try:
                record, _ = await self._read(link, key, names)
            except KeyError:
                return None
            return record

        return await self._call(operation)

    async def _change(self, key: TaskKey, change: Change) -> TaskRecord | None:
        """Read, change by the store rules and write back if nobody changed the task since it
        was read (else again, with what they wrote)."""
        names = self._names(key)

        async def operation(link: _Link) -> TaskRecord | None:
            for _ in range(_ATTEMPTS):
                try:
                    record, version = await self._read(link, key, names)
                except KeyError:
                    return None
                changed = change(record, self._clock())
                if changed is None:
                    return record
                written = await self._write(link, names, version, changed)
                if written == 1:
                    return changed
                if written < 0:
                    return None  # its TTL ended meanwhile
            log.error("mcpkit: task store failed with contention on one task")
            raise TaskStoreUnavailable()

        return await self._call(operation)

    async def _write(self, link: _Link, names: _Names, version: bytes, record: TaskRecord) -> int:
        fields = _fields(record)
        args: list[bytes | str | int] = [
            version,
            names.id,
            "1" if record.status.terminal else "0",
            len(fields),
        ]
        for field, value in fields.items():
            args += [field, value]
        args += [field for field in _OPTIONAL if field not in fields]
        return int(await link.change(keys=[names.task, self._run], args=args))

    async def working(self, key: TaskKey, message: str | None = None) -> TaskRecord | None:
        return await self._change(key, working(message))

    async def ask(self, key: TaskKey, requests: bytes) -> TaskRecord | None:
        return await self._change(key, asking(requests))

    async def answer(self, key: TaskKey, responses: Mapping[str, bytes]) -> TaskRecord | None:
        return await self._change(key, answering(responses))

    async def take_responses(self, key: TaskKey) -> bytes | None:
        taken: list[bytes] = []

        def change(record: TaskRecord, now: float) -> TaskRecord | None:
            taken[:] = [] if record.responses is None else [record.responses]
            return None if record.responses is None else replace(record, responses=None)

        record = await self._change(key, change)
        return taken[0] if record is not None and taken else None

    async def finish(
        self,
        key: TaskKey,
        status: TaskStatus,
        *,
        result: bytes | None = None,
        error: bytes | None = None,
        message: str | None = None,
    ) -> TaskRecord | None:
        return await self._change(key, finishing(status, result, error, message))

    async def cancel(self, key: TaskKey) -> TaskRecord | None:
        return await self._change(key, cancelling)

    async def expire(self, now: float) -> list[TaskKey]:
        keys = [self._all, self._ids, self._run]

        async def operation(link: _Link) -> list[TaskKey]:
            gone: list[TaskKey] = []
            while True:
                removed = await link.expire(
                    keys=keys, args=[self.prefix, _float(now), _SWEEP_BATCH]
                )
                gone += [TaskKey(*json.loads(text)) for text in removed]
                if len(removed) < _SWEEP_BATCH:
                    return gone

        return await self._call(operation)

    async def interrupted(self) -> list[TaskRecord]:
        return await self._claim(own=True)

    async def orphaned(self) -> list[TaskRecord]:
        """While serving: the unfinished managed tasks of nodes whose lease lapsed (they
        died), claimed for this node; never this node's own, which it is running.

        None until Redis has answered this store for ``lease_seconds`` on end: after an
        outage longer than a lease every lease has lapsed, and the nodes that are alive need
        a beat to renew theirs before a lapsed one means a dead node."""
        reached = self._reached
        if reached is None or time.monotonic() - reached < self._lease_ms / 1000:
            return []
        return await self._claim(own=False)

    async def _claim(self, *, own: bool) -> list[TaskRecord]:
        keys = [self._all, self._ids, self._run, self._lease]
        args = [self.prefix, _float(self._clock()), self.node, self._lease_ms, "1" if own else "0"]

        async def operation(link: _Link) -> list[TaskRecord]:
            found = await link.claim(keys=keys, args=args)
            return [_record(_pairs(fields)) for fields in found]

        records = await self._call(operation)
        self._leased = True
        return records

    async def close(self) -> None:
        """End this node's lease (its unfinished tasks are another node's to recover at once)
        and close the client of the running loop; the clients of other loops close when their
        loops end.  Later calls raise ``TaskStoreUnavailable``."""
        if self._closed:
            return
        self._closed = True
        loop = asyncio.get_running_loop()
        with self._lock:
            link = self._links.pop(loop, None)
        if link is not None:
            link.keeper.cancel()
            await asyncio.gather(link.keeper, return_exceptions=True)
        if not self._leased:
            return
        client = self._client()
        try:
            async with asyncio.timeout(self._timeout):
                await client.delete(self._lease)
        except self._errors as error:  # the lease lapses by itself
            log.warning("mcpkit: task store lease not ended (%s)", type(error).__name__)
        finally:
            await client.aclose()

    async def aclose(self) -> None:
        """``close``."""
        await self.close()
