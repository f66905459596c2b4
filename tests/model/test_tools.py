"""Tool registrations: the five programmatic shapes and every registration rule (TR-01..17,
SP-01..05, LG-01..04, MH-06)."""

from __future__ import annotations

import functools
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Annotated, Any, TypedDict

import pytest

from mcpkit.errors import ConfigurationError, SchemaError
from mcpkit.json import JsonObject
from mcpkit.limits import Limits
from mcpkit.model import Icon, Revision
from mcpkit.model._context import (
    CancellationToken,
    InvocationFeatures,
    RequestContext,
    ToolArguments,
)
from mcpkit.model._input import (
    InputRequestDeclaration,
    InputRequestKind,
    RequestStateMode,
    Requirement,
)
from mcpkit.model._results import (
    CompleteResult,
    InputRequiredResult,
    OperationResult,
    TaskCreatedResult,
)
from mcpkit.model._tool_annotations import ToolAnnotations, ToolShape
from mcpkit.model._tools import OperationHandler, ToolHandler, ToolRegistration
from mcpkit.schema import Arg, Outcome, ToolSchema

MODERN = frozenset({Revision.V2026_07_28})
ALL = frozenset(Revision)
JUNE = Revision.V2025_06_18
NOVEMBER = Revision.V2025_11_25


@dataclass(frozen=True)
class Query:
    query: str
    limit: int | None = None


@dataclass(frozen=True)
class Item:
    sku: str
    name: str


@dataclass(frozen=True)
class Found:
    items: list[Item]


@dataclass(frozen=True)
class Scoped:
    tenant: Annotated[str, Arg(header="Tenant")]
    query: str


class Filters(TypedDict):
    colour: str


class Colour(Enum):
    RED = "red"


def search(
    ctx: RequestContext, arguments: ToolArguments[Query], features: InvocationFeatures
) -> Found:
    return Found([])


def operation(
    ctx: RequestContext, arguments: ToolArguments[Query], features: InvocationFeatures
) -> OperationResult:
    return CompleteResult.from_tool_text(arguments.converted.query)


def raw(
    ctx: RequestContext, arguments: ToolArguments[JsonObject], features: InvocationFeatures
) -> OperationResult:
    return CompleteResult.from_tool_text("ok")


def _document(schema: ToolSchema | None) -> JsonObject:
    assert schema is not None and isinstance(schema.document, JsonObject)
    return schema.document


def _any(value: object) -> Any:
    """Pass a deliberately wrong value past the type checker."""
    return value


def _typed(**overrides: Any) -> ToolRegistration:
    options: dict[str, Any] = {
        "name": "catalog.search",
        "revisions": MODERN,
        "arguments": Query,
        "output": Found,
        "handler": search,
    }
    return ToolRegistration.typed(**(options | overrides))


def _advanced(**overrides: Any) -> ToolRegistration:
    options: dict[str, Any] = {
        "name": "catalog.edit",
        "revisions": MODERN,
        "arguments": Query,
        "handler": operation,
    }
    return ToolRegistration.advanced(**(options | overrides))


def _authored(**overrides: Any) -> ToolRegistration:
    options: dict[str, Any] = {
        "name": "catalog.raw",
        "revisions": MODERN,
        "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
        "handler": raw,
    }
    return ToolRegistration.authored(**(options | overrides))


def _json_object(**overrides: Any) -> ToolRegistration:
    options: dict[str, Any] = {"name": "catalog.any", "revisions": MODERN, "handler": raw}
    return ToolRegistration.json_object(**(options | overrides))


def _typed_task(**overrides: Any) -> ToolRegistration:
    options: dict[str, Any] = {
        "name": "catalog.export",
        "revisions": MODERN,
        "arguments": Query,
        "output": Found,
        "operation_handler": operation,
    }
    return ToolRegistration.typed_task(**(options | overrides))


FACTORIES = [_typed, _typed_task, _advanced, _json_object, _authored]
ADVANCED_FACTORIES = [_advanced, _json_object, _authored]


# --- the five shapes ---------------------------------------------------------------------------


def test_tr06_typed_derives_input_and_output_schemas() -> None:
    """TR-06: the typed stage: the handler's ``A`` is bound from the JSON arguments and its
    ``R`` converts to the structured content (which the server writes on every call)."""
    tool = ToolRegistration.typed(
        name="catalog.search",
        revisions={Revision.V2026_07_28, Revision.V2025_11_25},
        arguments=Query,
        output=Found,
        handler=search,
        title="Catalog search",
        description="Searches visible catalog items",
        annotations=ToolAnnotations(read_only=True, idempotent=True),
    )
    assert tool.shape is ToolShape.TYPED
    assert tool.name == "catalog.search"
    assert tool.revisions == frozenset({Revision.V2026_07_28, Revision.V2025_11_25})
    assert tool.handler is search
    assert tool.is_async is False
    assert tool.input_model is not None and tool.input_schema is tool.input_model.schema
    assert tool.input_schema.document == JsonObject(
        {
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["query"],
            "additionalProperties": False,
        }
    )
    assert tool.output_model is not None and tool.output_schema is tool.output_model.schema
    assert _document(tool.output_schema)["type"] == "object"
    assert tool.input_model.bind(JsonObject({"query": "x"})) == Query("x")
    assert tool.output_model.to_json(Found([Item("1", "a")])) == JsonObject(
        {"items": [{"sku": "1", "name": "a"}]}
    )
    assert tool.title == "Catalog search"
    assert tool.description == "Searches visible catalog items"
    assert tool.annotations == ToolAnnotations(read_only=True, idempotent=True)


def test_sp01_optional_fields_default_to_absent() -> None:
    tool = _typed()
    assert (tool.title, tool.description, tool.annotations, tool.rate_limiter) == (None,) * 4
    assert tool.icons == ()
    assert tool.mirror_structured_content is True
    assert tool.input_requests == ()
    assert tool.request_state_mode is RequestStateMode.NONE


def test_tr07_tr17_typed_task_keeps_the_eventual_output_schema() -> None:
    """TR-07, TR-17 (retention): the task-required typed stage takes an operation handler and
    keeps the eventual output type's model and schema (enforcing it when ``tasks/get`` returns
    the result is the task runtime's)."""
    tool = _typed_task()
    assert tool.shape is ToolShape.TYPED_TASK
    assert tool.handler is operation
    assert tool.output_model is not None and tool.output_schema is tool.output_model.schema
    assert tool.output_model.to_json(Found([])) == JsonObject({"items": []})
    assert tool.input_model is not None and tool.input_model.source is Query


@pytest.mark.parametrize("revision", [JUNE, NOVEMBER])
def test_tr07_typed_task_is_2026_only_because_2025_has_no_tasks(revision: Revision) -> None:
    """TR-07: a typed task tool is statically task-required; RV-06: tasks are modern-only, so it
    cannot select a 2025 revision."""
    with pytest.raises(ConfigurationError, match="task-required tool must select only"):
        _typed_task(revisions={revision, Revision.V2026_07_28})


def test_tr08_advanced_binds_arguments_and_publishes_no_output_schema() -> None:
    """TR-08: the ``argumentType`` stage: converted input, an operation-result handler, no
    output schema."""
    tool = _advanced()
    assert tool.shape is ToolShape.ADVANCED
    assert tool.handler is operation
    assert tool.input_model is not None and tool.input_schema is tool.input_model.schema
    assert tool.output_schema is None and tool.output_model is None


def test_tr09_json_object_publishes_the_fixed_object_schema() -> None:
    """TR-09: the ``jsonObjectArguments`` stage publishes the fixed ``{"type": "object"}`` and
    accepts any object."""
    tool = _json_object()
    assert tool.shape is ToolShape.JSON_OBJECT
    assert tool.input_schema.document == JsonObject({"type": "object"})
    assert tool.input_model is None and tool.output_schema is None
    assert tool.input_schema.evaluate(JsonObject({"anything": [1, None]})) is Outcome.VALID


def test_tr10_authored_compiles_and_publishes_the_exact_document() -> None:
    """TR-10: the ``inputSchema`` stage compiles the authored Profile 1 schema, validates with
    it and publishes the exact document."""
    document = {
        "type": "object",
        "properties": {"q": {"type": "string", "description": "Free text"}},
        "required": ["q"],
    }
    tool = _authored(input_schema=document)
    assert tool.shape is ToolShape.AUTHORED
    assert tool.input_schema.document == JsonObject(document)
    assert list(_document(tool.input_schema)) == ["type", "properties", "required"]
    assert tool.input_model is None and tool.output_schema is None
    assert tool.input_schema.evaluate(JsonObject({})) is Outcome.INVALID
    prebuilt = JsonObject(document)
    assert _authored(input_schema=prebuilt).input_schema.document is prebuilt


def test_tr11_any_typing_expression_is_an_argument_or_output_type() -> None:
    """TR-11: any typing expression, nested generics included, is an argument or output type."""
    tool = _typed(arguments=dict[str, Item], output=list[Item])
    assert _document(tool.input_schema)["type"] == "object"
    assert _document(tool.output_schema)["type"] == "array"
    typed_dict = _typed(arguments=Filters, output=Colour)
    assert _document(typed_dict.input_schema)["required"] == ["colour"]


def test_pk08_private_local_dataclasses_are_bindable() -> None:
    """PK-08: an underscore-named, function-local dataclass needs no export or registration to
    be an argument or output type: it derives, binds and converts like a public one."""

    @dataclass(frozen=True)
    class _Arguments:
        sku: str

    @dataclass(frozen=True)
    class _Stock:
        count: int

    tool = _typed(arguments=_Arguments, output=_Stock)
    assert tool.input_model is not None and tool.output_model is not None
    assert tool.input_model.bind(JsonObject({"sku": "A-1"})) == _Arguments("A-1")
    assert tool.output_model.to_json(_Stock(2)) == JsonObject({"count": 2})


# --- immutability and identity -----------------------------------------------------------------


def test_tr01_registrations_are_immutable() -> None:
    tool = _typed()
    with pytest.raises(AttributeError, match="immutable"):
        tool.name = "other"
    with pytest.raises(AttributeError, match="immutable"):
        del tool.title
    with pytest.raises(AttributeError):
        tool.extra = 1


def test_tr05_only_the_factories_build_a_registration() -> None:
    """TR-05: registrations come only from the per-stage keyword-only factories (the Pythonic
    typestate)."""
    with pytest.raises(TypeError, match=r"built by ToolRegistration\.typed"):
        ToolRegistration()
    with pytest.raises(TypeError):
        ToolRegistration.typed("catalog.search", MODERN, Query, Found, search)  # type: ignore[call-arg]


def test_tr05_a_handler_cannot_be_installed_without_the_model() -> None:
    """TR-05: a handler cannot be installed before the argument model (or schema) is fixed."""
    with pytest.raises(TypeError, match="arguments"):
        ToolRegistration.typed(name="a", revisions=MODERN, handler=search)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="input_schema"):
        ToolRegistration.authored(name="a", revisions=MODERN, handler=raw)  # type: ignore[call-arg]


def test_tr01_every_slot_is_set_by_every_factory() -> None:
    for factory in FACTORIES:
        tool = factory()
        for slot in ToolRegistration.__slots__:
            getattr(tool, slot)


def test_tr01_repr_is_short() -> None:
    tool = _typed(revisions={Revision.V2026_07_28, Revision.V2025_06_18})
    assert repr(tool) == "<ToolRegistration catalog.search typed [2025-06-18, 2026-07-28]>"


# --- name grammar (SP-03, SP-04) ---------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["a", "Z", "0", "_", "-", ".", "catalog.search", "a-b_c.D9", "x" * 128]
)
def test_sp03_sp04_valid_names(name: str) -> None:
    assert _typed(name=name).name == name


FULLWIDTH = "\uff46"  # looks like "f", is not ASCII


@pytest.mark.parametrize(
    "name",
    ["", "x" * 129, "a b", "a,b", "a/b", "a:b", "é", "a\n", "a\x00", "a\ud800", "tool!", FULLWIDTH],
)
@pytest.mark.parametrize("factory", FACTORIES)
def test_sp03_sp04_invalid_names_are_refused(factory: Any, name: str) -> None:
    with pytest.raises(ConfigurationError, match="must be 1 to 128 characters of"):
        factory(name=name)


def test_sp03_names_are_case_sensitive_and_kept_exactly() -> None:
    assert _typed(name="Catalog.Search").name == "Catalog.Search"


def test_sp04_a_name_must_be_a_str_and_is_stored_as_a_plain_str() -> None:
    with pytest.raises(ConfigurationError, match="a tool name must be a str"):
        _typed(name=_any(b"catalog"))

    class Name(str):
        pass

    assert type(_typed(name=Name("catalog")).name) is str


def test_sp04_a_long_refused_name_is_shown_truncated() -> None:
    with pytest.raises(ConfigurationError) as caught:
        _typed(name="y" * 10_000)
    assert "10000 characters" in str(caught.value)
    assert "y" * 41 not in str(caught.value)


# --- revisions (TR-03) -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "revisions", [{Revision.V2026_07_28}, frozenset(Revision), [JUNE, JUNE], (NOVEMBER,)]
)
def test_tr03_revisions_are_a_collection_of_revision_members(revisions: Any) -> None:
    assert _advanced(revisions=revisions).revisions == frozenset(revisions)


@pytest.mark.parametrize("factory", FACTORIES)
def test_tr03_revisions_must_not_be_empty(factory: Any) -> None:
    with pytest.raises(ConfigurationError, match="revisions must not be empty"):
        factory(revisions=set())


@pytest.mark.parametrize("revisions", [{"2026-07-28"}, [Revision.V2026_07_28, None]])
def test_tr03_revisions_must_be_exact_revision_members(revisions: Any) -> None:
    with pytest.raises(ConfigurationError, match="every revision must be a Revision member"):
        _typed(revisions=revisions)


@pytest.mark.parametrize("revisions", ["2026-07-28", Revision.V2026_07_28, Revision, None])
def test_tr03_revisions_must_be_a_set_list_or_tuple(revisions: Any) -> None:
    with pytest.raises(ConfigurationError, match="revisions must be a set of Revision"):
        _typed(revisions=revisions)


# --- handlers ------------------------------------------------------------------------------------


async def async_search(
    ctx: RequestContext, arguments: ToolArguments[Query], features: InvocationFeatures
) -> Found:
    return Found([])


async def async_raw(
    ctx: RequestContext, arguments: ToolArguments[JsonObject], features: InvocationFeatures
) -> OperationResult:
    return CompleteResult.from_tool_text("ok")


class AsyncCallable:
    async def __call__(
        self, ctx: RequestContext, arguments: ToolArguments[Query], features: InvocationFeatures
    ) -> Found:
        return Found([])


class SyncCallable:
    def __call__(
        self, ctx: RequestContext, arguments: ToolArguments[Query], features: InvocationFeatures
    ) -> Found:
        return Found([])


def test_tr13_handlers_may_be_async_def() -> None:
    assert _typed(handler=async_search).is_async is True
    assert _typed_task(operation_handler=_any(async_raw)).is_async is True
    for factory in ADVANCED_FACTORIES:
        assert factory(handler=async_raw).is_async is True


def test_tr13_handlers_may_be_callable_objects_partials_and_lambdas() -> None:
    assert _typed(handler=AsyncCallable()).is_async is True
    assert _typed(handler=SyncCallable()).is_async is False
    assert _typed(handler=functools.partial(async_search)).is_async is True
    assert _typed(handler=lambda ctx, arguments, features: Found([])).is_async is False
    assert _typed(handler=lambda *args: Found([])).is_async is False


def test_tr13_a_class_is_called_not_awaited_even_if_its_instances_are_async() -> None:
    class Handler:
        def __init__(self, ctx: object, arguments: object, features: object) -> None:
            pass

        async def __call__(self) -> None:
            pass

    assert _typed(handler=_any(Handler)).is_async is False


def test_tr13_a_builtin_without_a_signature_is_accepted() -> None:
    assert _typed(handler=_any(max)).handler is max


@pytest.mark.parametrize("factory", [_typed, _advanced, _json_object, _authored])
def test_tr13_the_handler_must_be_callable(factory: Any) -> None:
    with pytest.raises(ConfigurationError, match="the handler must be callable"):
        factory(handler="search")


def test_tr13_the_operation_handler_must_be_callable() -> None:
    with pytest.raises(ConfigurationError, match="the operation_handler must be callable"):
        _typed_task(operation_handler=None)


def _generator(ctx: object, arguments: object, features: object) -> Iterator[Found]:
    yield Found([])


async def _async_generator(
    ctx: object, arguments: object, features: object
) -> AsyncIterator[Found]:
    yield Found([])


@pytest.mark.parametrize("handler", [_generator, _async_generator])
def test_tr13_generator_handlers_are_refused(handler: Any) -> None:
    with pytest.raises(ConfigurationError, match="is a generator function"):
        _typed(handler=handler)


@pytest.mark.parametrize(
    "handler",
    [
        lambda ctx, arguments: None,
        lambda: None,
        lambda ctx, arguments, features, extra: None,
        lambda ctx, arguments, *, features: None,
    ],
)
@pytest.mark.parametrize("factory", FACTORIES)
def test_tr13_a_handler_must_take_ctx_arguments_and_features(factory: Any, handler: Any) -> None:
    key = "operation_handler" if factory is _typed_task else "handler"
    with pytest.raises(ConfigurationError, match="must accept three positional arguments"):
        factory(**{key: handler})


def _call(tool: ToolRegistration, arguments: ToolArguments[Any]) -> object:
    ctx = RequestContext(endpoint=None, revision=Revision.V2026_07_28, method="tools/call")
    return tool.handler(ctx, arguments, InvocationFeatures(CancellationToken()))


def _returning(result: OperationResult) -> OperationHandler[Query]:
    def handler(
        ctx: RequestContext, arguments: ToolArguments[Query], features: InvocationFeatures
    ) -> OperationResult:
        return result

    return handler


def test_tr13_typed_handlers_return_the_output_and_advanced_ones_an_operation_result() -> None:
    """TR-13: the typed complete path's handler (``ToolHandler[A]``) returns the output value
    itself; the advanced path's (``OperationHandler[A]``) returns a complete, input-required or
    task-created result."""
    arguments = ToolArguments(converted=Query("q"), raw=JsonObject({"query": "q"}))
    typed_handler: ToolHandler[Query] = search
    assert _call(_typed(handler=typed_handler), arguments) == Found([])
    results: list[OperationResult] = [
        CompleteResult.from_tool_text("done"),
        InputRequiredResult(request_state="state"),
        TaskCreatedResult[Found](task_id="task-1"),
    ]
    for result in results:
        assert _call(_advanced(handler=_returning(result)), arguments) is result


def test_hc02_the_advanced_handler_takes_ctx_arguments_and_features_and_may_raise() -> None:
    """HC-02: the advanced handler is ``handler(ctx, arguments, features) -> OperationResult``;
    the registration keeps it unwrapped, so what it raises reaches the caller (the server maps
    it)."""
    seen: list[tuple[object, ...]] = []

    def handle(
        ctx: RequestContext, arguments: ToolArguments[Query], features: InvocationFeatures
    ) -> OperationResult:
        seen.append((ctx, arguments, features))
        if arguments.converted.query == "boom":
            raise LookupError("no such item")
        return CompleteResult.from_tool_text(arguments.converted.query)

    tool = _advanced(handler=handle)
    assert tool.handler is handle and tool.input_model is not None
    raw = JsonObject({"query": "bolt"})
    arguments = ToolArguments(converted=tool.input_model.bind(raw), raw=raw)
    result = _call(tool, arguments)
    assert isinstance(result, CompleteResult) and result.to_json()["content"] == [
        {"type": "text", "text": "bolt"}
    ]
    ctx, received, features = seen[0]
    assert isinstance(ctx, RequestContext) and received is arguments
    assert isinstance(features, InvocationFeatures)
    boom = ToolArguments(converted=Query("boom"), raw=JsonObject({"query": "boom"}))
    with pytest.raises(LookupError, match="no such item"):
        _call(tool, boom)


# --- options (TR-12, TR-15) ----------------------------------------------------------------------


def test_tr15_every_shape_has_the_common_options() -> None:
    icon = Icon(src="https://example.com/icon.png")
    for factory in FACTORIES:
        tool = factory(
            title="T",
            description="D",
            annotations=ToolAnnotations(destructive=True),
            icons=[icon],
            mirror_structured_content=False,
        )
        assert tool.title == "T" and tool.description == "D"
        assert tool.annotations == ToolAnnotations(destructive=True)
        assert tool.icons == (icon,)
        assert tool.rate_limiter is None
        assert tool.mirror_structured_content is False
        assert factory(rate_limiter="per-tenant").rate_limiter == "per-tenant"  # a name


@pytest.mark.parametrize(
    ("option", "value", "problem"),
    [
        ("title", 7, "title must be a str or None"),
        ("title", "a\udc00", "title: text contains an unpaired surrogate"),
        ("description", b"d", "description must be a str or None"),
        ("description", "\ud800", "description: text contains an unpaired surrogate"),
        ("annotations", {"read_only": True}, "annotations must be a ToolAnnotations"),
        ("icons", "https://example.com/icon.png", "icons must be a tuple or list of Icon"),
        ("icons", ["https://example.com/icon.png"], "icons must be a tuple or list of Icon"),
        ("icons", None, "icons must be a tuple or list of Icon"),
        ("rate_limiter", "", "rate_limiter must name a limiter"),
        ("rate_limiter", 3, "rate_limiter must be a str or None"),
        ("mirror_structured_content", 1, "mirror_structured_content must be a bool"),
        ("mirror_structured_content", None, "mirror_structured_content must be a bool"),
    ],
)
@pytest.mark.parametrize("factory", FACTORIES)
def test_tr15_invalid_options_are_refused(
    factory: Any, option: str, value: object, problem: str
) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(problem)):
        factory(**{option: value})


def test_tr12_text_options_are_kept_exactly() -> None:
    tool = _typed(title="", description="  café\n🚀  ")
    assert tool.title == "" and tool.description == "  café\n🚀  "


# --- input requests and request state (TR-16) --------------------------------------------------


@pytest.mark.parametrize("option", ["input_requests", "request_state_mode"])
@pytest.mark.parametrize("factory", [_typed])
def test_tr16_typed_shapes_have_no_multi_round_options(factory: Any, option: str) -> None:
    """(A typed task's operation handler may gather input before it creates its task: the
    tasks tests cover its declarations.)"""
    with pytest.raises(TypeError, match=option):
        factory(**{option: None})


@pytest.mark.parametrize("factory", ADVANCED_FACTORIES)
def test_tr16_advanced_shapes_declare_input_requests_and_request_state(factory: Any) -> None:
    """TR-16: the advanced shapes take the kinds of input request they may emit (at most one
    declaration per kind, in the order given) and a request-state mode; the declared and the
    required kinds are precomputed for the server's per-call checks."""
    form = InputRequestDeclaration.elicitation_form(Requirement.REQUIRED)
    roots = InputRequestDeclaration.roots()
    tool = factory(
        input_requests=[form, roots],
        request_state_mode=RequestStateMode.FRAMEWORK_PROTECTED,
    )
    assert tool.input_requests == (form, roots)
    assert tool.request_state_mode is RequestStateMode.FRAMEWORK_PROTECTED
    assert tool.declared_kinds == {InputRequestKind.ELICITATION_FORM, InputRequestKind.ROOTS}
    assert tool.required_kinds == {InputRequestKind.ELICITATION_FORM}
    assert isinstance(tool.declared_kinds, frozenset)


@pytest.mark.parametrize("factory", FACTORIES)
def test_tr16_the_declarations_default_to_none(factory: Any) -> None:
    tool = factory()
    assert tool.input_requests == ()
    assert tool.request_state_mode is RequestStateMode.NONE
    assert tool.declared_kinds == tool.required_kinds == frozenset()


@pytest.mark.parametrize("factory", ADVANCED_FACTORIES)
def test_tr16_none_is_the_none_mode(factory: Any) -> None:
    assert factory(request_state_mode=None).request_state_mode is RequestStateMode.NONE
    explicit = factory(request_state_mode=RequestStateMode.NONE, input_requests=())
    assert explicit.request_state_mode is RequestStateMode.NONE


def test_tr16_the_declarations_are_copied() -> None:
    requests = [InputRequestDeclaration.sampling()]
    tool = _advanced(input_requests=requests)
    requests.append(InputRequestDeclaration.roots())
    assert tool.input_requests == (InputRequestDeclaration.sampling(),)


@pytest.mark.parametrize(
    ("input_requests", "problem"),
    [
        (None, "input_requests must be a list or tuple of InputRequestDeclaration"),
        ({"confirm": {}}, "input_requests must be a list or tuple of InputRequestDeclaration"),
        (
            [{"method": "roots/list"}],
            "every input_requests item must be an InputRequestDeclaration",
        ),
        (
            [InputRequestKind.ROOTS],
            "every input_requests item must be an InputRequestDeclaration",
        ),
        (
            [
                InputRequestDeclaration.sampling(),
                InputRequestDeclaration.sampling(Requirement.REQUIRED),
            ],
            "declares the input request kind SAMPLING twice",
        ),
    ],
)
@pytest.mark.parametrize("factory", ADVANCED_FACTORIES)
def test_tr16_invalid_input_requests_are_refused(
    factory: Any, input_requests: object, problem: str
) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(f"(revisions 2026-07-28): {problem}")):
        factory(input_requests=input_requests)


@pytest.mark.parametrize("mode", ["framework_protected", True, RequestStateMode])
def test_tr16_request_state_mode_must_be_a_member(mode: object) -> None:
    with pytest.raises(ConfigurationError, match="request_state_mode must be a RequestStateMode"):
        _advanced(request_state_mode=mode)


@pytest.mark.parametrize(
    "declarations",
    [
        {"input_requests": [InputRequestDeclaration.roots()]},
        {"input_requests": (InputRequestDeclaration.elicitation_url(Requirement.REQUIRED),)},
        {"request_state_mode": RequestStateMode.APPLICATION_PROTECTED},
        {"request_state_mode": RequestStateMode.FRAMEWORK_PROTECTED},
    ],
)
@pytest.mark.parametrize("revision", [JUNE, NOVEMBER])
@pytest.mark.parametrize("factory", ADVANCED_FACTORIES)
def test_tr16_multi_round_tools_may_select_2025_RV_06(
    factory: Any, revision: Revision, declarations: dict[str, Any]
) -> None:
    """TR-16, RV-06: a multi-round tool may select a 2025 revision (served within a session:
    the endpoint checks that, ``tests/model/test_input.py``)."""
    tool = factory(revisions={revision, Revision.V2026_07_28}, **declarations)
    assert tool.revisions == {revision, Revision.V2026_07_28}


@pytest.mark.parametrize("factory", ADVANCED_FACTORIES)
def test_tr16_no_declarations_are_fine_on_2025(factory: Any) -> None:
    tool = factory(revisions=ALL, request_state_mode=RequestStateMode.NONE, input_requests=[])
    assert tool.revisions == ALL


# --- typed derivation, 2025 object shape (LG-01..04, TD-09) ------------------------------------


@pytest.mark.parametrize("output", [list[Item], int, Item | None, dict[str, int] | None, Colour])
def test_lg01_lg02_non_object_outputs_are_fine_on_2026_only(output: object) -> None:
    """SP-07: on 2026-07-28 a (derived) output schema need not be ``type: object``; authored
    output schemas do not exist (P1-06)."""
    tool = _typed(output=output)
    assert tool.output_schema is not None


@pytest.mark.parametrize("output", [list[Item], int, Item | None, Colour, bool])
@pytest.mark.parametrize("revision", [JUNE, NOVEMBER])
def test_lg01_lg03_a_2025_tool_needs_an_object_output_at_registration(
    output: object, revision: Revision
) -> None:
    with pytest.raises(SchemaError, match="structured content must be an object on 2025"):
        _typed(revisions={revision, Revision.V2026_07_28}, output=output)


@pytest.mark.parametrize("output", [Found, dict[str, Item], Filters])
def test_lg02_object_outputs_are_fine_on_every_revision(output: object) -> None:
    tool = _typed(revisions=ALL, output=output)
    assert _document(tool.output_schema)["type"] == "object"


def test_lg04_errors_name_the_tool_and_its_revisions_in_order() -> None:
    with pytest.raises(SchemaError) as caught:
        _typed(name="catalog.list", revisions=[Revision.V2026_07_28, JUNE], output=list[Item])
    message = str(caught.value)
    assert message.startswith("tool 'catalog.list' (revisions 2025-06-18, 2026-07-28): ")
    assert isinstance(caught.value.__cause__, SchemaError)


@pytest.mark.parametrize("factory", [_typed, _typed_task])
@pytest.mark.parametrize("output", [str, Annotated[str, Arg(description="x")]])
def test_td09_a_bare_str_output_is_refused(factory: Any, output: object) -> None:
    with pytest.raises(SchemaError, match=r"tool 'catalog\..*a bare str output is ambiguous"):
        factory(output=output)


@pytest.mark.parametrize("factory", [_typed, _typed_task, _advanced])
@pytest.mark.parametrize("arguments", [int, str, list[Query], Query | None, Colour])
def test_td08_input_roots_must_be_objects(factory: Any, arguments: object) -> None:
    with pytest.raises(SchemaError, match=r"tool 'catalog\..*cannot be a tool input"):
        factory(arguments=arguments)


@pytest.mark.parametrize("factory", [_typed, _typed_task, _advanced])
def test_td08_function_parameters_are_left_to_the_decorators(factory: Any) -> None:
    def parameters(query: str) -> None:
        pass

    with pytest.raises(ConfigurationError, match="belong to the decorators"):
        factory(arguments=parameters)
    with pytest.raises(ConfigurationError, match="belong to the decorators"):
        factory(arguments=SyncCallable().__call__)


def test_td01_unsupported_types_are_refused_with_the_tool_named() -> None:
    @dataclass
    class Mutable:
        x: int

    with pytest.raises(SchemaError, match=r"tool 'catalog\.search'"):
        _typed(arguments=Mutable)
    with pytest.raises(SchemaError, match=r"tool 'catalog\.search'"):
        _typed(output=set[int])


def test_jl05_limits_bound_the_derived_and_authored_schemas() -> None:
    small = Limits(max_schema_nodes=1)
    with pytest.raises(SchemaError, match=r"tool 'catalog\.search'"):
        _typed(limits=small)
    with pytest.raises(SchemaError, match=r"tool 'catalog\.raw'"):
        _authored(limits=small)
    tight = Limits(max_evaluation_operations=5)
    for factory in FACTORIES:
        assert factory(limits=tight).input_schema.limits is tight
    assert _typed(limits=tight).output_schema.limits is tight  # type: ignore[union-attr]


# --- authored schemas (P1) -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ({"type": "array"}, 'a tool input schema must be an object with "type": "object"'),
        (True, 'a tool input schema must be an object with "type": "object"'),
        ({"type": "object", "oneOf": []}, "keyword 'oneOf' is not in Profile 1"),
        ({"type": "object", "$ref": "https://example.com/s"}, "schema at #"),
        ({"type": "object", "properties": {"a": {1, 2}}}, "the input schema is not JSON data"),
        ({"type": "object", "minimum": float("nan")}, "the input schema is not JSON data"),
    ],
)
def test_p1_authored_schemas_are_compiled_at_registration(document: object, problem: str) -> None:
    with pytest.raises(SchemaError) as caught:
        _authored(revisions=ALL, input_schema=document)
    message = str(caught.value)
    assert message.startswith("tool 'catalog.raw' (revisions 2025-06-18, 2025-11-25, 2026-07-28)")
    assert problem in message


# --- mirrored headers (MH-06) --------------------------------------------------------------------

MIRRORED = {
    "type": "object",
    "properties": {"tenant": {"type": "string", "x-mcp-header": "Tenant"}},
    "required": ["tenant"],
}


def test_mh06_a_mirrored_authored_tool_on_2026_publishes_its_headers() -> None:
    tool = _authored(input_schema=MIRRORED)
    assert [header.suffix for header in tool.input_schema.headers] == ["Tenant"]


def test_mh06_a_mirrored_typed_tool_on_2026_publishes_its_headers() -> None:
    for factory in (_typed, _typed_task, _advanced):
        tool = factory(arguments=Scoped)
        assert [header.suffix for header in tool.input_schema.headers] == ["Tenant"]


@pytest.mark.parametrize("revision", [JUNE, NOVEMBER])
@pytest.mark.parametrize("factory", [_typed, _advanced])
def test_mh06_a_mirrored_typed_tool_must_select_only_2026(factory: Any, revision: Revision) -> None:
    with pytest.raises(ConfigurationError, match=r"x-mcp-header: Tenant.*only on 2026-07-28"):
        factory(arguments=Scoped, revisions={revision, Revision.V2026_07_28})


@pytest.mark.parametrize("revisions", [{JUNE}, {NOVEMBER}, ALL])
def test_mh06_a_mirrored_authored_tool_must_select_only_2026(revisions: Any) -> None:
    with pytest.raises(ConfigurationError) as caught:
        _authored(input_schema=MIRRORED, revisions=revisions)
    assert "must select only Revision.V2026_07_28" in str(caught.value)
    assert str(caught.value).startswith("tool 'catalog.raw' (revisions 2025-")


def test_mh06_tools_without_headers_may_select_2025() -> None:
    for factory in (_typed, _advanced, _json_object, _authored):
        assert factory(revisions=ALL).revisions == ALL
