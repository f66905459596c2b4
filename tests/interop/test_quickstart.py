"""``examples/quickstart.py`` works with three real clients, against ``mcpkit serve
examples/quickstart.py`` on a free loopback port (started once for this module):

* the official Python client (``mcp`` 2.3.0) at each revision it speaks (2026-07-28 through
  ``server/discover``, 2025-11-25 through ``initialize``, 2025-06-18 through an ``initialize``
  pinned to it);
* the official TypeScript SDK client pinned to 1.17.5, whose newest revision is 2025-06-18
  (``typescript/quickstart.mjs``);
* the MCP Inspector CLI (``@modelcontextprotocol/inspector-cli`` 1.0.3, what
  ``npx @modelcontextprotocol/inspector --cli`` runs).

Each lists the tool, the prompt and the resource template, saves a note with ``add_note``,
gets the ``summarize`` prompt for it, reads it back as ``notes://<name>``, and reads a missing
note (the revision's not-found error).  Node and the npm packages are installed the way the
conformance runner installs its harness, on first use; a failed install fails the test.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import httpx2
import mcp.types as types
import pytest
from mcp.client import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from .conftest import handshake, runner, serving

ROOT: Final = Path(__file__).resolve().parents[2]
TARGET: Final = "examples/quickstart.py"
TS_CLIENT: Final = Path(__file__).with_name("typescript") / "quickstart.mjs"

JUNE: Final = "2025-06-18"
NOVEMBER: Final = "2025-11-25"
MODERN: Final = "2026-07-28"
REVISIONS: Final = (MODERN, NOVEMBER, JUNE)
INVALID_PARAMS: Final = -32602
RESOURCE_NOT_FOUND: Final = -32002  # 2025 revisions; 2026-07-28 answers INVALID_PARAMS
TIMEOUT_SECONDS: Final = 60.0
NODE_SECONDS: Final = 30.0

SDK: Final = "@modelcontextprotocol/sdk"
SDK_VERSION: Final = "1.17.5"  # the 1.x line whose LATEST_PROTOCOL_VERSION is 2025-06-18
INSPECTOR: Final = "@modelcontextprotocol/inspector-cli"
INSPECTOR_VERSION: Final = "1.0.3"

WELCOME: Final = "mcpkit serves tools, prompts and resources."
CLIENT_INFO: Final = types.Implementation(name="mcpkit-quickstart-interop", version="1.0.0")


def saved(name: str) -> str:
    return f"Saved note {name!r}."


def summary(text: str) -> str:
    return f"Summarize this note in one line: {text}"


# --- the server ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def quickstart_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL (``http://127.0.0.1:<port>/mcp``) of ``mcpkit serve`` serving the quickstart."""
    with serving(TARGET, tmp_path_factory.mktemp("quickstart-server")) as url:
        yield url


# --- the official Python client --------------------------------------------------------------


def text_of(block: object) -> str:
    assert isinstance(block, types.TextContent), block
    return block.text


async def read_text(session: ClientSession, uri: str) -> tuple[str, str | None, str]:
    read = await session.read_resource(uri)
    assert isinstance(read, types.ReadResourceResult), read
    [contents] = read.contents
    assert isinstance(contents, types.TextResourceContents), contents
    return contents.uri, contents.mime_type, contents.text


@pytest.mark.parametrize("revision", REVISIONS)
def test_python_client(quickstart_url: str, revision: str) -> None:
    name, text = f"py-{revision}", f"written at {revision}"

    async def scenario(session: ClientSession) -> None:
        await handshake(session, revision, CLIENT_INFO)
        assert session.server_info is not None
        assert (session.server_info.name, session.server_info.version) == ("notes", "1.0.0")

        [tool] = (await session.list_tools()).tools
        assert tool.name == "add_note"
        assert tool.input_schema["required"] == ["name", "text"]
        [prompt] = (await session.list_prompts()).prompts
        assert prompt.name == "summarize"
        assert [(a.name, a.required) for a in prompt.arguments or []] == [("name", True)]
        [template] = (await session.list_resource_templates()).resource_templates
        assert (template.uri_template, template.mime_type) == ("notes://{name}", "text/plain")

        called = await session.call_tool("add_note", {"name": name, "text": text})
        assert isinstance(called, types.CallToolResult), called
        assert called.is_error is False
        assert [text_of(block) for block in called.content] == [saved(name)]

        got = await session.get_prompt("summarize", {"name": name})
        assert isinstance(got, types.GetPromptResult), got
        assert [(m.role, text_of(m.content)) for m in got.messages] == [("user", summary(text))]

        assert await read_text(session, f"notes://{name}") == (
            f"notes://{name}", "text/plain", text,
        )  # fmt: skip
        assert await read_text(session, "notes://welcome") == (
            "notes://welcome", "text/plain", WELCOME,
        )  # fmt: skip
        with pytest.raises(MCPError) as missing:
            await session.read_resource(f"notes://{name}-missing")
        assert missing.value.code == (INVALID_PARAMS if revision == MODERN else RESOURCE_NOT_FOUND)

    async def main() -> None:
        async with (
            httpx2.AsyncClient(timeout=httpx2.Timeout(30.0)) as http,
            streamable_http_client(quickstart_url, http_client=http) as (read, write),
            ClientSession(read, write, client_info=CLIENT_INFO) as session,
        ):
            await scenario(session)

    asyncio.run(asyncio.wait_for(main(), TIMEOUT_SECONDS))


# --- Node: the TypeScript SDK and the Inspector CLI ------------------------------------------


class Npm:
    """Node >= 22, its environment, and npm installs into the conformance cache.  Each
    ``package@version`` gets its own folder (``<cache>/<name>-<version>``), so the SDK pinned
    here and the one ``test_typescript_client.py`` pins never share an install."""

    def __init__(self) -> None:
        self.runner = runner()
        self.cache = Path(
            os.environ.get("MCPKIT_CONFORMANCE_CACHE", self.runner.DEFAULT_CACHE)
        ).resolve()
        self.node: Path = self.runner.find_node(self.cache)
        path = f"{self.node.parent}{os.pathsep}{os.environ.get('PATH', '')}"
        self.env = {**os.environ, "PATH": path}

    def install(self, package: str, version: str) -> Path:
        """The folder of the installed ``package@version`` (holding its ``package.json``)."""
        manifest: Path = self.runner.install_package(
            self.cache, package, version, self.node, self.env, "package.json"
        )
        assert json.loads(manifest.read_text(encoding="utf-8"))["version"] == version
        return manifest.parent

    def run(self, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
        """Run ``node args`` in its own process group, killed (by its id) on timeout."""
        process = subprocess.Popen(
            [str(self.node), *args],
            cwd=cwd,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            out, err = process.communicate(timeout=NODE_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
            pytest.fail(f"node {args} timed out after {NODE_SECONDS} s:\n{err}")
        return subprocess.CompletedProcess(process.args, process.returncode, out, err)


@pytest.fixture(scope="module")
def npm() -> Npm:
    return Npm()


def test_typescript_sdk_client_at_2025_06_18(quickstart_url: str, npm: Npm) -> None:
    sdk = npm.install(SDK, SDK_VERSION)
    # This release's newest revision is 2025-06-18: it can only ask for that one.
    types_js = (sdk / "dist" / "esm" / "types.js").read_text(encoding="utf-8")
    latest = re.search(r'LATEST_PROTOCOL_VERSION = "([^"]+)"', types_js)
    assert latest is not None and latest[1] == JUNE, latest
    # An ES module resolves packages from its own location: run a copy in the install folder.
    folder = sdk.parents[2]  # <folder>/node_modules/@modelcontextprotocol/sdk
    script = folder / "mcpkit-quickstart.mjs"
    script.write_text(TS_CLIENT.read_text(encoding="utf-8"), encoding="utf-8")
    done = npm.run([str(script), quickstart_url, "ts", "from TypeScript"], cwd=folder)
    assert done.returncode == 0, done.stderr
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {
        "sdkLatestProtocolVersion": JUNE,
        "protocolVersion": JUNE,
        "server": {"name": "notes", "version": "1.0.0"},
        "tools": ["add_note"],
        "prompts": ["summarize"],
        "templates": ["notes://{name}"],
        "callIsError": False,
        "callText": [saved("ts")],
        "promptMessages": [["user", summary("from TypeScript")]],
        "resource": [["notes://ts", "text/plain", "from TypeScript"]],
        "missing": RESOURCE_NOT_FOUND,
    }


def test_inspector_cli(quickstart_url: str, npm: Npm) -> None:
    package = npm.install(INSPECTOR, INSPECTOR_VERSION)
    build = package / "build"

    def inspect(*method: str) -> subprocess.CompletedProcess[str]:
        # cli.js --cli runs build/index.js, which looks for its own package.json at
        # "../package.json" relative to the working directory: run it from build/.
        args = [str(build / "cli.js"), "--cli", quickstart_url, "--transport", "http", *method]
        return npm.run(args, cwd=build)

    def inspected(*method: str) -> Any:
        done = inspect(*method)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    [tool] = inspected("--method", "tools/list")["tools"]
    assert (tool["name"], tool["inputSchema"]["required"]) == ("add_note", ["name", "text"])
    [prompt] = inspected("--method", "prompts/list")["prompts"]
    assert (prompt["name"], prompt["arguments"]) == (
        "summarize",
        [{"name": "name", "required": True}],
    )
    [template] = inspected("--method", "resources/templates/list")["resourceTemplates"]
    assert (template["uriTemplate"], template["mimeType"]) == ("notes://{name}", "text/plain")

    called = inspected(
        "--method", "tools/call", "--tool-name", "add_note",
        "--tool-arg", "name=inspector", "--tool-arg", "text=from the Inspector",
    )  # fmt: skip
    assert called.get("isError") in (None, False)
    assert called["content"] == [{"type": "text", "text": saved("inspector")}]
    got = inspected(
        "--method", "prompts/get", "--prompt-name", "summarize", "--prompt-args", "name=inspector"
    )
    assert got["messages"] == [
        {"role": "user", "content": {"type": "text", "text": summary("from the Inspector")}}
    ]
    read = inspected("--method", "resources/read", "--uri", "notes://inspector")
    assert read["contents"] == [
        {"uri": "notes://inspector", "mimeType": "text/plain", "text": "from the Inspector"}
    ]
    missing = inspect("--method", "resources/read", "--uri", "notes://inspector-missing")
    assert missing.returncode != 0
    assert f"MCP error {RESOURCE_NOT_FOUND}: Resource not found" in missing.stderr
