"""A request's ``params._meta`` (docs/design/server.md §1.3).

On 2026-07-28 every request carries its own protocol version and client capabilities in
``_meta`` (there is no handshake to remember them from), and may opt in to log messages,
progress and trace propagation.  :func:`read_meta` checks the shape of the members the server
reads and nothing more; which of them a revision requires is :func:`require_stateless`'s
question, asked only once the request is known to take the stateless path.  Members the server
does not read are kept in ``RequestMeta.meta`` untouched.  Every refusal is the one fixed
:class:`InvalidParams` (-32602), which never carries the value.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from mcpkit.errors import InvalidParams
from mcpkit.json import JsonObject, JsonValue
from mcpkit.model._checks import unchecked_factory

__all__ = [
    "CLIENT_CAPABILITIES_KEY",
    "CLIENT_INFO_KEY",
    "LOG_LEVEL_KEY",
    "MAX_TRACE_CHARS",
    "META_KEY",
    "PROGRESS_TOKEN_KEY",
    "PROTOCOL_VERSION_KEY",
    "TRACE_KEYS",
    "LogLevel",
    "RequestMeta",
    "read_meta",
    "require_stateless",
]

META_KEY: Final = "_meta"
PROTOCOL_VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY: Final = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY: Final = "io.modelcontextprotocol/logLevel"
PROGRESS_TOKEN_KEY: Final = "progressToken"
TRACE_KEYS: Final = ("traceparent", "tracestate", "baggage")
"""W3C Trace Context and Baggage members, passed on to tracing as they came."""
MAX_TRACE_CHARS: Final = 8_192
"""Longest accepted trace member; W3C asks receivers to handle far less, and this is a bound."""

_EMPTY: Final = JsonObject()
_ABSENT: Final = object()  # ``get``'s default: tells an absent member from a JSON null
_NO_TRACE: Final[Mapping[str, str]] = MappingProxyType({})


class LogLevel(enum.IntEnum):
    """MCP log levels, least severe first (RFC 5424 order), so levels compare by severity."""

    DEBUG = 0
    INFO = 1
    NOTICE = 2
    WARNING = 3
    ERROR = 4
    CRITICAL = 5
    ALERT = 6
    EMERGENCY = 7

    @property
    def wire(self) -> str:
        """The level's name on the wire."""
        return self.name.lower()

    @classmethod
    def parse(cls, value: object) -> LogLevel:
        """The level a wire name denotes (exact, lowercase); anything else is ``InvalidParams``."""
        level = _LEVELS_BY_WIRE.get(value) if isinstance(value, str) else None
        if level is None:
            raise InvalidParams()
        return level


_LEVELS_BY_WIRE: Final = {level.wire: level for level in LogLevel}


@dataclass(frozen=True, slots=True)
class RequestMeta:
    """The members of one request's ``_meta`` the server reads, shape-checked.

    ``meta`` is the whole ``_meta`` object (empty when absent); a member that was absent is
    ``None`` (``trace`` holds only the trace members present).
    """

    meta: JsonObject = _EMPTY
    protocol_version: str | None = None
    client_capabilities: JsonObject | None = None
    client_info: JsonObject | None = None
    log_level: LogLevel | None = None
    progress_token: str | int | None = None
    # A mapping proxy is immutable but unhashable: left out of the hash, still compared.
    trace: Mapping[str, str] = field(default_factory=lambda: _NO_TRACE, hash=False)


_NO_META: Final = RequestMeta()
"""The ``RequestMeta`` of every request without ``_meta``: immutable, so one serves them all."""
_new_meta: Final = unchecked_factory(RequestMeta)
"""``RequestMeta``'s fields stored as given, for the values ``read_meta`` has just checked:
faster than the frozen dataclass ``__init__`` (an ``object.__setattr__`` per field)."""


def read_meta(params: JsonObject | None) -> RequestMeta:
    """Read and shape-check ``params._meta``; every failure is ``InvalidParams``."""
    if params is None or META_KEY not in params:
        return _NO_META
    meta = params[META_KEY]
    if not isinstance(meta, JsonObject):
        raise InvalidParams()
    if not meta:
        return RequestMeta(meta)
    # Every member is looked at only when present (most requests carry two or three), and the
    # two every stateless request carries are checked inline: a typical ``_meta`` is read without
    # a call per member.
    version = meta.get(PROTOCOL_VERSION_KEY, _ABSENT)
    if version is _ABSENT:
        version = None
    elif not isinstance(version, str):
        raise InvalidParams()
    capabilities = meta.get(CLIENT_CAPABILITIES_KEY, _ABSENT)
    if capabilities is _ABSENT:
        capabilities = None
    elif not isinstance(capabilities, JsonObject):
        raise InvalidParams()
    if len(meta) == 2 and version is not None and capabilities is not None:
        # The minimal stateless ``_meta``: those two are all it holds, every other member absent.
        return _new_meta(meta, version, capabilities, None, None, None, _NO_TRACE)
    return _new_meta(
        meta,
        version,
        capabilities,
        _client_info(meta) if CLIENT_INFO_KEY in meta else None,
        LogLevel.parse(meta[LOG_LEVEL_KEY]) if LOG_LEVEL_KEY in meta else None,
        _progress_token(meta) if PROGRESS_TOKEN_KEY in meta else None,
        _NO_TRACE if meta.keys().isdisjoint(TRACE_KEYS) else _trace(meta),
    )


def require_stateless(meta: RequestMeta) -> None:
    """2026-07-28 needs the protocol version and client capabilities on every request."""
    if meta.protocol_version is None or meta.client_capabilities is None:
        raise InvalidParams()


def _optional_str(meta: JsonObject, key: str) -> str | None:
    if key not in meta:
        return None
    value = meta[key]
    if not isinstance(value, str):
        raise InvalidParams()
    return value


def _optional_object(meta: JsonObject, key: str) -> JsonObject:
    """A member the caller found present: it must be an object."""
    value = meta[key]
    if not isinstance(value, JsonObject):
        raise InvalidParams()
    return value


def _client_info(meta: JsonObject) -> JsonObject:
    """An ``Implementation``: ``name`` and ``version`` strings; other members are kept."""
    info = _optional_object(meta, CLIENT_INFO_KEY)
    if not (isinstance(info.get("name"), str) and isinstance(info.get("version"), str)):
        raise InvalidParams()
    return info


def _progress_token(meta: JsonObject) -> str | int:
    token: JsonValue = meta[PROGRESS_TOKEN_KEY]
    if isinstance(token, bool) or not isinstance(token, (str, int)):
        raise InvalidParams()  # null, a boolean, a fraction or a container
    return token


def _trace(meta: JsonObject) -> Mapping[str, str]:
    found: dict[str, str] = {}
    for key in TRACE_KEYS:
        value = _optional_str(meta, key)
        if value is not None:
            if len(value) > MAX_TRACE_CHARS:
                raise InvalidParams()
            found[key] = value
    return MappingProxyType(found) if found else _NO_TRACE
