"""The Skills extension's operations (2026-07-28): ``skills/list``, ``skills/get`` and reading
a skill file through ``resources/read``.

Everything served was built with the endpoint (manifests, digests, file representations); a
request asks the endpoint's access policy and writes.  A denied skill is refused exactly like an
unknown one (``skills/get``: -32602; a file: the ordinary resource not-found), and a list page
leaves it out, so a client cannot tell the two apart.  Cursors are opaque, tagged with the
list's content like the catalog's, and name where the next page starts.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
from typing import TYPE_CHECKING, Final

from mcpkit.errors import InvalidParams, OutputError, OutputFailure, ResourceNotFound
from mcpkit.json import JsonArray, JsonObject
from mcpkit.model import UNSET, CachePolicy, SkillAccess, SkillFile, SkillRegistration
from mcpkit.server._call import Call
from mcpkit.server._invoke import skill_granted
from mcpkit.server._params import read_uri

if TYPE_CHECKING:
    from mcpkit.server._operations import Operations

__all__ = [
    "PAGE_SIZE",
    "read_directory",
    "read_skill_file",
    "skills_directory",
    "skills_get",
    "skills_list",
]

PAGE_SIZE: Final = 32
"""Skills per ``skills/list`` page at most (the extension's bound)."""

_TAG_BYTES: Final = 16
_INDEX_BYTES: Final = 4
_CURSOR_CHARS: Final = 27  # base64url of 20 bytes, unpadded
_ALPHABET: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
_CACHE: Final = CachePolicy.PRIVATE_NO_CACHE.to_json()


@functools.lru_cache(maxsize=256)
def _tag(skills: tuple[SkillRegistration, ...]) -> bytes:
    """What this list's cursors carry: its content, so a cursor from another list (another
    endpoint, an older deployment) is refused, not misread.  Computed once per list."""
    digest = hashlib.sha256(b"skills/list")
    for skill in skills:
        digest.update(b"\0" + skill.uri.encode())
    return digest.digest()[:_TAG_BYTES]


def _cursor(skills: tuple[SkillRegistration, ...], index: int) -> str:
    raw = _tag(skills) + index.to_bytes(_INDEX_BYTES, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _start(skills: tuple[SkillRegistration, ...], cursor: str) -> int:
    """Where the page ``cursor`` names starts; -32602 for anything this list did not issue."""
    if len(cursor) != _CURSOR_CHARS or not _ALPHABET.issuperset(cursor):
        raise InvalidParams()
    try:
        raw = base64.urlsafe_b64decode(cursor + "=")
    except binascii.Error:  # pragma: no cover - unreachable after the alphabet check
        raise InvalidParams() from None
    index = int.from_bytes(raw[_TAG_BYTES:], "big")
    if not (hmac.compare_digest(raw[:_TAG_BYTES], _tag(skills)) and 0 < index < len(skills)):
        raise InvalidParams()
    if _cursor(skills, index) != cursor:  # one spelling per cursor
        raise InvalidParams()
    return index


async def skills_list(operations: Operations, call: Call) -> bytes:
    """``skills/list``: up to ``PAGE_SIZE`` granted skills from where the cursor points."""
    endpoint = call.runtime.endpoint
    skills = endpoint.skills_for(call.revision)
    index = 0 if call.args is UNSET else _start(skills, call.args)
    page: list[JsonObject] = []
    while index < len(skills) and len(page) < PAGE_SIZE:
        skill = skills[index]
        index += 1
        if skill_granted(endpoint.skill_access, SkillAccess(skill, call.identity, skill.uri)):
            page.append(skill.manifest)
    body: dict[str, object] = {"skills": JsonArray(page)}
    if index < len(skills):
        body["nextCursor"] = _cursor(skills, index)
    body.update(_CACHE)
    return operations._complete_message(call, body)


async def skills_get(operations: Operations, call: Call) -> bytes:
    """``skills/get``: the manifest of the skill whose ``SKILL.md`` URI is ``params.uri``."""
    endpoint = call.runtime.endpoint
    uri: str = call.args
    skill = endpoint.find_skill(uri, call.revision)
    if skill is None or not skill_granted(
        endpoint.skill_access, SkillAccess(skill, call.identity, uri)
    ):
        raise InvalidParams()
    body: dict[str, object] = {"skill": skill.manifest}
    body.update(_CACHE)
    return operations._complete_message(call, body)


def read_skill_file(
    operations: Operations, call: Call, skill: SkillRegistration, item: SkillFile
) -> bytes:
    """``resources/read`` of a skill file: its bytes as the suffix table says (text, or
    base64), after the policy grants it; denied is the ordinary not-found."""
    uri: str = call.args
    if not skill_granted(
        call.runtime.endpoint.skill_access, SkillAccess(skill, call.identity, uri)
    ):
        raise ResourceNotFound(uri)
    contents: dict[str, object] = {"uri": uri, "mimeType": item.mime_type}
    if item.text is not None:
        contents["text"] = item.text
    else:
        if item.size > operations.limits.max_binary_item_bytes:
            raise OutputError(OutputFailure.SIZE)
        contents["blob"] = base64.b64encode(item.data).decode("ascii")
    body: dict[str, object] = {"contents": JsonArray([JsonObject(contents)])}
    body.update(_CACHE)
    return operations._complete_message(call, body)


def read_directory(params: JsonObject) -> str:
    """``resources/directory/read``: the directory's URI.  Every directory is one page, so
    any ``cursor`` is one this server never issued."""
    if "cursor" in params:
        raise InvalidParams()
    return read_uri(params)


async def skills_directory(operations: Operations, call: Call) -> bytes:
    """``resources/directory/read`` of a skill directory: its direct children, one page.  Any
    other URI (a file, unknown, denied) is -32602."""
    endpoint = call.runtime.endpoint
    uri: str = call.args
    found = endpoint.find_skill_directory(uri, call.revision)
    if found is None or not skill_granted(
        endpoint.skill_access, SkillAccess(found[0], call.identity, uri)
    ):
        raise InvalidParams()
    body: dict[str, object] = {"resources": found[1]}
    body.update(_CACHE)
    return operations._complete_message(call, body)
