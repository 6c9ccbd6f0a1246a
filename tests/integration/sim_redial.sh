# SPDX-License-Identifier: Apache-2.0
# The simulator's reconnects (iof_simagent --redial, tests/bench/manager-scale
# IOF_SCALE_CUT=1): 6 simulated agents dial a TLS --listen manager (one
# certificate each from `iofleet pki init`); during test 1 SIGUSR1 cuts the
# links of every second session (3). The manager declares those 3 lost, they
# redial with the manager's session tickets, the handshakes are resumed on
# both sides, and the 3 take part in test 2 again with the others.
source "$(dirname "$0")/lib/cluster.bash"

SIM=$IOF_BIN/iof_simagent
[ -x "$SIM" ] || skip "no iof_simagent at $SIM (build the tests)"

# all_in_test2 OUT N: the manager's table of test 2 (in OUT) has N nodes.
all_in_test2() {
    awk '/^== test 2\/2/ { t = 1 } t && /nodes/ { print; exit }' "$1" | grep -q " $2 nodes" ||
        { cat "$1" >&2; cl_fail "test 2 did not run on all $2 nodes"; }
}
# two_tests NAME RAMP: plan NAME.json, two 3 s tests of one null worker per node.
two_tests() {
    plan "$1.json" <<P
{"name": "$1", "run": {"ramp": "$2", "duration": "3s", "interval": "500ms"},
 "specs": [{"name": "one", "lines": [{"size": "4k", "burst": 4, "delay": "5ms"}]},
           {"name": "two", "lines": [{"size": "4k", "burst": 4, "delay": "5ms"}]}],
 "workers": [{"nodes": ["*"], "count": 1, "engine": "null", "queue_depth": 1,
              "targets": [{"path": "sim.dat", "size": "1m"}]}]}
P
}
N=6
PKI=$T/pki
args=()
for ((i = 1; i <= N; i++)); do args+=(--agent "$(printf 'sim-%05u' "$i")"); done
"$IOFLEET" pki init "$PKI" "${args[@]}" >/dev/null || fail "pki init"

plan p.json <<'P'
{"name": "redial", "run": {"ramp": "200ms", "duration": "2s", "interval": "500ms"},
 "specs": [{"name": "one", "lines": [{"size": "4k", "burst": 16, "delay": "1ms"}]},
           {"name": "two", "lines": [{"size": "4k", "burst": 16, "delay": "1ms"}]}],
 "workers": [{"nodes": ["*"], "count": 2, "engine": "null", "queue_depth": 1,
              "targets": [{"path": "sim.dat", "size": "1m"}]}]}
P

port=''
cl_start_listen_manager mgr port "$T/m.out" "$T/m.err" "$T/p.json" --expect $N --wait 30 \
    --tls-ca "$PKI/ca.pem" --tls-cert "$PKI/manager.pem" --tls-key "$PKI/manager-key.pem" \
    --verbose --no-db
cl_spawn sim "$T/sim.out" "$T/sim.err" "$SIM" --manager "127.0.0.1:$port" --count $N \
    --tls-dir "$PKI" --redial --connect-timeout 30 --verbose
cl_wait_log "$T/m.err" "test 1 interval 1:" 30
kill -USR1 "$sim"
cl_wait_log "$T/sim.err" "SIGUSR1: cut 3 sessions; they redial" 5
cl_wait_log "$T/sim.err" "all 3 redialled sessions welcomed again" 20
cl_wait_exit "$mgr" 60 rc
[ "$rc" = 1 ] || { cat "$T/m.err" >&2; cl_fail "manager exited $rc, expected 1 (3 agents were lost)"; }
cl_wait_exit "$sim" 30 src
[ "$src" = 0 ] || { cat "$T/sim.out" "$T/sim.err" >&2; cl_fail "simulator exited $src, expected 0"; }
[ "$(grep -c ': lost: ' "$T/m.err")" = 3 ] || cl_fail "expected 3 agents lost"
[ "$(grep -c 'is back; it takes part from the next test' "$T/m.err")" = 3 ] ||
    cl_fail "expected 3 agents back"
expect_in "$T/m.err" "TLS handshakes with agents that dialled in: $N full, 3 resumed"
expect_in "$T/sim.out" "tls_full $N tls_resumed 3"
expect_in "$T/sim.out" "redials 3 rewelcomed 3"
all_in_test2 "$T/m.out" $N
ok "3 cut sessions redialled with resumed TLS sessions and ran test 2 with the other 3"
# Half of a larger fleet cut at once: every returning agent finds a slot at
# once (a lost agent keeps its own slot, with the rows of the test it dropped
# out of, until that test ends), none is turned away to redial later.
N2=200
two_tests p2 200ms
port2=''
cl_start_listen_manager mgr2 port2 "$T/m2.out" "$T/m2.err" "$T/p2.json" --expect $N2 --wait 30 \
    --verbose --no-db
cl_spawn sim2 "$T/sim2.out" "$T/sim2.err" "$SIM" --manager "127.0.0.1:$port2" --count $N2 \
    --redial --connect-timeout 30 --verbose
cl_wait_log "$T/m2.err" "test 1 interval 1:" 30
kill -USR1 "$sim2"
cl_wait_log "$T/sim2.err" "SIGUSR1: cut $((N2 / 2)) sessions; they redial" 5
cl_wait_log "$T/sim2.err" "all $((N2 / 2)) redialled sessions welcomed again" 20
cl_wait_exit "$mgr2" 60 rc
[ "$rc" = 1 ] || { tail -20 "$T/m2.err" >&2; cl_fail "manager exited $rc, expected 1"; }
cl_wait_exit "$sim2" 30 src
! grep -q "agent slots are taken" "$T/m2.err" ||
    cl_fail "returning agents turned away: $(grep -c 'agent slots are taken' "$T/m2.err")"
[ "$(grep -c 'is back; it takes part from the next test' "$T/m2.err")" = $((N2 / 2)) ] ||
    cl_fail "expected $((N2 / 2)) agents back"
all_in_test2 "$T/m2.out" $N2
ok "$((N2 / 2)) of $N2 agents cut at once: every one found a slot and ran test 2"

# An agent that comes back while others still prepare for the next test
# gets the plan too, and the run goes on (it used to wait for that agent's
# preparation forever). 4 plain sessions whose preparations take 3 s:
# SIGUSR1 in test 1 cuts sim-00001 and sim-00003, which come back during
# test 1 and prepare after it; SIGUSR2 then cuts sim-00002 and sim-00004,
# which come back while those two still prepare.
N3=4
two_tests p3 0s
port3=''
cl_start_listen_manager mgr3 port3 "$T/m3.out" "$T/m3.err" "$T/p3.json" --expect $N3 --wait 30 \
    --verbose --no-db
cl_spawn sim3 "$T/sim3.out" "$T/sim3.err" "$SIM" --manager "127.0.0.1:$port3" --count $N3 \
    --redial --prepare-ms 3000 --connect-timeout 30 --verbose
cl_wait_log "$T/m3.err" "test 1 interval 1:" 30
kill -USR1 "$sim3"
cl_wait_log "$T/sim3.err" "all 2 redialled sessions welcomed again" 10
cl_wait_log "$T/m3.out" "== test 1/2" 20
kill -USR2 "$sim3"
cl_wait_log "$T/sim3.err" "SIGUSR2: cut 2 sessions; they redial" 5
cl_wait_exit "$mgr3" 40 rc
[ "$rc" = 1 ] || { tail -20 "$T/m3.err" >&2; cl_fail "manager exited $rc, expected 1 (agents were lost)"; }
cl_wait_exit "$sim3" 30 src
grep -q "sim-00002.*is back\|sim-00004.*is back" "$T/m3.err" ||
    cl_fail "the second pair did not come back: $(tail -5 "$T/m3.err")"
all_in_test2 "$T/m3.out" $N3
ok "agents back while others prepared: given the plan, test 2 ran on all $N3 nodes"

cl_done
