# SPDX-License-Identifier: Apache-2.0
# iofleet import on vdbench parameter files: every shipped HCIBench plan
# (configs/hcibench-*.json) is exactly the import of its parameter file
# (configs/hcibench-*.vdb); the hand-written files of tests/data/vdbench (an
# HCIBench raw-disk file, a curve, for-loops through include=, hosts with a
# shared rate and skew) import, validate and expand to the tests vdbench
# runs; the format is told by the name or the content; what cannot be exact
# exits 2 naming FILE:LINE and the parameter, or with --approximate is kept
# in the plan's notes; --var gives $variables their values.
source "$(dirname "$0")/lib/common.bash"
command -v jq >/dev/null || skip "jq not installed"
DATA=$IOF_SRC/tests/data/vdbench
cd "$T"

n=0
for vdb in "$IOF_SRC"/configs/hcibench-*.vdb; do
    expect_rc 0 "$IOFLEET" import "$vdb" -o imported.json --force
    diff -u "${vdb%.vdb}.json" imported.json >&2 ||
        fail "$(basename "${vdb%.vdb}.json") is not the import of $(basename "$vdb")"
    n=$((n + 1))
done
[ "$n" -ge 5 ] || fail "expected at least 5 HCIBench parameter files in configs/, found $n"
ok "$n shipped HCIBench plans equal the import of their parameter files"

# HCIBench's raw-disk shape: 10 disks at 10 %, 2 threads, 4k 70/30 50 % random.
expect_rc 0 "$IOFLEET" import "$DATA/vdb-10vmdk-10ws-4k-70rdpct-50randompct-2threads" -o hci.json
expect_in "$T/err" "vdb-10vmdk-10ws-4k-70rdpct-50randompct-2threads:7: ignored: hitarea"
jq -e '.workers[0].queue_depth == 2 and (.workers[0].targets | length) == 10 and
       .workers[0].targets[9] == {"path": "/dev/sdk", "range": {"offset": "0%", "size": "10%"}} and
       .specs[0].lines == [{"size": "4k", "read": 70, "random": 50}] and
       .run == {"ramp": "30m", "duration": "30m", "interval": "30s"}' hci.json >/dev/null ||
    fail "the HCIBench raw-disk file imported as $(cat hci.json)"
expect_rc 0 "$IOFLEET" validate hci.json
ok "HCIBench's raw-disk parameter file: 10 targets at 10 %, queue depth 2, warmup as ramp"

expect_rc 0 "$IOFLEET" import "$DATA/curve.vdb" -o curve.json
jq -e '.cycle == {"rate": {"curve": [10, 50, 90, 100]}} and (.specs[0].lines | map(.share)) == [60, 30, 10]' \
    curve.json >/dev/null || fail "curve.vdb imported as $(cat curve.json)"
expect_rc 0 "$IOFLEET" validate curve.json
expect_in "$T/out" "tests: 5"
ok "iorate=curve: the unthrottled test and 4 curve points; an xfersize distribution as shares"

expect_rc 0 "$IOFLEET" import "$DATA/loops.vdb" -o loops.json
expect_rc 0 "$IOFLEET" validate loops.json
expect_in "$T/out" "tests: 24"
ok "for-loops read through include=: 3 sizes x 2 read shares x 4 thread counts = 24 tests"

expect_rc 0 "$IOFLEET" import "$DATA/hosts.vdb" -o hosts.json
jq -e '.workers[0].nodes == ["vm1", "vm2"] and .workers[0].rate == {"iops": 4000, "arrival": "poisson"} and
       (.specs[0].lines | map(.share)) == [70, 30] and .workers[0].data.compress == "50%"' \
    hosts.json >/dev/null || fail "hosts.vdb imported as $(cat hosts.json)"
ok "hd= hosts as nodes, the run's iorate divided among them, skew as line shares"

# The format from the content when the name does not tell.
cp "$DATA/curve.vdb" params.txt
expect_rc 0 "$IOFLEET" import params.txt -o detected.json
cmp -s <(jq -S 'del(.name)' detected.json) <(jq -S 'del(.name)' curve.json) ||
    fail "a vdbench file named params.txt did not import as vdbench"
printf 'sd=sd1,lun=/dev/sdb,openflags=o_direct\nwd=wd1,sd=sd1,hotband=(10,20)\nrd=rd1,wd=wd1,iorate=max\n' >hot.vdb
expect_rc 2 "$IOFLEET" import hot.vdb -o hot.json
expect_in "$T/err" "hot.vdb:2: error: cannot map hotband=(10,20)"
[ ! -e hot.json ] || fail "a refused import wrote its output"
expect_rc 0 "$IOFLEET" import hot.vdb -o hot.json --approximate
jq -e '.specs[0].lines[0].distribution == "zoned:0/10:100/10:0/80" and (.notes | length) == 1' hot.json >/dev/null ||
    fail "hot.vdb --approximate imported as $(cat hot.json)"
ok "the format told by the content; a parameter that cannot be exact exits 2 with FILE:LINE"

printf 'sd=sd1,lun=/dev/sdb\nwd=wd1,sd=sd1,rdpct=66.7\nrd=rd1,wd=wd1,iorate=max\n' >approx.vdb
expect_rc 2 "$IOFLEET" import approx.vdb -o approx.json
expect_in "$T/err" "approx.vdb:1: error: cannot map sd=sd1 without openflags=o_direct"
expect_rc 0 "$IOFLEET" import approx.vdb -o approx.json --approximate
jq -e '.notes == ["approx.vdb:1: note: sd=sd1 has no openflags=o_direct (buffered I/O): run with O_DIRECT (--approximate)",
                  "approx.vdb:2: note: rdpct=66.7: rounded to 67% (--approximate)"]' approx.json >/dev/null ||
    fail "the approximations are not the plan's notes: $(cat approx.json)"
expect_rc 0 "$IOFLEET" validate approx.json
expect_in "$T/out" "notes:"
ok "--approximate: each approximation printed and kept in the plan's notes"

# vdbench's $variables from --var, as from vdbench's command line.
# shellcheck disable=SC2016 # the $ is vdbench's, not the shell's
printf 'sd=sd1,lun=$lun,openflags=o_direct,threads=!qd\nwd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=max\n' >vars.vdb
expect_rc 2 "$IOFLEET" import vars.vdb -o vars.json
expect_in "$T/err" "vars.vdb:1: error: \$lun has no value: vdbench takes it from its command line (lun=VALUE); give it with --var lun=VALUE"
[ ! -e vars.json ] || fail "a refused import wrote its output"
expect_rc 0 "$IOFLEET" import vars.vdb -o vars.json --var lun=/dev/sdc --var qd=16 --var size=1g
expect_in "$T/err" "vars.vdb: warning: --var size: the file has no \$size or !size, so it is not used"
jq -e '.workers[0].targets == [{"path": "/dev/sdc"}] and .workers[0].queue_depth == 16' vars.json >/dev/null ||
    fail "vars.vdb imported as $(cat vars.json)"
expect_rc 2 "$IOFLEET" import vars.vdb --var 'l-un=x'
expect_in "$T/err" "--var takes NAME=VALUE"
printf '[j]\nrw=read\nsize=1m\n' >j.fio
expect_rc 2 "$IOFLEET" import j.fio --var a=1
expect_in "$T/err" "--var is for vdbench parameter files"
ok "--var NAME=VALUE gives \$NAME and !NAME their value; one missing is refused, one unused a warning"
