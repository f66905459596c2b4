"""Event stores: the events of 2025 session streams, kept for ``Last-Event-ID`` replay, by
``MemoryEventStore`` and by ``RedisSessionStore.events`` under the same rules.

Ids are ``<stream>-<sequence>`` and unique within a session; a replay is exact or refused
(``None``: an id never issued, a forgotten stream, a gap) and says whether its stream still
runs; each bound (events per stream, streams per session, bytes per session; bytes in all for
the one-process store) holds at its limit and drops the oldest just past it."""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import threading
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

import pytest
import redis

from mcpkit import Limits
from mcpkit.server._events import EventStore, MemoryEventStore, Replay, parse_event_id
from mcpkit.server._redis_sessions import RedisSessionStore

from ..redis_server import RedisServer, running_redis

T = TypeVar("T")


class Loop:
    """One event loop on a thread of its own, for the whole module: stores are used on it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(10)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


class Kept:
    """An event store driven from the test: each call runs on the module's loop."""

    def __init__(self, loop: Loop, events: EventStore, forget: Callable[[str], None]) -> None:
        self._loop = loop
        self.events = events
        self._forget = forget

    def open(self, session: str) -> int:
        return self._loop.run(self.events.open(session))

    def append(self, session: str, stream: int, message: bytes) -> str:
        return self._loop.run(self.events.append(session, stream, message))

    def replay(self, session: str, last: str) -> Replay | None:
        return self._loop.run(self.events.replay(session, last))

    def close(self, session: str, stream: int) -> None:
        async def close() -> None:
            self.events.close(session, stream)
            await settled(self.events)

        self._loop.run(close())

    def forget(self, session: str) -> None:
        self._forget(session)


async def settled(events: EventStore) -> None:
    """Whatever the store does in the background (Redis: a stream's close) has been done."""
    if isinstance(events, MemoryEventStore):
        return
    sessions = events._sessions  # type: ignore[attr-defined]
    await asyncio.gather(*sessions._pending)


@pytest.fixture(scope="module")
def loop() -> Iterator[Loop]:
    running = Loop()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def shared_redis() -> Iterator[RedisServer]:
    with running_redis() as server:
        yield server


StoreFactory = Callable[..., Kept]


@pytest.fixture(params=["memory", "redis"])
def store(
    request: pytest.FixtureRequest, loop: Loop, shared_redis: RedisServer
) -> Iterator[StoreFactory]:
    """Makes an event store of the parameter's kind with the given limits."""
    made: list[RedisSessionStore] = []

    def make(**limits: Any) -> Kept:
        chosen = Limits().replace(**limits)
        if request.param == "memory":
            memory = MemoryEventStore(chosen)
            return Kept(loop, memory, memory.forget)
        sessions = RedisSessionStore(
            shared_redis.url, limits=chosen, prefix=f"test:{secrets.token_hex(6)}:"
        )
        made.append(sessions)

        def forget(session: str) -> None:  # the session's end drops its events there
            async def finish() -> None:
                link = await sessions._ready()
                digest = hashlib.sha256(session.encode()).hexdigest()
                await link.scripts["finish"](args=[sessions.prefix, digest])

            loop.run(finish())

        return Kept(loop, sessions.events, forget)

    yield make
    for sessions in made:
        loop.run(sessions.aclose())


def kept_bytes(kept: Kept, *sessions: str) -> int:
    """The bytes of the events the store keeps for ``sessions``."""
    events = kept.events
    if isinstance(events, MemoryEventStore):
        return events.kept_bytes
    store: RedisSessionStore = events._sessions  # type: ignore[attr-defined]
    client = redis.Redis.from_url(store._url)
    try:
        total = 0
        for session in sessions:
            digest = hashlib.sha256(session.encode()).hexdigest()
            total += int(client.hget(f"{store.prefix}em:{digest}", "b") or 0)
        return total
    finally:
        client.close()


def test_events_get_ids_unique_within_the_session_and_replay_after_any_of_them(
    store: StoreFactory,
) -> None:
    events = store()
    first, second = events.open("s"), events.open("s")
    assert (first, second) == (1, 2)
    assert events.open("other") == 1  # numbers are per session
    assert events.append("s", first, b"a") == "1-1"
    assert events.append("s", second, b"b") == "2-1"
    assert events.append("s", first, b"c") == "1-2"
    assert events.replay("s", "1-0") == Replay(1, [("1-1", b"a"), ("1-2", b"c")], True)
    assert events.replay("s", "1-1") == Replay(1, [("1-2", b"c")], True)
    assert events.replay("s", "1-2") == Replay(1, [], True)  # caught up
    assert events.replay("s", "2-0") == Replay(2, [("2-1", b"b")], True)
    assert kept_bytes(events, "s", "other") == 3


@pytest.mark.parametrize(
    "asked",
    ["1-3", "9-0", "x", "", "1-", "-1", "01-1", "1-01", "1-1 ", "1234567890-0", "1-" + "9" * 19],
)
def test_an_id_never_issued_is_refused(store: StoreFactory, asked: str) -> None:
    events = store()
    stream = events.open("s")
    events.append("s", stream, b"a")
    events.append("s", stream, b"b")
    assert events.replay("s", asked) is None
    assert events.replay("elsewhere", "1-0") is None  # another session's ids are not this one's


def test_parse_event_id() -> None:
    assert parse_event_id("0-0") == (0, 0)
    assert parse_event_id("123456789-" + "9" * 18) == (123456789, 10**18 - 1)
    assert parse_event_id("1-1\n") is None


def test_events_per_stream_hold_at_the_limit_and_the_oldest_goes_past_it(
    store: StoreFactory,
) -> None:
    events = store(max_stream_events=2)
    stream = events.open("s")
    events.append("s", stream, b"a")
    events.append("s", stream, b"b")
    assert events.replay("s", "1-0") == Replay(1, [("1-1", b"a"), ("1-2", b"b")], True)
    events.append("s", stream, b"c")
    assert events.replay("s", "1-0") is None  # "1-1" is gone: that replay would have a gap
    assert events.replay("s", "1-1") == Replay(1, [("1-2", b"b"), ("1-3", b"c")], True)
    assert kept_bytes(events, "s") == 2


def test_streams_per_session_hold_at_the_limit_and_the_oldest_goes_past_it(
    store: StoreFactory,
) -> None:
    events = store(max_session_event_streams=2)
    one, two = events.open("s"), events.open("s")
    events.append("s", one, b"aa")
    events.append("s", two, b"b")
    assert events.replay("s", "1-0") is not None
    three = events.open("s")
    assert events.replay("s", "1-0") is None
    assert events.replay("s", "2-0") == Replay(2, [("2-1", b"b")], True)
    assert events.replay("s", f"{three}-0") == Replay(three, [], True)
    assert kept_bytes(events, "s") == 1
    assert events.append("s", one, b"lost") == "1-0"  # a forgotten stream keeps nothing
    assert kept_bytes(events, "s") == 1


def test_bytes_per_session_hold_at_the_limit_and_the_oldest_goes_past_it(
    store: StoreFactory,
) -> None:
    events = store(max_session_event_bytes=4)
    one, two = events.open("s"), events.open("s")
    events.append("s", one, b"ab")
    events.append("s", two, b"cd")
    assert kept_bytes(events, "s") == 4
    assert events.replay("s", "1-0") == Replay(1, [("1-1", b"ab")], True)
    events.append("s", two, b"e")
    assert events.replay("s", "1-0") is None
    assert events.replay("s", "2-0") == Replay(2, [("2-1", b"cd"), ("2-2", b"e")], True)
    assert kept_bytes(events, "s") == 3
    events.append("s", one, b"12345")  # larger than the budget: not even itself is kept
    assert events.replay("s", "1-1") is None
    assert events.replay("s", "1-2") == Replay(1, [], True)


def test_bytes_in_all_hold_at_the_limit_and_the_least_recent_stream_loses_first() -> None:
    # A bound of one process: a shared store is bounded per session (times max_sessions).
    events = MemoryEventStore(Limits().replace(max_event_bytes=4, max_session_event_bytes=4))
    run = asyncio.run
    a, b = run(events.open("a")), run(events.open("b"))
    run(events.append("a", a, b"12"))
    run(events.append("b", b, b"34"))
    assert events.kept_bytes == 4
    run(events.append("b", b, b"5"))  # "a" appended least recently: its oldest goes
    assert run(events.replay("a", "1-0")) is None
    assert run(events.replay("b", "1-0")) == Replay(1, [("1-1", b"34"), ("1-2", b"5")], True)
    assert events.kept_bytes == 3


def test_forgetting_a_session_drops_its_events(store: StoreFactory) -> None:
    events = store()
    stream = events.open("s")
    events.append("s", stream, b"abc")
    other = events.open("t")
    events.append("t", other, b"d")
    events.forget("s")
    events.forget("s")  # idempotent
    assert events.replay("s", "1-0") is None
    assert kept_bytes(events, "s", "t") == 1
    assert events.open("s") == 1  # a new session of the same id starts afresh


def test_the_standalone_stream_exists_from_its_first_event(store: StoreFactory) -> None:
    events = store(max_session_event_streams=1)
    assert events.replay("s", "0-0") == Replay(0, [])  # a session that has nothing yet
    assert events.replay("s", "0-1") is None
    assert events.append("s", 0, b"a") == "0-1"
    posted = events.open("s")  # a POST's stream: the standalone one is never dropped whole
    assert events.replay("s", "0-0") == Replay(0, [("0-1", b"a")])
    assert events.replay("s", f"{posted}-0") == Replay(posted, [], True)
    fresh = store()
    fresh.open("t")
    assert fresh.replay("t", "0-0") == Replay(0, [])  # other streams, no standalone event yet


def test_a_stream_runs_until_it_is_closed(store: StoreFactory) -> None:
    events = store()
    stream = events.open("s")
    events.append("s", stream, b"a")
    assert events.replay("s", "1-0") == Replay(1, [("1-1", b"a")], True)
    events.close("s", stream)
    events.close("s", 9)  # no such stream: nothing happens
    events.close("gone", 1)
    assert events.replay("s", "1-0") == Replay(1, [("1-1", b"a")], False)
