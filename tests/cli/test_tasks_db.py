"""``mcpkit serve TARGET --tasks-db FILE``: the target is served with ``SqliteTaskStore(FILE)``
in place of its own task store (which is closed), whether it names a ``Server`` or only its
endpoints; the store is closed when serving ends or the server cannot be built, a target with
no task tool and a file in use are refused with exit status 2, and the other options still
apply.

``main()`` runs in-process with ``Server.run`` / ``Server.run_stdio`` replaced by recorders
(one of them drives the served server with the test client), so coverage sees it; the real
processes are ``tests/reliability/test_task_restart.py``'s.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpkit import MemoryTaskStore, Server, SqliteTaskStore, TaskKey, TaskStatus
from mcpkit.cli import main
from mcpkit.testing import TestClient, stateless_headers, stateless_request

TASKS: dict[str, object] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
IN_USE = (
    "SqliteTaskStore: the file is in use by another process (one server process per task "
    "store file)"
)

APP = """\
from mcpkit import (
    CompleteResult, Lease, MemoryTaskStore, Revision, Server, SqliteTaskStore, TaskSupport,
    endpoint, tool,
)


@endpoint(path="/mcp", name="jobs", version="1.0.0", revisions={Revision.V2026_07_28})
class Jobs:
    @tool(description="Echoes the text, as a task when the client can take one",
          task_support=TaskSupport.OPTIONAL)
    def echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)


@endpoint(path="/plain", name="plain", version="1.0.0", revisions={Revision.V2026_07_28})
class Plain:
    @tool(description="Echoes the text")
    def echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)


@endpoint(path="/live", name="live", version="1.0.0", revisions={Revision.V2026_07_28},
          listen=True)
class Live:
    @tool(description="Echoes the text, as a task when the client can take one",
          task_support=TaskSupport.OPTIONAL)
    def echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)


OWN = MemoryTaskStore()  # the target's own store, replaced by --tasks-db
"""


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Undo what loading targets changes: ``sys.path``, the loaded modules and the root logger
    that ``main`` configures."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith("mcpkit_target_"):
            del sys.modules[name]
    root.handlers[:], root.level = handlers, level


class Recorded:
    """What ``Server.run`` and ``Server.run_stdio`` were asked to serve, and what the served
    server answered while it ran (``while_running``)."""

    def __init__(self) -> None:
        self.runs: list[Server] = []
        self.stdio: list[tuple[Server, str | None]] = []
        self.while_running: Callable[[Server], object] | None = None
        self.seen: list[object] = []


@pytest.fixture
def recorded(isolated: None, monkeypatch: pytest.MonkeyPatch) -> Recorded:
    calls = Recorded()

    def run(
        self: Server, *, started: Callable[[], object] | None = None, sockets: object = None
    ) -> None:
        calls.runs.append(self)
        if calls.while_running is not None:
            calls.seen.append(calls.while_running(self))

    def run_stdio(self: Server, path: str | None = None) -> bool:
        calls.stdio.append((self, path))
        return False

    monkeypatch.setattr(Server, "run", run)
    monkeypatch.setattr(Server, "run_stdio", run_stdio)
    return calls


def app_file(directory: Path, stem: str, *extra: str) -> Path:
    path = directory / f"{stem}.py"
    path.write_text(APP + "\n".join(textwrap.dedent(line) for line in extra) + "\n")
    return path


def module(stem: str) -> Any:
    return sys.modules[f"mcpkit_target_{stem}"]


def reopens(database: Path) -> bool:
    """Whether the file can be opened again, so no store of this process holds it."""
    store = SqliteTaskStore(database)
    asyncio.run(store.close())
    return True


def post(client: TestClient, method: str, name: str, params: dict[str, Any]) -> Any:
    body = stateless_request(method, params, capabilities=TASKS)
    return client.post("/mcp", body, headers=stateless_headers(method, name)).json


def run_a_task(server: Server) -> str:
    """Call ``echo`` as a task on the served server and wait for it to complete: its id."""
    with TestClient(server) as client:
        created = post(client, "tools/call", "echo", {"name": "echo", "arguments": {"text": "ok"}})
        task_id: str = created["result"]["taskId"]
        for _ in range(1000):
            got = post(client, "tasks/get", task_id, {"taskId": task_id})
            if got["result"]["status"] == "completed":
                return task_id
            time.sleep(0.01)
    raise AssertionError("the task did not complete")  # pragma: no cover


# --- serving with the file ----------------------------------------------------------------------


def test_a_servers_task_store_is_replaced_by_the_file_and_its_own_is_closed(
    tmp_path: Path,
    recorded: Recorded,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = app_file(tmp_path, "own_store", "server = Server(Jobs, port=8131, task_store=OWN)")
    database = tmp_path / "tasks.db"
    closed: list[MemoryTaskStore] = []

    async def close(self: MemoryTaskStore) -> None:
        closed.append(self)

    monkeypatch.setattr(MemoryTaskStore, "close", close)
    recorded.while_running = run_a_task
    assert main(["serve", str(path), "--tasks-db", str(database)]) == 0
    target = module("own_store")
    (server,) = recorded.runs
    assert server is not target.server and server.registry is target.server.registry
    assert (server.host, server.port) == ("127.0.0.1", 8131)  # the rest is the target's
    assert isinstance(server.task_store, SqliteTaskStore)
    assert target.server.task_store is target.OWN and closed == [target.OWN]
    assert capsys.readouterr().err == ""
    # the task went to the file, which main closed when serving ended
    (task_id,) = recorded.seen
    assert isinstance(task_id, str)
    store = SqliteTaskStore(database)
    try:
        record = asyncio.run(store.get(TaskKey(task_id, None, "/mcp")))
    finally:
        asyncio.run(store.close())
    assert record is not None and record.status is TaskStatus.COMPLETED
    assert record.result is not None and json.loads(record.result)["content"] == [
        {"type": "text", "text": "ok"}
    ]


def test_endpoints_without_a_server_are_served_with_the_file(
    tmp_path: Path, recorded: Recorded, capsys: pytest.CaptureFixture[str]
) -> None:
    """A registry with a task tool needs a task store: the file is it."""
    path = app_file(tmp_path, "bare", "registry = [Jobs, Plain]")
    assert main(["serve", str(path)]) == 2  # no store of its own
    assert capsys.readouterr().err.startswith(
        "mcpkit: a tool may run as a task (task_support, or a method returning "
        "TaskCreatedResult): give the server a task_store"
    )
    database = tmp_path / "bare.db"
    assert main(["serve", str(path), "--tasks-db", str(database), "--port", "8132"]) == 0
    (server,) = recorded.runs
    assert [endpoint.path for endpoint in server.registry] == ["/mcp", "/plain"]
    assert isinstance(server.task_store, SqliteTaskStore) and server.port == 8132
    assert capsys.readouterr().err == ""
    assert reopens(database)  # closed when serving ended


def test_the_file_may_be_the_one_the_target_opened_itself(
    tmp_path: Path, recorded: Recorded
) -> None:
    """The target's own store is closed before the file is opened, so naming its own file
    again is no conflict."""
    database = tmp_path / "same.db"
    path = app_file(
        tmp_path,
        "same_file",
        f"server = Server(Jobs, task_store=SqliteTaskStore({str(database)!r}))",
    )
    assert main(["serve", str(path), "--tasks-db", str(database)]) == 0
    (server,) = recorded.runs
    assert server.task_store is not module("same_file").server.task_store
    assert reopens(database)


def test_stdio_serves_with_the_file_too(tmp_path: Path, recorded: Recorded) -> None:
    path = app_file(tmp_path, "stdio_tasks", "registry = Jobs")
    database = tmp_path / "stdio.db"
    assert main(["serve", str(path), "--tasks-db", str(database), "--stdio"]) == 0
    ((server, endpoint_path),) = recorded.stdio
    assert isinstance(server.task_store, SqliteTaskStore) and endpoint_path is None
    assert recorded.runs == []
    assert reopens(database)


# --- refusals -----------------------------------------------------------------------------------


def test_a_target_with_no_task_tool_is_refused_and_no_file_is_made(
    tmp_path: Path, recorded: Recorded, capsys: pytest.CaptureFixture[str]
) -> None:
    path = app_file(tmp_path, "plain_only", "server = Server(Plain)")
    database = tmp_path / "never.db"
    assert main(["serve", str(path), "--tasks-db", str(database)]) == 2
    assert main(["serve", f"{path}:Plain", "--tasks-db", str(database)]) == 2
    assert capsys.readouterr().err == 2 * (
        f"mcpkit: mcpkit serve: --tasks-db: no tool of {path} may run as a task (none has "
        "task_support); serve it without --tasks-db\n"
    )
    assert recorded.runs == [] and not database.exists()


def test_a_file_in_use_is_refused_saying_so(
    tmp_path: Path, recorded: Recorded, capsys: pytest.CaptureFixture[str]
) -> None:
    path = app_file(tmp_path, "in_use", "registry = Jobs")
    database = tmp_path / "busy.db"
    holder = SqliteTaskStore(database)  # another server's, as far as main can tell
    try:
        assert main(["serve", str(path), "--tasks-db", str(database)]) == 2
    finally:
        asyncio.run(holder.close())
    assert capsys.readouterr().err == (f"mcpkit: mcpkit serve: --tasks-db {database}: {IN_USE}\n")
    assert recorded.runs == []


def test_a_file_that_is_not_a_task_store_is_refused(
    tmp_path: Path, recorded: Recorded, capsys: pytest.CaptureFixture[str]
) -> None:
    path = app_file(tmp_path, "other_db", "registry = Jobs")
    database = tmp_path / "notes.db"
    database.write_bytes(b"plain text, not SQLite" * 100)
    assert main(["serve", str(path), "--tasks-db", str(database)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mcpkit: mcpkit serve: --tasks-db {database}: SqliteTaskStore: ")
    assert recorded.runs == []


def test_a_server_that_cannot_be_built_closes_the_file(
    tmp_path: Path, recorded: Recorded, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused after the file was opened: by the server (a listen endpoint without an
    authorizer), or by an option (the port); the file is closed either way."""
    path = app_file(tmp_path, "unbuildable", "registry = Live", "server = None")
    database = tmp_path / "closed.db"
    assert main(["serve", str(path), "--tasks-db", str(database)]) == 2
    assert "subscription_authorizer" in capsys.readouterr().err
    assert reopens(database)
    path = app_file(tmp_path, "bad_port", "registry = Jobs")
    assert main(["serve", str(path), "--tasks-db", str(database), "--port", "70000"]) == 2
    assert capsys.readouterr().err == "mcpkit: Server: port must be an int from 0 to 65535\n"
    assert reopens(database)
    assert recorded.runs == []


def test_help_names_the_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["serve", "--help"])
    assert caught.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--tasks-db FILE keep tasks in this SQLite file" in out
    assert "one process at a time per file" in out
