#!/usr/bin/env bash
# The whole test suite: every unit, integration and exhaustive check (optimized: the exhaustive
# brute-force comparisons need it), then the grpcurl smoke test and the kill -9 crash test
# against the real binary.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release --locked
scripts/grpcurl-smoke.sh
scripts/crash-test.sh
