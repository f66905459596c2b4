"""A handler that fails is logged once, where a developer can find it: the method, the
operation, the endpoint, the request id and the traceback's frames, and never the exception's
message (it may hold what the client sent) nor a resource's URI.  The client still gets only the
fixed -32603."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import pytest

import mcpkit
from mcpkit import CompleteResult, PromptOutput, ResourceOutput, Revision, Server
from mcpkit.testing import TestClient, stateless_headers, stateless_request

MODERN = Revision.V2026_07_28
SECRET = "what-the-client-sent"


@dataclass(frozen=True)
class Sum:
    total: int


@mcpkit.endpoint(path="/mcp", name="failing", version="1.0.0", revisions={MODERN})
class Failing:
    @mcpkit.tool(name="lookup")
    def lookup(self, key: str) -> CompleteResult:
        return CompleteResult.from_tool_text({"known": "yes"}[key])  # KeyError for others

    @mcpkit.tool(name="lookup_async")
    async def lookup_async(self, key: str) -> CompleteResult:
        raise ValueError(f"no such key: {key}")

    @mcpkit.tool(name="typed")
    def typed(self, a: int) -> Sum:
        return {"total": a}  # type: ignore[return-value]  # a dict, not the declared Sum

    @mcpkit.tool(name="untyped")
    def untyped(self, a: int) -> CompleteResult:
        return "plain text"  # type: ignore[return-value]

    @mcpkit.prompt(name="greet")
    def greet(self, who: str) -> PromptOutput:
        raise RuntimeError(f"cannot greet {who}")

    @mcpkit.resource(uri="mem://items/{item}", name="item")
    def item(self, item: str) -> ResourceOutput:
        raise LookupError(item)


def call(method: str, params: dict[str, object], request_id: str | int = 7) -> Any:
    name = params.get("name", params.get("uri"))
    headers = stateless_headers(method, name if isinstance(name, str) else None)
    with TestClient(Server(Failing)) as client:
        response = client.post(
            "/mcp", stateless_request(method, params, id=request_id), headers=headers
        )
    return response.json


def logged(caplog: pytest.LogCaptureFixture) -> str:
    (record,) = [r for r in caplog.records if r.name == "mcpkit.server"]
    assert record.levelno == logging.ERROR
    return record.getMessage()


@pytest.mark.parametrize(
    ("tool", "function", "error"),
    [("lookup", "lookup", "KeyError"), ("lookup_async", "lookup_async", "ValueError")],
)
def test_a_failing_tool_is_logged_with_where_and_its_frames(
    caplog: pytest.LogCaptureFixture, tool: str, function: str, error: str
) -> None:
    answer = call("tools/call", {"name": tool, "arguments": {"key": SECRET}})
    assert answer["error"] == {"code": -32603, "message": "Internal error"}
    message = logged(caplog)
    assert message.startswith(
        f"mcpkit: the handler of tools/call '{tool}' at '/mcp' (request id 7) raised {error}\n"
        "Traceback (most recent call last):\n"
    )
    assert f"in {function}\n" in message and "test_handler_errors.py" in message
    assert message.endswith(f"{error} (its message is not logged)")
    assert SECRET not in message and SECRET not in caplog.text


def test_a_failing_prompt_is_logged_by_name(caplog: pytest.LogCaptureFixture) -> None:
    answer = call("prompts/get", {"name": "greet", "arguments": {"who": SECRET}}, "r-1")
    assert answer["error"]["code"] == -32603
    message = logged(caplog)
    assert "prompts/get 'greet' at '/mcp' (request id 'r-1') raised RuntimeError" in message
    assert "in greet\n" in message and SECRET not in message


def test_a_failing_resource_is_known_by_its_frames_not_its_uri(
    caplog: pytest.LogCaptureFixture,
) -> None:
    answer = call("resources/read", {"uri": f"mem://items/{SECRET}"})
    assert answer["error"]["code"] == -32603
    message = logged(caplog)
    assert message.startswith("mcpkit: the handler of resources/read at '/mcp' (request id 7)")
    assert "in item\n" in message and SECRET not in message


def test_a_long_request_id_is_cut_short_in_the_log(caplog: pytest.LogCaptureFixture) -> None:
    call("tools/call", {"name": "lookup", "arguments": {"key": "k"}}, "x" * 100)
    assert f"(request id '{'x' * 64}...')" in logged(caplog)


def test_a_wrong_return_type_says_what_came(caplog: pytest.LogCaptureFixture) -> None:
    assert call("tools/call", {"name": "typed", "arguments": {"a": 1}})["error"]["code"] == -32603
    assert logged(caplog) == (
        "mcpkit: the handler of tools/call 'typed' at '/mcp' (request id 7) returned dict, "
        "which its declared output type does not accept"
    )
    caplog.clear()
    assert call("tools/call", {"name": "untyped", "arguments": {"a": 1}})["error"]["code"] == -32603
    assert logged(caplog) == (
        "mcpkit: the handler of tools/call 'untyped' at '/mcp' (request id 7) returned str; a "
        "tool without a declared output type returns CompleteResult or InputRequiredResult (or a "
        "str, when its function is annotated -> str)"
    )
