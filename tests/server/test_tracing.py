"""OpenTelemetry traces (``Server(tracing=...)``): one SERVER span per HTTP message, named and
labelled by the MCP semantic conventions from fixed sets only, a pseudonym for the session id,
the caller's ``traceparent`` honoured, error outcomes as ``ERROR``, nothing a client chose in
a name or attribute, and ``opentelemetry`` never imported with tracing off."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any, cast

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from mcpkit import (
    CompleteResult,
    ConfigurationError,
    MemoryTaskStore,
    Revision,
    Server,
    TaskSupport,
    endpoint,
    tool,
)
from mcpkit.protocol import HeaderFields
from mcpkit.server import HttpExchange
from mcpkit.server._metrics import MeteredResponder
from mcpkit.testing import (
    TestClient,
    TestResponse,
    handshake_request,
    stateless_headers,
    stateless_request,
)

CANARY = "canary5d1e"
"""Put into every client-chosen field: it must never appear in a span."""
MODERN = Revision.V2026_07_28
NOVEMBER = Revision.V2025_11_25
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
PROVIDER = TracerProvider()
EXPORTER = InMemorySpanExporter()
PROVIDER.add_span_processor(SimpleSpanProcessor(EXPORTER))


@endpoint(path="/mcp", name="traced", version="1.0.0", revisions={MODERN, NOVEMBER})
class Traced:
    @tool
    def add(self, a: int, b: int) -> str:
        """Adds."""
        return str(a + b)

    @tool
    async def inner(self) -> str:
        """Opens a span of the application's own."""
        with PROVIDER.get_tracer("app").start_as_current_span("app work"):
            await asyncio.sleep(0)
        return "done"

    @tool(task_support=TaskSupport.OPTIONAL)
    async def job(self) -> CompleteResult:
        """Maybe a task."""
        return CompleteResult.from_tool_text("done")


@endpoint(
    path="/s", name="sessions", version="1.0.0", revisions={NOVEMBER}, session_revisions={NOVEMBER}
)
class Sessions:
    @tool
    def ping(self) -> str:
        """Pong."""
        return "pong"


def traced_server(**options: Any) -> Server:
    return Server(Traced, task_store=MemoryTaskStore(), **options)


@pytest.fixture(autouse=True)
def clear() -> None:
    EXPORTER.clear()


def spans() -> list[ReadableSpan]:
    return list(EXPORTER.get_finished_spans())


def only() -> ReadableSpan:
    found = spans()
    assert len(found) == 1, [span.name for span in found]
    return found[0]


def call(
    client: TestClient,
    name: str,
    arguments: dict[str, object] | None = None,
    *,
    id: str | int = 1,
    headers: dict[str, str] | None = None,
) -> TestResponse:
    body = stateless_request("tools/call", {"name": name, "arguments": arguments or {}}, id=id)
    sent = {**stateless_headers("tools/call", name), **(headers or {})}
    return client.post("/mcp", body, headers=sent)


def test_one_tools_call_is_one_span_with_the_conventions_names() -> None:
    with TestClient(traced_server(tracing=PROVIDER)) as client:
        assert call(client, "add", {"a": 1, "b": 2}).status == 200
    span = only()
    assert span.name == "tools/call add"
    assert span.kind is SpanKind.SERVER
    assert span.parent is None
    assert span.status.status_code is StatusCode.UNSET
    assert dict(span.attributes or {}) == {
        "network.protocol.name": "http",
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "add",
        "gen_ai.operation.name": "execute_tool",
        "mcp.protocol.version": "2026-07-28",
    }
    assert span.events == ()
    assert span.instrumentation_scope is not None
    assert span.instrumentation_scope.name == "mcpkit"


def test_an_error_outcome_is_an_error_span_and_an_unknown_tool_is_unknown() -> None:
    with TestClient(traced_server(tracing=PROVIDER)) as client:
        assert call(client, CANARY).status == 400
    span = only()
    assert span.name == "tools/call unknown"
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description is None
    assert dict(span.attributes or {}) == {
        "network.protocol.name": "http",
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "unknown",
        "gen_ai.operation.name": "execute_tool",
        "mcp.protocol.version": "2026-07-28",
        "error.type": "error",
    }


def test_other_messages_are_named_by_their_method_label() -> None:
    with TestClient(traced_server(tracing=PROVIDER)) as client:
        note = stateless_request("notifications/cancelled", {"requestId": 7}, id=None)
        headers = stateless_headers("notifications/cancelled")
        assert client.post("/mcp", note, headers=headers).status == 202
        assert client.post("/mcp", {"jsonrpc": "2.0", "id": 3, "result": {}}).status == 202
        assert client.post("/mcp", b"{not json", headers=stateless_headers("x")).status == 400
        # tools/call without params, and with a name that is not a string: ``unknown``.
        bare = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        assert client.post("/mcp", bare, headers=stateless_headers("tools/call")).status == 400
        numbered = stateless_request("tools/call", {"name": 5, "arguments": {}})
        assert client.post("/mcp", numbered, headers=stateless_headers("tools/call")).status == 400
    found = [(span.name, dict(span.attributes or {})) for span in spans()]
    assert found[0] == (
        "notifications/cancelled",
        {
            "network.protocol.name": "http",
            "mcp.method.name": "notifications/cancelled",
            "mcp.protocol.version": "2026-07-28",
        },
    )
    assert found[1] == (
        "response",
        {"network.protocol.name": "http", "mcp.method.name": "response"},
    )
    assert found[2] == (
        "other",
        {"network.protocol.name": "http", "mcp.method.name": "other", "error.type": "error"},
    )
    assert [name for name, _ in found[3:]] == ["tools/call unknown", "tools/call unknown"]
    assert all(attributes["gen_ai.tool.name"] == "unknown" for _, attributes in found[3:])


def test_nothing_a_client_chose_is_in_a_name_or_an_attribute() -> None:
    server = Server([Traced, Sessions], tracing=PROVIDER, task_store=MemoryTaskStore())
    with TestClient(server) as client:
        secret = {"authorization": f"Bearer {CANARY}", "tracestate": f"k={CANARY}"}
        assert call(client, "add", {"a": 1, "b": 2}, id=CANARY, headers=secret).status == 200
        assert call(client, "add", {"a": CANARY, "b": 2}, id=CANARY).status == 200  # isError
        assert call(client, CANARY, {"x": CANARY}, id=CANARY).status == 400
        get = stateless_request("tasks/get", {"taskId": CANARY}, id=CANARY)
        client.post("/mcp", get, headers=stateless_headers("tasks/get"))
        unknown = stateless_request(f"{CANARY}/method", id=CANARY)
        client.post("/mcp", unknown, headers=stateless_headers(f"{CANARY}/method"))
        read = stateless_request("resources/read", {"uri": f"x://{CANARY}"}, id=CANARY)
        client.post("/mcp", read, headers=stateless_headers("resources/read", f"x://{CANARY}"))
        version = {"MCP-Protocol-Version": "2025-11-25", "mcp-session-id": CANARY}
        ping = handshake_request("tools/call", {"name": "ping", "arguments": {}}, id=CANARY)
        client.post("/s", ping, headers=version)
    found = spans()
    assert len(found) == 7
    for span in found:
        text = json.dumps([span.name, dict(span.attributes or {})])
        assert CANARY not in text, text
        assert span.events == ()
        for value in (span.attributes or {}).values():
            assert isinstance(value, str) and value != CANARY
    hashed = dict(found[-1].attributes or {})["mcp.session.id"]
    assert isinstance(hashed, str) and len(hashed) == 16


def test_the_session_id_is_a_pseudonym_stable_within_the_process() -> None:
    from mcpkit.server._tracing import pseudonym

    with TestClient(Server(Sessions, tracing=PROVIDER)) as client:
        initialize = handshake_request(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c"}},
        )
        opened = client.post("/s", initialize)
        session = opened.header("mcp-session-id")
        assert opened.status == 200 and session
        headers = {"MCP-Protocol-Version": "2025-11-25", "mcp-session-id": f" {session} "}
        ping = handshake_request("tools/call", {"name": "ping", "arguments": {}}, id=2)
        assert client.post("/s", ping, headers=headers).status == 200
        # No session named: none recorded (the request is refused).
        assert client.post("/s", ping, headers={"MCP-Protocol-Version": "2025-11-25"}).status
    first, second, third = spans()
    assert first.name == "initialize" and second.name == "tools/call ping"
    hashed = pseudonym(session)
    assert hashed != session and len(hashed) == 16
    assert dict(first.attributes or {})["mcp.session.id"] == hashed
    assert dict(second.attributes or {})["mcp.session.id"] == hashed
    assert "mcp.session.id" not in dict(third.attributes or {})


def test_a_traceparent_makes_the_span_a_child_and_handler_spans_its_children() -> None:
    parent = f"00-{TRACE_ID}-{PARENT_ID}-01"
    with TestClient(traced_server(tracing=PROVIDER)) as client:
        assert call(client, "inner", headers={"traceparent": parent}).status == 200
    inner, span = spans()
    assert span.name == "tools/call inner"
    assert span.parent is not None and span.parent.is_remote
    assert span.parent.span_id == int(PARENT_ID, 16)
    assert span.context is not None and span.context.trace_id == int(TRACE_ID, 16)
    assert inner.name == "app work"
    assert inner.parent is not None and inner.parent.span_id == span.context.span_id
    assert parent not in json.dumps(dict(span.attributes or {}))


def test_a_repeated_traceparent_is_ignored() -> None:
    parent = ("traceparent", f"00-{TRACE_ID}-{PARENT_ID}-01")
    headers = [*stateless_headers("tools/call", "add").items(), parent, parent]
    body = stateless_request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
    with TestClient(traced_server(tracing=PROVIDER)) as client:
        assert client.post("/mcp", body, headers=headers).status == 200
    assert only().parent is None


def test_the_propagation_getter_lists_the_names_only() -> None:
    from mcpkit.server._tracing import _GETTER

    fields = HeaderFields((("traceparent", " x "), ("a", CANARY)))
    assert _GETTER.keys(fields) == ["traceparent", "a"]
    assert _GETTER.get(fields, "TraceParent") == ["x"]
    assert _GETTER.get(fields, "missing") is None


def test_the_metered_responder_notes_only_the_session_header() -> None:
    async def noted() -> str | None:
        responder = MeteredResponder(cast(HttpExchange, None))
        responder.header(b"x-other", b"value")
        assert responder.session is None
        responder.header(b"mcp-session-id", b"abc")
        return responder.session

    assert asyncio.run(noted()) == "abc"


def test_metrics_and_traces_together() -> None:
    with TestClient(traced_server(tracing=PROVIDER, metrics=True)) as client:
        assert call(client, "add", {"a": 1, "b": 2}).status == 200
        scrape = client.post("/metrics", b"", method="GET").body.decode()
    assert only().name == "tools/call add"
    assert 'mcpkit_requests_total{method="tools/call",revision="2026-07-28",outcome="ok"} 1' in (
        scrape
    )


def test_a_pipeline_that_raises_ends_its_span_as_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    server = traced_server(tracing=PROVIDER)

    async def broken(*arguments: object) -> None:
        raise RuntimeError("broken")

    with TestClient(server) as client:
        monkeypatch.setattr(server.engine.pipeline, "handle", broken)
        with pytest.raises(RuntimeError):
            call(client, "add")
        monkeypatch.undo()
    span = only()
    assert span.status.status_code is StatusCode.ERROR
    assert dict(span.attributes or {})["error.type"] == "error"
    assert span.events == ()
    assert trace.get_current_span() is trace.INVALID_SPAN  # the context was restored


def test_the_global_provider_without_an_sdk_records_nothing() -> None:
    server = traced_server(tracing=True)
    assert server.tracing
    with TestClient(server) as client:
        assert call(client, "add", {"a": 1, "b": 2}).status == 200
    assert spans() == []


def test_tracing_is_off_by_default_and_configurable() -> None:
    server = traced_server()
    assert not server.tracing and server.engine.tracing is None
    with TestClient(server) as client:
        assert call(client, "add", {"a": 1, "b": 2}).status == 200
    assert spans() == []
    assert server.configured(tracing=PROVIDER).tracing
    traced = traced_server(tracing=PROVIDER)
    assert traced.configured().tracing
    assert not traced.configured(tracing=False).tracing
    with pytest.raises(ConfigurationError, match="tracing must be"):
        Server(Traced, tracing="yes")  # type: ignore[arg-type]


def test_tracing_without_opentelemetry_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mcpkit.server._tracing", None)
    with pytest.raises(ConfigurationError, match=r"mcpkit\[otel\]"):
        traced_server(tracing=True)


def test_with_tracing_off_opentelemetry_is_never_imported() -> None:
    script = """
import json, sys
from mcpkit import Server, endpoint, tool
from mcpkit.cli import main
from mcpkit.testing import TestClient, stateless_headers, stateless_request

@endpoint(path="/mcp", name="off", version="1.0.0")
class Off:
    @tool
    def ping(self) -> str:
        \"\"\"Pong.\"\"\"
        return "pong"

with TestClient(Server(Off, metrics=True)) as client:
    body = stateless_request("tools/call", {"name": "ping", "arguments": {}})
    status = client.post("/mcp", body, headers=stateless_headers("tools/call", "ping")).status
print(json.dumps({"status": status,
                  "loaded": sorted(m for m in sys.modules if m.startswith("opentelemetry"))}))
"""
    result = subprocess.run(
        [sys.executable, "-I", "-c", script], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"status": 200, "loaded": []}
