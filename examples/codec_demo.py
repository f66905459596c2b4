"""``python examples/codec_demo.py``: a short tour of the strict, bounded JSON codec.

It decodes a sample MCP ``tools/call`` request body, writes it back, and shows that malformed or
over-limit bodies fail with the fixed JSON-RPC parse error (-32700).
"""

from __future__ import annotations

import mcpkit
import mcpkit.json

SAMPLE_BODY = (
    b'{"jsonrpc":"2.0","id":7,"method":"tools/call",'
    b'"params":{"name":"inventory.search",'
    b'"arguments":{"query":"caf\\u00e9 \xf0\x9f\x9a\x80","limit":10,"max_price":19.90},'
    b'"_meta":{"protocolVersion":"2026-07-28"}}}'
)

BAD_BODIES = (
    ("duplicate member", b'{"jsonrpc":"2.0","id":1,"id":2}'),
    ("trailing comma", b'{"jsonrpc":"2.0",}'),
    ("NaN", b'{"limit":NaN}'),
    ("lone surrogate", b'{"query":"\\ud800"}'),
    ("129 nested arrays", b"[" * 129 + b"]" * 129),
)


def main() -> int:
    value = mcpkit.json.decode(SAMPLE_BODY)
    print(f"mcpkit {mcpkit.__version__}")
    print(f"request body:  {SAMPLE_BODY.decode('utf-8')}")
    print(f"decoded value: {value!r}")
    print(f"re-encoded:    {mcpkit.json.encode(value).decode('utf-8')}")
    print(f"body limit:    {mcpkit.DEFAULT_LIMITS.max_request_bytes} bytes")
    for label, body in BAD_BODIES:
        try:
            mcpkit.json.decode(body)
        except mcpkit.ParseError as error:
            print(
                f"{label + ':':19}{error.jsonrpc_code} {error.message!r}"
                f" (HTTP {error.http_status}, reason {error.reason.value})"
            )
        else:
            print(f"{label}: accepted, but must be refused")
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
