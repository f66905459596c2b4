"""From a decorated method (or plain function) to a registration, and the handler that calls
it.

``_method_signature`` reads the parameters; this module decides what each kind of operation
accepts and builds the registration the programmatic factory would.  The handler given
to the registration (the *adapter*) has the registration's handler shape, ``(ctx, arguments,
features)`` or ``(ctx, features)``; each call asks the instance provider for an instance (a
method's) , converts what the server passes into keyword arguments, adds the framework values,
calls the function and, for the shorthand returns (a tool's or prompt's ``str``, a prompt's
list of messages, a resource's ``str`` or ``bytes``), wraps what it returned in the result the
registration's handler returns.  An ``async def`` function gets an ``async def`` adapter, so
``is_async`` is the function's.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from mcpkit.errors import ConfigurationError, SchemaError
from mcpkit.model._content import BlobResourceContents, Role, TextContent, TextResourceContents
from mcpkit.model._context import InvocationFeatures, RequestContext, ToolArguments
from mcpkit.model._handlers import only_awaits
from mcpkit.model._method_signature import (
    NO_RESULT,
    NONE,
    Method,
    arms,
    check_result,
    fail,
    operation_revisions,
    read_method,
    unwrap,
)
from mcpkit.model._outputs import PromptMessage, PromptOutput, ResourceOutput
from mcpkit.model._prompts import PromptArgument, PromptRegistration
from mcpkit.model._resource_list import ResourceListPage, ResourceListRegistration
from mcpkit.model._resources import ResourceRegistration
from mcpkit.model._results import (
    CompleteResult,
    InputRequiredResult,
    OperationResult,
    TaskCreatedResult,
)
from mcpkit.model._revision import Revision
from mcpkit.model._tasks import TaskSupport
from mcpkit.model._templates import UriTemplate, is_template
from mcpkit.model._tools import ToolRegistration
from mcpkit.schema import Arg, derive_input

if TYPE_CHECKING:
    from mcpkit.model._decorators import PromptSpec, ResourceListSpec, ResourceSpec, ToolSpec

__all__ = [
    "OPERATION_ATTRIBUTE",
    "Target",
    "UriParam",
    "prompt_registration",
    "resource_list_registration",
    "resource_registration",
    "tool_registration",
]

OPERATION_ATTRIBUTE: Final = "__mcp_operation__"
"""Where a method decorator leaves its descriptor on the function."""


@dataclass(frozen=True, slots=True)
class UriParam:
    """``Annotated[str, UriParam("sku")]``: the template variable a resource method parameter
    receives, when it is not the parameter's own name."""

    name: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ConfigurationError("UriParam.name must be a non-empty str")


@dataclass(frozen=True, slots=True)
class Target:
    """The function being converted and where errors point; for a method, its class and the
    instance provider (``cls`` is ``None`` for a plain function)."""

    cls: type[Any] | None
    provider: Callable[[type[Any]], object]
    function: Callable[..., Any]
    site: str

    def read(self, label: str) -> Method:
        return read_method(label, self.function, bound=self.cls is not None)


Finish = Callable[[RequestContext, Any], Any]
"""Turns what a function returned into what its registration's handler returns."""


def _adapter(
    target: Target,
    method: Method,
    convert: Callable[[Any], dict[str, Any]] | None,
    finish: Finish | None = None,
) -> Callable[..., Any]:
    """The registration's handler: ``(ctx, x, features)``, or ``(ctx, features)`` when
    ``convert`` is ``None`` (an exact resource); async exactly when the function is."""
    cls, provider, function = target.cls, target.provider, target.function
    framework = method.framework

    if cls is None:

        def call(ctx: RequestContext, features: InvocationFeatures, kwargs: dict[str, Any]) -> Any:
            for name, inject in framework:
                kwargs[name] = inject.value_for(ctx, features)
            return function(**kwargs)

    else:

        def call(ctx: RequestContext, features: InvocationFeatures, kwargs: dict[str, Any]) -> Any:
            for name, inject in framework:
                kwargs[name] = inject.value_for(ctx, features)
            return function(provider(cls), **kwargs)  # a new instance per invocation

    handler: Callable[..., Any]
    if convert is None:
        if method.is_async:

            async def handler(ctx: RequestContext, features: InvocationFeatures) -> Any:
                return await call(ctx, features, {})

        else:

            def handler(ctx: RequestContext, features: InvocationFeatures) -> Any:
                return call(ctx, features, {})

    elif method.is_async:

        async def handler(ctx: RequestContext, value: Any, features: InvocationFeatures) -> Any:
            return await call(ctx, features, convert(value))

    else:

        def handler(ctx: RequestContext, value: Any, features: InvocationFeatures) -> Any:
            return call(ctx, features, convert(value))

    if finish is not None:  # only a shorthand return pays for the extra call
        handler = _finished(handler, finish, method.is_async)
    handler.__name__ = function.__name__
    handler.__qualname__ = function.__qualname__
    if method.is_async:
        # Its only await is the function's coroutine (framework values are plain calls).
        only_awaits(handler, function)
    return handler


def _finished(base: Callable[..., Any], finish: Finish, is_async: bool) -> Callable[..., Any]:
    """``base`` with ``finish`` applied to what it returns."""
    if is_async:

        async def finished_async(ctx: RequestContext, *args: Any) -> Any:
            return finish(ctx, await base(ctx, *args))

        return finished_async

    def finished(ctx: RequestContext, *args: Any) -> Any:
        return finish(ctx, base(ctx, *args))

    return finished


def _tool_arguments(arguments: ToolArguments[Mapping[str, Any]]) -> dict[str, Any]:
    return dict(arguments.converted)  # the binder's keyword arguments, by parameter name


def _tool_text(ctx: RequestContext, value: Any) -> Any:
    """``-> str``: the text is the tool's one content block (anything else is passed on, for
    the server to refuse as a tool without an output type)."""
    return CompleteResult.from_tool_text(value) if isinstance(value, str) else value


def _prompt_messages(ctx: RequestContext, value: Any) -> Any:
    """``-> str`` is one user message; ``-> list[PromptMessage]`` the messages in order."""
    if isinstance(value, str):
        return PromptOutput(
            messages=(PromptMessage(role=Role.USER, content=TextContent(text=value)),)
        )
    if isinstance(value, list | tuple):
        return PromptOutput(messages=tuple(value))
    return value


def _messages_annotation(result: Any) -> bool:
    """Whether a prompt's return annotation is ``list[PromptMessage]`` (or a tuple of them)."""
    origin, args = typing.get_origin(result), typing.get_args(result)
    if origin is list:
        return args == (PromptMessage,)
    return origin is tuple and args == (PromptMessage, ...)


def tool_registration(
    target: Target, spec: ToolSpec, served: frozenset[Revision]
) -> ToolRegistration:
    """``ToolRegistration.typed`` over the method's parameters and return annotation, or
    ``advanced`` when it returns ``OperationResult`` kinds, or ``typed_task`` when one of them
    is ``TaskCreatedResult[R]`` (the method creates its task itself; ``R`` is the output type
    that checks the task's result).  Framework parameters are excluded from the derived
    schema and injected by the adapter."""
    label = f"tool {spec.name!r}"
    method = target.read(label)
    if method.result is NO_RESULT:
        raise fail(label, "the method needs a return annotation: it is the output type")
    text = method.result is str  # ``-> str``: text content, no output schema
    results = [
        isinstance(typing.get_origin(arm) or arm, type)
        and issubclass(typing.get_origin(arm) or arm, OperationResult)
        for arm in arms(method.result)
    ]
    if any(results) and not all(results):
        raise fail(label, "the return annotation mixes OperationResult kinds and typed output")
    try:
        model = derive_input(target.function, excluded=method.framework_hints)
    except SchemaError as error:
        raise SchemaError(f"{label}: {error}") from error
    handler = _adapter(target, method, _tool_arguments, _tool_text if text else None)
    common: dict[str, Any] = {
        "name": spec.name,
        "revisions": operation_revisions(label, spec.revisions, served),
        "arguments": model,
        "handler": handler,
        "title": spec.title,
        "description": spec.description,
        "annotations": spec.annotations,
        "icons": spec.icons,
        "rate_limiter": spec.rate_limiter,
        "mirror_structured_content": spec.mirror_structured_content,
        "app": spec.app,
        "scopes": spec.scopes,
    }
    created = [arm for arm in arms(method.result) if typing.get_origin(arm) is TaskCreatedResult]
    if created:
        if spec.task_support is not TaskSupport.FORBIDDEN:
            raise fail(
                label,
                "a method returning TaskCreatedResult creates its task itself and always runs "
                "as one: leave task_support out",
            )
        (output,) = typing.get_args(created[0])
        return ToolRegistration.typed_task(
            **{key: value for key, value in common.items() if key != "handler"},
            operation_handler=handler, output=output, input_requests=spec.input_requests,
            request_state_mode=spec.request_state_mode,
        )  # fmt: skip
    common["task_support"] = spec.task_support
    if text or all(results):
        return ToolRegistration.advanced(
            **common, input_requests=spec.input_requests,
            request_state_mode=spec.request_state_mode,
        )  # fmt: skip
    if spec.input_requests or spec.request_state_mode is not None:
        raise fail(
            label,
            "input_requests and request_state_mode belong to a tool that returns an "
            "OperationResult (multi-round input needs an InputRequiredResult)",
        )
    return ToolRegistration.typed(**common, output=method.result)


def prompt_registration(
    target: Target, spec: PromptSpec, served: frozenset[Revision]
) -> PromptRegistration:
    """``PromptRegistration.create`` with one ``PromptArgument`` per business parameter:
    required unless it is ``str | None`` or has a default."""
    label = f"prompt {spec.name!r}"
    method = target.read(label)
    shorthand = method.result is str or _messages_annotation(method.result)
    if not shorthand:
        check_result(
            label, method.result, (PromptOutput, CompleteResult, InputRequiredResult),
            also="str, list[PromptMessage]",
        )  # fmt: skip
    declared: list[PromptArgument] = []
    plan: list[tuple[str, str, bool]] = []  # (published name, parameter, pass None if absent)
    for param in method.business:
        hint, arg = unwrap(label, param, Arg)
        optional = hint is not str
        if optional and set(arms(hint)) != {str, NONE}:
            raise fail(label, f"parameter {param.name!r}: prompt arguments are str or str | None")
        if arg is not None and (arg.minimum, arg.maximum, arg.header) != (None, None, None):
            raise fail(label, f"parameter {param.name!r}: Arg takes name, title, description")
        published = param.name if arg is None or arg.name is None else arg.name
        title, description = (None, None) if arg is None else (arg.title, arg.description)
        try:
            declared.append(
                PromptArgument(
                    published, title=title, description=description,
                    required=not (optional or param.has_default),
                )
            )  # fmt: skip
        except ConfigurationError as error:
            raise fail(label, f"parameter {param.name!r}: {error}") from None
        plan.append((published, param.name, optional and not param.has_default))

    def convert(arguments: Mapping[str, str]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        for published, name, pass_none in plan:
            if published in arguments:
                kwargs[name] = arguments[published]
            elif pass_none:
                kwargs[name] = None
        return kwargs

    return PromptRegistration.create(
        name=spec.name,
        revisions=operation_revisions(label, spec.revisions, served),
        handler=_adapter(target, method, convert, _prompt_messages if shorthand else None),
        arguments=declared,
        title=spec.title,
        description=spec.description,
        icons=spec.icons,
        completions=spec.completions,
        input_requests=spec.input_requests,
        request_state_mode=spec.request_state_mode,
        scopes=spec.scopes,
    )


def _resource_contents(mime_type: str | None) -> Finish:
    """``-> str`` or ``-> bytes``: the one text or blob item of the resource read, under the
    URI the client read (a template's expansion) and the decorator's media type."""

    def finish(ctx: RequestContext, value: Any) -> Any:
        uri = ctx.operation_name
        if isinstance(value, str) and uri is not None:
            return ResourceOutput(
                contents=(TextResourceContents(uri=uri, text=value, mime_type=mime_type),)
            )
        if isinstance(value, bytes) and uri is not None:
            return ResourceOutput(
                contents=(BlobResourceContents(uri=uri, blob=value, mime_type=mime_type),)
            )
        return value

    return finish


def resource_registration(
    target: Target, spec: ResourceSpec, served: frozenset[Revision]
) -> ResourceRegistration:
    """``ResourceRegistration.exact`` (no business parameters) or ``.template`` (one ``str``
    parameter per template variable), chosen by whether ``uri`` has variables."""
    if not isinstance(spec.uri, str):
        raise ConfigurationError("a resource uri must be a str")
    template = is_template(spec.uri)
    label = f"resource {'template ' if template else ''}{spec.uri!r}"
    method = target.read(label)
    finish: Finish | None = None
    if method.result is str or method.result is bytes:
        finish = _resource_contents(spec.mime_type)
    else:
        check_result(
            label, method.result, (ResourceOutput, CompleteResult, InputRequiredResult),
            also="str, bytes",
        )  # fmt: skip
    revisions = operation_revisions(label, spec.revisions, served)
    options: dict[str, Any] = {
        "name": spec.name,
        "revisions": revisions,
        "title": spec.title,
        "description": spec.description,
        "mime_type": spec.mime_type,
        "icons": spec.icons,
        "annotations": spec.annotations,
        "input_requests": spec.input_requests,
        "request_state_mode": spec.request_state_mode,
        "scopes": spec.scopes,
    }
    if not template:
        if method.business:
            raise fail(
                label,
                f"parameter {method.business[0].name!r}: an exact resource takes only framework "
                "parameters; declare a URI template to receive variables",
            )
        if spec.completions:
            raise fail(label, "completions belong to template variables; this URI has none")
        return ResourceRegistration.exact(
            uri=spec.uri, size=spec.size, handler=_adapter(target, method, None, finish),
            app=spec.app, **options,
        )  # fmt: skip
    if spec.app is not None:
        raise fail(label, "an App's HTML is one exact ui:// resource, not a template")
    if spec.size is not None:
        raise fail(label, "size describes one exact resource; a template has none")
    variables = UriTemplate.parse(spec.uri).variables
    plan: dict[str, str] = {}  # variable -> parameter
    for param in method.business:
        hint, uri_param = unwrap(label, param, UriParam)
        variable = param.name if uri_param is None else uri_param.name
        if hint is not str:
            raise fail(label, f"parameter {param.name!r}: URI variables are delivered as str")
        if variable not in variables:
            raise fail(label, f"parameter {param.name!r}: the template has no {{{variable}}}")
        if variable in plan:
            raise fail(label, f"parameters {plan[variable]!r} and {param.name!r} both bind "
                        f"{{{variable}}}")  # fmt: skip
        plan[variable] = param.name
    missing = [variable for variable in variables if variable not in plan]
    if missing:
        raise fail(label, f"no parameter receives {{{missing[0]}}}; add one (or a UriParam)")

    def convert(values: Mapping[str, str]) -> dict[str, Any]:
        return {name: values[variable] for variable, name in plan.items()}

    return ResourceRegistration.template(
        uri_template=spec.uri,
        handler=_adapter(target, method, convert, finish),
        completions=spec.completions,
        **options,
    )


def resource_list_registration(
    target: Target, spec: ResourceListSpec, served: frozenset[Revision]
) -> ResourceListRegistration:
    """A ``ResourceListRegistration`` over a method taking the cursor (``str | None``)."""
    label = "resource list handler"
    method = target.read(label)
    check_result(label, method.result, (ResourceListPage,))
    if len(method.business) != 1 or set(arms(method.business[0].hint)) != {str, NONE}:
        raise fail(label, "the method takes one business parameter, the cursor: str | None")
    cursor = method.business[0].name

    def convert(value: str | None) -> dict[str, Any]:
        return {cursor: value}

    return ResourceListRegistration(
        revisions=operation_revisions(label, spec.revisions, served),
        handler=_adapter(target, method, convert),
    )
