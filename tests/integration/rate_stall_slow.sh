# SPDX-License-Identifier: Apache-2.0
# A rated worker on a device that stalls (issue 11, "no coordinated
# omission"): a loop device over the FUSE file of lib/stallfs.py (as in
# security_stuck.sh) hangs for 2 s in the middle of a 6 s test at 50 IOPS,
# QD 4. The I/Os that fell due during the stall wait for it: the latency from
# the scheduled time grows (mean and p99), about 100 I/Os start late, and the
# offered load is still the rate - while the service latency (from the actual
# submission) grows only by the few I/Os the stall caught in flight.
# Needs root, /dev/fuse, losetup, fusermount and python3-fuse (scripts/deps).
# Labelled slow: the FUSE device's own speed on a loaded machine varies.
source "$(dirname "$0")/lib/common.bash"

if [ "$(id -u)" != 0 ] || [ ! -c /dev/fuse ] || ! command -v losetup >/dev/null ||
    ! command -v fusermount >/dev/null || ! /usr/bin/python3 -c 'import fuse' 2>/dev/null; then
    skip "needs root, /dev/fuse, losetup, fusermount and python3-fuse (scripts/deps)"
fi
mnt=$T/fuse stall=$T/STALL
mkdir -p "$mnt"
/usr/bin/python3 "$IOF_SRC/tests/integration/lib/stallfs.py" "$mnt" -f \
    -o "direct_io,size=$((64 << 20)),stall=$stall" 2>"$T/stallfs.log" &
fspid=$!
loop='' AGENT_PID=''
# Cleanup, first of all (an agent waiting on the hung device cannot exit):
# the device comes back, the agent goes, the loop device is detached, and
# last the file system is unmounted.
stall_cleanup() {
    rm -f "$stall"
    [ -z "$AGENT_PID" ] || { kill "$AGENT_PID" 2>/dev/null; wait "$AGENT_PID" 2>/dev/null; }
    [ -z "$loop" ] || losetup -d "$loop"
    fusermount -u "$mnt" 2>/dev/null
    kill "$fspid" 2>/dev/null
}
iof_cleanup_hooks=(stall_cleanup "${iof_cleanup_hooks[@]}")
for ((i = 0; i < 100; i++)); do [ -e "$mnt/disk.img" ] && break; sleep 0.05; done
[ -e "$mnt/disk.img" ] || { cat "$T/stallfs.log" >&2; skip "the FUSE filesystem did not mount"; }
loop=$(losetup --find --show "$mnt/disk.img") || skip "no loop device"
iof_start_agent st --name st --allow "$loop"

plan stall.json <<P
{"name": "stall", "run": {"ramp": "1s", "duration": "6s", "interval": "1s"},
 "specs": [{"name": "4k read", "lines": [{"size": "4k", "read": 100, "random": 100}]}],
 "workers": [{"engine": "libaio", "queue_depth": 4, "targets": [{"path": "$loop"}],
              "rate": {"iops": 50}}]}
P
"$IOFLEET" run "$T/stall.json" --insecure --agent "$AGENT_EP" --csv "$T/stall.csv" \
    --timeseries "$T/stall.ts" >"$T/out" 2>"$T/err" &
mgr=$!
sleep 3.5 # ramp 1 s + 2.5 s: the middle of the window
touch "$stall"
sleep 2
rm -f "$stall"
rc=0
wait "$mgr" || rc=$?
[ "$rc" = 0 ] || { cat "$T/out" "$T/err"; fail "the run exited $rc"; }
python3 - "$T/stall.csv" <<'PY' || { cat "$T/out"; fail "stalled device"; }
import csv, sys
r = [x for x in csv.DictReader(open(sys.argv[1])) if x["row_type"] == "ALL"][0]
lat, svc = float(r["avg_lat_ms"]), float(r["avg_svc_lat_ms"])
p99, late = float(r["p99_lat_ms"]), int(r["late_ios"])
n = int(r["read_ios"]) + int(r["write_ios"])
print(f"{n} I/Os ({float(r['iops']):.1f} IOPS): latency from the scheduled time avg {lat:.1f} ms, "
      f"p99 {p99:.1f} ms; service latency avg {svc:.2f} ms; {late} late by > 1 ms")
# About 100 I/Os fell due during the 2 s stall and waited for it (a python
# FUSE device on a loaded machine is slow: 50 IOPS is well within it).
assert late >= 50, ("late I/Os", late)
assert p99 >= 500, ("p99 from the scheduled time should show the stall", p99)
# The mean from the scheduled time is dominated by the queued I/Os; the
# service mean only by the 4 caught in flight (4 x 2 s over ~300 I/Os).
assert lat >= 5 * svc, ("scheduled vs service latency", lat, svc)
# The offered load stayed the rate: the I/Os due in the stall ran after it.
assert float(r["iops"]) >= 0.9 * 50, r["iops"]
PY
ok "a stall shows in the latency from the scheduled time and the late count, not in the service latency"
