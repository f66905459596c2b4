"""An in-process HTTP client for ASGI apps, driven from ordinary synchronous tests.

The client runs the app on a private event loop in a daemon thread, so every request of one
client shares one loop (the engine's asyncio state stays valid between requests) while the
test itself stays synchronous.  It speaks ASGI the way a server does -- body, then
``http.disconnect`` once the response is complete or the simulated client has left -- and it
checks the app's messages strictly, so a misbehaving app fails the test instead of passing it.

The request helpers build the wire form from literal strings rather than from mcpkit's own
constants, so a misspelled constant in the server cannot cancel itself out in its tests.
"""

from __future__ import annotations

import asyncio
import binascii
import contextlib
import re
import threading
import urllib.parse
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import (
    Any,
    ClassVar,
    Final,
    Protocol,
    TypedDict,
    TypeVar,
    Unpack,
    runtime_checkable,
)

from mcpkit.json import JsonValue, decode, encode, from_python
from mcpkit.limits import Limits
from mcpkit.transports._asgi import ASGIApp, Message

__all__ = [
    "ServesAsgi",
    "TestClient",
    "TestResponse",
    "handshake_request",
    "stateless_headers",
    "stateless_request",
]

Headers = Mapping[str, str] | Sequence[tuple[str, str]]
_T = TypeVar("_T")

STATELESS_VERSION: Final = "2026-07-28"
_PROTOCOL_VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"
_CLIENT_CAPABILITIES_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
_JSON: Final = "application/json"
_ACCEPT: Final = "application/json, text/event-stream"
_HOST: Final = ("127.0.0.1", 8000)
_PEER: Final = ("127.0.0.1", 50000)

_MiB: Final = 1024 * 1024
_WIDE: Final = Limits(
    max_request_bytes=16 * _MiB,
    max_response_bytes=16 * _MiB,
    max_json_depth=512,
    max_json_nodes=10_000_000,
    max_string_units=16 * _MiB,
    max_token_units=16 * _MiB,
    max_integer_chars=1_000_000,
)
"""The widest JSON limits mcpkit allows: the client must send and read whatever a server could
be configured to accept or write, and leave the refusing to the server under test."""

_PLAIN_HEADER: Final = re.compile(r"[\x21-\x7e]([\t\x20-\x7e]*[\x21-\x7e])?", re.ASCII)
_SENTINEL_OPEN: Final = "=?base64?"
_SENTINEL_CLOSE: Final = "?="
_POLL_SECONDS: Final = 0.005


class _RequestOptions(TypedDict, total=False):
    """The keyword options every request method of :class:`TestClient` takes (see ``post``)."""

    headers: Headers
    method: str
    default_headers: bool


@runtime_checkable
class ServesAsgi(Protocol):
    """Anything that can hand out its ASGI app, such as a ``mcpkit.Server``."""

    def asgi(self) -> ASGIApp: ...


@dataclass(frozen=True, slots=True)
class TestResponse:
    """What the client received: status, headers (names lower-cased) and the body."""

    __test__: ClassVar[bool] = False  # not a pytest test class

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def header(self, name: str) -> str | None:
        """The value of header ``name``; repeats are joined with ``", "`` as HTTP allows."""
        wanted = name.lower()
        values = [value for key, value in self.headers if key == wanted]
        return ", ".join(values) if values else None

    @property
    def messages(self) -> tuple[JsonValue, ...]:
        """The JSON-RPC messages of the body: one for JSON, every event's data for SSE.

        Anything else with a body raises ``ValueError``: a test reading messages expects them.
        """
        if not self.body:
            return ()
        media_type = (self.header("content-type") or "").partition(";")[0].strip().lower()
        if media_type == "text/event-stream":
            return tuple(decode(data, limits=_WIDE) for data in _sse_data(self.body))
        if media_type == _JSON:
            return (decode(self.body, limits=_WIDE),)
        raise ValueError(f"the body is not JSON-RPC (content-type {media_type!r})")

    @property
    def json(self) -> JsonValue:
        """The one message of the body; ``ValueError`` unless there is exactly one."""
        messages = self.messages
        if len(messages) != 1:
            raise ValueError(f"expected exactly one message, got {len(messages)}")
        return messages[0]


class TestClient:
    """Sends requests to an ASGI app (or a server's app) in-process, with no socket.

    ``lifespan`` runs the ASGI lifespan protocol around the client's life (startup before the
    first request, shutdown on :meth:`close`); an app that does not support it is served
    without.  ``timeout`` bounds every blocking call, so a hanging app fails the test.
    """

    __test__: ClassVar[bool] = False  # not a pytest test class

    def __init__(
        self, app_or_server: ASGIApp | ServesAsgi, *, lifespan: bool = True, timeout: float = 30.0
    ) -> None:
        self._app = app_or_server.asgi() if isinstance(app_or_server, ServesAsgi) else app_or_server
        self._use_lifespan = lifespan
        self.timeout = timeout
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lifespan: _Lifespan | None = None
        self._failed = False
        self._closed = False

    def __enter__(self) -> TestClient:
        self._running_loop()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def post(
        self, path: str, body: bytes | object, **options: Unpack[_RequestOptions]
    ) -> TestResponse:
        """Send one request and wait for its complete response.

        A body that is not ``bytes`` is written as JSON.  ``headers`` (a mapping or name/value
        pairs) are sent as given; unless ``default_headers`` is false, ``Host``,
        ``Content-Type``, ``Accept`` and ``Content-Length`` are added when not given.
        ``method`` is ``"POST"`` unless given.
        """
        return self._wait(self.submit(path, body, **options))

    def submit(
        self, path: str, body: bytes | object, **options: Unpack[_RequestOptions]
    ) -> Future[TestResponse]:
        """Like :meth:`post`, without waiting: for requests that must overlap."""
        scope, data = _request(path, body, **options)
        loop = self._running_loop()
        return asyncio.run_coroutine_threadsafe(self._complete(scope, data), loop)

    def post_disconnecting(
        self,
        path: str,
        body: bytes | object,
        *,
        after: float | threading.Event,
        **options: Unpack[_RequestOptions],
    ) -> TestResponse | None:
        """Send a request whose client leaves ``after`` seconds, or once the event is set.

        Returns what arrived before the client left (a partial response, perhaps), or ``None``
        when not even the head had; after leaving, the app's writes are dropped as a server
        drops them.  A response completed before the deadline is returned whole.
        """
        scope, data = _request(path, body, **options)
        loop = self._running_loop()
        future = asyncio.run_coroutine_threadsafe(self._abandoned(scope, data, after), loop)
        return self._wait(future)

    def close(self) -> None:
        """Run lifespan shutdown, cancel what still runs, and stop the loop's thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._wind_down(), loop).result(self.timeout)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            loop.close()

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._closed:
                raise RuntimeError("the TestClient is closed")
            if self._failed:
                raise RuntimeError("the app's lifespan startup failed")
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name="mcpkit-test-client", daemon=True
                )
                thread.start()
                self._loop, self._thread = loop, thread
                if self._use_lifespan:
                    self._lifespan = _Lifespan(self._app)
                    startup = asyncio.run_coroutine_threadsafe(self._lifespan.startup(), loop)
                    try:
                        self._wait(startup)
                    except BaseException:
                        self._failed = True  # close() still stops the loop
                        raise
            return self._loop

    def _wait(self, future: Future[_T]) -> _T:
        try:
            return future.result(self.timeout)
        except TimeoutError:
            future.cancel()
            raise TimeoutError(f"no answer within {self.timeout} s") from None

    async def _complete(self, scope: Message, body: bytes) -> TestResponse:
        cycle = await self._drive(scope, _Cycle(body), None)
        if cycle.response is None:
            raise RuntimeError("the app returned without completing its response")
        return cycle.response

    async def _abandoned(
        self, scope: Message, body: bytes, after: float | threading.Event
    ) -> TestResponse | None:
        """What arrived by the time the client left (or the response completed).  The app may
        go on after the client left (a 2025 session's call does: leaving is not cancelling);
        it runs on in the background until it ends or the client is closed."""
        cycle = _Cycle(body)
        app = asyncio.ensure_future(self._drive(scope, cycle, after))
        ended = asyncio.ensure_future(cycle.ended())
        await asyncio.wait((app, ended), return_when=asyncio.FIRST_COMPLETED)
        ended.cancel()
        if app.done():
            app.result()  # the app's own failure is the test's
        else:
            app.add_done_callback(_retrieve)
        return cycle.response or cycle.partial

    async def _drive(
        self, scope: Message, cycle: _Cycle, leave_after: float | threading.Event | None
    ) -> _Cycle:
        leaving = None
        if leave_after is not None:
            leaving = asyncio.create_task(_leave(cycle, leave_after))
        try:
            await self._app(scope, cycle.receive, cycle.send)
        finally:
            if leaving is not None:
                leaving.cancel()
        return cycle

    async def _wind_down(self) -> None:
        try:
            if self._lifespan is not None:
                await self._lifespan.shutdown()
        finally:
            current = asyncio.current_task()
            rest = [task for task in asyncio.all_tasks() if task is not current]
            for task in rest:
                task.cancel()
            await asyncio.gather(*rest, return_exceptions=True)
            loop = asyncio.get_running_loop()
            await loop.shutdown_asyncgens()
            await loop.shutdown_default_executor()


class _Cycle:
    """One request/response cycle, seen from the client's side of the ASGI server."""

    def __init__(self, body: bytes) -> None:
        self._body: bytes | None = body
        self._ended = asyncio.Event()  # the response is complete or the client has left
        self._gone = False
        self._status: int | None = None
        self._headers: tuple[tuple[str, str], ...] = ()
        self._chunks: list[bytes] = []
        self._complete = False

    @property
    def response(self) -> TestResponse | None:
        """The response, when it was complete."""
        return self._result() if self._complete else None

    @property
    def partial(self) -> TestResponse | None:
        """What had arrived when the client left, once the head had."""
        return self._result() if self._status is not None else None

    def leave(self) -> None:
        self._gone = True
        self._ended.set()

    async def ended(self) -> None:
        """Until the response is complete or the client has left."""
        await self._ended.wait()

    async def receive(self) -> Message:
        if self._body is not None:
            body, self._body = self._body, None
            return {"type": "http.request", "body": body, "more_body": False}
        await self._ended.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        if self._gone:
            return  # the client has left: a server drops the app's writes
        kind = message["type"]
        if kind == "http.response.start" and self._status is None:
            self._status = int(message["status"])
            self._headers = tuple(
                (bytes(name).decode("latin-1").lower(), bytes(value).decode("latin-1"))
                for name, value in message.get("headers", ())
            )
        elif kind == "http.response.body" and self._status is not None and not self._complete:
            self._chunks.append(bytes(message.get("body", b"")))
            if not message.get("more_body", False):
                self._complete = True
                self._ended.set()
        else:
            raise RuntimeError(f"unexpected ASGI message {kind!r} at this point")

    def _result(self) -> TestResponse:
        assert self._status is not None
        return TestResponse(self._status, self._headers, b"".join(self._chunks))


class _Lifespan:
    """The server side of the ASGI lifespan protocol, for one app."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app
        self._to_app: asyncio.Queue[Message] = asyncio.Queue()
        self._from_app: asyncio.Queue[Message | None] = asyncio.Queue()
        self._error: Exception | None = None
        self._running = False  # startup completed and shutdown not yet sent
        self._task: asyncio.Task[None] | None = None

    async def startup(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())
        reply = await self._exchange("lifespan.startup")
        # Raising or returning before answering (None) is how an app says it has no lifespan.
        if reply is not None and reply["type"] != "lifespan.startup.complete":
            raise RuntimeError("lifespan startup failed") from self._error
        self._running = reply is not None

    async def shutdown(self) -> None:
        if not self._running:
            return  # no lifespan, or a failed startup: servers send no shutdown then
        self._running = False
        reply = await self._exchange("lifespan.shutdown")
        if reply is None or reply["type"] != "lifespan.shutdown.complete":
            raise RuntimeError("lifespan shutdown failed") from self._error

    async def _exchange(self, event: str) -> Message | None:
        await self._to_app.put({"type": event})
        return await self._from_app.get()

    async def _run(self) -> None:
        scope = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}, "state": {}}
        try:
            await self._app(scope, self._to_app.get, self._from_app.put)
        except Exception as error:
            self._error = error
        finally:
            self._from_app.put_nowait(None)


def _retrieve(task: asyncio.Future[_Cycle]) -> None:
    """Mark a background app's outcome retrieved (a cancelled or failed app after its client
    left has nobody to tell)."""
    with contextlib.suppress(asyncio.CancelledError):  # a cancelled one has nothing to tell
        task.exception()


async def _leave(cycle: _Cycle, after: float | threading.Event) -> None:
    if isinstance(after, threading.Event):
        # Polled: waiting on it in a thread could outlive the client.
        while not after.is_set():
            await asyncio.sleep(_POLL_SECONDS)
    else:
        await asyncio.sleep(after)
    cycle.leave()


def _request(
    path: str,
    body: bytes | object,
    *,
    headers: Headers = (),
    method: str = "POST",
    default_headers: bool = True,
) -> tuple[Message, bytes]:
    """The ASGI scope and the body bytes of one request."""
    data = bytes(body) if isinstance(body, bytes | bytearray) else encode(from_python(body))
    given = list(headers.items()) if isinstance(headers, Mapping) else list(headers)
    if default_headers:
        named = {name.lower() for name, _ in given}
        defaults = [
            ("host", f"{_HOST[0]}:{_HOST[1]}"),
            ("content-type", _JSON),
            ("accept", _ACCEPT),
            ("content-length", str(len(data))),
        ]
        given = [pair for pair in defaults if pair[0] not in named] + given
    target, _, query = path.partition("?")
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": urllib.parse.unquote(target),
        "raw_path": target.encode("utf-8"),
        "query_string": query.encode("utf-8"),
        "root_path": "",
        "headers": [
            (name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in given
        ],
        "client": _PEER,
        "server": _HOST,
        "state": {},
    }
    return scope, data


def _sse_data(stream: bytes) -> list[bytes]:
    """The ``data`` of every event of a complete SSE stream, in order (WHATWG SSE rules: an
    event with empty data, such as a priming event, is not dispatched)."""
    events: list[bytes] = []
    data: list[bytes] = []
    for line in stream.splitlines(keepends=True):
        if not line.endswith((b"\n", b"\r")):
            raise ValueError("the event stream ends inside a line")
        text = line.rstrip(b"\r\n")
        if not text:
            if data:
                joined = b"\n".join(data)
                if joined:
                    events.append(joined)
                data = []
            continue
        field, _, value = text.partition(b":")
        if field == b"data":
            data.append(value.removeprefix(b" "))
    if data:
        raise ValueError("the event stream ends inside an event")
    return events


def _header_value(text: str) -> str:
    """``text`` as an ``Mcp-Name`` / ``Mcp-Param-*`` value: literal when safe, else base64."""
    plain = _PLAIN_HEADER.fullmatch(text) is not None and not (
        text.startswith(_SENTINEL_OPEN) and text.endswith(_SENTINEL_CLOSE)
    )
    if plain:
        return text
    payload = binascii.b2a_base64(text.encode("utf-8"), newline=False).decode("ascii")
    return f"{_SENTINEL_OPEN}{payload}{_SENTINEL_CLOSE}"


def stateless_headers(
    method: str, name: str | None = None, *, version: str = STATELESS_VERSION
) -> dict[str, str]:
    """The headers a 2026-07-28 client sends for ``method`` (and its ``Mcp-Name`` target)."""
    headers = {
        "Content-Type": _JSON,
        "Accept": _ACCEPT,
        "MCP-Protocol-Version": version,
        "Mcp-Method": method,
    }
    if name is not None:
        headers["Mcp-Name"] = _header_value(name)
    return headers


def stateless_request(
    method: str,
    params: Mapping[str, object] | None = None,
    *,
    id: str | int | None = 1,
    capabilities: Mapping[str, object] | None = None,
    version: str = STATELESS_VERSION,
) -> dict[str, object]:
    """A 2026-07-28 request: ``params._meta`` carries the protocol version and capabilities.

    Keys the caller already put in ``params["_meta"]`` win, and a ``_meta`` that is not an
    object is sent as given, so malformed requests stay easy to build.  ``id=None`` makes a
    notification.
    """
    body = dict(params or {})
    meta = body.get("_meta", {})
    if isinstance(meta, Mapping):
        body["_meta"] = {
            _PROTOCOL_VERSION_KEY: version,
            _CLIENT_CAPABILITIES_KEY: dict(capabilities or {}),
            **meta,
        }
    return _envelope(method, body, id)


def handshake_request(
    method: str, params: Mapping[str, object] | None = None, *, id: str | int | None = 1
) -> dict[str, object]:
    """A 2025-revision request (no ``_meta`` added); ``id=None`` makes a notification."""
    return _envelope(method, None if params is None else dict(params), id)


def _envelope(
    method: str, params: dict[str, object] | None, id: str | int | None
) -> dict[str, object]:
    message: dict[str, object] = {"jsonrpc": "2.0"}
    if id is not None:
        message["id"] = id
    message["method"] = method
    if params is not None:
        message["params"] = params
    return message
