"""Decorator authoring: what a decorated class builds and how its handlers call the methods
(seed 003 "Annotation-driven authoring"; AN-01..18, PK-01/02/04/09, CT-07, CT-12, HC-01, RG-02).

Refusals are in ``test_decorators_refusals.py``.
"""

import asyncio
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Optional

from mcpkit.errors import ArgumentsInvalid
from mcpkit.json import JsonObject
from mcpkit.model import (
    CachePolicy,
    CancellationToken,
    CompleteResult,
    InputRequiredResult,
    InvocationFeatures,
    ProgressReporter,
    PromptMessage,
    PromptOutput,
    RequestContext,
    RequestStateMode,
    ResourceDescriptor,
    ResourceKind,
    ResourceListPage,
    ResourceOutput,
    Revision,
    Role,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
    ToolArguments,
    ToolShape,
)
from mcpkit.model._decorators import (
    ToolSpec,
    UriParam,
    endpoint,
    prompt,
    resource,
    resource_list,
    tool,
)
from mcpkit.model._endpoint import Endpoint
from mcpkit.model._registry import EndpointRegistry
from mcpkit.schema import Arg

MODERN = Revision.V2026_07_28
NOVEMBER = Revision.V2025_11_25


@dataclass(frozen=True)
class Found:
    skus: list[str]


def context(method: str = "tools/call") -> RequestContext:
    return RequestContext(endpoint=None, revision=MODERN, method=method)


def features(*extra: object) -> InvocationFeatures:
    return InvocationFeatures(CancellationToken(), *extra)


def call_tool(ep: Endpoint, name: str, arguments: Mapping[str, object], *extra: object) -> Any:
    """Bind with the tool's input model and call its handler, as the server will."""
    registration = ep.find_tool(name, MODERN)
    assert registration is not None and registration.input_model is not None
    raw = JsonObject(arguments)
    converted = registration.input_model.bind(raw)
    return invoke(
        registration.handler, context(), ToolArguments(converted=converted, raw=raw),
        features(*extra),
    )  # fmt: skip


def invoke(handler: Callable[..., object], *args: object) -> Any:
    """Call a registration's handler as the server will, awaiting an ``async def`` one."""
    result = handler(*args)
    return asyncio.run(result) if inspect.iscoroutine(result) else result


def text_prompt(text: str) -> PromptOutput:
    return PromptOutput(messages=(PromptMessage(role=Role.USER, content=TextContent(text=text)),))


def text_resource(uri: str, text: str) -> ResourceOutput:
    return ResourceOutput(contents=(TextResourceContents(uri=uri, text=text),))


@endpoint(
    path="/inventory/mcp",
    name="inventory",
    version="1.0.0",
    revisions={MODERN, NOVEMBER},
    title="Inventory MCP",
    description="Inventory search",
    website_url="https://example.com/inventory",
    instructions="Prefer inventory.search before reading an item.",
    tool_rate_limiter="inventory",
    resource_list_cache=CachePolicy(1000, "public"),
    resource_template_list_cache=CachePolicy(2000, "private"),
)
class Inventory:
    """Declared in an order unlike the sorted one, to show CT-07."""

    @resource(uri="inventory://items/{sku}", name="item", mime_type="application/json")
    async def item(self, sku: str) -> ResourceOutput:
        return text_resource(f"inventory://items/{sku}", sku)

    @tool(name="inventory.search", title="Catalog search", read_only=True)
    def search(
        self,
        query: Annotated[str, Arg(description="Free text")],
        limit: int | None = None,
    ) -> Found:
        return Found([query] * (limit or 1))

    @prompt(name="inventory.summary", description="")
    def summary(self, sku: str) -> PromptOutput:
        return text_prompt(f"Summarise {sku}")

    @resource(uri="inventory://catalog", name="catalog")
    def catalog(self) -> ResourceOutput:
        return text_resource("inventory://catalog", "all")

    @tool(name="inventory.audit")
    async def audit(self, sku: str) -> Found:
        return Found([sku])

    @prompt(name="inventory.compare")
    def compare(self, left: str, right: str) -> PromptOutput:
        return text_prompt(f"{left} vs {right}")

    def helper(self) -> str:
        """Not decorated: not an operation."""
        return "helper"

    limit = 10  # not a function at all


ENDPOINT: Endpoint = Inventory.__mcp_endpoint__  # type: ignore[attr-defined]


def test_pk_01_an_01_the_class_decorator_builds_the_endpoint_at_definition() -> None:
    assert isinstance(ENDPOINT, Endpoint)
    assert ENDPOINT.path == "/inventory/mcp"
    assert ENDPOINT.revisions == frozenset({MODERN, NOVEMBER})
    assert inspect.isclass(Inventory)  # the class itself is returned
    assert Inventory().helper() == "helper"


def test_an_04_to_13_endpoint_elements_reach_the_endpoint() -> None:
    implementation = ENDPOINT.implementation
    assert (implementation.name, implementation.version) == ("inventory", "1.0.0")
    assert implementation.title == "Inventory MCP"
    assert implementation.description == "Inventory search"
    assert implementation.website_url == "https://example.com/inventory"
    assert ENDPOINT.instructions == "Prefer inventory.search before reading an item."
    assert ENDPOINT.tool_rate_limiter == "inventory"
    assert ENDPOINT.resource_list_cache == CachePolicy(1000, "public")
    assert ENDPOINT.resource_template_list_cache == CachePolicy(2000, "private")
    assert ENDPOINT.session_revisions == frozenset()


def test_ct_07_tools_and_prompts_by_name_resources_by_uri() -> None:
    assert [t.name for t in ENDPOINT.tools] == ["inventory.audit", "inventory.search"]
    assert [p.name for p in ENDPOINT.prompts] == ["inventory.compare", "inventory.summary"]
    kinds = [(r.kind, r.uri or str(r.template)) for r in ENDPOINT.resources]
    assert kinds[0] == (ResourceKind.EXACT, "inventory://catalog")
    assert kinds[1][0] is ResourceKind.TEMPLATE


def test_ct_07_sorting_is_by_code_point() -> None:
    @endpoint(path="/sort/mcp", name="s", version="1", revisions={MODERN})
    class Sorted:
        @tool(name="b")
        def b(self) -> Found:
            return Found([])

        @tool(name="B")
        def upper(self) -> Found:
            return Found([])

        @tool(name="a.z")
        def az(self) -> Found:
            return Found([])

        @resource(uri="z://b", name="zb")
        def zb(self) -> ResourceOutput:
            return text_resource("z://b", "")

        @resource(uri="a://{x}", name="ax")
        def ax(self, x: str) -> ResourceOutput:
            return text_resource("a://x", x)

        @resource(uri="Z://a", name="za")
        def za(self) -> ResourceOutput:
            return text_resource("Z://a", "")

    built: Endpoint = Sorted.__mcp_endpoint__  # type: ignore[attr-defined]
    assert [t.name for t in built.tools] == ["B", "a.z", "b"]
    assert [r.name for r in built.resources] == ["za", "ax", "zb"]


def test_pk_02_method_decorators_only_attach_a_frozen_descriptor() -> None:
    def search(self: object, query: str) -> Found:
        return Found([query])

    decorated = tool(name="x.search", title="")(search)
    assert decorated is search  # the function itself: nothing wraps it
    spec = search.__mcp_operation__  # type: ignore[attr-defined]
    assert isinstance(spec, ToolSpec)
    assert spec.title is None  # AN-14
    assert spec.revisions is None  # inherits the endpoint's
    assert search(None, "q") == Found(["q"])


def test_an_16_tool_options_and_inherited_revisions() -> None:
    search = ENDPOINT.find_tool("inventory.search", MODERN)
    assert search is not None
    assert search.shape is ToolShape.TYPED
    assert search.revisions == ENDPOINT.revisions
    assert search.title == "Catalog search"
    assert search.annotations == ToolAnnotations(read_only=True)
    assert search.is_async is False
    audit = ENDPOINT.find_tool("inventory.audit", MODERN)
    assert audit is not None and audit.is_async is True and audit.annotations is None


def test_an_17_an_18_the_input_schema_comes_from_the_parameters() -> None:
    search = ENDPOINT.find_tool("inventory.search", MODERN)
    assert search is not None and search.output_schema is not None
    assert search.input_schema.document == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Free text"},
            "limit": {"type": "integer"},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    assert search.output_schema.document == {
        "type": "object",
        "properties": {"skus": {"type": "array", "items": {"type": "string"}}},
        "required": ["skus"],
        "additionalProperties": False,
    }


def test_tool_handlers_call_the_method_with_bound_arguments() -> None:
    assert call_tool(ENDPOINT, "inventory.search", {"query": "bolt"}) == Found(["bolt"])
    assert call_tool(ENDPOINT, "inventory.search", {"query": "nut", "limit": 2}) == Found(
        ["nut", "nut"]
    )
    assert call_tool(ENDPOINT, "inventory.audit", {"sku": "A-1"}) == Found(["A-1"])


def test_tool_arguments_are_checked_by_the_input_model() -> None:
    search = ENDPOINT.find_tool("inventory.search", MODERN)
    assert search is not None and search.input_model is not None
    try:
        search.input_model.bind(JsonObject({"query": "a", "other": 1}))
    except ArgumentsInvalid:
        pass
    else:  # pragma: no cover - the assertion is the point
        raise AssertionError("an undeclared argument must be refused")


class Counting:
    """An instance provider that counts the instances it hands out (PK-09)."""

    def __init__(self) -> None:
        self.calls: list[type[Any]] = []

    def __call__(self, cls: type[Any]) -> object:
        self.calls.append(cls)
        return cls()


def test_pk_09_the_instance_provider_is_called_per_invocation_only() -> None:
    provider = Counting()
    instances: list[object] = []

    @endpoint(path="/count/mcp", name="c", version="1", revisions={MODERN},
              instance_provider=provider)  # fmt: skip
    class Counted:
        @tool(name="who")
        def who(self) -> Found:
            instances.append(self)
            return Found([])

    built: Endpoint = Counted.__mcp_endpoint__  # type: ignore[attr-defined]
    assert provider.calls == []  # building and listing acquire no instance
    assert [t.name for t in built.tools_for(MODERN)] == ["who"]
    assert built.capabilities(MODERN) == {"tools": {}}
    EndpointRegistry.from_classes(Counted)
    assert provider.calls == []
    call_tool(built, "who", {})
    call_tool(built, "who", {})
    assert provider.calls == [Counted, Counted]
    assert len(instances) == 2 and instances[0] is not instances[1]  # never cached


def test_pk_09_the_default_provider_constructs_the_class() -> None:
    created: list[object] = []

    @endpoint(path="/default/mcp", name="d", version="1", revisions={MODERN})
    class Default:
        def __init__(self) -> None:
            created.append(self)

        @tool(name="ping")
        def ping(self) -> Found:
            return Found([])

    assert created == []
    call_tool(Default.__mcp_endpoint__, "ping", {})  # type: ignore[attr-defined]
    assert len(created) == 1


def test_hc_01_framework_parameters_are_injected_and_not_published() -> None:
    seen: dict[str, object] = {}

    @endpoint(path="/hc/mcp", name="h", version="1", revisions={MODERN})
    class Framework:
        @tool(name="work")
        def work(
            self,
            ctx: RequestContext,
            query: str,
            features: InvocationFeatures,
            token: CancellationToken,
            progress: ProgressReporter | None,
            legacy_progress: Optional[ProgressReporter],  # noqa: UP045 - both spellings
        ) -> Found:
            seen.update(ctx=ctx, features=features, token=token, progress=progress,
                        legacy=legacy_progress)  # fmt: skip
            return Found([query])

    built: Endpoint = Framework.__mcp_endpoint__  # type: ignore[attr-defined]
    work = built.find_tool("work", MODERN)
    assert work is not None
    assert work.input_schema.document == {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
        "additionalProperties": False,
    }
    assert call_tool(built, "work", {"query": "q"}) == Found(["q"])
    assert isinstance(seen["ctx"], RequestContext)
    invocation = seen["features"]
    assert isinstance(invocation, InvocationFeatures)
    assert seen["token"] is invocation.cancellation_token
    assert seen["progress"] is None and seen["legacy"] is None  # HC-14: not requested
    reporter = ProgressReporter("t", lambda params: None)
    call_tool(built, "work", {"query": "q"}, reporter)
    assert seen["progress"] is reporter and seen["legacy"] is reporter


def test_advanced_tools_return_operation_results() -> None:
    @endpoint(path="/adv/mcp", name="a", version="1", revisions={MODERN})
    class Advanced:
        @tool(name="plain", revisions={MODERN})
        def plain(self, text: str) -> CompleteResult:
            return CompleteResult.from_tool_text(text)

        @tool(name="asks", input_requests={"confirm": {"method": "roots/list"}},
              request_state_mode=RequestStateMode.APPLICATION_PROTECTED)  # fmt: skip
        async def asks(self) -> CompleteResult | InputRequiredResult:
            return InputRequiredResult(request_state="s")

    built: Endpoint = Advanced.__mcp_endpoint__  # type: ignore[attr-defined]
    plain = built.find_tool("plain", MODERN)
    asks = built.find_tool("asks", MODERN)
    assert plain is not None and asks is not None
    assert plain.shape is asks.shape is ToolShape.ADVANCED
    assert plain.output_schema is None
    assert asks.request_state_mode is RequestStateMode.APPLICATION_PROTECTED
    assert set(asks.input_requests) == {"confirm"}
    result = call_tool(built, "plain", {"text": "hi"})
    assert isinstance(result, CompleteResult)
    assert isinstance(call_tool(built, "asks", {}), InputRequiredResult)


def test_prompt_arguments_from_str_parameters() -> None:
    @endpoint(path="/p/mcp", name="p", version="1", revisions={MODERN})
    class Prompts:
        @prompt(name="greet", title="Greeting")
        async def greet(
            self,
            who: Annotated[str, Arg(name="person", title="Who", description="The name")],
            tone: str | None,
            ctx: RequestContext,
            closing: str = "Bye",
            extra: Annotated[str | None, Arg(description="more")] = None,
        ) -> PromptOutput | CompleteResult:
            return text_prompt(f"{who}|{tone}|{closing}|{extra}|{ctx.method}")

    built: Endpoint = Prompts.__mcp_endpoint__  # type: ignore[attr-defined]
    greet = built.find_prompt("greet", MODERN)
    assert greet is not None
    assert greet.definition()["arguments"] == [
        {"name": "person", "title": "Who", "description": "The name", "required": True},
        {"name": "tone", "required": False},
        {"name": "closing", "required": False},
        {"name": "extra", "description": "more", "required": False},
    ]
    assert greet.required_arguments == frozenset({"person"})
    assert greet.is_async
    output = invoke(greet.handler, context("prompts/get"), {"person": "Ada"}, features())
    assert output.messages[0].content.text == "Ada|None|Bye|None|prompts/get"
    output = invoke(
        greet.handler, context(),
        {"person": "Ada", "tone": "warm", "closing": "Ciao", "extra": "x"}, features(),
    )  # fmt: skip
    assert output.messages[0].content.text == "Ada|warm|Ciao|x|tools/call"


def test_ct_12_template_variables_reach_str_parameters() -> None:
    @endpoint(path="/r/mcp", name="r", version="1", revisions={MODERN, NOVEMBER})
    class Resources:
        @resource(uri="shop://{shop}/items/{sku}", name="item", revisions={NOVEMBER})
        def item(
            self, features: InvocationFeatures, shop: str, code: Annotated[str, UriParam("sku")]
        ) -> ResourceOutput:
            assert isinstance(features, InvocationFeatures)
            return text_resource(f"shop://{shop}/items/{code}", f"{shop}/{code}")

        @resource(uri="shop://status", name="status", size=2)
        async def status(self, ctx: RequestContext) -> ResourceOutput:
            return text_resource("shop://status", ctx.method)

    built: Endpoint = Resources.__mcp_endpoint__  # type: ignore[attr-defined]
    match = built.find_resource("shop://main/items/A%2F1", NOVEMBER)
    assert match is not None
    registration, variables = match
    assert registration.revisions == frozenset({NOVEMBER})
    output = invoke(registration.handler, context(), variables, features())
    assert output.contents[0].text == "main/A/1"
    status = built.find_resource("shop://status", MODERN)
    assert status is not None
    assert status[0].is_async and status[0].size == 2
    output = invoke(status[0].handler, context("resources/read"), features())
    assert output.contents[0].text == "resources/read"


def test_resource_list_methods_receive_the_cursor() -> None:
    @endpoint(path="/l/mcp", name="l", version="1", revisions={MODERN})
    class Listing:
        @resource_list()
        def pages(self, cursor: str | None) -> ResourceListPage:
            entry = ResourceDescriptor("shop://x", "x", description=str(cursor))
            return ResourceListPage((entry,))

    built: Endpoint = Listing.__mcp_endpoint__  # type: ignore[attr-defined]
    listing = built.resource_list_for(MODERN)
    assert listing is not None and not listing.is_async
    page = invoke(listing.handler, context("resources/list"), "c1", features())
    assert page.resources[0].description == "c1"


def test_async_resource_list_method() -> None:
    @endpoint(path="/al/mcp", name="l", version="1", revisions={MODERN})
    class Listing:
        @resource_list(revisions={MODERN})
        async def pages(self, cursor: str | None) -> ResourceListPage:
            return ResourceListPage((), next_cursor=cursor)

    listing = Listing.__mcp_endpoint__.resource_list_for(MODERN)  # type: ignore[attr-defined]
    page = invoke(listing.handler, context(), None, features())
    assert page.next_cursor is None


def test_an_14_empty_text_means_not_supplied() -> None:
    @endpoint(path="/e/mcp", name="e", version="1", revisions={MODERN}, title="",
              description="", website_url="", instructions="", tool_rate_limiter="")  # fmt: skip
    class Empty:
        @tool(name="t", title="", description="", rate_limiter="")
        def t(self) -> Found:
            return Found([])

        @resource(uri="e://x", name="x", title="", description="", mime_type="")
        def x(self) -> ResourceOutput:
            return text_resource("e://x", "")

    built: Endpoint = Empty.__mcp_endpoint__  # type: ignore[attr-defined]
    implementation = built.implementation
    assert (implementation.title, implementation.description, implementation.website_url) == (
        None, None, None,
    )  # fmt: skip
    assert built.instructions is None and built.tool_rate_limiter is None
    tool_registration = built.tools[0]
    assert (tool_registration.title, tool_registration.description) == (None, None)
    assert tool_registration.rate_limiter is None
    assert built.resources[0].mime_type is None


def test_an_07_an_15_defaults_of_an_endpoint_without_operations() -> None:
    @endpoint(path="/none/mcp", name="n", version="1", revisions=[NOVEMBER],
              session_revisions={NOVEMBER})  # fmt: skip
    class Nothing:
        pass

    built: Endpoint = Nothing.__mcp_endpoint__  # type: ignore[attr-defined]
    assert (built.tools, built.prompts, built.resources) == ((), (), ())
    assert built.resource_list is None
    assert built.resource_list_cache is CachePolicy.PRIVATE_NO_CACHE
    assert built.resource_template_list_cache is CachePolicy.PRIVATE_NO_CACHE
    assert built.session_revisions == frozenset({NOVEMBER})
    assert built.capabilities(NOVEMBER) == {}


def test_rg_02_from_classes_keeps_the_supplied_order() -> None:
    @endpoint(path="/second/mcp", name="s", version="1", revisions={MODERN})
    class Second:
        pass

    registry = EndpointRegistry.from_classes(Second, Inventory)
    assert registry.endpoints == (Second.__mcp_endpoint__, ENDPOINT)  # type: ignore[attr-defined]
    assert EndpointRegistry.from_classes(Inventory).endpoints == (ENDPOINT,)


def test_the_same_operation_name_on_two_classes_stays_apart() -> None:
    @endpoint(path="/other/mcp", name="o", version="1", revisions={MODERN})
    class Other:
        @tool(name="inventory.search")
        def search(self, query: str) -> Found:
            return Found(["other"])

    registry = EndpointRegistry.from_classes(Inventory, Other)
    other = registry.endpoint_for_path("/other/mcp")
    assert other is not None
    assert call_tool(other, "inventory.search", {"query": "q"}) == Found(["other"])
    assert call_tool(ENDPOINT, "inventory.search", {"query": "q"}) == Found(["q"])


def test_adapters_keep_the_method_name_for_tracebacks() -> None:
    search = ENDPOINT.find_tool("inventory.search", MODERN)
    assert search is not None
    assert search.handler.__qualname__ == "Inventory.search"


def test_methods_stay_callable_directly() -> None:
    assert Inventory().search("q", 2) == Found(["q", "q"])
    assert asyncio.run(Inventory().audit("s")) == Found(["s"])


def test_exact_resource_handlers_take_ctx_and_features() -> None:
    match = ENDPOINT.find_resource("inventory://catalog", MODERN)
    assert match is not None and match[1] == {}
    output = invoke(match[0].handler, context("resources/read"), features())
    assert output.contents[0].text == "all"


def test_prompt_and_resource_results_may_be_unannotated() -> None:
    @endpoint(path="/u/mcp", name="u", version="1", revisions={MODERN})
    class Unannotated:
        @prompt(name="p")
        def p(self, sku: str):  # type: ignore[no-untyped-def]
            return text_prompt(sku)

    built: Endpoint = Unannotated.__mcp_endpoint__  # type: ignore[attr-defined]
    output = invoke(built.prompts[0].handler, context(), {"sku": "s"}, features())
    assert output.messages[0].content.text == "s"
