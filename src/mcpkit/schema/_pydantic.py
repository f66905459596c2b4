"""pydantic models in the typed layer: the one module of mcpkit that imports pydantic.

It is imported lazily, when analysis meets a ``BaseModel`` subclass or metadata built by
pydantic (both exist only once the application has imported pydantic), so ``import mcpkit``
never loads pydantic and pydantic stays an optional extra.

A model is read like a frozen dataclass: its ``model_fields`` in declaration order, each field's
annotation with its ``Field`` constraints, title and description; an alias is the published name.
mcpkit derives the schema, validates against it and binds first; the instance is then built by
``model_validate(..., strict=True)`` on the bound values, which runs the model's own ``after``
validators (the ``__post_init__`` of a model), so a handler never gets an instance its model
would refuse.  Anything that would make the model accept or produce other values than the
published schema says (``before``/``wrap``/``plain`` validators, serializers, computed fields,
``extra="allow"``, string transformations, custom core schemas) is refused at registration
with what to change.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Annotated, Any, Final

from pydantic import (
    AfterValidator,
    AllowInfNan,
    BaseModel,
    FailFast,
    Strict,
    StringConstraints,
    ValidationError,
)
from pydantic.fields import FieldInfo as PydanticField

from mcpkit.errors import ArgumentsFailure, ArgumentsInvalid, SchemaError
from mcpkit.schema._metadata import translate
from mcpkit.schema._named import FieldReader, unique
from mcpkit.schema._typeinfo import Absent, Arg, FieldInfo, ObjectInfo

__all__ = ["constraints", "define_model"]

# model_config entries that change what a model accepts or the values it holds.
_CHANGING_CONFIG: Final = (
    "str_strip_whitespace",
    "str_to_lower",
    "str_to_upper",
    "str_min_length",
    "str_max_length",
    "coerce_numbers_to_str",
    "use_enum_values",
)
# _PydanticGeneralMetadata entries that change nothing once mcpkit has bound the value.
_NEUTRAL: Final = frozenset({"strict", "fail_fast", "union_mode"})
_VALIDATOR_ADVICE: Final = (
    "use @field_validator(..., mode='after') or @model_validator(mode='after')"
)


def define_model(cls: type[BaseModel], name: str, field: FieldReader) -> ObjectInfo:
    """Read a pydantic model as an object type, or refuse what it cannot publish exactly."""
    _check_model(cls, name)
    fields: list[FieldInfo] = []
    for attr, info in cls.model_fields.items():
        where = f"field {attr!r} of {name}"
        hint = _hint(info, _published(info, attr, where), where)
        fields.append(field(attr, hint, where, True, None if info.is_required() else Absent.OMIT))
    return ObjectInfo(name, "model", cls, unique(fields, name), build=_builder(cls))


def _check_model(cls: type[BaseModel], name: str) -> None:
    if not cls.__pydantic_complete__:
        raise SchemaError(
            f"{name} is not fully defined (an unresolved forward reference?): define the "
            "types it uses, then call model_rebuild()"
        )
    if getattr(cls, "__pydantic_root_model__", False):
        raise SchemaError(f"{name}: RootModel is not supported: use its root type directly")
    own = cls.__get_pydantic_core_schema__.__func__  # type: ignore[attr-defined]
    if own is not BaseModel.__get_pydantic_core_schema__.__func__:  # type: ignore[attr-defined]
        raise SchemaError(
            f"{name}: a custom __get_pydantic_core_schema__ is not supported: mcpkit could not "
            "publish what it accepts"
        )
    decorators = cls.__pydantic_decorators__
    if decorators.validators or decorators.root_validators:
        raise SchemaError(f"{name}: @validator and @root_validator are not supported: "
                          f"{_VALIDATOR_ADVICE}")  # fmt: skip
    for kind, found in (
        ("field_validator", decorators.field_validators),
        ("model_validator", decorators.model_validators),
    ):
        for method, decorator in found.items():
            if decorator.info.mode != "after":
                raise SchemaError(
                    f"{name}: {kind} {method!r} runs in mode {decorator.info.mode!r}, so the "
                    f"published schema could not say what the model accepts: {_VALIDATOR_ADVICE}"
                )
    for kind, names in (
        ("serializer", [*decorators.field_serializers, *decorators.model_serializers]),
        ("computed field", list(decorators.computed_fields)),
    ):
        if names:
            raise SchemaError(
                f"{name}: the {kind} {names[0]!r} is not supported: mcpkit writes a model's "
                "declared fields itself; remove it"
            )
    config = cls.model_config
    if config.get("extra") == "allow":
        raise SchemaError(
            f"{name}: extra='allow' is not supported: the published schema allows no other "
            "members; use 'forbid' or 'ignore'"
        )
    for key in _CHANGING_CONFIG:
        if config.get(key):
            raise SchemaError(
                f"{name}: model_config {key} is not supported: the values bound would not be "
                "the ones the schema validated"
            )


def _published(info: PydanticField, attr: str, where: str) -> str:
    """The one name a field has in input and output: its validation alias must be its
    serialization alias (``alias=`` sets both)."""
    accepted = info.validation_alias if info.validation_alias is not None else attr
    written = info.serialization_alias if info.serialization_alias is not None else attr
    if not isinstance(accepted, str):
        raise SchemaError(f"{where}: AliasPath and AliasChoices are not supported: use alias=")
    if accepted != written:
        raise SchemaError(
            f"{where}: validation_alias and serialization_alias differ, but a tool publishes "
            "one name for input and output: use alias="
        )
    return accepted


def _hint(info: PydanticField, published: str, where: str) -> Any:
    """The field's annotation with its metadata, its documentation and name in one ``Arg``."""
    if info.exclude or getattr(info, "exclude_if", None) is not None:
        raise SchemaError(f"{where}: exclude is not supported: mcpkit writes every field")
    if info.discriminator is not None and not isinstance(info.discriminator, str):
        raise SchemaError(
            f"{where}: a callable Discriminator is not supported: mcpkit tells the members "
            "apart by a Literal field"
        )
    # An after validator refines what was validated, like a field_validator; pydantic runs it
    # when the model is built.  Anywhere else (nested, or on a dataclass) it would not run.
    metadata = [item for item in info.metadata if not isinstance(item, AfterValidator)]
    ours = {"name": published, "title": info.title, "description": info.description}
    args = [item for item in metadata if isinstance(item, Arg)]
    if args:  # one Arg at most; a second is refused by the analyzer
        if args[0].name not in (None, published):  # model_validate knows the alias only
            raise SchemaError(f"{where}: rename a model field with Field(alias=...), not Arg")
        given = {key: getattr(args[0], key) for key in ours}
        for key, value in ours.items():
            if value is not None and given[key] is not None and given[key] != value:
                raise SchemaError(f"{where}: the {key} is given by both Field and Arg")
        merged = {key: value if given[key] is None else given[key] for key, value in ours.items()}
        metadata[metadata.index(args[0])] = _replace(args[0], merged)
    else:
        metadata.append(Arg(name=published, title=info.title, description=info.description))
    return Annotated[(info.annotation, *metadata)]


def _replace(arg: Arg, changes: dict[str, str | None]) -> Arg:
    return dataclasses.replace(arg, **changes)  # type: ignore[arg-type]


def _builder(cls: type[BaseModel]) -> Callable[..., object]:
    validate = cls.model_validate

    def build(**values: object) -> object:
        try:
            return validate(values, strict=True, by_alias=True, by_name=False)
        except ValidationError:
            pass
        # Outside the handler, so nothing chains to pydantic's message: it quotes the input.
        raise ArgumentsInvalid(ArgumentsFailure.CONSTRUCTOR)

    return build


def constraints(item: object, where: str) -> list[tuple[str, object]]:
    """The constraints a pydantic metadata object stands for, or refuse it."""
    if isinstance(item, Strict | FailFast):
        return []  # mcpkit binds strictly and stops at the first failure anyway
    if isinstance(item, AllowInfNan):
        if item.allow_inf_nan:
            raise SchemaError(f"{where}: allow_inf_nan is not supported: JSON has no infinity")
        return []
    if isinstance(item, StringConstraints):
        for flag in ("strip_whitespace", "to_upper", "to_lower", "ascii_only"):
            if getattr(item, flag, None):
                raise SchemaError(
                    f"{where}: StringConstraints {flag} is not supported: the string bound "
                    "would not be the one the schema validated"
                )
        given = {
            "min_length": item.min_length or None,
            "max_length": item.max_length,
            "pattern": item.pattern,
        }
        return [(key, _pattern(value, where)) for key, value in given.items() if value is not None]
    if isinstance(item, PydanticField):
        return _nested_field(item, where)
    if type(item).__name__ == "_PydanticGeneralMetadata":
        found: list[tuple[str, object]] = []
        for key, value in vars(item).items():
            if key == "pattern":
                found.append((key, _pattern(value, where)))
            elif key not in _NEUTRAL and not (key == "allow_inf_nan" and not value):
                raise SchemaError(f"{where}: Field {key} is not supported by Profile 1")
        return found
    advice = f": {_VALIDATOR_ADVICE}" if "Validator" in type(item).__name__ else ""
    raise SchemaError(f"{where}: pydantic {type(item).__name__} is not supported{advice}")


def _pattern(value: object, where: str) -> object:
    if isinstance(value, re.Pattern):
        raise SchemaError(f"{where}: give the pattern as a str (ECMA-262), not a compiled re")
    return value


def _nested_field(item: PydanticField, where: str) -> list[tuple[str, object]]:
    """``Annotated[int, Field(ge=1)]`` inside a container: constraints and documentation only."""
    if item.alias is not None or not item.is_required():  # an alias or a default
        raise SchemaError(
            f"{where}: inside a type, Field() may give constraints, title and description only"
        )
    found: list[tuple[str, object]] = [
        (key, value)
        for key, value in (("title", item.title), ("description", item.description))
        if value is not None
    ]
    for inner in item.metadata:
        found.extend(translate(inner, where))
    return found
