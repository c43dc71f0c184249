#!/usr/bin/env bash
# The on-demand benchmark (docs/benchmarks.md); not part of scripts/test.sh and
# with no timed assertion. Builds the fixture and the harness in release, runs the loopback
# rows (tasks-bench run, extra arguments are passed to it, e.g. --rows get,create --rounds 1),
# then the tasks-core criterion micro-benchmarks (skip them with BENCH_MICRO=0).
set -euo pipefail
cd "$(dirname "$0")/.."
for arg in "$@"; do
    case "$arg" in
        -h|--help) exec cargo run --release -q -p tasks-bench -- run --help ;;
    esac
done
cargo build --release -p tasks-fixture -p tasks-bench
cargo run --release -q -p tasks-bench -- run "$@"
if [ "${BENCH_MICRO:-1}" != 0 ]; then
    cargo bench -p tasks-core
fi
