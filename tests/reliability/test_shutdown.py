"""Stopping ``mcpkit serve`` with calls in flight: SIGTERM and SIGINT drain, then answer what
is left with the JSON-RPC overload error in the request's own channel -- never uvicorn's
plain-text 500, never a traceback in the log."""

from __future__ import annotations

import json
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from .harness import Served, call, read_response, request_bytes, serve

OVERLOADED = {"code": -32603, "message": "Server overloaded; retry later"}


def start_call(
    served: Served,
    tool: str,
    arguments: dict[str, Any],
    id: int,
    answers: dict[int, Any],
    *,
    progress: bool = False,
) -> threading.Thread:
    """Send one call on its own connection and keep its answer (or the exception)."""

    def run() -> None:
        try:
            with served.connect(30.0) as sock:
                sock.sendall(request_bytes(served.port, tool, arguments, id=id, progress=progress))
                answers[id] = read_response(sock)
        except Exception as error:  # recorded for the assertion
            answers[id] = error

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def last_message(answer: tuple[int, dict[str, str], bytes]) -> Any:
    _, headers, body = answer
    if headers.get("content-type", "").startswith("text/event-stream"):
        events = [line[6:] for line in body.decode().split("\n") if line.startswith("data: ")]
        return json.loads(events[-1])
    return json.loads(body)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_drains_admitted_calls_and_answers_the_rest_with_the_overload_error(
    tmp_path: Path, sig: int
) -> None:
    with serve(tmp_path, {"handler_slots": 8}, drain=2.0) as served:
        assert call(served, "quick", {})[0] == 200
        answers: dict[int, Any] = {}
        threads = [start_call(served, "sleepy", {"seconds": 0.5}, id, answers) for id in (1, 2)]
        threads += [start_call(served, "sleepy", {"seconds": 30}, id, answers) for id in (3, 4)]
        # and one whose stream is already committed when the drain cuts it off
        threads.append(
            start_call(served, "chatty_slow", {"seconds": 30}, 5, answers, progress=True)
        )
        time.sleep(0.3)
        started = time.monotonic()
        code = served.stop(sig)
        stopped = time.monotonic() - started
        for thread in threads:
            thread.join(10)
        assert code == 0
        assert stopped < 2.0 + 3.0, stopped  # the drain, plus the answers' grace
        for id in (1, 2):
            status, _, _ = answers[id]
            assert status == 200
            assert last_message(answers[id])["result"]["content"] == [
                {"type": "text", "text": "slept"}
            ]
        for id in (3, 4):
            status, headers, _ = answers[id]
            assert status == 503 and headers["retry-after"] == "1"
            assert headers["content-type"] == "application/json"
            assert last_message(answers[id]) == {"jsonrpc": "2.0", "id": id, "error": OVERLOADED}
        status, headers, _ = answers[5]
        assert status == 200 and headers["content-type"] == "text/event-stream"
        assert last_message(answers[5]) == {"jsonrpc": "2.0", "id": 5, "error": OVERLOADED}
        log = served.log()
        assert "Traceback" not in log and "Internal Server Error" not in log
        lines = [line for line in log.splitlines() if line.startswith("mcpkit: stop")]
        assert lines == [
            "mcpkit: stopping: 5 call(s) in flight, draining for up to 2 s",
            "mcpkit: stopped: 2 call(s) finished, 3 cut off after 2 s, 0 connection(s) aborted",
        ]


def test_a_quiet_server_stops_at_once_with_one_summary(tmp_path: Path) -> None:
    with serve(tmp_path, drain=30.0) as served:
        assert call(served, "quick", {})[0] == 200
        idle = served.connect()  # an idle keep-alive connection does not hold the stop up
        started = time.monotonic()
        assert served.stop() == 0
        assert time.monotonic() - started < 3.0
        assert idle.recv(1) == b""
        idle.close()
        log = served.log()
        assert "mcpkit: stopped: 0 call(s) finished" in log
        assert "Traceback" not in log


def test_a_client_that_does_not_take_its_answer_is_aborted_not_waited_for(
    tmp_path: Path,
) -> None:
    """A stalled reader of a committed stream: its call is cut at the drain, its answer cannot
    be delivered, so its connection is aborted after a short grace and the process exits."""
    with serve(tmp_path, {"handler_slots": 2}, drain=1.0) as served:
        stalled = served.connect()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.sendall(
            request_bytes(served.port, "chatty", {"count": 10_000_000}, id=9, progress=True)
        )
        time.sleep(0.5)
        started = time.monotonic()
        assert served.stop() == 0
        assert time.monotonic() - started < 1.0 + 4.0
        stalled.close()
        log = served.log()
        assert "Traceback" not in log
        assert "1 connection(s) aborted" in log
