"""Server-to-client requests: multi-round input on a 2025 session or a stdio connection.

On 2026-07-28 a handler that needs the client's input returns an ``InputRequiredResult`` and
the client retries the call with the answers.  A 2025 client cannot do that, but it has a
conversation the server can talk back on, so the framework plays the client's half itself:
it sends each input request as a JSON-RPC request on the call's own stream, waits for the
answers the client sends back (POSTed with the session id, or written to stdin), and runs the
handler again with them in ``ctx.input_responses`` and with the state it returned.  The
handler is the one written for 2026-07-28; it never sees which era it serves.

The state a 2025 round returns is kept in this process for the call, never sealed and never
sent: it does not leave the server.  Everything is bounded: the requests one conversation has
waiting (``Limits.max_pending_client_requests``), the wait for the answers
(``client_request_timeout_seconds``) and the rounds of one call (``max_request_state_rounds``).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

from mcpkit.errors import InputUnavailable, InvalidParams, SessionQuota
from mcpkit.json import JsonObject, JsonValue
from mcpkit.limits import Limits
from mcpkit.model import Revision, check_input_responses
from mcpkit.protocol import profile, request_message

__all__ = ["Exchange", "ask"]

_FORM: Final = "form"


class Exchange:
    """The server's requests to one client that await the client's answer, by id.

    Ids are the conversation's own sequence (the client's request ids are another namespace);
    an answer to an id that is not waiting -- unknown, already answered, or given up on -- is
    dropped.  Lives on the event loop."""

    __slots__ = ("_ids", "_limit", "_waiting")

    def __init__(self, limit: int, *, first: int = 1) -> None:
        self._limit = limit
        self._ids: Iterator[int] = itertools.count(first)
        self._waiting: dict[int, asyncio.Future[JsonObject]] = {}

    def __len__(self) -> int:
        return len(self._waiting)

    def open(self, count: int) -> list[tuple[int, asyncio.Future[JsonObject]]]:
        """``count`` new request ids, each with the future its answer will complete; all or
        none: ``SessionQuota`` when fewer than ``count`` more may wait."""
        if len(self._waiting) + count > self._limit:
            raise SessionQuota()
        loop = asyncio.get_running_loop()
        opened = [(next(self._ids), loop.create_future()) for _ in range(count)]
        self._waiting.update(opened)
        return opened

    def answered(self, request_id: object, message: JsonObject) -> bool:
        """The client's response ``message`` (a ``result`` or an ``error``) to ``request_id``;
        whether it was waiting here."""
        if type(request_id) is not int:  # the server's ids are ints: nothing else is waiting
            return False
        answer = self._waiting.pop(request_id, None)
        if answer is None:
            return False
        answer.set_result(message)  # (a waiting future is never done: an answer pops its own)
        return True

    def withdraw(self, request_id: int) -> None:
        """Stop waiting for ``request_id`` (answered, timed out, or the call ended)."""
        answer = self._waiting.pop(request_id, None)
        if answer is not None:
            answer.cancel()

    def close(self) -> None:
        """The conversation ended: nothing will be answered."""
        waiting, self._waiting = self._waiting, {}
        for answer in waiting.values():
            answer.cancel()


def _wire(request: Mapping[str, JsonValue], revision: Revision) -> tuple[str, JsonObject]:
    """The method and params of one input request as ``revision`` writes them: without the
    elicitation ``mode`` where it has none (form is all it knows)."""
    method = request["method"]
    assert isinstance(method, str)  # InputRequiredResult checked the shape
    params = request.get("params")
    if not isinstance(params, JsonObject):
        params = JsonObject()
    if not profile(revision).elicitation_mode and params.get("mode") == _FORM:
        params = JsonObject({name: value for name, value in params.items() if name != "mode"})
    return method, params


async def ask(
    exchange: Exchange,
    requests: Mapping[str, Mapping[str, JsonValue]],
    *,
    send: Callable[[bytes], None],
    revision: Revision,
    stopped: asyncio.Event,
    limits: Limits,
) -> JsonObject:
    """Send every request of one round, then wait for all the answers: the
    ``inputResponses`` object (``{key: result}``) the handler's next round reads.

    ``send`` writes one message on the call's stream.  A client that answers with an error or
    with a result of the wrong shape, or does not answer all within
    ``client_request_timeout_seconds``, fails the call with ``InputUnavailable``; so does a
    call that stops (``stopped``: a cancel, or the end of the session) -- nothing is written
    then.
    """
    opened = exchange.open(len(requests))  # nothing is sent when not all of them may wait
    try:
        for (request_id, _), request in zip(opened, requests.values(), strict=True):
            method, params = _wire(request, revision)
            send(request_message(request_id, method, params, limits=limits))
        answers = [answer for _, answer in opened]
        await _all_or_stop(answers, stopped, limits.client_request_timeout_seconds)
        results: dict[str, JsonValue] = {}
        for key, answer in zip(requests, answers, strict=True):
            result = answer.result().get("result")
            if not isinstance(result, JsonObject):  # an error response, or no result
                raise InputUnavailable()
            results[key] = result
        try:
            return check_input_responses(JsonObject(results))
        except InvalidParams:
            raise InputUnavailable() from None
    finally:
        for request_id, _ in opened:
            exchange.withdraw(request_id)


async def _all_or_stop(
    answers: list[asyncio.Future[JsonObject]], stopped: asyncio.Event, timeout: float
) -> None:
    """Wait until every answer is in; ``InputUnavailable`` at the timeout, when the call
    stops, or when an answer is withdrawn (the conversation ended)."""
    stop = asyncio.ensure_future(stopped.wait())
    pending: set[asyncio.Future[Any]] = set(answers)
    try:
        async with asyncio.timeout(timeout):
            while pending:
                done, _ = await asyncio.wait(pending | {stop}, return_when=asyncio.FIRST_COMPLETED)
                if stop in done or any(answer.cancelled() for answer in done):
                    raise InputUnavailable()
                pending -= done
    except TimeoutError:
        raise InputUnavailable() from None
    finally:
        stop.cancel()
