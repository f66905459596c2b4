"""Who on this node hears of which change: 2025 sessions and 2026 listen streams.

The ``Broadcaster`` hands every change to ``Audience.receive``; the audience finds the
clients it concerns and queues the notification on each, coalesced (a session or a listener
holds at most one waiting notification per type and URI).

* A 2025 session joins its endpoint's audience when it opens, and hears of list changes on
  its ``GET`` stream; ``resources/subscribe`` adds the resources whose updates it hears of.
  Bounds: subscriptions per session and in all, and the URI bytes one session retains.
* A 2026 listener hears what its honoured filter names.  Bounds: open listens per caller
  and endpoint, and in all; capacity refuses a new listen, it never ends an open one.

Catalog changes are this node's own (each node swaps its catalog itself), so they come to
``catalog_changed`` directly rather than through the broadcaster.  Resource URIs are matched
in their normalised form (``normalize_uri``).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Mapping
from typing import TypeVar

from mcpkit.errors import ListenQuota, SessionQuota
from mcpkit.json import JsonObject
from mcpkit.limits import Limits
from mcpkit.model import Revision
from mcpkit.protocol import notification_message
from mcpkit.server._broadcast import Change, ChangeKind
from mcpkit.server._listen import Listener, normalize_uri
from mcpkit.server._sessions import Session

__all__ = ["Audience"]

T = TypeVar("T")


class Audience:
    """The sessions and listeners of one server, indexed by endpoint and by resource URI."""

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._lock = threading.Lock()  # changes are published from any thread
        self._sessions: dict[str, set[Session]] = {}  # by endpoint path
        self._subscribed: dict[str, set[Session]] = {}  # by normalised URI
        self._subscriptions = 0
        self._listeners: dict[str, set[Listener]] = {}  # by endpoint path
        self._following: dict[str, set[Listener]] = {}  # by normalised URI
        self._watching: dict[str, set[Listener]] = {}  # by task id
        self._owned: dict[tuple[str, str | None], int] = {}  # open listens per (path, owner)
        self._listens = 0

    def __repr__(self) -> str:
        return f"<Audience {self._listens} listens, {self._subscriptions} subscriptions>"

    @property
    def listens(self) -> int:
        return self._listens

    @property
    def subscriptions(self) -> int:
        return self._subscriptions

    # --- 2025 sessions ----------------------------------------------------------------------

    def join(self, session: Session) -> None:
        """A session opened (or, in a shared store, came to this node): it hears of its
        endpoint's list changes, and of the resources it subscribed to elsewhere."""
        with self._lock:
            session.audience = self
            self._sessions.setdefault(session.path, set()).add(session)
        if session.wanted:
            self.resync(session, session.wanted)

    def resync(self, session: Session, uris: Iterable[str]) -> None:
        """Make ``session``'s subscriptions ``uris`` (what another node said they are); those
        past this node's bounds are left out."""
        wanted = set(uris)
        for uri in session.subscriptions - wanted:
            self.unsubscribe(session, uri)
        for uri in wanted - session.subscriptions:
            with contextlib.suppress(SessionQuota):
                self.subscribe(session, uri)

    def subscribe(self, session: Session, uri: str) -> None:
        """Add ``uri`` to ``session``'s subscriptions (again: nothing changes), or
        ``SessionQuota`` past a bound."""
        limits = self._limits
        size = len(uri.encode("utf-8", "surrogatepass"))
        with self._lock:
            if uri in session.subscriptions:
                return
            if (
                len(session.subscriptions) >= limits.max_session_subscriptions
                or session.subscription_bytes + size > limits.max_session_subscription_bytes
                or self._subscriptions >= limits.max_subscriptions
            ):
                raise SessionQuota()
            session.subscriptions.add(uri)
            session.subscription_bytes += size
            session.audience = self
            self._subscribed.setdefault(normalize_uri(uri), set()).add(session)
            self._subscriptions += 1

    def unsubscribe(self, session: Session, uri: str) -> None:
        """Remove ``uri`` from ``session``'s subscriptions; not subscribed: nothing happens."""
        with self._lock:
            self._drop(session, uri)

    def forget(self, session: Session) -> None:
        """The session ended: drop its subscriptions and its place in the audience."""
        with self._lock:
            for uri in list(session.subscriptions):
                self._drop(session, uri)
            _discard(self._sessions, session.path, session)

    def _drop(self, session: Session, uri: str) -> None:
        if uri not in session.subscriptions:
            return
        session.subscriptions.discard(uri)
        session.subscription_bytes -= len(uri.encode("utf-8", "surrogatepass"))
        _discard(self._subscribed, normalize_uri(uri), session)
        self._subscriptions -= 1

    # --- 2026 listeners ---------------------------------------------------------------------

    def open(self, listener: Listener) -> None:
        """Admit ``listener``, or ``ListenQuota`` when its caller at its endpoint, or the
        server, has the most listens open."""
        limits = self._limits
        owner = (listener.path, listener.owner)
        with self._lock:
            if (
                self._owned.get(owner, 0) >= limits.max_listens_per_owner
                or self._listens >= limits.max_listens
            ):
                raise ListenQuota()
            self._owned[owner] = self._owned.get(owner, 0) + 1
            self._listens += 1
            listener.left = self.close
            self._listeners.setdefault(listener.path, set()).add(listener)
            for uri in listener.filter.uris:
                self._following.setdefault(uri, set()).add(listener)
            for task_id in listener.filter.task_ids:
                self._watching.setdefault(task_id, set()).add(listener)

    def close(self, listener: Listener) -> None:
        """``listener``'s stream ended (opened: it is forgotten; twice: nothing happens)."""
        with self._lock:
            listeners = self._listeners.get(listener.path)
            if listeners is None or listener not in listeners:
                return
            _discard(self._listeners, listener.path, listener)
            for uri in listener.filter.uris:
                _discard(self._following, uri, listener)
            for task_id in listener.filter.task_ids:
                _discard(self._watching, task_id, listener)
            owner = (listener.path, listener.owner)
            left = self._owned[owner] - 1
            if left:
                self._owned[owner] = left
            else:
                del self._owned[owner]
            self._listens -= 1

    def end_listens(self) -> None:
        """The server is stopping: every listen stream ends with its ``complete`` result."""
        with self._lock:
            listeners = [listener for group in self._listeners.values() for listener in group]
        for listener in listeners:
            listener.end()

    # --- delivery ---------------------------------------------------------------------------

    def receive(self, change: Change) -> None:
        """A change published on any node (the ``Broadcaster``'s receiver): queue its
        notification for every session and listener here that it concerns."""
        kind = change.kind
        if kind is ChangeKind.TASK:
            with self._lock:
                watching = tuple(self._watching.get(change.task or "", ()))
            for listener in watching:
                if listener.path == change.path:
                    listener.post(kind, change.task)
            return
        if kind is ChangeKind.RESOURCE:
            if change.uri is None:
                return
            uri = normalize_uri(change.uri)
            with self._lock:
                sessions = tuple(self._subscribed.get(uri, ()))
                listeners = tuple(self._following.get(uri, ()))
            if sessions:
                params = JsonObject({"uri": change.uri})
                message = notification_message(kind.method, params, limits=self._limits)
                for session in sessions:
                    session.post(f"{kind.method} {uri}", message)
            for listener in listeners:
                listener.post(kind, uri)
            return
        paths = None if change.path is None else (change.path,)
        self._lists(paths, {kind: None})

    def catalog_changed(self, path: str, changed: Mapping[Revision, Iterable[ChangeKind]]) -> None:
        """The catalog of the endpoint at ``path`` was swapped: tell its sessions and
        listeners on each revision whose lists of ``changed[revision]`` kinds differ."""
        self._lists((path,), None, changed)

    def _lists(
        self,
        paths: Iterable[str] | None,
        kinds: Mapping[ChangeKind, None] | None,
        by_revision: Mapping[Revision, Iterable[ChangeKind]] | None = None,
    ) -> None:
        with self._lock:
            chosen = self._sessions.keys() if paths is None else paths
            sessions = [s for path in chosen for s in self._sessions.get(path, ())]
            chosen = self._listeners.keys() if paths is None else paths
            listeners = [x for path in chosen for x in self._listeners.get(path, ())]
        for session in sessions:
            for kind in _wanted(session.revision, kinds, by_revision):
                message = notification_message(kind.method, JsonObject(), limits=self._limits)
                session.post(kind.method, message)
        for listener in listeners:
            for kind in _wanted(listener.revision, kinds, by_revision):
                if kind in listener.filter.kinds:
                    listener.post(kind)


def _wanted(
    revision: Revision | None,
    kinds: Mapping[ChangeKind, None] | None,
    by_revision: Mapping[Revision, Iterable[ChangeKind]] | None,
) -> Iterable[ChangeKind]:
    """The list kinds to tell a client on ``revision``: ``kinds`` for a published change,
    else what a swap changed on that revision."""
    if kinds is not None:
        return kinds
    assert by_revision is not None
    return () if revision is None else by_revision.get(revision, ())


def _discard(index: dict[str, set[T]], key: str, member: T) -> None:
    members = index.get(key)
    if members is not None:
        members.discard(member)
        if not members:
            del index[key]
