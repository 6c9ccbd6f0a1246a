# SPDX-License-Identifier: Apache-2.0
# iofleet runs export (docs/history.md): a recorded run's result files written
# again from the history are the bytes the run wrote.
# 1. A real run (the embedded local agent, two tests of three intervals, a
#    paced group for the rated and lateness columns): --csv, --iometer-csv,
#    --timeseries and --json exported by id and by tag, cmp each; - is stdout.
# 2. A run stopped by SIGINT mid-test (exit 130, the test interrupted), and a
#    run of two dynamo agents whose groups differ (one idles in test 2): same.
# 3. Refusals with their messages: an unknown run, an existing file (and a
#    symbolic link) without --force (no file of the export is left), a run
#    without an exit code; --force replaces.
# 4. A run recorded before schema 3 (its new columns NULL) is exported with
#    a warning naming what is blank.
source "$(dirname "$0")/lib/common.bash"
command -v python3 >/dev/null || skip "python3 not installed"


db=$T/runs.db
plan p.json <<'P'
{"name": "export", "run": {"ramp": "500ms", "duration": "600ms", "interval": "200ms"},
 "specs": [{"name": "4k 70/30", "lines": [{"size": "4k", "read": 70, "random": 100}]},
           {"name": "64k seq read", "lines": [{"size": "64k", "read": 100, "random": 0}]}],
 "workers": [{"name": "fast", "count": 2, "engine": "null", "queue_depth": 4,
              "targets": [{"path": "a.dat", "size": "16m"}, {"path": "b.dat", "size": "16m"}]},
             {"name": "paced", "engine": "null", "queue_depth": 2, "rate": {"iops": 2000},
              "targets": [{"path": "c.dat", "size": "8m"}]}]}
P
files=(csv iometer-csv timeseries json)

# same RUN DIR: the run's files in $T/DIR-run.* and the export's in $T/DIR-exp.* are equal
same() {
    local f
    for f in "${files[@]}"; do
        cmp "$T/$2-run.$f" "$T/$2-exp.$f" || fail "run $1: the exported --$f differs from the run's"
    done
}

# --- 1. a finished run -------------------------------------------------------------------
expect_rc 0 "$IOFLEET" run "$T/p.json" --workdir "$T/w" --quiet --db "$db" --tag base \
    --csv "$T/a-run.csv" --iometer-csv "$T/a-run.iometer-csv" \
    --timeseries "$T/a-run.timeseries" --json "$T/a-run.json"
expect_rc 0 "$IOFLEET" runs export 1 --db "$db" --csv "$T/a-exp.csv" \
    --iometer-csv "$T/a-exp.iometer-csv" --timeseries "$T/a-exp.timeseries" --json "$T/a-exp.json"
[ ! -s "$T/err" ] || fail "export said: $(cat "$T/err")"
same 1 a
grep -q ',paced,' "$T/a-run.csv" || fail "the plan's paced group is not in the CSV"
ok "a finished run: CSV, Iometer CSV, time series and JSON exported byte for byte"

expect_rc 0 "$IOFLEET" runs export base --db "$db" --csv - --json "$T/tag.json"
cmp "$T/out" "$T/a-run.csv" || fail "runs export base --csv - differs from the run's CSV"
cmp "$T/tag.json" "$T/a-run.json" || fail "runs export by tag: JSON differs"
ok "by tag, and --csv - to stdout"

# --- 2. an interrupted run ---------------------------------------------------------------
plan long.json <<'P'
{"name": "long", "run": {"ramp": "500ms", "duration": "60s", "interval": "200ms"},
 "specs": [{"name": "first", "lines": [{"size": "4k"}]}, {"name": "never", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "null", "queue_depth": 8, "targets": [{"path": "n", "size": "1g"}]}]}
P
"$IOFLEET" run "$T/long.json" --workdir "$T/w" --quiet --db "$db" \
    --csv "$T/b-run.csv" --iometer-csv "$T/b-run.iometer-csv" \
    --timeseries "$T/b-run.timeseries" --json "$T/b-run.json" >"$T/run.out" 2>&1 &
pid=$!
iof_on_exit "kill -9 $pid 2>/dev/null"
# Stop it once it has published a few intervals.
for _ in $(seq 100); do
    [ "$(wc -l 2>/dev/null <"$T/b-run.timeseries" || echo 0)" -ge 8 ] && break
    sleep 0.1
done
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" = 130 ] || { cat "$T/run.out"; fail "the interrupted run exited $rc, expected 130"; }
expect_rc 0 "$IOFLEET" runs export 2 --db "$db" --csv "$T/b-exp.csv" \
    --iometer-csv "$T/b-exp.iometer-csv" --timeseries "$T/b-exp.timeseries" --json "$T/b-exp.json"
same 2 b
grep -q '"interrupted":true' "$T/b-exp.json" || fail "the exported JSON does not say interrupted"
ok "an interrupted run (exit 130) exported byte for byte"

AGENTS=()
for n in alpha beta; do
    iof_start_agent "$n" --name "$n"
    AGENTS+=(--insecure --agent "$AGENT_EP")
done
plan two.json <<'P'
{"name": "two", "run": {"ramp": "500ms", "duration": "600ms", "interval": "200ms"},
 "specs": [{"name": "a", "lines": [{"size": "4k", "read": 70, "random": 100}]},
           {"name": "b", "lines": [{"size": "64k", "read": 100}]}],
 "workers": [{"name": "many", "nodes": ["alpha"], "count": 2, "engine": "null", "queue_depth": 4,
              "targets": [{"path": "a.dat", "size": "16m"}]},
             {"name": "one", "nodes": ["beta"], "specs": ["a"], "engine": "null", "queue_depth": 2,
              "targets": [{"path": "c.dat", "size": "8m"}]}]}
P
expect_rc 0 "$IOFLEET" run "$T/two.json" "${AGENTS[@]}" --quiet --db "$db" \
    --csv "$T/c-run.csv" --iometer-csv "$T/c-run.iometer-csv" \
    --timeseries "$T/c-run.timeseries" --json "$T/c-run.json"
expect_rc 0 "$IOFLEET" runs export 3 --db "$db" --csv "$T/c-exp.csv" \
    --iometer-csv "$T/c-exp.iometer-csv" --timeseries "$T/c-exp.timeseries" --json "$T/c-exp.json"
same 3 c
grep -q ',NODE,alpha,' "$T/c-run.csv" && grep -q ',NODE,beta,' "$T/c-run.csv" ||
    fail "the two agents' NODE rows are not in the CSV"
ok "a run of two agents, one idle in its second test, exported byte for byte"

# --- 3. refusals ------------------------------------------------------------------------
expect_rc 1 "$IOFLEET" runs export 99 --db "$db" --csv "$T/x.csv"
expect_in "$T/err" "no run with id or tag '99'"
[ ! -e "$T/x.csv" ] || fail "an unknown run left a file"
expect_rc 2 "$IOFLEET" runs export 1 --db "$db" --json "$T/new.json" --csv "$T/a-run.csv"
expect_in "$T/err" "$T/a-run.csv"
[ ! -e "$T/new.json" ] || fail "a refused export left one of its files"
ln -s "$T/elsewhere.csv" "$T/link.csv"
expect_rc 2 "$IOFLEET" runs export 1 --db "$db" --csv "$T/link.csv"
expect_in "$T/err" "$T/link.csv"
[ ! -e "$T/elsewhere.csv" ] || fail "the export followed a symbolic link"
expect_rc 0 "$IOFLEET" runs export 1 --db "$db" --csv "$T/a-exp.csv" --force
cmp "$T/a-exp.csv" "$T/a-run.csv" || fail "--force: the replaced CSV differs"
expect_rc 2 "$IOFLEET" runs export 1 --db "$db"
expect_in "$T/err" "needs a file to write"
sql "$db" "INSERT INTO runs(start_unix_ns, plan_name, source) VALUES(1700000000000000000, 'busy', 'run')"
expect_rc 1 "$IOFLEET" runs export 4 --db "$db" --csv "$T/busy.csv"
expect_in "$T/err" "run 4 has no exit code: it is still being written"
[ ! -e "$T/busy.csv" ] || fail "an unfinished run left a file"
ok "refused: an unknown run, an existing file or link (nothing left), a run still being written"

# --- 4. a run recorded before schema 3 ---------------------------------------------------
sql "$db" "UPDATE rows SET window_ns = NULL, late_ios = NULL, user_pct = NULL WHERE test_id IN (SELECT id FROM tests WHERE run_id = 1)"
expect_rc 0 "$IOFLEET" runs export 1 --db "$db" --csv "$T/old.csv"
expect_in "$T/err" "run 1 was recorded before the history kept every figure of the result files"
[ "$(head -n1 "$T/old.csv")" = "$(head -n1 "$T/a-run.csv")" ] || fail "an old run's CSV header"
[ "$(wc -l <"$T/old.csv")" = "$(wc -l <"$T/a-run.csv")" ] || fail "an old run's CSV rows"
ok "a run recorded before schema 3: exported with a warning naming the blank columns"
