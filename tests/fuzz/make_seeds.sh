#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/fuzz/make_seeds.sh - (re)writes the seed inputs of tests/fuzz/corpus/.
#
#     tests/fuzz/make_seeds.sh
#
# Seeds are the files named seed-*; the others in corpus/<name>/ were found by the fuzzers
# (a minimised corpus, and crash-* inputs that once failed) and are left alone. Sources:
#   msg    every JSON example of docs/protocol.md, compact as sent and as pretty-printed
#          there, and hello/stats/result in the target's template form (see fuzz_msg.c)
#   frame  the same messages framed: alone, as one session stream, and foreign or broken
#          streams (TLS, HTTP, SSH, oversized, bad version or flags, truncated)
#   plan   configs/*.json, and some of them with --set overrides after a NUL byte
#   import configs/fio/*.fio, job files with every construct the fio importer maps,
#          tests/data/iometer/*.icf, tests/data/vdbench/* and configs/hcibench-*.vdb
#   hist   the `lat` histograms of docs/protocol.md and a few made with common/hist.c
#   statsbin  binary stats bodies of every shape, built from those histograms (layout 2,
#          run form, and layout 1, sparse)
#   hist   also each generated histogram in the run form (seed-runs-*)
# Needs bash, jq, base64, xxd and a C compiler (cc). The output is deterministic.
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=$src/tests/fuzz/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"/{msg,frame,plan,hist,import,statsbin}
rm -f "$out"/*/seed-*

# Every ```json block of the protocol page, one file each: $tmp/doc-N.json.
awk -v dir="$tmp" '
    /^```json/ { n++; f = dir "/doc-" n ".json"; inblock = 1; next }
    /^```/ { inblock = 0; next }
    inblock { print > f }
' "$src/docs/protocol.md"

# The 8-byte frame header for a payload of $1 bytes, as raw bytes on stdout.
header() {
    printf 'IF\x01\x00'
    printf '%08x' "$1" | xxd -r -p
}

# frame CONTROL: stdin payload -> stdout frame (see fuzz_frame.c for the 2 control bytes).
frame() {
    local p
    p=$(mktemp -p "$tmp")
    cat >"$p"
    header "$(stat -c %s "$p")"
    cat "$p"
}

session=$tmp/session
: >"$session"
for ((n = 1; ; n++)); do
    f=$tmp/doc-$n.json
    [[ -f "$f" ]] || break
    type=$(jq -r .type "$f")
    name=$(printf '%02d-%s' "$n" "$type")
    jq -cj . "$f" >"$out/msg/seed-$name"
    if [[ $(wc -l <"$f") -gt 1 ]]; then
        cp "$f" "$out/msg/seed-$name-pretty"
    fi
    case "$type" in
    hello | stats | result)
        sel=$(case "$type" in hello) echo 0 ;; stats) echo 1 ;; result) echo 2 ;; esac)
        {
            printf '%b' "\\x0$sel"
            jq -cj . "$f" | sed "s/^{\"type\":\"$type\",//"
        } >"$out/msg/seed-$name-template"
        ;;
    esac
    # Control byte 0: limit index 5 (1 MiB) before and after the first frame (5 + 7*5);
    # byte 1: the cut seed.
    {
        printf '\x28'
        printf '%b' "\\x$(printf %02x "$n")"
        jq -cj . "$f" | frame
    } >"$out/frame/seed-$name"
    jq -cj . "$f" | frame >>"$session"
done

# Whole sessions under several limits: 64 KiB -> 1 MiB as a connection does, a limit too
# small for most frames (100 bytes), 1 byte, 64 MiB.
printf '\x27\x01' | cat - "$session" >"$out/frame/seed-session-auth"
printf '\x10\x02' | cat - "$session" >"$out/frame/seed-session-100b"
printf '\x00\x03' | cat - "$session" >"$out/frame/seed-session-1b"
printf '\x30\x00' | cat - "$session" >"$out/frame/seed-session-64m"
printf '\x05\x01\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03' >"$out/frame/seed-tls-hello"
printf '\x05\x01\x17\x03\x03\x00\x10' >"$out/frame/seed-tls-data"
printf '\x05\x02GET / HTTP/1.1\r\nHost: x\r\n\r\n' >"$out/frame/seed-http"
printf '\x05\x02SSH-2.0-OpenSSH_9.2\r\n' >"$out/frame/seed-ssh"
{ printf '\x05\x00'; printf 'IF\x01\x00\xff\xff\xff\xff'; } >"$out/frame/seed-oversized"
{ printf '\x05\x00'; printf 'IF\x02\x00\x00\x00\x00\x02{}'; } >"$out/frame/seed-version2"
{ printf '\x05\x00'; printf 'IF\x01\x80\x00\x00\x00\x02{}'; } >"$out/frame/seed-flags"
{ printf '\x05\x00'; printf 'IF\x01\x00\x00\x00\x00\x00'; header 2; printf '{}'; } \
    >"$out/frame/seed-empty-frames"
{ printf '\x05\x07'; header 100; printf '{"type":"welc'; } >"$out/frame/seed-truncated"

# Plans: every shipped config, and overrides after a NUL (one per line).
for f in "$src"/configs/*.json; do
    cp "$f" "$out/plan/seed-$(basename "$f" .json)"
done
{
    cat "$src/configs/quickstart.json"
    printf '\0run.duration=10s\nworkers[0].queue_depth=32\nspecs[0].lines[0].read=50'
} >"$out/plan/seed-quickstart-set"
{
    cat "$src/configs/quickstart.json"
    printf '\0cycle.queue_depth={"from":1,"to":64,"step":"x2"}\nworkers[0].targets[1]={"path":"b.dat","size":"1m"}\nrun.ramp=null'
} >"$out/plan/seed-quickstart-cycle"
{
    cat "$src/configs/quickstart.json"
    printf '\0cycle.rate={"curve":[10,50,90]}\ncycle.rate.curve[3]=100'
} >"$out/plan/seed-quickstart-rate-curve"
{
    cat "$src/configs/quickstart.json"
    printf '\0cycle.rate.find_max={"p99":"2ms"}'
} >"$out/plan/seed-quickstart-rate-find-max"
{
    cat "$src/configs/fio-four-corners.json"
    printf '\0workers[0].nodes=["node-1","node-2"]\0specs[1].name=x\0name=renamed'
} >"$out/plan/seed-fio-set"
{
    cat "$src/configs/quickstart.json"
    printf '\0specs[0].lines[0].distribution=zipf:1.2\nspecs[1].lines[0].distribution=zoned:60/10:30/20:10/70\nspecs[1].lines[0].random=50'
} >"$out/plan/seed-quickstart-distribution"

# Histograms: the `lat` strings of the protocol page ...
grep -o '"lat": *"[A-Za-z0-9+/=]*"' "$src/docs/protocol.md" | sed 's/.*"\([^"]*\)"$/\1/' |
    sort -u | while read -r b64; do
    printf '%s' "$b64" | base64 -d >"$out/hist/seed-doc-$(printf '%s' "$b64" | md5sum | cut -c1-8)"
done
# ... and a few recorded with common/hist.c itself.
cat >"$tmp/gen.c" <<'CEOF'
#include "common/hist.h"
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
static struct iof_hist h;
static void put1(const char *dir, const char *kind, const char *name, bool runs)
{
    static uint8_t buf[IOF_HIST_BUCKETS * 20 + 64];
    char path[4096];
    long n = runs ? iof_hist_encode_runs(&h, buf, sizeof(buf)) : iof_hist_encode(&h, buf, sizeof(buf));
    snprintf(path, sizeof(path), "%s/seed-%s-%s", dir, kind, name);
    FILE *f = fopen(path, "wb");
    if (n < 0 || !f || fwrite(buf, 1, (size_t)n, f) != (size_t)n || fclose(f))
        exit(1);
}
/* The sparse form as seed-gen-NAME, the run form as seed-runs-NAME. */
static void put(const char *dir, const char *name)
{
    put1(dir, "gen", name, false);
    put1(dir, "runs", name, true);
    iof_hist_reset(&h);
}
int main(int argc, char **argv)
{
    uint64_t x = 88172645463325252ull;
    (void)argc;
    iof_hist_reset(&h);
    put(argv[1], "empty");
    iof_hist_record(&h, 0);
    put(argv[1], "zero");
    iof_hist_record(&h, 127);
    iof_hist_record(&h, 128);
    put(argv[1], "edge-127-128");
    iof_hist_record(&h, UINT64_MAX);
    put(argv[1], "max");
    iof_hist_record(&h, 1ull << 43);
    iof_hist_record(&h, (1ull << 43) - 1);
    put(argv[1], "top-buckets");
    for (int i = 0; i < 5000; i++) { /* latencies of an SSD: ~20 us .. 5 ms */
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        iof_hist_record(&h, 20000 + x % 5000000);
    }
    put(argv[1], "ssd-5000");
    for (unsigned s = 0; s < 64; s++)
        iof_hist_record(&h, 1ull << s);
    put(argv[1], "powers-of-two");
    for (int i = 0; i < 1000; i++)
        iof_hist_record(&h, 81234);
    put(argv[1], "one-bucket-1000");
    return 0;
}
CEOF
cc -std=gnu11 -O1 -I"$src" "$tmp/gen.c" "$src/common/hist.c" -o "$tmp/gen"
"$tmp/gen" "$out/hist"

# Binary stats bodies (docs/protocol.md, "Binary stats body"), built from the histograms
# above: little-endian fields, LEB128 varints, each histogram after its length.
le() { # VALUE BYTES
    local v=$1 n=$2 i
    for ((i = 0; i < n; i++)); do
        printf '%b' "\\x$(printf %02x $(((v >> (8 * i)) & 255)))"
    done
}
varint() {
    local v=$1
    while ((v >= 128)); do
        printf '%b' "\\x$(printf %02x $(((v & 127) | 128)))"
        v=$((v >> 7))
    done
    printf '%b' "\\x$(printf %02x "$v")"
}
# sb_header FLAGS TEST INTERVAL DURATION BUSY USER SYS AGENT NWORKERS, then the table
sb_header() {
    printf '\x01\x02'
    le "$1" 2
    le "$2" 4
    le "$3" 8
    le "$4" 8
    le "$5" 2
    le "$6" 2
    le "$7" 2
    le "$8" 2
    le "$9" 4
}
sb_dir() { # BYTES ERRORS HISTFILE
    varint "$1"
    varint "$2"
    varint "$(stat -c %s "$3")"
    cat "$3"
}
h=$out/hist
mkdir -p "$out/statsbin"
# Layout 2 (run-form histograms, what is sent) as seed-NAME, layout 1 (sparse, still read)
# as seed-sparse-NAME.
for layout in 2 1; do
    if [[ $layout == 2 ]]; then hp=runs pre=seed; else hp=gen pre=seed-sparse; fi
    sb_header 0 0 0 0 0 0 0 0 0 >"$out/statsbin/$pre-empty"
    sb_header 3 7 41 123456789 3725 2050 1675 150 0 >"$out/statsbin/$pre-lost-cpu"
    {
        sb_header 2 0 3 0 1250 1000 250 10 1
        le 1 2
        printf '\x03'
        sb_dir 4096 0 "$h/seed-$hp-zero"
        sb_dir 8192 1 "$h/seed-$hp-edge-127-128"
    } >"$out/statsbin/$pre-one-target"
    {
        sb_header 0 1 0 0 0 0 0 0 1
        le 1 2
        printf '\x1f'
        sb_dir $((5000 * 65536)) 0 "$h/seed-$hp-ssd-5000"
        sb_dir 0 3 "$h/seed-$hp-empty"
        varint 100
        varint 500077
        varint 4000
        varint 90000
        varint 3
        varint 12
        printf '\x03EIO'
        varint 9007199254741504
    } >"$out/statsbin/$pre-all-fields"
    {
        sb_header 2 0 1 0 5000 4000 1000 20 8
        for w in 1 2 3 4 5 6 7 8; do le 1 2; done
        for w in 1 2 3 4 5 6 7 8; do
            printf '\x03'
            sb_dir $((1000 * 4096)) 0 "$h/seed-$hp-one-bucket-1000"
            sb_dir 0 0 "$h/seed-$hp-powers-of-two"
        done
    } >"$out/statsbin/$pre-8x1"
    {
        sb_header 0 2 9 0 0 0 0 0 3
        le 1 2
        le 3 2
        le 2 2
        printf '\x01'
        sb_dir 4096 0 "$h/seed-$hp-zero"
        printf '\x00\x08'
        varint 12
        printf '\x02'
        sb_dir 0 7 "$h/seed-$hp-top-buckets"
        printf '\x11'
        sb_dir 0 3 "$h/seed-$hp-empty"
        printf '\x05ENXIO\x00\x00'
    } >"$out/statsbin/$pre-shapes"
    # sb_header writes layout 2; layout 1's seeds say 1.
    if [[ $layout == 1 ]]; then
        for f in "$out"/statsbin/seed-sparse-*; do
            printf '\x01' | dd of="$f" bs=1 seek=1 conv=notrunc status=none
        done
    fi
done

# fio job files and Iometer configuration files for the importers.
for f in "$src"/tests/data/iometer/*.icf; do
    cp "$f" "$out/import/seed-$(basename "$f")"
done
for f in "$src"/configs/fio/*.fio; do
    cp "$f" "$out/import/seed-$(basename "$f" .fio)"
done
for f in "$src"/tests/data/vdbench/* "$src"/configs/hcibench-*.vdb; do
    cp "$f" "$out/import/seed-vdbench-$(basename "$f")"
done
cat >"$out/import/seed-mixed" <<'FIOEOF'
[global]
time_based
runtime=2m
ramp_time=500ms
ioengine=io_uring
direct=1
[t]
rw=randrw
rwmixread=70
rate_iops=500
rate_process=poisson
random_distribution=zipf:1.2
filename=/dev/nvme0n1:/dev/nvme1n1
offset=1g
size=10g
numjobs=2
offset_increment=25%
thinktime=100
thinktime_blocks=8
bssplit=4k/10:64k/50:32k/
FIOEOF
cat >"$out/import/seed-groups" <<'FIOEOF'
[global]
rw=randread
size=1g
direct=1
[a]
filename=a.dat
[b]
filename=b.dat
iodepth=8
ioengine=libaio
[c]
stonewall
rw=write
bs=4k,16k
verify=md5
FIOEOF

for d in "$out"/*/; do
    printf '%-6s %3d seeds\n' "$(basename "$d")" "$(find "$d" -name 'seed-*' | wc -l)"
done
