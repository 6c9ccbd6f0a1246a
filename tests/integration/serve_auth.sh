#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# iofleet serve --http over HTTPS with tokens (docs/api.md, Security): the
# manager certificate of `iofleet pki init` served with --http-tls-cert and
# --http-tls-key (TLS 1.3 and 1.2, not 1.1; plain HTTP to the port gets no
# answer; an Origin must say https); tokens from `iofleet serve token new`
# (no token or a wrong one 401, a viewer's GET 200 and POST 403, an
# operator's POST through; failures logged without the token, then 429);
# wrong TLS files, a tokens file others may read and a non-loopback --http
# without HTTPS and tokens refused before anything listens, naming what to
# add; in a network namespace of its own, 0.0.0.0 served with both. Over
# HTTPS: every answer has Strict-Transport-Security (plain HTTP none); an
# operator's POST still obeys the CSRF rules (a form's type 415, a foreign
# Origin 403) and the 1 MiB bound (413); 20 connections stalled before the
# TLS handshake are closed by the 5 s header deadline while a client with a
# token is still answered. The console's sign-in: the sign-in page without
# credentials, a wrong token 401, a good one a session cookie with its
# flags (no Secure over loopback HTTP) acting with the token's scope, CSRF
# rules still on, sign-out, a forged cookie 401. The tokens file read again
# without a restart: a line removed refuses its token and its sessions
# within 2 s, a scope changed applies, a broken file refuses everyone (503)
# until fixed, SIGHUP reads it at once.
source "$(dirname "$0")/lib/cluster.bash"
command -v curl >/dev/null || skip "curl not installed"
command -v jq >/dev/null || skip "jq not installed"
command -v openssl >/dev/null || skip "openssl not installed"
PY=$(command -v /usr/bin/python3 || command -v python3) || skip "python3 not installed"
HEADER_S=5 # MGR_HTTP_HEADER_S in manager/sinks/http_guard.h

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
# Tokens: one of each scope, printed once; the file keeps their hashes only.
"$IOFLEET" serve token new --http-tokens "$T/tokens" --scope operator --name alice >"$T/op.tok" ||
    fail "serve token new (operator) failed"
"$IOFLEET" serve token new --http-tokens "$T/tokens" --scope viewer --name bob >"$T/view.tok" ||
    fail "serve token new (viewer) failed"
OP=$(cat "$T/op.tok")
VIEW=$(cat "$T/view.tok")
[[ "$OP" =~ ^iofleet_[0-9a-f]{64}$ ]] || fail "operator token: '$OP'"
[ "$(stat -c %a "$T/tokens")" = 600 ] || fail "tokens file mode $(stat -c %a "$T/tokens")"
! grep -qF -e "$OP" -e "$VIEW" "$T/tokens" || fail "a token itself is in the tokens file"
grep -qx "operator alice $(printf %s "$OP" | sha256sum | cut -d' ' -f1)" "$T/tokens" ||
    fail "no 'operator alice SHA256' line: $(cat "$T/tokens")"
expect_rc 2 "$IOFLEET" serve token new --http-tokens "$T/tokens" --scope viewer --name bob
expect_in "$T/err" "--name bob: $T/tokens already has a token of that name (line 3)"
expect_rc 2 "$IOFLEET" serve token new --http-tokens "$T/tokens" --scope admin --name carol
expect_in "$T/err" "--scope must be viewer or operator, got 'admin'"
ok "serve token new: tokens printed once, stored as SHA-256, a second 'bob' and a bad scope refused"

# The tokens file: only its owner may read it.
cp "$T/tokens" "$T/tokens.644"
chmod 644 "$T/tokens.644"
expect_rc 2 "$IOFLEET" "${serve_args[@]}" --http 127.0.0.1:0 --http-tokens "$T/tokens.644"
expect_in "$T/err" "--http-tokens $T/tokens.644: mode 0644 lets others than its owner read it: fix it with: chmod 600"
expect_rc 2 "$IOFLEET" serve token new --http-tokens "$T/tokens.644" --scope viewer --name carol
expect_in "$T/err" "mode 0644"
printf 'viewer dave 1234\n' >"$T/tokens.bad"
chmod 600 "$T/tokens.bad"
expect_rc 2 "$IOFLEET" "${serve_args[@]}" --http 127.0.0.1:0 --http-tokens "$T/tokens.bad"
expect_in "$T/err" "--http-tokens $T/tokens.bad:1: the hash is 4 characters, not 64 hex digits"
expect_rc 2 "$IOFLEET" "${serve_args[@]}" --http 127.0.0.1:0 --http-tokens "$T/none"
expect_in "$T/err" "--http-tokens $T/none: No such file or directory"
ok "tokens file of mode 0644, with a bad line or missing refused: $(head -n1 "$T/err")"

for addr in 198.18.0.1:0 0.0.0.0:0 '[::]:0'; do
    expect_rc 2 "$IOFLEET" "${serve_args[@]}" --http "$addr"
    expect_in "$T/err" "--http $addr"
    expect_in "$T/err" "is not a loopback address"
    expect_in "$T/err" "add --http-tls-cert F --http-tls-key F and --http-tokens F"
done
ok "non-loopback --http without HTTPS or tokens refused: $(head -n1 "$T/err")"
expect_rc 2 "$IOFLEET" "${serve_args[@]}" --http 198.18.0.1:0 --http-tls-cert "$P/manager.pem" \
    --http-tls-key "$P/manager-key.pem"
expect_in "$T/err" "add --http-tokens F ("
expect_rc 2 "$IOFLEET" "${serve_args[@]}" --http 198.18.0.1:0 --http-tokens "$T/tokens"
expect_in "$T/err" "add --http-tls-cert F --http-tls-key F ("
ok "non-loopback --http with HTTPS but no tokens, or tokens but no HTTPS, refused"

# --- HTTPS on loopback ----------------------------------------------------------------
cl_spawn srv "$T/serve.out" "$T/serve.err" "$IOFLEET" "${serve_args[@]}" --http 127.0.0.1:0 \
    --http-tls-cert "$P/manager.pem" --http-tls-key "$P/manager-key.pem" --http-tokens "$T/tokens"
cl_wait_log "$T/serve.err" "iofleet serve: API on https://127.0.0.1:" 20
port=$(sed -n 's|.*API on https://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$T/serve.err" | head -n1)
[ -n "$port" ] || fail "no API port in: $(cat "$T/serve.err")"
base=https://$NAME:$port/api/v1
tcurl() { curl -sS --cacert "$P/ca.pem" --resolve "$NAME:$port:127.0.0.1" "$@"; }

tcurl -f -o "$T/version.json" -H "Authorization: Bearer $VIEW" "$base/version" ||
    fail "GET $base/version over HTTPS failed"
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

# code WANT ARGS...: the status of tcurl ARGS (body in $T/body) is WANT.
code() {
    local want=$1 got
    shift
    got=$(tcurl -o "$T/body" -D "$T/head" -w '%{http_code}' "$@") || true
    [ "$got" = "$want" ] || fail "$* answered $got, want $want: $(cat "$T/body")"
}
plan_json='{"name": "p", "run": {"ramp": "1s", "duration": "1s"}, "specs": [{"name": "4k", "lines": [{"size": "4k"}]}],
  "workers": [{"engine": "null", "targets": [{"path": "f", "size": "1m"}]}]}'
post() { code "$1" -H 'Content-Type: application/json' --data-binary "$plan_json" "${@:2}"; }

code 401 "$base/version"
expect_in "$T/head" 'WWW-Authenticate: Bearer realm="iofleet"'
jq -e '.error.status == 401 and (.error.message | contains("Authorization: Bearer"))' "$T/body" >/dev/null ||
    fail "401 body: $(cat "$T/body")"
code 401 -H "Authorization: Bearer iofleet_not-a-token-of-this-server" "$base/agents"
expect_in "$T/head" 'error="invalid_token"'
code 401 -H "Authorization: Basic $(printf 'alice:%s' "$OP" | base64 -w0)" "$base/version"
post 401 "$base/plans/check"
ok "no token, a wrong one, Basic instead of Bearer: 401 with WWW-Authenticate"
code 200 -H "Authorization: Bearer $VIEW" "$base/agents"
code 200 -H "Authorization: bearer  $VIEW " "$base/runs"
post 403 -H "Authorization: Bearer $VIEW" "$base/plans/check"
jq -e '.error.message | contains("token '"'bob'"' is a viewer'"'"'s")' "$T/body" >/dev/null ||
    fail "viewer POST: $(cat "$T/body")"
post 403 -H "Authorization: Bearer $VIEW" "$base/runs/current/stop"
post 200 -H "Authorization: Bearer $OP" "$base/plans/check"
jq -e '.valid == true' "$T/body" >/dev/null || fail "operator's plan check: $(cat "$T/body")"
post 409 -H "Authorization: Bearer $OP" "$base/runs/current/stop"
code 200 -H "Authorization: Bearer $OP" "$base/version"
ok "viewer: GET 200, POST 403; operator: POST through (plan check 200, stop 409 with no run)"
grep -F "refused: a token that is not in the tokens file" "$T/serve.err" >/dev/null ||
    fail "the wrong token's refusal is not logged: $(cat "$T/serve.err")"
! grep -qF -e "not-a-token-of-this-server" -e "$OP" -e "$VIEW" "$T/serve.err" ||
    fail "a token is in serve's log: $(cat "$T/serve.err")"
ok "failures logged without the token: $(grep -m1 'not in the tokens file' "$T/serve.err")"

# A POST from this server's own page names it https://; http:// is another
# origin.
post 200 -H "Authorization: Bearer $OP" -H "Origin: https://$NAME:$port" "$base/plans/check"
code=$(tcurl -o "$T/check" -w '%{http_code}' -H 'Content-Type: application/json' \
    -H "Authorization: Bearer $OP" -H "Origin: http://$NAME:$port" \
    --data-binary "$plan_json" "$base/plans/check")
[ "$code" = 403 ] && jq -e '.error.message | contains("https://")' "$T/check" >/dev/null ||
    fail "POST with an http:// Origin over HTTPS: $code $(cat "$T/check")"
ok "POST: Origin https://$NAME:$port accepted, http:// refused"

# HSTS on every HTTPS answer, errors included.
code 200 -H "Authorization: Bearer $VIEW" "$base/version"
expect_in "$T/head" "Strict-Transport-Security: max-age=31536000"
code 401 "$base/agents"
expect_in "$T/head" "Strict-Transport-Security: max-age=31536000"
code 404 -H "Authorization: Bearer $VIEW" "$base/nothing"
expect_in "$T/head" "Strict-Transport-Security: max-age=31536000"
ok "Strict-Transport-Security on HTTPS answers (200, 401, 404)"

# CSRF and the body bound hold for an operator too: the token is no cookie,
# but a form's content type and a foreign Origin are still refused.
code 415 -H "Authorization: Bearer $OP" -H 'Content-Type: text/plain' --data-binary "$plan_json" \
    "$base/runs"
post 403 -H "Authorization: Bearer $OP" -H "Origin: https://evil.example" "$base/runs"
head -c $((1024 * 1024 + 1)) /dev/zero | tr '\0' ' ' >"$T/big.json"
code 413 -H "Authorization: Bearer $OP" -H 'Content-Type: application/json' \
    --data-binary @"$T/big.json" "$base/plans/check"
ok "operator over HTTPS: a text/plain POST 415, a foreign Origin 403, 1 MiB + 1 byte 413"

# Sign-in for the console (docs/api.md, Sign-in): without credentials GET /
# is the sign-in page; POST /api/v1/session trades a token for a session
# cookie (HttpOnly; Secure; SameSite=Strict; Path=/) that then acts with
# the token's scope; sign-out ends it; a forged cookie is refused.
root=https://$NAME:$port
jar=$T/jar
signin() { code "$1" -H 'Content-Type: application/json' --data-binary "{\"token\": \"$2\"}" "${@:3}" "$base/session"; }
code 200 "$root/"
expect_in "$T/body" '<form id="signin"'
expect_in "$T/body" '<script src="/signin.js" defer></script>'
expect_in "$T/head" "Content-Security-Policy: default-src 'none'; script-src 'self';"
! grep -q '<script>' "$T/body" || fail "the sign-in page has an inline script: $(cat "$T/body")"
! grep -qF 'id="state"' "$T/body" || fail "the sign-in page shows the console's state"
code 200 "$root/signin.js"
expect_in "$T/body" "/api/v1/session"
code 401 "$root/console.js"
ok "GET / without credentials: the sign-in page (no inline script, CSP); its script served, the console's not"
signin 401 iofleet_guess
jq -e '.error.message | contains("not one this server knows")' "$T/body" >/dev/null ||
    fail "sign-in with a wrong token: $(cat "$T/body")"
! grep -qi '^Set-Cookie' "$T/head" || fail "a wrong token got a cookie: $(cat "$T/head")"
code 415 -H 'Content-Type: text/plain' --data-binary "{\"token\": \"$VIEW\"}" "$base/session"
signin 403 "$VIEW" -H "Origin: https://evil.example"
code 400 -H 'Content-Type: application/json' --data-binary '["x"]' "$base/session"
code 405 "$base/session"
ok "sign-in: a wrong token 401 without a cookie; a text/plain body 415, a foreign Origin 403, no object 400"
signin 200 "$VIEW" -c "$jar" -H "Origin: https://$NAME:$port"
grep -Eiq '^Set-Cookie: iofleet_session=[0-9a-f]{64}; HttpOnly; Secure; SameSite=Strict; Path=/; Max-Age=43200' "$T/head" ||
    fail "sign-in cookie: $(grep -i '^Set-Cookie' "$T/head")"
jq -e '.name == "bob" and .scope == "viewer" and .expires_in_s == 43200' "$T/body" >/dev/null ||
    fail "sign-in answer: $(cat "$T/body")"
sid=$(awk '$6 == "iofleet_session" { print $7 }' "$jar")
[[ "$sid" =~ ^[0-9a-f]{64}$ ]] || fail "no session in the cookie jar: $(cat "$jar")"
! grep -qF -e "$sid" -e "$VIEW" "$T/serve.err" || fail "a session id or token in serve's log"
code 200 -b "$jar" "$root/"
expect_in "$T/body" '<script src="/console.js"></script>'
expect_in "$T/body" 'id="state"'
code 200 -b "$jar" "$root/console.js"
code 200 -b "$jar" "$base/version"
post 403 -b "$jar" "$base/plans/check"
jq -e '.error.message | contains("token '"'bob'"' is a viewer'"'"'s")' "$T/body" >/dev/null ||
    fail "viewer cookie POST: $(cat "$T/body")"
ok "viewer's cookie: GET / the console, API GET 200, POST 403"
signin 200 "$OP" -c "$T/jar.op"
post 200 -b "$T/jar.op" "$base/plans/check"
post 403 -b "$T/jar.op" -H "Origin: https://evil.example" "$base/plans/check"
code 415 -b "$T/jar.op" -H 'Content-Type: text/plain' --data-binary "$plan_json" "$base/plans/check"
ok "operator's cookie: POST 200; still a foreign Origin 403 and a form's type 415"
code 415 -b "$jar" -c "$jar" --data-binary '{}' "$base/session/end"
code 200 -b "$jar" -c "$jar" -H 'Content-Type: application/json' --data-binary '{}' "$base/session/end"
grep -Eiq '^Set-Cookie: iofleet_session=; HttpOnly; Secure; SameSite=Strict; Path=/; Max-Age=0' "$T/head" ||
    fail "sign-out cookie: $(grep -i '^Set-Cookie' "$T/head")"
jq -e '.signed_out == true' "$T/body" >/dev/null || fail "sign-out: $(cat "$T/body")"
code 401 -b "$jar" "$base/version"
code 401 -H "Cookie: iofleet_session=$sid" "$base/version"
jq -e '.error.message | contains("session cookie is unknown or expired")' "$T/body" >/dev/null ||
    fail "ended session: $(cat "$T/body")"
code 200 -H "Cookie: iofleet_session=$sid" "$root/"
expect_in "$T/body" '<form id="signin"'
ok "sign-out (viewer, a POST): cookie cleared; then 401, the old id replayed 401, / the sign-in page"
code 401 -H "Cookie: iofleet_session=$(printf '%064d' 0)" "$base/version"
code 401 -H "Cookie: iofleet_session=forged" "$base/agents"
grep -F "refused: a session cookie that is unknown or expired" "$T/serve.err" >/dev/null ||
    fail "a forged cookie's refusal is not logged: $(cat "$T/serve.err")"
ok "a forged cookie: 401, logged and counted as a failure"

# Connections stalled before the TLS handshake (20 from 127.0.0.2..21, one
# /24) are closed by the header deadline; meanwhile a client with a token
# from 127.0.0.1 is answered.
"$PY" - "$port" "$T/stall.json" <<'PYEOF' &
import json, socket, sys, time
port, out = int(sys.argv[1]), sys.argv[2]
socks = []
for i in range(20):
    s = socket.socket()
    s.bind(("127.0.0.%d" % (2 + i), 0))
    s.connect(("127.0.0.1", port))
    s.settimeout(0.05)
    socks.append([s, time.monotonic(), None])
deadline = time.monotonic() + 20
while time.monotonic() < deadline and any(c[2] is None for c in socks):
    for c in socks:
        if c[2] is None:
            try:
                if c[0].recv(1) == b"":
                    c[2] = time.monotonic() - c[1]
            except socket.timeout:
                pass
            except OSError:
                c[2] = time.monotonic() - c[1]
json.dump({"closed": [c[2] for c in socks]}, open(out, "w"))
PYEOF
stall=$!
sleep 1
t0=$(cl_now_ms)
code 200 --max-time 10 -H "Authorization: Bearer $VIEW" "$base/version"
took=$(($(cl_now_ms) - t0))
wait "$stall" || fail "the stalling client failed"
jq -e --argjson h "$HEADER_S" '.closed | length == 20 and all(. != null and . <= $h + 3)' \
    "$T/stall.json" >/dev/null || fail "stalled TLS connections not closed by the deadline: $(cat "$T/stall.json")"
ok "20 connections stalled before the handshake closed within $(jq -c '[.closed | min, max]' "$T/stall.json") s; a token's GET answered meanwhile in $took ms"

# Failures from one address are bounded: after 20 in a minute, 429 even
# with a good token. The failures so far, as serve counted them:
n=$(sed -n 's/.*(failure \([0-9]*\) of 20 in 60 s from there)$/\1/p' "$T/serve.err" | tail -n1)
[ "${n:-0}" -ge 4 ] && [ "$n" -lt 20 ] || fail "serve counted ${n:-no} failures: $(cat "$T/serve.err")"
for _ in $(seq $((20 - n))); do code 401 -H "Authorization: Bearer iofleet_guess" "$base/version"; done
code 429 -H "Authorization: Bearer $OP" "$base/version"
expect_in "$T/head" "Retry-After: 60"
ok "after 20 failed authentications from 127.0.0.1: 429 with Retry-After"
cl_stop "$srv"

# Plain HTTP on loopback with tokens: tokens are required there too.
cl_spawn srv2 "$T/serve2.out" "$T/serve2.err" "$IOFLEET" "${serve_args[@]}" --http 127.0.0.1:0 \
    --http-tokens "$T/tokens"
cl_wait_log "$T/serve2.err" "iofleet serve: API on http://127.0.0.1:" 20
api2=$(sed -n 's|.*API on \(http://[^ ]*\) .*|\1|p' "$T/serve2.err" | head -n1)
got=$(curl -s -o /dev/null -w '%{http_code}' "${api2}version")
[ "$got" = 401 ] || fail "plain HTTP with tokens, no token: $got"
got=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $VIEW" "${api2}version")
[ "$got" = 200 ] || fail "plain HTTP with tokens, viewer: $got"
curl -s -o /dev/null -D "$T/head2" -H "Authorization: Bearer $VIEW" "${api2}version"
! grep -qi '^Strict-Transport-Security' "$T/head2" || fail "HSTS over plain HTTP: $(cat "$T/head2")"
got=$(curl -s -o /dev/null -D "$T/head2" -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary "{\"token\": \"$VIEW\"}" "${api2}session")
[ "$got" = 200 ] || fail "plain HTTP sign-in: $got"
grep -Eiq '^Set-Cookie: iofleet_session=[0-9a-f]{64}; HttpOnly; SameSite=Strict; Path=/; Max-Age=43200' "$T/head2" ||
    fail "loopback HTTP sign-in cookie (no Secure): $(grep -i '^Set-Cookie' "$T/head2")"
cl_stop "$srv2"
ok "loopback HTTP with --http-tokens: 401 without, 200 with a token; sign-in's cookie without Secure"

# Revocation without a restart (docs/api.md, Security): serve reads the
# tokens file again when it changes (looked at before a request, at most
# once a second) and on SIGHUP. alice's line removed by an editor's rename:
# her token and her session cookie 401 within 2 s; bob's token still 200.
cp "$T/tokens" "$T/tokens.live"
chmod 600 "$T/tokens.live"
# put TEXT: the tokens file rewritten as an editor does (a new file renamed into place).
put() { printf '%s' "$1" >"$T/tokens.live.new" && chmod "${2:-600}" "$T/tokens.live.new" && mv -f "$T/tokens.live.new" "$T/tokens.live"; }
cl_spawn srv4 "$T/serve4.out" "$T/serve4.err" "$IOFLEET" "${serve_args[@]}" --http 127.0.0.1:0 \
    --http-tokens "$T/tokens.live"
cl_wait_log "$T/serve4.err" "iofleet serve: API on http://127.0.0.1:" 20
api4=$(sed -n 's|.*API on \(http://[^ ]*\) .*|\1|p' "$T/serve4.err" | head -n1)
# st4 WANT ARGS...: the status of curl ARGS against serve 4 (body in $T/body4) is WANT.
st4() {
    local want=$1 got
    shift
    got=$(curl -s -o "$T/body4" -w '%{http_code}' "$@") || true
    [ "$got" = "$want" ] || fail "$* answered $got, want $want: $(cat "$T/body4"); serve: $(tail -n4 "$T/serve4.err")"
}
# until4 WANT MS ARGS...: polls until curl ARGS answers WANT, at most MS ms; prints the ms taken.
until4() {
    local want=$1 ms=$2 t0 got
    shift 2
    t0=$(cl_now_ms)
    while :; do
        got=$(curl -s -o "$T/body4" -w '%{http_code}' "$@") || true
        [ "$got" = "$want" ] && break
        [ $(($(cl_now_ms) - t0)) -lt "$ms" ] || fail "$* still $got after $ms ms, want $want: $(cat "$T/body4")"
        sleep 0.1
    done
    echo $(($(cl_now_ms) - t0))
}
st4 200 -c "$T/jar4" -H 'Content-Type: application/json' --data-binary "{\"token\": \"$OP\"}" "${api4}session"
st4 200 -b "$T/jar4" "${api4}version"
st4 200 -H "Authorization: Bearer $OP" "${api4}version"
# Event streams open before the change: alice's (by session and by token) end
# with her line, bob's goes on.
cl_spawn ev_sess "$T/ev_sess.out" "$T/ev_sess.err" curl -sN -b "$T/jar4" "${api4}events"
cl_spawn ev_tok "$T/ev_tok.out" "$T/ev_tok.err" curl -sN -H "Authorization: Bearer $OP" "${api4}events"
cl_spawn ev_bob "$T/ev_bob.out" "$T/ev_bob.err" curl -sN -H "Authorization: Bearer $VIEW" "${api4}events"
for f in ev_sess ev_tok ev_bob; do
    cl_wait_cmd 10 "the $f event stream's opening" grep -q '^retry: ' "$T/$f.out"
done
line_op=$(grep '^operator alice ' "$T/tokens.live")
line_view=$(grep '^viewer bob ' "$T/tokens.live")
put "$line_view
"
took=$(until4 401 2000 -H "Authorization: Bearer $OP" "${api4}version")
cl_wait_exit "$ev_sess" 3 rc
cl_wait_exit "$ev_tok" 3 rc
cl_alive "$ev_bob" || fail "bob's event stream ended with alice's line: $(cat "$T/ev_bob.err")"
cl_stop "$ev_bob"
st4 401 -b "$T/jar4" "${api4}version"
jq -e '.error.message | contains("session cookie is unknown or expired")' "$T/body4" >/dev/null ||
    fail "revoked token's session: $(cat "$T/body4")"
st4 200 -H "Authorization: Bearer $VIEW" "${api4}version"
expect_in "$T/serve4.err" "--http-tokens $T/tokens.live read again: 1 line (1 gone, 0 new, 0 with another scope); 1 session ended"
ok "alice's line removed (renamed into place): her token 401 in $took ms, her session 401, her open event streams ended; bob's token 200, his stream open"

# alice's line back: her token works, her ended session does not; bob made
# an operator: his token may POST at once.
put "$line_op
${line_view/#viewer /operator }
"
until4 200 2000 -H "Authorization: Bearer $OP" "${api4}version" >/dev/null
st4 401 -b "$T/jar4" "${api4}version"
st4 200 -H "Authorization: Bearer $VIEW" -H 'Content-Type: application/json' --data-binary "$plan_json" "${api4}plans/check"
ok "a line back: the token again, not its ended session; a scope changed: bob's token now POSTs"

# A broken file closes the API (503 for every token and session, the
# reason logged once with the file and the line); fixed, it is open again.
st4 200 -c "$T/jar4v" -H 'Content-Type: application/json' --data-binary "{\"token\": \"$VIEW\"}" "${api4}session"
put "$line_op
viewer carol 1234
"
took=$(until4 503 2000 -H "Authorization: Bearer $OP" "${api4}version")
jq -e '.error.message | contains("tokens file is unusable")' "$T/body4" >/dev/null ||
    fail "closed API's answer: $(cat "$T/body4")"
st4 503 -b "$T/jar4v" "${api4}version"
st4 503 -H 'Content-Type: application/json' --data-binary "{\"token\": \"$OP\"}" "${api4}session"
expect_in "$T/serve4.err" "--http: --http-tokens $T/tokens.live:2: the hash is 4 characters, not 64 hex digits (the token's SHA-256): every token and session is refused until the file is fixed"
[ "$(grep -c 'every token and session is refused' "$T/serve4.err")" = 1 ] ||
    fail "the reason not logged once: $(grep 'every token and session' "$T/serve4.err")"
put "$line_op
$line_view
" 644
t0=$(cl_now_ms) # the file is looked at before a request: ask until the new reason is logged
until grep -qF "tokens.live: mode 0644 lets others than its owner read it" "$T/serve4.err"; do
    [ $(($(cl_now_ms) - t0)) -lt 2000 ] || fail "mode 0644 not logged: $(cat "$T/serve4.err")"
    st4 503 -H "Authorization: Bearer $OP" "${api4}version"
    sleep 0.1
done
put "$line_op
$line_view
"
until4 200 2000 -H "Authorization: Bearer $OP" "${api4}version" >/dev/null
st4 200 -b "$T/jar4v" "${api4}version"
expect_in "$T/serve4.err" "read again and good: the API is open again"
ok "a malformed file, then one others may read: every token and session 503 (in $took ms), logged with the line; fixed: open again, bob's session back"

# SIGHUP: bob's hash replaced in place by carol's, the size and mtime kept
# (so the look once a second sees no change): only SIGHUP reads it.
CAROL=iofleet_$(printf '%064d' 7)
carol_hash=$(printf %s "$CAROL" | sha256sum | cut -d' ' -f1)
cp -p "$T/tokens.live" "$T/tokens.ref"
sed "s/^viewer bob .*/viewer bob $carol_hash/" "$T/tokens.ref" >"$T/tokens.live" # same inode
touch -r "$T/tokens.ref" "$T/tokens.live"
sleep 1.2
st4 200 -H "Authorization: Bearer $VIEW" "${api4}version"
st4 401 -H "Authorization: Bearer $CAROL" "${api4}version"
kill -HUP "$srv4"
cl_wait_log "$T/serve4.err" "iofleet serve: SIGHUP: reading the tokens file again" 5
until4 200 2000 -H "Authorization: Bearer $CAROL" "${api4}version" >/dev/null
st4 401 -H "Authorization: Bearer $VIEW" "${api4}version"
cl_alive "$srv4" || fail "serve died of SIGHUP"
cl_stop "$srv4"
ok "SIGHUP reads the tokens file at once (a change the stat rule cannot see); serve keeps running"

# Any address with HTTPS and tokens, in a network namespace of our own (its
# loopback only): serve binds 0.0.0.0 and answers a client with a token.
if command -v unshare >/dev/null && unshare -n true 2>/dev/null; then
    IOFLEET=$IOFLEET P=$P T=$T NAME=$NAME VIEW=$VIEW timeout 60 unshare -n bash -c '
        set -eu
        ip link set lo up
        "$IOFLEET" serve --listen 127.0.0.1:0 --insecure --db "$T/runs3.db" --http 0.0.0.0:0 \
            --http-tls-cert "$P/manager.pem" --http-tls-key "$P/manager-key.pem" \
            --http-tokens "$T/tokens" 2>"$T/serve3.err" &
        pid=$!
        trap "kill $pid 2>/dev/null; wait $pid 2>/dev/null" EXIT
        for _ in $(seq 300); do grep -q "API on https://0.0.0.0:" "$T/serve3.err" && break; sleep 0.05; done
        port=$(sed -n "s|.*API on https://0\.0\.0\.0:\([0-9]*\)/.*|\1|p" "$T/serve3.err")
        curl -sS -o /dev/null -w "%{http_code}" --cacert "$P/ca.pem" --resolve "$NAME:$port:127.0.0.1" \
            -H "Authorization: Bearer $VIEW" "https://$NAME:$port/api/v1/version" >"$T/code3"' ||
        fail "serve on 0.0.0.0 with HTTPS and tokens: $(cat "$T/serve3.err" 2>/dev/null)"
    [ "$(cat "$T/code3")" = 200 ] || fail "GET on 0.0.0.0 with a viewer token: $(cat "$T/code3")"
    ok "0.0.0.0 with HTTPS and tokens served (own network namespace): 200"
else
    echo "note: unshare -n not permitted: the 0.0.0.0 case not run"
fi
