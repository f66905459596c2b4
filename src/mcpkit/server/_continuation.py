"""Multi-round input on 2026-07-28: what is checked before the handler runs, and how an
input-required result is written.

Before the handler (after admission and target lookup, pipeline group 11): the wire shape of
``inputResponses``; the shape of ``requestState`` for the operation's mode; the client
capabilities of every REQUIRED declaration (all missing ones in one -32021); and, for
framework-protected state, the cryptographic open -- only now, so no validity oracle exists
before admission.  Every state failure is the one indistinguishable -32602.

After it: an ``InputRequiredResult`` may only carry requests the operation declared (anything
else is a contract failure, the fixed -32603), the client must have declared the capability of
each (all missing ones in one -32021), and its state must match the operation's mode; the
result is written with ``resultType: "input_required"``, no cache hints, never through the
sanitizer, its requests only inside ``inputRequests``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Protocol

from mcpkit.errors import InternalError, InvalidParams, MissingClientCapability
from mcpkit.json import JsonObject, JsonValue, encode
from mcpkit.limits import Limits
from mcpkit.model import (
    UNSET,
    InputRequestKind,
    InputRequiredResult,
    RequestStateMode,
    Revision,
    Unset,
    check_input_responses,
    missing_capabilities,
)
from mcpkit.protocol import SERVER_INFO_KEY, implementation_info, result_message
from mcpkit.server._protection import Opened, RequestStateProtector
from mcpkit.server._state_codec import binding as state_binding

__all__ = [
    "Continuation",
    "Declaring",
    "Inquiry",
    "Retry",
    "has_conditional",
    "prepare",
    "settled",
    "write_input_required",
]

log = logging.getLogger("mcpkit.server")

_INPUT_REQUIRED: Final = "input_required"


class Declaring(Protocol):
    """What a tool, prompt or resource registration says about multi-round input."""

    request_state_mode: RequestStateMode
    declared_kinds: frozenset[InputRequestKind]
    required_kinds: frozenset[InputRequestKind]


@dataclass(frozen=True, slots=True, kw_only=True)
class Continuation:
    """What writing an input-required result needs to know about its request."""

    mode: RequestStateMode
    declared: frozenset[InputRequestKind]
    capabilities: JsonObject
    protector: RequestStateProtector | None
    binding: bytes | None
    opened: Opened | None
    request_id: str | int | None
    """``None`` only for an operation that declares nothing (no state is ever sealed)."""
    inquiry: Inquiry | None = None
    """On a 2025 conversation: where an input-required result is kept for the framework to
    ask the client (``_exchange``) instead of being written."""


class Inquiry:
    """What one round of a 2025 call asked for, once its handler returned an input-required
    result: the requests to send the client and the state for the next round (kept in this
    process, never sealed)."""

    __slots__ = ("framework_state", "request_state", "requests")

    def __init__(self) -> None:
        self.requests: Mapping[str, Mapping[str, JsonValue]] | None = None
        """``None`` until the handler asks; then the requests (maybe none: state only)."""
        self.request_state: str | None = None
        self.framework_state: JsonValue | Unset = UNSET


@dataclass(frozen=True, slots=True)
class Retry:
    """What the handler's context receives: the responses and the verified state."""

    input_responses: JsonObject | None = None
    request_state: str | None = None
    framework_state: JsonValue | Unset = UNSET


_NO_RETRY: Final = Retry()
_NOTHING_DECLARED: Final = Continuation(
    mode=RequestStateMode.NONE,
    declared=frozenset(),
    capabilities=JsonObject(),
    protector=None,
    binding=None,
    opened=None,
    request_id=None,
)


# ``settled`` answers: a handshake revision; an operation that declares nothing, asked no retry.
_HANDSHAKE: Final = (None, _NO_RETRY)
_PLAIN: Final = (_NOTHING_DECLARED, _NO_RETRY)


def _contract_failure(what: str) -> InternalError:
    log.error("mcpkit: %s", what)
    return InternalError()


def settled(
    registration: Declaring, stateless: bool, params: JsonObject
) -> tuple[Continuation | None, Retry] | None:
    """What ``prepare`` would return when there is nothing to check, else ``None`` (then
    call ``prepare``): the common case, decided before gathering what ``prepare`` needs.

    ``(None, Retry())`` on a 2025 revision (not ``stateless``), which has no multi-round
    input (the operation cannot declare any there).  An operation that declares nothing, on a
    request without ``inputResponses``, has nothing to check or open, and any input request or
    state its handler emits is refused before the capabilities or the request id would be
    read.  (``requestState`` is ignored in that mode, as ``prepare`` ignores it.)"""
    if not stateless:
        return _HANDSHAKE
    if (
        registration.request_state_mode is RequestStateMode.NONE
        and not registration.declared_kinds
        and "inputResponses" not in params
    ):
        return _PLAIN
    return None


def prepare(
    registration: Declaring,
    *,
    revision: Revision,
    endpoint_path: str,
    method: str,
    params: JsonObject,
    capabilities: JsonObject,
    request_id: str | int,
    authorization: str | None,
    protector: RequestStateProtector | None,
    limits: Limits,
) -> tuple[Continuation | None, Retry]:
    """The checks before the handler on 2026-07-28, when ``settled`` returned ``None``."""
    given = params.get("inputResponses", UNSET)
    mode = registration.request_state_mode
    responses = None if given is UNSET else check_input_responses(given)
    raw = params.get("requestState", UNSET)
    application_state: str | None = None
    sealed: str | None = None
    if raw is not UNSET and mode is not RequestStateMode.NONE:
        if not isinstance(raw, str) or not raw:
            raise InvalidParams()
        if mode is RequestStateMode.APPLICATION_PROTECTED:
            if len(raw.encode("utf-8", "surrogatepass")) > limits.max_request_state_bytes:
                raise InvalidParams()
            application_state = raw
        else:
            sealed = _checked_shape(protector, raw)
    missing = missing_capabilities(registration.required_kinds, capabilities)
    if missing is not None:
        raise MissingClientCapability(dict(missing))
    binding: bytes | None = None
    opened: Opened | None = None
    framework_state: JsonValue | Unset = UNSET
    if mode is RequestStateMode.FRAMEWORK_PROTECTED:
        binding = state_binding(
            endpoint_path=endpoint_path,
            protocol_version=revision.wire,
            method=method,
            authorization=authorization,
            params=params,
        )
        if sealed is not None:
            assert protector is not None  # _checked_shape refused the state otherwise
            opened = protector.open(sealed, binding=binding, request_id=request_id)
            framework_state = opened.state
    continuation = Continuation(
        mode=mode,
        declared=registration.declared_kinds,
        capabilities=capabilities,
        protector=protector,
        binding=binding,
        opened=opened,
        request_id=request_id,
    )
    return continuation, Retry(responses, application_state, framework_state)


def _checked_shape(protector: RequestStateProtector | None, raw: str) -> str:
    if protector is None:  # the server refuses to build without one; never reached
        raise _contract_failure("framework-protected state without a protector")
    return protector.check_shape(raw)


def write_input_required(
    result: InputRequiredResult,
    *,
    continuation: Continuation | None,
    request_id: str | int,
    revision: Revision,
    server_info: object,
    limits: Limits,
) -> bytes:
    """The encoded input-required result, or the refusal of an invalid one.  On a 2025
    conversation (``continuation.inquiry``) the checked result is kept there instead and the
    empty message returned: the framework asks the client itself."""
    if continuation is None:
        raise _contract_failure("an input-required result on a 2025 revision")
    kinds = [InputRequestKind.of(request) for request in result.input_requests.values()]
    if any(kind not in continuation.declared for kind in kinds):
        raise _contract_failure("an operation emitted an input request it did not declare")
    missing = missing_capabilities(kinds, continuation.capabilities)
    if missing is not None:
        raise MissingClientCapability(dict(missing))
    inquiry = continuation.inquiry
    if inquiry is not None:
        _keep(result, continuation, inquiry, limits)
        return b""
    body: dict[str, object] = {"resultType": _INPUT_REQUIRED}
    if result.input_requests:
        body["inputRequests"] = result.input_requests
    state = _state(result, continuation, limits)
    if state is not None:
        body["requestState"] = state
    meta: dict[str, object] = dict(result.meta)
    if server_info is not None:
        meta[SERVER_INFO_KEY] = implementation_info(server_info, revision)  # type: ignore[arg-type]
    if meta:
        body["_meta"] = meta
    return result_message(request_id, JsonObject(body), limits=limits)


def _keep(
    result: InputRequiredResult, continuation: Continuation, inquiry: Inquiry, limits: Limits
) -> None:
    """A 2025 round's result, checked as one to write (the state matches the mode and is
    within ``max_request_state_bytes`` encoded), kept for the next round."""
    state = _checked_state(result, continuation, limits)
    framework_state = result.framework_state
    if framework_state is not UNSET:
        if len(encode(framework_state, limits=limits)) > limits.max_request_state_bytes:
            raise _contract_failure("a framework state over max_request_state_bytes")
        inquiry.framework_state = framework_state  # type: ignore[assignment]
    inquiry.request_state = state
    inquiry.requests = result.input_requests  # type: ignore[assignment]


def _checked_state(
    result: InputRequiredResult, continuation: Continuation, limits: Limits
) -> str | None:
    """The application's ``requestState``, when the state matches the operation's mode; a
    result whose state does not is a contract failure."""
    mode = continuation.mode
    has_framework = result.framework_state is not UNSET
    if mode is RequestStateMode.NONE:
        if result.request_state is not None or has_framework:
            raise _contract_failure("request state from an operation without a state mode")
        return None
    if mode is RequestStateMode.APPLICATION_PROTECTED:
        if has_framework:
            raise _contract_failure("framework state from an application-protected operation")
        state = result.request_state
        if (
            state is not None
            and len(state.encode("utf-8", "surrogatepass")) > limits.max_request_state_bytes
        ):
            # The client could not send it back: refuse it here, not on the retry.
            raise _contract_failure("an application state over max_request_state_bytes")
        return state
    if result.request_state is not None:
        raise _contract_failure("an application state from a framework-protected operation")
    return None


def _state(result: InputRequiredResult, continuation: Continuation, limits: Limits) -> str | None:
    """The ``requestState`` to write, as the operation's mode says."""
    state = _checked_state(result, continuation, limits)
    if continuation.mode is not RequestStateMode.FRAMEWORK_PROTECTED:
        return state
    if result.framework_state is UNSET:
        return None
    protector, binding = continuation.protector, continuation.binding
    request_id = continuation.request_id
    if protector is None or binding is None or request_id is None:
        # prepare() always sets all three in this mode
        raise _contract_failure("framework-protected state without a protector")
    return protector.seal(
        result.framework_state,  # type: ignore[arg-type]
        binding=binding,
        request_id=request_id,
        previous=continuation.opened,
    )


def has_conditional(registration: Declaring) -> bool:
    """Whether a CONDITIONAL declaration may still refuse the call after the handler ran, in
    which case the response must stay uncommitted: no progress reporter."""
    return bool(registration.declared_kinds - registration.required_kinds)
