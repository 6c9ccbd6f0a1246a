# SPDX-License-Identifier: Apache-2.0
# A node lost mid-test keeps what it measured, in every result file: two
# agents on loopback, kill -9 of one during test 1 of 2.
#  - test 1: the lost node's NODE, WORKER and TARGET rows are there, marked
#    partial, with the window their intervals cover, and its IOPS is over
#    that window; ALL = sum of NODE = sum of WORKER = sum of TARGET exactly
#    (--csv, --json, --iometer-csv); the time series' ALL intervals add up
#    exactly to the final ALL counts (--timeseries and --json intervals).
#  - test 2: the lost node is named absent (table line, CSV row, JSON
#    "absent"), "lost" is 0, and the sums hold again.
#  - an agent back after the last test began is not promised a next test.
source "$(dirname "$0")/lib/cluster.bash"

command -v python3 >/dev/null || skip "python3 is needed to read the result files"
hb=300
cl_start_agents 2 n --heartbeat-ms $hb

plan p.json <<'P'
{"name": "lost", "run": {"ramp": "200ms", "duration": "3s", "interval": "500ms"},
 "specs": [{"name": "one", "lines": [{"size": "4k", "read": 70, "burst": 16, "delay": "1ms"}]},
           {"name": "two", "lines": [{"size": "8k", "read": 30, "burst": 16, "delay": "1ms"}]}],
 "workers": [{"count": 2, "engine": "null", "queue_depth": 2,
              "targets": [{"path": "a", "size": "1m"}, {"path": "b", "size": "1m"}]}]}
P

cl_spawn mgr "$T/m.out" "$T/m.err" "$IOFLEET" run "$T/p.json" "${CL_AGENT_ARGS[@]}" \
    --heartbeat-ms $hb --wait 10 --csv "$T/r.csv" --timeseries "$T/ts.csv" --json "$T/r.json" \
    --iometer-csv "$T/iom.csv"
cl_wait_log_count "$T/m.err" "[run] test 1/2" 3 15 # 1.5 s into the window
victim=${CL_NAMES[1]}
kill -KILL "${CL_PIDS[1]}"
cl_wait_log "$T/m.err" "iofleet: agent $victim (127.0.0.1:${CL_PORTS[1]}): lost: " 5
cl_wait_exit "$mgr" 30 rc
[ "$rc" = 1 ] || { cat "$T/m.err"; cl_fail "manager exited $rc after losing an agent, expected 1"; }
out=$T/m.out
awk '$1 == "NODE" && $2 == "'"$victim"'(partial)" { f = 1 } END { exit !f }' "$out" ||
    { cat "$out"; cl_fail "test 1: no partial NODE row of $victim in the table"; }
expect_in "$out" "  node $victim: no result (lost: "
expect_in "$out" "  node $victim: absent (not in this test"
case "$(cl_header "$out" 2)" in *"1 node, start skew"*"absent: 1"*) ;; *) cl_fail "test 2 header: $(cl_header "$out" 2)" ;; esac
grep -q "takes part from the next test" "$T/m.err" && cl_fail "a next test was promised"

python3 - "$T" "$victim" <<'PY' || cl_fail "the result files do not hold what was measured"
import csv, json, sys
T, victim = sys.argv[1], sys.argv[2]
C = ("read_ios", "write_ios", "bytes_read", "bytes_written", "errors")

def num(r, k):
    return int(r[k])

rows = list(csv.DictReader(open(T + "/r.csv")))
ts = list(csv.DictReader(open(T + "/ts.csv")))
doc = json.load(open(T + "/r.json"))
for t in (1, 2):
    rs = [r for r in rows if r["test"] == str(t)]
    all_ = [r for r in rs if r["row_type"] == "ALL"]
    assert len(all_) == 1, (t, all_)
    all_ = all_[0]
    for typ in ("NODE", "WORKER", "TARGET"):
        for k in C:
            s = sum(num(r, k) for r in rs if r["row_type"] == typ)
            assert s == num(all_, k), "csv test %d: ALL %s %s != sum of %s %d" % (t, k, all_[k], typ, s)
    # every row: iops = I/Os over its own window
    for r in rs:
        if r["iops"] == "":
            assert r["status"] in ("absent", "lost-before-start"), r
            continue
        ios = num(r, "read_ios") + num(r, "write_ios")
        want = ios / float(r["duration_s"])
        assert abs(float(r["iops"]) - want) <= 0.001 + want * 1e-9, (r["row_type"], r["node"], r["iops"], want)
    # time series: the ALL rows add up to the final ALL counts exactly
    tsa = [r for r in ts if r["test"] == str(t) and r["node"] == "ALL"]
    assert tsa, "no ALL intervals in test %d" % t
    for k in ("read_ios", "write_ios", "bytes_read", "bytes_written"):
        s = sum(num(r, k) for r in tsa)
        assert s == num(all_, k), "timeseries test %d: sum of ALL %s %d != final %s" % (t, k, s, all_[k])
    # and each node's intervals add up to its NODE row
    for n in set(r["node"] for r in rs if r["row_type"] == "NODE" and r["status"] != "absent"):
        nr = [r for r in rs if r["row_type"] == "NODE" and r["node"] == n][0]
        for k in ("read_ios", "write_ios"):
            s = sum(num(r, k) for r in ts if r["test"] == str(t) and r["node"] == n)
            assert s == num(nr, k), "timeseries test %d node %s: %s %d != NODE %s" % (t, n, k, s, nr[k])

t1 = [r for r in rows if r["test"] == "1"]
v1 = [r for r in t1 if r["node"] == victim]
assert {r["row_type"] for r in v1} == {"NODE", "WORKER", "TARGET"}, v1
assert all(r["status"] == "partial" for r in v1), [r["status"] for r in v1]
vn = [r for r in v1 if r["row_type"] == "NODE"][0]
assert num(vn, "read_ios") + num(vn, "write_ios") > 0, vn
w = float(vn["duration_s"])
assert 0.4 < w < 3.0, "partial window %s" % w
assert float(vn["window_start_s"]) == 0 and abs(float(vn["window_end_s"]) - w) < 1e-6, vn
assert all(r["status"] == "ok" for r in t1 if r["node"] not in (victim, "")), "survivor not ok"
assert [r for r in t1 if r["row_type"] == "ALL"][0]["status"] == "partial"
t2 = [r for r in rows if r["test"] == "2"]
v2 = [r for r in t2 if r["node"] == victim]
assert [(r["row_type"], r["status"]) for r in v2] == [("NODE", "absent")], v2

# JSON: the same rows, the same sums, lost/absent as documented
tests = doc["tests"]
assert len(tests) == 2, len(tests)
assert tests[0]["lost"] == 1 and tests[0]["absent"] == [], (tests[0]["lost"], tests[0]["absent"])
assert tests[1]["lost"] == 0 and tests[1]["absent"] == [victim], (tests[1]["lost"], tests[1]["absent"])
for t in tests:
    res = t["results"]
    a = [r for r in res if r["row_type"] == "ALL"][0]
    for typ in ("NODE", "WORKER", "TARGET"):
        for k in C:
            assert sum(r[k] for r in res if r["row_type"] == typ) == a[k], (t["index"], typ, k)
    ivs = [i for i in t["intervals"] if i["row_type"] == "ALL"]
    for k in ("read_ios", "write_ios", "bytes_read", "bytes_written"):
        assert sum(i[k] for i in ivs) == a[k], ("json intervals", t["index"], k)
    # the NODE histogram is whole: its buckets hold its count
    for r in res:
        if r["row_type"] in ("ALL", "NODE"):
            for d in ("read", "write"):
                h = r["latency"][d]
                assert sum(b[2] for b in h["buckets"]) == h["count"], (r["node"], d)
jv = [r for r in tests[0]["results"] if r["node"] == victim]
assert all(r["status"] == "partial" for r in jv)
assert all(r["latency"]["read"]["buckets"] is None for r in jv if r["row_type"] == "TARGET" and r["read_ios"])
assert all(r["p99_lat_ms"] is None for r in jv if r["row_type"] in ("WORKER", "TARGET"))

# Iometer: the partial node's rows are there (MANAGER = a node)
iom = open(T + "/iom.csv").read().splitlines()
mgr = [l for l in iom if l.startswith("MANAGER,")]
assert sum(1 for l in mgr if l.split(",")[1] == victim) == 1, mgr
print("ok: %s partial over %.3f s (%s I/Os); ALL = sums and time series = final in both tests"
      % (victim, w, num(vn, "read_ios") + num(vn, "write_ios")))
PY
ok "kill -9 of $victim in test 1: rows kept (partial), absent in test 2, every file adds up"

# Back during the last test: it is welcomed, but no next test is promised.
plan q.json <<'P'
{"name": "last", "run": {"ramp": "200ms", "duration": "6s", "interval": "500ms"},
 "specs": [{"name": "only", "lines": [{"size": "4k", "burst": 16, "delay": "1ms"}]}],
 "workers": [{"engine": "null", "targets": [{"path": "a", "size": "1m"}]}]}
P
vport=${CL_PORTS[1]}
restart_victim() { # a listening agent on the victim's port again
    local pid=''
    cl_spawn pid /dev/null "$T/$victim-$1.log" "$DYNAMO" --listen "127.0.0.1:$vport" --insecure \
        --name "$victim" --workdir "$T/work-$victim" --heartbeat-ms $hb
    cl_wait_log "$T/$victim-$1.log" "listening on 127.0.0.1:$vport" 10
    VPID=$pid
}
restart_victim b
cl_spawn mgr "$T/q.out" "$T/q.err" "$IOFLEET" run "$T/q.json" "${CL_AGENT_ARGS[@]}" \
    --heartbeat-ms $hb --wait 10
cl_wait_log_count "$T/q.err" "[run] test 1/1" 2 15
kill -KILL "$VPID"
cl_wait_log "$T/q.err" "iofleet: agent $victim (127.0.0.1:$vport): lost: " 5
restart_victim c
cl_wait_log "$T/q.err" "iofleet: agent $victim (127.0.0.1:$vport) is back" 8
cl_wait_exit "$mgr" 30 rc
[ "$rc" = 1 ] || { cat "$T/q.err"; cl_fail "exit $rc, expected 1"; }
expect_in "$T/q.err" "is back, but no test is left for it to take part in"
grep -q "takes part from the next test" "$T/q.err" && cl_fail "a next test was promised in a 1-test run"
ok "back during the last test: no next test promised"
