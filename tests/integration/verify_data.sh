# SPDX-License-Identifier: Apache-2.0
# End-to-end verification ("verify") on a kept test file: written with
# headers it reads back clean in a later run (a new agent: only the file and
# the workdir carry over); one byte inverted with dd, in a block's payload or
# in its header's magic, is reported as corrupt at exactly its block, and so
# is a block zeroed (no header where one was written), but not a file made
# anew or written over without verify; two bad blocks are reported once each
# however often they are read; a block copied over another is
# reported as misplaced there; an older copy of a block put back (a lost
# write) is reported as stale; verify_errors counts each bad block once,
# verify_bad_reads every read of one; an interrupted write test leaves nothing the
# next verify calls wrong; a mismatch is exit 1 with verify_errors in the
# CSV; verify_stop ends the test at the first one.
source "$(dirname "$0")/lib/common.bash"

F=$T/w/v.bin # the test file "v.bin" in the workdir
BS=65536

# run NAME SPEC-READ SPEC-RANDOM MODE [EXTRA-GROUP-JSON]: writes plan NAME.json.
mkplan() {
    plan "$1.json" <<P
{"name": "$1", "run": {"ramp": "0s", "duration": "${5:-2s}", "interval": "1s"},
 "specs": [{"name": "s", "lines": [{"size": "64k", "read": $2, "random": $3}]}],
 "workers": [{"engine": "sync", "queue_depth": 1, "targets": [{"path": "v.bin", "size": "16m"}],
              "verify": "xxh64", "verify_mode": "$4"}]}
P
}
# flip FILE OFFSET: inverts the byte at OFFSET in place, and checks that it
# changed on disk.
flip() {
    local old new
    old=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
    new=$((old ^ 0xff))
    printf "\\$(printf %03o "$new")" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
    [ "$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')" = "$new" ] || fail "byte $2 of $1 did not change"
}
# col FILE NAME: the ALL row's value of CSV column NAME.
col() {
    local c
    c=$(head -1 "$1" | tr ',' '\n' | grep -nx "$2" | cut -d: -f1)
    awk -F, -v c="$c" '$4=="ALL"{print $c; exit}' "$1"
}

mkplan write 0 0 after
mkplan read 100 100 after
expect_rc 0 "$IOFLEET" run "$T/write.json" --workdir "$T/w" --quiet --force --csv "$T/w.csv"
[ "$(col "$T/w.csv" verify_errors)" = 0 ] || fail "writing: verify errors"
[ "$(col "$T/w.csv" bytes_written)" -ge $((16 << 20)) ] || fail "the file was not written whole"
ls "$T"/w/.iofleet-verify-*.gen >/dev/null || fail "no generation state in the workdir"
ok "written with headers, read back whole after the test: no errors"

expect_rc 0 "$IOFLEET" run "$T/read.json" --workdir "$T/w" --quiet --force --csv "$T/r.csv"
[ "$(col "$T/r.csv" verify_errors)" = 0 ] || fail "clean file: verify errors"
[ "$(col "$T/r.csv" read_ios)" -gt 0 ] || fail "no reads"
ok "a later run (a new agent) verifies the kept file: no errors"

# corrupted AT WHAT [FOUND]: a read-back run reports exactly the block at AT,
# as corrupt, having found FOUND there (by default its own header).
corrupted() {
    local n others found=${3:-"found offset $1 length $BS "}
    expect_rc 1 "$IOFLEET" run "$T/read.json" --workdir "$T/w" --quiet --force --csv "$T/r.csv"
    n=$(col "$T/r.csv" verify_bad_reads)
    [ "$n" -ge 1 ] || fail "$2: verify_bad_reads $n"
    [ "$(col "$T/r.csv" verify_errors)" = 1 ] || fail "$2: verify_errors $(col "$T/r.csv" verify_errors), expected 1 (one bad block)"
    grep -qE "verify: node local target 'v.bin' offset $1: corrupt \(expected offset $1( generation [0-9]+)?; $found" "$T/err" ||
        { cat "$T/err"; fail "no corrupt report at offset $1"; }
    others=$(grep -o "offset [0-9]*: [a-z]*" "$T/err" | grep -v "^offset $1: corrupt$" || true)
    [ -z "$others" ] || { cat "$T/err"; fail "reports elsewhere: $others"; }
    ok "$2: exactly offset $1 reported, as corrupt ($n reads of it)"
}
# One byte in the middle of block 37. It is inverted, never overwritten with
# a fixed value: the payload is random per run, and a fixed value equal to
# the byte already there (1 run in 256) changed nothing, so nothing could be
# reported.
AT=$((37 * BS))
flip "$F" $((AT + 3000))
corrupted $AT "one flipped byte in a block's payload"
# Put back; then the first byte of block 41 (its header's magic).
flip "$F" $((AT + 3000))
flip "$F" $((41 * BS))
corrupted $((41 * BS)) "one flipped byte in a header's magic"
# Put back; then block 45 zeroed whole: no header where one was written.
flip "$F" $((41 * BS))
dd if=/dev/zero of="$F" bs=$BS seek=45 count=1 conv=notrunc status=none
corrupted $((45 * BS)) "a block zeroed" "found no verify header\\)"
# Block 45 still zeroed, and a byte of block 50 flipped: each is read many
# times, and the reports (the first 8 of a test) name each block once, so a
# block read again and again does not hide the other.
flip "$F" $((50 * BS + 100))
expect_rc 1 "$IOFLEET" run "$T/read.json" --workdir "$T/w" --quiet --force --csv "$T/r.csv"
[ "$(col "$T/r.csv" verify_bad_reads)" -gt 2 ] || fail "two bad blocks read only $(col "$T/r.csv" verify_bad_reads) times"
# verify_errors counts the blocks, verify_bad_reads the reads of them.
[ "$(col "$T/r.csv" verify_errors)" = 2 ] || fail "two bad blocks counted as $(col "$T/r.csv" verify_errors) verify_errors"
reported=$(grep -o "target 'v.bin' offset [0-9]*: corrupt" "$T/err" | sort)
[ "$(printf '%s\n' "$reported" | uniq -d)" = "" ] || { cat "$T/err"; fail "a block reported twice"; }
[ "$(printf '%s\n' "$reported" | wc -l)" = 2 ] &&
    grep -q "offset $((45 * BS)): corrupt" <<<"$reported" &&
    grep -q "offset $((50 * BS)): corrupt" <<<"$reported" || { cat "$T/err"; fail "not both blocks reported once"; }
ok "two bad blocks read $(col "$T/r.csv" verify_bad_reads) times: verify_errors 2, each reported once"

# The test file made anew (its inode number may be the old one's): the
# verify state of the old file goes (a run that neither writes nor verifies
# does not touch it otherwise), and nothing is expected of the new one.
rm "$F"
jq 'del(.workers[0].verify, .workers[0].verify_mode)' "$T/read.json" >"$T/plainread.json"
expect_rc 0 "$IOFLEET" run "$T/plainread.json" --workdir "$T/w" --quiet
! ls "$T"/w/.iofleet-verify-*.gen >/dev/null 2>&1 || fail "the old file's verify state outlived it"
expect_rc 0 "$IOFLEET" run "$T/read.json" --workdir "$T/w" --quiet --force --csv "$T/r.csv"
[ "$(col "$T/r.csv" verify_errors)" = 0 ] || { cat "$T/err"; fail "a new file: verify errors"; }
ok "a test file made anew: nothing expected of it"
# Written with verify, then by a run without: nothing expected any more.
expect_rc 0 "$IOFLEET" run "$T/write.json" --workdir "$T/w" --quiet
jq 'del(.workers[0].verify, .workers[0].verify_mode)' "$T/write.json" >"$T/plain.json"
expect_rc 0 "$IOFLEET" run "$T/plain.json" --workdir "$T/w" --quiet
expect_rc 0 "$IOFLEET" run "$T/read.json" --workdir "$T/w" --quiet --force --csv "$T/r.csv"
[ "$(col "$T/r.csv" verify_errors)" = 0 ] || { cat "$T/err"; fail "after a write without verify: verify errors"; }
ok "a test file written over without verify: no false errors"

# Rewrite, then block 5 copied over block 9.
expect_rc 0 "$IOFLEET" run "$T/write.json" --workdir "$T/w" --quiet
dd if="$F" of="$F" bs=$BS skip=5 seek=9 count=1 conv=notrunc status=none
expect_rc 1 "$IOFLEET" run "$T/read.json" --workdir "$T/w" --quiet
grep -qE "offset $((9 * BS)): misplaced \(expected offset $((9 * BS))( generation [0-9]+)?; found offset $((5 * BS)) " "$T/err" ||
    { cat "$T/err"; fail "no misplaced report at block 9"; }
others=$(grep -o "offset [0-9]*: [a-z]*" "$T/err" | grep -v "^offset $((9 * BS)): misplaced$" || true)
[ -z "$others" ] || { cat "$T/err"; fail "reports elsewhere: $others"; }
ok "a block copied to the wrong offset: reported there as misplaced, naming where it belongs"

# Block 20 as written by one run, put back after the next run rewrote it:
# sound, in place, but not the last write there.
expect_rc 0 "$IOFLEET" run "$T/write.json" --workdir "$T/w" --quiet
dd if="$F" of="$T/old.blk" bs=$BS skip=20 count=1 status=none
expect_rc 0 "$IOFLEET" run "$T/write.json" --workdir "$T/w" --quiet
dd if="$T/old.blk" of="$F" bs=$BS seek=20 count=1 conv=notrunc status=none
expect_rc 1 "$IOFLEET" run "$T/read.json" --workdir "$T/w" --quiet
grep -qE "offset $((20 * BS)): stale \(expected offset $((20 * BS)) generation [0-9]+; found offset $((20 * BS)) length $BS " "$T/err" ||
    { cat "$T/err"; fail "no stale report at block 20"; }
others=$(grep -o "offset [0-9]*: [a-z]*" "$T/err" | grep -v "^offset $((20 * BS)): stale$" || true)
[ -z "$others" ] || { cat "$T/err"; fail "reports elsewhere: $others"; }
ok "an older copy of a block put back (a lost write): reported as stale, only there"

# verify_stop: the first mismatch ends the test.
jq '.workers[0].verify_stop = true | .run.duration = "30s"' "$T/read.json" >"$T/stop.json"
start=$(date +%s)
expect_rc 1 "$IOFLEET" run "$T/stop.json" --workdir "$T/w" --quiet --force --csv "$T/s.csv"
[ $(($(date +%s) - start)) -lt 20 ] || fail "verify_stop did not stop the test"
ok "verify_stop: the test ends at the first mismatch"

# An interrupted write test (SIGINT in the middle): the next verify finds
# nothing wrong but, at most, torn blocks.
expect_rc 0 "$IOFLEET" run "$T/write.json" --workdir "$T/w" --quiet
mkplan rw 0 100 inline 30s
"$IOFLEET" run "$T/rw.json" --workdir "$T/w" --quiet >"$T/int.out" 2>"$T/int.err" &
pid=$!
iof_on_exit "kill $pid 2>/dev/null"
sleep 2
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" = 130 ] || { cat "$T/int.err"; fail "interrupted run exited $rc, want 130"; }
rc=0
"$IOFLEET" run "$T/read.json" --workdir "$T/w" --quiet >"$T/out" 2>"$T/err" || rc=$?
bad=$(grep -o "offset [0-9]*: [a-z]*" "$T/err" | grep -v ": torn$" || true)
[ -z "$bad" ] || { cat "$T/err"; fail "after an interrupted write: $bad"; }
ok "interrupted write test: no false errors on the next verify (rc $rc)"

# Plan checks.
jq '.workers[0].verify = "md5"' "$T/read.json" >"$T/bad.json"
expect_rc 2 "$IOFLEET" validate "$T/bad.json"
expect_in "$T/err" "workers[0].verify: must be one of none, crc32c, xxh64, got 'md5'"
jq 'del(.workers[0].verify)' "$T/read.json" >"$T/bad.json"
expect_rc 2 "$IOFLEET" validate "$T/bad.json"
expect_in "$T/err" "workers[0].verify_mode: needs \"verify\""
ok "plan checks"
