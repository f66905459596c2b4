"""Endpoint lifespans: entered once when the server starts, left when it stops; what they yield
is every handler's ``ctx.state``, over HTTP (ASGI lifespan), stdio and ``Server.lifespan``."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

import mcpkit
from mcpkit import ConfigurationError, EndpointBuilder, RequestContext, Server
from mcpkit.testing import TestClient, stateless_headers, stateless_request


@dataclass
class Pool:
    """Stands in for a database pool: it records being opened and closed."""

    events: list[str] = field(default_factory=list)
    queries: int = 0


def pooled(pool: Pool) -> mcpkit.Lifespan:
    @asynccontextmanager
    async def lifespan() -> AsyncIterator[Pool]:
        pool.events.append("open")
        try:
            yield pool
        finally:
            pool.events.append("close")

    return lifespan


def builder(pool: Pool, path: str = "/mcp", lifespan: mcpkit.Lifespan | None = None) -> Any:
    notes = EndpointBuilder("notes", version="1", path=path, lifespan=lifespan or pooled(pool))

    @notes.tool
    def query(ctx: RequestContext) -> str:
        ctx.state.queries += 1
        return f"query {ctx.state.queries}"

    return notes


def call(client: TestClient, path: str = "/mcp") -> Any:
    body = stateless_request("tools/call", {"name": "query", "arguments": {}})
    return client.post(path, body, headers=stateless_headers("tools/call", "query")).json


def test_handlers_share_what_the_lifespan_yielded() -> None:
    pool = Pool()
    with TestClient(Server(builder(pool))) as client:
        assert pool.events == ["open"]
        first, second = call(client), call(client)
    assert first["result"]["content"][0]["text"] == "query 1"
    assert second["result"]["content"][0]["text"] == "query 2"
    assert pool.events == ["open", "close"]


def test_a_lifespan_shared_by_endpoints_is_entered_once() -> None:
    pool = Pool()
    lifespan = pooled(pool)
    server = Server([builder(pool, "/a", lifespan), builder(pool, "/b", lifespan)])
    with TestClient(server) as client:
        call(client, "/a")
        answer = call(client, "/b")
    assert answer["result"]["content"][0]["text"] == "query 2"
    assert pool.events == ["open", "close"]


def test_an_endpoint_without_a_lifespan_has_no_state() -> None:
    @mcpkit.endpoint(path="/mcp", name="plain", version="1")
    class Plain:
        @mcpkit.tool
        def query(self, ctx: RequestContext) -> str:
            return repr(ctx.state)

    with TestClient(Server(Plain)) as client:
        assert call(client)["result"]["content"][0]["text"] == "None"


def test_state_before_the_lifespan_ran_explains_itself(caplog: pytest.LogCaptureFixture) -> None:
    pool = Pool()
    with TestClient(Server(builder(pool)), lifespan=False) as client:
        answer = call(client)
    assert answer["error"]["code"] == -32603
    assert pool.events == []
    logged = " ".join(record.getMessage() for record in caplog.records)
    assert "lifespan has not run" in logged and "Server.lifespan(app)" in logged
    assert "raised ConfigurationError" in logged


def test_the_not_started_marker_is_falsy_and_says_what_it_is() -> None:
    from mcpkit.server._lifespans import NOT_STARTED

    assert not NOT_STARTED and repr(NOT_STARTED) == "<lifespan not started>"
    with pytest.raises(ConfigurationError, match="lifespan has not run"):
        _ = NOT_STARTED.pool


def test_a_failing_lifespan_stops_the_start_and_leaves_what_it_entered() -> None:
    pool = Pool()

    @asynccontextmanager
    async def broken() -> AsyncIterator[None]:
        raise RuntimeError("no database")
        yield  # pragma: no cover - never reached

    server = Server([builder(pool, "/a"), builder(pool, "/b", broken)])

    async def start() -> None:
        await server.engine.startup()

    with pytest.raises(RuntimeError, match="no database"):
        asyncio.run(start())
    assert pool.events == ["open", "close"]


def test_server_lifespan_serves_a_mounted_app() -> None:
    """Where the host app's lifespan does not reach the mounted MCP app, the host enters
    ``server.lifespan(app)`` itself (``FastAPI(lifespan=server.lifespan)``)."""
    pool = Pool()
    server = Server(builder(pool))

    async def run() -> None:
        async with server.lifespan(object()):
            assert pool.events == ["open"]
            async with server.lifespan():  # entering again while running changes nothing
                pass
            assert pool.events == ["open"]  # left once, by the outer exit only
        assert pool.events == ["open", "close"]
        await server.engine.shutdown()  # stopping what is stopped is harmless
        assert pool.events == ["open", "close"]

    asyncio.run(run())


def test_stdio_runs_the_lifespan(monkeypatch: pytest.MonkeyPatch) -> None:
    pool = Pool()
    server = Server(builder(pool))
    line = json.dumps(stateless_request("tools/call", {"name": "query", "arguments": {}}))
    in_r, in_w = os.pipe()
    os.write(in_w, line.encode() + b"\n")
    os.close(in_w)
    out_r, out_w = os.pipe()
    stdin = open(in_r, "rb", buffering=0)  # noqa: SIM115
    saved_fd1 = os.dup(1)
    monkeypatch.setattr(sys, "stdin", stdin)
    os.dup2(out_w, 1)
    os.close(out_w)
    try:
        assert server.run_stdio() is False
    finally:
        os.dup2(saved_fd1, 1)
        os.close(saved_fd1)
        stdin.close()
    with open(out_r, "rb") as out:
        answer = json.loads(out.read())
    assert answer["result"]["content"][0]["text"] == "query 1"
    assert pool.events == ["open", "close"]


def test_a_lifespan_must_be_callable() -> None:
    with pytest.raises(ConfigurationError, match="lifespan must be callable"):
        _ = EndpointBuilder("x", version="1", lifespan=42).endpoint  # type: ignore[arg-type]


def test_a_second_startup_keeps_the_entered_state() -> None:
    pool = Pool()
    server = Server(builder(pool))

    async def run() -> None:
        await server.engine.startup()
        await server.engine.startup()  # an ASGI lifespan and Server.lifespan() both starting
        await server.engine.shutdown()

    asyncio.run(run())
    assert pool.events == ["open", "close"]
