# SPDX-License-Identifier: Apache-2.0
# End-to-end: the README's quickstart plan runs on the local machine, every
# test prints a table, and the ALL row is the exact sum of the workers.
source "$(dirname "$0")/lib/common.bash"

expect_rc 0 "$IOFLEET" run "$IOF_SRC/configs/quickstart.json" --workdir "$T/work" --rows worker \
    --set run.duration=2s --set run.ramp=500ms --set run.interval=500ms
out=$T/out
[ "$(grep -c '^== test' "$out")" = 2 ] || fail "expected 2 result tables"
expect_in "$T/err" "preparing $T/work/iofleet-quickstart.dat"
expect_in "$T/err" "[run] test 2/2"

# Per table: ALL IOPS equals the sum of WORKER IOPS, errors are 0.
awk '
/^== test/ { if (n) check(); n++; all=0; sum=0; nw=0 }
$1=="ALL" { all=$3; if ($12 != 0) { print "errors in ALL row"; exit 1 } }
$1=="WORKER" { sum+=$3; nw++ }
function check() {
    if (all <= 0) { print "no I/O in test " n; exit 1 }
    if (nw != 2) { print "expected 2 workers, got " nw; exit 1 }
    d = all - sum; if (d < 0) d = -d
    if (d > 0.2) { print "ALL " all " != sum of workers " sum; exit 1 }
}
END { check() }' "$out" || fail "table check"
ok "quickstart ran: $(row_field "$out" ALL 3) IOPS in test 1"

# The test file is reused on the second run (not prepared again).
expect_rc 0 "$IOFLEET" run "$IOF_SRC/configs/quickstart.json" --workdir "$T/work" \
    --set run.duration=500ms --set run.ramp=0s --set run.interval=500ms --quiet
if grep -q preparing "$T/err"; then fail "test file was prepared again"; fi
ok "test file reused"
