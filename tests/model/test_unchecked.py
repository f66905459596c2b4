"""The server's unchecked constructors build exactly what the checked constructors build.

``unchecked_factory`` (and ``server_context``, ``server_arguments`` and ``structured_result`` on
top of it) skips the field checks for values the framework has already validated.  It must
still set every field, in field order, on a frozen value that reads, compares, hashes and
writes like one built through ``__init__``.
"""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.json import JsonObject, JsonValue, encode, from_python
from mcpkit.model import (
    UNSET,
    CompleteResult,
    Revision,
    TextContent,
    ToolOutput,
    server_arguments,
    server_context,
    structured_result,
)
from mcpkit.model._checks import unchecked_factory
from mcpkit.model._context import OperationType, RequestContext, ToolArguments

TEXT = st.text(st.characters(blacklist_categories=["Cs"]), max_size=8)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.decimals(allow_nan=False, allow_infinity=False)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)


def _fields(value: object) -> list[tuple[str, object]]:
    return [(field.name, getattr(value, field.name)) for field in dataclasses.fields(value)]  # type: ignore[arg-type]


# --- unchecked_factory -------------------------------------------------------------------------


def test_unchecked_factory_sets_every_field_given_and_checks_nothing() -> None:
    make = unchecked_factory(ToolOutput)
    output = make("not blocks", 1.5, None)
    assert type(output) is ToolOutput
    assert _fields(output) == [
        ("content", "not blocks"),
        ("structured_content", 1.5),
        ("is_error", None),
    ]
    with pytest.raises(dataclasses.FrozenInstanceError):
        output.is_error = True  # type: ignore[misc]
    by_name = make(is_error=None, structured_content=1.5, content="not blocks")
    assert _fields(by_name) == _fields(output)


def test_unchecked_factory_requires_every_field_and_no_other() -> None:
    make = unchecked_factory(ToolOutput)
    with pytest.raises(TypeError):
        make((), UNSET)
    with pytest.raises(TypeError):
        make((), UNSET, False, nope=1)
    with pytest.raises(TypeError):
        make((), UNSET, False, None)


@dataclasses.dataclass(frozen=True, slots=True)
class _Slotted:
    z: int
    a: int = 0


@dataclasses.dataclass(frozen=True)
class _Mixed(_Slotted):  # inherits two slots, keeps its own fields in __dict__
    m: int = 0
    b: int = 0


def test_unchecked_factory_stores_slots_and_dict_fields_in_field_order() -> None:
    make = unchecked_factory(_Mixed)
    assert make.__name__ == "__unchecked__Mixed"
    mixed = make(1, 2, 3, 4)
    assert type(mixed) is _Mixed
    assert mixed == _Mixed(1, 2, 3, 4) and hash(mixed) == hash(_Mixed(1, 2, 3, 4))
    assert list(vars(mixed).items()) == [("m", 3), ("b", 4)]  # the __dict__ fields, in order
    with pytest.raises(dataclasses.FrozenInstanceError):
        mixed.z = 5  # type: ignore[misc]


# --- server_context --------------------------------------------------------------------------

_CONTEXT_VALUES: dict[str, Any] = {
    "endpoint": object(),
    "revision": Revision.V2026_07_28,
    "method": "tools/call",
    "request_id": 7,
    "operation_name": "add",
    "client_info": JsonObject({"name": "c", "version": "1"}),
    "client_capabilities": JsonObject({"sampling": {}}),
    "meta": JsonObject({"example.com/k": 1}),
    "input_responses": JsonObject({"k": {"action": "decline"}}),
    "request_state": "opaque",
    "framework_state": UNSET,
    "trace": MappingProxyType({"traceparent": "00-x"}),
    "identity": "alice",
    "http_request": object(),
    "state": object(),
}


@pytest.mark.parametrize(
    "method", ["tools/call", "initialize", "subscriptions/listen", "x/unknown", "Tools/call", ""]
)
@pytest.mark.parametrize("revision", list(Revision))
def test_server_context_is_the_checked_context(method: str, revision: Revision) -> None:
    values = {**_CONTEXT_VALUES, "method": method, "revision": revision}
    fast = server_context(**values)
    checked = RequestContext(**values)
    assert type(fast) is RequestContext
    assert _fields(fast) == _fields(checked)
    for name, value in values.items():
        assert getattr(fast, name) is value  # stored as given, never copied
    assert fast.operation_type is OperationType.for_method(method)
    assert repr(fast) == repr(checked)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.method = "other"  # type: ignore[misc]


def test_server_context_with_empty_defaults() -> None:
    empty = JsonObject()
    values = {
        **_CONTEXT_VALUES,
        "request_id": None,
        "operation_name": None,
        "client_info": None,
        "client_capabilities": empty,
        "meta": empty,
        "input_responses": None,
        "request_state": None,
        "framework_state": from_python({"n": 1}),
        "trace": MappingProxyType({}),
        "identity": None,
        "http_request": None,
    }
    assert _fields(server_context(**values)) == _fields(RequestContext(**values))


# --- server_arguments and structured_result ----------------------------------------------------


def test_server_arguments_are_the_checked_arguments() -> None:
    raw = JsonObject({"a": 2, "b": 3})
    converted = ("converted", 5)
    fast = server_arguments(converted, raw)
    checked = ToolArguments(converted=converted, raw=raw)
    assert type(fast) is ToolArguments
    assert fast == checked and repr(fast) == repr(checked)
    assert fast.converted is converted and fast.raw is raw
    assert vars(fast) == vars(checked)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.raw = raw  # type: ignore[misc]


@settings(max_examples=300, deadline=None)
@given(JSON)
def test_structured_result_is_the_checked_result(value: object) -> None:
    structured: JsonValue = from_python(value)
    fast = structured_result(structured)
    checked = CompleteResult.from_tool_structured_content(structured)
    assert type(fast) is CompleteResult and type(fast.payload) is ToolOutput
    assert fast == checked and hash(fast) == hash(checked)
    assert _fields(fast.payload) == _fields(checked.payload)
    assert fast.payload.structured_content is structured
    assert repr(fast) == repr(checked)
    assert encode(fast.to_json()) == encode(checked.to_json())
    assert fast != CompleteResult.from_tool_text("x")


def test_structured_result_keeps_numbers_as_given() -> None:
    fast = structured_result(from_python({"n": Decimal("1.50")}))
    assert encode(fast.to_json()) == b'{"content":[],"structuredContent":{"n":1.50}}'
    assert fast.meta == {} and fast.is_tool
    assert fast.payload == ToolOutput(structured_content={"n": Decimal("1.50")})
    assert fast.payload != ToolOutput(content=(TextContent(text="a"),))
