"""The stdio transport: framing, concurrency, its bounds, end of input and the process entry
point."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from mcpkit import DEFAULT_LIMITS, CompleteResult, Limits, Revision, Server, endpoint, tool
from mcpkit.server._http import Writer
from mcpkit.testing import stateless_request
from mcpkit.transports._stdio import _copy, _LineSplitter, _write_all, run_stdio, serve_stdio


class Recorder:
    """A session that answers every line with ``ok:<line>`` and records what happened.

    A few lines act: ``hold…`` waits until ``release`` arrives, ``forever`` never ends,
    ``boom`` raises, ``sleep<seconds>`` sleeps, ``newline`` tries to write a bad message first.
    A line refused at the bound is answered ``overloaded:<line>``, except ``release``, which
    still acts (as ``notifications/cancelled`` does).  ``shutdown`` answers each line still
    running with ``stopped:<line>``.
    """

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.limits = limits
        self.lines: list[bytes] = []
        self.running: list[bytes] = []
        self.refused: list[bytes] = []
        self.oversized = 0
        self.shutdowns = 0
        self.cancelled: list[bytes] = []
        self.cancelled_at_shutdown: list[bytes] | None = None
        self.errors: list[Exception] = []
        self.release = asyncio.Event()

    async def receive(self, line: bytes, write: Writer) -> None:
        self.lines.append(line)
        self.running.append(line)
        try:
            if line.startswith(b"hold"):
                await self.release.wait()
            elif line == b"release":
                self.release.set()
            elif line == b"forever":
                await asyncio.Event().wait()
            elif line == b"boom":
                raise RuntimeError("boom")
            elif line.startswith(b"sleep"):
                await asyncio.sleep(float(line[5:]))
            elif line == b"newline":
                try:
                    await write(b'{"a":\n1}')
                except ValueError as exc:
                    self.errors.append(exc)
        except asyncio.CancelledError:
            self.cancelled.append(line)
            raise
        finally:
            self.running.remove(line)
        await write(b"ok:" + line)

    async def reject_oversized(self, write: Writer) -> None:
        self.oversized += 1
        await write(b"oversized")

    async def refuse_overloaded(self, line: bytes, write: Writer) -> None:
        self.refused.append(line)
        if line == b"release":
            self.release.set()
        else:
            await write(b"overloaded:" + line)

    async def shutdown(self, write: Writer) -> int:
        self.shutdowns += 1
        self.cancelled_at_shutdown = list(self.cancelled)
        for line in self.running:
            await write(b"stopped:" + line)
        return len(self.running)


async def serve_for(
    session: Recorder,
    data: bytes,
    *,
    max_line_bytes: int = 16,
    grace_seconds: float = 5.0,
    write_bytes: Callable[[bytes], Awaitable[None]] | None = None,
) -> tuple[bytes, bool]:
    """Serve ``data`` (then end of file); everything written, and whether work was cut off."""
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    reader.feed_eof()
    out = bytearray()

    async def collect(chunk: bytes) -> None:
        out.extend(chunk)

    served = serve_stdio(
        session,
        reader,
        write_bytes or collect,
        max_line_bytes=max_line_bytes,
        grace_seconds=grace_seconds,
    )
    cut_off = await asyncio.wait_for(served, timeout=10)
    return bytes(out), cut_off


async def serve(
    session: Recorder,
    data: bytes,
    *,
    max_line_bytes: int = 16,
    grace_seconds: float = 5.0,
    write_bytes: Callable[[bytes], Awaitable[None]] | None = None,
) -> bytes:
    """Serve ``data`` (then end of file) and return everything written; nothing was cut off."""
    out, cut_off = await serve_for(
        session,
        data,
        max_line_bytes=max_line_bytes,
        grace_seconds=grace_seconds,
        write_bytes=write_bytes,
    )
    assert not cut_off
    return out


def run(
    data: bytes, *, grace_seconds: float = 5.0, limits: Limits = DEFAULT_LIMITS
) -> tuple[Recorder, bytes]:
    """Serve ``data`` to a fresh ``Recorder`` with a 16-byte line limit."""

    async def main() -> tuple[Recorder, bytes]:
        session = Recorder(limits)
        return session, await serve(session, data, grace_seconds=grace_seconds)

    return asyncio.run(main())


class CountingReader(asyncio.StreamReader):
    """A reader that counts the bytes the transport has taken from it."""

    def __init__(self) -> None:
        super().__init__()
        self.taken = 0

    async def read(self, n: int = -1) -> bytes:
        data = await super().read(n)
        self.taken += len(data)
        return data


async def settle() -> None:
    """Give the transport time to do all it can do now."""
    for _ in range(20):
        await asyncio.sleep(0.005)


# --- framing ---------------------------------------------------------------------------------


def test_each_line_is_handed_over_and_answered_with_newline_framing() -> None:
    session, out = run(b'{"id":1}\n{"id":2}\n')
    assert session.lines == [b'{"id":1}', b'{"id":2}']
    assert out == b'ok:{"id":1}\nok:{"id":2}\n'
    assert session.shutdowns == 1


def test_crlf_loses_one_cr_and_blank_lines_are_ignored() -> None:
    session, out = run(b"\n\r\na\r\n\n\n b\r\r\n\r\n")
    assert session.lines == [b"a", b" b\r"]
    assert out == b"ok:a\nok: b\r\n"


def test_a_last_line_without_newline_still_counts() -> None:
    session, out = run(b"a\nlast")
    assert session.lines == [b"a", b"last"]
    assert out == b"ok:a\nok:last\n"


def test_line_at_the_limit_is_accepted_and_one_byte_over_is_rejected() -> None:
    at, over = b"x" * 16, b"y" * 17
    session, out = run(at + b"\n" + over + b"\n" + at + b"\r\n" + over + b"\r\nnext\n" + over)
    assert session.lines == [at, at, b"next"]  # the CR of a CRLF does not count
    assert session.oversized == 3  # the unterminated last line is over the limit too
    assert out == b"ok:" + at + b"\noversized\nok:" + at + b"\noversized\nok:next\noversized\n"


def test_framing_is_the_same_for_every_chunking() -> None:
    data = (
        b"a" * 8
        + b"\r\n"  # at the limit, CRLF
        + b"b" * 9
        + b"\n"  # one over
        + b"\r\n\n"  # blank
        + b"c" * 9
        + b"\r\n"  # one over, CRLF
        + b"d" * 30
        + b"\n"  # far over
        + b"\r" * 9
        + b"\n"  # eight CRs are a line at the limit
        + b"e\rf\n"  # a CR inside a line stays
        + b"tail"
    )
    expected = [b"a" * 8, None, None, None, b"\r" * 8, b"e\rf", b"tail"]
    for size in range(1, len(data) + 1):
        splitter = _LineSplitter(8)
        lines: list[bytes | None] = []
        for start in range(0, len(data), size):
            lines += splitter.feed(data[start : start + size])
        lines += splitter.close()
        assert lines == expected, size


def test_an_oversized_line_cut_by_end_of_file_is_rejected() -> None:
    splitter = _LineSplitter(4)
    assert splitter.feed(b"ok\n" + b"z" * 100) == [b"ok"]
    assert splitter.close() == [None]
    assert splitter.close() == []  # nothing is left over


def test_a_huge_line_is_skipped_without_being_buffered() -> None:
    limit = 1024 * 1024
    block = b"x" * (64 * 1024)
    blocks = 10 * limit // len(block)  # a 10 MiB line against a 1 MiB limit

    async def main() -> tuple[Recorder, bytes, int]:
        session = Recorder()
        reader = asyncio.StreamReader()
        out = bytearray()

        async def collect(chunk: bytes) -> None:
            out.extend(chunk)

        async def feed() -> None:
            for _ in range(blocks):
                reader.feed_data(block)
                await asyncio.sleep(0)  # let the transport's reader keep up, as a pipe would
            reader.feed_data(b"\nafter\n")
            reader.feed_eof()

        tracemalloc.start()
        try:
            feeder = asyncio.create_task(feed())
            await serve_stdio(session, reader, collect, max_line_bytes=limit)
            await feeder
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        return session, bytes(out), peak

    session, out, peak = asyncio.run(main())
    assert out == b"oversized\nok:after\n"
    assert session.lines == [b"after"]
    assert peak < 2 * limit  # the line is ten times that


# --- concurrency and writing -------------------------------------------------------------------


def test_a_waiting_message_does_not_block_the_next_one() -> None:
    # Served one at a time, "hold" would wait forever for "release".
    session, out = run(b"hold\nrelease\n")
    assert out == b"ok:release\nok:hold\n"
    assert session.cancelled == []


def test_concurrent_writes_never_interleave() -> None:
    out = bytearray()

    async def write_in_halves(chunk: bytes) -> None:
        half = len(chunk) // 2
        out.extend(chunk[:half])
        await asyncio.sleep(0)  # a second writer would get in here
        out.extend(chunk[half:])

    async def main() -> None:
        lines = b"".join(b"message-%d\n" % number for number in range(20))
        await serve(Recorder(), lines, write_bytes=write_in_halves)

    asyncio.run(main())
    assert sorted(out.splitlines()) == sorted(b"ok:message-%d" % n for n in range(20))
    assert out.endswith(b"\n")


def test_a_message_containing_a_newline_is_refused() -> None:
    session, out = run(b"newline\n")
    assert [str(error) for error in session.errors] == [
        "a stdio message must not contain a newline"
    ]
    assert out == b"ok:newline\n"  # nothing of the bad message was written


def test_a_failing_receive_is_logged_and_serving_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="mcpkit.stdio"):
        session, out = run(b"boom\nafter\n")
    assert session.lines == [b"boom", b"after"]
    assert out == b"ok:after\n"
    [record] = caplog.records
    assert record.name == "mcpkit.stdio"
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], RuntimeError)
    assert b"boom" not in record.getMessage().encode()  # the line itself is not logged


def test_a_failing_stdout_is_logged_once_and_later_answers_are_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    attempts: list[bytes] = []

    async def broken(chunk: bytes) -> None:
        attempts.append(chunk)
        raise BrokenPipeError(32, "Broken pipe")

    async def main() -> Recorder:
        session = Recorder()
        await serve(session, b"sleep0\nsleep0.01\nsleep0.02\n", write_bytes=broken)
        return session

    with caplog.at_level(logging.DEBUG, logger="mcpkit.stdio"):
        session = asyncio.run(main())
    assert session.lines == [b"sleep0", b"sleep0.01", b"sleep0.02"]  # serving went on
    assert attempts == [b"ok:sleep0\n"]  # nothing more was tried on the dead pipe
    [record] = caplog.records
    assert record.levelno == logging.ERROR and record.exc_info is None
    assert record.getMessage() == (
        "writing stdout failed ([Errno 32] Broken pipe); answers are dropped"
    )


# --- the bounds ---------------------------------------------------------------------------------


def test_requests_at_the_bound_are_served_and_one_past_it_is_refused_at_once() -> None:
    """Three in flight is the bound: a fourth line is refused at once, in arrival order, and a
    line over the bound can still act (``release`` stands for ``notifications/cancelled``)."""
    session, out = run(
        b"hold-1\nhold-2\nhold-3\nfourth\nrelease\n", limits=Limits(max_stdio_requests=3)
    )
    assert session.lines == [b"hold-1", b"hold-2", b"hold-3"]
    assert session.refused == [b"fourth", b"release"]
    assert out == b"overloaded:fourth\nok:hold-1\nok:hold-2\nok:hold-3\n"


def test_lines_that_need_no_waiting_are_not_refused_at_the_bound() -> None:
    lines = b"".join(b"quick-%d\n" % number for number in range(50))
    session, out = run(lines, limits=Limits(max_stdio_requests=1))
    assert session.refused == []
    assert out.splitlines() == [b"ok:quick-%d" % number for number in range(50)]


def test_an_oversized_line_past_the_bound_is_still_rejected() -> None:
    session, out = run(b"hold\n" + b"z" * 40 + b"\nrelease\n", limits=Limits(max_stdio_requests=1))
    assert (session.lines, session.oversized, session.refused) == ([b"hold"], 1, [b"release"])
    assert out == b"oversized\nok:hold\n"


LINE = 256 * 1024  # four of them are exactly the 1 MiB bound below
BOUND = Limits(max_request_bytes=LINE, max_stdio_buffered_bytes=4 * LINE)


def test_reading_stops_when_held_lines_would_pass_the_bound_and_resumes_without_loss() -> None:
    held = [b"hold-%d-" % number for number in range(5)]
    held = [start + b"x" * (LINE - len(start)) for start in held]
    tail = [b"tail-%d" % number for number in range(8_000)]  # more than one read's worth
    data = b"".join(line + b"\n" for line in held + tail)

    async def main() -> tuple[Recorder, bytes]:
        session = Recorder(BOUND)
        reader = CountingReader()
        reader.feed_data(data)
        reader.feed_eof()
        out = bytearray()

        async def collect(chunk: bytes) -> None:
            out.extend(chunk)

        served = asyncio.create_task(serve_stdio(session, reader, collect, max_line_bytes=LINE))
        await settle()
        # Four lines at the bound are served; the fifth would pass it, so reading stopped.
        assert session.lines == held[:4]
        assert reader.taken < len(data)
        taken = reader.taken
        await settle()
        assert reader.taken == taken and session.lines == held[:4]
        session.release.set()
        assert await asyncio.wait_for(served, 10) is False
        return session, bytes(out)

    session, out = asyncio.run(main())
    assert session.lines == held + tail
    assert sorted(out.splitlines()) == sorted(b"ok:" + line for line in held + tail)


def test_reading_stops_while_answers_wait_for_a_client_that_does_not_read() -> None:
    big = [b"big-%d-" % number for number in range(40)]
    big = [start + b"y" * (LINE // 2 - len(start)) for start in big]
    data = b"".join(line + b"\n" for line in big)
    gate = asyncio.Event()
    out = bytearray()

    async def blocked(chunk: bytes) -> None:
        await gate.wait()
        out.extend(chunk)

    async def main() -> Recorder:
        session = Recorder(BOUND)
        reader = CountingReader()
        reader.feed_data(data)
        reader.feed_eof()
        served = asyncio.create_task(serve_stdio(session, reader, blocked, max_line_bytes=LINE))
        await settle()
        # Eight 128 KiB lines are the 1 MiB bound; their answers, a few bytes longer each and
        # never written, then keep it held, so stdin is left alone.
        assert len(session.lines) == 8
        assert reader.taken < len(data)
        gate.set()
        assert await asyncio.wait_for(served, 10) is False
        return session

    session = asyncio.run(main())
    assert session.lines == big
    assert out.splitlines() == [b"ok:" + line for line in big]


# --- end of input ------------------------------------------------------------------------------


def test_end_of_file_waits_for_messages_in_flight() -> None:
    started = time.monotonic()
    session, out = run(b"sleep0.05\n", grace_seconds=5.0)
    assert out == b"ok:sleep0.05\n"
    assert session.cancelled == []
    assert session.shutdowns == 1
    assert time.monotonic() - started < 4  # it did not sit out the grace period


def test_input_of_only_blank_lines_ends_with_just_a_shutdown() -> None:
    session, out = run(b"\n\r\n\n")
    assert (session.lines, session.oversized, out) == ([], 0, b"")
    assert session.shutdowns == 1


def test_end_of_file_with_nothing_cut_off_logs_nothing(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="mcpkit.stdio"):
        _, out = run(b"quick\n", grace_seconds=0.05)
    assert out == b"ok:quick\n"
    assert caplog.records == []


def test_after_the_grace_period_the_session_answers_the_rest_then_it_is_cancelled(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> tuple[Recorder, bytes, bool]:
        session = Recorder()
        out, cut_off = await serve_for(session, b"forever\nquick\n", grace_seconds=0.05)
        return session, out, cut_off

    with caplog.at_level(logging.DEBUG, logger="mcpkit.stdio"):
        session, out, cut_off = asyncio.run(main())
    assert out == b"ok:quick\nstopped:forever\n"  # answered before serving returned
    assert cut_off
    assert session.shutdowns == 1
    assert session.cancelled_at_shutdown == []  # shutdown came first
    assert session.cancelled == [b"forever"]
    [record] = caplog.records
    assert (record.name, record.levelno, record.exc_info) == ("mcpkit.stdio", logging.WARNING, None)
    assert record.getMessage() == (
        "stdin closed: 1 request(s) still running after the 0.05 s grace period were cut off "
        "and answered as overloaded"
    )


def test_cancelling_the_server_shuts_the_session_down_and_cancels_messages() -> None:
    async def main() -> Recorder:
        session = Recorder()
        reader = asyncio.StreamReader()  # never reaches end of file
        reader.feed_data(b"forever\n")

        async def discard(chunk: bytes) -> None:
            pass

        server = asyncio.create_task(serve_stdio(session, reader, discard, max_line_bytes=16))
        while not session.lines:
            await asyncio.sleep(0)
        server.cancel()
        with pytest.raises(asyncio.CancelledError):
            await server
        return session

    session = asyncio.run(main())
    assert session.shutdowns == 1
    assert session.cancelled == [b"forever"]


# --- the process entry point -------------------------------------------------------------------


class Printer:
    """A session that prints and writes to fd 1 before answering, as careless code would."""

    limits = DEFAULT_LIMITS

    def __init__(self) -> None:
        self.loops: list[str] = []
        self.stdout_was_stderr: list[bool] = []

    async def receive(self, line: bytes, write: Writer) -> None:
        self.loops.append(type(asyncio.get_running_loop()).__module__)
        self.stdout_was_stderr.append(sys.stdout is sys.stderr)
        print("stray print", line.decode())
        os.write(1, b"raw fd write\n")
        await write(b"answer:" + line)

    async def reject_oversized(self, write: Writer) -> None:
        await write(b"oversized")

    async def refuse_overloaded(self, line: bytes, write: Writer) -> None:
        raise AssertionError("no bound is reached")

    async def shutdown(self, write: Writer) -> int:
        return 0


STDIN = b"one\r\n\n" + b"x" * 40 + b"\ntwo"
ANSWERS = [b"answer:one", b"answer:two", b"oversized"]


def run_in_process(monkeypatch: pytest.MonkeyPatch, stdin_fd: int, session: Printer) -> bytes:
    """``run_stdio`` in this process, with fd 0 and fd 1 swapped for the given input and a pipe."""
    out_r, out_w = os.pipe()
    saved_fd1 = os.dup(1)
    stdin = open(stdin_fd, "rb", buffering=0)  # noqa: SIM115
    monkeypatch.setattr(sys, "stdin", stdin)
    stdout = sys.stdout
    os.dup2(out_w, 1)
    os.close(out_w)
    try:
        assert run_stdio(lambda: session, max_line_bytes=32) is False
        assert sys.stdout is stdout
        assert os.get_blocking(stdin_fd)
    finally:
        os.dup2(saved_fd1, 1)
        os.close(saved_fd1)
        stdin.close()
    with open(out_r, "rb") as out:
        return out.read()


def test_run_stdio_serves_a_pipe_on_uvloop(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    in_r, in_w = os.pipe()
    os.write(in_w, STDIN)
    os.close(in_w)
    session = Printer()
    out = run_in_process(monkeypatch, in_r, session)
    assert sorted(out.splitlines()) == ANSWERS
    assert out.endswith(b"\n")
    assert session.loops == ["uvloop", "uvloop"]
    assert session.stdout_was_stderr == [True, True]
    captured = capfd.readouterr()
    assert captured.out == ""
    assert captured.err.count("stray print") == 2
    assert captured.err.count("raw fd write") == 2


def test_run_stdio_reads_a_regular_file_on_asyncio(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # as if it were not installed
    path = tmp_path / "requests.jsonl"
    path.write_bytes(STDIN)
    session = Printer()
    out = run_in_process(monkeypatch, os.open(path, os.O_RDONLY), session)
    assert sorted(out.splitlines()) == ANSWERS
    assert session.loops == ["asyncio.unix_events", "asyncio.unix_events"]
    assert capfd.readouterr().out == ""


@endpoint(path="/mcp", name="lister", version="1.0.0", revisions={Revision.V2026_07_28})
class Lister:
    @tool(name="echo")
    def echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)


def test_memory_stays_bounded_however_many_lines_are_piped_in_at_once() -> None:
    """Thousands of quick ``tools/list`` lines written as fast as the pipe takes them, through
    the real session: every one is answered, and the traced peak stays near the bound (without
    it, each line held a task and its answer: 20 MiB for these 3,000)."""
    count = 3_000
    limits = Limits(max_request_bytes=64 * 1024, max_stdio_buffered_bytes=1024 * 1024)
    server = Server(Lister, limits=limits)
    line = json.dumps(stateless_request("tools/list")).encode()
    data = b"".join(line.replace(b'"id": 1', b'"id": %d' % n) + b"\n" for n in range(count))
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    answers: list[int] = []

    def feed() -> None:
        _write_all(in_w, data)
        os.close(in_w)

    def drain() -> None:
        with open(out_r, "rb", buffering=0) as out:
            while chunk := out.read(1 << 20):
                answers.append(chunk.count(b"\n"))

    stdin = open(in_r, "rb", buffering=0)  # noqa: SIM115
    saved_stdin, saved_fd1 = sys.stdin, os.dup(1)
    os.dup2(out_w, 1)
    os.close(out_w)
    threads = [threading.Thread(target=feed), threading.Thread(target=drain)]
    tracemalloc.start()
    try:
        sys.stdin = stdin
        for thread in threads:
            thread.start()
        limit = server.engine.limits.max_request_bytes
        cut_off = run_stdio(server.stdio_connection, max_line_bytes=limit)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        sys.stdin = saved_stdin
        os.dup2(saved_fd1, 1)  # closes the last write end of the output pipe: drain() ends
        os.close(saved_fd1)
        stdin.close()
        for thread in threads:
            thread.join()
    assert not cut_off
    assert sum(answers) == count
    assert peak < 8 * 1024 * 1024


SCRIPT = """\
import os
import sys

from mcpkit import DEFAULT_LIMITS
from mcpkit.transports._stdio import run_stdio


class Session:
    limits = DEFAULT_LIMITS

    async def receive(self, line, write):
        print("stray print", line.decode())
        os.write(1, b"raw fd write\\n")
        await write(b"answer:" + line)

    async def reject_oversized(self, write):
        await write(b"oversized")

    async def shutdown(self, write):
        print("shutdown", file=sys.stderr)
        return 0


run_stdio(Session, max_line_bytes=32)
print("stdout is back")
"""


def test_a_process_answers_on_stdout_and_stray_output_goes_to_stderr(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(textwrap.dedent(SCRIPT))
    result = subprocess.run(
        [sys.executable, "-I", "-X", "dev", str(script)],
        input=STDIN,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    *answers, last = result.stdout.splitlines()
    assert sorted(answers) == ANSWERS
    assert last == b"stdout is back"
    assert result.stderr.count(b"stray print") == 2
    assert result.stderr.count(b"raw fd write") == 2
    assert b"shutdown" in result.stderr
    assert b"Warning" not in result.stderr  # -X dev reports unclosed files and transports


# --- the process helpers -----------------------------------------------------------------------


def test_write_all_waits_while_a_non_blocking_pipe_is_full() -> None:
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    filled = 0
    try:
        while True:
            filled += os.write(write_end, b"f" * 65536)
    except BlockingIOError:
        pass
    received = bytearray()

    def drain() -> None:
        time.sleep(0.05)  # let the writer find the pipe full first
        while chunk := os.read(read_end, 65536):
            received.extend(chunk)

    drainer = threading.Thread(target=drain)
    drainer.start()
    _write_all(write_end, b"m" * 200_000)
    os.close(write_end)
    drainer.join()
    os.close(read_end)
    assert len(received) == filled + 200_000
    assert received.endswith(b"m" * 200_000)


def test_copy_stops_when_the_server_closed_its_end(tmp_path: Path) -> None:
    path = tmp_path / "input"
    path.write_bytes(b"z" * 10)
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will read: the write fails with EPIPE
    with open(path, "rb") as source:
        _copy(source.fileno(), write_end)
    with pytest.raises(OSError):
        os.fstat(write_end)  # closed all the same
