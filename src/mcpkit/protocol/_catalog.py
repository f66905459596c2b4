"""Catalog pages: ``tools/list``, ``prompts/list``, ``resources/list`` and
``resources/templates/list``, built and serialized once per (endpoint, revision).

An endpoint never changes, so every page of its four static lists is known
when the server starts.  ``Catalog.build`` projects each entry for each served revision
(``_projection``), orders the entries as the revision table says (registration order on
2026-07-28; code-point order of the key on 2025), cuts them into pages and
encodes every page to bytes with ``mcpkit.json.encode``.  Serving a list is
then a dictionary lookup and a cursor check, with nothing allocated per request.

Cursors are opaque: base64url, without padding, of a 12-byte tag and the
4-byte page index.  The tag is a SHA-256 digest of the revision, the list and the list's
encoded entries, not a random nonce, because 2026-07-28 is stateless: every
worker and node that serves the same endpoint must accept the cursors the others issue, and a
cursor issued for a different catalog (an older deployment, another list, another revision)
must be refused.  Cursors grant nothing -- every page is public to anyone who may list -- so
the tag needs to be stable and specific, not secret.  Anything that is not exactly a cursor
this catalog issued is ``InvalidParams`` (-32602), with the fixed message.

Only static entries are paged here: an endpoint's ``resources/list`` handler
(``ResourceListRegistration``) is called at run time and its pages are its own.
"""

from __future__ import annotations

import base64
import binascii
import enum
import hashlib
import hmac
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Final

from mcpkit.errors import ConfigurationError, InvalidParams, OutputError
from mcpkit.json import JsonObject, encode
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.model import UNSET, CachePolicy, Endpoint, Revision
from mcpkit.protocol._projection import (
    SERVER_INFO_KEY,
    implementation_info,
    prompt_definition,
    resource_definition,
    tool_definition,
)
from mcpkit.protocol._revisions import CatalogOrder, profile

__all__ = ["DEFAULT_PAGE_SIZE", "Catalog", "ListKind"]

DEFAULT_PAGE_SIZE: Final = 100
"""Entries per page unless ``Catalog.build`` is told otherwise."""

_TAG_BYTES: Final = 12
_INDEX_BYTES: Final = 4
_CURSOR_CHARS: Final = 22  # base64url of 16 bytes, unpadded
_CURSOR_ALPHABET: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
)


class ListKind(enum.Enum):
    """The four static catalog lists, valued by their method."""

    TOOLS = "tools/list"
    PROMPTS = "prompts/list"
    RESOURCES = "resources/list"
    RESOURCE_TEMPLATES = "resources/templates/list"

    @property
    def method(self) -> str:
        value: str = self.value
        return value

    @property
    def member(self) -> str:
        """The result member holding the entries."""
        return _MEMBERS[self]


_MEMBERS: Final = MappingProxyType(
    {
        ListKind.TOOLS: "tools",
        ListKind.PROMPTS: "prompts",
        ListKind.RESOURCES: "resources",
        ListKind.RESOURCE_TEMPLATES: "resourceTemplates",
    }
)


def _cursor(tag: bytes, index: int) -> str:
    raw = tag + index.to_bytes(_INDEX_BYTES, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _tag(
    revision: Revision, kind: ListKind, entries: Sequence[JsonObject], limits: Limits
) -> bytes:
    """The digest naming one list's exact content (entry by entry, so a long list whose pages
    each fit the output limits is never encoded whole)."""
    digest = hashlib.sha256(f"{revision.wire}\0{kind.method}".encode())
    for entry in entries:
        digest.update(b"\0")
        digest.update(encode(entry, limits=limits))
    return digest.digest()[:_TAG_BYTES]


class _List:
    """One list on one revision: its encoded pages and the tag its cursors carry."""

    __slots__ = ("pages", "tag")

    def __init__(self, pages: tuple[bytes, ...], tag: bytes) -> None:
        self.pages = pages
        self.tag = tag

    def cursor(self, index: int) -> str:
        return _cursor(self.tag, index)

    def index(self, cursor: object) -> int:
        """The page ``cursor`` names, or ``InvalidParams`` for anything this list did not
        issue: a non-string, a wrong length or alphabet, a non-canonical spelling, another
        catalog's tag, or a page out of range (the first page has no cursor)."""
        if (
            not isinstance(cursor, str)
            or len(cursor) != _CURSOR_CHARS
            or not _CURSOR_ALPHABET.issuperset(cursor)
        ):
            raise InvalidParams()
        try:
            raw = base64.urlsafe_b64decode(cursor + "==")
        except binascii.Error:  # pragma: no cover - unreachable after the alphabet check
            raise InvalidParams() from None
        index = int.from_bytes(raw[_TAG_BYTES:], "big")
        canonical = self.cursor(index) == cursor
        if not (hmac.compare_digest(raw[:_TAG_BYTES], self.tag) and canonical):
            raise InvalidParams()
        if not 0 < index < len(self.pages):
            raise InvalidParams()
        return index


class Catalog:
    """Every static catalog page of one endpoint, for each revision it serves, as bytes.

    Build one with :meth:`build` when the server starts; :meth:`page` answers a list request
    with the encoded result object (the ``result`` member of the JSON-RPC response).
    """

    __slots__ = ("_lists", "endpoint", "page_size")

    endpoint: Endpoint
    page_size: int
    _lists: Mapping[tuple[Revision, ListKind], _List]

    def __init__(self, *_args: object, **_kwargs: object) -> None:
        raise TypeError("Catalog is built by Catalog.build")

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Catalog is immutable")

    def __repr__(self) -> str:
        return f"<Catalog {self.endpoint.path!r}, {len(self._lists)} lists>"

    @classmethod
    def build(
        cls,
        endpoint: Endpoint,
        *,
        page_size: int = DEFAULT_PAGE_SIZE,
        tool_list_cache: CachePolicy = CachePolicy.PRIVATE_NO_CACHE,
        prompt_list_cache: CachePolicy = CachePolicy.PRIVATE_NO_CACHE,
        limits: Limits = DEFAULT_LIMITS,
        visible: Callable[[object], bool] | None = None,
    ) -> Catalog:
        """Project, order, page and encode the four lists of ``endpoint`` for every revision
        it serves.

        2026-07-28 pages carry ``resultType``, the cache hints (the endpoint's
        ``resource_list_cache`` and ``resource_template_list_cache``; ``tool_list_cache`` and
        ``prompt_list_cache`` here, since the model has no policy for those two lists yet) and
        ``_meta.serverInfo``.  A page that cannot be written within ``limits`` is a
        ``ConfigurationError`` now rather than an error on every request: lower ``page_size``.
        ``visible`` keeps only the tools, prompts, resources and templates it is true of (one
        caller's view of the endpoint, when entries need scopes).
        """
        if not isinstance(endpoint, Endpoint):
            raise TypeError("Catalog.build: endpoint must be an Endpoint")
        if type(page_size) is not int or page_size < 1:
            raise ConfigurationError("Catalog.build: page_size must be an int of at least 1")
        for policy in (tool_list_cache, prompt_list_cache):
            if not isinstance(policy, CachePolicy):
                raise ConfigurationError("Catalog.build: list caches must be CachePolicy values")
        caches = {
            ListKind.TOOLS: tool_list_cache,
            ListKind.PROMPTS: prompt_list_cache,
            ListKind.RESOURCES: endpoint.resource_list_cache,
            ListKind.RESOURCE_TEMPLATES: endpoint.resource_template_list_cache,
        }
        lists: dict[tuple[Revision, ListKind], _List] = {}
        for revision in sorted(endpoint.revisions, key=lambda member: member.wire):
            for kind in ListKind:
                entries = _entries(endpoint, revision, kind, visible)
                lists[revision, kind] = _paginate(
                    endpoint, revision, kind, entries, page_size, caches[kind], limits
                )
        catalog = object.__new__(cls)
        object.__setattr__(catalog, "endpoint", endpoint)
        object.__setattr__(catalog, "page_size", page_size)
        object.__setattr__(catalog, "_lists", MappingProxyType(lists))
        return catalog

    def page(self, revision: Revision, kind: ListKind, cursor: object = UNSET) -> bytes:
        """The encoded result for ``kind`` on ``revision``: the first page when the request
        had no ``cursor`` (``UNSET``), else the page the cursor names.

        ``cursor`` is the request's ``params.cursor`` exactly as decoded; JSON ``null``, a
        non-string or a string this catalog did not issue raises ``InvalidParams``.  A revision
        the endpoint does not serve is a server bug (``LookupError``).
        """
        found = self._lists.get((revision, kind))
        if found is None:
            raise LookupError("Catalog.page: the endpoint does not serve this revision")
        return found.pages[0 if cursor is UNSET else found.index(cursor)]

    def fingerprint(self, revision: Revision, kind: ListKind) -> bytes:
        """The digest of one list's exact content (what its cursors carry): two catalogs list
        the same entries for ``kind`` on ``revision`` exactly when their fingerprints are
        equal.  Empty for a revision the endpoint does not serve."""
        found = self._lists.get((revision, kind))
        return b"" if found is None else found.tag

    def pages(self, revision: Revision, kind: ListKind) -> tuple[bytes, ...]:
        """Every page of one list, in order (for tests, benchmarks and warm-up)."""
        found = self._lists.get((revision, kind))
        if found is None:
            raise LookupError("Catalog.pages: the endpoint does not serve this revision")
        return found.pages


def _entries(
    endpoint: Endpoint,
    revision: Revision,
    kind: ListKind,
    visible: Callable[[object], bool] | None = None,
) -> list[JsonObject]:
    """The list's entries for ``revision`` that are ``visible``, projected and in the
    revision's order."""
    canonical = profile(revision).catalog_order is CatalogOrder.CANONICAL
    if kind is ListKind.TOOLS:
        tools = endpoint.tools_for(revision)
        if visible is not None:
            tools = tuple(filter(visible, tools))
        if canonical:
            tools = tuple(sorted(tools, key=lambda tool: tool.name))
        return [tool_definition(tool, revision) for tool in tools]
    if kind is ListKind.PROMPTS:
        prompts = endpoint.prompts_for(revision)
        if visible is not None:
            prompts = tuple(filter(visible, prompts))
        if canonical:
            prompts = tuple(sorted(prompts, key=lambda prompt: prompt.name))
        return [prompt_definition(prompt, revision) for prompt in prompts]
    resources = (
        endpoint.resources_for(revision)
        if kind is ListKind.RESOURCES
        else endpoint.templates_for(revision)
    )
    if visible is not None:
        resources = tuple(filter(visible, resources))
    entries = [resource_definition(resource, revision) for resource in resources]
    if kind is ListKind.RESOURCES and endpoint.skill_access is None:
        # each skill's SKILL.md is a resource too; under an access policy skills are found
        # through skills/list only, since a static page cannot ask the policy
        entries.extend(skill.resource for skill in endpoint.skills_for(revision))
    if canonical:
        key = _RESOURCE_KEYS[kind]
        entries.sort(key=key)
    return entries


_RESOURCE_KEYS: Final[Mapping[ListKind, Callable[[JsonObject], str]]] = MappingProxyType(
    {
        ListKind.RESOURCES: lambda entry: str(entry["uri"]),
        ListKind.RESOURCE_TEMPLATES: lambda entry: str(entry["uriTemplate"]),
    }
)


def _paginate(
    endpoint: Endpoint,
    revision: Revision,
    kind: ListKind,
    entries: Sequence[JsonObject],
    page_size: int,
    cache: CachePolicy,
    limits: Limits,
) -> _List:
    row = profile(revision)
    try:
        tag = _tag(revision, kind, entries, limits)
        chunks = [entries[start : start + page_size] for start in range(0, len(entries), page_size)]
        chunks = chunks or [[]]
        pages: list[bytes] = []
        for index, chunk in enumerate(chunks):
            body: dict[str, object] = {kind.member: list(chunk)}
            if index + 1 < len(chunks):
                body["nextCursor"] = _cursor(tag, index + 1)
            if row.result_type:
                body["resultType"] = "complete"
            if row.cache_hints:
                body.update(cache.to_json())
            if row.server_info_meta:
                info = implementation_info(endpoint.implementation, revision)
                body["_meta"] = {SERVER_INFO_KEY: info}
            pages.append(encode(body, limits=limits))
    except OutputError as error:
        raise ConfigurationError(
            f"endpoint {endpoint.path!r}: a {kind.method} page for {revision.wire} cannot be "
            "written within the output limits; lower page_size"
        ) from error
    return _List(tuple(pages), tag)
