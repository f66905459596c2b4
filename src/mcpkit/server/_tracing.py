"""OpenTelemetry traces, following the MCP semantic conventions, opt-in.

``Server(tracing=True)`` (the global tracer provider, so ``OTEL_*`` configuration applies) or
``Server(tracing=provider)``: this module, the only one of mcpkit that imports
``opentelemetry`` (the ``otel`` extra), is imported only then.  With tracing off the request
path pays one attribute test, as with metrics off.

Each HTTP message that reaches the pipeline gets one span of kind ``SERVER``, over the region
the metrics time (``Engine._observed``): from the end of the HTTP checks to the answer.  Its
parent is the caller's context when the request carries one (W3C ``traceparent``, through the
configured propagators), and it is the current span while the message is handled, so spans
the application opens in a handler are its children.  The span is named
``"{mcp.method.name} {gen_ai.tool.name}"`` for ``tools/call`` (``tools/call get_weather``) and
``"{mcp.method.name}"`` otherwise, once the answer is known (until then: ``mcp``), with:

* ``mcp.method.name``: the metrics' ``method`` label: a method the server knows, ``response``
  for a client's answer, ``other`` for an unknown method or a body that was no message;
* ``mcp.protocol.version``: the revision the message was taken at, when one was chosen;
* ``mcp.session.id``: not the id, a pseudonym: the first 16 hex digits of its HMAC-SHA-256
  under a random key drawn when this module is imported, so spans of one session correlate
  within the process but cannot be joined to the id, nor across processes;
* ``gen_ai.tool.name`` and ``gen_ai.operation.name`` (``execute_tool``), for ``tools/call``
  only: the tool's name when the endpoint has that tool on the revision, else ``unknown``
  (a name only the client chose is never written);
* ``network.protocol.name``: ``http``;
* ``error.type``: the metrics' outcome when it is not ``ok`` (``error``, ``unauthorized``,
  ``rate_limited``, ``overloaded``, ``timeout``, ``cancelled``), and the span's status is then
  ``ERROR``, with no description.

Nothing else: no request id (``jsonrpc.request.id``), task id, token, argument, result, URI,
address (``client.address``) or header value, and no exception event, whose message may hold
what the client sent.  ``network.transport`` is left out too, since an application's ASGI
host may serve over a socket this module cannot see.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from contextvars import Token
from typing import Any, Final

from opentelemetry import context, propagate, trace
from opentelemetry.context import Context
from opentelemetry.propagators.textmap import Getter
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from mcpkit._grammar import OWS_CHARS
from mcpkit._version import __version__
from mcpkit.model import Revision
from mcpkit.protocol import HeaderFields
from mcpkit.server._call import Runtime
from mcpkit.server._metrics import OUTCOMES, MeteredResponder, method_label, outcome_index

__all__ = ["Opened", "Tracing", "pseudonym"]

_KEY: Final = os.urandom(32)
"""The key of the session pseudonyms: one per process, never written anywhere."""
_PENDING: Final = "mcp"
"""The span's name until the message is known."""
_CONSTANT: Final = {"network.protocol.name": "http"}
_ERROR: Final = Status(StatusCode.ERROR)
_SESSION_HEADER: Final = "mcp-session-id"

Opened = tuple[Span, Token[Context]]
"""A started span and the token of the context it was made current in."""


def pseudonym(session_id: str) -> str:
    """What ``mcp.session.id`` records for ``session_id`` (see the module docstring)."""
    digest = hmac.new(_KEY, session_id.encode("latin-1", "replace"), hashlib.sha256)
    return digest.hexdigest()[:16]


class _Fields(Getter[HeaderFields]):
    """Reads propagation fields (``traceparent``, ``tracestate``, ``baggage``) from a request's
    header fields: a field sent more than once is absent."""

    def get(self, carrier: HeaderFields, key: str) -> list[str] | None:
        value = carrier.raw(key.lower())
        return None if value is None else [value.strip(OWS_CHARS)]

    def keys(self, carrier: HeaderFields) -> list[str]:
        return [name for name, _ in carrier.pairs]


_GETTER: Final = _Fields()


class Tracing:
    """Starts and ends the spans of one server's messages (see the module docstring)."""

    __slots__ = ("_tracer",)

    def __init__(self, provider: Any = None) -> None:
        """``provider``: an OpenTelemetry ``TracerProvider``; ``None`` for the global one
        (through OpenTelemetry's proxy, so one set after the server was built is used)."""
        if provider is None:
            self._tracer = trace.get_tracer("mcpkit", __version__)
        else:
            self._tracer = provider.get_tracer("mcpkit", __version__)

    def start(self, fields: HeaderFields) -> Opened:
        """A span for the message of the request with ``fields``, made current."""
        parent = propagate.extract(fields, getter=_GETTER)
        span = self._tracer.start_span(_PENDING, parent, kind=SpanKind.SERVER, attributes=_CONSTANT)
        return span, context.attach(trace.set_span_in_context(span, parent))

    def finish(
        self,
        opened: Opened,
        runtime: Runtime,
        responder: MeteredResponder,
        revision: Revision | None,
        fields: HeaderFields,
    ) -> None:
        """Name and label the span by what ``responder`` wrote, end it and restore the
        context it replaced."""
        span, token = opened
        try:
            if span.is_recording():  # unsampled: nothing to describe
                _describe(span, runtime, responder, revision, fields)
        finally:
            span.end()
            context.detach(token)


def _describe(
    span: Span,
    runtime: Runtime,
    responder: MeteredResponder,
    revision: Revision | None,
    fields: HeaderFields,
) -> None:
    envelope = responder.envelope
    method = method_label(envelope)
    span.set_attribute("mcp.method.name", method)
    if method == "tools/call":
        assert envelope is not None  # a known method is a message's
        tool = "unknown"
        name = None if envelope.params is None else envelope.params.get("name")
        if revision is not None and type(name) is str and name in runtime.tools[revision]:
            tool = name
        span.update_name(f"tools/call {tool}")
        span.set_attribute("gen_ai.tool.name", tool)
        span.set_attribute("gen_ai.operation.name", "execute_tool")
    else:
        span.update_name(method)
    if revision is not None:
        span.set_attribute("mcp.protocol.version", revision.wire)
    session = responder.session
    if session is None and runtime.sessions:
        session = fields.raw(_SESSION_HEADER)
        if session is not None:
            session = session.strip(OWS_CHARS)
    if session:
        span.set_attribute("mcp.session.id", pseudonym(session))
    outcome = outcome_index(responder)
    if outcome:
        span.set_attribute("error.type", OUTCOMES[outcome])
        span.set_status(_ERROR)
