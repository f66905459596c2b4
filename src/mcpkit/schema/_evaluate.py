"""Evaluate an instance against a compiled Profile 1 schema, with an operation budget.

JSON Schema 2020-12 semantics for the Profile 1 keywords (docs/design/schema.md).  Two properties
matter as much as the answer:

- **Bounded work**: every schema node applied to a value, every keyword check,
  every ``$ref`` followed, every node compared by ``enum``/``const``, every object member
  visited and every state a ``pattern`` search visits (at most the pattern's states per code
  point, ``_pattern``) charges one operation; past the budget the outcome is
  ``BUDGET_EXHAUSTED``, which callers treat exactly like ``INVALID``.
- **No Python recursion**: a schema node with subschemas is evaluated by a generator that
  yields ``(node, value)`` requests to one driver loop, which keeps the generators on an
  explicit stack.  Deep values and long reference chains therefore meet the budget, never the
  interpreter's recursion limit.  Nodes without subschemas (most property schemas) are checked
  inline, without a generator, and so are *flat* nodes, whose only subschemas are such nodes
  under ``properties``/``additionalProperties``/``items`` (most object roots): their members
  are checked in one loop, which charges exactly what the generator would, in the same order.

Diagnostics: the driver keeps one path stack per call, and only when asked for the
error path; failures inside ``anyOf`` branches and ``if`` conditions are expected and do not
record a path.
"""

from __future__ import annotations

import enum
import functools
import queue
from collections.abc import Callable, Generator
from decimal import Decimal
from types import TracebackType
from typing import Final, NamedTuple

from mcpkit.schema._nodes import ABSENT, KINDS, Node, scalar_key

__all__ = ["UNDECLARED", "EvaluationGate", "Failure", "Outcome", "diagnose", "evaluate", "outcome"]


class Outcome(enum.Enum):
    """The result of one evaluation; not a public error API."""

    VALID = "valid"
    INVALID = "invalid"
    BUDGET_EXHAUSTED = "budget_exhausted"


class _Exhausted(Exception):
    """Raised inside the driver when the budget runs out."""


Request = tuple[Node, object, "str | int | None"]
Frame = Generator[Request, bool, bool]


UNDECLARED: Final = "".join(("<", "member", ">"))
"""The diagnostic path's segment for an object member the schema does not name (its name is
the client's, so it is never reported): compared by identity, never equal to a real name's
object."""


class Failure(NamedTuple):
    """Where an instance first failed and why: the path (``UNDECLARED`` for a member the
    schema does not name), the keyword that refused it (``type``, ``enum``, ``const``,
    ``minimum``, ``maximum``, ``minLength``, ``maxLength``, ``pattern``, ``required``,
    ``false``, ``anyOf``), the schema node that holds
    it and the value it refused (for ``required``: the object, to name a missing member)."""

    path: tuple[str | int, ...]
    keyword: str
    node: Node
    value: object


class _Run:
    """State of one evaluation call: the budget, and the diagnostics if wanted."""

    __slots__ = ("budget", "failure", "path", "quiet")

    def __init__(self, budget: int, path: list[str | int] | None) -> None:
        self.budget = budget
        self.path = path  # the diagnostic path, or None without diagnostics
        self.quiet = 0  # > 0 inside anyOf branches and if conditions
        self.failure: Failure | None = None

    def charge(self, operations: int) -> None:
        self.budget -= operations
        if self.budget < 0:
            raise _Exhausted

    def fail(self, keyword: str, node: Node, value: object) -> bool:
        if self.path is not None and self.quiet == 0 and self.failure is None:
            self.failure = Failure(tuple(self.path), keyword, node, value)
        return False


def evaluate(
    root: Node, instance: object, max_operations: int, diagnostics: bool = False
) -> tuple[Outcome, tuple[str | int, ...] | None]:
    """Evaluate ``instance``; return the outcome and, with ``diagnostics``, the error path."""
    found, failure = diagnose(root, instance, max_operations, diagnostics)
    return found, None if failure is None else failure.path


def diagnose(
    root: Node, instance: object, max_operations: int, diagnostics: bool = True
) -> tuple[Outcome, Failure | None]:
    """Evaluate ``instance``; the outcome and, with ``diagnostics``, its first ``Failure``."""
    run = _Run(max_operations, [] if diagnostics else None)
    try:
        valid = _drive(root, instance, run)
    except _Exhausted:
        return Outcome.BUDGET_EXHAUSTED, None
    return (Outcome.VALID if valid else Outcome.INVALID), run.failure


def outcome(root: Node, instance: object, max_operations: int) -> Outcome:
    """``evaluate`` without diagnostics, for the request path: the outcome alone."""
    run = _Run(max_operations, None)
    try:
        valid = _flat(root, instance, run) if root.flat else _drive(root, instance, run)
    except _Exhausted:
        return Outcome.BUDGET_EXHAUSTED
    return Outcome.VALID if valid else Outcome.INVALID


def _drive(root: Node, instance: object, run: _Run) -> bool:
    if root.simple:
        return _check(root, instance, run)
    if root.flat:
        return _flat(root, instance, run)
    path = run.path
    stack: list[Frame] = [_apply(root, instance, run)]
    segments = [False]  # whether each frame added a segment to the diagnostic path
    result: bool | None = None  # None: the top frame has not started yet
    while True:
        try:
            request = stack[-1].send(result) if result is not None else next(stack[-1])
        except StopIteration as stop:
            stack.pop()
            if segments.pop() and path is not None:
                path.pop()
            result = bool(stop.value)
            if not stack:
                return result
            continue
        node, value, segment = request
        record = path is not None and segment is not None
        if record:
            path.append(segment)  # type: ignore[union-attr, arg-type]
        if node.simple or node.flat:
            result = _check(node, value, run) if node.simple else _flat(node, value, run)
            if record:
                path.pop()  # type: ignore[union-attr]
            continue
        segments.append(record)
        stack.append(_apply(node, value, run))
        result = None


def _apply(node: Node, value: object, run: _Run) -> Frame:
    """Evaluate a node that has subschemas; yields requests for them."""
    if not _check(node, value, run):
        return False
    if isinstance(value, dict) and (node.properties or node.additional is not None):
        properties, additional = node.properties, node.additional
        diagnosing = run.path is not None
        for name, member in value.items():
            run.charge(1)
            sub = properties.get(name, additional)
            segment = UNDECLARED if diagnosing and name not in properties else name
            if sub is not None and not (yield (sub, member, segment)):
                return False
    elif isinstance(value, list | tuple) and node.items is not None:
        items = node.items
        for index, item in enumerate(value):
            run.charge(1)
            if not (yield (items, item, index)):
                return False
    if node.ref is not None:
        run.charge(1)
        if not (yield (node.ref, value, None)):
            return False
    for sub in node.all_of:
        if not (yield (sub, value, None)):
            return False
    if node.any_of:
        run.quiet += 1
        matched = False
        for sub in node.any_of:
            if (yield (sub, value, None)):
                matched = True
                break
        run.quiet -= 1
        if not matched:
            return run.fail("anyOf", node, value)
    if node.if_ is not None:
        run.quiet += 1
        condition = yield (node.if_, value, None)
        run.quiet -= 1
        branch = node.then if condition else node.else_
        if branch is not None and not (yield (branch, value, None)):
            return False
    return True


def _flat(node: Node, value: object, run: _Run) -> bool:
    """What ``_apply`` does for a flat node, without a frame.

    Charges are those of ``_check`` and ``_apply``, in the same order, each checked as it is
    made; charges with no failure possible between them are made as one.  Between members the
    budget is kept in a local and written back before anything else reads it.
    """
    if type(value) in node.direct:  # an object that only "required" can fail (Node.settle)
        budget = run.budget - node.direct_cost
        if budget < 0:
            raise _Exhausted
        if not value.keys() >= node.required_names:  # type: ignore[attr-defined]
            run.budget = budget
            return run.fail("required", node, value)
    elif not _check(node, value, run):
        return False
    elif not isinstance(value, dict):
        if node.items is not None and isinstance(value, list | tuple):
            return _flat_items(node.items, value, run)
        return True
    else:
        budget = run.budget
    if not node.members:
        run.budget = budget
        return True
    steps = node.steps  # ``properties`` is read only for a member ``steps`` does not cover
    for name, member in value.items():  # type: ignore[attr-defined]
        step = steps.get((name, type(member)))
        if step is None:
            sub = node.properties.get(name, node.additional)
            if sub is None:
                step = 1
            elif type(member) in sub.accept:
                step = 1 + sub.cost
            elif not _check_at(
                sub, member, name if name in node.properties else UNDECLARED, run, budget
            ):
                return False
            else:
                budget = run.budget
                continue
        budget -= step
        if budget < 0:
            raise _Exhausted
    run.budget = budget
    return True


def _flat_items(items: Node, value: list[object] | tuple[object, ...], run: _Run) -> bool:
    """The items of a flat node's array, as ``_apply`` checks them."""
    budget = run.budget
    for index, item in enumerate(value):
        if type(item) in items.accept:
            budget -= 1 + items.cost
            if budget < 0:
                raise _Exhausted
            continue
        if not _check_at(items, item, index, run, budget):
            return False
        budget = run.budget
    run.budget = budget
    return True


def _check_at(node: Node, value: object, segment: str | int, run: _Run, budget: int) -> bool:
    """``_check`` of a member or item, with its name or index on the diagnostic path.

    ``budget`` is what the calling loop has left: the member's node is charged from it first,
    and ``run.budget`` holds the rest afterwards."""
    run.budget = budget - 1
    if run.budget < 0:
        raise _Exhausted
    path = run.path
    if path is None:
        return _check(node, value, run)
    path.append(segment)
    valid = _check(node, value, run)
    path.pop()
    return valid


_NUMBER_TYPES: Final = (int, Decimal)


def _kind(value: object) -> str | None:
    kind = KINDS.get(type(value))
    if kind is not None:
        return kind
    if isinstance(value, Decimal):
        return "integer" if _is_integral(value) else "number"
    return None  # not a JSON value: no type accepts it


def _is_number(value: object) -> bool:
    return isinstance(value, _NUMBER_TYPES) and not isinstance(value, bool)


def _is_integral(value: Decimal) -> bool:
    """2020-12 "integer": any number with a zero fractional part (``1.0``, ``1E+2``)."""
    _sign, digits, exponent = value.as_tuple()
    places = int(exponent)  # JSON numbers are finite, so the exponent is an int
    return places >= 0 or not any(digits[places:])


def _check(node: Node, value: object, run: _Run) -> bool:
    """The keywords of one node that need no subschema: type, enum, const, bounds, string
    length and pattern, required.

    Charges one operation for the node and one per keyword it checks (``node.cost``), plus
    what equality, ``pattern`` searches and ``required`` lookups cost.
    """
    run.budget -= node.cost
    if run.budget < 0:
        raise _Exhausted
    if node.always is not None:
        return node.always or run.fail("false", node, value)
    if node.kinds is not None and type(value) not in node.exact and _kind(value) not in node.kinds:
        return run.fail("type", node, value)
    if not node.plain:  # const, enum or bounds
        if node.const is not ABSENT and not _equal(node.const, value, run):
            return run.fail("const", node, value)
        if node.enum_keys is not None:
            if scalar_key(value) not in node.enum_keys:
                return run.fail("enum", node, value)
        elif node.enum is not None:
            for option in node.enum:
                if _equal(option, value, run):
                    break
            else:
                return run.fail("enum", node, value)
        if node.bounded and _is_number(value):
            if node.minimum is not None and value < node.minimum:  # type: ignore[operator]
                return run.fail("minimum", node, value)
            if node.maximum is not None and value > node.maximum:  # type: ignore[operator]
                return run.fail("maximum", node, value)
        if node.textual and isinstance(value, str):
            # code points, as 2020-12 counts them: an astral character is one
            if node.min_length is not None and len(value) < node.min_length:
                return run.fail("minLength", node, value)
            if node.max_length is not None and len(value) > node.max_length:
                return run.fail("maxLength", node, value)
            if node.pattern is not None:
                found, used = node.pattern.search(value, run.budget)
                run.budget -= used
                if run.budget < 0:
                    raise _Exhausted
                if not found:
                    return run.fail("pattern", node, value)
    if node.required and isinstance(value, dict):
        run.budget -= len(node.required)
        if run.budget < 0:
            raise _Exhausted
        if not value.keys() >= node.required_names:  # one C-level lookup per name
            return run.fail("required", node, value)
    return True


def _equal(a: object, b: object, run: _Run) -> bool:
    """JSON equality of a schema value ``a`` and an instance ``b``, charging one operation per
    node pair and per member looked up."""
    pending: list[tuple[object, object]] = [(a, b)]  # the left side is always a JSON value
    while pending:
        x, y = pending.pop()
        run.charge(1)
        if isinstance(x, bool) or isinstance(y, bool) or x is None or y is None:
            if x is not y:
                return False
        elif isinstance(x, str) or isinstance(y, str):
            if not (isinstance(x, str) and isinstance(y, str) and x == y):
                return False
        elif _is_number(x) or _is_number(y):
            if not (_is_number(x) and _is_number(y)):
                return False
            if x != y:
                return False
        elif isinstance(x, dict):
            if not isinstance(y, dict) or len(x) != len(y):
                return False
            run.charge(len(x))
            for name, member in x.items():
                if name not in y:
                    return False
                pending.append((member, y[name]))
        else:  # an array: the schema side (x) is always a JSON value
            if not isinstance(y, list | tuple) or len(x) != len(y):  # type: ignore[arg-type]
                return False
            pending.extend(zip(x, y, strict=True))  # type: ignore[call-overload]
    return True


class EvaluationGate:
    """Bounds schema evaluations running at once, server-wide.

    Evaluations are short and bounded by their budget, so a caller waits for a slot rather
    than failing: a full gate slows requests down, it never turns valid input into an error.
    """

    __slots__ = ("_slots", "enter", "leave", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        # A queue holding one token per free slot: taking and giving one back are single C
        # calls, with no Python-level lock or condition code on the way; get() blocks only
        # when every slot is taken.
        self._slots: queue.SimpleQueue[None] = queue.SimpleQueue()
        for _ in range(limit):
            self._slots.put(None)
        # The ``with`` statement's two steps as C calls, for the per-request paths (``enter()``,
        # then ``leave()`` in a ``finally``): no Python frame for either.
        self.enter: Callable[[], None] = self._slots.get
        self.leave: Callable[[], None] = functools.partial(self._slots.put, None)

    def __enter__(self) -> EvaluationGate:
        self._slots.get()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._slots.put(None)
