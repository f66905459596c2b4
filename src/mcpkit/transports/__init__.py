"""Byte movers between the engine and the outside world.

``McpApp`` serves Streamable HTTP as a pure ASGI 3 app; the stdio transport serves
newline-delimited JSON-RPC.  Neither parses JSON nor decides a protocol question: the engine
does, and the transports carry its bytes.
"""

from mcpkit.transports._asgi import McpApp as McpApp
from mcpkit.transports._stdio import run_stdio as run_stdio
from mcpkit.transports._stdio import serve_stdio as serve_stdio

__all__ = ["McpApp", "run_stdio", "serve_stdio"]
