# SPDX-License-Identifier: Apache-2.0
# What validates also runs: one node's share of a test (the workers x
# targets of every group selecting it) is bounded at validation by the same
# limit the stats messages carry (common/spec.h), so the largest plan that
# `iofleet validate` accepts runs and reports, and one over it is refused
# before anything runs (5 workers x 256 targets once validated and then
# could not be reported).
source "$(dirname "$0")/lib/common.bash"
command -v python3 >/dev/null || skip "python3 writes the plans"

mkplan() { # FILE COUNT: COUNT workers x 256 small test files, null engine, 1 s;
    # bursts of 32 reach every target in 8 bursts, even when a loaded machine
    # stretches each 5 ms pause many times over
    python3 - "$1" "$2" <<'PY'
import json, sys
t = [{"path": "t%03d" % i, "size": "4k"} for i in range(256)]
json.dump({"name": "limits", "run": {"ramp": "100ms", "duration": "1s", "interval": "500ms"},
           "specs": [{"name": "4k", "lines": [{"size": "4k", "read": 50, "burst": 32, "delay": "5ms"}]}],
           "workers": [{"count": int(sys.argv[2]), "engine": "null", "targets": t}]},
          open(sys.argv[1], "w"))
PY
}
mkplan "$T/over.json" 5
mkplan "$T/max.json" 2

expect_rc 2 "$IOFLEET" validate "$T/over.json"
expect_in "$T/err" "workers: every node would run 1280 targets in one test"
expect_rc 2 "$IOFLEET" run "$T/over.json" --workdir "$T/w-over"
ok "5 workers x 256 targets refused by validate and run"

expect_rc 0 "$IOFLEET" validate "$T/max.json"
expect_rc 0 "$IOFLEET" run "$T/max.json" --workdir "$T/w" --csv "$T/r.csv" --quiet
python3 - "$T/r.csv" <<'PY' || fail "the largest plan did not report every target"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
tg = [r for r in rows if r["row_type"] == "TARGET"]
assert len(tg) == 512, len(tg)
assert all(int(r["read_ios"]) + int(r["write_ios"]) > 0 for r in tg), "a target without I/O"
a = [r for r in rows if r["row_type"] == "ALL"][0]
assert sum(int(r["read_ios"]) for r in tg) == int(a["read_ios"])
print("ok: 512 TARGET rows, ALL %s reads" % a["read_ios"])
PY
ok "the largest plan that validates (2 workers x 256 targets on one node) ran and reported"
