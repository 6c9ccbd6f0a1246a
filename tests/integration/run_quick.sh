# SPDX-License-Identifier: Apache-2.0
# The quick form: `iofleet run/validate --spec ... --target ...` without a plan
# file is the same plan as the file --print-plan writes (validate lists the
# same tests), runs one test per --spec, and refuses bad options with one line.
source "$(dirname "$0")/lib/common.bash"

quick=(--spec 4k,read=70 --spec 64k,random=0,align=64k --target a.dat:8m
    --target b.dat:4m --queue-depth 4 --workers 2 --engine null --duration 1s
    --ramp 200ms)

expect_rc 0 "$IOFLEET" run "${quick[@]}" --print-plan
cp "$T/out" "$T/quick.json"
jq -e --arg a "$T/a.dat" '.specs | length == 2' "$T/quick.json" >/dev/null ||
    fail "two specs expected: $(cat "$T/quick.json")"
jq -e --arg a "a.dat" '.workers[0] | .count == 2 and .queue_depth == 4 and .engine == "null"
    and .targets[0].path == $a and .targets[0].size == "8m" and (.targets | length) == 2' \
    "$T/quick.json" >/dev/null || fail "worker group: $(cat "$T/quick.json")"
jq -e '.specs[0].name == "4k 70% read 100% random" and .specs[1].lines[0].align == "64k"
    and .run.duration == "1s" and .run.ramp == "200ms"' "$T/quick.json" >/dev/null ||
    fail "specs and run: $(cat "$T/quick.json")"
ok "--print-plan writes the plan of the quick options"

# The same expanded tests as the file it printed.
expect_rc 0 "$IOFLEET" validate "${quick[@]}"
sed 1d "$T/out" >"$T/v-quick"
expect_rc 0 "$IOFLEET" validate "$T/quick.json"
sed 1d "$T/out" >"$T/v-file"
diff -u "$T/v-file" "$T/v-quick" || fail "validate of the quick form differs from its plan file"
ok "quick form = the plan file it prints (validate lists the same tests)"

# It runs: one table per --spec, the files where --target says.
expect_rc 0 "$IOFLEET" run "${quick[@]}" --workdir "$T/work" --quiet --csv "$T/q.csv"
[ "$(grep -c '^== test' "$T/out")" = 2 ] || fail "expected 2 result tables: $(cat "$T/out")"
expect_in "$T/out" "== test 1/2: 4k 70% read 100% random"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    $c["row_type"] == "ALL" && $c["read_ios"] + $c["write_ios"] > 0 { n++ }
    END { exit n != 2 }' "$T/q.csv" ||
    fail "two ALL rows with I/O expected in the CSV"
ok "a quick run: one test per --spec"

# Defaults: one 1g test file in the workdir, 10s, qd 1, one worker.
expect_rc 0 "$IOFLEET" run --spec 512 --print-plan
jq -e '.workers[0].targets == [{"path": "iofleet-quick.dat", "size": "1g"}]
    and .run.duration == "10s" and (.workers[0] | has("queue_depth") | not)' "$T/out" \
    >/dev/null || fail "defaults: $(cat "$T/out")"
ok "defaults: iofleet-quick.dat of 1g, 10s"

# The quick form's --print-plan is the plan the run uses, --set and --unset
# applied: the same, key for key, as the plan the run records in --json.
qs=(--spec "4k,read=70" --target a.dat:8m --engine null --duration 2s --ramp 200ms
    --set run.duration=1s --set 'workers[0].queue_depth=3' --unset run.ramp)
expect_rc 0 "$IOFLEET" run "${qs[@]}" --print-plan
cp "$T/out" "$T/qs.json"
jq -e '.run.duration == "1s" and (.run | has("ramp") | not) and .workers[0].queue_depth == 3' \
    "$T/qs.json" >/dev/null || fail "--set/--unset not in the quick form's printed plan: $(cat "$T/qs.json")"
expect_rc 0 "$IOFLEET" run "${qs[@]}" --workdir "$T/work" --quiet --no-db --json "$T/qs-run.json"
jq -e --slurpfile p "$T/qs.json" '.plan == $p[0]' "$T/qs-run.json" >/dev/null ||
    fail "the printed plan is not the run's: $(jq -c .plan "$T/qs-run.json") vs $(jq -c . "$T/qs.json")"
ok "--print-plan of the quick form is the plan the run uses, overrides applied"

# A plan file's --print-plan: the plan with the overrides applied.
expect_rc 0 "$IOFLEET" validate "$IOF_SRC/configs/quickstart.json" --set run.duration=3s --print-plan
jq -e '.run.duration == "3s"' "$T/out" >/dev/null || fail "override not in the printed plan"
ok "--print-plan of a file shows the overrides applied"

# Bad input: one line each, exit 2, nothing run.
expect_rc 2 "$IOFLEET" run --spec 4k,raed=70
expect_in "$T/err" "iofleet: --spec '4k,raed=70': unknown key 'raed' (read, random, align, distribution)"
expect_rc 2 "$IOFLEET" run --spec read=70
expect_in "$T/err" "--spec 'read=70': starts with the I/O size (e.g. 4k), then KEY=VALUE"
expect_rc 2 "$IOFLEET" run --spec 4k --queue-depth many
expect_in "$T/err" "iofleet: --queue-depth must be a whole number, got 'many'"
expect_rc 2 "$IOFLEET" run --spec 4k,read=170 --engine null
expect_in "$T/err" "the command line: specs[0].lines[0].read: must be 0..100, got 170"
expect_rc 2 "$IOFLEET" run --target /dev/null
expect_in "$T/err" "a plan from the command line needs --spec"
expect_rc 2 "$IOFLEET" run "$IOF_SRC/configs/quickstart.json" --spec 4k
expect_in "$T/err" "give a PLAN.json or --spec and its options, not both"
[ ! -e "$T/work/iofleet-quick.dat" ] || fail "a refused quick run created a file"
ok "bad quick options refused with one line, exit 2"

# fio's unit spellings are sizes; a bare number is not a duration.
expect_rc 0 "$IOFLEET" validate --spec 4kb --spec 8KiB,random=0 --target f.dat:1MB --engine null \
    --duration 3s --print-plan
jq -e '.specs[0].lines[0].size == "4kb" and .specs[1].lines[0].size == "8KiB"
    and .workers[0].targets[0].path == "f.dat" and .workers[0].targets[0].size == "1MB"' \
    "$T/out" >/dev/null || fail "fio spellings: $(cat "$T/out")"
expect_rc 0 "$IOFLEET" validate --spec 4kb --target f.dat:1MiB --engine null --duration 3s
expect_in "$T/out" "spec 0 '4kb 100% read 100% random'"
expect_rc 2 "$IOFLEET" validate --spec 4k --target f.dat:1m --engine null --duration 3
expect_in "$T/err" "run.duration: invalid duration '3': missing unit (ms, s, m or h); did you mean \"3s\"?"
ok "--spec 4kb, --target f.dat:1MiB accepted; --duration 3 refused with 'did you mean \"3s\"?'"
