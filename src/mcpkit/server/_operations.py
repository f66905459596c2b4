"""The MCP methods: one row per method in ``METHODS``, and the operations that answer them
(target lookup and the slot-bound jobs, pipeline groups 11-17), transport-neutral.
``await Operations.dispatch(call)`` answers one admitted request with the encoded JSON-RPC
response, or raises the ``ProtocolError`` to write instead.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType
from typing import Final

from mcpkit.errors import (
    Cancelled,
    DeadlineExceeded,
    InternalError,
    InvalidParams,
    MethodNotFound,
    MissingClientCapability,
    Overloaded,
    ProtocolError,
    ResourceNotFound,
    TaskNotFound,
)
from mcpkit.json import JsonObject, decode, encode
from mcpkit.limits import Limits
from mcpkit.model import (
    UNSET,
    CachePolicy,
    Completion,
    InvocationFeatures,
    Lifespan,
    ProgressReporter,
    RequestContext,
    RequestLogger,
    ResourceListPage,
    Revision,
    TaskSupport,
    ToolRegistration,
    asks_for_input,
    declares_tasks,
    missing_capabilities,
    response_answers,
    server_context,
    server_features,
    tasks_capability,
)
from mcpkit.protocol import (
    SERVER_INFO_KEY,
    ListKind,
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
from mcpkit.schema import EvaluationGate, Outcome
from mcpkit.server._audience import Audience
from mcpkit.server._call import Call, Method, ToolPlan
from mcpkit.server._continuation import (
    Continuation,
    Declaring,
    Inquiry,
    Retry,
    has_conditional,
    prepare,
    settled,
)
from mcpkit.server._exchange import ask
from mcpkit.server._execution import Executor
from mcpkit.server._invoke import (
    TASK_ROUND,
    Job,
    Output,
    Proceeded,
    ToolCall,
    checked,
    prompt_job,
    resource_job,
    result_writer,
    tool_job,
    value_job,
)
from mcpkit.server._lifespans import NOT_STARTED
from mcpkit.server._listen import LISTEN, read_listen
from mcpkit.server._params import (
    CompletionArgs,
    read_completion,
    read_cursor,
    read_level,
    read_nothing,
    read_prompt,
    read_task,
    read_task_update,
    read_tool_call,
    read_uri,
)
from mcpkit.server._policy import Interceptor, ResultSanitizer
from mcpkit.server._protection import RequestStateProtector
from mcpkit.server._sessions import Session
from mcpkit.server._skills import (
    read_directory,
    read_skill_file,
    skills_directory,
    skills_get,
    skills_list,
)
from mcpkit.server._task_delivery import deliverable
from mcpkit.server._task_store import TaskKey, TaskStatus
from mcpkit.server._task_wire import created_message, detailed_message
from mcpkit.server._tasks import Running, TaskCreation, TaskRunner, Work

__all__ = ["METHODS", "Operations", "read_params"]

log = logging.getLogger("mcpkit.server")

_NO_RETRY: Final = Retry()
_NO_CAPABILITIES: Final = JsonObject()


def _nowhere(message: bytes) -> None:
    """A task's work sends nothing: its progress is kept on the task instead."""


_LISTS: Final = {kind.method: kind for kind in ListKind}


class Operations:
    """The operations over the server's shared machinery: what answers an admitted call."""

    def __init__(
        self,
        *,
        limits: Limits,
        executor: Executor,
        gate: EvaluationGate,
        interceptor: Interceptor | None,
        sanitizer: ResultSanitizer | None,
        protector: RequestStateProtector | None = None,
        audience: Audience | None = None,
        tasks: TaskRunner | None = None,
    ) -> None:
        self.protector = protector
        self.tasks = tasks
        """The server's task runner, when it has a task store."""
        self.audience = audience
        """Who hears of which change (2025 session subscriptions among them)."""
        self.limits = limits
        self.executor = executor
        self.gate = gate
        self.interceptor = interceptor
        self.sanitizer = sanitizer
        self.states: Mapping[Lifespan, object] = {}
        """What each endpoint lifespan yielded, while the server runs (``Engine.startup``)."""

    def dispatch(self, call: Call) -> Awaitable[bytes]:
        """Answer ``call``: the operation's coroutine, to await for the encoded response;
        -32601, raised at once, for a method the revision or the endpoint does not offer.
        (A plain function: no coroutine of its own wrapping the operation's.)"""
        method = call.runtime.offered[call.revision].get(call.method)
        if method is None:
            raise MethodNotFound()
        return method.answer(self, call)

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

    async def _rounds(
        self,
        call: Call,
        registration: Declaring,
        job_for: Callable[[Retry, Continuation], tuple[Job, RequestContext]],
    ) -> bytes:
        """A 2025 call of an operation that may need the client's input: run it, and while
        it returns an input-required result, ask the client (``_exchange.ask``) and run it
        again with the answers and its state, each round in a handler slot of its own (none
        is held while the client answers) and with a fresh ``request_timeout_seconds``."""
        limits = self.limits
        conversation = call.conversation
        exchange = conversation.exchange(limits)
        if exchange is None:  # the endpoint checks refuse it: input only where sessions are
            log.error("mcpkit: an operation that asks for input on a stateless 2025 request")
            raise InternalError()
        capabilities = conversation.client_capabilities or _NO_CAPABILITIES
        missing = missing_capabilities(registration.required_kinds, capabilities)
        if missing is not None:
            raise MissingClientCapability(dict(missing))
        retry = _NO_RETRY
        loop = asyncio.get_running_loop()
        asked = 0  # continuations so far: asking the client is one
        while True:
            inquiry = Inquiry()
            continuation = Continuation(
                mode=registration.request_state_mode,
                declared=registration.declared_kinds,
                capabilities=capabilities,
                protector=None,
                binding=None,
                opened=None,
                request_id=call.request_id,
                inquiry=inquiry,
            )
            job, ctx = job_for(retry, continuation)
            message = await self._run(call, job, ctx)
            if inquiry.requests is None:
                return message
            if asked == limits.max_request_state_rounds:
                log.error("mcpkit: an operation asked for input past max_request_state_rounds")
                raise InternalError()
            asked += 1
            responses = None  # a round with state only runs again at once, as a 2026 retry
            if inquiry.requests:
                responses = await self.executor.outside(
                    functools.partial(
                        ask,
                        exchange,
                        inquiry.requests,
                        send=call.notify,
                        revision=call.revision,
                        stopped=call.disconnected,
                        limits=limits,
                    )
                )
            retry = Retry(responses, inquiry.request_state, inquiry.framework_state)
            call = call._replace(deadline=loop.time() + limits.request_timeout_seconds)

    def _context(self, call: Call, name: str | None, retry: Retry = _NO_RETRY) -> RequestContext:
        """The handler's view of the request, from values already validated (no re-checks)."""
        meta = call.meta
        conversation = call.conversation  # a 2025 session remembers what initialize said
        endpoint = call.runtime.endpoint
        lifespan = endpoint.lifespan
        return server_context(
            endpoint=endpoint,
            revision=call.revision,
            method=call.method,
            request_id=call.request_id,
            operation_name=name,
            client_info=meta.client_info or conversation.client_info,
            client_capabilities=(
                meta.client_capabilities or conversation.client_capabilities or _NO_CAPABILITIES
            ),
            meta=meta.meta,
            input_responses=retry.input_responses,
            request_state=retry.request_state,
            framework_state=retry.framework_state,
            trace=meta.trace,
            identity=call.identity,
            http_request=call.http,
            state=None if lifespan is None else self.states.get(lifespan, NOT_STARTED),
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
            level = call.conversation.log_level
        if not progress_allowed or (meta.progress_token is None and level is None):
            return server_features((call.token,))  # the common case: nothing to build
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
        return server_features(tuple(features))

    async def _run(
        self,
        call: Call,
        job: Job,
        ctx: RequestContext,
        *,
        intercept: bool = True,
        executor: Executor | None = None,
    ) -> bytes:
        """Run ``job`` in a handler slot (of ``executor``, the server's by default), wrapped
        by the interceptor when there is one."""
        run, is_async, at_once = job.run, job.is_async, job.at_once
        if executor is None:
            executor = self.executor
        if self.interceptor is not None and intercept:
            run, is_async, at_once = self._intercepted(job, ctx, executor), True, False
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

    def _intercepted(
        self, job: Job, ctx: RequestContext, executor: Executor
    ) -> Callable[[], Awaitable[bytes]]:
        """The job wrapped by the interceptor: ``proceed()`` runs
        validation and the handler once -- a ``def`` handler still in a worker thread, its
        slot held until the thread returns -- and the interceptor returns what ``proceed()``
        gave it or a result of its own, which is written like the handler's."""
        interceptor = self.interceptor
        assert interceptor is not None

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
        conversation = call.conversation
        conversation.negotiated(call.revision)
        # what a conversation that outlives the request keeps (stdio; a session is opened
        # with it once initialize succeeds)
        conversation.remember(call.params.get("clientInfo"), call.params.get("capabilities"))
        result = initialize_result(call.runtime.endpoint, call.revision)
        return result_message(call.request_id, result, limits=self.limits)

    async def _empty(self, call: Call) -> bytes:
        return result_message(call.request_id, empty_result(call.revision), limits=self.limits)

    async def _set_level(self, call: Call) -> bytes:
        call.conversation.set_log_level(call.args)
        await call.conversation.saved()
        return await self._empty(call)

    async def _discover(self, call: Call) -> bytes:
        runtime = call.runtime
        result = discover_result(runtime.endpoint, call.revision, runtime.discover_cache)
        return result_message(call.request_id, result, limits=self.limits)

    # --- catalogs ---------------------------------------------------------------------------

    async def _list(self, call: Call) -> bytes:
        kind = _LISTS[call.method]
        runtime = call.runtime
        catalog = runtime.catalog if runtime.guard is None else runtime.guard.catalog(call.identity)
        page = catalog.page(call.revision, kind, call.args)
        return raw_result_message(call.request_id, page)

    async def _resources_list(self, call: Call) -> bytes:
        endpoint = call.runtime.endpoint
        handler = endpoint.resource_list_for(call.revision)
        if handler is None:
            return await self._list(call)
        cursor = None if call.args is UNSET else call.args
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

    # --- subscriptions (2025 sessions) ------------------------------------------------------

    async def _subscribe(self, call: Call) -> bytes:
        """``resources/subscribe``: the URI must name a resource of the endpoint (-32002
        otherwise); the session is then sent ``notifications/resources/updated`` for it."""
        uri: str = call.args
        session = call.conversation
        assert isinstance(session, Session) and self.audience is not None  # Method.session
        if call.runtime.endpoint.find_resource(uri, call.revision, limits=self.limits) is None:
            raise ResourceNotFound(uri)
        self.audience.subscribe(session, uri)
        await session.saved()
        return await self._empty(call)

    async def _unsubscribe(self, call: Call) -> bytes:
        session = call.conversation
        assert isinstance(session, Session) and self.audience is not None  # Method.session
        self.audience.unsubscribe(session, call.args)
        await session.saved()
        return await self._empty(call)

    # --- operations -------------------------------------------------------------------------

    def _tools_call(self, call: Call) -> Awaitable[bytes]:
        """The checks and the job at once (raising as ``dispatch`` does), then ``_run``'s
        coroutine to await: a plain function, so the hot path has no coroutine of its own."""
        name, arguments = call.args
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
        if plan.asks and not row.stateless:
            return self._rounds(
                call, tool, lambda retry, on: self._tool_job(call, plan, row, retry, on, True)
            )
        if plan.task and row.stateless:
            return self._task_call(call, plan, row)
        continuation, retry = settled(tool, row.stateless, call.params) or self._prepare(call, tool)
        # ``_tool_job`` inline: the hot path saves a call
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

    # --- tasks (2026-07-28, the tasks extension) ----------------------------------------

    def _task_call(self, call: Call, plan: ToolPlan, row: RevisionProfile) -> Awaitable[bytes]:
        """A 2026-07-28 call of a tool that may run as a task: a managed task when the request
        declares the extension, -32021 for a task-only tool when it does not, else the call
        runs inline (with a ``TaskCreation`` for an operation handler that creates its task)."""
        tool = plan.tool
        declared = declares_tasks(call.meta.client_capabilities)
        if declared and tool.managed_task and self._arguments_valid(tool, call.args[1]):
            return self._start_task(call, plan, row)
        # (arguments the input schema refuses are answered at once, as any call's: no task)
        if not declared and tool.task_support is TaskSupport.REQUIRED:
            raise MissingClientCapability(tasks_capability())
        continuation, retry = settled(tool, True, call.params) or self._prepare(call, tool)
        job, ctx = self._tool_job(
            call, plan, row, retry, continuation, not plan.conditional, creating=declared
        )
        return self._run(call, job, ctx)

    def _arguments_valid(self, tool: ToolRegistration, arguments: JsonObject) -> bool:
        """Whether ``arguments`` pass the tool's input schema: a task is stored only for a
        call that can run (the handler's own round checks them again, as every call's does)."""
        schema = tool.input_schema
        budget = min(self.limits.max_evaluation_operations, schema.limits.max_evaluation_operations)
        with self.gate:
            return schema.evaluate(arguments, max_operations=budget) is Outcome.VALID

    def _creating(
        self,
        call: Call,
        tool: ToolRegistration,
        ctx: RequestContext,
        arguments: JsonObject,
        features: InvocationFeatures,
    ) -> InvocationFeatures:
        """``features`` with a ``TaskCreation`` for this call's caller and tool."""
        runner = self._runner()
        finish = result_writer(
            ToolCall(
                tool, ctx, arguments, features, self.gate, self.sanitizer, TASK_ROUND,
                call.revision, None, self.limits,
            )
        )  # fmt: skip
        creation = TaskCreation(
            runner,
            owner=call.authorization,
            endpoint=call.runtime.endpoint.path,
            tool=tool,
            finish=finish,
        )
        return server_features((*features.features, creation))

    def _runner(self) -> TaskRunner:
        runner = self.tasks
        if runner is None:  # the server refuses to build an endpoint with tasks without one
            log.error("mcpkit: a task without a task store")
            raise InternalError()
        return runner

    async def _start_task(self, call: Call, plan: ToolPlan, row: RevisionProfile) -> bytes:
        """Store a task for this call, start its work and answer with its handle."""
        runner = self._runner()
        arguments = call.args[1]
        origin = encode(
            JsonObject(
                {
                    "arguments": arguments,
                    "clientCapabilities": call.meta.client_capabilities or _NO_CAPABILITIES,
                }
            ),
            limits=self.limits,
        )
        record = await runner.create(
            owner=call.authorization,
            endpoint=call.runtime.endpoint.path,
            tool=plan.tool,
            managed=True,
            origin=origin,
        )
        runner.launch(record, self.task_work(call, plan))
        info = call.runtime.endpoint.implementation if row.server_info_meta else None
        return created_message(call.request_id, record, info, self.limits)

    def task_work(self, call: Call, plan: ToolPlan, rounds: int = 0) -> Work:
        """A managed task's work: the tool's handler run in the task runner's slots, round
        after round while it asks for input (each asked through the task, answered by
        ``tasks/update``), within ``task_timeout_seconds`` in all."""
        runner = self._runner()
        tool = plan.tool
        name, arguments = call.args
        capabilities = call.meta.client_capabilities or _NO_CAPABILITIES
        limits = self.limits
        if call.http is not None and call.http.body:
            # The task may wait long: it keeps the request's headers, not its body (the
            # arguments are already read).
            call = call._replace(http=dataclasses.replace(call.http, body=b""))

        async def work(running: Running) -> bytes:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + limits.task_timeout_seconds
            quiet = call._replace(
                notify=_nowhere,
                deadline=deadline,
                disconnected=running.stopped,
                token=running.token,
            )
            progress = call.meta.progress_token or running.key.task_id
            features = server_features(
                (running.token, ProgressReporter(progress, runner.progress(running)))
            )
            retry = _NO_RETRY
            asked = 0  # rounds that returned an input-required result
            asks = rounds  # rounds that asked the client, over the task's life (the store's)
            while True:
                inquiry = Inquiry()
                continuation = Continuation(
                    mode=tool.request_state_mode,
                    declared=tool.declared_kinds,
                    capabilities=capabilities,
                    protector=None,
                    binding=None,
                    opened=None,
                    request_id=running.key.task_id,
                    inquiry=inquiry,
                )
                ctx = self._context(quiet, name, retry)
                job = tool_job(
                    ToolCall(
                        tool, ctx, arguments, features, self.gate, self.sanitizer, TASK_ROUND,
                        call.revision, None, limits, continuation,
                    )
                )  # fmt: skip
                try:
                    body = await self._run(quiet, job, ctx, executor=runner.executor)
                except Overloaded:
                    if loop.time() < deadline:
                        raise  # the runner is stopping
                    raise DeadlineExceeded() from None  # its time ran out waiting for a slot
                if inquiry.requests is None:
                    return body
                if asked == limits.max_request_state_rounds:
                    log.error("mcpkit: a task asked for input past max_request_state_rounds")
                    raise InternalError()
                asked += 1
                responses = None
                if inquiry.requests:
                    asks += 1
                    prefix = f"{asks}:"  # ids unique over the task's life, never reused
                    keyed = {prefix + key: value for key, value in inquiry.requests.items()}
                    answers = await runner.ask(running, keyed, deadline)
                    if answers:
                        responses = JsonObject(
                            {
                                key[len(prefix) :]: value
                                for key, value in answers.items()
                                if key.startswith(prefix)
                            }
                        )
                retry = Retry(responses, inquiry.request_state, inquiry.framework_state)

        return work

    def _task_key(self, call: Call, task_id: str) -> TaskKey:
        """The task a ``tasks/*`` request names, for its caller; -32021 when the request does
        not declare the extension (checked before any lookup)."""
        if not declares_tasks(call.meta.client_capabilities):
            raise MissingClientCapability(tasks_capability())
        return TaskKey(task_id, call.authorization, call.runtime.endpoint.path)

    async def _tasks_get(self, call: Call) -> bytes:
        key = self._task_key(call, call.args)
        record = await (await self._runner().ready()).get(key)
        if record is None:
            raise TaskNotFound()
        if not deliverable(call.runtime, call.revision, record, self.gate, self.limits):
            raise InternalError()  # the stored task is left as it is: a later poll may do
        row = profile(call.revision)
        info = call.runtime.endpoint.implementation if row.server_info_meta else None
        return detailed_message(call.request_id, record, info, self.limits)

    async def _tasks_update(self, call: Call) -> bytes:
        task_id, given = call.args
        key = self._task_key(call, task_id)
        runner = self._runner()
        record = await (await runner.ready()).get(key)
        if record is None:
            raise TaskNotFound()
        if record.status is TaskStatus.INPUT_REQUIRED and record.input_requests is not None:
            outstanding = decode(record.input_requests, limits=self.limits)
            assert isinstance(outstanding, JsonObject)
            matching = {
                request_id: encode(response, limits=self.limits)
                for request_id, response in given.items()
                if isinstance(request := outstanding.get(request_id), JsonObject)
                and response_answers(request.get("method"), response)
            }
            if matching:
                await runner.answer(key, matching)
        return await self._empty(call)

    async def _tasks_cancel(self, call: Call) -> bytes:
        key = self._task_key(call, call.args)
        runner = self._runner()
        await runner.ready()
        if await runner.cancel(key) is None:
            raise TaskNotFound()
        return await self._empty(call)

    def _tool_job(
        self,
        call: Call,
        plan: ToolPlan,
        row: RevisionProfile,
        retry: Retry,
        continuation: Continuation | None,
        progress: bool,
        creating: bool = False,
    ) -> tuple[Job, RequestContext]:
        """One round's job of a 2025 tools/call that asks the client, and the handler's
        context (``_tools_call`` builds the same inline)."""
        name, arguments = call.args
        ctx = self._context(call, name, retry)
        features = self._features(call, row, progress)
        if creating:  # an operation handler that creates its task itself
            features = self._creating(call, plan.tool, ctx, arguments, features)
        info = call.runtime.endpoint.implementation if row.server_info_meta else None  # _output
        job = tool_job(
            ToolCall(
                plan.tool, ctx, arguments, features, self.gate, self.sanitizer,
                call.request_id, call.revision, info, self.limits, continuation,
            ),
            at_once=plan.at_once,
        )  # fmt: skip
        return job, ctx

    async def _prompts_get(self, call: Call) -> bytes:
        name, arguments = call.args
        prompt = call.runtime.endpoint.find_prompt(name, call.revision)
        if prompt is None:
            raise InvalidParams()
        if not prompt.required_arguments <= arguments.keys():
            raise InvalidParams()
        if not arguments.keys() <= prompt.argument_names:
            raise InvalidParams()
        row = profile(call.revision)

        def job_for(
            retry: Retry, continuation: Continuation | None, progress: bool
        ) -> tuple[Job, RequestContext]:
            ctx = self._context(call, name, retry)
            job = prompt_job(
                prompt,
                ctx,
                arguments,
                self._features(call, row, progress),
                self._output(call, row, continuation),
                at_once=prompt.handler in call.runtime.at_once,
            )
            return job, ctx

        if not row.stateless and asks_for_input(prompt):
            return await self._rounds(call, prompt, lambda retry, on: job_for(retry, on, True))
        continuation, retry = settled(prompt, row.stateless, call.params) or self._prepare(
            call, prompt
        )
        job, ctx = job_for(retry, continuation, not has_conditional(prompt))
        return await self._run(call, job, ctx)

    async def _resources_read(self, call: Call) -> bytes:
        uri: str = call.args
        skill_file = call.runtime.endpoint.find_skill_file(uri, call.revision)
        if skill_file is not None:  # before resources: nothing shadows a skill file
            return read_skill_file(self, call, *skill_file)
        match = call.runtime.endpoint.find_resource(uri, call.revision, limits=self.limits)
        if match is None:
            raise ResourceNotFound(uri)
        resource, variables = match
        row = profile(call.revision)
        cache = (
            call.runtime.endpoint.resource_list_cache
            if resource.template is None
            else call.runtime.endpoint.resource_template_list_cache
        )
        if "inputResponses" in call.params or "requestState" in call.params:
            cache = CachePolicy.PRIVATE_NO_CACHE  # a retry's result is the caller's alone

        def job_for(
            retry: Retry, continuation: Continuation | None, progress: bool
        ) -> tuple[Job, RequestContext]:
            ctx = self._context(call, uri, retry)
            job = resource_job(
                resource,
                None if resource.template is None else variables,
                ctx,
                self._features(call, row, progress),
                cache,
                self._output(call, row, continuation),
                at_once=resource.handler in call.runtime.at_once,
            )
            return job, ctx

        try:
            if not row.stateless and asks_for_input(resource):
                # (2025 results carry no cache hints: nothing to make private)
                return await self._rounds(
                    call, resource, lambda retry, on: job_for(retry, on, True)
                )
            continuation, retry = settled(resource, row.stateless, call.params) or self._prepare(
                call, resource
            )
            job, ctx = job_for(retry, continuation, not has_conditional(resource))
            return await self._run(call, job, ctx)
        except ResourceNotFound as error:
            if error.data is None:
                raise ResourceNotFound(uri) from None  # the handler's own not-found
            raise

    async def _complete(self, call: Call) -> bytes:
        args: CompletionArgs = call.args
        name = args.argument
        endpoint = call.runtime.endpoint
        if args.prompt:
            prompt = endpoint.find_prompt(args.ref, call.revision)
            if prompt is None or name not in prompt.argument_names:
                raise InvalidParams()
            completer = prompt.completions.get(name)
            is_async = name in prompt.async_completions
        else:
            template = next(
                (
                    item
                    for item in endpoint.templates_for(call.revision)
                    if item.template is not None and item.template.text == args.ref
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
        job = value_job(completer, (ctx, args.value, args.resolved), is_async, finish)
        return await self._run(call, job, ctx, intercept=False)


# --- the method table ---------------------------------------------------------------------


async def _streamed(operations: Operations, call: Call) -> bytes:
    """The answer of a method the pipeline serves itself as a stream (``subscriptions/listen``):
    never dispatched here."""
    log.error("mcpkit: a streamed method was dispatched as an operation")
    raise InternalError()


_HANDSHAKE: Final = frozenset(revision for revision in Revision if not profile(revision).stateless)
_STATELESS: Final = frozenset(revision for revision in Revision if profile(revision).stateless)
_EVERY: Final = frozenset(Revision)

METHODS: Final = (
    Method("initialize", _HANDSHAKE, read_nothing, Operations._initialize),
    Method("ping", _HANDSHAKE, read_nothing, Operations._empty),
    Method("logging/setLevel", _HANDSHAKE, read_level, Operations._set_level),
    Method("server/discover", _STATELESS, read_nothing, Operations._discover),
    Method("tools/list", _EVERY, read_cursor, Operations._list, "tools"),
    Method("tools/call", _EVERY, read_tool_call, Operations._tools_call, "tools"),
    Method("prompts/list", _EVERY, read_cursor, Operations._list, "prompts"),
    Method("prompts/get", _EVERY, read_prompt, Operations._prompts_get, "prompts"),
    Method("resources/list", _EVERY, read_cursor, Operations._resources_list, "resources"),
    Method("resources/templates/list", _EVERY, read_cursor, Operations._list, "resources"),
    Method("resources/read", _EVERY, read_uri, Operations._resources_read, "resources"),
    Method("completion/complete", _EVERY, read_completion, Operations._complete, "completions"),
    Method("resources/subscribe", _HANDSHAKE, read_uri, Operations._subscribe, "resources", True),
    Method(
        "resources/unsubscribe", _HANDSHAKE, read_uri, Operations._unsubscribe, "resources", True
    ),
    Method(LISTEN, _STATELESS, read_listen, _streamed, listen=True),
    Method("tasks/get", _STATELESS, read_task, Operations._tasks_get, tasks=True),
    Method("tasks/update", _STATELESS, read_task_update, Operations._tasks_update, tasks=True),
    Method("tasks/cancel", _STATELESS, read_task, Operations._tasks_cancel, tasks=True),
    Method("skills/list", _STATELESS, read_cursor, skills_list, skills=True),
    Method("skills/get", _STATELESS, read_uri, skills_get, skills=True),
    Method("resources/directory/read", _STATELESS, read_directory, skills_directory, skills=True),
)
"""Every request method the server answers, one row each (``Method``): adding a method is a
row here plus its operation above."""

_READERS: Final = MappingProxyType(
    {
        revision: MappingProxyType(
            {method.name: method.read for method in METHODS if revision in method.revisions}
        )
        for revision in Revision
    }
)


def read_params(revision: Revision, method: str, params: JsonObject) -> object:
    """Check ``params`` for ``method`` once, before admission and any lookup, and return what
    its operation works with (``Call.args``).  A method the revision does not have is left
    alone: it is -32601 whatever its params (a removed ``logging/setLevel`` on 2026)."""
    read = _READERS[revision].get(method)
    return None if read is None else read(params)
