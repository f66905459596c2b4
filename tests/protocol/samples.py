"""Registrations and endpoints shared by the protocol tests: every field a catalog entry can
carry, icons everywhere (so June's omissions show), and names deliberately registered out of
code-point order (so CT-08 and CT-09 give different lists)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpkit.json import JsonObject
from mcpkit.model import (
    Annotations,
    CompleteResult,
    Endpoint,
    Icon,
    Implementation,
    InvocationFeatures,
    OperationResult,
    PromptArgument,
    PromptOutput,
    PromptRegistration,
    RequestContext,
    ResourceOutput,
    ResourceRegistration,
    Revision,
    Role,
    ToolAnnotations,
    ToolArguments,
    ToolRegistration,
)

JUNE = Revision.V2025_06_18
NOVEMBER = Revision.V2025_11_25
MODERN = Revision.V2026_07_28
ALL = frozenset(Revision)
REVISIONS = [JUNE, NOVEMBER, MODERN]
ICON = Icon(src="https://example.com/icon.svg", mime_type="image/svg+xml", sizes=("any",))
IMPLEMENTATION = Implementation(
    "inventory",
    "1.0.0",
    title="Inventory",
    description="Stock levels",
    website_url="https://example.com",
    icons=(ICON,),
)
PATH = "/inventory/mcp"


def wire(value: object) -> Any:
    """A JSON value as plain Python (what a client would decode)."""
    from mcpkit.json import encode

    return json.loads(encode(value))


@dataclass(frozen=True)
class Query:
    query: str


@dataclass(frozen=True)
class Found:
    count: int


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


def typed_tool(name: str = "search", revisions: frozenset[Revision] = ALL) -> ToolRegistration:
    return ToolRegistration.typed(
        name=name,
        revisions=revisions,
        arguments=Query,
        output=Found,
        handler=search,
        title="Search",
        description="Find items",
        annotations=ToolAnnotations(read_only=True, title="Search items"),
        icons=(ICON,),
    )


def raw_tool(name: str, revisions: frozenset[Revision] = ALL) -> ToolRegistration:
    return ToolRegistration.json_object(name=name, revisions=revisions, handler=raw)


def prompt(name: str, revisions: frozenset[Revision] = ALL) -> PromptRegistration:
    return PromptRegistration.create(
        name=name,
        revisions=revisions,
        handler=summary,
        arguments=(PromptArgument("sku", title="SKU", required=True),),
        title="Summary",
        description="Summarise an item",
        icons=(ICON,),
    )


def exact(uri: str, revisions: frozenset[Revision] = ALL) -> ResourceRegistration:
    return ResourceRegistration.exact(
        uri=uri,
        name=uri.rsplit("/", 1)[-1],
        revisions=revisions,
        handler=read_exact,
        title="A file",
        mime_type="text/plain",
        size=3,
        icons=(ICON,),
        annotations=Annotations(audience=(Role.USER,), priority=0.5),
    )


def template(text: str, revisions: frozenset[Revision] = ALL) -> ResourceRegistration:
    return ResourceRegistration.template(
        uri_template=text,
        name="item",
        revisions=revisions,
        handler=read_template,
        description="An item",
        mime_type="application/json",
        icons=(ICON,),
    )


def endpoint(**overrides: Any) -> Endpoint:
    """Tools, prompts, resources and templates registered out of code-point order."""
    options: dict[str, Any] = {
        "tools": (typed_tool("zeta"), raw_tool("Alpha"), raw_tool("mid"), raw_tool("beta")),
        "prompts": (prompt("review"), prompt("Audit"), prompt("compare")),
        "resources": (
            exact("file:///z.txt"),
            exact("file:///a.txt"),
            exact("file:///M.txt"),
            template("inventory://items/{sku}"),
            template("catalog://{section}/x"),
        ),
    }
    return Endpoint(PATH, IMPLEMENTATION, ALL, **(options | overrides))
