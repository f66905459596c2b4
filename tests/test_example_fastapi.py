"""``examples/fastapi_app.py``: a FastAPI app with a route of its own and an mcpkit endpoint
mounted under ``/ai``, driven with FastAPI's own ``TestClient``."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from fastapi.testclient import TestClient

from mcpkit.testing import stateless_headers, stateless_request

PATH = Path(__file__).resolve().parents[1] / "examples" / "fastapi_app.py"


def _load() -> ModuleType:
    """Import the example by path (``examples`` is not a package)."""
    spec = importlib.util.spec_from_file_location("mcpkit_example_fastapi", PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module while being built
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def example() -> Iterator[ModuleType]:
    module = _load()
    yield module
    sys.modules.pop(module.__name__, None)


def mcp(client: TestClient, method: str, params: dict[str, Any] | None = None) -> Any:
    """One 2026-07-28 request to the mounted endpoint; its JSON-RPC message."""
    name = None if params is None else params.get("name")
    response = client.post(
        "/ai/mcp",
        json=stateless_request(method, params),
        headers=stateless_headers(method, name),
    )
    assert response.status_code == 200, response.text
    return response.json()


def test_the_mounted_endpoint_lists_its_tools_at_the_mount_path(example: ModuleType) -> None:
    # Starlette's client says "Host: testserver" unless told otherwise; mcpkit accepts the
    # loopback names (and those in allowed_hosts) only.
    with TestClient(example.app, base_url="http://localhost") as client:
        message = mcp(client, "tools/list")
    tools = message["result"]["tools"]
    assert [tool["name"] for tool in tools] == ["price"]
    assert tools[0]["description"] == "The unit price of one item, in euros."


def test_a_tool_call_reads_the_state_the_lifespan_opened(example: ModuleType) -> None:
    with TestClient(example.app, base_url="http://localhost") as client:
        found = mcp(client, "tools/call", {"name": "price", "arguments": {"sku": "BOLT-M6"}})
        missing = mcp(client, "tools/call", {"name": "price", "arguments": {"sku": "X"}})
    assert found["result"]["structuredContent"] == {"sku": "BOLT-M6", "eur": 0.18}
    assert missing["result"]["isError"] is True
    assert missing["result"]["content"][0]["text"] == (
        "No item has the SKU 'X'; SKUs look like BOLT-M6."
    )


def test_the_apps_own_route_answers_beside_the_mount(example: ModuleType) -> None:
    with TestClient(example.app, base_url="http://localhost") as client:
        response = client.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_the_default_test_host_is_refused_with_an_explanation(example: ModuleType) -> None:
    with TestClient(example.app) as client:  # Host: testserver
        response = client.post(
            "/ai/mcp", json=stateless_request("tools/list"), headers=stateless_headers("tools/list")
        )
    assert response.status_code == 421
    assert "allowed_hosts" in response.json()["error"]["message"]
