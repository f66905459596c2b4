"""``GracefulServer``: the embedded server's stop, in process (tests/reliability does the same
against a real ``mcpkit serve`` with signals).

Calls in flight get the drain budget; new requests are refused with 503; what is left is
answered with the overload error; a connection whose client does not take its answer is
aborted; the log gets one line at the start (when calls are in flight) and one summary.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mcpkit import (
    CompleteResult,
    Limits,
    Revision,
    Server,
    TextContent,
    ToolOutput,
    endpoint,
    tool,
)
from mcpkit.serving._lifecycle import GracefulServer
from mcpkit.testing import stateless_headers, stateless_request

WAIT = 10.0
OVERLOADED = {"code": -32603, "message": "Server overloaded; retry later"}

release = threading.Event()


@pytest.fixture(autouse=True)
def _released() -> Iterator[None]:
    release.clear()
    yield
    release.set()  # no handler thread outlives its test


@endpoint(path="/mcp", name="stops", version="1.0.0", revisions={Revision.V2026_07_28})
class Stops:
    @tool(name="wait")
    def wait(self, seconds: float) -> CompleteResult:
        release.wait(seconds)
        return CompleteResult.from_tool_text("waited")

    @tool(name="big")
    async def big(self) -> CompleteResult:
        block = TextContent(text="x" * 1_000_000)  # one string is at most 1,048,576 units
        return CompleteResult.with_tool_output(ToolOutput(content=(block,) * 12))


def raw_call(port: int, tool_name: str, arguments: dict[str, Any], id: int) -> bytes:
    body = json.dumps(
        stateless_request("tools/call", {"name": tool_name, "arguments": arguments}, id=id)
    ).encode()
    headers = {**stateless_headers("tools/call", tool_name), "Host": f"127.0.0.1:{port}"}
    head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    return f"POST /mcp HTTP/1.1\r\n{head}Content-Length: {len(body)}\r\n\r\n".encode() + body


def exchange(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
            if b"\r\n\r\n" in data:
                head, _, body = data.partition(b"\r\n\r\n")
                length = [
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ]
                if length and len(body) >= length[0]:
                    break
        return data


def status_and_message(data: bytes) -> tuple[int, dict[str, str], Any]:
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {
        name.strip().lower(): value.strip()
        for name, _, value in (line.partition(":") for line in lines[1:])
    }
    return int(lines[0].split()[1]), headers, json.loads(body)


async def serving(
    server: Server, scenario: Callable[[GracefulServer, int], Any], *, force: bool = False
) -> Any:
    """Run ``server`` on this loop, run ``scenario`` (in a thread) against it, then stop it as
    a signal would."""
    built: list[GracefulServer] = []
    original = server._uvicorn

    def keep() -> GracefulServer:
        instance: GracefulServer = original()
        built.append(instance)
        return instance

    server._uvicorn = keep  # type: ignore[method-assign]
    task = asyncio.create_task(server.serve())
    while server.engine.port in (None, 0):
        assert not task.done()
        await asyncio.sleep(0.01)
    result = await asyncio.to_thread(scenario, built[0], server.engine.port)
    built[0].should_exit = True
    built[0].force_exit = force
    await asyncio.wait_for(task, WAIT)
    return result


def stop_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("mcpkit: stop")]


def test_calls_in_flight_finish_or_get_the_overload_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="mcpkit")
    server = Server(Stops, port=0, drain_seconds=0.5)
    answers: dict[int, bytes] = {}

    def scenario(_: GracefulServer, port: int) -> list[threading.Thread]:
        def run(id: int, seconds: float) -> None:
            answers[id] = exchange(port, raw_call(port, "wait", {"seconds": seconds}, id))

        threads = [
            threading.Thread(target=run, args=(1, 0.1)),
            threading.Thread(target=run, args=(2, WAIT)),
        ]
        for thread in threads:
            thread.start()
        while server.engine.calls < 2:
            pass
        return threads

    async def main() -> None:
        threads = await serving(server, scenario)
        for thread in threads:
            await asyncio.to_thread(thread.join, WAIT)

    asyncio.run(main())
    status, _, message = status_and_message(answers[1])
    assert (status, message["result"]["content"]) == (200, [{"type": "text", "text": "waited"}])
    status, headers, message = status_and_message(answers[2])
    assert (status, headers["retry-after"]) == (503, "1")
    assert message == {"jsonrpc": "2.0", "id": 2, "error": OVERLOADED}
    assert stop_lines(caplog) == [
        "mcpkit: stopping: 2 call(s) in flight, draining for up to 0.5 s",
        "mcpkit: stopped: 1 call(s) finished, 1 cut off after 0.5 s, 0 connection(s) aborted",
    ]


def test_a_second_signal_cuts_the_drain_short(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcpkit")
    server = Server(Stops, port=0, drain_seconds=WAIT)
    answers: dict[int, bytes] = {}

    def scenario(_: GracefulServer, port: int) -> threading.Thread:
        def run() -> None:
            answers[1] = exchange(port, raw_call(port, "wait", {"seconds": WAIT}, 1))

        thread = threading.Thread(target=run)
        thread.start()
        while server.engine.calls < 1:
            pass
        return thread

    async def main() -> float:
        loop = asyncio.get_running_loop()
        started = loop.time()
        thread = await serving(server, scenario, force=True)
        await asyncio.to_thread(thread.join, WAIT)
        return loop.time() - started

    assert asyncio.run(main()) < WAIT / 2
    assert status_and_message(answers[1])[0] == 503
    assert stop_lines(caplog)[-1].startswith("mcpkit: stopped: 0 call(s) finished, 1 cut off")


def test_a_quiet_stop_logs_one_summary_and_a_closed_idle_connection_is_not_aborted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="mcpkit")
    server = Server(Stops, port=0)
    idle: list[socket.socket] = []

    def scenario(_: GracefulServer, port: int) -> None:
        idle.append(socket.create_connection(("127.0.0.1", port), timeout=WAIT))

    asyncio.run(serving(server, scenario))
    assert idle[0].recv(1) == b""
    idle[0].close()
    assert stop_lines(caplog) == ["mcpkit: stopped: 0 call(s) finished"]  # nothing to drain


def test_a_client_that_never_takes_its_answer_is_aborted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="mcpkit")
    limits = Limits(max_response_bytes=16 * 1024 * 1024)
    server = Server(Stops, port=0, drain_seconds=0.2, limits=limits)
    stalled: list[socket.socket] = []

    def scenario(_: GracefulServer, port: int) -> None:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", port))
        # 12 MB of answer that the client never reads: past what the kernel buffers, so the
        # rest waits in the server for room that never comes
        sock.sendall(raw_call(port, "big", {}, 1))
        stalled.append(sock)
        time.sleep(0.3)

    asyncio.run(serving(server, scenario))
    stalled[0].close()
    assert stop_lines(caplog)[-1] == (
        "mcpkit: stopped: 0 call(s) finished, 0 cut off after 0.2 s, 1 connection(s) aborted"
    )


@pytest.mark.parametrize("reraise", [True, False])
def test_signals_are_raised_again_unless_the_server_runs_in_the_foreground(
    reraise: bool,
) -> None:
    server = Server(Stops)._uvicorn()
    server.reraise_signals = reraise
    seen: list[int] = []
    previous = signal.signal(signal.SIGUSR1, lambda number, _: seen.append(number))
    try:
        with server.capture_signals():
            server._captured_signals.append(signal.SIGUSR1)
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert seen == ([signal.SIGUSR1] if reraise else [])
