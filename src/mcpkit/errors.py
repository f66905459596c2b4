"""The single mcpkit exception tree.

Every framework error derives from :class:`MCPKitError` and knows how it reaches the wire: a
JSON-RPC code, a default HTTP status and a fixed public message.  The public message never
contains submitted data: wire errors take no message argument at all, and the
few classes that carry developer detail (:class:`ConfigurationError`) keep it out of
``message``, which is the only text the protocol layer may send.

Tree::

    MCPKitError
    ├── ProtocolError                 a failure that becomes a JSON-RPC error response
    │   ├── ParseError                -32700  400  strict JSON or a JSON limit failed
    │   ├── InvalidRequest            -32600  400  not a JSON-RPC request object
    │   ├── MethodNotFound            -32601  404
    │   ├── InvalidParams             -32602  400
    │   │   ├── ArgumentsInvalid      -32602  200  tool arguments failed the input schema or binding
    │   │   └── TaskNotFound          -32602  400  unknown, expired or another caller's task
    │   ├── InternalError             -32603  500
    │   │   ├── OutputError           -32603  200  what the application returned cannot be written
    │   │   ├── Overloaded            -32603  503  no handler slot: queue full, or the deadline
    │   │   │                                      passed while queued
    │   │   ├── DeadlineExceeded      -32603  504  the deadline passed while the handler ran
    │   │   ├── TooManySessions       -32603  503  the server holds its most sessions
    │   │   ├── TaskStoreUnavailable  -32603  503  the task store could not be read or written
    │   │   ├── SessionStoreUnavailable -32603 503 a shared session store could not be reached
    │   │   ├── AuthorizationUnavailable -32603 503  an access token could not be verified
    │   │   │                                      now (JWKS or introspection unreachable)
    │   │   └── ProtectorUnavailable  -32603  503  request state could not be sealed or opened
    │   ├── ResourceNotFound          -32002  200  (2025 revisions; 2026 maps not-found to -32602)
    │   ├── HeaderMismatch            -32020  400
    │   ├── MissingClientCapability   -32021  400
    │   ├── UnsupportedProtocolVersion -32022 400
    │   ├── SessionRequired           -32000  400  a 2025 session request without Mcp-Session-Id
    │   ├── SessionNotFound           -32001  404  unknown, ended or expired, or another owner's
    │   ├── SubscriptionDenied        -31997  403  the subscription authorizer refused a listen
    │   ├── Unauthorized              -31901  401  no valid OAuth access token (resource server)
    │   ├── InsufficientScope         -31902  403  the access token lacks a scope the request needs
    │   ├── TaskInterrupted           -31903  500  (a failed task's error) the server stopped
    │   │                                          while the task ran
    │   └── RateLimited               -31999  429
    │       ├── SessionQuota          -31999  429  the owner has its most sessions, or a
    │       │                                      session its most calls in flight
    │       ├── ListenQuota           -31999  429  the caller or the server has its most
    │       │                                      listen streams open
    │       └── TaskQuota             -31999  429  the caller or the store has its most tasks
    ├── ToolError                     raised by a tool handler: an isError result with its text
    ├── Cancelled                     raised by a cancelled request's CancellationToken; never sent
    ├── ConfigurationError            invalid construction (limits, endpoints, schemas); detailed
    │   └── SchemaError               an authored schema or a Python type is outside Profile 1
    └── InvalidValueError             a value factory refused its input (e.g. an unpaired surrogate)

The HTTP status on a class is its default; where the protocol gives a failure a different status in
a given context (for example -32602 inside an HTTP 200 tool exchange on 2025-06-18), the
protocol layer's one error mapping decides.
"""

from __future__ import annotations

import enum
from typing import ClassVar

__all__ = [
    "ArgumentsFailure",
    "ArgumentsInvalid",
    "AuthorizationUnavailable",
    "Cancelled",
    "ConfigurationError",
    "DeadlineExceeded",
    "HeaderMismatch",
    "InputUnavailable",
    "InsufficientScope",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "InvalidValueError",
    "ListenQuota",
    "MCPKitError",
    "MethodNotFound",
    "MissingClientCapability",
    "OutputError",
    "OutputFailure",
    "Overloaded",
    "ParseError",
    "ParseFailure",
    "ProtectorUnavailable",
    "ProtocolError",
    "RateLimited",
    "ReplayUnavailable",
    "ResourceNotFound",
    "SchemaError",
    "SessionNotFound",
    "SessionQuota",
    "SessionRequired",
    "SessionStoreUnavailable",
    "SubscriptionDenied",
    "TaskInterrupted",
    "TaskNotFound",
    "TaskQuota",
    "TaskStoreUnavailable",
    "TooManySessions",
    "ToolError",
    "Unauthorized",
    "UnsupportedProtocolVersion",
]


class MCPKitError(Exception):
    """Base of every error mcpkit raises on purpose."""

    jsonrpc_code: ClassVar[int] = -32603
    http_status: ClassVar[int] = 500
    message: ClassVar[str] = "Internal error"


class ProtocolError(MCPKitError):
    """An error with a wire form; ``str(error)`` is always the fixed ``message``.

    ``data`` is the JSON-RPC error ``data`` member, or ``None`` for none.  Only the framework
    sets it (``UnsupportedProtocolVersion``, ``MissingClientCapability``), from values it has
    checked; it is a plain ``dict`` so this layer needs no JSON types.
    """

    data: dict[str, object] | None = None

    def __init__(self) -> None:
        super().__init__(self.message)


class ParseFailure(enum.Enum):
    """Why strict JSON parsing failed.  For logs and tests only; never sent to a client."""

    BODY_SIZE = "body_size"
    BOM = "bom"
    UTF8 = "utf8"
    SYNTAX = "syntax"
    DEPTH = "depth"
    NODES = "nodes"
    STRING_UNITS = "string_units"
    TOKEN_UNITS = "token_units"
    SURROGATE = "surrogate"
    DUPLICATE_MEMBER = "duplicate_member"
    NUMBER = "number"


class ArgumentsFailure(enum.Enum):
    """Why tool arguments were refused.  For logs and tests only; never sent to a client."""

    INVALID = "invalid"
    """The arguments do not satisfy the input schema."""
    BUDGET_EXHAUSTED = "budget_exhausted"
    """Evaluating the input schema ran out of operations."""
    TYPE = "type"
    MISSING_PROPERTY = "missing_property"
    UNKNOWN_PROPERTY = "unknown_property"
    MEMBER_NAME = "member_name"
    ENUM = "enum"
    LITERAL = "literal"
    NOT_INTEGER = "not_integer"
    INTEGER_CHARS = "integer_chars"
    """One integer's expanded decimal spelling is over ``max_integer_chars``."""
    BINDING_INTEGER_CHARS = "binding_integer_chars"
    """The binding's integers together are over ``max_binding_integer_chars``."""
    INTEGER_WIDTH = "integer_width"
    FLOAT_RANGE = "float_range"
    NODES = "nodes"
    DEPTH = "depth"
    CONSTRUCTOR = "constructor"
    """The declared type's constructor (e.g. ``__post_init__``) refused the values."""


class OutputFailure(enum.Enum):
    """Why a value could not be written as JSON.  For logs and tests only."""

    SIZE = "size"
    DEPTH = "depth"
    STRING_UNITS = "string_units"
    TOKEN_UNITS = "token_units"
    SURROGATE = "surrogate"
    NUMBER = "number"
    TYPE = "type"
    MEMBER_NAME = "member_name"
    SCHEMA = "schema"
    """The value does not satisfy the derived output schema, or its budget ran out."""


class ParseError(ProtocolError):
    """Strict JSON parsing or one of its limits failed (HTTP 400 on every revision)."""

    jsonrpc_code = -32700
    http_status = 400
    message = "Parse error"

    def __init__(self, reason: ParseFailure = ParseFailure.SYNTAX) -> None:
        super().__init__()
        self.reason = reason


class InvalidRequest(ProtocolError):
    jsonrpc_code = -32600
    http_status = 400
    message = "Invalid Request"


class MethodNotFound(ProtocolError):
    jsonrpc_code = -32601
    http_status = 404
    message = "Method not found"


class InvalidParams(ProtocolError):
    jsonrpc_code = -32602
    http_status = 400
    message = "Invalid params"


class ArgumentsInvalid(InvalidParams):
    """Tool arguments failed the input schema, its evaluation budget, or typed binding.

    One fixed outcome for all three: a completed
    ``isError`` tool result with this text on 2025-11-25 and 2026-07-28, JSON-RPC -32602 on
    2025-06-18.  The protocol layer's error mapping chooses; the handler is never invoked.
    """

    http_status = 200
    message = "Arguments do not match the tool's inputSchema."

    def __init__(
        self, reason: ArgumentsFailure = ArgumentsFailure.INVALID, detail: str | None = None
    ) -> None:
        super().__init__()
        self.reason = reason
        self.detail = detail
        """Where and why the schema refused them, in the schema's own terms (the ``isError``
        result carries it after the fixed message); never a submitted value."""


class InternalError(ProtocolError):
    jsonrpc_code = -32603
    http_status = 500
    message = "Internal error"


class OutputError(InternalError):
    """A value could not be written within the output limits (HTTP 200)."""

    http_status = 200

    def __init__(self, reason: OutputFailure = OutputFailure.SIZE) -> None:
        super().__init__()
        self.reason = reason


class Overloaded(InternalError):
    """No handler slot: the admitted queue was full, or the request's deadline passed while it
    waited, or the server is stopping.  The handler never ran, or was stopped by a shutdown
    (503 / -32603, with ``Retry-After`` over HTTP)."""

    http_status = 503
    message = "Server overloaded; retry later"


class DeadlineExceeded(InternalError):
    """The request's deadline passed while its handler ran; the handler's token is cancelled
    and its late result discarded (504 / -32603)."""

    http_status = 504
    message = "Request timed out"


class TooManySessions(Overloaded):
    """``initialize`` would open a 2025 session past ``Limits.max_sessions`` (or past
    ``max_anonymous_sessions`` for the anonymous owner): 503 / -32603."""

    message = "Too many sessions; retry later"


# Longest resource URI echoed in ``data.uri``; a longer one is left out.
_MAX_ECHOED_URI = 65_535


class InputUnavailable(InternalError):
    """A 2025 call asked the client for input (elicitation, sampling or roots) and did not get
    it: the client answered with an error or with something that is not a result of that
    request, or did not answer within ``client_request_timeout_seconds``.  -32603, in the
    call's stream (a 2025 client is sent its requests there)."""

    message = "The client did not answer the server's request for input; retry the call"


class ProtectorUnavailable(InternalError):
    """Framework-protected request state could not be sealed or opened because the protector
    (randomness, the cryptographic provider, the keyring) is unavailable:
    503 / -32603, with nothing about the cause."""

    http_status = 503


class ResourceNotFound(ProtocolError):
    """No resource has the URI.  ``data.uri`` names it: the spec asks for it (SEP-2164), and it is
    the client's own request target, not a value it submitted for a handler; a URI over 65,535
    characters or a non-string is left out."""

    jsonrpc_code = -32002
    http_status = 200
    message = "Resource not found"

    def __init__(self, uri: object = None) -> None:
        super().__init__()
        if isinstance(uri, str) and len(uri) <= _MAX_ECHOED_URI:
            self.data = {"uri": uri}


class HeaderMismatch(ProtocolError):
    """A routing header (``Mcp-Method``, ``Mcp-Name``, ``MCP-Protocol-Version``, a tool's
    ``Mcp-Param-*``) is missing, repeated, malformed or disagrees with the body: 400 / -32020.
    ``data.header`` names the header, in lower case as the server looks it up (never a value,
    and never a header name the client made up)."""

    jsonrpc_code = -32020
    http_status = 400
    message = "Header mismatch"

    def __init__(self, header: str | None = None) -> None:
        super().__init__()
        if header is not None:
            self.data = {"header": header}


class MissingClientCapability(ProtocolError):
    """The operation needs client capabilities the request did not declare.  ``required`` is
    the ``ClientCapabilities`` object that names them, sent as ``data.requiredCapabilities``."""

    jsonrpc_code = -32021
    http_status = 400
    message = "Missing required client capability"

    def __init__(self, required: dict[str, object] | None = None) -> None:
        super().__init__()
        if required is not None and not isinstance(required, dict):
            raise TypeError("MissingClientCapability: required must be a dict")
        self.data = {"requiredCapabilities": dict(required or {})}


# Longest requested version echoed in ``data.requested``; a longer one is left out.
_MAX_ECHOED_VERSION = 64


class UnsupportedProtocolVersion(ProtocolError):
    """A protocol version the endpoint does not serve.  ``data`` carries ``supported`` (the
    served versions) and ``requested`` (the request's version, the one echo the spec
    requires; only a string of at most 64 characters is echoed)."""

    jsonrpc_code = -32022
    http_status = 400
    message = "Unsupported protocol version"

    def __init__(self, supported: tuple[str, ...] = (), requested: object = None) -> None:
        super().__init__()
        if not isinstance(supported, tuple) or not all(isinstance(v, str) for v in supported):
            raise TypeError("UnsupportedProtocolVersion: supported must be a tuple of str")
        data: dict[str, object] = {"supported": list(supported)}
        if isinstance(requested, str) and len(requested) <= _MAX_ECHOED_VERSION:
            data["requested"] = requested
        self.data = data


class RateLimited(ProtocolError):
    jsonrpc_code = -31999
    http_status = 429
    message = "Rate limit exceeded"


class ToolError(MCPKitError):
    """Raised by a tool handler to fail the call with a message for the model: the call
    answers an ``isError`` result (through the sanitizer) whose one text block is ``text``,
    exactly as written.  It is the author's text, so it is sent: keep what the client must not
    see back out of it.  Raised by a prompt or resource handler, it is a failure like any other
    (-32603)."""

    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise TypeError("ToolError: text must be a str")
        super().__init__(text)
        self.text = text


class Cancelled(MCPKitError):
    """Raised by ``CancellationToken.raise_if_cancelled()`` inside a cancelled handler.

    It carries no reason and no cause: the server already knows why it cancelled, and what the
    client sees is decided by the server, never written from this exception.
    """

    message = "Request cancelled"

    def __init__(self) -> None:
        super().__init__(self.message)


class ConfigurationError(MCPKitError, ValueError):
    """A developer error found while building something (limits, endpoints, schemas).

    ``str(error)`` carries detail for the developer; if one ever escapes at run time it is
    written as the fixed internal error, never with that detail.
    """


class SchemaError(ConfigurationError):
    """An authored schema, or a Python type to derive one from, is outside Tool Schema Profile 1.

    Raised at registration; the message is for the developer and names the keyword, the JSON
    Pointer of the schema location, or the Python type.
    """


class InvalidValueError(MCPKitError, ValueError):
    """A value factory refused its input; the message names the rule, never the value."""

    def __init__(self, rule: str) -> None:
        super().__init__(rule)
        self.rule = rule


class SessionQuota(RateLimited):
    """One owner's share of 2025 sessions is used up (``max_sessions_per_owner``), or one
    session has ``max_active_calls_per_session`` calls in flight: 429 / -31999."""

    message = "Session quota exceeded; end a session or wait for a call to finish"


class ReplayUnavailable(InvalidRequest):
    """A ``GET`` with ``Last-Event-ID`` names no event whose followers the session still keeps
    (never issued, or events after it are gone): 400 / -32600, and no stream.  A replay is
    whole or refused, never a stream with a gap."""

    message = "Last-Event-ID names no event this session can replay from; call again instead"


class SessionRequired(ProtocolError):
    """A request to an endpoint that keeps 2025 sessions came without ``Mcp-Session-Id``
    (only ``initialize`` starts one): 400 / -32000."""

    jsonrpc_code = -32000
    http_status = 400
    message = "Mcp-Session-Id required; send initialize first"


class SessionNotFound(ProtocolError):
    """The ``Mcp-Session-Id`` names no live session of this client at this endpoint: never
    issued, ended, expired, or another owner's (all the same answer): 404 / -32001."""

    jsonrpc_code = -32001
    http_status = 404
    message = "Session not found; initialize a new session"


class ListenQuota(RateLimited):
    """A ``subscriptions/listen`` past ``max_listens_per_owner`` (the caller's at this
    endpoint) or ``max_listens`` (the server's): 429 / -31999.  Streams already open are never
    ended to make room."""

    message = "Too many listen streams open; end one before listening again"


class SubscriptionDenied(ProtocolError):
    """The server's subscription authorizer did not grant a ``subscriptions/listen`` (it
    denied it, failed, or took too long): 403 / -31997.  Nothing of the policy is sent."""

    jsonrpc_code = -31997
    http_status = 403
    message = "Subscription not authorized"


class Unauthorized(ProtocolError):
    """The resource server found no valid access token: none was sent, or the one sent is
    malformed, expired, for another resource or badly signed (401 with a ``WWW-Authenticate``
    challenge that says why, in fixed words, and where to get a token)."""

    jsonrpc_code = -31901
    http_status = 401
    message = (
        "Authentication required: send an OAuth access token for this server as "
        "'Authorization: Bearer <token>'; the WWW-Authenticate header says where to get one"
    )


class InsufficientScope(ProtocolError):
    """The access token is valid but lacks a scope the request needs: 403 with a
    ``WWW-Authenticate`` challenge naming every scope the operation requires."""

    jsonrpc_code = -31902
    http_status = 403
    message = (
        "The access token lacks a scope this request needs; obtain a token with the scopes "
        "the WWW-Authenticate header names and retry"
    )


class AuthorizationUnavailable(InternalError):
    """An access token could not be verified because the authorization server's keys or
    introspection endpoint did not answer in time (or answered nonsense): 503, retry later."""

    http_status = 503
    message = "The access token cannot be verified right now; retry later"


class TaskNotFound(InvalidParams):
    """``tasks/get``, ``tasks/update`` or ``tasks/cancel`` named no task of this caller:
    never created, expired, or another caller's (all the same answer): 400 / -32602."""

    message = "Task not found or expired"


class TaskQuota(RateLimited):
    """A ``tools/call`` would start a task past ``max_tasks_per_owner`` (the caller's) or
    ``max_tasks`` (the store's): 429 / -31999.  Tasks expire ``task_ttl_seconds`` after they
    were created."""

    message = "Too many tasks; wait for some to finish and expire before starting more"


class TaskStoreUnavailable(InternalError):
    """The task store could not be read or written (a full disk, a locked or damaged file):
    503 / -32603, with nothing about the cause.  No task is started that the store does not
    hold, and nothing already stored is lost."""

    http_status = 503
    message = "Task store unavailable; retry later"


class SessionStoreUnavailable(InternalError):
    """A session store shared by several nodes (``RedisSessionStore``) could not be read or
    written: 503 / -32603, with nothing about the cause.  The request is not taken; stateless
    requests, which need no session, are not affected."""

    http_status = 503
    message = "Session store unavailable; retry later"


class TaskInterrupted(ProtocolError):
    """The error of a task whose handler was running (or waiting for input) when the server
    process stopped: the task fails with it on the next start, unless its tool is idempotent
    and is run again."""

    jsonrpc_code = -31903
    http_status = 500
    message = "The task was interrupted by a server restart; call the tool again"
