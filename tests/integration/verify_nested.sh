# SPDX-License-Identifier: Apache-2.0
# Verify after writes of different sizes: a test file written whole in
# 64 KiB verified blocks, then 4 KiB verified writes at random inside them,
# then read back in 64 KiB reads. Nothing is wrong with the file: no
# verify error, exit 0 (each 64 KiB block's header still claims the bytes a
# later 4 KiB write replaced; those blocks were reported torn); such
# blocks are counted in verify_overlaid (the rest of each checked by its
# sector tags only). Then one byte changed inside a 4 KiB block that lies
# in a 64 KiB one is still reported, and so is one byte of a sector tag of
# the 64 KiB block around it.
source "$(dirname "$0")/lib/common.bash"

# mkplan NAME SIZE READ RANDOM IO_LIMIT
mkplan() {
    plan "$1.json" <<P
{"name": "$1", "run": {"ramp": "0s", "duration": "2s", "interval": "1s"},
 "specs": [{"name": "s", "io_limit": "$5", "lines": [{"size": "$2", "read": $3, "random": $4}]}],
 "workers": [{"engine": "sync", "queue_depth": 1, "targets": [{"path": "n.bin", "size": "4m"}],
              "verify": "xxh64", "verify_mode": "after"}]}
P
}
# 4 MiB written whole once; 32 writes of 4 KiB at random (most inside a
# 64 KiB block, not at its start); the whole file read once.
mkplan big 64k 0 0 4m
mkplan small 4k 0 100 128k
mkplan check 64k 100 0 4m
# col FILE NAME: the ALL row's value of CSV column NAME.
col() {
    local c
    c=$(head -1 "$1" | tr ',' '\n' | grep -nx "$2" | cut -d: -f1)
    awk -F, -v c="$c" '$4=="ALL"{print $c; exit}' "$1"
}

expect_rc 0 "$IOFLEET" run "$T/big.json" --workdir "$T/w" --quiet --csv "$T/big.csv"
[ "$(col "$T/big.csv" bytes_written)" -ge $((4 << 20)) ] || fail "the file was not written whole"
expect_rc 0 "$IOFLEET" run "$T/small.json" --workdir "$T/w" --quiet --csv "$T/small.csv"
[ "$(col "$T/small.csv" write_ios)" = 32 ] || fail "expected 32 writes of 4 KiB, got $(col "$T/small.csv" write_ios)"
rc=0
"$IOFLEET" run "$T/check.json" --workdir "$T/w" --quiet --csv "$T/check.csv" >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 0 ] || { cat "$T/err"; fail "64 KiB blocks with later 4 KiB writes inside read back with exit $rc: a false verify error"; }
[ "$(col "$T/check.csv" verify_errors)" = 0 ] || fail "verify_errors $(col "$T/check.csv" verify_errors) on a sound file"
[ "$(col "$T/check.csv" verify_overlaid)" -ge 1 ] || fail "verify_overlaid '$(col "$T/check.csv" verify_overlaid)': 64 KiB blocks with 4 KiB writes inside not counted"
ok "$(col "$T/small.csv" write_ios) 4 KiB writes inside 64 KiB blocks: read back clean, $(col "$T/check.csv" verify_overlaid) blocks overlaid"

# A 4 KiB block inside a 64 KiB one: the first 4 KiB-aligned header found
# past a 64 KiB boundary; one byte of its payload inverted.
at=$(python3 - "$T/w/n.bin" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
for off in range(0, len(data), 4096):
    base = off - off % 65536
    if off % 65536 and struct.unpack_from("<QQI", data, off)[0] == 0x6b6c6279666f69:
        if struct.unpack_from("<QQI", data, off)[2] == 4096 and \
                struct.unpack_from("<QQI", data, base)[2] == 65536:
            print(off)
            break
PY
)
[ -n "$at" ] || fail "no 4 KiB block found inside a 64 KiB one"
old=$(od -An -tu1 -j $((at + 1000)) -N1 "$T/w/n.bin" | tr -d ' ')
printf '%b' "\\$(printf %03o $((old ^ 0xff)))" | dd of="$T/w/n.bin" bs=1 seek=$((at + 1000)) conv=notrunc status=none
expect_rc 1 "$IOFLEET" run "$T/check.json" --workdir "$T/w" --quiet --force --csv "$T/check.csv"
[ "$(col "$T/check.csv" verify_errors)" -ge 1 ] || fail "a changed byte in the 4 KiB block at $at went unseen"
ok "a changed byte in the 4 KiB block at $at, inside a 64 KiB one: reported"

# flip FILE OFFSET: inverts the byte at OFFSET.
flip() {
    local v
    v=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
    printf '%b' "\\$(printf %03o $((v ^ 0xff)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
# The byte back; then one byte of the tag of the 64 KiB block's second
# sector (its own: the 4 KiB writes are 4 KiB-aligned and leave its header).
flip "$T/w/n.bin" $((at + 1000))
base=$((at - at % 65536))
flip "$T/w/n.bin" $((base + 512 + 3))
expect_rc 1 "$IOFLEET" run "$T/check.json" --workdir "$T/w" --quiet --force --csv "$T/check.csv"
[ "$(col "$T/check.csv" verify_errors)" -ge 1 ] || fail "a changed tag byte in the 64 KiB block at $base went unseen"
ok "a changed tag byte in the 64 KiB block at $base around the 4 KiB one: reported"
