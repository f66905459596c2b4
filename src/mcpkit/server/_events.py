"""Resumable streams of 2025 sessions: every SSE event a session's streams carry has an id, and
a client that lost a stream asks for what followed with ``GET`` and ``Last-Event-ID``.

An event id is ``<stream>-<sequence>``: decimal numbers, unique within the session.  Each
``POST`` whose answer becomes a stream gets a stream of its own (``open``), numbered from 1;
stream 0 is the session's standalone ``GET`` stream, which every later ``GET`` continues.
Sequence 0 is the priming event a 2025-11-25 stream starts with (an id and no data), so a
client that got nothing else can still resume from the beginning.

The messages written are kept in an ``EventStore`` (``open``, ``append``, ``close``,
``replay``, ``forget``).  ``MemoryEventStore`` keeps them in this process, within the bounds of
``Limits``: events per stream, streams per session, bytes per session and in all; past any, the
oldest go first (``RedisSessionStore.events`` keeps them in Redis, for several nodes).  A
replay is exact or refused: an id that was never issued, belongs to a forgotten stream, or has
events after it that are gone gets ``None``, never a stream with a gap.
"""

from __future__ import annotations

import re
from collections import OrderedDict, deque
from typing import TYPE_CHECKING, Final, NamedTuple, Protocol

from mcpkit.limits import Limits
from mcpkit.protocol import sse_event

if TYPE_CHECKING:
    from mcpkit.server._sessions import Session

__all__ = ["RETRY_MILLISECONDS", "EventStore", "Journal", "MemoryEventStore", "Replay"]

RETRY_MILLISECONDS: Final = 1000
"""The ``retry:`` of a 2025-11-25 stream's priming event: how long a client that lost the
stream waits before it asks for the rest."""

_EVENT_ID: Final = re.compile(r"(0|[1-9][0-9]{0,8})-(0|[1-9][0-9]{0,17})")


def parse_event_id(value: str) -> tuple[int, int] | None:
    """``(stream, sequence)`` of an event id the server could have issued, else ``None``."""
    match = _EVENT_ID.fullmatch(value)
    if match is None:
        return None
    return int(match[1]), int(match[2])


class Replay(NamedTuple):
    """What followed an event: its stream, each later event kept as ``(id, message)``, and
    whether the stream is still being written (a ``POST``'s whose call runs)."""

    stream: int
    events: list[tuple[str, bytes]]
    running: bool = False


class EventStore(Protocol):
    """Where the events of sessions' streams are kept for replay.  Replace
    ``MemoryEventStore`` to keep them elsewhere (``RedisSessionStore.events`` for several
    nodes)."""

    async def open(self, session_id: str) -> int:
        """A new stream of the session, running until ``close``: its number (1 or more)."""

    async def append(self, session_id: str, stream: int, message: bytes) -> str:
        """Keep ``message`` as the stream's next event; its id.  Stream 0 (the standalone
        stream) exists from its first event; an event of a stream that was forgotten is not
        kept (its id is the stream's ``-0``, which nothing can replay from)."""

    def close(self, session_id: str, stream: int) -> None:
        """The stream has its last event: it is no longer running.  Called on the loop, also
        by a request being cancelled, so it does not wait (a shared store finishes it in the
        background)."""

    async def replay(self, session_id: str, last_event_id: str) -> Replay | None:
        """The events after ``last_event_id`` on its stream, or ``None`` when they cannot all
        be given: an id never issued to this session, a forgotten stream, a gap."""

    def forget(self, session_id: str) -> None:
        """The session ended on this node: drop all of its events (a store that ends them
        with the session record has nothing to do)."""


class _Stream:
    __slots__ = ("events", "next", "number", "running")

    def __init__(self, number: int, *, running: bool) -> None:
        self.number = number
        self.events: deque[tuple[int, bytes]] = deque()
        self.next = 1  # the sequence of the next event (0 is the priming event's)
        self.running = running


class _Kept:
    """One session's streams, oldest first, and the bytes of their events."""

    __slots__ = ("bytes", "next_stream", "streams")

    def __init__(self) -> None:
        self.streams: OrderedDict[int, _Stream] = OrderedDict()
        self.bytes = 0
        self.next_stream = 1


class MemoryEventStore:
    """Events in this process, bounded by ``max_stream_events``,
    ``max_session_event_streams``, ``max_session_event_bytes`` and ``max_event_bytes``."""

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._sessions: dict[str, _Kept] = {}
        self._bytes = 0
        # streams by their last append, least recent first: who loses events to the total
        self._recent: OrderedDict[tuple[str, int], None] = OrderedDict()

    @property
    def kept_bytes(self) -> int:
        """The bytes of every event kept."""
        return self._bytes

    async def open(self, session_id: str) -> int:
        kept = self._sessions.get(session_id)
        if kept is None:
            kept = self._sessions[session_id] = _Kept()
        number = kept.next_stream
        kept.next_stream += 1
        kept.streams[number] = _Stream(number, running=True)
        self._bound_streams(session_id, kept)
        return number

    def _bound_streams(self, session_id: str, kept: _Kept) -> None:
        """At most ``max_session_event_streams`` streams of ``POST``s: the least recently
        written go (the standalone stream, 0, is not one of them and never dropped whole)."""
        while len(kept.streams) - (0 in kept.streams) > self._limits.max_session_event_streams:
            oldest = next(number for number in kept.streams if number != 0)
            self._drop_stream(session_id, kept, oldest)

    async def append(self, session_id: str, stream: int, message: bytes) -> str:
        kept = self._sessions.get(session_id)
        if kept is None and stream == 0:
            kept = self._sessions[session_id] = _Kept()
        record = None if kept is None else kept.streams.get(stream)
        if kept is not None and record is None and stream == 0:
            record = kept.streams[0] = _Stream(0, running=False)
            self._bound_streams(session_id, kept)
        if kept is None or record is None:  # forgotten meanwhile: the event is not kept
            return f"{stream}-0"
        kept.streams.move_to_end(stream)
        sequence = record.next
        record.next += 1
        record.events.append((sequence, message))
        size = len(message)
        kept.bytes += size
        self._bytes += size
        self._recent[(session_id, stream)] = None
        self._recent.move_to_end((session_id, stream))
        limits = self._limits
        while len(record.events) > limits.max_stream_events:
            self._drop_oldest(session_id, kept, record)
        while kept.bytes > limits.max_session_event_bytes:
            first = next(s for s in kept.streams.values() if s.events)
            self._drop_oldest(session_id, kept, first)
        while self._bytes > limits.max_event_bytes:
            owner, number = next(iter(self._recent))
            victim = self._sessions[owner]
            self._drop_oldest(owner, victim, victim.streams[number])
        return f"{stream}-{sequence}"

    def close(self, session_id: str, stream: int) -> None:
        kept = self._sessions.get(session_id)
        record = None if kept is None else kept.streams.get(stream)
        if record is not None:
            record.running = False

    async def replay(self, session_id: str, last_event_id: str) -> Replay | None:
        parsed = parse_event_id(last_event_id)
        if parsed is None:
            return None
        stream, sequence = parsed
        kept = self._sessions.get(session_id)
        if kept is None:
            return Replay(0, []) if parsed == (0, 0) else None
        record = kept.streams.get(stream)
        if record is None and stream == 0 and sequence == 0:
            return Replay(0, [])  # the standalone stream has had no event yet
        if record is None or sequence >= record.next:
            return None
        first = record.events[0][0] if record.events else record.next
        if first > sequence + 1:
            return None  # events right after it are gone: a replay would have a gap
        events = [(f"{stream}-{n}", message) for n, message in record.events if n > sequence]
        return Replay(stream, events, record.running)

    def forget(self, session_id: str) -> None:
        kept = self._sessions.pop(session_id, None)
        if kept is None:
            return
        for number in list(kept.streams):
            self._recent.pop((session_id, number), None)
        self._bytes -= kept.bytes

    def _drop_oldest(self, session_id: str, kept: _Kept, record: _Stream) -> None:
        _, message = record.events.popleft()
        kept.bytes -= len(message)
        self._bytes -= len(message)
        if not record.events:
            self._recent.pop((session_id, record.number), None)

    def _drop_stream(self, session_id: str, kept: _Kept, number: int) -> None:
        record = kept.streams.pop(number)
        dropped = sum(len(message) for _, message in record.events)
        kept.bytes -= dropped
        self._bytes -= dropped
        self._recent.pop((session_id, number), None)


class Journal:
    """One session stream as it is written: each message is kept in the store and written with
    its id.  A ``POST``'s stream takes its number at its first event (most answers are one
    JSON body and need none) and counts as running until ``close``."""

    __slots__ = ("_closed", "_events", "_priming", "_session", "stream")

    def __init__(
        self,
        events: EventStore,
        session: Session,
        *,
        priming: bool,
        stream: int | None = None,
    ) -> None:
        self._events = events
        self._session = session
        self._priming = priming
        self._closed = False
        self.stream = stream
        """``None`` for a ``POST``'s stream until it starts; 0 for the standalone stream."""

    async def start(self) -> bytes:
        """The stream's first bytes: on 2025-11-25 the priming event (an id and no data, and
        ``retry:``), so that a client that gets nothing else can still resume."""
        if self.stream is None:
            self.stream = await self._events.open(self._session.id)
        if not self._priming:
            return b""
        return b"id: %d-0\nretry: %d\ndata: \n\n" % (self.stream, RETRY_MILLISECONDS)

    async def event(self, message: bytes) -> bytes:
        """``message`` as the stream's next event, kept for replay."""
        assert self.stream is not None  # start() came first
        event_id = await self._events.append(self._session.id, self.stream, message)
        self._session.appended()
        return sse_event(message, event_id)

    def close(self) -> None:
        """The stream has its last event: a resumed stream that follows it ends."""
        if self.stream is not None and not self._closed:
            self._closed = True
            self._events.close(self._session.id, self.stream)
            self._session.appended()
