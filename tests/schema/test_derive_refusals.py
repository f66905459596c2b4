"""Types outside the closed family fail at registration, naming the type and where it was found
(TD-10, P1-03, MH-04/07/10)."""

from __future__ import annotations

import collections
import dataclasses
import enum
import sys
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import (  # noqa: UP035
    Annotated,
    Any,
    Generic,
    List,
    Literal,
    NewType,
    Tuple,
    TypedDict,
    TypeVar,
    TypeVarTuple,
    Union,
)

import pytest

from mcpkit.errors import ConfigurationError, SchemaError
from mcpkit.limits import Limits
from mcpkit.schema._typed import Arg, Int8, Width, derive_input, derive_output

T = TypeVar("T")


Ts = TypeVarTuple("Ts")
UserId = NewType("UserId", int)


class Tag(str):
    pass


class Count(int):
    pass


class Bean:
    name: str


class Flags(enum.Flag):
    A = 1


class Mixed(enum.Enum):
    A = 1
    B = "b"


class Empty(enum.Enum):
    pass


class Floaty(enum.Enum):
    A = 1.5


@dataclasses.dataclass(frozen=True)
class Generic1(Generic[T]):
    value: T


@dataclasses.dataclass(frozen=True)
class Variadic(Generic[*Ts]):
    values: tuple[int, ...]


@dataclasses.dataclass
class Mutable:
    x: int


@dataclasses.dataclass(frozen=True)
class Loop:
    again: Loop


@dataclasses.dataclass(frozen=True)
class Left:
    right: Right


@dataclasses.dataclass(frozen=True)
class Right:
    left: Left | None
    back: Left


def field_of(tp: Any, name: str = "x") -> type:
    """A frozen dataclass ``Holder`` with one field of type ``tp``."""
    return dataclasses.make_dataclass("Holder", [(name, tp)], frozen=True)


REFUSED_FIELD_TYPES: list[tuple[Any, str]] = [
    (Any, "typing.Any is not supported"),
    (object, "object is not supported"),
    (set[int], r"set\[int\] is not supported: use list\[T\]"),
    (frozenset[str], r"frozenset\[str\] is not supported"),
    (dict[int, str], r"dict\[int, str\] is not supported: object keys are str"),
    (dict[Literal["a"], str], "object keys are str"),
    (list, "list is not supported: give its type arguments"),
    (dict, "dict is not supported"),
    (tuple, "tuple is not supported"),
    (List, "typing.List is not supported: give its type arguments"),  # noqa: UP006
    (tuple[int, str], r"tuple\[int, str\] is not supported: use tuple\[T, \.\.\.\]"),
    (Tuple[int], r"use tuple\[T, \.\.\.\]"),  # noqa: UP006
    (T, "~T is an unresolved type variable"),
    (list[T], "~T is an unresolved type variable"),  # type: ignore[valid-type]
    (Generic1, "Generic1 is generic: give its type arguments"),
    (Tag, "Tag is not supported: only enums may subclass a scalar"),
    (Count, "Count is not supported"),
    (Bean, "Bean is not supported: use a frozen dataclass or TypedDict"),
    (Sequence[int], "is not supported"),
    (collections.OrderedDict, "OrderedDict is not supported"),
    (Callable[[], int], "is not supported"),
    (bytes, "bytes is not supported"),
    (Mutable, "Mutable is not supported: dataclasses must be frozen"),
    (Variadic[int, str], "only TypeVar parameters are"),
    (Generic1[Annotated[int, []]], "has unhashable type arguments"),
    (UserId, "is not supported"),
    (type(None), "NoneType is not supported"),
    (Union[int, float], "int and float are both JSON numbers"),  # noqa: UP007
    (int | list[int] | None, "a union's members are scalars of distinct JSON types"),
    (Flags, "enum.Flag"),
    (Literal[1.5], "Literal members are str, int, bool"),
    (Annotated[int, "doc"], "Annotated metadata 'doc' is not supported"),
    (Annotated[int, Arg(), Arg()], "one Arg and one Width at most"),
    (Annotated[str, Width(8)], "str cannot take a Width"),
    (Annotated[str, Arg(minimum=1)], "str cannot take Arg minimum/maximum"),
    (Annotated[list[int], Arg(maximum=1)], "Width and Arg bounds apply to numbers only"),
    (Annotated[Int8, Arg(maximum=128)], "Arg bounds exceed the range of int"),
    (Annotated[float, Arg(minimum=-(10**309))], "Arg bounds exceed the range of float"),
    (list[Annotated[int, Arg(name="y")]], "Arg name and header belong on a field itself"),
    (list[Annotated[str, Arg(header="H")]], "Arg name and header belong on a field itself"),
]


@pytest.mark.parametrize(("tp", "message"), REFUSED_FIELD_TYPES, ids=lambda v: repr(v)[:30])
def test_unsupported_field_types_are_refused_with_the_type_and_place_TD_10(
    tp: Any, message: str
) -> None:
    with pytest.raises(SchemaError, match=f"^field 'x' of Holder: .*{message}"):
        derive_input(field_of(tp))
    with pytest.raises(SchemaError, match=message):
        derive_output(list[tp])  # the same refusal away from a property


@pytest.mark.parametrize(
    ("tp", "message"),
    [
        (Mixed, "Mixed: enum values must be all str or all int"),
        (Empty, "Empty: an enum needs at least one member"),
        (Floaty, "Floaty: enum values must be all str or all int"),
    ],
)
def test_unsupported_enums_TD_10(tp: Any, message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        derive_output(tp)


def test_the_message_names_the_field_and_owner_TD_10() -> None:
    @dataclasses.dataclass(frozen=True)
    class SearchArgs:
        query: str
        x: Any

    with pytest.raises(SchemaError) as caught:
        derive_input(SearchArgs)
    assert str(caught.value) == (
        "field 'x' of test_the_message_names_the_field_and_owner_TD_10.SearchArgs: "
        "typing.Any is not supported"
    )


def test_root_refusals_name_the_root() -> None:
    with pytest.raises(SchemaError, match=r"^the root type: typing.Any is not supported$"):
        derive_output(Any)
    with pytest.raises(SchemaError, match=r"^the root type: Mutable is not supported"):
        derive_input(Mutable)


def test_unsafe_recursion_is_refused_TD_10() -> None:
    with pytest.raises(SchemaError, match="Loop can only reach itself through required fields"):
        derive_input(Loop)
    with pytest.raises(SchemaError, match="Left can only reach itself through required fields"):
        derive_output(list[Left])


@dataclasses.dataclass(frozen=True)
class ViaOptional:
    next: ViaOptional | None


@dataclasses.dataclass(frozen=True)
class ViaList:
    next: list[ViaList]


@dataclasses.dataclass(frozen=True)
class ViaDict:
    next: dict[str, ViaDict]


@dataclasses.dataclass(frozen=True)
class ViaTuple:
    next: tuple[ViaTuple, ...]


class ViaTypedDict(TypedDict):
    next: list[ViaTypedDict]


@pytest.mark.parametrize("tp", [ViaOptional, ViaList, ViaDict, ViaTuple, ViaTypedDict])
def test_recursion_through_optional_or_containers_is_allowed(tp: Any) -> None:
    assert derive_output(tp).document["type"] == "object"


@dataclasses.dataclass(frozen=True)
class Chain:
    value: int
    nxt: Chain | None = None


@dataclasses.dataclass(frozen=True)
class Nested:
    inner: Annotated[str, Arg(header="Inner")]


@dataclasses.dataclass(frozen=True)
class Outer:
    nested: Nested


def test_recursion_through_a_default_is_allowed() -> None:
    assert derive_input(Chain).document["properties"] == {
        "value": {"type": "integer"},
        "nxt": {"$ref": "#"},
    }


def test_dataclass_shapes_binding_cannot_construct() -> None:
    @dataclasses.dataclass(frozen=True)
    class Computed:
        x: int
        y: int = dataclasses.field(init=False, default=0)

    with pytest.raises(SchemaError, match=r"field 'y' of .*Computed: init=False"):
        derive_input(Computed)

    @dataclasses.dataclass(frozen=True)
    class WithInitVar:
        x: int
        seed: dataclasses.InitVar[int]

    with pytest.raises(SchemaError, match=r"field 'seed' of .*WithInitVar: InitVar"):
        derive_input(WithInitVar)


def test_published_names_must_be_unique() -> None:
    @dataclasses.dataclass(frozen=True)
    class Clash:
        a: int
        b: Annotated[int, Arg(name="a")]

    with pytest.raises(SchemaError, match="the property name 'a' is used twice"):
        derive_input(Clash)


def test_unresolvable_annotations_are_refused() -> None:
    @dataclasses.dataclass(frozen=True)
    class Forward:
        x: Missing  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(SchemaError, match=r"cannot resolve the annotations of .*Forward"):
        derive_input(Forward)


def test_function_parameter_refusals() -> None:
    def unreadable(a: int) -> None: ...

    unreadable.__signature__ = 5  # type: ignore[attr-defined]
    with pytest.raises(SchemaError, match=r"cannot read the parameters of .*unreadable"):
        derive_input(unreadable)

    def unhashable(a: Annotated[int, []]) -> None: ...

    with pytest.raises(SchemaError, match=r"parameter 'a' .*Annotated metadata \[\]"):
        derive_input(unhashable, excluded={Bean})

    def positional(a: int, /) -> None: ...
    def star(*args: int) -> None: ...
    def kwargs(**kw: int) -> None: ...
    def bare(a) -> None: ...  # type: ignore[no-untyped-def]
    def anything(a: Any) -> None: ...

    for fn, message in [
        (positional, "parameter 'a' of .*positional: only named parameters"),
        (star, "parameter 'args' of .*star: only named parameters"),
        (kwargs, "parameter 'kw' of .*kwargs: only named parameters"),
        (bare, "parameter 'a' of .*bare: a type annotation is required"),
        (anything, "^parameter 'a' of .*anything: typing.Any is not supported$"),
    ]:
        with pytest.raises(SchemaError, match=message):
            derive_input(fn)


# --- mirrored headers (MH-04, MH-07, MH-10) ------------------------------------------------------


def test_header_refusals_MH_04_MH_10() -> None:
    with pytest.raises(
        SchemaError, match=r"field 'inner' of Nested: .*only applies to a tool's own"
    ):
        derive_input(Outer)
    for tp in (list[str], Decimal, float, Literal["a", 1], dict[str, str]):
        with pytest.raises(SchemaError, match="a mirrored header needs a str, bool or int"):
            derive_input(field_of(Annotated[tp, Arg(header="H")]))

    @dataclasses.dataclass(frozen=True)
    class Twice:
        a: Annotated[str, Arg(header="Tenant")]
        b: Annotated[str, Arg(header="tenant")]

    with pytest.raises(SchemaError, match="header 'tenant' is declared twice"):
        derive_input(Twice)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"header": "Mcp Param"}, "RFC 9110 token"),
        ({"header": ""}, "RFC 9110 token"),
        ({"name": ""}, "Arg.name must not be empty"),
        ({"title": 3}, "Arg.title must be a str"),
        ({"description": "\ud800"}, "Arg.description contains an unpaired surrogate"),
        ({"minimum": True}, "Arg.minimum must be an int or a Decimal"),
        ({"maximum": 1.5}, "Arg.maximum must be an int or a Decimal"),
        ({"minimum": Decimal("NaN")}, "Arg.minimum must be finite"),
        ({"minimum": 2, "maximum": 1}, "must not exceed"),
    ],
)
def test_arg_validates_itself_MH_07(options: dict[str, Any], message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        Arg(**options)


def test_width_accepts_only_the_four_widths() -> None:
    for bits in (7, 128, True, "8"):
        with pytest.raises(SchemaError, match=r"Width.bits must be 8, 16, 32 or 64"):
            Width(bits)  # type: ignore[arg-type]


# --- bounded analysis ---------------------------------------------------------------------------


def test_type_nesting_deeper_than_the_schema_depth_is_refused() -> None:
    deep: Any = int
    for _ in range(64):
        deep = list[deep]
    with pytest.raises(SchemaError, match="the type nests deeper than 64 levels"):
        derive_output(deep)


def test_deep_derivation_uses_no_recursion() -> None:
    deep: Any = int
    for _ in range(250):
        deep = list[deep]
    limits = Limits(max_schema_depth=256)
    depth = len(_frames())
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + 60)
    try:
        model = derive_output(deep, limits=limits)
    finally:
        sys.setrecursionlimit(old)
    assert model.document["type"] == "array"


def _frames() -> list[object]:
    frame, frames = sys._getframe(), []
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back  # type: ignore[assignment]
    return frames


def test_named_types_are_capped_by_max_schema_nodes() -> None:
    previous: Any = int
    for index in range(20):
        previous = dataclasses.make_dataclass(f"D{index}", [("x", previous)], frozen=True)
    with pytest.raises(SchemaError, match="reaches more than 10 named types"):
        derive_output(previous, limits=Limits(max_schema_nodes=10))


def test_derived_documents_over_the_schema_limits_are_refused_naming_the_type() -> None:
    deep: Any = int
    for _ in range(63):
        deep = list[deep]
    holder = field_of(deep)
    with pytest.raises(SchemaError, match=r"^Holder: the derived schema is refused: .*deeper"):
        derive_input(holder)
    assert issubclass(SchemaError, ConfigurationError)
