# SPDX-License-Identifier: Apache-2.0
# SIGINT mid-test: the run stops promptly, prints what was measured, exits 130,
# and marks the test interrupted in every result file.
source "$(dirname "$0")/lib/common.bash"

plan long.json <<'P'
{"name": "long", "run": {"ramp": "0s", "duration": "60s", "interval": "200ms"},
 "specs": [{"name": "first", "lines": [{"size": "4k"}]}, {"name": "never", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "null", "queue_depth": 8, "targets": [{"path": "n", "size": "1g"}]}]}
P
"$IOFLEET" run "$T/long.json" --workdir "$T/w" --timeseries "$T/ts.csv" --csv "$T/r.csv" \
    --json "$T/r.json" --iometer-csv "$T/r-iometer.csv" >"$T/out" 2>"$T/err" &
pid=$!
iof_on_exit "kill -9 $pid 2>/dev/null"
sleep 1.5
t0=$(date +%s%N)
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
t1=$(date +%s%N)
[ "$rc" = 130 ] || { cat "$T/out" "$T/err"; fail "exit $rc, expected 130"; }
[ $(( (t1 - t0) / 1000000 )) -lt 3000 ] || fail "took $(( (t1 - t0) / 1000000 )) ms to stop"
expect_in "$T/out" "== test 1/2: first"
expect_in "$T/out" "INTERRUPTED"
if grep -q "test 2/2" "$T/out"; then fail "second test started after interrupt"; fi
measured=$(sed -n 's/.*measured \([0-9.]*\) s.*/\1/p' "$T/out")
awk -v m="$measured" 'BEGIN { exit !(m > 0.5 && m < 5) }' || fail "measured window $measured s"
iops=$(row_field "$T/out" ALL 3)
awk -v i="$iops" 'BEGIN { exit !(i > 0) }' || fail "no I/O counted"
ok "interrupted after ${measured}s with $iops IOPS recorded, exit 130"

# The interval cut by the stop carries its real length and rate in every
# file: the intervals' lengths add up to the final window, their I/Os to the
# final I/Os, and each rate is its I/Os over its own length.
python3 - "$T" <<'PY' || fail "the cut interval does not carry its real duration and rate"
import csv, json, sys
T = sys.argv[1]
ts = [r for r in csv.DictReader(open(T + "/ts.csv")) if r["test"] == "1"]
fin = [r for r in csv.DictReader(open(T + "/r.csv")) if r["test"] == "1" and r["row_type"] == "ALL"][0]
for rows in ([r for r in ts if r["node"] == "ALL"], [r for r in ts if r["node"] != "ALL"]):
    rows.sort(key=lambda r: int(r["interval"]))
    dur = sum(float(r["duration_s"]) for r in rows)
    assert abs(dur - float(fin["duration_s"])) < 1e-5 * len(rows), (dur, fin["duration_s"])
    assert sum(int(r["read_ios"]) + int(r["write_ios"]) for r in rows) == int(fin["read_ios"]) + int(fin["write_ios"])
    last = rows[-1]
    assert float(last["duration_s"]) <= 0.2 + 1e-9, last["duration_s"]
    for r in rows:
        ios = int(r["read_ios"]) + int(r["write_ios"])
        if float(r["duration_s"]) == 0:
            # A stop right at an interval's boundary cuts one of no length.
            assert ios == 0 and float(r["iops"]) == 0, (r["interval"], ios, r["iops"])
            continue
        want = ios / float(r["duration_s"])
        # duration_s is printed to 1 us: allow for that rounding
        assert abs(float(r["iops"]) - want) <= 0.0005 + want * 1e-6 / float(r["duration_s"]), (r["interval"], r["iops"], want)
doc = json.load(open(T + "/r.json"))
t = doc["tests"][0]
ivs = sorted((i for i in t["intervals"] if i["row_type"] == "ALL"), key=lambda i: i["interval"])
res = [r for r in t["results"] if r["row_type"] == "ALL"][0]
assert abs(sum(i["duration_s"] for i in ivs) - res["duration_s"]) < 1e-6, "json durations"
last = ivs[-1]
if last["duration_s"] > 0:
    assert abs(last["iops"] - (last["read_ios"] + last["write_ios"]) / last["duration_s"]) < 1e-6 * max(1, last["iops"])
print("ok: %d intervals, last %.6f s, window %s s" % (len(ivs), last["duration_s"], fin["duration_s"]))
PY
ok "the cut interval has its real duration and rate in --timeseries, --csv and --json"

# The interruption is marked in every file, not only the table and the JSON:
# --csv's interrupted column (1 on every row of the test), --timeseries'
# interrupted column (1 on the interval the stop cut short, 0 before it) and
# a comment line of --iometer-csv.
python3 - "$T" <<'PY' || fail "the interruption is not marked in --csv / --timeseries"
import csv, json, sys
T = sys.argv[1]
rows = list(csv.DictReader(open(T + "/r.csv")))
assert rows and all(r["interrupted"] == "1" for r in rows), [(r["row_type"], r["interrupted"]) for r in rows]
assert json.load(open(T + "/r.json"))["tests"][0]["interrupted"] is True
ts = [r for r in csv.DictReader(open(T + "/ts.csv"))]
for node in set(r["node"] for r in ts):
    mine = [r for r in ts if r["node"] == node]
    last = max(int(r["interval"]) for r in mine)
    seen = [(r["interval"], r["duration_s"], r["interrupted"]) for r in mine]
    assert all(r["interrupted"] == "0" for r in mine if int(r["interval"]) < last), (node, seen)
    assert any(r["interrupted"] == "1" for r in mine if int(r["interval"]) == last), (node, seen)
print("ok: %d --csv rows and the last of %d intervals per node marked" % (len(rows), len(mine)))
PY
grep -q "^'Interrupted: the test was stopped before the end of its measured window ([0-9.]* s measured)" \
    "$T/r-iometer.csv" || { cat "$T/r-iometer.csv"; fail "no interrupted comment in --iometer-csv"; }
awk "/^'Interrupted/ { i = NR } /^'Results/ { r = NR } END { exit !(i && r == i + 1) }" "$T/r-iometer.csv" ||
    fail "the --iometer-csv comment is not the line before 'Results"
ok "interrupted marked in --csv (every row), --timeseries (the cut interval) and --iometer-csv"

# A run that was not interrupted marks nothing.
plan short.json <<'P'
{"name": "short", "run": {"ramp": "0s", "duration": "400ms", "interval": "200ms"},
 "specs": [{"name": "one", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "null", "queue_depth": 8, "targets": [{"path": "n", "size": "1g"}]}]}
P
expect_rc 0 "$IOFLEET" run "$T/short.json" --workdir "$T/w" --no-db --csv "$T/s.csv" \
    --timeseries "$T/s-ts.csv" --iometer-csv "$T/s-iometer.csv"
python3 - "$T" <<'PY' || fail "a complete run is marked interrupted"
import csv, sys
T = sys.argv[1]
for f in ("s.csv", "s-ts.csv"):
    rows = list(csv.DictReader(open(T + "/" + f)))
    assert rows and all(r["interrupted"] == "0" for r in rows), f
PY
! grep -q "^'Interrupted" "$T/s-iometer.csv" || fail "a complete run has the interrupted comment"
ok "a complete run: interrupted 0 everywhere, no comment"
