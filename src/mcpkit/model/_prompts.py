"""Prompt registrations: a named template of messages with string arguments.

A prompt's arguments are strings, declared once with :class:`PromptArgument`; the server
refuses missing, unknown and non-string arguments before the handler runs, so the handler reads
a plain ``Mapping[str, str]``.  Everything a prompt publishes in ``prompts/list`` is decided and
checked here, once: ``definition()`` is the full wire ``Prompt``, and
cutting icons off for 2025-06-18 is ``mcpkit.protocol``'s projection.

Names (of prompts and of their arguments) are 1 to 128 characters with no whitespace or
control characters: they are keys a client types and sends back, so nothing invisible or
ambiguous may hide in them.  Unlike tool names they are not restricted to ASCII, as the
protocol does not restrict them.  Errors are ``ConfigurationError`` naming the prompt and its
revisions; the endpoint adds its path and checks that names are unique.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import ClassVar, Final, TypeAlias

from mcpkit.errors import ConfigurationError, InvalidValueError
from mcpkit.json import JsonObject, string

# From the package: the module that defines Icon may move.
from mcpkit.model import Icon
from mcpkit.model._checks import OPTIONAL_TEXT, Checks, instance_of, sequence_of, validate
from mcpkit.model._completion import NO_COMPLETIONS, CompletionHandler, check_completions
from mcpkit.model._content import icon_tuple
from mcpkit.model._context import InvocationFeatures, RequestContext
from mcpkit.model._handlers import (
    MultiRoundRegistration,
    check_handler,
    check_multi_round,
    check_options,
    identify,
    show,
)
from mcpkit.model._input import InputRequestDeclaration, RequestStateMode
from mcpkit.model._outputs import PromptOutput
from mcpkit.model._results import CompleteResult, InputRequiredResult
from mcpkit.model._revision import Revision, wires
from mcpkit.model._scopes import checked_scopes

__all__ = ["MAX_PROMPT_NAME_CHARS", "PromptArgument", "PromptHandler", "PromptRegistration"]

MAX_PROMPT_NAME_CHARS: Final = 128
# Unicode whitespace (``\s``) and the C0, DEL and C1 controls.
_INVISIBLE: Final = re.compile(r"[\s\x00-\x1f\x7f-\x9f]")

PromptResult: TypeAlias = PromptOutput | CompleteResult | InputRequiredResult
PromptHandler: TypeAlias = Callable[
    [RequestContext, Mapping[str, str], InvocationFeatures],
    PromptResult | Awaitable[PromptResult],
]
"""``(ctx, arguments, features)`` to a ``PromptOutput``, a ``CompleteResult`` carrying one (to
add result ``_meta``) or a 2026-07-28 ``InputRequiredResult``; directly or awaited."""


def _name(value: str) -> str:
    """A prompt or argument name: 1 to 128 characters, well-formed, nothing invisible."""
    name = string(value)
    if not 1 <= len(name) <= MAX_PROMPT_NAME_CHARS:
        raise InvalidValueError(f"must be 1 to {MAX_PROMPT_NAME_CHARS} characters")
    if _INVISIBLE.search(name) is not None:
        raise InvalidValueError("must not contain whitespace or control characters")
    return name


@dataclass(frozen=True, slots=True)
class PromptArgument:
    """One string argument a prompt accepts (the protocol's ``PromptArgument``).

    ``required`` is a real ``bool``: the server refuses a ``prompts/get`` that omits a required
    argument before the handler runs.  Text is well-formed and kept exactly.  A declaration is
    configuration, so a refusal is a ``ConfigurationError`` (``"PromptArgument.field: rule"``).
    """

    name: str
    _: KW_ONLY
    title: str | None = None
    description: str | None = None
    required: bool = False

    _CHECKS: ClassVar[Checks] = (
        ("name", _name),
        ("title", OPTIONAL_TEXT),
        ("description", OPTIONAL_TEXT),
        ("required", instance_of((bool,), "must be a bool")),
    )

    def __post_init__(self) -> None:
        try:
            validate(self)
        except InvalidValueError as error:
            raise ConfigurationError(str(error)) from None

    def to_json(self) -> JsonObject:
        """``name``, ``title`` and ``description`` when present, and ``required`` always, so
        the catalog states the rule the server enforces."""
        members: dict[str, object] = {"name": self.name}
        if self.title is not None:
            members["title"] = self.title
        if self.description is not None:
            members["description"] = self.description
        members["required"] = self.required
        return JsonObject(members)


def _arguments(value: object) -> tuple[PromptArgument, ...]:
    return sequence_of(value, PromptArgument, "every argument must be a PromptArgument")


_OPTIONS: Final[Checks] = (
    ("arguments", _arguments),
    ("title", OPTIONAL_TEXT),
    ("description", OPTIONAL_TEXT),
    ("icons", icon_tuple),
)


class PromptRegistration(MultiRoundRegistration):
    """An immutable prompt: name, revisions, declared arguments, handler, display options and
    the completers of its arguments.

    Build one with :meth:`create`.  ``handler`` is called as ``handler(ctx, arguments,
    features)``; ``is_async`` says whether to await it.  ``completions`` maps argument names to
    completion handlers (read-only); ``async_completions`` holds the names whose completer is a
    coroutine function.  ``argument_names`` and ``required_arguments`` are the sets the server
    checks a ``prompts/get`` against.  ``input_requests`` and ``request_state_mode`` are its
    2026-07-28 multi-round declarations, with ``declared_kinds`` and ``required_kinds``
    precomputed from them.
    """

    __slots__ = (
        "_definition",
        "argument_names",
        "arguments",
        "async_completions",
        "completions",
        "declared_kinds",
        "description",
        "handler",
        "icons",
        "input_requests",
        "is_async",
        "name",
        "request_state_mode",
        "required_arguments",
        "required_kinds",
        "revisions",
        "scopes",
        "title",
    )
    _FACTORIES: ClassVar[str] = "PromptRegistration.create"

    name: str
    revisions: frozenset[Revision]
    handler: PromptHandler
    is_async: bool
    arguments: tuple[PromptArgument, ...]
    argument_names: frozenset[str]
    required_arguments: frozenset[str]
    title: str | None
    description: str | None
    icons: tuple[Icon, ...]
    completions: Mapping[str, CompletionHandler]
    async_completions: frozenset[str]
    scopes: frozenset[str]
    """OAuth scopes a caller's access token must all carry to get this prompt; empty means no
    scope is required.  Enforced by the server's resource server (``Server(auth=...)``); list
    results hide entries a caller may not use."""
    _definition: JsonObject

    def __repr__(self) -> str:
        return f"<PromptRegistration {self.name} [{wires(self.revisions)}]>"

    @classmethod
    def create(
        cls,
        *,
        name: str,
        revisions: Collection[Revision],
        handler: PromptHandler,
        arguments: Sequence[PromptArgument] = (),
        title: str | None = None,
        description: str | None = None,
        icons: Sequence[Icon] = (),
        completions: Mapping[str, CompletionHandler] = NO_COMPLETIONS,
        input_requests: Sequence[InputRequestDeclaration] = (),
        request_state_mode: RequestStateMode | None = None,
        scopes: Collection[str] = (),
    ) -> PromptRegistration:
        """A prompt that selects ``revisions`` (a non-empty set of ``Revision``).

        Rules, checked in this order: the name; the revisions; the handler accepts three
        positional arguments and is not a generator; the options have their types and
        well-formed text; argument names are unique; every ``completions`` key names a
        declared argument and every completer accepts ``(ctx, value, arguments)``; the
        multi-round declarations (one per kind; with a request-state mode other than ``NONE``
        they select only 2026-07-28); the ``scopes`` (``checked_scopes``).
        """
        if not isinstance(name, str):
            raise ConfigurationError("a prompt name must be a str")
        try:
            name = _name(name)
        except InvalidValueError as error:
            raise ConfigurationError(f"prompt name {show(name)}: {error.rule}") from None
        prompt = identify(f"prompt {show(name)}", revisions)
        is_async = check_handler(prompt, handler, "handler")
        options = check_options(
            prompt,
            _OPTIONS,
            {"arguments": arguments, "title": title, "description": description, "icons": icons},
        )
        names: list[str] = []
        for argument in options["arguments"]:
            if argument.name in names:
                raise prompt.fail(f"declares the argument {show(argument.name)} twice")
            names.append(argument.name)
        handlers, coroutines = check_completions(prompt, completions, tuple(names), "argument")
        multi_round = check_multi_round(prompt, input_requests, request_state_mode)
        required_scopes = checked_scopes(scopes, str(prompt))
        registration: PromptRegistration = cls._create(
            {
                "name": name,
                "revisions": prompt.revisions,
                "handler": handler,
                "is_async": is_async,
                **options,
                "argument_names": frozenset(names),
                "required_arguments": frozenset(
                    argument.name for argument in options["arguments"] if argument.required
                ),
                "completions": handlers,
                "async_completions": coroutines,
                **multi_round,
                "scopes": required_scopes,
            }
        )
        object.__setattr__(registration, "_definition", registration._wire())
        return registration

    def _wire(self) -> JsonObject:
        members: dict[str, object] = {"name": self.name}
        if self.title is not None:
            members["title"] = self.title
        if self.description is not None:
            members["description"] = self.description
        if self.arguments:
            members["arguments"] = [argument.to_json() for argument in self.arguments]
        if self.icons:
            members["icons"] = [icon.to_json() for icon in self.icons]
        return JsonObject(members)

    def definition(self) -> JsonObject:
        """The wire ``Prompt`` of ``prompts/list``: ``name``, then ``title``, ``description``,
        ``arguments`` and ``icons`` when present.  Built once; the newest revision's full form
        (2025-06-18 has no icons: projecting is ``mcpkit.protocol``'s)."""
        return self._definition
