#!/usr/bin/env bash
# "Nothing got slower": this checkout against an earlier commit, side by side in one run, on the
# figures every change must keep (the heap sequences, the hot path of Solve, and with JUDGE=1 the
# full 10×10 board through `judge`). The earlier commit is built into .bench/against/REV (a git
# worktree with its own target directory); both are run in turns, round after round, and the table
# gives each one's median and the ratio this/earlier (for CPU and memory below 1 is better, for
# calls a second above 1).
#
#   - heap sequences: `nimber explore --jobs-dir NEW heap-sequence --rules CODE --up-to N-1` (one
#     thread), CPU (user + sys) and peak RSS from /usr/bin/time, for 0.16 to 2^20, 0.106 to 2^22 and
#     0.376 to 2^21 (scripts/bench-heaps.sh's cases);
#   - the hot path: a server of each build started on a loopback port with a fresh store, driven by
#     this checkout's nimber-load at 64 calls in flight: Solve of closed forms, of warm boards (the
#     cache holds them) and of Kayles under its proven period, calls per second; SolveStream of
#     closed forms and of warm boards, positions per second;
#   - Node Kayles on the 3×16 grid given as a graph (48 vertices), one Solve on the fresh server
#     (cold), its time as the server reports it (stats.elapsedMicros);
#   - with JUDGE=1: `nimber judge tetris` on the full 10×10 board, each build with its default flags
#     (so the default search threads of each), CPU and peak RSS (about 70 s a run).
#
# Usage: scripts/bench-against.sh REV            (ROUNDS=3, DURATION=5s)
#        JUDGE=1 ROUNDS=2 scripts/bench-against.sh 9373625
# Knobs: ROUNDS, DURATION (of a load run), CASES ("code:heaps ...", empty for none), JUDGE, CPU (the core the heap runs
# are pinned to, 0).
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:?"usage: scripts/bench-against.sh REV"}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5s}
CASES=${CASES-"0.16:1048576 0.106:4194304 0.376:2097152"}
JUDGE=${JUDGE:-0}
CPU=${CPU:-0}
source scripts/lib.sh
timed_runs
use_tools

earlier=.bench/against/$rev
if [[ ! -x "$earlier/target/release/nimber" ]]; then
    git worktree add -f "$earlier" "$rev" >/dev/null
    (cd "$earlier" && CARGO_TARGET_DIR=target cargo build --release --bins)
fi
cargo build --release --bins
declare -A bins=([this]=target/release/nimber [earlier]=$earlier/target/release/nimber)
work=$(mktemp -d)
# (`|| true`: with no job left, kill fails, and under set -e the trap would stop before the rm.)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

# figure NAME BUILD VALUE: one measurement, kept for the medians.
figure() { echo "$3" >>"$work/$1.$2"; }
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# serve BUILD: starts that build's server on a free port; sets $server and $target.
serve() {
    local out=$work/server.out
    RUST_LOG=warn "${bins[$1]}" serve --listen 127.0.0.1:0 --data-dir "$work/store.$1" --jobs-dir "$work/jobs.$1" >"$out" &
    server=$!
    for _ in $(seq 300); do grep -q 'listening on' "$out" 2>/dev/null && break; sleep 0.1; done
    target="http://$(sed -n 's/^nimber listening on //p' "$out")"
}

for round in $(seq "$ROUNDS"); do
    echo "== round $round of $ROUNDS"
    for build in this earlier; do
        for case in $CASES; do
            code=${case%%:*} heaps=${case##*:}
            rm -rf "$work/seq"
            /usr/bin/time -f '%U %S %M' -o "$work/time" "${pin[@]}" "${bins[$build]}" explore --jobs-dir "$work/seq" \
                heap-sequence --rules "$code" --up-to $((heaps - 1)) >/dev/null 2>&1
            read -r user sys rss <"$work/time"
            figure "heaps $code to $heaps: CPU s" "$build" "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')"
            figure "heaps $code to $heaps: peak MB" "$build" "$((rss / 1024))"
        done
        serve "$build"
        grid=$(python3 -c '
import json
vertex = lambda r, c: 3 * c + r + 1
edges = [{"from": vertex(r, c), "to": vertex(r + dr, c + dc)}
         for c in range(16) for r in range(3) for dr, dc in ((1, 0), (0, 1)) if r + dr < 3 and c + dc < 16]
print(json.dumps({"position": {"nodeKayles": {"vertices": 48, "edges": edges}}}))')
        ms=$(grpcurl -plaintext -max-time 600 -d "$grid" "${target#http://}" nimber.v1.Solver/Solve |
            python3 -c 'import json, sys; print(int(json.load(sys.stdin)["stats"]["elapsedMicros"]) / 1000)')
        figure "Node Kayles, 3×16 grid as a graph, cold Solve: ms" "$build" "$ms"
        for run in solve:closed-form solve:cached-boards solve:kayles stream:closed-form stream:cached-boards; do
            rpc=${run%%:*} workload=${run##*:}
            rps=$(target/release/nimber-load --target "$target" --warmup 1s --connections 2 --rpc "$rpc" \
                --workload "$workload" --concurrency 64 --duration "$DURATION" | awk '$1 == "rps" { print $2 }')
            if [[ "$rpc" == solve ]]; then
                figure "Solve $workload: calls a second" "$build" "$rps"
            else
                figure "SolveStream $workload: positions a second" "$build" "$rps"
            fi
        done
        kill -TERM "$server"
        wait "$server" || true
        rm -rf "$work/store.$build" "$work/jobs.$build"
        if [[ "$JUDGE" == 1 ]]; then
            board=$(python3 -c 'print("10 10\n" + "\n".join(["0" * 10] * 10))')
            /usr/bin/time -f '%U %S %M' -o "$work/time" "${bins[$build]}" judge tetris <<<"$board" >/dev/null
            read -r user sys rss <"$work/time"
            figure "judge 10×10, default flags: CPU s" "$build" "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')"
            figure "judge 10×10, default flags: peak MB" "$build" "$((rss / 1024))"
        fi
    done
done

echo
echo "this checkout ($(git rev-parse --short HEAD)) against $rev, medians of $ROUNDS rounds:"
echo "| figure | this | $rev | this / $rev |"
echo "|---|---|---|---|"
for file in "$work"/*.this; do
    name=$(basename "$file" .this)
    this=$(median "$file") before=$(median "$work/$name.earlier")
    echo "| $name | $this | $before | $(awk -v a="$this" -v b="$before" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }') |"
done
