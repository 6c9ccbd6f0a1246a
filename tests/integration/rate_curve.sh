# SPDX-License-Identifier: Apache-2.0
# A rate curve (plan "cycle": {"rate": {"curve": [...]}}, vdbench
# iorate=curve) on the null engine, two workers on the embedded agent:
# test 1 runs unthrottled; each later test offers every worker its curve
# percentage of what that worker did unthrottled (the load split as the
# unthrottled test split it). Checks, from the CSV and JSON results: four
# tests with the cycle labels "rate=unthrottled", "rate=P%:TARGET"; each
# step's target is P % of the unthrottled ALL IOPS (to the rounding of the
# per-worker rates); every WORKER row achieves P % of its own unthrottled
# IOPS within 5 % (the null engine sustains far more than the 5..20 %
# asked, so only the schedule limits it), or, short of it on a host busy
# enough to take the worker's CPU, says so in late_ios; JSON rate_pct and
# rate_target_iops carry the same; validate lists the steps.
source "$(dirname "$0")/lib/common.bash"

plan curve.json <<'P'
{"name": "curve",
 "run": {"ramp": "500ms", "duration": "2s", "interval": "1s"},
 "specs": [{"name": "4k", "lines": [{"size": "4k", "read": 100, "random": 100}]}],
 "workers": [{"engine": "null", "count": 2, "queue_depth": 2,
              "targets": [{"path": "c.dat", "size": "1m"}]}],
 "cycle": {"rate": {"curve": [20, 5, 10]}}}
P
expect_rc 0 "$IOFLEET" validate "$T/curve.json"
expect_in "$T/out" "cycle: rate curve unthrottled, 20%, 5%, 10% of the unthrottled IOPS (4 steps)"
expect_in "$T/out" "test 3/4: spec 0 '4k', rate=5%"

expect_rc 0 "$IOFLEET" run "$T/curve.json" --csv "$T/c.csv" --json "$T/c.json" --quiet
python3 - "$T/c.csv" "$T/c.json" <<'PY' || fail "curve steps"
import csv, json, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
doc = json.load(open(sys.argv[2]))
tests = sorted({int(r["test"]) for r in rows})
assert tests == [1, 2, 3, 4], tests
by = lambda t, typ: [r for r in rows if int(r["test"]) == t and r["row_type"] == typ]
base_all = float(by(1, "ALL")[0]["iops"])
base_w = {r["worker"]: float(r["iops"]) for r in by(1, "WORKER")}
assert by(1, "ALL")[0]["cycle"] == "rate=unthrottled"
for t, pct in ((2, 20), (3, 5), (4, 10)):
    label = by(t, "ALL")[0]["cycle"]
    m = re.fullmatch(r"rate=(\d+)%:(\d+)", label)
    assert m and int(m.group(1)) == pct, label
    target = float(m.group(2))
    want = base_all * pct / 100
    assert abs(target - want) <= 1 + want * 1e-6, (label, want)
    jt = doc["tests"][t - 1]
    assert jt["cycle_param"] == "rate" and jt["rate_pct"] == pct, jt["rate_pct"]
    assert abs(jt["rate_target_iops"] - target) <= 1, jt["rate_target_iops"]
    got_all = float(by(t, "ALL")[0]["iops"])
    print(f"step {pct:3}%: target {target:12.0f}, achieved {got_all:12.0f} "
          f"({got_all / target:.4f})")
    for r in by(t, "WORKER"):
        w_want = base_w[r["worker"]] * pct / 100
        ratio = float(r["iops"]) / w_want
        print(f"    worker {r['worker']}: unthrottled {base_w[r['worker']]:.0f}, "
              f"target {w_want:.0f}, achieved {float(r['iops']):.0f} ({ratio:.4f})")
        # Never more than asked, but for I/Os due before the window that a
        # busy host let the worker issue only in it (each counted late).
        # Less only when the worker says it fell behind (late_ios: a busy
        # host took its CPU), never silently.
        late = int(r["late_ios"] or 0)
        excess = (float(r["iops"]) - w_want) * float(r["duration_s"])
        assert ratio < 1.05 or excess <= late, ("worker over its share by more than 5 % and more than its late I/Os", r["worker"], ratio, excess, late)
        assert ratio > 0.95 or late > 0, ("worker short of its share with no late I/O", r["worker"], ratio)
assert doc["tests"][0]["rate_pct"] is None and doc["tests"][0]["rate_target_iops"] is None
assert "find_max" not in doc["run"]
PY
ok "curve on the null engine: targets are the curve's percentages of each worker's unthrottled IOPS, achieved within 5 % or reported late"
