"""An authorization server's signing keys (its JWKS), fetched when needed and kept.

The keys are fetched on first use and again once ``refresh_seconds`` have passed, or early
when a token names a key id the set does not have (the authorization server rotated its
keys), but never more often than every ``min_refresh_seconds``: a flood of tokens with made-up
key ids costs one fetch per interval, not one per token.  Concurrent requests share one
fetch.  When a refresh fails the keys already known keep working, so an authorization server
that is briefly down does not take the resource server with it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from mcpkit.json import JsonObject
from mcpkit.limits import Limits
from mcpkit.server._access_token import TokenProblem, TokenRejected, VerifierUnavailable
from mcpkit.server._token_fetch import JsonFetcher

if TYPE_CHECKING:
    from jwt import PyJWK

__all__ = ["JwksCache"]

_MAX_KID_CHARS = 256
_ASYMMETRIC_TYPES = frozenset({"RSA", "EC", "OKP"})


class JwksCache:
    """The keys published at ``uri``, by key id."""

    __slots__ = (
        "_attempted",
        "_clock",
        "_fetched",
        "_fetcher",
        "_keys",
        "_limits",
        "_min_refresh",
        "_refresh",
        "_running",
        "uri",
    )

    def __init__(
        self,
        uri: str,
        limits: Limits,
        *,
        refresh_seconds: float,
        min_refresh_seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.uri = uri
        self._limits = limits
        self._fetcher = JsonFetcher(limits, limits.max_verifier_response_bytes)
        self._refresh = refresh_seconds
        self._min_refresh = min_refresh_seconds
        self._clock = clock
        self._keys: Mapping[str | None, tuple[PyJWK, bool]] = MappingProxyType({})
        self._fetched: float | None = None  # when the keys were last fetched
        self._attempted: float | None = None  # when a fetch was last tried
        self._running: asyncio.Task[None] | None = None

    async def key(self, kid: str | None) -> tuple[PyJWK, bool]:
        """The key a token names (``kid``; ``None`` when its header has none, which is only
        answered when the set has exactly one key) and whether the set declares the key's
        algorithm (``alg``).  ``TokenRejected(UNKNOWN_KEY)`` when the
        set does not have it even after the refresh it may cause; ``VerifierUnavailable``
        when no keys could be fetched at all."""
        now = self._clock()
        stale = self._fetched is None or now - self._fetched >= self._refresh
        found = None if stale else self._find(kid)
        if found is not None:
            return found
        if (
            self._in_flight()
            or self._attempted is None
            or now - self._attempted >= self._min_refresh
        ):
            await self._refreshed()  # joins a fetch already running (first use, rotation)
        elif self._fetched is None:
            raise VerifierUnavailable()  # the last try failed a moment ago: do not hammer
        found = self._find(kid)
        if found is None:
            raise TokenRejected(TokenProblem.UNKNOWN_KEY)
        return found

    def _find(self, kid: str | None) -> tuple[PyJWK, bool] | None:
        if kid is None:
            keys = list(self._keys.values())
            return keys[0] if len(keys) == 1 else None
        return self._keys.get(kid)

    def _in_flight(self) -> bool:
        running = self._running
        return running is not None and not running.done() and running.get_loop() is _loop()

    async def _refreshed(self) -> None:
        """Fetch the set once for every waiter; a failure keeps the keys already known (and
        is ``VerifierUnavailable`` only while there are none)."""
        running = self._running
        if running is None or not self._in_flight():
            self._attempted = self._clock()
            running = self._running = asyncio.ensure_future(self._fetch())
            running.add_done_callback(_retrieved)  # its waiters may all have timed out
        try:
            await asyncio.shield(running)
        except VerifierUnavailable:
            if self._fetched is None:
                raise

    async def _fetch(self) -> None:
        document = await self._fetcher.get(self.uri)
        self._keys = MappingProxyType(_parse(document, self._limits))
        self._fetched = self._clock()

    def adopt_limits(self, limits: Limits) -> None:
        """Use ``limits`` from now on (a server's, before it fetches anything)."""
        self._limits = limits
        self._fetcher = JsonFetcher(limits, limits.max_verifier_response_bytes)

    async def aclose(self) -> None:
        await self._fetcher.aclose()


def _loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


def _retrieved(task: asyncio.Task[None]) -> None:
    """Mark a fetch's failure as seen: the waiters that would read it may have gone."""
    if not task.cancelled():
        task.exception()


def _parse(document: JsonObject, limits: Limits) -> dict[str | None, tuple[PyJWK, bool]]:
    """The signing keys of a JWKS document, by ``kid``: keys for encryption, of a type or
    curve this build cannot use, or with a bad ``kid`` are skipped; a document that is not a
    key set, or holds more than ``limits.max_jwks_keys`` keys, is a failed fetch."""
    import jwt

    keys = document.get("keys")
    if not isinstance(keys, (list, tuple)) or len(keys) > limits.max_jwks_keys:
        raise VerifierUnavailable()
    found: dict[str | None, tuple[PyJWK, bool]] = {}
    for entry in keys:
        if (
            not isinstance(entry, JsonObject)
            or entry.get("use", "sig") != "sig"
            or entry.get("kty") not in _ASYMMETRIC_TYPES
        ):
            continue  # not a signing key, or a shared secret (never published for this)
        kid = entry.get("kid")
        if kid is not None and (not isinstance(kid, str) or not 0 < len(kid) <= _MAX_KID_CHARS):
            continue
        try:
            key = jwt.PyJWK({name: _plain(member) for name, member in entry.items()})
        except (jwt.PyJWTError, ValueError, TypeError, KeyError):
            continue  # an unsupported key type, curve or algorithm: not ours to use
        if kid in found:
            continue  # a repeated kid is ambiguous: the first one stands
        found[kid] = (key, entry.get("alg") is not None)
    return found


def _plain(value: object) -> object:
    """A JSON value as the plain dicts and lists PyJWT expects."""
    if isinstance(value, dict):
        return {name: _plain(member) for name, member in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(member) for member in value]
    return value
