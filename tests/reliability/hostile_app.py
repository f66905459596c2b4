"""The server the reliability tests start with ``mcpkit serve``: tools that misbehave the way
real ones do (report progress forever, ignore their token, take a while), with limits small
enough that every bound is reached in seconds.

The limits come from the environment, so each test starts the server it needs.
"""

from __future__ import annotations

import json
import os
import threading
import time

from mcpkit import (
    AdmissionRequest,
    Admitted,
    CancellationToken,
    CompleteResult,
    InputRequestDeclaration,
    InputRequiredResult,
    Limits,
    ProgressReporter,
    RequestContext,
    Revision,
    Server,
    endpoint,
    tool,
)

_LIMITS = json.loads(os.environ.get("HOSTILE_LIMITS", "{}"))
_DRAIN = float(os.environ.get("HOSTILE_DRAIN", "5"))
_PAD = "x" * 1024


@endpoint(path="/mcp", name="hostile", version="1.0.0",
          revisions={Revision.V2026_07_28, Revision.V2025_11_25, Revision.V2025_06_18})  # fmt: skip
class Hostile:
    @tool(name="chatty", description="Reports progress `count` times, ignoring its token")
    def chatty(self, count: int, progress: ProgressReporter | None) -> CompleteResult:
        for step in range(1, count + 1):
            if progress is not None:
                progress.report(step, count, message=_PAD)
        return CompleteResult.from_tool_text("done")

    @tool(name="chatty_slow", description="Reports once, then sleeps `seconds`, ignoring its token")
    def chatty_slow(self, seconds: float, progress: ProgressReporter | None) -> CompleteResult:
        if progress is not None:
            progress.report(1)
        time.sleep(seconds)
        return CompleteResult.from_tool_text("slept")

    @tool(name="sleepy", description="Sleeps `seconds`, ignoring its token")
    def sleepy(self, seconds: float) -> CompleteResult:
        time.sleep(seconds)
        return CompleteResult.from_tool_text("slept")

    @tool(name="patient", description="Sleeps `seconds` unless its token is cancelled first")
    def patient(self, seconds: float, token: CancellationToken) -> CompleteResult:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            token.raise_if_cancelled()
            time.sleep(0.01)
        return CompleteResult.from_tool_text("patient")

    @tool(name="quick", description="Answers at once")
    def quick(self) -> CompleteResult:
        return CompleteResult.from_tool_text("quick")

    @tool(name="threads", description="How many threads the server runs")
    async def threads(self) -> CompleteResult:
        return CompleteResult.from_tool_text(str(threading.active_count()))


@endpoint(path="/sessions", name="sessions", version="1.0.0", revisions={Revision.V2025_11_25},
          session_revisions={Revision.V2025_11_25})  # fmt: skip
class Sessions:
    """A 2025 endpoint that keeps sessions, owned by the ``X-Owner`` header."""

    @tool(name="quick", description="Answers at once")
    def quick(self) -> CompleteResult:
        return CompleteResult.from_tool_text("quick")

    @tool(
        name="asks",
        description="Asks the client for its roots, then lists them",
        input_requests=[InputRequestDeclaration.roots()],
    )
    def asks(self, ctx: RequestContext) -> CompleteResult | InputRequiredResult:
        answer = ctx.roots("roots")
        if answer is None:
            return InputRequiredResult(input_requests={"roots": {"method": "roots/list"}})
        return CompleteResult.from_tool_text(",".join(root.uri for root in answer.roots))


def _owner(request: AdmissionRequest) -> Admitted:
    """The owner a test names in ``X-Owner`` (a stand-in for a verified credential)."""
    assert request.http_request is not None
    return Admitted(authorization=dict(request.http_request.headers).get("x-owner"))


if os.environ.get("HOSTILE_SESSIONS"):
    server = Server([Hostile, Sessions], limits=Limits(**_LIMITS), admission=_owner)
else:
    server = Server(Hostile, limits=Limits(**_LIMITS), drain_seconds=_DRAIN)
