"""The three MCP protocol revisions mcpkit serves.

Members are the exact wire strings.  The enum is a plain ``Enum``, not a ``str`` subclass, so a
revision never compares equal to an arbitrary string by accident: code either holds a
``Revision`` or calls :meth:`Revision.parse` on what a client sent.  Which features each
revision has lives in one table in ``mcpkit.protocol``, never here.  :func:`wires` spells a set
of revisions the one way every message and repr shows it.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

__all__ = ["Revision", "wires"]


class Revision(enum.Enum):
    """An MCP protocol revision, identified by its exact wire string."""

    V2025_06_18 = "2025-06-18"
    V2025_11_25 = "2025-11-25"
    V2026_07_28 = "2026-07-28"

    wire: str
    """The exact string a client and server exchange (``protocolVersion``, headers)."""

    def __init__(self, wire: str) -> None:
        self.wire = wire  # a plain attribute: read on every request, ``value`` is a descriptor

    # Members are singletons compared by identity, so the identity hash is the right one; it
    # is computed in C, where Enum's own hashes the name in Python (revisions key hot dicts).
    __hash__ = object.__hash__

    @property
    def has_handshake(self) -> bool:
        """True for the 2025 revisions: ``initialize`` negotiation instead of per-request
        ``_meta``, and a 2025 adapter of reduced scope."""
        return self is not Revision.V2026_07_28

    @classmethod
    def parse(cls, text: object) -> Revision | None:
        """The revision whose wire string is exactly ``text``, else ``None``.

        No trimming and no case folding: ``" 2025-06-18"`` and ``"2026-07-28\\n"`` are unknown
        revisions, which the protocol layer answers with its fixed error.  Anything that is not
        a ``str`` is unknown too, so a decoded JSON value can be passed as it is.
        """
        if not isinstance(text, str):
            return None
        return _BY_WIRE.get(str.__str__(text))


_BY_WIRE: dict[str, Revision] = {member.value: member for member in Revision}


def wires(revisions: Iterable[Revision]) -> str:
    """The wire strings of ``revisions``, sorted, as every message and repr lists them."""
    return ", ".join(sorted(revision.wire for revision in revisions))
