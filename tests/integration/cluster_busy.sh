# SPDX-License-Identifier: Apache-2.0
# One manager session per agent: while manager A runs a long test on agent X,
# manager B is refused (exit 3, "busy with manager") and A's run goes on
# undisturbed; SIGINT stops A (exit 130, partial table marked INTERRUPTED)
# and X then serves a new manager.
source "$(dirname "$0")/lib/cluster.bash"

cl_start_agent busy-x
x=("${CL_AGENT_ARGS[@]}")

plan long.json <<'P'
{"name": "busy", "run": {"ramp": "200ms", "duration": "20s", "interval": "250ms"},
 "specs": [{"name": "long", "lines": [{"size": "4k", "read": 50, "burst": 16, "delay": "1ms"}]},
           {"name": "never", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "null", "queue_depth": 2, "targets": [{"path": "n", "size": "64m"}]}]}
P
plan short.json <<'P'
{"name": "short", "run": {"ramp": "200ms", "duration": "1s", "interval": "500ms"},
 "specs": [{"name": "short", "lines": [{"size": "4k", "burst": 16, "delay": "1ms"}]}],
 "workers": [{"engine": "null", "queue_depth": 2, "targets": [{"path": "n", "size": "64m"}]}]}
P

cl_spawn mgr_a "$T/a.out" "$T/a.err" "$IOFLEET" run "$T/long.json" "${x[@]}" --wait 10 --rows worker
cl_wait_log "$T/a.err" "[run] test 1/2" 10

# Manager B while A runs.
t0=$(cl_now_ms)
expect_rc 3 "$IOFLEET" run "$T/short.json" "${x[@]}" --wait 5
t1=$(cl_now_ms)
expect_in "$T/err" "iofleet: agent busy-x (127.0.0.1:${CL_PORTS[0]}): refused: agent busy-x is busy with manager 'iofleet' (127.0.0.1:"
if grep -q '^== test' "$T/out"; then cl_fail "manager B printed a result table"; fi
[ $((t1 - t0)) -lt 3000 ] || cl_fail "the refusal took $((t1 - t0)) ms"
cl_wait_log "${CL_LOGS[0]}" "refused manager 'iofleet' from 127.0.0.1:" 5
expect_in "${CL_LOGS[0]}" ": busy with 'iofleet'"
ok "second manager refused in $((t1 - t0)) ms: $(grep refused "$T/err")"

# A was not disturbed: still running, live lines still coming with 1/1 agents.
cl_alive "$mgr_a" || cl_fail "manager A ended when B was refused"
n=$(grep -c '^\[run\] test 1/2' "$T/a.err")
cl_wait_log_count "$T/a.err" "[run] test 1/2" $((n + 2)) 5
if grep -q 'agent busy-x (' "$T/a.err"; then cl_fail "manager A reported a problem with its agent"; fi
[ "$(grep '^\[run\]' "$T/a.err" | grep -vc 'agents 1/1$')" = 0 ] || cl_fail "A lost its agent"

# SIGINT to A.
kill -INT "$mgr_a"
t0=$(cl_now_ms)
cl_wait_exit "$mgr_a" 15 rc
t1=$(cl_now_ms)
[ "$rc" = 130 ] || cl_fail "manager A exited $rc after SIGINT, expected 130"
[ $((t1 - t0)) -lt 3000 ] || cl_fail "manager A took $((t1 - t0)) ms to stop"
expect_in "$T/a.err" "iofleet: interrupted: stopping the agents and collecting results"
hdr=$(cl_header "$T/a.out")
case "$hdr" in *"== test 1/2: long"*"1 node, start skew"*", INTERRUPTED"*) ;; *) cl_fail "header: $hdr" ;; esac
if grep -q 'test 2/2' "$T/a.out"; then cl_fail "test 2 started after the interrupt"; fi
measured=$(sed -n 's/.*measured \([0-9.]*\) s.*/\1/p' "$T/a.out")
awk -v m="$measured" 'BEGIN { exit !(m > 0.2 && m < 19) }' || cl_fail "measured window $measured s"
[ "$(cl_rows "$T/a.out" NODE)" = 1 ] || cl_fail "partial table without the NODE row"
awk '$1=="ALL" && $3 > 0 {f=1} END{exit !f}' "$T/a.out" || cl_fail "partial table has no I/O"
# The interrupted table must add up like any other (one node: ALL = NODE).
sums=$(cl_check_sums "$T/a.out") || true
cl_expect_fixed "interrupted table: ALL != sum of NODE rows (ALL uses the manager's window, NODE the agent's): $(echo "$sums" | tail -n1)" \
    cl_check_sums "$T/a.out"
cl_wait_log "${CL_LOGS[0]}" "test 1 done (stopped early)" 5
ok "SIGINT: exit 130 in $((t1 - t0)) ms, partial table of ${measured} s"

# X accepts a new manager.
cl_alive "${CL_PIDS[0]}" || cl_fail "agent busy-x died"
expect_rc 0 "$IOFLEET" run "$T/short.json" "${x[@]}" --wait 10
[ "$(cl_rows "$T/out" NODE)" = 1 ] || cl_fail "third run: no NODE row"
awk '$1=="ALL" && $3 > 0 {f=1} END{exit !f}' "$T/out" || cl_fail "third run has no I/O"
ok "busy-x served a new manager after the interrupt"
cl_done
