#!/usr/bin/env bash
# Runs the pinned MCP conformance runner (@modelcontextprotocol/conformance,
# on Node 22 from node_modules) against the tasks-fixture server, one scenario
# at a time, and checks the results against baseline.yml.
#
# Usage: conformance/run.sh [--url URL] [--fixture BIN] [--fixture-args ARGS] [--no-build]
#                           [--verbose] [--spec-version VERSION] [SCENARIO...]
#   --url URL      test an already running server; do not build or start one
#   --fixture BIN  start BIN (with --listen 127.0.0.1:0) instead of building
#                  and starting <target dir>/debug/tasks-fixture ($CARGO_TARGET_DIR
#                  or the workspace's target/)
#   --fixture-args ARGS  more arguments for the fixture, split on spaces
#                  (e.g. "--store sqlite:/tmp/conformance.db")
#   --no-build     skip `cargo build --bin tasks-fixture` (use the existing binary)
#   --baseline FILE  the baseline of the 2026-07-28 and extension scenarios (default
#                  baseline.yml; baseline-rmcp.yml for examples/rmcp-app)
#   --verbose      also print each scenario's full runner output
#   --exclude REGEX  leave out the scenarios whose name matches REGEX (an extended
#                  regular expression, e.g. the catalog scenarios on a durable store,
#                  whose prompts and resources hold no task state)
# Each (revision, scenario) pair is checked against its revision's baseline:
# baseline.yml for the 2026-07-28 and extension scenarios, baseline-<VERSION>.yml
# for scenarios run at an older revision; results go to results/<scenario> and
# results/<VERSION>/<scenario>.
#   --spec-version VERSION  run the SCENARIOs given on the command line at this
#                  revision (e.g. 2025-11-25: the runner's session-based client)
#   SCENARIO...    run only these scenarios (default: every line of scenarios.txt;
#                  a line "2025-11-25 NAME" runs NAME at that revision)
# Environment:
#   CONFORMANCE_TIMEOUT_MS     runner per-scenario timeout (default 30000, the runner's own)
#   CONFORMANCE_KILL_AFTER_S   hard wall-clock limit per scenario process (default 300)
#   CONFORMANCE_READY_S        how long to wait for the fixture's URL line (default 60)
# Exit status: 0 when every check passed or is expected by baseline.yml, 1 otherwise,
# 2 on usage or setup errors.
set -euo pipefail

START_DIR="$(pwd -P)"
HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
REPO_ROOT="$(cd -- "$HERE/.." && pwd -P)"
SCENARIO_FILE="$HERE/scenarios.txt"
BASELINE="$HERE/baseline.yml"
RESULTS="$HERE/results"
NODE_BIN="$HERE/node_modules/.bin/node"
RUNNER_JS="$HERE/node_modules/@modelcontextprotocol/conformance/dist/index.js"
STAMP="$HERE/node_modules/.conformance-install-stamp"

TIMEOUT_MS="${CONFORMANCE_TIMEOUT_MS:-30000}"
# The stateless revision. Scenarios the runner lists for it
# run with `--spec-version 2026-07-28` (without it the runner drives them with
# its 2025-era stateful client, which tests the session path instead); extension
# scenarios (the tasks-* ones) are not on the spec timeline and run without it.
SPEC_VERSION="2026-07-28"
KILL_AFTER_S="${CONFORMANCE_KILL_AFTER_S:-300}"
READY_S="${CONFORMANCE_READY_S:-60}"

log() { printf '[conformance] %s\n' "$*" >&2; }
die() { printf '[conformance] ERROR: %s\n' "$*" >&2; exit 2; }
usage() { sed -n '2,34p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

URL=""
FIXTURE=""
FIXTURE_ARGS=()
BUILD=1
VERBOSE=0
EXCLUDE=""
PICKED_VERSION=""
SCENARIOS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --url) [ $# -ge 2 ] || die "--url needs a value"; URL="$2"; shift 2 ;;
    --url=*) URL="${1#--url=}"; shift ;;
    --fixture) [ $# -ge 2 ] || die "--fixture needs a value"; FIXTURE="$2"; shift 2 ;;
    --fixture=*) FIXTURE="${1#--fixture=}"; shift ;;
    --fixture-args) [ $# -ge 2 ] || die "--fixture-args needs a value"
      read -r -a FIXTURE_ARGS <<<"$2"; shift 2 ;;
    --fixture-args=*) read -r -a FIXTURE_ARGS <<<"${1#--fixture-args=}"; shift ;;
    --no-build) BUILD=0; shift ;;
    --baseline) [ $# -ge 2 ] || die "--baseline needs a value"; BASELINE="$(cd -- "$(dirname -- "$2")" && pwd -P)/$(basename -- "$2")"; shift 2 ;;
    --verbose) VERBOSE=1; shift ;;
    --exclude) [ $# -ge 2 ] || die "--exclude needs a value"; EXCLUDE="$2"; shift 2 ;;
    --spec-version) [ $# -ge 2 ] || die "--spec-version needs a value"; PICKED_VERSION="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; SCENARIOS+=("$@"); break ;;
    -*) usage >&2; die "unknown option: $1" ;;
    *) SCENARIOS+=("$1"); shift ;;
  esac
done

# Each entry is "VERSION NAME"; VERSION "-" means the default (2026-07-28 for the
# scenarios the runner lists for it, none for the extension scenarios).
if [ ${#SCENARIOS[@]} -eq 0 ]; then
  [ -f "$SCENARIO_FILE" ] || die "missing $SCENARIO_FILE"
  while IFS= read -r line || [ -n "$line" ]; do
    line="${line%%#*}"
    read -r -a words <<<"$line"
    case "${#words[@]}" in
      0) ;;
      1) name="${words[0]}"; version="-" ;;
      2) name="${words[1]}"; version="${words[0]}" ;;
      *) die "bad line in $SCENARIO_FILE: $line" ;;
    esac
    if [ "${#words[@]}" -gt 0 ] && { [ -z "$EXCLUDE" ] || ! [[ "$name" =~ $EXCLUDE ]]; }; then
      SCENARIOS+=("$version $name")
    fi
  done < "$SCENARIO_FILE"
  [ ${#SCENARIOS[@]} -gt 0 ] || die "no scenarios listed in $SCENARIO_FILE"
else
  picked=()
  for name in "${SCENARIOS[@]}"; do picked+=("${PICKED_VERSION:--} $name"); done
  SCENARIOS=("${picked[@]}")
fi
[ -f "$BASELINE" ] || die "missing $BASELINE"

# --- 1. runner install (npm ci when node_modules is missing or stale) --------
lock_hash() { cat "$HERE/package.json" "$HERE/package-lock.json" | sha256sum | cut -d' ' -f1; }
want="$(lock_hash)"
if [ ! -x "$NODE_BIN" ] || [ ! -f "$RUNNER_JS" ] || [ ! -f "$STAMP" ] \
   || [ "$(cat "$STAMP")" != "$want" ]; then
  command -v npm >/dev/null || die "npm not found on PATH"
  log "installing the runner and Node 22 with npm ci ..."
  (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) >&2 \
    || die "npm ci failed"
  printf '%s\n' "$want" > "$STAMP"
fi
node_version="$("$NODE_BIN" --version 2>/dev/null)" || die "$NODE_BIN does not run"
case "$node_version" in v22.*) ;; *) die "expected Node 22 in node_modules, got $node_version" ;; esac
export PATH="$HERE/node_modules/.bin:$PATH"

listing="$("$NODE_BIN" "$RUNNER_JS" list --server)" \
  || die "could not list the runner's scenarios"
known="$(sed -n 's/^  - \([^ ]*\).*/\1/p' <<<"$listing")"
# The runner arguments that pick the protocol revision for one scenario.
spec_args() {
  if grep -qE -- "^  - $1 \[([^]]*,)?$SPEC_VERSION(,[^]]*)?\]" <<<"$listing"; then
    printf '%s\n' --spec-version "$SPEC_VERSION"
  fi
}
# The runner arguments, results directory and baseline of a "VERSION NAME" entry.
version_of() { printf '%s' "${1%% *}"; }
name_of() { printf '%s' "${1#* }"; }
results_of() {
  if [ "$(version_of "$1")" = "-" ]; then printf '%s' "$RESULTS"; else printf '%s/%s' "$RESULTS" "$(version_of "$1")"; fi
}
baseline_of() {
  if [ "$(version_of "$1")" = "-" ]; then printf '%s' "$BASELINE"; else printf '%s/baseline-%s.yml' "$HERE" "$(version_of "$1")"; fi
}
for entry in "${SCENARIOS[@]}"; do
  scenario="$(name_of "$entry")"
  grep -qxF -- "$scenario" <<<"$known" \
    || die "unknown scenario '$scenario' (see: node_modules/.bin/conformance list --server)"
  [ -f "$(baseline_of "$entry")" ] || die "missing baseline $(baseline_of "$entry")"
done

# --- 2. server: build and start the fixture unless --url is given -----------
SERVER_PID=""
SERVER_DIR=""
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

server_log_tail() {
  if [ -n "$SERVER_DIR" ] && [ -s "$SERVER_DIR/stderr.log" ]; then
    log "fixture stderr (last 40 lines):"
    tail -n 40 "$SERVER_DIR/stderr.log" >&2
  elif [ -n "$SERVER_DIR" ]; then
    log "(the fixture wrote nothing to stderr)"
  fi
}

rm -rf "$RESULTS"
mkdir -p "$RESULTS"

if [ -z "$URL" ]; then
  if [ -z "$FIXTURE" ]; then
    # Cargo's target directory: $CARGO_TARGET_DIR (relative to where run.sh was started) or
    # the workspace's target/.
    target_dir="${CARGO_TARGET_DIR:-$REPO_ROOT/target}"
    case "$target_dir" in /*) ;; *) target_dir="$START_DIR/$target_dir" ;; esac
    FIXTURE="$target_dir/debug/tasks-fixture"
    if [ "$BUILD" -eq 1 ]; then
      # --bin, not -p: features resolved for the whole workspace, as for the tests and the
      # README's `cargo run --bin …`, so the three share one build (tests/Cargo.toml).
      log "building: cargo build --bin tasks-fixture"
      (cd "$REPO_ROOT" && cargo build --bin tasks-fixture) || die "cargo build --bin tasks-fixture failed"
    fi
  fi
  [ -x "$FIXTURE" ] || die "fixture binary not found or not executable: $FIXTURE"
  SERVER_DIR="$RESULTS/server"
  mkdir -p "$SERVER_DIR"
  log "starting $FIXTURE --listen 127.0.0.1:0 ${FIXTURE_ARGS[*]}"
  "$FIXTURE" --listen 127.0.0.1:0 "${FIXTURE_ARGS[@]}" >"$SERVER_DIR/stdout.log" 2>"$SERVER_DIR/stderr.log" </dev/null &
  SERVER_PID=$!
  deadline=$((SECONDS + READY_S))
  while :; do
    URL="$(grep -m1 -E '^https?://[^[:space:]]+$' "$SERVER_DIR/stdout.log" 2>/dev/null || true)"
    [ -n "$URL" ] && break
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      status=0; wait "$SERVER_PID" || status=$?
      SERVER_PID=""
      server_log_tail
      die "fixture exited (status $status) before printing its URL"
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      server_log_tail
      die "fixture printed no URL line on stdout within ${READY_S}s"
    fi
    sleep 0.1
  done
  log "fixture ready at $URL (pid $SERVER_PID)"
else
  log "testing the server at $URL"
fi

# --- 3. run each scenario -----------------------------------------------------
runner_version="$("$NODE_BIN" -e 'console.log(require(process.argv[1]).version)' \
  "$HERE/node_modules/@modelcontextprotocol/conformance/package.json")"
log "runner @modelcontextprotocol/conformance@$runner_version on node $node_version; results in $RESULTS"
for entry in "${SCENARIOS[@]}"; do
  scenario="$(name_of "$entry")"
  version="$(version_of "$entry")"
  out="$(results_of "$entry")/$scenario"
  mkdir -p "$out"
  if [ "$version" = "-" ]; then
    version_args=($(spec_args "$scenario"))
  else
    version_args=(--spec-version "$version")
  fi
  start=$SECONDS
  rc=0
  timeout --kill-after=10 "$KILL_AFTER_S" \
    "$NODE_BIN" "$RUNNER_JS" server \
      --url "$URL" \
      --scenario "$scenario" \
      "${version_args[@]}" \
      --expected-failures "$(baseline_of "$entry")" \
      --timeout "$TIMEOUT_MS" \
      --output-dir "$out" \
      </dev/null >"$out/runner.log" 2>&1 || rc=$?
  case "$rc" in
    124|137) note=" (killed after ${KILL_AFTER_S}s)" ;;
    *) note="" ;;
  esac
  label="$scenario"; [ "$version" = "-" ] || label="$scenario ($version)"
  log "$label: runner exit $rc in $((SECONDS - start))s$note"
  if [ "$VERBOSE" -eq 1 ]; then sed 's/\x1b\[[0-9;]*m//g' "$out/runner.log" >&2; fi
  if [ -n "$SERVER_PID" ] && ! kill -0 "$SERVER_PID" 2>/dev/null; then
    log "the fixture died during $scenario"
    server_log_tail
    SERVER_PID=""
  fi
done

# --- 4. table, summary, baseline ----------------------------------------------
rc=0
versions="$(for entry in "${SCENARIOS[@]}"; do version_of "$entry"; echo; done | sort -u)"
while IFS= read -r version; do
  [ -n "$version" ] || continue
  names=()
  for entry in "${SCENARIOS[@]}"; do
    [ "$(version_of "$entry")" = "$version" ] && names+=("$(name_of "$entry")")
  done
  first="$version ${names[0]}"
  [ "$version" = "-" ] || log "results at revision $version:"
  "$NODE_BIN" "$HERE/evaluate.mjs" "$(baseline_of "$first")" "$(results_of "$first")" "${names[@]}" || rc=1
done <<<"$versions"
if [ "$rc" -ne 0 ]; then
  server_log_tail
  log "results and runner logs: $RESULTS"
fi
exit "$rc"
