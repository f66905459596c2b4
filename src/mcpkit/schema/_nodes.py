"""The compiled form of one schema location, shared by the compiler and the evaluator."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Final

from mcpkit.json import JsonArray, JsonObject, JsonValue
from mcpkit.schema._pattern import Pattern

__all__ = ["ABSENT", "KINDS", "Node", "Pointer", "scalar_key"]

Pointer = tuple[str, ...]
ABSENT: Final = object()
"""``Node.const`` when the schema has no ``const`` (``None`` is the JSON null)."""

# The JSON kind of a value by its exact type; a Decimal is "integer" or "number" by value, and
# a schema's "number" accepts both (Node.kinds holds the expanded set).
KINDS: Final[dict[type, str]] = {
    str: "string",
    bool: "boolean",
    int: "integer",
    type(None): "null",
    JsonObject: "object",
    JsonArray: "array",
    dict: "object",
    list: "array",
    tuple: "array",
}
_NO_TYPES: Final[frozenset[type]] = frozenset()


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
        "accept",
        "additional",
        "all_of",
        "always",
        "any_of",
        "bounded",
        "const",
        "cost",
        "direct",
        "direct_cost",
        "else_",
        "enum",
        "enum_keys",
        "exact",
        "flat",
        "if_",
        "items",
        "kinds",
        "max_length",
        "maximum",
        "members",
        "min_length",
        "minimum",
        "pattern",
        "plain",
        "pointer",
        "properties",
        "ref",
        "ref_text",
        "required",
        "required_names",
        "simple",
        "steps",
        "textual",
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
        # minLength/maxLength, in code points (an integral Decimal past what an int of any
        # practical size holds stays a Decimal: it compares exactly, without expansion)
        self.min_length: int | Decimal | None = None
        self.max_length: int | Decimal | None = None
        self.pattern: Pattern | None = None
        self.textual = False  # filled by finish(): whether a string keyword is present
        self.required: tuple[str, ...] = ()
        self.required_names: frozenset[str] = frozenset()  # filled by finish()
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
        # Filled by finish(): the exact Python types "type" accepts without looking at the
        # value; whether const, enum, bounds and string keywords are all absent; and, when
        # "type" is the node's
        # only assertion, the types whose values pass its own checks (else empty).
        self.exact = _NO_TYPES
        self.plain = True
        self.accept = _NO_TYPES
        # Filled by settle(), once every node is linked: see there.
        self.members = False
        self.flat = False
        self.steps: dict[tuple[str, type], int] = {}
        self.direct = _NO_TYPES
        self.direct_cost = 0

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
        self.textual = (
            self.min_length is not None or self.max_length is not None or self.pattern is not None
        )
        self.required_names = frozenset(self.required)
        if self.kinds is not None:
            self.exact = frozenset(tp for tp, kind in KINDS.items() if kind in self.kinds)
        self.plain = (
            self.const is ABSENT and self.enum is None and not self.bounded and not self.textual
        )
        if self.plain and not self.required and self.always is None:
            self.accept = self.exact
        self.cost = 1 + sum(
            (
                self.types is not None,
                self.enum_keys is not None,
                self.bounded,
                self.min_length is not None or self.max_length is not None,
                self.pattern is not None,  # the search is charged on top, per state visited
            )
        )

    def settle(self) -> None:
        """Precompute what depends on the subschemas, once every node is linked.

        ``flat``: the only subschemas are simple ``properties``/``additionalProperties``/
        ``items`` ones, so the evaluator checks members inline, without a frame.  ``steps``:
        for a flat node, what a property of a given exact type that its schema accepts by type
        alone costs (the member's visit plus the schema's ``cost``), by (name, type).
        ``direct``: the exact dict types that pass a flat node's own checks except
        ``required``, which then cost ``direct_cost`` (``cost`` and one per required name).
        """
        self.members = bool(self.properties) or self.additional is not None
        subschemas = [*self.properties.values(), self.additional, self.items]
        self.flat = (
            not self.simple
            and self.ref is None
            and not self.all_of
            and not self.any_of
            and self.if_ is None
            and all(sub is None or sub.simple for sub in subschemas)
        )
        if not self.flat:
            return
        self.steps = {
            (name, kind): 1 + sub.cost
            for name, sub in self.properties.items()
            for kind in sub.accept
        }
        if self.plain and (self.kinds is None or "object" in self.kinds):
            self.direct = frozenset(tp for tp, kind in KINDS.items() if kind == "object")
            self.direct_cost = self.cost + len(self.required)
