"""Building the engine once, from a registry and the server's settings (DESIGN.md §1.7):
every endpoint's catalog pages are projected and encoded here, never per request."""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from dataclasses import dataclass, field

from mcpkit.errors import ConfigurationError
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.model import CachePolicy, EndpointRegistry
from mcpkit.protocol import DEFAULT_PAGE_SIZE, Catalog
from mcpkit.schema import EvaluationGate
from mcpkit.server._engine import Engine
from mcpkit.server._execution import Executor
from mcpkit.server._operations import Operations, Runtime
from mcpkit.server._policy import AdmissionController, CorsPolicy, Interceptor, ResultSanitizer

__all__ = ["EngineSettings", "build_engine"]


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineSettings:
    """Everything the engine is built from besides the registry."""

    limits: Limits = DEFAULT_LIMITS
    allowed_hosts: frozenset[str] = frozenset()
    port: int | None = None
    cors: CorsPolicy | None = None
    admission: AdmissionController | None = None
    interceptor: Interceptor | None = None
    sanitizer: ResultSanitizer | None = None
    page_size: int = DEFAULT_PAGE_SIZE
    tool_list_cache: CachePolicy = CachePolicy.PRIVATE_NO_CACHE
    prompt_list_cache: CachePolicy = CachePolicy.PRIVATE_NO_CACHE
    discover_cache: CachePolicy = CachePolicy.PRIVATE_NO_CACHE
    handler_threads: int | None = field(default=None)


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
    runtimes = {
        endpoint.path: Runtime(
            endpoint=endpoint,
            catalog=Catalog.build(
                endpoint,
                page_size=settings.page_size,
                tool_list_cache=settings.tool_list_cache,
                prompt_list_cache=settings.prompt_list_cache,
                limits=limits,
            ),
            discover_cache=settings.discover_cache,
        )
        for endpoint in registry
    }
    operations = Operations(
        limits=limits,
        executor=Executor(slots=limits.handler_slots, queue=limits.max_queued_requests),
        gate=EvaluationGate(limits.max_concurrent_evaluations),
        interceptor=settings.interceptor,
        sanitizer=settings.sanitizer,
    )
    return Engine(
        registry,
        runtimes,
        operations,
        limits=limits,
        allowed_hosts=_hosts(settings.allowed_hosts),
        port=settings.port,
        cors=settings.cors,
        admission=settings.admission,
    )
