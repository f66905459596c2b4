"""What a handler receives besides its arguments (HC-01..15): the request context, the tool
arguments and the request-scoped invocation features.

All of it is plain, loop-free Python, so it is tested here without a server or an event loop.
"""

from __future__ import annotations

import contextlib
import dataclasses
import subprocess
import sys
import threading
from decimal import Decimal
from types import MappingProxyType
from typing import Any

import pytest

from mcpkit.errors import Cancelled, InvalidValueError, MCPKitError
from mcpkit.json import JsonArray, JsonObject, from_python
from mcpkit.model import (
    UNSET,
    ElicitationResponse,
    Icon,
    Implementation,
    Revision,
    Role,
    Root,
    RootsResponse,
)
from mcpkit.model._context import (
    CancellationToken,
    InvocationFeatures,
    OperationType,
    ProgressReporter,
    RequestContext,
    ToolArguments,
)

SECRET = "SECRET-7f3a"
V2026 = Revision.V2026_07_28


def context(**overrides: Any) -> RequestContext:
    values: dict[str, Any] = {"endpoint": object(), "revision": V2026, "method": "tools/call"}
    return RequestContext(**{**values, **overrides})


def refusal(build: Any) -> str:
    with pytest.raises(InvalidValueError) as caught:
        build()
    assert SECRET not in str(caught.value)
    return str(caught.value)


# --- OperationType (HC-12) -----------------------------------------------------------------------

METHODS = {
    "initialize": OperationType.INITIALIZE,
    "server/discover": OperationType.DISCOVER,
    "ping": OperationType.PING,
    "tools/list": OperationType.TOOLS_LIST,
    "tools/call": OperationType.TOOLS_CALL,
    "prompts/list": OperationType.PROMPTS_LIST,
    "prompts/get": OperationType.PROMPTS_GET,
    "resources/list": OperationType.RESOURCES_LIST,
    "resources/templates/list": OperationType.RESOURCE_TEMPLATES_LIST,
    "resources/read": OperationType.RESOURCES_READ,
    "completion/complete": OperationType.COMPLETION_COMPLETE,
    "logging/setLevel": OperationType.LOGGING_SET_LEVEL,
    "subscriptions/listen": OperationType.SUBSCRIPTIONS_LISTEN,
}


@pytest.mark.parametrize(("method", "kind"), METHODS.items())
def test_recognised_methods_are_classified_HC_12(method: str, kind: OperationType) -> None:
    assert OperationType.for_method(method) is kind
    assert kind.method == method


def test_every_type_but_other_has_one_method_HC_12() -> None:
    assert set(OperationType) - set(METHODS.values()) == {OperationType.OTHER}
    assert OperationType.OTHER.method is None


@pytest.mark.parametrize(
    "method",
    [
        "",
        "tools/Call",
        "TOOLS/CALL",
        " tools/call",
        "tools/call\n",
        "tools/call/",
        "notifications/cancelled",
        "tasks/get",
        "resources/subscribe",
        "x-vendor/custom",
        "other",
        "None",
    ],
)
def test_anything_else_is_other_HC_12(method: str) -> None:
    """HC-12: unrecognised, future and extension methods are ``OTHER``; no trimming or case
    folding turns a near miss into a known operation."""
    assert OperationType.for_method(method) is OperationType.OTHER


@pytest.mark.parametrize("method", [None, 1, b"tools/call", ("tools/call",)])
def test_a_non_str_method_is_other_HC_12(method: object) -> None:
    assert OperationType.for_method(method) is OperationType.OTHER


def test_a_str_subclass_is_read_as_its_text_HC_12() -> None:
    class Text(str):
        def __eq__(self, other: object) -> bool:
            return False

        def __hash__(self) -> int:
            return 0

    assert OperationType.for_method(Text("tools/call")) is OperationType.TOOLS_CALL


# --- RequestContext (HC-04..12) ------------------------------------------------------------------


def test_context_exposes_the_request_HC_04_HC_06_HC_10() -> None:
    """HC-04: endpoint and originating request; HC-06: type, method, id, revision, name;
    HC-10: the admission identity.  Objects are passed through untouched."""
    endpoint, request, identity = object(), object(), object()
    ctx = context(
        endpoint=endpoint,
        http_request=request,
        identity=identity,
        request_id=7,
        operation_name="catalog.search",
    )
    assert ctx.endpoint is endpoint and ctx.http_request is request and ctx.identity is identity
    assert ctx.revision is V2026 and ctx.method == "tools/call"
    assert ctx.operation_type is OperationType.TOOLS_CALL
    assert ctx.request_id == 7 and ctx.operation_name == "catalog.search"


def test_defaults_are_empty_HC_04_HC_08() -> None:
    ctx = context()
    assert ctx.request_id is None and ctx.operation_name is None and ctx.request_state is None
    assert ctx.client_info is None and ctx.input_responses is None
    assert ctx.framework_state is UNSET
    assert ctx.identity is None and ctx.http_request is None
    assert ctx.client_capabilities == {} and type(ctx.client_capabilities) is JsonObject
    assert ctx.meta == {} and type(ctx.meta) is JsonObject
    assert dict(ctx.trace) == {}


@pytest.mark.parametrize(("request_id", "kind"), [("1", str), (1, int), ("", str), (-(2**70), int)])
def test_request_id_keeps_its_type_HC_06(request_id: str | int, kind: type) -> None:
    """HC-06: a string-or-integer id; ``"1"`` and ``1`` are different ids."""
    ctx = context(request_id=request_id)
    assert ctx.request_id == request_id and type(ctx.request_id) is kind
    assert context(request_id="1").request_id != context(request_id=1).request_id


@pytest.mark.parametrize("request_id", [True, False, 1.0, Decimal(1), [1], SECRET + "\ud800"])
def test_request_id_must_be_str_or_int_HC_06(request_id: object) -> None:
    assert refusal(lambda: context(request_id=request_id)).startswith("RequestContext.request_id: ")


@pytest.mark.parametrize("method", [*METHODS, "x-vendor/custom", ""])
def test_operation_type_is_derived_from_the_method_HC_12(method: str) -> None:
    """HC-12: the type always agrees with the exact method, which is kept as given."""
    ctx = context(method=method)
    assert ctx.method == method
    assert ctx.operation_type is METHODS.get(method, OperationType.OTHER)


def test_operation_type_cannot_be_supplied_HC_12() -> None:
    with pytest.raises(TypeError):
        context(operation_type=OperationType.PING)


def test_path_parameters_are_always_empty_HC_05() -> None:
    """HC-05: endpoint paths are exact, so there are never path parameters."""
    parameters = context().path_parameters
    assert dict(parameters) == {} and parameters is context().path_parameters
    with pytest.raises(TypeError):
        parameters["x"] = "y"  # type: ignore[index]


def test_client_metadata_is_kept_as_raw_json_HC_07_HC_11() -> None:
    """HC-07, HC-11: client info and capabilities are exposed as immutable JSON, not as an
    identity type: informational only."""
    info = {"name": SECRET, "version": "1"}
    ctx = context(client_info=info, client_capabilities={"elicitation": {}})
    assert ctx.client_info == info and type(ctx.client_info) is JsonObject
    assert ctx.client_capabilities == {"elicitation": {}}
    assert ctx.identity is None  # what the client says about itself is never the identity


def test_client_metadata_gets_no_trust_from_declaration_checks_CB_15() -> None:
    """CB-15: the checks on the server's own declarations (``Implementation``, ``Icon``) are not
    applied to what the client says about itself, and lend it no trust: ``clientInfo`` with an
    icon source an ``Icon`` would refuse (CB-08) is kept as raw JSON, never as a validated
    declaration, and never becomes the identity."""
    info = {"name": "client", "version": "1", "icons": [{"src": "relative/icon.png"}]}
    with pytest.raises(InvalidValueError, match=r"Icon\.src"):
        Icon(src="relative/icon.png")
    ctx = context(client_info=info)
    assert type(ctx.client_info) is JsonObject and ctx.client_info == info
    assert not isinstance(ctx.client_info, Implementation)
    assert type(ctx.client_info["icons"][0]) is JsonObject  # type: ignore[index]
    assert ctx.identity is None


def test_meta_input_responses_and_request_state_HC_08() -> None:
    meta = JsonObject({"progressToken": 1})
    responses = JsonObject({"q": {"action": "accept", "content": {"name": "x"}}})
    ctx = context(meta=meta, input_responses=responses, request_state="opaque")
    assert ctx.meta is meta and ctx.input_responses is responses  # a JsonObject is not copied
    assert ctx.request_state == "opaque"
    assert context(meta={"a": [1]}).meta == {"a": [1]}
    assert isinstance(context(meta={"a": [1]}).meta["a"], JsonArray)


RESPONSES = JsonObject(
    {
        "login": {"action": "accept", "content": {"name": "octocat"}},
        "answer": {"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"},
        "roots": {"roots": [{"uri": "file:///repo", "name": "repo"}]},
        "odd": [1, 2],
        "bad": {"action": "maybe"},
    }
)


def test_typed_input_responses_by_key_HC_08() -> None:
    """HC-08: a handler reads the previous round's answers by the keys it chose, raw or as a
    typed view; an absent key, or an answer of another shape, is ``None`` (the handler asks
    again), never an error."""
    ctx = context(input_responses=RESPONSES)
    assert ctx.input_response("login") is RESPONSES["login"]
    assert ctx.input_response("odd") is None and ctx.input_response("missing") is None
    login = ctx.elicitation("login")
    assert login == ElicitationResponse("accept", {"name": "octocat"})
    answer = ctx.sampling("answer")
    assert answer is not None and answer.role is Role.ASSISTANT and answer.model == "m"
    assert answer.blocks == ({"type": "text", "text": "4"},)
    assert ctx.roots("roots") == RootsResponse((Root("file:///repo", "repo"),))
    for key in ("login", "answer", "roots", "odd", "bad", "missing"):
        views = (ctx.elicitation(key), ctx.sampling(key), ctx.roots(key))
        assert sum(view is not None for view in views) == (key in ("login", "answer", "roots"))
    first_round = context()
    assert first_round.input_response("login") is None
    assert first_round.elicitation("login") is None
    assert first_round.sampling("answer") is None and first_round.roots("roots") is None


@pytest.mark.parametrize("state", [{"cart": [1, 2.5], "step": "pay"}, None, 0, "s", []])
def test_framework_state_HC_08(state: object) -> None:
    """HC-08: the verified, opened framework state (``FRAMEWORK_PROTECTED``), any JSON value
    including null, distinct from the application's ``request_state`` string; ``UNSET`` when
    there is none."""
    ctx = context(framework_state=state)
    assert ctx.framework_state == from_python(state)
    assert type(ctx.framework_state) is type(from_python(state))
    assert ctx.request_state is None
    assert context().framework_state is UNSET
    assert refusal(lambda: context(framework_state={SECRET})) == (
        "RequestContext.framework_state: a JSON value cannot be a set"
    )


def test_trace_is_an_immutable_copy_HC_09() -> None:
    """HC-09: the validated trace context and baggage, frozen at construction."""
    source = {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
    ctx = context(trace=source)
    source["baggage"] = "k=v"
    assert dict(ctx.trace) == {"traceparent": source["traceparent"]}
    with pytest.raises(TypeError):
        ctx.trace["baggage"] = "k=v"  # type: ignore[index]
    assert context(trace={}).trace is context().trace
    assert context(trace=MappingProxyType({})).trace == {}


@pytest.mark.parametrize(
    ("field", "value", "rule"),
    [
        ("revision", "2026-07-28", "must be a Revision"),
        ("method", None, "a JSON string must be a str"),
        ("method", SECRET + "\udc00", "text contains an unpaired surrogate"),
        ("operation_name", 5, "a JSON string must be a str"),
        ("client_info", [SECRET], "must be a JSON object"),
        ("client_capabilities", None, "must be a JSON object"),
        ("meta", {"k": {SECRET}}, "a JSON value cannot be a set"),
        ("input_responses", SECRET, "must be a JSON object"),
        ("request_state", b"state", "a JSON string must be a str"),
        ("trace", [("traceparent", SECRET)], "must be a mapping"),
        ("trace", {"baggage": 1}, "a JSON string must be a str"),
        ("trace", {1: SECRET}, "a JSON string must be a str"),
    ],
)
def test_malformed_fields_are_refused_by_name(field: str, value: object, rule: str) -> None:
    """The server builds contexts from validated values; anything else fails loudly, naming
    the field and the rule, never the value."""
    assert refusal(lambda: context(**{field: value})) == f"RequestContext.{field}: {rule}"


def test_context_is_immutable_and_one_per_request_HC_15() -> None:
    """HC-15: a context is request-scoped: frozen, and equal only to itself."""
    ctx = context()
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.method = "ping"  # type: ignore[misc]
    assert not hasattr(ctx, "__dict__")
    twin = context(endpoint=ctx.endpoint)
    assert ctx == ctx and ctx != twin and len({ctx, twin}) == 2


def test_repr_shows_no_request_data() -> None:
    ctx = context(
        request_id=SECRET,
        operation_name=SECRET,
        client_info={"name": SECRET},
        meta={"k": SECRET},
        input_responses={"k": SECRET},
        request_state=SECRET,
        framework_state={"k": SECRET},
        trace={"baggage": SECRET},
        identity=SECRET,
    )
    assert repr(ctx) == (
        "RequestContext(revision='2026-07-28', method='tools/call', operation_type=TOOLS_CALL)"
    )


# --- ToolArguments (HC-03) -----------------------------------------------------------------------


def test_tool_arguments_hold_converted_and_raw_HC_03() -> None:
    """HC-03: the converted value and the immutable validated JSON object."""
    raw = JsonObject({"query": "x", "limit": 3})
    converted = ("x", 3)
    arguments = ToolArguments(converted=converted, raw=raw)
    assert arguments.converted is converted and arguments.raw is raw
    from_dict = ToolArguments(converted=None, raw={"a": [1]})  # type: ignore[arg-type]
    assert type(from_dict.raw) is JsonObject and isinstance(from_dict.raw["a"], JsonArray)


def test_tool_arguments_can_be_parameterised_HC_03() -> None:
    arguments = ToolArguments[int](converted=1, raw=JsonObject())
    assert arguments.converted == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        arguments.raw = JsonObject()  # type: ignore[misc]
    with pytest.raises(TypeError):
        ToolArguments(1, JsonObject())  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("raw", "rule"),
    [([("a", 1)], "must be a JSON object"), (None, "must be a JSON object"), ({1: 2}, None)],
)
def test_raw_arguments_must_be_a_json_object_HC_03(raw: object, rule: str | None) -> None:
    message = refusal(lambda: ToolArguments(converted=None, raw=raw))  # type: ignore[arg-type]
    assert message.startswith("ToolArguments.raw: ")
    assert rule is None or message == f"ToolArguments.raw: {rule}"


def test_tool_arguments_repr_shows_no_values() -> None:
    arguments = ToolArguments(converted={"q": SECRET}, raw=JsonObject({"q": SECRET}))
    assert repr(arguments) == "ToolArguments(converted=<dict>, raw=<1 members>)"


# --- CancellationToken (HC-14) -------------------------------------------------------------------


def test_token_starts_uncancelled_HC_14() -> None:
    token = CancellationToken()
    assert not token.cancelled
    token.raise_if_cancelled()
    assert repr(token) == "CancellationToken(cancelled=False)"


def test_cancel_is_idempotent_and_raises_a_fixed_error_HC_14() -> None:
    token = CancellationToken()
    token.cancel()
    token.cancel()
    assert token.cancelled and repr(token) == "CancellationToken(cancelled=True)"
    with pytest.raises(Cancelled) as caught:
        token.raise_if_cancelled()
    assert isinstance(caught.value, MCPKitError)
    assert str(caught.value) == "Request cancelled" and caught.value.__cause__ is None


def test_cancel_from_another_thread_is_seen_HC_14() -> None:
    token = CancellationToken()
    thread = threading.Thread(target=token.cancel)
    thread.start()
    thread.join()
    assert token.cancelled


# --- ProgressReporter (HC-14) --------------------------------------------------------------------


class Sink:
    def __init__(self) -> None:
        self.sent: list[JsonObject] = []

    def __call__(self, params: JsonObject) -> None:
        self.sent.append(params)


@pytest.mark.parametrize("token", ["abc", "", 0, -5, 2**64])
def test_reports_carry_the_token_with_its_type_HC_14(token: str | int) -> None:
    sink = Sink()
    ProgressReporter(token, sink).report(1)
    assert sink.sent == [{"progressToken": token, "progress": 1}]
    assert type(sink.sent[0]["progressToken"]) is type(token)


def test_reports_write_total_and_message_HC_14() -> None:
    sink = Sink()
    reporter = ProgressReporter("t", sink)
    reporter.report(0.5, total=Decimal("1.0"), message="half \U0001f680")
    reporter.report(Decimal("0.75"), 1)
    assert sink.sent == [
        {
            "progressToken": "t",
            "progress": Decimal("0.5"),
            "total": 1,
            "message": "half \U0001f680",
        },
        {"progressToken": "t", "progress": Decimal("0.75"), "total": 1},
    ]
    assert type(sink.sent[0]["progress"]) is Decimal and type(sink.sent[0]) is JsonObject
    assert repr(reporter) == "ProgressReporter()"


def test_progress_must_increase_HC_14() -> None:
    """An equal value is dropped; a smaller one is refused and nothing is sent."""
    sink = Sink()
    reporter = ProgressReporter(1, sink)
    reporter.report(1)
    reporter.report(1.0)
    reporter.report(Decimal("1.00"), message="same")
    assert len(sink.sent) == 1
    with pytest.raises(InvalidValueError) as caught:
        reporter.report(0.5)
    assert str(caught.value) == "ProgressReporter.report: progress must increase"
    reporter.report(2)
    assert [params["progress"] for params in sink.sent] == [1, 2]


@pytest.mark.parametrize(
    ("arguments", "rule"),
    [
        ((float("nan"),), "progress must be finite"),
        ((float("inf"),), "progress must be finite"),
        ((Decimal("NaN"),), "progress must be finite"),
        ((Decimal("sNaN"),), "progress must be finite"),
        ((Decimal("-Infinity"),), "progress must be finite"),
        ((True,), "progress must be an int, float or Decimal"),
        (("1",), "progress must be an int, float or Decimal"),
        ((1, float("inf")), "total must be finite"),
        ((1, False), "total must be an int, float or Decimal"),
        ((1, None, SECRET + "\ud800"), "text contains an unpaired surrogate"),
        ((1, None, 5), "a JSON string must be a str"),
    ],
)
def test_malformed_reports_are_refused_HC_14(arguments: tuple[Any, ...], rule: str) -> None:
    sink = Sink()
    message = refusal(lambda: ProgressReporter("t", sink).report(*arguments))
    assert message == f"ProgressReporter.report: {rule}" and sink.sent == []


@pytest.mark.parametrize(
    ("token", "send", "rule"),
    [
        (True, Sink(), "ProgressReporter.token: must be a str or an int"),
        (1.0, Sink(), "ProgressReporter.token: must be a str or an int"),
        (None, Sink(), "ProgressReporter.token: must be a str or an int"),
        (SECRET + "\ud800", Sink(), "text contains an unpaired surrogate"),
        ("t", None, "ProgressReporter.send: must be callable"),
    ],
)
def test_reporter_construction_is_checked_HC_14(token: Any, send: Any, rule: str) -> None:
    assert refusal(lambda: ProgressReporter(token, send)) == rule


def test_a_failed_send_does_not_count_HC_14() -> None:
    """If delivery fails, the value is not remembered, so the same value may be sent again."""
    calls: list[JsonObject] = []

    def send(params: JsonObject) -> None:
        calls.append(params)
        if len(calls) == 1:
            raise OSError("stream closed")

    reporter = ProgressReporter("t", send)
    with pytest.raises(OSError):
        reporter.report(1)
    reporter.report(1)
    assert len(calls) == 2


def test_reports_from_many_threads_arrive_in_increasing_order_HC_14() -> None:
    sink = Sink()
    reporter = ProgressReporter("t", sink)

    def work(offset: int) -> None:
        for step in range(200):
            # Another thread may already have reported a larger value.
            with contextlib.suppress(InvalidValueError):
                reporter.report(step * 4 + offset)

    threads = [threading.Thread(target=work, args=(offset,)) for offset in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    sent = [int(str(params["progress"])) for params in sink.sent]
    assert sent == sorted(set(sent)) and sent


# --- InvocationFeatures (HC-13, HC-14) -----------------------------------------------------------


def test_find_and_require_by_type_HC_13() -> None:
    token, reporter = CancellationToken(), ProgressReporter("t", Sink())
    features = InvocationFeatures(token, reporter)
    assert (
        features.find(CancellationToken) is token and features.require(ProgressReporter) is reporter
    )
    assert features.cancellation_token is token and features.progress_reporter is reporter
    assert features.features == (token, reporter)


def test_absent_features_HC_13_HC_14() -> None:
    """HC-13: ``find`` returns ``None`` and ``require`` raises, naming the kind; HC-14: the
    reporter is absent when the client did not ask for progress."""
    features = InvocationFeatures(CancellationToken())
    assert features.find(ProgressReporter) is None and features.progress_reporter is None
    with pytest.raises(LookupError, match=r"^no ProgressReporter feature for this invocation$"):
        features.require(ProgressReporter)


def test_find_matches_subclasses_HC_13() -> None:
    class Custom:
        pass

    custom = Custom()
    token = CancellationToken()
    features = InvocationFeatures(token, custom)
    assert features.find(Custom) is custom and features.find(object) is token
    assert repr(features) == "InvocationFeatures(CancellationToken, Custom)"


def test_a_cancellation_token_is_always_present_HC_14() -> None:
    message = refusal(lambda: InvocationFeatures(ProgressReporter("t", Sink())))
    assert message == "InvocationFeatures: a CancellationToken is required"
    assert refusal(InvocationFeatures) == "InvocationFeatures: a CancellationToken is required"


def test_each_feature_type_appears_once_HC_13() -> None:
    message = refusal(lambda: InvocationFeatures(CancellationToken(), CancellationToken()))
    assert message == "InvocationFeatures: each feature type may appear only once"


def test_features_are_immutable_HC_15() -> None:
    features = InvocationFeatures(CancellationToken())
    with pytest.raises(dataclasses.FrozenInstanceError):
        features.features = ()  # type: ignore[misc]


# --- layer rule --------------------------------------------------------------------------------


def test_handler_context_imports_no_event_loop() -> None:
    """the model layer imports no event loop; the token and the reporter are
    plain threading primitives, usable from ``def`` and ``async def`` handlers alike."""
    code = (
        "import sys\n"
        "import mcpkit.model._context, mcpkit.model._results, mcpkit.model._implementation\n"
        "print(sorted(m for m in ('asyncio', 'anyio', 'trio', 'uvicorn') if m in sys.modules))\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    assert output.strip() == "[]"
