"""What the typed-layer tests share: a derived model's document as plain JSON, arguments from
JSON text, and a binding that must be refused."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Final

import pytest

from mcpkit.errors import ArgumentsInvalid
from mcpkit.json import JsonObject, decode, encode

MAX: Final = Decimal("1.7976931348623157E+308")
"""The bound every derived ``float`` schema publishes."""


def doc(model: Any) -> Any:
    return decode(encode(model.document))


def args(text: str) -> JsonObject:
    value = decode(text.encode())
    assert isinstance(value, JsonObject)
    return value


def refused(model: Any, text: str) -> ArgumentsInvalid:
    with pytest.raises(ArgumentsInvalid) as caught:
        model.bind(args(text))
    return caught.value
