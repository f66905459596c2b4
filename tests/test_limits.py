"""``Limits``: every default, the allowed ranges, types and cross-field rules."""

from __future__ import annotations

import dataclasses
import math
import typing
from typing import Any, Final

import pytest

from mcpkit.errors import ConfigurationError
from mcpkit.limits import DEFAULT_LIMITS, Limits

KiB: Final = 1024
MiB: Final = 1024 * KiB
HOUR: Final = 3600.0
DAY: Final = 24 * HOUR

# field -> (default, checklist ID or the name of its row)
DEFAULTS: Final[dict[str, tuple[float, str]]] = {
    "max_request_bytes": (10 * MiB, "JL-01"),
    "max_response_bytes": (4 * MiB, "JL-02"),
    "max_json_depth": (128, "JL-03"),
    "max_json_nodes": (100_000, "JL-04"),
    "max_string_units": (1_048_576, "JL-11"),
    "max_token_units": (1_048_576, "JL-12"),
    "max_schema_nodes": (4_096, "JL-05"),
    "max_schema_depth": (64, "JL-06"),
    "max_evaluation_operations": (1_000_000, "JL-07"),
    "max_concurrent_evaluations": (128, "JL-08"),
    "max_pattern_chars": (1_000, "pattern-chars"),
    "max_pattern_states": (10_000, "pattern-states"),
    "max_integer_chars": (1_024, "TD-02"),
    "max_binding_integer_chars": (4_194_304, "TD-03"),
    "max_binary_item_bytes": (786_432, "binary-item"),
    "max_header_param_bytes": (16 * KiB, "mcp-param-header"),
    "max_templated_uri_chars": (65_535, "templated-uri"),
    "max_skill_files": (512, "skill-files"),
    "max_skill_bytes": (16 * MiB, "skill-bytes"),
    "max_skill_path_bytes": (8_192, "skill-path"),
    "max_skill_document_bytes": (4 * MiB, "skill-document"),
    "max_skill_yaml_depth": (128, "skill-yaml-depth"),
    "max_skill_yaml_nodes": (1_000_000, "skill-yaml-nodes"),
    "max_skill_yaml_scalar_units": (1_048_576, "skill-yaml-scalar"),
    "max_skill_yaml_total_units": (4_194_304, "skill-yaml-total"),
    "max_skill_yaml_work_units": (50_000_000, "skill-yaml-work"),
    "max_request_state_bytes": (65_536, "request-state-encoded"),
    "max_request_state_decoded_bytes": (49_152, "request-state-decoded"),
    "request_state_lifetime_seconds": (900.0, "request-state-lifetime"),
    "max_request_state_rounds": (10, "request-state-rounds"),
    "handler_slots": (32, "handler-slots"),
    "max_queued_requests": (128, "queue"),
    "request_timeout_seconds": (60.0, "deadline"),
    "max_sessions": (256, "sessions"),
    "max_sessions_per_owner": (16, "sessions-per-owner"),
    "session_idle_timeout_seconds": (24 * HOUR, "session-idle"),
    "session_absolute_timeout_seconds": (7 * DAY, "session-absolute"),
    "max_session_metadata_bytes": (64 * KiB, "session-metadata"),
    "max_active_calls_per_session": (32, "session-active-calls"),
    "max_anonymous_sessions": (64, "anonymous-sessions"),
    "max_session_subscriptions": (64, "session-subscriptions"),
    "max_subscriptions": (512, "subscriptions"),
    "max_session_subscription_bytes": (64 * KiB, "session-subscription-bytes"),
    "stream_keepalive_seconds": (15.0, "stream-keepalive"),
    "max_pending_client_requests": (16, "pending-client-requests"),
    "max_session_signals": (1_024, "session-signals"),
    "client_request_timeout_seconds": (300.0, "client-request-timeout"),
    "max_session_streams": (4, "session-streams"),
    "max_stream_events": (256, "stream-events"),
    "max_session_event_streams": (32, "session-event-streams"),
    "max_session_event_bytes": (1 * MiB, "session-event-bytes"),
    "max_event_bytes": (64 * MiB, "event-bytes"),
    "max_listens_per_owner": (32, "listens-per-owner"),
    "max_listens": (8_192, "listens"),
    "listen_lifetime_seconds": (24 * HOUR, "listen-lifetime"),
    "max_listen_queue": (128, "listen-queue"),
    "max_listen_uris": (256, "listen-uris"),
    "subscription_lease_seconds": (60.0, "subscription-lease"),
    "subscription_check_timeout_seconds": (5.0, "subscription-check-timeout"),
    "max_tasks": (10_000, "tasks"),
    "max_tasks_per_owner": (1_000, "tasks-per-owner"),
    "max_task_result_bytes": (1 * MiB, "task-result-bytes"),
    "task_ttl_seconds": (3600.0, "task-ttl"),
    "task_timeout_seconds": (1800.0, "task-timeout"),
    "task_poll_interval_seconds": (1.0, "task-poll-interval"),
    "max_running_tasks": (16, "running-tasks"),
    "max_listen_task_ids": (256, "listen-task-ids"),
    "max_rate_limit_partitions": (16_384, "rate-limit-partitions"),
    "rate_limit_check_timeout_seconds": (1.0, "rate-limit-check-timeout"),
    "max_bearer_token_bytes": (16_384, "bearer-token-bytes"),
    "max_token_scopes": (256, "token-scopes"),
    "max_verified_tokens": (4_096, "verified-tokens"),
    "max_verifier_response_bytes": (256 * KiB, "verifier-response-bytes"),
    "max_jwks_keys": (64, "jwks-keys"),
    "verifier_timeout_seconds": (5.0, "verifier-timeout"),
    "max_catalog_views": (64, "catalog-views"),
    "max_forwarded_hops": (32, "forwarded-hops"),
    "max_header_count": (100, "header-count"),
    "max_header_bytes": (64 * KiB, "header-bytes"),
    "max_request_target_bytes": (8_192, "request-target"),
    "header_timeout_seconds": (60.0, "header-timeout"),
    "body_timeout_seconds": (60.0, "body-timeout"),
    "keep_alive_timeout_seconds": (5.0, "keep-alive-timeout"),
    "write_timeout_seconds": (30.0, "write-timeout"),
    "max_connections": (8_192, "connections"),
    "max_stdio_requests": (256, "stdio-requests"),
    "max_stdio_buffered_bytes": (32 * MiB, "stdio-buffered-bytes"),
}

# field -> (minimum, maximum) accepted
RANGES: Final[dict[str, tuple[float, float]]] = {
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
    "request_state_lifetime_seconds": (1.0, 7 * DAY),
    "max_request_state_rounds": (1, 2**31 - 1),
    "handler_slots": (1, 4_096),
    "max_queued_requests": (0, 65_536),
    "request_timeout_seconds": (0.001, 86_400.0),
    "max_sessions": (1, 1_000_000),
    "max_sessions_per_owner": (1, 1_000_000),
    "session_idle_timeout_seconds": (1.0, 30 * DAY),
    "session_absolute_timeout_seconds": (1.0, 365 * DAY),
    "max_session_metadata_bytes": (1, 16 * MiB),
    "max_active_calls_per_session": (1, 4_096),
    "max_anonymous_sessions": (0, 1_000_000),
    "max_session_subscriptions": (1, 65_536),
    "max_subscriptions": (1, 1_000_000),
    "max_session_subscription_bytes": (1, 16 * MiB),
    "stream_keepalive_seconds": (0.01, 3_600.0),
    "max_pending_client_requests": (1, 4_096),
    "max_session_signals": (1, 1_000_000),
    "client_request_timeout_seconds": (0.001, 86_400.0),
    "max_session_streams": (1, 1_024),
    "max_stream_events": (1, 1_000_000),
    "max_session_event_streams": (1, 65_536),
    "max_session_event_bytes": (1, 1024 * MiB),
    "max_event_bytes": (1, 64 * 1024 * MiB),
    "max_listens_per_owner": (1, 65_536),
    "max_listens": (1, 1_000_000),
    "listen_lifetime_seconds": (1.0, 30 * DAY),
    "max_listen_queue": (1, 65_536),
    "max_listen_uris": (1, 65_536),
    "subscription_lease_seconds": (0.01, 86_400.0),
    "subscription_check_timeout_seconds": (0.001, 3_600.0),
    "max_tasks": (1, 10_000_000),
    "max_tasks_per_owner": (1, 10_000_000),
    "max_task_result_bytes": (1 * KiB, 16 * MiB),
    "task_ttl_seconds": (1.0, 30 * DAY),
    "task_timeout_seconds": (0.001, 30 * DAY),
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

# (smaller, larger): the cross-field rules ``smaller <= larger``
ORDERED_PAIRS: Final = (
    ("max_sessions_per_owner", "max_sessions"),
    ("max_session_subscriptions", "max_subscriptions"),
    ("session_idle_timeout_seconds", "session_absolute_timeout_seconds"),
    ("max_integer_chars", "max_binding_integer_chars"),
    ("max_request_bytes", "max_stdio_buffered_bytes"),
    ("max_session_event_bytes", "max_event_bytes"),
    ("max_listens_per_owner", "max_listens"),
    ("max_tasks_per_owner", "max_tasks"),
    ("task_timeout_seconds", "task_ttl_seconds"),
)

FIELDS: Final = {field.name: field for field in dataclasses.fields(Limits)}
FLOAT_FIELDS: Final = frozenset(
    name for name, hint in typing.get_type_hints(Limits).items() if hint is float
)
INT_FIELDS: Final = frozenset(FIELDS) - FLOAT_FIELDS


def build(**changes: Any) -> Limits:
    return Limits(**changes)


def isolated(name: str, value: float) -> dict[str, Any]:
    """``{name: value}`` plus partner fields moved out of the way of the cross-field rules."""
    changes: dict[str, Any] = {name: value}
    for smaller, larger in ORDERED_PAIRS:
        if name == smaller:
            changes[larger] = RANGES[larger][1]
        elif name == larger:
            changes[smaller] = RANGES[smaller][0]
    return changes


def one_past(name: str, value: float, direction: int) -> float:
    if name in FLOAT_FIELDS:
        return math.nextafter(value, direction * math.inf)
    return int(value) + direction


def test_tables_cover_every_field() -> None:
    assert set(DEFAULTS) == set(FIELDS)
    assert set(RANGES) == set(FIELDS)
    assert sorted(FLOAT_FIELDS) == [
        "body_timeout_seconds",
        "client_request_timeout_seconds",
        "header_timeout_seconds",
        "keep_alive_timeout_seconds",
        "listen_lifetime_seconds",
        "rate_limit_check_timeout_seconds",
        "request_state_lifetime_seconds",
        "request_timeout_seconds",
        "session_absolute_timeout_seconds",
        "session_idle_timeout_seconds",
        "stream_keepalive_seconds",
        "subscription_check_timeout_seconds",
        "subscription_lease_seconds",
        "task_poll_interval_seconds",
        "task_timeout_seconds",
        "task_ttl_seconds",
        "verifier_timeout_seconds",
        "write_timeout_seconds",
    ]


@pytest.mark.parametrize(
    ("name", "expected"),
    [(name, default) for name, (default, _) in DEFAULTS.items()],
    ids=[f"{ref}-{name}" for name, (_, ref) in DEFAULTS.items()],
)
def test_default(name: str, expected: float) -> None:
    assert getattr(DEFAULT_LIMITS, name) == expected
    assert getattr(Limits(), name) == expected
    assert type(getattr(DEFAULT_LIMITS, name)) is (float if name in FLOAT_FIELDS else int)


def test_default_limits_is_the_default_instance() -> None:
    assert Limits() == DEFAULT_LIMITS
    assert hash(DEFAULT_LIMITS) == hash(Limits())


def test_jl01_body_limit_default_and_ceiling() -> None:
    """JL-01: 10 MiB by default, configurable up to 16 MiB and not one byte more."""
    assert DEFAULT_LIMITS.max_request_bytes == 10_485_760
    assert Limits(max_request_bytes=16 * MiB).max_request_bytes == 16_777_216
    with pytest.raises(ConfigurationError, match="max_request_bytes"):
        Limits(max_request_bytes=16 * MiB + 1)


def test_jl02_output_limit_default() -> None:
    """JL-02: the complete UTF-8 response is capped at 4 MiB."""
    assert DEFAULT_LIMITS.max_response_bytes == 4_194_304


def test_jl03_jl04_json_depth_and_nodes() -> None:
    """JL-03 depth 128; JL-04 100,000 JSON or binding nodes."""
    assert (DEFAULT_LIMITS.max_json_depth, DEFAULT_LIMITS.max_json_nodes) == (128, 100_000)


def test_jl05_to_jl08_schema_limits() -> None:
    """JL-05 4,096 schema nodes; JL-06 depth 64; JL-07 1,000,000 operations; JL-08 128 at once."""
    limits = DEFAULT_LIMITS
    assert limits.max_schema_nodes == 4_096
    assert limits.max_schema_depth == 64
    assert limits.max_evaluation_operations == 1_000_000
    assert limits.max_concurrent_evaluations == 128


def test_jl11_jl12_string_units_are_independent() -> None:
    """JL-11 decoded and JL-12 token spelling: two separate 1,048,576 UTF-16 unit ceilings."""
    assert DEFAULT_LIMITS.max_string_units == 1_048_576
    assert DEFAULT_LIMITS.max_token_units == 1_048_576
    limits = Limits(max_string_units=10, max_token_units=20)
    assert (limits.max_string_units, limits.max_token_units) == (10, 20)


@pytest.mark.parametrize("name", sorted(FIELDS))
@pytest.mark.parametrize("end", ["min", "max"])
def test_range_end_accepted(name: str, end: str) -> None:
    low, high = RANGES[name]
    value = low if end == "min" else high
    assert getattr(build(**isolated(name, value)), name) == value


@pytest.mark.parametrize("name", sorted(FIELDS))
@pytest.mark.parametrize("end", ["min", "max"])
def test_one_past_range_end_rejected(name: str, end: str) -> None:
    low, high = RANGES[name]
    value = one_past(name, low, -1) if end == "min" else one_past(name, high, +1)
    with pytest.raises(ConfigurationError, match=name):
        build(**isolated(name, value))


@pytest.mark.parametrize("name", sorted(INT_FIELDS))
@pytest.mark.parametrize("bad", [True, False, "1", 1.0, None], ids=repr)
def test_int_field_rejects_other_types(name: str, bad: object) -> None:
    with pytest.raises(ConfigurationError, match=name):
        build(**{name: bad})


@pytest.mark.parametrize("name", sorted(FLOAT_FIELDS))
@pytest.mark.parametrize("bad", [True, "60", None, math.nan, math.inf], ids=repr)
def test_float_field_rejects_other_types_and_non_finite(name: str, bad: object) -> None:
    with pytest.raises(ConfigurationError, match=name):
        build(**isolated(name, 1.0) | {name: bad})


@pytest.mark.parametrize("name", sorted(FLOAT_FIELDS))
def test_float_field_accepts_int(name: str) -> None:
    assert getattr(build(**isolated(name, 2)), name) == 2


def test_frozen() -> None:
    limits = Limits()
    with pytest.raises(dataclasses.FrozenInstanceError):
        limits.max_json_depth = 1  # type: ignore[misc]
    with pytest.raises((AttributeError, TypeError)):
        limits.unknown = 1  # type: ignore[attr-defined]
    assert limits.max_json_depth == 128


def test_keyword_only() -> None:
    with pytest.raises(TypeError):
        Limits(1)  # type: ignore[call-arg]


def test_replace_returns_a_validated_copy() -> None:
    changed = DEFAULT_LIMITS.replace(max_json_depth=64, request_timeout_seconds=5.5)
    assert (changed.max_json_depth, changed.request_timeout_seconds) == (64, 5.5)
    assert DEFAULT_LIMITS.max_json_depth == 128
    assert changed.max_json_nodes == DEFAULT_LIMITS.max_json_nodes
    with pytest.raises(ConfigurationError, match="max_json_depth"):
        DEFAULT_LIMITS.replace(max_json_depth=0)
    with pytest.raises(ConfigurationError, match="max_request_bytes"):
        DEFAULT_LIMITS.replace(max_request_bytes=16 * MiB + 1)
    with pytest.raises(TypeError):
        DEFAULT_LIMITS.replace(no_such_limit=1)


@pytest.mark.parametrize(("smaller", "larger"), ORDERED_PAIRS, ids=[p[0] for p in ORDERED_PAIRS])
def test_cross_field_rule(smaller: str, larger: str) -> None:
    """``smaller`` may equal ``larger`` but never exceed it; ``replace()`` checks it too."""
    value = getattr(DEFAULT_LIMITS, smaller)
    assert getattr(DEFAULT_LIMITS.replace(**{larger: value}), larger) == value
    with pytest.raises(ConfigurationError, match=smaller):
        DEFAULT_LIMITS.replace(**{larger: one_past(larger, value, -1)})
    with pytest.raises(ConfigurationError, match=smaller):
        build(**{smaller: one_past(smaller, value, +1), larger: value})


def test_a_refused_value_names_the_range_in_plain_numbers() -> None:
    with pytest.raises(
        ConfigurationError, match=r"^Limits.max_request_bytes must be between 1 and 16,777,216$"
    ):
        Limits(max_request_bytes=2**40)
    with pytest.raises(ConfigurationError, match=r"between 0\.001 and 86,400$"):
        Limits(request_timeout_seconds=10**9)
