# SPDX-License-Identifier: Apache-2.0
# The run history writes nothing while a test is measured (docs/history.md,
# "Nothing written while a test is measured"): every system call of the
# manager that writes or syncs one of the database's files (traced with
# strace -P) falls between tests, never inside a test's measured window (the
# --json document's start_unix_ns..end_unix_ns), and the last of those
# before each test is an fsync, so the kernel has nothing of the history left
# to write back in the window. The history still ends with every interval
# of every test, as the time series has them.
source "$(dirname "$0")/lib/common.bash"
command -v jq >/dev/null || skip "jq not installed"
command -v strace >/dev/null || skip "strace not installed"
command -v python3 >/dev/null || skip "python3 not installed"


plan quiet.json <<'P'
{"name": "quiet", "run": {"ramp": "0s", "duration": "1500ms", "interval": "250ms"},
 "specs": [{"name": "q1", "lines": [{"size": "4k", "burst": 16, "delay": "1ms"}]},
           {"name": "q2", "lines": [{"size": "4k", "read": 0, "burst": 16, "delay": "1ms"}]},
           {"name": "q3", "lines": [{"size": "8k", "burst": 16, "delay": "1ms"}]}],
 "workers": [{"engine": "null", "queue_depth": 2, "targets": [{"path": "n", "size": "16m"}]}]}
P
db=$T/q.db
# A first run makes the database: the traced run opens files that exist.
expect_rc 0 "$IOFLEET" run "$T/quiet.json" --workdir "$T/work" --db "$db" --quiet
# LeakSanitizer cannot run under ptrace: off for the traced run only (the
# first run above checks for leaks in a sanitizer build).
expect_rc 0 env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    strace -f -qq -ttt -o "$T/trace" \
    -e trace=write,pwrite64,writev,pwritev,pwritev2,fsync,fdatasync,ftruncate,fallocate \
    -P "$db" -P "$db-wal" -P "$db-shm" \
    "$IOFLEET" run "$T/quiet.json" --workdir "$T/work" --db "$db" --tag traced --quiet \
    --json "$T/q.json" --timeseries "$T/ts.csv"

# The windows (us since the epoch) and the traced calls (us, call name).
jq -r '.tests[] | "\(.start_unix_ns / 1000 | floor) \(.end_unix_ns / 1000 | floor)"' "$T/q.json" \
    >"$T/windows"
[ "$(wc -l <"$T/windows")" = 3 ] || fail "the --json document has not 3 tests: $(cat "$T/windows")"
# strace -f -ttt: PID, seconds.microseconds, the call (an interrupted call's
# first line has its start time, its "resumed" line none).
awk '$3 ~ /^[a-z0-9]+\(/ { split($2, t, "."); c = $3; sub(/\(.*/, "", c);
     printf "%d%06d %s\n", t[1], t[2], c }' "$T/trace" >"$T/calls"
grep -q " pwrite64$\| write$" "$T/calls" || {
    cat "$T/trace"
    fail "the trace holds no write to the history: it cannot show where they fall"
}
awk 'NR == FNR { s[NR] = $1; e[NR] = $2; n = NR; next }
     { for (i = 1; i <= n; i++) if ($1 >= s[i] && $1 <= e[i]) {
           printf "%s at +%.3f s into test %d\n", $2, ($1 - s[i]) / 1e6, i; bad = 1 } }
     END { exit bad }' "$T/windows" "$T/calls" >"$T/inside" || {
    head -20 "$T/inside"
    fail "the manager wrote to the run history while a test was measured"
}
ok "no write or sync of the history's files in any of the 3 measured windows ($(wc -l <"$T/calls") calls between them)"

# Before each test, the history's last call is an fsync (its files on disk).
awk 'NR == FNR { s[NR] = $1; n = NR; next }
     { c[++m] = $2; t[m] = $1 }
     END { for (i = 1; i <= n; i++) { last = ""
               for (j = 1; j <= m; j++) if (t[j] < s[i]) last = c[j]
               if (last != "fsync") { printf "test %d: last call before it: %s\n", i, last; bad = 1 } }
           exit bad }' "$T/windows" "$T/calls" >"$T/nosync" || {
    cat "$T/nosync"
    fail "the history's files were not synced before a test started"
}
ok "the history's files are fsynced before each test starts"

want=$(($(wc -l <"$T/ts.csv") - 1))
got=$(sql "$db" "SELECT count(*) FROM intervals i JOIN tests t ON i.test_id = t.id
                 JOIN runs r ON t.run_id = r.id WHERE r.tag = 'traced'")
[ "$got" = "$want" ] || fail "the history holds $got intervals, the time series $want"
[ "$(sql "$db" "SELECT count(*) FROM tests t JOIN runs r ON t.run_id = r.id
                WHERE r.tag = 'traced' AND t.complete")" = 3 ] || fail "not every test is complete"
ok "every interval ($got) and test (3) recorded"
