// Drives the fixture's 2025-11-25 session path with the official Tasks client library,
// @modelcontextprotocol/ext-tasks (its requester session, createTaskSessionFromClient, over the
// TypeScript SDK 2.x client in its default, initialize-based era); both pinned in
// package.json.
//
// Usage: node ext-tasks-session.mjs <MCP endpoint URL>
// Prints one line per check (PASS/FAIL); exits 1 when any check fails.

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
} from "@modelcontextprotocol/ext-tasks/client";

import { check, expect, finish, text, urlArgument } from "./harness.js";

const url = urlArgument("ext-tasks-session.mjs");

const client = new Client(
  { name: "ext-tasks-interop", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} }, sampling: {} } },
);
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);

const asked = [];
const session = createTaskSessionFromClient(client, {
  endpointId: "tasks-fixture",
  onInputRequest: async (request) => {
    asked.push(request);
    if (request.kind === "elicitation") return { action: "accept", content: { confirm: true } };
    if (request.kind === "sampling") {
      return { role: "assistant", model: "interop", content: { type: "text", text: "a haiku" } };
    }
    return { roots: [] };
  },
});

await check("the session is on the 2025-11-25 era with tasks", async () => {
  expect(client.getProtocolEra() === "legacy", `era ${client.getProtocolEra()}`);
  expect(client.getServerCapabilities()?.tasks?.requests?.tools?.call, "tasks capability");
});

await check("an immediate result settles", async () => {
  const execution = await session.callTool("greet", { name: "ext" });
  const { outcome } = await execution.settle();
  expect(text(resultFromTaskOutcome(outcome)) === "Hello, ext!", JSON.stringify(outcome));
});

await check("a task-backed call settles to its result", async () => {
  const execution = await session.callTool("slow_compute", { seconds: 0.3, label: "ext" });
  const { outcome } = await execution.settle();
  expect(text(resultFromTaskOutcome(outcome)) === "Completed ext", JSON.stringify(outcome));
});

await check("input requests reach the handler and resume the task", async () => {
  const before = asked.length;
  const execution = await session.callTool("confirm_delete", { filename: "b.txt" });
  const { outcome } = await execution.settle();
  expect(
    text(resultFromTaskOutcome(outcome)) === "Delete confirmed: true",
    JSON.stringify(outcome),
  );
  expect(asked.slice(before).some((r) => r.kind === "elicitation"), JSON.stringify(asked));
});

// Known failure, left visible: on 2026-12-01 this check hung (no answer within 300 s) on the
// CI machine with the fixture both before and after performance round 3 (commits 6b81837 and
// later), while every other check here and the SDK 1.x client's sampling check
// (sdk-v1-tasks.mjs) passed. Until it is understood it runs only with
// INTEROP_EXT_TASKS_SAMPLING=1, and is reported as SKIP otherwise.
if (process.env.INTEROP_EXT_TASKS_SAMPLING === "1") {
  await check("a required tool with sampling", async () => {
    const execution = await session.callTool("write_haiku", { topic: "tasks" });
    const { outcome } = await execution.settle();
    expect(text(resultFromTaskOutcome(outcome)) === "a haiku", JSON.stringify(outcome));
  });
} else {
  console.log("SKIP a required tool with sampling (known hang; set INTEROP_EXT_TASKS_SAMPLING=1)");
}

await session.close();
await client.close();
finish("ext-tasks-session.mjs");
