"""``ToolError``: a tool handler raises it to tell the model what went wrong, in the author's
own words; the call answers an ``isError`` result with that text, on every revision, through
the sanitizer, and nothing is logged as a failure.  Anything else raised stays the fixed
-32603."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

import mcpkit
from mcpkit import CompleteResult, Revision, Server, ToolError
from mcpkit.testing import TestClient, handshake_request, stateless_headers, stateless_request

JUNE, NOVEMBER, MODERN = Revision.V2025_06_18, Revision.V2025_11_25, Revision.V2026_07_28


@dataclass(frozen=True)
class Found:
    title: str


@mcpkit.endpoint(path="/mcp", name="books", version="1.0.0", revisions={JUNE, NOVEMBER, MODERN})
class Books:
    @mcpkit.tool(name="find")
    def find(self, isbn: str) -> Found:
        raise ToolError("No book has that ISBN; check the digits and try again.")

    @mcpkit.tool(name="find_async")
    async def find_async(self, isbn: str) -> CompleteResult:
        raise ToolError("The catalog is being rebuilt; try again in a minute.")


def call(name: str, revision: Revision, **options: Any) -> Any:
    params = {"name": name, "arguments": {"isbn": "123"}}
    with TestClient(Server(Books, **options)) as client:
        if revision is MODERN:
            body = stateless_request("tools/call", params)
            response = client.post("/mcp", body, headers=stateless_headers("tools/call", name))
        else:
            body = handshake_request("tools/call", params)
            response = client.post("/mcp", body, headers={"mcp-protocol-version": revision.wire})
    assert response.status == 200
    return response.json


@pytest.mark.parametrize("revision", [JUNE, NOVEMBER, MODERN])
@pytest.mark.parametrize(
    ("tool", "text"),
    [
        ("find", "No book has that ISBN; check the digits and try again."),
        ("find_async", "The catalog is being rebuilt; try again in a minute."),
    ],
)
def test_a_tool_error_is_an_is_error_result_with_the_authors_text(
    revision: Revision, tool: str, text: str, caplog: pytest.LogCaptureFixture
) -> None:
    result = call(tool, revision)["result"]
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": text}]
    assert "structuredContent" not in result
    assert not [record for record in caplog.records if record.name == "mcpkit.server"]


def test_a_tool_error_goes_through_the_sanitizer() -> None:
    def sanitize(ctx: object, name: str, arguments: object, result: CompleteResult) -> Any:
        return CompleteResult.from_tool_error_text("[redacted]")

    result = call("find", MODERN, sanitizer=sanitize)["result"]
    assert result["content"] == [{"type": "text", "text": "[redacted]"}]


def test_a_tool_error_needs_text() -> None:
    with pytest.raises(TypeError, match="text must be a str"):
        ToolError(42)  # type: ignore[arg-type]
    assert str(ToolError("x")) == "x" and ToolError("x").text == "x"
