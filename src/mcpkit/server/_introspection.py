"""``IntrospectionVerifier``: opaque access tokens, asked about at the authorization
server's RFC 7662 introspection endpoint.

The resource server remembers each answer by the token's SHA-256 digest (never the token), so
a token is introspected once per ``cache_seconds`` at most, not once per request.  An
answer is read with the strict codec and its size bounded like a JWKS document.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from mcpkit.errors import ConfigurationError
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.server._access_token import AccessToken, TokenProblem, TokenRejected
from mcpkit.server._jwt_verifier import token_of
from mcpkit.server._token_fetch import JsonFetcher, require_oauth_extra
from mcpkit.server._urls import origin_and_path

__all__ = ["IntrospectionVerifier"]


class IntrospectionVerifier:
    """Verifies tokens by asking ``endpoint`` (RFC 7662), authenticating as ``client_id`` with
    ``client_secret`` (HTTP Basic).  A token is valid when the answer says ``active: true``,
    its ``exp`` (if given) has not passed and, when ``issuer`` is given, its ``iss`` is that.
    Needs the ``oauth`` extra (``pip install 'mcpkit[oauth]'``)."""

    __slots__ = ("_auth", "_clock", "_endpoint", "_fetcher", "_issuer", "_limits", "_own_limits")

    def __init__(
        self,
        endpoint: str,
        *,
        client_id: str,
        client_secret: str,
        issuer: str | None = None,
        limits: Limits | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        require_oauth_extra("IntrospectionVerifier")
        origin_and_path("IntrospectionVerifier", endpoint, "endpoint", query=True)
        for name, value in (("client_id", client_id), ("client_secret", client_secret)):
            if not isinstance(value, str) or not value:
                raise ConfigurationError(f"IntrospectionVerifier: {name} must be a non-empty str")
        self._endpoint = endpoint
        self._auth = (client_id, client_secret)
        self._issuer = issuer
        self._own_limits = limits is not None
        self._limits = DEFAULT_LIMITS if limits is None else limits
        self._clock = clock
        self._fetcher = JsonFetcher(self._limits, self._limits.max_verifier_response_bytes)

    def __repr__(self) -> str:
        return f"IntrospectionVerifier(endpoint={self._endpoint!r})"

    async def verify(self, token: str) -> AccessToken:
        answer = await self._fetcher.post_form(
            self._endpoint, {"token": token, "token_type_hint": "access_token"}, self._auth
        )
        if answer.get("active") is not True:
            raise TokenRejected(TokenProblem.INACTIVE)
        expires = answer.get("exp")
        if expires is not None and (type(expires) is not int or expires <= self._clock()):
            raise TokenRejected(TokenProblem.EXPIRED)
        if self._issuer is not None and answer.get("iss") != self._issuer:
            raise TokenRejected(TokenProblem.ISSUER)
        return token_of(dict(answer), self._limits)

    def adopt_limits(self, limits: Limits) -> None:
        """Take the server's limits, unless this verifier was given its own (``limits=``)."""
        if not self._own_limits:
            self._limits = limits
            self._fetcher = JsonFetcher(limits, limits.max_verifier_response_bytes)

    async def aclose(self) -> None:
        """Close the connections kept to the introspection endpoint."""
        await self._fetcher.aclose()
