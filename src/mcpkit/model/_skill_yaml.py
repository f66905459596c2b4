"""A strict, bounded YAML subset for ``SKILL.md`` front matter (Skills extension).

Front matter is small and written by hand, so the profile is the block style people write:
mappings, sequences, plain, single- and double-quoted scalars (each on one line; plain ones may
continue on more-indented lines) and ``|`` / ``>`` block scalars.  Everything else YAML has is
refused rather than guessed at: flow collections, anchors and aliases (the billion-laughs
vector), tags, directives, complex keys, tabs in indentation, duplicate keys.  Plain scalars
resolve by the YAML 1.2 core schema (null, booleans, integers, floats), so a front matter value
means what a YAML 1.2 reader would say it means.  Nesting, node count and scalar UTF-16 units
are bounded by ``Limits`` fields, checked as the parse goes, and so is the total work: each
pass over a line or scalar is charged its length before it runs, so no shape (deep nesting
re-peeking a line, long lines, many nodes) makes a parse cost more than the work-unit limit.
Messages are fixed: they say what is wrong and how to fix it, never quote the document.
"""

from __future__ import annotations

import re
from typing import Final

from mcpkit.errors import ConfigurationError
from mcpkit.json import JsonArray, JsonObject
from mcpkit.limits import Limits

__all__ = ["parse_front_matter"]

_PREFIX: Final = "SKILL.md front matter: "
_TABS: Final = "indentation uses a tab; indent with spaces"
_MISALIGNED: Final = (
    "a line is indented inconsistently; align the keys of a mapping and the items of a sequence"
)
_NOT_ENTRY: Final = "a line in a mapping is not a 'key: value' entry"
_ITEM_IN_MAPPING: Final = "a sequence item stands among mapping keys; indent it under its key"
_DUPLICATE: Final = "a mapping repeats a key; each key may appear once"
_UNSUPPORTED: Final = (
    "flow collections, anchors, aliases, tags, directives and complex keys are not supported; "
    "use block mappings and sequences, and quote values that start with an indicator"
)
_QUOTE: Final = "a quoted scalar must end on its line, followed by nothing but a comment"
_ESCAPE: Final = (
    'a double-quoted scalar has an unsupported escape; use one of \\\\ \\" \\n \\t \\r \\0 '
    "\\/ \\xXX \\uXXXX \\UXXXXXXXX"
)
_COLON: Final = "a plain value contains ': ' or ends with ':'; quote it"
_BLOCK_HEADER: Final = (
    "a block scalar header must be | or > with an optional - or +, then only a comment"
)
_CHARACTERS: Final = "the front matter contains a control character or a lone carriage return"
_NOT_MAPPING: Final = "the front matter must be a mapping of keys to values"
_DEPTH: Final = "mappings and sequences nest deeper than Limits.max_skill_yaml_depth; flatten it"
_NODES: Final = "there are more nodes than Limits.max_skill_yaml_nodes; shorten it"
_SCALAR_UNITS: Final = "a scalar is longer than Limits.max_skill_yaml_scalar_units; shorten it"
_TOTAL_UNITS: Final = "the scalars are longer in total than Limits.max_skill_yaml_total_units"
_WORK: Final = "parsing takes more work than Limits.max_skill_yaml_work_units; shorten it"
_NUMBER: Final = "a number cannot be written as JSON (beyond +-2**53, infinite or NaN); quote it"

# C0 controls other than tab and LF/CR, DEL, and surrogates (YAML's printable set, minus C1
# which YAML allows)
_FORBIDDEN: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
_INT: Final = re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")
_FLOAT: Final = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_SPECIAL_FLOAT: Final = re.compile(r"[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)")
_NULLS: Final = frozenset({"", "~", "null", "Null", "NULL"})
_BOOLS: Final = {
    "true": True,
    "True": True,
    "TRUE": True,
    "false": False,
    "False": False,
    "FALSE": False,
}
_INDICATORS: Final = frozenset("[]{}&*!%@`,?")
_SAFE_INTEGER: Final = 2**53
_ESCAPES: Final = {
    "\\": "\\",
    '"': '"',
    "/": "/",
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "0": "\0",
    " ": " ",
}
_HEX_ESCAPES: Final = {"x": 2, "u": 4, "U": 8}


def _fail(reason: str) -> ConfigurationError:
    return ConfigurationError(_PREFIX + reason)


def _units(text: str) -> int:
    """UTF-16 code units: astral characters count two, as in the JSON codec."""
    return len(text) + sum(1 for character in text if character > "\uffff")


def _item(content: str) -> bool:
    return content == "-" or content.startswith("- ")


class _Parser:
    """One parse: the lines, the current line, and what the limits have used so far."""

    def __init__(self, lines: list[str], limits: Limits) -> None:
        self.lines = lines
        self.pos = 0
        self.limits = limits
        self.nodes = 0
        self.units = 0
        self.work = 0

    # --- accounting ---------------------------------------------------------------------

    def _charge(self, units: int) -> None:
        """Charge ``units`` of work before doing it, so a refused parse never does it."""
        self.work += units
        if self.work > self.limits.max_skill_yaml_work_units:
            raise _fail(_WORK)

    def _node(self) -> None:
        self._charge(1)
        self.nodes += 1
        if self.nodes > self.limits.max_skill_yaml_nodes:
            raise _fail(_NODES)

    def _scalar(self, text: str) -> str:
        self._node()
        self._charge(len(text))  # counting its units, and hashing it if it is a key
        units = _units(text)
        if units > self.limits.max_skill_yaml_scalar_units:
            raise _fail(_SCALAR_UNITS)
        self.units += units
        if self.units > self.limits.max_skill_yaml_total_units:
            raise _fail(_TOTAL_UNITS)
        return text

    # --- lines --------------------------------------------------------------------------

    def _peek(self) -> tuple[int, str] | None:
        """The next significant line (blank and comment lines skipped) as its indentation and
        content, without consuming it; ``None`` at the end."""
        while self.pos < len(self.lines):
            line = self.lines[self.pos]
            # charged on every peek: a line after a deep block is peeked once per level
            self._charge(len(line) + 1)
            content = line.lstrip(" ")
            if content.startswith("\t"):
                if content.strip(" \t"):
                    raise _fail(_TABS)
                content = ""
            if content and not content.startswith("#"):
                return len(line) - len(content), content.rstrip(" \t")
            self.pos += 1
        return None

    # --- collections --------------------------------------------------------------------

    def block(self, indent: int, depth: int) -> object:
        """The mapping or sequence whose first line (the current one) is at ``indent``."""
        if depth > self.limits.max_skill_yaml_depth:
            raise _fail(_DEPTH)
        self._node()
        line = self._peek()
        assert line is not None  # callers peeked
        if _item(line[1]):
            return self._sequence(indent, depth)
        return self._mapping(indent, depth)

    def _mapping(self, indent: int, depth: int) -> JsonObject:
        members: dict[str, object] = {}
        while (line := self._peek()) is not None and line[0] >= indent:
            self._charge(len(line[1]) + 1)  # splitting the entry
            if line[0] > indent:
                raise _fail(_MISALIGNED)
            if _item(line[1]):
                raise _fail(_ITEM_IN_MAPPING)
            if line[1][0] in _INDICATORS:
                raise _fail(_UNSUPPORTED)
            entry = _split_entry(line[1])
            if entry is None:
                raise _fail(_NOT_ENTRY)
            key, rest = entry
            if key in members:
                raise _fail(_DUPLICATE)
            members[self._scalar(key)] = self._value(rest, indent, depth, in_mapping=True)
        return JsonObject(members)

    def _sequence(self, indent: int, depth: int) -> JsonArray:
        items: list[object] = []
        while (line := self._peek()) is not None and line[0] >= indent:
            self._charge(len(line[1]) + 1)  # splitting the item, and rewriting the line
            if line[0] > indent:
                raise _fail(_MISALIGNED)
            content = line[1]
            if not _item(content):
                break  # the next key of the mapping this sequence is a value of
            rest = content[1:].lstrip(" ")
            if rest and not rest.startswith("#") and (_item(rest) or _split_entry(rest)):
                # a compact collection ("- key: value"): its lines align with ``rest``
                inner = indent + len(content) - len(rest)
                self.lines[self.pos] = " " * inner + rest
                items.append(self.block(inner, depth + 1))
            else:
                items.append(self._value(rest, indent, depth, in_mapping=False))
        return JsonArray(items)

    def _value(self, rest: str, indent: int, depth: int, *, in_mapping: bool) -> object:
        """The value after ``key:`` or ``-`` on the current line (``rest``, maybe empty)."""
        self.pos += 1
        if not rest or rest.startswith("#"):
            line = self._peek()
            if line is not None and (
                line[0] > indent or (in_mapping and line[0] == indent and _item(line[1]))
            ):
                return self.block(line[0], depth + 1)
            self._scalar("")
            return None
        self._charge(len(rest))  # the header match, the quoted scan or resolving the plain text
        if rest[0] in "|>":
            return self._block_scalar(rest, indent)
        if rest[0] == '"' or rest[0] == "'":
            text, after = _quoted(rest)
            if after and not after.startswith("#"):
                raise _fail(_QUOTE)
            return self._scalar(text)
        if rest[0] in _INDICATORS or _item(rest):
            raise _fail(_UNSUPPORTED)
        return _resolve(self._scalar(self._plain(rest, indent)))

    # --- scalars ------------------------------------------------------------------------

    def _plain(self, first: str, indent: int) -> str:
        """A plain scalar: ``first`` and any more-indented continuation lines, folded."""
        parts = [_plain_line(first)]
        blanks = 0
        while self.pos < len(self.lines):
            line = self.lines[self.pos]
            self._charge(len(line) + 1)  # stripping it, cutting its comment, joining it
            content = line.strip(" \t")
            if not content:
                blanks += 1
                self.pos += 1
                continue
            if len(line) - len(line.lstrip(" ")) <= indent or content.startswith("#"):
                break
            parts.append("\n" * blanks if blanks else " ")
            parts.append(_plain_line(content))
            blanks = 0
            self.pos += 1
        return "".join(parts)

    def _block_scalar(self, header: str, indent: int) -> str:
        """A ``|`` (literal) or ``>`` (folded) scalar whose header is ``header``."""
        match = re.fullmatch(r"([|>])([-+]?)(?:[ \t]+#.*)?", header)
        if match is None:
            raise _fail(_BLOCK_HEADER)
        folded, chomp = match[1] == ">", match[2]
        body: list[str] = []
        width: int | None = None
        while self.pos < len(self.lines):
            line = self.lines[self.pos]
            self._charge(len(line) + 1)  # measuring its indentation and slicing it
            if not line.strip(" \t"):
                body.append("")
                self.pos += 1
                continue
            spaces = len(line) - len(line.lstrip(" "))
            if width is None:
                if spaces <= indent:
                    break
                width = spaces
            elif spaces < width:
                break
            body.append(line[width:])
            self.pos += 1
        self._charge(len(body) + sum(map(len, body)))  # chomping and folding (or joining)
        trailing = len(body) - len(_rstrip_blank(body))
        body = body[: len(body) - trailing]
        text = _fold(body) if folded else "\n".join(body)
        if body and chomp != "-":
            text += "\n"
        if chomp == "+":
            text += "\n" * trailing
        return self._scalar(text)


def _rstrip_blank(body: list[str]) -> list[str]:
    end = len(body)
    while end and not body[end - 1]:
        end -= 1
    return body[:end]


def _fold(body: list[str]) -> str:
    """Folding: a single break between two plain lines becomes a space, ``n`` blank lines
    become ``n`` breaks, and more-indented lines keep their breaks."""
    pieces: list[str] = []
    blanks = 0
    previous: str | None = None
    for line in body:
        if not line:
            blanks += 1
            continue
        if previous is None:
            pieces.append("\n" * blanks)
        elif previous[0] in " \t" or line[0] in " \t":
            pieces.append("\n" * (blanks + 1))
        else:
            pieces.append("\n" * blanks if blanks else " ")
        pieces.append(line)
        previous, blanks = line, 0
    return "".join(pieces)


def _plain_line(text: str) -> str:
    """One line of a plain scalar, its comment cut off; ``: `` inside is refused."""
    cut = text.find(" #")
    if cut >= 0:
        text = text[:cut].rstrip(" \t")
    if ": " in text or text.endswith(":"):
        raise _fail(_COLON)
    return text


def _split_entry(content: str) -> tuple[str, str] | None:
    """``content`` as a mapping entry (the key, and what follows the colon), or ``None`` if
    it is not one."""
    if content[0] in "\"'":
        key, after = _quoted(content)
        if after == ":" or after.startswith(": "):
            return key, after[1:].lstrip(" ")
        return None
    end = len(content)
    comment = content.find(" #")
    if comment >= 0:
        end = comment
    index = 0
    while (index := content.find(":", index, end)) >= 0:
        if index + 1 == len(content) or content[index + 1] in " \t":
            key = content[:index].rstrip(" ")
            if not key or key[0] in _INDICATORS or key[0] in "|>":
                raise _fail(_UNSUPPORTED)
            return key, content[index + 1 :].lstrip(" \t")
        index += 1
    return None


def _quoted(text: str) -> tuple[str, str]:
    """A quoted scalar starting ``text``: its value, and the rest of the line after it
    (stripped)."""
    quote = text[0]
    out: list[str] = []
    index = 1
    while index < len(text):
        character = text[index]
        if character == quote:
            if quote == "'" and text[index + 1 : index + 2] == "'":
                out.append("'")
                index += 2
                continue
            return "".join(out), text[index + 1 :].strip(" \t")
        if character == "\\" and quote == '"':
            index = _escape(text, index + 1, out)
            continue
        out.append(character)
        index += 1
    raise _fail(_QUOTE)


def _escape(text: str, index: int, out: list[str]) -> int:
    """Decode the escape after a backslash at ``index``; the index after it."""
    code = text[index : index + 1]
    if code in _ESCAPES:
        out.append(_ESCAPES[code])
        return index + 1
    digits = _HEX_ESCAPES.get(code)
    hexits = text[index + 1 : index + 1 + (digits or 0)]
    if digits is None or len(hexits) != digits or not re.fullmatch("[0-9a-fA-F]+", hexits):
        raise _fail(_ESCAPE)
    value = int(hexits, 16)
    if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
        raise _fail(_ESCAPE)
    out.append(chr(value))
    return index + 1 + digits


def _resolve(text: str) -> object:
    """A plain scalar's value by the YAML 1.2 core schema, limited to what JSON can carry."""
    if text in _NULLS:
        return None
    if text in _BOOLS:
        return _BOOLS[text]
    if _INT.fullmatch(text):
        base = 8 if text.startswith("0o") else 16 if text.startswith("0x") else 10
        digits = text[2:] if base != 10 else text
        if len(digits) > 20:
            raise _fail(_NUMBER)
        value = int(digits, base)
        if abs(value) > _SAFE_INTEGER:
            raise _fail(_NUMBER)
        return value
    if _SPECIAL_FLOAT.fullmatch(text):
        raise _fail(_NUMBER)
    if _FLOAT.fullmatch(text):
        number = float(text)
        if number in (float("inf"), float("-inf")):
            raise _fail(_NUMBER)
        return number
    return text


def parse_front_matter(lines: list[str], limits: Limits) -> JsonObject:
    """The front matter whose lines (between the ``---`` delimiters, without line ends) are
    ``lines``, as a JSON object; ``ConfigurationError`` with a fixed message if it is outside
    the profile or over a limit."""
    parser = _Parser([], limits)
    for line in lines:
        parser._charge(len(line) + 1)  # the character check, and copying the line
        if _FORBIDDEN.search(line) or "\r" in line:
            raise _fail(_CHARACTERS)
    parser.lines = list(lines)  # a copy: compact items rewrite their line
    first = parser._peek()
    if first is None or _item(first[1]):
        raise _fail(_NOT_MAPPING)
    document = parser.block(first[0], 1)
    if parser._peek() is not None:
        raise _fail(_MISALIGNED)
    assert isinstance(document, JsonObject)
    return document
