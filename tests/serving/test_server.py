"""``mcpkit.Server`` (docs/design/server.md §2): what it serves (``registry_of``), its settings and
their refusals, ``configured()``, ``asgi()``, ``where()``, ``serve()`` on a real socket,
``run()``'s uvicorn configuration, and stdio: endpoint selection and a ``--stdio`` process.

Every JSON-RPC message received is checked against the official schema of its revision.
"""

from __future__ import annotations

import asyncio
import errno
import http.client
import importlib.util
import json
import logging
import socket
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import uvicorn

import mcpkit
from mcpkit import (
    AdmissionRequest,
    Admitted,
    CachePolicy,
    CompleteResult,
    ConfigurationError,
    CorsPolicy,
    Endpoint,
    EndpointRegistry,
    Implementation,
    Limits,
    RequestContext,
    Revision,
    Server,
    endpoint,
    tool,
)
from mcpkit.json import JsonObject, from_python
from mcpkit.server import EngineSettings, StdioConnection, build_engine
from mcpkit.serving import registry_of
from mcpkit.testing import TestClient, handshake_request, stateless_headers, stateless_request
from mcpkit.transports import McpApp
from mcpkit.transports._connections import GuardedProtocol

from ..wire import assert_valid

ROOT = Path(__file__).resolve().parents[2]
MODERN = "2026-07-28"
NOVEMBER = "2025-11-25"
WAIT = 10.0

LOOPBACK_RULE = (
    "Server: binding a non-loopback host requires allowed_hosts (the Host names clients use; "
    "mcpkit serve --allowed-host NAME), so that DNS rebinding cannot reach the server"
)
TARGET_RULE = (
    "Server: serve an EndpointRegistry, an Endpoint, an EndpointBuilder, an @endpoint class or "
    "a list of them"
)


@endpoint(path="/mcp", name="main", version="1.0.0",
          revisions={Revision.V2025_11_25, Revision.V2026_07_28})  # fmt: skip
class Main:
    @tool(name="revision")
    def revision(self, ctx: RequestContext) -> CompleteResult:
        return CompleteResult.from_tool_text(ctx.revision.wire)

    @tool(name="identity")
    def identity(self, ctx: RequestContext) -> CompleteResult:
        return CompleteResult.from_tool_text(repr(ctx.identity))


@endpoint(path="/other", name="other", version="2.0.0", revisions={Revision.V2026_07_28})
class Other:
    @tool(name="revision")
    def revision(self, ctx: RequestContext) -> CompleteResult:
        return CompleteResult.from_tool_text(ctx.revision.wire)


def programmatic(path: str = "/programmatic") -> Endpoint:
    return Endpoint(path, Implementation("programmatic", "3.0.0"), {Revision.V2026_07_28})


def paths(registry: EndpointRegistry) -> list[str]:
    return [endpoint.path for endpoint in registry]


def valid(revision: str, method: str | None, messages: list[Any]) -> None:
    assert_valid(revision, method, [from_python(message) for message in messages])


# --- registry_of --------------------------------------------------------------------------------


def test_a_registry_is_served_as_is() -> None:
    registry = EndpointRegistry.from_classes(Main, Other)
    assert registry_of(registry) is registry
    assert Server(registry).registry is registry


def test_an_endpoint_a_class_and_a_mixed_list_become_registries_in_order() -> None:
    built = programmatic()
    assert paths(registry_of(built)) == ["/programmatic"]
    assert list(registry_of(built)) == [built]
    assert paths(registry_of(Main)) == ["/mcp"]
    mixed = registry_of([Other, built, Main])
    assert paths(mixed) == ["/other", "/programmatic", "/mcp"]
    assert paths(registry_of((built, Other))) == ["/programmatic", "/other"]
    assert mixed.endpoint_for_path("/programmatic") is built


@pytest.mark.parametrize(
    "junk", [None, 5, "module:server", {Main}, [Main, 5], (programmatic(), "x"), Main()]
)
def test_anything_else_is_refused(junk: object) -> None:
    with pytest.raises(ConfigurationError) as caught:
        registry_of(junk)
    assert str(caught.value) == TARGET_RULE
    with pytest.raises(ConfigurationError, match=r"^Server: serve an EndpointRegistry"):
        Server(junk)


def test_undecorated_classes_empty_lists_and_duplicate_paths_are_refused_by_the_registry() -> None:
    class Plain:
        pass

    with pytest.raises(ConfigurationError, match=r"has no endpoint descriptor"):
        registry_of(Plain)
    with pytest.raises(ConfigurationError, match=r"a registry needs at least one endpoint"):
        registry_of([])
    with pytest.raises(ConfigurationError, match=r"declare the same path"):
        registry_of([Main, Main])


# --- settings -----------------------------------------------------------------------------------


def test_the_defaults_are_127_0_0_1_port_8000() -> None:
    server = Server(Main)
    assert (server.host, server.port) == ("127.0.0.1", 8000)
    assert server.engine.port == 8000
    assert server.where() == "http://127.0.0.1:8000"
    assert repr(server) == "<Server 127.0.0.1:8000 1 endpoints>"
    assert repr(Server([Main, Other])) == "<Server 127.0.0.1:8000 2 endpoints>"


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1"])
def test_loopback_hosts_need_no_allowed_hosts(host: str) -> None:
    assert Server(Main, host=host).host == host


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.com", "127.0.0.2"])
def test_a_non_loopback_host_needs_allowed_hosts(host: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        Server(Main, host=host)
    assert str(caught.value) == LOOPBACK_RULE
    server = Server(Main, host=host, allowed_hosts=["mcp.example"])
    assert server.host == host


def test_allowed_hosts_admit_their_host_header() -> None:
    server = Server(Main, host="0.0.0.0", allowed_hosts=iter(["MCP.Example"]))
    body = stateless_request("tools/call", {"name": "revision", "arguments": {}})
    headers = {**stateless_headers("tools/call", "revision")}
    with TestClient(server) as client:
        allowed = client.post("/mcp", body, headers={**headers, "Host": "mcp.example:8000"})
        other = client.post("/mcp", body, headers={**headers, "Host": "evil.example"})
    assert allowed.status == 200 and other.status == 421


@pytest.mark.parametrize(
    "host", ["", None, 127, b"127.0.0.1", "bad\x00host", "under_score", "-leading", "a b"]
)
def test_the_host_must_be_an_address_or_a_name(host: Any) -> None:
    """Fail at construction, not when the server starts."""
    with pytest.raises(ConfigurationError) as caught:
        Server(Main, host=host, allowed_hosts=["mcp.example"])
    assert str(caught.value) == "Server: host must be an IP address or a host name"


@pytest.mark.parametrize("port", [-1, 65_536, True, "8000", 8000.0, None])
def test_the_port_must_be_an_int_from_0_to_65535(port: Any) -> None:
    with pytest.raises(ConfigurationError) as caught:
        Server(Main, port=port)
    assert str(caught.value) == "Server: port must be an int from 0 to 65535"


@pytest.mark.parametrize("port", [0, 1, 65_535])
def test_port_bounds(port: int) -> None:
    server = Server(Main, port=port)
    assert server.port == port
    assert server.engine.port == (port or None)  # 0: the real port is known once bound


@pytest.mark.parametrize("drain", [-0.001, 3_600.001, True, "30", None])
def test_the_drain_must_be_a_number_from_0_to_3600(drain: Any) -> None:
    with pytest.raises(ConfigurationError) as caught:
        Server(Main, drain_seconds=drain)
    assert str(caught.value) == "Server: drain_seconds must be a number from 0 to 3600"


@pytest.mark.parametrize("drain", [0, 0.5, 3_600])
def test_drain_bounds_and_configured_keeps_the_drain(drain: float) -> None:
    server = Server(Main, drain_seconds=drain)
    assert server.drain_seconds == drain
    assert server.configured(port=9001).drain_seconds == drain


@pytest.mark.parametrize("limits", [None, {}, "DEFAULT"])
def test_limits_must_be_limits(limits: Any) -> None:
    with pytest.raises(ConfigurationError) as caught:
        Server(Main, limits=limits)
    assert str(caught.value) == "Server: limits must be a Limits"


def test_engine_refusals_reach_the_caller() -> None:
    with pytest.raises(ConfigurationError, match=r"^cors must be a CorsPolicy or None$"):
        Server(Main, cors="*")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"^allowed_hosts: each host"):
        Server(Main, allowed_hosts=[""])


# --- configured, asgi, where --------------------------------------------------------------------


def test_configured_keeps_every_option() -> None:
    asked: list[str] = []

    def admission(request: AdmissionRequest) -> Admitted:
        asked.append(request.method)
        return Admitted(identity="alice")

    limits = Limits().replace(max_request_bytes=4096)
    original = Server(
        [Main, Other],
        host="0.0.0.0",
        port=8000,
        allowed_hosts=("mcp.example",),
        cors=CorsPolicy.origins("https://app.example"),
        admission=admission,
        limits=limits,
        page_size=1,
        tool_list_cache=CachePolicy(5000, "public"),
        discover_cache=CachePolicy(7000, "public"),
    )
    moved = original.configured(port=9001)
    assert (moved.host, moved.port) == ("0.0.0.0", 9001) and moved is not original
    assert moved.registry is original.registry
    assert moved.engine.limits is limits
    assert moved.where() == "http://0.0.0.0:9001"
    assert (original.host, original.port) == ("0.0.0.0", 8000)

    headers = {"Host": "mcp.example", "Origin": "https://app.example"}
    with TestClient(moved) as client:
        listed = client.post(
            "/mcp",
            stateless_request("tools/list"),
            headers={**stateless_headers("tools/list"), **headers},
        )
        called = client.post(
            "/mcp",
            stateless_request("tools/call", {"name": "identity", "arguments": {}}),
            headers={**stateless_headers("tools/call", "identity"), **headers},
        )
        discovered = client.post(
            "/mcp",
            stateless_request("server/discover"),
            headers={**stateless_headers("server/discover"), **headers},
        )
        too_large = client.post(
            "/mcp", b" " * 5000, headers={**stateless_headers("server/discover"), **headers}
        )
    assert listed.status == called.status == discovered.status == 200
    assert listed.header("access-control-allow-origin") == "https://app.example"
    page: Any = listed.json
    assert [item["name"] for item in page["result"]["tools"]] == ["identity"]  # page_size 1
    assert "nextCursor" in page["result"]
    assert (page["result"]["ttlMs"], page["result"]["cacheScope"]) == (5000, "public")
    found: Any = discovered.json
    assert (found["result"]["ttlMs"], found["result"]["cacheScope"]) == (7000, "public")
    answer: Any = called.json
    assert answer["result"]["content"] == [{"type": "text", "text": "'alice'"}]
    assert asked == ["tools/list", "tools/call", "server/discover"]
    assert too_large.status == 413
    valid(MODERN, "tools/list", [page])
    valid(MODERN, "server/discover", [found])


def test_configured_host_and_port_each_default_to_the_current_ones() -> None:
    server = Server(Main, host="::1", port=8123)
    assert (server.configured().host, server.configured().port) == ("::1", 8123)
    assert (server.configured(host="localhost").host, server.configured(port=0).port) == (
        "localhost",
        0,
    )
    with pytest.raises(ConfigurationError) as caught:
        server.configured(host="0.0.0.0")
    assert str(caught.value) == LOOPBACK_RULE


def test_asgi_returns_the_one_app() -> None:
    server = Server(Main)
    app = server.asgi()
    assert isinstance(app, McpApp) and server.asgi() is app
    assert server.configured(port=8001).asgi() is not app


@pytest.mark.parametrize(
    ("host", "port", "where"),
    [
        ("::1", 8123, "http://[::1]:8123"),
        ("::", 80, "http://[::]:80"),
        ("localhost", 9000, "http://localhost:9000"),
        ("127.0.0.1", 0, "http://127.0.0.1:0"),
    ],
)
def test_where_brackets_ipv6_hosts(host: str, port: int, where: str) -> None:
    server = Server(Main, host=host, port=port, allowed_hosts=["x.example"])
    assert server.where() == where


# --- serving HTTP -------------------------------------------------------------------------------


def post(port: int, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
    try:
        connection.request("POST", path, body, headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def capture_uvicorn(monkeypatch: pytest.MonkeyPatch) -> list[uvicorn.Server]:
    """Keep each uvicorn server ``Server`` builds, so a test can ask it to exit."""
    built: list[uvicorn.Server] = []
    original: Callable[[Server], Any] = Server._uvicorn

    def keep(self: Server) -> Any:
        instance = original(self)
        built.append(instance)
        return instance

    monkeypatch.setattr(Server, "_uvicorn", keep)
    return built


def test_serve_binds_port_0_answers_a_real_request_and_learns_its_port(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcpkit")
    built = capture_uvicorn(monkeypatch)
    server = Server(Main, port=0)
    body = json.dumps(stateless_request("tools/call", {"name": "revision", "arguments": {}}))
    headers = stateless_headers("tools/call", "revision")

    async def scenario() -> tuple[int, list[tuple[int, bytes]]]:
        task = asyncio.create_task(server.serve())
        while server.engine.port is None:
            assert not task.done()
            await asyncio.sleep(0.01)
        port = server.engine.port
        answers = [
            await asyncio.to_thread(
                post, port, "/mcp", body.encode(), {**headers, "Host": f"127.0.0.1:{port}"}
            ),
            await asyncio.to_thread(
                post, port, "/mcp", body.encode(), {**headers, "Host": "localhost:1"}
            ),
        ]
        built[0].should_exit = True
        await asyncio.wait_for(task, WAIT)
        return port, answers

    port, answers = asyncio.run(scenario())
    assert port > 0 and server.port == 0
    assert server.where() == f"http://127.0.0.1:{port}"
    (status, raw), (wrong_port, _) = answers
    assert status == 200
    message = json.loads(raw)
    assert message == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "content": [{"type": "text", "text": MODERN}],
            "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "main", "version": "1.0.0"}},
        },
    }
    valid(MODERN, "tools/call", [message])
    assert wrong_port == 421  # a loopback Host must name the port really bound
    served = [r.getMessage() for r in caplog.records if r.name == "mcpkit"]
    assert served == [
        f"mcpkit: serving main 1.0.0 at http://127.0.0.1:{port}/mcp",
        "mcpkit: stopped: 0 call(s) finished",
    ]


def test_serve_refuses_a_busy_port_before_claiming_to_serve(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The socket is bound before uvicorn starts: a taken port is an ``OSError`` saying what
    to do, and nothing is logged as served."""
    caplog.set_level(logging.INFO, logger="mcpkit")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = Server(Main, port=port)
        with pytest.raises(OSError) as caught:
            asyncio.run(asyncio.wait_for(server.serve(), WAIT))
        with pytest.raises(OSError) as again:
            server.run()
    assert caught.value.errno == again.value.errno == errno.EADDRINUSE
    assert (
        caught.value.strerror
        == again.value.strerror
        == (
            f"Server: cannot listen on http://127.0.0.1:{port}: Address already in use (another "
            "process listens there: stop it or choose another port)"
        )
    )
    assert [r for r in caplog.records if r.name == "mcpkit"] == []


@pytest.mark.parametrize(
    ("host", "family"), [("127.0.0.1", socket.AF_INET), ("::1", socket.AF_INET6)]
)
def test_the_listening_sockets_are_tcp_as_asyncio_binds_them(host: str, family: int) -> None:
    """asyncio sets TCP_NODELAY on an accepted connection only when its listener's protocol is
    TCP: without it a response written in two parts waits for the client's delayed ACK."""
    listeners = Server(Main, host=host, port=0)._listen()
    try:
        (listener,) = listeners
        assert (listener.family, listener.proto) == (family, socket.IPPROTO_TCP)
        assert listener.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR)
        assert listener.getsockname()[1] > 0
        if family == socket.AF_INET6:
            assert listener.getsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY)
    finally:
        for listener in listeners:
            listener.close()


def test_an_address_this_machine_does_not_have_is_refused_with_a_hint() -> None:
    server = Server(Main, host="192.0.2.1", port=0, allowed_hosts=["x.example"])  # TEST-NET-1
    with pytest.raises(OSError) as caught:
        server.run()
    assert caught.value.strerror == (
        "Server: cannot listen on http://192.0.2.1:0: Cannot assign requested address (not an "
        "address of this machine: choose one it has, or 127.0.0.1)"
    )


def test_a_failed_application_start_up_is_an_os_error_from_serve(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """uvicorn exits its task when the application's lifespan start-up fails; ``serve()``
    raises ``OSError`` instead, and nothing is logged as served."""
    caplog.set_level(logging.INFO, logger="mcpkit")

    async def failing(self: Any) -> None:
        raise RuntimeError("no start")

    monkeypatch.setattr(type(Server(Main).engine), "startup", failing)
    with pytest.raises(OSError, match="could not start"):
        asyncio.run(asyncio.wait_for(Server(Main, port=0).serve(), WAIT))
    assert [r for r in caplog.records if r.getMessage().startswith("mcpkit: serving")] == []


def test_serve_calls_started_once_serving(monkeypatch: pytest.MonkeyPatch) -> None:
    built = capture_uvicorn(monkeypatch)
    server = Server([Main, Other], port=0)
    seen: list[str] = []

    async def scenario() -> None:
        task = asyncio.create_task(server.serve(started=lambda: seen.append(server.where())))
        while not seen:
            assert not task.done()
            await asyncio.sleep(0.01)
        built[0].should_exit = True
        await asyncio.wait_for(task, WAIT)

    asyncio.run(scenario())
    assert seen == [f"http://127.0.0.1:{server.engine.port}"]


def test_run_starts_uvicorn_with_the_fast_stack(monkeypatch: pytest.MonkeyPatch) -> None:
    configs: list[uvicorn.Config] = []
    bound: list[socket.socket] = []
    handed: list[object] = []

    def record(self: uvicorn.Server, sockets: object = None) -> None:
        configs.append(self.config)
        handed.append(sockets)

    def listen(self: Server) -> list[socket.socket]:
        bound.append(socket.socket())  # unbound: the address is the config's to show
        return bound[-1:]

    monkeypatch.setattr(uvicorn.Server, "run", record)
    monkeypatch.setattr(Server, "_listen", listen)
    server = Server(Main, host="::1", port=8765)
    server.run()
    (config,) = configs
    assert handed == [bound[:1]] and bound[0].fileno() == -1  # handed to uvicorn, then closed
    assert config.app is server.asgi()
    assert (config.host, config.port) == ("::1", 8765)
    assert (config.loop, config.lifespan) == ("asyncio", "on")
    assert isinstance(config.http, type) and issubclass(config.http, GuardedProtocol)
    assert config.http.max_connections == 8192 and config.http.idle_connections == {}
    assert (config.access_log, config.server_header) == (False, False)
    assert (config.timeout_keep_alive, config.timeout_graceful_shutdown) == (5, 5)
    assert config.limit_concurrency is None  # the guarded protocol caps connections
    assert config.proxy_headers is False  # forwarded headers are never trusted
    server.configured(loop="uvloop").run()
    assert configs[1].loop == "uvloop" and (configs[1].host, configs[1].port) == ("::1", 8765)
    assert configs[1].http is not config.http  # each server has its own idle registry
    limited = Server(Main, limits=Limits(max_connections=7, keep_alive_timeout_seconds=0.5))
    limited.run()
    assert configs[2].timeout_keep_alive == 0.5
    assert isinstance(configs[2].http, type) and issubclass(configs[2].http, GuardedProtocol)
    assert configs[2].http.max_connections == 7

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "httptools" else real(name, *a),
    )
    with pytest.raises(ConfigurationError) as caught:
        server.run()
    assert str(caught.value) == (
        "Server: serving HTTP needs the httptools package (pip install 'uvicorn[standard]'); "
        "the connection limits are enforced on it, not on h11"
    )
    assert len(configs) == 3


def test_the_loop_is_asyncio_unless_uvloop_is_asked_for_and_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Server(Main).loop == "asyncio"
    chosen = Server(Main, loop="uvloop")
    assert chosen.loop == "uvloop"
    assert chosen.configured(port=9002).loop == "uvloop"  # kept unless asked otherwise
    assert chosen.configured(loop="asyncio").loop == "asyncio"
    for junk in ("libuv", "", None, 1):
        with pytest.raises(ConfigurationError) as caught:
            Server(Main, loop=junk)  # type: ignore[arg-type]
        assert str(caught.value) == "Server: loop must be 'asyncio' or 'uvloop'"
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "uvloop" else real(name, *a)
    )
    with pytest.raises(ConfigurationError) as caught:
        Server(Main, loop="uvloop")
    assert str(caught.value) == "Server: loop='uvloop' needs the uvloop package installed"
    assert Server(Main).loop == "asyncio"  # the default never needs it


# --- stdio --------------------------------------------------------------------------------------


def test_stdio_connection_serves_the_only_endpoint_by_default() -> None:
    session = Server(Main).stdio_connection()
    assert isinstance(session, StdioConnection)
    written: list[bytes] = []

    async def write(message: bytes) -> None:
        written.append(message)

    request = stateless_request("tools/call", {"name": "revision", "arguments": {}})
    asyncio.run(session.receive(json.dumps(request).encode(), write))
    assert json.loads(written[0])["result"]["content"] == [{"type": "text", "text": MODERN}]


def test_stdio_connection_selects_an_endpoint_by_its_exact_path() -> None:
    server = Server([Main, Other])
    written: list[bytes] = []

    async def write(message: bytes) -> None:
        written.append(message)

    async def scenario() -> None:
        for path in ("/other", "/mcp"):
            line = json.dumps(handshake_request("initialize", {"protocolVersion": NOVEMBER}))
            await server.stdio_connection(path).receive(line.encode(), write)

    asyncio.run(scenario())
    other, main = (json.loads(message) for message in written)
    assert other["error"]["code"] == -32022  # /other serves 2026-07-28 only
    assert main["result"]["serverInfo"] == {"name": "main", "version": "1.0.0"}


def test_stdio_connection_refusals() -> None:
    server = Server([Main, Other])
    with pytest.raises(ConfigurationError) as caught:
        server.stdio_connection()
    assert str(caught.value) == "Server.stdio: name the endpoint path to serve"
    for path in ("/nope", "/mcp/", "/MCP", ""):
        with pytest.raises(ConfigurationError) as caught:
            server.stdio_connection(path)
        assert str(caught.value) == "Server.stdio: no endpoint has that path"


def test_run_stdio_hands_the_transport_a_session_factory(monkeypatch: pytest.MonkeyPatch) -> None:
    handed: list[tuple[Callable[[], object], int]] = []

    def fake_run_stdio(
        factory: Callable[[], object], *, max_line_bytes: int, **others: object
    ) -> None:
        handed.append((factory, max_line_bytes))

    monkeypatch.setattr(mcpkit.transports, "run_stdio", fake_run_stdio)
    limits = Limits().replace(max_request_bytes=65_536)
    server = Server([Main, Other], limits=limits)
    server.run_stdio("/other")
    ((factory, max_line_bytes),) = handed
    assert max_line_bytes == 65_536
    first, second = factory(), factory()
    assert isinstance(first, StdioConnection) and isinstance(second, StdioConnection)
    assert first is not second


def test_run_stdio_refuses_a_bad_path_before_touching_stdin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    handed: list[object] = []
    monkeypatch.setattr(mcpkit.transports, "run_stdio", lambda *a, **k: handed.append(a))
    server = Server([Main, Other])
    with pytest.raises(ConfigurationError, match=r"^Server.stdio: no endpoint has that path$"):
        server.run_stdio("/nope")
    with pytest.raises(ConfigurationError, match=r"^Server.stdio: name the endpoint path"):
        server.run_stdio()
    assert handed == []


TINY = """\
from mcpkit import CompleteResult, Revision, Server, endpoint, tool


@endpoint(path="/mcp", name="tiny", version="1.0.0",
          revisions={Revision.V2025_11_25, Revision.V2026_07_28})
class Tiny:
    @tool(name="echo")
    def echo(self, text: str) -> CompleteResult:
        print("stray output from the tool")
        return CompleteResult.from_tool_text(text)


server = Server(Tiny)
"""


def test_python_m_mcpkit_serve_stdio_answers_on_stdout(tmp_path: Path) -> None:
    target = tmp_path / "tiny.py"
    target.write_text(textwrap.dedent(TINY))
    lines = [
        handshake_request("initialize", {"protocolVersion": NOVEMBER, "capabilities": {},
                                      "clientInfo": {"name": "t", "version": "1"}}, id=1),
        handshake_request("notifications/initialized", id=None),
        handshake_request("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, id=2),
        stateless_request("tools/call", {"name": "echo", "arguments": {"text": "new"}}, id=3),
    ]  # fmt: skip
    stdin = b"".join(json.dumps(line).encode() + b"\n" for line in lines) + b"{oops\n"
    completed = subprocess.run(
        [sys.executable, "-X", "dev", "-m", "mcpkit", "serve", str(target), "--stdio"],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    answers = [json.loads(line) for line in completed.stdout.splitlines()]
    by_id = {answer.get("id"): answer for answer in answers}
    assert len(answers) == 4 and set(by_id) == {1, 2, 3, None}
    assert by_id[1]["result"]["protocolVersion"] == NOVEMBER
    assert by_id[2] == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {"content": [{"type": "text", "text": "hi"}]},
    }
    assert by_id[3]["result"]["content"] == [{"type": "text", "text": "new"}]
    assert by_id[3]["result"]["resultType"] == "complete"
    assert by_id[None] == {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}}
    valid(NOVEMBER, "initialize", [by_id[1]])
    valid(NOVEMBER, "tools/call", [by_id[2], by_id[None]])
    valid(MODERN, "tools/call", [by_id[3]])
    stderr = completed.stderr.decode()
    assert stderr.count("stray output from the tool") == 2
    assert "Warning" not in stderr  # -X dev reports unclosed files and transports
    assert "serving on" not in stderr


# --- build_engine refusals ----------------------------------------------------------------------


def sanitizer(
    ctx: RequestContext, name: str, arguments: JsonObject, result: CompleteResult
) -> CompleteResult:
    return result


async def async_sanitizer(
    ctx: RequestContext, name: str, arguments: JsonObject, result: CompleteResult
) -> CompleteResult:
    return result


class AsyncSanitizer:
    async def __call__(
        self, ctx: RequestContext, name: str, arguments: JsonObject, result: CompleteResult
    ) -> CompleteResult:
        return result


class PlainSanitizer:
    def __call__(
        self, ctx: RequestContext, name: str, arguments: JsonObject, result: CompleteResult
    ) -> CompleteResult:
        return result


@pytest.mark.parametrize("registry", [None, Main, programmatic(), [programmatic()], "registry"])
def test_build_engine_needs_a_registry(registry: Any) -> None:
    with pytest.raises(ConfigurationError) as caught:
        build_engine(registry, EngineSettings())
    assert str(caught.value) == "build_engine: registry must be an EndpointRegistry"


@pytest.mark.parametrize("cors", ["*", True, lambda origin, request: True, CorsPolicy])
def test_cors_must_be_a_cors_policy(cors: Any) -> None:
    registry = registry_of(Main)
    with pytest.raises(ConfigurationError) as caught:
        build_engine(registry, EngineSettings(cors=cors))
    assert str(caught.value) == "cors must be a CorsPolicy or None"
    with pytest.raises(ConfigurationError, match=r"^cors must be a CorsPolicy or None$"):
        Server(registry, cors=cors)


@pytest.mark.parametrize("hook", ["admission", "interceptor", "sanitizer"])
@pytest.mark.parametrize("value", ["allow", 1, Admitted()])
def test_hooks_must_be_callable(hook: str, value: object) -> None:
    registry = registry_of(Main)
    settings: dict[str, Any] = {hook: value}
    with pytest.raises(ConfigurationError) as caught:
        build_engine(registry, EngineSettings(**settings))
    assert str(caught.value) == f"{hook} must be callable or None"
    with pytest.raises(ConfigurationError, match=rf"^{hook} must be callable or None$"):
        Server(registry, **settings)


@pytest.mark.parametrize("hook", [async_sanitizer, AsyncSanitizer()])
def test_an_async_sanitizer_is_refused(hook: Any) -> None:
    registry = registry_of(Main)
    with pytest.raises(ConfigurationError) as caught:
        build_engine(registry, EngineSettings(sanitizer=hook))
    assert str(caught.value) == "sanitizer must be a plain def, not async def"


@pytest.mark.parametrize("hook", [sanitizer, PlainSanitizer()])
def test_a_plain_sanitizer_and_every_hook_are_accepted(hook: Any) -> None:
    async def interceptor(ctx: RequestContext, proceed: Callable[[], Any]) -> Any:
        return await proceed()

    engine = build_engine(
        registry_of(Main),
        EngineSettings(
            sanitizer=hook,
            interceptor=interceptor,
            admission=lambda request: Admitted(),
            cors=CorsPolicy.loopback(),
            allowed_hosts=frozenset({"MCP.example", "other.example"}),
        ),
    )
    assert engine.registry.endpoint_for_path("/mcp") is not None


@pytest.mark.parametrize("hosts", [[""], [5], [None], ["bücher.example"], ["ok.example", b"x"]])
def test_allowed_hosts_must_be_non_empty_ascii_names(hosts: list[Any]) -> None:
    registry = registry_of(Main)
    with pytest.raises(ConfigurationError) as caught:
        build_engine(registry, EngineSettings(allowed_hosts=frozenset(hosts)))
    assert str(caught.value) == "allowed_hosts: each host must be a non-empty ASCII str"
    with pytest.raises(ConfigurationError, match=r"^allowed_hosts: each host must be"):
        Server(registry, host="0.0.0.0", allowed_hosts=hosts)


def test_allowed_hosts_are_compared_case_insensitively() -> None:
    server = Server(Main, allowed_hosts=["MCP.Example"])
    body = stateless_request("server/discover")
    headers = stateless_headers("server/discover")
    with TestClient(server) as client:
        answers = [
            client.post("/mcp", body, headers={**headers, "Host": host}).status
            for host in ("mcp.example", "MCP.EXAMPLE:443", "mcp.example.evil")
        ]
    assert answers == [200, 200, 421]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_sessions", 100),
        ("max_sessions_per_owner", 4),
        ("session_idle_timeout_seconds", 900.0),
        ("session_absolute_timeout_seconds", 86_400.0),
        ("max_session_metadata_bytes", 1024),
        ("max_active_calls_per_session", 8),
        ("max_anonymous_sessions", 0),
    ],
)
def test_session_limits_are_accepted(field: str, value: float) -> None:
    """The session fields bound the sessions of endpoints that keep them."""
    limits = Limits().replace(**{field: value})
    assert Server(Main, limits=limits).engine.limits == limits


def test_a_session_store_without_an_endpoint_that_keeps_sessions_is_refused() -> None:
    with pytest.raises(ConfigurationError) as caught:
        Server(Main, sessions=mcpkit.MemorySessionStore(Limits()))
    assert str(caught.value) == (
        "sessions: no endpoint keeps 2025 sessions; give an endpoint session_revisions or "
        "leave sessions unset"
    )


@endpoint(
    path="/mcp",
    name="kept",
    version="1.0.0",
    revisions={Revision.V2025_11_25},
    session_revisions={Revision.V2025_11_25},
)
class Kept:
    @mcpkit.resource(uri="test://doc", name="doc")
    def doc(self) -> mcpkit.ResourceOutput:
        return mcpkit.ResourceOutput(
            contents=(mcpkit.TextResourceContents(uri="test://doc", text=""),)
        )


def test_a_configured_copy_shares_the_sessions_and_their_subscriptions() -> None:
    """``mcpkit serve --port`` serves a ``configured()`` copy, while the application still holds
    the server it built: its ``notify_resource_updated`` must reach the copy's sessions."""
    original = Server(Kept)
    moved = original.configured(port=9001)
    assert moved.engine.pipeline.sessions is original.engine.pipeline.sessions
    assert moved.engine.broadcaster is original.engine.broadcaster
    init = {"protocolVersion": "2025-11-25", "capabilities": {}}
    with TestClient(moved) as client:
        opened = client.post("/mcp", handshake_request("initialize", init))
        session_id = opened.header("mcp-session-id")
        assert session_id is not None
        headers = {"mcp-session-id": session_id}
        subscribe = handshake_request("resources/subscribe", {"uri": "test://doc"})
        assert client.post("/mcp", subscribe, headers=headers).status == 200
        original.notify_resource_updated("test://doc")
        store = moved.engine.pipeline.sessions
        assert store is not None and moved.engine.deployment is original.engine.deployment
        found = asyncio.run(store.get(session_id))
        assert found is not None and len(found.take()) == 1


def test_an_event_store_without_an_endpoint_that_keeps_sessions_is_refused() -> None:
    with pytest.raises(ConfigurationError) as caught:
        Server(Main, events=mcpkit.MemoryEventStore(Limits()))
    assert str(caught.value) == (
        "events: no endpoint keeps 2025 sessions, so no stream is resumable; give an endpoint "
        "session_revisions or leave events unset"
    )
    store = mcpkit.MemoryEventStore(Limits())
    assert Server(Kept, events=store).engine.pipeline.events is store
