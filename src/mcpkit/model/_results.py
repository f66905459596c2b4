"""What application handlers return.

``OperationResult`` is sealed to three families, so the server recognises a result with three
``isinstance`` checks and refuses anything else as a contract failure: ``CompleteResult`` (one
payload, ``ToolOutput`` / ``PromptOutput`` / ``ResourceOutput``, plus the result ``_meta``),
``InputRequiredResult`` (a 2026-07-28 multi-round answer) and ``TaskCreatedResult[R]`` (the id
of durable work; ``R`` is a schema contract, not a future).  The payloads themselves are plain
values and live in ``_outputs``.  An application tool error is a
``ToolOutput`` with ``is_error=True``, a successful exchange the model can see;
framework failures are raised as ``mcpkit.errors.ProtocolError`` subclasses instead.

Everything is immutable and checked at construction; a refusal raises ``InvalidValueError``
naming the field and the rule, never the value.  Fields an application fills with JSON
(``structured_content``, ``meta``, ``input_requests``, ``framework_state``) accept any
JSON-like value, as content blocks' ``meta`` does, and always hold the immutable ``JsonValue``
/ ``JsonObject`` made of it.  ``to_json()`` is the full, revision-independent body:
``resultType``, cache hints, ``serverInfo`` and the 2025 projection (object-only structured
content, no icons on 2025-06-18) belong to ``mcpkit.protocol``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Final, Generic, TypeAlias, TypeVar, final

from mcpkit.errors import InvalidValueError
from mcpkit.json import JsonObject, JsonValue, from_python, string

# From the package: the module that defines content blocks may move.
from mcpkit.model import TextContent
from mcpkit.model._checks import Checks, instance_of, json_object, unchecked_factory, validate
from mcpkit.model._input import InputRequestKind
from mcpkit.model._outputs import UNSET, PromptOutput, ResourceOutput, ToolOutput, Unset

__all__ = [
    "MAX_REQUEST_STATE_BYTES",
    "CompletePayload",
    "CompleteResult",
    "InputRequiredResult",
    "OperationResult",
    "TaskCreatedResult",
    "structured_result",
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
# What an input request may ask the client to do (InputRequest in the 2026-07-28 schema); all
# but roots/list require ``params``.
_PARAMS_REQUIRED: Final = frozenset({"elicitation/create", "sampling/createMessage"})
_INPUT_METHODS: Final = _PARAMS_REQUIRED | {"roots/list"}
MAX_REQUEST_STATE_BYTES: Final = 65_536
"""The longest application-protected request state, in UTF-8 bytes (Soklet's bound)."""


# --- field checks ------------------------------------------------------------------------------


def _meta(value: object) -> JsonObject:
    """Result ``_meta``: MCP key syntax, and no reserved prefix, because the framework writes
    its own members (``io.modelcontextprotocol/serverInfo`` …) into the same object."""
    meta = json_object(value)
    for key in meta:
        match = _META_KEY.fullmatch(key)
        if match is None:
            raise InvalidValueError("every key must follow the MCP _meta key syntax")
        labels = (match["prefix"] or "").lower().split(".")
        if len(labels) > 1 and labels[1] in _RESERVED_LABELS:
            raise InvalidValueError("keys with a reserved MCP prefix belong to the framework")
    return meta


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
    """Sealed base of what an advanced handler returns: only
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
    """A completed operation: one payload and the result's extension ``_meta``.

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
        tell the model about a business failure, in text the application chose."""
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
        unchanged."""
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
    requests = json_object(value)
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


def _request_state(value: str | None) -> str | None:
    """Application-protected state: one exact non-empty string of at most 65,536 UTF-8 bytes
    (Soklet echoes it and parses nothing)."""
    if value is None:
        return None
    text = string(value)
    if not text:
        raise InvalidValueError("must not be empty")
    # Code points never outnumber UTF-8 bytes, so a long text is refused before encoding it.
    if len(text) > MAX_REQUEST_STATE_BYTES or len(text.encode()) > MAX_REQUEST_STATE_BYTES:
        raise InvalidValueError(f"must be at most {MAX_REQUEST_STATE_BYTES} UTF-8 bytes")
    return text


def _framework_state(value: object) -> object:
    return value if value is UNSET else from_python(value)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class InputRequiredResult(OperationResult):
    """A 2026-07-28 multi-round answer: requests the client must fulfil, keyed by names the
    handler chooses, and/or state the client echoes on its retry.

    * ``input_requests``: ``{key: {"method", "params"}}`` for ``elicitation/create``,
      ``sampling/createMessage`` or ``roots/list``; ``request_kinds`` classifies them (each
      must be declared by the operation, and the client must declare its capability: the
      server's checks).
    * ``request_state``: the application-protected opaque string (``APPLICATION_PROTECTED``
      mode), non-empty, at most 65,536 UTF-8 bytes, written as ``requestState`` as it is.
    * ``framework_state``: any JSON-like value (stored as a ``JsonValue``; ``None`` is JSON
      null) for the framework to seal (``FRAMEWORK_PROTECTED`` mode); ``UNSET`` for none.  The
      server writes the sealed string as ``requestState``; ``to_json`` never writes it.

    At least one of requests and state is required, and at most one kind of state.  Neither
    state is shown by ``repr``.
    """

    input_requests: Mapping[str, object] = _EMPTY
    request_state: str | None = field(default=None, repr=False)
    framework_state: object = field(default=UNSET, repr=False)
    meta: Mapping[str, object] = _EMPTY
    request_kinds: frozenset[InputRequestKind] = field(init=False, repr=False, compare=False)

    _CHECKS: ClassVar[Checks] = (
        ("input_requests", _input_requests),
        ("request_state", _request_state),
        ("framework_state", _framework_state),
        ("meta", _meta),
    )

    def __post_init__(self) -> None:
        validate(self)
        has_state = self.framework_state is not UNSET
        if self.request_state is not None:
            if has_state:
                raise InvalidValueError(
                    "InputRequiredResult: request_state and framework_state exclude each other"
                )
            has_state = True
        if not self.input_requests and not has_state:
            raise InvalidValueError(
                "InputRequiredResult: input_requests, request_state or framework_state is required"
            )
        kinds = frozenset(map(InputRequestKind.of, self.input_requests.values()))
        object.__setattr__(self, "request_kinds", kinds)

    def to_json(self) -> JsonObject:
        """``inputRequests`` when present, the application's ``requestState`` when set,
        ``_meta`` when non-empty (the sealed framework state is the server's to write)."""
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
    """Durable work the configured task manager can already retrieve, by id.

    ``R`` is the eventual output's type as a schema contract only: nothing here waits for it.
    The completed output is validated and sanitised when a client retrieves it.
    """

    task_id: str
    meta: Mapping[str, object] = _EMPTY

    _CHECKS: ClassVar[Checks] = (("task_id", _task_id), ("meta", _meta))

    def __post_init__(self) -> None:
        validate(self)


def structured_result(value: JsonValue) -> CompleteResult:
    """The complete tool result of a typed tool: ``value`` is the structured content its
    output model has just converted and validated, so nothing is checked again."""
    return _unchecked_result(_unchecked_output((), value, False), _EMPTY)


_unchecked_output: Final = unchecked_factory(ToolOutput)  # content, structured_content, is_error
_unchecked_result: Final = unchecked_factory(CompleteResult)  # payload, meta
