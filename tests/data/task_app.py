"""The app ``tests/reliability/test_task_restart.py`` serves with ``mcpkit serve --tasks-db``:
task tools that take a while (one of them safe to run again) and one that answers with
non-ASCII text at once.  It names only a registry, so the command line's ``--tasks-db`` gives
the server its task store."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from typing import Final

from mcpkit import CompleteResult, Revision, TaskSupport, endpoint, tool

GREETING: Final = 'Grüße, Zoë: 東京は晴れ ☃ \U0001f600\n\t"quoted" \\ done'
"""Non-ASCII, escapes and a character outside the BMP: what a restart must keep byte for
byte."""


@dataclass(frozen=True)
class Greeting:
    greeting: str
    name: str


@endpoint(path="/mcp", name="task-restart", version="1.0.0", revisions={Revision.V2026_07_28})
class Jobs:
    @tool(description="Sleeps `seconds`, then says so", task_support=TaskSupport.OPTIONAL)
    async def stall(self, seconds: float) -> CompleteResult:
        await asyncio.sleep(seconds)
        return CompleteResult.from_tool_text(f"slept {seconds:g} s")

    @tool(
        description="Sleeps `seconds`, then names the process it ran in; safe to run again",
        idempotent=True,
        task_support=TaskSupport.OPTIONAL,
    )
    async def redo(self, seconds: float) -> CompleteResult:
        await asyncio.sleep(seconds)
        return CompleteResult.from_tool_text(f"done by process {os.getpid()}")

    @tool(description="Greets someone in many scripts", task_support=TaskSupport.OPTIONAL)
    def greet(self, name: str) -> Greeting:
        return Greeting(greeting=GREETING, name=name)


registry = Jobs
