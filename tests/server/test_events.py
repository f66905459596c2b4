"""``MemoryEventStore``: the events of 2025 session streams, kept for ``Last-Event-ID`` replay.

Ids are ``<stream>-<sequence>`` and unique within a session; a replay is exact or refused
(``None``: an id never issued, a forgotten stream, a gap); each bound (events per stream,
streams per session, bytes per session, bytes in all) holds at its limit and drops the oldest
just past it."""

from __future__ import annotations

import pytest

from mcpkit import Limits
from mcpkit.server._events import MemoryEventStore, Replay, parse_event_id


def store(**limits: int) -> MemoryEventStore:
    return MemoryEventStore(Limits().replace(**limits))


def test_events_get_ids_unique_within_the_session_and_replay_after_any_of_them() -> None:
    events = store()
    first, second = events.open("s"), events.open("s")
    assert (first, second) == (1, 2)
    assert events.open("other") == 1  # numbers are per session
    assert events.append("s", first, b"a") == "1-1"
    assert events.append("s", second, b"b") == "2-1"
    assert events.append("s", first, b"c") == "1-2"
    assert events.replay("s", "1-0") == Replay(1, [("1-1", b"a"), ("1-2", b"c")])
    assert events.replay("s", "1-1") == Replay(1, [("1-2", b"c")])
    assert events.replay("s", "1-2") == Replay(1, [])  # caught up
    assert events.replay("s", "2-0") == Replay(2, [("2-1", b"b")])
    assert events.kept_bytes == 3


@pytest.mark.parametrize(
    "asked",
    ["1-3", "9-0", "x", "", "1-", "-1", "01-1", "1-01", "1-1 ", "1234567890-0", "1-" + "9" * 19],
)
def test_an_id_never_issued_is_refused(asked: str) -> None:
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


def test_events_per_stream_hold_at_the_limit_and_the_oldest_goes_past_it() -> None:
    events = store(max_stream_events=2)
    stream = events.open("s")
    events.append("s", stream, b"a")
    events.append("s", stream, b"b")
    assert events.replay("s", "1-0") == Replay(1, [("1-1", b"a"), ("1-2", b"b")])
    events.append("s", stream, b"c")
    assert events.replay("s", "1-0") is None  # "1-1" is gone: that replay would have a gap
    assert events.replay("s", "1-1") == Replay(1, [("1-2", b"b"), ("1-3", b"c")])
    assert events.kept_bytes == 2


def test_streams_per_session_hold_at_the_limit_and_the_oldest_goes_past_it() -> None:
    events = store(max_session_event_streams=2)
    one, two = events.open("s"), events.open("s")
    events.append("s", one, b"aa")
    events.append("s", two, b"b")
    assert events.replay("s", "1-0") is not None
    three = events.open("s")
    assert events.replay("s", "1-0") is None
    assert events.replay("s", "2-0") == Replay(2, [("2-1", b"b")])
    assert events.replay("s", f"{three}-0") == Replay(three, [])
    assert events.kept_bytes == 1
    events.append("s", one, b"lost")  # a forgotten stream keeps nothing
    assert events.kept_bytes == 1


def test_bytes_per_session_hold_at_the_limit_and_the_oldest_goes_past_it() -> None:
    events = store(max_session_event_bytes=4)
    one, two = events.open("s"), events.open("s")
    events.append("s", one, b"ab")
    events.append("s", two, b"cd")
    assert events.kept_bytes == 4
    assert events.replay("s", "1-0") == Replay(1, [("1-1", b"ab")])
    events.append("s", two, b"e")
    assert events.replay("s", "1-0") is None
    assert events.replay("s", "2-0") == Replay(2, [("2-1", b"cd"), ("2-2", b"e")])
    assert events.kept_bytes == 3
    events.append("s", one, b"12345")  # larger than the budget: not even itself is kept
    assert events.replay("s", "1-1") is None
    assert events.replay("s", "1-2") == Replay(1, [])


def test_bytes_in_all_hold_at_the_limit_and_the_least_recent_stream_loses_first() -> None:
    events = store(max_event_bytes=4, max_session_event_bytes=4)
    a, b = events.open("a"), events.open("b")
    events.append("a", a, b"12")
    events.append("b", b, b"34")
    assert events.kept_bytes == 4
    events.append("b", b, b"5")  # "a" appended least recently: its oldest goes
    assert events.replay("a", "1-0") is None
    assert events.replay("b", "1-0") == Replay(1, [("1-1", b"34"), ("1-2", b"5")])
    assert events.kept_bytes == 3


def test_forgetting_a_session_drops_its_events() -> None:
    events = store()
    stream = events.open("s")
    events.append("s", stream, b"abc")
    other = events.open("t")
    events.append("t", other, b"d")
    events.forget("s")
    events.forget("s")  # idempotent
    assert events.replay("s", "1-0") is None
    assert events.kept_bytes == 1
    assert events.open("s") == 1  # a new session of the same id starts afresh


def test_the_standalone_stream_exists_from_its_first_event() -> None:
    events = store(max_session_event_streams=1)
    assert events.replay("s", "0-0") == Replay(0, [])  # a session that has nothing yet
    assert events.replay("s", "0-1") is None
    assert events.append("s", 0, b"a") == "0-1"
    posted = events.open("s")  # a POST's stream: the standalone one is never dropped whole
    assert events.replay("s", "0-0") == Replay(0, [("0-1", b"a")])
    assert events.replay("s", f"{posted}-0") == Replay(posted, [])
    fresh = store()
    fresh.open("t")
    assert fresh.replay("t", "0-0") == Replay(0, [])  # other streams, no standalone event yet
