# SPDX-License-Identifier: Apache-2.0
# An agent restarted in the middle of a campaign: the manager reports it
# lost in the test it dropped out of, the test finishes on the others, the
# restarted agent reconnects (--agent: redialled; --listen: it dials in
# again), prepares and takes part in the next tests; the run exits 1.
source "$(dirname "$0")/lib/common.bash"

plan p.json <<'P'
{"name": "rejoin", "run": {"duration": "2s", "interval": "500ms"},
 "specs": [{"name": "one", "lines": [{"size": "4k", "burst": 32, "delay": "1ms"}]},
           {"name": "two", "lines": [{"size": "4k", "burst": 32, "delay": "1ms"}]},
           {"name": "three", "lines": [{"size": "4k", "burst": 32, "delay": "1ms"}]}],
 "workers": [{"engine": "null", "targets": [{"path": "t.dat", "size": "1m"}]}]}
P

check_tables() { # OUT ERR
    awk '/^== test 1\/3/ { t = 1 } /^== test 2\/3/ { t = 2 } /^== test 3\/3/ { t = 3 }
         $1 == "NODE" && $2 !~ /\(/ { n[t]++ } $1 == "NODE" && $2 ~ /\((partial|lost-before-start)\)$/ { p[t]++ }
         /no result/ { nr[t]++ }
         END { exit !(n[1] == 1 && p[1] == 1 && nr[1] == 1 && n[2] == 2 && n[3] == 2) }' "$1" ||
        { cat "$1"; fail "expected 1 node (+1 partial without result) in test 1, 2 nodes in tests 2 and 3"; }
    expect_in "$2" "agent n2 ("
    expect_in "$2" "is back; it takes part from the next test"
}

# --agent: the manager dials the restarted agent again.
iof_start_agent n1 --name n1
ep1=$AGENT_EP
iof_start_agent n2 --name n2
ep2=$AGENT_EP
pid2=$AGENT_PID
"$IOFLEET" run "$T/p.json" --insecure --agent "$ep1" --agent "$ep2" --heartbeat-ms 300 --quiet \
    >"$T/out" 2>"$T/err" &
mpid=$!
iof_on_exit "kill -9 $mpid 2>/dev/null"
for _ in $(seq 100); do grep -q "test 1 done\|plan 'rejoin'" "$T/n2.log" && break; sleep 0.05; done
sleep 1
kill -9 "$pid2"
sleep 0.3
"$IOF_BIN/dynamo" --listen "$ep2" --insecure --name n2 --workdir "$T/n2-work" 2>"$T/n2b.log" &
iof_on_exit "kill $! 2>/dev/null"
rc=0
wait "$mpid" || rc=$?
[ "$rc" = 1 ] || { cat "$T/err"; fail "exit $rc, expected 1 (an agent was lost)"; }
check_tables "$T/out" "$T/err"
ok "--agent: restarted agent redialled and ran tests 2 and 3"

# --listen: the restarted agent dials the manager again by itself.
port=
for p in $(shuf -i 20000-60000 -n 20); do
    "$IOFLEET" run "$T/p.json" --listen "127.0.0.1:$p" --insecure --expect 2 --wait 10 --heartbeat-ms 300 \
        --quiet >"$T/out2" 2>"$T/err2" &
    mpid=$!
    sleep 0.3
    if kill -0 "$mpid" 2>/dev/null; then port=$p; break; fi
done
[ -n "$port" ] || fail "no free port for the manager"
iof_on_exit "kill -9 $mpid 2>/dev/null"
"$IOF_BIN/dynamo" --manager "127.0.0.1:$port" --insecure --name n1 --workdir "$T/d1" 2>"$T/d1.log" &
iof_on_exit "kill $! 2>/dev/null"
"$IOF_BIN/dynamo" --manager "127.0.0.1:$port" --insecure --name n2 --workdir "$T/d2" 2>"$T/d2.log" &
dpid=$!
for _ in $(seq 200); do grep -q "plan 'rejoin'" "$T/d2.log" && break; sleep 0.05; done
sleep 1
kill -9 "$dpid"
sleep 0.3
"$IOF_BIN/dynamo" --manager "127.0.0.1:$port" --insecure --name n2 --workdir "$T/d2" 2>"$T/d2b.log" &
iof_on_exit "kill $! 2>/dev/null"
rc=0
wait "$mpid" || rc=$?
[ "$rc" = 1 ] || { cat "$T/err2"; fail "--listen: exit $rc, expected 1"; }
check_tables "$T/out2" "$T/err2"
ok "--listen: restarted agent dialled back in and ran tests 2 and 3"
