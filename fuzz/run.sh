#!/usr/bin/env bash
# Runs every fuzz target for SECONDS (default 90) on the stable toolchain without sanitizers
# (`-s none`), seeding from seeds/ and keeping the grown corpus in corpus/<target>/.
# Crashes land in artifacts/<target>/. See docs/fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")"
SECONDS_PER_TARGET="${1:-90}"
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(envelope dispatch params headers)
for target in "${TARGETS[@]}"; do
  seeds="seeds/$target"
  [ "$target" = dispatch ] && seeds=seeds/envelope
  mkdir -p "corpus/$target"
  echo "== $target (${SECONDS_PER_TARGET}s)"
  cargo fuzz run -s none "$target" "corpus/$target" "$seeds" -- \
    -max_total_time="$SECONDS_PER_TARGET" -dict=jsonrpc.dict -print_final_stats=1
done
