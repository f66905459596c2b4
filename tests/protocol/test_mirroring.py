"""The ``Mcp-Param-*`` mirrored-header check (MH-02, MH-03, MH-05, MH-11, MH-12, MH-15..MH-18,
MH-20, MH-22): each rule at its edge and one past it, and errors that never echo input."""

from __future__ import annotations

import base64
import time
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import cast

import pytest

from mcpkit.errors import HeaderMismatch
from mcpkit.json import JsonObject, decode
from mcpkit.limits import Limits
from mcpkit.protocol._mirroring import MAX_SAFE_INTEGER, check_mirrored_headers
from mcpkit.schema import HeaderDeclaration, compile_schema

Headers = Sequence[tuple[str, str]] | Mapping[str, str]

TENANT = HeaderDeclaration("Tenant", ("tenant",), "string")
COUNT = HeaderDeclaration("Count", ("count",), "integer")
FLAG = HeaderDeclaration("Flag", ("flag",), "boolean")
NESTED = HeaderDeclaration("Region", ("where", "region"), "string")
KIB16 = 16 * 1024


def b64(text: str | bytes) -> str:
    data = text.encode() if isinstance(text, str) else text
    return "=?base64?" + base64.b64encode(data).decode("ascii") + "?="


def ok(
    declaration: HeaderDeclaration,
    arguments: dict[str, object],
    headers: Headers,
    limits: Limits | None = None,
) -> None:
    if limits is None:
        check_mirrored_headers((declaration,), JsonObject(arguments), headers)
    else:
        check_mirrored_headers((declaration,), JsonObject(arguments), headers, limits=limits)


def refused(
    declaration: HeaderDeclaration, arguments: dict[str, object], headers: Headers
) -> HeaderMismatch:
    with pytest.raises(HeaderMismatch) as caught:
        ok(declaration, arguments, headers)
    return caught.value


# --- MH-18: the fixed error -------------------------------------------------------------------


def test_error_is_fixed_and_never_echoes_input_MH_18() -> None:
    canary = "CANARY-7f3a"
    cases: list[tuple[HeaderDeclaration, dict[str, object], Headers]] = [
        (TENANT, {"tenant": canary}, [("Mcp-Param-Tenant", canary + "x")]),
        (TENANT, {"tenant": canary}, [("Mcp-Param-Tenant", b64(canary + "\u00e9"))]),
        (TENANT, {"tenant": canary}, [("Mcp-Param-Tenant", "=?base64?" + canary + "?=")]),
        (TENANT, {"tenant": canary}, []),
        (TENANT, {}, [("Mcp-Param-Tenant", canary)]),
        (COUNT, {"count": 1}, [("Mcp-Param-Count", canary)]),
        (FLAG, {"flag": True}, [("Mcp-Param-Flag", canary)]),
    ]
    for declaration, arguments, headers in cases:
        error = refused(declaration, arguments, headers)
        assert type(error) is HeaderMismatch
        assert error.jsonrpc_code == -32020
        assert error.http_status == 400
        assert error.message == "Header mismatch"
        for text in (str(error), repr(error), error.message, repr(error.args)):
            assert canary not in text
            assert "CANARY" not in text.upper()
        assert error.__cause__ is None
        assert error.__context__ is None or error.__suppress_context__


def test_no_declarations_accepts_anything() -> None:
    check_mirrored_headers((), JsonObject({}), [("Mcp-Param-X", "\x00")])


# --- MH-02, MH-20, MH-03: presence -----------------------------------------------------------


def test_matching_string_header_is_accepted_MH_02() -> None:
    ok(TENANT, {"tenant": "acme"}, [("Mcp-Param-Tenant", "acme")])
    ok(TENANT, {"tenant": "acme"}, {"Mcp-Param-Tenant": "acme"})


def test_missing_header_for_a_present_argument_is_refused_MH_20() -> None:
    refused(TENANT, {"tenant": "acme"}, [])
    refused(TENANT, {"tenant": "acme"}, [("Mcp-Param-Other", "acme")])
    refused(TENANT, {"tenant": ""}, [])  # an empty string is not null


def test_header_never_supplies_a_missing_or_null_argument_MH_03_MH_20() -> None:
    refused(TENANT, {}, [("Mcp-Param-Tenant", "acme")])
    refused(TENANT, {"tenant": None}, [("Mcp-Param-Tenant", "acme")])
    refused(TENANT, {"tenant": None}, [("Mcp-Param-Tenant", "null")])
    refused(NESTED, {"where": "x"}, [("Mcp-Param-Region", "eu")])  # path through a non-object


def test_absent_or_null_argument_without_header_passes_MH_03() -> None:
    # null/absent value => the header must be absent (an optional argument)
    ok(TENANT, {}, [])
    ok(TENANT, {"tenant": None}, [("Content-Type", "application/json")])
    ok(NESTED, {}, [])
    ok(NESTED, {"where": None}, [])


def test_nested_path_is_followed() -> None:
    ok(NESTED, {"where": {"region": "eu"}}, [("Mcp-Param-Region", "eu")])
    refused(NESTED, {"where": {"region": "eu"}}, [("Mcp-Param-Region", "us")])


def test_declarations_from_a_compiled_schema() -> None:
    schema = compile_schema(
        {
            "type": "object",
            "properties": {
                "tenant": {"type": "string", "x-mcp-header": "Tenant"},
                "n": {"type": "integer", "x-mcp-header": "N"},
                "on": {"type": "boolean", "x-mcp-header": "On"},
            },
        }
    )
    arguments = decode(b'{"tenant":"acme","n":4.0,"on":false}')
    assert isinstance(arguments, JsonObject)
    headers = [("mcp-param-tenant", "acme"), ("MCP-PARAM-N", "4"), ("Mcp-Param-On", "false")]
    check_mirrored_headers(schema.headers, arguments, headers)
    with pytest.raises(HeaderMismatch):
        check_mirrored_headers(schema.headers, arguments, headers[:2])


# --- header names ----------------------------------------------------------------------------


def test_names_match_case_insensitively() -> None:
    for name in ("Mcp-Param-Tenant", "mcp-param-tenant", "MCP-PARAM-TENANT", "mCp-PaRaM-tEnAnT"):
        ok(TENANT, {"tenant": "acme"}, [(name, "acme")])
        ok(TENANT, {"tenant": "acme"}, {name: "acme"})


def test_non_ascii_names_never_fold_onto_a_declared_name() -> None:
    key = HeaderDeclaration("Key", ("key",), "string")
    kelvin = "Mcp-Param-\u212aey"  # KELVIN SIGN lowercases to ASCII "k"
    assert kelvin.lower() == "mcp-param-key"
    refused(key, {"key": "v"}, [(kelvin, "v")])  # not taken for Mcp-Param-Key: missing
    ok(key, {"key": "v"}, [(kelvin, "other"), ("Mcp-Param-Key", "v")])  # and not a repeat


def test_repeated_header_is_refused_in_any_spelling() -> None:
    refused(TENANT, {"tenant": "a"}, [("Mcp-Param-Tenant", "a"), ("Mcp-Param-Tenant", "a")])
    refused(TENANT, {"tenant": "a"}, [("Mcp-Param-Tenant", "a"), ("mcp-param-tenant", "a")])
    refused(TENANT, {"tenant": "a"}, {"Mcp-Param-Tenant": "a", "MCP-PARAM-TENANT": "a"})
    refused(TENANT, {}, [("Mcp-Param-Tenant", "a"), ("Mcp-Param-Tenant", "a")])


def test_undeclared_param_headers_are_ignored() -> None:
    headers = [
        ("Mcp-Param-Tenant", "acme"),
        ("Mcp-Param-Unknown", "\x00 not even valid =?base64?!!?="),
        ("Mcp-Param-Unknown", "repeated"),
        ("Mcp-Param-", ""),
        ("Mcp-Params", "x"),
        ("X-Other", "y"),
    ]
    ok(TENANT, {"tenant": "acme"}, headers)


# --- MH-12 and the specification's value encoding --------------------------------------------


def test_optional_whitespace_around_the_value_is_trimmed() -> None:
    ok(TENANT, {"tenant": "acme"}, [("Mcp-Param-Tenant", "  \tacme \t")])
    ok(TENANT, {"tenant": "a b\tc"}, [("Mcp-Param-Tenant", " a b\tc ")])
    ok(TENANT, {"tenant": " acme "}, [("Mcp-Param-Tenant", " " + b64(" acme ") + "\t")])
    refused(TENANT, {"tenant": " acme"}, [("Mcp-Param-Tenant", " acme")])


def test_base64_sentinel_is_decoded_before_comparing_MH_12() -> None:
    for text in ("acme", "caf\u00e9 \U0001f600", "line\nbreak\x00nul", "", "=?base64?x?="):
        ok(TENANT, {"tenant": text}, [("Mcp-Param-Tenant", b64(text))])
    ok(TENANT, {"tenant": "=?base64?"}, [("Mcp-Param-Tenant", "=?base64?")])  # no close: plain
    ok(TENANT, {"tenant": "=?base64?="}, [("Mcp-Param-Tenant", "=?base64?=")])  # overlap: plain
    ok(TENANT, {"tenant": "x?="}, [("Mcp-Param-Tenant", "x?=")])


def test_sentinel_markers_are_lowercase_and_exact() -> None:
    upper = "=?BASE64?" + base64.b64encode(b"acme").decode() + "?="
    ok(TENANT, {"tenant": upper}, [("Mcp-Param-Tenant", upper)])  # literal, not decoded
    refused(TENANT, {"tenant": "acme"}, [("Mcp-Param-Tenant", upper)])


@pytest.mark.parametrize(
    "payload",
    [
        "YWNtZQ",  # missing padding
        "YWNtZQ=",  # short padding
        "YWNtZQ===",  # excess padding
        "YWN tZQ==",  # whitespace inside
        "YWNt\nZQ==",  # newline inside
        "YWNtZQ==YQ==",  # data after padding
        "=YWNtZQ=",  # leading padding
        "YWNtZR==",  # nonzero trailing bits (decodes to "acme" leniently)
        "YWNtZQ-_",  # base64url alphabet
        "YWNt*Q==",  # outside every alphabet
        "YWNt\u00e9Q==",  # not ASCII
        "Y",  # impossible length
    ],
)
def test_bad_base64_is_refused_MH_12(payload: str) -> None:
    refused(TENANT, {"tenant": "acme"}, [("Mcp-Param-Tenant", "=?base64?" + payload + "?=")])


@pytest.mark.parametrize("data", [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xc0\x80", b"a\x80"])
def test_base64_of_invalid_utf8_is_refused(data: bytes) -> None:
    refused(TENANT, {"tenant": "a"}, [("Mcp-Param-Tenant", b64(data))])


@pytest.mark.parametrize("bad", ["a\x00b", "a\x7fb", "a\nb", "a\rb", "caf\u00e9", "\u00ff", "\x1b"])
def test_plain_value_must_be_visible_ascii_space_or_tab(bad: str) -> None:
    refused(TENANT, {"tenant": bad}, [("Mcp-Param-Tenant", bad)])
    ok(TENANT, {"tenant": bad}, [("Mcp-Param-Tenant", b64(bad))])


def test_strings_compare_exactly() -> None:
    refused(TENANT, {"tenant": "Acme"}, [("Mcp-Param-Tenant", "acme")])
    refused(TENANT, {"tenant": "e\u0301"}, [("Mcp-Param-Tenant", b64("\u00e9"))])  # NFD vs NFC
    refused(TENANT, {"tenant": 1}, [("Mcp-Param-Tenant", "1")])
    refused(TENANT, {"tenant": True}, [("Mcp-Param-Tenant", "true")])
    refused(TENANT, {"tenant": ["acme"]}, [("Mcp-Param-Tenant", "acme")])


# --- MH-11, MH-12: the 16 KiB decoded limit ---------------------------------------------------


def test_plain_value_limit_edge_MH_11() -> None:
    edge = "a" * KIB16
    ok(TENANT, {"tenant": edge}, [("Mcp-Param-Tenant", edge)])
    refused(TENANT, {"tenant": edge + "a"}, [("Mcp-Param-Tenant", edge + "a")])
    ok(TENANT, {"tenant": edge}, [("Mcp-Param-Tenant", "  " + edge + "  ")])  # OWS not counted


def test_base64_value_limit_edge_shares_the_limit_MH_12() -> None:
    for edge in ("a" * KIB16, "\u00e9" * (KIB16 // 2), "\U0001f600" * (KIB16 // 4)):
        assert len(edge.encode()) == KIB16
        ok(TENANT, {"tenant": edge}, [("Mcp-Param-Tenant", b64(edge))])
    for past in ("a" * (KIB16 + 1), "\u00e9" * (KIB16 // 2) + "a", "a" * (KIB16 + 3)):
        assert len(past.encode()) > KIB16
        refused(TENANT, {"tenant": past}, [("Mcp-Param-Tenant", b64(past))])


def test_limit_is_counted_in_decoded_utf8_bytes_not_characters_MH_11() -> None:
    past = "\u00e9" * (KIB16 // 2 + 1)  # 8,193 characters, 16,386 bytes
    assert len(past) < KIB16
    refused(TENANT, {"tenant": past}, [("Mcp-Param-Tenant", b64(past))])


def test_limit_follows_limits_MH_11() -> None:
    limits = Limits(max_header_param_bytes=4)
    ok(TENANT, {"tenant": "abcd"}, [("Mcp-Param-Tenant", "abcd")], limits)
    ok(TENANT, {"tenant": "abcd"}, [("Mcp-Param-Tenant", b64("abcd"))], limits)
    for headers in ([("Mcp-Param-Tenant", "abcde")], [("Mcp-Param-Tenant", b64("abcde"))]):
        with pytest.raises(HeaderMismatch):
            ok(TENANT, {"tenant": "abcde"}, headers, limits)


def test_oversized_payload_is_refused_before_decoding_MH_12() -> None:
    huge = "=?base64?" + "A" * (4 * 1024 * 1024) + "?="
    start = time.perf_counter()
    refused(TENANT, {"tenant": "a"}, [("Mcp-Param-Tenant", huge)])
    assert time.perf_counter() - start < 1.0


# --- MH-22: booleans ----------------------------------------------------------------------------


def test_booleans_use_lowercase_true_false_MH_22() -> None:
    ok(FLAG, {"flag": True}, [("Mcp-Param-Flag", "true")])
    ok(FLAG, {"flag": False}, [("Mcp-Param-Flag", "false")])
    ok(FLAG, {"flag": True}, [("Mcp-Param-Flag", b64("true"))])
    refused(FLAG, {"flag": True}, [("Mcp-Param-Flag", "false")])
    refused(FLAG, {"flag": False}, [("Mcp-Param-Flag", "true")])


@pytest.mark.parametrize("spelling", ["True", "TRUE", "1", "yes", "on", "", "true ", "t"])
def test_other_boolean_spellings_are_refused_MH_22(spelling: str) -> None:
    refused(FLAG, {"flag": True}, [("Mcp-Param-Flag", b64(spelling))])


@pytest.mark.parametrize("value", [1, 0, "true", Decimal("1")])
def test_boolean_header_needs_a_json_boolean_MH_05(value: object) -> None:
    refused(FLAG, {"flag": value}, [("Mcp-Param-Flag", "true")])
    refused(FLAG, {"flag": value}, [("Mcp-Param-Flag", "false")])


# --- MH-15, MH-16, MH-17: integers --------------------------------------------------------------


@pytest.mark.parametrize("value", [0, 7, -7, 42, MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER])
def test_canonical_integer_headers_match_MH_16(value: int) -> None:
    ok(COUNT, {"count": value}, [("Mcp-Param-Count", str(value))])
    ok(COUNT, {"count": value}, [("Mcp-Param-Count", b64(str(value)))])


@pytest.mark.parametrize(
    "spelling",
    [
        *("+1", "01", "-0", "00", "1.0", "1e0", "0x1", "1_000", " 1 1", "", "-", "--1", "1-"),
        *("\u0661", "\uff11", "1\n", "\u00b9", "\U0001d7cf"),  # Unicode digits, newline
    ],
)
def test_non_canonical_integer_headers_are_refused_MH_16(spelling: str) -> None:
    refused(COUNT, {"count": 1}, [("Mcp-Param-Count", b64(spelling))])


def test_safe_integer_edges_MH_15() -> None:
    past = MAX_SAFE_INTEGER + 1
    for edge in (MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER):
        ok(COUNT, {"count": edge}, [("Mcp-Param-Count", str(edge))])
    for beyond in (past, -past):
        refused(COUNT, {"count": beyond}, [("Mcp-Param-Count", str(beyond))])
        refused(COUNT, {"count": Decimal(beyond)}, [("Mcp-Param-Count", str(beyond))])
    # either side alone out of range
    refused(COUNT, {"count": past}, [("Mcp-Param-Count", str(MAX_SAFE_INTEGER))])
    refused(COUNT, {"count": MAX_SAFE_INTEGER}, [("Mcp-Param-Count", str(past))])
    refused(COUNT, {"count": 10**16}, [("Mcp-Param-Count", "1" + "0" * 16)])  # 17 digits
    refused(COUNT, {"count": 1}, [("Mcp-Param-Count", "1" * 5000)])  # never reaches int()


@pytest.mark.parametrize(
    "text",
    ["1.0", "1e0", "1E0", "10e-1", "0.1e1", "1.000000", "100E-2", "1" + "0" * 2000 + "e-2000"],
)
def test_json_numbers_compare_numerically_MH_17(text: str) -> None:
    arguments = decode(b'{"count":' + text.encode() + b"}")
    assert isinstance(arguments, JsonObject)
    check_mirrored_headers((COUNT,), arguments, [("Mcp-Param-Count", "1")])


@pytest.mark.parametrize(
    ("text", "header"),
    [
        ("0.0", "0"),
        ("-0", "0"),
        ("-0.0e5", "0"),
        ("0e999999999", "0"),
        ("-12.50e1", "-125"),
        ("9007199254740991.000", "9007199254740991"),
        ("9.007199254740991e15", "9007199254740991"),
        ("-9007199254740991e0", "-9007199254740991"),
        ("4.2E+1", "42"),
    ],
)
def test_json_decimals_equal_to_the_header_match_MH_17(text: str, header: str) -> None:
    arguments = decode(b'{"count":' + text.encode() + b"}")
    assert isinstance(arguments, JsonObject)
    check_mirrored_headers((COUNT,), arguments, [("Mcp-Param-Count", header)])


@pytest.mark.parametrize(
    ("text", "header"),
    [
        ("1.5", "1"),
        ("1.000000000000000000001", "1"),
        ("1e-999999999", "0"),
        ("9007199254740992.0", "9007199254740992"),
        ("9.007199254740992e15", "9007199254740992"),
        ("1e16", "1" + "0" * 16),
        ("1e999999999", "1"),
        ("-1e999999999", "-1"),
        ("2", "1"),
        ("-1", "1"),
    ],
)
def test_json_decimals_out_of_range_or_fractional_are_refused_MH_15_MH_17(
    text: str, header: str
) -> None:
    arguments = decode(b'{"count":' + text.encode() + b"}")
    assert isinstance(arguments, JsonObject)
    with pytest.raises(HeaderMismatch):
        check_mirrored_headers((COUNT,), arguments, [("Mcp-Param-Count", header)])


def test_huge_exponent_fails_fast_MH_15() -> None:
    arguments = JsonObject({"count": Decimal("1e999999999")})
    start = time.perf_counter()
    for _ in range(1000):
        with pytest.raises(HeaderMismatch):
            check_mirrored_headers((COUNT,), arguments, [("Mcp-Param-Count", "1")])
    assert time.perf_counter() - start < 1.0


def test_non_finite_decimal_is_refused_MH_05() -> None:
    # The codec and JsonObject refuse these; a caller-built mapping is still handled safely.
    for special in (Decimal("NaN"), Decimal("Infinity"), Decimal("-Infinity"), Decimal("sNaN")):
        arguments = cast(JsonObject, {"count": special})
        with pytest.raises(HeaderMismatch):
            check_mirrored_headers((COUNT,), arguments, [("Mcp-Param-Count", "1")])


@pytest.mark.parametrize("value", [True, False, "1", ["1"], {"v": 1}])
def test_integer_header_needs_a_json_number_MH_05(value: object) -> None:
    refused(COUNT, {"count": value}, [("Mcp-Param-Count", "1")])
    refused(COUNT, {"count": value}, [("Mcp-Param-Count", "0")])


# --- several declarations ----------------------------------------------------------------------


def test_every_declaration_is_checked() -> None:
    declarations = (TENANT, COUNT, FLAG)
    arguments = JsonObject({"tenant": "acme", "count": 3, "flag": True})
    good = [("Mcp-Param-Tenant", "acme"), ("Mcp-Param-Count", "3"), ("Mcp-Param-Flag", "true")]
    check_mirrored_headers(declarations, arguments, good)
    for index in range(3):
        with pytest.raises(HeaderMismatch):
            check_mirrored_headers(declarations, arguments, good[:index] + good[index + 1 :])
    bad = [*good[:2], ("Mcp-Param-Flag", "false")]
    with pytest.raises(HeaderMismatch):
        check_mirrored_headers(declarations, arguments, bad)
