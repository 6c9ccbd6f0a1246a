# SPDX-License-Identifier: Apache-2.0
# TLS 1.3 with mutual certificates between iofleet and dynamo: a good pair
# runs; every refusal (other CA, expired, no certificate, wrong name, plain
# <-> TLS) is refused on the right side with its cause, and no test runs.
source "$(dirname "$0")/lib/common.bash"
command -v openssl >/dev/null || skip "the openssl command is needed to forge bad certificates"

PKI=$T/pki
"$IOFLEET" pki init "$PKI" --agent node1 --agent node2 >/dev/null || fail "pki init"
"$IOFLEET" pki init "$T/other" --agent node1 >/dev/null || fail "pki init (other CA)"

# start_agent NAME CERTBASE [ARGS...]: a TLS agent with CERTBASE.pem; sets EP.
start_agent() {
    local name=$1 base=$2
    shift 2
    iof_start_agent "$name" --tls-ca "$PKI/ca.pem" --tls-cert "$base.pem" \
        --tls-key "$base-key.pem" "$@"
    EP=$AGENT_EP
}

plan p.json <<'P'
{"name": "tls", "run": {"ramp": "1s", "duration": "1s", "interval": "500ms"},
 "specs": [{"name": "r", "lines": [{"size": "4k", "burst": 32, "delay": "1ms"}]}],
 "workers": [{"engine": "null", "targets": [{"path": "t.dat", "size": "1m"}]}]}
P
mgr_tls=(--tls-ca "$PKI/ca.pem" --tls-cert "$PKI/manager.pem" --tls-key "$PKI/manager-key.pem")

start_agent node1 "$PKI/node1"
expect_rc 0 "$IOFLEET" run "$T/p.json" --agent "$EP" "${mgr_tls[@]}" --quiet
grep -q '^NODE    node1 ' "$T/out" || fail "no NODE row for node1"
expect_in "$T/node1.log" "(protocol 1.8, TLS)"
ok "TLS run: manager and node1 authenticated each other"

# A manager certificate from another CA: the agent refuses it.
expect_rc 3 "$IOFLEET" run "$T/p.json" --agent "$EP" --quiet --wait 3 \
    --tls-ca "$T/other/ca.pem" --tls-cert "$T/other/manager.pem" --tls-key "$T/other/manager-key.pem"
expect_in "$T/err" "is not signed by the configured CA"
if grep -q '^== test' "$T/out"; then fail "a test ran with a foreign CA"; fi
ok "certificate from another CA refused"

# An agent certificate from another CA: the manager refuses it.
start_agent foreign "$T/other/node1"
expect_rc 3 "$IOFLEET" run "$T/p.json" --agent "$EP" "${mgr_tls[@]}" --quiet --wait 3
expect_in "$T/err" "not signed by the configured CA"
ok "agent from another CA refused by the manager"

# An expired agent certificate signed by the right CA.
openssl ecparam -name prime256v1 -genkey -noout -out "$T/old-key.pem" 2>/dev/null
openssl req -new -key "$T/old-key.pem" -subj "/CN=old" -out "$T/old.csr" 2>/dev/null
openssl x509 -req -in "$T/old.csr" -CA "$PKI/ca.pem" -CAkey "$PKI/ca-key.pem" -set_serial 77 \
    -days -1 -out "$T/old.pem" 2>/dev/null || skip "openssl cannot forge an expired certificate"
start_agent old "$T/old"
expect_rc 3 "$IOFLEET" run "$T/p.json" --agent "$EP" "${mgr_tls[@]}" --quiet --wait 3
expect_in "$T/err" "expired on"
ok "expired agent certificate refused"

# A client without a certificate: the agent refuses the handshake.
start_agent node2 "$PKI/node2"
timeout 5 openssl s_client -connect "$EP" -CAfile "$PKI/ca.pem" -tls1_3 </dev/null >/dev/null 2>&1 || true
for _ in $(seq 40); do grep -q "presented no certificate" "$T/node2.log" && break; sleep 0.05; done
expect_in "$T/node2.log" "presented no certificate"
ok "client without a certificate refused by the agent"

# The manager presents an agent's certificate: not the manager.
expect_rc 3 "$IOFLEET" run "$T/p.json" --agent "$EP" --quiet --wait 3 \
    --tls-ca "$PKI/ca.pem" --tls-cert "$PKI/node1.pem" --tls-key "$PKI/node1-key.pem"
expect_in "$T/err" "accepts only a manager certificate for 'iofleet-manager'"
ok "an agent certificate cannot act as the manager"

# Plain manager to a TLS agent, and TLS manager to a plain agent.
expect_rc 3 "$IOFLEET" run "$T/p.json" --insecure --agent "$EP" --quiet --wait 3
expect_in "$T/err" "agent at $EP: the agent expects TLS: configure TLS on the manager (--tls-ca, --tls-cert, --tls-key) or pass --insecure to both"
# The same for iofleet agents, which waits for the agent's hello: the TLS
# agent drops the plain connection at its 10 s handshake timeout.
expect_rc 3 "$IOFLEET" agents --agent "$EP" --insecure --wait 20
expect_in "$T/err" "iofleet agents: $EP: connection closed by the peer before its hello (an agent that expects TLS closes a plain connection at its 10 s handshake timeout: configure TLS here (--tls-ca, --tls-cert, --tls-key) or pass --insecure to both)"
iof_start_agent plain --name plain
expect_rc 3 "$IOFLEET" run "$T/p.json" --agent "$AGENT_EP" "${mgr_tls[@]}" --quiet --wait 3
expect_in "$T/err" "TLS"
ok "plain <-> TLS mismatches refused with the cause"

# A plain agent dialling a TLS manager (run --listen): the agent's log says
# the manager expects TLS.
source "$(dirname "$0")/lib/cluster.bash"
lport='' lmgr='' dialer=''
cl_start_listen_manager lmgr lport "$T/l.out" "$T/l.err" "$T/p.json" "${mgr_tls[@]}" \
    --expect 1 --wait 30
cl_spawn dialer /dev/null "$T/dial.log" "$DYNAMO" --manager "127.0.0.1:$lport" --insecure \
    --name node2 --workdir "$T/dial-work"
cl_wait_log "$T/dial.log" "the manager expects TLS: configure TLS on the agent (--tls-ca, --tls-cert, --tls-key) or pass --insecure to both" 10
cl_stop "$dialer"
cl_stop "$lmgr"
ok "plain agent dialling a TLS manager: told the manager expects TLS"

# The agent's name is its certificate's.
expect_rc 2 "$IOF_BIN/dynamo" --listen 127.0.0.1:0 --name node9 --workdir "$T/x" \
    --tls-ca "$PKI/ca.pem" --tls-cert "$PKI/node1.pem" --tls-key "$PKI/node1-key.pem"
expect_in "$T/err" "--name node9 does not match the certificate's name 'node1'"
ok "--name must match the certificate"

# iofleet agents against an agent that refuses the manager: exit 3 with the
# agent and the reason, as run says it, never a silent death by SIGPIPE
# (141: the agent's close raced the manager's bye). Ten times each: the race
# went either way.
start_agent picky "$PKI/node1" --manager-name other-mgr
for _ in $(seq 10); do
    expect_rc 3 "$IOFLEET" agents --agent "$EP" "${mgr_tls[@]}" --wait 3
    expect_in "$T/err" "iofleet agents: $EP: refused: agent node1 accepts only a manager certificate for 'other-mgr'"
done
iof_start_agent otherca --tls-ca "$T/other/ca.pem" --tls-cert "$PKI/node1.pem" \
    --tls-key "$PKI/node1-key.pem"
for _ in $(seq 10); do
    expect_rc 3 "$IOFLEET" agents --agent "$AGENT_EP" "${mgr_tls[@]}" --wait 3
    expect_in "$T/err" "iofleet agents: $AGENT_EP: $AGENT_EP refused our certificate: not signed by a CA it trusts"
done
ok "iofleet agents: a refusing agent gives exit 3 and its reason, never SIGPIPE"
