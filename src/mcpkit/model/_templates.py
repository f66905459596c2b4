"""RFC 6570 level 1 resource URI templates: parsing, matching and overlap.

A template is literals separated by ``{name}`` expressions.  When a read is routed, each
variable matches one or more characters other than a raw ``/`` and its value is
percent-decoded exactly once (``%2F`` becomes ``/``, ``%252F`` becomes ``%2F``).

Because no variable ever spans a raw ``/``, a template is a fixed number of ``/``-separated
segments, and so is every URI it matches; matching and overlap work segment by segment.

Decisions where RFC 6570 is silent:

* Literals follow RFC 6570's ``literals`` rule restricted to ASCII (so ``'`` is refused, as in
  the RFC; write ``%27``) and are matched verbatim, as a client expanding the template copies
  them.  Two variables with no literal between them (``{a}{b}``) are refused: the split would
  be arbitrary.
* When several splits match (``{a}-{b}`` against ``x-y-z``) earlier variables take the longest
  value (``a="x-y"``), as a greedy ``[^/]+`` regex would, so results agree with the official
  SDKs; no regex engine is used and the cost is linear in the URI length.
* A variable's raw text must be RFC 3986 characters (never a raw ``/``) and valid ``%HH``
  escapes (either hex case) decoding to strict UTF-8; otherwise the URI does not match.
* Overlap is decided on the raw languages (a variable is ``[^/]+``), which contain the strictly
  decodable ones, so a pair is refused whenever some URI could match both: it fails closed.
  The decision is exact and linear per pair (see :func:`overlaps`), so unlike Soklet's
  product-state budgets no pair is ever refused merely for being costly to check.
* Limits follow Soklet: 8,192 characters and 32 variables per template, 128-character names
  and 256 templates per endpoint; exceeding one is a ``ConfigurationError``.

Exact resource URIs are routed before templates, so an exact URI that a template would
also match is not a conflict; only template pairs are checked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import unquote_to_bytes

from mcpkit.errors import ConfigurationError

__all__ = [
    "MAX_TEMPLATES_PER_ENDPOINT",
    "MAX_TEMPLATE_CHARS",
    "MAX_TEMPLATE_VARIABLES",
    "MAX_VARIABLE_NAME_CHARS",
    "UriTemplate",
    "check_no_overlaps",
    "is_template",
    "overlaps",
]

MAX_TEMPLATE_CHARS: Final = 8_192
MAX_TEMPLATE_VARIABLES: Final = 32
MAX_VARIABLE_NAME_CHARS: Final = 128
MAX_TEMPLATES_PER_ENDPOINT: Final = 256

# RFC 6570 section 2.1 "literals", ASCII part; "%" only as the start of pct-encoded.
_LITERAL_CHARS: Final = frozenset(
    "!#$&()*+,-./0123456789:;=?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]_abcdefghijklmnopqrstuvwxyz~"
)
_PCT: Final = r"%[0-9A-Fa-f]{2}"
_BAD_PERCENT: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")
_VARNAME: Final = re.compile(rf"(?:[A-Za-z0-9_]|{_PCT})+(?:\.(?:[A-Za-z0-9_]|{_PCT})+)*\Z")
# RFC 3986 characters other than "/", or pct-encoded: what a variable's raw text may hold.
# "%" is outside the class, so the alternation never backtracks.
_VALUE_RAW: Final = re.compile(rf"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@?#\[\]]|{_PCT})+\Z")
_OPERATORS: Final = "+#./;?&=,!@|"

Segment = tuple[str, ...]
"""One ``/``-free stretch of a template: its literal pieces, with a variable between each two."""


def is_template(text: str) -> bool:
    """Whether ``text`` is meant as a template (has a brace) rather than an exact resource URI.

    Braces are not URI characters, so a string with none can only be an exact URI.
    """
    return "{" in text or "}" in text


def _refuse(text: str, rule: str) -> ConfigurationError:
    return ConfigurationError(f"resource template {text!r} {rule}")


def _expression(text: str, body: str) -> str:
    """Validate one ``{...}`` body as a level 1 variable name and return it."""
    if not body:
        raise _refuse(text, "has an empty expression '{}'")
    if body[0] in _OPERATORS:
        raise _refuse(text, f"uses operator {body[0]!r}; only level 1 '{{name}}' is supported")
    if ":" in body:
        raise _refuse(text, "uses a prefix modifier ':'; only level 1 '{name}' is supported")
    if "*" in body:
        raise _refuse(text, "uses an explode modifier '*'; only level 1 '{name}' is supported")
    if "," in body:
        raise _refuse(text, "lists several variables in one expression; use one per '{}'")
    if len(body) > MAX_VARIABLE_NAME_CHARS:
        raise _refuse(text, f"has a variable name over {MAX_VARIABLE_NAME_CHARS} characters")
    if not _VARNAME.match(body):
        raise _refuse(text, f"has an invalid variable name {body!r} (RFC 6570 varname)")
    return body


def _check_literal(text: str, literal: str) -> None:
    if _BAD_PERCENT.search(literal):
        raise _refuse(text, "has a '%' not followed by two hex digits")
    for char in literal:
        if char in _LITERAL_CHARS or char == "%":
            continue
        if not char.isascii():
            raise _refuse(text, "must be ASCII; percent-encode non-ASCII characters")
        if char <= " " or char == "\x7f":
            raise _refuse(text, "must not contain whitespace or control characters")
        raise _refuse(text, f"contains {char!r}, which must be percent-encoded (RFC 6570)")


def _parse(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if not isinstance(text, str):
        raise ConfigurationError(f"resource template must be a str, not {type(text).__name__}")
    if len(text) > MAX_TEMPLATE_CHARS:
        raise ConfigurationError(f"resource template is over {MAX_TEMPLATE_CHARS} characters")
    literals: list[str] = []
    names: list[str] = []
    start = 0
    while True:
        open_at = text.find("{", start)
        literal = text[start:] if open_at < 0 else text[start:open_at]
        if "}" in literal:
            raise _refuse(text, "has a '}' without a matching '{'")
        _check_literal(text, literal)
        literals.append(literal)
        if open_at < 0:
            break
        close_at = text.find("}", open_at + 1)
        if close_at < 0:
            raise _refuse(text, "has a '{' without a matching '}'")
        body = text[open_at + 1 : close_at]
        if "{" in body:
            raise _refuse(text, "has nested braces")
        name = _expression(text, body)
        if name in names:
            raise _refuse(text, f"repeats the variable {name!r}")
        if names and not literal:
            raise _refuse(text, "has two variables with no literal between them (ambiguous)")
        names.append(name)
        if len(names) > MAX_TEMPLATE_VARIABLES:
            raise _refuse(text, f"has more than {MAX_TEMPLATE_VARIABLES} variables")
        start = close_at + 1
    if not names:
        raise _refuse(text, "has no variables; register it as an exact resource URI")
    return tuple(literals), tuple(names)


def _segments(literals: tuple[str, ...]) -> tuple[Segment, ...]:
    """Split the template at the raw ``/`` of its literals (variables sit between literals)."""
    segments: list[Segment] = []
    pieces: list[str] = []
    for literal in literals:
        first, *rest = literal.split("/")
        pieces.append(first)
        for part in rest:
            segments.append(tuple(pieces))
            pieces = [part]
    segments.append(tuple(pieces))
    return tuple(segments)


def _fit(segment: Segment, text: str) -> list[tuple[int, int]] | None:
    """The spans of the variables when ``segment`` matches ``text`` (no ``/``), else ``None``.

    Pieces are placed right to left at their rightmost possible position, which is what a
    greedy ``[^/]+`` per variable yields.  The search runs forward over the reversed text,
    where ``str.find`` is linear (two-way for long needles; ``rfind`` is not), and each
    window starts where the previous piece was found: one pass, no backtracking.
    """
    first, last = segment[0], segment[-1]
    size = len(text)
    low, end = len(first), size - len(last)
    if end <= low or not text.startswith(first) or not text.endswith(last):
        return None
    spans: list[tuple[int, int]] = []
    if len(segment) > 2:
        backwards = text[::-1]
        for piece in reversed(segment[1:-1]):
            # Rightmost ``piece`` inside text[low + 1 : end - 1], found in the reversed text.
            found = backwards.find(piece[::-1], size - end + 1, size - low - 1)
            if found < 0:
                return None
            at = size - found - len(piece)
            spans.append((at + len(piece), end))
            end = at
    spans.append((low, end))
    spans.reverse()
    return spans


def _decode(raw: str) -> str | None:
    """Strictly percent-decode a variable's raw text, or ``None`` if it is not valid."""
    if not _VALUE_RAW.match(raw):
        return None
    if "%" not in raw:
        return raw
    try:
        return unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return None


@dataclass(frozen=True, slots=True)
class UriTemplate:
    """A parsed RFC 6570 level 1 template; equal and hashed by its exact ``text``.

    ``literals`` has one more entry than ``variables``: ``literals[i]`` precedes
    ``variables[i]`` and the last literal follows the last variable.
    """

    text: str
    literals: tuple[str, ...] = field(init=False, repr=False, compare=False)
    variables: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _segments: tuple[Segment, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        literals, variables = _parse(self.text)
        object.__setattr__(self, "literals", literals)
        object.__setattr__(self, "variables", variables)
        object.__setattr__(self, "_segments", _segments(literals))

    @classmethod
    def parse(cls, text: str) -> UriTemplate:
        """Parse ``text``, raising :class:`~mcpkit.errors.ConfigurationError` if invalid."""
        return cls(text)

    def match(self, uri: str) -> dict[str, str] | None:
        """The decoded variable values if the whole ``uri`` matches, else ``None``.

        Values are exact strings; the handler converts and validates them.
        """
        if uri.count("/") != len(self._segments) - 1:
            return None
        raw: list[str] = []
        for segment, text in zip(self._segments, uri.split("/"), strict=True):
            if len(segment) == 1:
                if text != segment[0]:
                    return None
                continue
            spans = _fit(segment, text)
            if spans is None:
                return None
            raw += (text[start:stop] for start, stop in spans)
        values: dict[str, str] = {}
        for name, spelling in zip(self.variables, raw, strict=True):
            value = _decode(spelling)
            if value is None:
                return None
            values[name] = value
        return values


def _segments_overlap(sa: Segment, sb: Segment) -> bool:
    """Whether two ``/``-free segments match some common text; linear in their length.

    Two plain literals must be equal, and a literal must fit the other's pattern.  When both
    have a variable, it is enough that their leading pieces are prefix-compatible and their
    trailing pieces suffix-compatible: a variable reads any run of non-``/`` characters, so the
    text "longer leading piece, every other piece of both separated by one filler character,
    longer trailing piece" matches both, each side's variables absorbing the other's pieces.
    """
    if len(sa) == 1 and len(sb) == 1:
        return sa == sb
    if len(sa) == 1:
        return _fit(sb, sa[0]) is not None
    if len(sb) == 1:
        return _fit(sa, sb[0]) is not None
    return (sa[0].startswith(sb[0]) or sb[0].startswith(sa[0])) and (
        sa[-1].endswith(sb[-1]) or sb[-1].endswith(sa[-1])
    )


def overlaps(a: UriTemplate, b: UriTemplate) -> bool:
    """Whether some URI matches both templates, reading each variable as ``[^/]+``.

    Exact, and O(len(a) + len(b)): a URI matched by a template has exactly as many ``/`` as
    the template's literals, and its ``/``-separated segments match the template's segments
    one by one, so the two languages intersect iff every pair of segments does.
    """
    if len(a._segments) != len(b._segments):
        return False
    return all(map(_segments_overlap, a._segments, b._segments))


def check_no_overlaps(templates: Iterable[UriTemplate]) -> None:
    """Refuse duplicate or overlapping templates of one endpoint.

    Raises :class:`~mcpkit.errors.ConfigurationError` naming the first offending pair in
    order.  Work is bounded: at most ``MAX_TEMPLATES_PER_ENDPOINT`` templates of at most
    ``MAX_TEMPLATE_CHARS`` characters, and each pair costs linear time, so the whole check
    reads at most 256 * 255 / 2 pairs of 8,192-character templates.  Exact resource URIs are
    not passed here: they are routed before templates, so they never conflict.
    """
    items: list[UriTemplate] = []
    texts: set[str] = set()
    for template in templates:
        if len(items) == MAX_TEMPLATES_PER_ENDPOINT:
            raise ConfigurationError(
                f"an endpoint may have at most {MAX_TEMPLATES_PER_ENDPOINT} resource templates"
            )
        if template.text in texts:
            raise _refuse(template.text, "is registered twice on one endpoint")
        texts.add(template.text)
        items.append(template)
    for index, a in enumerate(items):
        for b in items[index + 1 :]:
            if overlaps(a, b):
                raise ConfigurationError(
                    f"resource templates {a.text!r} and {b.text!r} overlap: some URI could "
                    "match both, so a read would depend on registration order"
                )
