"""Bounded HTTP fetches for the verifiers: a JWKS document or an introspection answer.

Every fetch has a deadline (``limits.verifier_timeout_seconds``, connecting included), a size
bound, no redirects, and must answer 200 with a JSON object read by mcpkit's strict codec;
anything else is ``VerifierUnavailable`` and nothing of the answer is kept or logged.  httpx is
imported here only, when a verifier first fetches.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Mapping
from typing import TYPE_CHECKING

from mcpkit.errors import ConfigurationError, ProtocolError
from mcpkit.json import JsonObject, decode
from mcpkit.limits import Limits
from mcpkit.server._access_token import VerifierUnavailable

if TYPE_CHECKING:
    import httpx

__all__ = ["JsonFetcher", "require_oauth_extra"]


def require_oauth_extra(who: str) -> None:
    """Refuse to build ``who`` without the ``oauth`` extra: now, not on the first request."""
    if importlib.util.find_spec("jwt") is None or importlib.util.find_spec("httpx") is None:
        raise ConfigurationError(f"{who} needs the oauth extra: pip install 'mcpkit[oauth]'")


class JsonFetcher:
    """Fetches JSON objects over one connection pool per event loop (an httpx client is tied
    to the loop it was made in, and a server may be started in more than one).  The usual
    environment settings apply (``HTTPS_PROXY``, ``NO_PROXY``, ``SSL_CERT_FILE``), for
    servers that reach their authorization server through an outbound proxy."""

    __slots__ = ("_client", "_limits", "_loop", "_max_bytes")

    def __init__(self, limits: Limits, max_bytes: int) -> None:
        self._limits = limits
        self._max_bytes = max_bytes
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _pool(self) -> httpx.AsyncClient:
        import httpx  # the oauth extra; only a verifier that fetches needs it

        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            timeout = self._limits.verifier_timeout_seconds
            self._client = httpx.AsyncClient(timeout=httpx.Timeout(timeout), follow_redirects=False)
            self._loop = loop
        return self._client

    async def get(self, url: str) -> JsonObject:
        return await self._fetch("GET", url, None, None)

    async def post_form(
        self, url: str, form: Mapping[str, str], auth: tuple[str, str] | None
    ) -> JsonObject:
        return await self._fetch("POST", url, form, auth)

    async def _fetch(
        self,
        method: str,
        url: str,
        form: Mapping[str, str] | None,
        auth: tuple[str, str] | None,
    ) -> JsonObject:
        client = self._pool()
        try:
            async with asyncio.timeout(self._limits.verifier_timeout_seconds):
                body = bytearray()
                async with client.stream(
                    method,
                    url,
                    data=None if form is None else dict(form),
                    auth=auth,
                    headers={"accept": "application/json"},
                ) as response:
                    if response.status_code != 200:
                        raise VerifierUnavailable()
                    async for chunk in response.aiter_raw():
                        body += chunk
                        if len(body) > self._max_bytes:
                            raise VerifierUnavailable()
            value = decode(bytes(body), limits=self._limits)
        except VerifierUnavailable:
            raise
        except Exception as error:  # unreachable, slow, reset or not JSON
            if isinstance(error, ProtocolError) or _is_network(error):
                raise VerifierUnavailable() from None
            raise
        if not isinstance(value, JsonObject):
            raise VerifierUnavailable()
        return value

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()


def _is_network(error: BaseException) -> bool:
    """A failure of the remote side or the network (not a bug here)."""
    import httpx

    return isinstance(error, (httpx.HTTPError, TimeoutError, OSError, UnicodeError))
