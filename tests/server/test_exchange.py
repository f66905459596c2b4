"""Multi-round input on 2025: a handler written for 2026-07-28 (declared input requests, an
``InputRequiredResult``, ``ctx.elicitation`` / ``ctx.sampling`` / ``ctx.roots``) serves a 2025
session unchanged.  The framework sends each input request to the client as a JSON-RPC request
on the call's own stream, takes the client's answers (POSTed with the session id, or written to
stdin), and runs the handler again with them and its state, until it completes.

Covered: one round and several, several requests in one round answered in any order, state of
each mode kept in the server, prompts and resources, 2025-06-18's form without ``mode``, the
capability checks (required before the handler, conditional when emitted), the bounds
(requests waiting per session, the wait, the rounds) at their limit and one past it, the
client's error or wrong answer, answers from elsewhere ignored or refused, cancellation and the
end of the session while waiting, no handler slot held while the client answers, an
interceptor, and the same over stdio."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import Future
from typing import Any, Final

import pytest

import mcpkit
from mcpkit import (
    AdmissionRequest,
    Admitted,
    CompleteResult,
    InputRequestDeclaration,
    InputRequiredResult,
    Keyring,
    Limits,
    MemorySessionStore,
    PromptMessage,
    PromptOutput,
    Rejected,
    RequestContext,
    RequestStateMode,
    Requirement,
    ResourceOutput,
    Revision,
    Role,
    Server,
    TextContent,
    TextResourceContents,
)
from mcpkit.json import JsonObject
from mcpkit.testing import TestClient, TestResponse, handshake_request

from ..wire import assert_valid

JUNE, NOVEMBER, MODERN = Revision.V2025_06_18, Revision.V2025_11_25, Revision.V2026_07_28
WAIT: Final = 10.0
EVERY_CAPABILITY: Final[dict[str, object]] = {"elicitation": {}, "sampling": {}, "roots": {}}
INPUT_UNAVAILABLE: Final = (
    -32603,
    "The client did not answer the server's request for input; retry the call",
)


def form(message: str, field: str) -> dict[str, object]:
    return {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {field: {"type": "string"}},
                "required": [field],
            },
        },
    }


SAMPLE: Final = {
    "method": "sampling/createMessage",
    "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Say hi"}}],
        "maxTokens": 10,
    },
}
ROOTS: Final = {"method": "roots/list"}


def accepted(ctx: RequestContext, key: str, field: str) -> str | None:
    answer = ctx.elicitation(key)
    if answer is None or not answer.accepted or answer.content is None:
        return None
    value = answer.content.get(field)
    return value if isinstance(value, str) else None


KEYRING: Final = Keyring.development_ephemeral()
seen: list[object] = []  # what handlers saw, for the tests that look


@mcpkit.endpoint(
    path="/mcp",
    name="exchange",
    version="1.0.0",
    revisions={JUNE, NOVEMBER, MODERN},
    session_revisions={JUNE, NOVEMBER},
)
class Asking:
    @mcpkit.tool(name="greet", input_requests=[InputRequestDeclaration.elicitation_form()])
    def greet(self, ctx: RequestContext) -> CompleteResult | InputRequiredResult:
        name = accepted(ctx, "name", "name")
        if name is None:
            return InputRequiredResult(input_requests={"name": form("Your name?", "name")})
        return CompleteResult.from_tool_text(f"Hello, {name}!")

    @mcpkit.tool(
        name="all_three",
        input_requests=[
            InputRequestDeclaration.elicitation_form(),
            InputRequestDeclaration.sampling(),
            InputRequestDeclaration.roots(),
        ],
        request_state_mode=RequestStateMode.FRAMEWORK_PROTECTED,
    )
    async def all_three(self, ctx: RequestContext) -> CompleteResult | InputRequiredResult:
        name, sampled, roots = ctx.elicitation("n"), ctx.sampling("s"), ctx.roots("r")
        if ctx.framework_state != {"step": 1} or None in (name, sampled, roots):
            return InputRequiredResult(
                input_requests={"n": form("Name?", "name"), "s": SAMPLE, "r": ROOTS},
                framework_state={"step": 1},
            )
        assert name is not None and sampled is not None and roots is not None
        uris = ",".join(root.uri for root in roots.roots)
        return CompleteResult.from_tool_text(f"{name.action} {sampled.model} {uris}")

    @mcpkit.tool(
        name="two_rounds",
        input_requests=[InputRequestDeclaration.elicitation_form()],
        request_state_mode=RequestStateMode.APPLICATION_PROTECTED,
    )
    def two_rounds(self, ctx: RequestContext) -> CompleteResult | InputRequiredResult:
        seen.append(ctx.request_state)
        if ctx.request_state == "round-2":
            colour = accepted(ctx, "colour", "colour")
            return CompleteResult.from_tool_text(f"{ctx.input_responses is not None} {colour}")
        if ctx.request_state == "round-1" and accepted(ctx, "name", "name") is not None:
            return InputRequiredResult(
                input_requests={"colour": form("Colour?", "colour")}, request_state="round-2"
            )
        return InputRequiredResult(
            input_requests={"name": form("Name?", "name")}, request_state="round-1"
        )

    @mcpkit.tool(
        name="state_only",
        request_state_mode=RequestStateMode.FRAMEWORK_PROTECTED,
        input_requests=[InputRequestDeclaration.roots()],
    )
    def state_only(self, ctx: RequestContext) -> CompleteResult | InputRequiredResult:
        if ctx.framework_state == {"again": True}:
            # nothing was asked: no responses, as on a 2026-07-28 retry with state only
            return CompleteResult.from_tool_text(f"ran twice, {ctx.input_responses}")
        return InputRequiredResult(framework_state={"again": True})

    @mcpkit.tool(
        name="needs_sampling",
        input_requests=[InputRequestDeclaration.sampling(Requirement.REQUIRED)],
    )
    def needs_sampling(self, ctx: RequestContext) -> CompleteResult | InputRequiredResult:
        seen.append("ran")
        if ctx.sampling("s") is None:
            return InputRequiredResult(input_requests={"s": SAMPLE})
        return CompleteResult.from_tool_text("sampled")

    @mcpkit.tool(name="rogue", input_requests=[InputRequestDeclaration.roots()])
    def rogue(self, ctx: RequestContext) -> CompleteResult | InputRequiredResult:
        return InputRequiredResult(input_requests={"s": SAMPLE})  # never declared

    @mcpkit.tool(
        name="big_state",
        input_requests=[InputRequestDeclaration.roots()],
        request_state_mode=RequestStateMode.FRAMEWORK_PROTECTED,
    )
    def big_state(self, ctx: RequestContext) -> CompleteResult | InputRequiredResult:
        return InputRequiredResult(input_requests={"r": ROOTS}, framework_state="x" * 40)

    @mcpkit.tool(name="plain")
    def plain(self) -> CompleteResult:
        return CompleteResult.from_tool_text("plain")

    @mcpkit.prompt(name="asks", input_requests=[InputRequestDeclaration.elicitation_form()])
    def asks(self, ctx: RequestContext) -> PromptOutput | InputRequiredResult:
        topic = accepted(ctx, "topic", "topic")
        if topic is None:
            return InputRequiredResult(input_requests={"topic": form("Topic?", "topic")})
        content = TextContent(text=f"About {topic}")
        return PromptOutput(messages=(PromptMessage(role=Role.USER, content=content),))

    @mcpkit.resource(
        uri="test://roots", name="roots", input_requests=[InputRequestDeclaration.roots()]
    )
    def roots(self, ctx: RequestContext) -> ResourceOutput | InputRequiredResult:
        answer = ctx.roots("roots")
        if answer is None:
            return InputRequiredResult(input_requests={"roots": ROOTS})
        text = ",".join(root.uri for root in answer.roots)
        return ResourceOutput(contents=(TextResourceContents(uri="test://roots", text=text),))


def owner_by_header(request: AdmissionRequest) -> Admitted | Rejected:
    assert request.http_request is not None
    owner = dict(request.http_request.headers).get("x-owner")
    if owner == "nobody":
        return Rejected(status=401, headers=(("WWW-Authenticate", "Bearer"),))
    return Admitted(authorization=owner)


class Harness:
    """A served ``Asking`` endpoint, its session store, and one 2025 session."""

    def __init__(self, limits: Limits | None = None, **options: Any) -> None:
        self.limits = limits or Limits()
        self.store = MemorySessionStore(self.limits)
        self.client_server = server = Server(
            [Asking],
            limits=self.limits,
            sessions=self.store,
            admission=owner_by_header,
            keyring=KEYRING,
            **options,
        )
        self.client = TestClient(server)

    def open(
        self,
        revision: Revision = NOVEMBER,
        capabilities: Mapping[str, object] = EVERY_CAPABILITY,
        owner: str = "alice",
    ) -> str:
        params = {
            "protocolVersion": revision.wire,
            "capabilities": dict(capabilities),
            "clientInfo": {"name": "c", "version": "1"},
        }
        response = self.client.post(
            "/mcp", handshake_request("initialize", params), headers={"x-owner": owner}
        )
        assert response.status == 200, response.body
        session_id = response.header("mcp-session-id")
        assert session_id is not None
        self.revision, self.session_id, self.owner = revision, session_id, owner
        return session_id

    def headers(self, **extra: str) -> dict[str, str]:
        return {
            "mcp-session-id": self.session_id,
            "mcp-protocol-version": self.revision.wire,
            "x-owner": self.owner,
            **extra,
        }

    def submit(
        self, method: str, params: Mapping[str, object], id: int = 7
    ) -> Future[TestResponse]:
        message = handshake_request(method, dict(params), id=id)
        return self.client.submit("/mcp", message, headers=self.headers())

    def call(self, tool: str, id: int = 7) -> Future[TestResponse]:
        return self.submit("tools/call", {"name": tool, "arguments": {}}, id)

    def waiting(self, count: int) -> None:
        """Wait until the session has ``count`` requests waiting for the client."""
        session = asyncio.run(self.store.get(self.session_id))
        assert session is not None
        deadline = time.monotonic() + WAIT
        while len(session._exchange or ()) != count:
            assert time.monotonic() < deadline, "the server never asked"
            time.sleep(0.005)

    def answer(self, request_id: object, result: Mapping[str, object], **headers: str) -> int:
        message = {"jsonrpc": "2.0", "id": request_id, "result": dict(result)}
        return self.client.post("/mcp", message, headers=self.headers(**headers)).status

    def fail(self, request_id: object) -> int:
        message = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -1, "message": "no"}}
        return self.client.post("/mcp", message, headers=self.headers()).status

    def close(self) -> None:
        self.client.close()


@pytest.fixture()
def harness() -> Iterator[Harness]:
    seen.clear()
    h = Harness()
    yield h
    h.close()


def done(pending: Future[TestResponse]) -> TestResponse:
    return pending.result(WAIT)


def decoded(response: TestResponse) -> Any:
    """The response's one JSON message, for indexing."""
    return response.json


def messages(response: TestResponse) -> list[Any]:
    return list(response.messages)


def final(response: TestResponse) -> Any:
    return response.messages[-1]


def final_text(response: TestResponse) -> str:
    return str(final(response)["result"]["content"][0]["text"])


def requests_in(response: TestResponse) -> list[Any]:
    return [m for m in response.messages if isinstance(m, JsonObject) and "method" in m]


NAME_ANSWER: Final = {"action": "accept", "content": {"name": "Ada"}}


# --- one round, several rounds -----------------------------------------------------------------


@pytest.mark.parametrize("revision", [JUNE, NOVEMBER])
def test_the_client_is_asked_on_the_calls_stream_and_the_handler_runs_again(
    harness: Harness, revision: Revision
) -> None:
    harness.open(revision)
    pending = harness.call("greet")
    harness.waiting(1)
    assert harness.answer(1, NAME_ANSWER) == 202
    response = done(pending)
    assert response.status == 200
    assert response.header("content-type") == "text/event-stream"
    [asked] = requests_in(response)
    assert asked["id"] == 1 and asked["method"] == "elicitation/create"
    params = form("Your name?", "name")["params"]
    if revision is JUNE:  # 2025-06-18 has no mode: form is all it knows
        params = {k: v for k, v in dict(params).items() if k != "mode"}  # type: ignore[call-overload]
    assert asked["params"] == params
    assert final(response)["id"] == 7
    assert final_text(response) == "Hello, Ada!"
    assert_valid(revision.wire, "tools/call", [final(response)])
    harness.waiting(0)


def test_several_requests_in_one_round_answered_in_any_order_with_the_state_kept(
    harness: Harness,
) -> None:
    harness.open()
    pending = harness.call("all_three")
    harness.waiting(3)
    roots = {"roots": [{"uri": "file:///a"}, {"uri": "file:///b", "name": "B"}]}
    sampled = {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m1"}
    assert harness.answer(3, roots) == 202
    assert harness.answer(2, sampled) == 202
    assert harness.answer(1, {"action": "decline"}) == 202
    response = done(pending)
    assert [m["method"] for m in requests_in(response)] == [
        "elicitation/create",
        "sampling/createMessage",
        "roots/list",
    ]
    assert final_text(response) == "decline m1 file:///a,file:///b"
    # the state stays in the server: nothing the client saw carries it
    assert b"step" not in response.body


def test_two_rounds_carry_the_application_state_in_the_server(harness: Harness) -> None:
    harness.open()
    pending = harness.call("two_rounds")
    harness.waiting(1)
    harness.answer(1, NAME_ANSWER)
    harness.waiting(1)
    harness.answer(2, {"action": "accept", "content": {"colour": "blue"}})
    response = done(pending)
    assert [m["id"] for m in requests_in(response)] == [1, 2]
    assert final_text(response) == "True blue"
    assert seen == [None, "round-1", "round-2"]
    assert b"round-" not in response.body


def test_a_round_with_state_only_runs_again_at_once(harness: Harness) -> None:
    harness.open()
    response = done(harness.call("state_only"))
    assert response.messages == (
        {
            "jsonrpc": "2.0",
            "id": 7,
            "result": {"content": [{"type": "text", "text": "ran twice, None"}]},
        },
    )


def test_a_prompt_and_a_resource_ask_too(harness: Harness) -> None:
    harness.open()
    pending = harness.submit("prompts/get", {"name": "asks"})
    harness.waiting(1)
    harness.answer(1, {"action": "accept", "content": {"topic": "tea"}})
    prompt = final(done(pending))
    assert prompt["result"]["messages"][0]["content"]["text"] == "About tea"
    pending = harness.submit("resources/read", {"uri": "test://roots"})
    harness.waiting(1)
    harness.answer(2, {"roots": [{"uri": "file:///x"}]})
    read = final(done(pending))
    assert read["result"]["contents"] == [{"uri": "test://roots", "text": "file:///x"}]
    assert_valid(NOVEMBER.wire, "resources/read", [read])


def test_2026_gets_the_input_required_result_from_the_same_handler(harness: Harness) -> None:
    message = mcpkit.testing.stateless_request(
        "tools/call", {"name": "greet", "arguments": {}}, capabilities={"elicitation": {}}
    )
    response = harness.client.post(
        "/mcp", message, headers=mcpkit.testing.stateless_headers("tools/call", "greet")
    )
    result = decoded(response)["result"]
    assert result["resultType"] == "input_required"
    assert result["inputRequests"] == {"name": form("Your name?", "name")}


# --- capabilities --------------------------------------------------------------------------------


def test_a_required_capability_the_session_lacks_is_refused_before_the_handler(
    harness: Harness,
) -> None:
    harness.open(capabilities={"elicitation": {}})
    response = done(harness.call("needs_sampling"))
    assert seen == []
    assert response.status == 200  # 2025: in the body
    error = decoded(response)["error"]
    assert error["code"] == -32021
    assert error["data"] == {"requiredCapabilities": {"sampling": {}}}


def test_a_conditional_capability_the_session_lacks_is_refused_when_emitted(
    harness: Harness,
) -> None:
    harness.open(capabilities={"sampling": {}})
    response = done(harness.call("greet"))
    error = final(response)["error"]
    assert error["code"] == -32021
    assert error["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    harness.waiting(0)


def test_an_undeclared_request_is_the_fixed_internal_error(harness: Harness) -> None:
    harness.open()
    response = done(harness.call("rogue"))
    assert final(response)["error"] == {"code": -32603, "message": "Internal error"}


# --- what the client answers ---------------------------------------------------------------------


def test_an_error_answer_fails_the_call_with_the_fixed_error(harness: Harness) -> None:
    harness.open()
    pending = harness.call("greet")
    harness.waiting(1)
    assert harness.fail(1) == 202
    error = final(done(pending))["error"]
    assert (error["code"], error["message"]) == INPUT_UNAVAILABLE
    harness.waiting(0)


def test_an_answer_of_the_wrong_shape_fails_the_call_without_echoing_it(
    harness: Harness,
) -> None:
    harness.open()
    pending = harness.call("greet")
    harness.waiting(1)
    harness.answer(1, {"action": "maybe", "content": {"secret": "s3cr3t"}})
    response = done(pending)
    error = final(response)["error"]
    assert (error["code"], error["message"]) == INPUT_UNAVAILABLE
    assert b"s3cr3t" not in response.body and b"maybe" not in response.body


def test_answers_from_elsewhere_are_ignored_or_refused(harness: Harness) -> None:
    harness.open()
    pending = harness.call("greet")
    harness.waiting(1)
    # another owner presenting the session: 404, as for an unknown session; a client
    # admission refuses gets admission's refusal
    assert harness.answer(1, {"action": "decline"}, **{"x-owner": "mallory"}) == 404
    assert harness.answer(1, {"action": "decline"}, **{"x-owner": "nobody"}) == 401
    # no session, an unknown id, an id of the other type: accepted and dropped
    message = {"jsonrpc": "2.0", "id": 1, "result": {"action": "decline"}}
    assert harness.client.post("/mcp", message, headers={"x-owner": "alice"}).status == 202
    assert harness.answer(99, {"action": "decline"}) == 202
    assert harness.answer("1", {"action": "decline"}) == 202
    unknown = harness.client.post(
        "/mcp", message, headers={**harness.headers(), "mcp-session-id": "nope"}
    )
    assert unknown.status == 404
    harness.waiting(1)  # still waiting for the real answer
    harness.answer(1, NAME_ANSWER)
    assert final_text(done(pending)) == "Hello, Ada!"
    # a second answer to the same id changes nothing
    assert harness.answer(1, {"action": "decline"}) == 202


def test_another_sessions_answer_does_not_reach_this_call(harness: Harness) -> None:
    first = harness.open()
    pending = harness.call("greet")
    harness.waiting(1)
    harness.open()  # a second session of the same owner: its id 1 is its own
    assert harness.answer(1, {"action": "decline"}) == 202
    harness.session_id = first
    harness.waiting(1)
    harness.answer(1, NAME_ANSWER)
    assert final_text(done(pending)) == "Hello, Ada!"


# --- bounds --------------------------------------------------------------------------------------


def test_requests_waiting_per_session_hold_at_the_limit_and_refuse_past_it() -> None:
    at = Harness(Limits(max_pending_client_requests=3))
    try:
        at.open()
        pending = at.call("all_three")
        at.waiting(3)
        at.answer(1, NAME_ANSWER)
        at.answer(2, {"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m"})
        at.answer(3, {"roots": []})
        assert final_text(done(pending)) == "accept m "
    finally:
        at.close()
    past = Harness(Limits(max_pending_client_requests=2))
    try:
        past.open()
        response = done(past.call("all_three"))
        assert response.status == 429  # nothing was sent: the refusal is the whole answer
        assert decoded(response)["error"]["code"] == -31999
        past.waiting(0)
    finally:
        past.close()


def test_a_client_that_never_answers_costs_one_bounded_wait() -> None:
    harness = Harness(Limits(client_request_timeout_seconds=0.2, handler_slots=1))
    try:
        harness.open()
        started = time.monotonic()
        response = done(harness.call("greet"))
        assert time.monotonic() - started < WAIT
        error = final(response)["error"]
        assert (error["code"], error["message"]) == INPUT_UNAVAILABLE
        harness.waiting(0)
        assert final_text(done(harness.call("plain", id=8))) == "plain"
    finally:
        harness.close()


@pytest.mark.parametrize(("rounds", "completes"), [(2, True), (1, False)])
def test_rounds_hold_at_the_limit_and_fail_past_it(rounds: int, completes: bool) -> None:
    """``two_rounds`` asks twice: it completes when two continuations are allowed."""
    harness = Harness(Limits(max_request_state_rounds=rounds))
    try:
        harness.open()
        pending = harness.call("two_rounds")
        harness.waiting(1)
        harness.answer(1, NAME_ANSWER)
        if completes:
            harness.waiting(1)
            harness.answer(2, {"action": "accept", "content": {"colour": "red"}})
            assert final_text(done(pending)) == "True red"
        else:
            error = final(done(pending))["error"]
            assert error == {"code": -32603, "message": "Internal error"}
    finally:
        harness.close()


@pytest.mark.parametrize(("limit", "kept"), [(42, True), (41, False)])
def test_the_state_kept_between_rounds_holds_at_its_limit_and_fails_past_it(
    limit: int, kept: bool
) -> None:
    """``big_state`` keeps a 40-character string: 42 bytes encoded."""
    harness = Harness(Limits(max_request_state_bytes=limit))
    try:
        harness.open()
        pending = harness.call("big_state")
        if kept:
            harness.waiting(1)  # asked: the state was kept
            harness.answer(1, {"roots": []})
            harness.waiting(1)  # it asks again, forever: stop here
            cancel = handshake_request("notifications/cancelled", {"requestId": 7}, id=None)
            harness.client.post("/mcp", cancel, headers=harness.headers())
            done(pending)
        else:
            error = final(done(pending))["error"]
            assert error == {"code": -32603, "message": "Internal error"}
    finally:
        harness.close()


def test_no_handler_slot_is_held_while_the_client_answers() -> None:
    harness = Harness(Limits(handler_slots=1, max_queued_requests=0))
    try:
        harness.open()
        pending = harness.call("greet")
        harness.waiting(1)
        assert final_text(done(harness.call("plain", id=8))) == "plain"
        harness.answer(1, NAME_ANSWER)
        assert final_text(done(pending)) == "Hello, Ada!"
    finally:
        harness.close()


# --- the call ends while it waits ---------------------------------------------------------------


def test_a_cancel_while_waiting_ends_the_call_without_an_answer(harness: Harness) -> None:
    harness.open()
    pending = harness.call("greet")
    harness.waiting(1)
    cancel = handshake_request(
        "notifications/cancelled", {"requestId": 7, "reason": "user"}, id=None
    )
    assert harness.client.post("/mcp", cancel, headers=harness.headers()).status == 202
    response = done(pending)
    assert [m.get("method") for m in messages(response)] == ["elicitation/create"]
    harness.waiting(0)


def test_ending_the_session_while_waiting_ends_the_call(harness: Harness) -> None:
    harness.open()
    session = asyncio.run(harness.store.get(harness.session_id))
    pending = harness.call("greet")
    harness.waiting(1)
    ended = harness.client.post("/mcp", b"", method="DELETE", headers=harness.headers())
    assert ended.status in (200, 204)
    response = done(pending)
    assert all("result" not in m for m in messages(response))
    assert session is not None and len(session._exchange or ()) == 0


def test_a_client_that_leaves_while_asked_resumes_and_answers(harness: Harness) -> None:
    """Leaving is not cancelling: the call still waits for the answer, and the client that
    resumes the stream (``Last-Event-ID``) sees the request again and then the result."""
    harness.open()
    message = handshake_request("tools/call", {"name": "greet", "arguments": {}}, id=7)
    partial = harness.client.post_disconnecting(
        "/mcp", message, after=0.3, headers=harness.headers()
    )
    assert partial is not None
    assert [m["method"] for m in messages(partial)] == ["elicitation/create"]
    harness.waiting(1)
    stream = partial.body.split(b"\n", 1)[0].removeprefix(b"id: ").split(b"-")[0].decode()
    resumed = harness.client.submit(
        "/mcp",
        b"",
        method="GET",
        headers=harness.headers(**{"accept": "text/event-stream", "last-event-id": f"{stream}-0"}),
    )
    harness.answer(1, NAME_ANSWER)
    response = done(resumed)
    assert [m.get("method") for m in messages(response)] == ["elicitation/create", None]
    assert final_text(response) == "Hello, Ada!"


# --- an interceptor -----------------------------------------------------------------------------


def test_an_interceptor_wraps_every_round() -> None:
    rounds: list[str] = []

    async def interceptor(ctx: RequestContext, proceed: Any) -> object:
        rounds.append("with answers" if ctx.input_responses else "first")
        return await proceed()

    harness = Harness(interceptor=interceptor)
    try:
        harness.open()
        pending = harness.call("greet")
        harness.waiting(1)
        harness.answer(1, NAME_ANSWER)
        assert final_text(done(pending)) == "Hello, Ada!"
        assert rounds == ["first", "with answers"]
    finally:
        harness.close()


# --- stdio ------------------------------------------------------------------------------------


class Stdio:
    """A stdio connection to ``Asking`` driven line by line, and everything it wrote."""

    def __init__(self) -> None:
        self.connection = Server([Asking], keyring=KEYRING).stdio_connection("/mcp")
        self.written: list[bytes] = []

    async def write(self, message: bytes) -> None:
        self.written.append(message)

    async def send(self, message: Mapping[str, object]) -> None:
        await self.connection.receive(json.dumps(message).encode(), self.write)

    def start(self, message: Mapping[str, object]) -> asyncio.Task[None]:
        return asyncio.create_task(self.send(message))

    async def initialize(self, capabilities: Mapping[str, object]) -> None:
        init = {"protocolVersion": NOVEMBER.wire, "capabilities": dict(capabilities)}
        await self.send(handshake_request("initialize", init))
        self.written.clear()

    async def written_at_least(self, count: int) -> None:
        while len(self.written) < count:
            await asyncio.sleep(0.005)

    def last(self) -> Any:
        return json.loads(self.written[-1])


def test_stdio_asks_on_stdout_and_reads_the_answer_from_stdin() -> None:
    stdio = Stdio()

    async def scenario() -> None:
        await stdio.initialize({"elicitation": {}})
        task = stdio.start(
            handshake_request("tools/call", {"name": "greet", "arguments": {}}, id=5)
        )
        await stdio.written_at_least(1)
        asked = json.loads(stdio.written[0])
        assert asked["method"] == "elicitation/create" and asked["id"] == 1
        await stdio.send({"jsonrpc": "2.0", "id": 1, "result": NAME_ANSWER})
        await asyncio.wait_for(task, WAIT)
        assert stdio.last()["id"] == 5
        assert stdio.last()["result"]["content"][0]["text"] == "Hello, Ada!"

    asyncio.run(asyncio.wait_for(scenario(), 2 * WAIT))


def test_stdio_answers_arrive_even_when_the_connection_is_full() -> None:
    """A client's answer is taken even on a line refused for the transport's bound."""
    stdio = Stdio()

    async def scenario() -> None:
        await stdio.initialize({"roots": {}})
        task = stdio.start(handshake_request("resources/read", {"uri": "test://roots"}, id=5))
        await stdio.written_at_least(1)
        answer = {"jsonrpc": "2.0", "id": 1, "result": {"roots": []}}
        await stdio.connection.refuse_overloaded(json.dumps(answer).encode(), stdio.write)
        await asyncio.wait_for(task, WAIT)
        assert stdio.last()["result"]["contents"][0]["text"] == ""

    asyncio.run(asyncio.wait_for(scenario(), 2 * WAIT))


def test_stdio_shutdown_fails_the_waits() -> None:
    stdio = Stdio()

    async def scenario() -> None:
        await stdio.initialize({"roots": {}})
        task = stdio.start(handshake_request("resources/read", {"uri": "test://roots"}, id=5))
        await stdio.written_at_least(1)
        assert await stdio.connection.shutdown(stdio.write) == 1
        await asyncio.wait_for(task, WAIT)
        assert stdio.last()["error"]["code"] == -32603

    asyncio.run(asyncio.wait_for(scenario(), 2 * WAIT))


# --- a server that stops -------------------------------------------------------------------


def test_a_drain_stops_the_calls_waiting_for_their_client_with_the_overload_error(
    harness: Harness,
) -> None:
    """A call waiting for its client's answer holds no slot, but it is a call the drain
    waits for: when the drain starts it ends with the overload error in its stream (its next
    round would be refused anyway), and a new call's wait is refused the same way."""
    harness.open()
    pending = harness.call("greet")
    harness.waiting(1)
    engine = harness.client_server.engine
    loop = harness.client._running_loop()
    drained = asyncio.run_coroutine_threadsafe(engine.drain(WAIT), loop)
    error = final(done(pending))["error"]
    assert error == {"code": -32603, "message": "Server overloaded; retry later"}
    assert drained.result(WAIT) == 0  # nothing was left to cut off
    harness.waiting(0)
