# SPDX-License-Identifier: Apache-2.0
# One rule for a node's name wherever it is given (proto/name.h): dynamo
# --name, iofleet pki init's names and a plan's workers[].nodes refuse the
# same names (64 bytes at most, the reserved ALL, ca and manager in any case)
# with the same message, and accept exactly 64 bytes.
source "$(dirname "$0")/lib/common.bash"
DYNAMO=$IOF_BIN/dynamo

n64=$(printf 'n%.0s' $(seq 64))
n65=${n64}x
reserved="reserved (ALL names the cluster's rows in the result files; ca and manager are iofleet pki's own files)"
long="longer than 64 bytes (the limit of a certificate's common name)"

nodes_plan() { # FILE NODE
    cat >"$1" <<P
{"name": "names", "run": {"ramp": "0s", "duration": "1s"},
 "specs": [{"name": "4k", "lines": [{"size": "4k"}]}],
 "workers": [{"nodes": ["$2"], "engine": "null", "targets": [{"path": "f", "size": "1m"}]}]}
P
}

for name in all Manager CA; do
    expect_rc 2 timeout 10 "$DYNAMO" --listen 127.0.0.1:0 --insecure --workdir "$T/w" --name "$name"
    expect_in "$T/err" "dynamo: --name '$name': $reserved"
    expect_rc 2 "$IOFLEET" pki init "$T/pki-$name" --agent "$name"
    expect_in "$T/err" "agent name '$name': $reserved"
    nodes_plan "$T/p-$name.json" "$name"
    expect_rc 2 "$IOFLEET" validate "$T/p-$name.json"
    expect_in "$T/err" "workers[0].nodes[0]: node name '$name': $reserved"
done
ok "reserved names refused alike by dynamo --name, pki init and a plan: $(head -n1 "$T/err")"

expect_rc 2 timeout 10 "$DYNAMO" --listen 127.0.0.1:0 --insecure --workdir "$T/w" --name "$n65"
expect_in "$T/err" "$long"
expect_rc 2 "$IOFLEET" pki init "$T/pki-long" --agent "$n65"
expect_in "$T/err" "$long"
nodes_plan "$T/p-long.json" "$n65"
expect_rc 2 "$IOFLEET" validate "$T/p-long.json"
expect_in "$T/err" "$long"
ok "65 bytes refused alike: $(head -n1 "$T/err")"

# Exactly 64 bytes: a certificate, a plan and an agent that runs it.
expect_rc 0 "$IOFLEET" pki init "$T/pki64" --agent "$n64"
[ -s "$T/pki64/$n64.pem" ] || fail "no certificate for a 64-byte name"
nodes_plan "$T/p64.json" "$n64"
expect_rc 0 "$IOFLEET" validate "$T/p64.json"
iof_start_agent a64 --name "$n64"
expect_rc 0 "$IOFLEET" run "$T/p64.json" --insecure --agent "$AGENT_EP" --no-db --quiet \
    --csv "$T/r64.csv"
grep -q ",NODE,$n64," "$T/r64.csv" || fail "no NODE row for the 64-byte name: $(cat "$T/r64.csv")"
ok "64 bytes accepted alike: a certificate, a plan and an agent that ran it"
