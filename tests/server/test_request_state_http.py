"""Request state through the whole HTTP pipeline: the application-protected echo and its size
limit, and framework-protected state --
sealed on emission, opened after admission, bound to the endpoint, method, parameters, client
``_meta`` and authorization partition, tied to a lifetime, a round cap and the emitting request's
id -- where every invalid state is the one indistinguishable 400 / -32602, and a protector that
is unavailable is 503 / -32603.  Checklist: HC-08, JL-10, gap B2.

The engine is built with an injected clock so expiry and rounds are exact.  Every JSON-RPC
message received is checked against the official 2026-07-28 schema.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any, Final

import pytest

from mcpkit import (
    DEFAULT_LIMITS,
    UNSET,
    CompleteResult,
    EndpointRegistry,
    InputRequestDeclaration,
    InputRequiredResult,
    Limits,
    PromptMessage,
    PromptOutput,
    ProtectorUnavailable,
    RequestContext,
    RequestStateMode,
    Requirement,
    ResourceOutput,
    Revision,
    Role,
    TextContent,
    TextResourceContents,
    endpoint,
    prompt,
    resource,
    tool,
)
from mcpkit.json import encode, from_python
from mcpkit.server import (
    AdmissionController,
    AdmissionRequest,
    Admitted,
    Engine,
    EngineSettings,
    Keyring,
    ProtectionKey,
    Rejected,
    build_engine,
)
from mcpkit.server._protection import WIRE_PREFIX, Opened, RequestStateProtector
from mcpkit.server._state_codec import binding
from mcpkit.testing import TestClient, TestResponse, stateless_headers, stateless_request
from mcpkit.transports import McpApp

from ..wire import assert_valid

MODERN = "2026-07-28"
PATH = "/state"
ELSEWHERE = "/elsewhere"
SERVER_INFO = {"name": "state", "version": "1.0.0"}
META = {"io.modelcontextprotocol/serverInfo": SERVER_INFO}
SECOND: Final = 1_000_000_000
T0: Final = 1_700_000_000 * SECOND
LIFETIME: Final = 900 * SECOND
MATERIAL = bytes(range(32))

FORM = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Confirm?",
        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
    },
}
CAPABILITIES: Mapping[str, object] = {"elicitation": {}}
ACCEPT = {"confirm": {"action": "accept", "content": {"ok": True}}}
DECLINE = {"confirm": {"action": "decline"}}  # the handler asks again: the next round
CANCEL = {"confirm": {"action": "cancel"}}  # the handler outlives the state, then asks again
ARGUMENTS: Mapping[str, object] = {"item": "book", "qty": 2}
APPLICATION_STATE = 'handle:ünï ✓ "quoted" \\ \u2028 😀 end'
INVALID_BODY = b'{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params"}}'
UNAVAILABLE_BODY = b'{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error"}}'

CLOCK = [T0]
seen: list[tuple[str, RequestContext]] = []


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    CLOCK[0] = T0
    seen.clear()
    yield
    seen.clear()


def _continue(name: str, ctx: RequestContext, first: object) -> InputRequiredResult | str:
    """The framework-protected exchange: seal ``first``; on a retry, complete on ``accept``,
    ask again with the next step on ``decline``, and outlive the state on ``cancel``."""
    seen.append((name, ctx))
    state = ctx.framework_state
    if state is UNSET:
        return InputRequiredResult(input_requests={"confirm": FORM}, framework_state=first)
    answer = ctx.elicitation("confirm")
    if answer is not None and answer.action != "accept":
        if answer.action == "cancel":
            CLOCK[0] += 2 * LIFETIME
        following: dict[str, object] = {"step": 0}
        if isinstance(state, Mapping):
            step = state["step"]
            assert isinstance(step, int)
            following = {**state, "step": step + 1}
        return InputRequiredResult(input_requests={"confirm": FORM}, framework_state=following)
    return encode(from_python(state)).decode("utf-8")


VALUES: Mapping[str, object] = {
    "null": None,
    "numbers": {"hundred": 100, "fraction": Decimal("1.50"), "zero": Decimal("0.0")},
    "text": "ünï\u0000\u2028",
}


def state_endpoint(path: str) -> type[Any]:
    mode = RequestStateMode.FRAMEWORK_PROTECTED
    form = [InputRequestDeclaration.elicitation_form()]

    @endpoint(path=path, name="state", version="1.0.0", revisions={Revision.V2026_07_28})
    class State:
        @tool(name="sealed", input_requests=form, request_state_mode=mode)
        def sealed(
            self, ctx: RequestContext, item: str, qty: int | None = None, pad: int | None = None
        ) -> CompleteResult | InputRequiredResult:
            first = {"item": item, "step": 1, "pad": "x" * (pad or 0)}
            if pad is None:
                del first["pad"]
            outcome = _continue("sealed", ctx, first)
            if isinstance(outcome, str):
                return CompleteResult.from_tool_text(outcome)
            return outcome

        @tool(name="sealed_twin", input_requests=form, request_state_mode=mode)
        def sealed_twin(
            self, ctx: RequestContext, item: str, qty: int | None = None
        ) -> CompleteResult | InputRequiredResult:
            outcome = _continue("sealed_twin", ctx, {"item": item, "step": 1})
            if isinstance(outcome, str):
                return CompleteResult.from_tool_text(outcome)
            return outcome

        @tool(
            name="sealed_required",
            input_requests=[InputRequestDeclaration.elicitation_form(Requirement.REQUIRED)],
            request_state_mode=mode,
        )
        def sealed_required(
            self, ctx: RequestContext, item: str
        ) -> CompleteResult | InputRequiredResult:
            outcome = _continue("sealed_required", ctx, {"item": item, "step": 1})
            if isinstance(outcome, str):
                return CompleteResult.from_tool_text(outcome)
            return outcome

        @tool(name="values", input_requests=form, request_state_mode=mode)
        def values(self, ctx: RequestContext, value: str) -> CompleteResult | InputRequiredResult:
            outcome = _continue("values", ctx, VALUES[value])
            if isinstance(outcome, str):
                return CompleteResult.from_tool_text(outcome)
            return outcome

        @prompt(name="sealed", input_requests=form, request_state_mode=mode)
        def sealed_prompt(
            self, ctx: RequestContext, item: str
        ) -> PromptOutput | InputRequiredResult:
            outcome = _continue("sealed_prompt", ctx, {"item": item, "step": 1})
            if isinstance(outcome, str):
                message = PromptMessage(role=Role.USER, content=TextContent(text=outcome))
                return PromptOutput(messages=(message,))
            return outcome

        @resource(
            uri="test://items/{sku}", name="item", input_requests=form, request_state_mode=mode
        )
        def item(self, ctx: RequestContext, sku: str) -> ResourceOutput | InputRequiredResult:
            outcome = _continue("item", ctx, {"sku": sku, "step": 1})
            if isinstance(outcome, str):
                contents = TextResourceContents(uri=f"test://items/{sku}", text=outcome)
                return ResourceOutput(contents=(contents,))
            return outcome

        @tool(
            name="opaque",
            input_requests=form,
            request_state_mode=RequestStateMode.APPLICATION_PROTECTED,
        )
        def opaque(
            self, ctx: RequestContext, emit: str | None = None
        ) -> CompleteResult | InputRequiredResult:
            seen.append(("opaque", ctx))
            if ctx.request_state is None:
                return InputRequiredResult(
                    input_requests={"confirm": FORM}, request_state=emit or APPLICATION_STATE
                )
            return CompleteResult.from_tool_text(f"state: {ctx.request_state}")

        @tool(name="opaque_only", request_state_mode=RequestStateMode.APPLICATION_PROTECTED)
        def opaque_only(self, ctx: RequestContext) -> CompleteResult | InputRequiredResult:
            seen.append(("opaque_only", ctx))
            if ctx.request_state is None:
                return InputRequiredResult(request_state="come back later")
            return CompleteResult.from_tool_text(f"state: {ctx.request_state}")

    return State


STATE = state_endpoint(PATH)
OTHER = state_endpoint(ELSEWHERE)


def engine(
    *,
    keyring: Keyring | None = None,
    limits: Limits = DEFAULT_LIMITS,
    admission: AdmissionController | None = None,
    clock: Callable[[], int] | None = None,
) -> Engine:
    """The two state endpoints, with an injected clock (``CLOCK`` by default)."""
    settings = EngineSettings(
        keyring=Keyring(ProtectionKey("k1", MATERIAL)) if keyring is None else keyring,
        limits=limits,
        admission=admission,
        clock_ns=(lambda: CLOCK[0]) if clock is None else clock,
    )
    return build_engine(EndpointRegistry.from_classes(STATE, OTHER), settings)


def app(
    *,
    keyring: Keyring | None = None,
    limits: Limits = DEFAULT_LIMITS,
    admission: AdmissionController | None = None,
    clock: Callable[[], int] | None = None,
) -> McpApp:
    return McpApp(engine(keyring=keyring, limits=limits, admission=admission, clock=clock))


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(app()) as test_client:
        yield test_client


# --- requests ------------------------------------------------------------------------------------


def params_of(
    name: str = "sealed",
    arguments: Mapping[str, object] = ARGUMENTS,
    *,
    state: object = UNSET,
    responses: object = UNSET,
    meta: Mapping[str, object] | None = None,
    capabilities: Mapping[str, object] = CAPABILITIES,
    key: str = "name",
    **extra: object,
) -> dict[str, object]:
    """The ``params`` a client sends, ``_meta`` included."""
    params: dict[str, object] = {key: name, **extra}
    if key == "name":
        params["arguments"] = dict(arguments)
    if state is not UNSET:
        params["requestState"] = state
    if responses is not UNSET:
        params["inputResponses"] = responses
    if meta is not None:
        params["_meta"] = dict(meta)
    built = stateless_request("tools/call", params, capabilities=capabilities)["params"]
    assert isinstance(built, dict)
    return built


def send(
    client: TestClient,
    params: Mapping[str, object],
    *,
    method: str = "tools/call",
    id: str | int = 1,
    path: str = PATH,
    headers: Mapping[str, str] | None = None,
) -> TestResponse:
    target = params.get("name", params.get("uri"))
    assert isinstance(target, str)
    message = {"jsonrpc": "2.0", "id": id, "method": method, "params": dict(params)}
    response = client.post(
        path, message, headers={**stateless_headers(method, target), **(headers or {})}
    )
    assert_valid(MODERN, method, response.messages)
    return response


def body(response: TestResponse) -> Any:
    return json.loads(response.body)


def state_of(response: TestResponse) -> str:
    assert response.status == 200, response.body
    value = body(response)["result"]["requestState"]
    assert isinstance(value, str) and value.startswith(WIRE_PREFIX)
    return value


def first_round(client: TestClient, id: str | int = 1, **changes: Any) -> str:
    """Round 1 of the exchange; the sealed ``requestState``."""
    return state_of(send(client, params_of(**changes), id=id))


def done(text: str, id: str | int = 2) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": id,
        "result": {
            "content": [{"type": "text", "text": text}],
            "resultType": "complete",
            "_meta": META,
        },
    }


def invalid(id: str | int = 2) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "Invalid params"}}


def internal(id: str | int = 2) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": "Internal error"}}


COMPLETED = '{"item":"book","step":1}'


def opened(
    state: str,
    params: Mapping[str, object],
    *,
    method: str = "tools/call",
    path: str = PATH,
    authorization: str | None = None,
) -> Opened:
    """What the state holds, opened outside the server with the same key."""
    protector = RequestStateProtector(Keyring(ProtectionKey("k1", MATERIAL)), clock_ns=lambda: T0)
    bound = binding(
        endpoint_path=path,
        protocol_version=MODERN,
        method=method,
        authorization=authorization,
        params=from_python(params),  # type: ignore[arg-type]
    )
    return protector.open(state, binding=bound, request_id="outside")


# --- framework-protected round trips ----------------------------------------------------------


def test_round_one_is_sealed_and_round_two_hands_the_state_to_the_handler(
    client: TestClient,
) -> None:
    first = send(client, params_of())
    state = state_of(first)
    assert body(first) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "resultType": "input_required",
            "inputRequests": {"confirm": FORM},
            "requestState": state,
            "_meta": META,
        },
    }
    assert b"book" not in _decoded(state)  # sealed, not merely encoded
    second = send(client, params_of(state=state, responses=ACCEPT), id=2)
    assert (second.status, body(second)) == (200, done(COMPLETED))
    assert [ctx.framework_state for _, ctx in seen] == [UNSET, {"item": "book", "step": 1}]
    assert [(ctx.request_state, ctx.input_responses) for _, ctx in seen] == [
        (None, None),
        (None, ACCEPT),
    ]


def test_the_sealed_plaintext_records_round_issue_and_expiry(client: TestClient) -> None:
    params = params_of()
    state = state_of(send(client, params))
    assert opened(state, params) == Opened(
        state=from_python({"item": "book", "step": 1}),
        round=1,
        issued_at_ns=T0,
        expires_at_ns=T0 + LIFETIME,
    )


def test_re_emission_increments_the_round_and_keeps_issue_and_expiry(client: TestClient) -> None:
    params = params_of()
    state = state_of(send(client, params))
    CLOCK[0] = T0 + 300 * SECOND
    again = send(client, params_of(state=state, responses=DECLINE), id=2)
    second = state_of(again)
    assert opened(second, params) == Opened(
        state=from_python({"item": "book", "step": 2}),
        round=2,
        issued_at_ns=T0,
        expires_at_ns=T0 + LIFETIME,
    )
    CLOCK[0] = T0 + LIFETIME - 1  # the kept expiry, not 300 s later
    third = send(client, params_of(state=second, responses=ACCEPT), id=3)
    assert (third.status, body(third)) == (200, done('{"item":"book","step":2}', id=3))
    CLOCK[0] = T0 + LIFETIME
    late = send(client, params_of(state=second, responses=ACCEPT), id=4)
    assert (late.status, body(late)) == (400, invalid(id=4))


def test_a_prompt_and_a_template_read_round_trip(client: TestClient) -> None:
    prompt_params = params_of("sealed", {"item": "pen"})
    first = send(client, prompt_params, method="prompts/get")
    state = state_of(first)
    retry = params_of("sealed", {"item": "pen"}, state=state, responses=ACCEPT)
    second = send(client, retry, method="prompts/get", id=2)
    assert body(second) == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {
            "messages": [
                {"role": "user", "content": {"type": "text", "text": '{"item":"pen","step":1}'}}
            ],
            "resultType": "complete",
            "_meta": META,
        },
    }
    read = params_of("test://items/a1", key="uri")
    state = state_of(send(client, read, method="resources/read"))
    retry = params_of("test://items/a1", key="uri", state=state, responses=ACCEPT)
    second = send(client, retry, method="resources/read", id=2)
    assert body(second) == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {
            "contents": [{"uri": "test://items/a1", "text": '{"sku":"a1","step":1}'}],
            "resultType": "complete",
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": META,
        },
    }
    other = params_of("test://items/a2", key="uri", state=state, responses=ACCEPT)
    refused = send(client, other, method="resources/read", id=2)
    assert (refused.status, refused.body) == (400, INVALID_BODY)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("null", "null"),
        ("numbers", '{"fraction":1.5,"hundred":1E+2,"zero":0}'),
        ("text", '"ünï\\u0000\u2028"'),
    ],
)
def test_any_json_value_comes_back_canonical(client: TestClient, value: str, text: str) -> None:
    """JSON null is a state (not UNSET); numbers come back equal in value, respelled."""
    state = state_of(send(client, params_of("values", {"value": value})))
    second = send(
        client, params_of("values", {"value": value}, state=state, responses=ACCEPT), id=2
    )
    assert (second.status, body(second)) == (200, done(text))
    assert seen[-1][1].framework_state == from_python(VALUES[value])


def test_a_retry_without_state_starts_over(client: TestClient) -> None:
    first_round(client)
    second = send(client, params_of(responses=ACCEPT), id=2)
    assert second.status == 200 and body(second)["result"]["resultType"] == "input_required"
    assert [ctx.framework_state for _, ctx in seen] == [UNSET, UNSET]


def test_state_too_large_to_seal_is_the_fixed_internal_error(client: TestClient) -> None:
    """The handler's fault: 500, nothing about the cause."""
    fits = send(client, params_of(arguments={"item": "book", "pad": 30_000}))
    assert fits.status == 200
    response = send(client, params_of(arguments={"item": "book", "pad": 49_152}), id=2)
    assert (response.status, body(response)) == (500, internal())


# --- round cap, expiry, lifetime ----------------------------------------------------------------


def test_the_round_cap_counts_emitted_continuations() -> None:
    """Max 2 rounds: round 2 can still complete but cannot emit a third."""
    with TestClient(app(limits=Limits(max_request_state_rounds=2))) as client:
        one = first_round(client)
        two = state_of(send(client, params_of(state=one, responses=DECLINE), id=2))
        refused = send(client, params_of(state=two, responses=DECLINE), id=3)
        assert (refused.status, body(refused)) == (500, internal(id=3))
        completed = send(client, params_of(state=two, responses=ACCEPT), id=4)
        assert (completed.status, body(completed)) == (200, done('{"item":"book","step":2}', 4))
    assert [name for name, _ in seen] == ["sealed"] * 4  # the refused round's handler ran


def test_a_state_past_the_current_round_cap_is_refused() -> None:
    keyring = Keyring(ProtectionKey("k1", MATERIAL))
    with TestClient(app(keyring=keyring)) as generous:
        state = first_round(generous)
        for id in (2, 3):
            state = state_of(send(generous, params_of(state=state, responses=DECLINE), id=id))
    assert opened(state, params_of()).round == 3
    with TestClient(app(keyring=keyring, limits=Limits(max_request_state_rounds=2))) as strict:
        response = send(strict, params_of(state=state, responses=ACCEPT), id=2)
        assert (response.status, response.body) == (400, INVALID_BODY)
    with TestClient(app(keyring=keyring, limits=Limits(max_request_state_rounds=3))) as exact:
        response = send(exact, params_of(state=state, responses=ACCEPT), id=2)
        assert (response.status, body(response)) == (200, done('{"item":"book","step":3}'))


@pytest.mark.parametrize(
    ("elapsed", "valid"),
    [(0, True), (LIFETIME - 1, True), (LIFETIME, False), (LIFETIME + 1, False), (-LIFETIME, True)],
)
def test_expiry_follows_the_injected_clock(client: TestClient, elapsed: int, valid: bool) -> None:
    """``now < expires``; a future issue time (clock skew) is tolerated."""
    state = first_round(client)
    CLOCK[0] = T0 + elapsed
    response = send(client, params_of(state=state, responses=ACCEPT), id=2)
    if valid:
        assert (response.status, body(response)) == (200, done(COMPLETED))
    else:
        assert (response.status, response.body) == (400, INVALID_BODY)


def test_a_state_that_expires_while_the_handler_runs_cannot_be_re_emitted(
    client: TestClient,
) -> None:
    state = first_round(client)
    response = send(client, params_of(state=state, responses=CANCEL), id=2)
    assert (response.status, body(response)) == (500, internal())


def test_the_lifetime_must_be_within_the_current_maximum() -> None:
    """A state sealed for 15 minutes is refused by a server now configured for 1 minute, even
    before it expires; a state sealed for 1 minute opens under 15."""
    keyring = Keyring(ProtectionKey("k1", MATERIAL))
    short = Limits(request_state_lifetime_seconds=60.0)
    with (
        TestClient(app(keyring=keyring)) as long_lived,
        TestClient(app(keyring=keyring, limits=short)) as short_lived,
    ):
        state = first_round(long_lived)
        CLOCK[0] = T0 + SECOND
        response = send(short_lived, params_of(state=state, responses=ACCEPT), id=2)
        assert (response.status, response.body) == (400, INVALID_BODY)
        response = send(long_lived, params_of(state=state, responses=ACCEPT), id=2)
        assert (response.status, body(response)) == (200, done(COMPLETED))
        brief = first_round(short_lived, id=3)
        assert opened(brief, params_of()).expires_at_ns == T0 + SECOND + 60 * SECOND
        response = send(long_lived, params_of(state=brief, responses=ACCEPT), id=2)
        assert (response.status, body(response)) == (200, done(COMPLETED))
        response = send(short_lived, params_of(state=brief, responses=ACCEPT), id=2)
        assert (response.status, body(response)) == (200, done(COMPLETED))


def test_a_state_issued_by_a_server_whose_clock_runs_ahead_still_opens() -> None:
    keyring = Keyring(ProtectionKey("k1", MATERIAL))
    ahead = app(keyring=keyring, clock=lambda: T0 + 120 * SECOND)
    with TestClient(ahead) as fast, TestClient(app(keyring=keyring)) as slow:
        state = first_round(fast)
        response = send(slow, params_of(state=state, responses=ACCEPT), id=2)
        assert (response.status, body(response)) == (200, done(COMPLETED))


# --- tampering: one indistinguishable refusal ---------------------------


def _decoded(state: str) -> bytes:
    suffix = state[len(WIRE_PREFIX) :]
    return base64.urlsafe_b64decode(suffix + "=" * (-len(suffix) % 4))


def _wire(raw: bytes) -> str:
    return WIRE_PREFIX + base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _flipped(raw: bytes, index: int) -> str:
    changed = bytearray(raw)
    changed[index] ^= 0x01
    return _wire(bytes(changed))


# Byte offsets of each envelope region for the two-character key id "k1": version, id length,
# id, profile length, profile, activation prefix, epoch, nonce, then ciphertext and tag.
REGIONS: Mapping[str, tuple[int, int]] = {
    "version": (0, 1),
    "id length": (1, 2),
    "key id": (2, 4),
    "profile length": (4, 5),
    "profile": (5, 29),
    "activation prefix": (29, 53),
    "epoch": (53, 61),
    "nonce": (61, 73),
}
_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def tampered(state: str, foreign: Mapping[str, str]) -> dict[str, str]:
    raw = _decoded(state)
    assert raw[2:4] == b"k1" and len(raw) > 73 + 16
    variants: dict[str, str] = {}
    for region, (start, end) in {
        **REGIONS,
        "ciphertext": (73, len(raw) - 16),
        "tag": (len(raw) - 16, len(raw)),
    }.items():
        for index in sorted({start, (start + end) // 2, end - 1}):
            variants[f"{region} byte {index}"] = _flipped(raw, index)
    for index in range(len(WIRE_PREFIX), len(state), 5):
        replacement = _ALPHABET[(_ALPHABET.index(state[index]) + 1) % 64]
        variants[f"character {index}"] = state[:index] + replacement + state[index + 1 :]
    last = state[-1]
    variants["non-canonical final character"] = state[:-1] + _ALPHABET[_ALPHABET.index(last) ^ 1]
    variants.update(
        {
            "truncated by one": state[:-1],
            "truncated by four": state[:-4],
            "truncated to half": state[: len(state) // 2],
            "prefix only": WIRE_PREFIX,
            "prefix and one character": WIRE_PREFIX + "A",
            "appended -TAMPERED": state + "-TAMPERED",
            "appended A": state + "A",
            "appended ==": state + "==",
            "wrong prefix": "soklet-mcp-request-state-v2." + state[len(WIRE_PREFIX) :],
            "prefix in capitals": WIRE_PREFIX.upper() + state[len(WIRE_PREFIX) :],
            "no prefix": state[len(WIRE_PREFIX) :],
            "leading space": " " + state,
            "trailing newline": state + "\n",
            "standard base64": state.replace("-", "+").replace("_", "/"),
            "over the size limit": WIRE_PREFIX + "A" * 65_536,
            "empty": "",
            "not a state": "opaque",
            "header only": _wire(raw[:73]),
            "no ciphertext": _wire(raw[:73] + raw[-16:]),
            "swapped halves of the tag": _wire(raw[:-16] + raw[-8:] + raw[-16:-8]),
        }
    )
    variants.update(foreign)
    assert all(variant != state for variant in variants.values())
    return variants


def test_every_tampered_state_gets_the_same_refusal(client: TestClient) -> None:
    """Flipped bytes in every region, substituted characters, truncation, extension, wrong
    prefixes, another key id, the same id with other key bytes: one response, byte for byte,
    and the handler never runs."""
    state = first_round(client)
    foreign = {}
    for label, key in (
        ("another key id", ProtectionKey("k2", bytes(range(100, 132)))),
        ("the same id with other bytes", ProtectionKey("k1", bytes(range(1, 33)))),
    ):
        with TestClient(app(keyring=Keyring(key))) as other:
            foreign[label] = first_round(other)
    seen.clear()
    answers = {}
    for label, variant in tampered(state, foreign).items():
        response = send(client, params_of(state=variant, responses=ACCEPT), id=2)
        answers[label] = (response.status, response.headers, response.body)
    assert len(answers) > 100
    refusal = (
        400,
        (
            ("content-type", "application/json"),
            ("cache-control", "no-store"),
            ("content-length", str(len(INVALID_BODY))),
        ),
        INVALID_BODY,
    )
    assert {label for label, answer in answers.items() if answer != refusal} == set()
    assert seen == []
    response = send(client, params_of(state=state, responses=ACCEPT), id=2)  # the original
    assert (response.status, body(response)) == (200, done(COMPLETED))


@pytest.mark.parametrize("value", [7, None, True, [], {}, ""])
def test_a_framework_state_that_is_not_a_non_empty_string_is_invalid(
    client: TestClient, value: object
) -> None:
    response = send(client, params_of(state=value, responses=ACCEPT), id=2)
    assert (response.status, response.body) == (400, INVALID_BODY)
    assert seen == []


def test_a_removed_key_no_longer_opens_its_state() -> None:
    keyring = Keyring(ProtectionKey("k1", MATERIAL))
    with TestClient(app(keyring=keyring)) as client:
        state = first_round(client)
        keyring.rotate(ProtectionKey("k2", bytes(range(50, 82))))
        response = send(client, params_of(state=state, responses=ACCEPT), id=2)
        assert (response.status, body(response)) == (200, done(COMPLETED))
        assert keyring.remove("k1") is True
        response = send(client, params_of(state=state, responses=ACCEPT), id=2)
        assert (response.status, response.body) == (400, INVALID_BODY)


# --- binding --------------------------------------------------------------------------------


TRACE = {
    "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    "tracestate": "vendor=value",
    "baggage": "user=ada",
}


@pytest.mark.parametrize(
    ("changes", "valid"),
    [
        ({"arguments": {"item": "pen", "qty": 2}}, False),
        ({"arguments": {"item": "book"}}, False),
        ({"arguments": {"item": "book", "qty": 3}}, False),
        ({"arguments": {"item": "book", "qty": 2, "pad": 0}}, False),
        ({"name": "sealed_twin"}, False),
        ({"meta": {"io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"}}}, False),
        ({"capabilities": {"elicitation": {}, "roots": {}}}, False),
        ({"capabilities": {"elicitation": {"form": {}}}}, False),
        ({"meta": {"example.com/tenant": "a"}}, False),
        ({"meta": {"io.modelcontextprotocol/logLevel": "debug"}}, False),
        ({"extra": 1}, False),
        ({"arguments": {"qty": 2, "item": "book"}}, True),
        ({"arguments": {"item": "book", "qty": Decimal("2.0")}}, True),
        ({"meta": {"progressToken": "p"}}, True),
        ({"meta": {"progressToken": 5}}, True),
        ({"meta": TRACE}, True),
        ({"meta": {"progressToken": "p", **TRACE}}, True),
        ({"responses": UNSET}, True),
        ({"responses": DECLINE}, True),
    ],
)
def test_the_state_is_bound_to_the_params_except_transient_members(
    client: TestClient, changes: Mapping[str, object], valid: bool
) -> None:
    state = first_round(client)
    retry: dict[str, Any] = {"responses": ACCEPT, **changes}
    response = send(client, params_of(state=state, **retry), id=2)
    if not valid:
        assert (response.status, response.body) == (400, INVALID_BODY)
        assert len(seen) == 1
    elif retry["responses"] is ACCEPT:
        assert (response.status, body(response)) == (200, done(COMPLETED))
    else:
        assert response.status == 200  # the handler asked again: the state opened
        assert seen[-1][1].framework_state == {"item": "book", "step": 1}


def test_transient_members_of_round_one_need_not_be_repeated(client: TestClient) -> None:
    state = first_round(client, meta={"progressToken": "p", **TRACE})
    response = send(client, params_of(state=state, responses=ACCEPT), id=2)
    assert (response.status, body(response)) == (200, done(COMPLETED))


def test_the_state_is_bound_to_the_endpoint_path(client: TestClient) -> None:
    state = first_round(client)
    response = send(client, params_of(state=state, responses=ACCEPT), id=2, path=ELSEWHERE)
    assert (response.status, response.body) == (400, INVALID_BODY)
    response = send(client, params_of(state=state, responses=ACCEPT), id=2)
    assert (response.status, body(response)) == (200, done(COMPLETED))


def test_the_state_is_bound_to_the_method(client: TestClient) -> None:
    """A tool and a prompt named alike with equal params: only the method differs."""
    arguments = {"item": "book"}
    state = first_round(client, arguments=arguments)
    retry = params_of(arguments=arguments, state=state, responses=ACCEPT)
    response = send(client, retry, method="prompts/get", id=2)
    assert (response.status, response.body) == (400, INVALID_BODY)
    response = send(client, retry, id=2)
    assert (response.status, body(response)) == (200, done(COMPLETED))


def by_user(request: AdmissionRequest) -> Admitted | Rejected:
    """Admission by the ``X-User`` header: its value is the authorization partition."""
    assert request.http_request is not None
    user = dict(request.http_request.headers).get("x-user")
    if user == "mallory":
        return Rejected(403)
    return Admitted(identity=f"identity of {user}", authorization=user)


@pytest.mark.parametrize(
    ("sealed_for", "opened_by", "valid"),
    [
        ("alice", "alice", True),
        ("alice", "bob", False),
        ("alice", None, False),
        (None, "alice", False),
        (None, None, True),
    ],
)
def test_the_state_is_bound_to_the_authorization_partition(
    sealed_for: str | None, opened_by: str | None, valid: bool
) -> None:
    def user(name: str | None) -> dict[str, str]:
        return {} if name is None else {"X-User": name}

    with TestClient(app(admission=by_user)) as client:
        state = state_of(send(client, params_of(), headers=user(sealed_for)))
        retry = params_of(state=state, responses=ACCEPT)
        response = send(client, retry, id=2, headers=user(opened_by))
        if valid:
            assert (response.status, body(response)) == (200, done(COMPLETED))
            assert seen[-1][1].identity == f"identity of {opened_by}"
        else:
            assert (response.status, response.body) == (400, INVALID_BODY)
    if sealed_for is not None:
        assert opened(state, params_of(), authorization=sealed_for).round == 1


# --- the emitting request's id ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("first_id", "retry_id", "valid"),
    [
        (7, 7, False),
        ("7", "7", False),
        ("a", "a", False),
        (7, "7", True),
        ("7", 7, True),
        (7, 8, True),
        (0, "0", True),
    ],
)
def test_the_retry_must_not_reuse_the_emitting_request_id(
    client: TestClient, first_id: str | int, retry_id: str | int, valid: bool
) -> None:
    state = first_round(client, id=first_id)
    response = send(client, params_of(state=state, responses=ACCEPT), id=retry_id)
    if valid:
        assert (response.status, body(response)) == (200, done(COMPLETED, id=retry_id))
    else:
        assert (response.status, body(response)) == (400, invalid(id=retry_id))


def test_the_emitting_id_is_the_latest_rounds(client: TestClient) -> None:
    one = first_round(client, id=1)
    two = state_of(send(client, params_of(state=one, responses=DECLINE), id=2))
    response = send(client, params_of(state=two, responses=ACCEPT), id=2)
    assert (response.status, response.body) == (400, INVALID_BODY)
    response = send(client, params_of(state=two, responses=ACCEPT), id=1)
    assert (response.status, body(response)) == (200, done('{"item":"book","step":2}', id=1))


# --- the order of the checks and the protector's failures ----------


def test_capabilities_are_checked_before_the_state_is_opened(client: TestClient) -> None:
    """No validity oracle before the capability check: a forged but well-formed state gets the
    -32021 an honest one would; a malformed one fails its shape check first."""
    arguments = {"item": "book"}
    with TestClient(app(keyring=Keyring(ProtectionKey("k1", bytes(range(9, 41)))))) as other:
        forged = state_of(send(other, params_of("sealed_required", arguments)))
    seen.clear()
    for state in (forged, forged[:-3] + "AAA"):
        retry = params_of("sealed_required", arguments, state=state, capabilities={})
        response = send(client, retry, id=2)
        assert response.status == 400
        assert body(response)["error"]["code"] == -32021
    retry = params_of("sealed_required", arguments, state="malformed", capabilities={})
    response = send(client, retry, id=2)
    assert (response.status, response.body) == (400, INVALID_BODY)
    assert seen == []


def test_the_state_is_opened_only_after_admission(monkeypatch: pytest.MonkeyPatch) -> None:
    opens: list[str] = []
    real_open = RequestStateProtector.open

    def recording_open(self: RequestStateProtector, value: str, **kwargs: Any) -> Opened:
        opens.append(value)
        return real_open(self, value, **kwargs)

    monkeypatch.setattr(RequestStateProtector, "open", recording_open)
    with TestClient(app(admission=by_user)) as client:
        state = state_of(send(client, params_of()))
        retry = params_of(state=state, responses=ACCEPT)
        response = send(client, retry, id=2, headers={"X-User": "mallory"})
        assert (response.status, response.body) == (403, b"")
        bad_responses = params_of(state=state, responses={"confirm": {"action": "maybe"}})
        response = send(client, bad_responses, id=2)
        assert (response.status, response.body) == (400, INVALID_BODY)
        assert opens == []
        response = send(client, retry, id=2)
        assert (response.status, body(response)) == (200, done(COMPLETED))
        assert opens == [state]


def unavailable(*args: object, **kwargs: object) -> Any:
    raise ProtectorUnavailable()


def test_a_protector_that_cannot_seal_is_503(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(RequestStateProtector, "seal", unavailable)
    response = send(client, params_of(), id=2)
    assert (response.status, response.body) == (503, UNAVAILABLE_BODY)
    assert len(seen) == 1  # the handler ran; its result could not be sealed


def test_a_protector_that_cannot_open_is_503(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = first_round(client)
    monkeypatch.setattr(RequestStateProtector, "open", unavailable)
    response = send(client, params_of(state=state, responses=ACCEPT), id=2)
    assert (response.status, response.body) == (503, UNAVAILABLE_BODY)
    assert len(seen) == 1  # only round 1: the retry never reached the handler


def test_framework_state_without_a_protector_is_a_contract_failure(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The server refuses to build without one; if it were missing anyway, nothing is sealed
    or opened: the fixed internal error."""
    served = engine()
    with TestClient(app()) as honest:
        state = first_round(honest)
    monkeypatch.setattr(served.operations, "protector", None)
    with TestClient(McpApp(served)) as client:
        response = send(client, params_of(), id=2)
        assert (response.status, body(response)) == (500, internal())
        response = send(client, params_of(state=state, responses=ACCEPT), id=2)
        assert (response.status, body(response)) == (500, internal())
    assert [record.getMessage() for record in caplog.records] == [
        "mcpkit: framework-protected state without a protector"
    ] * 2


# --- application-protected state ------------------------------------------


def opaque(client: TestClient, *, id: int = 1, **changes: Any) -> TestResponse:
    return send(client, params_of("opaque", {}, **changes), id=id)


def test_application_state_is_echoed_exactly(client: TestClient) -> None:
    first = opaque(client)
    assert (first.status, body(first)) == (
        200,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "resultType": "input_required",
                "inputRequests": {"confirm": FORM},
                "requestState": APPLICATION_STATE,
                "_meta": META,
            },
        },
    )
    second = opaque(client, id=2, state=APPLICATION_STATE, responses=ACCEPT)
    assert (second.status, body(second)) == (200, done(f"state: {APPLICATION_STATE}"))
    assert seen[-1][1].request_state == APPLICATION_STATE
    assert seen[-1][1].framework_state is UNSET


def test_application_state_is_neither_bound_nor_checked(client: TestClient) -> None:
    """No parsing, integrity, expiry, binding or round limit: the application's job."""
    first = send(client, params_of("opaque", {"emit": "handle-1"}))
    assert body(first)["result"]["requestState"] == "handle-1"
    CLOCK[0] = T0 + 10 * LIFETIME
    for id, state in ((1, "handle-1"), (2, "forged"), (3, WIRE_PREFIX + "A")):
        response = opaque(client, id=id, state=state)
        assert (response.status, body(response)) == (200, done(f"state: {state}", id=id))


def test_a_state_only_result_writes_no_input_requests(client: TestClient) -> None:
    first = send(client, params_of("opaque_only", {}))
    assert body(first) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "resultType": "input_required",
            "requestState": "come back later",
            "_meta": META,
        },
    }
    second = send(client, params_of("opaque_only", {}, state="come back later"), id=2)
    assert (second.status, body(second)) == (200, done("state: come back later"))


@pytest.mark.parametrize(
    ("state", "valid"),
    [
        ("a" * 12, True),
        ("é" * 6, True),
        ("😀" * 3, True),
        ("a" * 13, False),
        ("é" * 6 + "a", False),
        ("😀" * 3 + "a", False),
        ("a", True),
    ],
)
def test_a_retried_application_state_is_bounded_in_utf8_bytes(state: str, valid: bool) -> None:
    with TestClient(app(limits=Limits(max_request_state_bytes=12))) as client:
        response = opaque(client, id=2, state=state)
        if valid:
            assert (response.status, body(response)) == (200, done(f"state: {state}"))
        else:
            assert (response.status, response.body) == (400, INVALID_BODY)


@pytest.mark.parametrize("value", ["", 7, None, False, [], {"a": "b"}])
def test_an_application_state_that_is_not_a_non_empty_string_is_invalid(
    client: TestClient, value: object
) -> None:
    response = opaque(client, id=2, state=value)
    assert (response.status, response.body) == (400, INVALID_BODY)
    assert seen == []


def test_an_application_state_over_the_limit_is_not_emitted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The client could not send it back: a contract failure at emission, as an unsealable
    framework state is (the fixed -32603), not a refusal of the retry."""
    with TestClient(app(limits=Limits(max_request_state_bytes=12))) as client:
        response = send(client, params_of("opaque", {"emit": "é" * 6}))
        assert response.status == 200
        assert body(response)["result"]["requestState"] == "é" * 6
        response = send(client, params_of("opaque", {"emit": "é" * 6 + "a"}), id=2)
        assert (response.status, body(response)) == (500, internal())
    assert [record.getMessage() for record in caplog.records] == [
        "mcpkit: an application state over max_request_state_bytes"
    ]
