"""Time and peak memory of the codec on the hostile inputs of issue 2's "done when" list.

Each input must end in bounded time and memory with its expected outcome, under the default
limits, for every built implementation.  Run: ``python bench/adversarial.py`` (``make bench``).
Peak memory is the tracemalloc peak of Python allocations during the call (the C reader
allocates through PyMem, which tracemalloc sees).
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from decimal import Decimal

from mcpkit.errors import ParseError, ParseFailure
from mcpkit.json._codec import IMPLEMENTATIONS
from mcpkit.json._values import JsonValue
from mcpkit.limits import DEFAULT_LIMITS, Limits

MiB = 1024 * 1024

Check = Callable[[JsonValue], bool]


def _is_decimal(text: str) -> Check:
    def check(value: JsonValue) -> bool:
        return isinstance(value, Decimal) and str(value) == text

    return check


CASES: list[tuple[str, bytes, Limits, ParseFailure | Check]] = [
    ("10 MiB body of '['", b"[" * (10 * MiB), DEFAULT_LIMITS, ParseFailure.DEPTH),
    (
        "10 MiB string of \\u0061 escapes",
        b'"' + b"\\u0061" * ((10 * MiB - 2) // 6) + b'"',
        DEFAULT_LIMITS,
        ParseFailure.TOKEN_UNITS,
    ),
    (
        "1,048,577-unit string (token limit raised)",
        b'"' + b"a" * 1_048_577 + b'"',
        Limits(max_token_units=16 * MiB),
        ParseFailure.STRING_UNITS,
    ),
    (
        "1,048,577-unit string (defaults)",
        b'"' + b"a" * 1_048_577 + b'"',
        DEFAULT_LIMITS,
        ParseFailure.TOKEN_UNITS,
    ),
    ("5,000-digit integer", b"7" * 5000, DEFAULT_LIMITS, _is_decimal("7" * 5000)),
    ("1e999999999", b"1e999999999", DEFAULT_LIMITS, _is_decimal("1E+999999999")),
    ("1e9999999999", b"1e9999999999", DEFAULT_LIMITS, ParseFailure.NUMBER),
]


def run_case(
    decode: Callable[..., JsonValue], data: bytes, limits: Limits, expected: ParseFailure | Check
) -> tuple[float, int, str]:
    tracemalloc.start()
    start = time.perf_counter()
    try:
        value = decode(data, limits=limits)
    except ParseError as error:
        elapsed = time.perf_counter() - start
        outcome = f"ParseError({error.reason.name})"
        ok = error.reason is expected
    else:
        elapsed = time.perf_counter() - start
        outcome = "value"
        ok = not isinstance(expected, ParseFailure) and expected(value)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    if not ok:
        raise SystemExit(f"unexpected outcome {outcome}")
    return elapsed, peak, outcome


def main() -> None:
    print(f"{'case':45} {'impl':7} {'outcome':28} {'ms':>9} {'peak KiB':>10}")
    for name, data, limits, expected in CASES:
        for impl, (decode, _encode) in sorted(IMPLEMENTATIONS.items()):
            elapsed, peak, outcome = run_case(decode, data, limits, expected)
            print(f"{name:45} {impl:7} {outcome:28} {elapsed * 1e3:9.2f} {peak / 1024:10.0f}")


if __name__ == "__main__":
    main()
