#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/windows/agent_stop.sh - dynamo.exe stopped in the middle of a test, each way a
# Windows admin stops it at a console: Ctrl-C, Ctrl-Break, and the console window closed
# (sent by win_ctrl_event.exe, tests/windows/ctrl_event.c, as Windows' console sends them:
# a thread at CtrlRoutine in the agent), and Ctrl-C as Wine delivers a terminal's (SIGINT
# to the Wine process). The service's stop is tests/windows/service.sh's. For each:
# - the agent says which event stopped it, ends its I/O and exits 0, logging how long it
#   took ("stopped N ms after Ctrl-Break");
# - measured from outside, the test file (4k random, half writes) is last written at most
#   IOF_STOP_BOUND_MS (default 3000: Wine on a loaded host) after the event was sent, and
#   not after the agent exited; both figures are printed beside the product's bound, 1 s;
# - the manager (the Linux iofleet run) names the agent lost, exits 1 and keeps what it
#   measured: a partial NODE row with I/O, equal to ALL.
# Registered by cmake/windows.cmake, so `scripts/windows test` runs it:
#     agent_stop.sh DYNAMO_EXE WIN_CTRL_EVENT_EXE
# Skips (77) without the Linux build's iofleet ($IOF_LINUX_BIN, default build/bin). The
# agent, its starter and the manager are stopped by their PIDs, and a Wine server this test
# started by its PID too, even on failure.
set -euo pipefail

exe=${1:?usage: agent_stop.sh DYNAMO_EXE WIN_CTRL_EVENT_EXE}
ctl=${2:?usage: agent_stop.sh DYNAMO_EXE WIN_CTRL_EVENT_EXE}
bound=${IOF_STOP_BOUND_MS:-3000}
# shellcheck source=tests/windows/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
win_init stop
agent_pid=''
server_pid=''
mgr_pid=''
cleanup() {
    if [[ -n $mgr_pid ]]; then
        kill -KILL "$mgr_pid" 2>/dev/null || true
        wait "$mgr_pid" 2>/dev/null || true
    fi
    if [[ -n $agent_pid ]]; then
        kill -KILL "$agent_pid" 2>/dev/null || true
        wait "$agent_pid" 2>/dev/null || true
    fi
    # dynamo.exe started by win_ctrl_event.exe: a Wine process whose command line names
    # this test's folder, killed by its PID.
    local p
    for p in /proc/[0-9]*; do
        [[ ${p#/proc/} != "$$" ]] || continue
        if { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -qF "$(basename "$T")"; then
            kill -KILL "${p#/proc/}" 2>/dev/null || true
        fi
    done
    if [[ -n $server_pid ]]; then
        # As in agent_e2e.sh: our server ends Wine's own processes and exits by itself.
        for _ in $(seq 300); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$T"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*" >&2
    for f in "$T"/*.log "$T"/*.err "$T"/*.out; do
        [[ -e $f ]] && { echo "--- $f"; tail -n 30 "$f"; } >&2
    done
    exit 1
}
ok() { echo "ok: $*"; }
now_ns() { date +%s%N; }
# The Windows name of a path of this machine: Wine's Z: drive is /.
winpath() { printf 'Z:%s' "${1//\//\\}"; }

wineserver -f -p5 </dev/null >/dev/null 2>&1 &
server_pid=$!
sleep 1
if ! kill -0 "$server_pid" 2>/dev/null; then
    wait "$server_pid" 2>/dev/null || true
    server_pid=''
fi

mkdir -p "$T/work"
dat=$T/work/iofleet-stop.dat
cat >"$T/plan.json" <<'P'
{"name": "win-stop", "run": {"ramp": "300ms", "duration": "60s", "interval": "500ms"},
 "specs": [{"name": "4k rand 50r", "lines": [{"size": "4k", "read": 50, "random": 100}]}],
 "workers": [{"nodes": ["*"], "count": 1, "engine": "windows", "queue_depth": 16,
              "targets": [{"path": "iofleet-stop.dat", "size": "8m"}]}]}
P

# wait_port LOG: the agent's port from its log (60 s at most).
wait_port() {
    for _ in $(seq 600); do
        port=$(sed -n "s/.*agent 'winnode' listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p" "$1" |
            head -n1)
        [[ -n $port ]] && return 0
        kill -0 "$agent_pid" 2>/dev/null || fail "dynamo.exe exited: $(cat "$1")"
        sleep 0.1
    done
    fail "dynamo.exe did not listen within 60 s"
}

# wait_running ERR: until the manager shows 2 live lines of the test (60 s at most) and
# the test file is being written.
wait_running() {
    local m
    for _ in $(seq 600); do
        [[ $(grep -c '\[run\] test 1/' "$1" 2>/dev/null || true) -ge 2 ]] && break
        kill -0 "$mgr_pid" 2>/dev/null || fail "the manager exited before the test ran"
        sleep 0.1
    done
    m=$(date -r "$dat" +%s%N)
    sleep 0.5
    [[ $(date -r "$dat" +%s%N) != "$m" ]] || fail "the test file is not being written"
}

# stop_case NAME EVENT WHAT: an agent stopped mid-test by EVENT (c, break, close through
# win_ctrl_event.exe; sigint: SIGINT to the Wine process), which it names as WHAT.
stop_case() {
    local name=$1 event=$2 what=$3 log=$T/$1-agent.log rc t0 t1 last ms own
    rm -f "$T/trigger"
    : >"$log" # before the background start opens it: wait_port reads it at once
    if [[ $event == sigint ]]; then
        wine "$exe" --listen 127.0.0.1:0 --insecure --name winnode --workdir "$T/work" \
            </dev/null >/dev/null 2>"$log" &
    else
        wine "$ctl" "$(winpath "$T/trigger")" "$(winpath "$exe")" --listen 127.0.0.1:0 \
            --insecure --name winnode --workdir "$(winpath "$T/work")" \
            </dev/null >"$T/$name-ctl.out" 2>"$log" &
    fi
    agent_pid=$!
    wait_port "$log"
    "$iofleet" run "$T/plan.json" --insecure --agent "127.0.0.1:$port" --wait 60 \
        --json "$T/$name.json" >"$T/$name-mgr.log" 2>"$T/$name-mgr.err" &
    mgr_pid=$!
    wait_running "$T/$name-mgr.err"
    sleep 1
    t0=$(now_ns)
    if [[ $event == sigint ]]; then
        kill -INT "$agent_pid"
    else
        echo "$event" >"$T/trigger.tmp"
        mv "$T/trigger.tmp" "$T/trigger"
    fi
    rc=0
    for _ in $(seq 300); do kill -0 "$agent_pid" 2>/dev/null || break; sleep 0.05; done
    t1=$(now_ns)
    kill -0 "$agent_pid" 2>/dev/null && fail "$name: dynamo.exe still runs 15 s after $what"
    wait "$agent_pid" || rc=$?
    agent_pid=''
    [[ $rc == 0 ]] || fail "$name: dynamo.exe exited $rc after $what, expected 0 (a clean stop)"
    grep -qF "dynamo: info: $what: stopping all I/O and shutting down" "$log" ||
        fail "$name: the agent did not say $what stops it"
    own=$(sed -n "s/.*dynamo: info: stopped \([0-9]*\) ms after $what: every test's I\/O ended.*/\1/p" "$log")
    [[ -n $own ]] || fail "$name: the agent did not log how long its stop took"
    # Measured from outside: the test file's last write, which must not move any more.
    last=$(date -r "$dat" +%s%N)
    sleep 1
    [[ $(date -r "$dat" +%s%N) == "$last" ]] || fail "$name: the test file is written after the agent exited"
    ms=$(((last - t0) / 1000000))
    ((ms < 0)) && ms=0
    ((ms <= bound)) || fail "$name: the test file was last written $ms ms after $what (bound $bound ms)"
    # The manager: the agent lost, what it measured kept.
    win_expect_lost "$name stopped the agent" winnode "$T/$name-mgr.err" "$T/$name.json" both
    ok "$name: $what stopped the agent: its I/O ended $ms ms after the event (measured on the test file; $( ((ms <= 1000)) && echo within || echo OVER) the product's 1 s, asserted <= $bound ms), the agent's own figure $own ms, exit 0 after $(((t1 - t0) / 1000000)) ms; the manager: $(grep -F "iofleet: agent winnode (" "$T/$name-mgr.err" | head -n1)"
}

stop_case ctrl-c c "Ctrl-C"
stop_case ctrl-break break "Ctrl-Break"
stop_case close close "the console's close"
stop_case sigint sigint "Ctrl-C"
