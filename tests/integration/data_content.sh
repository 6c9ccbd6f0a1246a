# SPDX-License-Identifier: Apache-2.0
# Data content ("data": dedupe, compress, dedupe_unit) measured from outside:
# a whole 64 MiB file is written sequentially with each setting, then
# lib/data_check.py counts its distinct 4 KiB blocks and compresses it with
# the zstd and lz4 tools. The unique share must be within 2 points of
# 100 - dedupe, and with no duplicates (whose copies a whole-file compressor
# also finds) the compressed size within 5 points of 100 - compress, for
# both tools. Also: the plan refuses writes that are not whole units, and two
# runs of the same plan write different unique blocks.
source "$(dirname "$0")/lib/common.bash"

command -v zstd >/dev/null || skip "zstd not installed (Debian package zstd)"
command -v lz4 >/dev/null || skip "lz4 not installed (Debian package lz4)"
command -v python3 >/dev/null || skip "python3 not installed"
CHECK=$(dirname "$0")/lib/data_check.py
SIZE=$((64 << 20))
F=$T/data.bin

# write DEDUPE COMPRESS: fills $F with one sequential pass or more.
write() {
    rm -f "$T/o.csv"
    plan d.json <<P
{"name": "data", "run": {"ramp": "0s", "duration": "3s", "interval": "1s"},
 "specs": [{"name": "seq write", "lines": [{"size": "64k", "read": 0, "random": 0}]}],
 "workers": [{"engine": "sync", "queue_depth": 1, "targets": [{"path": "$F"}],
              "data": {"dedupe": "$1%", "compress": "$2%", "dedupe_unit": "4k"}}]}
P
    expect_rc 0 "$IOFLEET" run "$T/d.json" --workdir "$T/w" --quiet --csv "$T/o.csv"
    local col w
    col=$(head -1 "$T/o.csv" | tr ',' '\n' | grep -nx bytes_written | cut -d: -f1)
    w=$(awk -F, -v c="$col" '$4=="ALL"{print $c; exit}' "$T/o.csv")
    [ "${w:-0}" -ge "$SIZE" ] || fail "dedupe $1 compress $2: wrote $w bytes, less than the file"
}

# within GOT WANT TOL
within() { awk -v g="$1" -v w="$2" -v t="$3" 'BEGIN{d=g-w; if (d<0) d=-d; exit !(d<=t)}'; }

truncate -s "$SIZE" "$F"
echo "dedupe compress | unique% zstd% lz4%"
for dc in "0 0" "50 0" "75 0" "0 50" "0 80" "50 50" "75 80"; do
    set -- $dc
    write "$1" "$2"
    read -r u z l < <(python3 "$CHECK" "$F" 4096)
    echo "$1 $2 | $u $z $l"
    within "$u" $((100 - $1)) 2 || fail "dedupe $1%: $u% of the blocks are unique, want $((100 - $1)) +- 2"
    if [ "$1" = 0 ]; then
        within "$z" $((100 - $2)) 5 || fail "compress $2%: zstd leaves $z%, want $((100 - $2)) +- 5"
        within "$l" $((100 - $2)) 5 || fail "compress $2%: lz4 leaves $l%, want $((100 - $2)) +- 5"
    fi
done
ok "unique share within 2 points, zstd and lz4 sizes within 5 points of the request"

# Two runs of the same plan with a fixed seed: the duplicates are the same,
# the unique blocks are not (the run takes part in their seed).
jq '.workers[0].seed = 7 | .workers[0].data.dedupe = "0%" | .workers[0].data.compress = "0%"' \
    "$T/d.json" >"$T/s.json"
"$IOFLEET" run "$T/s.json" --workdir "$T/w" --quiet >/dev/null
cp "$F" "$T/first.bin"
"$IOFLEET" run "$T/s.json" --workdir "$T/w" --quiet >/dev/null
cat "$T/first.bin" "$F" >"$T/both.bin"
rm -f "$T/first.bin"
read -r u _ < <(python3 "$CHECK" "$T/both.bin" 4096)
within "$u" 100 0.01 || fail "two runs with the same seed share blocks: $u% unique over both"
ok "unique blocks differ between two runs of the same plan"

# A write that is not a whole number of units is refused before anything runs.
jq '.specs[0].lines[0].size = "6k"' "$T/d.json" >"$T/bad.json"
expect_rc 2 "$IOFLEET" validate "$T/bad.json"
expect_in "$T/err" "writes of 6k are not a whole number of dedupe units (workers[0] has data.dedupe_unit 4k)"
jq '.workers[0].pattern = "random"' "$T/d.json" >"$T/both.json"
expect_rc 2 "$IOFLEET" validate "$T/both.json"
expect_in "$T/err" "workers[0].pattern: cannot be given with \"data\""
ok "plan checks: whole units, data or pattern"
