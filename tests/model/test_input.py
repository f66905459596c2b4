"""Multi-round declarations: the kinds of input request, their capabilities and requirements,
declarations on every registration that may answer ``input_required``, and the request-state
modes (AN-03, TR-16, RV-06)."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from mcpkit.errors import ConfigurationError, InvalidValueError
from mcpkit.json import JsonObject
from mcpkit.model import (
    Endpoint,
    Implementation,
    InputRequestDeclaration,
    InputRequestKind,
    PromptRegistration,
    RequestStateMode,
    Requirement,
    ResourceRegistration,
    Revision,
    ToolRegistration,
    missing_capabilities,
)

from ..spec_schemas import SCHEMAS, schema_errors

FORM = InputRequestKind.ELICITATION_FORM
URL = InputRequestKind.ELICITATION_URL
SAMPLING = InputRequestKind.SAMPLING
ROOTS = InputRequestKind.ROOTS
MODERN = frozenset({Revision.V2026_07_28})


# --- InputRequestKind ----------------------------------------------------------------------------


def test_an_03_the_four_kinds_and_their_methods() -> None:
    """Soklet's types: form and URL elicitation share ``elicitation/create``."""
    assert [kind.name for kind in InputRequestKind] == [
        "ELICITATION_FORM", "ELICITATION_URL", "SAMPLING", "ROOTS",
    ]  # fmt: skip
    assert [kind.method for kind in InputRequestKind] == [
        "elicitation/create", "elicitation/create", "sampling/createMessage", "roots/list",
    ]  # fmt: skip


def test_an_03_each_kind_names_its_client_capability() -> None:
    """``capability`` is what ``-32021`` lists in ``data.requiredCapabilities``; each one is a
    valid 2026-07-28 ``ClientCapabilities`` object."""
    assert FORM.capability == {"elicitation": {"form": {}}}
    assert URL.capability == {"elicitation": {"url": {}}}
    assert SAMPLING.capability == {"sampling": {}}
    assert ROOTS.capability == {"roots": {}}
    for kind in InputRequestKind:
        assert type(kind.capability) is JsonObject
        assert schema_errors("2026-07-28", "ClientCapabilities", kind.capability) == []
        assert kind.declared_by(kind.capability)


@pytest.mark.parametrize(
    ("capabilities", "declared"),
    [
        ({}, set()),
        ({"elicitation": {}}, {FORM}),  # {} means form only
        ({"elicitation": {"form": {}}}, {FORM}),
        ({"elicitation": {"url": {}}}, {URL}),
        ({"elicitation": {"form": {}, "url": {}}}, {FORM, URL}),
        ({"elicitation": {"vendor": {}}}, {FORM}),
        ({"elicitation": {"form": True}}, set()),
        ({"elicitation": {"form": {}, "url": None}}, {FORM}),
        ({"elicitation": {"url": True}}, set()),
        ({"elicitation": True}, set()),
        ({"elicitation": []}, set()),
        ({"sampling": {}}, {SAMPLING}),
        ({"sampling": {"tools": {}, "context": {}}}, {SAMPLING}),
        ({"sampling": None}, set()),
        ({"roots": {}}, {ROOTS}),
        ({"roots": {"listChanged": True}}, {ROOTS}),
        ({"roots": "yes"}, set()),
        ({"experimental": {"sampling": {}}, "extensions": {"roots": {}}}, set()),
        ({"elicitation": {}, "sampling": {}, "roots": {}}, {FORM, SAMPLING, ROOTS}),
    ],
)
def test_an_03_declared_by_reads_the_clients_capabilities(
    capabilities: dict[str, Any], declared: set[InputRequestKind]
) -> None:
    """A capability counts only as a JSON object; form elicitation is an ``elicitation`` object
    with a ``form`` object, or with neither ``form`` nor ``url``."""
    for source in (capabilities, JsonObject(capabilities)):
        assert {kind for kind in InputRequestKind if kind.declared_by(source)} == declared


def _example(name: str) -> Any:
    return json.loads((SCHEMAS / "examples-2026-07-28" / "ClientCapabilities" / name).read_text())


def test_an_03_declared_by_the_official_capability_examples() -> None:
    form_only = _example("elicitation-form-only-implicit.json")
    both = _example("elicitation-form-and-url-mode-support.json")
    tools = _example("sampling-tool-use-support.json")
    roots = _example("roots-minimum-baseline-support.json")
    assert FORM.declared_by(form_only) and not URL.declared_by(form_only)
    assert FORM.declared_by(both) and URL.declared_by(both)
    assert SAMPLING.declared_by(tools) and ROOTS.declared_by(roots)


@pytest.mark.parametrize(
    ("embedded", "kind"),
    [
        ({"method": "elicitation/create", "params": {"mode": "form", "message": "m"}}, FORM),
        ({"method": "elicitation/create", "params": {"message": "m"}}, FORM),
        ({"method": "elicitation/create", "params": {"mode": "URL"}}, FORM),
        ({"method": "elicitation/create"}, FORM),
        ({"method": "elicitation/create", "params": {"mode": "url", "url": "https://x"}}, URL),
        (JsonObject({"method": "elicitation/create", "params": {"mode": "url"}}), URL),
        ({"method": "sampling/createMessage", "params": {}}, SAMPLING),
        ({"method": "roots/list"}, ROOTS),
    ],
)
def test_an_03_of_classifies_one_embedded_request(
    embedded: Mapping[str, object], kind: InputRequestKind
) -> None:
    assert InputRequestKind.of(embedded) is kind


@pytest.mark.parametrize(
    "embedded", [{}, {"method": "tools/call"}, {"method": 1}, None, ["roots/list"]]
)
def test_an_03_of_refuses_other_methods(embedded: object) -> None:
    with pytest.raises(InvalidValueError) as caught:
        InputRequestKind.of(embedded)
    assert caught.value.rule == (
        "InputRequestKind.of: the method must be elicitation/create, sampling/createMessage or "
        "roots/list"
    )


# --- missing_capabilities ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kinds", "capabilities", "missing"),
    [
        ([], {}, None),
        ([FORM, SAMPLING, ROOTS], {"elicitation": {}, "sampling": {}, "roots": {}}, None),
        ([FORM], {}, {"elicitation": {"form": {}}}),
        ([URL, SAMPLING], {"elicitation": {}}, {"elicitation": {"url": {}}, "sampling": {}}),
        ([FORM, URL], {"elicitation": {"url": {}}}, {"elicitation": {"form": {}}}),
        (
            (kind for kind in (ROOTS, URL, SAMPLING, FORM, ROOTS)),
            {},
            {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}},
        ),
        ({ROOTS, SAMPLING}, {"roots": {}}, {"sampling": {}}),
    ],
)
def test_an_03_missing_capabilities_are_reported_together(
    kinds: Any, capabilities: dict[str, Any], missing: dict[str, Any] | None
) -> None:
    """One merged ``requiredCapabilities`` object for every kind the client did not declare,
    in a fixed order (all missing capabilities are reported together)."""
    found = missing_capabilities(kinds, capabilities)
    if missing is None:
        assert found is None
        return
    assert found is not None and type(found) is JsonObject
    assert json.dumps(found) == json.dumps(missing)  # member order too
    assert schema_errors("2026-07-28", "ClientCapabilities", found) == []


# --- Requirement and InputRequestDeclaration -----------------------------------------------------


def test_an_03_requirement_and_declaration_factories() -> None:
    """``@McpMayRequestInput(type, requirement)``: conditional unless said otherwise."""
    assert [requirement.name for requirement in Requirement] == ["REQUIRED", "CONDITIONAL"]
    factories: list[tuple[Callable[..., InputRequestDeclaration], InputRequestKind]] = [
        (InputRequestDeclaration.elicitation_form, FORM),
        (InputRequestDeclaration.elicitation_url, URL),
        (InputRequestDeclaration.sampling, SAMPLING),
        (InputRequestDeclaration.roots, ROOTS),
    ]
    for factory, kind in factories:
        assert factory() == InputRequestDeclaration(kind, Requirement.CONDITIONAL)
        assert factory(Requirement.REQUIRED) == InputRequestDeclaration(kind, Requirement.REQUIRED)
    declaration = InputRequestDeclaration(ROOTS)
    assert declaration.requirement is Requirement.CONDITIONAL
    with pytest.raises(dataclasses.FrozenInstanceError):
        declaration.kind = SAMPLING  # type: ignore[misc]
    assert len({InputRequestDeclaration.roots(), InputRequestDeclaration(ROOTS)}) == 1


@pytest.mark.parametrize(
    ("values", "rule"),
    [
        (("roots",), "InputRequestDeclaration.kind: must be an InputRequestKind"),
        ((ROOTS, "required"), "InputRequestDeclaration.requirement: must be a Requirement"),
        ((ROOTS, None), "InputRequestDeclaration.requirement: must be a Requirement"),
    ],
)
def test_an_03_declarations_are_checked(values: tuple[Any, ...], rule: str) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(rule)):
        InputRequestDeclaration(*values)


# --- declarations on every multi-round registration (AN-03, RV-06) -------------------------------


def _handler(*_: object) -> Any:
    return None


def _prompt(**options: Any) -> PromptRegistration:
    return PromptRegistration.create(
        name="p", handler=_handler, **({"revisions": MODERN} | options)
    )


def _exact(**options: Any) -> ResourceRegistration:
    return ResourceRegistration.exact(
        uri="mem://x", name="x", handler=_handler, **({"revisions": MODERN} | options)
    )


def _template(**options: Any) -> ResourceRegistration:
    return ResourceRegistration.template(
        uri_template="mem://{x}", name="x", handler=_handler, **({"revisions": MODERN} | options)
    )


def _tool(**options: Any) -> ToolRegistration:
    return ToolRegistration.json_object(
        name="t", handler=_handler, **({"revisions": MODERN} | options)
    )


REGISTRATIONS = [
    pytest.param(_prompt, "prompt 'p'", id="prompt"),
    pytest.param(_exact, "resource 'mem://x'", id="exact"),
    pytest.param(_template, "resource template 'mem://{x}'", id="template"),
    pytest.param(_tool, "tool 't'", id="tool"),
]


@pytest.mark.parametrize(("factory", "label"), REGISTRATIONS)
def test_an_03_registrations_declare_input_requests(factory: Any, label: str) -> None:
    """Tools, ``prompts/get`` and ``resources/read`` may all answer ``input_required`` (the
    three MRTR methods), so all three declare what they may ask for."""
    url = InputRequestDeclaration.elicitation_url(Requirement.REQUIRED)
    sampling = InputRequestDeclaration.sampling()
    registration = factory(
        input_requests=(url, sampling), request_state_mode=RequestStateMode.APPLICATION_PROTECTED
    )
    assert registration.input_requests == (url, sampling)
    assert registration.request_state_mode is RequestStateMode.APPLICATION_PROTECTED
    assert registration.declared_kinds == frozenset({URL, SAMPLING})
    assert registration.required_kinds == frozenset({URL})
    plain = factory()
    assert plain.input_requests == () and plain.request_state_mode is RequestStateMode.NONE
    assert plain.declared_kinds == plain.required_kinds == frozenset()
    assert factory(request_state_mode=None).request_state_mode is RequestStateMode.NONE
    with pytest.raises(AttributeError):
        registration.input_requests = ()


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"input_requests": None}, "input_requests must be a list or tuple"),
        ({"input_requests": InputRequestDeclaration.roots()}, "must be a list or tuple"),
        (
            {"input_requests": [FORM]},
            "every input_requests item must be an InputRequestDeclaration",
        ),
        (
            {"input_requests": [InputRequestDeclaration.roots()] * 2},
            "declares the input request kind ROOTS twice",
        ),
        ({"request_state_mode": "none"}, "request_state_mode must be a RequestStateMode or None"),
    ],
)
@pytest.mark.parametrize(("factory", "label"), REGISTRATIONS)
def test_an_03_invalid_declarations_are_refused(
    factory: Any, label: str, options: dict[str, Any], problem: str
) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(problem)) as caught:
        factory(**options)
    assert str(caught.value).startswith(f"{label} (revisions 2026-07-28): ")


@pytest.mark.parametrize(
    "options",
    [
        {"input_requests": [InputRequestDeclaration.elicitation_form()]},
        {"request_state_mode": RequestStateMode.APPLICATION_PROTECTED},
        {"request_state_mode": RequestStateMode.FRAMEWORK_PROTECTED},
    ],
)
@pytest.mark.parametrize("legacy", [Revision.V2025_06_18, Revision.V2025_11_25])
@pytest.mark.parametrize(("factory", "label"), REGISTRATIONS)
def test_rv_06_multi_round_operations_need_a_session_on_2025(
    factory: Any, label: str, legacy: Revision, options: dict[str, Any]
) -> None:
    """RV-06: an operation that declares input requests or request state may select a 2025
    revision (the framework asks a 2025 client within its session), but its endpoint must keep
    sessions on that revision: a stateless 2025 request has nobody to ask."""
    both = {legacy, Revision.V2026_07_28}
    registration = factory(revisions=both, **options)
    assert registration.revisions == both
    kind = (
        "prompts"
        if label.startswith("prompt")
        else "tools"
        if label.startswith("tool")
        else ("resources")
    )
    served: dict[str, Any] = {
        "path": "/mcp",
        "implementation": Implementation("x", "1"),
        "revisions": both,
        kind: [registration],
    }
    with pytest.raises(ConfigurationError) as caught:
        Endpoint(**served)
    assert str(caught.value) == (
        f"endpoint '/mcp' (revisions {legacy.wire}, 2026-07-28): {label} (revisions "
        f"{legacy.wire}, 2026-07-28) declares input requests or request state, which a 2025 "
        f"client is asked for within a session; add {legacy.wire} to the endpoint's "
        "session_revisions, or select only Revision.V2026_07_28"
    )
    kept = Endpoint(**served, session_revisions={legacy})
    assert kept.session_revisions == {legacy}


@pytest.mark.parametrize(("factory", "label"), REGISTRATIONS)
def test_rv_06_no_declarations_are_fine_on_2025(factory: Any, label: str) -> None:
    every = frozenset(Revision)
    registration = factory(revisions=every, input_requests=[], request_state_mode=None)
    assert registration.revisions == every
