#!/usr/bin/env bash
# Runs every fuzz target for SECONDS (default 90) on the stable toolchain without sanitizers
# (`-s none`), seeding from seeds/ and keeping the grown corpus in corpus/<target>/.
# Crashes land in artifacts/<target>/. See docs/fuzzing.md.
#
# Usage: fuzz/run.sh [SECONDS [TARGET...]]   (targets: envelope dispatch params headers plan stored_row)
set -euo pipefail
SELF="$(cd "$(dirname "$0")" && pwd -P)/$(basename "$0")"
cd "$(dirname "$0")"
usage() { sed -n '2,6p' "$SELF" | sed 's/^# \{0,1\}//'; }
case "${1:-}" in
  -h|--help) usage; exit 0 ;;
  ''|*[!0-9]*) [ -z "${1:-}" ] || { usage >&2; echo "fuzz/run.sh: SECONDS must be a whole number" >&2; exit 2; } ;;
esac
SECONDS_PER_TARGET="${1:-90}"
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(envelope dispatch params headers plan stored_row)
for target in "${TARGETS[@]}"; do
  seeds="seeds/$target"
  case "$target" in dispatch|plan) seeds=seeds/envelope ;; esac
  mkdir -p "corpus/$target"
  echo "== $target (${SECONDS_PER_TARGET}s)"
  cargo fuzz run -s none "$target" "corpus/$target" "$seeds" -- \
    -max_total_time="$SECONDS_PER_TARGET" -dict=jsonrpc.dict -print_final_stats=1
done
