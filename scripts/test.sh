#!/usr/bin/env bash
# Runs every check and test: formatting (`cargo fmt --check`), lints (`cargo clippy
# --all-targets -D warnings`), the API docs (`cargo doc` with warnings as errors, so every
# intra-doc link resolves), the dependency policy of deny.toml (`cargo deny check licenses bans
# sources`, then `advisories` when the RustSec advisory database on GitHub can be reached, else
# a line saying it was skipped), the Rust workspace tests with cargo-nextest (the store contract
# on every store, the kill -9 cycles of the fixture on SQLite), the doctests with `cargo test --doc`
# (nextest does not run doctests; the README's example is one), then the official MCP
# conformance runner against the fixture on the in-memory store, its Tasks scenarios against
# examples/axum-app (the endpoint mounted at /api/mcp in an axum app), real clients pinned in
# interop/ (the TypeScript SDK 1.x tasks client on the 2025-11-25 path), then the runner against
# the fixture on a fresh SQLite database and on PostgreSQL (conformance/run.sh installs Node 22 and the pinned runner from the npm registry).
#
# Usage: scripts/test.sh [--quick] [--help]
#   --quick   the Rust tests and doctests only: no formatting, lints, docs, dependency policy
#             or conformance runner (for iterating)
#   --help    print this help
# Needs cargo-nextest (`cargo install cargo-nextest --locked`) and, without --quick, cargo-deny
# (`cargo install cargo-deny --locked`); .ci/run installs both when missing.
# Configuration: .config/nextest.toml, deny.toml. A test still running after 180 s (60 s in CI; 360 s for
# the kill -9 test) is killed and fails.
# Environment:
#   CI   when set (and not "false" or "0"): nextest's `ci` profile (no fail-fast, no retries,
#        failure output repeated at the end), a 60 s per-scenario kill for the conformance
#        runner (CONFORMANCE_KILL_AFTER_S, unless already set), and no PostgreSQL is a failure.
#   DATABASE_URL  the PostgreSQL of the PostgreSQL tests and conformance run (default
#        postgres://postgres@127.0.0.1:5432/test); without one they are skipped, and say so.
# Prints `[test] phase NAME: N s` after each phase and `[test] total: N s` at the end.
# Exit status: 0 when everything passed, non-zero otherwise.
set -euo pipefail
HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
cd "$HERE/.."

usage() { sed -n '2,29p' "$HERE/test.sh" | sed 's/^# \{0,1\}//'; }

QUICK=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; printf 'scripts/test.sh: unknown argument: %s\n' "$1" >&2; exit 2 ;;
  esac
done

case "${CI:-}" in
  ""|0|false|False|FALSE) IN_CI=0 ;;
  *) IN_CI=1 ;;
esac

if ! cargo nextest --version >/dev/null 2>&1; then
  printf 'scripts/test.sh: cargo-nextest is not installed; install it with:\n' >&2
  printf '  cargo install cargo-nextest --locked\n' >&2
  exit 2
fi
if [ "$QUICK" -eq 0 ] && ! cargo deny --version >/dev/null 2>&1; then
  printf 'scripts/test.sh: cargo-deny is not installed; install it with (or run --quick):\n' >&2
  printf '  cargo install cargo-deny --locked\n' >&2
  exit 2
fi

PROFILE=default
if [ "$IN_CI" -eq 1 ]; then
  PROFILE=ci
  # The slowest scenario takes about 3 s and the runner gives up on its own after
  # CONFORMANCE_TIMEOUT_MS (30 s); 60 s only kills a runner that hangs past that, and bounds a
  # run of 37 hung scenarios to about 43 minutes (60 s + 10 s grace each).
  export CONFORMANCE_KILL_AFTER_S="${CONFORMANCE_KILL_AFTER_S:-60}"
fi

START=$SECONDS
CURRENT=""
PHASE_START=$SECONDS
SQLITE_DIR=""
finish() {
  local rc=$?
  if [ -n "$SQLITE_DIR" ]; then rm -rf "$SQLITE_DIR"; fi
  if [ -n "$CURRENT" ]; then
    printf '[test] phase %s: %d s (failed)\n' "$CURRENT" "$((SECONDS - PHASE_START))"
  fi
  if [ "$rc" -eq 0 ]; then
    printf '[test] total: %d s, all passed\n' "$((SECONDS - START))"
  else
    printf '[test] total: %d s, FAILED (exit %d)\n' "$((SECONDS - START))" "$rc"
  fi
}
trap finish EXIT

# phase NAME COMMAND...: runs COMMAND and prints how long it took; a failure ends the script.
phase() {
  CURRENT="$1"
  PHASE_START=$SECONDS
  shift
  "$@"
  printf '[test] phase %s: %d s\n' "$CURRENT" "$((SECONDS - PHASE_START))"
  CURRENT=""
}

# The dependency policy (deny.toml). The advisories check needs the RustSec advisory database,
# which cargo-deny fetches from GitHub; where GitHub cannot be reached (a sandbox, an offline
# machine) it is skipped with a message instead of failing on the fetch.
deny_checks() {
  cargo deny --locked check licenses bans sources
  if command -v timeout >/dev/null 2>&1 &&
    GIT_TERMINAL_PROMPT=0 timeout 10 git ls-remote --heads https://github.com/rustsec/advisory-db >/dev/null 2>&1; then
    cargo deny --locked check advisories
  else
    printf '[test] advisories: skipped (the RustSec advisory database on GitHub is unreachable)\n'
  fi
}

if [ "$QUICK" -eq 0 ]; then
  phase fmt cargo fmt --all -- --check
  phase clippy cargo clippy --workspace --all-targets --locked -- -D warnings
  phase docs env RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
  phase deny deny_checks
fi
phase rust-tests cargo nextest run --workspace --locked --profile "$PROFILE"
phase doctests cargo test --doc --workspace --locked
if [ "$QUICK" -eq 0 ]; then
  phase conformance bash conformance/run.sh
  # The runner's Tasks scenarios through examples/axum-app: the MCP service mounted at
  # /api/mcp in an axum application with its own routes and middleware.
  EXAMPLE_BIN="${CARGO_TARGET_DIR:-target}/debug/axum-app"
  phase conformance-example bash -c 'cargo build -p tasks-example-axum --locked --quiet &&
    bash conformance/run.sh --no-build --fixture "$1" $(grep "^tasks-" conformance/scenarios.txt)' \
    _ "$EXAMPLE_BIN"
  # Real clients, pinned in interop/package-lock.json: the official TypeScript SDK 1.x
  # client's experimental tasks API against the 2025-11-25 session path.
  phase interop bash interop/run.sh
  SQLITE_DIR="$(mktemp -d)"
  phase conformance-sqlite bash conformance/run.sh --no-build \
    --fixture-args "--store sqlite:$SQLITE_DIR/conformance.db"
  PG_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
  if pg_isready -q -d "$PG_URL" 2>/dev/null || (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; then
    phase conformance-postgres bash conformance/run.sh --no-build \
      --fixture-args "--store $PG_URL --postgres-schema mcp_tasks_conformance"
  elif [ "$IN_CI" -eq 1 ]; then
    printf '[test] no PostgreSQL at %s: the PostgreSQL conformance run cannot run\n' "${PG_URL%%@*}@…" >&2
    exit 1
  else
    printf '[test] phase conformance-postgres: skipped (no PostgreSQL; set DATABASE_URL)\n'
  fi
fi
