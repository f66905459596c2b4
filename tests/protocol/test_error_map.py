"""Exceptions to wire errors: the HTTP status and the error written for every error class on every
revision, and before the revision is known."""

from __future__ import annotations

import pytest

from mcpkit.errors import (
    ArgumentsInvalid,
    AuthorizationUnavailable,
    DeadlineExceeded,
    HeaderMismatch,
    InputUnavailable,
    InsufficientScope,
    InternalError,
    InvalidParams,
    InvalidRequest,
    ListenQuota,
    MethodNotFound,
    MissingClientCapability,
    OutputError,
    Overloaded,
    ParseError,
    ProtectorUnavailable,
    ProtocolError,
    RateLimited,
    ReplayUnavailable,
    ResourceNotFound,
    SessionNotFound,
    SessionQuota,
    SessionRequired,
    SessionStoreUnavailable,
    SubscriptionDenied,
    TaskInterrupted,
    TaskNotFound,
    TaskQuota,
    TaskStoreUnavailable,
    TooManySessions,
    Unauthorized,
    UnsupportedProtocolVersion,
)
from mcpkit.model import Revision
from mcpkit.protocol._error_map import wire_error

from .samples import JUNE, MODERN, NOVEMBER

# Every concrete wire error, with the status it keeps wherever errors keep their own status.
CLASS_STATUS: list[tuple[type[ProtocolError], int]] = [
    (ParseError, 400),
    (InvalidRequest, 400),
    (MethodNotFound, 404),
    (InvalidParams, 400),
    (ArgumentsInvalid, 200),
    (InternalError, 500),
    (InputUnavailable, 500),
    (OutputError, 200),
    (Overloaded, 503),
    (DeadlineExceeded, 504),
    (ProtectorUnavailable, 503),
    (ResourceNotFound, 200),
    (HeaderMismatch, 400),
    (MissingClientCapability, 400),
    (UnsupportedProtocolVersion, 400),
    (RateLimited, 429),
    (ReplayUnavailable, 400),
    (TooManySessions, 503),
    (SessionQuota, 429),
    (SessionRequired, 400),
    (SessionNotFound, 404),
    (ListenQuota, 429),
    (SubscriptionDenied, 403),
    (TaskNotFound, 400),
    (TaskQuota, 429),
    (TaskStoreUnavailable, 503),
    (SessionStoreUnavailable, 503),
    (TaskInterrupted, 500),
    (Unauthorized, 401),
    (InsufficientScope, 403),
    (AuthorizationUnavailable, 503),
]
# Capacity, deadline, rate-limit, session and protocol-version failures keep their status on
# 2025.
KEEP_ON_LEGACY = {
    DeadlineExceeded,
    SessionStoreUnavailable,
    HeaderMismatch,
    Overloaded,
    RateLimited,
    TooManySessions,
    SessionQuota,
    SessionRequired,
    SessionNotFound,
    UnsupportedProtocolVersion,
    ListenQuota,
    TaskQuota,  # a RateLimited (tasks are 2026-07-28's: never written on 2025)
    Unauthorized,
    InsufficientScope,
}
LEGACY = [JUNE, NOVEMBER]


def test_the_class_table_covers_every_protocol_error() -> None:
    def leaves(cls: type[ProtocolError]) -> set[type[ProtocolError]]:
        found = {cls}
        for sub in cls.__subclasses__():
            found |= leaves(sub)
        return found

    # Only mcpkit's own classes: other tests define subclasses of their own.
    ours = {cls for cls in leaves(ProtocolError) if cls.__module__ == "mcpkit.errors"}
    assert ours - {ProtocolError} == {cls for cls, _ in CLASS_STATUS}


@pytest.mark.parametrize(("cls", "status"), CLASS_STATUS, ids=lambda v: getattr(v, "__name__", ""))
def test_before_the_revision_is_known_every_error_keeps_its_status(
    cls: type[ProtocolError], status: int
) -> None:
    error = cls()
    assert wire_error(error, None) == (status, error)
    assert wire_error(error, None)[1] is error


@pytest.mark.parametrize(
    ("cls", "status"),
    [(cls, status) for cls, status in CLASS_STATUS if cls is not ResourceNotFound],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_on_2026_every_error_keeps_its_status(cls: type[ProtocolError], status: int) -> None:
    error = cls()
    written_status, written = wire_error(error, MODERN)
    assert written_status == status
    assert written is error


def test_on_2026_unknown_method_is_404() -> None:
    status, written = wire_error(MethodNotFound(), MODERN)
    assert (status, written.jsonrpc_code) == (404, -32601)


@pytest.mark.parametrize("revision", LEGACY)
@pytest.mark.parametrize(("cls", "status"), CLASS_STATUS, ids=lambda v: getattr(v, "__name__", ""))
def test_on_2025_errors_are_200_except_the_keep_status_classes(
    revision: Revision, cls: type[ProtocolError], status: int
) -> None:
    error = cls()
    written_status, written = wire_error(error, revision)
    assert written is error
    assert written_status == (status if cls in KEEP_ON_LEGACY else 200)


@pytest.mark.parametrize(
    ("cls", "status"),
    [
        (DeadlineExceeded, 504),
        (HeaderMismatch, 400),
        (Overloaded, 503),
        (RateLimited, 429),
        (UnsupportedProtocolVersion, 400),
        (MethodNotFound, 200),
        (InvalidParams, 200),
        (InternalError, 200),
        (MissingClientCapability, 200),
        (ResourceNotFound, 200),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_on_2025_exact_statuses(cls: type[ProtocolError], status: int) -> None:
    for revision in LEGACY:
        assert wire_error(cls(), revision)[0] == status


@pytest.mark.parametrize("revision", LEGACY)
def test_resource_not_found_stays_32002_on_2025(revision: Revision) -> None:
    error = ResourceNotFound()
    status, written = wire_error(error, revision)
    assert status == 200
    assert written is error
    assert (written.jsonrpc_code, written.message, written.data) == (
        -32002,
        "Resource not found",
        None,
    )


def test_resource_not_found_becomes_invalid_params_on_2026() -> None:
    status, written = wire_error(ResourceNotFound(), MODERN)
    assert type(written) is InvalidParams
    assert status == 400
    assert (written.jsonrpc_code, written.message, written.data) == (-32602, "Invalid params", None)


def test_resource_not_found_before_the_revision_is_known_is_left_alone() -> None:
    error = ResourceNotFound()
    assert wire_error(error, None) == (200, error)


def test_data_is_kept() -> None:
    unsupported = UnsupportedProtocolVersion(("2026-07-28",), "v999")
    for revision in (None, JUNE, NOVEMBER, MODERN):
        status, written = wire_error(unsupported, revision)
        assert status == 400
        assert written.data == {"supported": ["2026-07-28"], "requested": "v999"}
    missing = MissingClientCapability({"elicitation": {}})
    assert wire_error(missing, MODERN) == (400, missing)
    assert wire_error(missing, NOVEMBER) == (200, missing)
    assert missing.data == {"requiredCapabilities": {"elicitation": {}}}


@pytest.mark.parametrize("revision", [None, *Revision])
def test_subclasses_map_by_their_own_status(revision: Revision | None) -> None:
    """``ArgumentsInvalid`` is an ``InvalidParams`` and ``Overloaded`` an ``InternalError``, but
    each keeps its own status: the mapping never falls back to the parent class's."""
    legacy = revision is not None and revision is not MODERN
    assert wire_error(ArgumentsInvalid(), revision)[0] == 200
    assert wire_error(OutputError(), revision)[0] == 200
    assert wire_error(Overloaded(), revision)[0] == 503
    assert wire_error(DeadlineExceeded(), revision)[0] == 504
    assert wire_error(InvalidParams(), revision)[0] == (200 if legacy else 400)
    assert wire_error(InternalError(), revision)[0] == (200 if legacy else 500)
