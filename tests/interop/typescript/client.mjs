// The official TypeScript SDK client against `mcpkit serve examples/everything.py`, driven by
// tests/interop/test_typescript_client.py: it connects over Streamable HTTP (a 2025-11-25
// session), answers the server's elicitation, sampling and roots requests from its handlers,
// completes the multiple-input tool, subscribes to a resource and waits for the update the
// application publishes, then ends the session.  It prints one JSON line of what it saw.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const url = new URL(process.argv[2]);
const WATCHED = "test://watched-resource";
const asked = [];

const client = new Client(
  { name: "mcpkit-ts-interop", version: "1.0.0" },
  { capabilities: { elicitation: {}, sampling: {}, roots: {} } },
);
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  asked.push(request.params.message);
  const fields = Object.keys(request.params.requestedSchema.properties);
  return { action: "accept", content: Object.fromEntries(fields.map((f) => [f, "Alice"])) };
});
client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
  asked.push(request.params.messages[0].content.text);
  return {
    role: "assistant",
    content: { type: "text", text: "Paris" },
    model: "m",
    stopReason: "endTurn",
  };
});
client.setRequestHandler(ListRootsRequestSchema, async () => {
  asked.push("roots");
  return { roots: [{ uri: "file:///r", name: "R" }] };
});
const updated = new Promise((resolve) => {
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    resolve(notification.params.uri);
  });
});
const timeout = (ms) => new Promise((_, reject) => setTimeout(() => reject(new Error("timed out")), ms));

const transport = new StreamableHTTPClientTransport(url);
await client.connect(transport);
const protocolVersion = transport.protocolVersion;
const hasSession = typeof transport.sessionId === "string" && transport.sessionId.length > 0;
const multiple = await client.callTool({
  name: "test_input_required_result_multiple_inputs",
  arguments: {},
});
await client.subscribeResource({ uri: WATCHED });
await client.callTool({ name: "touch_watched_resource", arguments: {} });
const uri = await Promise.race([updated, timeout(10000)]);
await client.unsubscribeResource({ uri: WATCHED });
await transport.terminateSession();
await client.close();
console.log(
  JSON.stringify({ protocolVersion, hasSession, multiple, asked: asked.sort(), updated: uri }),
);
