"""Character-level grammar shared by every layer, written once so that all of them agree.

RFC 9110 ``token`` and ``OWS`` (media types, header names, key ids) and the surrogate code
points that make a ``str`` unencodable as UTF-8 (JSON text, schema text).  Only ``re`` is
imported: this module sits in the bottom layer.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["FIELD_TEXT", "OWS", "OWS_CHARS", "SURROGATE", "TCHAR", "TOKEN"]

TCHAR: Final = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]"
"""RFC 9110 §5.6.2 ``tchar`` as a regex character class, for patterns that bound a token."""
TOKEN: Final = re.compile(TCHAR + "+")
"""``token = 1*tchar``: ``fullmatch`` a whole string, or ``match(text, pos)`` inside one."""
OWS_CHARS: Final = " \t"
"""RFC 9110 §5.6.3 ``OWS = *( SP / HTAB )``: its characters, for ``str.strip``."""
OWS: Final = re.compile(f"[{OWS_CHARS}]*")
"""``OWS``; it matches the empty string, so ``OWS.match(text, pos)`` never fails."""
FIELD_TEXT: Final = re.compile(r"[\t\x20-\x7e]*")
"""A header field value of visible ASCII, SP and HTAB only (RFC 9110 §5.5 without
``obs-text``): what mcpkit writes and what it reads as plain text."""
SURROGATE: Final = re.compile("[\ud800-\udfff]")
"""A surrogate code point: in a ``str`` it is always unpaired text with no UTF-8 encoding."""
