"""The JSON-RPC messages the server writes (docs/design/server.md §1.2): exact bytes, the output
limits at the limit and one past it, errors that never fail, and no echo of submitted data."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any, ClassVar

import pytest

from mcpkit.errors import (
    ArgumentsInvalid,
    DeadlineExceeded,
    HeaderMismatch,
    InternalError,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    MissingClientCapability,
    OutputError,
    OutputFailure,
    Overloaded,
    ParseError,
    ProtocolError,
    RateLimited,
    ResourceNotFound,
    UnsupportedProtocolVersion,
)
from mcpkit.json import JsonObject, decode
from mcpkit.limits import Limits
from mcpkit.protocol._envelope import parse_envelope
from mcpkit.protocol._messages import (
    error_message,
    notification_message,
    raw_result_message,
    result_message,
    sse_event,
)

from ..spec_schemas import schema_errors

CANARY = "CANARY-SECRET"
MODERN = "2026-07-28"
NOVEMBER = "2025-11-25"
JUNE = "2025-06-18"


def written(message: bytes) -> Any:
    """The message read back by both mcpkit's codec and the standard library."""
    assert decode(message) == json.loads(message)
    return json.loads(message)


# --- result_message -----------------------------------------------------------------------


def test_result_message_exact_bytes() -> None:
    result = JsonObject({"content": [], "isError": False, "n": Decimal("1.50")})
    message = result_message(1, result)
    assert message == (b'{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false,"n":1.50}}')
    assert written(message) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"content": [], "isError": False, "n": 1.5},
    }
    for revision in (JUNE, NOVEMBER):
        assert schema_errors(revision, "JSONRPCResponse", written(message)) == []


def test_result_message_string_id_is_escaped() -> None:
    message = result_message('a"\n\u00e9', JsonObject({"resultType": "complete"}))
    assert message == (
        b'{"jsonrpc":"2.0","id":"a\\"\\n\xc3\xa9","result":{"resultType":"complete"}}'
    )
    assert written(message)["id"] == 'a"\n\u00e9'
    assert schema_errors(MODERN, "JSONRPCResultResponse", written(message)) == []


def test_result_message_size_limit_counts_the_envelope_JL_02() -> None:
    result = JsonObject({"k": "x" * 100})
    size = len(b'{"jsonrpc":"2.0","id":1,"result":{"k":""}}') + 100
    message = result_message(1, result, limits=Limits(max_response_bytes=size))
    assert len(message) == size
    with pytest.raises(OutputError) as caught:
        result_message(1, result, limits=Limits(max_response_bytes=size - 1))
    assert caught.value.reason is OutputFailure.SIZE


def test_result_message_depth_limit_counts_the_envelope_JL_03() -> None:
    two = Limits(max_json_depth=2)
    assert result_message(1, JsonObject({"a": 1}), limits=two) == (
        b'{"jsonrpc":"2.0","id":1,"result":{"a":1}}'
    )
    with pytest.raises(OutputError) as caught:
        result_message(1, JsonObject({"a": {}}), limits=two)
    assert caught.value.reason is OutputFailure.DEPTH


def test_result_message_refusal_never_echoes() -> None:
    result = JsonObject({"secret": CANARY * 10})
    with pytest.raises(OutputError) as caught:
        result_message(1, result, limits=Limits(max_response_bytes=64))
    error = caught.value
    assert str(error) == "Internal error"
    assert error.args == ("Internal error",)
    assert error.data is None
    assert CANARY.encode() not in error_message(1, error)


# --- raw_result_message -------------------------------------------------------------------


def test_raw_result_message_splices_bytes() -> None:
    page = b'{"tools":[],"nextCursor":"abc"}'
    assert raw_result_message(5, page) == (
        b'{"jsonrpc":"2.0","id":5,"result":{"tools":[],"nextCursor":"abc"}}'
    )
    assert raw_result_message("r\t", b"{}") == b'{"jsonrpc":"2.0","id":"r\\t","result":{}}'
    assert written(raw_result_message(-3, page)) == {
        "jsonrpc": "2.0",
        "id": -3,
        "result": {"tools": [], "nextCursor": "abc"},
    }


def test_raw_result_message_writes_any_id_a_request_could_carry() -> None:
    # Longer than the default 1,048,576 units: a server with raised limits could read it.
    long_id = "i" * 1_048_577
    message = raw_result_message(long_id, b"{}")
    assert message == b'{"jsonrpc":"2.0","id":"' + long_id.encode() + b'","result":{}}'


def test_raw_result_message_refuses_an_id_the_codec_cannot_write() -> None:
    with pytest.raises(OutputError) as caught:
        raw_result_message("\ud800", b"{}")
    assert caught.value.reason is OutputFailure.SURROGATE


# --- error_message ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (ParseError(), b'{"code":-32700,"message":"Parse error"}'),
        (InvalidRequest(), b'{"code":-32600,"message":"Invalid Request"}'),
        (MethodNotFound(), b'{"code":-32601,"message":"Method not found"}'),
        (InvalidParams(), b'{"code":-32602,"message":"Invalid params"}'),
        (
            ArgumentsInvalid(),
            b'{"code":-32602,"message":"Arguments do not match the tool\'s inputSchema."}',
        ),
        (InternalError(), b'{"code":-32603,"message":"Internal error"}'),
        (OutputError(), b'{"code":-32603,"message":"Internal error"}'),
        (Overloaded(), b'{"code":-32603,"message":"Server overloaded; retry later"}'),
        (DeadlineExceeded(), b'{"code":-32603,"message":"Request timed out"}'),
        (ResourceNotFound(), b'{"code":-32002,"message":"Resource not found"}'),
        (HeaderMismatch(), b'{"code":-32020,"message":"Header mismatch"}'),
        (RateLimited(), b'{"code":-31999,"message":"Rate limit exceeded"}'),
        (
            UnsupportedProtocolVersion((MODERN, NOVEMBER), "1900-01-01"),
            b'{"code":-32022,"message":"Unsupported protocol version","data":'
            b'{"supported":["2026-07-28","2025-11-25"],"requested":"1900-01-01"}}',
        ),
        (
            MissingClientCapability({"elicitation": {}}),
            b'{"code":-32021,"message":"Missing required client capability","data":'
            b'{"requiredCapabilities":{"elicitation":{}}}}',
        ),
    ],
)
def test_error_message_exact_bytes(error: ProtocolError, expected: bytes) -> None:
    with_id = error_message(7, error)
    assert with_id == b'{"jsonrpc":"2.0","id":7,"error":' + expected + b"}"
    assert error_message("x", error) == b'{"jsonrpc":"2.0","id":"x","error":' + expected + b"}"
    without_id = error_message(None, error)
    assert without_id == b'{"jsonrpc":"2.0","error":' + expected + b"}"
    assert "id" not in written(without_id)
    for message in (with_id, without_id):
        for revision in (NOVEMBER, MODERN):
            assert schema_errors(revision, "JSONRPCErrorResponse", written(message)) == []
    assert schema_errors(JUNE, "JSONRPCError", written(with_id)) == []


def test_error_message_matches_the_2026_error_definitions() -> None:
    cases: list[tuple[str, ProtocolError]] = [
        ("UnsupportedProtocolVersionError", UnsupportedProtocolVersion((MODERN,), "v999")),
        ("MissingRequiredClientCapabilityError", MissingClientCapability({"sampling": {}})),
        ("HeaderMismatchError", HeaderMismatch()),
    ]
    for definition, error in cases:
        assert schema_errors(MODERN, definition, written(error_message(1, error))) == []


def test_error_message_is_a_message_the_envelope_accepts() -> None:
    envelope = parse_envelope(decode(error_message(3, InvalidParams())))
    assert (envelope.kind.value, envelope.id) == ("response", 3)


def test_unsupported_version_long_request_is_not_echoed() -> None:
    requested = CANARY + "-" * 60
    message = error_message(1, UnsupportedProtocolVersion((MODERN,), requested))
    assert message == (
        b'{"jsonrpc":"2.0","id":1,"error":{"code":-32022,'
        b'"message":"Unsupported protocol version","data":{"supported":["2026-07-28"]}}}'
    )


class _Unwritable(ProtocolError):
    """A subclass whose data the codec cannot write."""

    jsonrpc_code = -32603
    message = "Internal error"


@pytest.mark.parametrize(
    "data",
    [
        {"x": object()},
        {"x": "\ud800"},
        {"x": float("nan")},
        {"x": [CANARY, {1: CANARY}]},
    ],
)
def test_error_message_drops_data_it_cannot_write(data: dict[str, object]) -> None:
    error = _Unwritable()
    error.data = data
    assert error_message(2, error) == (
        b'{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error"}}'
    )


def test_error_message_with_unwritable_message_falls_back_to_internal_error() -> None:
    class Broken(ProtocolError):
        jsonrpc_code = -32000
        message: ClassVar[str] = "broken \ud800"

    assert error_message(4, Broken()) == (
        b'{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"Internal error"}}'
    )
    broken = Broken()
    broken.data = {"a": 1}
    assert error_message(None, broken) == (
        b'{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"}}'
    )


def test_error_message_leaves_out_an_id_it_cannot_write() -> None:
    assert error_message("\udfff", InvalidRequest()) == (
        b'{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"}}'
    )


def test_error_message_writes_a_long_string_id() -> None:
    long_id = "i" * 1_048_577
    assert error_message(long_id, HeaderMismatch()) == (
        b'{"jsonrpc":"2.0","id":"'
        + long_id.encode()
        + b'","error":{"code":-32020,"message":"Header mismatch"}}'
    )


def test_error_message_never_echoes_a_refused_body() -> None:
    body = ('{"jsonrpc":"2.0","id":1,"method":"m","params":"' + CANARY + '"}').encode()
    with pytest.raises(InvalidRequest) as caught:
        parse_envelope(decode(body))
    message = error_message(1, caught.value)
    assert CANARY.encode() not in message
    assert (
        message == b'{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request"}}'
    )


# --- notification_message -----------------------------------------------------------------


def test_notification_message_exact_bytes() -> None:
    params = JsonObject({"progressToken": "t", "progress": 1, "total": Decimal("2.5")})
    message = notification_message("notifications/progress", params)
    assert message == (
        b'{"jsonrpc":"2.0","method":"notifications/progress",'
        b'"params":{"progressToken":"t","progress":1,"total":2.5}}'
    )
    for revision in (JUNE, NOVEMBER, MODERN):
        assert schema_errors(revision, "JSONRPCNotification", written(message)) == []


def test_notification_message_size_limit() -> None:
    params = JsonObject({"level": "info", "data": "d" * 50})
    size = len(notification_message("notifications/message", params))
    assert notification_message(
        "notifications/message", params, limits=Limits(max_response_bytes=size)
    ) == (
        b'{"jsonrpc":"2.0","method":"notifications/message",'
        b'"params":{"level":"info","data":"' + b"d" * 50 + b'"}}'
    )
    with pytest.raises(OutputError) as caught:
        notification_message(
            "notifications/message", params, limits=Limits(max_response_bytes=size - 1)
        )
    assert caught.value.reason is OutputFailure.SIZE
    assert CANARY not in str(caught.value)


# --- sse_event ----------------------------------------------------------------------------


def test_sse_event_exact_bytes() -> None:
    message = result_message(1, JsonObject({"text": "line\nbreak\r"}))
    assert b"\n" not in message
    assert sse_event(message) == (
        b'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{"text":"line\\nbreak\\r"}}\n\n'
    )
    assert sse_event(b"") == b"event: message\ndata: \n\n"


@pytest.mark.parametrize("message", [b'{"a":1}\n', b"\r", b"{}\r\nevent: x", b"\n\n"])
def test_sse_event_refuses_a_line_break(message: bytes) -> None:
    with pytest.raises(ValueError, match=r"^sse_event: a message must not contain a line break$"):
        sse_event(message)


def test_sse_event_with_an_id() -> None:
    assert sse_event(b"{}", "3-7") == b"id: 3-7\nevent: message\ndata: {}\n\n"
    assert sse_event(b"{}", "~" * 256).startswith(b"id: " + b"~" * 256 + b"\n")


@pytest.mark.parametrize("event_id", ["", "a b", "1\n2", "x\r", "\u00e9", "~" * 257])
def test_sse_event_refuses_an_id_that_could_break_the_stream(event_id: str) -> None:
    with pytest.raises(ValueError, match=r"^sse_event: an event id must be 1 to 256 visible"):
        sse_event(b"{}", event_id)
