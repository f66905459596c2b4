"""The revision table: one profile per revision, and the differences the spec
brief and the seeds name (LG-01, LG-06, LG-09, LG-11, IV-01, IV-09, CT-08, CT-09)."""

from __future__ import annotations

import dataclasses

import pytest

from mcpkit.model import Revision
from mcpkit.protocol import CatalogOrder, RevisionProfile, profile

from .samples import JUNE, MODERN, NOVEMBER


def test_every_revision_has_exactly_its_own_profile() -> None:
    for revision in Revision:
        assert isinstance(profile(revision), RevisionProfile)
        assert profile(revision).revision is revision


def test_profiles_are_immutable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        profile(MODERN).icons = False  # type: ignore[misc]


def test_LG_11_LG_09_icons_exist_from_november_2025_on() -> None:
    assert [profile(r).icons for r in (JUNE, NOVEMBER, MODERN)] == [False, True, True]


def test_LG_01_LG_06_structured_content_is_object_only_on_2025() -> None:
    only_objects = [profile(r).structured_content_object_only for r in (JUNE, NOVEMBER, MODERN)]
    assert only_objects == [True, True, False]
    assert all(profile(r).structured_content for r in Revision)
    assert all(profile(r).tool_title and profile(r).tool_output_schema for r in Revision)


def test_result_type_cache_hints_and_server_info_are_2026_only() -> None:
    for revision in Revision:
        row = profile(revision)
        modern = revision is MODERN
        assert (row.result_type, row.cache_hints, row.server_info_meta) == (modern,) * 3


def test_CT_08_CT_09_catalog_order() -> None:
    assert profile(MODERN).catalog_order is CatalogOrder.REGISTRATION
    assert profile(JUNE).catalog_order is profile(NOVEMBER).catalog_order is CatalogOrder.CANONICAL


def test_resource_not_found_codes() -> None:
    codes = [profile(r).resource_not_found_code for r in (JUNE, NOVEMBER, MODERN)]
    assert codes == [-32002, -32002, -32602]


def test_IV_01_IV_09_schema_invalid_arguments() -> None:
    errors = [profile(r).invalid_arguments_as_tool_error for r in (JUNE, NOVEMBER, MODERN)]
    assert errors == [False, True, True]


def test_june_2025_implementation_is_reduced() -> None:
    assert [profile(r).full_implementation for r in (JUNE, NOVEMBER, MODERN)] == [
        False,
        True,
        True,
    ]


def test_elicitation_mode_exists_from_november_2025_on() -> None:
    assert [profile(r).elicitation_mode for r in (JUNE, NOVEMBER, MODERN)] == [False, True, True]


def test_only_november_2025_streams_start_with_a_priming_event() -> None:
    assert [profile(r).priming_event for r in (JUNE, NOVEMBER, MODERN)] == [False, True, False]


def test_only_2026_has_mcp_apps() -> None:
    assert [profile(r).apps for r in (JUNE, NOVEMBER, MODERN)] == [False, False, True]
