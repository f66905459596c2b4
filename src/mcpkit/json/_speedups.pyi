from typing import Final

from mcpkit.json._values import JsonValue
from mcpkit.limits import Limits

PARSE_REASONS: Final[tuple[str, ...]]
OUTPUT_REASONS: Final[tuple[str, ...]]

def decode(data: bytes | bytearray | memoryview, /, *, limits: Limits = ...) -> JsonValue: ...
def encode(value: object, /, *, limits: Limits = ...) -> bytes: ...
def configure(
    object_type: type,
    array_type: type,
    decimal_type: type,
    parse_error: type,
    output_error: type,
    parse_reasons: tuple[object, ...],
    output_reasons: tuple[object, ...],
    limits_type: type,
    default_limits: Limits,
    /,
) -> None: ...
