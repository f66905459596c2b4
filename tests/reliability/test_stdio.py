"""``mcpkit serve --stdio`` under a flood and at end of input: memory stays bounded however
fast lines arrive, and every request admitted before stdin closed is answered before the
process exits (non-zero when the grace period cut work off)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from mcpkit.testing import stateless_request

from .harness import APP, ROOT

OVERLOADED = {"code": -32603, "message": "Server overloaded; retry later"}


def start(limits: dict[str, object] | None = None) -> subprocess.Popen[bytes]:
    env = {**os.environ, "HOSTILE_LIMITS": json.dumps(limits or {})}
    return subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "serve", str(APP), "--stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env=env,
    )


def peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")  # pragma: no cover


def line(message: dict[str, object]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def test_a_flood_of_requests_is_answered_within_bounded_memory() -> None:
    """100,000 ``tools/list`` lines written as fast as the pipe takes them (the probe peaked at
    1.06 GiB): every one is answered, by its result or by the overload error, and the peak
    RSS stays within a bounded distance of the idle process's."""
    count = 100_000
    process = start()
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(line(stateless_request("tools/list", id=0)))
    process.stdin.flush()
    assert json.loads(process.stdout.readline())["id"] == 0
    idle_peak = peak_rss_kib(process.pid)
    answers: dict[str, int] = {"result": 0, "overloaded": 0, "other": 0}

    def read() -> None:
        assert process.stdout is not None
        for raw in process.stdout:
            message = json.loads(raw)
            if "result" in message:
                answers["result"] += 1
            elif message.get("error") == OVERLOADED:
                answers["overloaded"] += 1
            else:
                answers["other"] += 1

    reader = threading.Thread(target=read)
    reader.start()
    flood = b"".join(
        line(stateless_request("tools/list", id=index)) for index in range(1, count + 1)
    )
    process.stdin.write(flood)
    process.stdin.flush()
    deadline = time.monotonic() + 120
    while sum(answers.values()) < count and time.monotonic() < deadline:
        time.sleep(0.1)
    peak = peak_rss_kib(process.pid)
    process.stdin.close()
    reader.join(30)
    assert process.wait(30) == 0
    assert process.stderr is not None
    with process.stdout, process.stderr:
        assert b"Traceback" not in process.stderr.read()
    assert answers["other"] == 0 and answers["result"] + answers["overloaded"] == count
    assert answers["result"] > 0
    assert peak - idle_peak < 100 * 1024, (idle_peak, peak)


def test_end_of_input_answers_what_is_still_running_and_exits_non_zero() -> None:
    process = start()
    assert process.stdin is not None
    call = stateless_request("tools/call", {"name": "sleepy", "arguments": {"seconds": 60}}, id=7)
    quick = stateless_request("tools/call", {"name": "quick", "arguments": {}}, id=8)
    started = time.monotonic()
    out, err = process.communicate(line(call) + line(quick), timeout=30)
    assert time.monotonic() - started < 15  # the 5 s grace, not the tool's 60 s
    answers = {message["id"]: message for message in map(json.loads, out.splitlines())}
    assert answers[8]["result"]["content"] == [{"type": "text", "text": "quick"}]
    assert answers[7] == {"jsonrpc": "2.0", "id": 7, "error": OVERLOADED}
    assert process.returncode == 1
    assert b"Traceback" not in err


def test_end_of_input_after_everything_is_answered_exits_zero() -> None:
    process = start()
    quick = stateless_request("tools/call", {"name": "quick", "arguments": {}}, id=1)
    out, err = process.communicate(line(quick), timeout=30)
    assert json.loads(out)["result"]["content"] == [{"type": "text", "text": "quick"}]
    assert process.returncode == 0
    assert b"Traceback" not in err
