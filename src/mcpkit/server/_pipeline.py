"""The request pipeline from the message bytes on, the same for every transport.

``Pipeline.handle`` takes one message through strict JSON, the envelope, the revision and
``_meta`` (groups 5-9), the params (10) and admission (11), hands an admitted request to
``Operations`` (groups 12-17) and gives the outcome to the transport's ``Channel``: a
JSON-RPC message to write, a notification to stream, or a refusal.  The HTTP front runs its own
groups 1-4 (limits, route, Host, Origin, method, media types) first; the stdio connection has
none.  Each transport remembers what it must between messages in its ``Conversation``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Final, Protocol

from mcpkit.errors import (
    InternalError,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    MissingClientCapability,
    Overloaded,
    ProtocolError,
    SessionNotFound,
    SessionRequired,
    SubscriptionDenied,
    UnsupportedProtocolVersion,
)
from mcpkit.json import JsonObject, decode, encode
from mcpkit.limits import Limits
from mcpkit.model import CancellationToken, Revision, declares_tasks, tasks_capability
from mcpkit.protocol import (
    META_KEY,
    PROTOCOL_VERSION_HEADER,
    PROTOCOL_VERSION_KEY,
    Envelope,
    HeaderFields,
    MessageKind,
    RequestMeta,
    check_method_headers,
    error_message,
    is_stateless_version,
    negotiate,
    parse_envelope,
    profile,
    read_meta,
    readable_id,
    select_handshake,
    select_stateless,
    supported,
    wire_error,
)
from mcpkit.server._audience import Audience
from mcpkit.server._broadcast import ChangeKind
from mcpkit.server._call import Call, Runtime
from mcpkit.server._conversation import STATELESS, Conversation
from mcpkit.server._events import EventStore, Journal
from mcpkit.server._http import HttpRequest
from mcpkit.server._listen import (
    LISTEN,
    Lease,
    Listener,
    ListenFilter,
    SubscriptionAuthorizer,
    SubscriptionRequest,
    TaskSnapshot,
)
from mcpkit.server._metrics import Metrics
from mcpkit.server._operations import Operations, read_params
from mcpkit.server._policy import AdmissionController, AdmissionRequest, Admitted, Rejected
from mcpkit.server._rate_limit import denial
from mcpkit.server._sessions import Session, SessionStore
from mcpkit.server._task_delivery import task_snapshot
from mcpkit.server._task_store import TaskKey

__all__ = [
    "Answer",
    "Channel",
    "Pipeline",
    "Refused",
    "Selection",
    "newest",
    "notified",
    "wire_headers",
]

log = logging.getLogger("mcpkit.server")

_NO_PARAMS: Final = JsonObject()
_EVERYONE: Final = Admitted()  # without an admission controller: anonymous, no partition
_CANCELLED: Final = "notifications/cancelled"
_SESSION_ID_HEADER: Final = "mcp-session-id"
_SESSION_ID: Final = _SESSION_ID_HEADER.encode("ascii")


class _Unknown(Conversation):
    """The conversation of a request whose ``Mcp-Session-Id`` names no live session."""

    __slots__ = ()


_UNKNOWN: Final = _Unknown()


class Answer(Exception):
    """Stop the pipeline with a response of the transport's own: a status, headers and
    optionally an id-less JSON-RPC error body (HTTP writes it; stdio writes only a body)."""

    def __init__(
        self,
        status: int,
        extra: Sequence[tuple[bytes, bytes]] = (),
        message: bytes | None = None,
    ) -> None:
        super().__init__(status)
        self.status = status
        self.extra = tuple(extra)
        self.message = message


class Refused(Exception):
    """A refusal found after the revision was chosen: mapped for that revision."""

    def __init__(self, error: ProtocolError, revision: Revision) -> None:
        super().__init__(error.message)
        self.error = error
        self.revision = revision


class Selection:
    """The outcome of groups 6-9 for one message: its envelope, revision and ``_meta``."""

    __slots__ = ("envelope", "meta", "revision")

    def __init__(self, envelope: Envelope, revision: Revision, meta: RequestMeta) -> None:
        self.envelope = envelope
        self.revision = revision
        self.meta = meta


class Channel(Protocol):
    """Where the pipeline's outcome for one message goes: the transport's side.

    The pipeline calls ``opened`` once the envelope is read, then exactly one of ``refuse``,
    ``accepted`` or ``finish`` (after ``run``, for a request it dispatched)."""

    @property
    def disconnected(self) -> asyncio.Event:
        """Set once nothing more is to be written for the request: the client left (HTTP) or
        cancelled it, or the server stopped it (stdio)."""

    def opened(self, envelope: Envelope) -> None:
        """The message is ``envelope`` (a request, a notification or a response)."""

    def notify(self, message: bytes) -> None:
        """A notification for the request, from any thread; see ``Responder.notify``."""

    async def run(self, work: Awaitable[bytes], token: CancellationToken) -> bytes:
        """Await the dispatched request; ``token`` is its handler's cancellation token."""

    async def finish(self, status: int, message: bytes) -> None:
        """Write the request's answer (a result or an error) with HTTP ``status``."""

    async def refuse(
        self, status: int, message: bytes | None, extra: Sequence[tuple[bytes, bytes]] = ()
    ) -> None:
        """Refuse the message before dispatch: HTTP ``status`` and ``extra`` headers, and the
        JSON-RPC error ``message`` when there is one."""

    async def accepted(self) -> None:
        """The message was a notification or a response and needs no answer (HTTP 202)."""

    def header(self, name: bytes, value: bytes) -> None:
        """Add a header to the answer not yet written (``Mcp-Session-Id`` after ``initialize``
        opened a session); a transport without headers ignores it."""

    async def abandon(self) -> None:
        """The client cancelled the request: end it without an answer (HTTP: the stream ends
        with no result event)."""

    def keep(self, journal: Journal) -> None:
        """The request is a 2025 session's (HTTP): its stream is resumable through
        ``journal``, and the client leaving no longer sets ``disconnected``."""

    async def listen(self, listener: Listener) -> None:
        """The request is an admitted ``subscriptions/listen``: write its stream
        (``Listener.run``) until it ends."""


class Pipeline:
    """The transport-neutral groups, over the endpoints' runtimes and the operations."""

    def __init__(
        self,
        operations: Operations,
        *,
        limits: Limits,
        admission: AdmissionController | None,
        sessions: SessionStore | None = None,
        events: EventStore | None = None,
        audience: Audience | None = None,
        authorizer: SubscriptionAuthorizer | None = None,
        debug: bool = False,
    ) -> None:
        self.operations = operations
        self.debug = debug
        """Development mode: a handler's unexpected exception is answered with its type name."""
        self.audience = audience if audience is not None else Audience(limits)
        """Who hears of which change: the sessions and listeners of this node."""
        self._authorizer = authorizer
        self.limits = limits
        self._admission = admission
        self.remembered: (
            Callable[[str, HttpRequest | None, HeaderFields | None], Admitted | None] | None
        ) = None
        """A synchronous admission for requests decided before (the resource server's
        remembered tokens): ``None`` from it, or no such thing, means ``admit`` decides."""
        self.sessions = sessions
        """Where 2025 sessions live; ``None`` when no endpoint keeps them."""
        self.events = events
        """Where the events of their streams are kept for replay (with ``sessions``)."""
        self.stopping = False
        """Set by a graceful stop: every new request is answered ``Overloaded``."""
        self.metrics: Metrics | None = None
        """The server's metrics when it keeps them (``Server(metrics=True)``): the pipeline
        counts rate-limit denials in them; the HTTP front counts the rest."""

    async def handle(
        self,
        runtime: Runtime,
        body: bytes,
        channel: Channel,
        conversation: Conversation,
        headers: HeaderFields | None = None,
        http: HttpRequest | None = None,
    ) -> Revision | None:
        """Take one message through the pipeline; ``headers`` and ``http`` are the HTTP
        request's (``None`` off HTTP).  Returns the revision the message was taken at
        (``None`` when it failed before one was chosen), for the metrics."""
        revision: Revision | None = None
        request_id: str | int | None = None
        try:
            value = decode(body, limits=self.limits)
            try:
                envelope = parse_envelope(value)
            except InvalidRequest:
                request_id = readable_id(value)
                raise
            request_id = envelope.id
            kind = envelope.kind
            channel.opened(envelope)
            if kind is MessageKind.RESPONSE:
                # A client's answer to one of the server's requests (2025 input): for the
                # conversation that asked, which over HTTP is the session it names.
                if headers is not None:
                    if not runtime.sessions or headers.get(_SESSION_ID_HEADER) is None:
                        await channel.accepted()  # no session: nothing was asked
                        return revision
                    answering = await self._answering(runtime, envelope, headers, channel, http)
                    if answering is None:
                        return revision
                    conversation = answering
                assert isinstance(value, JsonObject)  # parse_envelope checked it
                conversation.answered(request_id, value)
                await channel.accepted()
                return revision
            if kind is MessageKind.NOTIFICATION and headers is None:
                # Off HTTP nothing can answer a notification, so nothing refuses one: no
                # revision check and no admission (a client's cancel must not wait on either).
                notified(envelope, conversation)
                await channel.accepted()
                return revision
            sessions = runtime.sessions
            if sessions and headers is not None:
                conversation = await self.find(headers)  # its revision is the default one
            selection = self.select(runtime, envelope, headers, conversation)
            revision = selection.revision
            method = envelope.method or ""
            params = envelope.params or _NO_PARAMS
            args = None
            if kind is MessageKind.REQUEST:
                if self.stopping:
                    raise Overloaded()
                args = read_params(revision, method, params)
            remembered = self.remembered
            if self._admission is None:
                admitted = _EVERYONE  # no coroutine to build and await
            elif remembered is not None and (
                known := remembered(runtime.endpoint.path, http, headers)
            ):
                admitted = known  # a bearer token verified before (the resource server)
            else:
                decision = await self.admit(
                    runtime, revision, method, kind is MessageKind.NOTIFICATION, http
                )
                if isinstance(decision, Rejected):
                    await _refuse(channel, decision, envelope)
                    return revision
                if channel.disconnected.is_set():
                    return revision  # cancelled, or the server stopped, while it was admitted
                admitted = decision
            if runtime.guard is not None and kind is MessageKind.REQUEST:
                refused = runtime.guard.check(revision, method, args, admitted.identity)
                if refused is not None:
                    await _refuse(channel, refused, envelope)
                    return revision
            if runtime.limiting:  # only with rate limiters: otherwise one attribute test
                denied = await runtime.limiting.charge(
                    runtime.endpoint, revision, envelope, args, admitted, http
                )
                if denied is not None:
                    if self.metrics is not None:
                        self.metrics.denied(denied[1])
                    await channel.refuse(*denial(envelope, revision, denied[0]))
                    return revision
            opening = False
            if sessions and headers is not None:
                conversation = await self._bind(conversation, selection, runtime, admitted)
                opening = revision in sessions and method == "initialize"
            if kind is MessageKind.NOTIFICATION:
                notified(envelope, conversation)
                await channel.accepted()
                return revision
            assert request_id is not None  # a request always has one
            if method == LISTEN:
                await self._listen(
                    runtime, revision, request_id, args, admitted, channel, http, selection.meta
                )
                return revision
            token = CancellationToken()
            tracked: Session | None = None
            stop: _Stop | None = None
            if type(conversation) is Session:  # a cancel can stop it: registered to be found
                assert self.events is not None  # built with the sessions
                priming = profile(revision).priming_event
                channel.keep(Journal(self.events, conversation, priming=priming))
                tracked, stop = conversation, _Stop(token, channel.disconnected)
                tracked.begin(request_id, stop, self.limits.max_active_calls_per_session)
            call = Call(
                runtime,
                revision,
                request_id,
                method,
                params,
                args,
                selection.meta,
                http,
                () if http is None else http.headers,
                admitted.identity,
                channel.notify,
                asyncio.get_running_loop().time() + self.limits.request_timeout_seconds,
                channel.disconnected,
                token,
                conversation,
                admitted.authorization,
            )
            try:
                message = await channel.run(self.operations.dispatch(call), token)
            except Exception as error:
                if channel.disconnected.is_set():
                    if stop is not None and stop.used:
                        await channel.abandon()  # the client cancelled it: no answer
                    return revision  # nothing more is written for it
                if not isinstance(error, ProtocolError):
                    log.error("mcpkit: request failed with %s", type(error).__name__)
                    error = InternalError()
                status, written = wire_error(error, revision, debug=self.debug)
                await channel.finish(status, error_message(request_id, written))
                return revision
            finally:
                if tracked is not None:
                    tracked.end_call(request_id)
            if stop is not None and stop.used:
                await channel.abandon()  # cancelled as it completed: the answer is not sent
                return revision
            if opening:  # the session opens once initialize has succeeded
                opened = await self._open(runtime, selection, admitted)
                channel.header(_SESSION_ID, opened.id.encode("ascii"))
            await channel.finish(200, message)
        except Refused as refused:
            status, written = wire_error(refused.error, refused.revision)
            await channel.refuse(status, error_message(request_id, written))
            return refused.revision
        except ProtocolError as error:
            status, written = wire_error(error, revision)
            await channel.refuse(status, error_message(request_id, written))
        except Answer as answer:
            await channel.refuse(answer.status, answer.message, answer.extra)
        return revision

    def select(
        self,
        runtime: Runtime,
        envelope: Envelope,
        headers: HeaderFields | None,
        conversation: Conversation,
    ) -> Selection:
        """Groups 7-9: routing headers (HTTP, stateless revisions), the revision and
        ``_meta``; ``headers`` is ``None`` off HTTP."""
        served = runtime.endpoint.revisions
        params = envelope.params
        method = envelope.method or ""
        header_version = None if headers is None else headers.get(PROTOCOL_VERSION_HEADER)
        # The ``_meta`` version, if it is a string, is enough to choose the path; the full
        # ``_meta`` check comes once the revision is known.
        meta_value = None if params is None else params.get(META_KEY)
        peeked = (
            meta_value.get(PROTOCOL_VERSION_KEY) if isinstance(meta_value, JsonObject) else None
        )
        stateless = is_stateless_version(
            header_version, peeked if isinstance(peeked, str) else None
        )
        if not stateless and not _has_handshake(served) and method == "initialize":
            # A handshake client at a stateless-only endpoint: name the versions it could use.
            requested = None if params is None else params.get("protocolVersion")
            raise UnsupportedProtocolVersion(supported(served), requested)
        if stateless or not _has_handshake(served):
            if envelope.kind is MessageKind.NOTIFICATION:
                if header_version is not None and header_version not in supported(served):
                    raise Answer(400)
                return Selection(envelope, newest(served), read_meta(params))
            meta = read_meta(params)
            if headers is not None:
                check_method_headers(method, params, headers, limits=self.limits)
                revision = select_stateless(header_version, meta, served)
            else:
                revision = select_stateless(meta.protocol_version, meta, served)
            return Selection(envelope, revision, meta)
        revision = _handshake_revision(envelope, header_version, served, conversation.revision)
        try:
            meta = read_meta(params)
        except ProtocolError as error:
            raise Refused(error, revision) from None
        return Selection(envelope, revision, meta)

    # --- 2025 sessions (HTTP) ------------------------------------------------------------

    async def find(self, headers: HeaderFields) -> Conversation:
        """The session the request names: ``STATELESS`` when it names none, ``_UNKNOWN`` when
        no live session has its id.  Nothing is decided on it before admission."""
        session_id = headers.get(_SESSION_ID_HEADER)
        if session_id is None:
            return STATELESS
        assert self.sessions is not None  # built with the endpoints that keep sessions
        session = await self.sessions.get(session_id)
        if session is None:
            return _UNKNOWN
        if session.audience is None:  # opened on another node (a shared store)
            session.events = self.events
            self.audience.join(session)
        return session

    async def _answering(
        self,
        runtime: Runtime,
        envelope: Envelope,
        headers: HeaderFields,
        channel: Channel,
        http: HttpRequest | None,
    ) -> Session | None:
        """The session a POSTed response belongs to, after admission as a message without a
        method (``None`` when admission refused it, answered here); an unknown session is 404,
        as for a request."""
        conversation = await self.find(headers)
        revision = conversation.revision
        if type(conversation) is not Session or revision is None:
            raise SessionNotFound()
        decision = await self.admit(runtime, revision, "", True, http)
        if isinstance(decision, Rejected):
            await _refuse(channel, decision, envelope)
            return None
        return await self.bound(conversation, runtime, revision, decision)

    async def _bind(
        self,
        conversation: Conversation,
        selection: Selection,
        runtime: Runtime,
        admitted: Admitted,
    ) -> Conversation:
        """After admission: the session a session-revision message belongs to (``bound``);
        ``initialize`` opens its own (``_open``), other revisions have none."""
        revision = selection.revision
        if revision not in runtime.sessions or selection.envelope.method == "initialize":
            return STATELESS
        return await self.bound(conversation, runtime, revision, admitted)

    async def bound(
        self,
        conversation: Conversation,
        runtime: Runtime,
        revision: Revision,
        admitted: Admitted,
    ) -> Session:
        """The admitted client's session at this endpoint and revision, kept alive.  Missing
        is 400; never issued, ended, expired, another owner's, another endpoint's or another
        revision's is the same 404."""
        if conversation is STATELESS:
            raise SessionRequired()
        if (
            type(conversation) is not Session
            or conversation.owner != admitted.authorization
            or conversation.path != runtime.endpoint.path
            or conversation.revision is not revision
        ):
            raise SessionNotFound()
        assert self.sessions is not None
        await self.sessions.touch(conversation)
        return conversation

    async def _open(self, runtime: Runtime, selection: Selection, admitted: Admitted) -> Session:
        """``initialize`` on a session revision: a new session for the admitted owner, with the
        client's metadata (at most ``max_session_metadata_bytes`` of it, encoded)."""
        params = selection.envelope.params or _NO_PARAMS
        info = params.get("clientInfo")
        capabilities = params.get("capabilities")
        remembered = JsonObject({"clientInfo": info, "capabilities": capabilities})
        if len(encode(remembered, limits=self.limits)) > self.limits.max_session_metadata_bytes:
            raise InvalidParams()
        assert self.sessions is not None
        session = await self.sessions.create(
            admitted.authorization,
            runtime.endpoint.path,
            selection.revision,
            info if isinstance(info, JsonObject) else None,
            capabilities if isinstance(capabilities, JsonObject) else None,
        )
        session.events = self.events
        self.audience.join(session)
        return session

    # --- subscriptions/listen ---------------------------------------------------------------

    async def _listen(
        self,
        runtime: Runtime,
        revision: Revision,
        request_id: str | int,
        asked: object,
        admitted: Admitted,
        channel: Channel,
        http: HttpRequest | None,
        meta: RequestMeta,
    ) -> None:
        """An admitted ``subscriptions/listen``: honour what the endpoint can deliver, take a
        place in the audience (``ListenQuota`` past a bound), ask the subscription authorizer
        (``SubscriptionDenied`` unless it grants a lease), then hand the stream to the
        transport.  No handler slot is taken: the stream only waits and writes."""
        if LISTEN not in runtime.offered[revision]:
            raise MethodNotFound()
        assert isinstance(asked, ListenFilter)  # the method's reader made it
        if len(asked.uris) > self.limits.max_listen_uris:
            raise InvalidParams()
        if len(asked.task_ids) > self.limits.max_listen_task_ids:
            raise InvalidParams()
        endpoint = runtime.endpoint
        honoured = _honoured(endpoint.capabilities(revision), asked)
        snapshot = None
        if asked.task_ids:
            # Task ids only with the extension, and only the caller's own tasks are followed.
            if not declares_tasks(meta.client_capabilities):
                raise MissingClientCapability(tasks_capability())
            honoured, snapshot = await self._tasks_followed(
                runtime, revision, admitted.authorization, honoured, asked.task_ids
            )
        request = SubscriptionRequest(
            endpoint=endpoint,
            identity=admitted.identity,
            authorization=admitted.authorization,
            notifications=honoured,
            http_request=http,
        )
        renewal = dataclasses.replace(request, renewal=True)
        listener = Listener(
            request_id=request_id,
            path=endpoint.path,
            revision=revision,
            owner=admitted.authorization,
            honoured=request.notifications,
            limits=self.limits,
            renew=functools.partial(self._authorize, renewal),
        )
        listener.task_snapshot = snapshot
        audience = self.audience
        audience.open(listener)
        try:
            seconds = await self._authorize(request)
            if seconds is None:
                raise SubscriptionDenied()
            listener.lease = seconds  # a client gone meanwhile: the stream ends at its start
            await channel.listen(listener)
        finally:
            audience.close(listener)

    async def _tasks_followed(
        self,
        runtime: Runtime,
        revision: Revision,
        owner: str | None,
        honoured: ListenFilter,
        asked: tuple[str, ...],
    ) -> tuple[ListenFilter, TaskSnapshot | None]:
        """The asked task ids the listen follows (the caller's tasks that exist now; none at
        an endpoint without tasks), and how to tell their changes."""
        if not runtime.endpoint.tasks:
            return honoured, None
        runner = self.operations.tasks
        assert runner is not None  # the engine refuses an endpoint with tasks without one
        store = await runner.ready()
        path = runtime.endpoint.path
        found = [
            task_id
            for task_id in asked
            if await store.get(TaskKey(task_id, owner, path)) is not None
        ]
        snapshot = task_snapshot(store, runtime, revision, owner, self.operations.gate, self.limits)
        return dataclasses.replace(honoured, task_ids=tuple(found)), snapshot

    async def _authorize(self, request: SubscriptionRequest) -> float | None:
        """The subscription authorizer's grant in seconds, or ``None``: it denied, failed,
        returned anything but a ``Lease`` or took over ``subscription_check_timeout_seconds``
        (all a denial, logged without detail when it is the application's fault)."""
        authorizer = self._authorizer
        assert authorizer is not None  # the engine refuses listen endpoints without one
        try:
            decision = authorizer(request)  # a plain def runs on the loop: it must be quick
            if inspect.isawaitable(decision):
                timeout = self.limits.subscription_check_timeout_seconds
                decision = await asyncio.wait_for(decision, timeout)
        except Exception as error:
            log.error("mcpkit: subscription authorizer failed with %s", type(error).__name__)
            return None
        if decision is None:
            return None
        if not isinstance(decision, Lease):
            log.error("mcpkit: subscription authorizer returned %s", type(decision).__name__)
            return None
        return decision.seconds

    async def end(self, session: Session) -> None:
        """End ``session`` (``DELETE``)."""
        assert self.sessions is not None
        await self.sessions.end(session)

    async def admit(
        self,
        runtime: Runtime,
        revision: Revision,
        method: str,
        notification: bool,
        request: HttpRequest | None,
    ) -> Admitted | Rejected:
        """Group 11: the application's admission controller decides (everyone is admitted
        without one); a controller that fails or returns anything else is -32603."""
        admission = self._admission
        if admission is None:
            return _EVERYONE
        asked = AdmissionRequest(
            endpoint=runtime.endpoint,
            http_request=request,
            revision=revision,
            method=method,
            notification=notification,
        )
        try:
            decision = admission(asked)
            if inspect.isawaitable(decision):
                decision = await decision
        except Exception as error:
            log.error("mcpkit: admission controller raised %s", type(error).__name__)
            raise InternalError() from None
        if not isinstance(decision, (Admitted, Rejected)):
            log.error("mcpkit: admission controller returned %s", type(decision).__name__)
            raise InternalError()
        return decision


class _Stop:
    """What ``notifications/cancelled`` does to a session's call: cancel the handler's token
    and stop waiting for it (through the transport's disconnect signal), noting that the
    client asked, so that the request ends without an answer rather than as a client gone."""

    __slots__ = ("disconnected", "token", "used")

    def __init__(self, token: CancellationToken, disconnected: asyncio.Event) -> None:
        self.token = token
        self.disconnected = disconnected
        self.used = False

    def __call__(self) -> None:
        self.used = True
        self.token.cancel()
        self.disconnected.set()


async def _refuse(channel: Channel, rejected: Rejected, envelope: Envelope) -> None:
    """Write the admission controller's refusal: its status and headers, and its error as the
    answer of a request (a notification gets none)."""
    message = None
    if rejected.error is not None and envelope.kind is MessageKind.REQUEST:
        message = error_message(envelope.id, rejected.error)
    await channel.refuse(rejected.status, message, wire_headers(rejected))


def wire_headers(rejected: Rejected) -> list[tuple[bytes, bytes]]:
    """The admission controller's response headers, as written (checked when it built them)."""
    return [(name.encode("latin-1"), text.encode("latin-1")) for name, text in rejected.headers]


def _handshake_revision(
    envelope: Envelope,
    header_version: str | None,
    served: frozenset[Revision],
    negotiated: Revision | None,
) -> Revision:
    """A handshake-era message's revision: ``initialize`` negotiates it; later messages name
    it in ``MCP-Protocol-Version`` or count on what the conversation negotiated."""
    params = envelope.params
    if envelope.method == "initialize":
        if header_version is not None:
            select_handshake(header_version, served)
        requested = None if params is None else params.get("protocolVersion")
        return negotiate(requested, served)
    if header_version is None and negotiated is not None:
        return negotiated
    if envelope.kind is MessageKind.NOTIFICATION:
        try:
            return select_handshake(header_version, served)
        except UnsupportedProtocolVersion:
            raise Answer(400) from None
    return select_handshake(header_version, served)


# An endpoint's revisions are one of a few fixed sets: the answer is computed once per set.
@functools.cache
def _has_handshake(served: frozenset[Revision]) -> bool:
    return any(not profile(revision).stateless for revision in served)


def notified(envelope: Envelope, conversation: Conversation) -> None:
    """A notification the server acts on: a cancel stops the conversation's request."""
    if envelope.method == _CANCELLED and envelope.params is not None:
        conversation.cancel(envelope.params.get("requestId"))


def _honoured(capabilities: JsonObject, asked: ListenFilter) -> ListenFilter:
    """The part of a listen's filter the endpoint delivers on its revision: list changes of
    the kinds it has, and resource updates when it has resources."""
    has = {
        ChangeKind.TOOLS: "tools" in capabilities,
        ChangeKind.PROMPTS: "prompts" in capabilities,
        ChangeKind.RESOURCES: "resources" in capabilities,
    }
    kinds = frozenset(kind for kind in asked.kinds if has[kind])
    return ListenFilter(kinds, asked.uris if has[ChangeKind.RESOURCES] else ())


def newest(served: frozenset[Revision]) -> Revision:
    """The newest of ``served``: the revision a message that names none counts on."""
    return max(served, key=lambda revision: revision.wire)
