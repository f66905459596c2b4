"""Endpoints: construction checks in their documented order, per-revision views, capabilities
and routing (EP-01..10, RV-02..07, PE-01..07, CT-02..12, TR-04, LG-04)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from mcpkit.errors import ConfigurationError
from mcpkit.json import JsonObject, encode
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.model import Revision
from mcpkit.model._completion import Completion
from mcpkit.model._context import InvocationFeatures, RequestContext, ToolArguments
from mcpkit.model._endpoint import Endpoint
from mcpkit.model._implementation import CachePolicy, Implementation
from mcpkit.model._outputs import PromptOutput, ResourceOutput
from mcpkit.model._prompts import PromptArgument, PromptRegistration
from mcpkit.model._resources import (
    ResourceListPage,
    ResourceListRegistration,
    ResourceRegistration,
)
from mcpkit.model._results import CompleteResult, OperationResult
from mcpkit.model._templates import MAX_TEMPLATES_PER_ENDPOINT
from mcpkit.model._tools import ToolRegistration

from ..spec_schemas import schema_errors

JUNE = Revision.V2025_06_18
NOVEMBER = Revision.V2025_11_25
MODERN = Revision.V2026_07_28
ALL = frozenset(Revision)
ONLY_MODERN = frozenset({MODERN})
IMPLEMENTATION = Implementation("inventory", "1.0.0")
PATH = "/inventory/mcp"


@dataclass(frozen=True)
class Query:
    query: str


@dataclass(frozen=True)
class Found:
    count: int


def _any(value: object) -> Any:
    """Pass a deliberately wrong value past the type checker."""
    return value


def search(ctx: RequestContext, arguments: ToolArguments[Query], features: object) -> Found:
    return Found(0)


def raw(
    ctx: RequestContext, arguments: ToolArguments[JsonObject], features: InvocationFeatures
) -> OperationResult:
    return CompleteResult.from_tool_text("ok")


def summary(
    ctx: RequestContext, arguments: Mapping[str, str], features: InvocationFeatures
) -> PromptOutput:
    return PromptOutput(messages=())


def read_exact(ctx: RequestContext, features: InvocationFeatures) -> ResourceOutput:
    raise NotImplementedError


def read_template(
    ctx: RequestContext, variables: Mapping[str, str], features: InvocationFeatures
) -> ResourceOutput:
    raise NotImplementedError


def list_resources(
    ctx: RequestContext, cursor: str | None, features: InvocationFeatures
) -> ResourceListPage:
    return ResourceListPage(())


def complete(ctx: RequestContext, value: str, arguments: Mapping[str, str]) -> Completion:
    return Completion(())


def tool(name: str = "inventory.search", revisions: frozenset[Revision] = ALL) -> ToolRegistration:
    return ToolRegistration.typed(
        name=name, revisions=revisions, arguments=Query, output=Found, handler=search
    )


def raw_tool(name: str, revisions: frozenset[Revision] = ALL) -> ToolRegistration:
    return ToolRegistration.json_object(name=name, revisions=revisions, handler=raw)


def prompt(
    name: str = "inventory.summary", revisions: frozenset[Revision] = ALL, **options: Any
) -> PromptRegistration:
    return PromptRegistration.create(name=name, revisions=revisions, handler=summary, **options)


def exact(
    uri: str = "inventory://catalog", revisions: frozenset[Revision] = ALL
) -> ResourceRegistration:
    return ResourceRegistration.exact(
        uri=uri, name="catalog", revisions=revisions, handler=read_exact
    )


def template(
    text: str = "inventory://items/{sku}", revisions: frozenset[Revision] = ALL, **options: Any
) -> ResourceRegistration:
    return ResourceRegistration.template(
        uri_template=text, name="item", revisions=revisions, handler=read_template, **options
    )


def listing(revisions: frozenset[Revision] = ALL) -> ResourceListRegistration:
    return ResourceListRegistration(revisions=revisions, handler=list_resources)


def endpoint(**options: Any) -> Endpoint:
    values: dict[str, Any] = {
        "path": PATH,
        "implementation": IMPLEMENTATION,
        "revisions": ALL,
    }
    return Endpoint(**(values | options))


def refusal(**options: Any) -> str:
    with pytest.raises(ConfigurationError) as caught:
        endpoint(**options)
    return str(caught.value)


ENDPOINT_PREFIX = "endpoint '/inventory/mcp' (revisions 2025-06-18, 2025-11-25, 2026-07-28): "


# --- building an endpoint (EP-01, EP-08, PE-01..06) -------------------------------------------


def test_ep_01_pe_01_an_endpoint_needs_only_a_path_an_implementation_and_revisions() -> None:
    built = Endpoint(PATH, IMPLEMENTATION, [MODERN])
    assert built.path == PATH
    assert built.implementation is IMPLEMENTATION
    assert built.revisions == ONLY_MODERN and isinstance(built.revisions, frozenset)
    assert built.instructions is None
    assert (built.tools, built.prompts, built.resources) == ((), (), ())
    assert built.resource_list is None
    assert built.tool_rate_limiter is None
    assert built.session_revisions == frozenset()


def test_pe_06_both_list_caches_default_to_private_no_cache() -> None:
    built = endpoint()
    assert built.resource_list_cache is CachePolicy.PRIVATE_NO_CACHE
    assert built.resource_template_list_cache is CachePolicy.PRIVATE_NO_CACHE


def test_ep_08_pe_03_every_configured_value_has_an_immutable_getter() -> None:
    tools, prompts, resources = [tool()], [prompt()], [exact(), template()]
    lister = listing()
    cache = CachePolicy(60_000, "public")
    built = endpoint(
        instructions="Prefer inventory.search before reading an item.",
        tools=tools,
        prompts=prompts,
        resources=resources,
        resource_list=lister,
        resource_list_cache=cache,
        resource_template_list_cache=CachePolicy(5, "private"),
    )
    tools.clear()
    prompts.clear()
    resources.clear()
    assert built.instructions == "Prefer inventory.search before reading an item."
    assert isinstance(built.tools, tuple) and len(built.tools) == 1
    assert isinstance(built.prompts, tuple) and len(built.prompts) == 1
    assert isinstance(built.resources, tuple) and len(built.resources) == 2
    assert built.resource_list is lister
    assert built.resource_list_cache is cache
    assert built.resource_template_list_cache == CachePolicy(5, "private")
    assert built.tool_rate_limiter is None
    assert built.session_revisions == frozenset()
    assert isinstance(built.session_revisions, frozenset)


def test_the_tool_rate_limiter_is_kept_as_a_name_for_the_server_to_resolve() -> None:
    assert endpoint(tool_rate_limiter="inventory").tool_rate_limiter == "inventory"


def test_ep_01_an_endpoint_is_immutable_compared_by_identity_and_has_a_short_repr() -> None:
    built = endpoint(tools=[tool()])
    with pytest.raises(AttributeError, match="immutable"):
        built.path = "/other"
    with pytest.raises(AttributeError, match="immutable"):
        del built.tools
    assert built != endpoint(tools=[tool()])
    assert built == built
    assert repr(built) == "<Endpoint '/inventory/mcp' [2025-06-18, 2025-11-25, 2026-07-28]>"


def test_ep_08_instructions_are_kept_exactly() -> None:
    assert endpoint(instructions="").instructions == ""
    assert endpoint(instructions=" \U0001f680 ").instructions == " \U0001f680 "

    class Text(str):
        pass

    assert type(endpoint(instructions=Text("x")).instructions) is str


# --- refusals, in the documented order ---------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["", "mcp", "/", "/a/", "/a//b", "/a?x", "/a#x", "/a/../b", "/caf\u00e9", "/{x}"]
)
def test_ep_02_to_06_a_path_that_is_not_already_normalised_is_refused(path: str) -> None:
    with pytest.raises(ConfigurationError, match="endpoint path"):
        endpoint(path=path)


def test_ep_04_ep_05_a_valid_path_is_kept_exactly_never_rewritten() -> None:
    assert endpoint(path="/caf%C3%A9/mcp").path == "/caf%C3%A9/mcp"


def test_ep_02_a_path_must_be_a_str() -> None:
    assert "endpoint path must be a str" in refusal(path=_any(b"/mcp"))


@pytest.mark.parametrize("revisions", [frozenset(), (), []])
def test_rv_02_the_endpoint_revisions_must_not_be_empty(revisions: object) -> None:
    message = refusal(revisions=revisions)
    assert message == (
        "endpoint '/inventory/mcp': revisions must not be empty: no revision is assumed"
    )


@pytest.mark.parametrize("revisions", [MODERN, "2026-07-28", None, {"a": MODERN}])
def test_rv_02_the_endpoint_revisions_must_be_a_collection(revisions: object) -> None:
    assert refusal(revisions=revisions) == (
        "endpoint '/inventory/mcp': revisions must be a set of Revision members"
    )


def test_rv_01_rv_02_revisions_are_revision_members_not_wire_strings() -> None:
    message = refusal(revisions={"2026-07-28"})
    assert message.startswith("endpoint '/inventory/mcp': every member of revisions")
    assert "Revision.parse" in message


def test_pe_02_the_implementation_must_be_an_implementation() -> None:
    message = refusal(implementation=_any({"name": "x", "version": "1"}))
    assert message == ENDPOINT_PREFIX + "implementation must be an Implementation"


@pytest.mark.parametrize(
    ("value", "problem"),
    [(1, "instructions must be a str or None"), ("\ud800", "instructions: ")],
)
def test_pe_03_instructions_are_well_formed_text(value: object, problem: str) -> None:
    assert refusal(instructions=value).startswith(ENDPOINT_PREFIX + problem)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("", "tool_rate_limiter must be a non-empty str or None"),
        (3, "tool_rate_limiter must be a str or None"),
        ("a\udc00", "tool_rate_limiter: "),
    ],
)
def test_pe_03_the_tool_rate_limiter_names_a_limiter(value: object, problem: str) -> None:
    assert refusal(tool_rate_limiter=value).startswith(ENDPOINT_PREFIX + problem)


@pytest.mark.parametrize("option", ["resource_list_cache", "resource_template_list_cache"])
def test_pe_06_cache_hints_are_cache_policies(option: str) -> None:
    message = refusal(**{option: {"ttlMs": 0, "cacheScope": "private"}})
    assert message == ENDPOINT_PREFIX + f"{option} must be a CachePolicy"


def test_rv_07_session_revisions_are_served_2025_revisions_only() -> None:
    assert endpoint(session_revisions={JUNE, NOVEMBER}).session_revisions == {JUNE, NOVEMBER}
    assert endpoint().session_revisions == frozenset()
    modern = refusal(session_revisions={MODERN})
    assert modern == ENDPOINT_PREFIX + (
        "session_revisions 2026-07-28 must be served 2025 revisions only; 2026-07-28 is always "
        "stateless"
    )
    unserved = refusal(revisions={NOVEMBER, MODERN}, session_revisions=[JUNE])
    assert unserved.startswith("endpoint '/inventory/mcp' (revisions 2025-11-25, 2026-07-28): ")
    assert "session_revisions 2025-06-18 must be served 2025 revisions only" in unserved


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (JUNE, "session_revisions must be a set of Revision members"),
        (["2025-06-18"], "every member of session_revisions must be a Revision"),
    ],
)
def test_rv_07_session_revisions_are_a_set_of_revisions(value: object, problem: str) -> None:
    assert refusal(session_revisions=value).startswith(ENDPOINT_PREFIX + problem)


@pytest.mark.parametrize(
    ("option", "value", "problem"),
    [
        ("tools", tool(), "tools must be a list or tuple of ToolRegistration"),
        ("tools", {tool()}, "tools must be a list or tuple of ToolRegistration"),
        (
            "tools",
            [tool(), prompt()],
            "tools[1] must be a ToolRegistration, not PromptRegistration",
        ),
        ("prompts", prompt(), "prompts must be a list or tuple of PromptRegistration"),
        ("prompts", [tool()], "prompts[0] must be a PromptRegistration, not ToolRegistration"),
        ("resources", exact(), "resources must be a list or tuple of ResourceRegistration"),
        ("resources", [listing()], "resources[0] must be a ResourceRegistration, not Resource"),
        ("resource_list", [listing()], "resource_list must be a ResourceListRegistration or None"),
    ],
)
def test_pe_03_registration_collections_hold_registrations_of_their_kind(
    option: str, value: object, problem: str
) -> None:
    assert refusal(**{option: value}).startswith(ENDPOINT_PREFIX + problem)


@pytest.mark.parametrize(
    ("option", "value", "operation"),
    [
        (
            "tools",
            [tool()],
            "tool 'inventory.search' (revisions 2025-06-18, 2025-11-25, 2026-07-28)",
        ),
        ("prompts", [prompt()], "prompt 'inventory.summary' (revisions 2025-06-18, 2025-11-25, "),
        ("resources", [exact()], "resource 'inventory://catalog' (revisions 2025-06-18, "),
        ("resources", [template()], "resource template 'inventory://items/{sku}' (revisions "),
        ("resource_list", listing(), "resource list handler (revisions 2025-06-18, 2025-11-25, "),
    ],
)
def test_rv_04_tr_04_pe_07_an_operation_serves_only_the_endpoint_revisions(
    option: str, value: object, operation: str
) -> None:
    message = refusal(revisions=[MODERN], **{option: value})
    assert message.startswith("endpoint '/inventory/mcp' (revisions 2026-07-28): " + operation)
    assert message.endswith(
        "selects 2025-06-18, 2025-11-25, which the endpoint does not serve; an operation's "
        "revisions must be a subset of its endpoint's"
    )


def test_rv_04_a_subset_of_the_endpoint_revisions_is_accepted() -> None:
    built = endpoint(revisions=ALL, tools=[tool(revisions=ONLY_MODERN)])
    assert built.tools_for(MODERN) == built.tools


def test_lg_04_the_2025_object_output_rule_is_rechecked_with_the_path() -> None:
    listed = ToolRegistration.typed(
        name="inventory.all", revisions=ONLY_MODERN, arguments=Query, output=list[Found],
        handler=search,
    )  # fmt: skip
    assert endpoint(tools=[listed]).tools == (listed,)
    # Only a registration built some other way could select 2025 with a non-object output.
    object.__setattr__(listed, "revisions", frozenset({NOVEMBER, MODERN}))
    message = refusal(tools=[listed])
    assert message == ENDPOINT_PREFIX + (
        "tool 'inventory.all' (revisions 2025-11-25, 2026-07-28) declares a non-object output "
        "schema, but structured content must be a JSON object on 2025-11-25"
    )
    # After the subsets (RV-04), before uniqueness (CT-02).
    assert refusal(revisions=[MODERN], tools=[listed]).endswith("subset of its endpoint's")
    assert refusal(tools=[listed, listed]).endswith("must be a JSON object on 2025-11-25")


def test_lg_04_legacy_tools_with_object_or_no_output_schema_are_accepted() -> None:
    built = endpoint(tools=[tool(), raw_tool("inventory.raw")])
    assert len(built.tools_for(JUNE)) == 2


def test_ct_02_tool_names_are_unique_within_an_endpoint_whatever_their_revisions() -> None:
    """CT-02, SP-05: a tool name is unique within one endpoint, whatever the revisions."""
    first = tool(revisions=frozenset({JUNE}))
    message = refusal(tools=[first, raw_tool("inventory.search", ONLY_MODERN)])
    assert message == ENDPOINT_PREFIX + (
        "tool 'inventory.search' (revisions 2026-07-28) repeats the name of tool "
        "'inventory.search' (revisions 2025-06-18); names must be unique within an endpoint, "
        "whatever their revisions"
    )
    assert "repeats the name" in refusal(tools=[first, first])


def test_ct_02_prompt_names_are_unique_and_separate_from_tool_names() -> None:
    message = refusal(prompts=[prompt(), prompt(revisions=ONLY_MODERN)])
    assert message.startswith(ENDPOINT_PREFIX + "prompt 'inventory.summary' (revisions 2026-07-28)")
    assert message.endswith("names must be unique within an endpoint, whatever their revisions")
    shared = endpoint(tools=[tool("same")], prompts=[prompt("same")])
    assert shared.find_tool("same", MODERN) is not None
    assert shared.find_prompt("same", MODERN) is not None


def test_ct_03_exact_resource_uris_are_unique() -> None:
    message = refusal(resources=[exact(), exact(revisions=ONLY_MODERN)])
    assert message == ENDPOINT_PREFIX + (
        "resource 'inventory://catalog' (revisions 2026-07-28) repeats the URI of resource "
        "'inventory://catalog' (revisions 2025-06-18, 2025-11-25, 2026-07-28); URIs must be "
        "unique within an endpoint, whatever their revisions"
    )


def test_ct_03_long_uris_are_shown_bounded_in_messages() -> None:
    uri = "inventory://" + "x" * 200
    message = refusal(resources=[exact(uri), exact(uri)])
    shown = repr(uri[:80]) + "... (212 characters)"
    assert message == ENDPOINT_PREFIX + (
        f"resource {shown} (revisions 2025-06-18, 2025-11-25, 2026-07-28) repeats the URI of "
        f"resource {shown} (revisions 2025-06-18, 2025-11-25, 2026-07-28); URIs must be unique "
        "within an endpoint, whatever their revisions"
    )
    assert uri not in message


def test_ct_04_template_strings_are_unique() -> None:
    message = refusal(resources=[template(), template(revisions=ONLY_MODERN)])
    assert message.startswith(
        ENDPOINT_PREFIX + "resource template 'inventory://items/{sku}' (revisions 2026-07-28) "
        "repeats the template of resource template 'inventory://items/{sku}'"
    )
    assert message.endswith("templates must be unique within an endpoint, whatever their revisions")


def test_ct_05_overlapping_templates_are_refused_naming_both() -> None:
    first = template("inventory://items/{sku}")
    message = refusal(
        resources=[first, template("inventory://{kind}/sku-1", revisions=ONLY_MODERN)]
    )
    assert message == ENDPOINT_PREFIX + (
        "resource template 'inventory://items/{sku}' (revisions 2025-06-18, 2025-11-25, "
        "2026-07-28) and resource template 'inventory://{kind}/sku-1' (revisions 2026-07-28) "
        "overlap: some URI could match both, so a read would depend on registration order"
    )
    with pytest.raises(ConfigurationError) as caught:
        endpoint(resources=[first, template("inventory://items/{id}")])
    assert isinstance(caught.value.__cause__, ConfigurationError)


def test_ct_05_ct_11_an_exact_uri_a_template_also_matches_is_not_a_conflict() -> None:
    built = endpoint(resources=[template(), exact("inventory://items/special")])
    assert len(built.resources) == 2


def test_ct_05_templates_are_bounded_per_endpoint() -> None:
    many = [template(f"inventory://t{index}/{{v}}") for index in range(MAX_TEMPLATES_PER_ENDPOINT)]
    assert len(endpoint(resources=many).templates_for(MODERN)) == MAX_TEMPLATES_PER_ENDPOINT
    message = refusal(resources=[*many, template("inventory://last/{v}")])
    assert message == ENDPOINT_PREFIX + (
        "has 257 resource templates; an endpoint may have at most 256 (overlap checks are bounded)"
    )


def test_the_checks_run_in_the_documented_order() -> None:
    # path before revisions, revisions before options, options before registrations ...
    assert refusal(path="/a/", revisions=()).startswith("endpoint path '/a/'")
    assert refusal(revisions=(), implementation=None).endswith("no revision is assumed")
    assert refusal(implementation=None, session_revisions={MODERN}).endswith("Implementation")
    assert "session_revisions" in refusal(session_revisions={MODERN}, tools=tool())
    # ... collections before subsets, subsets before outputs and uniqueness ...
    assert "prompts[0]" in refusal(revisions=[MODERN], tools=[tool()], prompts=[tool()])
    assert "subset of its endpoint's" in refusal(revisions=[MODERN], prompts=[prompt()] * 2)
    twice_then_unserved = [tool(revisions=ONLY_MODERN)] * 2 + [tool("x")]
    assert "subset of its endpoint's" in refusal(revisions=[MODERN], tools=twice_then_unserved)
    # ... uniqueness in the order tools, prompts, URIs, templates, then overlaps.
    unique = "must be unique within an endpoint, whatever their revisions"
    twice = {"tools": [tool()] * 2, "prompts": [prompt()] * 2}
    assert refusal(**twice).endswith("names " + unique)
    assert "tool 'inventory.search'" in refusal(**twice)
    assert refusal(prompts=[prompt()] * 2, resources=[exact()] * 2).endswith("names " + unique)
    assert refusal(resources=[template()] * 2 + [exact()] * 2).endswith("URIs " + unique)
    overlapping = [template(), template("inventory://items/{id}"), template("x://{a}")]
    assert refusal(resources=[*overlapping, template("x://{a}")]).endswith("templates " + unique)


def test_ct_06_registration_order_is_kept() -> None:
    """CT-06: programmatic endpoints keep the supplied order of their registrations, in the
    views too."""
    tools = [tool("c"), tool("a"), tool("b")]
    resources = [template("z://{a}"), exact("b://x"), exact("a://x"), template("a://{z}")]
    built = endpoint(tools=tools, resources=resources)
    assert built.tools == tuple(tools)
    assert built.resources == tuple(resources)
    assert built.tools_for(JUNE) == tuple(tools)
    assert built.resources_for(JUNE) == (resources[1], resources[2])
    assert built.templates_for(JUNE) == (resources[0], resources[3])


# --- new endpoints from an endpoint (PE-03, PE-04) -------------------------------------------


def test_pe_04_with_tools_appends_singular_and_collection_forms() -> None:
    base = endpoint(tools=[tool("a")])
    more = base.with_tools(tool("b"), [tool("c"), tool("d")], (tool("e"),))
    assert [each.name for each in more.tools] == ["a", "b", "c", "d", "e"]
    assert [each.name for each in base.tools] == ["a"]
    assert more.path == base.path and more.implementation is base.implementation


def test_pe_04_with_prompts_and_with_resources_append() -> None:
    base = endpoint()
    built = base.with_prompts(prompt("a"), [prompt("b")]).with_resources(exact(), [template()])
    assert [each.name for each in built.prompts] == ["a", "b"]
    assert len(built.resources) == 2
    assert base.prompts == () and base.resources == ()


def test_pe_04_appending_checks_everything_again() -> None:
    base = endpoint(tools=[tool()], resources=[template()])
    with pytest.raises(ConfigurationError, match="names must be unique within an endpoint"):
        base.with_tools(tool())
    with pytest.raises(ConfigurationError, match="would depend on registration order"):
        base.with_resources(template("inventory://{kind}/{id}"))
    with pytest.raises(ConfigurationError, match=r"tools\[1\] must be a ToolRegistration"):
        base.with_tools(_any("inventory.other"))


def test_pe_03_replace_replaces_values_and_keeps_the_rest() -> None:
    base = endpoint(tools=[tool()], instructions="Read first.")
    replaced = base.replace(tools=[], revisions={JUNE, MODERN})
    assert replaced.tools == ()
    assert replaced.revisions == frozenset({JUNE, MODERN})
    assert replaced.instructions == "Read first."
    assert replaced.resource_list_cache is base.resource_list_cache
    with pytest.raises(ConfigurationError, match="session_revisions 2025-06-18"):
        base.replace(revisions={MODERN}, tools=[], session_revisions={JUNE})
    with pytest.raises(TypeError):
        base.replace(unknown=1)


# --- per-revision views, capabilities and routing (EP-07, CT-08, CT-11, CT-12) ----------------


def test_ct_08_views_hold_what_selects_each_revision_in_order() -> None:
    june_tool, modern_tool = tool("a", frozenset({JUNE})), raw_tool("b", ONLY_MODERN)
    june_prompt = prompt("p", frozenset({JUNE, NOVEMBER}))
    modern_exact, all_template = exact(revisions=ONLY_MODERN), template()
    lister = listing(frozenset({NOVEMBER}))
    built = endpoint(
        tools=[june_tool, modern_tool],
        prompts=[june_prompt],
        resources=[modern_exact, all_template],
        resource_list=lister,
    )
    assert built.tools_for(JUNE) == (june_tool,)
    assert built.tools_for(MODERN) == (modern_tool,)
    assert built.tools_for(NOVEMBER) == ()
    assert built.prompts_for(NOVEMBER) == (june_prompt,)
    assert built.prompts_for(MODERN) == ()
    assert built.resources_for(MODERN) == (modern_exact,)
    assert built.resources_for(JUNE) == ()
    assert built.templates_for(JUNE) == (all_template,)
    assert built.resource_list_for(NOVEMBER) is lister
    assert built.resource_list_for(MODERN) is None


def test_ep_07_an_endpoint_without_operations_advertises_no_capability() -> None:
    built = endpoint()
    for revision in Revision:
        assert built.capabilities(revision) == {}
        assert isinstance(built.capabilities(revision), JsonObject)


def test_ep_07_capabilities_follow_what_each_revision_serves() -> None:
    built = endpoint(
        tools=[tool(revisions=ONLY_MODERN)],
        prompts=[prompt(revisions=frozenset({JUNE}))],
        resources=[exact(revisions=frozenset({NOVEMBER}))],
    )
    assert built.capabilities(JUNE) == {"prompts": {}}
    assert built.capabilities(NOVEMBER) == {"resources": {}}
    assert built.capabilities(MODERN) == {"tools": {}}


def test_ep_07_a_template_or_a_resource_list_alone_advertises_resources() -> None:
    built = endpoint(
        resources=[template(revisions=frozenset({JUNE}))],
        resource_list=listing(frozenset({NOVEMBER})),
    )
    assert built.capabilities(JUNE) == {"resources": {}}
    assert built.capabilities(NOVEMBER) == {"resources": {}}
    assert built.capabilities(MODERN) == {}


def test_ep_07_completions_are_advertised_where_a_completion_handler_is() -> None:
    completed = prompt(
        "p", frozenset({JUNE}), arguments=[PromptArgument("sku")], completions={"sku": complete}
    )
    variable = template("z://{v}", frozenset({MODERN}), completions={"v": complete})
    built = endpoint(prompts=[completed, prompt("q")], resources=[variable, template(), exact()])
    assert built.capabilities(JUNE) == {"prompts": {}, "resources": {}, "completions": {}}
    assert built.capabilities(NOVEMBER) == {"prompts": {}, "resources": {}}
    assert built.capabilities(MODERN) == {"prompts": {}, "resources": {}, "completions": {}}


def test_ep_07_an_unserved_revision_sees_nothing() -> None:
    built = endpoint(revisions={MODERN}, tools=[raw_tool("a", ONLY_MODERN)],
                     resources=[template(revisions=ONLY_MODERN)])  # fmt: skip
    assert built.capabilities(JUNE) == {}
    assert built.tools_for(JUNE) == ()
    assert built.find_tool("a", JUNE) is None
    assert built.find_resource("inventory://items/1", JUNE) is None
    assert built.resource_list_for(JUNE) is None


def test_ep_09_capabilities_never_change_once_built() -> None:
    built = endpoint(tools=[tool()])
    capabilities = built.capabilities(MODERN)
    with pytest.raises(TypeError):
        capabilities["prompts"] = {}
    assert built.capabilities(MODERN) is capabilities


def test_find_tool_and_find_prompt_are_exact_and_per_revision() -> None:
    search_tool, modern_prompt = tool(), prompt(revisions=ONLY_MODERN)
    built = endpoint(tools=[search_tool], prompts=[modern_prompt])
    assert built.find_tool("inventory.search", JUNE) is search_tool
    assert built.find_tool("Inventory.search", JUNE) is None
    assert built.find_tool("inventory.search ", JUNE) is None
    assert built.find_prompt("inventory.summary", MODERN) is modern_prompt
    assert built.find_prompt("inventory.summary", JUNE) is None
    assert built.find_prompt("inventory.search", MODERN) is None


def test_ct_11_exact_resources_are_matched_before_templates() -> None:
    any_item, special = template(), exact("inventory://items/special", ONLY_MODERN)
    built = endpoint(resources=[any_item, special])
    assert built.find_resource("inventory://items/special", MODERN) == (special, {})
    # Where the exact resource is not served, the template answers.
    found = built.find_resource("inventory://items/special", JUNE)
    assert found is not None
    assert found[0] is any_item and found[1] == {"sku": "special"}


def test_ct_12_template_variables_are_decoded_once_and_read_only() -> None:
    built = endpoint(resources=[template("file:///{path}")])
    found = built.find_resource("file:///src%2Fmain%252F.rs", MODERN)
    assert found is not None
    registration, variables = found
    assert registration.template is not None and registration.template.text == "file:///{path}"
    assert variables == {"path": "src/main%2F.rs"}
    with pytest.raises(TypeError):
        variables["path"] = "x"  # type: ignore[index]
    exact_match = endpoint(resources=[exact()]).find_resource("inventory://catalog", MODERN)
    assert exact_match is not None
    with pytest.raises(TypeError):
        exact_match[1]["x"] = "y"  # type: ignore[index]


def test_ct_11_a_uri_nothing_matches_is_not_found() -> None:
    built = endpoint(resources=[template(), exact()])
    assert built.find_resource("inventory://items/a/b", MODERN) is None
    assert built.find_resource("inventory://catalog/", MODERN) is None
    assert built.find_resource("INVENTORY://catalog", MODERN) is None


def test_ct_11_templated_reads_are_bounded_but_exact_uris_are_not() -> None:
    """The templated URI bound (``Limits.max_templated_uri_chars``) at the limit and one past."""
    bound = DEFAULT_LIMITS.max_templated_uri_chars
    sku = "x" * (bound - len("inventory://items/"))
    long_exact = exact("inventory://big/" + "y" * bound)
    built = endpoint(resources=[template(), long_exact])
    found = built.find_resource("inventory://items/" + sku, MODERN)
    assert found is not None and found[1] == {"sku": sku}
    assert built.find_resource("inventory://items/" + sku + "x", MODERN) is None
    assert built.find_resource(str(long_exact.uri), MODERN) == (long_exact, {})
    tight = Limits(max_templated_uri_chars=len("inventory://items/ab"))
    assert built.find_resource("inventory://items/ab", MODERN, limits=tight) is not None
    assert built.find_resource("inventory://items/abc", MODERN, limits=tight) is None


# --- capabilities against the official schemas ------------------------------------------------


@pytest.mark.parametrize("revision", list(Revision))
def test_ep_07_capabilities_are_valid_server_capabilities(revision: Revision) -> None:
    everything = endpoint(
        tools=[tool()],
        prompts=[prompt(arguments=[PromptArgument("sku")], completions={"sku": complete})],
        resources=[exact()],
    )
    for built in (endpoint(), everything):
        capabilities = json.loads(encode(built.capabilities(revision)))
        assert schema_errors(revision.wire, "ServerCapabilities", capabilities) == []
    assert set(everything.capabilities(revision)) == {
        "tools",
        "prompts",
        "resources",
        "completions",
    }
