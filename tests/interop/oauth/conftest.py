"""A real authorization server for the OAuth interop tests, and ways to get its tokens without
a browser.

``provider.mjs`` runs ``oidc-provider`` (OpenID-certified, from npm) on loopback for one
protected resource.  Node (>= 22) and npm come from ``tools/run_conformance.py``, as for the
TypeScript SDK test: Node in ``build/conformance-cache`` (or ``$MCPKIT_CONFORMANCE_CACHE``),
the package in ``build/oauth-provider`` (or ``$MCPKIT_OAUTH_PROVIDER_CACHE``), both installed
on first use.  An install failure fails the tests; nothing is skipped.

- :func:`authorization_server` (a context manager) and the :func:`authorization_servers`
  fixture (a factory, for tests that pick their resource URL) start one; the session's
  :func:`oauth_provider` is one for a resource nobody serves;
- :func:`client_credentials_token` gets a token for a pre-registered service client
  (:data:`READER`, :data:`WRITER`), :func:`introspect` asks about one as the resource server
  (:data:`RESOURCE_SERVER`), :func:`verify_access_token` checks a JWT against the JWKS;
- :class:`BrowserUser` signs in and consents on the provider's own pages, for the official
  client's ``OAuthClientProvider(redirect_handler=..., callback_handler=...)``, and
  :class:`InMemoryStorage` is the token storage that client wants.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Final, Literal, Protocol
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx2
import jwt
import pytest
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthToken

from ..conftest import free_port, runner, stop

ROOT: Final = Path(__file__).resolve().parents[3]
PACKAGE: Final = "oidc-provider"
VERSION: Final = "9.13.3"
SCRIPT: Final = Path(__file__).with_name("provider.mjs")
SCOPES: Final = "notes:read notes:write"
READY_SECONDS: Final = 30.0
HTTP_SECONDS: Final = 10.0

TokenFormat = Literal["jwt", "opaque"]


@dataclass(frozen=True)
class ServiceClient:
    """A confidential client that ``provider.mjs`` registers at start."""

    client_id: str
    secret: str


READER: Final = ServiceClient("svc-reader", "svc-reader-secret")
"""``client_credentials`` only; its tokens carry ``notes:read`` at most."""
WRITER: Final = ServiceClient("svc-writer", "svc-writer-secret")
"""``client_credentials`` only; may have every scope of the resource."""
RESOURCE_SERVER: Final = ServiceClient("mcp-resource", "mcp-resource-secret")
"""No grant at all: the one client allowed at the introspection endpoint (RFC 7662)."""


# --- Node, the package, the process ---------------------------------------------------------


@dataclass(frozen=True)
class Runtime:
    node: Path
    script: Path  # a copy of provider.mjs beside the folder's node_modules
    env: dict[str, str]


@functools.cache
def runtime() -> Runtime:
    """Node >= 22 and ``oidc-provider@VERSION``, installed once (and cached across runs)."""
    install = runner()
    node_cache = Path(os.environ.get("MCPKIT_CONFORMANCE_CACHE", install.DEFAULT_CACHE))
    cache = Path(os.environ.get("MCPKIT_OAUTH_PROVIDER_CACHE", ROOT / "build" / "oauth-provider"))
    node: Path = install.find_node(node_cache.resolve())
    env = {**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    manifest: Path = install.install_package(
        cache.resolve(), PACKAGE, VERSION, node, env, "package.json"
    )
    folder = manifest.parents[2]  # <folder>/node_modules/oidc-provider/package.json
    # An ES module resolves packages from where it lies: run a copy inside the folder.
    script = folder / "mcpkit-oauth-provider.mjs"
    shutil.copyfile(SCRIPT, script)
    return Runtime(node, script, env)


@dataclass(frozen=True)
class Provider:
    """A running ``provider.mjs``: its endpoints, from its discovery document."""

    issuer: str  # http://127.0.0.1:<port>, no trailing slash
    resource: str
    scopes: str
    token_format: TokenFormat
    metadata: dict[str, Any]  # /.well-known/openid-configuration
    pid: int

    @property
    def jwks_uri(self) -> str:
        return str(self.metadata["jwks_uri"])

    @property
    def token_endpoint(self) -> str:
        return str(self.metadata["token_endpoint"])

    @property
    def authorization_endpoint(self) -> str:
        return str(self.metadata["authorization_endpoint"])

    @property
    def registration_endpoint(self) -> str:
        return str(self.metadata["registration_endpoint"])

    @property
    def introspection_endpoint(self) -> str:
        return str(self.metadata["introspection_endpoint"])


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def _lines(path: Path) -> list[str]:
    """The complete lines written to ``path`` so far."""
    return _read(path).split("\n")[:-1]


@contextlib.contextmanager
def authorization_server(
    resource: str, scopes: str = SCOPES, *, token_format: TokenFormat = "jwt"
) -> Iterator[Provider]:
    """``provider.mjs`` for ``resource`` on a free loopback port, until the block ends (then
    stopped by its PID: terminate, kill after a while).  ``token_format="opaque"`` issues
    tokens that only introspection can check (oidc-provider will not introspect its JWTs)."""
    run = runtime()
    command = [
        str(run.node), str(run.script), "--port", "0",
        "--resource", resource, "--scopes", scopes, "--token-format", token_format,
    ]  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="oauth-provider-") as logs:
        out, err = Path(logs) / "stdout.log", Path(logs) / "stderr.log"
        with out.open("wb") as stdout, err.open("wb") as stderr:
            process = subprocess.Popen(
                command, cwd=run.script.parent, env=run.env,
                stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
            )  # fmt: skip
        try:
            deadline = time.monotonic() + READY_SECONDS
            while not (ready := [x for x in _lines(out) if x.startswith("READY ")]):
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(
                        f"provider.mjs did not get ready (exit code {process.poll()}):\n"
                        + _read(out)
                        + _read(err)
                    )
                time.sleep(0.02)
            issuer = ready[0].split(" ", 1)[1].strip()
            discovery = httpx2.get(
                f"{issuer}/.well-known/openid-configuration", timeout=HTTP_SECONDS
            )
            assert discovery.status_code == 200, discovery.text
            yield Provider(issuer, resource, scopes, token_format, discovery.json(), process.pid)
        finally:
            stop(process)


class StartAuthorizationServer(Protocol):
    def __call__(
        self, resource: str, scopes: str = SCOPES, *, token_format: TokenFormat = "jwt"
    ) -> Provider: ...


@pytest.fixture(scope="session")
def oauth_runtime() -> Runtime:
    """Node and ``oidc-provider``, installed (once) while setting up, not inside a test."""
    return runtime()


@pytest.fixture
def authorization_servers(oauth_runtime: Runtime) -> Iterator[StartAuthorizationServer]:
    """Start authorization servers for resource URLs of the test's choosing (say, that of a
    server it starts next, on a port it took with ``free_port()``); stopped when it ends."""
    with contextlib.ExitStack() as running:

        def start(
            resource: str, scopes: str = SCOPES, *, token_format: TokenFormat = "jwt"
        ) -> Provider:
            return running.enter_context(
                authorization_server(resource, scopes, token_format=token_format)
            )

        yield start


@pytest.fixture(scope="session")
def oauth_provider(oauth_runtime: Runtime) -> Iterator[Provider]:
    """One authorization server for the session, whose resource
    ``http://127.0.0.1:<free port>/mcp`` nothing serves: for tests of tokens alone."""
    with authorization_server(f"http://127.0.0.1:{free_port()}/mcp") as provider:
        yield provider


# --- tokens without a browser ---------------------------------------------------------------


def request_client_credentials(
    provider: Provider, client_id: str, secret: str, resource: str | None, scope: str | None
) -> httpx2.Response:
    """The token endpoint's answer to a ``client_credentials`` request (client_secret_basic);
    ``None`` leaves the parameter out."""
    form = {"grant_type": "client_credentials"}
    if resource is not None:
        form["resource"] = resource
    if scope is not None:
        form["scope"] = scope
    return httpx2.post(
        provider.token_endpoint, data=form, auth=(client_id, secret), timeout=HTTP_SECONDS
    )


def client_credentials_token(
    provider: Provider, client_id: str, secret: str, resource: str, scope: str
) -> str:
    """An access token for ``resource`` with (at most) ``scope``, by ``client_credentials``."""
    response = request_client_credentials(provider, client_id, secret, resource, scope)
    assert response.status_code == 200, response.text
    return str(response.json()["access_token"])


def exchange_code(
    provider: Provider,
    client: OAuthClientInformationFull,
    code: str,
    code_verifier: str,
    redirect_uri: str,
    resource: str | None,
) -> httpx2.Response:
    """The token endpoint's answer to an ``authorization_code`` request with PKCE, as a
    registered client authenticates (client_secret_basic or none)."""
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "code_verifier": code_verifier,
        "redirect_uri": redirect_uri,
        "client_id": client.client_id,
    }
    if resource is not None:
        form["resource"] = resource
    auth = (client.client_id, client.client_secret) if client.client_secret else None
    return httpx2.post(provider.token_endpoint, data=form, auth=auth, timeout=HTTP_SECONDS)


def introspect(
    provider: Provider, token: str, client: ServiceClient = RESOURCE_SERVER
) -> dict[str, Any]:
    """RFC 7662: what the provider says about ``token`` to ``client``."""
    response = httpx2.post(
        provider.introspection_endpoint,
        data={"token": token},
        auth=(client.client_id, client.secret),
        timeout=HTTP_SECONDS,
    )
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def jwt_claims(token: str) -> dict[str, Any]:
    """The payload of a JWT, NOT verified: for looking at, never for trusting."""
    claims: dict[str, Any] = jwt.decode(token, options={"verify_signature": False})
    return claims


def verify_access_token(provider: Provider, token: str, audience: str) -> dict[str, Any]:
    """The claims of a JWT access token whose signature (by a key of the provider's JWKS),
    issuer, audience and expiry all check out."""
    key = jwt.PyJWKClient(provider.jwks_uri, timeout=HTTP_SECONDS).get_signing_key_from_jwt(token)
    claims: dict[str, Any] = jwt.decode(
        token, key, algorithms=["RS256"], audience=audience, issuer=provider.issuer
    )
    return claims


class InMemoryStorage:
    """The ``TokenStorage`` of ``mcp.client.auth.OAuthClientProvider``, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


@dataclass
class _Form:
    action: str
    method: str
    fields: dict[str, str] = field(default_factory=dict)


class _Page(HTMLParser):
    """The forms (action, method, named inputs with their values) and links of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[_Form] = []
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        if tag == "form":
            method = attributes.get("method", "get").lower()
            self.forms.append(_Form(attributes.get("action", ""), method))
        elif tag == "input" and self.forms and "name" in attributes:
            self.forms[-1].fields[attributes["name"]] = attributes.get("value", "")
        elif tag == "a" and "href" in attributes:
            self.links.append(attributes["href"])


class AuthorizationDenied(Exception):
    """The authorization server redirected back with an ``error`` instead of a code."""


class BrowserUser:
    """A person at a browser, without the browser: given the authorization URL the official
    client builds, it signs in on the provider's dev login page (any name and password),
    approves (or, with ``approve=False``, cancels) on its consent page, and stops at the
    redirect back to the client's ``redirect_uri``, which nobody needs to serve.

    Plug it into ``OAuthClientProvider(redirect_handler=user.redirect_handler,
    callback_handler=user.callback_handler, ...)``, or call :meth:`authorize` directly.
    ``visited`` lists every URL it requested, in order.
    """

    MAX_STEPS: Final = 20

    def __init__(self, login: str = "alice", password: str = "any", *, approve: bool = True):
        self.login = login
        self.password = password
        self.approve = approve
        self.visited: list[str] = []
        self._result: AuthorizationCodeResult | None = None

    async def redirect_handler(self, authorization_url: str) -> None:
        self._result = await self.authorize(authorization_url)

    async def callback_handler(self) -> AuthorizationCodeResult:
        result, self._result = self._result, None
        if result is None:
            raise RuntimeError("callback_handler called before redirect_handler")
        return result

    async def authorize(self, authorization_url: str) -> AuthorizationCodeResult:
        """Follow the pages from ``authorization_url`` to the redirect back to its
        ``redirect_uri``: that redirect's ``code``, ``state`` and ``iss`` (RFC 9207)."""
        redirect_uri = parse_qs(urlsplit(authorization_url).query)["redirect_uri"][0]
        async with httpx2.AsyncClient(timeout=HTTP_SECONDS) as browser:  # keeps the cookies
            request = browser.build_request("GET", authorization_url)
            for _ in range(self.MAX_STEPS):
                self.visited.append(str(request.url))
                response = await browser.send(request)
                if response.is_redirect:
                    location = urljoin(str(request.url), response.headers["location"])
                    if _same_endpoint(location, redirect_uri):
                        return _callback(location)
                    request = browser.build_request("GET", location)
                elif response.status_code == 200 and "text/html" in response.headers.get(
                    "content-type", ""
                ):
                    request = self._answer(browser, str(request.url), response.text)
                else:
                    raise AssertionError(
                        f"{request.method} {request.url}: {response.status_code} {response.text}"
                    )
        raise AssertionError(f"no redirect to {redirect_uri} after {self.MAX_STEPS} steps")

    def _answer(self, browser: httpx2.AsyncClient, url: str, html: str) -> httpx2.Request:
        """The request a person would make next on this page: fill in and submit its form,
        or cancel through its abort link."""
        page = _Page()
        page.feed(html)
        forms = [form for form in page.forms if form.method == "post"]
        if len(forms) != 1:
            raise AssertionError(f"expected one form at {url}:\n{html}")
        form = forms[0]
        if form.fields.get("prompt") == "consent" and not self.approve:
            abort = next(link for link in page.links if link.rstrip("/").endswith("/abort"))
            return browser.build_request("GET", urljoin(url, abort))
        if "login" in form.fields:
            form.fields.update(login=self.login, password=self.password)
        return browser.build_request("POST", urljoin(url, form.action), data=form.fields)


def _same_endpoint(url: str, endpoint: str) -> bool:
    a, b = urlsplit(url), urlsplit(endpoint)
    return (a.scheme, a.netloc, a.path) == (b.scheme, b.netloc, b.path)


def _callback(location: str) -> AuthorizationCodeResult:
    query = {name: values[0] for name, values in parse_qs(urlsplit(location).query).items()}
    if "error" in query or "code" not in query:
        raise AuthorizationDenied(f"{query.get('error')}: {query.get('error_description')}")
    return AuthorizationCodeResult(
        code=query["code"], state=query.get("state"), iss=query.get("iss")
    )
