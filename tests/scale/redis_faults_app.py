"""The node that ``test_redis_faults.py`` serves (``mcpkit serve tests/scale/redis_faults_app.py``):
one endpoint, stateless on 2026-07-28 and with sessions on 2025-11-25, whose every shared part
is in one Redis.

- 2025 sessions in ``RedisSessionStore`` (its ``timeout_seconds`` the task store's);
- tasks in ``RedisTaskStore`` (``timeout_seconds`` from ``MCPKIT_TASK_TIMEOUT_SECONDS``);
- change notifications through ``RedisBroadcaster`` (its queue bounded by
  ``MCPKIT_MAX_PENDING``), told to ``subscriptions/listen`` streams;
- two ``RedisTokenBucket`` tool limiters, each roomy enough never to deny while Redis answers:
  the server's fallback limiter (every tool but ``strict_echo``) with a local ``TokenBucket``
  ``fallback=`` that decides while Redis is unreachable, and ``strict`` (``strict_echo``) with
  none, which denies every call then.

Tools: ``echo`` and ``strict_echo`` (stateless, answered at once), ``job`` (a task when the
request declares the tasks extension, else answered at once), ``touch`` (publishes an update of
``test://watched`` to every node) and ``broadcaster_state`` (the broadcaster's ``pending``,
``dropped`` and ``connected``, as JSON text).

Environment, read once: ``MCPKIT_REDIS_URL`` (required; a ``client_name`` query names this
node's connections in Redis's ``CLIENT LIST``), ``MCPKIT_NODE`` (the task store's node name),
``MCPKIT_TASK_TIMEOUT_SECONDS`` (default 1), ``MCPKIT_MAX_PENDING`` (default 100).
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Annotated, Final

from mcpkit import (
    Arg,
    CompleteResult,
    Lease,
    Limits,
    RedisBroadcaster,
    RedisSessionStore,
    RedisTaskStore,
    RedisTokenBucket,
    ResourceOutput,
    Revision,
    Server,
    SubscriptionRequest,
    TaskSupport,
    TextResourceContents,
    TokenBucket,
    endpoint,
    resource,
    tool,
)

REDIS_URL: Final = os.environ["MCPKIT_REDIS_URL"]
WATCHED: Final = "test://watched"
LIMITS: Final = Limits()
ROOMY: Final = 1_000_000
"""Tokens a bucket holds, and refills each second: a budget no test reaches, so that a denial
can only be a limiter's answer to a Redis outage."""

broadcaster = RedisBroadcaster(
    REDIS_URL, channel="mcpkit:faults", max_pending=int(os.environ.get("MCPKIT_MAX_PENDING", 100))
)


@endpoint(
    path="/mcp",
    name="faults",
    version="1.0.0",
    revisions={Revision.V2026_07_28, Revision.V2025_11_25},
    session_revisions={Revision.V2025_11_25},
    listen=True,
)
class Faults:
    @tool(description="Answers its text at once")
    def echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)

    @tool(description="Answers its text at once; no fallback limits it", rate_limiter="strict")
    def strict_echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)

    @tool(description="Answers its text after a pause; a task when the client can take one",
          task_support=TaskSupport.OPTIONAL)  # fmt: skip
    async def job(
        self, text: str, seconds: Annotated[float, Arg(minimum=0, maximum=60)] = 0.0
    ) -> CompleteResult:
        await asyncio.sleep(seconds)
        return CompleteResult.from_tool_text(text)

    @tool(description="Publishes an update of test://watched to every node")
    def touch(self) -> CompleteResult:
        server.notify_resource_updated(WATCHED)
        return CompleteResult.from_tool_text("touched")

    @tool(description="The broadcaster's queue: pending, dropped, connected")
    def broadcaster_state(self) -> CompleteResult:
        state = {
            "pending": broadcaster.pending,
            "dropped": broadcaster.dropped,
            "connected": broadcaster.connected,
        }
        return CompleteResult.from_tool_text(json.dumps(state))

    @resource(uri=WATCHED, name="watched")
    def watched(self) -> ResourceOutput:
        return ResourceOutput(contents=(TextResourceContents(uri=WATCHED, text="watched"),))


def grant(request: SubscriptionRequest) -> Lease:
    """Every listen, for a minute at a time (loopback tests only)."""
    return Lease(60.0)


server = Server(
    Faults,
    subscription_authorizer=grant,
    task_store=RedisTaskStore(
        REDIS_URL,
        prefix="faults:tasks:",
        node=os.environ.get("MCPKIT_NODE"),
        timeout_seconds=float(os.environ.get("MCPKIT_TASK_TIMEOUT_SECONDS", 1.0)),
    ),
    broadcaster=broadcaster,
    sessions=RedisSessionStore(
        REDIS_URL,
        prefix="faults:sessions:",
        timeout_seconds=float(os.environ.get("MCPKIT_TASK_TIMEOUT_SECONDS", 1.0)),
    ),
    rate_limiters={
        "strict": RedisTokenBucket(
            REDIS_URL,
            capacity=ROOMY,
            refill_tokens=ROOMY,
            refill_period_seconds=1.0,
            prefix="faults:strict:",
            limits=LIMITS,
        )
    },
    tool_rate_limiter=RedisTokenBucket(
        REDIS_URL,
        capacity=ROOMY,
        refill_tokens=ROOMY,
        refill_period_seconds=1.0,
        prefix="faults:rl:",
        limits=LIMITS,
        fallback=TokenBucket(capacity=ROOMY, refill_tokens=ROOMY, refill_period_seconds=1.0),
    ),
    limits=LIMITS,
)
