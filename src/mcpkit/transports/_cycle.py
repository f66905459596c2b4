"""One request and its response on a guarded connection: the ASGI ``receive`` and ``send``.

It keeps uvicorn's cycle's interface (the protocol and uvicorn's server read its state) with
two differences that matter per request:

* A response whose length is declared is written whole, its head with its first body bytes.
  uvicorn writes the head as soon as the app starts the response and the body in a second
  write: two packets, and a client woken twice, for what is one answer.  A streamed response
  (chunked: Server-Sent Events) still gets its head at once, as a client waits for it.
  A head not yet written is also what lets an app that fails after starting its response be
  answered with a 500 rather than a closed connection.
* What it writes is held until the loop's turn ends (``_outbox.py``), with the other answers
  of that turn.
* The request body is kept as the chunks that came (joined once, when read), and a reader
  waits on a future made only when it has to wait, not an ``asyncio.Event`` per request.

Header fields the app sends are checked as uvicorn checks them, once per response rather than
once per field: names must be tokens, values free of control characters but tab.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Final

from uvicorn.protocols.http.flow_control import HIGH_WATER_LIMIT
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, RequestResponseCycle
from uvicorn.protocols.utils import get_client_addr, get_path_with_query_string

from mcpkit._grammar import TCHAR
from mcpkit.errors import InternalError
from mcpkit.protocol import error_message

if TYPE_CHECKING:
    from uvicorn._types import ASGI3Application, ASGIReceiveEvent, ASGISendEvent, HTTPScope

    from mcpkit.transports._connections import GuardedProtocol

__all__ = ["INTERNAL_ERROR", "Cycle"]

_log: Final = logging.getLogger("uvicorn.error")

INTERNAL_ERROR: Final = (
    b"HTTP/1.1 500 Internal Server Error\r\n"
    b"content-type: application/json\r\n"
    b"cache-control: no-store\r\n"
    b"content-length: %d\r\n"
    b"connection: close\r\n\r\n"
) % len(error_message(None, InternalError())) + error_message(None, InternalError())
"""The answer to an app that failed before any byte of its response was written."""

# A head's fields as written: "name: value\r\n" each, the name a token spelled in lower case, the
# value without control characters but tab (RFC 9110 §5.1, §5.5; obs-text passes, as uvicorn's).
_LOWER_TCHAR: Final = TCHAR.replace("A-Z", "")
_FIELDS: Final = re.compile(
    rb"(?:%b+: [^\x00-\x08\x0a-\x1f\x7f]*\r\n)*" % _LOWER_TCHAR.encode("ascii")
)
# The fields that frame the response, found in checked fields.
_FRAMING: Final = re.compile(rb"(?m)^(content-length|transfer-encoding|connection): ([^\r]*)\r$")
_CONTINUE: Final = b"HTTP/1.1 100 Continue\r\n\r\n"


def _nothing() -> None:
    """What a cycle calls back once its app has returned: nothing more."""


class _Defaults:
    """The server's default header fields as written, remade when uvicorn replaces them (its
    ``date`` field changes once a second)."""

    __slots__ = ("fields", "written")

    def __init__(self) -> None:
        self.fields: object = None
        self.written = b""

    def block(self, fields: Sequence[tuple[bytes, bytes]]) -> bytes:
        if fields is not self.fields:
            written = b"".join(name.lower() + b": " + value + b"\r\n" for name, value in fields)
            if _FIELDS.fullmatch(written) is None:
                raise RuntimeError("Invalid HTTP header in the server's default headers.")
            self.written, self.fields = written, fields
        return self.written


_DEFAULTS: Final = _Defaults()


class Cycle(RequestResponseCycle):
    """One request's ASGI exchange on a ``GuardedProtocol`` connection.

    The attributes uvicorn's server and the protocol read are uvicorn's: ``scope``,
    ``response_started``, ``response_complete``, ``disconnected``, ``keep_alive``,
    ``more_body``, ``message_event`` (here the cycle itself: ``set()`` wakes its reader).
    """

    # Where every cycle starts, read from the class until a cycle sets its own (uvicorn's cycle
    # has no __slots__, so each set costs as much either way, and most are never set).
    disconnected = False
    more_body = True
    response_started = False
    response_complete = False
    chunked_encoding: bool | None = None
    expected_content_length = 0
    waiting_for_100_continue = False
    _head: bytes | None = None  # a head held back for the first body bytes
    _waiters: list[asyncio.Future[None]] | None = None
    _signalled = False  # something to read or a disconnect came since the last read
    _first = b""  # the body's first chunk not read yet
    _rest: list[bytes] | None = None  # and any after it
    _buffered = 0  # their bytes

    def __init__(self, protocol: GuardedProtocol, scope: HTTPScope, keep_alive: bool) -> None:
        # uvicorn's __init__ is not called: it builds what this cycle does not use.
        self.scope = scope
        self.transport = protocol.transport
        self.outbox = protocol.outbox
        self.flow = protocol.flow
        self.access_log = protocol.access_log
        self.default_headers = protocol.server_state.default_headers
        self.on_response = protocol.on_response_complete
        self.keep_alive = keep_alive
        if protocol.expect_100_continue:
            self.waiting_for_100_continue = True

    # --- the request ---------------------------------------------------------------------------

    def add_body(self, chunk: bytes) -> bool:
        """Keep a chunk of the body; ``True`` when as much is kept as the app should read
        before more is read from the client."""
        if not self._first:
            self._first = chunk
        elif self._rest is None:
            self._rest = [chunk]
        else:
            self._rest.append(chunk)
        self._buffered += len(chunk)
        self.set()
        return self._buffered > HIGH_WATER_LIMIT

    def end_body(self) -> None:
        self.more_body = False
        self.set()

    @property
    def message_event(self) -> Cycle:  # type: ignore[override]
        """What uvicorn's protocol calls ``set()`` on when the client goes away."""
        return self

    def set(self) -> None:
        """Something came for the reader: a chunk, the body's end, or a disconnect."""
        self._signalled = True
        waiters = self._waiters
        if waiters is not None:
            self._waiters = None
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)

    async def receive(self) -> ASGIReceiveEvent:
        if self.waiting_for_100_continue:
            self.waiting_for_100_continue = False
            if not self.transport.is_closing():
                self.outbox.write(self.transport, _CONTINUE)
        if not (self.disconnected or self.response_complete):
            if self.flow.read_paused:
                self.flow.resume_reading()
            if not self._signalled:
                await self._wait()
            self._signalled = False
            if not (self.disconnected or self.response_complete):
                rest = self._rest
                body = self._first if rest is None else b"".join([self._first, *rest])
                self._first, self._rest, self._buffered = b"", None, 0
                return {"type": "http.request", "body": body, "more_body": self.more_body}
        return {"type": "http.disconnect"}

    async def _wait(self) -> None:
        waiter = asyncio.get_running_loop().create_future()
        waiters = self._waiters
        if waiters is None:
            self._waiters = [waiter]
        else:
            waiters.append(waiter)
        try:
            await waiter
        finally:
            waiters = self._waiters
            if waiters is not None and waiter in waiters:  # cancelled while waiting
                waiters.remove(waiter)

    # --- the response --------------------------------------------------------------------------

    async def send(self, message: ASGISendEvent) -> None:
        if self.flow.write_paused and not self.disconnected:
            await self.flow.drain()
        if self.disconnected:
            return
        kind = message["type"]
        if self.response_complete:
            raise RuntimeError(f"ASGI app sent {kind!r} after its response was complete")
        if self.response_started:
            if kind != "http.response.body":
                raise RuntimeError(f"ASGI app sent {kind!r} where 'http.response.body' belongs")
            body, more = message.get("body", b""), message.get("more_body", False)
            self._body(body, more)  # type: ignore[arg-type]
        elif kind == "http.response.start":
            headers: Iterable[Sequence[bytes]] = message.get("headers", ())  # type: ignore[assignment]
            self._start(message["status"], headers)  # type: ignore[typeddict-item]
        else:
            raise RuntimeError(f"ASGI app sent {kind!r} before 'http.response.start'")

    def _start(self, status: int, headers: Iterable[Sequence[bytes]]) -> None:
        # The fields are joined, checked and searched by C code: a loop over them here would
        # cost more than all the rest of the response.
        lines = [name + b": " + value + b"\r\n" for name, value in headers]
        fields = b"".join(lines)
        # One line per field: a line end inside a name or value would start a field of its own.
        if _FIELDS.fullmatch(fields) is None or fields.count(b"\n") != len(lines):
            fields = _lowered(headers)  # names spelled with capitals, or a field not allowed
        length: int | None = None
        chunked = said_close = False
        for name, value in _FRAMING.findall(fields):
            if name == b"content-length":
                if length is None and not chunked:
                    length = int(value)
            elif name == b"transfer-encoding":
                if value.lower() == b"chunked":
                    chunked, length = True, None
            elif b"close" in [token.strip() for token in value.lower().split(b",")]:
                self.keep_alive = False
                said_close = True
        tail = b"\r\n"
        if not (self.keep_alive or said_close):
            tail = b"connection: close\r\n\r\n"
        if length is None and not (
            chunked or status in (204, 304) or self.scope["method"] == "HEAD"
        ):
            chunked = True
            tail = b"transfer-encoding: chunked\r\n" + tail
        head = STATUS_LINE[status] + _DEFAULTS.block(self.default_headers) + fields + tail
        self.response_started = True
        self.waiting_for_100_continue = False
        if self.access_log:
            _access(self.scope, status)
        if chunked:
            self.chunked_encoding = True
            self.outbox.write(self.transport, head)
        else:
            self.chunked_encoding = False
            self.expected_content_length = length or 0
            self._head = head

    def _body(self, body: bytes, more: bool) -> None:
        head = self._head
        if self.scope["method"] == "HEAD":
            self.expected_content_length = 0
            out = b""  # a HEAD response has no body, whatever the app sends
        elif self.chunked_encoding:
            out = b"%x\r\n%b\r\n" % (len(body), body) if body else b""
            if not more:
                out += b"0\r\n\r\n"
        else:
            if len(body) > self.expected_content_length:
                raise RuntimeError("Response content longer than Content-Length")
            self.expected_content_length -= len(body)
            out = body
        if head is not None:
            self._head = None
            out = head + out
        if out:
            self.outbox.write(self.transport, out)
        if not more:
            if self.expected_content_length:
                raise RuntimeError("Response content shorter than Content-Length")
            self._complete()

    def _complete(self) -> None:
        self.response_complete = True
        self.set()
        if not self.keep_alive:
            self._close()
        self.on_response()

    def _close(self) -> None:
        self.outbox.flush()  # what is held for this connection goes first
        self.transport.close()

    # --- the app -------------------------------------------------------------------------------

    async def run_asgi(self, app: ASGI3Application) -> None:
        try:
            result = await app(self.scope, self.receive, self.send)  # type: ignore[func-returns-value]
        except BaseException as error:
            _log.error("Exception in ASGI application\n", exc_info=error)
            self._failed()
        else:
            if result is not None:
                _log.error("ASGI callable should return None, but returned '%s'.", result)
                self._close()
            elif not self.response_started and not self.disconnected:
                _log.error("ASGI callable returned without starting response.")
                self._failed()
            elif not self.response_complete and not self.disconnected:
                _log.error("ASGI callable returned without completing response.")
                self._failed()
        finally:
            self.on_response = _nothing

    def _failed(self) -> None:
        """The app failed: a 500 while nothing of its response is written, else a close."""
        if self._head is None and self.response_started:
            self._close()
        elif not self.disconnected:
            self._head = None
            self.response_started = True
            self.keep_alive = False
            self.outbox.write(self.transport, INTERNAL_ERROR)
            self._complete()


def _lowered(headers: Iterable[Sequence[bytes]]) -> bytes:
    """Header fields as written, names lower-cased one by one; a field that is still not
    allowed is refused."""
    lines = [name.lower() + b": " + value + b"\r\n" for name, value in headers]
    fields = b"".join(lines)
    if _FIELDS.fullmatch(fields) is None or fields.count(b"\n") != len(lines):
        raise RuntimeError("ASGI app sent a header field name or value that is not allowed")
    return fields


def _access(scope: HTTPScope, status: int) -> None:
    logging.getLogger("uvicorn.access").info(
        '%s - "%s %s HTTP/%s" %d',
        get_client_addr(scope),
        scope["method"],
        get_path_with_query_string(scope),
        scope["http_version"],
        status,
    )
