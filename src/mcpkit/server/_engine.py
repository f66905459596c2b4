"""The request pipeline in precedence order.

``Engine.handle_http`` takes one HTTP request from a transport through groups 1-9 and 11's
admission (HTTP limits, routing, Host, Origin and CORS, method and media types, strict JSON,
the envelope, the routing headers, the revision and ``_meta``), hands the admitted request to
``Operations`` (groups 10-17) and writes exactly one response: a JSON body, an SSE stream when
the handler sent notifications, or an empty 202 for a notification.  The checks themselves are
pure functions of ``mcpkit.protocol``; this module only orders them and moves bytes.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from mcpkit.errors import (
    InternalError,
    InvalidRequest,
    Overloaded,
    ProtocolError,
    UnsupportedProtocolVersion,
)
from mcpkit.json import JsonObject, decode
from mcpkit.limits import Limits
from mcpkit.model import CancellationToken, Endpoint, EndpointRegistry, Revision
from mcpkit.protocol import (
    META_KEY,
    PROTOCOL_VERSION_KEY,
    Envelope,
    HeaderFields,
    MessageKind,
    RequestMeta,
    accepts,
    check_method_headers,
    error_message,
    is_modern_version,
    media_type_ok,
    negotiate,
    parse_envelope,
    profile,
    read_meta,
    readable_id,
    select_legacy,
    select_modern,
    supported,
    wire_error,
)
from mcpkit.server._http import HttpExchange, HttpRequest
from mcpkit.server._operations import (
    LEGACY_LOG_LEVEL,
    Call,
    Operations,
    Runtime,
    check_params,
)
from mcpkit.server._policy import (
    AdmissionController,
    AdmissionRequest,
    Admitted,
    CorsPolicy,
    Rejected,
)
from mcpkit.server._stream import Responder, respond

__all__ = ["Engine", "Refused", "Selection"]

log = logging.getLogger("mcpkit.server")

_NO_PARAMS: Final = JsonObject()
_EVERYONE: Final = Admitted()  # without an admission controller: anonymous, no partition
_LOOPBACK_HOSTS: Final = frozenset({"localhost", "127.0.0.1", "[::1]"})
# Host values whose answer is remembered (both accepted and refused ones), at most.
_MAX_REMEMBERED_HOSTS: Final = 256
_ALLOW: Final = ((b"allow", b"POST, OPTIONS"),)
_PREFLIGHT_HEADERS: Final = (
    "content-type, accept, authorization, mcp-protocol-version, mcp-method, mcp-name"
)


class _Answer(Exception):
    """Stop the pipeline with a response of its own: a status, headers and optionally an
    id-less JSON-RPC error body."""

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


_HOST: Final = re.compile(
    r"(?P<name>\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)(?::(?P<port>[0-9]{1,5}))?",
    re.ASCII,
)


def _host_name(value: str) -> tuple[str, str | None] | None:
    """Split a ``Host`` value into a lower-case name and an optional port; ``None`` if it is
    not a bracketed IP literal or a name of ASCII letters, digits, dots and hyphens (an
    underscore is refused)."""
    match = _HOST.fullmatch(value.strip(" \t").lower())
    if match is None:
        return None
    return match["name"], match["port"]


class Engine:
    """Pipeline state shared by every request: endpoints, policies and the executor."""

    def __init__(
        self,
        registry: EndpointRegistry,
        runtimes: Mapping[str, Runtime],
        operations: Operations,
        *,
        limits: Limits,
        allowed_hosts: frozenset[str],
        port: int | None,
        cors: CorsPolicy | None,
        admission: AdmissionController | None,
    ) -> None:
        self.registry = registry
        self._runtimes = runtimes
        # Each endpoint's runtime under its exact path, so routing is one dict lookup.
        self._routes = {endpoint.path: runtimes[endpoint.path] for endpoint in registry}
        self.operations = operations
        self._limits = limits
        self._allowed_hosts = allowed_hosts
        self._hosts: dict[tuple[str, int | None], int] = {}
        self.port = port
        self._cors = cors
        self._admission = admission
        self._stopping = False

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
        self._stopping = True
        return await self.operations.executor.drain(budget, hurry=hurry)

    async def startup(self) -> None:
        """Everything was built with the server; only reopen the executor if an earlier
        lifespan shut it down or drained it."""
        self._stopping = False
        self.operations.executor.start()

    async def shutdown(self) -> None:
        self.operations.executor.shutdown()

    def runtime(self, endpoint: Endpoint) -> Runtime:
        return self._runtimes[endpoint.path]

    # --- HTTP -------------------------------------------------------------------------------

    async def handle_http(
        self, request: HttpRequest, exchange: HttpExchange, disconnected: asyncio.Event
    ) -> None:
        # One coroutine for the whole request: a refusal of groups 1-4 has no revision and no
        # id yet, so the handlers below answer it exactly as a separate step would have.
        extra: list[tuple[bytes, bytes]] = []
        fields = HeaderFields(request.headers)
        revision: Revision | None = None
        request_id: str | int | None = None
        try:
            runtime = self._http_prefix(request, fields, extra)
            value = decode(request.body, limits=self._limits)
            try:
                envelope = parse_envelope(value)
            except InvalidRequest:
                request_id = readable_id(value)
                raise
            request_id = envelope.id
            kind = envelope.kind
            if kind is MessageKind.RESPONSE:
                await respond(exchange, 202, None, extra)
                return
            selection = self.select(runtime, envelope, fields)
            revision = selection.revision
            if kind is MessageKind.REQUEST:
                if self._stopping:
                    raise Overloaded()
                check_params(revision, envelope.method or "", envelope.params or _NO_PARAMS)
            # Without a controller everyone is admitted: no coroutine to build and await.
            identity = (
                _EVERYONE
                if self._admission is None
                else await self._admit(runtime, selection, request)
            )
            if isinstance(identity, Rejected):
                body = None
                if identity.error is not None and kind is MessageKind.REQUEST:
                    body = error_message(envelope.id, identity.error)
                rejected = [(n.encode("latin-1"), v.encode("latin-1")) for n, v in identity.headers]
                await respond(exchange, identity.status, body, [*extra, *rejected])
                return
            if kind is MessageKind.NOTIFICATION:
                await respond(exchange, 202, None, extra)
                return
            responder = Responder(
                exchange, extra, budget=self._limits.max_response_bytes, disconnected=disconnected
            )
            call = self._call(runtime, selection, request, identity, responder.notify, disconnected)
            try:
                message = await responder.run(self.operations.dispatch(call))
            except Exception as error:
                if disconnected.is_set():
                    return  # the client is gone: nothing more is written for it
                if not isinstance(error, ProtocolError):
                    log.error("mcpkit: request failed with %s", type(error).__name__)
                    error = InternalError()
                status, written = wire_error(error, revision)
                await responder.finish(status, error_message(request_id, written))
                return
            await responder.finish(200, message)
        except Refused as refused:
            status, written = wire_error(refused.error, refused.revision)
            await respond(exchange, status, error_message(request_id, written), extra)
        except ProtocolError as error:
            status, written = wire_error(error, revision)
            await respond(exchange, status, error_message(request_id, written), extra)
        except _Answer as answer:
            await respond(exchange, answer.status, answer.message, [*extra, *answer.extra])

    def _http_prefix(
        self, request: HttpRequest, fields: HeaderFields, extra: list[tuple[bytes, bytes]]
    ) -> Runtime:
        """Groups 1-4: size, route, Host, Origin/CORS, method, media types."""
        if request.body_too_large:
            raise _Answer(413, message=error_message(None, InvalidRequest()))
        runtime = self._routes.get(request.raw_path)
        if runtime is None:
            raise _Answer(404)
        host = fields.raw("host")
        port = request.server_port or self.port
        # Exactly one ``Host`` (``None`` when absent or repeated): a value seen before (the
        # usual case) is answered by one dict lookup, a new one is judged and remembered.
        if host is None:
            raise _Answer(400)
        status = self._hosts.get((host, port))
        if status is None:
            status = self._judge_host(host, port)
        if status:
            raise _Answer(status)
        origin = fields.get("origin")
        if origin is not None:
            if self._cors is None or not self._cors.allows(origin, request):
                raise _Answer(403)
            extra.append((b"access-control-allow-origin", origin.encode("latin-1")))
            extra.append((b"vary", b"Origin"))
            extra.append((b"access-control-expose-headers", b"WWW-Authenticate"))
        if request.method != "POST":
            if request.method == "OPTIONS" and origin is not None:
                raise _Answer(204, self._preflight(runtime.endpoint))
            raise _Answer(405, _ALLOW)
        if not media_type_ok(fields.get("content-type")):
            raise _Answer(415)
        if not accepts(fields.get("accept")):
            raise _Answer(406)
        return runtime

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

    def _preflight(self, endpoint: Endpoint) -> list[tuple[bytes, bytes]]:
        names = {
            f"mcp-param-{declaration.suffix.lower()}"
            for revision in endpoint.revisions
            for tool in endpoint.tools_for(revision)
            for declaration in tool.input_schema.headers
        }
        allowed = ", ".join([_PREFLIGHT_HEADERS, *sorted(names)])
        return [
            (b"access-control-allow-methods", b"POST"),
            (b"access-control-allow-headers", allowed.encode("latin-1")),
            (b"access-control-max-age", b"600"),
        ]

    # --- transport-neutral steps ------------------------------------------------------------

    def select(
        self,
        runtime: Runtime,
        envelope: Envelope,
        headers: HeaderFields | None,
        *,
        legacy_default: Revision | None = None,
    ) -> Selection:
        """Groups 7-9: routing headers (HTTP, modern), the revision and ``_meta``; ``headers``
        is ``None`` off HTTP (stdio)."""
        served = runtime.endpoint.revisions
        method = envelope.method or ""
        params = envelope.params
        http = headers is not None
        header_version = None if headers is None else headers.get("mcp-protocol-version")
        # The ``_meta`` version, if it is a string, is enough to choose the path; the full
        # ``_meta`` check comes once the revision is known.
        meta_value = None if params is None else params.get(META_KEY)
        peeked = (
            meta_value.get(PROTOCOL_VERSION_KEY) if isinstance(meta_value, JsonObject) else None
        )
        modern = is_modern_version(header_version, peeked if isinstance(peeked, str) else None)
        if not modern and not _serves_legacy(served) and method == "initialize":
            # A legacy client at a modern-only endpoint: name the versions it could use.
            requested = None if params is None else params.get("protocolVersion")
            raise UnsupportedProtocolVersion(supported(served), requested)
        if modern or not _serves_legacy(served):
            if envelope.kind is MessageKind.NOTIFICATION and http:
                if header_version is not None and header_version not in supported(served):
                    raise _Answer(400)
                return Selection(envelope, _newest(served), read_meta(params))
            meta = read_meta(params)
            if headers is not None:
                check_method_headers(method, params, headers, limits=self._limits)
                revision = select_modern(header_version, meta, served)
            else:
                revision = select_modern(meta.protocol_version, meta, served)
            return Selection(envelope, revision, meta)
        revision = self._legacy_revision(envelope, header_version, served, legacy_default)
        try:
            meta = read_meta(params)
        except ProtocolError as error:
            raise Refused(error, revision) from None
        return Selection(envelope, revision, meta)

    @staticmethod
    def _legacy_revision(
        envelope: Envelope,
        header_version: str | None,
        served: frozenset[Revision],
        legacy_default: Revision | None,
    ) -> Revision:
        params = envelope.params
        if envelope.method == "initialize":
            if header_version is not None:
                select_legacy(header_version, served)
            requested = None if params is None else params.get("protocolVersion")
            return negotiate(requested, served)
        if header_version is None and legacy_default is not None:
            return legacy_default
        if envelope.kind is MessageKind.NOTIFICATION:
            try:
                return select_legacy(header_version, served)
            except UnsupportedProtocolVersion:
                raise _Answer(400) from None
        return select_legacy(header_version, served)

    async def _admit(
        self, runtime: Runtime, selection: Selection, request: HttpRequest | None
    ) -> Admitted | Rejected:
        admission = self._admission
        if admission is None:
            return _EVERYONE
        asked = AdmissionRequest(
            endpoint=runtime.endpoint,
            http_request=request,
            revision=selection.revision,
            method=selection.envelope.method or "",
            notification=selection.envelope.kind is MessageKind.NOTIFICATION,
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

    def _call(
        self,
        runtime: Runtime,
        selection: Selection,
        request: HttpRequest | None,
        admitted: Admitted,
        notify: Callable[[bytes], None],
        disconnected: asyncio.Event,
        legacy_log_level: str = LEGACY_LOG_LEVEL,
    ) -> Call:
        """The admitted request, every field set here (nothing is patched in afterwards)."""
        envelope = selection.envelope
        if envelope.id is None:  # pragma: no cover - requests always have an id
            raise InvalidRequest()
        loop = asyncio.get_running_loop()
        return Call(
            runtime=runtime,
            revision=selection.revision,
            request_id=envelope.id,
            method=envelope.method or "",
            params=envelope.params if envelope.params is not None else _NO_PARAMS,
            meta=selection.meta,
            http=request,
            headers=request.headers if request is not None else (),
            identity=admitted.identity,
            authorization=admitted.authorization,
            notify=notify,
            deadline=loop.time() + self._limits.request_timeout_seconds,
            disconnected=disconnected,
            token=CancellationToken(),
            legacy_log_level=legacy_log_level,
        )


# An endpoint's revisions are one of a few fixed sets: the answer is computed once per set.
@functools.cache
def _serves_legacy(served: frozenset[Revision]) -> bool:
    return any(not profile(revision).stateless for revision in served)


def _newest(served: frozenset[Revision]) -> Revision:
    return max(served, key=lambda revision: revision.wire)
