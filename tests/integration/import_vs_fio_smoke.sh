# SPDX-License-Identifier: Apache-2.0
# tests/bench/import-vs-fio, quickly, so the bench cannot rot: two of its jobs
# (8k random 70 % reads; 128k sequential reads of [256m, 768m)) for 1 s per
# tool on its own loop device. Only shapes are asserted, with wide margins
# (never speed): the bench exits 0 and prints its table and summary, both
# tools moved I/O, the mix has 60-80 % reads from both, the sequential job
# only 128k reads, almost none random, none outside its region, and the
# bench left no loop device, /dev/shm file or tracefs instance behind.
source "$(dirname "$0")/lib/common.bash"

[ "$(id -u)" = 0 ] || skip "needs root (a loop device and tracefs)"
command -v fio >/dev/null || skip "fio not installed"
command -v losetup >/dev/null || skip "losetup not installed"
[ -d /sys/kernel/tracing/events/block/block_bio_queue ] ||
    [ -d /sys/kernel/debug/tracing/events/block/block_bio_queue ] ||
    skip "no tracefs with the block events"
BENCH=$IOF_SRC/tests/bench/import-vs-fio
[ -x "$IOFLEET" ] || skip "no iofleet at $IOFLEET"

# leftovers: our /dev/shm files, loop devices over them, tracefs instances
leftovers() {
    find /dev/shm -maxdepth 1 -name 'iofleet-import-vs-fio.*' | wc -l
    losetup -l -n -O BACK-FILE | grep -c 'iofleet-import-vs-fio' || true
    { find /sys/kernel/tracing/instances /sys/kernel/debug/tracing/instances -maxdepth 1 \
        -name 'iofleet-import-vs-fio-*' 2>/dev/null || true; } | wc -l
}
before=$(leftovers)
expect_rc 0 env IOF_BIN="$IOF_BIN" IOF_BENCH_SECONDS=1 IOF_BENCH_JOBS=03,05 \
    IOF_BENCH_DIR="$T/bench" bash "$BENCH"
expect_in "$T/out" "judged "
expect_in "$T/out" "03-randrw-mix70-qd16: exact"
expect_in "$T/out" "05-seqread-range-qd32: exact"
ok "the bench ran both jobs and printed its summary"

# fig JOB METRIC COLUMN: a figure of the table (3 fio, 4 iofleet), without %.
fig() {
    awk -v j="$1" -v m="$2" -v c="$3" '$1 == j && $2 == m { v = $c; sub(/%$/, "", v); print v; exit }' "$T/out"
}
# within V LO HI: LO <= V <= HI
within() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v != "" && v >= lo && v <= hi) }'; }

for c in 3 4; do
    tool=$([ $c = 3 ] && echo fio || echo iofleet)
    for j in 03-randrw-mix70-qd16 05-seqread-range-qd32; do
        within "$(fig $j ios $c)" 10 1e12 || fail "$tool moved no I/O in $j: $(cat "$T/out")"
        [ "$(fig $j outside $c)" = 0 ] || fail "$tool: I/O outside $j's region: $(cat "$T/out")"
    done
    within "$(fig 03-randrw-mix70-qd16 read $c)" 60 80 || fail "$tool: 03's read share: $(cat "$T/out")"
    within "$(fig 03-randrw-mix70-qd16 size:8k $c)" 99 100 || fail "$tool: 03's sizes: $(cat "$T/out")"
    within "$(fig 05-seqread-range-qd32 read $c)" 99.9 100 || fail "$tool: 05's read share: $(cat "$T/out")"
    within "$(fig 05-seqread-range-qd32 size:128k $c)" 99 100 || fail "$tool: 05's sizes: $(cat "$T/out")"
    within "$(fig 05-seqread-range-qd32 random:R $c)" 0 5 || fail "$tool: 05 is random: $(cat "$T/out")"
    within "$(fig 03-randrw-mix70-qd16 random:R $c)" 95 100 || fail "$tool: 03 is not random: $(cat "$T/out")"
done
ok "both tools: 60-80 % reads of 8k in the mix, sequential 128k reads inside the region"

[ "$(leftovers)" = "$before" ] ||
    fail "the bench left a /dev/shm file, loop device or tracefs instance: $(leftovers | tr '\n' ' ')"
[ -z "$(ls -A "$T/bench" 2>/dev/null)" ] || fail "the bench left its work dir: $(ls "$T/bench")"
ok "no loop device, /dev/shm file, tracefs instance or work dir left"

expect_rc 2 env IOF_BIN="$IOF_BIN" IOF_BENCH_JOBS=nosuchjob bash "$BENCH"
expect_in "$T/err" "IOF_BENCH_JOBS: no job 'nosuchjob'"
ok "an unknown job is a usage error"
