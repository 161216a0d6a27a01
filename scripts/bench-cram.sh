#!/usr/bin/env bash
# Cram benchmark against a peer solver: the CPU time (user+sys, one thread) and peak RSS to compute
# the Grundy value of the full (empty) Cram board of ROWS×COLUMNS, for
#   - nimber: the command template $NIMBER_CMD (placeholders {rows}, {columns} and {dir}, a new empty
#     directory for each run), by default the resumable job in-process, with its own job store (so
#     no run finds another's finished job):
#       target/release/nimber explore --jobs-dir {dir}/jobs full-boards --game cram --min-rows {rows}
#         --max-rows {rows} --min-columns {columns} --max-columns {columns} --format csv
#     Its value is read from its csv output (the `value` column, or `grundy`, of the one data row:
#     value_nimber below); a failing nimber command is reported and the peer is still measured;
#   - igsolve 0.1.2 (Piotr Beling, a published crate; GPL, so only run as an external program),
#     installed on first use into .bench/peers with `cargo install --locked`. It has no thread
#     option (it is single-threaded). It runs in the run's own {dir}: its end database, when used,
#     is cached in the working directory, so every run builds it again and the build is counted.
#     Its options are those of igsolve_args below, the fastest found for each board:
#     - the aspiration-set pruning of Beling and Rogalski (`-m br-asp-set`, its default for Cram);
#     - a HashMap transposition table (`--tt hash-map`). Its default for boards of more than 40
#       cells is a lossy table of 8 GiB, and that kind was slower at every size tried;
#     - the board turned so that it has fewer rows than columns: igsolve is slower the other way
#       round, for example 4×11 in 11 s and 11×4 in 36 s;
#     - for some boards, an end database of the positions within the first 5 columns.
#     Its value is the line `Nimber of initial position: N`.
# Every run is pinned to one core (taskset -c $CPU) and measured with /usr/bin/time; the programs take
# turns in each round (interleaved), and the table gives the median CPU time over the rounds, the
# largest peak RSS, and igsolve's CPU time over nimber's. The values the two programs print are
# compared with each other and with the published ones (P. Beling's impartial-games README, 2025,
# and Lemoine and Viennot's Glop records before it).
#
# Usage: scripts/bench-cram.sh                         (4x11 5x9 6x7 7x7 5x10; igsolve alone takes hours)
#        BOARDS="5x8 4x11" ROUNDS=1 scripts/bench-cram.sh                      (a quick run)
#        IGSOLVE_OPTS="--tt succinct --tt_size 4 cram -r {rows} -c {columns}" scripts/bench-cram.sh
# Knobs (environment): BOARDS ("ROWSxCOLUMNS ..."), ROUNDS (3), NIMBER_CMD, NIMBER_BUILD (1: build
# target/release/nimber first when NIMBER_CMD runs it; 0: do not), IGSOLVE (a binary to use instead
# of installing one), IGSOLVE_OPTS (igsolve's arguments for every board instead of the per-board
# choice: a template with the board's {rows} and {columns} as given, not turned), CPU (0, the core runs are pinned to), TIMEOUT (7200 s
# per run; a board whose run times out is not run again by that program).
# Raw outputs are kept in .bench/cram/<time>/.
set -euo pipefail
cd "$(dirname "$0")/.."

BOARDS=${BOARDS:-"4x11 5x9 6x7 7x7 5x10"}
ROUNDS=${ROUNDS:-3}
NIMBER_CMD=${NIMBER_CMD:-"target/release/nimber explore --jobs-dir {dir}/jobs full-boards --game cram --min-rows {rows} --max-rows {rows} --min-columns {columns} --max-columns {columns} --format csv"}
NIMBER_BUILD=${NIMBER_BUILD:-1}
IGSOLVE_VERSION=0.1.2
IGSOLVE_OPTS=${IGSOLVE_OPTS:-}
CPU=${CPU:-0}
TIMEOUT=${TIMEOUT:-7200}

source scripts/lib.sh
timed_runs

# The peer.
igsolve=${IGSOLVE:-.bench/peers/bin/igsolve}
[[ -n "${IGSOLVE:-}" ]] || install_peer igsolve "$IGSOLVE_VERSION"
[[ -x "$igsolve" ]] || { echo "bench-cram: IGSOLVE=$igsolve is not an executable" >&2; exit 1; }
igsolve=$(cd "$(dirname "$igsolve")" && pwd)/$(basename "$igsolve") # it runs in the run's directory
programs=(nimber igsolve)

if [[ "$NIMBER_BUILD" == 1 && "$NIMBER_CMD" == target/release/nimber\ * ]]; then
    cargo build --release --bin nimber || echo "bench-cram: building nimber failed; its runs will fail"
fi

out=.bench/cram/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"

# igsolve_args ROWS COLUMNS: igsolve's arguments, one word a line. Cram's value does not change when
# the board is turned, igsolve's time does: it gets the shorter side as its rows. Chosen per board by
# measuring igsolve 0.1.2 on one core of this machine (2 AMD EPYC cores, shared, so ±10 %):
# - br-asp-set beat lvb 2 to 3 times (5×8, 4×11); def and br did not finish 5×8 in 5 minutes;
# - the HashMap table beat the succinct one of 1 to 8 GiB on 5×8, 4×11, 5×9 and 6×7 (1.5 to
#   2.5 times; the succinct table's pages alone cost 27 s of system time at 8 GiB);
# - an end database (--edb_segments 1 --edb-cols C: every position within the first C columns,
#   built before the search, 2^(rows·C) positions to scan) did not pay on 5×8 or 4×11. With 5
#   columns it took 5×9 from 62 s to 56 s, and 6×7's search up to the value 3 from 175 s to 170 s
#   including its 16 s build. With 6 columns of 5 rows its build alone takes about 50 s.
# 6×7, 7×7 and 5×10 did not finish in 20 minutes with any options; their choice follows 5×9's.
igsolve_args() {
    local rows=$1 columns=$2 short long template
    if ((rows <= columns)); then short=$rows long=$columns; else short=$columns long=$rows; fi
    if [[ -n "$IGSOLVE_OPTS" ]]; then
        template=$IGSOLVE_OPTS
    else
        case "${short}x${long}" in
            5x9 | 5x1[0-9] | 6x[7-9] | 6x1[0-9]) # 5 columns of 5 or 6 rows: 2^25 or 2^30 positions
                template="-m br-asp-set --tt hash-map --edb_segments 1 cram -r {rows} -c {columns} --edb-cols 5" ;;
            *) template="-m br-asp-set --tt hash-map cram -r {rows} -c {columns}" ;;
        esac
        rows=$short columns=$long
    fi
    template=${template//\{rows\}/$rows}
    template=${template//\{columns\}/$columns}
    local words
    read -ra words <<<"$template"
    printf '%s\n' "${words[@]}"
}

# published ROWSxCOLUMNS: the published value of the board, or "?" (either way round).
published() {
    local r=${1%x*} c=${1#*x}
    ((r > c)) && { local t=$r; r=$c; c=$t; }
    ((r % 2 == 0 && c % 2 == 0)) && { echo 0; return; } # even by even: the symmetry strategy
    case "${r}x${c}" in
        4x5) echo 2 ;; 4x7) echo 3 ;; 4x9) echo 1 ;; 4x11) echo 1 ;; 4x13) echo 3 ;; 4x15) echo 4 ;;
        5x5) echo 0 ;; 5x6) echo 2 ;; 5x7) echo 1 ;; 5x8) echo 1 ;; 5x9) echo 1 ;; 5x10) echo 2 ;;
        5x11) echo 0 ;; 5x12) echo 3 ;; 6x7) echo 5 ;; 6x9) echo 1 ;; 7x7) echo 1 ;; 7x8) echo 3 ;;
        7x9) echo 1 ;; *) echo "?" ;;
    esac
}

echo "== machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(uname -sr), $(rustc --version)"
echo "== boards: $BOARDS; $ROUNDS round(s); pinned: ${pin[*]:-no}; timeout ${TIMEOUT}s per run; outputs in $out"
echo "   nimber:  $NIMBER_CMD"
echo "   igsolve: $igsolve ($("$igsolve" --version)), per board:"
for board in $BOARDS; do
    echo "            $board: $(igsolve_args "${board%x*}" "${board#*x}" | tr '\n' ' ')"
done

# command_of ROWS COLUMNS PROGRAM DIR: prints the program's command line, one word a line.
command_of() {
    local rows=$1 columns=$2 template words
    case "$3" in
        nimber)
            template=${NIMBER_CMD//\{dir\}/$4}
            template=${template//\{rows\}/$rows}
            template=${template//\{columns\}/$columns}
            read -ra words <<<"$template"
            printf '%s\n' "${words[@]}" ;;
        igsolve) printf '%s\n' "$igsolve"; igsolve_args "$rows" "$columns" ;;
    esac
}

# run BOARD PROGRAM ROUND: one measured run; appends "cpu_s rss_kb" to $out/BOARD.PROGRAM.runs, or
# marks the program failed or timed out for the board.
run() {
    local board=$1 program=$2 round=$3 rows=${1%x*} columns=${1#*x}
    local base="$PWD/$out/$board.$program" label cmd dir value user sys wall rss cpu
    label=$(printf '%-6s %-8s' "$board" "$program")
    dir=$(mktemp -d)
    mapfile -t cmd < <(command_of "$rows" "$columns" "$program" "$dir")
    # igsolve writes its end database's cache into its working directory, nimber only into {dir}.
    if ! timed_run "$base" "$round" "$label" "$([[ $program == igsolve ]] && echo "$dir" || echo .)" "${cmd[@]}"; then
        rm -rf "$dir"
        return
    fi
    rm -rf "$dir"
    value=$(value_of "$program" "$base.out")
    echo "$value" >>"$base.values"
    printf '   %s round %s: %8.2f s CPU (%s user + %s sys, %s s wall), %d MB peak RSS, value %s\n' \
        "$label" "$round" "$cpu" "$user" "$sys" "$wall" "$((rss / 1024))" "${value:-?}"
}

# The value each program prints (empty when it cannot be found).
value_igsolve() { sed -n 's/^Nimber of initial position: \([0-9][0-9]*\).*/\1/p' "$1" | tail -n 1; }
value_nimber() { # csv: '#' lines skipped, a header naming a `value` (or `grundy`) column, one data row
    awk -F, '/^#/ || !NF { next }
        !col { for (i = 1; i <= NF; i++) if ($i == "value") col = i
               if (!col) for (i = 1; i <= NF; i++) if ($i == "grundy") col = i
               if (!col) exit; next }
        { print $col; exit }' "$1"
}
value_of() { case "$1" in nimber) value_nimber "$2" ;; igsolve) value_igsolve "$2" ;; esac; }

for board in $BOARDS; do
    [[ "$board" =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] || { echo "bench-cram: board $board is not ROWSxCOLUMNS" >&2; exit 1; }
    echo
    echo "-- $board"
    for round in $(seq 1 "$ROUNDS"); do
        for program in "${programs[@]}"; do
            [[ -e "$out/$board.$program.status" ]] || run "$board" "$program" "$round"
        done
    done
done

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) printf "%.2f", a[(NR + 1) / 2]; else printf "%.2f", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo
echo "== summary (CPU = user+sys on one pinned core, median of the rounds; RSS = the largest peak)"
echo
echo "| board | program | CPU s (median) | rounds | max RSS MB | CPU / nimber | value |"
echo "|---|---|---:|---:|---:|---:|---:|"
for board in $BOARDS; do
    nimber_cpu=-
    [[ -s "$out/$board.nimber.runs" ]] && nimber_cpu=$(cut -d' ' -f1 "$out/$board.nimber.runs" | median)
    for program in "${programs[@]}"; do
        base="$out/$board.$program"
        if [[ -s "$base.runs" ]]; then
            cpu=$(cut -d' ' -f1 "$base.runs" | median)
            rss=$(awk '$2 > m { m = $2 } END { printf "%.1f", m / 1024 }' "$base.runs")
            runs=$(wc -l <"$base.runs")
            value=$(sort -u "$base.values" | paste -sd/)
        else
            cpu=$(cat "$base.status" 2>/dev/null || echo "-")
            rss=- runs=0 value=-
        fi
        ratio=-
        if [[ "$program" != nimber && "$nimber_cpu" != - && -s "$base.runs" ]]; then
            ratio=$(awk -v a="$cpu" -v b="$nimber_cpu" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
        fi
        echo "| $board | $program | $cpu | $runs | $rss | $ratio | ${value:-?} |"
    done
done

echo
echo "== agreement (the values printed; published: P. Beling's impartial-games README and Glop's records)"
disagree=0
for board in $BOARDS; do
    expected=$(published "$board")
    values=()
    line=
    for program in "${programs[@]}"; do
        base="$out/$board.$program"
        if [[ -s "$base.values" ]]; then
            v=$(sort -u "$base.values" | paste -sd/)
            [[ -n "$v" ]] || v="?"
            values+=("$v")
            line="$line $program $v,"
        else
            line="$line $program -,"
        fi
    done
    verdict="no value to compare"
    if [[ ${#values[@]} -ge 1 ]]; then
        all=$(printf '%s\n' "${values[@]}" "$([[ $expected != "?" ]] && echo "$expected")" | sed '/^$/d' | sort -u)
        if [[ $(wc -l <<<"$all") -eq 1 && "$all" != *"?"* && "$all" != */* ]]; then
            verdict="agree"
        else
            verdict="DIFFER"
            disagree=1
        fi
    fi
    printf '%-6s%s published %s: %s\n' "$board" "$line" "$expected" "$verdict"
done
[[ $disagree -eq 0 ]] || echo "some values DIFFER (see the .out files in $out)"
