"""The method table: which client requests each revision answers (anything else is -32601),
one row per method, and the revision table's ``stateless`` flag it is named by."""

from __future__ import annotations

import pytest

from mcpkit.model import Revision
from mcpkit.protocol import profile
from mcpkit.server._operations import METHODS

JUNE, NOVEMBER, MODERN = Revision.V2025_06_18, Revision.V2025_11_25, Revision.V2026_07_28
COMMON = {
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "completion/complete",
}


def methods(revision: Revision) -> set[str]:
    return {method.name for method in METHODS if revision in method.revisions}


def test_only_2026_07_28_is_stateless() -> None:
    assert [profile(r).stateless for r in (JUNE, NOVEMBER, MODERN)] == [False, False, True]
    assert all(profile(r).stateless is (not r.has_handshake) for r in Revision)


def test_one_row_per_method() -> None:
    names = [method.name for method in METHODS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("revision", [JUNE, NOVEMBER])
def test_2025_methods_exact(revision: Revision) -> None:
    assert methods(revision) == COMMON | {
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    }


def test_only_subscriptions_need_a_session() -> None:
    needs = {method.name for method in METHODS if method.session}
    assert needs == {"resources/subscribe", "resources/unsubscribe"}


def test_2026_methods_exact() -> None:
    assert methods(MODERN) == COMMON | {
        "server/discover",
        "subscriptions/listen",
        "tasks/get",
        "tasks/update",
        "tasks/cancel",
        "skills/list",
        "skills/get",
        "resources/directory/read",
    }


def test_only_listen_needs_an_endpoint_that_serves_it() -> None:
    assert {method.name for method in METHODS if method.listen} == {"subscriptions/listen"}


@pytest.mark.parametrize(
    "method",
    ["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"],
)
def test_methods_removed_in_2026_are_not_served(method: str) -> None:
    """Methods of the handshake revisions that 2026-07-28 removed are -32601 there."""
    assert method not in methods(MODERN)


@pytest.mark.parametrize("revision", [JUNE, NOVEMBER])
def test_server_discover_is_2026_only(revision: Revision) -> None:
    assert "server/discover" not in methods(revision)
    assert "server/discover" in methods(MODERN)


@pytest.mark.parametrize("revision", list(Revision))
def test_common_methods_on_every_revision_and_names_exact(revision: Revision) -> None:
    served = methods(revision)
    assert served >= COMMON
    assert "TOOLS/LIST" not in served
    assert "tools/list " not in served
    assert "notifications/initialized" not in served  # notifications are not requests
    assert "" not in served


def test_capability_gates() -> None:
    gates = {method.name: method.capability for method in METHODS}
    assert gates["tools/call"] == gates["tools/list"] == "tools"
    assert gates["prompts/get"] == gates["prompts/list"] == "prompts"
    assert gates["resources/read"] == gates["resources/templates/list"] == "resources"
    assert gates["completion/complete"] == "completions"
    assert gates["initialize"] is gates["ping"] is gates["server/discover"] is None
