"""The server's unchecked constructors build exactly what the checked constructors build.

``unchecked`` (and ``server_context``, ``server_arguments`` and ``structured_result`` on top of
it) skips the field checks for values the framework has already validated.  It must still set
every field it is given, in order, on a frozen value that reads, compares, hashes and writes
like one built through ``__init__``.
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
from mcpkit.model._checks import unchecked
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


# --- unchecked ---------------------------------------------------------------------------------


def test_unchecked_sets_every_field_given_and_checks_nothing() -> None:
    output = unchecked(ToolOutput, content="not blocks", structured_content=1.5, is_error=None)
    assert _fields(output) == [
        ("content", "not blocks"),
        ("structured_content", 1.5),
        ("is_error", None),
    ]
    with pytest.raises(dataclasses.FrozenInstanceError):
        output.is_error = True  # type: ignore[misc]


def test_unchecked_sets_fields_in_the_order_given() -> None:
    seen: list[str] = []

    class Recording:
        __slots__ = ("a", "b", "c")

        def __setattr__(self, name: str, value: object) -> None:  # pragma: no cover - bypassed
            raise AssertionError("unchecked must not go through __setattr__")

    class Slot:
        def __init__(self, name: str) -> None:
            self.name = name

        def __set__(self, obj: object, value: object) -> None:
            seen.append(self.name)

    class Ordered(Recording):
        __slots__ = ()
        a = Slot("a")
        b = Slot("b")
        c = Slot("c")

    unchecked(Ordered, c=3, a=1, b=2)
    assert seen == ["c", "a", "b"]


def test_unchecked_refuses_a_name_that_is_not_a_field_as_before() -> None:
    with pytest.raises(AttributeError):
        unchecked(ToolOutput, content=(), nope=1)


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
