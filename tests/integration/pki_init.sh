# SPDX-License-Identifier: Apache-2.0
# iofleet pki init: a CA, the manager's and two agents' certificates, checked
# with the openssl command line (chain, names, usages, modes); enrolling a
# third agent later under the same CA; refusals and their exit codes.
source "$(dirname "$0")/lib/common.bash"

command -v openssl >/dev/null 2>&1 || skip "the openssl command line tool is not installed"
command -v stat >/dev/null 2>&1 || skip "stat is not installed"

P=$T/pki
expect_rc 0 "$IOFLEET" pki init "$P" --agent node1 --agent node2
for f in ca ca-key manager manager-key node1 node1-key node2 node2-key; do
    expect_in "$T/out" "wrote $P/$f.pem"
    [ "$(stat -c %a "$P/$f.pem")" = 600 ] || fail "$f.pem is mode $(stat -c %a "$P/$f.pem"), not 600"
done
[ "$(stat -c %a "$P")" = 700 ] || fail "$P is mode $(stat -c %a "$P"), not 700"
[ "$(ls "$P" | wc -l)" = 8 ] || fail "unexpected files in $P: $(ls "$P")"
ok "8 files, 0600, directory 0700"

# Chains, for both TLS purposes, and the names as a TLS client would check them.
for n in node1 node2; do
    expect_rc 0 openssl verify -CAfile "$P/ca.pem" "$P/$n.pem"
    expect_in "$T/out" "$n.pem: OK"
    expect_rc 0 openssl verify -CAfile "$P/ca.pem" -purpose sslserver -verify_hostname "$n" "$P/$n.pem"
    expect_rc 0 openssl verify -CAfile "$P/ca.pem" -purpose sslclient "$P/$n.pem"
    expect_rc 2 openssl verify -CAfile "$P/ca.pem" -verify_hostname iofleet-manager "$P/$n.pem"
    expect_rc 0 openssl x509 -in "$P/$n.pem" -noout -ext subjectAltName,extendedKeyUsage,keyUsage,basicConstraints -subject
    expect_in "$T/out" "DNS:$n"
    expect_in "$T/out" "TLS Web Server Authentication, TLS Web Client Authentication"
    expect_in "$T/out" "Digital Signature"
    expect_in "$T/out" "CA:FALSE"
    expect_in "$T/out" "OU = agent, CN = $n"
done
expect_rc 0 openssl verify -CAfile "$P/ca.pem" -purpose sslserver -verify_hostname iofleet-manager "$P/manager.pem"
expect_rc 0 openssl verify -CAfile "$P/ca.pem" -purpose sslclient "$P/manager.pem"
expect_rc 0 openssl x509 -in "$P/manager.pem" -noout -ext subjectAltName,extendedKeyUsage -subject
expect_in "$T/out" "DNS:iofleet-manager"
expect_in "$T/out" "TLS Web Server Authentication, TLS Web Client Authentication"
expect_in "$T/out" "OU = manager, CN = iofleet-manager"
expect_rc 0 openssl x509 -in "$P/ca.pem" -noout -ext basicConstraints,keyUsage
expect_in "$T/out" "critical"
expect_in "$T/out" "CA:TRUE"
expect_in "$T/out" "Certificate Sign, CRL Sign"
ok "chains verify; names, SANs and usages as specified"

# Keys: unencrypted PKCS#8, EC P-256, each matching its certificate.
for n in ca manager node1 node2; do
    head -n 1 "$P/$n-key.pem" | grep -qx -- '-----BEGIN PRIVATE KEY-----' || fail "$n-key.pem is not PKCS#8"
    expect_rc 0 openssl pkey -in "$P/$n-key.pem" -noout -text
    expect_in "$T/out" "prime256v1"
    a=$(openssl pkey -in "$P/$n-key.pem" -pubout)
    b=$(openssl x509 -in "$P/$n.pem" -noout -pubkey)
    [ "$a" = "$b" ] || fail "$n-key.pem does not match $n.pem"
done
serials=$(for n in ca manager node1 node2; do openssl x509 -in "$P/$n.pem" -noout -serial; done | sort -u | wc -l)
[ "$serials" = 4 ] || fail "serial numbers are not distinct"
ok "EC P-256 PKCS#8 keys match their certificates; distinct serials"

# No overwrite without --force (exit 1, the file named), nothing changed.
before=$(cat "$P/node1.pem")
expect_rc 1 "$IOFLEET" pki init "$P" --agent node1
expect_in "$T/err" "node1-key.pem: already exists (use --force to replace it)"
[ "$(cat "$P/node1.pem")" = "$before" ] || fail "node1.pem changed without --force"

# Enrol a node later: signed by the same CA, CA and manager untouched.
ca_before=$(cat "$P/ca.pem")
mgr_before=$(cat "$P/manager.pem")
expect_rc 0 "$IOFLEET" pki init "$P" --agent node3
expect_in "$T/out" "wrote $P/node3.pem"
[ "$(cat "$P/ca.pem")" = "$ca_before" ] || fail "ca.pem changed when adding an agent"
[ "$(cat "$P/manager.pem")" = "$mgr_before" ] || fail "manager.pem changed when adding an agent"
expect_rc 0 openssl verify -CAfile "$P/ca.pem" -verify_hostname node3 "$P/node3.pem"
[ "$(stat -c %a "$P/node3-key.pem")" = 600 ] || fail "node3-key.pem is not 0600"

# --force re-issues an agent (new key) under the same CA.
expect_rc 0 "$IOFLEET" pki init "$P" --agent node1 --force
[ "$(cat "$P/node1.pem")" != "$before" ] || fail "--force did not re-issue node1.pem"
expect_rc 0 openssl verify -CAfile "$P/ca.pem" "$P/node1.pem"
ok "enrolment under the existing CA and --force re-issue"

# A certificate from another CA does not verify against this one.
expect_rc 0 "$IOFLEET" pki init "$T/other" --agent node1
expect_rc 2 openssl verify -CAfile "$P/ca.pem" "$T/other/node1.pem"

# Usage errors exit 2 and say why.
expect_rc 2 "$IOFLEET" pki init "$T/bad" --agent 'node/1'
expect_in "$T/err" "agent name 'node/1'"
[ ! -e "$T/bad" ] || fail "a refused run created $T/bad"
expect_rc 2 "$IOFLEET" pki init "$T/bad" --agent iofleet-manager
expect_in "$T/err" "is the manager's name"
expect_rc 2 "$IOFLEET" pki init "$T/bad" --days 0
expect_rc 2 "$IOFLEET" pki init
expect_rc 0 "$IOFLEET" --help
expect_in "$T/out" "iofleet pki init DIR"
ok "refusals"
