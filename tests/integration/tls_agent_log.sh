# SPDX-License-Identifier: Apache-2.0
# A TLS agent's log under a careless deployment and under a flood: a private
# key its group or others may read is warned about (the file, its mode, and
# chmod 600), by the agent and by the manager; TLS handshakes that time out
# (idle connections) are logged at most one line per 10 s, the rest summed
# up in one line at the end of the period instead of one line each.
source "$(dirname "$0")/lib/common.bash"

PKI=$T/pki
"$IOFLEET" pki init "$PKI" --agent node1 >/dev/null || fail "pki init"
tls_agent=(--tls-ca "$PKI/ca.pem" --tls-cert "$PKI/node1.pem" --tls-key "$PKI/node1-key.pem")
mgr_tls=(--tls-ca "$PKI/ca.pem" --tls-cert "$PKI/manager.pem" --tls-key "$PKI/manager-key.pem")

# Key files readable by others: a warning each, naming the file and the fix.
chmod 0644 "$PKI/node1-key.pem"
chmod 0640 "$PKI/manager-key.pem"
iof_start_agent node1 "${tls_agent[@]}"
expect_in "$T/node1.log" "warning: private key $PKI/node1-key.pem is readable by others than its owner (mode 0644"
expect_in "$T/node1.log" "fix it with: chmod 600 $PKI/node1-key.pem"
expect_rc 0 "$IOFLEET" agents --agent "$AGENT_EP" "${mgr_tls[@]}"
expect_in "$T/err" "private key $PKI/manager-key.pem is readable by others than its owner (mode 0640"
kill "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null || true
ok "group/other-readable keys warned about by agent and manager"

chmod 0600 "$PKI/node1-key.pem" "$PKI/manager-key.pem"
iof_start_agent node1b "${tls_agent[@]}"
expect_rc 0 "$IOFLEET" agents --agent "$AGENT_EP" "${mgr_tls[@]}"
if grep -q "private key" "$T/node1b.log" "$T/err"; then
    cat "$T/node1b.log" "$T/err"
    fail "a warning for 0600 keys"
fi
ok "no warning for 0600 keys"

# 30 idle connections (under the 32 pending per address): each times out at
# the agent's 10 s handshake deadline, nearly at once.
port=${AGENT_EP##*:}
python3 - "$port" >"$T/flood.out" 2>&1 <<'PY' &
import socket, sys, time
socks = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(30)]
end = time.monotonic() + 40
for s in socks:
    s.settimeout(max(0.1, end - time.monotonic()))
    try:
        s.recv(1)
    except OSError:
        pass
print("closed")
PY
FLOOD=$!
iof_on_exit "kill $FLOOD 2>/dev/null"
summary="29 more TLS handshakes timed out in the last 10 s (not logged one by one; the last with 127.0.0.1:"
for _ in $(seq 700); do
    grep -qF "$summary" "$T/node1b.log" && break
    sleep 0.05
done
wait "$FLOOD" || true
n=$(grep -c "did not complete within" "$T/node1b.log" || true)
if [ "$n" != 1 ] || ! grep -qF "$summary" "$T/node1b.log"; then
    cat "$T/node1b.log"
    fail "30 handshake timeouts: $n lines of their own, expected 1 and a summary"
fi
ok "30 handshake timeouts: 1 line and 1 summary"

# A dialling agent whose manager address closes without a TLS answer (a relay to a
# dead port): the retry line names the cause in words, not as an unknown error number.
source "$(dirname "$0")/lib/cluster.bash"
command -v python3 >/dev/null || skip "python3 not installed (the loopback relay)"
rport=$(cl_random_port)
dead=$(cl_random_port)
cl_spawn relay "$T/relay.out" "$T/relay.err" python3 "$(dirname "$0")/lib/tcp_proxy.py" "$rport" "$dead"
cl_wait_log "$T/relay.out" listening 10
cl_spawn dialer /dev/null "$T/dial.log" "$DYNAMO" --manager "127.0.0.1:$rport" --name node1 \
    --workdir "$T/work-dial" "${tls_agent[@]}"
cl_wait_log "$T/dial.log" "cannot reach manager 127.0.0.1:$rport: " 10
line=$(grep -F "cannot reach manager 127.0.0.1:$rport: " "$T/dial.log" | head -n1)
if grep -q "Unknown system error" <<<"$line"; then fail "the retry line has no cause in words: $line"; fi
ok "a manager address that closes without a TLS answer: $line"
