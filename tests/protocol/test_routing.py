"""HTTP routing headers and media types (docs/design/server.md §1.4): single headers,
``Mcp-Method`` / ``Mcp-Name`` agreement, the ``Mcp-Name`` bound at the limit and one past it,
``Content-Type`` and ``Accept``, and refusals that never echo."""

from __future__ import annotations

import base64
from collections.abc import Mapping

import pytest

from mcpkit.errors import HeaderMismatch, InvalidRequest
from mcpkit.json import JsonObject
from mcpkit.limits import Limits
from mcpkit.protocol._routing import (
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    NAMED_METHODS,
    HeaderFields,
    Headers,
    accepts,
    check_method_headers,
    decode_header_value,
    header,
    media_type_ok,
)

CANARY = "CANARY-SECRET"
KIB16 = 16 * 1024


def b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode("ascii") + "?="


def check(
    method: str,
    params: Mapping[str, object] | None,
    headers: Headers,
    limits: Limits | None = None,
) -> None:
    """Check against the plain fields and the engine's index of them: same answer."""
    body = None if params is None else JsonObject(params)
    for fields in indexed(headers):
        if limits is None:
            check_method_headers(method, body, fields)
        else:
            check_method_headers(method, body, fields, limits=limits)


def mismatch(method: str, params: Mapping[str, object] | None, headers: Headers) -> HeaderMismatch:
    body = None if params is None else JsonObject(params)
    with pytest.raises(HeaderMismatch):
        check_method_headers(method, body, HeaderFields(headers))
    with pytest.raises(HeaderMismatch) as caught:
        check_method_headers(method, body, headers)
    return caught.value


# --- header -------------------------------------------------------------------------------


def test_header_names() -> None:
    assert (MCP_METHOD_HEADER, MCP_NAME_HEADER) == ("mcp-method", "mcp-name")
    assert dict(NAMED_METHODS) == {
        "tools/call": "name",
        "prompts/get": "name",
        "resources/read": "uri",
        "tasks/get": "taskId",
        "tasks/update": "taskId",
        "tasks/cancel": "taskId",
    }
    with pytest.raises(TypeError):
        NAMED_METHODS["tasks/list"] = "taskId"  # type: ignore[index]


def test_header_returns_the_trimmed_value() -> None:
    headers = (("host", "h"), ("mcp-name", " \t foo bar \t "), ("accept", "*/*"))
    assert header(headers, "mcp-name") == "foo bar"
    assert header(headers, "host") == "h"
    assert header(headers, "mcp-method") is None
    assert header((), "host") is None
    assert header((("x", ""),), "x") == ""
    assert header((("x", " \t "),), "x") == ""


def test_header_trims_only_space_and_tab() -> None:
    assert header((("x", "\u00a0v\r"),), "x") == "\u00a0v\r"


def test_header_names_are_matched_exactly() -> None:
    assert header((("Mcp-Name", "a"),), "mcp-name") is None


def indexed(pairs: Headers) -> list[Headers | HeaderFields]:
    """The same fields as a plain sequence and as the engine's once-built index."""
    return [pairs, HeaderFields(pairs)]


@pytest.mark.parametrize("name", ["mcp-method", "mcp-name", "mcp-protocol-version"])
def test_repeated_mcp_header_is_a_mismatch(name: str) -> None:
    for headers in indexed(((name, "a"), ("other", "b"), (name, "a"))):
        with pytest.raises(HeaderMismatch):
            header(headers, name)


@pytest.mark.parametrize("name", ["host", "content-type", "accept", "origin"])
def test_repeated_other_header_is_an_invalid_request(name: str) -> None:
    for headers in indexed(((name, "a"), (name, "a"))):
        with pytest.raises(InvalidRequest) as caught:
            header(headers, name)
        assert type(caught.value) is InvalidRequest


def test_header_fields_answer_like_a_scan() -> None:
    pairs = (("host", " h:1 "), ("accept", "a"), ("x", "1"), ("x", "2"), ("x", "3"))
    fields = HeaderFields(pairs)
    assert fields.pairs is pairs
    assert fields.raw("host") == " h:1 "  # untrimmed, for the Host check's own parsing
    assert fields.raw("x") is None  # repeated: no single value
    assert fields.raw("absent") is None
    for name in ("host", "accept", "absent"):
        assert fields.get(name) == header(pairs, name)
    with pytest.raises(InvalidRequest):
        fields.get("x")
    unique = HeaderFields((("a", "1"), ("b", "2")))
    assert [unique.raw(name) for name in ("a", "b", "c")] == ["1", "2", None]


def test_header_fields_trim_every_value_once() -> None:
    """Every looked-up value loses only its SP and HTAB ends; ``raw`` sees it untrimmed."""
    pairs = (("a", " \t1\t "), ("b", "\t"), ("c", "x y"), ("d", " \r "))
    for fields in (HeaderFields(pairs), HeaderFields((*pairs, ("e", "1"), ("e", "2")))):
        assert [fields.get(name) for name in "abcdz"] == ["1", "", "x y", "\r", None]
        assert fields.raw("a") == " \t1\t "


# --- decode_header_value ------------------------------------------------------------------


def test_decode_header_value() -> None:
    assert decode_header_value("  plain text ", 100) == "plain text"
    assert decode_header_value(b64("caf\u00e9 \u2603"), 100) == "caf\u00e9 \u2603"
    assert decode_header_value(b64("=?base64?x?="), 100) == "=?base64?x?="
    assert decode_header_value("a" * 8, 8) == "a" * 8
    for raw, limit in (("a" * 9, 8), ("caf\u00e9", 100), ("=?base64?Zm9v?=", 2), ("a\x01", 9)):
        with pytest.raises(HeaderMismatch):
            decode_header_value(raw, limit)
    for payload in ("Zm9v=", "Zm9", "Zm9v YQ==", "Zm9-", "Zm9=", "//4="):
        with pytest.raises(HeaderMismatch):
            decode_header_value("=?base64?" + payload + "?=", 100)


# --- check_method_headers: Mcp-Method -----------------------------------------------------


def test_method_header_agrees() -> None:
    check("tools/list", {}, [("mcp-method", "tools/list")])
    check("tools/list", None, [("mcp-method", " \ttools/list\t ")])
    check("server/discover", None, [("host", "x"), ("mcp-method", "server/discover")])


@pytest.mark.parametrize(
    "value",
    [
        "TOOLS/LIST",
        "Tools/list",
        "tools/lis",
        "tools/list/",
        "",
        "=?base64?dG9vbHMvbGlzdA==?=",  # no encoding for Mcp-Method: literal, so it differs
    ],
)
def test_method_header_must_equal_the_method(value: str) -> None:
    mismatch("tools/list", None, [("mcp-method", value)])


def test_method_header_missing_or_repeated() -> None:
    mismatch("tools/list", None, [])
    mismatch("tools/list", None, [("Mcp-Method", "tools/list")])  # names arrive lower-cased
    mismatch("tools/list", None, [("mcp-method", "tools/list"), ("mcp-method", "tools/list")])


def test_method_header_must_be_visible_ascii() -> None:
    # A latin-1 decoded header can spell a non-ASCII body method byte for byte: still refused.
    mismatch("tools/\u00e9", None, [("mcp-method", "tools/\u00e9")])
    mismatch("a\x01b", None, [("mcp-method", "a\x01b")])
    mismatch("a\tb", None, [("mcp-method", "a\tb")])
    check("a b", None, [("mcp-method", "a b")])


# --- check_method_headers: Mcp-Name -------------------------------------------------------


@pytest.mark.parametrize(("method", "member"), sorted(NAMED_METHODS.items()))
def test_name_header_agrees(method: str, member: str) -> None:
    check(method, {member: "foo"}, [("mcp-method", method), ("mcp-name", "foo")])
    check(method, {member: "foo"}, [("mcp-name", "  foo  "), ("mcp-method", method)])
    check(method, {member: "caf\u00e9"}, [("mcp-method", method), ("mcp-name", b64("caf\u00e9"))])
    check(method, {member: " foo "}, [("mcp-method", method), ("mcp-name", b64(" foo "))])


@pytest.mark.parametrize(("method", "member"), sorted(NAMED_METHODS.items()))
def test_name_header_refused(method: str, member: str) -> None:
    named = {member: "foo"}
    mismatch(method, named, [("mcp-method", method)])
    mismatch(method, named, [("mcp-method", method), ("mcp-name", "Foo")])
    mismatch(method, named, [("mcp-method", method), ("mcp-name", "fo")])
    mismatch(method, named, [("mcp-method", method), ("mcp-name", b64("bar"))])
    mismatch(method, named, [("mcp-method", method), ("mcp-name", "=?base64?Zm9v?")])
    mismatch(method, named, [("mcp-method", method), ("mcp-name", "=?base64?Zm9v=?=")])
    mismatch(method, named, [("mcp-method", method), ("mcp-name", "f\u00f6o")])
    mismatch(method, named, [("mcp-method", method), ("mcp-name", "foo"), ("mcp-name", "foo")])


def test_resources_read_compares_the_uri_not_the_name() -> None:
    params = {"uri": "file:///a.txt", "name": "other"}
    check(
        "resources/read", params, [("mcp-method", "resources/read"), ("mcp-name", "file:///a.txt")]
    )
    mismatch("resources/read", params, [("mcp-method", "resources/read"), ("mcp-name", "other")])
    tool = {"uri": "u", "name": "n"}
    mismatch("tools/call", tool, [("mcp-method", "tools/call"), ("mcp-name", "u")])


@pytest.mark.parametrize("target", [None, 1, True, ["foo"], {"foo": 1}])
def test_name_header_with_a_non_string_target_is_left_to_params(target: object) -> None:
    headers = [("mcp-method", "tools/call"), ("mcp-name", "foo")]
    check("tools/call", {"name": target}, headers)
    check("tools/call", {}, headers)
    check("tools/call", None, headers)
    # Still required, and still decoded.
    mismatch("tools/call", {"name": target}, [("mcp-method", "tools/call")])
    mismatch("tools/call", None, [("mcp-method", "tools/call")])
    mismatch("tools/call", {"name": target}, [("mcp-method", "tools/call"), ("mcp-name", "\x7f")])


@pytest.mark.parametrize("method", ["tools/list", "ping", "tasks/list", "Tools/call"])
def test_name_header_on_another_method_is_refused(method: str) -> None:
    check(method, {"name": "foo"}, [("mcp-method", method)])
    mismatch(method, {"name": "foo"}, [("mcp-method", method), ("mcp-name", "foo")])
    mismatch(method, {"name": "foo"}, [("mcp-method", method), ("mcp-name", "")])


def test_name_header_bound_at_the_limit_and_one_past() -> None:
    at_limit = "n" * KIB16
    headers = [("mcp-method", "tools/call"), ("mcp-name", at_limit)]
    check("tools/call", {"name": at_limit}, headers)
    over = at_limit + "n"
    mismatch("tools/call", {"name": over}, [("mcp-method", "tools/call"), ("mcp-name", over)])
    # Decoded UTF-8 bytes count: 8,192 two-byte characters fit, one more does not.
    wide = "\u00e9" * (KIB16 // 2)
    check("prompts/get", {"name": wide}, [("mcp-method", "prompts/get"), ("mcp-name", b64(wide))])
    wider = wide + "\u00e9"
    mismatch(
        "prompts/get", {"name": wider}, [("mcp-method", "prompts/get"), ("mcp-name", b64(wider))]
    )


def test_decoded_names_are_remembered_but_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Decoding an accepted ``Mcp-Name`` once is an optimisation only: refusals are never
    remembered, and the answer is the same whether the value is remembered or not."""
    import mcpkit.protocol._routing as routing

    monkeypatch.setattr(routing, "_DECODED", {})
    limit = Limits().max_header_param_bytes
    check(
        "tools/call",
        {"name": "caf\u00e9"},
        [("mcp-method", "tools/call"), ("mcp-name", b64("caf\u00e9"))],
    )
    check(
        "tools/call",
        {"name": "caf\u00e9"},
        [("mcp-method", "tools/call"), ("mcp-name", b64("caf\u00e9"))],
    )
    assert dict(routing._DECODED) == {(b64("caf\u00e9"), limit): "caf\u00e9"}
    mismatch("tools/call", {"name": "x"}, [("mcp-method", "tools/call"), ("mcp-name", "\x7f")])
    mismatch("tools/call", {"name": "x"}, [("mcp-method", "tools/call"), ("mcp-name", "y")])
    long = "n" * 300
    check("tools/call", {"name": long}, [("mcp-method", "tools/call"), ("mcp-name", long)])
    assert list(routing._DECODED) == [(b64("caf\u00e9"), limit), ("y", limit)]
    monkeypatch.setattr(routing, "_MAX_ACCEPTED", 0)
    check("tools/call", {"name": "z"}, [("mcp-method", "tools/call"), ("mcp-name", "z")])
    assert ("z", limit) not in routing._DECODED
    mismatch("tools/call", {"name": "x"}, [("mcp-method", "tools/call"), ("mcp-name", "y")])


def test_name_header_bound_follows_limits() -> None:
    small = Limits(max_header_param_bytes=3)
    check("tools/call", {"name": "abc"}, [("mcp-method", "tools/call"), ("mcp-name", "abc")], small)
    with pytest.raises(HeaderMismatch):
        check(
            "tools/call",
            {"name": "abcd"},
            [("mcp-method", "tools/call"), ("mcp-name", "abcd")],
            small,
        )


def test_header_refusals_never_echo() -> None:
    """The refusal names the header (the server's own lower-case name), never a value."""
    cases: list[tuple[str, Mapping[str, object] | None, Headers, str]] = [
        ("tools/list", None, [("mcp-method", CANARY)], "mcp-method"),
        (
            "tools/call",
            {"name": CANARY},
            [("mcp-method", "tools/call"), ("mcp-name", CANARY + "x")],
            "mcp-name",
        ),
        (
            "tools/call",
            {"name": "a"},
            [("mcp-method", "tools/call"), ("mcp-name", b64(CANARY))],
            "mcp-name",
        ),
        (
            "tools/call",
            {"name": "a"},
            [("mcp-method", "tools/call"), ("mcp-name", CANARY + "\x00")],
            "mcp-name",
        ),
        ("ping", None, [("mcp-method", "ping"), ("mcp-name", CANARY)], "mcp-name"),
        ("ping", None, [("mcp-method", "ping"), ("mcp-method", CANARY)], "mcp-method"),
        ("tools/call", {"name": "a"}, [("mcp-method", "tools/call")], "mcp-name"),
    ]
    for method, params, headers, named in cases:
        error = mismatch(method, params, headers)
        assert type(error) is HeaderMismatch
        assert (error.jsonrpc_code, error.http_status) == (-32020, 400)
        assert str(error) == "Header mismatch"
        assert error.args == ("Header mismatch",)
        assert error.data == {"header": named}
        assert CANARY not in repr(error)
        assert error.__cause__ is None
    with pytest.raises(InvalidRequest) as caught:
        header((("host", CANARY), ("host", CANARY)), "host")
    assert caught.value.args == ("Invalid Request",)
    assert caught.value.data is None


# --- media_type_ok ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "application/json",
        "Application/JSON",
        "application/json; charset=utf-8",
        "application/json;charset=UTF-8",
        " \tapplication/json \t; x=y",
        "application/json;",
    ],
)
def test_media_type_ok(value: str) -> None:
    assert media_type_ok(value) is True


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "application/jsonx",
        "application/json-seq",
        "application/*",
        "*/*",
        "text/json",
        "application /json",
        "application/ json",
        "application/json, text/plain",
        "application/vnd.api+json",
        "\u0430pplication/json",  # Cyrillic a
        "application/js\u00f6n",
    ],
)
def test_media_type_refused(value: str | None) -> None:
    assert media_type_ok(value) is False


# --- accepts ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "application/json, text/event-stream",
        "text/event-stream,application/json",
        "Application/JSON, TEXT/Event-Stream",
        "application/json;q=0.9, text/event-stream;q=0.1",
        "application/json; q=1.000 , text/event-stream ; Q = 0.001",
        "*/*",
        "*/*;q=0.5",
        "application/*, text/*",
        "application/json, text/*",
        "application/*, text/event-stream",
        "application/json, */*",
        "text/event-stream, */*;q=0.1",
        "application/json;charset=utf-8, text/event-stream;foo=bar",
        ",, application/json ,\t, text/event-stream ,",
        "text/html, application/json, garbage, text/event-stream",
        "text/event-stream, application/json;q=0, application/json",  # equal rank: any counts
        "\u00e9/\u00e9, application/json, text/event-stream",
    ],
)
def test_accepts_both(value: str) -> None:
    assert accepts(value) is True


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "application/json",
        "text/event-stream",
        "application/*",
        "text/*",
        "text/html, application/xml",
        "application/json, text/event-stream;q=0",
        "application/json;q=0.000, text/event-stream",
        "*/*;q=0",
        "application/json;q=0, */*",  # the specific range decides: JSON refused
        "text/*;q=0, application/json, */*",
        "application/json, text/event-stream;q=2",
        "application/json, text/event-stream;q=1.001",
        "application/json, text/event-stream;q=0.0001",
        "application/json, text/event-stream;q=",
        "application/json, text/event-stream;q=.5",
        "application/json, text/event-stream;q=abc",
        "application/json, */json",
        "application/json, text/",
        "application/json, /event-stream",
        "application/json, text/event-stream-x",
        "application/json, textevent-stream",
        "application/json, te\u00f6xt/event-stream",
        "application/json, text\x01/event-stream",
    ],
)
def test_accepts_refused(value: str | None) -> None:
    assert accepts(value) is False


def test_accepts_one_type() -> None:
    assert accepts("application/json", sse=False) is True
    assert accepts("text/event-stream", sse=False) is False
    assert accepts("text/event-stream", json=False) is True
    assert accepts("application/json", json=False) is False
    assert accepts("application/*;q=0.5", sse=False) is True
    assert accepts("application/json;q=0", sse=False) is False
    assert accepts(None, json=False, sse=False) is True
    assert accepts("", json=False, sse=False) is True


def test_media_type_answers_are_remembered_but_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """As for Accept: remembering an answer never changes it."""
    import mcpkit.protocol._routing as routing

    monkeypatch.setattr(routing, "_MEDIA_TYPES", {})
    assert media_type_ok("application/json") and media_type_ok("application/json")
    assert not media_type_ok("text/plain") and not media_type_ok("text/plain")
    assert routing._MEDIA_TYPES == {"application/json": True, "text/plain": False}
    long = "application/json; " + "x=y; " * 60
    assert media_type_ok(long) and long not in routing._MEDIA_TYPES
    monkeypatch.setattr(routing, "_MAX_ACCEPTED", 0)
    assert media_type_ok("Application/JSON") and "Application/JSON" not in routing._MEDIA_TYPES


def test_accept_answers_are_remembered_but_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parsing an Accept value once is an optimisation only: the answer is the same whether it
    is remembered, the memory is full or the value is too long to keep."""
    import mcpkit.protocol._routing as routing

    monkeypatch.setattr(routing, "_ACCEPTED", {})
    both = "application/json, text/event-stream"
    assert routing.accepts(both) and routing.accepts(both)
    assert dict(routing._ACCEPTED) == {(both, True, True): True}
    long = both + ", " + "x/y, " * 60
    assert routing.accepts(long) and (long, True, True) not in routing._ACCEPTED
    monkeypatch.setattr(routing, "_MAX_ACCEPTED", 0)
    assert not routing.accepts("text/plain")
    assert ("text/plain", True, True) not in routing._ACCEPTED
    assert routing.accepts(None, json=False, sse=False)
