"""``subscriptions/listen`` on a stdio connection (2026-07-28).

On stdio every listen shares the one pipe with the rest of the traffic, so each message of a
listen is told apart by its ``io.modelcontextprotocol/subscriptionId`` tag.  Driven through
``StdioConnection.receive(line, write)`` on a real event loop, these tests cover: several
listens (ids of both JSON types) open beside an ordinary call, each acknowledged first; a
``Server.swap`` and ``Server.notify_resource_updated`` reaching exactly the listens that asked
(resource URIs matched in normal form); ``notifications/cancelled`` ending one listen with
nothing more written for it; ``shutdown`` ending a listen with its ``complete`` result; and a
listen the subscription authorizer denies.

Every message is checked against the official 2026-07-28 schema definition of its kind.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import pytest

from mcpkit import (
    ChangeKind,
    CompleteResult,
    EndpointRegistry,
    Lease,
    Limits,
    ListenFilter,
    PromptMessage,
    PromptOutput,
    ResourceOutput,
    Revision,
    Role,
    Server,
    SubscriptionRequest,
    TextContent,
    TextResourceContents,
    endpoint,
    prompt,
    resource,
    tool,
)
from mcpkit.json import JsonObject
from mcpkit.protocol import parse_envelope
from mcpkit.server import StdioConnection
from mcpkit.testing import handshake_request, stateless_request

from ..spec_schemas import schema_errors

MODERN = "2026-07-28"
TAG = "io.modelcontextprotocol/subscriptionId"
WAIT = 5.0  # seconds: an upper bound for things that happen at once
SETTLE = 0.05  # seconds: long enough for a listen with nothing queued to have written it
DENIED = {"code": -31997, "message": "Subscription not authorized"}
OVERLOADED = {"code": -32603, "message": "Server overloaded; retry later"}


# --- the endpoint ---------------------------------------------------------------------------


@endpoint(
    path="/mcp",
    name="listening",
    version="1.0.0",
    revisions={Revision.V2025_11_25, Revision.V2026_07_28},
    listen=True,
)
class Watched:
    @tool(name="echo")
    def echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)

    @tool(name="hold")
    async def hold(self, gate: str) -> CompleteResult:
        """Waits until the test releases ``gate`` (a call in flight beside the listens)."""
        entered(gate).set()
        await released(gate).wait()
        return CompleteResult.from_tool_text(gate)

    @prompt(name="greeting")
    def greeting(self) -> PromptOutput:
        text = TextContent(text="hello")
        return PromptOutput(messages=(PromptMessage(role=Role.USER, content=text),))

    @resource(uri="test://doc", name="doc", mime_type="text/plain")
    def doc(self) -> ResourceOutput:
        contents = TextResourceContents(uri="test://doc", text="doc", mime_type="text/plain")
        return ResourceOutput(contents=(contents,))


@endpoint(path="/mcp", name="listening", version="1.0.0", revisions={Revision.V2026_07_28})
class _Extra:
    @tool(name="extra")
    def extra(self) -> CompleteResult:
        return CompleteResult.from_tool_text("extra")


WATCHED = EndpointRegistry.from_classes(Watched).endpoints[0]
GROWN = WATCHED.with_tools(EndpointRegistry.from_classes(_Extra).endpoints[0].tools[0])
"""``Watched`` with one more tool: its tool list differs, its prompt list does not."""

_gates: dict[str, tuple[asyncio.Event, asyncio.Event]] = {}


def entered(name: str) -> asyncio.Event:
    return _gates.setdefault(name, (asyncio.Event(), asyncio.Event()))[0]


def released(name: str) -> asyncio.Event:
    return _gates.setdefault(name, (asyncio.Event(), asyncio.Event()))[1]


@pytest.fixture(autouse=True)
def _fresh_gates() -> None:
    _gates.clear()


class Authorizer:
    """Grants every listen a minute (``deny``: denies every one), remembering what it was
    asked; ``asynchronous`` answers from a coroutine."""

    def __init__(self, *, deny: bool = False, asynchronous: bool = False) -> None:
        self.deny = deny
        self.asynchronous = asynchronous
        self.asked: list[SubscriptionRequest] = []

    def __call__(self, request: SubscriptionRequest) -> Lease | Awaitable[Lease | None] | None:
        self.asked.append(request)
        decision = None if self.deny else Lease(60.0)
        if self.asynchronous:
            return self._later(decision)
        return decision

    async def _later(self, decision: Lease | None) -> Lease | None:
        await asyncio.sleep(0)
        return decision


# --- driving a connection -------------------------------------------------------------------


class Client:
    """One stdio client: sends lines to its connection and keeps every line written back."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.connection: StdioConnection = server.stdio_connection()
        self.written: list[dict[str, Any]] = []
        self.reading = asyncio.Event()
        """Cleared: the client stops reading, and every write waits (a full pipe)."""
        self.reading.set()
        self.waiting = 0  # writes waiting for the client to read

    async def write(self, line: bytes) -> None:
        if not self.reading.is_set():
            self.waiting += 1
            try:
                await self.reading.wait()
            finally:
                self.waiting -= 1
        assert b"\n" not in line
        message = json.loads(line)
        assert not check(message), check(message)
        self.written.append(message)

    async def send(self, message: Mapping[str, object]) -> None:
        await self.connection.receive(json.dumps(message).encode(), self.write)

    def start(self, message: Mapping[str, object]) -> asyncio.Task[None]:
        return asyncio.create_task(self.send(message))

    def of(self, subscription: str | int) -> list[dict[str, Any]]:
        """What was written for the listen ``subscription``, in order: its notifications
        (tagged with its id, of the same JSON type) and its answer."""
        return [message for message in self.written if belongs(message, subscription)]

    def answers(self, request_id: str | int) -> list[dict[str, Any]]:
        return [m for m in self.written if "method" not in m and same_id(m.get("id"), request_id)]

    @property
    def listens(self) -> int:
        return self.server.engine.deployment.audience.listens

    async def until(self, ready: Callable[[], bool], what: str) -> None:
        """Poll until ``ready()``; fail after ``WAIT`` seconds."""
        deadline = asyncio.get_running_loop().time() + WAIT
        while not ready():
            if asyncio.get_running_loop().time() > deadline:
                pytest.fail(f"timed out waiting for {what}; written: {self.written}")
            await asyncio.sleep(0.002)


def same_id(value: object, request_id: str | int) -> bool:
    """JSON-RPC id equality: ``1`` and ``"1"`` are different ids."""
    return type(value) is type(request_id) and value == request_id


def belongs(message: dict[str, Any], subscription: str | int) -> bool:
    if "method" in message:
        tag = message.get("params", {}).get("_meta", {}).get(TAG, None)
        return tag is not None and same_id(tag, subscription)
    return same_id(message.get("id"), subscription)


DEFINITIONS = {
    "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/resources/updated": "ResourceUpdatedNotification",
}


def check(message: dict[str, Any]) -> list[str]:
    """The schema errors of one written message, by the definition of its kind: a listen's
    notifications, a call's or a list's result, or else a listen's own answer."""
    if "method" in message:
        return schema_errors(MODERN, DEFINITIONS[message["method"]], message)
    if "error" in message:
        return schema_errors(MODERN, "JSONRPCErrorResponse", message)
    result = message["result"]
    if "content" in result:
        return schema_errors(MODERN, "CallToolResult", result)
    if "tools" in result:
        return schema_errors(MODERN, "ListToolsResult", result)
    return schema_errors(MODERN, "SubscriptionsListenResultResponse", message)


def listen(request_id: str | int, **notifications: object) -> dict[str, object]:
    return stateless_request(
        "subscriptions/listen", {"notifications": notifications}, id=request_id
    )


def call(request_id: str | int, name: str, **arguments: object) -> dict[str, object]:
    return stateless_request("tools/call", {"name": name, "arguments": arguments}, id=request_id)


def cancel(request_id: str | int) -> dict[str, object]:
    params = {"requestId": request_id, "reason": "done"}
    return handshake_request("notifications/cancelled", params, id=None)


def acknowledged(subscription: str | int, **honoured: object) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"notifications": honoured, "_meta": {TAG: subscription}},
    }


def notified(method: str, subscription: str | int, **params: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", "method": method, "params": {"_meta": {TAG: subscription}, **params}}


def completed(subscription: str | int) -> dict[str, object]:
    result = {"resultType": "complete", "_meta": {TAG: subscription}}
    return {"jsonrpc": "2.0", "id": subscription, "result": result}


TOOLS_CHANGED = "notifications/tools/list_changed"
UPDATED = "notifications/resources/updated"


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(scenario(), 3 * WAIT))


async def open_three(client: Client) -> dict[str | int, asyncio.Task[None]]:
    """Listens ``1`` (tools, and ``TEST://doc``), ``"1"`` (tools, and ``test://Other``) and
    ``"a"`` (prompts only), opened beside a call still running and a call answered meanwhile;
    returns their tasks once all three are acknowledged."""
    held = client.start(call("h", "hold", gate="h"))
    await entered("h").wait()
    tasks: dict[str | int, asyncio.Task[None]] = {
        1: client.start(listen(1, toolsListChanged=True, resourceSubscriptions=["TEST://doc"])),
        "1": client.start(
            listen("1", toolsListChanged=True, resourceSubscriptions=["test://Other"])
        ),
        "a": client.start(listen("a", promptsListChanged=True)),
    }
    await client.until(lambda: all(client.of(key) for key in tasks), "three acknowledgements")
    await client.send(call(7, "echo", text="meanwhile"))  # answered while the listens stay open
    assert [m["result"]["content"] for m in client.answers(7)] == [
        [{"type": "text", "text": "meanwhile"}]
    ]
    released("h").set()
    await asyncio.wait_for(held, WAIT)
    assert [m["result"]["content"] for m in client.answers("h")] == [
        [{"type": "text", "text": "h"}]
    ]
    assert client.listens == 3
    assert not any(task.done() for task in tasks.values())
    return tasks


# --- the tests ------------------------------------------------------------------------------


def test_listens_are_acknowledged_and_hear_only_what_they_asked_for() -> None:
    """Three listens on one pipe, beside other calls: each is acknowledged (its first tagged
    message) with the honoured filter and its own id, of its own JSON type; a swap that grows
    the tool list tells each tools listen exactly once and the prompts-only listen nothing;
    a resource update reaches only the listen following that URI, matched in normal form."""
    authorizer = Authorizer()
    client = Client(Server(Watched, subscription_authorizer=authorizer))

    async def scenario() -> None:
        tasks = await open_three(client)
        assert client.of(1) == [
            acknowledged(1, toolsListChanged=True, resourceSubscriptions=["test://doc"])
        ]
        assert client.of("1") == [
            acknowledged("1", toolsListChanged=True, resourceSubscriptions=["test://other"])
        ]
        assert client.of("a") == [acknowledged("a", promptsListChanged=True)]
        # The authorizer was asked once per listen, with the honoured filter and no HTTP.
        assert {request.notifications for request in authorizer.asked} == {
            ListenFilter(frozenset({ChangeKind.TOOLS}), ("test://doc",)),
            ListenFilter(frozenset({ChangeKind.TOOLS}), ("test://other",)),
            ListenFilter(frozenset({ChangeKind.PROMPTS})),
        }
        assert len(authorizer.asked) == 3
        assert all(r.http_request is None and not r.renewal for r in authorizer.asked)

        client.server.swap(GROWN)
        await client.until(
            lambda: len(client.of(1)) == 2 and len(client.of("1")) == 2, "tools/list_changed"
        )
        await asyncio.sleep(SETTLE)
        assert client.of(1)[1:] == [notified(TOOLS_CHANGED, 1)]
        assert client.of("1")[1:] == [notified(TOOLS_CHANGED, "1")]
        assert len(client.of("a")) == 1  # its prompt list did not change
        await client.send(stateless_request("tools/list", id=8))
        listed = client.written[-1]["result"]["tools"]
        assert "extra" in [entry["name"] for entry in listed]  # the swap took effect

        client.server.notify_resource_updated("test://doc")
        await client.until(lambda: len(client.of(1)) == 3, "the update of test://doc")
        client.server.notify_resource_updated("TEST://Other")
        await client.until(lambda: len(client.of("1")) == 3, "the update of test://other")
        client.server.notify_resource_updated("test://nobody")
        await asyncio.sleep(SETTLE)
        assert client.of(1)[2:] == [notified(UPDATED, 1, uri="test://doc")]
        assert client.of("1")[2:] == [notified(UPDATED, "1", uri="test://other")]
        assert len(client.of("a")) == 1
        assert client.listens == 3

        assert await client.connection.shutdown(client.write) == 3
        await asyncio.wait_for(asyncio.gather(*tasks.values()), WAIT)
        assert [client.of(key)[-1] for key in tasks] == [completed(key) for key in tasks]
        assert client.listens == 0

    run(scenario)


def test_a_cancelled_listen_ends_silently_and_the_others_keep_listening() -> None:
    """``notifications/cancelled`` naming a listen ends it with nothing more written for it
    (no result), frees its place in the audience, and leaves the listen whose id is the same
    number as a string, and every other, listening."""
    client = Client(Server(Watched, subscription_authorizer=Authorizer()))

    async def scenario() -> None:
        tasks = await open_three(client)
        await client.send(cancel(1))
        await asyncio.wait_for(tasks[1], WAIT)
        assert client.listens == 2
        assert not tasks["1"].done() and not tasks["a"].done()

        client.server.swap(GROWN)
        client.server.notify_resource_updated("test://doc")
        await client.until(lambda: len(client.of("1")) == 2, "tools/list_changed on '1'")
        await asyncio.sleep(SETTLE)
        assert client.of(1) == [
            acknowledged(1, toolsListChanged=True, resourceSubscriptions=["test://doc"])
        ]
        assert client.of("1")[1:] == [notified(TOOLS_CHANGED, "1")]

        await client.send(cancel("a"))
        await asyncio.wait_for(tasks["a"], WAIT)
        assert client.listens == 1
        assert client.of("a") == [acknowledged("a", promptsListChanged=True)]
        # The cancelled listens are not stopped again at shutdown: only "1" is left.
        assert await client.connection.shutdown(client.write) == 1
        assert client.of(1)[-1]["method"] == "notifications/subscriptions/acknowledged"
        assert client.of("1")[-1] == completed("1")

    run(scenario)


def test_shutdown_completes_an_open_listen_and_counts_what_it_stopped() -> None:
    """``shutdown`` answers a listen with its tagged ``complete`` result (a graceful end, not
    the overload error an ordinary call in flight gets) and counts both; the listen writes
    nothing after it, and leaves the audience."""
    client = Client(Server(Watched, subscription_authorizer=Authorizer()))

    async def scenario() -> None:
        held = client.start(call("h2", "hold", gate="h2"))
        await entered("h2").wait()
        task = client.start(listen("s", toolsListChanged=True))
        await client.until(lambda: bool(client.of("s")), "the acknowledgement")

        assert await client.connection.shutdown(client.write) == 2
        assert client.of("s") == [acknowledged("s", toolsListChanged=True), completed("s")]
        assert client.answers("h2") == [{"jsonrpc": "2.0", "id": "h2", "error": OVERLOADED}]
        await asyncio.wait_for(asyncio.gather(task, held), WAIT)
        assert client.listens == 0

        client.server.swap(GROWN)  # a change after the end reaches nobody
        await asyncio.sleep(SETTLE)
        assert len(client.of("s")) == 2
        assert await client.connection.shutdown(client.write) == 0

    run(scenario)


@pytest.mark.parametrize("asynchronous", [False, True], ids=["def", "async"])
def test_a_denied_listen_is_answered_with_the_subscription_error(asynchronous: bool) -> None:
    """An authorizer that returns ``None`` (from a function or a coroutine) denies the listen:
    its answer is -31997, nothing is acknowledged, and it holds no place in the audience."""
    authorizer = Authorizer(deny=True, asynchronous=asynchronous)
    client = Client(Server(Watched, subscription_authorizer=authorizer))

    async def scenario() -> None:
        await client.send(listen("d", toolsListChanged=True, resourceSubscriptions=["test://doc"]))
        assert client.written == [{"jsonrpc": "2.0", "id": "d", "error": DENIED}]
        assert len(authorizer.asked) == 1
        honoured = ListenFilter(frozenset({ChangeKind.TOOLS}), ("test://doc",))
        assert authorizer.asked[0].notifications == honoured
        assert client.listens == 0
        assert await client.connection.shutdown(client.write) == 0

    run(scenario)


def test_a_listen_cut_off_while_the_client_does_not_read_is_still_answered() -> None:
    """The client stops reading stdout while a listen's updates pile up past
    ``max_listen_queue``: the listen is cut off and leaves the audience.  But the pipe stays
    open and the client reads on later, so the listen must not just go quiet: the stdio
    connection promises every request an answer unless the client cancelled it (see
    ``_stdio_connection``'s module docstring), and a client that is never told keeps
    believing it is subscribed.  So once the client reads again its listen has an answer
    (its ``complete`` result, telling it to listen again, or an error)."""
    limits = Limits(max_listen_queue=2)
    client = Client(Server(Watched, limits=limits, subscription_authorizer=Authorizer()))
    uris = [f"test://doc/{n}" for n in range(4)]

    async def scenario() -> None:
        task = client.start(listen("p", resourceSubscriptions=uris))
        await client.until(lambda: bool(client.of("p")), "the acknowledgement")
        client.reading.clear()
        client.server.notify_resource_updated(uris[0])
        await client.until(lambda: client.waiting == 1, "the write of the first update")
        client.server.notify_resource_updated(uris[1])
        client.server.notify_resource_updated(uris[2])  # the queue is full
        await asyncio.sleep(SETTLE)
        assert not task.done()
        client.server.notify_resource_updated(uris[3])  # past the bound
        await client.until(lambda: client.listens == 0, "the cut")  # its place is freed
        assert not task.done()  # its answer waits for room, as every answer does

        client.reading.set()
        await asyncio.wait_for(task, WAIT)
        await client.send(call(9, "echo", text="later"))  # the connection serves on
        assert len(client.answers(9)) == 1
        assert await client.connection.shutdown(client.write) == 0
        answers = client.answers("p")
        assert answers == [completed("p")], client.of("p")

    run(scenario)


def test_a_settled_listen_writes_nothing_more_and_a_pipe_gets_no_keep_alives() -> None:
    """The stdio side of a listen stream: keep-alives are not written, and once something else
    settled the request (a cancel, a shutdown), neither are its notifications nor its last
    answer."""
    from mcpkit.server._stdio_connection import _Line

    server = Server(Watched, subscription_authorizer=Authorizer())
    written: list[bytes] = []

    async def write(line: bytes) -> None:
        written.append(line)

    class Scripted:
        def completion(self) -> bytes:
            return b"complete"

        async def run(self, disconnected: object, send: Any) -> None:
            await send(None, False)  # a keep-alive: nothing on a pipe
            await send(b"first", False)
            assert line.flight is not None and line.flight.settle()  # a cancel, say
            await send(b"second", False)
            await send(b"last", True)

    async def scenario() -> None:
        line.opened(parse_envelope(JsonObject({"jsonrpc": "2.0", "id": 1, "method": "m"})))
        await line.listen(Scripted())  # type: ignore[arg-type]

    line = _Line(server.stdio_connection(), write)
    asyncio.run(scenario())
    assert written == [b"first"]


def test_a_graceful_end_on_stdio_is_the_listens_answer() -> None:
    from mcpkit.server._stdio_connection import _Line

    server = Server(Watched, subscription_authorizer=Authorizer())
    written: list[bytes] = []

    async def write(line: bytes) -> None:
        written.append(line)

    class Ending:
        async def run(self, disconnected: object, send: Any) -> None:
            await send(b"complete", True)

    async def scenario() -> bool:
        line.opened(parse_envelope(JsonObject({"jsonrpc": "2.0", "id": 1, "method": "m"})))
        await line.listen(Ending())  # type: ignore[arg-type]
        return line.flight is not None and line.flight.settled

    line = _Line(server.stdio_connection(), write)
    assert asyncio.run(scenario()) and written == [b"complete"]
