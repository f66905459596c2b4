"""A first MCP server: one tool.  Serve it with ``mcpkit serve examples/hello.py``."""

import mcpkit

hello = mcpkit.EndpointBuilder("hello", version="1.0.0")


@hello.tool
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"
