"""A notes server for the internet: OAuth-protected, rate limited, behind a TLS proxy.

Configured from the environment, so the same file runs on a laptop and in production:

- ``MCPKIT_PUBLIC_URL``: the URL clients reach the server at, without the endpoint path
  (``https://notes.example.com``); tokens must be issued for ``MCPKIT_PUBLIC_URL + "/mcp"``;
- ``MCPKIT_ISSUER``: the authorization server's issuer (the ``iss`` of its tokens);
- ``MCPKIT_JWKS_URI``: where it publishes its signing keys.

Serve it on loopback behind the proxy with ``mcpkit serve examples/remote_notes.py``.
"""

import os
from collections.abc import Mapping
from urllib.parse import urlsplit

import mcpkit
from mcpkit import AccessToken, RequestContext

notes = mcpkit.EndpointBuilder("notes", version="1.0.0")
NOTES: dict[str, str] = {"welcome": "Notes are shared by everyone with a token for this server."}


@notes.tool(read_only=True)
def search_notes(query: str) -> list[str]:
    """The names of the notes whose name or text contains the query."""
    wanted = query.lower()
    return sorted(name for name, text in NOTES.items() if wanted in f"{name} {text}".lower())


@notes.tool(read_only=True, scopes=["notes:read"])
def read_note(name: str) -> str:
    """The text of one note."""
    if name not in NOTES:
        raise mcpkit.ToolError(f"There is no note named {name!r}.")
    return NOTES[name]


@notes.tool(scopes=["notes:write"])
def write_note(ctx: RequestContext, name: str, text: str) -> str:
    """Save a note under a name, replacing any note of that name."""
    caller = ctx.identity
    assert isinstance(caller, AccessToken)  # the resource server admitted this request
    NOTES[name] = text
    return f"Saved note {name!r} for {caller.subject or caller.client_id}."


def setting(environ: Mapping[str, str], name: str) -> str:
    """One required setting, or an error that says what to set."""
    value = environ.get(name, "").strip()
    if not value:
        raise mcpkit.ConfigurationError(
            f"examples/remote_notes.py: set {name} (see the module docstring), for example "
            "MCPKIT_PUBLIC_URL=https://notes.example.com"
        )
    return value


def build_server(environ: Mapping[str, str] = os.environ) -> mcpkit.Server:
    """The server, from the three settings in ``environ``."""
    public_url = setting(environ, "MCPKIT_PUBLIC_URL").rstrip("/")
    issuer = setting(environ, "MCPKIT_ISSUER")
    host = urlsplit(public_url).hostname
    if host is None:
        raise mcpkit.ConfigurationError(
            f"examples/remote_notes.py: MCPKIT_PUBLIC_URL must be a URL, not {public_url!r}"
        )
    auth = mcpkit.ResourceServer(
        public_url,
        authorization_servers=[issuer],
        verifier=mcpkit.JwtVerifier(issuer, setting(environ, "MCPKIT_JWKS_URI")),
        resource_name="Notes",
    )
    return mcpkit.Server(
        notes,
        auth=auth,
        allowed_hosts=[host],  # the name the proxy forwards in the Host header
        # Each caller (issuer and subject of its token): 30 calls at once, then one a second.
        tool_rate_limiter=mcpkit.TokenBucket(30, refill_tokens=60, refill_period_seconds=60),
    )


server = build_server()
