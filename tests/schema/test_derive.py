"""Schema derivation from Python types: exact documents for every family member (TD-01, TD-08,
TD-09, MH-01), deterministic bytes, ``$defs`` naming and recursion."""

from __future__ import annotations

import dataclasses
import enum
import os
import subprocess
import sys
from decimal import Decimal
from typing import (
    Annotated,
    Any,
    Generic,
    Literal,
    NotRequired,
    Optional,
    Required,
    TypedDict,
    TypeVar,
)

import pytest

from mcpkit.errors import SchemaError
from mcpkit.json import encode
from mcpkit.schema._typed import (
    Arg,
    Int8,
    Int16,
    Int32,
    Int64,
    derive_input,
    derive_output,
)

T = TypeVar("T")
MAX = Decimal("1.7976931348623157E+308")
FLOAT = {"type": "number", "minimum": -MAX, "maximum": MAX}


def out_doc(tp: object, **options: Any) -> bytes:
    return encode(derive_output(tp, **options).document)


def in_doc(tp: object, **options: Any) -> bytes:
    return encode(derive_input(tp, **options).document)


def obj(properties: dict[str, Any], required: list[str] | None = None, **extra: Any) -> Any:
    doc: dict[str, Any] = {"type": "object"}
    if properties:
        doc["properties"] = properties
    if required:
        doc["required"] = required
    doc["additionalProperties"] = False
    doc.update(extra)
    return doc


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass(frozen=True)
class Item:
    sku: str
    qty: int = 0


@dataclasses.dataclass(frozen=True)
class Box(Generic[T]):
    value: T
    values: list[T]
    label: str = ""


@dataclasses.dataclass(frozen=True)
class Scalars:
    text: str
    flag: bool
    count: int
    ratio: float
    price: Decimal


@dataclasses.dataclass(frozen=True)
class Tree:
    name: str
    children: list[Tree]
    parent: Tree | None = None


@dataclasses.dataclass(frozen=True)
class Ping:
    pong: Pong | None


@dataclasses.dataclass(frozen=True)
class Pong:
    ping: Ping


@dataclasses.dataclass(frozen=True)
class Holder:
    ping: Ping


class Movie(TypedDict):
    title: str
    year: NotRequired[int]
    rating: float | None


class Partial(TypedDict, total=False):
    a: int
    b: Annotated[str, Arg(name="B")]
    c: Required[bool]


# --- scalars and their bounds --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tp", "expected"),
    [
        (bool, {"type": "boolean"}),
        (int, {"type": "integer"}),
        (float, FLOAT),
        (Decimal, {"type": "number"}),
        (Int8, {"type": "integer", "minimum": -128, "maximum": 127}),
        (Int16, {"type": "integer", "minimum": -32768, "maximum": 32767}),
        (Int32, {"type": "integer", "minimum": -(2**31), "maximum": 2**31 - 1}),
        (Int64, {"type": "integer", "minimum": -(2**63), "maximum": 2**63 - 1}),
        (
            Annotated[int, Arg(minimum=0, maximum=10)],
            {"type": "integer", "minimum": 0, "maximum": 10},
        ),
        (Annotated[Int8, Arg(minimum=0)], {"type": "integer", "minimum": 0, "maximum": 127}),
        (
            Annotated[Decimal, Arg(minimum=Decimal("0.01"))],
            {"type": "number", "minimum": Decimal("0.01")},
        ),
        (
            Annotated[float, Arg(maximum=1)],
            {"type": "number", "minimum": -MAX, "maximum": 1},
        ),
        (
            Annotated[int, Arg(title="Count", description="How many")],
            {"type": "integer", "title": "Count", "description": "How many"},
        ),
    ],
    ids=lambda value: repr(value)[:40],
)
def test_scalar_documents_TD_01(tp: object, expected: Any) -> None:
    assert out_doc(tp) == encode(expected)


def test_float_bounds_are_the_finite_float_range_as_decimals_TD_01() -> None:
    assert out_doc(float) == b'{"type":"number","minimum":-1.7976931348623157E+308,' + (
        b'"maximum":1.7976931348623157E+308}'
    )


def test_enums_and_literals_TD_01() -> None:
    assert out_doc(Color) == encode({"type": "string", "enum": ["red", "blue"]})
    assert out_doc(Level) == encode({"type": "integer", "enum": [1, 2]})
    assert out_doc(Literal["a", "b"]) == encode({"type": "string", "enum": ["a", "b"]})
    assert out_doc(Literal[1, 2]) == encode({"type": "integer", "enum": [1, 2]})
    assert out_doc(Literal[True]) == encode({"type": "boolean", "enum": [True]})
    assert out_doc(Literal["a", 1, False]) == encode({"enum": ["a", 1, False]})


# --- containers and null -------------------------------------------------------------------------


def test_containers_TD_01() -> None:
    assert out_doc(list[int]) == encode({"type": "array", "items": {"type": "integer"}})
    assert out_doc(tuple[str, ...]) == encode({"type": "array", "items": {"type": "string"}})
    assert out_doc(dict[str, bool]) == encode(
        {"type": "object", "additionalProperties": {"type": "boolean"}}
    )
    assert out_doc(list[dict[str, list[Decimal]]]) == encode(
        {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": {"type": "array", "items": {"type": "number"}},
            },
        }
    )
    documented = Annotated[list[int], Arg(description="ids")]
    assert out_doc(documented) == encode(
        {"type": "array", "items": {"type": "integer"}, "description": "ids"}
    )


def test_none_away_from_a_property_allows_null_TD_01() -> None:
    assert out_doc(int | None) == encode({"type": ["integer", "null"]})
    assert out_doc(Optional[list[str]]) == encode(  # noqa: UP045 - the typing spelling is tested
        {"type": ["array", "null"], "items": {"type": "string"}}
    )
    assert out_doc(list[Color | None]) == encode(
        {
            "type": "array",
            "items": {"anyOf": [{"type": "string", "enum": ["red", "blue"]}, {"type": "null"}]},
        }
    )
    assert out_doc(list[Literal[1] | None]) == encode(
        {"type": "array", "items": {"anyOf": [{"type": "integer", "enum": [1]}, {"type": "null"}]}}
    )
    item = obj({"sku": {"type": "string"}, "qty": {"type": "integer"}}, ["sku"])
    item["type"] = ["object", "null"]
    assert out_doc(list[Item | None]) == encode({"type": "array", "items": item})


# --- objects -------------------------------------------------------------------------------------


def test_dataclass_fields_in_declaration_order_TD_01() -> None:
    expected = obj(
        {
            "text": {"type": "string"},
            "flag": {"type": "boolean"},
            "count": {"type": "integer"},
            "ratio": FLOAT,
            "price": {"type": "number"},
        },
        ["text", "flag", "count", "ratio", "price"],
    )
    assert in_doc(Scalars) == encode(expected)
    assert out_doc(Scalars) == encode(expected)


def test_none_on_a_field_makes_it_optional_not_nullable_TD_01() -> None:
    @dataclasses.dataclass(frozen=True)
    class Query:
        text: Annotated[str, Arg(name="q", title="Query", description="Free text")]
        limit: int | None
        page: Annotated[int | None, Arg(minimum=1)] = None
        size: Optional[Annotated[int, Arg(maximum=50)]] = 10  # noqa: UP045

    expected = obj(
        {
            "q": {"type": "string", "title": "Query", "description": "Free text"},
            "limit": {"type": "integer"},
            "page": {"type": "integer", "minimum": 1},
            "size": {"type": "integer", "maximum": 50},
        },
        ["q"],
    )
    assert in_doc(Query) == encode(expected)


def test_nested_dataclass_used_once_is_inline() -> None:
    @dataclasses.dataclass(frozen=True)
    class Order:
        item: Annotated[Item, Arg(description="what")]

    item = obj({"sku": {"type": "string"}, "qty": {"type": "integer"}}, ["sku"])
    assert in_doc(Order) == encode(obj({"item": {**item, "description": "what"}}, ["item"]))


def test_named_types_used_twice_go_to_sorted_defs() -> None:
    @dataclasses.dataclass(frozen=True)
    class Pair:
        left: Item
        right: Item
        colors: list[Color]
        color: Color

    item = obj({"sku": {"type": "string"}, "qty": {"type": "integer"}}, ["sku"])
    expected = obj(
        {
            "left": {"$ref": "#/$defs/Item"},
            "right": {"$ref": "#/$defs/Item"},
            "colors": {"type": "array", "items": {"$ref": "#/$defs/Color"}},
            "color": {"$ref": "#/$defs/Color"},
        },
        ["left", "right", "colors", "color"],
    )
    expected["$defs"] = {"Color": {"type": "string", "enum": ["red", "blue"]}, "Item": item}
    assert in_doc(Pair) == encode(expected)


def test_generic_dataclasses_are_named_with_their_arguments_TD_01() -> None:
    @dataclasses.dataclass(frozen=True)
    class Both:
        a: Box[int]
        b: Box[int]
        c: Box[list[str]]
        d: Box[list[str]]

    document = derive_input(Both).document
    defs = document["$defs"]
    assert isinstance(defs, dict)
    assert list(defs) == ["Box-int", "Box-list-str"]
    assert encode(defs["Box-int"]) == encode(
        obj(
            {
                "value": {"type": "integer"},
                "values": {"type": "array", "items": {"type": "integer"}},
                "label": {"type": "string"},
            },
            ["value", "values"],
        )
    )


def test_generic_names_are_bounded_and_collisions_numbered() -> None:
    deep = list[list[list[list[list[int]]]]]
    bounded = Annotated[int, Arg(minimum=0)]
    kinds = [Box[int | None], Box[deep], Box[int], Box[bounded]]
    fields = [(f"f{index}", kind) for index, kind in enumerate(kinds * 2)]
    many = dataclasses.make_dataclass("Many", fields, frozen=True)
    defs = derive_input(many).document["$defs"]
    assert isinstance(defs, dict)
    assert list(defs) == [
        "Box-Union-int-None",
        "Box-int",
        "Box-int-2",
        "Box-list-list-list-list",  # type arguments are named four levels deep
    ]
    assert defs["Box-int-2"]["properties"]["values"] == {  # type: ignore[index, call-overload]
        "type": "array",
        "items": {"type": "integer", "minimum": 0},
    }


def test_distinct_types_with_one_name_get_numbered_names() -> None:
    def make() -> type:
        @dataclasses.dataclass(frozen=True)
        class Thing:
            x: int

        return Thing

    first, second = make(), make()
    fields = [("a", first), ("b", first), ("c", second), ("d", second)]
    four = dataclasses.make_dataclass("Four", fields, frozen=True)
    document = derive_input(four).document
    name = "#/$defs/test_distinct_types_with_one_name_get_numbered_names.make.Thing"
    assert document["properties"] == {
        "a": {"$ref": name},
        "b": {"$ref": name},
        "c": {"$ref": name + "-2"},
        "d": {"$ref": name + "-2"},
    }


def test_typeddict_required_and_optional_keys_TD_01() -> None:
    expected = obj(
        {"title": {"type": "string"}, "year": {"type": "integer"}, "rating": FLOAT},
        ["title"],
    )
    assert in_doc(Movie) == encode(expected)
    expected = obj(
        {"a": {"type": "integer"}, "B": {"type": "string"}, "c": {"type": "boolean"}}, ["c"]
    )
    assert in_doc(Partial) == encode(expected)


def test_dict_root_TD_08() -> None:
    assert in_doc(dict[str, Item]) == encode(
        {
            "type": "object",
            "additionalProperties": obj(
                {"sku": {"type": "string"}, "qty": {"type": "integer"}}, ["sku"]
            ),
        }
    )


# --- function parameters (TD-08) ----------------------------------------------------------------


class Context:
    """A framework marker type: parameters annotated with it are not tool arguments."""


class Inventory:
    def search(
        self,
        query: Annotated[str, Arg(name="q", description="Free text")],
        ctx: Context,
        limit: int | None = None,
        *,
        sort: Literal["asc", "desc"] = "asc",
    ) -> None:
        raise NotImplementedError


def test_function_parameters_form_the_root_TD_08() -> None:
    expected = obj(
        {
            "q": {"type": "string", "description": "Free text"},
            "limit": {"type": "integer"},
            "sort": {"type": "string", "enum": ["asc", "desc"]},
        },
        ["q"],
    )
    assert in_doc(Inventory.search, excluded={Context}) == encode(expected)
    assert in_doc(Inventory().search, excluded={Context}) == encode(expected)


def test_a_function_without_arguments_accepts_only_an_empty_object_P1_21() -> None:
    def ping() -> None:
        raise NotImplementedError

    assert in_doc(ping) == b'{"type":"object","additionalProperties":false}'


# --- mirrored headers (MH-01, MH-04) ------------------------------------------------------------


def test_header_metadata_publishes_x_mcp_header_MH_01() -> None:
    @dataclasses.dataclass(frozen=True)
    class Mirrored:
        tenant: Annotated[str, Arg(header="Tenant")]
        dry: Annotated[bool, Arg(header="Dry-Run")] = False
        shard: Annotated[Int64 | None, Arg(header="Shard")] = None
        mode: Annotated[Literal["a", "b"], Arg(header="Mode")] = "a"
        color: Annotated[Color, Arg(header="Color")] = Color.RED

    model = derive_input(Mirrored)
    properties = model.document["properties"]
    assert isinstance(properties, dict)
    assert properties["tenant"] == {"type": "string", "x-mcp-header": "Tenant"}
    assert encode(properties["shard"]) == encode(
        {"type": "integer", "minimum": -(2**63), "maximum": 2**63 - 1, "x-mcp-header": "Shard"}
    )
    assert properties["color"] == {
        "type": "string",
        "enum": ["red", "blue"],
        "x-mcp-header": "Color",
    }
    assert [(h.suffix, h.path, h.type) for h in model.schema.headers] == [
        ("Color", ("color",), "string"),
        ("Dry-Run", ("dry",), "boolean"),
        ("Mode", ("mode",), "string"),
        ("Shard", ("shard",), "integer"),
        ("Tenant", ("tenant",), "string"),
    ]


def test_header_metadata_is_ignored_on_outputs() -> None:
    @dataclasses.dataclass(frozen=True)
    class Echo:
        tenant: Annotated[str, Arg(header="Tenant")]

    assert out_doc(Echo) == encode(obj({"tenant": {"type": "string"}}, ["tenant"]))


# --- recursion -----------------------------------------------------------------------------------


def test_a_recursive_root_refers_to_itself_with_hash() -> None:
    expected = obj(
        {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#"}},
            "parent": {"$ref": "#"},
        },
        ["name", "children"],
    )
    assert in_doc(Tree) == encode(expected)


def test_recursion_below_the_root_goes_to_defs() -> None:
    tree = obj(
        {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}},
            "parent": {"$ref": "#/$defs/Tree"},
        },
        ["name", "children"],
    )
    assert out_doc(list[Tree]) == encode(
        {"type": "array", "items": {"$ref": "#/$defs/Tree"}, "$defs": {"Tree": tree}}
    )


def test_mutual_recursion_through_an_optional_field() -> None:
    document = derive_input(Holder).document
    assert encode(document) == encode(
        obj(
            {"ping": {"$ref": "#/$defs/Ping"}},
            ["ping"],
            **{
                "$defs": {
                    "Ping": obj({"pong": {"$ref": "#/$defs/Pong"}}),
                    "Pong": obj({"ping": {"$ref": "#/$defs/Ping"}}, ["ping"]),
                }
            },
        )
    )


# --- output roots (TD-09) and determinism --------------------------------------------------------


def test_output_roots_may_be_any_member_except_a_bare_str_TD_09() -> None:
    for tp in (str, Annotated[str, Arg(description="x")]):
        with pytest.raises(SchemaError, match="bare str output is ambiguous with text content"):
            derive_output(tp)
    assert out_doc(str | None) == encode({"type": ["string", "null"]})
    assert out_doc(Literal["x"]) == encode({"type": "string", "enum": ["x"]})


def test_object_root_outputs_for_2025_revisions() -> None:
    for tp in (list[int], int, Item | None, Color):
        with pytest.raises(SchemaError, match="must be an object on 2025 revisions"):
            derive_output(tp, object_root=True)
    assert derive_output(Item, object_root=True).document["type"] == "object"
    assert derive_output(dict[str, int], object_root=True).document["type"] == "object"


@pytest.mark.parametrize("tp", [list[int], int, Item | None, Color, Literal["a"], Decimal])
def test_input_roots_must_be_objects_TD_08(tp: object) -> None:
    with pytest.raises(SchemaError, match="cannot be a tool input"):
        derive_input(tp)


def test_derivation_is_deterministic() -> None:
    for tp in (Tree, Holder, Movie, Scalars, dict[str, list[Tree]]):
        assert in_doc(tp) == in_doc(tp)
    assert out_doc(list[Box[Tree]]) == out_doc(list[Box[Tree]])


def test_derivation_is_byte_identical_across_hash_seeds() -> None:
    here = os.path.dirname(__file__)
    script = (
        f"import sys; sys.path.insert(0, {here!r}); import test_derive as t; "
        "sys.stdout.buffer.write(t.in_doc(t.Holder) + t.out_doc(list[t.Box[t.Tree]]))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert outputs == {in_doc(Holder) + out_doc(list[Box[Tree]])}
