// Drives a handoff-mcp server over stdio with the official TypeScript SDK client.
// Usage: node sdk_client.mjs <command> [args...]  (reads a JSON list of calls on stdin)
// Prints one JSON object: {tools: [...names], results: [{name, isError, structuredContent, text}]}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { readFileSync } from "node:fs";

const [command, ...args] = process.argv.slice(2);
const calls = JSON.parse(readFileSync(0, "utf8"));
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "interop-test", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
const results = [];
for (const call of calls) {
  // Later calls may use values from earlier results: "$0.ref" means results[0].structuredContent.ref.
  const args = Object.fromEntries(Object.entries(call.arguments).map(([key, value]) => {
    const match = typeof value === "string" && /^\$(\d+)\.(\w+)$/.exec(value);
    return [key, match ? results[Number(match[1])].structuredContent[match[2]] : value];
  }));
  const result = await client.callTool({ name: call.name, arguments: args });
  results.push({ name: call.name, isError: Boolean(result.isError), structuredContent: result.structuredContent ?? null, text: result.content?.[0]?.text ?? "" });
}
console.log(JSON.stringify({ tools: tools.map(tool => tool.name), results }));
await client.close();
