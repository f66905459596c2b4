"""Validate + bind typical ``tools/call`` arguments: mcpkit against jsonschema and pydantic.

Run as ``python bench/schema.py`` (``make bench``).  The arguments have four properties, a
nested object and a list (``SearchArgs`` below).  Each contender gets the input in the form it
normally starts from, and decoding is never timed:

- mcpkit: the ``JsonObject`` from ``mcpkit.json.decode``; timed ``model.bind(value)`` of
  ``model = derive_input(SearchArgs)``, which runs ``model.schema.evaluate(value)`` and then
  binds (so evaluation is not counted twice); ``evaluate`` alone and ``bind_validated``
  (binding alone) are shown for reference.
- jsonschema: a precompiled ``Draft202012Validator`` over the *same* schema document, on the
  ``json.loads`` value; timed ``is_valid`` only: jsonschema does not bind.
- pydantic: ``TypeAdapter(SearchArgs).validate_python`` on the ``json.loads`` value (validation
  and construction of the dataclasses, lax mode).

Each is timed with ``time.perf_counter_ns``: a warm-up, then the best of several repeats of a
loop sized from the warm-up, repeats interleaved across contenders, garbage collector paused
(as ``timeit`` does); the run takes a few seconds.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import importlib.metadata
import json
import time
from collections.abc import Callable
from decimal import Decimal
from typing import Final

import jsonschema
import pydantic

from mcpkit.json import IMPLEMENTATION, JsonObject, decode, encode
from mcpkit.schema import Outcome
from mcpkit.schema._typed import derive_input

REPEATS: Final = 15
WARMUP_CALLS: Final = 200
REPEAT_BUDGET_NS: Final = 30_000_000  # ~30 ms per repeat


@dataclasses.dataclass(frozen=True)
class Filters:
    min_price: Decimal | None
    in_stock: bool


@dataclasses.dataclass(frozen=True)
class SearchArgs:
    query: str
    filters: Filters
    tags: list[str]
    limit: int | None = None


ARGUMENTS: Final = (
    b'{"query":"blue running shoes, size 42 wide","limit":25,'
    b'"filters":{"min_price":49.95,"in_stock":true},"tags":["sale","outdoor","running"]}'
)
EXPECTED: Final = SearchArgs(
    query="blue running shoes, size 42 wide",
    filters=Filters(min_price=Decimal("49.95"), in_stock=True),
    tags=["sale", "outdoor", "running"],
    limit=25,
)


@dataclasses.dataclass(frozen=True)
class Contender:
    name: str
    call: Callable[[], object]
    note: str


def _loops(operation: Callable[[], object]) -> int:
    """Calls per timed repeat, sized from the warm-up calls."""
    start = time.perf_counter_ns()
    for _ in range(WARMUP_CALLS):
        operation()
    per_call = max((time.perf_counter_ns() - start) // WARMUP_CALLS, 1)
    return max(1, REPEAT_BUDGET_NS // per_call)


def best_ns_per_op(found: list[Contender]) -> dict[str, float]:
    """Best-of-N mean time per call of each contender.

    Repeats are interleaved (one repeat of every contender per round), so a burst of load on
    a shared machine hits all contenders alike instead of whichever runs at that moment; the
    garbage collector is paused while timing.
    """
    loops = {contender.name: _loops(contender.call) for contender in found}
    best = dict.fromkeys(loops, float("inf"))
    gc.collect()
    gc.disable()
    try:
        for _ in range(REPEATS):
            for contender in found:
                call, count = contender.call, loops[contender.name]
                start = time.perf_counter_ns()
                for _ in range(count):
                    call()
                elapsed = (time.perf_counter_ns() - start) / count
                best[contender.name] = min(best[contender.name], elapsed)
    finally:
        gc.enable()
    return best


def contenders() -> list[Contender]:
    """The timed calls, each checked once for the right answer before it is timed."""
    value = decode(ARGUMENTS)
    plain = json.loads(ARGUMENTS)
    assert isinstance(value, JsonObject)
    model = derive_input(SearchArgs)
    schema = model.schema
    # The same document mcpkit derived and compiled, as plain dicts and lists for jsonschema.
    plain_schema = json.loads(encode(model.document))
    validator = jsonschema.Draft202012Validator(plain_schema)
    adapter = pydantic.TypeAdapter(SearchArgs)

    assert schema.evaluate(value) is Outcome.VALID
    assert model.bind(value) == EXPECTED
    assert model.bind_validated(value) == EXPECTED
    assert validator.is_valid(plain)
    assert adapter.validate_python(plain) == EXPECTED
    return [
        Contender(
            "mcpkit evaluate+bind",
            functools.partial(model.bind, value),
            "InputModel.bind: schema.evaluate, then binding; JsonObject in, SearchArgs out",
        ),
        Contender("mcpkit evaluate only", functools.partial(schema.evaluate, value), "reference"),
        Contender(
            "mcpkit bind only",
            functools.partial(model.bind_validated, value),
            "InputModel.bind_validated: binding of arguments evaluation already accepted",
        ),
        Contender(
            "jsonschema is_valid",
            lambda: validator.is_valid(plain),
            "precompiled Draft202012Validator; no binding",
        ),
        Contender(
            "pydantic validate_python",
            lambda: adapter.validate_python(plain),
            "TypeAdapter(SearchArgs), lax mode; validates and builds",
        ),
    ]


def main() -> None:
    print("mcpkit schema benchmark: validate + bind typical tools/call arguments")
    print(f"  arguments: {len(ARGUMENTS)} bytes, decoding not timed (codec: {IMPLEMENTATION})")
    print(f"  jsonschema {importlib.metadata.version('jsonschema')}, pydantic {pydantic.VERSION}")
    print(f"  best of {REPEATS} repeats of ~{REPEAT_BUDGET_NS // 1_000_000} ms, gc paused")
    started = time.perf_counter()
    found = contenders()
    results = best_ns_per_op(found)
    primary = results["mcpkit evaluate+bind"]
    header = f"{'contender':<26} {'us/op':>8} {'mcpkit/this':>12}  note"
    print(header)
    print("-" * len(header))
    for contender in found:
        ns = results[contender.name]
        print(f"{contender.name:<26} {ns / 1e3:>8.2f} {primary / ns:>11.2f}x  {contender.note}")
    print(f"total time {time.perf_counter() - started:.1f}s")
    print(f"validate+bind ratio vs pydantic: {primary / results['pydantic validate_python']:.2f}x")
    print(f"validate+bind ratio vs jsonschema: {primary / results['jsonschema is_valid']:.2f}x")
    bind_only = results["mcpkit bind only"] / results["jsonschema is_valid"]
    print(f"bind only ratio vs jsonschema: {bind_only:.3f}x")


if __name__ == "__main__":
    main()
