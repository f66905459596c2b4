"""Prompt registrations (RV-03, CB-16, AN-18): declared string
arguments, the handler's shape, the registration rules, and the wire ``Prompt`` checked against
the official schemas.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

import pytest

from mcpkit.errors import ConfigurationError
from mcpkit.json import JsonObject, encode
from mcpkit.model import (
    CompleteResult,
    Icon,
    InvocationFeatures,
    PromptArgument,
    PromptMessage,
    PromptOutput,
    PromptRegistration,
    RequestContext,
    Revision,
    Role,
    TextContent,
)
from mcpkit.model._prompts import MAX_PROMPT_NAME_CHARS, PromptHandler

from ..spec_schemas import SCHEMAS, schema_errors

SECRET = "SECRET-7f3a"
MODERN = frozenset({Revision.V2026_07_28})
SURROGATES = ["\ud800", "\udfff", "a\udc00b"]
ICON = Icon(src="https://example.com/review-icon.svg", mime_type="image/svg+xml", sizes=("any",))


def _any(value: object) -> Any:
    """Pass a deliberately wrong value past the type checker."""
    return value


def summary(
    ctx: RequestContext, arguments: Mapping[str, str], features: InvocationFeatures
) -> PromptOutput:
    text = TextContent(text=f"Summarise {arguments['sku']}")
    return PromptOutput(messages=(PromptMessage(role=Role.USER, content=text),))


async def summary_async(
    ctx: RequestContext, arguments: Mapping[str, str], features: InvocationFeatures
) -> CompleteResult:
    return CompleteResult.with_prompt_output(PromptOutput(messages=()))


def _prompt(**overrides: Any) -> PromptRegistration:
    options: dict[str, Any] = {"name": "inventory.summary", "revisions": MODERN, "handler": summary}
    return PromptRegistration.create(**(options | overrides))


def refusal(**overrides: Any) -> str:
    with pytest.raises(ConfigurationError) as caught:
        _prompt(**overrides)
    return str(caught.value)


def wire(value: Any) -> Any:
    return json.loads(encode(value if isinstance(value, JsonObject) else value.to_json()))


# --- PromptArgument -------------------------------------------------------------------------------


def test_a_prompt_argument_is_optional_by_default() -> None:
    argument = PromptArgument("sku")
    assert (argument.name, argument.title, argument.description) == ("sku", None, None)
    assert argument.required is False


def test_a_prompt_argument_keeps_its_text_exactly() -> None:
    argument = PromptArgument("sku", title="\U0001f4e6 SKU", description="", required=True)
    assert (argument.title, argument.description, argument.required) == ("\U0001f4e6 SKU", "", True)


def test_prompt_argument_options_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        PromptArgument("sku", "SKU")  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: PromptArgument(""), "PromptArgument.name: must be 1 to 128 characters"),
        (lambda: PromptArgument("x" * 129), "PromptArgument.name: must be 1 to 128 characters"),
        (lambda: PromptArgument("a b"), "PromptArgument.name: must not contain whitespace"),
        (lambda: PromptArgument("a\x00"), "PromptArgument.name: must not contain whitespace"),
        (lambda: PromptArgument("\u2028"), "PromptArgument.name: must not contain whitespace"),
        (lambda: PromptArgument(_any(1)), "PromptArgument.name: a JSON string must be a str"),
        (lambda: PromptArgument("a", required=_any(1)), "PromptArgument.required: must be a bool"),
    ],
)
def test_bad_prompt_arguments_are_configuration_errors(build: Any, message: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        build()
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize("field", ["name", "title", "description"])
@pytest.mark.parametrize("text", SURROGATES)
def test_cb16_prompt_argument_text_refuses_unpaired_surrogates(field: str, text: str) -> None:
    options: dict[str, Any] = {"name": "sku", field: SECRET + text}
    with pytest.raises(ConfigurationError) as caught:
        PromptArgument(**options)
    assert str(caught.value) == f"PromptArgument.{field}: text contains an unpaired surrogate"


def test_prompt_argument_names_may_be_any_visible_text_up_to_128_characters() -> None:
    assert PromptArgument("caf\u00e9.\U0001f680-_/").name == "caf\u00e9.\U0001f680-_/"
    assert PromptArgument("x" * MAX_PROMPT_NAME_CHARS).name == "x" * 128


def test_prompt_argument_wire_form_always_states_required() -> None:
    assert wire(PromptArgument("sku")) == {"name": "sku", "required": False}
    full = PromptArgument("sku", title="SKU", description="The item", required=True)
    assert wire(full) == {
        "name": "sku",
        "title": "SKU",
        "description": "The item",
        "required": True,
    }


# --- the registration -----------------------------------------------------------------------------


def test_a_prompt_registration_holds_what_it_was_given() -> None:
    arguments = (PromptArgument("sku", required=True), PromptArgument("tone"))
    prompt = _prompt(
        arguments=list(arguments), title="Summary", description="Sums up", icons=[ICON]
    )
    assert prompt.name == "inventory.summary"
    assert prompt.revisions == MODERN
    assert prompt.handler is summary and prompt.is_async is False
    assert prompt.arguments == arguments
    assert prompt.argument_names == frozenset({"sku", "tone"})
    assert prompt.required_arguments == frozenset({"sku"})
    assert (prompt.title, prompt.description, prompt.icons) == ("Summary", "Sums up", (ICON,))


def test_defaults_are_no_arguments_and_no_display_options() -> None:
    prompt = _prompt()
    assert prompt.arguments == () and prompt.argument_names == frozenset()
    assert prompt.required_arguments == frozenset()
    assert (prompt.title, prompt.description, prompt.icons) == (None, None, ())


def test_the_handler_type_alias_fits_def_and_async_def_handlers() -> None:
    handlers: list[PromptHandler] = [summary, summary_async]
    assert [_prompt(handler=handler).is_async for handler in handlers] == [False, True]


def test_a_callable_object_with_an_async_call_is_awaited() -> None:
    class Handler:
        async def __call__(self, ctx: object, arguments: object, features: object) -> None:
            pass

    assert _prompt(handler=Handler()).is_async is True


def test_a_builtin_without_a_signature_is_accepted() -> None:
    handler: object = _prompt(handler=_any(max)).handler
    assert handler is max


# --- RV-03: revisions -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "revisions",
    [
        {Revision.V2026_07_28},
        [Revision.V2026_07_28, Revision.V2026_07_28],
        (Revision.V2026_07_28,),
        MODERN,
    ],
)
def test_rv03_revisions_are_stored_as_a_frozenset(revisions: Any) -> None:
    assert _prompt(revisions=revisions).revisions == MODERN


def test_rv03_every_revision_may_be_selected() -> None:
    assert _prompt(revisions=set(Revision)).revisions == frozenset(Revision)


@pytest.mark.parametrize(
    ("revisions", "problem"),
    [
        (set(), "revisions must not be empty"),
        ((), "revisions must not be empty"),
        ({"2026-07-28"}, "every revision must be a Revision member"),
        (Revision.V2026_07_28, "revisions must be a set of Revision members"),
        ("2026-07-28", "revisions must be a set of Revision members"),
        (None, "revisions must be a set of Revision members"),
    ],
)
def test_rv03_revisions_are_a_non_empty_set_of_revision(revisions: object, problem: str) -> None:
    assert refusal(revisions=revisions).startswith(f"prompt 'inventory.summary': {problem}")


# --- names ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["a", "x" * 128, "Caf\u00e9 \u2014"[:4], "a/b:c.d-e_f", "\U0001f680"]
)
def test_prompt_names_are_1_to_128_visible_characters(name: str) -> None:
    assert _prompt(name=name).name == name


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "must be 1 to 128 characters"),
        ("x" * 129, "must be 1 to 128 characters"),
        ("a b", "must not contain whitespace or control characters"),
        ("a\tb", "must not contain whitespace or control characters"),
        ("a\x7f", "must not contain whitespace or control characters"),
        ("a\x85", "must not contain whitespace or control characters"),
        ("\u3000", "must not contain whitespace or control characters"),
        ("a\ud800", "text contains an unpaired surrogate"),
    ],
)
def test_bad_prompt_names_are_refused(name: str, problem: str) -> None:
    assert refusal(name=name).endswith(problem)


def test_a_long_refused_name_is_shown_bounded() -> None:
    message = refusal(name="y" * 500)
    assert message == f"prompt name {'y' * 40!r}... (500 characters): must be 1 to 128 characters"


def test_a_prompt_name_must_be_a_str() -> None:
    assert refusal(name=1) == "a prompt name must be a str"


def test_str_subclass_names_are_stored_as_str() -> None:
    class Name(str):
        pass

    assert type(_prompt(name=Name("p")).name) is str


# --- handler --------------------------------------------------------------------------------------


def _generator(ctx: object, arguments: object, features: object) -> Iterator[PromptOutput]:
    yield PromptOutput(messages=())


async def _async_generator(
    ctx: object, arguments: object, features: object
) -> AsyncIterator[PromptOutput]:
    yield PromptOutput(messages=())


@pytest.mark.parametrize(
    ("handler", "problem"),
    [
        (None, "the handler must be callable"),
        ("summary", "the handler must be callable"),
        (_generator, "the handler is a generator function; it must return its result"),
        (_async_generator, "the handler is a generator function; it must return its result"),
        (
            lambda ctx, arguments: None,
            "the handler must accept three positional arguments (ctx, arguments, features)",
        ),
        (
            lambda ctx, arguments, *, features: None,
            "the handler must accept three positional arguments (ctx, arguments, features)",
        ),
    ],
)
def test_the_handler_is_checked_at_registration(handler: object, problem: str) -> None:
    assert (
        refusal(handler=handler) == f"prompt 'inventory.summary' (revisions 2026-07-28): {problem}"
    )


# --- options --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"arguments": PromptArgument("sku")}, "arguments: must be a tuple or a list"),
        ({"arguments": ["sku"]}, "arguments: every argument must be a PromptArgument"),
        ({"title": 1}, "title: a JSON string must be a str"),
        ({"description": b"d"}, "description: a JSON string must be a str"),
        ({"icons": ICON}, "icons: must be a tuple or a list"),
        ({"icons": ["https://example.com/i.png"]}, "icons: every icon must be an Icon"),
    ],
)
def test_options_have_their_types(options: dict[str, Any], problem: str) -> None:
    assert refusal(**options) == f"prompt 'inventory.summary' (revisions 2026-07-28): {problem}"


@pytest.mark.parametrize("option", ["title", "description"])
@pytest.mark.parametrize("text", SURROGATES)
def test_cb16_prompt_text_refuses_unpaired_surrogates(option: str, text: str) -> None:
    message = refusal(**{option: SECRET + text})
    assert message.endswith(f"{option}: text contains an unpaired surrogate")
    assert SECRET not in message


@pytest.mark.parametrize("text", ["", "\x00", "\U0001f680", "e\u0301", " spaced "])
def test_prompt_text_is_kept_exactly(text: str) -> None:
    prompt = _prompt(title=text, description=text)
    assert (prompt.title, prompt.description) == (text, text)


def test_argument_names_are_unique_within_a_prompt() -> None:
    arguments = [
        PromptArgument("sku"),
        PromptArgument("tone"),
        PromptArgument("sku", required=True),
    ]
    assert refusal(arguments=arguments) == (
        "prompt 'inventory.summary' (revisions 2026-07-28): declares the argument 'sku' twice"
    )


# --- immutability, identity and repr --------------------------------------------------------------


def test_a_prompt_registration_is_built_only_by_create() -> None:
    with pytest.raises(
        TypeError, match=r"^PromptRegistration is built by PromptRegistration.create"
    ):
        PromptRegistration()


def test_a_prompt_registration_is_immutable() -> None:
    prompt = _prompt()
    with pytest.raises(AttributeError, match="PromptRegistration is immutable"):
        prompt.name = "other"
    with pytest.raises(AttributeError, match="PromptRegistration is immutable"):
        del prompt.title
    with pytest.raises(AttributeError):
        prompt.extra = 1


def test_equality_is_identity() -> None:
    a, b = _prompt(), _prompt()
    assert a == a and a != b
    assert len({a, b}) == 2


def test_repr_names_the_prompt_and_its_revisions() -> None:
    prompt = _prompt(revisions={Revision.V2026_07_28, Revision.V2025_06_18})
    assert repr(prompt) == "<PromptRegistration inventory.summary [2025-06-18, 2026-07-28]>"


# --- wire form against the official schemas -------------------------------------------------------


def _samples() -> list[PromptRegistration]:
    return [
        _prompt(),
        _prompt(name="\U0001f680", title="", description=""),
        _prompt(
            title="Summary",
            description="Sums up an item",
            arguments=[
                PromptArgument("sku", title="SKU", description="The item", required=True),
                PromptArgument("tone"),
            ],
            icons=[ICON, Icon(src="data:image/png;base64,AA==", theme="dark")],
        ),
    ]


def test_definition_members() -> None:
    minimal, _, full = _samples()
    assert wire(minimal.definition()) == {"name": "inventory.summary"}
    assert list(wire(full.definition())) == ["name", "title", "description", "arguments", "icons"]
    assert wire(full.definition())["arguments"][1] == {"name": "tone", "required": False}


def test_definition_is_built_once() -> None:
    prompt = _prompt()
    assert prompt.definition() is prompt.definition()


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_definition_matches_the_official_schema(revision: str) -> None:
    """The full wire ``Prompt`` is valid for the two revisions that have icons."""
    for prompt in _samples():
        assert schema_errors(revision, "Prompt", wire(prompt.definition())) == []
        for argument in prompt.arguments:
            assert schema_errors(revision, "PromptArgument", wire(argument)) == []


def test_definition_without_icons_matches_the_june_schema() -> None:
    """2025-06-18 has no icons: without them every sample is a valid June ``Prompt``, with them
    it is not, which is why the protocol layer must project it."""
    for prompt in _samples():
        definition = wire(prompt.definition())
        icons = definition.pop("icons", None)
        assert schema_errors("2025-06-18", "Prompt", definition) == []
        if icons:
            assert schema_errors("2025-06-18", "Prompt", {**definition, "icons": icons}) != []


def _example(definition: str) -> Any:
    directory = SCHEMAS / "examples-2026-07-28" / definition
    if not directory.is_dir():
        pytest.fail(f"official examples not found at {directory}")
    (path,) = sorted(directory.glob("*.json"))
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_official_example_prompt_is_reproduced_exactly() -> None:
    (example,) = _example("ListPromptsResult")["prompts"]
    (argument,) = example["arguments"]
    (icon,) = example["icons"]
    prompt = _prompt(
        name=example["name"],
        title=example["title"],
        description=example["description"],
        arguments=[
            PromptArgument(argument["name"], description=argument["description"], required=True)
        ],
        icons=[Icon(src=icon["src"], mime_type=icon["mimeType"], sizes=tuple(icon["sizes"]))],
    )
    assert wire(prompt.definition()) == example
