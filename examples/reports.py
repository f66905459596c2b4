"""Sales reports that take a while to build: a long-running tool served as a task.

``mcpkit serve examples/reports.py`` serves ``http://127.0.0.1:8000/mcp`` (MCP 2026-07-28).
Tasks are kept in the SQLite file ``MCPKIT_REPORTS_DB`` names (``reports.db`` in the working
directory by default), so a finished report can still be fetched after a restart, and a report
the server was building when it stopped fails with -31903 ("call the tool again").

A client that declares the tasks extension on the request (``_meta``
``io.modelcontextprotocol/clientCapabilities``:
``{"extensions": {"io.modelcontextprotocol/tasks": {}}}``) gets a task id at once, then polls::

    -> tools/call {"name": "build_report", "arguments": {"region": "EMEA", "months": 6}}
    <- {"resultType": "task", "taskId": "Xy...", "status": "working", "pollIntervalMs": 1000}
    -> tasks/get {"taskId": "Xy..."}          (header Mcp-Name: Xy...; every pollIntervalMs)
    <- {"status": "working", "statusMessage": "EMEA: month 3 of 6 done"}
    <- {"status": "completed", "result": {"structuredContent": {"region": "EMEA", ...}}}

``tasks/cancel`` stops the build after the month in hand.  A client without the extension
waits for the same result inline.  ``email_report`` first asks the user to confirm: as a task
it turns ``input_required`` (its ``inputRequests`` are in ``tasks/get``) until the client
answers through ``tasks/update``; inline, the client retries the call with the answer.
"""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass
from typing import Annotated, Final

from mcpkit import (
    Arg,
    CancellationToken,
    CompleteResult,
    InputRequestDeclaration,
    InputRequiredResult,
    ProgressReporter,
    RequestContext,
    Revision,
    Server,
    SqliteTaskStore,
    TaskSupport,
    endpoint,
    tool,
)

STEP_SECONDS: Final = 1.0
"""How long one month's figures take to gather (a slow warehouse query, here a sleep)."""


@dataclass(frozen=True)
class Report:
    region: str
    months: int
    monthly_sales: list[int]
    total_sales: int


def confirmation(message: str) -> dict[str, object]:
    """An ``elicitation/create`` form with one required yes/no field, ``send``."""
    schema = {"type": "object", "properties": {"send": {"type": "boolean"}}, "required": ["send"]}
    return {
        "method": "elicitation/create",
        "params": {"mode": "form", "message": message, "requestedSchema": schema},
    }


@endpoint(path="/mcp", name="reports", version="1.0.0", revisions={Revision.V2026_07_28})
class Reports:
    @tool(
        description="Builds a region's sales report month by month; slow, so a task when the "
        "client can take one",
        read_only=True,
        task_support=TaskSupport.OPTIONAL,
    )
    def build_report(
        self,
        region: str,
        months: Annotated[int, Arg(minimum=1, maximum=24)],
        token: CancellationToken,
        progress: ProgressReporter | None,
    ) -> Report:
        figures = random.Random(region)  # stand-in figures, the same for a region every time
        monthly: list[int] = []
        for month in range(1, months + 1):
            token.raise_if_cancelled()  # tasks/cancel (or a client gone) stops here
            time.sleep(STEP_SECONDS)
            monthly.append(figures.randrange(10_000, 100_000))
            if progress is not None:  # in a task: its statusMessage
                progress.report(month, months, f"{region}: month {month} of {months} done")
        return Report(region, months, monthly, sum(monthly))

    @tool(
        description="Emails a region's report to the given addresses, once the user confirms",
        input_requests=[InputRequestDeclaration.elicitation_form()],
        task_support=TaskSupport.OPTIONAL,
    )
    def email_report(
        self, ctx: RequestContext, region: str, recipients: list[str]
    ) -> CompleteResult | InputRequiredResult:
        answer = ctx.elicitation("confirm")
        if answer is None:
            question = f"Email the {region} report to {len(recipients)} recipient(s)?"
            return InputRequiredResult(input_requests={"confirm": confirmation(question)})
        if not answer.accepted or answer.content is None or answer.content.get("send") is not True:
            return CompleteResult.from_tool_text("Not sent")
        return CompleteResult.from_tool_text(f"Sent the {region} report to {', '.join(recipients)}")


server = Server(
    Reports, task_store=SqliteTaskStore(os.environ.get("MCPKIT_REPORTS_DB", "reports.db"))
)
