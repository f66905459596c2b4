"""The JSON-RPC envelope (docs/design/server.md §1.1): every kind, every refusal, and ids that can
still be read from a refused message."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest

from mcpkit.errors import InvalidRequest
from mcpkit.json import JsonArray, JsonObject, JsonValue, decode, wrap_object
from mcpkit.protocol._envelope import Envelope, MessageKind, parse_envelope, readable_id


def parse(text: str) -> Envelope:
    return parse_envelope(decode(text.encode()))


def refused(text: str) -> InvalidRequest:
    with pytest.raises(InvalidRequest) as caught:
        parse(text)
    return caught.value


# --- requests -----------------------------------------------------------------------------


def test_request_with_params() -> None:
    envelope = parse('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}')
    assert envelope == Envelope(MessageKind.REQUEST, 7, "tools/call", JsonObject({"name": "x"}))
    assert type(envelope.params) is JsonObject


def test_request_without_params_has_none() -> None:
    assert parse('{"jsonrpc":"2.0","id":"a","method":"ping"}') == Envelope(
        MessageKind.REQUEST, "a", "ping", None
    )


def test_request_with_empty_params_keeps_them() -> None:
    envelope = parse('{"method":"x","params":{},"id":0,"jsonrpc":"2.0"}')
    assert envelope == Envelope(MessageKind.REQUEST, 0, "x", JsonObject())
    assert envelope.params is not None


@pytest.mark.parametrize(
    ("spelling", "expected"),
    [('""', ""), ('"id-1"', "id-1"), ("-5", -5), ("0", 0), ("9007199254740993", 9007199254740993)],
)
def test_request_ids_string_or_integer(spelling: str, expected: str | int) -> None:
    envelope = parse('{"jsonrpc":"2.0","id":' + spelling + ',"method":"m"}')
    assert envelope.id == expected
    assert type(envelope.id) is type(expected)


@pytest.mark.parametrize("spelling", ["null", "true", "false", "1.5", "1.0", "1e2", "[]", "{}"])
def test_request_id_of_another_type_is_refused(spelling: str) -> None:
    refused('{"jsonrpc":"2.0","id":' + spelling + ',"method":"m"}')


def test_request_ids_of_a_subclass_are_kept() -> None:
    """A built value may hold a ``str`` or ``int`` subclass: still an id (never a boolean)."""

    class Text(str):
        pass

    class Number(int):
        pass

    for request_id in (Text("a"), Number(3)):
        message = wrap_object({"jsonrpc": "2.0", "method": "m", "id": request_id})
        assert parse_envelope(message).id is request_id
    with pytest.raises(InvalidRequest):
        parse_envelope(JsonObject({"jsonrpc": "2.0", "method": "m", "id": True}))


def test_method_is_case_and_text_exact() -> None:
    assert parse('{"jsonrpc":"2.0","id":1,"method":" Tools/List "}').method == " Tools/List "


@pytest.mark.parametrize("spelling", ['""', "null", "1", "true", "[]", "{}"])
def test_method_must_be_a_non_empty_string(spelling: str) -> None:
    refused('{"jsonrpc":"2.0","id":1,"method":' + spelling + "}")
    refused('{"jsonrpc":"2.0","method":' + spelling + "}")


@pytest.mark.parametrize("spelling", ["null", "[]", "[1]", '"x"', "1", "true"])
def test_params_must_be_an_object(spelling: str) -> None:
    refused('{"jsonrpc":"2.0","id":1,"method":"m","params":' + spelling + "}")
    refused('{"jsonrpc":"2.0","method":"m","params":' + spelling + "}")


@pytest.mark.parametrize("member", ["result", "error", "extra", "Method", "_meta"])
def test_request_with_another_member_is_refused(member: str) -> None:
    refused('{"jsonrpc":"2.0","id":1,"method":"m","' + member + '":{}}')
    refused('{"jsonrpc":"2.0","method":"m","' + member + '":{}}')


# --- notifications ------------------------------------------------------------------------


def test_notification() -> None:
    assert parse('{"jsonrpc":"2.0","method":"notifications/initialized"}') == Envelope(
        MessageKind.NOTIFICATION, None, "notifications/initialized", None
    )
    assert parse(
        '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}'
    ) == Envelope(
        MessageKind.NOTIFICATION,
        None,
        "notifications/cancelled",
        JsonObject({"requestId": 3}),
    )


def test_null_id_is_not_a_notification() -> None:
    refused('{"jsonrpc":"2.0","id":null,"method":"notifications/initialized"}')


# --- responses ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected_id"),
    [
        ('{"jsonrpc":"2.0","id":1,"result":{}}', 1),
        ('{"jsonrpc":"2.0","id":"r","result":null}', "r"),
        ('{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"x"}}', None),
        ('{"jsonrpc":"2.0","error":1,"id":2}', 2),
    ],
)
def test_response(text: str, expected_id: str | int | None) -> None:
    assert parse(text) == Envelope(MessageKind.RESPONSE, expected_id, None, None)


@pytest.mark.parametrize(
    "text",
    [
        '{"jsonrpc":"2.0","result":{}}',  # no id
        '{"jsonrpc":"2.0","error":{}}',
        '{"jsonrpc":"2.0","id":1}',  # neither result nor error
        '{"jsonrpc":"2.0","id":1,"result":{},"error":{}}',  # both
        '{"jsonrpc":"2.0","id":1,"result":{},"extra":1}',
        '{"jsonrpc":"2.0","id":1,"error":{},"params":{}}',
        '{"jsonrpc":"2.0","id":true,"result":{}}',
        '{"jsonrpc":"2.0","id":1.5,"result":{}}',
        '{"jsonrpc":"2.0","id":[],"result":{}}',
        '{"jsonrpc":"2.0"}',
    ],
)
def test_malformed_response_is_refused(text: str) -> None:
    refused(text)


# --- the outer shape ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '[{"jsonrpc":"2.0","id":1,"method":"m"}]',  # a batch
        "[]",
        '"x"',
        "1",
        "null",
        "true",
    ],
)
def test_non_object_is_refused(text: str) -> None:
    refused(text)


@pytest.mark.parametrize("spelling", ['"2.00"', '"2"', '"1.0"', "2.0", "2", "null", '" 2.0"'])
def test_jsonrpc_must_be_exactly_2_0(spelling: str) -> None:
    refused('{"jsonrpc":' + spelling + ',"id":1,"method":"m"}')
    refused('{"jsonrpc":' + spelling + ',"id":1,"result":{}}')


def test_missing_jsonrpc_is_refused() -> None:
    refused('{"id":1,"method":"m"}')


def test_refusal_is_the_fixed_error_and_never_echoes() -> None:
    canary = "CANARY-SECRET"
    for text in (
        '{"jsonrpc":"2.0","id":1,"method":"m","' + canary + '":1}',
        '{"jsonrpc":"' + canary + '","id":1,"method":"m"}',
        '{"jsonrpc":"2.0","id":1,"method":"m","params":"' + canary + '"}',
        '["' + canary + '"]',
    ):
        error = refused(text)
        assert type(error) is InvalidRequest
        assert (error.jsonrpc_code, error.http_status) == (-32600, 400)
        assert str(error) == "Invalid Request"
        assert error.args == ("Invalid Request",)
        assert error.data is None
        assert canary not in repr(error)


def test_envelope_is_frozen_and_slotted() -> None:
    envelope = parse('{"jsonrpc":"2.0","id":1,"method":"m"}')
    with pytest.raises(dataclasses.FrozenInstanceError):
        envelope.method = "other"  # type: ignore[misc]
    assert not hasattr(envelope, "__dict__")
    assert [member.value for member in MessageKind] == ["request", "notification", "response"]


# --- readable_id --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (JsonObject({"id": 3, "method": 5}), 3),
        (JsonObject({"id": "q", "jsonrpc": "1.0"}), "q"),
        (JsonObject({"id": -1}), -1),
        (JsonObject({"id": True}), None),
        (JsonObject({"id": False}), None),
        (JsonObject({"id": None}), None),
        (JsonObject({"id": Decimal("1.5")}), None),
        (JsonObject({"id": JsonArray([1])}), None),
        (JsonObject({}), None),
        (JsonArray([JsonObject({"id": 1})]), None),
        ("id", None),
        (1, None),
        (None, None),
    ],
)
def test_readable_id(value: JsonValue, expected: str | int | None) -> None:
    found = readable_id(value)
    assert found == expected
    assert type(found) is type(expected)
