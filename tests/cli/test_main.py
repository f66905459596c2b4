"""``mcpkit serve FILE_OR_MODULE[:ATTR] [--host H] [--port P] [--loop L] [--stdio] [--path P]``
and ``python -m mcpkit``: what a target names, the address overrides, ``--stdio``, the exit status
and message of every refusal, and one real process serving HTTP.

``main()`` runs in-process with ``Server.run`` / ``Server.run_stdio`` replaced by recorders, so
coverage sees it (the recorder announces the endpoints as the real ``run`` does once serving);
subprocess tests serve a real socket, and stdio up to its end of input.
"""

from __future__ import annotations

import http.client
import importlib
import json
import logging
import runpy
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Server
from mcpkit.cli import load_target, main
from mcpkit.json import from_python
from mcpkit.testing import TestClient, stateless_headers, stateless_request

from ..wire import assert_valid

ROOT = Path(__file__).resolve().parents[2]
MODERN = "2026-07-28"
READY_SECONDS = 30.0
STOP_SECONDS = 10.0

ENDPOINTS = """\
from mcpkit import (
    CompleteResult, Endpoint, EndpointRegistry, Implementation, Revision, Server, endpoint, tool,
)


@endpoint(path="/mcp", name="{name}", version="1.0.0",
          revisions={{Revision.V2025_11_25, Revision.V2026_07_28}})
class Main:
    @tool(name="echo")
    def echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)


@endpoint(path="/other", name="other", version="2.0.0", revisions={{Revision.V2026_07_28}})
class Other:
    @tool(name="echo")
    def echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)


plain = Endpoint("/plain", Implementation("plain", "3.0.0"), {{Revision.V2026_07_28}})
both = [Main, Other]
nothing = None
junk = 42
"""


# --- isolation ----------------------------------------------------------------------------------


class Recorded:
    """What ``Server.run`` and ``Server.run_stdio`` were asked to do instead of serving."""

    def __init__(self, caplog: pytest.LogCaptureFixture) -> None:
        self.runs: list[Server] = []
        self.sockets: list[list[socket.socket] | None] = []  # what ``run`` was handed
        self.stdio: list[tuple[Server, str | None]] = []
        self.cut_off = False  # what ``run_stdio`` returns
        self.failure: BaseException | None = None  # what ``run`` raises instead of serving
        self._caplog = caplog

    def announced(self) -> list[str]:
        """The ``serving`` lines logged since the last call."""
        lines = [
            r.getMessage()
            for r in self._caplog.records
            if r.name == "mcpkit" and r.getMessage().startswith("mcpkit: serving")
        ]
        self._caplog.clear()
        return lines


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Undo what loading targets changes: ``sys.path``, the loaded modules and the root logger
    that ``main`` configures."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith(("mcpkit_target_", "cli_target_")):
            del sys.modules[name]
    root.handlers[:], root.level = handlers, level


@pytest.fixture
def recorded(
    isolated: None, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> Recorded:
    """Record instead of serving; announce as the real ``run`` does once it serves."""
    caplog.set_level(logging.INFO, logger="mcpkit")
    calls = Recorded(caplog)

    def run(
        self: Server,
        *,
        started: Callable[[], object] | None = None,
        sockets: list[socket.socket] | None = None,
    ) -> None:
        if calls.failure is not None:
            raise calls.failure
        calls.runs.append(self)
        calls.sockets.append(sockets)
        self._announce(self.port, started)

    def run_stdio(self: Server, path: str | None = None) -> bool:
        calls.stdio.append((self, path))
        return calls.cut_off

    monkeypatch.setattr(Server, "run", run)
    monkeypatch.setattr(Server, "run_stdio", run_stdio)
    return calls


def endpoints_file(directory: Path, stem: str, *extra: str, name: str = "main") -> Path:
    path = directory / f"{stem}.py"
    path.write_text(ENDPOINTS.format(name=name) + "\n".join(textwrap.dedent(e) for e in extra))
    return path


def served(server: Server) -> list[str]:
    return [endpoint.path for endpoint in server.registry]


# --- files --------------------------------------------------------------------------------------


def test_a_file_is_served_from_its_server_attribute(
    tmp_path: Path, recorded: Recorded, capsys: pytest.CaptureFixture[str]
) -> None:
    path = endpoints_file(
        tmp_path, "with_server", "server = Server(Main, port=8123)", "registry = Other"
    )
    assert main(["serve", str(path)]) == 0
    module = sys.modules["mcpkit_target_with_server"]
    assert recorded.runs == [module.server] and recorded.stdio == []
    assert served(recorded.runs[0]) == ["/mcp"]  # ``server`` wins over ``registry``
    assert capsys.readouterr().err == ""  # the server announces itself once it serves
    assert recorded.announced() == ["mcpkit: serving main 1.0.0 at http://127.0.0.1:8123/mcp"]
    assert str(path.parent) == sys.path[0]  # its directory is importable, for its own imports


def test_without_a_server_attribute_the_registry_is_served(
    tmp_path: Path, recorded: Recorded, capsys: pytest.CaptureFixture[str]
) -> None:
    path = endpoints_file(tmp_path, "with_registry", "server = None", "registry = both")
    assert main(["serve", str(path)]) == 0
    (server,) = recorded.runs
    assert isinstance(server, Server) and served(server) == ["/mcp", "/other"]
    assert (server.host, server.port) == ("127.0.0.1", 8000)
    assert recorded.announced() == [
        "mcpkit: serving main 1.0.0 at http://127.0.0.1:8000/mcp",
        "mcpkit: serving other 2.0.0 at http://127.0.0.1:8000/other",
    ]


@pytest.mark.parametrize(
    ("attribute", "paths"),
    [("Main", ["/mcp"]), ("plain", ["/plain"]), ("both", ["/mcp", "/other"])],
)
def test_an_explicit_attribute_names_a_class_an_endpoint_or_a_list(
    tmp_path: Path, recorded: Recorded, attribute: str, paths: list[str]
) -> None:
    path = endpoints_file(tmp_path, f"explicit_{attribute.lower()}")
    assert main(["serve", f"{path}:{attribute}"]) == 0
    (server,) = recorded.runs
    assert served(server) == paths


def test_load_target_returns_a_server_as_is_and_wraps_anything_else(
    tmp_path: Path, recorded: Recorded
) -> None:
    path = endpoints_file(tmp_path, "loaded", "server = Server(Other)")
    server = load_target(str(path))
    assert server is sys.modules["mcpkit_target_loaded"].server
    wrapped = load_target(f"{path}:Main")
    assert isinstance(wrapped, Server) and served(wrapped) == ["/mcp"]


@pytest.mark.parametrize(
    ("attribute", "names"), [(":missing", "'missing'"), (":nothing", "'nothing'")]
)
def test_a_missing_attribute_exits_2_naming_it(
    tmp_path: Path,
    recorded: Recorded,
    capsys: pytest.CaptureFixture[str],
    attribute: str,
    names: str,
) -> None:
    path = endpoints_file(tmp_path, f"missing{len(attribute)}")
    assert main(["serve", f"{path}{attribute}"]) == 2
    assert capsys.readouterr().err == f"mcpkit: mcpkit serve: {path} has no {names} to serve\n"
    assert recorded.runs == []


def test_without_an_attribute_the_one_servable_value_is_served(
    tmp_path: Path, recorded: Recorded
) -> None:
    path = tmp_path / "builder_only.py"
    path.write_text(
        "import mcpkit\n"
        "from mcpkit import Endpoint, Revision\n"  # an imported class is not the module's own
        "_private = mcpkit.EndpointBuilder('hidden', version='1', path='/hidden')\n"
        "notes = mcpkit.EndpointBuilder('notes', version='1.0.0')\n"
        "@notes.tool\n"
        "def ping() -> str:\n"
        "    return 'pong'\n"
    )
    assert main(["serve", str(path)]) == 0
    assert served(recorded.runs[0]) == ["/mcp"]
    assert recorded.announced() == ["mcpkit: serving notes 1.0.0 at http://127.0.0.1:8000/mcp"]


def test_without_an_attribute_several_servable_values_must_be_named(
    tmp_path: Path, recorded: Recorded, capsys: pytest.CaptureFixture[str]
) -> None:
    path = endpoints_file(tmp_path, "several")
    assert main(["serve", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"mcpkit: mcpkit serve: {path} has several things to serve (Main, Other, plain); name "
        f"one, as in {path}:Main\n"
    )
    assert recorded.runs == []


def test_without_an_attribute_a_module_with_nothing_to_serve_says_what_to_define(
    tmp_path: Path, recorded: Recorded, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "empty.py"
    path.write_text("VALUE = 1\n")
    assert main(["serve", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"mcpkit: mcpkit serve: {path} has nothing to serve: define a Server, an "
        "EndpointBuilder, an @endpoint class or an Endpoint at module level, or name one as "
        "FILE_OR_MODULE:ATTR\n"
    )


def test_an_attribute_that_cannot_be_served_exits_2(
    tmp_path: Path, recorded: Recorded, capsys: pytest.CaptureFixture[str]
) -> None:
    path = endpoints_file(tmp_path, "junk")
    assert main(["serve", f"{path}:junk"]) == 2
    assert capsys.readouterr().err == (
        "mcpkit: Server: serve an EndpointRegistry, an Endpoint, an EndpointBuilder, an "
        "@endpoint class or a list of them\n"
    )
    assert recorded.runs == []


@pytest.mark.parametrize("name", ["absent.py", "absent.py:server", "dir/absent.py"])
def test_a_missing_file_exits_2(
    tmp_path: Path,
    recorded: Recorded,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    name: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["serve", name]) == 2
    spec = name.partition(":")[0]
    assert capsys.readouterr().err == f"mcpkit: mcpkit serve: no such file: {spec}\n"
    assert recorded.runs == []


def test_a_refusal_inside_the_file_exits_2(
    tmp_path: Path, recorded: Recorded, capsys: pytest.CaptureFixture[str]
) -> None:
    path = endpoints_file(tmp_path, "refusing", "server = Server(Main, host='0.0.0.0')")
    assert main(["serve", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mcpkit: Server: binding a non-loopback host requires allowed_hosts")


# --- modules ------------------------------------------------------------------------------------


def test_a_module_on_sys_path_is_imported_by_name(
    tmp_path: Path,
    recorded: Recorded,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    endpoints_file(tmp_path, "cli_target_module", "server = Server(Main, port=8124)")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["serve", "cli_target_module"]) == 0
    assert recorded.runs == [sys.modules["cli_target_module"].server]
    assert main(["serve", "cli_target_module:Other", "--port", "8125"]) == 0
    assert served(recorded.runs[1]) == ["/other"] and recorded.runs[1].port == 8125
    assert recorded.announced() == [
        "mcpkit: serving main 1.0.0 at http://127.0.0.1:8124/mcp",
        "mcpkit: serving other 2.0.0 at http://127.0.0.1:8125/other",
    ]


def test_loop_picks_the_event_loop_and_keeps_the_address(
    tmp_path: Path,
    recorded: Recorded,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    endpoints_file(tmp_path, "cli_loop_module", "server = Server(Main, port=8126)")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["serve", "cli_loop_module"]) == 0
    assert main(["serve", "cli_loop_module", "--loop", "uvloop"]) == 0
    assert main(["serve", "cli_loop_module", "--loop", "asyncio", "--port", "8127"]) == 0
    default, fast, moved = recorded.runs
    assert default is sys.modules["cli_loop_module"].server and default.loop == "asyncio"
    assert (fast.loop, fast.port) == ("uvloop", 8126)
    assert (moved.loop, moved.port) == ("asyncio", 8127)
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        main(["serve", "cli_loop_module", "--loop", "libuv"])
    assert exited.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_drain_sets_the_stop_budget_and_keeps_the_rest(
    tmp_path: Path,
    recorded: Recorded,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    endpoints_file(tmp_path, "cli_drain_module", "server = Server(Main, port=8128)")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["serve", "cli_drain_module", "--drain", "2.5"]) == 0
    (drained,) = recorded.runs
    assert (drained.drain_seconds, drained.port) == (2.5, 8128)
    capsys.readouterr()
    assert main(["serve", "cli_drain_module", "--drain", "-1"]) == 2
    assert capsys.readouterr().err == (
        "mcpkit: Server: drain_seconds must be a number from 0 to 3600\n"
    )


def test_a_module_in_the_working_directory_is_found_first(
    tmp_path: Path, recorded: Recorded, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As ``python -m`` and uvicorn do, and a console script (whose ``sys.path[0]`` is its own
    directory) does not by itself."""
    endpoints_file(tmp_path, "cli_target_here", "server = Server(Main, port=8129)")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["/nonexistent-script-dir", *sys.path[1:]])
    assert main(["serve", "cli_target_here"]) == 0
    assert sys.path[0] == str(tmp_path)
    assert main(["serve", "cli_target_here:Other"]) == 0
    assert sys.path.count(str(tmp_path)) == 1  # already first: not put there again
    monkeypatch.setattr(sys, "path", ["", *sys.path[1:]])  # python -c and the REPL: "" is it
    assert main(["serve", "cli_target_here"]) == 0
    assert sys.path[0] == ""
    assert [server.port for server in recorded.runs] == [8129, 8000, 8129]


def test_allowed_host_adds_host_names_and_allows_a_non_loopback_bind(
    tmp_path: Path, recorded: Recorded
) -> None:
    path = endpoints_file(tmp_path, "hosts", "server = Server(Main, allowed_hosts=['own.example'])")
    assert main(["serve", str(path), "--allowed-host", "a.example"]) == 0
    assert main(
        ["serve", f"{path}:Main", "--host", "0.0.0.0", "--allowed-host", "a.example",
         "--allowed-host", "B.example"]
    ) == 0  # fmt: skip
    added, exposed = recorded.runs
    assert added.allowed_hosts == frozenset({"own.example", "a.example"})
    assert (exposed.host, exposed.allowed_hosts) == (
        "0.0.0.0",
        frozenset({"a.example", "B.example"}),
    )
    assert recorded.announced()[-1] == "mcpkit: serving main 1.0.0 at http://0.0.0.0:8000/mcp"
    body = stateless_request("tools/list")
    with TestClient(exposed) as client:
        statuses = [
            client.post("/mcp", body, headers={**stateless_headers("tools/list"), "Host": h}).status
            for h in ("b.example", "own.example")
        ]
    assert statuses == [200, 421]


def test_trusted_proxy_adds_proxies(tmp_path: Path, recorded: Recorded) -> None:
    path = endpoints_file(
        tmp_path, "proxies", "server = Server(Main, trusted_proxies=['10.0.0.5'])"
    )
    assert main(["serve", str(path), "--trusted-proxy", "10.1.0.0/16"]) == 0
    assert main(["serve", f"{path}:Main", "--trusted-proxy", "::1"]) == 0
    assert main(["serve", str(path)]) == 0
    added, fresh, kept = recorded.runs
    assert added.trusted_proxies == ("10.0.0.5", "10.1.0.0/16")
    assert fresh.trusted_proxies == ("::1",)
    assert kept.trusted_proxies == ("10.0.0.5",)
    assert main(["serve", str(path), "--trusted-proxy", "proxy.internal"]) == 2


def test_debug_turns_development_mode_on_for_loopback_only(
    tmp_path: Path, recorded: Recorded, capsys: pytest.CaptureFixture[str]
) -> None:
    path = endpoints_file(tmp_path, "debugged", "server = Server(Main, port=8130)")
    assert main(["serve", str(path), "--debug"]) == 0
    assert main(["serve", str(path), "--stdio", "--debug"]) == 0
    assert main(["serve", str(path), "--stdio"]) == 0
    (debugged,) = recorded.runs
    assert debugged.debug is True and debugged.port == 8130
    assert [server.debug for server, _ in recorded.stdio] == [True, False]
    capsys.readouterr()
    argv = ["serve", str(path), "--debug", "--host", "0.0.0.0", "--allowed-host", "x.example"]
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith("mcpkit: Server: debug=True tells clients")


def test_ready_file_gets_the_endpoints_once_serving(tmp_path: Path, recorded: Recorded) -> None:
    path = endpoints_file(tmp_path, "ready", "server = Server(both)")
    ready = tmp_path / "ready.json"
    assert main(["serve", str(path), "--port", "9123", "--ready-file", str(ready)]) == 0
    assert json.loads(ready.read_text()) == [
        {"name": "main", "version": "1.0.0", "path": "/mcp", "url": "http://127.0.0.1:9123/mcp"},
        {
            "name": "other",
            "version": "2.0.0",
            "path": "/other",
            "url": "http://127.0.0.1:9123/other",
        },
    ]
    assert not (tmp_path / "ready.json.partial").exists()


def test_an_address_that_cannot_be_bound_exits_2_in_one_line(
    tmp_path: Path, recorded: Recorded, capsys: pytest.CaptureFixture[str]
) -> None:
    path = endpoints_file(tmp_path, "busy", "server = Server(Main)")
    recorded.failure = OSError(98, "Server: cannot listen on http://127.0.0.1:8000: busy")
    assert main(["serve", str(path)]) == 2
    assert capsys.readouterr().err == (
        "mcpkit: Server: cannot listen on http://127.0.0.1:8000: busy\n"
    )
    recorded.failure = OSError("no errno")
    assert main(["serve", str(path)]) == 2
    assert capsys.readouterr().err == "mcpkit: no errno\n"
    assert recorded.announced() == []


def test_a_failed_application_start_up_exits_2(
    tmp_path: Path, recorded: Recorded, capsys: pytest.CaptureFixture[str]
) -> None:
    path = endpoints_file(tmp_path, "no_start", "server = Server(Main)")
    recorded.failure = SystemExit(3)  # uvicorn's, when the lifespan start-up failed
    assert main(["serve", str(path)]) == 2
    assert capsys.readouterr().err == ("mcpkit: the server could not start (the error is above)\n")


def test_an_interrupt_outside_the_servers_own_handling_is_a_clean_stop(
    tmp_path: Path, recorded: Recorded, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C while the target is still loading: no traceback, status 0."""
    path = endpoints_file(tmp_path, "interrupted", "raise KeyboardInterrupt")
    assert main(["serve", str(path)]) == 0
    assert capsys.readouterr().err == "mcpkit: stopped\n"


def test_an_unknown_module_exits_2_naming_it(
    recorded: Recorded, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "no_such_module_for_mcpkit"]) == 2
    assert capsys.readouterr().err == (
        "mcpkit: mcpkit serve: no module named 'no_such_module_for_mcpkit'\n"
    )
    assert recorded.runs == []


def test_a_module_whose_own_import_fails_is_not_mistaken_for_a_missing_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "cli_broken_module.py").write_text("import no_such_dependency_for_mcpkit\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="no_such_dependency_for_mcpkit"):
        main(["serve", "cli_broken_module"])


def test_a_package_module_path_is_imported(
    tmp_path: Path, recorded: Recorded, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "cli_target_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    endpoints_file(package, "app", "registry = Main")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["serve", "cli_target_pkg.app:registry"]) == 0
    assert served(recorded.runs[0]) == ["/mcp"]


# --- address overrides and stdio ----------------------------------------------------------------


def test_host_and_port_override_the_servers_address(
    tmp_path: Path, recorded: Recorded, capsys: pytest.CaptureFixture[str]
) -> None:
    path = endpoints_file(tmp_path, "overrides", "server = Server(Main, port=8123)")
    assert main(["serve", str(path), "--host", "::1", "--port", "9000"]) == 0
    assert main(["serve", str(path), "--port", "0"]) == 0
    assert main(["serve", str(path), "--host", "localhost"]) == 0
    addresses = [(server.host, server.port) for server in recorded.runs]
    assert addresses == [("::1", 9000), ("127.0.0.1", 0), ("localhost", 8123)]
    assert all(served(server) == ["/mcp"] for server in recorded.runs)
    loaded = sys.modules["mcpkit_target_overrides"].server  # the last load's server
    assert recorded.runs[-1] is not loaded and recorded.runs[-1].registry is loaded.registry
    assert recorded.announced() == [
        "mcpkit: serving main 1.0.0 at http://[::1]:9000/mcp",
        "mcpkit: serving main 1.0.0 at http://127.0.0.1:0/mcp",
        "mcpkit: serving main 1.0.0 at http://localhost:8123/mcp",
    ]


def test_a_non_loopback_host_override_without_allowed_hosts_exits_2(
    tmp_path: Path, recorded: Recorded, capsys: pytest.CaptureFixture[str]
) -> None:
    path = endpoints_file(tmp_path, "exposed")
    assert main(["serve", f"{path}:Main", "--host", "0.0.0.0"]) == 2
    assert capsys.readouterr().err == (
        "mcpkit: Server: binding a non-loopback host requires allowed_hosts (the Host names "
        "clients use; mcpkit serve --allowed-host NAME), so that DNS rebinding cannot reach the "
        "server\n"
    )
    assert recorded.runs == []


@pytest.mark.parametrize("port", ["-1", "65536"])
def test_an_out_of_range_port_exits_2(
    tmp_path: Path, recorded: Recorded, capsys: pytest.CaptureFixture[str], port: str
) -> None:
    path = endpoints_file(tmp_path, f"port{port.lstrip('-')}")
    assert main(["serve", f"{path}:Main", "--port", port]) == 2
    assert capsys.readouterr().err == "mcpkit: Server: port must be an int from 0 to 65535\n"


def test_stdio_serves_standard_streams_and_ignores_the_address(
    tmp_path: Path, recorded: Recorded, capsys: pytest.CaptureFixture[str]
) -> None:
    path = endpoints_file(tmp_path, "stdio", "server = Server(both)")
    assert main(["serve", str(path), "--stdio", "--path", "/other"]) == 0
    assert main(["serve", f"{path}:Main", "--stdio", "--port", "1"]) == 0
    (first, first_path), (second, second_path) = recorded.stdio
    assert served(first) == ["/mcp", "/other"] and first_path == "/other"
    assert served(second) == ["/mcp"] and second_path is None and second.port == 8000
    assert recorded.runs == []
    assert capsys.readouterr().err == ""  # nothing claims an HTTP address


def test_stdio_exits_1_when_requests_were_cut_off_at_end_of_input(
    tmp_path: Path, recorded: Recorded
) -> None:
    path = endpoints_file(tmp_path, "stdio_cut", "server = Server(Main)")
    recorded.cut_off = True
    assert main(["serve", str(path), "--stdio"]) == 1
    assert len(recorded.stdio) == 1


def test_stdio_with_a_path_no_endpoint_has_exits_2(
    tmp_path: Path, isolated: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """The real ``run_stdio``: it refuses the path before touching stdin."""
    path = endpoints_file(tmp_path, "stdio_refused", "server = Server(both)")
    assert main(["serve", str(path), "--stdio", "--path", "/nope"]) == 2
    assert main(["serve", str(path), "--stdio"]) == 2
    assert capsys.readouterr().err == (
        "mcpkit: Server.stdio: no endpoint has that path\n"
        "mcpkit: Server.stdio: name the endpoint path to serve\n"
    )


# --- argument errors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "complaint"),
    [
        ([], "the following arguments are required: command"),
        (["serve"], "the following arguments are required: target"),
        (["bogus"], "argument command: invalid choice: 'bogus'"),
        (["serve", "x.py", "--port", "http"], "argument --port: invalid int value: 'http'"),
        (["serve", "x.py", "--verbose"], "unrecognized arguments: --verbose"),
    ],
)
def test_argument_errors_exit_2_with_usage(
    recorded: Recorded, capsys: pytest.CaptureFixture[str], argv: list[str], complaint: str
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: mcpkit") and f"error: {complaint}" in err
    assert recorded.runs == []


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["serve", "--help"])
    assert caught.value.code == 0
    out = capsys.readouterr().out
    assert "FILE_OR_MODULE[:ATTR]" in out and "--stdio" in out and "--path" in out


def test_main_reads_sys_argv_by_default(
    tmp_path: Path, recorded: Recorded, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = endpoints_file(tmp_path, "argv", "server = Server(Main, port=8126)")
    monkeypatch.setattr(sys, "argv", ["mcpkit", "serve", str(path)])
    assert main() == 0
    assert [server.port for server in recorded.runs] == [8126]


# --- python -m mcpkit ---------------------------------------------------------------------------


def test_python_m_mcpkit_runs_main_and_exits_with_its_status(
    tmp_path: Path, recorded: Recorded, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = endpoints_file(tmp_path, "dunder_main", "server = Server(Main, port=8127)")
    monkeypatch.delitem(sys.modules, "mcpkit.__main__", raising=False)
    monkeypatch.setattr(sys, "argv", ["mcpkit", "serve", str(path)])
    with pytest.raises(SystemExit) as caught:
        runpy.run_module("mcpkit", run_name="__main__", alter_sys=True)
    assert caught.value.code == 0
    assert [server.port for server in recorded.runs] == [8127]
    monkeypatch.setattr(sys, "argv", ["mcpkit", "serve", str(tmp_path / "absent.py")])
    with pytest.raises(SystemExit) as caught:
        runpy.run_module("mcpkit", run_name="__main__", alter_sys=True)
    assert caught.value.code == 2


def test_importing_mcpkit_main_does_not_run_it(
    recorded: Recorded, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, "mcpkit.__main__", raising=False)
    module = importlib.import_module("mcpkit.__main__")
    assert module.main is main
    assert recorded.runs == [] and recorded.stdio == []


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def discover(port: int) -> tuple[int, bytes] | None:
    """POST ``server/discover``; ``None`` while nothing listens."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2.0)
    body = json.dumps(stateless_request("server/discover")).encode()
    try:
        connection.request("POST", "/mcp", body, stateless_headers("server/discover"))
        response = connection.getresponse()
        return response.status, response.read()
    except OSError:
        return None
    finally:
        connection.close()


def test_python_m_mcpkit_serve_serves_http_on_the_given_port(tmp_path: Path) -> None:
    path = endpoints_file(tmp_path, "http_target", "server = Server(Main)", name="http")
    port = free_port()
    command = [sys.executable, "-m", "mcpkit", "serve", str(path), "--port", str(port)]
    log = tmp_path / "stderr.log"
    with log.open("w+b") as stderr:
        process = subprocess.Popen(
            command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=stderr, stderr=subprocess.STDOUT
        )
        try:
            deadline = time.monotonic() + READY_SECONDS
            answer = discover(port)
            while answer is None:
                assert process.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
                answer = discover(port)
        finally:
            process.terminate()
            try:
                process.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:  # pragma: no cover - only if it hangs
                process.kill()
                process.wait(STOP_SECONDS)
    status, raw = answer
    assert status == 200
    message: Any = json.loads(raw)
    assert message["id"] == 1
    assert message["result"]["supportedVersions"] == [MODERN, "2025-11-25"]
    assert message["result"]["_meta"] == {
        "io.modelcontextprotocol/serverInfo": {"name": "http", "version": "1.0.0"}
    }
    assert_valid(MODERN, "server/discover", [from_python(message)])
    output = log.read_text()
    assert f"mcpkit: serving http 1.0.0 at http://127.0.0.1:{port}/mcp\n" in output


STDIO_TARGET = """\
import threading

from mcpkit import CompleteResult, Revision, Server, endpoint, tool


@endpoint(path="/mcp", name="stdio", version="1.0.0", revisions={Revision.V2026_07_28})
class Main:
    @tool(name="echo")
    def echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)

    @tool(name="stubborn")
    def stubborn(self, text: str) -> CompleteResult:
        threading.Event().wait(60)  # never looks at its cancellation token
        return CompleteResult.from_tool_text("late")


server = Server(Main)
"""

# ``mcpkit serve`` with the grace period cut to 0.2 s, so that a test need not sit out 5 s.
SHORT_GRACE = """\
import sys

from mcpkit.cli import main
from mcpkit.transports import _stdio

_stdio.serve_stdio.__kwdefaults__["grace_seconds"] = 0.2
sys.exit(main(sys.argv[1:]))
"""


def serve_stdio_process(tmp_path: Path, command: list[str], *names: str) -> tuple[int, Any, str]:
    """Run ``command ... serve TARGET --stdio`` on one ``tools/call`` line per tool name (ids
    from 1), then end of input: its exit status, its answers by id, and its stderr."""
    target = tmp_path / "stdio_target.py"
    target.write_text(STDIO_TARGET)
    stdin = b"".join(
        json.dumps(
            stateless_request("tools/call", {"name": name, "arguments": {"text": "hi"}}, id=n)
        ).encode()
        + b"\n"
        for n, name in enumerate(names, 1)
    )
    completed = subprocess.run(
        [*command, "serve", str(target), "--stdio"],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    answers = [json.loads(line) for line in completed.stdout.splitlines()]
    return completed.returncode, {a["id"]: a for a in answers}, completed.stderr.decode()


def test_python_m_mcpkit_serve_stdio_exits_0_when_every_request_was_answered(
    tmp_path: Path,
) -> None:
    status, answers, stderr = serve_stdio_process(
        tmp_path, [sys.executable, "-X", "dev", "-m", "mcpkit"], "echo", "echo"
    )
    assert status == 0, stderr
    assert [answers[n]["result"]["content"][0]["text"] for n in (1, 2)] == ["hi", "hi"]
    assert stderr == ""


def test_serve_stdio_exits_1_when_the_grace_period_cut_a_request_off(tmp_path: Path) -> None:
    status, answers, stderr = serve_stdio_process(
        tmp_path, [sys.executable, "-X", "dev", "-c", SHORT_GRACE], "stubborn", "echo"
    )
    assert status == 1, stderr
    assert answers[1] == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32603, "message": "Server overloaded; retry later"},
    }
    assert answers[2]["result"]["content"] == [{"type": "text", "text": "hi"}]
    assert_valid(MODERN, None, [from_python(answers[1])])
    assert stderr == (
        "stdin closed: 1 request(s) still running after the 0.2 s grace period were cut off "
        "and answered as overloaded\n"
    )
