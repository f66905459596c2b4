"""mcpkit benchmark servers: ``add(a, b)`` with structured output ``{"result": int}``.

``BENCH_VARIANT`` picks the server (read once, at import):

* ``def`` (default): ``add`` is a plain ``def`` handler (run in a worker thread);
* ``async``: ``add`` is an ``async def`` handler (run on the event loop);
* ``tools101``: ``def add`` plus 100 filler tools of the same shape (101 in all), served with a
  page size of 128 so that one ``tools/list`` returns the whole catalog, as the peers do;
* ``session``: ``async def add``, and 2025-11-25 kept in sessions (``Mcp-Session-Id``); with
  ``BENCH_REDIS_URL`` set (``bench/http/sessions.py``), in ``RedisSessionStore(BENCH_REDIS_URL)``
  rather than in the process;
* ``listen``: ``async def add``, and ``subscriptions/listen`` served (every listen granted, up to
  128 from one caller: the benchmark's idle listens are all anonymous).

Every variant serves 2026-07-28 and 2025-11-25 on ``/mcp``.  With ``BENCH_OAUTH_ISSUER`` set
(``bench/http/oauth.py``), the server is an OAuth resource server:
``auth=ResourceServer(BENCH_OAUTH_RESOURCE, authorization_servers=[BENCH_OAUTH_ISSUER],
verifier=JwtVerifier(BENCH_OAUTH_ISSUER, BENCH_OAUTH_JWKS_URI),
required_scopes=BENCH_OAUTH_SCOPES.split())``; without it, no auth.  Run it the way users do:
``BENCH_VARIANT=async mcpkit serve bench/http/app_mcpkit.py --port 8201`` (embedded uvicorn,
httptools on asyncio, one worker).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mcpkit
from mcpkit import Revision

VARIANT = os.environ.get("BENCH_VARIANT", "def")
REVISIONS = {Revision.V2026_07_28, Revision.V2025_11_25}
FILLER_TOOLS = 100


@dataclass(frozen=True)
class Sum:
    """The structured output; 2025 revisions need an object, so it is ``{"result": int}``."""

    result: int


def _add_def(self: object, a: int, b: int) -> Sum:
    return Sum(a + b)


async def _add_async(self: object, a: int, b: int) -> Sum:
    return Sum(a + b)


def _filler(index: int) -> Callable[..., Sum]:
    def filler(self: object, a: int, b: int) -> Sum:
        return Sum(a + b)

    filler.__name__ = filler.__qualname__ = f"tool_{index:03d}"
    return mcpkit.tool(
        name=f"tool_{index:03d}",
        description=f"Benchmark filler tool number {index}: returns the sum of a and b.",
    )(filler)


def _endpoint_class(variant: str) -> type:
    handler: Callable[..., Any] = (
        _add_async if variant in ("async", "session", "listen") else _add_def
    )
    namespace: dict[str, Any] = {
        "add": mcpkit.tool(name="add", description="Add two integers.")(handler)
    }
    if variant == "tools101":
        namespace.update({f"tool_{i:03d}": _filler(i) for i in range(FILLER_TOOLS)})
    elif variant not in ("def", "async", "session", "listen"):
        raise SystemExit(
            f"BENCH_VARIANT must be def, async, tools101, session or listen, not {variant!r}"
        )
    cls = type(f"Bench_{variant}", (), namespace)
    sessions = {Revision.V2025_11_25} if variant == "session" else set()
    decorate = mcpkit.endpoint(
        path="/mcp",
        name="bench-mcpkit",
        version="0.0.1",
        revisions=REVISIONS,
        session_revisions=sessions,
        listen=variant == "listen",
    )
    return decorate(cls)


def _grant(request: mcpkit.SubscriptionRequest) -> mcpkit.Lease:
    return mcpkit.Lease(60.0)


def _auth() -> mcpkit.ResourceServer | None:
    issuer = os.environ.get("BENCH_OAUTH_ISSUER", "")
    if not issuer:
        return None
    return mcpkit.ResourceServer(
        os.environ["BENCH_OAUTH_RESOURCE"],
        authorization_servers=[issuer],
        verifier=mcpkit.JwtVerifier(issuer, os.environ["BENCH_OAUTH_JWKS_URI"]),
        required_scopes=os.environ.get("BENCH_OAUTH_SCOPES", "").split(),
    )


def _sessions() -> mcpkit.RedisSessionStore | None:
    url = os.environ.get("BENCH_REDIS_URL")
    return mcpkit.RedisSessionStore(url) if url and VARIANT == "session" else None


server = mcpkit.Server(
    _endpoint_class(VARIANT),
    auth=_auth(),
    sessions=_sessions(),
    page_size=128,
    subscription_authorizer=_grant if VARIANT == "listen" else None,
    limits=mcpkit.Limits(max_listens_per_owner=128) if VARIANT == "listen" else mcpkit.Limits(),
)
