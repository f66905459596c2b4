"""An MCP App: a tool with an HTML interface that calls a tool back through its host.

* ``open_converter`` is what the agent calls.  Its ``app=AppTool(...)`` names the
  ``ui://converter/view`` resource, so a host that supports MCP Apps (the
  ``io.modelcontextprotocol/ui`` extension) renders that HTML in a sandboxed frame; a host
  without Apps shows the text fallback, chosen with ``client_supports_apps``.
* ``convert`` is app-only (``AppVisibility.APP``): hosts keep it from the agent's tool list,
  and the interface calls it with a JSON-RPC ``tools/call`` posted to its parent frame, which
  the host forwards to this server.
* ``ui://converter/view`` is the HTML, served as ``text/html;profile=mcp-app`` with its
  ``_meta.ui`` declaration.  It reaches no other origin, so its CSP declares none.

Apps exist on 2026-07-28 only: the builder gives these operations just that revision.  Serve it
with ``mcpkit serve examples/apps.py``.
"""

from dataclasses import dataclass
from decimal import Decimal

import mcpkit
from mcpkit import AppCsp, AppResource, AppTool, AppVisibility, RequestContext

VIEW = "ui://converter/view"

converter = mcpkit.EndpointBuilder("converter", version="1.0.0")


@dataclass(frozen=True)
class Conversion:
    """One temperature in both scales."""

    celsius: Decimal
    fahrenheit: Decimal


@converter.tool(app=AppTool(resource_uri=VIEW))
def open_converter(ctx: RequestContext) -> str:
    """Open the temperature converter for the user."""
    if mcpkit.client_supports_apps(ctx.client_capabilities):
        return "The temperature converter is open."
    return "This host cannot show the converter; call convert with a Celsius temperature."


@converter.tool(app=AppTool(resource_uri=VIEW, visibility=(AppVisibility.APP,)))
def convert(celsius: Decimal) -> Conversion:
    """Convert a Celsius temperature to Fahrenheit (called by the converter's interface)."""
    return Conversion(celsius=celsius, fahrenheit=celsius * 9 / 5 + 32)


# The page speaks the extension's postMessage JSON-RPC: ui/initialize, then the initialized
# notification, then tools/call.  It writes text with textContent only, never HTML.
PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Temperature converter</title>
<style>
  body { font: 16px system-ui, sans-serif; margin: 1.5rem; }
  output { display: block; margin-top: 1rem; font-size: 1.5rem; }
</style>
</head>
<body>
<h1>Temperature converter</h1>
<form id="form">
  <label>Celsius <input id="celsius" type="number" step="any" value="21.5"></label>
  <button type="submit">Convert</button>
</form>
<output id="out">Connecting...</output>
<script>
  const out = document.getElementById("out");
  const pending = new Map();
  let nextId = 1;

  function request(method, params) {
    const id = nextId++;
    window.parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  }

  window.addEventListener("message", (event) => {
    const message = event.data;
    if (event.source !== window.parent || !message || !pending.has(message.id)) return;
    const { resolve, reject } = pending.get(message.id);
    pending.delete(message.id);
    if (message.result !== undefined) resolve(message.result);
    else reject(new Error((message.error && message.error.message) || "request failed"));
  });

  async function convert(celsius) {
    const result = await request("tools/call", { name: "convert", arguments: { celsius } });
    if (result.isError) throw new Error("the server refused the conversion");
    const value = result.structuredContent;
    out.textContent = value.celsius + " \\u00b0C = " + value.fahrenheit + " \\u00b0F";
  }

  function fail(error) { out.textContent = "Error: " + error.message; }

  document.getElementById("form").addEventListener("submit", (event) => {
    event.preventDefault();
    convert(Number(document.getElementById("celsius").value)).catch(fail);
  });

  request("ui/initialize", {
    appCapabilities: {},
    appInfo: { name: "converter", version: "1.0.0" },
    protocolVersion: "2026-01-26",
  }).then(() => {
    window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/initialized" }, "*");
    return convert(21.5);
  }).catch(fail);
</script>
</body>
</html>
"""


@converter.resource(VIEW, name="converter", app=AppResource(csp=AppCsp(), prefers_border=True))
def view() -> str:
    """The converter's interface: the same HTML for everyone, holding no caller data."""
    return PAGE
