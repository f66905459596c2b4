"""The OAuth scopes a tool, prompt, resource or resource template declares.

A declaration is the set of scopes a caller's access token must all carry; the server's resource
server (``Server(auth=...)``) enforces it and the model only checks and carries it.  Each scope
is an RFC 6749 section 3.3 ``scope-token``, so what is declared here is exactly what a token can
carry.  Refusals name the declaration and the scope's position, never the scope itself.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Final

from mcpkit.errors import ConfigurationError

__all__ = ["MAX_DECLARED_SCOPES", "MAX_SCOPE_CHARS", "checked_scopes"]

MAX_SCOPE_CHARS: Final = 128
MAX_DECLARED_SCOPES: Final = 32
# RFC 6749 section 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
_SCOPE_TOKEN: Final = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")
_EXAMPLE: Final = 'scopes=["notes:read"]'


def checked_scopes(value: object, where: str) -> frozenset[str]:
    """``value`` (a list, tuple, set or frozenset of ``str``) as the set of scopes ``where``
    requires; empty means none.  Duplicates collapse; anything else is a ``ConfigurationError``
    whose message starts with ``where``."""
    if isinstance(value, str):
        # A str is a collection of characters: refused, or "notes" would require "n", "o"...
        raise ConfigurationError(
            f"{where}: scopes must be a collection of scopes, not one str; pass {_EXAMPLE}"
        )
    if not isinstance(value, Collection) or isinstance(value, Mapping):
        raise ConfigurationError(
            f"{where}: scopes must be a list, tuple, set or frozenset of str, such as {_EXAMPLE}"
        )
    if len(value) > MAX_DECLARED_SCOPES:
        raise ConfigurationError(
            f"{where}: scopes holds {len(value)} items; at most {MAX_DECLARED_SCOPES} may be "
            "declared on one operation"
        )
    scopes: set[str] = set()
    for index, scope in enumerate(value):
        problem = "must be a str" if not isinstance(scope, str) else _problem(scope)
        if problem is not None:
            raise ConfigurationError(f"{where}: scopes[{index}] {problem}")
        scopes.add(str.__str__(scope))  # a plain str, whatever subclass was given
    return frozenset(scopes)


def _problem(scope: str) -> str | None:
    """Why ``scope`` is not a scope-token, without repeating it; ``None`` when it is one."""
    if not 1 <= len(scope) <= MAX_SCOPE_CHARS:
        return f"must be 1 to {MAX_SCOPE_CHARS} characters"
    if " " in scope:
        # RFC 6749 joins scopes with spaces on the wire; a declaration lists them one by one.
        return 'contains a space: declare each scope as its own item, as in ["a", "b"]'
    if _SCOPE_TOKEN.fullmatch(scope) is None:
        return (
            "must be printable ASCII other than space, '\"' and '\\' (an RFC 6749 "
            "section 3.3 scope-token)"
        )
    return None
