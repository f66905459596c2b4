"""What a handler is given besides its arguments.

An advanced handler is called as ``handler(ctx, arguments, features)``:

* ``RequestContext`` describes the request: endpoint, revision, method, id, client metadata,
  ``_meta``, input responses, verified request state, trace context and admission identity.
  The server builds it once per request from values it has already validated.
* ``ToolArguments`` holds the converted arguments next to the validated raw JSON object.
* ``InvocationFeatures`` holds request-scoped optional behaviour, looked up by type, so that
  adding a feature never changes a handler signature: a ``CancellationToken`` always, a
  ``ProgressReporter`` only when the client asked for progress.

All of it is request-scoped: keep none of it beyond the request; durable work goes
through MCP Tasks.  Nothing here imports an event loop: the token is a ``threading.Event`` and
the reporter calls a plain function the server supplies, so sync and async handlers share them.
"""

from __future__ import annotations

import enum
import math
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from types import MappingProxyType
from typing import Any, ClassVar, Final, Generic, TypeAlias, TypeVar

from mcpkit.errors import Cancelled, InvalidValueError
from mcpkit.json import JsonObject, JsonValue, from_python, string
from mcpkit.model._checks import (
    OPTIONAL_TEXT,
    Checks,
    instance_of,
    json_object,
    optional,
    unchecked_factory,
    validate,
)
from mcpkit.model._input_responses import ElicitationResponse, RootsResponse, SamplingResponse
from mcpkit.model._outputs import UNSET, Unset
from mcpkit.model._revision import Revision

__all__ = [
    "LOG_LEVELS",
    "CancellationToken",
    "InvocationFeatures",
    "OperationType",
    "ProgressReporter",
    "RequestContext",
    "RequestId",
    "RequestLogger",
    "ToolArguments",
    "server_arguments",
    "server_context",
    "server_features",
]

A = TypeVar("A")
T = TypeVar("T")
V = TypeVar("V")

RequestId: TypeAlias = str | int
"""A JSON-RPC request id, type kept: ``"1"`` and ``1`` are different ids."""

_NO_STRINGS: Final[Mapping[str, str]] = MappingProxyType({})


class OperationType(enum.Enum):
    """What a request asks for, so application code branches without comparing protocol
    strings.  ``OTHER`` covers unrecognised, future and extension methods; the exact
    method string stays on ``RequestContext.method``."""

    INITIALIZE = "initialize"
    DISCOVER = "server/discover"
    PING = "ping"
    TOOLS_LIST = "tools/list"
    TOOLS_CALL = "tools/call"
    PROMPTS_LIST = "prompts/list"
    PROMPTS_GET = "prompts/get"
    RESOURCES_LIST = "resources/list"
    RESOURCE_TEMPLATES_LIST = "resources/templates/list"
    RESOURCES_READ = "resources/read"
    COMPLETION_COMPLETE = "completion/complete"
    LOGGING_SET_LEVEL = "logging/setLevel"
    SUBSCRIPTIONS_LISTEN = "subscriptions/listen"
    OTHER = None

    @property
    def method(self) -> str | None:
        """The JSON-RPC method this type stands for; ``None`` for ``OTHER``."""
        method: str | None = self.value
        return method

    @classmethod
    def for_method(cls, method: object) -> OperationType:
        """The type of an exact method string; ``OTHER`` for anything else (no trimming, no
        case folding, and a non-``str`` is ``OTHER`` too)."""
        if not isinstance(method, str):
            return cls.OTHER
        return _BY_METHOD.get(str.__str__(method), cls.OTHER)


_BY_METHOD: Final[dict[str, OperationType]] = {
    kind.value: kind for kind in OperationType if kind.value is not None
}


class CancellationToken:
    """A cooperative, thread-safe cancellation flag, one per invocation.

    The server cancels it (deadline, disconnect, shutdown, a 2025 session's
    ``notifications/cancelled``); the handler polls ``cancelled`` or calls
    ``raise_if_cancelled()`` at safe points.  Nothing is interrupted: a handler that ignores
    the token keeps its slot until it returns, and its late result is discarded.
    """

    __slots__ = ("_cancelled",)

    def __init__(self) -> None:
        # A plain flag: writing a bool is atomic under the GIL and the token is only polled,
        # never waited on, so an Event's lock and condition would be pure cost per request.
        self._cancelled = False

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        """Mark the invocation cancelled; idempotent, safe from any thread."""
        self._cancelled = True

    def raise_if_cancelled(self) -> None:
        """Raise ``Cancelled`` if the invocation has been cancelled; otherwise do nothing."""
        if self._cancelled:
            raise Cancelled

    def __repr__(self) -> str:
        return f"CancellationToken(cancelled={self.cancelled})"


def _number(value: object, name: str) -> int | Decimal:
    """A finite JSON number; a float becomes the ``Decimal`` of its shortest repr."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        raise InvalidValueError(f"ProgressReporter.report: {name} must be an int, float or Decimal")
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return Decimal(repr(value))
    elif value.is_finite():
        return value
    raise InvalidValueError(f"ProgressReporter.report: {name} must be finite")


def _converted(convert: Callable[[V], T], value: V, method: str) -> T:
    """``convert(value)``, a refusal named after the public ``method`` the handler called."""
    try:
        return convert(value)
    except InvalidValueError as error:
        raise InvalidValueError(f"{method}: {error.rule}") from None


class ProgressReporter:
    """Sends ``notifications/progress`` for one request; present only when the client sent a
    ``progressToken``.

    The server constructs it with the client's token and a ``send`` function that delivers
    the notification's ``params`` object (blocking while the stream is backed up).  The rules
    live here, so every transport gets them: numbers must be finite, ``progress`` must
    increase (an equal value is dropped, a smaller one raises ``InvalidValueError``), and the
    message must be well-formed text.  Reports are serialised, so calls from several threads
    are delivered in increasing order.

    Once the request is cancelled (its client left or stopped reading, its deadline passed,
    the server is stopping) the server's ``send`` raises ``Cancelled``, so a handler that
    reports in a loop stops at its next report even if it never checks its token.
    """

    __slots__ = ("_last", "_lock", "_send", "_token")

    def __init__(self, token: RequestId, send: Callable[[JsonObject], None]) -> None:
        if isinstance(token, bool) or not isinstance(token, (str, int)):
            raise InvalidValueError("ProgressReporter.token: must be a str or an int")
        if not callable(send):
            raise InvalidValueError("ProgressReporter.send: must be callable")
        self._token: RequestId = string(token) if isinstance(token, str) else int(token)
        self._send = send
        self._lock = threading.Lock()
        self._last: int | Decimal | None = None

    def report(
        self,
        progress: float | Decimal,
        total: float | Decimal | None = None,
        message: str | None = None,
    ) -> None:
        """Report ``progress`` (optionally out of ``total``, with a short ``message``)."""
        value = _number(progress, "progress")
        params: dict[str, object] = {"progressToken": self._token, "progress": value}
        if total is not None:
            params["total"] = _number(total, "total")
        if message is not None:
            params["message"] = _converted(string, message, "ProgressReporter.report")
        notification = JsonObject(params)
        with self._lock:
            if self._last is not None and value <= self._last:
                if value == self._last:
                    return
                raise InvalidValueError("ProgressReporter.report: progress must increase")
            self._send(notification)
            self._last = value

    def __repr__(self) -> str:
        return "ProgressReporter()"


LOG_LEVELS: Final = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
"""MCP log levels, least severe first (RFC 5424 order)."""
_LEVEL_RANK: Final = {name: rank for rank, name in enumerate(LOG_LEVELS)}


class RequestLogger:
    """Sends ``notifications/message`` on one request's own stream.

    Present only where the client can receive them: on 2026-07-28 when the request's ``_meta``
    carries ``io.modelcontextprotocol/logLevel`` (then ``minimum`` is that level), and on the
    2025 revisions (stateless, so no ``logging/setLevel`` is remembered: ``minimum`` is the
    server's default).  Messages below ``minimum`` are dropped here; ``data`` is any JSON
    value (``from_python``), ``logger`` an optional name.  Like ``ProgressReporter``, ``send``
    is the server's delivery function (it raises ``Cancelled`` once the request is cancelled)
    and calls are serialised.
    """

    __slots__ = ("_lock", "_minimum", "_send")

    def __init__(self, minimum: str, send: Callable[[JsonObject], None]) -> None:
        if minimum not in _LEVEL_RANK:
            raise InvalidValueError("RequestLogger.minimum: must be an MCP log level")
        if not callable(send):
            raise InvalidValueError("RequestLogger.send: must be callable")
        self._minimum = _LEVEL_RANK[minimum]
        self._send = send
        self._lock = threading.Lock()

    @property
    def minimum(self) -> str:
        return LOG_LEVELS[self._minimum]

    def enabled(self, level: str) -> bool:
        """Whether a message at ``level`` would be sent."""
        rank = _LEVEL_RANK.get(level)
        if rank is None:
            raise InvalidValueError("RequestLogger.log: level must be an MCP log level")
        return rank >= self._minimum

    def log(self, level: str, data: object, *, logger: str | None = None) -> None:
        """Send ``data`` at ``level`` unless the level is below the minimum."""
        if not self.enabled(level):
            return
        params: dict[str, object] = {"level": level}
        if logger is not None:
            params["logger"] = _converted(string, logger, "RequestLogger.log")
        params["data"] = _converted(from_python, data, "RequestLogger.log")
        message = JsonObject(params)
        with self._lock:
            self._send(message)

    def debug(self, data: object, *, logger: str | None = None) -> None:
        self.log("debug", data, logger=logger)

    def info(self, data: object, *, logger: str | None = None) -> None:
        self.log("info", data, logger=logger)

    def warning(self, data: object, *, logger: str | None = None) -> None:
        self.log("warning", data, logger=logger)

    def error(self, data: object, *, logger: str | None = None) -> None:
        self.log("error", data, logger=logger)

    def __repr__(self) -> str:
        return f"RequestLogger(minimum={self.minimum!r})"


@dataclass(frozen=True, slots=True, init=False)
class InvocationFeatures:
    """Request-scoped optional behaviour, looked up by type.

    Exactly one ``CancellationToken`` is always present; a ``ProgressReporter`` only when the
    client asked for progress; later features (task creation) join the same way.  Two features
    of one type would make ``find`` ambiguous, so they are refused.
    """

    features: tuple[object, ...]

    def __init__(self, *features: object) -> None:
        kinds = set(map(type, features))  # built once per request: no Python-level loop
        if len(kinds) != len(features):
            raise InvalidValueError("InvocationFeatures: each feature type may appear only once")
        if CancellationToken not in kinds:
            raise InvalidValueError("InvocationFeatures: a CancellationToken is required")
        object.__setattr__(self, "features", features)

    def find(self, kind: type[T]) -> T | None:
        """The feature that is an instance of ``kind``, or ``None`` when it is absent."""
        for feature in self.features:
            if isinstance(feature, kind):
                return feature
        return None

    def require(self, kind: type[T]) -> T:
        """The feature that is an instance of ``kind``; ``LookupError`` naming the kind when it
        is absent (for example a ``ProgressReporter`` the client did not ask for)."""
        feature = self.find(kind)
        if feature is None:
            raise LookupError(f"no {kind.__qualname__} feature for this invocation")
        return feature

    @property
    def cancellation_token(self) -> CancellationToken:
        """The invocation's token; always present."""
        return self.require(CancellationToken)

    @property
    def progress_reporter(self) -> ProgressReporter | None:
        """The progress reporter, or ``None`` when the client did not ask for progress."""
        return self.find(ProgressReporter)

    @property
    def logger(self) -> RequestLogger | None:
        """The request logger, or ``None`` when the client cannot receive log messages."""
        return self.find(RequestLogger)

    def __repr__(self) -> str:
        return f"InvocationFeatures({', '.join(type(f).__name__ for f in self.features)})"


# Not slotted: on Python 3.11 a frozen, slotted generic dataclass cannot be instantiated as
# ``Class[T](...)`` (typing sets ``__orig_class__`` through the pre-slots ``__setattr__``).
@dataclass(frozen=True, kw_only=True, repr=False)
class ToolArguments(Generic[A]):
    """A tool's arguments twice: ``converted`` is what the tool's argument type bound
    (the ``JsonObject`` itself for raw and authored tools); ``raw`` is the immutable JSON
    object that passed the input schema, for logging, auditing or re-validation."""

    converted: A
    raw: JsonObject

    _CHECKS: ClassVar[Checks] = (("raw", json_object),)

    def __post_init__(self) -> None:
        validate(self)

    def __repr__(self) -> str:
        kind = type(self.converted).__name__
        return f"ToolArguments(converted=<{kind}>, raw=<{len(self.raw)} members>)"


def _request_id(value: object) -> RequestId | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InvalidValueError("must be a str or an int")
    return string(value) if isinstance(value, str) else int(value)


def _strings(value: object) -> Mapping[str, str]:
    if value is _NO_STRINGS:
        return _NO_STRINGS
    if not isinstance(value, Mapping):
        raise InvalidValueError("must be a mapping")
    items = {string(name): string(text) for name, text in value.items()}
    return MappingProxyType(items) if items else _NO_STRINGS


_EMPTY: Final = JsonObject()


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class RequestContext:
    """One request as a handler sees it.  Built by the server; immutable.

    * ``endpoint`` and ``http_request``: the selected endpoint and the originating, immutable
      transport request (``None`` when there is none, e.g. stdio).
    * ``revision``, ``method`` (the exact validated JSON-RPC method), ``operation_type``
      (derived from ``method``, never supplied separately, so the two cannot disagree),
      ``request_id`` (``None`` for none) and ``operation_name`` (the tool or prompt name, or
      the resource URI).
    * ``client_info`` and ``client_capabilities``.  ``client_info`` is what the client
      says about itself: informational, for display and logs, never an identity.
    * ``meta`` (the request's ``_meta``) and, on a 2026-07-28 multi-round retry, the
      raw ``input_responses`` object (read one answer with :meth:`input_response` or the typed
      :meth:`elicitation`, :meth:`sampling` and :meth:`roots`) and the verified state: the
      application-protected ``request_state`` string, or the opened ``framework_state`` JSON
      value (``UNSET`` unless the operation's mode is ``FRAMEWORK_PROTECTED`` and the server
      verified the client's state).
    * ``trace``: the validated MCP trace context and baggage (``traceparent``,
      ``tracestate``, ``baggage``), from ``_meta`` only, never from HTTP headers.
    * ``identity``: what admission accepted; the only identity a handler may trust.
    * ``state``: what the endpoint's ``lifespan`` yielded (a database pool, a client), shared by
      every request; ``None`` for an endpoint without one.
    * ``path_parameters``: always empty, because endpoint paths are exact.

    Two contexts are never equal unless they are the same object: each is one request.  The
    ``repr`` shows the revision and method only, because contexts end up in logs.
    """

    endpoint: object
    revision: Revision
    method: str
    request_id: RequestId | None = None
    operation_name: str | None = None
    client_info: JsonObject | None = None
    client_capabilities: JsonObject = _EMPTY
    meta: JsonObject = _EMPTY
    input_responses: JsonObject | None = None
    request_state: str | None = None
    framework_state: JsonValue | Unset = UNSET
    trace: Mapping[str, str] = field(default_factory=lambda: _NO_STRINGS)
    identity: object | None = None
    http_request: object | None = None
    state: Any = None
    operation_type: OperationType = field(init=False)

    _CHECKS: ClassVar[Checks] = (
        ("revision", instance_of((Revision,), "must be a Revision")),
        ("method", string),
        ("request_id", _request_id),
        ("operation_name", OPTIONAL_TEXT),
        ("client_info", optional(json_object)),
        ("client_capabilities", json_object),
        ("meta", json_object),
        ("input_responses", optional(json_object)),
        ("request_state", OPTIONAL_TEXT),
        ("framework_state", lambda value: value if value is UNSET else from_python(value)),
        ("trace", _strings),
    )

    def __post_init__(self) -> None:
        validate(self)
        object.__setattr__(self, "operation_type", OperationType.for_method(self.method))

    @property
    def path_parameters(self) -> Mapping[str, str]:
        """Always empty: endpoint paths are exact, so there is nothing to extract."""
        return _NO_STRINGS

    def input_response(self, key: str) -> JsonObject | None:
        """The client's raw answer to the input request ``key`` of the previous round, or
        ``None`` when there is none (no responses, no such key, or not an object)."""
        responses = self.input_responses
        answer = None if responses is None else responses.get(key)
        return answer if isinstance(answer, JsonObject) else None

    def elicitation(self, key: str) -> ElicitationResponse | None:
        """The answer to ``key`` as an ``ElicitResult``; ``None`` when it is absent or has
        another shape (never an error: a handler without the answer it needs asks again)."""
        return ElicitationResponse.from_json(self.input_response(key))

    def sampling(self, key: str) -> SamplingResponse | None:
        """The answer to ``key`` as a ``CreateMessageResult``, or ``None`` (as
        :meth:`elicitation`)."""
        return SamplingResponse.from_json(self.input_response(key))

    def roots(self, key: str) -> RootsResponse | None:
        """The answer to ``key`` as a ``ListRootsResult``, or ``None`` (as
        :meth:`elicitation`)."""
        return RootsResponse.from_json(self.input_response(key))

    def __repr__(self) -> str:
        return (
            f"RequestContext(revision={self.revision.wire!r}, method={self.method!r}, "
            f"operation_type={self.operation_type.name})"
        )


def server_context(
    *,
    endpoint: object,
    revision: Revision,
    method: str,
    request_id: RequestId | None,
    operation_name: str | None,
    client_info: JsonObject | None,
    client_capabilities: JsonObject,
    meta: JsonObject,
    input_responses: JsonObject | None,
    request_state: str | None,
    framework_state: object,
    trace: Mapping[str, str],
    identity: object | None,
    http_request: object | None,
    state: object,
) -> RequestContext:
    """A ``RequestContext`` from values the server has already validated (the request's own
    decoded ``_meta``, checked ids and names), without checking them again per request."""
    # Positional, in field order (the factory's signature): no keyword dict to build again.
    return _unchecked_context(
        endpoint,
        revision,
        method,
        request_id,
        operation_name,
        client_info,
        client_capabilities,
        meta,
        input_responses,
        request_state,
        framework_state,
        trace,
        identity,
        http_request,
        state,
        # ``method`` is a validated ``str``: the table lookup is ``for_method`` without its
        # type checks.
        _BY_METHOD.get(method, OperationType.OTHER),
    )


def server_arguments(converted: A, raw: JsonObject) -> ToolArguments[A]:
    """``ToolArguments`` of arguments the server has just validated and bound."""
    return _unchecked_arguments(converted, raw)


_unchecked_context: Final = unchecked_factory(RequestContext)
_unchecked_arguments: Final = unchecked_factory(ToolArguments)
server_features: Final[Callable[[tuple[object, ...]], InvocationFeatures]] = unchecked_factory(
    InvocationFeatures
)
"""``InvocationFeatures`` of a tuple of features the server assembled itself (one of each type,
its ``CancellationToken`` among them), stored without checking them again per request."""
