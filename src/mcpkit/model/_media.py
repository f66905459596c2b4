"""The ASCII media-type parser shared by image, audio, icon and resource MIME types.

The grammar is RFC 9110 exactly, restricted to ASCII::

    media-type      = type "/" subtype parameters                     ; §8.3.1
    type, subtype   = token
    parameters      = *( OWS ";" OWS [ parameter ] )                  ; §5.6.6
    parameter       = parameter-name "=" parameter-value
    parameter-name  = token
    parameter-value = ( token / quoted-string )
    token           = 1*tchar                                         ; §5.6.2
    tchar           = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." /
                      "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA
    quoted-string   = DQUOTE *( qdtext / quoted-pair ) DQUOTE         ; §5.6.4
    qdtext          = HTAB / SP / %x21 / %x23-5B / %x5D-7E            ; obs-text refused
    quoted-pair     = "\\" ( HTAB / SP / VCHAR )                      ; obs-text refused
    OWS             = *( SP / HTAB )

Consequences worth knowing, all straight from that grammar: an empty parameter is allowed
(``text/plain;``, ``text/plain; ;charset=x``); whitespace may surround ``;`` but not ``/`` or
``=``; leading whitespace and whitespace after the last parameter with no ``;`` after it are
refused.  HTAB is the only control character ever accepted, and only in OWS or a quoted-string.

Nothing is case-folded or reformatted: the caller's spelling is what goes on the wire.
Parameter names are compared case-insensitively only to refuse duplicates.  No media
type registry is consulted and no bytes are inspected: the application labels its data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from mcpkit._grammar import OWS as _OWS
from mcpkit._grammar import TOKEN as _TOKEN
from mcpkit.errors import InvalidValueError

__all__ = ["MediaType", "parse_media_type"]

_QUOTED: Final = re.compile(r'"((?:[\t !#-\[\]-~]|\\[\t -~])*)"')
_QUOTED_PAIR: Final = re.compile(r"\\([\t -~])")
# Every ASCII control except HTAB; HTAB is then left to the grammar.
_CONTROL: Final = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


@dataclass(frozen=True, slots=True, kw_only=True)
class MediaType:
    """A parsed media type.  Build it with :func:`parse_media_type`, which checks the syntax.

    ``text`` is the spelling as supplied; ``parameters`` keeps order and spelling, with
    quoted-string values unescaped (``a="x\\"y"`` gives ``("a", 'x"y')``).
    """

    text: str
    type: str
    subtype: str
    parameters: tuple[tuple[str, str], ...] = ()

    def __str__(self) -> str:
        return self.text


def _refuse(rule: str) -> InvalidValueError:
    return InvalidValueError(f"media type: {rule}")


def parse_media_type(text: str) -> MediaType:
    """Parse ``text`` as an RFC 9110 media type, or raise ``InvalidValueError``.

    The message names the rule that failed and never contains ``text``.
    """
    if not isinstance(text, str):
        raise _refuse("must be a str")
    text = str.__str__(text)
    if not text.isascii():
        raise _refuse("must be ASCII")
    if _CONTROL.search(text) is not None:
        raise _refuse("must not contain control characters")
    match = _TOKEN.match(text)
    if match is None:
        raise _refuse("the type must be a token")
    type_ = match.group()
    pos = match.end()
    if not text.startswith("/", pos):
        raise _refuse("the type must be followed by '/'")
    match = _TOKEN.match(text, pos + 1)
    if match is None:
        raise _refuse("the subtype must be a token")
    subtype = match.group()
    pos = match.end()
    parameters: list[tuple[str, str]] = []
    seen: set[str] = set()
    end = len(text)
    while pos < end:
        pos = _ows(text, pos)
        if not text.startswith(";", pos):
            raise _refuse("parameters must follow ';'")
        pos = _ows(text, pos + 1)
        match = _TOKEN.match(text, pos)
        if match is None:
            if pos == end or text.startswith(";", pos):
                continue  # an empty parameter: OWS ";" OWS with no parameter after it
            raise _refuse("a parameter name must be a token")
        name = match.group()
        pos = match.end()
        if not text.startswith("=", pos):
            raise _refuse("a parameter must be name=value with no space around '='")
        pos, value = _parameter_value(text, pos + 1)
        folded = name.lower()
        if folded in seen:
            raise _refuse("a parameter name must not repeat (compared case-insensitively)")
        seen.add(folded)
        parameters.append((name, value))
    return MediaType(text=text, type=type_, subtype=subtype, parameters=tuple(parameters))


def _ows(text: str, pos: int) -> int:
    match = _OWS.match(text, pos)
    assert match is not None  # OWS matches the empty string
    return match.end()


def _parameter_value(text: str, pos: int) -> tuple[int, str]:
    match = _TOKEN.match(text, pos)
    if match is not None:
        return match.end(), match.group()
    match = _QUOTED.match(text, pos)
    if match is None:
        raise _refuse("a parameter value must be a token or a complete quoted-string")
    return match.end(), _QUOTED_PAIR.sub(lambda pair: pair.group(1), match.group(1))
