"""A decorated method's signature: which parameters are business arguments, which are framework
values to inject, and what it returns.

Read once, when the class is decorated.  Parameters annotated ``RequestContext``,
``InvocationFeatures``, ``CancellationToken``, ``ProgressReporter | None`` or ``RequestLogger |
None`` are framework parameters: left out of every published schema and argument list and filled
in per call. The rest are business parameters, published under their own names unless metadata
says otherwise.  A bare ``ProgressReporter`` or ``RequestLogger`` is refused: a reporter exists
only when the client asked for progress, a logger only when the client can receive log messages,
so the annotation must admit ``None``.  Every refusal is a ``ConfigurationError`` naming the
operation; the class decorator adds the class and method.
"""

from __future__ import annotations

import enum
import inspect
import types
import typing
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Final, Union

from mcpkit.errors import ConfigurationError
from mcpkit.model._context import (
    CancellationToken,
    InvocationFeatures,
    ProgressReporter,
    RequestContext,
    RequestLogger,
)
from mcpkit.model._revision import Revision, wires

__all__ = [
    "NONE",
    "NO_RESULT",
    "Inject",
    "Method",
    "Param",
    "arms",
    "check_result",
    "fail",
    "operation_revisions",
    "read_method",
    "unwrap",
]

UNIONS: Final = (Union, types.UnionType)
NONE: Final = type(None)
NO_RESULT: Final = object()  # the method has no return annotation


class Inject(enum.Enum):
    """The framework values a method may receive, and how each is found per call."""

    CONTEXT = "context"
    FEATURES = "features"
    TOKEN = "token"
    PROGRESS = "progress"
    LOGGER = "logger"

    def value_for(self, ctx: RequestContext, features: InvocationFeatures) -> object:
        if self is Inject.CONTEXT:
            return ctx
        if self is Inject.FEATURES:
            return features
        if self is Inject.TOKEN:
            return features.cancellation_token
        if self is Inject.LOGGER:
            return features.logger
        return features.progress_reporter


_FRAMEWORK: Final[Mapping[object, Inject]] = {
    RequestContext: Inject.CONTEXT,
    InvocationFeatures: Inject.FEATURES,
    CancellationToken: Inject.TOKEN,
}

# Framework values that exist only for some requests, so a parameter must admit ``None``: the
# type, how it is found, and why a bare annotation is refused.
_MAYBE_ABSENT: Final[tuple[tuple[type, Inject, str], ...]] = (
    (ProgressReporter, Inject.PROGRESS,
     "a reporter exists only when the client asked for progress"),
    (RequestLogger, Inject.LOGGER,
     "a logger exists only when the client can receive log messages"),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Param:
    """A business parameter: its name (the default published name) and annotation."""

    name: str
    hint: Any
    has_default: bool


@dataclass(frozen=True, slots=True)
class Method:
    """A method's parameters, split into business and framework ones, and its result type."""

    business: tuple[Param, ...]
    framework: tuple[tuple[str, Inject], ...]
    framework_hints: frozenset[object]
    result: Any
    is_async: bool


def fail(label: str, problem: str) -> ConfigurationError:
    """A refusal naming the operation (``tool 'x': ...``); the class decorator adds the rest."""
    return ConfigurationError(f"{label}: {problem}")


def arms(hint: Any) -> tuple[Any, ...]:
    """The members of a union annotation (``Optional`` or ``|``), or the annotation alone."""
    return typing.get_args(hint) if typing.get_origin(hint) in UNIONS else (hint,)


def _injection(label: str, name: str, hint: Any) -> Inject | None:
    try:
        found = _FRAMEWORK.get(hint)
    except TypeError:  # unhashable metadata: a business parameter (the schema layer decides)
        return None
    if found is not None:
        return found
    for kind, inject, absent in _MAYBE_ABSENT:
        if hint is kind:
            raise fail(label, f"parameter {name!r}: annotate it {kind.__name__} | None; {absent}")
        if set(arms(hint)) == {kind, NONE}:
            return inject
    return None


def read_method(label: str, function: Callable[..., Any], *, bound: bool = True) -> Method:
    """Split the parameters (names come from the signature) and resolve annotations: those of
    an instance method after ``self`` (``bound``), or all of a plain function's."""
    if inspect.isgeneratorfunction(function) or inspect.isasyncgenfunction(function):
        raise fail(label, "the method is a generator function; it must return its result")
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except Exception as error:  # NameError and friends from unresolvable string annotations
        raise fail(label, f"cannot resolve the method's annotations: {error}") from error
    params = list(inspect.signature(function).parameters.values())
    if bound:
        if not params or params[0].name != "self" or params[0].kind is params[0].KEYWORD_ONLY:
            raise fail(label, "the method must be an instance method whose first parameter is self")
        params = params[1:]
    elif params and params[0].name in ("self", "cls"):
        # The schema layer skips a first parameter of these names, so it cannot be an argument.
        raise fail(label, f"a plain function's first parameter cannot be named {params[0].name!r}")
    business: list[Param] = []
    framework: list[tuple[str, Inject]] = []
    framework_hints: set[object] = set()
    for param in params:
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            raise fail(
                label,
                f"parameter {param.name!r}: *args, **kwargs and positional-only parameters "
                "cannot be bound by name",
            )
        if param.name not in hints:
            raise fail(label, f"parameter {param.name!r} needs a type annotation")
        hint = hints[param.name]
        inject = _injection(label, param.name, hint)
        if inject is None:
            business.append(Param(param.name, hint, param.default is not param.empty))
        else:
            framework.append((param.name, inject))
            framework_hints.add(hint)
    return Method(
        tuple(business),
        tuple(framework),
        frozenset(framework_hints),
        hints.get("return", NO_RESULT),
        inspect.iscoroutinefunction(function),
    )


def check_result(label: str, result: Any, allowed: tuple[type, ...], *, also: str = "") -> None:
    """An annotated result must be one of the kinds the registration's handler may return
    (``also`` names the shorthand returns the caller accepts on its own)."""
    if result is NO_RESULT:
        return
    for arm in arms(result):
        origin = typing.get_origin(arm) or arm
        if not (isinstance(origin, type) and issubclass(origin, allowed)):
            names = ", ".join(kind.__name__ for kind in allowed) + (f", or {also}" if also else "")
            raise fail(label, f"the method returns {result!r}; it must return {names}")


def operation_revisions(
    label: str, requested: Collection[Revision] | None, served: frozenset[Revision]
) -> Collection[Revision]:
    """An operation without revisions inherits its endpoint's (a Python
    adaptation); explicit ones must be a subset, checked here to name the method."""
    if requested is None:
        return served
    if (
        isinstance(requested, Collection)
        and all(isinstance(revision, Revision) for revision in requested)
        and not set(requested) <= served
    ):
        extra = wires(set(requested) - served)
        raise fail(label, f"selects {extra}, which the endpoint does not serve")
    return requested  # anything else: the registration factory names the problem


def unwrap(label: str, param: Param, kind: type) -> tuple[Any, Any]:
    """``(type, metadata of kind or None)`` of an ``Annotated`` business parameter."""
    hint, found = param.hint, None
    if typing.get_origin(hint) is Annotated:
        hint, *metadata = typing.get_args(hint)
        for item in metadata:
            if not isinstance(item, kind) or found is not None:
                raise fail(
                    label,
                    f"parameter {param.name!r}: Annotated metadata {item!r} is not supported "
                    f"here (one {kind.__name__} at most)",
                )
            found = item
    return hint, found
