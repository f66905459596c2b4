"""``mcpkit serve FILE_OR_MODULE[:ATTR] [--host H] [--port P] [--allowed-host NAME]...
[--trusted-proxy ADDRESS]... [--loop L] [--drain S] [--tasks-db FILE] [--debug] [--metrics]
[--health] [--tracing] [--stdio] [--path P]`` and
``mcpkit dev FILE_OR_MODULE[:ATTR] [--port P]`` (``mcpkit.cli._dev``).

The target names a Python file or an importable module and, optionally, an attribute: a
``Server``, an ``EndpointRegistry``, an ``Endpoint``, an ``EndpointBuilder`` or an ``@endpoint``
class.  Without an attribute the module's ``server``, then ``registry``, is used, else the one
such value the module defines (several must be told apart with ``:ATTR``).  A module is looked
up from the current directory first (as ``python -m`` and uvicorn do), then on ``sys.path``.

Serving HTTP, each endpoint's URL is printed once the socket is bound and the server has
started (``mcpkit: serving NAME VERSION at URL``); a failure before that is one line, with no
``serving`` line.  SIGINT (Ctrl-C) or SIGTERM stops it gracefully with one ``stopped`` line.
``--allowed-host NAME`` (repeatable) adds ``Host`` names to accept, as ``allowed_hosts`` does;
binding a non-loopback address requires at least one.  ``--trusted-proxy ADDRESS``
(repeatable; an address or a network) believes ``X-Forwarded-For`` from that peer, as
``trusted_proxies`` does: without it the client address is always the TCP peer.  ``--debug``
is development mode (``Server(debug=True)``), loopback only.  ``--metrics`` serves Prometheus
metrics at ``GET /metrics`` and ``--health`` the ``GET /healthz`` and ``GET /readyz`` checks,
as ``Server(metrics=True, health=True)`` do.  ``--tracing`` gives each HTTP message an
OpenTelemetry span (``Server(tracing=True)``, the ``otel`` extra) from the global tracer
provider, which the ``OTEL_*`` environment configures.

``--tasks-db FILE`` keeps the tasks of the target's task tools in the SQLite file ``FILE``
(``SqliteTaskStore``, created if missing), in place of the target's own task store, which is
closed: tasks outlive the process, and on the next start the ones it left running fail with
-31903 or, for an idempotent tool, run again.  One process at a time serves a file; a target
with no task tool is refused.

The exit status is 2 for arguments or a target that cannot be served (an address that cannot
be bound included), 1 when ``--stdio`` had to cut requests off at end of input (they were
answered as overloaded), and 0 otherwise (a stop by SIGINT or SIGTERM included).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.util
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

from mcpkit.cli._dev import dev
from mcpkit.errors import ConfigurationError
from mcpkit.model import ENDPOINT_ATTRIBUTE, Endpoint, EndpointBuilder, EndpointRegistry
from mcpkit.server import SqliteTaskStore, TaskStore
from mcpkit.serving import (
    Server,
    SharedMetrics,
    Supervisor,
    bind_workers,
    inherited_sockets,
    registry_of,
    shared_metrics,
    single_process_reasons,
)

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
    _current_directory_first()
    try:
        return importlib.import_module(spec)
    except ModuleNotFoundError as error:
        if error.name is not None and spec.startswith(error.name):
            raise ConfigurationError(f"mcpkit serve: no module named {spec!r}") from None
        raise


def _current_directory_first() -> None:
    """Put the working directory first on ``sys.path``, as ``python -m`` does (its ``sys.path[0]``)
    but a console script does not (its ``sys.path[0]`` is the script's directory)."""
    here = os.getcwd()
    if sys.path[:1] not in ([here], [""]):
        sys.path.insert(0, here)


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
    if attribute:
        raise ConfigurationError(f"mcpkit serve: {spec} has no {attribute!r} to serve")
    found = _servable(module)
    if len(found) == 1:
        return spec, found[0][1]
    if found:
        listed = ", ".join(name for name, _ in found)
        raise ConfigurationError(
            f"mcpkit serve: {spec} has several things to serve ({listed}); name one, as in "
            f"{spec}:{found[0][0]}"
        )
    raise ConfigurationError(
        f"mcpkit serve: {spec} has nothing to serve: define a Server, an EndpointBuilder, an "
        "@endpoint class or an Endpoint at module level, or name one as FILE_OR_MODULE:ATTR"
    )


def _servable(module: ModuleType) -> list[tuple[str, object]]:
    """The module's own servable values, in definition order: a ``Server``, registry,
    ``Endpoint`` or ``EndpointBuilder``, or an ``@endpoint`` class defined in the module (one
    imported from elsewhere is not the module's to serve)."""
    found: list[tuple[str, object]] = []
    for name, value in vars(module).items():
        if name.startswith("_"):
            continue
        if isinstance(value, Server | EndpointRegistry | Endpoint | EndpointBuilder) or (
            isinstance(value, type)
            and ENDPOINT_ATTRIBUTE in value.__dict__
            and value.__module__ == module.__name__
        ):
            found.append((name, value))
    return found


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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcpkit", description="Serve MCP endpoints.")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve a file or module's endpoints")
    serve.add_argument("target", help="FILE_OR_MODULE[:ATTR]")
    serve.add_argument("--host", default=None, help="bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=None, help="port (default 8000)")
    serve.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also accept requests whose Host header names NAME (repeatable); required to "
        "bind a non-loopback address such as 0.0.0.0",
    )
    serve.add_argument(
        "--trusted-proxy",
        action="append",
        default=[],
        metavar="ADDRESS",
        help="take the client address from X-Forwarded-For when the peer is ADDRESS (an IP "
        "address or network, repeatable); otherwise it is always the TCP peer",
    )
    serve.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="serve with N processes sharing the port (1 to 64); more than one needs every "
        "store shared (Redis), and is refused with the reasons otherwise",
    )
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
    serve.add_argument(
        "--debug",
        action="store_true",
        help="development mode: a handler's unexpected exception is answered with its type "
        "name (loopback hosts only)",
    )
    serve.add_argument(
        "--metrics",
        action="store_true",
        help="serve Prometheus metrics at GET /metrics (Server(metrics=True))",
    )
    serve.add_argument(
        "--health",
        action="store_true",
        help="serve GET /healthz (liveness) and GET /readyz (readiness) (Server(health=True))",
    )
    serve.add_argument(
        "--tracing",
        action="store_true",
        help="an OpenTelemetry span per HTTP message, from the global tracer provider "
        "(Server(tracing=True); needs mcpkit[otel])",
    )
    # mcpkit dev's own channel to the server it supervises: the endpoints, once serving.
    serve.add_argument("--ready-file", default=None, help=argparse.SUPPRESS)
    develop = commands.add_parser(
        "dev",
        help="serve on 127.0.0.1 in development mode, restart when a .py file changes, and "
        "print client configurations",
    )
    develop.add_argument("target", help="FILE_OR_MODULE[:ATTR]")
    develop.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    return parser


def _ready(server: Server, path: str) -> None:
    """Write the endpoints served, with their URLs, to ``path`` (whole, or not at all)."""
    where = server.where()
    endpoints = [
        {
            "name": endpoint.implementation.name,
            "version": endpoint.implementation.version,
            "path": endpoint.path,
            "url": where + endpoint.path,
        }
        for endpoint in server.registry
    ]
    partial = f"{path}.partial"
    Path(partial).write_text(json.dumps(endpoints), encoding="utf-8")
    os.replace(partial, path)


def _configured(server: Server, arguments: argparse.Namespace) -> Server:
    """``server`` with the command line's address, hosts and options, if it names any."""
    if (
        arguments.host is None
        and arguments.port is None
        and not arguments.loop
        and arguments.drain is None
        and not arguments.allowed_host
        and not arguments.trusted_proxy
        and not arguments.debug
        and not arguments.metrics
        and not arguments.health
        and not arguments.tracing
    ):
        return server
    return server.configured(
        host=arguments.host,
        port=arguments.port,
        loop=arguments.loop,
        drain_seconds=arguments.drain,
        allowed_hosts=(
            (*server.allowed_hosts, *arguments.allowed_host) if arguments.allowed_host else None
        ),
        debug=True if arguments.debug else None,
        trusted_proxies=(
            (*server.trusted_proxies, *arguments.trusted_proxy) if arguments.trusted_proxy else None
        ),
        metrics=True if arguments.metrics else None,
        health=True if arguments.health else None,
        tracing=True if arguments.tracing else None,
    )


def main(argv: Sequence[str] | None = None) -> int:
    arguments = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
    try:
        if arguments.command == "dev":
            return dev(arguments.target, arguments.port)
        return _serve(arguments)
    except ConfigurationError as error:
        print(f"mcpkit: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # before the server's own handler was installed, or after
        print("mcpkit: stopped", file=sys.stderr)
        return 0


def _started(
    server: Server, ready: str | None, shared: SharedMetrics | None
) -> Callable[[], None] | None:
    """What to do once serving: publish this worker's metrics, and write ``--ready-file``."""
    if ready is None and shared is None:
        return None

    def started() -> None:
        if shared is not None:
            shared.start()
        if ready is not None:
            _ready(server, ready)

    return started


def _supervise(server: Server, arguments: argparse.Namespace) -> int:
    """``--workers N``: bind once, then run N copies of this command on the sockets."""
    workers = arguments.workers
    if not 1 <= workers <= 64:
        raise ConfigurationError("mcpkit serve: --workers must be 1 to 64")
    reasons = single_process_reasons(server)
    if reasons:
        raise ConfigurationError(
            "mcpkit serve: --workers: this server keeps state in its own process, which "
            "several workers would split: " + "; ".join(reasons)
        )
    try:
        listeners = bind_workers(server, workers)
    except OSError as error:
        print(f"mcpkit: {error.strerror or error}", file=sys.stderr)
        return 2
    port = listeners[0][0].getsockname()[1]
    command = [sys.executable, "-m", "mcpkit", "serve", arguments.target, "--port", str(port)]
    command += ["--host", server.host]
    for name in arguments.allowed_host:
        command += ["--allowed-host", name]
    for proxy in arguments.trusted_proxy:
        command += ["--trusted-proxy", proxy]
    if arguments.loop:
        command += ["--loop", arguments.loop]
    if arguments.drain is not None:
        command += ["--drain", str(arguments.drain)]
    if arguments.debug:
        command.append("--debug")
    if arguments.metrics:
        command.append("--metrics")
    if arguments.health:
        command.append("--health")
    if arguments.tracing:
        command.append("--tracing")
    return Supervisor(command, listeners, workers, metrics=server.metrics is not None).run()


def _serve(arguments: argparse.Namespace) -> int:
    opened: TaskStore | None = None  # the --tasks-db store, closed when serving ends
    try:
        spec, value = _load(arguments.target)
        if arguments.tasks_db is None:
            server = _server(value)
        else:
            server = _with_tasks_db(spec, value, arguments.tasks_db)
            opened = server.task_store
        if arguments.stdio:
            if arguments.workers != 1:
                raise ConfigurationError("mcpkit serve: --workers serves HTTP, not --stdio")
            if arguments.metrics or arguments.health:
                raise ConfigurationError(
                    "mcpkit serve: --metrics and --health are HTTP routes, not for --stdio"
                )
            if arguments.tracing:
                raise ConfigurationError("mcpkit serve: --tracing traces HTTP, not --stdio")
            if arguments.debug:
                server = server.configured(debug=True)
            # Non-zero when stdin closed while requests were still running past the grace
            # period: they were answered as overloaded, not served.
            return 1 if server.run_stdio(arguments.path) else 0
        server = _configured(server, arguments)
        if arguments.workers != 1:
            return _supervise(server, arguments)
        if os.environ.pop("MCPKIT_WORKER_QUIET", None):
            logging.getLogger("mcpkit").setLevel(logging.WARNING)  # another worker announces
        shared = shared_metrics(server)  # a worker of --workers, with metrics on
        try:
            server.run(
                started=_started(server, arguments.ready_file, shared),
                sockets=inherited_sockets(),
            )
        except OSError as error:  # the address could not be bound: nothing was served
            print(f"mcpkit: {error.strerror or error}", file=sys.stderr)
            return 2
        except SystemExit:  # uvicorn's exit when the application's start-up failed
            print("mcpkit: the server could not start (the error is above)", file=sys.stderr)
            return 2
        finally:
            if shared is not None:
                shared.close()
        return 0
    finally:
        _close(opened)
