"""The URLs an OAuth configuration names: absolute, http(s), and https unless on loopback
(a token or a key fetched over plain http from another host could be read or swapped)."""

from __future__ import annotations

from typing import Final

from mcpkit.errors import ConfigurationError

__all__ = ["origin_and_path"]

_LOOPBACK: Final = frozenset({"localhost", "127.0.0.1", "[::1]"})


def origin_and_path(who: str, url: object, name: str, *, query: bool = False) -> tuple[str, str]:
    """``scheme://host[:port]`` and the path of an absolute http(s) URL with no fragment, nor
    a query unless ``query``; https unless the host is a loopback name."""
    if query and isinstance(url, str):
        url = url.partition("?")[0]
    if not isinstance(url, str) or not url.isascii() or any(c in url for c in '?# \t"\\'):
        raise ConfigurationError(f"{who}: {name} must be an absolute URL")
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in ("http", "https") or not rest:
        raise ConfigurationError(f"{who}: {name} must be an http(s) URL")
    host, slash, path = rest.partition("/")
    hostname = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    if not host or "@" in host:
        raise ConfigurationError(f"{who}: {name} must name a host")
    if scheme.lower() != "https" and hostname.lower() not in _LOOPBACK:
        raise ConfigurationError(f"{who}: {name} must be https (plain http only on localhost)")
    return f"{scheme.lower()}://{host.lower()}", (slash + path).rstrip("/")
