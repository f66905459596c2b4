"""Handler slots under clients that leave or stop reading, against ``mcpkit serve`` on loopback.

A ``def`` tool that keeps reporting progress to a client that is gone (or that never reads)
must not keep its slot: the reports stop blocking once the request has an outcome, the slot is
freed when the handler returns, and the memory of the queued notifications goes with the
request.
"""

from __future__ import annotations

import socket
import struct
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .harness import Served, call, request_bytes, serve

# SO_LINGER on with a zero timeout: closing sends a reset, as a client that crashed would.
RESET_ON_CLOSE = struct.pack("ii", 1, 0)
QUICK_OK = {"content": [{"type": "text", "text": "quick"}], "resultType": "complete"}


def quick_call(served: Served, timeout: float = 10.0) -> tuple[int, float]:
    started = time.monotonic()
    status, _, message = call(served, "quick", {}, timeout=timeout)
    assert message["result"]["content"] == QUICK_OK["content"], message
    return status, time.monotonic() - started


def warm_up(served: Served, slots: int) -> tuple[int, int]:
    """Ordinary calls, then a full stream in every slot at once, so the baseline includes
    what a busy server holds on to (modules, every worker thread and its allocator arena).
    The baseline is the larger of the RSS now and 95% of the peak so far: how much of a
    freed peak the allocator has handed back to the system yet is a matter of timing."""
    for _ in range(20):
        quick_call(served)
    with ThreadPoolExecutor(slots) as pool:
        answers = list(
            pool.map(
                lambda _: call(served, "chatty", {"count": 2_000}, progress=True), range(slots)
            )
        )
    for status, _, message in answers:
        assert status == 200 and message["result"]["content"][0]["text"] == "done"
    time.sleep(0.5)
    return max(served.rss_kib(), served.peak_kib() * 95 // 100), served.fds()


def test_disconnecting_progress_heavy_def_calls_free_their_slots_and_memory(
    tmp_path: Path,
) -> None:
    """32 clients start a tool that reports 1 KiB of progress 100,000 times (far past the
    4 MiB queue), read a little and hang up.  Every slot comes back: a normal call is
    answered promptly, and RSS and file descriptors return to their baseline."""
    with serve(tmp_path, {"handler_slots": 8, "max_queued_requests": 8}) as served:
        rss, fds = warm_up(served, 8)
        for index in range(32):
            request = request_bytes(
                served.port, "chatty", {"count": 100_000}, id=index, progress=True
            )
            with served.connect() as sock:
                sock.sendall(request)
                assert sock.recv(4096).startswith(b"HTTP/1.1 200")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, RESET_ON_CLOSE)
        deadline = time.monotonic() + 15
        while True:
            status, seconds = quick_call(served)
            if status == 200 and seconds < 1.0:
                break
            assert time.monotonic() < deadline, "the slots were not freed"
            time.sleep(0.2)
        # all eight slots at once: none is still held by a departed client
        assert [quick_call(served)[0] for _ in range(8)] == [200] * 8
        time.sleep(1.0)
        assert served.rss_kib() <= rss * 1.10, (rss, served.rss_kib())
        assert served.fds_settle_to(fds) <= fds, (fds, served.fds())
        log = served.log()
        assert "Traceback" not in log
        assert log.count("socket.send() raised exception") <= 32


def test_a_client_that_never_reads_cannot_hold_a_slot_past_the_deadline(tmp_path: Path) -> None:
    """One slot; a client starts a progress-heavy call and stops reading while staying
    connected.  Once the deadline passes, the slot is free again for the next call."""
    limits = {"handler_slots": 1, "max_queued_requests": 4, "request_timeout_seconds": 2.0}
    with serve(tmp_path, limits) as served:
        warm_up(served, 1)
        stalled = served.connect()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        try:
            stalled.sendall(
                request_bytes(served.port, "chatty", {"count": 1_000_000}, id=7, progress=True)
            )
            time.sleep(0.5)  # the call holds the one slot, its stream backed up
            started = time.monotonic()
            status, _, message = call(served, "quick", {}, timeout=15.0)
            waited = time.monotonic() - started
            assert status == 200 and message["result"]["content"] == QUICK_OK["content"]
            assert waited < 2.0 + 1.5, waited  # the deadline, plus the handler's unwinding
        finally:
            stalled.close()
        assert "Traceback" not in served.log()
