"""Why arguments failed their input schema, in words a model can act on.

A refused ``tools/call`` tells its caller where the arguments first failed and which constraint
refused them (``limit: must be at most 50``, ``query: required``), so a model can correct the
call.  Everything in the sentence comes from the schema, never from the arguments: a member the
schema does not name is ``*`` (its name is the client's), and a refused value is never quoted.
A ``pattern`` is the developer's, so it is quoted, when short and printable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from mcpkit.json import JsonValue, encode
from mcpkit.schema._evaluate import UNDECLARED, Failure, Outcome

__all__ = ["explain"]

_MAX_LISTED: Final = 8
"""An ``enum`` of at most this many short scalars is listed; a longer one is summed up."""
_MAX_LISTED_CHARS: Final = 200
"""The longest ``enum`` listing, and the longest ``pattern`` quoted."""


def _where(path: tuple[str | int, ...]) -> str:
    """``a.b[2].*``; ``arguments`` for the whole object."""
    text = ""
    for segment in path:
        if isinstance(segment, int):
            text += f"[{segment}]"
        else:
            name = "*" if segment is UNDECLARED else segment
            text += f".{name}" if text else name
    return text or "arguments"


def _choices(options: tuple[JsonValue, ...]) -> str | None:
    if len(options) > _MAX_LISTED:
        return None
    if any(isinstance(option, Mapping | list | tuple) for option in options):
        return None
    listed = ", ".join(encode(option).decode("utf-8") for option in options)
    return None if len(listed) > _MAX_LISTED_CHARS else listed


def _characters(count: object) -> str:
    return f"{count} character{'' if count == 1 else 's'}"


def explain(found: Outcome, failure: Failure | None) -> str:
    """The sentence for an evaluation that did not pass."""
    if found is Outcome.BUDGET_EXHAUSTED or failure is None:
        return "arguments: too complex to check within the evaluation budget"
    path, keyword, node, value = failure
    if keyword == "required":
        names = value.keys() if isinstance(value, Mapping) else ()
        missing = next(name for name in node.required if name not in names)
        return f"{_where((*path, missing))}: required"
    if keyword == "false":
        if path and path[-1] is UNDECLARED:
            return f"{_where(path[:-1])}: has a member the schema does not allow"
        return f"{_where(path)}: is not allowed"
    where = _where(path)
    if keyword == "type":
        kinds = " or ".join(sorted(node.types or ()))
        return f"{where}: must be {'a' if kinds[:1] not in 'aeiou' else 'an'} {kinds}"
    if keyword == "minimum":
        return f"{where}: must be at least {node.minimum}"
    if keyword == "maximum":
        return f"{where}: must be at most {node.maximum}"
    if keyword == "minLength":
        return f"{where}: must be at least {_characters(node.min_length)}"
    if keyword == "maxLength":
        return f"{where}: must be at most {_characters(node.max_length)}"
    if keyword == "pattern":
        assert node.pattern is not None  # only a node with a pattern fails by it
        source = node.pattern.source
        if len(source) <= _MAX_LISTED_CHARS and source.isprintable():
            return f"{where}: must match the pattern {source}"
        return f"{where}: must match the pattern the schema gives"
    if keyword == "enum":
        listed = None if node.enum is None else _choices(node.enum)
        if listed is not None:
            return f"{where}: must be one of {listed}"
        return f"{where}: must be one of the values the schema lists"
    if keyword == "const":
        return f"{where}: must be the one value the schema allows"
    return f"{where}: must match one of the forms the schema allows"  # anyOf
