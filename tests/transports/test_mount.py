"""``server.asgi()`` mounted in Starlette and driven with Starlette's own ``TestClient``.

Starlette's client sends ``Host: testserver`` unless given a ``base_url``.  mcpkit accepts no
such name by itself: a server cannot tell a test client from a real listener it is mounted
behind (any ASGI host), and a name accepted on every server would be one a DNS-rebinding page
could try.  So a test either uses a loopback name, ``TestClient(app,
base_url="http://localhost")``, as below, or lists ``"testserver"`` in ``allowed_hosts``.  A
request the server cannot route, or whose ``Host`` it refuses, gets a short fixed explanation
that never repeats the path or the host sent.
"""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

import mcpkit
from mcpkit import CompleteResult, Revision
from mcpkit.json import from_python
from mcpkit.testing import stateless_headers, stateless_request

from ..wire import assert_valid

MODERN = "2026-07-28"
NO_ENDPOINT = (
    "No MCP endpoint at this path. An endpoint answers at its declared path (such as /mcp); "
    "when the app is mounted under a prefix, at the prefix followed by that path (/ai/mcp "
    "under /ai)."
)
HOST_NOT_ALLOWED = (
    "This Host header is not allowed; add the name to allowed_hosts (or --allowed-host), or use "
    "the address and port the server listens on."
)


@mcpkit.endpoint(path="/mcp", name="mounted", version="1.0.0", revisions={Revision.V2026_07_28})
class Mounted:
    @mcpkit.tool(name="echo")
    def echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)


def app(**options: Any) -> Starlette:
    return Starlette(routes=[Mount("/ai", app=mcpkit.Server(Mounted, **options).asgi())])


def post(client: TestClient, path: str, method: str = "tools/list") -> Any:
    return client.post(
        path,
        json=stateless_request(method),
        headers={**stateless_headers(method), "Accept": "application/json, text/event-stream"},
    )


def test_a_tools_list_round_trip_under_the_mount_with_a_loopback_base_url() -> None:
    with TestClient(app(), base_url="http://localhost") as client:
        response = post(client, "/ai/mcp")
    assert response.status_code == 200
    message = response.json()
    assert [tool["name"] for tool in message["result"]["tools"]] == ["echo"]
    assert_valid(MODERN, "tools/list", [from_python(message)])


def test_a_path_outside_the_endpoint_is_404_with_how_paths_are_formed() -> None:
    with TestClient(app(), base_url="http://localhost") as client:
        unmounted = post(client, "/mcp")  # the mount's own 404: Starlette answers it
        below = post(client, "/ai/secret-path-sent")  # inside the mount: mcpkit's
        trailing = post(client, "/ai/mcp/")
    assert unmounted.status_code == 404
    for response in (below, trailing):
        assert response.status_code == 404
        assert response.headers["content-type"] == "application/json"
        assert response.json() == {
            "jsonrpc": "2.0",
            "error": {"code": -32600, "message": NO_ENDPOINT},
        }
        assert b"secret-path-sent" not in response.content
    assert_valid(MODERN, None, [from_python(below.json())])


def test_starlettes_default_host_is_421_with_what_to_do() -> None:
    with TestClient(app()) as client:  # Host: testserver
        response = post(client, "/ai/mcp")
    assert response.status_code == 421
    assert response.json() == {
        "jsonrpc": "2.0",
        "error": {"code": -32600, "message": HOST_NOT_ALLOWED},
    }
    assert b"testserver" not in response.content
    assert_valid(MODERN, None, [from_python(response.json())])


def test_testserver_is_served_once_it_is_an_allowed_host() -> None:
    with TestClient(app(allowed_hosts=["testserver"])) as client:
        response = post(client, "/ai/mcp")
    assert response.status_code == 200
    assert response.json()["result"]["tools"][0]["name"] == "echo"
