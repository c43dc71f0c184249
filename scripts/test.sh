#!/usr/bin/env bash
# Runs every test: the Rust workspace tests, then the official MCP conformance runner against
# the fixture (conformance/run.sh installs Node 22 and the pinned runner from the npm registry).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --locked
bash conformance/run.sh
