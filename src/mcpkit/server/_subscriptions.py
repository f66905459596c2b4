"""Resource subscriptions of 2025 sessions, and the change notifications delivered to them.

Every session joins its endpoint's audience when it opens: ``Server.notify_resource_list_changed``
queues ``notifications/resources/list_changed`` on each (at most one queued per session).

``resources/subscribe`` adds a URI to a session's subscriptions; when the application calls
``Server.notify_resource_updated(uri)`` the ``Broadcaster`` queues
``notifications/resources/updated`` on every session subscribed to it, and the session's
``GET`` stream writes it.  Bounds (``Limits``): subscriptions per session and in all, and the
URI bytes one session retains.  A session's queue holds at most one update per URI: an
update is a hint to read again, so a second one before the first is written says nothing new.

``MemoryBroadcaster`` is the in-process default; a multi-node deployment would replace it with
one that fans out through shared infrastructure.
"""

from __future__ import annotations

import threading
from typing import Final, Protocol

from mcpkit.errors import SessionQuota
from mcpkit.json import JsonObject
from mcpkit.limits import Limits
from mcpkit.protocol import notification_message
from mcpkit.server._sessions import Session

__all__ = ["Broadcaster", "MemoryBroadcaster"]

_UPDATED: Final = "notifications/resources/updated"
_LIST_CHANGED: Final = "notifications/resources/list_changed"


class Broadcaster(Protocol):
    """Who is subscribed to what, and the fan-out of change notifications."""

    def subscribe(self, session: Session, uri: str) -> None:
        """Add ``uri`` to ``session``'s subscriptions (again: nothing changes), or
        ``SessionQuota`` past a bound."""

    def unsubscribe(self, session: Session, uri: str) -> None:
        """Remove ``uri`` from ``session``'s subscriptions; not subscribed: nothing happens."""

    def join(self, session: Session) -> None:
        """A session opened: it is told when its endpoint's resource list changes."""

    def forget(self, session: Session) -> None:
        """The session ended: drop its subscriptions and its place in the audience."""

    def resource_list_changed(self, path: str) -> int:
        """Queue ``notifications/resources/list_changed`` for every session of the endpoint at
        ``path``; returns how many.  Callable from any thread."""

    def resource_updated(self, uri: str) -> int:
        """Queue ``notifications/resources/updated`` for every session subscribed to
        ``uri``; returns how many.  Callable from any thread."""


class MemoryBroadcaster:
    """Subscriptions in this process, bounded by ``Limits``."""

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._lock = threading.Lock()  # notify_resource_updated may come from worker threads
        self._by_uri: dict[str, set[Session]] = {}
        self._by_path: dict[str, set[Session]] = {}  # bounded by the sessions themselves
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def subscribe(self, session: Session, uri: str) -> None:
        limits = self._limits
        size = len(uri.encode("utf-8", "surrogatepass"))
        with self._lock:
            if uri in session.subscriptions:
                return
            if (
                len(session.subscriptions) >= limits.max_session_subscriptions
                or session.subscription_bytes + size > limits.max_session_subscription_bytes
                or self._count >= limits.max_subscriptions
            ):
                raise SessionQuota()
            session.subscriptions.add(uri)
            session.subscription_bytes += size
            session.broadcaster = self
            self._by_uri.setdefault(uri, set()).add(session)
            self._count += 1

    def unsubscribe(self, session: Session, uri: str) -> None:
        with self._lock:
            self._drop(session, uri)

    def join(self, session: Session) -> None:
        with self._lock:
            session.broadcaster = self
            self._by_path.setdefault(session.path, set()).add(session)

    def forget(self, session: Session) -> None:
        with self._lock:
            for uri in list(session.subscriptions):
                self._drop(session, uri)
            audience = self._by_path.get(session.path)
            if audience is not None:
                audience.discard(session)
                if not audience:
                    del self._by_path[session.path]

    def resource_list_changed(self, path: str) -> int:
        with self._lock:
            sessions = tuple(self._by_path.get(path, ()))
        if not sessions:
            return 0
        message = notification_message(_LIST_CHANGED, JsonObject(), limits=self._limits)
        for session in sessions:
            session.post(_LIST_CHANGED, message)
        return len(sessions)

    def resource_updated(self, uri: str) -> int:
        with self._lock:
            sessions = tuple(self._by_uri.get(uri, ()))
        if not sessions:
            return 0
        message = notification_message(_UPDATED, JsonObject({"uri": uri}), limits=self._limits)
        for session in sessions:
            session.post(f"{_UPDATED} {uri}", message)
        return len(sessions)

    def _drop(self, session: Session, uri: str) -> None:
        if uri not in session.subscriptions:
            return
        session.subscriptions.discard(uri)
        session.subscription_bytes -= len(uri.encode("utf-8", "surrogatepass"))
        subscribers = self._by_uri[uri]
        subscribers.discard(session)
        if not subscribers:
            del self._by_uri[uri]
        self._count -= 1
