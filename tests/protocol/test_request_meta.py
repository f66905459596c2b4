"""A request's ``_meta`` (docs/design/server.md §1.3): each member read, each shape refused, the
trace bound at the limit and one past it, and refusals that never echo."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from decimal import Decimal
from types import MappingProxyType

import pytest

from mcpkit.errors import InvalidParams
from mcpkit.json import JsonObject, decode
from mcpkit.model import LOG_LEVELS
from mcpkit.protocol._request_meta import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    MAX_TRACE_CHARS,
    META_KEY,
    PROGRESS_TOKEN_KEY,
    PROTOCOL_VERSION_KEY,
    TRACE_KEYS,
    LogLevel,
    RequestMeta,
    read_meta,
    require_stateless,
)

CANARY = "CANARY-SECRET"


def params_with(meta: Mapping[str, object]) -> JsonObject:
    return JsonObject({"name": "t", "_meta": meta})


def refused(params: JsonObject | None) -> InvalidParams:
    with pytest.raises(InvalidParams) as caught:
        read_meta(params)
    return caught.value


def test_keys() -> None:
    assert META_KEY == "_meta"
    assert PROTOCOL_VERSION_KEY == "io.modelcontextprotocol/protocolVersion"
    assert CLIENT_CAPABILITIES_KEY == "io.modelcontextprotocol/clientCapabilities"
    assert CLIENT_INFO_KEY == "io.modelcontextprotocol/clientInfo"
    assert LOG_LEVEL_KEY == "io.modelcontextprotocol/logLevel"
    assert PROGRESS_TOKEN_KEY == "progressToken"
    assert TRACE_KEYS == ("traceparent", "tracestate", "baggage")
    assert MAX_TRACE_CHARS == 8192


# --- LogLevel -----------------------------------------------------------------------------


def test_log_levels_match_the_model_order() -> None:
    assert tuple(level.wire for level in LogLevel) == LOG_LEVELS
    assert [int(level) for level in LogLevel] == list(range(8))
    assert LogLevel.DEBUG < LogLevel.WARNING < LogLevel.EMERGENCY


@pytest.mark.parametrize("name", LOG_LEVELS)
def test_log_level_parse(name: str) -> None:
    level = LogLevel.parse(name)
    assert level.wire == name
    assert level is LogLevel[name.upper()]


@pytest.mark.parametrize(
    "value",
    ["DEBUG", "Info", " info", "info ", "warn", "fatal", "", 0, 3, True, None, Decimal("1")],
)
def test_log_level_parse_refuses_anything_else(value: object) -> None:
    with pytest.raises(InvalidParams):
        LogLevel.parse(value)


# --- absent _meta -------------------------------------------------------------------------


def test_no_params_or_no_meta_reads_empty() -> None:
    empty = RequestMeta(JsonObject(), None, None, None, None, None, MappingProxyType({}))
    assert read_meta(None) == empty
    assert read_meta(JsonObject()) == empty
    assert read_meta(JsonObject({"name": "x"})) == empty
    assert read_meta(params_with({})) == empty
    assert read_meta(None).meta == {}
    assert dict(read_meta(None).trace) == {}


@pytest.mark.parametrize("spelling", ["null", "[]", '"x"', "1", "true"])
def test_meta_must_be_an_object(spelling: str) -> None:
    params = decode(b'{"_meta":' + spelling.encode() + b"}")
    assert isinstance(params, JsonObject)
    refused(params)


# --- every member ---------------------------------------------------------------------------


def test_full_meta() -> None:
    body = (
        b'{"name":"t","_meta":{'
        b'"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        b'"io.modelcontextprotocol/clientCapabilities":{"sampling":{}},'
        b'"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1","title":"C"},'
        b'"io.modelcontextprotocol/logLevel":"warning",'
        b'"progressToken":"p-1",'
        b'"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",'
        b'"tracestate":"congo=t61rcWkgMzE","baggage":"userId=alice",'
        b'"vendor/other":[1]}}'
    )
    params = decode(body)
    assert isinstance(params, JsonObject)
    meta = read_meta(params)
    assert meta.meta is params["_meta"]
    assert meta.protocol_version == "2026-07-28"
    assert meta.client_capabilities == {"sampling": {}}
    assert type(meta.client_capabilities) is JsonObject
    assert meta.client_info == {"name": "c", "version": "1", "title": "C"}
    assert meta.log_level is LogLevel.WARNING
    assert meta.progress_token == "p-1"
    assert dict(meta.trace) == {
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "tracestate": "congo=t61rcWkgMzE",
        "baggage": "userId=alice",
    }
    require_stateless(meta)


def test_members_absent_are_none() -> None:
    meta = read_meta(params_with({"vendor/x": 1}))
    assert meta == RequestMeta(JsonObject({"vendor/x": 1}))
    assert (meta.protocol_version, meta.client_capabilities, meta.client_info) == (None,) * 3
    assert (meta.log_level, meta.progress_token) == (None, None)
    assert dict(meta.trace) == {}


@pytest.mark.parametrize("value", [None, 1, True, [], {}, Decimal("2026.07")])
def test_protocol_version_must_be_a_string(value: object) -> None:
    refused(params_with({PROTOCOL_VERSION_KEY: value}))


def test_protocol_version_is_any_string() -> None:
    for value in ("", "v999", "2025-06-18"):
        assert read_meta(params_with({PROTOCOL_VERSION_KEY: value})).protocol_version == value


@pytest.mark.parametrize("value", [None, 1, "caps", [], True])
def test_client_capabilities_must_be_an_object(value: object) -> None:
    refused(params_with({CLIENT_CAPABILITIES_KEY: value}))


def test_empty_client_capabilities_is_present() -> None:
    meta = read_meta(params_with({CLIENT_CAPABILITIES_KEY: {}}))
    assert meta.client_capabilities == {}
    assert meta.client_capabilities is not None


@pytest.mark.parametrize(
    "value",
    [
        None,
        "c",
        [],
        {},
        {"name": "c"},
        {"version": "1"},
        {"name": 1, "version": "1"},
        {"name": "c", "version": 1},
        {"name": "c", "version": None},
    ],
)
def test_client_info_needs_string_name_and_version(value: object) -> None:
    refused(params_with({CLIENT_INFO_KEY: value}))


@pytest.mark.parametrize("value", ["debug", "emergency"])
def test_log_level_member(value: str) -> None:
    assert read_meta(params_with({LOG_LEVEL_KEY: value})).log_level is LogLevel.parse(value)


@pytest.mark.parametrize("value", ["Debug", "trace", None, 7, {}])
def test_log_level_member_refused(value: object) -> None:
    refused(params_with({LOG_LEVEL_KEY: value}))


@pytest.mark.parametrize("value", ["", "t", 0, -1, 12345678901234567890])
def test_progress_token(value: str | int) -> None:
    token = read_meta(params_with({PROGRESS_TOKEN_KEY: value})).progress_token
    assert token == value
    assert type(token) is type(value)


@pytest.mark.parametrize("value", [None, True, False, Decimal("1.5"), Decimal("1.0"), [], {}])
def test_progress_token_refused(value: object) -> None:
    refused(params_with({PROGRESS_TOKEN_KEY: value}))


@pytest.mark.parametrize("key", TRACE_KEYS)
def test_trace_member_at_the_limit_and_one_past(key: str) -> None:
    at_limit = "a" * MAX_TRACE_CHARS
    assert dict(read_meta(params_with({key: at_limit})).trace) == {key: at_limit}
    assert dict(read_meta(params_with({key: ""})).trace) == {key: ""}
    # Characters, not bytes: 8,192 two-byte characters are accepted.
    assert read_meta(params_with({key: "\u00e9" * MAX_TRACE_CHARS})).trace[key][0] == "\u00e9"
    refused(params_with({key: at_limit + "a"}))


@pytest.mark.parametrize("key", TRACE_KEYS)
@pytest.mark.parametrize("value", [None, 1, [], {}])
def test_trace_member_must_be_a_string(key: str, value: object) -> None:
    refused(params_with({key: value}))


def test_trace_is_read_only() -> None:
    trace = read_meta(params_with({"traceparent": "x"})).trace
    with pytest.raises(TypeError):
        trace["baggage"] = "y"  # type: ignore[index]


# --- require_stateless -----------------------------------------------------------------------


def test_require_modern() -> None:
    version: dict[str, object] = {PROTOCOL_VERSION_KEY: "2026-07-28"}
    capabilities: dict[str, object] = {CLIENT_CAPABILITIES_KEY: {}}
    require_stateless(read_meta(params_with({**version, **capabilities})))
    for meta in (
        read_meta(None),
        read_meta(params_with({})),
        read_meta(params_with(version)),
        read_meta(params_with(capabilities)),
        read_meta(params_with({**capabilities, CLIENT_INFO_KEY: {"name": "c", "version": "1"}})),
    ):
        with pytest.raises(InvalidParams) as caught:
            require_stateless(meta)
        assert (caught.value.jsonrpc_code, caught.value.http_status) == (-32602, 400)


# --- RequestMeta ----------------------------------------------------------------------------


def test_request_meta_is_frozen_slotted_and_hashable() -> None:
    meta = read_meta(params_with({PROTOCOL_VERSION_KEY: "v", "traceparent": "x"}))
    with pytest.raises(dataclasses.FrozenInstanceError):
        meta.protocol_version = "w"  # type: ignore[misc]
    assert not hasattr(meta, "__dict__")
    same = read_meta(params_with({PROTOCOL_VERSION_KEY: "v", "traceparent": "x"}))
    assert meta == same
    assert hash(meta) == hash(same)
    assert meta != read_meta(params_with({PROTOCOL_VERSION_KEY: "v", "traceparent": "y"}))


# --- never echo -----------------------------------------------------------------------------


def test_refusals_never_echo() -> None:
    cases: list[dict[str, object]] = [
        {PROTOCOL_VERSION_KEY: [CANARY]},
        {CLIENT_CAPABILITIES_KEY: CANARY},
        {CLIENT_INFO_KEY: {"name": CANARY}},
        {LOG_LEVEL_KEY: CANARY},
        {PROGRESS_TOKEN_KEY: [CANARY]},
        {"baggage": CANARY * 1000},
    ]
    for meta in cases:
        error = refused(params_with(meta))
        assert type(error) is InvalidParams
        assert str(error) == "Invalid params"
        assert error.args == ("Invalid params",)
        assert error.data is None
        assert CANARY not in repr(error)
    with pytest.raises(InvalidParams) as caught:
        LogLevel.parse(CANARY)
    assert caught.value.args == ("Invalid params",)


def test_two_members_are_the_minimal_modern_meta_only_when_they_are_those_two() -> None:
    """Two members read as the two required ones only when they are: any other pair is read
    member by member."""
    modern = read_meta(params_with({PROTOCOL_VERSION_KEY: "v", CLIENT_CAPABILITIES_KEY: {}}))
    assert (modern.protocol_version, modern.client_capabilities) == ("v", JsonObject())
    assert (modern.client_info, modern.log_level, modern.progress_token) == (None, None, None)
    assert dict(modern.trace) == {}
    token = read_meta(params_with({PROTOCOL_VERSION_KEY: "v", PROGRESS_TOKEN_KEY: 5}))
    assert (token.protocol_version, token.client_capabilities, token.progress_token) == (
        "v",
        None,
        5,
    )
    traced = read_meta(params_with({CLIENT_CAPABILITIES_KEY: {}, "traceparent": "t"}))
    assert (traced.protocol_version, dict(traced.trace)) == (None, {"traceparent": "t"})
    refused(params_with({CLIENT_CAPABILITIES_KEY: {}, LOG_LEVEL_KEY: "loud"}))
