# SPDX-License-Identifier: Apache-2.0
# History housekeeping: runs rm of ranges and by tag, runs prune
# (--older-than, --keep, --tag, --dry-run), runs tag, and the file compacted
# after a removal (a removal used to leave the file at its old size).
source "$(dirname "$0")/lib/common.bash"
command -v python3 >/dev/null || skip "python3 not installed"

ids() { sql "$db" 'SELECT group_concat(id) FROM (SELECT id FROM runs ORDER BY id)'; }
size() { stat -c %s "$db"; }

plan p.json <<'P'
{"name": "hk", "run": {"ramp": "1s", "duration": "3s", "interval": "100ms"},
 "specs": [{"name": "a", "lines": [{"size": "4k", "burst": 8, "delay": "1ms"}]}],
 "workers": [{"engine": "null", "queue_depth": 2, "targets": [{"path": "n", "size": "1m"}]}]}
P
expect_rc 0 "$IOFLEET" run "$T/p.json" --workdir "$T/w" --quiet --no-db --json "$T/r.json"
db=$T/runs.db
for i in $(seq 1 12); do
    tag=even
    [ $((i % 2)) = 1 ] && tag=odd
    expect_rc 0 "$IOFLEET" runs --db "$db" import "$T/r.json" --tag "$tag"
done
[ "$(ids)" = "1,2,3,4,5,6,7,8,9,10,11,12" ] || fail "imported: $(ids)"

# rm of a range and an id, and a range with nothing in it.
expect_rc 0 "$IOFLEET" runs --db "$db" rm 2-4 12 --dry-run
expect_in "$T/out" "would remove run 4"
[ "$(ids)" = "1,2,3,4,5,6,7,8,9,10,11,12" ] || fail "--dry-run removed runs: $(ids)"
big=$(size)
expect_rc 0 "$IOFLEET" runs --db "$db" rm 2-4 12
expect_in "$T/out" "removed run 3"
expect_in "$T/out" "$db: "
[ "$(ids)" = "1,5,6,7,8,9,10,11" ] || fail "rm 2-4 12 left $(ids)"
small=$(size)
# A third of the runs gone frees most of a third of the pages; the schema's
# and indexes' own pages stay, and the rows' sizes move the ratio by a page
# or two (76 % measured with the 1.6 result fields): at most 5/6 is left.
[ "$small" -lt $((big * 5 / 6)) ] || fail "rm of 4 of 12 runs left the file at $small bytes (was $big)"
[ "$(sql "$db" 'SELECT count(*) FROM tests WHERE run_id NOT IN (SELECT id FROM runs)')" = 0 ] ||
    fail "rm left tests of removed runs"
expect_rc 1 "$IOFLEET" runs --db "$db" rm 2-4
expect_in "$T/err" "no run in 2-4"
ok "rm 2-4 12: four runs gone, the file compacted from $big to $small bytes; an empty range is an error"

# rm --tag: every run with the tag; with ids, those of them with the tag.
expect_rc 0 "$IOFLEET" runs --db "$db" rm 5-8 --tag even
[ "$(ids)" = "1,5,7,9,10,11" ] || fail "rm 5-8 --tag even left $(ids)"
expect_rc 0 "$IOFLEET" runs --db "$db" rm --tag even
[ "$(ids)" = "1,5,7,9,11" ] || fail "rm --tag even left $(ids)"
expect_rc 1 "$IOFLEET" runs --db "$db" rm --tag even
expect_in "$T/err" "no run with tag even"
ok "rm --tag: by tag alone and within ranges"

# runs tag: retag and untag.
expect_rc 0 "$IOFLEET" runs --db "$db" tag 9 golden
expect_in "$T/out" "run 9 tagged golden"
expect_rc 0 "$IOFLEET" runs --db "$db" tag 11 ''
[ "$(sql "$db" "SELECT count(*) FROM runs WHERE id = 9 AND tag = 'golden'")" = 1 ] || fail "tag 9 golden"
[ "$(sql "$db" 'SELECT count(*) FROM runs WHERE id = 11 AND tag IS NULL')" = 1 ] || fail "untag 11"
expect_rc 1 "$IOFLEET" runs --db "$db" tag 99 x
expect_in "$T/err" "no run 99"
expect_rc 2 "$IOFLEET" runs --db "$db" tag 9 42
expect_in "$T/err" "a tag cannot be a number"
ok "runs tag ID NAME retags, '' untags, a missing run or a numeric tag is refused"

# prune: runs 1 and 5 started 40 days ago, 7 10 days ago.
sql "$db" "UPDATE runs SET start_unix_ns = start_unix_ns - 40 * 86400000000000 WHERE id IN (1, 5)" >/dev/null
sql "$db" "UPDATE runs SET start_unix_ns = start_unix_ns - 10 * 86400000000000 WHERE id = 7" >/dev/null
expect_rc 0 "$IOFLEET" runs --db "$db" prune --older-than 30d --dry-run
[ "$(grep -c 'would remove run' "$T/out")" = 2 ] || fail "prune --dry-run: $(cat "$T/out")"
expect_rc 0 "$IOFLEET" runs --db "$db" prune --older-than 4w
[ "$(ids)" = "7,9,11" ] || fail "prune --older-than 4w left $(ids)"
expect_rc 0 "$IOFLEET" runs --db "$db" prune --older-than 1d --keep 2
[ "$(ids)" = "9,11" ] || fail "prune --older-than 1d --keep 2 left $(ids)"
expect_rc 0 "$IOFLEET" runs --db "$db" prune --keep 1
[ "$(ids)" = "11" ] || fail "prune --keep 1 left $(ids)"
expect_rc 0 "$IOFLEET" runs --db "$db" prune --keep 1
expect_in "$T/out" "no run to prune"
ok "prune --older-than, --keep, both, and nothing to do"

expect_rc 2 "$IOFLEET" runs --db "$db" prune
expect_in "$T/err" "prune needs --older-than DURATION or --keep N"
expect_rc 2 "$IOFLEET" runs --db "$db" prune --older-than 30
expect_in "$T/err" "--older-than must be a number and s, m, h, d or w (30d), got '30'"
expect_rc 2 "$IOFLEET" runs --db "$db" rm 7-3
expect_in "$T/err" "rm takes run ids and ranges (3, 3-7), got '7-3'"
expect_rc 2 "$IOFLEET" runs --db "$db" rm 3 --keep 2
expect_in "$T/err" "--keep goes with prune"
expect_rc 2 "$IOFLEET" runs --db "$db" prunee --keep 2
expect_in "$T/err" "did you mean 'prune'"
ok "usage errors name the option and the reason"
