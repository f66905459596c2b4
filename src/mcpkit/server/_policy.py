"""The application's policy hooks: CORS, admission, interception and result sanitizing.

Each hook is optional and the defaults fail closed: no CORS policy means
every request that carries an ``Origin`` is refused, and admission accepts
everyone until the application says otherwise.  Hooks get exact values; what they log
is the application's business.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, TypeAlias

from mcpkit._grammar import FIELD_TEXT, OWS_CHARS, SURROGATE, TOKEN
from mcpkit.errors import ConfigurationError, ProtocolError
from mcpkit.json import JsonObject
from mcpkit.model import CompleteResult, Endpoint, RequestContext, Revision
from mcpkit.server._http import HttpRequest

__all__ = [
    "AdmissionController",
    "AdmissionRequest",
    "Admitted",
    "CorsPolicy",
    "Interceptor",
    "Rejected",
    "ResultSanitizer",
]

_LOOPBACK_ORIGIN: Final = re.compile(
    r"https?://(?:localhost|127\.0\.0\.1|\[::1\])(?::[0-9]{1,5})?", re.ASCII
)
# Response headers the framework owns; an admission rejection may not set them.
_RESERVED: Final = frozenset(
    {
        "cache-control", "connection", "content-encoding", "content-length", "content-type",
        "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te",
        "trailer", "transfer-encoding", "upgrade", "retry-after", "mcp-session-id",
        "last-event-id",
    }
)  # fmt: skip
_MAX_HEADERS: Final = 100
_MAX_HEADER_BYTES: Final = 65_536


class CorsPolicy:
    """Which browser origins may call the server.

    ``CorsPolicy(allow)`` takes a function of ``(origin, request) -> bool``;
    ``CorsPolicy.loopback()`` allows pages served from this machine (``http(s)://localhost``,
    ``127.0.0.1`` or ``[::1]``, any port) -- the development default browsers and the MCP
    Inspector need.  ``CorsPolicy.origins(...)`` allows an exact list.  A policy that raises
    fails closed.
    """

    __slots__ = ("_allow",)

    def __init__(self, allow: Callable[[str, HttpRequest], bool]) -> None:
        if not callable(allow):
            raise ConfigurationError("CorsPolicy: allow must be callable")
        self._allow = allow

    @classmethod
    def loopback(cls) -> CorsPolicy:
        return cls(lambda origin, _request: _LOOPBACK_ORIGIN.fullmatch(origin) is not None)

    @classmethod
    def origins(cls, *origins: str) -> CorsPolicy:
        allowed = frozenset(origins)
        if not all(isinstance(origin, str) and origin for origin in allowed):
            raise ConfigurationError("CorsPolicy.origins: each origin must be a non-empty str")
        return cls(lambda origin, _request: origin in allowed)

    def allows(self, origin: str, request: HttpRequest) -> bool:
        """Whether ``origin`` may call; any failure of the policy is a refusal."""
        try:
            return self._allow(origin, request) is True
        except Exception:
            return False

    def __repr__(self) -> str:
        return "CorsPolicy()"


@dataclass(frozen=True, slots=True, kw_only=True)
class AdmissionRequest:
    """What an admission controller decides on: the endpoint, the HTTP request (``None`` on
    stdio), the revision, the JSON-RPC method and whether the message is a notification.  A
    ``DELETE`` that ends a 2025 session has no JSON-RPC method: ``method`` is empty there."""

    endpoint: Endpoint
    http_request: HttpRequest | None
    revision: Revision
    method: str
    notification: bool


@dataclass(frozen=True, slots=True)
class Admitted:
    """Accept the request; ``identity`` becomes ``RequestContext.identity``.

    ``authorization`` is the caller's authorization partition: a stable key (1-256 UTF-8
    bytes) that framework-protected request state is bound to, so a state sealed for one
    caller cannot be replayed by another.  ``None`` is the shared
    anonymous partition.  Never derive it from anything the client says about itself.
    """

    identity: object = None
    authorization: str | None = None

    def __post_init__(self) -> None:
        key = self.authorization
        if key is not None and (
            not isinstance(key, str) or not 1 <= len(key.encode("utf-8", "surrogatepass")) <= 256
        ):
            raise ConfigurationError("Admitted: authorization must be 1 to 256 UTF-8 bytes")
        if key is not None and SURROGATE.search(key) is not None:
            raise ConfigurationError("Admitted: authorization must be well-formed text")


def _safe_headers(headers: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    if len(headers) > _MAX_HEADERS:
        raise ConfigurationError("Rejected: at most 100 headers")
    seen: set[str] = set()
    total = 0
    for name, value in headers:
        if not isinstance(name, str) or TOKEN.fullmatch(name) is None:
            raise ConfigurationError("Rejected: header names must be HTTP tokens")
        if (
            not isinstance(value, str)
            or FIELD_TEXT.fullmatch(value) is None
            or value != value.strip(OWS_CHARS)  # RFC 9110 §5.5: no surrounding whitespace
        ):
            raise ConfigurationError("Rejected: header values must be visible ASCII or tab")
        lowered = name.lower()
        if lowered in _RESERVED or lowered.startswith("access-control-"):
            raise ConfigurationError(f"Rejected: the {name} header is reserved")
        if lowered in seen:
            raise ConfigurationError("Rejected: header names must be unique")
        seen.add(lowered)
        total += len(name) + len(value) + 4
    if total > _MAX_HEADER_BYTES:
        raise ConfigurationError("Rejected: at most 65,536 header bytes")
    return tuple(headers)


@dataclass(frozen=True, slots=True)
class Rejected:
    """Refuse the request with ``status`` (400-599), an optional JSON-RPC ``error`` (a fixed
    framework error; ``None`` sends no body) and safe extra ``headers`` such as
    ``WWW-Authenticate``.  Headers are checked here, when the rejection is built."""

    status: int
    error: ProtocolError | None = None
    headers: tuple[tuple[str, str], ...] = field(default=())

    def __post_init__(self) -> None:
        if type(self.status) is not int or not 400 <= self.status <= 599:
            raise ConfigurationError("Rejected: status must be an int from 400 to 599")
        if self.error is not None and not isinstance(self.error, ProtocolError):
            raise ConfigurationError("Rejected: error must be a ProtocolError or None")
        object.__setattr__(self, "headers", _safe_headers(self.headers))


AdmissionController: TypeAlias = Callable[
    [AdmissionRequest], "Admitted | Rejected | Awaitable[Admitted | Rejected]"
]
"""Decides every structurally valid request and notification."""

Interceptor: TypeAlias = Callable[
    [RequestContext, Callable[[], Awaitable[object]]], Awaitable[object]
]
"""``async (ctx, proceed) -> result``: wraps the application's handlers (tool calls, prompt
gets, resource reads, the resource list handler; not completion or framework catalogs).
``await proceed()`` runs input validation and the handler once and returns an opaque value the
interceptor returns as is; or the interceptor returns its own result (a ``CompleteResult`` or
``InputRequiredResult``, or a typed tool's output value) to short-circuit, which is checked and
written like the handler's.  A ``ProtocolError`` it raises keeps its wire form; anything else
is the fixed internal error."""

ResultSanitizer: TypeAlias = Callable[
    [RequestContext, str, JsonObject, CompleteResult], CompleteResult
]
"""``(ctx, tool_name, raw_arguments, result) -> result``: rewrites every complete tool result,
the generated invalid-arguments result included; a plain ``def`` (it runs where the result is
written, in the handler's worker thread for ``def`` tools) that must be deterministic."""
