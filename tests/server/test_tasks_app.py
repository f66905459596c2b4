"""Tasks an application runs itself (the tasks extension, 2026-07-28): a method returning
``TaskCreatedResult[R]`` creates its task through ``TaskCreation`` and finishes it later through
its ``TaskHandle`` (complete, fail, ask for input, progress, cancellation); what ``tasks/get``
delivers is checked against the tool's output schema when it is delivered; and the interceptor
and the sanitizer wrap a task's work as they wrap a call."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from mcpkit import (
    CompleteResult,
    Endpoint,
    EndpointRegistry,
    Implementation,
    InputRequestDeclaration,
    InputRequiredResult,
    InvalidParams,
    InvocationFeatures,
    Limits,
    MemoryTaskStore,
    RequestContext,
    Revision,
    Server,
    TaskCreatedResult,
    TaskCreation,
    TaskHandle,
    TaskStatus,
    TaskSupport,
    ToolRegistration,
    endpoint,
    tool,
)
from mcpkit.json import JsonObject
from mcpkit.server._task_store import TaskKey
from mcpkit.testing import TestClient

from .tasks_support import (
    INTERNAL,
    NOT_FOUND,
    WITH_FORMS,
    call,
    cancel,
    error,
    get,
    on_loop,
    reach,
    result,
    start,
    update,
)

MODERN_ONLY = {Revision.V2026_07_28}
TTL = 120.0
LIMITS = Limits(task_ttl_seconds=TTL, task_timeout_seconds=TTL, max_task_result_bytes=1024)
FORM = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
}
ADA = {"action": "accept", "content": {"name": "Ada"}}
Form = InputRequestDeclaration.elicitation_form

# The handles the handlers created, by label; what they saw, in order.  Cleared per test.
handles: dict[str, TaskHandle] = {}
events: list[Any] = []


@pytest.fixture(autouse=True)
def _fresh_records() -> Iterator[None]:
    handles.clear()
    events.clear()
    yield
    handles.clear()
    events.clear()


@dataclass(frozen=True)
class Report:
    total: int
    note: str = ""


async def _create(features: InvocationFeatures, label: str) -> TaskCreatedResult[Report]:
    creation = features.require(TaskCreation)
    assert repr(creation) == "TaskCreation()"
    handle = await creation.create()
    handles[label] = handle
    return TaskCreatedResult(task_id=handle.task_id)


@endpoint(path="/mcp", name="managed", version="1.0.0", revisions=MODERN_ONLY)
class Managed:
    @tool
    async def begin(
        self, features: InvocationFeatures, label: str = "t"
    ) -> TaskCreatedResult[Report]:
        """Creates its task and leaves it to the test."""
        return await _create(features, label)

    @tool
    def begin_def(self, features: InvocationFeatures) -> TaskCreatedResult[Report]:
        """A def handler cannot await the creation: it returns an id it never created."""
        return TaskCreatedResult(task_id="made-up")

    @tool
    async def forge(self, features: InvocationFeatures) -> TaskCreatedResult[Report]:
        """Creates a task, but answers with another id."""
        await _create(features, "forged")
        return TaskCreatedResult(task_id="A" * 43)

    @tool(input_requests=[Form()])
    async def gather(
        self, ctx: RequestContext, features: InvocationFeatures
    ) -> TaskCreatedResult[Report] | InputRequiredResult:
        """Asks for a name by multi-round input first, then creates its task."""
        answer = ctx.elicitation("name")
        if answer is None or answer.content is None:
            return InputRequiredResult(input_requests={"name": FORM})
        events.append(("gather", answer.content["name"]))
        return await _create(features, "gathered")

    @tool
    async def at_once(
        self, features: InvocationFeatures
    ) -> TaskCreatedResult[Report] | CompleteResult:
        """Work finished at once: no task."""
        return CompleteResult.from_tool_structured_content({"total": 0, "note": "at once"})

    @tool(task_support=TaskSupport.OPTIONAL)
    async def inline_task(self, features: InvocationFeatures) -> CompleteResult:
        """A task the server runs: no TaskCreation among its features."""
        events.append(("creation", features.find(TaskCreation)))
        return CompleteResult.from_tool_text("ran")

    @tool(task_support=TaskSupport.OPTIONAL)
    async def pretend(self) -> CompleteResult:
        """Claims a task it has no way to create."""
        return TaskCreatedResult(task_id="made-up")  # type: ignore[return-value]

    @tool
    async def odd(self) -> CompleteResult:
        """Returns what no tool may."""
        return "text"  # type: ignore[return-value]

    @tool
    async def plain_pretend(self) -> CompleteResult:
        """Never a task, yet claims one."""
        return TaskCreatedResult(task_id="made-up")  # type: ignore[return-value]


@endpoint(path="/mcp", name="managed", version="2.0.0", revisions=MODERN_ONLY)
class Replaced:
    @tool
    async def other(self, features: InvocationFeatures) -> TaskCreatedResult[Report]:
        return await _create(features, "other")


@pytest.fixture
def store() -> MemoryTaskStore:
    return MemoryTaskStore()


@pytest.fixture
def server(store: MemoryTaskStore) -> Server:
    return Server(Managed, task_store=store, limits=LIMITS)


@pytest.fixture
def client(server: Server) -> Iterator[TestClient]:
    with TestClient(server) as test_client:
        yield test_client


def begin(client: TestClient, label: str = "t") -> tuple[str, TaskHandle]:
    task_id = start(client, "begin", {"label": label})
    handle = handles[label]
    assert handle.task_id == task_id
    return task_id, handle


def drive(client: TestClient, step: Callable[[], Awaitable[Any]]) -> Any:
    """Call a handle's method on the server's loop."""

    async def run() -> Any:
        return await step()

    return on_loop(client, run())


# --- creating and completing ------------------------------------------------------------------


def test_a_created_task_is_answered_with_its_handle(client: TestClient) -> None:
    response = call(client, "begin")
    assert response.status == 200
    created = result(response)
    assert created["resultType"] == "task" and created["status"] == "working"
    assert created["taskId"] == handles["t"].task_id and len(created["taskId"]) == 43
    assert {"ttlMs", "pollIntervalMs", "createdAt", "lastUpdatedAt", "_meta"} <= set(created)
    assert not {"result", "content", "structuredContent"} & set(created)
    assert result(get(client, created["taskId"]))["status"] == "working"
    assert repr(handles["t"]) == "TaskHandle()"


def test_completing_with_a_typed_value(client: TestClient) -> None:
    task_id, handle = begin(client)
    drive(client, lambda: handle.progress("halfway"))
    assert result(get(client, task_id))["statusMessage"] == "halfway"
    drive(client, lambda: handle.complete(Report(3, "three")))
    done = result(get(client, task_id))
    assert done["status"] == "completed" and "statusMessage" not in done
    assert done["result"] == {
        "content": [{"type": "text", "text": '{"total":3,"note":"three"}'}],
        "structuredContent": {"total": 3, "note": "three"},
        "resultType": "complete",
    }
    # later changes are ignored once it ended
    drive(client, handle.fail)
    drive(client, handle.cancelled)
    drive(client, lambda: handle.progress("again"))
    assert result(get(client, task_id)) == done


@pytest.mark.parametrize(
    "value",
    ["not a report", Report(total="three"), Report(1, "x" * 1024)],  # type: ignore[arg-type]
    ids=["wrong type", "invalid", "too large"],
)
def test_completing_with_what_cannot_be_written_fails_the_task(
    client: TestClient, value: object
) -> None:
    task_id, handle = begin(client)
    drive(client, lambda: handle.complete(value))
    failed = result(get(client, task_id))
    assert failed["status"] == "failed" and failed["error"] == INTERNAL
    assert "result" not in failed


def test_completing_with_an_is_error_result(client: TestClient) -> None:
    task_id, handle = begin(client)
    drive(client, lambda: handle.complete(CompleteResult.from_tool_error_text("no luck")))
    done = result(get(client, task_id))
    assert done["status"] == "completed"
    assert done["result"] == {
        "content": [{"type": "text", "text": "no luck"}],
        "isError": True,
        "resultType": "complete",
    }


@pytest.mark.parametrize(
    ("error_given", "expected"),
    [(None, INTERNAL), (InvalidParams(), {"code": -32602, "message": "Invalid params"})],
)
def test_failing(client: TestClient, error_given: InvalidParams | None, expected: object) -> None:
    task_id, handle = begin(client)
    drive(client, lambda: handle.fail(error_given))
    failed = result(get(client, task_id))
    assert failed["status"] == "failed" and failed["error"] == expected


def test_a_typed_task_tool_needs_the_extension(client: TestClient) -> None:
    response = call(client, "begin", capabilities={})
    assert response.status == 400 and error(response)["code"] == -32021
    assert handles == {}


def test_work_finished_at_once_is_answered_inline(client: TestClient) -> None:
    response = call(client, "at_once")
    assert result(response)["structuredContent"] == {"total": 0, "note": "at once"}
    assert result(response)["resultType"] == "complete"


@pytest.mark.parametrize("tool_name", ["forge", "begin_def", "plain_pretend", "odd"])
def test_a_task_id_the_handler_did_not_create_is_minus_32603(
    client: TestClient, store: MemoryTaskStore, tool_name: str
) -> None:
    response = call(client, tool_name)
    assert response.status == 500
    assert error(response) == INTERNAL
    assert b"made-up" not in response.body and b"AAAA" not in response.body
    # the forged call's own task was created, and is not the client's to know of
    assert len(store) == (1 if tool_name == "forge" else 0)


def test_a_task_s_work_claiming_a_task_fails_it(client: TestClient) -> None:
    failed = reach(client, start(client, "pretend"), "failed")
    assert failed["error"] == INTERNAL


def test_a_task_the_server_runs_has_no_task_creation(client: TestClient) -> None:
    reach(client, start(client, "inline_task"), "completed")
    assert events == [("creation", None)]


# --- input, progress, cancellation ----------------------------------------------------------


def test_asking_through_the_handle(client: TestClient) -> None:
    task_id, handle = begin(client)
    with pytest.raises(ValueError, match="at least one input request"):
        drive(client, lambda: handle.ask(InputRequiredResult(request_state="s")))
    drive(client, lambda: handle.ask(InputRequiredResult(input_requests={"name": FORM})))
    waiting = result(get(client, task_id))
    assert waiting["status"] == "input_required"
    assert waiting["inputRequests"] == {"name": FORM}  # the application's own ids
    assert drive(client, handle.responses) is None
    update(client, task_id, {"name": {"not": "an answer"}, "other": ADA})
    assert result(get(client, task_id))["status"] == "input_required"
    update(client, task_id, {"name": ADA})
    assert result(get(client, task_id))["status"] == "working"
    assert drive(client, handle.responses) == {"name": ADA}
    assert drive(client, handle.responses) is None
    drive(client, lambda: handle.complete(Report(1)))
    assert result(get(client, task_id))["status"] == "completed"


def test_cancellation_through_the_handle(client: TestClient) -> None:
    task_id, handle = begin(client)
    assert drive(client, handle.cancel_requested) is False
    ack = result(cancel(client, task_id))
    assert ack == {"resultType": "complete"}
    # the application decides when it stops: the task is working until then
    assert result(get(client, task_id))["status"] == "working"
    assert drive(client, handle.cancel_requested) is True
    drive(client, handle.cancelled)
    assert result(get(client, task_id))["status"] == "cancelled"
    record = drive(client, handle.record)
    assert record is not None and record.status is TaskStatus.CANCELLED


def test_a_handle_can_end_its_task_without_being_asked(client: TestClient) -> None:
    task_id, handle = begin(client)
    drive(client, handle.cancelled)
    assert result(get(client, task_id))["status"] == "cancelled"


def test_a_handle_of_an_expired_task() -> None:
    offset = [0.0]

    def clock() -> float:
        return time.time() + offset[0]

    store = MemoryTaskStore(clock=clock)
    with TestClient(Server(Managed, task_store=store, limits=LIMITS)) as client:
        task_id, handle = begin(client)
        offset[0] = TTL + 1
        assert drive(client, handle.record) is None
        assert drive(client, handle.cancel_requested) is True  # nothing left to work for
        assert error(get(client, task_id)) == NOT_FOUND


def test_input_gathered_before_the_task_is_created(client: TestClient) -> None:
    first = call(client, "gather", capabilities=WITH_FORMS)
    asked = result(first)
    assert asked["resultType"] == "input_required" and asked["inputRequests"] == {"name": FORM}
    extra = {"inputResponses": {"name": ADA}}
    task_id = start(client, "gather", capabilities=WITH_FORMS, extra=extra)
    assert events == [("gather", "Ada")]
    assert handles["gathered"].task_id == task_id


# --- delivery ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "stored",
    [
        CompleteResult.from_tool_text("no structured content"),
        CompleteResult.from_tool_structured_content({"total": "three"}),
    ],
    ids=["none", "invalid"],
)
def test_a_result_the_output_schema_refuses_is_not_delivered(
    client: TestClient, stored: CompleteResult
) -> None:
    task_id, handle = begin(client)
    drive(client, lambda: handle.complete(stored))
    before = drive(client, handle.record)
    assert before.status is TaskStatus.COMPLETED
    response = get(client, task_id)
    assert response.status == 500 and error(response) == INTERNAL
    assert drive(client, handle.record) == before  # the stored task is left as it is


def test_a_task_whose_tool_was_swapped_out_is_not_delivered(
    server: Server, client: TestClient
) -> None:
    task_id, handle = begin(client)
    working, _ = begin(client, "still working")
    drive(client, lambda: handle.complete(Report(2)))
    server.swap(EndpointRegistry.from_classes(Replaced))
    response = get(client, task_id)
    assert response.status == 500 and error(response) == INTERNAL
    # a task not completed has nothing to check
    assert result(get(client, working))["status"] == "working"
    assert result(call(client, "other"))["resultType"] == "task"


# --- the interceptor and the sanitizer --------------------------------------------------------


@endpoint(path="/mcp", name="wrapped", version="1.0.0", revisions=MODERN_ONLY)
class Wrapped:
    @tool(task_support=TaskSupport.OPTIONAL)
    async def work(self, text: str) -> CompleteResult:
        events.append(("work", text))
        return CompleteResult.from_tool_text(f"worked on {text}")

    @tool(task_support=TaskSupport.OPTIONAL)
    def work_def(self, text: str) -> Report:
        events.append(("work_def", text))
        return Report(len(text))

    @tool
    async def begin(self, features: InvocationFeatures) -> TaskCreatedResult[Report]:
        return await _create(features, "t")


async def interceptor(ctx: RequestContext, proceed: Callable[[], Awaitable[object]]) -> object:
    events.append(("intercepted", ctx.operation_name, ctx.request_id))
    outcome = await proceed()
    events.append(("proceeded", ctx.operation_name))
    return outcome


def sanitizer(
    ctx: RequestContext, name: str, arguments: JsonObject, result: CompleteResult
) -> CompleteResult:
    events.append(("sanitized", name))
    if name == "begin":
        return CompleteResult.from_tool_structured_content({"total": 99, "note": "clean"})
    return result


def test_the_interceptor_wraps_a_task_s_work() -> None:
    server = Server(Wrapped, task_store=MemoryTaskStore(), interceptor=interceptor)
    with TestClient(server) as client:
        for tool_name, text in (("work", "a"), ("work_def", "abc")):
            task_id = start(client, tool_name, {"text": text}, id=f"call-{tool_name}")
            reach(client, task_id, "completed")
        # once per task, around its handler (the ctx is the call's: its request id)
        assert events == [
            ("intercepted", "work", "call-work"),
            ("work", "a"),
            ("proceeded", "work"),
            ("intercepted", "work_def", "call-work_def"),
            ("work_def", "abc"),
            ("proceeded", "work_def"),
        ]


async def short_circuit(ctx: RequestContext, proceed: Callable[[], Awaitable[object]]) -> object:
    if ctx.operation_name == "work":
        return CompleteResult.from_tool_text("from the interceptor")
    return Report(-1)


def test_an_interceptor_s_own_result_completes_the_task() -> None:
    server = Server(Wrapped, task_store=MemoryTaskStore(), interceptor=short_circuit)
    with TestClient(server) as client:
        done = reach(client, start(client, "work", {"text": "a"}), "completed")
        assert done["result"]["content"] == [{"type": "text", "text": "from the interceptor"}]
        typed = reach(client, start(client, "work_def", {"text": "a"}), "completed")
        assert typed["result"]["structuredContent"] == {"total": -1, "note": ""}
        assert events == []  # no handler ran


def test_the_sanitizer_cleans_a_task_s_result() -> None:
    server = Server(Wrapped, task_store=MemoryTaskStore(), sanitizer=sanitizer)
    with TestClient(server) as client:
        reach(client, start(client, "work", {"text": "a"}), "completed")
        assert ("sanitized", "work") in events
        task_id = start(client, "begin")
        handle = handles["t"]
        drive(client, lambda: handle.complete(Report(1)))
        done = result(get(client, task_id))
        assert done["result"]["structuredContent"] == {"total": 99, "note": "clean"}


@dataclass(frozen=True)
class NoArguments:
    pass


def test_a_typed_task_registration_built_directly() -> None:
    async def handler(
        ctx: RequestContext, arguments: Any, features: InvocationFeatures
    ) -> TaskCreatedResult[Report]:
        return await _create(features, "direct")

    registration = ToolRegistration.typed_task(
        name="direct",
        revisions=MODERN_ONLY,
        arguments=NoArguments,
        operation_handler=handler,
        output=Report,
    )
    assert registration.task_support is TaskSupport.REQUIRED
    assert registration.managed_task is False
    served = Endpoint(
        "/direct", Implementation("direct", "1.0.0"), MODERN_ONLY, tools=[registration]
    )
    assert served.tasks
    with TestClient(Server(served, task_store=MemoryTaskStore())) as client:
        task_id = start(client, "direct", path="/direct")
        drive(client, lambda: handles["direct"].complete(Report(7)))
        done = result(get(client, task_id, path="/direct"))
        assert done["result"]["structuredContent"] == {"total": 7, "note": ""}
        record = drive(client, handles["direct"].record)
        assert record.key == TaskKey(task_id, None, "/direct")
