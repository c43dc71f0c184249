#!/usr/bin/env bash
# Runs real MCP clients, pinned exactly in package.json / package-lock.json (with Node 22
# from the npm package `node`), against the tasks-fixture, one fixture per client script.
#
# Usage: interop/run.sh [--fixture BIN] [SCRIPT...]
#   --fixture BIN  start BIN (default: <target dir>/debug/tasks-fixture; not built here)
#   SCRIPT...      client scripts to run (default: every *.mjs in interop/)
# Each script gets the fixture's MCP URL as its one argument, prints PASS/FAIL lines, and
# exits non-zero when a check failed. A script line `// fixture-args: ARGS` adds fixture flags. Exit status: 0 when every script passed.
set -euo pipefail
HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
REPO_ROOT="$(cd -- "$HERE/.." && pwd -P)"
NODE_BIN="$HERE/node_modules/.bin/node"
STAMP="$HERE/node_modules/.interop-install-stamp"
log() { printf '[interop] %s\n' "$*" >&2; }
die() { printf '[interop] ERROR: %s\n' "$*" >&2; exit 2; }

FIXTURE="${CARGO_TARGET_DIR:-$REPO_ROOT/target}/debug/tasks-fixture"
case "$FIXTURE" in /*) ;; *) FIXTURE="$(pwd -P)/$FIXTURE" ;; esac
SCRIPTS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --fixture) [ $# -ge 2 ] || die "--fixture needs a value"; FIXTURE="$2"; shift 2 ;;
    -h|--help) sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) SCRIPTS+=("$1"); shift ;;
  esac
done
if [ ${#SCRIPTS[@]} -eq 0 ]; then
  for script in "$HERE"/*.mjs; do SCRIPTS+=("$(basename "$script")"); done
fi
[ -x "$FIXTURE" ] || die "fixture binary not found: $FIXTURE (cargo build --bin tasks-fixture)"

want="$(cat "$HERE/package.json" "$HERE/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [ ! -x "$NODE_BIN" ] || [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$want" ]; then
  command -v npm >/dev/null || die "npm not found on PATH"
  log "installing the pinned clients and Node 22 with npm ci ..."
  (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) >&2 || die "npm ci failed"
  printf '%s\n' "$want" > "$STAMP"
fi

LOGS="$(mktemp -d)"
SERVER_PID=""
stop() {
  if [ -n "$SERVER_PID" ]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
  fi
}
trap 'stop; rm -rf "$LOGS"' EXIT

rc=0
for script in "${SCRIPTS[@]}"; do
  # A script names the fixture flags it needs on a line `// fixture-args: ARGS`.
  read -r -a args <<<"$(sed -n 's|^// fixture-args: ||p' "$HERE/$script" | head -n 1)"
  "$FIXTURE" --listen 127.0.0.1:0 "${args[@]}" >"$LOGS/stdout" 2>"$LOGS/stderr" </dev/null &
  SERVER_PID=$!
  URL=""
  for _ in $(seq 1 600); do
    URL="$(grep -m1 -E '^https?://[^[:space:]]+$' "$LOGS/stdout" 2>/dev/null || true)"
    [ -n "$URL" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$URL" ] || { tail -n 20 "$LOGS/stderr" >&2; die "the fixture printed no URL"; }
  log "$script against $URL"
  if ! timeout --kill-after=10 300 "$NODE_BIN" "$HERE/$script" "$URL"; then
    rc=1
    log "$script failed; fixture log (last 20 lines):"
    tail -n 20 "$LOGS/stderr" >&2
  fi
  stop
done
exit "$rc"
