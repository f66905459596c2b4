"""Decorator authoring: what a decorated class builds and how its handlers call the methods
(AN-01..18, PK-01/02/04/09, CT-07, CT-12, HC-01, RG-02).

Refusals are in ``test_decorators_refusals.py``.
"""

import asyncio
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Optional

import pytest

from mcpkit.errors import ArgumentsInvalid
from mcpkit.json import JsonObject
from mcpkit.model import (
    CachePolicy,
    CancellationToken,
    CompleteResult,
    InputRequestDeclaration,
    InputRequestKind,
    InputRequiredResult,
    InvocationFeatures,
    ProgressReporter,
    PromptMessage,
    PromptOutput,
    RequestContext,
    RequestStateMode,
    Requirement,
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
from mcpkit.model._tools import ToolRegistration
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
    """The endpoint elements reach the built endpoint: AN-05 ``name`` and ``version`` as the
    advertised implementation identity, AN-09 ``title``, ``description`` and ``website_url``,
    AN-10 ``instructions`` (returning them in the initialize result is the server's), AN-11 no
    ``tool_rate_limiter`` (none given), AN-12 and AN-13 the resource
    and template list cache hints, and AN-07 no session revisions."""
    implementation = ENDPOINT.implementation
    assert (implementation.name, implementation.version) == ("inventory", "1.0.0")
    assert implementation.title == "Inventory MCP"
    assert implementation.description == "Inventory search"
    assert implementation.website_url == "https://example.com/inventory"
    assert ENDPOINT.instructions == "Prefer inventory.search before reading an item."
    assert ENDPOINT.tool_rate_limiter is None
    assert ENDPOINT.resource_list_cache == CachePolicy(1000, "public")
    assert ENDPOINT.resource_template_list_cache == CachePolicy(2000, "private")
    assert ENDPOINT.session_revisions == frozenset()


def test_an_04_an_05_path_name_and_version_are_required_and_kept_exactly() -> None:
    """AN-04: ``path`` is required and is the exact listener path (routing matches the raw path
    only); AN-05: ``name`` and ``version`` are required and are the implementation identity."""
    settings: dict[str, Any] = {
        "path": "/req/mcp", "name": "req", "version": "2.0", "revisions": {MODERN},
    }  # fmt: skip
    for missing in ("path", "name", "version"):
        with pytest.raises(TypeError, match=f"'{missing}'"):
            endpoint(**{key: value for key, value in settings.items() if key != missing})

    @endpoint(**settings)
    class Required:
        pass

    built: Endpoint = Required.__mcp_endpoint__  # type: ignore[attr-defined]
    assert built.path == "/req/mcp"
    assert (built.implementation.name, built.implementation.version) == ("req", "2.0")
    registry = EndpointRegistry.from_classes(Required)
    assert registry.endpoint_for_path("/req/mcp") is built
    for near_miss in ("/req/mcp/", "/REQ/mcp", "/req//mcp", "/req/mcp?x=1"):
        assert registry.endpoint_for_path(near_miss) is None


def test_rv_05_the_version_is_the_application_version_not_a_revision() -> None:
    """RV-05: ``version`` is the application's implementation version, kept as free text; one
    that looks like a revision is neither parsed nor served as one."""

    @endpoint(path="/v/mcp", name="v", version="2025-06-18", revisions={MODERN})
    class Versioned:
        pass

    built: Endpoint = Versioned.__mcp_endpoint__  # type: ignore[attr-defined]
    assert built.implementation.version == "2025-06-18"
    assert built.implementation.to_json()["version"] == "2025-06-18"
    assert built.revisions == frozenset({MODERN})
    assert ENDPOINT.implementation.version == "1.0.0"
    assert ENDPOINT.revisions == frozenset({MODERN, NOVEMBER})


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
    """PK-02: a method decorator only attaches a frozen descriptor to the function and returns
    the function itself; nothing wraps or registers it."""

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
    """PK-04: published names default to the parameter names (``inspect.signature``); the output
    schema comes from the return annotation."""
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


def test_an_16_every_tool_element_reaches_the_registration() -> None:
    """AN-16: the tool decorator carries the name, title, description, structured-content
    mirroring, the input declarations and the request-state mode (a named rate limiter is
    refused until rate limiting exists)."""

    @endpoint(path="/an16/mcp", name="a", version="1", revisions={MODERN})
    class Options:
        @tool(name="edit", title="Edit", description="Edits an item",
              mirror_structured_content=False,
              input_requests=[InputRequestDeclaration.elicitation_form()],
              request_state_mode=RequestStateMode.FRAMEWORK_PROTECTED)  # fmt: skip
        def edit(self, sku: str) -> CompleteResult | InputRequiredResult:
            return CompleteResult.from_tool_text(sku)

        @tool(name="plain")
        def plain(self) -> Found:
            return Found([])

    built: Endpoint = Options.__mcp_endpoint__  # type: ignore[attr-defined]
    edit = built.find_tool("edit", MODERN)
    assert edit is not None
    assert (edit.name, edit.title, edit.description) == ("edit", "Edit", "Edits an item")
    assert edit.rate_limiter is None
    assert edit.mirror_structured_content is False
    assert edit.input_requests == (InputRequestDeclaration.elicitation_form(),)
    assert edit.request_state_mode is RequestStateMode.FRAMEWORK_PROTECTED
    plain = built.find_tool("plain", MODERN)
    assert plain is not None
    assert (plain.title, plain.description, plain.rate_limiter) == (None, None, None)
    assert plain.mirror_structured_content is True
    assert plain.input_requests == ()
    assert plain.request_state_mode is RequestStateMode.NONE


def test_an_17_a_tool_argument_overrides_its_published_name_title_and_description() -> None:
    """AN-17: ``Arg(name=, title=, description=)`` changes what is published and bound; the
    method still receives the value under its parameter name."""

    @endpoint(path="/an17/mcp", name="a", version="1", revisions={MODERN})
    class Renamed:
        @tool(name="find")
        def find(
            self, text: Annotated[str, Arg(name="query", title="Query", description="Free text")]
        ) -> Found:
            return Found([text])

    built: Endpoint = Renamed.__mcp_endpoint__  # type: ignore[attr-defined]
    find = built.find_tool("find", MODERN)
    assert find is not None
    assert find.input_schema.document == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "title": "Query", "description": "Free text"},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    assert call_tool(built, "find", {"query": "bolt"}) == Found(["bolt"])
    assert find.input_model is not None
    with pytest.raises(ArgumentsInvalid):
        find.input_model.bind(JsonObject({"text": "bolt"}))


def test_an_02_parameter_metadata_is_typing_annotated() -> None:
    """AN-02: parameter metadata is ``typing.Annotated``: ``Arg(...)`` for tool and prompt
    arguments, ``Arg(header=...)`` for a mirrored header, ``UriParam(...)`` for a URI variable."""

    @endpoint(path="/an02/mcp", name="a", version="1", revisions={MODERN})
    class Parameters:
        @tool(name="t")
        def t(
            self,
            tenant: Annotated[str, Arg(header="Tenant")],
            text: Annotated[str, Arg(name="query")],
        ) -> Found:
            return Found([tenant, text])

        @prompt(name="p")
        def p(self, who: Annotated[str, Arg(name="person", title="Who")]) -> PromptOutput:
            return text_prompt(who)

        @resource(uri="a://items/{sku}", name="r")
        def r(self, code: Annotated[str, UriParam("sku")]) -> ResourceOutput:
            return text_resource(f"a://items/{code}", code)

    built: Endpoint = Parameters.__mcp_endpoint__  # type: ignore[attr-defined]
    t = built.find_tool("t", MODERN)
    assert t is not None
    assert [header.suffix for header in t.input_schema.headers] == ["Tenant"]
    document = t.input_schema.document
    assert isinstance(document, JsonObject)
    properties = document["properties"]
    assert isinstance(properties, JsonObject)
    assert properties["tenant"] == {"type": "string", "x-mcp-header": "Tenant"}
    assert list(properties) == ["tenant", "query"]
    assert call_tool(built, "t", {"tenant": "acme", "query": "q"}) == Found(["acme", "q"])
    p = built.find_prompt("p", MODERN)
    assert p is not None
    assert p.definition()["arguments"] == [{"name": "person", "title": "Who", "required": True}]
    match = built.find_resource("a://items/X-1", MODERN)
    assert match is not None
    output = invoke(match[0].handler, context("resources/read"), match[1], features())
    assert output.contents[0].text == "X-1"


def test_tr_02_decorated_and_programmatic_tools_build_the_same_registration() -> None:
    """TR-02: a decorated tool is a ``ToolRegistration`` of the same shape, with the same
    published schemas, as the one the programmatic factory builds for the same types."""

    @dataclass(frozen=True)
    class Query:
        query: Annotated[str, Arg(description="Free text")]
        limit: int | None = None

    def handler(ctx: RequestContext, arguments: ToolArguments[Query],
                features: InvocationFeatures) -> Found:  # fmt: skip
        return Found([arguments.converted.query])

    programmatic = ToolRegistration.typed(
        name="inventory.search", revisions={MODERN, NOVEMBER}, arguments=Query, output=Found,
        handler=handler, title="Catalog search", annotations=ToolAnnotations(read_only=True),
    )  # fmt: skip
    decorated = ENDPOINT.find_tool("inventory.search", MODERN)
    assert isinstance(decorated, ToolRegistration)
    assert decorated.shape is programmatic.shape is ToolShape.TYPED
    assert decorated.revisions == programmatic.revisions
    assert decorated.input_schema.document == programmatic.input_schema.document
    assert decorated.output_schema is not None and programmatic.output_schema is not None
    assert decorated.output_schema.document == programmatic.output_schema.document
    assert (decorated.title, decorated.annotations) == (
        programmatic.title, programmatic.annotations,
    )  # fmt: skip
    other = ToolRegistration.typed(
        name="p.search", revisions={MODERN}, arguments=Query, output=Found, handler=handler
    )
    mixed = Endpoint("/mixed/mcp", ENDPOINT.implementation, {MODERN, NOVEMBER},
                     tools=[other, decorated])  # fmt: skip
    assert mixed.tools_for(MODERN) == (other, decorated)


def test_pk_02_only_the_attached_descriptor_is_read() -> None:
    """PK-02: the class decorator reads only the class's own namespace (no ``dir()`` walk, no
    base classes) and the registry reads only the endpoint it attached; nothing is registered
    globally, so an undecorated class is never found."""

    class Base:
        @tool(name="inherited")
        def inherited(self) -> Found:
            return Found([])

    @endpoint(path="/pk02/mcp", name="p", version="1", revisions={MODERN})
    class Child(Base):
        @tool(name="own")
        def own(self) -> Found:
            return Found([])

    built: Endpoint = Child.__dict__["__mcp_endpoint__"]
    assert [t.name for t in built.tools] == ["own"]
    assert EndpointRegistry.from_classes(Child).endpoints[0] is built
    assert "__mcp_endpoint__" not in vars(Base)


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


def test_advanced_tools_return_operation_results_AN_03() -> None:
    """AN-03 (tools): ``input_requests`` declares the kinds of client request a multi-round
    tool may make (``@McpMayRequestInput``), each required or conditional; such a tool
    returns operation results."""

    @endpoint(path="/adv/mcp", name="a", version="1", revisions={MODERN})
    class Advanced:
        @tool(name="plain", revisions={MODERN})
        def plain(self, text: str) -> CompleteResult:
            return CompleteResult.from_tool_text(text)

        @tool(name="asks",
              input_requests=[InputRequestDeclaration.roots(Requirement.REQUIRED),
                              InputRequestDeclaration.sampling()],
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
    assert asks.declared_kinds == {InputRequestKind.ROOTS, InputRequestKind.SAMPLING}
    assert asks.required_kinds == {InputRequestKind.ROOTS}
    result = call_tool(built, "plain", {"text": "hi"})
    assert isinstance(result, CompleteResult)
    assert isinstance(call_tool(built, "asks", {}), InputRequiredResult)


def test_prompts_and_resources_declare_input_requests_AN_03() -> None:
    """AN-03 (prompts, resources): ``@prompt`` and ``@resource`` (exact and template) take the
    same multi-round declarations as the programmatic factories."""
    url = InputRequestDeclaration.elicitation_url(Requirement.REQUIRED)

    @endpoint(path="/mrtr/mcp", name="a", version="1", revisions={MODERN, NOVEMBER})
    class MultiRound:
        @prompt(name="ask", revisions={MODERN}, input_requests=[url],
                request_state_mode=RequestStateMode.FRAMEWORK_PROTECTED)  # fmt: skip
        def ask(self) -> PromptOutput | InputRequiredResult:
            return InputRequiredResult(framework_state={"round": 1})

        @prompt(name="plain")
        def plain(self) -> PromptOutput:
            return text_prompt("hi")

        @resource(uri="mem://exact", name="exact", revisions={MODERN},
                  input_requests=(InputRequestDeclaration.roots(),))  # fmt: skip
        def exact(self) -> ResourceOutput | InputRequiredResult:
            return text_resource("mem://exact", "x")

        @resource(uri="mem://items/{id}", name="item", revisions={MODERN},
                  request_state_mode=RequestStateMode.APPLICATION_PROTECTED)  # fmt: skip
        def item(self, id: str) -> ResourceOutput | InputRequiredResult:
            return text_resource(f"mem://items/{id}", id)

    built: Endpoint = MultiRound.__mcp_endpoint__  # type: ignore[attr-defined]
    ask, plain = built.find_prompt("ask", MODERN), built.find_prompt("plain", MODERN)
    assert ask is not None and plain is not None
    assert ask.input_requests == (url,) and ask.required_kinds == {InputRequestKind.ELICITATION_URL}
    assert ask.request_state_mode is RequestStateMode.FRAMEWORK_PROTECTED
    assert plain.input_requests == () and plain.request_state_mode is RequestStateMode.NONE
    exact = built.find_resource("mem://exact", MODERN)
    item = built.find_resource("mem://items/7", MODERN)
    assert exact is not None and item is not None
    assert exact[0].declared_kinds == {InputRequestKind.ROOTS} and not exact[0].required_kinds
    assert exact[0].request_state_mode is RequestStateMode.NONE
    assert item[0].input_requests == ()
    assert item[0].request_state_mode is RequestStateMode.APPLICATION_PROTECTED


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


def test_an_07_defaults_of_an_endpoint_without_operations() -> None:
    """AN-07: no session revisions; AN-09, AN-10, AN-11: the metadata, instructions and
    limiter name are optional; AN-12, AN-13: both list cache hints default to private, no
    caching."""

    @endpoint(path="/none/mcp", name="n", version="1", revisions=[NOVEMBER])
    class Nothing:
        pass

    built: Endpoint = Nothing.__mcp_endpoint__  # type: ignore[attr-defined]
    implementation = built.implementation
    assert (implementation.title, implementation.description, implementation.website_url) == (
        None, None, None,
    )  # fmt: skip
    assert built.instructions is None and built.tool_rate_limiter is None
    assert (built.tools, built.prompts, built.resources) == ((), (), ())
    assert built.resource_list is None
    assert built.resource_list_cache is CachePolicy.PRIVATE_NO_CACHE
    assert built.resource_template_list_cache is CachePolicy.PRIVATE_NO_CACHE
    assert built.session_revisions == frozenset()
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
