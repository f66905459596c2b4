"""The official SDK's benchmark server (``mcp`` 2.3.0, ``MCPServer``), as in the peers survey.

``BENCH_VARIANT`` is ``def`` (default), ``async`` (``async def add``), ``tools101`` (``def add``
plus 100 filler tools) or ``session`` (``async def add``, stateful: the SDK's session manager
issues ``Mcp-Session-Id`` on ``initialize``).  The others are stateless; all answer with JSON
on path ``/mcp``, serving 2026-07-28 and (statelessly, without ``initialize``) 2025-11-25.
``add`` returns an ``int``, which the SDK publishes as ``outputSchema {"result": integer}`` and
returns as ``structuredContent {"result": 5}``.  Run with the peers' venv:
``BENCH_VARIANT=def uvicorn app_mcp:app --app-dir bench/http --port 8101 --workers 1``.
"""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer

VARIANT = os.environ.get("BENCH_VARIANT", "def")
FILLER_TOOLS = 100

mcp = MCPServer("bench-mcp", version="0.0.1", log_level="WARNING")


def add(a: int, b: int) -> int:
    return a + b


async def add_async(a: int, b: int) -> int:
    return a + b


def _filler(a: int, b: int) -> int:
    return a + b


if VARIANT in ("async", "session"):
    mcp.tool(name="add")(add_async)
elif VARIANT in ("def", "tools101"):
    mcp.tool()(add)
else:
    raise SystemExit(f"BENCH_VARIANT must be def, async, tools101 or session, not {VARIANT!r}")

if VARIANT == "tools101":
    for index in range(FILLER_TOOLS):
        mcp.tool(
            name=f"tool_{index:03d}",
            description=f"Benchmark filler tool number {index}: returns the sum of a and b.",
        )(_filler)

app = mcp.streamable_http_app(stateless_http=VARIANT != "session", json_response=True)
