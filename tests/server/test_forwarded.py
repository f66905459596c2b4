"""``Server(trusted_proxies=...)``: the client address is the TCP peer unless the peer is a
trusted proxy, and then the nearest untrusted ``X-Forwarded-For`` hop."""

from __future__ import annotations

import pytest

from mcpkit import AdmissionRequest, Admitted, ConfigurationError, Limits, Server, endpoint, tool
from mcpkit.server import HttpRequest
from mcpkit.server._forwarded import TrustedProxies
from mcpkit.testing import TestClient, stateless_headers, stateless_request
from mcpkit.testing._client import _PEER


def request(peer: tuple[str, int] | None, *forwarded: str) -> HttpRequest:
    headers = tuple(("x-forwarded-for", value) for value in forwarded)
    return HttpRequest(method="POST", raw_path="/mcp", headers=headers, client=peer)


PROXIES = TrustedProxies(["10.0.0.5", "10.1.0.0/16", "::1"], Limits())


@pytest.mark.parametrize(
    ("peer", "forwarded", "client"),
    [
        (("203.0.113.9", 5000), ("198.51.100.1",), ("203.0.113.9", 5000)),  # untrusted peer
        (("10.0.0.5", 5000), ("198.51.100.1",), ("198.51.100.1", 0)),
        (("10.0.0.5", 5000), ("6.6.6.6, 198.51.100.1, 10.1.2.3",), ("198.51.100.1", 0)),
        (("10.0.0.5", 5000), ("6.6.6.6", "198.51.100.1"), ("198.51.100.1", 0)),  # two fields
        (("::1", 5000), ("2001:db8::1",), ("2001:db8::1", 0)),
        (("10.0.0.5", 5000), ("10.1.0.1",), ("10.0.0.5", 5000)),  # every hop a proxy
        (("10.0.0.5", 5000), (), ("10.0.0.5", 5000)),  # no header
        (("10.0.0.5", 5000), ("198.51.100.1, junk",), ("10.0.0.5", 5000)),  # unreadable hop
        (("10.0.0.5", 5000), (", ".join(["198.51.100.1"] * 33),), ("10.0.0.5", 5000)),
        (("unix-socket", 0), ("198.51.100.1",), ("unix-socket", 0)),
        (None, ("198.51.100.1",), None),
    ],
)
def test_the_client_address(
    peer: tuple[str, int] | None, forwarded: tuple[str, ...], client: tuple[str, int] | None
) -> None:
    assert PROXIES.resolve(request(peer, *forwarded)).client == client


def test_at_most_max_forwarded_hops_are_read() -> None:
    proxies = TrustedProxies(["10.0.0.5"], Limits().replace(max_forwarded_hops=3))
    at_limit = "6.6.6.6, 7.7.7.7, 198.51.100.1"
    assert proxies.resolve(request(("10.0.0.5", 1), at_limit)).client == ("198.51.100.1", 0)
    past = "5.5.5.5, " + at_limit  # one more: not believed, the proxy is the client
    assert proxies.resolve(request(("10.0.0.5", 1), past)).client == ("10.0.0.5", 1)
    chain = ", ".join(["198.51.100.1"] * 32)  # the default, 32
    assert PROXIES.resolve(request(("10.0.0.5", 1), chain)).client == ("198.51.100.1", 0)


@endpoint(path="/mcp", name="p", version="1")
class Plain:
    @tool
    def ping(self) -> str:
        """Answers."""
        return "pong"


def test_server_configuration() -> None:
    assert Server(Plain, trusted_proxies=["10.0.0.5"]).engine._proxies is not None
    assert Server(Plain).engine._proxies is None
    with pytest.raises(ConfigurationError, match="list of addresses"):
        Server(Plain, trusted_proxies="10.0.0.5")
    with pytest.raises(ConfigurationError, match="IP address or network"):
        Server(Plain, trusted_proxies=["proxy.internal"])


def test_admission_and_limiters_see_the_forwarded_client() -> None:
    seen: list[tuple[str, int] | None] = []

    def admit(asked: AdmissionRequest) -> Admitted:
        assert asked.http_request is not None
        seen.append(asked.http_request.client)
        return Admitted()

    peer = _PEER[0]
    server = Server(Plain, trusted_proxies=[peer], admission=admit)
    headers = {**stateless_headers("tools/list"), "x-forwarded-for": "198.51.100.7"}
    body = stateless_request("tools/list")
    with TestClient(server) as client:
        assert client.post("/mcp", body, headers=headers).status == 200
    assert seen == [("198.51.100.7", 0)]
