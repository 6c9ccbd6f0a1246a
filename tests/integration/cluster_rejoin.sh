# SPDX-License-Identifier: Apache-2.0
# An agent restarted in the middle of a campaign: the manager reports it
# lost in the test it dropped out of, the test finishes on the others, the
# restarted agent reconnects (--agent: redialled; --listen: it dials in
# again), prepares and takes part in the next tests; the run exits 1.
# Decided by events, not by time: the agent is killed once the manager has
# merged test 1's first interval from both agents, restarted once it is
# gone, and must be back in the test after its "is back" line (test 2 lasts
# 8 s so that a slow machine still brings it back before test 3).
source "$(dirname "$0")/lib/cluster.bash"

plan p.json <<'P'
{"name": "rejoin", "run": {"ramp": "1s", "duration": "3s", "interval": "500ms"},
 "specs": [{"name": "one", "lines": [{"size": "4k", "burst": 32, "delay": "1ms"}]},
           {"name": "two", "duration": "8s", "lines": [{"size": "4k", "burst": 32, "delay": "1ms"}]},
           {"name": "three", "lines": [{"size": "4k", "burst": 32, "delay": "1ms"}]}],
 "workers": [{"engine": "null", "targets": [{"path": "t.dat", "size": "1m"}]}]}
P

# check_tables OUT ERR: test 1 has n1 and n2 lost in it without a result;
# test 2 has n2 too or says it is absent; test 3 has both nodes.
check_tables() {
    awk '/^== test 1\/3/ { t = 1 } /^== test 2\/3/ { t = 2 } /^== test 3\/3/ { t = 3 }
         $1 == "NODE" && $2 !~ /\(/ { n[t]++ } $1 == "NODE" && $2 ~ /\((partial|lost-before-start)\)$/ { p[t]++ }
         /no result/ { nr[t]++ } /node n2: absent/ { ab[t]++ }
         END { exit !(n[1] == 1 && p[1] == 1 && nr[1] == 1 && (n[2] == 2 || (n[2] == 1 && ab[2] == 1)) && n[3] == 2) }' "$1" ||
        { cat "$1" "$2"; fail "expected 1 node (+1 partial without result) in test 1, n2 back by test 3"; }
    expect_in "$2" "agent n2 ("
    expect_in "$2" "is back; it takes part from the next test"
}

# kill_in_test_1 PID ERR: kills agent PID once the manager (stderr ERR, --verbose) has
# merged test 1's first interval from both agents, and waits until it is gone.
kill_in_test_1() {
    cl_wait_log "$2" "test 1 interval 0: 2 of 2 agents" 60
    kill -9 "$1"
    wait "$1" 2>/dev/null || true
}

# --agent: the manager dials the restarted agent again.
iof_start_agent n1 --name n1
ep1=$AGENT_EP
iof_start_agent n2 --name n2
ep2=$AGENT_EP
pid2=$AGENT_PID
"$IOFLEET" run "$T/p.json" --insecure --agent "$ep1" --agent "$ep2" --heartbeat-ms 300 --quiet \
    --verbose >"$T/out" 2>"$T/err" &
mpid=$!
iof_on_exit "kill -9 $mpid 2>/dev/null"
kill_in_test_1 "$pid2" "$T/err"
cl_spawn pid2 /dev/null "$T/n2b.log" "$DYNAMO" --listen "$ep2" --insecure --name n2 --workdir "$T/n2-work"
rc=0
wait "$mpid" || rc=$?
[ "$rc" = 1 ] || { cat "$T/err"; fail "exit $rc, expected 1 (an agent was lost)"; }
check_tables "$T/out" "$T/err"
ok "--agent: restarted agent redialled and ran again"

# --listen: the restarted agent dials the manager again by itself.
port=
cl_start_listen_manager mpid port "$T/out2" "$T/err2" "$T/p.json" --expect 2 --wait 60 \
    --heartbeat-ms 300 --quiet --verbose
cl_start_dialer dpid1 n1 "127.0.0.1:$port"
cl_start_dialer dpid n2 "127.0.0.1:$port"
kill_in_test_1 "$dpid" "$T/err2"
cl_spawn dpid /dev/null "$T/n2b-dial.log" "$DYNAMO" --manager "127.0.0.1:$port" --insecure --name n2 \
    --workdir "$T/work-n2"
cl_wait_exit "$mpid" 120 rc
[ "$rc" = 1 ] || { cat "$T/err2"; fail "--listen: exit $rc, expected 1"; }
check_tables "$T/out2" "$T/err2"
ok "--listen: restarted agent dialled back in and ran again"
