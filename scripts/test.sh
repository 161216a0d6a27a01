#!/usr/bin/env bash
# The whole test suite: every unit, integration and exhaustive check (optimized: the exhaustive
# brute-force comparisons need it), then the README's own commands run verbatim, the grpcurl smoke
# test and the kill -9 crash test against the real binary. Tools the tests need are installed by the
# scripts themselves (scripts/lib.sh: grpcurl in the project-local venv .venv).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release --locked
scripts/readme-commands.sh
scripts/grpcurl-smoke.sh
scripts/jobs-smoke.sh
scripts/crash-test.sh
