"""The small values a tool registration carries: its hints and its shape.

They live apart from ``_tools`` so that the registration module holds only the registration
rules.  Each is immutable and checked when it is built: a tool that exists is one the protocol
layer can describe without further checks.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, fields

from mcpkit.errors import ConfigurationError, InvalidValueError
from mcpkit.json import JsonObject, string

__all__ = ["ToolAnnotations", "ToolShape"]


class ToolShape(enum.Enum):
    """Which of the five programmatic stages built a tool.

    The shape decides what the handler receives and must return, so the server branches on it
    once per call instead of inspecting the handler.
    """

    TYPED = "typed"
    """``argumentAndOutputTypes`` + ``handler``: converted arguments in, the output type out."""
    TYPED_TASK = "typed_task"
    """``argumentAndOutputTypes`` + ``operationHandler``: task-required, output type retained."""
    ADVANCED = "advanced"
    """``argumentType``: converted arguments in, an ``OperationResult`` out."""
    JSON_OBJECT = "json_object"
    """``jsonObjectArguments``: the raw JSON object in, an ``OperationResult`` out."""
    AUTHORED = "authored"
    """``inputSchema``: validated raw JSON object in, an ``OperationResult`` out."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolAnnotations:
    """Behaviour hints a client may show or weigh.

    Every hint is optional: ``None`` leaves it off the wire, so "unknown" stays distinct from
    ``False``.  Clients must treat hints as untrusted unless they trust the server, so nothing
    in mcpkit enforces them.  A hint must be a real ``bool`` (``1`` is refused): the wire member
    is a JSON boolean, and a silent coercion would publish something the author did not write.
    """

    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None
    title: str | None = None

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if value is None:
                continue
            if field.name == "title":
                try:
                    object.__setattr__(self, "title", string(value))
                except InvalidValueError as error:
                    raise ConfigurationError(f"ToolAnnotations.title: {error.rule}") from None
            elif not isinstance(value, bool):
                raise ConfigurationError(f"ToolAnnotations.{field.name}: must be a bool or None")

    def to_json(self) -> JsonObject:
        """The protocol's ``ToolAnnotations`` object; absent hints are left out."""
        members = {
            "title": self.title,
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": self.open_world,
        }
        return JsonObject({name: value for name, value in members.items() if value is not None})
