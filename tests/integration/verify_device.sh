# SPDX-License-Identifier: Apache-2.0
# Verify on a whole block device: a write test with "verify" ends with
# iofleet's marker stamped over the device's first and last 512 bytes
# (dynamo/devguard.h); the verified range leaves those sectors out, so the
# read test that follows finds every block as written - no `torn` last
# block, exit 0 - and the first block of the range is checked: one byte
# changed in it is reported there, exit 1. (With the marker inside the
# range, the last block read back torn in every run and the first lost its
# header, so a change in it passed unseen.)
source "$(dirname "$0")/lib/common.bash"

[ "$(id -u)" = 0 ] || skip "needs root to attach loop devices"
command -v losetup >/dev/null || skip "losetup not installed (util-linux)"
command -v python3 >/dev/null || skip "python3 not installed"
iof_shm vdev
img=$shm/v.img
iof_loop dev "$img" 32M

iof_start_agent vd --allow "$dev"

# mkplan NAME SPECS_JSON
mkplan() {
    plan "$1.json" <<P
{"name": "$1", "run": {"ramp": "0s", "duration": "2s", "interval": "1s"},
 "specs": $2,
 "workers": [{"count": 1, "engine": "libaio", "queue_depth": 4,
              "targets": [{"path": "$dev"}], "verify": "xxh64"}]}
P
}
mkplan wr '[{"name": "write", "lines": [{"size": "4k", "read": 0, "random": 0}]},
            {"name": "read", "lines": [{"size": "4k", "read": 100, "random": 0}]}]'
mkplan rd '[{"name": "read", "lines": [{"size": "4k", "read": 100, "random": 0}]}]'

# verify_errors JSON: "SPEC VERIFY_ERRORS READ_IOS WRITE_IOS" per test (ALL row).
verify_errors() {
    python3 - "$1" <<'PY'
import json, sys
for t in json.load(open(sys.argv[1]))["tests"]:
    row = next(r for r in t["results"] if r["row_type"] == "ALL")
    print(t["spec"], row["verify_errors"], row["read_ios"], row["write_ios"])
PY
}

rc=0
"$IOFLEET" run "$T/wr.json" --agent "$AGENT_EP" --insecure --quiet --json "$T/wr.r.json" \
    >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 0 ] || { cat "$T/err"; fail "write then read with verify on $dev exited $rc, expected 0"; }
verify_errors "$T/wr.r.json" | tee "$T/ve"
awk '$2 != 0 { exit 1 }' "$T/ve" || fail "verify errors on a device nothing else wrote: $(cat "$T/ve")"
awk '$1 == "write" && $4 > 0 { w = 1 } $1 == "read" && $3 > 0 { r = 1 } END { exit !(w && r) }' "$T/ve" ||
    fail "the write or the read test did no I/O: $(cat "$T/ve")"
ok "write with verify, then verify read, on a whole device: no verify error, exit 0"

# The range the agent verified (its log names it when it left the marker out;
# without that line, the whole device).
start=$(sed -n "s/.*target '$(printf %s "$dev" | sed 's/[\/.]/\\&/g')': verify leaves iofleet's marker out: bytes \([0-9]*\)\.\..*/\1/p" \
    "$T/vd.log" | head -1)
start=${start:-0}
echo "verified range starts at byte $start of $dev"

# One byte of the first block's payload inverted, in the file behind the loop
# device (the agent reads with O_DIRECT: no cache of the device in between).
at=$((start + 600))
old=$(od -An -tu1 -j "$at" -N1 "$img" | tr -d ' ')
printf '%b' "\\$(printf %03o $((old ^ 0xff)))" | dd of="$img" bs=1 seek="$at" conv=notrunc status=none
rc=0
"$IOFLEET" run "$T/rd.json" --agent "$AGENT_EP" --insecure --quiet --json "$T/rd.r.json" \
    >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 1 ] || { cat "$T/err"; fail "a changed byte in the first block (offset $start) of the range went unseen (exit $rc)"; }
expect_in "$T/err" "target '$dev' offset $start: corrupt"
ok "the first block of the range (offset $start) is checked: a changed byte in it is reported"
