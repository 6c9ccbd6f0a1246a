# SPDX-License-Identifier: Apache-2.0
# --pki DIR (the layout iofleet pki init writes) instead of the three --tls-*
# options, $IOFLEET_PKI as its default, explicit options winning, and a
# missing file named.
source "$(dirname "$0")/lib/common.bash"

PKI=$T/pki
"$IOFLEET" pki init "$PKI" --agent node1 >/dev/null || fail "pki init"
"$IOFLEET" pki init "$T/other" --agent node1 >/dev/null || fail "pki init (other CA)"
iof_start_agent node1 --tls-ca "$PKI/ca.pem" --tls-cert "$PKI/node1.pem" --tls-key "$PKI/node1-key.pem"
EP=$AGENT_EP
plan p.json <<'P'
{"name": "pki", "run": {"ramp": "1s", "duration": "400ms", "interval": "200ms"},
 "specs": [{"name": "r", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "null", "targets": [{"path": "t.dat", "size": "1m"}]}]}
P

expect_rc 0 "$IOFLEET" run "$T/p.json" --agent "$EP" --pki "$PKI" --quiet --no-db
grep -q '^NODE    node1 ' "$T/out" || fail "no NODE row for node1"
expect_rc 0 "$IOFLEET" agents --agent "$EP" --pki "$PKI"
expect_in "$T/out" "node1"
ok "--pki DIR: run and agents authenticated with DIR's files"

IOFLEET_PKI=$PKI expect_rc 0 "$IOFLEET" run "$T/p.json" --agent "$EP" --quiet --no-db
grep -q '^NODE    node1 ' "$T/out" || fail "no NODE row with IOFLEET_PKI"
IOFLEET_PKI=$PKI expect_rc 0 "$IOFLEET" clean --agent "$EP"
ok "IOFLEET_PKI: the default directory"

# Explicit options win: --pki over $IOFLEET_PKI, and a --tls-* over its file.
IOFLEET_PKI=$T/other expect_rc 0 "$IOFLEET" agents --agent "$EP" --pki "$PKI"
expect_rc 3 "$IOFLEET" agents --agent "$EP" --pki "$PKI" --tls-ca "$T/other/ca.pem" --wait 2
IOFLEET_PKI=$PKI expect_rc 3 "$IOFLEET" agents --agent "$EP" --wait 2 \
    --tls-ca "$T/other/ca.pem" --tls-cert "$T/other/manager.pem" --tls-key "$T/other/manager-key.pem"
ok "--pki wins over IOFLEET_PKI, each --tls-* over its file from the directory"

# A missing file is named, before anything is dialled.
mkdir "$T/empty"
expect_rc 2 "$IOFLEET" run "$T/p.json" --agent "$EP" --pki "$T/empty"
expect_in "$T/err" "--pki $T/empty: $T/empty/ca.pem: No such file or directory (iofleet pki init $T/empty writes it)"
IOFLEET_PKI=$T/empty expect_rc 2 "$IOFLEET" agents --agent "$EP"
expect_in "$T/err" "IOFLEET_PKI=$T/empty: $T/empty/ca.pem: No such file or directory"
ok "a directory without the files: exit 2 naming the file"

# A local run needs no certificates: IOFLEET_PKI is not read for it.
IOFLEET_PKI=$T/empty expect_rc 0 "$IOFLEET" run "$T/p.json" --workdir "$T/w" --quiet --no-db
IOFLEET_PKI=$T/empty expect_rc 0 "$IOFLEET" validate "$T/p.json"
ok "IOFLEET_PKI ignored where no agent is dialled"
# --insecure says plain TCP: IOFLEET_PKI is not read either (the TLS agent
# then refuses the plain connection: exit 3, not the missing files' 2).
IOFLEET_PKI=$T/empty expect_rc 3 "$IOFLEET" agents --agent "$EP" --insecure --wait 1
if grep -q IOFLEET_PKI "$T/err"; then fail "IOFLEET_PKI read despite --insecure"; fi
ok "IOFLEET_PKI ignored with --insecure"
