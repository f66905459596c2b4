"""A FastAPI app with routes of its own and an MCP endpoint mounted under ``/ai``.

The endpoint declares the path ``/mcp``; mounted at ``/ai`` it answers at ``/ai/mcp`` (mcpkit
reads the ASGI ``root_path`` the mount sets).  FastAPI does not pass lifespan events to mounted
apps, so the app's lifespan is the server's: it opens the endpoint's catalog (the
``lifespan=`` of the ``EndpointBuilder``) before the first request and closes it at shutdown.

Run it (from the repository root)::

    uvicorn fastapi_app:app --app-dir examples

then ``GET http://127.0.0.1:8000/health`` and point an MCP client at
``http://127.0.0.1:8000/ai/mcp``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from decimal import Decimal

from fastapi import FastAPI

import mcpkit


@dataclass
class Catalog:
    """Stands in for a database pool: opened once, shared by every request."""

    prices: dict[str, Decimal] = field(default_factory=dict)
    open: bool = False


@asynccontextmanager
async def open_catalog() -> AsyncIterator[Catalog]:
    catalog = Catalog({"BOLT-M6": Decimal("0.18"), "NUT-M6": Decimal("0.05")}, open=True)
    try:
        yield catalog  # every handler's ctx.state
    finally:
        catalog.open = False


shop = mcpkit.EndpointBuilder("shop", version="1.0.0", lifespan=open_catalog)


@dataclass(frozen=True)
class Price:
    sku: str
    eur: Decimal


@shop.tool(read_only=True)
def price(ctx: mcpkit.RequestContext, sku: str) -> Price:
    """The unit price of one item, in euros."""
    catalog: Catalog = ctx.state
    if sku not in catalog.prices:
        raise mcpkit.ToolError(f"No item has the SKU {sku!r}; SKUs look like BOLT-M6.")
    return Price(sku, catalog.prices[sku])


server = mcpkit.Server(shop)
app = FastAPI(lifespan=server.lifespan)
app.mount("/ai", server.asgi())


@app.get("/health")
def health() -> dict[str, str]:
    """The app's own route, next to the MCP endpoint."""
    return {"status": "ok"}
