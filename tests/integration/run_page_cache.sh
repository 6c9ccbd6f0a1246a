# SPDX-License-Identifier: Apache-2.0
# The agent's own buffered reads and writes (the inventory's probe, the
# device guard's checks, the marker, a test file's fill) leave nothing in the
# page cache of what it tests. A block device keeps such pages until its last
# close; while they are there every O_DIRECT read flushes the range first and
# every O_DIRECT write invalidates it, a cost fio does not pay.
source "$(dirname "$0")/lib/common.bash"

[ "$(id -u)" = 0 ] || skip "needs root to attach loop devices"
command -v losetup >/dev/null || skip "losetup not installed (util-linux)"
iof_shm cache
iof_loop loop "$shm/a.img" 64M
name=${loop#/dev/}
# Held open here, as the test's own descriptor holds it during a run, so that
# the agent's last close does not drop the device's pages for it.
exec 9<"$loop"

ios() { awk -v d="$name" '$3 == d { print $4 + $8 }' /proc/diskstats; }
cached() { "$IOF_BIN/iof_cached" "$1" || fail "iof_cached $1 failed"; }

# cached_during PLAN WHAT: runs PLAN; once the workers' I/O is under way
# (2,000 I/Os on the device past what it had done), none of the device's
# pages may be cached, nor after the run.
cached_during() {
    local base pid n t=0
    base=$(ios)
    "$IOFLEET" run "$T/$1" --workdir "$T/w" --quiet >"$T/out" 2>"$T/err" &
    pid=$!
    iof_on_exit "kill $pid 2>/dev/null"
    while (($(ios) < base + 2000)) && kill -0 "$pid" 2>/dev/null; do
        ((t++ < 600)) || fail "$2: no I/O on $loop in 60 s"
        sleep 0.1
    done
    n=$(cached "$loop")
    wait "$pid" || fail "$2: iofleet run failed: $(cat "$T/err")"
    [ "$n" = 0 ] || fail "$2: $n pages of $loop were cached during the test"
    n=$(cached "$loop")
    [ "$n" = 0 ] || fail "$2: $n pages of $loop were cached after the run"
}

for rw in read:100 write:0; do
    plan "${rw%:*}.json" <<P
{"name": "${rw%:*}", "run": {"ramp": "0s", "duration": "3s"},
 "specs": [{"name": "4k random", "lines": [{"size": "4k", "read": ${rw#*:}, "random": 100}]}],
 "workers": [{"engine": "libaio", "queue_depth": 8, "targets": [{"path": "$loop"}]}]}
P
done
# Blank, then marked by the write test: the inventory's probe, the guard's
# reads of both ends and of every place a partition may start, and the marker.
cached_during read.json "a read test on a blank device"
cached_during write.json "a write test on a blank device"
cached_during write.json "a write test on a marked device"
cached_during read.json "a read test on a marked device"
ok "no page of $loop cached during or after read and write tests"

# A test file the agent fills through the page cache: its pages are dropped
# once the fill is on the device (not on tmpfs, where the cache is the file).
[ "$(stat -f -c %T "$T")" != tmpfs ] || skip "the workdir $T is on tmpfs"
plan file.json <<P
{"name": "file", "run": {"ramp": "0s", "duration": "1s"},
 "specs": [{"name": "4k random read", "lines": [{"size": "4k", "read": 100, "random": 100}]}],
 "workers": [{"engine": "libaio", "queue_depth": 8, "targets": [{"path": "t.dat", "size": "32m"}]}]}
P
expect_rc 0 "$IOFLEET" run "$T/file.json" --workdir "$T/w" --quiet
n=$(cached "$T/w/t.dat")
[ "$n" = 0 ] || fail "$n pages of the filled test file t.dat stayed cached"
# Read through the cache by something else, then reused as it is.
cat "$T/w/t.dat" >/dev/null
n=$(cached "$T/w/t.dat")
[ "$n" -gt 0 ] || fail "reading t.dat through the page cache left no page there to drop"
expect_rc 0 "$IOFLEET" run "$T/file.json" --workdir "$T/w" --quiet
n=$(cached "$T/w/t.dat")
[ "$n" = 0 ] || fail "$n pages of the reused test file t.dat stayed cached"
ok "the filled test file t.dat left no page cached, nor did it when reused"
