# SPDX-License-Identifier: Apache-2.0
# The terminal as a person sees it: `iofleet run` in a real terminal (tmux)
# 140 and 80 columns wide, the screen captured with wrapped lines joined.
# No line is wider than the terminal (a wrapped table row or live line would
# be), table rows keep their column count, latencies carry their units, a
# narrow terminal says which columns it left out and where every row is, and
# the ramp line and the whole run's ETA are on screen.
source "$(dirname "$0")/lib/common.bash"
command -v tmux >/dev/null || skip "tmux not installed (scripts/deps test)"

SOCK=$T/tmux.sock
iof_on_exit "tmux -S '$SOCK' kill-server 2>/dev/null"

# plan NAME TARGET: two short tests of the null engine on one target file.
mkplan() {
    plan "$1" <<P
{"name": "term", "run": {"ramp": "1s", "duration": "1s", "interval": "500ms"},
 "specs": [{"name": "4k 70/30", "lines": [{"size": "4k", "read": 70, "random": 100, "burst": 64, "delay": "1ms"}]},
           {"name": "64k read", "lines": [{"size": "64k", "read": 100, "burst": 64, "delay": "1ms"}]}],
 "workers": [{"count": 2, "engine": "null", "queue_depth": 4,
              "targets": [{"path": "$2", "size": "1m"}]}]}
P
}
mkplan short.json a.dat
mkplan long.json a-rather-long-name-for-a-test-file-of-this-run.dat

# screen TAG WIDTH PLAN: runs the plan in a WIDTH x 50 terminal; the screen,
# wrapped lines joined, goes to $T/TAG.screen.
screen() {
    local tag=$1 w=$2 p=$3
    printf '%s\n' "cd '$T' && '$IOFLEET' run '$p' --no-db --rows worker,target --csv '$tag.csv'; echo \$? >'$tag.rc'" \
        >"$T/$tag.sh"
    rm -f "$T/$tag.rc"
    tmux -S "$SOCK" new-session -d -s "$tag" -x "$w" -y 50 -c "$T" \
        "env LANG=C.UTF-8 bash --norc --noprofile"
    tmux -S "$SOCK" send-keys -t "$tag" "bash $tag.sh" Enter
    for _ in $(seq 600); do
        [ -s "$T/$tag.rc" ] && break
        sleep 0.1
    done
    [ -s "$T/$tag.rc" ] || fail "$tag: iofleet run did not finish within 60 s"
    sleep 0.2
    tmux -S "$SOCK" capture-pane -p -J -S - -t "$tag" >"$T/$tag.screen"
    tmux -S "$SOCK" kill-session -t "$tag"
    [ "$(cat "$T/$tag.rc")" = 0 ] || { cat "$T/$tag.screen"; fail "$tag: exit $(cat "$T/$tag.rc")"; }
}

# on_screen TAG TEXT: TEXT is on the screen, maybe broken over lines.
on_screen() {
    tr '\n' ' ' <"$T/$1.screen" | tr -s ' ' | grep -qF -- "$2" ||
        { cat "$T/$1.screen"; fail "$1: '$2' not on the screen"; }
}

# check TAG WIDTH: what a person must be able to read on the screen.
check() {
    local tag=$1 w=$2 s=$T/$1.screen wide
    # Columns, not bytes: µ is one column (awk may count bytes).
    wide=$(sed 's/µ/u/g' "$s" | awk -v w="$w" '{ if (length($0) > w) print length($0) ": " $0 }')
    [ -z "$wide" ] || { cat "$s"; fail "$tag: lines wider than $w columns (wrapped): $wide"; }
    # Every row as many fields as its header, the last one the error count.
    awk '$1 == "row" { n = NF; next }
         $1 ~ /^(ALL|NODE|WORKER|TARGET)$/ { rows++; if (NF != n || $NF !~ /^[0-9]+$/) bad = bad "\n" $0 }
         END { if (!rows) bad = "no rows"; if (bad) { print bad; exit 1 } }' "$s" ||
        { cat "$s"; fail "$tag: a table row is broken"; }
    # The latencies (avg, the column after the IOPS figures) carry units.
    awk '$1 == "row" { for (i = 1; i <= NF; i++) if ($i == "avg") c = i; next }
         $1 == "ALL" { n++; if ($c !~ /^[0-9.]+(ns|µs|ms|s)$/) { print $0; exit 1 } }
         END { exit !n }' "$s" || { cat "$s"; fail "$tag: no latency with its unit under avg"; }
    grep -qE '^\[run\] test 2/2 .* avg [0-9.]+(ns|µs|ms|s)( |$)' "$s" ||
        { cat "$s"; fail "$tag: no live line with a latency in units"; }
    grep -qE '^\[run\] test 2/2 .*  ETA 0s' "$s" ||
        { cat "$s"; fail "$tag: no live line with the run's ETA"; }
    [ "$(grep -c '^== test' "$s")" = 2 ] || { cat "$s"; fail "$tag: expected 2 tables"; }
}

screen wide 140 short.json
check wide 140
grep -q '^row .* read_IOPS .* p50 .* p99.9 .* errors$' "$T/wide.screen" ||
    { cat "$T/wide.screen"; fail "140 columns: not every column shown for short names"; }
if grep -q 'left out' "$T/wide.screen"; then fail "140 columns: a column left out that fits"; fi
ok "140 columns: every column, latencies in units: $(grep -m1 '^ALL' "$T/wide.screen")"

screen widelong 140 long.json
check widelong 140
grep -q "local/w0:a-rather-long-name-for-a-test-file-of-this-run.dat " "$T/widelong.screen" ||
    { cat "$T/widelong.screen"; fail "140 columns: a long name was cut although it fits"; }
on_screen widelong "left out to fit 140 columns: read_IOPS, write_IOPS; every column and row is in widelong.csv"
ok "140 columns, long names: $(grep -m1 'left out' "$T/widelong.screen")"

screen narrow 80 long.json
check narrow 80
grep -q '^TARGET  local/w0:a-.*~.*run.dat ' "$T/narrow.screen" ||
    { cat "$T/narrow.screen"; fail "80 columns: a long name not cut in the middle"; }
on_screen narrow "left out to fit 80 columns:"
on_screen narrow "long names cut with '~'; every column and row is in narrow.csv"
grep -q '^row .*IOPS .*avg .*errors$' "$T/narrow.screen" ||
    { cat "$T/narrow.screen"; fail "80 columns: IOPS, avg or errors left out"; }
# The CSV keeps every column whatever the terminal.
head -n1 "$T/narrow.csv" | grep -q 'read_iops,write_iops' || fail "80 columns: the CSV lost columns"
ok "80 columns: $(grep -m1 "^row" "$T/narrow.screen")"
ok "80 columns: $(grep -m1 "^TARGET" "$T/narrow.screen")"
ok "80 columns: $(grep -m1 '^\[run\] test 2/2' "$T/narrow.screen")"

# Not a terminal: the full table, every column, whatever $COLUMNS says.
COLUMNS=60 "$IOFLEET" run "$T/long.json" --rows all --csv "$T/pipe.csv" >"$T/pipe.out" 2>"$T/pipe.err" ||
    fail "piped run failed: $(cat "$T/pipe.err")"
grep -q '^row  *name  *IOPS  *read_IOPS  *write_IOPS  *MiB/s  *avg  *p50  *p99  *p99.9  *max  *errors$' \
    "$T/pipe.out" || { cat "$T/pipe.out"; fail "piped: not the full table"; }
if grep -q 'left out' "$T/pipe.out"; then fail "piped: columns left out"; fi
ok "not a terminal: the full table"
