"""Checking every JSON-RPC message a test receives against the official schema of its
revision: the envelope definition for its kind, then the concrete result
definition for the method (chosen by ``resultType`` on 2026-07-28)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mcpkit.json import JsonValue, from_python

from .spec_schemas import schema_errors

RESULTS = {
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "logging/setLevel": "EmptyResult",
    "server/discover": "DiscoverResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "completion/complete": "CompleteResult",
}

_ERROR = {"2025-06-18": "JSONRPCError"}
_RESULT = {"2025-06-18": "JSONRPCResponse"}


def _plain(value: object) -> Any:
    """JSON values as ``json.loads`` would give them (Decimals become floats or ints)."""
    import json

    from mcpkit.json import encode

    return json.loads(encode(from_python(value)))


def message_errors(revision: str, method: str | None, message: JsonValue) -> list[str]:
    """Every schema error of one received message (empty: valid).

    ``method`` is the request's method, used to pick the result definition; ``None`` checks
    the envelope only.
    """
    value = _plain(message)
    if not isinstance(value, dict):
        return ["not a JSON object"]
    if "method" in value:
        return schema_errors(revision, "JSONRPCNotification", value)
    if "error" in value:
        definition = _ERROR.get(revision, "JSONRPCErrorResponse")
        return schema_errors(revision, definition, value)
    errors = schema_errors(revision, _RESULT.get(revision, "JSONRPCResultResponse"), value)
    result = value.get("result")
    if method is None or not isinstance(result, dict):
        return errors
    if result.get("resultType") == "input_required":
        return errors + schema_errors(revision, "InputRequiredResult", result)
    concrete = RESULTS.get(method)
    if concrete is not None:
        errors += schema_errors(revision, concrete, result)
    return errors


def assert_valid(revision: str, method: str | None, messages: Iterable[JsonValue]) -> None:
    """Fail with the schema errors of any message that is not valid for ``revision``."""
    problems = [
        f"{index}: {error}"
        for index, message in enumerate(messages)
        for error in message_errors(revision, method, message)
    ]
    assert not problems, problems
