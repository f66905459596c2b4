"""Revision selection (docs/design/server.md §1.5):
which path a request takes, the modern refusals in the spec's
order, the legacy header rule and ``initialize`` negotiation, each refusal with its exact class
and ``data``."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.errors import HeaderMismatch, InvalidParams, ProtocolError, UnsupportedProtocolVersion
from mcpkit.json import JsonObject
from mcpkit.model import Revision
from mcpkit.protocol._request_meta import RequestMeta
from mcpkit.protocol._selection import (
    is_stateless_request,
    negotiate,
    select_handshake,
    select_stateless,
    supported,
)

from ..spec_schemas import schema_errors
from .samples import ALL, JUNE, MODERN, NOVEMBER

LEGACY_ONLY = frozenset({JUNE, NOVEMBER})
MODERN_ONLY = frozenset({MODERN})
JUNE_AND_MODERN = frozenset({JUNE, MODERN})
EVERY_WIRE = ["2026-07-28", "2025-11-25", "2025-06-18"]
CAPABILITIES = JsonObject()


def meta(
    version: str | None = "2026-07-28", capabilities: JsonObject | None = CAPABILITIES
) -> RequestMeta:
    return RequestMeta(protocol_version=version, client_capabilities=capabilities)


def unsupported(data: dict[str, Any], run: Any, *args: Any) -> None:
    """``run(*args)`` raises exactly ``UnsupportedProtocolVersion`` with exactly ``data``."""
    with pytest.raises(UnsupportedProtocolVersion) as caught:
        run(*args)
    error = caught.value
    assert type(error) is UnsupportedProtocolVersion
    assert (error.jsonrpc_code, error.http_status) == (-32022, 400)
    assert error.data == data


def refused(kind: type[ProtocolError], *args: Any) -> ProtocolError:
    with pytest.raises(ProtocolError) as caught:
        select_stateless(*args)
    assert type(caught.value) is kind
    return caught.value


def error_response(error: ProtocolError) -> dict[str, Any]:
    body: dict[str, Any] = {"code": error.jsonrpc_code, "message": error.message}
    if error.data is not None:
        body["data"] = error.data
    return {"jsonrpc": "2.0", "id": 1, "error": body}


# --- supported -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("served", "expected"),
    [
        (ALL, ("2026-07-28", "2025-11-25", "2025-06-18")),
        (LEGACY_ONLY, ("2025-11-25", "2025-06-18")),
        (JUNE_AND_MODERN, ("2026-07-28", "2025-06-18")),
        (MODERN_ONLY, ("2026-07-28",)),
        (frozenset({NOVEMBER}), ("2025-11-25",)),
        (frozenset(), ()),
    ],
)
def test_supported_is_the_served_wire_strings_newest_first(
    served: frozenset[Revision], expected: tuple[str, ...]
) -> None:
    assert supported(served) == expected


def test_supported_accepts_any_collection_in_any_order() -> None:
    assert supported([JUNE, MODERN, NOVEMBER]) == tuple(EVERY_WIRE)
    assert supported((NOVEMBER, JUNE)) == ("2025-11-25", "2025-06-18")


# --- is_stateless_request -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "body", "modern"),
    [
        (None, None, False),  # nothing named: legacy (initialize, or stateless 2025)
        ("2025-06-18", None, False),
        ("2025-11-25", None, False),
        (None, "2025-06-18", False),
        (None, "2025-11-25", False),
        ("2025-06-18", "2025-11-25", False),
        ("2025-11-25", "2025-11-25", False),
        ("2026-07-28", None, True),
        (None, "2026-07-28", True),
        ("2026-07-28", "2026-07-28", True),
        ("2025-11-25", "2026-07-28", True),  # either one naming a modern revision is enough
        ("2026-07-28", "2025-11-25", True),
        ("v999", None, False),  # an unknown header alone: a 2025 request, legacy 400/-32022
        (None, "v999", True),  # an unknown _meta version is modern, so that it gets -32022
        ("1900-01-01", "1900-01-01", True),
        ("2025-03-26", None, False),  # a 2025 version mcpkit does not know: legacy -32022
        ("", None, False),
        (None, "", True),
        ("2025-11-25 ", None, False),  # exact strings: not the modern wire, so legacy
        ("2025-11-25", "v999", True),
    ],
)
def test_is_stateless_request_truth_table(
    header: str | None, body: str | None, modern: bool
) -> None:
    assert is_stateless_request(header, meta(body)) is modern


def test_is_stateless_request_ignores_client_capabilities() -> None:
    assert is_stateless_request(None, RequestMeta(client_capabilities=JsonObject())) is False
    assert is_stateless_request("2026-07-28", RequestMeta()) is True


# --- select_stateless -----------------------------------------------------------------------------


@pytest.mark.parametrize("served", [ALL, MODERN_ONLY, JUNE_AND_MODERN])
def test_select_stateless_serves_2026_07_28(served: frozenset[Revision]) -> None:
    assert select_stateless("2026-07-28", meta(), served) is MODERN


def test_select_stateless_accepts_any_collection_of_served_revisions() -> None:
    assert select_stateless("2026-07-28", meta(), [MODERN]) is MODERN
    assert select_stateless("2026-07-28", meta(), (NOVEMBER, MODERN)) is MODERN


def test_select_stateless_accepts_non_empty_client_capabilities() -> None:
    capabilities = JsonObject({"elicitation": JsonObject()})
    assert select_stateless("2026-07-28", meta(capabilities=capabilities), ALL) is MODERN


@pytest.mark.parametrize("header", [None, "2026-07-28", "v999", "2025-11-25"])
@pytest.mark.parametrize("served", [ALL, MODERN_ONLY, LEGACY_ONLY])
def test_missing_meta_version_is_invalid_params_first(
    header: str | None, served: frozenset[Revision]
) -> None:
    """a missing ``_meta`` protocol version is -32602 before any header check."""
    error = refused(InvalidParams, header, meta(None), served)
    assert (error.jsonrpc_code, error.http_status, error.data) == (-32602, 400, None)
    refused(InvalidParams, header, RequestMeta(), served)


def test_missing_client_capabilities_with_everything_else_right_is_invalid_params() -> None:
    error = refused(InvalidParams, "2026-07-28", meta(capabilities=None), ALL)
    assert (error.jsonrpc_code, error.http_status, error.data) == (-32602, 400, None)


@pytest.mark.parametrize(
    ("header", "body", "served"),
    [
        (None, "2026-07-28", ALL),  # header absent
        ("2025-11-25", "2026-07-28", ALL),  # header disagrees
        ("v999", "v999", ALL),  # unknown version
        ("2026-07-28", "2026-07-28", LEGACY_ONLY),  # unserved version
    ],
)
def test_missing_client_capabilities_is_invalid_params_before_other_refusals(
    header: str | None, body: str, served: frozenset[Revision]
) -> None:
    refused(InvalidParams, header, meta(body, capabilities=None), served)


@pytest.mark.parametrize(
    ("header", "body"),
    [
        (None, "2026-07-28"),  # required header absent
        ("2025-11-25", "2026-07-28"),
        ("2026-07-28", "2025-11-25"),
        ("2026-07-28", "v999"),  # header 2026-07-28, body v999: -32020, not -32022
        ("v999", "2026-07-28"),
        ("v998", "v999"),
        ("2026-07-28 ", "2026-07-28"),  # exact comparison
        ("", "2026-07-28"),
    ],
)
@pytest.mark.parametrize("served", [ALL, MODERN_ONLY, LEGACY_ONLY])
def test_header_absent_or_different_from_meta_is_header_mismatch_before_unsupported(
    header: str | None, body: str, served: frozenset[Revision]
) -> None:
    error = refused(HeaderMismatch, header, meta(body), served)
    named = {"header": "mcp-protocol-version"}
    assert (error.jsonrpc_code, error.http_status, error.data) == (-32020, 400, named)


@pytest.mark.parametrize(
    ("version", "served", "expected"),
    [
        ("v999", ALL, EVERY_WIRE),  # header and body both v999: -32022
        ("1900-01-01", MODERN_ONLY, ["2026-07-28"]),
        ("2025-03-26", JUNE_AND_MODERN, ["2026-07-28", "2025-06-18"]),
        ("2026-07-28", LEGACY_ONLY, ["2025-11-25", "2025-06-18"]),  # known, not served
        ("2025-11-25", ALL, EVERY_WIRE),  # served, but a 2025 revision is not modern
        ("2025-06-18", MODERN_ONLY, ["2026-07-28"]),
    ],
)
def test_unknown_or_unserved_version_is_unsupported_with_supported_and_requested(
    version: str, served: frozenset[Revision], expected: list[str]
) -> None:
    unsupported(
        {"supported": expected, "requested": version},
        select_stateless,
        version,
        meta(version),
        served,
    )


def test_unsupported_error_is_valid_against_the_official_schema() -> None:
    with pytest.raises(UnsupportedProtocolVersion) as caught:
        select_stateless("1900-01-01", meta("1900-01-01"), ALL)
    response = error_response(caught.value)
    assert response["error"] == {
        "code": -32022,
        "message": "Unsupported protocol version",
        "data": {"supported": EVERY_WIRE, "requested": "1900-01-01"},
    }
    assert schema_errors("2026-07-28", "UnsupportedProtocolVersionError", response) == []


def test_every_unsupported_entry_is_a_served_version() -> None:
    """Conformance: every ``data.supported`` entry appears in ``supportedVersions``."""
    with pytest.raises(UnsupportedProtocolVersion) as caught:
        select_stateless("v999", meta("v999"), JUNE_AND_MODERN)
    assert caught.value.data is not None
    assert caught.value.data["supported"] == list(supported(JUNE_AND_MODERN))


def test_unsupported_never_echoes_an_overlong_version() -> None:
    version = "9" * 65
    unsupported({"supported": EVERY_WIRE}, select_stateless, version, meta(version), ALL)
    version = "9" * 64
    unsupported(
        {"supported": EVERY_WIRE, "requested": version},
        select_stateless,
        version,
        meta(version),
        ALL,
    )


# --- select_handshake -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("served", "expected"),
    [
        (ALL, NOVEMBER),
        (LEGACY_ONLY, NOVEMBER),
        (JUNE_AND_MODERN, JUNE),
        (frozenset({JUNE}), JUNE),
        (frozenset({NOVEMBER, MODERN}), NOVEMBER),
    ],
)
def test_legacy_without_header_is_the_newest_served_2025_revision(
    served: frozenset[Revision], expected: Revision
) -> None:
    """docs/design/server.md §1.5.  Note: the MCP specification says to assume 2025-03-26 (which
    mcpkit does not serve) and Soklet requires the header unless the endpoint serves exactly one
    2025 revision; this pins the documented choice."""
    assert select_handshake(None, served) is expected


def test_legacy_without_header_at_a_modern_only_endpoint_is_unsupported() -> None:
    unsupported({"supported": ["2026-07-28"]}, select_handshake, None, MODERN_ONLY)


@pytest.mark.parametrize(
    ("header", "served", "expected"),
    [
        ("2025-06-18", ALL, JUNE),
        ("2025-11-25", ALL, NOVEMBER),
        ("2025-06-18", LEGACY_ONLY, JUNE),
        ("2025-06-18", JUNE_AND_MODERN, JUNE),
        ("2025-11-25", frozenset({NOVEMBER}), NOVEMBER),
    ],
)
def test_legacy_header_naming_a_served_2025_revision_selects_it(
    header: str, served: frozenset[Revision], expected: Revision
) -> None:
    assert select_handshake(header, served) is expected


def test_select_handshake_accepts_any_collection_of_served_revisions() -> None:
    assert select_handshake(None, [JUNE, NOVEMBER]) is NOVEMBER
    assert select_handshake("2025-06-18", (JUNE,)) is JUNE


@pytest.mark.parametrize(
    ("header", "served", "expected"),
    [
        ("2025-11-25", JUNE_AND_MODERN, ["2026-07-28", "2025-06-18"]),  # known, unserved
        ("2025-06-18", frozenset({NOVEMBER}), ["2025-11-25"]),
        ("2026-07-28", ALL, EVERY_WIRE),  # served, but not a 2025 revision
        ("2026-07-28", LEGACY_ONLY, ["2025-11-25", "2025-06-18"]),
        ("2025-03-26", ALL, EVERY_WIRE),  # unknown to mcpkit
        ("v999", LEGACY_ONLY, ["2025-11-25", "2025-06-18"]),
        ("", ALL, EVERY_WIRE),
        (" 2025-11-25", ALL, EVERY_WIRE),
    ],
)
def test_legacy_header_naming_anything_else_is_unsupported_400(
    header: str, served: frozenset[Revision], expected: list[str]
) -> None:
    unsupported({"supported": expected, "requested": header}, select_handshake, header, served)


# --- negotiate (initialize) --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("requested", "served", "expected"),
    [
        ("2025-06-18", ALL, JUNE),  # a served 2025 revision is echoed
        ("2025-11-25", ALL, NOVEMBER),
        ("2025-06-18", LEGACY_ONLY, JUNE),
        ("2025-06-18", JUNE_AND_MODERN, JUNE),
        ("2025-11-25", frozenset({NOVEMBER, MODERN}), NOVEMBER),
    ],
)
def test_negotiate_echoes_a_requested_served_2025_revision(
    requested: str, served: frozenset[Revision], expected: Revision
) -> None:
    assert negotiate(requested, served) is expected


@pytest.mark.parametrize(
    ("requested", "served", "expected"),
    [
        ("2099-01-01", ALL, NOVEMBER),  # unknown: the newest served 2025 revision, no error
        ("2025-03-26", LEGACY_ONLY, NOVEMBER),
        ("2026-07-28", ALL, NOVEMBER),  # initialize never negotiates the stateless revision
        ("2025-11-25", JUNE_AND_MODERN, JUNE),  # known, unserved
        ("2025-06-18", frozenset({NOVEMBER}), NOVEMBER),
        (" 2025-06-18", ALL, NOVEMBER),
        (None, ALL, NOVEMBER),  # not a string
        (20250618, LEGACY_ONLY, NOVEMBER),
        (JsonObject(), frozenset({JUNE}), JUNE),
        (JUNE, ALL, NOVEMBER),  # a Revision is not its wire string
    ],
)
def test_negotiate_counteroffers_the_newest_served_2025_revision(
    requested: object, served: frozenset[Revision], expected: Revision
) -> None:
    assert negotiate(requested, served) is expected


def test_negotiate_accepts_any_collection_of_served_revisions() -> None:
    assert negotiate("2025-06-18", [JUNE, NOVEMBER]) is JUNE
    assert negotiate("x", (JUNE, NOVEMBER)) is NOVEMBER


@pytest.mark.parametrize(
    ("requested", "data"),
    [
        ("2025-06-18", {"supported": ["2026-07-28"], "requested": "2025-06-18"}),
        ("2026-07-28", {"supported": ["2026-07-28"], "requested": "2026-07-28"}),
        ("v999", {"supported": ["2026-07-28"], "requested": "v999"}),
        (None, {"supported": ["2026-07-28"]}),  # nothing that could be echoed
        (7, {"supported": ["2026-07-28"]}),
    ],
)
def test_negotiate_at_a_modern_only_endpoint_is_unsupported(
    requested: object, data: dict[str, Any]
) -> None:
    """a modern-only server names its versions to a legacy ``initialize``."""
    unsupported(data, negotiate, requested, MODERN_ONLY)
