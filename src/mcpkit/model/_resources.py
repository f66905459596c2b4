"""Resource registrations: exact URIs and RFC 6570 level 1 templates.

A resource is either exact (one absolute URI) or a template (parsed by ``UriTemplate``); the
endpoint routes exact URIs before templates and refuses duplicate URIs and templates
and overlapping templates.  A template's variables reach the handler as exact,
decoded strings: converting and validating them is the handler's job.

Everything a resource publishes is decided here, once: ``definition()``
is its full wire catalog entry, a ``Resource`` (an exact resource's ``descriptor``) or a
``ResourceTemplate``.  Dropping icons for 2025-06-18 is ``mcpkit.protocol``'s projection.
Errors are ``ConfigurationError`` naming the resource and its revisions; the endpoint adds its
path.  Descriptors, custom pages and the custom list handler live in ``_resource_list`` and are
re-exported here, so this module offers the whole of the resources surface.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any, ClassVar, Final, Generic, ParamSpec, TypeAlias, overload

from mcpkit.errors import ConfigurationError, InvalidValueError
from mcpkit.json import JsonObject

# From the package: the module that defines annotations and icons may move.
from mcpkit.model import Annotations, Icon
from mcpkit.model._apps import AppResource, check_resource_app
from mcpkit.model._checks import absolute_uri
from mcpkit.model._completion import NO_COMPLETIONS, CompletionHandler, check_completions
from mcpkit.model._context import InvocationFeatures, RequestContext
from mcpkit.model._handlers import (
    MultiRoundRegistration,
    Operation,
    Owner,
    check_handler,
    check_multi_round,
    check_options,
    identify,
    show,
)
from mcpkit.model._input import InputRequestDeclaration, RequestStateMode
from mcpkit.model._outputs import ResourceOutput
from mcpkit.model._resource_list import (
    DESCRIPTOR_OPTIONS,
    ResourceDescriptor,
    ResourceListHandler,
    ResourceListPage,
    ResourceListRegistration,
    catalog_entry,
)
from mcpkit.model._results import CompleteResult, InputRequiredResult
from mcpkit.model._revision import Revision, wires
from mcpkit.model._scopes import checked_scopes
from mcpkit.model._templates import UriTemplate, is_template

__all__ = [
    "MAX_RESOURCE_URI_CHARS",
    "ResourceDescriptor",
    "ResourceHandler",
    "ResourceKind",
    "ResourceListHandler",
    "ResourceListPage",
    "ResourceListRegistration",
    "ResourceRegistration",
    "TemplateHandler",
]

MAX_RESOURCE_URI_CHARS: Final = 1_048_576
"""Soklet's ceiling for a programmatic exact resource URI (ASCII, so characters are bytes)."""
_P = ParamSpec("_P")

ResourceResult: TypeAlias = ResourceOutput | CompleteResult | InputRequiredResult
ResourceHandler: TypeAlias = Callable[
    [RequestContext, InvocationFeatures], ResourceResult | Awaitable[ResourceResult]
]
"""An exact resource's handler: ``(ctx, features)`` to a ``ResourceOutput``, a
``CompleteResult`` carrying one (to add result ``_meta``) or a 2026-07-28
``InputRequiredResult``; directly or awaited."""
TemplateHandler: TypeAlias = Callable[
    [RequestContext, Mapping[str, str], InvocationFeatures],
    ResourceResult | Awaitable[ResourceResult],
]
"""A template's handler: ``(ctx, variables, features)``, the decoded variables by name."""


class ResourceKind(enum.Enum):
    """How a registration is matched against a ``resources/read`` URI."""

    EXACT = "exact"
    """One absolute URI, compared exactly (routed first)."""
    TEMPLATE = "template"
    """An RFC 6570 level 1 template whose variables the handler receives."""


def _exact_uri(owner: Owner, uri: str) -> str:
    """An absolute, ASCII URI without braces, at most 1,048,576 characters (Soklet's
    programmatic ceiling), kept exactly as declared."""
    try:
        uri = absolute_uri(uri)
    except InvalidValueError as error:
        raise owner.fail(f"uri: {error.rule}") from None
    if is_template(uri):
        raise owner.fail(
            "uri contains '{' or '}', which no URI may: register a template with "
            "ResourceRegistration.template"
        )
    if not uri.isascii():
        raise owner.fail("uri must be ASCII; percent-encode non-ASCII characters")
    if len(uri) > MAX_RESOURCE_URI_CHARS:
        raise owner.fail(f"uri is over {MAX_RESOURCE_URI_CHARS} characters")
    return uri


def _descriptor_options(
    resource: Operation,
    name: object,
    title: object,
    description: object,
    mime_type: object,
    size: object,
    icons: object,
    annotations: object,
) -> dict[str, Any]:
    """The options a registration shares with its descriptor, under the descriptor's rules (a
    template passes no ``size``)."""
    values = {
        "name": name,
        "title": title,
        "description": description,
        "mime_type": mime_type,
        "size": size,
        "icons": icons,
        "annotations": annotations,
    }
    return check_options(resource, DESCRIPTOR_OPTIONS, values)


def _new_template(
    *,
    uri_template: str,
    name: str,
    revisions: Collection[Revision],
    handler: TemplateHandler,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    icons: Sequence[Icon] = (),
    annotations: Annotations | None = None,
    completions: Mapping[str, CompletionHandler] = NO_COMPLETIONS,
    input_requests: Sequence[InputRequestDeclaration] = (),
    request_state_mode: RequestStateMode | None = None,
    scopes: Collection[str] = (),
) -> ResourceRegistration:
    """Resources matching an RFC 6570 level 1 template; ``handler(ctx, variables, features)``
    reads one, given the decoded variables by name.

    Rules, in order: the template parses (``UriTemplate.parse``: level 1 only, ASCII literals,
    bounded size; its own ``ConfigurationError`` names it); the revisions; the handler
    accepts ``(ctx, variables, features)``; the options have their types and well-formed text,
    ``name`` non-empty; every ``completions`` key names a variable of the template; the
    multi-round declarations and the ``scopes`` (as for ``exact``).  Give ``mime_type`` only
    when every match shares it.
    """
    parsed = UriTemplate.parse(uri_template)
    resource = identify(f"resource template {show(parsed.text)}", revisions)
    is_async = check_handler(resource, handler, "handler", ("ctx", "variables", "features"))
    options = _descriptor_options(
        resource, name, title, description, mime_type, None, icons, annotations
    )
    handlers, coroutines = check_completions(
        resource, completions, parsed.variables, "template variable"
    )
    multi_round = check_multi_round(resource, input_requests, request_state_mode)
    required_scopes = checked_scopes(scopes, str(resource))
    entry = {"uriTemplate": parsed.text, "name": options.pop("name")}
    definition = catalog_entry(entry, **options)
    return ResourceRegistration._build(
        {"kind": ResourceKind.TEMPLATE, "uri": None, "_template": parsed, "name": entry["name"],
         "revisions": resource.revisions, "handler": handler, "is_async": is_async, **options,
         "descriptor": None, "app": None, "completions": handlers,
         "async_completions": coroutines,
         **multi_round, "scopes": required_scopes, "_definition": definition}
    )  # fmt: skip


class _FactoryOrTemplate(Generic[_P]):
    """``ResourceRegistration.template`` means two things in the contract: read on the class it
    is the factory (``ResourceRegistration.template(uri_template=...)``), read on an instance
    it is the parsed ``UriTemplate`` (``None`` for an exact resource).  A slot cannot share a
    name with a method, so this descriptor tells the two reads apart; both are fully typed."""

    __slots__ = ("_factory",)

    def __init__(self, factory: Callable[_P, ResourceRegistration]) -> None:
        self._factory = factory

    def __set_name__(self, owner: type[object], name: str) -> None:
        # ``help()`` and tracebacks show the factory under the name it is called by.
        self._factory.__name__ = name
        self._factory.__qualname__ = f"{owner.__name__}.{name}"

    @overload
    def __get__(
        self, instance: None, owner: type[object]
    ) -> Callable[_P, ResourceRegistration]: ...

    @overload
    def __get__(
        self, instance: ResourceRegistration, owner: type[object]
    ) -> UriTemplate | None: ...

    def __get__(
        self, instance: ResourceRegistration | None, owner: type[object]
    ) -> Callable[_P, ResourceRegistration] | UriTemplate | None:
        if instance is None:
            return self._factory
        return instance._template


class ResourceRegistration(MultiRoundRegistration):
    """An immutable exact or template resource: its route, name, revisions, handler, display
    options and (templates only) the completers of its variables.

    Build one with :meth:`exact` or :meth:`template`.  ``kind`` says which; ``uri`` is set for
    an exact resource and ``template`` (the parsed ``UriTemplate``) for a template, the other
    being ``None``.  An exact resource's ``descriptor`` is its ``resources/list`` entry;
    templates have none, and no ``size``.  ``handler`` is called as ``handler(ctx, features)``
    (exact) or ``handler(ctx, variables, features)`` (template); ``is_async`` says whether to
    await it.  ``completions`` and ``async_completions`` are as on ``PromptRegistration``
    (always empty for an exact resource, which has no variables), and so are the multi-round
    declarations (``input_requests``, ``request_state_mode``, ``declared_kinds``,
    ``required_kinds``).  Equality is identity.
    """

    __slots__ = (
        "_definition", "_template", "annotations", "app", "async_completions", "completions",
        "declared_kinds", "description", "descriptor", "handler", "icons", "input_requests",
        "is_async", "kind", "mime_type", "name", "request_state_mode", "required_kinds",
        "revisions", "scopes", "size", "title", "uri",
    )  # fmt: skip
    _FACTORIES: ClassVar[str] = "ResourceRegistration.exact or ResourceRegistration.template"

    kind: ResourceKind
    uri: str | None
    name: str
    revisions: frozenset[Revision]
    handler: ResourceHandler | TemplateHandler
    is_async: bool
    title: str | None
    description: str | None
    mime_type: str | None
    size: int | None
    icons: tuple[Icon, ...]
    annotations: Annotations | None
    descriptor: ResourceDescriptor | None
    app: AppResource | None
    """An exact ``ui://`` resource's MCP App declaration, 2026-07-28 only."""
    completions: Mapping[str, CompletionHandler]
    async_completions: frozenset[str]
    scopes: frozenset[str]
    """OAuth scopes a caller's access token must all carry to read this resource (any URI a
    template matches); empty means no scope is required.  Enforced by the server's resource
    server (``Server(auth=...)``); list results hide entries a caller may not use."""
    _template: UriTemplate | None
    _definition: JsonObject

    template = _FactoryOrTemplate(_new_template)

    def __repr__(self) -> str:
        route = self.uri if self.template is None else self.template.text
        return f"<ResourceRegistration {self.kind.value} {route} [{wires(self.revisions)}]>"

    @classmethod
    def _build(cls, values: dict[str, Any]) -> ResourceRegistration:
        registration: ResourceRegistration = cls._create(values)
        return registration

    @classmethod
    def exact(
        cls,
        *,
        uri: str,
        name: str,
        revisions: Collection[Revision],
        handler: ResourceHandler,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        icons: Sequence[Icon] = (),
        annotations: Annotations | None = None,
        input_requests: Sequence[InputRequestDeclaration] = (),
        request_state_mode: RequestStateMode | None = None,
        app: AppResource | None = None,
        scopes: Collection[str] = (),
    ) -> ResourceRegistration:
        """A resource at one exact URI; ``handler(ctx, features)`` reads it.

        Rules, in order: the URI is a ``str``; the revisions; the URI is absolute,
        ASCII, brace-free and at most 1,048,576 characters; the handler accepts ``(ctx,
        features)``; the options have their types and well-formed text, ``name`` non-empty;
        the multi-round declarations: a list or tuple of ``InputRequestDeclaration``, one per
        kind, and a ``RequestStateMode`` (``None`` is ``NONE``); declaring a request or a mode
        other than ``NONE`` selects only 2026-07-28; ``app`` (an ``AppResource``) needs a
        ``ui://`` URI and only 2026-07-28, and makes ``mime_type`` the App's; ``scopes`` is a
        list, tuple, set or frozenset of RFC 6749 scope-tokens (``checked_scopes``).
        """
        if not isinstance(uri, str):
            raise ConfigurationError("a resource uri must be a str")
        resource = identify(f"resource {show(uri)}", revisions)
        uri = _exact_uri(resource, uri)
        is_async = check_handler(resource, handler, "handler", ("ctx", "features"))
        app, mime_type = check_resource_app(resource, resource.revisions, uri, app, mime_type)
        options = _descriptor_options(
            resource, name, title, description, mime_type, size, icons, annotations
        )
        multi_round = check_multi_round(resource, input_requests, request_state_mode)
        required_scopes = checked_scopes(scopes, str(resource))
        descriptor = ResourceDescriptor(uri, **options)
        return cls._build(
            {"kind": ResourceKind.EXACT, "uri": uri, "_template": None,
             "revisions": resource.revisions, "handler": handler, "is_async": is_async, **options,
             "descriptor": descriptor, "app": app, "completions": NO_COMPLETIONS,
             "async_completions": frozenset(), **multi_round, "scopes": required_scopes,
             "_definition": descriptor.to_json()}
        )  # fmt: skip

    def definition(self) -> JsonObject:
        """The catalog entry, built once: for an exact resource the wire ``Resource`` of
        ``resources/list`` (its descriptor's ``to_json()``); for a template the wire
        ``ResourceTemplate`` of ``resources/templates/list``: ``uriTemplate`` and ``name``, then
        ``title``, ``description``, ``mimeType``, ``icons`` and ``annotations`` when present."""
        return self._definition
