# Methods that only declare an operation have empty bodies: the class never gets built.
# mypy: disable-error-code="empty-body"
"""Decorator authoring fails when the class is defined, naming the class, the method and the
operation (PK-01, PK-03)."""

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any

import pytest

from mcpkit.errors import ConfigurationError, SchemaError
from mcpkit.json import JsonObject
from mcpkit.model import (
    CachePolicy,
    CompleteResult,
    Completion,
    InputRequestDeclaration,
    ProgressReporter,
    PromptOutput,
    RequestContext,
    RequestStateMode,
    ResourceListPage,
    ResourceOutput,
    Revision,
    ToolAnnotations,
)
from mcpkit.model._decorators import (
    UriParam,
    endpoint,
    prompt,
    resource,
    resource_list,
    tool,
)
from mcpkit.model._registry import EndpointRegistry
from mcpkit.schema import Arg

MODERN = Revision.V2026_07_28
NOVEMBER = Revision.V2025_11_25
JUNE = Revision.V2025_06_18


@dataclass(frozen=True)
class Found:
    skus: list[str]


def _any(value: object) -> Any:
    """Pass a deliberately wrong value past the type checker."""
    return value


def build(**overrides: Any) -> Callable[[type], type]:
    settings: dict[str, Any] = {
        "path": "/x/mcp", "name": "x", "version": "1", "revisions": {MODERN},
    }  # fmt: skip
    settings.update(overrides)
    return endpoint(**settings)


def refused(*parts: str, error: type[Exception] = ConfigurationError) -> Any:
    """``pytest.raises`` for a message holding every part, in order."""
    return pytest.raises(error, match=".*".join(re.escape(part) for part in parts))


def completer(ctx: RequestContext, value: str, arguments: Any) -> Completion:
    return Completion.EMPTY


# --- method decorators ----------------------------------------------------------------------


def test_an_01_method_decorators_take_functions_only() -> None:
    with refused("@tool decorates a method", "not staticmethod"):
        tool(name="t")(_any(staticmethod(lambda: None)))


def test_one_method_serves_one_operation() -> None:
    def both(self: object) -> PromptOutput: ...

    prompt(name="p")(both)
    with refused("@tool on", "both", "already a prompt"):
        tool(name="t")(both)


def test_annotations_and_hint_keywords_are_exclusive() -> None:
    with refused("@tool 't'", "either annotations= or the hint keywords"):
        tool(name="t", annotations=ToolAnnotations(), idempotent=True)


# --- the class decorator --------------------------------------------------------------------


def test_endpoint_decorates_classes() -> None:
    with refused("@endpoint decorates a class, not function"):
        build()(_any(lambda: None))


def test_a_class_is_an_endpoint_once() -> None:
    @build()
    class Once:
        pass

    with refused("@endpoint class", "Once: the class is already an endpoint"):
        build(path="/y/mcp")(Once)


def test_pk_09_the_instance_provider_must_be_callable() -> None:
    with refused("instance_provider must be callable"):

        @build(instance_provider=_any(3))
        class Bad:
            pass


def test_an_05_implementation_refusals_become_configuration_errors() -> None:
    with refused("@endpoint class", "Implementation.name"):

        @build(name="")
        class Bad:
            pass


@pytest.mark.parametrize("revisions", [frozenset(), {"2026-07-28"}, "2026-07-28", 5])
def test_an_06_revisions_are_a_non_empty_set_of_revisions(revisions: object) -> None:
    with refused("revisions must be a non-empty set of Revision members"):

        @build(revisions=revisions)
        class Bad:
            pass


def test_an_04_endpoint_checks_name_the_class() -> None:
    with refused("@endpoint class", "Bad: ", "/x/mcp/"):

        @build(path="/x/mcp/")
        class Bad:
            pass


def test_an_07_session_revisions_are_served_2025_revisions() -> None:
    """AN-07: an explicit session subset may hold only served 2025 revisions (that it also needs
    the server's session configuration is checked when the server is built)."""
    with refused("@endpoint class", "session_revisions"):

        @build(session_revisions={MODERN})
        class Bad:
            pass

    with refused("@endpoint class", "session_revisions"):

        @build(session_revisions={NOVEMBER})  # a 2025 revision the endpoint does not serve
        class Unserved:
            pass


def test_rate_limiter_names_reach_the_endpoint_and_the_tool() -> None:
    """Names only: the server resolves them among its rate_limiters when it is built."""

    @build(tool_rate_limiter="inventory")
    class LimitedTool:
        @tool(name="t", rate_limiter="writes")
        def t(self) -> CompleteResult:
            return CompleteResult.from_tool_text("t")

    built = LimitedTool.__mcp_endpoint__  # type: ignore[attr-defined]
    assert built.tool_rate_limiter == "inventory"
    assert [registration.rate_limiter for registration in built.tools] == ["writes"]


def test_an_12_cache_policies_are_checked_by_the_endpoint() -> None:
    with refused("@endpoint class", "resource_list_cache"):

        @build(resource_list_cache=_any("public"))
        class Bad:
            pass


def test_operations_are_instance_methods() -> None:
    with refused("method 'helper': an operation must be an instance method, not a staticmethod"):

        @build()
        class Bad:
            @staticmethod
            @tool(name="t")
            def helper() -> Found:
                return Found([])


def test_undecorated_static_and_class_methods_are_ignored() -> None:
    @build()
    class Fine:
        @staticmethod
        def helper() -> int:
            return 1

        @classmethod
        def make(cls) -> "Fine":
            return cls()

    assert Fine.__mcp_endpoint__.tools == ()  # type: ignore[attr-defined]


def test_ct_02_duplicate_names_name_both_methods() -> None:
    with refused("method 'second': tool 't' is also declared by method 'first'"):

        @build()
        class Bad:
            @tool(name="t")
            def first(self) -> Found:
                return Found([])

            @tool(name="t")
            def second(self) -> Found:
                return Found([])


def test_ct_03_duplicate_uris_name_both_methods() -> None:
    with refused("method 'b': resource 'x://a' is also declared by method 'a'"):

        @build()
        class Bad:
            @resource(uri="x://a", name="a")
            def a(self) -> ResourceOutput: ...

            @resource(uri="x://a", name="b")
            def b(self) -> ResourceOutput: ...


def test_ct_05_overlapping_templates_are_refused_by_the_endpoint() -> None:
    with refused("@endpoint class", "overlap"):

        @build()
        class Bad:
            @resource(uri="x://{a}", name="a")
            def a(self, a: str) -> ResourceOutput: ...

            @resource(uri="x://{b}", name="b")
            def b(self, b: str) -> ResourceOutput: ...


def test_one_resource_list_method() -> None:
    with refused(
        "method 'second': an endpoint has one @resource_list; method 'first' is the first"
    ):

        @build()
        class Bad:
            @resource_list()
            def first(self, cursor: str | None) -> ResourceListPage: ...

            @resource_list()
            def second(self, cursor: str | None) -> ResourceListPage: ...


def test_rv_04_explicit_revisions_are_a_subset_of_the_endpoint() -> None:
    with refused("method 't': tool 't': selects 2025-06-18, which the endpoint does not serve"):

        @build()
        class Bad:
            @tool(name="t", revisions={MODERN, JUNE})
            def t(self) -> Found:
                return Found([])


def test_rv_03_malformed_operation_revisions_are_left_to_the_factory() -> None:
    with refused("method 't'", "tool 't'", "revisions must"):

        @build()
        class Bad:
            @tool(name="t", revisions=_any(5))
            def t(self) -> Found:
                return Found([])


def test_registration_rules_apply_and_name_the_method() -> None:
    with refused("@endpoint class", "method 'bad_name'", "tool name"):

        @build()
        class Bad:
            @tool(name="has space")
            def bad_name(self) -> Found:
                return Found([])


# --- method shapes --------------------------------------------------------------------------


def test_methods_take_self_first() -> None:
    with refused("method 'f': tool 't': the method must be an instance method whose first"):

        @build()
        class Bad:
            @tool(name="t")
            def f(*, self: object) -> Found:
                return Found([])


def test_methods_without_parameters_are_refused() -> None:
    with refused("first parameter is self"):

        @build()
        class Bad:
            @tool(name="t")
            def f() -> Found:  # type: ignore[misc]
                return Found([])


def test_generator_methods_are_refused() -> None:
    with refused("method 'g': prompt 'p': the method is a generator function"):

        @build()
        class Bad:
            @prompt(name="p")
            def g(self) -> Iterator[str]:
                yield "x"


@pytest.mark.parametrize("kind", ["args", "kwargs", "positional"])
def test_parameters_are_bound_by_name(kind: str) -> None:
    def args(self: object, *rest: str) -> Found: ...
    def kwargs(self: object, **rest: str) -> Found: ...
    def positional(self: object, a: str, /) -> Found: ...

    function = {"args": args, "kwargs": kwargs, "positional": positional}[kind]
    tool(name="t")(_any(function))
    with refused("*args, **kwargs and positional-only parameters cannot be bound by name"):
        build()(type("Bad", (), {"f": function}))


def test_parameters_need_annotations() -> None:
    with refused("parameter 'query' needs a type annotation"):

        @build()
        class Bad:
            @tool(name="t")
            def f(self, query) -> Found:  # type: ignore[no-untyped-def]
                return Found([])


def test_unresolvable_annotations_are_refused() -> None:
    with refused("tool 't': cannot resolve the method's annotations"):

        @build()
        class Bad:
            @tool(name="t")
            def f(self, query: "Missing") -> Found:  # type: ignore[name-defined]  # noqa: F821
                return Found([])


def test_hc_14_a_bare_progress_reporter_is_refused() -> None:
    with refused("parameter 'progress': annotate it ProgressReporter | None"):

        @build()
        class Bad:
            @tool(name="t")
            def f(self, progress: ProgressReporter) -> Found:
                return Found([])


# --- tools ----------------------------------------------------------------------------------


def test_tools_need_a_return_annotation() -> None:
    with refused("tool 't': the method needs a return annotation"):

        @build()
        class Bad:
            @tool(name="t")
            def f(self):  # type: ignore[no-untyped-def]
                return Found([])


def test_tool_results_are_typed_or_operation_results_not_both() -> None:
    with refused("mixes OperationResult kinds and typed output"):

        @build()
        class Bad:
            @tool(name="t")
            def f(self) -> Found | CompleteResult: ...


def test_td_10_tool_schema_errors_stay_schema_errors() -> None:
    with refused("method 'f': tool 't': ", "set", error=SchemaError):

        @build()
        class Bad:
            @tool(name="t")
            def f(self, tags: set[str]) -> Found: ...


def test_unhashable_metadata_is_left_to_the_schema_layer() -> None:
    with refused("tool 't'", "Annotated metadata", error=SchemaError):

        @build()
        class Bad:
            @tool(name="t")
            def f(self, query: Annotated[str, []]) -> Found: ...


def test_tool_output_rules_apply() -> None:
    with refused("method 'f': tool 't'", "set[int]", error=SchemaError):

        @build()
        class Bad:
            @tool(name="t")
            def f(self) -> set[int]: ...


@pytest.mark.parametrize("revision", [JUNE, NOVEMBER])
def test_lg_03_a_2025_tool_needs_an_object_output_at_class_definition(revision: Revision) -> None:
    """LG-03: a decorated typed tool selecting a 2025 revision must return an object-shaped
    value; anything else fails when the class statement ends, naming the method."""
    with refused("method 'f': tool 't'", "structured content must be an object on 2025",
                 error=SchemaError):  # fmt: skip

        @build(revisions={revision, MODERN})
        class Bad:
            @tool(name="t")
            def f(self) -> list[str]: ...

    @build(revisions={revision, MODERN})
    class Good:
        @tool(name="t")
        def f(self) -> Found: ...

        @tool(name="modern", revisions={MODERN})
        def modern(self) -> list[str]: ...

    built = Good.__mcp_endpoint__  # type: ignore[attr-defined]
    assert [t.name for t in built.tools] == ["modern", "t"]


@pytest.mark.parametrize(
    "declarations",
    [
        {"request_state_mode": RequestStateMode.NONE},
        {"input_requests": [InputRequestDeclaration.roots()]},
    ],
)
def test_tr_16_multi_round_declarations_need_an_advanced_tool(
    declarations: dict[str, Any],
) -> None:
    with refused("tool 't': input_requests and request_state_mode belong to a tool"):

        @build()
        class Bad:
            @tool(name="t", **declarations)
            def f(self) -> Found: ...


def test_an_03_multi_round_operations_need_a_session_on_2025_RV_06() -> None:
    """AN-03, RV-06: a decorated prompt or resource that declares input requests or request
    state and inherits or selects a 2025 revision the endpoint keeps no session on is refused,
    naming the operation; with a session there it is built."""
    with refused("prompt 'p' (revisions 2025-11-25, 2026-07-28) declares input requests"):

        @build(revisions={NOVEMBER, MODERN})
        class Prompt:
            @prompt(name="p", input_requests=[InputRequestDeclaration.sampling()])
            def f(self) -> PromptOutput: ...

    with refused("resource 'mem://x' (revisions 2025-11-25, 2026-07-28) declares input"):

        @build(revisions={NOVEMBER, MODERN})
        class Resource:
            @resource(uri="mem://x", name="x",
                      request_state_mode=RequestStateMode.FRAMEWORK_PROTECTED)  # fmt: skip
            def f(self) -> ResourceOutput: ...

    with refused("resource template 'mem://{x}' (revisions 2025-11-25) declares input"):

        @build(revisions={NOVEMBER, MODERN})
        class Template:
            @resource(uri="mem://{x}", name="x", revisions={NOVEMBER},
                      input_requests=[InputRequestDeclaration.roots()])  # fmt: skip
            def f(self, x: str) -> ResourceOutput: ...

    @build(revisions={NOVEMBER, MODERN}, session_revisions={NOVEMBER})
    class Kept:
        @prompt(name="p", input_requests=[InputRequestDeclaration.sampling()])
        def f(self) -> PromptOutput: ...

    assert Kept.__mcp_endpoint__.prompts[0].revisions == {NOVEMBER, MODERN}  # type: ignore[attr-defined]


# --- prompts --------------------------------------------------------------------------------


def test_prompt_arguments_are_str() -> None:
    with refused("prompt 'p': parameter 'count': prompt arguments are str or str | None"):

        @build()
        class Bad:
            @prompt(name="p")
            def f(self, count: int) -> PromptOutput: ...


def test_prompt_arg_takes_no_bounds_or_header() -> None:
    with refused("parameter 'sku': Arg takes name, title, description"):

        @build()
        class Bad:
            @prompt(name="p")
            def f(self, sku: Annotated[str, Arg(header="Sku")]) -> PromptOutput: ...


def test_prompt_argument_names_follow_the_prompt_rules() -> None:
    with refused("parameter 'sku': PromptArgument.name"):

        @build()
        class Bad:
            @prompt(name="p")
            def f(self, sku: Annotated[str, Arg(name="a b")]) -> PromptOutput: ...


@pytest.mark.parametrize("metadata", [UriParam("x"), "doc"])
def test_prompt_metadata_is_one_arg(metadata: object) -> None:
    with refused("parameter 'sku': Annotated metadata", "one Arg at most"):

        @build()
        class Bad:
            @prompt(name="p")
            def f(self, sku: Annotated[str, metadata]) -> PromptOutput: ...


def test_two_args_on_one_prompt_parameter_are_refused() -> None:
    with refused("one Arg at most"):

        @build()
        class Bad:
            @prompt(name="p")
            def f(self, sku: Annotated[str, Arg(title="a"), Arg(title="b")]) -> PromptOutput: ...


def test_prompt_results_are_checked() -> None:
    with refused("prompt 'p': the method returns", "PromptOutput, CompleteResult"):

        @build()
        class Bad:
            @prompt(name="p")
            def f(self) -> ResourceOutput: ...


def test_prompt_results_may_be_generic_aliases_of_allowed_kinds() -> None:
    with refused("the method returns list[str]"):

        @build()
        class Bad:
            @prompt(name="p")
            def f(self) -> list[str]: ...


def test_prompt_completions_name_arguments() -> None:
    with refused("prompt 'p'", "completions"):

        @build()
        class Bad:
            @prompt(name="p", completions={"nope": completer})
            def f(self, sku: str) -> PromptOutput: ...


# --- resources ------------------------------------------------------------------------------


def test_resource_uri_is_a_str() -> None:
    with refused("method 'f': a resource uri must be a str"):

        @build()
        class Bad:
            @resource(uri=_any(None), name="r")
            def f(self) -> ResourceOutput: ...


def test_exact_resources_take_no_business_parameters() -> None:
    with refused("resource 'x://a': parameter 'sku': an exact resource takes only framework"):

        @build()
        class Bad:
            @resource(uri="x://a", name="a")
            def f(self, sku: str) -> ResourceOutput: ...


def test_exact_resources_have_no_completions() -> None:
    with refused("resource 'x://a': completions belong to template variables"):

        @build()
        class Bad:
            @resource(uri="x://a", name="a", completions={"a": completer})
            def f(self) -> ResourceOutput: ...


def test_templates_have_no_size() -> None:
    with refused("resource template 'x://{a}': size describes one exact resource"):

        @build()
        class Bad:
            @resource(uri="x://{a}", name="a", size=3)
            def f(self, a: str) -> ResourceOutput: ...


def test_ct_12_template_parameters_are_str() -> None:
    with refused("parameter 'a': URI variables are delivered as str"):

        @build()
        class Bad:
            @resource(uri="x://{a}", name="a")
            def f(self, a: int) -> ResourceOutput: ...


def test_template_parameters_name_variables() -> None:
    with refused("parameter 'b': the template has no {b}"):

        @build()
        class Bad:
            @resource(uri="x://{a}", name="a")
            def f(self, a: str, b: str) -> ResourceOutput: ...


def test_a_variable_binds_one_parameter() -> None:
    with refused("parameters 'a' and 'other' both bind {a}"):

        @build()
        class Bad:
            @resource(uri="x://{a}", name="a")
            def f(self, a: str, other: Annotated[str, UriParam("a")]) -> ResourceOutput: ...


def test_every_variable_reaches_a_parameter() -> None:
    with refused("no parameter receives {b}"):

        @build()
        class Bad:
            @resource(uri="x://{a}/{b}", name="a")
            def f(self, a: str) -> ResourceOutput: ...


def test_template_syntax_errors_name_the_method() -> None:
    with refused("method 'f'", "x://{a}{b}"):

        @build()
        class Bad:
            @resource(uri="x://{a}{b}", name="a")
            def f(self, a: str, b: str) -> ResourceOutput: ...


def test_uri_param_names_are_non_empty_str() -> None:
    with refused("UriParam.name must be a non-empty str"):
        UriParam("")
    with refused("UriParam.name must be a non-empty str"):
        UriParam(_any(1))


def test_resource_results_are_checked() -> None:
    with refused("resource 'x://a': the method returns", "ResourceOutput"):

        @build()
        class Bad:
            @resource(uri="x://a", name="a")
            def f(self) -> PromptOutput: ...


def test_resource_list_methods_take_a_cursor() -> None:
    with refused("resource list handler: the method takes one business parameter, the cursor"):

        @build()
        class Bad:
            @resource_list()
            def f(self, cursor: str) -> ResourceListPage: ...


def test_resource_list_methods_take_exactly_one_cursor() -> None:
    with refused("resource list handler: the method takes one business parameter"):

        @build()
        class Bad:
            @resource_list()
            def f(self) -> ResourceListPage: ...


# --- the registry ---------------------------------------------------------------------------


def test_pk_03_a_class_without_a_descriptor_is_refused() -> None:
    class Plain:
        @tool(name="t")
        def f(self) -> Found:
            return Found([])

    with refused("from_classes", "Plain has no endpoint descriptor", "@mcpkit.endpoint"):
        EndpointRegistry.from_classes(Plain)


def test_pk_03_a_subclass_does_not_inherit_the_descriptor() -> None:
    @build()
    class Base:
        pass

    class Derived(Base):
        pass

    with refused("Derived has no endpoint descriptor"):
        EndpointRegistry.from_classes(Derived)


def test_from_classes_takes_classes() -> None:
    with refused("from_classes: classes[0] must be a class, not str"):
        EndpointRegistry.from_classes(_any("Inventory"))


def test_rg_09_from_classes_needs_one_class() -> None:
    with refused("at least one endpoint"):
        EndpointRegistry.from_classes()


def test_rg_10_from_classes_refuses_two_classes_on_one_path() -> None:
    @build()
    class First:
        pass

    @build()
    class Second:
        pass

    with refused("same path"):
        EndpointRegistry.from_classes(First, Second)


def test_decorated_endpoint_values_stay_immutable() -> None:
    @build(resource_list_cache=CachePolicy(5, "public"))
    class Frozen:
        pass

    built = Frozen.__mcp_endpoint__  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        built.path = "/y/mcp"
    assert JsonObject(built.capabilities(MODERN)) == {}
