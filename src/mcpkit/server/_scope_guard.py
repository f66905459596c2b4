"""The scopes an endpoint's tools, prompts and resources declare, enforced per request, and
the lists each caller sees.

A request that uses an entry declaring scopes (``tools/call``, ``prompts/get``,
``resources/read``, ``resources/subscribe``, ``completion/complete``) needs every one of them
granted; otherwise it is answered 403 ``insufficient_scope`` naming them all, before any
handler, argument check or rate limit.  Lists show a caller only the entries it may use: what
it sees depends only on which declared scopes it holds, so the pages are built once per such
set (``limits.max_catalog_views`` sets at most, the oldest dropped) and then served as bytes
like everyone else's.  Only endpoints with declared scopes get a guard: others pay nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Final

from mcpkit.limits import Limits
from mcpkit.model import Endpoint, Revision
from mcpkit.protocol import Catalog
from mcpkit.server._access_token import AccessToken
from mcpkit.server._params import CompletionArgs
from mcpkit.server._policy import Rejected
from mcpkit.server._resource_server import Authorization

__all__ = ["ScopeGuard"]

_NONE: Final[frozenset[str]] = frozenset()
_URI_METHODS: Final = frozenset({"resources/read", "resources/subscribe"})


def _scopes(entry: object) -> frozenset[str]:
    scopes: frozenset[str] = getattr(entry, "scopes", _NONE)
    return scopes


class ScopeGuard:
    """One endpoint's declared scopes, by what names them, on each revision."""

    __slots__ = (
        "_authorization",
        "_build",
        "_declared",
        "_endpoint",
        "_limits",
        "_prompts",
        "_templates",
        "_tools",
        "_uris",
        "_views",
    )

    def __init__(
        self,
        endpoint: Endpoint,
        authorization: Authorization,
        limits: Limits,
        build: Callable[[Callable[[object], bool]], Catalog],
    ) -> None:
        self._endpoint = endpoint
        self._authorization = authorization
        self._limits = limits
        self._build = build
        self._declared = frozenset(endpoint.declared_scopes)
        self._tools = _per_revision(
            lambda revision: {tool.name: tool.scopes for tool in endpoint.tools_for(revision)}
        )
        self._prompts = _per_revision(
            lambda revision: {item.name: item.scopes for item in endpoint.prompts_for(revision)}
        )
        self._templates = _per_revision(
            lambda revision: {
                item.template.text: item.scopes
                for item in endpoint.templates_for(revision)
                if item.template is not None
            }
        )
        self._uris = any(
            _scopes(entry)
            for revision in endpoint.revisions
            for entry in (*endpoint.resources_for(revision), *endpoint.templates_for(revision))
        )
        self._views: dict[frozenset[str], Catalog] = {}

    def check(
        self, revision: Revision, method: str, args: object, identity: object
    ) -> Rejected | None:
        """``None`` when the caller may make this request, else the 403 to answer (401 for
        a caller without a token)."""
        needed = self._needed(revision, method, args)
        if not needed:
            return None
        if not isinstance(identity, AccessToken):  # no token (anonymous=True): sign in
            return self._authorization.sign_in(self._endpoint, needed)
        if needed <= identity.granted:
            return None
        return self._authorization.insufficient(self._endpoint, needed)

    def _needed(self, revision: Revision, method: str, args: object) -> frozenset[str]:
        if method == "tools/call":
            return self._tools[revision].get(args[0], _NONE)  # type: ignore[index]
        if method == "prompts/get":
            return self._prompts[revision].get(args[0], _NONE)  # type: ignore[index]
        if method in _URI_METHODS and self._uris and isinstance(args, str):
            found = self._endpoint.find_resource(args, revision, limits=self._limits)
            return _NONE if found is None else _scopes(found[0])
        if method == "completion/complete" and isinstance(args, CompletionArgs):
            names = self._prompts if args.prompt else self._templates
            return names[revision].get(args.ref, _NONE)
        return _NONE

    def catalog(self, identity: object) -> Catalog:
        """The lists ``identity`` may see: built once per set of declared scopes it holds."""
        granted = identity.granted if isinstance(identity, AccessToken) else _NONE
        key = granted & self._declared
        views = self._views
        found = views.get(key)
        if found is None:
            found = self._build(lambda entry: _scopes(entry) <= key)
            if len(views) >= self._limits.max_catalog_views:
                del views[next(iter(views))]  # the oldest
            views[key] = found
        return found


def _per_revision(
    scopes_of: Callable[[Revision], dict[str, frozenset[str]]],
) -> Mapping[Revision, Mapping[str, frozenset[str]]]:
    """The declared scopes of each named entry, per revision; entries declaring none are left
    out, so a lookup misses for them."""
    return MappingProxyType(
        {
            revision: MappingProxyType(
                {name: scopes for name, scopes in scopes_of(revision).items() if scopes}
            )
            for revision in Revision
        }
    )
