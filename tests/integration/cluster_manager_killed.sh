# SPDX-License-Identifier: Apache-2.0
# The dead-man rule: when the manager vanishes mid-test, the agent stops its
# I/O within 3 heartbeats and goes back to waiting.
# 1. SIGKILL the manager (the connection drops).
# 2. SIGSTOP the manager (the connection stays open, the manager goes
#    silent): the agent notices 3 heartbeat periods after the manager's last
#    frame (which came before the signal), the documented figure, plus the
#    time this script takes to see the log line.
# The agent's CPU time is the evidence: a null-engine worker burns a core
# while it runs and nothing once stopped. Each time a new manager then runs.
# 3. The manager is killed while the agent writes a test file (prepare):
#    the writing stops too; SIGTERM then ends the agent promptly.
source "$(dirname "$0")/lib/cluster.bash"

hb=500
hz=$(getconf CLK_TCK)
cl_start_agent solo --heartbeat-ms $hb
apid=${CL_PIDS[0]} alog=${CL_LOGS[0]}

# Full speed: one worker spins a core.
plan long.json <<'P'
{"name": "mgr-killed", "run": {"ramp": "200ms", "duration": "30s", "interval": "500ms"},
 "specs": [{"name": "spin", "lines": [{"size": "4k", "read": 100}]}],
 "workers": [{"engine": "null", "queue_depth": 4, "targets": [{"path": "n", "size": "64m"}]}]}
P
plan short.json <<'P'
{"name": "after", "run": {"ramp": "200ms", "duration": "1s", "interval": "500ms"},
 "specs": [{"name": "4k", "lines": [{"size": "4k", "burst": 16, "delay": "1ms"}]}],
 "workers": [{"engine": "null", "queue_depth": 2, "targets": [{"path": "n", "size": "64m"}]}]}
P

# cpu_pct SECONDS: the agent's CPU use over SECONDS, in % of one core.
cpu_pct() {
    local a b t0 t1
    a=$(cl_cpu_ticks "$apid")
    t0=$(cl_now_ms)
    sleep "$1"
    b=$(cl_cpu_ticks "$apid")
    t1=$(cl_now_ms)
    echo $(((b - a) * 100 * 1000 / hz / (t1 - t0)))
}

# workers: the agent's worker threads (named "worker N"; joined when a test stops).
workers() { cat /proc/"$apid"/task/*/comm 2>/dev/null | grep -c '^worker ' || true; }
no_workers() { [ "$(workers)" = 0 ]; }

# dead_man KILLSIG LOGTEXT WHAT: runs the long test, sends KILLSIG to the
# manager 2 s in, and checks the agent stops within 3 heartbeats (+ 200 ms
# to see it: log polling on a loaded machine): it says so, its worker threads
# are gone and it uses no CPU.
dead_man() {
    local sig=$1 text=$2 what=$3 mgr t0 t1 busy idle nlost
    nlost=$(grep -c "manager 'iofleet' lost (" "$alog" || true)
    cl_spawn mgr "$T/$what.out" "$T/$what.err" "$IOFLEET" run "$T/long.json" \
        "${CL_AGENT_ARGS[@]}" --heartbeat-ms $hb --wait 10
    cl_wait_log_count "$T/$what.err" "[run] test 1/1" 3 10 # ~2 s in
    busy=$(workers)
    [ "$busy" -ge 1 ] || cl_fail "$what: no worker thread in the agent while running: the check below would prove nothing"
    kill "-$sig" "$mgr"
    t0=$(cl_now_ms)
    cl_wait_log_count "$alog" "manager 'iofleet' lost (" $((nlost + 1)) 6
    t1=$(cl_now_ms)
    grep "manager 'iofleet' lost (" "$alog" | tail -n1 | grep -qiE "$text" ||
        cl_fail "$what: agent's log: $(grep "manager 'iofleet' lost (" "$alog" | tail -n1)"
    grep "manager 'iofleet' lost (" "$alog" | tail -n1 | grep -qF "): stopping all I/O" ||
        cl_fail "$what: agent did not say it stops I/O"
    [ $((t1 - t0)) -le $((3 * hb + 200)) ] ||
        cl_fail "$what: agent noticed after $((t1 - t0)) ms, more than 3 heartbeats of $hb ms"
    cl_wait_cmd 2 "$what: the agent's worker threads joined" no_workers
    idle=$(cpu_pct 1)
    [ "$idle" -lt 5 ] || cl_fail "$what: agent still uses $idle% CPU after the manager was lost"
    cl_alive "$apid" || cl_fail "$what: agent died"
    ok "$what: agent stopped I/O $((t1 - t0)) ms after the manager went ($busy worker(s) -> none, $idle% CPU): $(grep "manager 'iofleet' lost (" "$alog" | tail -n1)"
    LAST_MGR=$mgr
}

# A killed process's socket closes with a FIN, or with a reset when data it
# had not read was still queued (the agent's last stats): either is a loss.
dead_man KILL "manager 'iofleet' lost \((connection closed by the peer|connection reset by peer)\): stopping all I/O" sigkill
cl_wait_exit "$LAST_MGR" 5 rc
[ "$rc" = 137 ] || cl_fail "killed manager: status $rc"

expect_rc 0 "$IOFLEET" run "$T/short.json" "${CL_AGENT_ARGS[@]}" --heartbeat-ms $hb --wait 10
[ "$(cl_rows "$T/out" NODE)" = 1 ] || cl_fail "no NODE row in the run after the killed manager"
awk '$1=="ALL" && $3 > 0 {f=1} END{exit !f}' "$T/out" || cl_fail "no I/O after the killed manager"
ok "agent went back to waiting: a new manager ran"

dead_man STOP "manager 'iofleet' lost \\(no message or heartbeat for " sigstop
expect_in "$alog" "(3 heartbeats missed)): stopping all I/O"
kill -KILL "$LAST_MGR"
cl_wait_exit "$LAST_MGR" 5 rc

expect_rc 0 "$IOFLEET" run "$T/short.json" "${CL_AGENT_ARGS[@]}" --heartbeat-ms $hb --wait 10
[ "$(cl_rows "$T/out" NODE)" = 1 ] || cl_fail "no NODE row in the run after the silent manager"
ok "agent went back to waiting after the silent manager: a new manager ran"

# 3. The manager is killed while the agent prepares a test file: writing the
#    file is I/O too and must stop within 3 heartbeats.
cl_start_agent prep --heartbeat-ms $hb
ppid_=${CL_PIDS[1]} plog=${CL_LOGS[1]} big=${CL_WORKDIRS[1]}/big.dat full=$((2 * 1024 * 1024 * 1024))
plan prep.json <<'P'
{"name": "prep-killed", "run": {"ramp": "0s", "duration": "1s", "interval": "500ms"},
 "specs": [{"name": "4k", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "sync", "queue_depth": 1, "targets": [{"path": "big.dat", "size": "2g"}]}]}
P
cl_spawn mgr "$T/prep.out" "$T/prep.err" "$IOFLEET" run "$T/prep.json" \
    --insecure --agent "127.0.0.1:${CL_PORTS[1]}" --heartbeat-ms $hb --wait 10
cl_wait_log "$T/prep.err" "prep: preparing $big: " 20
kill -KILL "$mgr"
t0=$(cl_now_ms)
cl_wait_exit "$mgr" 5 rc
size_at() { stat -c %s "$big" 2>/dev/null || echo 0; }
s0=$(size_at)
# A FIN, or a reset when the manager had not read the agent's last message.
cl_wait_log "$plog" "session with manager 'iofleet' ended (" 3
grep "session with manager 'iofleet' ended (" "$plog" | tail -n1 |
    grep -qiE "\((connection closed by the peer|connection reset by peer)\)" ||
    cl_fail "prep: agent's log: $(grep "session with manager 'iofleet' ended (" "$plog" | tail -n1)"
# 3 heartbeats after the kill, then one more second: the file must not grow.
sleep "$(awk -v d=$((3 * hb - ($(cl_now_ms) - t0))) 'BEGIN { print (d > 0 ? d / 1000 : 0) }')"
s1=$(size_at)
sleep 1
s2=$(size_at)
if [ "$s2" -ge "$full" ]; then
    echo "note: preparation finished too fast to tell ($s0 -> $s1 -> $s2 bytes)"
else
    cl_expect_fixed "agent keeps preparing (writing) the test file after its manager was killed: $big grew $s0 -> $s1 (1.5 s after the kill) -> $s2 (1 s later) bytes" \
        test $((s2 - s1)) -le $((2 * 1024 * 1024))
fi
ok "manager killed during preparation: file $s0 -> $s1 -> $s2 bytes"
# SIGTERM stops an agent's I/O and ends it (the embedded agent relies on it).
s3=$(size_at)
kill -TERM "$ppid_"
t0=$(cl_now_ms)
gone() { ! cl_alive "$ppid_"; }
for ((i = 0; i < 50; i++)); do gone && break; sleep 0.02; done
t1=$(cl_now_ms)
if [ "$s3" -lt "$full" ]; then
    cl_expect_fixed "agent still running $((t1 - t0)) ms after SIGTERM while preparing a test file ($s3 bytes written at the signal, $(size_at) now)" gone
fi
cl_stop "$ppid_"
cl_done
