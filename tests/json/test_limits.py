"""Every decode and encode limit at its value and one past it (JL-01..04, JL-11..14, JL-21).

The real defaults are tested at full size, not only small configured ones, because an
off-by-one in the default wiring is exactly what a small configured limit cannot catch.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

import mcpkit.json
from mcpkit.errors import OutputError, OutputFailure, ParseError, ParseFailure
from mcpkit.json import JsonArray, JsonObject
from mcpkit.limits import DEFAULT_LIMITS, Limits

from .helpers import Impl, MiB, limits

F = ParseFailure
UNITS = 1_048_576


def test_defaults_are_the_seed_values() -> None:
    """JL-01..04, JL-11, JL-12: the production defaults the rest of this module relies on."""
    assert DEFAULT_LIMITS.max_request_bytes == 10 * MiB
    assert DEFAULT_LIMITS.max_response_bytes == 4 * MiB
    assert DEFAULT_LIMITS.max_json_depth == 128
    assert DEFAULT_LIMITS.max_json_nodes == 100_000
    assert DEFAULT_LIMITS.max_string_units == UNITS
    assert DEFAULT_LIMITS.max_token_units == UNITS


# --- JL-01 body bytes ------------------------------------------------------------------------


@pytest.mark.parametrize("wrap", [bytes, bytearray, memoryview])
def test_body_size_configured_JL_01(
    impl: Impl, wrap: Callable[[bytes], bytes | bytearray | memoryview]
) -> None:
    """JL-01: a configured body limit admits exactly its size, for every buffer type."""
    small = limits(max_request_bytes=16)
    assert impl.decode(wrap(b'"' + b"a" * 14 + b'"'), limits=small) == "a" * 14
    assert impl.parse_failure(wrap(b'"' + b"a" * 15 + b'"'), small) is F.BODY_SIZE


def test_strided_memoryview_JL_01(impl: Impl) -> None:
    """JL-01: a non-contiguous memoryview is read like ``bytes(view)``, its size in bytes."""
    view = memoryview(b"[x1x]")[::2]
    assert impl.decode(view, limits=limits(max_request_bytes=3)) == JsonArray([1])
    assert impl.parse_failure(view, limits(max_request_bytes=2)) is F.BODY_SIZE


def test_body_size_checked_before_everything_JL_01(impl: Impl) -> None:
    """JL-01: the size check comes before the BOM and grammar checks."""
    assert impl.parse_failure(b"\xef\xbb\xbf{}", limits(max_request_bytes=4)) is F.BODY_SIZE
    assert impl.parse_failure(b"[[[[[", limits(max_request_bytes=4)) is F.BODY_SIZE


def _check_default_body_size(decode: Callable[..., object]) -> None:
    document = b"0" + b" " * (10 * MiB - 1)  # padding is legal JSON whitespace
    assert decode(document) == 0
    for too_long in (document + b" ", b"\xff" * (10 * MiB + 1)):
        with pytest.raises(ParseError) as info:
            decode(too_long)
        assert info.value.reason is F.BODY_SIZE


def test_body_size_default_10_MiB_JL_01(impl: Impl) -> None:
    """JL-01: the default admits exactly 10 MiB, and one byte more fails before parsing."""
    _check_default_body_size(impl.decode)


def test_public_decode_body_size_default_10_MiB_JL_01() -> None:
    """JL-01: the same through the public ``mcpkit.json.decode``."""
    _check_default_body_size(mcpkit.json.decode)


def test_body_size_configurable_to_16_MiB_JL_01(impl: Impl) -> None:
    """JL-01: the body limit can be raised to 16 MiB (and no further, by Limits itself)."""
    document = b"[]" + b"\n" * (16 * MiB - 2)
    assert impl.decode(document, limits=limits(max_request_bytes=16 * MiB)) == JsonArray()
    assert impl.parse_failure(document) is F.BODY_SIZE


# --- JL-03 depth, JL-04 nodes -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("opening", "inner", "closing", "per_level"),
    [(b"[", b"", b"]", 1), (b'{"k":', b"0", b"}", 1), (b'[{"k":', b"0", b"}]", 2)],
    ids=["arrays", "objects", "alternating"],
)
def test_depth_128_and_129_JL_03(
    impl: Impl, opening: bytes, inner: bytes, closing: bytes, per_level: int
) -> None:
    """JL-03/JL-09: 128 nested containers decode, 129 fail with DEPTH, in a tiny body."""
    levels = 128 // per_level
    impl.decode(opening * levels + inner + closing * levels)
    assert impl.parse_failure(opening * levels + b"[0]" + closing * levels) is F.DEPTH


def test_depth_configured_JL_03(impl: Impl) -> None:
    """JL-03: ``[]`` is depth 1; a scalar has depth 0 and fits any limit."""
    assert impl.decode(b"0", limits=limits(max_json_depth=1)) == 0
    assert impl.decode(b"[]", limits=limits(max_json_depth=1)) == JsonArray()
    assert impl.parse_failure(b"[[]]", limits(max_json_depth=1)) is F.DEPTH
    assert impl.parse_failure(b'{"a":{}}', limits(max_json_depth=1)) is F.DEPTH
    assert impl.decode(b"[[[]]]", limits=limits(max_json_depth=3)) is not None
    assert impl.parse_failure(b"[[[[]]]]", limits(max_json_depth=3)) is F.DEPTH


def test_nodes_100000_and_100001_JL_04(impl: Impl) -> None:
    """JL-04/JL-09: 100,000 nodes decode, one more fails, in a body far below 10 MiB."""
    at_limit = b"[" + b"0," * 99_998 + b"0]"
    decoded = impl.decode(at_limit)
    assert isinstance(decoded, JsonArray)
    assert len(decoded) == 99_999
    assert impl.parse_failure(b"[" + b"0," * 99_999 + b"0]") is F.NODES


@pytest.mark.parametrize(
    ("document", "max_nodes", "max_depth", "expected"),
    [
        pytest.param(b'{"a":1,"b":2}', 3, 128, None, id="member-names-are-not-nodes"),
        pytest.param(b'{"a":1,"b":2,"c":3}', 3, 128, F.NODES, id="fourth-node"),
        pytest.param(b'["a",true,null]', 4, 128, None, id="every-value-kind-counts"),
        pytest.param(b'["a",true,null,{}]', 4, 128, F.NODES, id="empty-object-counts"),
        pytest.param(b"[0,0,0", 3, 128, F.NODES, id="counted-when-value-starts"),
        pytest.param(b"[[]]", 1, 1, F.NODES, id="nodes-before-depth"),
        pytest.param(b"[[]]", 2, 1, F.DEPTH, id="depth-when-nodes-fit"),
    ],
)
def test_nodes_configured_JL_04(
    impl: Impl, document: bytes, max_nodes: int, max_depth: int, expected: ParseFailure | None
) -> None:
    """JL-04: what counts as a node, and that nodes are counted before the depth check."""
    configured = limits(max_json_nodes=max_nodes, max_json_depth=max_depth)
    if expected is None:
        impl.decode(document, limits=configured)
    else:
        assert impl.parse_failure(document, configured) is expected


# --- JL-11, JL-12, JL-13 string and token units -----------------------------------------------

ROCKET = "\U0001f680".encode()
BIG_TOKENS = limits(max_token_units=16 * MiB)

# (id, string spelling between the quotes, limits, decoded UTF-16 units or failure)
STRING_CASES: list[tuple[str, bytes, Limits, int | ParseFailure]] = [
    ("ascii-at-limit", b"a" * UNITS, DEFAULT_LIMITS, UNITS),
    ("ascii-one-past-is-token", b"a" * (UNITS + 1), DEFAULT_LIMITS, F.TOKEN_UNITS),
    ("ascii-one-past-string", b"a" * (UNITS + 1), BIG_TOKENS, F.STRING_UNITS),
    ("ascii-at-string-limit", b"a" * UNITS, BIG_TOKENS, UNITS),
    ("u-escapes-at-token-limit", b"\\u0061" * 174_762 + b"aaaa", DEFAULT_LIMITS, 174_766),
    ("u-escapes-one-past", b"\\u0061" * 174_762 + b"aaaaa", DEFAULT_LIMITS, F.TOKEN_UNITS),
    ("pair-escapes-at-limit", b"\\uD83D\\uDE80" * 87_381 + b"aaaa", DEFAULT_LIMITS, 174_766),
    ("pair-escapes-one-past", b"\\uD83D\\uDE80" * 87_381 + b"aaaaa", DEFAULT_LIMITS, F.TOKEN_UNITS),
    ("newline-escapes-past-tokens", b"\\n" * 524_289, DEFAULT_LIMITS, F.TOKEN_UNITS),
    ("emoji-at-limit", ROCKET * 524_288, DEFAULT_LIMITS, UNITS),
    ("emoji-one-past-is-token", ROCKET * 524_288 + b"a", DEFAULT_LIMITS, F.TOKEN_UNITS),
    ("emoji-one-past-string", ROCKET * 524_288 + b"a", BIG_TOKENS, F.STRING_UNITS),
    ("u-escapes-past-string", b"\\u0061" * (UNITS + 1), BIG_TOKENS, F.STRING_UNITS),
]


def _as_value(spelling: bytes) -> bytes:
    return b'"' + spelling + b'"'


def _as_member_name(spelling: bytes) -> bytes:
    return b'{"' + spelling + b'":0}'


@pytest.mark.parametrize(
    ("spelling", "configured", "expected"),
    [pytest.param(s, lim, e, id=i) for i, s, lim, e in STRING_CASES],
)
@pytest.mark.parametrize("wrap", [_as_value, _as_member_name], ids=["value", "member-name"])
def test_string_units_JL_11_JL_12_JL_13(
    impl: Impl,
    wrap: Callable[[bytes], bytes],
    spelling: bytes,
    configured: Limits,
    expected: int | ParseFailure,
) -> None:
    """JL-11/JL-12/JL-13: decoded and token units of values and names, quotes excluded."""
    document = wrap(spelling)
    if isinstance(expected, ParseFailure):
        assert impl.parse_failure(document, configured) is expected
        return
    decoded = impl.decode(document, limits=configured)
    text = next(iter(decoded)) if isinstance(decoded, JsonObject) else decoded
    assert isinstance(text, str)
    assert mcpkit.json.utf16_units(text) == expected


@pytest.mark.parametrize("wrap", [_as_value, _as_member_name], ids=["value", "member-name"])
def test_units_exclude_quotes_JL_13(impl: Impl, wrap: Callable[[bytes], bytes]) -> None:
    """JL-13: a three-character string fits limits of exactly three units."""
    tight = limits(max_token_units=3, max_string_units=3)
    impl.decode(wrap(b"abc"), limits=tight)
    assert impl.parse_failure(wrap(b"abcd"), tight) is F.TOKEN_UNITS
    assert impl.parse_failure(wrap(b"abcd"), limits(max_string_units=3)) is F.STRING_UNITS


@pytest.mark.parametrize(
    ("spelling", "configured", "expected"),
    [
        pytest.param(b"\x80\x80\x80\x80", limits(max_token_units=1), F.UTF8, id="continuations-0"),
        pytest.param(b"\xff\xff", limits(max_token_units=3), F.TOKEN_UNITS, id="ff-counts-2"),
        pytest.param(b"\xff\xff", limits(max_token_units=4), F.UTF8, id="ff-at-limit"),
        pytest.param(b"\xff\xff\\n", limits(max_string_units=4), F.STRING_UNITS, id="decoded-5"),
        pytest.param(b"\xff\xff\\n", limits(max_string_units=5), F.UTF8, id="decoded-at-limit"),
    ],
)
def test_unit_counts_precede_utf8_check_JL_12(
    impl: Impl, spelling: bytes, configured: Limits, expected: ParseFailure
) -> None:
    """JL-12: units come from the byte formula before UTF-8 is validated (step 5b before 5c)."""
    assert impl.parse_failure(_as_value(spelling), configured) is expected


def test_units_independent_of_bytes_JL_14(impl: Impl) -> None:
    """JL-14: a string fitting its units is not limited by its UTF-8 byte length (3 bytes/unit)."""
    text = "\u20ac" * UNITS  # 3 MiB of UTF-8, 1,048,576 units
    assert impl.decode(_as_value(text.encode())) == text
    assert impl.encode(text) == _as_value(text.encode())


# --- JL-02, JL-21 output bytes ----------------------------------------------------------------


def _exactly_4_mib(extra: int) -> JsonArray:
    """An array of four ASCII strings whose compact encoding is 4 MiB + ``extra`` bytes.

    Brackets, three commas and four pairs of quotes take 13 bytes; no string exceeds the
    1,048,576-unit string ceiling, so only the response limit can bind.
    """
    last = 4 * MiB - 13 - 3 * UNITS + extra
    return JsonArray(["a" * UNITS, "b" * UNITS, "c" * UNITS, "d" * last])


def test_output_exactly_4_MiB_JL_02(impl: Impl) -> None:
    """JL-02: an encoding of exactly 4 MiB is written; one more byte fails with SIZE."""
    written = impl.encode(_exactly_4_mib(0))
    assert len(written) == 4 * MiB
    assert written.startswith(b'["aaa') and written.endswith(b'dd"]')
    assert impl.output_failure(_exactly_4_mib(1)) is OutputFailure.SIZE


def test_output_configured_JL_02(impl: Impl) -> None:
    """JL-02: a configured response limit counts every byte, quotes and brackets included."""
    small = limits(max_response_bytes=10)
    assert impl.encode(["123456"], limits=small) == b'["123456"]'
    assert impl.output_failure(["1234567"], small) is OutputFailure.SIZE
    assert impl.output_failure({"a": 1234567}, small) is OutputFailure.SIZE


def test_output_stops_at_the_limit_JL_02(impl: Impl) -> None:
    """JL-02: writing stops when the limit is passed, so later content is never visited."""
    value = ["x" * 1_000_000] * 5 + [object()]
    assert impl.output_failure(value) is OutputFailure.SIZE


def test_output_error_is_fixed_JL_21() -> None:
    """JL-21: an output failure is -32603 "Internal error" (HTTP 200) and reveals nothing."""
    secret = "secret-" + "x" * 5 * MiB
    with pytest.raises(OutputError) as info:
        mcpkit.json.encode([secret])
    error = info.value
    assert (error.jsonrpc_code, error.http_status, error.message) == (-32603, 200, "Internal error")
    assert str(error) == "Internal error"
    assert "secret" not in repr(error) and error.args == ("Internal error",)


def test_parse_error_is_fixed_JL_20() -> None:
    """JL-20: a limit failure on input is -32700 "Parse error" (HTTP 400) and reveals nothing."""
    with pytest.raises(ParseError) as info:
        mcpkit.json.decode(b'"secret' + b"x" * UNITS + b'"')
    error = info.value
    assert error.reason is F.TOKEN_UNITS
    assert (error.jsonrpc_code, error.http_status, error.message) == (-32700, 400, "Parse error")
    assert str(error) == "Parse error"
    assert "secret" not in repr(error) and error.args == ("Parse error",)
