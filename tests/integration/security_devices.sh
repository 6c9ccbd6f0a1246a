# SPDX-License-Identifier: Apache-2.0
# Security (issue 17, "Devices: hold what you write"), on loop devices
# backed by /dev/shm files:
#   1. a device written by a test is held exclusively for the whole test:
#      mkfs.ext4 of it during the test fails (EBUSY), and works afterwards
#   2. the marker: a device the agent wrote is written again without
#      --allow-destructive; one whose first or last MiB holds data without
#      the marker is refused; one written only between its ends (a range
#      off both ends) is marked too, so later write tests run on it
#   3. signatures libblkid finds only when asked properly: GPT with a zeroed
#      protective MBR, a backup GPT alone, an ext4 superblock at 1 MiB after
#      the partition table was wiped; with both ends zero, an ext4 at 32 MiB,
#      a swap area at 48 MiB and data libblkid does not know at 40 MiB:
#      refused, device untouched
#   4. an --allow link (as /dev/disk/by-id/...) is re-resolved at each plan:
#      re-pointed to another device, the old one is no longer allowed
source "$(dirname "$0")/lib/cluster.bash"

[ "$(id -u)" = 0 ] || skip "needs root to attach loop devices"
command -v losetup >/dev/null || skip "losetup not installed (util-linux)"
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 not installed (e2fsprogs)"

MIB=1048576
iof_shm dev
iof_loop loop "$shm/d.img" 64M

start_agent() { # start_agent NAME [ARGS...]: sets AGENT_EP, AGENT_PID
    local name=$1
    shift
    iof_start_agent "$name" --name "$name" "$@"
}

write_plan() { # write_plan FILE TARGET DURATION
    plan "$1" <<P
{"name": "dev", "run": {"duration": "$3", "interval": "500ms"},
 "specs": [{"name": "w", "lines": [{"size": "4k", "read": 0, "random": 100}]}],
 "workers": [{"engine": "libaio", "queue_depth": 4, "targets": [{"path": "$2"}]}]}
P
}

# put DEV OFFSET_BYTES [COUNT_BYTES] [SRC]: writes COUNT bytes (default 4 KiB)
# of SRC (default /dev/urandom) at OFFSET, synced (multiples of 512).
put() {
    dd if="${4:-/dev/urandom}" of="$1" bs=512 seek=$(($2 / 512)) count=$((${3:-4096} / 512)) \
        iflag=fullblock oflag=direct conv=notrunc,fsync status=none
}
blank() {
    dd if=/dev/zero of="$1" bs=1M count=$(($(blockdev --getsize64 "$1") / MIB)) \
        oflag=direct conv=notrunc,fsync status=none
}
sum() { sync; md5sum <"$1"; }
# released DEV: waits (5 s at most) until the agent has let go of DEV: it
# does right after sending its result, so the manager may be gone first.
# (One descriptor stays: the O_PATH one of its --allow entry.)
released() {
    local i
    for i in $(seq 100); do
        [ "$(ls -l "/proc/$AGENT_PID/fd" 2>/dev/null | grep -c " $1\$")" -le 1 ] && return 0
        sleep 0.05
    done
    fail "the agent still holds $1 5 s after its test"
}
wrote() { awk '$1=="ALL" { exit !($5 > 0) }' "$T/out"; } # the ALL row shows write IOPS

# --- 1. held for the whole test ---------------------------------------------------
blank "$loop"
write_plan hold.json "$loop" 4s
start_agent hold --allow "$loop"
cl_spawn run_pid "$T/out" "$T/err" "$IOFLEET" run "$T/hold.json" --insecure --agent "$AGENT_EP" --quiet --wait 5
# The test is writing once the blank device is no longer blank.
for _ in $(seq 300); do
    cmp -s -n $((64 * MIB)) "$shm/d.img" /dev/zero || break
    cl_alive "$run_pid" || break
    sleep 0.05
done
cmp -s -n $((64 * MIB)) "$shm/d.img" /dev/zero && fail "the write test never wrote $loop"
mkfs_rc=0
mkfs.ext4 -q -F "$loop" >"$T/mkfs.out" 2>&1 || mkfs_rc=$?
cl_wait_exit "$run_pid" 60 rc
[ "$mkfs_rc" != 0 ] || fail "mkfs.ext4 $loop succeeded while a write test held it"
grep -q "in use" "$T/mkfs.out" || { cat "$T/mkfs.out"; fail "mkfs.ext4 failed, but not because $loop was in use"; }
[ "$rc" = 0 ] || { cat "$T/err"; fail "the write test exited $rc"; }
wrote || fail "no writes reported"
released "$loop"
mkfs.ext4 -q -F "$loop" || fail "mkfs.ext4 $loop fails after the test"
ok "a written device is held exclusively for the test: mkfs.ext4 refused during it ($(head -n1 "$T/mkfs.out")), fine after"
# Two worker groups writing the same device share the one claim.
blank "$loop"
plan two.json <<P
{"name": "two", "run": {"duration": "1s", "interval": "500ms"},
 "specs": [{"name": "w", "lines": [{"size": "4k", "read": 0}]}],
 "workers": [{"engine": "libaio", "targets": [{"path": "$loop", "range": {"offset": 0, "size": "32m"}}]},
             {"engine": "sync", "targets": [{"path": "$loop", "range": {"offset": "32m", "size": "32m"}}]}]}
P
expect_rc 0 "$IOFLEET" run "$T/two.json" --insecure --agent "$AGENT_EP" --quiet --wait 5 --rows worker
[ "$(awk '$1=="WORKER" && $5 > 0 { n++ } END { print n + 0 }' "$T/out")" = 2 ] ||
    { cat "$T/out"; fail "both groups should have written $loop"; }
released "$loop"
ok "two worker groups on one device share its claim"

# --- 2. the marker ---------------------------------------------------------------------
blank "$loop"
write_plan mark.json "$loop" 1s
start_agent mark --allow "$loop"
expect_rc 0 "$IOFLEET" run "$T/mark.json" --insecure --agent "$AGENT_EP" --quiet --wait 5
released "$loop"
size=$(blockdev --getsize64 "$loop")
sync
[ "$(head -c 16 "$shm/d.img")" = IOFLEET-TESTDATA ] || fail "no marker at the start of $loop"
[ "$(tail -c 512 "$shm/d.img" | head -c 16)" = IOFLEET-TESTDATA ] || fail "no marker at the end of $loop"
expect_rc 0 "$IOFLEET" run "$T/mark.json" --insecure --agent "$AGENT_EP" --quiet --wait 5
wrote || fail "no writes on the second run"
released "$loop"
ok "a device the agent wrote carries its marker at both ends and is written again without --allow-destructive"
# Something else overwrote the start (the marker with it): refused.
put "$loop" 0
before=$(sum "$shm/d.img")
expect_rc 1 "$IOFLEET" run "$T/mark.json" --insecure --agent "$AGENT_EP" --quiet --wait 5
expect_in "$T/err" "target '$loop': refusing to write: its first or last MiB holds data and no iofleet marker"
[ "$(sum "$shm/d.img")" = "$before" ] || fail "$loop was written without its marker"
# A blank device but for data in its last MiB: refused.
blank "$loop"
put "$loop" $((size - 64 * 1024))
before=$(sum "$shm/d.img")
expect_rc 1 "$IOFLEET" run "$T/mark.json" --insecure --agent "$AGENT_EP" --quiet --wait 5
expect_in "$T/err" "its first or last MiB holds data and no iofleet marker"
[ "$(sum "$shm/d.img")" = "$before" ] || fail "$loop with data in its last MiB was written"
start_agent bold --allow "$loop" --allow-destructive
expect_rc 0 "$IOFLEET" run "$T/mark.json" --insecure --agent "$AGENT_EP" --quiet --wait 5
released "$loop" # its marker is stamped at the release: not after the blanking below
ok "data at either end without the marker is refused unless --allow-destructive"
# A blank device written only between its ends (a range from 8 MiB, every
# MiB of which the next test's scan reads): the marker is stamped all the
# same, so the plan's second write test, and later plans, are not refused
# for iofleet's own data.
blank "$loop"
plan middle.json <<P
{"name": "middle", "run": {"duration": "1s", "interval": "500ms"},
 "specs": [{"name": "w1", "lines": [{"size": "4k", "read": 0, "random": 0}]},
           {"name": "w2", "lines": [{"size": "4k", "read": 0, "random": 100}]}],
 "workers": [{"engine": "libaio", "queue_depth": 4,
              "targets": [{"path": "$loop", "range": {"offset": "8m", "size": "8m"}}]}]}
P
start_agent middle --allow "$loop"
expect_rc 0 "$IOFLEET" run "$T/middle.json" --insecure --agent "$AGENT_EP" --quiet --wait 5
[ "$(awk '$1=="ALL" && $5 > 0 { n++ } END { print n + 0 }' "$T/out")" = 2 ] ||
    { cat "$T/out"; fail "both write tests should have written $loop"; }
released "$loop"
sync
cmp -s -n $((MIB - 512)) -i 512 "$shm/d.img" /dev/zero ||
    fail "the tests wrote the first MiB of $loop: the range should avoid it"
cmp -s -n $((MIB - 512)) -i $((size - MIB)) "$shm/d.img" /dev/zero ||
    fail "the tests wrote the last MiB of $loop: the range should avoid it"
cmp -s -n 4096 -i $((8 * MIB)) "$shm/d.img" /dev/zero && fail "nothing written at 8 MiB of $loop"
[ "$(head -c 16 "$shm/d.img")" = IOFLEET-TESTDATA ] || fail "no marker at the start of $loop written only in its middle"
[ "$(tail -c 512 "$shm/d.img" | head -c 16)" = IOFLEET-TESTDATA ] || fail "no marker at the end of $loop written only in its middle"
expect_rc 0 "$IOFLEET" run "$T/middle.json" --insecure --agent "$AGENT_EP" --quiet --wait 5
released "$loop"
ok "a blank device written only between its ends is marked: the plan's second write test and the next plan run without --allow-destructive"

# --- 3. signatures ------------------------------------------------------------------------
# expect_refused WHAT MESSAGE: a write plan on $loop is refused with MESSAGE
# and leaves it as it was.
expect_refused() {
    local before
    before=$(sum "$shm/d.img")
    start_agent "sig$((++nsig))" --allow "$loop"
    expect_rc 1 "$IOFLEET" run "$T/mark.json" --insecure --agent "$AGENT_EP" --quiet --wait 5
    expect_in "$T/err" "target '$loop': refusing to write: $2"
    [ "$(sum "$shm/d.img")" = "$before" ] || fail "$1: $loop was written"
    ok "$1: refused ($2)"
}
nsig=0
if command -v sfdisk >/dev/null; then
    gpt() { blank "$loop" && printf 'label: gpt\nstart=2048, size=16384\n' | sfdisk -q --no-reread "$loop" >/dev/null; }
    gpt
    put "$loop" 0 512 /dev/zero # protective MBR gone, primary and backup GPT intact
    expect_refused "GPT with a zeroed protective MBR" "it holds a partition table (gpt)"
    gpt
    put "$loop" 0 "$MIB" /dev/zero # MBR, primary header and entries gone: only the backup
    expect_refused "backup GPT only" "it holds a partition table (gpt)"
else
    echo "SKIP GPT cases: sfdisk not installed (fdisk)"
fi
blank "$loop"
truncate -s 16M "$shm/fs.img"
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$shm/fs.img"
dd if="$shm/fs.img" of="$loop" bs=1M seek=1 oflag=direct conv=notrunc,fsync status=none
expect_refused "ext4 at 1 MiB, partition table wiped" "it holds a signature (ext4) at byte 1048576"
# Deeper in, with both ends zero: the ext4 of a partition at 32 MiB (not one
# of the old fixed offsets), a swap area at 48 MiB, data libblkid does not
# know at 40 MiB.
blank "$loop"
dd if="$shm/fs.img" of="$loop" bs=1M seek=32 oflag=direct conv=notrunc,fsync status=none
cmp -s -n "$MIB" "$shm/d.img" /dev/zero && cmp -s -n "$MIB" -i $((63 * MIB)) "$shm/d.img" /dev/zero ||
    fail "the ext4 at 32 MiB reached an end of $loop"
expect_refused "ext4 at 32 MiB, both ends zero" "it holds a signature (ext4) at byte 33554432"
blank "$loop"
truncate -s 8M "$shm/swap.img"
mkswap -q "$shm/swap.img" >/dev/null
dd if="$shm/swap.img" of="$loop" bs=1M seek=48 oflag=direct conv=notrunc,fsync status=none
expect_refused "swap at 48 MiB" "it holds a signature (swap) at byte 50331648"
blank "$loop"
put "$loop" $((40 * MIB + 8192))
expect_refused "data without a signature at 40 MiB" "it holds data at byte 41943040 (where a partition may start) and no iofleet marker"

# --- 4. an --allow link re-resolved at each plan ----------------------------------------
truncate -s 8M "$shm/b.img"
loopb=$(losetup --find --show "$shm/b.img") || fail "cannot attach a second loop device"
iof_on_exit "losetup -d $loopb"
blank "$loop"
mkdir -p "$T/by-id"
ln -s "$loop" "$T/by-id/disk"
start_agent byid --allow "$T/by-id/disk"
write_plan a.json "$loop" 1s
write_plan b.json "$loopb" 1s
expect_rc 0 "$IOFLEET" run "$T/a.json" --insecure --agent "$AGENT_EP" --quiet --wait 5
released "$loop"
ln -sfn "$loopb" "$T/by-id/disk" # the disk is now known by another device
before=$(sum "$shm/d.img")
expect_rc 1 "$IOFLEET" run "$T/a.json" --insecure --agent "$AGENT_EP" --quiet --wait 5
expect_in "$T/err" "target '$loop': block device"
expect_in "$T/err" "is not one this agent's --allow names"
[ "$(sum "$shm/d.img")" = "$before" ] || fail "$loop was written after the --allow link left it"
expect_rc 0 "$IOFLEET" run "$T/b.json" --insecure --agent "$AGENT_EP" --quiet --wait 5
ok "an --allow link follows its device at each plan ($loop refused once the link names $loopb)"
