"""The exception tree: classes, wire codes, HTTP statuses and fixed messages."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import cast

import pytest

import mcpkit.errors as errors
from mcpkit.errors import (
    ConfigurationError,
    InternalError,
    InvalidValueError,
    MCPKitError,
    OutputError,
    OutputFailure,
    ParseError,
    ParseFailure,
    ProtocolError,
)

# class -> (JSON-RPC code, default HTTP status, fixed message, direct parent)
WIRE_TABLE: dict[type[ProtocolError], tuple[int, int, str, type[MCPKitError]]] = {
    errors.ParseError: (-32700, 400, "Parse error", ProtocolError),
    errors.InvalidRequest: (-32600, 400, "Invalid Request", ProtocolError),
    errors.MethodNotFound: (-32601, 404, "Method not found", ProtocolError),
    errors.InvalidParams: (-32602, 400, "Invalid params", ProtocolError),
    errors.ArgumentsInvalid: (
        -32602,
        200,
        "Arguments do not match the tool's inputSchema.",
        errors.InvalidParams,
    ),
    errors.InternalError: (-32603, 500, "Internal error", ProtocolError),
    errors.OutputError: (-32603, 200, "Internal error", InternalError),
    errors.Overloaded: (-32603, 503, "Server overloaded; retry later", InternalError),
    errors.DeadlineExceeded: (-32603, 504, "Request timed out", InternalError),
    errors.ProtectorUnavailable: (-32603, 503, "Internal error", InternalError),
    errors.ResourceNotFound: (-32002, 200, "Resource not found", ProtocolError),
    errors.HeaderMismatch: (-32020, 400, "Header mismatch", ProtocolError),
    errors.MissingClientCapability: (
        -32021,
        400,
        "Missing required client capability",
        ProtocolError,
    ),
    errors.UnsupportedProtocolVersion: (
        -32022,
        400,
        "Unsupported protocol version",
        ProtocolError,
    ),
    errors.RateLimited: (-31999, 429, "Rate limit exceeded", ProtocolError),
    errors.InputUnavailable: (
        -32603,
        500,
        "The client did not answer the server's request for input; retry the call",
        errors.InternalError,
    ),
    errors.ReplayUnavailable: (
        -32600,
        400,
        "Last-Event-ID names no event this session can replay from; call again instead",
        errors.InvalidRequest,
    ),
    errors.TooManySessions: (-32603, 503, "Too many sessions; retry later", errors.Overloaded),
    errors.SessionQuota: (
        -31999,
        429,
        "Session quota exceeded; end a session or wait for a call to finish",
        errors.RateLimited,
    ),
    errors.SessionRequired: (
        -32000,
        400,
        "Mcp-Session-Id required; send initialize first",
        ProtocolError,
    ),
    errors.SessionNotFound: (
        -32001,
        404,
        "Session not found; initialize a new session",
        ProtocolError,
    ),
    errors.ListenQuota: (
        -31999,
        429,
        "Too many listen streams open; end one before listening again",
        errors.RateLimited,
    ),
    errors.SubscriptionDenied: (-31997, 403, "Subscription not authorized", ProtocolError),
    errors.Unauthorized: (
        -31901,
        401,
        "Authentication required: send an OAuth access token for this server as "
        "'Authorization: Bearer <token>'; the WWW-Authenticate header says where to get one",
        ProtocolError,
    ),
    errors.InsufficientScope: (
        -31902,
        403,
        "The access token lacks a scope this request needs; obtain a token with the scopes "
        "the WWW-Authenticate header names and retry",
        ProtocolError,
    ),
    errors.AuthorizationUnavailable: (
        -32603,
        503,
        "The access token cannot be verified right now; retry later",
        errors.InternalError,
    ),
    errors.TaskNotFound: (-32602, 400, "Task not found or expired", errors.InvalidParams),
    errors.TaskQuota: (
        -31999,
        429,
        "Too many tasks; wait for some to finish and expire before starting more",
        errors.RateLimited,
    ),
    errors.TaskStoreUnavailable: (
        -32603,
        503,
        "Task store unavailable; retry later",
        errors.InternalError,
    ),
    errors.SessionStoreUnavailable: (
        -32603,
        503,
        "Session store unavailable; retry later",
        errors.InternalError,
    ),
    errors.TaskInterrupted: (
        -31903,
        500,
        "The task was interrupted by a server restart; call the tool again",
        ProtocolError,
    ),
}

WIRE_CLASSES = list(WIRE_TABLE)


def _all_subclasses(cls: type[MCPKitError]) -> Iterator[type[MCPKitError]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _all_subclasses(sub)


def _public_exception_classes() -> list[type[BaseException]]:
    found = [getattr(errors, name) for name in errors.__all__]
    return [obj for obj in found if isinstance(obj, type) and issubclass(obj, BaseException)]


def test_every_public_exception_derives_from_mcpkit_error() -> None:
    classes = _public_exception_classes()
    assert classes, "errors.__all__ names no exception class"
    for cls in classes:
        assert issubclass(cls, MCPKitError), cls.__name__


def test_every_name_in_errors_all_exists_and_is_unique() -> None:
    assert len(set(errors.__all__)) == len(errors.__all__)
    for name in errors.__all__:
        assert hasattr(errors, name), name


def test_wire_table_covers_every_protocol_error() -> None:
    """A new wire error must be added to WIRE_TABLE, so its code and status get pinned.

    OR-08: protocol and framework failures are the ``ProtocolError`` family (the Python form of
    the seed's JSON-RPC error and exception), each with its JSON-RPC code and fixed message.
    """
    defined = {cls for cls in _all_subclasses(ProtocolError) if cls.__module__ == errors.__name__}
    assert defined == set(WIRE_TABLE)
    assert {cls for cls in _public_exception_classes() if issubclass(cls, ProtocolError)} == (
        set(WIRE_TABLE) | {ProtocolError}
    )


@pytest.mark.parametrize("cls", WIRE_CLASSES, ids=lambda cls: cls.__name__)
def test_wire_form(cls: type[ProtocolError]) -> None:
    code, status, message, parent = WIRE_TABLE[cls]
    assert cls.jsonrpc_code == code
    assert cls.http_status == status
    assert cls.message == message
    assert cls.__bases__ == (parent,)
    error = cls()
    assert (error.jsonrpc_code, error.http_status, error.message) == (code, status, message)


@pytest.mark.parametrize("cls", WIRE_CLASSES, ids=lambda cls: cls.__name__)
def test_str_is_the_fixed_message(cls: type[ProtocolError]) -> None:
    error = cls()
    assert str(error) == error.message
    assert error.args == (error.message,)


@pytest.mark.parametrize("cls", WIRE_CLASSES, ids=lambda cls: cls.__name__)
def test_constructor_takes_no_message_text(cls: type[ProtocolError]) -> None:
    """Never echo: no text given to a wire error can reach ``str()``, ``args`` or ``message``."""
    factory = cast("Callable[..., ProtocolError]", cls)
    with pytest.raises(TypeError):
        factory(message="secret submitted value")
    try:
        error = factory("secret submitted value")
    except TypeError:
        return
    # ParseError and OutputError take a positional *reason*; text there still never shows.
    assert str(error) == cls.message
    assert error.args == (cls.message,)
    assert error.message == cls.message


def test_parse_error_carries_reason() -> None:
    assert ParseError().reason is ParseFailure.SYNTAX
    for reason in ParseFailure:
        error = ParseError(reason)
        assert error.reason is reason
        assert str(error) == "Parse error"


def test_output_error_carries_reason() -> None:
    assert OutputError().reason is OutputFailure.SIZE
    for reason in OutputFailure:
        error = OutputError(reason)
        assert error.reason is reason
        assert str(error) == "Internal error"


def test_output_error_is_caught_as_internal_error() -> None:
    """JL-21 / JL-22: an output failure is the fixed -32603, in HTTP 200."""
    with pytest.raises(InternalError) as caught:
        raise OutputError(OutputFailure.DEPTH)
    assert caught.value.jsonrpc_code == -32603
    assert caught.value.http_status == 200


def test_base_error_defaults_to_internal_error() -> None:
    assert (MCPKitError.jsonrpc_code, MCPKitError.http_status) == (-32603, 500)
    assert MCPKitError.message == "Internal error"


@pytest.mark.parametrize("cls", [ConfigurationError, InvalidValueError])
def test_developer_errors_are_value_errors(cls: type[MCPKitError]) -> None:
    assert issubclass(cls, ValueError)
    assert issubclass(cls, MCPKitError)
    assert not issubclass(cls, ProtocolError)


def test_configuration_error_keeps_detail_out_of_message() -> None:
    error = ConfigurationError("Limits.max_json_depth must be between 1 and 512")
    assert "max_json_depth" in str(error)
    assert error.message == "Internal error"
    assert error.jsonrpc_code == -32603


def test_invalid_value_error_names_its_rule() -> None:
    error = InvalidValueError("text contains an unpaired surrogate")
    assert error.rule == "text contains an unpaired surrogate"
    assert str(error) == error.rule
    with pytest.raises(ValueError, match="unpaired surrogate"):
        raise error


def test_failure_enums_have_unique_values() -> None:
    for enum_cls in (ParseFailure, OutputFailure):
        values = [member.value for member in enum_cls]
        assert len(values) == len(set(values))


def test_unsupported_version_data() -> None:
    """-32022 carries ``data.supported`` and echoes only a short string ``requested``."""
    error = errors.UnsupportedProtocolVersion(("2026-07-28", "2025-11-25"), "1900-01-01")
    assert error.data == {"supported": ["2026-07-28", "2025-11-25"], "requested": "1900-01-01"}
    assert errors.UnsupportedProtocolVersion(("a",), "x" * 64).data == {
        "supported": ["a"],
        "requested": "x" * 64,
    }
    assert errors.UnsupportedProtocolVersion(("a",), "x" * 65).data == {"supported": ["a"]}
    assert errors.UnsupportedProtocolVersion(("a",), 7).data == {"supported": ["a"]}
    with pytest.raises(TypeError):
        errors.UnsupportedProtocolVersion(["a"])  # type: ignore[arg-type]


def test_missing_capability_data() -> None:
    """-32021 carries ``data.requiredCapabilities`` as an object, never a list."""
    error = errors.MissingClientCapability({"sampling": {}})
    assert error.data == {"requiredCapabilities": {"sampling": {}}}
    assert errors.MissingClientCapability().data == {"requiredCapabilities": {}}
    assert errors.InvalidParams().data is None


def test_resource_not_found_names_the_uri_up_to_the_limit() -> None:
    """SEP-2164: ``data.uri`` names the missing resource; a URI of more than 65,535 characters
    (or a non-string) is left out rather than echoed."""
    assert errors.ResourceNotFound("test://x").data == {"uri": "test://x"}
    at_limit = "u:" + "x" * 65_533
    assert errors.ResourceNotFound(at_limit).data == {"uri": at_limit}
    assert errors.ResourceNotFound(at_limit + "x").data is None
    assert errors.ResourceNotFound(7).data is None
    assert errors.ResourceNotFound().data is None
