// A full team round trip over streamable HTTP with the official TypeScript SDK client.
// Usage: node http_client.mjs <lead-url> <lead-token> <executor-url> <change>
// The Lead dispatches and subscribes to the REPORT resource; an executor session, whose bearer
// is the task's report token, reads the task and reports; the Lead waits for the notification.
// Prints one JSON object: {created, read, written, notified, status}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [leadUrl, leadToken, executorUrl, change] = process.argv.slice(2);

async function connect(url, token) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "interop-http", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

const lead = await connect(leadUrl, leadToken);
const created = (await lead.callTool({
  name: "create_task",
  arguments: { change, topic: "review-http", kind: "review", goal: "Review over HTTP.", inputs: "the diff", acceptance: "findings listed" },
})).structuredContent;
const uri = `handoff://${created.ref}/REPORT.md`;
const notified = new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error("no resources/updated within 10 s")), 10000);
  lead.setNotificationHandler(ResourceUpdatedNotificationSchema, (note) => {
    if (note.params.uri === uri) { clearTimeout(timer); resolve(note.params.uri); }
  });
});
await lead.subscribeResource({ uri });

const executor = await connect(executorUrl, created.report_token);
const read = (await executor.callTool({ name: "read_task", arguments: { ref: created.ref } })).structuredContent;
const written = (await executor.callTool({
  name: "write_report",
  arguments: {
    ref: created.ref, token: created.report_token, task_sha256: created.task_sha256, status: "completed",
    focused: "Read the diff. Found nothing blocking. Stopped after the review. Next: merge.",
    artifacts: "none", verification: "read only",
  },
})).structuredContent;
await executor.close();

const result = { created: created.ref, read: read.task_sha256 === created.task_sha256, written: written.created };
result.notified = await notified;
result.status = (await lead.callTool({ name: "handoff_status", arguments: {} })).structuredContent.tasks.map(t => t.state);
console.log(JSON.stringify(result));
await lead.close();
