# SPDX-License-Identifier: Apache-2.0
# iofleet run --allow-destructive reaches the local agent: a loop device with
# an ext4 signature is refused for writes by a local run without it (nothing
# written), and written with it. Root only (loop device, mkfs.ext4).
source "$(dirname "$0")/lib/common.bash"

if [ "$(id -u)" != 0 ] || ! command -v mkfs.ext4 >/dev/null || ! command -v losetup >/dev/null; then
    skip "needs root, losetup and mkfs.ext4 (a loop device with a filesystem signature)"
fi
iof_shm clid
iof_loop loop "$shm/fs.img" 32M
mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 "$loop"
sync
sum_fs=$(md5sum <"$shm/fs.img")
plan w.json <<P
{"name": "localw", "run": {"ramp": "1s", "duration": "1s"},
 "specs": [{"name": "w", "lines": [{"size": "4k", "read": 0}]}],
 "workers": [{"engine": "libaio", "targets": [{"path": "$loop"}]}]}
P

expect_rc 1 "$IOFLEET" run "$T/w.json" --workdir "$T/w" --quiet
expect_in "$T/err" "target '$loop': refusing to write: it holds a signature (ext4)"
sync
[ "$(md5sum <"$shm/fs.img")" = "$sum_fs" ] || fail "the ext4 device was written without --allow-destructive"
ok "local run without --allow-destructive: the ext4 loop device is refused, unchanged"

expect_rc 0 "$IOFLEET" run "$T/w.json" --workdir "$T/w" --quiet --allow-destructive
awk '$1=="ALL" { exit !($5 > 0) }' "$T/out" || { cat "$T/out"; fail "no writes with --allow-destructive"; }
ok "iofleet run --allow-destructive: the local agent writes the device"
