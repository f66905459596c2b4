"""What a verified OAuth access token says about its caller, and the verifier interface.

A ``TokenVerifier`` turns the bearer string of one request into an ``AccessToken`` or
refuses it with a ``TokenProblem``; ``JwtVerifier`` and ``IntrospectionVerifier`` are the
built-in ones, and an application may write its own.  Whichever verified it, the resource
server then checks the audience and the scopes the same way, so those rules live in one place.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Protocol, runtime_checkable

__all__ = [
    "AccessToken",
    "TokenProblem",
    "TokenRejected",
    "TokenVerifier",
    "VerifierUnavailable",
    "scope_set",
]

# RFC 6749 §3.3 scope-token: printable ASCII except space, '"' and '\'.
SCOPE_TOKEN: Final = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]{1,128}", re.ASCII)


class TokenProblem(enum.Enum):
    """Why a token was refused, valued by the fixed ``error_description`` the 401 carries
    (nothing of the token itself is ever sent back)."""

    MALFORMED = "The access token is malformed."
    EXPIRED = "The access token has expired."
    NOT_YET_VALID = "The access token is not valid yet."
    ISSUER = "The access token was issued by an authorization server this server does not trust."
    AUDIENCE = "The access token was not issued for this server."
    SIGNATURE = "The access token's signature is invalid."
    ALGORITHM = "The access token is signed with an algorithm this server does not accept."
    UNKNOWN_KEY = "The access token is signed with a key this server does not know."
    INACTIVE = "The access token is not active."
    TOO_LARGE = "The access token is too large."


class TokenRejected(Exception):
    """Raised by a verifier: the token is not valid, for ``problem``'s reason (401)."""

    def __init__(self, problem: TokenProblem) -> None:
        super().__init__(problem.name)
        self.problem = problem


class VerifierUnavailable(Exception):
    """Raised by a verifier that cannot decide now: the keys or the introspection endpoint did
    not answer in time, or answered something unreadable (503; the client retries)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AccessToken:
    """A verified access token: the identity admission hands every handler as
    ``ctx.identity`` when the server is an OAuth resource server.

    ``scopes`` are the scopes the token carries; ``granted`` adds the ones they imply under
    the resource server's scope hierarchy (what scope checks use).  ``claims`` are the JWT
    claims or the introspection response.  ``token`` is the raw bearer string only when the
    resource server was built with ``pass_token=True`` (to call a downstream API with it); it
    never appears in ``repr``.
    """

    subject: str | None
    client_id: str | None
    scopes: frozenset[str]
    issuer: str | None = None
    audience: frozenset[str] = frozenset()
    expires_at: int | None = None
    """Seconds since the epoch (``exp``); ``None`` if the token does not say."""
    claims: Mapping[str, object] = field(default_factory=dict, repr=False)
    granted: frozenset[str] = frozenset()
    token: str | None = field(default=None, repr=False)


@runtime_checkable
class TokenVerifier(Protocol):
    """Verifies one bearer string: returns its ``AccessToken``, raises ``TokenRejected`` for
    a token that is not valid and ``VerifierUnavailable`` when it cannot decide now.  It need
    not check the audience or scopes (the resource server does, the same way for every
    verifier) but must return the token's audience.  A verifier may also have
    ``adopt_limits(limits)`` (the built-in ones do): the server calls it with its own limits
    when it is built, and ``aclose()``, which it awaits when it shuts down."""

    async def verify(self, token: str) -> AccessToken: ...


def scope_set(value: object, most: int) -> frozenset[str]:
    """The scopes of a ``scope`` claim (RFC 8693: one space-separated string) or an ``scp``
    claim (a list of strings, as some providers send); anything else, a scope that is not a
    scope-token, or more than ``most`` scopes is a malformed token."""
    if value is None:
        return frozenset()
    if isinstance(value, str):
        items: list[object] = list(value.split(" ")) if value else []
    elif isinstance(value, (list, tuple)):  # an introspection answer's arrays are tuples
        items = list(value)
    else:
        raise TokenRejected(TokenProblem.MALFORMED)
    if len(items) > most:
        raise TokenRejected(TokenProblem.MALFORMED)
    scopes: set[str] = set()
    for item in items:
        if not isinstance(item, str) or SCOPE_TOKEN.fullmatch(item) is None:
            raise TokenRejected(TokenProblem.MALFORMED)
        scopes.add(item)
    return frozenset(scopes)
