# SPDX-License-Identifier: Apache-2.0
# iofleet run --http under slow and event-stream connections from many
# loopback addresses (127.0.0.2..127.0.0.46, all one /24): 45 slowloris
# clients (request headers begun, one more header line a second, never
# finished; reopened when closed) and 45 /events streams. While they run,
# /metrics and the page still answer within 3 s from 127.0.0.1 every time;
# every slow connection is closed within the header deadline (5 s) plus a
# margin, whatever it dribbles; at most 8 streams of the /24 are served (the
# others are answered 503 at once, not left hanging); once the flood is over,
# a new stream is served again. Below the caps, slow clients are closed at
# the deadline itself.
source "$(dirname "$0")/lib/common.bash"
PY=$(command -v /usr/bin/python3 || command -v python3) || skip "python3 not installed"
command -v curl >/dev/null || skip "curl not installed"
command -v jq >/dev/null || skip "jq not installed"
LIB=$(dirname "$0")/lib
FLOOD_S=14
HEADER_S=5 # HTTP_HEADER_S in manager/sinks/http.c
SSE_PER_NET=8

plan p.json <<'P'
{"name": "flood", "run": {"ramp": "0s", "duration": "60s", "interval": "1s"},
 "specs": [{"name": "4k", "lines": [{"size": "4k", "read": 100, "burst": 8, "delay": "10ms"}]}],
 "workers": [{"count": 1, "engine": "null", "queue_depth": 1, "targets": [{"path": "t.dat", "size": "1m"}]}]}
P
iof_run_live "$T/p.json" --no-db --workdir "$T/work" --http 0
port=${url##*:}
port=${port%/}
curl -sf --max-time 3 "${url}metrics" >/dev/null || fail "/metrics does not answer before the flood"

"$PY" "$LIB/http_flood.py" "$port" "$FLOOD_S" "$T/flood.json" --slow 45 --streams 45 \
    >"$T/flood.out" 2>"$T/flood.err" &
FLOOD=$!
iof_on_exit "kill $FLOOD 2>/dev/null"
for _ in $(seq 200); do
    grep -q ready "$T/flood.out" && break
    kill -0 "$FLOOD" 2>/dev/null || fail "the flood client died: $(cat "$T/flood.err")"
    sleep 0.05
done
grep -q ready "$T/flood.out" || fail "the flood client did not open its connections in 10 s"

# Scrapes while the flood lasts: spread over more than two header deadlines.
slowest=0
for i in $(seq 8); do
    got=$(curl -s -o "$T/m$i.txt" -w '%{http_code} %{time_total}' --max-time 3 "${url}metrics") || true
    [ "${got%% *}" = 200 ] || fail "/metrics during the flood (try $i): '$got' (not 200 within 3 s)"
    grep -q '^iofleet_tests 1$' "$T/m$i.txt" || fail "/metrics during the flood: $(head -c 300 "$T/m$i.txt")"
    slowest=$(awk -v a="$slowest" -v b="${got#* }" 'BEGIN { print (b > a ? b : a) }')
    if [ "$i" = 4 ]; then
        got=$(curl -s -o "$T/page.html" -w '%{http_code}' --max-time 3 "$url") || true
        if [ "$got" != 200 ] || ! grep -q '<title>iofleet live' "$T/page.html"; then
            fail "the page during the flood: '$got'"
        fi
    fi
    sleep 1.3
done
ok "/metrics answered 8 times in ${slowest} s at most during the flood; the page too"

wait "$FLOOD" || fail "the flood client failed: $(cat "$T/flood.err")"
jq -c . "$T/flood.json" >/dev/null || fail "no flood summary: $(cat "$T/flood.err")"
limit=$((HEADER_S + 3))
jq -e --argjson l "$limit" '(.closed_lifetimes + .open_ages) | all(. <= $l)' "$T/flood.json" >/dev/null ||
    fail "a slow connection lived over $limit s: $(jq -c '{closed_lifetimes, open_ages}' "$T/flood.json")"
jq -e '.closed_lifetimes | length >= 45' "$T/flood.json" >/dev/null ||
    fail "the server closed fewer than 45 slow connections: $(jq -c . "$T/flood.json")"
ok "$(jq '.closed_lifetimes | length' "$T/flood.json") slow connections closed, the longest after $(jq '.closed_lifetimes | max' "$T/flood.json") s (deadline ${HEADER_S} s)"

jq -e '.streams | length == 45 and all(.status == 200 or .status == 503) and all(.answered_s < 3)' \
    "$T/flood.json" >/dev/null ||
    fail "a stream was not answered 200 or 503 within 3 s: $(jq -c .streams "$T/flood.json")"
served=$(jq '[.streams[] | select(.status == 200)] | length' "$T/flood.json")
if [ "$served" -lt 1 ] || [ "$served" -gt "$SSE_PER_NET" ]; then
    fail "$served streams from one /24 were served (want 1..$SSE_PER_NET)"
fi
ok "$served of 45 streams from one /24 served, the others answered 503 at once"

# The flood is over: its stream slots are free again once the server has
# written to the closed streams (the next interval's events). A refusal comes
# back at once, so each try waits a second before the next: 15 s in all.
for _ in $(seq 15); do
    curl -sN --max-time 1.5 "${url}events" >"$T/ev" || true
    grep -q '^event: run' "$T/ev" && break
    sleep 1
done
grep -q '^event: run' "$T/ev" || fail "/events after the flood: $(head -c 300 "$T/ev")"
ok "a new event stream is served once the flood is over"

# Below the caps nothing is closed to admit others: 10 slow clients, each
# sending a header line a second, are closed by the header deadline alone.
"$PY" "$LIB/http_flood.py" "$port" $((HEADER_S + 3)) "$T/slow.json" --slow 10 --first-addr 50 \
    >"$T/slow.out" 2>"$T/slow.err" || fail "the slow client failed: $(cat "$T/slow.err")"
jq -e --argjson h "$HEADER_S" '.closed_lifetimes | length == 10 and
    all(. >= $h - 0.5 and . <= $h + 2)' "$T/slow.json" >/dev/null ||
    fail "slow connections not closed at the ${HEADER_S} s deadline: $(jq -c . "$T/slow.json")"
ok "10 slow connections closed by the deadline alone after $(jq -c '[.closed_lifetimes | min, max]' "$T/slow.json") s"
