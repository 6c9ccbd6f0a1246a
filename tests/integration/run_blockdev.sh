# SPDX-License-Identifier: Apache-2.0
# libaio with O_DIRECT on real block devices: loop devices backed by /dev/shm.
source "$(dirname "$0")/lib/common.bash"

[ "$(id -u)" = 0 ] || skip "needs root to attach loop devices"
command -v losetup >/dev/null || skip "losetup not installed (util-linux)"
iof_shm it
iof_loop loop "$shm/a.img" 64M
iof_loop loop4k "$shm/b.img" 16M --sector-size 4096

# A 2 s window after a 1 s ramp: beside the CI's busy loops one loop device
# once completed none of its 32 I/Os in a window of 1 s while the other did
# 64 (80 ms each); the check is that every target is driven, not how fast.
plan dev.json <<P
{"name": "dev", "run": {"ramp": "1s", "duration": "2s", "interval": "500ms"},
 "specs": [{"name": "4k 70/30 random", "lines": [{"size": "4k", "read": 70, "random": 100}]}],
 "workers": [{"count": 2, "engine": "libaio", "queue_depth": 16,
              "targets": [{"path": "$loop"}, {"path": "$loop4k", "range": {"offset": "1m", "size": "8m"}}]}]}
P
expect_rc 0 "$IOFLEET" run "$T/dev.json" --workdir "$T/w" --quiet --rows target
for t in "local/w0:$loop" "local/w0:$loop4k" "local/w1:$loop" "local/w1:$loop4k"; do
    grep -qF "TARGET  $t" "$T/out" || fail "no TARGET row for $t"
done
bad=$(awk '$1=="TARGET" && ($3 <= 0 || $12 != 0)' "$T/out")
[ -z "$bad" ] || fail "a target did no I/O or had errors:
$bad
$(cat "$T/out" "$T/err")"
ok "libaio on $loop and $loop4k: $(row_field "$T/out" ALL 3) IOPS"

# 512-byte I/O on a 4k-sector device cannot be done with O_DIRECT: clear error.
plan misfit.json <<P
{"name": "misfit", "run": {"ramp": "1s", "duration": "1s"},
 "specs": [{"name": "512b", "lines": [{"size": 512}]}],
 "workers": [{"engine": "libaio", "targets": [{"path": "$loop4k"}]}]}
P
expect_rc 1 "$IOFLEET" run "$T/misfit.json" --workdir "$T/w"
expect_in "$T/err" "not a multiple of the target's logical block size 4096"
ok "O_DIRECT misfit refused with the block size named"

# A size on a device limits the part used; more than the device has is refused.
plan sized.json <<P
{"name": "sized", "run": {"ramp": "1s", "duration": "1s"},
 "specs": [{"name": "r", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "libaio", "targets": [{"path": "$loop", "size": "200m"}]}]}
P
expect_rc 1 "$IOFLEET" run "$T/sized.json" --workdir "$T/w" --quiet
expect_in "$T/err" "target '$loop': size 209715200 exceeds its actual size of 67108864 bytes"
sed -i 's/"200m"/"8m"/' "$T/sized.json"
expect_rc 0 "$IOFLEET" run "$T/sized.json" --workdir "$T/w" --quiet
ok "a size on a device limits the region and is checked against the device"

# A mounted device is never written, and the refusal names it; reads are fine.
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 not installed (e2fsprogs)"
truncate -s 32M "$shm/m.img"
loopm=$(losetup --find --show "$shm/m.img")
# No lazy initialisation: nothing may write to the image behind our back.
mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 "$loopm"
mkdir -p "$T/mnt"
mount "$loopm" "$T/mnt"
iof_on_exit "umount '$T/mnt'; losetup -d $loopm"
before=$(md5sum "$shm/m.img" | cut -d' ' -f1)
plan mounted.json <<P
{"name": "mounted", "run": {"ramp": "1s", "duration": "1s"},
 "specs": [{"name": "write", "lines": [{"size": "4k", "read": 0}]}],
 "workers": [{"engine": "libaio", "targets": [{"path": "$loopm"}]}]}
P
expect_rc 1 "$IOFLEET" run "$T/mounted.json" --workdir "$T/w" --quiet
expect_in "$T/err" "target '$loopm': refusing to write: the device is in use"
expect_in "$T/out" "no results"
sync
[ "$(md5sum "$shm/m.img" | cut -d' ' -f1)" = "$before" ] || fail "the mounted device was modified"
sed -i 's/"read": 0/"read": 100/' "$T/mounted.json"
expect_rc 0 "$IOFLEET" run "$T/mounted.json" --workdir "$T/w" --quiet
ok "mounted $loopm refused for writes, read-only run allowed"
