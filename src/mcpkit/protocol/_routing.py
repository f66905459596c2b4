"""HTTP routing headers and media types (docs/design/server.md §1.4).

On 2026-07-28 a request repeats its ``method`` (and, for the three named methods, its target)
in headers so gateways can route without reading the body; the server checks that both copies
agree (:func:`check_method_headers`), and every disagreement is the fixed
:class:`HeaderMismatch` (-32020) naming the header in ``data.header``, never either copy.

Headers arrive as the transport got them: ``(name, value)`` pairs with lower-case names and
latin-1 decoded values, in arrival order with repeats kept, so a repeated header can be seen
and refused rather than merged.  Optional whitespace (SP, HTAB) around a value is not part of
it.  Names are matched exactly (callers pass lower-case names).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Final

from mcpkit._grammar import OWS_CHARS
from mcpkit.errors import HeaderMismatch, InvalidRequest
from mcpkit.json import JsonObject
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.protocol._mirroring import _decode

__all__ = [
    "MCP_METHOD_HEADER",
    "MCP_NAME_HEADER",
    "NAMED_METHODS",
    "PROTOCOL_VERSION_HEADER",
    "HeaderFields",
    "Headers",
    "accepts",
    "check_method_headers",
    "decode_header_value",
    "header",
    "media_type_ok",
]

Headers = Sequence[tuple[str, str]]

MCP_METHOD_HEADER: Final = "mcp-method"
MCP_NAME_HEADER: Final = "mcp-name"
PROTOCOL_VERSION_HEADER: Final = "mcp-protocol-version"
NAMED_METHODS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "tools/call": "name",
        "prompts/get": "name",
        "resources/read": "uri",
        "tasks/get": "taskId",
        "tasks/update": "taskId",
        "tasks/cancel": "taskId",
    }
)
"""Methods whose target is mirrored in ``Mcp-Name``, and the ``params`` member it mirrors (the
task methods belong to the tasks extension, which routes by task id)."""
_MIRRORED_MEMBER: Final = dict(NAMED_METHODS)  # a plain dict: read per request, no proxy

_JSON: Final = ("application", "json")
_EVENT_STREAM: Final = ("text", "event-stream")
_QVALUE: Final = re.compile(r"0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?", re.ASCII)


_NO_REPEATS: Final[frozenset[str]] = frozenset()


class HeaderFields:
    """A request's header fields indexed once, so each lookup is one dict access instead of a
    scan of every field: the last value of each name, and the names that occur more than once
    (found only when there are any, which a well-behaved client never sends)."""

    __slots__ = ("_repeated", "_values", "pairs")

    def __init__(self, pairs: Headers) -> None:
        self.pairs = pairs
        values = dict(pairs)
        self._values = values
        if len(values) == len(pairs):
            self._repeated = _NO_REPEATS
        else:
            seen: set[str] = set()
            repeated: set[str] = set()
            for name, _value in pairs:
                (repeated if name in seen else seen).add(name)
            self._repeated = frozenset(repeated)

    def raw(self, name: str) -> str | None:
        """The untrimmed value of a name that occurs exactly once, else ``None``."""
        return None if name in self._repeated else self._values.get(name)

    def get(self, name: str) -> str | None:
        """Like :func:`header`: the trimmed single value, ``None`` when absent, a repeat
        refused."""
        value = self._values.get(name)
        if value is None:
            return None
        if name in self._repeated:
            raise HeaderMismatch(name) if name.startswith("mcp-") else InvalidRequest()
        return value.strip(OWS_CHARS)


def header(headers: Headers | HeaderFields, name: str) -> str | None:
    """The trimmed value of a header that may occur at most once, or ``None`` when absent.

    A repeated ``mcp-*`` header is a ``HeaderMismatch`` (its copies cannot all agree with the
    body); any other repeated header is an ``InvalidRequest``.
    """
    if isinstance(headers, HeaderFields):
        return headers.get(name)
    found: str | None = None
    for candidate, value in headers:
        if candidate == name:
            if found is not None:
                raise HeaderMismatch(name) if name.startswith("mcp-") else InvalidRequest()
            found = value
    return None if found is None else found.strip(OWS_CHARS)


def decode_header_value(raw: str, limit: int) -> str:
    """The text an ``Mcp-Name`` or ``Mcp-Param-*`` value stands for, or ``HeaderMismatch``.

    Plain visible ASCII (space and tab allowed) is literal; ``=?base64?…?=`` is the base64 of
    UTF-8 text.  The decoded text is at most ``limit`` UTF-8 bytes.  The one decoder is the
    mirrored-argument check's, so both headers follow exactly the same rules.
    """
    return _decode(raw, limit)


def check_method_headers(
    method: str,
    params: JsonObject | None,
    headers: Headers | HeaderFields,
    *,
    limits: Limits = DEFAULT_LIMITS,
) -> None:
    """Check ``Mcp-Method`` and ``Mcp-Name`` against the body (2026-07-28 requests).

    ``Mcp-Method`` is required and equal to ``method``, case-sensitively.  For a named method
    ``Mcp-Name`` is required, must decode, and must equal the mirrored member when that is a
    string (a member of another type is the method's own params check to refuse); on any
    other method it must be absent.  The decoded name is bounded by
    ``limits.max_header_param_bytes``.
    """
    # Both headers read up front: a repeated one is refused whatever else is wrong.
    if isinstance(headers, HeaderFields):
        mirrored = headers.get(MCP_METHOD_HEADER)
        name = headers.get(MCP_NAME_HEADER)
    else:
        mirrored = header(headers, MCP_METHOD_HEADER)
        name = header(headers, MCP_NAME_HEADER)
    # ``method`` is a string, so equality also rules out an absent header.
    if mirrored != method or not method.isascii() or not method.isprintable():
        raise HeaderMismatch(MCP_METHOD_HEADER)
    member = _MIRRORED_MEMBER.get(method)
    if member is None:
        if name is not None:
            raise HeaderMismatch(MCP_NAME_HEADER)
        return
    if name is None:
        raise HeaderMismatch(MCP_NAME_HEADER)
    limit = limits.max_header_param_bytes
    decoded = _DECODED.get((name, limit))
    if decoded is None:
        try:
            decoded = _decode(name, limit)  # :func:`decode_header_value`; raises when refused
        except HeaderMismatch:
            raise HeaderMismatch(MCP_NAME_HEADER) from None
        if len(_DECODED) < _MAX_ACCEPTED and len(name) <= _MAX_ACCEPT_CHARS:
            _DECODED[(name, limit)] = decoded  # a server has a few tool names, sent often
    target = None if params is None else params.get(member)
    if isinstance(target, str) and decoded != target:
        raise HeaderMismatch(MCP_NAME_HEADER)


def media_type_ok(content_type: str | None) -> bool:
    """Whether a ``Content-Type`` names ``application/json``; parameters are allowed."""
    if content_type is None:
        return False
    known = _MEDIA_TYPES.get(content_type)
    if known is None:
        media_type = content_type.split(";", 1)[0].strip(OWS_CHARS)
        known = media_type.isascii() and media_type.lower() == "application/json"
        if len(_MEDIA_TYPES) < _MAX_ACCEPTED and len(content_type) <= _MAX_ACCEPT_CHARS:
            _MEDIA_TYPES[content_type] = known  # as for Accept: a few spellings, seen often
    return known


def accepts(accept: str | None, *, json: bool = True, sse: bool = True) -> bool:
    """Whether an ``Accept`` header admits the response types asked for (both by default).

    Media ranges are compared case-insensitively; parameters other than ``q`` are ignored and
    quoted strings are not parsed.  As in RFC 9110 §12.5.1, the most specific range that
    matches a type decides (``application/json;q=0, */*`` refuses JSON), and a range whose
    weight is zero or unreadable does not admit.  An absent header admits nothing: MCP
    clients must list both types.
    """
    if accept is None:
        return not json and not sse
    key = (accept, json, sse)
    known = _ACCEPTED.get(key)
    if known is None:
        ranges = _media_ranges(accept)
        known = (not json or _admits(ranges, _JSON)) and (not sse or _admits(ranges, _EVENT_STREAM))
        if len(_ACCEPTED) < _MAX_ACCEPTED and len(accept) <= _MAX_ACCEPT_CHARS:
            _ACCEPTED[key] = known  # clients repeat the same few Accept values
    return known


# Answers for recently seen Accept values: a handful of spellings, parsed once each.
_MAX_ACCEPTED: Final = 256
_MAX_ACCEPT_CHARS: Final = 256
_ACCEPTED: dict[tuple[str, bool, bool], bool] = {}
_MEDIA_TYPES: dict[str, bool] = {}
_DECODED: dict[tuple[str, int], str] = {}  # accepted ``Mcp-Name`` values only


def _visible_ascii(text: str) -> bool:
    return text.isascii() and text.isprintable()


def _media_ranges(accept: str) -> list[tuple[str, str, bool]]:
    """``(type, subtype, admits)`` per well-formed range; malformed ranges are skipped."""
    ranges: list[tuple[str, str, bool]] = []
    for element in accept.split(","):
        media_range, *parameters = element.split(";")
        media_range = media_range.strip(OWS_CHARS)
        if not _visible_ascii(media_range):
            continue
        kind, slash, subtype = media_range.lower().partition("/")
        if not slash or not kind or not subtype:
            continue
        if kind == "*" and subtype != "*":
            continue
        ranges.append((kind, subtype, _weight_admits(parameters)))
    return ranges


def _weight_admits(parameters: list[str]) -> bool:
    """Whether the ``q`` parameter, if any, is a well-formed weight above zero."""
    for parameter in parameters:
        key, _, value = parameter.partition("=")
        if key.strip(OWS_CHARS).lower() == "q":
            weight = value.strip(OWS_CHARS)
            return _QVALUE.fullmatch(weight) is not None and float(weight) > 0
    return True


def _admits(ranges: list[tuple[str, str, bool]], wanted: tuple[str, str]) -> bool:
    """Whether the most specific ranges matching ``wanted`` admit it (any of equal rank)."""
    best_rank = -1
    admitted = False
    for kind, subtype, admits in ranges:
        if kind == wanted[0] and subtype == wanted[1]:
            rank = 2
        elif kind == wanted[0] and subtype == "*":
            rank = 1
        elif kind == "*":
            rank = 0
        else:
            continue
        if rank > best_rank:
            best_rank, admitted = rank, admits
        elif rank == best_rank:
            admitted = admitted or admits
    return admitted
