"""The revision table's ``stateless`` and ``methods`` rows: which revision has no handshake, and
which client requests each
revision answers (anything else is -32601)."""

from __future__ import annotations

import pytest

from mcpkit.model import Revision
from mcpkit.protocol import profile

from .samples import JUNE, MODERN, NOVEMBER, REVISIONS

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


def test_only_2026_07_28_is_stateless() -> None:
    assert [profile(r).stateless for r in REVISIONS] == [False, False, True]
    assert all(profile(r).stateless is (not r.is_legacy) for r in Revision)


@pytest.mark.parametrize("revision", [JUNE, NOVEMBER])
def test_2025_methods_exact(revision: Revision) -> None:
    methods = profile(revision).methods
    assert isinstance(methods, frozenset)
    assert methods == COMMON | {"initialize", "ping", "logging/setLevel"}


def test_2026_methods_exact() -> None:
    methods = profile(MODERN).methods
    assert isinstance(methods, frozenset)
    assert methods == COMMON | {"server/discover"}


@pytest.mark.parametrize(
    "method",
    ["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"],
)
def test_methods_removed_in_2026_are_not_served(method: str) -> None:
    """removed legacy methods are -32601 on 2026-07-28."""
    assert method not in profile(MODERN).methods


@pytest.mark.parametrize("revision", [JUNE, NOVEMBER])
def test_server_discover_is_2026_only(revision: Revision) -> None:
    assert "server/discover" not in profile(revision).methods
    assert "server/discover" in profile(MODERN).methods


@pytest.mark.parametrize("revision", REVISIONS)
def test_common_methods_on_every_revision_and_names_exact(revision: Revision) -> None:
    methods = profile(revision).methods
    assert methods >= COMMON
    assert "TOOLS/LIST" not in methods
    assert "tools/list " not in methods
    assert "notifications/initialized" not in methods  # notifications are not requests
    assert "" not in methods


def test_november_methods_are_junes() -> None:
    assert profile(JUNE).methods == profile(NOVEMBER).methods
