"""``subscriptions/listen`` over HTTP (2026-07-28): the acknowledgement first, every message
tagged with the listen's id, only the honoured filter, the graceful ``complete`` end, the
subscription authorizer and its lease, and the bounds of ``Limits`` at their limit and one
past it; and the catalog swap that tells listeners (and 2025 sessions) what changed."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import Any

import pytest

import mcpkit
from mcpkit import (
    CompleteResult,
    ConfigurationError,
    Lease,
    Limits,
    PromptOutput,
    Revision,
    Server,
    SubscriptionRequest,
)
from mcpkit.errors import InternalError
from mcpkit.json import JsonObject
from mcpkit.server._broadcast import ChangeKind
from mcpkit.server._listen import ListenFilter, normalize_uri, read_listen
from mcpkit.server._operations import METHODS
from mcpkit.testing import (
    TestClient,
    TestResponse,
    handshake_request,
    stateless_headers,
    stateless_request,
)

JUNE, NOVEMBER, MODERN = Revision.V2025_06_18, Revision.V2025_11_25, Revision.V2026_07_28
WAIT = 10.0
TAG = "io.modelcontextprotocol/subscriptionId"
ALL = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True}


@mcpkit.endpoint(
    path="/mcp",
    name="listening",
    version="1.0.0",
    revisions={NOVEMBER, MODERN},
    session_revisions={NOVEMBER},
    listen=True,
)
class Listening:
    @mcpkit.tool(name="echo")
    def echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)

    @mcpkit.resource(uri="test://doc", name="doc")
    def doc(self) -> mcpkit.ResourceOutput:
        contents = mcpkit.TextResourceContents(uri="test://doc", text="doc")
        return mcpkit.ResourceOutput(contents=(contents,))


@mcpkit.endpoint(path="/tools", name="tools", version="1.0.0", revisions={MODERN}, listen=True)
class ToolsOnly:
    @mcpkit.tool(name="echo")
    def echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)


@mcpkit.endpoint(path="/quiet", name="quiet", version="1.0.0", revisions={MODERN})
class Quiet:
    @mcpkit.tool(name="echo")
    def echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)


@mcpkit.endpoint(path="/mcp", name="listening", version="2.0.0", revisions={NOVEMBER, MODERN})
class _More:
    @mcpkit.tool(name="shout")
    def shout(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text.upper())

    @mcpkit.prompt(name="greeting")
    def greeting(self) -> PromptOutput:
        text = mcpkit.TextContent(text="hello")
        return PromptOutput(messages=(mcpkit.PromptMessage(role=mcpkit.Role.USER, content=text),))


SHOUT = mcpkit.EndpointRegistry.from_classes(_More).endpoints[0].tools[0]
GREETING = mcpkit.EndpointRegistry.from_classes(_More).endpoints[0].prompts[0]


def grant(request: SubscriptionRequest) -> Lease:
    return Lease(60.0)


def served(**options: Any) -> Server:
    options.setdefault("subscription_authorizer", grant)
    return Server([Listening, ToolsOnly, Quiet], **options)


def endpoint_at(server: Server, path: str = "/mcp") -> mcpkit.Endpoint:
    found = server.registry.endpoint_for_path(path)
    assert found is not None
    return found


def listen_body(notifications: object, id: str | int = "L") -> dict[str, object]:
    return stateless_request("subscriptions/listen", {"notifications": notifications}, id=id)


def listen(
    client: TestClient, notifications: object = None, *, id: str | int = "L", path: str = "/mcp"
) -> Future[TestResponse]:
    body = listen_body(ALL if notifications is None else notifications, id)
    return client.submit(path, body, headers=stateless_headers("subscriptions/listen"))


def post(client: TestClient, method: str, params: dict[str, object], path: str = "/mcp") -> Any:
    name = params.get("name")
    headers = stateless_headers(method, name if isinstance(name, str) else None)
    return client.post(path, stateless_request(method, params), headers=headers)


def payload(response: TestResponse) -> Any:
    """The response's JSON body, to index without casts."""
    return response.json


def frames(response: TestResponse) -> list[Any]:
    """The messages of an event-stream response, to index without casts."""
    return list(response.messages)


def until(condition: Callable[[], bool], seconds: float = WAIT) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def listening(server: Server, count: int = 1) -> None:
    until(lambda: server.engine.deployment.audience.listens == count)


def drain(client: TestClient, server: Server) -> None:
    loop = client._running_loop()
    asyncio.run_coroutine_threadsafe(server.engine.drain(0.5), loop).result(WAIT)


def tag(message: Any) -> object:
    meta = message["params"]["_meta"] if "params" in message else message["result"]["_meta"]
    return meta[TAG]


@pytest.fixture
def client() -> Iterator[tuple[Server, TestClient]]:
    server = served()
    with TestClient(server) as test_client:
        yield server, test_client


# --- the stream --------------------------------------------------------------------------


def test_the_acknowledgement_comes_first_and_every_message_is_tagged(
    client: tuple[Server, TestClient],
) -> None:
    server, test_client = client
    uris = ["TEST://doc", "test://doc", "test://%7Eother"]
    stream = listen(test_client, {**ALL, "resourceSubscriptions": uris}, id=7)
    listening(server)
    server.notify_resource_updated("test://doc")
    server.notify_resource_updated("test://unfollowed")
    server.notify_resource_list_changed()
    server.swap(endpoint_at(server).with_tools(SHOUT))
    until(lambda: _queued(server) == 0)
    drain(test_client, server)
    received = stream.result(WAIT)
    assert received.status == 200 and received.header("content-type") == "text/event-stream"
    first, *middle, last = frames(received)
    assert first == {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {
            # prompts: the endpoint has none; URIs normalised and de-duplicated
            "notifications": {
                "toolsListChanged": True,
                "resourcesListChanged": True,
                "resourceSubscriptions": ["test://doc", "test://~other"],
            },
            "_meta": {TAG: 7},
        },
    }
    methods = sorted(message["method"] for message in middle)
    assert methods == [
        "notifications/resources/list_changed",
        "notifications/resources/updated",
        "notifications/tools/list_changed",
    ]
    assert all(tag(message) == 7 for message in frames(received))
    assert last == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {"resultType": "complete", "_meta": {TAG: 7}},
    }
    assert server.engine.deployment.audience.listens == 0


def _queued(server: Server) -> int:
    audience = server.engine.deployment.audience
    return sum(listener.queued for group in audience._listeners.values() for listener in group)


def test_only_what_was_asked_for_is_sent(client: tuple[Server, TestClient]) -> None:
    server, test_client = client
    tools = listen(test_client, {"toolsListChanged": True}, id="tools")
    nothing = listen(test_client, {}, id="nothing")
    listening(server, 2)
    server.notify_resource_list_changed("/mcp")
    server.notify_resource_updated("test://doc")
    server.swap(endpoint_at(server).with_tools(SHOUT))
    until(lambda: _queued(server) == 0)
    drain(test_client, server)
    asked = [message["method"] for message in frames(tools.result(WAIT))[1:-1]]
    assert asked == ["notifications/tools/list_changed"]
    quiet = frames(nothing.result(WAIT))
    assert quiet[0]["params"]["notifications"] == {}
    assert len(quiet) == 2  # the acknowledgement and the complete result


def test_a_change_posted_twice_before_it_is_written_is_sent_once() -> None:
    async def scenario() -> list[bytes | None]:
        from mcpkit.server._listen import Listener

        async def renew() -> float | None:
            return 60.0

        listener = Listener(
            request_id=1, path="/mcp", revision=MODERN, owner=None,
            honoured=ListenFilter(frozenset({ChangeKind.TOOLS}), ("test://a",)),
            limits=Limits(), renew=renew,
        )  # fmt: skip
        listener.lease = 60.0
        for _ in range(3):
            listener.post(ChangeKind.TOOLS)
            listener.post(ChangeKind.RESOURCE, "test://a")
        assert listener.queued == 2
        written: list[bytes | None] = []

        async def write(frame: bytes | None, last: bool) -> None:
            written.append(frame)
            if len(written) == 3:
                listener.end()

        await asyncio.wait_for(listener.run(asyncio.Event(), write), WAIT)
        listener.end()  # again once ended: nothing changes
        return written

    written = asyncio.run(scenario())
    assert len(written) == 4  # ack, the two coalesced changes, complete
    assert b"tools/list_changed" in (written[1] or b"")
    assert b'"uri":"test://a"' in (written[2] or b"")
    assert b'"resultType":"complete"' in (written[3] or b"")


def test_a_quiet_listen_sends_keep_alive_comments() -> None:
    server = served(limits=Limits(stream_keepalive_seconds=0.05))
    with TestClient(server) as client:
        stream = listen(client)
        listening(server)
        time.sleep(0.3)
        drain(client, server)
        body = stream.result(WAIT).body
    assert body.count(b": keep-alive\n\n") >= 2


def test_a_client_that_leaves_frees_its_place() -> None:
    server = served()
    with TestClient(server) as client:
        gone = threading.Event()
        threading.Timer(0.2, gone.set).start()
        body = listen_body({"toolsListChanged": True})
        partial = client.post_disconnecting(
            "/mcp", body, after=gone, headers=stateless_headers("subscriptions/listen")
        )
        assert partial is not None and partial.status == 200
        listening(server, 0)
        server.swap(endpoint_at(server).with_tools(SHOUT))  # nobody left to tell


def test_the_stream_ends_with_its_lifetime() -> None:
    server = served(limits=Limits(listen_lifetime_seconds=1.0))
    with TestClient(server) as client:
        started = time.monotonic()
        received = listen(client).result(WAIT)
        assert 1.0 <= time.monotonic() - started < WAIT
    assert frames(received)[-1]["result"]["resultType"] == "complete"


# --- refusals ----------------------------------------------------------------------------


def error_of(response: TestResponse) -> tuple[int, object]:
    return response.status, payload(response)["error"]["code"]


@pytest.mark.parametrize(
    "notifications",
    [
        None,  # required
        [],
        {"toolsListChanged": 1},
        {"promptsListChanged": "yes"},
        {"resourceSubscriptions": "test://doc"},
        {"resourceSubscriptions": [7]},
        {"resourceSubscriptions": ["no-scheme"]},
        {"resourceSubscriptions": ["test://has space"]},
    ],
)
def test_a_malformed_filter_is_invalid_params(
    client: tuple[Server, TestClient], notifications: object
) -> None:
    server, test_client = client
    params = {} if notifications is None else {"notifications": notifications}
    body = stateless_request("subscriptions/listen", params)
    response = test_client.post("/mcp", body, headers=stateless_headers("subscriptions/listen"))
    assert error_of(response) == (400, -32602)
    assert server.engine.deployment.audience.listens == 0


def test_resource_subscriptions_hold_at_the_limit_and_are_refused_past_it() -> None:
    server = served(limits=Limits(max_listen_uris=3))
    with TestClient(server) as client:
        # duplicates count once: four spellings of three resources
        three = ["test://a", "test://b", "TEST://b", "test://c"]
        open_ = listen(client, {"resourceSubscriptions": three})
        listening(server)
        four = [*three, "test://d"]
        refused = client.post(
            "/mcp",
            listen_body({"resourceSubscriptions": four}),
            headers=stateless_headers("subscriptions/listen"),
        )
        assert error_of(refused) == (400, -32602)
        drain(client, server)
        ack = frames(open_.result(WAIT))[0]
    assert ack["params"]["notifications"]["resourceSubscriptions"] == three[:2] + three[3:]


def test_listen_is_method_not_found_where_it_is_not_served(
    client: tuple[Server, TestClient],
) -> None:
    _, test_client = client
    body = listen_body({"toolsListChanged": True})
    headers = stateless_headers("subscriptions/listen")
    assert error_of(test_client.post("/quiet", body, headers=headers)) == (404, -32601)
    legacy = handshake_request("subscriptions/listen", {"notifications": {}})
    response = test_client.post("/mcp", legacy, headers={"mcp-protocol-version": "2025-11-25"})
    assert response.status in (400, 404)  # a session revision: it needs a session first


def test_a_tools_only_endpoint_honours_tools_only(client: tuple[Server, TestClient]) -> None:
    server, test_client = client
    stream = listen(test_client, {**ALL, "resourceSubscriptions": ["test://doc"]}, path="/tools")
    listening(server)
    drain(test_client, server)
    ack = frames(stream.result(WAIT))[0]
    assert ack["params"]["notifications"] == {"toolsListChanged": True}


def test_listens_per_caller_hold_at_the_limit_and_are_refused_past_it() -> None:
    server = served(limits=Limits(max_listens_per_owner=2))
    with TestClient(server) as client:
        first, second = listen(client, id=1), listen(client, id=2)
        listening(server, 2)
        refused = client.post(
            "/mcp", listen_body(ALL, 3), headers=stateless_headers("subscriptions/listen")
        )
        assert error_of(refused) == (429, -31999)
        assert payload(refused)["error"]["message"] == (
            "Too many listen streams open; end one before listening again"
        )
        # another endpoint is another budget
        elsewhere = listen(client, {"toolsListChanged": True}, path="/tools")
        listening(server, 3)
        drain(client, server)
        assert all(f.result(WAIT).status == 200 for f in (first, second, elsewhere))


def test_listens_in_all_hold_at_the_limit_and_are_refused_past_it() -> None:
    server = served(limits=Limits(max_listens_per_owner=1, max_listens=2))
    with TestClient(server) as client:
        first = listen(client)
        second = listen(client, {"toolsListChanged": True}, path="/tools")
        listening(server, 2)
        refused = client.post(
            "/mcp", listen_body(ALL, 3), headers=stateless_headers("subscriptions/listen")
        )
        assert error_of(refused) == (429, -31999)
        drain(client, server)
        assert first.result(WAIT).status == second.result(WAIT).status == 200
    assert server.engine.deployment.audience.listens == 0


# --- the authorizer ------------------------------------------------------------------------


def refused_by(authorizer: Any, **limits: Any) -> TestResponse:
    server = served(subscription_authorizer=authorizer, limits=Limits(**limits))
    with TestClient(server) as client:
        response = client.post(
            "/mcp", listen_body(ALL), headers=stateless_headers("subscriptions/listen")
        )
    assert server.engine.deployment.audience.listens == 0
    return response


def test_a_denied_listen_is_refused_without_detail(caplog: pytest.LogCaptureFixture) -> None:
    response = refused_by(lambda request: None)
    assert error_of(response) == (403, -31997)
    assert payload(response)["error"] == {"code": -31997, "message": "Subscription not authorized"}

    def failing(request: SubscriptionRequest) -> Lease:
        raise RuntimeError("secret policy detail")

    assert error_of(refused_by(failing)) == (403, -31997)
    assert error_of(refused_by(lambda request: 60)) == (403, -31997)  # not a Lease
    assert "secret policy detail" not in caplog.text
    assert "subscription authorizer failed with RuntimeError" in caplog.text
    assert "subscription authorizer returned int" in caplog.text


def test_an_authorizer_over_its_time_is_a_denial() -> None:
    async def slow(request: SubscriptionRequest) -> Lease:
        await asyncio.sleep(WAIT)
        return Lease(60.0)

    started = time.monotonic()
    response = refused_by(slow, subscription_check_timeout_seconds=0.05)
    assert error_of(response) == (403, -31997) and time.monotonic() - started < WAIT / 2


def test_the_authorizer_sees_who_listens_to_what() -> None:
    seen: list[SubscriptionRequest] = []

    async def recording(request: SubscriptionRequest) -> Lease:
        seen.append(request)
        return Lease(60.0)

    server = served(subscription_authorizer=recording)
    with TestClient(server) as client:
        stream = listen(client, {"toolsListChanged": True, "resourceSubscriptions": ["test://x"]})
        listening(server)
        drain(client, server)
        assert stream.result(WAIT).status == 200
    (request,) = seen
    assert request.endpoint is endpoint_at(server) and not request.renewal
    assert request.notifications == ListenFilter(frozenset({ChangeKind.TOOLS}), ("test://x",))
    assert request.http_request is not None and request.authorization is None


def test_the_lease_is_checked_again_and_a_revoked_stream_ends_with_complete() -> None:
    calls: list[bool] = []
    allowed = threading.Event()
    allowed.set()

    def revocable(request: SubscriptionRequest) -> Lease | None:
        calls.append(request.renewal)
        return Lease(0.2) if allowed.is_set() else None

    # keep-alives every 20 ms never extend the grant: it is checked again all the same
    limits = Limits(stream_keepalive_seconds=0.02)
    server = served(subscription_authorizer=revocable, limits=limits)
    with TestClient(server) as client:
        stream = listen(client)
        until(lambda: len(calls) >= 3)
        allowed.clear()
        server.notify_resource_list_changed()  # queued for a grant about to end: dropped or sent
        received = stream.result(WAIT)
    assert calls[0] is False and all(calls[1:])
    assert frames(received)[-1]["result"] == {"resultType": "complete", "_meta": {TAG: "L"}}
    assert received.body.count(b": keep-alive") >= 3
    assert server.engine.deployment.audience.listens == 0


def test_a_lease_is_a_positive_finite_number_of_seconds() -> None:
    for bad in (0, -1.0, float("inf"), float("nan"), True, "60"):
        with pytest.raises(ValueError, match="positive, finite"):
            Lease(bad)  # type: ignore[arg-type]
    assert Lease(1).seconds == 1


# --- configuration -------------------------------------------------------------------------


def test_a_listen_endpoint_needs_an_authorizer_and_an_authorizer_a_listen_endpoint() -> None:
    with pytest.raises(ConfigurationError, match="give the server a subscription_authorizer"):
        Server(Listening)
    with pytest.raises(ConfigurationError, match="no endpoint serves subscriptions/listen"):
        Server(Quiet, subscription_authorizer=grant)
    with pytest.raises(ConfigurationError, match="must be callable"):
        Server(Listening, subscription_authorizer=42)  # type: ignore[arg-type]


def test_listen_is_a_2026_option() -> None:
    with pytest.raises(ConfigurationError, match="only 2026-07-28 has"):
        mcpkit.Endpoint("/old", mcpkit.Implementation("x", "1"), {NOVEMBER}, listen=True)
    with pytest.raises(ConfigurationError, match="listen must be a bool"):
        mcpkit.Endpoint("/new", mcpkit.Implementation("x", "1"), {MODERN}, listen=1)  # type: ignore[arg-type]


def test_capabilities_promise_changes_only_where_they_are_delivered() -> None:
    server = served()
    listening_endpoint = endpoint_at(server)
    assert listening_endpoint.capabilities(MODERN) == {
        "tools": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
    }
    assert endpoint_at(server, "/quiet").capabilities(MODERN) == {"tools": {}}


def test_the_streamed_method_is_never_dispatched() -> None:
    (row,) = [method for method in METHODS if method.name == "subscriptions/listen"]
    with pytest.raises(InternalError):
        asyncio.run(row.answer(None, None))  # type: ignore[arg-type]


# --- the filter's URIs ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "normal"),
    [
        ("HTTPS://Example.COM/A%2fb?q=%7e#F", "https://example.com/A%2Fb?q=~#F"),
        ("test://User@HOST:80/x", "test://User@host:80/x"),
        ("urn:ISBN:%41", "urn:ISBN:A"),
        ("file:///a/../b", "file:///a/../b"),  # paths are not rewritten
        ("test://host", "test://host"),
    ],
)
def test_uris_are_matched_in_normal_form(given: str, normal: str) -> None:
    assert normalize_uri(given) == normal


def test_read_listen_keeps_the_first_spelling_order() -> None:
    params = JsonObject(
        {"notifications": JsonObject({"resourceSubscriptions": ["b:x", "a:y", "B:x"]})}
    )
    assert read_listen(params) == ListenFilter(frozenset(), ("b:x", "a:y"))


# --- swapping the catalog --------------------------------------------------------------------


def test_a_swap_serves_the_new_catalog_and_refuses_the_old_ones_cursors() -> None:
    server = served(page_size=1)
    original = endpoint_at(server)
    with TestClient(server) as client:
        server.swap(original.with_tools(SHOUT))
        called = post(client, "tools/call", {"name": "shout", "arguments": {"text": "hi"}})
        assert payload(called)["result"]["content"][0]["text"] == "HI"
        cursor = payload(post(client, "tools/list", {}))["result"]["nextCursor"]
        # the tools did not change: their cursor still names the same page
        server.swap(endpoint_at(server).with_prompts(GREETING))
        page = post(client, "tools/list", {"cursor": cursor})
        assert [t["name"] for t in payload(page)["result"]["tools"]] == ["shout"]
        listed = post(client, "prompts/list", {})
        assert [p["name"] for p in payload(listed)["result"]["prompts"]] == ["greeting"]
        # they changed: the old catalog's cursor is refused, never misread
        server.swap(original)
        assert error_of(post(client, "tools/list", {"cursor": cursor})) == (400, -32602)
        gone = post(client, "tools/call", {"name": "shout", "arguments": {"text": "hi"}})
        assert payload(gone)["error"]["code"] == -32602
    assert len(server.registry) == 3 and endpoint_at(server) is original


def test_a_swap_that_changes_nothing_tells_nobody(client: tuple[Server, TestClient]) -> None:
    server, test_client = client
    stream = listen(test_client)
    listening(server)
    current = endpoint_at(server)
    server.swap(current.replace())  # the same lists, a new endpoint object
    assert endpoint_at(server) is not current
    assert _queued(server) == 0
    drain(test_client, server)
    assert len(frames(stream.result(WAIT))) == 2


def test_a_swap_tells_2025_sessions_on_their_stream() -> None:
    server = served()
    with TestClient(server) as client:
        init = {"protocolVersion": "2025-11-25", "capabilities": {}}
        opened = client.post("/mcp", handshake_request("initialize", init))
        session_id = opened.header("mcp-session-id")
        assert session_id is not None
        server.swap(endpoint_at(server).with_tools(SHOUT).with_prompts(GREETING))
        store = server.engine.pipeline.sessions
        assert store is not None
        session = asyncio.run(store.get(session_id))
        assert session is not None
        methods = sorted(
            message.split(b'"method":"')[1].split(b'"')[0] for message in session.take()
        )
    assert methods == [b"notifications/prompts/list_changed", b"notifications/tools/list_changed"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda e: e.replace(path="/elsewhere"), "no endpoint is served at that path"),
        (lambda e: e.replace(revisions={NOVEMBER, MODERN}), "same revisions"),
        (lambda e: [e, e], "declare the same path"),
    ],
)
def test_a_refused_swap_changes_nothing(change: Callable[[Any], Any], message: str) -> None:
    server = served()
    before = endpoint_at(server, "/tools")
    with pytest.raises(ConfigurationError, match=message):
        server.swap(change(before))
    assert endpoint_at(server, "/tools") is before


def test_a_swap_keeps_listen_and_the_keyring_rule() -> None:
    server = served()
    tools = endpoint_at(server, "/tools")
    with pytest.raises(ConfigurationError, match="keep the listen setting"):
        server.swap(tools.replace(listen=False))

    @mcpkit.endpoint(path="/tools", name="t", version="1", revisions={MODERN}, listen=True)
    class Sealed:
        @mcpkit.tool(
            name="sealed",
            input_requests=[mcpkit.InputRequestDeclaration.roots()],
            request_state_mode=mcpkit.RequestStateMode.FRAMEWORK_PROTECTED,
        )
        def sealed(self) -> CompleteResult:
            return CompleteResult.from_tool_text("x")

    with pytest.raises(ConfigurationError, match="give the server a keyring"):
        server.swap(Sealed)
    assert endpoint_at(server, "/tools") is tools


def test_a_configured_copy_shares_what_it_serves() -> None:
    server = served()
    moved = server.configured(port=9002)
    server.swap(endpoint_at(server).with_tools(SHOUT))
    assert endpoint_at(moved).tools[-1] is SHOUT


# --- the listener's own edges ----------------------------------------------------------------


def make_listener(limits: Limits, uris: tuple[str, ...] = ()) -> Any:
    from mcpkit.server._listen import Listener

    async def renew() -> float | None:
        return 60.0

    kinds = frozenset({ChangeKind.TOOLS, ChangeKind.PROMPTS})
    listener = Listener(
        request_id="x", path="/mcp", revision=MODERN, owner=None,
        honoured=ListenFilter(kinds, uris), limits=limits, renew=renew,
    )  # fmt: skip
    listener.lease = 60.0
    return listener


def run_listener(
    limits: Limits,
    stall_at: int,
    during: Callable[[Any], None] = lambda listener: None,
    uris: tuple[str, ...] = (),
) -> tuple[list[bytes | None], Any]:
    """Run a listener whose client stops reading at its ``stall_at``-th write (0: the
    acknowledgement); ``during(listener)`` runs once the stall began."""

    async def scenario() -> tuple[list[bytes | None], Any]:
        listener = make_listener(limits, uris)
        written: list[bytes | None] = []
        stalled = asyncio.Event()

        async def write(frame: bytes | None, last: bool) -> None:
            if len(written) == stall_at:
                stalled.set()
                await asyncio.sleep(WAIT * 10)  # a client that does not read
            written.append(frame)

        task = asyncio.ensure_future(listener.run(asyncio.Event(), write))
        listener.post(ChangeKind.TOOLS)
        listener.post(ChangeKind.PROMPTS)  # written third: where a stall at 2 happens
        await stalled.wait()
        during(listener)
        await asyncio.wait_for(task, WAIT)
        return written, listener

    return asyncio.run(scenario())


def test_a_write_the_client_does_not_take_is_given_up_after_the_write_timeout() -> None:
    started = time.monotonic()
    written, listener = run_listener(Limits(write_timeout_seconds=0.05), stall_at=0)
    assert written == [] and time.monotonic() - started < WAIT
    assert repr(listener) == "<Listener /mcp queued=2>"  # never written


def test_a_client_that_does_not_read_is_cut_off_at_its_queue_bound() -> None:
    uris = ("test://a", "test://b", "test://c")

    def flood(listener: Any) -> None:
        for uri in uris:  # two fit; the third is past the bound
            listener.post(ChangeKind.RESOURCE, uri)

    started = time.monotonic()
    written, listener = run_listener(Limits(max_listen_queue=2), 2, flood, uris)
    assert len(written) == 2 and listener.queued == 0  # ack and the first change only
    assert time.monotonic() - started < WAIT  # not the write timeout: cut at once
    listener.post(ChangeKind.TOOLS)  # once ended: nothing is queued
    assert listener.queued == 0


def test_a_stalled_keep_alive_ends_the_stream() -> None:
    limits = Limits(stream_keepalive_seconds=0.02, write_timeout_seconds=0.05)

    async def scenario() -> list[bytes | None]:
        listener = make_listener(limits)
        written: list[bytes | None] = []

        async def write(frame: bytes | None, last: bool) -> None:
            if frame is None:
                await asyncio.sleep(WAIT * 10)
            written.append(frame)

        await asyncio.wait_for(listener.run(asyncio.Event(), write), WAIT)
        return written

    assert len(asyncio.run(scenario())) == 1  # the acknowledgement, then nothing


def test_an_abrupt_end_writes_nothing_more() -> None:
    async def scenario() -> list[bytes | None]:
        listener = make_listener(Limits())
        written: list[bytes | None] = []

        async def write(frame: bytes | None, last: bool) -> None:
            written.append(frame)
            listener.post(ChangeKind.TOOLS)
            listener.end(graceful=False)
            listener.end()  # a graceful end after an abrupt one changes nothing

        await asyncio.wait_for(listener.run(asyncio.Event(), write), WAIT)
        return written

    assert len(asyncio.run(scenario())) == 1


def test_closing_a_listener_twice_or_one_never_opened_does_nothing() -> None:
    from mcpkit.server._audience import Audience

    async def scenario() -> int:
        audience = Audience(Limits())
        listener = make_listener(Limits(), ("test://a",))
        audience.close(listener)
        audience.open(listener)
        other = make_listener(Limits())
        audience.open(other)
        audience.close(listener)
        audience.close(listener)
        return audience.listens

    assert asyncio.run(scenario()) == 1


def test_a_flood_while_the_stream_is_idle_cuts_it_before_anything_more_is_written() -> None:
    async def scenario() -> list[bytes | None]:
        listener = make_listener(Limits(max_listen_queue=2), ("test://a", "test://b"))
        written: list[bytes | None] = []
        acknowledged = asyncio.Event()

        async def write(frame: bytes | None, last: bool) -> None:
            written.append(frame)
            acknowledged.set()

        task = asyncio.ensure_future(listener.run(asyncio.Event(), write))
        await acknowledged.wait()
        for _ in range(3):
            await asyncio.sleep(0)  # the stream waits for its next change
        for kind, uri in ((ChangeKind.TOOLS, None), *((ChangeKind.RESOURCE, u) for u in "ab")):
            listener.post(kind, uri)  # all at once, before it wakes: the third is past the bound
        await asyncio.wait_for(task, WAIT)
        return written

    assert len(asyncio.run(scenario())) == 1


def test_a_client_that_leaves_while_its_listen_is_authorized_gets_no_stream() -> None:
    started, release = threading.Event(), threading.Event()

    async def slow(request: SubscriptionRequest) -> Lease:
        started.set()
        while not release.is_set():
            await asyncio.sleep(0.005)
        return Lease(60.0)

    server = served(subscription_authorizer=slow)
    with TestClient(server) as client:
        gone = threading.Event()

        def leave_once_asked() -> None:
            if started.wait(WAIT):
                gone.set()

        threading.Thread(target=leave_once_asked).start()
        body = listen_body(ALL)
        headers = stateless_headers("subscriptions/listen")
        partial = client.post_disconnecting("/mcp", body, after=gone, headers=headers)
        assert partial is None  # it left before anything was written
        release.set()
        listening(server, 0)


def test_a_long_lease_is_capped_by_the_servers_lease_limit() -> None:
    """``subscription_lease_seconds`` caps what the authorizer grants: a grant of an hour is
    checked again within the server's limit all the same."""
    renewals = threading.Event()

    def generous(request: SubscriptionRequest) -> Lease:
        if request.renewal:
            renewals.set()
        return Lease(3600.0)

    limits = Limits(subscription_lease_seconds=0.1)
    server = served(subscription_authorizer=generous, limits=limits)
    with TestClient(server) as client:
        stream = listen(client)
        assert renewals.wait(WAIT)
        drain(client, server)
        assert stream.result(WAIT).status == 200
