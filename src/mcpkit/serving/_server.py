"""``mcpkit.Server``: an endpoint registry served over Streamable HTTP or stdio.

The server builds its engine once (catalog pages, executor, policies).  ``run()`` starts the
embedded uvicorn (httptools, on asyncio's loop unless ``loop="uvloop"``) and blocks; ``serve()``
is the same as a coroutine on the caller's loop;
``asgi()`` returns the pure ASGI app to mount in any ASGI host; ``run_stdio()`` serves one
endpoint over stdin and stdout.  The default bind is 127.0.0.1:8000; binding anything else
requires an explicit ``allowed_hosts`` list.

``run()`` and ``serve()`` bind the listening socket before anything else (a busy port is an
``OSError`` at once), and once uvicorn serves on it they log each endpoint's URL on the
``mcpkit`` logger (INFO): ``mcpkit: serving NAME VERSION at http://HOST:PORT/PATH``.
"""

from __future__ import annotations

import errno
import importlib.util
import ipaddress
import logging
import re
import socket
from collections.abc import AsyncIterator, Callable, Collection, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any, Final, Literal, TypeAlias

from mcpkit.errors import ConfigurationError
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.model import CachePolicy, Endpoint, EndpointBuilder, EndpointRegistry
from mcpkit.protocol import DEFAULT_PAGE_SIZE
from mcpkit.server import (
    AdmissionController,
    Broadcaster,
    Change,
    ChangeKind,
    CorsPolicy,
    Engine,
    EngineSettings,
    EventStore,
    Interceptor,
    Keyring,
    RateLimiter,
    RateLimits,
    ResourceServer,
    ResultSanitizer,
    SessionStore,
    StdioConnection,
    SubscriptionAuthorizer,
    TaskStore,
    TracerProvider,
    build_engine,
)
from mcpkit.transports import McpApp

__all__ = ["EventLoop", "Server", "registry_of"]

log = logging.getLogger("mcpkit")

_LOOPBACK: Final = frozenset({"127.0.0.1", "localhost", "::1"})

EventLoop: TypeAlias = Literal["asyncio", "uvloop"]
"""The event loop ``run()`` serves on (``serve()`` runs on the caller's loop).

asyncio's own is the default.  uvloop spends a few percent less CPU per request, but libuv
accepts one connection per turn of the loop, so on a busy server a burst of new connections
waits one turn each: a p99 latency far above the median (README, design decisions).  asyncio
accepts a burst at once.  ``"uvloop"`` suits deployments whose clients keep their connections.
"""
_EVENT_LOOPS: Final = ("asyncio", "uvloop")


_BIND_HINTS: Final = {
    errno.EADDRINUSE: " (another process listens there: stop it or choose another port)",
    errno.EADDRNOTAVAIL: " (not an address of this machine: choose one it has, or 127.0.0.1)",
    errno.EACCES: " (a port below 1024 needs privileges: choose a higher port)",
}

_HOST_NAME: Final = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?", re.ASCII)


def _is_host(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return _HOST_NAME.fullmatch(host) is not None
    return True


def registry_of(target: object) -> EndpointRegistry:
    """An ``EndpointRegistry`` from a registry, an ``Endpoint``, an ``EndpointBuilder``, an
    ``@endpoint`` class or a list or tuple of those."""
    if isinstance(target, EndpointRegistry):
        return target
    items: Sequence[object] = target if isinstance(target, (list, tuple)) else (target,)
    endpoints: list[Endpoint] = []
    for item in items:
        if isinstance(item, Endpoint):
            endpoints.append(item)
        elif isinstance(item, EndpointBuilder):
            endpoints.append(item.endpoint)
        elif isinstance(item, type):
            endpoints.extend(EndpointRegistry.from_classes(item))
        else:
            raise ConfigurationError(
                "Server: serve an EndpointRegistry, an Endpoint, an EndpointBuilder, an @endpoint "
                "class or a list of them"
            )
    return EndpointRegistry.from_endpoints(endpoints)


async def _serving(server: Any, sockets: list[socket.socket]) -> None:
    """uvicorn's ``serve()`` on ``sockets``, except that a failure to start (a failed lifespan
    start-up) is an ``OSError`` for the caller rather than ``SystemExit`` out of its loop."""
    try:
        await server.serve(sockets)
    except SystemExit:
        raise OSError("mcpkit: the HTTP server could not start") from None


@dataclass(frozen=True, slots=True, kw_only=True)
class _Settings:
    """Everything a ``Server`` is built from besides its registry, held in this one place so
    that ``configured()`` derives its copy with ``replace`` instead of replaying the
    constructor's arguments."""

    host: str
    port: int
    loop: EventLoop
    drain_seconds: float
    debug: bool
    engine: EngineSettings
    """The engine's part; its ``port`` is ``port``, or ``None`` while that is 0 (the real port
    is known once bound)."""


def _check(
    host: str,
    port: int,
    allowed_hosts: Collection[str],
    limits: Limits,
    loop: EventLoop,
    drain_seconds: float,
    debug: bool,
) -> None:
    """The constructor's refusals, in its order; ``configured()`` applies them again, as the
    values it changes are the caller's."""
    if not isinstance(host, str) or not _is_host(host):
        raise ConfigurationError("Server: host must be an IP address or a host name")
    if type(port) is not int or not 0 <= port <= 65_535:
        raise ConfigurationError("Server: port must be an int from 0 to 65535")
    if host not in _LOOPBACK and not allowed_hosts:
        raise ConfigurationError(
            "Server: binding a non-loopback host requires allowed_hosts (the Host names "
            "clients use; mcpkit serve --allowed-host NAME), so that DNS rebinding cannot reach "
            "the server"
        )
    if not isinstance(limits, Limits):
        raise ConfigurationError("Server: limits must be a Limits")
    if loop not in _EVENT_LOOPS:
        raise ConfigurationError("Server: loop must be 'asyncio' or 'uvloop'")
    if loop == "uvloop" and importlib.util.find_spec("uvloop") is None:
        raise ConfigurationError("Server: loop='uvloop' needs the uvloop package installed")
    if (
        isinstance(drain_seconds, bool)
        or not isinstance(drain_seconds, (int, float))
        or not 0 <= drain_seconds <= 3_600
    ):
        raise ConfigurationError("Server: drain_seconds must be a number from 0 to 3600")
    if not isinstance(debug, bool):
        raise ConfigurationError("Server: debug must be True or False")
    if debug and host not in _LOOPBACK:
        raise ConfigurationError(
            "Server: debug=True tells clients the type of a handler's exception; it is for "
            "development on a loopback host only (127.0.0.1, localhost or ::1)"
        )


def _proxies(proxies: Iterable[str]) -> tuple[str, ...]:
    if isinstance(proxies, str):
        raise ConfigurationError(
            "Server: trusted_proxies must be a list of addresses or networks, such as ['10.0.0.5']"
        )
    return tuple(proxies)


class Server:
    """An MCP server for one registry; see the module docstring.

    ``debug=True`` is development mode: a handler's unexpected exception is answered -32603
    with the exception's type name in ``data.exceptionType`` (never its message, which may
    hold what the client sent).  It is refused unless ``host`` is loopback; an application
    that mounts ``asgi()`` in a host of its own is responsible for serving it only to itself.

    ``metrics=True`` (or a path) serves Prometheus metrics at ``GET /metrics``, and
    ``health=True`` the liveness and readiness checks at ``GET /healthz`` and ``GET /readyz``;
    both are off by default, and with metrics off nothing is counted.

    ``tracing=True`` gives each HTTP message an OpenTelemetry span (the ``otel`` extra) from
    the global tracer provider, so the ``OTEL_*`` environment configures it; a
    ``TracerProvider`` may be given instead.  Off by default, and then ``opentelemetry`` is
    never imported.
    """

    engine: Engine

    def __init__(
        self,
        target: object,
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        allowed_hosts: Iterable[str] = (),
        cors: CorsPolicy | None = None,
        admission: AdmissionController | None = None,
        auth: ResourceServer | None = None,
        trusted_proxies: Iterable[str] = (),
        interceptor: Interceptor | None = None,
        sanitizer: ResultSanitizer | None = None,
        limits: Limits = DEFAULT_LIMITS,
        page_size: int = DEFAULT_PAGE_SIZE,
        tool_list_cache: CachePolicy = CachePolicy.PRIVATE_NO_CACHE,
        prompt_list_cache: CachePolicy = CachePolicy.PRIVATE_NO_CACHE,
        discover_cache: CachePolicy = CachePolicy.PRIVATE_NO_CACHE,
        keyring: Keyring | None = None,
        sessions: SessionStore | None = None,
        broadcaster: Broadcaster | None = None,
        events: EventStore | None = None,
        subscription_authorizer: SubscriptionAuthorizer | None = None,
        task_store: TaskStore | None = None,
        rate_limiters: Mapping[str, RateLimiter] | None = None,
        tool_rate_limiter: RateLimiter | str | None = None,
        request_rate_limiter: RateLimiter | str | None = None,
        loop: EventLoop = "asyncio",
        drain_seconds: float = 30.0,
        debug: bool = False,
        metrics: bool | str = False,
        health: bool = False,
        tracing: bool | TracerProvider = False,
    ) -> None:
        hosts = tuple(allowed_hosts)  # once: it may be an iterator
        _check(host, port, hosts, limits, loop, drain_seconds, debug)
        registry = registry_of(target)
        engine = EngineSettings(
            limits=limits,
            allowed_hosts=frozenset(hosts),
            port=port or None,
            cors=cors,
            admission=admission,
            auth=auth,
            trusted_proxies=_proxies(trusted_proxies),
            interceptor=interceptor,
            sanitizer=sanitizer,
            page_size=page_size,
            tool_list_cache=tool_list_cache,
            prompt_list_cache=prompt_list_cache,
            discover_cache=discover_cache,
            keyring=keyring,
            sessions=sessions,
            broadcaster=broadcaster,
            events=events,
            subscription_authorizer=subscription_authorizer,
            task_store=task_store,
            rate_limits=RateLimits(
                {} if rate_limiters is None else rate_limiters,
                tool_rate_limiter,
                request_rate_limiter,
            ),
            debug=debug,
            metrics=metrics,
            health=health,
            tracing=tracing,
        )
        self._build(
            registry,
            _Settings(
                host=host,
                port=port,
                loop=loop,
                drain_seconds=float(drain_seconds),
                debug=debug,
                engine=engine,
            ),
        )

    def _build(self, registry: EndpointRegistry, settings: _Settings) -> None:
        """The constructor's second half, from checked settings; ``configured()`` starts here."""
        self._settings = settings
        self.engine = build_engine(registry, settings.engine)
        self._app = McpApp(self.engine)

    @property
    def registry(self) -> EndpointRegistry:
        """The endpoints served now (``swap`` replaces them)."""
        return self.engine.registry

    @property
    def host(self) -> str:
        return self._settings.host

    @property
    def port(self) -> int:
        """The port asked for; 0 stays 0 once bound (``engine.port`` has the real one)."""
        return self._settings.port

    @property
    def loop(self) -> EventLoop:
        return self._settings.loop

    @property
    def drain_seconds(self) -> float:
        return self._settings.drain_seconds

    @property
    def debug(self) -> bool:
        """Development mode (the class docstring)."""
        return self._settings.debug

    @property
    def allowed_hosts(self) -> frozenset[str]:
        """The ``Host`` names accepted besides the loopback ones."""
        return self._settings.engine.allowed_hosts

    @property
    def trusted_proxies(self) -> tuple[str, ...]:
        """The proxies whose ``X-Forwarded-For`` names the client (none by default)."""
        return self._settings.engine.trusted_proxies

    @property
    def rate_limits(self) -> RateLimits:
        """The rate limiters as given (``rate_limiters``, ``tool_rate_limiter``,
        ``request_rate_limiter``)."""
        return self._settings.engine.rate_limits

    @property
    def keyring(self) -> Keyring | None:
        """The keys of framework-protected request state, if the server was given any."""
        return self._settings.engine.keyring

    @property
    def metrics(self) -> str | None:
        """The path of the Prometheus metrics (``None`` when the server keeps none)."""
        return self.engine.metrics_path

    @property
    def health(self) -> bool:
        """Whether ``GET /healthz`` and ``GET /readyz`` are served."""
        return self._settings.engine.health

    @property
    def tracing(self) -> bool:
        """Whether each HTTP message gets an OpenTelemetry span."""
        return self.engine.tracing is not None

    @property
    def task_store(self) -> TaskStore | None:
        """Where the server keeps its tasks (``None`` when no tool may run as a task)."""
        return self._settings.engine.task_store

    def __repr__(self) -> str:
        return f"<Server {self.host}:{self.port} {len(self.registry)} endpoints>"

    def configured(
        self,
        *,
        host: str | None = None,
        port: int | None = None,
        loop: EventLoop | None = None,
        drain_seconds: float | None = None,
        task_store: TaskStore | None = None,
        allowed_hosts: Iterable[str] | None = None,
        debug: bool | None = None,
        trusted_proxies: Iterable[str] | None = None,
        metrics: bool | str | None = None,
        health: bool | None = None,
        tracing: bool | TracerProvider | None = None,
    ) -> Server:
        """The same server on another address, loop or drain budget, with other allowed hosts
        (in place of its own), in or out of development mode, or with another task store (what
        ``mcpkit serve --host/--port/--loop/--drain/--allowed-host/--debug/--tasks-db/
        --trusted-proxy/--metrics/--health/--tracing`` uses; trusted proxies, like allowed
        hosts, replace the server's own), with or without metrics and health routes or
        traces, with a new
        engine (the port is one of its settings) over the same endpoints, session and event
        stores and broadcaster: an application that calls ``swap`` or
        ``notify_resource_updated`` on this server reaches the clients of the new one.  The
        task store is this server's unless ``task_store`` names another; this server keeps
        its own (closing it is the owner's business), and a store given to a server with no
        task tool is refused as the constructor refuses it."""
        now = self._settings
        host = now.host if host is None else host
        port = now.port if port is None else port
        loop = now.loop if loop is None else loop
        drain = now.drain_seconds if drain_seconds is None else drain_seconds
        hosts = now.engine.allowed_hosts if allowed_hosts is None else tuple(allowed_hosts)
        debug = now.debug if debug is None else debug
        proxies = (
            now.engine.trusted_proxies if trusted_proxies is None else _proxies(trusted_proxies)
        )
        _check(host, port, hosts, now.engine.limits, loop, drain, debug)
        server = Server.__new__(Server)  # the settings are checked and whole: no __init__
        server._build(
            self.registry,
            replace(
                now,
                host=host,
                port=port,
                loop=loop,
                drain_seconds=float(drain),
                debug=debug,
                engine=replace(
                    now.engine,
                    allowed_hosts=frozenset(hosts),
                    trusted_proxies=proxies,
                    port=port or None,
                    debug=debug,
                    metrics=now.engine.metrics if metrics is None else metrics,
                    health=now.engine.health if health is None else health,
                    tracing=now.engine.tracing if tracing is None else tracing,
                    sessions=self.engine.pipeline.sessions,
                    broadcaster=self.engine.broadcaster,
                    events=self.engine.pipeline.events,
                    deployment=self.engine.deployment,
                    task_store=now.engine.task_store if task_store is None else task_store,
                ),
            ),
        )
        return server

    def swap(self, target: object) -> None:
        """Serve new endpoints in place of the ones at their paths, while the server runs:
        ``target`` is an ``Endpoint``, an ``@endpoint`` class, a registry or a list of them.

        Each endpoint must be at a path served now, with the same revisions, session revisions
        and ``listen`` as the one it replaces.  The new catalog pages are built in the calling
        thread (call it from a thread, or a ``def`` handler, rather than from the event loop if
        the catalog is large); then each path switches at once: requests already routed finish
        on the endpoint they started with, the next request gets the new one, and list cursors
        of the old catalog are refused with -32602.  Every 2025 session and listen stream of
        the endpoint whose tool, prompt or resource lists changed is told
        (``notifications/…/list_changed``).  A refusal (``ConfigurationError``) changes
        nothing.  Callable from any thread."""
        self.engine.deployment.swap(list(registry_of(target)))

    def notify_resource_list_changed(self, path: str | None = None) -> None:
        """Tell the clients of the endpoint at ``path`` (every endpoint when ``None``) that its
        resource list changed: ``notifications/resources/list_changed`` on each 2025 session's
        ``GET`` stream and each listen stream that asked for it, through the broadcaster (so
        on every node).  Use it when a resource list handler's answer changes; a ``swap``
        tells them itself.  Callable from any thread."""
        if path is not None and not isinstance(path, str):
            raise TypeError("notify_resource_list_changed: path must be a str or None")
        endpoints = list(self.registry)
        if path is not None:
            endpoints = [e for e in endpoints if e.path == path]
            if not endpoints:
                raise ConfigurationError(
                    "notify_resource_list_changed: no endpoint is served at that path"
                )
        broadcaster = self.engine.broadcaster
        for endpoint in endpoints:
            if any("resources" in endpoint.capabilities(rev) for rev in endpoint.revisions):
                broadcaster.publish(Change(ChangeKind.RESOURCES, endpoint.path))

    def notify_resource_updated(self, uri: str) -> None:
        """Tell the clients following the resource at ``uri`` that it changed:
        ``notifications/resources/updated`` on the ``GET`` stream of each 2025 session
        subscribed to it (``resources/subscribe``) and on each listen stream whose
        ``resourceSubscriptions`` name it, through the broadcaster (so on every node).  URIs
        are compared in RFC 3986 normal form (scheme and host case, percent-encoding).
        Callable from any thread, a handler's included."""
        if not isinstance(uri, str):
            raise TypeError("notify_resource_updated: uri must be a str")
        self.engine.broadcaster.publish(Change(ChangeKind.RESOURCE, uri=uri))

    @asynccontextmanager
    async def lifespan(self, app: object = None) -> AsyncIterator[None]:
        """The server's start and stop (the endpoints' lifespans, task recovery) as an async
        context manager, for an app that mounts :meth:`asgi` where ASGI lifespan events do not
        reach it: ``FastAPI(lifespan=server.lifespan)``, or ``async with
        server.lifespan(app):`` inside the host app's own lifespan.  ``app`` is ignored, and
        nothing is yielded: Starlette merges a yielded value into the host app's state."""
        async with self.engine.running():
            yield

    def asgi(self) -> McpApp:
        """The pure ASGI app; it needs no lifespan events and mounts anywhere."""
        return self._app

    def _uvicorn(self) -> Any:
        import uvicorn

        if importlib.util.find_spec("httptools") is None:
            raise ConfigurationError(
                "Server: serving HTTP needs the httptools package (pip install "
                "'uvicorn[standard]'); the connection limits are enforced on it, not on h11"
            )
        # Imported here: the stdio transport and asgi() need neither httptools nor uvicorn.
        from mcpkit.transports._connections import guarded_protocol

        limits = self.engine.limits
        config = uvicorn.Config(
            self._app,
            host=self.host,
            port=self.port,
            loop=self.loop,
            http=guarded_protocol(limits),
            lifespan="on",
            log_level="warning",
            access_log=False,
            server_header=False,
            # The guarded protocol also takes it from the limits; uvicorn annotates it as int.
            timeout_keep_alive=limits.keep_alive_timeout_seconds,  # type: ignore[arg-type]
            # The guarded protocol caps connections itself, closing idle ones to make room.
            limit_concurrency=None,
            timeout_graceful_shutdown=5,
            # Forwarded headers never identify a host or a client, and
            # the middleware that reads them costs a layer per request.
            proxy_headers=False,
        )
        from mcpkit.serving._lifecycle import GracefulServer

        return GracefulServer(config, self.engine, self.drain_seconds)

    def _listen(self, port: int | None = None, reuse_port: bool = False) -> list[socket.socket]:
        """The sockets to listen on, one for each address ``host`` resolves to, as asyncio's
        ``create_server`` makes them (TCP, an IPv6 one for IPv6 only): bound before uvicorn
        starts, so that a busy port or a wrong address fails here, before anything claims to
        serve; listening only once the application has started (uvicorn's ``create_server``),
        so that a client that can connect is served at once.  With port 0 every address gets
        the port the first one got.  ``port`` replaces the server's; ``reuse_port`` sets
        ``SO_REUSEPORT``."""
        listeners: list[socket.socket] = []
        port = self.port if port is None else port
        try:
            found = socket.getaddrinfo(
                self.host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
            )
            for family, kind, proto, _, address in dict.fromkeys(found):
                listener = socket.socket(family, kind, proto)
                listeners.append(listener)
                listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if reuse_port:
                    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
                if family == socket.AF_INET6:
                    listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                listener.bind((address[0], port, *address[2:]))
                port = listener.getsockname()[1]
        except OSError as error:
            for listener in listeners:
                listener.close()
            hint = _BIND_HINTS.get(error.errno or 0, "")
            raise OSError(
                error.errno,
                f"Server: cannot listen on {self.where()}: {error.strerror}{hint}",
            ) from None
        return listeners

    def bind(self, *, port: int | None = None, reuse_port: bool = False) -> list[socket.socket]:
        """The server's listening sockets, bound now and not yet listening (what ``run``
        binds itself; a supervisor binds them once and hands them to its workers), on
        ``port`` in place of the server's when given.  ``reuse_port`` sets ``SO_REUSEPORT``
        (Linux), so that several groups of sockets can be bound to the same address, each
        given a share of the connections by the kernel: ``mcpkit serve --workers`` binds a
        group for each worker."""
        return self._listen(port, reuse_port)

    def _announce(self, port: int, started: Callable[[], object] | None) -> None:
        """Once uvicorn serves on ``port``: the port learnt (when 0 was asked for), each
        endpoint's URL on the log, then the caller's hook."""
        if self.port == 0:
            self.engine.port = port
        where = self.where()
        for endpoint in self.registry:
            info = endpoint.implementation
            log.info("mcpkit: serving %s %s at %s%s", info.name, info.version, where, endpoint.path)
        if started is not None:
            started()

    async def serve(self, *, started: Callable[[], object] | None = None) -> None:
        """Serve HTTP until cancelled or signalled (the async form of ``run``, on the running
        loop whatever ``loop`` says).  ``started`` is called once it serves."""
        server = self._uvicorn()
        listeners = self._listen()
        server.on_started = lambda: self._announce(listeners[0].getsockname()[1], started)
        try:
            await _serving(server, listeners)
        finally:
            for listener in listeners:
                listener.close()

    def where(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.engine.port or self.port}"

    def run(
        self,
        *,
        started: Callable[[], object] | None = None,
        sockets: list[socket.socket] | None = None,
    ) -> None:
        """Serve HTTP in the foreground until SIGTERM or SIGINT, then stop gracefully (calls
        in flight get ``drain_seconds`` to finish) and return.  ``started`` is called once it
        serves (after the endpoints' URLs are logged); a socket that cannot be bound is an
        ``OSError`` before that.  ``sockets`` are listening sockets bound already (a
        supervisor's, for ``mcpkit serve --workers``), served instead of binding anew."""
        server = self._uvicorn()
        server.reraise_signals = False
        listeners = self._listen() if sockets is None else sockets
        server.on_started = lambda: self._announce(listeners[0].getsockname()[1], started)
        try:
            server.run(listeners)
        finally:
            for listener in listeners:  # uvicorn closes them once it served, not if it failed
                listener.close()

    def stdio_connection(self, path: str | None = None) -> StdioConnection:
        """A stdio session for the endpoint at ``path`` (the only endpoint by default).  A
        server with ``auth=`` is refused: stdio carries no bearer token, so OAuth cannot
        admit anything on it (the MCP specification leaves local servers' credentials to
        their environment)."""
        if self.engine.authorization is not None:
            raise ConfigurationError(
                "Server.stdio: this server is an OAuth resource server (auth=), and stdio "
                "carries no access token; serve stdio from a Server built without auth="
            )
        endpoints = list(self.registry)
        if path is None:
            if len(endpoints) != 1:
                raise ConfigurationError("Server.stdio: name the endpoint path to serve")
            endpoint = endpoints[0]
        else:
            found = self.registry.endpoint_for_path(path)
            if found is None:
                raise ConfigurationError("Server.stdio: no endpoint has that path")
            endpoint = found
        return StdioConnection(self.engine, self.engine.runtime(endpoint.path))

    def run_stdio(self, path: str | None = None) -> bool:
        """Serve one endpoint over stdin/stdout until stdin closes; ``True`` when requests
        still running after the grace period were cut off (answered as overloaded)."""
        from mcpkit.transports import run_stdio

        self.stdio_connection(path)  # refuse a bad path before touching stdin
        return run_stdio(
            lambda: self.stdio_connection(path),
            max_line_bytes=self.engine.limits.max_request_bytes,
            running=self.engine.running,
        )
