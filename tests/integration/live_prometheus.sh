# SPDX-License-Identifier: Apache-2.0
# iofleet run --http's /metrics as Prometheus' own tool reads it: every
# scrape of a three-test run (one every 0.2 s, ramps and test starts
# included) passes `promtool check metrics`; once a series is exposed it
# stays in every later scrape (no gauge vanishes at a test's start; only
# iofleet_run_info's state label changes); the latency summary's _count
# equals the I/O counters and its _sum / _count is a plausible mean; the
# shipped scrape example passes `promtool check config` and the dashboard
# queries only metrics of a real scrape. A run interrupted after its first
# interval shows no planned time left (ETA 0) while it is still served.
source "$(dirname "$0")/lib/common.bash"
command -v promtool >/dev/null ||
    skip "promtool not installed (Debian package prometheus: apt-get install --no-install-recommends prometheus)"
command -v curl >/dev/null || skip "curl not installed"
command -v jq >/dev/null || skip "jq not installed"

plan p.json <<'P'
{"name": "prom", "run": {"ramp": "2s", "duration": "2s", "interval": "500ms"},
 "specs": [{"name": "a", "lines": [{"size": "4k", "read": 70, "random": 100, "burst": 8, "delay": "1ms"}]},
           {"name": "b", "lines": [{"size": "8k", "read": 100, "burst": 8, "delay": "1ms"}]},
           {"name": "c", "lines": [{"size": "4k", "read": 0, "burst": 8, "delay": "1ms"}]}],
 "workers": [{"count": 1, "engine": "null", "queue_depth": 2, "targets": [{"path": "t.dat", "size": "1m"}]}]}
P
iof_run_live "$T/p.json" --no-db --workdir "$T/work" --http 0 --http-linger 2

mkdir "$T/s"
n=0
while kill -0 "$RUN" 2>/dev/null; do
    curl -sf --max-time 2 -o "$T/s/$(printf %04d $n).txt" "${url}metrics" 2>/dev/null && n=$((n + 1))
    sleep 0.1
done
rc=0
wait "$RUN" || rc=$?
[ "$rc" = 0 ] || fail "iofleet run exited $rc: $(cat "$T/run.err")"
# What the checks below need, whatever the machine's load: scrapes in each of
# the three tests (each 4 s long, its first 2 s a ramp).
for i in 1 2 3; do
    grep -lq "^iofleet_test_index $i\$" "$T"/s/*.txt || fail "no scrape during test $i (of $n scrapes)"
done

for f in "$T"/s/*.txt; do
    promtool check metrics <"$f" >"$T/pt" 2>&1 || fail "promtool check metrics: $f: $(head -c 600 "$T/pt")"
done
ok "$n scrapes over three tests pass promtool check metrics"

# Series: every one exposed stays exposed (iofleet_run_info's state label aside).
prev=
gauges_seen=0
for f in "$T"/s/*.txt; do
    grep -v '^#' "$f" | sed 's/ [^ ]*$//' | grep -v '^iofleet_run_info{' | sort -u >"$f.keys"
    if [ -n "$prev" ]; then
        gone=$(comm -23 "$prev" "$f.keys" | tr '\n' ' ')
        [ -z "$gone" ] || fail "series gone between $(basename "$prev" .txt.keys) and $(basename "$f" .txt): $gone"
    fi
    grep -q '^iofleet_iops{node="ALL"}' "$f.keys" && gauges_seen=$((gauges_seen + 1))
    prev=$f.keys
done
[ "$gauges_seen" -ge 2 ] || fail "interval gauges in only $gauges_seen scrapes"
ramps=0
for f in "$T"/s/*.txt; do
    if ! grep -q '^iofleet_test_ramp 1$' "$f" || ! grep -q '^iofleet_test_index [23]$' "$f"; then
        continue
    fi
    ramps=$((ramps + 1))
    grep -q '^iofleet_iops{node="ALL"} ' "$f" || fail "interval gauges missing during a ramp: $f"
    grep -q '^iofleet_interval_test_index [12]$' "$f" ||
        fail "during a ramp the figures are not the previous test's: $(grep test_index "$f")"
done
[ "$ramps" -ge 1 ] || fail "no scrape during the ramp of test 2 or 3"
ok "no series vanishes across the tests; in $ramps scrapes during a ramp the gauges hold the previous test's figures"

# The summary: _count is the I/Os counted, _sum / _count a mean latency.
last=$(find "$T/s" -name '*.txt' | sort | tail -n 1)
grep -q '^# TYPE iofleet_latency_seconds summary$' "$last" || fail "iofleet_latency_seconds is not a summary"
for node in ALL local; do
    cnt=$(sed -n "s/^iofleet_latency_seconds_count{node=\"$node\"} //p" "$last")
    ios=$(sed -n "s/^iofleet_ios_total{node=\"$node\",op=\"\(read\|write\)\"} //p" "$last" | awk '{ s += $1 } END { print s }')
    sum=$(sed -n "s/^iofleet_latency_seconds_sum{node=\"$node\"} //p" "$last")
    if [ -z "$cnt" ] || [ "$cnt" != "$ios" ] || [ "$cnt" -le 0 ]; then
        fail "iofleet_latency_seconds_count{node=$node} = '$cnt', iofleet_ios_total says $ios"
    fi
    awk -v s="$sum" -v c="$cnt" 'BEGIN { m = s / c; exit !(m > 0 && m < 0.01) }' ||
        fail "iofleet_latency_seconds_sum{node=$node} = $sum over $cnt I/Os is no mean latency"
done
ok "latency summary: _count equals the I/O counters, _sum / _count is a mean"

promtool check config "$IOF_SRC/docs/monitoring/prometheus.yml" >"$T/pc" 2>&1 ||
    fail "promtool check config docs/monitoring/prometheus.yml: $(cat "$T/pc")"
rules=$(find "$IOF_SRC/docs/monitoring" -name '*rules*.y*ml')
for r in $rules; do
    promtool check rules "$r" >"$T/pr" 2>&1 || fail "promtool check rules $r: $(cat "$T/pr")"
done
DASH=$IOF_SRC/docs/monitoring/grafana-dashboard.json
jq -r '.. | strings' "$DASH" | grep -oE 'iofleet_[a-z_]+' | sort -u >"$T/dash"
grep -v '^#' "$last" | grep -oE '^iofleet_[a-z_]+' | sort -u >"$T/have"
missing=$(comm -23 "$T/dash" "$T/have" | tr '\n' ' ')
[ -z "$missing" ] || fail "the dashboard queries metrics /metrics does not have: $missing"
ok "docs/monitoring: prometheus.yml passes promtool check config; the dashboard's metrics are all exposed"

# An interrupted run is over: no time is left, whatever was planned.
plan q.json <<'P'
{"name": "prom-int", "run": {"ramp": "1s", "duration": "60s", "interval": "500ms"},
 "specs": [{"name": "a", "lines": [{"size": "4k", "read": 100, "burst": 8, "delay": "1ms"}]}],
 "workers": [{"count": 1, "engine": "null", "queue_depth": 2, "targets": [{"path": "t.dat", "size": "1m"}]}]}
P
iof_run_live "$T/q.json" --no-db --workdir "$T/work" --http 0 --http-linger 20
for _ in $(seq 600); do
    curl -sf --max-time 2 "${url}metrics" 2>/dev/null | grep -q '^iofleet_iops{node="ALL"}' && break
    sleep 0.1
done
kill -INT "$RUN"
m=
for _ in $(seq 600); do
    m=$(curl -sf --max-time 2 "${url}metrics" 2>/dev/null) || m=
    grep -q '^iofleet_run_info{.*state="done"' <<<"$m" && break
    m=
    sleep 0.1
done
[ -n "$m" ] || fail "the interrupted run was not served as done"
eta=$(sed -n 's/^iofleet_run_eta_seconds //p' <<<"$m")
[ "$eta" = 0 ] || fail "iofleet_run_eta_seconds = '$eta' after an interrupted run, expected 0"
kill "$RUN" 2>/dev/null || true
ok "an interrupted run: iofleet_run_eta_seconds 0 once it is done"
