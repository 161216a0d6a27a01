#!/usr/bin/env bash
# The README's commands are code: this runs them exactly as the README writes them.
#   1. The start command, in a fresh clone of HEAD (sharing this checkout's build directory so that
#      nothing is compiled twice), until grpc.health.v1.Health answers SERVING on 127.0.0.1:50051.
#   2. Every judge example, from the root of that clone; each must print exactly the matching
#      examples/*.out (the file named by the command's `< examples/NAME.in`, with .out).
# Prints `readme: N passed, M failed` last and exits non-zero on any failure.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$repo_root"
use_tools

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok: $1"; }
fail() { failed=$((failed + 1)); echo "FAILED: $1"; }

# ---- 1. the start command -----------------------------------------------------------------------
start_command=$(readme_block start-command)
[ "$(wc -l <<<"$start_command")" -eq 1 ] && [ -n "$start_command" ] || {
    echo "readme: the README must give exactly one start command, found: '$start_command'"; exit 1; }
work=$(mktemp -d)
server=""
cleanup() {
    # The command runs in its own session: stop the whole group (cargo and the server it started).
    [ -n "$server" ] && kill -TERM -- "-$server" 2>/dev/null && wait "$server" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
git clone --quiet "$repo_root" "$work/clone"
if grpcurl -plaintext -max-time 1 127.0.0.1:50051 list >/dev/null 2>&1; then
    echo "readme: something already serves 127.0.0.1:50051; stop it first"; exit 1
fi
(cd "$work/clone" && CARGO_TARGET_DIR="$repo_root/target" exec setsid bash -c "$start_command") \
    >"$work/stdout" 2>"$work/stderr" &
server=$!
# Wait for the state, not for a time: the banner line (compiling first may take minutes), bounded.
for _ in $(seq 1200); do
    grep -q '^nimber listening on 127.0.0.1:50051$' "$work/stdout" && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.5
done
if health=$(grpcurl -plaintext -max-time 5 127.0.0.1:50051 grpc.health.v1.Health/Check 2>&1) \
    && grep -q '"SERVING"' <<<"$health"; then
    pass "start command '$start_command': health SERVING"
else
    fail "start command '$start_command': no SERVING health answer"
    echo "$health"; tail -20 "$work/stderr"
fi
kill -TERM -- "-$server" 2>/dev/null || true
wait "$server" 2>/dev/null || true
server=""
[ -d "$work/clone/nimber-data" ] && pass "the default store was created in ./nimber-data" \
    || fail "no ./nimber-data after the start command"

# ---- 2. the judge examples ----------------------------------------------------------------------
count=0
while IFS= read -r command; do
    [ -n "$command" ] || continue
    count=$((count + 1))
    input=$(grep -o 'examples/[A-Za-z0-9_-]*\.in' <<<"$command" || true)
    [ -n "$input" ] || { fail "judge example without an examples/*.in input: $command"; continue; }
    if output=$(cd "$work/clone" && CARGO_TARGET_DIR="$repo_root/target" bash -c "$command" 2>"$work/judge.err") \
        && [ "$output" == "$(cat "$work/clone/${input%.in}.out")" ]; then
        pass "$command"
    else
        fail "$command"; echo "$output"; cat "$work/judge.err"
    fi
done <<<"$(readme_block judge-examples)"
[ "$count" -ge 5 ] && pass "$count judge examples in the README" || fail "only $count judge examples in the README"

echo "readme: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
