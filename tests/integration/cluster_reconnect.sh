# SPDX-License-Identifier: Apache-2.0
# An agent started with --manager before the manager listens retries with
# capped exponential backoff and joins once the manager is up. When a run
# ends (normally or interrupted), the agent dials again, and the next manager
# on the same port gets it.
source "$(dirname "$0")/lib/cluster.bash"

plan p.json <<'P'
{"name": "reconnect", "run": {"ramp": "200ms", "duration": "1s", "interval": "500ms"},
 "specs": [{"name": "4k", "lines": [{"size": "4k", "burst": 16, "delay": "1ms"}]}],
 "workers": [{"engine": "null", "queue_depth": 2, "targets": [{"path": "n", "size": "64m"}]}]}
P

port=$(cl_random_port)
[ -n "$port" ] || fail "no free port"
cl_start_dialer ag early "127.0.0.1:$port"
alog=$T/early.log
expect_agent_ok() { cl_alive "$ag" || cl_fail "agent 'early' died"; }

# Nobody listens: it retries after 0.25-0.5 s, then 0.5-1 s (jittered backoff).
cl_wait_log "$alog" "agent 'early' dialling manager 127.0.0.1:$port" 5
cl_wait_log_count "$alog" "cannot reach manager 127.0.0.1:$port: connection refused; retrying in" 2 5
delays=$(sed -n 's/.*connection refused; retrying in \([0-9.]*\) s.*/\1/p' "$alog" | head -n 2 | tr '\n' ' ')
read -r d1 d2 <<<"$delays"
awk -v a="$d1" -v b="$d2" 'BEGIN { exit !(a >= 0.2 && a <= 0.5 && b >= 0.5 && b <= 1.0) }' ||
    cl_fail "redial delays '$delays', expected 0.25-0.5 s then 0.5-1 s"
sleep 1 # the manager comes 1.5 s after the agent
t0=$(cl_now_ms)
expect_agent_ok
ok "agent retries with backoff: $(grep -c 'cannot reach manager' "$alog") attempts so far"

# The manager comes up on that port.
cl_start_listen_manager mgr port "$T/m1.out" "$T/m1.err" "$T/p.json" --expect 1 --wait 15
cl_wait_exit "$mgr" 20 rc
t1=$(cl_now_ms)
[ "$rc" = 0 ] || cl_fail "first run exited $rc, expected 0"
expect_in "$T/m1.err" "iofleet: 1 agent ready: early"
[ "$(cl_rows "$T/m1.out" NODE)" = 1 ] || cl_fail "first run: no NODE row"
awk '$1=="NODE" && $2=="early" && $3 > 0 {f=1} END{exit !f}' "$T/m1.out" || cl_fail "first run: no I/O"
# Backoff 0.5, 1, 2 s...: it joined within ~4 s (+ the 1.7 s run).
[ $((t1 - t0)) -lt 9000 ] || cl_fail "first run finished $((t1 - t0)) ms after the manager started"
ok "late manager: agent joined, run succeeded ($((t1 - t0)) ms)"

# Between managers the agent dials again; the next manager on the same port
# gets it. This one is interrupted.
sleep 0.3
cl_start_listen_manager mgr port "$T/m2.out" "$T/m2.err" "$T/p.json" --expect 1 --wait 15 \
    --set run.duration=20s
cl_wait_log "$T/m2.err" "[run] test 1/1" 10
kill -INT "$mgr"
cl_wait_exit "$mgr" 15 rc
[ "$rc" = 130 ] || cl_fail "interrupted run exited $rc, expected 130"
expect_in "$T/m2.out" "INTERRUPTED"
cl_wait_log "$alog" "test 1 done (stopped early)" 5
expect_agent_ok
ok "second manager on the same port: agent reconnected, run interrupted (130)"

t0=$(cl_now_ms)
cl_start_listen_manager mgr port "$T/m3.out" "$T/m3.err" "$T/p.json" --expect 1 --wait 15
cl_wait_exit "$mgr" 20 rc
t1=$(cl_now_ms)
[ "$rc" = 0 ] || cl_fail "third run exited $rc, expected 0"
awk '$1=="NODE" && $2=="early" && $3 > 0 {f=1} END{exit !f}' "$T/m3.out" || cl_fail "third run: no I/O"
[ "$(grep -c "session with manager 'iofleet' (127.0.0.1:$port)" "$alog")" = 3 ] ||
    cl_fail "expected 3 sessions in the agent's log"
ok "third manager on the same port: agent reconnected, run succeeded ($((t1 - t0)) ms)"
