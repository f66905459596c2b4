"""``ResourceServer``: the server as an OAuth 2.1 resource server (the MCP authorization
specification, RFC 9728, RFC 6750 and RFC 8707).

``Server(auth=ResourceServer(...))`` makes it the admission controller of every HTTP request.
Each request must carry exactly one ``Authorization: Bearer`` token; the verifier checks it,
then the audience must be this endpoint's resource identifier (or the server's), and the
server-wide ``required_scopes`` must be granted.  The answers are fixed:

* no token: 401 with ``WWW-Authenticate: Bearer resource_metadata="..."`` (and ``scope``);
* an invalid token: 401, ``error="invalid_token"`` and a fixed description of the reason;
* a missing scope: 403, ``error="insufficient_scope"`` naming every scope the request needs;
* a verifier that cannot decide now: 503.

Nothing the client sent is echoed, and tokens are never logged.  Verification outcomes are
remembered by the token's SHA-256 digest for ``cache_seconds`` (never past ``exp``), at most
``limits.max_verified_tokens`` of them, so a client reusing its token pays one dictionary
lookup per request.  The protected-resource metadata documents are served at the well-known
paths for each endpoint and for the server.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Final

from mcpkit.errors import (
    AuthorizationUnavailable,
    ConfigurationError,
    InsufficientScope,
    InvalidRequest,
    Unauthorized,
)
from mcpkit.json import encode
from mcpkit.limits import Limits
from mcpkit.model import Endpoint, EndpointRegistry
from mcpkit.protocol import HeaderFields
from mcpkit.server._access_token import (
    SCOPE_TOKEN,
    AccessToken,
    TokenProblem,
    TokenRejected,
    TokenVerifier,
    VerifierUnavailable,
)
from mcpkit.server._http import HttpRequest
from mcpkit.server._policy import AdmissionRequest, Admitted, Rejected
from mcpkit.server._urls import origin_and_path

__all__ = ["Authorization", "ResourceServer"]

log = logging.getLogger("mcpkit")

WELL_KNOWN: Final = "/.well-known/oauth-protected-resource"
_TOKEN68: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=")
# Problems that may pass by themselves: not remembered, so the next request verifies again.
_TRANSIENT: Final = frozenset({TokenProblem.NOT_YET_VALID, TokenProblem.UNKNOWN_KEY})
_ANONYMOUS: Final = Admitted()  # no token, where anonymous=True: the shared partition


def _canonical(uri: str) -> str:
    """A resource URI compared as the MCP specification asks: scheme and host case-folded,
    no trailing slash."""
    scheme, sep, rest = uri.partition("://")
    if not sep:
        return uri
    host, slash, path = rest.partition("/")
    return f"{scheme.lower()}://{host.lower()}{(slash + path).rstrip('/')}"


def _scopes(value: Collection[str], name: str) -> frozenset[str]:
    if isinstance(value, str) or not all(
        isinstance(scope, str) and SCOPE_TOKEN.fullmatch(scope) for scope in value
    ):
        raise ConfigurationError(
            f"ResourceServer: {name} must be a collection of OAuth scope strings, "
            "such as ['notes:read']"
        )
    return frozenset(value)


class ResourceServer:
    """Protect a server with OAuth 2.1 bearer tokens.

    ``url`` is the server's public base URL (``https://mcp.example.com``, with the prefix it
    is mounted under, if any); each endpoint's resource identifier is ``url`` followed by the
    endpoint's path, and tokens must be issued for it (or for ``url`` itself).
    ``authorization_servers`` are the issuers clients get tokens from; ``verifier`` a
    ``JwtVerifier``, an ``IntrospectionVerifier`` or your own ``TokenVerifier``.

    ``required_scopes`` are needed for any request; the scopes a tool, prompt or resource
    declares (``@tool(scopes=[...])``) are needed to use it, and lists show a caller only what
    it may use.  ``scope_implies`` maps a broader scope to the narrower ones it grants
    (``{"notes:admin": ["notes:read", "notes:write"]}``).  ``grants`` is the catalog access
    policy beyond what the token says: ``grants(token)`` returns more scopes this caller
    holds here (from a ``roles`` or tenant claim, a database...); it runs once per verified
    token, and what it returns counts like the token's own scopes for calls and lists.
    ``scopes_supported`` is what the metadata advertises: by default the required scopes and
    every declared one.
    ``anonymous=True`` admits a request that carries no token at all (an invalid token is
    still refused): it may use the entries that declare no scope, and using one that does is
    answered 401 with the challenge naming its scopes, so the client signs in then.
    ``pass_token=True`` puts the raw token in ``AccessToken.token`` for handlers that call
    another API with it; otherwise no handler ever sees it.
    """

    __slots__ = (
        "_implies",
        "anonymous",
        "authorization_servers",
        "cache_seconds",
        "grants",
        "pass_token",
        "required_scopes",
        "resource_documentation",
        "resource_name",
        "scopes_supported",
        "url",
        "verifier",
    )

    def __init__(
        self,
        url: str,
        *,
        authorization_servers: Sequence[str],
        verifier: TokenVerifier,
        required_scopes: Collection[str] = (),
        scopes_supported: Collection[str] | None = None,
        scope_implies: Mapping[str, Collection[str]] | None = None,
        grants: Callable[[AccessToken], Collection[str]] | None = None,
        anonymous: bool = False,
        resource_name: str | None = None,
        resource_documentation: str | None = None,
        cache_seconds: float = 60.0,
        pass_token: bool = False,
    ) -> None:
        origin, path = origin_and_path("ResourceServer", url, "url")
        self.url = origin + path
        if isinstance(authorization_servers, str) or not authorization_servers:
            raise ConfigurationError(
                "ResourceServer: authorization_servers must be a non-empty list of issuer URLs"
            )
        for server in authorization_servers:
            origin_and_path("ResourceServer", server, "authorization_servers")
        self.authorization_servers = tuple(authorization_servers)
        if not isinstance(verifier, TokenVerifier):
            raise ConfigurationError(
                "ResourceServer: verifier must have an async verify(token) method "
                "(JwtVerifier, IntrospectionVerifier or your own TokenVerifier)"
            )
        self.verifier = verifier
        self.required_scopes = _scopes(required_scopes, "required_scopes")
        self.scopes_supported = (
            None if scopes_supported is None else _scopes(scopes_supported, "scopes_supported")
        )
        implies: dict[str, frozenset[str]] = {}
        for broad, narrow in (scope_implies or {}).items():
            implies[next(iter(_scopes((broad,), "scope_implies")))] = _scopes(
                narrow, "scope_implies"
            )
        self._implies = implies
        if grants is not None and not callable(grants):
            raise ConfigurationError("ResourceServer: grants must be callable or None")
        self.grants = grants
        if not isinstance(anonymous, bool):
            raise ConfigurationError("ResourceServer: anonymous must be True or False")
        if anonymous and self.required_scopes:
            raise ConfigurationError(
                "ResourceServer: anonymous=True admits requests without a token, which "
                "required_scopes would refuse; give one or the other"
            )
        self.anonymous = anonymous
        for name, text in (("resource_name", resource_name),
                           ("resource_documentation", resource_documentation)):  # fmt: skip
            if text is not None and (not isinstance(text, str) or not text):
                raise ConfigurationError(f"ResourceServer: {name} must be a non-empty str")
        if resource_documentation is not None:
            origin_and_path("ResourceServer", resource_documentation, "resource_documentation")
        self.resource_name = resource_name
        self.resource_documentation = resource_documentation
        if not 0 < cache_seconds <= 3600:
            raise ConfigurationError(
                "ResourceServer: cache_seconds must be more than 0 and at most 3600"
            )
        self.cache_seconds = float(cache_seconds)
        self.pass_token = bool(pass_token)

    def __repr__(self) -> str:
        return f"ResourceServer({self.url!r})"

    def granted(self, scopes: frozenset[str]) -> frozenset[str]:
        """``scopes`` with every scope they imply (transitively)."""
        if not self._implies:
            return scopes
        found = set(scopes)
        pending = list(scopes)
        while pending:
            for implied in self._implies.get(pending.pop(), ()):
                if implied not in found:
                    found.add(implied)
                    pending.append(implied)
        return frozenset(found)

    def bind(self, limits: Limits, clock: Callable[[], float] = time.monotonic) -> Authorization:
        """What a built server runs: this configuration with the server's limits."""
        return Authorization(self, limits, clock)


@dataclasses.dataclass(frozen=True, slots=True)
class _Site:
    """One protected resource: an endpoint (or the server as a whole)."""

    resource: str
    audiences: frozenset[str]
    metadata_url: str
    unauthorized: Rejected
    invalid: Mapping[TokenProblem, Rejected]


@dataclasses.dataclass(frozen=True, slots=True)
class _Verified:
    """A remembered verification: the admission to hand on (or the problem), until when."""

    until: float
    admitted: Admitted | None
    audience: frozenset[str]
    problem: TokenProblem | None
    granted: frozenset[str] = frozenset()


class Authorization:
    """A ``ResourceServer`` bound to a server: the admission controller, the scope
    challenges and the metadata documents."""

    def __init__(self, config: ResourceServer, limits: Limits, clock: Callable[[], float]) -> None:
        self.config = config
        self._limits = limits
        adopt = getattr(config.verifier, "adopt_limits", None)
        if adopt is not None:  # the built-in verifiers follow the server's limits
            adopt(limits)
        self._clock = clock
        self._sites: dict[str, _Site] = {}
        self._verified: dict[bytes, _Verified] = {}
        self._documents: tuple[EndpointRegistry, Mapping[str, bytes]] | None = None
        self._bad_request = Rejected(
            400,
            InvalidRequest(),
            (("WWW-Authenticate", 'Bearer error="invalid_request", error_description='
              '"Send exactly one Authorization header."'),),
        )  # fmt: skip
        self._unavailable = Rejected(503, AuthorizationUnavailable())
        self._challenges: dict[tuple[str, str, frozenset[str]], Rejected] = {}
        self._origin, self._base_path = origin_and_path("ResourceServer", config.url, "url")

    # --- sites and documents --------------------------------------------------------------

    def _site(self, path: str) -> _Site:
        site = self._sites.get(path)
        if site is None:
            site = self._sites[path] = self._new_site(path)
        return site

    def _new_site(self, path: str) -> _Site:
        config = self.config
        resource = config.url + path
        metadata_url = self._origin + WELL_KNOWN + self._base_path + path
        required = _quoted_scopes(config.required_scopes)
        base = f'Bearer resource_metadata="{metadata_url}"'
        unauthorized = Rejected(401, Unauthorized(), (("WWW-Authenticate", base + required),))
        invalid = {
            problem: Rejected(
                401,
                Unauthorized(),
                (
                    (
                        "WWW-Authenticate",
                        f'Bearer error="invalid_token", error_description="{problem.value}", '
                        f'resource_metadata="{metadata_url}"',
                    ),
                ),
            )
            for problem in TokenProblem
        }
        audiences = frozenset({_canonical(resource), _canonical(config.url)})
        return _Site(resource, audiences, metadata_url, unauthorized, invalid)

    def document(self, raw_path: str, registry: EndpointRegistry) -> bytes | None:
        """The protected-resource metadata document served at ``raw_path``, if any: one per
        endpoint (the path-suffixed well-known form) and one for the whole server."""
        known = self._documents
        if known is None or known[0] is not registry:
            known = self._documents = (registry, self._build_documents(registry))
        return known[1].get(raw_path)

    def _build_documents(self, registry: EndpointRegistry) -> Mapping[str, bytes]:
        documents: dict[str, bytes] = {}
        everything: set[str] = set()
        for endpoint in registry:
            scopes = self._supported(endpoint.declared_scopes)
            everything.update(scopes)
            body = self._document_body(self.config.url + endpoint.path, scopes)
            documents[WELL_KNOWN + self._base_path + endpoint.path] = body
            documents.setdefault(WELL_KNOWN + endpoint.path, body)  # mounted under the prefix
        body = self._document_body(self.config.url, sorted(everything))
        documents[WELL_KNOWN + self._base_path] = body
        documents.setdefault(WELL_KNOWN, body)
        return documents

    def _supported(self, declared: Collection[str]) -> list[str]:
        supported = self.config.scopes_supported
        if supported is not None:
            return sorted(supported)
        return sorted(self.config.required_scopes | frozenset(declared))

    def _document_body(self, resource: str, scopes: Sequence[str]) -> bytes:
        config = self.config
        body: dict[str, object] = {
            "resource": resource,
            "authorization_servers": list(config.authorization_servers),
            "bearer_methods_supported": ["header"],
        }
        if scopes:
            body["scopes_supported"] = list(scopes)
        if config.resource_name is not None:
            body["resource_name"] = config.resource_name
        if config.resource_documentation is not None:
            body["resource_documentation"] = config.resource_documentation
        return encode(body, limits=self._limits)

    # --- admission --------------------------------------------------------------------------

    async def admit(self, request: AdmissionRequest) -> Admitted | Rejected:
        """The admission controller: exactly one valid bearer token for this endpoint."""
        site = self._site(request.endpoint.path)
        http = request.http_request
        if http is None:  # Server.stdio refuses to start: a transport of one's own gets this
            return site.unauthorized
        token: str | None = None
        for name, value in http.headers:
            if name == "authorization":
                if token is not None:
                    return self._bad_request
                token = value
        if token is None:
            return _ANONYMOUS if self.config.anonymous else site.unauthorized
        scheme, _, credentials = token.strip(" \t").partition(" ")
        if scheme.lower() != "bearer":  # another scheme: no bearer token was sent
            return _ANONYMOUS if self.config.anonymous else site.unauthorized
        credentials = credentials.lstrip(" ")
        if len(credentials) > self._limits.max_bearer_token_bytes:
            return site.invalid[TokenProblem.TOO_LARGE]
        value = credentials.rstrip("=")  # token68: at least one character, then padding
        if not value or "=" in value or not _TOKEN68.issuperset(credentials):
            return site.invalid[TokenProblem.MALFORMED]
        verified = await self._verify(credentials)
        if verified is None:
            return self._unavailable
        if verified.problem is not None:
            return site.invalid[verified.problem]
        if verified.audience.isdisjoint(site.audiences):
            return site.invalid[TokenProblem.AUDIENCE]
        admitted = verified.admitted
        assert admitted is not None  # a verification without a problem admits
        if self.config.pass_token:
            identity = admitted.identity
            assert isinstance(identity, AccessToken)
            admitted = Admitted(
                dataclasses.replace(identity, token=credentials), admitted.authorization
            )
        missing = self.config.required_scopes
        if missing:
            identity = admitted.identity
            assert isinstance(identity, AccessToken)
            if not missing <= identity.granted:
                return self.insufficient(request.endpoint, missing)
        return admitted

    def remembered(
        self, path: str, http: HttpRequest | None, fields: HeaderFields | None = None
    ) -> Admitted | None:
        """The usual request's admission without a coroutine: its one bearer token was
        verified before, is still remembered as valid, and fits this endpoint.  ``None`` for
        anything else (a refusal included), which ``admit`` then decides in full.
        ``fields``, when given, is ``http``'s headers already indexed (one lookup, no scan)."""
        if http is None or self.config.pass_token:
            return None
        header: str | None = None
        if fields is not None:
            header = fields.raw("authorization")  # ``None`` when absent or repeated
        else:
            for name, value in http.headers:
                if name == "authorization":
                    if header is not None:
                        return None
                    header = value
        if header is None or header[:7].lower() != "bearer ":
            return None
        credentials = header[7:].strip(" \t")  # what admit reads from the same header
        if len(credentials) > self._limits.max_bearer_token_bytes:
            return None
        known = self._verified.get(hashlib.sha256(credentials.encode("latin-1")).digest())
        if known is None or known.admitted is None or self._clock() >= known.until:
            return None
        site = self._sites.get(path)
        if site is None or known.audience.isdisjoint(site.audiences):
            return None
        required = self.config.required_scopes
        if required and not required <= known.granted:
            return None
        return known.admitted

    async def _verify(self, token: str) -> _Verified | None:
        """The outcome for ``token``, remembered by its digest; ``None`` when the verifier
        cannot decide now (not remembered)."""
        digest = hashlib.sha256(token.encode("latin-1")).digest()
        now = self._clock()
        known = self._verified.get(digest)
        if known is not None:
            if now < known.until:
                return known
            del self._verified[digest]
        try:
            async with asyncio.timeout(self._limits.verifier_timeout_seconds):
                access = await self.config.verifier.verify(token)
            if not isinstance(access, AccessToken):
                log.error("mcpkit: token verifier returned %s", type(access).__name__)
                return None
            outcome = self._admitting(access, now)
        except TokenRejected as rejected:
            problem = rejected.problem
            if problem in _TRANSIENT:
                return _Verified(now, None, frozenset(), problem)
            outcome = _Verified(now + self.config.cache_seconds, None, frozenset(), problem)
        except (VerifierUnavailable, TimeoutError):
            return None
        except Exception as error:  # a verifier's bug: never its message (it may hold the token)
            log.error("mcpkit: token verifier or grants raised %s", type(error).__name__)
            return None
        verified = self._verified
        if len(verified) >= self._limits.max_verified_tokens:
            del verified[next(iter(verified))]  # the oldest
        verified[digest] = outcome
        return outcome

    def _admitting(self, access: AccessToken, now: float) -> _Verified:
        until = now + self.config.cache_seconds
        if access.expires_at is not None:
            until = min(until, now + (access.expires_at - time.time()))
        scopes = access.scopes
        grants = self.config.grants
        if grants is not None:
            scopes = scopes | _scopes(grants(access), "grants")
        access = dataclasses.replace(access, granted=self.config.granted(scopes), token=None)
        who = access.subject if access.subject is not None else access.client_id
        partition = None
        if who is not None:
            digest = hashlib.sha256(f"{access.issuer or ''}\0{who}".encode("utf-8", "replace"))
            partition = "oauth:" + digest.hexdigest()
        audience = frozenset(_canonical(value) for value in access.audience)
        return _Verified(until, Admitted(access, partition), audience, None, access.granted)

    # --- scopes -------------------------------------------------------------------------------

    def sign_in(self, endpoint: Endpoint, needed: frozenset[str]) -> Rejected:
        """401 for a caller without a token (``anonymous=True``) using an entry that needs
        ``needed``: the challenge names them, so the client asks for them."""
        key = ("", endpoint.path, needed)
        found = self._challenges.get(key)
        if found is None:
            site = self._site(endpoint.path)
            challenge = f'Bearer resource_metadata="{site.metadata_url}"' + _quoted_scopes(needed)
            found = Rejected(401, Unauthorized(), (("WWW-Authenticate", challenge),))
            self._challenges[key] = found
        return found

    def insufficient(self, endpoint: Endpoint, needed: frozenset[str]) -> Rejected:
        """403 ``insufficient_scope`` naming every scope in ``needed`` (remembered per set)."""
        key = ("insufficient", endpoint.path, needed)
        found = self._challenges.get(key)
        if found is None:
            site = self._site(endpoint.path)
            challenge = (
                'Bearer error="insufficient_scope", '
                f'scope="{" ".join(sorted(needed))}", '
                f'resource_metadata="{site.metadata_url}", '
                'error_description="The access token lacks a scope this request needs."'
            )
            found = Rejected(403, InsufficientScope(), (("WWW-Authenticate", challenge),))
            # the sets are the entries' declared ones (and required_scopes): the application's
            self._challenges[key] = found
        return found

    async def aclose(self) -> None:
        """Close the verifier's connections, if it keeps any."""
        close = getattr(self.config.verifier, "aclose", None)
        if close is not None:
            await close()


def _quoted_scopes(scopes: frozenset[str]) -> str:
    return f', scope="{" ".join(sorted(scopes))}"' if scopes else ""
