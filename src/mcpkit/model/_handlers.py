"""What every registration checks the same way: its handler's shape, its revision set and its
presentation options (RV-03, TR-03; DESIGN.md §1.2).

Tools, prompts, resources, resource list handlers and completion handlers are all called by the
server as ``handler(ctx, ..., features)`` with a fixed number of positional arguments, and may
be ``def`` or ``async def``.  Deciding that once, here, keeps one rule in one place and lets the
server branch on a stored ``is_async`` instead of inspecting a callable per request.

Every check raises ``ConfigurationError`` through its owner's ``fail``, so the message starts
with the operation's kind, name and revisions; the endpoint adds its path (LG-04).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Protocol

from mcpkit.errors import ConfigurationError, InvalidValueError
from mcpkit.model._checks import Checks
from mcpkit.model._revision import Revision

__all__ = [
    "HANDLER_PARAMETERS",
    "Operation",
    "Owner",
    "Registration",
    "check_handler",
    "check_options",
    "identify",
    "show",
]

HANDLER_PARAMETERS: Final = ("ctx", "arguments", "features")
"""What a tool, prompt or template resource handler receives, in order."""

_SHOWN_CHARS: Final = 40
_COUNTS: Final = {1: "one", 2: "two", 3: "three", 4: "four"}


class Owner(Protocol):
    """Anything that names a registration in its errors (a tool, a prompt, a resource ...)."""

    def fail(self, problem: str) -> ConfigurationError: ...


def show(text: str) -> str:
    """A bounded spelling of a refused name or URI for the developer's message."""
    if len(text) > _SHOWN_CHARS:
        return repr(text[:_SHOWN_CHARS]) + f"... ({len(text)} characters)"
    return repr(text)


@dataclass(frozen=True, slots=True)
class Operation:
    """A prompt, resource or resource list handler being built, as error messages name it.

    ``label`` is the kind and, where it has one, the name or URI (``prompt 'summary'``).
    """

    label: str
    revisions: frozenset[Revision]

    def __str__(self) -> str:
        wires = ", ".join(sorted(revision.wire for revision in self.revisions))
        return f"{self.label} (revisions {wires})"

    def fail(self, problem: str) -> ConfigurationError:
        return ConfigurationError(f"{self}: {problem}")


def identify(label: str, revisions: object) -> Operation:
    """Check the revision set: a non-empty set, frozenset, list or tuple of ``Revision`` members
    (RV-03; no revision is ever assumed), stored as a ``frozenset``."""
    if not isinstance(revisions, AbstractSet | list | tuple):
        raise ConfigurationError(f"{label}: revisions must be a set of Revision members")
    if not revisions:
        raise ConfigurationError(f"{label}: revisions must not be empty (RV-03)")
    if not all(isinstance(revision, Revision) for revision in revisions):
        raise ConfigurationError(
            f"{label}: every revision must be a Revision member (Revision.parse reads a wire "
            "string)"
        )
    return Operation(label, frozenset(revisions))


def check_handler(
    owner: Owner,
    handler: object,
    role: str,
    parameters: tuple[str, ...] = HANDLER_PARAMETERS,
) -> bool:
    """Refuse what can never be called as ``handler(*parameters)``; return whether it is a
    coroutine function, decided once so the server never inspects it per call."""
    if not callable(handler):
        raise owner.fail(f"the {role} must be callable")
    if inspect.isgeneratorfunction(handler) or inspect.isasyncgenfunction(handler):
        raise owner.fail(f"the {role} is a generator function; it must return its result")
    try:
        signature = inspect.signature(handler)
    except ValueError:  # a builtin without a signature: the first call will tell
        pass
    else:
        try:
            signature.bind(*(None for _ in parameters))
        except TypeError:
            count = _COUNTS.get(len(parameters), str(len(parameters)))
            raise owner.fail(
                f"the {role} must accept {count} positional arguments ({', '.join(parameters)})"
            ) from None
    # An instance whose class defines ``async def __call__`` is awaited too.  The class's own
    # ``__call__`` is the one a call runs (a class used as a handler runs ``type.__call__``).
    call = type(handler).__call__
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(call)


def check_options(owner: Owner, checks: Checks, values: Mapping[str, object]) -> dict[str, Any]:
    """Run the value checks of ``_checks`` over a factory's keyword options, in order.

    The same rules as the value classes (surrogate-free text kept exactly, absolute URIs, media
    types, icons ...), but a refusal is a ``ConfigurationError`` naming the option, because a
    registration is configuration, not a value built while serving.
    """
    checked: dict[str, Any] = {}
    for name, check in checks:
        try:
            checked[name] = check(values[name])
        except InvalidValueError as error:
            raise owner.fail(f"{name}: {error.rule}") from None
    return checked


class Registration:
    """Immutable once built, and built only by its factories (``__init__`` refuses).

    Subclasses declare ``__slots__`` and their factories call :meth:`_create`.  Equality is
    identity: two registrations are two operations even when they look alike.
    """

    __slots__ = ()
    _FACTORIES: ClassVar[str]

    def __init__(self, *_args: object, **_kwargs: object) -> None:
        raise TypeError(f"{type(self).__name__} is built by {self._FACTORIES}")

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    @classmethod
    def _create(cls, values: Mapping[str, object]) -> Any:
        registration = object.__new__(cls)
        for name, value in values.items():
            object.__setattr__(registration, name, value)
        return registration
