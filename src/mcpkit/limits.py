"""Every input-driven bound mcpkit enforces, in one frozen object.

Defaults are production defaults.  Each field has an allowed range checked at
construction: values can be lowered freely, and raised only as far as the codec and the
runtime stay safe (for example the request body may be configured up to 16 MiB, never more).
"""

from __future__ import annotations

import dataclasses
from typing import Final

from mcpkit.errors import ConfigurationError

__all__ = ["DEFAULT_LIMITS", "Limits"]

KiB: Final = 1024
MiB: Final = 1024 * KiB

# (minimum, maximum) for each field; the one table of allowed ranges.
_RANGES: Final[dict[str, tuple[float, float]]] = {
    "max_request_bytes": (1, 16 * MiB),
    "max_response_bytes": (1, 16 * MiB),
    "max_json_depth": (1, 512),
    "max_json_nodes": (1, 10_000_000),
    "max_string_units": (1, 16 * MiB),
    "max_token_units": (1, 16 * MiB),
    "max_schema_nodes": (1, 65_536),
    "max_schema_depth": (1, 256),
    "max_evaluation_operations": (1, 100_000_000),
    "max_concurrent_evaluations": (1, 4_096),
    "max_pattern_chars": (1, 65_536),
    "max_pattern_states": (1, 1_000_000),
    "max_integer_chars": (1, 1_000_000),
    "max_binding_integer_chars": (1, 16 * MiB),
    "max_binary_item_bytes": (1, 786_432),
    "max_header_param_bytes": (1, 64 * KiB),
    "max_templated_uri_chars": (1, 1_048_576),
    "max_skill_files": (1, 512),
    "max_skill_bytes": (1, 16 * MiB),
    "max_skill_path_bytes": (1, 8_192),
    "max_skill_document_bytes": (1, 4 * MiB),
    "max_skill_yaml_depth": (1, 128),
    "max_skill_yaml_nodes": (1, 1_000_000),
    "max_skill_yaml_scalar_units": (1, 1_048_576),
    "max_skill_yaml_total_units": (1, 4_194_304),
    "max_skill_yaml_work_units": (1, 500_000_000),
    "max_request_state_bytes": (1, 1 * MiB),
    "max_request_state_decoded_bytes": (1, 1 * MiB),
    "request_state_lifetime_seconds": (1.0, 7 * 86_400.0),
    "max_request_state_rounds": (1, 2**31 - 1),
    "handler_slots": (1, 4_096),
    "max_queued_requests": (0, 65_536),
    "request_timeout_seconds": (0.001, 86_400.0),
    "max_sessions": (1, 1_000_000),
    "max_sessions_per_owner": (1, 1_000_000),
    "session_idle_timeout_seconds": (1.0, 30 * 86_400.0),
    "session_absolute_timeout_seconds": (1.0, 365 * 86_400.0),
    "max_session_metadata_bytes": (1, 16 * MiB),
    "max_active_calls_per_session": (1, 4_096),
    "max_anonymous_sessions": (0, 1_000_000),
    "max_session_subscriptions": (1, 65_536),
    "max_subscriptions": (1, 1_000_000),
    "max_session_subscription_bytes": (1, 16 * MiB),
    "stream_keepalive_seconds": (0.01, 3_600.0),
    "max_pending_client_requests": (1, 4_096),
    "max_session_signals": (1, 1_000_000),
    "max_session_streams": (1, 1_024),
    "max_stream_events": (1, 1_000_000),
    "max_session_event_streams": (1, 65_536),
    "max_session_event_bytes": (1, 1024 * MiB),
    "max_event_bytes": (1, 64 * 1024 * MiB),
    "client_request_timeout_seconds": (0.001, 86_400.0),
    "max_listens_per_owner": (1, 65_536),
    "max_listens": (1, 1_000_000),
    "listen_lifetime_seconds": (1.0, 30 * 86_400.0),
    "max_listen_queue": (1, 65_536),
    "max_listen_uris": (1, 65_536),
    "subscription_lease_seconds": (0.01, 86_400.0),
    "subscription_check_timeout_seconds": (0.001, 3_600.0),
    "max_tasks": (1, 10_000_000),
    "max_tasks_per_owner": (1, 10_000_000),
    "max_task_result_bytes": (1 * KiB, 16 * MiB),
    "task_ttl_seconds": (1.0, 30 * 86_400.0),
    "task_timeout_seconds": (0.001, 30 * 86_400.0),
    "task_poll_interval_seconds": (0.001, 3_600.0),
    "max_running_tasks": (1, 4_096),
    "max_listen_task_ids": (1, 65_536),
    "max_rate_limit_partitions": (1, 1_000_000),
    "rate_limit_check_timeout_seconds": (0.001, 3_600.0),
    "max_bearer_token_bytes": (64, 1 * MiB),
    "max_token_scopes": (1, 65_536),
    "max_verified_tokens": (1, 1_000_000),
    "max_verifier_response_bytes": (1 * KiB, 16 * MiB),
    "max_jwks_keys": (1, 4_096),
    "verifier_timeout_seconds": (0.001, 3_600.0),
    "max_catalog_views": (1, 65_536),
    "max_forwarded_hops": (1, 1_024),
    "max_header_count": (1, 10_000),
    "max_header_bytes": (1 * KiB, 1 * MiB),
    "max_request_target_bytes": (16, 64 * KiB),
    "header_timeout_seconds": (0.001, 3_600.0),
    "body_timeout_seconds": (0.001, 3_600.0),
    "keep_alive_timeout_seconds": (0.001, 3_600.0),
    "write_timeout_seconds": (0.001, 3_600.0),
    "max_connections": (1, 1_000_000),
    "max_stdio_requests": (1, 65_536),
    "max_stdio_buffered_bytes": (1 * MiB, 1024 * MiB),
}

_FLOAT_FIELDS: Final = frozenset(
    {
        "request_timeout_seconds",
        "session_idle_timeout_seconds",
        "session_absolute_timeout_seconds",
        "request_state_lifetime_seconds",
        "header_timeout_seconds",
        "body_timeout_seconds",
        "keep_alive_timeout_seconds",
        "write_timeout_seconds",
        "stream_keepalive_seconds",
        "client_request_timeout_seconds",
        "listen_lifetime_seconds",
        "subscription_lease_seconds",
        "subscription_check_timeout_seconds",
        "rate_limit_check_timeout_seconds",
        "verifier_timeout_seconds",
        "task_ttl_seconds",
        "task_timeout_seconds",
        "task_poll_interval_seconds",
    }
)

# (lower, upper): fields that bound each other, checked in this order once both are in range.
_ORDERED: Final = (
    ("max_sessions_per_owner", "max_sessions"),
    ("max_session_subscriptions", "max_subscriptions"),
    ("max_listens_per_owner", "max_listens"),
    ("max_tasks_per_owner", "max_tasks"),
    ("task_timeout_seconds", "task_ttl_seconds"),
    ("session_idle_timeout_seconds", "session_absolute_timeout_seconds"),
    ("max_session_event_bytes", "max_event_bytes"),
    ("max_request_bytes", "max_stdio_buffered_bytes"),
    ("max_integer_chars", "max_binding_integer_chars"),
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """Bounds on every cost a request can drive.  Immutable; use :meth:`replace` to derive."""

    # JSON
    max_request_bytes: int = 10 * MiB
    """Request body bytes; configurable up to 16 MiB."""
    max_response_bytes: int = 4 * MiB
    """One complete UTF-8 JSON response, wrappers and metadata included."""
    max_json_depth: int = 128
    """Nested arrays and objects on any path, read or written."""
    max_json_nodes: int = 100_000
    """JSON values in one document, and nodes in one typed binding."""
    max_string_units: int = 1_048_576
    """UTF-16 code units of one decoded string or member name."""
    max_token_units: int = 1_048_576
    """UTF-16 code units of one string's escaped spelling, quotes excluded."""

    # Tool Schema Profile 1
    max_schema_nodes: int = 4_096
    """Compiled schema nodes."""
    max_schema_depth: int = 64
    """Schema nesting depth."""
    max_evaluation_operations: int = 1_000_000
    """Evaluation budget per call."""
    max_concurrent_evaluations: int = 128
    """Schema evaluations running at once, server-wide."""
    max_pattern_chars: int = 1_000
    """Code points of one schema ``pattern``."""
    max_pattern_states: int = 10_000
    """States of one compiled ``pattern`` (counted repetition such as ``a{50}`` copies its
    atom); a search visits at most this many per code point of the string."""

    # Typed binding
    max_integer_chars: int = 1_024
    """Expanded decimal spelling of one bound integer, minus sign included."""
    max_binding_integer_chars: int = 4_194_304
    """Expanded integer characters across one binding."""

    # Content and headers
    max_binary_item_bytes: int = 786_432
    """Raw bytes of one image, audio or blob item (base64 fits 1,048,576 characters)."""
    max_header_param_bytes: int = 16 * KiB
    """Decoded UTF-8 bytes of one mirrored ``Mcp-Param-*`` value."""
    max_templated_uri_chars: int = 65_535
    """Characters of a ``resources/read`` URI tried against resource templates (Soklet's bound);
    a longer URI can still match an exact resource, never a template."""

    # Skills bundles (checked when a bundle is built, so a refused bundle never serves)
    max_skill_files: int = 512
    """Files in one skill bundle, ``SKILL.md`` included."""
    max_skill_bytes: int = 16 * MiB
    """Raw bytes of one skill bundle, summed over its files."""
    max_skill_path_bytes: int = 8_192
    """UTF-8 bytes of one logical file path in a skill bundle."""
    max_skill_document_bytes: int = 4 * MiB
    """Bytes of a bundle's root ``SKILL.md``."""
    max_skill_yaml_depth: int = 128
    """Nesting of mappings and sequences in ``SKILL.md`` front matter."""
    max_skill_yaml_nodes: int = 1_000_000
    """Mappings, sequences, keys and scalars in ``SKILL.md`` front matter."""
    max_skill_yaml_scalar_units: int = 1_048_576
    """UTF-16 code units of one front-matter scalar (key or value)."""
    max_skill_yaml_total_units: int = 4_194_304
    """UTF-16 code units of all front-matter scalars together."""
    max_skill_yaml_work_units: int = 50_000_000
    """Work units one ``SKILL.md`` front-matter parse may spend (Soklet's bound): one per
    character or line a pass of the parser looks at and per node built, whatever the
    document's shape."""

    # Multi-round request state
    max_request_state_bytes: int = 65_536
    """UTF-8 bytes of one ``requestState`` string, application- or framework-protected."""
    max_request_state_decoded_bytes: int = 49_152
    """Bytes of a framework-sealed state's decoded envelope and of its plaintext."""
    request_state_lifetime_seconds: float = 15 * 60.0
    """How long a framework-sealed state stays valid after its first round."""
    max_request_state_rounds: int = 10
    """Continuations one framework-sealed state may be carried through, and rounds of input
    one 2025 call may ask the client for before it fails."""

    # Execution
    handler_slots: int = 32
    max_queued_requests: int = 128
    request_timeout_seconds: float = 60.0

    # 2025 sessions, when an endpoint enables them
    max_sessions: int = 256
    max_sessions_per_owner: int = 16
    session_idle_timeout_seconds: float = 24 * 3600.0
    session_absolute_timeout_seconds: float = 7 * 24 * 3600.0
    max_session_metadata_bytes: int = 64 * KiB
    max_active_calls_per_session: int = 32
    max_anonymous_sessions: int = 64
    max_session_subscriptions: int = 64
    """Resources one session may be subscribed to (``resources/subscribe``); past it, 429."""
    max_subscriptions: int = 512
    """Resource subscriptions of all sessions together; past it, 429."""
    max_session_subscription_bytes: int = 64 * KiB
    """UTF-8 bytes of the URIs one session is subscribed to; past it, 429."""
    stream_keepalive_seconds: float = 15.0
    """A session's ``GET`` stream and a ``subscriptions/listen`` stream send a keep-alive
    comment after this long without an event, so proxies do not close them as idle."""
    max_pending_client_requests: int = 16
    """Requests the server has sent one 2025 session (or stdio client) for input and not yet
    had answered; one more fails its call with 429 / -31999."""
    max_session_signals: int = 1_024
    """With a session store shared by several nodes (``RedisSessionStore``): cancels and
    answers this node is passing on to the node that runs the call and not yet handed to
    Redis; one more is dropped, as a message lost on the way would be (the call it concerns
    runs on, or fails when its wait for the answer ends)."""
    client_request_timeout_seconds: float = 300.0
    """How long a 2025 call waits for the client to answer the requests of one round of input
    (a person may be filling in a form); then the call fails with ``InputUnavailable``."""
    max_session_streams: int = 4
    """``GET`` streams one session may have open at once: its standalone stream and streams
    resumed with ``Last-Event-ID``; one more resumed stream is 429."""
    max_stream_events: int = 256
    """Events kept for replay per session stream; past it the oldest goes."""
    max_session_event_streams: int = 32
    """``POST`` streams one session keeps events of for replay (its standalone stream aside);
    past it the one written least recently goes."""
    max_session_event_bytes: int = 1 * MiB
    """Bytes of events kept for replay per session; past it the oldest go."""
    max_event_bytes: int = 64 * MiB
    """Bytes of events kept for replay in all; past it the least recently written stream
    loses its oldest first."""

    # subscriptions/listen (2026-07-28), on endpoints that serve it
    max_listens_per_owner: int = 32
    """Listen streams one caller (admission's authorization partition) may have open at one
    endpoint; one more is refused with 429 / -31999.  Capacity refuses new listens, it never
    ends admitted ones."""
    max_listens: int = 8_192
    """Listen streams open in all; one more is refused with 429 / -31999."""
    listen_lifetime_seconds: float = 24 * 3600.0
    """How long one listen stream may stay open; then it ends with its ``complete`` result
    and the client listens again."""
    max_listen_queue: int = 128
    """Notifications one listen stream may have waiting to be written (one per notification
    type and resource URI: a repeat replaces the waiting one); past it the client is not
    reading, and its stream is ended rather than buffered."""
    max_listen_uris: int = 256
    """Distinct resource URIs in one listen's ``resourceSubscriptions`` (after normalisation
    and de-duplication); more is -32602."""
    subscription_lease_seconds: float = 60.0
    """The longest a subscription authorizer's grant holds before the stream's authority is
    checked again (shorter if the authorizer says so)."""
    subscription_check_timeout_seconds: float = 5.0
    """How long one call of the subscription authorizer may take; a slower one is a denial
    (at the opening: the listen is refused; on a renewal: the stream ends)."""

    # Tasks (the io.modelcontextprotocol/tasks extension, 2026-07-28), where a server has a
    # task store
    max_tasks: int = 10_000
    """Tasks the store keeps in all, finished ones included until they expire; one more
    ``tools/call`` that would start a task is refused with 429 / -31999."""
    max_tasks_per_owner: int = 1_000
    """Tasks one caller (admission's authorization partition) may have in the store; one more
    is refused with 429 / -31999."""
    max_task_result_bytes: int = 1 * MiB
    """UTF-8 bytes of one task's stored result (or error, or outstanding input requests); a
    handler that returns more fails its task with the fixed output error."""
    task_ttl_seconds: float = 3600.0
    """How long a task is kept after it was created (``ttlMs``); then it is removed and
    ``tasks/get`` answers -32602.  A task still running then is cancelled first."""
    task_timeout_seconds: float = 1800.0
    """How long a task's handler may run (all its rounds together) before its token is
    cancelled and the task fails with the fixed timeout error."""
    task_poll_interval_seconds: float = 1.0
    """The polling interval a task handle suggests to the client (``pollIntervalMs``)."""
    max_running_tasks: int = 16
    """Task handlers running at once; more tasks wait (``working``) for one to finish.  Their
    slots are separate from ``handler_slots``, so long tasks never starve ordinary calls."""
    max_listen_task_ids: int = 256
    """Task ids in one listen's ``taskIds``; more is -32602."""

    # Rate limiting, where a server has rate limiters
    max_rate_limit_partitions: int = 16_384
    """Partitions (endpoint, caller, target) one ``TokenBucket`` keeps; when full, a new
    caller takes over an idle one or is denied (429), so memory never grows past it."""
    rate_limit_check_timeout_seconds: float = 1.0
    """How long an ``async`` rate limiter's ``acquire`` may take; a slower one is a denial."""

    # OAuth resource server, where a server has one (``Server(auth=ResourceServer(...))``)
    max_bearer_token_bytes: int = 16_384
    """Bytes of the access token in one ``Authorization: Bearer`` header; a longer one is an
    invalid token (401), refused before any verification work."""
    max_token_scopes: int = 256
    """Scopes one access token may carry; a token with more is an invalid token."""
    max_verified_tokens: int = 4_096
    """Verification outcomes the resource server remembers, each by the SHA-256 digest of its
    token (never the token); the oldest is forgotten when full."""
    max_verifier_response_bytes: int = 256 * KiB
    """Bytes of one JWKS document or token introspection answer; a larger one is a failed
    fetch (the token that needed it is answered 503)."""
    max_jwks_keys: int = 64
    """Keys one JWKS document may hold; a document with more is a failed fetch."""
    verifier_timeout_seconds: float = 5.0
    """How long one JWKS fetch or token introspection may take; a slower one fails (a token
    that needed it is answered 503)."""
    max_catalog_views: int = 64
    """Distinct per-caller catalogs an endpoint keeps prebuilt (one per set of granted scopes
    that changes what its lists show); the least recently built is dropped when full."""
    max_forwarded_hops: int = 32
    """Addresses read from a trusted proxy's ``X-Forwarded-For`` (``trusted_proxies``); a
    longer chain is not believed, and the client is the proxy itself."""

    # HTTP connections of the embedded server (``Server.run``/``serve``)
    max_header_count: int = 100
    """Header fields in one request head; one more is refused with 431."""
    max_header_bytes: int = 64 * KiB
    """Bytes of one request's header fields, each counted as its name, its value and 4 (the
    separator and line end); over it is 431."""
    max_request_target_bytes: int = 8_192
    """Bytes of the request target (path and query); over it is 414."""
    header_timeout_seconds: float = 60.0
    """From a connection's opening (or a request's first byte) to the end of its head."""
    body_timeout_seconds: float = 60.0
    """From the end of a request's head to the end of its body."""
    keep_alive_timeout_seconds: float = 5.0
    """How long an idle kept-alive connection waits for its next request."""
    write_timeout_seconds: float = 30.0
    """How long a response may wait for a client that does not read before the connection is
    closed (a listen stream's write is cut off after this long under any ASGI server)."""
    max_connections: int = 8_192
    """Open connections; at the cap an idle one is closed for a new one, else the new one gets
    503."""

    # stdio
    max_stdio_requests: int = 256
    """Requests in flight at once on a stdio connection; more get the overload error."""
    max_stdio_buffered_bytes: int = 32 * MiB
    """Bytes of received lines and unwritten answers a stdio connection holds before it stops
    reading stdin until the client catches up."""

    def __post_init__(self) -> None:
        def _shown(bound: float) -> str:  # 16,777,216 rather than 1.67772e+07
            return f"{int(bound):,}" if float(bound).is_integer() else f"{bound:g}"

        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            low, high = _RANGES[field.name]
            kinds = (int, float) if field.name in _FLOAT_FIELDS else (int,)
            if not isinstance(value, kinds) or isinstance(value, bool):
                raise ConfigurationError(
                    f"Limits.{field.name} must be a number, got {type(value).__name__}"
                )
            if not low <= value <= high:
                raise ConfigurationError(
                    f"Limits.{field.name} must be between {_shown(low)} and {_shown(high)}"
                )
        for lower, upper in _ORDERED:
            if getattr(self, lower) > getattr(self, upper):
                raise ConfigurationError(f"Limits.{lower} must not exceed {upper}")

    def replace(self, **changes: int | float) -> Limits:
        """Return a copy with some fields changed, validated like a new instance."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


DEFAULT_LIMITS: Final = Limits()
"""The production defaults."""
