#!/usr/bin/env bash
# Runs every check and test: formatting (`cargo fmt --check`), that the tests and `cargo run`
# share one build (the features of every dependency are the same with and without the tests'
# dev-dependencies; tests/Cargo.toml), lints (`cargo clippy --all-targets -D warnings`), the API
# docs (`cargo doc` with warnings as errors, so every intra-doc link resolves), that the fuzz
# targets type-check (`cargo check` of fuzz/), that no crate lists a dependency it does not use
# (cargo-machete, pinned: CARGO_MACHETE_VERSION), the dependency
# policy of deny.toml (`cargo deny check licenses bans sources`, then `advisories` when the
# RustSec advisory database on GitHub can be reached, else a line saying it was skipped), the
# Rust workspace tests with cargo-nextest (the store contract on every store, the kill -9
# cycles of the fixture on SQLite), the doctests with `cargo test --doc` (nextest does not run
# doctests; the embedding guide's examples are among them), then the official MCP conformance runner against the
# fixture on the in-memory store, its Tasks scenarios against examples/axum-app (the endpoint
# mounted at /api/mcp in an axum app) and against examples/rmcp-app (an rmcp server with tasks
# through tasks-rmcp, on memory and SQLite), real clients pinned in interop/ (the TypeScript SDK 1.x
# tasks client on the 2025-11-25 path), then the runner against the fixture on a fresh SQLite
# database and on PostgreSQL.
#
# Usage: scripts/test.sh [--quick] [--help]
#   --quick   the Rust tests and doctests only: no formatting, lints, docs, dependency policy
#             or conformance runner (for iterating)
#   --help    print this help
# Installs what it needs and is missing: cargo-nextest (`cargo install cargo-nextest
# --locked`) and, without --quick, cargo-deny at the version this script pins
# (CARGO_DENY_VERSION; `cargo install cargo-deny --locked --version ...`, about 5 minutes on
# 2 cores) and cargo-machete at its pinned version (about 2.5 minutes); where either cannot be
# installed (no network) its check is skipped with a line saying so, except in CI.
# conformance/run.sh and interop/run.sh install Node 22, the pinned runner and the pinned
# clients from the npm registry (`npm`, any version, must be on PATH).
# Uses a PostgreSQL at DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) for the
# PostgreSQL tests and conformance run; without one they are skipped, and say so.
# Builds with the workspace's [profile.dev] (Cargo.toml: line tables only, no incremental
# caches), the profile `cargo run` uses too; CARGO_PROFILE_DEV_* and CARGO_INCREMENTAL in the
# environment override it, for every cargo command alike.
# Configuration: .config/nextest.toml, deny.toml. A test still running after 180 s (60 s in CI;
# longer for the tests that start processes) is killed and fails.
# Environment:
#   CI   when set (and not "false" or "0"): nextest's `ci` profile (no fail-fast, no retries,
#        failure output repeated at the end), a 60 s per-scenario kill for the conformance
#        runner (CONFORMANCE_KILL_AFTER_S, unless already set), and no PostgreSQL or no
#        cargo-deny is a failure.
#   DATABASE_URL  the PostgreSQL of the PostgreSQL tests and conformance run.
# Prints what it needs at the start, `[test] phase NAME: N s` after each phase, the disk used
# and `[test] total: N s` at the end.
# Exit status: 0 when everything passed, non-zero otherwise.
set -euo pipefail
HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
cd "$HERE/.."

# What a first run needs on a 2-core machine, from a fresh clone: update this line and the
# README's "A first run needs ..." from the `[test] total` and `[test] disk at the end` lines of
# a measured run (replacing "estimate, not yet measured" with "measured YYYY-MM-DD"):
NEEDS="about 13-16 minutes and 6 GB of disk on 2 cores (measured 2026-12-06: 775 s including 127 s to install cargo-nextest and cargo-deny, target 5.2 GB; 968 s on a slower machine)"
# Pinned: a new cargo-deny release may change its checks or its config format. 0.20.2 builds
# with Rust 1.88 or newer.
CARGO_DENY_VERSION=0.20.2
# Pinned for the same reason: cargo-machete finds dependencies a crate lists and never names
# (the `unused-deps` phase); about 2.5 minutes to install on 2 cores.
CARGO_MACHETE_VERSION=0.9.2

usage() {
  awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$HERE/test.sh"
  printf 'A first run needs %s. cargo-deny is pinned to %s.\n' "$NEEDS" "$CARGO_DENY_VERSION"
}

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

PROFILE=default
if [ "$IN_CI" -eq 1 ]; then
  PROFILE=ci
  # The slowest scenario takes about 3 s and the runner gives up on its own after
  # CONFORMANCE_TIMEOUT_MS (30 s); 60 s only kills a runner that hangs past that, and bounds a
  # run of 37 hung scenarios to about 22 minutes (60 s + 10 s grace each, two at a time).
  export CONFORMANCE_KILL_AFTER_S="${CONFORMANCE_KILL_AFTER_S:-60}"
fi

TARGET_DIR="${CARGO_TARGET_DIR:-target}"
PG_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
# The URL as it may be printed: without a password.
PG_SHOWN="$(printf '%s' "$PG_URL" | sed -E 's#^([a-z]+://[^:/@]*):[^@]*@#\1:***@#')"
pg_up() {
  pg_isready -q -d "$PG_URL" 2>/dev/null || (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null
}

# disk WHEN: the free space where the build goes, and the size of the target folder (in MB).
free_mb() { df -Pk "$(dirname -- "$TARGET_DIR")" 2>/dev/null | awk 'NR == 2 { print int($4 / 1024) }'; }
FREE_AT_START="$(free_mb)" || true
disk() {
  local free target
  free="$(free_mb)" || true
  target="$(du -sk "$TARGET_DIR" 2>/dev/null | awk '{ print int($1 / 1024) }')" || true
  printf '[test] disk %s: %s MB free' "$1" "${free:-?}"
  if [ -n "$free" ] && [ -n "$FREE_AT_START" ] && [ "$free" -lt "$FREE_AT_START" ]; then
    printf ' (%d MB less than at the start)' "$((FREE_AT_START - free))"
  fi
  printf ', target %s MB\n' "${target:-0}"
}

# What the run needs, before it starts.
if [ "$QUICK" -eq 1 ]; then
  printf '[test] --quick: the Rust tests and doctests only\n'
else
  printf '[test] a first run needs %s; later runs rebuild only what changed\n' "$NEEDS"
fi
if pg_up; then
  printf '[test] PostgreSQL at %s: reachable\n' "$PG_SHOWN"
elif [ "$IN_CI" -eq 1 ]; then
  printf '[test] PostgreSQL at %s: NOT reachable; its tests and conformance run fail in CI\n' "$PG_SHOWN"
else
  printf '[test] PostgreSQL at %s: not reachable; its tests and conformance run are skipped (set DATABASE_URL)\n' "$PG_SHOWN"
fi
if [ "$QUICK" -eq 0 ]; then
  if command -v npm >/dev/null 2>&1; then
    printf '[test] npm %s: installs Node 22, the conformance runner and the interop clients from the npm registry when missing\n' \
      "$(npm --version 2>/dev/null || echo '?')"
  else
    printf '[test] npm not found: the conformance phases need it unless conformance/node_modules and interop/node_modules are installed\n' >&2
  fi
fi
disk "at the start"

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
  disk "at the end"
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

# cargo installs into $CARGO_INSTALL_ROOT/bin or $CARGO_HOME/bin; cargo finds its subcommands in
# the latter by itself, and in the former only through PATH.
CARGO_BIN="${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}/bin"
case ":$PATH:" in *":$CARGO_BIN:"*) ;; *) export PATH="$PATH:$CARGO_BIN" ;; esac

# The cargo subcommands the run needs: installed with `cargo install` when missing.
DENY=1
MACHETE=1
# pinned_tool CRATE VERSION MINUTES PHASE UNCHECKED: `cargo install CRATE --locked --version
# VERSION` when `cargo <CRATE without cargo->` is missing (MINUTES: how long that takes on 2
# cores), then prints the version found (and the pin, when they differ). Where it cannot be
# installed: exits 2 in CI; elsewhere says PHASE is skipped and "UNCHECKED NOT checked", and
# returns 1.
pinned_tool() {
  local crate="$1" version="$2" minutes="$3" phase="$4" unchecked="$5"
  local command="${crate#cargo-}" shown
  if ! cargo "$command" --version >/dev/null 2>&1; then
    printf '[test] %s is missing: cargo install %s --locked --version %s (about %s minutes on 2 cores)\n' \
      "$crate" "$crate" "$version" "$minutes"
    if ! cargo install "$crate" --locked --version "$version"; then
      if [ "$IN_CI" -eq 1 ]; then
        printf 'scripts/test.sh: %s could not be installed\n' "$crate" >&2
        exit 2
      fi
      printf '[test] %s: skipped (%s is not installed and could not be installed; %s NOT checked)\n' \
        "$phase" "$crate" "$unchecked"
      return 1
    fi
  fi
  shown="$(cargo "$command" --version | sed -n 1p)"
  case "$shown" in "$crate"*) ;; *) shown="$crate $shown" ;; esac
  case "$shown" in
    *"$version") printf '%s\n' "$shown" ;;
    *) printf '%s (the pinned version is %s)\n' "$shown" "$version" ;;
  esac
}

tools() {
  if ! cargo nextest --version >/dev/null 2>&1; then
    printf '[test] cargo-nextest is missing: cargo install cargo-nextest --locked\n'
    if ! cargo install cargo-nextest --locked; then
      printf 'scripts/test.sh: cargo-nextest could not be installed (is crates.io reachable?); install it with:\n' >&2
      printf '  cargo install cargo-nextest --locked\n' >&2
      exit 2
    fi
  fi
  cargo nextest --version | sed -n 1p
  browser
  [ "$QUICK" -eq 0 ] || return 0
  pinned_tool cargo-machete "$CARGO_MACHETE_VERSION" 2.5 unused-deps 'unused dependencies are' ||
    MACHETE=0
  pinned_tool cargo-deny "$CARGO_DENY_VERSION" 5 deny 'the dependency policy of deny.toml is' ||
    DENY=0
}

# The operator console's browser tests (crates/tasks-admin/tests/browser.rs) drive headless
# Chromium through ChromeDriver, both from the distribution's packages (Debian: chromium and
# chromium-driver): installed with apt-get when missing and possible. Without them the browser
# tests fail in CI and say they skipped elsewhere.
browser() {
  if command -v chromedriver >/dev/null 2>&1 && { command -v chromium >/dev/null 2>&1 ||
    command -v chromium-browser >/dev/null 2>&1; }; then
    printf '[test] %s; %s\n' "$(chromedriver --version 2>/dev/null | sed -n 1p)" \
      "$( (chromium --version || chromium-browser --version) 2>/dev/null | sed -n 1p)"
    return 0
  fi
  printf '[test] Chromium or ChromeDriver is missing: apt-get install chromium chromium-driver\n'
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
  if command -v apt-get >/dev/null 2>&1 &&
    { $sudo apt-get update -qq || true; } &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
      chromium chromium-driver >/dev/null; then
    printf '[test] %s installed\n' "$(chromedriver --version 2>/dev/null | sed -n 1p)"
  else
    printf '[test] Chromium could not be installed: the browser tests will fail in CI and skip elsewhere\n'
  fi
}

# One build for the tests and `cargo run --bin ...`: every crate that both the tests and the
# binaries build is built with the same features either way (cargo resolves features per
# command, and dev-dependencies add some), else `cargo run` recompiles most dependencies after
# the tests. tests/Cargo.toml lists the features only dev-dependencies turn on.
# fuzz_check: type-checks the fuzz targets against fuzz/Cargo.lock, their own lock file (fuzz/ is
# its own workspace), which a dependency change in a workspace crate must update too.
fuzz_check() {
  if ! cargo check --manifest-path fuzz/Cargo.toml --bins --locked --target-dir target/fuzz; then
    printf 'scripts/test.sh: the fuzz targets do not build; if cargo says fuzz/Cargo.lock needs\n' >&2
    printf 'updating, run `cargo check --manifest-path fuzz/Cargo.toml --bins` and commit the lock\n' >&2
    return 1
  fi
}

same_features() {
  local normal all
  normal="$(cargo tree --workspace --locked -e normal,build --prefix none -f '{p}|{f}')"
  all="$(cargo tree --workspace --locked --prefix none -f '{p}|{f}')"
  if ! awk -F'|' '
      FNR == 1 { file++ }
      { sub(/ \(\*\)$/, ""); key = $1; features = $2 }
      file == 1 && !((key SUBSEP features) in normal) {
        normal[key SUBSEP features] = 1; without[key] = without[key] " [" features "]"
      }
      file == 1 { next }
      key in without { all[key SUBSEP features] = 1 }
      END {
        for (k in all) if (!(k in normal)) {
          split(k, part, SUBSEP)
          printf "  %s: [%s] for the tests,%s without them\n", part[1], part[2], without[part[1]]
          bad = 1
        }
        exit bad
      }' <(printf '%s\n' "$normal") <(printf '%s\n' "$all"); then
    printf 'scripts/test.sh: dev-dependencies turn on features the binaries are built without, so\n' >&2
    printf '`cargo run --bin ...` would recompile after the tests: add them to [dependencies] in\n' >&2
    printf 'tests/Cargo.toml (see its comment; `cargo tree --workspace -e features -i CRATE` shows who\n' >&2
    printf 'turns them on)\n' >&2
    return 1
  fi
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

phase tools tools
if [ "$QUICK" -eq 0 ]; then
  phase fmt cargo fmt --all -- --check
  phase features same_features
  # A dependency no crate names is refused (cargo-machete; a crate lists what it needs only
  # through a derive or for feature unification under [package.metadata.cargo-machete]).
  if [ "$MACHETE" -eq 1 ]; then
    phase unused-deps cargo machete
  fi
  phase clippy cargo clippy --workspace --all-targets --locked -- -D warnings
  phase docs env RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
  # The fuzz targets are their own workspace (fuzz/Cargo.toml), which the phases above do not
  # build: type-check them so that an API change cannot leave them broken unnoticed.
  # The 2025 session path is a default feature (tasks-http's and tasks-runtime's `sessions`):
  # the crates must build without it too.
  phase sessions-off cargo check -p tasks-http --no-default-features --locked
  phase fuzz-check fuzz_check
  if [ "$DENY" -eq 1 ]; then
    phase deny deny_checks
  fi
fi
phase rust-tests cargo nextest run --workspace --locked --profile "$PROFILE"
phase doctests cargo test --doc --workspace --locked
if [ "$QUICK" -eq 0 ]; then
  phase conformance bash conformance/run.sh
  # The runner's Tasks scenarios through examples/axum-app: the MCP service mounted at
  # /api/mcp in an axum application with its own routes and middleware. (--bin: the
  # workspace's features, the build the tests made.)
  EXAMPLE_BIN="$TARGET_DIR/debug/axum-app"
  phase conformance-example bash -c 'cargo build --bin axum-app --locked --quiet &&
    bash conformance/run.sh --no-build --fixture "$1" $(grep "^tasks-" conformance/scenarios.txt)' \
    _ "$EXAMPLE_BIN"
  # The runner's Tasks scenarios through examples/rmcp-app, an rmcp 3.11.0 server whose tasks
  # run on the runtime through crates/tasks-rmcp, on memory and on a fresh SQLite database,
  # checked against conformance/baseline-rmcp.yml (what rmcp itself blocks).
  RMCP_BIN="$TARGET_DIR/debug/rmcp-app"
  RMCP_DIR="$(mktemp -d)"
  phase conformance-rmcp bash -c 'cargo build --bin rmcp-app --locked --quiet &&
    bash conformance/run.sh --no-build --fixture "$1" --baseline conformance/baseline-rmcp.yml \
      $(grep "^tasks-" conformance/scenarios.txt) &&
    bash conformance/run.sh --no-build --fixture "$1" --baseline conformance/baseline-rmcp.yml \
      --fixture-args "--store sqlite:$2/rmcp-{job}.db" $(grep "^tasks-" conformance/scenarios.txt)' \
    _ "$RMCP_BIN" "$RMCP_DIR"
  rm -rf "$RMCP_DIR"
  # Real clients, pinned in interop/package-lock.json: the official TypeScript SDK 1.x
  # client's experimental tasks API against the 2025-11-25 session path.
  phase interop bash interop/run.sh
  # conformance/run.sh runs two scenarios at a time, each job on a fixture and a store of its own
  # ({job} in --fixture-args: a SQLite file, a PostgreSQL schema per job).
  # Prompts, resources and skills hold no task state: on the durable stores the catalog
  # scenarios run as a smoke set (resources-read-text, prompts-get-with-args, the unknown
  # resource and the prompt's input round), the rest on the memory store only.
  CATALOG_ONLY='^(completion-complete|caching|resources-(list|read-binary|templates-read|subscribe|unsubscribe)|prompts-(list|get-simple|get-embedded-resource|get-with-image)|sep-2640-.*)$'
  SQLITE_DIR="$(mktemp -d)"
  phase conformance-sqlite bash conformance/run.sh --no-build --exclude "$CATALOG_ONLY" \
    --fixture-args "--store sqlite:$SQLITE_DIR/conformance-{job}.db"
  if pg_up; then
    phase conformance-postgres bash conformance/run.sh --no-build --exclude "$CATALOG_ONLY" \
      --fixture-args "--store $PG_URL --postgres-schema mcp_tasks_conformance_{job}"
  elif [ "$IN_CI" -eq 1 ]; then
    printf '[test] no PostgreSQL at %s: the PostgreSQL conformance run cannot run\n' "$PG_SHOWN" >&2
    exit 1
  else
    printf '[test] phase conformance-postgres: skipped (no PostgreSQL; set DATABASE_URL)\n'
  fi
fi
