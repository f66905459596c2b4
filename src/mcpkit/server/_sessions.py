"""2025 sessions: what an endpoint that opts in remembers of a client between HTTP requests.

``initialize`` on a session revision opens a ``Session`` (its id goes back in
``Mcp-Session-Id``), every later request presents the id, and ``DELETE`` ends it.  A session
belongs to the authorization partition admission gave ``initialize`` (its owner): the same id
presented by anyone else is "not found", exactly as an id never issued.

Sessions live in a ``SessionStore``.  ``MemorySessionStore`` keeps them in this process, with
the quotas of ``Limits``: sessions in all, per owner (the anonymous owner has its own budget),
idle and absolute lifetimes.  A ``Session`` object is always one node's: its calls in flight
(which ``notifications/cancelled`` can stop), its open streams and the server's requests
waiting for the client's answers.  A store shared by several nodes (``RedisSessionStore``)
gives each node its own ``Session`` for the same record and a ``SessionLink`` through which
what one node cannot do itself reaches the node that can: a cancel or an answer for a call that
runs elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, Protocol

from mcpkit.errors import SessionQuota, TooManySessions
from mcpkit.json import JsonObject
from mcpkit.limits import Limits
from mcpkit.model import Revision
from mcpkit.server._conversation import Conversation

if TYPE_CHECKING:
    from mcpkit.server._audience import Audience
    from mcpkit.server._events import EventStore

__all__ = ["MemorySessionStore", "Session", "SessionLink", "SessionStore"]

_ID_BYTES: Final = 32
"""256 random bits per session id (``secrets``), written as 43 URL-safe characters."""
RECLAIM_AFTER_SECONDS: Final = 30.0
"""An owner at its quota may reclaim its own oldest session once that one has been quiet (no
request, no call in flight) this long: a client that reconnects without ``DELETE`` is not
locked out until its old sessions expire.  Other owners' sessions are never touched."""


def new_session_id() -> str:
    """A fresh session id: ``_ID_BYTES`` random bytes, URL-safe."""
    return secrets.token_urlsafe(_ID_BYTES)


class Session(Conversation):
    """One client's session: its id, owner and endpoint, the revision and client metadata of
    its ``initialize``, the log level it chose, and its calls in flight."""

    __slots__ = (
        "_calls", "_lock", "_loop", "_outbox", "_wake", "_watchers", "audience",
        "client_capabilities", "client_info", "created", "ended", "events", "id", "link",
        "owner", "path", "primed", "streams_open", "subscription_bytes", "subscriptions",
        "touched", "wanted",
    )  # fmt: skip

    def __init__(
        self, session_id: str, owner: str | None, path: str, revision: Revision, now: float
    ) -> None:
        super().__init__()
        self.id = session_id
        self.owner = owner
        self.path = path
        self.revision = revision
        self.created = self.touched = now
        self.ended = False
        self.client_info: JsonObject | None = None
        self.client_capabilities: JsonObject | None = None
        self._calls: dict[str | int, Callable[[], None]] = {}
        self.subscriptions: set[str] = set()
        """The resource URIs subscribed to (kept by the ``Audience``)."""
        self.wanted: tuple[str, ...] | None = None
        """The subscriptions a shared store read for it (made on another node): the
        ``Audience`` takes them when the session joins it."""
        self.subscription_bytes = 0
        self.audience: Audience | None = None
        """Set when the session joins its endpoint's audience: told when the session ends."""
        self.events: EventStore | None = None
        """Where its streams' events are kept for replay (set when it opens): told when the
        session ends."""
        self.link: SessionLink | None = None
        """How this node reaches the others that serve the session (a shared store's)."""
        self.primed = False
        """Whether its standalone ``GET`` stream has opened (only the first is primed)."""
        self.streams_open = 0
        """``GET`` streams open now (``max_session_streams``)."""
        self._watchers: set[asyncio.Event] = set()  # resumed streams, woken by every event
        # Notifications for the GET stream, at most one per key (an update per URI), in order.
        self._outbox: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self._wake: asyncio.Event | None = None  # the open GET stream's, on its loop
        self._loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:  # the id is a credential: never in a repr or a log
        wire = "" if self.revision is None else self.revision.wire
        return f"<Session {self.path} {wire} calls={len(self._calls)}>"

    def negotiated(self, revision: Revision) -> None:
        """The session was opened on its revision: nothing changes."""

    @property
    def calls(self) -> int:
        return len(self._calls)

    def begin(self, request_id: str | int, stop: Callable[[], None], limit: int) -> None:
        """A call starts; ``stop`` is what a cancel does to it.  Refused (``SessionQuota``) when
        ``limit`` calls are in flight already; an id already in flight is a client error the
        cancel could not tell apart, refused the same way."""
        if len(self._calls) >= limit or request_id in self._calls:
            raise SessionQuota()
        self._calls[request_id] = stop

    def end_call(self, request_id: str | int) -> None:
        self._calls.pop(request_id, None)

    def cancel(self, request_id: object) -> None:
        if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
            return
        if not self.stop_call(request_id) and self.link is not None:
            self.link.cancel(self, request_id)  # the call may run on another node

    def stop_call(self, request_id: object) -> bool:
        """Stop the call ``request_id`` if it runs on this node; whether it did."""
        if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
            return False
        stop = self._calls.pop(request_id, None)
        if stop is None:
            return False
        stop()
        return True

    @property
    def first_request_id(self) -> int:
        # Its own range on each node of a shared store: an answer names the node that asked.
        return 1 if self.link is None else self.link.first_request_id

    async def saved(self) -> None:
        if self.link is not None:
            await self.link.save(self)

    def answered(self, request_id: object, message: JsonObject) -> None:
        if not self.answer_here(request_id, message) and self.link is not None:
            self.link.answer(self, request_id, message)  # it may wait on another node

    def answer_here(self, request_id: object, message: JsonObject) -> bool:
        """The client's answer to a request this node may be waiting for; whether it was."""
        exchange = self._exchange
        return exchange is not None and exchange.answered(request_id, message)

    def resubscribe(self, uris: tuple[str, ...]) -> None:
        """Another node changed the session's subscriptions to ``uris``."""
        self.wanted = uris
        if self.audience is not None:
            self.audience.resync(self, uris)

    def stop_all(self) -> None:
        """The session ended: stop every call still in flight, drop its subscriptions and end
        its stream."""
        calls, self._calls = self._calls, {}
        for stop in calls.values():
            stop()
        self.hang_up()
        if self.audience is not None:
            self.audience.forget(self)
        if self.events is not None:
            self.events.forget(self.id)
        self.appended()  # resumed streams see the end
        self._signal()

    # --- resumable streams (on the loop) ----------------------------------------------------

    def appended(self) -> None:
        """One of the session's streams has a new event, or ended: wake the resumed ones."""
        for watcher in self._watchers:
            watcher.set()

    def watch(self, watcher: asyncio.Event) -> None:
        self._watchers.add(watcher)

    def unwatch(self, watcher: asyncio.Event) -> None:
        self._watchers.discard(watcher)

    # --- the GET stream ---------------------------------------------------------------------

    def post(self, key: str, message: bytes) -> None:
        """Queue a notification for the session's stream; one already queued under ``key``
        is replaced (it said the same).  Callable from any thread."""
        with self._lock:
            self._outbox.pop(key, None)
            self._outbox[key] = message
        self._signal()

    def take(self) -> list[bytes]:
        """The queued notifications, oldest first; the queue is then empty."""
        with self._lock:
            messages = list(self._outbox.values())
            self._outbox.clear()
        return messages

    @property
    def pending(self) -> bool:
        return bool(self._outbox)

    @property
    def streaming(self) -> bool:
        return self._wake is not None

    def open_stream(self, wake: asyncio.Event) -> bool:
        """The stream opens and ``wake`` is set whenever there is something for it;
        ``False`` when one is open already."""
        with self._lock:
            if self._wake is not None:
                return False
            self._wake, self._loop = wake, asyncio.get_running_loop()
        return True

    def close_stream(self) -> None:
        with self._lock:
            self._wake = self._loop = None

    def _signal(self) -> None:
        with self._lock:
            wake, loop = self._wake, self._loop
        if wake is not None and loop is not None:
            with contextlib.suppress(RuntimeError):  # a closed loop: nothing left to wake
                loop.call_soon_threadsafe(wake.set)


class SessionLink(Protocol):
    """A shared store's way to the other nodes serving one session.  ``cancel`` and ``answer``
    return at once (what is lost on the way is what a lost message would lose)."""

    @property
    def first_request_id(self) -> int:
        """Where this node's ids for the server's requests to clients start: no other node's
        ids for the same session come from the same range."""

    def cancel(self, session: Session, request_id: str | int) -> None:
        """``notifications/cancelled`` named a call this node does not run."""

    def answer(self, session: Session, request_id: object, message: JsonObject) -> None:
        """The client answered a request this node does not wait for."""

    async def save(self, session: Session) -> None:
        """The session's log level or resource subscriptions changed on this node: keep them
        where every node serving it finds them (and tell those that hold it)."""


class SessionStore(Protocol):
    """Where sessions live: create, find, keep alive, end.  Replace ``MemorySessionStore``
    to keep the session records elsewhere; the calls in flight stay with the node serving
    them."""

    async def create(
        self,
        owner: str | None,
        path: str,
        revision: Revision,
        client_info: JsonObject | None,
        client_capabilities: JsonObject | None,
    ) -> Session:
        """A new session, or ``TooManySessions`` / ``SessionQuota`` when a quota is full."""

    async def get(self, session_id: str) -> Session | None:
        """The live session with this id, or ``None`` (never issued, ended or expired)."""

    async def touch(self, session: Session) -> None:
        """The client used the session: its idle time starts again."""

    async def end(self, session: Session) -> None:
        """End the session (``DELETE``); idempotent."""


class MemorySessionStore:
    """Sessions in this process, bounded by the session fields of ``Limits``."""

    def __init__(self, limits: Limits, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._limits = limits
        self._clock = clock
        self._sessions: dict[str, Session] = {}
        self._owned: dict[str | None, dict[str, Session]] = {}

    def __len__(self) -> int:
        return len(self._sessions)

    async def create(
        self,
        owner: str | None,
        path: str,
        revision: Revision,
        client_info: JsonObject | None,
        client_capabilities: JsonObject | None,
    ) -> Session:
        limits = self._limits
        now = self._clock()
        if len(self._sessions) >= limits.max_sessions:
            self._sweep(now)
        owned = self._owned.get(owner, {})
        quota = limits.max_anonymous_sessions if owner is None else limits.max_sessions_per_owner
        if len(owned) >= quota:
            self._reclaim(owned, now, quota)
        if len(owned) >= quota:
            raise SessionQuota()
        if len(self._sessions) >= limits.max_sessions:
            raise TooManySessions()
        session = Session(new_session_id(), owner, path, revision, now)
        session.client_info, session.client_capabilities = client_info, client_capabilities
        self._sessions[session.id] = session
        self._owned.setdefault(owner, {})[session.id] = session
        return session

    async def get(self, session_id: str) -> Session | None:
        session = self._sessions.get(session_id)
        if session is not None and self._expired(session, self._clock()):
            self.ended(session)
            return None
        return session

    async def touch(self, session: Session) -> None:
        session.touched = self._clock()

    async def end(self, session: Session) -> None:
        self.ended(session)

    def ended(self, session: Session) -> None:
        """End ``session`` now (``end`` without a coroutine, for the sweeps)."""
        if session.ended:
            return
        session.ended = True
        self._sessions.pop(session.id, None)
        owned = self._owned.get(session.owner)
        if owned is not None:
            owned.pop(session.id, None)
            if not owned:
                del self._owned[session.owner]
        session.stop_all()

    def _expired(self, session: Session, now: float) -> bool:
        limits = self._limits
        if now - session.created >= limits.session_absolute_timeout_seconds:
            return True
        # A call in flight or an open stream is the client's activity: neither idles out.
        if session.calls or session.streaming:
            return False
        return now - session.touched >= limits.session_idle_timeout_seconds

    def _sweep(self, now: float) -> None:
        """End every expired session (only when the server is full: O(sessions))."""
        for session in [s for s in self._sessions.values() if self._expired(s, now)]:
            self.ended(session)

    def _reclaim(self, owned: dict[str, Session], now: float, quota: int) -> None:
        """Make room in one owner's quota: its expired sessions end, then its quietest one if
        that has been quiet ``RECLAIM_AFTER_SECONDS``."""
        for session in [s for s in owned.values() if self._expired(s, now)]:
            self.ended(session)
        if len(owned) < quota:
            return
        quiet = [s for s in owned.values() if not s.calls]
        if quiet:
            oldest = min(quiet, key=lambda session: session.touched)
            if now - oldest.touched >= RECLAIM_AFTER_SECONDS:
                self.ended(oldest)
