# SPDX-License-Identifier: Apache-2.0
# TLS across hosts: 3 network namespaces, each with a dynamo holding its own
# certificate from `iofleet pki init`, the manager in the hub namespace with
# the manager certificate; plain TCP off loopback is refused without
# --insecure; the TLS run completes with 3 NODE rows named by the certificates.
# shellcheck source=lib/common.bash
source "$(dirname "$0")/lib/common.bash"
# shellcheck source=lib/netns.bash
source "$(dirname "$0")/lib/netns.bash"

NODES=3
PORT=7066
DYNAMO=$IOF_BIN/dynamo
command -v timeout >/dev/null || skip "timeout (coreutils) not installed"
netns_setup "$NODES" 64 # skips (77) when not root or without netns support

PKI=$T/pki
"$IOFLEET" pki init "$PKI" --agent node1 --agent node2 --agent node3 >/dev/null || fail "pki init"

agents=()
for ((k = 1; k <= NODES; k++)); do
    mkdir -p "$T/work$k"
    netns_bg "$k" "$T/dynamo$k.log" timeout -k 5 50 "$DYNAMO" \
        --listen "${NETNS_ADDR[k]}:$PORT" --workdir "$T/work$k" \
        --tls-ca "$PKI/ca.pem" --tls-cert "$PKI/node$k.pem" --tls-key "$PKI/node$k-key.pem" >/dev/null
    agents+=(--agent "${NETNS_ADDR[k]}:$PORT")
done
for ((k = 1; k <= NODES; k++)); do
    netns_wait_port "$k" "$PORT" 10 || { cat "$T/dynamo$k.log" >&2; fail "dynamo node$k did not listen"; }
done

plan p.json <<'P'
{"name": "tls-3", "run": {"ramp": "200ms", "duration": "2s", "interval": "500ms"},
 "specs": [{"name": "4k 70/30", "lines": [{"size": "4k", "read": 70, "burst": 64, "delay": "1ms"}]}],
 "workers": [{"engine": "null", "queue_depth": 4, "targets": [{"path": "t.dat", "size": "4m"}]}]}
P

run_manager() {
    local mgr
    rc=0
    ip netns exec "$NETNS_HUB" timeout -k 5 40 "$IOFLEET" run "$T/p.json" "${agents[@]}" \
        --quiet --wait 5 "$@" >"$T/out" 2>"$T/err" &
    mgr=$!
    NETNS_PIDS+=("$mgr")
    wait "$mgr" || rc=$?
    netns_forget "$mgr"
}

# Plain TCP to agents on other hosts: refused by the manager without --insecure.
run_manager
[ "$rc" = 3 ] || { cat "$T/err"; fail "plain run across hosts exited $rc, expected 3"; }
expect_in "$T/err" "plain TCP authenticates nobody"
ok "plain TCP across hosts refused"

run_manager --tls-ca "$PKI/ca.pem" --tls-cert "$PKI/manager.pem" --tls-key "$PKI/manager-key.pem"
[ "$rc" = 0 ] || { cat "$T/out" "$T/err"; fail "TLS run exited $rc"; }
for k in 1 2 3; do
    grep -q "^NODE    node$k " "$T/out" || fail "no NODE row for node$k"
    expect_in "$T/dynamo$k.log" "(protocol 1.8, TLS)"
done
awk '$1 == "ALL" { all = $3 } $1 == "NODE" { sum += $3 }
     END { d = all - sum; if (d < 0) d = -d; exit !(all > 0 && d < 0.5) }' "$T/out" ||
    fail "ALL != sum of NODE"
grep -q "3 nodes" "$T/out" || fail "header does not say 3 nodes"
ok "TLS run across 3 namespaces: 3 NODE rows, ALL = sum NODE"
