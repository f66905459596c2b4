"""The ASCII media-type parser (CB-10, CB-20..23): RFC 9110 §8.3.1 / §5.6 exactly.

Image, audio, icon and resource MIME types all go through this one parser, so its tables are
the contract for every ``mime_type`` field.  Accepted spellings are kept as supplied (CB-22);
refusals name the rule and never echo the input.
"""

from __future__ import annotations

import dataclasses
import string as ascii

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.errors import InvalidValueError
from mcpkit.model import MediaType, parse_media_type

TCHARS = "!#$%&'*+-.^_`|~" + ascii.digits + ascii.ascii_letters

# (text, type, subtype, parameters)
VALID: list[tuple[str, str, str, tuple[tuple[str, str], ...]]] = [
    ("image/png", "image", "png", ()),
    ("Image/PNG", "Image", "PNG", ()),
    ("a/b", "a", "b", ()),
    ("*/*", "*", "*", ()),  # '*' is a tchar; the grammar does not forbid it
    (f"{TCHARS}/{TCHARS}", TCHARS, TCHARS, ()),
    ("image/svg+xml", "image", "svg+xml", ()),
    ("application/vnd.api+json", "application", "vnd.api+json", ()),
    ("application/x-www-form-urlencoded", "application", "x-www-form-urlencoded", ()),
    ("text/html;profile=mcp-app", "text", "html", (("profile", "mcp-app"),)),
    ("text/plain;charset=utf-8", "text", "plain", (("charset", "utf-8"),)),
    ("text/plain; charset=utf-8", "text", "plain", (("charset", "utf-8"),)),
    ("text/plain ;charset=utf-8", "text", "plain", (("charset", "utf-8"),)),
    ("text/plain\t;\tcharset=utf-8", "text", "plain", (("charset", "utf-8"),)),
    ("text/plain  ;  charset=utf-8", "text", "plain", (("charset", "utf-8"),)),
    ("Text/Plain; CharSet=UTF-8", "Text", "Plain", (("CharSet", "UTF-8"),)),
    ('text/plain; charset="utf-8"', "text", "plain", (("charset", "utf-8"),)),
    ('text/plain; a=""', "text", "plain", (("a", ""),)),
    ('text/plain; a="x\\"y"', "text", "plain", (("a", 'x"y'),)),
    ('text/plain; a="\\\\"', "text", "plain", (("a", "\\"),)),
    ('text/plain; a="\\a"', "text", "plain", (("a", "a"),)),
    ('text/plain; a="\\\t"', "text", "plain", (("a", "\t"),)),
    ('text/plain; a=" \t!#[]~;,=/"', "text", "plain", (("a", " \t!#[]~;,=/"),)),
    ('multipart/form-data; boundary="----=_Part_0"', "multipart", "form-data",
     (("boundary", "----=_Part_0"),)),
    ("audio/wav; rate=44100; channels=2", "audio", "wav", (("rate", "44100"), ("channels", "2"))),
    ("text/plain; b=2; a=1", "text", "plain", (("b", "2"), ("a", "1"))),
    # RFC 9110 §5.6.6: parameters = *( OWS ";" OWS [ parameter ] ), so empty ones are allowed.
    ("text/plain;", "text", "plain", ()),
    ("text/plain; ", "text", "plain", ()),
    ("text/plain;;", "text", "plain", ()),
    ("text/plain;;charset=utf-8", "text", "plain", (("charset", "utf-8"),)),
    ("text/plain ; ; charset=utf-8 ;", "text", "plain", (("charset", "utf-8"),)),
]  # fmt: skip

# (text, a fragment of the rule the message must name)
INVALID: list[tuple[str, str]] = [
    ("", "type must be a token"),
    ("/png", "type must be a token"),
    (" image/png", "type must be a token"),
    ("(comment)/x", "type must be a token"),
    ("image", "followed by '/'"),
    ("image /png", "followed by '/'"),
    ("image\t/png", "followed by '/'"),
    ("image;a=b", "followed by '/'"),
    ("image/", "subtype must be a token"),
    ("image/ png", "subtype must be a token"),
    ("image//png", "subtype must be a token"),
    ("image/png ", "must follow ';'"),
    ("image/png\t", "must follow ';'"),
    ("image/png/x", "must follow ';'"),
    ("text/pl@in", "must follow ';'"),
    ("text/plain, text/html", "must follow ';'"),
    ("text/plain; a=b c", "must follow ';'"),
    ("text/plain; a=b ", "must follow ';'"),
    ('text/plain; a="x"y', "must follow ';'"),
    ("text/plain; =utf-8", "parameter name must be a token"),
    ('text/plain; "a"=b', "parameter name must be a token"),
    ("text/plain; charset", "name=value"),
    ("text/plain; charset =utf-8", "name=value"),
    ("text/plain; charset= utf-8", "token or a complete quoted-string"),
    ("text/plain; charset=", "token or a complete quoted-string"),
    ("text/plain; a=[x]", "token or a complete quoted-string"),
    ('text/plain; a="unterminated', "token or a complete quoted-string"),
    ('text/plain; a="x\\"', "token or a complete quoted-string"),
    ("text/plain; a=1; a=2", "must not repeat"),
    ("text/plain; a=1; A=2", "must not repeat"),
    ("text/plain; charset=x;charset=x", "must not repeat"),
    ('text/plain; Charset="x"; cHARSET=y', "must not repeat"),
    ("image/png\r\n", "control"),
    ("image/png\x00", "control"),
    ("image/p\x7fng", "control"),
    ('text/plain; a="\x01"', "control"),
    ("text/plain;\x0ba=b", "control"),
    ('text/plain; a="x\\\x7f"', "control"),
    ("image/png\u00e9", "ASCII"),
    ("image/\U0001f680", "ASCII"),
    ("image/png\ud800", "ASCII"),
    ('text/plain; a="\u00e9"', "ASCII"),
    ("image/png\x80", "ASCII"),
]


@pytest.mark.parametrize(("text", "type_", "subtype", "parameters"), VALID)
def test_valid_media_types_CB_20(
    text: str, type_: str, subtype: str, parameters: tuple[tuple[str, str], ...]
) -> None:
    """CB-20: type/subtype with token or quoted-string parameters; CB-22: spelling kept."""
    parsed = parse_media_type(text)
    assert parsed == MediaType(text=text, type=type_, subtype=subtype, parameters=parameters)
    assert str(parsed) == text


@pytest.mark.parametrize(("text", "rule"), INVALID)
def test_invalid_media_types_CB_21(text: str, rule: str) -> None:
    """CB-21: malformed syntax, controls, non-ASCII and duplicate names are refused with a
    message that names the rule and never contains the input."""
    with pytest.raises(InvalidValueError) as caught:
        parse_media_type(text)
    message = str(caught.value)
    assert message.startswith("media type: ") and rule in message
    assert caught.value.rule == message
    if len(text) > 2:
        assert text not in message


def test_tables_are_large_enough_CB_21() -> None:
    assert len(VALID) >= 30 and len(INVALID) >= 30


@pytest.mark.parametrize("value", [None, b"image/png", 1, ["image/png"]])
def test_non_strings_are_refused_CB_21(value: object) -> None:
    with pytest.raises(InvalidValueError, match="must be a str"):
        parse_media_type(value)  # type: ignore[arg-type]


CONTROLS = [chr(c) for c in [*range(0x20), 0x7F] if c != 0x09]


@pytest.mark.parametrize("control", CONTROLS, ids=lambda c: f"U+{ord(c):04X}")
@pytest.mark.parametrize(
    "template", ["{}image/png", "image/{}png", "image/png{}", "a/b; c={}", 'a/b; c="{}"', "a/b;{}"]
)
def test_every_control_but_htab_is_refused_CB_21(control: str, template: str) -> None:
    """CB-21: C0 controls and DEL are refused wherever they appear, even inside quotes."""
    with pytest.raises(InvalidValueError, match="control"):
        parse_media_type(template.format(control))


@pytest.mark.parametrize("text", ["a/b\t;c=d", "a/b;\tc=d", 'a/b;c="\t"', 'a/b;c="\\\t"'])
def test_htab_is_accepted_where_the_grammar_allows_it_CB_20(text: str) -> None:
    """HTAB is OWS and qdtext / quoted-pair content; RFC 9110 allows it there."""
    assert parse_media_type(text).text == text


@pytest.mark.parametrize("text", ["\ta/b", "a\t/b", "a/\tb", "a/b;c\t=d", "a/b;c=\td", "a/b;c=d\t"])
def test_htab_is_refused_elsewhere_CB_21(text: str) -> None:
    with pytest.raises(InvalidValueError):
        parse_media_type(text)


def test_spelling_is_kept_CB_22() -> None:
    """CB-22: nothing is case-folded, trimmed, reordered or unquoted in ``text``."""
    text = 'Text/HTML ;  Charset="UTF-8";;Profile=MCP-App'
    parsed = parse_media_type(text)
    assert parsed.text == text
    assert (parsed.type, parsed.subtype) == ("Text", "HTML")
    assert parsed.parameters == (("Charset", "UTF-8"), ("Profile", "MCP-App"))


def test_a_str_subclass_is_read_as_plain_text_CB_20() -> None:
    class Text(str):
        pass

    parsed = parse_media_type(Text("image/png"))
    assert type(parsed.text) is str and parsed.text == "image/png"


@pytest.mark.parametrize("text", ["application/x-made-up", "image/x-unheard-of", "foo/bar"])
def test_no_registry_restriction_CB_23(text: str) -> None:
    """CB-23: any syntactically valid type is accepted; the application labels its data."""
    assert parse_media_type(text).text == text


def test_media_type_is_frozen() -> None:
    parsed = parse_media_type("image/png")
    with pytest.raises(dataclasses.FrozenInstanceError):
        parsed.type = "text"  # type: ignore[misc]


# --- properties --------------------------------------------------------------------------------

_tokens = st.text(alphabet=TCHARS, min_size=1, max_size=8)
_qdtext = st.text(alphabet="\t " + "".join(chr(c) for c in range(0x21, 0x7F)), max_size=8)
_ows = st.text(alphabet=" \t", max_size=2)


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@st.composite
def _media_types(draw: st.DrawFn) -> tuple[str, str, str, list[tuple[str, str]]]:
    type_, subtype = draw(_tokens), draw(_tokens)
    names = draw(st.lists(_tokens, max_size=4, unique_by=str.lower))
    parameters = [(name, draw(st.one_of(_tokens, _qdtext))) for name in names]
    text = f"{type_}/{subtype}"
    for name, value in parameters:
        spelt = value if value and all(c in TCHARS for c in value) else _quote(value)
        text += f"{draw(_ows)};{draw(_ows)}{name}={spelt}"
    return text, type_, subtype, parameters


@given(_media_types())
def test_generated_media_types_parse_exactly_CB_20(
    case: tuple[str, str, str, list[tuple[str, str]]],
) -> None:
    text, type_, subtype, parameters = case
    parsed = parse_media_type(text)
    assert (parsed.text, parsed.type, parsed.subtype) == (text, type_, subtype)
    assert parsed.parameters == tuple(parameters)


@given(st.text(max_size=40) | st.text(alphabet=TCHARS + '/;= \t"\\\x00\x7f', max_size=40))
def test_arbitrary_text_only_raises_the_declared_error_CB_21(text: str) -> None:
    try:
        parsed = parse_media_type(text)
    except InvalidValueError as error:
        assert str(error).startswith("media type: ")
    else:
        assert parsed.text == text and text.isascii()
        assert not any((c < " " and c != "\t") or c == "\x7f" for c in text)
