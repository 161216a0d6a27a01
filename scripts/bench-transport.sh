#!/usr/bin/env bash
# Transport benchmarks: starts the real server (loopback, ephemeral ports, fresh store, metrics on),
# then measures
#   1. /metrics scrape time (200 sequential scrapes: p50, p99, max), on stores of 10^3 and 10^6
#      entries (filled by examples/fill-store.rs; the counts are kept, never scanned for);
#   2. Health/Check latency (nimber-load, 64 in flight) alone, then with 4 scrapers looping;
#   3. the server's RSS before and after one connection tries to open 30 000 idle SolveStreams
#      (the server allows --max-concurrent-streams of them; the rest wait in the client);
#   4. 2 000 idle connections against --max-connections 256: how many the server holds, its CPU
#      while the rest wait, and whether a new client is served.
# Usage: scripts/bench-transport.sh    (about a minute)
set -euo pipefail
cd "$(dirname "$0")/.."
ulimit -n 65536 2>/dev/null || true

cargo build --release --bins --example idle-load --example fill-store
bin="${CARGO_TARGET_DIR:-target}/release"
idle="$bin/examples/idle-load"
work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# Starts a server with extra flags (on the store $store_dir when set); sets $server, $address and $metrics.
start_server() {
    "$bin/nimber" serve --listen 127.0.0.1:0 --data-dir "${store_dir:-$work/store-$RANDOM}" \
        --jobs-dir "$work/jobs-$RANDOM" --metrics-listen 127.0.0.1:0 "$@" \
        > "$work/server.out" 2> "$work/server.err" &
    server=$!
    pids+=("$server")
    for _ in $(seq 100); do
        [[ $(wc -l < "$work/server.out") -ge 2 ]] && break
        sleep 0.1
    done
    address=$(sed -n 's/^nimber listening on //p' "$work/server.out")
    metrics=$(sed -n 's/^nimber metrics on //p' "$work/server.out")
}
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
quantiles() { sort -n | awk '{v[NR]=$1} END {printf "p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", v[int(NR*0.5)]*1000, v[int(NR*0.99)]*1000, v[NR]*1000}'; }

for entries in 1000 1000000; do
    store_dir="$work/filled-$entries"
    "$bin/examples/fill-store" "$store_dir" "$entries" > /dev/null
    start_server
    echo "== 1. /metrics scrape time (200 sequential scrapes), store of $entries entries"
    for _ in $(seq 200); do curl -s -o /dev/null -w '%{time_total}\n' "$metrics"; done | quantiles
    echo "nimber_cache_entries $(curl -s "$metrics" | sed -n 's/^nimber_cache_entries //p'), on disk $(du -sh "$store_dir" | cut -f1)"
    kill -TERM "$server"; wait "$server" || true
done
store_dir=""

start_server
echo "== 2. Health/Check, 64 in flight, 5 s: alone"
"$bin/nimber-load" --target "http://$address" --rpc health --duration 5s --warmup 1s
echo "== 2. Health/Check, 64 in flight, 5 s: with 4 scrapers looping"
scrapers=()
for _ in 1 2 3 4; do
    (while :; do curl -s -o /dev/null "$metrics"; done) &
    scrapers+=("$!")
    pids+=("$!")
done
"$bin/nimber-load" --target "http://$address" --rpc health --duration 5s --warmup 1s
kill "${scrapers[@]}"
echo "scrapes answered: $(curl -s "$metrics" | grep -c '^nimber_' ) metric lines in the last one"

echo "== 3. RSS with idle streams on one connection"
before=$(rss_kib "$server")
mkfifo "$work/hold"
"$idle" streams "$address" 30000 < "$work/hold" > "$work/streams.out" &
pids+=("$!")
exec 3> "$work/hold"
for _ in $(seq 300); do [[ -s "$work/streams.out" ]] && break; sleep 0.1; done
echo "streams the server let open: $(cat "$work/streams.out") of 30000 tried"
echo "server RSS: before $before KiB, with the streams open $(rss_kib "$server") KiB"
exec 3>&-
kill -TERM "$server"; wait "$server" || true

echo "== 4. 2000 idle connections at --max-connections 256"
start_server --max-connections 256
mkfifo "$work/hold2"
"$idle" connections "$address" 2000 < "$work/hold2" > "$work/connections.out" &
pids+=("$!")
exec 4> "$work/hold2"
for _ in $(seq 600); do [[ -s "$work/connections.out" ]] && break; sleep 0.1; done
echo "connections opened by the client: $(cat "$work/connections.out") (the server holds $(curl -s "$metrics" | sed -n 's/^nimber_connections_open{listener="grpc"} //p'))"
ticks_before=$(cpu_ticks "$server")
sleep 5
echo "server CPU over 5 s while the rest wait: $(( $(cpu_ticks "$server") - ticks_before )) ticks ($(getconf CLK_TCK) a second)"
if "$bin/nimber-load" --target "http://$address" --rpc health --requests 1 --concurrency 1 --connections 1 --timeout 2s --max-time 3s > /dev/null 2>&1; then
    echo "a new client was served at the cap"
else
    echo "a new client was not served within 2 s at the cap (it waits in the backlog)"
fi
exec 4>&-
