"""The OAuth-protected MCP server of ``test_oauth_end_to_end.py``, for ``mcpkit serve``.

A small notes endpoint at ``/mcp`` whose tools need scopes (``read_note``: ``notes:read``,
``write_note``: ``notes:write``; ``whoami`` none), behind a ``ResourceServer`` built from the
environment:

- ``MCPKIT_TEST_BASE_URL``: the server's public base URL (``http://127.0.0.1:<port>``);
- ``MCPKIT_TEST_ISSUER``: the authorization server it trusts;
- ``MCPKIT_TEST_VERIFIER``: ``jwt`` (``JwtVerifier`` with ``MCPKIT_TEST_JWKS_URI``) or
  ``introspection`` (``IntrospectionVerifier`` at ``MCPKIT_TEST_INTROSPECTION_ENDPOINT``, as
  ``MCPKIT_TEST_CLIENT_ID`` with ``MCPKIT_TEST_CLIENT_SECRET``).

The tools answer with what ``ctx.identity`` says about the caller, so that a test can see the
verified token reached the handler.
"""

from __future__ import annotations

import json
import os

from mcpkit import (
    AccessToken,
    IntrospectionVerifier,
    JwtVerifier,
    RequestContext,
    ResourceServer,
    Server,
    TokenVerifier,
    endpoint,
    tool,
)

NOTES: dict[str, str] = {"welcome": "Hello from the notes server."}


def caller(ctx: RequestContext) -> dict[str, object]:
    """What the verified access token says about the caller (never the token itself)."""
    identity = ctx.identity
    if not isinstance(identity, AccessToken):
        raise TypeError(f"ctx.identity is not an AccessToken: {identity!r}")
    return {
        "subject": identity.subject,
        "client_id": identity.client_id,
        "scopes": sorted(identity.scopes),
        "issuer": identity.issuer,
        "audience": sorted(identity.audience),
        "has_raw_token": identity.token is not None,
    }


@endpoint(path="/mcp", name="notes", version="1.0.0")
class Notes:
    @tool(scopes=["notes:read"])
    def read_note(self, ctx: RequestContext, id: str) -> str:
        """Read a note."""
        return json.dumps({"id": id, "text": NOTES.get(id), "caller": caller(ctx)})

    @tool(scopes=["notes:write"])
    def write_note(self, ctx: RequestContext, id: str, text: str) -> str:
        """Write a note."""
        NOTES[id] = text
        return json.dumps({"id": id, "written": True, "caller": caller(ctx)})

    @tool
    def whoami(self, ctx: RequestContext) -> str:
        """Who the server thinks is calling."""
        return json.dumps(caller(ctx))


def verifier(environ: dict[str, str] | os._Environ[str]) -> TokenVerifier:
    issuer = environ["MCPKIT_TEST_ISSUER"]
    kind = environ.get("MCPKIT_TEST_VERIFIER", "jwt")
    if kind == "jwt":
        return JwtVerifier(issuer, environ["MCPKIT_TEST_JWKS_URI"])
    if kind == "introspection":
        return IntrospectionVerifier(
            environ["MCPKIT_TEST_INTROSPECTION_ENDPOINT"],
            client_id=environ["MCPKIT_TEST_CLIENT_ID"],
            client_secret=environ["MCPKIT_TEST_CLIENT_SECRET"],
            issuer=issuer,
        )
    raise ValueError(f"MCPKIT_TEST_VERIFIER must be jwt or introspection, not {kind!r}")


server = Server(
    Notes,
    auth=ResourceServer(
        os.environ["MCPKIT_TEST_BASE_URL"],
        authorization_servers=[os.environ["MCPKIT_TEST_ISSUER"]],
        verifier=verifier(os.environ),
    ),
)
