#!/usr/bin/env bash
# Fleet benchmarks (docs/BENCHMARKS.md, "Fleet"): a real redis-server and two replicas sharing it.
#   1. latency of one board: computed, then a local hit (same replica), then a remote hit (the other
#      replica, through Redis), as the server reports it (stats.elapsedMicros), for full boards;
#   2. throughput on distinct boards with repeats (every board asked twice): two load generators
#      against one replica, then the same two against two replicas sharing Redis (one each).
#
# Usage: scripts/bench-fleet.sh        (REQUESTS=200 distinct boards per run)
# Knobs (environment): REQUESTS, CONCURRENCY, SIZES (board sizes for part 1, e.g. "7 8 9").
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
use_tools
install_redis
REQUESTS=${REQUESTS:-200}
CONCURRENCY=${CONCURRENCY:-4}
SIZES=${SIZES:-"7 8 9"}

cargo build --release --bins
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
