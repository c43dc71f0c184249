// Drives the fixture's 2025-11-25 session path with the official TypeScript SDK 1.x client
// (@modelcontextprotocol/sdk, pinned in package.json) and its experimental tasks API
// (client.experimental.tasks): callToolStream (with onprogress: a task's progress), getTask,
// getTaskResult, cancelTask, with elicitation and sampling handlers and a
// notifications/tasks/status handler; and callTool's validation of structuredContent against
// the listed outputSchema.
//
// Usage: node sdk-v1-tasks.mjs <MCP endpoint URL>
// Prints one line per check (PASS/FAIL); exits 1 when any check fails.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  TaskStatusNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

import { check, expect, finish, text, urlArgument } from "./harness.js";

const url = urlArgument("sdk-v1-tasks.mjs");
async function drain(stream) {
  const messages = [];
  for await (const message of stream) messages.push(message);
  return messages;
}

const client = new Client(
  { name: "sdk-v1-interop", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} }, sampling: {} }, defaultTaskPollInterval: 100 },
);
const elicitations = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  elicitations.push(request.params);
  return { action: "accept", content: { confirm: true } };
});
client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
  role: "assistant",
  model: "interop-model",
  stopReason: "endTurn",
  content: { type: "text", text: `A haiku from ${request.params.messages.length} message` },
}));
const statuses = [];
client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
  statuses.push(notification.params);
});

const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);

await check("initialize: session, 2025-11-25, tasks capability", async () => {
  expect(transport.sessionId, "a session id");
  expect(client.getServerVersion()?.name === "tasks-fixture", "serverInfo");
  const tasks = client.getServerCapabilities()?.tasks;
  expect(tasks?.requests?.tools?.call, `tasks.requests.tools.call: ${JSON.stringify(tasks)}`);
  expect(tasks?.cancel, "tasks.cancel");
  expect(!tasks?.list, "no tasks.list");
});

await check("tools/list: execution.taskSupport from the task policy", async () => {
  const { tools } = await client.listTools();
  const support = (name) => tools.find((t) => t.name === name)?.execution?.taskSupport;
  expect(support("greet") === "forbidden", `greet: ${support("greet")}`);
  expect(support("slow_compute") === "optional", `slow_compute: ${support("slow_compute")}`);
  expect(support("failing_job") === "required", `failing_job: ${support("failing_job")}`);
  expect(support("write_haiku") === "required", `write_haiku: ${support("write_haiku")}`);
});

await check("callTool: a synchronous tool", async () => {
  const result = await client.callTool({ name: "greet", arguments: { name: "SDK" } });
  expect(text(result) === "Hello, SDK!", JSON.stringify(result));
});

await check("callToolStream: an optional tool as a task, to its result", async () => {
  const messages = await drain(
    client.experimental.tasks.callToolStream(
      { name: "slow_compute", arguments: { seconds: 0.3, label: "sdk" } },
      CallToolResultSchema,
      { task: { ttl: 60000 } },
    ),
  );
  const created = messages.find((m) => m.type === "taskCreated");
  expect(created, `taskCreated: ${JSON.stringify(messages)}`);
  expect(created.task.ttl === 60000, `ttl ${created.task.ttl}`);
  const last = messages.at(-1);
  expect(last.type === "result", JSON.stringify(last));
  expect(text(last.result) === "Completed sdk", JSON.stringify(last.result));
  const task = await client.experimental.tasks.getTask(created.task.taskId);
  expect(task.status === "completed", `status ${task.status}`);
});

await check("callToolStream: the task's progress reaches onprogress (notifications/progress with the call's token)", async () => {
  const progress = [];
  const messages = await drain(
    client.experimental.tasks.callToolStream(
      { name: "slow_compute", arguments: { seconds: 1.5, label: "watched" } },
      CallToolResultSchema,
      { task: { ttl: 60000 }, onprogress: (p) => progress.push(p) },
    ),
  );
  const last = messages.at(-1);
  expect(last.type === "result", JSON.stringify(last));
  expect(text(last.result) === "Completed watched", JSON.stringify(last.result));
  expect(progress.length >= 3, `progress seen: ${JSON.stringify(progress)}`);
  expect(
    progress.every((p, i) => p.total === 1.5 && (i === 0 || p.progress > progress[i - 1].progress)),
    `each above the last, of 1.5 s: ${JSON.stringify(progress)}`,
  );
});

await check("callToolStream: a failing required tool ends failed; getTaskResult gives its isError result", async () => {
  const messages = await drain(
    client.experimental.tasks.callToolStream({ name: "failing_job", arguments: {} }),
  );
  const created = messages.find((m) => m.type === "taskCreated");
  expect(created, JSON.stringify(messages));
  expect(messages.at(-1).type === "error", JSON.stringify(messages.at(-1)));
  const task = await client.experimental.tasks.getTask(created.task.taskId);
  expect(task.status === "failed", `status ${task.status}`);
  const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
  expect(result.isError === true && text(result) === "The task job failed", JSON.stringify(result));
  expect(
    result._meta?.["io.modelcontextprotocol/related-task"]?.taskId === created.task.taskId,
    JSON.stringify(result._meta),
  );
});

await check("callToolStream: an elicitation answered by the handler resumes the task", async () => {
  const before = elicitations.length;
  const messages = await drain(
    client.experimental.tasks.callToolStream(
      { name: "confirm_delete", arguments: { filename: "a.txt" } },
      CallToolResultSchema,
      { task: {} },
    ),
  );
  const last = messages.at(-1);
  expect(last.type === "result", JSON.stringify(messages));
  expect(text(last.result) === "Delete confirmed: true", JSON.stringify(last.result));
  expect(elicitations.length === before + 1, `elicitations: ${elicitations.length - before}`);
  expect(elicitations.at(-1).message === "Delete a.txt?", JSON.stringify(elicitations.at(-1)));
});

await check("callToolStream: sampling for a required tool", async () => {
  const messages = await drain(
    client.experimental.tasks.callToolStream({ name: "write_haiku", arguments: { topic: "rust" } }),
  );
  const last = messages.at(-1);
  expect(last.type === "result", JSON.stringify(messages));
  expect(text(last.result) === "A haiku from 1 message", JSON.stringify(last.result));
});

await check("cancelTask: a running task is cancelled before the answer", async () => {
  const stream = client.experimental.tasks.callToolStream(
    { name: "slow_compute", arguments: { seconds: 60 } },
    CallToolResultSchema,
    { task: {} },
  );
  const first = await stream.next();
  expect(first.value?.type === "taskCreated", JSON.stringify(first.value));
  const id = first.value.task.taskId;
  const cancelled = await client.experimental.tasks.cancelTask(id);
  expect(cancelled.status === "cancelled", JSON.stringify(cancelled));
  const task = await client.experimental.tasks.getTask(id);
  expect(task.status === "cancelled", `status ${task.status}`);
  await stream.return();
  let refused;
  try {
    await client.experimental.tasks.cancelTask(id);
  } catch (error) {
    refused = error;
  }
  expect(refused?.code === -32602, `cancel of a terminal task: ${refused}`);
});

await check("getTask: an unknown task is -32602", async () => {
  let refused;
  try {
    await client.experimental.tasks.getTask("no-such-task");
  } catch (error) {
    refused = error;
  }
  expect(refused?.code === -32602, String(refused));
});

await check("notifications/tasks/status arrived on the GET stream", async () => {
  for (let i = 0; i < 50 && !statuses.some((s) => s.status === "completed"); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(statuses.some((s) => s.status === "completed"), JSON.stringify(statuses.slice(0, 3)));
  expect(statuses.every((s) => typeof s.taskId === "string" && "ttl" in s), "flat tasks");
});

await check("callTool: word_stats' structuredContent passes the SDK's own outputSchema check (ajv)", async () => {
  // listTools caches each tool's outputSchema; callTool then validates structuredContent
  // against it and throws when it does not conform (or is missing).
  const { tools } = await client.listTools();
  const listed = tools.find((t) => t.name === "word_stats");
  expect(listed?.outputSchema?.type === "object", `outputSchema: ${JSON.stringify(listed)}`);
  const result = await client.callTool({ name: "word_stats", arguments: { text: "two words\nand more" } });
  const counts = result.structuredContent;
  expect(counts?.words === 4 && counts?.lines === 2 && counts?.characters === 18, JSON.stringify(result));
});

await transport.terminateSession();
await client.close();
finish("sdk-v1-tasks.mjs");
