"""What a client sends back on a multi-round retry: ``params.inputResponses``.

Two layers, as in Soklet:

* wire validation (:func:`check_input_responses`): every value of the object is an
  ``ElicitResult``, a ``CreateMessageResult`` or a ``ListRootsResult`` of the 2026-07-28 schema,
  else the request is ``InvalidParams``.  It is structural only: nothing is compared with what
  the server asked for, so it needs no state.
* typed views (:class:`ElicitationResponse`, :class:`SamplingResponse`, :class:`RootsResponse`),
  which ``RequestContext`` hands a handler by key.  Correlating keys and deciding what an
  ``accept``, ``decline`` or ``cancel`` means is the application's job: a missing or unexpected
  answer is a reason to ask again, never an error.

The checks are a small table of shapes over the immutable JSON values, each visiting a value at
most a fixed number of times, so the work is linear in the size of the input; the JSON codec has
already bounded numbers, strings, depth and node counts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from types import MappingProxyType
from typing import ClassVar, Final, TypeAlias, cast

from mcpkit.errors import InvalidParams, InvalidValueError
from mcpkit.json import JsonArray, JsonObject, string
from mcpkit.model._checks import OPTIONAL_TEXT, Checks, sequence_of, validate
from mcpkit.model._content import Role

__all__ = [
    "ElicitationResponse",
    "ElicitationValue",
    "Root",
    "RootsResponse",
    "SamplingResponse",
    "check_input_responses",
    "response_answers",
]

ElicitationValue: TypeAlias = str | int | Decimal | bool | tuple[str, ...]
"""One submitted form field: a string, a number (``int``, or an exact ``Decimal``), a boolean,
or an array of strings (``JsonArray``, a tuple)."""

_Shape: TypeAlias = Callable[[object], bool]


# --- shapes: predicates over immutable JSON values ---------------------------------------------


def _string(value: object) -> bool:
    return isinstance(value, str)


def _boolean(value: object) -> bool:
    return isinstance(value, bool)


def _number(value: object) -> bool:
    return isinstance(value, int | Decimal) and not isinstance(value, bool)


def _integer(value: object) -> bool:
    """A JSON integer: a number with no fractional part (``2.0`` is one)."""
    if isinstance(value, Decimal):
        return value == value.to_integral_value()
    return _number(value)


def _any_object(value: object) -> bool:
    return isinstance(value, JsonObject)


def _array(item: _Shape) -> _Shape:
    return lambda value: isinstance(value, JsonArray) and all(map(item, value))


def _one_of(*words: str) -> _Shape:
    allowed = frozenset(words)
    return lambda value: isinstance(value, str) and value in allowed


def _any_of(*shapes: _Shape) -> _Shape:
    return lambda value: any(shape(value) for shape in shapes)


_NO_MEMBERS: Final[Mapping[str, _Shape]] = MappingProxyType({})


def _object(required: Mapping[str, _Shape], optional: Mapping[str, _Shape] = _NO_MEMBERS) -> _Shape:
    """An object with the ``required`` members, and the ``optional`` ones when present, of
    their shapes.  Other members are allowed: the schema's result objects are open."""

    def check(value: object) -> bool:
        if not isinstance(value, JsonObject):
            return False
        for name, shape in required.items():
            if name not in value or not shape(value[name]):
                return False
        return all(shape(value[name]) for name, shape in optional.items() if name in value)

    return check


def _tagged(by_type: Mapping[str, _Shape]) -> _Shape:
    """A content block: the shape its ``type`` names (so one shape is tried, not all)."""

    def check(value: object) -> bool:
        if not isinstance(value, JsonObject):
            return False
        kind = value.get("type")
        shape = by_type.get(kind) if isinstance(kind, str) else None
        return shape is not None and shape(value)

    return check


def _unit(value: object) -> bool:
    return isinstance(value, int | Decimal) and not isinstance(value, bool) and 0 <= value <= 1


_ROLE: Final = _one_of("user", "assistant")
_ANNOTATIONS: Final = _object(
    {}, {"audience": _array(_ROLE), "priority": _unit, "lastModified": _string}
)
_DECORATED: Final = {"_meta": _any_object, "annotations": _ANNOTATIONS}
_ICON: Final = _object(
    {"src": _string},
    {"mimeType": _string, "sizes": _array(_string), "theme": _one_of("dark", "light")},
)
_TEXT: Final = _object({"text": _string}, _DECORATED)
_MEDIA: Final = _object({"data": _string, "mimeType": _string}, _DECORATED)
_CONTENTS: Final = _any_of(
    _object({"uri": _string, "text": _string}, {"_meta": _any_object, "mimeType": _string}),
    _object({"uri": _string, "blob": _string}, {"_meta": _any_object, "mimeType": _string}),
)
_RESOURCE_LINK: Final = _object(
    {"uri": _string, "name": _string},
    {
        **_DECORATED,
        "description": _string,
        "icons": _array(_ICON),
        "mimeType": _string,
        "size": _integer,
        "title": _string,
    },
)
_CONTENT_BLOCK: Final = _tagged(
    {
        "text": _TEXT,
        "image": _MEDIA,
        "audio": _MEDIA,
        "resource_link": _RESOURCE_LINK,
        "resource": _object({"resource": _CONTENTS}, _DECORATED),
    }
)
_TOOL_USE: Final = _object(
    {"id": _string, "name": _string, "input": _any_object}, {"_meta": _any_object}
)
_TOOL_RESULT: Final = _object(
    {"toolUseId": _string, "content": _array(_CONTENT_BLOCK)},
    {"_meta": _any_object, "isError": _boolean},
)
_SAMPLING_BLOCK: Final = _tagged(
    {
        "text": _TEXT,
        "image": _MEDIA,
        "audio": _MEDIA,
        "tool_use": _TOOL_USE,
        "tool_result": _TOOL_RESULT,
    }
)
_SAMPLING_CONTENT: Final = _any_of(_SAMPLING_BLOCK, _array(_SAMPLING_BLOCK))
_ELICITATION_VALUE: Final = _any_of(_string, _number, _boolean, _array(_string))
_ACTIONS: Final = ("accept", "decline", "cancel")


def _elicitation_content(value: object) -> bool:
    return isinstance(value, JsonObject) and all(map(_ELICITATION_VALUE, value.values()))


_ELICIT_RESULT: Final = _object({"action": _one_of(*_ACTIONS)}, {"content": _elicitation_content})
_CREATE_MESSAGE_RESULT: Final = _object(
    {"role": _ROLE, "content": _SAMPLING_CONTENT, "model": _string},
    {"stopReason": _string, "_meta": _any_object},
)
_ROOT: Final = _object({"uri": _string}, {"name": _string, "_meta": _any_object})
_LIST_ROOTS_RESULT: Final = _object({"roots": _array(_ROOT)})
_INPUT_RESPONSE: Final = _any_of(_ELICIT_RESULT, _CREATE_MESSAGE_RESULT, _LIST_ROOTS_RESULT)


_RESPONSE_TO: Final[Mapping[str, _Shape]] = MappingProxyType(
    {
        "elicitation/create": _ELICIT_RESULT,
        "sampling/createMessage": _CREATE_MESSAGE_RESULT,
        "roots/list": _LIST_ROOTS_RESULT,
    }
)


def response_answers(method: object, value: object) -> bool:
    """Whether ``value`` is a well-formed response to an input request of ``method``
    (``elicitation/create``, ``sampling/createMessage`` or ``roots/list``): a task's
    ``tasks/update`` keeps only those, and ignores the rest."""
    shape = _RESPONSE_TO.get(method) if isinstance(method, str) else None
    return shape is not None and shape(value)


def check_input_responses(value: object) -> JsonObject:
    """The wire check of a retry's ``params.inputResponses``: an object whose every value is an
    ``ElicitResult`` (``action``, and ``content`` of strings, numbers, booleans and arrays of
    strings), a ``CreateMessageResult`` (``role``, ``content`` blocks, ``model``,
    ``stopReason``?) or a ``ListRootsResult`` (``roots`` of ``{uri, name?}``), as the 2026-07-28
    schema defines them (members the schema does not name are allowed, as there).

    Returns the object (``value`` itself when it is a ``JsonObject``, as the codec makes it);
    anything else raises the fixed ``InvalidParams``.  Elicitation numbers may have a fraction
    (Soklet accepts any exact decimal; a form's ``number`` field produces one), and no
    ``format`` (``uri``, ``byte``) is asserted, as JSON Schema does not by default.
    """
    if not isinstance(value, JsonObject):
        if not isinstance(value, Mapping):
            raise InvalidParams
        try:
            value = JsonObject(value)
        except InvalidValueError:
            raise InvalidParams from None
    if not all(map(_INPUT_RESPONSE, value.values())):
        raise InvalidParams
    return value


# --- typed views -------------------------------------------------------------------------------


def _elicitation_content_field(value: object) -> JsonObject | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise InvalidValueError("must be a mapping or None")
    content = value if isinstance(value, JsonObject) else JsonObject(value)
    if not _elicitation_content(content):
        raise InvalidValueError("every value must be a str, a number, a bool or a list of str")
    return content


def _action(value: object) -> str:
    if not (isinstance(value, str) and value in _ACTIONS):
        raise InvalidValueError("must be 'accept', 'decline' or 'cancel'")
    return str.__str__(value)


@dataclass(frozen=True, slots=True)
class ElicitationResponse:
    """The client's answer to an ``elicitation/create`` request (an ``ElicitResult``).

    ``action`` is ``"accept"``, ``"decline"`` or ``"cancel"``; ``content`` the submitted fields
    (``None`` when absent, as for URL mode).  The values are checked only for their JSON kinds,
    never against the requested schema: validating them is the handler's job.
    """

    action: str
    content: Mapping[str, ElicitationValue] | None = None

    _CHECKS: ClassVar[Checks] = (("action", _action), ("content", _elicitation_content_field))

    def __post_init__(self) -> None:
        validate(self)

    @property
    def accepted(self) -> bool:
        return self.action == "accept"

    @classmethod
    def from_json(cls, value: object) -> ElicitationResponse | None:
        """The view of one input response, or ``None`` when it is not an ``ElicitResult``."""
        if not _ELICIT_RESULT(value):
            return None
        response = cast(JsonObject, value)
        return cls(
            cast(str, response["action"]),
            cast("Mapping[str, ElicitationValue] | None", response.get("content")),
        )


def _role(value: object) -> Role:
    if isinstance(value, Role):
        return value
    if not _ROLE(value):
        raise InvalidValueError("must be a Role")
    return Role(value)


def _sampling_content(value: object) -> JsonObject | JsonArray:
    if isinstance(value, JsonObject | JsonArray):
        content: JsonObject | JsonArray = value
    elif isinstance(value, Mapping):
        content = JsonObject(value)
    elif isinstance(value, list | tuple):
        content = JsonArray(value)
    else:
        raise InvalidValueError("must be a content block object or a list of them")
    if not _SAMPLING_CONTENT(content):
        raise InvalidValueError(
            "must be sampling content blocks (text, image, audio, tool use or tool result)"
        )
    return content


@dataclass(frozen=True, slots=True)
class SamplingResponse:
    """The client's answer to a ``sampling/createMessage`` request (a ``CreateMessageResult``).

    ``content`` is one content block (a ``JsonObject`` with its ``type``) or, as the schema
    allows, a tuple of them (a ``JsonArray``); ``blocks`` is always the tuple.  ``stop_reason``
    is the open ``stopReason`` string (``"endTurn"``, ``"maxTokens"``, ...) or ``None``.
    """

    role: Role
    content: JsonObject | tuple[JsonObject, ...]
    model: str
    stop_reason: str | None = None

    _CHECKS: ClassVar[Checks] = (
        ("role", _role),
        ("content", _sampling_content),
        ("model", string),
        ("stop_reason", OPTIONAL_TEXT),
    )

    def __post_init__(self) -> None:
        validate(self)

    @property
    def blocks(self) -> tuple[JsonObject, ...]:
        content = self.content
        return (content,) if isinstance(content, JsonObject) else content

    @classmethod
    def from_json(cls, value: object) -> SamplingResponse | None:
        """The view of one input response, or ``None`` when it is not a
        ``CreateMessageResult``."""
        if not _CREATE_MESSAGE_RESULT(value):
            return None
        response = cast(JsonObject, value)
        return cls(
            Role(response["role"]),
            cast("JsonObject | tuple[JsonObject, ...]", response["content"]),
            cast(str, response["model"]),
            cast("str | None", response.get("stopReason")),
        )


@dataclass(frozen=True, slots=True)
class Root:
    """One root the client exposes: ``uri`` (``file://...`` today) and an optional display
    ``name``.  The URI is kept as sent; it is the client's claim, to check before use."""

    uri: str
    name: str | None = None

    _CHECKS: ClassVar[Checks] = (("uri", string), ("name", OPTIONAL_TEXT))

    def __post_init__(self) -> None:
        validate(self)


def _roots(value: object) -> tuple[Root, ...]:
    return sequence_of(value, Root, "every root must be a Root")


@dataclass(frozen=True, slots=True)
class RootsResponse:
    """The client's answer to a ``roots/list`` request (a ``ListRootsResult``), in its order."""

    roots: tuple[Root, ...]

    _CHECKS: ClassVar[Checks] = (("roots", _roots),)

    def __post_init__(self) -> None:
        validate(self)

    @classmethod
    def from_json(cls, value: object) -> RootsResponse | None:
        """The view of one input response, or ``None`` when it is not a ``ListRootsResult``."""
        if not _LIST_ROOTS_RESULT(value):
            return None
        roots = cast("tuple[JsonObject, ...]", cast(JsonObject, value)["roots"])
        return cls(
            tuple(
                Root(cast(str, root["uri"]), cast("str | None", root.get("name"))) for root in roots
            )
        )
