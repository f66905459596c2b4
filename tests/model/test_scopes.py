"""Required OAuth scopes: declared on tools, prompts, resources and templates, checked as RFC 6749
scope-tokens, carried by the registrations and gathered by the endpoint (the server enforces
them)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mcpkit.errors import ConfigurationError
from mcpkit.json import JsonObject
from mcpkit.model import (
    CompleteResult,
    EndpointBuilder,
    Implementation,
    InvocationFeatures,
    RequestContext,
    Revision,
    ToolArguments,
)
from mcpkit.model._decorators import endpoint, prompt, resource, tool
from mcpkit.model._endpoint import Endpoint
from mcpkit.model._prompts import PromptRegistration
from mcpkit.model._resources import ResourceRegistration
from mcpkit.model._results import OperationResult, TaskCreatedResult
from mcpkit.model._scopes import MAX_DECLARED_SCOPES, MAX_SCOPE_CHARS, checked_scopes
from mcpkit.model._tools import ToolRegistration

from ..protocol.samples import Found, Query, read_exact, read_template, search, summary

MODERN = frozenset({Revision.V2026_07_28})
WHERE = "@tool 'delete_note'"
# Every character a scope-token may hold: %x21 / %x23-5B / %x5D-7E.
TOKEN_CHARS = "".join(chr(code) for code in range(0x21, 0x7F) if chr(code) not in '"\\')


def _any(value: object) -> Any:
    """Pass a deliberately wrong value past the type checker."""
    return value


def refused(*parts: str) -> Any:
    """``pytest.raises`` for a ``ConfigurationError`` holding every part, in order."""
    return pytest.raises(ConfigurationError, match=".*".join(re.escape(part) for part in parts))


# --- checked_scopes ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [["notes:read", "notes:write"], ("notes:write", "notes:read"),
     {"notes:read", "notes:write"}, frozenset({"notes:write", "notes:read"})],
)  # fmt: skip
def test_any_collection_of_str_is_a_set_of_scopes(value: object) -> None:
    assert checked_scopes(value, WHERE) == frozenset({"notes:read", "notes:write"})


def test_no_scopes_requires_none_and_duplicates_collapse() -> None:
    assert checked_scopes((), WHERE) == frozenset()
    assert checked_scopes(["a", "a", "b"], WHERE) == frozenset({"a", "b"})


def test_every_scope_token_character_is_accepted() -> None:
    assert len(TOKEN_CHARS) == 0x7E - 0x21 - 1
    assert checked_scopes([TOKEN_CHARS], WHERE) == frozenset({TOKEN_CHARS})


def test_a_str_subclass_is_kept_as_a_plain_str() -> None:
    class Scope(str):
        pass

    (kept,) = checked_scopes([Scope("notes:read")], WHERE)
    assert type(kept) is str and kept == "notes:read"


def test_the_limits_are_inclusive() -> None:
    most = [f"s{index}" for index in range(MAX_DECLARED_SCOPES)]
    assert len(checked_scopes(most, WHERE)) == MAX_DECLARED_SCOPES == 32
    longest = "x" * MAX_SCOPE_CHARS
    assert checked_scopes([longest], WHERE) == frozenset({longest})
    assert MAX_SCOPE_CHARS == 128


def test_one_scope_too_many_is_refused() -> None:
    with refused(f"{WHERE}: scopes holds 33 items; at most 32 may be declared"):
        checked_scopes([f"s{index}" for index in range(MAX_DECLARED_SCOPES + 1)], WHERE)


def test_one_character_too_many_is_refused() -> None:
    with refused(f"{WHERE}: scopes[1] must be 1 to 128 characters"):
        checked_scopes(["ok", "x" * (MAX_SCOPE_CHARS + 1)], WHERE)


def test_an_empty_scope_is_refused() -> None:
    with refused(f"{WHERE}: scopes[0] must be 1 to 128 characters"):
        checked_scopes([""], WHERE)


def test_a_space_says_to_list_the_scopes_one_by_one() -> None:
    with refused(f"{WHERE}: scopes[0] contains a space: declare each scope as its own item"):
        checked_scopes(["notes:read notes:write"], WHERE)


@pytest.mark.parametrize(
    "scope",
    ['say"hi"', "back\\slash", "caf\u00e9", "tab\there", "nul\x00", "del\x7f", "\u2028",
     "a\udc00"],
)  # fmt: skip
def test_characters_outside_a_scope_token_are_refused(scope: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        checked_scopes(["fine", scope], WHERE)
    message = str(caught.value)
    assert message.startswith(f"{WHERE}: scopes[1] must be printable ASCII other than space")
    assert "RFC 6749" in message
    assert scope not in message  # the position, never the value


def test_a_bare_str_is_refused_with_the_collection_to_pass() -> None:
    with refused(f"{WHERE}: scopes must be a collection of scopes, not one str",
                 'pass scopes=["notes:read"]'):  # fmt: skip
        checked_scopes("notes:read", WHERE)


def _scope_generator() -> Iterator[str]:
    yield "notes:read"


@pytest.mark.parametrize(
    "value", [None, 3, {"notes:read": True}, _scope_generator(), iter(["notes:read"])]
)
def test_anything_but_a_collection_is_refused(value: object) -> None:
    with refused(f"{WHERE}: scopes must be a list, tuple, set or frozenset of str",
                 'such as scopes=["notes:read"]'):  # fmt: skip
        checked_scopes(value, WHERE)


@pytest.mark.parametrize("member", [None, 3, b"notes:read", ("notes:read",)])
def test_a_member_that_is_not_a_str_is_refused(member: object) -> None:
    with refused(f"{WHERE}: scopes[2] must be a str"):
        checked_scopes(["a", "b", member], WHERE)


# --- registrations -----------------------------------------------------------------------------


def operation(
    ctx: RequestContext, arguments: ToolArguments[Any], features: InvocationFeatures
) -> OperationResult:
    return CompleteResult.from_tool_text("ok")


def _typed(**options: Any) -> ToolRegistration:
    return ToolRegistration.typed(
        name="notes.find", revisions=MODERN, arguments=Query, output=Found, handler=search,
        **options,
    )  # fmt: skip


def _typed_task(**options: Any) -> ToolRegistration:
    return ToolRegistration.typed_task(
        name="notes.export", revisions=MODERN, arguments=Query, output=Found,
        operation_handler=operation, **options,
    )  # fmt: skip


def _advanced(**options: Any) -> ToolRegistration:
    return ToolRegistration.advanced(
        name="notes.edit", revisions=MODERN, arguments=Query, handler=operation, **options
    )


def _json_object(**options: Any) -> ToolRegistration:
    return ToolRegistration.json_object(
        name="notes.any", revisions=MODERN, handler=operation, **options
    )


def _authored(**options: Any) -> ToolRegistration:
    return ToolRegistration.authored(
        name="notes.raw", revisions=MODERN, input_schema={"type": "object"}, handler=operation,
        **options,
    )  # fmt: skip


def _prompt(**options: Any) -> PromptRegistration:
    return PromptRegistration.create(
        name="notes.summary", revisions=MODERN, handler=summary, **options
    )


def _exact(**options: Any) -> ResourceRegistration:
    return ResourceRegistration.exact(
        uri="notes://all", name="all", revisions=MODERN, handler=read_exact, **options
    )


def _template(**options: Any) -> ResourceRegistration:
    return ResourceRegistration.template(
        uri_template="notes://{id}", name="note", revisions=MODERN, handler=read_template,
        **options,
    )  # fmt: skip


Factory = Callable[..., ToolRegistration | PromptRegistration | ResourceRegistration]
FACTORIES: list[tuple[Factory, str]] = [
    (_typed, "tool 'notes.find'"),
    (_typed_task, "tool 'notes.export'"),
    (_advanced, "tool 'notes.edit'"),
    (_json_object, "tool 'notes.any'"),
    (_authored, "tool 'notes.raw'"),
    (_prompt, "prompt 'notes.summary'"),
    (_exact, "resource 'notes://all'"),
    (_template, "resource template 'notes://{id}'"),
]


@pytest.mark.parametrize(("factory", "label"), FACTORIES)
def test_every_factory_carries_its_scopes(factory: Factory, label: str) -> None:
    assert factory().scopes == frozenset()  # the default: no scope required
    declared = factory(scopes=["notes:write", "notes:read", "notes:write"])
    assert declared.scopes == frozenset({"notes:read", "notes:write"})


@pytest.mark.parametrize(("factory", "label"), FACTORIES)
def test_every_factory_refuses_bad_scopes_naming_the_operation(
    factory: Factory, label: str
) -> None:
    with refused(f"{label} (revisions 2026-07-28): scopes must be a collection of scopes"):
        factory(scopes="notes:read")
    with refused(f"{label} (revisions 2026-07-28): scopes[0] must be printable ASCII"):
        factory(scopes=['"notes"'])


# --- decorators and the builder ----------------------------------------------------------------


def test_the_decorators_carry_scopes_to_every_kind_of_operation() -> None:
    @endpoint(path="/notes/mcp", name="notes", version="1", revisions=MODERN)
    class Notes:
        @tool(scopes=["notes:write"])
        def delete_note(self, id: str) -> CompleteResult:
            return CompleteResult.from_tool_text(id)

        @tool(scopes=("notes:export",))
        def export(self, id: str) -> TaskCreatedResult[Found]:
            raise NotImplementedError

        @tool
        def count(self) -> Found:
            return Found(0)

        @prompt(scopes={"notes:read"})
        def summarize(self, id: str) -> str:
            return id

        @resource("notes://all", scopes=frozenset({"notes:read", "notes:list"}))
        def everything(self) -> str:
            return ""

        @resource("notes://{id}", scopes=["notes:read"])
        def note(self, id: str) -> str:
            return id

    built: Endpoint = Notes.__mcp_endpoint__  # type: ignore[attr-defined]
    tools = {registration.name: registration.scopes for registration in built.tools}
    assert tools == {
        "count": frozenset(),
        "delete_note": frozenset({"notes:write"}),
        "export": frozenset({"notes:export"}),
    }
    assert built.prompts[0].scopes == frozenset({"notes:read"})
    exact, template = built.resources
    assert exact.template is None and exact.scopes == frozenset({"notes:read", "notes:list"})
    assert template.template is not None and template.scopes == frozenset({"notes:read"})
    assert built.declared_scopes == ("notes:export", "notes:list", "notes:read", "notes:write")


def test_a_decorated_refusal_names_the_class_method_and_operation() -> None:
    with refused("@endpoint class", "method 'delete_note'", "tool 'delete_note'",
                 "scopes must be a collection of scopes, not one str"):  # fmt: skip

        @endpoint(path="/notes/mcp", name="notes", version="1", revisions=MODERN)
        class Refused:
            @tool(scopes=_any("notes:write"))
            def delete_note(self, id: str) -> CompleteResult:
                return CompleteResult.from_tool_text(id)


def test_the_builder_carries_scopes_to_every_kind_of_operation() -> None:
    notes = EndpointBuilder("notes", version="1", revisions=MODERN)

    @notes.tool(scopes=["notes:write"])
    def delete_note(id: str) -> CompleteResult:
        return CompleteResult.from_tool_text(id)

    @notes.prompt(scopes=["notes:read"])
    def summarize(id: str) -> str:
        return id

    @notes.resource("notes://{id}", scopes=["notes:read", "notes:admin"])
    def note(id: str) -> str:
        return id

    built = notes.endpoint
    assert built.tools[0].scopes == frozenset({"notes:write"})
    assert built.prompts[0].scopes == frozenset({"notes:read"})
    assert built.resources[0].scopes == frozenset({"notes:admin", "notes:read"})
    assert built.declared_scopes == ("notes:admin", "notes:read", "notes:write")


# --- the endpoint ------------------------------------------------------------------------------


def _endpoint(**options: Any) -> Endpoint:
    implementation = Implementation("notes", "1")
    return Endpoint("/notes/mcp", implementation, MODERN, **options)


def test_an_endpoint_without_scopes_declares_none() -> None:
    assert _endpoint().declared_scopes == ()
    assert _endpoint(tools=[_typed()], prompts=[_prompt()]).declared_scopes == ()


def test_declared_scopes_are_sorted_without_duplicates() -> None:
    built = _endpoint(
        tools=[_typed(scopes=["b", "Z"]), _advanced(scopes=["a", "b"])],
        prompts=[_prompt(scopes=["~", "b"])],
        resources=[_exact(scopes=["!"]), _template(scopes=["a", "m"])],
    )
    assert built.declared_scopes == ("!", "Z", "a", "b", "m", "~")  # code-point order
    assert isinstance(built.declared_scopes, tuple)


def test_a_new_endpoint_gathers_its_own_scopes() -> None:
    built = _endpoint(tools=[_typed(scopes=["notes:read"])])
    grown = built.with_prompts(_prompt(scopes=["notes:admin"]))
    assert built.declared_scopes == ("notes:read",)
    assert grown.declared_scopes == ("notes:admin", "notes:read")
    assert grown.replace(tools=()).declared_scopes == ("notes:admin",)


def test_declared_scopes_cannot_be_set() -> None:
    built = _endpoint()
    with pytest.raises(AttributeError):
        built.declared_scopes = ("x",)  # type: ignore[misc]


def test_scopes_stay_out_of_the_catalog_entries() -> None:
    """They are the server's to enforce, not part of the protocol's definitions."""
    assert _prompt(scopes=["notes:read"]).definition() == JsonObject({"name": "notes.summary"})
    assert _template(scopes=["notes:read"]).definition() == JsonObject(
        {"uriTemplate": "notes://{id}", "name": "note"}
    )
