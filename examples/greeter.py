"""Asks the user for their name, then greets them: one handler for every revision.

On 2026-07-28 the client gets an input-required result and retries with the answer; in a
2025-11-25 session (and over stdio) mcpkit asks the client itself and runs the handler again.
Serve it with ``mcpkit serve examples/greeter.py``.
"""

import mcpkit
from mcpkit import Revision

greeter = mcpkit.EndpointBuilder(
    "greeter", version="1.0.0", session_revisions={Revision.V2025_11_25}
)

ASK_NAME = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "What is your name?",
        "requestedSchema": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        },
    },
}


@greeter.tool(input_requests=[mcpkit.InputRequestDeclaration.elicitation_form()])
def greet(ctx: mcpkit.RequestContext) -> mcpkit.CompleteResult | mcpkit.InputRequiredResult:
    """Greet the user by name, asking for it first."""
    answer = ctx.elicitation("name")
    if answer is None or not answer.accepted or answer.content is None:
        return mcpkit.InputRequiredResult(input_requests={"name": ASK_NAME})
    return mcpkit.CompleteResult.from_tool_text(f"Hello, {answer.content['name']}!")
