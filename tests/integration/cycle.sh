# SPDX-License-Identifier: Apache-2.0
# Cycling end to end: queue depth (exponential), worker count and target
# count (linear) each give one test per step, in order, with the step in the
# table header and the entity rows the step implies. Null engine, tiny test
# files, very short measured windows.
source "$(dirname "$0")/lib/common.bash"

RUNOPTS=(--rows "worker,target" --set run.duration=200ms --set run.ramp=0s --set run.interval=100ms
    --workdir "$T/w" --quiet)

# The headers of the result tables in $T/out, as "N/M label" lines.
headers() { sed -n 's/^== test \([0-9]*\/[0-9]*\): .*\[\([a-z_]*=[0-9]*\)\].*/\1 \2/p' "$T/out"; }

# Per table: "<test> <WORKER rows> <TARGET rows>".
counts() {
    awk '/^== test/ { if (n) print n, w, t; n++; w = 0; t = 0 }
         $1=="WORKER" { w++ } $1=="TARGET" { t++ }
         END { if (n) print n, w, t }' "$T/out"
}

# TARGET rows under each WORKER row, one line per table: "2 2".
targets_per_worker() {
    awk '/^== test/ { if (n) print line; n++; line = ""; c = -1 }
         $1=="WORKER" { if (c >= 0) line = line " " c; c = 0 }
         $1=="TARGET" { c++ }
         /^$/ && c >= 0 { line = line " " c; c = -1 }
         END { if (c >= 0) line = line " " c; print line }' "$T/out" | sed 's/^ //'
}

expect_lines() { # WHAT WANT GOT
    [ "$2" = "$3" ] || { echo "--- want:"; echo "$2"; echo "--- got:"; echo "$3"; cat "$T/out"; fail "$1"; }
}

plan base.json <<'EOF'
{
  "name": "cycle-test",
  "run": {"ramp": "0s", "duration": "1s", "interval": "100ms"},
  "specs": [{"name": "4k random read", "lines": [{"size": "4k", "read": 100, "random": 100}]}],
  "workers": [
    {"nodes": ["*"], "count": 1, "engine": "null", "queue_depth": 1,
     "targets": [{"path": "c0.dat", "size": "1m"}, {"path": "c1.dat", "size": "1m"}]}
  ]
}
EOF

# --- queue depth 1..8 x2: 4 tests, queue depths 1, 2, 4, 8.
jq '.cycle = {"queue_depth": {"from": 1, "to": 8, "step": "x2"}}' "$T/base.json" >"$T/qd.json"
expect_rc 0 "$IOFLEET" validate "$T/qd.json"
expect_in "$T/out" "tests: 4 (1 spec x 4 cycle steps)"
expect_rc 0 "$IOFLEET" run "$T/qd.json" "${RUNOPTS[@]}"
expect_lines "queue_depth cycle headers" "1/4 queue_depth=1
2/4 queue_depth=2
3/4 queue_depth=4
4/4 queue_depth=8" "$(headers)"
ok "queue_depth x2 1..8: 4 tests at 1, 2, 4, 8"

# An exponential cycle stops at the last step not above "to".
jq '.cycle = {"queue_depth": {"from": 1, "to": 10, "step": "x2"}}' "$T/base.json" >"$T/qd10.json"
expect_rc 0 "$IOFLEET" validate "$T/qd10.json"
expect_in "$T/out" "tests: 4 (1 spec x 4 cycle steps)"
expect_in "$T/out" "test 4/4: spec 0 '4k random read', queue_depth=8"

# --- workers 1..3 +1: 3 tests with 1, 2, 3 WORKER rows (each with 2 TARGETs).
jq '.cycle = {"workers": {"from": 1, "to": 3, "step": "+1"}}' "$T/base.json" >"$T/wk.json"
expect_rc 0 "$IOFLEET" validate "$T/wk.json"
expect_in "$T/out" "tests: 3 (1 spec x 3 cycle steps)"
expect_rc 0 "$IOFLEET" run "$T/wk.json" "${RUNOPTS[@]}"
expect_lines "workers cycle headers" "1/3 workers=1
2/3 workers=2
3/3 workers=3" "$(headers)"
expect_lines "WORKER/TARGET rows per test (workers cycle)" "1 1 2
2 2 4
3 3 6" "$(counts)"
ok "workers +1 1..3: 1, 2, 3 WORKER rows"

# --- targets 1..2 +1 with 2 workers: 1 then 2 TARGET rows under each worker.
jq '.workers[0].count = 2 | .cycle = {"targets": {"from": 1, "to": 2, "step": "+1"}}' \
    "$T/base.json" >"$T/tg.json"
expect_rc 0 "$IOFLEET" validate "$T/tg.json"
expect_in "$T/out" "tests: 2 (1 spec x 2 cycle steps)"
expect_rc 0 "$IOFLEET" run "$T/tg.json" "${RUNOPTS[@]}"
expect_lines "targets cycle headers" "1/2 targets=1
2/2 targets=2" "$(headers)"
expect_lines "TARGET rows per worker (targets cycle)" "1 1
2 2" "$(targets_per_worker)"
# Step 1 drives the first target only, step 2 the first two.
awk '/^== test 1\// { s = 1 } /^== test 2\// { s = 2 }
     $1=="TARGET" && s == 1 && $2 !~ /:c0\.dat$/ { print "step 1 used " $2; bad = 1 }
     END { exit bad }' "$T/out" || fail "targets=1 must use the first target only"
ok "targets +1 1..2: 1 and 2 TARGET rows per worker"

# A linear step that does not land on "to" stops below it: 1, 3 (not 5 > 4).
jq '.cycle = {"workers": {"from": 1, "to": 4, "step": "+2"}}' "$T/base.json" >"$T/wk2.json"
expect_rc 0 "$IOFLEET" validate "$T/wk2.json"
expect_in "$T/out" "tests: 2 (1 spec x 2 cycle steps)"
expect_in "$T/out" "test 2/2: spec 0 '4k random read', workers=3"

# Cycling targets past the smallest group's target count is refused.
jq '.cycle = {"targets": {"from": 1, "to": 3, "step": "+1"}}' "$T/base.json" >"$T/bad.json"
expect_rc 2 "$IOFLEET" validate "$T/bad.json"
expect_in "$T/err" "cycle.targets.to"
ok "cycle edges"
