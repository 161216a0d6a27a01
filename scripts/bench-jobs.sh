#!/usr/bin/env bash
# Explore job benchmarks on the real server (loopback, ephemeral ports, temp --data-dir/--jobs-dir):
#   1. full_boards 1x1..8x8 as one job on a fresh store, then again on the same server (warm): wall
#      time, server CPU (/proc utime+stime) and the job's own metadata of each; the Grundy table;
#   2. interactive calls next to a running job (examples/job-latency.rs): cheap Solve latency and one
#      cold board search without a job and while a 10x10 job runs; CancelOperation to done;
#   3. a full 10x10 board as a `solve` job, uninterrupted, and on another fresh store killed with
#      kill -9 at about 25/50/75% of the uninterrupted CPU, the server restarted on the same dirs
#      each time (the job resumes by itself): total wall, total CPU over all runs, its ratio to the
#      uninterrupted CPU, times_resumed, and whether both Grundy values agree.
# Usage: scripts/bench-jobs.sh (about 200 s of CPU per 10x10 job); PART3=0 scripts/bench-jobs.sh (parts 1, 2).
# Knobs: RUN_PARALLEL=1 (default) runs both 10x10 jobs at once on two servers, killing at fractions of
# CPU_ESTIMATE (s, default 200) instead of the measured CPU; TABLE_ENTRIES (the servers' --table-entries).
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/lib.sh
use_tools
cargo build --release --locked --bin nimber --example job-latency
bin=${CARGO_TARGET_DIR:-target}/release/nimber
[[ $bin == /* ]] || bin=$PWD/$bin
PART3=${PART3:-1} RUN_PARALLEL=${RUN_PARALLEL:-1} CPU_ESTIMATE=${CPU_ESTIMATE:-200}
extra=(${TABLE_ENTRIES:+--table-entries "$TABLE_ENTRIES"})
hz=$(getconf CLK_TCK)

work=$(mktemp -d)
touch "$work/pids" "$work/i.kills"
cleanup() {
    for pid in $(jobs -p); do kill "$pid" 2>/dev/null || true; done   # the part 2 runners first,
    for pid in $(cat "$work/pids"); do   # then the servers still alive (checked by name: no reused pid)
        [[ $(cat "/proc/$pid/comm" 2>/dev/null) == nimber ]] && kill -9 "$pid" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# start_server DIR: a server on DIR/data and DIR/jobs (reused on a restart); sets $server and $address.
start_server() {
    mkdir -p "$1"
    RUST_LOG=warn "$bin" serve --listen 127.0.0.1:0 --data-dir "$1/data" --jobs-dir "$1/jobs" "${extra[@]}" \
        >"$1/out" 2>>"$1/err" &
    server=$!
    echo "$server" >>"$work/pids"
    address=
    for _ in $(seq 600); do
        address=$(sed -n 's/^nimber listening on //p' "$1/out")
        [[ -n $address ]] && break
        kill -0 "$server" 2>/dev/null || break
        sleep 0.1
    done
    [[ $address == 127.0.0.1:* ]] || { echo "bench-jobs: no server on loopback in $1:" >&2; cat "$1/err" >&2; exit 1; }
}
stop_server() { kill -TERM "$server"; wait "$server" || true; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
now() { date +%s.%N; }
secs() { awk -v t="$1" -v hz="$hz" 'BEGIN { printf "%.2f", t / hz }'; }
minus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a - b }'; }
rpc() { grpcurl -plaintext -d "$2" "$address" "$1"; }
# op FIELD: reads an Operation as JSON, prints FIELD (done: exit status; resumed, grundy, meta, table).
cat >"$work/op.py" <<'EOF'
import json, sys
o, what = json.load(sys.stdin), sys.argv[1]
m, r = o.get("metadata", {}), o.get("response", {})
if what == "done": sys.exit(0 if o.get("done") else 1)
if "error" in o: sys.exit(f"bench-jobs: the job failed: {o['error']}")
if what == "resumed": print(m.get("timesResumed", 0))
elif what == "grundy": print(r["solve"].get("grundy", "none"))
elif what == "meta":
    print(f"job metadata: cpu_time {m.get('cpuTime', '0s')}, elapsed {m.get('elapsed', '0s')}, components searched "
          f"{m.get('componentsSearched', 0)}, cache hits {m.get('cacheHits', 0)}, times_resumed {m.get('timesResumed', 0)}")
elif what == "table":
    rows = r.get("rows", [])
    g = {(x["rows"], x["columns"]): x.get("grundy", "-") for x in rows}
    cols = sorted({c for _, c in g})
    print("grundy  rows\\columns " + " ".join(f"{c:>3}" for c in cols))
    for a in sorted({a for a, _ in g}):
        print(f"{a:>20} " + " ".join(f"{g.get((a, c), '.'):>3}" for c in cols))
    print(f"{len(rows)} rows, {sum(1 for x in rows if x.get('cached'))} from the cache")
EOF
op() { python3 "$work/op.py" "$1"; }
explore() { rpc nimber.v1.Solver/Explore "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["name"])'; }
# wait_done NAME: prints the operation as JSON once it is done.
wait_done() {
    local o
    while :; do
        o=$(rpc google.longrunning.Operations/WaitOperation "{\"name\": \"$1\", \"timeout\": \"60s\"}")
        op done <<<"$o" && { printf '%s\n' "$o"; return; }
    done
}

echo "== machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== 1. full_boards 1x1..8x8 as one Explore job"
start_server "$work/p1"
family='{"fullBoards": {"minRows": 1, "maxRows": 8, "minColumns": 1, "maxColumns": 8}}'
for run in cold warm; do
    t0=$(now); c0=$(ticks "$server")
    result=$(wait_done "$(explore "$family")")
    t1=$(now); c1=$(ticks "$server")
    echo "-- $run: wall $(minus "$t1" "$t0") s, server CPU $(secs $((c1 - c0))) s"
    op meta <<<"$result"
    if [[ $run == cold ]]; then op table <<<"$result"; else op table <<<"$result" | tail -n 1; fi
done
stop_server

echo "== 2. interactive calls next to a running job"
start_server "$work/p2"
"${CARGO_TARGET_DIR:-target}/release/examples/job-latency" "$address" 2000
stop_server
[[ $PART3 == 0 ]] && exit 0

board=$(printf '"0000000000",%.0s' $(seq 10))
solve="{\"solve\": {\"position\": {\"tetris\": {\"rows\": [${board%,}]}}}, \"requestId\": \"bench-10x10\"}"
# uninterrupted: writes "wall cpu_ticks grundy" to $work/u.result.
uninterrupted() {
    local t0 c0 result
    start_server "$work/u"; t0=$(now); c0=$(ticks "$server")
    result=$(wait_done "$(explore "$solve")")
    echo "$(minus "$(now)" "$t0") $(($(ticks "$server") - c0)) $(op grundy <<<"$result")" >"$work/u.result"
    op meta <<<"$result" >"$work/u.meta"
    stop_server
}
# interrupted BASE_TICKS: kill -9 at 25/50/75% of BASE_TICKS of CPU over all runs; writes
# "wall cpu_ticks grundy times_resumed" to $work/i.result and the kill points to $work/i.kills.
interrupted() {
    local t0 spent name result n=0
    start_server "$work/i"; t0=$(now); spent=$((-$(ticks "$server")))
    name=$(explore "$solve")
    for percent in 25 50 75; do
        while kill -0 "$server" && (( spent + $(ticks "$server") < $1 * percent / 100 )); do
            sleep 0.2
            if (( ++n % 25 == 0 )) && rpc google.longrunning.Operations/GetOperation "{\"name\": \"$name\"}" | op done; then
                break 2   # done before this kill (CPU_ESTIMATE too high)
            fi
        done
        kill -STOP "$server"   # frozen so its CPU reads exactly (fails here if the server died)
        spent=$((spent + $(ticks "$server")))
        kill -9 "$server"; wait "$server" || true
        echo "killed at $(secs "$spent") s of CPU, wall $(minus "$(now)" "$t0") s" >>"$work/i.kills"
        start_server "$work/i"
    done
    result=$(wait_done "$name")
    spent=$((spent + $(ticks "$server")))
    echo "$(minus "$(now)" "$t0") $spent $(op grundy <<<"$result") $(op resumed <<<"$result")" >"$work/i.result"
    op meta <<<"$result" >"$work/i.meta"
    stop_server
}

echo "== 3. one full 10x10 board as a solve job (RUN_PARALLEL=$RUN_PARALLEL)"
if [[ $RUN_PARALLEL == 1 ]]; then
    uninterrupted & u=$!
    interrupted $((CPU_ESTIMATE * hz)) & i=$!
    wait "$u"; wait "$i"
else
    uninterrupted
    interrupted "$(cut -d' ' -f2 "$work/u.result")"
fi
read -r u_wall u_ticks u_grundy <"$work/u.result"
read -r i_wall i_ticks i_grundy i_resumed <"$work/i.result"
echo "-- uninterrupted: wall $u_wall s, server CPU $(secs "$u_ticks") s, grundy $u_grundy"
sed 's/^/   /' "$work/u.meta"
echo "-- interrupted $(wc -l <"$work/i.kills") times by kill -9:"
awk -v u="$u_ticks" -v hz="$hz" '{ printf "   %s (%.0f%% of the uninterrupted CPU)\n", $0, 100 * $3 * hz / u }' "$work/i.kills"
echo "   total wall $i_wall s, total server CPU $(secs "$i_ticks") s over all runs" \
    "($(awk -v a="$i_ticks" -v b="$u_ticks" 'BEGIN { printf "%.2f", a / b }')x the uninterrupted), times_resumed $i_resumed, grundy $i_grundy"
sed 's/^/   /' "$work/i.meta"
if [[ $u_grundy == "$i_grundy" ]]; then echo "answers equal: grundy $u_grundy"; else echo "ANSWERS DIFFER: $u_grundy vs $i_grundy"; exit 1; fi
