"""Content blocks: what tool results and prompt messages carry (CB-01..19, CB-27).

Each class is a frozen, slotted, keyword-only dataclass whose ``__post_init__`` runs one check
per field, so a block that exists is one the protocol layer can write.  Two checks are
deliberately *not* made at construction (CB-18, CB-27): JSON size limits and the 786,432-byte
binary ceiling apply when a response is written, because only then is the whole response known.

Text is kept exactly (CB-17): text fields only refuse unpaired surrogates (CB-16), so empty
strings, controls, emoji, combining marks and NFC/NFD spellings survive as given.  Binary data
is copied into immutable ``bytes`` (CB-03), so mutating the caller's buffer later changes
nothing.  ``repr`` never shows text, binary data, ``data:`` URIs or metadata, only their sizes,
because reprs end up in logs.  A refusal raises ``InvalidValueError`` naming the field and the
rule, never the value.

``to_json()`` gives the full, revision-independent wire object with the spec's member names.
Projection to one revision (no icons on 2025-06-18) belongs to ``mcpkit.protocol``.
"""

from __future__ import annotations

import base64
import enum
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from datetime import datetime
from decimal import Decimal
from typing import Any, ClassVar, Final, Literal, TypeAlias

from mcpkit.errors import InvalidValueError
from mcpkit.json import JsonObject, string
from mcpkit.model._media import parse_media_type

__all__ = [
    "Annotations",
    "AudioContent",
    "BlobResourceContents",
    "ContentBlock",
    "EmbeddedResource",
    "Icon",
    "ImageContent",
    "ResourceContents",
    "ResourceLink",
    "Role",
    "TextContent",
    "TextResourceContents",
]

# RFC 3986 §3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), then ":".
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
# Never part of a URI (RFC 3986) or an IRI (RFC 3987): space, C0, DEL and C1 controls.
_NOT_IN_URI: Final = re.compile(r"[\x00-\x20\x7f-\x9f]")
_SIZE: Final = re.compile(r"[0-9]+x[0-9]+")
_THEMES: Final = ("light", "dark")
_PAYLOADS: Final = frozenset({"text", "data", "blob"})


class Role(enum.Enum):
    """Who a message or a piece of content is for (the protocol's ``Role``)."""

    USER = "user"
    ASSISTANT = "assistant"


# --- field checks: each takes the supplied value and returns the value to store ----------------

_Check: TypeAlias = Callable[[Any], object]
_Checks: TypeAlias = tuple[tuple[str, _Check], ...]


def _validate(obj: Any) -> None:
    """Run the class's field checks in order and store what they return (converted or copied).

    A check raises ``InvalidValueError(rule)``; this adds the field, so every message reads
    ``"Class.field: rule"`` and never contains the value.
    """
    for name, check in obj._CHECKS:
        try:
            object.__setattr__(obj, name, check(getattr(obj, name)))
        except InvalidValueError as error:
            raise InvalidValueError(f"{type(obj).__name__}.{name}: {error.rule}") from None


def _optional(check: _Check) -> _Check:
    return lambda value: None if value is None else check(value)


def _uri(value: str) -> str:
    """An absolute URI: a scheme is required, nothing is normalised (CB-08, CB-09)."""
    value = string(value)
    if _SCHEME.match(value) is None:
        raise InvalidValueError("must be an absolute URI that starts with a scheme (RFC 3986)")
    if _NOT_IN_URI.search(value) is not None:
        raise InvalidValueError("a URI cannot contain spaces or control characters")
    return value


def _media_type(value: str) -> str:
    return parse_media_type(value).text


def _bytes(value: object) -> bytes:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise InvalidValueError("must be bytes, bytearray or memoryview")
    return bytes(value)  # a private copy of any mutable buffer (CB-03)


def _meta(value: object) -> JsonObject | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise InvalidValueError("must be a mapping")
    return JsonObject(value)


def _tuple(value: object, item: type, rule: str) -> tuple[Any, ...]:
    if not isinstance(value, (list, tuple)):
        raise InvalidValueError("must be a tuple or a list")
    if not all(isinstance(each, item) for each in value):
        raise InvalidValueError(rule)
    return tuple(value)


def _instance(kinds: tuple[type, ...], rule: str) -> _Check:
    def check(value: object) -> object:
        if not isinstance(value, kinds):
            raise InvalidValueError(rule)
        return value

    return check


def _audience(value: object) -> tuple[Role, ...]:
    return _tuple(value, Role, "every audience entry must be a Role")


def _priority(value: object) -> Decimal | int:
    """A JSON number in [0, 1]; a float becomes the ``Decimal`` of its shortest repr."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        raise InvalidValueError("must be an int, float or Decimal")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidValueError("must be finite")
        value = Decimal(repr(value))
    elif isinstance(value, Decimal) and not value.is_finite():
        raise InvalidValueError("must be finite")
    if not 0 <= value <= 1:
        raise InvalidValueError("must be between 0 and 1 inclusive")
    return value if isinstance(value, Decimal) else int(value)


def _timestamp(value: str) -> str:
    """ISO 8601 as ``datetime.fromisoformat`` reads it, plus a trailing ``Z``; kept as spelt."""
    value = string(value)
    spelling = value[:-1] + "+00:00" if value.endswith("Z") else value
    if spelling.isascii():
        try:
            datetime.fromisoformat(spelling)
        except ValueError:
            pass
        else:
            return value
    raise InvalidValueError("must be an ISO 8601 date-time")


def _sizes(value: object) -> tuple[str, ...] | None:
    """ASCII-decimal ``WxH`` with a lowercase ``x``, or exactly ``any`` (CB-11, CB-12)."""
    if value is None:
        return None
    sizes = tuple(map(str.__str__, _tuple(value, str, "every size must be a str")))
    for size in sizes:
        if size != "any" and _SIZE.fullmatch(size) is None:
            raise InvalidValueError(
                "every size must be ASCII-decimal WxH with a lowercase x, or any"
            )
    return sizes or None


def _theme(value: str) -> str:
    if string(value) not in _THEMES:
        raise InvalidValueError("must be 'light' or 'dark'")
    return str.__str__(value)


def _size(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidValueError("must be a non-negative int")
    return int(value)


_OPTIONAL_TEXT: Final = _optional(string)
_OPTIONAL_MEDIA_TYPE: Final = _optional(_media_type)


# --- repr and wire form ------------------------------------------------------------------------


def _safe_repr(obj: Any) -> str:
    """``Class(field=...)`` without payloads: text, bytes, ``data:`` URIs and metadata show only
    their size, and absent fields are left out."""
    parts = []
    for field in fields(obj):
        value = getattr(obj, field.name)
        if value is None or (isinstance(value, tuple) and not value):
            continue
        if field.name in _PAYLOADS:
            shown = f"<{len(value)} {'bytes' if isinstance(value, bytes) else 'chars'}>"
        elif field.name == "meta":
            shown = f"<{len(value)} members>"
        elif isinstance(value, str) and value[:5].lower() == "data:":
            shown = f"<data URI, {len(value)} chars>"
        else:
            shown = repr(value)
        parts.append(f"{field.name}={shown}")
    return f"{type(obj).__name__}({', '.join(parts)})"


def _wire(**members: object) -> JsonObject:
    """A wire object from ``members``, leaving out absent (``None``) optional members."""
    return JsonObject({name: value for name, value in members.items() if value is not None})


def _json(value: Annotations | Icon | None) -> JsonObject | None:
    return None if value is None else value.to_json()


def _base64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class _Value:
    """Construction checks each field (``_CHECKS``, in order); ``repr`` shows no payload."""

    __slots__ = ()
    _CHECKS: ClassVar[_Checks] = ()

    def __post_init__(self) -> None:
        _validate(self)

    def __repr__(self) -> str:
        return _safe_repr(self)


# --- annotations and icons ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Annotations(_Value):
    """Hints for the client about content (CB-06): who it is for, how important it is (0 to 1)
    and when it last changed.

    ``priority`` is stored as the JSON number it will be written as (a float becomes the
    ``Decimal`` of its shortest repr).  ``last_modified`` must parse as ISO 8601 (a trailing
    ``Z`` is accepted) and is kept in the caller's spelling.  An empty ``audience`` is kept and
    written as ``[]``; ``None`` leaves the member out.
    """

    audience: tuple[Role, ...] | None = None
    priority: Decimal | float | None = None
    last_modified: str | None = None

    _CHECKS: ClassVar[_Checks] = (
        ("audience", _optional(_audience)),
        ("priority", _optional(_priority)),
        ("last_modified", _optional(_timestamp)),
    )

    def to_json(self) -> JsonObject:
        audience = None if self.audience is None else [role.value for role in self.audience]
        return _wire(audience=audience, priority=self.priority, lastModified=self.last_modified)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Icon(_Value):
    """An icon a client may display (CB-07..13).

    ``src`` must be an absolute URI (any scheme: mcpkit fetches nothing and keeps no allowlist,
    CB-14) and is kept unnormalised.  ``sizes`` entries are ASCII-decimal ``WxH`` with a
    lowercase ``x``, or exactly ``any``; order, duplicates and spelling are kept, and an empty
    sequence is stored as ``None``.  Nothing checks the image itself (CB-13).
    """

    src: str
    mime_type: str | None = None
    sizes: tuple[str, ...] | None = None
    theme: Literal["light", "dark"] | None = None

    _CHECKS: ClassVar[_Checks] = (
        ("src", _uri),
        ("mime_type", _OPTIONAL_MEDIA_TYPE),
        ("sizes", _sizes),
        ("theme", _optional(_theme)),
    )

    def with_sizes(self, sizes: tuple[str, ...] | list[str] | None) -> Icon:
        """A copy with ``sizes`` replaced; invalid sizes raise, and ``self`` is, as always,
        unchanged (CB-12)."""
        return replace(self, sizes=tuple(sizes) if isinstance(sizes, list) else sizes)

    def to_json(self) -> JsonObject:
        sizes = None if self.sizes is None else list(self.sizes)
        return _wire(src=self.src, mimeType=self.mime_type, sizes=sizes, theme=self.theme)


_ANNOTATIONS: Final = _optional(_instance((Annotations,), "must be an Annotations"))


def _icons(value: object) -> tuple[Icon, ...]:
    return _tuple(value, Icon, "every icon must be an Icon")


# --- content blocks ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class TextContent(_Value):
    """Text for the model or the user (CB-02), kept exactly as given."""

    text: str
    annotations: Annotations | None = None
    meta: Mapping[str, object] | None = None

    _CHECKS: ClassVar[_Checks] = (("text", string), ("annotations", _ANNOTATIONS), ("meta", _meta))

    def to_json(self) -> JsonObject:
        annotations = _json(self.annotations)
        return _wire(type="text", text=self.text, annotations=annotations, _meta=self.meta)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class _BinaryContent(_Value):
    """Image and audio content share every field and rule; only the wire ``type`` differs."""

    _KIND: ClassVar[str]

    data: bytes
    mime_type: str
    annotations: Annotations | None = None
    meta: Mapping[str, object] | None = None

    _CHECKS: ClassVar[_Checks] = (
        ("data", _bytes),
        ("mime_type", _media_type),
        ("annotations", _ANNOTATIONS),
        ("meta", _meta),
    )

    def to_json(self) -> JsonObject:
        return _wire(
            type=self._KIND,
            data=_base64(self.data),
            mimeType=self.mime_type,
            annotations=_json(self.annotations),
            _meta=self.meta,
        )


class ImageContent(_BinaryContent):
    """An image: a private copy of ``data`` (any bytes-like object) and its media type (CB-03).

    The bytes are not inspected and the media type is checked for syntax only (CB-23).
    """

    __slots__ = ()
    _KIND = "image"


class AudioContent(_BinaryContent):
    """Audio: a private copy of ``data`` (any bytes-like object) and its media type (CB-03)."""

    __slots__ = ()
    _KIND = "audio"


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ResourceLink(_Value):
    """A link to a resource the client may read (CB-04): the URI and name plus the optional
    resource descriptor fields.  ``size`` is the raw size in bytes, when known."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    icons: tuple[Icon, ...] = ()
    annotations: Annotations | None = None
    meta: Mapping[str, object] | None = None

    _CHECKS: ClassVar[_Checks] = (
        ("uri", _uri),
        ("name", string),
        ("title", _OPTIONAL_TEXT),
        ("description", _OPTIONAL_TEXT),
        ("mime_type", _OPTIONAL_MEDIA_TYPE),
        ("size", _optional(_size)),
        ("icons", _icons),
        ("annotations", _ANNOTATIONS),
        ("meta", _meta),
    )

    def icons_dropped(self) -> ResourceLink:
        """This link without icons, as 2025-06-18 must see it; ``self`` if it has none."""
        return replace(self, icons=()) if self.icons else self

    def to_json(self) -> JsonObject:
        return _wire(
            type="resource_link",
            uri=self.uri,
            name=self.name,
            title=self.title,
            description=self.description,
            mimeType=self.mime_type,
            size=self.size,
            icons=[icon.to_json() for icon in self.icons] or None,
            annotations=_json(self.annotations),
            _meta=self.meta,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class TextResourceContents(_Value):
    """The text of a resource, inline (CB-05); the text is kept exactly."""

    uri: str
    text: str
    mime_type: str | None = None
    meta: Mapping[str, object] | None = None

    _CHECKS: ClassVar[_Checks] = (
        ("uri", _uri),
        ("text", string),
        ("mime_type", _OPTIONAL_MEDIA_TYPE),
        ("meta", _meta),
    )

    def to_json(self) -> JsonObject:
        return _wire(uri=self.uri, mimeType=self.mime_type, text=self.text, _meta=self.meta)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class BlobResourceContents(_Value):
    """The bytes of a resource, inline (CB-05): a private copy of ``blob``."""

    uri: str
    blob: bytes
    mime_type: str | None = None
    meta: Mapping[str, object] | None = None

    _CHECKS: ClassVar[_Checks] = (
        ("uri", _uri),
        ("blob", _bytes),
        ("mime_type", _OPTIONAL_MEDIA_TYPE),
        ("meta", _meta),
    )

    def to_json(self) -> JsonObject:
        blob = _base64(self.blob)
        return _wire(uri=self.uri, mimeType=self.mime_type, blob=blob, _meta=self.meta)


ResourceContents: TypeAlias = TextResourceContents | BlobResourceContents
"""What ``resources/read`` returns and an embedded resource holds."""

_RESOURCE: Final = _instance(
    (TextResourceContents, BlobResourceContents),
    "must be a TextResourceContents or a BlobResourceContents",
)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class EmbeddedResource(_Value):
    """A resource's contents placed inline in a result or prompt message (CB-05)."""

    resource: ResourceContents
    annotations: Annotations | None = None
    meta: Mapping[str, object] | None = None

    _CHECKS: ClassVar[_Checks] = (
        ("resource", _RESOURCE),
        ("annotations", _ANNOTATIONS),
        ("meta", _meta),
    )

    def to_json(self) -> JsonObject:
        resource = self.resource.to_json()
        annotations = _json(self.annotations)
        return _wire(type="resource", resource=resource, annotations=annotations, _meta=self.meta)


ContentBlock: TypeAlias = (
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource
)
"""The closed family of content blocks (CB-01)."""
