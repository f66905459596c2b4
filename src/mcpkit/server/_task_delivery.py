"""Whether a completed task's result may go out now, and a listen stream's task notification.

A task's result was written when its work ended; it is delivered later (``tasks/get``, or
``notifications/tasks`` on a listen stream) by whichever request asks.  In between the tool may
have been swapped out or changed, so delivery checks again: the tool is still served on the
revision, and a result that is not an ``isError`` one matches the tool's output schema now.
"""

from __future__ import annotations

import logging
from typing import Final

from mcpkit.errors import ProtocolError
from mcpkit.json import JsonObject, decode
from mcpkit.limits import Limits
from mcpkit.model import Revision
from mcpkit.protocol import raw_notification_message
from mcpkit.schema import EvaluationGate, Outcome
from mcpkit.server._call import Runtime
from mcpkit.server._listen import TaskSnapshot
from mcpkit.server._task_store import TaskKey, TaskRecord, TaskStatus, TaskStore
from mcpkit.server._task_wire import detailed_body

__all__ = ["deliverable", "task_snapshot"]

log = logging.getLogger("mcpkit.server")

_NOTIFICATION: Final = "notifications/tasks"


def deliverable(
    runtime: Runtime,
    revision: Revision,
    record: TaskRecord,
    gate: EvaluationGate,
    limits: Limits,
) -> bool:
    """Whether ``record`` may be told as it is: anything but a completed task always; a
    completed one while its tool is served and its stored result reads as a JSON object that
    (unless it is an ``isError`` one) matches the output schema (each refusal logged, without
    the result)."""
    if record.status is not TaskStatus.COMPLETED:
        return True
    plan = runtime.tools[revision].get(record.tool)
    if plan is None:
        log.error("mcpkit: a completed task's tool is no longer served")
        return False
    try:
        result = decode(record.result or b"", limits=limits)
    except ProtocolError:  # a damaged record is never written out as it is
        result = None
    if not isinstance(result, JsonObject):
        log.error("mcpkit: a completed task's stored result cannot be read")
        return False
    schema = plan.tool.output_schema
    if schema is None or result.get("isError") is True:
        return True
    structured = result.get("structuredContent")
    with gate:
        valid = structured is not None and schema.evaluate(structured) is Outcome.VALID
    if not valid:
        log.error(
            "mcpkit: a completed task's result does not match the output schema of %r",
            record.tool,
        )
    return valid


def task_snapshot(
    store: TaskStore,
    runtime: Runtime,
    revision: Revision,
    owner: str | None,
    gate: EvaluationGate,
    limits: Limits,
) -> TaskSnapshot:
    """A listen stream's ``TaskSnapshot``: the caller's task looked up afresh and written as
    ``notifications/tasks`` (the detailed task with the stream's ``_meta``); nothing when it
    is gone or its result cannot be delivered now."""

    async def snapshot(task_id: str, meta: JsonObject) -> bytes | None:
        record = await store.get(TaskKey(task_id, owner, runtime.endpoint.path))
        if record is None or not deliverable(runtime, revision, record, gate, limits):
            return None
        params = detailed_body(record, limits, result_type=False, meta=dict(meta))
        return raw_notification_message(_NOTIFICATION, params)

    return snapshot
