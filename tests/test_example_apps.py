"""``examples/apps.py`` served: the tool's ``_meta.ui``, the ``ui://`` read with its type and
declaration, the text fallback, admission of every UI read, no UI metadata in model-visible
content, and App HTML refused where Apps do not exist (2025)."""

from __future__ import annotations

import json
import runpy
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import mcpkit
from mcpkit import (
    APP_MIME_TYPE,
    APPS_EXTENSION,
    AdmissionRequest,
    Admitted,
    AppTool,
    Endpoint,
    Implementation,
    Rejected,
    ResourceOutput,
    ResourceRegistration,
    Revision,
    TextResourceContents,
    ToolRegistration,
)
from mcpkit.testing import TestClient, handshake_request, stateless_headers, stateless_request

from .spec_schemas import schema_errors

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "apps.py"
VIEW = "ui://converter/view"
APPS = {"extensions": {APPS_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}}}


@pytest.fixture(scope="module")
def example() -> dict[str, Any]:
    return runpy.run_path(str(EXAMPLE))


def rpc(
    client: TestClient,
    method: str,
    params: dict[str, Any] | None = None,
    target: str | None = None,
    capabilities: dict[str, Any] | None = None,
) -> Any:
    body = stateless_request(method, params, capabilities=capabilities)
    return client.post("/mcp", body, headers=stateless_headers(method, target)).json


def test_the_tools_carry_their_app_and_serve_2026_alone(example: dict[str, Any]) -> None:
    endpoint = example["converter"].endpoint
    assert endpoint.revisions == frozenset({Revision.V2026_07_28})
    with TestClient(mcpkit.Server(example["converter"])) as client:
        tools = {tool["name"]: tool for tool in rpc(client, "tools/list")["result"]["tools"]}
    assert tools["open_converter"]["_meta"] == {
        "ui": {"resourceUri": VIEW, "visibility": ["model", "app"]}
    }
    assert tools["convert"]["_meta"] == {"ui": {"resourceUri": VIEW, "visibility": ["app"]}}


def test_the_wire_results_match_the_official_2026_schema(example: dict[str, Any]) -> None:
    def plain(client: TestClient, method: str, params: dict[str, Any], name: str | None) -> Any:
        body = stateless_request(method, params)
        return json.loads(client.post("/mcp", body, headers=stateless_headers(method, name)).body)

    with TestClient(mcpkit.Server(example["converter"])) as client:
        listed = plain(client, "tools/list", {}, None)["result"]
        read = plain(client, "resources/read", {"uri": VIEW}, VIEW)["result"]
    assert schema_errors("2026-07-28", "ListToolsResult", listed) == []
    assert schema_errors("2026-07-28", "ReadResourceResult", read) == []


def test_the_server_declares_the_extension_where_it_serves_an_app(
    example: dict[str, Any],
) -> None:
    with TestClient(mcpkit.Server(example["converter"])) as client:
        body = stateless_request("server/discover")
        raw = client.post("/mcp", body, headers=stateless_headers("server/discover")).body
    discovered = json.loads(raw)["result"]
    assert discovered["capabilities"]["extensions"] == {
        APPS_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}
    }
    assert schema_errors("2026-07-28", "DiscoverResult", discovered) == []
    endpoint = example["converter"].endpoint
    assert not endpoint.tasks  # another extension is not the tasks one
    tool = ToolRegistration.json_object(
        name="plain", revisions=frozenset(Revision),
        handler=lambda ctx, arguments, features: mcpkit.CompleteResult.from_tool_text("x"),
    )  # fmt: skip
    plain = Endpoint("/mcp", Implementation("apps", "1"), frozenset(Revision), tools=[tool])
    for revision in Revision:
        assert "extensions" not in plain.capabilities(revision)


def test_the_view_is_read_as_an_app_with_its_declaration(example: dict[str, Any]) -> None:
    with TestClient(mcpkit.Server(example["converter"])) as client:
        listed = rpc(client, "resources/list")["result"]["resources"]
        read = rpc(client, "resources/read", {"uri": VIEW}, VIEW)["result"]
    assert listed == [{"uri": VIEW, "name": "converter", "description": listed[0]["description"],
                       "mimeType": APP_MIME_TYPE}]  # fmt: skip
    (contents,) = read["contents"]
    assert contents["uri"] == VIEW
    assert contents["mimeType"] == APP_MIME_TYPE
    assert contents["_meta"] == {"ui": {"csp": {}, "prefersBorder": True}}
    assert contents["text"] == example["PAGE"]
    assert contents["text"].startswith("<!DOCTYPE html>")


def test_the_app_tool_converts_and_no_ui_metadata_reaches_the_content(
    example: dict[str, Any],
) -> None:
    with TestClient(mcpkit.Server(example["converter"])) as client:
        called = rpc(client, "tools/call", {"name": "convert", "arguments": {"celsius": 21.5}},
                     "convert")["result"]  # fmt: skip
        opened = rpc(client, "tools/call", {"name": "open_converter", "arguments": {}},
                     "open_converter", capabilities=APPS)["result"]  # fmt: skip
        fallback = rpc(client, "tools/call", {"name": "open_converter", "arguments": {}},
                       "open_converter")["result"]  # fmt: skip
    assert called["structuredContent"] == {
        "celsius": Decimal("21.5"),
        "fahrenheit": Decimal("70.7"),
    }
    assert opened["content"] == [{"type": "text", "text": "The temperature converter is open."}]
    assert fallback["content"][0]["text"].startswith("This host cannot show the converter")
    for result in (called, opened, fallback):
        model_visible = json.dumps(
            [result["content"], result.get("structuredContent")], default=str
        )
        assert "ui://" not in model_visible
        assert "resourceUri" not in model_visible
        assert "ui" not in result.get("_meta", {})


def test_every_ui_read_is_admitted_like_any_other(example: dict[str, Any]) -> None:
    seen: list[str] = []

    def admit(request: AdmissionRequest) -> Admitted | Rejected:
        seen.append(request.method)
        http = request.http_request
        headers = () if http is None else http.headers
        if ("authorization", "Bearer reader") in headers:
            return Admitted(identity="reader")
        return Rejected(401, headers=(("WWW-Authenticate", "Bearer"),))

    server = mcpkit.Server(example["converter"], admission=admit)
    body = stateless_request("resources/read", {"uri": VIEW})
    with TestClient(server) as client:
        refused = client.post("/mcp", body, headers=stateless_headers("resources/read", VIEW))
        again = client.post("/mcp", body, headers=stateless_headers("resources/read", VIEW))
        reader = {**stateless_headers("resources/read", VIEW), "Authorization": "Bearer reader"}
        granted = client.post("/mcp", body, headers=reader)
    assert refused.status == again.status == 401  # a refresh (prefetch) is admitted anew
    assert b"<!DOCTYPE" not in refused.body
    assert granted.status == 200
    assert seen == ["resources/read"] * 3


# --- contract failures at read time -------------------------------------------------------------

MODERN = frozenset({Revision.V2026_07_28})


def _server(
    handler: Any, *, app: bool = True, revisions: frozenset[Revision] = MODERN
) -> mcpkit.Server:
    uri = VIEW if app else "file:///page.html"
    resource = ResourceRegistration.exact(
        uri=uri, name="page", revisions=revisions, handler=handler,
        app=mcpkit.AppResource() if app else None,
    )  # fmt: skip
    tool = ToolRegistration.json_object(
        name="plain", revisions=frozenset(Revision),
        handler=lambda ctx, arguments, features: mcpkit.CompleteResult.from_tool_text("x"),
    )  # fmt: skip
    endpoint = Endpoint(
        "/mcp", Implementation("apps", "1"), frozenset(Revision), tools=[tool],
        resources=[resource],
    )  # fmt: skip
    return mcpkit.Server(endpoint)


def test_a_handler_that_labels_its_app_otherwise_fails_the_read(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def mislabelled(ctx: object, features: object) -> ResourceOutput:
        return ResourceOutput(
            contents=(TextResourceContents(uri=VIEW, text="<p/>", mime_type="text/html"),)
        )

    with TestClient(_server(mislabelled)) as client:
        result = rpc(client, "resources/read", {"uri": VIEW}, VIEW)
    assert result["error"]["code"] == -32603
    assert "must be text/html;profile=mcp-app" in caplog.text


def test_app_html_is_refused_on_2025_and_served_on_2026(caplog: pytest.LogCaptureFixture) -> None:
    def page(ctx: object, features: object) -> ResourceOutput:
        return ResourceOutput(contents=(TextResourceContents(
            uri="file:///page.html", text="<p/>", mime_type=APP_MIME_TYPE),))  # fmt: skip

    params = {"uri": "file:///page.html"}
    with TestClient(_server(page, app=False, revisions=frozenset(Revision))) as client:
        modern = rpc(client, "resources/read", params, "file:///page.html")
        legacy = client.post("/mcp", handshake_request("resources/read", params),
                             headers={"MCP-Protocol-Version": "2025-11-25"}).json  # fmt: skip
    assert modern["result"]["contents"][0]["mimeType"] == APP_MIME_TYPE
    assert legacy["error"]["code"] == -32603  # type: ignore[index,call-overload]
    assert "MCP App HTML on a 2025 revision" in caplog.text


def test_an_app_tool_is_absent_from_2025_lists() -> None:
    resource = ResourceRegistration.exact(
        uri=VIEW, name="view", revisions=MODERN, app=mcpkit.AppResource(),
        handler=lambda ctx, features: ResourceOutput(
            contents=(TextResourceContents(uri=VIEW, text="<p/>"),)),
    )  # fmt: skip
    shown = ToolRegistration.json_object(
        name="shown", revisions=MODERN, app=AppTool(VIEW),
        handler=lambda ctx, arguments, features: mcpkit.CompleteResult.from_tool_text("x"),
    )  # fmt: skip
    plain = ToolRegistration.json_object(
        name="plain", revisions=frozenset(Revision),
        handler=lambda ctx, arguments, features: mcpkit.CompleteResult.from_tool_text("x"),
    )  # fmt: skip
    endpoint = Endpoint("/mcp", Implementation("apps", "1"), frozenset(Revision),
                        tools=[plain, shown], resources=[resource])  # fmt: skip
    with TestClient(mcpkit.Server(endpoint)) as client:
        legacy: Any = client.post("/mcp", handshake_request("tools/list"),
                                  headers={"MCP-Protocol-Version": "2025-11-25"}).json  # fmt: skip
        modern = rpc(client, "tools/list")
    assert [tool["name"] for tool in legacy["result"]["tools"]] == ["plain"]
    assert "extensions" not in endpoint.capabilities(Revision.V2025_11_25)
    assert "_meta" not in legacy["result"]["tools"][0]
    modern_tools = {tool["name"]: tool for tool in modern["result"]["tools"]}
    assert "_meta" not in modern_tools["plain"]
    assert modern_tools["shown"]["_meta"]["ui"]["resourceUri"] == VIEW


def test_a_tool_result_embedding_app_html_is_refused_on_2025(
    caplog: pytest.LogCaptureFixture,
) -> None:
    page = TextResourceContents(uri=VIEW, text="<p/>", mime_type=APP_MIME_TYPE)

    def embed(ctx: object, arguments: object, features: object) -> mcpkit.CompleteResult:
        output = mcpkit.ToolOutput(content=(mcpkit.EmbeddedResource(resource=page),))
        return mcpkit.CompleteResult.with_tool_output(output)

    tool = ToolRegistration.json_object(name="embed", revisions=frozenset(Revision), handler=embed)
    endpoint = Endpoint("/mcp", Implementation("apps", "1"), frozenset(Revision), tools=[tool])
    params = {"name": "embed", "arguments": {}}
    with TestClient(mcpkit.Server(endpoint)) as client:
        modern = rpc(client, "tools/call", params, "embed")
        legacy: Any = client.post("/mcp", handshake_request("tools/call", params),
                                  headers={"MCP-Protocol-Version": "2025-11-25"}).json  # fmt: skip
    assert modern["result"]["content"][0]["resource"]["mimeType"] == APP_MIME_TYPE
    assert legacy["error"]["code"] == -32603
    assert "tool 'embed' returned MCP App HTML on 2025" in caplog.text
