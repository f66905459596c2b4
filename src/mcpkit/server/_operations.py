"""The MCP methods: cheap parameter checks, target lookup and the slot-bound jobs (pipeline
groups 10-17), transport-neutral.  ``await Operations.dispatch(call)`` answers one admitted
request with the encoded JSON-RPC response, or raises the ``ProtocolError`` to write instead.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, NamedTuple, TypeAlias

from mcpkit.errors import (
    Cancelled,
    InternalError,
    InvalidParams,
    MethodNotFound,
    ProtocolError,
    ResourceNotFound,
)
from mcpkit.json import JsonObject
from mcpkit.limits import Limits
from mcpkit.model import (
    UNSET,
    CachePolicy,
    CancellationToken,
    Completion,
    Endpoint,
    InvocationFeatures,
    ProgressReporter,
    RequestContext,
    RequestLogger,
    ResourceListPage,
    Revision,
    ToolRegistration,
    server_context,
)
from mcpkit.protocol import (
    SERVER_INFO_KEY,
    Catalog,
    ListKind,
    LogLevel,
    RequestMeta,
    RevisionProfile,
    check_mirrored_headers,
    discover_result,
    empty_result,
    implementation_info,
    initialize_result,
    notification_message,
    profile,
    raw_result_message,
    result_message,
)
from mcpkit.schema import EvaluationGate
from mcpkit.server._continuation import (
    Continuation,
    Declaring,
    Retry,
    has_conditional,
    prepare,
    settled,
)
from mcpkit.server._execution import Executor
from mcpkit.server._http import HttpRequest
from mcpkit.server._invoke import (
    Job,
    Output,
    Proceeded,
    ToolCall,
    checked,
    prompt_job,
    resource_job,
    tool_job,
    value_job,
)
from mcpkit.server._policy import Interceptor, ResultSanitizer
from mcpkit.server._protection import RequestStateProtector

__all__ = ["LEGACY_LOG_LEVEL", "Call", "Operations", "Runtime", "ToolPlan", "check_params"]

log = logging.getLogger("mcpkit.server")

# The capability a method needs (calling an un-advertised one is -32601).
_CAPABILITY: Final = {
    "tools/list": "tools",
    "tools/call": "tools",
    "prompts/list": "prompts",
    "prompts/get": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resources",
    "resources/read": "resources",
    "completion/complete": "completions",
}
_LISTS: Final = {kind.method: kind for kind in ListKind}
# The methods ``Operations`` answers (its table's keys).
_OPERATIONS: Final = frozenset(
    {
        "initialize", "ping", "logging/setLevel", "server/discover", "tools/list",
        "prompts/list", "resources/list", "resources/templates/list", "tools/call",
        "prompts/get", "resources/read", "completion/complete",
    }
)  # fmt: skip
# 2025 stateless requests have no session to remember ``logging/setLevel``: this minimum.
LEGACY_LOG_LEVEL: Final = "info"
_NO_RETRY: Final = Retry()
_NO_CAPABILITIES: Final = JsonObject()
_EMPTY: Final = JsonObject()  # immutable, so one serves every absent object parameter


def _offered(endpoint: Endpoint, revision: Revision) -> frozenset[str]:
    """The methods ``endpoint`` answers on ``revision``: ones the revision has, and that need
    no capability or one the endpoint advertises there (anything else is -32601)."""
    methods = profile(revision).methods
    capabilities = endpoint.capabilities(revision)
    offered = set()
    for method in _OPERATIONS & methods:
        capability = _CAPABILITY.get(method)
        if capability is None or capability in capabilities:
            offered.add(method)
    return frozenset(offered)


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
                )
                for tool in endpoint.tools_for(revision)
            }
        )
        for revision in Revision
    }
    return MappingProxyType(plans)


@dataclass(frozen=True, slots=True)
class Runtime:
    """What the server keeps per endpoint: the endpoint, its prebuilt catalog pages and what
    it answers on each revision."""

    endpoint: Endpoint
    catalog: Catalog
    discover_cache: CachePolicy
    at_once: frozenset[Callable[..., object]] = frozenset()
    """The endpoint's ``async def`` handlers that never suspend (``never_suspends``): their
    jobs run inline instead of as a task."""
    offered: Mapping[Revision, frozenset[str]] = field(init=False, repr=False, compare=False)
    """The methods answered per revision, decided once here rather than per request."""
    tools: _Plans = field(init=False, repr=False, compare=False)
    """The tools ``find_tool`` answers per revision and name, each with its ``ToolPlan``."""

    def __post_init__(self) -> None:
        offered = {revision: _offered(self.endpoint, revision) for revision in Revision}
        object.__setattr__(self, "offered", MappingProxyType(offered))
        object.__setattr__(self, "tools", _tool_plans(self.endpoint, self.at_once))


class Call(NamedTuple):
    """One request that passed the envelope, revision and ``_meta`` checks.

    A named tuple: immutable, and built by one C-level tuple construction per request.
    ``disconnected`` is set when the client goes away (HTTP) or cancels the request (stdio);
    ``authorization`` is the admitted authorization partition (``Admitted.authorization``)
    protected request state is bound to, ``None`` for the anonymous partition;
    ``legacy_log_level`` is the minimum level of a 2025 request's log messages: ``info``, or
    what a stdio client set with ``logging/setLevel`` (the process is its session).
    """

    runtime: Runtime
    revision: Revision
    request_id: str | int
    method: str
    params: JsonObject
    meta: RequestMeta
    http: HttpRequest | None
    headers: tuple[tuple[str, str], ...]
    identity: object
    notify: Callable[[bytes], None]
    deadline: float
    disconnected: asyncio.Event
    token: CancellationToken
    authorization: str | None = None
    legacy_log_level: str = LEGACY_LOG_LEVEL


def _text(params: JsonObject, name: str) -> str:
    value = params.get(name)
    if isinstance(value, str):
        return value
    raise InvalidParams()


def _object(params: JsonObject, name: str) -> JsonObject:
    """The member ``name``, an empty object when absent (JSON null is refused)."""
    value = params.get(name, _EMPTY)
    if isinstance(value, JsonObject):
        return value
    raise InvalidParams()


def _strings(value: JsonObject) -> Mapping[str, str]:
    if not all(isinstance(item, str) for item in value.values()):
        raise InvalidParams()
    return MappingProxyType({key: str(item) for key, item in value.items()})


def _cursor_check(params: JsonObject) -> None:
    cursor = params.get("cursor", UNSET)
    if cursor is not UNSET and not isinstance(cursor, str):
        raise InvalidParams()  # JSON null included: a cursor is a string


def _tool_check(params: JsonObject) -> None:
    # ``_text`` and ``_object`` inlined: this runs for every tools/call
    if not isinstance(params.get("name"), str):
        raise InvalidParams()
    if not isinstance(params.get("arguments", _EMPTY), JsonObject):
        raise InvalidParams()


def _prompt_check(params: JsonObject) -> None:
    _text(params, "name")
    _strings(_object(params, "arguments"))


def _read_check(params: JsonObject) -> None:
    _text(params, "uri")


def _complete_check(params: JsonObject) -> None:
    ref = _object(params, "ref")
    kind = ref.get("type")
    if kind == "ref/prompt":
        _text(ref, "name")
    elif kind == "ref/resource":
        _text(ref, "uri")
    else:
        raise InvalidParams()
    argument = _object(params, "argument")
    _text(argument, "name")
    _text(argument, "value")
    _strings(_object(_object(params, "context"), "arguments"))


def _level_check(params: JsonObject) -> None:
    LogLevel.parse(params.get("level"))


# Group 10, the cheap parameter checks: the shape of ``params`` alone, before admission.
_CHECKS: Final[Mapping[str, Callable[[JsonObject], None]]] = {
    "tools/list": _cursor_check,
    "prompts/list": _cursor_check,
    "resources/list": _cursor_check,
    "resources/templates/list": _cursor_check,
    "tools/call": _tool_check,
    "prompts/get": _prompt_check,
    "resources/read": _read_check,
    "completion/complete": _complete_check,
    "logging/setLevel": _level_check,
}


# The same per revision, without the methods the revision does not have.
_REVISION_CHECKS: Final[Mapping[Revision, Mapping[str, Callable[[JsonObject], None]]]] = {
    revision: {
        method: check for method, check in _CHECKS.items() if method in profile(revision).methods
    }
    for revision in Revision
}


def check_params(revision: Revision, method: str, params: JsonObject) -> None:
    """Refuse a request whose ``params`` have the wrong shape for its method (-32602), before
    admission and any lookup.  A method the revision does not have is
    left alone: it is -32601 whatever its params (a removed ``logging/setLevel`` on 2026)."""
    check = _REVISION_CHECKS[revision].get(method)
    if check is not None:
        check(params)


class Operations:
    """The method table over the server's shared machinery."""

    def __init__(
        self,
        *,
        limits: Limits,
        executor: Executor,
        gate: EvaluationGate,
        interceptor: Interceptor | None,
        sanitizer: ResultSanitizer | None,
        protector: RequestStateProtector | None = None,
    ) -> None:
        self.protector = protector
        self.limits = limits
        self.executor = executor
        self.gate = gate
        self.interceptor = interceptor
        self.sanitizer = sanitizer
        self._table: dict[str, Callable[[Call], Awaitable[bytes]]] = {
            "initialize": self._initialize,
            "ping": self._empty,
            "logging/setLevel": self._empty,  # the level was checked by check_params
            "server/discover": self._discover,
            "tools/list": self._list,
            "prompts/list": self._list,
            "resources/list": self._resources_list,
            "resources/templates/list": self._list,
            "tools/call": self._tools_call,
            "prompts/get": self._prompts_get,
            "resources/read": self._resources_read,
            "completion/complete": self._complete,
        }
        assert self._table.keys() == _OPERATIONS

    def dispatch(self, call: Call) -> Awaitable[bytes]:
        """Answer ``call``: the operation's coroutine, to await for the encoded response;
        -32601, raised at once, for a method the revision or the endpoint does not offer.
        (A plain function: no coroutine of its own wrapping the operation's.)"""
        method = call.method
        if method not in call.runtime.offered[call.revision]:
            raise MethodNotFound()
        return self._table[method](call)

    # --- shared -----------------------------------------------------------------------------

    def _output(
        self, call: Call, row: RevisionProfile, continuation: Continuation | None = None
    ) -> Output:
        info = call.runtime.endpoint.implementation if row.server_info_meta else None
        return Output(call.request_id, call.revision, info, self.limits, continuation)

    def _prepare(self, call: Call, registration: Declaring) -> tuple[Continuation | None, Retry]:
        """Multi-round input checks before the handler (``_continuation.prepare``); callers
        ask ``settled`` first, so its arguments are gathered only when there is work."""
        return prepare(
            registration,
            revision=call.revision,
            endpoint_path=call.runtime.endpoint.path,
            method=call.method,
            params=call.params,
            capabilities=call.meta.client_capabilities or _NO_CAPABILITIES,
            request_id=call.request_id,
            authorization=call.authorization,
            protector=self.protector,
            limits=self.limits,
        )

    def _context(self, call: Call, name: str | None, retry: Retry = _NO_RETRY) -> RequestContext:
        """The handler's view of the request, from values already validated (no re-checks)."""
        meta = call.meta
        return server_context(
            endpoint=call.runtime.endpoint,
            revision=call.revision,
            method=call.method,
            request_id=call.request_id,
            operation_name=name,
            client_info=meta.client_info,
            client_capabilities=meta.client_capabilities or _NO_CAPABILITIES,
            meta=meta.meta,
            input_responses=retry.input_responses,
            request_state=retry.request_state,
            framework_state=retry.framework_state,
            trace=meta.trace,
            identity=call.identity,
            http_request=call.http,
        )

    def _features(
        self, call: Call, row: RevisionProfile, progress_allowed: bool = True
    ) -> InvocationFeatures:
        """The token always; a progress reporter when the client sent a token and a logger on
        2026-07-28 when ``_meta`` names a log level (always on the 2025 revisions) -- both only
        when no conditional input request may still refuse the call after the handler ran:
        the first notification commits the response, so it must stay uncommitted until then."""
        meta = call.meta
        if row.stateless:
            level = None if meta.log_level is None else meta.log_level.wire
        else:
            level = call.legacy_log_level
        if not progress_allowed or (meta.progress_token is None and level is None):
            return InvocationFeatures(call.token)  # the common case: nothing to build
        token = call.token
        features: list[object] = [token]
        notify = call.notify
        limits = self.limits
        # A send on a cancelled request raises ``Cancelled`` before any work: a handler that
        # reports in a loop to a client that left (or stopped reading, or outlived its
        # deadline) stops at its next report even if it never looks at its token.
        if meta.progress_token is not None:

            def progress(params: JsonObject) -> None:
                token.raise_if_cancelled()
                notify(notification_message("notifications/progress", params, limits=limits))

            features.append(ProgressReporter(meta.progress_token, progress))
        if level is not None:

            def message(params: JsonObject) -> None:
                token.raise_if_cancelled()
                notify(notification_message("notifications/message", params, limits=limits))

            features.append(RequestLogger(level, message))
        return InvocationFeatures(*features)

    async def _run(
        self, call: Call, job: Job, ctx: RequestContext, *, intercept: bool = True
    ) -> bytes:
        """Run ``job`` in a handler slot, wrapped by the interceptor when there is one."""
        run, is_async, at_once = job.run, job.is_async, job.at_once
        if self.interceptor is not None and intercept:
            run, is_async, at_once = self._intercepted(job, ctx), True, False
        executor = self.executor
        if at_once and is_async and executor.take_now(call.deadline, call.disconnected):
            # ``executor.run``'s common case without its coroutine: a free slot, taken above,
            # and a job that finishes in its first step
            result = executor.run_at_once(run, call.token)
        else:
            result = await executor.run(
                run, is_async, call.deadline, call.token, call.disconnected, at_once
            )
        if type(result) is bytes:  # the job's own answer: checked only when it is not
            return result
        return checked(result, bytes, "the handler job")  # type: ignore[no-any-return]

    def _intercepted(self, job: Job, ctx: RequestContext) -> Callable[[], Awaitable[bytes]]:
        """The job wrapped by the interceptor: ``proceed()`` runs
        validation and the handler once -- a ``def`` handler still in a worker thread, its
        slot held until the thread returns -- and the interceptor returns what ``proceed()``
        gave it or a result of its own, which is written like the handler's."""
        interceptor = self.interceptor
        assert interceptor is not None
        executor = self.executor

        async def intercepted() -> bytes:
            used = False

            async def proceed() -> Proceeded:
                nonlocal used
                if used:
                    raise InternalError()  # the continuation is one-shot
                used = True
                if job.is_async:
                    message = await job.run()  # type: ignore[misc]
                else:
                    message = await executor.in_pool(job.run)
                return Proceeded(checked(message, bytes, "the handler job"))

            try:
                outcome: object = interceptor(ctx, proceed)
                if inspect.isawaitable(outcome):
                    outcome = await outcome
            except (ProtocolError, Cancelled):
                raise
            except Exception as error:
                log.error("mcpkit: interceptor raised %s", type(error).__name__)
                raise InternalError() from None
            if isinstance(outcome, Proceeded):
                return outcome.message
            return job.finish(outcome)

        return intercepted

    def _complete_message(self, call: Call, body: dict[str, object]) -> bytes:
        """A framework-built complete result: ``resultType`` and ``serverInfo`` on 2026."""
        row = profile(call.revision)
        if row.result_type:
            body["resultType"] = "complete"
        if row.server_info_meta:
            info = implementation_info(call.runtime.endpoint.implementation, call.revision)
            body["_meta"] = {SERVER_INFO_KEY: info}
        return result_message(call.request_id, JsonObject(body), limits=self.limits)

    # --- lifecycle and discovery ----------------------------------------------------------

    async def _initialize(self, call: Call) -> bytes:
        result = initialize_result(call.runtime.endpoint, call.revision)
        return result_message(call.request_id, result, limits=self.limits)

    async def _empty(self, call: Call) -> bytes:
        return result_message(call.request_id, empty_result(call.revision), limits=self.limits)

    async def _discover(self, call: Call) -> bytes:
        runtime = call.runtime
        result = discover_result(runtime.endpoint, call.revision, runtime.discover_cache)
        return result_message(call.request_id, result, limits=self.limits)

    # --- catalogs ---------------------------------------------------------------------------

    async def _list(self, call: Call) -> bytes:
        kind = _LISTS[call.method]
        page = call.runtime.catalog.page(call.revision, kind, call.params.get("cursor", UNSET))
        return raw_result_message(call.request_id, page)

    async def _resources_list(self, call: Call) -> bytes:
        endpoint = call.runtime.endpoint
        handler = endpoint.resource_list_for(call.revision)
        if handler is None:
            return await self._list(call)
        given = call.params.get("cursor")  # a string when present: check_params saw to it
        cursor = given if isinstance(given, str) else None
        ctx = self._context(call, None)
        row = profile(call.revision)

        def finish(returned: object) -> bytes:
            page: ResourceListPage = checked(returned, ResourceListPage, "resource list handler")
            body: dict[str, object] = dict(page.to_json())
            if row.cache_hints:
                body.update(endpoint.resource_list_cache.to_json())
            return self._complete_message(call, body)

        job = value_job(
            handler.handler, (ctx, cursor, self._features(call, row)), handler.is_async, finish
        )
        return await self._run(call, job, ctx)

    # --- operations -------------------------------------------------------------------------

    def _tools_call(self, call: Call) -> Awaitable[bytes]:
        """The checks and the job at once (raising as ``dispatch`` does), then ``_run``'s
        coroutine to await: a plain function, so the hot path has no coroutine of its own."""
        # ``_text`` and ``_object`` inlined: the same checks in the same order.
        params = call.params
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParams()
        arguments = params.get("arguments", _EMPTY)
        if not isinstance(arguments, JsonObject):
            raise InvalidParams()  # JSON null included, as in ``_object``
        runtime = call.runtime
        plan = runtime.tools[call.revision].get(name)  # ``find_tool``, with the plan
        if plan is None:
            raise InvalidParams()
        tool = plan.tool
        row = profile(call.revision)
        if plan.mirrored and row.stateless and call.http is not None:
            check_mirrored_headers(
                tool.input_schema.headers, arguments, call.headers, limits=self.limits
            )
        continuation, retry = settled(tool, row.stateless, params) or self._prepare(call, tool)
        ctx = self._context(call, name, retry)
        features = self._features(call, row, not plan.conditional)
        info = runtime.endpoint.implementation if row.server_info_meta else None  # _output
        job = tool_job(
            ToolCall(
                tool, ctx, arguments, features, self.gate, self.sanitizer,
                call.request_id, call.revision, info, self.limits, continuation,
            ),
            at_once=plan.at_once,
        )  # fmt: skip
        return self._run(call, job, ctx)

    async def _prompts_get(self, call: Call) -> bytes:
        name = _text(call.params, "name")
        arguments = _strings(_object(call.params, "arguments"))
        prompt = call.runtime.endpoint.find_prompt(name, call.revision)
        if prompt is None:
            raise InvalidParams()
        if not prompt.required_arguments <= arguments.keys():
            raise InvalidParams()
        if not arguments.keys() <= prompt.argument_names:
            raise InvalidParams()
        row = profile(call.revision)
        continuation, retry = settled(prompt, row.stateless, call.params) or self._prepare(
            call, prompt
        )
        ctx = self._context(call, name, retry)
        features = self._features(call, row, not has_conditional(prompt))
        job = prompt_job(
            prompt,
            ctx,
            arguments,
            features,
            self._output(call, row, continuation),
            at_once=prompt.handler in call.runtime.at_once,
        )
        return await self._run(call, job, ctx)

    async def _resources_read(self, call: Call) -> bytes:
        uri = _text(call.params, "uri")
        match = call.runtime.endpoint.find_resource(uri, call.revision, limits=self.limits)
        if match is None:
            raise ResourceNotFound(uri)
        resource, variables = match
        row = profile(call.revision)
        continuation, retry = settled(resource, row.stateless, call.params) or self._prepare(
            call, resource
        )
        ctx = self._context(call, uri, retry)
        cache = (
            call.runtime.endpoint.resource_list_cache
            if resource.template is None
            else call.runtime.endpoint.resource_template_list_cache
        )
        if "inputResponses" in call.params or "requestState" in call.params:
            cache = CachePolicy.PRIVATE_NO_CACHE  # a retry's result is the caller's alone
        job = resource_job(
            resource,
            None if resource.template is None else variables,
            ctx,
            self._features(call, row, not has_conditional(resource)),
            cache,
            self._output(call, row, continuation),
            at_once=resource.handler in call.runtime.at_once,
        )
        try:
            return await self._run(call, job, ctx)
        except ResourceNotFound as error:
            if error.data is None:
                raise ResourceNotFound(uri) from None  # the handler's own not-found
            raise

    async def _complete(self, call: Call) -> bytes:
        ref = _object(call.params, "ref")
        argument = _object(call.params, "argument")
        name = _text(argument, "name")
        value = _text(argument, "value")
        resolved = _strings(_object(_object(call.params, "context"), "arguments"))
        endpoint = call.runtime.endpoint
        if ref.get("type") == "ref/prompt":  # else "ref/resource": check_params saw to it
            prompt = endpoint.find_prompt(_text(ref, "name"), call.revision)
            if prompt is None or name not in prompt.argument_names:
                raise InvalidParams()
            completer = prompt.completions.get(name)
            is_async = name in prompt.async_completions
        else:
            uri = _text(ref, "uri")
            template = next(
                (
                    item
                    for item in endpoint.templates_for(call.revision)
                    if item.template is not None and item.template.text == uri
                ),
                None,
            )
            if template is None or template.template is None:
                raise InvalidParams()
            if name not in template.template.variables:
                raise InvalidParams()
            completer = template.completions.get(name)
            is_async = name in template.async_completions

        def finish(returned: object) -> bytes:
            completion: Completion = checked(returned, Completion, "completion handler")
            body: dict[str, object] = dict(completion.to_json())
            return self._complete_message(call, body)

        if completer is None:
            return finish(Completion.EMPTY)
        ctx = self._context(call, None)
        job = value_job(completer, (ctx, value, resolved), is_async, finish)
        return await self._run(call, job, ctx, intercept=False)
