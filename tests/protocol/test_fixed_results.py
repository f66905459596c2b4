"""The results the framework writes itself (docs/design/server.md §1.6; AN-10, EP-07, RV-05):
``server/discover``, ``initialize``, empty acks and the
server capabilities, exact and valid against the official (closed) schemas."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from mcpkit.json import JsonObject
from mcpkit.model import (
    CachePolicy,
    Completion,
    Endpoint,
    Implementation,
    PromptArgument,
    PromptRegistration,
    RequestContext,
    Revision,
)
from mcpkit.protocol import SERVER_INFO_KEY
from mcpkit.protocol._fixed_results import (
    discover_result,
    empty_result,
    initialize_result,
    server_capabilities,
)

from ..spec_schemas import schema_errors
from .samples import (
    ALL,
    IMPLEMENTATION,
    JUNE,
    MODERN,
    NOVEMBER,
    PATH,
    REVISIONS,
    endpoint,
    raw_tool,
    summary,
    wire,
)

LEGACY = [JUNE, NOVEMBER]
INSTRUCTIONS = "Prefer inventory.search before reading an item."
FULL_INFO = {
    "name": "inventory",
    "version": "1.0.0",
    "title": "Inventory",
    "description": "Stock levels",
    "websiteUrl": "https://example.com",
    "icons": [
        {"src": "https://example.com/icon.svg", "mimeType": "image/svg+xml", "sizes": ["any"]}
    ],
}
JUNE_INFO = {"name": "inventory", "title": "Inventory", "version": "1.0.0"}
EVERYTHING: dict[str, Any] = {"tools": {}, "prompts": {}, "resources": {}, "logging": {}}


def check(revision: Revision, definition: str, value: object) -> Any:
    """``value`` as a client decodes it, after asserting it is valid for ``revision``."""
    decoded = wire(value)
    assert schema_errors(revision.wire, definition, decoded) == []
    return decoded


def complete(ctx: RequestContext, value: str, arguments: Mapping[str, str]) -> Completion:
    return Completion(())


def bare(revisions: frozenset[Revision] = ALL, **options: Any) -> Endpoint:
    """An endpoint with no operations and the smallest implementation."""
    return Endpoint(PATH, Implementation("srv", "2.0"), revisions, **options)


# --- server_capabilities -----------------------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
def test_server_capabilities_are_the_endpoints_plus_logging(revision: Revision) -> None:
    built = endpoint()
    assert wire(server_capabilities(built, revision)) == EVERYTHING
    assert schema_errors(revision.wire, "ServerCapabilities", EVERYTHING) == []
    assert wire(built.capabilities(revision)) == {"tools": {}, "prompts": {}, "resources": {}}


@pytest.mark.parametrize("revision", REVISIONS)
def test_server_capabilities_of_an_endpoint_without_operations_is_logging_only(
    revision: Revision,
) -> None:
    capabilities = server_capabilities(bare(), revision)
    assert isinstance(capabilities, JsonObject)
    assert wire(capabilities) == {"logging": {}}


def test_server_capabilities_follow_what_selects_the_revision() -> None:
    with_completions = PromptRegistration.create(
        name="p",
        revisions=frozenset({NOVEMBER}),
        handler=summary,
        arguments=(PromptArgument("sku"),),
        completions={"sku": complete},
    )
    built = bare(tools=(raw_tool("t", frozenset({MODERN})),), prompts=(with_completions,))
    assert wire(server_capabilities(built, JUNE)) == {"logging": {}}
    assert wire(server_capabilities(built, NOVEMBER)) == {
        "prompts": {},
        "completions": {},
        "logging": {},
    }
    assert wire(server_capabilities(built, MODERN)) == {"tools": {}, "logging": {}}


# --- discover_result ---------------------------------------------------------------------------


def test_discover_result_exact_with_instructions() -> None:
    built = endpoint(instructions=INSTRUCTIONS)
    body = check(
        MODERN, "DiscoverResult", discover_result(built, MODERN, CachePolicy(3_600_000, "public"))
    )
    assert list(body) == [
        "resultType",
        "supportedVersions",
        "capabilities",
        "instructions",
        "ttlMs",
        "cacheScope",
        "_meta",
    ]
    assert body == {
        "resultType": "complete",
        "supportedVersions": ["2026-07-28", "2025-11-25", "2025-06-18"],
        "capabilities": EVERYTHING,
        "instructions": INSTRUCTIONS,
        "ttlMs": 3_600_000,
        "cacheScope": "public",
        "_meta": {SERVER_INFO_KEY: FULL_INFO},
    }


def test_discover_result_exact_without_instructions() -> None:
    built = bare(frozenset({MODERN}))
    body = check(
        MODERN, "DiscoverResult", discover_result(built, MODERN, CachePolicy.PRIVATE_NO_CACHE)
    )
    assert body == {
        "resultType": "complete",
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"logging": {}},
        "ttlMs": 0,
        "cacheScope": "private",
        "_meta": {SERVER_INFO_KEY: {"name": "srv", "version": "2.0"}},
    }
    assert "serverInfo" not in body  # only in _meta


def test_discover_result_omits_empty_instructions() -> None:
    built = bare(frozenset({MODERN}), instructions="")
    body = check(MODERN, "DiscoverResult", discover_result(built, MODERN, CachePolicy(1, "public")))
    assert set(body) == {
        "resultType",
        "supportedVersions",
        "capabilities",
        "ttlMs",
        "cacheScope",
        "_meta",
    }


@pytest.mark.parametrize(
    ("revisions", "expected"),
    [
        (frozenset({MODERN, JUNE}), ["2026-07-28", "2025-06-18"]),
        (frozenset({MODERN, NOVEMBER}), ["2026-07-28", "2025-11-25"]),
        (ALL, ["2026-07-28", "2025-11-25", "2025-06-18"]),
    ],
)
def test_discover_supported_versions_are_every_served_revision_newest_first(
    revisions: frozenset[Revision], expected: list[str]
) -> None:
    """The same list as -32022 ``data.supported`` (conformance cross-checks the two)."""
    result = discover_result(bare(revisions), MODERN, CachePolicy(5, "private"))
    assert wire(result)["supportedVersions"] == expected


def test_discover_result_capabilities_are_the_revisions() -> None:
    built = bare(tools=(raw_tool("t", frozenset({JUNE})),))
    body = check(MODERN, "DiscoverResult", discover_result(built, MODERN, CachePolicy(5, "public")))
    assert body["capabilities"] == {"logging": {}}


def test_discover_result_is_built_fresh_and_leaves_the_endpoint_alone() -> None:
    built = endpoint()
    first = discover_result(built, MODERN, CachePolicy(5, "public"))
    second = discover_result(built, MODERN, CachePolicy(5, "public"))
    assert first == second
    assert "logging" not in built.capabilities(MODERN)


# --- initialize_result -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("revision", "info"), [(JUNE, JUNE_INFO), (NOVEMBER, FULL_INFO)], ids=["june", "november"]
)
def test_initialize_result_exact_with_instructions(
    revision: Revision, info: dict[str, Any]
) -> None:
    built = endpoint(instructions=INSTRUCTIONS)
    body = check(revision, "InitializeResult", initialize_result(built, revision))
    assert list(body) == ["protocolVersion", "capabilities", "serverInfo", "instructions"]
    assert body == {
        "protocolVersion": revision.wire,
        "capabilities": EVERYTHING,
        "serverInfo": info,
        "instructions": INSTRUCTIONS,
    }


@pytest.mark.parametrize("revision", LEGACY)
def test_initialize_result_exact_without_instructions(revision: Revision) -> None:
    body = check(revision, "InitializeResult", initialize_result(bare(), revision))
    assert body == {
        "protocolVersion": revision.wire,
        "capabilities": {"logging": {}},
        "serverInfo": {"name": "srv", "version": "2.0"},
    }


@pytest.mark.parametrize("revision", LEGACY)
def test_initialize_result_omits_empty_instructions(revision: Revision) -> None:
    body = check(revision, "InitializeResult", initialize_result(bare(instructions=""), revision))
    assert set(body) == {"protocolVersion", "capabilities", "serverInfo"}


def test_june_initialize_server_info_has_only_name_title_version() -> None:
    """2025-06-18 ``Implementation`` knows only ``name``, ``title`` and ``version`` (the closed
    schema would refuse the rest); 2025-11-25 gets everything (RV-05: the app's version)."""
    june = check(JUNE, "InitializeResult", initialize_result(endpoint(), JUNE))["serverInfo"]
    assert set(june) == {"name", "title", "version"}
    full = wire(initialize_result(endpoint(), NOVEMBER))["serverInfo"]
    assert schema_errors(JUNE.wire, "Implementation", full) != []
    assert full == wire(IMPLEMENTATION.to_json())


def test_initialize_result_has_no_2026_members() -> None:
    for revision in LEGACY:
        body = wire(initialize_result(endpoint(), revision))
        assert not {"resultType", "ttlMs", "cacheScope", "_meta"} & set(body)


# --- empty_result ------------------------------------------------------------------------------


@pytest.mark.parametrize("revision", LEGACY)
def test_empty_result_on_2025_is_an_empty_object(revision: Revision) -> None:
    result = empty_result(revision)
    assert isinstance(result, JsonObject)
    assert check(revision, "EmptyResult", result) == {}


def test_empty_result_on_2026_is_a_complete_result() -> None:
    result = empty_result(MODERN)
    assert isinstance(result, JsonObject)
    assert check(MODERN, "EmptyResult", result) == {"resultType": "complete"}
    assert schema_errors(MODERN.wire, "EmptyResult", {}) != []  # resultType is required
