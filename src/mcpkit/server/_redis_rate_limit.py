"""``RedisTokenBucket``: ``TokenBucket``'s limits shared by every node through one Redis.

Each call runs one Lua script in Redis, atomically: it reads the partition's bucket (whole
tokens, the fraction of the next one and when it was last refilled) from one hash, refills it
by Redis's own clock (``TIME``, so the nodes' clocks do not matter), takes a token or answers
how long until the next one, and sets the key to expire once a full refill would have filled
the bucket anyway.  An idle partition therefore vanishes, and the key space is bounded by the
callers active within one full refill.

The ``redis`` client is an optional extra (``pip install 'mcpkit[redis]'``): this module alone
imports it, on first use; constructing a bucket only checks that it is installed.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import logging
import math
import threading
import time
import weakref
from typing import Any, Final

from mcpkit.errors import ConfigurationError
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.server._rate_limit import (
    RateLimitContext,
    RateLimitDecision,
    RateLimiter,
    check_bucket,
)
from mcpkit.server._redis_client import RESP, check_url, require_redis

__all__ = ["RedisTokenBucket"]

log = logging.getLogger("mcpkit.server")

_US: Final = 1_000_000
_EXACT: Final = 2**53
"""Redis's Lua numbers are doubles: integers are exact up to here."""
_RETRY_SECONDS: Final = 1.0
"""After a failure Redis is not tried again for this long: the fallback (or the fixed denial)
answers at once instead of every call waiting on a server that is down."""
_ALLOW: Final = RateLimitDecision.allow()
_FAILED: Final = RateLimitDecision.deny(1)

# KEYS[1]: the bucket.  ARGV: capacity; unit (one token, in units); rate (units per
# microsecond); the microseconds a full refill takes; the key's time to live in milliseconds.
# The level is tokens * unit + frac units, the fraction kept below one unit, so every number
# stays an exact integer (the constructor checks unit * (rate + 1) <= 2^53).  The reply is 0
# when a token was taken, else the units missing for the next one.
_SCRIPT: Final = """\
if redis.replicate_commands then redis.replicate_commands() end
local capacity = tonumber(ARGV[1])
local unit = tonumber(ARGV[2])
local rate = tonumber(ARGV[3])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local tokens, frac = capacity, 0
local held = redis.call('HMGET', KEYS[1], 't', 'f', 's')
if held[1] and held[2] and held[3] then
  tokens = tonumber(held[1])
  frac = tonumber(held[2])
  local elapsed = now - tonumber(held[3])
  if elapsed >= tonumber(ARGV[4]) then
    tokens, frac = capacity, 0
  elseif elapsed > 0 then
    local whole = math.floor(elapsed / unit)
    local part = (elapsed - whole * unit) * rate + frac
    local more = math.floor(part / unit)
    tokens = tokens + whole * rate + more
    frac = part - more * unit
    if tokens >= capacity then tokens, frac = capacity, 0 end
  end
end
local missing = 0
if tokens >= 1 then tokens = tokens - 1 else missing = unit - frac end
redis.call('HSET', KEYS[1], 't', tokens, 'f', frac, 's', now)
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return missing
"""
_SHA: Final = hashlib.sha1(_SCRIPT.encode()).hexdigest()


class RedisTokenBucket:
    """``TokenBucket`` shared by every node that names the same Redis: one budget per
    partition across the whole deployment.

    The rules are ``TokenBucket``'s: a partition is (endpoint path, admission partition,
    target); a bucket starts full with ``capacity`` tokens, each allowed call takes one, and
    ``refill_tokens`` come back every ``refill_period_seconds``, continuously; a denial's
    ``Retry-After`` is the exact time until the next token, rounded up to a whole second.  Time
    is Redis's clock (``TIME``) in microseconds, and levels are exact integers.  The settings'
    ranges are ``TokenBucket``'s, except that ``refill_tokens`` per ``refill_period_seconds``
    (in its lowest terms, the period in microseconds) must fit the exact integers of Redis's
    Lua numbers: a ``ConfigurationError`` says when they do not.

    Each partition is one hash at ``prefix`` + the SHA-256 hex digest of the partition and
    the bucket's settings: fixed length, and never the caller's key itself.  Two buckets with
    equal settings and the same ``prefix`` share their budgets, as the same bucket on two
    nodes must; give limiters that are meant to be apart their own ``prefix``.  A key expires
    once a full refill would have filled its bucket, so only active callers hold keys.

    ``url`` is a ``redis://``, ``rediss://`` or ``unix://`` URL (``redis.asyncio.Redis.
    from_url``); a client is made from it for each event loop that uses the bucket, with
    connect and read timeouts of half of ``limits.rate_limit_check_timeout_seconds`` (pass the
    server's ``limits``), so that a slow Redis is given up on before the server gives up on
    the limiter.  ``client`` is a ready ``redis.asyncio`` client to use instead (for every
    loop; it stays yours to close).  Its password never appears in ``repr`` or in the log.

    When Redis cannot be reached, times out or fails, ``fallback`` (say a ``TokenBucket``)
    decides instead, so each node limits alone until Redis is back; without one the call is
    denied with ``Retry-After: 1`` (limiting fails closed).  Either way ``acquire`` never
    raises, the outage is logged once when it starts and once when it ends, and Redis is not
    tried again for a second after each failure, so calls are not held up by a server that is
    down.

    ``aclose()`` closes the client of the event loop it runs on.
    """

    __slots__ = (
        "_args",
        "_budget",
        "_client",
        "_clients",
        "_down",
        "_fallback",
        "_hash",
        "_lock",
        "_per_second",
        "_retry_at",
        "_shown",
        "_url",
        "capacity",
        "prefix",
        "refill_period_seconds",
        "refill_tokens",
    )

    def __init__(
        self,
        url: str,
        *,
        capacity: int = 20,
        refill_tokens: int = 60,
        refill_period_seconds: float = 60.0,
        prefix: str = "mcpkit:rl:",
        fallback: RateLimiter | None = None,
        limits: Limits = DEFAULT_LIMITS,
        client: Any = None,
    ) -> None:
        check_bucket("RedisTokenBucket", capacity, refill_tokens, refill_period_seconds, limits)
        if not isinstance(prefix, str) or len(prefix) > 256:
            raise ConfigurationError("RedisTokenBucket: prefix must be a str of at most 256")
        if fallback is not None and (
            isinstance(fallback, type) or not callable(getattr(fallback, "acquire", None))
        ):
            raise ConfigurationError(
                "RedisTokenBucket: fallback must be a RateLimiter instance, such as TokenBucket()"
            )
        if client is not None and not callable(getattr(client, "evalsha", None)):
            raise ConfigurationError("RedisTokenBucket: client must be a redis.asyncio client")
        self._shown = check_url(url, "RedisTokenBucket")
        if client is None:
            require_redis("RedisTokenBucket")
        # One token is ``unit`` units and ``rate`` units come back per microsecond: the
        # period in microseconds and refill_tokens, in lowest terms.
        period = round(refill_period_seconds * _US)
        common = math.gcd(period, refill_tokens)
        unit, rate = period // common, refill_tokens // common
        if unit * (rate + 1) > _EXACT:
            raise ConfigurationError(
                "RedisTokenBucket: refill_tokens per refill_period_seconds is too fine for "
                "Redis's exact integers; use rounder numbers (say per second or per minute)"
            )
        full = -(-capacity * unit // rate)  # microseconds from empty to full
        self.capacity = capacity
        self.refill_tokens = refill_tokens
        self.refill_period_seconds = float(refill_period_seconds)
        self.prefix = prefix
        self._args = (capacity, unit, rate, full, max(1, -(-full // 1000)))
        self._per_second = rate * _US
        self._hash = hashlib.sha256(b"%d:%d:%d\n" % (capacity, unit, rate))
        self._url = url
        self._fallback = fallback
        self._budget = limits.rate_limit_check_timeout_seconds / 2
        self._client = client
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()
        self._down = False
        self._retry_at = 0.0

    def __repr__(self) -> str:
        return (
            f"RedisTokenBucket({self._shown!r}, capacity={self.capacity}, "
            f"refill_tokens={self.refill_tokens}, "
            f"refill_period_seconds={self.refill_period_seconds:g}, prefix={self.prefix!r})"
        )

    def key(self, context: RateLimitContext) -> str:
        """The Redis key of ``context``'s partition."""
        path, partition = context.endpoint.path, context.partition
        caller = "-" if partition is None else f"{len(partition)}:{partition}"
        text = f"{len(path)}:{path}{context.target.value}:{caller}"
        digest = self._hash.copy()
        digest.update(text.encode("utf-8", "surrogatepass"))
        return self.prefix + digest.hexdigest()

    async def acquire(self, context: RateLimitContext) -> RateLimitDecision:
        now = time.monotonic()
        if now >= self._retry_at:
            try:
                async with asyncio.timeout(self._budget):
                    missing = int(await self._run(self.key(context)))
                # the whole seconds, rounded up, until the missing units have come back
                decision = _ALLOW if missing <= 0 else self._denial(missing)
            except Exception as error:
                self._failed(error)
            else:
                if self._down:
                    self._down = False
                    log.warning("mcpkit: RedisTokenBucket reaches Redis again")
                return decision
        fallback = self._fallback
        if fallback is None:
            return _FAILED
        try:
            answer = fallback.acquire(context)
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception as error:
            log.error("mcpkit: RedisTokenBucket's fallback failed with %s", type(error).__name__)
            return _FAILED
        return answer  # the server checks it is a RateLimitDecision, as any limiter's

    def _denial(self, missing: int) -> RateLimitDecision:
        return RateLimitDecision(-(-missing // self._per_second))  # at most a day

    async def aclose(self) -> None:
        """Close the client this event loop has used (a given ``client`` is left open)."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()

    async def _run(self, key: str) -> Any:
        client = self._connected()
        try:
            return await client.evalsha(_SHA, 1, key, *self._args)
        except Exception as error:
            from redis.exceptions import NoScriptError

            if not isinstance(error, NoScriptError):
                raise
            return await client.eval(_SCRIPT, 1, key, *self._args)  # loads it for EVALSHA

    def _connected(self) -> Any:
        """The client for the running loop (a client is tied to the loop it was made on)."""
        if self._client is not None:
            return self._client
        loop = asyncio.get_running_loop()
        with self._lock:
            client = self._clients.get(loop)
            if client is None:
                from redis.asyncio import Redis
                from redis.asyncio.retry import Retry
                from redis.backoff import NoBackoff

                client = self._clients[loop] = Redis.from_url(
                    self._url,
                    socket_timeout=self._budget,
                    socket_connect_timeout=self._budget,
                    retry=Retry(NoBackoff(), 0),  # the fallback answers instead of a retry
                    protocol=RESP,
                )
        return client

    def _failed(self, error: Exception) -> None:
        self._retry_at = time.monotonic() + _RETRY_SECONDS
        if not self._down:
            self._down = True
            then = (
                "denying every call until it is back"
                if self._fallback is None
                else "the fallback limits each node alone until it is back"
            )
            log.warning("mcpkit: RedisTokenBucket cannot use Redis (%s); %s",
                        type(error).__name__, then)  # fmt: skip
