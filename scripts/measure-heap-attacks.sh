#!/usr/bin/env bash
# Issue 34's attacks on the heap games, on the release build (docs/BENCHMARKS.md, "Hardening";
# the notebook docs/benchmarks-history.md, "Hardening 4"):
#   1. two Analyze calls of 10 000 huge 0.16 heaps with a 1 s deadline, then a Cram Solve beside them:
#      the status and time of each, and the server's CPU for all three;
#   2. Solve of 8.0 heap 9 500 with a 2 s deadline: the status and when it came;
#   3. Solve of subtraction {65536} at heap 2^64 − 1 (a period search over 65 536 shifts): the time;
#   4. two Analyze calls of 8.0 heap 8 000 at once under `--memory-limit 256MiB`: the peak RSS.
# Usage: scripts/measure-heap-attacks.sh
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
use_tools
cargo build --release --bin nimber
bin="${CARGO_TARGET_DIR:-target}/release/nimber"
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null; rm -rf "$work"' EXIT
start() { # NAME FLAGS... ; sets address, pid
  "$bin" serve --listen 127.0.0.1:0 --data-dir "$work/$1" --jobs-dir "$work/$1-jobs" "${@:2}" > "$work/$1.out" 2>"$work/$1.err" &
  pid=$!
  for _ in $(seq 100); do grep -q 'listening on' "$work/$1.out" 2>/dev/null && break; sleep 0.1; done
  address=$(sed -n 's/^nimber listening on //p' "$work/$1.out")
}
cpu() { awk '{print ($14+$15)/100}' /proc/$1/stat; }
start a
python3 -c 'import json,random;print(json.dumps({"position":{"heaps":{"code":"0.16","heaps":[str(random.randrange(2**63,2**64)) for _ in range(10000)]}},"limit":1}))' > $work/big.json
c0=$(cpu $pid)
analyses=()
for i in 1 2; do ( s=$(date +%s.%N); out=$(grpcurl -plaintext -max-time 1 -d @ $address nimber.v1.Solver/Analyze < $work/big.json 2>&1 | sed -n 's/^ *Code: //p'); echo "analyze $i: $out after $(python3 -c "print(round($(date +%s.%N)-$s,2))") s" ) & analyses+=($!); done
sleep 1.2
s=$(date +%s.%N)
cram=$(grpcurl -plaintext -max-time 3 -d '{"position":{"cram":{"rows":["000000","000000","000000","000000","000000","001000"]}}}' $address nimber.v1.Solver/Solve 2>&1 | grep -o '"grundy[^,]*\|Code: .*' | head -1)
echo "cram 6x6 after the two: $cram in $(python3 -c "print(round($(date +%s.%N)-$s,2))") s"
wait "${analyses[@]}"
echo "server CPU for all: $(python3 -c "print(round($(cpu $pid)-$c0,2))") s"
s=$(date +%s.%N)
echo "8.0 heap 9500, 2 s deadline: $(grpcurl -plaintext -max-time 2 -d '{"position":{"heaps":{"code":"8.0","heaps":["9500"]}}}' $address nimber.v1.Solver/Solve 2>&1 | sed -n 's/^ *Code: //p') after $(python3 -c "print(round($(date +%s.%N)-$s,2))") s"
s=$(date +%s.%N)
echo "subtraction {65536} heap 2^64-1: $(grpcurl -plaintext -max-time 60 -d '{"position":{"heaps":{"subtraction":{"take":["65536"]},"heaps":["18446744073709551615"]}}}' $address nimber.v1.Solver/Solve 2>&1 | grep -o '"grundy[^,]*' | head -1) in $(python3 -c "print(round($(date +%s.%N)-$s,2))") s"
kill $pid; wait $pid 2>/dev/null
start m --memory-limit 256MiB
rss0=$(awk '/VmRSS/{print $2}' /proc/$pid/status)
analyses=()
for i in 1 2; do grpcurl -plaintext -max-time 120 -d '{"position":{"heaps":{"code":"8.0","heaps":["8000"]}},"limit":1}' $address nimber.v1.Solver/Analyze > $work/a$i.txt 2>&1 & analyses+=($!); done
wait "${analyses[@]}"
echo "two Analyze of 8.0 heap 8000 at once under --memory-limit 256MiB: RSS $((rss0/1024)) MiB before, peak $(( $(awk '/VmHWM/{print $2}' /proc/$pid/status)/1024 )) MiB; answers: $(for f in $work/a1.txt $work/a2.txt; do grep -m1 -o "Code: .*\|\"grundy[^,]*" $f; done | tr "\n" " ")"
kill $pid; wait $pid 2>/dev/null
