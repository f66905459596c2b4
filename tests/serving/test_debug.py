"""Development mode, ``Server(debug=True)``: a handler's unexpected exception is answered with
the exception's type name in ``error.data.exceptionType``, never its message or arguments; off
by default; refused unless the server binds a loopback host.  The failure is logged as it is
without development mode."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

import mcpkit
from mcpkit import (
    CompleteResult,
    ConfigurationError,
    InternalError,
    InvalidParams,
    PromptOutput,
    Revision,
    Server,
)
from mcpkit.json import from_python
from mcpkit.protocol import HandlerFailure, wire_error
from mcpkit.testing import TestClient, handshake_request, stateless_headers, stateless_request

from ..server.tasks_support import reach, start
from ..wire import assert_valid

MODERN = Revision.V2026_07_28
NOVEMBER = Revision.V2025_11_25
SECRET = "what-the-client-sent"
INTERNAL = {"code": -32603, "message": "Internal error"}


class Refusal(Exception):
    """An application's own exception type."""


@mcpkit.endpoint(path="/mcp", name="dev", version="1.0.0", revisions={MODERN, NOVEMBER})
class Failing:
    @mcpkit.tool(name="lookup")
    def lookup(self, key: str) -> CompleteResult:
        return CompleteResult.from_tool_text({"known": "yes"}[key])  # KeyError(key)

    @mcpkit.tool(name="refuse")
    async def refuse(self, key: str) -> CompleteResult:
        raise Refusal(f"refused {key}")

    @mcpkit.tool(name="invalid")
    def invalid(self, key: str) -> CompleteResult:
        raise InvalidParams()  # on purpose: keeps its own wire form

    @mcpkit.prompt(name="greet")
    def greet(self, who: str) -> PromptOutput:
        raise RuntimeError(f"cannot greet {who}")


def modern(server: Server, method: str, params: dict[str, object]) -> tuple[int, Any]:
    name = params["name"]
    assert isinstance(name, str)
    with TestClient(server) as client:
        response = client.post(
            "/mcp", stateless_request(method, params, id=7), headers=stateless_headers(method, name)
        )
    message: Any = response.json
    assert_valid(MODERN.wire, method, [from_python(message)])
    return response.status, message


def november(server: Server, method: str, params: dict[str, object]) -> tuple[int, Any]:
    with TestClient(server) as client:
        response = client.post(
            "/mcp",
            handshake_request(method, params, id=7),
            headers={"MCP-Protocol-Version": NOVEMBER.wire},
        )
    message: Any = response.json
    assert_valid(NOVEMBER.wire, method, [from_python(message)])
    return response.status, message


CALLS: list[tuple[str, dict[str, object], str]] = [
    ("tools/call", {"name": "lookup", "arguments": {"key": SECRET}}, "KeyError"),
    ("tools/call", {"name": "refuse", "arguments": {"key": SECRET}}, "Refusal"),
    ("prompts/get", {"name": "greet", "arguments": {"who": SECRET}}, "RuntimeError"),
]


@pytest.mark.parametrize(("method", "params", "kind"), CALLS)
def test_on_2026_debug_adds_the_exception_type_and_nothing_else(
    method: str, params: dict[str, object], kind: str
) -> None:
    status, message = modern(Server(Failing, debug=True), method, params)
    assert status == 500
    assert message == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {**INTERNAL, "data": {"exceptionType": kind}},
    }
    assert SECRET not in json.dumps(message)


@pytest.mark.parametrize(("method", "params", "kind"), CALLS)
def test_on_2025_debug_adds_the_exception_type_in_http_200(
    method: str, params: dict[str, object], kind: str
) -> None:
    status, message = november(Server(Failing, debug=True), method, params)
    assert status == 200
    assert message["error"] == {**INTERNAL, "data": {"exceptionType": kind}}
    assert SECRET not in json.dumps(message)


@pytest.mark.parametrize(("method", "params", "kind"), CALLS)
def test_without_debug_the_error_is_the_fixed_one(
    method: str, params: dict[str, object], kind: str
) -> None:
    server = Server(Failing)
    assert server.debug is False
    assert modern(server, method, params) == (500, {"jsonrpc": "2.0", "id": 7, "error": INTERNAL})
    assert november(server, method, params) == (200, {"jsonrpc": "2.0", "id": 7, "error": INTERNAL})


def test_a_protocol_error_raised_on_purpose_is_unchanged_by_debug() -> None:
    params: dict[str, object] = {"name": "invalid", "arguments": {"key": "k"}}
    plain = modern(Server(Failing), "tools/call", params)
    assert modern(Server(Failing, debug=True), "tools/call", params) == plain
    assert plain[1]["error"] == {"code": -32602, "message": "Invalid params"}


def test_the_failure_is_logged_as_without_debug(caplog: pytest.LogCaptureFixture) -> None:
    modern(Server(Failing, debug=True), "tools/call", CALLS[0][1])
    (record,) = [r for r in caplog.records if r.name == "mcpkit.server"]
    assert record.levelno == logging.ERROR
    assert record.getMessage().startswith(
        "mcpkit: the handler of tools/call 'lookup' at '/mcp' (request id 7) raised KeyError\n"
        "Traceback (most recent call last):\n"
    )
    assert SECRET not in caplog.text


def test_stdio_answers_with_the_type_too() -> None:
    written: list[bytes] = []

    async def write(message: bytes) -> None:
        written.append(message)

    line = json.dumps(stateless_request("tools/call", CALLS[0][1], id=3)).encode()
    connection = Server(Failing, debug=True).stdio_connection()
    asyncio.run(connection.receive(line, write))
    assert json.loads(written[0])["error"] == {**INTERNAL, "data": {"exceptionType": "KeyError"}}


def test_the_wire_mapping_writes_the_type_only_when_asked() -> None:
    failure = HandlerFailure("KeyError")
    assert isinstance(failure, InternalError) and failure.data is None
    for revision in (None, NOVEMBER, MODERN):
        status, plain = wire_error(failure, revision)
        assert plain is failure and plain.data is None
        shown_status, shown = wire_error(failure, revision, debug=True)
        assert (shown_status, shown.jsonrpc_code) == (status, -32603)
        assert shown.data == {"exceptionType": "KeyError"}
    other = InternalError()
    assert wire_error(other, MODERN, debug=True) == (500, other)


@mcpkit.endpoint(path="/mcp", name="jobs", version="1.0.0", revisions={MODERN})
class Jobs:
    @mcpkit.tool(name="crash", task_support=mcpkit.TaskSupport.OPTIONAL)
    async def crash(self, key: str) -> CompleteResult:
        raise LookupError(key)


@pytest.mark.parametrize(
    ("debug", "data"), [(True, {"exceptionType": "LookupError"}), (False, None)]
)
def test_a_failed_tasks_stored_error_has_the_type_in_debug_only(
    debug: bool, data: dict[str, str] | None
) -> None:
    server = Server(Jobs, task_store=mcpkit.MemoryTaskStore(), debug=debug)
    with TestClient(server) as client:
        failed = reach(client, start(client, "crash", {"key": SECRET}), "failed")
    expected: dict[str, object] = dict(INTERNAL)
    if data is not None:
        expected["data"] = data
    assert failed["error"] == expected
    assert SECRET not in json.dumps(failed)


# --- refusals -----------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1"])
def test_debug_is_allowed_on_loopback_hosts(host: str) -> None:
    assert Server(Failing, host=host, debug=True).debug is True


LOOPBACK_ONLY = (
    "Server: debug=True tells clients the type of a handler's exception; it is for development "
    "on a loopback host only (127.0.0.1, localhost or ::1)"
)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "mcp.example"])
def test_debug_is_refused_on_any_other_host(host: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        Server(Failing, host=host, allowed_hosts=["mcp.example"], debug=True)
    assert str(caught.value) == LOOPBACK_ONLY
    exposed = Server(Failing, host=host, allowed_hosts=["mcp.example"])
    with pytest.raises(ConfigurationError, match=r"^Server: debug=True tells"):
        exposed.configured(debug=True)
    with pytest.raises(ConfigurationError, match=r"^Server: debug=True tells"):
        Server(Failing, debug=True).configured(host=host, allowed_hosts=["mcp.example"])


@pytest.mark.parametrize("debug", [1, "yes", None])
def test_debug_must_be_a_bool(debug: Any) -> None:
    with pytest.raises(ConfigurationError) as caught:
        Server(Failing, debug=debug)
    assert str(caught.value) == "Server: debug must be True or False"


def test_configured_keeps_or_changes_debug() -> None:
    server = Server(Failing, debug=True)
    assert server.configured(port=9001).debug is True
    assert server.configured(debug=False).debug is False
    assert Server(Failing).configured(debug=True).debug is True
    params: dict[str, object] = {"name": "lookup", "arguments": {"key": "k"}}
    assert "data" not in modern(server.configured(debug=False), "tools/call", params)[1]["error"]
    assert (
        "data" in modern(Server(Failing).configured(debug=True), "tools/call", params)[1]["error"]
    )


def test_configured_replaces_the_allowed_hosts() -> None:
    server = Server(Failing, allowed_hosts=["a.example"])
    assert server.allowed_hosts == frozenset({"a.example"})
    moved = server.configured(host="0.0.0.0", allowed_hosts=iter(["b.example", "c.example"]))
    assert moved.allowed_hosts == frozenset({"b.example", "c.example"})
    assert server.configured(port=9002).allowed_hosts == frozenset({"a.example"})
    body = stateless_request("tools/list")
    with TestClient(moved) as client:
        statuses = [
            client.post("/mcp", body, headers={**stateless_headers("tools/list"), "Host": h}).status
            for h in ("a.example", "b.example", "C.example:443")
        ]
    assert statuses == [421, 200, 200]
