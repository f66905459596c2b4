"""The payloads of a completed operation.

``ToolOutput``, ``PromptOutput`` (with its ``PromptMessage`` items) and ``ResourceOutput`` are
the bodies a ``CompleteResult`` carries, one per kind of operation.  They live apart from the
sealed result families in ``_results`` because they are plain values an application builds
and the protocol layer writes: nothing about them depends on how a result is recognised.

Everything is immutable and checked at construction; a refusal raises ``InvalidValueError``
naming the field and the rule, never the value.  ``to_json()`` is the full,
revision-independent body; the 2025 projection (object-only structured content, no icons on
2025-06-18) belongs to ``mcpkit.protocol``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Literal, get_args

from mcpkit.errors import InvalidValueError
from mcpkit.json import JsonObject, from_python
from mcpkit.model._checks import OPTIONAL_TEXT, Checks, instance_of, sequence_of, validate

# From the defining module, not the package: ``_context`` imports ``UNSET`` from here while the
# package is still being initialised.
from mcpkit.model._content import BlobResourceContents, ContentBlock, Role, TextResourceContents

__all__ = ["UNSET", "PromptMessage", "PromptOutput", "ResourceOutput", "ToolOutput", "Unset"]

_BLOCKS: Final[tuple[type, ...]] = get_args(ContentBlock)


class Unset(enum.Enum):
    """The type of ``UNSET``: "no structured content", distinct from JSON ``null``."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final[Literal[Unset.UNSET]] = Unset.UNSET
"""No structured content.  ``None`` is JSON null, valid structured content on 2026-07-28."""


def _items(value: object, kinds: tuple[type, ...], rule: str) -> tuple[Any, ...]:
    """A list or tuple of instances of one of ``kinds``, stored as a tuple."""
    items = sequence_of(value, object, rule)
    if not all(isinstance(item, kinds) for item in items):
        raise InvalidValueError(rule)
    return items


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ToolOutput:
    """A tool result body: ordered content blocks, optional structured content and the
    application error flag.

    ``structured_content`` is any JSON-like value, stored as the immutable ``JsonValue`` that
    ``from_python`` makes of it; ``UNSET`` (the default) means none, while ``None`` is JSON
    null.  Any JSON value is valid on 2026-07-28; the 2025 revisions accept only an
    object, which ``mcpkit.protocol`` enforces when it projects, without wrapping or dropping
    anything.  The text mirror of structured content is a registration option applied
    when the result is written, so it is not added here.
    """

    content: tuple[ContentBlock, ...] = ()
    structured_content: object = UNSET
    is_error: bool = False

    _CHECKS: ClassVar[Checks] = (
        ("content", lambda value: _items(value, _BLOCKS, "every item must be a content block")),
        ("structured_content", lambda value: value if value is UNSET else from_python(value)),
        ("is_error", instance_of((bool,), "must be a bool")),
    )

    def __post_init__(self) -> None:
        validate(self)

    def to_json(self) -> JsonObject:
        """``content`` always (possibly ``[]``), ``structuredContent`` when set (``null``
        included), ``isError`` only when true."""
        members: dict[str, object] = {"content": [block.to_json() for block in self.content]}
        if self.structured_content is not UNSET:
            members["structuredContent"] = self.structured_content
        if self.is_error:
            members["isError"] = True
        return JsonObject(members)

    def __repr__(self) -> str:
        structured = "UNSET" if self.structured_content is UNSET else "<JSON value>"
        return (
            f"ToolOutput(content=<{len(self.content)} blocks>, structured_content={structured}, "
            f"is_error={self.is_error})"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptMessage:
    """One prompt message: a role and a single content block (the protocol allows one)."""

    role: Role
    content: ContentBlock

    _CHECKS: ClassVar[Checks] = (
        ("role", instance_of((Role,), "must be a Role")),
        ("content", instance_of(_BLOCKS, "must be a content block")),
    )

    def __post_init__(self) -> None:
        validate(self)

    def to_json(self) -> JsonObject:
        return JsonObject({"role": self.role.value, "content": self.content.to_json()})


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptOutput:
    """A ``prompts/get`` body: ordered messages and an optional description (well-formed text,
    kept exactly)."""

    messages: tuple[PromptMessage, ...]
    description: str | None = None

    _CHECKS: ClassVar[Checks] = (
        (
            "messages",
            lambda value: sequence_of(value, PromptMessage, "every item must be a PromptMessage"),
        ),
        ("description", OPTIONAL_TEXT),
    )

    def __post_init__(self) -> None:
        validate(self)

    def to_json(self) -> JsonObject:
        members: dict[str, object] = {}
        if self.description is not None:
            members["description"] = self.description
        members["messages"] = [message.to_json() for message in self.messages]
        return JsonObject(members)


def _contents(value: object) -> tuple[TextResourceContents | BlobResourceContents, ...]:
    contents = _items(
        value,
        (TextResourceContents, BlobResourceContents),
        "every item must be a TextResourceContents or a BlobResourceContents",
    )
    if not contents:
        raise InvalidValueError("must not be empty; raise ResourceNotFound for a missing resource")
    return contents


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceOutput:
    """A ``resources/read`` body: one or more text or blob contents, in order.

    Empty contents are refused: the protocol forbids answering a missing resource with an
    empty array, so a handler raises ``mcpkit.errors.ResourceNotFound`` instead.
    """

    contents: tuple[TextResourceContents | BlobResourceContents, ...]

    _CHECKS: ClassVar[Checks] = (("contents", _contents),)

    def __post_init__(self) -> None:
        validate(self)

    def to_json(self) -> JsonObject:
        return JsonObject({"contents": [item.to_json() for item in self.contents]})
