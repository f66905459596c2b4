"""What every registration checks the same way: its handler's shape, its revision set and its
presentation options.

Tools, prompts, resources, resource list handlers and completion handlers are all called by the
server as ``handler(ctx, ..., features)`` with a fixed number of positional arguments, and may
be ``def`` or ``async def``.  Deciding that once, here, keeps one rule in one place and lets the
server branch on a stored ``is_async`` instead of inspecting a callable per request.

Every check raises ``ConfigurationError`` through its owner's ``fail``, so the message starts
with the operation's kind, name and revisions; the endpoint adds its path.
"""

from __future__ import annotations

import dis
import inspect
import types
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar, Final, Protocol

from mcpkit.errors import ConfigurationError, InvalidValueError
from mcpkit.model._checks import Checks
from mcpkit.model._input import (
    InputRequestDeclaration,
    InputRequestKind,
    RequestStateMode,
    Requirement,
)
from mcpkit.model._revision import Revision, wires

__all__ = [
    "HANDLER_PARAMETERS",
    "NO_MULTI_ROUND",
    "MultiRoundRegistration",
    "Operation",
    "Owner",
    "Registration",
    "check_handler",
    "check_multi_round",
    "check_options",
    "identify",
    "never_suspends",
    "only_awaits",
    "show",
]

HANDLER_PARAMETERS: Final = ("ctx", "arguments", "features")
"""What a tool, prompt or template resource handler receives, in order."""

_SHOWN_CHARS: Final = 40
# A coroutine's frame can only suspend at a yield: ``await``, ``async with`` and ``async for``
# all compile to one (YIELD_FROM before Python 3.11).
_SUSPENSION_POINTS: Final = frozenset({"YIELD_VALUE", "YIELD_FROM"})
_DELEGATE: Final = "__mcpkit_only_awaits__"
_COUNTS: Final = {1: "one", 2: "two", 3: "three", 4: "four"}


def never_suspends(handler: Callable[..., object]) -> bool:
    """Whether every call of ``handler`` returns a coroutine that finishes in its first step.

    True for a plain ``async def`` function (or a method bound to one) whose own code has no
    suspension point -- no ``await``, ``async with`` or ``async for`` -- and for an adapter
    marked by :func:`only_awaits` whose function is such a one.  The server runs those inline
    instead of as a task, which changes nothing a handler can observe: there is no point at
    which it could wait, be cancelled or see another task run.  Anything else is ``False``.
    """
    function = handler.__func__ if isinstance(handler, types.MethodType) else handler
    if not isinstance(function, types.FunctionType):
        return False
    function = getattr(function, _DELEGATE, function)
    if not isinstance(function, types.FunctionType):
        return False
    code = function.__code__
    if not code.co_flags & inspect.CO_COROUTINE:
        return False
    return not any(ins.opname in _SUSPENSION_POINTS for ins in dis.get_instructions(code))


def only_awaits(adapter: Callable[..., object], function: Callable[..., object]) -> None:
    """Mark ``adapter`` (an ``async def`` of the framework's own) as suspending exactly when
    ``function``, the one coroutine function it awaits, does: see :func:`never_suspends`."""
    setattr(adapter, _DELEGATE, function)


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
    """A prompt, resource or resource list handler being built, as error messages name it (a
    tool is ``_tool_rules.Tool``, one of these that also keeps its bare name).

    ``label`` is the kind and, where it has one, the name or URI (``prompt 'summary'``).
    """

    label: str
    revisions: frozenset[Revision]

    def __str__(self) -> str:
        return f"{self.label} (revisions {wires(self.revisions)})"

    @property
    def on_handshake(self) -> bool:
        """True when a handshake revision (2025) is selected: no stateless-only features (and
        a tool's output must be an object)."""
        return any(revision.has_handshake for revision in self.revisions)

    def fail(self, problem: str) -> ConfigurationError:
        return ConfigurationError(f"{self}: {problem}")


def identify(label: str, revisions: object) -> Operation:
    """Check the revision set: a non-empty set, frozenset, list or tuple of ``Revision`` members
    (no revision is ever assumed), stored as a ``frozenset``."""
    if not isinstance(revisions, AbstractSet | list | tuple):
        raise ConfigurationError(f"{label}: revisions must be a set of Revision members")
    if not revisions:
        raise ConfigurationError(f"{label}: revisions must not be empty")
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


def check_multi_round(
    owner: Operation, input_requests: object, request_state_mode: object
) -> dict[str, Any]:
    """The multi-round declarations of a tool, prompt or resource: the
    kinds of input request its handler may emit, and who protects its request state.

    ``input_requests`` is a list or tuple of ``InputRequestDeclaration``, at most one per kind
    (a kind is either required or conditional), stored as a tuple in the order given;
    ``request_state_mode`` a ``RequestStateMode`` or ``None`` (``NONE``).  On a 2025 revision
    the framework asks the client itself, which needs a session there: the endpoint checks
    that its ``session_revisions`` cover every 2025 revision such an operation selects.  Returns the
    registration's ``input_requests``, ``request_state_mode``, ``declared_kinds`` and
    ``required_kinds``, the last two precomputed for the server's per-call checks.
    """
    if not isinstance(input_requests, list | tuple):
        raise owner.fail("input_requests must be a list or tuple of InputRequestDeclaration")
    kinds: list[InputRequestKind] = []
    for declaration in input_requests:
        if not isinstance(declaration, InputRequestDeclaration):
            raise owner.fail("every input_requests item must be an InputRequestDeclaration")
        if declaration.kind in kinds:
            raise owner.fail(f"declares the input request kind {declaration.kind.name} twice")
        kinds.append(declaration.kind)
    mode = RequestStateMode.NONE if request_state_mode is None else request_state_mode
    if not isinstance(mode, RequestStateMode):
        raise owner.fail("request_state_mode must be a RequestStateMode or None")
    return {
        "input_requests": tuple(input_requests),
        "request_state_mode": mode,
        "declared_kinds": frozenset(kinds),
        "required_kinds": frozenset(
            declaration.kind
            for declaration in input_requests
            if declaration.requirement is Requirement.REQUIRED
        ),
    }


NO_MULTI_ROUND: Final[Mapping[str, object]] = MappingProxyType(
    {
        "input_requests": (),
        "request_state_mode": RequestStateMode.NONE,
        "declared_kinds": frozenset(),
        "required_kinds": frozenset(),
    }
)
"""The declarations of an operation that always completes in one round (typed tools)."""


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


class MultiRoundRegistration(Registration):
    """A tool, prompt or resource: a registration with the multi-round declarations that
    :func:`check_multi_round` returns (``NO_MULTI_ROUND`` for a tool that never asks)."""

    __slots__ = ()

    input_requests: tuple[InputRequestDeclaration, ...]
    """The kinds of input request the handler may emit, in the order given."""
    request_state_mode: RequestStateMode
    declared_kinds: frozenset[InputRequestKind]
    """The kinds ``input_requests`` declares: an emitted request of another kind is a contract
    failure."""
    required_kinds: frozenset[InputRequestKind]
    """The kinds declared ``REQUIRED``: checked against the client's capabilities on every
    call, before the handler runs."""
