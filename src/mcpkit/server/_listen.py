"""``subscriptions/listen`` (2026-07-28): one long-lived request whose answer is a stream of
change notifications.

A listen names the notifications it wants (``ListenFilter``, read with the request's params);
the server honours the ones the endpoint can deliver, asks the application's subscription
authorizer for a ``Lease``, and opens a ``Listener``.  The listener's first message is
``notifications/subscriptions/acknowledged`` with the honoured filter, every message carries
the listen's request id as ``io.modelcontextprotocol/subscriptionId``, and the stream ends with
the tagged ``complete`` result when the server ends it gracefully: its lifetime is over, the
authorizer no longer grants it, or the server stops.  A client ends it by leaving (HTTP) or
with ``notifications/cancelled`` (stdio); nothing more is written then.

The listener's queue holds one entry per notification type and resource URI: a change posted
again before the first is written says nothing new.  Past ``max_listen_queue`` entries the
client is not reading, and the stream is cut off instead of growing; so is a write that waits
longer than ``write_timeout_seconds``.  Over HTTP nothing more is written then (the connection
closes); on stdio the request still gets its ``complete`` result once the pipe has room.
The lease is re-checked before it expires; keep-alive comments and events never extend it.
A followed task that cannot be looked up when it changes (the task store is unavailable) is
looked up again at the next task the store answers for, or a keep-alive period later.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import math
import re
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final, TypeAlias

from mcpkit.errors import InvalidParams, InvalidValueError, TaskStoreUnavailable
from mcpkit.json import JsonArray, JsonObject, JsonValue
from mcpkit.limits import Limits
from mcpkit.model import Endpoint, Revision, absolute_uri
from mcpkit.protocol import notification_message, result_message
from mcpkit.server._broadcast import ChangeKind
from mcpkit.server._http import HttpRequest, Signal

__all__ = [
    "LISTEN",
    "Lease",
    "ListenFilter",
    "ListenWrite",
    "Listener",
    "SubscriptionAuthorizer",
    "SubscriptionRequest",
    "TaskSnapshot",
    "normalize_uri",
    "read_listen",
]

LISTEN: Final = "subscriptions/listen"
SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"
_ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"
_FLAGS: Final = (
    ("toolsListChanged", ChangeKind.TOOLS),
    ("promptsListChanged", ChangeKind.PROMPTS),
    ("resourcesListChanged", ChangeKind.RESOURCES),
)
_URIS: Final = "resourceSubscriptions"
_TASK_IDS: Final = "taskIds"
_MAX_TASK_ID_CHARS: Final = 256  # as tasks/get reads one: longer names no task

log = logging.getLogger("mcpkit.server")


# --- the filter -----------------------------------------------------------------------------

_PERCENT: Final = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _percent(match: re.Match[str]) -> str:
    char = chr(int(match[1], 16))
    return char if char in _UNRESERVED else "%" + match[1].upper()


def normalize_uri(uri: str) -> str:
    """The form resource URIs are matched in: RFC 3986's case and percent-encoding
    normalisation (scheme and host in lower case, percent-encodings in upper case, encoded
    unreserved characters decoded).  Paths are not otherwise rewritten: a custom scheme's
    ``..`` may mean something."""
    scheme, _, rest = uri.partition(":")
    if rest.startswith("//"):
        end = len(rest)
        for stop in "/?#":
            found = rest.find(stop, 2)
            if found != -1:
                end = min(end, found)
        userinfo, at, host = rest[2:end].rpartition("@")
        rest = "//" + userinfo + at + host.lower() + rest[end:]
    return scheme.lower() + ":" + _PERCENT.sub(_percent, rest)


@dataclass(frozen=True, slots=True)
class ListenFilter:
    """The notifications a listen asks for (or, once honoured, gets): list changes by kind,
    the resources whose updates it follows (normalised, de-duplicated, in first-seen order)
    and the tasks whose status it follows (the tasks extension; de-duplicated)."""

    kinds: frozenset[ChangeKind] = frozenset()
    uris: tuple[str, ...] = ()
    task_ids: tuple[str, ...] = ()

    def to_json(self) -> JsonObject:
        members: dict[str, JsonValue] = {name: True for name, kind in _FLAGS if kind in self.kinds}
        if self.uris:
            members[_URIS] = JsonArray(self.uris)
        if self.task_ids:
            members[_TASK_IDS] = JsonArray(self.task_ids)
        return JsonObject(members)


def read_listen(params: JsonObject) -> ListenFilter:
    """``subscriptions/listen``: the ``notifications`` filter, required.  Each flag is a
    boolean; ``resourceSubscriptions`` is an array of absolute URIs, ``taskIds`` one of task
    ids.  Anything else is -32602 (the counts are checked against the limits by the
    pipeline)."""
    notifications = params.get("notifications")
    if not isinstance(notifications, JsonObject):
        raise InvalidParams()
    kinds = set()
    for name, kind in _FLAGS:
        flag = notifications.get(name, False)
        if not isinstance(flag, bool):
            raise InvalidParams()
        if flag:
            kinds.add(kind)
    listed = notifications.get(_URIS, ())
    if not isinstance(listed, (list, tuple)):
        raise InvalidParams()
    uris: dict[str, None] = {}
    for uri in listed:
        if not isinstance(uri, str):
            raise InvalidParams()
        try:
            absolute_uri(uri)  # the model's rule for every URI it holds
        except InvalidValueError:
            raise InvalidParams() from None
        uris[normalize_uri(uri)] = None
    tasks = notifications.get(_TASK_IDS, ())
    if not isinstance(tasks, (list, tuple)):
        raise InvalidParams()
    task_ids: dict[str, None] = {}
    for task_id in tasks:
        if not isinstance(task_id, str) or not task_id or len(task_id) > _MAX_TASK_ID_CHARS:
            raise InvalidParams()
        task_ids[task_id] = None
    return ListenFilter(frozenset(kinds), tuple(uris), tuple(task_ids))


# --- authorization --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Lease:
    """A subscription authorizer's grant: the listen may go on for ``seconds`` (capped by
    ``Limits.subscription_lease_seconds`` and the stream's lifetime) before it is checked
    again."""

    seconds: float

    def __post_init__(self) -> None:
        seconds = self.seconds
        if (
            isinstance(seconds, bool)
            or not isinstance(seconds, (int, float))
            or not math.isfinite(seconds)
            or seconds <= 0
        ):
            raise ValueError("Lease.seconds must be a positive, finite number")


@dataclass(frozen=True, slots=True, kw_only=True)
class SubscriptionRequest:
    """What a subscription authorizer decides on: who listens (``identity`` and
    ``authorization``, as admission gave them), at which endpoint, to what (the honoured
    filter), over which HTTP request (``None`` on stdio), and whether this is a renewal of a
    stream already open."""

    endpoint: Endpoint
    identity: object
    authorization: str | None
    notifications: ListenFilter
    http_request: HttpRequest | None
    renewal: bool = False


SubscriptionAuthorizer: TypeAlias = Callable[
    [SubscriptionRequest], "Lease | Awaitable[Lease | None] | None"
]
"""Grants a listen (a ``Lease``) or denies it (``None``).  Required to serve listens, and
called again before each lease ends; an exception or a call longer than
``subscription_check_timeout_seconds`` is a denial."""


# --- the stream -----------------------------------------------------------------------------


class _End(enum.Enum):
    GRACEFUL = "graceful"  # the complete result is written last
    CUT = "cut"  # nothing more is written


_Key: TypeAlias = tuple[ChangeKind, str | None]
_TASK: Final = ChangeKind.TASK
TaskSnapshot: TypeAlias = Callable[[str, JsonObject], Awaitable[bytes | None]]
"""Given a task id and the stream's ``_meta``, the ``notifications/tasks`` message to write."""
ListenWrite: TypeAlias = Callable[[bytes | None, bool], Awaitable[None]]
"""The transport's writer of a listen stream: a message (``None``: a keep-alive comment), and
whether it is the last one (the ``complete`` result, which ends the response)."""


class Listener:
    """One open listen stream: its identity, honoured filter and queue, and the loop that
    turns them into messages (``run``).  ``post`` and ``end`` may be called from any thread."""

    __slots__ = (
        "_again", "_ending", "_limits", "_lock", "_loop", "_meta", "_queue", "_renew",
        "_retry_at", "_stale", "_thread", "_wake", "_writing", "filter", "id", "lease", "left",
        "owner", "path", "revision", "task_snapshot",
    )  # fmt: skip

    def __init__(
        self,
        *,
        request_id: str | int,
        path: str,
        revision: Revision,
        owner: str | None,
        honoured: ListenFilter,
        limits: Limits,
        renew: Callable[[], Awaitable[float | None]],
    ) -> None:
        self.id = request_id
        self.path = path
        self.revision = revision
        self.owner = owner
        self.filter = honoured
        self._limits = limits
        self._renew = renew
        self._meta = JsonObject({SUBSCRIPTION_ID: request_id})
        self._queue: dict[_Key, None] = {}
        self._ending: _End | None = None
        self._lock = threading.Lock()
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._wake = asyncio.Event()
        self._writing: asyncio.Future[None] | None = None  # the write in progress
        # Followed tasks the store could not look up when they changed, to look up again (at
        # most the filter's task ids): at ``_retry_at`` (``loop.time()``), or as soon as the
        # store answers for another task (``_again``).
        self._stale: dict[str, None] = {}
        self._retry_at = math.inf
        self._again = False
        self.lease = 0.0
        """The opening grant's seconds, set once the authorizer granted the listen."""
        self.left: Callable[[Listener], None] | None = None
        """Called when the stream ends (set by the audience that admitted it)."""
        self.task_snapshot: TaskSnapshot | None = None
        """Writes a followed task's ``notifications/tasks`` from a fresh, authorized lookup
        (``None``: the task is gone or cannot be told now, and nothing is sent)."""

    def __repr__(self) -> str:
        return f"<Listener {self.path} queued={len(self._queue)}>"

    @property
    def queued(self) -> int:
        return len(self._queue)

    def post(self, kind: ChangeKind, uri: str | None = None) -> None:
        """Queue a notification (``uri``: the normalised URI of a resource update); one
        already waiting for the same kind and URI stands for both.  Past the queue bound the
        stream is cut off."""
        key = (kind, uri)
        with self._lock:
            if self._ending is not None or key in self._queue:
                return
            cut = len(self._queue) >= self._limits.max_listen_queue
            if cut:
                self._ending = _End.CUT
                self._queue.clear()
            else:
                self._queue[key] = None
        self._signal(cut=cut)

    def end(self, *, graceful: bool = True) -> None:
        """End the stream: with its ``complete`` result after what is queued (``graceful``),
        or at once with nothing more written."""
        with self._lock:
            if self._ending is None or not graceful:
                self._ending = _End.GRACEFUL if graceful else _End.CUT
        self._signal(cut=not graceful)

    def _signal(self, *, cut: bool = False) -> None:
        wake = self._cut if cut else self._wake.set
        if threading.get_ident() == self._thread:
            wake()
        else:
            with contextlib.suppress(RuntimeError):  # a closed loop: the stream is long gone
                self._loop.call_soon_threadsafe(wake)

    def _cut(self) -> None:
        self._cut_write()
        self._wake.set()

    def _take(self) -> tuple[list[_Key], _End | None]:
        with self._lock:
            keys = list(self._queue)
            self._queue.clear()
            ending = self._ending
        if self._again:  # outside the queue and its bound: they are the filter's task ids
            self._again = False
            taken = dict.fromkeys(keys)
            taken.update(((_TASK, task_id), None) for task_id in self._stale)
            keys = list(taken)
        return keys, ending

    # --- messages -------------------------------------------------------------------------

    def acknowledgement(self) -> bytes:
        params = JsonObject({"notifications": self.filter.to_json(), "_meta": self._meta})
        return notification_message(_ACKNOWLEDGED, params, limits=self._limits)

    def completion(self) -> bytes:
        result = JsonObject({"resultType": "complete", "_meta": self._meta})
        return result_message(self.id, result, limits=self._limits)

    def _message(self, key: _Key) -> bytes:
        kind, uri = key
        params: dict[str, JsonValue] = {"_meta": self._meta}
        if uri is not None:
            params["uri"] = uri
        return notification_message(kind.method, JsonObject(params), limits=self._limits)

    async def _task_message(self, key: _Key) -> bytes | None:
        """A task's notification: its current state, looked up now (the change only said
        that it changed); ``None`` when it cannot be told."""
        task_id = key[1]
        # only a listen that follows tasks is posted their changes, and it has a snapshot
        assert self.task_snapshot is not None and task_id is not None
        try:
            message = await self.task_snapshot(task_id, self._meta)
        except TaskStoreUnavailable as error:
            # The change would be missed: the task is looked up again later instead.
            if not self._stale:
                log.warning(
                    "mcpkit: a listen stream cannot look a task up now (%s); trying again later",
                    type(error).__name__,
                )
                self._retry_at = self._loop.time() + self._limits.stream_keepalive_seconds
            self._stale[task_id] = None
            return None
        self._stale.pop(task_id, None)
        if self._stale:
            self._look_again()  # the store answers again
        return message

    def _look_again(self) -> None:
        """Have the next ``_take`` add the tasks the store could not look up (on the loop)."""
        self._again = True
        self._retry_at = self._loop.time() + self._limits.stream_keepalive_seconds

    async def run(self, disconnected: asyncio.Event, write: ListenWrite) -> None:
        """Write the stream through ``write``: the acknowledgement, then each notification as
        it is queued and ``None`` for a keep-alive after ``stream_keepalive_seconds`` without
        one, until the stream ends: gracefully with the ``complete`` result (written with
        ``last=True``), or with nothing more when the client left (``disconnected``) or the
        stream was cut off.  The authorizer is asked again before the opening grant
        (``lease``) runs out, and before each later one does."""
        try:
            await self._run(disconnected, write)
        finally:
            if self.left is not None:
                self.left(self)  # its place in the audience is freed before any last answer

    async def _run(self, disconnected: asyncio.Event, write: ListenWrite) -> None:
        limits = self._limits
        lease = self.lease
        loop = self._loop
        if isinstance(disconnected, Signal):
            disconnected.add_callback(self._wake.set)
        if not await self._send(write, self.acknowledgement()):
            return
        granted = written = loop.time()
        ends = granted + limits.listen_lifetime_seconds
        expires = min(granted + min(lease, limits.subscription_lease_seconds), ends)
        while True:
            self._wake.clear()
            if disconnected.is_set():
                return
            keys, ending = self._take()
            if ending is _End.CUT:
                return
            for key in keys:
                message = await self._task_message(key) if key[0] is _TASK else self._message(key)
                if message is None:
                    continue
                if not await self._send(write, message):
                    return
                written = loop.time()
            if ending is _End.GRACEFUL:
                await self._send(write, self.completion(), last=True)
                return
            if keys:
                continue  # posted while those were written
            now = loop.time()
            if now >= ends:
                await self._send(write, self.completion(), last=True)
                return
            # Ask again early enough that the check's own timeout ends before the grant does.
            check = expires - min(
                limits.subscription_check_timeout_seconds, (expires - granted) / 2
            )
            if now >= check:
                seconds = await self._renew()
                if seconds is None:
                    self._take()  # what was queued is for a grant that ended: dropped
                    await self._send(write, self.completion(), last=True)
                    return
                granted = loop.time()
                expires = min(granted + min(seconds, limits.subscription_lease_seconds), ends)
                continue
            retry = self._retry_at if self._stale else math.inf
            if now >= retry:
                self._look_again()
                continue
            keepalive = written + limits.stream_keepalive_seconds
            if now >= keepalive:
                if not await self._send(write, None):
                    return
                written = now
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), min(check, ends, keepalive, retry) - now)

    async def _send(self, write: ListenWrite, frame: bytes | None, *, last: bool = False) -> bool:
        """One write, given at most ``write_timeout_seconds`` and abandoned at once when the
        stream is cut off meanwhile; ``False`` when it did not complete (nothing more is to be
        written then)."""
        task = asyncio.ensure_future(write(frame, last))
        self._writing = task
        try:
            done, _ = await asyncio.wait((task,), timeout=self._limits.write_timeout_seconds)
        finally:
            self._writing = None
        if not done or task.cancelled():
            task.cancel()
            return False
        task.result()  # a failed write is the transport's error to raise
        return True

    def _cut_write(self) -> None:
        """A cut stream stops waiting for a write its client does not read (on the loop)."""
        if self._writing is not None:
            self._writing.cancel()
