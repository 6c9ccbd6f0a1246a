# SPDX-License-Identifier: Apache-2.0
# dynamo as PID 1 (a container's init): in a new PID namespace, where the kernel
# drops every signal PID 1 has no handler for, SIGTERM in the middle of a test
# stops its I/O (the manager sees the agent go: exit 1, the test's measured I/O
# kept), and dynamo exits 0 within seconds; SIGINT the same when idle. This is
# what `podman stop`/Kubernetes do to the image's entry point.
source "$(dirname "$0")/lib/common.bash"
command -v unshare >/dev/null 2>&1 || skip "unshare (util-linux) not installed"
unshare --pid --fork --mount-proc true 2>/dev/null ||
    unshare --user --map-root-user --pid --fork --mount-proc true 2>/dev/null ||
    skip "cannot make a PID namespace here (needs root or user namespaces)"
ns=(unshare --pid --fork --mount-proc)
unshare --pid --fork --mount-proc true 2>/dev/null || ns=(unshare --user --map-root-user --pid --fork --mount-proc)

# start_pid1 NAME: dynamo --listen unix:$T/NAME.sock as PID 1 of a new PID
# namespace; sets NS_PID (unshare) and DYN_PID (dynamo, seen from here).
start_pid1() {
    local sock=$T/$1.sock
    "${ns[@]}" sh -c 'echo "pid in namespace: $$" >&2; exec "$0" "$@"' \
        "$IOF_BIN/dynamo" --listen "unix:$sock" --workdir "$T/$1-work" 2>"$T/$1.log" &
    NS_PID=$!
    iof_on_exit "kill -KILL $NS_PID 2>/dev/null"
    for _ in $(seq 200); do [ -S "$sock" ] && break; sleep 0.05; done
    [ -S "$sock" ] || { cat "$T/$1.log"; fail "dynamo as PID 1 did not listen"; }
    DYN_PID=$(awk '{print $1}' "/proc/$NS_PID/task/$NS_PID/children")
    [ -n "$DYN_PID" ] || fail "no child of unshare"
    grep -q 'pid in namespace: 1$' "$T/$1.log" || { cat "$T/$1.log"; fail "dynamo is not PID 1 there"; }
    iof_on_exit "kill -KILL $DYN_PID 2>/dev/null"
}
# wait_exit PID SECONDS: waits for unshare (which exits with dynamo's status)
# to end; sets RC to its exit status, or "timeout".
wait_exit() {
    local i
    for i in $(seq $(($2 * 20))); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.05
    done
    if kill -0 "$1" 2>/dev/null; then
        RC=timeout
        return
    fi
    RC=0
    wait "$1" || RC=$?
}

# SIGTERM in the middle of a test.
start_pid1 busy
"$IOFLEET" run "$IOF_SRC/configs/quickstart.json" --agent "unix:$T/busy.sock" \
    --set 'workers[0].engine=null' --set run.duration=60s --set run.ramp=0s \
    --quiet --json "$T/busy.json" >"$T/run.out" 2>"$T/run.err" &
RUN_PID=$!
iof_on_exit "kill $RUN_PID 2>/dev/null"
for _ in $(seq 200); do grep -q 'running\|test 1' "$T/busy.log" "$T/run.err" 2>/dev/null && break; sleep 0.05; done
sleep 2
t0=$(date +%s%N)
kill -TERM "$DYN_PID"
wait_exit "$NS_PID" 10
rc=$RC
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$rc" = 0 ] || { cat "$T/busy.log"; fail "dynamo as PID 1: SIGTERM during a test gave exit '$rc'"; }
grep -q 'signal 15' "$T/busy.log" || { cat "$T/busy.log"; fail "dynamo did not log the signal"; }
rrc=0
wait "$RUN_PID" || rrc=$?
[ "$rrc" = 1 ] || { cat "$T/run.err"; fail "iofleet run exited $rrc, expected 1 (agent lost)"; }
ios=$(jq '[.tests[0].results[] | select(.row_type == "ALL") | .read_ios + .write_ios] | add' "$T/busy.json")
[ "${ios:-0}" -gt 0 ] || fail "the interrupted test kept no measured I/O ($ios)"
ok "PID 1, SIGTERM mid-test: exit 0 after $ms ms, manager exit 1 with $ios I/Os kept"

# SIGINT when idle.
start_pid1 idle
kill -INT "$DYN_PID"
wait_exit "$NS_PID" 10
rc=$RC
[ "$rc" = 0 ] || { cat "$T/idle.log"; fail "dynamo as PID 1: SIGINT when idle gave exit '$rc'"; }
ok "PID 1, SIGINT when idle: exit 0"
