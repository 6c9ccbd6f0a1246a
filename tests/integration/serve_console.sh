# SPDX-License-Identifier: Apache-2.0
# The console of iofleet serve (docs/console.md, docs/api.md): GET
# /api/v1/events streams the agents list as it changes, a run started by
# POST /api/v1/runs (run), its intervals with ALL and per-node figures read
# and write apart (interval; a node whose report came late is absent from
# it), each ended test's final ALL and NODE figures
# (test) and its end with its status (end); after the run GET
# /api/v1/runs/last still gives its tests and their figures; during a run
# /api/v1/agents follows an agent that leaves; a stop ends the run as
# interrupted. The page at / (docs/console.md) holds the state in its first
# HTML: the agents, the run under way (its last interval) or the last one
# (every test's ALL and NODE rows), the state as JSON for its script, each
# element id the docs list; a plan, spec and workdir named with <script> and
# "><img onerror=...> come back escaped in the HTML and in that JSON; the
# page's Content-Security-Policy allows no inline script and nothing from
# elsewhere; its script, style and Chart.js are served by serve itself, and
# its script never writes HTML from data (no innerHTML).
source "$(dirname "$0")/lib/cluster.bash"
command -v curl >/dev/null || skip "curl not installed"
command -v jq >/dev/null || skip "jq not installed"

plan quick.json <<'P'
{"name": "console <script>alert(1)</script>", "run": {"ramp": "1s", "duration": "3s", "interval": "1s"},
 "specs": [{"name": "4k", "lines": [{"size": "4k", "read": 70}]}, {"name": "64k\"><img src=x onerror=alert(2)>", "lines": [{"size": "64k", "read": 0}]}],
 "workers": [{"engine": "null", "targets": [{"path": "f", "size": "1m"}]}]}
P
plan long.json <<'P'
{"name": "console long", "run": {"ramp": "1s", "duration": "120s", "interval": "1s"},
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

# page FILE: GET / into FILE (headers in FILE.head), 200 text/html.
page() {
    [ "$(curl -s -D "$1.head" -o "$1" -w '%{http_code}' "$base")" = 200 ] || fail "GET $base: $(cat "$1")"
    grep -qi '^content-type: text/html' "$1.head" || fail "GET / type: $(cat "$1.head")"
}
# state FILE: the JSON the page carries for its script.
state() { sed -n 's|.*<script type="application/json" id="state">\(.*\)</script>.*|\1|p' "$1"; }
# Text between id="ID"> and the next </tagname> of FILE's element ID.
inner() { tr -d '\n' <"$1" | sed -n "s|.*id=\"$2\"[^>]*>\([^<]*\)<.*|\1|p"; }

cl_spawn sse "$T/events.txt" "$T/sse.err" curl -sN "${api}events"
dynamo_rc=0
"$DYNAMO" --manager "127.0.0.1:$aport" --insecure --name '<script>' --workdir "$T/w0" 2>"$T/badname.err" || dynamo_rc=$?
[ "$dynamo_rc" != 0 ] && grep -q "is not allowed" "$T/badname.err" || fail "an agent named <script>: $(cat "$T/badname.err")"
evil_wd="$T/w<script>\"><img src=x onerror=alert(3)>"
mkdir -p "$evil_wd"
cl_start_dialer a1 srv-1 "127.0.0.1:$aport"
cl_start_dialer a2 srv-2 "127.0.0.1:$aport" --workdir "$evil_wd"
cl_wait_cmd 20 "srv-1 and srv-2 connected" connected 2
agents_seen() { events "$T/events.txt" agents | tail -n1 | jq -e '[.agents[] | select(.status == "connected")] | length == 2' >/dev/null; }
cl_wait_cmd 10 "an agents event listing both agents" agents_seen
ok "runs/last 404 before any run; an agents event lists srv-1 and srv-2; an agent named <script> refused by dynamo"

# The page before any run: the fleet in its first HTML, a strict policy.
page "$T/p0.html"
csp=$(sed -n 's/^content-security-policy: *//Ip' "$T/p0.html.head" | tr -d '\r')
for want in "default-src 'none'" "script-src 'self'" "style-src 'self'" "connect-src 'self'" \
    "frame-ancestors 'none'" "form-action 'none'"; do
    case "$csp" in *"$want"*) ;; *) fail "Content-Security-Policy without $want: '$csp'" ;; esac
done
case "$csp" in *unsafe*) fail "Content-Security-Policy allows unsafe: '$csp'" ;; esac
[ "$(grep -c '<script>' "$T/p0.html")" = 0 ] || fail "an inline script in the page: $(grep '<script>' "$T/p0.html")"
for id in conn agents agents-body agents-count run run-id run-plan run-state run-test stop-button \
    chart-dir chart-iops chart-mibps chart-p99 no-charts interval interval-at interval-body \
    summary summary-body start-form plan-file plan-text check-button start-button plan-message state \
    history history-total history-form history-q history-tag history-search history-message \
    history-list history-body history-prev history-next compare-button compare compare-runs \
    compare-changes compare-changes-body compare-none compare-tests compare-body \
    editor-tabs editor-form-tab editor-json-tab editor editor-note editor-fields editor-run \
    editor-specs spec-add editor-groups group-add destroy destroy-what destroy-confirm \
    editor-cycle bars bars-test; do
    grep -q "id=\"$id\"" "$T/p0.html" || fail "no element id=\"$id\" in the page"
    grep -q "\`#$id\`" "$IOF_SRC/docs/console.md" || fail "docs/console.md does not list #$id"
done
curl -sf "${api}agents" >"$T/agents0.json" || fail "GET agents"
grep -q '<th class="l">agent</th><th class="l">status</th><th class="l">certificate</th><th class="l">last seen</th>' "$T/p0.html" ||
    fail "the fleet table has no certificate and last seen columns: $(tr -d '\n' <"$T/p0.html" | grep -o '<table id="agents">.\{300\}')"
for n in srv-1 srv-2; do
    since=$(jq -r --arg n "$n" '.agents[] | select(.name == $n) | .connected_at' "$T/agents0.json")
    [[ "$since" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$ ]] || fail "$n's connected_at: $since"
    grep -q "<tr><td class=\"name\">$n</td><td class=\"ok\">connected</td><td class=\"wrap cert\">none (plain TCP)</td><td class=\"seen\">now, since $since</td>" "$T/p0.html" ||
        fail "$n not in the first HTML's fleet with its certificate and last seen ($since): $(inner "$T/p0.html" agents-body)"
done
[ "$(inner "$T/p0.html" run-plan)" = "no run yet" ] || fail "run-plan before any run: $(inner "$T/p0.html" run-plan)"
[ "$(inner "$T/p0.html" history-total)" = "no run recorded" ] && state "$T/p0.html" |
    jq -e '.history.runs == [] and .history.total == 0' >/dev/null ||
    fail "the history before any run: $(inner "$T/p0.html" history-total) $(state "$T/p0.html" | jq -c .history)"
state "$T/p0.html" | jq -e '.run == null and ([.agents.agents[].name] | sort) == ["srv-1", "srv-2"] and .seq > 0' >/dev/null ||
    fail "the page's state before any run: $(state "$T/p0.html" | head -c 1000)"
grep -q 'onerror=alert(3)&gt;' "$T/p0.html" && ! grep -q '<img' "$T/p0.html" ||
    fail "srv-2's workdir not escaped in the page: $(grep -o '.\{40\}onerror.\{20\}' "$T/p0.html")"
state "$T/p0.html" | grep -q 'w\\u003cscript\\u003e\\"\\u003e\\u003cimg src=x onerror=alert(3)\\u003e' ||
    fail "srv-2's workdir not escaped in the page's JSON: $(state "$T/p0.html" | grep -o '.\{40\}onerror.\{20\}')"
for f in console.js editor.js console.css; do
    code=$(curl -s -D "$T/$f.head" -o "$T/$f" -w '%{http_code}' "$base$f")
    [ "$code" = 200 ] && cmp -s "$T/$f" "$IOF_SRC/manager/console/$f" || fail "GET /$f: $code, not manager/console/$f"
done
for f in console.js editor.js; do
    grep -qi '^content-type: text/javascript' "$T/$f.head" || fail "/$f type: $(cat "$T/$f.head")"
    ! grep -n 'innerHTML\|outerHTML\|insertAdjacentHTML\|document.write' "$T/$f" || fail "$f writes HTML"
done
grep -q '<script src="/editor.js"></script>' "$T/p0.html" || fail "the page does not load /editor.js"
if [ -r /usr/share/javascript/chart.js/chart.min.js ] && [ -z "${IOF_CHARTJS:-}" ]; then
    curl -sf "${base}chart.js" -o "$T/chart.js" && cmp -s "$T/chart.js" /usr/share/javascript/chart.js/chart.min.js ||
        fail "GET /chart.js is not Debian's chart.min.js"
    grep -q '<script src="/chart.js"></script>' "$T/p0.html" || fail "the page does not load /chart.js"
fi
code=$(curl -s -o "$T/nopage" -w '%{http_code}' "${base}nowhere")
[ "$code" = 404 ] || fail "GET /nowhere: $code"
ok "the page before any run: both agents in its first HTML, the workdir escaped, CSP '$csp'"

# Event streams are capped (8 from one network): one more is a 503, and a
# slot is free again once a stream ends.
extra=()
for i in 1 2 3 4 5 6 7; do
    cl_spawn p "$T/extra$i.txt" /dev/null curl -sN "${api}events"
    extra+=("$p")
done
streams_full() {
    code=$(curl -s -D "$T/busy.head" -o "$T/busy.json" -w '%{http_code}' --max-time 3 "${api}events" || true)
    [ "$code" = 503 ]
}
cl_wait_cmd 10 "a 9th event stream refused" streams_full
jq -e '.error.status == 503 and (.error.message | contains("too many event streams"))' "$T/busy.json" >/dev/null ||
    fail "9th stream: $(cat "$T/busy.json")"
kill "${extra[@]}"
for p in "${extra[@]}"; do cl_wait_exit "$p" 10 rc; done
stream_again() {
    curl -s -o "$T/again.txt" --max-time 1 "${api}events?after=1" || true
    grep -q '^event: agents' "$T/again.txt"
}
cl_wait_cmd 25 "a stream admitted again, resuming after event 1" stream_again
ok "a 9th event stream from one network refused (503); admitted again once others closed"

# A run started by POST: run, intervals, tests and its end on the stream.
code=$(post "${api}runs" "$T/quick.json" "$T/s1")
[ "$code" = 202 ] || fail "POST /api/v1/runs: $code $(cat "$T/s1")"
id1=$(jq .id "$T/s1")
cl_wait_cmd 40 "the end event of run $id1" has_event "$T/events.txt" end
events "$T/events.txt" run | jq -e --argjson id "$id1" '.id == $id and .plan == "console <script>alert(1)</script>" and .state == "running" and
    .tests == 2 and (.nodes | sort) == ["srv-1", "srv-2"]' >/dev/null ||
    fail "run event: $(events "$T/events.txt" run)"
events "$T/events.txt" interval >"$T/intervals.jsonl"
[ "$(wc -l <"$T/intervals.jsonl")" -ge 4 ] || fail "fewer than 4 interval events: $(cat "$T/intervals.jsonl")"
jq -se --argjson id "$id1" 'all(.[]; .id == $id and .all.iops > 0 and .all.read_iops >= 0 and .all.write_iops > 0 and
    (.all.p99_ms | type) == "number" and (.all.mibps > 0) and
    ([.nodes[].name] - ["srv-1", "srv-2"]) == [] and all(.nodes[]; .iops > 0 and (.write_p99_ms | type) == "number")) and
    any(.[]; ([.nodes[].name] | sort) == ["srv-1", "srv-2"]) and
    any(.[]; .test == 1 and .all.read_iops > 0 and (.all.read_p99_ms | type) == "number") and
    any(.[]; .test == 2 and .all.read_iops == 0 and .all.read_p99_ms == null)' "$T/intervals.jsonl" >/dev/null ||
    fail "interval events: $(jq -c "{test, k, all: .all.iops, w: .all.write_iops, r: .all.read_p99_ms, nodes: [.nodes[] | [.name, .iops, .write_p99_ms]]}" "$T/intervals.jsonl")"
events "$T/events.txt" test | jq -se --argjson id "$id1" 'length == 2 and .[0].index == 1 and .[0].spec == "4k" and
    .[1].spec == "64k\"><img src=x onerror=alert(2)>" and all(.[]; .id == $id and .status == "ok" and .all.iops > 0 and
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
    (.intervals | length) >= 4 and any(.intervals[]; (.nodes | length) == 2)' "$T/last1.json" >/dev/null ||
    fail "runs/last after run $id1: $(head -c 2000 "$T/last1.json")"
sleep 1
curl -sf "${api}runs/last" | jq -e --argjson id "$id1" '.id == $id and (.finished | length) == 2' >/dev/null ||
    fail "runs/last changed while idle"
ok "after run $id1: runs/last keeps its 2 tests with ALL and NODE figures and $(jq '.intervals | length' "$T/last1.json") intervals"

# The page after the run: its tests in the first HTML, every name escaped.
page "$T/p1.html"
[ "$(inner "$T/p1.html" run-state)" = ok ] || fail "run-state after run $id1: $(inner "$T/p1.html" run-state)"
[ "$(inner "$T/p1.html" run-plan)" = "console &lt;script&gt;alert(1)&lt;/script&gt;" ] ||
    fail "run-plan after run $id1: $(inner "$T/p1.html" run-plan)"
summary=$(tr -d '\n' <"$T/p1.html" | sed -n 's|.*id="summary-body">\(.*\)</tbody></table></div><h3>Bars .*<section id="start".*|\1|p')
[ "$(grep -o '<tr class="all">' <<<"$summary" | wc -l)" = 2 ] && [ "$(grep -o '<tr class="node">' <<<"$summary" | wc -l)" = 4 ] ||
    fail "the first HTML's tests after run $id1 (2 ALL and 4 NODE rows): $summary"
grep -q '<td class="name">2. 64k&quot;&gt;&lt;img src=x onerror=alert(2)&gt;</td>' <<<"$summary" ||
    fail "spec name not escaped in the tests: $summary"
! grep -q '<img\|<script>' "$T/p1.html" || fail "a name came back as HTML: $(grep -o '.\{30\}<img.\{30\}\|.\{30\}<script>.\{30\}' "$T/p1.html")"
state "$T/p1.html" >"$T/state1.json"
grep -q 'console \\u003cscript\\u003ealert(1)\\u003c/script\\u003e' "$T/state1.json" &&
    grep -q '64k\\"\\u003e\\u003cimg src=x onerror=alert(2)\\u003e' "$T/state1.json" ||
    fail "names not escaped in the page's JSON: $(head -c 600 "$T/state1.json")"
jq -e --argjson id "$id1" '.run.id == $id and .run.status == "ok" and (.run.finished | length) == 2 and
    .run.plan == "console <script>alert(1)</script>" and (.run.intervals | length) >= 4' "$T/state1.json" >/dev/null ||
    fail "the page's state after run $id1: $(head -c 1500 "$T/state1.json")"
# bars FILE: the bars' HTML of the page in FILE, one line.
bars() { tr -d '\n' <"$1" | sed -n 's|.*<div id="bars" class="bars">\(.*\)</div></section><section id="start".*|\1|p'; }
b1=$(bars "$T/p1.html")
[ "$(grep -o '<div class="barset">' <<<"$b1" | wc -l)" = 4 ] && [ "$(grep -o '<div class="bar-row all">' <<<"$b1" | wc -l)" = 4 ] &&
    [ "$(grep -o '<div class="bar-row">' <<<"$b1" | wc -l)" = 8 ] &&
    grep -q '<h4>Total I/Os per second</h4><div class="bar-row all"><span class="bar-name">ALL</span><span class="bar"><span class="bar-fill w100"></span></span><span class="bar-value">[1-9][0-9]*</span>' <<<"$b1" ||
    fail "the first HTML's bars after run $id1 (4 figures, ALL and 2 nodes each): $b1"
grep -q '<option value="2" selected>test 2: 64k&quot;&gt;&lt;img src=x onerror=alert(2)&gt;</option>' "$T/p1.html" ||
    fail "the bars' selector after run $id1 (test 2 picked, its name escaped): $(grep -o '<select id="bars-test".*</select>' "$T/p1.html")"
ok "the page after run $id1: its 2 tests (ALL and NODE rows) in the first HTML, plan and spec names escaped in HTML and JSON; the bars of test 2 (ALL and 2 nodes, 4 figures)"
history=$(tr -d '\n' <"$T/p1.html" | sed -n 's|.*id="history-body">\(.*\)</tbody></table></div>.*id="history-prev".*|\1|p')
[ "$(grep -o '<tr data-id="[0-9]*">' <<<"$history")" = "<tr data-id=\"$id1\">" ] ||
    fail "the first HTML's history after run $id1: $history"
grep -q "<td>$id1</td><td class=\"name\">console &lt;script&gt;alert(1)&lt;/script&gt;</td>" <<<"$history" &&
    grep -q "href=\"/api/v1/runs/$id1/report.html\"" <<<"$history" ||
    fail "run $id1's row in the first HTML's history (its plan escaped, its report): $history"
# Its result files beside the report, each a download that answers 200.
for dl in "results.csv iofleet-run-$id1.csv csv" "iometer.csv iofleet-run-$id1-iometer.csv iometer" \
    "results.json iofleet-run-$id1.json json"; do
    read -r path name label <<<"$dl"
    grep -qF "<a href=\"/api/v1/runs/$id1/$path\" download=\"$name\">$label</a>" <<<"$history" ||
        fail "run $id1's $label download in the first HTML's history: $history"
    code=$(curl -s -o "$T/dl" -w '%{http_code}' "${api}runs/$id1/$path")
    [ "$code" = 200 ] && [ -s "$T/dl" ] || fail "the history's $label link: $code $(head -c 300 "$T/dl")"
done
[ "$(inner "$T/p1.html" history-total)" = "runs 1-1 of 1" ] ||
    fail "history-total after run $id1: $(inner "$T/p1.html" history-total)"
jq -e --argjson id "$id1" '.history.total == 1 and .history.runs[0].id == $id and
    .history.runs[0].plan == "console <script>alert(1)</script>"' "$T/state1.json" >/dev/null ||
    fail "the page's history after run $id1: $(jq -c .history "$T/state1.json")"
ok "the page after run $id1: the history lists it in the first HTML (plan escaped, its report, CSV, Iometer CSV and JSON linked) and in its JSON"

# During a run the agents list follows an agent that leaves; a stop ends
# the run as interrupted, on the stream too.
cl_wait_cmd 20 "both agents back after run $id1" connected 2
code=$(post "${api}runs" "$T/long.json" "$T/s2")
[ "$code" = 202 ] || fail "POST /api/v1/runs (long): $code $(cat "$T/s2")"
id2=$(jq .id "$T/s2")
measuring() { curl -sf "${api}runs/last" | jq -e --argjson id "$id2" '.id == $id and (.intervals | length) >= 2' >/dev/null; }
cl_wait_cmd 30 "two intervals of run $id2" measuring
page "$T/p2.html"
[ "$(inner "$T/p2.html" run-state)" = running ] && [ "$(inner "$T/p2.html" run-plan)" = "console long" ] ||
    fail "run $id2 in the first HTML: $(inner "$T/p2.html" run-plan) $(inner "$T/p2.html" run-state)"
interval=$(tr -d '\n' <"$T/p2.html" | sed -n 's|.*id="interval-body">\(.*\)</tbody></table></div>.*<h3>Tests.*|\1|p')
grep -q '<tr class="all"><td class="name">ALL</td><td>[0-9]' <<<"$interval" &&
    [ "$(grep -o '<tr class="node">' <<<"$interval" | wc -l)" = 2 ] || fail "run $id2's last interval in the first HTML: $interval"
grep -q 'id="stop-button" type="button">' "$T/p2.html" || fail "Stop disabled during run $id2"
b2=$(bars "$T/p2.html")
[ "$(grep -o '<div class="bar-row all">' <<<"$b2" | wc -l)" = 4 ] && [ "$(grep -o '<div class="bar-row">' <<<"$b2" | wc -l)" = 8 ] &&
    grep -q '<option value="live">last interval</option></select>' "$T/p2.html" ||
    fail "run $id2's bars of the last interval in the first HTML: $b2"
ok "the page during run $id2: running, its last interval (ALL and 2 nodes) in the first HTML, its bars too"
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
gone_at=$(jq -r '.agents[] | select(.name == "srv-2") | .disconnected_at' "$T/agents2.json")
page "$T/p3.html"
grep -q "<tr><td class=\"name\">srv-2</td><td class=\"bad\">disconnected</td><td class=\"wrap cert\">none (plain TCP)</td><td class=\"seen\">$gone_at</td>" "$T/p3.html" ||
    fail "srv-2 gone not in the first HTML's fleet as last seen $gone_at: $(tr -d '\n' <"$T/p3.html" | grep -o '<td class="name">srv-2</td>.\{200\}')"
ok "during run $id2: srv-2 killed is listed disconnected ($(jq -r '.agents[] | select(.name == "srv-2") | .reason' "$T/agents2.json")), last seen $gone_at in the first HTML"
echo '{}' >"$T/empty.json"
code=$(post "${api}runs/current/stop" "$T/empty.json" "$T/stop.json")
[ "$code" = 202 ] || fail "stop: $code $(cat "$T/stop.json")"
ended2() { events "$T/events.txt" end | jq -e --argjson id "$id2" 'select(.id == $id) | .status == "interrupted"' >/dev/null; }
cl_wait_cmd 30 "the end event of run $id2, interrupted" ended2
curl -sf "${api}runs/last" | jq -e --argjson id "$id2" '.id == $id and .status == "interrupted" and (.finished | length) == 1' >/dev/null ||
    fail "runs/last after stopping run $id2: $(curl -s "${api}runs/last" | head -c 1500)"
ok "run $id2 stopped: end event interrupted, runs/last keeps it"
page "$T/p4.html"
ids=$(tr -d '\n' <"$T/p4.html" | grep -o '<tr data-id="[0-9]*">' | tr -dc '0-9\n' | paste -sd,)
[ "$ids" = "$id2,$id1" ] && [ "$(inner "$T/p4.html" history-total)" = "runs 1-2 of 2" ] ||
    fail "the first HTML's history after run $id2 (newest first): ids $ids, $(inner "$T/p4.html" history-total)"
ok "the page after run $id2: the history lists runs $ids, newest first"

kill -TERM "$srv"
cl_wait_exit "$srv" 20 rc
[ "$rc" = 0 ] || fail "serve exited $rc after SIGTERM: $(cat "$T/serve.err")"
cl_wait_exit "$sse" 10 rc
ok "serve stopped: the event stream ended"

# Without Chart.js the page says so and loads no /chart.js; its tables stay.
cl_spawn srv2 "$T/serve2.out" "$T/serve2.err" env IOF_CHARTJS="$T/no-chart.js" "$IOFLEET" serve \
    --http 127.0.0.1:0 --listen 127.0.0.1:0 --insecure --db "$T/runs.db"
cl_wait_log "$T/serve2.err" "iofleet serve: API on http://127.0.0.1:" 20
expect_in "$T/serve2.err" "the console draws no chart: cannot read Chart.js at $T/no-chart.js"
api=$(sed -n 's/.*API on \(http:[^ ]*\) .*/\1/p' "$T/serve2.err" | head -n1)
base=${api%api/v1/}
page "$T/p3.html"
! grep -q 'src="/chart.js"' "$T/p3.html" && grep -q 'id="no-charts"' "$T/p3.html" || fail "the page without Chart.js"
[ "$(curl -s -o /dev/null -w '%{http_code}' "${base}chart.js")" = 404 ] || fail "/chart.js without Chart.js"
kill -TERM "$srv2"
cl_wait_exit "$srv2" 20 rc
[ "$rc" = 0 ] || fail "serve without Chart.js exited $rc"
ok "without Chart.js: serve says why, the page loads no /chart.js"

# Signed in (serve --http-tokens): the first HTML holds a Sign out button,
# which the script wires to POST /api/v1/session/end; to a Bearer token it
# has none, and after the sign-out / is the sign-in page again.
"$IOFLEET" serve token new --http-tokens "$T/tokens" --scope viewer --name eve >"$T/eve.tok" ||
    fail "serve token new failed"
tok=$(cat "$T/eve.tok")
cl_spawn srv3 "$T/serve3.out" "$T/serve3.err" "$IOFLEET" serve --http 127.0.0.1:0 \
    --listen 127.0.0.1:0 --insecure --db "$T/runs.db" --http-tokens "$T/tokens"
cl_wait_log "$T/serve3.err" "iofleet serve: API on http://127.0.0.1:" 20
api=$(sed -n 's/.*API on \(http:[^ ]*\) .*/\1/p' "$T/serve3.err" | head -n1)
base=${api%api/v1/}
echo "{\"token\": \"$tok\"}" >"$T/signin.json"
[ "$(curl -s -c "$T/jar" -o "$T/signin.out" -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary "@$T/signin.json" "${api}session")" = 200 ] || fail "sign-in: $(cat "$T/signin.out")"
curl -sf -b "$T/jar" -o "$T/p5.html" "$base" || fail "GET / signed in"
grep -q 'id="state"' "$T/p5.html" && grep -q '<button id="signout-button" type="button">Sign out</button></header>' "$T/p5.html" ||
    fail "no Sign out button in the page served to a session: $(grep -o '<header>.*</header>' "$T/p5.html")"
grep -q 'signout-button' "$IOF_SRC/manager/console/console.js" && grep -q "/api/v1/session/end" "$IOF_SRC/manager/console/console.js" &&
    grep -q '`#signout-button`' "$IOF_SRC/docs/console.md" || fail "the Sign out button's script or its docs"
curl -sf -H "Authorization: Bearer $tok" -o "$T/p6.html" "$base" || fail "GET / with a Bearer token"
grep -q 'id="state"' "$T/p6.html" && ! grep -q 'signout-button' "$T/p6.html" ||
    fail "the page served to a Bearer token: $(grep -o '<header>.*</header>' "$T/p6.html")"
[ "$(curl -s -b "$T/jar" -c "$T/jar" -o "$T/end.out" -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary '{}' "${api}session/end")" = 200 ] || fail "sign-out: $(cat "$T/end.out")"
curl -sf -b "$T/jar" -o "$T/p7.html" "$base" && grep -q '<form id="signin"' "$T/p7.html" &&
    ! grep -q 'signout-button' "$T/p7.html" || fail "GET / after the sign-out: $(head -c 500 "$T/p7.html")"
kill -TERM "$srv3"
cl_wait_exit "$srv3" 20 rc
[ "$rc" = 0 ] || fail "serve with tokens exited $rc"
ok "signed in: the page has a Sign out button (not to a Bearer token); after the sign-out / is the sign-in page"
