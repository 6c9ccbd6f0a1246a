# SPDX-License-Identifier: Apache-2.0
# iofleet run --http: the live view during a real run (null engine, the local
# agent, 1 s intervals). /metrics parses with prometheus_client's own parser
# and its counters at the end equal the final CSV's ALL counts exactly;
# /api/run names the test; /events delivers interval events and resumes
# after a reconnect (Last-Event-ID); the live lines' ETA reaches 0 at the
# last interval, which says it is; the shipped Grafana dashboard queries
# only metrics a real scrape has. Bad --http values: one line, exit 2,
# nothing run or written.
source "$(dirname "$0")/lib/common.bash"
PY=$(command -v /usr/bin/python3 || command -v python3) || skip "python3 not installed"
"$PY" -c 'import prometheus_client' 2>/dev/null ||
    skip "prometheus_client not installed (Debian package python3-prometheus-client)"
command -v curl >/dev/null || skip "curl not installed"
command -v jq >/dev/null || skip "jq not installed"
LIB=$(dirname "$0")/lib

plan p.json <<'P'
{"name": "live view", "run": {"ramp": "1s", "duration": "3s", "interval": "1s"},
 "specs": [{"name": "4k mixed", "lines": [{"size": "4k", "read": 70, "random": 100, "burst": 64, "delay": "1ms"}]},
           {"name": "64k read", "lines": [{"size": "64k", "read": 100, "random": 0, "burst": 64, "delay": "1ms"}]}],
 "workers": [{"count": 2, "engine": "null", "queue_depth": 4, "targets": [{"path": "t.dat", "size": "16m"}]}]}
P

# --- bad values: one line, exit 2, before anything runs -----------------------------------
one_line_rc2() { # WHAT ARGS...
    local what=$1
    shift
    expect_rc 2 "$IOFLEET" run "$T/p.json" --no-db --workdir "$T/work" --csv "$T/bad.csv" "$@"
    [ "$(wc -l <"$T/err")" = 1 ] || fail "$what: not one error line: $(cat "$T/err")"
    grep -q -- '--http' "$T/err" || fail "$what: the error does not name --http: $(cat "$T/err")"
    [ ! -e "$T/bad.csv" ] || fail "$what: a result file was created"
    [ ! -e "$T/work" ] || fail "$what: the local agent ran"
}
for bad in 65536 -1 99999999999 "" x80 1.2.3:80 localhost:80 "::1:80" "[::1:80" "1.2.3.4:"; do
    one_line_rc2 "--http '$bad'" --http "$bad"
done
ok "bad --http values: one error line, exit 2, nothing run"
# A port in use: held by a listener of our own.
"$PY" -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
print(s.getsockname()[1], flush=True); time.sleep(60)' >"$T/held" &
HOLD=$!
iof_on_exit "kill $HOLD 2>/dev/null"
for _ in $(seq 100); do [ -s "$T/held" ] && break; sleep 0.05; done
held=$(cat "$T/held")
one_line_rc2 "port in use" --http "127.0.0.1:$held"
expect_in "$T/err" "cannot listen"
kill "$HOLD" 2>/dev/null || true
ok "a port in use: one error line, exit 2, nothing run"

# --- a real run -----------------------------------------------------------------------------
iof_run_live "$T/p.json" --no-db --workdir "$T/work" --http 0 --http-linger 20 --csv "$T/r.csv"

# /api/run names the test once it runs.
for _ in $(seq 150); do
    curl -sf "${url}api/run" >"$T/api.json" && jq -e '.test != null' "$T/api.json" >/dev/null && break
    sleep 0.1
done
jq -e '.plan == "live view" and .tests == 2 and (.test.spec == "4k mixed" or .test.spec == "64k read")
       and (.nodes | length) == 1 and .nodes[0].name == "local" and .state == "running"' \
    "$T/api.json" >/dev/null || fail "/api/run: $(cat "$T/api.json")"
ok "/api/run parses and names the test ($(jq -r .test.spec "$T/api.json"))"

# /events: at least two interval events, then a reconnect with Last-Event-ID.
# Read until the third event begins (two whole ones) or 7 s: on a loaded
# machine the test's set-up and ramp (no interval events) can take most of 4 s.
curl -sN --max-time 7 "${url}events" | awk '/^event: run/ && ++n == 3 { exit } { print }' >"$T/ev1" || true
grep -q '^retry: [0-9]' "$T/ev1" || fail "/events: no retry field: $(head -c 300 "$T/ev1")"
n=$(grep -c '^event: run' "$T/ev1" || true)
[ "$n" -ge 2 ] || fail "/events delivered $n events in 7 s: $(head -c 600 "$T/ev1")"
last=$(sed -n 's/^id: //p' "$T/ev1" | tail -n1)
firstk=$(sed -n 's/^data: //p' "$T/ev1" | head -n1 | jq .intervals)
lastk=$(sed -n 's/^data: //p' "$T/ev1" | tail -n1 | jq .intervals)
[ "$lastk" -gt "$firstk" ] || fail "/events: the intervals did not advance ($firstk -> $lastk)"
curl -sN --max-time 2.5 -H "Last-Event-ID: $last" "${url}events" >"$T/ev2" || true
ids=$(sed -n 's/^id: //p' "$T/ev2")
[ -n "$ids" ] || fail "/events after a reconnect: nothing new in 2.5 s"
for id in $ids; do [ "$id" -gt "$last" ] || fail "/events resent event $id after Last-Event-ID $last"; done
curl -sN --max-time 0.5 -H "Last-Event-ID: 1" "${url}events" >"$T/ev3" || true
grep -q '^data: {' "$T/ev3" || fail "/events with a stale Last-Event-ID: no snapshot at once"
ok "/events: $n events, resumed after id $last, a stale id gets the snapshot at once"

# /metrics during the run: parses; counters never go down between scrapes.
curl -sf "${url}metrics" >"$T/m1.txt" || fail "/metrics failed"
"$PY" "$LIB/prom_parse.py" "$T/m1.txt" "$T/m1.json" || fail "/metrics does not parse"
sleep 1.2
curl -sf "${url}metrics" >"$T/m2.txt" || fail "/metrics failed"
"$PY" "$LIB/prom_parse.py" "$T/m2.txt" "$T/m2.json" || fail "/metrics does not parse"
jq -e -s '[.[0].samples[] | select(.name | endswith("_total"))] as $a
          | [.[1].samples[] | select(.name | endswith("_total"))] as $b
          | all($a[]; . as $x | any($b[]; .name == $x.name and .labels == $x.labels and .value >= $x.value))' \
    "$T/m1.json" "$T/m2.json" >/dev/null || fail "a counter went down between two scrapes"
jq -e '.types.iofleet_ios == "counter" and .types.iofleet_iops == "gauge" and
       .types.iofleet_agent_up == "gauge" and .types.iofleet_latency_seconds == "summary"' \
    "$T/m2.json" >/dev/null || fail "metric types: $(jq -c .types "$T/m2.json")"
jq -e 'any(.samples[]; .name == "iofleet_agent_up" and .labels.node == "local" and .value == 1)' \
    "$T/m2.json" >/dev/null || fail "the local agent is not up in /metrics"
ok "/metrics parses (prometheus_client), counters only go up"

# After the run (served for --http-linger: 20 s, room for a slow machine or
# ThreadSanitizer between the "done" state and the last scrape): counters equal the
# CSV's ALL rows.
for _ in $(seq 300); do
    curl -sf "${url}api/run" >"$T/api.json" 2>/dev/null && jq -e '.state == "done"' "$T/api.json" >/dev/null && break
    sleep 0.1
done
jq -e '.state == "done" and .exit_code == 0 and .progress == 1 and .eta_s == 0' "$T/api.json" >/dev/null ||
    fail "the run did not end as done: $(cat "$T/api.json")"
curl -sf "${url}metrics" >"$T/mf.txt" || fail "/metrics after the run failed"
"$PY" "$LIB/prom_parse.py" "$T/mf.txt" "$T/mf.json" || fail "final /metrics does not parse"
rc=0
wait "$RUN" || rc=$?
[ "$rc" = 0 ] || fail "iofleet run exited $rc: $(cat "$T/run.err")"
for op in read write; do
    want=$(awk -F, -v col="${op}_ios" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $c["row_type"] == "ALL" { s += $c[col] } END { print s }' "$T/r.csv")
    [ "${want:-0}" -gt 0 ] || fail "the CSV has no $op I/O"
    for node in ALL local; do
        got=$(jq -r --arg op "$op" --arg node "$node" '.samples[] | select(.name == "iofleet_ios_total"
              and .labels.node == $node and .labels.op == $op) | .value | floor' "$T/mf.json")
        [ "$got" = "$want" ] || fail "iofleet_ios_total{node=$node,op=$op} = $got, the CSV says $want"
    done
done
wantb=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    $c["row_type"] == "ALL" { s += $c["bytes_read"] + $c["bytes_written"] } END { printf "%.0f\n", s }' "$T/r.csv")
gotb=$(jq -r '[.samples[] | select(.name == "iofleet_bytes_total" and .labels.node == "ALL") | .value] | add | floor' "$T/mf.json")
[ "$gotb" = "$wantb" ] || fail "iofleet_bytes_total{node=ALL} = $gotb, the CSV says $wantb"
jq -e 'any(.samples[]; .name == "iofleet_test_index" and .value == 2)' "$T/mf.json" >/dev/null ||
    fail "iofleet_test_index is not 2 at the end"
ok "final /metrics: ALL and node I/O and byte counters equal the CSV exactly"

# The terminal's live lines carry the whole run's ETA: planned ramp + duration left,
# 2 x (1 s + 3 s) at the first ramp, 0 s at the last interval, never growing.
grep -E '^\[(ramp|run)\] test' "$T/run.err" | grep -oE '  ETA [0-9]+s' | grep -oE '[0-9]+' >"$T/etas"
[ "$(grep -cE '^\[(ramp|run)\] test' "$T/run.err")" = "$(wc -l <"$T/etas")" ] ||
    fail "a live line without an ETA: $(grep -E '^\[(ramp|run)\]' "$T/run.err")"
grep -q '^\[ramp\] test 1/2 ramping up for 1.0s.*ETA 8s$' "$T/run.err" ||
    fail "no ramp line with the run's ETA: $(head -n5 "$T/run.err")"
[ "$(tail -n1 "$T/etas")" = 0 ] || fail "the last live line's ETA is $(tail -n1 "$T/etas") s"
sort -rn -c "$T/etas" 2>/dev/null || fail "the ETA grew: $(tr '\n' ' ' <"$T/etas")"
ok "live lines: ramp shown, the run's ETA $(head -n1 "$T/etas") s .. 0 s, never growing"
# Each test's last live line, and no other, says it is the last interval.
lasts=$(awk '/^\[run\] test / { split($3, a, "/"); if (t != "" && a[1] != t) print last
                                 t = a[1]; last = $0 }
             END { print last }' "$T/run.err")
[ "$(printf '%s\n' "$lasts" | grep -c ' last interval ')" = 2 ] &&
    [ "$(grep -c ' last interval ' "$T/run.err")" = 2 ] ||
    fail "not exactly each test's last live line says 'last interval': $(grep -E '^\[run\]' "$T/run.err")"
ok "live lines: $(printf '%s\n' "$lasts" | tail -n1 | cut -c1-60)..."

# The Grafana dashboard queries only metrics of a real scrape; the scrape example names /metrics.
DASH=$IOF_SRC/docs/monitoring/grafana-dashboard.json
jq -e '.panels | length > 0' "$DASH" >/dev/null || fail "$DASH does not parse or has no panels"
jq -r '.. | strings' "$DASH" | grep -oE 'iofleet_[a-z_]+' | sort -u >"$T/dash"
[ -s "$T/dash" ] || fail "the dashboard queries no iofleet metric"
jq -r '.samples[].name' "$T/mf.json" | sort -u >"$T/have"
missing=$(comm -23 "$T/dash" "$T/have" | tr '\n' ' ')
[ -z "$missing" ] || fail "the dashboard queries metrics /metrics does not have: $missing"
grep -q 'metrics_path: /metrics' "$IOF_SRC/docs/monitoring/prometheus.yml" ||
    fail "docs/monitoring/prometheus.yml does not scrape /metrics"
ok "the Grafana dashboard's $(wc -l <"$T/dash") metrics are all in a real scrape"
