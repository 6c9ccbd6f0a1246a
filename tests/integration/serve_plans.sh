# SPDX-License-Identifier: Apache-2.0
# POST /api/v1/plans/check of iofleet serve (docs/api.md): a plan is checked by
# the loader `iofleet validate` uses: a good one answers its test count and
# canonical plan, a refused one 400 with the very message `iofleet validate`
# prints for it. CSRF: a cross-site form's POST (urlencoded or text/plain) is
# refused with 415, a JSON POST whose Origin is another site with 403; the body
# is bounded (413 over 1 MiB); GET is 405 with Allow: POST.
source "$(dirname "$0")/lib/cluster.bash"
command -v curl >/dev/null || skip "curl not installed"
command -v jq >/dev/null || skip "jq not installed"

plan good.json <<'P'
{"name": "check", "run": {"ramp": "1s", "duration": "1s"},
 "specs": [{"name": "4k", "lines": [{"size": "4k"}]}, {"name": "64k", "lines": [{"size": "64k", "read": 0}]}],
 "workers": [{"engine": "null", "targets": [{"path": "f", "size": "1m"}]}]}
P
sed 's/"64k", "read": 0/"64q", "read": 0/' "$T/good.json" >"$T/bad.json"

cl_spawn srv "$T/serve.out" "$T/serve.err" "$IOFLEET" serve --http 127.0.0.1:0 \
    --listen 127.0.0.1:0 --insecure --db "$T/runs.db"
cl_wait_log "$T/serve.err" "iofleet serve: API on http://127.0.0.1:" 20
api=$(sed -n 's/.*API on \(http:[^ ]*\) .*/\1/p' "$T/serve.err" | head -n1)
[ -n "$api" ] || fail "no API URL in: $(cat "$T/serve.err")"
hostport=${api#http://}
hostport=${hostport%%/*}
check=${api}plans/check

# post FILE OUT [CURL ARGS...]: POSTs FILE as JSON; prints the status.
post() {
    local file=$1 out=$2
    shift 2
    curl -s -o "$out" -w '%{http_code}' -H 'Content-Type: application/json' "$@" \
        --data-binary "@$file" "$check"
}

code=$(post "$T/good.json" "$T/r1")
[ "$code" = 200 ] && jq -e '.valid == true and .tests == 2 and .plan.name == "check"' "$T/r1" >/dev/null ||
    fail "good plan: $code $(cat "$T/r1")"
"$IOFLEET" validate "$T/good.json" >"$T/validate.out" 2>/dev/null || fail "iofleet validate refuses the good plan"
ok "a good plan: 200, 2 tests ($(jq -c '{valid, tests}' "$T/r1"))"

code=$(post "$T/bad.json" "$T/r2")
"$IOFLEET" validate - <"$T/bad.json" >/dev/null 2>"$T/validate.err" && fail "iofleet validate accepts the bad plan"
want=$(sed -n 's/^stdin: //p' "$T/validate.err" | head -n1)
[ -n "$want" ] || fail "no message from iofleet validate: $(cat "$T/validate.err")"
[ "$code" = 400 ] && jq -e --arg m "plan: $want" '.error.status == 400 and .error.message == $m' "$T/r2" >/dev/null ||
    fail "bad plan: $code $(cat "$T/r2"), expected 400 with 'plan: $want'"
ok "a refused plan: 400 with iofleet validate's message: $(jq -r .error.message "$T/r2")"

# CSRF: what a form on another site can send.
code=$(curl -s -o "$T/r3" -w '%{http_code}' --data-urlencode "plan@$T/good.json" "$check")
[ "$code" = 415 ] && jq -e '.error.status == 415 and (.error.message | contains("application/json"))' "$T/r3" >/dev/null ||
    fail "urlencoded form POST: $code $(cat "$T/r3")"
code=$(curl -s -o "$T/r4" -w '%{http_code}' -H 'Content-Type: text/plain' -H 'Origin: http://attacker.example' \
    --data-binary "@$T/good.json" "$check")
[ "$code" = 415 ] || fail "text/plain form POST: $code $(cat "$T/r4")"
code=$(post "$T/good.json" "$T/r5" -H 'Origin: http://attacker.example')
[ "$code" = 403 ] && jq -e '.error.status == 403 and (.error.message | contains("attacker.example"))' "$T/r5" >/dev/null ||
    fail "JSON POST from another Origin: $code $(cat "$T/r5")"
code=$(post "$T/good.json" "$T/r6" -H "Origin: http://$hostport")
[ "$code" = 200 ] || fail "JSON POST from this server's own Origin: $code $(cat "$T/r6")"
ok "CSRF: form POSTs 415, another Origin 403, this server's Origin 200"

head -c $((1024 * 1024 + 1)) /dev/zero | tr '\0' ' ' >"$T/big.json"
code=$(post "$T/big.json" "$T/r7")
[ "$code" = 413 ] && jq -e '.error.status == 413' "$T/r7" >/dev/null || fail "1 MiB + 1 body: $code $(cat "$T/r7")"
code=$(curl -s -o "$T/r8" -D "$T/h8" -w '%{http_code}' "$check")
[ "$code" = 405 ] && grep -qi '^Allow: POST' "$T/h8" || fail "GET plans/check: $code $(cat "$T/r8")"
ok "a body over 1 MiB 413; GET 405 (Allow: POST)"

kill -TERM "$srv"
cl_wait_exit "$srv" 20 rc
[ "$rc" = 0 ] || fail "serve exited $rc after SIGTERM"
