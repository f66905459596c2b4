"""Tool annotations, shapes and request-state modes (SP-02, TR-12, TR-16)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from mcpkit.errors import ConfigurationError
from mcpkit.json import JsonObject
from mcpkit.model._input import RequestStateMode
from mcpkit.model._tool_annotations import ToolAnnotations, ToolShape


def test_sp02_annotations_write_the_protocol_hint_names() -> None:
    annotations = ToolAnnotations(
        read_only=True, destructive=False, idempotent=True, open_world=False, title="Search"
    )
    assert annotations.to_json() == JsonObject(
        {
            "title": "Search",
            "readOnlyHint": True,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        }
    )
    assert list(annotations.to_json()) == [
        "title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint",
    ]  # fmt: skip


def test_sp02_absent_hints_are_left_out_so_unknown_differs_from_false() -> None:
    assert ToolAnnotations().to_json() == JsonObject()
    assert ToolAnnotations(read_only=False).to_json() == JsonObject({"readOnlyHint": False})


def test_tr12_annotations_are_frozen_keyword_only_values() -> None:
    annotations = ToolAnnotations(read_only=True)
    assert annotations == ToolAnnotations(read_only=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        annotations.read_only = False  # type: ignore[misc]
    with pytest.raises(TypeError):
        ToolAnnotations(True)  # type: ignore[call-arg]


@pytest.mark.parametrize("field", ["read_only", "destructive", "idempotent", "open_world"])
@pytest.mark.parametrize("value", [1, 0, "true", 1.0])
def test_sp02_a_hint_must_be_a_real_bool(field: str, value: Any) -> None:
    with pytest.raises(ConfigurationError, match=f"ToolAnnotations.{field}: must be a bool"):
        ToolAnnotations(**{field: value})


def test_sp02_title_must_be_well_formed_text() -> None:
    with pytest.raises(ConfigurationError, match=r"ToolAnnotations\.title: .*surrogate"):
        ToolAnnotations(title="bad \ud800")
    with pytest.raises(ConfigurationError, match=r"ToolAnnotations\.title"):
        ToolAnnotations(title=7)  # type: ignore[arg-type]


def test_sp02_title_is_stored_as_a_plain_str() -> None:
    class Text(str):
        pass

    annotations = ToolAnnotations(title=Text("Search"))
    assert type(annotations.title) is str
    assert annotations.title == "Search"


def test_tr05_one_shape_per_seed_stage() -> None:
    assert [shape.value for shape in ToolShape] == [
        "typed", "typed_task", "advanced", "json_object", "authored",
    ]  # fmt: skip


def test_tr16_request_state_modes_are_soklets_three() -> None:
    assert [mode.name for mode in RequestStateMode] == [
        "NONE", "APPLICATION_PROTECTED", "FRAMEWORK_PROTECTED",
    ]  # fmt: skip
