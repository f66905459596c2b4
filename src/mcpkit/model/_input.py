"""Multi-round input: what an operation declares it may ask the client for, and who protects its
request state.

On 2026-07-28 a ``tools/call``, ``prompts/get`` or ``resources/read`` handler may answer with an
``InputRequiredResult``: requests the client fulfils (an elicitation, a sampling call, a roots
listing) and/or state it echoes on its retry.  An operation declares every kind of request it
may emit, each ``REQUIRED`` (the server checks the client's capability on every call, before
the handler runs) or ``CONDITIONAL`` (checked when the handler emits it), and a
``RequestStateMode``.  The same handler serves a 2025 session: there the server sends the
requests to the client itself, as JSON-RPC requests within the session, and calls the handler
again with the answers, so an operation that declares either selects 2025 revisions only where
its endpoint keeps sessions.

The values here are immutable; the capability rules are pure functions the server calls.  What
the client sends back (``inputResponses``) is checked and read in ``_input_responses``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Protocol

from mcpkit.errors import ConfigurationError, InvalidValueError
from mcpkit.json import JsonObject

__all__ = [
    "InputRequestDeclaration",
    "InputRequestKind",
    "RequestStateMode",
    "Requirement",
    "asks_for_input",
    "missing_capabilities",
]

_ELICITATION: Final = "elicitation/create"


class InputRequestKind(enum.Enum):
    """One kind of request an input-required result may embed (Soklet's
    ``McpInputRequestType``), with the client capability it needs.

    ``ELICITATION_FORM`` and ``ELICITATION_URL`` share the method ``elicitation/create``; the
    request's ``params.mode`` tells them apart (``"url"`` is URL mode, anything else form).
    """

    ELICITATION_FORM = "elicitation_form"
    ELICITATION_URL = "elicitation_url"
    SAMPLING = "sampling"
    ROOTS = "roots"

    @property
    def method(self) -> str:
        """The embedded request's ``method``."""
        return _METHODS[self]

    @property
    def capability(self) -> JsonObject:
        """The ``ClientCapabilities`` object that declares this kind, as ``-32021`` names it
        in ``data.requiredCapabilities``: ``{"elicitation": {"form": {}}}``, ``{"elicitation":
        {"url": {}}}``, ``{"sampling": {}}`` or ``{"roots": {}}``."""
        return _CAPABILITIES[self]

    def declared_by(self, client_capabilities: Mapping[str, object]) -> bool:
        """Whether ``client_capabilities`` (a request's validated ``clientCapabilities``)
        declares this kind.

        A capability counts only when its value is a JSON object.  Form elicitation is declared
        by an ``elicitation`` object with a ``form`` object, or with neither ``form`` nor
        ``url`` (``elicitation: {}`` means form only); URL elicitation needs
        ``elicitation.url``.
        """
        if self is InputRequestKind.SAMPLING or self is InputRequestKind.ROOTS:
            return isinstance(client_capabilities.get(self.value), Mapping)
        elicitation = client_capabilities.get("elicitation")
        if not isinstance(elicitation, Mapping):
            return False
        if self is InputRequestKind.ELICITATION_URL:
            return isinstance(elicitation.get("url"), Mapping)
        if "form" in elicitation:
            return isinstance(elicitation["form"], Mapping)
        return "url" not in elicitation

    @classmethod
    def of(cls, request: object) -> InputRequestKind:
        """The kind of one embedded ``{method, params}`` request (an ``InputRequiredResult``
        has already checked its shape); ``InvalidValueError`` for anything but a mapping with
        one of the three methods."""
        if not isinstance(request, Mapping):
            request = {}
        method = request.get("method")
        if method == _ELICITATION:
            params = request.get("params")
            if isinstance(params, Mapping) and params.get("mode") == "url":
                return cls.ELICITATION_URL
            return cls.ELICITATION_FORM
        if method == "sampling/createMessage":
            return cls.SAMPLING
        if method == "roots/list":
            return cls.ROOTS
        raise InvalidValueError(
            "InputRequestKind.of: the method must be elicitation/create, sampling/createMessage "
            "or roots/list"
        )


_METHODS: Final = {
    InputRequestKind.ELICITATION_FORM: _ELICITATION,
    InputRequestKind.ELICITATION_URL: _ELICITATION,
    InputRequestKind.SAMPLING: "sampling/createMessage",
    InputRequestKind.ROOTS: "roots/list",
}
_CAPABILITIES: Final = {
    InputRequestKind.ELICITATION_FORM: JsonObject({"elicitation": {"form": {}}}),
    InputRequestKind.ELICITATION_URL: JsonObject({"elicitation": {"url": {}}}),
    InputRequestKind.SAMPLING: JsonObject({"sampling": {}}),
    InputRequestKind.ROOTS: JsonObject({"roots": {}}),
}


def missing_capabilities(
    kinds: Iterable[InputRequestKind], client_capabilities: Mapping[str, object]
) -> JsonObject | None:
    """The merged ``requiredCapabilities`` object naming every kind in ``kinds`` that
    ``client_capabilities`` does not declare, or ``None`` when the client declares them all.

    One object for all of them (the server reports every missing capability of a call or a
    result together), in a fixed order whatever the order of ``kinds``:
    ``{"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}}`` at most.
    """
    missing = {kind for kind in kinds if not kind.declared_by(client_capabilities)}
    if not missing:
        return None
    members: dict[str, object] = {}
    elicitation: dict[str, object] = {}
    if InputRequestKind.ELICITATION_FORM in missing:
        elicitation["form"] = {}
    if InputRequestKind.ELICITATION_URL in missing:
        elicitation["url"] = {}
    if elicitation:
        members["elicitation"] = elicitation
    for kind in (InputRequestKind.SAMPLING, InputRequestKind.ROOTS):
        if kind in missing:
            members[kind.value] = {}
    return JsonObject(members)


class Requirement(enum.Enum):
    """When the server checks a declared kind against the client's capabilities."""

    REQUIRED = "required"
    """On every call, after admission and before the handler runs: a client that does not
    declare it gets ``-32021`` (the operation is still listed; this is not authorization)."""
    CONDITIONAL = "conditional"
    """Only when the handler emits a request of this kind (the default)."""


@dataclass(frozen=True, slots=True)
class InputRequestDeclaration:
    """One kind of request an operation may emit, and when its capability is checked (Soklet's
    ``McpInputRequestDeclaration``; ``@McpMayRequestInput(type, requirement)``).

    Build it with a factory (``InputRequestDeclaration.sampling()``, ...) or directly.  A
    declaration is configuration: a refusal is a ``ConfigurationError``.
    """

    kind: InputRequestKind
    requirement: Requirement = Requirement.CONDITIONAL

    def __post_init__(self) -> None:
        if not isinstance(self.kind, InputRequestKind):
            raise ConfigurationError("InputRequestDeclaration.kind: must be an InputRequestKind")
        if not isinstance(self.requirement, Requirement):
            raise ConfigurationError("InputRequestDeclaration.requirement: must be a Requirement")

    @classmethod
    def elicitation_form(
        cls, requirement: Requirement = Requirement.CONDITIONAL
    ) -> InputRequestDeclaration:
        return cls(InputRequestKind.ELICITATION_FORM, requirement)

    @classmethod
    def elicitation_url(
        cls, requirement: Requirement = Requirement.CONDITIONAL
    ) -> InputRequestDeclaration:
        return cls(InputRequestKind.ELICITATION_URL, requirement)

    @classmethod
    def sampling(
        cls, requirement: Requirement = Requirement.CONDITIONAL
    ) -> InputRequestDeclaration:
        return cls(InputRequestKind.SAMPLING, requirement)

    @classmethod
    def roots(cls, requirement: Requirement = Requirement.CONDITIONAL) -> InputRequestDeclaration:
        return cls(InputRequestKind.ROOTS, requirement)


class RequestStateMode(enum.Enum):
    """Who protects the request state a multi-round operation hands the client.

    The three modes of Soklet's ``McpRequestStateMode``.  They decide what the client sees on
    2026-07-28; on a 2025 session the state stays in the server between rounds, whatever the
    mode (the mode's rules on what a handler may return still apply).
    """

    NONE = "none"
    """No request state: the default."""
    APPLICATION_PROTECTED = "application_protected"
    """The application supplies an opaque string (``InputRequiredResult.request_state``) and
    protects it itself; the framework only echoes it (at most 65,536 UTF-8 bytes)."""
    FRAMEWORK_PROTECTED = "framework_protected"
    """The application supplies JSON (``InputRequiredResult.framework_state``); the framework
    seals it and hands the verified value back on the retry
    (``RequestContext.framework_state``), so the server needs protection keys."""


class _Declaring(Protocol):
    """A tool, prompt or resource registration, as far as multi-round input goes."""

    @property
    def declared_kinds(self) -> frozenset[InputRequestKind]: ...

    @property
    def request_state_mode(self) -> RequestStateMode: ...


def asks_for_input(operation: _Declaring) -> bool:
    """Whether ``operation`` may answer with an input-required result: it declares an input
    request or a request state mode.  (On 2026-07-28 the client then retries; in a 2025 session
    the server asks the client itself, so such an operation needs a session there.)"""
    return bool(operation.declared_kinds) or (
        operation.request_state_mode is not RequestStateMode.NONE
    )
