"""The rules a tool registration is checked against.

``_tools`` keeps the factories and the registration; the checks live here so each factory reads
as the list of rules its shape obeys.  Every check raises ``ConfigurationError`` (or the schema
layer's ``SchemaError``, re-raised) whose message starts with the tool's name and its revisions,
so the developer can find the registration at once; the endpoint adds its path.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, TypeVar

from mcpkit.errors import ConfigurationError, InvalidValueError, SchemaError
from mcpkit.json import string
from mcpkit.limits import Limits
from mcpkit.model import Icon  # from the package: the module that defines Icon may move
from mcpkit.model._handlers import NO_MULTI_ROUND, Operation, check_handler, check_multi_round, show
from mcpkit.model._handlers import identify as identify_operation
from mcpkit.model._scopes import checked_scopes
from mcpkit.model._tasks import TaskSupport
from mcpkit.model._tool_annotations import ToolAnnotations
from mcpkit.schema import InputModel, OutputModel, ToolSchema, derive_input, derive_output

__all__ = [
    "NO_MULTI_ROUND",
    "Tool",
    "check_handler",
    "check_headers",
    "identify",
    "input_model",
    "multi_round",
    "options",
    "output_model",
    "task_support",
]

_T = TypeVar("_T")

# 1 to 128 characters, ASCII letters, digits, underscore, hyphen and dot.
_NAME: Final = re.compile(r"[A-Za-z0-9_.\-]{1,128}")


@dataclass(frozen=True, slots=True)
class Tool(Operation):
    """The tool being built: an operation labelled ``tool 'name'``, as error messages name it,
    that keeps its bare name for the registration."""

    name: str

    def schema_step(self, step: Callable[[], _T]) -> _T:
        """Run a schema-layer step, re-raising its refusal with this tool's name and revisions.

        ``InvalidValueError`` comes from converting an authored document that is not JSON data
        (a set, a non-finite float): for a schema that is a schema error like any other.
        """
        try:
            return step()
        except SchemaError as error:
            raise SchemaError(f"{self}: {error}") from error
        except InvalidValueError as error:
            raise SchemaError(f"{self}: the input schema is not JSON data: {error.rule}") from error


def identify(name: object, revisions: object) -> Tool:
    """Check the name grammar, then the revision set as every operation's (``_handlers``)."""
    if not isinstance(name, str):
        raise ConfigurationError("a tool name must be a str")
    name = str.__str__(name)
    if _NAME.fullmatch(name) is None:
        raise ConfigurationError(
            f"tool name {show(name)} must be 1 to 128 characters of A-Z a-z 0-9 _ - ."
        )
    label = f"tool {name!r}"
    return Tool(label, identify_operation(label, revisions).revisions, name)


def _text(tool: Tool, option: str, value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise tool.fail(f"{option} must be a str or None")
    try:
        return string(value)
    except InvalidValueError as error:
        raise tool.fail(f"{option}: {error.rule}") from None


def options(
    tool: Tool,
    title: object,
    description: object,
    annotations: object,
    icons: object,
    rate_limiter: object,
    mirror_structured_content: object,
    scopes: object,
) -> dict[str, object]:
    """The presentation and policy options every shape has."""
    if annotations is not None and not isinstance(annotations, ToolAnnotations):
        raise tool.fail("annotations must be a ToolAnnotations or None")
    if not isinstance(icons, list | tuple) or not all(isinstance(icon, Icon) for icon in icons):
        raise tool.fail("icons must be a tuple or list of Icon")
    limiter = _text(tool, "rate_limiter", rate_limiter)
    if limiter == "":
        raise tool.fail("rate_limiter must name a limiter (a non-empty str) or be None")
    if not isinstance(mirror_structured_content, bool):
        raise tool.fail("mirror_structured_content must be a bool")
    return {
        "title": _text(tool, "title", title),
        "description": _text(tool, "description", description),
        "annotations": annotations,
        "icons": tuple(icons),
        "rate_limiter": limiter,
        "mirror_structured_content": mirror_structured_content,
        "scopes": checked_scopes(scopes, str(tool)),
    }


def multi_round(
    tool: Tool, input_requests: object, request_state_mode: object
) -> Mapping[str, object]:
    """The advanced shapes' declarations: the kinds of input request the handler may
    emit and who protects its request state; a tool that declares either selects only
    2026-07-28.  The rules are every operation's (``_handlers.check_multi_round``)."""
    return check_multi_round(tool, input_requests, request_state_mode)


def input_model(tool: Tool, arguments: object, limits: Limits) -> InputModel:
    """Derive the input schema and binder of a typed shape.

    An ``InputModel`` is used as given: the decorators derive it from a method's parameters,
    leaving out the framework parameters they inject.
    """
    if isinstance(arguments, InputModel):
        return arguments
    if inspect.isfunction(arguments) or inspect.ismethod(arguments):
        raise tool.fail(
            "arguments must be a frozen dataclass, a TypedDict or dict[str, T]; arguments "
            "derived from a function's parameters belong to the decorators"
        )
    return tool.schema_step(lambda: derive_input(arguments, limits=limits))


def output_model(tool: Tool, output: object, limits: Limits) -> OutputModel:
    """Derive the output schema: an object root whenever a 2025 revision is selected,
    never a bare ``str`` (the schema layer refuses it)."""
    return tool.schema_step(
        lambda: derive_output(output, object_root=tool.on_handshake, limits=limits)
    )


def check_headers(tool: Tool, schema: ToolSchema) -> None:
    """``Mcp-Param-*`` mirroring exists only on 2026-07-28, so a tool whose input schema
    declares ``x-mcp-header`` (authored, or derived from ``Arg(header=...)``) selects only it."""
    if schema.headers and tool.on_handshake:
        suffixes = ", ".join(header.suffix for header in schema.headers)
        raise tool.fail(
            f"mirrors arguments into headers (x-mcp-header: {suffixes}), which exist only on "
            "2026-07-28; it must select only Revision.V2026_07_28"
        )


def task_support(tool: Tool, value: object) -> TaskSupport:
    """A ``TaskSupport``; a tool that only runs as a task (``REQUIRED``) selects only
    2026-07-28, as tasks exist nowhere else (an ``OPTIONAL`` one runs inline on 2025)."""
    if not isinstance(value, TaskSupport):
        raise tool.fail("task_support must be a TaskSupport")
    if value is TaskSupport.REQUIRED and tool.on_handshake:
        raise tool.fail(
            "runs only as a task (TaskSupport.REQUIRED), and tasks exist only on 2026-07-28: "
            "select only Revision.V2026_07_28, or use TaskSupport.OPTIONAL to run inline on "
            "2025 revisions"
        )
    return value
