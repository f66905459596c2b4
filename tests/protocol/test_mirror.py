"""The structured-content text mirror is a courtesy: left out, never an error, when it would
not fit the output limits (OR-13; the tool builder's ``mirror_structured_content`` option)."""

from __future__ import annotations

from mcpkit.json import JsonObject, decode, encode
from mcpkit.limits import Limits
from mcpkit.model import CompleteResult, Revision
from mcpkit.protocol import call_tool_result

V2026 = Revision.V2026_07_28


def _content(result: JsonObject) -> list[object]:
    content = result["content"]
    assert isinstance(content, tuple | list)
    return list(content)


def test_mirror_is_added_when_it_fits_OR_13() -> None:
    result = CompleteResult.from_tool_structured_content({"count": 3})
    wire = call_tool_result(result, V2026, mirror_structured_content=True)
    (block,) = _content(wire)
    assert isinstance(block, JsonObject)
    assert block["type"] == "text"
    assert decode(str(block["text"]).encode()) == {"count": 3}


def test_mirror_over_the_string_ceiling_is_left_out_OR_13() -> None:
    limits = Limits(max_string_units=64, max_token_units=64)
    small = {"k": "x" * 20}
    big = {"k": "x" * 60}  # each string fits alone; the mirror of the object does not
    fits = call_tool_result(
        CompleteResult.from_tool_structured_content(small),
        V2026,
        mirror_structured_content=True,
        limits=limits,
    )
    assert len(_content(fits)) == 1
    left_out = call_tool_result(
        CompleteResult.from_tool_structured_content(big),
        V2026,
        mirror_structured_content=True,
        limits=limits,
    )
    assert _content(left_out) == []
    assert left_out["structuredContent"] == big
    encode(left_out, limits=limits)  # the response itself is still writable


def test_mirror_that_would_double_past_the_response_ceiling_is_left_out_OR_13() -> None:
    limits = Limits(max_response_bytes=8192)
    value = {"k": "y" * 3000}
    wire = call_tool_result(
        CompleteResult.from_tool_structured_content(value),
        V2026,
        mirror_structured_content=True,
        limits=limits,
    )
    assert _content(wire) == []
    encode(wire, limits=limits)
