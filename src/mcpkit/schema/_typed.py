"""Typed tool inputs and outputs: the public entry points of derivation.

``derive_input`` and ``derive_output`` run the whole registration-time pipeline at once
(analyse the type, derive the document, compile it), so every refusal is a ``SchemaError``
when the tool is built, never at its first call.  The models they return are immutable and
shared by every call.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection
from typing import ClassVar, Final, Literal

from mcpkit.errors import ArgumentsFailure, ArgumentsInvalid, SchemaError
from mcpkit.json import JsonObject, JsonValue
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.schema._analyze import analyze_function, analyze_type
from mcpkit.schema._bind import Binder
from mcpkit.schema._compile import ToolSchema, compile_schema
from mcpkit.schema._derive import derive_document
from mcpkit.schema._evaluate import Outcome
from mcpkit.schema._formats import Misformatted, locate
from mcpkit.schema._output import Converter
from mcpkit.schema._typeinfo import Arg, Int8, Int16, Int32, Int64, TypeModel, Width

__all__ = [
    "Arg", "InputModel", "Int8", "Int16", "Int32", "Int64", "OutputModel", "Width",
    "derive_input", "derive_output",
]  # fmt: skip


_REFUSALS: Final = {
    Outcome.INVALID: ArgumentsFailure.INVALID,
    Outcome.BUDGET_EXHAUSTED: ArgumentsFailure.BUDGET_EXHAUSTED,
}


class _Model:
    __slots__ = ("_compiled", "_model", "document", "limits", "schema", "source")

    source: object
    document: JsonObject
    schema: ToolSchema
    limits: Limits
    _model: TypeModel
    _compiled: Binder | Converter
    # What the subclass runs per call, compiled once from the model and shared.
    _COMPILE: ClassVar[type[Binder] | type[Converter]]

    def __init__(
        self, source: object, model: TypeModel, schema: ToolSchema, limits: Limits
    ) -> None:
        for name, value in (
            ("source", source),
            ("_model", model),
            ("schema", schema),
            ("document", schema.document),
            ("limits", limits),
            ("_compiled", self._COMPILE(model, limits)),
        ):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {_describe(self.source)}>"


class InputModel(_Model):
    """A tool's derived input schema and its binder."""

    __slots__ = ()

    _compiled: Binder
    _COMPILE = Binder

    def bind(self, arguments: JsonObject) -> object:
        """Validate ``arguments`` against the schema, then bind them.

        Returns an instance of the input type (a pydantic model's built by
        ``model_validate(..., strict=True)``), a ``dict`` for ``dict[str, T]`` and TypedDicts,
        or the keyword arguments of a function.  Raises ``ArgumentsInvalid`` on any failure.
        """
        outcome = self.schema.evaluate(arguments)
        if outcome is not Outcome.VALID:
            raise ArgumentsInvalid(_REFUSALS[outcome])
        try:
            return self._compiled(arguments)
        except Misformatted as error:
            error.detail = locate(self._model, arguments)
            raise

    def bind_validated(self, arguments: JsonObject) -> object:
        """Bind arguments that already passed ``schema.evaluate`` (the pipeline runs that under
        the evaluation gate).  Binding still refuses anything it cannot convert safely; a
        string that is not its ``format`` is refused with where and what it must be, as the
        schema's own refusals are (``format`` is an annotation, so the binder checks it)."""
        try:
            return self._compiled(arguments)
        except Misformatted as error:
            error.detail = locate(self._model, arguments)
            raise


class OutputModel(_Model):
    """A tool's derived output schema and its converter."""

    __slots__ = ()

    _compiled: Converter
    _COMPILE = Converter

    def to_json(self, value: object) -> JsonValue:
        """The structured content for ``value``, validated against the schema; raises
        ``OutputError`` (``OutputFailure.SCHEMA`` for a mismatch) and never returns part."""
        return self._compiled.to_json(self.schema, value)


def derive_input(
    tp_or_function: object,
    *,
    limits: Limits = DEFAULT_LIMITS,
    excluded: Collection[object] = (),
) -> InputModel:
    """Derive and compile the input schema of a type or of a handler's parameters.

    Input roots are a frozen dataclass, a pydantic model, a ``TypedDict``, ``dict[str, T]`` or
    a function, whose parameters (less ``self``/``cls`` and those annotated with an
    ``excluded`` marker type) become the properties.
    """
    if inspect.isfunction(tp_or_function) or inspect.ismethod(tp_or_function):
        fn: Callable[..., object] = tp_or_function
        model = analyze_function(fn, excluded=frozenset(excluded), limits=limits)
    else:
        model = analyze_type(tp_or_function, limits=limits)
    schema = _compile(tp_or_function, model, "input", False, limits)
    return InputModel(tp_or_function, model, schema, limits)


def derive_output(
    tp: object, *, object_root: bool = False, limits: Limits = DEFAULT_LIMITS
) -> OutputModel:
    """Derive and compile the output schema of a type; ``object_root`` for 2025 revisions."""
    model = analyze_type(tp, limits=limits)
    return OutputModel(tp, model, _compile(tp, model, "output", object_root, limits), limits)


def _compile(
    source: object,
    model: TypeModel,
    role: Literal["input", "output"],
    object_root: bool,
    limits: Limits,
) -> ToolSchema:
    def describe() -> str:  # lazily: the repr of a deep type is itself deeply recursive
        return _describe(source)

    document = derive_document(
        model, role=role, describe=describe, object_root_required=object_root
    )
    try:
        return compile_schema(document, limits=limits, object_root=role == "input" or object_root)
    except SchemaError as exc:  # a limit the derived document exceeds: name the type
        raise SchemaError(f"{describe()}: the derived schema is refused: {exc}") from exc


def _describe(source: object) -> str:
    if inspect.isfunction(source) or inspect.ismethod(source):
        return f"parameters of {source.__qualname__}"
    if isinstance(source, type):
        return source.__qualname__
    return repr(source)
