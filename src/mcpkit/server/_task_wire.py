"""How a task is written (the ``io.modelcontextprotocol/tasks`` extension, 2026-07-28).

Three shapes, all flat over the task's own members (``taskId``, ``status``,
``statusMessage``?, ``createdAt``, ``lastUpdatedAt``, ``ttlMs``, ``pollIntervalMs``):

- ``CreateTaskResult``, the answer of a ``tools/call`` that started a task: ``resultType``
  ``"task"``, nothing else (no ``result``, ``error``, ``inputRequests`` or ``requestState``);
- the detailed task of ``tasks/get``: ``resultType`` ``"complete"`` and the one payload its
  status has: ``inputRequests`` (``input_required``), ``result`` (``completed``, a tool result
  with ``isError`` included) or ``error`` (``failed``, a JSON-RPC error object);
- the same detailed task as ``notifications/tasks`` params on a listen stream.

Payloads are stored as JSON text and spliced in as they were stored, byte for byte.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Final

from mcpkit.errors import OutputError
from mcpkit.json import JsonObject, encode
from mcpkit.limits import Limits
from mcpkit.model import Implementation, Revision
from mcpkit.protocol import SERVER_INFO_KEY, implementation_info, raw_result_message
from mcpkit.server._task_store import TaskRecord, TaskStatus

__all__ = ["created_message", "detailed_body", "detailed_message", "timestamp"]

_SUBSCRIPTION_KEY: Final = "io.modelcontextprotocol/subscriptionId"


def timestamp(seconds: float) -> str:
    """An ISO 8601 UTC time with milliseconds, as tasks carry them."""
    moment = datetime.fromtimestamp(seconds, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _members(record: TaskRecord, limits: Limits) -> dict[str, object]:
    members: dict[str, object] = {
        "taskId": record.task_id,
        "status": record.status.value,
    }
    if record.status_message is not None:
        members["statusMessage"] = record.status_message
    members["createdAt"] = timestamp(record.created_at)
    members["lastUpdatedAt"] = timestamp(record.updated_at)
    members["ttlMs"] = max(1, round(record.ttl_seconds * 1000))
    members["pollIntervalMs"] = max(1, round(limits.task_poll_interval_seconds * 1000))
    return members


def _meta(info: Implementation | None) -> dict[str, object] | None:
    if info is None:
        return None
    return {SERVER_INFO_KEY: implementation_info(info, Revision.V2026_07_28)}


def created_message(
    request_id: str | int, record: TaskRecord, info: Implementation | None, limits: Limits
) -> bytes:
    """The ``CreateTaskResult`` answering the ``tools/call`` that started ``record``."""
    body: dict[str, object] = {"resultType": "task", **_members(record, limits)}
    meta = _meta(info)
    if meta is not None:
        body["_meta"] = meta
    return raw_result_message(request_id, encode(JsonObject(body), limits=limits))


_PAYLOAD: Final = {
    TaskStatus.COMPLETED: b',"result":',
    TaskStatus.FAILED: b',"error":',
    TaskStatus.INPUT_REQUIRED: b',"inputRequests":',
}


def detailed_body(
    record: TaskRecord,
    limits: Limits,
    *,
    result_type: bool = True,
    meta: dict[str, object] | None = None,
) -> bytes:
    """The detailed task as a JSON object's text: ``tasks/get``'s result (with
    ``resultType``), or a ``notifications/tasks`` notification's params (with its ``_meta``)."""
    members: dict[str, object] = {"resultType": "complete"} if result_type else {}
    members.update(_members(record, limits))
    if meta:
        members["_meta"] = meta
    head = encode(JsonObject(members), limits=limits)
    payload = {
        TaskStatus.COMPLETED: record.result,
        TaskStatus.FAILED: record.error,
        TaskStatus.INPUT_REQUIRED: record.input_requests,
    }.get(record.status)
    if payload is None:
        return head
    return head[:-1] + _PAYLOAD[record.status] + payload + b"}"


def detailed_message(
    request_id: str | int, record: TaskRecord, info: Implementation | None, limits: Limits
) -> bytes:
    """``tasks/get``'s answer: the detailed task, within ``max_response_bytes`` (a stored
    payload that does not fit with the task around it is ``OutputError``)."""
    body = detailed_body(record, limits, meta=_meta(info))
    message = raw_result_message(request_id, body)
    if len(message) > limits.max_response_bytes:
        raise OutputError()
    return message


def subscription_meta(listen_id: str | int) -> dict[str, object]:
    """The ``_meta`` every message of a listen stream carries."""
    return {_SUBSCRIPTION_KEY: listen_id}
