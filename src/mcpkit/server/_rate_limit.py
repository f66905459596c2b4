"""Rate limiting: the ``RateLimiter`` interface, the built-in ``TokenBucket`` and how a server
charges them.

Two limiters may be charged for a message, after admission and in this order; the first
denial wins and nothing already charged is refunded (not on a later denial, a failure, a
timeout, a cancellation or a lost client):

* the server's optional **request limiter** (``Server(request_rate_limiter=...)``), once for
  every admitted request and notification;
* exactly one **tool limiter** for each ``tools/call`` of a tool the endpoint serves: the
  tool's own (``rate_limiter=``), else its endpoint's (``tool_rate_limiter=``), else the
  server's fallback (``Server(tool_rate_limiter=...)``).  Once any tool or endpoint names a
  limiter the fallback is required, so that resolution is total: a tool added later cannot
  escape limiting by being forgotten.  With no limiter configured at all nothing is charged
  and the request path does no work for it (no default bucket: without admission every
  caller shares the anonymous partition, so one would throttle a local server as a whole).

A denied request is 429 with ``Retry-After`` and the JSON-RPC error -31999
(``RateLimited``); a denied notification is 429 with no body.  A limiter that raises, returns
anything but a ``RateLimitDecision`` or (``async``) takes over
``limits.rate_limit_check_timeout_seconds`` is a denial with ``Retry-After: 1``: limiting
fails closed.

Names (``rate_limiters={"name": limiter}``) are resolved when the server is built (and when
an endpoint is swapped in); an unknown name is a ``ConfigurationError`` then, never a
request-time surprise.
"""

from __future__ import annotations

import asyncio
import enum
import inspect
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Final, Protocol, TypeAlias, cast

from mcpkit.errors import ConfigurationError, RateLimited
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.model import Endpoint, Revision
from mcpkit.protocol import Envelope, MessageKind, error_message, wire_error
from mcpkit.server._http import HttpRequest
from mcpkit.server._policy import Admitted

__all__ = [
    "NO_RATE_LIMITS",
    "LimiterChoice",
    "RateLimitContext",
    "RateLimitDecision",
    "RateLimitTarget",
    "RateLimiter",
    "RateLimiting",
    "RateLimits",
    "TokenBucket",
    "denial",
]

log = logging.getLogger("mcpkit.server")

_TOOLS_CALL: Final = "tools/call"
_NS: Final = 1_000_000_000
_PROBES: Final = 64
"""Slots a new partition looks at for a fully refilled bucket to take over when the table is
full: enough to find an idle one under churn, few enough to keep the denial cheap."""
_MAX_RETRY_AFTER: Final = 2**31 - 1


class RateLimitTarget(enum.Enum):
    """What a limiter is charged for: any admitted message, or one ``tools/call``."""

    REQUEST = "request"
    TOOL = "tool"


@dataclass(frozen=True, slots=True)
class RateLimitContext:
    """What a limiter decides on.

    * ``endpoint``, ``revision``, ``method`` and ``notification``: the message;
    * ``target``: ``REQUEST`` for the request limiter, ``TOOL`` for a tool limiter, with the
      tool's name in ``tool`` (``None`` for ``REQUEST``);
    * ``identity`` and ``partition``: admission's ``Admitted.identity`` and
      ``Admitted.authorization`` (``None``: the shared anonymous partition);
    * ``http_request``: the request as it arrived (``None`` on stdio).  Its ``client`` is the
      TCP peer's address, which behind a proxy is the proxy's; with
      ``Server(trusted_proxies=[...])`` a trusted proxy's ``X-Forwarded-For`` names it
      instead.  Forwarded headers are otherwise never believed.
    """

    endpoint: Endpoint
    target: RateLimitTarget
    revision: Revision
    method: str
    notification: bool
    identity: object
    partition: str | None
    tool: str | None
    http_request: HttpRequest | None


@dataclass(frozen=True, slots=True)
class RateLimitDecision:
    """A limiter's answer: ``RateLimitDecision.allow()`` or ``RateLimitDecision.deny(n)``,
    ``n`` the whole seconds until a retry can succeed (``Retry-After``)."""

    retry_after: int | None = None
    """``None`` when allowed."""

    def __post_init__(self) -> None:
        seconds = self.retry_after
        if seconds is not None and (
            type(seconds) is not int or not 1 <= seconds <= _MAX_RETRY_AFTER
        ):
            raise ConfigurationError(
                "RateLimitDecision: retry_after must be an int from 1 to 2147483647 (seconds)"
            )

    @property
    def allowed(self) -> bool:
        return self.retry_after is None

    @staticmethod
    def allow() -> RateLimitDecision:
        return _ALLOW

    @staticmethod
    def deny(retry_after: int) -> RateLimitDecision:
        return RateLimitDecision(retry_after)


_ALLOW: Final = RateLimitDecision()
_FAILED: Final = RateLimitDecision(1)  # a limiter that failed: denied, retry in a second


class RateLimiter(Protocol):
    """Decides whether a message may be served now.  ``acquire`` may be a plain ``def`` (it
    runs on the event loop: keep it quick, as ``TokenBucket`` is) or ``async def`` (for a
    limiter shared by several nodes, say in Redis; awaited for at most
    ``limits.rate_limit_check_timeout_seconds``).  It must be safe to call concurrently, and
    every call it allows is a charge: mcpkit never refunds one, and never closes a limiter."""

    def acquire(
        self, context: RateLimitContext
    ) -> RateLimitDecision | Awaitable[RateLimitDecision]: ...


def check_bucket(
    who: str, capacity: object, refill_tokens: object, period: object, limits: object
) -> None:
    """The settings every token bucket shares (``TokenBucket``, ``RedisTokenBucket``)."""
    if type(capacity) is not int or not 1 <= capacity <= 1_000_000:
        raise ConfigurationError(f"{who}: capacity must be an int from 1 to 1000000")
    if type(refill_tokens) is not int or not 1 <= refill_tokens <= 1_000_000:
        raise ConfigurationError(f"{who}: refill_tokens must be an int from 1 to 1000000")
    if (
        isinstance(period, bool)
        or not isinstance(period, (int, float))
        or not 0.001 <= period <= 86_400
    ):
        raise ConfigurationError(
            f"{who}: refill_period_seconds must be a number from 0.001 to 86400"
        )
    if not isinstance(limits, Limits):
        raise ConfigurationError(f"{who}: limits must be a Limits")


class TokenBucket:
    """The built-in limiter: a token bucket per partition, in this process only.

    A partition is (endpoint path, admission partition, target): one bucket for each caller at
    each endpoint and target, so a bucket given to several tools is shared by their calls.  A
    bucket starts full with ``capacity`` tokens; each allowed call takes one, and
    ``refill_tokens`` come back every ``refill_period_seconds``, continuously (the default is
    20, then one a second).  A denial's ``Retry-After`` is the exact time until the next token,
    rounded up to a whole second.  Time is the monotonic clock in integer nanoseconds, and
    token levels are integers scaled by the period, so refill never drifts by rounding.

    At most ``limits.max_rate_limit_partitions`` partitions are kept.  When the table is full a
    new partition takes over the first fully refilled one among the next 64 slots (a rotating
    sample); if none is idle the call is denied with ``Retry-After`` of one refill interval,
    so a flood of distinct callers fails closed without growing memory.

    ``clock_ns`` is the clock (``time.monotonic_ns``); tests inject one.
    """

    __slots__ = (
        "_clock",
        "_cursor",
        "_full",
        "_index",
        "_keys",
        "_levels",
        "_lock",
        "_max",
        "_per_second",
        "_rate",
        "_stamps",
        "_unit",
        "capacity",
        "refill_period_seconds",
        "refill_tokens",
    )

    def __init__(
        self,
        capacity: int = 20,
        *,
        refill_tokens: int = 60,
        refill_period_seconds: float = 60.0,
        limits: Limits = DEFAULT_LIMITS,
        clock_ns: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        check_bucket("TokenBucket", capacity, refill_tokens, refill_period_seconds, limits)
        if not callable(clock_ns):
            raise ConfigurationError("TokenBucket: clock_ns must be callable")
        self.capacity = capacity
        self.refill_tokens = refill_tokens
        self.refill_period_seconds = float(refill_period_seconds)
        # One token is ``_unit`` (the period in ns); ``_rate`` units come back per ns.
        self._unit = round(refill_period_seconds * _NS)
        self._rate = refill_tokens
        self._per_second = refill_tokens * _NS
        self._full = capacity * self._unit
        self._max = limits.max_rate_limit_partitions
        self._clock = clock_ns
        self._lock = threading.Lock()
        self._index: dict[tuple[str, str | None, RateLimitTarget], int] = {}
        self._keys: list[tuple[str, str | None, RateLimitTarget]] = []
        self._levels: list[int] = []
        self._stamps: list[int] = []
        self._cursor = 0

    def __len__(self) -> int:
        """The partitions held now (never more than ``max_rate_limit_partitions``)."""
        return len(self._keys)

    def __repr__(self) -> str:
        return (
            f"TokenBucket(capacity={self.capacity}, refill_tokens={self.refill_tokens}, "
            f"refill_period_seconds={self.refill_period_seconds:g})"
        )

    def acquire(self, context: RateLimitContext) -> RateLimitDecision:
        key = (context.endpoint.path, context.partition, context.target)
        with self._lock:
            now = self._clock()  # read under the lock: a bucket's time never runs backwards
            slot = self._index.get(key)
            if slot is None:
                slot = self._place(key, now)
                if slot is None:
                    return RateLimitDecision(self._seconds(self._unit))
            level = min(self._full, self._levels[slot] + (now - self._stamps[slot]) * self._rate)
            self._stamps[slot] = now
            if level >= self._unit:
                self._levels[slot] = level - self._unit
                return _ALLOW
            self._levels[slot] = level
            return RateLimitDecision(self._seconds(self._unit - level))

    def _seconds(self, missing: int) -> int:
        """Whole seconds, rounded up, until ``missing`` units have come back."""
        return -(-missing // self._per_second)  # at most a day: the period's bound

    def _place(self, key: tuple[str, str | None, RateLimitTarget], now: int) -> int | None:
        """A slot for a new partition, full: a new one below the bound, else a probed idle
        one taken over, else ``None``."""
        keys = self._keys
        held = len(keys)
        if held < self._max:
            keys.append(key)
            self._levels.append(self._full)
            self._stamps.append(now)
            self._index[key] = held
            return held
        start = self._cursor
        for step in range(min(_PROBES, held)):
            slot = (start + step) % held
            if self._levels[slot] + (now - self._stamps[slot]) * self._rate >= self._full:
                del self._index[keys[slot]]
                keys[slot] = key
                self._index[key] = slot
                self._levels[slot] = self._full
                self._stamps[slot] = now
                self._cursor = (slot + 1) % held
                return slot
        self._cursor = (start + _PROBES) % held
        return None


LimiterChoice: TypeAlias = "RateLimiter | str | None"
"""A limiter, the name of one in ``rate_limiters``, or none."""


@dataclass(frozen=True, slots=True)
class RateLimits:
    """A server's rate-limiting settings as given (``Server(rate_limiters=...,
    tool_rate_limiter=..., request_rate_limiter=...)``); ``resolve`` checks them."""

    named: Mapping[str, RateLimiter] = field(default_factory=dict)
    tool: LimiterChoice = None
    request: LimiterChoice = None

    def resolve(self, limits: Limits) -> _Resolved:
        """The limiters by name, the fallback and the request limiter, every name resolved."""
        named = self.named
        if not isinstance(named, Mapping):
            raise ConfigurationError("rate_limiters must be a dict of names to limiters")
        for name, limiter in named.items():
            if not isinstance(name, str) or not name:
                raise ConfigurationError("rate_limiters: each name must be a non-empty str")
            _check_limiter(f"rate_limiters[{name!r}]", limiter)
        registry = dict(named)
        tool = _choice("tool_rate_limiter", self.tool, registry)
        request = _choice("request_rate_limiter", self.request, registry)
        return _Resolved(registry, tool, request, limits)


NO_RATE_LIMITS: Final = RateLimits()
"""No limiter at all: the default, under which nothing is charged."""


def _check_limiter(option: str, limiter: object) -> None:
    if isinstance(limiter, type):
        raise ConfigurationError(
            f"{option} must be a limiter instance (TokenBucket()), not a class"
        )
    if not callable(getattr(limiter, "acquire", None)):
        raise ConfigurationError(
            f"{option} must be a RateLimiter (an object with acquire(context)), such as "
            "TokenBucket()"
        )


def _choice(option: str, choice: object, named: Mapping[str, RateLimiter]) -> RateLimiter | None:
    if choice is None:
        return None
    if isinstance(choice, str):
        found = named.get(choice)
        if found is None:
            raise ConfigurationError(
                f"{option} names a limiter that rate_limiters does not have; add it there "
                "or pass the limiter itself"
            )
        return found
    _check_limiter(option, choice)
    return cast("RateLimiter", choice)  # checked: it has acquire


class _Resolved:
    """The server's resolved limiters; ``for_endpoint`` gives each endpoint its charging."""

    __slots__ = ("_named", "_request", "_timeout", "_tool")

    def __init__(
        self,
        named: Mapping[str, RateLimiter],
        tool: RateLimiter | None,
        request: RateLimiter | None,
        limits: Limits,
    ) -> None:
        self._named = named
        self._tool = tool
        self._request = request
        self._timeout = limits.rate_limit_check_timeout_seconds

    def for_endpoint(self, endpoint: Endpoint) -> RateLimiting | None:
        """What ``endpoint``'s requests are charged, or ``None`` when nothing is (the request
        path then skips limiting altogether)."""
        tools: dict[Revision, dict[str, RateLimiter]] = {}
        for revision in Revision:
            chosen = tools[revision] = {}
            for tool in endpoint.tools_for(revision):
                limiter = self._tool_limiter(endpoint, tool.name, tool.rate_limiter)
                if limiter is not None:
                    chosen[tool.name] = limiter
        if self._request is None and not any(tools.values()):
            return None
        return RateLimiting(self._request, tools, self._timeout)

    def _tool_limiter(self, endpoint: Endpoint, tool: str, own: str | None) -> RateLimiter | None:
        """Resolution: the tool's limiter, else the endpoint's, else the server's fallback."""
        name = own if own is not None else endpoint.tool_rate_limiter
        if name is None:
            return self._tool
        found = self._named.get(name)
        if found is None:
            where = "a tool's rate_limiter" if own is not None else "tool_rate_limiter"
            raise ConfigurationError(
                f"endpoint {endpoint.path}: {where} names a limiter the server does not have; "
                "add it to Server(rate_limiters={name: limiter})"
            )
        if self._tool is None:
            raise ConfigurationError(
                f"endpoint {endpoint.path}: a tool limiter is named but the server has no "
                "tool_rate_limiter; give Server(tool_rate_limiter=...) the limiter for every "
                "other tool, so that no tool escapes limiting"
            )
        return found


class RateLimiting:
    """What one endpoint's messages are charged: the request limiter, and each tool's limiter
    per revision."""

    __slots__ = ("request", "timeout", "tools")

    def __init__(
        self,
        request: RateLimiter | None,
        tools: Mapping[Revision, Mapping[str, RateLimiter]],
        timeout: float,
    ) -> None:
        self.request = request
        self.tools = tools
        self.timeout = timeout

    async def charge(
        self,
        endpoint: Endpoint,
        revision: Revision,
        envelope: Envelope,
        args: object,
        admitted: Admitted,
        http: HttpRequest | None,
    ) -> tuple[int, RateLimitTarget] | None:
        """Charge the message: ``None`` when allowed, else the ``Retry-After`` seconds and the
        target whose limiter denied it."""
        method = envelope.method or ""
        notification = envelope.kind is MessageKind.NOTIFICATION
        if self.request is not None:
            context = RateLimitContext(
                endpoint, RateLimitTarget.REQUEST, revision, method, notification,
                admitted.identity, admitted.authorization, None, http,
            )  # fmt: skip
            denied = await self._acquire(self.request, context)
            if denied is not None:
                return denied, RateLimitTarget.REQUEST
        if method != _TOOLS_CALL or notification:
            return None
        name = args[0]  # type: ignore[index]  # read_tool_call's (name, arguments)
        limiter = self.tools[revision].get(name)
        if limiter is None:
            return None  # an unknown tool: not charged, answered -32602 as ever
        context = RateLimitContext(
            endpoint, RateLimitTarget.TOOL, revision, method, False,
            admitted.identity, admitted.authorization, name, http,
        )  # fmt: skip
        denied = await self._acquire(limiter, context)
        return None if denied is None else (denied, RateLimitTarget.TOOL)

    async def _acquire(self, limiter: RateLimiter, context: RateLimitContext) -> int | None:
        try:
            decision = limiter.acquire(context)
            if inspect.isawaitable(decision):
                decision = await asyncio.wait_for(decision, self.timeout)
        except Exception as error:
            log.error("mcpkit: rate limiter failed with %s", type(error).__name__)
            decision = _FAILED
        if not isinstance(decision, RateLimitDecision):
            log.error("mcpkit: rate limiter returned %s", type(decision).__name__)
            decision = _FAILED
        return decision.retry_after


def denial(
    envelope: Envelope, revision: Revision, retry_after: int
) -> tuple[int, bytes | None, list[tuple[bytes, bytes]]]:
    """A denial as written: 429 (on every revision), ``Retry-After``, and -31999 as the
    answer of a request (a notification gets no body)."""
    status, error = wire_error(RateLimited(), revision)
    message = None
    if envelope.kind is MessageKind.REQUEST:
        message = error_message(envelope.id, error)
    return status, message, [(b"retry-after", b"%d" % retry_after)]
