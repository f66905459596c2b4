// An official TypeScript SDK client whose newest protocol revision is 2025-06-18, against
// `mcpkit serve examples/quickstart.py:notes`, driven by tests/interop/test_quickstart.py.
// Usage: node quickstart.mjs <server url> <note name> <note text>
// It connects over Streamable HTTP, lists the tools, prompts and resource templates, saves a
// note with `add_note`, gets the `summarize` prompt for it, reads it back as `notes://<name>`,
// reads a missing note, and prints one JSON line of what it saw.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION, McpError } from "@modelcontextprotocol/sdk/types.js";

const [url, name, text] = process.argv.slice(2);
const client = new Client({ name: "mcpkit-ts-quickstart", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);

const tools = await client.listTools();
const prompts = await client.listPrompts();
const templates = await client.listResourceTemplates();
const call = await client.callTool({ name: "add_note", arguments: { name, text } });
const prompt = await client.getPrompt({ name: "summarize", arguments: { name } });
const resource = await client.readResource({ uri: `notes://${name}` });
let missing = null;
try {
  await client.readResource({ uri: `notes://${name}-missing` });
} catch (error) {
  missing = error instanceof McpError ? error.code : String(error);
}
await transport.terminateSession();
await client.close();

console.log(
  JSON.stringify({
    sdkLatestProtocolVersion: LATEST_PROTOCOL_VERSION,
    protocolVersion: transport.protocolVersion,
    server: client.getServerVersion(),
    tools: tools.tools.map((tool) => tool.name),
    prompts: prompts.prompts.map((p) => p.name),
    templates: templates.resourceTemplates.map((t) => t.uriTemplate),
    callIsError: call.isError ?? false,
    callText: call.content.map((block) => block.text),
    promptMessages: prompt.messages.map((m) => [m.role, m.content.text]),
    resource: resource.contents.map((c) => [c.uri, c.mimeType, c.text]),
    missing,
  }),
);
