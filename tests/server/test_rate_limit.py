"""Rate limiting: the built-in ``TokenBucket`` (exact refill and ``Retry-After``, the partition
bound failing closed), limiter resolution and the wire (429, ``Retry-After``, -31999)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

import mcpkit
from mcpkit import (
    AdmissionRequest,
    Admitted,
    Limits,
    RateLimitContext,
    RateLimitDecision,
    RateLimiter,
    RateLimitTarget,
    Revision,
    TokenBucket,
)
from mcpkit.errors import ConfigurationError
from mcpkit.testing import (
    TestClient,
    TestResponse,
    handshake_request,
    stateless_headers,
    stateless_request,
)

SECOND = 1_000_000_000
PATH = "/mcp"
DUAL = "/dual"
DENIED = {"code": -31999, "message": "Rate limit exceeded"}


class Clock:
    """A monotonic clock the test moves by hand, in nanoseconds."""

    def __init__(self) -> None:
        self.now = 5 * SECOND

    def __call__(self) -> int:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += round(seconds * SECOND)


@dataclass(frozen=True)
class Text:
    text: str


@mcpkit.endpoint(path=PATH, name="limited", version="1.0.0", revisions={Revision.V2026_07_28})
class Limited:
    @mcpkit.tool(name="echo")
    def echo(self, text: str) -> Text:
        return Text(text)

    @mcpkit.tool(name="costly", rate_limiter="costly")
    def costly(self) -> Text:
        return Text("done")

    @mcpkit.tool(name="boom")
    def boom(self) -> Text:
        raise RuntimeError("failed")


@mcpkit.endpoint(
    path=DUAL,
    name="dual",
    version="1.0.0",
    revisions={Revision.V2026_07_28, Revision.V2025_06_18},
    tool_rate_limiter="dual",
)
class Dual:
    @mcpkit.tool(name="echo")
    def echo(self, text: str) -> Text:
        return Text(text)


@mcpkit.endpoint(path="/plain", name="plain", version="1.0.0", revisions={Revision.V2026_07_28})
class Unlimited:
    @mcpkit.tool(name="echo")
    def echo(self, text: str) -> Text:
        return Text(text)


PLAIN = next(iter(mcpkit.Server(Unlimited).registry))


@dataclass
class Recording:
    """Records each context it is asked about and answers ``answer``."""

    answer: object = RateLimitDecision.allow()
    seen: list[RateLimitContext] = field(default_factory=list)

    def acquire(self, context: RateLimitContext) -> Any:
        self.seen.append(context)
        return self.answer


def limiters(**named: RateLimiter) -> dict[str, RateLimiter]:
    return {"costly": Recording(), "dual": Recording(), **named}


def call(name: str, arguments: dict[str, object] | None = None, id: int = 1) -> dict[str, object]:
    return stateless_request("tools/call", {"name": name, "arguments": arguments or {}}, id=id)


def post(client: TestClient, body: dict[str, object], path: str = PATH) -> TestResponse:
    method = str(body["method"])
    params = body.get("params")
    name = params.get("name") if isinstance(params, dict) and method == "tools/call" else None
    return client.post(path, body, headers=stateless_headers(method, name))


def expect_denial(response: TestResponse, retry_after: int, id: int | None = 1) -> None:
    """429 with exactly this ``Retry-After``; -31999 for request ``id``, no body without one."""
    assert response.status == 429, response.body
    assert response.header("retry-after") == str(retry_after)
    if id is None:
        assert response.body == b""
    else:
        assert json.loads(response.body) == {"jsonrpc": "2.0", "id": id, "error": DENIED}


def context(
    partition: str | None = None,
    target: RateLimitTarget = RateLimitTarget.TOOL,
    endpoint: mcpkit.Endpoint | None = None,
) -> RateLimitContext:
    served = endpoint if endpoint is not None else PLAIN
    return RateLimitContext(
        served, target, Revision.V2026_07_28, "tools/call", False, None, partition, "echo", None
    )


def server(**options: Any) -> mcpkit.Server:
    options.setdefault("rate_limiters", limiters())
    options.setdefault("tool_rate_limiter", Recording())
    return mcpkit.Server([Limited, Dual], **options)


# --- TokenBucket -----------------------------------------------------------------------------


def test_a_burst_gets_exactly_capacity_then_the_exact_retry_after() -> None:
    clock = Clock()
    bucket = TokenBucket(3, refill_tokens=1, refill_period_seconds=10, clock_ns=clock)
    asked = context()
    assert [bucket.acquire(asked).allowed for _ in range(3)] == [True] * 3
    assert bucket.acquire(asked) == RateLimitDecision.deny(10)
    clock.advance(9.5)  # half a second short of a token: rounded up to a whole second
    assert bucket.acquire(asked).retry_after == 1
    clock.advance(0.5)
    assert bucket.acquire(asked).allowed
    assert bucket.acquire(asked).retry_after == 10  # a denial charges nothing


def test_the_defaults_are_20_then_one_a_second() -> None:
    clock = Clock()
    bucket = TokenBucket(clock_ns=clock)
    asked = context()
    assert sum(bucket.acquire(asked).allowed for _ in range(25)) == 20
    clock.advance(0.2)
    assert bucket.acquire(asked).retry_after == 1
    clock.advance(0.8)
    assert bucket.acquire(asked).allowed
    assert repr(bucket) == "TokenBucket(capacity=20, refill_tokens=60, refill_period_seconds=60)"


def test_refill_is_exact_for_a_fractional_interval() -> None:
    # 3 tokens per 10 s: one every 3.333... s, refilled with no rounding drift
    clock = Clock()
    bucket = TokenBucket(3, refill_tokens=3, refill_period_seconds=10, clock_ns=clock)
    asked = context()
    assert [bucket.acquire(asked).allowed for _ in range(4)] == [True, True, True, False]
    assert bucket.acquire(asked).retry_after == 4  # 3.33 s, rounded up
    clock.now += 10 * SECOND - 1  # a nanosecond short of three tokens: two
    assert [bucket.acquire(asked).allowed for _ in range(3)] == [True, True, False]
    clock.now += 1
    assert bucket.acquire(asked).allowed


def test_an_idle_bucket_holds_no_more_than_capacity() -> None:
    clock = Clock()
    bucket = TokenBucket(2, refill_tokens=1, refill_period_seconds=1, clock_ns=clock)
    asked = context()
    clock.advance(3_600)
    assert [bucket.acquire(asked).allowed for _ in range(3)] == [True, True, False]


def test_partitions_are_endpoint_caller_and_target() -> None:
    clock = Clock()
    bucket = TokenBucket(1, refill_tokens=1, refill_period_seconds=60, clock_ns=clock)
    dual = next(
        iter(mcpkit.Server(Dual, tool_rate_limiter=Recording(), rate_limiters=limiters()).registry)
    )
    for asked in (
        context("alice"),
        context("bob"),
        context(None),
        context("alice", RateLimitTarget.REQUEST),
        context("alice", endpoint=dual),
    ):
        assert bucket.acquire(asked).allowed
        assert not bucket.acquire(asked).allowed
    assert len(bucket) == 5


def test_a_flood_of_distinct_callers_past_the_bound_fails_closed_in_bounded_memory() -> None:
    clock = Clock()
    limits = Limits(max_rate_limit_partitions=4)
    bucket = TokenBucket(
        2, refill_tokens=1, refill_period_seconds=30, limits=limits, clock_ns=clock
    )
    for caller in range(4):  # at the bound: every caller has its bucket
        assert bucket.acquire(context(f"c{caller}")).allowed
    assert len(bucket) == 4
    for caller in range(4, 10_004):  # past it: denied for one refill interval, none kept
        assert bucket.acquire(context(f"c{caller}")) == RateLimitDecision.deny(30)
    assert len(bucket) == 4
    assert bucket.acquire(context("c0")).allowed  # the callers held keep their buckets


def test_a_full_table_reclaims_an_idle_partition_found_by_a_rotating_probe() -> None:
    clock = Clock()
    limits = Limits(max_rate_limit_partitions=70)
    bucket = TokenBucket(2, refill_tokens=1, refill_period_seconds=1, limits=limits, clock_ns=clock)
    for caller in range(69):
        bucket.acquire(context(f"c{caller}"))
        bucket.acquire(context(f"c{caller}"))  # empty
    bucket.acquire(context("c69"))  # one token left
    clock.advance(1)  # only c69 is full again; it sits past the first 64 slots
    assert bucket.acquire(context("new")).retry_after == 1  # slots 0-63 probed: none idle
    assert bucket.acquire(context("newer")).allowed  # slots 64-69, 0-57: c69 taken over
    assert len(bucket) == 70
    assert [bucket.acquire(context("newer")).allowed for _ in range(2)] == [True, False]
    assert bucket.acquire(context("c69")).retry_after == 1  # its bucket went; none idle now


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"capacity": 0}, "capacity must be an int from 1 to 1000000"),
        ({"capacity": 1_000_001}, "capacity must be an int from 1 to 1000000"),
        ({"capacity": 2.0}, "capacity must be an int"),
        ({"refill_tokens": 0}, "refill_tokens must be an int from 1 to 1000000"),
        ({"refill_tokens": True}, "refill_tokens must be an int"),
        ({"refill_period_seconds": 0.0009}, "refill_period_seconds must be a number from 0.001"),
        ({"refill_period_seconds": 86_401}, "refill_period_seconds must be a number"),
        ({"refill_period_seconds": True}, "refill_period_seconds must be a number"),
        ({"refill_period_seconds": "1"}, "refill_period_seconds must be a number"),
        ({"limits": {}}, "limits must be a Limits"),
        ({"clock_ns": 3}, "clock_ns must be callable"),
    ],
)
def test_token_bucket_refuses_bad_settings(options: dict[str, Any], problem: str) -> None:
    with pytest.raises(ConfigurationError, match="TokenBucket: " + problem):
        TokenBucket(**options)


def test_token_bucket_accepts_its_range_ends() -> None:
    TokenBucket(1, refill_tokens=1, refill_period_seconds=0.001)
    TokenBucket(1_000_000, refill_tokens=1_000_000, refill_period_seconds=86_400)


@pytest.mark.parametrize("seconds", [0, -1, 2**31, 1.5, True])
def test_a_denial_names_a_whole_positive_number_of_seconds(seconds: Any) -> None:
    with pytest.raises(ConfigurationError, match="retry_after must be an int from 1"):
        RateLimitDecision.deny(seconds)


def test_decisions() -> None:
    assert RateLimitDecision.allow().allowed and RateLimitDecision.allow().retry_after is None
    assert not RateLimitDecision.deny(2**31 - 1).allowed


# --- resolution and settings -----------------------------------------------------------------


def test_without_limiters_nothing_is_charged_and_the_request_path_skips_limiting() -> None:
    plain = mcpkit.Server(Unlimited)
    assert plain.engine.deployment.routes["/plain"].limiting is None


def test_every_tool_resolves_to_its_own_its_endpoints_or_the_fallback() -> None:
    fallback = Recording()
    named = limiters()
    built = server(rate_limiters=named, tool_rate_limiter=fallback)
    routes = built.engine.deployment.routes
    modern = Revision.V2026_07_28
    limiting = routes[PATH].limiting
    assert limiting is not None and limiting.request is None
    assert limiting.tools[modern] == {"echo": fallback, "costly": named["costly"], "boom": fallback}
    dual = routes[DUAL].limiting
    assert dual is not None
    assert dual.tools[modern] == {"echo": named["dual"]}
    assert dual.tools[Revision.V2025_06_18] == {"echo": named["dual"]}


def test_a_fallback_alone_limits_every_tool_and_a_request_limiter_alone_every_message() -> None:
    alone = mcpkit.Server(Unlimited, tool_rate_limiter=TokenBucket())
    limiting = alone.engine.deployment.routes["/plain"].limiting
    assert limiting is not None and set(limiting.tools[Revision.V2026_07_28]) == {"echo"}
    requests = mcpkit.Server(Unlimited, request_rate_limiter=TokenBucket())
    limiting = requests.engine.deployment.routes["/plain"].limiting
    assert limiting is not None and limiting.request is not None
    assert limiting.tools[Revision.V2026_07_28] == {}


def test_limiters_may_be_given_by_name() -> None:
    bucket = TokenBucket()
    built = mcpkit.Server(
        Unlimited,
        rate_limiters={"shared": bucket},
        tool_rate_limiter="shared",
        request_rate_limiter="shared",
    )
    limiting = built.engine.deployment.routes["/plain"].limiting
    assert limiting is not None and limiting.request is bucket
    assert limiting.tools[Revision.V2026_07_28] == {"echo": bucket}


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"rate_limiters": {}}, "endpoint /mcp: a tool's rate_limiter names a limiter the server"),
        ({"rate_limiters": {"costly": Recording()}}, "endpoint /dual: tool_rate_limiter names a"),
        ({"tool_rate_limiter": None}, "endpoint /mcp: a tool limiter is named but the server has"),
        ({"rate_limiters": [("costly", Recording())]}, "rate_limiters must be a dict of names"),
        ({"rate_limiters": {"": Recording()}}, "rate_limiters: each name must be a non-empty str"),
        ({"rate_limiters": {1: Recording()}}, "rate_limiters: each name must be a non-empty str"),
        ({"rate_limiters": {"x": TokenBucket}}, r"rate_limiters\['x'\] must be a limiter instance"),
        ({"rate_limiters": {"x": object()}}, r"rate_limiters\['x'\] must be a RateLimiter"),
        ({"tool_rate_limiter": "nope"}, "tool_rate_limiter names a limiter that rate_limiters"),
        ({"request_rate_limiter": 3}, "request_rate_limiter must be a RateLimiter"),
    ],
)
def test_limiter_settings_are_checked_when_the_server_is_built(
    options: dict[str, Any], problem: str
) -> None:
    with pytest.raises(ConfigurationError, match=problem):
        server(**options)


def test_a_swapped_in_endpoint_is_resolved_too() -> None:
    built = server()

    @mcpkit.endpoint(path=PATH, name="limited", version="1.0.0", revisions={Revision.V2026_07_28})
    class Renamed:
        @mcpkit.tool(name="echo", rate_limiter="missing")
        def echo(self, text: str) -> Text:
            return Text(text)

    with pytest.raises(ConfigurationError, match="names a limiter the server does not have"):
        built.swap(Renamed)


# --- on the wire -------------------------------------------------------------------------------


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def burst(clock: Clock) -> Iterator[TestClient]:
    bucket = TokenBucket(2, refill_tokens=1, refill_period_seconds=30, clock_ns=clock)
    with TestClient(server(tool_rate_limiter=bucket)) as client:
        yield client


def test_a_burst_past_capacity_gets_429_with_the_exact_retry_after(
    burst: TestClient, clock: Clock
) -> None:
    assert [post(burst, call("echo", {"text": "x"}, id)).status for id in (1, 2)] == [200, 200]
    expect_denial(post(burst, call("echo", {"text": "x"}, 3)), 30, 3)
    clock.advance(29.001)
    expect_denial(post(burst, call("echo", {"text": "x"}, 4)), 1, 4)
    clock.advance(0.999)
    assert post(burst, call("echo", {"text": "x"})).status == 200
    assert post(burst, call("boom")).status == 429  # the bucket is per caller, not per tool


def test_an_unknown_tool_is_not_charged(burst: TestClient) -> None:
    for _ in range(3):
        assert post(burst, call("nope")).status == 400
    assert post(burst, call("echo", {"text": "x"})).status == 200


def test_exactly_one_tool_limiter_per_call_and_no_refunds() -> None:
    fallback, named = Recording(), limiters()
    with TestClient(server(rate_limiters=named, tool_rate_limiter=fallback)) as client:
        assert post(client, call("costly")).status == 200
        assert post(client, call("boom")).status == 500  # failed: its charge stays
        assert post(client, call("echo", {"text": "hi"}), DUAL).status == 200
        assert post(client, stateless_request("tools/list")).status == 200
    costly, dual = named["costly"], named["dual"]
    assert isinstance(costly, Recording) and isinstance(dual, Recording)
    assert [seen.tool for seen in costly.seen] == ["costly"]
    assert [seen.tool for seen in fallback.seen] == ["boom"]
    assert [seen.endpoint.path for seen in dual.seen] == [DUAL]
    (seen,) = costly.seen
    assert (seen.target, seen.method, seen.revision) == (
        RateLimitTarget.TOOL,
        "tools/call",
        Revision.V2026_07_28,
    )
    assert seen.partition is None and seen.http_request is not None


def test_the_request_limiter_charges_every_admitted_message_once_and_first() -> None:
    request, tool = Recording(), Recording()

    def admit(asked: AdmissionRequest) -> Admitted:
        return Admitted(identity="alice", authorization="tenant-a")

    options = {"request_rate_limiter": request, "tool_rate_limiter": tool, "admission": admit}
    with TestClient(server(**options)) as client:
        assert post(client, call("echo", {"text": "hi"})).status == 200
        assert post(client, stateless_request("notifications/x", id=None)).status == 202
        request.answer = RateLimitDecision.deny(7)
        expect_denial(post(client, call("echo", {"text": "hi"}, 9)), 7, 9)
        expect_denial(post(client, stateless_request("notifications/x", id=None)), 7, None)
    assert [(seen.method, seen.notification) for seen in request.seen] == [
        ("tools/call", False),
        ("notifications/x", True),
        ("tools/call", False),
        ("notifications/x", True),
    ]
    assert {(seen.target, seen.identity, seen.partition) for seen in request.seen} == {
        (RateLimitTarget.REQUEST, "alice", "tenant-a")
    }
    assert len(tool.seen) == 1  # the request limiter's denial came first: no tool charge


def test_a_2025_denial_keeps_its_429() -> None:
    dual = Recording(RateLimitDecision.deny(3))
    with TestClient(server(rate_limiters=limiters(dual=dual))) as client:
        body = handshake_request("tools/call", {"name": "echo", "arguments": {"text": "x"}})
        response = client.post(DUAL, body, headers={"MCP-Protocol-Version": "2025-06-18"})
    expect_denial(response, 3)


class Raising:
    def acquire(self, context: RateLimitContext) -> RateLimitDecision:
        raise RuntimeError("redis is down")


class Slow:
    async def acquire(self, context: RateLimitContext) -> RateLimitDecision:
        await asyncio.sleep(10)
        return RateLimitDecision.allow()  # pragma: no cover - cut off by the timeout


class Async:
    def __init__(self, answer: RateLimitDecision) -> None:
        self.answer = answer

    async def acquire(self, context: RateLimitContext) -> RateLimitDecision:
        await asyncio.sleep(0)
        return self.answer


@pytest.mark.parametrize(
    "limiter",
    [Raising(), Recording(None), Recording(True), Slow()],
    ids=["raises", "returns-none", "returns-other", "too-slow"],
)
def test_a_failing_limiter_fails_closed(limiter: RateLimiter, caplog: Any) -> None:
    limits = Limits(rate_limit_check_timeout_seconds=0.01)
    with TestClient(server(tool_rate_limiter=limiter, limits=limits)) as client:
        expect_denial(post(client, call("echo", {"text": "x"})), 1)
    assert "redis" not in caplog.text  # the exception's type, never its message


def test_an_async_limiter_is_awaited() -> None:
    with TestClient(server(tool_rate_limiter=Async(RateLimitDecision.allow()))) as client:
        assert post(client, call("echo", {"text": "x"})).status == 200
    with TestClient(server(tool_rate_limiter=Async(RateLimitDecision.deny(5)))) as client:
        expect_denial(post(client, call("echo", {"text": "x"})), 5)
