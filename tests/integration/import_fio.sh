# SPDX-License-Identifier: Apache-2.0
# iofleet import on a fio job file, round trip: seed 000's four corners as the
# report's fio job file (configs/fio/four-corners.fio) imports with its
# ignored options named by line, validates, and a short null-engine run gives
# the same results shape (tests, spec names, lines, workers, queue depth) as
# configs/fio-four-corners.json run with the same overrides. Also: --help,
# no overwrite without --force, exit 2 with the line for an unmappable job.
source "$(dirname "$0")/lib/common.bash"
command -v jq >/dev/null || skip "jq not installed"
FIO=$IOF_SRC/configs/fio/four-corners.fio
cd "$T"

expect_rc 0 "$IOFLEET" import --help
expect_in "$T/out" "usage: iofleet import JOB.fio"
expect_rc 0 "$IOFLEET" help import
expect_in "$T/out" "--output"

expect_rc 0 "$IOFLEET" import "$FIO" -o plan.json
expect_in "$T/err" "four-corners.fio:12: ignored: norandommap (does not change the load)"
expect_in "$T/err" "four-corners.fio:13: ignored: group_reporting (does not change the load)"
[ ! -s "$T/out" ] || fail "import -o wrote to stdout"
expect_rc 0 "$IOFLEET" validate plan.json
expect_in "$T/out" "tests: 4"
ok "four-corners.fio imports (ignored options named by line) and validates"

# The file exists now: refused without --force, replaced with it.
expect_rc 2 "$IOFLEET" import "$FIO" -o plan.json
expect_in "$T/err" "plan.json: the file exists; give --force to replace it"
expect_rc 0 "$IOFLEET" import "$FIO" -o plan.json --force
ok "an existing output needs --force"

# run PLAN NAME: a short null-engine run, its results shape in NAME.shape.
run_short() {
    expect_rc 0 timeout 120 "$IOFLEET" run "$1" --no-db --quiet --json "$2.json" \
        --set workers[0].engine=null --set workers[0].targets[0].size=16m \
        --set run.duration=1s --set run.ramp=0s \
        --set specs[0].io_limit=64m --set specs[1].io_limit=64m \
        --set specs[2].io_limit=64m --set specs[3].io_limit=64m
    jq -c '[.tests[] | {spec, rows: [.results[] |
             {row_type, worker, target, queue_depth, nodes, workers, targets, status}]}]' \
        "$2.json" >"$2.shape"
    [ -s "$2.shape" ] || fail "$2: no results shape"
}
run_short plan.json imported
run_short "$IOF_SRC/configs/fio-four-corners.json" shipped
jq -e '.tests | length == 4' imported.json >/dev/null || fail "imported: not 4 tests"
diff -u shipped.shape imported.shape >&2 || fail "the imported plan's results differ in shape"
# The plan's worker groups are the same: 4 workers at queue depth 64 on one 20g file.
jq -e '.workers == [{"nodes":["*"],"count":4,"engine":"libaio","queue_depth":64,
        "targets":[{"path":"bench","size":"20g"}],"pattern":"pseudo"}]' plan.json >/dev/null ||
    fail "imported workers differ from configs/fio-four-corners.json's"
ok "import -> validate -> null run: same tests, specs and workers as configs/fio-four-corners.json"

# Something essential that cannot be mapped: exit 2, the line named, no file.
printf '[global]\nsize=1g\n[a]\nrw=randread\n[b]\nrw=trim\n' >bad.fio
expect_rc 2 "$IOFLEET" import bad.fio -o bad.json
expect_in "$T/err" "bad.fio:6: error: cannot map rw=trim"
[ ! -e bad.json ] || fail "a refused import wrote its output"
printf '[a]\nrw=read\nsize=1g\nfilename=x\n[b]\nstonewall\nrw=write\nsize=1g\nioengine=libaio\nfilename=x\ndirect=1\n' >steps.fio
expect_rc 2 "$IOFLEET" import steps.fio
expect_in "$T/err" "steps.fio:5: error: job 'b' and the jobs after it up to the next stonewall run with other workers"
expect_rc 2 "$IOFLEET" import notes.txt
expect_in "$T/err" "cannot tell the format of 'notes.txt'"
ok "unmappable jobs exit 2 with FILE:LINE and write nothing"

# Buffered I/O with an O_DIRECT engine: refused, or with --approximate run
# with O_DIRECT, printed and kept in the plan's notes, which validate shows.
printf '[j]\nioengine=libaio\nsize=16m\ndirect=0\n' >buffered.fio
expect_rc 2 "$IOFLEET" import buffered.fio -o buffered.json
expect_in "$T/err" "buffered.fio:4: error: cannot map direct=0 of job 'j'"
[ ! -e buffered.json ] || fail "a refused import wrote its output"
expect_rc 0 "$IOFLEET" import buffered.fio -o buffered.json --approximate
expect_in "$T/err" "buffered.fio:4: note: job 'j' has direct=0 (buffered I/O): run with O_DIRECT"
python3 - buffered.json <<'PY' || fail "the approximation is not in the plan's notes"
import json, sys
notes = json.load(open(sys.argv[1]))["notes"]
assert notes == ["buffered.fio:4: note: job 'j' has direct=0 (buffered I/O): run with O_DIRECT, "
                 "as iofleet's libaio engine always does (--approximate)"], notes
PY
expect_rc 0 "$IOFLEET" validate buffered.json
expect_in "$T/out" "notes: buffered.fio:4: note: job 'j' has direct=0"
expect_rc 2 "$IOFLEET" import --format icf buffered.fio --approximate
expect_in "$T/err" "--approximate is for fio job files"
ok "direct=0 with libaio is refused, or approximated with --approximate and kept in the plan's notes"

# A job-wide runtime and ramp_time are the run's: --set run.duration changes them.
printf '[global]\nruntime=60\nramp_time=5\ntime_based\nsize=16m\nfilename=x\n[a]\nrw=randread\n[b]\nstonewall\nrw=randwrite\n' >timed.fio
expect_rc 0 "$IOFLEET" import timed.fio -o timed.json
expect_rc 0 "$IOFLEET" validate timed.json --set run.duration=5s --set run.ramp=0s
expect_in "$T/out" "run: ramp 0s, duration 5s, interval 1s"
expect_in "$T/out" "tests: 2 (2 specs x 1 cycle step), 10s of ramp and measurement"
printf '[global]\ntime_based\nsize=16m\nfilename=x\n[a]\nruntime=30\n[b]\nstonewall\nruntime=60\n' >own.fio
expect_rc 0 "$IOFLEET" import own.fio -o own.json
expect_rc 0 "$IOFLEET" validate own.json --set run.duration=5s
expect_in "$T/err" "iofleet: warning: --set run.duration=5s changes nothing: every spec has its own duration (specs[].duration overrides run's)"
ok "a job-wide runtime is run.duration, which --set changes"

# Jobs that run at once with different workloads: one group each, running its
# own spec side by side (per-group specs); a short null run has both groups.
printf '[global]\nsize=16m\nioengine=null\nruntime=1\ntime_based\n[oltp]\nrw=randrw\nrwmixread=70\niodepth=4\n[backup]\nrw=read\nbs=64k\n' >mix.fio
expect_rc 0 "$IOFLEET" import mix.fio -o mix.json
expect_rc 0 "$IOFLEET" validate mix.json
expect_in "$T/out" "oltp (4k random 70% read)"
expect_in "$T/out" "backup (64k sequential read)"
expect_rc 0 "$IOFLEET" run mix.json --workdir "$T/w" --csv "$T/mix.csv" --quiet
python3 - "$T/mix.csv" <<'PY' || fail "the concurrent jobs did not both run"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
groups = {r["group"]: r for r in rows if r["row_type"] == "GROUP"}
assert set(groups) == {"oltp", "backup"}, groups.keys()
assert int(groups["oltp"]["read_ios"]) > 0 and int(groups["oltp"]["write_ios"]) > 0
assert int(groups["backup"]["read_ios"]) > 0 and int(groups["backup"]["write_ios"]) == 0
PY
ok "concurrent jobs with different workloads import as groups with their own specs and run side by side"
