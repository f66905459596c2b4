"""Test an mcpkit server in-process: a synchronous client for its ASGI app, and helpers that
build the requests and headers an MCP client sends."""

from mcpkit.testing import _client
from mcpkit.testing._client import ServesAsgi as ServesAsgi
from mcpkit.testing._client import TestClient as TestClient
from mcpkit.testing._client import TestResponse as TestResponse
from mcpkit.testing._client import handshake_request as handshake_request
from mcpkit.testing._client import stateless_headers as stateless_headers
from mcpkit.testing._client import stateless_request as stateless_request

__all__ = _client.__all__  # the one list of public names
