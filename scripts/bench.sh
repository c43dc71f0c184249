#!/usr/bin/env bash
# The on-demand benchmark (docs/benchmarks.md); not part of scripts/test.sh and
# with no timed assertion. Builds the fixture and the harness in release, runs the loopback
# rows (tasks-bench run, extra arguments are passed to it, e.g. --rows get,create --rounds 1),
# then the tasks-core criterion micro-benchmarks (skip them with BENCH_MICRO=0). Also builds
# the peers (bench/peers: rmcp and tower-mcp, outside the workspace) and runs rows 2 and 3 on
# them in the same rounds (skip them with BENCH_PEERS=0).
set -euo pipefail
cd "$(dirname "$0")/.."
for arg in "$@"; do
    case "$arg" in
        -h|--help) exec cargo run --release -q -p tasks-bench -- run --help ;;
    esac
done
cargo build --release -p tasks-fixture -p tasks-bench
peers=()
if [ "${BENCH_PEERS:-1}" != 0 ]; then
    cargo build --release --manifest-path bench/peers/Cargo.toml --target-dir bench/peers/target
    peers=(--peers "$PWD/bench/peers/target/release")
fi
cargo run --release -q -p tasks-bench -- run ${peers[@]+"${peers[@]}"} "$@"
if [ "${BENCH_MICRO:-1}" != 0 ]; then
    cargo bench -p tasks-core
fi
