"""The HTTP front of the pipeline, and the engine every transport is given.

``Engine.handle_http`` takes one HTTP request through the groups only HTTP has (1-4: the
request limits, routing, Host, Origin and CORS, the method and media types), then hands the
body to the transport-neutral ``Pipeline`` with the request's ``Responder`` as its channel:
exactly one response is written, a JSON body, an SSE stream when the handler sent
notifications, or an empty 202 for a notification or a response.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator, Callable, Sized
from typing import TYPE_CHECKING, Final

from mcpkit._grammar import OWS_CHARS
from mcpkit.errors import InvalidRequest, ProtocolError
from mcpkit.json import JsonObject, decode
from mcpkit.limits import Limits
from mcpkit.model import CancellationToken, EndpointRegistry, Revision
from mcpkit.protocol import (
    HeaderFields,
    RequestMeta,
    accepts,
    error_message,
    media_type_ok,
    wire_error,
)
from mcpkit.server._broadcast import Broadcaster, Change, ChangeKind, MemoryBroadcaster
from mcpkit.server._call import Call, Runtime
from mcpkit.server._conversation import STATELESS
from mcpkit.server._deployment import Deployment
from mcpkit.server._events import EventStore
from mcpkit.server._forwarded import TrustedProxies
from mcpkit.server._http import HttpExchange, HttpRequest
from mcpkit.server._lifespans import Lifespans
from mcpkit.server._listen import SubscriptionAuthorizer
from mcpkit.server._metrics import CONTENT_TYPE, HEALTH_PATHS, MeteredResponder, Metrics
from mcpkit.server._operations import Operations
from mcpkit.server._pipeline import Answer, Pipeline
from mcpkit.server._policy import AdmissionController, CorsPolicy
from mcpkit.server._redis_sessions import RedisSessionStore
from mcpkit.server._resource_server import Authorization
from mcpkit.server._session_routes import Asked, SessionRoutes
from mcpkit.server._sessions import SessionStore
from mcpkit.server._stream import NO_STORE, Responder, respond
from mcpkit.server._task_store import TaskRecord
from mcpkit.server._tasks import Work

if TYPE_CHECKING:
    from mcpkit.server._tracing import Tracing

__all__ = ["Engine"]

_LOOPBACK_HOSTS: Final = frozenset({"localhost", "127.0.0.1", "[::1]"})
# Host values whose answer is remembered (both accepted and refused ones), at most.
_MAX_REMEMBERED_HOSTS: Final = 256
_ALLOW: Final = ((b"allow", b"POST, OPTIONS"),)
_ALLOW_SESSIONS: Final = ((b"allow", b"GET, POST, DELETE, OPTIONS"),)
_METADATA_ALLOW: Final = ((b"allow", b"GET, OPTIONS"),)
_METADATA_PREFLIGHT: Final = (
    (b"access-control-allow-methods", b"GET"),
    (b"access-control-allow-headers", b"mcp-protocol-version"),
    (b"access-control-max-age", b"600"),
)
_GET_ONLY: Final = ((b"allow", b"GET"),)
_ALIVE: Final = b'{"status":"ok"}'
_PREFLIGHT_HEADERS: Final = (
    "content-type, accept, authorization, mcp-protocol-version, mcp-method, mcp-name"
)


class _NoEndpoint(InvalidRequest):
    message = (
        "No MCP endpoint at this path. An endpoint answers at its declared path (such as "
        "/mcp); when the app is mounted under a prefix, at the prefix followed by that path "
        "(/ai/mcp under /ai)."
    )


class _HostNotAllowed(InvalidRequest):
    message = (
        "This Host header is not allowed; add the name to allowed_hosts (or --allowed-host), "
        "or use the address and port the server listens on."
    )


# The bodies of the 404 and 421 answers: fixed, written once, never naming the path or host
# the client sent (a JSON-RPC error without an id, as the 413 answer is).
_NOT_FOUND: Final = error_message(None, _NoEndpoint())
_MISDIRECTED: Final = error_message(None, _HostNotAllowed())

_HOST: Final = re.compile(
    r"(?P<name>\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)(?::(?P<port>[0-9]{1,5}))?",
    re.ASCII,
)


def _host_name(value: str) -> tuple[str, str | None] | None:
    """Split a ``Host`` value into a lower-case name and an optional port; ``None`` if it is
    not a bracketed IP literal or a name of ASCII letters, digits, dots and hyphens (an
    underscore is refused)."""
    match = _HOST.fullmatch(value.strip(OWS_CHARS).lower())
    if match is None:
        return None
    return match["name"], match["port"]


class Engine:
    """What every transport is given: the endpoints' runtimes, the pipeline, the HTTP front's
    policies and the server's lifecycle (start, drain, shut down)."""

    def __init__(
        self,
        deployment: Deployment,
        operations: Operations,
        *,
        broadcaster: Broadcaster,
        authorizer: SubscriptionAuthorizer | None,
        limits: Limits,
        allowed_hosts: frozenset[str],
        port: int | None,
        cors: CorsPolicy | None,
        admission: AdmissionController | None,
        authorization: Authorization | None = None,
        proxies: TrustedProxies | None = None,
        sessions: SessionStore | None = None,
        events: EventStore | None = None,
        debug: bool = False,
        metrics: str | None = None,
        health: bool = False,
        tracing: Tracing | None = None,
    ) -> None:
        self.deployment = deployment
        # Each endpoint's runtime under its exact path, so routing is one dict lookup; the
        # deployment's own dict, so a swap is seen by the next request.
        self._routes = deployment.routes
        self.operations = operations
        if operations.tasks is not None:
            operations.tasks.resume = self._resume
        self.broadcaster = broadcaster
        """Carries the application's change events to every node (``Server.notify_*``)."""
        broadcaster.attach(deployment.audience.receive)
        if operations.tasks is not None:  # listen streams following a task hear of it
            operations.tasks.changed = lambda key: broadcaster.publish(
                Change(ChangeKind.TASK, key.endpoint, task=key.task_id)
            )
            if not isinstance(broadcaster, MemoryBroadcaster):
                # a change recorded on another node (a cancel, the last answer) reaches the
                # task's work where it runs; in one process the runner acted already
                runner = operations.tasks
                broadcaster.attach(
                    lambda change: (
                        runner.heard(change.task) if change.kind is ChangeKind.TASK else None
                    )
                )
        self.pipeline = Pipeline(
            operations,
            limits=limits,
            admission=admission,
            sessions=sessions,
            events=events,
            audience=deployment.audience,
            authorizer=authorizer,
            debug=debug,
        )
        self._session_routes = None if sessions is None else SessionRoutes(self.pipeline, limits)
        self._limits = limits
        self._allowed_hosts = allowed_hosts
        self._hosts: dict[tuple[str, int | None], int] = {}
        self.port = port
        self._lifespans = Lifespans()
        self._running = 0  # nested running() contexts
        self._cors = cors
        self.authorization = authorization
        """The OAuth resource server, when the server is one: it serves the metadata
        documents at the well-known paths, and admits remembered tokens synchronously."""
        if authorization is not None:
            self.pipeline.remembered = authorization.remembered
        self._proxies = proxies  # trusted proxies, whose X-Forwarded-For names the client
        self.metrics_path = metrics
        """Where the metrics are served (``None``: nowhere, and nothing is counted)."""
        self.metrics = None if metrics is None else Metrics()
        """The counts of ``Server(metrics=...)``; ``None`` (nothing counted) by default."""
        self.pipeline.metrics = self.metrics
        self.tracing = tracing
        """The spans of ``Server(tracing=...)``; ``None`` (no span) by default."""
        # Whether each message is observed (metrics, spans): the one test the others pay.
        self._observed = metrics is not None or tracing is not None
        self._phase = "starting"  # "ready" once started, "stopped" once shut down
        # The operational routes (metrics, health), by path; ``None`` when there are none.
        routes: dict[str, Callable[[], bytes]] = {}
        if metrics is not None:
            routes[metrics] = self._scrape
        if health:
            routes.update(zip(HEALTH_PATHS, (self._alive, self._readiness), strict=True))
        self._operational = routes or None

    @property
    def registry(self) -> EndpointRegistry:
        """The endpoints served now (a swap replaces it)."""
        return self.deployment.registry

    @property
    def limits(self) -> Limits:
        return self._limits

    @property
    def calls(self) -> int:
        """Calls in flight: queued for a slot, or running and not yet answered."""
        return self.operations.executor.calls

    async def drain(self, budget: float, *, hurry: Callable[[], bool] = bool) -> int:
        """Stop gracefully: from now on every new request is answered ``Overloaded`` (503),
        while the calls already admitted get ``budget`` seconds to finish (less once
        ``hurry()`` is true); those still in flight then are answered ``Overloaded`` and
        their tokens cancelled.  Returns how many were cut off."""
        self.pipeline.stopping = True
        if self._session_routes is not None:
            self._session_routes.wake_all()  # open session streams end now
        self.deployment.audience.end_listens()  # each ends with its complete result
        return await self.operations.executor.drain(budget, hurry=hurry)

    async def startup(self) -> None:
        """Enter the endpoints' lifespans (their state is every handler's ``ctx.state``);
        everything else was built with the server, so only reopen the executors if an earlier
        lifespan shut them down or drained them, and recover the tasks a previous process
        left running."""
        self.operations.states = await self._lifespans.enter(self.registry)
        self.pipeline.stopping = False
        self.operations.executor.start()
        tasks = self.operations.tasks
        if tasks is not None:
            tasks.executor.start()
            await tasks.ready()
        self._phase = "ready"

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Engine]:
        """:meth:`startup` on entry, :meth:`shutdown` on exit (stdio, ``Server.lifespan``);
        nested uses start and stop once, with the outermost."""
        self._running += 1
        try:
            if self._running == 1:
                await self.startup()
            yield self
        finally:
            self._running -= 1
            if self._running == 0:
                await self.shutdown()

    async def shutdown(self) -> None:
        self._phase = "stopped"
        self.operations.executor.shutdown()
        tasks = self.operations.tasks
        if tasks is not None:
            await tasks.shutdown()
        self.operations.states = {}
        await self._lifespans.leave()  # after the handlers that use the state have stopped
        if isinstance(self.pipeline.sessions, RedisSessionStore):
            await self.pipeline.sessions.detach()
        if self.authorization is not None:
            await self.authorization.aclose()

    def _resume(self, record: TaskRecord) -> Work | None:
        """The work of a managed task to run again after a restart, from its stored call:
        ``None`` when its endpoint or tool is no longer served, the tool served now is not one
        the server runs as a task or does not say it is idempotent, or the call cannot be
        read."""
        runtime = self._routes.get(record.endpoint)
        revision = Revision.V2026_07_28
        plan = None if runtime is None else runtime.tools[revision].get(record.tool)
        if runtime is None or plan is None or record.arguments is None:
            return None
        annotations = plan.tool.annotations
        if not plan.tool.managed_task or annotations is None or annotations.idempotent is not True:
            return None
        try:
            origin = decode(record.arguments, limits=self._limits)
        except ProtocolError:  # a damaged record fails its task, never the server's start
            return None
        arguments = origin.get("arguments") if isinstance(origin, JsonObject) else None
        capabilities = origin.get("clientCapabilities") if isinstance(origin, JsonObject) else None
        if not isinstance(arguments, JsonObject) or not isinstance(capabilities, JsonObject):
            return None
        call = Call(
            runtime=runtime,
            revision=revision,
            request_id=record.task_id,
            method="tools/call",
            params=JsonObject({"name": record.tool, "arguments": arguments}),
            args=(record.tool, arguments),
            meta=RequestMeta(client_capabilities=capabilities),
            http=None,
            headers=(),
            identity=None,
            notify=_nowhere,
            deadline=0.0,
            disconnected=asyncio.Event(),
            token=CancellationToken(),
            conversation=STATELESS,
            authorization=record.owner,
        )
        return self.operations.task_work(call, plan, record.rounds)

    def runtime(self, path: str) -> Runtime:
        """The runtime serving ``path`` now (``KeyError`` when none does)."""
        return self._routes[path]

    # --- HTTP -------------------------------------------------------------------------------

    async def handle_http(
        self, request: HttpRequest, exchange: HttpExchange, disconnected: asyncio.Event
    ) -> None:
        if self._proxies is not None:
            request = self._proxies.resolve(request)
        extra: list[tuple[bytes, bytes]] = []
        fields = HeaderFields(request.headers)
        try:
            runtime = self._http_prefix(request, fields, extra)
        except _SessionMethod as found:
            routes = self._session_routes
            assert routes is not None  # an endpoint keeps sessions
            asked = Asked(found.runtime, fields, request, exchange, extra)
            if request.method == "DELETE":
                await routes.delete(asked)
            else:
                await routes.stream(asked, disconnected)
            return
        except Answer as answer:
            await respond(exchange, answer.status, answer.message, [*extra, *answer.extra])
            return
        except ProtocolError as error:  # a repeated header the checks read
            status, written = wire_error(error, None)
            await respond(exchange, status, error_message(None, written), extra)
            return
        except _Exposition as exposition:
            await exchange.start(200, exposition.headers)
            await exchange.write(exposition.body, more=False)
            return
        if self._observed:
            await self._observe(runtime, request, fields, exchange, extra, disconnected)
            return
        responder = Responder(
            exchange, extra, budget=self._limits.max_response_bytes, disconnected=disconnected
        )
        await self.pipeline.handle(runtime, request.body, responder, STATELESS, fields, request)

    async def _observe(
        self,
        runtime: Runtime,
        request: HttpRequest,
        fields: HeaderFields,
        exchange: HttpExchange,
        extra: list[tuple[bytes, bytes]],
        disconnected: asyncio.Event,
    ) -> None:
        """``handle_http``'s last step when the server keeps metrics or traces: the message is
        counted once it is answered, with its latency, and has a span over the same time."""
        metrics = self.metrics
        tracing = self.tracing
        responder = MeteredResponder(
            exchange, extra, budget=self._limits.max_response_bytes, disconnected=disconnected
        )
        revision = None
        opened = None if tracing is None else tracing.start(fields)
        started = time.perf_counter()
        try:
            revision = await self.pipeline.handle(
                runtime, request.body, responder, STATELESS, fields, request
            )
        except Exception:
            responder.crashed()
            raise
        finally:
            if metrics is not None:
                metrics.observe(responder, revision, time.perf_counter() - started)
            if opened is not None:
                assert tracing is not None
                tracing.finish(opened, runtime, responder, revision, fields)

    def _http_prefix(
        self, request: HttpRequest, fields: HeaderFields, extra: list[tuple[bytes, bytes]]
    ) -> Runtime:
        """Groups 1-4: size, route, Host, Origin/CORS, method, media types."""
        if request.body_too_large:
            raise Answer(413, message=error_message(None, InvalidRequest()))
        runtime = self._routes.get(request.raw_path)
        if runtime is None:
            if self.authorization is not None:
                self._metadata(request, fields, extra)
            if self._operational is not None:
                self._operate(request, fields)
            raise Answer(404, message=_NOT_FOUND)
        self._check_host(request, fields)
        origin = fields.get("origin")
        if origin is not None:
            if self._cors is None or not self._cors.allows(origin, request):
                raise Answer(403)
            extra.append((b"access-control-allow-origin", origin.encode("latin-1")))
            extra.append((b"vary", b"Origin"))
            exposed = (
                b"WWW-Authenticate, Mcp-Session-Id" if runtime.sessions else b"WWW-Authenticate"
            )
            extra.append((b"access-control-expose-headers", exposed))
        if request.method != "POST":
            if request.method == "OPTIONS" and origin is not None:
                raise Answer(204, self._preflight(runtime))
            if runtime.sessions:
                if request.method in ("DELETE", "GET"):
                    raise _SessionMethod(runtime)
                raise Answer(405, _ALLOW_SESSIONS)
            raise Answer(405, _ALLOW)
        if not media_type_ok(fields.get("content-type")):
            raise Answer(415)
        if not accepts(fields.get("accept")):
            raise Answer(406)
        return runtime

    def _check_host(self, request: HttpRequest, fields: HeaderFields) -> None:
        host = fields.raw("host")
        port = request.server_port or self.port
        # Exactly one ``Host`` (``None`` when absent or repeated): a value seen before (the
        # usual case) is answered by one dict lookup, a new one is judged and remembered.
        if host is None:
            raise Answer(400)
        status = self._hosts.get((host, port))
        if status is None:
            status = self._judge_host(host, port)
        if status:
            raise Answer(status, message=_MISDIRECTED if status == 421 else None)

    def _metadata(
        self, request: HttpRequest, fields: HeaderFields, extra: list[tuple[bytes, bytes]]
    ) -> None:
        """Serve an OAuth protected-resource metadata document (RFC 9728) if one lives at the
        path: to any origin, since it is public and browser-based clients fetch it."""
        assert self.authorization is not None
        document = self.authorization.document(request.raw_path, self.registry)
        if document is None:
            return
        self._check_host(request, fields)
        if fields.get("origin") is not None:
            extra.append((b"access-control-allow-origin", b"*"))
        if request.method == "OPTIONS":
            raise Answer(204, _METADATA_PREFLIGHT)
        if request.method != "GET":
            raise Answer(405, _METADATA_ALLOW)
        raise Answer(200, message=document)

    def _operate(self, request: HttpRequest, fields: HeaderFields) -> None:
        """Serve an operational route (metrics, health) if one lives at the path: ``GET``
        only, with the Host check of the endpoints, and never to another origin (a request
        that names one is refused, and no CORS header is written)."""
        assert self._operational is not None
        route = self._operational.get(request.raw_path)
        if route is None:
            return
        self._check_host(request, fields)
        if fields.get("origin") is not None:
            raise Answer(403)
        if request.method != "GET":
            raise Answer(405, _GET_ONLY)
        raise Answer(200, message=route())

    def _alive(self) -> bytes:
        """``/healthz``: the process serves requests."""
        return _ALIVE

    def _readiness(self) -> bytes:
        """``/readyz``: 200 once started and not draining, else 503 with the phase."""
        phase = "draining" if self.pipeline.stopping else self._phase
        if phase != "ready":
            raise Answer(503, message=b'{"status":"%s"}' % phase.encode("ascii"))
        return b'{"status":"ready"}'

    def _scrape(self) -> bytes:
        """The metrics route: the exposition, with the gauges read now (raised, so that it is
        written as text rather than as JSON)."""
        metrics = self.metrics
        assert metrics is not None
        raise _Exposition(metrics.exposition(self.gauges()))

    def gauges(self) -> dict[str, int | None]:
        """The metrics' gauges now, by name (``None``: a session store that cannot count);
        on the event loop."""
        operations = self.operations
        executor = operations.executor
        sessions = self.pipeline.sessions
        return {
            "mcpkit_handler_slots_busy": executor.active,
            "mcpkit_queued_requests": executor.queued,
            "mcpkit_sessions": (
                0 if sessions is None else len(sessions) if isinstance(sessions, Sized) else None
            ),
            "mcpkit_listen_streams": self.deployment.audience.listens,
            "mcpkit_tasks_running": 0 if operations.tasks is None else operations.tasks.running,
        }

    def _judge_host(self, value: str, port: int | None) -> int:
        """The status for a ``Host`` value not yet remembered (0 when accepted): a loopback
        alias (with the listener's port when it is known) or an allow-listed name; forwarded
        headers never count.  Remembered within a bound."""
        status = self._host_status(value, port)
        if len(self._hosts) < _MAX_REMEMBERED_HOSTS and len(value) <= 255:
            self._hosts[(value, port)] = status  # a server sees the same few Host values
        return status

    def _host_status(self, value: str, port: int | None) -> int:
        """0 for an acceptable ``Host`` value, else the status that refuses it."""
        parsed = _host_name(value)
        if parsed is None:
            return 400
        name, given = parsed
        if name in self._allowed_hosts:
            return 0
        if name in _LOOPBACK_HOSTS and (given is None or port is None or given == str(port)):
            return 0
        return 421

    def _preflight(self, runtime: Runtime) -> list[tuple[bytes, bytes]]:
        endpoint = runtime.endpoint
        names = {
            f"mcp-param-{declaration.suffix.lower()}"
            for revision in endpoint.revisions
            for tool in endpoint.tools_for(revision)
            for declaration in tool.input_schema.headers
        }
        if runtime.sessions:
            names.add("mcp-session-id")
        allowed = ", ".join([_PREFLIGHT_HEADERS, *sorted(names)])
        return [
            (
                b"access-control-allow-methods",
                b"GET, POST, DELETE" if runtime.sessions else b"POST",
            ),
            (b"access-control-allow-headers", allowed.encode("latin-1")),
            (b"access-control-max-age", b"600"),
        ]


def _nowhere(message: bytes) -> None:
    """A resumed task's call has no client to send to."""


class _Exposition(Exception):
    """The metrics route's answer: a text body, not JSON (raised from ``_http_prefix``)."""

    def __init__(self, body: bytes) -> None:
        super().__init__()
        self.body = body
        self.headers = [
            (b"content-type", CONTENT_TYPE),
            (b"content-length", b"%d" % len(body)),
            NO_STORE,
        ]


class _SessionMethod(Exception):
    """``_http_prefix`` found a ``DELETE`` or a ``GET`` for an endpoint that keeps sessions
    (raised: the ``POST`` path pays nothing for it)."""

    def __init__(self, runtime: Runtime) -> None:
        super().__init__()
        self.runtime = runtime
