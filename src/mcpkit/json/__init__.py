"""The strict bounded JSON codec and the immutable JSON values (docs/design/json-codec.md).

This package is the only place mcpkit parses or writes JSON.  ``decode`` turns request bytes
into immutable values under every limit of :class:`mcpkit.Limits` and raises
:class:`mcpkit.ParseError` (-32700) on any failure; ``encode`` writes compact UTF-8 JSON under
the output limits and raises :class:`mcpkit.OutputError` (-32603).
"""

from mcpkit.json._codec import IMPLEMENTATION as IMPLEMENTATION
from mcpkit.json._codec import decode as decode
from mcpkit.json._codec import encode as encode
from mcpkit.json._values import JsonArray as JsonArray
from mcpkit.json._values import JsonObject as JsonObject
from mcpkit.json._values import JsonValue as JsonValue
from mcpkit.json._values import from_python as from_python
from mcpkit.json._values import json_equal as json_equal
from mcpkit.json._values import json_hash as json_hash
from mcpkit.json._values import string as string
from mcpkit.json._values import utf16_units as utf16_units
from mcpkit.json._values import wrap_array as wrap_array
from mcpkit.json._values import wrap_object as wrap_object

__all__ = (
    "IMPLEMENTATION",
    "JsonArray",
    "JsonObject",
    "JsonValue",
    "decode",
    "encode",
    "from_python",
    "json_equal",
    "json_hash",
    "string",
    "utf16_units",
    "wrap_array",
    "wrap_object",
)
