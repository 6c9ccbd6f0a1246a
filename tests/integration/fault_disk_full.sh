# SPDX-License-Identifier: Apache-2.0
# Disk full while an agent prepares its test files.
# 1. A test file larger than the free space of the agent's workdir (a 16 MiB
#    tmpfs): refused before anything is written, with a clear error naming the
#    node, the path and the free space ("needs N bytes, only M free"); no test
#    runs, no file is left, exit 1; the agent then serves the next manager.
# 2. Two test files whose sum exceeds the space while each alone fits: the
#    second is refused (by the free-space check, or by the write failing),
#    naming node and path; no partial file is left behind.
# 3. The file system fills up during the write: a file of exactly the free
#    space of an ext2 file system (1 KiB blocks, no reserve) needs indirect
#    blocks on top of its data, so the write fails with ENOSPC near the end:
#    the error names node, path and how far it got, and the partial file is
#    removed (the free space is back).
# 4. The storage under the file system runs out (thin provisioning: an ext2
#    on a loop device backed by a sparse file on a 4 MiB tmpfs): the writes
#    land in the page cache and fsync() fails: the error names node and path,
#    the file is removed and not reused by the next run.
# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck source=lib/common.bash
source "$(dirname "$0")/lib/common.bash"
# The first cleanup hook: a second INT/TERM must not cut the cleanup short.
iof_on_exit "trap '' INT TERM"
# shellcheck source=lib/cluster.bash
source "$(dirname "$0")/lib/cluster.bash"
# INT/TERM (a ctest timeout) end the script at once, so the EXIT cleanup runs.
trap 'echo "interrupted" >&2; exit 130' INT
trap 'echo "terminated" >&2; exit 143' TERM

[ "$(id -u)" = 0 ] || skip "needs root to mount a tmpfs and an ext2 file system"
for cmd in mount umount mountpoint losetup mke2fs stat python3; do
    command -v "$cmd" >/dev/null || skip "'$cmd' not installed"
done

# --- mounts and loop devices, undone in reverse order on every way out ----------------------
UNDO=()
undo_push() { UNDO+=("$1"); }
retry() { # CMD...: up to 2 s
    local i
    for ((i = 0; i < 20; i++)); do "$@" 2>/dev/null && return 0; sleep 0.1; done
    return 1
}
umount_dir() {
    mountpoint -q "$1" 2>/dev/null || return 0
    retry umount "$1" || { echo "cannot unmount $1: lazy unmount" >&2; umount -l "$1" 2>/dev/null; }
}
detach_loop() { # DEV FILE: only while DEV is still backed by FILE
    losetup -n -O BACK-FILE "$1" 2>/dev/null | grep -qF -- "$2" || return 0
    retry losetup -d "$1" || echo "cannot detach $1" >&2
}
cleanup_mounts() {
    local i
    for ((i = ${#UNDO[@]} - 1; i >= 0; i--)); do eval "${UNDO[i]}" || true; done
    UNDO=()
}
# After cluster.bash's hook (agents stopped first), before the removal of $T.
iof_on_exit cleanup_mounts

# mount_tmpfs DIR SIZE
mount_tmpfs() {
    local out
    mkdir -p "$1"
    out=$(mount -t tmpfs -o "size=$2,mode=0700" iofleet-fault "$1" 2>&1) || skip "cannot mount a tmpfs: $out"
    undo_push "umount_dir '$1'"
}
# mount_ext2 IMAGE DIR: an ext2 file system (1 KiB blocks, no root reserve)
# on a loop device over IMAGE (16 MiB, sparse), mounted on DIR.
mount_ext2() {
    local img=$1 dir=$2 dev out
    mkdir -p "$dir"
    truncate -s 16M "$img"
    dev=$(timeout 30 losetup --find --show -- "$img" 2>&1) || skip "cannot attach a loop device: $dev"
    undo_push "detach_loop '$dev' '$img'"
    out=$(mke2fs -q -F -t ext2 -m 0 -b 1024 "$dev" 2>&1) || skip "mke2fs failed: $out"
    out=$(mount -t ext2 "$dev" "$dir" 2>&1) || skip "cannot mount ext2: $out"
    undo_push "umount_dir '$dir'"
}

TMPFS=$T/tmpfs
mount_tmpfs "$TMPFS" 16m
EXT=$T/ext2
mount_ext2 "$T/ext2.img" "$EXT"
# Thin provisioning: an ext2 of 16 MiB on a loop device whose (sparse) backing
# file lives on a 4 MiB tmpfs: the file system sees free space, the storage
# under it runs out when the page cache is written back.
mount_tmpfs "$T/thin-store" 4m
THIN=$T/thin
mount_ext2 "$T/thin-store/thin.img" "$THIN"

free_bytes() { stat -f -c '%a %S' "$1" | awk '{print $1 * $2}'; }
no_tests() { ! grep -q '^== test' "$1"; }

json_check() { # FILE: finished, exit code 1, no test written
    python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["run"]
assert r["finished"] is True and r["exit_code"] == 1, r
assert r["tests_written"] == 0, r
PY
}

# --- 1. one file larger than the free space -----------------------------------------------
wd=$TMPFS/n1
mkdir -p "$wd"
cl_start_agent n1 --workdir "$wd" # a later --workdir wins over cl_start_agent's
ep=127.0.0.1:${CL_PORTS[0]}
avail=$(free_bytes "$TMPFS")
plan big.json <<'P'
{"name": "disk-full", "run": {"ramp": "0s", "duration": "1s", "interval": "500ms"},
 "specs": [{"name": "4k", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "sync", "targets": [{"path": "big.dat", "size": "32m"}]}]}
P
expect_rc 1 "$IOFLEET" run "$T/big.json" --insecure --agent "$ep" --wait 10 --json "$T/big.json.out"
cp "$T/err" "$T/1.err"
want="iofleet: agent n1 ($ep): n1: target '$wd/big.dat': needs 33554432 bytes, only $avail free in '$wd'"
grep -qF -- "$want" "$T/1.err" || {
    # The workdir may be printed as given or canonical: check the parts.
    grep -F "iofleet: agent n1 ($ep): " "$T/1.err" | grep -F "big.dat': needs 33554432 bytes, only $avail free in '" ||
        { cat "$T/1.err"; cl_fail "no clear disk-full error naming node, path and free space (wanted: $want)"; }
}
no_tests "$T/out" || cl_fail "a test ran although preparation failed"
[ ! -e "$wd/big.dat" ] || cl_fail "$wd/big.dat left behind ($(stat -c %s "$wd/big.dat") bytes)"
json_check "$T/big.json.out" || cl_fail "--json after a failed preparation"
ok "too big: $(grep -F 'needs 33554432 bytes' "$T/1.err"); exit 1, no test, no file"

# --- 2. two files, each fits, together they do not -----------------------------------------
plan two.json <<'P'
{"name": "disk-full-2", "run": {"ramp": "0s", "duration": "1s", "interval": "500ms"},
 "specs": [{"name": "4k", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "sync", "targets": [{"path": "a.dat", "size": "10m"}, {"path": "b.dat", "size": "10m"}]}]}
P
expect_rc 1 "$IOFLEET" run "$T/two.json" --insecure --agent "$ep" --wait 10
cp "$T/err" "$T/2.err"
line=$(grep -F "iofleet: agent n1 ($ep): n1: target '$wd/b.dat': " "$T/2.err") ||
    { cat "$T/2.err"; cl_fail "the error does not name node n1 and $wd/b.dat"; }
case "$line" in
*"needs 10485760 bytes, only "*" free in '"*) how="refused by the free-space check" ;;
*"write failed at "*" of 10485760 bytes: No space left on device"*) how="write failed" ;;
*) cl_fail "unexpected error: $line" ;;
esac
no_tests "$T/out" || cl_fail "a test ran although preparation failed"
[ ! -e "$wd/b.dat" ] || cl_fail "partial file $wd/b.dat left behind ($(stat -c %s "$wd/b.dat") bytes)"
# The first file is complete (reused by a later run), never partial.
if [ -e "$wd/a.dat" ]; then
    [ "$(stat -c %s "$wd/a.dat")" = 10485760 ] || cl_fail "a.dat is partial: $(stat -c %s "$wd/a.dat") bytes"
fi
ok "sum too big: second file $how: $line"
rm -f "$wd/a.dat"

# --- 3. the file system fills up during the write ------------------------------------------
wd3=$EXT/n3
mkdir -p "$wd3"
cl_start_agent n3 --workdir "$wd3"
ep3=127.0.0.1:${CL_PORTS[1]}
avail3=$(free_bytes "$EXT")
size3=$((avail3 / 4096 * 4096))
plan fill.json <<P
{"name": "disk-fills", "run": {"ramp": "0s", "duration": "1s", "interval": "500ms"},
 "specs": [{"name": "4k", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "sync", "targets": [{"path": "fill.dat", "size": $size3}]}]}
P
expect_rc 1 "$IOFLEET" run "$T/fill.json" --insecure --agent "$ep3" --wait 10
cp "$T/err" "$T/3.err"
line=$(grep -F "iofleet: agent n3 ($ep3): n3: target '$wd3/fill.dat': write failed at " "$T/3.err") ||
    { cat "$T/3.err"; cl_fail "no write error naming node n3 and $wd3/fill.dat (file of $size3 bytes, $avail3 free)"; }
at=$(sed -n "s/.*write failed at \([0-9][0-9]*\) of $size3 bytes: No space left on device.*/\1/p" <<<"$line")
[ -n "$at" ] || cl_fail "unexpected write error: $line"
if [ "$at" -le 0 ] || [ "$at" -ge "$size3" ]; then cl_fail "write failed at $at of $size3: not during the write"; fi
no_tests "$T/out" || cl_fail "a test ran although preparation failed"
[ ! -e "$wd3/fill.dat" ] || cl_fail "partial file $wd3/fill.dat left behind ($(stat -c %s "$wd3/fill.dat") bytes)"
[ "$(free_bytes "$EXT")" = "$avail3" ] || cl_fail "free space $(free_bytes "$EXT") after the failure, $avail3 before: the partial file's blocks are still used"
ok "fills up during the write: $line; partial file removed, $avail3 bytes free again"

# --- 4. the storage under the file system runs out (thin provisioning) ----------------------
# Every write() succeeds into the page cache; the final fsync() fails with
# ENOSPC. The file's data never reached the disk: it must not stay behind
# (a later run would reuse it as prepared and measure a file of holes).
wd4=$THIN/n4
mkdir -p "$wd4"
cl_start_agent n4 --workdir "$wd4"
ep4=127.0.0.1:${CL_PORTS[2]}
plan thin.json <<'P'
{"name": "thin-full", "run": {"ramp": "0s", "duration": "1s", "interval": "500ms"},
 "specs": [{"name": "4k", "lines": [{"size": "4k", "burst": 8, "delay": "1ms"}]}],
 "workers": [{"engine": "sync", "targets": [{"path": "thin.dat", "size": "12m"}]}]}
P
expect_rc 1 "$IOFLEET" run "$T/thin.json" --insecure --agent "$ep4" --wait 10
cp "$T/err" "$T/4.err"
line=$(grep -F "iofleet: agent n4 ($ep4): n4: target '$wd4/thin.dat': " "$T/4.err") ||
    { cat "$T/4.err"; cl_fail "the error does not name node n4 and $wd4/thin.dat"; }
case "$line" in
*"No space left on device"* | *"Input/output error"*) ;;
*) cl_fail "unexpected error: $line" ;;
esac
no_tests "$T/out" || cl_fail "a test ran although preparation failed"
leftover=''
if [ -e "$wd4/thin.dat" ]; then leftover=$(stat -c '%s bytes, %b blocks' "$wd4/thin.dat"); fi
cl_expect_fixed "dynamo/target.c dyn_target_prepare: when fsync() of a new test file fails ($line), the file is left behind ($wd4/thin.dat: $leftover); it is unlinked only when a write fails" \
    test -z "$leftover"
# Consequence: the next run must not take that file as prepared.
rc=0
"$IOFLEET" run "$T/thin.json" --insecure --agent "$ep4" --wait 10 >"$T/4b.out" 2>"$T/4b.err" || rc=$?
cl_expect_fixed "a test file whose fsync failed is reused by the next run as prepared: it ran a test on it (exit $rc, $(grep -c '^== test' "$T/4b.out") test(s)) instead of failing its preparation again" \
    no_tests "$T/4b.out"
rm -f "$wd4/thin.dat"
ok "thin storage full: $line"

# The agents survived and still serve.
for p in "${CL_PIDS[@]}"; do cl_alive "$p" || cl_fail "an agent died"; done
plan small.json <<'P'
{"name": "after", "run": {"ramp": "0s", "duration": "1s", "interval": "500ms"},
 "specs": [{"name": "4k", "lines": [{"size": "4k", "burst": 8, "delay": "1ms"}]}],
 "workers": [{"engine": "sync", "targets": [{"path": "s.dat", "size": "1m"}]}]}
P
expect_rc 0 "$IOFLEET" run "$T/small.json" --insecure --agent "$ep" --agent "$ep3" --wait 10
[ "$(cl_rows "$T/out" NODE)" = 2 ] || cl_fail "the agents did not run a test after the failures"
rm -f "$wd/s.dat" "$wd3/s.dat"
ok "both agents ran a test after the failed preparations"
cl_done
