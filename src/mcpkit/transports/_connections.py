"""Connection limits for the embedded uvicorn server: a guarded httptools protocol.

uvicorn's httptools protocol bounds neither a request head nor the time a client may take, and
its concurrency limit answers every new request with 503 once it is reached, however idle the
connections that fill it.  ``guarded_protocol(limits)`` builds, per server, a subclass that
enforces the HTTP fields of a ``Limits``:

* a head's header fields (count and bytes) and its request target; since httptools buffers an
  unterminated field itself, the raw bytes fed to it while a head is incomplete are bounded too;
* a deadline for each head (from the connection's opening, or a kept-alive connection's next
  byte) and for each body, the keep-alive timeout of idle connections, and a deadline for a
  client that stops reading a response;
* a cap on open connections: at the cap the oldest idle connection is closed for a new one, and
  when none is idle the new one is refused;
* the origin form of the request target only, and no protocol upgrade.

A request whose head completes in a chunk starts once the chunk is parsed, with its first step
run at once rather than on the loop's next turn (``start_eagerly``): most are answered in it.
Each request runs in mcpkit's ``Cycle`` rather than uvicorn's (``_cycle.py``), and everything a
connection writes goes through the loop's ``Outbox`` (``_outbox.py``), so that its bytes keep
their order.

Every refusal is a fixed answer that echoes nothing, followed by closing the connection, and is
logged at DEBUG only, so a client cannot fill the server's log.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import logging
from typing import TYPE_CHECKING, Any, ClassVar, Final, NoReturn
from urllib.parse import unquote

import httptools
from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle
from uvicorn.server import ServerState

from mcpkit._grammar import OWS_CHARS
from mcpkit.errors import InvalidRequest, Overloaded
from mcpkit.limits import Limits
from mcpkit.protocol import error_message
from mcpkit.transports._cycle import Cycle
from mcpkit.transports._eager import start_eagerly
from mcpkit.transports._outbox import outbox_for

if TYPE_CHECKING:
    from uvicorn._types import ASGI3Application, HTTPScope

__all__ = ["GuardedProtocol", "guarded_protocol"]

_log: Final = logging.getLogger("mcpkit.http")


def _answer(status: bytes, body: bytes, extra: bytes = b"") -> bytes:
    # The reason phrases are spelled out: the standard library's differ between versions.
    return b"".join(
        [
            b"HTTP/1.1 " + status + b"\r\n",
            b"content-type: application/json\r\n",
            b"cache-control: no-store\r\n",
            extra,
            b"content-length: %d\r\n" % len(body),
            b"connection: close\r\n\r\n",
            body,
        ]
    )


_INVALID: Final = error_message(None, InvalidRequest())
BAD_REQUEST: Final = _answer(b"400 Bad Request", _INVALID)
REQUEST_TIMEOUT: Final = _answer(b"408 Request Timeout", _INVALID)
URI_TOO_LONG: Final = _answer(b"414 URI Too Long", _INVALID)
HEADERS_TOO_LARGE: Final = _answer(b"431 Request Header Fields Too Large", _INVALID)
OVERLOADED: Final = _answer(
    b"503 Service Unavailable", error_message(None, Overloaded()), b"retry-after: 1\r\n"
)

HEAD_ALLOWANCE: Final = 64
"""Raw head bytes allowed beyond the target and header budgets: the method, spaces and version
of the request line, its line end and the head's final one."""

# Where a connection is in its current request.  _AWAIT: between requests (its header timer or
# uvicorn's keep-alive timer runs); _HEAD: a head is arriving; _BODY: a body is arriving.
_AWAIT: Final = 0
_HEAD: Final = 1
_BODY: Final = 2

# The head budget while a body arrives: body bytes are never charged to it.
_UNBOUNDED: Final = 1 << 62

_OWS: Final = OWS_CHARS.encode("ascii")
_JOIN: Final = b"".join
_CHAIN: Final = itertools.chain.from_iterable


class _Stop(httptools.HttpParserError):
    """Stops the parser from inside a callback; the answer is on the protocol."""


class GuardedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol under the connection limits of a ``Limits``.

    Use the subclass ``guarded_protocol(limits)`` builds: it carries the limits and the server's
    registry of idle connections.
    """

    # Set on the per-server subclass.
    max_header_count: ClassVar[int]
    max_header_bytes: ClassVar[int]
    max_target_bytes: ClassVar[int]
    head_budget: ClassVar[int]
    header_timeout: ClassVar[float]
    body_timeout: ClassVar[float]
    keep_alive_timeout: ClassVar[float]
    write_timeout: ClassVar[float]
    max_connections: ClassVar[int]
    idle_connections: ClassVar[dict[GuardedProtocol, None]]
    """The server's idle connections, oldest first (a dict keeps insertion order)."""

    cycle: Cycle  # the current request's (uvicorn's own cycle is never made here)
    _refusal: bytes = BAD_REQUEST  # what a stopped parser is answered with
    _parsing = False  # a chunk is being fed to the parser
    _ready: tuple[RequestResponseCycle, ASGI3Application] | None = None  # a request to start

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.outbox = outbox_for(self.loop)  # every write of this connection goes through it
        self.url = b""  # the head checks may run before a first request begins
        self.headers = []
        self._phase = _AWAIT
        self._idle = False  # in idle_connections
        self._head_room = self.head_budget  # raw bytes the current head may still take
        self._chunk = 0  # bytes of the chunk being fed
        self._head_extra = 0  # of a head begun within a chunk: that chunk's bytes
        self._header_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        self._write_timer: asyncio.TimerHandle | None = None
        # The keep-alive deadline (uvicorn's timer, kept here: see on_response_complete), and
        # the one timer that watches it for the connection's whole life.
        self._keep_alive_until: float | None = None
        self._keep_alive_timer: asyncio.TimerHandle | None = None

    # --- connection ---------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if len(self.connections) >= self.max_connections and not self._evict_idle():
            self.transport = transport
            _log.debug("mcpkit: refused a connection: %d open, none idle", self.max_connections)
            transport.write(OVERLOADED)
            self._close()
            return
        super().connection_made(transport)
        self._idle = True
        self.idle_connections[self] = None
        self._header_timer = self.loop.call_later(self.header_timeout, self._head_timed_out)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self._forget()
        self._keep_alive_until = None
        if self._keep_alive_timer is not None:
            self._keep_alive_timer.cancel()
            self._keep_alive_timer = None
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None

    def data_received(self, data: bytes) -> None:
        if self._idle:  # the first bytes after an idle spell: a new head has begun
            self._idle = False
            del self.idle_connections[self]
            self._phase = _HEAD
            self._keep_alive_until = None
        size = self._chunk = len(data)
        room = self._head_room
        self._parsing = True
        try:
            if size <= room:  # the usual case: one feed, no copy
                self._head_room = room - size
                self.parser.feed_data(data)
            else:
                self._feed_within_budget(data)
        except (httptools.HttpParserError, httptools.HttpParserUpgrade):
            self._refuse(self._refusal)
        else:
            if self._phase:
                self._wait()
        finally:
            self._parsing = False
        ready = self._ready
        if ready is not None:  # after the checks, as a task would start after this callback
            self._ready = None
            self._start_eagerly(*ready)

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: ASGI3Application) -> None:
        # uvicorn starts a request when its head is complete, from the parser, and when a
        # request pipelined behind a response gets its turn.  The first only takes note: the
        # request starts once its chunk is parsed (its body may be in it too).
        if self._parsing:
            self._ready = (cycle, app)
        else:
            HttpToolsProtocol._start_asgi_task(self, cycle, app)

    def _start_eagerly(self, cycle: RequestResponseCycle, app: ASGI3Application) -> None:
        """Start a request as uvicorn does, but with its task's first step run right away:
        a request answered in it (most are) needs no task, and a loop turn less."""
        if self.loop.get_task_factory() is not None:  # it expects to make every task
            HttpToolsProtocol._start_asgi_task(self, cycle, app)
            return
        # uvicorn's option: each request in a fresh context rather than a copy of this one.
        fresh = self.config.reset_contextvars
        context = contextvars.Context() if fresh else contextvars.copy_context()
        task = start_eagerly(self.loop, cycle.run_asgi(app), context)
        if task is not None:  # it waits: tracked as uvicorn tracks its tasks
            task.add_done_callback(self.tasks.discard)
            self.tasks.add(task)

    def _feed_within_budget(self, data: bytes) -> None:
        """Feed a chunk larger than the head's remaining budget: only the budget while a head
        is incomplete, then, once it is complete, the rest (a body, or the next request)."""
        view = memoryview(data)
        while len(view) > self._head_room:
            room = self._head_room
            if not room:
                self._stop(HEADERS_TOO_LARGE)
            self._head_room = 0  # a completed head resets it from a callback
            self.parser.feed_data(view[:room])
            view = view[room:]
        self._head_room -= len(view)
        self.parser.feed_data(view)

    def _wait(self) -> None:
        """A chunk left a head or a body incomplete: check the head so far, and start the
        deadline if it is not running yet."""
        if self._phase == _HEAD:
            refusal = self._head_refusal()
            if refusal is not None:
                self._refuse(refusal)
            elif self._header_timer is None:
                self._header_timer = self.loop.call_later(self.header_timeout, self._head_timed_out)
        elif self._body_timer is None:
            self._body_timer = self.loop.call_later(self.body_timeout, self._body_timed_out)

    def _head_refusal(self) -> bytes | None:
        """The answer to the head parsed so far when it is over a limit.

        The head is checked once per chunk that leaves it incomplete and once complete, not per
        field: the head budget bounds what one chunk can add, and the callbacks stay uvicorn's.
        """
        headers = self.headers
        count = len(headers)
        if count > self.max_header_count:
            return HEADERS_TOO_LARGE
        # A field's raw spelling is at most two bytes shorter than it counts ("name:value" and
        # a line end), so its bytes are summed only when the raw bytes the head can span
        # (those charged to it, and the chunk in which the previous request ended) could put
        # it over the limit: for a head in one small chunk, never.
        span = self.head_budget - self._head_room + self._head_extra
        if (
            span + 2 * count > self.max_header_bytes
            and len(_JOIN(_CHAIN(headers))) + 4 * count > self.max_header_bytes
        ):
            return HEADERS_TOO_LARGE
        if len(self.url) > self.max_target_bytes:
            return URI_TOO_LONG
        return None

    # --- parser callbacks ---------------------------------------------------------------------
    # uvicorn's on_url and on_header are kept; the rest build a ``Cycle`` (see _cycle.py).

    def on_message_begin(self) -> None:
        # The scope is built once the head is complete, in one step (on_headers_complete).
        self.url = b""
        self.headers = []
        self._phase = _HEAD  # also a request pipelined behind one still being answered

    def on_header(self, name: bytes, value: bytes) -> None:
        # llhttp keeps a value's trailing spaces and tabs, which are not part of it (RFC 9110
        # §5.5).  Names are lower-cased for all fields at once (on_headers_complete).
        self.headers.append((name, value.rstrip(_OWS)))

    def on_headers_complete(self) -> None:
        refusal = self._head_refusal()
        if refusal is not None:
            self._stop(refusal)
        url = self.url
        parser = self.parser
        # Only the origin form ("/path?query") is served: an absolute, authority or asterisk
        # form is refused.  No protocol upgrade is served either: the connection would leave
        # these limits, and httptools would hand the body over unparsed.
        if url[:1] != b"/" or parser.should_upgrade():
            self._stop(BAD_REQUEST)
        headers, self.expect_100_continue = _fields(self.headers)
        self.headers = headers
        version = parser.get_http_version()
        target = httptools.parse_url(url)
        raw_path = target.path
        path = raw_path.decode("ascii")
        if "%" in path:
            path = unquote(path)
        root = self.root_path
        scope: HTTPScope = {
            "type": "http",
            "asgi": {"version": self.asgi_version, "spec_version": "2.3"},
            "http_version": version,
            "server": self.server,
            "client": self.client,
            "scheme": self.scheme,  # type: ignore[typeddict-item]
            "method": parser.get_method().decode("ascii"),
            "root_path": root,
            "path": root + path if root else path,
            "raw_path": root.encode("ascii") + raw_path if root else raw_path,
            "query_string": target.query or b"",
            "headers": headers,
            "state": self.app_state.copy(),
        }
        self.scope = scope
        previous = self.cycle
        cycle = self.cycle = Cycle(self, scope, version != "1.0" and parser.should_keep_alive())
        if previous is None or previous.response_complete:
            self._start_asgi_task(cycle, self.app)
        else:  # pipelined behind a response still being written: it waits its turn
            self.flow.pause_reading()
            self.pipeline.appendleft((cycle, self.app))
        self._phase = _BODY
        self._head_room = _UNBOUNDED
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def on_body(self, body: bytes) -> None:
        cycle = self.cycle
        if not cycle.response_complete and cycle.add_body(body):
            self.flow.pause_reading()  # until the app reads what is kept

    def on_message_complete(self) -> None:
        self._phase = _AWAIT
        self._head_room = self.head_budget
        self._head_extra = self._chunk  # the next head may begin in this chunk, uncharged
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None
        cycle = self.cycle
        if not cycle.response_complete:
            cycle.end_body()

    def on_response_complete(self) -> None:
        # uvicorn's, but for its keep-alive timer: one made per response and cancelled by the
        # next request costs more than all the rest, so a deadline is set instead, which the
        # connection's one timer (_keep_alive_due) checks when it fires.
        self.server_state.total_requests += 1
        if self.transport.is_closing():
            self._linger()
            return
        self.flow.resume_reading()
        if self.pipeline:  # the next request is here already: no keep-alive deadline
            self._keep_alive_until = None
            cycle, app = self.pipeline.pop()
            self._start_asgi_task(cycle, app)
            return
        until = self._keep_alive_until = self.loop.time() + self.keep_alive_timeout
        if self._keep_alive_timer is None:
            self._keep_alive_timer = self.loop.call_at(until, self._keep_alive_due)
        if self._phase == _AWAIT:  # nothing of a next request yet: idle
            self._idle = True
            self.idle_connections[self] = None

    def _stop(self, answer: bytes) -> NoReturn:
        self._refusal = answer
        raise _Stop

    # --- deadlines ----------------------------------------------------------------------------

    def _head_timed_out(self) -> None:
        self._header_timer = None
        self._refuse(REQUEST_TIMEOUT)

    def _body_timed_out(self) -> None:
        self._body_timer = None
        self._refuse(REQUEST_TIMEOUT)

    def _keep_alive_due(self) -> None:
        until = self._keep_alive_until
        if until is None:  # a request came: the timer rests until the next response ends
            self._keep_alive_timer = None
        elif until > self.loop.time():  # set again since the timer was
            self._keep_alive_timer = self.loop.call_at(until, self._keep_alive_due)
        else:
            self._keep_alive_timer = self._keep_alive_until = None
            self._close()

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._write_timer is None:
            self._write_timer = self.loop.call_later(self.write_timeout, self._write_stalled)

    def resume_writing(self) -> None:
        super().resume_writing()
        # A closing connection keeps its deadline until its last bytes are out.
        if self._write_timer is not None and not self.transport.is_closing():
            self._write_timer.cancel()
            self._write_timer = None

    def _write_stalled(self) -> None:
        self._write_timer = None
        _log.debug("mcpkit: a client stopped reading; connection aborted")
        self.transport.abort()

    # --- refusing and closing -----------------------------------------------------------------

    def _refuse(self, answer: bytes) -> None:
        """Answer with ``answer`` when no earlier response is still owed, and close.

        Responses go out in request order, so while an earlier request's response is pending
        or partly written the connection is closed without an answer.
        """
        _log.debug("mcpkit: HTTP %s, connection closed", answer[9:12].decode("ascii"))
        cycle = self.cycle
        if (
            cycle is None
            or cycle.response_complete
            or (self._phase == _BODY and not cycle.response_started and not self.pipeline)
        ):
            self.outbox.flush()  # a response still held goes first
            self.transport.write(answer)
        if cycle is not None and not cycle.response_complete:
            cycle.disconnected = True  # the app's writes stop here and it reads a disconnect
            cycle.set()
        self._close()

    def shutdown(self) -> None:
        self.outbox.flush()  # uvicorn's closes an idle connection: what is held goes first
        super().shutdown()

    def _close(self) -> None:
        self._forget()
        self.outbox.flush()
        self.transport.close()
        self._linger()

    def _linger(self) -> None:
        """A closing transport waits for its unsent bytes: give it the write deadline."""
        if self.transport.get_write_buffer_size() and self._write_timer is None:
            self._write_timer = self.loop.call_later(self.write_timeout, self._write_stalled)

    def _forget(self) -> None:
        """Leave the idle registry and stop the head and body deadlines."""
        if self._idle:
            self._idle = False
            del self.idle_connections[self]
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _evict_idle(self) -> bool:
        """Close the server's oldest idle connection; ``False`` when none is idle."""
        oldest = next(iter(self.idle_connections), None)
        if oldest is None:
            return False
        _log.debug("mcpkit: closed the oldest idle connection for a new one")
        oldest._close()
        return True


def _fields(parsed: list[tuple[bytes, bytes]]) -> tuple[list[tuple[bytes, bytes]], bool]:
    """A head's fields as ASGI has them, names lower-cased, in arrival order; and whether the
    head asks for ``100 Continue`` before its body is sent.

    The names are lower-cased in one call, joined on a byte no name can hold.
    """
    if not parsed:
        return parsed, False
    names, values = zip(*parsed, strict=True)
    lowered = b"\x00".join(names).lower().split(b"\x00")
    fields = list(zip(lowered, values, strict=True))
    expects = b"expect" in lowered and any(
        name == b"expect" and value.lower() == b"100-continue" for name, value in fields
    )
    return fields, expects


def guarded_protocol(limits: Limits) -> type[GuardedProtocol]:
    """A ``GuardedProtocol`` class for one server (``uvicorn.Config(http=...)``): it holds
    ``limits`` and that server's registry of idle connections."""

    class ServerProtocol(GuardedProtocol):
        max_header_count = limits.max_header_count
        max_header_bytes = limits.max_header_bytes
        max_target_bytes = limits.max_request_target_bytes
        head_budget = limits.max_request_target_bytes + limits.max_header_bytes + HEAD_ALLOWANCE
        header_timeout = limits.header_timeout_seconds
        body_timeout = limits.body_timeout_seconds
        keep_alive_timeout = limits.keep_alive_timeout_seconds
        write_timeout = limits.write_timeout_seconds
        max_connections = limits.max_connections
        idle_connections: ClassVar[dict[GuardedProtocol, None]] = {}

    return ServerProtocol
