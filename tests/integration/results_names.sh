# SPDX-License-Identifier: Apache-2.0
# Result file names with {date} and {run}: each run gets its own files
# instead of being refused for an existing one (docs/results.md, "File
# names"). {run} is the run's id in the history (the same id `iofleet runs`
# lists), or with --no-db the first number that names no existing file;
# {date} the run's start in UTC. An unknown placeholder is a usage error, and
# a fixed name is still refused when it exists.
source "$(dirname "$0")/lib/common.bash"

plan p.json <<'P'
{"name": "names", "run": {"ramp": "1s", "duration": "1s", "interval": "1s"},
 "specs": [{"name": "r", "lines": [{"size": "4k", "read": 100, "random": 100}]}],
 "workers": [{"nodes": ["*"], "count": 1, "engine": "null", "queue_depth": 1,
              "targets": [{"path": "n.dat", "size": "1m"}]}]}
P
cd "$T"

# --no-db: a counter, the first number no file of this run has.
for i in 1 2 3; do
    expect_rc 0 "$IOFLEET" run p.json --no-db --csv 'r-{run}.csv' --json 'r-{run}.json'
done
for i in 1 2 3; do
    [ -s "r-$i.csv" ] && [ -s "r-$i.json" ] || fail "r-$i.csv/json missing: $(ls)"
done
expect_in "$T/err" "iofleet: --csv r-3.csv"
expect_in "$T/err" "iofleet: --json r-3.json"
rm r-2.json # one of the pair is enough to take the number
expect_rc 0 "$IOFLEET" run p.json --no-db --csv 'r-{run}.csv' --json 'r-{run}.json' --quiet
[ -s r-4.csv ] || fail "a half-taken number was reused: $(ls)"
! grep -q "iofleet: --csv" "$T/err" || fail "--quiet still names the files"
ok "--no-db: {run} counts 1, 2, 3, skips a number a file of the run has"

# With the history: the run's id, as iofleet runs lists it.
expect_rc 0 "$IOFLEET" run p.json --db h.db --csv 'h-{run}.csv' --timeseries 'h-{run}-ts.csv' \
    --iometer-csv 'h-{run}-iometer.csv'
expect_rc 0 "$IOFLEET" run p.json --db h.db --csv 'h-{run}.csv' --tag second
expect_rc 0 "$IOFLEET" runs --db h.db --json
ids=$(jq -r '[.[].id] | sort | map(tostring) | join(" ")' "$T/out")
[ "$(echo "$ids" | wc -w)" = 2 ] || fail "expected 2 runs in the history, got '$ids'"
first=${ids%% *} second=${ids##* }
[ -s "h-$first.csv" ] && [ -s "h-$first-ts.csv" ] && [ -s "h-$first-iometer.csv" ] &&
    [ -s "h-$second.csv" ] || fail "files not named by run id ($ids): $(ls)"
jq -e --argjson i "$second" '.[] | select(.id == $i) | .tag == "second"' "$T/out" >/dev/null ||
    fail "run $second is not the tagged one: $(cat "$T/out")"
ok "{run} is the history's run id ($ids)"

# A run refused before it starts takes no id and leaves no run behind.
: >exists.csv
expect_rc 2 "$IOFLEET" run p.json --db h.db --csv exists.csv --json 'h-{run}.json'
expect_in "$T/err" "--csv exists.csv: the file exists"
expect_rc 0 "$IOFLEET" runs --db h.db --json
[ "$(jq length "$T/out")" = 2 ] || fail "a refused run is in the history: $(cat "$T/out")"
ok "a refused run leaves no row in the history"

# {date}: UTC, to the second, no ':' or space.
expect_rc 0 "$IOFLEET" run p.json --no-db --csv 'd-{date}.csv'
f=$(ls d-*.csv)
[[ "$f" =~ ^d-[0-9]{8}T[0-9]{6}Z\.csv$ ]] || fail "{date} gave '$f'"
ok "{date}: $f"

# Placeholders that are not ones, and fixed names, are refused.
expect_rc 2 "$IOFLEET" run p.json --no-db --csv 'x-{dat}.csv'
expect_in "$T/err" "--csv x-{dat}.csv: unknown placeholder at '{dat}.csv' (the names may hold {date} and {run})"
[ ! -e 'x-{dat}.csv' ] || fail "a file was made with an unknown placeholder"
expect_rc 2 "$IOFLEET" run p.json --no-db --csv r-1.csv
expect_in "$T/err" "--csv r-1.csv: the file exists"
ok "an unknown placeholder and an existing fixed name are refused (exit 2)"
