#!/usr/bin/env bash
# Heap-game benchmark against two peer solvers of octal games (issue 21): the CPU time (user+sys, one
# thread) and peak RSS to compute an octal game's Grundy values for heaps 0..n-1, for
#   - nimber: the command template $NIMBER_CMD (placeholders {code}, {n} = number of heaps,
#     {last} = n-1, and {dir}, a new empty directory for each run), by default the resumable job
#     in-process, with its own job store (so no run finds another's finished job):
#       target/release/nimber explore --jobs-dir {dir}/jobs heap-sequence --rules {code} --up-to {last}
#     It ends early once a period is proven (0.16: at heap 393 216), as the peers do not: its
#     frequencies then cover fewer heaps than theirs (a failing nimber command is reported and the
#     peers are still measured);
#   - ogsolve 0.0.7 (Piotr Beling, a published crate), method RC2 (-m rc2, single-threaded), installed on first
#     use into .bench/peers with `cargo install --locked`; it is run as `ogsolve -m rc2 -s -n n-1 CODE`
#     (-n is the last heap, inclusive);
#   - Rogalski's `octal` (the repository rogalski-wmii-uni-lodz-pl/octal), only as an external program
#     given by $OCTAL_BIN (skipped when unset; this script never fetches or builds it); it is run as
#     `$OCTAL_BIN CODE n` (heaps 0..n-1, one thread).
# Every run is pinned to one core (taskset -c $CPU) and measured with /usr/bin/time; the programs take
# turns in each round (interleaved), and the table gives the median CPU time over the rounds, the
# largest peak RSS, and each peer's CPU time over nimber's. To check that the programs agree, each
# one's value frequencies are written in the format of Rogalski's published results (one line
# `value frequency` for every value from 0 to the largest) and compared (sum, largest value, digest).
# nimber's frequencies are read from the lines of its output that have that format.
#
# Usage: scripts/bench-heaps.sh                     (0.16 to 2^20, 0.106 to 2^22, 0.376 to 2^21)
#        CASES="0.16:65536" ROUNDS=1 scripts/bench-heaps.sh            (a quick run)
#        OCTAL_BIN=/path/to/octal scripts/bench-heaps.sh               (with Rogalski's solver)
# Knobs (environment): CASES ("code:heaps ..."), ROUNDS (3), NIMBER_CMD, OCTAL_BIN, OGSOLVE (a binary
# to use instead of installing one), OGSOLVE_METHOD (rc2), CPU (0, the core runs are pinned to),
# TIMEOUT (1200 s per run; a case whose run times out is not run again by that program).
# Raw outputs and frequency files are kept in .bench/heaps/<time>/.
set -euo pipefail
cd "$(dirname "$0")/.."

CASES=${CASES:-"0.16:1048576 0.106:4194304 0.376:2097152"}
ROUNDS=${ROUNDS:-3}
NIMBER_CMD=${NIMBER_CMD:-"target/release/nimber explore --jobs-dir {dir}/jobs heap-sequence --rules {code} --up-to {last}"}
OCTAL_BIN=${OCTAL_BIN:-}
OGSOLVE_VERSION=0.0.7
OGSOLVE_METHOD=${OGSOLVE_METHOD:-rc2}
CPU=${CPU:-0}
TIMEOUT=${TIMEOUT:-1200}

source scripts/lib.sh
timed_runs

# The peers.
ogsolve=${OGSOLVE:-.bench/peers/bin/ogsolve}
[[ -n "${OGSOLVE:-}" ]] || install_peer ogsolve "$OGSOLVE_VERSION"
programs=(nimber ogsolve)
if [[ -n "$OCTAL_BIN" ]]; then
    [[ -x "$OCTAL_BIN" ]] || { echo "bench-heaps: OCTAL_BIN=$OCTAL_BIN is not an executable" >&2; exit 1; }
    programs+=(octal)
else
    echo "note: OCTAL_BIN is not set, Rogalski's octal is skipped (give the path of a built octal binary to include it)"
fi

if [[ "$NIMBER_CMD" == target/release/nimber\ * ]]; then
    cargo build --release --bin nimber || echo "bench-heaps: building nimber failed; its runs will fail"
fi

out=.bench/heaps/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"

echo "== machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(uname -sr), $(rustc --version)"
echo "== cases: $CASES; $ROUNDS round(s); pinned: ${pin[*]:-no}; timeout ${TIMEOUT}s per run; outputs in $out"
echo "   nimber:  $NIMBER_CMD"
echo "   ogsolve: $ogsolve -m $OGSOLVE_METHOD -s -n {last} {code}   ($("$ogsolve" --version))"
[[ -n "$OCTAL_BIN" ]] && echo "   octal:   $OCTAL_BIN {code} {n}"

# command PROGRAM CODE N: prints the program's command line, one word a line.
command_of() {
    local code=$1 n=$2 template words
    case "$3" in
        nimber)
            template=${NIMBER_CMD//\{dir\}/$4}
            template=${template//\{code\}/$code}
            template=${template//\{n\}/$n}
            template=${template//\{last\}/$((n - 1))}
            read -ra words <<<"$template"
            printf '%s\n' "${words[@]}" ;;
        ogsolve) printf '%s\n' "$ogsolve" -m "$OGSOLVE_METHOD" -s -n "$((n - 1))" "$code" ;;
        octal) printf '%s\n' "$OCTAL_BIN" "$code" "$n" ;;
    esac
}

# run CASE PROGRAM ROUND: one measured run; appends "cpu_s rss_kb" to $out/CASE.PROGRAM.runs, or
# marks the program failed or timed out for the case.
run() {
    local case=$1 program=$2 round=$3 code=${1%%:*} n=${1##*:}
    local base="$PWD/$out/$case.$program" label cmd dir user sys wall rss cpu
    label=$(printf '%-16s %-8s' "$case" "$program")
    dir=$(mktemp -d)
    mapfile -t cmd < <(command_of "$code" "$n" "$program" "$dir")
    if ! timed_run "$base" "$round" "$label" . "${cmd[@]}"; then
        rm -rf "$dir"
        return
    fi
    rm -rf "$dir"
    printf '   %s round %s: %6.2f s CPU (%s user + %s sys, %s s wall), %d MB peak RSS\n' \
        "$label" "$round" "$cpu" "$user" "$sys" "$wall" "$((rss / 1024))"
}

for case in $CASES; do
    echo
    echo "-- $case"
    for round in $(seq 1 "$ROUNDS"); do
        for program in "${programs[@]}"; do
            [[ -e "$out/$case.$program.status" ]] || run "$case" "$program" "$round"
        done
    done
done

# Frequencies in Rogalski's format (`value frequency`, every value 0..largest) from each output.
freqs_ogsolve() { # the -s line of RC2 "k:a+b" (value k at a even and b odd heaps) or of naive/RC "k:a"
    awk '/^ *0:[0-9]/ { for (i = 1; i <= NF; i++) if (split($i, kv, ":") == 2) {
            split(kv[2], ab, "+"); f[kv[1] + 0] = ab[1] + ab[2]; if (kv[1] + 0 > max) max = kv[1] + 0 }
            found = 1; exit }
         END { if (found) for (v = 0; v <= max; v++) print v, f[v] + 0 }' "$1"
}
freqs_octal() { # the JSON after "N freqs after", the last dump (heaps 0..N-1)
    awk -v n="$2" '$1 == n && $2 == "freqs" && $3 == "after" { on = 1; next }
         on && /"nimber":/ { gsub(/[^0-9]/, "", $2); v = $2 + 0 }
         on && /"frequency":/ { gsub(/[^0-9]/, "", $2); f[v] = $2 + 0; if (f[v] > 0 && v > max) max = v }
         on && /"rare":/ { r[v] = ($2 ~ /true/) }
         on && /^\]/ { on = 0 }
         END { for (v = 0; v <= max; v++) print v, f[v] + 0 }' "$1"
}
freqs_nimber() { grep -E '^[0-9]+ [0-9]+$' "$1" || true; }

summary() { # FREQS: "sum=… largest=… digest=…"
    if [[ -s "$1" ]]; then
        awk '{ s += $2; if ($2 > 0) m = $1 } END { printf "heaps=%d largest=%d ", s, m }' "$1"
        echo "digest=$(sha256sum <"$1" | cut -c1-16)"
    else
        echo "no frequencies in the output"
    fi
}

# mask_of: reads "key rare(0/1)" lines, prints the smallest mask m for which a key is rare exactly when
# key & m has even parity (so 0 is rare), the R/C split of the sparse-space method, or "none".
mask_of() {
    awk '{ k[NR] = $1; r[NR] = $2; if ($1 > top) top = $1 }
         END { size = 1; while (size <= top) size *= 2
               for (m = 0; m < size; m++) {
                   ok = 1
                   for (i = 1; i <= NR && ok; i++) {
                       x = k[i]; y = m; p = 0
                       while (x > 0 && y > 0) { if (x % 2 && y % 2) p = 1 - p; x = int(x / 2); y = int(y / 2) }
                       if ((p == 0) != (r[i] == 1)) ok = 0
                   }
                   if (ok) { print m; exit }
               }
               print "none" }'
}

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) printf "%.2f", a[(NR + 1) / 2]; else printf "%.2f", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo
echo "== summary (CPU = user+sys on one pinned core, median of the rounds; RSS = the largest peak)"
printf '%-16s %-8s %12s %7s %12s %14s\n' "case" "program" "CPU s (med)" "rounds" "max RSS MB" "CPU / nimber"
for case in $CASES; do
    nimber_cpu=-
    [[ -s "$out/$case.nimber.runs" ]] && nimber_cpu=$(cut -d' ' -f1 "$out/$case.nimber.runs" | median)
    for program in "${programs[@]}"; do
        base="$out/$case.$program"
        if [[ -s "$base.runs" ]]; then
            cpu=$(cut -d' ' -f1 "$base.runs" | median)
            rss=$(awk '$2 > m { m = $2 } END { printf "%.1f", m / 1024 }' "$base.runs")
            runs=$(wc -l <"$base.runs")
        else
            cpu=$(cat "$base.status" 2>/dev/null || echo "-")
            rss=- runs=0
        fi
        ratio=-
        if [[ "$program" != nimber && "$nimber_cpu" != - && -s "$base.runs" ]]; then
            ratio=$(awk -v a="$cpu" -v b="$nimber_cpu" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
        fi
        printf '%-16s %-8s %12s %7s %12s %14s\n' "$case" "$program" "$cpu" "$runs" "$rss" "$ratio"
    done
done

echo
echo "== agreement (value frequencies in Rogalski's format, written to $out/CASE.PROGRAM.freqs)"
for case in $CASES; do
    n=${case##*:}
    digests=()
    for program in "${programs[@]}"; do
        base="$out/$case.$program"
        [[ -s "$base.out" ]] || { printf '%-16s %-8s no completed run\n' "$case" "$program"; continue; }
        case $program in
            nimber) freqs_nimber "$base.out" >"$base.freqs" ;;
            ogsolve) freqs_ogsolve "$base.out" >"$base.freqs" ;;
            octal) freqs_octal "$base.out" "$n" >"$base.freqs" ;;
        esac
        extra=
        case $program in
            ogsolve)
                extra=$(awk '/^ nimber of |^ found period/ { sub(/^ /, ""); printf "%s%s", sep, $0; sep = "; " }' "$base.out")
                extra="$extra; R/C split: $(awk '/^[CR][01]?:/ { k = 0; for (i = 2; i <= NF && $i != "at"; i++) k++
                    printf "%s%s has %d %s", sep, substr($1, 1, length($1) - 1), k, (index($2, ".") ? "value.parity keys" : "values"); sep = ", " }' "$base.out")"
                for d in 0 1; do # RC2 splits keys 2*value+heap parity, once for even and once for odd breaking moves
                    # (split 1 has the key of 0 at odd heaps in R)
                    grep -qE "^R$d:" "$base.out" || continue
                    extra="$extra; split $d mask $(awk -v d="$d" -v c="C$d:" -v r="R$d:" '$1 == c || $1 == r { for (i = 2; i <= NF && $i != "at"; i++) {
                        split($i, vp, "."); print 2 * vp[1] + (vp[2] + d) % 2, ($1 == r) } }' "$base.out" | mask_of) over 2*value+(heap parity xor $d)"
                done ;;
            octal)
                extra=$(grep -E 'G\([0-9]+\) = ' "$base.out" | tail -n 1 | sed -E 's/.*(largest=[^,]*).*(rares=[^,]*).*(G\([0-9]+\) = [0-9]+).*/\3; \1; \2/')
                extra="$extra; rare values $(awk -v n="$n" '$1 == n && $2 == "freqs" { on = 1 }
                    on && /"nimber":/ { gsub(/[^0-9]/, "", $2); v = $2 + 0 } on && /"rare": true/ { r[v] = 1 }
                    on && /"frequency":/ { gsub(/[^0-9]/, "", $2); if ($2 > 0 && v > m) m = v } on && /^\]/ { on = 0 }
                    END { for (v = 0; v <= m; v++) if (v in r) { printf "%s%s", sep, v; sep = "," } }' "$base.out")"
                extra="$extra; mask $(awk -v n="$n" '$1 == n && $2 == "freqs" { on = 1 } on && /"nimber":/ { gsub(/[^0-9]/, "", $2); v = $2 }
                    on && /"rare":/ { print v, ($2 ~ /true/) } on && /^\]/ { on = 0 }' "$base.out" | mask_of) (rare: even parity of value & mask)"
                grep -q '^period start' "$base.out" && extra="$extra; period $(awk '/^period:/ { print $2 }' "$base.out") from $(awk '/^period start:/ { print $3 }' "$base.out")" ;;
        esac
        line=$(summary "$base.freqs")
        printf '%-16s %-8s %s\n' "$case" "$program" "$line"
        [[ -n "$extra" ]] && printf '%-16s %-8s   %s\n' "" "" "$extra"
        [[ -s "$base.freqs" ]] && digests+=("${line##*digest=}")
    done
    if [[ ${#digests[@]} -ge 2 ]]; then
        if [[ $(printf '%s\n' "${digests[@]}" | sort -u | wc -l) -eq 1 ]]; then
            echo "$case: the ${#digests[@]} frequency tables agree"
        else
            echo "$case: the frequency tables DIFFER (diff the .freqs files in $out)"
        fi
    fi
done
