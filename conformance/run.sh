#!/usr/bin/env bash
# Runs the pinned MCP conformance runner (@modelcontextprotocol/conformance,
# on Node 22 from node_modules) against the tasks-fixture server and checks the
# results against baseline.yml. Two scenarios run at a time (--jobs), each job
# against a fixture of its own that runs one scenario after another.
#
# Usage: conformance/run.sh [--url URL] [--fixture BIN] [--fixture-args ARGS] [--no-build]
#                           [--jobs N] [--verbose] [--spec-version VERSION] [SCENARIO...]
#   --url URL      test an already running server; do not build or start one
#   --fixture BIN  start BIN (with --listen 127.0.0.1:0) instead of building
#                  and starting <target dir>/debug/tasks-fixture ($CARGO_TARGET_DIR
#                  or the workspace's target/)
#   --fixture-args ARGS  more arguments for the fixture, split on spaces
#                  (e.g. "--store sqlite:/tmp/conformance-{job}.db"); {job} becomes
#                  the job's number, 1 to N, so each job's fixture has a store of its
#                  own (with a --store and no {job}, the scenarios run one at a time)
#   --jobs N       run N scenarios at a time, on N fixtures (default 2, or
#                  $CONFORMANCE_JOBS; 1 with --url: one server)
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
#   CONFORMANCE_JOBS           scenarios at a time when --jobs is not given (default 2)
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
JOBS="${CONFORMANCE_JOBS:-2}"

log() { printf '[conformance] %s\n' "$*" >&2; }
die() { printf '[conformance] ERROR: %s\n' "$*" >&2; exit 2; }
usage() { sed -n '2,40p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

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
    --jobs) [ $# -ge 2 ] || die "--jobs needs a value"; JOBS="$2"; shift 2 ;;
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

[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || die "--jobs (or CONFORMANCE_JOBS) must be a positive number, not '$JOBS'"

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

# --- 2. servers: build and start the fixtures unless --url is given -----------
# JOBS scenarios run at a time, each job against a fixture of its own (its own port and, through
# {job} in --fixture-args, its own store) and one scenario after another, so each fixture sees a
# sequence of whole scenarios, as a single one does.
if [ -n "$URL" ]; then
  JOBS=1
elif [ "$JOBS" -gt 1 ] && [[ " ${FIXTURE_ARGS[*]} " == *" --store "* ]] \
  && [[ "${FIXTURE_ARGS[*]}" != *"{job}"* ]]; then
  log "one store for every job (no {job} in --fixture-args): one scenario at a time"
  JOBS=1
fi
SERVER_PIDS=()
SERVER_DIRS=()
URLS=()
WORKER_PIDS=()
cleanup() {
  local pid
  for pid in "${WORKER_PIDS[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      pkill -TERM -P "$pid" 2>/dev/null || true # the timeout around its running scenario
      kill "$pid" 2>/dev/null || true
    fi
  done
  for pid in "${SERVER_PIDS[@]}"; do
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill "$pid" 2>/dev/null || true; fi
  done
  for pid in "${SERVER_PIDS[@]}"; do
    [ -n "$pid" ] || continue
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# server_log_tail JOB: the end of that job's fixture log.
server_log_tail() {
  local dir="${SERVER_DIRS[$1]:-}"
  if [ -n "$dir" ] && [ -s "$dir/stderr.log" ]; then
    log "fixture stderr (last 40 lines, $dir/stderr.log):"
    tail -n 40 "$dir/stderr.log" >&2
  elif [ -n "$dir" ]; then
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
  for ((job = 1; job <= JOBS; job++)); do
    if [ "$JOBS" -eq 1 ]; then dir="$RESULTS/server"; else dir="$RESULTS/server-$job"; fi
    mkdir -p "$dir"
    args=("${FIXTURE_ARGS[@]//\{job\}/$job}")
    log "starting $FIXTURE --listen 127.0.0.1:0 ${args[*]}"
    "$FIXTURE" --listen 127.0.0.1:0 "${args[@]}" >"$dir/stdout.log" 2>"$dir/stderr.log" </dev/null &
    SERVER_PIDS[job]=$!
    SERVER_DIRS[job]="$dir"
  done
  deadline=$((SECONDS + READY_S))
  for ((job = 1; job <= JOBS; job++)); do
    while :; do
      URLS[job]="$(grep -m1 -E '^https?://[^[:space:]]+$' "${SERVER_DIRS[job]}/stdout.log" 2>/dev/null || true)"
      [ -n "${URLS[job]}" ] && break
      if ! kill -0 "${SERVER_PIDS[job]}" 2>/dev/null; then
        status=0; wait "${SERVER_PIDS[job]}" || status=$?
        SERVER_PIDS[job]=""
        server_log_tail "$job"
        die "fixture exited (status $status) before printing its URL"
      fi
      if [ "$SECONDS" -ge "$deadline" ]; then
        server_log_tail "$job"
        die "fixture printed no URL line on stdout within ${READY_S}s"
      fi
      sleep 0.1
    done
    log "fixture ready at ${URLS[job]} (pid ${SERVER_PIDS[job]})"
  done
else
  log "testing the server at $URL"
  URLS[1]="$URL"
fi

# --- 3. run the scenarios -----------------------------------------------------
runner_version="$("$NODE_BIN" -e 'console.log(require(process.argv[1]).version)' \
  "$HERE/node_modules/@modelcontextprotocol/conformance/package.json")"
log "runner @modelcontextprotocol/conformance@$runner_version on node $node_version; results in $RESULTS"
# Each job takes the next scenario not yet taken (`mkdir` of its number succeeds for one job
# only) and, when it is done, writes "RUNNER_EXIT SECONDS FIXTURE_DIED JOB" to
# $RUN/status-<number>. This shell prints each scenario's line in the listed order as its status
# appears, the same lines a single job prints.
RUN="$RESULTS/.jobs"
mkdir -p "$RUN/taken"
run_job() {
  local job="$1" i entry scenario version out start rc died
  local version_args
  for i in "${!SCENARIOS[@]}"; do
    mkdir "$RUN/taken/$i" 2>/dev/null || continue
    entry="${SCENARIOS[i]}"
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
        --url "${URLS[job]}" \
        --scenario "$scenario" \
        "${version_args[@]}" \
        --expected-failures "$(baseline_of "$entry")" \
        --timeout "$TIMEOUT_MS" \
        --output-dir "$out" \
        </dev/null >"$out/runner.log" 2>&1 || rc=$?
    died=0
    if [ -n "${SERVER_PIDS[job]:-}" ] && ! kill -0 "${SERVER_PIDS[job]}" 2>/dev/null; then
      died=1
      SERVER_PIDS[job]=""
    fi
    printf '%s %s %s %s\n' "$rc" "$((SECONDS - start))" "$died" "$job" >"$RUN/status-$i.new"
    mv "$RUN/status-$i.new" "$RUN/status-$i"
  done
}
for ((job = 1; job <= JOBS; job++)); do
  run_job "$job" &
  WORKER_PIDS+=($!)
done
for i in "${!SCENARIOS[@]}"; do
  entry="${SCENARIOS[i]}"
  scenario="$(name_of "$entry")"
  version="$(version_of "$entry")"
  out="$(results_of "$entry")/$scenario"
  while [ ! -f "$RUN/status-$i" ]; do
    alive=0
    for pid in "${WORKER_PIDS[@]}"; do
      if kill -0 "$pid" 2>/dev/null; then alive=1; fi
    done
    if [ "$alive" -eq 0 ] && [ ! -f "$RUN/status-$i" ]; then
      die "no result for $scenario: the jobs running the scenarios have ended"
    fi
    sleep 0.1
  done
  read -r rc took died job <"$RUN/status-$i"
  case "$rc" in
    124|137) note=" (killed after ${KILL_AFTER_S}s)" ;;
    *) note="" ;;
  esac
  label="$scenario"; [ "$version" = "-" ] || label="$scenario ($version)"
  log "$label: runner exit $rc in ${took}s$note"
  if [ "$VERBOSE" -eq 1 ]; then sed 's/\x1b\[[0-9;]*m//g' "$out/runner.log" >&2; fi
  if [ "$died" -eq 1 ]; then
    log "the fixture died during $scenario"
    server_log_tail "$job"
  fi
done
for pid in "${WORKER_PIDS[@]}"; do wait "$pid" || die "a job running the scenarios failed"; done
WORKER_PIDS=()
rm -rf "$RUN"

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
  for ((job = 1; job <= JOBS; job++)); do server_log_tail "$job"; done
  log "results and runner logs: $RESULTS"
fi
exit "$rc"
