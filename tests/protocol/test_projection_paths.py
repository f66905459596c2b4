"""``call_tool_result`` writes exactly what the general projection writes.

A tool result with no application ``_meta`` (the server's common case) takes a shortcut: the
members after the payload (``resultType`` and the ``serverInfo`` ``_meta``) are remembered per
revision and server instead of being rebuilt by ``_finish``.  These tests compare it, byte for
byte and exception for exception, with ``_reference`` below: the projection as it was written
before the shortcut, for varied results, revisions, servers, mirror settings and limits.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcpkit.protocol._projection as projection
from mcpkit.errors import OutputError, OutputFailure
from mcpkit.json import JsonArray, JsonObject, encode, from_python, wrap_array, wrap_object
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.model import (
    UNSET,
    BlobResourceContents,
    CompleteResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    Implementation,
    ResourceLink,
    Revision,
    TextContent,
    ToolOutput,
    structured_result,
)
from mcpkit.protocol import SERVER_INFO_KEY, call_tool_result, implementation_info, profile

from .samples import ICON, IMPLEMENTATION, MODERN, REVISIONS

# --- the reference: the general projection of a tool result, as before the shortcut ----------


def _reference(
    result: CompleteResult,
    revision: Revision,
    *,
    mirror_structured_content: bool = False,
    server_info: Implementation | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> JsonObject:
    output = result.payload
    if not isinstance(output, ToolOutput):
        raise TypeError("expected a CompleteResult with a ToolOutput payload")
    row = profile(revision)
    structured = output.structured_content
    has_structured = row.structured_content and structured is not UNSET
    object_only = row.structured_content_object_only
    if has_structured and object_only and not isinstance(structured, JsonObject):
        raise OutputError(OutputFailure.SCHEMA)
    content = _reference_blocks(output.content, revision)
    if has_structured and mirror_structured_content and not content:
        mirror = projection._mirror(structured, limits)  # unchanged by the shortcut
        if mirror is not None:
            content.append(wrap_object({"type": "text", "text": mirror}))
    body: dict[str, Any] = {"content": wrap_array(content)}
    if has_structured:
        body["structuredContent"] = structured
    if output.is_error:
        body["isError"] = True
    if row.result_type:
        body["resultType"] = "complete"
    meta: dict[str, Any] = dict(result.meta)
    if row.server_info_meta and server_info is not None:
        meta[SERVER_INFO_KEY] = implementation_info(server_info, revision)
    if meta:
        body["_meta"] = wrap_object(meta)
    return wrap_object(body)


def _reference_blocks(content: Iterable[ContentBlock], revision: Revision) -> list[JsonObject]:
    icons = profile(revision).icons
    return [
        block.icons_dropped().to_json()
        if not icons and isinstance(block, ResourceLink)
        else block.to_json()
        for block in content
    ]


# --- inputs --------------------------------------------------------------------------------------

TEXT = st.text(st.characters(blacklist_categories=["Cs"]), max_size=8)
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.decimals(allow_nan=False, allow_infinity=False)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)

_BLOCKS: list[ContentBlock] = [
    TextContent(text="first"),
    ResourceLink(uri="file:///r.pdf", name="r", icons=(ICON,), meta={"example.com/k": 1}),
    ImageContent(data=b"\x89PNG", mime_type="image/png"),
    EmbeddedResource(resource=BlobResourceContents(uri="file:///b", blob=b"\x00")),
]
_SERVERS = [None, IMPLEMENTATION, Implementation("a", "1"), Implementation("a", "1")]
_LIMITS = [
    DEFAULT_LIMITS,
    Limits(max_string_units=64, max_token_units=64),
    Limits(max_response_bytes=8192),
]


@st.composite
def _results(draw: st.DrawFn) -> CompleteResult:
    structured: object = draw(st.just(UNSET) | JSON | st.dictionaries(TEXT, JSON))
    if draw(st.booleans()) and structured is not UNSET:
        return structured_result(from_python(structured))  # the server's own builder
    output = ToolOutput(
        content=tuple(draw(st.lists(st.sampled_from(_BLOCKS), max_size=3))),
        structured_content=structured,
        is_error=draw(st.booleans()),
    )
    meta: dict[str, object] = draw(st.sampled_from([{}, {"example.com/run": 7}, {"a/b": [1, "x"]}]))
    return CompleteResult.with_tool_output(output).replace(meta=meta)


def _outcome(write: Any, *args: Any, **kwargs: Any) -> tuple[bytes | str, object]:
    try:
        written = write(*args, **kwargs)
    except OutputError as error:
        return "OutputError", error.reason
    return encode(written, limits=Limits(max_response_bytes=1 << 24)), _kinds(written)


def _kinds(value: object) -> object:
    """The container types all the way down: the wire values must stay immutable JSON."""
    if isinstance(value, dict):
        return (type(value), [(name, _kinds(member)) for name, member in value.items()])
    if isinstance(value, (list, tuple)):
        return (type(value), [_kinds(item) for item in value])
    return type(value)


@settings(max_examples=600, deadline=None)
@given(
    _results(),
    st.sampled_from(REVISIONS),
    st.sampled_from(_SERVERS),
    st.booleans(),
    st.sampled_from(_LIMITS),
)
def test_call_tool_result_writes_what_the_general_projection_writes(
    result: CompleteResult,
    revision: Revision,
    server_info: Implementation | None,
    mirror: bool,
    limits: Limits,
) -> None:
    options = {"mirror_structured_content": mirror, "server_info": server_info, "limits": limits}
    expected = _outcome(_reference, result, revision, **options)
    assert _outcome(call_tool_result, result, revision, **options) == expected
    assert _outcome(call_tool_result, result, revision, **options) == expected  # remembered


@pytest.mark.parametrize("revision", REVISIONS)
def test_the_remembered_ending_is_bounded_and_never_changed(
    revision: Revision, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = CompleteResult.from_tool_structured_content({"n": 1})
    expected = encode(_reference(result, revision, server_info=IMPLEMENTATION))
    monkeypatch.setattr(projection, "_ENDINGS", {})
    monkeypatch.setattr(projection, "_MAX_REMEMBERED", 0)
    assert encode(call_tool_result(result, revision, server_info=IMPLEMENTATION)) == expected
    assert projection._ENDINGS == {}  # full: computed, not stored
    monkeypatch.setattr(projection, "_MAX_REMEMBERED", 1024)
    for _ in range(3):
        written = call_tool_result(result, revision, server_info=IMPLEMENTATION)
        assert encode(written) == expected
    ((server, row, members),) = projection._ENDINGS.values()
    assert server is IMPLEMENTATION and row is profile(revision)
    assert list(members) == (["resultType", "_meta"] if revision is MODERN else [])
    assert type(written["content"]) is JsonArray and type(written) is JsonObject


def test_equal_servers_each_write_their_own_info() -> None:
    result = CompleteResult.from_tool_structured_content({"n": 1})
    for server in (Implementation("a", "1"), Implementation("a", "2"), Implementation("a", "1")):
        written = call_tool_result(result, MODERN, server_info=server)
        assert written["_meta"] == {SERVER_INFO_KEY: server.to_json()}


def test_implementation_info_is_remembered_but_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    server = Implementation("x", "1", title="X")
    monkeypatch.setattr(projection, "_IMPLEMENTATIONS", {})
    monkeypatch.setattr(projection, "_MAX_REMEMBERED", 0)
    assert implementation_info(server, MODERN) == server.to_json()
    assert projection._IMPLEMENTATIONS == {}  # full: computed, not stored
    monkeypatch.setattr(projection, "_MAX_REMEMBERED", 1024)
    first = implementation_info(server, MODERN)
    assert implementation_info(server, MODERN) is first
