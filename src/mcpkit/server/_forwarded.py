"""Which client address a request came from, when the server sits behind proxies it trusts.

By default the client address (``HttpRequest.client``, what rate limiters and admission see)
is the TCP peer, and ``X-Forwarded-For`` is ignored: any client can write that header.  With
``Server(trusted_proxies=[...])`` a request whose peer is one of those proxies takes its
client from ``X-Forwarded-For`` instead: the nearest address, read from the right, that is
not itself a trusted proxy (each proxy appends the address it received from, so everything
left of the first untrusted hop may be forged).  At most ``limits.max_forwarded_hops``
addresses are read; a longer chain, or a header that cannot be read, leaves the peer as the
client.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from collections.abc import Iterable
from typing import TypeAlias

from mcpkit.errors import ConfigurationError
from mcpkit.limits import Limits
from mcpkit.server._http import HttpRequest

__all__ = ["TrustedProxies"]

_Network: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network


class TrustedProxies:
    """The proxies (addresses or networks) whose ``X-Forwarded-For`` is believed."""

    __slots__ = ("_most", "_networks")

    def __init__(self, proxies: Iterable[str], limits: Limits) -> None:
        self._most = limits.max_forwarded_hops
        networks: list[_Network] = []
        for proxy in proxies:
            try:
                networks.append(ipaddress.ip_network(proxy, strict=False))
            except (TypeError, ValueError):
                raise ConfigurationError(
                    "trusted_proxies: each entry must be an IP address or network "
                    "(such as '10.0.0.5' or '10.0.0.0/8')"
                ) from None
        self._networks = tuple(networks)

    def _trusted(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self._networks)

    def resolve(self, request: HttpRequest) -> HttpRequest:
        """``request`` with its client taken from ``X-Forwarded-For`` when its peer is a
        trusted proxy; otherwise ``request`` itself."""
        peer = request.client
        if peer is None or not self._trusted(peer[0]):
            return request
        hops: list[str] = []
        for name, value in request.headers:
            if name == "x-forwarded-for":
                hops.extend(hop.strip(" \t") for hop in value.split(","))
                if len(hops) > self._most:
                    return request  # more than any real chain of proxies: not believed
        for hop in reversed(hops):
            try:
                address = str(ipaddress.ip_address(hop))
            except ValueError:
                return request  # an unreadable hop: the chain cannot be followed
            if not self._trusted(address):
                return dataclasses.replace(request, client=(address, 0))
        return request
