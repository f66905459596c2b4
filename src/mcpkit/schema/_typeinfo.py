"""The typed layer's data model: ``Arg`` and ``Width`` metadata, and the frozen TypeInfo tree.

``mcpkit.schema._analyze`` builds a :class:`TypeModel` from Python annotations at registration;
derivation (``_derive``), binding (``_bind``) and output conversion (``_output``) only read it.
Named types (dataclasses, pydantic models, TypedDicts, enums) live once in ``TypeModel.named``
and are used by index through :class:`RefInfo`, so a recursive type is a finite, acyclic
structure.  Its readers import this module as ``ti`` and write ``ti.RefInfo``: one import for
the whole node family.
"""

from __future__ import annotations

import enum
import sys
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Final, Literal, TypeAlias

from mcpkit._grammar import TOKEN
from mcpkit.errors import InvalidValueError, SchemaError
from mcpkit.json import string

__all__ = [
    "FORMATS", "JSON_TYPES", "MAX_FLOAT", "Absent", "Arg", "ArrayInfo", "EnumInfo", "FieldInfo",
    "Int8", "Int16", "Int32", "Int64", "LiteralInfo", "MapInfo", "NullableInfo", "ObjectInfo",
    "ObjectUnionInfo", "RefInfo", "ScalarInfo", "ScalarKind", "ScalarUnionInfo", "TagInfo",
    "TypeInfo", "TypeModel", "Width", "check_text", "is_model", "is_typeddict",
]  # fmt: skip

MAX_FLOAT: Final = Decimal("1.7976931348623157E+308")
"""The largest finite float, published as the bound of every derived ``float`` schema."""


ScalarKind: TypeAlias = Literal[
    "str", "bool", "int", "float", "decimal", "datetime", "date", "uuid"
]

JSON_TYPES: Final[Mapping[str, str]] = {
    "str": "string", "bool": "boolean", "int": "integer", "float": "number",
    "decimal": "number", "datetime": "string", "date": "string", "uuid": "string",
}  # fmt: skip
"""The JSON type each scalar kind is written as."""

FORMATS: Final[Mapping[str, str]] = {"datetime": "date-time", "date": "date", "uuid": "uuid"}
"""The kinds written as formatted strings, with their ``format``: the binder checks them."""


def is_model(cls: type) -> bool:
    """Whether ``cls`` is a pydantic model.  pydantic is never imported for this: a model class
    can only exist once ``pydantic.main`` has been imported by its author."""
    base = getattr(sys.modules.get("pydantic.main"), "BaseModel", None)
    return base is not None and issubclass(cls, base)


def is_typeddict(cls: type) -> bool:
    """``typing.is_typeddict``, plus typing_extensions' TypedDict when it is loaded (pydantic
    asks for that one on Python 3.11)."""
    extensions = sys.modules.get("typing_extensions")
    return typing.is_typeddict(cls) or (extensions is not None and extensions.is_typeddict(cls))


def check_text(owner: str, value: object) -> None:
    """Refuse developer-supplied text that is not a str or has an unpaired surrogate."""
    if not isinstance(value, str):
        raise SchemaError(f"{owner} must be a str")
    try:
        string(value)
    except InvalidValueError:
        raise SchemaError(f"{owner} contains an unpaired surrogate") from None


@dataclass(frozen=True, slots=True, kw_only=True)
class Arg:
    """``Annotated[T, Arg(...)]``: a published property name, documentation, bounds, a header.

    ``name`` and ``header`` (the ``x-mcp-header`` suffix) belong to a field or parameter;
    ``minimum``/``maximum`` to a number; ``min_length``/``max_length`` (code points) and
    ``pattern`` (ECMA-262, searched: anchor it with ``^...$``) to a ``str``.  Misplaced
    metadata fails at registration.
    """

    name: str | None = None
    title: str | None = None
    description: str | None = None
    minimum: int | Decimal | None = None
    maximum: int | Decimal | None = None
    header: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None

    def __post_init__(self) -> None:
        for label in ("name", "title", "description", "header", "pattern"):
            if getattr(self, label) is not None:
                check_text(f"Arg.{label}", getattr(self, label))
        if self.name == "":
            raise SchemaError("Arg.name must not be empty")
        if self.header is not None and TOKEN.fullmatch(self.header) is None:
            raise SchemaError("Arg.header must be a non-empty RFC 9110 token such as 'Tenant'")
        for label in ("minimum", "maximum"):
            bound = getattr(self, label)
            if bound is None:
                continue
            if isinstance(bound, bool) or not isinstance(bound, int | Decimal):
                raise SchemaError(f"Arg.{label} must be an int or a Decimal")
            if isinstance(bound, Decimal) and not bound.is_finite():
                raise SchemaError(f"Arg.{label} must be finite")
        if self.minimum is not None and self.maximum is not None and self.minimum > self.maximum:
            raise SchemaError("Arg.minimum must not exceed Arg.maximum")
        for label in ("min_length", "max_length"):
            length = getattr(self, label)
            if length is not None and (type(length) is not int or length < 0):
                raise SchemaError(f"Arg.{label} must be a non-negative int")
        if (
            self.min_length is not None
            and self.max_length is not None
            and self.min_length > self.max_length
        ):
            raise SchemaError("Arg.min_length must not exceed Arg.max_length")


@dataclass(frozen=True, slots=True)
class Width:
    """A fixed-width integer: the derived schema and binding use its two's complement range."""

    bits: int

    def __post_init__(self) -> None:
        if type(self.bits) is not int or self.bits not in (8, 16, 32, 64):
            raise SchemaError("Width.bits must be 8, 16, 32 or 64")

    @property
    def minimum(self) -> int:
        return -(1 << (self.bits - 1))

    @property
    def maximum(self) -> int:
        return (1 << (self.bits - 1)) - 1


Int8: TypeAlias = Annotated[int, Width(8)]
Int16: TypeAlias = Annotated[int, Width(16)]
Int32: TypeAlias = Annotated[int, Width(32)]
Int64: TypeAlias = Annotated[int, Width(64)]


@dataclass(frozen=True, slots=True, kw_only=True)
class _Doc:
    title: str | None = None
    description: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ScalarInfo(_Doc):
    """``str``, ``bool``, ``int``, ``float``, ``Decimal``, or a formatted string (``datetime``,
    ``date``, ``UUID``); numbers may carry bounds, a ``str`` lengths and a pattern."""

    kind: ScalarKind
    minimum: int | Decimal | None = None
    maximum: int | Decimal | None = None
    width: Width | None = None  # fixed-width int
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class LiteralInfo(_Doc):
    values: tuple[str | int | bool, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class NullableInfo(_Doc):
    """``T | None`` away from a property: null is allowed."""

    inner: TypeInfo


@dataclass(frozen=True, slots=True, kw_only=True)
class ArrayInfo(_Doc):
    item: TypeInfo
    as_tuple: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class MapInfo(_Doc):
    value: TypeInfo


@dataclass(frozen=True, slots=True, kw_only=True)
class RefInfo(_Doc):
    """A use of the named type ``TypeModel.named[index]``."""

    index: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ScalarUnionInfo(_Doc):
    """``str | int``: scalars of distinct JSON types (integer and number overlap), bound by the
    value's JSON type."""

    arms: tuple[ScalarInfo, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ObjectUnionInfo(_Doc):
    """``Cat | Dog``: object types told apart by a required ``Literal`` field,
    ``TypeModel.tags[tag]``, which decides the arm a value binds to."""

    arms: tuple[RefInfo, ...]
    tag: int


TypeInfo: TypeAlias = (
    ScalarInfo | LiteralInfo | NullableInfo | ArrayInfo | MapInfo | RefInfo | ScalarUnionInfo
    | ObjectUnionInfo
)  # fmt: skip


class Absent(enum.Enum):
    """What binding does with an optional property that is absent."""

    OMIT = "omit"  # leave it out: the constructor applies its default, or a TypedDict key stays out
    NONE = "none"  # pass None (``T | None`` without a default)
    DEFAULT = "default"  # pass FieldInfo.default (a function parameter's default)


@dataclass(frozen=True, slots=True)
class FieldInfo:
    attr: str  # Python name: dataclass field, TypedDict key or parameter
    name: str  # published property name
    type: TypeInfo
    required: bool
    absent: Absent
    default: object = None
    header: str | None = None
    none_is_absent: bool = False  # ``T | None`` on the property: None is written as absent


@dataclass(frozen=True, slots=True, eq=False)
class ObjectInfo:
    label: str
    kind: Literal["dataclass", "model", "typeddict", "parameters"]
    target: Callable[..., object]  # the class (or function) itself
    fields: tuple[FieldInfo, ...]
    # A model's constructor from its published names (``_pydantic``); dataclasses use target.
    build: Callable[..., object] | None = None


@dataclass(frozen=True, slots=True, eq=False)
class EnumInfo:
    label: str
    cls: type[enum.Enum]
    json_type: Literal["string", "integer"]
    values: tuple[str | int, ...]
    by_value: Mapping[object, enum.Enum]


@dataclass(frozen=True, slots=True, eq=False)
class TagInfo:
    """The field that tells an object union's arms apart: its published name, and per arm the
    field's attribute and ``Literal`` members (disjoint under JSON equality)."""

    name: str
    attrs: tuple[str, ...]
    values: tuple[tuple[str | int | bool, ...], ...]

    def arm_of(self) -> Callable[[object], int]:
        """A lookup from a JSON value to the arm whose member it equals, or -1: one table per
        JSON kind, as ``True == 1`` and ``1.0 == 1``."""
        tables: dict[type, dict[object, int]] = {str: {}, int: {}, bool: {}}
        for arm, members in enumerate(self.values):
            for member in members:
                tables[type(member)][member] = arm
        strings, numbers, booleans = tables[str], tables[int], tables[bool]

        def find(value: object) -> int:
            if value is True or value is False:
                return booleans.get(value, -1)
            if isinstance(value, str):
                return strings.get(value, -1)
            if isinstance(value, Decimal):
                return numbers.get(value, -1) if value.is_finite() else -1
            if isinstance(value, int):
                return numbers.get(value, -1)
            return -1

        return find


@dataclass(frozen=True, slots=True, eq=False)
class TypeModel:
    """An analysed type: the root and every named type it reaches, in discovery order."""

    root: TypeInfo
    named: tuple[ObjectInfo | EnumInfo, ...]
    refcounts: tuple[int, ...]  # uses of each named type
    recursive: frozenset[int]  # named types that reach themselves
    tags: tuple[TagInfo, ...] = ()  # one per object union
