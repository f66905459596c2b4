"""The policy values of ``mcpkit.server._policy`` on their own: ``CorsPolicy``, ``Admitted`` /
``Rejected`` and ``AdmissionRequest``.  Their effect on the wire
is tested in ``test_http_pipeline.py``."""

from __future__ import annotations

import dataclasses

import pytest

import mcpkit
from mcpkit import AdmissionRequest, Admitted, CorsPolicy, Rejected, Revision
from mcpkit.errors import (
    ConfigurationError,
    HeaderMismatch,
    InternalError,
    InvalidRequest,
    ProtocolError,
)
from mcpkit.server._http import HttpRequest


@mcpkit.endpoint(path="/mcp", name="policy", version="1.0.0", revisions={Revision.V2026_07_28})
class Policy:
    @mcpkit.tool(name="noop")
    def noop(self) -> mcpkit.CompleteResult:
        return mcpkit.CompleteResult.from_tool_text("ok")


REQUEST = HttpRequest(method="POST", raw_path="/mcp", headers=(("host", "localhost"),))


# --- CorsPolicy -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "origin",
    [
        "http://localhost",
        "http://localhost:3000",
        "https://localhost",
        "https://localhost:8443",
        "http://127.0.0.1",
        "http://127.0.0.1:6274",
        "https://127.0.0.1:1",
        "http://[::1]",
        "http://[::1]:6274",
        "https://[::1]:65535",
    ],
)
def test_loopback_allows_local_pages_on_any_port(origin: str) -> None:
    assert CorsPolicy.loopback().allows(origin, REQUEST) is True


@pytest.mark.parametrize(
    "origin",
    [
        "http://localhost.evil.com",
        "http://localhost.evil.com:3000",
        "http://evil-localhost",
        "http://evil.localhost",
        "http://127.0.0.1.nip.io",
        "http://127.0.0.2",
        "http://[::2]",
        "http://[::1",
        "http://::1",
        "http://0.0.0.0:3000",
        "http://evil.example.com",
        "http://localhost:3000/",
        "http://localhost:3000/path",
        "http://localhost:",
        "http://localhost:123456",
        "http://localhost:30a0",
        "http://user@localhost",
        "http://localhost@evil.com",
        "http://localhost\n",
        " http://localhost",
        "localhost:3000",
        "//localhost",
        "ws://localhost",
        "file://localhost",
        "httpx://localhost",
        "null",
        "",
    ],
)
def test_loopback_refuses_everything_else(origin: str) -> None:
    assert CorsPolicy.loopback().allows(origin, REQUEST) is False


def test_origins_allows_exactly_the_listed_origins() -> None:
    policy = CorsPolicy.origins("https://app.example", "http://localhost:5173")
    assert policy.allows("https://app.example", REQUEST) is True
    assert policy.allows("http://localhost:5173", REQUEST) is True
    for other in (
        "https://app.example:443",
        "https://app.example/",
        "http://app.example",
        "HTTPS://APP.EXAMPLE",
        "https://app.example.evil.com",
        "http://localhost:5174",
        "null",
        "",
    ):
        assert policy.allows(other, REQUEST) is False, other


def test_origins_with_none_allows_nothing() -> None:
    assert CorsPolicy.origins().allows("http://localhost", REQUEST) is False


@pytest.mark.parametrize("origins", [("",), ("https://a.example", ""), (None,), (1,)])
def test_origins_must_be_non_empty_strings(origins: tuple[object, ...]) -> None:
    with pytest.raises(ConfigurationError, match="non-empty str"):
        CorsPolicy.origins(*origins)  # type: ignore[arg-type]


@pytest.mark.parametrize("allow", [None, "http://localhost", True, ["http://localhost"]])
def test_a_non_callable_policy_is_a_configuration_error(allow: object) -> None:
    with pytest.raises(ConfigurationError, match="callable"):
        CorsPolicy(allow)  # type: ignore[arg-type]


def test_a_policy_gets_the_exact_origin_and_request() -> None:
    seen: list[tuple[str, HttpRequest]] = []

    def allow(origin: str, request: HttpRequest) -> bool:
        seen.append((origin, request))
        return True

    assert CorsPolicy(allow).allows("https://a.example", REQUEST) is True
    assert seen == [("https://a.example", REQUEST)]
    assert seen[0][1] is REQUEST


@pytest.mark.parametrize("answer", [1, "yes", None, False, [True], object()])
def test_only_true_allows(answer: object) -> None:
    """An out-of-range answer fails closed."""
    policy = CorsPolicy(lambda origin, request: answer)  # type: ignore[arg-type,return-value]
    assert policy.allows("http://localhost", REQUEST) is False


@pytest.mark.parametrize("error", [RuntimeError("x"), ValueError("x"), KeyError("x")])
def test_a_policy_that_raises_refuses(error: Exception) -> None:
    def allow(origin: str, request: HttpRequest) -> bool:
        raise error

    assert CorsPolicy(allow).allows("http://localhost", REQUEST) is False


def test_the_policy_repr_shows_nothing_of_its_function() -> None:
    assert repr(CorsPolicy.origins("https://secret.example")) == "CorsPolicy()"


def test_the_policy_types_are_public() -> None:
    assert mcpkit.CorsPolicy is CorsPolicy
    assert mcpkit.Admitted is Admitted
    assert mcpkit.Rejected is Rejected
    assert mcpkit.AdmissionRequest is AdmissionRequest


# --- Admitted and AdmissionRequest ----------------------------------------------------------


def test_admitted_carries_any_identity_and_defaults_to_none() -> None:
    assert Admitted().identity is None
    identity = object()
    assert Admitted(identity).identity is identity
    assert Admitted(identity=identity).identity is identity


def test_admitted_and_admission_requests_are_frozen() -> None:
    asked = AdmissionRequest(
        endpoint=Policy.__mcp_endpoint__,  # type: ignore[attr-defined]
        http_request=REQUEST,
        revision=Revision.V2026_07_28,
        method="tools/call",
        notification=False,
    )
    assert asked.endpoint is Policy.__mcp_endpoint__  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        asked.method = "x"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        Admitted().identity = "x"  # type: ignore[misc]


# --- Rejected -------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [400, 401, 403, 404, 429, 500, 503, 599])
def test_rejected_takes_statuses_from_400_to_599(status: int) -> None:
    rejected = Rejected(status)
    assert (rejected.status, rejected.error, rejected.headers) == (status, None, ())


@pytest.mark.parametrize("status", [0, 200, 204, 302, 399, 600, 999, -401, True, 401.0, "401"])
def test_rejected_refuses_other_statuses(status: object) -> None:
    with pytest.raises(ConfigurationError, match="400 to 599"):
        Rejected(status)  # type: ignore[arg-type]


@pytest.mark.parametrize("error", [InvalidRequest(), HeaderMismatch(), InternalError()])
def test_rejected_carries_a_protocol_error(error: ProtocolError) -> None:
    assert Rejected(401, error).error is error


@pytest.mark.parametrize("error", [ValueError("x"), "Invalid Request", -32600, InvalidRequest])
def test_rejected_refuses_other_errors(error: object) -> None:
    with pytest.raises(ConfigurationError, match="ProtocolError"):
        Rejected(401, error)  # type: ignore[arg-type]


def test_rejected_keeps_safe_headers_as_given() -> None:
    headers = (
        ("WWW-Authenticate", 'Bearer realm="mcp", error="invalid_token"'),
        ("X-Request-Id", "abc\t123"),
        ("Link", "<https://example.com/.well-known/oauth-protected-resource>; rel=meta"),
        ("x-empty", ""),
        ("!#$%&'*+-.^_`|~09AZaz", "~"),
    )
    assert Rejected(401, None, headers=headers).headers == headers


@pytest.mark.parametrize(
    "name",
    [
        "Cache-Control",
        "cache-control",
        "CONNECTION",
        "Content-Encoding",
        "Content-Length",
        "Content-Type",
        "Keep-Alive",
        "Proxy-Authenticate",
        "Proxy-Authorization",
        "Proxy-Connection",
        "TE",
        "Trailer",
        "Transfer-Encoding",
        "Upgrade",
        "Retry-After",
        "Mcp-Session-Id",
        "MCP-Session-Id",
        "Last-Event-ID",
        "Access-Control-Allow-Origin",
        "access-control-allow-headers",
        "Access-Control-Expose-Headers",
        "Access-Control-Anything",
    ],
)
def test_rejected_refuses_reserved_headers(name: str) -> None:
    """framework-owned names can never be set by a rejection."""
    with pytest.raises(ConfigurationError, match="reserved"):
        Rejected(401, headers=((name, "x"),))


@pytest.mark.parametrize("other", ["WWW-Authenticate", "www-authenticate", "WWW-AUTHENTICATE"])
def test_rejected_refuses_duplicate_names_ignoring_case(other: str) -> None:
    with pytest.raises(ConfigurationError, match="unique"):
        Rejected(401, headers=(("WWW-Authenticate", "Bearer"), (other, "Basic")))


@pytest.mark.parametrize(
    "name", ["", "Bad Header", "X:Y", "X(Y)", "X/Y", "X\tY", "É", "X\nY", "X@Y", '"X"']
)
def test_rejected_refuses_names_that_are_not_tokens(name: str) -> None:
    with pytest.raises(ConfigurationError, match="token"):
        Rejected(401, headers=((name, "x"),))


@pytest.mark.parametrize(
    "value", ["a\nb", "a\rb", "a\x00b", "\x7f", "é", "a\x1fb", "Bearer\r\nX-Injected: 1"]
)
def test_rejected_refuses_values_that_are_not_visible_ascii_or_tab(value: str) -> None:
    with pytest.raises(ConfigurationError, match="visible ASCII"):
        Rejected(401, headers=(("X-Value", value),))


@pytest.mark.parametrize("value", [" Bearer", "Bearer ", "\tBearer", "Bearer\t", " "])
def test_rejected_refuses_values_with_surrounding_whitespace(value: str) -> None:
    with pytest.raises(ConfigurationError, match="visible ASCII"):
        Rejected(401, headers=(("WWW-Authenticate", value),))


@pytest.mark.parametrize("pair", [(b"X", "x"), ("X", b"x"), ("X", 1), (None, "x")])
def test_rejected_refuses_non_str_names_and_values(pair: tuple[object, object]) -> None:
    with pytest.raises(ConfigurationError):
        Rejected(401, headers=(pair,))  # type: ignore[arg-type]


def numbered(count: int) -> tuple[tuple[str, str], ...]:
    return tuple((f"X-H{index}", "v") for index in range(count))


def test_rejected_takes_at_most_100_headers() -> None:
    assert len(Rejected(401, headers=numbered(100)).headers) == 100
    with pytest.raises(ConfigurationError, match="100 headers"):
        Rejected(401, headers=numbered(101))


def test_rejected_takes_at_most_65536_header_bytes() -> None:
    """Each field counts its name, its value and 4."""
    name = "X-Big"
    at_limit = "v" * (65_536 - len(name) - 4)
    assert Rejected(401, headers=((name, at_limit),)).headers == ((name, at_limit),)
    with pytest.raises(ConfigurationError, match="65,536"):
        Rejected(401, headers=((name, at_limit + "v"),))


def test_rejected_counts_every_field_toward_the_byte_limit() -> None:
    fields = [("X-A", "a" * 30_000), ("X-B", "b" * 30_000)]
    rest = 65_536 - sum(len(n) + len(v) + 4 for n, v in fields) - len("X-C") - 4
    fields.append(("X-C", "c" * rest))
    assert len(Rejected(401, headers=tuple(fields)).headers) == 3
    fields[-1] = ("X-C", "c" * (rest + 1))
    with pytest.raises(ConfigurationError, match="65,536"):
        Rejected(401, headers=tuple(fields))


def test_rejected_is_frozen() -> None:
    rejected = Rejected(401)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rejected.status = 500  # type: ignore[misc]


@pytest.mark.parametrize("key", ["a", "é" * 128, "x" * 256])
def test_admitted_authorization_partition_within_the_bound(key: str) -> None:
    """a keyed partition is 1 to 256 UTF-8 bytes."""
    assert Admitted(authorization=key).authorization == key


@pytest.mark.parametrize("key", ["", "x" * 257, "é" * 129, "\ud800", 7])
def test_admitted_authorization_partition_refused(key: object) -> None:
    with pytest.raises(ConfigurationError, match="authorization"):
        Admitted(authorization=key)  # type: ignore[arg-type]
