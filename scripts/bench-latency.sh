#!/usr/bin/env bash
# Latency of two builds side by side, and where the time goes: starts one server from each build on
# loopback (fresh stores, RUST_LOG=warn, --metrics-listen), then runs the same loads against each in
# turn, A B A B ..., for ROUNDS rounds, so that both see the same machine. Per run it records:
#   - the client's p50 / p99 / p99.9 (nimber-load, 64 calls in flight over 2 connections);
#   - the server's own time for the same calls (the call layer's histogram, from the call reaching
#     the service to its answer's end): the bucket holding its p99 and p99.9;
#   - how long the server's threads and the client waited runnable for a CPU (/proc/PID/schedstat)
#     against how long they ran.
# It prints every run, then the medians over rounds (and the range of the p99.9).
#
# Usage: scripts/bench-latency.sh DIR_A DIR_B [ROUNDS] [DURATION]
#   DIR_A, DIR_B: folders holding a `nimber` binary each (e.g. target/release and a baseline built
#   with `cargo build --release --bins --target-dir /tmp/base` from another commit); the client is
#   DIR_A's nimber-load. ROUNDS: 6. DURATION: 3s per run (after 1 s of unmeasured warm-up).
#   RUNTIME_THREADS_A / RUNTIME_THREADS_B (environment): TOKIO_WORKER_THREADS of each server.
set -euo pipefail
cd "$(dirname "$0")/.."
a=$1
b=$2
rounds=${3:-6}
duration=${4:-3s}
work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# start NAME DIR THREADS: a server from DIR/nimber; its pid in $work/NAME.pid, its URLs in NAME.url/.metrics.
start() {
    local name=$1 dir=$2 threads=$3
    mkdir -p "$work/$name"
    env RUST_LOG=warn ${threads:+TOKIO_WORKER_THREADS=$threads} "$dir/nimber" serve --listen 127.0.0.1:0 \
        --metrics-listen 127.0.0.1:0 --data-dir "$work/$name/store" --jobs-dir "$work/$name/jobs" \
        >"$work/$name.stdout" 2>"$work/$name.stderr" &
    pids+=($!)
    echo $! >"$work/$name.pid"
    for _ in $(seq 1 300); do
        if [[ $(wc -l <"$work/$name.stdout") -ge 2 ]]; then
            sed -n 's/^nimber listening on /http:\/\//p' "$work/$name.stdout" >"$work/$name.url"
            sed -n 's/^nimber metrics on //p' "$work/$name.stdout" >"$work/$name.metrics"
            return
        fi
        sleep 0.1
    done
    echo "bench-latency: the server from $dir did not start:" >&2
    cat "$work/$name.stderr" >&2
    exit 1
}
start A "$a" "${RUNTIME_THREADS_A:-}"
start B "$b" "${RUNTIME_THREADS_B:-}"

# schedstat PID: "run_ns wait_ns" summed over the process's threads.
schedstat() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ run += $1; wait += $2 } END { print run, wait }'; }
# histogram NAME RPC: the call layer's cumulative bucket counts of RPC, "le=count ...".
histogram() {
    curl -s "$(cat "$work/$1.metrics")" | awk -v rpc="$2" -F'[{}]' \
        '$1 == "nimber_request_duration_seconds_bucket" && index($2, "rpc=\"" rpc "\"") { split($2, l, "le=\""); sub(/".*/, "", l[2]); printf "%s=%d ", l[2], $3 }'
}

echo "== $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); A=$a B=$b; $rounds rounds of $duration"
loads=("health|--rpc health|grpc.health.v1.Health/Check"
    "closed-form|--rpc solve --workload closed-form|Solve"
    "warm-boards|--rpc solve --workload cached-boards|Solve")
for round in $(seq 1 "$rounds"); do
    for load in "${loads[@]}"; do
        IFS='|' read -r name args rpc <<<"$load"
        for server in A B; do
            pid=$(cat "$work/$server.pid")
            before=$(histogram "$server" "$rpc")
            # shellcheck disable=SC2086 # $args is a list of words
            "$a/nimber-load" --target "$(cat "$work/$server.url")" $args --concurrency 64 --connections 2 \
                --duration "$duration" --warmup 1s --json >"$work/load.json" &
            client=$!
            sleep 1.2
            server_start=$(schedstat "$pid")
            client_start=$(schedstat "$client")
            sleep "$(awk -v d="${duration%s}" 'BEGIN { print (d > 0.6 ? d - 0.4 : d / 2) }')"
            server_end=$(schedstat "$pid")
            client_end=$(schedstat "$client")
            wait "$client"
            after=$(histogram "$server" "$rpc")
            python3 - "$round" "$server" "$name" "$(cat "$work/load.json")" "$before" "$after" \
                "$server_start" "$server_end" "$client_start" "$client_end" <<'PY'
import json, sys
round_, server, name, load, before, after, s0, s1, c0, c1 = sys.argv[1:]
d = json.loads(load)
def buckets(text):
    return {k: float(v) for k, v in (item.split("=") for item in text.split())}
b0, b1 = buckets(before), buckets(after)
counts = sorted(((float("inf") if k == "+Inf" else float(k)), b1[k] - b0.get(k, 0)) for k in b1)
total = counts[-1][1] if counts else 0
def bound(q):
    for le, count in counts:
        if total and count >= q * total:
            return "<=%g ms" % (le * 1000)
    return "?"
def waits(start, end):
    (r0, w0), (r1, w1) = map(float, start.split()), map(float, end.split())
    return "ran %.2fs waited %.2fs" % ((r1 - r0) / 1e9, (w1 - w0) / 1e9)
print(f"{round_} {server} {name:12s} calls/s={d['rps']:.0f} p50={d['p50_us']:.0f} p99={d['p99_us']:.0f} "
      f"p999={d['p999_us']:.0f} us | server p99 {bound(0.99)} p999 {bound(0.999)} | "
      f"server {waits(s0, s1)} | client {waits(c0, c1)} | errors={d['errors']}")
PY
        done
    done
done | tee "$work/runs"
echo "== load average $(cut -d' ' -f1-3 /proc/loadavg); medians over $rounds rounds (p99.9 range):"
python3 - "$work/runs" <<'PY'
import re, statistics, sys, collections
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    parts = line.split()
    values = dict((k, float(v)) for k, v in re.findall(r"(calls/s|p50|p99|p999)=([\d.]+)", line))
    runs[(parts[2], parts[1])].append(values)
for (name, server), values in sorted(runs.items()):
    median = lambda key: statistics.median(v[key] for v in values)
    p999 = [v["p999"] for v in values]
    print(f"{name:12s} {server} calls/s {median('calls/s'):7.0f}  p50 {median('p50'):6.0f}  p99 {median('p99'):6.0f}  "
          f"p99.9 {median('p999'):6.0f} us  (p99.9 {min(p999):.0f}-{max(p999):.0f})")
PY
