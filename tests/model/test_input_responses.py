"""What a client sends back on a multi-round retry: the wire check of ``inputResponses`` and the
typed views a handler reads (HC-08).

The wire check is compared with the official 2026-07-28 schema, read *open* (result objects
allow members the schema does not name), on a corpus and on mutations of it.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
from decimal import Decimal
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpkit.errors import InvalidParams, InvalidValueError
from mcpkit.json import JsonArray, JsonObject, decode, encode
from mcpkit.model import (
    ElicitationResponse,
    Role,
    Root,
    RootsResponse,
    SamplingResponse,
    check_input_responses,
)

from ..spec_schemas import SCHEMAS

SECRET = "SECRET-7f3a"
TEXT = {"type": "text", "text": "Paris."}
ELICIT = {"action": "accept", "content": {"name": "octocat", "age": 30}}
SAMPLE = {"role": "assistant", "content": TEXT, "model": "m", "stopReason": "endTurn"}
ROOTS = {"roots": [{"uri": "file:///repo", "name": "Repo"}, {"uri": "file:///b"}]}
TOOL_RESULT = {
    "type": "tool_result",
    "toolUseId": "call_1",
    "content": [
        {"type": "text", "text": "18C", "annotations": {"audience": ["user"], "priority": 0.5}},
        {"type": "image", "data": "iVBO", "mimeType": "image/png"},
        {"type": "audio", "data": "UklG", "mimeType": "audio/wav", "_meta": {"k": 1}},
        {"type": "resource_link", "uri": "file:///a", "name": "a", "size": 3, "title": "A",
         "icons": [{"src": "https://x/i.png", "sizes": ["48x48"], "theme": "dark"}]},
        {"type": "resource", "resource": {"uri": "file:///r", "text": "hi"}},
        {"type": "resource", "resource": {"uri": "file:///b", "blob": "AAE=", "mimeType": "x/y"}},
    ],
    "structuredContent": [1, {"any": None}],
    "isError": False,
}  # fmt: skip

VALID: list[Any] = [
    {"action": "accept"},
    {"action": "decline"},
    {"action": "cancel", "vendor": {"extra": True}},
    ELICIT,
    {"action": "accept", "content": {}},
    {"action": "accept", "content": {"s": "", "n": -1, "d": 2.5, "b": False, "a": [], "x": ["a"]}},
    {"action": "decline", "content": {"ignored": "by the handler"}},
    SAMPLE,
    {"role": "user", "content": {"type": "image", "data": "iVBO", "mimeType": "image/png"},
     "model": "m"},
    {"role": "assistant", "content": [], "model": "m", "_meta": {"com.example/x": 1}},
    {"role": "assistant", "model": "m", "content": [
        {"type": "tool_use", "id": "c1", "name": "get_weather", "input": {"city": "Paris"}},
        TOOL_RESULT,
        {"type": "audio", "data": "", "mimeType": "audio/wav", "annotations": {}},
    ]},
    {"role": "assistant", "content": {**TEXT, "annotations": {"lastModified": "2025-01-01"}},
     "model": "m", "stopReason": "vendor-specific"},
    ROOTS,
    {"roots": []},
    {"roots": [{"uri": "file:///x", "_meta": {}, "vendor": 1}]},
    {"roots": [], "action": "nonsense"},  # a ListRootsResult with an extra member
]  # fmt: skip

INVALID: list[Any] = [
    None,
    "accept",
    [],
    {},
    {"action": "ACCEPT"},
    {"action": None},
    {"action": "accept", "content": None},
    {"action": "accept", "content": []},
    {"action": "accept", "content": {"n": None}},
    {"action": "accept", "content": {"o": {"nested": "x"}}},
    {"action": "accept", "content": {"mixed": ["a", 1]}},
    {"action": "accept", "content": {"arr": [["a"]]}},
    {"role": "system", "content": TEXT, "model": "m"},
    {"role": "assistant", "content": TEXT},
    {"role": "assistant", "content": TEXT, "model": 1},
    {"role": "assistant", "content": TEXT, "model": "m", "stopReason": None},
    {"role": "assistant", "content": TEXT, "model": "m", "_meta": []},
    {"role": "assistant", "content": "Paris", "model": "m"},
    {"role": "assistant", "content": {"type": "text"}, "model": "m"},
    {"role": "assistant", "content": {"type": "video", "data": "x"}, "model": "m"},
    {"role": "assistant", "content": {"text": "no type"}, "model": "m"},
    {"role": "assistant", "content": {"type": 1, "text": "x"}, "model": "m"},
    {"role": "assistant", "content": {"type": "image", "data": "x"}, "model": "m"},
    {"role": "assistant", "content": {**TEXT, "annotations": {"priority": 2}}, "model": "m"},
    {"role": "assistant", "content": {**TEXT, "annotations": {"audience": ["bot"]}}, "model": "m"},
    {"role": "assistant", "content": {**TEXT, "annotations": []}, "model": "m"},
    {"role": "assistant", "content": {**TEXT, "_meta": "x"}, "model": "m"},
    {"role": "assistant", "content": [TEXT, "x"], "model": "m"},
    {"role": "assistant", "content": [[TEXT]], "model": "m"},
    {"role": "assistant", "content": {"type": "resource_link", "uri": "u", "name": "n"},
     "model": "m"},  # not a sampling block
    {"role": "assistant", "content": {"type": "tool_use", "id": "c", "name": "n", "input": []},
     "model": "m"},
    {"role": "assistant", "content": {**TOOL_RESULT, "isError": "no"}, "model": "m"},
    {"role": "assistant", "content": {**TOOL_RESULT, "content": [TEXT, {"type": "tool_use"}]},
     "model": "m"},
    {"role": "assistant", "content": {**TOOL_RESULT, "content": [
        {"type": "resource", "resource": {"uri": "file:///r"}}]}, "model": "m"},
    {"role": "assistant", "content": {**TOOL_RESULT, "content": [
        {"type": "resource_link", "uri": "u", "name": "n", "size": 1.5}]}, "model": "m"},
    {"role": "assistant", "content": {**TOOL_RESULT, "content": [
        {"type": "resource_link", "uri": "u", "name": "n", "icons": [{"src": "s",
                                                                      "theme": "blue"}]}]},
     "model": "m"},
    {"roots": None},
    {"roots": {}},
    {"roots": ["file:///x"]},
    {"roots": [{"name": "no uri"}]},
    {"roots": [{"uri": "file:///x", "name": None}]},
    {"roots": [{"uri": "file:///x", "_meta": 1}]},
]  # fmt: skip


@functools.cache
def _open_validator() -> Any:
    """The official schema as written (open objects), with one deliberate difference: an
    elicitation ``content`` number may have a fraction (see ``check_input_responses``)."""
    document = json.loads((SCHEMAS / "2026-07-28.json").read_text(encoding="utf-8"))
    content = document["$defs"]["ElicitResult"]["properties"]["content"]
    scalar = content["additionalProperties"]["anyOf"][1]
    assert scalar == {"type": ["string", "integer", "boolean"]}
    scalar["type"] = ["string", "number", "boolean"]
    validator_class = jsonschema.validators.validator_for(document)
    return validator_class({**document, "$ref": "#/$defs/InputResponse"})


def _any(value: object) -> Any:
    """Pass a deliberately wrong value past the type checker."""
    return value


def _schema_valid(response: Any) -> bool:
    plain = json.loads(encode(JsonObject({"r": response})))["r"]
    return bool(_open_validator().is_valid(plain))


def _ours_valid(response: Any) -> bool:
    try:
        check_input_responses({"k": response})
    except InvalidParams:
        return False
    return True


@pytest.mark.parametrize("response", VALID)
def test_hc_08_valid_input_responses(response: Any) -> None:
    assert _schema_valid(response)
    checked = check_input_responses({"a": response, "b": ELICIT})
    assert type(checked) is JsonObject and checked == {"a": response, "b": ELICIT}


@pytest.mark.parametrize("response", INVALID)
def test_hc_08_invalid_input_responses_are_invalid_params(response: Any) -> None:
    """Wire validation: a value that is none of the three results is ``-32602`` with the fixed
    message, before the handler runs."""
    assert not _schema_valid(response)
    with pytest.raises(InvalidParams) as caught:
        check_input_responses({"good": ELICIT, "bad": response})
    assert str(caught.value) == "Invalid params" and caught.value.data is None


def test_hc_08_the_official_examples_pass() -> None:
    folder = SCHEMAS / "examples-2026-07-28"
    responses = json.loads((folder / "InputResponses").glob("*.json").__next__().read_text())
    assert check_input_responses(responses) == responses
    for kind in ("ElicitResult", "CreateMessageResult", "ListRootsResult"):
        for path in sorted((folder / kind).glob("*.json")):
            assert _ours_valid(json.loads(path.read_text())), path.name


def test_hc_08_the_decoded_object_is_returned_as_is() -> None:
    """The server passes what the codec decoded: no copy is made."""
    decoded = decode(b'{"q": {"action": "accept", "content": {"n": 1.50}}}')
    assert isinstance(decoded, JsonObject)
    assert check_input_responses(decoded) is decoded
    answer: Any = check_input_responses(decoded)["q"]
    assert answer["content"]["n"] == Decimal("1.50")
    assert check_input_responses({}) == {}


@pytest.mark.parametrize(
    "value",
    [None, [], "x", [("k", ELICIT)], {"k": {SECRET}}, {1: ELICIT}, {"k": float("inf")}],
)
def test_hc_08_input_responses_must_be_a_json_object(value: Any) -> None:
    with pytest.raises(InvalidParams) as caught:
        check_input_responses(value)
    assert SECRET not in str(caught.value)


def test_hc_08_the_work_is_linear_in_the_input() -> None:
    """Many responses, many roots and many blocks are checked in one pass each."""
    many = 20_000
    responses = {
        "roots": {"roots": [{"uri": f"file:///{i}"} for i in range(many)]},
        "blocks": {"role": "assistant", "model": "m", "content": [TEXT] * many},
        **{f"e{i}": {"action": "accept", "content": {"v": ["a"] * 3}} for i in range(many)},
    }
    assert len(check_input_responses(responses)) == many + 2


# --- differential: mutations of the corpus -------------------------------------------------------

_WORDS = st.sampled_from(
    ["accept", "cancel", "user", "assistant", "text", "image", "tool_use", "tool_result",
     "resource_link", "resource", "dark", "file:///x", ""]
)  # fmt: skip
_SCALARS = st.one_of(
    _WORDS,
    st.booleans(),
    st.none(),
    st.integers(-2, 3),
    st.decimals(min_value=-2, max_value=2, places=1),
)
_NAMES = st.sampled_from(
    ["action", "content", "role", "model", "stopReason", "roots", "uri", "name", "type", "text",
     "data", "mimeType", "id", "input", "toolUseId", "isError", "resource", "blob", "_meta",
     "annotations", "priority", "audience", "size", "icons", "src", "theme"]
)  # fmt: skip
_JSON = st.recursive(
    _SCALARS,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_NAMES, children, max_size=4),
    max_leaves=12,
)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, member in value.items():
            found += _paths(member, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*path, index))
    return found


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_hc_08_the_wire_check_agrees_with_the_schema(data: st.DataObject) -> None:
    """Replace or drop one member anywhere in a valid response: the wire check accepts it
    exactly when the (open) official schema does, and never raises anything but
    ``InvalidParams``."""
    response = copy.deepcopy(data.draw(st.sampled_from(VALID)))
    path = data.draw(st.sampled_from(_paths(response)))
    replacement = data.draw(_JSON)
    if not path:
        response = replacement
    else:
        parent = functools.reduce(lambda value, key: value[key], path[:-1], response)
        if isinstance(parent, dict) and data.draw(st.booleans()):
            del parent[path[-1]]
        else:
            parent[path[-1]] = replacement
    assert _ours_valid(response) == _schema_valid(response)


@settings(max_examples=200, deadline=None)
@given(_JSON)
def test_hc_08_arbitrary_values_agree_with_the_schema(response: Any) -> None:
    assert _ours_valid(response) == _schema_valid(response)


# --- typed views ---------------------------------------------------------------------------------


def test_hc_08_elicitation_response_view() -> None:
    view = ElicitationResponse.from_json(JsonObject(ELICIT))
    assert view == ElicitationResponse("accept", {"name": "octocat", "age": 30})
    assert view is not None and view.accepted and view.content is not None
    assert type(view.content) is JsonObject and view.content["age"] == 30
    declined = ElicitationResponse.from_json(JsonObject({"action": "decline"}))
    assert declined == ElicitationResponse("decline") and declined is not None
    assert declined.content is None and not declined.accepted
    listed = ElicitationResponse("accept", _any({"tags": ["a", "b"], "ratio": 0.5}))
    assert listed.content == {"tags": ("a", "b"), "ratio": Decimal("0.5")}
    assert isinstance(_any(listed.content)["tags"], JsonArray)
    for other in (JsonObject(SAMPLE), JsonObject(ROOTS), None, "accept", JsonObject({})):
        assert ElicitationResponse.from_json(other) is None


def test_hc_08_sampling_response_view() -> None:
    view = SamplingResponse.from_json(JsonObject(SAMPLE))
    assert view == SamplingResponse(Role.ASSISTANT, JsonObject(TEXT), "m", "endTurn")
    assert view is not None and view.blocks == (TEXT,) and type(view.content) is JsonObject
    many = SamplingResponse.from_json(JsonObject({**SAMPLE, "content": [TEXT, TEXT]}))
    assert many is not None and many.content == (TEXT, TEXT) and many.blocks == (TEXT, TEXT)
    assert many.stop_reason == "endTurn"
    short = SamplingResponse.from_json(JsonObject({"role": "user", "content": [], "model": "m"}))
    assert short == SamplingResponse(Role.USER, (), "m") and short is not None
    assert short.stop_reason is None and short.blocks == ()
    assert SamplingResponse(_any("user"), _any(TEXT), "m").role is Role.USER
    assert SamplingResponse(Role.USER, _any([TEXT]), "m").content == (TEXT,)
    for other in (JsonObject(ELICIT), JsonObject(ROOTS), None):
        assert SamplingResponse.from_json(other) is None


def test_hc_08_roots_response_view() -> None:
    view = RootsResponse.from_json(JsonObject(ROOTS))
    assert view == RootsResponse((Root("file:///repo", "Repo"), Root("file:///b")))
    assert view is not None and view.roots[1].name is None
    assert RootsResponse.from_json(JsonObject({"roots": []})) == RootsResponse(())
    assert RootsResponse(_any([Root("file:///a")])).roots == (Root("file:///a"),)
    for other in (JsonObject(ELICIT), JsonObject(SAMPLE), None):
        assert RootsResponse.from_json(other) is None


def test_hc_08_views_are_immutable() -> None:
    view = ElicitationResponse("cancel")
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.action = "accept"  # type: ignore[misc]
    assert not hasattr(view, "__dict__")


ACTION = "ElicitationResponse.action: must be 'accept', 'decline' or 'cancel'"
CONTENT = "ElicitationResponse.content: "
BLOCKS = "SamplingResponse.content: must be sampling content blocks"
NOT_STR = "a JSON string must be a str"


@pytest.mark.parametrize(
    ("build", "rule"),
    [
        (lambda: ElicitationResponse("ok"), ACTION),
        (lambda: ElicitationResponse(_any(1)), ACTION),
        (
            lambda: ElicitationResponse("accept", _any([SECRET])),
            CONTENT + "must be a mapping or None",
        ),
        (
            lambda: ElicitationResponse("accept", _any({"k": {"v": SECRET}})),
            CONTENT + "every value must be a str, a number, a bool or a list of str",
        ),
        (
            lambda: ElicitationResponse("accept", _any({"k": {SECRET}})),
            CONTENT + "a JSON value cannot be a set",
        ),
        (
            lambda: SamplingResponse(_any("system"), _any(TEXT), "m"),
            "SamplingResponse.role: must be a Role",
        ),
        (
            lambda: SamplingResponse(Role.USER, _any(SECRET), "m"),
            "SamplingResponse.content: must be a content block object or a list of them",
        ),
        (
            lambda: SamplingResponse(Role.USER, _any({"type": "video"}), "m"),
            BLOCKS + " (text, image, audio, tool use or tool result)",
        ),
        (
            lambda: SamplingResponse(Role.USER, _any(TEXT), _any(None)),
            f"SamplingResponse.model: {NOT_STR}",
        ),
        (
            lambda: SamplingResponse(Role.USER, _any(TEXT), "m", _any(1)),
            f"SamplingResponse.stop_reason: {NOT_STR}",
        ),
        (lambda: Root(_any(None)), f"Root.uri: {NOT_STR}"),
        (
            lambda: Root("file:///x", SECRET + "\ud800"),
            "Root.name: text contains an unpaired surrogate",
        ),
        (
            lambda: RootsResponse(_any(("file:///x",))),
            "RootsResponse.roots: every root must be a Root",
        ),
        (
            lambda: RootsResponse(_any(Root("file:///x"))),
            "RootsResponse.roots: must be a tuple or a list",
        ),
    ],
)
def test_hc_08_views_check_their_fields(build: Any, rule: str) -> None:
    with pytest.raises(InvalidValueError) as caught:
        build()
    assert str(caught.value) == rule and SECRET not in str(caught.value)
