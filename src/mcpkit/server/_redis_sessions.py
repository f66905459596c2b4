"""``RedisSessionStore``: 2025 sessions, and the events of their streams, in one Redis shared
by every node that names it, so that any node serves any request of any session and a load
balancer needs no sticky routing.

What lives in Redis (each key under ``prefix``; ``<d>`` is the SHA-256 of a session id, which
is never stored):

- ``s:<d>``, the session's record (a hash): its owner, endpoint and revision, what
  ``initialize`` said of the client, its log level and resource subscriptions, when it was
  created and last used.  Redis removes it when the session idles out or reaches its absolute
  lifetime (``Limits``); each use pushes that back.
- ``sessions`` and ``so:<owner digest>``: the live sessions' digests (all, one owner's)
  scored by when they expire: the quotas of ``Limits`` count them across every node.
- ``em:<d>``, ``eo:<d>`` and ``el:<d>:<stream>``: the events of the session's streams for
  ``Last-Event-ID`` replay, within the session's bounds of ``Limits`` (events per stream,
  streams, bytes), so a client resumes a stream on any node.
- ``c:<d>``, a pub/sub channel: what one node tells the others of the session -- it ended, a
  cancel or an answer for a call that runs elsewhere, its log level or subscriptions changed,
  a stream has a new event.

What stays on each node: a ``Session`` object per session it serves (its calls in flight,
open streams, the server's requests waiting for answers), read from the record and read
again when it is used after ``revalidate_seconds``, or at once when another node says it
changed.  Every node subscribes to the store's channels with one pattern, and each node takes
its own range of ids for the server's requests to clients (``nodes``), so an answer POSTed to
any node finds the node that asked.

A Redis that cannot be reached, fails or takes longer than ``timeout_seconds`` fails the
request with ``SessionStoreUnavailable`` (503); stateless requests do not use the store.
What was said on the channel while a node could not hear it is not repeated: a node that
reconnects reads every session it holds again.  Time is each node's clock (``time.time``):
the nodes' clocks should agree (NTP).  A single Redis (or a replicated primary) is expected,
not a Redis Cluster.

The ``redis`` client is an optional extra (``pip install 'mcpkit[redis]'``): this module
imports it when the store is first used.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import math
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from mcpkit.errors import (
    ConfigurationError,
    ParseError,
    SessionQuota,
    SessionStoreUnavailable,
    TooManySessions,
)
from mcpkit.json import JsonObject, decode, encode
from mcpkit.limits import Limits
from mcpkit.model import Revision
from mcpkit.server._conversation import HANDSHAKE_LOG_LEVEL
from mcpkit.server._events import Replay, parse_event_id
from mcpkit.server._redis_client import (
    async_client,
    check_settings,
    check_url,
    require_redis,
)
from mcpkit.server._sessions import RECLAIM_AFTER_SECONDS, Session, new_session_id

__all__ = ["RedisEventStore", "RedisSessionStore"]

log = logging.getLogger("mcpkit.server")

T = TypeVar("T")

_ID_RANGE: Final = 1 << 32
"""Each node's ids for the server's requests start at its number times this: a node would
have to send four billion requests to one session to reach the next node's."""
_RANGES: Final = (1 << 20) - 1
_KEEP_SECONDS: Final = 1.0
"""How often a node pushes back the expiry of the sessions it is busy with (a call in flight,
an open stream) and lets go of those it has not used for a while."""
_LET_GO_SECONDS: Final = 60.0
"""A session object a node has not used this long, and that has nothing running here, is
dropped from its memory (the record stays in Redis)."""
_RECONNECT_SECONDS: Final = (0.1, 0.5, 1.0, 2.0, 5.0)

# Signals on a session's channel: the kind, the publishing node, a JSON payload (for an answer
# or a cancel), one line each.  The scripts publish ``end`` and ``appended`` themselves.
_END: Final = "end"
_APPENDED: Final = "appended"
_CANCEL: Final = "cancel"
_ANSWER: Final = "answer"
_CHANGED: Final = "changed"

# One session's end: its record, its place in the quotas and its events go, and every node
# hears of it.  ``p``: the prefix; ``d``: the session's digest.
_END_LUA: Final = """\
local function finish(p, d)
  local key = p .. 's:' .. d
  local owner = redis.call('HGET', key, 'od')
  redis.call('DEL', key)
  redis.call('ZREM', p .. 'sessions', d)
  if owner then redis.call('ZREM', p .. 'so:' .. owner, d) end
  local streams = redis.call('ZRANGE', p .. 'eo:' .. d, 0, -1)
  for _, stream in ipairs(streams) do redis.call('DEL', p .. 'el:' .. d .. ':' .. stream) end
  redis.call('DEL', p .. 'em:' .. d, p .. 'eo:' .. d)
  redis.call('PUBLISH', p .. 'c:' .. d, 'end\\n\\n')
end
"""

# ARGV: prefix, digest, owner digest, now, expires, ttl ms, most sessions, owner quota,
# reclaim after (s), then the record's fields.  0: created; 1: TooManySessions; 2: SessionQuota.
_CREATE: Final = (
    _END_LUA
    + """\
local p, d, owner, now = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local all, owned = p .. 'sessions', p .. 'so:' .. owner
redis.call('ZREMRANGEBYSCORE', all, '-inf', now)
redis.call('ZREMRANGEBYSCORE', owned, '-inf', now)
if redis.call('ZCARD', owned) >= tonumber(ARGV[8]) then
  local oldest = redis.call('ZRANGE', owned, 0, 0)[1]
  local touched = tonumber(redis.call('HGET', p .. 's:' .. oldest, 't') or '0')
  if now - touched >= tonumber(ARGV[9]) then finish(p, oldest) end
end
if redis.call('ZCARD', owned) >= tonumber(ARGV[8]) then return 2 end
if redis.call('ZCARD', all) >= tonumber(ARGV[7]) then return 1 end
local key = p .. 's:' .. d
redis.call('HSET', key, unpack(ARGV, 10, #ARGV))
redis.call('PEXPIRE', key, ARGV[6])
redis.call('ZADD', all, ARGV[5], d)
redis.call('ZADD', owned, ARGV[5], d)
return 0
"""
)

# ARGV: prefix, digest, now, idle seconds.  1: pushed back; 0: the session is gone.
_TOUCH: Final = """\
local p, d, now = ARGV[1], ARGV[2], tonumber(ARGV[3])
local key = p .. 's:' .. d
local ends = redis.call('HGET', key, 'x')
if not ends then return 0 end
local expires = math.min(now + tonumber(ARGV[4]), tonumber(ends))
if expires <= now then return 0 end
redis.call('HSET', key, 't', ARGV[3])
redis.call('PEXPIRE', key, math.ceil((expires - now) * 1000))
redis.call('ZADD', p .. 'sessions', 'XX', expires, d)
redis.call('ZADD', p .. 'so:' .. redis.call('HGET', key, 'od'), 'XX', expires, d)
return 1
"""

# ARGV: prefix, digest, the signal, then field/value pairs.  1: saved; 0: the session is gone.
_SAVE: Final = """\
local key = ARGV[1] .. 's:' .. ARGV[2]
if redis.call('EXISTS', key) == 0 then return 0 end
redis.call('HSET', key, unpack(ARGV, 4, #ARGV))
redis.call('PUBLISH', ARGV[1] .. 'c:' .. ARGV[2], ARGV[3])
return 1
"""

_FINISH: Final = (
    _END_LUA
    + """\
finish(ARGV[1], ARGV[2])
return 1
"""
)

# The events of a session.  ``em:<d>``: ``n`` the last stream number, ``b`` the bytes kept,
# ``tick`` a counter ordering appends; per stream ``s:<k>`` the next sequence, ``f:<k>`` the
# first sequence kept, ``b:<k>`` its bytes, ``r:<k>`` 1 while it runs.  ``eo:<d>``: the
# streams scored by their last append (least recent first).  ``el:<d>:<k>``: the events kept.
_EVENTS_LUA: Final = """\
local function drop_oldest(p, d, meta, stream)
  local message = redis.call('LPOP', p .. 'el:' .. d .. ':' .. stream)
  if not message then return false end
  redis.call('HINCRBY', meta, 'f:' .. stream, 1)
  redis.call('HINCRBY', meta, 'b:' .. stream, -#message)
  redis.call('HINCRBY', meta, 'b', -#message)
  return true
end
local function drop_stream(p, d, meta, order, stream)
  local size = tonumber(redis.call('HGET', meta, 'b:' .. stream) or '0')
  redis.call('HINCRBY', meta, 'b', -size)
  redis.call('DEL', p .. 'el:' .. d .. ':' .. stream)
  redis.call('HDEL', meta, 's:' .. stream, 'f:' .. stream, 'b:' .. stream, 'r:' .. stream)
  redis.call('ZREM', order, stream)
end
local function stream_new(meta, order, stream, running)
  redis.call('HSET', meta, 's:' .. stream, 1, 'f:' .. stream, 1, 'b:' .. stream, 0,
    'r:' .. stream, running)
  redis.call('ZADD', order, redis.call('HINCRBY', meta, 'tick', 1), stream)
end
local function bound_streams(p, d, meta, order, most)
  while true do
    local count = redis.call('ZCARD', order)
    if redis.call('ZSCORE', order, '0') then count = count - 1 end
    if count <= most then return end
    for _, stream in ipairs(redis.call('ZRANGE', order, 0, 1)) do
      if stream ~= '0' then drop_stream(p, d, meta, order, stream) break end
    end
  end
end
"""

# ARGV: prefix, digest, most streams, ttl ms.  The new stream's number.
_OPEN: Final = (
    _EVENTS_LUA
    + """\
local p, d = ARGV[1], ARGV[2]
local meta, order = p .. 'em:' .. d, p .. 'eo:' .. d
local stream = redis.call('HINCRBY', meta, 'n', 1)
stream_new(meta, order, tostring(stream), 1)
bound_streams(p, d, meta, order, tonumber(ARGV[3]))
redis.call('PEXPIRE', meta, ARGV[4])
redis.call('PEXPIRE', order, ARGV[4])
return stream
"""
)

# ARGV: prefix, digest, stream, message, most events per stream, most session bytes, ttl ms.
# The event's sequence, or 0 when its stream was forgotten.
_APPEND: Final = (
    _EVENTS_LUA
    + """\
local p, d, stream, message = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local meta, order = p .. 'em:' .. d, p .. 'eo:' .. d
if redis.call('HEXISTS', meta, 's:' .. stream) == 0 then
  if stream ~= '0' then return 0 end
  stream_new(meta, order, stream, 0)
end
local sequence = redis.call('HINCRBY', meta, 's:' .. stream, 1) - 1
local list = p .. 'el:' .. d .. ':' .. stream
redis.call('RPUSH', list, message)
redis.call('HINCRBY', meta, 'b:' .. stream, #message)
redis.call('HINCRBY', meta, 'b', #message)
redis.call('ZADD', order, redis.call('HINCRBY', meta, 'tick', 1), stream)
while redis.call('LLEN', list) > tonumber(ARGV[5]) do drop_oldest(p, d, meta, stream) end
while tonumber(redis.call('HGET', meta, 'b')) > tonumber(ARGV[6]) do
  local dropped = false
  for _, other in ipairs(redis.call('ZRANGE', order, 0, -1)) do
    if drop_oldest(p, d, meta, other) then dropped = true break end
  end
  if not dropped then break end
end
redis.call('PEXPIRE', list, ARGV[7])
redis.call('PEXPIRE', meta, ARGV[7])
redis.call('PEXPIRE', order, ARGV[7])
redis.call('PUBLISH', p .. 'c:' .. d, 'appended\\n\\n')
return sequence
"""
)

# ARGV: prefix, digest, stream.
_CLOSE: Final = """\
local meta = ARGV[1] .. 'em:' .. ARGV[2]
if redis.call('HEXISTS', meta, 'r:' .. ARGV[3]) == 1 then
  redis.call('HSET', meta, 'r:' .. ARGV[3], 0)
end
redis.call('PUBLISH', ARGV[1] .. 'c:' .. ARGV[2], 'appended\\n\\n')
return 1
"""

# ARGV: prefix, digest, stream, sequence.  false: no exact replay; else {running, first
# sequence returned, messages...}.
_REPLAY: Final = """\
local p, d, stream, sequence = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local meta = p .. 'em:' .. d
local state = redis.call('HMGET', meta, 's:' .. stream, 'f:' .. stream, 'r:' .. stream)
if not state[1] then
  if stream == '0' and sequence == 0 then return {0, 1} end
  return false
end
local following, first = tonumber(state[1]), tonumber(state[2])
if sequence >= following or first > sequence + 1 then return false end
local events = redis.call('LRANGE', p .. 'el:' .. d .. ':' .. stream, sequence + 1 - first, -1)
return {tonumber(state[3]), sequence + 1, unpack(events)}
"""


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _owner_digest(owner: str | None) -> str:
    # The anonymous owner is not the owner named "": a leading byte tells them apart.
    return _digest("\x00" if owner is None else "\x01" + owner)


@dataclass(slots=True, eq=False)
class _Held:
    """A session this node holds: its object, and when it was last read and pushed back."""

    session: Session
    digest: str
    read: float
    touched: float
    used: float = field(default=0.0)


@dataclass(slots=True, eq=False)
class _Link:
    """This node's client and scripts on the loop that serves it, its number, and the tasks
    that hear the channels and keep the busy sessions alive."""

    client: Any
    scripts: dict[str, Any]
    node: str
    first_request_id: int
    tasks: list[asyncio.Task[None]] = field(default_factory=list)


class RedisSessionStore:
    """2025 sessions in the Redis at ``url`` (``redis://``, ``rediss://`` or ``unix://``),
    shared by every node that names it with the same ``prefix``, and the events of their
    streams (``events``, which a server given the store keeps its streams in)::

        server = Server(..., sessions=RedisSessionStore("redis://redis.internal:6379/0"))

    The quotas and lifetimes of ``limits`` (the server's unless given) hold across every
    node: sessions in all and per owner, idle and absolute lifetimes, and the events kept per
    session.  A node reads a session it holds again when it is used ``revalidate_seconds``
    after it last read it, so a session that Redis expired is noticed within that time; an
    end, a cancel, an answer or a changed log level or subscription on another node arrives
    on the channel at once.  The calls in flight per session
    (``max_active_calls_per_session``), open streams and waiting server requests are counted
    per node.

    The store works on the event loop that first uses it (the server's)."""

    def __init__(
        self,
        url: str,
        *,
        limits: Limits | None = None,
        prefix: str = "mcpkit:sessions:",
        revalidate_seconds: float = 1.0,
        timeout_seconds: float = 2.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._shown = check_url(url, "RedisSessionStore")
        check_settings(
            "RedisSessionStore",
            prefix,
            (
                ("revalidate_seconds", revalidate_seconds, 0.0, 60.0),
                ("timeout_seconds", timeout_seconds, 0.01, 60.0),
            ),
        )
        if limits is not None and not isinstance(limits, Limits):
            raise ConfigurationError("RedisSessionStore: limits must be a Limits")
        require_redis("RedisSessionStore")
        self.prefix = prefix
        self.limits = Limits() if limits is None else limits
        self._adopt = limits is None
        self._url = url
        self._revalidate = float(revalidate_seconds)
        self._timeout = float(timeout_seconds)
        self._clock = clock
        self._held: dict[str, _Held] = {}  # by session id
        self._by_digest: dict[str, _Held] = {}
        self._link: _Link | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._starting: asyncio.Future[_Link] | None = None  # the link being made
        self._pending: set[asyncio.Task[Any]] = set()  # background work (close, reread, start)
        self._signals: set[asyncio.Task[None]] = set()  # cancels and answers being sent
        self._errors: tuple[type[BaseException], ...] = (OSError,)
        self._closed = False
        self.events = RedisEventStore(self)
        """The event store of these sessions' streams, in the same Redis."""

    def __repr__(self) -> str:
        return f"RedisSessionStore({self._shown!r}, prefix={self.prefix!r})"

    def adopt(self, limits: Limits) -> None:
        """The server's ``limits``, taken when none were given to the store."""
        if self._adopt:
            self.limits = limits

    @property
    def held(self) -> int:
        """The sessions this node holds in memory now."""
        return len(self._held)

    # --- the SessionStore protocol ----------------------------------------------------------

    async def create(
        self,
        owner: str | None,
        path: str,
        revision: Revision,
        client_info: JsonObject | None,
        client_capabilities: JsonObject | None,
    ) -> Session:
        limits = self.limits
        session_id = new_session_id()
        digest = _digest(session_id)
        owned = _owner_digest(owner)
        now = self._clock()
        ends = now + limits.session_absolute_timeout_seconds
        expires = min(now + limits.session_idle_timeout_seconds, ends)
        record: list[str | bytes] = [
            "od", owned, "p", path, "r", revision.wire, "c", repr(now), "t", repr(now),
            "x", repr(ends), "l", HANDSHAKE_LOG_LEVEL,
        ]  # fmt: skip
        if owner is not None:
            record += ["o", owner]
        if client_info is not None:
            record += ["ci", encode(client_info)]
        if client_capabilities is not None:
            record += ["cc", encode(client_capabilities)]
        quota = limits.max_anonymous_sessions if owner is None else limits.max_sessions_per_owner
        args: list[str | bytes | int] = [
            self.prefix, digest, owned, repr(now), repr(expires),
            math.ceil((expires - now) * 1000), limits.max_sessions, quota,
            repr(RECLAIM_AFTER_SECONDS), *record,
        ]  # fmt: skip

        async def operation(link: _Link) -> int:
            return int(await link.scripts["create"](args=args))

        outcome = await self._call(operation)
        if outcome == 1:
            raise TooManySessions()
        if outcome == 2:
            raise SessionQuota()
        session = Session(session_id, owner, path, revision, now)
        session.client_info, session.client_capabilities = client_info, client_capabilities
        self._hold(session, digest, now)
        return session

    async def get(self, session_id: str) -> Session | None:
        held = self._held.get(session_id)
        now = self._clock()
        if held is not None and not held.session.ended and now - held.read < self._revalidate:
            held.used = now
            return held.session
        digest = _digest(session_id)

        async def operation(link: _Link) -> dict[bytes, bytes]:
            found: dict[bytes, bytes] = await link.client.hgetall(self.prefix + "s:" + digest)
            return found

        found = await self._call(operation)
        held = self._held.get(session_id)  # another request may have read it meanwhile
        session = None if not found else _session(session_id, found)
        if session is not None and self._expired(found, now):
            await self.end(session if held is None else held.session)
            return None
        if session is None:
            if held is not None:
                self._let_go(held, ended=True)
            return None
        if held is None or held.session.ended:
            held = self._hold(session, digest, now)
        else:
            _refresh(held.session, session)
            held.read = now
        held.used = now
        return held.session

    async def touch(self, session: Session) -> None:
        held = self._held.get(session.id)
        now = self._clock()
        if held is None or now - held.touched < self._touch_every():
            return
        held.touched = now
        await self._push_back(held, now)

    async def end(self, session: Session) -> None:
        held = self._held.get(session.id)
        digest = _digest(session.id) if held is None else held.digest

        async def operation(link: _Link) -> None:
            await link.scripts["finish"](args=[self.prefix, digest])

        try:
            await self._call(operation)
        finally:
            if held is not None:
                self._let_go(held, ended=True)
            else:
                session.stop_all()
                session.ended = True

    # --- the SessionLink protocol (``Session.link``) ----------------------------------------

    @property
    def first_request_id(self) -> int:
        link = self._link
        assert link is not None  # a session of this store was made after the link
        return link.first_request_id

    def cancel(self, session: Session, request_id: str | int) -> None:
        self._tell(session, _CANCEL, encode(request_id))

    def answer(self, session: Session, request_id: object, message: JsonObject) -> None:
        link = self._link
        # Only an id from another node's range can be waiting elsewhere: an answer to
        # anything else (one of this node's own ids, or an id no node issued) goes nowhere.
        if type(request_id) is not int or link is None:
            return
        if request_id >> 32 == link.first_request_id >> 32 or request_id < _ID_RANGE:
            return
        self._tell(session, _ANSWER, encode(message))

    async def save(self, session: Session) -> None:
        held = self._held.get(session.id)
        if held is None:  # pragma: no cover - a session is held while a request uses it
            return
        subscriptions = encode(sorted(session.subscriptions))
        link = self._link
        node = "" if link is None else link.node
        signal = f"{_CHANGED}\n{node}\n"

        async def operation(link: _Link) -> None:
            args = [self.prefix, held.digest, signal, "l", session.log_level, "s", subscriptions]
            await link.scripts["save"](args=args)

        await self._call(operation)

    # --- lifecycle --------------------------------------------------------------------------

    async def detach(self) -> None:
        """The server stops: stop hearing the channels and close the client, forget the
        sessions held here (the records stay in Redis for the other nodes).  A server that
        starts again on another loop uses the store afresh."""
        link, self._link = self._link, None
        self._starting = self._loop = None
        for held in list(self._held.values()):
            self._let_go(held, ended=False)
        tasks = [] if link is None else link.tasks
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, *self._pending, *self._signals, return_exceptions=True)
        if link is not None:
            with contextlib.suppress(*self._errors):
                await link.client.aclose()

    async def aclose(self) -> None:
        """``detach``, for good: later calls raise ``SessionStoreUnavailable``."""
        self._closed = True
        await self.detach()

    # --- inside -----------------------------------------------------------------------------

    def _expired(self, found: dict[bytes, bytes], now: float) -> bool:
        """Whether a record read has reached its absolute end or idled out (Redis removes it
        then too; this holds to the clock of the node that reads it)."""
        try:
            ends, touched = float(found[b"x"]), float(found[b"t"])
        except (KeyError, ValueError):
            return True
        return now >= ends or now - touched >= self.limits.session_idle_timeout_seconds

    def _touch_every(self) -> float:
        """Push a session's expiry back at most this often: a tenth of its idle lifetime, at
        most 5 s (it is pushed back by a whole idle lifetime each time)."""
        return min(self.limits.session_idle_timeout_seconds / 10, 5.0)

    async def _push_back(self, held: _Held, now: float) -> None:
        idle = self.limits.session_idle_timeout_seconds
        args = [self.prefix, held.digest, repr(now), repr(idle)]

        async def operation(link: _Link) -> int:
            return int(await link.scripts["touch"](args=args))

        if not await self._call(operation):
            self._let_go(held, ended=True)

    def _hold(self, session: Session, digest: str, now: float) -> _Held:
        held = _Held(session, digest, read=now, touched=now, used=now)
        session.link = self
        self._held[session.id] = held
        self._by_digest[digest] = held
        return held

    def _let_go(self, held: _Held, *, ended: bool) -> None:
        """Forget ``held`` on this node; ``ended``: the session ended, so its calls and
        streams here stop."""
        session = held.session
        if self._held.get(session.id) is held:
            del self._held[session.id]
            del self._by_digest[held.digest]
        if ended and not session.ended:
            session.ended = True
            session.stop_all()
        elif not ended and session.audience is not None:
            session.audience.forget(session)

    def _tell(self, session: Session, kind: str, payload: bytes) -> None:
        """Publish a signal on the session's channel, without waiting for it."""
        held = self._held.get(session.id)
        link = self._link
        if held is None or link is None or self._closed:
            return
        if len(self._signals) >= self.limits.max_session_signals:
            log.warning("mcpkit: session signal dropped (max_session_signals in flight)")
            return
        message = f"{kind}\n{link.node}\n".encode() + payload
        channel = self.prefix + "c:" + held.digest

        async def send() -> None:
            try:
                async with asyncio.timeout(self._timeout):
                    await link.client.publish(channel, message)
            except self._errors as error:
                log.warning("mcpkit: session signal not sent (%s)", type(error).__name__)

        task = asyncio.get_running_loop().create_task(send())
        self._signals.add(task)
        task.add_done_callback(self._signals.discard)

    async def _call(self, operation: Callable[[_Link], Awaitable[T]]) -> T:
        """Run ``operation`` with this node's client within ``timeout_seconds``; a failure of
        Redis becomes ``SessionStoreUnavailable``, logged by its type only."""
        try:
            async with asyncio.timeout(self._timeout):
                link = await self._ready()
                return await operation(link)
        except self._errors as error:  # (a timeout is an OSError)
            log.error("mcpkit: session store failed with %s", type(error).__name__)
            raise SessionStoreUnavailable() from None

    async def _ready(self) -> _Link:
        """This node's link, made on first use: the client, the scripts, the node's number
        and the tasks that hear the channels and keep sessions alive."""
        if self._closed:
            log.error("mcpkit: session store used after it was closed")
            raise SessionStoreUnavailable()
        loop = asyncio.get_running_loop()
        link = self._link
        if link is not None and self._loop is loop:
            return link
        if self._loop is not None and self._loop is not loop:
            if not self._loop.is_closed():
                raise ConfigurationError(
                    "RedisSessionStore: already serving another event loop; give each server "
                    "its own store"
                )
            # The loop it served has ended (a server run again): start afresh on this one.
            self._link = None
            for held in list(self._held.values()):
                self._let_go(held, ended=False)
        if self._starting is None or self._loop is not loop:
            self._loop = loop
            self._starting = loop.create_future()
            task = loop.create_task(self._start(self._starting))
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)
        return await asyncio.shield(self._starting)

    async def _start(self, starting: asyncio.Future[_Link]) -> None:
        client = self._client()
        try:
            number = int(await client.incr(self.prefix + "nodes"))
        except BaseException as error:
            self._starting = None
            await client.aclose()
            starting.set_exception(error)
            starting.exception()  # retrieved here: the waiter may have timed out
            return
        scripts = {
            name: client.register_script(text)
            for name, text in (
                ("create", _CREATE), ("touch", _TOUCH), ("save", _SAVE), ("finish", _FINISH),
                ("open", _OPEN), ("append", _APPEND), ("close", _CLOSE), ("replay", _REPLAY),
            )
        }  # fmt: skip
        node = secrets.token_hex(8)
        # Ranges 1 to 2**20 - 1 (ids stay below 2**53, exact in every JSON parser); range 0 is
        # a store's without a link (ids from 1).
        first = ((number - 1) % _RANGES + 1) * _ID_RANGE + 1
        link = _Link(client, scripts, node, first)
        loop = asyncio.get_running_loop()
        link.tasks += [loop.create_task(self._hear(link)), loop.create_task(self._keep(link))]
        self._link = link
        starting.set_result(link)

    def _client(self) -> Any:
        client, self._errors = async_client(self._url, self._timeout)
        return client

    async def _keep(self, link: _Link) -> None:
        """Every ``_KEEP_SECONDS``: push back the expiry of the sessions busy here, and let go
        of those unused for ``_LET_GO_SECONDS`` with nothing running here."""
        while True:
            await asyncio.sleep(_KEEP_SECONDS)
            now = self._clock()
            every = self._touch_every()
            for held in list(self._held.values()):
                session = held.session
                busy = session.calls or session.streams_open or session.streaming
                if busy and now - held.touched >= every:
                    held.touched = now
                    try:
                        await self._push_back(held, now)
                    except SessionStoreUnavailable:
                        break  # logged; the next beat tries again
                elif not busy and now - held.used >= _LET_GO_SECONDS:
                    self._let_go(held, ended=False)

    async def _hear(self, link: _Link) -> None:
        """Hear every session channel of the store (one pattern), reconnecting with backoff;
        after a reconnect every held session is read again at its next use."""
        pattern = self.prefix + "c:*"
        start = len(self.prefix) + 2
        failures = 0
        while True:
            pubsub = link.client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.psubscribe(pattern)
                if failures:
                    for held in self._held.values():
                        held.read = -math.inf
                failures = 0
                while True:
                    message = await pubsub.get_message(timeout=None)
                    if message is not None:
                        channel = message["channel"].decode("utf-8", "replace")
                        self._heard(link, channel[start:], message["data"])
            except self._errors as error:
                log.warning("mcpkit: session channel lost (%s)", type(error).__name__)
                delay = _RECONNECT_SECONDS[min(failures, len(_RECONNECT_SECONDS) - 1)]
                failures += 1
                await asyncio.sleep(delay)
            finally:
                with contextlib.suppress(*self._errors):
                    await pubsub.aclose()

    def _heard(self, link: _Link, digest: str, data: bytes) -> None:
        """One signal about the session ``digest``: acted on when this node holds it."""
        held = self._by_digest.get(digest)
        if held is None:
            return
        kind, _, rest = data.partition(b"\n")
        node, _, payload = rest.partition(b"\n")
        session = held.session
        if kind == b"end":
            self._let_go(held, ended=True)
        elif kind == b"appended":
            session.appended()
        elif node == link.node.encode():
            return  # this node's own cancel, answer or change
        elif kind == b"changed":
            held.read = -math.inf  # read again at its next use
            self._reread(held)
        else:
            try:
                value = decode(payload, limits=self.limits)
            except ParseError:
                return
            if kind == b"cancel":
                session.stop_call(value)
            elif kind == b"answer" and isinstance(value, JsonObject):
                session.answer_here(value.get("id"), value)

    def _reread(self, held: _Held) -> None:
        """Read a changed session now, for its open stream's sake (a request would anyway)."""

        async def reread() -> None:
            with contextlib.suppress(SessionStoreUnavailable):
                await self.get(held.session.id)

        task = asyncio.get_running_loop().create_task(reread())
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)


def _text(found: dict[bytes, bytes], name: bytes) -> str | None:
    value = found.get(name)
    return None if value is None else value.decode("utf-8", "surrogatepass")


def _session(session_id: str, found: dict[bytes, bytes]) -> Session | None:
    """The session a record describes, or ``None`` when it is not one this store wrote."""
    revision = Revision.parse(_text(found, b"r"))
    path, created, level = _text(found, b"p"), _text(found, b"c"), _text(found, b"l")
    if revision is None or path is None or created is None or level is None:
        return None
    session = Session(session_id, _text(found, b"o"), path, revision, float(created))
    session.log_level = level
    for name, slot in ((b"ci", "client_info"), (b"cc", "client_capabilities")):
        if name in found:
            value = decode(found[name])
            if isinstance(value, JsonObject):
                setattr(session, slot, value)
    if b"s" in found:
        uris = decode(found[b"s"])
        if isinstance(uris, (list, tuple)):
            session.wanted = tuple(uri for uri in uris if isinstance(uri, str))
    return session


def _refresh(held: Session, read: Session) -> None:
    """What another node may have changed, from a fresh read."""
    held.log_level = read.log_level
    if read.wanted is not None:
        held.resubscribe(read.wanted)


class RedisEventStore:
    """The events of a ``RedisSessionStore``'s session streams, in its Redis (its
    ``events``): kept within ``max_stream_events``, ``max_session_event_streams`` and
    ``max_session_event_bytes`` per session, and removed with the session (``max_event_bytes``,
    a bound for one process, does not apply: Redis's memory is sized for
    ``max_sessions`` times the session bound)."""

    def __init__(self, sessions: RedisSessionStore) -> None:
        self._sessions = sessions

    def __repr__(self) -> str:
        return f"<RedisEventStore of {self._sessions!r}>"

    def _ttl(self) -> int:
        return math.ceil(self._sessions.limits.session_absolute_timeout_seconds * 1000)

    async def open(self, session_id: str) -> int:
        store = self._sessions
        args = [
            store.prefix,
            _digest(session_id),
            store.limits.max_session_event_streams,
            self._ttl(),
        ]

        async def operation(link: _Link) -> int:
            return int(await link.scripts["open"](args=args))

        return await store._call(operation)

    async def append(self, session_id: str, stream: int, message: bytes) -> str:
        store = self._sessions
        limits = store.limits
        args = [
            store.prefix, _digest(session_id), stream, message, limits.max_stream_events,
            limits.max_session_event_bytes, self._ttl(),
        ]  # fmt: skip

        async def operation(link: _Link) -> int:
            return int(await link.scripts["append"](args=args))

        return f"{stream}-{await store._call(operation)}"

    def close(self, session_id: str, stream: int) -> None:
        store = self._sessions
        args = [store.prefix, _digest(session_id), stream]

        async def operation(link: _Link) -> None:
            await link.scripts["close"](args=args)

        async def close() -> None:
            with contextlib.suppress(SessionStoreUnavailable):  # its TTL ends it anyway
                await store._call(operation)

        task = asyncio.get_running_loop().create_task(close())
        store._pending.add(task)
        task.add_done_callback(store._pending.discard)

    async def replay(self, session_id: str, last_event_id: str) -> Replay | None:
        parsed = parse_event_id(last_event_id)
        if parsed is None:
            return None
        stream, sequence = parsed
        store = self._sessions
        args = [store.prefix, _digest(session_id), stream, sequence]

        async def operation(link: _Link) -> list[Any] | None:
            found: list[Any] | None = await link.scripts["replay"](args=args)
            return found

        found = await store._call(operation)
        if not found:
            return None
        running, first, *messages = found
        events = [(f"{stream}-{first + n}", bytes(m)) for n, m in enumerate(messages)]
        return Replay(stream, events, bool(running))

    def forget(self, session_id: str) -> None:
        """Nothing to do: the session's end removes its events with its record."""
