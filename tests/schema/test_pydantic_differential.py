"""mcpkit against pydantic's strict mode, on the same models and the same JSON text.

For each representative model a corpus of JSON inputs, hand-written edge cases and
hypothesis-generated ones, is given to mcpkit (``InputModel.bind`` on the decoded JSON) and to
``Model.model_validate_json(text, strict=True)``.  Where both accept, the bound values are
compared field by field.  Where they disagree, the disagreement must be one of ``RULES``, each
explained below and recognised by what the input holds; any other disagreement fails.

A generated input is a valid object (both accept it, and bind the same values) with at most one
change: one member replaced by a hostile value, one member removed or one member added.  So a
disagreement always has one cause, which its rule must name.
"""

from __future__ import annotations

import datetime as dt
import enum
import re
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final, Literal, Optional

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, conint, constr

from mcpkit.errors import ArgumentsInvalid
from mcpkit.json import JsonObject, decode, encode, from_python
from mcpkit.schema import _formats
from mcpkit.schema._typed import InputModel, derive_input

UTC = dt.UTC
MAX_DOUBLE: Final = Decimal("1.7976931348623157E+308")


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Size(enum.IntEnum):
    S = 1
    M = 2


class Bounded(BaseModel):
    n: int = Field(ge=-10, le=10)
    m: conint(gt=0, lt=100) = 1  # type: ignore[valid-type]
    big: int = 0


class Text(BaseModel):
    code: str = Field(min_length=2, max_length=5, pattern=r"^[a-z]+$")
    free: str = ""
    word: constr(pattern=r"^\w+$") = "w"  # type: ignore[valid-type]


class Stamps(BaseModel):
    at: dt.datetime
    on: dt.date
    id: uuid.UUID
    price: Decimal
    ratio: float = 0.0


class Opt(BaseModel):
    a: int | None = None
    b: Optional[str]  # noqa: UP045  # pydantic: required and nullable


class Inner(BaseModel):
    x: int = Field(ge=0)
    y: str = "y"


class Nested(BaseModel):
    inner: Inner
    items: list[Inner] = []


class Choice(BaseModel):
    key: str | int
    lit: Literal["a", "b", 1]
    color: Color
    size: Size


MODELS: Final[tuple[type[BaseModel], ...]] = (Bounded, Text, Stamps, Opt, Nested, Choice)
INPUTS: Final[dict[type[BaseModel], InputModel]] = {cls: derive_input(cls) for cls in MODELS}

# What each field is, for the rules and the strategies.
KINDS: Final[dict[type[BaseModel], dict[str, str]]] = {
    Bounded: {"n": "small", "m": "percent", "big": "int"},
    Text: {"code": "code", "free": "str", "word": "word"},
    Stamps: {"at": "datetime", "on": "date", "id": "uuid", "price": "decimal", "ratio": "float"},
    Opt: {"a": "optional int", "b": "optional str"},
    Nested: {"inner": "inner", "items": "inners"},
    Choice: {"key": "str|int", "lit": "literal", "color": "color", "size": "size"},
}
INTEGERS: Final = frozenset({"small", "percent", "int", "optional int", "str|int", "size"})


# --- the disagreements, each explained ---------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    mcpkit_accepts: bool  # the direction: mcpkit accepts and pydantic refuses, or the reverse
    why: str


RULES: Final = {
    "integral": Rule(
        True,
        "an integral number written with a fraction or an exponent (1.0, 1E+2) for an int, an "
        "IntEnum or a Literal int: JSON Schema's integer is any integral number, and mcpkit "
        "binds it to int; pydantic strict wants an integer spelling",
    ),
    "datetime": Rule(
        False,
        "a date-time without a time zone (naive), with ' ' or '_' for 'T', without seconds, "
        "with a +HHMM or +HH offset, or a number of seconds in a string: pydantic reads these, "
        "RFC 3339 (the published format) does not",
    ),
    "date": Rule(
        False,
        'a date given as a whole day\'s number of seconds since 1970 in a string ("86400"): '
        "pydantic reads it, RFC 3339's full-date does not",
    ),
    "uuid": Rule(
        False,
        "a UUID without hyphens, in braces or as a urn:uuid: URN: pydantic reads these, mcpkit "
        "takes the canonical 8-4-4-4-12 form only",
    ),
    "decimal string": Rule(
        False,
        'a Decimal given as a JSON string ("1.5", "1E+400"): pydantic strict takes it, the '
        "schema says number",
    ),
    "decimal double": Rule(
        True,
        "a Decimal beyond the largest double (1E+400): pydantic reads a JSON number through a "
        "double and refuses the infinity; mcpkit keeps the exact number",
    ),
    "float overflow": Rule(
        False,
        "a float beyond the largest double: pydantic makes it inf; the schema's maximum "
        "(1.7976931348623157E+308) refuses it",
    ),
    "null optional": Rule(
        False,
        "null for a T | None property: pydantic allows it; mcpkit makes such a property "
        "optional, not nullable",
    ),
    "missing optional": Rule(
        True,
        "an absent Optional[T] field without a default: pydantic requires it (nullable and "
        "required); mcpkit makes it optional and binds None",
    ),
    "extra member": Rule(
        False,
        "an undeclared member: the published schema says additionalProperties false; "
        "pydantic's default extra='ignore' drops it",
    ),
    "boolean for a number": Rule(
        False,
        "true or false for a Literal 1 member or an IntEnum: pydantic compares by Python "
        "equality (True == 1); JSON never equates a boolean with a number, nor does the "
        "schema's enum",
    ),
    "pattern dialect": Rule(
        False,
        "a non-ASCII word character for \\w: Profile 1 patterns are ECMA-262, where \\w is "
        "ASCII; pydantic's Rust regex \\w is Unicode",
    ),
}

_LENIENT_DATETIME: Final = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt _][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?"
    r"([Zz]|[+-][0-9]{2}(:?[0-9]{2})?)?"
)
_SECONDS: Final = re.compile(r"-?[0-9]+(\.[0-9]+)?")
_LENIENT_UUID: Final = re.compile(r"(urn:uuid:)?\{?[0-9A-Fa-f-]{32,36}\}?")


def _integral(value: object) -> bool:
    return isinstance(value, Decimal) and value.is_finite() and value == value.to_integral_value()


def triggered(kind: str, value: object) -> set[str]:
    """The rules an input value of ``kind`` may trip (nested objects included)."""
    found: set[str] = set()
    if (kind in INTEGERS or kind == "literal") and _integral(value):
        found.add("integral")
    if kind in ("literal", "size") and isinstance(value, bool):
        found.add("boolean for a number")
    if isinstance(value, str):
        lenient = _LENIENT_DATETIME.fullmatch(value) or _SECONDS.fullmatch(value)
        if kind == "datetime" and _formats.parse("datetime", value) is None and lenient:
            found.add("datetime")
        if kind == "date" and _SECONDS.fullmatch(value):
            found.add("date")
        if (
            kind == "uuid"
            and _formats.parse("uuid", value) is None
            and _LENIENT_UUID.fullmatch(value)
        ):
            found.add("uuid")
        if kind == "decimal":  # mcpkit binds no string to a Decimal
            found.add("decimal string")
        if kind == "word" and not value.isascii():
            found.add("pattern dialect")
    if kind in ("decimal", "float") and isinstance(value, Decimal) and abs(value) > MAX_DOUBLE:
        found.add("decimal double" if kind == "decimal" else "float overflow")
    if kind.startswith("optional") and value is None:
        found.add("null optional")
    if kind == "inner" and isinstance(value, dict):
        if set(value) - {"x", "y"}:
            found.add("extra member")
        found |= triggered("int", value.get("x"))
    if kind == "inners" and isinstance(value, list | tuple):
        for item in value:
            found |= triggered("inner", item)
    return found


# --- running both --------------------------------------------------------------------------------


def run_mcpkit(cls: type[BaseModel], text: str) -> BaseModel | None:
    value = decode(text.encode())
    assert isinstance(value, JsonObject)
    try:
        bound = INPUTS[cls].bind(value)
    except ArgumentsInvalid:
        return None
    assert isinstance(bound, cls)
    return bound


def run_pydantic(cls: type[BaseModel], text: str) -> BaseModel | None:
    try:
        return cls.model_validate_json(text, strict=True)
    except pydantic.ValidationError:
        return None


def same_values(cls: type[BaseModel], mine: BaseModel, theirs: BaseModel) -> None:
    """Field by field; a Decimal may differ only as pydantic's reading through a double does."""
    for name in cls.model_fields:
        ours, other = getattr(mine, name), getattr(theirs, name)
        if isinstance(ours, Decimal) and ours != other:
            assert other == Decimal(repr(float(ours))), (name, ours, other)
            continue
        assert type(ours) is type(other) or isinstance(ours, BaseModel), (name, ours, other)
        assert ours == other, (name, ours, other)
        if isinstance(ours, dt.datetime):
            assert ours.utcoffset() == other.utcoffset(), (name, ours, other)


def compare(cls: type[BaseModel], text: str, causes: set[str]) -> str | None:
    """Run both; return the rule that explains a disagreement (None when they agree)."""
    mine, theirs = run_mcpkit(cls, text), run_pydantic(cls, text)
    if mine is not None and theirs is not None:
        same_values(cls, mine, theirs)
        return None
    if (mine is None) == (theirs is None):
        return None
    fitting = [name for name in sorted(causes) if RULES[name].mcpkit_accepts == (mine is not None)]
    assert fitting, (
        f"unlisted disagreement on {cls.__name__} {text}: mcpkit {mine}, pydantic {theirs}"
    )
    return fitting[0]


def causes_of(cls: type[BaseModel], value: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    for name, member in value.items():
        kind = KINDS[cls].get(name)
        found |= {"extra member"} if kind is None else triggered(kind, member)
    if cls is Opt and "b" not in value:
        found.add("missing optional")
    return found


# --- hand-written edge cases: each with both outcomes and the rule, if any ---------------------

OK, NO = True, False
VARIES: Final = (
    None  # pydantic's outcome changed between releases (the rule applies when it differs)
)
STAMP: Final = {
    "at": "2024-01-31T09:30:00Z",
    "on": "2024-01-01",
    "id": "123e4567-e89b-12d3-a456-426614174000",
    "price": 1,
}


def stamps(**changes: object) -> str:
    return encode(from_python({**STAMP, **changes})).decode()


EDGES: Final[list[tuple[type[BaseModel], str, bool, bool | None, str | None]]] = [
    (Bounded, '{"n": 1}', OK, OK, None),
    (Bounded, '{"n": -10, "m": 99, "big": 123456789012345678901234567890}', OK, OK, None),
    (Bounded, '{"n": -0}', OK, OK, None),
    (Bounded, '{"n": 1.0}', OK, NO, "integral"),
    (Bounded, '{"n": 1E+0}', OK, NO, "integral"),
    (Bounded, '{"n": 1, "big": 1e2}', OK, NO, "integral"),
    (Bounded, '{"n": "2"}', NO, NO, None),
    (Bounded, '{"n": 1.5}', NO, NO, None),
    (Bounded, '{"n": true}', NO, NO, None),
    (Bounded, '{"n": null}', NO, NO, None),
    (Bounded, '{"n": 11}', NO, NO, None),
    (Bounded, '{"n": 1, "m": 0}', NO, NO, None),
    (Bounded, '{"n": 1, "m": 100}', NO, NO, None),
    (Bounded, "{}", NO, NO, None),
    (Bounded, '{"n": 1, "extra": 1}', NO, OK, "extra member"),
    (Text, '{"code": "ab"}', OK, OK, None),
    (Text, '{"code": "abcde", "free": "\\u00e9\\ud83d\\ude00", "word": "a_1"}', OK, OK, None),
    (Text, '{"code": "a"}', NO, NO, None),
    (Text, '{"code": "abcdef"}', NO, NO, None),
    (Text, '{"code": "AB"}', NO, NO, None),
    (Text, '{"code": "ab\\n"}', NO, NO, None),
    (Text, '{"code": 12}', NO, NO, None),
    (Text, '{"code": "ab", "word": ""}', NO, NO, None),
    (Text, '{"code": "ab", "word": "\\u00e9t\\u00e9"}', NO, OK, "pattern dialect"),
    (Stamps, stamps(price=Decimal("1.50")), OK, OK, None),
    (Stamps, stamps(at="2024-01-31t09:30:00.123456789-05:30", on="0001-01-01"), OK, OK, None),
    (Stamps, stamps(id="123E4567-E89B-12D3-A456-426614174000", ratio=Decimal("-0")), OK, OK, None),
    (Stamps, stamps(price=Decimal("0.1000000000000000055511151231257827")), OK, OK, None),
    (Stamps, stamps(at="2024-01-31T09:30:00"), NO, OK, "datetime"),
    (Stamps, stamps(at="2024-01-31 09:30:00Z"), NO, OK, "datetime"),
    (Stamps, stamps(at="2024-01-31T09:30Z"), NO, OK, "datetime"),
    (Stamps, stamps(at="2024-01-31T09:30:00+0530"), NO, OK, "datetime"),
    (Stamps, stamps(at="1700000000"), NO, OK, "datetime"),
    (Stamps, stamps(at="2024-01-31T23:59:60Z"), NO, NO, None),
    (Stamps, stamps(at="2024-01-31T09:30:00+24:00"), NO, NO, None),
    (Stamps, stamps(at=1700000000), NO, NO, None),
    (Stamps, stamps(on="2024-02-30"), NO, NO, None),
    (Stamps, stamps(on="2024-1-1"), NO, NO, None),
    (Stamps, stamps(on="86400"), NO, OK, "date"),
    (Stamps, stamps(id="123e4567e89b12d3a456426614174000"), NO, OK, "uuid"),
    (Stamps, stamps(id="{123e4567-e89b-12d3-a456-426614174000}"), NO, OK, "uuid"),
    (Stamps, stamps(id="123e4567-e89b-12d3-a456-42661417400g"), NO, NO, None),
    (Stamps, stamps(price="1.5"), NO, OK, "decimal string"),
    (Stamps, stamps(price=Decimal("1E+400")), OK, NO, "decimal double"),
    (Stamps, stamps(ratio=Decimal("1E+400")), NO, OK, "float overflow"),
    (Stamps, stamps(ratio="1.0"), NO, NO, None),
    (Opt, '{"b": "x"}', OK, OK, None),
    (Opt, '{"a": 3, "b": ""}', OK, OK, None),
    (Opt, "{}", OK, NO, "missing optional"),
    (Opt, '{"b": null}', NO, OK, "null optional"),
    (Opt, '{"a": null, "b": "x"}', NO, OK, "null optional"),
    (Opt, '{"a": 2.0, "b": "x"}', OK, NO, "integral"),
    (Nested, '{"inner": {"x": 1}}', OK, OK, None),
    (Nested, '{"inner": {"x": 1, "y": "z"}, "items": [{"x": 2}, {"x": 3, "y": ""}]}', OK, OK, None),
    (Nested, '{"inner": {"x": -1}}', NO, NO, None),
    (Nested, '{"inner": {"y": "z"}}', NO, NO, None),
    (Nested, '{"inner": [1]}', NO, NO, None),
    (Nested, '{"inner": {"x": 1}, "items": {"x": 1}}', NO, NO, None),
    (Nested, '{"inner": {"x": 1, "z": 1}}', NO, OK, "extra member"),
    (Nested, '{"inner": {"x": 1}, "items": [{"x": 2.0}]}', OK, NO, "integral"),
    (Choice, '{"key": 1, "lit": 1, "color": "red", "size": 1}', OK, OK, None),
    (Choice, '{"key": "1", "lit": "a", "color": "blue", "size": 2}', OK, OK, None),
    (Choice, '{"key": 1.0, "lit": "a", "color": "red", "size": 1}', OK, NO, "integral"),
    (Choice, '{"key": 1, "lit": 1.0, "color": "red", "size": 1}', OK, OK, None),
    # pydantic 2.11 refuses 2.0 for an IntEnum, 2.14 takes it
    (Choice, '{"key": 1, "lit": "a", "color": "red", "size": 2.0}', OK, VARIES, "integral"),
    (Choice, '{"key": true, "lit": "a", "color": "red", "size": 1}', NO, NO, None),
    (Choice, '{"key": 1.5, "lit": "a", "color": "red", "size": 1}', NO, NO, None),
    (Choice, '{"key": null, "lit": "a", "color": "red", "size": 1}', NO, NO, None),
    (Choice, '{"key": 1, "lit": true, "color": "red", "size": 1}', NO, OK, "boolean for a number"),
    # pydantic 2.11 refuses true for an IntEnum, 2.14 takes it as the member 1
    (
        Choice,
        '{"key": 1, "lit": "a", "color": "red", "size": true}',
        NO,
        VARIES,
        "boolean for a number",
    ),
    (Choice, '{"key": 1, "lit": "a", "color": "red", "size": false}', NO, NO, None),
    (Choice, '{"key": 1, "lit": "c", "color": "red", "size": 1}', NO, NO, None),
    (Choice, '{"key": 1, "lit": "a", "color": "RED", "size": 1}', NO, NO, None),
    (Choice, '{"key": 1, "lit": "a", "color": "red", "size": 3}', NO, NO, None),
    (Choice, '{"key": 1, "lit": "a", "color": "red", "size": "1"}', NO, NO, None),
]


@pytest.mark.parametrize(("cls", "text", "mcpkit", "pydantic_", "rule"), EDGES)
def test_hand_written_edge_cases(
    cls: type[BaseModel], text: str, mcpkit: bool, pydantic_: bool | None, rule: str | None
) -> None:
    mine, theirs = run_mcpkit(cls, text) is not None, run_pydantic(cls, text) is not None
    assert mine == mcpkit
    assert pydantic_ is VARIES or theirs == pydantic_
    value = decode(text.encode())
    assert isinstance(value, JsonObject)
    found = compare(cls, text, causes_of(cls, dict(value)))
    assert found == (rule if theirs != mine else None)


def test_every_rule_is_exercised_by_an_edge_case() -> None:
    assert {edge[4] for edge in EDGES} - {None} == set(RULES)


# --- generated inputs ----------------------------------------------------------------------------

_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=8)
_OFFSETS = [
    UTC,
    dt.timezone(dt.timedelta(hours=5, minutes=30)),
    dt.timezone(dt.timedelta(hours=-8)),
]


def _datetime_text(value: dt.datetime, digits: int, zulu: bool) -> str:
    text = value.strftime("%Y-%m-%dT%H:%M:%S")
    if digits:
        text += "." + f"{value.microsecond:06d}"[:digits]
    offset = value.utcoffset()
    assert offset is not None
    if zulu and not offset:
        return text + "Z"
    minutes = int(offset.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    return f"{text}{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


_DATETIMES = st.builds(
    _datetime_text,
    st.datetimes(
        min_value=dt.datetime(1900, 1, 2),
        max_value=dt.datetime(2100, 12, 30),
        timezones=st.sampled_from(_OFFSETS),
    ),
    st.integers(0, 6),
    st.booleans(),
)
_UUIDS = st.builds(lambda u, upper: str(u).upper() if upper else str(u), st.uuids(), st.booleans())
_INNER = st.fixed_dictionaries({"x": st.integers(0, 10**6)}, optional={"y": _TEXT})

VALID: Final[dict[str, st.SearchStrategy[Any]]] = {
    "small": st.integers(-10, 10),
    "percent": st.integers(1, 99),
    "int": st.integers(),
    "code": st.from_regex(r"[a-z]{2,5}", fullmatch=True),
    "str": _TEXT,
    "word": st.from_regex(r"[A-Za-z0-9_]{1,8}", fullmatch=True),
    "datetime": _DATETIMES,
    "date": st.dates().map(dt.date.isoformat),
    "uuid": _UUIDS,
    "decimal": st.decimals(
        allow_nan=False, allow_infinity=False, min_value=-(10**9), max_value=10**9
    ),
    "float": st.floats(allow_nan=False, allow_infinity=False).map(lambda f: Decimal(repr(f))),
    "optional int": st.integers(),
    "optional str": _TEXT,
    "inner": _INNER,
    "inners": st.lists(_INNER, max_size=3),
    "str|int": st.one_of(_TEXT, st.integers()),
    "literal": st.sampled_from(["a", "b", 1]),
    "color": st.sampled_from(["red", "blue"]),
    "size": st.sampled_from([1, 2]),
}
REQUIRED: Final = {
    Bounded: {"n"},
    Text: {"code"},
    Stamps: {"at", "on", "id", "price"},
    Opt: {"b"},
    Nested: {"inner"},
    Choice: {"key", "lit", "color", "size"},
}

_NUMBERS = st.one_of(
    st.integers(-(10**30), 10**30),
    st.decimals(allow_nan=False, allow_infinity=False),
    st.integers(-200, 200).map(lambda n: Decimal(f"{n}.0")),
    st.integers(-200, 200).map(lambda n: Decimal(f"{n}E+0")),
    st.sampled_from([Decimal("1E+400"), Decimal("-1E+400"), Decimal("1E-400"), Decimal("-0")]),
)
_SCALARS = st.one_of(st.none(), st.booleans(), _NUMBERS, _TEXT)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["x", "y", "z"]), inner, max_size=3),
    ),
    max_leaves=6,
)


def _spelled_datetime() -> st.SearchStrategy[str]:
    """Date-times in many spellings, RFC 3339 and not."""
    return st.builds(
        lambda date, sep, time, seconds, fraction, zone: (
            f"{date}{sep}{time}{seconds}{fraction}{zone}"
        ),
        st.sampled_from(
            ["2024-01-31", "2024-02-29", "2023-02-29", "0000-01-01", "2024-1-31", "9999-12-31"]
        ),
        st.sampled_from(["T", "t", " ", "_", ""]),
        st.sampled_from(["09:30", "23:59", "24:00", "9:30"]),
        st.sampled_from([":00", ":59", ":60", ""]),
        st.sampled_from(["", ".1", ".123456", ".1234567", "."]),
        st.sampled_from(
            ["Z", "z", "+05:30", "-08:00", "+0530", "+05", "", "+24:00", "+23:59", "-00:00"]
        ),
    )


def _spelled_uuid() -> st.SearchStrategy[str]:
    """UUIDs in the canonical form (either case) and in the forms only pydantic reads."""
    return st.builds(
        lambda u, form: form.format(u=u, h=u.hex, H=str(u).upper(), s=str(u)[:-1]),
        st.uuids(),
        st.sampled_from(["{u}", "{H}", "{h}", "{{{u}}}", "urn:uuid:{u}", "{u}0", "{s}", "{u} "]),
    )


_SECONDS_TEXT = st.from_regex(r"-?[0-9]{1,12}(\.[0-9]{1,3})?", fullmatch=True)
HOSTILE: Final[dict[str, st.SearchStrategy[Any]]] = {
    "datetime": st.one_of(_spelled_datetime(), _SECONDS_TEXT),
    "date": st.one_of(
        st.sampled_from(
            ["2024-02-30", "2024-1-1", "20240101", "2024-01-01T00:00:00Z", "0000-01-01"]
        ),
        _SECONDS_TEXT,
    ),
    "uuid": _spelled_uuid(),
    "decimal": st.one_of(_NUMBERS.map(str), st.sampled_from([" 1", "1e5", "NaN", "abc"])),
    "word": st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=4),
    "code": st.text(st.characters(exclude_categories=["Cs"]), max_size=7),
    "inner": st.fixed_dictionaries({"x": _NUMBERS}, optional={"y": _JSON, "z": _JSON}),
    "literal": st.one_of(st.booleans(), _NUMBERS, st.sampled_from(["A", "c", ""])),
    "size": st.one_of(st.booleans(), _NUMBERS, st.sampled_from(["1", "S"])),
    "color": st.sampled_from(["RED", "Red", "", "green", "1"]),
    "optional int": st.one_of(st.none(), _NUMBERS),
    "optional str": st.one_of(st.none(), st.integers()),
}
HOSTILE["inners"] = st.lists(HOSTILE["inner"], max_size=2)
for _kind in INTEGERS - set(HOSTILE):  # numbers in every spelling, digits in a string, booleans
    HOSTILE[_kind] = st.one_of(_NUMBERS, st.integers().map(str), st.booleans())


@st.composite
def cases(draw: st.DrawFn) -> tuple[type[BaseModel], dict[str, Any]]:
    cls = draw(st.sampled_from(MODELS))
    kinds = KINDS[cls]
    value: dict[str, Any] = {}
    for name, kind in kinds.items():
        if name in REQUIRED[cls] or draw(st.booleans()):
            value[name] = draw(VALID[kind])
    change = draw(st.sampled_from(["none", "replace", "near miss", "near miss", "remove", "add"]))
    if change in ("replace", "near miss"):
        name = draw(st.sampled_from(sorted(kinds)))
        kind = kinds[name]
        value[name] = draw(_JSON if change == "replace" else HOSTILE.get(kind, _JSON))
    elif change == "remove" and value:
        del value[draw(st.sampled_from(sorted(value)))]
    elif change == "add":
        value["zz"] = draw(_JSON)
    return cls, value


@settings(max_examples=1_500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_generated_inputs_agree_or_the_disagreement_is_listed(
    case: tuple[type[BaseModel], dict[str, Any]],
) -> None:
    cls, value = case
    text = encode(from_python(value)).decode()
    compare(cls, text, causes_of(cls, value))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_valid_inputs_bind_the_same_values(data: st.DataObject) -> None:
    """Inputs built from valid members only: both accept, and bind equal values."""
    cls = data.draw(st.sampled_from(MODELS))
    value = {name: data.draw(VALID[kind]) for name, kind in KINDS[cls].items()}
    text = encode(from_python(value)).decode()
    mine, theirs = run_mcpkit(cls, text), run_pydantic(cls, text)
    assert mine is not None and theirs is not None, text
    same_values(cls, mine, theirs)
