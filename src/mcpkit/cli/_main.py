"""``mcpkit serve FILE_OR_MODULE[:ATTR] [--host H] [--port P] [--loop L] [--drain S]
[--tasks-db FILE] [--stdio] [--path P]``.

The target names a Python file or an importable module and, optionally, an attribute: a
``Server``, an ``EndpointRegistry``, an ``Endpoint`` or an ``@endpoint`` class.  Without an
attribute the module's ``server``, then ``registry``, is used.

``--tasks-db FILE`` keeps the tasks of the target's task tools in the SQLite file ``FILE``
(``SqliteTaskStore``, created if missing), in place of the target's own task store, which is
closed: tasks outlive the process, and on the next start the ones it left running fail with
-31903 or, for an idempotent tool, run again.  One process at a time serves a file; a target
with no task tool is refused.

The exit status is 2 for arguments or a target that cannot be served, 1 when ``--stdio`` had to
cut requests off at end of input (they were answered as overloaded), and 0 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.util
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from mcpkit.errors import ConfigurationError
from mcpkit.server import SqliteTaskStore, TaskStore
from mcpkit.serving import Server, registry_of

__all__ = ["load_target", "main"]

_DEFAULT_ATTRIBUTES = ("server", "registry")


def _module(spec: str) -> ModuleType:
    path = Path(spec)
    if spec.endswith(".py") or path.is_file():
        if not path.is_file():
            raise ConfigurationError(f"mcpkit serve: no such file: {spec}")
        name = f"mcpkit_target_{path.stem}"
        found = importlib.util.spec_from_file_location(name, path)
        if found is None or found.loader is None:  # pragma: no cover - a .py file always loads
            raise ConfigurationError(f"mcpkit serve: cannot load {spec}")
        module = importlib.util.module_from_spec(found)
        sys.modules[name] = module
        sys.path.insert(0, str(path.resolve().parent))
        found.loader.exec_module(module)
        return module
    try:
        return importlib.import_module(spec)
    except ModuleNotFoundError as error:
        if error.name is not None and spec.startswith(error.name):
            raise ConfigurationError(f"mcpkit serve: no module named {spec!r}") from None
        raise


def _load(target: str) -> tuple[str, object]:
    """The file or module part of ``FILE_OR_MODULE[:ATTR]``, and the value it names."""
    spec, _, attribute = target.partition(":")
    if len(spec) > 1 and spec[1] == ":" and spec[0].isalpha():  # pragma: no cover - Windows
        spec, _, attribute = target.rpartition(":") if target.count(":") > 1 else (target, "", "")
    module = _module(spec)
    names = (attribute,) if attribute else _DEFAULT_ATTRIBUTES
    for name in names:
        value = getattr(module, name, None)
        if value is not None:
            return spec, value
    raise ConfigurationError(
        f"mcpkit serve: {spec} has no {' or '.join(repr(n) for n in names)} to serve"
    )


def _server(value: object) -> Server:
    return value if isinstance(value, Server) else Server(value)


def load_target(target: str) -> Server:
    """The ``Server`` that ``FILE_OR_MODULE[:ATTR]`` names."""
    return _server(_load(target)[1])


def _close(store: TaskStore | None) -> None:
    if store is not None:
        asyncio.run(store.close())


def _with_tasks_db(spec: str, value: object, path: str) -> Server:
    """The target served with its tasks in the SQLite file ``path``.  The target's own store
    is closed first (it would hold its file, perhaps this one, for nothing), and the new one
    is closed again when the server cannot be built."""
    registry = value.registry if isinstance(value, Server) else registry_of(value)
    if not any(endpoint.tasks for endpoint in registry):
        raise ConfigurationError(
            f"mcpkit serve: --tasks-db: no tool of {spec} may run as a task (none has "
            "task_support); serve it without --tasks-db"
        )
    if isinstance(value, Server):
        _close(value.task_store)
    try:
        store = SqliteTaskStore(path)
    except ConfigurationError as error:
        raise ConfigurationError(f"mcpkit serve: --tasks-db {path}: {error}") from None
    try:
        if isinstance(value, Server):
            return value.configured(task_store=store)
        return Server(registry, task_store=store)
    except BaseException:
        _close(store)
        raise


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mcpkit", description="Serve MCP endpoints.")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve a file or module's endpoints")
    serve.add_argument("target", help="FILE_OR_MODULE[:ATTR]")
    serve.add_argument("--host", default=None, help="bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=None, help="port (default 8000)")
    serve.add_argument("--stdio", action="store_true", help="serve stdin/stdout instead")
    serve.add_argument("--path", default=None, help="the endpoint path to serve over stdio")
    serve.add_argument(
        "--loop",
        choices=("asyncio", "uvloop"),
        default=None,
        help="the event loop for HTTP (default: the server's, asyncio unless it says otherwise)",
    )
    serve.add_argument(
        "--drain",
        type=float,
        default=None,
        metavar="SECONDS",
        help="on SIGTERM/SIGINT, how long calls in flight may finish (default: the server's, 30)",
    )
    serve.add_argument(
        "--tasks-db",
        default=None,
        metavar="FILE",
        help="keep tasks in this SQLite file (created if missing), in place of the target's "
        "own task store, so they outlive the process; one process at a time per file",
    )
    arguments = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
    opened: TaskStore | None = None  # the --tasks-db store, closed when serving ends
    try:
        try:
            spec, value = _load(arguments.target)
            if arguments.tasks_db is None:
                server = _server(value)
            else:
                server = _with_tasks_db(spec, value, arguments.tasks_db)
                opened = server.task_store
            if arguments.stdio:
                # Non-zero when stdin closed while requests were still running past the grace
                # period: they were answered as overloaded, not served.
                return 1 if server.run_stdio(arguments.path) else 0
            if (
                arguments.host is not None
                or arguments.port is not None
                or arguments.loop
                or arguments.drain is not None
            ):
                server = server.configured(
                    host=arguments.host,
                    port=arguments.port,
                    loop=arguments.loop,
                    drain_seconds=arguments.drain,
                )
        except ConfigurationError as error:
            print(f"mcpkit: {error}", file=sys.stderr)
            return 2
        print(f"mcpkit: serving on {server.where()}", file=sys.stderr)
        server.run()
        return 0
    finally:
        _close(opened)
