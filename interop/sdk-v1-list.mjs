// fixture-args: --bearer-scope
// The TypeScript SDK 1.x client's experimental listTasks against a fixture that scopes tasks
// by bearer token (--bearer-scope): tasks.list is advertised to an identified caller, lists
// its own tasks from a new session too, and never another caller's.
//
// Usage: node sdk-v1-list.mjs <MCP endpoint URL of a fixture started with --bearer-scope>

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

import { check, expect, finish, urlArgument } from "./harness.js";

const url = urlArgument("sdk-v1-list.mjs");

async function connect(token) {
  const client = new Client({ name: "sdk-v1-list", version: "1.0.0" }, { defaultTaskPollInterval: 100 });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

async function runTask(client, seconds) {
  for await (const message of client.experimental.tasks.callToolStream(
    { name: "slow_compute", arguments: { seconds } },
    CallToolResultSchema,
    { task: {} },
  )) {
    if (message.type === "taskCreated") return message.task.taskId;
  }
  throw new Error("no task created");
}

const alice = await connect("alice");
const created = [await runTask(alice.client, 0.1), await runTask(alice.client, 30)];

await check("tasks.list is advertised to an identified caller", async () => {
  expect(alice.client.getServerCapabilities()?.tasks?.list, "tasks.list");
});

await check("listTasks from a new session finds the caller's tasks", async () => {
  const again = await connect("alice");
  const { tasks } = await again.client.experimental.tasks.listTasks();
  const ids = tasks.map((t) => t.taskId);
  expect(created.every((id) => ids.includes(id)), `${JSON.stringify(ids)} lacks ${created}`);
  expect(tasks.every((t) => typeof t.status === "string" && "ttl" in t), "flat tasks");
  await again.transport.terminateSession();
  await again.client.close();
});

await check("another caller lists none of them", async () => {
  const bob = await connect("bob");
  const { tasks } = await bob.client.experimental.tasks.listTasks();
  expect(tasks.length === 0, JSON.stringify(tasks));
  let refused;
  try {
    await bob.client.experimental.tasks.getTask(created[0]);
  } catch (error) {
    refused = error;
  }
  expect(refused?.code === -32602, String(refused));
  await bob.transport.terminateSession();
  await bob.client.close();
});

await alice.client.experimental.tasks.cancelTask(created[1]);
await alice.transport.terminateSession();
await alice.client.close();
finish("sdk-v1-list.mjs");
