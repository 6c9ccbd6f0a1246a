# SPDX-License-Identifier: Apache-2.0
# Helpers for the loopback cluster tests (tests/integration/cluster_*.sh):
# start dynamo agents and iofleet managers in the background, wait for their
# log lines with a timeout, and stop exactly the processes the test started
# (by PID, never by name) when the test ends, pass or fail.
#
# Sourced after (or instead of) lib/common.bash. Every wait here is bounded.

if [ -z "${IOFLEET:-}" ]; then
    source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
fi
DYNAMO=$IOF_BIN/dynamo
[ -x "$DYNAMO" ] || skip "no dynamo binary at $DYNAMO"
[ -x "$IOFLEET" ] || skip "no iofleet binary at $IOFLEET"

# Every wait below is for an event (a log line, an exit, a condition) and
# ends as soon as it happens; its deadline only bounds a failure. Deadlines
# are multiplied by IOF_WAIT_SCALE (default 3) so that a machine with every
# CPU busy (scripts/test --full's hog stage) still sees the event in time.
CL_WAIT_SCALE=${IOF_WAIT_SCALE:-3}

# Every process started through cl_spawn, for the final cleanup and check.
CL_ALL_PIDS=()

# Milliseconds on the monotonic-enough wall clock (date is fine for deltas
# of seconds; the tests allow margins far above its resolution).
cl_now_ms() { echo $(($(date +%s%N) / 1000000)); }

# cl_alive PID: the process exists and is not a zombie.
cl_alive() {
    local st
    [ -r "/proc/$1/stat" ] || return 1
    st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
    [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# cl_stop PID: SIGTERM (and SIGCONT, should it be stopped), up to 3 s to
# exit, then SIGKILL; reaps it if it is our child. Never fails.
cl_stop() {
    local pid=$1 i
    if cl_alive "$pid"; then
        kill -TERM "$pid" 2>/dev/null || true
        kill -CONT "$pid" 2>/dev/null || true
        for ((i = 0; i < 60; i++)); do
            cl_alive "$pid" || break
            sleep 0.05
        done
        if cl_alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
    fi
    wait "$pid" 2>/dev/null || true
}

# Cleanup: stop everything we started, then check that none survived.
cl_cleanup() {
    local pid left=()
    for pid in "${CL_ALL_PIDS[@]}"; do cl_stop "$pid"; done
    for pid in "${CL_ALL_PIDS[@]}"; do
        if cl_alive "$pid"; then left+=("$pid"); fi
    done
    if [ ${#left[@]} -gt 0 ]; then
        echo "cluster.bash: processes still alive after cleanup: ${left[*]}" >&2
        kill -KILL "${left[@]}" 2>/dev/null || true
    fi
}
iof_on_exit cl_cleanup

# cl_spawn VAR OUT ERR CMD...: runs CMD in the background with stdout to
# OUT and stderr to ERR (files), stores its PID in VAR and registers it for
# cleanup. The PID is CMD's own (bash execs a simple background command).
cl_spawn() {
    local __cls_var=$1 __cls_out=$2 __cls_err=$3 __cls_pid
    shift 3
    "$@" >"$__cls_out" 2>"$__cls_err" </dev/null &
    __cls_pid=$!
    CL_ALL_PIDS+=("$__cls_pid")
    printf -v "$__cls_var" '%s' "$__cls_pid"
}

# cl_wait_log FILE TEXT [TIMEOUT_S=10]: waits until FILE contains TEXT
# (fixed string). Fails the test on timeout, showing the file.
cl_wait_log() {
    local file=$1 text=$2 timeout=$((${3:-10} * CL_WAIT_SCALE)) deadline
    deadline=$(($(cl_now_ms) + timeout * 1000))
    while ! grep -qF -- "$text" "$file" 2>/dev/null; do
        if [ "$(cl_now_ms)" -ge "$deadline" ]; then
            echo "--- $file:" >&2
            cat "$file" >&2 2>/dev/null || true
            fail "'$text' did not appear in $file within ${timeout}s"
        fi
        sleep 0.02
    done
}

# cl_wait_log_count FILE TEXT N [TIMEOUT_S=10]: waits until FILE has at
# least N lines containing TEXT.
cl_wait_log_count() {
    local file=$1 text=$2 n=$3 timeout=$((${4:-10} * CL_WAIT_SCALE)) deadline c
    deadline=$(($(cl_now_ms) + timeout * 1000))
    while :; do
        c=$(grep -cF -- "$text" "$file" 2>/dev/null || true)
        [ "${c:-0}" -ge "$n" ] && return 0
        if [ "$(cl_now_ms)" -ge "$deadline" ]; then
            echo "--- $file:" >&2
            cat "$file" >&2 2>/dev/null || true
            fail "fewer than $n lines with '$text' in $file within ${timeout}s (got ${c:-0})"
        fi
        sleep 0.02
    done
}

# cl_wait_cmd TIMEOUT_S DESCRIPTION CMD...: waits until CMD succeeds
# (polled every 20 ms); fails the test naming DESCRIPTION on timeout.
cl_wait_cmd() {
    local __cl_to=$(($1 * CL_WAIT_SCALE)) __cl_what=$2 __cl_dl
    shift 2
    __cl_dl=$(($(cl_now_ms) + __cl_to * 1000))
    until "$@"; do
        [ "$(cl_now_ms)" -lt "$__cl_dl" ] || fail "timed out after ${__cl_to}s waiting for: $__cl_what"
        sleep 0.02
    done
}

# cl_wait_exit PID TIMEOUT_S VAR: waits (bounded) for our child PID to exit
# and stores its exit status in VAR. Fails the test on timeout.
cl_wait_exit() {
    local __cl_pid=$1 __cl_timeout=$(($2 * CL_WAIT_SCALE)) __cl_var=$3 __cl_deadline __cl_rc=0
    __cl_deadline=$(($(cl_now_ms) + __cl_timeout * 1000))
    while cl_alive "$__cl_pid"; do
        if [ "$(cl_now_ms)" -ge "$__cl_deadline" ]; then
            fail "process $__cl_pid ($(tr '\0' ' ' <"/proc/$__cl_pid/cmdline" 2>/dev/null)) still running after ${__cl_timeout}s"
        fi
        sleep 0.02
    done
    wait "$__cl_pid" || __cl_rc=$?
    printf -v "$__cl_var" '%s' "$__cl_rc"
}

# cl_agent_port LOG: the port from "agent 'NAME' listening on 127.0.0.1:PORT".
cl_agent_port() {
    sed -n "s/.*agent '[^']*' listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p" "$1" | head -n1
}

# Agents started by cl_start_agent(s), by index 0..N-1.
CL_NAMES=()
CL_PIDS=()
CL_PORTS=()
CL_LOGS=()
CL_WORKDIRS=()
CL_AGENT_ARGS=() # --insecure --agent 127.0.0.1:PORT for each (plain TCP needs --insecure)

# cl_start_agent NAME [DYNAMO ARGS...]: a listening agent on an ephemeral
# loopback port, workdir $T/work-NAME, log $T/NAME.log. Waits (60 s max)
# for its "listening" line and appends it to the CL_* arrays.
cl_start_agent() {
    local name=$1 pid='' port log=$T/$1.log wd=$T/work-$1
    shift
    cl_spawn pid /dev/null "$log" "$DYNAMO" --listen 127.0.0.1:0 --insecure --name "$name" --workdir "$wd" "$@"
    cl_wait_log "$log" "agent '$name' listening on 127.0.0.1:" 20
    port=$(cl_agent_port "$log")
    [ -n "$port" ] || fail "no port in $log"
    CL_NAMES+=("$name")
    CL_PIDS+=("$pid")
    CL_PORTS+=("$port")
    CL_LOGS+=("$log")
    CL_WORKDIRS+=("$wd")
    CL_AGENT_ARGS+=(--insecure --agent "127.0.0.1:$port")
}

# cl_start_agents N [PREFIX=node] [DYNAMO ARGS...]: N listening agents
# named PREFIX-1..PREFIX-N.
cl_start_agents() {
    local n=$1 prefix=${2:-node} i
    shift
    [ $# -gt 0 ] && shift
    for ((i = 1; i <= n; i++)); do cl_start_agent "$prefix-$i" "$@"; done
}

# cl_start_dialer VAR NAME HOST:PORT [DYNAMO ARGS...]: an agent that dials
# the manager (--manager); PID in VAR, log $T/NAME.log, workdir $T/work-NAME.
cl_start_dialer() {
    local __cl_var=$1 __cl_name=$2 __cl_mgr=$3 __cl_p
    shift 3
    cl_spawn __cl_p /dev/null "$T/$__cl_name.log" "$DYNAMO" --manager "$__cl_mgr" --insecure \
        --name "$__cl_name" --workdir "$T/work-$__cl_name" "$@"
    printf -v "$__cl_var" '%s' "$__cl_p"
}

# cl_random_port: a loopback TCP port nobody listens on right now, below the
# kernel's ephemeral range (ip_local_port_range), so that no connection of
# another process takes it while a test has it closed for a moment (a relay
# restarted on the same port): 12000 up to that range, or 20000..59999 when it
# starts too low. A race remains: callers retry on "cannot listen".
cl_random_port() {
    local port hex i lo=0 span
    read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
    if [[ ${lo:-0} =~ ^[0-9]+$ ]] && ((lo > 16000)); then
        span=$((lo - 12000))
    else
        lo=0 span=40000
    fi
    for ((i = 0; i < 50; i++)); do
        if ((lo)); then
            port=$((12000 + (RANDOM * 32768 + RANDOM) % span))
        else
            port=$((20000 + (RANDOM * 32768 + RANDOM) % span))
        fi
        printf -v hex '%04X' "$port"
        if ! grep -q ":$hex " /proc/net/tcp /proc/net/tcp6 2>/dev/null; then
            echo "$port"
            return 0
        fi
    done
    fail "no free port found"
}

# cl_listening PID PORT: process PID has a TCP socket listening on PORT.
cl_listening() {
    local hex inode fd
    printf -v hex '%04X' "$2"
    for inode in $(awk -v h=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == h {print $10}' \
        /proc/net/tcp /proc/net/tcp6 2>/dev/null); do
        for fd in "/proc/$1/fd/"*; do
            [ "$(readlink "$fd" 2>/dev/null)" = "socket:[$inode]" ] && return 0
        done
    done
    return 1
}

# cl_start_listen_manager PIDVAR PORTVAR OUT ERR [IOFLEET RUN ARGS...]:
# `iofleet run ARGS --listen 127.0.0.1:PORT` on a random free port, and
# waits (60 s max) until it listens or exits; when the port turns out to be
# taken ("cannot listen"), tries another (5 times). With PORTVAR already set to a
# number, uses that port and does not retry.
cl_start_listen_manager() {
    local __cl_pv=$1 __cl_portv=$2 __cl_out=$3 __cl_err=$4 __cl_port __cl_pid __cl_i __cl_dl
    local __cl_tries=5
    shift 4
    __cl_port=${!__cl_portv:-}
    [ -n "$__cl_port" ] && __cl_tries=1
    for ((__cl_i = 0; __cl_i < __cl_tries; __cl_i++)); do
        [ $__cl_tries = 1 ] || __cl_port=$(cl_random_port)
        [ -n "$__cl_port" ] || fail "no free port"
        cl_spawn __cl_pid "$__cl_out" "$__cl_err" "$IOFLEET" run "$@" --insecure --listen "127.0.0.1:$__cl_port"
        __cl_dl=$(($(cl_now_ms) + 60000))
        while cl_alive "$__cl_pid" && ! cl_listening "$__cl_pid" "$__cl_port"; do
            [ "$(cl_now_ms)" -lt "$__cl_dl" ] || fail "manager $__cl_pid not listening on $__cl_port after 60 s"
            sleep 0.02
        done
        # Gone already: a taken port is retried; any other exit (a short --wait ends
        # before this loop, slowed by a busy machine, saw the socket) is the caller's
        # to judge, so it is not reaped here and cl_wait_exit gets its status.
        if ! cl_alive "$__cl_pid" && grep -qF "cannot listen on 127.0.0.1:$__cl_port" "$__cl_err"; then
            wait "$__cl_pid" || true
            continue
        fi
        printf -v "$__cl_pv" '%s' "$__cl_pid"
        printf -v "$__cl_portv" '%s' "$__cl_port"
        return 0
    done
    cat "$__cl_err" >&2
    fail "could not start a listening manager"
}

# cl_cpu_ticks PID: utime + stime of the process, all threads, in clock ticks.
cl_cpu_ticks() {
    sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'
}

# Table checks on an `iofleet run` stdout.

# cl_rows FILE TYPE: number of rows of TYPE (ALL, NODE, WORKER, TARGET).
cl_rows() { awk -v r="$2" '$1==r{n++} END{print n+0}' "$1"; }

# cl_check_sums FILE: in every table, ALL's IOPS (and read, write IOPS)
# equals the sum of the NODE rows and the sum of the WORKER rows, and in
# every row read_IOPS + write_IOPS = IOPS, within the rounding of the
# printed one-decimal values (0.5). Prints "ALL=... NODES=... WORKERS=...".
# The run must print WORKER rows (iofleet run --rows worker): a table
# without any fails.
# A test with a node lost mid-test (a "NAME(partial)" NODE row, its IOPS over
# its own shorter window) is not summed by rate: its exact counts are checked
# in the result files instead (cluster_lost_results.sh).
cl_check_sums() {
    awk '
    function abs(x) { return x < 0 ? -x : x }
    function check() {
        if (!nt) return
        if (partial) { printf "test %d: partial node (rates over different windows)\n", nt; return }
        if (!nwk) { printf "test %d: no WORKER rows (run with --rows worker)\n", nt; bad = 1; return }
        for (f = 3; f <= 5; f++) {
            if (abs(all[f] - node[f]) > 0.5) { printf "test %d: ALL col %d %.1f != sum of NODE %.1f\n", nt, f, all[f], node[f]; bad = 1 }
            if (abs(all[f] - wk[f]) > 0.5) { printf "test %d: ALL col %d %.1f != sum of WORKER %.1f\n", nt, f, all[f], wk[f]; bad = 1 }
        }
        printf "test %d: ALL=%.1f NODES=%.1f WORKERS=%.1f\n", nt, all[3], node[3], wk[3]
    }
    /^== test/ { check(); nt++; partial = 0; nwk = 0; for (f = 3; f <= 5; f++) { all[f] = 0; node[f] = 0; wk[f] = 0 } }
    $1 == "NODE" && $2 ~ /\(partial\)$/ { partial = 1 }
    $1 == "ALL" || $1 == "NODE" || $1 == "WORKER" || $1 == "TARGET" {
        if (abs($4 + $5 - $3) > 0.5) { printf "%s %s: read %s + write %s != IOPS %s\n", $1, $2, $4, $5, $3; bad = 1 }
    }
    $1 == "ALL" { for (f = 3; f <= 5; f++) all[f] = $f }
    $1 == "NODE" { for (f = 3; f <= 5; f++) node[f] += $f }
    $1 == "WORKER" { nwk++; for (f = 3; f <= 5; f++) wk[f] += $f }
    END { check(); if (!nt) { print "no table"; bad = 1 } exit bad }' "$1"
}

# cl_header FILE [N=1]: the Nth "== test" header line.
cl_header() { grep '^== test' "$1" | sed -n "${2:-1}p"; }

# cl_skew_ms FILE [N=1]: the start skew of the Nth test, in ms.
cl_skew_ms() { cl_header "$1" "${2:-1}" | sed -n 's/.*start skew \([0-9.]*\) ms.*/\1/p'; }

# cl_dump: every log in $T, for a failure's context.
cl_dump() {
    local f
    for f in "$T"/*.log "$T"/*.out "$T"/*.err; do
        [ -f "$f" ] || continue
        echo "--- $f"
        cat "$f"
    done >&2
}

# cl_fail MSG: fail with every log shown.
cl_fail() {
    cl_dump
    fail "$*"
}

# Known product bugs: a check of the correct behaviour that currently fails
# is recorded instead of stopping the test, so the rest of the test still
# runs; cl_done (the last line of a test) then fails naming each of them.
# IOF_KNOWN_BUGS=warn makes cl_done only print them (to check the rest of a
# test while a bug is open).
CL_BUGS=()

# cl_expect_fixed DESCRIPTION CMD...: CMD checks the correct behaviour.
cl_expect_fixed() {
    local what=$1
    shift
    if ! "$@" >/dev/null; then
        CL_BUGS+=("$what")
        echo "PRODUCT BUG (recorded, the test fails at the end): $what" >&2
    fi
}

cl_done() {
    local b
    [ ${#CL_BUGS[@]} = 0 ] && return 0
    for b in "${CL_BUGS[@]}"; do echo "PRODUCT BUG: $b" >&2; done
    if [ "${IOF_KNOWN_BUGS:-}" = warn ]; then
        echo "warning: ${#CL_BUGS[@]} product bug(s) ignored (IOF_KNOWN_BUGS=warn)" >&2
        return 0
    fi
    fail "${#CL_BUGS[@]} product bug(s), see above"
}

# --- raw protocol, for fake peers (bash /dev/tcp) ---------------------------------------

# cl_frame JSON: writes one frame (header + JSON payload) to stdout.
cl_frame() {
    local LC_ALL=C
    local n=${#1} # bytes, not characters
    # shellcheck disable=SC2059
    printf "IF\\x01\\x00\\x$(printf %02x $((n >> 24 & 255)))\\x$(printf %02x $((n >> 16 & 255)))\\x$(printf %02x $((n >> 8 & 255)))\\x$(printf %02x $((n & 255)))"
    printf '%s' "$1"
}

# cl_raw_session PORT REPLY SECONDS: connects to
# 127.0.0.1:PORT, runs the shell command in $CL_SEND with its stdout on the
# socket, then stores what the peer sends until it closes the connection
# (at most SECONDS) in the file REPLY, binary bytes shown as '.'.
# Writes to a peer that already closed are ignored.
cl_raw_session() {
    local port=$1 reply=$2 secs=$3
    (
        exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
        (eval "$CL_SEND") >&3 2>/dev/null || true
        timeout "$secs" cat <&3 2>/dev/null | LC_ALL=C tr -c '[:print:]\n' '.' >"$reply" || true
        exec 3>&-
    ) || fail "cannot connect to 127.0.0.1:$port"
}
