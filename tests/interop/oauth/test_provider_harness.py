"""The OAuth interop harness itself: ``oidc-provider`` starts on loopback, issues RFC 9068 JWT
access tokens for the one resource by ``client_credentials`` and by the authorization code flow
(PKCE) that :class:`BrowserUser` drives without a browser, down-scopes ``svc-reader``, answers
introspection for opaque tokens, and works with the official Python client's
``OAuthClientProvider`` against a stand-in resource server."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import secrets
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx2
import jwt
import pytest
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata
from pydantic import AnyUrl

from ..conftest import free_port
from .conftest import (
    READER,
    RESOURCE_SERVER,
    SCOPES,
    WRITER,
    AuthorizationDenied,
    BrowserUser,
    InMemoryStorage,
    Provider,
    ServiceClient,
    StartAuthorizationServer,
    client_credentials_token,
    exchange_code,
    introspect,
    jwt_claims,
    request_client_credentials,
    verify_access_token,
)

TIMEOUT_SECONDS = 30.0


def test_provider_serves_discovery(oauth_provider: Provider) -> None:
    response = httpx2.get(f"{oauth_provider.issuer}/.well-known/openid-configuration")
    assert response.status_code == 200
    metadata = response.json()
    assert metadata["issuer"] == oauth_provider.issuer
    assert urlsplit(oauth_provider.issuer).hostname == "127.0.0.1"
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert {"authorization_code", "client_credentials", "refresh_token"} <= set(
        metadata["grant_types_supported"]
    )
    assert set(SCOPES.split()) <= set(metadata["scopes_supported"])
    for endpoint in ("registration", "introspection", "token", "authorization"):
        assert metadata[f"{endpoint}_endpoint"].startswith(oauth_provider.issuer + "/")
    keys = httpx2.get(oauth_provider.jwks_uri).json()["keys"]
    assert [(key["kty"], key["alg"]) for key in keys] == [("RSA", "RS256")]
    assert all("d" not in key for key in keys)  # the public half only


def test_client_credentials_token_is_a_jwt_for_the_resource(oauth_provider: Provider) -> None:
    token = client_credentials_token(
        oauth_provider, WRITER.client_id, WRITER.secret, oauth_provider.resource, SCOPES
    )
    header = json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))
    assert header["alg"] == "RS256"
    assert header["typ"] == "at+jwt"  # RFC 9068
    unverified = jwt_claims(token)
    assert unverified["aud"] == oauth_provider.resource
    assert unverified["iss"] == oauth_provider.issuer
    assert unverified["scope"] == SCOPES
    assert unverified["client_id"] == unverified["sub"] == WRITER.client_id
    assert verify_access_token(oauth_provider, token, oauth_provider.resource) == unverified
    with pytest.raises(jwt.InvalidAudienceError):
        verify_access_token(oauth_provider, token, "http://127.0.0.1:1/elsewhere")
    # Without a `resource` parameter the token is for the resource all the same.
    response = request_client_credentials(
        oauth_provider, WRITER.client_id, WRITER.secret, None, "notes:write"
    )
    assert response.status_code == 200, response.text
    assert jwt_claims(response.json()["access_token"])["aud"] == oauth_provider.resource
    assert jwt_claims(response.json()["access_token"])["scope"] == "notes:write"


def test_reader_cannot_get_write_scope(oauth_provider: Provider) -> None:
    # Asked for both (as the official client does, from the resource metadata): read only.
    response = request_client_credentials(
        oauth_provider, READER.client_id, READER.secret, oauth_provider.resource, SCOPES
    )
    assert response.status_code == 200, response.text
    assert response.json()["scope"] == "notes:read"
    assert jwt_claims(response.json()["access_token"])["scope"] == "notes:read"
    # Asked for write alone: refused.
    response = request_client_credentials(
        oauth_provider, READER.client_id, READER.secret, oauth_provider.resource, "notes:write"
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_scope"
    # A resource the provider does not know: refused.
    response = request_client_credentials(
        oauth_provider, WRITER.client_id, WRITER.secret, "http://127.0.0.1:1/other", SCOPES
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_target"
    # A wrong secret: refused.
    response = request_client_credentials(
        oauth_provider, WRITER.client_id, "wrong", oauth_provider.resource, SCOPES
    )
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"


def register(provider: Provider, redirect_uri: str) -> OAuthClientInformationFull:
    """Dynamic client registration (RFC 7591), with the metadata the official client sends."""
    metadata = OAuthClientMetadata(
        redirect_uris=[AnyUrl(redirect_uri)], client_name="harness", scope=SCOPES
    )
    response = httpx2.post(
        provider.registration_endpoint,
        json=metadata.model_dump(by_alias=True, mode="json", exclude_none=True),
    )
    assert response.status_code == 201, response.text
    return OAuthClientInformationFull.model_validate(response.json())


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(64)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def test_browser_user_gets_a_code_that_pkce_exchanges_for_a_jwt(oauth_provider: Provider) -> None:
    redirect_uri = f"http://127.0.0.1:{free_port()}/callback"  # never served: not needed
    client = register(oauth_provider, redirect_uri)
    verifier, challenge = pkce_pair()
    query = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": redirect_uri,
        "state": "the-state",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": oauth_provider.resource,
        "scope": SCOPES,
    }
    user = BrowserUser()
    url = f"{oauth_provider.authorization_endpoint}?{urlencode(query)}"
    result = asyncio.run(asyncio.wait_for(user.authorize(url), TIMEOUT_SECONDS))
    assert result.state == "the-state"
    assert result.iss == oauth_provider.issuer  # RFC 9207
    # Login page, its form, consent page, its form: each through /auth/<uid> again.
    assert sum("/interaction/" in page for page in user.visited) >= 4

    # No verifier, or another: refused.  The right one: a JWT for the resource.
    assert (
        exchange_code(oauth_provider, client, result.code, "x" * 43, redirect_uri, None)
    ).json()["error"] == "invalid_grant"
    result = asyncio.run(asyncio.wait_for(BrowserUser().authorize(url), TIMEOUT_SECONDS))
    response = exchange_code(
        oauth_provider, client, result.code, verifier, redirect_uri, oauth_provider.resource
    )
    assert response.status_code == 200, response.text
    claims = verify_access_token(
        oauth_provider, response.json()["access_token"], oauth_provider.resource
    )
    assert claims["scope"] == SCOPES
    assert claims["client_id"] == client.client_id
    assert claims["sub"] == "alice"


def test_pkce_is_required(oauth_provider: Provider) -> None:
    redirect_uri = f"http://127.0.0.1:{free_port()}/callback"
    client = register(oauth_provider, redirect_uri)
    query = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": redirect_uri,
        "state": "s",
        "scope": SCOPES,
    }
    url = f"{oauth_provider.authorization_endpoint}?{urlencode(query)}"
    with pytest.raises(AuthorizationDenied, match="invalid_request"):
        asyncio.run(asyncio.wait_for(BrowserUser().authorize(url), TIMEOUT_SECONDS))


def test_user_who_cancels_gets_no_code(oauth_provider: Provider) -> None:
    redirect_uri = f"http://127.0.0.1:{free_port()}/callback"
    client = register(oauth_provider, redirect_uri)
    _, challenge = pkce_pair()
    query = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": redirect_uri,
        "state": "s",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "scope": SCOPES,
    }
    url = f"{oauth_provider.authorization_endpoint}?{urlencode(query)}"
    with pytest.raises(AuthorizationDenied, match="access_denied"):
        asyncio.run(asyncio.wait_for(BrowserUser(approve=False).authorize(url), TIMEOUT_SECONDS))


def test_opaque_tokens_are_introspected(authorization_servers: StartAuthorizationServer) -> None:
    resource = f"http://127.0.0.1:{free_port()}/mcp"
    provider = authorization_servers(resource, token_format="opaque")
    token = client_credentials_token(provider, READER.client_id, READER.secret, resource, SCOPES)
    assert token.count(".") == 0  # not a JWT
    answer = introspect(provider, token)
    assert answer["active"] is True
    assert answer["aud"] == resource
    assert answer["iss"] == provider.issuer
    assert answer["scope"] == "notes:read"
    assert answer["client_id"] == READER.client_id
    assert introspect(provider, "no-such-token") == {"active": False}
    # Only the resource server's client may introspect.
    assert introspect(provider, token, WRITER) == {"active": False}
    assert RESOURCE_SERVER.client_id not in (READER.client_id, WRITER.client_id)


class StandInResource:
    """What the official client needs of an MCP server to start its OAuth flow: 401 with
    ``resource_metadata``, the RFC 9728 document, and a JWT check on every other request;
    served through ``httpx2.MockTransport`` so the tokens come from the real provider."""

    def __init__(self, provider: Provider) -> None:
        self.provider = provider
        self.requests: list[str] = []
        self.claims: dict[str, Any] | None = None
        origin = urlsplit(provider.resource)
        self.metadata_url = (
            f"{origin.scheme}://{origin.netloc}/.well-known/oauth-protected-resource{origin.path}"
        )

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(f"{request.method} {request.url}")
        if str(request.url) == self.metadata_url:
            return httpx2.Response(
                200,
                json={
                    "resource": self.provider.resource,
                    "authorization_servers": [self.provider.issuer],
                    "scopes_supported": self.provider.scopes.split(),
                },
            )
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        try:
            assert scheme == "Bearer"
            self.claims = verify_access_token(self.provider, token, self.provider.resource)
        except (AssertionError, jwt.PyJWTError):
            challenge = f'Bearer resource_metadata="{self.metadata_url}"'
            return httpx2.Response(401, headers={"WWW-Authenticate": challenge})
        return httpx2.Response(200, json={"ok": True})


def test_official_client_code_flow(authorization_servers: StartAuthorizationServer) -> None:
    port = free_port()
    provider = authorization_servers(f"http://127.0.0.1:{port}/mcp")
    resource = StandInResource(provider)
    user = BrowserUser()
    storage = InMemoryStorage()
    auth = OAuthClientProvider(
        server_url=provider.resource,
        client_metadata=OAuthClientMetadata(
            redirect_uris=[AnyUrl(f"http://127.0.0.1:{free_port()}/callback")],
            client_name="mcp 2.3.0 client",
        ),
        storage=storage,
        redirect_handler=user.redirect_handler,
        callback_handler=user.callback_handler,
    )
    seen: list[str] = []

    async def log(request: httpx2.Request) -> None:
        seen.append(f"{request.method} {request.url.copy_with(query=None)}")

    async def main() -> httpx2.Response:
        async with httpx2.AsyncClient(
            auth=auth,
            mounts={f"http://127.0.0.1:{port}": httpx2.MockTransport(resource)},
            event_hooks={"request": [log]},
        ) as http:
            return await http.post(provider.resource, json={})

    response = asyncio.run(asyncio.wait_for(main(), TIMEOUT_SECONDS))
    assert response.status_code == 200, response.text
    assert resource.claims is not None
    assert resource.claims["scope"].split()[:2] == SCOPES.split()
    issuer = provider.issuer
    assert seen == [
        f"POST {provider.resource}",  # 401 with resource_metadata
        f"GET {resource.metadata_url}",
        f"GET {issuer}/.well-known/oauth-authorization-server",
        f"POST {provider.registration_endpoint}",
        # (the BrowserUser's own requests, on its own client)
        f"POST {provider.token_endpoint}",
        f"POST {provider.resource}",
    ]
    # The user granted offline_access (the client asks for it, the provider lists it): a refresh
    # token, which gets a JWT for the same resource.
    assert storage.tokens is not None and storage.tokens.refresh_token is not None
    assert storage.client_info is not None and storage.client_info.client_secret is not None
    refreshed = httpx2.post(
        provider.token_endpoint,
        data={"grant_type": "refresh_token", "refresh_token": storage.tokens.refresh_token},
        auth=(storage.client_info.client_id, storage.client_info.client_secret),
    )
    assert refreshed.status_code == 200, refreshed.text
    claims = verify_access_token(provider, refreshed.json()["access_token"], provider.resource)
    assert claims["scope"] == SCOPES


@pytest.mark.parametrize(("service", "granted"), [(READER, "notes:read"), (WRITER, SCOPES)])
def test_official_client_credentials_provider(
    authorization_servers: StartAuthorizationServer, service: ServiceClient, granted: str
) -> None:
    port = free_port()
    provider = authorization_servers(f"http://127.0.0.1:{port}/mcp")
    resource = StandInResource(provider)
    auth = ClientCredentialsOAuthProvider(
        server_url=provider.resource,
        storage=InMemoryStorage(),
        client_id=service.client_id,
        client_secret=service.secret,
        issuer=provider.issuer,
    )

    async def main() -> httpx2.Response:
        async with httpx2.AsyncClient(
            auth=auth, mounts={f"http://127.0.0.1:{port}": httpx2.MockTransport(resource)}
        ) as http:
            return await http.post(provider.resource, json={})

    response = asyncio.run(asyncio.wait_for(main(), TIMEOUT_SECONDS))
    assert response.status_code == 200, response.text
    assert resource.claims is not None
    assert resource.claims["scope"] == granted
    assert resource.claims["sub"] == service.client_id
