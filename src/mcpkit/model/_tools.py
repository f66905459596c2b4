"""Tool registrations: the five programmatic shapes.

Soklet's staged builder (``withName(...).argumentAndOutputTypes(...).handler(...)``) exists so
that no handler can be installed before the argument and result model is fixed.  In
Python one keyword-only factory per stage says the same thing: each factory's signature names
exactly what its shape needs, so a missing model, or an option the shape does not have,
is a ``TypeError`` at the call site, and every other rule (``_tool_rules``) is checked before
the factory returns.

Everything a registration publishes is decided here, once: the name, the
revision set, the compiled input schema, the derived output schema in the shape its revisions
require, and the revision rules of mirrored headers, tasks and multi-round input.  Errors are
``ConfigurationError`` (``SchemaError`` from the schema layer) and name the tool and its
revisions; the endpoint adds its path.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import ClassVar, Final, TypeAlias, TypeVar

import mcpkit.model._tool_rules as rules
from mcpkit.json import JsonObject
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.model import Icon  # from the package: the module that defines Icon may move
from mcpkit.model._apps import AppTool, check_tool_app
from mcpkit.model._context import InvocationFeatures, RequestContext, ToolArguments
from mcpkit.model._handlers import MultiRoundRegistration
from mcpkit.model._input import InputRequestDeclaration, RequestStateMode
from mcpkit.model._results import OperationResult
from mcpkit.model._revision import Revision, wires
from mcpkit.model._tasks import TaskSupport
from mcpkit.model._tool_annotations import ToolAnnotations, ToolShape
from mcpkit.schema import InputModel, OutputModel, ToolSchema, compile_schema

__all__ = ["OperationHandler", "ToolHandler", "ToolRegistration"]

A = TypeVar("A")

ToolHandler: TypeAlias = Callable[[RequestContext, ToolArguments[A], InvocationFeatures], object]
"""A typed-complete handler: returns a value of the output type, or a coroutine for one."""

OperationHandler: TypeAlias = Callable[
    [RequestContext, ToolArguments[A], InvocationFeatures],
    OperationResult | Awaitable[OperationResult],
]
"""A handler that returns a recognised ``OperationResult``, directly or awaited."""

_JSON_OBJECT_DOCUMENT: Final = JsonObject({"type": "object"})


class ToolRegistration(MultiRoundRegistration):
    """An immutable tool: name, revisions, input schema, optional output schema, handler
    and presentation or policy options.

    Build one with a factory, one per shape (:class:`ToolShape`): :meth:`typed`,
    :meth:`typed_task`, :meth:`advanced`, :meth:`json_object`, :meth:`authored`.  Decorated
    tools become the same object.  ``handler`` is always the callable the server invokes
    as ``handler(ctx, arguments, features)``; for :meth:`typed_task` that is the operation
    handler.  The wire form (``definition(revision)``) belongs to ``mcpkit.protocol``.
    """

    __slots__ = (
        "annotations",
        "app",
        "declared_kinds",
        "description",
        "handler",
        "icons",
        "input_model",
        "input_requests",
        "input_schema",
        "is_async",
        "mirror_structured_content",
        "name",
        "output_model",
        "output_schema",
        "rate_limiter",
        "request_state_mode",
        "required_kinds",
        "revisions",
        "scopes",
        "shape",
        "task_support",
        "title",
    )
    _FACTORIES: ClassVar[str] = (
        "ToolRegistration.typed, typed_task, advanced, json_object or authored"
    )

    name: str
    revisions: frozenset[Revision]
    shape: ToolShape
    handler: Callable[..., object]
    is_async: bool
    """The handler is a coroutine function: await it on the event loop instead of running it in
    the worker-thread pool."""
    input_schema: ToolSchema
    output_schema: ToolSchema | None
    """Derived for the typed shapes (retained for ``tasks/get`` on ``typed_task``)."""
    input_model: InputModel | None
    """The binder of the typed and advanced shapes; ``None`` where handlers get raw JSON."""
    output_model: OutputModel | None
    title: str | None
    description: str | None
    annotations: ToolAnnotations | None
    icons: tuple[Icon, ...]
    rate_limiter: str | None
    mirror_structured_content: bool
    scopes: frozenset[str]
    """OAuth scopes a caller's access token must all carry to call this tool; empty means no
    scope is required.  Enforced by the server's resource server (``Server(auth=...)``); list
    results hide entries a caller may not use."""
    app: AppTool | None
    """The tool's MCP App (``_meta.ui`` of its definition), 2026-07-28 only."""
    task_support: TaskSupport
    """Whether a call may run as a task (``REQUIRED`` for :meth:`typed_task`, whose handler
    creates the task itself)."""

    @property
    def managed_task(self) -> bool:
        """Whether the server runs calls of this tool as tasks itself (when the request
        declares the extension): task support, and an ordinary handler rather than an operation
        handler that creates its task through ``TaskCreation``."""
        return (
            self.task_support is not TaskSupport.FORBIDDEN
            and self.shape is not ToolShape.TYPED_TASK
        )

    def __repr__(self) -> str:
        return f"<ToolRegistration {self.name} {self.shape.value} [{wires(self.revisions)}]>"

    @classmethod
    def _build(
        cls,
        tool: rules.Tool,
        shape: ToolShape,
        handler: Callable[..., object],
        is_async: bool,
        input_schema: ToolSchema,
        input_model: InputModel | None,
        output_model: OutputModel | None,
        options: dict[str, object],
        multi_round: Mapping[str, object],
    ) -> ToolRegistration:
        rules.check_headers(tool, input_schema)
        registration: ToolRegistration = cls._create(
            {
                "name": tool.name,
                "revisions": tool.revisions,
                "shape": shape,
                "handler": handler,
                "is_async": is_async,
                "input_schema": input_schema,
                "output_schema": None if output_model is None else output_model.schema,
                "input_model": input_model,
                "output_model": output_model,
                **options,
                **multi_round,
            }
        )
        return registration

    @classmethod
    def typed(
        cls,
        *,
        name: str,
        revisions: Collection[Revision],
        arguments: type[A] | InputModel,
        output: object,
        handler: ToolHandler[A],
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        icons: Sequence[Icon] = (),
        rate_limiter: str | None = None,
        mirror_structured_content: bool = True,
        scopes: Collection[str] = (),
        task_support: TaskSupport = TaskSupport.FORBIDDEN,
        app: AppTool | None = None,
        limits: Limits = DEFAULT_LIMITS,
    ) -> ToolRegistration:
        """A tool that always completes with structured output.

        ``handler(ctx, ToolArguments[A], features)`` returns a value of ``output`` (or is an
        ``async def`` returning one).  ``arguments`` is a frozen dataclass, a ``TypedDict`` or
        ``dict[str, T]``, or an ``InputModel`` already derived (the decorators derive one from a
        method's parameters); ``output`` any member of the typed family but a bare ``str``, and
        an object whenever a 2025 revision is selected.  ``limits`` bound the derived schemas and
        the binding, so pass the server's own ``Limits`` if they differ from the defaults.
        ``task_support`` says whether the server may run a call as a task (``TaskSupport``).
        ``scopes`` (every shape has it) are the OAuth scopes a caller's access token must all
        carry: a list, tuple, set or frozenset of RFC 6749 scope-tokens.
        """
        tool = rules.identify(name, revisions)
        is_async = rules.check_handler(tool, handler, "handler")
        options = rules.options(
            tool, title, description, annotations, icons, rate_limiter, mirror_structured_content,
            scopes,
        )  # fmt: skip
        options["task_support"] = rules.task_support(tool, task_support)
        options["app"] = check_tool_app(tool, tool.revisions, app)
        input_model = rules.input_model(tool, arguments, limits)
        output_model = rules.output_model(tool, output, limits)
        return cls._build(
            tool, ToolShape.TYPED, handler, is_async, input_model.schema, input_model,
            output_model, options, rules.NO_MULTI_ROUND,
        )  # fmt: skip

    @classmethod
    def typed_task(
        cls,
        *,
        name: str,
        revisions: Collection[Revision],
        arguments: type[A] | InputModel,
        output: object,
        operation_handler: OperationHandler[A],
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        icons: Sequence[Icon] = (),
        rate_limiter: str | None = None,
        mirror_structured_content: bool = True,
        scopes: Collection[str] = (),
        input_requests: Sequence[InputRequestDeclaration] = (),
        request_state_mode: RequestStateMode | None = None,
        app: AppTool | None = None,
        limits: Limits = DEFAULT_LIMITS,
    ) -> ToolRegistration:
        """A statically task-required tool whose handler creates its task itself.

        The operation handler finds a ``TaskCreation`` among its features, creates the task
        through it (``await creation.create()``), hands the ``TaskHandle`` to whatever does the
        work, and returns ``TaskCreatedResult(task_id=handle.task_id)``; it may also return an
        ``InputRequiredResult`` first to gather input by multi-round requests
        (``input_requests``), or a ``CompleteResult`` for work it finished at once.  The output
        schema derived from ``output`` checks the result when a later ``tasks/get`` delivers
        it.  Tasks exist only on 2026-07-28, so that must be the only revision selected.
        """
        tool = rules.identify(name, revisions)
        if tool.on_handshake:
            raise tool.fail(
                "a task-required tool must select only Revision.V2026_07_28: there are no "
                "tasks on 2025 revisions"
            )
        is_async = rules.check_handler(tool, operation_handler, "operation_handler")
        options = rules.options(
            tool, title, description, annotations, icons, rate_limiter, mirror_structured_content,
            scopes,
        )  # fmt: skip
        options["task_support"] = TaskSupport.REQUIRED
        options["app"] = check_tool_app(tool, tool.revisions, app)
        multi_round = rules.multi_round(tool, input_requests, request_state_mode)
        input_model = rules.input_model(tool, arguments, limits)
        output_model = rules.output_model(tool, output, limits)
        return cls._build(
            tool, ToolShape.TYPED_TASK, operation_handler, is_async, input_model.schema,
            input_model, output_model, options, multi_round,
        )  # fmt: skip

    @classmethod
    def advanced(
        cls,
        *,
        name: str,
        revisions: Collection[Revision],
        arguments: type[A] | InputModel,
        handler: OperationHandler[A],
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        icons: Sequence[Icon] = (),
        rate_limiter: str | None = None,
        mirror_structured_content: bool = True,
        scopes: Collection[str] = (),
        input_requests: Sequence[InputRequestDeclaration] = (),
        request_state_mode: RequestStateMode | None = None,
        task_support: TaskSupport = TaskSupport.FORBIDDEN,
        app: AppTool | None = None,
        limits: Limits = DEFAULT_LIMITS,
    ) -> ToolRegistration:
        """Converted arguments in, an ``OperationResult`` out: explicit content, an error
        result or multi-round input.  No output schema: the handler chooses its
        content, and on 2025 revisions its structured content must be an object."""
        tool = rules.identify(name, revisions)
        is_async = rules.check_handler(tool, handler, "handler")
        options = rules.options(
            tool, title, description, annotations, icons, rate_limiter, mirror_structured_content,
            scopes,
        )  # fmt: skip
        options["task_support"] = rules.task_support(tool, task_support)
        options["app"] = check_tool_app(tool, tool.revisions, app)
        multi_round = rules.multi_round(tool, input_requests, request_state_mode)
        input_model = rules.input_model(tool, arguments, limits)
        return cls._build(
            tool, ToolShape.ADVANCED, handler, is_async, input_model.schema, input_model, None,
            options, multi_round,
        )  # fmt: skip

    @classmethod
    def json_object(
        cls,
        *,
        name: str,
        revisions: Collection[Revision],
        handler: OperationHandler[JsonObject],
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        icons: Sequence[Icon] = (),
        rate_limiter: str | None = None,
        mirror_structured_content: bool = True,
        scopes: Collection[str] = (),
        input_requests: Sequence[InputRequestDeclaration] = (),
        request_state_mode: RequestStateMode | None = None,
        task_support: TaskSupport = TaskSupport.FORBIDDEN,
        app: AppTool | None = None,
        limits: Limits = DEFAULT_LIMITS,
    ) -> ToolRegistration:
        """The raw, immutable JSON-object arguments in, an ``OperationResult`` out.

        The published input schema is the fixed ``{"type": "object"}``: any object is accepted
        and the handler owns every further check.
        """
        tool = rules.identify(name, revisions)
        is_async = rules.check_handler(tool, handler, "handler")
        options = rules.options(
            tool, title, description, annotations, icons, rate_limiter, mirror_structured_content,
            scopes,
        )  # fmt: skip
        options["task_support"] = rules.task_support(tool, task_support)
        options["app"] = check_tool_app(tool, tool.revisions, app)
        multi_round = rules.multi_round(tool, input_requests, request_state_mode)
        schema = compile_schema(_JSON_OBJECT_DOCUMENT, limits=limits)
        return cls._build(
            tool, ToolShape.JSON_OBJECT, handler, is_async, schema, None, None, options,
            multi_round,
        )  # fmt: skip

    @classmethod
    def authored(
        cls,
        *,
        name: str,
        revisions: Collection[Revision],
        input_schema: object,
        handler: OperationHandler[JsonObject],
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        icons: Sequence[Icon] = (),
        rate_limiter: str | None = None,
        mirror_structured_content: bool = True,
        scopes: Collection[str] = (),
        input_requests: Sequence[InputRequestDeclaration] = (),
        request_state_mode: RequestStateMode | None = None,
        task_support: TaskSupport = TaskSupport.FORBIDDEN,
        app: AppTool | None = None,
        limits: Limits = DEFAULT_LIMITS,
    ) -> ToolRegistration:
        """An authored Profile 1 input schema; the handler gets the validated raw JSON object
        and returns an ``OperationResult``.

        For constraints derivation cannot express, and for ``x-mcp-header`` declarations.  The
        document (a ``JsonObject`` or plain ``dict``) is compiled now and published exactly as
        written; its root must be ``{"type": "object", ...}``.
        """
        tool = rules.identify(name, revisions)
        is_async = rules.check_handler(tool, handler, "handler")
        options = rules.options(
            tool, title, description, annotations, icons, rate_limiter, mirror_structured_content,
            scopes,
        )  # fmt: skip
        options["task_support"] = rules.task_support(tool, task_support)
        options["app"] = check_tool_app(tool, tool.revisions, app)
        multi_round = rules.multi_round(tool, input_requests, request_state_mode)
        schema = tool.schema_step(lambda: compile_schema(input_schema, limits=limits))
        return cls._build(
            tool, ToolShape.AUTHORED, handler, is_async, schema, None, None, options, multi_round
        )
