#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# iofleet serve --http-client-ca (docs/api.md, Security): API clients with a
# certificate of the pki (iofleet pki init) that a "cert NAME SCOPE" line of
# the tokens file names need no token: an operator's may POST /api/v1/runs,
# a viewer's GET 200 and POST 403; a certificate no line names, or one of
# another CA, falls back to the token (401 without one, 200 with one); a cert
# line deleted is refused within 2 s without a restart; --http-client-ca
# without HTTPS, without tokens or with a file that is not a CA refused.
source "$(dirname "$0")/lib/cluster.bash"
command -v curl >/dev/null || skip "curl not installed"
command -v jq >/dev/null || skip "jq not installed"

P=$T/pki
"$IOFLEET" pki init "$P" --agent node1 --agent alice --agent bob >/dev/null || fail "pki init failed"
"$IOFLEET" pki init "$T/other" --agent alice >/dev/null || fail "pki init (another CA) failed"
NAME=iofleet-manager
"$IOFLEET" serve token new --http-tokens "$T/tokens" --scope viewer --name carol >"$T/carol.tok" ||
    fail "serve token new failed"
CAROL=$(cat "$T/carol.tok")
printf 'cert alice operator\ncert bob viewer\n' >>"$T/tokens"
serve_args=(serve --listen 127.0.0.1:0 --insecure --db "$T/runs.db" --http 127.0.0.1:0)
tls=(--http-tls-cert "$P/manager.pem" --http-tls-key "$P/manager-key.pem")

# --- refusals, before anything listens ------------------------------------------------
expect_rc 2 "$IOFLEET" "${serve_args[@]}" --http-tokens "$T/tokens" --http-client-ca "$P/ca.pem"
expect_in "$T/err" "--http-client-ca needs HTTPS: add --http-tls-cert F --http-tls-key F"
expect_rc 2 "$IOFLEET" "${serve_args[@]}" "${tls[@]}" --http-client-ca "$P/ca.pem"
expect_in "$T/err" "--http-client-ca needs --http-tokens"
expect_rc 2 "$IOFLEET" "${serve_args[@]}" "${tls[@]}" --http-tokens "$T/tokens" \
    --http-client-ca "$P/alice.pem"
expect_in "$T/err" "--http-client-ca $P/alice.pem: not a CA certificate"
expect_rc 2 "$IOFLEET" "${serve_args[@]}" "${tls[@]}" --http-tokens "$T/tokens" \
    --http-client-ca "$T/none.pem"
expect_in "$T/err" "--http-client-ca $T/none.pem: No such file or directory"
ok "--http-client-ca without HTTPS, without tokens, not a CA or missing: refused, each named"

cl_spawn srv "$T/serve.out" "$T/serve.err" "$IOFLEET" "${serve_args[@]}" "${tls[@]}" \
    --http-tokens "$T/tokens" --http-client-ca "$P/ca.pem"
cl_wait_log "$T/serve.err" "iofleet serve: API on https://127.0.0.1:" 20
port=$(sed -n 's|.*API on https://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$T/serve.err" | head -n1)
[ -n "$port" ] || fail "no API port in: $(cat "$T/serve.err")"
root=https://$NAME:$port
base=$root/api/v1
# code WANT ARGS...: the status of curl ARGS (body in $T/body) is WANT.
code() {
    local want=$1 got
    shift
    got=$(curl -sS --cacert "$P/ca.pem" --resolve "$NAME:$port:127.0.0.1" -o "$T/body" \
        -w '%{http_code}' "$@") || true
    [ "$got" = "$want" ] || fail "$* answered $got, want $want: $(cat "$T/body"); serve: $(tail -n3 "$T/serve.err")"
}
cert() { printf '%s\n' --cert "$1/$2.pem" --key "$1/$2-key.pem"; }
mapfile -t ALICE < <(cert "$P" alice)
mapfile -t BOB < <(cert "$P" bob)
mapfile -t NODE1 < <(cert "$P" node1)
mapfile -t ALICE2 < <(cert "$T/other" alice)
plan_json='{"name": "p", "run": {"ramp": "1s", "duration": "1s"}, "specs": [{"name": "4k", "lines": [{"size": "4k"}]}],
  "workers": [{"engine": "null", "targets": [{"path": "f", "size": "1m"}]}]}'
post() { code "$1" -H 'Content-Type: application/json' --data-binary "$plan_json" "${@:2}"; }

code 200 "${ALICE[@]}" "$base/version"
post 409 "${ALICE[@]}" "$base/runs"
jq -e '.error.message | contains("agent")' "$T/body" >/dev/null || fail "operator cert's run: $(cat "$T/body")"
post 200 "${ALICE[@]}" "$base/plans/check"
code 200 "${ALICE[@]}" "$root/"
expect_in "$T/body" 'id="state"'
ok "alice's certificate (cert alice operator): GET 200, POST /api/v1/runs past authorization (409: no agent), the console at /"
code 200 "${BOB[@]}" "$base/agents"
post 403 "${BOB[@]}" "$base/runs"
jq -e '.error.message | contains("certificate '"'bob'"' is a viewer'"'"'s")' "$T/body" >/dev/null ||
    fail "viewer cert's POST: $(cat "$T/body")"
ok "bob's certificate (cert bob viewer): GET 200, POST /api/v1/runs 403"
code 401 "${NODE1[@]}" "$base/version"
code 200 "${NODE1[@]}" "$root/"
expect_in "$T/body" '<form id="signin"'
code 200 "${NODE1[@]}" -H "Authorization: Bearer $CAROL" "$base/version"
code 401 "${ALICE2[@]}" "$base/version"
code 200 "${ALICE2[@]}" -H "Authorization: Bearer $CAROL" "$base/version"
expect_in "$T/serve.err" "--http: a client certificate not accepted (this line at most every 10 s):"
code 401 "$base/version"
code 200 -H "Authorization: Bearer $CAROL" "$base/version"
code 200 "$root/"
expect_in "$T/body" '<form id="signin"'
ok "a certificate no line names, or of another CA ($(grep -m1 'not accepted' "$T/serve.err" | sed 's/.*accepted: //')), falls back to the token: 401 without, 200 with"

# Revocation covers certificates: alice's cert line deleted (renamed into place).
grep -v '^cert alice ' "$T/tokens" >"$T/tokens.new"
chmod 600 "$T/tokens.new"
mv -f "$T/tokens.new" "$T/tokens"
t0=$(cl_now_ms)
while :; do
    got=$(curl -s --cacert "$P/ca.pem" --resolve "$NAME:$port:127.0.0.1" -o /dev/null \
        -w '%{http_code}' "${ALICE[@]}" "$base/version") || true
    [ "$got" = 401 ] && break
    [ $(($(cl_now_ms) - t0)) -lt 2000 ] || fail "alice's certificate still $got 2 s after her line went"
    sleep 0.1
done
took=$(($(cl_now_ms) - t0))
code 200 "${BOB[@]}" "$base/version"
cl_stop "$srv"
ok "alice's cert line deleted: her certificate 401 in $took ms, no restart; bob's still 200"
