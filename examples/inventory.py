"""An inventory endpoint (a product catalog behind MCP), written with mcpkit's decorators.

One class is one endpoint: ``@endpoint`` builds and checks the whole catalog when the class is
defined, and each decorated method is one operation whose schema comes from its signature.

* ``inventory.search``: a typed, read-only tool; its arguments and structured output are derived
  from the parameters and the ``SearchResult`` return type.
* ``inventory.summary``: a prompt taking one ``sku`` argument.
* ``inventory://items/{sku}``: a resource template whose handler returns the item as JSON text.

``python examples/inventory.py`` lists the tools and calls the search handler directly, the way
the server will (a request context, the bound arguments, the invocation features).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any

from mcpkit import (
    Arg,
    CancellationToken,
    EndpointRegistry,
    InvocationFeatures,
    PromptMessage,
    PromptOutput,
    RequestContext,
    ResourceOutput,
    Revision,
    Role,
    TextContent,
    TextResourceContents,
    ToolArguments,
    endpoint,
    prompt,
    resource,
    tool,
)
from mcpkit.errors import InvalidParams, ResourceNotFound
from mcpkit.json import JsonObject, encode, from_python

DEFAULT_LIMIT = 10


@dataclass(frozen=True)
class Item:
    """One catalogue entry (the application's own record, never published as is)."""

    sku: str
    name: str
    price: Decimal
    stock: int
    tags: tuple[str, ...]


ITEMS: tuple[Item, ...] = (
    Item("BLT-M6-20", "Hex bolt M6 x 20 mm", Decimal("0.18"), 4200, ("bolt", "steel", "m6")),
    Item("BLT-M8-30", "Hex bolt M8 x 30 mm", Decimal("0.27"), 3100, ("bolt", "steel", "m8")),
    Item("BLT-M10-50", "Hex bolt M10 x 50 mm", Decimal("0.55"), 860, ("bolt", "steel", "m10")),
    Item("NUT-M6", "Hex nut M6", Decimal("0.05"), 9800, ("nut", "steel", "m6")),
    Item("NUT-M8", "Hex nut M8", Decimal("0.07"), 7600, ("nut", "steel", "m8")),
    Item("NUT-M10-NY", "Nylon lock nut M10", Decimal("0.14"), 2300, ("nut", "nylon", "m10")),
    Item("WSH-M6", "Flat washer M6", Decimal("0.02"), 12000, ("washer", "steel", "m6")),
    Item("WSH-M8-SP", "Spring washer M8", Decimal("0.04"), 5400, ("washer", "spring", "m8")),
    Item("SCR-WD-4X40", "Wood screw 4 x 40 mm", Decimal("0.06"), 15000, ("screw", "wood")),
    Item("SCR-MC-M4", "Machine screw M4 x 12 mm", Decimal("0.09"), 6400, ("screw", "m4")),
    Item("ANC-10", "Wall anchor 10 mm", Decimal("0.21"), 3900, ("anchor", "masonry")),
    Item("HNG-BT-75", "Butt hinge 75 mm, brass", Decimal("4.90"), 310, ("hinge", "brass")),
    Item("HNG-PN-120", "Piano hinge 1.2 m", Decimal("12.40"), 45, ("hinge", "steel")),
    Item("BRK-L-50", "L bracket 50 mm", Decimal("0.85"), 1250, ("bracket", "steel")),
    Item("BRK-SH-200", "Shelf bracket 200 mm", Decimal("3.15"), 420, ("bracket", "shelf")),
    Item("GLU-WD-250", "Wood glue 250 ml", Decimal("5.60"), 180, ("glue", "wood")),
    Item("GLU-EP-25", "Two-part epoxy 25 ml", Decimal("7.95"), 95, ("glue", "epoxy")),
    Item("TPE-DT-50", "Duct tape 50 m", Decimal("8.25"), 240, ("tape", "duct")),
    Item("TPE-MK-25", "Masking tape 25 m", Decimal("2.70"), 610, ("tape", "masking")),
    Item("SND-P120", "Sandpaper P120, 10 sheets", Decimal("4.20"), 330, ("abrasive", "wood")),
    Item("SND-P240", "Sandpaper P240, 10 sheets", Decimal("4.20"), 0, ("abrasive", "finish")),
    Item("CHN-5-10", "Galvanised chain 5 mm, 10 m", Decimal("24.00"), 18, ("chain", "steel")),
)
_BY_SKU: Mapping[str, Item] = {item.sku: item for item in ITEMS}


@dataclass(frozen=True)
class SearchItem:
    """One search hit as clients see it."""

    sku: str
    name: str
    price: Decimal
    in_stock: bool


@dataclass(frozen=True)
class SearchResult:
    """The structured output of ``inventory.search``: hits in SKU order, and how many matched
    before ``limit`` applied."""

    items: list[SearchItem]
    total: int


def search_inventory(query: str, limit: int) -> SearchResult:
    """Case-insensitive match on the SKU, the name and the tags; an empty query matches all."""
    needle = query.casefold()
    found = [
        item
        for item in ITEMS
        if needle in item.sku.casefold()
        or needle in item.name.casefold()
        or any(needle == tag for tag in item.tags)
    ]
    found.sort(key=lambda item: item.sku)
    hits = [SearchItem(i.sku, i.name, i.price, i.stock > 0) for i in found[:limit]]
    return SearchResult(hits, len(found))


@endpoint(
    path="/inventory/mcp",
    name="inventory",
    version="1.0.0",
    title="Inventory MCP",
    description="Inventory search and reference data",
    website_url="https://example.com/inventory",
    instructions="Prefer inventory.search before reading an item.",
)
class Inventory:
    """The inventory endpoint; the default instance provider makes one per invocation."""

    @tool(name="inventory.search", title="Catalog search", read_only=True, open_world=False)
    def search(
        self,
        query: Annotated[str, Arg(description="Free text matched against SKU, name and tags")],
        limit: Annotated[int, Arg(minimum=1, maximum=50, description="At most this many")]
        | None = None,
    ) -> SearchResult:
        return search_inventory(query, DEFAULT_LIMIT if limit is None else limit)

    @prompt(name="inventory.summary", title="Item summary")
    def summary(self, sku: Annotated[str, Arg(description="The item's SKU")]) -> PromptOutput:
        item = _BY_SKU.get(sku)
        if item is None:
            raise InvalidParams()  # fixed wire message; the SKU is never echoed
        text = (
            f"Summarise inventory item {item.sku} ({item.name}) for a store manager: price "
            f"{item.price} EUR, {item.stock} in stock, tags {', '.join(item.tags)}."
        )
        message = PromptMessage(role=Role.USER, content=TextContent(text=text))
        return PromptOutput(messages=(message,), description=f"Summary of {item.sku}")

    @resource(uri="inventory://items/{sku}", name="item", mime_type="application/json")
    async def item(self, sku: str) -> ResourceOutput:
        found = _BY_SKU.get(sku)
        if found is None:
            raise ResourceNotFound()
        document = from_python(
            {"sku": found.sku, "name": found.name, "price": found.price, "stock": found.stock,
             "tags": list(found.tags)}
        )  # fmt: skip
        contents = TextResourceContents(
            uri=f"inventory://items/{sku}",
            text=encode(document).decode("utf-8"),
            mime_type="application/json",
        )
        return ResourceOutput(contents=(contents,))


registry = EndpointRegistry.from_classes(Inventory)


def call_tool(name: str, arguments: Mapping[str, object]) -> Any:
    """Call a tool's handler the way the server does: bind the arguments with the tool's input
    model, then pass a request context and the invocation features."""
    endpoint_ = registry.endpoints[0]
    registration = endpoint_.find_tool(name, Revision.V2026_07_28)
    if registration is None or registration.input_model is None:
        raise LookupError(name)
    raw = JsonObject(arguments)
    ctx = RequestContext(endpoint=endpoint_, revision=Revision.V2026_07_28, method="tools/call",
                         operation_name=name)  # fmt: skip
    result = registration.handler(
        ctx,
        ToolArguments(converted=registration.input_model.bind(raw), raw=raw),
        InvocationFeatures(CancellationToken()),
    )
    return asyncio.run(result) if inspect.iscoroutine(result) else result


def main() -> None:
    """List the endpoint's tools, then search for bolts."""
    endpoint_ = registry.endpoints[0]
    print(f"{endpoint_.implementation.name} {endpoint_.implementation.version} at {endpoint_.path}")
    for registration in endpoint_.tools:
        print(f"  tool {registration.name}: {encode(registration.input_schema.document).decode()}")
    result: SearchResult = call_tool("inventory.search", {"query": "bolt", "limit": 2})
    print(f"inventory.search bolt: {result.total} matches")
    for hit in result.items:
        print(f"  {hit.sku}  {hit.name}  {hit.price} EUR")


if __name__ == "__main__":
    main()
