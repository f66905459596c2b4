"""The values the pipeline hands the operations: a method's row in the method table, what the
server keeps per endpoint (``Runtime``) and one admitted request (``Call``)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple, TypeAlias

from mcpkit.json import JsonObject
from mcpkit.model import (
    CachePolicy,
    CancellationToken,
    Endpoint,
    Revision,
    TaskSupport,
    ToolRegistration,
    asks_for_input,
)
from mcpkit.protocol import Catalog, RequestMeta
from mcpkit.server._continuation import has_conditional
from mcpkit.server._conversation import Conversation
from mcpkit.server._http import HttpRequest
from mcpkit.server._rate_limit import RateLimiting
from mcpkit.server._scope_guard import ScopeGuard

__all__ = ["Call", "Method", "Runtime", "ToolPlan"]


@dataclass(frozen=True, slots=True)
class Method:
    """One row of the method table: everything the server knows about one request method."""

    name: str
    revisions: frozenset[Revision]
    """The revisions that have the method; on any other it is -32601."""
    read: Callable[[JsonObject], object]
    """Checks ``params`` once, before admission, and returns what ``answer`` works with
    (``Call.args``); a wrong shape is -32602."""
    answer: Callable[[Any, Call], Awaitable[bytes]]
    """The operation: an ``Operations`` method, given the admitted call."""
    capability: str | None = None
    """The server capability the method belongs to: where the endpoint does not advertise it
    (no tools, say), the method is -32601."""
    session: bool = False
    """Served only inside a 2025 session: -32601 on a revision the endpoint keeps none on."""
    listen: bool = False
    """Served only where the endpoint serves ``subscriptions/listen`` (``Endpoint.listen``)."""
    tasks: bool = False
    """Served only where a tool of the endpoint may run as a task (``Endpoint.tasks``)."""
    skills: bool = False
    """Served only on a revision the endpoint serves skills on (``Endpoint.skills_for``)."""


class ToolPlan(NamedTuple):
    """What ``tools/call`` decides about a tool from the tool alone, once per endpoint rather
    than per request; the registration is immutable, so the answers cannot go stale."""

    tool: ToolRegistration
    mirrored: bool
    """Whether the tool declares ``Mcp-Param-*`` headers (none: nothing to check)."""
    conditional: bool
    """``has_conditional(tool)``: a progress reporter must wait (no notifications)."""
    at_once: bool
    """The handler never suspends: the job runs inline (``Runtime.at_once``)."""
    asks: bool
    """``asks_for_input(tool)``: in a 2025 session the server asks the client itself."""
    task: bool
    """The tool may run as a task (its ``task_support`` is not ``FORBIDDEN``)."""


_Plans: TypeAlias = "Mapping[Revision, Mapping[str, ToolPlan]]"


def _tool_plans(endpoint: Endpoint, at_once: frozenset[Callable[..., object]]) -> _Plans:
    """Every tool ``endpoint.find_tool`` answers on each revision (the ones it lists there),
    by name, with its plan."""
    plans = {
        revision: MappingProxyType(
            {
                tool.name: ToolPlan(
                    tool,
                    bool(tool.input_schema.headers),
                    has_conditional(tool),
                    tool.handler in at_once,
                    asks_for_input(tool),
                    tool.task_support is not TaskSupport.FORBIDDEN,
                )
                for tool in endpoint.tools_for(revision)
            }
        )
        for revision in Revision
    }
    return MappingProxyType(plans)


def _offered(
    endpoint: Endpoint, revision: Revision, methods: tuple[Method, ...]
) -> Mapping[str, Method]:
    """The methods ``endpoint`` answers on ``revision``: ones the revision has, and that need
    no capability or one the endpoint advertises there (anything else is -32601)."""
    capabilities = endpoint.capabilities(revision)
    sessions = revision in endpoint.session_revisions
    tasks = endpoint.tasks
    return MappingProxyType(
        {
            method.name: method
            for method in methods
            if revision in method.revisions
            and (method.capability is None or method.capability in capabilities)
            and (sessions or not method.session)
            and (endpoint.listen or not method.listen)
            and (tasks or not method.tasks)
            and (bool(endpoint.skills_for(revision)) or not method.skills)
        }
    )


@dataclass(frozen=True, slots=True)
class Runtime:
    """What the server keeps per endpoint: the endpoint, its prebuilt catalog pages and what
    it answers on each revision."""

    endpoint: Endpoint
    catalog: Catalog
    discover_cache: CachePolicy
    methods: tuple[Method, ...]
    """The method table the runtime answers from."""
    at_once: frozenset[Callable[..., object]] = frozenset()
    """The endpoint's ``async def`` handlers that never suspend (``never_suspends``): their
    jobs run inline instead of as a task."""
    limiting: RateLimiting | None = None
    """What the endpoint's messages are charged (``_rate_limit``); ``None``, the usual case,
    when the server has no rate limiter for it: the pipeline then skips limiting."""
    guard: ScopeGuard | None = None
    """The scopes the endpoint's entries declare (``_scope_guard``); ``None`` when it declares
    none: the pipeline then checks no scope and every caller gets ``catalog``."""
    offered: Mapping[Revision, Mapping[str, Method]] = field(init=False, repr=False, compare=False)
    """The methods answered per revision, by name, decided once here rather than per request."""
    tools: _Plans = field(init=False, repr=False, compare=False)
    """The tools ``find_tool`` answers per revision and name, each with its ``ToolPlan``."""
    sessions: frozenset[Revision] = field(init=False, repr=False, compare=False)
    """The endpoint's ``session_revisions``, read on every HTTP request (one attribute)."""

    def __post_init__(self) -> None:
        offered = {
            revision: _offered(self.endpoint, revision, self.methods) for revision in Revision
        }
        object.__setattr__(self, "offered", MappingProxyType(offered))
        object.__setattr__(self, "tools", _tool_plans(self.endpoint, self.at_once))
        object.__setattr__(self, "sessions", self.endpoint.session_revisions)


class Call(NamedTuple):
    """One request that passed the envelope, revision, ``_meta`` and params checks and was
    admitted.

    A named tuple: immutable, and built by one C-level tuple construction per request.
    ``args`` is what the method's reader returned for ``params``; ``disconnected`` is set when
    the client goes away (HTTP) or cancels the request (stdio); ``authorization`` is the
    admitted authorization partition (``Admitted.authorization``) protected request state is
    bound to, ``None`` for the anonymous partition; ``conversation`` is what the transport
    remembers of the client (the log level a handshake revision's messages start from).
    """

    runtime: Runtime
    revision: Revision
    request_id: str | int
    method: str
    params: JsonObject
    args: Any
    meta: RequestMeta
    http: HttpRequest | None
    headers: tuple[tuple[str, str], ...]
    identity: object
    notify: Callable[[bytes], None]
    deadline: float
    disconnected: asyncio.Event
    token: CancellationToken
    conversation: Conversation
    authorization: str | None = None
