"""What the model knows of tasks (the ``io.modelcontextprotocol/tasks`` extension): the
extension's identifier, whether a request declared it, and how a tool takes part.

On 2026-07-28 a client that understands task handles says so on each request, in
``clientCapabilities.extensions``; a capability seen on an earlier request is never
remembered.  The server, not the client, decides whether a call becomes a task: a tool that
supports tasks is run in the background when the request declared the extension, and inline
otherwise (or refused, when it only runs as a task).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Final

from mcpkit.json import JsonObject

__all__ = ["TASKS_EXTENSION", "TaskSupport", "declares_tasks", "tasks_capability"]

TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
"""The extension's identifier, the key under ``capabilities.extensions`` on both sides."""


class TaskSupport(enum.Enum):
    """Whether calls of a tool may run as tasks.

    ``FORBIDDEN`` (the default): always answered inline.  ``OPTIONAL``: run as a task when the
    request declares the tasks extension, inline otherwise.  ``REQUIRED``: run as a task, and a
    request that does not declare the extension is refused with -32021 naming it.  Tasks exist
    only on 2026-07-28: on a 2025 revision an ``OPTIONAL`` tool runs inline.
    """

    FORBIDDEN = "forbidden"
    OPTIONAL = "optional"
    REQUIRED = "required"


def declares_tasks(capabilities: Mapping[str, object] | None) -> bool:
    """Whether a request's ``clientCapabilities`` declare the tasks extension (an object under
    ``extensions``)."""
    if not capabilities:
        return False
    extensions = capabilities.get("extensions")
    return isinstance(extensions, Mapping) and isinstance(extensions.get(TASKS_EXTENSION), Mapping)


def tasks_capability() -> dict[str, object]:
    """The ``ClientCapabilities`` object a -32021 names when a call can only run as a task."""
    return {"extensions": {TASKS_EXTENSION: {}}}


SERVER_EXTENSIONS: Final = JsonObject({TASKS_EXTENSION: JsonObject()})
