"""``examples/flags.py``: the catalog follows the flag file while the server runs, and a client
listening on 2026-07-28 is told when its tools change."""

from __future__ import annotations

import asyncio
import json
import logging
import runpy
import time
from pathlib import Path
from typing import Any

import pytest

from mcpkit.testing import TestClient, stateless_headers, stateless_request

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "flags.py"


@pytest.fixture
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    # the module's own watcher follows a file of its own; the tests drive a second one
    monkeypatch.setenv("MCPKIT_FLAGS", str(tmp_path / "watched-by-the-module.json"))
    return runpy.run_path(str(EXAMPLE))


def tool_names(client: TestClient) -> list[str]:
    listed = client.post(
        "/mcp", stateless_request("tools/list"), headers=stateless_headers("tools/list")
    )
    result: Any = listed.json
    return [tool["name"] for tool in result["result"]["tools"]]


def test_the_catalog_follows_the_flags_and_listeners_are_told(
    example: dict[str, Any], tmp_path: Path
) -> None:
    server = example["server"]
    flags = tmp_path / "flags.json"
    watcher = example["FlagWatcher"](server, flags)
    with TestClient(server) as client:
        assert tool_names(client) == ["shout"]  # no file: every flag is off
        body = stateless_request(
            "subscriptions/listen", {"notifications": {"toolsListChanged": True}}
        )
        stream = client.submit("/mcp", body, headers=stateless_headers("subscriptions/listen"))
        deadline = time.monotonic() + 10
        while server.engine.deployment.audience.listens == 0:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert not watcher.check()  # nothing changed yet
        flags.write_text(json.dumps({"beta": True}))
        assert watcher.check()
        assert tool_names(client) == ["shout", "summarize"]
        loop = client._running_loop()
        asyncio.run_coroutine_threadsafe(server.engine.drain(0.5), loop).result(10)
        messages: Any = stream.result(10).messages
    assert [message.get("method") for message in messages] == [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
        None,  # the complete result
    ]


def test_an_unreadable_flag_file_leaves_the_catalog_as_it_is(
    example: dict[str, Any], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = example["server"]
    flags = tmp_path / "flags.json"
    flags.write_text(json.dumps({"beta": True}))
    watcher = example["FlagWatcher"](server, flags, interval=0.01)
    server.swap(example["catalog"]({"beta": True}))
    before = server.registry.endpoint_for_path("/mcp")
    with caplog.at_level(logging.WARNING, logger="flags"):
        for text in ("{not json", json.dumps({"beta": "yes"})):
            time.sleep(0.01)  # a new modification time
            flags.write_text(text)
            assert not watcher.check()
    assert server.registry.endpoint_for_path("/mcp") is before
    assert "is not readable JSON" in caplog.text and "must be a JSON object" in caplog.text
    flags.unlink()  # gone: every flag is off
    watcher.start()
    deadline = time.monotonic() + 10
    while server.registry.endpoint_for_path("/mcp") is before:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    found = server.registry.endpoint_for_path("/mcp")
    assert [tool.name for tool in found.tools] == ["shout"]
