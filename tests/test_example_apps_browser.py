"""``examples/apps.py`` in a real browser: headless Chromium (the Debian package, ``make
browser``) loads the App's HTML, read from the mcpkit server over loopback, in a sandboxed
frame under the Content-Security-Policy built from its declared ``_meta.ui.csp``; a minimal host
page answers the App's ``ui/initialize`` and forwards its ``tools/call`` to the server; the test
reads what the App displays, checks the CSP is enforced and takes a screenshot.

The browser is driven through the DevTools protocol over ``--remote-debugging-pipe`` (JSON
messages separated by NUL on file descriptors 3 and 4), so no client library is needed.
Skipped when ``chromium`` is not installed.
"""

from __future__ import annotations

import asyncio
import base64
import http.server
import json
import os
import runpy
import select
import shutil
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import mcpkit
from mcpkit import APP_MIME_TYPE, CorsPolicy
from mcpkit.testing import stateless_headers, stateless_request

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "apps.py"
VIEW = "ui://converter/view"
CHROMIUM = shutil.which("chromium")
WAIT = 30.0


@pytest.fixture(autouse=True)
def chromium() -> str:
    """The browser; its absence is a failure, not a skip (``make test`` installs it)."""
    assert CHROMIUM is not None, "Debian chromium is not installed: run make browser"
    return CHROMIUM


# --- the mcpkit server, for real, on loopback ---------------------------------------------------


@pytest.fixture
def mcp_url() -> Iterator[str]:
    import uvicorn

    builder = runpy.run_path(str(EXAMPLE))["converter"]
    # the host page calls the server from its own loopback origin: CORS must admit it
    app = mcpkit.Server(builder, cors=CorsPolicy.loopback()).asgi()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive()
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        thread.join(WAIT)


def post(url: str, method: str, params: dict[str, Any], name: str | None = None) -> Any:
    body = stateless_request(method, params)
    headers = stateless_headers(method, name)
    request = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
    with urllib.request.urlopen(request, timeout=WAIT) as response:
        return json.loads(response.read())


# --- the host: a page that frames the App and bridges it to the server ---------------------------


def csp_header(ui: dict[str, Any]) -> str:
    """The policy the extension tells a host to build from ``_meta.ui.csp`` (its restrictive
    defaults, widened only by the declared origins)."""
    csp = ui.get("csp", {})
    resources = " ".join(csp.get("resourceDomains", []))
    return "; ".join(
        [
            "default-src 'none'",
            f"script-src 'self' 'unsafe-inline' {resources}".strip(),
            f"style-src 'self' 'unsafe-inline' {resources}".strip(),
            f"img-src 'self' data: {resources}".strip(),
            f"font-src 'self' {resources}".strip(),
            f"media-src 'self' data: {resources}".strip(),
            "connect-src " + (" ".join(csp.get("connectDomains", [])) or "'none'"),
            "frame-src " + (" ".join(csp.get("frameDomains", [])) or "'none'"),
            "base-uri " + (" ".join(csp.get("baseUriDomains", [])) or "'self'"),
            "object-src 'none'",
        ]
    )


HOST_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>test host</title>
<style>body { margin: 0; font: 14px sans-serif; } iframe { border: 1px solid #888;
width: 640px; height: 360px; }</style></head>
<body><p>Host</p>
<iframe id="app" sandbox="allow-scripts" src="__APP__"></iframe>
<script>
  const MCP = "__MCP__";
  const APP_TOOLS = __APP_TOOLS__;  // tools whose visibility includes "app"
  const frame = document.getElementById("app");
  window.bridgeLog = [];
  const reply = (message) => frame.contentWindow.postMessage(message, "*");
  window.addEventListener("message", async (event) => {
    if (event.source !== frame.contentWindow) return;
    const m = event.data;
    window.bridgeLog.push(m.method);
    if (m.method === "ui/initialize") {
      reply({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: "2026-01-26",
        hostInfo: { name: "test-host", version: "1" }, hostCapabilities: { serverTools: {} },
        hostContext: { theme: "light" } } });
    } else if (m.method === "tools/call") {
      if (!APP_TOOLS.includes(m.params.name)) {
        reply({ jsonrpc: "2.0", id: m.id, error: { code: -32602, message: "not for apps" } });
        return;
      }
      const params = { ...m.params, _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": { extensions: {
          "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } } } };
      const response = await fetch(MCP, { method: "POST", body: JSON.stringify(
        { jsonrpc: "2.0", id: m.id, method: "tools/call", params }), headers: {
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
        "Mcp-Name": m.params.name } });
      reply(await response.json());
    }
  });
</script></body></html>
"""


@pytest.fixture
def host(mcp_url: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Serve the host page on ``127.0.0.1`` and the App on ``localhost``: two origins, as the
    extension requires of a web host and its sandbox."""
    read = post(mcp_url, "resources/read", {"uri": VIEW}, VIEW)["result"]["contents"][0]
    tools = post(mcp_url, "tools/list", {})["result"]["tools"]
    app_tools = [t["name"] for t in tools if "app" in t["_meta"]["ui"]["visibility"]]
    pages: dict[str, tuple[bytes, dict[str, str]]] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body, headers = pages.get(self.path, (b"", {}))
            self.send_response(200 if body else 404)
            for name, value in {"Content-Type": "text/html; charset=utf-8", **headers}.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port = server.server_address[1]
    assert read["mimeType"] == APP_MIME_TYPE
    pages["/app"] = (
        read["text"].encode(),
        {"Content-Security-Policy": csp_header(read["_meta"]["ui"])},
    )
    page = HOST_PAGE.replace("__APP__", f"http://localhost:{port}/app")
    page = page.replace("__MCP__", mcp_url).replace("__APP_TOOLS__", json.dumps(app_tools))
    pages["/host"] = (page.encode(), {})
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/host", read
    finally:
        server.shutdown()
        server.server_close()


# --- Chromium over the DevTools pipe ------------------------------------------------------------


class DevTools:
    """A DevTools protocol client over Chromium's ``--remote-debugging-pipe``."""

    def __init__(self, profile: Path) -> None:
        commands, self._to_browser = os.pipe()
        self._from_browser, replies = os.pipe()

        def descriptors() -> None:  # the browser reads fd 3 and writes fd 4
            os.dup2(commands, 3)
            os.dup2(replies, 4)

        assert CHROMIUM is not None
        self.process = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", f"--user-data-dir={profile}", "--remote-debugging-pipe",
             # keep the sandboxed frame in the page's process, where its contexts are visible
             "--disable-site-isolation-trials",
             "--disable-features=IsolateOrigins,site-per-process,IsolateSandboxedIframes",
             "--window-size=800,500", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(3, 4), preexec_fn=descriptors,
        )  # fmt: skip
        os.close(commands)
        os.close(replies)
        self._buffer = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []

    def close(self) -> None:
        os.close(self._to_browser)
        os.close(self._from_browser)
        self.process.terminate()
        try:
            self.process.wait(WAIT)
        except subprocess.TimeoutExpired:  # pragma: no cover - a hung browser
            self.process.kill()
            self.process.wait(WAIT)

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None
             ) -> dict[str, Any]:  # fmt: skip
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + WAIT
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next:
                assert "error" not in reply, reply["error"]
                result: dict[str, Any] = reply["result"]
                return result
            self.events.append(reply)

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._from_browser], [], [], deadline - time.monotonic())
            assert ready, "the browser did not answer in time"
            chunk = os.read(self._from_browser, 1 << 20)
            assert chunk, "the browser closed its pipe"
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        parsed: dict[str, Any] = json.loads(message)
        return parsed


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[DevTools]:
    devtools = DevTools(tmp_path / "profile")
    try:
        yield devtools
    finally:
        devtools.close()


def frame_context(devtools: DevTools, session: str, frame_id: str) -> int | None:
    """The newest default execution context of ``frame_id``, from the events seen so far."""
    found = None
    for event in devtools.events:
        if event.get("method") == "Runtime.executionContextCreated":
            context = event["params"]["context"]
            aux = context.get("auxData", {})
            if aux.get("frameId") == frame_id and aux.get("isDefault"):
                found = context["id"]
    return found


def evaluate(devtools: DevTools, session: str, expression: str, context: int | None = None
             ) -> Any:  # fmt: skip
    params: dict[str, Any] = {"expression": expression, "returnByValue": True,
                              "awaitPromise": True}  # fmt: skip
    if context is not None:
        params["contextId"] = context
    return devtools.call("Runtime.evaluate", params, session)["result"].get("value")


def test_the_app_renders_and_its_tool_call_round_trips_through_the_host(
    host: tuple[str, dict[str, Any]], browser: DevTools, tmp_path: Path
) -> None:
    host_url, read = host
    target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
        "sessionId"
    ]
    browser.call("Page.enable", session=session)
    browser.call("Runtime.enable", session=session)
    browser.call("Page.navigate", {"url": host_url}, session)

    deadline = time.monotonic() + WAIT
    shown = None
    while shown != "21.5 \u00b0C = 70.7 \u00b0F":
        assert time.monotonic() < deadline, f"the App shows {shown!r}"
        time.sleep(0.1)
        tree = browser.call("Page.getFrameTree", session=session)["frameTree"]
        children = tree.get("childFrames", [])
        if not children:
            continue
        context = frame_context(browser, session, children[0]["frame"]["id"])
        if context is not None:
            shown = evaluate(browser, session,
                             "document.getElementById('out')?.textContent", context)  # fmt: skip

    # the host bridged exactly the extension's handshake and the App's call
    log = evaluate(browser, session, "window.bridgeLog")
    assert log == ["ui/initialize", "ui/notifications/initialized", "tools/call"]

    # the declared CSP (no connect origins) is in force in the App's frame
    assert read["_meta"]["ui"]["csp"] == {}
    violated = evaluate(browser, session, """new Promise((resolve) => {
        document.addEventListener("securitypolicyviolation",
                                  (e) => resolve(e.effectiveDirective), { once: true });
        fetch("https://example.com/").catch(() => {});
        setTimeout(() => resolve("no violation"), 5000);
    })""", context)  # fmt: skip
    assert violated == "connect-src"

    shot = base64.b64decode(
        browser.call("Page.captureScreenshot", {"format": "png"}, session)["data"]
    )
    assert shot.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(shot) > 5_000  # a rendered page, not an empty canvas
    (tmp_path / "apps.png").write_bytes(shot)
