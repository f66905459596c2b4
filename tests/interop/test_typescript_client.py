"""Interop with the official TypeScript SDK client (``@modelcontextprotocol/sdk`` from npm)
against ``mcpkit serve examples/everything.py`` over Streamable HTTP.

Node and the SDK are installed the way the conformance runner installs its harness (Node >= 22
from PyPI when the one on ``PATH`` is older; npm into ``build/conformance-cache``, or
``$MCPKIT_CONFORMANCE_CACHE``), on first use.  ``typescript/client.mjs`` negotiates a
2025-11-25 session, answers the server's elicitation, sampling and roots requests from its
handlers while the same ``test_input_required_result_multiple_inputs`` handler the 2026-07-28
Python test completes runs round by round, subscribes to a resource and receives the update
the application publishes, then ends its session.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Final

import pytest

from .conftest import runner

ROOT: Final = Path(__file__).resolve().parents[2]
CLIENT: Final = Path(__file__).with_name("typescript") / "client.mjs"
SDK: Final = "@modelcontextprotocol/sdk"
SDK_VERSION: Final = "1.32.2"
RUN_SECONDS: Final = 60


@pytest.fixture(scope="module")
def node_client() -> tuple[Path, dict[str, str], Path]:
    """Node, its environment, and the folder whose ``node_modules`` holds the SDK."""
    install = runner()
    cache = Path(os.environ.get("MCPKIT_CONFORMANCE_CACHE", install.DEFAULT_CACHE)).resolve()
    node = install.find_node(cache)
    env = {**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    manifest = install.install_package(cache, SDK, SDK_VERSION, node, env, "package.json")
    assert json.loads(manifest.read_text(encoding="utf-8"))["version"] == SDK_VERSION
    return node, env, manifest.parents[2]  # <folder>/node_modules/@modelcontextprotocol/sdk


def test_typescript_client_is_asked_for_input_and_gets_the_update(
    server_url: str, node_client: tuple[Path, dict[str, str], Path]
) -> None:
    node, env, folder = node_client
    env = {**env, "NODE_PATH": str(folder / "node_modules")}
    # An ES module resolves packages from its own location: run a copy inside the folder.
    script = folder / "mcpkit-client.mjs"
    script.write_text(CLIENT.read_text(encoding="utf-8"), encoding="utf-8")
    done = subprocess.run(
        [str(node), str(script), server_url],
        capture_output=True,
        text=True,
        env=env,
        timeout=RUN_SECONDS,
    )
    assert done.returncode == 0, done.stderr
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["protocolVersion"] == "2025-11-25"
    assert seen["hasSession"] is True
    assert seen["multiple"]["content"] == [{"type": "text", "text": "All three inputs arrived"}]
    assert seen["multiple"].get("isError") in (None, False)
    assert seen["asked"] == ["Say hello to the user", "What is your name?", "roots"]
    assert seen["updated"] == "test://watched-resource"
