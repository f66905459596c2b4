"""Tasks across a crash: ``mcpkit serve --tasks-db FILE`` is killed (SIGKILL, nothing cleaned
up) and started again on the same file.  A task that was working fails with -31903 under its
own id, an idempotent tool's task runs again to completion, a completed task's result comes
back byte for byte, and a second process on the file is refused while the first runs."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from mcpkit.testing import stateless_headers, stateless_request

from ..data.task_app import GREETING

ROOT: Final = Path(__file__).resolve().parents[2]
APP: Final = ROOT / "tests" / "data" / "task_app.py"
WAIT: Final = 20.0
TASKS: Final[dict[str, object]] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
INTERRUPTED: Final = {
    "code": -31903,
    "message": "The task was interrupted by a server restart; call the tool again",
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Node:
    """One ``mcpkit serve`` process of ``task_app.py``, in its own process group."""

    process: subprocess.Popen[bytes]
    port: int
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def post(self, method: str, name: str, params: dict[str, Any]) -> tuple[int, str, bytes]:
        """One 2026-07-28 request that declares the tasks extension: status, content type and
        the raw body."""
        body = json.dumps(stateless_request(method, params, capabilities=TASKS)).encode()
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=WAIT)
        try:
            connection.request("POST", "/mcp", body, stateless_headers(method, name))
            response = connection.getresponse()
            return response.status, response.getheader("content-type") or "", response.read()
        finally:
            connection.close()

    def call(self, tool: str, arguments: dict[str, Any]) -> str:
        """Call ``tool`` as a task; its task id."""
        status, _, raw = self.post("tools/call", tool, {"name": tool, "arguments": arguments})
        result = json.loads(raw)["result"]
        assert status == 200 and result["resultType"] == "task", raw
        assert result["status"] == "working"
        task_id: str = result["taskId"]
        return task_id

    def get_raw(self, task_id: str) -> bytes:
        status, content_type, raw = self.post("tasks/get", task_id, {"taskId": task_id})
        assert (status, content_type) == (200, "application/json"), raw
        return raw

    def get(self, task_id: str) -> dict[str, Any]:
        task: dict[str, Any] = json.loads(self.get_raw(task_id))["result"]
        assert task["taskId"] == task_id
        return task

    def until(self, task_id: str, status: str) -> dict[str, Any]:
        """Poll ``tasks/get`` until the task has ``status``."""
        deadline = time.monotonic() + WAIT
        while (task := self.get(task_id))["status"] != status:
            assert task["status"] == "working", task
            assert time.monotonic() < deadline, task
            time.sleep(0.05)
        return task

    def kill(self) -> None:
        """SIGKILL: the process gets no chance to clean up."""
        self.process.kill()
        self.process.wait(WAIT)


def start(database: Path, log_path: Path, port: int | None = None) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("COVERAGE_PROCESS_START", None)
    command = [sys.executable, "-m", "mcpkit", "serve", str(APP)]
    command += ["--port", str(port or free_port()), "--tasks-db", str(database)]
    with log_path.open("ab") as log:
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env=env,
            start_new_session=True,  # its own process group: no terminal signal reaches it
        )


def stop(process: subprocess.Popen[bytes]) -> None:
    """End a process started here, by its PID."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(WAIT)
        except subprocess.TimeoutExpired:  # pragma: no cover - only if it hangs
            process.kill()
            process.wait(WAIT)


@contextlib.contextmanager
def serving(tmp_path: Path, database: Path) -> Iterator[Node]:
    """``mcpkit serve task_app.py --tasks-db database`` on a free loopback port, once it
    accepts connections; stopped by PID on the way out (if it still runs)."""
    port = free_port()
    log_path = tmp_path / f"server-{port}.log"
    process = start(database, log_path, port)
    node = Node(process, port, log_path)
    try:
        deadline = time.monotonic() + WAIT
        while True:
            assert process.poll() is None, "the server exited:\n" + node.log()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, node.log()
                time.sleep(0.05)
        yield node
    finally:
        stop(process)


_DECODER: Final = json.JSONDecoder()


def _skip(text: str, index: int) -> int:
    """Past the JSON whitespace at ``index``."""
    while index < len(text) and text[index] in " \t\n\r":
        index += 1
    return index


def member(raw: bytes, *path: str) -> bytes:
    """The raw bytes of the member at ``path`` (object keys, outermost first) of the JSON text
    ``raw``: a slice of what was sent, never decoded and encoded again."""
    text = raw.decode("utf-8")
    index = 0
    for key in path:
        index = _skip(text, index)
        assert text[index] == "{", text[index:]
        index += 1
        while True:
            index = _skip(text, index)
            assert text[index] != "}", f"no member {key!r}"
            name, index = _DECODER.raw_decode(text, index)
            index = _skip(text, index)
            assert text[index] == ":"
            index = _skip(text, index + 1)
            if name == key:
                break
            _, index = _DECODER.raw_decode(text, index)
            index = _skip(text, index)
            if text[index] == ",":
                index += 1
    _, end = _DECODER.raw_decode(text, index)
    return raw[len(text[:index].encode("utf-8")) : len(text[:end].encode("utf-8"))]


def test_member_slices_the_raw_text_of_a_nested_member() -> None:
    raw = '{ "a" : 1 , "r" : { "x" : [1, {"r": 2}], "r" : {"t": "é\\u00e9"} } }'.encode()
    assert member(raw, "r", "r") == '{"t": "é\\u00e9"}'.encode()
    assert member(raw, "a") == b"1"


# --- a crash ------------------------------------------------------------------------------------


def test_a_killed_servers_working_task_fails_as_interrupted_and_an_idempotent_one_runs_again(
    tmp_path: Path,
) -> None:
    database = tmp_path / "tasks.db"
    with serving(tmp_path, database) as first:
        stalled = first.call("stall", {"seconds": 60})
        redone = first.call("redo", {"seconds": 1})
        assert first.get(stalled)["status"] == "working"
        assert first.get(redone)["status"] == "working"
        first.kill()
    with serving(tmp_path, database) as second:
        asked = datetime.now(UTC)
        failed = second.get(stalled)
        assert (failed["taskId"], failed["status"]) == (stalled, "failed")
        assert failed["error"] == INTERRUPTED
        # failed when the server started (its lifespan), before any task request came
        assert datetime.fromisoformat(failed["lastUpdatedAt"]) <= asked
        assert "result" not in failed
        completed = second.until(redone, "completed")
        text = f"done by process {second.process.pid}"  # run again by the new process
        assert completed["result"]["content"] == [{"type": "text", "text": text}]
        assert completed["result"].get("isError", False) is False
        assert second.get(stalled) == failed  # settled for good
    assert "Traceback" not in second.log()


def test_a_completed_tasks_result_survives_a_kill_byte_for_byte(tmp_path: Path) -> None:
    database = tmp_path / "tasks.db"
    with serving(tmp_path, database) as first:
        task_id = first.call("greet", {"name": "Zoë"})
        first.until(task_id, "completed")
        before = first.get_raw(task_id)
        first.kill()
    with serving(tmp_path, database) as second:
        after = second.get_raw(task_id)
    kept = member(before, "result", "result")
    assert member(after, "result", "result") == kept
    assert "東京は晴れ ☃ \U0001f600".encode() in kept  # UTF-8 as sent, not escaped
    result = json.loads(kept)
    assert result["structuredContent"] == {"greeting": GREETING, "name": "Zoë"}
    assert json.loads(after) == json.loads(before)


def test_a_second_server_on_the_same_file_is_refused_while_the_first_runs(
    tmp_path: Path,
) -> None:
    database = tmp_path / "tasks.db"
    with serving(tmp_path, database) as first:
        task_id = first.call("greet", {"name": "first"})
        log_path = tmp_path / "second.log"
        second = start(database, log_path)
        try:
            code = second.wait(WAIT)
        finally:
            stop(second)
        assert code == 2
        log = log_path.read_text()
        assert log == (
            f"mcpkit: mcpkit serve: --tasks-db {database}: SqliteTaskStore: the file is in use "
            "by another process (one server process per task store file)\n"
        )
        assert first.until(task_id, "completed")["status"] == "completed"  # undisturbed
    assert not database.with_name("tasks.db-wal").exists()  # the first closed the file cleanly


def test_a_task_started_after_a_restart_is_a_new_one_beside_the_old(tmp_path: Path) -> None:
    database = tmp_path / "tasks.db"
    with serving(tmp_path, database) as first:
        old = first.call("stall", {"seconds": 0})
        first.until(old, "completed")
        first.kill()
    with serving(tmp_path, database) as second:
        new = second.call("stall", {"seconds": 0})
        assert new != old
        assert second.until(new, "completed")["result"]["content"][0]["text"] == "slept 0 s"
        assert second.get(old)["status"] == "completed"
