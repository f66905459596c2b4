"""2025 sessions against ``mcpkit serve`` on loopback: memory returns after many sessions come
and go, and a flood of sessions from one owner meets its quota while other owners are served.
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

from mcpkit.testing import handshake_request

from .harness import Served, read_response, serve

INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c"}}


def send(
    sock: socket.socket,
    served: Served,
    method: str,
    body: bytes = b"",
    **headers: str,
) -> tuple[int, dict[str, str], bytes]:
    fields = {
        "Host": f"127.0.0.1:{served.port}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
        "Content-Length": str(len(body)),
        **headers,
    }
    head = "".join(f"{name}: {value}\r\n" for name, value in fields.items())
    sock.sendall(f"{method} /sessions HTTP/1.1\r\n{head}\r\n".encode() + body)
    return read_response(sock)


def initialize(sock: socket.socket, served: Served, owner: str) -> tuple[int, str | None]:
    body = json.dumps(handshake_request("initialize", INIT)).encode()
    status, headers, _ = send(sock, served, "POST", body, **{"X-Owner": owner})
    return status, headers.get("mcp-session-id")


def quick(sock: socket.socket, served: Served, owner: str, session_id: str) -> int:
    body = json.dumps(handshake_request("tools/call", {"name": "quick", "arguments": {}})).encode()
    headers = {"X-Owner": owner, "Mcp-Session-Id": session_id}
    status, _, answer = send(sock, served, "POST", body, **headers)
    assert b"quick" in answer, answer
    return status


def churn(sock: socket.socket, served: Served, count: int) -> None:
    for index in range(count):
        owner = f"owner-{index % 7}"
        status, session_id = initialize(sock, served, owner)
        assert status == 200 and session_id is not None
        assert quick(sock, served, owner, session_id) == 200
        headers = {"X-Owner": owner, "Mcp-Session-Id": session_id}
        ended, _, _ = send(sock, served, "DELETE", b"", **headers)
        assert ended == 204


def test_ten_thousand_sessions_come_and_go_and_memory_comes_back(tmp_path: Path) -> None:
    with serve(tmp_path, sessions=True) as served, served.connect() as sock:
        churn(sock, served, 1_000)  # the baseline includes what a warm server holds
        time.sleep(0.2)
        rss = served.rss_kib()
        churn(sock, served, 10_000)
        time.sleep(0.2)
        assert served.rss_kib() <= rss * 1.05, (rss, served.rss_kib())
        assert "Traceback" not in served.log()


def test_a_session_flood_meets_its_quota_and_other_owners_are_served(tmp_path: Path) -> None:
    limits = {"max_sessions": 8, "max_sessions_per_owner": 4}
    with serve(tmp_path, limits, sessions=True) as served, served.connect() as sock:
        opened = [initialize(sock, served, "flood") for _ in range(6)]
        assert [status for status, _ in opened] == [200] * 4 + [429] * 2
        assert [session for _, session in opened[4:]] == [None, None]
        body = json.dumps(handshake_request("initialize", INIT)).encode()
        _, _, refusal = send(sock, served, "POST", body, **{"X-Owner": "flood"})
        assert json.loads(refusal)["error"] == {
            "code": -31999,
            "message": "Session quota exceeded; end a session or wait for a call to finish",
        }
        # another owner is served, up to the server's own limit
        others = [initialize(sock, served, f"other-{n}") for n in range(5)]
        assert [status for status, _ in others] == [200] * 4 + [503]
        # the flood's existing sessions and the others' still work
        for owner, (_, session_id) in [("flood", opened[0]), ("other-0", others[0])]:
            assert session_id is not None and quick(sock, served, owner, session_id) == 200


def test_a_client_that_never_answers_costs_one_bounded_wait(tmp_path: Path) -> None:
    """The server asks (``roots/list`` on the call's stream) and the client never answers: the
    call fails with the fixed error once ``client_request_timeout_seconds`` has passed, its
    request stops waiting, and the session and the server go on serving."""
    limits = {"client_request_timeout_seconds": 0.5, "max_pending_client_requests": 1}
    with serve(tmp_path, limits, sessions=True) as served, served.connect() as sock:
        init = {**INIT, "capabilities": {"roots": {}}}
        body = json.dumps(handshake_request("initialize", init)).encode()
        status, headers, _ = send(sock, served, "POST", body, **{"X-Owner": "o"})
        session_id = headers.get("mcp-session-id")
        assert status == 200 and session_id is not None
        call = handshake_request("tools/call", {"name": "asks", "arguments": {}}, id=9)
        fields = {"X-Owner": "o", "Mcp-Session-Id": session_id}
        for _ in range(2):  # the first wait ended: one more request may wait again
            started = time.monotonic()
            status, _, stream = send(sock, served, "POST", json.dumps(call).encode(), **fields)
            waited = time.monotonic() - started
            assert status == 200 and 0.5 <= waited < 5.0, waited
            events = [
                json.loads(line.removeprefix(b"data: "))
                for line in stream.split(b"\n")
                if line.startswith(b"data: {")
            ]
            assert [event.get("method") for event in events] == ["roots/list", None]
            assert events[-1]["error"] == {
                "code": -32603,
                "message": "The client did not answer the server's request for input; "
                "retry the call",
            }
        assert quick(sock, served, "o", session_id) == 200
        assert "Traceback" not in served.log()
