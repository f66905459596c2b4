"""Building the engine once, from a registry and the server's settings:
every endpoint's catalog pages are projected and encoded here, never per request."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from mcpkit.errors import ConfigurationError
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.model import (
    CachePolicy,
    Endpoint,
    EndpointRegistry,
    PromptRegistration,
    RequestStateMode,
    ResourceRegistration,
    ToolRegistration,
    never_suspends,
)
from mcpkit.protocol import DEFAULT_PAGE_SIZE, Catalog
from mcpkit.schema import EvaluationGate
from mcpkit.server._audience import Audience
from mcpkit.server._broadcast import Broadcaster, MemoryBroadcaster
from mcpkit.server._call import Runtime
from mcpkit.server._deployment import Deployment
from mcpkit.server._engine import Engine
from mcpkit.server._events import EventStore, MemoryEventStore
from mcpkit.server._execution import Executor
from mcpkit.server._forwarded import TrustedProxies
from mcpkit.server._keyring import Keyring
from mcpkit.server._listen import SubscriptionAuthorizer
from mcpkit.server._metrics import HEALTH_PATHS, metrics_path
from mcpkit.server._operations import METHODS, Operations
from mcpkit.server._policy import AdmissionController, CorsPolicy, Interceptor, ResultSanitizer
from mcpkit.server._protection import RequestStateProtector
from mcpkit.server._rate_limit import NO_RATE_LIMITS, RateLimits
from mcpkit.server._redis_sessions import RedisSessionStore
from mcpkit.server._resource_server import Authorization, ResourceServer
from mcpkit.server._scope_guard import ScopeGuard
from mcpkit.server._sessions import MemorySessionStore, SessionStore
from mcpkit.server._task_store import TaskStore
from mcpkit.server._tasks import TaskRunner

if TYPE_CHECKING:
    from mcpkit.server._tracing import Tracing

log = logging.getLogger("mcpkit")

__all__ = ["EngineSettings", "TracerProvider", "build_engine"]


class TracerProvider(Protocol):
    """What ``Server(tracing=...)`` takes besides ``True`` and ``False``: an OpenTelemetry
    ``TracerProvider`` (named by its shape, so that mcpkit imports no ``opentelemetry``)."""

    def get_tracer(
        self, instrumenting_module_name: str, instrumenting_library_version: str | None = None, /
    ) -> Any: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineSettings:
    """Everything the engine is built from besides the registry."""

    limits: Limits = DEFAULT_LIMITS
    allowed_hosts: frozenset[str] = frozenset()
    port: int | None = None
    cors: CorsPolicy | None = None
    admission: AdmissionController | None = None
    auth: ResourceServer | None = None
    """The OAuth resource server that admits every HTTP request (instead of ``admission``)."""
    trusted_proxies: tuple[str, ...] = ()
    """Proxies whose ``X-Forwarded-For`` names the client (``_forwarded``); none by default."""
    interceptor: Interceptor | None = None
    sanitizer: ResultSanitizer | None = None
    page_size: int = DEFAULT_PAGE_SIZE
    tool_list_cache: CachePolicy = CachePolicy.PRIVATE_NO_CACHE
    prompt_list_cache: CachePolicy = CachePolicy.PRIVATE_NO_CACHE
    discover_cache: CachePolicy = CachePolicy.PRIVATE_NO_CACHE
    keyring: Keyring | None = None
    """Keys for framework-protected request state; required when an operation uses it."""
    sessions: SessionStore | None = None
    """Where 2025 sessions live, for endpoints with ``session_revisions``; a
    ``MemorySessionStore`` by default."""
    broadcaster: Broadcaster | None = None
    """Carries the application's change events (``Server.notify_*``) to every node's server;
    a ``MemoryBroadcaster`` (this process only) by default."""
    subscription_authorizer: SubscriptionAuthorizer | None = None
    """Grants ``subscriptions/listen`` streams; required when an endpoint serves them."""
    events: EventStore | None = None
    """Where the events of those sessions' streams are kept for ``Last-Event-ID`` replay; a
    ``MemoryEventStore`` by default."""
    clock_ns: Callable[[], int] | None = None
    """The clock request state is sealed and opened against (tests inject one)."""
    deployment: Deployment | None = None
    """The endpoints served now, shared with another engine of the same server
    (``Server.configured``); built from the registry when ``None``."""
    task_store: TaskStore | None = None
    """Where tasks live; required when a tool may run as a task (never chosen by itself)."""
    rate_limits: RateLimits = NO_RATE_LIMITS
    """The rate limiters (``_rate_limit``); none by default."""
    debug: bool = False
    """Development mode: a handler's unexpected exception is answered -32603 with its type
    name in ``data.exceptionType`` (never its message).  ``Server`` allows it on loopback only."""
    metrics: bool | str | None = None
    """Where the Prometheus exposition is served (``_metrics``): ``True`` for ``/metrics``, or
    a path; ``None`` or ``False``: no metrics, and nothing is counted."""
    health: bool = False
    """Serve ``GET /healthz`` (liveness) and ``GET /readyz`` (readiness)."""
    tracing: bool | TracerProvider | None = None
    """OpenTelemetry spans (``_tracing``): ``True`` with the global tracer provider, or the
    provider given; ``None`` or ``False``: no span, and ``opentelemetry`` is never imported."""


_NEEDS_KEYRING = (
    "an operation uses framework-protected request state: give the server a keyring "
    "(Keyring(...) in production, Keyring.development_ephemeral() to try it)"
)
_NEEDS_TASK_STORE = (
    "a tool may run as a task (task_support, or a method returning TaskCreatedResult): give "
    "the server a task_store, SqliteTaskStore('tasks.db') to keep tasks across restarts or "
    "MemoryTaskStore() for tests and development"
)
_NEEDS_AUTHORIZER = (
    "an endpoint serves subscriptions/listen (listen=True): give the server a "
    "subscription_authorizer that grants each listen a Lease (or None to deny it)"
)


def _is_coroutine_function(hook: object) -> bool:
    call = getattr(hook, "__call__", None)  # noqa: B004 - callable objects with async __call__
    return inspect.iscoroutinefunction(hook) or inspect.iscoroutinefunction(call)


def _hosts(names: Iterable[str]) -> frozenset[str]:
    hosts = set()
    for name in names:
        if not isinstance(name, str) or not name or not name.isascii():
            raise ConfigurationError("allowed_hosts: each host must be a non-empty ASCII str")
        hosts.add(name.lower())
    return frozenset(hosts)


def _framework_protected(endpoints: Iterable[Endpoint]) -> bool:
    for endpoint in endpoints:
        for revision in endpoint.revisions:
            operations: tuple[ToolRegistration | PromptRegistration | ResourceRegistration, ...] = (
                *endpoint.tools_for(revision),
                *endpoint.prompts_for(revision),
                *endpoint.resources_for(revision),
                *endpoint.templates_for(revision),
            )
            for operation in operations:
                if operation.request_state_mode is RequestStateMode.FRAMEWORK_PROTECTED:
                    return True
    return False


def _protector(
    registry: EndpointRegistry, settings: EngineSettings
) -> RequestStateProtector | None:
    """The request-state protector: required by a framework-protected operation, refused for
    anything but a ``Keyring``; an ephemeral keyring is announced once."""
    keyring = settings.keyring
    if keyring is None:
        if _framework_protected(registry):
            raise ConfigurationError(_NEEDS_KEYRING)
        return None
    if not isinstance(keyring, Keyring):
        raise ConfigurationError("keyring must be a Keyring or None")
    if keyring.is_ephemeral:
        log.warning(
            "mcpkit: request state is sealed with development-ephemeral keys: it is lost on "
            "restart and cannot move between servers; configure a Keyring for production"
        )
    limits = settings.limits
    options: dict[str, object] = {}
    if settings.clock_ns is not None:
        options["clock_ns"] = settings.clock_ns
    return RequestStateProtector(
        keyring,
        max_encoded_bytes=limits.max_request_state_bytes,
        max_decoded_bytes=limits.max_request_state_decoded_bytes,
        lifetime_seconds=limits.request_state_lifetime_seconds,
        max_rounds=limits.max_request_state_rounds,
        limits=limits,
        **options,  # type: ignore[arg-type]
    )


def _at_once(endpoint: Endpoint) -> frozenset[Callable[..., object]]:
    """The endpoint's handlers whose calls finish in their first step (``never_suspends``)."""
    handlers = [
        *(tool.handler for tool in endpoint.tools),
        *(prompt.handler for prompt in endpoint.prompts),
        *(resource.handler for resource in endpoint.resources),
    ]
    return frozenset(handler for handler in handlers if never_suspends(handler))


def build_engine(registry: EndpointRegistry, settings: EngineSettings) -> Engine:
    """The engine for ``registry``; refusals are ``ConfigurationError``."""
    if not isinstance(registry, EndpointRegistry):
        raise ConfigurationError("build_engine: registry must be an EndpointRegistry")
    limits = settings.limits
    if settings.cors is not None and not isinstance(settings.cors, CorsPolicy):
        raise ConfigurationError("cors must be a CorsPolicy or None")
    for name, hook in (
        ("admission", settings.admission),
        ("interceptor", settings.interceptor),
        ("sanitizer", settings.sanitizer),
    ):
        if hook is not None and not callable(hook):
            raise ConfigurationError(f"{name} must be callable or None")
    if settings.sanitizer is not None and _is_coroutine_function(settings.sanitizer):
        raise ConfigurationError("sanitizer must be a plain def, not async def")
    protector = _protector(registry, settings)
    sessions = _session_store(registry, settings)
    authorizer = settings.subscription_authorizer
    if authorizer is not None and not callable(authorizer):
        raise ConfigurationError("subscription_authorizer must be callable or None")
    if authorizer is None and any(endpoint.listen for endpoint in registry):
        raise ConfigurationError(_NEEDS_AUTHORIZER)
    if authorizer is not None and not any(endpoint.listen for endpoint in registry):
        raise ConfigurationError(
            "subscription_authorizer: no endpoint serves subscriptions/listen; give an endpoint "
            "listen=True or leave subscription_authorizer unset"
        )
    metrics = _operational(registry, settings)
    tracing = _tracing(settings.tracing)
    authorization = _authorization(settings)
    admission = settings.admission if authorization is None else authorization.admit
    runner = _task_runner(registry, settings)
    rate_limits = settings.rate_limits.resolve(limits)
    broadcaster = settings.broadcaster
    if broadcaster is None:
        broadcaster = MemoryBroadcaster()
    events = settings.events
    if sessions is None:
        if events is not None:
            raise ConfigurationError(
                "events: no endpoint keeps 2025 sessions, so no stream is resumable; give an "
                "endpoint session_revisions or leave events unset"
            )
    elif events is None:
        shared = sessions.events if isinstance(sessions, RedisSessionStore) else None
        events = MemoryEventStore(limits) if shared is None else shared
    deployment = settings.deployment
    if deployment is None:

        def build(endpoint: Endpoint) -> Runtime:
            """An endpoint's runtime, its catalog pages encoded now (also for a swap)."""
            if protector is None and _framework_protected((endpoint,)):
                raise ConfigurationError(_NEEDS_KEYRING)
            if runner is None and endpoint.tasks:
                raise ConfigurationError(_NEEDS_TASK_STORE)

            def catalog(visible: Callable[[object], bool] | None = None) -> Catalog:
                return Catalog.build(
                    endpoint,
                    page_size=settings.page_size,
                    tool_list_cache=settings.tool_list_cache,
                    prompt_list_cache=settings.prompt_list_cache,
                    limits=limits,
                    visible=visible,
                )

            guard = None
            if endpoint.declared_scopes:
                if authorization is None:
                    raise ConfigurationError(
                        f"endpoint {endpoint.path!r}: an entry declares OAuth scopes "
                        "(scopes=...), which only a resource server can check: give the "
                        "server auth=ResourceServer(...)"
                    )
                guard = ScopeGuard(endpoint, authorization, limits, catalog)
            return Runtime(
                endpoint=endpoint,
                catalog=catalog(),
                discover_cache=settings.discover_cache,
                methods=METHODS,
                at_once=_at_once(endpoint),
                limiting=rate_limits.for_endpoint(endpoint),
                guard=guard,
            )

        deployment = Deployment(registry, build, Audience(limits))
    operations = Operations(
        audience=deployment.audience,
        protector=protector,
        limits=limits,
        executor=Executor(slots=limits.handler_slots, queue=limits.max_queued_requests),
        gate=EvaluationGate(limits.max_concurrent_evaluations),
        interceptor=settings.interceptor,
        sanitizer=settings.sanitizer,
        tasks=runner,
    )
    return Engine(
        deployment,
        operations,
        broadcaster=broadcaster,
        authorizer=authorizer,
        limits=limits,
        allowed_hosts=_hosts(settings.allowed_hosts),
        port=settings.port,
        cors=settings.cors,
        admission=admission,
        authorization=authorization,
        proxies=(
            TrustedProxies(settings.trusted_proxies, limits) if settings.trusted_proxies else None
        ),
        sessions=sessions,
        events=events,
        debug=settings.debug,
        metrics=metrics,
        health=settings.health,
        tracing=tracing,
    )


def _operational(registry: EndpointRegistry, settings: EngineSettings) -> str | None:
    """The metrics path, checked; operational routes (metrics, health) at an endpoint's path
    or at each other's are refused."""
    if not isinstance(settings.health, bool):
        raise ConfigurationError("health must be True or False")
    metrics = metrics_path(settings.metrics)
    paths = list(HEALTH_PATHS) if settings.health else []
    if metrics is not None:
        if metrics in paths:
            raise ConfigurationError(f"metrics: {metrics} is a health route's path")
        paths.append(metrics)
    for endpoint in registry:
        if endpoint.path in paths:
            raise ConfigurationError(
                f"endpoint {endpoint.path!r}: the path of an operational route (metrics or "
                "health); serve the endpoint or the route at another path"
            )
    return metrics


def _tracing(value: object) -> Tracing | None:
    """The spans of ``tracing``, checked: ``opentelemetry`` is imported only here, and only
    when they are on."""
    if value is None or value is False:
        return None
    if value is not True and not callable(getattr(value, "get_tracer", None)):
        raise ConfigurationError("tracing must be True, False or an OpenTelemetry TracerProvider")
    try:
        from mcpkit.server._tracing import Tracing
    except ImportError as error:
        raise ConfigurationError(
            "tracing needs OpenTelemetry: pip install 'mcpkit[otel]'"
        ) from error
    return Tracing(None if value is True else value)


def _authorization(settings: EngineSettings) -> Authorization | None:
    """The resource server bound to the server's limits; it is the admission controller, so
    a second one is refused."""
    auth = settings.auth
    if auth is None:
        return None
    if not isinstance(auth, ResourceServer):
        raise ConfigurationError("auth must be a ResourceServer or None")
    if settings.admission is not None:
        raise ConfigurationError(
            "give either auth= (an OAuth ResourceServer, which admits every request) or "
            "admission=, not both"
        )
    return auth.bind(settings.limits)


def _session_store(registry: EndpointRegistry, settings: EngineSettings) -> SessionStore | None:
    """The store of 2025 sessions when an endpoint keeps them; one given where none does is
    refused (it would hold nothing)."""
    store = settings.sessions
    if not any(endpoint.session_revisions for endpoint in registry):
        if store is not None:
            raise ConfigurationError(
                "sessions: no endpoint keeps 2025 sessions; give an endpoint session_revisions "
                "or leave sessions unset"
            )
        return None
    if isinstance(store, RedisSessionStore):
        store.adopt(settings.limits)
    return MemorySessionStore(settings.limits) if store is None else store


def _task_runner(registry: EndpointRegistry, settings: EngineSettings) -> TaskRunner | None:
    """The task runner over the server's task store, when a tool may run as a task; a store
    given where none may is refused (it would hold nothing)."""
    store = settings.task_store
    tasks = any(endpoint.tasks for endpoint in registry)
    if store is None:
        if tasks:
            raise ConfigurationError(_NEEDS_TASK_STORE)
        return None
    if not tasks:
        raise ConfigurationError(
            "task_store: no tool may run as a task; give a tool task_support or leave "
            "task_store unset"
        )
    if isinstance(store, type):
        raise ConfigurationError(
            "task_store must be a TaskStore instance (SqliteTaskStore('tasks.db') or "
            "MemoryTaskStore()), not the class"
        )
    for method in ("create", "get", "finish", "expire", "interrupted"):
        if not callable(getattr(store, method, None)):
            raise ConfigurationError("task_store must be a TaskStore (SqliteTaskStore, ...)")
    return TaskRunner(store, settings.limits, debug=settings.debug)
