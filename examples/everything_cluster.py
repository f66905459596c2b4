"""The conformance fixture (``examples/everything.py``) as one node of several behind a load
balancer: the same endpoints, CORS policy and listen authorizer, with every store that a node
would otherwise keep to itself shared instead.

- tasks live in Redis (``RedisTaskStore``), so any node answers ``tasks/get`` for a task
  another node created, and the tasks of a node that dies are taken over by the others once
  its lease lapses (failed as interrupted, or run again when the tool is idempotent);
- change notifications go through Redis (``RedisBroadcaster``), so a listen stream on one node
  hears of a change made on another;
- 2025 sessions and the events of their streams live in Redis (``RedisSessionStore``), so
  any node serves any request of a session: its ``DELETE``, its ``GET`` stream, a
  ``Last-Event-ID`` resume, a cancel, the client's answer to a request another node sent;
- request state is sealed with one key that every node has (a ``Keyring`` built from
  ``MCPKIT_KEYRING_KEY``), so a node opens what another sealed.

Importing ``everything`` builds that module's own single-process server too (never served
here): the warning about development-ephemeral keys that each node logs at start is its.

A catalog change (``test_trigger_tool_change``) swaps the endpoint of the node that ran the
call only; the other nodes keep theirs.

Environment (read once, when the module is imported):

- ``MCPKIT_REDIS_URL`` (required): the Redis of the cluster, say ``redis://127.0.0.1:6379/0``;
- ``MCPKIT_KEYRING_KEY`` (required): the request-state key, at least 32 bytes as hex
  (``python -c 'import secrets; print(secrets.token_hex(32))'``), the same on every node;
- ``MCPKIT_NODE``: this node's name in the task store (default: a random one per process);
  never give two live nodes the same name;
- ``MCPKIT_TASK_LEASE_SECONDS``: how long a dead node's tasks wait for it (default 15);
- ``MCPKIT_TASK_TTL_SECONDS``: how long a task is kept (default 3600), and the longest it may
  run; the nodes sweep for expired tasks and those of dead nodes every quarter of it, at most
  every minute.

``MCPKIT_REDIS_URL=redis://127.0.0.1:6379/0 MCPKIT_KEYRING_KEY=... mcpkit serve
examples/everything_cluster.py --port 3001 --health --metrics``, once per node, each on its own
port, with a load balancer in front (``tests/scale`` runs three behind HAProxy).
"""

from __future__ import annotations

import os
from typing import Final

import everything  # the fixture next to this file (mcpkit serve puts its folder on sys.path)

from mcpkit import (
    DEFAULT_LIMITS,
    CorsPolicy,
    Keyring,
    Limits,
    ProtectionKey,
    RedisBroadcaster,
    RedisSessionStore,
    RedisTaskStore,
    Server,
)

KEY_ID: Final = "cluster-1"
"""The id of the shared request-state key (it travels in every sealed envelope)."""


def _seconds(name: str, default: float) -> float:
    value = os.environ.get(name)
    return default if value is None else float(value)


def shared_keyring() -> Keyring:
    """One ring, the same on every node, from ``MCPKIT_KEYRING_KEY`` (hex)."""
    return Keyring(ProtectionKey(KEY_ID, bytes.fromhex(os.environ["MCPKIT_KEYRING_KEY"])))


REDIS_URL: Final = os.environ["MCPKIT_REDIS_URL"]
TASK_TTL_SECONDS: Final = _seconds("MCPKIT_TASK_TTL_SECONDS", 3600.0)

server = Server(
    everything.registry,
    cors=CorsPolicy.loopback(),
    keyring=shared_keyring(),
    subscription_authorizer=everything.grant_listen,
    task_store=RedisTaskStore(
        REDIS_URL,
        node=os.environ.get("MCPKIT_NODE"),
        lease_seconds=_seconds("MCPKIT_TASK_LEASE_SECONDS", 15.0),
    ),
    broadcaster=RedisBroadcaster(REDIS_URL),
    sessions=RedisSessionStore(REDIS_URL),
    limits=Limits(
        task_ttl_seconds=TASK_TTL_SECONDS,
        # a task may not run longer than it is kept
        task_timeout_seconds=min(DEFAULT_LIMITS.task_timeout_seconds, TASK_TTL_SECONDS),
    ),
)

# The fixture's own tools (touch_watched_resource, the catalog triggers) act on the module's
# ``server``: point it at the one served here, so that they reach this node's clients.
everything.server = server
