# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Shared helpers for the benchmarks in tests/bench/. Source it; it defines
# functions and a few variables only and changes no shell options.
#
#   bench_die MSG...            print "NAME: MSG" on stderr, exit 2
#   bench_need CMD HINT         exit 2 with HINT unless CMD is on PATH
#   bench_iofleet_bin           path of iofleet: $IOF_BIN (directory or file)
#                               or <repo>/build/bin/iofleet
#   bench_timed OUT ERR TIMES LIMIT CMD...
#                               run CMD (stdout > OUT, stderr > ERR) under
#                               `timeout LIMIT`, write "wall user sys" seconds
#                               (bash `time`, reaped children and threads
#                               included) to TIMES; returns CMD's exit status
#   bench_median                median of the numbers on stdin (one a line)
#   bench_si N                  12345678 -> 12.3M, 1234 -> 1.23k
#   bench_fmt FMT N             printf FMT N, or "-" when N is empty/"-"
#   bench_iof_all FILE          "ios iops mean_us p99_us measured_s errors" from
#                               an `iofleet run` stdout (ALL row of its
#                               first test; latencies as the table prints
#                               them, 3 significant digits); fails when there
#                               is none
#   bench_fio_read FILE         "ios iops mean_us p99_us runtime_s error" from a
#                               fio --output-format=json file (jobs[0].read;
#                               lat_ns; p99 is "-" without --lat_percentiles=1)
#   bench_fio_all FILE          the same over reads and writes together (mean
#                               weighted by I/Os; p99 of reads, or of writes
#                               when there are no reads)

BENCH_NAME=${BENCH_NAME:-${0##*/}}
# iofleet run records every run in $XDG_DATA_HOME/iofleet/runs.db: benchmark
# runs go to a scratch history, not the user's.
export XDG_DATA_HOME=${BENCH_XDG_DATA_HOME:-${TMPDIR:-/tmp}/iofleet-bench-history}
BENCH_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

bench_die() {
    printf '%s: %s\n' "$BENCH_NAME" "$*" >&2
    exit 2
}

bench_need() {
    command -v "$1" >/dev/null 2>&1 || bench_die "'$1' not found. $2"
}

bench_iofleet_bin() {
    local b=${IOF_BIN:-$BENCH_REPO/build/bin}
    [[ -d $b ]] && b=$b/iofleet
    [[ -x $b ]] || bench_die "iofleet binary '$b' not found or not executable;" \
        "build it (cmake --preset default && cmake --build --preset default) or set IOF_BIN"
    printf '%s\n' "$b"
}

bench_timed() {
    local out=$1 err=$2 times=$3 limit=$4 rc TIMEFORMAT='%R %U %S'
    shift 4
    # --foreground: the command stays in our process group, so Ctrl-C reaches
    # it at once; -k: SIGKILL if it ignores the SIGTERM at the limit.
    if { time timeout --foreground -k 10 "$limit" "$@" >"$out" 2>"$err"; } 2>"$times"; then
        rc=0
    else
        rc=$?
    fi
    return "$rc"
}

bench_median() {
    sort -g | awk '{ v[NR] = $1 }
        END {
            if (NR == 0) { print "-"; exit }
            if (NR % 2) m = v[(NR + 1) / 2]; else m = (v[NR / 2] + v[NR / 2 + 1]) / 2
            printf "%.6g\n", m
        }'
}

bench_si() {
    awk -v n="$1" 'BEGIN {
        if (n == "" || n == "-") { print "-"; exit }
        a = n < 0 ? -n : n
        if (a >= 1e9) printf "%.3gG\n", n / 1e9
        else if (a >= 1e6) printf "%.3gM\n", n / 1e6
        else if (a >= 1e3) printf "%.3gk\n", n / 1e3
        else printf "%.3g\n", n
    }'
}

bench_fmt() {
    # shellcheck disable=SC2059 # the format is the caller's
    if [[ -z ${2:-} || $2 == - ]]; then printf '%s\n' -; else printf "$1\n" "$2"; fi
}

# The awk function us(FIELD): a latency of the run table in microseconds. The
# table prints them with their unit, 3 significant digits ("812ns", "1.10µs",
# "12.3ms", "1.23s"; "us" outside UTF-8 locales); a bare number is the older
# tables' milliseconds.
BENCH_AWK_US='
    function us(f,    v) {
        v = f + 0
        if (f ~ /ns$/) return v / 1000
        if (f ~ /(µs|us)$/) return v
        if (f ~ /ms$/) return v * 1000
        if (f ~ /s$/) return v * 1000000
        return v * 1000
    }'

bench_iof_all() {
    awk "$BENCH_AWK_US"'
        /^== test/ && !seen {
            for (i = 1; i < NF; i++) if ($i == "measured") meas = $(i + 1)
            seen = 1; next
        }
        $1 == "ALL" && !done {
            # row name IOPS read_IOPS write_IOPS MiB/s avg p50 p99 p99.9 max errors
            printf "%.0f %s %.4f %.4f %s %s\n", $3 * meas, $3, us($7), us($9), meas, $12
            done = 1
        }
        END { if (!done || meas == "") exit 1 }' "$1"
}

bench_fio_read() {
    jq -er '.jobs[0] | [.read.total_ios, .read.iops, (.read.lat_ns.mean / 1000),
        (.read.lat_ns.percentile["99.000000"] // null | if . == null then "-" else . / 1000 end), (.read.runtime / 1000),
        .error] | map(tostring) | join(" ")' "$1"
}

bench_fio_all() {
    jq -er '.jobs[0] | (.read.total_ios + .write.total_ios) as $n |
        (if .read.total_ios > 0 then .read else .write end) as $p |
        [$n, (.read.iops + .write.iops),
         (if $n > 0 then (.read.lat_ns.mean * .read.total_ios + .write.lat_ns.mean * .write.total_ios) / $n / 1000 else 0 end),
         ($p.lat_ns.percentile["99.000000"] // null | if . == null then "-" else . / 1000 end),
         ([.read.runtime, .write.runtime] | max / 1000), .error] | map(tostring) | join(" ")' "$1"
}
