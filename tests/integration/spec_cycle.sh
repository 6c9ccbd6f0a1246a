# SPDX-License-Identifier: Apache-2.0
# Cycling the spec itself end to end: one single-line spec and
# "cycle": {"size": [4k, 8k], "read": [100, 0]} with a queue_depth cycle of
# two steps run 2 x 2 x 2 = 8 tests, in order, each table named after its
# expanded spec. Null engine, tiny test file, very short measured windows.
source "$(dirname "$0")/lib/common.bash"

RUNOPTS=(--set run.duration=200ms --set run.ramp=0s --set run.interval=100ms
    --workdir "$T/w" --quiet)

plan sc.json <<'P'
{"name": "spec-cycle",
 "run": {"ramp": "0s", "duration": "1s"},
 "specs": [{"name": "m", "lines": [{"size": "4k", "random": 100}]}],
 "cycle": {"size": ["4k", "8k"], "read": [100, 0], "queue_depth": {"from": 1, "to": 2, "step": "x2"}},
 "workers": [{"engine": "null", "targets": [{"path": "s.dat", "size": "1m"}]}]}
P
expect_rc 0 "$IOFLEET" validate "$T/sc.json"
expect_in "$T/out" "spec cycle: size 4k, 8k x read 100%, 0% (1 single-line spec expanded)"
expect_in "$T/out" "tests: 8 (4 specs x 2 cycle steps)"
expect_in "$T/out" "spec 3 '8k 0% read 100% random'"
ok "validate shows the expansion: 4 specs x 2 queue depths"

expect_rc 0 "$IOFLEET" run "$T/sc.json" "${RUNOPTS[@]}"
got=$(sed -n 's/^== test \([0-9]*\/[0-9]*\): \(.*\)  \[\(queue_depth=[0-9]*\)\].*/\1 \2 \3/p' "$T/out")
want="1/8 4k 100% read 100% random queue_depth=1
2/8 4k 100% read 100% random queue_depth=2
3/8 4k 0% read 100% random queue_depth=1
4/8 4k 0% read 100% random queue_depth=2
5/8 8k 100% read 100% random queue_depth=1
6/8 8k 100% read 100% random queue_depth=2
7/8 8k 0% read 100% random queue_depth=1
8/8 8k 0% read 100% random queue_depth=2"
[ "$got" = "$want" ] || { echo "--- want:"; echo "$want"; echo "--- got:"; echo "$got"; cat "$T/out"; fail "test tables"; }
ok "the run has 8 tables in order, named after each expanded spec"

# The shipped seed-004 matrix: one spec, 12 tests in the report's order.
expect_rc 0 "$IOFLEET" validate "$IOF_SRC/configs/iometer-block-size-matrix.json"
expect_in "$T/out" "tests: 12 (12 specs x 1 cycle step)"
expect_in "$T/out" "spec 0 '4k 100% read 100% random'"
expect_in "$T/out" "spec 1 '4k 0% read 100% random'"
expect_in "$T/out" "spec 2 '4k 100% read 0% random'"
expect_in "$T/out" "spec 11 '64k 0% read 0% random'"
ok "iometer-block-size-matrix expands to the 12 tests of seed 004"
