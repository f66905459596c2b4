"""``RedisTokenBucket`` against a real ``redis-server`` (``tests/redis_server``): the exact
refill and ``Retry-After`` of ``TokenBucket``, one budget shared by several nodes, atomicity,
bounded and expiring keys, what happens while Redis is down or hangs, and the wire (429)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import os
import re
import signal
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from typing import Any, TypeVar

import pytest
import redis.asyncio

import mcpkit
from mcpkit import (
    Limits,
    RateLimitContext,
    RateLimitDecision,
    RateLimiter,
    RateLimitTarget,
    RedisTokenBucket,
    Revision,
    TokenBucket,
)
from mcpkit.errors import ConfigurationError
from mcpkit.server import _redis_rate_limit
from mcpkit.testing import TestClient, TestResponse, stateless_headers, stateless_request

from ..redis_server import RedisServer, free_port

T = TypeVar("T")
PATH = "/mcp"
SECOND = 1_000_000  # Redis's clock, as the bucket keeps it: microseconds
DENIED = {"code": -31999, "message": "Rate limit exceeded"}
HEX_KEY = re.compile(r"mcpkit:rl:[0-9a-f]{64}")


@mcpkit.endpoint(path=PATH, name="limited", version="1.0.0", revisions={Revision.V2026_07_28})
class Limited:
    @mcpkit.tool(name="echo")
    def echo(self, text: str) -> str:
        return text


@mcpkit.endpoint(path="/other", name="other", version="1.0.0", revisions={Revision.V2026_07_28})
class Other:
    @mcpkit.tool(name="echo")
    def echo(self, text: str) -> str:
        return text


LIMITED, OTHER = mcpkit.Server([Limited, Other]).registry


def context(
    partition: str | None = None,
    target: RateLimitTarget = RateLimitTarget.TOOL,
    endpoint: mcpkit.Endpoint = LIMITED,
) -> RateLimitContext:
    return RateLimitContext(
        endpoint, target, Revision.V2026_07_28, "tools/call", False, None, partition, "echo", None
    )


def run(scenario: Callable[[], Coroutine[Any, Any, T]]) -> T:
    return asyncio.run(scenario())


async def decisions(bucket: RedisTokenBucket, count: int, asked: RateLimitContext) -> list[bool]:
    """Whether each of ``count`` calls, one after another, was allowed."""
    return [(await bucket.acquire(asked)).allowed for _ in range(count)]


class Inspect:
    """A plain client of its own, to look at (and age) what the buckets keep in Redis."""

    def __init__(self, server: RedisServer) -> None:
        self.redis = redis.asyncio.Redis.from_url(server.url, decode_responses=True)

    async def age(self, key: str, seconds: float) -> None:
        """Move the bucket's last refill ``seconds`` into the past (negative: the future)."""
        await self.redis.hincrby(key, "s", -round(seconds * SECOND))

    async def keys(self) -> list[str]:
        held = await self.redis.keys("*")
        return sorted(key.decode() if isinstance(key, bytes) else key for key in held)

    async def __aenter__(self) -> Inspect:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.redis.aclose()


@pytest.fixture
def retry_soon(monkeypatch: pytest.MonkeyPatch) -> None:
    """Redis is tried again 0.3 s after a failure rather than a second (tests run faster)."""
    monkeypatch.setattr(_redis_rate_limit, "_RETRY_SECONDS", 0.3)


# --- the bucket, as TokenBucket's ------------------------------------------------------------


def test_a_burst_gets_exactly_capacity_then_the_exact_retry_after(
    redis_server: RedisServer,
) -> None:
    async def scenario() -> None:
        bucket = RedisTokenBucket(
            redis_server.url, capacity=3, refill_tokens=1, refill_period_seconds=10
        )
        asked = context()
        key = bucket.key(asked)
        async with Inspect(redis_server) as look:
            assert await decisions(bucket, 3, asked) == [True] * 3
            assert await bucket.acquire(asked) == RateLimitDecision.deny(10)
            await look.age(key, 9.5)  # half a second short of a token: rounded up
            assert (await bucket.acquire(asked)).retry_after == 1
            await look.age(key, 0.5)
            assert (await bucket.acquire(asked)).allowed
            assert (await bucket.acquire(asked)).retry_after == 10  # a denial charges nothing
        await bucket.aclose()

    run(scenario)


def test_refill_is_exact_for_a_fractional_interval(redis_server: RedisServer) -> None:
    # 3 tokens per 10 s: one every 3.333... s, refilled with no rounding drift
    async def scenario() -> None:
        bucket = RedisTokenBucket(
            redis_server.url, capacity=3, refill_tokens=3, refill_period_seconds=10
        )
        asked = context()
        key = bucket.key(asked)
        async with Inspect(redis_server) as look:
            assert await decisions(bucket, 4, asked) == [True, True, True, False]
            assert (await bucket.acquire(asked)).retry_after == 4  # 3.33 s, rounded up
            # Redis's clock runs on between calls (by far less than the margins here)
            await look.age(key, 9.5)  # 2.85 tokens: two, and most of a third kept
            assert await decisions(bucket, 3, asked) == [True, True, False]
            assert (await bucket.acquire(asked)).retry_after == 1  # 0.5 s to the third
            await look.age(key, 2)  # 0.6 of a token more: the kept 0.85 makes it whole
            assert await decisions(bucket, 2, asked) == [True, False]
        await bucket.aclose()

    run(scenario)


def test_an_idle_bucket_holds_no_more_than_capacity(redis_server: RedisServer) -> None:
    async def scenario() -> None:
        bucket = RedisTokenBucket(
            redis_server.url, capacity=2, refill_tokens=1, refill_period_seconds=1
        )
        asked = context()
        async with Inspect(redis_server) as look:
            assert await decisions(bucket, 1, asked) == [True]
            await look.age(bucket.key(asked), 3_600)
            assert await decisions(bucket, 3, asked) == [True, True, False]
        await bucket.aclose()

    run(scenario)


def test_a_clock_that_went_back_refills_nothing(redis_server: RedisServer) -> None:
    async def scenario() -> None:
        bucket = RedisTokenBucket(
            redis_server.url, capacity=1, refill_tokens=1, refill_period_seconds=1
        )
        asked = context()
        async with Inspect(redis_server) as look:
            assert await decisions(bucket, 1, asked) == [True]
            await look.age(bucket.key(asked), -60)  # the last refill is a minute ahead
            assert await bucket.acquire(asked) == RateLimitDecision.deny(1)
            await look.age(bucket.key(asked), 1)  # a second after the (reset) stamp
            assert await decisions(bucket, 2, asked) == [True, False]
        await bucket.aclose()

    run(scenario)


def test_tokens_come_back_as_time_passes(redis_server: RedisServer) -> None:
    async def scenario() -> None:
        bucket = RedisTokenBucket(
            redis_server.url, capacity=2, refill_tokens=1, refill_period_seconds=0.5
        )
        asked = context()
        assert await decisions(bucket, 3, asked) == [True, True, False]
        assert (await bucket.acquire(asked)).retry_after == 1  # 0.5 s, rounded up
        await asyncio.sleep(0.55)
        assert await decisions(bucket, 2, asked) == [True, False]
        await asyncio.sleep(1.05)  # two more, and no more than capacity
        assert await decisions(bucket, 3, asked) == [True, True, False]
        await bucket.aclose()

    run(scenario)


def test_the_defaults_are_tokenbuckets(redis_server: RedisServer) -> None:
    async def scenario() -> None:
        bucket = RedisTokenBucket(redis_server.url)
        assert sum(await decisions(bucket, 25, context())) == 20
        assert (await bucket.acquire(context())).retry_after == 1
        await bucket.aclose()
        assert repr(bucket) == (
            f"RedisTokenBucket('{redis_server.url}', capacity=20, refill_tokens=60, "
            "refill_period_seconds=60, prefix='mcpkit:rl:')"
        )

    run(scenario)


# --- shared, atomic, bounded ---------------------------------------------------------------------


def test_two_nodes_share_one_budget(redis_server: RedisServer) -> None:
    def node() -> RedisTokenBucket:
        return RedisTokenBucket(
            redis_server.url, capacity=4, refill_tokens=1, refill_period_seconds=60
        )

    async def scenario() -> None:
        first, second = node(), node()
        asked = context("alice")
        seen = [(await (first if n % 2 else second).acquire(asked)).allowed for n in range(8)]
        assert seen == [True] * 4 + [False] * 4
        assert await second.acquire(asked) == RateLimitDecision.deny(60)
        assert await first.acquire(context("bob")) == RateLimitDecision.allow()
        await first.aclose()
        await second.aclose()

    run(scenario)


def test_a_node_on_another_event_loop_shares_it_too(redis_server: RedisServer) -> None:
    bucket = RedisTokenBucket(
        redis_server.url, capacity=3, refill_tokens=1, refill_period_seconds=60
    )

    async def twice() -> list[bool]:
        seen = await decisions(bucket, 2, context())
        await bucket.aclose()
        return seen

    assert run(twice) == [True, True]
    assert run(twice) == [True, False]  # a new loop, a new client, the same bucket


def test_fifty_concurrent_calls_against_ten_tokens_allow_exactly_ten(
    redis_server: RedisServer,
) -> None:
    async def scenario() -> None:
        url = redis_server.url
        nodes = [
            RedisTokenBucket(url, capacity=10, refill_tokens=1, refill_period_seconds=60)
            for _ in range(5)
        ]
        asked = context("alice")
        answers = await asyncio.gather(*(nodes[n % 5].acquire(asked) for n in range(50)))
        assert sum(answer.allowed for answer in answers) == 10
        assert {answer.retry_after for answer in answers if not answer.allowed} == {60}
        for node in nodes:
            await node.aclose()

    run(scenario)


def test_partitions_are_endpoint_caller_and_target(redis_server: RedisServer) -> None:
    async def scenario() -> None:
        bucket = RedisTokenBucket(
            redis_server.url, capacity=1, refill_tokens=1, refill_period_seconds=60
        )
        partitions = (
            context("alice"),
            context("bob"),
            context(None),
            context("None"),
            context("alice", RateLimitTarget.REQUEST),
            context("alice", endpoint=OTHER),
        )
        for asked in partitions:
            assert await decisions(bucket, 2, asked) == [True, False]
        async with Inspect(redis_server) as look:
            assert len(await look.keys()) == len(partitions)
        await bucket.aclose()

    run(scenario)


def test_keys_are_fixed_length_digests_that_expire_after_a_full_refill(
    redis_server: RedisServer,
) -> None:
    caller = "alice@example.com"

    async def scenario() -> None:
        bucket = RedisTokenBucket(
            redis_server.url, capacity=2, refill_tokens=1, refill_period_seconds=30
        )
        brief = RedisTokenBucket(
            redis_server.url, capacity=1, refill_tokens=1, refill_period_seconds=0.05
        )
        async with Inspect(redis_server) as look:
            await bucket.acquire(context(caller))
            (key,) = await look.keys()
            assert key == bucket.key(context(caller))
            assert HEX_KEY.fullmatch(key) and caller not in key
            assert 59_000 < await look.redis.pttl(key) <= 60_000  # empty to full: 60 s
            assert sorted(await look.redis.hkeys(key)) == ["f", "s", "t"]
            await brief.acquire(context(caller))  # its own key: other settings
            assert len(await look.keys()) == 2
            await asyncio.sleep(0.15)  # its full refill is 50 ms: gone
            assert await look.keys() == [key]
        await bucket.aclose()
        await brief.aclose()

    run(scenario)


def test_settings_and_prefix_name_the_bucket() -> None:
    def bucket(**options: Any) -> RedisTokenBucket:
        return RedisTokenBucket("redis://127.0.0.1:1", **options)

    asked = context("alice")
    same = bucket().key(asked)
    assert bucket(refill_tokens=60, refill_period_seconds=60.0).key(asked) == same
    assert bucket(refill_tokens=1, refill_period_seconds=1).key(asked) == same  # lowest terms
    assert bucket(capacity=21).key(asked) != same
    assert bucket(refill_tokens=61).key(asked) != same
    assert bucket(prefix="app:").key(asked) == "app:" + same.removeprefix("mcpkit:rl:")
    assert bucket().key(context("alice\ud800")) != same  # any str is a partition


# --- when Redis fails --------------------------------------------------------------------------


class Async:
    """An ``async`` fallback."""

    def __init__(self, answer: RateLimitDecision) -> None:
        self.answer = answer

    async def acquire(self, context: RateLimitContext) -> RateLimitDecision:
        await asyncio.sleep(0)
        return self.answer


class Raising:
    def acquire(self, context: RateLimitContext) -> RateLimitDecision:
        raise RuntimeError("broken")


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == "mcpkit.server"]


def test_while_redis_is_down_the_fallback_decides_and_it_is_logged_once(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture, retry_soon: None
) -> None:
    caplog.set_level(logging.INFO, "mcpkit.server")

    async def scenario() -> None:
        local = TokenBucket(2, refill_tokens=1, refill_period_seconds=30)
        bucket = RedisTokenBucket(
            redis_server.url, capacity=3, refill_tokens=1, refill_period_seconds=60,
            fallback=local,
        )  # fmt: skip
        asked = context("alice")
        assert await decisions(bucket, 1, asked) == [True]
        redis_server.stop()
        started = time.monotonic()
        assert await decisions(bucket, 3, asked) == [True, True, False]  # the local bucket
        await asyncio.sleep(0.35)  # past the pause: Redis is tried again, and fails again
        assert await bucket.acquire(asked) == RateLimitDecision.deny(30)
        assert time.monotonic() - started < 1.0
        assert len(warnings(caplog)) == 1
        (down,) = warnings(caplog)
        assert "cannot use Redis (ConnectionError)" in down and "each node alone" in down

        redis_server.start()  # empty again: no persistence
        assert await bucket.acquire(asked) == RateLimitDecision.deny(30)  # still paused
        await asyncio.sleep(0.35)
        assert await decisions(bucket, 4, asked) == [True] * 3 + [False]  # shared again
        assert warnings(caplog)[1:] == ["mcpkit: RedisTokenBucket reaches Redis again"]
        await bucket.aclose()

    run(scenario)


def test_without_a_fallback_redis_down_is_a_fixed_denial(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_redis_rate_limit, "_RETRY_SECONDS", 0.0)  # every call tries Redis
    url = f"redis://user:s3cret@127.0.0.1:{free_port()}/0"  # nothing listens there

    async def scenario() -> None:
        bucket = RedisTokenBucket(url, capacity=3)
        started = time.monotonic()
        for _ in range(3):
            assert await bucket.acquire(context()) == RateLimitDecision.deny(1)
        assert time.monotonic() - started < 1.0
        await bucket.aclose()
        assert "s3cret" not in repr(bucket) and "user:***@" in repr(bucket)

    run(scenario)
    (down,) = warnings(caplog)
    assert down.endswith("denying every call until it is back")
    assert "s3cret" not in caplog.text and "127.0.0.1" not in caplog.text


def test_the_pool_s_connections_work_again_once_redis_has_restarted(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Connections Redis closed while it was away are replaced, not failed: under RESP3 a
    recent client handed each one out unchecked, and a call that drew one was denied (and
    Redis left alone for another second)."""

    async def scenario() -> list[RateLimitDecision]:
        bucket = RedisTokenBucket(redis_server.url, capacity=20)
        asked = context()
        await asyncio.gather(*(bucket.acquire(asked) for _ in range(5)))  # five connections
        await asyncio.to_thread(redis_server.stop)  # the loop runs on: it sees them closed
        await asyncio.sleep(0.1)
        await asyncio.to_thread(redis_server.start)
        answers = await asyncio.gather(*(bucket.acquire(asked) for _ in range(5)))
        await bucket.aclose()
        return answers

    assert run(scenario) == [RateLimitDecision.allow()] * 5
    assert warnings(caplog) == []


def test_a_hung_redis_is_given_up_on_within_half_the_check_timeout(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    limits = Limits(rate_limit_check_timeout_seconds=0.2)

    async def scenario() -> None:
        bucket = RedisTokenBucket(
            redis_server.url, capacity=3, fallback=Async(RateLimitDecision.deny(7)),
            limits=limits,
        )  # fmt: skip
        assert await decisions(bucket, 1, context()) == [True]
        pid = redis_server.pid
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)  # accepts connections, answers nothing
        try:
            started = time.monotonic()
            assert await bucket.acquire(context()) == RateLimitDecision.deny(7)
            assert 0.09 < time.monotonic() - started < 0.2
        finally:
            os.kill(pid, signal.SIGCONT)
        await bucket.aclose()

    run(scenario)
    (down,) = warnings(caplog)
    assert "Timeout" in down


@pytest.mark.parametrize(
    "fallback",
    [Raising(), Async(RateLimitDecision.allow())],
    ids=["raising", "async"],
)
def test_the_fallback_may_be_async_and_its_failure_is_a_denial(
    fallback: RateLimiter, caplog: pytest.LogCaptureFixture
) -> None:
    bucket = RedisTokenBucket(f"redis://127.0.0.1:{free_port()}", fallback=fallback)
    answer = run(lambda: bucket.acquire(context()))
    if isinstance(fallback, Raising):
        assert answer == RateLimitDecision.deny(1)
        assert "fallback failed with RuntimeError" in caplog.text
        assert "broken" not in caplog.text
    else:
        assert answer.allowed


def test_a_script_flushed_from_redis_is_loaded_again(redis_server: RedisServer) -> None:
    async def scenario() -> None:
        async with Inspect(redis_server) as look:
            bucket = RedisTokenBucket(
                redis_server.url, capacity=3, refill_tokens=1, refill_period_seconds=60,
                client=look.redis,
            )  # fmt: skip
            assert await decisions(bucket, 1, context()) == [True]  # NOSCRIPT, then EVAL
            assert await decisions(bucket, 1, context()) == [True]  # EVALSHA
            await look.redis.script_flush()
            assert await decisions(bucket, 2, context()) == [True, False]
            await bucket.aclose()  # a given client stays open: it is the caller's
            assert await look.redis.ping()

    run(scenario)


# --- through a server --------------------------------------------------------------------------


def call(id: int) -> dict[str, object]:
    return stateless_request("tools/call", {"name": "echo", "arguments": {"text": "x"}}, id=id)


def post(client: TestClient, id: int) -> TestResponse:
    return client.post(PATH, call(id), headers=stateless_headers("tools/call", "echo"))


def on_loop(client: TestClient, coroutine: Awaitable[T]) -> T:
    """Run ``coroutine`` on the server's loop (where the bucket's client lives)."""

    async def wrapped() -> T:
        return await coroutine

    return asyncio.run_coroutine_threadsafe(wrapped(), client._running_loop()).result(10)


@pytest.fixture
def two_nodes(redis_server: RedisServer) -> Iterator[list[tuple[TestClient, RedisTokenBucket]]]:
    nodes: list[tuple[TestClient, RedisTokenBucket]] = []
    for _ in range(2):
        bucket = RedisTokenBucket(
            redis_server.url, capacity=3, refill_tokens=1, refill_period_seconds=30
        )
        client = TestClient(mcpkit.Server(Limited, tool_rate_limiter=bucket))
        nodes.append((client.__enter__(), bucket))
    try:
        yield nodes
    finally:
        for client, bucket in nodes:
            on_loop(client, bucket.aclose())
            client.__exit__(None, None, None)


def test_a_burst_past_capacity_across_two_servers_gets_429_with_retry_after(
    two_nodes: list[tuple[TestClient, RedisTokenBucket]],
) -> None:
    (first, _), (second, _) = two_nodes
    assert [post(node, id).status for id, node in enumerate([first, second, first], 1)] == [200] * 3
    for id, node in enumerate([second, first], 4):
        response = post(node, id)
        assert response.status == 429, response.body
        assert response.header("retry-after") == "30"
        assert json.loads(response.body) == {"jsonrpc": "2.0", "id": id, "error": DENIED}


# --- settings ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "options", "problem"),
    [
        ("redis://h", {"capacity": 0}, "capacity must be an int from 1 to 1000000"),
        ("redis://h", {"capacity": 1_000_001}, "capacity must be an int from 1 to 1000000"),
        ("redis://h", {"capacity": 2.0}, "capacity must be an int"),
        ("redis://h", {"refill_tokens": 0}, "refill_tokens must be an int from 1 to 1000000"),
        ("redis://h", {"refill_tokens": True}, "refill_tokens must be an int"),
        ("redis://h", {"refill_period_seconds": 0.0009}, "refill_period_seconds must be a num"),
        ("redis://h", {"refill_period_seconds": 86_401}, "refill_period_seconds must be a num"),
        ("redis://h", {"refill_period_seconds": True}, "refill_period_seconds must be a num"),
        ("redis://h", {"refill_period_seconds": "1"}, "refill_period_seconds must be a num"),
        (
            "redis://h",
            {"capacity": 1, "refill_tokens": 999_983, "refill_period_seconds": 86_400},
            "refill_tokens per refill_period_seconds is too fine for Redis's exact",
        ),
        ("redis://h", {"prefix": b"rl:"}, "prefix must be a str"),
        ("redis://h", {"prefix": "p" * 257}, "prefix must be a str of at most 256"),
        ("redis://h", {"fallback": TokenBucket}, "fallback must be a RateLimiter instance"),
        ("redis://h", {"fallback": object()}, "fallback must be a RateLimiter instance"),
        ("redis://h", {"limits": {}}, "limits must be a Limits"),
        ("redis://h", {"client": object()}, "client must be a redis.asyncio client"),
        (b"redis://h", {}, "url must be a str"),
        ("http://u:s3cret@h", {}, "url must be a redis://"),
        ("localhost:6379", {}, "url must be a redis://"),
        ("redis://u:s3cret@h:port/0", {}, "url must be a redis://"),
        ("redis://u:s3cret@h:6379/zero", {}, "url must be a redis://"),
        ("unix://", {}, "url must be a redis://"),
    ],
)
def test_bad_settings_are_refused(url: Any, options: dict[str, Any], problem: str) -> None:
    with pytest.raises(ConfigurationError, match="RedisTokenBucket: " + re.escape(problem)) as e:
        RedisTokenBucket(url, **options)
    assert "s3cret" not in str(e.value)


def test_the_range_ends_and_url_forms_are_accepted() -> None:
    RedisTokenBucket("redis://h", capacity=1, refill_tokens=1, refill_period_seconds=0.001)
    RedisTokenBucket(
        "redis://h", capacity=1_000_000, refill_tokens=1_000_000, refill_period_seconds=86_400
    )
    shown = {
        "redis://": "redis://",
        "rediss://u:p%40ss@h:6380/2": "rediss://u:***@h:6380/2",
        "redis://u@[::1]:6379": "redis://u@[::1]:6379",
        "redis://:pw@h/": "redis://:***@h/",
        "unix:///run/redis.sock?db=1&password=pw": "unix:///run/redis.sock?db=1&password=%2A%2A%2A",
    }
    for url, masked in shown.items():
        assert repr(RedisTokenBucket(url)).startswith(f"RedisTokenBucket({masked!r}, ")


def test_the_redis_client_must_be_installed_unless_one_is_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, package=None: None)
    with pytest.raises(ConfigurationError, match=r"pip install 'mcpkit\[redis\]'"):
        RedisTokenBucket("redis://h")
    given = redis.asyncio.Redis()
    RedisTokenBucket("redis://h", client=given)


def test_it_is_exported_and_closes_without_having_connected() -> None:
    assert mcpkit.RedisTokenBucket is mcpkit.server.RedisTokenBucket is RedisTokenBucket
    run(RedisTokenBucket("redis://h").aclose)
