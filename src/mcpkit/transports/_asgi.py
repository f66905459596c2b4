"""Streamable HTTP as a pure ASGI 3 application (docs/server.md §3).

``McpApp`` moves bytes between an ASGI server and the engine: it reads the body up to the
engine's limit, reports a client that went away, and writes what the engine tells it to.  It
never parses JSON, picks a status or routes: those are the engine's decisions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, MutableMapping, Sequence
from typing import Any, Final, TypeAlias

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

_POLICY_VIOLATION: Final = 1008
"""WebSocket close code: this endpoint speaks HTTP only."""


class McpApp:
    """An ASGI 3 app serving one engine; lifespan events are answered but never required."""

    __slots__ = ("_engine",)

    def __init__(self, engine: HttpEngine) -> None:
        self._engine = engine

    def __repr__(self) -> str:
        return f"McpApp({self._engine!r})"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "websocket":
            await send({"type": "websocket.close", "code": _POLICY_VIOLATION})
        # Any other scope type is not ours to answer: returning tells the server so.

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = tuple(
            (name.decode("latin-1").lower(), value.decode("latin-1"))
            for name, value in scope["headers"]
        )
        limit = self._engine.limits.max_request_bytes
        if _declares_more_than(headers, limit):
            body, too_large = b"", True
        else:
            read = await _read_body(receive, limit)
            if read is None:
                return  # the client left before its request was complete: nobody to answer
            body, too_large = read
        raw_path = scope.get("raw_path") or scope["path"].encode("utf-8")
        client = scope.get("client")
        server = scope.get("server")
        request = HttpRequest(
            method=scope["method"],
            raw_path=raw_path.decode("latin-1").partition("?")[0],
            headers=headers,
            body=body,
            body_too_large=too_large,
            client=(client[0], client[1]) if client else None,
            server_port=server[1] if server and isinstance(server[1], int) else None,
        )
        disconnected = Signal()
        watcher = asyncio.create_task(_watch_disconnect(receive, disconnected))
        try:
            await self._engine.handle_http(request, _Exchange(send, disconnected), disconnected)
        finally:
            # A watcher still waiting on receive() has not failed: cancel it and go on (it
            # ends on the loop's next turn; nothing waits for it).  One that already ended
            # either saw the disconnect or met a receive() failure, which is not ours to hide.
            if watcher.done():
                failure = None if watcher.cancelled() else watcher.exception()
            else:
                watcher.cancel()
                failure = None
        if failure is not None:
            raise failure

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


class _Exchange:
    """Maps the engine's ``start``/``write`` onto ASGI response messages."""

    __slots__ = ("_disconnected", "_send")

    def __init__(self, send: Send, disconnected: asyncio.Event) -> None:
        self._send = send
        self._disconnected = disconnected

    async def start(self, status: int, headers: Sequence[tuple[bytes, bytes]]) -> None:
        await self._deliver({"type": "http.response.start", "status": status, "headers": headers})

    async def write(self, chunk: bytes, *, more: bool) -> None:
        await self._deliver({"type": "http.response.body", "body": chunk, "more_body": more})

    async def _deliver(self, message: Message) -> None:
        # A client that went away is not the engine's failure: its writes are dropped quietly.
        # ASGI 2.4 servers raise an OSError for a closed connection, perhaps before the
        # ``http.disconnect`` arrives; other servers raise their own errors once it has.
        try:
            await self._send(message)
        except OSError:
            self._disconnected.set()
        except Exception:
            if not self._disconnected.is_set():
                raise


def _declares_more_than(headers: Iterable[tuple[str, str]], limit: int) -> bool:
    """Whether a ``Content-Length`` already announces more than ``limit`` bytes.

    Only a well-formed value counts; a malformed one is the HTTP server's to refuse.  The digit
    count is compared first, so a huge value is never converted to an integer.
    """
    for name, value in headers:
        if name == "content-length":
            digits = value.strip().lstrip("0")
            if (
                digits.isascii()
                and digits.isdigit()
                and (len(digits) > len(str(limit)) or int(digits) > limit)
            ):
                return True
    return False


async def _read_body(receive: Receive, limit: int) -> tuple[bytes, bool] | None:
    """The body and whether it was too large, or ``None`` when the client disconnected.

    Reading stops at the first chunk that would pass ``limit``, so memory stays bounded by the
    limit plus one server chunk; the too-large body is dropped, never handed on.
    """
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None  # http.disconnect: ASGI sends nothing else on an http scope
        chunk = message.get("body", b"")
        if len(body) + len(chunk) > limit:
            return b"", True
        body += chunk
        if not message.get("more_body", False):
            return bytes(body), False


async def _watch_disconnect(receive: Receive, disconnected: asyncio.Event) -> None:
    """Set ``disconnected`` when the server reports the client gone.

    Any rest of a too-large body arrives here too, and is discarded unread.
    """
    while (await receive())["type"] != "http.disconnect":
        pass
    disconnected.set()
