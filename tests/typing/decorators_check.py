"""Checked by mypy (``make test``), never run: the decorators keep each method's exact type.

A method decorator returns the function it was given, so a decorated method must type-check
exactly like an undecorated one.  ``assert_type`` pins the results, and each ``type: ignore``
with its error code proves mypy still sees the original parameters: under
``warn_unused_ignores`` an ignore that no longer matches an error (because a decorator erased
the signature to ``...`` or ``Any``) fails the type check.
"""

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, assert_type

from mcpkit.model import (
    PromptOutput,
    RequestContext,
    ResourceListPage,
    ResourceOutput,
    Revision,
)
from mcpkit.model._decorators import endpoint, prompt, resource, resource_list, tool


@dataclass(frozen=True)
class Found:
    skus: list[str]


@endpoint(path="/typed/mcp", name="typed", version="1", revisions={Revision.V2026_07_28})
class Typed:
    @tool(name="typed.search", read_only=True)
    def search(self, query: str, limit: int | None = None) -> Found:
        return Found([query] * (limit or 1))

    @tool(name="typed.audit")
    async def audit(self, ctx: RequestContext, sku: str) -> Found:
        return Found([sku])

    @prompt(name="typed.summary")
    def summary(self, sku: str) -> PromptOutput:
        raise NotImplementedError

    @resource(uri="typed://items/{sku}", name="item")
    async def item(self, sku: str) -> ResourceOutput:
        raise NotImplementedError

    @resource_list()
    def pages(self, cursor: str | None) -> ResourceListPage:
        raise NotImplementedError

    @tool
    def bare(self, sku: str) -> Found:
        """Used bare: named ``bare``, described by this docstring."""
        return Found([sku])

    @prompt
    async def bare_prompt(self, sku: str) -> PromptOutput:
        raise NotImplementedError


async def check(typed: Typed, ctx: RequestContext) -> None:
    # The class decorator returns the class itself.
    assert_type(Typed, type[Typed])
    assert_type(typed, Typed)

    # Return types survive, sync and async.
    assert_type(typed.search("q"), Found)
    assert_type(typed.search(query="q", limit=2), Found)
    assert_type(await typed.audit(ctx, "s"), Found)
    assert_type(typed.summary("s"), PromptOutput)
    assert_type(await typed.item("s"), ResourceOutput)
    assert_type(typed.pages(None), ResourceListPage)
    assert_type(typed.bare("s"), Found)
    assert_type(await typed.bare_prompt("s"), PromptOutput)

    # Parameter types, names and arity survive: each call below is an error mypy must report.
    typed.search(5)  # type: ignore[arg-type]
    typed.search("q", "many")  # type: ignore[arg-type]
    typed.search(text="q")  # type: ignore[call-arg]
    typed.search()  # type: ignore[call-arg]
    await typed.audit(sku="s")  # type: ignore[call-arg]
    typed.summary(sku=1)  # type: ignore[arg-type]
    typed.pages()  # type: ignore[call-arg]
    typed.bare(5)  # type: ignore[arg-type]
    await typed.bare_prompt()  # type: ignore[call-arg]

    # The unbound method is assignable to its exact callable type.
    search: Callable[[Typed, str, int | None], Found] = Typed.search
    summary: Callable[[Typed, str], PromptOutput] = Typed.summary
    item: Callable[[Typed, str], Coroutine[Any, Any, ResourceOutput]] = Typed.item
    del search, summary, item
