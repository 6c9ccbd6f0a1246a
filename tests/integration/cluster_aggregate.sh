# SPDX-License-Identifier: Apache-2.0
# Three loopback agents, two workers each: the cluster tables add up exactly
# (ALL = sum of NODE = sum of WORKER, read + write = IOPS in every row), the
# header names 3 nodes and a small start skew, and one live line per interval
# reports 3/3 agents. Then a file-target run with the sync engine: the test
# files are prepared over the network ("preparing" progress) in each agent's
# workdir, with the planned size and real blocks.
source "$(dirname "$0")/lib/cluster.bash"

cl_start_agents 3 node

# --- null engine ---------------------------------------------------------------------
# burst/delay keep the six workers from burning six cores (the tests run in
# parallel on small machines) while still doing tens of thousands of IOPS.
plan null.json <<'P'
{"name": "agg-null", "run": {"ramp": "300ms", "duration": "2s", "interval": "500ms"},
 "specs": [{"name": "4k 70r", "lines": [{"size": "4k", "read": 70, "random": 100,
                                         "burst": 32, "delay": "1ms"}]}],
 "workers": [{"nodes": ["*"], "count": 2, "engine": "null", "queue_depth": 4,
              "targets": [{"path": "nullt", "size": "1g"}]}]}
P
expect_rc 0 "$IOFLEET" run "$T/null.json" "${CL_AGENT_ARGS[@]}" --wait 10 --verbose \
    --rows worker,target
cp "$T/out" "$T/null.out"
cp "$T/err" "$T/null.err"
out=$T/null.out err=$T/null.err

[ "$(grep -c '^== test' "$out")" = 1 ] || cl_fail "expected 1 result table"
hdr=$(cl_header "$out")
case "$hdr" in
*"== test 1/1: 4k 70r"*"measured 2.000 s"*"  3 nodes, start skew "*" ms"*) ;;
*) cl_fail "unexpected header: $hdr" ;;
esac
case "$hdr" in *"agents lost"* | *INTERRUPTED*) cl_fail "unexpected note in header: $hdr" ;; esac
expect_in "$out" "row     name                             IOPS    read_IOPS   write_IOPS      MiB/s     avg     p50     p99   p99.9     max   errors"
[ "$(cl_rows "$out" ALL)" = 1 ] || cl_fail "expected 1 ALL row"
[ "$(cl_rows "$out" NODE)" = 3 ] || cl_fail "expected 3 NODE rows, got $(cl_rows "$out" NODE)"
[ "$(cl_rows "$out" WORKER)" = 6 ] || cl_fail "expected 6 WORKER rows, got $(cl_rows "$out" WORKER)"
[ "$(cl_rows "$out" TARGET)" = 6 ] || cl_fail "expected 6 TARGET rows, got $(cl_rows "$out" TARGET)"
for n in node-1 node-2 node-3; do
    awk -v n="$n" '$1=="NODE" && $2==n {f=1} END{exit !f}' "$out" || cl_fail "no NODE row for $n"
    for w in w0 w1; do
        awk -v n="$n/$w" '$1=="WORKER" && $2==n {f=1} END{exit !f}' "$out" ||
            cl_fail "no WORKER row $n/$w"
        awk -v n="$n/$w:nullt" '$1=="TARGET" && $2==n {f=1} END{exit !f}' "$out" ||
            cl_fail "no TARGET row $n/$w:nullt"
    done
done
sums=$(cl_check_sums "$out") || { echo "$sums"; cl_fail "sums do not add up"; }
all=$(row_field "$out" ALL 3)
awk -v i="$all" 'BEGIN { exit !(i > 1000) }' || cl_fail "ALL IOPS $all: no real load"
# Every node ran: no NODE row is empty, no errors anywhere.
awk '$1=="NODE" && $3 <= 0 {exit 1}' "$out" || cl_fail "a node has no I/O"
awk '($1=="ALL"||$1=="NODE"||$1=="WORKER"||$1=="TARGET") && $12 != 0 {exit 1}' "$out" ||
    cl_fail "errors reported"
skew=$(cl_skew_ms "$out")
[ -n "$skew" ] || cl_fail "no start skew in: $hdr"
awk -v s="$skew" 'BEGIN { exit !(s >= 0 && s < 100) }' || cl_fail "start skew $skew ms >= 100 ms"
ok "null: $sums, skew $skew ms"

# Live lines: 2 s / 500 ms = 4 intervals, each line on stderr with 3/3 agents;
# the last says so ("last interval").
expect_in "$err" "iofleet: 3 agents ready: node-1 node-2 node-3"
nlive=$(grep -c '^\[run\] test 1/1 ' "$err" || true)
[ "$nlive" = 4 ] || cl_fail "expected 4 live lines, got $nlive"
[ "$(grep '^\[run\]' "$err" | grep -c 'agents 3/3$')" = 4 ] || cl_fail "live lines without 'agents 3/3'"
for e in 0.5 1.0 1.5 2.0; do
    grep -qE "^\[run\] test 1/1 +$e/2\.0s( last interval)?  IOPS" "$err" || cl_fail "no live line at $e s"
done
if grep -q '^\[run\]' "$out"; then cl_fail "live lines on stdout"; fi
# Aligned intervals: every interval was merged from all three agents' reports
# (not published at its deadline with some missing).
for k in 0 1 2 3; do
    expect_in "$err" "iofleet: info: test 1 interval $k: 3 of 3 agents, published "
done
[ "$(grep -c 'iofleet: info: test 1 interval ' "$err")" = 4 ] || cl_fail "expected 4 merged intervals"
ok "4 live lines on stderr, agents 3/3, each interval merged from 3 of 3 agents"

# --- file targets, sync engine ---------------------------------------------------------
plan file.json <<'P'
{"name": "agg-file", "run": {"ramp": "200ms", "duration": "1s", "interval": "500ms"},
 "specs": [{"name": "4k rand", "lines": [{"size": "4k", "read": 50, "random": 100}]}],
 "workers": [{"nodes": ["*"], "count": 2, "engine": "sync", "queue_depth": 1,
              "targets": [{"path": "agg.dat", "size": "3m"}]}]}
P
expect_rc 0 "$IOFLEET" run "$T/file.json" "${CL_AGENT_ARGS[@]}" --wait 10 --rows worker,target
cp "$T/out" "$T/file.out"
cp "$T/err" "$T/file.err"
out=$T/file.out err=$T/file.err
for i in 0 1 2; do
    n=${CL_NAMES[$i]} f=${CL_WORKDIRS[$i]}/agg.dat
    expect_in "$err" "$n: preparing $f: 3 / 3 MiB"
    [ -f "$f" ] || cl_fail "$f was not created"
    size=$(stat -c %s "$f")
    [ "$size" = 3145728 ] || cl_fail "$f has $size bytes, expected 3145728"
    blocks=$(stat -c '%b * %B' "$f")
    [ $((blocks)) -ge 3145728 ] || cl_fail "$f is sparse ($((blocks)) bytes allocated)"
done
[ "$(cl_rows "$out" NODE)" = 3 ] || cl_fail "file: expected 3 NODE rows"
[ "$(cl_rows "$out" WORKER)" = 6 ] || cl_fail "file: expected 6 WORKER rows"
case "$(cl_header "$out")" in *"  3 nodes, start skew "*) ;; *) cl_fail "file header: $(cl_header "$out")" ;; esac
awk -v p="node-1/w0:agg.dat" '$1=="TARGET" && $2==p {f=1} END{exit !f}' "$out" ||
    cl_fail "no TARGET row node-1/w0:agg.dat"
sums=$(cl_check_sums "$out") || { echo "$sums"; cl_fail "file: sums do not add up"; }
awk '$1=="NODE" && $3 <= 0 {exit 1}' "$out" || cl_fail "file: a node has no I/O"
awk '($1=="ALL"||$1=="NODE") && $12 != 0 {exit 1}' "$out" || cl_fail "file: errors reported"
[ "$(grep -c '^\[run\] test 1/1 ' "$err")" = 2 ] || cl_fail "file: expected 2 live lines"
ok "file: prepared 3 x 3 MiB over the network; $sums"

# A second run reuses the files: no preparation.
expect_rc 0 "$IOFLEET" run "$T/file.json" "${CL_AGENT_ARGS[@]}" --wait 10 --set run.ramp=0s
if grep -q preparing "$T/err"; then cl_fail "test files prepared again"; fi
ok "test files reused"
