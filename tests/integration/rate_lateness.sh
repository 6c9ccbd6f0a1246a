# SPDX-License-Identifier: Apache-2.0
# The lateness of rated I/O in the results (protocol 1.6, docs/results.md):
# how long after its scheduled time each I/O of a rated worker
# (workers[].rate) was submitted, per test, for ALL and each NODE. Real
# binaries, sync engine on a file target, 2 workers x 1000 IOPS for 2 s.
# Only invariants are asserted, never timings (a loaded host is late):
# 1. A rated test: `lateness` in the JSON of ALL and the NODE, counting
#    exactly the row's I/Os (read_ios + write_ios), p50 <= p99 <= p99.9 <=
#    max, over_20us <= count; null on WORKER and TARGET rows; the CSV's
#    lateness_* columns say the same; the terminal prints the line.
# 2. An unrated test: `lateness` null on every row.
# 3. A rated test with an agent announcing protocol 1.5 beside a 1.6 one:
#    the run succeeds, the 1.5 NODE's lateness is null (unknown), and so is
#    ALL's (it would not cover every rated I/O); the 1.6 NODE has its own.
source "$(dirname "$0")/lib/common.bash"

iof_start_agent new --name new
NEW=$AGENT_EP
IOF_PROTO_MINOR=5 iof_start_agent old --name old
OLD=$AGENT_EP

plan rated.json <<'P'
{"name": "late", "run": {"ramp": "500ms", "duration": "2s", "interval": "1s"},
 "specs": [{"name": "4k rated", "lines": [{"size": "4k", "read": 70, "random": 100}]}],
 "workers": [{"engine": "sync", "count": 2, "queue_depth": 2,
              "targets": [{"path": "late.dat", "size": "2m"}],
              "rate": {"iops": 1000, "arrival": "poisson"}}]}
P
plan free.json <<'P'
{"name": "free", "run": {"ramp": "200ms", "duration": "1s", "interval": "1s"},
 "specs": [{"name": "4k", "lines": [{"size": "4k", "read": 70, "random": 100}]}],
 "workers": [{"engine": "sync", "count": 1, "queue_depth": 2,
              "targets": [{"path": "late.dat", "size": "2m"}]}]}
P

# --- 1. rated, a 1.6 agent --------------------------------------------------------------
expect_rc 0 "$IOFLEET" run "$T/rated.json" --insecure --agent "$NEW" --wait 10 \
    --json "$T/r.json" --csv "$T/r.csv"
expect_in "$T/out" "lateness (submit - scheduled): p50 "
python3 - "$T/r.json" "$T/r.csv" <<'PY' || fail "rated test's lateness"
import csv, json, sys
doc = json.load(open(sys.argv[1]))
rows = doc["tests"][0]["results"]
by = {(r["row_type"], r["node"]): r for r in rows}
csvrows = {(r["row_type"], r["node"] or None): r for r in csv.DictReader(open(sys.argv[2]))
           if r["row_type"] in ("ALL", "NODE")}
for key in (("ALL", None), ("NODE", "new")):
    r = by[key]
    l = r["lateness"]
    assert l is not None, (key, "no lateness")
    n = r["read_ios"] + r["write_ios"]
    assert n > 1000, (key, "too few I/Os for a 2 s test at 2 x 1000 IOPS", n)
    assert l["count"] == n, (key, "lateness count", l["count"], "I/Os", n)
    assert l["p50_us"] <= l["p99_us"] <= l["p999_us"] <= l["max_us"], (key, l)
    assert l["avg_us"] <= l["max_us"], (key, l)
    assert 0 <= l["over_20us"] <= l["count"], (key, l)
    assert abs(l["over_20us_pct"] - 100.0 * l["over_20us"] / l["count"]) < 1e-9, (key, l)
    # late_ios (> 1 ms late) are among those over 20 us
    assert r["late_ios"] <= l["over_20us"], (key, r["late_ios"], l)
    c = csvrows[key]
    assert int(c["lateness_count"]) == l["count"] and int(c["lateness_over_20us"]) == l["over_20us"], (key, c)
    for f in ("p50_us", "p99_us", "p999_us", "max_us", "avg_us"):
        assert abs(float(c["lateness_" + f]) - l[f]) <= 0.0005 + 1e-9 * l[f], (key, f, c, l)
    print(f'{key[0]:4} {key[1] or "*":4} {n} I/Os: lateness p50 {l["p50_us"]} us, p99 '
          f'{l["p99_us"]} us, p99.9 {l["p999_us"]} us, max {l["max_us"]} us, '
          f'{l["over_20us"]} ({l["over_20us_pct"]:.2f} %) over 20 us')
assert by[("ALL", None)]["lateness"] == by[("NODE", "new")]["lateness"], "one node: ALL == NODE"
for r in rows:
    if r["row_type"] in ("WORKER", "TARGET"):
        assert r["lateness"] is None, r
        assert r["late_ios"] is not None, r
PY
ok "rated test: lateness at ALL and NODE counts every rated I/O, percentiles in order, CSV the same"

# --- 2. unrated ---------------------------------------------------------------------------
expect_rc 0 "$IOFLEET" run "$T/free.json" --insecure --agent "$NEW" --wait 10 \
    --json "$T/f.json" --csv "$T/f.csv"
python3 - "$T/f.json" "$T/f.csv" <<'PY' || fail "unrated test's lateness"
import csv, json, sys
rows = json.load(open(sys.argv[1]))["tests"][0]["results"]
assert rows and all(r["lateness"] is None for r in rows), [r["lateness"] for r in rows]
assert any(r["read_ios"] + r["write_ios"] > 0 for r in rows)
for r in csv.DictReader(open(sys.argv[2])):
    assert all(r[k] == "" for k in r if k.startswith("lateness_")), r
PY
if grep -q "lateness (submit" "$T/out"; then fail "an unrated test printed a lateness line"; fi
ok "unrated test: lateness null on every row"

# --- 3. a 1.5 agent beside a 1.6 one ------------------------------------------------------
expect_rc 0 "$IOFLEET" run "$T/rated.json" --insecure --agent "$NEW" --agent "$OLD" --wait 10 \
    --json "$T/m.json" --verbose
expect_in "$T/err" "agent old ($OLD): protocol 1.5"
python3 - "$T/m.json" <<'PY' || fail "a 1.5 agent's lateness"
import json, sys
rows = json.load(open(sys.argv[1]))["tests"][0]["results"]
by = {(r["row_type"], r["node"]): r for r in rows}
old, new, all_ = by[("NODE", "old")], by[("NODE", "new")], by[("ALL", None)]
assert old["status"] == "ok" and old["read_ios"] + old["write_ios"] > 0, old
assert old["late_ios"] is not None, old
assert old["lateness"] is None, ("1.5 agent", old["lateness"])
assert new["lateness"] is not None and new["lateness"]["count"] == new["read_ios"] + new["write_ios"], new
assert all_["lateness"] is None, ("ALL without the 1.5 node's lateness", all_["lateness"])
PY
ok "a 1.5 agent: the run succeeds, its NODE and the ALL row say lateness null, the 1.6 NODE has it"
