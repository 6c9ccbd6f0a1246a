# SPDX-License-Identifier: Apache-2.0
# The io_uring engine through the real binaries (iofleet and its local dynamo):
# a test file and, as root, a loop device backed by /dev/shm. Little's law from
# the CSV (IOPS x mean latency >= 0.9 x QD at QD 16) shows the engine keeps the
# configured depth in flight, a correctness property that holds on any machine.
# An agent whose kernel has no io_uring (seccomp makes io_uring_setup fail)
# refuses the plan at prepare, naming the node, the engine and the reason.
source "$(dirname "$0")/lib/common.bash"

command -v jq >/dev/null || skip "jq not installed"
if ! "$IOF_BIN/iof_no_uring" ENOSYS true 2>/dev/null; then
    skip "seccomp filters unavailable"
fi

# qd16 PATH [SIZE]: a 4k random-read plan at QD 16 on PATH.
qd16() {
    local size=${2:+, \"size\": \"$2\"}
    plan uring.json <<P
{"name": "uring", "run": {"ramp": "300ms", "duration": "2s", "interval": "1s"},
 "specs": [{"name": "4k random read", "lines": [{"size": "4k", "read": 100, "random": 100}]}],
 "workers": [{"engine": "io_uring", "queue_depth": 16, "targets": [{"path": "$1"$size}]}]}
P
}

# little CSV: checks the ALL row: no errors, IOPS x mean latency >= 0.9 x 16.
little() {
    awk -F, 'NR==1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
             $c["row_type"] == "ALL" {
                 n = $c["iops"] * $c["avg_lat_ms"] / 1000
                 printf "IOPS %.0f x mean latency %.4f ms = %.2f outstanding (QD 16), errors %d\n",
                        $c["iops"], $c["avg_lat_ms"], n, $c["errors"]
                 bad = ($c["errors"] != 0 || $c["iops"] <= 0 || n < 0.9 * 16); found = 1 }
             END { exit !found || bad }' "$1"
}

# Where the engine cannot run, say so rather than fail.
qd16 uring.dat 64m
rc=0
"$IOFLEET" run "$T/uring.json" --workdir "$T/w" --quiet --csv "$T/file.csv" >"$T/out" 2>"$T/err" || rc=$?
if [ $rc -ne 0 ] && grep -qF "engine io_uring is not available on this node" "$T/err"; then
    skip "io_uring unavailable here: $(grep -F 'not available' "$T/err" | head -n1)"
fi
if [ $rc -ne 0 ] && grep -qF "O_DIRECT" "$T/err"; then
    skip "O_DIRECT unavailable under $T: $(head -n1 "$T/err")"
fi
[ $rc -eq 0 ] || { cat "$T/out" "$T/err"; fail "io_uring run on a file exited $rc"; }
line=$(little "$T/file.csv") || fail "Little's law on a file: $line"
ok "io_uring on a test file: $line"

# A kernel without io_uring: refused at prepare, the message names node, engine, reason.
for e in ENOSYS EPERM; do
    expect_rc 1 "$IOF_BIN/iof_no_uring" "$e" "$IOFLEET" run "$T/uring.json" --workdir "$T/w" --quiet
    expect_in "$T/err" "local: workers[0]: engine io_uring is not available on this node: io_uring_setup failed:"
    case $e in
    ENOSYS) expect_in "$T/err" "Function not implemented (the kernel has no io_uring)" ;;
    EPERM) expect_in "$T/err" "Operation not permitted (" ;;
    esac
    ok "$e: $(grep -F 'not available' "$T/err" | head -n1)"
done
# libaio, the default, still runs there.
sed -i 's/"engine": "io_uring", //' "$T/uring.json"
expect_rc 0 "$IOF_BIN/iof_no_uring" ENOSYS "$IOFLEET" run "$T/uring.json" --workdir "$T/w" --quiet
ok "libaio unaffected on a kernel without io_uring"

[ "$(id -u)" = 0 ] || skip "needs root to attach a loop device (file case passed)"
command -v losetup >/dev/null || skip "losetup not installed (util-linux)"
iof_shm uring
iof_loop loop "$shm/u.img" 256M
qd16 "$loop"
expect_rc 0 "$IOFLEET" run "$T/uring.json" --workdir "$T/w" --quiet --csv "$T/loop.csv"
line=$(little "$T/loop.csv") || fail "Little's law on $loop: $line"
ok "io_uring on $loop: $line"

# hipri on a device without poll queues (a loop device): refused when the test
# starts, naming the device, instead of failing every I/O with EOPNOTSUPP.
sed -i 's/"engine": "io_uring"/"engine": "io_uring", "hipri": true/' "$T/uring.json"
expect_rc 1 "$IOFLEET" run "$T/uring.json" --workdir "$T/w" --quiet
expect_in "$T/err" "hipri: the target's block device $(printf '%d:%d' "0x$(stat -c %t "$loop")" "0x$(stat -c %T "$loop")") cannot poll for completions"
ok "hipri on $loop refused: $(grep -F 'cannot poll' "$T/err" | head -n1)"
