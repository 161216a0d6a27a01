#!/usr/bin/env bash
# Fleet benchmarks (docs/BENCHMARKS.md, "Fleet"): a real redis-server and two replicas sharing it.
#   1. latency of one board: computed, then a local hit (same replica), then a remote hit (the other
#      replica, through Redis), as the server reports it (stats.elapsedMicros), for full boards;
#   2. throughput on distinct boards with repeats (every board asked twice): two load generators
#      against one replica, then the same two against two replicas sharing Redis (one each);
#   3. Explore jobs across two replicas (examples/fleet-operations.rs): GetOperation latency on B for
#      an operation started on A against on A itself (LATENCY_CALLS calls each); then a job running on
#      A is killed with kill -9 and the time until B runs it again is measured, with the default lease
#      and with JOB_LEASE_MS, with the items A had finished and those recorded in Redis, which B skips.
#
# Usage: scripts/bench-fleet.sh        (REQUESTS=200 distinct boards per run)
# Knobs (environment): REQUESTS, CONCURRENCY, SIZES (board sizes for part 1, e.g. "7 8 9"),
# LATENCY_CALLS (500), JOB_LEASE_MS (1000); PART1=0, PART2=0, PART3=0 skip a part.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
use_tools
install_system_tools
REQUESTS=${REQUESTS:-200}
CONCURRENCY=${CONCURRENCY:-4}
SIZES=${SIZES:-"7 8 9"}
LATENCY_CALLS=${LATENCY_CALLS:-500}
JOB_LEASE_MS=${JOB_LEASE_MS:-1000}
PART1=${PART1:-1} PART2=${PART2:-1} PART3=${PART3:-1}

cargo build --release --bins --example fleet-operations
bin="${CARGO_TARGET_DIR:-target}/release"
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

# start_replica NAME [FLAGS...]: a server on a free port; sets $address.
start_replica() {
    local name=$1
    shift
    RUST_LOG=warn "$bin/nimber" serve --listen 127.0.0.1:0 --data-dir "$work/$name/data" \
        --jobs-dir "$work/$name/jobs" "$@" >"$work/$name.out" &
    pids+=($!)
    for _ in $(seq 100); do grep -q 'listening on' "$work/$name.out" 2>/dev/null && break; sleep 0.1; done
    address=$(sed -n 's/^nimber listening on //p' "$work/$name.out")
    [ -n "$address" ] || { echo "replica $name did not start"; exit 1; }
}

elapsed_micros() { # ADDRESS SIZE
    local rows
    rows=$(python3 -c "import json; print(json.dumps(['0' * $2] * $2))")
    grpcurl -plaintext -max-time 300 -d "{\"position\": {\"tetris\": {\"rows\": $rows}}}" "$1" nimber.v1.Solver/Solve |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["stats"].get("elapsedMicros", "0"))'
}

start_redis "$work/redis"
pids+=("$redis_pid")
if [[ $PART1 == 1 ]]; then
start_replica a --shared-cache "$redis_url"
a=$address
start_replica b --shared-cache "$redis_url"
b=$address
echo "## 1. one board: computed, local hit, remote hit (server-side µs)"
echo "| board | computed on A | again on A (local hit) | on B (remote hit) |"
echo "|---|---|---|---|"
for size in $SIZES; do
    echo "| ${size}×${size} | $(elapsed_micros "$a" "$size") | $(elapsed_micros "$a" "$size") | $(elapsed_micros "$b" "$size") |"
done
fi

# load ADDRESS NAME: the distinct cold boards of seed 7 ($REQUESTS of them); fails on any error.
load() {
    "$bin/nimber-load" --target "http://$1" --workload cold-boards --seed 7 --requests "$REQUESTS" \
        --concurrency "$CONCURRENCY" --json >"$work/load-$2.json"
}

# both_loads NAME ADDRESS1 ADDRESS2: the two generators at once; prints the calls/s of both together.
both_loads() {
    local started first second
    started=$(date +%s.%N)
    load "$2" "$1-1" & first=$!
    load "$3" "$1-2" & second=$!
    wait "$first" "$second"
    python3 -c "print(round(2 * $REQUESTS / ($(date +%s.%N) - $started), 1))"
}

if [[ $PART2 == 1 ]]; then
echo
echo "## 2. $REQUESTS distinct boards, each asked twice (two load generators), $CONCURRENCY in flight each"
redis-cli -u "$redis_url" flushall >/dev/null
start_replica one
one=$address
echo "one replica: $(both_loads one "$one" "$one") calls/s"
start_replica c --shared-cache "$redis_url"
c=$address
start_replica d --shared-cache "$redis_url"
d=$address
echo "two replicas sharing Redis: $(both_loads two "$c" "$d") calls/s"
fi

# progress ADDRESS NAME: the job's state, items done and times resumed, as "STATE ITEMS RESUMED".
progress() {
    grpcurl -plaintext -max-time 10 -d "{\"name\": \"$2\"}" "$1" google.longrunning.Operations/GetOperation |
        python3 -c 'import json, sys; m = json.load(sys.stdin)["metadata"]
print(m.get("state", "?"), m.get("itemsDone", "0"), m.get("timesResumed", 0))'
}

# wait_for_job ADDRESS NAME CONDITION: polls the job (at most 10 minutes) until CONDITION, a shell
# test of $state, $items and $resumed, holds.
wait_for_job() {
    local give_up_by=$((SECONDS + 600))
    until read -r state items resumed < <(progress "$1" "$2") && eval "$3"; do
        ((SECONDS < give_up_by)) || { echo "bench-fleet: job $2 never reached: $3"; exit 1; }
        sleep 0.05
    done
}

# takeover DIR LABEL [FLAGS...]: replica A on a fresh Redis database runs a job of the boards 10×1 …
# 10×10; once 5 items are done replica B starts, A is killed with kill -9, and a table row says the
# seconds until B runs the job, the items A had finished (live, as A reported them just before the
# kill) and those recorded in Redis after it, which B does not compute again.
takeover() {
    local dir=$1 label=$2 name at_kill recorded killed state items resumed
    shift 2
    redis-cli -u "$redis_url" flushall >/dev/null
    start_replica "$dir-a" --shared-cache "$redis_url" "$@"
    local on_a=$address pid_a=${pids[-1]}
    name=$(grpcurl -plaintext -d '{"fullBoards": {"minRows": 10, "maxRows": 10, "minColumns": 1, "maxColumns": 10}}' \
        "$on_a" nimber.v1.Solver/Explore | python3 -c 'import json, sys; print(json.load(sys.stdin)["name"])')
    wait_for_job "$on_a" "$name" '[[ $items -ge 5 ]]'
    start_replica "$dir-b" --shared-cache "$redis_url" "$@"
    local on_b=$address
    read -r state at_kill resumed < <(progress "$on_a" "$name")
    kill -9 "$pid_a"
    killed=$(date +%s.%N)
    wait "$pid_a" 2>/dev/null || true
    recorded=$(printf 'nimber:v1:\0jobs/items/%s' "$name" | redis-cli -u "$redis_url" -x HLEN)
    wait_for_job "$on_b" "$name" '[[ $resumed == 1 && $state == EXPLORE_STATE_RUNNING ]]'
    echo "| $label | $(python3 -c "print(round($(date +%s.%N) - $killed, 2))") s | $at_kill | $recorded |"
    grpcurl -plaintext -d "{\"name\": \"$name\"}" "$on_b" google.longrunning.Operations/CancelOperation >/dev/null
}

if [[ $PART3 == 1 ]]; then
echo
echo "## 3. Explore jobs across two replicas"
redis-cli -u "$redis_url" flushall >/dev/null
start_replica e --shared-cache "$redis_url"
e=$address
start_replica f --shared-cache "$redis_url"
"$bin/examples/fleet-operations" "$e" "$address" "$LATENCY_CALLS"
echo
echo "| lease | kill -9 of A to B running the job | items A had finished | items recorded in Redis (B skips them) |"
echo "|---|---|---|---|"
takeover default "default (--shared-cache-lease-ms 10000: a 10 s job lease)"
takeover short "--shared-cache-lease-ms $JOB_LEASE_MS (a job's lease is at least 3 s)" --shared-cache-lease-ms "$JOB_LEASE_MS"
fi
