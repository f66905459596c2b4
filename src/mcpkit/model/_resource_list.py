"""What ``resources/list`` is made of: descriptors, custom pages and the application's own list
handler.

``ResourceDescriptor`` is one entry, the protocol's ``Resource``: an exact registration's static
description, and what an application's list handler returns.  When an endpoint has a
``ResourceListRegistration``, that handler alone builds every page, in its own order,
with its own cursors; static registrations are never merged in, and the server checks that
every listed URI is reachable on that endpoint and revision.

Descriptors and pages are values built while serving, so their refusals are
``InvalidValueError("Class.field: rule")``, never showing the value; the list registration is
configuration, so its refusals are ``ConfigurationError``.  ``to_json()`` is the newest
revision's full wire form; projecting it (no icons on 2025-06-18, ``resultType`` and cache
hints on 2026-07-28) is ``mcpkit.protocol``'s.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from dataclasses import KW_ONLY, dataclass
from typing import ClassVar, Final, TypeAlias

from mcpkit.errors import InvalidValueError
from mcpkit.json import JsonObject, string

# From the package: the module that defines annotations and icons may move.
from mcpkit.model import Annotations, Icon
from mcpkit.model._checks import (
    OPTIONAL_MEDIA_TYPE,
    OPTIONAL_TEXT,
    Checks,
    absolute_uri,
    byte_size,
    instance_of,
    optional,
    sequence_of,
    validate,
)
from mcpkit.model._content import icon_tuple
from mcpkit.model._context import InvocationFeatures, RequestContext
from mcpkit.model._handlers import Registration, check_handler, identify
from mcpkit.model._revision import Revision, wires

__all__ = [
    "ResourceDescriptor",
    "ResourceListHandler",
    "ResourceListPage",
    "ResourceListRegistration",
    "catalog_entry",
]


def _name(value: str) -> str:
    name = string(value)
    if not name:
        raise InvalidValueError("must not be empty")
    return name


def catalog_entry(
    members: dict[str, object],
    *,
    title: str | None,
    description: str | None,
    mime_type: str | None,
    size: int | None,
    icons: tuple[Icon, ...],
    annotations: Annotations | None,
) -> JsonObject:
    """A ``Resource`` or ``ResourceTemplate``: ``members`` (the URI or template and the name),
    then the optional members that are present, in the schema's order (``icons`` only when
    there is at least one)."""
    optional_members = {
        "title": title,
        "description": description,
        "mimeType": mime_type,
        "size": size,
        "icons": [icon.to_json() for icon in icons] or None,
        "annotations": None if annotations is None else annotations.to_json(),
    }
    members.update((key, value) for key, value in optional_members.items() if value is not None)
    return JsonObject(members)


@dataclass(frozen=True, slots=True)
class ResourceDescriptor:
    """One ``resources/list`` entry: the protocol's ``Resource``.

    ``uri`` is an absolute URI kept unnormalised; ``name`` is non-empty (a catalog entry a
    client cannot name is useless); ``size`` is the raw size in bytes, when known.  Text is
    well-formed and kept exactly.
    """

    uri: str
    name: str
    _: KW_ONLY
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    icons: tuple[Icon, ...] = ()
    annotations: Annotations | None = None

    _CHECKS: ClassVar[Checks] = (
        ("uri", absolute_uri),
        ("name", _name),
        ("title", OPTIONAL_TEXT),
        ("description", OPTIONAL_TEXT),
        ("mime_type", OPTIONAL_MEDIA_TYPE),
        ("size", optional(byte_size)),
        ("icons", icon_tuple),
        ("annotations", optional(instance_of((Annotations,), "must be an Annotations"))),
    )

    def __post_init__(self) -> None:
        validate(self)

    def to_json(self) -> JsonObject:
        """``uri`` and ``name``, then ``title``, ``description``, ``mimeType``, ``size``,
        ``icons`` and ``annotations`` when present."""
        return catalog_entry(
            {"uri": self.uri, "name": self.name},
            title=self.title,
            description=self.description,
            mime_type=self.mime_type,
            size=self.size,
            icons=self.icons,
            annotations=self.annotations,
        )


DESCRIPTOR_OPTIONS: Final[Checks] = ResourceDescriptor._CHECKS[1:]
"""The checks of everything but the URI, which a registration checks under its own rules."""


@dataclass(frozen=True, slots=True, repr=False)
class ResourceListPage:
    """One page of an application-owned ``resources/list``: descriptors in the handler's order
    and the cursor of the next page, if any.

    An empty ``next_cursor`` (``""``) is a cursor, distinct from ``None`` (no more pages).  The
    cursor is opaque to mcpkit; its integrity, expiry and authorisation binding are the
    application's, and its size is bounded by the server.  ``repr`` shows neither the
    descriptors nor the cursor, because reprs end up in logs.
    """

    resources: tuple[ResourceDescriptor, ...]
    next_cursor: str | None = None

    _CHECKS: ClassVar[Checks] = (
        (
            "resources",
            lambda value: sequence_of(
                value, ResourceDescriptor, "every item must be a ResourceDescriptor"
            ),
        ),
        ("next_cursor", OPTIONAL_TEXT),
    )

    def __post_init__(self) -> None:
        validate(self)

    def to_json(self) -> JsonObject:
        """The ``ListResourcesResult`` body: ``resources``, and ``nextCursor`` when set."""
        members: dict[str, object] = {
            "resources": [resource.to_json() for resource in self.resources]
        }
        if self.next_cursor is not None:
            members["nextCursor"] = self.next_cursor
        return JsonObject(members)

    def __repr__(self) -> str:
        more = "None" if self.next_cursor is None else f"<{len(self.next_cursor)} chars>"
        return f"ResourceListPage(<{len(self.resources)} resources>, next_cursor={more})"


ResourceListHandler: TypeAlias = Callable[
    [RequestContext, str | None, InvocationFeatures],
    ResourceListPage | Awaitable[ResourceListPage],
]
"""``(ctx, cursor, features)`` to a ``ResourceListPage``, directly or awaited: ``cursor`` is
``None`` for the first page, else exactly what the client sent (``""`` included)."""


class ResourceListRegistration(Registration):
    """An application-owned ``resources/list`` handler with its own revisions.

    ``revisions`` (a non-empty set of ``Revision``) is stored as a ``frozenset`` and must
    be a subset of the endpoint's; ``is_async`` says whether to await ``handler``, which must
    accept ``(ctx, cursor, features)``.  Immutable; equality is identity.
    """

    __slots__ = ("handler", "is_async", "revisions")

    revisions: frozenset[Revision]
    handler: ResourceListHandler
    is_async: bool

    def __init__(self, *, revisions: Collection[Revision], handler: ResourceListHandler) -> None:
        owner = identify("resource list handler", revisions)
        is_async = check_handler(owner, handler, "handler", ("ctx", "cursor", "features"))
        object.__setattr__(self, "revisions", owner.revisions)
        object.__setattr__(self, "handler", handler)
        object.__setattr__(self, "is_async", is_async)

    def __repr__(self) -> str:
        return f"<ResourceListRegistration [{wires(self.revisions)}]>"
