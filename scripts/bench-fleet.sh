#!/usr/bin/env bash
# Fleet benchmarks (docs/BENCHMARKS.md, "Fleet"): a real redis-server and two replicas sharing it.
#   1. latency of one board: computed, then a local hit (same replica), then a remote hit (the other
#      replica, through Redis), as the server reports it (stats.elapsedMicros), for full boards;
#   2. throughput on distinct boards with repeats (every board asked twice): two load generators
#      against one replica, then the same two against two replicas sharing Redis (one each);
#   3. Explore jobs across two replicas (examples/fleet-operations.rs): GetOperation latency on B for
#      an operation started on A against on A itself (LATENCY_CALLS calls each); then a job running on
#      A is killed with kill -9 and the time until B runs it again is measured, with the default lease
#      and with JOB_LEASE_MS, with the items A had finished and those recorded in Redis, which B skips;
#   4. one job on many replicas: a family job (sub-boards of FAMILY_BOARD, one cell blocked) on one
#      replica, then on three sharing Redis, and the Solve job of a sum of boards (SPLIT_SUM) on one
#      replica without a split, then split across three (split_across_replicas: each board a part);
#      each replica on one search thread. Rows: wall time, CPU of every replica, parts each replica
#      computed, lease seconds per part, and the wall time projected on N machines from the measured
#      part times. A single board split across replicas (SPLIT_BOARD) is refused at once
#      (INVALID_ARGUMENT), which the part checks.
#
# Usage: scripts/bench-fleet.sh        (REQUESTS=200 distinct boards per run)
# Knobs (environment): REQUESTS, CONCURRENCY, SIZES (board sizes for part 1, e.g. "7 8 9"),
# LATENCY_CALLS (500), JOB_LEASE_MS (1000), FAMILY_BOARD (7x11), SPLIT_SUM ("8x11 9x10 8x12 9x11"),
# SPLIT_BOARD (8x10);
# PART1=0, PART2=0, PART3=0, PART4=0 skip a part.
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
FAMILY_BOARD=${FAMILY_BOARD:-7x11}
SPLIT_BOARD=${SPLIT_BOARD:-8x10}
SPLIT_SUM=${SPLIT_SUM:-"8x11 9x10 8x12 9x11"}
PART1=${PART1:-1} PART2=${PART2:-1} PART3=${PART3:-1} PART4=${PART4:-1}

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

# cpu_seconds PID...: the CPU time (user and system) the processes used so far, in seconds.
cpu_seconds() {
    python3 -c '
import os, sys
# After the command name: field 3 (state) first, so utime (field 14) and stime (15) are at 11 and 12.
fields = [open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split() for pid in sys.argv[1:]]
print(sum(int(f[11]) + int(f[12]) for f in fields) / os.sysconf("SC_CLK_TCK"))' "$@"
}

# divided LABEL COUNT JOB: COUNT replicas on a fresh Redis (one search thread each, their parts
# logged), JOB (Explore's JSON) run on the first; prints a table row and saves the part times in
# $work/parts-LABEL.
divided() {
    local label=$1 count=$2 job=$3 name started cpu_before cpu_after wall i
    local addresses=() metrics=() replica_pids=()
    redis-cli -u "$redis_url" flushall >/dev/null
    for i in $(seq "$count"); do
        local dir="$work/div-$label-$i"
        NIMBER_SEARCH_THREADS=1 RUST_LOG=warn,nimber::jobs::runner::parts=debug "$bin/nimber" serve \
            --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --data-dir "$dir/data" --jobs-dir "$dir/jobs" \
            --shared-cache "$redis_url" >"$dir.out" 2>"$dir.log" &
        pids+=($!)
        replica_pids+=($!)
        for _ in $(seq 100); do grep -q 'metrics on' "$dir.out" 2>/dev/null && break; sleep 0.1; done
        addresses+=("$(sed -n 's/^nimber listening on //p' "$dir.out")")
        metrics+=("$(sed -n 's/^nimber metrics on //p' "$dir.out")")
    done
    cpu_before=$(cpu_seconds "${replica_pids[@]}")
    started=$(date +%s.%N)
    name=$(grpcurl -plaintext -d "$job" "${addresses[0]}" nimber.v1.Solver/Explore |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["name"])')
    grpcurl -plaintext -max-time 3600 -d "{\"name\": \"$name\", \"timeout\": \"3600s\"}" "${addresses[0]}" \
        google.longrunning.Operations/WaitOperation >"$work/div-$label.result"
    wall=$(python3 -c "print(round($(date +%s.%N) - $started, 2))")
    cpu_after=$(cpu_seconds "${replica_pids[@]}")
    local parts="" lease=0 computed=0
    for i in $(seq "$count"); do
        local scraped own other
        scraped=$(python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())' \
            "${metrics[$((i - 1))]}")
        own=$(sed -n 's/^nimber_job_parts_total{job="own"} //p' <<<"$scraped")
        other=$(sed -n 's/^nimber_job_parts_total{job="other_replica"} //p' <<<"$scraped")
        lease=$(python3 -c "print($lease + $(sed -n 's/^nimber_job_part_lease_seconds_total //p' <<<"$scraped"))")
        computed=$((computed + own + other))
        parts+="${parts:+ / }$((own + other))"
    done
    cat "$work"/div-"$label"-*.log | sed -n 's/.*computed a part of a job.*seconds=\([0-9.e-]*\).*/\1/p' >"$work/parts-$label"
    local per_part
    per_part=$(python3 -c "print(round(1000 * $lease / max($computed, 1), 2))")
    echo "| $label | $count | $wall s | $(python3 -c "print(round($cpu_after - $cpu_before, 2))") s | $parts | $per_part ms |"
    kill "${replica_pids[@]}"
    wait "${replica_pids[@]}" 2>/dev/null || true
}

# projection LABEL ROOT_SECONDS: the wall time on 1, 2, 4, 8, 16 and 64 machines, the parts measured
# in run LABEL handed out longest first to the machine free first, plus ROOT_SECONDS after them.
projection() {
    python3 - "$work/parts-$1" "$2" <<'PY'
import heapq, sys
parts = sorted((float(line) for line in open(sys.argv[1]) if line.strip()), reverse=True)
root = float(sys.argv[2])
cells = []
for machines in (1, 2, 4, 8, 16, 64):
    loads = [0.0] * machines
    for part in parts:
        heapq.heapreplace(loads, loads[0] + part)
    cells.append(f"{max(loads) + root:.2f} s")
print(f"| {len(parts)} parts, {sum(parts):.2f} s, longest {parts[0]:.2f} s | " + " | ".join(cells) + " |")
PY
}

if [[ $PART4 == 1 ]]; then
echo
echo "## 4. one job on many replicas (one search thread each; this machine has $(nproc) cores)"
IFS=x read -r family_rows family_columns <<<"$FAMILY_BOARD"
IFS=x read -r split_rows split_columns <<<"$SPLIT_BOARD"
rows_json() { python3 -c "import json; print(json.dumps(['0' * $2] * $1))"; }
family_job="{\"subBoards\": {\"board\": {\"rows\": $(rows_json "$family_rows" "$family_columns")}, \"maxBlocked\": 1}}"
components=""
for size in $SPLIT_SUM; do
    IFS=x read -r rows columns <<<"$size"
    components+="${components:+, }{\"tetris\": {\"rows\": $(rows_json "$rows" "$columns")}}"
done
solve_job="{\"solve\": {\"position\": {\"sum\": {\"components\": [$components]}}}"
echo "| run | replicas | wall | CPU of all replicas | parts by replica | lease time per part |"
echo "|---|---|---|---|---|---|"
divided "family-1" 1 "$family_job"
divided "family-3" 3 "$family_job"
divided "sum-1" 1 "$solve_job}"
divided "sum-split-3" 3 "$solve_job, \"splitAcrossReplicas\": true}"
start_replica refusal --shared-cache "$redis_url"
one_board="{\"solve\": {\"position\": {\"tetris\": {\"rows\": $(rows_json "$split_rows" "$split_columns")}}}, \"splitAcrossReplicas\": true}"
echo
echo "A ${split_rows}×${split_columns} board split across replicas: $(grpcurl -plaintext -d "$one_board" "$address" \
    nimber.v1.Solver/Explore 2>&1 | sed -n 's/^ *Code: //p') (refused at once)"
echo
echo "Projected wall time on N machines (the part times of the run named, longest first to the machine free first):"
echo
echo "| run | parts | 1 | 2 | 4 | 8 | 16 | 64 |"
echo "|---|---|---|---|---|---|---|---|"
echo "| family-1 $(projection family-1 0)"
echo "| sum-split-3 $(projection sum-split-3 0)"
fi
