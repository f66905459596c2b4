"""Decode/encode throughput of mcpkit's JSON codec against the stdlib ``json`` and ``orjson``.

Run as ``python bench/codec.py`` (``make bench``).  Three documents: a realistic 326-byte MCP
``tools/call`` request (the size that dominates real traffic, so per-call overhead matters
most), and ~1 MiB and ~10 MiB arrays of product records (throughput).  Each case is timed with
``time.perf_counter_ns``: one warm-up call, then the best of several repeats of a loop sized
from the warm-up (garbage collector paused, as ``timeit`` does), so the whole run stays well
under two minutes.

Fairness notes, also printed with the results:

- The large documents hold far more than 100,000 JSON values, so mcpkit decodes and encodes
  them under ``BULK_LIMITS`` (``max_json_nodes=10_000_000``, request and response bytes raised
  to 16 MiB); the 326-byte body uses the production defaults.
- mcpkit encodes the value it decoded (``Decimal`` numbers, immutable containers); ``json`` and
  ``orjson`` cannot write ``Decimal``, so they encode the equivalent plain value from
  ``json.loads`` (dicts, lists, floats).  ``json.dumps`` is timed with ``.encode()`` so that all
  encoders return ``bytes``.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import importlib
import json
import random
import time
from collections.abc import Callable
from typing import Final

from mcpkit.json._codec import IMPLEMENTATIONS
from mcpkit.limits import DEFAULT_LIMITS, Limits, MiB

BULK_LIMITS: Final = DEFAULT_LIMITS.replace(
    max_json_nodes=10_000_000, max_request_bytes=16 * MiB, max_response_bytes=16 * MiB
)
MCP_BODY_SIZE: Final = 326
REPEATS: Final = 7
REPEAT_BUDGET_NS: Final = 60_000_000  # aim for ~60 ms per repeat
SLOW_OP_NS: Final = 400_000_000  # a single call this slow gets only 2 repeats


@dataclasses.dataclass(frozen=True)
class Document:
    """One benchmark input: its bytes, the limits mcpkit uses, and its plain-Python value."""

    name: str
    data: bytes
    limits: Limits


@dataclasses.dataclass(frozen=True)
class Codec:
    """A decoder/encoder pair, called directly (through ``functools.partial``) when timed.

    ``plain`` codecs take no limits and encode the ``json.loads`` value.
    """

    name: str
    decode: Callable[..., object]
    encode: Callable[..., bytes]
    plain: bool

    def decoding(self, document: Document) -> Callable[[], object]:
        if self.plain:
            return functools.partial(self.decode, document.data)
        return functools.partial(self.decode, document.data, limits=document.limits)

    def encoding(self, value: object, document: Document) -> Callable[[], bytes]:
        if self.plain:
            return functools.partial(self.encode, value)
        return functools.partial(self.encode, value, limits=document.limits)


@dataclasses.dataclass(frozen=True)
class Result:
    document: str
    operation: str
    codec: str
    ns_per_op: float
    nbytes: int

    @property
    def mb_per_s(self) -> float:
        return self.nbytes / self.ns_per_op * 1e3  # bytes/ns * 1e9 / 1e6


def mcp_tools_call_body() -> bytes:
    """A realistic MCP 2025 ``tools/call`` request of exactly 326 bytes (compact JSON)."""
    body: dict[str, object] = {
        "jsonrpc": "2.0",
        "id": 4172,
        "method": "tools/call",
        "params": {
            "name": "search_orders",
            "arguments": {
                "customer": "cus_8f3a2b91",
                "status": ["open", "shipped"],
                "placed_after": "2025-06-01T00:00:00Z",
                "min_total": 49.95,
                "limit": 25,
                "query": "",
            },
            "_meta": {"progressToken": "9d1c5e7a-33f0-4b8e-a1d2-6c0f4e8b7a15"},
        },
    }
    base = len(json.dumps(body, separators=(",", ":")).encode())
    text = "blue running shoes, size 42 wide, under warranty"
    assert 0 < MCP_BODY_SIZE - base <= len(text), base
    query = text[: MCP_BODY_SIZE - base]
    params = body["params"]
    assert isinstance(params, dict)
    params["arguments"]["query"] = query
    data = json.dumps(body, separators=(",", ":")).encode()
    assert len(data) == MCP_BODY_SIZE, len(data)
    return data


def product_records(target_bytes: int, seed: int) -> bytes:
    """Compact JSON: ``{"items": [...]}`` of varied product records, just over target size.

    A realistic mix: short and long strings (some non-ASCII and escaped), ints, floats with
    fractions, booleans, nulls, nested objects and small arrays.
    """
    rng = random.Random(seed)
    words = ["alpha", "bravo", "caf\u00e9", "delta", "\u00e9t\u00e9", "gr\u00fcn", "kilo", "lima"]
    parts: list[bytes] = []
    size = 0
    index = 0
    while size < target_bytes:
        record = {
            "id": index,
            "sku": f"SKU-{rng.randrange(10**8):08d}",
            "name": " ".join(rng.choices(words, k=rng.randint(2, 6))),
            "price": round(rng.uniform(0.5, 2000.0), 2),
            "rating": round(rng.uniform(0, 5), 3),
            "stock": rng.randint(0, 10_000),
            "active": rng.random() < 0.8,
            "discount": None if rng.random() < 0.5 else round(rng.random(), 4),
            "tags": rng.sample(words, k=rng.randint(0, 4)),
            "dimensions": {
                "w": round(rng.uniform(1, 100), 1),
                "h": round(rng.uniform(1, 100), 1),
                "unit": "cm",
            },
            "description": ('Line one.\nLine "two" \U0001f680 ' * rng.randint(1, 8)).strip(),
        }
        part = json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()
        parts.append(part)
        size += len(part) + 1
        index += 1
    return b'{"items":[' + b",".join(parts) + b"]}"


def _json_dumps(value: object) -> bytes:
    """``json.dumps`` as compact UTF-8 bytes, the form every other encoder returns."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def codecs() -> list[Codec]:
    """mcpkit C (if built), mcpkit pure Python, stdlib json, and orjson (if importable)."""
    found = [
        Codec(f"mcpkit-{name}", *IMPLEMENTATIONS[name], plain=False)
        for name in ("c", "python")
        if name in IMPLEMENTATIONS
    ]
    found.append(Codec("json", json.loads, _json_dumps, plain=True))
    try:
        orjson = importlib.import_module("orjson")
    except ImportError:
        return found
    found.append(Codec("orjson", orjson.loads, orjson.dumps, plain=True))
    return found


def best_ns_per_op(operation: Callable[[], object]) -> float:
    """Best-of-N mean time per call, the loop sized from a warm-up call.

    The garbage collector is paused while timing (as ``timeit`` does): otherwise a collection
    triggered by one codec's allocations is charged to whichever codec happens to run next.
    """
    gc.collect()
    start = time.perf_counter_ns()
    operation()
    first = max(time.perf_counter_ns() - start, 1)
    loops = max(1, REPEAT_BUDGET_NS // first)
    repeats = 2 if first > SLOW_OP_NS else REPEATS
    best = float("inf")
    gc.disable()
    try:
        for _ in range(repeats):
            start = time.perf_counter_ns()
            for _ in range(loops):
                operation()
            best = min(best, (time.perf_counter_ns() - start) / loops)
    finally:
        gc.enable()
    return best


def run(documents: list[Document], available: list[Codec]) -> list[Result]:
    results: list[Result] = []
    for document in documents:
        plain = json.loads(document.data)
        for codec in available:
            ns = best_ns_per_op(codec.decoding(document))
            results.append(Result(document.name, "decode", codec.name, ns, len(document.data)))
            value = plain if codec.plain else codec.decoding(document)()
            encode = codec.encoding(value, document)
            ns = best_ns_per_op(encode)
            results.append(Result(document.name, "encode", codec.name, ns, len(encode())))
            print(".", end="", flush=True)
    print()
    return results


def report(results: list[Result]) -> None:
    header = f"{'document':<16} {'op':<7} {'codec':<14} {'us/op':>12} {'MB/s':>9} {'vs json':>8}"
    print(header)
    print("-" * len(header))
    baseline = {(r.document, r.operation): r.ns_per_op for r in results if r.codec == "json"}
    for r in results:
        ratio = r.ns_per_op / baseline[(r.document, r.operation)]
        print(
            f"{r.document:<16} {r.operation:<7} {r.codec:<14} {r.ns_per_op / 1e3:>12.2f} "
            f"{r.mb_per_s:>9.1f} {ratio:>7.2f}x"
        )


def main() -> None:
    documents = [
        Document(f"mcp-call-{MCP_BODY_SIZE}B", mcp_tools_call_body(), DEFAULT_LIMITS),
        Document("records-1MiB", product_records(1 * MiB, seed=1), BULK_LIMITS),
        Document("records-10MiB", product_records(10 * MiB - 64 * 1024, seed=10), BULK_LIMITS),
    ]
    available = codecs()
    print("mcpkit JSON codec benchmark (best of repeats, gc paused; MB = 10^6 bytes;")
    print("'vs json' = time ratio to the stdlib json on the same document and operation)")
    for document in documents:
        print(f"  {document.name}: {len(document.data):,} bytes")
    print("  large documents: mcpkit uses max_json_nodes=10,000,000 and 16 MiB byte limits")
    print("  encode: mcpkit writes its decoded value (Decimal numbers); json/orjson write the")
    print("  equivalent plain value from json.loads (floats), as they cannot write Decimal")
    if "c" not in IMPLEMENTATIONS:
        print("  NOTE: the C extension is not built; the ratio below is for pure Python")
    started = time.perf_counter()
    results = run(documents, available)
    report(results)
    primary = "mcpkit-c" if "c" in IMPLEMENTATIONS else "mcpkit-python"
    decode_small = {
        r.codec: r.ns_per_op
        for r in results
        if r.document == documents[0].name and r.operation == "decode"
    }
    print(f"total time {time.perf_counter() - started:.1f}s")
    print(
        f"{MCP_BODY_SIZE}-byte decode ratio vs json.loads: "
        f"{decode_small[primary] / decode_small['json']:.2f}x"
    )


if __name__ == "__main__":
    main()
