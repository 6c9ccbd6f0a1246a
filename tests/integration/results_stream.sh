# SPDX-License-Identifier: Apache-2.0
# --json at fleet scale (docs/results.md): each finished test is appended to
# the file, so
#  1. a manager killed with SIGKILL between tests leaves a valid document
#     holding exactly the tests it finished (and `tests_written` says so);
#  2. the manager's memory does not grow with the number of tests: the same
#     shape (2 agents x 8 workers x 64 targets on the null engine, 1024
#     TARGET rows per test, histograms kept) run for 6 and for 24 tests, peak
#     RSS (getrusage of the waited manager) may differ by at most a third
#     of what the 18 extra tests add to the file (the whole-document writer
#     held all of it in memory, so it grew by more than twice that), and by
#     at least 1 MiB of slack. 6, not 1 or 2: the allocator's warm-up (1.7
#     MiB from 2 to 10 tests, none from 10 to 30; 2.4 then 1.8 MiB with
#     ASan) is not what this looks for.
source "$(dirname "$0")/lib/common.bash"
command -v python3 >/dev/null || skip "python3 not installed"

AGENTS=()
for name in alpha beta; do
    iof_start_agent "$name" --name "$name"
    AGENTS+=(--insecure --agent "$AGENT_EP")
done

# plan FILE TESTS DURATION: TESTS specs of DURATION each, 1024 TARGET rows a test.
shape_plan() {
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys
path, ntests, duration = sys.argv[1], int(sys.argv[2]), sys.argv[3]
targets = [{"path": "t%02d.dat" % i, "size": "1m"} for i in range(64)]
specs = [{"name": "s%02d" % i,
          "lines": [{"size": "4k", "read": 70, "random": 100, "burst": 1, "delay": "5ms"}]}
         for i in range(ntests)]
plan = {"name": "stream", "run": {"ramp": "1s", "duration": duration, "interval": duration},
        "specs": specs,
        "workers": [{"count": 8, "engine": "null", "queue_depth": 1, "targets": targets}]}
json.dump(plan, open(path, "w"))
PY
}

# --- 1. SIGKILL between tests -------------------------------------------------------------
shape_plan "$T/kill.json" 6 2s
"$IOFLEET" run "$T/kill.json" "${AGENTS[@]}" --quiet --json "$T/k.json" >"$T/k.out" 2>"$T/k.err" &
mpid=$!
iof_on_exit "kill -9 $mpid 2>/dev/null"
# Wait for the second test's end (the file is then valid with 2 tests), then
# kill at once: the third test runs for 2 s, the kill lands inside it.
written=0
for _ in $(seq 600); do
    written=$(python3 -c 'import json, sys
try: print(json.load(open(sys.argv[1]))["run"]["tests_written"])
except Exception: print(0)' "$T/k.json" 2>/dev/null || echo 0)
    [ "$written" -ge 2 ] && break
    kill -0 "$mpid" 2>/dev/null || break
    sleep 0.05
done
[ "$written" -ge 2 ] || { cat "$T/k.err" >&2; fail "the manager wrote no 2 tests within 30 s"; }
kill -9 "$mpid"
wait "$mpid" 2>/dev/null || true
python3 - "$T/k.json" "$written" <<'PY' || fail "the killed manager's JSON"
import json, sys
doc = json.load(open(sys.argv[1]))  # strict: the whole file is one document
run, tests = doc["run"], doc["tests"]
written = int(sys.argv[2])
assert run["finished"] is False and run["exit_code"] is None, run
assert run["tests_written"] == len(tests), (run["tests_written"], len(tests))
assert written <= len(tests) < 6, (written, len(tests))
for i, t in enumerate(tests):
    assert t["index"] == i + 1 and t["complete"] is True, t["index"]
    rows = t["results"]
    assert rows[0]["row_type"] == "ALL" and rows[0]["status"] == "ok"
    assert sum(r["row_type"] == "TARGET" for r in rows) == 1024
    assert all(r["latency"] is not None for r in rows)  # 1024 rows: histograms kept
    ios = rows[0]["read_ios"] + rows[0]["write_ios"]
    assert ios > 0 and ios == sum(r["read_ios"] + r["write_ios"] for r in rows if r["row_type"] == "NODE")
print("killed after test %d: %d tests in a valid document" % (written, len(tests)))
PY
ok "SIGKILL between tests: a valid document with the finished tests"

# --- 2. memory independent of the number of tests -----------------------------------------
# Under AddressSanitizer freed memory waits in a quarantine (256 MiB by
# default) before reuse, which would grow with every test: none for this part.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0
# run_rss NTESTS: runs the shape for NTESTS tests; prints "PEAK_KB FILE_BYTES".
run_rss() {
    shape_plan "$T/m$1.json" "$1" 200ms
    python3 - "$T/rss$1" "$IOFLEET" run "$T/m$1.json" "${AGENTS[@]}" --quiet --json "$T/r$1.json" \
        <<'PY' >"$T/m$1.out" 2>"$T/m$1.err" || { cat "$T/m$1.err" >&2; fail "the $1-test run failed"; }
import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)
PY
    python3 -c 'import json, sys; assert len(json.load(open(sys.argv[1]))["tests"]) == int(sys.argv[2])' \
        "$T/r$1.json" "$1" || fail "the $1-test JSON does not hold $1 tests"
    echo "$(cat "$T/rss$1") $(stat -c %s "$T/r$1.json")"
}
read -r rss_a bytes_a < <(run_rss 6)
read -r rss_b bytes_b < <(run_rss 24)
extra_kb=$(((bytes_b - bytes_a) / 1024))
allowed_kb=$((extra_kb / 3 > 1024 ? extra_kb / 3 : 1024))
echo "peak RSS: 6 tests $rss_a KiB, 24 tests $rss_b KiB; the 18 extra tests add $extra_kb KiB to the file (allowed growth $allowed_kb KiB)"
[ "$extra_kb" -gt $((4 * 1024)) ] || fail "the extra tests add only $extra_kb KiB: too small to tell"
[ $((rss_b - rss_a)) -le "$allowed_kb" ] ||
    fail "peak RSS grew by $((rss_b - rss_a)) KiB from 6 to 24 tests (allowed $allowed_kb KiB)"
ok "peak RSS independent of the number of tests"
