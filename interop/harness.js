// Shared by the client scripts: named checks, assertions, and the exit status.

let failures = 0;

/** Runs one named check and prints PASS or FAIL with the error. */
export async function check(name, body) {
  try {
    await body();
    console.log(`PASS ${name}`);
  } catch (error) {
    failures += 1;
    console.log(`FAIL ${name}: ${error?.stack ?? error}`);
  }
}

/** Fails the current check with `message` unless `condition` holds. */
export function expect(condition, message) {
  if (!condition) throw new Error(message);
}

/** The first text block of a CallToolResult. */
export function text(result) {
  return result?.content?.find((c) => c.type === "text")?.text;
}

/** The endpoint URL from the command line (exits 2 without one). */
export function urlArgument(script) {
  const url = process.argv[2];
  if (!url) {
    console.error(`usage: node ${script} <MCP endpoint URL>`);
    process.exit(2);
  }
  return url;
}

/** Prints the summary line and exits: 0 when every check passed, 1 otherwise. */
export function finish(script) {
  console.log(failures === 0 ? `${script}: all checks passed` : `${script}: ${failures} failed`);
  process.exit(failures === 0 ? 0 : 1);
}
