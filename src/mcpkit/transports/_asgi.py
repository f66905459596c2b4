"""Streamable HTTP as a pure ASGI 3 application (docs/design/server.md §3).

``McpApp`` moves bytes between an ASGI server and the engine: it reads the body up to the
engine's limit, reports a client that went away, and writes what the engine tells it to.  It
never parses JSON, picks a status or routes: those are the engine's decisions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any, Final, Literal, TypeAlias

from mcpkit.model._checks import unchecked_factory
from mcpkit.server._alarms import Alarm, Alarms, alarms_for
from mcpkit.server._http import HttpEngine, HttpRequest, Signal

__all__ = ["ASGIApp", "McpApp", "Message", "Receive", "Scope", "Send"]

# The ASGI 3 shapes, spelled as hosts spell them (Starlette's ``Mount``, uvicorn), so the app
# mounts anywhere and any host's app fits where an ``ASGIApp`` is expected, without mcpkit
# importing a host.  Messages stay plain mappings: a TypedDict would be exact, but type checkers
# do not accept one where ``MutableMapping[str, Any]`` is declared.
Message: TypeAlias = MutableMapping[str, Any]
Scope: TypeAlias = MutableMapping[str, Any]
Receive: TypeAlias = Callable[[], Awaitable[Message]]
Send: TypeAlias = Callable[[Message], Awaitable[None]]
ASGIApp: TypeAlias = Callable[[Scope, Receive, Send], Awaitable[None]]

_WATCH_AFTER: Final = 0.05
"""Seconds an engine waits before the transport starts watching for a disconnect."""
_POLICY_VIOLATION: Final = 1008
"""WebSocket close code: this endpoint speaks HTTP only."""
_new_request: Final = unchecked_factory(HttpRequest)
"""``HttpRequest``'s fields stored as given: the class has no checks to skip, and its frozen
dataclass ``__init__`` (an ``object.__setattr__`` per field) costs more than twice as much."""


class McpApp:
    """An ASGI 3 app serving one engine; lifespan events are answered but never required."""

    __slots__ = ("_engine", "_limit", "_width")

    def __init__(self, engine: HttpEngine) -> None:
        self._engine = engine
        self._limit = engine.limits.max_request_bytes  # frozen with the engine: read it once
        self._width = len(str(self._limit))  # its digit count, for _over

    def __repr__(self) -> str:
        return f"McpApp({self._engine!r})"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # An HTTP request, the one scope on every request's path, is served right here: one
        # coroutine fewer each time than a dispatch to a method of its own.
        if scope["type"] != "http":
            await self._other(scope, receive, send)
            return
        names, values = _decode_headers(scope["headers"])
        limit = self._limit
        if _declares_more_than(names, values, limit, self._width):
            body, too_large = b"", True
        else:
            # The usual body arrives whole in one message and is taken right here, with no
            # coroutine of its own; a body in parts, too large or cut short is _read_body's.
            message = await receive()
            chunk = message.get("body", b"")
            if (
                message["type"] == "http.request"
                and not message.get("more_body", False)
                and len(chunk) <= limit
            ):
                body, too_large = bytes(chunk), False
            else:
                read = await _read_body(receive, limit, message)
                if read is None:
                    return  # the client left before its request was complete: nobody to answer
                body, too_large = read
        raw_path = scope.get("raw_path") or scope["path"].encode("utf-8")
        if scope.get("root_path"):  # mounted under a prefix: routed by the path below it
            raw_path = _below(raw_path, scope["root_path"])
        client = scope.get("client")
        server = scope.get("server")
        request = _new_request(
            method=scope["method"],
            raw_path=raw_path.decode("latin-1").partition("?")[0],
            headers=tuple(zip(names, values, strict=True)),
            body=body,
            body_too_large=too_large,
            client=(client[0], client[1]) if client else None,
            server_port=server[1] if server and isinstance(server[1], int) else None,
        )
        exchange = _Exchange(receive, send)
        if too_large:
            exchange.watch()  # it also reads the rest of the body, and drops it
        try:
            await self._engine.handle_http(request, exchange, exchange)
        finally:
            failure = exchange.stop_watching()
        if failure is not None:
            raise failure

    async def _other(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "websocket":
            await send({"type": "websocket.close", "code": _POLICY_VIOLATION})
        # Any other scope type is not ours to answer: returning tells the server so.

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                step, done = self._engine.startup, "lifespan.startup"
            elif message["type"] == "lifespan.shutdown":
                step, done = self._engine.shutdown, "lifespan.shutdown"
            else:
                continue  # not a lifespan event this version knows
            try:
                await step()
            except Exception:
                # No message text: the exception goes to the server's log, not on the wire.
                await send({"type": done + ".failed", "message": ""})
                raise
            await send({"type": done + ".complete"})
            if done == "lifespan.shutdown":
                return


class _Exchange(Signal):
    """One request's exchange with the client: the engine's ``start``/``write`` mapped onto
    ASGI response messages, and the disconnect signal (one object, built once per request).

    The signal is watched only while the engine waits for something.  Noticing a client that
    went away takes a task reading ``receive()``.  Most requests are answered without the
    engine ever waiting (an ``async def`` handler that completes at once, a refusal), and
    there the answer is the only thing left to do, so the watcher starts with the first wait
    (``add_callback``) instead of with every request.
    """

    # Class-level defaults: most requests never start either, so none is stored per request.
    _watcher: asyncio.Task[None] | None = None
    _timer: Alarm | None = None
    _alarms: Alarms | None = None

    def __init__(self, receive: Receive, send: Send) -> None:
        # No ``super().__init__()``: a ``Signal`` builds nothing up front.
        self._receive = receive
        self._send = send

    async def start(self, status: int, headers: Sequence[tuple[bytes, bytes]]) -> None:
        try:
            await self._send({"type": "http.response.start", "status": status, "headers": headers})
        except Exception as error:
            if not self._dropped(error):
                raise

    async def write(self, chunk: bytes, *, more: bool) -> None:
        try:
            await self._send({"type": "http.response.body", "body": chunk, "more_body": more})
        except Exception as error:
            if not self._dropped(error):
                raise

    def _dropped(self, error: Exception) -> bool:
        """Whether a failed send is dropped quietly: a client that went away is not the
        engine's failure.  ASGI 2.4 servers raise an ``OSError`` for a closed connection,
        perhaps before the ``http.disconnect`` arrives; other servers raise their own errors
        once it has.  (Called only on failure, so a send that works costs no extra frame.)"""
        if isinstance(error, OSError):
            self.set()
            return True
        return self.is_set()

    def add_callback(self, callback: Callable[[], object]) -> None:
        # The engine's waits (a handler in a worker thread, a queued request) mostly end in
        # far less than ``_WATCH_AFTER``: a timer is cheaper than a task read and cancelled
        # each time, and a client that left is still noticed that soon after.
        if self._watcher is None and self._timer is None:
            loop = asyncio.get_running_loop()
            alarms = self._alarms = alarms_for(loop)  # cheaper than a loop timer
            self._timer = alarms.at(loop.time() + _WATCH_AFTER, self.watch)
        Signal.add_callback(self, callback)  # the base called directly: ``super()`` costs more

    async def wait(self) -> Literal[True]:
        self.watch()
        return await super().wait()

    def watch(self) -> None:
        """Start the watcher, if it has not started."""
        if self._watcher is None and not self.is_set():
            self._watcher = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        """Set the signal when the server reports the client gone.

        Any rest of a too-large body arrives here too, and is discarded unread.
        """
        while (await self._receive())["type"] != "http.disconnect":
            pass
        self.set()

    def stop_watching(self) -> BaseException | None:
        """End the watcher once the response is written: one still waiting on ``receive()``
        has not failed, so it is cancelled (it ends on the loop's next turn; nothing waits for
        it).  One that already ended either saw the disconnect or met a ``receive()`` failure,
        which is returned: it is not ours to hide."""
        if self._timer is not None:
            assert self._alarms is not None  # set with the timer
            self._alarms.cancel(self._timer)
        watcher = self._watcher
        if watcher is None:
            return None
        if not watcher.done():
            watcher.cancel()
            return None
        return None if watcher.cancelled() else watcher.exception()


def _decode_headers(raw: Sequence[Sequence[bytes]]) -> tuple[list[str], list[str]]:
    """The header names (lower-case) and values as text, in arrival order (latin-1 keeps
    every byte).

    Decoding all names in one call and all values in another (joined on a byte that is then
    split on again) does per request what a loop would do per field; should the separator
    occur inside a field, the counts disagree and the fields are decoded one by one.
    """
    if not raw:
        return [], []
    names, values = zip(*raw, strict=True)
    texts = _SEPARATOR.join(names).decode("latin-1").lower().split("\x00")
    data = _SEPARATOR.join(values).decode("latin-1").split("\x00")
    if len(texts) == len(data) == len(raw):
        return texts, data
    return (
        [name.decode("latin-1").lower() for name, _ in raw],
        [value.decode("latin-1") for _, value in raw],
    )


_SEPARATOR: Final = b"\x00"
_CONTENT_LENGTH: Final = "content-length"


def _declares_more_than(names: list[str], values: list[str], limit: int, width: int) -> bool:
    """Whether a ``Content-Length`` already announces more than ``limit`` bytes.

    Only a well-formed value counts; a malformed one is the HTTP server's to refuse.  The digit
    count is compared first, so a huge value is never converted to an integer.  Repeated
    fields (rare: HTTP servers refuse most) are looked at one by one.  Counting the name in
    the list is C work, where an index of every field would be built for one lookup.
    """
    count = names.count(_CONTENT_LENGTH)
    if count == 1:
        value = values[names.index(_CONTENT_LENGTH)]
        # ``_over``'s first test here: the usual value is too short to say more, no call made
        return len(value) >= width and _over(value, limit, width)
    return count > 1 and any(
        _over(value, limit, width)
        for name, value in zip(names, values, strict=True)
        if name == _CONTENT_LENGTH
    )


def _over(value: str, limit: int, width: int) -> bool:
    """Whether a ``Content-Length`` value is well formed and over ``limit`` (``width``
    digits long)."""
    if len(value) < width:  # the usual case: too short to name that many bytes, however spelled
        return False
    digits = value.strip().lstrip("0")
    return digits.isascii() and digits.isdigit() and (len(digits) > width or int(digits) > limit)


def _below(raw_path: bytes, root: str) -> bytes:
    """``raw_path`` without the ``root_path`` the app is mounted at (Starlette's ``Mount``,
    uvicorn's ``--root-path``): ``/ai/mcp`` under ``/ai`` is routed as ``/mcp``.  A path
    outside the prefix (a host that passes the path already cut) is left as it is."""
    prefix = root.rstrip("/").encode("utf-8")
    if raw_path.startswith(prefix) and raw_path[len(prefix) : len(prefix) + 1] in (b"/", b"?", b""):
        return raw_path[len(prefix) :] or b"/"
    return raw_path


async def _read_body(receive: Receive, limit: int, message: Message) -> tuple[bytes, bool] | None:
    """The body that starts with ``message`` and whether it was too large, or ``None`` when
    the client disconnected.

    Reading stops at the first chunk that would pass ``limit``, so memory stays bounded by the
    limit plus one server chunk; the too-large body is dropped, never handed on.
    """
    body = bytearray()
    while True:
        if message["type"] != "http.request":
            return None  # http.disconnect: ASGI sends nothing else on an http scope
        chunk = message.get("body", b"")
        if len(body) + len(chunk) > limit:
            return b"", True
        body += chunk
        if not message.get("more_body", False):
            return bytes(body), False
        message = await receive()
