"""Hand-written decode corpus: valid documents with exact values, invalid ones with reasons.

Each invalid entry names the single ``ParseFailure`` that docs/design/json-codec.md assigns to it,
including the ordering rules (body size, then BOM, then left to right; inside one string: scan,
unit counts, UTF-8, escapes; duplicate names before their value).
"""

from __future__ import annotations

from decimal import Decimal as D

from mcpkit.errors import ParseFailure as F

__all__ = ["INVALID", "VALID"]


def _nested_arrays(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def _nested_objects(depth: int) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


def _nested_object_value(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = {"a": value}
    return value


def _nested_array_value(depth: int) -> object:
    value: list[object] = []
    for _ in range(depth - 1):
        value = [value]
    return value


# (id, document, expected value written with plain dict/list)
VALID: list[tuple[str, bytes, object]] = [
    # numbers: integer spellings are int, everything else an exact Decimal with its scale
    ("int-zero", b"0", 0),
    ("int-negative-zero-keeps-sign", b"-0", D("-0")),
    ("int-one", b"1", 1),
    ("int-negative", b"-123", -123),
    ("int-past-int64", b"9223372036854775808", 9223372036854775808),
    ("int-640-digits", b"9" * 640, int("9" * 640)),
    ("int-negative-640-digits", b"-" + b"9" * 640, -int("9" * 640)),
    ("int-641-digits-is-decimal", b"9" * 641, D("9" * 641)),
    ("int-negative-641-digits-is-decimal", b"-" + b"1" * 641, D("-" + "1" * 641)),
    ("fraction-scale-kept", b"1.0", D("1.0")),
    ("fraction-negative", b"-1.50", D("-1.50")),
    ("fraction-zero", b"0.0", D("0.0")),
    ("fraction-negative-zero", b"-0.0", D("-0.0")),
    ("fraction-leading-zero", b"0.001", D("0.001")),
    ("exponent-lower", b"1e5", D("1e5")),
    ("exponent-upper", b"1E5", D("1E5")),
    ("exponent-plus", b"1e+5", D("1e+5")),
    ("exponent-minus", b"1e-5", D("1e-5")),
    ("exponent-zero-mantissa", b"0e5", D("0e5")),
    ("exponent-E+0", b"1E+0", D("1E+0")),
    ("exponent-with-fraction", b"-12.34e-10", D("-12.34e-10")),
    ("exponent-leading-zeros", b"1e007", D("1e7")),
    ("exponent-9-digits", b"1e999999999", D("1E+999999999")),
    ("exponent-negative-9-digits", b"1e-999999999", D("1E-999999999")),
    ("exponent-10-digits-with-leading-zero", b"1e0999999999", D("1E+999999999")),
    ("exponent-many-zeros", b"2E+00000000000000000000", D("2E+0")),
    # The exponent str(Decimal) writes (the adjusted exponent) must fit 9 digits as well.
    ("adjusted-exponent-largest", b"15e999999998", D("1.5E+999999999")),
    ("adjusted-exponent-smallest", b"0.1e-999999998", D("1E-999999999")),
    ("adjusted-exponent-zero-coefficient", b"0.000e999999999", D("0E+999999996")),
    ("adjusted-exponent-long-fraction", b"0.00012e3", D("0.12")),
    ("adjusted-exponent-fraction-lowers-it", b"99.5e999999998", D("9.95E+999999999")),
    # literals
    ("true", b"true", True),
    ("false", b"false", False),
    ("null", b"null", None),
    # strings and every escape
    ("string-empty", b'""', ""),
    ("string-ascii", b'"hello"', "hello"),
    ("string-short-escapes", b'"\\"\\\\\\/\\b\\f\\n\\r\\t"', '"\\/\b\f\n\r\t'),
    ("string-u-escape-lower-hex", b'"\\u00e9"', "\u00e9"),
    ("string-u-escape-upper-hex", b'"\\u00E9"', "\u00e9"),
    ("string-u-escape-nul", b'"\\u0000"', "\x00"),
    ("string-u-escape-1f", b'"\\u001F"', "\x1f"),
    ("string-u-escape-ffff", b'"\\uFFFF"', "\uffff"),
    ("string-u-escape-ascii", b'"\\u0061"', "a"),
    ("string-surrogate-pair", b'"\\uD83D\\uDE80"', "\U0001f680"),
    ("string-surrogate-pair-lower-hex", b'"\\ud83d\\ude80"', "\U0001f680"),
    ("string-surrogate-pair-min", b'"\\uD800\\uDC00"', "\U00010000"),
    ("string-surrogate-pair-max", b'"\\uDBFF\\uDFFF"', "\U0010ffff"),
    ("string-raw-emoji", '"\U0001f680"'.encode(), "\U0001f680"),
    ("string-raw-2-byte", '"\u00e9"'.encode(), "\u00e9"),
    ("string-raw-3-byte", '"\u20ac"'.encode(), "\u20ac"),
    ("string-raw-max-code-point", b'"\xf4\x8f\xbf\xbf"', "\U0010ffff"),
    ("string-raw-after-surrogates", b'"\xee\x80\x80"', "\ue000"),
    ("string-raw-del", b'"\x7f"', "\x7f"),
    ("string-raw-bom-character", b'"\xef\xbb\xbf"', "\ufeff"),
    ("string-raw-noncharacter", b'"\xef\xbf\xbe"', "\ufffe"),
    ("string-nfd-kept", '"e\u0301"'.encode(), "e\u0301"),
    ("string-mixed", b'"a\\nb\xc3\xa9\\u0041"', "a\nb\u00e9A"),
    ("string-slash-unescaped", b'"a/b"', "a/b"),
    ("string-long", b'"' + b"x" * 10_000 + b'"', "x" * 10_000),
    # containers
    ("array-empty", b"[]", []),
    ("object-empty", b"{}", {}),
    ("containers-nested-empty", b"[[],{}]", [[], {}]),
    ("array-literals", b"[true,false,null]", [True, False, None]),
    ("array-numbers", b"[1,1.0,1E+0,-0]", [1, D("1.0"), D("1E+0"), D("-0")]),
    ("object-simple", b'{"a":1,"b":[true,false,null]}', {"a": 1, "b": [True, False, None]}),
    ("object-member-order-kept", b'{"b":1,"a":2}', {"b": 1, "a": 2}),
    ("object-empty-name", b'{"":""}', {"": ""}),
    ("object-unicode-names", '{"\u00e9":"\U0001f680"}'.encode(), {"\u00e9": "\U0001f680"}),
    ("object-escaped-name", b'{"\\u0061b":1}', {"ab": 1}),
    ("object-nul-name", b'{"\\u0000":0}', {"\x00": 0}),
    ("object-names-differ-by-case", b'{"a":1,"A":2}', {"a": 1, "A": 2}),
    (
        "object-nfc-nfd-names-distinct",
        '{"\u00e9":1,"e\u0301":2}'.encode(),
        {"\u00e9": 1, "e\u0301": 2},
    ),
    ("object-escaped-distinct-names", b'{"a":1,"\\u0062":2}', {"a": 1, "b": 2}),
    ("object-same-name-in-sibling-objects", b'[{"a":1},{"a":2}]', [{"a": 1}, {"a": 2}]),
    ("object-same-name-nested", b'{"a":{"a":1}}', {"a": {"a": 1}}),
    ("nested-mix", b'{"a":{"b":{"c":[1,[2,[3.5]]]}}}', {"a": {"b": {"c": [1, [2, [D("3.5")]]]}}}),
    ("whitespace-all-four-kinds", b' \t\r\n[ 1 , { "a" : 2 } ] \r\n\t', [1, {"a": 2}]),
    ("whitespace-around-scalar", b"\n\n  null  \n", None),
    ("depth-128-arrays", _nested_arrays(128), _nested_array_value(128)),
    ("depth-128-objects", _nested_objects(128), _nested_object_value(128)),
]

# (id, document, reason)
INVALID: list[tuple[str, bytes, F]] = [
    # byte order mark (checked before grammar; only the exact UTF-8 BOM at offset 0)
    ("bom-object", b"\xef\xbb\xbf{}", F.BOM),
    ("bom-only", b"\xef\xbb\xbf", F.BOM),
    ("bom-then-invalid-utf8", b"\xef\xbb\xbf\xff", F.BOM),
    ("bom-after-space", b" \xef\xbb\xbf{}", F.SYNTAX),
    ("bom-partial", b"\xef\xbb{}", F.SYNTAX),
    ("bom-utf16", b"\xff\xfe{\x00}\x00", F.SYNTAX),
    # empty input and non-JSON whitespace
    ("empty", b"", F.SYNTAX),
    ("space-only", b" ", F.SYNTAX),
    ("whitespace-only", b" \t\r\n", F.SYNTAX),
    ("whitespace-form-feed", b"\x0c1", F.SYNTAX),
    ("whitespace-vertical-tab", b"\x0b1", F.SYNTAX),
    ("whitespace-nbsp-bytes", b"\xc2\xa01", F.SYNTAX),
    ("whitespace-nbsp-trailing", b"1\xc2\xa0", F.SYNTAX),
    ("whitespace-ideographic-space", b"\xe3\x80\x801", F.SYNTAX),
    ("whitespace-nul", b"\x001", F.SYNTAX),
    ("whitespace-form-feed-in-array", b"[1,\x0c2]", F.SYNTAX),
    ("non-ascii-between-values", b"[1,\xff]", F.SYNTAX),
    # literals
    ("literal-NaN", b"NaN", F.SYNTAX),
    ("literal-Infinity", b"Infinity", F.SYNTAX),
    ("literal-negative-Infinity", b"-Infinity", F.SYNTAX),
    ("literal-nan-lower", b"nan", F.SYNTAX),
    ("literal-inf", b"inf", F.SYNTAX),
    ("literal-True", b"True", F.SYNTAX),
    ("literal-None", b"None", F.SYNTAX),
    ("literal-truncated", b"tru", F.SYNTAX),
    ("literal-nul", b"nul", F.SYNTAX),
    ("literal-fals", b"fals", F.SYNTAX),
    ("literal-false-capital", b"False", F.SYNTAX),
    ("literal-misspelled-in-object", b'{"a":fasle}', F.SYNTAX),
    ("literal-extra-letter", b"nulll", F.SYNTAX),
    ("literal-undefined", b"undefined", F.SYNTAX),
    ("literal-NaN-in-array", b"[NaN]", F.SYNTAX),
    # numbers
    ("number-leading-zero", b"01", F.SYNTAX),
    ("number-negative-leading-zero", b"-01", F.SYNTAX),
    ("number-double-zero", b"00", F.SYNTAX),
    ("number-leading-zero-fraction", b"00.5", F.SYNTAX),
    ("number-trailing-dot", b"1.", F.SYNTAX),
    ("number-leading-dot", b".5", F.SYNTAX),
    ("number-negative-leading-dot", b"-.5", F.SYNTAX),
    ("number-plus", b"+1", F.SYNTAX),
    ("number-minus-only", b"-", F.SYNTAX),
    ("number-double-minus", b"--1", F.SYNTAX),
    ("number-minus-space", b"- 1", F.SYNTAX),
    ("number-exponent-no-digits", b"1e", F.SYNTAX),
    ("number-exponent-plus-no-digits", b"1e+", F.SYNTAX),
    ("number-exponent-minus-no-digits", b"1E-", F.SYNTAX),
    ("number-dot-exponent", b"1.e5", F.SYNTAX),
    ("number-hex", b"0x10", F.SYNTAX),
    ("number-underscore", b"1_000", F.SYNTAX),
    ("number-two-dots", b"1.0.0", F.SYNTAX),
    ("number-then-letter", b"1a", F.SYNTAX),
    ("number-fullwidth-digit", "\uff11".encode(), F.SYNTAX),
    ("number-exponent-10-digits", b"1e1000000000", F.NUMBER),
    ("number-exponent-negative-10-digits", b"1e-1000000000", F.NUMBER),
    ("number-exponent-10-nines", b"1E+9999999999", F.NUMBER),
    ("number-exponent-10-digits-in-array", b"[0,1.5e1000000000]", F.NUMBER),
    ("number-adjusted-exponent-too-large", b"15e999999999", F.NUMBER),
    ("number-adjusted-exponent-too-small", b"0.1e-999999999", F.NUMBER),
    ("number-adjusted-exponent-in-array", b"[1,2,995e999999998]", F.NUMBER),
    ("number-adjusted-exponent-zero-ok-then-too-large", b"[0e999999999,10e999999999]", F.NUMBER),
    # structure
    ("array-trailing-comma", b"[1,]", F.SYNTAX),
    ("object-trailing-comma", b'{"a":1,}', F.SYNTAX),
    ("array-leading-comma", b"[,1]", F.SYNTAX),
    ("array-double-comma", b"[1,,2]", F.SYNTAX),
    ("array-missing-comma", b"[1 2]", F.SYNTAX),
    ("array-colon", b"[1:2]", F.SYNTAX),
    ("object-missing-colon", b'{"a" 1}', F.SYNTAX),
    ("object-missing-value", b'{"a":}', F.SYNTAX),
    ("object-comma-instead-of-colon", b'{"a",1}', F.SYNTAX),
    ("object-comma-only", b"{,}", F.SYNTAX),
    ("object-number-name", b"{1:2}", F.SYNTAX),
    ("object-unquoted-name", b"{a:1}", F.SYNTAX),
    ("object-single-quoted-name", b"{'a':1}", F.SYNTAX),
    ("string-single-quoted", b"'a'", F.SYNTAX),
    ("comment-line", b"[1]//c", F.SYNTAX),
    ("comment-block", b"/*c*/1", F.SYNTAX),
    ("comment-hash", b"#c\n1", F.SYNTAX),
    ("trailing-value", b"1 2", F.SYNTAX),
    ("trailing-object", b"{}{}", F.SYNTAX),
    ("trailing-string", b'""""', F.SYNTAX),
    ("trailing-garbage-after-whitespace", b"1 x", F.SYNTAX),
    ("trailing-nul", b"1\x00", F.SYNTAX),
    ("extra-close", b"[]]", F.SYNTAX),
    ("lone-close-bracket", b"]", F.SYNTAX),
    ("lone-close-brace", b"}", F.SYNTAX),
    ("lone-colon", b":", F.SYNTAX),
    ("lone-comma", b",", F.SYNTAX),
    ("unclosed-array", b"[", F.SYNTAX),
    ("unclosed-object", b"{", F.SYNTAX),
    ("unclosed-member-name", b'{"a"', F.SYNTAX),
    ("unclosed-after-colon", b'{"a":', F.SYNTAX),
    ("mismatched-close", b"[}", F.SYNTAX),
    # strings: scan (step 5a)
    ("string-unterminated", b'"abc', F.SYNTAX),
    ("string-raw-tab", b'"\t"', F.SYNTAX),
    ("string-raw-newline", b'"\n"', F.SYNTAX),
    ("string-raw-nul", b'"\x00"', F.SYNTAX),
    ("string-raw-1f", b'"\x1f"', F.SYNTAX),
    ("string-raw-cr-in-name", b'{"\r":1}', F.SYNTAX),
    ("escape-x", b'"\\x41"', F.SYNTAX),
    ("escape-a", b'"\\a"', F.SYNTAX),
    ("escape-single-quote", b'"\\\'"', F.SYNTAX),
    ("escape-zero", b'"\\0"', F.SYNTAX),
    ("escape-capital-U", b'"\\U0041"', F.SYNTAX),
    ("escape-space", b'"\\ "', F.SYNTAX),
    ("escape-non-ascii", b'"\\\xc3\xa9"', F.SYNTAX),
    ("escape-bad-hex", b'"\\u12G4"', F.SYNTAX),
    ("escape-short-u", b'"\\u12"', F.SYNTAX),
    ("escape-u-no-digits", b'"\\u"', F.SYNTAX),
    ("escape-backslash-at-end", b'"\\', F.SYNTAX),
    # strings: escaped surrogates (step 5c, after UTF-8)
    ("surrogate-lone-high", b'"\\uD800"', F.SURROGATE),
    ("surrogate-lone-low", b'"\\uDC00"', F.SURROGATE),
    ("surrogate-high-high", b'"\\uD800\\uD800"', F.SURROGATE),
    ("surrogate-high-then-letter", b'"\\uD83Da"', F.SURROGATE),
    ("surrogate-high-then-short-escape", b'"\\uD83D\\n"', F.SURROGATE),
    ("surrogate-high-then-bmp-escape", b'"\\uD83D\\u0041"', F.SURROGATE),
    ("surrogate-reversed-pair", b'"\\uDE80\\uD83D"', F.SURROGATE),
    ("surrogate-high-at-end", b'"x\\uDBFF"', F.SURROGATE),
    ("surrogate-in-member-name", b'{"\\uD800":1}', F.SURROGATE),
    # strings: raw bytes must be strict UTF-8 (step 5c)
    ("utf8-encoded-high-surrogate", b'"\xed\xa0\x80"', F.UTF8),
    ("utf8-encoded-low-surrogate", b'"\xed\xbf\xbf"', F.UTF8),
    ("utf8-overlong-c0-af", b'"\xc0\xaf"', F.UTF8),
    ("utf8-overlong-c1-bf", b'"\xc1\xbf"', F.UTF8),
    ("utf8-overlong-e0-80-af", b'"\xe0\x80\xaf"', F.UTF8),
    ("utf8-overlong-4-byte", b'"\xf0\x80\x80\x80"', F.UTF8),
    ("utf8-above-10ffff", b'"\xf4\x90\x80\x80"', F.UTF8),
    ("utf8-lead-f5", b'"\xf5\x80\x80\x80"', F.UTF8),
    ("utf8-byte-ff", b'"\xff"', F.UTF8),
    ("utf8-five-byte-form", b'"\xf8\x88\x80\x80\x80"', F.UTF8),
    ("utf8-truncated-2-byte", b'"\xc3"', F.UTF8),
    ("utf8-truncated-3-byte", b'"\xe2\x82"', F.UTF8),
    ("utf8-truncated-4-byte", b'"\xf0\x9f\x9a"', F.UTF8),
    ("utf8-stray-continuation", b'"\x80"', F.UTF8),
    ("utf8-continuation-after-ascii", b'"a\xbfb"', F.UTF8),
    ("utf8-in-member-name", b'{"\xc0\xaf":1}', F.UTF8),
    # order inside one string: scan < UTF-8 < escapes
    ("order-utf8-before-surrogate-escape", b'"\\uD800\xff"', F.UTF8),
    ("order-raw-control-before-utf8", b'"\xff\x01"', F.SYNTAX),
    ("order-bad-escape-before-utf8", b'"\xff\\x"', F.SYNTAX),
    # duplicate member names (after unescaping; before the repeated name's value)
    ("duplicate", b'{"a":1,"a":2}', F.DUPLICATE_MEMBER),
    ("duplicate-escaped-second", b'{"a":1,"\\u0061":2}', F.DUPLICATE_MEMBER),
    ("duplicate-escaped-first", b'{"\\u0061":1,"a":2}', F.DUPLICATE_MEMBER),
    (
        "duplicate-emoji-raw-and-escaped",
        '{"\U0001f680":1,"\\uD83D\\uDE80":2}'.encode(),
        F.DUPLICATE_MEMBER,
    ),
    ("duplicate-not-adjacent", b'{"a":1,"b":2,"a":3}', F.DUPLICATE_MEMBER),
    ("duplicate-nested", b'[{"x":{"k":1,"k":1}}]', F.DUPLICATE_MEMBER),
    ("duplicate-empty-name", b'{"":1,"":2}', F.DUPLICATE_MEMBER),
    ("duplicate-before-colon", b'{"a":1,"a"', F.DUPLICATE_MEMBER),
    ("duplicate-before-bad-value", b'{"a":1,"a":x}', F.DUPLICATE_MEMBER),
    # depth (checked at the opening bracket, before its contents)
    ("depth-129-arrays", _nested_arrays(129), F.DEPTH),
    ("depth-129-objects", _nested_objects(129), F.DEPTH),
    ("depth-129-unclosed", b"[" * 129, F.DEPTH),
    ("depth-200-unclosed", b"[" * 200, F.DEPTH),
    ("depth-128-unclosed-is-syntax", b"[" * 128, F.SYNTAX),
    ("depth-129-mixed", b'[{"a":' * 64 + b"[", F.DEPTH),
]
