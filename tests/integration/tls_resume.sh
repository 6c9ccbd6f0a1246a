# SPDX-License-Identifier: Apache-2.0
# TLS session resumption on reconnect (certificates from `iofleet pki init`).
# Two agents dial a --listen manager, node1 through a loopback relay (node2
# directly, so that the run goes on while node1 is away); the first
# connections are full handshakes. Mid-run the relay is killed and restarted
# (a lost link; both processes stay up): the agent redials, offers the
# manager's ticket, and the reconnect is resumed on both sides, the manager
# still checking the agent's name against the certificate of the session; the
# agent takes part again from the next test (test 2 lasts 8 s, so that a
# busy machine still has it back by test 3). Then a new manager process on
# the same port: the agent offers the old ticket, which that manager cannot
# decrypt (its own ticket keys), so the handshake is a full one, certificates
# verified, and the run works.
source "$(dirname "$0")/lib/cluster.bash"
command -v python3 >/dev/null || skip "python3 not installed (the loopback relay)"

PKI=$T/pki
"$IOFLEET" pki init "$PKI" --agent node1 --agent node2 >/dev/null || fail "pki init"
tls_mgr=(--tls-ca "$PKI/ca.pem" --tls-cert "$PKI/manager.pem" --tls-key "$PKI/manager-key.pem")
tls_node1=(--tls-ca "$PKI/ca.pem" --tls-cert "$PKI/node1.pem" --tls-key "$PKI/node1-key.pem")
tls_node2=(--tls-ca "$PKI/ca.pem" --tls-cert "$PKI/node2.pem" --tls-key "$PKI/node2-key.pem")

plan p.json <<'P'
{"name": "resume", "run": {"ramp": "1s", "duration": "2s", "interval": "500ms"},
 "specs": [{"name": "one", "lines": [{"size": "4k", "burst": 16, "delay": "1ms"}]},
           {"name": "two", "duration": "8s", "lines": [{"size": "4k", "burst": 16, "delay": "1ms"}]},
           {"name": "three", "lines": [{"size": "4k", "burst": 16, "delay": "1ms"}]}],
 "workers": [{"engine": "null", "targets": [{"path": "t.dat", "size": "1m"}]}]}
P
plan q.json <<'P'
{"name": "again", "run": {"ramp": "1s", "duration": "1s", "interval": "500ms"},
 "specs": [{"name": "one", "lines": [{"size": "4k", "burst": 16, "delay": "1ms"}]}],
 "workers": [{"engine": "null", "targets": [{"path": "t.dat", "size": "1m"}]}]}
P

# start_relay: the relay on $rport to the manager's $mport; PID in $relay.
start_relay() {
    cl_spawn relay "$T/relay.out" "$T/relay.err" python3 "$(dirname "$0")/lib/tcp_proxy.py" \
        "$rport" "$mport"
    cl_wait_log "$T/relay.out" listening 10
}

mport=
cl_start_listen_manager mgr mport "$T/m1.out" "$T/m1.err" "$T/p.json" "${tls_mgr[@]}" \
    --expect 2 --wait 120 --heartbeat-ms 300 --verbose
rport=$(cl_random_port)
start_relay
cl_spawn ag /dev/null "$T/node1.log" "$DYNAMO" --manager "127.0.0.1:$rport" --name node1 \
    --workdir "$T/work-node1" "${tls_node1[@]}"
cl_spawn ag2 /dev/null "$T/node2.log" "$DYNAMO" --manager "127.0.0.1:$mport" --name node2 \
    --workdir "$T/work-node2" "${tls_node2[@]}"

cl_wait_log "$T/node1.log" "TLS session with manager 127.0.0.1:$rport: full handshake" 15
# Into test 1: the manager has merged its first interval from both agents.
cl_wait_log "$T/m1.err" "test 1 interval 0: 2 of 2 agents" 15
cl_stop "$relay" # the link is cut: both ends see it close
rport_was=$rport
start_relay
[ "$rport" = "$rport_was" ] || fail "relay moved"
cl_wait_log "$T/node1.log" "TLS session with manager 127.0.0.1:$rport: resumed handshake" 15
cl_wait_exit "$mgr" 40 rc
[ "$rc" = 1 ] || { cat "$T/m1.err"; fail "first run exited $rc, expected 1 (the agent was lost once)"; }
expect_in "$T/m1.err" "TLS session with 127.0.0.1:"
[ "$(grep -c ': full handshake' "$T/m1.err")" = 2 ] || { cat "$T/m1.err"; fail "expected 2 full handshakes"; }
grep -q ': resumed handshake' "$T/m1.err" || { cat "$T/m1.err"; fail "the reconnect was not resumed"; }
expect_in "$T/m1.err" "is back; it takes part from the next test"
expect_in "$T/m1.err" "TLS handshakes with agents that dialled in: 2 full, 1 resumed"
awk '/^== test 3\/3/ { t = 1 } t && $1 == "NODE" && $2 == "node1" && $3 > 0 { f = 1 } END { exit !f }' \
    "$T/m1.out" || { cat "$T/m1.out"; fail "node1 did not take part in test 3 after resuming"; }
ok "lost link: the agent's reconnect was resumed and node1 ran test 3"

# A new manager process (new ticket keys) on the same port, through the
# relay: node1's ticket is useless there, a full handshake follows.
cl_start_listen_manager mgr2 mport "$T/m2.out" "$T/m2.err" "$T/q.json" "${tls_mgr[@]}" \
    --expect 2 --wait 20 --verbose
cl_wait_exit "$mgr2" 40 rc
[ "$rc" = 0 ] || { cat "$T/m2.err"; fail "second run exited $rc, expected 0"; }
expect_in "$T/m2.err" "TLS handshakes with agents that dialled in: 2 full, 0 resumed"
expect_in "$T/m2.err" "iofleet: 2 agents ready:"
grep -q ': resumed handshake' "$T/m2.err" && fail "a ticket of the first manager resumed at the second"
[ "$(grep -c "TLS session with manager 127.0.0.1:$rport: full handshake" "$T/node1.log")" -ge 2 ] ||
    { cat "$T/node1.log"; fail "the agent did not do a full handshake with the new manager"; }
awk '$1 == "NODE" && $2 == "node1" && $3 > 0 { f = 1 } END { exit !f }' "$T/m2.out" ||
    fail "second run: no I/O from node1"
ok "foreign ticket (another manager process): full handshake, node1 authenticated and ran"
cl_done
