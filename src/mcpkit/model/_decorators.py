"""Decorator authoring: ``@endpoint`` on a class, ``@tool``, ``@prompt``, ``@resource`` and
``@resource_list`` on its methods.

Soklet's annotation processor validates annotated classes and writes immutable descriptors at
compile time; the runtime only loads those descriptors and never reflects over methods to build
a catalog.  The Python analogue keeps the same two halves:

* a method decorator only attaches a frozen descriptor (a ``*Spec``) to the function and returns
  the function itself, so the method keeps its exact type for type checkers and can still be
  called directly.  Nothing is registered anywhere (no global registry, no import-time side
  effect);
* the class decorator runs once, when the class statement finishes: it reads the class's own
  ``__dict__`` in definition order (never ``dir()``, never base classes), turns each decorated
  method into the same registration the programmatic factories build, sorts them
  and builds the whole ``Endpoint``, so every construction rule fails at class definition. The
  result is attached as ``cls.__mcp_endpoint__``, which is all ``EndpointRegistry.from_classes``
  reads.

How a method becomes a handler (parameters, framework injection, the instance provider) lives in
``_method_adapters``.  As in Soklet's annotations, an empty string means "not supplied" for every
optional text element.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar, overload

from mcpkit.errors import ConfigurationError, InvalidValueError
from mcpkit.model._apps import AppResource, AppTool
from mcpkit.model._completion import NO_COMPLETIONS, CompletionHandler
from mcpkit.model._content import Annotations, Icon
from mcpkit.model._endpoint import Endpoint, Lifespan
from mcpkit.model._implementation import CachePolicy, Implementation
from mcpkit.model._input import InputRequestDeclaration, RequestStateMode
from mcpkit.model._method_adapters import (
    OPERATION_ATTRIBUTE,
    Target,
    UriParam,
    prompt_registration,
    resource_list_registration,
    resource_registration,
    tool_registration,
)
from mcpkit.model._prompts import PromptRegistration
from mcpkit.model._registry import ENDPOINT_ATTRIBUTE
from mcpkit.model._resource_list import ResourceListRegistration
from mcpkit.model._resources import ResourceRegistration
from mcpkit.model._revision import Revision
from mcpkit.model._skills import SkillAccessPolicy, SkillRegistration
from mcpkit.model._tasks import TaskSupport
from mcpkit.model._tool_annotations import ToolAnnotations
from mcpkit.model._tools import ToolRegistration

__all__ = [
    "PromptSpec",
    "ResourceListSpec",
    "ResourceSpec",
    "ToolSpec",
    "UriParam",
    "endpoint",
    "prompt",
    "resource",
    "resource_list",
    "tool",
]

_F = TypeVar("_F", bound=Callable[..., object])
_C = TypeVar("_C", bound=type)


def _text(value: str | None) -> str | None:
    """``""`` is "not supplied" for optional text, as in Soklet's annotations."""
    return None if value == "" else value


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec:
    """What ``@tool`` recorded; ``revisions=None`` inherits the endpoint's."""

    name: str
    revisions: Collection[Revision] | None
    title: str | None
    description: str | None
    annotations: ToolAnnotations | None
    icons: Sequence[Icon]
    rate_limiter: str | None
    mirror_structured_content: bool
    input_requests: Sequence[InputRequestDeclaration]
    request_state_mode: RequestStateMode | None
    task_support: TaskSupport = TaskSupport.FORBIDDEN
    app: AppTool | None = None
    scopes: Collection[str] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptSpec:
    """What ``@prompt`` recorded."""

    name: str
    revisions: Collection[Revision] | None
    title: str | None
    description: str | None
    icons: Sequence[Icon]
    completions: Mapping[str, CompletionHandler]
    input_requests: Sequence[InputRequestDeclaration]
    request_state_mode: RequestStateMode | None
    scopes: Collection[str] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceSpec:
    """What ``@resource`` recorded: an exact URI, or a template when ``uri`` has variables."""

    uri: str
    name: str
    revisions: Collection[Revision] | None
    title: str | None
    description: str | None
    mime_type: str | None
    size: int | None
    icons: Sequence[Icon]
    annotations: Annotations | None
    completions: Mapping[str, CompletionHandler]
    input_requests: Sequence[InputRequestDeclaration]
    request_state_mode: RequestStateMode | None
    app: AppResource | None = None
    scopes: Collection[str] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceListSpec:
    """What ``@resource_list`` recorded."""

    revisions: Collection[Revision] | None


Spec = ToolSpec | PromptSpec | ResourceSpec | ResourceListSpec


def _attach(spec: Spec, decorator: str) -> Callable[[_F], _F]:
    """The method decorator: check the target, attach ``spec``, return the function itself."""

    def apply(function: _F) -> _F:
        if not inspect.isfunction(function):
            raise ConfigurationError(
                f"@{decorator} decorates a method (a function in a class body), not "
                f"{type(function).__name__}"
            )
        previous = function.__dict__.get(OPERATION_ATTRIBUTE)
        if previous is not None:
            raise ConfigurationError(
                f"@{decorator} on {function.__qualname__}: the method is already a "
                f"{type(previous).__name__.removesuffix('Spec').lower()}; one method serves "
                "one operation"
            )
        setattr(function, OPERATION_ATTRIBUTE, spec)
        return function

    return apply


def _named(
    function: _F | None,
    decorator: str,
    spec_for: Callable[[str, str | None], Spec],
    name: str | None,
    description: str | None,
) -> _F | Callable[[_F], _F]:
    """A decorator used bare (``@tool``) or called (``@tool(...)``): the operation's name is
    the method's unless given, and its description the method's docstring unless given."""

    apply: Callable[[_F], _F] = _applier(decorator, spec_for, name, description)
    return apply if function is None else apply(function)


def _applier(
    decorator: str, spec_for: Callable[[str, str | None], Spec], name: str | None,
    description: str | None,
) -> Callable[[_F], _F]:  # fmt: skip
    """The decorator proper: names and describes the function, then attaches the spec."""

    def apply(method: _F) -> _F:
        if not inspect.isfunction(method):
            return _attach(spec_for(name or "", description), decorator)(method)  # refused there
        chosen = method.__name__ if name is None else name
        documented = inspect.getdoc(method) if description is None else description
        return _attach(spec_for(chosen, _text(documented)), decorator)(method)

    return apply


@overload
def tool(function: _F, /) -> _F: ...


@overload
def tool(
    *,
    name: str | None = None,
    revisions: Collection[Revision] | None = None,
    title: str | None = None,
    description: str | None = None,
    annotations: ToolAnnotations | None = None,
    icons: Sequence[Icon] = (),
    rate_limiter: str | None = None,
    mirror_structured_content: bool = True,
    read_only: bool | None = None,
    destructive: bool | None = None,
    idempotent: bool | None = None,
    open_world: bool | None = None,
    input_requests: Sequence[InputRequestDeclaration] = (),
    request_state_mode: RequestStateMode | None = None,
    task_support: TaskSupport = TaskSupport.FORBIDDEN,
    app: AppTool | None = None,
    scopes: Collection[str] = (),
) -> Callable[[_F], _F]: ...


def tool(
    function: _F | None = None,
    /,
    *,
    name: str | None = None,
    revisions: Collection[Revision] | None = None,
    title: str | None = None,
    description: str | None = None,
    annotations: ToolAnnotations | None = None,
    icons: Sequence[Icon] = (),
    rate_limiter: str | None = None,
    mirror_structured_content: bool = True,
    read_only: bool | None = None,
    destructive: bool | None = None,
    idempotent: bool | None = None,
    open_world: bool | None = None,
    input_requests: Sequence[InputRequestDeclaration] = (),
    request_state_mode: RequestStateMode | None = None,
    task_support: TaskSupport = TaskSupport.FORBIDDEN,
    app: AppTool | None = None,
    scopes: Collection[str] = (),
) -> _F | Callable[[_F], _F]:
    """Mark a method as a tool: ``@tool`` or ``@tool(...)``.  Its name is the method's unless
    ``name`` is given, and its description the method's docstring unless ``description`` is.

    The method's business parameters become the input schema (a ``T | None`` or defaulted
    parameter is optional, ``Annotated[T, Arg(...)]`` renames and documents) and its
    return annotation the output schema.  A method returning an ``OperationResult`` (e.g.
    ``CompleteResult``) is an advanced tool and may declare ``input_requests`` (the kinds of
    input request it may emit, ``@McpMayRequestInput``) and a ``request_state_mode``.
    The hint keywords (``read_only``...) are shorthand for ``annotations=ToolAnnotations(...)``;
    giving both is refused.  ``task_support`` lets the server run a call as a task
    (``TaskSupport.OPTIONAL`` or ``REQUIRED``): the method is the same, run in the background.
    ``app`` (an ``AppTool``) ties the tool to an MCP App's ``ui://`` resource (2026-07-28).
    ``scopes`` (``scopes=["notes:write"]``) are the OAuth scopes a caller's access token must
    all carry to call the tool, enforced by ``Server(auth=...)``.
    """
    hints = (read_only, destructive, idempotent, open_world)
    if any(hint is not None for hint in hints):
        if annotations is not None:
            where = "@tool" if name is None else f"@tool {name!r}"
            raise ConfigurationError(
                f"{where}: give either annotations= or the hint keywords (read_only, "
                "destructive, idempotent, open_world), not both"
            )
        annotations = ToolAnnotations(
            read_only=read_only, destructive=destructive, idempotent=idempotent,
            open_world=open_world,
        )  # fmt: skip

    def spec_for(chosen: str, documented: str | None) -> ToolSpec:
        return ToolSpec(
            name=chosen,
            revisions=revisions,
            title=_text(title),
            description=documented,
            annotations=annotations,
            icons=icons,
            rate_limiter=_text(rate_limiter),
            mirror_structured_content=mirror_structured_content,
            input_requests=input_requests,
            request_state_mode=request_state_mode,
            task_support=task_support,
            app=app,
            scopes=scopes,
        )

    return _named(function, "tool", spec_for, name, description)


@overload
def prompt(function: _F, /) -> _F: ...


@overload
def prompt(
    *,
    name: str | None = None,
    revisions: Collection[Revision] | None = None,
    title: str | None = None,
    description: str | None = None,
    icons: Sequence[Icon] = (),
    completions: Mapping[str, CompletionHandler] = NO_COMPLETIONS,
    input_requests: Sequence[InputRequestDeclaration] = (),
    request_state_mode: RequestStateMode | None = None,
    scopes: Collection[str] = (),
) -> Callable[[_F], _F]: ...


def prompt(
    function: _F | None = None,
    /,
    *,
    name: str | None = None,
    revisions: Collection[Revision] | None = None,
    title: str | None = None,
    description: str | None = None,
    icons: Sequence[Icon] = (),
    completions: Mapping[str, CompletionHandler] = NO_COMPLETIONS,
    input_requests: Sequence[InputRequestDeclaration] = (),
    request_state_mode: RequestStateMode | None = None,
    scopes: Collection[str] = (),
) -> _F | Callable[[_F], _F]:
    """Mark a method as a prompt: ``@prompt`` or ``@prompt(...)``, named and described as
    ``@tool`` is.  Its business parameters are ``str`` (required) or ``str | None`` /
    defaulted (optional) prompt arguments; ``Annotated[str, Arg(name=, title=,
    description=)]`` publishes another name or documentation.  ``completions`` maps
    published argument names to completion handlers; ``input_requests`` and
    ``request_state_mode`` are its multi-round declarations; ``scopes`` the OAuth scopes a
    caller's access token must all carry to get it, as for ``@tool``."""

    def spec_for(chosen: str, documented: str | None) -> PromptSpec:
        return PromptSpec(
            name=chosen,
            revisions=revisions,
            title=_text(title),
            description=documented,
            icons=icons,
            completions=completions,
            input_requests=input_requests,
            request_state_mode=request_state_mode,
            scopes=scopes,
        )

    return _named(function, "prompt", spec_for, name, description)


def resource(
    uri: str,
    *,
    name: str | None = None,
    revisions: Collection[Revision] | None = None,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    size: int | None = None,
    icons: Sequence[Icon] = (),
    annotations: Annotations | None = None,
    completions: Mapping[str, CompletionHandler] = NO_COMPLETIONS,
    input_requests: Sequence[InputRequestDeclaration] = (),
    request_state_mode: RequestStateMode | None = None,
    app: AppResource | None = None,
    scopes: Collection[str] = (),
) -> Callable[[_F], _F]:
    """Mark a method as a resource: ``@resource("inventory://items/{sku}")``, exact when
    ``uri`` has no ``{variable}``, else a template whose variables reach ``str`` parameters of
    the same name (or ``Annotated[str, UriParam("sku")]``), exactly as decoded.  Named and
    described as ``@tool`` is.  The method returns a ``ResourceOutput``, or a ``str`` (text) or
    ``bytes`` (a blob) read under the requested URI with ``mime_type``.  ``input_requests``
    and ``request_state_mode`` are its multi-round declarations; ``app`` (an ``AppResource``)
    makes an exact ``ui://`` resource an MCP App's HTML (2026-07-28); ``scopes`` are the OAuth
    scopes a caller's access token must all carry to read it (any URI of a template), as for
    ``@tool``."""

    def spec_for(chosen: str, documented: str | None) -> ResourceSpec:
        return ResourceSpec(
            uri=uri,
            name=chosen,
            revisions=revisions,
            title=_text(title),
            description=documented,
            mime_type=_text(mime_type),
            size=size,
            icons=icons,
            annotations=annotations,
            completions=completions,
            input_requests=input_requests,
            request_state_mode=request_state_mode,
            app=app,
            scopes=scopes,
        )

    return _applier("resource", spec_for, name, description)


def resource_list(*, revisions: Collection[Revision] | None = None) -> Callable[[_F], _F]:
    """Mark the method that serves ``resources/list`` pages: one ``str | None`` business
    parameter (the cursor, ``None`` for the first page), returning a ``ResourceListPage``."""
    return _attach(ResourceListSpec(revisions=revisions), "resource_list")


@dataclass(frozen=True, slots=True, kw_only=True)
class EndpointOptions:
    """What ``@endpoint`` and ``EndpointBuilder`` take besides the operations (checked by
    :func:`build_endpoint` and the ``Endpoint`` constructor)."""

    path: str
    name: str
    version: str
    revisions: Collection[Revision] | None = None
    title: str | None = None
    description: str | None = None
    website_url: str | None = None
    icons: Sequence[Icon] = ()
    instructions: str | None = None
    tool_rate_limiter: str | None = None
    session_revisions: Collection[Revision] = frozenset()
    listen: bool = False
    resource_list_cache: CachePolicy | None = None
    resource_template_list_cache: CachePolicy | None = None
    lifespan: Lifespan | None = None
    skills: Sequence[SkillRegistration] = ()
    skill_access: SkillAccessPolicy | None = None


@dataclass(frozen=True, slots=True)
class Member:
    """One decorated function: where a refusal points (``method 'search'``), its descriptor
    and how it is called."""

    site: str
    spec: Spec
    target: Target


@dataclass(frozen=True, slots=True)
class _Collected:
    tools: list[ToolRegistration]
    prompts: list[PromptRegistration]
    resources: list[ResourceRegistration]
    resource_list: ResourceListRegistration | None


def _default_provider(cls: type[Any]) -> object:
    return cls()


def endpoint(
    *,
    path: str,
    name: str,
    version: str,
    revisions: Collection[Revision] | None = None,
    title: str | None = None,
    description: str | None = None,
    website_url: str | None = None,
    icons: Sequence[Icon] = (),
    instructions: str | None = None,
    tool_rate_limiter: str | None = None,
    session_revisions: Collection[Revision] = frozenset(),
    listen: bool = False,
    resource_list_cache: CachePolicy | None = None,
    resource_template_list_cache: CachePolicy | None = None,
    instance_provider: Callable[[type[Any]], object] | None = None,
    lifespan: Lifespan | None = None,
    skills: Sequence[SkillRegistration] = (),
    skill_access: SkillAccessPolicy | None = None,
) -> Callable[[_C], _C]:
    """Build the class's ``Endpoint`` now, from its decorated methods.

    ``path``, ``name`` and ``version`` are required.  ``revisions`` defaults to every revision
    the operations allow (:func:`build_endpoint`); the caches default to
    ``CachePolicy.PRIVATE_NO_CACHE``; ``session_revisions``, ``listen``, ``lifespan``,
    ``skills`` and ``skill_access`` are the ``Endpoint`` options of those names.
    ``instance_provider(cls)`` supplies the instance each invocation runs on (default
    ``cls()``); it is called per invocation, never while building or listing, and its
    instances are neither cached nor closed (state shared by every call belongs in the
    ``lifespan``, as ``ctx.state``).  Every refusal is a
    ``ConfigurationError`` (``SchemaError`` for types) naming the class, and the method and
    operation where one is at fault.
    """
    options = EndpointOptions(
        path=path, name=name, version=version, revisions=revisions, title=title,
        description=description, website_url=website_url, icons=icons,
        instructions=instructions, tool_rate_limiter=tool_rate_limiter,
        session_revisions=session_revisions, listen=listen,
        resource_list_cache=resource_list_cache,
        resource_template_list_cache=resource_template_list_cache, lifespan=lifespan,
        skills=skills, skill_access=skill_access,
    )  # fmt: skip

    def apply(cls: _C) -> _C:
        if not isinstance(cls, type):
            raise ConfigurationError(f"@endpoint decorates a class, not {type(cls).__name__}")
        where = f"@endpoint class {cls.__module__}.{cls.__qualname__}"
        if ENDPOINT_ATTRIBUTE in cls.__dict__:
            raise ConfigurationError(f"{where}: the class is already an endpoint")
        provider = _default_provider if instance_provider is None else instance_provider
        if not callable(provider):
            raise ConfigurationError(f"{where}: instance_provider must be callable as (cls)")
        setattr(
            cls, ENDPOINT_ATTRIBUTE, build_endpoint(where, options, _methods(cls, where, provider))
        )
        return cls

    return apply


def _methods(cls: type[Any], where: str, provider: Callable[[type[Any]], object]) -> list[Member]:
    """Every decorated method of ``cls`` itself, in definition order (never ``dir()``, never
    base classes)."""
    members: list[Member] = []
    for attribute, value in cls.__dict__.items():
        if isinstance(value, staticmethod | classmethod):
            if OPERATION_ATTRIBUTE in getattr(value.__func__, "__dict__", {}):
                raise ConfigurationError(
                    f"{where}, method {attribute!r}: an operation must be an instance method, "
                    f"not a {type(value).__name__}"
                )
            continue
        if not inspect.isfunction(value):
            continue
        spec = value.__dict__.get(OPERATION_ATTRIBUTE)
        if spec is not None:
            site = f"{where}, method {attribute!r}"
            members.append(Member(site, spec, Target(cls, provider, value, site)))
    return members


ALL_REVISIONS: Final = frozenset(Revision)


def build_endpoint(where: str, options: EndpointOptions, members: Sequence[Member]) -> Endpoint:
    """The ``Endpoint`` of decorated functions: each becomes the registration its programmatic
    factory would build, sorted by name or URI.

    With ``options.revisions`` left out, the endpoint serves every revision its operations
    allow: an operation that inherits its revisions selects all three unless it can only
    serve 2026-07-28 (it mirrors arguments into headers, runs only as a task, or returns a
    non-object), and one that may ask for input selects the 2025 revisions only among
    ``session_revisions``.  The endpoint then serves the revisions its operations select (all
    three when it has none).  Given revisions are taken as given: an operation that cannot
    serve one of them is refused, with the reason."""
    try:
        implementation = Implementation(
            options.name, options.version, title=_text(options.title),
            description=_text(options.description), website_url=_text(options.website_url),
            icons=tuple(options.icons),
        )  # fmt: skip
    except InvalidValueError as error:
        raise ConfigurationError(f"{where}: Implementation.{error.rule}") from None
    implicit = options.revisions is None
    served = ALL_REVISIONS if implicit else _served(where, options.revisions)
    sessions = _sessions(options.session_revisions)
    collected = _collect(members, served, sessions if implicit else None)
    revisions: Collection[Revision] = served
    if implicit:
        operations = (*collected.tools, *collected.prompts, *collected.resources)
        listing = () if collected.resource_list is None else (collected.resource_list,)
        chosen = {r for operation in (*operations, *listing) for r in operation.revisions}
        if options.listen is True or options.skills:
            chosen.add(Revision.V2026_07_28)
        revisions = (chosen | sessions) if chosen else ALL_REVISIONS
    try:
        return Endpoint(
            options.path, implementation, revisions,
            instructions=_text(options.instructions),
            tools=sorted(collected.tools, key=lambda t: t.name),
            prompts=sorted(collected.prompts, key=lambda p: p.name),
            resources=sorted(collected.resources, key=_resource_key),
            resource_list=collected.resource_list,
            resource_list_cache=_cache(options.resource_list_cache),
            resource_template_list_cache=_cache(options.resource_template_list_cache),
            tool_rate_limiter=_text(options.tool_rate_limiter),
            session_revisions=options.session_revisions,
            listen=options.listen,
            lifespan=options.lifespan,
            skills=options.skills,
            skill_access=options.skill_access,
        )  # fmt: skip
    except ConfigurationError as error:
        raise type(error)(f"{where}: {error}") from error


def _sessions(value: object) -> frozenset[Revision]:
    """The session revisions as far as defaults need them (the ``Endpoint`` checks them)."""
    if isinstance(value, Collection) and not isinstance(value, str | Mapping):
        return frozenset(revision for revision in value if isinstance(revision, Revision))
    return frozenset()


def _served(where: str, revisions: object) -> frozenset[Revision]:
    """The endpoint's revisions, needed before its operations: they inherit them."""
    if (
        isinstance(revisions, Collection)
        and not isinstance(revisions, str | Mapping)
        and revisions
        and all(isinstance(revision, Revision) for revision in revisions)
    ):
        return frozenset(revisions)
    raise ConfigurationError(f"{where}: revisions must be a non-empty set of Revision members")


def _cache(policy: CachePolicy | None) -> CachePolicy:
    return CachePolicy.PRIVATE_NO_CACHE if policy is None else policy


def _resource_key(registration: ResourceRegistration) -> str:
    """Resources and templates in code-point order of the URI or template text."""
    template = registration.template
    return str(registration.uri) if template is None else template.text


def _register(
    spec: Spec, target: Target, served: frozenset[Revision]
) -> ToolRegistration | PromptRegistration | ResourceRegistration | ResourceListRegistration:
    if isinstance(spec, ToolSpec):
        return tool_registration(target, spec, served)
    if isinstance(spec, PromptSpec):
        return prompt_registration(target, spec, served)
    if isinstance(spec, ResourceSpec):
        return resource_registration(target, spec, served)
    return resource_list_registration(target, spec, served)


_STATELESS_ONLY: Final = frozenset({Revision.V2026_07_28})


def _defaulted(
    spec: Spec, target: Target, served: frozenset[Revision], sessions: frozenset[Revision]
) -> ToolRegistration | PromptRegistration | ResourceRegistration | ResourceListRegistration:
    """An operation inheriting default revisions: every one it can serve (see
    :func:`build_endpoint`); when it can serve none, the refusal on 2026-07-28 (the revision
    with the fewest rules, so a 2025-only refusal never hides the real fault)."""
    if not isinstance(spec, ResourceListSpec) and (
        spec.input_requests or spec.request_state_mode is not None
    ):
        served = served & (_STATELESS_ONLY | sessions)
    try:
        return _register(spec, target, served)
    except ConfigurationError:
        if served == _STATELESS_ONLY:
            raise
    # What fails on 2025 alone (headers, tasks, a non-object output, an App) serves 2026.
    return _register(spec, target, _STATELESS_ONLY)


def _collect(
    members: Sequence[Member], served: frozenset[Revision], sessions: frozenset[Revision] | None
) -> _Collected:
    """Every member as a registration, in order; ``sessions`` is ``None`` unless the
    endpoint's revisions are defaulted."""
    collected = _Collected([], [], [], None)
    owners: dict[tuple[str, str], str] = {}  # (kind, name or URI) -> site, to refuse duplicates
    list_site: str | None = None
    for member in members:
        spec, site = member.spec, member.site
        try:
            if isinstance(spec, ResourceListSpec) and list_site is not None:
                raise ConfigurationError(
                    f"an endpoint has one @resource_list; {list_site.rpartition(', ')[2]} is "
                    "the first"
                )
            if sessions is None or spec.revisions is not None:
                registration = _register(spec, member.target, served)
            else:
                registration = _defaulted(spec, member.target, served, sessions)
        except ConfigurationError as error:
            raise type(error)(f"{site}: {error}") from error
        if isinstance(registration, ResourceListRegistration):
            list_site = site
            object.__setattr__(collected, "resource_list", registration)
            continue
        if isinstance(registration, ToolRegistration):
            key = ("tool", registration.name)
            collected.tools.append(registration)
        elif isinstance(registration, PromptRegistration):
            key = ("prompt", registration.name)
            collected.prompts.append(registration)
        else:
            key = ("resource", _resource_key(registration))
            collected.resources.append(registration)
        first = owners.setdefault(key, site)
        if first != site:
            raise ConfigurationError(
                f"{site}: {key[0]} {key[1]!r} is also declared by "
                f"{first.rpartition(', ')[2]}; names and URIs are unique within an endpoint"
            )
    return collected
