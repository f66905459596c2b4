"""Hostile connections against ``mcpkit serve`` on loopback: oversized and endless heads,
slow heads and bodies, connections that never send a byte, absolute-form targets.  Each is
refused with a fixed answer or closed on time, and the server keeps serving others promptly
with its memory and file descriptors back at their baseline."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from pathlib import Path

from .harness import Served, call, read_response, serve

INVALID = b'{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"}}'


def quick(served: Served) -> float:
    started = time.monotonic()
    status, _, message = call(served, "quick", {})
    assert status == 200 and message["result"]["content"][0]["text"] == "quick"
    return time.monotonic() - started


def baseline(served: Served) -> tuple[int, int]:
    for _ in range(20):
        quick(served)
    time.sleep(0.2)
    return served.rss_kib(), served.fds()


def refusal(sock: socket.socket) -> tuple[int, bytes]:
    status, headers, body = read_response(sock)
    assert headers["connection"] == "close" and headers["cache-control"] == "no-store"
    return status, body


def test_an_endless_header_is_refused_without_buffering_it(tmp_path: Path) -> None:
    """100 MB of one unterminated header: refused once the head budget is spent, so memory
    does not grow and other clients are served meanwhile."""
    with serve(tmp_path) as served:
        rss, fds = baseline(served)
        sock = served.connect()
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: ")
        chunk = b"a" * (1024 * 1024)
        sent = 0
        with contextlib.suppress(OSError):  # refused and closed part-way: what is expected
            while sent < 100 * 1024 * 1024:
                sock.sendall(chunk)
                sent += len(chunk)
        # Refused after the 72 KiB head budget: what got through on top of it is what the
        # kernel's socket buffers took before the server closed.
        assert sent < 16 * 1024 * 1024, sent
        answer = b""
        with contextlib.suppress(OSError):  # the close may reset the connection instead
            while chunk := sock.recv(65536):
                answer += chunk
        sock.close()
        if answer:  # the answer arrived before the reset: it is the fixed refusal
            assert answer.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n")
            assert answer.endswith(INVALID)
        assert quick(served) < 1.0
        assert served.rss_kib() <= rss * 1.10, (rss, served.rss_kib())
        assert served.fds_settle_to(fds) <= fds, (fds, served.fds())


def test_twenty_thousand_headers_are_refused(tmp_path: Path) -> None:
    with serve(tmp_path) as served:
        with served.connect() as sock:
            fields = b"".join(b"X-H%d: v\r\n" % index for index in range(20_000))
            with contextlib.suppress(OSError):
                sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + fields + b"\r\n")
            assert refusal(sock) == (431, INVALID)
        assert quick(served) < 1.0


def test_slow_heads_and_bodies_and_silent_connections_are_closed_on_time(
    tmp_path: Path,
) -> None:
    """100 slowloris heads (a byte a second), 20 trickled bodies and 200 connections that
    never send a byte: each is closed once its timeout passes, and the server serves other
    clients throughout."""
    limits = {"header_timeout_seconds": 1.5, "body_timeout_seconds": 1.5}
    with serve(tmp_path, limits) as served:
        rss, fds = baseline(served)
        silent = [served.connect() for _ in range(200)]
        slow_heads = [served.connect() for _ in range(100)]
        slow_bodies = [served.connect() for _ in range(20)]
        for sock in slow_bodies:
            sock.sendall(
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Content-Length: 1000000\r\n\r\n{"
            )
        stop = threading.Event()

        def trickle() -> None:
            head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            for index in range(len(head)):
                for sock in slow_heads + slow_bodies:
                    with contextlib.suppress(OSError):
                        sock.send(head[index : index + 1] if sock in slow_heads else b" ")
                if stop.wait(0.5):
                    return

        feeder = threading.Thread(target=trickle)
        feeder.start()
        try:
            assert quick(served) < 1.0  # served while they all hang on
            time.sleep(2.5)
            for sock in silent + slow_heads + slow_bodies:
                sock.settimeout(5.0)
                data = b""
                while chunk := sock.recv(65536):
                    data += chunk
                assert data.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), data[:60]
                assert data.endswith(INVALID)
        finally:
            stop.set()
            feeder.join()
            for sock in silent + slow_heads + slow_bodies:
                sock.close()
        assert quick(served) < 1.0
        time.sleep(0.3)
        assert served.fds_settle_to(fds) <= fds, (fds, served.fds())
        assert served.rss_kib() <= rss * 1.10, (rss, served.rss_kib())
        assert "Traceback" not in served.log()


def test_at_the_connection_cap_idle_connections_make_room(tmp_path: Path) -> None:
    """The cap is full of connections that never send a byte (the 8,191 of the probe, at a
    cap of 64): a new client is still served, because the oldest idle one is closed for it."""
    with serve(tmp_path, {"max_connections": 64}) as served:
        idle = [served.connect() for _ in range(64)]
        time.sleep(0.2)
        try:
            assert quick(served) < 1.0
            idle[0].settimeout(5.0)
            assert idle[0].recv(1) == b""  # the oldest made room
        finally:
            for sock in idle:
                sock.close()


def test_an_absolute_form_target_is_refused(tmp_path: Path) -> None:
    with serve(tmp_path) as served:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
        for target in (b"http://evil.example/mcp", b"*"):
            with served.connect() as sock:
                sock.sendall(
                    b"POST "
                    + target
                    + b" HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % served.port
                    + b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
                    + body
                )
                assert refusal(sock) == (400, INVALID)
