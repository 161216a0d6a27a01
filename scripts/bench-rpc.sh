#!/usr/bin/env bash
# RPC throughput benchmarks: builds release, starts the real server on a loopback ephemeral port with
# a fresh store, drives it with target/release/nimber-load, and checks three goals:
#   1. Solve (closed-form, 64 in flight) reaches >= 0.8x the Health/Check rate (the empty handler),
#      and so does Solve of warm boards (2×2-placement boards whose values the cache holds); Solve of
#      a heap position under a proven period (Kayles 0.77, heaps 10^18, 3 and 7) reaches >= 0.9x;
#   2. one SolveStream answers >= 3x the positions/s of a sequential unary client (1 in flight);
#   3. a mixed run (80% closed-form, 15% cached boards, 5% cold boards, 64 in flight) has 0 errors.
#
# Usage: scripts/bench-rpc.sh            (10 s per run, 60 s mixed run; about 2 minutes)
#        QUICK=1 scripts/bench-rpc.sh    (3 s per run, 5 s mixed run)
# Knobs (environment): DURATION, MIXED_DURATION, WARMUP, CONCURRENCY, CONNECTIONS, THREADS,
# STRICT=1 (exit 1 when a goal is missed; calls failing always exit 1).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${QUICK:-0}" == 1 ]]; then
    DURATION=${DURATION:-3s}
    MIXED_DURATION=${MIXED_DURATION:-5s}
else
    DURATION=${DURATION:-10s}
    MIXED_DURATION=${MIXED_DURATION:-60s}
fi
WARMUP=${WARMUP:-1s}
CONCURRENCY=${CONCURRENCY:-64}
CONNECTIONS=${CONNECTIONS:-2}
THREADS=${THREADS:-1}

cargo build --release --bins
bin="${CARGO_TARGET_DIR:-target}/release"

data=$(mktemp -d)
out="$data.out"
mkdir -p "$out"
server_pid=
stop_server() {
    if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid"
        wait "$server_pid" || true
    fi
    server_pid=
}
cleanup() {
    stop_server
    rm -rf "$data" "$out"
}
trap cleanup EXIT

RUST_LOG=warn "$bin/nimber" serve --listen 127.0.0.1:0 --data-dir "$data/store" >"$out/server.stdout" 2>"$out/server.stderr" &
server_pid=$!
address=
for _ in $(seq 1 300); do
    line=$(head -n 1 "$out/server.stdout" 2>/dev/null || true)
    if [[ "$line" == "nimber listening on "* ]]; then
        address=${line#nimber listening on }
        break
    fi
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
done
if [[ -z "$address" ]]; then
    echo "bench-rpc: the server did not start:" >&2
    cat "$out/server.stderr" >&2
    exit 1
fi
case "$address" in
    127.0.0.1:*) ;;
    *) echo "bench-rpc: refusing a non-loopback address $address" >&2; exit 1 ;;
esac
target="http://$address"

echo "== machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(uname -sr), $(rustc --version)"
echo "== server: $target (pid $server_pid); client: $bin/nimber-load --connections $CONNECTIONS --threads $THREADS"

# load NAME ARGS...: one nimber-load run, its table kept in $out/NAME.
load() {
    local name=$1
    shift
    echo
    echo "-- $name: nimber-load $*"
    "$bin/nimber-load" --target "$target" --warmup "$WARMUP" --connections "$CONNECTIONS" --threads "$THREADS" "$@" \
        | tee "$out/$name"
}
field() { awk -v key="$2" '$1 == key { print $2 }' "$out/$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
at_least() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }

verdict() { if at_least "$1" "$2"; then echo "met"; else echo "MISSED"; fi; }

load health --rpc health --concurrency "$CONCURRENCY" --duration "$DURATION"
load solve --rpc solve --workload closed-form --concurrency "$CONCURRENCY" --duration "$DURATION"
load warm --rpc solve --workload cached-boards --concurrency "$CONCURRENCY" --duration "$DURATION"
load kayles --rpc solve --workload kayles --concurrency "$CONCURRENCY" --duration "$DURATION"
load sequential --rpc solve --workload closed-form --concurrency 1 --duration "$DURATION"
load stream --rpc stream --workload closed-form --concurrency "$CONCURRENCY" --duration "$DURATION"
load mixed --rpc solve --workload mixed --concurrency "$CONCURRENCY" --duration "$MIXED_DURATION" --max-errors 0

stop_server

solve_vs_health=$(ratio "$(field solve rps)" "$(field health rps)")
warm_vs_health=$(ratio "$(field warm rps)" "$(field health rps)")
kayles_vs_health=$(ratio "$(field kayles rps)" "$(field health rps)")
stream_vs_sequential=$(ratio "$(field stream rps)" "$(field sequential rps)")
echo
echo "== summary"
printf '%-44s %12s %10s %10s %10s\n' "run" "calls/s" "p50 us" "p99 us" "p99.9 us"
for run in health solve warm kayles sequential stream mixed; do
    printf '%-44s %12s %10s %10s %10s\n' "$run ($(field "$run" rpc), $(field "$run" concurrency) in flight)" \
        "$(field "$run" rps)" "$(field "$run" p50_us)" "$(field "$run" p99_us)" "$(field "$run" p999_us)"
done
echo "goal 1: Solve / Health at $CONCURRENCY in flight = $solve_vs_health (>= 0.8: $(verdict "$solve_vs_health" 0.8))"
echo "goal 1b: warm-board Solve / Health at $CONCURRENCY in flight = $warm_vs_health (>= 0.8: $(verdict "$warm_vs_health" 0.8))"
echo "goal 1c: Kayles [10^18, 3, 7] Solve / Health at $CONCURRENCY in flight = $kayles_vs_health (>= 0.9: $(verdict "$kayles_vs_health" 0.9))"
echo "goal 2: SolveStream / sequential unary Solve = $stream_vs_sequential (>= 3: $(verdict "$stream_vs_sequential" 3))"
echo "goal 3: mixed $MIXED_DURATION run errors = $(field mixed errors) (0: met)"
if [[ "${STRICT:-0}" == 1 ]] && ! { at_least "$solve_vs_health" 0.8 && at_least "$warm_vs_health" 0.8 && at_least "$kayles_vs_health" 0.9 && at_least "$stream_vs_sequential" 3; }; then
    exit 1
fi
