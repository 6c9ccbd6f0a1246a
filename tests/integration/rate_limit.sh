# SPDX-License-Identifier: Apache-2.0
# workers[].rate, a spec's io_limit and its own duration, end to end on the
# null engine with two agents (issue 11):
# 1. A rated run (2 agents x 2 workers x 2000 IOPS, uniform, 10 s measured
#    after a 1 s ramp) achieves the target within 1 % on every WORKER row and
#    the ALL row, and reports service latency and late I/Os in the CSV.
#    2000 IOPS per worker is far below what the null engine does on one
#    loaded CPU, so only the schedule limits it.
# 2. A spec with an io_limit (and no duration anywhere: the run then has no
#    run.duration) ends the test early: every WORKER row has exactly the
#    limit in bytes, ALL = sum of NODE, the window is the real one (shorter
#    than a second, not the 1 h safety maximum) and the rates use it; the
#    time series of that test adds up to the ALL row.
# 3. A spec's own duration overrides run.duration.
source "$(dirname "$0")/lib/common.bash"

iof_start_agent a --name a
A=$AGENT_EP
iof_start_agent b --name b
B=$AGENT_EP
AGENTS=(--insecure --agent "$A" --agent "$B")

plan rate.json <<'P'
{"name": "rate",
 "run": {"ramp": "1s", "duration": "10s", "interval": "1s"},
 "specs": [{"name": "4k rated", "lines": [{"size": "4k", "read": 70, "random": 100}]}],
 "workers": [{"engine": "null", "count": 2, "queue_depth": 4,
              "targets": [{"path": "r.dat", "size": "1m"}],
              "rate": {"iops": 2000}}]}
P
expect_rc 0 "$IOFLEET" run "$T/rate.json" "${AGENTS[@]}" --csv "$T/rate.csv" --quiet
expect_in "$T/out" "service (from submit): avg"
python3 - "$T/rate.csv" <<'PY' || fail "rated run"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    want = 2000.0 * {"ALL": 4, "NODE": 2, "WORKER": 1, "TARGET": 1}[r["row_type"]]
    got = float(r["iops"])
    ratio = got / want
    print(f'{r["row_type"]:6} {r["node"]:>4} {r["worker"]:>3}: {got:.1f} IOPS, {ratio:.4f} of '
          f'target, svc avg {r["avg_svc_lat_ms"]} ms, late {r["late_ios"]}')
    assert abs(ratio - 1) < 0.01, ("rate off by more than 1 %", r["row_type"], ratio)
    n = int(r["read_ios"]) + int(r["write_ios"])
    assert r["avg_svc_lat_ms"] != "" and r["max_svc_lat_ms"] != "", r
    assert float(r["avg_svc_lat_ms"]) <= float(r["avg_lat_ms"]) + 1e-6, r
    assert 0 <= int(r["late_ios"]) <= n, r
PY
ok "rated run: every row within 1 % of its target, service latency and late I/Os reported"

plan lim.json <<'P'
{"name": "lim",
 "run": {"interval": "100ms"},
 "specs": [{"name": "limited", "io_limit": "24m", "lines": [{"size": "4k", "read": 50, "random": 100}]},
           {"name": "short", "duration": "300ms", "lines": [{"size": "4k", "random": 100}]}],
 "workers": [{"engine": "null", "count": 2, "queue_depth": 4,
              "targets": [{"path": "l.dat", "size": "1m"}],
              "rate": {"iops": 20000, "arrival": "poisson"}}]}
P
expect_rc 0 "$IOFLEET" validate "$T/lim.json"
expect_in "$T/out" "run: ramp 0s, duration per spec, interval 100ms"
expect_in "$T/out" "spec 0 'limited', io_limit 24m per worker"
expect_in "$T/out" "spec 1 'short', duration 300ms"
expect_rc 0 "$IOFLEET" run "$T/lim.json" "${AGENTS[@]}" --csv "$T/lim.csv" --timeseries "$T/lim.ts" --quiet
python3 - "$T/lim.csv" "$T/lim.ts" <<'PY' || fail "io_limit / spec duration"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
lim = [r for r in rows if r["spec"] == "limited"]
short = [r for r in rows if r["spec"] == "short"]
limit = 24 << 20
for r in lim:
    nbytes = int(r["bytes_read"]) + int(r["bytes_written"])
    nw = {"ALL": 4, "NODE": 2, "WORKER": 1, "TARGET": 1}[r["row_type"]]
    assert nbytes == nw * limit, (r["row_type"], nbytes, nw * limit)
    assert r["status"] == "ok", r
    d = float(r["duration_s"])
    # 6144 I/Os at 20000 IOPS: about 0.31 s, nowhere near the 1 h maximum
    assert 0.2 < d < 2.0, ("window", r["row_type"], d)
    n = int(r["read_ios"]) + int(r["write_ios"])
    assert abs(float(r["iops"]) - n / d) < 0.01 * n / d + 0.01, r
all_ = [r for r in lim if r["row_type"] == "ALL"][0]
nodes = [r for r in lim if r["row_type"] == "NODE"]
for k in ("read_ios", "write_ios", "bytes_read", "bytes_written", "errors"):
    assert int(all_[k]) == sum(int(n[k]) for n in nodes), k
assert float(all_["duration_s"]) == max(float(n["duration_s"]) for n in nodes)
print(f'io_limit: {all_["bytes_read"]}+{all_["bytes_written"]} bytes in {all_["duration_s"]} s, '
      f'{all_["iops"]} IOPS')
ts = [r for r in csv.DictReader(open(sys.argv[2])) if r["spec"] == "limited" and r["node"] == "ALL"]
for k in ("read_ios", "write_ios", "bytes_read", "bytes_written"):
    assert sum(int(r[k]) for r in ts) == int(all_[k]), ("time series", k)
assert sum(float(r["duration_s"]) for r in ts) <= float(all_["duration_s"]) + 1e-6
for r in short:
    assert abs(float(r["duration_s"]) - 0.3) < 1e-6, ("spec duration", r["row_type"], r["duration_s"])
PY
ok "io_limit ends the test early with the exact bytes (ALL = sum of NODE, time series = totals)"
ok "a spec's duration overrides run.duration"

# No end at all is refused before anything runs.
plan noend.json <<'P'
{"name": "noend", "run": {},
 "specs": [{"name": "a", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "null", "targets": [{"path": "n.dat", "size": "1m"}], "rate": {"iops": 5}}]}
P
expect_rc 2 "$IOFLEET" validate "$T/noend.json"
expect_in "$T/err" "run.duration: required but missing (specs[0] has neither a duration nor an io_limit of its own)"
ok "a plan whose test has no end is refused"
