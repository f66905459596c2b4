"""The stdio transport: newline-delimited JSON-RPC over a process's stdin and stdout.

It only moves bytes: it cuts stdin into lines, hands each line to the handler in its own task
and frames what the handler writes.  It never parses JSON; what a line means, and how an
oversized or a refused one is answered, are the handler's decisions.

What one connection holds is bounded by the handler's limits.  At most ``max_stdio_requests``
lines are served at once; a line past that goes to ``handler.refuse_overloaded`` in the reader
itself.  The bytes of the lines being served plus the answers not yet written stay within
``max_stdio_buffered_bytes``: past it, stdin is not read until they drop, so the pipe holds
the client back and nothing is lost, and a client that never reads our stdout cannot make us
buffer without bound either.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import logging
import os
import select
import stat
import sys
import threading
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Final

from mcpkit.server._http import StdioHandler

__all__ = ["run_stdio", "serve_stdio"]

_log: Final = logging.getLogger("mcpkit.stdio")

_CHUNK: Final = 64 * 1024
"""Bytes asked of stdin at a time, and the most bytes of queued answers joined into one write
(one hop to the writer thread for many small answers)."""

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


class _Held:
    """What one connection holds: the lines being served, and the bytes of those lines plus
    the answers not yet written."""

    __slots__ = ("_dropped", "bytes", "requests")

    def __init__(self) -> None:
        self.requests = 0
        self.bytes = 0
        self._dropped = asyncio.Event()

    def release(self, size: int) -> None:
        self.bytes -= size
        self._dropped.set()

    async def dropped(self) -> None:
        """Wait until a line ends or an answer is written."""
        self._dropped.clear()
        await self._dropped.wait()


class _Output:
    """The handler's writer.  ``write`` checks and queues a message and returns; only while
    the connection holds more than its bound of bytes (a client that does not read) does it
    wait for room, so nothing the handler writes can grow without limit.  One task writes the
    queue in order, whole lines at a time, so concurrent requests never interleave their
    bytes."""

    __slots__ = (
        "_broken", "_gate", "_held", "_idle", "_max_bytes", "_queue", "_ready", "_task",
        "_waiting", "_write_bytes",
    )  # fmt: skip

    def __init__(
        self, write_bytes: Callable[[bytes], Awaitable[None]], held: _Held, max_bytes: int
    ) -> None:
        self._write_bytes = write_bytes
        self._held = held
        self._max_bytes = max_bytes
        self._gate = asyncio.Lock()
        self._waiting = 0
        self._queue: collections.deque[bytes] = collections.deque()
        self._ready = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._broken = False
        self._task = asyncio.create_task(self._run())

    async def write(self, message: bytes) -> None:
        if b"\n" in message:
            raise ValueError("a stdio message must not contain a newline")
        if self._waiting or self._held.bytes > self._max_bytes:
            # A client that does not read: answers and notifications wait for the writer to
            # make room, one after another in arrival order (the gate is first come, first
            # served, and nobody passes those already waiting).
            self._waiting += 1
            try:
                async with self._gate:
                    held = self._held
                    while held.bytes > self._max_bytes and not self._broken:
                        await held.dropped()
                    self._queue.append(message)
            finally:
                self._waiting -= 1
        else:
            self._queue.append(message)
        self._held.bytes += len(message) + 1
        self._idle.clear()
        self._ready.set()

    async def flush(self) -> None:
        """Wait until everything queued is written."""
        await self._idle.wait()

    async def close(self) -> None:
        """Stop the writing task; what is still queued is dropped."""
        self._task.cancel()
        await asyncio.wait((self._task,))

    async def _run(self) -> None:
        queue = self._queue
        while True:
            await self._ready.wait()
            self._ready.clear()
            while queue:
                parts: list[bytes] = []
                size = 0
                while queue and (not parts or size + len(queue[0]) < _CHUNK):
                    message = queue.popleft()
                    parts += (message, b"\n")
                    size += len(message) + 1
                try:
                    if not self._broken:
                        await self._write_bytes(b"".join(parts))
                except Exception as error:
                    # The client closed its end (or stdout failed otherwise): said once, and
                    # what follows is dropped rather than written to a dead pipe.
                    self._broken = True
                    _log.error("writing stdout failed (%s); answers are dropped", error)
                finally:
                    del parts
                    self._held.release(size)
            self._idle.set()


async def _logged(work: Awaitable[None]) -> None:
    """Run one line's work; a failure is the handler's bug, logged but never fatal."""
    try:
        await work
    except Exception:
        _log.exception("a stdio message handler failed")


async def serve_stdio(
    handler: StdioHandler,
    reader: asyncio.StreamReader,
    write_bytes: Callable[[bytes], Awaitable[None]],
    *,
    max_line_bytes: int,
    grace_seconds: float = 5.0,
) -> bool:
    """Serve ``handler`` until ``reader`` reaches end of file; return whether requests still
    running after the grace period were cut off.

    Each line runs in its own task, so a request that waits (a slow tool, a never-ending
    ``subscriptions/listen``) never stops the reader.  ``write_bytes`` gets whole lines, one
    call at a time and in order, and should write them whole.  At end of file the lines in
    flight get ``grace_seconds`` to finish; then the handler shuts down (it answers each
    request still in flight with the overload error), what is left is cancelled, and this
    returns once every answer is written.  The same clean-up runs when serving itself is
    cancelled, except that answers not yet written are dropped.
    """
    limits = handler.limits
    max_requests = limits.max_stdio_requests
    max_bytes = limits.max_stdio_buffered_bytes
    splitter = _LineSplitter(max_line_bytes)
    held = _Held()
    output = _Output(write_bytes, held, max_bytes)
    write = output.write
    tasks: set[asyncio.Task[None]] = set()  # strong references: the loop keeps only weak ones

    async def serve_line(line: bytes | None, size: int) -> None:
        try:
            if line is None:
                await _logged(handler.reject_oversized(write))
            else:
                await _logged(handler.receive(line, write))
        finally:
            held.requests -= 1
            held.release(size)

    async def take(line: bytes | None) -> None:
        size = 0 if line is None else len(line)
        while held.bytes and held.bytes + size > max_bytes:
            await held.dropped()  # stdin is not read meanwhile
        if held.requests >= max_requests:
            await asyncio.sleep(0)  # lines that need no waiting finish first
            if held.requests >= max_requests:
                if line is None:
                    await _logged(handler.reject_oversized(write))
                else:
                    await _logged(handler.refuse_overloaded(line, write))
                return
        held.requests += 1
        held.bytes += size
        task = asyncio.create_task(serve_line(line, size))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    try:
        try:
            while data := await reader.read(_CHUNK):
                for line in splitter.feed(data):
                    await take(line)
            for line in splitter.close():
                await take(line)
            if tasks:
                await asyncio.wait(tasks, timeout=grace_seconds)
        finally:
            try:
                cut_off = await handler.shutdown(write)
            finally:
                left = tuple(tasks)
                for task in left:
                    task.cancel()
                if left:
                    await asyncio.wait(left)
        if cut_off:
            _log.warning(
                "stdin closed: %d request(s) still running after the %g s grace period were "
                "cut off and answered as overloaded",
                cut_off,
                grace_seconds,
            )
        await output.flush()
    finally:
        await output.close()
    return cut_off > 0


def run_stdio(
    handler_factory: Callable[[], StdioHandler],
    *,
    max_line_bytes: int,
    running: Callable[[], AbstractAsyncContextManager[object]] | None = None,
) -> bool:
    """Serve one handler over this process's stdin and stdout until stdin closes (blocking);
    return whether requests still running after the grace period were cut off.  ``running``
    (the server's start and stop, lifespans included) is entered around the serving.

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
            return runner.run(_serve_process(handler_factory, out_fd, max_line_bytes, running))
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
    handler_factory: Callable[[], StdioHandler],
    out_fd: int,
    max_line_bytes: int,
    running: Callable[[], AbstractAsyncContextManager[object]] | None = None,
) -> bool:
    """Wire fd 0 and ``out_fd`` to :func:`serve_stdio`, and undo what the loop changed."""
    loop = asyncio.get_running_loop()
    in_fd = sys.stdin.fileno()
    was_blocking = os.get_blocking(in_fd)
    reader = asyncio.StreamReader(limit=_CHUNK, loop=loop)
    # The transport closes the file it is given: a duplicate or a pipe, never fd 0 itself.
    source = os.dup(in_fd) if _is_stream(in_fd) else _through_pipe(in_fd)
    pipe = open(source, "rb", buffering=0)  # noqa: SIM115
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    # One writer thread: a blocking write never stalls the loop (which keeps reading stdin up
    # to the connection's bound, so a client that writes before it reads is not held up before
    # that), and writes leave in order, whole.
    output = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="mcpkit-stdout")

    async def write_bytes(data: bytes) -> None:
        await loop.run_in_executor(output, _write_all, out_fd, data)

    try:
        async with contextlib.nullcontext() if running is None else running():
            handler = handler_factory()
            return await serve_stdio(handler, reader, write_bytes, max_line_bytes=max_line_bytes)
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
