"""``JwtVerifier``: access tokens that are JWTs (RFC 9068) signed with an authorization
server's published keys.

The header is read first and judged before any key is looked up: an algorithm outside
``algorithms`` (``none`` and the shared-secret HMAC family are never in the default) or a
header that is not JSON is refused at once.  The key comes from the issuer's JWKS
(``_jwks``); the signature, ``exp``/``nbf`` (with ``leeway``) and ``iss`` are checked by PyJWT.
The audience is returned, not judged: the resource server checks it for the endpoint asked.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from typing import Final

from mcpkit.errors import ConfigurationError
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.server._access_token import (
    AccessToken,
    TokenProblem,
    TokenRejected,
    scope_set,
)
from mcpkit.server._jwks import JwksCache
from mcpkit.server._token_fetch import require_oauth_extra
from mcpkit.server._urls import origin_and_path

__all__ = ["JwtVerifier"]

DEFAULT_ALGORITHMS: Final = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256",
                             "ES384", "ES512", "EdDSA")  # fmt: skip
_ASYMMETRIC: Final = frozenset(DEFAULT_ALGORITHMS)
_TYPES: Final = frozenset({None, "jwt", "at+jwt", "application/at+jwt"})


class JwtVerifier:
    """Verifies JWT access tokens issued by ``issuer`` against the keys at ``jwks_uri``.

    ``algorithms`` are the signature algorithms accepted (asymmetric ones only); ``leeway``
    is the clock skew allowed on ``exp`` and ``nbf``, in seconds.  Keys are re-fetched every
    ``jwks_refresh_seconds``, and early for a key id not yet known, but at most once every
    ``jwks_min_refresh_seconds``.  Scopes are read from ``scope`` (a space-separated string)
    or ``scp`` (a list); the client from ``client_id`` or ``azp``.  The server's ``limits``
    bound tokens and key sets unless ``limits`` is given here.  Needs the ``oauth`` extra
    (``pip install 'mcpkit[oauth]'``).
    """

    __slots__ = ("_algorithms", "_clock", "_issuer", "_jwks", "_leeway", "_limits", "_own_limits")

    def __init__(
        self,
        issuer: str,
        jwks_uri: str,
        *,
        algorithms: Collection[str] = DEFAULT_ALGORITHMS,
        leeway: float = 30.0,
        jwks_refresh_seconds: float = 300.0,
        jwks_min_refresh_seconds: float = 30.0,
        limits: Limits | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        require_oauth_extra("JwtVerifier")
        origin_and_path("JwtVerifier", issuer, "issuer")
        origin_and_path("JwtVerifier", jwks_uri, "jwks_uri", query=True)
        chosen = frozenset(algorithms) if not isinstance(algorithms, str) else frozenset()
        if not chosen or not chosen <= _ASYMMETRIC:
            raise ConfigurationError(
                "JwtVerifier: algorithms must name asymmetric JWS algorithms "
                f"({', '.join(DEFAULT_ALGORITHMS)}); shared-secret HMAC and 'none' are refused"
            )
        if not 0 <= leeway <= 300:
            raise ConfigurationError("JwtVerifier: leeway must be 0 to 300 seconds")
        if not 0 < jwks_min_refresh_seconds <= jwks_refresh_seconds:
            raise ConfigurationError(
                "JwtVerifier: jwks_min_refresh_seconds must be positive and at most "
                "jwks_refresh_seconds"
            )
        self._issuer = issuer
        self._algorithms = chosen
        self._leeway = leeway
        self._own_limits = limits is not None
        self._limits = DEFAULT_LIMITS if limits is None else limits
        self._clock = clock
        self._jwks = JwksCache(
            jwks_uri,
            self._limits,
            refresh_seconds=jwks_refresh_seconds,
            min_refresh_seconds=jwks_min_refresh_seconds,
            clock=clock,
        )

    def __repr__(self) -> str:
        return f"JwtVerifier(issuer={self._issuer!r})"

    async def verify(self, token: str) -> AccessToken:
        import jwt

        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise TokenRejected(TokenProblem.MALFORMED) from None
        algorithm = header.get("alg")
        if not isinstance(algorithm, str) or algorithm not in self._algorithms:
            raise TokenRejected(TokenProblem.ALGORITHM)
        kind = header.get("typ")
        if (
            not (kind is None or isinstance(kind, str))
            or (None if kind is None else kind.lower()) not in _TYPES
        ):
            raise TokenRejected(TokenProblem.MALFORMED)
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise TokenRejected(TokenProblem.MALFORMED)
        key, declared = await self._jwks.key(kid)
        if declared and key.algorithm_name != algorithm:
            raise TokenRejected(TokenProblem.ALGORITHM)  # the key is published for another
        try:
            claims = jwt.decode(
                token,
                key.key,
                algorithms=[algorithm],
                issuer=self._issuer,
                leeway=self._leeway,
                options={
                    "require": ["exp", "iss"],
                    "verify_aud": False,  # judged by the resource server, per endpoint
                },
            )
        except jwt.ExpiredSignatureError:
            raise TokenRejected(TokenProblem.EXPIRED) from None
        except jwt.ImmatureSignatureError:
            raise TokenRejected(TokenProblem.NOT_YET_VALID) from None
        except jwt.InvalidIssuerError:
            raise TokenRejected(TokenProblem.ISSUER) from None
        except jwt.InvalidSignatureError:
            raise TokenRejected(TokenProblem.SIGNATURE) from None
        except (jwt.InvalidKeyError, jwt.InvalidAlgorithmError, TypeError, ValueError):
            # the header's algorithm does not fit the key's type (an RSA key for ES256)
            raise TokenRejected(TokenProblem.ALGORITHM) from None
        except jwt.PyJWTError:
            raise TokenRejected(TokenProblem.MALFORMED) from None
        return token_of(claims, self._limits)

    def adopt_limits(self, limits: Limits) -> None:
        """Take the server's limits, unless this verifier was given its own (``limits=``):
        ``Server(limits=..., auth=...)`` then governs tokens and key sets too."""
        if not self._own_limits:
            self._limits = limits
            self._jwks.adopt_limits(limits)

    async def aclose(self) -> None:
        """Close the connections kept to the JWKS endpoint."""
        await self._jwks.aclose()


def token_of(claims: dict[str, object], limits: Limits) -> AccessToken:
    """The ``AccessToken`` for verified claims (a JWT's, or an introspection answer's, which
    uses the same names: RFC 7662 §2.2)."""
    scopes = scope_set(claims["scope"] if "scope" in claims else claims.get("scp"),
                       limits.max_token_scopes)  # fmt: skip
    subject = claims.get("sub")
    client = claims.get("client_id", claims.get("azp"))
    issuer = claims.get("iss")
    expires = claims.get("exp")
    return AccessToken(
        subject=subject if isinstance(subject, str) else None,
        client_id=client if isinstance(client, str) else None,
        scopes=scopes,
        issuer=issuer if isinstance(issuer, str) else None,
        audience=_audience(claims.get("aud")),
        expires_at=expires if type(expires) is int else None,
        claims=claims,
    )


def _audience(value: object) -> frozenset[str]:
    if isinstance(value, str):
        return frozenset((value,))
    if isinstance(value, (list, tuple)):
        return frozenset(item for item in value if isinstance(item, str))
    return frozenset()
