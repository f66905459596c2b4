"""Reading a request's ``params``: one reader per method, run once per request before
admission (pipeline group 10).  A reader refuses a wrong shape with -32602 and returns what
the method's operation works with, so no operation reads or checks ``params`` again.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, NamedTuple

from mcpkit.errors import InvalidParams
from mcpkit.json import JsonObject
from mcpkit.model import UNSET
from mcpkit.protocol import LogLevel

__all__ = [
    "CompletionArgs",
    "read_completion",
    "read_cursor",
    "read_level",
    "read_nothing",
    "read_prompt",
    "read_task",
    "read_task_update",
    "read_tool_call",
    "read_uri",
]

_EMPTY: Final = JsonObject()  # immutable, so one serves every absent object parameter


def _text(params: JsonObject, name: str) -> str:
    value = params.get(name)
    if isinstance(value, str):
        return value
    raise InvalidParams()


def _object(params: JsonObject, name: str) -> JsonObject:
    """The member ``name``, an empty object when absent (JSON null is refused)."""
    value = params.get(name, _EMPTY)
    if isinstance(value, JsonObject):
        return value
    raise InvalidParams()


def _strings(value: JsonObject) -> Mapping[str, str]:
    if not all(isinstance(item, str) for item in value.values()):
        raise InvalidParams()
    return MappingProxyType({key: str(item) for key, item in value.items()})


def read_nothing(params: JsonObject) -> None:
    """A method whose params carry nothing the server reads (``ping``, ``initialize``)."""


def read_cursor(params: JsonObject) -> object:
    """A list's ``cursor``: a string, or ``UNSET`` when absent (JSON null is refused)."""
    cursor = params.get("cursor", UNSET)
    if cursor is not UNSET and not isinstance(cursor, str):
        raise InvalidParams()
    return cursor


def read_tool_call(params: JsonObject) -> tuple[str, JsonObject]:
    """``tools/call``: the tool's name and its arguments (an empty object when absent)."""
    # ``_text`` and ``_object`` inlined: this runs for every tools/call
    name = params.get("name")
    if not isinstance(name, str):
        raise InvalidParams()
    arguments = params.get("arguments", _EMPTY)
    if not isinstance(arguments, JsonObject):
        raise InvalidParams()
    return name, arguments


def read_prompt(params: JsonObject) -> tuple[str, Mapping[str, str]]:
    """``prompts/get``: the prompt's name and its string arguments."""
    return _text(params, "name"), _strings(_object(params, "arguments"))


def read_uri(params: JsonObject) -> str:
    """``resources/read``: the URI."""
    return _text(params, "uri")


class CompletionArgs(NamedTuple):
    """``completion/complete``, read: what is completed and with what."""

    prompt: bool
    """The reference is a prompt (``ref/prompt``), else a resource template."""
    ref: str
    """The prompt's name or the template's URI template."""
    argument: str
    value: str
    resolved: Mapping[str, str]
    """``context.arguments``: the values of the arguments already chosen."""


def read_completion(params: JsonObject) -> CompletionArgs:
    ref = _object(params, "ref")
    kind = ref.get("type")
    if kind == "ref/prompt":
        target = _text(ref, "name")
    elif kind == "ref/resource":
        target = _text(ref, "uri")
    else:
        raise InvalidParams()
    argument = _object(params, "argument")
    name = _text(argument, "name")
    value = _text(argument, "value")
    resolved = _strings(_object(_object(params, "context"), "arguments"))
    return CompletionArgs(kind == "ref/prompt", target, name, value, resolved)


def read_level(params: JsonObject) -> str:
    """``logging/setLevel``: the level's wire name."""
    return LogLevel.parse(params.get("level")).wire


_MAX_TASK_ID_CHARS: Final = 256
"""A task id the server issued is 43 characters; a longer one names no task and is refused
before any lookup."""


def read_task(params: JsonObject) -> str:
    """``tasks/get`` and ``tasks/cancel``: the task id, a non-empty string."""
    task_id = _text(params, "taskId")
    if not task_id or len(task_id) > _MAX_TASK_ID_CHARS:
        raise InvalidParams()
    return task_id


def read_task_update(params: JsonObject) -> tuple[str, JsonObject]:
    """``tasks/update``: the task id and ``inputResponses``, an object (each response is
    matched to the task's outstanding requests later; unknown ones are ignored there)."""
    responses = params.get("inputResponses")
    if not isinstance(responses, JsonObject):
        raise InvalidParams()
    return read_task(params), responses
