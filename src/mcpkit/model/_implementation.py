"""Who the server says it is, and how long clients may cache a catalog.

``Implementation`` is the server's self-description: the ``serverInfo`` of a 2025
``initialize`` result and the ``io.modelcontextprotocol/serverInfo`` member of 2026 result
``_meta``.  It is built once per endpoint, so every field is checked here and a value that
exists is one the protocol layer can write on any revision.  ``to_json()`` is the full,
revision-independent object; 2025-06-18 knows only ``name``, ``title`` and ``version``, and
cutting the rest off is ``mcpkit.protocol``'s projection, never a change to this value.

``CachePolicy`` is the ``ttlMs`` / ``cacheScope`` pair of a 2026 cacheable result.  The TTL
is capped at 2**53 - 1 so that every client, JavaScript ones included, reads the number
exactly; a larger hint has no meaning a client could act on.

A refusal raises ``InvalidValueError`` naming the field and the rule, never the value.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import ClassVar, Final, Literal

from mcpkit.errors import InvalidValueError
from mcpkit.json import JsonObject, string
from mcpkit.model import Icon  # from the package: the module that defines Icon may move
from mcpkit.model._checks import OPTIONAL_TEXT, Checks, absolute_uri, exact_int, optional, validate
from mcpkit.model._content import icon_tuple

__all__ = ["CachePolicy", "CacheScope", "Implementation"]

CacheScope = Literal["public", "private"]
"""``public``: no caller-specific data, shareable across authorization contexts by gateways;
``private``: reuse only within the same authorization context."""

_SCOPES: Final = ("public", "private")


def _non_empty(value: str) -> str:
    text = string(value)
    if not text:
        raise InvalidValueError("must not be empty")
    return text


def _scope(value: object) -> str:
    scope = str.__str__(value) if isinstance(value, str) else None
    if scope not in _SCOPES:
        raise InvalidValueError("must be 'public' or 'private'")
    return scope


@dataclass(frozen=True, slots=True)
class Implementation:
    """The server's name and version plus optional display metadata.

    ``name`` and ``version`` are required and non-empty; ``version`` is the application's own
    version, not an MCP revision.  All text must be well-formed (no unpaired surrogate) and is
    kept exactly.  ``website_url`` must be an absolute URI.  ``icons`` accepts a list or a tuple
    of ``Icon`` and is stored as a tuple.  What a client reports about itself is *not* an
    ``Implementation``: it stays raw JSON on the request context, informational only.
    """

    name: str
    version: str
    _: KW_ONLY
    title: str | None = None
    description: str | None = None
    website_url: str | None = None
    icons: tuple[Icon, ...] = ()

    _CHECKS: ClassVar[Checks] = (
        ("name", _non_empty),
        ("version", _non_empty),
        ("title", OPTIONAL_TEXT),
        ("description", OPTIONAL_TEXT),
        ("website_url", optional(absolute_uri)),
        ("icons", icon_tuple),
    )

    def __post_init__(self) -> None:
        validate(self)

    def to_json(self) -> JsonObject:
        """The wire ``Implementation``: ``name``, ``version``, then the optional members that are
        present (``icons`` only when there is at least one)."""
        members: dict[str, object] = {"name": self.name, "version": self.version}
        if self.title is not None:
            members["title"] = self.title
        if self.description is not None:
            members["description"] = self.description
        if self.website_url is not None:
            members["websiteUrl"] = self.website_url
        if self.icons:
            members["icons"] = [icon.to_json() for icon in self.icons]
        return JsonObject(members)


@dataclass(frozen=True, slots=True)
class CachePolicy:
    """The cache hint of a 2026 cacheable result: ``ttlMs`` and ``cacheScope``.

    ``ttl_ms`` is whole milliseconds of freshness, from 0 (always stale) to 2**53 - 1;
    ``scope`` is ``"public"`` or ``"private"``.  Use ``private`` whenever the output can vary by
    caller.  The 2025 revisions have no cache fields, and HTTP responses are ``no-store``
    whatever the policy: this is advice to MCP clients, not HTTP caching.
    """

    PRIVATE_NO_CACHE: ClassVar[CachePolicy]
    """Private scope and a TTL of 0: Soklet's ``privateNoCacheInstance()``, the safe choice for
    anything that may depend on the caller."""

    ttl_ms: int
    scope: CacheScope

    _CHECKS: ClassVar[Checks] = (("ttl_ms", exact_int("must be an int")), ("scope", _scope))

    def __post_init__(self) -> None:
        validate(self)

    def to_json(self) -> JsonObject:
        """The two members a 2026 cacheable result carries: ``ttlMs`` and ``cacheScope``."""
        return JsonObject({"ttlMs": self.ttl_ms, "cacheScope": self.scope})


CachePolicy.PRIVATE_NO_CACHE = CachePolicy(0, "private")
