"""Selects the codec implementation: the C accelerator, or the pure-Python reference.

Both implement docs/design/json-codec.md and are tested against each other.  The C one is used
unless it is not built or ``MCPKIT_PURE_PYTHON=1`` is set when mcpkit is first imported.
"""

from __future__ import annotations

import os
from decimal import Decimal
from typing import Final, Protocol

from mcpkit.errors import OutputError, OutputFailure, ParseError, ParseFailure
from mcpkit.json import _pyreader, _pywriter
from mcpkit.json._values import JsonArray, JsonObject, JsonValue
from mcpkit.limits import DEFAULT_LIMITS, Limits

__all__ = ["IMPLEMENTATION", "IMPLEMENTATIONS", "Decoder", "Encoder", "decode", "encode"]


class Decoder(Protocol):
    def __call__(
        self, data: bytes | bytearray | memoryview, /, *, limits: Limits = DEFAULT_LIMITS
    ) -> JsonValue: ...


class Encoder(Protocol):
    def __call__(self, value: object, /, *, limits: Limits = DEFAULT_LIMITS) -> bytes: ...


def _py_decode(
    data: bytes | bytearray | memoryview, /, *, limits: Limits = DEFAULT_LIMITS
) -> JsonValue:
    if not isinstance(limits, Limits):
        raise TypeError("decode(): limits must be a mcpkit.Limits")
    return _pyreader.decode(data, limits)


def _py_encode(value: object, /, *, limits: Limits = DEFAULT_LIMITS) -> bytes:
    if not isinstance(limits, Limits):
        raise TypeError("encode(): limits must be a mcpkit.Limits")
    return _pywriter.encode(value, limits)


IMPLEMENTATIONS: Final[dict[str, tuple[Decoder, Encoder]]] = {"python": (_py_decode, _py_encode)}

try:
    from mcpkit.json import _speedups
except ImportError:  # pragma: no cover - only where the extension is not built
    pass
else:
    _speedups.configure(
        JsonObject,
        JsonArray,
        Decimal,
        ParseError,
        OutputError,
        tuple(ParseFailure[name] for name in _speedups.PARSE_REASONS),
        tuple(OutputFailure[name] for name in _speedups.OUTPUT_REASONS),
        Limits,
        DEFAULT_LIMITS,
    )
    IMPLEMENTATIONS["c"] = (_speedups.decode, _speedups.encode)

IMPLEMENTATION: Final = (
    "c" if "c" in IMPLEMENTATIONS and os.environ.get("MCPKIT_PURE_PYTHON") != "1" else "python"
)
decode: Final[Decoder] = IMPLEMENTATIONS[IMPLEMENTATION][0]
encode: Final[Encoder] = IMPLEMENTATIONS[IMPLEMENTATION][1]
