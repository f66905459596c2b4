"""Argument completion (CB-16): the ``Completion`` value a completer returns,
its wire body checked against the official schemas, and the completers a prompt or a resource
template declares.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

import pytest

from mcpkit.errors import ConfigurationError, InvalidValueError
from mcpkit.json import encode
from mcpkit.model import (
    Completion,
    CompletionHandler,
    InvocationFeatures,
    PromptArgument,
    PromptOutput,
    PromptRegistration,
    RequestContext,
    ResourceOutput,
    ResourceRegistration,
    Revision,
    TextResourceContents,
)

from ..spec_schemas import SCHEMAS, schema_errors

SECRET = "SECRET-7f3a"
MODERN = frozenset({Revision.V2026_07_28})
SURROGATES = ["\ud800", "\udfff", "a\udc00b", "\ud83d"]
EXACT = ["", "\x00\x1f\x7f", "\U0001f680", "e\u0301", "\u00e9", "  spaced  ", "\ufeff"]


def _any(value: object) -> Any:
    """Pass a deliberately wrong value past the type checker."""
    return value


def refusal(build: Any) -> str:
    with pytest.raises(InvalidValueError) as caught:
        build()
    return str(caught.value)


def wire(value: Any) -> Any:
    return json.loads(encode(value.to_json()))


# --- the value ------------------------------------------------------------------------------------


def test_a_completion_keeps_values_in_order() -> None:
    completion = Completion(("python", "pytorch", "pyside"), 10, True)
    assert completion.values == ("python", "pytorch", "pyside")
    assert (completion.total, completion.has_more) == (10, True)


def test_a_list_of_values_is_stored_as_a_tuple() -> None:
    completion = Completion(_any(["python", "pytorch", "pyside"]))
    assert completion.values == ("python", "pytorch", "pyside")
    assert type(completion.values) is tuple


def test_defaults_are_no_total_and_no_more() -> None:
    completion = Completion(("a",))
    assert (completion.total, completion.has_more) == (None, False)


def test_empty_is_the_shared_empty_completion() -> None:
    assert Completion(()) == Completion.EMPTY
    assert Completion.EMPTY.values == ()
    assert wire(Completion.EMPTY) == {"completion": {"values": [], "hasMore": False}}


def test_at_most_100_values_the_protocol_cap() -> None:
    assert len(Completion(tuple(map(str, range(100)))).values) == 100
    message = refusal(lambda: Completion(tuple(map(str, range(101)))))
    assert message == "Completion.values: at most 100 values (the protocol's cap)"


@pytest.mark.parametrize("text", EXACT)
def test_cb16_well_formed_values_are_kept_exactly(text: str) -> None:
    assert Completion((text,)).values == (text,)


@pytest.mark.parametrize("text", SURROGATES)
def test_cb16_values_with_unpaired_surrogates_are_refused(text: str) -> None:
    message = refusal(lambda: Completion(("ok", SECRET + text)))
    assert message == "Completion.values: text contains an unpaired surrogate"
    assert SECRET not in message


def test_cb16_a_surrogate_pair_is_a_character_not_a_surrogate() -> None:
    assert Completion(("\U0001f680",)).values == ("\U0001f680",)


def test_str_subclasses_are_stored_as_str() -> None:
    class Name(str):
        pass

    (value,) = Completion((Name("x"),)).values
    assert type(value) is str


@pytest.mark.parametrize(
    ("values", "rule"),
    [
        ("abc", "must be a tuple or a list"),
        ({"a"}, "must be a tuple or a list"),
        (("a", 1), "every value must be a str"),
        ((None,), "every value must be a str"),
    ],
)
def test_values_are_a_list_or_tuple_of_str(values: object, rule: str) -> None:
    assert refusal(lambda: Completion(_any(values))) == f"Completion.values: {rule}"


@pytest.mark.parametrize("total", [0, 3, 2**53 - 1])
def test_total_is_an_exact_non_negative_int(total: int) -> None:
    values = ("a", "b", "c") if total else ()
    assert Completion(values, total).total == total


@pytest.mark.parametrize(
    ("total", "rule"),
    [
        (True, "must be an int or None"),
        (1.0, "must be an int or None"),
        ("1", "must be an int or None"),
        (-1, "must be between 0 and 2**53 - 1"),
        (2**53, "must be between 0 and 2**53 - 1"),
    ],
)
def test_bad_totals_are_refused(total: object, rule: str) -> None:
    assert refusal(lambda: Completion((), _any(total))) == f"Completion.total: {rule}"


def test_total_counts_at_least_the_values_sent() -> None:
    assert Completion(("a", "b"), 2).total == 2
    message = refusal(lambda: Completion(("a", "b"), 1))
    assert message == "Completion.total: must be at least the number of values"


@pytest.mark.parametrize("has_more", [1, 0, None, "true"])
def test_has_more_is_a_real_bool(has_more: object) -> None:
    message = refusal(lambda: Completion((), None, _any(has_more)))
    assert message == "Completion.has_more: must be a bool"


def test_a_completion_is_immutable() -> None:
    completion = Completion(("a",))
    with pytest.raises(dataclasses.FrozenInstanceError):
        completion.values = ()  # type: ignore[misc]


def test_repr_shows_counts_never_suggestions() -> None:
    completion = Completion((SECRET, "b"), 7, True)
    assert repr(completion) == "Completion(<2 values>, total=7, has_more=True)"


# --- wire form ------------------------------------------------------------------------------------


def test_wire_form_members() -> None:
    assert wire(Completion(("a",))) == {"completion": {"values": ["a"], "hasMore": False}}
    assert wire(Completion(("a", "b"), 5, True)) == {
        "completion": {"values": ["a", "b"], "total": 5, "hasMore": True}
    }
    assert list(wire(Completion(("a",), 1, True))["completion"]) == ["values", "total", "hasMore"]


SAMPLES = [
    Completion(()),
    Completion(("",)),
    Completion(("python", "pytorch"), 10, True),
    Completion(tuple(f"v{n}" for n in range(100)), 1000, True),
    Completion(("\U0001f680",), 1, False),
]


@pytest.mark.parametrize("revision", ["2025-06-18", "2025-11-25"])
@pytest.mark.parametrize("completion", SAMPLES, ids=repr)
def test_wire_form_matches_the_2025_schemas(revision: str, completion: Completion) -> None:
    assert schema_errors(revision, "CompleteResult", wire(completion)) == []


@pytest.mark.parametrize("completion", SAMPLES, ids=repr)
def test_wire_form_matches_the_2026_schema(completion: Completion) -> None:
    """2026-07-28 adds ``resultType``, which the protocol layer writes on every result."""
    body = {**wire(completion), "resultType": "complete"}
    assert schema_errors("2026-07-28", "CompleteResult", body) == []
    assert schema_errors("2026-07-28", "CompleteResult", wire(completion)) != []


def test_the_schema_itself_caps_values_at_100() -> None:
    """The cap Completion enforces is the one the 2026-07-28 schema states."""
    body = {"completion": {"values": ["x"] * 101}, "resultType": "complete"}
    assert schema_errors("2026-07-28", "CompleteResult", body) != []


def _examples(definition: str) -> list[Any]:
    directory = SCHEMAS / "examples-2026-07-28" / definition
    if not directory.is_dir():
        pytest.fail(f"official examples not found at {directory}")
    paths = sorted(directory.glob("*.json"))
    return [json.loads(path.read_text(encoding="utf-8")) for path in paths]


def test_official_examples_are_reproduced_exactly() -> None:
    examples = _examples("CompleteResult")
    assert examples
    for example in examples:
        completion = example["completion"]
        built = Completion(completion["values"], completion.get("total"), completion["hasMore"])
        assert {**wire(built), "resultType": "complete"} == example


# --- declared completers --------------------------------------------------------------------------


def complete_language(ctx: RequestContext, value: str, arguments: Mapping[str, str]) -> Completion:
    return Completion(tuple(name for name in ("python", "pytorch") if name.startswith(value)))


async def complete_async(
    ctx: RequestContext, value: str, arguments: Mapping[str, str]
) -> Completion:
    return Completion.EMPTY


def get_prompt(
    ctx: RequestContext, arguments: Mapping[str, str], features: InvocationFeatures
) -> PromptOutput:
    return PromptOutput(messages=())


def read_template(
    ctx: RequestContext, variables: Mapping[str, str], features: InvocationFeatures
) -> ResourceOutput:
    return ResourceOutput(contents=(TextResourceContents(uri="file:///x", text=""),))


def _prompt(completions: object) -> PromptRegistration:
    return PromptRegistration.create(
        name="code_review",
        revisions=MODERN,
        handler=get_prompt,
        arguments=(PromptArgument("language"), PromptArgument("framework")),
        completions=_any(completions),
    )


def _template(completions: object) -> ResourceRegistration:
    return ResourceRegistration.template(
        uri_template="repo://{owner}/{name}",
        name="repository",
        revisions=MODERN,
        handler=read_template,
        completions=_any(completions),
    )


def test_a_completion_handler_has_the_documented_type() -> None:
    handler: CompletionHandler = complete_language
    assert handler(_any(None), "py", {}) == Completion(("python", "pytorch"))


def test_prompt_completers_are_kept_read_only_with_their_async_flags() -> None:
    prompt = _prompt({"language": complete_language, "framework": complete_async})
    assert dict(prompt.completions) == {
        "language": complete_language,
        "framework": complete_async,
    }
    assert prompt.async_completions == frozenset({"framework"})
    with pytest.raises(TypeError):
        prompt.completions["x"] = complete_language  # type: ignore[index]


def test_template_completers_name_template_variables() -> None:
    template = _template({"owner": complete_language})
    assert dict(template.completions) == {"owner": complete_language}
    assert template.async_completions == frozenset()


def test_no_completers_by_default() -> None:
    prompt = PromptRegistration.create(name="p", revisions=MODERN, handler=get_prompt)
    assert dict(prompt.completions) == {} and prompt.async_completions == frozenset()


def test_a_completer_must_name_a_declared_argument() -> None:
    with pytest.raises(ConfigurationError) as caught:
        _prompt({"languages": complete_language})
    assert str(caught.value) == (
        "prompt 'code_review' (revisions 2026-07-28): completions key 'languages' does not "
        "name a declared argument"
    )


def test_a_completer_must_name_a_template_variable() -> None:
    with pytest.raises(ConfigurationError, match="'repo' does not name a declared template"):
        _template({"repo": complete_language})


def test_completion_keys_are_str() -> None:
    with pytest.raises(ConfigurationError, match="completions key int does not name"):
        _prompt({1: complete_language})


@pytest.mark.parametrize("completions", [None, [("language", complete_language)], "language"])
def test_completions_are_a_mapping(completions: object) -> None:
    with pytest.raises(ConfigurationError, match="completions must be a mapping of argument"):
        _prompt(completions)


@pytest.mark.parametrize(
    ("handler", "problem"),
    [
        (None, "the completion handler for 'owner' must be callable"),
        (
            lambda ctx, value: None,
            "the completion handler for 'owner' must accept three positional arguments "
            "(ctx, value, arguments)",
        ),
    ],
)
def test_completers_are_checked_like_handlers(handler: object, problem: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        _template({"owner": handler})
    assert str(caught.value) == (
        f"resource template 'repo://{{owner}}/{{name}}' (revisions 2026-07-28): {problem}"
    )
