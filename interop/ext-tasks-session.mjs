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

// Tasks that ask in their first step, many times: before the session recorded a task as its
// own ahead of its worker, a question the task asked at once could be dropped by the GET
// stream, and this library (which polls tasks/get until the task ends) then waited until the
// task's TTL. Each call must settle within SETTLE_MS; ROUNDS calls of each tool.
const ROUNDS = Number(process.env.INTEROP_EXT_TASKS_ROUNDS ?? 50);
const SETTLE_MS = 3000;

/** Calls `name` and settles it within SETTLE_MS; the result's text. */
async function settleWithin(name, args, options) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${name} did not settle in ${SETTLE_MS} ms`)), SETTLE_MS);
  });
  try {
    const settled = (async () => {
      const execution = await session.callTool(name, args, options);
      const { outcome } = await execution.settle();
      return text(resultFromTaskOutcome(outcome));
    })();
    return await Promise.race([settled, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

await check(`a required tool with sampling, ${ROUNDS} times`, async () => {
  for (let n = 0; n < ROUNDS; n += 1) {
    const answer = await settleWithin("write_haiku", { topic: `tasks ${n}` });
    expect(answer === "a haiku", `call ${n}: ${answer}`);
  }
});

await check(`a forced task with elicitation, ${ROUNDS} times`, async () => {
  for (let n = 0; n < ROUNDS; n += 1) {
    const answer = await settleWithin(
      "confirm_delete",
      { filename: `f${n}.txt` },
      { task: { preference: "require" } },
    );
    expect(answer === "Delete confirmed: true", `call ${n}: ${answer}`);
  }
});

await session.close();
await client.close();
finish("ext-tasks-session.mjs");
