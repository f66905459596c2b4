"""What every Redis-backed part of the server shares about its client: the URL it accepts (and
how it shows one), the protocol it speaks, and how an asyncio client is made.  The ``redis``
package is imported by ``async_client`` only, when a store first needs a client."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from typing import Any, Final
from urllib.parse import parse_qsl, urlencode, urlsplit

from mcpkit.errors import ConfigurationError

__all__ = ["RESP", "async_client", "check_settings", "check_url", "require_redis"]

SCHEMES: Final = ("redis", "rediss", "unix")
RESP: Final = 2
"""The protocol the clients speak.  Under RESP3 recent ``redis`` clients (maintenance
notifications on ``auto``) hand out a pooled connection without checking that Redis has not
closed it, so after a Redis restart every connection of the pool failed its next call (a
503 each, though Redis was back); under RESP2 the pool replaces a closed connection first."""


def check_url(url: object, owner: str) -> str:
    """``url`` as ``repr`` shows it (any password replaced by ``***``), once it is checked to
    be a Redis URL that ``redis.asyncio.Redis.from_url`` takes (``owner`` names the class in
    the error)."""
    if not isinstance(url, str):
        raise ConfigurationError(f"{owner}: url must be a str")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  # a port that is not a number raises ValueError
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in SCHEMES:
        valid = False
    elif parts.scheme == "unix":
        valid = bool(parts.path)
    else:
        database = parts.path.strip("/")
        valid = not database or database.isdigit()
    if parts is None or not valid:
        raise ConfigurationError(
            f"{owner}: url must be a redis://host:port/db, rediss:// or unix:///path URL"
        )
    userinfo, at, place = parts.netloc.rpartition("@")
    user, colon, _ = userinfo.partition(":")
    hidden = [
        (name, "***" if name == "password" else value) for name, value in parse_qsl(parts.query)
    ]
    netloc = f"{user}:***{at}{place}" if colon else parts.netloc
    query = urlencode(hidden)
    return f"{parts.scheme}://{netloc}{parts.path}" + (f"?{query}" if query else "")


def async_client(url: str, timeout: float) -> tuple[Any, tuple[type[BaseException], ...]]:
    """A new ``redis.asyncio`` client of ``url`` whose every call fails after ``timeout``
    seconds and is never retried (the caller reports the failure at once), and the exceptions
    a failure of Redis raises."""
    from redis.asyncio import Redis
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff
    from redis.exceptions import RedisError

    client = Redis.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=Retry(NoBackoff(), 0),
        protocol=RESP,
    )
    return client, (RedisError, OSError)


def require_redis(owner: str) -> None:
    """``ConfigurationError`` unless the ``redis`` client is installed (checked without
    importing it)."""
    if importlib.util.find_spec("redis") is None:
        raise ConfigurationError(f"{owner} needs the redis client: pip install 'mcpkit[redis]'")


def check_settings(
    owner: str, prefix: object, numbers: Iterable[tuple[str, object, float, float]]
) -> None:
    """The settings a Redis store checks alike: its key ``prefix`` (a str of at most 256) and
    each ``(name, value, low, high)`` of ``numbers`` (a number from ``low`` to ``high``)."""
    if not isinstance(prefix, str) or len(prefix) > 256:
        raise ConfigurationError(f"{owner}: prefix must be a str of at most 256")
    for name, value, low, high in numbers:
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not low <= value <= high
        ):
            raise ConfigurationError(f"{owner}: {name} must be a number from {low:g} to {high:g}")
