"""2025 sessions over HTTP: ``initialize`` opens one, later requests present its id, ``DELETE``
ends it, the owner admission named at ``initialize`` is the only one who can use it, and the
quotas of ``Limits`` hold at their limit and refuse just past it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

import pytest

import mcpkit
from mcpkit import (
    AdmissionRequest,
    Admitted,
    CancellationToken,
    CompleteResult,
    Limits,
    MemorySessionStore,
    Rejected,
    RequestContext,
    Revision,
    Server,
    SessionQuota,
    TooManySessions,
)
from mcpkit.json import JsonObject
from mcpkit.server import Session
from mcpkit.server._audience import Audience
from mcpkit.server._broadcast import Change, ChangeKind, MemoryBroadcaster
from mcpkit.server._sessions import RECLAIM_AFTER_SECONDS
from mcpkit.testing import TestClient, TestResponse, handshake_request

JUNE, NOVEMBER, MODERN = Revision.V2025_06_18, Revision.V2025_11_25, Revision.V2026_07_28
WAIT = 10.0
INIT = {"protocolVersion": "2025-11-25", "capabilities": {"roots": {}}, "clientInfo": {"name": "c"}}


class Gate:
    """Lets a test hold a ``def`` tool until it says so."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.cancelled = threading.Event()


gate = Gate()
cancel_target: dict[str, Any] = {}


@mcpkit.endpoint(
    path="/mcp",
    name="sessions",
    version="1.0.0",
    revisions={JUNE, NOVEMBER, MODERN},
    session_revisions={JUNE, NOVEMBER},
)
class Sessions:
    @mcpkit.tool(name="who")
    def who(self, ctx: RequestContext) -> CompleteResult:
        info = ctx.client_info or JsonObject()
        return CompleteResult.from_tool_text(
            f"{info.get('name')} {sorted(ctx.client_capabilities)}"
        )

    @mcpkit.tool(name="hold")
    def hold(self, token: CancellationToken) -> CompleteResult:
        gate.entered.set()
        while not gate.release.wait(0.01):
            if token.cancelled:
                gate.cancelled.set()
                return CompleteResult.from_tool_text("cancelled")
        return CompleteResult.from_tool_text("released")

    @mcpkit.tool(name="report_then_hold")
    def report_then_hold(
        self, token: CancellationToken, progress: mcpkit.ProgressReporter | None
    ) -> CompleteResult:
        assert progress is not None
        progress.report(1)
        return self.hold(token)

    @mcpkit.tool(name="log")
    def log(self, logger: mcpkit.RequestLogger | None) -> CompleteResult:
        assert logger is not None
        logger.info("info message")
        logger.error("error message")
        return CompleteResult.from_tool_text("logged")

    @mcpkit.resource(uri="test://doc", name="doc")
    def doc(self) -> mcpkit.ResourceOutput:
        contents = mcpkit.TextResourceContents(uri="test://doc", text="v1")
        return mcpkit.ResourceOutput(contents=(contents,))

    @mcpkit.resource(uri="test://item/{id}", name="item")
    def item(self, id: str) -> mcpkit.ResourceOutput:
        contents = mcpkit.TextResourceContents(uri=f"test://item/{id}", text=id)
        return mcpkit.ResourceOutput(contents=(contents,))

    @mcpkit.tool(name="self_cancel")
    async def self_cancel(self) -> CompleteResult:
        # never suspends: it completes in the same step in which its own cancel arrives
        cancel_target["session"].cancel(cancel_target["id"])
        return CompleteResult.from_tool_text("done anyway")


@mcpkit.endpoint(
    path="/other", name="other", version="1.0.0", revisions={NOVEMBER}, session_revisions={NOVEMBER}
)
class Other:
    @mcpkit.tool(name="ping")
    def ping(self) -> CompleteResult:
        return CompleteResult.from_tool_text("pong")


@mcpkit.endpoint(path="/stateless", name="stateless", version="1.0.0", revisions={NOVEMBER})
class Stateless:
    @mcpkit.tool(name="ping")
    def ping(self) -> CompleteResult:
        return CompleteResult.from_tool_text("pong")


def owner_by_header(request: AdmissionRequest) -> Admitted | Rejected:
    """The owner is the ``X-Owner`` header (a stand-in for a verified credential)."""
    assert request.http_request is not None
    owner = dict(request.http_request.headers).get("x-owner")
    if owner == "nobody":
        return Rejected(status=401, headers=(("WWW-Authenticate", "Bearer"),))
    return Admitted(authorization=owner)


@pytest.fixture()
def client() -> Iterator[TestClient]:
    with TestClient(Server([Sessions, Other, Stateless], admission=owner_by_header)) as c:
        yield c


def initialize(
    client: TestClient, path: str = "/mcp", owner: str | None = None, version: str = "2025-11-25"
) -> str:
    headers = {} if owner is None else {"x-owner": owner}
    params = {**INIT, "protocolVersion": version}
    response = client.post(path, handshake_request("initialize", params), headers=headers)
    assert response.status == 200, response.body
    session_id = response.header("mcp-session-id")
    assert session_id is not None
    return session_id


def call(
    client: TestClient,
    tool: str,
    session_id: str | None,
    *,
    path: str = "/mcp",
    owner: str | None = None,
    id: int = 1,
    version: str | None = "2025-11-25",
) -> TestResponse:
    headers = {}
    if session_id is not None:
        headers["mcp-session-id"] = session_id
    if owner is not None:
        headers["x-owner"] = owner
    if version is not None:
        headers["mcp-protocol-version"] = version
    message = handshake_request("tools/call", {"name": tool, "arguments": {}}, id=id)
    return client.post(path, message, headers=headers)


def member(value: object, *path: str | int) -> Any:
    """``value[path[0]][path[1]]...`` of a decoded message, failing on a wrong shape."""
    for step in path:
        assert isinstance(value, (JsonObject, tuple, list)), value
        value = value[step]  # type: ignore[index]
    return value


def text(response: TestResponse) -> str:
    return str(member(response.json, "result", "content", 0, "text"))


def error(response: TestResponse) -> tuple[int, int, str]:
    failure = member(response.json, "error")
    return response.status, member(failure, "code"), member(failure, "message")


NOT_FOUND = (404, -32001, "Session not found; initialize a new session")
REQUIRED = (400, -32000, "Mcp-Session-Id required; send initialize first")


# --- opening, using and ending a session -------------------------------------------------------


def test_initialize_opens_a_session_whose_id_later_requests_present(client: TestClient) -> None:
    session_id = initialize(client, owner="alice")
    assert len(session_id) >= 43 and session_id.isascii() and session_id.isprintable()
    assert initialize(client, owner="alice") != session_id  # a fresh id every time
    # the session remembers what initialize said about the client
    assert text(call(client, "who", session_id, owner="alice")) == "c ['roots']"
    # the revision it negotiated is the default when the header is left out
    assert text(call(client, "who", session_id, owner="alice", version=None)) == "c ['roots']"


def test_logging_set_level_is_remembered_for_the_session_only(client: TestClient) -> None:
    session_id = initialize(client, owner="alice")
    headers = {"mcp-session-id": session_id, "x-owner": "alice"}
    set_level = handshake_request("logging/setLevel", {"level": "error"}, id=2)
    assert client.post("/mcp", set_level, headers=headers).status == 200
    levels = [
        member(message, "params", "level")
        for message in call(client, "log", session_id, owner="alice", id=3).messages[:-1]
    ]
    assert levels == ["error"]
    other = initialize(client, owner="alice")  # a session of its own starts at info
    logged = call(client, "log", other, owner="alice", id=4).messages[:-1]
    assert [member(message, "params", "level") for message in logged] == ["info", "error"]


def test_a_request_without_the_id_is_400_and_an_unknown_id_404(client: TestClient) -> None:
    initialize(client, owner="alice")
    assert error(call(client, "who", None, owner="alice")) == REQUIRED
    assert error(call(client, "who", "no-such-session", owner="alice")) == NOT_FOUND


def test_a_session_belongs_to_its_owner_endpoint_and_revision(client: TestClient) -> None:
    session_id = initialize(client, owner="alice")
    assert error(call(client, "who", session_id, owner="mallory")) == NOT_FOUND
    assert error(call(client, "who", session_id)) == NOT_FOUND  # the anonymous owner
    assert error(call(client, "ping", session_id, owner="alice", path="/other")) == NOT_FOUND
    assert error(call(client, "who", session_id, owner="alice", version="2025-06-18")) == (
        NOT_FOUND
    )
    assert text(call(client, "who", session_id, owner="alice")) == "c ['roots']"


def test_delete_ends_the_session_and_then_everything_about_it_is_404(client: TestClient) -> None:
    session_id = initialize(client, owner="alice")
    headers = {"mcp-session-id": session_id, "x-owner": "alice"}
    assert client.post(
        "/mcp", b"", method="DELETE", headers={**headers, "x-owner": "eve"}
    ).status == (404)
    ended = client.post("/mcp", b"", method="DELETE", headers=headers)
    assert (ended.status, ended.body) == (204, b"")
    assert error(call(client, "who", session_id, owner="alice")) == NOT_FOUND
    again = client.post("/mcp", b"", method="DELETE", headers=headers)
    assert again.status == 404


def test_delete_refusals(client: TestClient) -> None:
    session_id = initialize(client, owner="alice")
    missing = client.post("/mcp", b"", method="DELETE", headers={"x-owner": "alice"})
    assert missing.status == 400
    denied = client.post(
        "/mcp", b"", method="DELETE", headers={"mcp-session-id": session_id, "x-owner": "nobody"}
    )
    assert (denied.status, denied.header("www-authenticate"), denied.body) == (401, "Bearer", b"")
    versioned = {"mcp-session-id": session_id, "x-owner": "alice", "mcp-protocol-version": "1999"}
    assert client.post("/mcp", b"", method="DELETE", headers=versioned).status == 400
    named = {**versioned, "mcp-protocol-version": "2025-11-25"}
    assert client.post("/mcp", b"", method="DELETE", headers=named).status == 204


def test_delete_and_get_at_an_endpoint_without_sessions_are_405(client: TestClient) -> None:
    for path, allow in (("/stateless", "POST, OPTIONS"), ("/mcp", "GET, POST, DELETE, OPTIONS")):
        response = client.post(path, b"", method="PUT")
        assert (response.status, response.header("allow")) == (405, allow)
    assert client.post("/stateless", b"", method="GET").status == 405
    assert client.post("/stateless", b"", method="DELETE").status == 405


def test_2026_requests_stay_stateless_at_a_session_endpoint(client: TestClient) -> None:
    from mcpkit.testing import stateless_headers, stateless_request

    message = stateless_request("tools/call", {"name": "who", "arguments": {}})
    response = client.post("/mcp", message, headers=stateless_headers("tools/call", "who"))
    assert response.status == 200 and response.header("mcp-session-id") is None


def test_a_notification_on_a_session_revision_needs_the_session(client: TestClient) -> None:
    notification = handshake_request("notifications/initialized", id=None)
    headers = {"mcp-protocol-version": "2025-11-25", "x-owner": "alice"}
    assert client.post("/mcp", notification, headers=headers).status == 400
    session_id = initialize(client, owner="alice")
    accepted = client.post("/mcp", notification, headers={**headers, "mcp-session-id": session_id})
    assert accepted.status == 202


def test_cors_names_the_session_header_for_a_session_endpoint() -> None:
    server = Server(Sessions, cors=mcpkit.CorsPolicy.origins("https://app.example"))
    with TestClient(server) as client:
        preflight = client.post(
            "/mcp", b"", method="OPTIONS", headers={"origin": "https://app.example"}
        )
        assert preflight.header("access-control-allow-methods") == "GET, POST, DELETE"
        assert "mcp-session-id" in (preflight.header("access-control-allow-headers") or "")
        response = client.post(
            "/mcp", handshake_request("initialize", INIT), headers={"origin": "https://app.example"}
        )
        assert response.header("access-control-expose-headers") == (
            "WWW-Authenticate, Mcp-Session-Id"
        )


# --- what initialize may remember --------------------------------------------------------------


def test_client_metadata_is_remembered_up_to_its_limit() -> None:
    # {"clientInfo":{"name":"c"},"capabilities":{"roots":{}}} is 55 bytes
    for limit, status in ((55, 200), (54, 400)):
        limits = Limits(max_session_metadata_bytes=limit)
        with TestClient(Server(Sessions, limits=limits)) as client:
            response = client.post("/mcp", handshake_request("initialize", INIT))
            assert response.status == 200  # a 2025 error is an HTTP 200 exchange
            body = response.json
            assert isinstance(body, JsonObject)
            if status == 200:
                assert "result" in body and response.header("mcp-session-id")
            else:
                assert member(body, "error", "code") == -32602
                assert response.header("mcp-session-id") is None


def test_a_full_server_answers_initialize_with_the_quota_error_and_no_session() -> None:
    limits = Limits(max_sessions=1, max_sessions_per_owner=1, max_anonymous_sessions=1)
    with TestClient(Server(Sessions, limits=limits)) as client:
        initialize(client)
        refused = client.post("/mcp", handshake_request("initialize", INIT))
        assert error(refused)[:2] == (429, -31999)  # the anonymous owner's one session
        assert refused.header("mcp-session-id") is None


# --- cancellation and calls in flight ----------------------------------------------------------


def alices_call(client: TestClient, params: dict[str, Any], id: int) -> tuple[dict[str, str], Any]:
    """Alice's session with a call of ``params`` in flight, once its tool has started."""
    global gate
    gate = Gate()
    session_id = initialize(client, owner="alice")
    headers = {
        "mcp-session-id": session_id,
        "x-owner": "alice",
        "mcp-protocol-version": "2025-11-25",
    }
    pending = client.submit("/mcp", handshake_request("tools/call", params, id=id), headers=headers)
    assert gate.entered.wait(WAIT)
    return headers, pending


def test_notifications_cancelled_stops_the_sessions_call(client: TestClient) -> None:
    headers, pending = alices_call(client, {"name": "hold", "arguments": {}}, 7)
    for target in (8, "7", True, None):  # unknown, of another type, not an id: ignored
        ignored = handshake_request("notifications/cancelled", {"requestId": target}, id=None)
        assert client.post("/mcp", ignored, headers=headers).status == 202
    assert not gate.cancelled.is_set()
    cancel = handshake_request("notifications/cancelled", {"requestId": 7}, id=None)
    assert client.post("/mcp", cancel, headers=headers).status == 202
    assert gate.cancelled.wait(WAIT)  # the handler's token fired
    answered = pending.result(WAIT)
    # no answer for a cancelled request: an event stream with no events
    assert answered.status == 200
    assert answered.header("content-type") == "text/event-stream"
    assert answered.messages == ()


def test_a_cancelled_stream_ends_after_its_notifications_without_a_result(
    client: TestClient,
) -> None:
    params = {"name": "report_then_hold", "arguments": {}, "_meta": {"progressToken": "p"}}
    headers, pending = alices_call(client, params, 5)
    cancel = handshake_request("notifications/cancelled", {"requestId": 5}, id=None)
    assert client.post("/mcp", cancel, headers=headers).status == 202
    answered = pending.result(WAIT)
    assert answered.status == 200
    assert [member(message, "method") for message in answered.messages] == [
        "notifications/progress"
    ]


def test_a_call_that_completes_as_it_is_cancelled_is_not_answered() -> None:
    server = Server(Sessions)
    with TestClient(server) as client:
        session_id = initialize(client)
        store = server.engine.pipeline.sessions
        assert store is not None
        cancel_target.update(session=asyncio.run(store.get(session_id)), id=3)
        response = call(client, "self_cancel", session_id, id=3)
        assert (response.status, response.messages) == (200, ())


def holding(client: TestClient) -> tuple[str, dict[str, str], Future[TestResponse]]:
    """A new session with its ``hold`` call (id 1) in flight: the id, headers and the call."""
    global gate
    gate = Gate()
    session_id = initialize(client)
    headers = {"mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}
    message = handshake_request("tools/call", {"name": "hold", "arguments": {}}, id=1)
    pending = client.submit("/mcp", message, headers=headers)
    assert gate.entered.wait(WAIT)
    return session_id, headers, pending


def test_calls_in_flight_per_session_hold_at_the_limit_and_refuse_past_it() -> None:
    with TestClient(Server(Sessions, limits=Limits(max_active_calls_per_session=1))) as client:
        session_id, _, first = holding(client)
        assert error(call(client, "who", session_id, id=2)) == (
            429,
            -31999,
            "Session quota exceeded; end a session or wait for a call to finish",
        )
        gate.release.set()
        assert text(first.result(WAIT)) == "released"
        assert text(call(client, "who", session_id, id=3)) == "c ['roots']"  # room again


def test_an_id_already_in_flight_in_the_session_is_refused() -> None:
    with TestClient(Server(Sessions)) as client:
        session_id, _, first = holding(client)
        assert error(call(client, "who", session_id, id=1))[0] == 429
        gate.release.set()
        assert text(first.result(WAIT)) == "released"


def test_ending_a_session_stops_its_calls() -> None:
    with TestClient(Server(Sessions)) as client:
        _, headers, pending = holding(client)
        assert client.post("/mcp", b"", method="DELETE", headers=headers).status == 204
        assert gate.cancelled.wait(WAIT)
        assert pending.result(WAIT).messages == ()


# --- the store's quotas and lifetimes ----------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


run = asyncio.run


def store(clock: Clock, **limits: Any) -> MemorySessionStore:
    return MemorySessionStore(Limits(**limits), clock=clock)


def test_sessions_in_all_hold_at_the_limit_and_refuse_past_it() -> None:
    clock = Clock()
    sessions = store(clock, max_sessions=3, max_sessions_per_owner=3)
    opened = [run(sessions.create(f"owner-{n}", "/mcp", NOVEMBER, None, None)) for n in range(3)]
    assert len(sessions) == 3
    with pytest.raises(TooManySessions):
        run(sessions.create("owner-9", "/mcp", NOVEMBER, None, None))
    run(sessions.end(opened[0]))
    run(sessions.end(opened[0]))  # idempotent
    assert run(sessions.create("owner-9", "/mcp", NOVEMBER, None, None)).owner == "owner-9"


def test_a_full_server_first_ends_the_sessions_that_expired() -> None:
    clock = Clock()
    sessions = store(
        clock, max_sessions=2, max_sessions_per_owner=2, session_idle_timeout_seconds=60.0
    )
    old = run(sessions.create("a", "/mcp", NOVEMBER, None, None))
    run(sessions.create("b", "/mcp", NOVEMBER, None, None))
    clock.now += 30
    run(sessions.touch(old))
    clock.now += 31  # "b" idle 61 s, "a" 31 s
    fresh = run(sessions.create("c", "/mcp", NOVEMBER, None, None))
    assert (
        run(sessions.get(old.id)) is old
        and run(sessions.get(fresh.id)) is fresh
        and len(sessions) == 2
    )


def test_sessions_per_owner_hold_at_the_limit_and_refuse_past_it() -> None:
    clock = Clock()
    sessions = store(clock, max_sessions_per_owner=2)
    first = run(sessions.create("alice", "/mcp", NOVEMBER, None, None))
    run(sessions.create("alice", "/mcp", NOVEMBER, None, None))
    with pytest.raises(SessionQuota):
        run(sessions.create("alice", "/mcp", NOVEMBER, None, None))
    assert (
        run(sessions.create("bob", "/mcp", NOVEMBER, None, None)).owner == "bob"
    )  # other owners unaffected
    # the owner's quietest session may be reclaimed once it has been quiet long enough
    clock.now += RECLAIM_AFTER_SECONDS - 1
    with pytest.raises(SessionQuota):
        run(sessions.create("alice", "/mcp", NOVEMBER, None, None))
    clock.now += 1
    third = run(sessions.create("alice", "/mcp", NOVEMBER, None, None))
    assert (
        run(sessions.get(first.id)) is None and first.ended and run(sessions.get(third.id)) is third
    )


def test_a_session_with_a_call_in_flight_is_never_reclaimed_or_idled_out() -> None:
    clock = Clock()
    sessions = store(clock, max_sessions_per_owner=1, session_idle_timeout_seconds=60.0)
    busy = run(sessions.create("alice", "/mcp", NOVEMBER, None, None))
    stopped: list[int] = []
    busy.begin(1, lambda: stopped.append(1), 4)
    clock.now += 3600
    with pytest.raises(SessionQuota):
        run(sessions.create("alice", "/mcp", NOVEMBER, None, None))
    assert run(sessions.get(busy.id)) is busy
    busy.end_call(1)  # its last request was an hour ago: idle now
    assert run(sessions.get(busy.id)) is None and stopped == []


def test_an_owner_at_its_quota_first_loses_its_expired_sessions() -> None:
    clock = Clock()
    sessions = store(clock, max_sessions_per_owner=2, session_idle_timeout_seconds=60.0)
    stale = run(sessions.create("alice", "/mcp", NOVEMBER, None, None))
    clock.now += 50
    kept = run(sessions.create("alice", "/mcp", NOVEMBER, None, None))
    clock.now += 10  # "stale" idle 60 s: expired; "kept" 10 s
    run(sessions.create("alice", "/mcp", NOVEMBER, None, None))
    assert stale.ended and not kept.ended and len(sessions) == 2


def test_ending_a_session_of_another_store_only_stops_it() -> None:
    sessions = store(Clock())
    foreign = Session("x", "alice", "/mcp", NOVEMBER, 0.0)
    stopped: list[int] = []
    foreign.begin(1, lambda: stopped.append(1), 1)
    run(sessions.end(foreign))
    assert foreign.ended and stopped == [1] and len(sessions) == 0


def test_an_open_stream_keeps_its_session_from_idling_out() -> None:
    async def scenario() -> tuple[bool, bool]:
        clock = Clock()
        sessions = store(clock, session_idle_timeout_seconds=60.0)
        session = await sessions.create("alice", "/mcp", NOVEMBER, None, None)
        session.open_stream(asyncio.Event())
        clock.now += 3600
        alive = (await sessions.get(session.id)) is session
        session.close_stream()
        return alive, (await sessions.get(session.id)) is None

    assert asyncio.run(scenario()) == (True, True)


def test_the_anonymous_owner_has_its_own_budget() -> None:
    clock = Clock()
    sessions = store(clock, max_anonymous_sessions=1, max_sessions_per_owner=5)
    run(sessions.create(None, "/mcp", NOVEMBER, None, None))
    with pytest.raises(SessionQuota):
        run(sessions.create(None, "/mcp", NOVEMBER, None, None))
    closed = store(clock, max_anonymous_sessions=0)
    with pytest.raises(SessionQuota):
        run(closed.create(None, "/mcp", NOVEMBER, None, None))


def test_idle_and_absolute_lifetimes() -> None:
    clock = Clock()
    sessions = store(
        clock, session_idle_timeout_seconds=60.0, session_absolute_timeout_seconds=100.0
    )
    session = run(sessions.create("alice", "/mcp", NOVEMBER, None, None))
    clock.now += 59
    assert run(sessions.get(session.id)) is session
    run(sessions.touch(session))
    clock.now += 40  # 99 s old, idle 40 s
    assert run(sessions.get(session.id)) is session
    clock.now += 1  # 100 s old
    assert run(sessions.get(session.id)) is None and session.ended
    idle = run(sessions.create("alice", "/mcp", NOVEMBER, None, None))
    clock.now += 60
    assert run(sessions.get(idle.id)) is None


def test_a_session_stops_its_calls_when_it_ends_and_never_shows_its_id() -> None:
    clock = Clock()
    sessions = store(clock)
    session = run(sessions.create("alice", "/mcp", NOVEMBER, None, None))
    stopped: list[str] = []
    session.begin("a", lambda: stopped.append("a"), 2)
    session.begin(2, lambda: stopped.append("2"), 2)
    with pytest.raises(SessionQuota):
        session.begin(3, lambda: None, 2)
    assert session.calls == 2 and session.id not in repr(session)
    session.negotiated(JUNE)  # fixed at creation
    assert session.revision is NOVEMBER
    run(sessions.end(session))
    assert sorted(stopped) == ["2", "a"] and session.calls == 0
    assert repr(Session("x", None, "/p", NOVEMBER, 0.0)) == "<Session /p 2025-11-25 calls=0>"


def test_a_custom_store_is_used(client: TestClient) -> None:
    class Counting(MemorySessionStore):
        created = 0

        async def create(
            self,
            owner: str | None,
            path: str,
            revision: Revision,
            client_info: JsonObject | None,
            client_capabilities: JsonObject | None,
        ) -> Session:
            Counting.created += 1
            return await super().create(owner, path, revision, client_info, client_capabilities)

    server = Server(Sessions, sessions=Counting(Limits()))
    with TestClient(server) as other:
        initialize(other)
    assert Counting.created == 1


# --- resource subscriptions and the GET stream ---------------------------------------------------


def rpc(
    client: TestClient, session_id: str, method: str, params: dict[str, Any], id: int = 1
) -> TestResponse:
    headers = {"mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}
    return client.post("/mcp", handshake_request(method, params, id=id), headers=headers)


def open_stream(client: TestClient, session_id: str, **extra: str) -> Future[TestResponse]:
    headers = {"mcp-session-id": session_id, "accept": "text/event-stream", **extra}
    return client.submit("/mcp", b"", method="GET", headers=headers)


def end(client: TestClient, session_id: str) -> None:
    ended = client.post("/mcp", b"", method="DELETE", headers={"mcp-session-id": session_id})
    assert ended.status == 204


def test_subscribe_is_advertised_and_served_only_inside_sessions() -> None:
    server = Server([Sessions, Stateless])
    with TestClient(server) as client:
        opened = client.post("/mcp", handshake_request("initialize", INIT))
        resources = member(opened.json, "result", "capabilities", "resources")
        assert resources == {"subscribe": True, "listChanged": True}
        session_id = opened.header("mcp-session-id")
        assert session_id is not None
        assert rpc(client, session_id, "resources/subscribe", {"uri": "test://doc"}).json == {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {},
        }
        for uri in ("test://item/7", "test://doc"):  # a template's URI; again: nothing new
            assert "result" in member(
                rpc(client, session_id, "resources/subscribe", {"uri": uri}).json
            )
        missing = rpc(client, session_id, "resources/subscribe", {"uri": "test://nothing"})
        assert member(missing.json, "error", "code") == -32002
        bad = rpc(client, session_id, "resources/subscribe", {"uri": 7})
        assert member(bad.json, "error", "code") == -32602
        for uri in ("test://doc", "test://never-subscribed"):
            assert "result" in member(
                rpc(client, session_id, "resources/unsubscribe", {"uri": uri}).json
            )
        store = server.engine.deployment.audience
        assert store.subscriptions == 1  # test://item/7 is left
        # a stateless endpoint has no subscriptions: -32601, and no promise of them
        stateless = client.post("/stateless", handshake_request("initialize", INIT))
        assert member(stateless.json, "result", "capabilities") == {
            "tools": {},
            "logging": {},
        }
        refused = client.post(
            "/stateless",
            handshake_request("resources/subscribe", {"uri": "test://doc"}),
            headers={"mcp-protocol-version": "2025-11-25"},
        )
        assert member(refused.json, "error", "code") == -32601
        end(client, session_id)
        assert store.subscriptions == 0  # an ended session's subscriptions go with it


def test_an_update_reaches_the_subscribed_sessions_stream() -> None:
    server = Server(Sessions)
    with TestClient(server) as client:
        watcher, other = initialize(client), initialize(client)
        rpc(client, watcher, "resources/subscribe", {"uri": "test://doc"})
        # queued before the stream opens, and one per URI however often it changes
        server.notify_resource_updated("test://doc")
        server.notify_resource_updated("test://doc")
        server.notify_resource_updated("test://unwatched")
        assert len(live(server, watcher).take()) == 1 and not live(server, other).pending
        server.notify_resource_updated("test://doc")
        stream = open_stream(client, watcher)
        second = open_stream(client, watcher).result(WAIT)
        assert second.status == 409  # one stream per session
        done = threading.Event()

        def publish_from_a_thread() -> None:
            server.notify_resource_updated("test://doc")
            done.set()

        threading.Thread(target=publish_from_a_thread).start()
        assert done.wait(WAIT)
        quiet = open_stream(client, other)
        end(client, watcher)  # the stream ends with its session
        received = stream.result(WAIT)
        assert received.status == 200
        assert received.header("content-type") == "text/event-stream"
        updates = [member(message, "params", "uri") for message in received.messages]
        assert updates[0] == "test://doc" and set(updates) == {"test://doc"}
        end(client, other)
        assert quiet.result(WAIT).messages == ()


def test_a_quiet_stream_sends_keep_alive_comments() -> None:
    server = Server(Sessions, limits=Limits(stream_keepalive_seconds=0.05))
    with TestClient(server) as client:
        session_id = initialize(client)
        stream = open_stream(client, session_id)
        threading.Event().wait(0.3)
        end(client, session_id)
        body = stream.result(WAIT).body
        assert body.count(b": keep-alive\n\n") >= 2 and stream.result().messages == ()


def test_stream_refusals() -> None:
    with TestClient(Server(Sessions, admission=owner_by_header)) as client:
        session_id = initialize(client, owner="alice")
        json_only = {"mcp-session-id": session_id, "x-owner": "alice", "accept": "application/json"}
        plain = client.post("/mcp", b"", method="GET", headers=json_only)
        assert plain.status == 406  # it must accept an event stream
        assert open_stream(client, "unknown", **{"x-owner": "alice"}).result(WAIT).status == 404
        assert open_stream(client, session_id, **{"x-owner": "eve"}).result(WAIT).status == 404
        denied = open_stream(client, session_id, **{"x-owner": "nobody"}).result(WAIT)
        assert denied.status == 401


def test_a_draining_server_ends_its_streams() -> None:
    server = Server(Sessions)
    with TestClient(server) as client:
        session_id = initialize(client)
        stream = open_stream(client, session_id)
        threading.Event().wait(0.1)
        # the drain runs on the loop that serves the app, as the embedded server's does
        loop = client._running_loop()
        assert asyncio.run_coroutine_threadsafe(server.engine.drain(0.1), loop).result(WAIT) == 0
        assert stream.result(WAIT).status == 200


def live(server: Server, session_id: str) -> Session:
    """The server's session of that id."""
    store = server.engine.pipeline.sessions
    assert store is not None
    session = asyncio.run(store.get(session_id))
    assert session is not None
    return session


def test_subscription_quotas_hold_at_the_limit_and_refuse_past_it() -> None:
    def refused(limits: Limits, uris: list[str], sessions: int = 1) -> list[bool]:
        broadcaster = Audience(limits)
        results = []
        for n in range(sessions):
            session = Session(f"s{n}", None, "/mcp", NOVEMBER, 0.0)
            for uri in uris:
                try:
                    broadcaster.subscribe(session, uri)
                    results.append(True)
                except SessionQuota:
                    results.append(False)
        return results

    three = ["test://a", "test://b", "test://c"]
    per_session = Limits(max_session_subscriptions=2, max_subscriptions=10)
    assert refused(per_session, three) == [True, True, False]
    in_all = Limits(max_session_subscriptions=2, max_subscriptions=3)
    assert refused(in_all, three[:2], sessions=2) == [True, True, True, False]
    # "test://a" is 8 bytes: two fit in 16, a third does not
    by_bytes = Limits(max_session_subscription_bytes=16)
    assert refused(by_bytes, three) == [True, True, False]


def test_a_broadcaster_of_its_own_carries_the_changes() -> None:
    broadcaster = MemoryBroadcaster()
    seen: list[Change] = []
    broadcaster.attach(seen.append)
    broadcaster.attach(seen.append)  # again: nothing changes
    server = Server(Sessions, broadcaster=broadcaster)
    assert server.engine.broadcaster is broadcaster
    with TestClient(server) as client:
        session_id = initialize(client)
        rpc(client, session_id, "resources/subscribe", {"uri": "test://doc"})
        server.notify_resource_updated("test://doc")
        assert seen == [Change(ChangeKind.RESOURCE, uri="test://doc")]
        assert len(live(server, session_id).take()) == 1
        broadcaster.detach(seen.append)
        broadcaster.detach(seen.append)  # not attached: nothing happens
        server.notify_resource_updated("test://doc")
        assert len(seen) == 1 and len(live(server, session_id).take()) == 1
    # a server without sessions takes one too: listen streams and other nodes use it
    assert Server(Stateless, broadcaster=broadcaster).engine.broadcaster is broadcaster
    assert repr(broadcaster).startswith("<MemoryBroadcaster")


def test_notify_resource_updated_takes_a_uri_string() -> None:
    server = Server(Stateless)
    server.notify_resource_updated("test://doc")  # no sessions: nobody to tell
    with pytest.raises(TypeError, match="uri must be a str"):
        server.notify_resource_updated(b"test://doc")  # type: ignore[arg-type]


def test_a_session_posts_to_its_stream_only_while_one_is_open() -> None:
    async def scenario() -> tuple[bool, bool, list[bytes], bool]:
        session = Session("s", None, "/mcp", NOVEMBER, 0.0)
        session.post("k", b"one")
        session.post("k", b"two")  # the same key: replaced, not added
        wake = asyncio.Event()
        opened = session.open_stream(wake)
        again = session.open_stream(asyncio.Event())
        session.post("other", b"three")
        await asyncio.wait_for(wake.wait(), WAIT)  # set from the loop's next turn
        taken = session.take()
        session.close_stream()
        return opened, again, taken, session.streaming or session.pending

    assert asyncio.run(scenario()) == (True, False, [b"two", b"three"], False)


class Exchange:
    """An ``HttpExchange`` that keeps what is written; ``on_write`` runs at each write."""

    def __init__(self, on_write: Any = None) -> None:
        self.status = 0
        self.headers: dict[bytes, bytes] = {}
        self.chunks: list[bytes] = []
        self.on_write = on_write

    async def start(self, status: int, headers: Any) -> None:
        self.status, self.headers = status, dict(headers)

    async def write(self, chunk: bytes, *, more: bool) -> None:
        self.chunks.append(chunk)
        if self.on_write is not None:
            self.on_write(chunk)


def http(method: str, body: bytes = b"", **headers: str) -> mcpkit.server.HttpRequest:
    fields = {"host": "127.0.0.1", "content-type": "application/json", **headers}
    fields.setdefault("accept", "application/json, text/event-stream")
    return mcpkit.server.HttpRequest(
        method=method, raw_path="/mcp", headers=tuple(fields.items()), body=body
    )


def test_a_stream_under_a_plain_disconnect_event_and_posts_during_a_write() -> None:
    """A transport may hand a plain ``asyncio.Event``: the stream notices it at the next
    keep-alive.  A notification posted while another is being written goes out next."""
    import json

    server = Server(Sessions, limits=Limits(stream_keepalive_seconds=0.02))
    engine = server.engine

    async def scenario() -> Exchange:
        opened = Exchange()
        body = json.dumps(handshake_request("initialize", INIT)).encode()
        await engine.handle_http(http("POST", body), opened, asyncio.Event())
        session_id = opened.headers[b"mcp-session-id"].decode()
        session = await engine.pipeline.find(
            mcpkit.protocol.HeaderFields((("mcp-session-id", session_id),))
        )
        assert isinstance(session, Session)
        posted: list[bytes] = []

        def post_once(chunk: bytes) -> None:
            if b"event: message" in chunk and not posted:
                posted.append(chunk)
                session.post("second", b'{"n":2}')

        stream = Exchange(post_once)
        gone = asyncio.Event()
        session.post("first", b'{"n":1}')
        headers = {"mcp-session-id": session_id, "accept": "text/event-stream"}
        request = http("GET", b"", **headers)
        task = asyncio.ensure_future(engine.handle_http(request, stream, gone))
        await asyncio.sleep(0.1)
        gone.set()
        await asyncio.wait_for(task, WAIT)
        return stream

    stream = asyncio.run(scenario())
    events = [chunk for chunk in stream.chunks if b"event: message" in chunk]
    assert stream.status == 200 and len(events) == 2 and stream.chunks[-1] == b""
    # a 2025-11-25 session's first standalone stream starts with its priming event
    assert stream.chunks[0] == b"id: 0-0\nretry: 1000\ndata: \n\n"
    assert [event.split(b"\n")[0] for event in events] == [b"id: 0-1", b"id: 0-2"]


def test_an_update_reaches_each_session_still_subscribed() -> None:
    audience = Audience(Limits())
    first, second = (Session(name, None, "/mcp", NOVEMBER, 0.0) for name in "ab")
    for session in (first, second):
        audience.subscribe(session, "test://doc")
    audience.receive(Change(ChangeKind.RESOURCE, uri="test://doc"))
    assert len(first.take()) == 1
    audience.unsubscribe(first, "test://doc")
    # the same resource however its URI is spelled: scheme, host and percent-encoding case
    audience.receive(Change(ChangeKind.RESOURCE, uri="TEST://doc"))
    assert audience.subscriptions == 1 and not first.pending and len(second.take()) == 1
    audience.receive(Change(ChangeKind.RESOURCE))  # no URI: nobody to tell
    assert not second.pending


# --- resources/list_changed ----------------------------------------------------------------


@mcpkit.endpoint(
    path="/listed",
    name="listed",
    version="1.0.0",
    revisions={JUNE, NOVEMBER, MODERN},
    session_revisions={NOVEMBER},
)
class Listed:
    @mcpkit.resource_list()
    def pages(self, ctx: RequestContext, cursor: str | None) -> mcpkit.ResourceListPage:
        return mcpkit.ResourceListPage(resources=())


def test_a_resource_list_handler_may_change_its_list_and_sessions_are_told() -> None:
    """With a resource list handler the resources an endpoint lists can change: on its session
    revisions ``resources`` advertises ``listChanged``, and ``notify_resource_list_changed``
    queues ``notifications/resources/list_changed`` on every session of the endpoint (once,
    however often it changes before the stream writes it)."""
    server = Server([Listed, Sessions])
    endpoint = server.registry.endpoint_for_path("/listed")
    assert endpoint is not None
    assert endpoint.capabilities(NOVEMBER)["resources"] == {"subscribe": True, "listChanged": True}
    assert endpoint.capabilities(JUNE)["resources"] == {}  # no session there: nothing to tell
    assert endpoint.capabilities(MODERN)["resources"] == {}  # no listen there
    with TestClient(server) as client:
        listed = initialize(client, "/listed")
        other = initialize(client)
        server.notify_resource_list_changed("/mcp")
        assert not live(server, listed).pending and live(server, other).pending
        live(server, other).take()
        server.notify_resource_list_changed()
        server.notify_resource_list_changed("/listed")
        assert live(server, other).pending
        headers = {"mcp-session-id": listed, "accept": "text/event-stream"}
        stream = client.submit("/listed", b"", method="GET", headers=headers)
        threading.Event().wait(0.2)
        client.post("/listed", b"", method="DELETE", headers={"mcp-session-id": listed})
        received = stream.result(WAIT)
        assert received.messages == (
            {"jsonrpc": "2.0", "method": "notifications/resources/list_changed", "params": {}},
        )
        end(client, other)
        server.notify_resource_list_changed()  # ended sessions are not told
        assert server.engine.deployment.audience.listens == 0


def test_notify_resource_list_changed_names_a_served_path() -> None:
    server = Server([Listed, Sessions])
    with pytest.raises(mcpkit.ConfigurationError) as caught:
        server.notify_resource_list_changed("/nowhere")
    assert str(caught.value) == ("notify_resource_list_changed: no endpoint is served at that path")
    with pytest.raises(TypeError):
        server.notify_resource_list_changed(7)  # type: ignore[arg-type]


def test_without_sessions_nothing_is_told_and_forgetting_a_stranger_does_nothing() -> None:
    Server(Stateless).notify_resource_list_changed()
    audience = Audience(Limits())
    stranger = Session("x", None, "/mcp", NOVEMBER, 0.0)
    audience.forget(stranger)  # never joined, never subscribed
    audience.receive(Change(ChangeKind.RESOURCES, "/mcp"))
    assert not stranger.pending and "0 subscriptions" in repr(audience)
