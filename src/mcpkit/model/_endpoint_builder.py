"""Function-style authoring: an ``EndpointBuilder`` whose decorators take plain functions.

The class style (``@endpoint`` over a class of decorated methods) fits an endpoint whose
operations share a type.  Many servers are a module of functions instead, so the builder offers
the same decorators as methods: ``@notes.tool``, ``@notes.prompt``, ``@notes.resource(uri)``,
``@notes.resource_list``.  Each returns the function unchanged and records it; the endpoint is
built on first use (``notes.endpoint``, or serving the builder), by the same code as the class
style, so the two produce the same immutable ``Endpoint`` under the same rules.  After that the
builder is closed: a late decorator would change nothing that is served, so it is refused.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Sequence
from typing import Any, TypedDict, TypeVar, Unpack, overload

from mcpkit.errors import ConfigurationError
from mcpkit.model._apps import AppResource, AppTool
from mcpkit.model._completion import CompletionHandler
from mcpkit.model._content import Annotations, Icon
from mcpkit.model._decorators import (
    EndpointOptions,
    Member,
    build_endpoint,
    prompt,
    resource,
    resource_list,
    tool,
)
from mcpkit.model._endpoint import Endpoint, Lifespan
from mcpkit.model._implementation import CachePolicy
from mcpkit.model._input import InputRequestDeclaration, RequestStateMode
from mcpkit.model._method_adapters import OPERATION_ATTRIBUTE, Target
from mcpkit.model._revision import Revision
from mcpkit.model._skills import SkillAccessPolicy, SkillRegistration
from mcpkit.model._tasks import TaskSupport
from mcpkit.model._tool_annotations import ToolAnnotations

__all__ = ["EndpointBuilder"]

_F = TypeVar("_F", bound=Callable[..., object])


class ToolOptions(TypedDict, total=False):
    """The keywords of ``@tool`` (see :func:`mcpkit.tool`)."""

    name: str | None
    revisions: Collection[Revision] | None
    title: str | None
    description: str | None
    annotations: ToolAnnotations | None
    icons: Sequence[Icon]
    rate_limiter: str | None
    mirror_structured_content: bool
    read_only: bool | None
    destructive: bool | None
    idempotent: bool | None
    open_world: bool | None
    input_requests: Sequence[InputRequestDeclaration]
    request_state_mode: RequestStateMode | None
    task_support: TaskSupport
    app: AppTool | None
    scopes: Collection[str]


class PromptOptions(TypedDict, total=False):
    """The keywords of ``@prompt`` (see :func:`mcpkit.prompt`)."""

    name: str | None
    revisions: Collection[Revision] | None
    title: str | None
    description: str | None
    icons: Sequence[Icon]
    completions: dict[str, CompletionHandler]
    input_requests: Sequence[InputRequestDeclaration]
    request_state_mode: RequestStateMode | None
    scopes: Collection[str]


class ResourceOptions(TypedDict, total=False):
    """The keywords of ``@resource`` besides ``uri`` (see :func:`mcpkit.resource`)."""

    name: str | None
    revisions: Collection[Revision] | None
    title: str | None
    description: str | None
    mime_type: str | None
    size: int | None
    icons: Sequence[Icon]
    annotations: Annotations | None
    completions: dict[str, CompletionHandler]
    input_requests: Sequence[InputRequestDeclaration]
    request_state_mode: RequestStateMode | None
    app: AppResource | None
    scopes: Collection[str]


def _no_instance(cls: type[Any]) -> object:  # pragma: no cover - a function has no class
    raise AssertionError("a plain function needs no instance")


class EndpointBuilder:
    """An endpoint written as functions::

        notes = EndpointBuilder("notes", version="1.0.0")

        @notes.tool
        def add(text: str) -> str:
            '''Remember a note.'''
            ...

    ``name`` and ``version`` are the server's ``Implementation``; ``path`` defaults to
    ``/mcp``; every other keyword is the ``@endpoint`` option of that name (``revisions``
    defaults to every revision the operations allow, ``lifespan`` gives handlers their
    ``ctx.state``).  Serve it like an endpoint: ``Server(notes)``, ``mcpkit serve FILE``.
    """

    __slots__ = ("_built", "_members", "_options", "_where")

    def __init__(
        self,
        name: str,
        *,
        version: str,
        path: str = "/mcp",
        revisions: Collection[Revision] | None = None,
        title: str | None = None,
        description: str | None = None,
        website_url: str | None = None,
        icons: Sequence[Icon] = (),
        instructions: str | None = None,
        session_revisions: Collection[Revision] = frozenset(),
        listen: bool = False,
        resource_list_cache: CachePolicy | None = None,
        resource_template_list_cache: CachePolicy | None = None,
        lifespan: Lifespan | None = None,
        skills: Sequence[SkillRegistration] = (),
        skill_access: SkillAccessPolicy | None = None,
    ) -> None:
        self._options = EndpointOptions(
            path=path, name=name, version=version, revisions=revisions, title=title,
            description=description, website_url=website_url, icons=icons,
            instructions=instructions, session_revisions=session_revisions, listen=listen,
            resource_list_cache=resource_list_cache,
            resource_template_list_cache=resource_template_list_cache, lifespan=lifespan,
            skills=skills, skill_access=skill_access,
        )  # fmt: skip
        self._where = f"EndpointBuilder {name!r}" if isinstance(name, str) else "EndpointBuilder"
        self._members: list[Member] = []
        self._built: Endpoint | None = None

    def __repr__(self) -> str:
        state = "built" if self._built is not None else f"{len(self._members)} operations"
        return f"<{self._where} ({state})>"

    @property
    def endpoint(self) -> Endpoint:
        """The immutable endpoint, built (and every rule checked) on first use; the builder
        takes no operation after that."""
        if self._built is None:
            self._built = build_endpoint(self._where, self._options, self._members)
        return self._built

    def _add(self, decorator: str, function: object, apply: Callable[[Any], object]) -> None:
        if self._built is not None:
            raise ConfigurationError(
                f"{self._where}: the endpoint is already built (it was served or read), so "
                f"@{decorator} on {getattr(function, '__qualname__', 'this')} would change "
                "nothing; declare every operation before serving"
            )
        if not inspect.isfunction(function):
            raise ConfigurationError(
                f"{self._where}: @{decorator} decorates a function, not {type(function).__name__}"
            )
        apply(function)
        site = f"{self._where}, function {function.__qualname__!r}"
        spec = function.__dict__[OPERATION_ATTRIBUTE]
        self._members.append(Member(site, spec, Target(None, _no_instance, function, site)))

    def _decorate(
        self, decorator: str, apply: Callable[[Any], object], function: _F | None
    ) -> _F | Callable[[_F], _F]:
        def record(target: _F) -> _F:
            self._add(decorator, target, apply)
            return target

        return record if function is None else record(function)

    @overload
    def tool(self, function: _F, /) -> _F: ...
    @overload
    def tool(self, /, **options: Unpack[ToolOptions]) -> Callable[[_F], _F]: ...

    def tool(
        self, function: _F | None = None, /, **options: Unpack[ToolOptions]
    ) -> _F | Callable[[_F], _F]:
        """``@builder.tool`` or ``@builder.tool(...)``: :func:`mcpkit.tool` on a function."""
        return self._decorate("tool", tool(**options), function)

    @overload
    def prompt(self, function: _F, /) -> _F: ...
    @overload
    def prompt(self, /, **options: Unpack[PromptOptions]) -> Callable[[_F], _F]: ...

    def prompt(
        self, function: _F | None = None, /, **options: Unpack[PromptOptions]
    ) -> _F | Callable[[_F], _F]:
        """``@builder.prompt`` or ``@builder.prompt(...)``: :func:`mcpkit.prompt` on a
        function."""
        return self._decorate("prompt", prompt(**options), function)

    def resource(self, uri: str, /, **options: Unpack[ResourceOptions]) -> Callable[[_F], _F]:
        """``@builder.resource("notes://{id}")``: :func:`mcpkit.resource` on a function."""

        apply = resource(uri, **options)

        def record(function: _F) -> _F:
            self._add("resource", function, apply)
            return function

        return record

    @overload
    def resource_list(self, function: _F, /) -> _F: ...
    @overload
    def resource_list(
        self, /, *, revisions: Collection[Revision] | None = None
    ) -> Callable[[_F], _F]: ...

    def resource_list(
        self, function: _F | None = None, /, *, revisions: Collection[Revision] | None = None
    ) -> _F | Callable[[_F], _F]:
        """``@builder.resource_list``: :func:`mcpkit.resource_list` on a function."""
        return self._decorate("resource_list", resource_list(revisions=revisions), function)
