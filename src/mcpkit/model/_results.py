"""What application handlers return (seed 000, "Operation results"; OR-01..13, TR-14).

``OperationResult`` is sealed to three families, so the server recognises a result with three
``isinstance`` checks and refuses anything else as a contract failure: ``CompleteResult`` (one
payload, ``ToolOutput`` / ``PromptOutput`` / ``ResourceOutput``, plus the result ``_meta``),
``InputRequiredResult`` (a 2026-07-28 multi-round answer) and ``TaskCreatedResult[R]`` (the id
of durable work; ``R`` is a schema contract, not a future).  An application tool error is a
``ToolOutput`` with ``is_error=True``, a successful exchange the model can see (OR-07);
framework failures are raised as ``mcpkit.errors.ProtocolError`` subclasses instead (OR-08).

Everything is immutable and checked at construction; a refusal raises ``InvalidValueError``
naming the field and the rule, never the value.  Fields an application fills with JSON
(``structured_content``, ``meta``, ``input_requests``) accept any JSON-like value, as content
blocks' ``meta`` does, and always hold the immutable ``JsonValue`` / ``JsonObject`` made of
it.  ``to_json()`` is the full, revision-independent body: ``resultType``, cache hints,
``serverInfo`` and the 2025 projection (object-only structured content, no icons on
2025-06-18) belong to ``mcpkit.protocol``.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Final, Generic, TypeAlias, TypeVar, final, get_args

from mcpkit.errors import InvalidValueError
from mcpkit.json import JsonObject, from_python, string

# From the package: the modules that define content blocks may move.
from mcpkit.model import (
    BlobResourceContents,
    ContentBlock,
    Role,
    TextContent,
    TextResourceContents,
)
from mcpkit.model._checks import OPTIONAL_TEXT, Checks, instance_of, sequence_of, validate

__all__ = [
    "UNSET",
    "CompletePayload",
    "CompleteResult",
    "InputRequiredResult",
    "OperationResult",
    "PromptMessage",
    "PromptOutput",
    "ResourceOutput",
    "TaskCreatedResult",
    "ToolOutput",
    "Unset",
]

R = TypeVar("R")

_FAMILIES: Final = frozenset({"CompleteResult", "InputRequiredResult", "TaskCreatedResult"})
_EMPTY: Final = JsonObject()
# MetaObject keys (2026-07-28 schema): an optional prefix of dot-separated labels and a slash,
# then a name that is empty or starts and ends with an alphanumeric character.
_LABEL: Final = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_META_KEY: Final = re.compile(
    rf"(?:(?P<prefix>{_LABEL}(?:\.{_LABEL})*)/)?(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?"
)
_RESERVED_LABELS: Final = frozenset({"modelcontextprotocol", "mcp"})
_BLOCKS: Final[tuple[type, ...]] = get_args(ContentBlock)
# What an input request may ask the client to do (InputRequest in the 2026-07-28 schema); all
# but roots/list require ``params``.
_PARAMS_REQUIRED: Final = frozenset({"elicitation/create", "sampling/createMessage"})
_INPUT_METHODS: Final = _PARAMS_REQUIRED | {"roots/list"}


class Unset(enum.Enum):
    """The type of ``UNSET``: "no structured content", distinct from JSON ``null``."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = Unset.UNSET
"""No structured content.  ``None`` is JSON null, valid structured content on 2026-07-28."""


# --- field checks ------------------------------------------------------------------------------


def _items(value: object, kinds: tuple[type, ...], rule: str) -> tuple[Any, ...]:
    """A list or tuple of instances of one of ``kinds``, stored as a tuple."""
    items = sequence_of(value, object, rule)
    if not all(isinstance(item, kinds) for item in items):
        raise InvalidValueError(rule)
    return items


def _json_object(value: object) -> JsonObject:
    if isinstance(value, JsonObject):
        return value
    if not isinstance(value, Mapping):
        raise InvalidValueError("must be a JSON object")
    return JsonObject(value)


def _meta(value: object) -> JsonObject:
    """Result ``_meta``: MCP key syntax, and no reserved prefix, because the framework writes
    its own members (``io.modelcontextprotocol/serverInfo`` …) into the same object."""
    meta = _json_object(value)
    for key in meta:
        match = _META_KEY.fullmatch(key)
        if match is None:
            raise InvalidValueError("every key must follow the MCP _meta key syntax")
        labels = (match["prefix"] or "").lower().split(".")
        if len(labels) > 1 and labels[1] in _RESERVED_LABELS:
            raise InvalidValueError("keys with a reserved MCP prefix belong to the framework")
    return meta


# --- payloads ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ToolOutput:
    """A tool result body (OR-06): ordered content blocks, optional structured content and the
    application error flag.

    ``structured_content`` is any JSON-like value, stored as the immutable ``JsonValue`` that
    ``from_python`` makes of it; ``UNSET`` (the default) means none, while ``None`` is JSON
    null.  Any JSON value is valid on 2026-07-28 (OR-12); the 2025 revisions accept only an
    object, which ``mcpkit.protocol`` enforces when it projects, without wrapping or dropping
    anything.  The text mirror of structured content (OR-13) is a registration option applied
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


CompletePayload: TypeAlias = ToolOutput | PromptOutput | ResourceOutput
"""The closed family of complete payloads (Soklet's ``McpCompletePayload``)."""
_PAYLOADS: Final = (ToolOutput, PromptOutput, ResourceOutput)
P = TypeVar("P", ToolOutput, PromptOutput, ResourceOutput)


def _payload(output: P, kind: type[P]) -> P:
    if not isinstance(output, kind):
        raise InvalidValueError(f"CompleteResult.payload: must be a {kind.__name__}")
    return output


# --- results -----------------------------------------------------------------------------------


class OperationResult:
    """Sealed base of what an advanced handler returns (OR-01, TR-14): only
    ``CompleteResult``, ``InputRequiredResult`` and ``TaskCreatedResult`` may subclass it, and
    it cannot be instantiated itself."""

    __slots__ = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__module__ != __name__ or cls.__qualname__ not in _FAMILIES:
            raise TypeError(
                "OperationResult is sealed: return a CompleteResult, an InputRequiredResult "
                "or a TaskCreatedResult"
            )

    def __init__(self) -> None:
        raise TypeError("OperationResult is sealed: build one of its three families")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CompleteResult(OperationResult):
    """A completed operation: one payload and the result's extension ``_meta`` (OR-02..05).

    Build it with a factory: ``from_tool_text``, ``from_tool_structured_content`` and
    ``from_tool_error_text`` for the common tool results, or ``with_tool_output`` /
    ``with_prompt_output`` / ``with_resource_output`` for a full payload (empty ``_meta``).
    ``replace(payload=..., meta=...)`` keeps what it is not given (Soklet's ``toBuilder()``).
    ``meta`` keys follow the MCP ``_meta`` key rules and may not use a reserved MCP prefix.
    """

    payload: CompletePayload
    meta: Mapping[str, object] = _EMPTY

    _CHECKS: ClassVar[Checks] = (
        ("payload", instance_of(_PAYLOADS, "must be a ToolOutput, PromptOutput or ResourceOutput")),
        ("meta", _meta),
    )

    def __post_init__(self) -> None:
        validate(self)

    @classmethod
    def from_tool_text(cls, text: str) -> CompleteResult:
        """A tool result with one text block."""
        return cls(payload=ToolOutput(content=(TextContent(text=text),)))

    @classmethod
    def from_tool_structured_content(cls, value: object) -> CompleteResult:
        """A tool result with structured content only (any JSON-like value)."""
        if value is UNSET:
            raise InvalidValueError("ToolOutput.structured_content: must be a JSON value")
        return cls(payload=ToolOutput(structured_content=value))

    @classmethod
    def from_tool_error_text(cls, text: str) -> CompleteResult:
        """An application tool error (``isError: true``) with one text block: the safe way to
        tell the model about a business failure, in text the application chose (OR-07)."""
        return cls(payload=ToolOutput(content=(TextContent(text=text),), is_error=True))

    @classmethod
    def with_tool_output(cls, output: ToolOutput) -> CompleteResult:
        return cls(payload=_payload(output, ToolOutput))

    @classmethod
    def with_prompt_output(cls, output: PromptOutput) -> CompleteResult:
        return cls(payload=_payload(output, PromptOutput))

    @classmethod
    def with_resource_output(cls, output: ResourceOutput) -> CompleteResult:
        return cls(payload=_payload(output, ResourceOutput))

    def replace(
        self,
        *,
        payload: CompletePayload | Unset = UNSET,
        meta: Mapping[str, object] | Unset = UNSET,
    ) -> CompleteResult:
        """A copy with ``payload`` and/or ``meta`` replaced (each is checked again); ``self`` is
        unchanged (OR-05)."""
        return replace(
            self,
            payload=self.payload if payload is UNSET else payload,
            meta=self.meta if meta is UNSET else meta,
        )

    @property
    def is_tool(self) -> bool:
        return isinstance(self.payload, ToolOutput)

    @property
    def is_prompt(self) -> bool:
        return isinstance(self.payload, PromptOutput)

    @property
    def is_resource(self) -> bool:
        return isinstance(self.payload, ResourceOutput)

    def to_json(self) -> JsonObject:
        """The payload's body plus ``_meta`` when it has members."""
        body = self.payload.to_json()
        if not self.meta:
            return body
        return JsonObject({**body, "_meta": self.meta})


def _input_requests(value: object) -> JsonObject:
    """Each request is ``{method, params}`` for one of the three kinds a server may ask a
    2026-07-28 client for, with no JSON-RPC ``jsonrpc`` or ``id``."""
    requests = _json_object(value)
    for request in requests.values():
        if not isinstance(request, JsonObject):
            raise InvalidValueError("every request must be a JSON object")
        method = request.get("method")
        if method not in _INPUT_METHODS:
            raise InvalidValueError(
                "every request's method must be elicitation/create, sampling/createMessage "
                "or roots/list"
            )
        if not request.keys() <= {"method", "params"}:
            raise InvalidValueError("a request has only the members method and params")
        if "params" in request:
            if not isinstance(request["params"], JsonObject):
                raise InvalidValueError("a request's params must be a JSON object")
        elif method in _PARAMS_REQUIRED:
            raise InvalidValueError("params are required for elicitation and sampling requests")
    return requests


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class InputRequiredResult(OperationResult):
    """A 2026-07-28 multi-round answer: requests the client must fulfil, keyed by names the
    server chooses, and/or opaque state the client echoes on its retry.  At least one of the
    two is required.  (Declarations, capability checks and state protection are the server's.)
    """

    input_requests: Mapping[str, object] = _EMPTY
    request_state: str | None = None
    meta: Mapping[str, object] = _EMPTY

    _CHECKS: ClassVar[Checks] = (
        ("input_requests", _input_requests),
        ("request_state", OPTIONAL_TEXT),
        ("meta", _meta),
    )

    def __post_init__(self) -> None:
        validate(self)
        if not self.input_requests and self.request_state is None:
            raise InvalidValueError(
                "InputRequiredResult: input_requests or request_state is required"
            )

    def to_json(self) -> JsonObject:
        """``inputRequests`` and ``requestState`` when present, ``_meta`` when non-empty."""
        members: dict[str, object] = {}
        if self.input_requests:
            members["inputRequests"] = self.input_requests
        if self.request_state is not None:
            members["requestState"] = self.request_state
        if self.meta:
            members["_meta"] = self.meta
        return JsonObject(members)


def _task_id(value: str) -> str:
    text = string(value)
    if not text:
        raise InvalidValueError("must not be empty")
    return text


# Not slotted: on Python 3.11 a frozen, slotted generic dataclass cannot be instantiated as
# ``Class[T](...)`` (typing sets ``__orig_class__`` through the pre-slots ``__setattr__``).
@final
@dataclass(frozen=True, kw_only=True)
class TaskCreatedResult(OperationResult, Generic[R]):
    """Durable work the configured task manager can already retrieve, by id (OR-09, OR-10).

    ``R`` is the eventual output's type as a schema contract only: nothing here waits for it.
    The completed output is validated and sanitised when a client retrieves it (OR-11).
    """

    task_id: str
    meta: Mapping[str, object] = _EMPTY

    _CHECKS: ClassVar[Checks] = (("task_id", _task_id), ("meta", _meta))

    def __post_init__(self) -> None:
        validate(self)
