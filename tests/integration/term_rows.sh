# SPDX-License-Identifier: Apache-2.0
# The terminal's final table shows ALL and NODE rows by default, with one
# line saying how to see the others; --rows LIST adds GROUP, WORKER and
# TARGET rows; a bad LIST is refused naming the word; the result files keep
# every row whatever --rows says. Null engine, the local agent, 2 groups of
# 2 workers with 2 targets each (1 + 2 + 1 + 4 + 8 = 16 rows a test).
source "$(dirname "$0")/lib/common.bash"

RUNOPTS=(--no-db --set run.duration=200ms --set run.ramp=0s --set run.interval=100ms
    --workdir "$T/w")

plan p.json <<'EOF'
{
  "name": "rows",
  "specs": [{"name": "4k read", "lines": [{"size": "4k", "read": 100, "random": 100}]}],
  "workers": [
    {"name": "ga", "count": 2, "engine": "null", "queue_depth": 1,
     "targets": [{"path": "a0.dat", "size": "1m"}, {"path": "a1.dat", "size": "1m"}]},
    {"name": "gb", "count": 2, "engine": "null", "queue_depth": 1,
     "targets": [{"path": "b0.dat", "size": "1m"}, {"path": "b1.dat", "size": "1m"}]}
  ]
}
EOF

# types FILE: the row types of the table in FILE, with their counts, "ALL:1 NODE:1".
types() {
    awk '$1 ~ /^(ALL|GROUP|NODE|WORKER|TARGET)$/ { n[$1]++ }
         END { for (t in n) print t ":" n[t] }' "$1" | sort | tr '\n' ' ' | sed 's/ $//'
}
# csv_types FILE: the same for the rows of a --csv file.
csv_types() {
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "row_type") c = i; next }
             { n[$c]++ } END { for (t in n) print t ":" n[t] }' "$1" | sort | tr '\n' ' ' |
        sed 's/ $//'
}
expect_types() { # WHAT WANT FILE
    local got
    got=$(types "$3")
    [ "$got" = "$2" ] || { cat "$3"; fail "$1: rows $got, want $2"; }
}

# --- default: ALL and NODE only, and the line on how to see the others.
expect_rc 0 "$IOFLEET" run "$T/p.json" "${RUNOPTS[@]}" --csv "$T/d.csv"
cp "$T/out" "$T/d.out"
expect_types "default" "ALL:1 NODE:1" "$T/d.out"
expect_in "$T/d.out" "  not shown: GROUP, WORKER and TARGET rows (--rows group,worker,target or --rows all shows them); every row is in $T/d.csv"
[ "$(csv_types "$T/d.csv")" = "ALL:1 GROUP:2 NODE:1 TARGET:8 WORKER:4" ] ||
    fail "default: the CSV lost rows: $(csv_types "$T/d.csv")"
ok "default: $(types "$T/d.out") on the terminal, $(csv_types "$T/d.csv") in the CSV"

# --- --rows worker: WORKER rows too, and the line names what is still hidden.
expect_rc 0 "$IOFLEET" run "$T/p.json" "${RUNOPTS[@]}" --rows worker
expect_types "--rows worker" "ALL:1 NODE:1 WORKER:4" "$T/out"
expect_in "$T/out" "  not shown: GROUP and TARGET rows (--rows group,target or --rows all shows them)"
# Each WORKER row names its node and worker.
for w in w0 w1 w2 w3; do
    awk -v n="local/$w" '$1 == "WORKER" && $2 == n { f = 1 } END { exit !f }' "$T/out" ||
        { cat "$T/out"; fail "--rows worker: no WORKER row local/$w"; }
done
ok "--rows worker: $(types "$T/out")"

# --- --rows target,group and --rows all: every row; no line about hidden rows.
expect_rc 0 "$IOFLEET" run "$T/p.json" "${RUNOPTS[@]}" --rows target,group
expect_types "--rows target,group" "ALL:1 GROUP:2 NODE:1 TARGET:8" "$T/out"
expect_rc 0 "$IOFLEET" run "$T/p.json" "${RUNOPTS[@]}" --rows all --csv "$T/a.csv"
expect_types "--rows all" "ALL:1 GROUP:2 NODE:1 TARGET:8 WORKER:4" "$T/out"
if grep -q 'not shown' "$T/out"; then fail "--rows all: a line says rows are hidden"; fi
[ "$(csv_types "$T/a.csv")" = "$(csv_types "$T/d.csv")" ] ||
    fail "the CSV differs with --rows all: $(csv_types "$T/a.csv")"
ok "--rows all: $(types "$T/out"); the CSV has the same rows as without --rows"

# --- bad lists: exit 2, one line naming the word, nothing run.
for bad in bogus "worker,," "" node "worker,TARGET"; do
    expect_rc 2 "$IOFLEET" run "$T/p.json" "${RUNOPTS[@]}" --rows "$bad" --csv "$T/bad.csv"
    word=${bad##*,}
    [ "$bad" = "worker,," ] && word=
    expect_in "$T/err" "--rows: '$word' is not a row type: a comma separated list of group, worker, target, or all"
    [ ! -e "$T/bad.csv" ] || fail "--rows '$bad': a result file was created"
done
ok "bad --rows lists: exit 2: $(head -n1 "$T/err")"
