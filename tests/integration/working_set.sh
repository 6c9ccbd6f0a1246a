# SPDX-License-Identifier: Apache-2.0
# Working set and target templates end to end: "vmdk{0..3}.dat" runs four
# test files (validate lists them, the run has one TARGET row each), and a
# percentage range is resolved on the node against the size it finds (an
# existing file with no size in the plan), aligned down to 512 bytes.
source "$(dirname "$0")/lib/common.bash"

RUNOPTS=(--rows target --set run.duration=200ms --set run.ramp=0s --set run.interval=100ms
    --workdir "$T/w" --quiet)

plan tpl.json <<'P'
{"name": "templates",
 "run": {"ramp": "0s", "duration": "1s"},
 "specs": [{"name": "4k random read", "lines": [{"size": "4k", "read": 100, "random": 100}]}],
 "workers": [{"engine": "null", "targets": [
     {"path": "vmdk{0..3}.dat", "size": "1m", "range": {"offset": "0%", "size": "10%"}}]}]}
P
expect_rc 0 "$IOFLEET" validate "$T/tpl.json"
for i in 0 1 2 3; do
    expect_in "$T/out" "target 'vmdk$i.dat' size 1m range offset 0% size 10%"
done
expect_rc 0 "$IOFLEET" run "$T/tpl.json" "${RUNOPTS[@]}"
n=$(awk '$1=="TARGET"' "$T/out" | wc -l)
[ "$n" = 4 ] || { cat "$T/out"; fail "want 4 TARGET rows, got $n"; }
for i in 0 1 2 3; do
    grep -q "^TARGET .*vmdk$i.dat" "$T/out" || { cat "$T/out"; fail "no TARGET row for vmdk$i.dat"; }
done
ok "vmdk{0..3}.dat: validate lists 4 targets, the run reports 4 TARGET rows"

# 1% of a 1 MiB file (no size in the plan) is 10485 bytes, 10240 once
# aligned: a 16k transfer does not fit, an 8k one does.
head -c 1048576 /dev/zero >"$T/disk.bin"
plan pct.json <<P
{"name": "pct", "run": {"ramp": "0s", "duration": "1s"},
 "specs": [{"name": "s", "lines": [{"size": "16k"}]}],
 "workers": [{"engine": "sync", "targets": [{"path": "$T/disk.bin", "range": {"offset": "50%", "size": "1%"}}]}]}
P
expect_rc 1 "$IOFLEET" run "$T/pct.json" --workdir "$T/w"
expect_in "$T/err" "target '$T/disk.bin': spec 's' line 0: transfer size 16384 exceeds the target range of 10240 bytes"
jq '.specs[0].lines[0].size = "8k"' "$T/pct.json" >"$T/pct8.json"
expect_rc 0 "$IOFLEET" run "$T/pct8.json" "${RUNOPTS[@]}"
ok "range 1% of an existing 1 MiB file resolves on the node to 10240 bytes"

# Too large an offset for what the node finds: refused there, named.
plan far.json <<P
{"name": "far", "run": {"ramp": "0s", "duration": "1s"},
 "specs": [{"name": "s", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "sync", "targets": [{"path": "$T/disk.bin", "range": {"offset": "99%", "size": "5%"}}]}]}
P
expect_rc 2 "$IOFLEET" run "$T/far.json" --workdir "$T/w"
expect_in "$T/err" "far.json: workers[0].targets[0].range: offset 99% + size 5% is more than 100% of the target"
ok "percentages over 100% refused by the plan check"
