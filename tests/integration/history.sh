# SPDX-License-Identifier: Apache-2.0
# The run history (docs/history.md): every iofleet run recorded in SQLite.
# 1. The default file ($XDG_DATA_HOME, else ~/.local/share), --no-db, and an
#    unusable default (a warning) or --db (exit 2).
# 2. --tag, iofleet runs (table and --json), import of a --json document
#    (same figures), rm, usage errors.
# 3. kill -9 of the manager mid-run: the finished tests are listed and
#    reportable, the run is "unfinished"; every interval of the finished
#    tests is in the database, and nothing of the running one (the history
#    writes a test when it ends, never while it is measured).
# 4. Two managers writing one database at once: both runs complete, every
#    interval of each (as its --timeseries file has them) is in the database,
#    the file passes PRAGMA integrity_check.
# 5. A version 1 database made by hand is migrated and keeps its runs; a newer
#    one is refused.
# 6. A database another process holds (a long write transaction) does not
#    hold up the run: every interval is published (its time series written)
#    while the lock is still held, and once it is released every interval is
#    recorded and the manager exits 0 (the history's writer thread waits with
#    its queue; the manager's loop does not).
source "$(dirname "$0")/lib/cluster.bash"
command -v jq >/dev/null || skip "jq not installed"
command -v python3 >/dev/null || skip "python3 not installed"


plan short.json <<'P'
{"name": "hist", "run": {"ramp": "100ms", "duration": "500ms", "interval": "250ms"},
 "specs": [{"name": "4k a", "lines": [{"size": "4k", "read": 100, "burst": 16, "delay": "1ms"}]},
           {"name": "4k b", "lines": [{"size": "4k", "read": 0, "burst": 16, "delay": "1ms"}]}],
 "workers": [{"engine": "null", "queue_depth": 2, "targets": [{"path": "n", "size": "16m"}]}]}
P
run() { "$IOFLEET" run "$T/short.json" --workdir "$T/work" --quiet "$@"; }

# --- 1. where the history goes ----------------------------------------------------------
expect_rc 0 run
[ -f "$XDG_DATA_HOME/iofleet/runs.db" ] || fail "no history at \$XDG_DATA_HOME/iofleet/runs.db"
[ "$(sql "$XDG_DATA_HOME/iofleet/runs.db" 'SELECT count(*) FROM runs')" = 1 ] ||
    fail "default history does not hold the run"
[ "$(sql "$XDG_DATA_HOME/iofleet/runs.db" 'PRAGMA journal_mode')" = wal ] || fail "not in WAL mode"
ok "a run is recorded in \$XDG_DATA_HOME/iofleet/runs.db (WAL)"
(
    export HOME=$T/home XDG_DATA_HOME=
    expect_rc 0 run
    [ -f "$T/home/.local/share/iofleet/runs.db" ] || fail "no history under \$HOME/.local/share"
)
ok "without XDG_DATA_HOME: \$HOME/.local/share/iofleet/runs.db"
(
    export XDG_DATA_HOME=$T/none
    expect_rc 0 run --no-db
    [ ! -e "$T/none" ] || fail "--no-db created $(find "$T/none")"
)
ok "--no-db writes no history"
(
    export XDG_DATA_HOME=$T/a-file
    : >"$XDG_DATA_HOME"
    expect_rc 0 run
    expect_in "$T/err" "this run is not recorded"
    expect_rc 2 run --tag wanted
    expect_in "$T/err" "run history: "
    expect_rc 2 run --db "$T/a-file/runs.db"
    expect_in "$T/err" "(--no-db runs without it)"
)
ok "an unusable default history: the run goes on with a warning; an unusable --db (or --tag) fails"

# --- 2. tags, listing, import, rm -------------------------------------------------------
db=$T/h.db
expect_rc 0 run --db "$db" --tag nvme --json "$T/a.json" --csv "$T/a.csv"
expect_rc 0 "$IOFLEET" runs --db "$db"
expect_in "$T/out" "nvme"
expect_in "$T/out" "2/2"
expect_in "$T/out" "0 finished"
expect_rc 0 "$IOFLEET" runs --db "$db" --json
jq -e 'length == 1 and .[0].tag == "nvme" and .[0].plan == "hist" and .[0].nodes == 1 and
       .[0].tests == 2 and .[0].exit_code == 0 and .[0].status == "finished" and
       .[0].iops > 0 and .[0].p99_lat_ms > 0' "$T/out" >/dev/null || fail "runs --json: $(cat "$T/out")"
want=$(awk -F, 'NR > 1 && $4 == "ALL" && $10 > m { m = $10 } END { print m }' "$T/a.csv")
jq -e --argjson w "$want" '(.[0].iops - $w) | fabs < 0.001' "$T/out" >/dev/null ||
    fail "headline IOPS $(jq .[0].iops "$T/out") != the CSV's fastest ALL row $want"
ok "runs / runs --json: tag, plan, nodes, tests, headline IOPS (= CSV), status"

expect_rc 0 "$IOFLEET" runs --db "$db" import "$T/a.json" --tag imported
expect_in "$T/out" "as run 2"
expect_rc 0 "$IOFLEET" runs --db "$db" --json
jq -e '.[0].iops == .[1].iops and .[0].p99_lat_ms == .[1].p99_lat_ms and .[1].tag == "imported"
       and .[1].tests == 2 and .[1].nodes == 1' "$T/out" >/dev/null ||
    fail "imported run differs: $(cat "$T/out")"
[ "$(sql "$db" 'SELECT count(*) FROM rows r JOIN tests t ON r.test_id = t.id WHERE t.run_id = 1')" = \
    "$(sql "$db" 'SELECT count(*) FROM rows r JOIN tests t ON r.test_id = t.id WHERE t.run_id = 2')" ] ||
    fail "import: row counts differ"
[ "$(sql "$db" "SELECT group_concat(p99_lat_ms) FROM (SELECT p99_lat_ms FROM rows r JOIN tests t ON r.test_id = t.id WHERE t.run_id = 1 ORDER BY t.idx, r.row_type, r.node, r.worker, r.target)")" = \
    "$(sql "$db" "SELECT group_concat(p99_lat_ms) FROM (SELECT p99_lat_ms FROM rows r JOIN tests t ON r.test_id = t.id WHERE t.run_id = 2 ORDER BY t.idx, r.row_type, r.node, r.worker, r.target)")" ] ||
    fail "import: p99 of some row differs"
ok "runs import: the --json document reads back with the recorded run's figures"

# A format 1 document (rows' n_nodes, n_workers, n_targets) imports with the same counts.
jq -c '.iofleet.format = 1 | .tests[].results[] |= (.n_nodes = .nodes | .n_workers = .workers
       | .n_targets = .targets | del(.nodes, .workers, .targets))' "$T/a.json" >"$T/f1.json"
expect_rc 0 "$IOFLEET" runs --db "$db" import "$T/f1.json" --tag format1
counts() { sql "$db" "SELECT group_concat(c) FROM (SELECT r.n_nodes || '/' || r.n_workers || '/' || r.n_targets AS c FROM rows r JOIN tests t ON r.test_id = t.id WHERE t.run_id = $1 ORDER BY t.idx, r.row_type, r.node, r.worker, r.target)"; }
[ -n "$(counts 1)" ] && [ "$(counts 1)" = "$(counts 2)" ] && [ "$(counts 1)" = "$(counts 3)" ] ||
    fail "entity counts: recorded $(counts 1), imported $(counts 2), format 1 $(counts 3)"
expect_rc 0 "$IOFLEET" runs --db "$db" rm 3
ok "runs import: format 2 (nodes, workers, targets) and format 1 (n_nodes, ...) give the same counts"

# A document whose last test lacks "complete" (cut short by hand): kept, as unfinished.
jq 'del(.tests[1].complete)' "$T/a.json" >"$T/cut.json"
expect_rc 0 "$IOFLEET" runs --db "$db" import "$T/cut.json" --tag cut
expect_rc 0 "$IOFLEET" runs --db "$db" --json
jq -e '.[] | select(.tag == "cut") | .tests == 1' "$T/out" >/dev/null ||
    fail "import without complete: $(cat "$T/out")"
"$IOFLEET" runs --db "$db" rm "$(jq '.[] | select(.tag == "cut") | .id' "$T/out")" >/dev/null
printf '{"not": "a result"}' >"$T/bad.json"
expect_rc 1 "$IOFLEET" runs --db "$db" import "$T/bad.json"
expect_in "$T/err" "not an iofleet result document"
expect_rc 0 "$IOFLEET" runs --db "$db" rm 2
expect_in "$T/out" "removed run 2"
expect_rc 1 "$IOFLEET" runs --db "$db" rm 2
expect_in "$T/err" "no run 2"
[ "$(sql "$db" 'SELECT count(*) FROM tests WHERE run_id = 2')" = 0 ] || fail "rm left tests"
ok "runs rm removes a run and its tests; a bad import is refused"

expect_rc 2 run --no-db --tag x
expect_in "$T/err" "contradict"
expect_rc 2 run --db "$db" --tag 42
expect_in "$T/err" "not a number"
expect_rc 2 "$IOFLEET" runs --db "$db" rmm 1
expect_in "$T/err" "did you mean 'rm'"
ok "usage errors: --no-db with --tag, a numeric tag, an unknown runs command"

# --- 3. kill -9 mid-run -------------------------------------------------------------------
plan three.json <<'P'
{"name": "killed", "run": {"ramp": "100ms", "duration": "1s", "interval": "250ms"},
 "specs": [{"name": "t1", "lines": [{"size": "4k", "burst": 16, "delay": "1ms"}]},
           {"name": "t2", "lines": [{"size": "8k", "burst": 16, "delay": "1ms"}]},
           {"name": "t3", "duration": "120s", "lines": [{"size": "16k", "burst": 16, "delay": "1ms"}]}],
 "workers": [{"engine": "null", "queue_depth": 2, "targets": [{"path": "n", "size": "16m"}]}]}
P
# t3 runs for 2 minutes: however late this shell sees its first interval on a
# loaded machine, the manager is still running when it is killed.
kdb=$T/killed.db
cl_spawn mgr "$T/k.out" "$T/k.err" "$IOFLEET" run "$T/three.json" --workdir "$T/work" \
    --db "$kdb" --tag doomed --verbose
cl_wait_log_count "$T/k.err" "[run] test 3/3" 2 30
cl_wait_log_count "$T/k.err" "test 3 interval 1: " 1 30
kill -KILL "$mgr"
cl_wait_exit "$mgr" 10 rc
[ "$rc" = 137 ] || fail "killed manager: status $rc"
expect_rc 0 "$IOFLEET" runs --db "$kdb" --json
jq -e '.[0].status == "unfinished" and .[0].exit_code == null and .[0].tests == 2 and
       .[0].tests_planned == 3' "$T/out" >/dev/null || fail "after kill -9: $(cat "$T/out")"
expect_rc 0 "$IOFLEET" report doomed --db "$kdb" --format md -o "$T/k.md"
grep -q '^| t1 |' "$T/k.md" && grep -q '^| t2 |' "$T/k.md" || fail "report lacks t1/t2: $(cat "$T/k.md")"
expect_in "$T/k.md" "unfinished"
awk -F'|' '$2 ~ /^ t[12] $/ && $3 + 0 <= 0 { bad = 1 } END { exit bad }' "$T/k.md" ||
    fail "a finished test has no IOPS in the report"
# node and ALL intervals per test: (1 s / 250 ms) each for t1 and t2; t3,
# killed while measured, has no row (its records waited for its end).
per=$(sql "$kdb" "SELECT group_concat(n, ' ') FROM (SELECT t.idx, count(DISTINCT i.interval)
       FILTER (WHERE i.node = 'ALL') || '/' || count(DISTINCT i.interval) FILTER (WHERE
       i.node <> 'ALL') AS n FROM tests t LEFT JOIN intervals i ON i.test_id = t.id
       GROUP BY t.idx ORDER BY t.idx)")
want=$((1000 / 250))
read -r p1 p2 p3 <<<"$per"
[ "$p1" = "$want/$want" ] && [ "$p2" = "$want/$want" ] ||
    fail "after kill -9: intervals (ALL/node) per test $per, want $want/$want for t1 and t2"
[ -z "$p3" ] ||
    fail "after kill -9: the running test left $p3 intervals (ALL/node): it was written while measured"
ok "kill -9 mid-run: 2 finished tests listed and reportable, run unfinished, intervals $per kept"

# --- 4. two managers, one database --------------------------------------------------------
plan busy.json <<'P'
{"name": "busy", "run": {"ramp": "100ms", "duration": "2s", "interval": "100ms"},
 "specs": [{"name": "b1", "lines": [{"size": "4k", "burst": 16, "delay": "1ms"}]},
           {"name": "b2", "lines": [{"size": "4k", "read": 0, "burst": 16, "delay": "1ms"}]}],
 "workers": [{"count": 2, "engine": "null", "queue_depth": 2,
              "targets": [{"path": "n", "size": "16m"}]}]}
P
cdb=$T/shared.db
cl_spawn m1 "$T/m1.out" "$T/m1.err" "$IOFLEET" run "$T/busy.json" --workdir "$T/w1" --quiet \
    --db "$cdb" --tag one --timeseries "$T/ts1.csv"
cl_spawn m2 "$T/m2.out" "$T/m2.err" "$IOFLEET" run "$T/busy.json" --workdir "$T/w2" --quiet \
    --db "$cdb" --tag two --timeseries "$T/ts2.csv"
cl_wait_exit "$m1" 60 rc1
cl_wait_exit "$m2" 60 rc2
[ "$rc1" = 0 ] && [ "$rc2" = 0 ] || fail "managers exited $rc1 and $rc2: $(cat "$T/m1.err" "$T/m2.err")"
! grep -q "write failed" "$T/m1.err" "$T/m2.err" || fail "a history write failed: $(cat "$T/m1.err" "$T/m2.err")"
[ "$(sql "$cdb" 'PRAGMA integrity_check')" = ok ] || fail "integrity_check: $(sql "$cdb" 'PRAGMA integrity_check')"
for tag in one two; do
    n=$([ $tag = one ] && echo 1 || echo 2)
    want=$(($(wc -l <"$T/ts$n.csv") - 1))
    got=$(sql "$cdb" "SELECT count(*) FROM intervals i JOIN tests t ON i.test_id = t.id JOIN runs r ON t.run_id = r.id WHERE r.tag = '$tag'")
    [ "$got" = "$want" ] || fail "run $tag: $got intervals in the database, $want in its time series"
    [ "$(sql "$cdb" "SELECT count(*) FROM tests t JOIN runs r ON t.run_id = r.id WHERE r.tag = '$tag' AND t.complete")" = 2 ] ||
        fail "run $tag: not every test complete"
done
ok "two managers on one database: both complete, every interval kept ($got and more), integrity ok"

# --- 5. schema versions -------------------------------------------------------------------
odb=$T/old.db
python3 - "$odb" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
metrics = ("duration_s REAL, iops REAL, read_iops REAL, write_iops REAL, mibps REAL, "
           "read_mibps REAL, write_mibps REAL, avg_lat_ms REAL, avg_read_lat_ms REAL, "
           "avg_write_lat_ms REAL, p50_lat_ms REAL, p90_lat_ms REAL, p95_lat_ms REAL, "
           "p99_lat_ms REAL, p999_lat_ms REAL, p9999_lat_ms REAL, max_lat_ms REAL, read_ios INT, "
           "write_ios INT, bytes_read INT, bytes_written INT, errors INT, cpu_pct REAL")
c.executescript(f"""
CREATE TABLE runs(id INTEGER PRIMARY KEY AUTOINCREMENT, start_unix_ns INTEGER, plan_name TEXT,
  plan TEXT, tests_planned INTEGER, exit_code INTEGER, iofleet_version TEXT, source TEXT);
CREATE TABLE agents(run_id INTEGER NOT NULL, seq INTEGER NOT NULL, name TEXT, doc TEXT);
CREATE TABLE tests(id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, idx INTEGER NOT NULL,
  spec TEXT, cycle TEXT, cycle_param TEXT, cycle_value INTEGER, start_unix_ns INTEGER,
  end_unix_ns INTEGER, start_skew_ms REAL, nodes INTEGER, lost INTEGER, absent TEXT,
  interrupted INTEGER, complete INTEGER NOT NULL DEFAULT 0);
CREATE TABLE rows(test_id INTEGER NOT NULL, seq INTEGER NOT NULL, row_type TEXT NOT NULL,
  node TEXT, worker TEXT, target TEXT, status TEXT, queue_depth INTEGER, n_nodes INTEGER,
  n_workers INTEGER, n_targets INTEGER, window_start_s REAL, window_end_s REAL, {metrics},
  latency TEXT);
CREATE TABLE intervals(test_id INTEGER NOT NULL, seq INTEGER NOT NULL,
  interval INTEGER NOT NULL, time_s REAL, node TEXT, reported INTEGER, lost INTEGER,
  late INTEGER, {metrics}, latency TEXT);
INSERT INTO runs(start_unix_ns, plan_name, tests_planned, exit_code, source)
  VALUES(1700000000000000000, 'from-v1', 1, 0, 'run');
INSERT INTO tests(run_id, idx, spec, complete) VALUES(1, 1, 'old test', 1);
INSERT INTO rows(test_id, seq, row_type, iops, p99_lat_ms) VALUES(1, 0, 'ALL', 4321.5, 0.25);
PRAGMA user_version = 1;
""")
c.close()
PY
expect_rc 0 "$IOFLEET" runs --db "$odb" --json
jq -e '.[0].plan == "from-v1" and .[0].iops == 4321.5 and .[0].p99_lat_ms == 0.25' "$T/out" >/dev/null ||
    fail "v1 database after migration: $(cat "$T/out")"
[ "$(sql "$odb" 'PRAGMA user_version')" = 3 ] || fail "schema version $(sql "$odb" 'PRAGMA user_version') after migration"
expect_rc 0 run --db "$odb" --tag after-migration
expect_rc 0 "$IOFLEET" report after-migration --db "$odb" --format md -o -
expect_in "$T/out" "4k a"
ok "a version 1 database is migrated to 3, keeps its run and takes new tagged runs"
sql "$odb" 'PRAGMA user_version = 7' >/dev/null
expect_rc 1 "$IOFLEET" runs --db "$odb"
expect_in "$T/err" "schema version 7 is newer than this iofleet's (3)"
ok "a database from a newer iofleet is refused, naming both versions"

# --- 6. a held database does not hold up the run ------------------------------------------
plan held.json <<'P'
{"name": "held", "run": {"ramp": "100ms", "duration": "2s", "interval": "250ms"},
 "specs": [{"name": "h1", "lines": [{"size": "4k", "burst": 16, "delay": "1ms"}]}],
 "workers": [{"count": 2, "engine": "null", "queue_depth": 2,
              "targets": [{"path": "n", "size": "16m"}]}]}
P
hdb=$T/held.db
cl_spawn mh "$T/h.out" "$T/h.err" "$IOFLEET" run "$T/held.json" --workdir "$T/wh" --verbose \
    --db "$hdb" --tag held --timeseries "$T/tsh.csv"
cl_wait_log_count "$T/h.err" "test 1 interval 1: " 1 30
# Holds the write lock 4 s (the run has ~1.75 s left), then counts the
# intervals the time series has at that moment and lets go.
python3 - "$hdb" "$T/tsh.csv" "$T/at_release" <<'PY'
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], timeout=10, isolation_level=None)
c.execute("BEGIN IMMEDIATE")
time.sleep(4)
with open(sys.argv[2]) as f, open(sys.argv[3], "w") as out:
    out.write(str(sum(1 for _ in f) - 1))
c.execute("COMMIT")
PY
cl_wait_exit "$mh" 60 rc
[ "$rc" = 0 ] || fail "manager under a held database exited $rc: $(cat "$T/h.err")"
want=$(($(wc -l <"$T/tsh.csv") - 1))
[ "$(cat "$T/at_release")" = "$want" ] ||
    fail "while the database was held the time series had $(cat "$T/at_release") of $want intervals: the run waited for the database"
got=$(sql "$hdb" "SELECT count(*) FROM intervals i JOIN tests t ON i.test_id = t.id JOIN runs r ON t.run_id = r.id WHERE r.tag = 'held'")
[ "$got" = "$want" ] || fail "held database: $got intervals recorded, $want in the time series"
[ "$(sql "$hdb" "SELECT count(*) FROM tests t JOIN runs r ON t.run_id = r.id WHERE r.tag = 'held' AND t.complete")" = 1 ] ||
    fail "held database: the test is not complete"
ok "a database held by another process: the run goes on ($want intervals published while held), then all are recorded"
