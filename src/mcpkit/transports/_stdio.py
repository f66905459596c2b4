"""The stdio transport: newline-delimited JSON-RPC over a process's stdin and stdout.

It only moves bytes (DESIGN.md §2, layer 6): it cuts stdin into lines, hands each line to the
session in its own task and frames what the session writes.  It never parses JSON; what a line
means, and how an oversized one is answered, are the session's decisions.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import select
import stat
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Final

from mcpkit.server._http import StdioSession, Writer

__all__ = ["run_stdio", "serve_stdio"]

_log: Final = logging.getLogger("mcpkit.stdio")

_CHUNK: Final = 64 * 1024
"""Bytes asked of stdin at a time.  The framing is ours, so this (not the line limit) is also
the reader's flow-control limit: stdin is only read while the server keeps up."""

_CR: Final = 0x0D


class _LineSplitter:
    """Cuts a byte stream into lines without ever holding more than one line's limit of it.

    Sans-IO, so the framing is tested on every chunking.  ``None`` stands for a line over the
    limit: its bytes are dropped as they arrive, so a client cannot make the server buffer it.
    """

    __slots__ = ("_held", "_max", "_skipping")

    def __init__(self, max_line_bytes: int) -> None:
        self._max = max_line_bytes
        self._held = bytearray()  # the start of a line cut by a chunk: at most max + 1 (a CR)
        self._skipping = False  # the current line is over the limit; drop up to its newline

    def feed(self, data: bytes) -> list[bytes | None]:
        """The lines ``data`` completes, in order; blank lines are left out."""
        lines: list[bytes | None] = []
        start = 0
        while (end := data.find(b"\n", start)) != -1:
            self._end_line(data, start, end, lines)
            start = end + 1
        if not self._skipping:
            if len(self._held) + len(data) - start > self._max + 1:
                self._held.clear()
                self._skipping = True
            else:
                self._held += memoryview(data)[start:]
        return lines

    def close(self) -> list[bytes | None]:
        """End of input: a last line without its newline still counts."""
        lines: list[bytes | None] = []
        self._end_line(b"", 0, 0, lines)
        return lines

    def _end_line(self, data: bytes, start: int, end: int, lines: list[bytes | None]) -> None:
        held = self._held
        if self._skipping or len(held) + end - start > self._max + 1:
            self._skipping = False
            held.clear()
            lines.append(None)
            return
        if held:
            held += memoryview(data)[start:end]
            if held[-1] == _CR:
                del held[-1]
            line = bytes(held)
            held.clear()
        else:
            if end > start and data[end - 1] == _CR:
                end -= 1
            line = data[start:end]
        if len(line) > self._max:
            lines.append(None)
        elif line:
            lines.append(line)


def _framed(write_bytes: Callable[[bytes], Awaitable[None]]) -> Writer:
    """The session's writer: one message per line, one writer at a time, so that concurrent
    requests can never interleave their bytes."""
    lock = asyncio.Lock()

    async def write(message: bytes) -> None:
        if b"\n" in message:
            raise ValueError("a stdio message must not contain a newline")
        async with lock:
            await write_bytes(message + b"\n")

    return write


async def _logged(work: Awaitable[None]) -> None:
    """Run one line's work; a failure is the session's bug, logged but never fatal."""
    try:
        await work
    except Exception:
        _log.exception("a stdio message handler failed")


async def serve_stdio(
    session: StdioSession,
    reader: asyncio.StreamReader,
    write_bytes: Callable[[bytes], Awaitable[None]],
    *,
    max_line_bytes: int,
    grace_seconds: float = 5.0,
) -> None:
    """Serve ``session`` until ``reader`` reaches end of file.

    Each line runs in its own task, so a request that waits (a slow tool, a never-ending
    ``subscriptions/listen``) never stops the reader.  ``write_bytes`` gets one framed message at
    a time and should write it whole.  At end of file the tasks in flight get ``grace_seconds``
    to finish; then the session shuts down and what is left is cancelled.  The same clean-up
    runs when serving itself is cancelled.
    """
    write = _framed(write_bytes)
    splitter = _LineSplitter(max_line_bytes)
    tasks: set[asyncio.Task[None]] = set()  # strong references: the loop keeps only weak ones

    def spawn(lines: list[bytes | None]) -> None:
        for line in lines:
            if line is None:
                task = asyncio.create_task(_logged(session.reject_oversized(write)))
            else:
                task = asyncio.create_task(_logged(session.receive(line, write)))
            tasks.add(task)
            task.add_done_callback(tasks.discard)

    try:
        while data := await reader.read(_CHUNK):
            spawn(splitter.feed(data))
        spawn(splitter.close())
        if tasks:
            await asyncio.wait(tasks, timeout=grace_seconds)
    finally:
        try:
            await session.shutdown()
        finally:
            left = tuple(tasks)
            for task in left:
                task.cancel()
            if left:
                await asyncio.wait(left)


def run_stdio(session_factory: Callable[[], StdioSession], *, max_line_bytes: int) -> None:
    """Serve one session over this process's stdin and stdout until stdin closes (blocking).

    While serving, both ``sys.stdout`` and file descriptor 1 point at stderr, so a stray
    ``print()``, a library or a child process cannot corrupt the protocol stream; messages go to
    a private duplicate of the original stdout.  Everything is put back afterwards.
    """
    sys.stdout.flush()
    out_fd = os.dup(1)
    saved_stdout = sys.stdout
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        with asyncio.Runner(loop_factory=_loop_factory()) as runner:
            runner.run(_serve_process(session_factory, out_fd, max_line_bytes))
    finally:
        sys.stdout = saved_stdout
        os.dup2(out_fd, 1)
        os.close(out_fd)


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop when it is installed (the faster loop), else asyncio's own."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


async def _serve_process(
    session_factory: Callable[[], StdioSession], out_fd: int, max_line_bytes: int
) -> None:
    """Wire fd 0 and ``out_fd`` to :func:`serve_stdio`, and undo what the loop changed."""
    loop = asyncio.get_running_loop()
    in_fd = sys.stdin.fileno()
    was_blocking = os.get_blocking(in_fd)
    reader = asyncio.StreamReader(limit=_CHUNK, loop=loop)
    # The transport closes the file it is given: a duplicate or a pipe, never fd 0 itself.
    source = os.dup(in_fd) if _is_stream(in_fd) else _through_pipe(in_fd)
    pipe = open(source, "rb", buffering=0)  # noqa: SIM115
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    # One writer thread: a blocking write never stalls the loop (which keeps reading stdin, so a
    # client that writes before it reads cannot deadlock us), and writes leave in order, whole.
    output = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="mcpkit-stdout")

    async def write_bytes(data: bytes) -> None:
        await loop.run_in_executor(output, _write_all, out_fd, data)

    try:
        session = session_factory()
        await serve_stdio(session, reader, write_bytes, max_line_bytes=max_line_bytes)
    finally:
        transport.close()
        output.shutdown(wait=True)
        os.set_blocking(in_fd, was_blocking)  # the loop made the shared description non-blocking


def _is_stream(fd: int) -> bool:
    """Whether the event loop can watch ``fd``: a pipe, a socket or a terminal.  A regular file
    or ``/dev/null`` cannot be polled (uvloop even aborts the process on one)."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


def _through_pipe(fd: int) -> int:
    """A pipe fed from ``fd`` by a thread, for input the loop cannot watch (``< file``).  The
    pipe's capacity is the back-pressure: the thread reads only as fast as the server does."""
    read_end, write_end = os.pipe()
    threading.Thread(target=_copy, args=(fd, write_end), name="mcpkit-stdin", daemon=True).start()
    return read_end


def _copy(source: int, pipe: int) -> None:
    """Copy ``source`` into ``pipe`` until either ends (a read error counts as end of input,
    a closed pipe means the server stopped), then close the pipe: end of file for the loop."""
    try:
        while chunk := os.read(source, _CHUNK):
            _write_all(pipe, chunk)
    except OSError:
        pass
    finally:
        os.close(pipe)


def _write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data``, from a worker thread.

    ``fd`` may share its file description with stdin (a terminal, or one socket on both), which
    the event loop made non-blocking; then wait until it can take more instead of failing.
    """
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            poller = select.poll()
            poller.register(fd, select.POLLOUT)
            poller.poll()
