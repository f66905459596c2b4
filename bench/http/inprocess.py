"""Server CPU per request without sockets or wrk: the httptools protocol ``mcpkit serve`` runs
(uvicorn's, under mcpkit's connection limits) driven through a fake transport on asyncio's loop
(``--loop uvloop`` for uvloop).

It measures what the HTTP benchmark measures (the server's CPU for one request on the same
stack) with none of the noise of a shared machine's network and load generator, so a change on
the hot path can be judged in seconds; ``--profile`` prints where the time goes.

    python -m bench.http.inprocess [--app mcpkit|ceiling] [--variant async|def|tools101|session]
        [--rev 2026-07-28|2025-11-25] [--method tools/call|tools/list] [-n 20000]
        [--loop asyncio|uvloop] [--protocol guarded|plain] [--oauth] [--metrics]
        [--profile | --opcodes]

``--protocol plain`` drives uvicorn's own protocol without mcpkit's connection limits (the
default for the ceiling app), to measure what the limits cost.

``--oauth`` serves the mcpkit app as an OAuth resource server (``JwtVerifier``, its JWKS served
on 127.0.0.1 by ``bench/http/oauth.py``'s issuer) and sends every request with the same
``Authorization: Bearer`` JWT, as ``python -m bench.http.oauth`` does: the cost of a validated,
cached token.

``--opcodes`` counts the Python bytecodes executed per request, per module and per function:
a deterministic measure (the same on a loaded machine) for comparing two versions of the hot
path; C work (the codec, uvloop) is not in it.

It is a development aid, not a result: the table in ``bench/results/`` comes from ``run.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import cProfile
import importlib.util
import json
import os
import pstats
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcpkit.limits import DEFAULT_LIMITS, Limits

if TYPE_CHECKING:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

HERE = Path(__file__).resolve().parent


def _load(app: str, variant: str, metrics: bool = False) -> tuple[Any, Limits, str]:
    """The ASGI app, the limits its server enforces, and (``session`` variant) the id of a
    2025-11-25 session opened in it for the requests to name; ``metrics`` serves the mcpkit
    app with ``metrics=True`` (every request counted)."""
    os.environ["BENCH_VARIANT"] = variant
    name = "app_mcpkit" if app == "mcpkit" else "app_ceiling"
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    if app == "mcpkit":
        server = module.server
        if metrics:
            server = server.configured(metrics=True)
        session_id = ""
        if variant == "session":
            from mcpkit import Revision

            store = server.engine.pipeline.sessions
            session_id = store.create(None, "/mcp", Revision.V2025_11_25).id
        return server.asgi(), server.engine.limits, session_id
    return module.app, DEFAULT_LIMITS, ""


def _request(rev: str, method: str, session_id: str = "", authorization: str = "") -> bytes:
    modern = rev == "2026-07-28"
    params: dict[str, object] = {}
    if method == "tools/call":
        params = {"name": "add", "arguments": {"a": 2, "b": 3}}
    if modern:
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": rev,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    body = json.dumps(message, separators=(",", ":")).encode()
    headers = [
        "POST /mcp HTTP/1.1",
        "Host: 127.0.0.1:8000",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"MCP-Protocol-Version: {rev}",
    ]
    if modern:
        headers.append(f"Mcp-Method: {method}")
        if method == "tools/call":
            headers.append("Mcp-Name: add")
    if session_id:
        headers.append(f"Mcp-Session-Id: {session_id}")
    if authorization:
        headers.append(f"Authorization: {authorization}")
    headers.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(headers) + "\r\n\r\n").encode() + body


class _Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.written: list[bytes] = []

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        if name in ("sockname", "peername"):
            return ("127.0.0.1", 8000)
        return default

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written.append(bytes(data))

    def is_closing(self) -> bool:
        return False

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def close(self) -> None:
        pass

    def get_write_buffer_size(self) -> int:
        return 0


def _protocol_class(protocol: str, limits: Limits) -> type[HttpToolsProtocol]:
    """The class ``mcpkit serve`` uses (``guarded``), or uvicorn's own (``plain``)."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    from mcpkit.transports._connections import guarded_protocol

    return guarded_protocol(limits) if protocol == "guarded" else HttpToolsProtocol


async def _drive(
    app: Any, raw: bytes, count: int, protocol_class: type[HttpToolsProtocol]
) -> tuple[float, bytes]:
    import uvicorn
    from uvicorn.server import ServerState

    # mcpkit.Server's settings (see app_ceiling.py), minus the listener and lifespan.
    config = uvicorn.Config(
        app,
        http="httptools",
        lifespan="off",
        log_level="warning",
        access_log=False,
        server_header=False,
        proxy_headers=False,
    )
    config.load()
    protocol = protocol_class(config=config, server_state=ServerState(), app_state={})
    transport = _Transport()
    protocol.connection_made(transport)
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] | None = None
    original = protocol.on_response_complete

    def complete() -> None:
        original()
        if done is not None and not done.done():
            done.set_result(None)

    protocol.on_response_complete = complete  # type: ignore[method-assign]
    started = time.process_time()
    for _ in range(count):
        done = loop.create_future()
        transport.written.clear()
        protocol.data_received(raw)
        await done
    elapsed = time.process_time() - started
    protocol.connection_lost(None)  # cancels the connection's timers
    return elapsed / count * 1e6, b"".join(transport.written)


def _run(loop: str, main: Any) -> Any:
    """``main`` to completion on a new loop of the named kind."""
    if loop == "uvloop":
        import uvloop

        return uvloop.run(main)
    return asyncio.run(main)


def _opcodes(
    app: Any, raw: bytes, count: int, top: int, loop: str, protocol_class: type[HttpToolsProtocol]
) -> None:
    counts: collections.Counter[Any] = collections.Counter()
    calls: collections.Counter[Any] = collections.Counter()

    def tracer(frame: Any, event: str, _arg: object) -> Any:
        if event == "call":
            frame.f_trace_opcodes = True
            calls[frame.f_code] += 1
        elif event == "opcode":
            counts[frame.f_code] += 1
        return tracer

    sys.settrace(tracer)
    threading.settrace(tracer)
    try:
        _run(loop, _drive(app, raw, count, protocol_class))
    finally:
        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type,unused-ignore]

    def where(code: Any) -> str:
        name: str = code.co_filename
        for marker in ("/src/", "site-packages/", "/lib/python3"):
            if marker in name:
                return name.split(marker)[-1]
        return name

    by_module: collections.Counter[str] = collections.Counter()
    for code, number in counts.items():
        by_module[where(code)] += number
    print(f"{sum(counts.values()) / count:.0f} bytecodes/request")
    for module, number in by_module.most_common(25):
        print(f"{number / count:8.0f}  {module}")
    print("\n bytecodes  calls  function (per request)")
    for code, number in counts.most_common(top):
        print(
            f"{number / count:10.0f} {calls[code] / count:6.1f}  "
            f"{where(code)}:{code.co_firstlineno} {code.co_qualname}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--app", choices=("mcpkit", "ceiling"), default="mcpkit")
    parser.add_argument(
        "--variant", choices=("async", "def", "tools101", "session"), default="async"
    )
    parser.add_argument("--rev", choices=("2026-07-28", "2025-11-25"), default="2026-07-28")
    parser.add_argument("--method", choices=("tools/call", "tools/list"), default="tools/call")
    parser.add_argument("-n", type=int, default=20000)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--sort", default="tottime")
    parser.add_argument("--opcodes", action="store_true")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--loop", choices=("asyncio", "uvloop"), default="asyncio")
    parser.add_argument(
        "--protocol", choices=("guarded", "plain"), help="guarded for mcpkit, plain for ceiling"
    )
    parser.add_argument("--oauth", action="store_true", help="mcpkit with a Bearer JWT")
    parser.add_argument("--metrics", action="store_true", help="mcpkit with metrics=True")
    args = parser.parse_args()

    authorization = ""
    if args.oauth:
        from bench.http.oauth import Issuer, JwtServer

        issuer = Issuer().__enter__()  # serves the JWKS until the process ends
        spec = JwtServer("mcpkit", args.variant, issuer=issuer.url, jwks_uri=issuer.jwks_uri)
        os.environ.update(
            (name, value)
            for name, value in spec.environment().items()
            if name.startswith("BENCH_OAUTH_")
        )
        authorization = f"Bearer {issuer.token()}"
    app, limits, session_id = _load(args.app, args.variant, args.metrics)
    if session_id and args.rev != "2025-11-25":
        raise SystemExit("--variant session needs --rev 2025-11-25")
    protocol = args.protocol or ("guarded" if args.app == "mcpkit" else "plain")
    protocol_class = _protocol_class(protocol, limits)
    raw = _request(args.rev, args.method, session_id, authorization)
    warm_up = _drive(app, raw, min(args.n, 2000), protocol_class)  # memos, pools, caches
    _run(args.loop, warm_up)
    if args.opcodes:
        _opcodes(app, raw, min(args.n, 500), args.top, args.loop, protocol_class)
        return
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
    per_request, response = _run(args.loop, _drive(app, raw, args.n, protocol_class))
    if args.profile:
        profiler.disable()
        pstats.Stats(profiler).sort_stats(args.sort).print_stats(45)
    head, _, body = response.partition(b"\r\n\r\n")
    print(head.split(b"\r\n")[0].decode(), body[:120].decode(errors="replace"), file=sys.stderr)
    print(
        f"{args.app} {args.variant} {args.rev} {args.method} {protocol}"
        f"{' oauth' if args.oauth else ''}: "
        f"{per_request:.1f} µs CPU/request"
    )


if __name__ == "__main__":
    main()
