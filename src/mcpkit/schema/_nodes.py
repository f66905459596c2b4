"""The compiled form of one schema location, shared by the compiler and the evaluator."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Final

from mcpkit.json import JsonValue

__all__ = ["ABSENT", "Node", "Pointer", "scalar_key"]

Pointer = tuple[str, ...]
ABSENT: Final = object()
"""``Node.const`` when the schema has no ``const`` (``None`` is the JSON null)."""


def scalar_key(value: object) -> tuple[str, object] | None:
    """A hashable key under which JSON-equal scalars collide and nothing else does.

    Numbers keep Python's numeric equality and hash (``1``, ``1.0`` and ``1E+0`` meet) but are
    tagged apart from booleans; containers have no key.
    """
    if value is True or value is False:
        return ("b", value)
    if value is None:
        return ("n", None)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, int | Decimal):
        return ("#", value)
    return None


class Node:
    """One compiled schema location.  Evaluation reads these fields and nothing else."""

    __slots__ = (
        "additional",
        "all_of",
        "always",
        "any_of",
        "bounded",
        "const",
        "cost",
        "else_",
        "enum",
        "enum_keys",
        "if_",
        "items",
        "kinds",
        "maximum",
        "minimum",
        "pointer",
        "properties",
        "ref",
        "ref_text",
        "required",
        "simple",
        "then",
        "types",
    )

    def __init__(self, pointer: Pointer, always: bool | None) -> None:
        self.pointer = pointer
        self.always = always  # a boolean schema, or None for an object schema
        self.types: frozenset[str] | None = None
        # Filled by finish(): the JSON kinds "type" accepts, whether minimum/maximum apply,
        # and the operations one application of the node's own checks costs.
        self.kinds: frozenset[str] | None = None
        self.bounded = False
        self.cost = 1
        self.enum: tuple[JsonValue, ...] | None = None
        # all-scalar enums are checked by one set lookup instead of one comparison per option
        self.enum_keys: frozenset[tuple[str, object]] | None = None
        self.const: object = ABSENT
        self.minimum: int | Decimal | None = None
        self.maximum: int | Decimal | None = None
        self.required: tuple[str, ...] = ()
        self.properties: dict[str, Node] = {}
        self.additional: Node | None = None
        self.items: Node | None = None
        self.all_of: list[Node] = []
        self.any_of: list[Node] = []
        self.if_: Node | None = None
        self.then: Node | None = None
        self.else_: Node | None = None
        self.ref: Node | None = None
        self.ref_text: str | None = None
        self.simple = True  # no subschema applies: evaluated without a frame of its own

    def children(self) -> Iterator[Node]:
        """Subschemas that apply to the same instance (for the recursion check)."""
        if self.ref is not None:
            yield self.ref
        yield from self.all_of
        yield from self.any_of
        for node in (self.if_, self.then, self.else_):
            if node is not None:
                yield node

    def finish(self) -> None:
        """Precompute what evaluation needs once the node's keywords are all known."""
        if self.types is not None:
            self.kinds = self.types | ({"integer"} if "number" in self.types else set())
        self.bounded = self.minimum is not None or self.maximum is not None
        self.cost = 1 + sum(
            (
                self.types is not None,
                self.enum_keys is not None,
                self.bounded,
            )
        )
