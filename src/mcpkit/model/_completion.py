"""Argument completion: the suggestions a ``completion/complete`` handler returns, and the
completers a prompt or a resource template declares.

A completer is attached to one declared prompt argument or one template variable and is called
as ``handler(ctx, value, arguments)``: the partial value the client typed, and the arguments
(or variables) the client has already resolved.  It never runs the prompt or read handler, and
it must authorise what it suggests (suggestions can leak data); the server only counts and
writes them.

``Completion`` is a value built while serving, so a refusal raises ``InvalidValueError`` naming
the field and the rule, never the value; a completer declaration is configuration, so its
refusals are ``ConfigurationError`` naming the owning prompt or template.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import ClassVar, Final, TypeAlias

from mcpkit.errors import InvalidValueError
from mcpkit.json import JsonObject, string
from mcpkit.model._checks import Checks, exact_int, instance_of, optional, sequence_of, validate
from mcpkit.model._context import RequestContext
from mcpkit.model._handlers import Owner, check_handler, show

__all__ = [
    "COMPLETION_PARAMETERS",
    "MAX_COMPLETION_VALUES",
    "NO_COMPLETIONS",
    "Completion",
    "CompletionHandler",
    "check_completions",
]

MAX_COMPLETION_VALUES: Final = 100
"""The protocol's cap on ``completion.values`` (``maxItems: 100`` in the 2026-07-28 schema)."""
COMPLETION_PARAMETERS: Final = ("ctx", "value", "arguments")


def _values(value: object) -> tuple[str, ...]:
    """At most 100 well-formed strings, kept exactly (argument-completion values)."""
    values = sequence_of(value, str, "every value must be a str")
    if len(values) > MAX_COMPLETION_VALUES:
        raise InvalidValueError(f"at most {MAX_COMPLETION_VALUES} values (the protocol's cap)")
    return tuple(map(string, values))


@dataclass(frozen=True, slots=True, repr=False)
class Completion:
    """The suggestions for one argument: at most 100 values, in the order to show them.

    ``total`` is how many suggestions exist in all, when known (at least ``len(values)``);
    ``has_more`` says more exist than were sent, even when the total is unknown.  Values are
    well-formed text kept exactly.  ``repr`` shows only how many values there are,
    because suggestions may be as sensitive as the data they come from.
    """

    EMPTY: ClassVar[Completion]
    """No suggestions: what a declared argument without a completer gets on 2025 revisions."""

    values: tuple[str, ...]
    total: int | None = None
    has_more: bool = False

    _CHECKS: ClassVar[Checks] = (
        ("values", _values),
        ("total", optional(exact_int("must be an int or None"))),
        ("has_more", instance_of((bool,), "must be a bool")),
    )

    def __post_init__(self) -> None:
        validate(self)
        if self.total is not None and self.total < len(self.values):
            raise InvalidValueError("Completion.total: must be at least the number of values")

    def to_json(self) -> JsonObject:
        """The ``completion/complete`` body: ``{"completion": {"values", "total"?, "hasMore"}}``.

        ``hasMore`` is always written, so a client never has to guess what its absence means;
        ``resultType`` (2026-07-28) is the protocol layer's, as for every result.
        """
        completion: dict[str, object] = {"values": list(self.values)}
        if self.total is not None:
            completion["total"] = self.total
        completion["hasMore"] = self.has_more
        return JsonObject({"completion": completion})

    def __repr__(self) -> str:
        return (
            f"Completion(<{len(self.values)} values>, total={self.total}, has_more={self.has_more})"
        )


Completion.EMPTY = Completion(())

CompletionHandler: TypeAlias = Callable[
    [RequestContext, str, Mapping[str, str]], Completion | Awaitable[Completion]
]
"""``(ctx, the partial value, the other already-resolved arguments or variables)`` to a
``Completion``, directly (``def``) or awaited (``async def``)."""

NO_COMPLETIONS: Final[Mapping[str, CompletionHandler]] = MappingProxyType({})
"""The default ``completions`` of every factory and decorator that takes them: none, read-only."""


def check_completions(
    owner: Owner, completions: object, declared: tuple[str, ...], what: str
) -> tuple[Mapping[str, CompletionHandler], frozenset[str]]:
    """A read-only copy of the completers, each keyed by a declared argument or variable, and
    the keys whose completer is a coroutine function (decided once, like ``is_async``).

    A completer for a name that is not declared could never be asked for, so it is a mistake
    the developer should hear about now (fail closed).
    """
    if not isinstance(completions, Mapping):
        raise owner.fail(f"completions must be a mapping of {what} names to completion handlers")
    handlers: dict[str, CompletionHandler] = {}
    coroutines: set[str] = set()
    for key, handler in completions.items():
        if not isinstance(key, str) or key not in declared:
            shown = show(key) if isinstance(key, str) else type(key).__name__
            raise owner.fail(f"completions key {shown} does not name a declared {what}")
        role = f"completion handler for {show(key)}"
        if check_handler(owner, handler, role, COMPLETION_PARAMETERS):
            coroutines.add(key)
        handlers[str.__str__(key)] = handler
    return MappingProxyType(handlers), frozenset(coroutines)
