"""Prometheus metrics and health checks (``Server(metrics=True, health=True)``): exact counts
by fixed labels, a strictly parsed exposition, gauges read at scrape time, label values that
never come from what a client sent, nothing counted with metrics off, the routes' own rules
(GET only, Host checked, never cross-origin), readiness through a drain, and the CLI flags."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from mcpkit import (
    AccessToken,
    CompleteResult,
    ConfigurationError,
    Limits,
    MemorySessionStore,
    MemoryTaskStore,
    ResourceServer,
    Revision,
    Server,
    TaskSupport,
    TokenBucket,
    TokenProblem,
    TokenRejected,
    endpoint,
    resource,
    tool,
)
from mcpkit.json import JsonObject
from mcpkit.protocol import Envelope, MessageKind
from mcpkit.server import Session
from mcpkit.server._metrics import (
    BUCKETS,
    METHOD_LABELS,
    OUTCOMES,
    REVISION_LABELS,
    MeteredResponder,
)
from mcpkit.testing import (
    TestClient,
    TestResponse,
    handshake_request,
    stateless_headers,
    stateless_request,
)

CANARY = "canary7f3a"
"""Put into every client-chosen field (tool names, URIs, ids, tokens, methods): it must never
appear in a scrape."""
MODERN = Revision.V2026_07_28
NOVEMBER = Revision.V2025_11_25
GATE = threading.Event()


@endpoint(path="/mcp", name="ops", version="1.0.0", revisions={MODERN, NOVEMBER})
class Ops:
    @tool
    def add(self, a: int, b: int) -> str:
        """Adds."""
        return str(a + b)

    @tool
    def hold(self) -> str:
        """Waits for the test's gate."""
        GATE.wait(10)
        return "released"

    @tool
    async def slow(self) -> str:
        """Outlives a short deadline."""
        await asyncio.sleep(2)
        return "late"

    @resource("ops://status", mime_type="text/plain")
    def status(self) -> str:
        """A resource."""
        return "fine"


@endpoint(
    path="/s", name="sessions", version="1.0.0", revisions={NOVEMBER}, session_revisions={NOVEMBER}
)
class Sessions:
    @tool
    def ping(self) -> str:
        """Pong."""
        return "pong"


@endpoint(path="/t", name="tasks", version="1.0.0", revisions={MODERN})
class Tasks:
    @tool(task_support=TaskSupport.OPTIONAL)
    async def job(self) -> CompleteResult:
        """Maybe a task."""
        return CompleteResult.from_tool_text("done")


# --- a strict reader of the text exposition format 0.0.4 ---------------------------------------

_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_VALUE = r'"(?:[^"\\\n]|\\[\\"n])*"'
_SAMPLE = re.compile(
    rf"(?P<name>{_NAME})(?:\{{(?P<labels>[a-zA-Z_]\w*={_VALUE}(?:,[a-zA-Z_]\w*={_VALUE})*)\}})? "
    r"(?P<value>[-+]?(?:[0-9]+(?:\.[0-9]*)?(?:e[-+]?[0-9]+)?|\+Inf|-Inf|NaN))"
)
_LABEL = re.compile(rf"([a-zA-Z_]\w*)=({_VALUE})")
_HELP = re.compile(rf"# HELP (?P<name>{_NAME}) (?P<text>.+)")
_TYPE = re.compile(rf"# TYPE (?P<name>{_NAME}) (?P<kind>counter|gauge|histogram)")


@dataclass(frozen=True)
class Sample:
    name: str
    labels: dict[str, str]
    value: float


@dataclass
class Scrape:
    kinds: dict[str, str]
    samples: list[Sample]
    text: str

    def value(self, name: str, **labels: str) -> float:
        found = [s.value for s in self.samples if s.name == name and s.labels == labels]
        assert len(found) == 1, (name, labels, found)
        return found[0]

    def values(self, name: str) -> dict[tuple[tuple[str, str], ...], float]:
        return {tuple(sorted(s.labels.items())): s.value for s in self.samples if s.name == name}


def parse(body: bytes) -> Scrape:
    """Every line is a HELP, a TYPE or a sample of the family declared just before it; a
    family is declared once; a sample (name and labels) appears once; the text ends in a
    newline."""
    text = body.decode("utf-8")
    assert text.endswith("\n") and "\r" not in text
    kinds: dict[str, str] = {}
    samples: list[Sample] = []
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    family: str | None = None
    helped: str | None = None
    for line in text[:-1].split("\n"):
        if line.startswith("# HELP "):
            match = _HELP.fullmatch(line)
            assert match is not None, line
            assert match["name"] not in kinds, line
            helped = match["name"]
            continue
        if line.startswith("# TYPE "):
            match = _TYPE.fullmatch(line)
            assert match is not None and match["name"] == helped, line
            family = match["name"]
            kinds[family] = match["kind"]
            continue
        match = _SAMPLE.fullmatch(line)
        assert match is not None, line
        name = match["name"]
        assert family is not None
        if kinds[family] == "histogram":
            assert name in (f"{family}_bucket", f"{family}_sum", f"{family}_count"), line
        else:
            assert name == family, line
        labels: dict[str, str] = {}
        for label, quoted in _LABEL.findall(match["labels"] or ""):
            assert label not in labels, line
            labels[label] = (
                quoted[1:-1].replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")
            )
        key = (name, tuple(sorted(labels.items())))
        assert key not in seen, line
        seen.add(key)
        samples.append(Sample(name, labels, float(match["value"])))
    return Scrape(kinds, samples, text)


def scrape(client: TestClient, path: str = "/metrics") -> Scrape:
    response = client.post(path, b"", method="GET")
    assert response.status == 200, response.body
    assert response.header("content-type") == "text/plain; version=0.0.4; charset=utf-8"
    assert response.header("cache-control") == "no-store"
    assert response.header("access-control-allow-origin") is None
    return parse(response.body)


def call(
    client: TestClient, name: str, arguments: dict[str, Any] | None = None, **more: Any
) -> TestResponse:
    body = stateless_request("tools/call", {"name": name, "arguments": arguments or {}}, **more)
    return client.post("/mcp", body, headers=stateless_headers("tools/call", name))


def requests(found: Scrape) -> dict[tuple[str, str, str], float]:
    return {
        (s.labels["method"], s.labels["revision"], s.labels["outcome"]): s.value
        for s in found.samples
        if s.name == "mcpkit_requests_total"
    }


def check_histograms(found: Scrape) -> None:
    """Buckets cumulative and complete, ``+Inf`` equal to ``_count``, and ``_count`` equal to
    the requests counted for the same method and revision."""
    counted: dict[tuple[str, str], float] = {}
    for (method, revision, _), value in requests(found).items():
        counted[(method, revision)] = counted.get((method, revision), 0) + value
    series = {
        (s.labels["method"], s.labels["revision"])
        for s in found.samples
        if s.name == "mcpkit_request_duration_seconds_count"
    }
    assert series == set(counted)
    bounds = [repr(bound) for bound in BUCKETS] + ["+Inf"]
    for method, revision in series:
        base = {"method": method, "revision": revision}
        buckets = [
            found.value("mcpkit_request_duration_seconds_bucket", **base, le=bound)
            for bound in bounds
        ]
        assert buckets == sorted(buckets)
        count = found.value("mcpkit_request_duration_seconds_count", **base)
        assert buckets[-1] == count == counted[(method, revision)]
        assert found.value("mcpkit_request_duration_seconds_sum", **base) >= 0


def check_labels(found: Scrape) -> None:
    """Every label value is one of a fixed set, and no canary got into the text."""
    assert CANARY not in found.text
    allowed = {
        "method": METHOD_LABELS,
        "revision": REVISION_LABELS,
        "outcome": frozenset(OUTCOMES),
        "target": frozenset({"request", "tool"}),
        "le": frozenset({*(repr(bound) for bound in BUCKETS), "+Inf"}),
    }
    for sample in found.samples:
        for label, value in sample.labels.items():
            assert value in allowed[label], (sample, label)


# --- counting -----------------------------------------------------------------------------------


def test_requests_are_counted_by_method_revision_and_outcome() -> None:
    server = Server(
        Ops,
        metrics=True,
        tool_rate_limiter=TokenBucket(5, refill_tokens=1, refill_period_seconds=3600),
    )
    with TestClient(server) as client:
        for _ in range(3):
            assert call(client, "add", {"a": 1, "b": 2}).status == 200
        # An unknown tool named by the canary: charged nothing (no limiter), -32602.
        assert call(client, CANARY).status == 400
        # 2025 calls: a result, and an error in a 200 (an unknown tool: not charged).
        version = {"MCP-Protocol-Version": "2025-11-25"}
        good = handshake_request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
        assert client.post("/mcp", good, headers=version).status == 200
        bad = handshake_request("tools/call", {"name": CANARY, "arguments": {}}, id=CANARY)
        response = client.post("/mcp", bad, headers=version)
        assert response.status == 200 and "error" in response.json  # type: ignore[operator]
        assert call(client, "add", {"a": 1, "b": 2}).status == 200  # the bucket's last token
        assert call(client, "add", {"a": 1, "b": 2}, id=CANARY).status == 429
        # A body that is not JSON, an unknown method, a resource the canary names.
        assert (
            client.post("/mcp", b"{" + CANARY.encode(), headers=stateless_headers("x")).status
            == 400
        )
        unknown = stateless_request(f"{CANARY}/method")
        assert (
            client.post("/mcp", unknown, headers=stateless_headers(f"{CANARY}/method")).status
            == 404
        )
        read = stateless_request("resources/read", {"uri": f"ops://{CANARY}"})
        headers = {
            **stateless_headers("resources/read", f"ops://{CANARY}"),
            "authorization": f"Bearer {CANARY}",
        }
        assert client.post("/mcp", read, headers=headers).status == 400
        # A notification and a client's response.
        note = stateless_request("notifications/cancelled", {"requestId": CANARY}, id=None)
        assert (
            client.post("/mcp", note, headers=stateless_headers("notifications/cancelled")).status
            == 202
        )
        answer = {"jsonrpc": "2.0", "id": CANARY, "result": {}}
        assert client.post("/mcp", answer).status == 202
        found = scrape(client)
    assert requests(found) == {
        ("tools/call", "2026-07-28", "ok"): 4,
        ("tools/call", "2026-07-28", "error"): 1,
        ("tools/call", "2026-07-28", "rate_limited"): 1,
        ("other", "none", "error"): 1,
        ("other", "2026-07-28", "error"): 1,
        ("resources/read", "2026-07-28", "error"): 1,
        ("notifications/cancelled", "2026-07-28", "ok"): 1,
        ("response", "none", "ok"): 1,
        ("tools/call", "2025-11-25", "ok"): 1,
        ("tools/call", "2025-11-25", "error"): 1,
    }
    assert found.values("mcpkit_rate_limit_denials_total") == {
        (("target", "request"),): 0,
        (("target", "tool"),): 1,
    }
    assert found.kinds == {
        "mcpkit_requests_total": "counter",
        "mcpkit_request_duration_seconds": "histogram",
        "mcpkit_rate_limit_denials_total": "counter",
        "mcpkit_handler_slots_busy": "gauge",
        "mcpkit_queued_requests": "gauge",
        "mcpkit_sessions": "gauge",
        "mcpkit_listen_streams": "gauge",
        "mcpkit_tasks_running": "gauge",
    }
    check_histograms(found)
    check_labels(found)


def test_request_limiter_denials_have_their_target() -> None:
    limiter = TokenBucket(1, refill_tokens=1, refill_period_seconds=3600)
    with TestClient(Server(Ops, metrics=True, request_rate_limiter=limiter)) as client:
        assert call(client, "add", {"a": 1, "b": 2}).status == 200
        assert call(client, "add", {"a": 1, "b": 2}).status == 429
        found = scrape(client)
    assert found.value("mcpkit_rate_limit_denials_total", target="request") == 1
    assert found.value("mcpkit_rate_limit_denials_total", target="tool") == 0
    assert requests(found)[("tools/call", "2026-07-28", "rate_limited")] == 1


class Verifier:
    async def verify(self, token: str) -> AccessToken:
        raise TokenRejected(TokenProblem.SIGNATURE)


def test_unauthorized_calls_are_counted_without_their_token() -> None:
    auth = ResourceServer(
        "http://127.0.0.1:8000",
        authorization_servers=["https://issuer.example"],
        verifier=Verifier(),
    )
    with TestClient(Server(Ops, auth=auth, metrics=True)) as client:
        assert call(client, "add").status == 401
        body = stateless_request("tools/call", {"name": "add", "arguments": {}})
        headers = {**stateless_headers("tools/call", "add"), "authorization": f"Bearer {CANARY}"}
        assert client.post("/mcp", body, headers=headers).status == 401
        # The metadata documents are still served beside the metrics, and not counted.
        assert (
            client.post("/.well-known/oauth-protected-resource/mcp", b"", method="GET").status
            == 200
        )
        found = scrape(client)
    assert requests(found) == {("tools/call", "2026-07-28", "unauthorized"): 2}
    check_labels(found)


def test_deadlines_departures_and_overload_have_their_outcomes() -> None:
    limits = Limits(request_timeout_seconds=0.5)
    server = Server(Ops, metrics=True, limits=limits)
    with TestClient(server) as client:
        assert call(client, "slow").status == 504
        body = stateless_request("tools/call", {"name": "slow", "arguments": {}})
        gone = client.post_disconnecting(
            "/mcp", body, after=0.1, headers=stateless_headers("tools/call", "slow")
        )
        assert gone is None
        asyncio.run(server.engine.drain(5.0))
        assert call(client, "add", {"a": 1, "b": 2}).status == 503
        found = scrape(client)
    assert requests(found) == {
        ("tools/call", "2026-07-28", "timeout"): 1,
        ("tools/call", "2026-07-28", "cancelled"): 1,
        ("tools/call", "2026-07-28", "overloaded"): 1,
    }
    check_histograms(found)


def test_a_pipeline_that_raises_is_counted_as_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    server = Server(Ops, metrics=True)

    async def broken(*arguments: object) -> None:
        raise RuntimeError("broken")

    with TestClient(server) as client:
        monkeypatch.setattr(server.engine.pipeline, "handle", broken)
        with pytest.raises(RuntimeError):
            call(client, "add")
        monkeypatch.undo()
        found = scrape(client)
    assert requests(found) == {("other", "none", "error"): 1}


def test_the_gauges_are_read_when_scraped() -> None:
    GATE.clear()
    server = Server([Ops, Sessions], metrics=True, limits=Limits(handler_slots=1))
    with TestClient(server) as client:
        initialize = handshake_request(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": CANARY}},
        )
        opened = client.post("/s", initialize)
        assert opened.status == 200 and opened.header("mcp-session-id")
        body = stateless_request("tools/call", {"name": "hold", "arguments": {}})
        first = client.submit("/mcp", body, headers=stateless_headers("tools/call", "hold"))
        second = client.submit("/mcp", body, headers=stateless_headers("tools/call", "hold"))
        found = _until(client, lambda f: f.value("mcpkit_queued_requests") == 1)
        assert found.value("mcpkit_handler_slots_busy") == 1
        assert found.value("mcpkit_sessions") == 1
        assert found.value("mcpkit_listen_streams") == 0
        assert found.value("mcpkit_tasks_running") == 0
        GATE.set()
        assert first.result(10).status == second.result(10).status == 200
        found = _until(client, lambda f: f.value("mcpkit_handler_slots_busy") == 0)
        assert found.value("mcpkit_queued_requests") == 0
        assert requests(found)[("initialize", "2025-11-25", "ok")] == 1
        check_labels(found)


def _until(client: TestClient, done: Callable[[Scrape], bool]) -> Scrape:
    deadline = time.monotonic() + 10
    while True:
        found = scrape(client)
        if done(found) or time.monotonic() > deadline:
            return found
        time.sleep(0.01)


class Unsized:
    """A session store that cannot tell how many sessions it holds."""

    def __init__(self) -> None:
        self._store = MemorySessionStore(Limits())

    async def create(
        self,
        owner: str | None,
        path: str,
        revision: Revision,
        client_info: JsonObject | None,
        client_capabilities: JsonObject | None,
    ) -> Session:
        return await self._store.create(owner, path, revision, client_info, client_capabilities)

    async def get(self, session_id: str) -> Session | None:
        return await self._store.get(session_id)

    async def touch(self, session: Session) -> None:
        await self._store.touch(session)

    async def end(self, session: Session) -> None:
        await self._store.end(session)


def test_a_session_store_without_a_size_leaves_the_gauge_out() -> None:
    with TestClient(Server(Sessions, metrics=True, sessions=Unsized())) as client:
        found = scrape(client)
    assert "mcpkit_sessions" not in found.kinds
    assert "mcpkit_handler_slots_busy" in found.kinds


def test_a_server_with_tasks_reports_its_running_tasks() -> None:
    with TestClient(Server(Tasks, metrics=True, task_store=MemoryTaskStore())) as client:
        assert scrape(client).value("mcpkit_tasks_running") == 0


def test_the_responder_notes_listens_and_abandoned_requests() -> None:
    class Exchange:
        def __init__(self) -> None:
            self.statuses: list[int] = []

        async def start(self, status: int, headers: object) -> None:
            self.statuses.append(status)

        async def write(self, body: bytes, *, more: bool) -> None:
            pass

    class Listening:
        async def run(self, disconnected: object, write: Any) -> None:
            await write(None, True)

    async def scenario() -> tuple[MeteredResponder, MeteredResponder]:
        listened = MeteredResponder(Exchange(), (), budget=100, disconnected=asyncio.Event())
        await listened.listen(Listening())  # type: ignore[arg-type]
        abandoned = MeteredResponder(Exchange(), (), budget=100, disconnected=asyncio.Event())
        abandoned.opened(Envelope(MessageKind.REQUEST, 1, "tools/call", None))
        await abandoned.finish(200, b'{"jsonrpc":"2.0","id":1,"result":{}}')
        await abandoned.abandon()
        return listened, abandoned

    listened, abandoned = asyncio.run(scenario())
    assert (listened.status, listened.failed) == (200, False)
    assert abandoned.status is None


# --- off by default -----------------------------------------------------------------------------


def test_without_metrics_nothing_is_counted_and_there_is_no_route() -> None:
    limiter = TokenBucket(1, refill_tokens=1, refill_period_seconds=3600)
    server = Server(Ops, tool_rate_limiter=limiter)
    assert server.metrics is None and server.health is False
    assert server.engine.metrics is None and server.engine.pipeline.metrics is None
    with TestClient(server) as client:
        assert call(client, "add", {"a": 1, "b": 2}).status == 200
        assert call(client, "add", {"a": 1, "b": 2}).status == 429
        for path in ("/metrics", "/healthz", "/readyz"):
            assert client.post(path, b"", method="GET").status == 404


# --- the routes ---------------------------------------------------------------------------------


def test_the_metrics_route_is_get_only_host_checked_and_never_cross_origin() -> None:
    with TestClient(Server(Ops, metrics="/ops/metrics", health=True)) as client:
        assert client.post("/metrics", b"", method="GET").status == 404
        scrape(client, "/ops/metrics")
        for path in ("/ops/metrics", "/healthz", "/readyz"):
            posted = client.post(path, b"")
            assert posted.status == 405 and posted.header("allow") == "GET"
            assert client.post(path, b"", method="OPTIONS").status == 405
            crossed = client.post(
                path, b"", method="GET", headers={"origin": "https://evil.example"}
            )
            assert crossed.status == 403 and crossed.header("access-control-allow-origin") is None
            rebound = client.post(path, b"", method="GET", headers={"host": "evil.example"})
            assert rebound.status == 421
        found = scrape(client, "/ops/metrics")
    assert requests(found) == {}  # the routes themselves are not counted


def test_health_reports_liveness_and_readiness_through_a_drain() -> None:
    server = Server(Ops, health=True)
    with TestClient(server, lifespan=False) as client:
        starting = client.post("/readyz", b"", method="GET")
        assert (starting.status, starting.body) == (503, b'{"status":"starting"}')
        assert starting.header("retry-after") == "1"
    with TestClient(server) as client:
        alive = client.post("/healthz", b"", method="GET")
        assert (alive.status, alive.body) == (200, b'{"status":"ok"}')
        assert alive.header("content-type") == "application/json"
        ready = client.post("/readyz", b"", method="GET")
        assert (ready.status, ready.body) == (200, b'{"status":"ready"}')
        asyncio.run(server.engine.drain(5.0))
        draining = client.post("/readyz", b"", method="GET")
        assert (draining.status, draining.body) == (503, b'{"status":"draining"}')
        assert client.post("/healthz", b"", method="GET").status == 200  # still alive
    server.engine.pipeline.stopping = False
    with TestClient(server, lifespan=False) as client:
        stopped = client.post("/readyz", b"", method="GET")
        assert (stopped.status, stopped.body) == (503, b'{"status":"stopped"}')
    with TestClient(server) as client:
        assert client.post("/metrics", b"", method="GET").status == 404


# --- configuration ------------------------------------------------------------------------------


@endpoint(path="/metrics", name="clash", version="1.0.0")
class Clash:
    @tool
    def ping(self) -> str:
        """Pong."""
        return "pong"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"metrics": 3}, "metrics must be True, False or a path"),
        ({"metrics": "metrics"}, "metrics must be True, False or a path"),
        ({"metrics": "/m?x=1"}, "metrics must be True, False or a path"),
        ({"metrics": "/.well-known/metrics"}, "under /.well-known/"),
        ({"metrics": "/healthz", "health": True}, "is a health route's path"),
        ({"health": "yes"}, "health must be True or False"),
    ],
)
def test_bad_options_are_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        Server(Ops, **options)


def test_an_endpoint_at_an_operational_path_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="operational route"):
        Server(Clash, metrics=True)
    assert Server(Clash, metrics="/ops").metrics == "/ops"
    assert Server(Clash, metrics=False).metrics is None


def test_configured_turns_metrics_and_health_on_and_keeps_them() -> None:
    server = Server(Ops)
    on = server.configured(metrics=True, health=True)
    assert (on.metrics, on.health) == ("/metrics", True)
    assert on.engine.metrics is not None and on.engine.metrics is on.engine.pipeline.metrics
    kept = on.configured(port=9000)
    assert (kept.metrics, kept.health) == ("/metrics", True)
    off = on.configured(metrics=False, health=False)
    assert (off.metrics, off.health) == (None, False)
