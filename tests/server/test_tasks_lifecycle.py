"""The life of the server's tasks beyond one call (the tasks extension, 2026-07-28): a task
store that fails, the configuration a server with tasks is refused for, what ``server/discover``
advertises, recovery of the tasks a previous process left running (failed, or run again when
their tool is idempotent), expiry, the server stopping with tasks running, and the wire forms
of ``_task_wire`` written directly."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import mcpkit
from mcpkit import (
    CompleteResult,
    ConfigurationError,
    EndpointRegistry,
    InputRequestDeclaration,
    InputRequiredResult,
    InternalError,
    InvocationFeatures,
    Limits,
    MemoryTaskStore,
    RequestContext,
    Revision,
    Server,
    SqliteTaskStore,
    TaskCreatedResult,
    TaskCreation,
    TaskRecord,
    TaskStatus,
    TaskStoreUnavailable,
    TaskSupport,
    ToolRegistration,
    endpoint,
    tool,
)
from mcpkit.json import JsonObject, decode, encode, from_python
from mcpkit.model import declares_tasks, response_answers, tasks_capability
from mcpkit.server._build import EngineSettings, build_engine
from mcpkit.server._task_store import TaskKey, new_task_id
from mcpkit.server._task_wire import (
    created_message,
    detailed_body,
    detailed_message,
    subscription_meta,
    timestamp,
)
from mcpkit.server._tasks import TaskRunner
from mcpkit.testing import TestClient, handshake_request

from .tasks_support import (
    INTERNAL,
    NOT_FOUND,
    NOVEMBER,
    TASKS,
    TASKS_EXTENSION,
    WAIT,
    WITH_FORMS,
    Gates,
    call,
    error,
    get,
    on_loop,
    post,
    reach,
    result,
    runner,
    start,
    status_of,
    until,
    update,
)

MODERN_ONLY = {Revision.V2026_07_28}
OPTIONAL = TaskSupport.OPTIONAL
TTL = 120.0
LIMITS = Limits(task_ttl_seconds=TTL, task_timeout_seconds=TTL)
SHORT = Limits(task_ttl_seconds=1.0, task_timeout_seconds=1.0)
INTERRUPTED = {
    "code": -31903,
    "message": "The task was interrupted by a server restart; call the tool again",
}
FORM = {
    "method": "elicitation/create",
    "params": {"mode": "form", "message": "Sure?", "requestedSchema": {"type": "object"}},
}

events: list[Any] = []
gates = Gates()


@dataclass(frozen=True)
class Done:
    text: str


@pytest.fixture(autouse=True)
def _fresh_records() -> Iterator[None]:
    events.clear()
    yield
    gates.clear()
    events.clear()


async def _until_open(gate: str) -> None:
    try:
        while not gates(gate).is_set():
            await asyncio.sleep(0.002)
    except asyncio.CancelledError:
        events.append(f"{gate}: cancelled")
        raise


@endpoint(path="/mcp", name="life", version="1.0.0", revisions=MODERN_ONLY)
class Life:
    @tool(task_support=OPTIONAL)
    async def job(self, text: str = "") -> CompleteResult:
        """Not idempotent: failed if interrupted."""
        events.append(f"job: {text}")
        await _until_open("job")
        return CompleteResult.from_tool_text(f"job {text}")

    @tool(idempotent=True, task_support=OPTIONAL)
    async def again(self, text: str, ctx: RequestContext) -> CompleteResult:
        """Idempotent: run again if interrupted."""
        events.append(("again", text, dict(ctx.client_capabilities)))
        await _until_open(f"again {text}")
        return CompleteResult.from_tool_text(f"again {text}")

    @tool(task_support=OPTIONAL)
    async def quick(self, features: InvocationFeatures) -> CompleteResult:
        progress = features.progress_reporter
        assert progress is not None
        progress.report(1, message="a hint")
        return CompleteResult.from_tool_text("quick")

    @tool(task_support=OPTIONAL, input_requests=[InputRequestDeclaration.elicitation_form()])
    async def ask(self, ctx: RequestContext) -> CompleteResult | InputRequiredResult:
        events.append(("ask", dict(ctx.input_responses or {})))
        await _until_open("ask")
        if ctx.elicitation("confirm") is None:
            return InputRequiredResult(input_requests={"confirm": FORM})
        return CompleteResult.from_tool_text("confirmed")

    @tool
    async def begin(self, features: InvocationFeatures) -> TaskCreatedResult[Done]:
        handle = await features.require(TaskCreation).create()
        return TaskCreatedResult(task_id=handle.task_id)

    @tool
    async def plain(self) -> CompleteResult:
        events.append("plain")
        return CompleteResult.from_tool_text("plain")


def key(task_id: str, owner: str | None = None, path: str = "/mcp") -> TaskKey:
    return TaskKey(task_id, owner, path)


def stored(
    store: Any, task_id: str, owner: str | None = None, path: str = "/mcp"
) -> TaskRecord | None:
    """A task as the store holds it, read from the test's thread."""
    found: TaskRecord | None = asyncio.run(store.get(key(task_id, owner, path)))
    return found


# --- a failing store ------------------------------------------------------------------------


class FailingStore(MemoryTaskStore):
    """A memory store whose named methods fail (``TaskStoreUnavailable`` unless told)."""

    def __init__(self, *failing: str, error: type[Exception] = TaskStoreUnavailable) -> None:
        super().__init__()
        self.failing = set(failing)
        self.error = error

    def _check(self, method: str) -> None:
        if method in self.failing:
            raise self.error()

    async def create(self, record: TaskRecord, limits: Limits) -> None:
        self._check("create")
        await super().create(record, limits)

    async def working(self, key: TaskKey, message: str | None = None) -> TaskRecord | None:
        self._check("working")
        return await super().working(key, message)

    async def ask(self, key: TaskKey, requests: bytes) -> TaskRecord | None:
        self._check("ask")
        return await super().ask(key, requests)

    async def finish(self, key: TaskKey, status: TaskStatus, **payload: Any) -> TaskRecord | None:
        self._check("finish")
        return await super().finish(key, status, **payload)

    async def take_responses(self, key: TaskKey) -> bytes | None:
        if "take_responses" in self.failing:
            self.failing.discard("take_responses")  # once: as if another took them
            return None
        return await super().take_responses(key)


def test_a_store_that_cannot_create_is_503() -> None:
    with TestClient(Server(Life, task_store=FailingStore("create"), limits=LIMITS)) as client:
        for tool_name in ("job", "begin"):
            response = call(client, tool_name)
            assert response.status == 503
            assert error(response) == {
                "code": -32603,
                "message": "Task store unavailable; retry later",
            }
        assert events == []


def test_a_progress_hint_the_store_cannot_keep_is_dropped() -> None:
    with TestClient(Server(Life, task_store=FailingStore("working"), limits=LIMITS)) as client:
        done = reach(client, start(client, "quick"), "completed")
        assert "statusMessage" not in done


def test_an_end_the_store_cannot_keep_now_is_stored_once_it_can(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = FailingStore("finish")
    with TestClient(Server(Life, task_store=store, limits=LIMITS)) as client:
        task_id = start(client, "job", {"text": "later"})
        gates("job").set()
        with caplog.at_level(logging.WARNING, "mcpkit.server"):
            until(lambda: "a task's end cannot be stored now; trying again" in caplog.text)
            assert result(get(client, task_id))["status"] == "working"  # meanwhile
            store.failing.clear()
            done = reach(client, task_id, "completed")
        assert done["result"]["content"] == [{"type": "text", "text": "job later"}]
    assert "could not be stored" not in caplog.text and task_id not in caplog.text


def test_a_failure_of_the_runner_s_own_fails_the_task(caplog: pytest.LogCaptureFixture) -> None:
    store = FailingStore("ask", error=RuntimeError)
    with TestClient(Server(Life, task_store=store, limits=LIMITS)) as client:
        gates("ask").set()
        with caplog.at_level(logging.ERROR, "mcpkit.server"):
            failed = reach(client, start(client, "ask", capabilities=WITH_FORMS), "failed")
        assert failed["error"] == INTERNAL
        assert "a task's work failed with RuntimeError" in caplog.text


def test_answers_the_work_did_not_get_are_asked_for_again() -> None:
    store = FailingStore("take_responses")
    with TestClient(Server(Life, task_store=store, limits=LIMITS)) as client:
        gates("ask").set()
        task_id = start(client, "ask", capabilities=WITH_FORMS)
        assert reach(client, task_id, "input_required")["inputRequests"] == {"1:confirm": FORM}
        update(client, task_id, {"1:confirm": {"action": "accept"}})
        assert reach(client, task_id, "input_required")["inputRequests"] == {"2:confirm": FORM}
        update(client, task_id, {"2:confirm": {"action": "accept"}})
        assert reach(client, task_id, "completed")["result"]["content"][0]["text"] == "confirmed"
        assert events == [("ask", {}), ("ask", {}), ("ask", {"confirm": {"action": "accept"}})]


def test_a_task_ended_elsewhere_while_its_work_ran(
    store: MemoryTaskStore, server: Server, client: TestClient
) -> None:
    error_object = b'{"code":-32603,"message":"Internal error"}'
    for tool_name in ("job", "ask"):
        task_id = start(client, tool_name, capabilities=WITH_FORMS)
        on_loop(client, store.finish(key(task_id), TaskStatus.FAILED, error=error_object))
        gates(tool_name).set()
        until(lambda: runner(server).running == 0)
        failed = result(get(client, task_id))
        assert failed["status"] == "failed" and failed["error"] == INTERNAL


# --- configuration --------------------------------------------------------------------------


@endpoint(path="/mcp", name="plain", version="1.0.0", revisions=MODERN_ONLY)
class Plain:
    @tool
    def echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)


@endpoint(path="/mcp", name="old", version="1.0.0", revisions={Revision.V2025_11_25})
class OldOnly:
    @tool(task_support=OPTIONAL)
    def echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)


def test_a_task_tool_needs_a_task_store() -> None:
    advice = (
        r"a tool may run as a task \(task_support, or a method returning TaskCreatedResult\): "
        r"give the server a task_store, SqliteTaskStore\('tasks.db'\)"
    )
    with pytest.raises(ConfigurationError, match=advice):
        Server(Life)
    with pytest.raises(ConfigurationError, match=advice):
        build_engine(EndpointRegistry.from_classes(Life), EngineSettings())


def test_a_task_store_needs_a_task_tool() -> None:
    for target in (Plain, OldOnly):  # an OPTIONAL tool on 2025 alone never runs as a task
        with pytest.raises(ConfigurationError, match="task_store: no tool may run as a task"):
            Server(target, task_store=MemoryTaskStore())
        Server(target)


@pytest.mark.parametrize("store", [object(), "tasks.db"])
def test_a_task_store_must_be_a_task_store(store: object) -> None:
    with pytest.raises(ConfigurationError, match="task_store must be a TaskStore"):
        Server(Life, task_store=store)  # type: ignore[arg-type]


def test_a_swap_that_brings_task_tools_needs_a_task_store() -> None:
    server = Server(Plain)

    @endpoint(path="/mcp", name="plain", version="2.0.0", revisions=MODERN_ONLY)
    class WithTasks:
        @tool(task_support=OPTIONAL)
        def echo(self, text: str) -> CompleteResult:
            return CompleteResult.from_tool_text(text)

    with pytest.raises(ConfigurationError, match="give the server a task_store"):
        server.swap(WithTasks)


def test_a_required_tool_selects_only_2026() -> None:
    advice = (
        r"TaskSupport\.REQUIRED.*select only Revision\.V2026_07_28, or use TaskSupport\.OPTIONAL"
    )
    with pytest.raises(ConfigurationError, match=advice):

        @endpoint(
            path="/x", name="x", version="1", revisions={Revision.V2026_07_28, Revision.V2025_11_25}
        )
        class Both:
            @tool(task_support=TaskSupport.REQUIRED)
            def echo(self) -> CompleteResult:
                raise AssertionError

    with pytest.raises(ConfigurationError, match=advice):
        ToolRegistration.advanced(
            name="echo",
            revisions={Revision.V2025_06_18},
            arguments=JsonObject,
            handler=_advanced,
            task_support=TaskSupport.REQUIRED,
        )


def _advanced(ctx: RequestContext, arguments: Any, features: InvocationFeatures) -> CompleteResult:
    return CompleteResult.from_tool_text("x")


@pytest.mark.parametrize("factory", ["typed", "advanced", "json_object", "authored"])
def test_task_support_must_be_a_task_support(factory: str) -> None:
    options: dict[str, Any] = {
        "name": "echo",
        "revisions": MODERN_ONLY,
        "task_support": "optional",
    }
    if factory == "typed":
        options.update(arguments=JsonObject, output=dict, handler=_advanced)
    elif factory == "advanced":
        options.update(arguments=JsonObject, handler=_advanced)
    elif factory == "json_object":
        options.update(handler=_advanced)
    else:
        options.update(input_schema={"type": "object"}, handler=_advanced)
    with pytest.raises(ConfigurationError, match="task_support must be a TaskSupport"):
        getattr(ToolRegistration, factory)(**options)


def test_task_support_on_each_factory_is_kept() -> None:
    registration = ToolRegistration.json_object(
        name="echo", revisions=MODERN_ONLY, handler=_advanced, task_support=OPTIONAL
    )
    assert registration.task_support is OPTIONAL and registration.managed_task
    plain = ToolRegistration.json_object(name="echo", revisions=MODERN_ONLY, handler=_advanced)
    assert plain.task_support is TaskSupport.FORBIDDEN and not plain.managed_task


def test_a_method_creating_its_task_takes_no_task_support() -> None:
    advice = "creates its task itself and always runs as one: leave task_support out"
    with pytest.raises(ConfigurationError, match=advice):

        @endpoint(path="/x", name="x", version="1", revisions=MODERN_ONLY)
        class Creates:
            @tool(task_support=OPTIONAL)
            async def begin(self, features: InvocationFeatures) -> TaskCreatedResult[Done]:
                raise AssertionError


def test_a_typed_task_selects_only_2026() -> None:
    with pytest.raises(ConfigurationError, match=r"must select only Revision\.V2026_07_28"):

        @endpoint(path="/x", name="x", version="1", revisions={Revision.V2025_11_25})
        class Old:
            @tool
            async def begin(self, features: InvocationFeatures) -> TaskCreatedResult[Done]:
                raise AssertionError


# --- discovery ------------------------------------------------------------------------------


@endpoint(
    path="/both",
    name="both",
    version="1.0.0",
    revisions={Revision.V2026_07_28, Revision.V2025_11_25},
)
class Both:
    @tool(task_support=OPTIONAL)
    def echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)


@endpoint(path="/none", name="none", version="1.0.0", revisions=MODERN_ONLY)
class NoTasks:
    @tool
    def echo(self, text: str) -> CompleteResult:
        return CompleteResult.from_tool_text(text)


def test_a_server_without_tasks_starts_and_stops() -> None:
    with TestClient(Server(Plain)) as client:
        assert "extensions" not in result(post(client, "server/discover", {}))["capabilities"]


def test_discover_advertises_the_extension_exactly_where_a_tool_supports_tasks() -> None:
    registry = EndpointRegistry.from_classes(Both, NoTasks)
    both, none = registry.endpoint_for_path("/both"), registry.endpoint_for_path("/none")
    assert both is not None and none is not None
    assert both.tasks and not none.tasks
    assert both.capabilities(Revision.V2026_07_28)["extensions"] == {TASKS_EXTENSION: {}}
    assert "extensions" not in both.capabilities(Revision.V2025_11_25)
    assert "extensions" not in none.capabilities(Revision.V2026_07_28)
    with TestClient(Server(registry, task_store=MemoryTaskStore())) as client:
        found = result(post(client, "server/discover", {}, path="/both"))
        assert found["capabilities"]["extensions"] == {TASKS_EXTENSION: {}}
        assert (
            "extensions"
            not in result(post(client, "server/discover", {}, path="/none"))["capabilities"]
        )
        initialize = handshake_request(
            "initialize",
            {
                "protocolVersion": NOVEMBER,
                "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"},
            },
        )
        old = client.post("/both", initialize, headers={"MCP-Protocol-Version": NOVEMBER})
        assert "extensions" not in result(old)["capabilities"]


def test_declares_tasks() -> None:
    assert declares_tasks(TASKS)
    assert declares_tasks(JsonObject({"extensions": JsonObject({TASKS_EXTENSION: JsonObject()})}))
    for capabilities in (None, {}, {"extensions": None}, {"extensions": {TASKS_EXTENSION: 1}}):
        assert not declares_tasks(capabilities)
    assert tasks_capability() == {"extensions": {TASKS_EXTENSION: {}}}
    assert mcpkit.TaskSupport("required") is TaskSupport.REQUIRED


def test_response_answers() -> None:
    assert response_answers("elicitation/create", JsonObject({"action": "decline"}))
    assert not response_answers("elicitation/create", JsonObject({"ignored": True}))
    assert not response_answers("sampling/createMessage", JsonObject({"action": "decline"}))
    assert response_answers("roots/list", JsonObject({"roots": ()}))
    assert not response_answers("tools/call", JsonObject({"action": "decline"}))
    assert not response_answers(None, JsonObject({"action": "decline"}))


# --- recovery -------------------------------------------------------------------------------


def origin(arguments: object, capabilities: object = None) -> bytes:
    """A managed task's stored call, as ``tools/call`` keeps it."""
    value: dict[str, object] = {"arguments": arguments}
    if capabilities is not None:
        value["clientCapabilities"] = capabilities
    return encode(from_python(value))


def record(
    tool_name: str = "again",
    *,
    status: TaskStatus = TaskStatus.WORKING,
    managed: bool = True,
    rerun: bool = True,
    endpoint: str = "/mcp",
    arguments: bytes | None = None,
    owner: str | None = None,
) -> TaskRecord:
    now = time.time()
    return TaskRecord(
        task_id=new_task_id(),
        owner=owner,
        endpoint=endpoint,
        tool=tool_name,
        status=status,
        created_at=now,
        updated_at=now,
        ttl_seconds=TTL,
        managed=managed,
        rerun=rerun,
        arguments=arguments,
        input_requests=b'{"1:confirm":{}}' if status is TaskStatus.INPUT_REQUIRED else None,
    )


def _keep(store: Any, *records: TaskRecord) -> None:
    async def keep() -> None:
        for kept in records:
            await store.create(kept, LIMITS)

    asyncio.run(keep())


def test_recovery_after_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    capabilities = {**TASKS, "elicitation": {"form": {}}}
    rerun = record(arguments=origin({"text": "x"}, capabilities))
    waiting = record(
        status=TaskStatus.INPUT_REQUIRED, arguments=origin({"text": "y"}, capabilities)
    )
    failed = {
        "not idempotent": record("job", rerun=False, arguments=origin({}, TASKS)),
        "endpoint gone": record(endpoint="/gone", arguments=origin({"text": "x"}, TASKS)),
        "tool gone": record("vanished", arguments=origin({"text": "x"}, TASKS)),
        "no call kept": record(arguments=None),
        "not an object": record(arguments=b"[1]"),
        "arguments not an object": record(arguments=origin(1, TASKS)),
        "no capabilities": record(arguments=origin({"text": "x"})),
        "unreadable call": record(arguments=b'{"arguments": {"text": '),
        "no longer idempotent": record("job", arguments=origin({"text": "x"}, TASKS)),
        "creates its own tasks now": record("begin", arguments=origin({}, TASKS)),
        "no longer a task tool": record("plain", arguments=origin({}, TASKS)),
        "owned": record("job", rerun=False, owner="alice", arguments=origin({}, TASKS)),
    }
    application = record("begin", managed=False, rerun=False)
    ended = record("job", rerun=False)
    first = SqliteTaskStore(path)
    _keep(first, rerun, waiting, application, ended, *failed.values())
    asyncio.run(first.finish(ended.key, TaskStatus.COMPLETED, result=b'{"content":[]}'))
    asyncio.run(first.close())

    store = SqliteTaskStore(path)
    try:
        with TestClient(Server(Life, task_store=store, limits=LIMITS)) as client:
            for name, lost in failed.items():
                again = stored(store, lost.task_id, lost.owner, lost.endpoint)
                assert again is not None and again.status is TaskStatus.FAILED, name
                assert decode(again.error or b"") == INTERRUPTED, name
            assert result(get(client, failed["not idempotent"].task_id))["error"] == INTERRUPTED
            # the idempotent ones run again, from their stored call
            until(lambda: len([e for e in events if e[0] == "again"]) == 2)
            assert ("again", "x", capabilities) in events
            assert result(get(client, rerun.task_id))["status"] == "working"
            gates("again x").set()
            gates("again y").set()
            done = reach(client, rerun.task_id, "completed")
            assert done["result"]["content"] == [{"type": "text", "text": "again x"}]
            assert reach(client, waiting.task_id, "completed")["result"]["content"][0]["text"] == (
                "again y"
            )
            # the application's own task, and one that had ended, are left alone
            untouched = stored(store, application.task_id)
            assert untouched is not None and untouched.status is TaskStatus.WORKING
            assert result(get(client, ended.task_id))["result"] == {"content": []}
            assert [e for e in events if isinstance(e, str)] == []  # neither job nor plain ran
    finally:
        asyncio.run(store.close())


def test_recovery_at_the_first_task_request_without_a_lifespan(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    lost = record("job", rerun=False, arguments=origin({}, TASKS))
    first = SqliteTaskStore(path)
    _keep(first, lost)
    asyncio.run(first.close())
    store = SqliteTaskStore(path)
    try:
        server = Server(Life, task_store=store, limits=LIMITS)
        with TestClient(server, lifespan=False) as client:
            assert status_of(store, lost.task_id) is TaskStatus.WORKING
            assert result(get(client, lost.task_id))["error"] == INTERRUPTED
    finally:
        asyncio.run(store.close())


def test_a_restart_with_tasks_running(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    store = SqliteTaskStore(path)
    try:
        with TestClient(Server(Life, task_store=store, limits=LIMITS)) as client:
            lost = start(client, "job", {"text": "lost"})
            kept = start(client, "again", {"text": "kept"})
            until(lambda: len(events) == 2)
        # the server stopped: its handlers were cancelled, and both tasks left as stored
        assert "job: cancelled" in events and "again kept: cancelled" in events
        assert status_of(store, lost) is TaskStatus.WORKING
        assert status_of(store, kept) is TaskStatus.WORKING
    finally:
        asyncio.run(store.close())
    events.clear()
    store = SqliteTaskStore(path)
    try:
        with TestClient(Server(Life, task_store=store, limits=LIMITS)) as client:
            assert result(get(client, lost))["error"] == INTERRUPTED
            gates("again kept").set()
            done = reach(client, kept, "completed")
            assert done["result"]["content"] == [{"type": "text", "text": "again kept"}]
            assert events == [("again", "kept", dict(TASKS))]
    finally:
        asyncio.run(store.close())


class Interrupted(MemoryTaskStore):
    """A memory store that reports tasks a previous process left (as a durable one would)."""

    def __init__(self, *left: TaskRecord) -> None:
        super().__init__()
        self.left = list(left)

    async def interrupted(self) -> list[TaskRecord]:
        return list(self.left)


def test_an_interrupted_task_that_is_gone_by_the_time_it_would_run_again() -> None:
    gone = record(arguments=origin({"text": "x"}, TASKS))  # never stored
    store = Interrupted(gone)
    with TestClient(Server(Life, task_store=store, limits=LIMITS)):
        pass
    assert events == [] and len(store) == 0


# --- expiry and stopping --------------------------------------------------------------------


class Clocked(MemoryTaskStore):
    """A memory store on a clock the test moves, whose ``expire`` reads that clock; ``expire``
    fails once when told."""

    def __init__(self) -> None:
        self.offset = 0.0
        super().__init__(clock=self.now)
        self.fail_expire = 0

    def now(self) -> float:
        return time.time() + self.offset

    async def expire(self, now: float) -> list[TaskKey]:
        if self.fail_expire:
            self.fail_expire -= 1
            raise TaskStoreUnavailable()
        return await super().expire(self.now())


def test_an_expired_task_is_removed_and_its_work_stopped() -> None:
    store = Clocked()
    server = Server(Life, task_store=store, limits=SHORT)
    with TestClient(server) as client:
        done = start(client, "quick")
        reach(client, done, "completed")
        running = start(client, "job", {"text": "forever"})
        until(lambda: "job: forever" in events)
        store.fail_expire = 1  # the sweeper carries on after a failure
        store.offset = 2.0
        until(lambda: len(store) == 0)
        until(lambda: "job: cancelled" in events)
        assert error(get(client, done)) == NOT_FOUND
        assert error(get(client, running)) == NOT_FOUND
        until(lambda: runner(server).running == 0)
        # the sweeper ends once nothing is kept, and starts again with the next task
        store.offset = 0.0
        again = start(client, "quick")
        reach(client, again, "completed")


def test_a_task_expires_after_its_ttl_in_real_time() -> None:
    store = MemoryTaskStore()
    with TestClient(Server(Life, task_store=store, limits=SHORT)) as client:
        task_id = start(client, "quick")
        created = reach(client, task_id, "completed")
        assert created["ttlMs"] == 1000
        until(lambda: len(store) == 0, seconds=3.0)
        assert error(get(client, task_id)) == NOT_FOUND


# --- the runner and the wire forms, directly ------------------------------------------------


def test_the_runner_answers_none_for_a_task_it_does_not_hold() -> None:
    async def scenario() -> None:
        tasks = TaskRunner(MemoryTaskStore(), LIMITS)
        nobody = key("A" * 43)
        assert await tasks.answer(nobody, {"1:x": b"{}"}) is None
        assert await tasks.cancel(nobody) is None
        await tasks.shutdown()  # never started: no sweeper to stop

    asyncio.run(scenario())


JOB = ToolRegistration.json_object(
    name="job", revisions=MODERN_ONLY, handler=_advanced, task_support=OPTIONAL
)


def test_a_runner_outside_an_engine() -> None:
    """No engine: nothing resumes an interrupted task, no one is told of changes, and the work
    is the runner's caller's own (asking with no progress reported, or reporting twice)."""
    lost = record(arguments=origin({"text": "x"}, TASKS))  # idempotent, but no work to resume
    store = Interrupted(lost)
    _keep(store, lost)
    tasks = TaskRunner(store, LIMITS)

    async def until_status(task_key: TaskKey, status: TaskStatus) -> TaskRecord:
        while True:
            found = await store.get(task_key)
            assert found is not None
            if found.status is status:
                return found
            await asyncio.sleep(0.001)

    async def asking(running: Any) -> bytes:
        deadline = asyncio.get_running_loop().time() + WAIT
        answers = await tasks.ask(running, {"1:x": FORM}, deadline)
        return encode(from_python({"content": [], "answers": answers}))

    async def reporting(running: Any) -> bytes:
        assert tasks.progress(running) == tasks.progress(running)  # one per task
        tasks.progress(running)(JsonObject({"progress": 1, "message": "once"}))
        return b'{"content":[]}'

    async def scenario() -> None:
        await tasks.ready()
        interrupted = await store.get(lost.key)
        assert interrupted is not None and interrupted.status is TaskStatus.FAILED
        assert decode(interrupted.error or b"") == INTERRUPTED
        assert await tasks.ready() is store  # recovered once
        created = await tasks.create(owner="o", endpoint="/mcp", tool=JOB, managed=True)
        assert not created.rerun and created.arguments is None  # no call kept
        tasks.launch(created, asking)
        await until_status(created.key, TaskStatus.INPUT_REQUIRED)
        assert await tasks.answer(created.key, {"1:x": b'{"action":"accept"}'})
        done = await until_status(created.key, TaskStatus.COMPLETED)
        assert decode(done.result or b"") == {
            "content": [],
            "answers": {"1:x": {"action": "accept"}},
        }
        reported = await tasks.create(owner="o", endpoint="/mcp", tool=JOB, managed=True)
        tasks.launch(reported, reporting)
        await until_status(reported.key, TaskStatus.COMPLETED)
        await tasks.shutdown()

    asyncio.run(scenario())


def test_operations_without_a_runner_refuse_task_work(caplog: pytest.LogCaptureFixture) -> None:
    engine = build_engine(EndpointRegistry.from_classes(Plain), EngineSettings())
    assert engine.operations.tasks is None
    with caplog.at_level(logging.ERROR, "mcpkit.server"), pytest.raises(InternalError):
        engine.operations._runner()
    assert "a task without a task store" in caplog.text


def test_the_wire_forms() -> None:
    assert timestamp(0.0) == "1970-01-01T00:00:00.000Z"
    assert timestamp(1_700_000_000.1234) == "2023-11-14T22:13:20.123Z"
    base = record("job", rerun=False)
    message = decode(created_message(7, base, None, LIMITS))
    assert isinstance(message, Mapping)
    created = message["result"]
    assert isinstance(created, Mapping)
    assert "_meta" not in created and created["resultType"] == "task"
    assert created["ttlMs"] == 120_000 and created["pollIntervalMs"] == 1000
    noted = TaskRecord(**{**_fields(base), "status_message": "half", "ttl_seconds": 0.0001})
    body = decode(detailed_body(noted, LIMITS, result_type=False, meta={"k": 1}))
    assert body == {
        "taskId": base.task_id,
        "status": "working",
        "statusMessage": "half",
        "createdAt": timestamp(base.created_at),
        "lastUpdatedAt": timestamp(base.updated_at),
        "ttlMs": 1,
        "pollIntervalMs": 1000,
        "_meta": {"k": 1},
    }
    failed = TaskRecord(**{**_fields(base), "status": TaskStatus.FAILED, "error": b'{"code":1}'})
    assert detailed_message(3, failed, None, LIMITS).endswith(b',"error":{"code":1}}}')
    assert subscription_meta("L") == {"io.modelcontextprotocol/subscriptionId": "L"}


def _fields(kept: TaskRecord) -> dict[str, Any]:
    return {name: getattr(kept, name) for name in TaskRecord.__dataclass_fields__}


# --- fixtures -------------------------------------------------------------------------------


@pytest.fixture
def store() -> MemoryTaskStore:
    return MemoryTaskStore()


@pytest.fixture
def server(store: MemoryTaskStore) -> Server:
    return Server(Life, task_store=store, limits=LIMITS)


@pytest.fixture
def client(server: Server) -> Iterator[TestClient]:
    with TestClient(server) as test_client:
        yield test_client
