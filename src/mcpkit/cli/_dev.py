"""``mcpkit dev FILE_OR_MODULE[:ATTR] [--port P]``: serve while developing.

A supervisor: this process runs ``mcpkit serve TARGET --host 127.0.0.1 --port P --debug`` as a
child and restarts it when a ``.py`` file under the target's directory changes (a fresh
process imports the new code whole, which reloading modules in place cannot promise).  Once the
first child serves, the ready-to-paste client configurations of each endpoint are printed to
stdout: Claude Code, VS Code and Cursor over HTTP; Claude Desktop and Codex over stdio (the
absolute interpreter and target, so they work from any directory); the MCP Inspector.

A child that fails to start the first time ends ``mcpkit dev`` with its exit status (its
message is above); one that fails after an edit is restarted at the next change.  SIGINT or
SIGTERM stops the child gracefully and ends with status 0.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, Final, Protocol

from mcpkit.errors import ConfigurationError

__all__ = ["DevTarget", "client_configs", "dev", "dev_target", "supervise"]

_RELOAD_DRAIN: Final = 2.0
"""Seconds the calls in flight get when a change restarts the server."""
_STOP_WAIT: Final = 15.0
"""Seconds a child is given to stop (its drain, then its answers) before it is killed."""
_TICK_MS: Final = 200
"""How often the supervisor looks at its child while no file changes."""
_DEBOUNCE_MS: Final = 400
"""Changes this close together restart the server once."""
_TOML_BARE_KEY: Final = re.compile(r"[A-Za-z0-9_-]+", re.ASCII)
_INSPECTOR: Final = "npx @modelcontextprotocol/inspector"


@dataclass(frozen=True, slots=True)
class DevTarget:
    """What ``mcpkit dev`` serves: the target as the child is given it, the directory whose
    ``.py`` files are watched, and how a stdio client starts it from anywhere."""

    target: str
    directory: Path
    stdio_args: tuple[str, ...]
    stdio_env: Mapping[str, str]


def dev_target(target: str) -> DevTarget:
    """Resolve ``FILE_OR_MODULE[:ATTR]`` against the working directory, without importing it
    (the child does that)."""
    spec, colon, attribute = target.partition(":")
    suffix = f"{colon}{attribute}"
    path = Path(spec)
    if spec.endswith(".py") or path.is_file():
        if not path.is_file():
            raise ConfigurationError(f"mcpkit dev: no such file: {spec}")
        absolute = path.resolve()
        resolved = f"{absolute}{suffix}"
        return DevTarget(resolved, absolute.parent, ("-m", "mcpkit", "serve", resolved), {})
    here = os.getcwd()
    top = spec.partition(".")[0]
    sys.path.insert(0, here)  # looked up as the child will, from here first
    try:
        found = importlib.util.find_spec(top) if top.isidentifier() else None
    finally:
        sys.path.remove(here)
    if found is not None and found.submodule_search_locations:  # a package: all of it
        directory = Path(next(iter(found.submodule_search_locations)))
    elif found is not None and found.has_location and found.origin is not None:
        directory = Path(found.origin).parent
    else:
        raise ConfigurationError(f"mcpkit dev: no module named {top!r} here or on sys.path")
    # A stdio client starts the server in a directory of its own: the module is found through
    # PYTHONPATH instead.
    return DevTarget(target, directory, ("-m", "mcpkit", "serve", target), {"PYTHONPATH": here})


def client_configs(endpoints: Sequence[Mapping[str, Any]], target: DevTarget) -> str:
    """The client configurations for each endpoint served, as printed at start."""
    python = sys.executable
    blocks = []
    for endpoint in endpoints:
        name, url, path = str(endpoint["name"]), str(endpoint["url"]), str(endpoint["path"])
        args = [*target.stdio_args, "--stdio", "--path", path]
        stdio: dict[str, object] = {"command": python, "args": args}
        if target.stdio_env:
            stdio["env"] = dict(target.stdio_env)
        key = name if _TOML_BARE_KEY.fullmatch(name) else json.dumps(name)
        codex = [f"[mcp_servers.{key}]", f"command = {json.dumps(python)}"]
        codex.append(f"args = {json.dumps(args)}")
        if target.stdio_env:
            pairs = ", ".join(f"{k} = {json.dumps(v)}" for k, v in target.stdio_env.items())
            codex.append(f"env = {{ {pairs} }}")
        blocks.append(
            "\n".join(
                [
                    f"{name} {endpoint['version']} at {url}",
                    "  Claude Code:",
                    f"    claude mcp add --transport http {shlex.quote(name)} {shlex.quote(url)}",
                    "  VS Code (.vscode/mcp.json):",
                    "    " + json.dumps({"servers": {name: {"type": "http", "url": url}}}),
                    "  Cursor (.cursor/mcp.json):",
                    "    " + json.dumps({"mcpServers": {name: {"url": url}}}),
                    "  Claude Desktop (claude_desktop_config.json, stdio):",
                    "    " + json.dumps({"mcpServers": {name: stdio}}),
                    "  Codex (~/.codex/config.toml, stdio):",
                    *(f"    {line}" for line in codex),
                    "  MCP Inspector:",
                    f"    {_INSPECTOR} --transport http --server-url {shlex.quote(url)}",
                    f"    {_INSPECTOR} --cli {shlex.quote(url)} --transport http "
                    "--method tools/list",
                ]
            )
        )
    return "\n\n".join(blocks) + "\n"


class Child(Protocol):
    """What the supervisor needs of a child process (``subprocess.Popen``)."""

    def poll(self) -> int | None: ...

    def send_signal(self, sig: int, /) -> None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def kill(self) -> None: ...


def _stop(child: Child) -> None:
    """Stop ``child`` gracefully (SIGTERM: a second SIGINT would cut its drain short), and
    kill it if it does not end in time."""
    if child.poll() is not None:
        return
    child.send_signal(signal.SIGTERM)
    try:
        child.wait(_STOP_WAIT)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def supervise(
    spawn: Callable[[], Child],
    ready: Path,
    changes: Iterator[bool],
    stop: threading.Event,
    on_ready: Callable[[list[dict[str, Any]]], None],
) -> int:
    """Run children from ``spawn`` until ``stop`` is set: ``changes`` yields ``True`` when a
    watched file changed (restart) and ``False`` on each quiet tick.  ``on_ready`` gets the
    endpoints the first child wrote to ``ready`` once serving."""
    child: Child | None = spawn()
    announced = False
    try:
        for changed in changes:
            if stop.is_set():
                break
            if not announced and ready.is_file():
                on_ready(json.loads(ready.read_text(encoding="utf-8")))
                announced = True
            status = None if child is None else child.poll()
            if status is not None:
                if not announced:  # the first start failed: its message is above
                    return status if status > 0 else 2
                print(
                    f"mcpkit dev: the server exited with status {status}; waiting for a change",
                    file=sys.stderr,
                )
                child = None
            if changed:
                print("mcpkit dev: a .py file changed; restarting", file=sys.stderr)
                if child is not None:
                    _stop(child)
                child = spawn()
        return 0
    finally:
        if child is not None:
            _stop(child)


def _changes(directory: Path, stop: threading.Event) -> Iterator[bool]:
    """``True`` for each batch of ``.py`` changes under ``directory``, ``False`` on a quiet
    tick; ends once ``stop`` is set."""
    import watchfiles  # uvicorn[standard]'s: needed by mcpkit dev only

    logging.getLogger("watchfiles").setLevel(logging.WARNING)  # not a line per change
    for found in watchfiles.watch(
        directory,
        watch_filter=watchfiles.PythonFilter(),
        stop_event=stop,
        rust_timeout=_TICK_MS,
        yield_on_timeout=True,
        debounce=_DEBOUNCE_MS,
        raise_interrupt=False,
    ):
        yield bool(found)


def dev(target: str, port: int) -> int:
    """``mcpkit dev``: the module docstring."""
    found = dev_target(target)
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    handlers = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with tempfile.TemporaryDirectory(prefix="mcpkit-dev-") as scratch:
            ready = Path(scratch) / "ready.json"
            command = [
                sys.executable,
                "-m",
                "mcpkit",
                "serve",
                found.target,
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--debug",
                "--drain",
                str(_RELOAD_DRAIN),
                "--ready-file",
                str(ready),
            ]

            def spawn() -> Child:
                ready.unlink(missing_ok=True)
                return subprocess.Popen(command, stdin=subprocess.DEVNULL)

            def on_ready(endpoints: list[dict[str, Any]]) -> None:
                print(client_configs(endpoints, found), end="", flush=True)
                print(
                    f"mcpkit dev: restarting when a .py file under {found.directory} changes; "
                    "Ctrl-C stops",
                    file=sys.stderr,
                )

            return supervise(spawn, ready, _changes(found.directory, stop), stop, on_ready)
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
