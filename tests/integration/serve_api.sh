# SPDX-License-Identifier: Apache-2.0
# iofleet serve and its JSON API, slice 1 (docs/api.md): a non-loopback
# --http is refused before anything listens; two dynamo agents dial into
# serve --listen and GET /api/v1/agents lists them with the inventory
# `iofleet agents --json` prints; GET /api/v1/version; errors are JSON
# (404, 405, a foreign Host header 403); an agent that stops is listed as
# disconnected with when and why; SIGTERM tells the remaining agent bye and
# serve exits 0.
source "$(dirname "$0")/lib/cluster.bash"
command -v curl >/dev/null || skip "curl not installed"
command -v jq >/dev/null || skip "jq not installed"

# Refused before anything listens: exit 2, the address and the reason named.
for addr in 198.18.0.1:0 0.0.0.0:0 '[::]:0'; do
    expect_rc 2 "$IOFLEET" serve --http "$addr" --listen 127.0.0.1:0 --insecure
    expect_in "$T/err" "is not a loopback address"
    expect_in "$T/err" "--http $addr"
done
ok "non-loopback --http refused: $(head -n1 "$T/err")"
expect_rc 2 "$IOFLEET" serve --http 127.0.0.1:x
expect_in "$T/err" "the port must be a number"
expect_rc 3 "$IOFLEET" serve --http 127.0.0.1:0 --listen 127.0.0.1:0
expect_in "$T/err" "plain TCP authenticates nobody"
ok "bad --http port and plain TCP without --insecure refused"

# serve on free ports; its ports from its first line. Started with a soft
# limit of 256 open files: it raises its own to the hard limit (one
# descriptor per agent).
cl_spawn srv "$T/serve.out" "$T/serve.err" bash -c 'ulimit -Sn 256 && exec "$@"' _ \
    "$IOFLEET" serve --http 127.0.0.1:0 --listen 127.0.0.1:0 --insecure
cl_wait_log "$T/serve.err" "iofleet serve: API on http://127.0.0.1:" 20
api=$(sed -n 's/.*API on \(http:[^ ]*\) .*/\1/p' "$T/serve.err" | head -n1)
aport=$(sed -n 's/.*agents on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$T/serve.err" | head -n1)
[ -n "$api" ] && [ -n "$aport" ] || fail "no API URL or agent port in: $(cat "$T/serve.err")"
read -r soft hard < <(awk '/^Max open files/ { print $4, $5 }' "/proc/$srv/limits")
[ "$soft" = "$hard" ] || fail "serve kept a soft limit of $soft open files (hard $hard)"
ok "serve raised its open-file limit from 256 to the hard limit, $hard"

curl -sf "${api}version" >"$T/version.json" || fail "GET ${api}version failed"
jq -e '.api == "v1" and (.iofleet | type == "string") and (.protocol | test("^[0-9]+\\.[0-9]+$"))' \
    "$T/version.json" >/dev/null || fail "version: $(cat "$T/version.json")"
want=$("$IOFLEET" --version | sed -n 's/^iofleet \([^ ]*\) .*/\1/p')
[ "$(jq -r .iofleet "$T/version.json")" = "$want" ] || fail "version $(cat "$T/version.json"), iofleet --version says $want"
ok "GET /api/v1/version: $(cat "$T/version.json")"

cl_start_dialer a1 srv-1 "127.0.0.1:$aport"
cl_start_dialer a2 srv-2 "127.0.0.1:$aport"
# agents N: GET /api/v1/agents lists N connected agents.
connected() {
    curl -sf "${api}agents" >"$T/agents.json" &&
        [ "$(jq '[.agents[] | select(.status == "connected")] | length' "$T/agents.json")" = "$1" ]
}
cl_wait_cmd 20 "two connected agents in ${api}agents" connected 2
jq -e '[.agents[].name] == ["srv-1", "srv-2"]' "$T/agents.json" >/dev/null ||
    fail "agents not listed by name: $(cat "$T/agents.json")"
# The inventory is what `iofleet agents --json` prints for the same agent.
for n in srv-1 srv-2; do
    jq -e --arg n "$n" '.agents[] | select(.name == $n) |
        .certificate == null and .disconnected_at == null and .reason == null and
        (.connected_at | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$")) and
        (.endpoint | startswith("127.0.0.1:")) and
        .hello.name == $n and .hello.role == "agent" and (.hello.software | type == "string") and
        .hello.inventory.cpus > 0 and .hello.inventory.memory_bytes > 0 and
        (.hello.inventory.workdir.path | endswith("work-" + $n))' "$T/agents.json" >/dev/null ||
        fail "$n: inventory missing: $(jq --arg n "$n" '.agents[] | select(.name == $n)' "$T/agents.json")"
done
cpus=$(getconf _NPROCESSORS_ONLN) # what dynamo counts, whatever the affinity
[ "$(jq '.agents[0].hello.inventory.cpus' "$T/agents.json")" = "$cpus" ] ||
    fail "srv-1 reports $(jq ".agents[0].hello.inventory.cpus" "$T/agents.json") CPUs, getconf says $cpus"
ok "GET /api/v1/agents: srv-1 and srv-2 connected, $cpus CPUs, workdirs and versions"

# Errors are JSON with the status and a message.
code=$(curl -s -o "$T/e404" -w '%{http_code}' "${api}nothing")
[ "$code" = 404 ] && jq -e '.error.status == 404 and (.error.message | contains("/api/v1/agents"))' "$T/e404" >/dev/null ||
    fail "unknown endpoint: $code $(cat "$T/e404")"
code=$(curl -s -o "$T/e405" -D "$T/h405" -w '%{http_code}' -X DELETE "${api}agents")
[ "$code" = 405 ] && jq -e '.error.status == 405' "$T/e405" >/dev/null && grep -qi '^Allow: GET, HEAD' "$T/h405" ||
    fail "DELETE /api/v1/agents: $code $(cat "$T/e405")"
# A page elsewhere reaching the loopback API through DNS rebinding names its
# own host.
code=$(curl -s -o "$T/e403" -w '%{http_code}' -H 'Host: attacker.example' "${api}agents")
[ "$code" = 403 ] && jq -e '.error.status == 403 and (.error.message | contains("attacker.example"))' "$T/e403" >/dev/null ||
    fail "foreign Host header: $code $(cat "$T/e403")"
hport=${api#http://127.0.0.1:}
hport=${hport%%/*}
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: localhost:$hport" "${api}agents")
[ "$code" = 200 ] || fail "Host: localhost:PORT answered $code"
ok "404, 405 (Allow: GET, HEAD) and a foreign Host's 403 are JSON errors; localhost is served"

# An agent that stops is listed as disconnected, with when and why.
cl_stop "$a2"
gone() {
    curl -sf "${api}agents" >"$T/agents.json" &&
        jq -e '.agents[] | select(.name == "srv-2") | .status == "disconnected"' "$T/agents.json" >/dev/null
}
cl_wait_cmd 20 "srv-2 disconnected in ${api}agents" gone
jq -e '.agents[] | select(.name == "srv-2") | (.disconnected_at | type == "string") and (.reason | length > 0) and .hello.name == "srv-2"' \
    "$T/agents.json" >/dev/null || fail "srv-2 after it stopped: $(cat "$T/agents.json")"
connected 1 || fail "srv-1 no longer connected: $(cat "$T/agents.json")"
ok "stopped agent listed: $(jq -c '.agents[] | select(.name == "srv-2") | {status, reason}' "$T/agents.json")"

# SIGTERM: srv-1 is told bye, serve exits 0 and says so.
kill -TERM "$srv"
cl_wait_exit "$srv" 20 rc
[ "$rc" = 0 ] || fail "serve exited $rc after SIGTERM: $(cat "$T/serve.err")"
expect_in "$T/serve.err" "iofleet serve: stopped; 1 agent told bye"
cl_wait_log "$T/srv-1.log" "session with manager 'iofleet' ended" 10
cl_alive "$a1" || fail "srv-1 did not survive the manager's stop"
ok "SIGTERM: exit 0, srv-1 told bye and dialling again"
