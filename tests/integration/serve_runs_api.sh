# SPDX-License-Identifier: Apache-2.0
# Runs started and stopped through iofleet serve's API (docs/api.md): a dynamo
# agent dials into serve --listen; POST /api/v1/runs starts a plan on it (202
# and the run's id), GET /api/v1/runs/current shows it live (plan, test i of n,
# ALL and NODE figures), a second POST meanwhile is 409, and once it is over
# it is listed by GET /api/v1/runs as `iofleet runs --json` lists it, with the
# figures the live state showed. A bad plan is a 400 with the loader's
# message, a plan naming an agent that is not connected a 409 naming it. A run
# stopped with POST /api/v1/runs/current/stop keeps its measured intervals and
# is recorded as interrupted; a third run in the same serve works; SIGTERM
# during a fourth interrupts and records it before serve exits 0.
source "$(dirname "$0")/lib/cluster.bash"
command -v curl >/dev/null || skip "curl not installed"
command -v jq >/dev/null || skip "jq not installed"

plan quick.json <<'P'
{"name": "api quick", "run": {"ramp": "1s", "duration": "3s", "interval": "1s"},
 "specs": [{"name": "4k", "lines": [{"size": "4k"}]}, {"name": "64k", "lines": [{"size": "64k", "read": 0}]}],
 "workers": [{"engine": "null", "targets": [{"path": "f", "size": "1m"}]}]}
P
plan long.json <<'P'
{"name": "api long", "run": {"ramp": "1s", "duration": "120s", "interval": "1s"},
 "specs": [{"name": "4k", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "null", "targets": [{"path": "f", "size": "1m"}]}]}
P
sed 's/"size": "64k"/"size": "64q"/' "$T/quick.json" >"$T/bad.json"
sed 's/"engine": "null"/"engine": "null", "nodes": ["srv-1", "nowhere"]/' "$T/quick.json" >"$T/elsewhere.json"

cl_spawn srv "$T/serve.out" "$T/serve.err" "$IOFLEET" serve --http 127.0.0.1:0 \
    --listen 127.0.0.1:0 --insecure --db "$T/runs.db"
cl_wait_log "$T/serve.err" "iofleet serve: API on http://127.0.0.1:" 20
api=$(sed -n 's/.*API on \(http:[^ ]*\) .*/\1/p' "$T/serve.err" | head -n1)
aport=$(sed -n 's/.*agents on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$T/serve.err" | head -n1)
[ -n "$api" ] && [ -n "$aport" ] || fail "no API URL or agent port in: $(cat "$T/serve.err")"

# post URL FILE OUT: POSTs FILE as JSON; prints the status.
post() {
    curl -s -o "$3" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "@$2" "$1"
}
connected() {
    curl -sf "${api}agents" >"$T/agents.json" &&
        jq -e '[.agents[] | select(.status == "connected")] | length == 1' "$T/agents.json" >/dev/null
}
idle() {
    [ "$(curl -s -o "$T/idle.json" -w '%{http_code}' "${api}runs/current")" = 404 ]
}

idle || fail "runs/current before any run: $(cat "$T/idle.json")"
jq -e '.error.status == 404 and (.error.message | contains("no run"))' "$T/idle.json" >/dev/null ||
    fail "idle runs/current: $(cat "$T/idle.json")"
code=$(post "${api}runs" "$T/quick.json" "$T/r0")
[ "$code" = 409 ] && jq -e '.error.message | contains("no agent is connected")' "$T/r0" >/dev/null ||
    fail "a run with no agent: $code $(cat "$T/r0")"
ok "idle: runs/current 404, a run without agents 409"

cl_start_dialer a1 srv-1 "127.0.0.1:$aport"
cl_wait_cmd 20 "srv-1 connected" connected

# A plan the loader refuses: 400 with iofleet validate's message.
code=$(post "${api}runs" "$T/bad.json" "$T/r1")
"$IOFLEET" validate - <"$T/bad.json" >/dev/null 2>"$T/validate.err" && fail "iofleet validate accepts the bad plan"
want=$(sed -n 's/^stdin: //p' "$T/validate.err" | head -n1)
[ -n "$want" ] || fail "no message from iofleet validate: $(cat "$T/validate.err")"
[ "$code" = 400 ] && jq -e --arg m "plan: $want" '.error.status == 400 and .error.message == $m' "$T/r1" >/dev/null ||
    fail "bad plan: $code $(cat "$T/r1"), expected 400 with 'plan: $want'"
# A plan naming an agent that is not connected: 409, naming it.
code=$(post "${api}runs" "$T/elsewhere.json" "$T/r2")
[ "$code" = 409 ] && jq -e '.error.message | contains("nowhere") and contains("connected: srv-1")' "$T/r2" >/dev/null ||
    fail "plan naming an absent agent: $code $(cat "$T/r2")"
# A cross-site form cannot start a run.
code=$(curl -s -o "$T/r3" -w '%{http_code}' --data-urlencode "plan@$T/quick.json" "${api}runs")
[ "$code" = 415 ] || fail "urlencoded POST /api/v1/runs: $code $(cat "$T/r3")"
idle || fail "a refused plan left a run: $(cat "$T/idle.json")"
ok "refused: 400 '$(jq -r .error.message "$T/r1")'; 409 '$(jq -r .error.message "$T/r2")'; a form 415"

# run 1: started, shown live, a second POST refused while it runs.
code=$(post "${api}runs" "$T/quick.json" "$T/s1")
[ "$code" = 202 ] && jq -e '.id > 0 and .state == "started"' "$T/s1" >/dev/null || fail "POST /api/v1/runs: $code $(cat "$T/s1")"
id1=$(jq .id "$T/s1")
code=$(post "${api}runs" "$T/quick.json" "$T/s1b")
[ "$code" = 409 ] && jq -e --argjson id "$id1" '.error.message | contains("run \($id) is under way")' "$T/s1b" >/dev/null ||
    fail "second POST while run $id1 runs: $code $(cat "$T/s1b")"
live() {
    curl -sf "${api}runs/current" >"$T/cur.json" &&
        jq -e --argjson id "$id1" '.id == $id and .state == "running" and .plan == "api quick" and
            .tests == 2 and .test.index == 2 and .intervals >= 1 and .all.iops > 0 and
            (.nodes | length) == 1 and .nodes[0].name == "srv-1" and .nodes[0].iops > 0 and
            .finished_total == 1' "$T/cur.json" >/dev/null
}
cl_wait_cmd 30 "run $id1 in its second test in runs/current" live
ok "run $id1: 202, a second POST 409, live: $(jq -c '{id, state, test: .test.index, tests, all: .all.iops, node: .nodes[0].iops}' "$T/cur.json")"

cl_wait_cmd 30 "run $id1 over" idle
"$IOFLEET" runs --db "$T/runs.db" --json >"$T/cli-runs.json"
curl -sf "${api}runs" >"$T/runs.json" || fail "GET ${api}runs failed"
jq -e --slurpfile cli "$T/cli-runs.json" '.runs == $cli[0]' "$T/runs.json" >/dev/null ||
    fail "GET /api/v1/runs differs from iofleet runs --json: $(cat "$T/runs.json") vs $(cat "$T/cli-runs.json")"
curl -sf "${api}runs/$id1" >"$T/run1.json" || fail "GET ${api}runs/$id1 failed"
jq -e --argjson id "$id1" '.id == $id and .status == "finished" and .exit_code == 0 and
    .plan_name == "api quick" and (.tests | length) == 2 and all(.tests[]; .complete and .intervals >= 3) and
    all(.tests[].results[] | select(.row_type == "ALL" or .row_type == "NODE"); .iops > 0) and
    ([.tests[0].results[] | select(.row_type == "NODE") | .node] == ["srv-1"])' "$T/run1.json" >/dev/null ||
    fail "run $id1 as recorded: $(head -c 1500 "$T/run1.json")"
# The live state's figures of test 1 are the recorded ALL row's.
for f in iops mibps; do
    l=$(jq ".finished[0].$f" "$T/cur.json")
    r=$(jq ".tests[0].results[] | select(.row_type == \"ALL\") | .${f}" "$T/run1.json")
    awk -v l="$l" -v r="$r" 'BEGIN { d = l - r; if (d < 0) d = -d; exit !(r > 0 && d <= r * 1e-5) }' ||
        fail "test 1 $f: live $l, recorded $r"
done
ok "run $id1 recorded as iofleet runs --json lists it; its test 1 ALL IOPS $(jq '.finished[0].iops' "$T/cur.json") as shown live"

# run 2: stopped through the API after two intervals; kept, recorded as interrupted.
cl_wait_cmd 20 "srv-1 connected again after run $id1" connected
code=$(post "${api}runs" "$T/long.json" "$T/s2")
[ "$code" = 202 ] || fail "POST /api/v1/runs (long): $code $(cat "$T/s2")"
id2=$(jq .id "$T/s2")
[ "$id2" -gt "$id1" ] || fail "run ids $id1 then $id2"
measuring() {
    curl -sf "${api}runs/current" >"$T/cur2.json" &&
        jq -e --argjson id "$measured" '.id == $id and .intervals >= 2' "$T/cur2.json" >/dev/null
}
measured=$id2
cl_wait_cmd 30 "two intervals of run $id2" measuring
echo '{}' >"$T/empty.json"
code=$(post "${api}runs/current/stop" "$T/empty.json" "$T/stop.json")
[ "$code" = 202 ] && jq -e --argjson id "$id2" '.id == $id and .state == "stopping"' "$T/stop.json" >/dev/null ||
    fail "POST /api/v1/runs/current/stop: $code $(cat "$T/stop.json")"
cl_wait_cmd 30 "run $id2 over after its stop" idle
curl -sf "${api}runs/$id2" >"$T/run2.json" || fail "GET ${api}runs/$id2 failed"
jq -e --argjson id "$id2" '.id == $id and .status == "interrupted" and .exit_code == 130 and
    (.tests | length) == 1 and .tests[0].interrupted and .tests[0].complete and .tests[0].intervals >= 2 and
    ([.tests[0].results[] | select(.row_type == "ALL") | .iops] | .[0] > 0)' "$T/run2.json" >/dev/null ||
    fail "run $id2 after its stop: $(head -c 1500 "$T/run2.json")"
code=$(post "${api}runs/current/stop" "$T/empty.json" "$T/stop2.json")
[ "$code" = 409 ] || fail "stop with no run: $code $(cat "$T/stop2.json")"
ok "run $id2 stopped: recorded interrupted (130) with $(jq '.tests[0].intervals' "$T/run2.json") intervals, $(jq '.tests[0].results[] | select(.row_type == "ALL") | .iops' "$T/run2.json") IOPS; a stop when idle 409"

# run 3 in the same process.
cl_wait_cmd 20 "srv-1 connected again after run $id2" connected
code=$(post "${api}runs" "$T/quick.json" "$T/s3")
[ "$code" = 202 ] || fail "POST /api/v1/runs (third): $code $(cat "$T/s3")"
id3=$(jq .id "$T/s3")
cl_wait_cmd 30 "run $id3 over" idle
curl -sf "${api}runs/$id3" >"$T/run3.json" || fail "GET ${api}runs/$id3 failed"
jq -e '.status == "finished" and (.tests | length) == 2' "$T/run3.json" >/dev/null ||
    fail "run $id3: $(head -c 1500 "$T/run3.json")"
ok "run $id3 after the others in the same serve: finished"

# SIGTERM during a run: the run is interrupted and recorded, then serve stops.
cl_wait_cmd 20 "srv-1 connected again after run $id3" connected
code=$(post "${api}runs" "$T/long.json" "$T/s4")
[ "$code" = 202 ] || fail "POST /api/v1/runs (fourth): $code $(cat "$T/s4")"
id4=$(jq .id "$T/s4")
measured=$id4
cl_wait_cmd 30 "two intervals of run $id4" measuring
kill -TERM "$srv"
cl_wait_exit "$srv" 20 rc
[ "$rc" = 0 ] || fail "serve exited $rc after SIGTERM: $(cat "$T/serve.err")"
for id in "$id1" "$id3"; do expect_in "$T/serve.err" "iofleet serve: run $id finished (exit code 0)"; done
expect_in "$T/serve.err" "iofleet serve: run $id4 interrupted (exit code 130)"
"$IOFLEET" runs --db "$T/runs.db" --json >"$T/cli-runs.json"
jq -e --argjson id "$id4" '.[] | select(.id == $id) | .status == "interrupted" and .exit_code == 130' \
    "$T/cli-runs.json" >/dev/null || fail "run $id4 after serve's SIGTERM: $(cat "$T/cli-runs.json")"
ok "SIGTERM during run $id4: recorded interrupted, serve exited 0"
