"""Change events and the broadcaster that carries them to every node.

The application says what changed, coarsely (``Server.notify_resource_updated(uri)``,
``Server.notify_resource_list_changed()``); the server turns that into a ``Change`` and
publishes it through its ``Broadcaster``.  A broadcaster delivers every change to every
receiver attached to it, on every node (never to one competing consumer); each node's server
then decides who among its own clients is told, and how (the node-local ``Audience``).

``MemoryBroadcaster`` is the in-process default: ``publish`` calls the receivers at once, in
the publishing thread.  A multi-node deployment replaces it with one that fans out through
shared infrastructure; handlers and the application's calls stay as they are.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

__all__ = ["Broadcaster", "Change", "ChangeKind", "MemoryBroadcaster", "Receiver"]


class ChangeKind(enum.Enum):
    """What changed, valued by the notification that says so."""

    TOOLS = "notifications/tools/list_changed"
    PROMPTS = "notifications/prompts/list_changed"
    RESOURCES = "notifications/resources/list_changed"
    RESOURCE = "notifications/resources/updated"
    """One resource's content (``Change.uri``)."""
    TASK = "notifications/tasks"
    """One task's status (``Change.task``): a hint; listeners look the task up afresh."""

    @property
    def method(self) -> str:
        value: str = self.value
        return value


@dataclass(frozen=True, slots=True)
class Change:
    """One change event: its kind, the endpoint it concerns (``None``: every endpoint), for
    ``RESOURCE`` the resource's URI and for ``TASK`` the task's id.  Plain strings, so a
    broadcaster can send it anywhere."""

    kind: ChangeKind
    path: str | None = None
    uri: str | None = None
    task: str | None = None


Receiver = Callable[[Change], None]
"""Told of every change published on any node; must not block (it only queues)."""


class Broadcaster(Protocol):
    """Carries change events to every node's server.  ``publish`` may be called from any
    thread; each attached receiver must get every change published anywhere, once."""

    def publish(self, change: Change) -> None:
        """Send ``change`` to every receiver on every node, this one's included."""

    def attach(self, receiver: Receiver) -> None:
        """A server on this node starts receiving changes."""

    def detach(self, receiver: Receiver) -> None:
        """That server stops receiving them (not attached: nothing happens)."""


class MemoryBroadcaster:
    """One process's broadcaster: ``publish`` calls every attached receiver at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._receivers: tuple[Receiver, ...] = ()

    def __repr__(self) -> str:
        return f"<MemoryBroadcaster {len(self._receivers)} receivers>"

    def publish(self, change: Change) -> None:
        for receiver in self._receivers:  # a tuple replaced whole: no lock to read it
            receiver(change)

    def attach(self, receiver: Receiver) -> None:
        with self._lock:
            if receiver not in self._receivers:
                self._receivers = (*self._receivers, receiver)

    def detach(self, receiver: Receiver) -> None:
        with self._lock:
            self._receivers = tuple(r for r in self._receivers if r != receiver)
