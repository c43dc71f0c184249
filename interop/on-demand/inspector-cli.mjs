// On demand (not in the test command: the MCP Inspector pulls in its web UI): drives the
// fixture with the MCP Inspector CLI (@modelcontextprotocol/inspector, pinned in
// on-demand/package.json). In its default (legacy, initialize-based) era it lists the tools and
// runs slow_compute to completion; with --protocol-era modern it does the same over 2026-07-28.
//
// Usage: bash interop/run.sh on-demand/inspector-cli.mjs
// (installs on-demand/node_modules with npm ci on first use)

import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { check, expect, finish, text, urlArgument } from "../harness.js";

const url = urlArgument("on-demand/inspector-cli.mjs");
const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, "node_modules/.bin/mcp-inspector");
if (!existsSync(cli)) {
  execFileSync("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd: here,
    stdio: "inherit",
  });
}

function inspector(...args) {
  const out = execFileSync(cli, ["--cli", url, ...args], { encoding: "utf8", timeout: 60000 });
  return JSON.parse(out);
}

await check("legacy era: tools/list shows slow_compute with its task support", async () => {
  const { tools } = inspector("--method", "tools/list");
  const slow = tools.find((t) => t.name === "slow_compute");
  expect(slow?.execution?.taskSupport === "optional", JSON.stringify(slow));
});

await check("legacy era: slow_compute runs to completion", async () => {
  const result = inspector("--method", "tools/call", "--tool-name", "slow_compute", "--tool-arg", "seconds=1");
  expect(text(result) === "Completed" && result.resultType === undefined, JSON.stringify(result));
});

await check("modern era: slow_compute runs to completion over 2026-07-28", async () => {
  const result = inspector(
    "--protocol-era", "modern",
    "--method", "tools/call", "--tool-name", "slow_compute", "--tool-arg", "seconds=1",
  );
  expect(text(result) === "Completed" && result.resultType === "complete", JSON.stringify(result));
});

finish("on-demand/inspector-cli.mjs");
