// Reads the runner's per-scenario checks.json files, prints a per-scenario
// table and a summary, and applies baseline.yml.
//
// Usage: node evaluate.mjs <baseline.yml> <results-dir> <scenario>...
// Expects <results-dir>/<scenario>/server-<scenario>-<timestamp>/checks.json
// (the runner's `-o <results-dir>/<scenario>` layout) and the runner's
// console output in <results-dir>/<scenario>/runner.log.
// Exit: 0 when nothing unexpected happened, 1 otherwise, 2 on a bad baseline.

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
// The runner's own YAML parser (a dependency of the pinned runner package).
const runnerRequire = createRequire(
  join(here, "node_modules/@modelcontextprotocol/conformance/package.json"),
);
const YAML = runnerRequire("yaml");

const STATUSES = ["SUCCESS", "FAILURE", "WARNING", "SKIPPED", "INFO"];
// Same ranking the runner uses to collapse repeated check ids (worst wins).
const RANK = { FAILURE: 3, WARNING: 2, SUCCESS: 1, SKIPPED: 0 };

const [baselinePath, resultsDir, ...scenarios] = process.argv.slice(2);
if (!baselinePath || !resultsDir || scenarios.length === 0) {
  console.error("usage: node evaluate.mjs <baseline.yml> <results-dir> <scenario>...");
  process.exit(2);
}

// --- baseline: same structure and validation as the runner's --expected-failures
function loadBaseline(path) {
  const fail = (msg) => {
    console.error(`ERROR: invalid baseline ${path}: ${msg}`);
    process.exit(2);
  };
  const doc = YAML.parse(readFileSync(path, "utf8"));
  const whole = new Set();
  const perCheck = new Map(); // scenario -> Set(checkId)
  if (doc == null) return { whole, perCheck };
  if (typeof doc !== "object" || Array.isArray(doc)) fail("expected an object with a 'server' key");
  const list = doc.server ?? [];
  if (!Array.isArray(list)) fail("'server' must be a list");
  for (const entry of list) {
    if (typeof entry !== "string" || entry === "")
      fail(`entry ${JSON.stringify(entry)} is not '<scenario>' or '<scenario>:<check-id>' (no space after ':')`);
    const i = entry.indexOf(":");
    if (i === -1) {
      whole.add(entry);
      continue;
    }
    const scenario = entry.slice(0, i);
    const checkId = entry.slice(i + 1);
    if (!scenario || !checkId) fail(`entry '${entry}': both sides of ':' are required`);
    if (!perCheck.has(scenario)) perCheck.set(scenario, new Set());
    perCheck.get(scenario).add(checkId);
  }
  for (const s of whole)
    if (perCheck.has(s)) fail(`'${s}' is listed whole and per check; keep one`);
  return { whole, perCheck };
}

function findChecksFile(dir) {
  if (!existsSync(dir)) return null;
  const runs = readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, "checks.json")))
    .map((d) => d.name)
    .sort(); // names end in an ISO timestamp: last is newest
  return runs.length ? join(dir, runs[runs.length - 1], "checks.json") : null;
}

// Collapse repeated ids (worst status wins), keeping first-seen order.
function collapse(checks) {
  const rows = new Map();
  for (const c of checks) {
    const row = rows.get(c.id);
    if (!row) {
      rows.set(c.id, { id: c.id, status: c.status, count: 1, check: c });
      continue;
    }
    row.count++;
    if ((RANK[c.status] ?? -1) > (RANK[row.status] ?? -1)) {
      row.status = c.status;
      row.check = c;
    }
  }
  return [...rows.values()];
}

function oneLine(text, max = 160) {
  if (!text) return "";
  const s = String(text).replace(/\s+/g, " ").trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

function tail(path, n = 20) {
  if (!existsSync(path)) return "(no runner log)";
  const lines = readFileSync(path, "utf8").replace(/\x1b\[[0-9;]*m/g, "").split("\n");
  return lines.slice(-n).join("\n");
}

const baseline = loadBaseline(baselinePath);
const totals = Object.fromEntries(STATUSES.map((s) => [s, 0]));
let other = 0;
const problems = []; // reasons the run fails
const expected = [];
const notes = [];

for (const scenario of scenarios) {
  const dir = join(resultsDir, scenario);
  const file = findChecksFile(dir);
  console.log(`\n== ${scenario} ==`);
  if (!file) {
    console.log("  NO RESULTS: the runner wrote no checks.json. Runner log tail:");
    console.log(tail(join(dir, "runner.log")).replace(/^/gm, "    "));
    problems.push(`${scenario}: no results`);
    continue;
  }
  let checks;
  try {
    checks = JSON.parse(readFileSync(file, "utf8"));
    if (!Array.isArray(checks)) throw new Error("not an array");
  } catch (e) {
    console.log(`  UNREADABLE RESULTS ${file}: ${e.message}`);
    problems.push(`${scenario}: unreadable checks.json`);
    continue;
  }
  const wholeExpected = baseline.whole.has(scenario);
  const listed = baseline.perCheck.get(scenario) ?? new Set();
  const rows = collapse(checks);
  const width = Math.max(8, ...rows.map((r) => r.id.length + (r.count > 1 ? 4 : 0)));
  let scenarioHasNonPass = false;
  for (const r of rows) {
    if (STATUSES.includes(r.status)) totals[r.status]++;
    else other++;
    const inBaseline = wholeExpected || listed.has(r.id);
    const id = r.count > 1 ? `${r.id} x${r.count}` : r.id;
    let mark = "";
    if (r.status === "FAILURE" || r.status === "SKIPPED" || r.status === "WARNING") {
      scenarioHasNonPass = true;
      if (inBaseline) {
        mark = "(expected: baseline)";
        expected.push(`${scenario}:${r.id} ${r.status}`);
      } else if (r.status === "WARNING") {
        mark = "(warning: does not fail the run)";
      } else {
        mark = `(UNEXPECTED ${r.status})`;
        problems.push(`${scenario}:${r.id} ${r.status}`);
      }
    } else if (r.status === "SUCCESS" && listed.has(r.id)) {
      mark = "(STALE baseline entry: now passes, remove it)";
      problems.push(`${scenario}:${r.id} stale baseline entry (SUCCESS)`);
    } else if (!STATUSES.includes(r.status)) {
      mark = "(UNKNOWN status)";
      problems.push(`${scenario}:${r.id} unknown status ${r.status}`);
    }
    const msg = r.status === "SUCCESS" || r.status === "INFO" ? "" : oneLine(r.check.errorMessage);
    console.log(`  ${String(r.status).padEnd(8)} ${id.padEnd(width)} ${mark}${msg ? ` ${msg}` : ""}`.trimEnd());
  }
  if (rows.length === 0) {
    console.log("  (the runner reported no checks)");
    problems.push(`${scenario}: no checks`);
  }
  if (wholeExpected && !scenarioHasNonPass) {
    console.log("  STALE baseline entry: the whole scenario is listed but every check passes");
    problems.push(`${scenario}: stale baseline entry (whole scenario passes)`);
  }
  for (const id of listed)
    if (!rows.some((r) => r.id === id))
      notes.push(`${scenario}:${id} is in the baseline but was not reported`);
}

console.log("\n== Summary ==");
console.log(
  `Checks: ${STATUSES.map((s) => `${totals[s]} ${s}`).join(", ")}` +
    (other ? `, ${other} other` : "") +
    ` (${scenarios.length} scenario${scenarios.length === 1 ? "" : "s"})`,
);
if (expected.length) {
  console.log("Expected by baseline:");
  for (const e of expected) console.log(`  ~ ${e}`);
}
for (const n of notes) console.log(`Note: ${n}`);
if (problems.length) {
  console.log("Unexpected (these fail the run):");
  for (const p of problems) console.log(`  x ${p}`);
} else {
  console.log("Result: OK, nothing unexpected.");
}
// failed = FAILURE checks not in the baseline, plus everything else that
// fails the run (unexpected SKIPPED, stale entries, scenarios without results),
// so that "0 failed" <=> exit status 0.
console.log(`${totals.SUCCESS} passed, ${problems.length} failed, ${totals.SKIPPED} skipped`);
process.exit(problems.length ? 1 : 0);
