"""Shared pieces of the codec tests: the implementation handle and strict value comparison.

``json_equal`` is deliberately lenient (``1 == 1.0``); the tests need the opposite, a check
that a decoded value has exactly the expected types, member order, and Decimal scale.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from decimal import Decimal

import pytest

from mcpkit.errors import OutputError, OutputFailure, ParseError, ParseFailure
from mcpkit.json import JsonArray, JsonObject, JsonValue
from mcpkit.limits import DEFAULT_LIMITS, Limits, MiB

__all__ = [
    "Impl",
    "MiB",
    "Outcome",
    "assert_same",
    "decode_outcome",
    "limits",
]

Outcome = tuple[str, object]
"""``("ok", value)`` or ``("error", reason)``: what one decode did, comparable across impls."""


@dataclasses.dataclass(frozen=True)
class Impl:
    """One codec implementation from ``mcpkit.json._codec.IMPLEMENTATIONS``."""

    name: str
    decode: Callable[..., JsonValue]
    encode: Callable[..., bytes]

    def parse_failure(
        self, data: bytes | bytearray | memoryview, limits: Limits = DEFAULT_LIMITS
    ) -> ParseFailure:
        """Decode ``data``, which must fail, and return the reason."""
        with pytest.raises(ParseError) as info:
            self.decode(data, limits=limits)
        return info.value.reason

    def output_failure(self, value: object, limits: Limits = DEFAULT_LIMITS) -> OutputFailure:
        """Encode ``value``, which must fail, and return the reason."""
        with pytest.raises(OutputError) as info:
            self.encode(value, limits=limits)
        return info.value.reason

    def __repr__(self) -> str:
        return f"Impl({self.name})"


def limits(**changes: int) -> Limits:
    """Default limits with some fields changed."""
    return DEFAULT_LIMITS.replace(**changes)


def decode_outcome(
    decode: Callable[..., JsonValue], data: bytes, limits: Limits = DEFAULT_LIMITS
) -> Outcome:
    """Run one decode; any exception other than ParseError propagates (and fails the test)."""
    try:
        return ("ok", decode(data, limits=limits))
    except ParseError as error:
        return ("error", error.reason)


def assert_same(actual: object, expected: object, path: str = "$") -> None:
    """Assert ``actual`` is exactly ``expected``: types, member order and Decimal scale.

    ``expected`` may use plain ``dict``/``list``; the decoded side must use the JSON types.
    """
    if isinstance(expected, dict):
        assert type(actual) is JsonObject, f"{path}: {type(actual).__name__} is not JsonObject"
        assert list(actual) == list(expected), f"{path}: member names or order differ"
        for name, member in expected.items():
            assert_same(actual[name], member, f"{path}.{name}")
    elif isinstance(expected, (list, tuple)):
        assert type(actual) is JsonArray, f"{path}: {type(actual).__name__} is not JsonArray"
        assert len(actual) == len(expected), f"{path}: lengths differ"
        for index, (item, want) in enumerate(zip(actual, expected, strict=True)):
            assert_same(item, want, f"{path}[{index}]")
    elif isinstance(expected, Decimal):
        assert type(actual) is Decimal, f"{path}: {actual!r} is not a Decimal"
        assert actual.as_tuple() == expected.as_tuple(), f"{path}: {actual!r} != {expected!r}"
    elif expected is None or isinstance(expected, bool):
        assert actual is expected, f"{path}: {actual!r} is not {expected!r}"
    else:
        assert type(actual) is type(expected), f"{path}: {actual!r} vs {expected!r}"
        assert actual == expected, f"{path}: {actual!r} != {expected!r}"
