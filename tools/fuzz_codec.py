"""Mutation fuzzer for the C codec, meant to run under AddressSanitizer (``make fuzz``).

``make fuzz`` builds ``_speedups.c`` with ``-fsanitize=address,undefined`` into a scratch
directory and runs this script with that build preloaded; any memory error aborts the run.
Every decoded value is also re-encoded and compared with the pure-Python reference, so the
fuzzer doubles as a differential test on inputs hypothesis is unlikely to reach.

Usage: ``python tools/fuzz_codec.py SO_PATH [SEED] [ITERATIONS]``
"""

from __future__ import annotations

import importlib.util
import random
import sys

SEEDS = [
    b'{"a":[1,2.5,"x\\u00e9\\ud83d\\ude80",true,false,null,{}],"b":-0,"c":1E+0}',
    b'"\xc3\xa9\xf0\x9f\x9a\x80\\n\\t\\"\\\\\\/"',
    b'[[[]],{"k":{"z":[1e5,-0.5e-3,0,-0.0]}}]',
    b"123456789012345678901234567890",
    b'"\\u0041\\ud83d\\ude80\\u0000"',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}',
]
ALPHABET = (
    b'{}[]",:\\u0123456789abcdefEe+-.truefalsnl \t\n\r'
    b"\x00\x1f\x7f\x80\xbf\xc0\xc3\xe0\xed\xf0\xf4\xff"
)


def load_extension(path: str) -> None:
    spec = importlib.util.spec_from_file_location("mcpkit.json._speedups", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mcpkit.json._speedups"] = module
    spec.loader.exec_module(module)


def mutate(rnd: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rnd.randint(1, 6)):
        pos = rnd.randint(0, len(out))
        op = rnd.randint(0, 3)
        if op == 0:
            out[pos:pos] = bytes([rnd.choice(ALPHABET)])
        elif op == 1 and out:
            del out[min(pos, len(out) - 1)]
        elif op == 2:
            out[pos : pos + rnd.randint(0, 4)] = bytes(
                rnd.choice(ALPHABET) for _ in range(rnd.randint(0, 4))
            )
        else:
            out[pos:pos] = rnd.choice(SEEDS)
    return bytes(out)


def main() -> None:
    load_extension(sys.argv[1])
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    iterations = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000

    from mcpkit.errors import OutputError, ParseError
    from mcpkit.json import json_equal
    from mcpkit.json._codec import IMPLEMENTATIONS
    from mcpkit.limits import Limits

    c_decode, c_encode = IMPLEMENTATIONS["c"]
    py_decode, py_encode = IMPLEMENTATIONS["python"]
    limits = [
        Limits(),
        Limits(max_json_depth=3, max_json_nodes=10, max_string_units=5, max_token_units=8),
        Limits(max_response_bytes=40),
    ]
    rnd = random.Random(seed)
    values = 0
    for _ in range(iterations):
        data = mutate(rnd, rnd.choice(SEEDS))
        lim = rnd.choice(limits)
        outcomes: list[tuple[str, object]] = []
        for decode in (c_decode, py_decode):
            try:
                outcomes.append(("value", decode(data, limits=lim)))
            except ParseError as error:
                outcomes.append(("error", error.reason))
        (c_kind, c_val), (p_kind, p_val) = outcomes
        same = c_kind == p_kind and (
            c_val is p_val if c_kind == "error" else json_equal(c_val, p_val)
        )
        if not same:
            raise SystemExit(f"decode differs on {data!r}: c={outcomes[0]} python={outcomes[1]}")
        if c_kind != "value":
            continue
        values += 1
        written: list[object] = []
        for encode in (c_encode, py_encode):
            try:
                written.append(encode(c_val, limits=lim))
            except OutputError as error:
                written.append(error.reason)
        if written[0] != written[1]:
            raise SystemExit(f"encode differs on {data!r}: c={written[0]!r} py={written[1]!r}")
    print(f"fuzz: {iterations} inputs, {values} decoded, C and Python agree, no sanitizer report")


if __name__ == "__main__":
    main()
