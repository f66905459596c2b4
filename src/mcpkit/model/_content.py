"""Content blocks: what tool results and prompt messages carry.

Each class is a frozen, slotted, keyword-only dataclass whose ``__post_init__`` runs one check
per field, so a block that exists is one the protocol layer can write.  Two checks are
deliberately *not* made at construction: JSON size limits and the 786,432-byte
binary ceiling apply when a response is written, because only then is the whole response known.

Text is kept exactly: text fields only refuse unpaired surrogates, so empty
strings, controls, emoji, combining marks and NFC/NFD spellings survive as given.  Binary data
is copied into immutable ``bytes``, so mutating the caller's buffer later changes
nothing.  ``repr`` never shows text, binary data, ``data:`` URIs or metadata, only their sizes,
because reprs end up in logs.  A refusal raises ``InvalidValueError`` naming the field and the
rule, never the value; the checks themselves are ``_checks``'s, but for ``icon_tuple``, which
needs ``Icon`` and serves every module with an ``icons`` field or option.

``to_json()`` gives the full, revision-independent wire object with the spec's member names.
Projection to one revision (no icons on 2025-06-18) belongs to ``mcpkit.protocol``.
"""

from __future__ import annotations

import base64
import enum
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from decimal import Decimal
from typing import Any, ClassVar, Final, Literal, TypeAlias

from mcpkit.json import JsonObject, string, wrap_object
from mcpkit.model._checks import (
    OPTIONAL_MEDIA_TYPE,
    OPTIONAL_TEXT,
    Checks,
    absolute_uri,
    byte_size,
    icon_sizes,
    icon_theme,
    instance_of,
    media_type,
    meta_object,
    optional,
    private_bytes,
    sequence_of,
    timestamp,
    unit_interval,
    validate,
)

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
    "icon_tuple",
]

_PAYLOADS: Final = frozenset({"text", "data", "blob"})


class Role(enum.Enum):
    """Who a message or a piece of content is for (the protocol's ``Role``)."""

    USER = "user"
    ASSISTANT = "assistant"


def _audience(value: object) -> tuple[Role, ...]:
    return sequence_of(value, Role, "every audience entry must be a Role")


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
    """A wire object from ``members``, leaving out absent (``None``) optional members.  The
    members are this module's checked values (text, base64, ``JsonObject`` parts), so they are
    wrapped as they are rather than converted again."""
    return wrap_object(
        {name: value for name, value in members.items() if value is not None}  # type: ignore[misc]
    )


def _json(value: Annotations | Icon | None) -> JsonObject | None:
    return None if value is None else value.to_json()


def _base64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class _Value:
    """Construction checks each field (``_CHECKS``, in order); ``repr`` shows no payload."""

    __slots__ = ()
    _CHECKS: ClassVar[Checks] = ()

    def __post_init__(self) -> None:
        validate(self)

    def __repr__(self) -> str:
        return _safe_repr(self)


# --- annotations and icons ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Annotations(_Value):
    """Hints for the client about content: who it is for, how important it is (0 to 1)
    and when it last changed.

    ``priority`` is stored as the JSON number it will be written as (a float becomes the
    ``Decimal`` of its shortest repr).  ``last_modified`` must parse as ISO 8601 (a trailing
    ``Z`` is accepted) and is kept in the caller's spelling.  An empty ``audience`` is kept and
    written as ``[]``; ``None`` leaves the member out.
    """

    audience: tuple[Role, ...] | None = None
    priority: Decimal | float | None = None
    last_modified: str | None = None

    _CHECKS: ClassVar[Checks] = (
        ("audience", optional(_audience)),
        ("priority", optional(unit_interval)),
        ("last_modified", optional(timestamp)),
    )

    def to_json(self) -> JsonObject:
        audience = None if self.audience is None else [role.value for role in self.audience]
        return _wire(audience=audience, priority=self.priority, lastModified=self.last_modified)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Icon(_Value):
    """An icon a client may display.

    ``src`` must be an absolute URI (any scheme: mcpkit fetches nothing and keeps no allowlist) and
    is kept unnormalised.  ``sizes`` entries are ASCII-decimal ``WxH`` with a lowercase ``x``, or
    exactly ``any``; order, duplicates and spelling are kept, and an empty sequence is stored as
    ``None``.  Nothing checks the image itself.
    """

    src: str
    mime_type: str | None = None
    sizes: tuple[str, ...] | None = None
    theme: Literal["light", "dark"] | None = None

    _CHECKS: ClassVar[Checks] = (
        ("src", absolute_uri),
        ("mime_type", OPTIONAL_MEDIA_TYPE),
        ("sizes", icon_sizes),
        ("theme", optional(icon_theme)),
    )

    def with_sizes(self, sizes: tuple[str, ...] | list[str] | None) -> Icon:
        """A copy with ``sizes`` replaced; invalid sizes raise, and ``self`` is, as always,
        unchanged."""
        return replace(self, sizes=tuple(sizes) if isinstance(sizes, list) else sizes)

    def to_json(self) -> JsonObject:
        sizes = None if self.sizes is None else list(self.sizes)
        return _wire(src=self.src, mimeType=self.mime_type, sizes=sizes, theme=self.theme)


_ANNOTATIONS: Final = optional(instance_of((Annotations,), "must be an Annotations"))


def icon_tuple(value: object) -> tuple[Icon, ...]:
    """The check of every ``icons`` field and option: a list or tuple of ``Icon``, stored as a
    tuple.  It lives beside ``Icon`` because ``_checks`` cannot import this module."""
    return sequence_of(value, Icon, "every icon must be an Icon")


# --- content blocks ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class TextContent(_Value):
    """Text for the model or the user, kept exactly as given."""

    text: str
    annotations: Annotations | None = None
    meta: Mapping[str, object] | None = None

    _CHECKS: ClassVar[Checks] = (
        ("text", string),
        ("annotations", _ANNOTATIONS),
        ("meta", meta_object),
    )

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

    _CHECKS: ClassVar[Checks] = (
        ("data", private_bytes),
        ("mime_type", media_type),
        ("annotations", _ANNOTATIONS),
        ("meta", meta_object),
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
    """An image: a private copy of ``data`` (any bytes-like object) and its media type.

    The bytes are not inspected and the media type is checked for syntax only.
    """

    __slots__ = ()
    _KIND = "image"


class AudioContent(_BinaryContent):
    """Audio: a private copy of ``data`` (any bytes-like object) and its media type."""

    __slots__ = ()
    _KIND = "audio"


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ResourceLink(_Value):
    """A link to a resource the client may read: the URI and name plus the optional
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

    _CHECKS: ClassVar[Checks] = (
        ("uri", absolute_uri),
        ("name", string),
        ("title", OPTIONAL_TEXT),
        ("description", OPTIONAL_TEXT),
        ("mime_type", OPTIONAL_MEDIA_TYPE),
        ("size", optional(byte_size)),
        ("icons", icon_tuple),
        ("annotations", _ANNOTATIONS),
        ("meta", meta_object),
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
    """The text of a resource, inline; the text is kept exactly."""

    uri: str
    text: str
    mime_type: str | None = None
    meta: Mapping[str, object] | None = None

    _CHECKS: ClassVar[Checks] = (
        ("uri", absolute_uri),
        ("text", string),
        ("mime_type", OPTIONAL_MEDIA_TYPE),
        ("meta", meta_object),
    )

    def to_json(self) -> JsonObject:
        return _wire(uri=self.uri, mimeType=self.mime_type, text=self.text, _meta=self.meta)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class BlobResourceContents(_Value):
    """The bytes of a resource, inline: a private copy of ``blob``."""

    uri: str
    blob: bytes
    mime_type: str | None = None
    meta: Mapping[str, object] | None = None

    _CHECKS: ClassVar[Checks] = (
        ("uri", absolute_uri),
        ("blob", private_bytes),
        ("mime_type", OPTIONAL_MEDIA_TYPE),
        ("meta", meta_object),
    )

    def to_json(self) -> JsonObject:
        blob = _base64(self.blob)
        return _wire(uri=self.uri, mimeType=self.mime_type, blob=blob, _meta=self.meta)


ResourceContents: TypeAlias = TextResourceContents | BlobResourceContents
"""What ``resources/read`` returns and an embedded resource holds."""

_RESOURCE: Final = instance_of(
    (TextResourceContents, BlobResourceContents),
    "must be a TextResourceContents or a BlobResourceContents",
)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class EmbeddedResource(_Value):
    """A resource's contents placed inline in a result or prompt message."""

    resource: ResourceContents
    annotations: Annotations | None = None
    meta: Mapping[str, object] | None = None

    _CHECKS: ClassVar[Checks] = (
        ("resource", _RESOURCE),
        ("annotations", _ANNOTATIONS),
        ("meta", meta_object),
    )

    def to_json(self) -> JsonObject:
        resource = self.resource.to_json()
        annotations = _json(self.annotations)
        return _wire(type="resource", resource=resource, annotations=annotations, _meta=self.meta)


ContentBlock: TypeAlias = (
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource
)
"""The closed family of content blocks."""
