"""pydantic models in the typed layer (docs/design/schema.md): derived from ``model_fields`` with
their ``Field`` constraints and aliases, bound strictly by mcpkit and built by ``model_validate(...,
strict=True)``, written by mcpkit's own output path; what a model cannot publish exactly is
refused at registration, saying what to change.  pydantic stays an optional extra: nothing in
mcpkit imports it until a model is met."""

from __future__ import annotations

import datetime as dt
import re
import subprocess
import sys
import uuid
import warnings
from decimal import Decimal
from typing import Annotated, Any, Generic, Literal, Optional, TypeVar

import pydantic
import pytest
from pydantic import (
    AfterValidator,
    AliasChoices,
    AliasPath,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    RootModel,
    StringConstraints,
    computed_field,
    conint,
    conlist,
    constr,
    field_serializer,
    field_validator,
    model_serializer,
    model_validator,
)
from typing_extensions import TypedDict

from mcpkit.errors import ArgumentsFailure as F
from mcpkit.errors import OutputError, OutputFailure, SchemaError
from mcpkit.schema._typed import Arg, Int8, derive_input, derive_output

from .binding import args, doc, refused

T = TypeVar("T")
UTC = dt.UTC


class Address(BaseModel):
    street: str = Field(min_length=1, description="the street")
    zip_code: Annotated[str, StringConstraints(pattern=r"^[0-9]{5}$")] = Field(alias="zip")


class Kid(TypedDict):
    name: str


class Person(BaseModel):
    name: constr(min_length=1, max_length=20) = Field(title="Name")  # type: ignore[valid-type]
    age: int = Field(ge=0, le=150)
    score: conint(gt=0, lt=11) = 5  # type: ignore[valid-type]
    ratio: float = Field(default=0.5, ge=0, le=1)
    price: Decimal = Decimal("1.00")
    born: dt.date | None = None
    seen: Optional[dt.datetime] = None  # noqa: UP045
    id: uuid.UUID = Field(default_factory=lambda: uuid.UUID(int=0))
    home: Address
    others: list[Address] = []
    work: Address | None = None
    kids: list[Kid] = Field(default_factory=list)
    tags: list[Annotated[str, Field(max_length=3, description="a tag")]] = []
    key: str | int = 0
    level: Literal["low", "high"] = "low"
    small: Int8 = 0


ADDRESS = {
    "type": "object",
    "properties": {
        "street": {"type": "string", "minLength": 1, "description": "the street"},
        "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
    },
    "required": ["street", "zip"],
    "additionalProperties": False,
}


def test_a_model_derives_its_fields_in_declaration_order() -> None:
    assert doc(derive_input(Person)) == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 20, "title": "Name"},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "score": {"type": "integer", "minimum": 1, "maximum": 10},
            "ratio": {"type": "number", "minimum": 0, "maximum": 1},
            "price": {"type": "number"},
            "born": {"type": "string", "format": "date"},
            "seen": {"type": "string", "format": "date-time"},
            "id": {"type": "string", "format": "uuid"},
            "home": {"$ref": "#/$defs/Address"},
            "others": {"type": "array", "items": {"$ref": "#/$defs/Address"}},
            "work": {"$ref": "#/$defs/Address"},
            "kids": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"],
                    "additionalProperties": False,
                },
            },
            "tags": {
                "type": "array",
                "items": {"type": "string", "maxLength": 3, "description": "a tag"},
            },
            "key": {"type": ["string", "integer"]},
            "level": {"type": "string", "enum": ["low", "high"]},
            "small": {"type": "integer", "minimum": -128, "maximum": 127},
        },
        "required": ["name", "age", "home"],
        "additionalProperties": False,
        "$defs": {"Address": ADDRESS},
    }


def test_a_model_binds_strictly_and_is_built_by_model_validate() -> None:
    model = derive_input(Person)
    found = model.bind(
        args(
            '{"name": "Ann", "age": 30.0, "price": 2.50, "seen": "2024-01-31T09:30:00+01:00", '
            '"home": {"street": "Main", "zip": "12345"}, "work": {"street": "A", "zip": "00000"}, '
            '"kids": [{"name": "Bo"}], "tags": ["a"], "key": "k", "level": "high"}'
        )
    )
    assert isinstance(found, Person)
    assert found.age == 30 and type(found.age) is int
    assert found.price == Decimal("2.50") and str(found.price) == "2.50"  # as parsed
    assert found.seen == dt.datetime(2024, 1, 31, 8, 30, tzinfo=UTC)
    assert found.home == Address(street="Main", zip="12345")
    assert found.work is not None and found.work.zip_code == "00000"
    assert found.kids == [{"name": "Bo"}] and found.tags == ["a"] and found.key == "k"
    assert found.born is None and found.id == uuid.UUID(int=0) and found.score == 5
    assert found.model_fields_set == {
        "name",
        "age",
        "price",
        "seen",
        "home",
        "work",
        "kids",
        "tags",
        "key",
        "level",
    }
    minimal = model.bind(args('{"name": "A", "age": 1, "home": {"street": "s", "zip": "11111"}}'))
    assert isinstance(minimal, Person) and minimal.others == [] and minimal.seen is None


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"name": "A", "age": "1", "home": {"street": "s", "zip": "11111"}}', "age: must be an"),
        ('{"name": "A", "age": 1.5, "home": {"street": "s", "zip": "11111"}}', "age: must be an"),
        ('{"name": "A", "age": 1, "home": {"street": "s", "zip_code": "1"}}', "home.zip: required"),
        ('{"name": "A", "age": 1, "home": {"street": "s", "zip": "1"}}', "home.zip: must match"),
        ('{"name": "", "age": 1, "home": {"street": "s", "zip": "11111"}}', "name: must be at"),
        ('{"name": "A", "age": 1, "home": null}', "home: must be an object"),
        ('{"name": "A", "age": 1, "home": {"street": "s", "zip": "11111"}, "seen": null}', "seen"),
        ('{"name": "A", "age": 1, "score": 11, "home": {"street": "s", "zip": "11111"}}', "score"),
        (
            '{"name": "A", "age": 1, "tags": ["long"], "home": {"street": "s", "zip": "11111"}}',
            "tags[0]",
        ),
    ],
)
def test_strict_binding_refuses_in_the_schemas_terms(text: str, said: str) -> None:
    """No lax coercion: ``"1"`` is not an int; the alias is the only published name."""
    model = derive_input(Person)
    assert refused(model, text).reason is F.INVALID
    assert model.schema.explain(args(text)).startswith(said)


def test_a_malformed_formatted_string_in_a_model_says_where() -> None:
    model = derive_input(Person)
    text = '{"name": "A", "age": 1, "home": {"street": "s", "zip": "11111"}, "born": "01/02/2024"}'
    assert refused(model, text).detail == "born: must be a date such as 2024-01-31"


class Checked(BaseModel):
    low: int
    high: int
    word: Annotated[str, AfterValidator(str.lower)] = "x"

    @field_validator("low")
    @classmethod
    def not_thirteen(cls, value: int) -> int:
        if value == 13:
            raise ValueError("secret 13 is unlucky")
        return value

    @model_validator(mode="after")
    def ordered(self) -> Checked:
        if self.low > self.high:
            raise ValueError(f"secret {self.low} > {self.high}")
        return self

    def model_post_init(self, context: Any) -> None:
        if self.high == 99:
            raise RuntimeError("secret 99")


def test_after_validators_run_and_their_refusal_is_the_fixed_one() -> None:
    """``model_validate`` runs the model's own checks, like a dataclass's ``__post_init__``; a
    refusal never carries pydantic's message (it quotes the input)."""
    model = derive_input(Checked)
    assert model.bind(args('{"low": 1, "high": 2, "word": "ABC"}')) == Checked(
        low=1, high=2, word="abc"
    )
    for text in ['{"low": 13, "high": 20}', '{"low": 5, "high": 1}', '{"low": 1, "high": 99}']:
        error = refused(model, text)
        assert error.reason is F.CONSTRUCTOR and error.detail is None
        chain: BaseException | None = error
        while chain is not None:
            assert "secret" not in str(chain) or isinstance(chain, RuntimeError)
            assert not isinstance(chain, pydantic.ValidationError)
            chain = chain.__cause__ or chain.__context__


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int = 9


class Dog(BaseModel):
    kind: Literal["dog"] = Field(alias="kind")
    good: bool = True


class Shelter(BaseModel):
    pets: list[Cat | Dog] = Field(default_factory=list)
    best: Annotated[Cat | Dog, Field(discriminator="kind")] | None = None


def test_models_in_a_tagged_union_bind_by_the_tag() -> None:
    model = derive_input(Shelter)
    assert doc(model)["properties"]["pets"] == {
        "type": "array",
        "items": {"anyOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]},
    }
    found = model.bind(args('{"pets": [{"kind": "dog"}, {"kind": "cat", "lives": 1}]}'))
    assert found == Shelter(pets=[Dog(kind="dog"), Cat(kind="cat", lives=1)])
    assert refused(model, '{"pets": [{"kind": "cow"}]}').reason is F.INVALID
    assert derive_output(Shelter).to_json(found) == {
        "pets": [{"kind": "dog", "good": True}, {"kind": "cat", "lives": 1}]
    }


class Box(BaseModel, Generic[T]):
    value: T


class Pair(BaseModel):
    a: Box[int]
    b: Box[int]
    c: Box[list[str]]


def test_generic_models_are_named_by_their_arguments() -> None:
    document = doc(derive_input(Pair))
    assert document["properties"] == {
        "a": {"$ref": "#/$defs/Box-int"},
        "b": {"$ref": "#/$defs/Box-int"},
        "c": {
            "type": "object",
            "properties": {"value": {"type": "array", "items": {"type": "string"}}},
            "required": ["value"],
            "additionalProperties": False,
        },
    }
    found = derive_input(Pair).bind(
        args('{"a": {"value": 1}, "b": {"value": 2}, "c": {"value": []}}')
    )
    assert found == Pair(a=Box[int](value=1), b=Box[int](value=2), c=Box[list[str]](value=[]))


class Leaf(BaseModel):
    value: int


class Tree(BaseModel):
    children: list[Tree] = []
    leaf: Leaf | None = None


def test_recursive_models_bind_in_frames_and_write_back() -> None:
    model = derive_input(Tree)
    text = '{"children": [{"children": [{"leaf": {"value": 3}}]}]}'
    found = model.bind(args(text))
    assert found == Tree(children=[Tree(children=[Tree(leaf=Leaf(value=3))])])
    assert derive_output(Tree).to_json(found) == {
        "children": [{"children": [{"children": [], "leaf": {"value": 3}}]}]
    }


def test_a_handler_parameter_may_be_a_model() -> None:
    def handler(person: Address, note: str = "") -> None: ...

    model = derive_input(handler)
    found = model.bind(args('{"person": {"street": "s", "zip": "12345"}}'))
    assert found == {"person": Address(street="s", zip="12345"), "note": ""}


class Report(BaseModel):
    title: str = Field(alias="Title")
    at: dt.datetime
    id: uuid.UUID
    total: Decimal
    note: str | None = None
    rows: list[Leaf] = []


def test_a_model_output_is_written_by_its_published_names() -> None:
    out = derive_output(Report, object_root=True)
    value = Report(
        Title="t",
        at=dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC),
        id=uuid.UUID(int=1),
        total=Decimal("1.50"),
        rows=[Leaf(value=1)],
    )
    assert out.to_json(value) == {
        "Title": "t",
        "at": "2024-01-02T03:04:05Z",
        "id": "00000000-0000-0000-0000-000000000001",
        "total": Decimal("1.50"),
        "rows": [{"value": 1}],
    }


@pytest.mark.parametrize(
    "value",
    [
        Report.model_construct(at=dt.datetime(2024, 1, 1, tzinfo=UTC)),  # fields left out
        Report(Title="t", at=dt.datetime(2024, 1, 1), id=uuid.UUID(int=1), total=Decimal(1)),
        Leaf(value=1),
        {"Title": "t"},
    ],
)
def test_model_outputs_are_strict(value: object) -> None:
    with pytest.raises(OutputError) as caught:
        derive_output(Report).to_json(value)
    assert caught.value.reason is OutputFailure.SCHEMA


class Mutable(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_by_name=True, strict=False)
    n: int = Field(alias="N")


def test_config_that_changes_nothing_mcpkit_binds_is_accepted() -> None:
    """``extra='forbid'``, by-name validation (mcpkit publishes the alias only) and lax mode
    (mcpkit has bound the values strictly already)."""
    model = derive_input(Mutable)
    assert model.bind(args('{"N": 1}')) == Mutable(N=1)
    assert refused(model, '{"n": 1}').reason is F.INVALID


class WithArg(BaseModel):
    a: Annotated[int, Arg(minimum=1, description="from Arg")] = Field(title="from Field")
    b: Annotated[str, Arg(name="B")] = Field(alias="B")


def test_arg_metadata_in_a_model_merges_with_field() -> None:
    assert doc(derive_input(WithArg))["properties"] == {
        "a": {"type": "integer", "minimum": 1, "title": "from Field", "description": "from Arg"},
        "B": {"type": "string"},
    }


# --- refusals ------------------------------------------------------------------------------------


def refuse(cls: object, message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        derive_input(cls)


def test_validators_that_would_change_what_is_accepted_are_refused() -> None:
    class Before(BaseModel):
        a: int

        @field_validator("a", mode="before")
        @classmethod
        def parse(cls, value: object) -> object:
            return value

    class Wrapped(BaseModel):
        a: int

        @model_validator(mode="wrap")
        @classmethod
        def around(cls, value: Any, handler: Any) -> Any:
            return handler(value)

    refuse(Before, "Before: field_validator 'parse' runs in mode 'before'.*mode='after'")
    refuse(Wrapped, "Wrapped: model_validator 'around' runs in mode 'wrap'")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        class Legacy(BaseModel):
            a: int

            @pydantic.validator("a")
            @classmethod
            def check(cls, value: int) -> int:
                return value

        class LegacyRoot(BaseModel):
            a: int

            @pydantic.root_validator(skip_on_failure=True)
            @classmethod
            def check(cls, values: Any) -> Any:
                return values

    refuse(Legacy, "@validator and @root_validator are not supported")
    refuse(LegacyRoot, "@validator and @root_validator are not supported")


def test_what_mcpkit_would_not_write_is_refused() -> None:
    class Serialized(BaseModel):
        a: int

        @field_serializer("a")
        def write(self, value: int) -> str:
            return str(value)

    class WholeSerialized(BaseModel):
        a: int

        @model_serializer
        def write(self) -> dict[str, int]:
            return {"a": self.a}

    class Computed(BaseModel):
        a: int

        @computed_field  # type: ignore[prop-decorator]
        @property
        def double(self) -> int:
            return 2 * self.a

    class Excluded(BaseModel):
        password: str = Field(exclude=True)

    refuse(Serialized, "the serializer 'write' is not supported: mcpkit writes")
    refuse(WholeSerialized, "the serializer 'write' is not supported")
    refuse(Computed, "the computed field 'double' is not supported")
    refuse(Excluded, "field 'password' of .*Excluded: exclude is not supported")


def test_models_outside_what_the_schema_can_say_are_refused() -> None:
    class Extra(BaseModel):
        model_config = ConfigDict(extra="allow")

    class Lower(BaseModel):
        model_config = ConfigDict(str_to_lower=True)

    class Custom(BaseModel):
        @classmethod
        def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
            return handler(source)

    class Numbers(RootModel[list[int]]):
        pass

    class Later(BaseModel):
        a: Undefined  # type: ignore[name-defined]  # noqa: F821

    refuse(Extra, "extra='allow' is not supported: .* use 'forbid' or 'ignore'")
    refuse(Lower, "model_config str_to_lower is not supported")
    refuse(Custom, "a custom __get_pydantic_core_schema__ is not supported")
    refuse(Numbers, "RootModel is not supported: use its root type directly")
    refuse(Later, "is not fully defined .* call model_rebuild")
    refuse(Box, "Box is generic: give its type arguments")


def test_aliases_must_give_one_name() -> None:
    class Split(BaseModel):
        a: int = Field(validation_alias="in", serialization_alias="out")

    class InputOnly(BaseModel):
        a: int = Field(validation_alias="in")

    class Choices(BaseModel):
        a: int = Field(validation_alias=AliasChoices("x", "y"))

    class Path(BaseModel):
        a: int = Field(validation_alias=AliasPath("x", 0))

    class Clash(BaseModel):
        a: Annotated[int, Arg(name="x")] = Field(alias="y")

    class Renamed(BaseModel):
        a: Annotated[int, Arg(name="x")]

    class Titles(BaseModel):
        a: Annotated[int, Arg(title="x")] = Field(title="y")

    class Twice(BaseModel):
        a: int = Field(alias="b")
        b: int

    refuse(Split, "validation_alias and serialization_alias differ.*use alias=")
    refuse(InputOnly, "validation_alias and serialization_alias differ")
    refuse(Choices, "AliasPath and AliasChoices are not supported")
    refuse(Path, "AliasPath and AliasChoices are not supported")
    refuse(Clash, "rename a model field with Field.alias=...., not Arg")
    refuse(Renamed, "rename a model field with Field.alias=...., not Arg")
    refuse(Titles, "the title is given by both Field and Arg")
    refuse(Twice, "the property name 'b' is used twice")


@pytest.mark.parametrize(
    ("hint", "message"),
    [
        (Annotated[float, Field(gt=0.5)], "gt and lt .exclusive bounds. apply to int only"),
        (Annotated[Decimal, Field(max_digits=5)], "Field max_digits is not supported"),
        (Annotated[int, Field(multiple_of=2)], "MultipleOf.* is not supported"),
        (Annotated[str, Field(coerce_numbers_to_str=True)], "coerce_numbers_to_str"),
        (Annotated[str, StringConstraints(strip_whitespace=True)], "strip_whitespace is not"),
        (Annotated[str, StringConstraints(to_upper=True)], "to_upper is not supported"),
        (Annotated[str, Field(pattern=re.compile("a"))], "give the pattern as a str"),
        (Annotated[str, StringConstraints(pattern=re.compile("a"))], "give the pattern as a str"),
        (Annotated[float, Field(allow_inf_nan=True)], "allow_inf_nan is not supported"),
        (Annotated[int, BeforeValidator(int)], "BeforeValidator is not supported: use @field_v"),
        (list[Annotated[int, AfterValidator(abs)]], "AfterValidator is not supported"),
        (list[Annotated[int, Field(default=1)]], "inside a type, Field.. may give constraints"),
        (list[Annotated[int, Field(alias="x")]], "inside a type, Field.. may give constraints"),
        (Annotated[int, pydantic.PositiveInt], "Annotated metadata"),
        (
            Annotated[
                Annotated[Cat, pydantic.Tag("cat")] | Annotated[Dog, pydantic.Tag("dog")],
                Field(discriminator=Discriminator(lambda v: "cat")),
            ],
            "a callable Discriminator is not supported",
        ),
        (conlist(int, min_length=1), "Profile 1 has no minItems"),
        (pydantic.SecretStr, "SecretStr is not supported"),
    ],
)
def test_field_options_outside_profile_1_are_refused(hint: Any, message: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic warns of a Field(default=...) inside a type
        holder = pydantic.create_model("Holder", x=(hint, ...))
    with pytest.raises(SchemaError, match=f"^field 'x' of Holder: .*{message}"):
        derive_input(holder)


@pytest.mark.parametrize(
    "hint",
    [
        Annotated[int, Field(strict=True)],
        Annotated[int, pydantic.Strict()],
        Annotated[list[int], pydantic.FailFast()],
        Annotated[float, Field(allow_inf_nan=False)],
        Annotated[int | str, Field(union_mode="left_to_right")],
        Annotated[str, StringConstraints(min_length=0, strict=True)],
        conlist(int),
    ],
)
def test_field_options_that_change_nothing_are_accepted(hint: Any) -> None:
    holder = pydantic.create_model("Holder", x=(hint, ...))
    properties = doc(derive_input(holder))["properties"]
    assert "minLength" not in properties["x"] and "minItems" not in properties["x"]


def test_pydantic_is_imported_only_when_a_model_is_used() -> None:
    """``import mcpkit`` and a dataclass tool leave pydantic (and its annotated_types) unloaded:
    it is an optional extra."""
    code = (
        "import dataclasses, sys\n"
        "import mcpkit\n"
        "from mcpkit.schema import derive_input, derive_output\n"
        "@dataclasses.dataclass(frozen=True)\n"
        "class A:\n"
        "    x: int\n"
        "    y: str | int = 0\n"
        "derive_input(A).bind({'x': 1})\n"
        "derive_output(A).to_json(A(1))\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in "
        "('pydantic', 'pydantic_core', 'annotated_types')]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
