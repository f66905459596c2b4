"""The common types of the typed layer: ``Arg`` string constraints, ``datetime``/``date``/``UUID``
as formatted strings, scalar unions of distinct JSON types, tagged unions of objects, and
annotated_types constraints; derived exactly, bound strictly, written canonically, refused at
registration with the type and the place (docs/design/schema.md, "Typed layer")."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import uuid
from decimal import Decimal
from typing import Annotated, Any, Literal, NotRequired, TypedDict

import annotated_types as at
import pytest

import mcpkit
from mcpkit import Endpoint, EndpointRegistry, Revision, endpoint, tool
from mcpkit.errors import ArgumentsFailure as F
from mcpkit.errors import ArgumentsInvalid, OutputError, OutputFailure, SchemaError
from mcpkit.json import JsonObject, encode, from_python
from mcpkit.limits import Limits
from mcpkit.schema import _formats
from mcpkit.schema import _typeinfo as ti
from mcpkit.schema._analyze import analyze_type
from mcpkit.schema._bind import bind
from mcpkit.schema._typed import Arg, Int8, Width, derive_input, derive_output
from mcpkit.testing import TestClient, stateless_headers, stateless_request

from .binding import MAX, args, doc, refused

UTC = dt.UTC


def holder(hint: Any) -> type:
    return dataclasses.make_dataclass("Holder", [("x", hint)], frozen=True)


# --- Arg(min_length=, max_length=, pattern=) ---------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Named:
    code: Annotated[str, Arg(min_length=2, max_length=4, pattern="^[A-Z]+$")]
    note: Annotated[str, Arg(max_length=0)] = ""


def test_string_constraints_are_published_and_validated() -> None:
    model = derive_input(Named)
    assert doc(model)["properties"] == {
        "code": {"type": "string", "minLength": 2, "maxLength": 4, "pattern": "^[A-Z]+$"},
        "note": {"type": "string", "maxLength": 0},
    }
    assert model.bind(args('{"code": "AB"}')) == Named("AB")
    for text, said in [
        ('{"code": "A"}', "code: must be at least 2 characters"),
        ('{"code": "ABCDE"}', "code: must be at most 4 characters"),
        ('{"code": "ab"}', "code: must match the pattern ^[A-Z]+$"),
        ('{"code": "AB", "note": "x"}', "note: must be at most 0 characters"),
    ]:
        assert refused(model, text).reason is F.INVALID
        assert model.schema.explain(args(text)) == said


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        (lambda: Arg(min_length=-1), "Arg.min_length must be a non-negative int"),
        (lambda: Arg(max_length=True), "Arg.max_length must be a non-negative int"),
        (lambda: Arg(max_length=1.5), "Arg.max_length must be a non-negative int"),  # type: ignore[arg-type]
        (lambda: Arg(min_length=3, max_length=2), "Arg.min_length must not exceed"),
        (lambda: Arg(pattern=3), "Arg.pattern must be a str"),  # type: ignore[arg-type]
        (lambda: Arg(pattern="\ud800"), "Arg.pattern contains an unpaired surrogate"),
    ],
)
def test_arg_string_constraints_are_checked_at_construction(arg: Any, message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        arg()


@pytest.mark.parametrize(
    ("hint", "message"),
    [
        (Annotated[int, Arg(min_length=1)], "int cannot take min_length, max_length or pattern"),
        (Annotated[dt.date, Arg(pattern="x")], "date cannot take min_length"),
        (Annotated[bool, Arg(max_length=1)], "bool cannot take min_length"),
        (Annotated[list[str], Arg(max_length=1)], "apply to str only .Profile 1 has no minItems"),
        (Annotated[dict[str, str], Arg(pattern="a")], "apply to str only"),
        (Annotated[Literal["a"], Arg(pattern="a")], "cannot take min_length"),
        (Annotated[str, Arg(minimum=1)], "str cannot take Arg minimum/maximum"),
        (Annotated[str, Arg(pattern="(?<=a)")], "pattern: lookbehind"),
    ],
)
def test_misplaced_string_constraints_are_refused(hint: Any, message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        derive_input(holder(hint))


# --- annotated_types metadata (what pydantic's Field(ge=...) and constr() become) -----------------


@dataclasses.dataclass(frozen=True)
class Measured:
    a: Annotated[int, at.Gt(0), at.Lt(10)]
    b: Annotated[int, at.Interval(ge=-5, le=5)]
    c: Annotated[Decimal, at.Ge(Decimal("0.5")), at.Le(1.5)]
    d: Annotated[str, at.Len(1, 3)]
    e: Annotated[str, at.MinLen(0), at.MaxLen(0)]
    f: Annotated[int, at.Gt(Decimal("1.5")), at.Lt(3.5), at.Ge(0), None]
    g: Annotated[float, at.Ge(0.1)]
    h: Annotated[int, at.Interval(gt=0, ge=3, lt=100, le=50)]


def test_annotated_types_constraints_derive_like_arg() -> None:
    """``gt``/``lt`` on an int become the next integer in (Profile 1 has no exclusive bounds);
    the tighter of two lower bounds wins; a float bound is its shortest repr; ``MinLen(0)`` says
    nothing; ``None`` placeholders (``conint``) are skipped."""
    properties = doc(derive_input(Measured))["properties"]
    assert properties == {
        "a": {"type": "integer", "minimum": 1, "maximum": 9},
        "b": {"type": "integer", "minimum": -5, "maximum": 5},
        "c": {"type": "number", "minimum": Decimal("0.5"), "maximum": Decimal("1.5")},
        "d": {"type": "string", "minLength": 1, "maxLength": 3},
        "e": {"type": "string", "maxLength": 0},
        "f": {"type": "integer", "minimum": 2, "maximum": 3},
        "g": {"type": "number", "minimum": Decimal("0.1"), "maximum": MAX},
        "h": {"type": "integer", "minimum": 3, "maximum": 50},
    }


@pytest.mark.parametrize(
    ("hint", "message"),
    [
        (Annotated[float, at.Gt(0)], "gt and lt .exclusive bounds. apply to int only"),
        (Annotated[Decimal, at.Lt(0)], "Profile 1 has no exclusiveMinimum"),
        (Annotated[int, at.Ge(1), Arg(minimum=2)], "minimum is given twice"),
        (Annotated[int, at.MultipleOf(2)], "Annotated metadata MultipleOf.* is not supported"),
        (Annotated[int, at.Ge(True)], "a bound must be a finite int, float or Decimal"),
        (Annotated[int, at.Ge(float("inf"))], "a bound must be a finite"),
        (Annotated[int, at.Ge(Decimal("NaN"))], "a bound must be a finite"),
        (Annotated[int, at.Ge("1")], "a bound must be a finite"),
        (Annotated[str, at.MinLen(-1)], "a length must be a non-negative int"),
        (Annotated[int, at.Gt(5), at.Lt(6)], "the bounds leave no value"),
        (Annotated[str, at.MinLen(3), at.MaxLen(2)], "min_length must not exceed max_length"),
        (Annotated[list[int], at.MinLen(1)], "Profile 1 has no minItems"),
        (Annotated[int, Arg(), Arg()], "one Arg and one Width at most"),
        (Annotated[int, "doc"], "Annotated metadata 'doc' is not supported"),
    ],
)
def test_unsupported_or_conflicting_metadata_is_refused(hint: Any, message: str) -> None:
    with pytest.raises(SchemaError, match=f"^field 'x' of Holder: .*{message}"):
        derive_input(holder(hint))


# --- datetime, date, UUID ------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Meeting:
    when: dt.datetime
    day: dt.date | None = None
    id: uuid.UUID | None = None
    later: list[dt.datetime | None] = dataclasses.field(default_factory=list)
    by_room: dict[str, uuid.UUID] = dataclasses.field(default_factory=dict)


def test_formatted_strings_derive_type_and_format() -> None:
    assert doc(derive_input(Meeting))["properties"] == {
        "when": {"type": "string", "format": "date-time"},
        "day": {"type": "string", "format": "date"},
        "id": {"type": "string", "format": "uuid"},
        "later": {"type": "array", "items": {"type": ["string", "null"], "format": "date-time"}},
        "by_room": {"type": "object", "additionalProperties": {"type": "string", "format": "uuid"}},
    }


def tz(hours: int, minutes: int = 0) -> dt.timezone:
    return dt.timezone(dt.timedelta(hours=hours, minutes=minutes))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-01-31T09:30:00Z", dt.datetime(2024, 1, 31, 9, 30, tzinfo=UTC)),
        ("2024-01-31t09:30:00z", dt.datetime(2024, 1, 31, 9, 30, tzinfo=UTC)),
        ("2024-02-29T23:59:59+23:59", dt.datetime(2024, 2, 29, 23, 59, 59, tzinfo=tz(23, 59))),
        ("2024-01-31T09:30:00-05:30", dt.datetime(2024, 1, 31, 9, 30, tzinfo=tz(-5, -30))),
        ("2024-01-31T09:30:00-00:00", dt.datetime(2024, 1, 31, 9, 30, tzinfo=UTC)),
        ("0001-01-01T00:00:00.5Z", dt.datetime(1, 1, 1, 0, 0, 0, 500000, tzinfo=UTC)),
        ("2024-01-31T09:30:00.123456789Z", dt.datetime(2024, 1, 31, 9, 30, 0, 123456, UTC)),
        ("2024-01-31T09:30:00." + "9" * 40 + "Z", dt.datetime(2024, 1, 31, 9, 30, 0, 999999, UTC)),
    ],
)
def test_rfc_3339_date_times_bind_to_aware_datetimes(text: str, expected: dt.datetime) -> None:
    """Fractional seconds past microseconds are truncated, as Python has no finer time."""
    found = derive_input(Meeting).bind(JsonObject({"when": text}))
    assert isinstance(found, Meeting)
    assert found.when == expected and found.when.utcoffset() == expected.utcoffset()


@pytest.mark.parametrize(
    "text",
    [
        "2024-01-31T09:30:00",  # no time zone: RFC 3339 has no local time
        "2024-01-31 09:30:00Z",  # a space
        "2024-01-31_09:30:00Z",
        "2024-01-31T09:30Z",  # no seconds
        "2024-01-31T09:30:60Z",  # a leap second
        "2024-02-30T00:00:00Z",  # no such day
        "2023-02-29T00:00:00Z",
        "0000-01-01T00:00:00Z",  # no year 0 in Python
        "2024-01-31T24:00:00Z",
        "2024-01-31T09:30:00+24:00",
        "2024-01-31T09:30:00+05:60",
        "2024-01-31T09:30:00+0530",
        "2024-01-31T09:30:00+05",
        "2024-01-31T09:30:00.Z",
        "2024-1-31T09:30:00Z",
        "\uff12024-01-31T09:30:00Z",  # a fullwidth digit
        "2024-01-31T09:30:00." + "1" * 44 + "Z",  # 65 characters: refused before the pattern
        "1700000000",
        "",
    ],
)
def test_malformed_date_times_are_refused_saying_where(text: str) -> None:
    error = refused(derive_input(Meeting), encode(from_python({"when": text})).decode())
    assert error.reason is F.INVALID
    assert error.detail == f"when: {_formats.PROBLEMS['datetime']}"  # fixed: never the value


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ('{"when": "2024-01-31T09:30:00Z", "day": "2024-02-30"}', "day: must be a date"),
        ('{"when": "2024-01-31T09:30:00Z", "day": "2024-1-31"}', "day: must be a date"),
        ('{"when": "2024-01-31T09:30:00Z", "day": "2024-01-31T00"}', "day: must be a date"),
        ('{"when": "2024-01-31T09:30:00Z", "day": "20240131"}', "day: must be a date"),
        ('{"when": "2024-01-31T09:30:00Z", "id": "123e4567e89b12d3a456426614174000"}', "id: "),
        ('{"when": "2024-01-31T09:30:00Z", "id": "{123e4567-e89b-12d3-a456-42661417400}"}', "id:"),
        ('{"when": "2024-01-31T09:30:00Z", "id": "123e4567-e89b-12d3-a456-42661417400g"}', "id:"),
        ('{"when": "2024-01-31T09:30:00Z", "later": [null, "x"]}', "later[1]: must be an RFC"),
        ('{"when": "2024-01-31T09:30:00Z", "by_room": {"secret": "x"}}', "by_room.*: must be a"),
    ],
)
def test_malformed_dates_and_uuids_are_refused_saying_where(text: str, detail: str) -> None:
    error = refused(derive_input(Meeting), text)
    assert error.reason is F.INVALID
    assert error.detail is not None and error.detail.startswith(detail)
    assert "secret" not in error.detail


def test_formatted_strings_bind_and_check_their_json_type() -> None:
    model = derive_input(Meeting)
    found = model.bind(
        args(
            '{"when": "2024-01-31T09:30:00Z", "day": "2024-02-29", '
            '"id": "123E4567-E89B-12D3-A456-426614174000", "later": [null], '
            '"by_room": {"a": "123e4567-e89b-12d3-a456-426614174000"}}'
        )
    )
    identifier = uuid.UUID("123e4567-e89b-12d3-a456-426614174000")
    assert found == Meeting(
        dt.datetime(2024, 1, 31, 9, 30, tzinfo=UTC),
        dt.date(2024, 2, 29),
        identifier,
        [None],
        {"a": identifier},
    )
    # The schema refuses a number; the binder alone too, and without a detail then.
    with pytest.raises(ArgumentsInvalid) as caught:
        model.bind_validated(JsonObject({"when": 5}))
    assert caught.value.reason is F.TYPE and caught.value.detail is None
    with pytest.raises(ArgumentsInvalid) as caught:
        bind(analyze_type(Meeting, limits=Limits()), {"when": "x"}, Limits())
    assert caught.value.reason is F.INVALID and caught.value.detail is None  # bind() alone


def test_a_refused_date_time_reaches_the_caller_as_the_schema_refusals_do() -> None:
    """Through ``tools/call``: the isError result says where and what, never the value."""

    @endpoint(path="/mcp", name="when", version="1.0.0", revisions={Revision.V2026_07_28})
    class Calendar:
        @tool(name="book")
        def book(self, when: dt.datetime, room: uuid.UUID | None = None) -> Meeting:
            return Meeting(when, None, room)

    served: Endpoint = EndpointRegistry.from_classes(Calendar).endpoints[0]
    with TestClient(mcpkit.Server(served)) as client:

        def call(arguments: dict[str, object]) -> Any:
            body = stateless_request("tools/call", {"name": "book", "arguments": arguments})
            response = client.post("/mcp", body, headers=stateless_headers("tools/call", "book"))
            assert response.status == 200
            payload: Any = response.json
            return payload["result"]

        bad = call({"when": "2024-01-31T09:30:00 secret"})
        assert bad["isError"] is True
        said = bad["content"][0]["text"]
        assert said == (
            "Arguments do not match the tool's inputSchema: when: must be an RFC 3339 "
            "date-time with a time zone, such as 2024-01-31T09:30:00Z."
        )
        good = call(
            {"when": "2024-01-31T09:30:00+01:00", "room": "123E4567-E89B-12D3-A456-4266141740AA"}
        )
        assert good["structuredContent"] == {
            "when": "2024-01-31T09:30:00+01:00",
            "id": "123e4567-e89b-12d3-a456-4266141740aa",
            "later": [],
            "by_room": {},
        }


@dataclasses.dataclass(frozen=True)
class Stamp:
    at: dt.datetime
    on: dt.date
    id: uuid.UUID


class SubUUID(uuid.UUID):
    def __str__(self) -> str:
        return "not a uuid"


ID = uuid.UUID("00000000-0000-0000-0000-00000000000a")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (
            Stamp(dt.datetime(2024, 1, 31, 9, 30, tzinfo=UTC), dt.date(1, 2, 3), ID),
            {"at": "2024-01-31T09:30:00Z", "on": "0001-02-03", "id": str(ID)},
        ),
        (
            Stamp(dt.datetime(999, 1, 2, 3, 4, 5, 6, tzinfo=tz(-1, -30)), dt.date(2024, 1, 1), ID),
            {"at": "0999-01-02T03:04:05.000006-01:30", "on": "2024-01-01", "id": str(ID)},
        ),
        (
            Stamp(dt.datetime(2024, 1, 1, tzinfo=tz(14)), dt.date(2024, 1, 1), SubUUID(int=10)),
            {"at": "2024-01-01T00:00:00+14:00", "on": "2024-01-01", "id": str(ID)},
        ),
    ],
)
def test_formatted_outputs_are_written_canonically(value: Stamp, expected: object) -> None:
    assert derive_output(Stamp).to_json(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        Stamp(dt.datetime(2024, 1, 1), dt.date(2024, 1, 1), ID),  # naive
        Stamp(
            dt.datetime(2024, 1, 1, tzinfo=dt.timezone(dt.timedelta(seconds=30))),
            dt.date(2024, 1, 1),
            ID,
        ),
        Stamp(dt.date(2024, 1, 1), dt.date(2024, 1, 1), ID),  # type: ignore[arg-type]
        Stamp("2024-01-01T00:00:00Z", dt.date(2024, 1, 1), ID),  # type: ignore[arg-type]
        Stamp(dt.datetime(2024, 1, 1, tzinfo=UTC), dt.datetime(2024, 1, 1, tzinfo=UTC), ID),
        Stamp(dt.datetime(2024, 1, 1, tzinfo=UTC), "2024-01-01", ID),  # type: ignore[arg-type]
        Stamp(dt.datetime(2024, 1, 1, tzinfo=UTC), dt.date(2024, 1, 1), str(ID)),  # type: ignore[arg-type]
        Stamp(dt.datetime(2024, 1, 1, tzinfo=UTC), dt.date(2024, 1, 1), 5),  # type: ignore[arg-type]
    ],
)
def test_formatted_outputs_are_strict(value: Stamp) -> None:
    with pytest.raises(OutputError) as caught:
        derive_output(Stamp).to_json(value)
    assert caught.value.reason is OutputFailure.SCHEMA


def test_a_formatted_argument_can_be_a_mirrored_header() -> None:
    @dataclasses.dataclass(frozen=True)
    class Scoped:
        tenant: Annotated[uuid.UUID, Arg(header="Tenant")]

    model = derive_input(Scoped)
    assert [h.suffix for h in model.schema.headers] == ["Tenant"]


# --- scalar unions -------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Mixed:
    key: str | int
    flag: int | bool | None = None
    items: list[Annotated[str, Arg(max_length=3)] | float | None] = dataclasses.field(
        default_factory=list
    )
    when: Annotated[dt.datetime | Int8, Arg(description="a time or an offset")] = 0


def test_scalar_unions_derive_a_type_list_with_each_members_constraints() -> None:
    assert doc(derive_input(Mixed))["properties"] == {
        "key": {"type": ["string", "integer"]},
        "flag": {"type": ["integer", "boolean"]},
        "items": {
            "type": "array",
            "items": {
                "type": ["string", "number", "null"],
                "maxLength": 3,
                "minimum": -MAX,
                "maximum": MAX,
            },
        },
        "when": {
            "type": ["string", "integer"],
            "format": "date-time",
            "minimum": -128,
            "maximum": 127,
            "description": "a time or an offset",
        },
    }


def test_scalar_unions_bind_by_the_json_type() -> None:
    model = derive_input(Mixed)
    found: Any = model.bind(
        args(
            '{"key": 1.0, "flag": true, "items": ["ab", 2, 1.5, null], '
            '"when": "2024-01-31T00:00:00Z"}'
        )
    )
    assert found == Mixed(1, True, ["ab", 2.0, 1.5, None], dt.datetime(2024, 1, 31, tzinfo=UTC))
    assert type(found.key) is int and type(found.items[1]) is float
    assert model.bind(args('{"key": "1", "flag": 0, "when": -3}')) == Mixed("1", 0, [], -3)
    assert model.bind(args('{"key": "k", "flag": 2}')).flag == 2  # type: ignore[attr-defined]
    refusals = ['{"key": true}', '{"key": null}', '{"key": [1]}', '{"key": 1.5}']
    for text in [*refusals, '{"key": 1, "when": 200}']:
        assert refused(model, text).reason is F.INVALID
    # the binder alone, on values the schema would have refused
    cases: list[tuple[dict[str, object], F]] = [
        ({"key": True}, F.TYPE),
        ({"key": [1]}, F.TYPE),
        ({"key": Decimal("1.5")}, F.NOT_INTEGER),
        ({"key": "k", "flag": "x"}, F.TYPE),
        ({"key": "k", "when": 200}, F.INTEGER_WIDTH),
    ]
    for value, reason in cases:
        with pytest.raises(ArgumentsInvalid) as caught:
            model.bind_validated(JsonObject(value))
        assert caught.value.reason is reason
    error = refused(model, '{"key": "k", "when": "today"}')
    assert error.detail == f"when: {_formats.PROBLEMS['datetime']}"


def test_scalar_unions_output_by_the_member_that_takes_the_value() -> None:
    out = derive_output(Mixed)
    written = out.to_json(Mixed(5, False, ["a", 2, None], dt.datetime(2024, 1, 1, tzinfo=UTC)))
    assert written == {
        "key": 5,
        "flag": False,
        "items": ["a", 2, None],
        "when": "2024-01-01T00:00:00Z",
    }
    assert out.to_json(Mixed("k", 3)) == {"key": "k", "flag": 3, "items": [], "when": 0}
    for bad, reason in [
        (Mixed(1.5, None), OutputFailure.SCHEMA),  # type: ignore[arg-type]
        (Mixed(None, None), OutputFailure.SCHEMA),  # type: ignore[arg-type]
        (Mixed("\ud800", None), OutputFailure.SURROGATE),
        (Mixed("k", None, ["abcd"]), OutputFailure.SCHEMA),  # maxLength
        (Mixed("k", None, [], dt.datetime(2024, 1, 1)), OutputFailure.SCHEMA),  # naive
    ]:
        with pytest.raises(OutputError) as caught:
            out.to_json(bad)
        assert caught.value.reason is reason


class Color(enum.Enum):
    RED = "red"


@pytest.mark.parametrize(
    ("hint", "message"),
    [
        (
            int | float,
            "int and float are both JSON numbers .an integral number is either.: use one",
        ),
        (int | Decimal, "int and Decimal are both JSON numbers"),
        (str | dt.datetime, "str and datetime are both JSON strings"),
        (dt.date | dt.datetime, "date and datetime are both JSON strings"),
        (str | uuid.UUID | None, "str and UUID are both JSON strings"),
        (bool | Literal[True], "scalars of distinct JSON types, or objects told apart"),
        (str | Color, "scalars of distinct JSON types"),
        (str | list[str], "scalars of distinct JSON types"),
        (int | Annotated[str | bool, Arg()], "write the union flat"),
        (Annotated[str | int, Arg(max_length=2)], "constraints on a union belong on its members"),
        (Annotated[str | int, Width(8)], "cannot take a Width"),
        (Annotated[str, Arg(title="t")] | int, "title and description belong on the union"),
        (list[Annotated[int | str, Arg(name="y")]], "Arg name and header belong on a field"),
    ],
)
def test_unions_outside_profile_1_are_refused(hint: Any, message: str) -> None:
    with pytest.raises(SchemaError, match=f"^field 'x' of Holder: .*{message}"):
        derive_input(holder(hint))


def test_a_union_header_is_refused() -> None:
    with pytest.raises(SchemaError, match="a mirrored header needs a str, bool or int argument"):
        derive_input(holder(Annotated[str | int, Arg(header="H")]))


# --- object unions, told apart by a Literal tag ---------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Cat:
    kind: Literal["cat"]
    lives: int = 9


@dataclasses.dataclass(frozen=True)
class Dog:
    kind: Literal["dog", "puppy"]
    good: bool = True


class Bird(TypedDict):
    kind: Literal[1, True]
    wings: NotRequired[int]


@dataclasses.dataclass(frozen=True)
class Pets:
    first: Cat | Dog
    others: list[Annotated[Cat, Arg(title="a cat")] | Dog | Bird | None] = dataclasses.field(
        default_factory=list
    )
    best: Cat | Dog | None = None


def test_object_unions_derive_any_of_their_members() -> None:
    cat = {
        "type": "object",
        "properties": {"kind": {"type": "string", "enum": ["cat"]}, "lives": {"type": "integer"}},
        "required": ["kind"],
        "additionalProperties": False,
    }
    assert doc(derive_input(Pets)) == {
        "type": "object",
        "properties": {
            "first": {"anyOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]},
            "others": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"$ref": "#/$defs/Cat", "title": "a cat"},
                        {"$ref": "#/$defs/Dog"},
                        {
                            "type": "object",
                            "properties": {
                                "kind": {"enum": [1, True]},
                                "wings": {"type": "integer"},
                            },
                            "required": ["kind"],
                            "additionalProperties": False,
                        },
                        {"type": "null"},
                    ]
                },
            },
            "best": {"anyOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]},
        },
        "required": ["first"],
        "additionalProperties": False,
        "$defs": {
            "Cat": cat,
            "Dog": {
                "type": "object",
                "properties": {
                    "kind": {"type": "string", "enum": ["dog", "puppy"]},
                    "good": {"type": "boolean"},
                },
                "required": ["kind"],
                "additionalProperties": False,
            },
        },
    }


def test_object_unions_bind_by_their_tag() -> None:
    model = derive_input(Pets)
    found = model.bind(
        args(
            '{"first": {"kind": "puppy"}, "others": [{"kind": "cat", "lives": 3}, null, '
            '{"kind": 1.0}, {"kind": true, "wings": 2}], "best": {"kind": "cat"}}'
        )
    )
    assert found == Pets(
        Dog("puppy"), [Cat("cat", 3), None, {"kind": 1}, {"kind": True, "wings": 2}], Cat("cat")
    )
    for text in [
        '{"first": {"kind": "cow"}}',
        '{"first": {"lives": 1}}',
        '{"first": {"kind": "cat", "good": true}}',
        '{"first": 5}',
        '{"first": {"kind": "cat"}, "best": null}',
    ]:
        assert refused(model, text).reason is F.INVALID
    for value, reason in [
        ({"first": {"kind": "cow"}}, F.LITERAL),
        ({"first": {"kind": 2}}, F.LITERAL),
        ({"first": {"kind": None}}, F.LITERAL),
        ({"first": {"kind": Decimal("Infinity")}}, F.LITERAL),
        ({"first": {"lives": 1}}, F.MISSING_PROPERTY),
        ({"first": [1]}, F.TYPE),
        ({"first": {"kind": "cat", "good": True}}, F.UNKNOWN_PROPERTY),
    ]:
        with pytest.raises(ArgumentsInvalid) as caught:
            model.bind_validated(value)  # type: ignore[arg-type]
        assert caught.value.reason is reason


@dataclasses.dataclass(frozen=True)
class Deep:
    kind: Literal["deep"]
    v: list[list[list[list[list[list[list[list[int]]]]]]]]


@dataclasses.dataclass(frozen=True)
class DeepOrCat:
    x: Deep | Cat


@dataclasses.dataclass(frozen=True)
class Leaf:
    kind: Literal["leaf"]
    at: dt.date


@dataclasses.dataclass(frozen=True)
class Node:
    kind: Literal["node"]
    children: list[Node | Leaf]


def test_recursive_object_unions_bind_in_frames_and_locate_a_bad_format() -> None:
    model = derive_input(Node)
    text = (
        '{"kind": "node", "children": [{"kind": "leaf", "at": "2024-01-01"}, '
        '{"kind": "node", "children": [{"kind": "leaf", "at": "2024-01-02"}]}]}'
    )
    assert model.bind(args(text)) == Node(
        "node",
        [Leaf("leaf", dt.date(2024, 1, 1)), Node("node", [Leaf("leaf", dt.date(2024, 1, 2))])],
    )
    error = refused(model, text.replace("2024-01-02", "yesterday"))
    assert error.detail == "children[1].children[0].at: must be a date such as 2024-01-31"
    for value, reason in [
        ({"kind": "node", "children": [{"kind": "twig"}]}, F.LITERAL),
        ({"kind": "node", "children": [{"at": "2024-01-01"}]}, F.MISSING_PROPERTY),
        ({"kind": "node", "children": [7]}, F.TYPE),
        ({"kind": "node", "children": [None]}, F.TYPE),
    ]:
        with pytest.raises(ArgumentsInvalid) as caught:
            model.bind_validated(from_python(value))  # type: ignore[arg-type]
        assert caught.value.reason is reason


def test_deep_object_union_arms_bind_in_frames() -> None:
    """An arm nesting more containers than a leaf may binds in a frame, and so do the others."""
    model = derive_input(DeepOrCat)
    assert model.bind(args('{"x": {"kind": "cat"}}')) == DeepOrCat(Cat("cat"))
    nested = '{"x": {"kind": "deep", "v": [[[[[[[[1]]]]]]]]}}'
    assert model.bind(args(nested)) == DeepOrCat(Deep("deep", [[[[[[[[1]]]]]]]]))


def test_object_unions_output_by_class_or_tag() -> None:
    out = derive_output(Pets)
    assert out.to_json(Pets(Cat("cat"), [Dog("dog"), {"kind": True}, None], None)) == {
        "first": {"kind": "cat", "lives": 9},
        "others": [{"kind": "dog", "good": True}, {"kind": True}, None],
    }
    for bad in [
        Pets(Bird(kind=1)),  # type: ignore[arg-type]
        Pets(Cat("cat"), [{"kind": "cat"}]),  # type: ignore[list-item]
        Pets(Cat("cat"), [{"kind": 1.0}]),  # type: ignore[list-item]
        Pets(Cat("cat"), [{}]),  # type: ignore[list-item]
        Pets("cat"),  # type: ignore[arg-type]
        Pets(Cat("dog")),  # type: ignore[arg-type]  # the schema says no
    ]:
        with pytest.raises(OutputError) as caught:
            out.to_json(bad)
        assert caught.value.reason is OutputFailure.SCHEMA


def test_a_typeddict_member_first_is_passed_over_by_a_value_it_does_not_tag() -> None:
    out = derive_output(Bird | Cat)
    assert out.to_json(Cat("cat")) == {"kind": "cat", "lives": 9}
    assert out.to_json({"kind": True}) == {"kind": True}
    with pytest.raises(OutputError):
        out.to_json({"kind": 2})


@dataclasses.dataclass(frozen=True)
class Both:
    kind: Literal["cat", "dog"]


@dataclasses.dataclass(frozen=True)
class Untagged:
    name: str


@dataclasses.dataclass(frozen=True)
class Defaulted:
    kind: Literal["d"] = "d"


@dataclasses.dataclass(frozen=True)
class Nullable:
    kind: Literal["n"] | None


@dataclasses.dataclass(frozen=True)
class OtherName:
    sort: Literal["o"]


@pytest.mark.parametrize(
    "hint",
    [Cat | Both, Cat | Untagged, Cat | Defaulted, Cat | Nullable, Cat | OtherName],
)
def test_object_unions_without_a_tag_are_refused(hint: Any) -> None:
    with pytest.raises(SchemaError, match="needs a Literal field, required in every member"):
        derive_input(holder(hint))


def test_an_object_and_an_enum_are_no_union() -> None:
    with pytest.raises(SchemaError, match="scalars of distinct JSON types, or objects told"):
        derive_input(holder(Cat | Color))


def test_the_tag_is_the_first_field_that_tells_the_members_apart() -> None:
    @dataclasses.dataclass(frozen=True)
    class A:
        version: Literal[1]
        kind: Literal["a"]

    @dataclasses.dataclass(frozen=True)
    class B:
        version: Literal[1]
        kind: Literal["b"]

    model = analyze_type(A | B, limits=Limits())
    assert model.tags == (model.tags[0],) and model.tags[0].name == "kind"
    assert model.tags[0].attrs == ("kind", "kind") and model.tags[0].values == (("a",), ("b",))


def test_an_object_union_is_no_input_root_but_may_be_an_output_root() -> None:
    with pytest.raises(SchemaError, match="cannot be a tool input"):
        derive_input(Cat | Dog)
    assert doc(derive_output(Cat | Dog | None)) == {
        "anyOf": [
            {
                "type": "object",
                "properties": {
                    "kind": {"type": "string", "enum": ["cat"]},
                    "lives": {"type": "integer"},
                },
                "required": ["kind"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {
                    "kind": {"type": "string", "enum": ["dog", "puppy"]},
                    "good": {"type": "boolean"},
                },
                "required": ["kind"],
                "additionalProperties": False,
            },
            {"type": "null"},
        ]
    }
    assert derive_output(Cat | Dog | None).to_json(None) is None
    assert derive_output(str | int).to_json("a") == "a"


# --- locate: the walk that says where, on values binding never hands it -----------------------


def test_locate_skips_what_does_not_fit_and_returns_none_when_nothing_is_malformed() -> None:
    @dataclasses.dataclass(frozen=True)
    class Shapes:
        a: list[int]
        b: dict[str, int]
        c: Cat | Dog
        d: Cat
        e: Color
        f: str | int
        g: dt.date | bool

    model = analyze_type(Shapes, limits=Limits())
    wrong = {"a": 1, "b": 2, "c": 3, "d": 4, "e": "red", "f": None, "g": True}
    assert _formats.locate(model, wrong) is None
    assert _formats.locate(model, {**wrong, "c": {"kind": "cow"}}) is None
    assert _formats.locate(model, {**wrong, "g": "2024-01-01"}) is None
    assert _formats.locate(model, {**wrong, "f": 5, "g": 5}) is None
    assert _formats.locate(model, {**wrong, "g": "x"}) == f"g: {_formats.PROBLEMS['date']}"
    assert _formats.locate(analyze_type(Meeting, limits=Limits()), [1]) is None


def test_a_misformatted_root_is_said_as_arguments() -> None:
    model = analyze_type(dict[str, list[dt.date]], limits=Limits())
    assert _formats.locate(model, {"k": ["x"]}) == f"*[0]: {_formats.PROBLEMS['date']}"
    assert _formats._where([]) == "arguments"


def test_the_type_model_records_kinds_and_json_types() -> None:
    assert ti.JSON_TYPES["uuid"] == "string" and ti.FORMATS["datetime"] == "date-time"
    assert not ti.is_model(int)
    assert ti.is_typeddict(Bird) and not ti.is_typeddict(Cat)
