#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# iofleet serve --http over HTTPS (docs/api.md, Security): the manager
# certificate of `iofleet pki init` served with --http-tls-cert/--http-tls-key
# (TLS 1.3 and 1.2, not 1.1; plain HTTP to the port gets no answer; an Origin
# must say https); wrong TLS files and a non-loopback --http without HTTPS
# and authentication refused before anything listens, naming what to add.
source "$(dirname "$0")/lib/cluster.bash"
command -v curl >/dev/null || skip "curl not installed"
command -v jq >/dev/null || skip "jq not installed"
command -v openssl >/dev/null || skip "openssl not installed"

"$IOFLEET" pki init "$T/pki" --agent node1 >/dev/null || fail "pki init failed"
P=$T/pki
NAME=iofleet-manager # the manager certificate's name (pki init's default)
serve_args=(serve --listen 127.0.0.1:0 --insecure --db "$T/runs.db")

# --- refusals, before anything listens ------------------------------------------------
expect_rc 2 "$IOFLEET" "${serve_args[@]}" --http 127.0.0.1:0 --http-tls-cert "$P/manager.pem"
expect_in "$T/err" "HTTPS needs both --http-tls-cert and --http-tls-key"
expect_rc 2 "$IOFLEET" "${serve_args[@]}" --http 127.0.0.1:0 --http-tls-cert "$T/none.pem" \
    --http-tls-key "$P/manager-key.pem"
expect_in "$T/err" "--http-tls-cert $T/none.pem: No such file or directory"
expect_rc 2 "$IOFLEET" "${serve_args[@]}" --http 127.0.0.1:0 --http-tls-cert "$P/manager-key.pem" \
    --http-tls-key "$P/manager-key.pem"
expect_in "$T/err" "--http-tls-cert $P/manager-key.pem: not a PEM certificate"
expect_rc 2 "$IOFLEET" "${serve_args[@]}" --http 127.0.0.1:0 --http-tls-cert "$P/manager.pem" \
    --http-tls-key "$P/node1-key.pem"
expect_in "$T/err" "--http-tls-key $P/node1-key.pem is not the key of --http-tls-cert"
ok "wrong --http-tls-* files refused, each named: $(head -n1 "$T/err")"
for addr in 198.18.0.1:0 0.0.0.0:0 '[::]:0'; do
    expect_rc 2 "$IOFLEET" "${serve_args[@]}" --http "$addr"
    expect_in "$T/err" "--http $addr"
    expect_in "$T/err" "is not a loopback address"
    expect_in "$T/err" "add --http-tls-cert F --http-tls-key F"
done
ok "non-loopback --http without HTTPS refused: $(head -n1 "$T/err")"
expect_rc 2 "$IOFLEET" "${serve_args[@]}" --http 198.18.0.1:0 --http-tls-cert "$P/manager.pem" \
    --http-tls-key "$P/manager-key.pem"
expect_in "$T/err" "with authentication"
ok "non-loopback --http with HTTPS but no authentication refused"

# --- HTTPS on loopback ----------------------------------------------------------------
cl_spawn srv "$T/serve.out" "$T/serve.err" "$IOFLEET" "${serve_args[@]}" --http 127.0.0.1:0 \
    --http-tls-cert "$P/manager.pem" --http-tls-key "$P/manager-key.pem"
cl_wait_log "$T/serve.err" "iofleet serve: API on https://127.0.0.1:" 20
port=$(sed -n 's|.*API on https://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$T/serve.err" | head -n1)
[ -n "$port" ] || fail "no API port in: $(cat "$T/serve.err")"
base=https://$NAME:$port/api/v1
tcurl() { curl -sS --cacert "$P/ca.pem" --resolve "$NAME:$port:127.0.0.1" "$@"; }

tcurl -f -o "$T/version.json" -w '%{http_code}' "$base/version" >"$T/code" || fail "GET $base/version over HTTPS failed"
jq -e '.api == "v1"' "$T/version.json" >/dev/null || fail "version: $(cat "$T/version.json")"
ok "GET /api/v1/version over HTTPS, verified against the pki's CA"

# TLS 1.3 and 1.2 only: an OpenSSL client at security level 0 offers 1.1.
for v in tls1_3 tls1_2; do
    echo | openssl s_client "-$v" -CAfile "$P/ca.pem" -verify_return_error \
        -connect "127.0.0.1:$port" -servername "$NAME" >"$T/s_client" 2>&1 ||
        fail "$v handshake refused: $(cat "$T/s_client")"
done
if echo | openssl s_client -tls1_1 -cipher 'DEFAULT:@SECLEVEL=0' \
    -connect "127.0.0.1:$port" >"$T/s_client" 2>&1; then
    fail "a TLS 1.1 handshake succeeded: $(grep -E 'Protocol|Cipher' "$T/s_client")"
fi
ok "TLS 1.3 and 1.2 accepted, TLS 1.1 refused"

# Plain HTTP to the HTTPS port: no HTTP answer.
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$port/api/v1/version" || true)
[ "$code" = 000 ] || fail "plain HTTP to the HTTPS port answered $code"
ok "plain HTTP to the HTTPS port gets no answer"

# A POST from this server's own page names it https://; http:// is another
# origin.
echo '{}' >"$T/plan.json"
code=$(tcurl -o "$T/check" -w '%{http_code}' -H 'Content-Type: application/json' \
    -H "Origin: https://$NAME:$port" --data-binary @"$T/plan.json" "$base/plans/check")
[ "$code" = 400 ] || [ "$code" = 200 ] || fail "POST with this server's https Origin: $code $(cat "$T/check")"
code=$(tcurl -o "$T/check" -w '%{http_code}' -H 'Content-Type: application/json' \
    -H "Origin: http://$NAME:$port" --data-binary @"$T/plan.json" "$base/plans/check")
[ "$code" = 403 ] && jq -e '.error.message | contains("https://")' "$T/check" >/dev/null ||
    fail "POST with an http:// Origin over HTTPS: $code $(cat "$T/check")"
ok "POST: Origin https://$NAME:$port accepted, http:// refused"

cl_stop "$srv"
