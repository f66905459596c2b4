"""``mcpkit serve FILE_OR_MODULE[:ATTR] [--host H] [--port P] [--loop L] [--drain S] [--stdio]
[--path P]``.

The target names a Python file or an importable module and, optionally, an attribute: a
``Server``, an ``EndpointRegistry``, an ``Endpoint`` or an ``@endpoint`` class.  Without an
attribute the module's ``server``, then ``registry``, is used.

The exit status is 2 for arguments or a target that cannot be served, 1 when ``--stdio`` had to
cut requests off at end of input (they were answered as overloaded), and 0 otherwise.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from mcpkit.errors import ConfigurationError
from mcpkit.serving import Server

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


def load_target(target: str) -> Server:
    """The ``Server`` that ``FILE_OR_MODULE[:ATTR]`` names."""
    spec, _, attribute = target.partition(":")
    if len(spec) > 1 and spec[1] == ":" and spec[0].isalpha():  # pragma: no cover - Windows
        spec, _, attribute = target.rpartition(":") if target.count(":") > 1 else (target, "", "")
    module = _module(spec)
    names = (attribute,) if attribute else _DEFAULT_ATTRIBUTES
    for name in names:
        value = getattr(module, name, None)
        if value is None:
            continue
        return value if isinstance(value, Server) else Server(value)
    raise ConfigurationError(
        f"mcpkit serve: {spec} has no {' or '.join(repr(n) for n in names)} to serve"
    )


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
    arguments = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
    try:
        server = load_target(arguments.target)
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
