"""The checks an endpoint is built with.

``Endpoint`` runs them in one documented order, so the same mistake always gives the same error:

1. the path (``validate_endpoint_path``);
2. the endpoint's revisions: a non-empty collection of ``Revision``;
3. the options: implementation, instructions, tool rate limiter, the two cache policies, and
   ``session_revisions`` (served 2025 revisions only);
4. the registration collections: each a list or tuple of the right class;
5. every operation's revisions are a subset of the endpoint's, in the
   order tools, prompts, resources, resource list handler; an operation that asks for input
   selects 2025 revisions only among ``session_revisions``;
6. the 2025 object-output rule, re-checked with the path;
7. unique tool names and prompt names, exact resource URIs and template strings;
8. at most 256 templates, then no two overlapping templates (``check_no_overlaps``).

Every refusal is a ``ConfigurationError`` that starts with the endpoint's path and revisions and
names the offending operation by kind, name or URI and revisions, so a developer finds the
registration at once.  Uniqueness and overlap hold across the whole endpoint whatever the
revisions, because they are stated per endpoint: two operations that share a name but not a
revision would still make the catalog depend on which revision a client picked.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Final, TypeVar

from mcpkit.errors import ConfigurationError, InvalidValueError
from mcpkit.json import JsonObject, string
from mcpkit.model._input import asks_for_input
from mcpkit.model._prompts import PromptRegistration
from mcpkit.model._resources import ResourceListRegistration, ResourceRegistration
from mcpkit.model._revision import Revision, wires
from mcpkit.model._templates import (
    MAX_TEMPLATES_PER_ENDPOINT,
    UriTemplate,
    check_no_overlaps,
    overlaps,
)
from mcpkit.model._tools import ToolRegistration

__all__ = [
    "Operation",
    "Site",
    "check_object_outputs",
    "check_subsets",
    "check_templates",
    "check_unique",
    "describe",
    "registrations",
    "revision_set",
    "show",
    "template_of",
    "text_option",
    "uri_of",
    "wires",
]

Operation = ToolRegistration | PromptRegistration | ResourceRegistration | ResourceListRegistration

_R = TypeVar("_R")
_SHOWN_CHARS: Final = 80


def show(text: str) -> str:
    """A bounded spelling of a name, URI or path for a developer's message."""
    if len(text) > _SHOWN_CHARS:
        return repr(text[:_SHOWN_CHARS]) + f"... ({len(text)} characters)"
    return repr(text)


def describe(operation: Operation) -> str:
    """An operation as messages name it: kind, name or URI, and revisions."""
    if isinstance(operation, ToolRegistration):
        label = f"tool {show(operation.name)}"
    elif isinstance(operation, PromptRegistration):
        label = f"prompt {show(operation.name)}"
    elif isinstance(operation, ResourceListRegistration):
        label = "resource list handler"
    elif operation.template is not None:
        label = f"resource template {show(operation.template.text)}"
    else:
        label = f"resource {show(uri_of(operation))}"
    return f"{label} (revisions {wires(operation.revisions)})"


@dataclass(frozen=True, slots=True)
class Site:
    """The endpoint being built, as messages name it: its path, and its revisions once known."""

    path: str
    revisions: frozenset[Revision] = frozenset()

    def __str__(self) -> str:
        if not self.revisions:
            return f"endpoint {show(self.path)}"
        return f"endpoint {show(self.path)} (revisions {wires(self.revisions)})"

    def fail(self, problem: str) -> ConfigurationError:
        return ConfigurationError(f"{self}: {problem}")


def revision_set(site: Site, option: str, value: object, *, empty: bool) -> frozenset[Revision]:
    """A set, frozenset, list or tuple of ``Revision`` members, stored as a ``frozenset``."""
    if not isinstance(value, AbstractSet | list | tuple):
        raise site.fail(f"{option} must be a set of Revision members")
    if not value and not empty:
        raise site.fail(f"{option} must not be empty: no revision is assumed")
    if not all(isinstance(revision, Revision) for revision in value):
        raise site.fail(
            f"every member of {option} must be a Revision (Revision.parse reads a wire string)"
        )
    return frozenset(value)


def text_option(site: Site, option: str, value: object, *, empty: bool) -> str | None:
    """Optional well-formed text kept exactly; ``empty=False`` also refuses ``""``."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise site.fail(f"{option} must be a str or None")
    try:
        text = string(value)
    except InvalidValueError as error:
        raise site.fail(f"{option}: {error.rule}") from None
    if not text and not empty:
        raise site.fail(f"{option} must be a non-empty str or None")
    return text


def registrations(site: Site, option: str, value: object, kind: type[_R]) -> tuple[_R, ...]:
    """A list or tuple of ``kind``, in the order given."""
    if not isinstance(value, list | tuple):
        raise site.fail(f"{option} must be a list or tuple of {kind.__name__}")
    for index, item in enumerate(value):
        if not isinstance(item, kind):
            raise site.fail(
                f"{option}[{index}] must be a {kind.__name__}, not {type(item).__name__}"
            )
    return tuple(value)


def check_subsets(site: Site, operations: Iterable[Operation]) -> None:
    """An operation serves only revisions its endpoint serves."""
    for operation in operations:
        extra = operation.revisions - site.revisions
        if extra:
            raise site.fail(
                f"{describe(operation)} selects {wires(extra)}, which the endpoint does not "
                "serve; an operation's revisions must be a subset of its endpoint's"
            )


def check_input_sessions(
    site: Site,
    sessions: AbstractSet[Revision],
    operations: Iterable[ToolRegistration | PromptRegistration | ResourceRegistration],
) -> None:
    """An operation that may ask the client for input selects a 2025 revision only where the
    endpoint keeps sessions: a 2025 client is asked within its session, and a stateless 2025
    request has nobody to ask."""
    for operation in operations:
        if not asks_for_input(operation):
            continue
        stateless = {
            revision
            for revision in operation.revisions
            if revision.has_handshake and revision not in sessions
        }
        if stateless:
            raise site.fail(
                f"{describe(operation)} declares input requests or request state, which a "
                f"2025 client is asked for within a session; add {wires(stateless)} to the "
                "endpoint's session_revisions, or select only Revision.V2026_07_28"
            )


def check_object_outputs(site: Site, tools: Iterable[ToolRegistration]) -> None:
    """A tool that selects a 2025 revision declares only an object-shaped output schema.

    The tool factories already refuse anything else; checking again here costs nothing and puts
    the path in the message, should a registration ever be built another way.
    """
    for tool in tools:
        handshake = sorted(revision.wire for revision in tool.revisions if revision.has_handshake)
        schema = tool.output_schema
        if not handshake or schema is None:
            continue
        document = schema.document
        if not (isinstance(document, JsonObject) and document.get("type") == "object"):
            raise site.fail(
                f"{describe(tool)} declares a non-object output schema, but structured content "
                f"must be a JSON object on {', '.join(handshake)}"
            )


def check_unique(site: Site, what: str, items: Iterable[tuple[str, Operation]]) -> None:
    """Refuse a second operation with the same key (a name, a URI or a template string)."""
    seen: dict[str, Operation] = {}
    for key, operation in items:
        first = seen.get(key)
        if first is not None:
            raise site.fail(
                f"{describe(operation)} repeats the {what} of {describe(first)}; {what}s must be "
                "unique within an endpoint, whatever their revisions"
            )
        seen[key] = operation


def check_templates(site: Site, templates: Sequence[ResourceRegistration]) -> None:
    """No URI may match two templates, so a read never depends on registration order.

    The count is bounded first, so ``check_no_overlaps`` (exact, linear per pair) reads at most
    256 * 255 / 2 pairs; only when it refuses is the offending pair looked up again, within the
    same bound, to name both registrations.
    """
    if len(templates) > MAX_TEMPLATES_PER_ENDPOINT:
        raise site.fail(
            f"has {len(templates)} resource templates; an endpoint may have at most "
            f"{MAX_TEMPLATES_PER_ENDPOINT} (overlap checks are bounded)"
        )
    parsed = [template_of(registration) for registration in templates]
    try:
        check_no_overlaps(parsed)
    except ConfigurationError as error:
        # Counted and unique already, so the refusal is an overlapping pair: name the first.
        a, b = next(
            (a, b)
            for index, a in enumerate(templates)
            for b in templates[index + 1 :]
            if overlaps(template_of(a), template_of(b))
        )
        raise site.fail(
            f"{describe(a)} and {describe(b)} overlap: some URI could match both, so a read "
            "would depend on registration order"
        ) from error


def template_of(registration: ResourceRegistration) -> UriTemplate:
    """The parsed template of a template registration (the caller has told the kinds apart)."""
    template = registration.template
    assert template is not None
    return template


def uri_of(registration: ResourceRegistration) -> str:
    """The URI of an exact resource registration (the caller has told the kinds apart)."""
    uri = registration.uri
    assert uri is not None
    return uri
