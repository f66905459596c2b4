"""fastmcp 4.1.6's benchmark server, as in the peers survey.

``BENCH_VARIANT`` is ``def`` (default), ``async`` (``async def add``) or ``tools101`` (``def add``
plus 100 filler tools).  Stateless, JSON responses, path ``/mcp``; 2026-07-28 and 2025-11-25
on that URL.  Run with the peers' venv:
``BENCH_VARIANT=def uvicorn app_fastmcp:app --app-dir bench/http --port 8102 --workers 1``.

fastmcp is installed only in the peers' venv (``bench/http/setup.sh``), not in the project's,
so it is imported by name here and type-checked as ``Any``; ``mcp.tool(fn)`` is what the
``@mcp.tool`` decorator does.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

VARIANT = os.environ.get("BENCH_VARIANT", "def")
FILLER_TOOLS = 100

fastmcp: Any = importlib.import_module("fastmcp")
mcp: Any = fastmcp.FastMCP("bench-fastmcp", version="0.0.1")


def add(a: int, b: int) -> int:
    return a + b


async def add_async(a: int, b: int) -> int:
    return a + b


def _filler(a: int, b: int) -> int:
    return a + b


if VARIANT == "async":
    mcp.tool(add_async, name="add")
elif VARIANT in ("def", "tools101"):
    mcp.tool(add)
else:
    raise SystemExit(f"BENCH_VARIANT must be def, async or tools101, not {VARIANT!r}")

if VARIANT == "tools101":
    for index in range(FILLER_TOOLS):
        mcp.tool(
            _filler,
            name=f"tool_{index:03d}",
            description=f"Benchmark filler tool number {index}: returns the sum of a and b.",
        )

app: Any = mcp.http_app(path="/mcp", stateless_http=True, json_response=True)
