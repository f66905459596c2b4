"""Framework-protected request state moves between server processes that share the key
material, and only between those (a
retry may land on a different instance).

Three ``python -m mcpkit serve`` processes serve the same file: A and B with key K1, C with K2
under the same key id.  Round 1 goes to A; round 2 completes on B and is refused by C.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from mcpkit.json import from_python
from mcpkit.testing import stateless_headers, stateless_request

from ..wire import assert_valid

ROOT = Path(__file__).resolve().parents[2]
MODERN = "2026-07-28"
READY_SECONDS = 30.0
STOP_SECONDS = 10.0
K1 = bytes(range(32)).hex()
K2 = bytes(range(32, 64)).hex()

SERVER_FILE = textwrap.dedent(
    """\
    import os

    from mcpkit import (
        UNSET, CompleteResult, InputRequestDeclaration, InputRequiredResult, RequestContext,
        RequestStateMode, Revision, Server, endpoint, tool,
    )
    from mcpkit.server import Keyring, ProtectionKey

    CONFIRM = {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Confirm the order?",
            "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
        },
    }


    @endpoint(path="/mcp", name="portable", version="1.0.0", revisions={Revision.V2026_07_28})
    class Portable:
        @tool(
            name="order",
            input_requests=[InputRequestDeclaration.elicitation_form()],
            request_state_mode=RequestStateMode.FRAMEWORK_PROTECTED,
        )
        def order(self, ctx: RequestContext, item: str) -> CompleteResult | InputRequiredResult:
            state = ctx.framework_state
            if state is UNSET or ctx.elicitation("confirm") is None:
                return InputRequiredResult(
                    input_requests={"confirm": CONFIRM},
                    # a string: sealed numbers come back respelled (1E+4 for 10000)
                    framework_state={"item": item, "pid": str(os.getpid())},
                )
            return CompleteResult.from_tool_text(
                f"ordered {state['item']} (sealed by {state['pid']}, opened by {os.getpid()})"
            )


    key = ProtectionKey("shared", bytes.fromhex(os.environ["MCPKIT_TEST_KEY"]))
    server = Server(Portable, keyring=Keyring(key))
    """
)


def free_ports(count: int) -> list[int]:
    """``count`` distinct free ports: every probe stays bound until all are chosen."""
    with ExitStack() as stack:
        probes = [stack.enter_context(socket.socket()) for _ in range(count)]
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [int(probe.getsockname()[1]) for probe in probes]


def post(port: int, message: Mapping[str, object]) -> tuple[int, Any] | None:
    """POST one JSON-RPC request to ``/mcp``; ``None`` while nothing listens."""
    params = message.get("params")
    name = params.get("name") if isinstance(params, Mapping) else None
    method = message["method"]
    assert isinstance(method, str) and (name is None or isinstance(name, str))
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5.0)
    try:
        connection.request("POST", "/mcp", json.dumps(message), stateless_headers(method, name))
        response = connection.getresponse()
        status, raw = response.status, response.read()
    except OSError:
        return None
    finally:
        connection.close()
    answer = json.loads(raw)
    assert_valid(MODERN, method, [from_python(answer)])
    return status, answer


@contextmanager
def serving(
    path: Path, port: int, key: str, log: Path
) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """``python -m mcpkit serve path --port P`` with ``MCPKIT_TEST_KEY=key``; stopped by PID."""
    command = [sys.executable, "-m", "mcpkit", "serve", str(path), "--port", str(port)]
    environment = {**os.environ, "MCPKIT_TEST_KEY": key}
    with log.open("w+b") as output:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            yield port, process
        finally:
            process.terminate()
            try:
                process.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:  # pragma: no cover - only if it hangs
                process.kill()
                process.wait(STOP_SECONDS)


def wait_ready(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + READY_SECONDS
    while post(port, stateless_request("server/discover")) is None:
        assert process.poll() is None, log.read_text()
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)


def order(*, id: int, state: str | None = None) -> dict[str, object]:
    params: dict[str, object] = {"name": "order", "arguments": {"item": "book"}}
    if state is not None:
        params["requestState"] = state
        params["inputResponses"] = {"confirm": {"action": "accept", "content": {"ok": True}}}
    return stateless_request("tools/call", params, id=id, capabilities={"elicitation": {}})


def test_state_sealed_by_one_process_opens_in_another_with_the_same_key(tmp_path: Path) -> None:
    path = tmp_path / "portable_server.py"
    path.write_text(SERVER_FILE)
    with ExitStack() as stack:
        ports = free_ports(3)
        processes = {
            name: stack.enter_context(serving(path, port, key, tmp_path / f"{name}.log"))
            for (name, key), port in zip((("A", K1), ("B", K1), ("C", K2)), ports, strict=True)
        }
        for name, (port, process) in processes.items():
            wait_ready(port, process, tmp_path / f"{name}.log")
        (port_a, process_a), (port_b, process_b), (port_c, _) = processes.values()

        first = post(port_a, order(id=1))
        assert first is not None
        status, answer = first
        assert status == 200
        state = answer["result"]["requestState"]
        assert answer == {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "resultType": "input_required",
                "inputRequests": {
                    "confirm": {
                        "method": "elicitation/create",
                        "params": {
                            "mode": "form",
                            "message": "Confirm the order?",
                            "requestedSchema": {
                                "type": "object",
                                "properties": {"ok": {"type": "boolean"}},
                            },
                        },
                    }
                },
                "requestState": state,
                "_meta": {
                    "io.modelcontextprotocol/serverInfo": {"name": "portable", "version": "1.0.0"}
                },
            },
        }

        completed = post(port_b, order(id=2, state=state))
        assert completed == (
            200,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "result": {
                    "content": [
                        {
                            "type": "text",
                            "text": f"ordered book (sealed by {process_a.pid}, "
                            f"opened by {process_b.pid})",
                        }
                    ],
                    "resultType": "complete",
                    "_meta": {
                        "io.modelcontextprotocol/serverInfo": {
                            "name": "portable",
                            "version": "1.0.0",
                        }
                    },
                },
            },
        )

        refused = post(port_c, order(id=2, state=state))
        assert refused == (
            400,
            {"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "Invalid params"}},
        )
