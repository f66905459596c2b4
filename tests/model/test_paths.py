"""Endpoint path validation: EP-02..06 ("MCP Endpoint Authoring").

Every refusal is a ``ConfigurationError`` whose message names the rule; a valid path is
returned as the same object, never rewritten (EP-04).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.errors import ConfigurationError
from mcpkit.model._paths import validate_endpoint_path

VALID = [
    "/mcp",
    "/inventory/mcp",
    "/a",
    "/a/b/c/d/e",
    "/v1.0/mcp",
    "/.well-known/mcp",  # a dot inside a segment is not a dot segment
    "/...",  # three dots is an ordinary segment
    "/a..b",
    "/.a",
    "/~user/mcp",
    "/a-b_c.d~e",
    "/caf%C3%A9",  # non-ASCII, percent-encoded with uppercase hex (EP-05)
    "/a%20b",  # an encoded space is a distinct raw spelling, not whitespace
    "/a%2Fb",  # an encoded slash stays inside its segment
    "/%25",  # an encoded percent sign
    "/%FF",  # encoded bytes need not be UTF-8
    "/a:b@c",
    "/!$&'()*+,;=",
    "/tenant=1;v=2",
    "/0/1/2",
]

INVALID: list[tuple[Any, str]] = [
    (b"/mcp", "must be a str"),
    (None, "must be a str"),
    ("", "absolute"),
    ("mcp", "absolute"),
    ("inventory/mcp", "absolute"),
    ("http://host/mcp", "absolute"),
    ("/", "root"),
    ("/café", "ASCII"),
    ("/mcp\u00a0", "ASCII"),
    ("/a b", "whitespace"),
    ("/mcp\t", "whitespace"),
    ("/mcp\n", "whitespace"),
    ("/\x00", "control"),
    ("/a\x7fb", "control"),
    (" /mcp", "whitespace"),
    ("/mcp?x=1", "query"),
    ("/mcp?", "query"),
    ("/mcp#frag", "fragment"),
    ("/mcp#", "fragment"),
    ("/mcp/", "end with '/'"),
    ("/a/b/", "end with '/'"),
    ("//mcp", "repeated slashes"),
    ("/a//b", "repeated slashes"),
    ("/.", "dot segments"),
    ("/..", "dot segments"),
    ("/a/./b", "dot segments"),
    ("/a/../b", "dot segments"),
    ("/a/.", "dot segments"),
    ("/%2E", "dot segments"),
    ("/%2e", "dot segments"),
    ("/a/%2E%2E/b", "dot segments"),
    ("/a/.%2E", "dot segments"),
    ("/a/%2e.", "dot segments"),
    ("/%", "two hex digits"),
    ("/a%2", "two hex digits"),
    ("/a%zz", "two hex digits"),
    ("/a%G1", "two hex digits"),
    ("/caf%c3%a9", "uppercase hex"),
    ("/a%2f", "uppercase hex"),
    ("/%41", "unreserved 'A'"),
    ("/a%7E", "unreserved '~'"),
    ("/a%2D", "unreserved '-'"),
    ("/%2E%2E%2E", "unreserved '.'"),
    ("/a%00", "control"),
    ("/a%1F", "control"),
    ("/a%7F", "control"),
    ("/items/{sku}", "path parameters"),
    ("/a}", "path parameters"),
    ("/a[1]", "'['"),
    ("/a\\b", "'\\\\'"),
    ('/a"b', "'\"'"),
    ("/a<b>", "'<'"),
    ("/a^b", "'^'"),
    ("/a`b", "'`'"),
    ("/a|b", "'|'"),
]


def test_the_table_is_large_enough() -> None:
    assert len(VALID) + len(INVALID) >= 40


@pytest.mark.parametrize("path", VALID)
def test_valid_paths_are_returned_unchanged_EP_02_EP_04(path: str) -> None:
    assert validate_endpoint_path(path) is path


@pytest.mark.parametrize(("path", "rule"), INVALID)
def test_invalid_paths_are_refused_naming_the_rule_EP_02_EP_03(path: Any, rule: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        validate_endpoint_path(path)
    assert rule in str(caught.value)


def test_non_ascii_must_be_percent_encoded_EP_05() -> None:
    with pytest.raises(ConfigurationError, match="percent-encode non-ASCII"):
        validate_endpoint_path("/résumé")
    assert validate_endpoint_path("/r%C3%A9sum%C3%A9") == "/r%C3%A9sum%C3%A9"


def test_paths_have_no_parameters_EP_06() -> None:
    with pytest.raises(ConfigurationError, match="cannot have path parameters"):
        validate_endpoint_path("/tenants/{tenant}/mcp")


def test_the_message_shows_the_path_for_the_developer() -> None:
    with pytest.raises(ConfigurationError, match=r"'/mcp/'"):
        validate_endpoint_path("/mcp/")


_PCHAR_ALPHABET = "abcXYZ019-._~!$&'()*+,;=:@"


@given(st.lists(st.text(_PCHAR_ALPHABET, min_size=1, max_size=8), min_size=1, max_size=5))
def test_pchar_segments_are_valid_unless_dot_segments_EP_03(segments: list[str]) -> None:
    path = "/" + "/".join(segments)
    if any(segment in (".", "..") for segment in segments):
        with pytest.raises(ConfigurationError, match="dot segments"):
            validate_endpoint_path(path)
    else:
        assert validate_endpoint_path(path) is path


@given(st.text(max_size=30))
def test_any_string_is_accepted_unchanged_or_refused_EP_04(path: str) -> None:
    try:
        result = validate_endpoint_path(path)
    except ConfigurationError:
        return
    assert result is path
    assert path.startswith("/") and path.isascii() and not path.endswith("/")
