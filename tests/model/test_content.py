"""Content blocks, annotations and icons (CB-01..19, CB-23, CB-27) and their wire form.

A block is checked once, at construction, so the protocol layer can write it without looking
again; what it writes is checked here against the official JSON Schemas of the revisions.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import json
import typing
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest

from mcpkit.errors import InvalidValueError, OutputError, OutputFailure
from mcpkit.json import JsonArray, JsonObject, encode, json_equal
from mcpkit.model import (
    Annotations,
    AudioContent,
    BlobResourceContents,
    ContentBlock,
    EmbeddedResource,
    Icon,
    ImageContent,
    ResourceContents,
    ResourceLink,
    Role,
    TextContent,
    TextResourceContents,
)

from ..spec_schemas import SCHEMAS, schema_errors

SECRET = "SECRET-7f3a"
SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff", "a\udc00b", "\ud83d\ude80"]
# Well-formed text that must survive exactly (CB-17).
EXACT = [
    "",
    "\x00",
    "\x01\x1f\x7f",
    "\t\r\n",
    "\u0085\u2028\u2029",
    "\U0001f680",
    "\U0001f469\u200d\U0001f469\u200d\U0001f467",
    "e\u0301",  # NFD
    "\u00e9",  # NFC
    "\ufeffBOM",
    "\U0010ffff\uffff",
    "  spaces around  ",
]


def wire(block: Any) -> Any:
    """What the server would write for ``block``, read back as plain Python."""
    return json.loads(encode(block.to_json()))


def strings(value: Any) -> list[str]:
    """Every string in decoded JSON, member names included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [*value, *(s for member in value.values() for s in strings(member))]
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    return []


def refusal(build: Callable[[], object]) -> str:
    with pytest.raises(InvalidValueError) as caught:
        build()
    return str(caught.value)


# --- CB-01: the closed family ------------------------------------------------------------------


def test_content_block_is_a_closed_family_of_five_CB_01() -> None:
    assert typing.get_args(ContentBlock) == (
        TextContent,
        ImageContent,
        AudioContent,
        ResourceLink,
        EmbeddedResource,
    )
    assert typing.get_args(ResourceContents) == (TextResourceContents, BlobResourceContents)


@pytest.mark.parametrize(
    "build",
    [
        lambda: TextContent(text="x"),
        lambda: ImageContent(data=b"x", mime_type="image/png"),
        lambda: AudioContent(data=b"x", mime_type="audio/wav"),
        lambda: ResourceLink(uri="file:///x", name="x"),
        lambda: EmbeddedResource(resource=TextResourceContents(uri="file:///x", text="x")),
        lambda: TextResourceContents(uri="file:///x", text="x"),
        lambda: BlobResourceContents(uri="file:///x", blob=b"x"),
        lambda: Annotations(priority=1),
        lambda: Icon(src="https://example.com/i.png"),
    ],
    ids=lambda build: type(build()).__name__,
)
def test_values_are_frozen_and_slotted(build: Callable[[], Any]) -> None:
    """content blocks are immutable once built."""
    value = build()
    field = dataclasses.fields(value)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, field, getattr(value, field))
    assert not hasattr(value, "__dict__")
    assert hash(value) == hash(build()) and value == build()


def test_fields_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        TextContent("x")  # type: ignore[call-arg]


# --- CB-02 / CB-16 / CB-17: text --------------------------------------------------------------


def test_text_content_CB_02() -> None:
    """CB-02: text plus optional annotations and metadata."""
    block = TextContent(text="hi", annotations=Annotations(priority=1), meta={"k": [1, "v"]})
    assert block.text == "hi" and block.annotations == Annotations(priority=1)
    assert block.meta == {"k": [1, "v"]} and type(block.meta) is JsonObject
    assert isinstance(block.meta["k"], JsonArray)


_TEXT = TextResourceContents(uri="file:///a", text="")
# (field, factory putting ``s`` into that field)
TEXT_FIELDS: list[tuple[str, Callable[[str], object]]] = [
    ("TextContent.text", lambda s: TextContent(text=s)),
    ("TextResourceContents.text", lambda s: TextResourceContents(uri="file:///a", text=s)),
    ("ResourceLink.name", lambda s: ResourceLink(uri="file:///a", name=s)),
    ("ResourceLink.title", lambda s: ResourceLink(uri="file:///a", name="a", title=s)),
    ("ResourceLink.description", lambda s: ResourceLink(uri="file:///a", name="", description=s)),
    ("TextContent.meta", lambda s: TextContent(text="", meta={"k": s})),
    ("TextContent.meta", lambda s: TextContent(text="", meta={s: 1})),
    ("EmbeddedResource.meta", lambda s: EmbeddedResource(resource=_TEXT, meta={"a": {"b": [s]}})),
]
OTHER_STRING_FIELDS: list[tuple[str, Callable[[str], object]]] = [
    ("TextResourceContents.uri", lambda s: TextResourceContents(uri="file:///" + s, text="")),
    ("BlobResourceContents.uri", lambda s: BlobResourceContents(uri="file:///" + s, blob=b"")),
    ("ResourceLink.uri", lambda s: ResourceLink(uri="file:///" + s, name="")),
    ("Icon.src", lambda s: Icon(src="https://example.com/" + s)),
    ("Icon.mime_type", lambda s: Icon(src="a:b", mime_type="image/png" + s)),
    ("Icon.sizes", lambda s: Icon(src="a:b", sizes=("48x48" + s,))),
    ("Icon.theme", lambda s: Icon(src="a:b", theme="dark" + s)),  # type: ignore[arg-type]
    ("ImageContent.mime_type", lambda s: ImageContent(data=b"", mime_type="image/png" + s)),
    ("AudioContent.mime_type", lambda s: AudioContent(data=b"", mime_type="audio/wav" + s)),
    ("ResourceLink.mime_type", lambda s: ResourceLink(uri="a:b", name="", mime_type="a/b" + s)),
    ("BlobResourceContents.mime_type",
     lambda s: BlobResourceContents(uri="a:b", blob=b"", mime_type="a/b" + s)),
    ("Annotations.last_modified", lambda s: Annotations(last_modified="2025-01-12" + s)),
]  # fmt: skip


@pytest.mark.parametrize("surrogate", SURROGATES, ids=ascii)
@pytest.mark.parametrize(("field", "build"), TEXT_FIELDS + OTHER_STRING_FIELDS)
def test_unpaired_surrogates_are_refused_everywhere_CB_16(
    field: str, build: Callable[[str], object], surrogate: str
) -> None:
    """CB-16: every string a block holds refuses unpaired surrogates, naming the field."""
    assert refusal(lambda: build(surrogate)).startswith(f"{field}: ")


@pytest.mark.parametrize("text", EXACT, ids=ascii)
@pytest.mark.parametrize(("field", "build"), TEXT_FIELDS)
def test_well_formed_text_is_kept_exactly_CB_17(
    field: str, build: Callable[[str], object], text: str
) -> None:
    """CB-17: empty strings, controls, emoji, combining marks and both normalisation forms are
    kept as given, in the value and on the wire."""
    value = build(text)
    assert text in strings(wire(value))
    assert value == build(text)


def test_text_is_stored_as_given_CB_17() -> None:
    for text in EXACT:
        assert TextContent(text=text).text == text
        assert TextResourceContents(uri="a:b", text=text).text == text
        assert ResourceLink(uri="a:b", name=text, title=text, description=text).title == text


def test_normalisation_forms_stay_distinct_CB_17() -> None:
    nfc, nfd = TextContent(text="\u00e9"), TextContent(text="e\u0301")
    assert nfc != nfd and nfc.text == "\u00e9" and nfd.text == "e\u0301"
    assert wire(nfd)["text"] == "e\u0301"


def test_str_subclasses_are_stored_as_plain_str_CB_17() -> None:
    class Text(str):
        pass

    block = TextContent(text=Text("hi"))
    assert type(block.text) is str and block.text == "hi"


@pytest.mark.parametrize("value", [None, b"x", 1, ["x"]])
def test_text_must_be_a_str_CB_16(value: object) -> None:
    assert refusal(lambda: TextContent(text=value)).startswith("TextContent.text: ")  # type: ignore[arg-type]


def test_large_text_is_not_checked_at_construction_CB_18() -> None:
    """CB-18: construction checks well-formedness only; the JSON string ceiling applies when
    the response is written."""
    block = TextContent(text="\n" * 1_048_577)
    with pytest.raises(OutputError) as caught:
        encode(block.to_json())
    assert caught.value.reason in (OutputFailure.STRING_UNITS, OutputFailure.TOKEN_UNITS)


# --- CB-03 / CB-23 / CB-27: binary data -------------------------------------------------------

BINARY: list[tuple[str, Callable[[Any], Any], str]] = [
    ("ImageContent", lambda data: ImageContent(data=data, mime_type="image/png"), "data"),
    ("AudioContent", lambda data: AudioContent(data=data, mime_type="audio/wav"), "data"),
    ("BlobResourceContents", lambda data: BlobResourceContents(uri="a:b", blob=data), "blob"),
]


@pytest.mark.parametrize(("name", "build", "field"), BINARY)
def test_binary_data_is_a_defensive_copy_CB_03(
    name: str, build: Callable[[Any], Any], field: str
) -> None:
    """CB-03: bytes-like input is copied; changing the source later changes nothing."""
    source = bytearray(b"abc")
    from_bytearray = build(source)
    view_source = bytearray(b"abc")
    from_view = build(memoryview(view_source))
    source[0] = view_source[0] = ord("z")
    source.extend(b"more")
    for block in (from_bytearray, from_view):
        assert getattr(block, field) == b"abc" and type(getattr(block, field)) is bytes
        assert block == build(b"abc")


@pytest.mark.parametrize(("name", "build", "field"), BINARY)
def test_binary_data_must_be_bytes_like_CB_03(
    name: str, build: Callable[[Any], Any], field: str
) -> None:
    """An int would make ``bytes(n)`` zero bytes and a str has no bytes: both are refused."""
    for value in ("abc", 3, [1, 2], None):
        assert refusal(functools.partial(build, value)) == (
            f"{name}.{field}: must be bytes, bytearray or memoryview"
        )


@pytest.mark.parametrize(("name", "build", "field"), BINARY)
def test_binary_size_is_not_checked_at_construction_CB_27(
    name: str, build: Callable[[Any], Any], field: str
) -> None:
    """CB-27: constructors copy without prevalidating the 786,432-byte response ceiling."""
    block = build(bytes(786_433))
    assert len(getattr(block, field)) == 786_433


def test_bytes_are_not_inspected_CB_23() -> None:
    """CB-23: the data is not sniffed, and any well-formed media type is accepted."""
    block = ImageContent(data=b"definitely not a PNG", mime_type="image/png")
    assert block.data == b"definitely not a PNG"
    assert AudioContent(data=b"", mime_type="audio/x-made-up; q=1").mime_type == (
        "audio/x-made-up; q=1"
    )


def test_image_and_audio_are_different_kinds_CB_01() -> None:
    image = ImageContent(data=b"x", mime_type="a/b")
    audio = AudioContent(data=b"x", mime_type="a/b")
    assert image != typing.cast(object, audio)
    assert (wire(image)["type"], wire(audio)["type"]) == ("image", "audio")


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda m: ImageContent(data=b"", mime_type=m), "ImageContent.mime_type"),
        (lambda m: AudioContent(data=b"", mime_type=m), "AudioContent.mime_type"),
        (lambda m: Icon(src="a:b", mime_type=m), "Icon.mime_type"),
        (lambda m: ResourceLink(uri="a:b", name="", mime_type=m), "ResourceLink.mime_type"),
        (lambda m: TextResourceContents(uri="a:b", text="", mime_type=m),
         "TextResourceContents.mime_type"),
        (lambda m: BlobResourceContents(uri="a:b", blob=b"", mime_type=m),
         "BlobResourceContents.mime_type"),
    ],
)  # fmt: skip
def test_every_mime_type_uses_the_media_type_parser_CB_10(
    build: Callable[[str], Any], field: str
) -> None:
    """CB-10, CB-20..22: one parser for every MIME type; spelling kept, errors named."""
    assert build("Image/PNG ;Q=1").mime_type == "Image/PNG ;Q=1"
    for bad in ("image", "image/png; a=1; A=2", "image/p\u00e9ng", "image/png\n", ""):
        message = refusal(functools.partial(build, bad))
        assert message.startswith(f"{field}: media type: ")


def test_image_and_audio_require_a_mime_type_CB_03() -> None:
    with pytest.raises(TypeError):
        ImageContent(data=b"")  # type: ignore[call-arg]
    assert refusal(lambda: AudioContent(data=b"", mime_type=None)).startswith(  # type: ignore[arg-type]
        "AudioContent.mime_type: "
    )


# --- URIs: CB-08 / CB-09 / CB-14 ---------------------------------------------------------------

URI_FIELDS: list[tuple[str, Callable[[str], Any]]] = [
    ("Icon.src", lambda uri: Icon(src=uri)),
    ("ResourceLink.uri", lambda uri: ResourceLink(uri=uri, name="n")),
    ("TextResourceContents.uri", lambda uri: TextResourceContents(uri=uri, text="")),
    ("BlobResourceContents.uri", lambda uri: BlobResourceContents(uri=uri, blob=b"")),
]
VALID_URIS = [
    "https://example.com/icon.png",
    "data:image/png;base64,iVBORw0KGgo=",
    "file:///project/src/main.rs",
    "urn:isbn:0451450523",
    "a:",
    "A+b-c.d9:x",
    "custom-scheme://x/{not-a-template}",
    "HTTPS://Example.COM:443/a/../b/%7e/?#",  # kept exactly: no normalisation (CB-09)
    "javascript:void(0)",  # no scheme allowlist (CB-14)
    "ftp://example.com/x",
    "mailto:a@example.com",
    "https://example.com/\u00fc\U0001f680",  # IRI characters are kept
    "C:\\path",
]
INVALID_URIS = [
    ("", "absolute URI"),
    ("/icon.png", "absolute URI"),
    ("icon.png", "absolute URI"),
    ("//example.com/x", "absolute URI"),
    ("1http://x", "absolute URI"),
    ("+a:b", "absolute URI"),
    ("-a:b", "absolute URI"),
    (".a:b", "absolute URI"),
    (":x", "absolute URI"),
    ("http//x", "absolute URI"),
    ("\u00e9:x", "absolute URI"),
    ("a_b:c", "absolute URI"),
    ("a b:c", "absolute URI"),
    (" https://x", "absolute URI"),
    ("https://example.com/a b", "spaces or control"),
    ("https://x/\n", "spaces or control"),
    ("https://x/\t", "spaces or control"),
    ("https://x/\x00", "spaces or control"),
    ("https://x/\x7f", "spaces or control"),
    ("https://x/\x85", "spaces or control"),
]


@pytest.mark.parametrize("uri", VALID_URIS)
@pytest.mark.parametrize(("field", "build"), URI_FIELDS)
def test_absolute_uris_are_kept_unnormalised_CB_09(
    field: str, build: Callable[[str], Any], uri: str
) -> None:
    """CB-08, CB-09, CB-14: any absolute URI, any scheme, exactly as given."""
    value = build(uri)
    assert getattr(value, field.split(".")[1]) == uri
    assert uri in strings(wire(value))


@pytest.mark.parametrize(("uri", "rule"), INVALID_URIS)
@pytest.mark.parametrize(("field", "build"), URI_FIELDS)
def test_relative_or_malformed_uris_are_refused_CB_08(
    field: str, build: Callable[[str], Any], uri: str, rule: str
) -> None:
    """CB-08: relative references (no RFC 3986 scheme) are refused at the factory."""
    message = refusal(lambda: build(uri))
    assert message.startswith(f"{field}: ") and rule in message


# --- annotations: CB-06 ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("priority", "stored"),
    [
        (0, 0),
        (1, 1),
        (0.0, Decimal("0.0")),
        (1.0, Decimal("1.0")),
        (0.7, Decimal("0.7")),
        (0.1, Decimal("0.1")),
        (5e-324, Decimal("5e-324")),
        (Decimal("1.000"), Decimal("1.000")),
        (Decimal("0E-1000"), Decimal("0E-1000")),
        (Decimal("1E+0"), Decimal("1")),
        (Decimal("-0"), Decimal("-0")),
    ],
)
def test_priority_edges_are_accepted_CB_06(priority: Any, stored: Any) -> None:
    """CB-06: priority is a number from 0 to 1 inclusive, stored as the JSON number it is."""
    annotations = Annotations(priority=priority)
    assert annotations.priority == stored and type(annotations.priority) is type(stored)
    assert str(annotations.priority) == str(stored)


@pytest.mark.parametrize(
    ("priority", "rule"),
    [
        (-1, "between 0 and 1"),
        (2, "between 0 and 1"),
        (-1e-9, "between 0 and 1"),
        (1.0000000000000002, "between 0 and 1"),
        (Decimal("1.0000000000000000000001"), "between 0 and 1"),
        (Decimal("-1E-1000"), "between 0 and 1"),
        (Decimal("1E+999999"), "between 0 and 1"),
        (float("nan"), "finite"),
        (float("inf"), "finite"),
        (float("-inf"), "finite"),
        (Decimal("NaN"), "finite"),
        (Decimal("sNaN"), "finite"),
        (Decimal("Infinity"), "finite"),
        (True, "int, float or Decimal"),
        (False, "int, float or Decimal"),
        ("0.5", "int, float or Decimal"),
    ],
    ids=repr,
)
def test_priority_just_past_the_edges_is_refused_CB_06(priority: Any, rule: str) -> None:
    message = refusal(lambda: Annotations(priority=priority))
    assert message.startswith("Annotations.priority: ") and rule in message


@pytest.mark.parametrize(
    "text",
    [
        "2025-01-12T15:00:58Z",
        "2025-05-03T14:30:00Z",
        "2025-01-12T15:00:58+01:00",
        "2025-01-12T15:00:58.123456-08:00",
        "2025-01-12",
        "20250112T150058",
        "2025-01-12 15:00",  # Python's fromisoformat reads this too
    ],
)
def test_last_modified_is_iso_8601_kept_as_spelt_CB_06(text: str) -> None:
    annotations = Annotations(last_modified=text)
    assert annotations.last_modified == text
    assert wire(annotations) == {"lastModified": text}


@pytest.mark.parametrize(
    "text",
    [
        "",
        "yesterday",
        "2025-13-01",
        "2025-01-32",
        "2025-01-12T25:00:00Z",
        "2025-01-12T15:00:58z",
        "2025-01-12T15:00:58ZZ",
        "2025-01-12T15:00:58Z\n",
        " 2025-01-12",
        "\uff12\uff10\uff12\uff15-01-12",
    ],
    ids=ascii,
)
def test_malformed_last_modified_is_refused_CB_06(text: str) -> None:
    message = refusal(lambda: Annotations(last_modified=text))
    assert message == "Annotations.last_modified: must be an ISO 8601 date-time"


def test_audience_CB_06() -> None:
    """The audience keeps order and duplicates; a list is stored as a tuple; an empty audience
    is kept (and written as ``[]``), distinct from an absent one."""
    both = Annotations(audience=[Role.ASSISTANT, Role.USER, Role.USER])  # type: ignore[arg-type]
    assert both.audience == (Role.ASSISTANT, Role.USER, Role.USER)
    assert wire(both) == {"audience": ["assistant", "user", "user"]}
    assert wire(Annotations(audience=())) == {"audience": []}
    assert wire(Annotations()) == {}
    assert refusal(lambda: Annotations(audience=("user",))) == (  # type: ignore[arg-type]
        "Annotations.audience: every audience entry must be a Role"
    )
    assert refusal(lambda: Annotations(audience="user")) == (  # type: ignore[arg-type]
        "Annotations.audience: must be a tuple or a list"
    )


def test_annotations_compare_as_json_numbers_CB_06() -> None:
    assert Annotations(priority=0.5) == Annotations(priority=Decimal("0.50"))
    assert hash(Annotations(priority=0.5)) == hash(Annotations(priority=Decimal("0.50")))


@pytest.mark.parametrize(
    "build",
    [
        lambda a: TextContent(text="", annotations=a),
        lambda a: ImageContent(data=b"", mime_type="a/b", annotations=a),
        lambda a: AudioContent(data=b"", mime_type="a/b", annotations=a),
        lambda a: ResourceLink(uri="a:b", name="", annotations=a),
        lambda a: EmbeddedResource(resource=_TEXT, annotations=a),
    ],
)
def test_annotations_must_be_annotations_CB_06(build: Callable[[Any], Any]) -> None:
    assert build(None).annotations is None
    assert "must be an Annotations" in refusal(lambda: build({"priority": 1}))


# --- icons: CB-07 / CB-11 / CB-12 / CB-13 ------------------------------------------------------


def test_icon_fields_CB_07() -> None:
    icon = Icon(
        src="https://example.com/i.svg", mime_type="image/svg+xml", sizes=("any",), theme="dark"
    )
    assert wire(icon) == {
        "src": "https://example.com/i.svg",
        "mimeType": "image/svg+xml",
        "sizes": ["any"],
        "theme": "dark",
    }
    assert wire(Icon(src="a:b")) == {"src": "a:b"}
    assert Icon(src="a:b", theme="light").theme == "light"


@pytest.mark.parametrize("theme", ["Light", "DARK", "", "auto", "light "])
def test_icon_theme_is_light_or_dark_CB_07(theme: str) -> None:
    assert refusal(lambda: Icon(src="a:b", theme=theme)) == (  # type: ignore[arg-type]
        "Icon.theme: must be 'light' or 'dark'"
    )


VALID_SIZES = ["48x48", "0x0", "1x1", "007x08", "16x9", "99999999999999999999x1", "any"]
INVALID_SIZES = [
    "48X48", "48 x48", "48x48 ", " 48x48", "48x", "x48", "x", "48", "", "ANY", "Any", "any ",
    "48x48x48", "-1x2", "+1x2", "1.5x2", "1e2x2", "48x48\n", "\uff14\uff18x48", "48\u00d748",
    "\u0664x4", "4\U0001d7d8x4",
]  # fmt: skip


@pytest.mark.parametrize("size", VALID_SIZES)
def test_icon_sizes_grammar_accepts_CB_11(size: str) -> None:
    """CB-11, CB-13: ASCII-decimal WxH with a lowercase x, or exactly ``any``; the numbers are
    not checked against anything."""
    assert Icon(src="a:b", sizes=(size,)).sizes == (size,)


@pytest.mark.parametrize("size", INVALID_SIZES, ids=ascii)
def test_icon_sizes_grammar_refuses_CB_11(size: str) -> None:
    message = refusal(lambda: Icon(src="a:b", sizes=("any", size)))
    assert message == "Icon.sizes: every size must be ASCII-decimal WxH with a lowercase x, or any"


@pytest.mark.parametrize("sizes", ["48x48", {"48x48"}, 48])
def test_icon_sizes_must_be_a_sequence_CB_11(sizes: Any) -> None:
    assert refusal(lambda: Icon(src="a:b", sizes=sizes)) == "Icon.sizes: must be a tuple or a list"


@pytest.mark.parametrize("entry", [48, None, b"48x48"])
def test_icon_sizes_must_be_strings_CB_11(entry: Any) -> None:
    message = refusal(lambda: Icon(src="a:b", sizes=(entry,)))
    assert message == "Icon.sizes: every size must be a str"


def test_icon_sizes_keep_order_duplicates_and_spelling_CB_12() -> None:
    sizes = ["any", "048x48", "16x16", "16x16"]
    icon = Icon(src="a:b", sizes=sizes)  # type: ignore[arg-type]
    assert icon.sizes == ("any", "048x48", "16x16", "16x16")
    assert wire(icon)["sizes"] == sizes


@pytest.mark.parametrize("empty", [None, (), []])
def test_empty_icon_sizes_clear_CB_12(empty: Any) -> None:
    assert Icon(src="a:b", sizes=empty).sizes is None
    assert Icon(src="a:b", sizes=("any",)).with_sizes(empty).sizes is None


def test_with_sizes_replaces_atomically_CB_12() -> None:
    """CB-12: a valid replacement gives a new icon; an invalid one raises and the original is
    untouched (it is immutable, so there is nothing to roll back)."""
    icon = Icon(src="https://example.com/i.png", mime_type="image/png", sizes=("16x16",))
    replaced = icon.with_sizes(["32x32", "any"])
    assert replaced.sizes == ("32x32", "any") and replaced.src == icon.src
    assert replaced.mime_type == icon.mime_type
    assert icon.with_sizes(("8x8",)).sizes == ("8x8",)
    message = refusal(lambda: icon.with_sizes(["32x32", "32X32"]))
    assert message.startswith("Icon.sizes: ")
    assert icon.sizes == ("16x16",)
    assert refusal(lambda: icon.with_sizes("32x32")) == "Icon.sizes: must be a tuple or a list"  # type: ignore[arg-type]


# --- resource links, resources: CB-04 / CB-05 -------------------------------------------------


def full_link(**changes: Any) -> ResourceLink:
    fields: dict[str, Any] = {
        "uri": "file:///project/src/main.rs",
        "name": "main.rs",
        "title": "Main",
        "description": "Primary entry point",
        "mime_type": "text/x-rust",
        "size": 42,
        "icons": (
            Icon(src="https://example.com/rs.png", mime_type="image/png", sizes=("48x48",)),
            Icon(src="data:image/svg+xml;base64,PHN2Zy8+", theme="dark"),
        ),
        "annotations": Annotations(audience=(Role.USER,), priority=0.25),
        "meta": {"com.example/k": True},
    }
    return ResourceLink(**{**fields, **changes})


def test_resource_link_wire_form_CB_04() -> None:
    assert wire(full_link()) == {
        "type": "resource_link",
        "uri": "file:///project/src/main.rs",
        "name": "main.rs",
        "title": "Main",
        "description": "Primary entry point",
        "mimeType": "text/x-rust",
        "size": 42,
        "icons": [
            {"src": "https://example.com/rs.png", "mimeType": "image/png", "sizes": ["48x48"]},
            {"src": "data:image/svg+xml;base64,PHN2Zy8+", "theme": "dark"},
        ],
        "annotations": {"audience": ["user"], "priority": 0.25},
        "_meta": {"com.example/k": True},
    }
    minimal = ResourceLink(uri="a:b", name="")
    assert wire(minimal) == {"type": "resource_link", "uri": "a:b", "name": ""}
    assert minimal.icons == ()


@pytest.mark.parametrize("size", [0, 1, 2**63, 10**30])
def test_resource_link_size_accepts_non_negative_ints_CB_04(size: int) -> None:
    assert full_link(size=size).size == size


@pytest.mark.parametrize("size", [-1, True, False, 1.0, "1", Decimal(1)])
def test_resource_link_size_refuses_the_rest_CB_04(size: Any) -> None:
    assert refusal(lambda: full_link(size=size)) == "ResourceLink.size: must be a non-negative int"


def test_resource_link_icons_CB_04() -> None:
    icon = Icon(src="a:b")
    assert ResourceLink(uri="a:b", name="", icons=[icon, icon]).icons == (icon, icon)  # type: ignore[arg-type]
    assert refusal(lambda: ResourceLink(uri="a:b", name="", icons=({"src": "a:b"},))) == (  # type: ignore[arg-type]
        "ResourceLink.icons: every icon must be an Icon"
    )
    assert refusal(lambda: ResourceLink(uri="a:b", name="", icons=None)) == (  # type: ignore[arg-type]
        "ResourceLink.icons: must be a tuple or a list"
    )


def test_icons_dropped_CB_04() -> None:
    """The 2025-06-18 projection helper: a copy without icons; every other field survives and
    the application's value is unchanged (LG)."""
    link = full_link()
    dropped = link.icons_dropped()
    assert dropped.icons == () and "icons" not in wire(dropped)
    assert dataclasses.replace(dropped, icons=link.icons) == link
    assert len(link.icons) == 2
    plain = full_link(icons=())
    assert plain.icons_dropped() is plain


def test_resource_contents_wire_form_CB_05() -> None:
    text = TextResourceContents(
        uri="file:///a.txt", text="hi", mime_type="text/plain", meta={"k": 1}
    )
    blob = BlobResourceContents(uri="file:///a.bin", blob=b"\xfb\xff\x00")
    assert wire(text) == {
        "uri": "file:///a.txt",
        "mimeType": "text/plain",
        "text": "hi",
        "_meta": {"k": 1},
    }
    assert wire(blob) == {"uri": "file:///a.bin", "blob": "+/8A"}
    assert wire(EmbeddedResource(resource=blob)) == {"type": "resource", "resource": wire(blob)}
    annotated = EmbeddedResource(resource=text, annotations=Annotations(priority=0), meta={})
    assert wire(annotated) == {
        "type": "resource",
        "resource": wire(text),
        "annotations": {"priority": 0},
        "_meta": {},
    }  # fmt: skip


@pytest.mark.parametrize("resource", [TextContent(text=""), {"uri": "a:b", "text": ""}, None])
def test_embedded_resource_holds_resource_contents_only_CB_05(resource: Any) -> None:
    assert refusal(lambda: EmbeddedResource(resource=resource)) == (
        "EmbeddedResource.resource: must be a TextResourceContents or a BlobResourceContents"
    )


# --- binary wire form --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "encoded"),
    [
        (b"", ""),
        (b"\xfb", "+w=="),
        (b"\xfb\xff", "+/8="),
        (b"\xfb\xff\xbf", "+/+/"),
        (b"abcd", "YWJjZA=="),
    ],
)
def test_binary_is_standard_base64_with_padding_CB_03(data: bytes, encoded: str) -> None:
    assert wire(ImageContent(data=data, mime_type="image/png")) == {
        "type": "image",
        "data": encoded,
        "mimeType": "image/png",
    }
    assert wire(BlobResourceContents(uri="a:b", blob=data))["blob"] == encoded
    assert base64.b64decode(encoded, validate=True) == data


def test_text_content_wire_form_CB_02() -> None:
    assert wire(TextContent(text="hi")) == {"type": "text", "text": "hi"}
    block = TextContent(
        text="hi",
        annotations=Annotations(audience=(Role.USER, Role.ASSISTANT), last_modified="2025-01-12Z"),
        meta={"k": [1, 2.5, None]},
    )
    assert wire(block) == {
        "type": "text",
        "text": "hi",
        "annotations": {"audience": ["user", "assistant"], "lastModified": "2025-01-12Z"},
        "_meta": {"k": [1, 2.5, None]},
    }
    assert type(block.to_json()) is JsonObject


# --- metadata ----------------------------------------------------------------------------------


def test_meta_is_an_immutable_json_copy() -> None:
    source: dict[str, Any] = {"k": [1, {"n": "v"}]}
    block = TextContent(text="", meta=source)
    source["k"].append(2)
    source["new"] = 1
    assert block.meta == {"k": [1, {"n": "v"}]}
    with pytest.raises(TypeError):
        block.meta["x"] = 1  # type: ignore[index]


@pytest.mark.parametrize(
    ("meta", "rule"),
    [
        ([("k", 1)], "must be a mapping"),
        ("k", "must be a mapping"),
        ({1: "v"}, "member name must be a str"),
        ({"k": {1, 2}}, "cannot be a set"),
        ({"k": float("nan")}, "finite"),
    ],
)
def test_meta_must_be_a_json_object(meta: Any, rule: str) -> None:
    message = refusal(lambda: ImageContent(data=b"", mime_type="a/b", meta=meta))
    assert message.startswith("ImageContent.meta: ") and rule in message


def test_meta_equality_is_json_equality() -> None:
    a, b = TextContent(text="", meta={"n": 1}), TextContent(text="", meta={"n": Decimal("1.0")})
    assert a == b and hash(a) == hash(b)
    assert TextContent(text="", meta={"n": True}) != a


# --- CB-19 and repr: nothing leaks -------------------------------------------------------------

LEAKS: list[Callable[[], object]] = [
    lambda: TextContent(text=SECRET + "\ud800"),
    lambda: TextContent(text="", meta={SECRET: float("nan")}),
    lambda: Icon(src=SECRET),
    lambda: Icon(src="a:b", sizes=(SECRET,)),
    lambda: Icon(src="a:b", theme=SECRET),  # type: ignore[arg-type]
    lambda: Annotations(last_modified=SECRET),
    lambda: ImageContent(data=b"", mime_type=SECRET),
    lambda: ImageContent(data=b"", mime_type="image/png; " + SECRET),
    lambda: ResourceLink(uri=SECRET, name=SECRET),
    lambda: ResourceLink(uri="https://x/" + SECRET + " ", name=""),
    lambda: BlobResourceContents(uri="a:b", blob=SECRET),  # type: ignore[arg-type]
]


@pytest.mark.parametrize("build", LEAKS)
def test_refusals_never_echo_the_value_CB_19(build: Callable[[], object]) -> None:
    """CB-19: the message names the class, field and rule only, so an escaping construction
    error can never carry application data."""
    message = refusal(build)
    assert SECRET not in message and ": " in message


def test_repr_shows_no_payload() -> None:
    blocks: list[object] = [
        TextContent(text=SECRET, meta={"k": SECRET}),
        ImageContent(data=SECRET.encode(), mime_type="image/png"),
        AudioContent(data=SECRET.encode(), mime_type="audio/wav"),
        EmbeddedResource(resource=TextResourceContents(uri="file:///a", text=SECRET)),
        EmbeddedResource(resource=BlobResourceContents(uri="file:///a", blob=SECRET.encode())),
        ResourceLink(uri="a:b", name="a", icons=(Icon(src="data:image/png;base64," + SECRET),)),
        Icon(src="DATA:image/png;base64," + SECRET),
    ]  # fmt: skip
    for block in blocks:
        text = repr(block)
        assert SECRET not in text and text.startswith(type(block).__name__ + "(")
    assert repr(TextContent(text=SECRET, meta={"k": SECRET})) == (
        "TextContent(text=<11 chars>, meta=<1 members>)"
    )
    assert repr(ImageContent(data=b"abc", mime_type="image/png")) == (
        "ImageContent(data=<3 bytes>, mime_type='image/png')"
    )
    assert "uri='file:///a'" in repr(blocks[3]) and "<data URI, " in repr(blocks[5])


# --- wire form against the official schemas ----------------------------------------------------


ANNOTATED = Annotations(audience=(Role.USER,), priority=0.5, last_modified="2025-05-03T14:30:00Z")
SAMPLES: list[tuple[str, ContentBlock]] = [
    ("TextContent", TextContent(text="")),
    ("TextContent", TextContent(text="x\x00\U0001f680", annotations=ANNOTATED, meta={"a/b": 1})),
    ("ImageContent", ImageContent(data=b"\x89PNG", mime_type="image/png")),
    ("ImageContent", ImageContent(data=b"", mime_type="a/b", annotations=Annotations(), meta={})),
    ("AudioContent", AudioContent(data=b"RIFF", mime_type="audio/wav; r=8", annotations=ANNOTATED)),
    ("ResourceLink", ResourceLink(uri="file:///x", name="x")),
    ("ResourceLink", full_link()),
    ("EmbeddedResource", EmbeddedResource(resource=TextResourceContents(uri="a:b", text="t"))),
    ("EmbeddedResource", EmbeddedResource(
        resource=BlobResourceContents(uri="a:b", blob=b"\x00", mime_type="a/b", meta={"k": 1}),
        annotations=ANNOTATED,
        meta={"k": [1]},
    )),
]  # fmt: skip


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
@pytest.mark.parametrize(("definition", "block"), SAMPLES, ids=repr)
def test_wire_form_matches_the_official_schema(
    revision: str, definition: str, block: ContentBlock
) -> None:
    """The full wire form is valid for the two revisions that have icons."""
    assert schema_errors(revision, definition, wire(block)) == []
    assert schema_errors(revision, "ContentBlock", wire(block)) == []


@pytest.mark.parametrize(("definition", "block"), SAMPLES, ids=repr)
def test_wire_form_without_icons_matches_the_june_schema(
    definition: str, block: ContentBlock
) -> None:
    """2025-06-18 has no icons: with them dropped every sample is valid June content, and with
    them kept a link is not, which is why the protocol layer must project it."""
    projected = block.icons_dropped() if isinstance(block, ResourceLink) else block
    assert schema_errors("2025-06-18", definition, wire(projected)) == []
    if isinstance(block, ResourceLink) and block.icons:
        assert schema_errors("2025-06-18", definition, wire(block)) != []


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_parts_match_the_official_schema(revision: str) -> None:
    parts: list[tuple[str, Any]] = [
        ("Annotations", ANNOTATED),
        ("Annotations", Annotations(audience=(), priority=1)),
        ("Icon", Icon(src="a:b")),
        ("Icon", Icon(src="https://x/i.png", mime_type="a/b", sizes=("1x1", "any"), theme="light")),
        ("TextResourceContents", TextResourceContents(uri="a:b", text="", mime_type="a/b")),
        ("BlobResourceContents", BlobResourceContents(uri="a:b", blob=b"\xff")),
    ]  # fmt: skip
    for definition, part in parts:
        assert schema_errors(revision, definition, wire(part)) == []


def _example(definition: str) -> Any:
    directory = SCHEMAS / "examples-2026-07-28" / definition
    if not directory.is_dir():
        pytest.fail(f"official examples not found at {directory}")
    (path,) = sorted(directory.glob("*.json"))
    return json.loads(path.read_text(encoding="utf-8"))


def test_official_examples_are_reproduced_exactly() -> None:
    """Building the spec's own examples gives exactly the spec's JSON."""
    text = _example("TextContent")
    assert wire(TextContent(text=text["text"])) == text

    image = _example("ImageContent")
    built = ImageContent(
        data=base64.b64decode(image["data"]),
        mime_type=image["mimeType"],
        annotations=Annotations(audience=(Role.USER,), priority=0.9),
    )
    assert wire(built) == image

    audio = _example("AudioContent")
    built_audio = AudioContent(data=base64.b64decode(audio["data"]), mime_type="audio/wav")
    assert wire(built_audio) == audio

    link = _example("ResourceLink")
    built_link = ResourceLink(
        uri=link["uri"],
        name=link["name"],
        description=link["description"],
        mime_type=link["mimeType"],
    )
    assert wire(built_link) == link

    embedded = _example("EmbeddedResource")
    resource = embedded["resource"]
    built_embedded = EmbeddedResource(
        resource=TextResourceContents(
            uri=resource["uri"], mime_type=resource["mimeType"], text=resource["text"]
        ),
        annotations=Annotations(
            audience=(Role.USER, Role.ASSISTANT), priority=0.7, last_modified="2025-05-03T14:30:00Z"
        ),
    )
    assert wire(built_embedded) == embedded

    blob = _example("BlobResourceContents")
    built_blob = BlobResourceContents(
        uri=blob["uri"], mime_type=blob["mimeType"], blob=base64.b64decode(blob["blob"])
    )
    assert wire(built_blob) == blob
    assert json_equal(built_blob.to_json(), blob)

    text_contents = _example("TextResourceContents")
    built_text = TextResourceContents(
        uri=text_contents["uri"], mime_type=text_contents["mimeType"], text=text_contents["text"]
    )
    assert wire(built_text) == text_contents
