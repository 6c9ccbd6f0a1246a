# SPDX-License-Identifier: Apache-2.0
# iofleet import on Iometer configuration files, round trip: each file of
# tests/data/iometer (1.1.0 and date-style headers; merged workers, two
# managers, queue-depth cycling) imports with its Windows targets mapped to
# test files, validates, and a short null-engine run gives the tests the plan
# expands to. An unmapped target is a placeholder validate refuses by name.
source "$(dirname "$0")/lib/common.bash"
command -v jq >/dev/null || skip "jq not installed"
D=$IOF_SRC/tests/data/iometer
cd "$T"

expect_rc 0 "$IOFLEET" import "$D/two-workers.icf" --map '1:=disk1.dat' --sector-size 512 \
    -o two.json
expect_in "$T/err" "two-workers.icf:28: ignored: lines 28-33, the results display"
jq -e '.workers[0].count == 2 and .workers[0].queue_depth == 16 and (.specs | length) == 2' \
    two.json >/dev/null || fail "two-workers.icf: not one group of 2 workers at QD 16, 2 specs"
expect_rc 0 "$IOFLEET" validate two.json
expect_in "$T/out" "tests: 2"
expect_rc 0 timeout 120 "$IOFLEET" run two.json --no-db --quiet --json two-run.json \
    --set workers[0].engine=null --set workers[0].targets[0].size=16m \
    --set run.duration=1s --set run.ramp=0s
jq -e '(.tests | length) == 2 and ([.tests[].spec] == ["4K; 70% Read; 100% random", "OLTP mix"])' \
    two-run.json >/dev/null || fail "two-workers.icf: the run's tests differ from the specs"
ok "two-workers.icf: import --map -> validate -> null run (2 tests, 2 workers merged)"

expect_rc 0 "$IOFLEET" import "$D/qd-sweep-2006.icf" --map 'PHYSICALDRIVE:1=sweep.dat' \
    --sector-size 512 -o sweep.json
jq -e '.cycle.queue_depth == {"from": 1, "to": 32, "step": "x2"}' sweep.json >/dev/null ||
    fail "qd-sweep-2006.icf: no queue depth cycle 1..32 x2"
expect_rc 0 "$IOFLEET" validate sweep.json --set workers[0].targets[0].size=1m \
    --unset workers[0].targets[0].range
expect_in "$T/out" "tests: 6"
ok "qd-sweep-2006.icf (date-style header): CYCLE_OUTSTANDING_IOS -> 6 tests"

expect_rc 0 "$IOFLEET" import "$D/two-managers-2004.icf" --map 'C:=/dev/sdb' --map 'D:=/dev/sdc' \
    -o two-mgr.json
jq -e '[.workers[].nodes[0]] == ["node1", "node2"]' two-mgr.json >/dev/null ||
    fail "two-managers-2004.icf: groups not per manager"
ok "two-managers-2004.icf: one group per manager, nodes named"

# No --map: written with placeholders, which validate refuses by name.
expect_rc 0 "$IOFLEET" import "$D/two-workers.icf" --sector-size 512 -o ph.json
expect_in "$T/err" "note: target '1: \"VMware Virtual disk\"' has no --map"
expect_rc 2 "$IOFLEET" validate ph.json
expect_in "$T/err" "is an Iometer target placeholder: map it with iofleet import --map"
ok "an unmapped target is a placeholder validate points at"

sed 's/^\tOLTP mix$/\tIdle/' "$D/two-workers.icf" >idle.icf
expect_rc 2 "$IOFLEET" import idle.icf -o idle.json
expect_in "$T/err" "idle.icf:62: error: cannot map the Idle specification"
[ ! -e idle.json ] || fail "a refused import wrote its output"
ok "an unmappable line exits 2 with its line number"

# Sectors: 4Kn with --sector-size 4096; without it a region is refused, in one line.
expect_rc 0 "$IOFLEET" import "$D/sectors-4kn.icf" --map 'PHYSICALDRIVE:1=/dev/sdb' \
    --sector-size 4096 -o kn.json
jq -e '.workers[0].targets[0].range == {"offset": 1048576, "size": 1073741824} and
    .specs[0].lines[0].align == 4096' kn.json >/dev/null ||
    fail "sectors-4kn.icf: the region or align 0 is not in 4096-byte sectors"
expect_rc 2 "$IOFLEET" import "$D/sectors-4kn.icf" --map 'PHYSICALDRIVE:1=/dev/sdb' -o kn0.json
[ "$(grep -c 'error:' "$T/err")" = 1 ] || fail "not one error for the unknown sector size"
expect_in "$T/err" "sectors-4kn.icf:32: error: maximum disk size 262144 and starting sector 256"
expect_rc 2 "$IOFLEET" import "$D/sectors-4kn.icf" --sector-size 520 -o kn1.json
expect_in "$T/err" "--sector-size takes 512 or 4096 (bytes), got '520'"
ok "sectors-4kn.icf: --sector-size 4096 scales the region and align 0; unknown: one error"

expect_rc 0 "$IOFLEET" import "$D/after-end.icf" --map 'PHYSICALDRIVE:1=/dev/sdb' -o after.json
[ "$(grep -c 'after-end.icf' "$T/err")" = 2 ] || fail "after-end.icf: not one warning (+ align note)"
expect_in "$T/err" "after-end.icf:47: ignored: lines 47-67, manager list entries after its 'END"
jq -e '(.workers | length) == 1 and (.workers[0].count // 1) == 1' after.json >/dev/null ||
    fail "after-end.icf: the worker after the end was added"
ok "a worker after 'END manager list: one warning, not run (as in Iometer)"
