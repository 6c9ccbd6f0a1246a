# SPDX-License-Identifier: Apache-2.0
# The console of iofleet serve (docs/console.md, docs/api.md): GET
# /api/v1/events streams the agents list as it changes, a run started by
# POST /api/v1/runs (run), its intervals with ALL and per-node figures read
# and write apart (interval), each ended test's final ALL and NODE figures
# (test) and its end with its status (end); after the run GET
# /api/v1/runs/last still gives its tests and their figures; during a run
# /api/v1/agents follows an agent that leaves; a stop ends the run as
# interrupted.
source "$(dirname "$0")/lib/cluster.bash"
command -v curl >/dev/null || skip "curl not installed"
command -v jq >/dev/null || skip "jq not installed"

plan quick.json <<'P'
{"name": "console quick", "run": {"duration": "3s", "interval": "1s"},
 "specs": [{"name": "4k", "lines": [{"size": "4k", "read": 70}]}, {"name": "64k", "lines": [{"size": "64k", "read": 0}]}],
 "workers": [{"engine": "null", "targets": [{"path": "f", "size": "1m"}]}]}
P
plan long.json <<'P'
{"name": "console long", "run": {"duration": "120s", "interval": "1s"},
 "specs": [{"name": "4k", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "null", "targets": [{"path": "f", "size": "1m"}]}]}
P

cl_spawn srv "$T/serve.out" "$T/serve.err" "$IOFLEET" serve --http 127.0.0.1:0 \
    --listen 127.0.0.1:0 --insecure --db "$T/runs.db"
cl_wait_log "$T/serve.err" "iofleet serve: API on http://127.0.0.1:" 20
api=$(sed -n 's/.*API on \(http:[^ ]*\) .*/\1/p' "$T/serve.err" | head -n1)
aport=$(sed -n 's/.*agents on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$T/serve.err" | head -n1)
[ -n "$api" ] && [ -n "$aport" ] || fail "no API URL or agent port in: $(cat "$T/serve.err")"
base=${api%api/v1/}

# post URL FILE OUT: POSTs FILE as JSON; prints the status.
post() {
    curl -s -o "$3" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "@$2" "$1"
}
connected() { # N: that many agents connected
    curl -sf "${api}agents" >"$T/agents.json" &&
        jq -e --argjson n "$1" '[.agents[] | select(.status == "connected")] | length == $n' "$T/agents.json" >/dev/null
}
idle() { [ "$(curl -s -o /dev/null -w '%{http_code}' "${api}runs/current")" = 404 ]; }
# events FILE TYPE: the data of every TYPE event in the stream FILE, one JSON a line.
events() { awk -v t="$2" '/^event: /{e = substr($0, 8)} /^data:/{if (e == t) print substr($0, 6)} /^$/{e = ""}' "$1"; }
has_event() { events "$1" "$2" | grep -q .; }

code=$(curl -s -o "$T/last0.json" -w '%{http_code}' "${api}runs/last")
[ "$code" = 404 ] && jq -e '.error.message | contains("no run has begun")' "$T/last0.json" >/dev/null ||
    fail "runs/last before any run: $code $(cat "$T/last0.json")"
curl -sfI "${api}events" -o /dev/null -D "$T/events.head" --max-time 2 || true

cl_spawn sse "$T/events.txt" "$T/sse.err" curl -sN "${api}events"
cl_start_dialer a1 srv-1 "127.0.0.1:$aport"
cl_start_dialer a2 srv-2 "127.0.0.1:$aport"
cl_wait_cmd 20 "srv-1 and srv-2 connected" connected 2
agents_seen() { events "$T/events.txt" agents | tail -n1 | jq -e '[.agents[] | select(.status == "connected")] | length == 2' >/dev/null; }
cl_wait_cmd 10 "an agents event listing both agents" agents_seen
ok "runs/last 404 before any run; an agents event lists srv-1 and srv-2"

# A run started by POST: run, intervals, tests and its end on the stream.
code=$(post "${api}runs" "$T/quick.json" "$T/s1")
[ "$code" = 202 ] || fail "POST /api/v1/runs: $code $(cat "$T/s1")"
id1=$(jq .id "$T/s1")
cl_wait_cmd 40 "the end event of run $id1" has_event "$T/events.txt" end
events "$T/events.txt" run | jq -e --argjson id "$id1" '.id == $id and .plan == "console quick" and .state == "running" and
    .tests == 2 and (.nodes | sort) == ["srv-1", "srv-2"]' >/dev/null ||
    fail "run event: $(events "$T/events.txt" run)"
events "$T/events.txt" interval >"$T/intervals.jsonl"
[ "$(wc -l <"$T/intervals.jsonl")" -ge 4 ] || fail "fewer than 4 interval events: $(cat "$T/intervals.jsonl")"
jq -se --argjson id "$id1" 'all(.[]; .id == $id and .all.iops > 0 and .all.read_iops >= 0 and .all.write_iops > 0 and
    (.all.p99_ms | type) == "number" and (.all.mibps > 0) and
    ([.nodes[].name] | sort) == ["srv-1", "srv-2"] and all(.nodes[]; .iops > 0 and (.write_p99_ms | type) == "number")) and
    any(.[]; .test == 1 and .all.read_iops > 0 and (.all.read_p99_ms | type) == "number") and
    any(.[]; .test == 2 and .all.read_iops == 0 and .all.read_p99_ms == null)' "$T/intervals.jsonl" >/dev/null ||
    fail "interval events: $(head -c 2000 "$T/intervals.jsonl")"
events "$T/events.txt" test | jq -se --argjson id "$id1" 'length == 2 and .[0].index == 1 and .[0].spec == "4k" and
    .[1].spec == "64k" and all(.[]; .id == $id and .status == "ok" and .all.iops > 0 and
    ([.nodes[] | select(.status == "ok" and .iops > 0) | .name] | sort) == ["srv-1", "srv-2"])' >/dev/null ||
    fail "test events: $(events "$T/events.txt" test)"
events "$T/events.txt" end | jq -e --argjson id "$id1" '.id == $id and .status == "ok" and .exit_code == 0' >/dev/null ||
    fail "end event: $(events "$T/events.txt" end)"
grep -q '^id: [0-9]' "$T/events.txt" || fail "events without ids: $(head -c 500 "$T/events.txt")"
ok "run $id1 on the stream: run, $(wc -l <"$T/intervals.jsonl") intervals (ALL and per node), 2 tests, end ok"

# The run is recorded when its end is told; the last run outlives it.
curl -sf "${api}runs/$id1" | jq -e '.status == "finished"' >/dev/null || fail "run $id1 not recorded at its end event"
idle || fail "runs/current after the end event"
curl -sf "${api}runs/last" >"$T/last1.json" || fail "GET runs/last after run $id1"
jq -e --argjson id "$id1" '.id == $id and .state == "done" and .status == "ok" and .exit_code == 0 and
    (.finished | length) == 2 and all(.finished[]; .all.iops > 0 and (.nodes | length) == 2) and
    (.intervals | length) >= 4 and all(.intervals[]; (.nodes | length) == 2)' "$T/last1.json" >/dev/null ||
    fail "runs/last after run $id1: $(head -c 2000 "$T/last1.json")"
sleep 1
curl -sf "${api}runs/last" | jq -e --argjson id "$id1" '.id == $id and (.finished | length) == 2' >/dev/null ||
    fail "runs/last changed while idle"
ok "after run $id1: runs/last keeps its 2 tests with ALL and NODE figures and $(jq '.intervals | length' "$T/last1.json") intervals"

# During a run the agents list follows an agent that leaves; a stop ends
# the run as interrupted, on the stream too.
cl_wait_cmd 20 "both agents back after run $id1" connected 2
code=$(post "${api}runs" "$T/long.json" "$T/s2")
[ "$code" = 202 ] || fail "POST /api/v1/runs (long): $code $(cat "$T/s2")"
id2=$(jq .id "$T/s2")
measuring() { curl -sf "${api}runs/last" | jq -e --argjson id "$id2" '.id == $id and (.intervals | length) >= 2' >/dev/null; }
cl_wait_cmd 30 "two intervals of run $id2" measuring
kill -KILL "$a2"
srv2_gone() {
    curl -sf "${api}agents" >"$T/agents2.json" &&
        jq -e '.agents[] | select(.name == "srv-2") | .status == "disconnected" and (.reason | length) > 0' "$T/agents2.json" >/dev/null
}
cl_wait_cmd 15 "srv-2 listed as disconnected during run $id2" srv2_gone
curl -sf "${api}runs/current" | jq -e --argjson id "$id2" '.id == $id and .state == "running"' >/dev/null ||
    fail "run $id2 not under way any more when srv-2 left"
srv2_event() { events "$T/events.txt" agents | tail -n1 | jq -e '.agents[] | select(.name == "srv-2") | .status == "disconnected"' >/dev/null; }
cl_wait_cmd 5 "an agents event with srv-2 gone" srv2_event
ok "during run $id2: srv-2 killed is listed disconnected ($(jq -r '.agents[] | select(.name == "srv-2") | .reason' "$T/agents2.json"))"
echo '{}' >"$T/empty.json"
code=$(post "${api}runs/current/stop" "$T/empty.json" "$T/stop.json")
[ "$code" = 202 ] || fail "stop: $code $(cat "$T/stop.json")"
ended2() { events "$T/events.txt" end | jq -e --argjson id "$id2" 'select(.id == $id) | .status == "interrupted"' >/dev/null; }
cl_wait_cmd 30 "the end event of run $id2, interrupted" ended2
curl -sf "${api}runs/last" | jq -e --argjson id "$id2" '.id == $id and .status == "interrupted" and (.finished | length) == 1' >/dev/null ||
    fail "runs/last after stopping run $id2: $(curl -s "${api}runs/last" | head -c 1500)"
ok "run $id2 stopped: end event interrupted, runs/last keeps it"

kill -TERM "$srv"
cl_wait_exit "$srv" 20 rc
[ "$rc" = 0 ] || fail "serve exited $rc after SIGTERM: $(cat "$T/serve.err")"
cl_wait_exit "$sse" 10 rc
ok "serve stopped: the event stream ended"
