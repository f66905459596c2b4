"""``examples/inventory.py``: the inventory endpoint, built by the decorators and called
through its registrations as the server will (AN-01, AN-18, PK-01, RG-02, HC-01, CT-12)."""

import asyncio
import importlib.util
import json
import sys
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from mcpkit.errors import ArgumentsInvalid, InvalidParams, ResourceNotFound
from mcpkit.json import JsonObject
from mcpkit.model import (
    CancellationToken,
    Endpoint,
    InvocationFeatures,
    RequestContext,
    Revision,
    ToolAnnotations,
    ToolShape,
)

PATH = Path(__file__).resolve().parents[1] / "examples" / "inventory.py"
MODERN = Revision.V2026_07_28


def _load() -> ModuleType:
    """Import the example by path (``examples`` is not a package)."""
    spec = importlib.util.spec_from_file_location("mcpkit_example_inventory", PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module while being built
    spec.loader.exec_module(module)
    return module


example = _load()
ENDPOINT: Endpoint = example.registry.endpoints[0]


def context(method: str) -> RequestContext:
    return RequestContext(endpoint=ENDPOINT, revision=MODERN, method=method)


def invoke(handler: Callable[..., object], *args: object) -> Any:
    result = handler(*args)
    return asyncio.run(result) if asyncio.iscoroutine(result) else result


def features() -> InvocationFeatures:
    return InvocationFeatures(CancellationToken())


def test_the_catalogue_is_realistic() -> None:
    assert len(example.ITEMS) >= 20
    assert len({item.sku for item in example.ITEMS}) == len(example.ITEMS)
    assert all(isinstance(item.price, Decimal) for item in example.ITEMS)


def test_rg_02_pk_01_the_registry_holds_the_decorated_endpoint() -> None:
    assert len(example.registry) == 1
    assert ENDPOINT is example.Inventory.__mcp_endpoint__
    assert ENDPOINT.path == "/inventory/mcp"
    assert ENDPOINT.revisions == frozenset(Revision)  # every revision, by default
    assert ENDPOINT.instructions == "Prefer inventory.search before reading an item."
    assert [t.name for t in ENDPOINT.tools] == ["inventory.search"]
    assert [p.name for p in ENDPOINT.prompts] == ["inventory.summary"]
    assert [r.name for r in ENDPOINT.resources] == ["item"]
    assert ENDPOINT.templates_for(MODERN) == ENDPOINT.resources
    assert ENDPOINT.capabilities(MODERN) == {"tools": {}, "prompts": {}, "resources": {}}


def test_an_18_search_is_a_typed_read_only_tool() -> None:
    search = ENDPOINT.find_tool("inventory.search", MODERN)
    assert search is not None and search.output_schema is not None
    assert search.shape is ToolShape.TYPED
    assert search.annotations == ToolAnnotations(read_only=True, open_world=False)
    assert search.input_schema.document == {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "Free text matched against SKU, name and tags",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 50,
                "description": "At most this many",
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    }


def test_search_binds_calls_and_converts_its_output() -> None:
    result = example.call_tool("inventory.search", {"query": "M8"})
    assert [hit.sku for hit in result.items] == ["BLT-M8-30", "NUT-M8", "WSH-M8-SP"]
    assert result.total == 3
    limited = example.call_tool("inventory.search", {"query": "steel", "limit": 2})
    assert len(limited.items) == 2 and limited.total > 2
    search = ENDPOINT.find_tool("inventory.search", MODERN)
    assert search is not None and search.output_model is not None
    structured: Any = search.output_model.to_json(result)
    assert structured["items"][0] == {
        "sku": "BLT-M8-30", "name": "Hex bolt M8 x 30 mm", "price": Decimal("0.27"),
        "in_stock": True,
    }  # fmt: skip


def test_search_defaults_and_stock() -> None:
    everything = example.call_tool("inventory.search", {"query": ""})
    assert everything.total == len(example.ITEMS)
    assert len(everything.items) == example.DEFAULT_LIMIT
    sandpaper = example.call_tool("inventory.search", {"query": "P240"})
    assert [hit.in_stock for hit in sandpaper.items] == [False]


def test_search_arguments_are_validated_before_the_handler() -> None:
    with pytest.raises(ArgumentsInvalid):
        example.call_tool("inventory.search", {"query": "bolt", "limit": 0})
    with pytest.raises(ArgumentsInvalid):
        example.call_tool("inventory.search", {"limit": 3})


def test_unknown_tools_are_not_found() -> None:
    with pytest.raises(LookupError):
        example.call_tool("inventory.delete", {})


def test_the_summary_prompt() -> None:
    summary = ENDPOINT.find_prompt("inventory.summary", MODERN)
    assert summary is not None
    assert summary.required_arguments == frozenset({"sku"})
    output = invoke(summary.handler, context("prompts/get"), {"sku": "HNG-BT-75"}, features())
    assert "HNG-BT-75" in output.messages[0].content.text
    assert output.description == "Summary of HNG-BT-75"
    with pytest.raises(InvalidParams):
        invoke(summary.handler, context("prompts/get"), {"sku": "NOPE"}, features())


def test_ct_12_the_item_template_returns_json_text() -> None:
    match = ENDPOINT.find_resource("inventory://items/GLU-EP-25", MODERN)
    assert match is not None
    registration, variables = match
    assert registration.is_async and dict(variables) == {"sku": "GLU-EP-25"}
    output = invoke(registration.handler, context("resources/read"), variables, features())
    contents = output.contents[0]
    assert contents.uri == "inventory://items/GLU-EP-25"
    assert contents.mime_type == "application/json"
    assert json.loads(contents.text, parse_float=Decimal) == {
        "sku": "GLU-EP-25", "name": "Two-part epoxy 25 ml", "price": Decimal("7.95"),
        "stock": 95, "tags": ["glue", "epoxy"],
    }  # fmt: skip
    with pytest.raises(ResourceNotFound):
        invoke(registration.handler, context("resources/read"), {"sku": "NOPE"}, features())


def test_main_lists_tools_and_searches(capsys: pytest.CaptureFixture[str]) -> None:
    example.main()
    out = capsys.readouterr().out
    assert "inventory 1.0.0 at /inventory/mcp" in out
    assert "tool inventory.search" in out
    assert "inventory.search bolt: 3 matches" in out


def test_raw_arguments_reach_the_handler_unchanged() -> None:
    raw = JsonObject({"query": "nut"})
    assert example.call_tool("inventory.search", raw).total == 3
