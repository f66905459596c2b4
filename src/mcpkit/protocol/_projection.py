"""Per-revision projection: model values to the wire object one revision can carry.

The model writes the full, newest form of everything (``to_json()``, ``definition()``); what a
revision cannot carry is decided here, from the revision table only (``profile(revision)``).
Every function is pure and works on copies: the registration, result or block it is given is
never changed, so one handler result can be written for any revision, and an application
value survives its projection unchanged.

Two rules deliberately refuse instead of adapting:

- structured content that is not a JSON object cannot be written on a 2025 revision; it is
  never wrapped, dropped or replaced by its text mirror, so the result fails with
  the fixed internal error ``OutputError(OutputFailure.SCHEMA)``;
- a 2025-06-18 prompt message whose resource link carries icons has no representable shape
  there and fails the same way, whereas a tool result's links just lose their optional
  icons.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, NoReturn, TypeAlias, TypeVar

from mcpkit.errors import OutputError, OutputFailure
from mcpkit.json import JsonObject, encode, wrap_array, wrap_object
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.model import (
    UNSET,
    CachePolicy,
    CompleteResult,
    ContentBlock,
    Implementation,
    PromptOutput,
    PromptRegistration,
    ResourceLink,
    ResourceOutput,
    ResourceRegistration,
    Revision,
    ToolOutput,
    ToolRegistration,
)
from mcpkit.protocol._revisions import RevisionProfile, profile

__all__ = [
    "SERVER_INFO_KEY",
    "call_tool_result",
    "get_prompt_result",
    "implementation_info",
    "prompt_definition",
    "read_resource_result",
    "resource_definition",
    "tool_definition",
]

SERVER_INFO_KEY: Final = "io.modelcontextprotocol/serverInfo"
"""The result ``_meta`` member naming the server on 2026-07-28 (``ResultMetaObject``)."""

P = TypeVar("P", ToolOutput, PromptOutput, ResourceOutput)

_COMPLETE: Final = "complete"
_NO_BLOCKS: Final = wrap_array(())
# What 2025-06-18 knows of an Implementation (its closed schema: name, title, version).
_JUNE_IMPLEMENTATION: Final = ("name", "title", "version")


# --- catalog entries -------------------------------------------------------------------------


def _without_icons(definition: JsonObject, revision: Revision) -> JsonObject:
    """``definition`` as is, or a copy without ``icons`` where the revision has none."""
    if profile(revision).icons or "icons" not in definition:
        return definition
    return JsonObject({name: value for name, value in definition.items() if name != "icons"})


def tool_definition(registration: ToolRegistration, revision: Revision) -> JsonObject:
    """The wire ``Tool`` of ``tools/list``: ``name``, ``title``, ``description``,
    ``icons`` (none on 2025-06-18), ``inputSchema`` (the exact published document),
    ``outputSchema`` for a typed tool, ``annotations``.

    No ``execution`` member: mcpkit has no 2025-11-25 tasks (task tools select only
    2026-07-28), and an absent ``execution.taskSupport`` means ``forbidden``.
    """
    row = profile(revision)
    members: dict[str, object] = {"name": registration.name}
    if row.tool_title and registration.title is not None:
        members["title"] = registration.title
    if registration.description is not None:
        members["description"] = registration.description
    if row.icons and registration.icons:
        members["icons"] = [icon.to_json() for icon in registration.icons]
    members["inputSchema"] = registration.input_schema.document
    if row.tool_output_schema and registration.output_schema is not None:
        members["outputSchema"] = registration.output_schema.document
    if registration.annotations is not None:
        members["annotations"] = registration.annotations.to_json()
    if registration.app is not None:  # 2026-07-28 only: the tool selects no other revision
        members["_meta"] = {"ui": registration.app.to_json()}
    return JsonObject(members)


def prompt_definition(registration: PromptRegistration, revision: Revision) -> JsonObject:
    """The wire ``Prompt`` of ``prompts/list``; icons only where the revision has them."""
    return _without_icons(registration.definition(), revision)


def resource_definition(registration: ResourceRegistration, revision: Revision) -> JsonObject:
    """The wire ``Resource`` (exact) or ``ResourceTemplate`` (template) of the two resource
    catalogs; icons only where the revision has them."""
    return _without_icons(registration.definition(), revision)


def implementation_info(implementation: Implementation, revision: Revision) -> JsonObject:
    """The wire ``Implementation`` (``serverInfo``): the full object from 2025-11-25 on, only
    ``name``, ``title`` and ``version`` on 2025-06-18.  Implementations are immutable, so the
    projection is remembered (a server has a handful of them)."""
    key = (implementation, revision)
    known = _IMPLEMENTATIONS.get(key)
    if known is None:
        full = implementation.to_json()
        if profile(revision).full_implementation:
            known = full
        else:
            known = JsonObject({name: full[name] for name in _JUNE_IMPLEMENTATION if name in full})
        if len(_IMPLEMENTATIONS) < _MAX_REMEMBERED:
            _IMPLEMENTATIONS[key] = known
    return known


_MAX_REMEMBERED: Final = 1024
_IMPLEMENTATIONS: dict[tuple[Implementation, Revision], JsonObject] = {}


# --- results ---------------------------------------------------------------------------------


def _finish(
    body: dict[str, object],
    result: CompleteResult,
    revision: Revision,
    server_info: Implementation | None,
    cache: CachePolicy | None,
) -> JsonObject:
    """Add what every complete result carries on ``revision``: ``resultType`` and cache hints
    (2026-07-28; ``cache`` is ``None`` for results that are not cacheable) and the result
    ``_meta`` with, on 2026-07-28, the server's ``serverInfo``.  Application ``_meta`` keys
    never use the reserved MCP prefix (checked by ``CompleteResult``), so they cannot clash."""
    row = profile(revision)
    if row.result_type:
        body["resultType"] = _COMPLETE
    if row.cache_hints and cache is not None:
        body.update(cache.to_json())
    meta: dict[str, object] = dict(result.meta)
    if row.server_info_meta and server_info is not None:
        meta[SERVER_INFO_KEY] = implementation_info(server_info, revision)
    if meta:
        body["_meta"] = wrap_object(meta)  # type: ignore[arg-type]
    # Every member is a checked JSON value already (the content list is wrapped by its
    # caller): wrap the body rather than convert it again.
    return wrap_object(body)  # type: ignore[arg-type]


def _ending(revision: Revision, server_info: Implementation | None) -> _Ending:
    """``(server_info, profile(revision), members)``: the members are what ``_finish`` would
    add to a result with no application ``_meta`` and no cache hints (``resultType`` and the
    ``_meta`` holding ``serverInfo``, where the revision has them).  They depend on the
    revision and the server only, so a tool result on the hot path copies them in instead.

    Remembered by identity (an entry holds its implementation, so the id cannot be reused while
    it is remembered): hashing an ``Implementation`` or a ``Revision`` runs Python code, and
    this is called per request.  Callers look the entry up in ``_ENDINGS`` themselves (a hit
    then costs no call), come here on a miss, and copy the members, never changing the dict."""
    row = profile(revision)
    members: dict[str, object] = {}
    if row.result_type:
        members["resultType"] = _COMPLETE
    if row.server_info_meta and server_info is not None:
        info = implementation_info(server_info, revision)
        members["_meta"] = wrap_object({SERVER_INFO_KEY: info})
    known = (server_info, row, members)
    if len(_ENDINGS) < _MAX_REMEMBERED:
        _ENDINGS[id(server_info), id(revision)] = known
    return known


_Ending: TypeAlias = "tuple[Implementation | None, RevisionProfile, dict[str, object]]"
_ENDINGS: dict[tuple[int, int], _Ending] = {}


def _payload(result: CompleteResult, kind: type[P]) -> P:
    """The payload, which the caller has already recognised as ``kind``; anything else is a
    programming error in the server, not a client-visible failure."""
    payload = result.payload
    if not isinstance(payload, kind):
        _not_a(kind)
    return payload


def _not_a(kind: type) -> NoReturn:
    raise TypeError(f"expected a CompleteResult with a {kind.__name__} payload")


def _tool_blocks(content: Iterable[ContentBlock], revision: Revision) -> list[JsonObject]:
    """Content blocks in order; tool resource links lose their icons where the revision has
    none -- on a copy, the application's link keeps them."""
    icons = profile(revision).icons
    return [
        block.icons_dropped().to_json()
        if not icons and isinstance(block, ResourceLink)
        else block.to_json()
        for block in content
    ]


def call_tool_result(
    result: CompleteResult,
    revision: Revision,
    *,
    mirror_structured_content: bool = False,
    server_info: Implementation | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> JsonObject:
    """The wire ``CallToolResult`` of a complete tool result on ``revision``.

    ``content`` always (in order), ``structuredContent`` when set, ``isError`` only when true,
    the result ``_meta``, and ``resultType: "complete"`` on 2026-07-28.  On a 2025 revision
    structured content must be a JSON object, else ``OutputError(OutputFailure.SCHEMA)``:
    never wrapped or discarded, and checked before any text mirror.

    ``mirror_structured_content`` (the tool registration's option) adds the compact
    JSON of the structured content as one text block when the output has no content of its
    own, so application-chosen content is never duplicated or reordered.  The mirror is a
    courtesy: when it would not fit the string ceilings or, together with the structured
    content, the response ceiling, it is silently left out (the structured content itself
    still has to fit, and raises ``OutputError`` if it cannot be written).
    """
    output = result.payload
    if not isinstance(output, ToolOutput):  # ``_payload``, inline on the hot path
        _not_a(ToolOutput)
    # ``_ending``'s memory, looked up here: on a hit (every request but the first) no call.
    known = _ENDINGS.get((id(server_info), id(revision)))
    _, row, ending = _ending(revision, server_info) if known is None else known
    structured = output.structured_content
    has_structured = row.structured_content and structured is not UNSET
    object_only = row.structured_content_object_only
    if has_structured and object_only and not isinstance(structured, JsonObject):
        raise OutputError(OutputFailure.SCHEMA)
    content = _NO_BLOCKS  # immutable, so one empty array serves every result
    if output.content:
        content = wrap_array(_tool_blocks(output.content, revision))
    elif has_structured and mirror_structured_content:
        mirror = _mirror(structured, limits)
        if mirror is not None:
            # ``mirror`` is the codec's own output, valid text: no TextContent checks needed.
            content = wrap_array((wrap_object({"type": "text", "text": mirror}),))
    body: dict[str, object] = {"content": content}
    if has_structured:
        body["structuredContent"] = structured
    if output.is_error:
        body["isError"] = True
    if result.meta:
        return _finish(body, result, revision, server_info, None)
    body.update(ending)  # what ``_finish`` adds when there is no application ``_meta``
    return wrap_object(body)  # type: ignore[arg-type]


# Room kept for the envelope around the mirror and the structured content (ids, members, _meta).
_MIRROR_HEADROOM: Final = 4096


def _mirror(structured: object, limits: Limits) -> str | None:
    """The text mirror of ``structured``, or ``None`` when it would not fit the output limits."""
    written = encode(structured, limits=limits)  # must fit anyway: failures propagate
    text = written.decode("utf-8")
    try:
        as_string = encode(text, limits=limits)
    except OutputError:
        return None  # over a string ceiling or the response ceiling on its own
    if len(written) + len(as_string) + _MIRROR_HEADROOM > limits.max_response_bytes:
        return None
    return text


def _prompt_block(block: ContentBlock, revision: Revision) -> JsonObject:
    if isinstance(block, ResourceLink) and block.icons and not profile(revision).icons:
        # Deliberately a safe failure, not a silent icon drop as for tools.
        raise OutputError(OutputFailure.SCHEMA)
    return block.to_json()


def get_prompt_result(
    result: CompleteResult, revision: Revision, *, server_info: Implementation | None = None
) -> JsonObject:
    """The wire ``GetPromptResult``: ``description`` when set, ``messages`` in order, the
    result ``_meta`` and ``resultType`` on 2026-07-28.  A resource link with icons in a
    2025-06-18 message raises ``OutputError(OutputFailure.SCHEMA)``."""
    output = _payload(result, PromptOutput)
    body: dict[str, object] = {}
    if output.description is not None:
        body["description"] = output.description
    body["messages"] = wrap_array(
        wrap_object(
            {"role": message.role.value, "content": _prompt_block(message.content, revision)}
        )
        for message in output.messages
    )
    return _finish(body, result, revision, server_info, None)


def read_resource_result(
    result: CompleteResult,
    revision: Revision,
    *,
    cache: CachePolicy = CachePolicy.PRIVATE_NO_CACHE,
    server_info: Implementation | None = None,
) -> JsonObject:
    """The wire ``ReadResourceResult``: ``contents`` in order, the result ``_meta``, and on
    2026-07-28 ``resultType`` and the cache hints (a cacheable result; the model has no
    per-resource policy yet, so the safe private, no-cache default unless one is given)."""
    output = _payload(result, ResourceOutput)
    body: dict[str, object] = {"contents": wrap_array(item.to_json() for item in output.contents)}
    return _finish(body, result, revision, server_info, cache)
