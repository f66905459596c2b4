"""The ceiling of the HTTP stack: a raw ASGI app under mcpkit's own uvicorn settings.

It reads the whole request body and answers every request with the same 100-byte JSON
document, so it measures what uvicorn (httptools on asyncio, one worker) costs per request with
no MCP work at all (under the same guarded httptools protocol, so the connection limits are
in both sides of the comparison).  ``python bench/http/app_ceiling.py --port 8300`` (project venv).

The ``uvicorn.Config`` below repeats the options of ``mcpkit.Server._uvicorn`` (``mcpkit serve``):
keep the two in step.
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import uvicorn

from mcpkit.limits import DEFAULT_LIMITS
from mcpkit.transports._connections import guarded_protocol

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_HEAD = b'{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"result":5},"pad":"'
BODY = _HEAD + b"x" * (100 - len(_HEAD) - 3) + b'"}}'  # a JSON document of exactly 100 bytes
assert len(BODY) == 100
HEADERS = [(b"content-type", b"application/json"), (b"content-length", b"100")]


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    more = True
    while more:
        message = await receive()
        more = message.get("more_body", False)
    await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
    await send({"type": "http.response.body", "body": BODY})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=8300)
    port: int = parser.parse_args().port
    limits = DEFAULT_LIMITS
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        loop="asyncio",
        http=guarded_protocol(limits),  # the connection limits mcpkit serve enforces
        lifespan="on",
        log_level="warning",
        access_log=False,
        server_header=False,
        timeout_keep_alive=limits.keep_alive_timeout_seconds,  # type: ignore[arg-type]
        limit_concurrency=None,
        timeout_graceful_shutdown=5,
        proxy_headers=False,
    )
    uvicorn.Server(config).run()


if __name__ == "__main__":
    main()
