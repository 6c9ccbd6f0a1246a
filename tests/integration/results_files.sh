# SPDX-License-Identifier: Apache-2.0
# Result files from a real two-agent run: every writer's output parsed and
# cross-checked (ALL = sum of NODE = sum of WORKER, exactly, on counts), the
# Iometer header byte for byte, a Ctrl-C'd run still leaves valid files with
# every finished test, and an unwritable path fails before anything runs.
source "$(dirname "$0")/lib/common.bash"
command -v jq >/dev/null || skip "jq not installed"

start_agent() { # NAME -> appends its endpoint to AGENTS
    iof_start_agent "$1" --name "$1"
    AGENTS+=(--insecure --agent "$AGENT_EP")
}
AGENTS=()
start_agent alpha
start_agent beta

plan p.json <<'P'
{"name": "files", "run": {"ramp": "200ms", "duration": "1s", "interval": "250ms"},
 "specs": [{"name": "4k 70/30", "lines": [{"size": "4k", "read": 70, "random": 100, "burst": 64, "delay": "1ms"}]},
           {"name": "64k seq read", "lines": [{"size": "64k", "read": 100, "random": 0, "burst": 64, "delay": "1ms"}]}],
 "workers": [{"count": 2, "engine": "null", "queue_depth": 4,
              "targets": [{"path": "a.dat", "size": "16m"}, {"path": "b.dat", "size": "16m"}]}]}
P
out=$T/r
expect_rc 0 "$IOFLEET" run "$T/p.json" "${AGENTS[@]}" --quiet \
    --csv "$out.csv" --timeseries "$out-ts.csv" --iometer-csv "$out-iom.csv" --json "$out.json"

# --- plain CSV ---------------------------------------------------------------------------
head -n1 "$out.csv" | grep -q '^test,spec,cycle,row_type,node,worker,target,queue_depth,duration_s,iops,read_iops,write_iops,mibps,read_mibps,write_mibps,avg_lat_ms,avg_read_lat_ms,avg_write_lat_ms,p50_lat_ms,p90_lat_ms,p95_lat_ms,p99_lat_ms,p999_lat_ms,p9999_lat_ms,max_lat_ms,read_ios,write_ios,bytes_read,bytes_written,errors,cpu_pct' ||
    fail "CSV header: $(head -n1 "$out.csv")"
# Names here hold no commas or quotes, so a field split is exact.
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
{
    t = $col["test"]; rt = $col["row_type"]
    r = $col["read_ios"]; w = $col["write_ios"]; b = $col["bytes_read"] + $col["bytes_written"]
    if (rt == "ALL") { ar[t] = r; aw[t] = w; ab[t] = b; n++ }
    else if (rt == "NODE") { nr[t] += r; nw[t] += w; nb[t] += b; nodes[t]++ }
    else if (rt == "WORKER") { wr[t] += r; ww[t] += w; workers[t]++ }
    else if (rt == "TARGET") { tr[t] += r; targets[t]++ }
    d = $col["iops"] - $col["read_iops"] - $col["write_iops"]
    if (d > 0.002 || d < -0.002) { print "iops != read + write in row " NR; bad = 1 }
    if ($col["p50_lat_ms"] != "" && ($col["p50_lat_ms"] > $col["p99_lat_ms"] || $col["p99_lat_ms"] > $col["max_lat_ms"])) {
        print "percentiles not monotone in row " NR; bad = 1 }
}
END {
    if (n != 2) { print "expected 2 ALL rows, got " n; exit 1 }
    for (t in ar) {
        if (ar[t] <= 0) { print "no reads in test " t; bad = 1 }
        if (ar[t] != nr[t] || aw[t] != nw[t] || ab[t] != nb[t]) { print "test " t ": ALL != sum NODE"; bad = 1 }
        if (ar[t] != wr[t] || aw[t] != ww[t] || ar[t] != tr[t]) { print "test " t ": ALL != sum WORKER/TARGET"; bad = 1 }
        if (nodes[t] != 2 || workers[t] != 4 || targets[t] != 8) { print "test " t ": row counts"; bad = 1 }
    }
    exit bad
}' "$out.csv" || fail "CSV checks"
ok "CSV: ALL = sum NODE = sum WORKER = sum TARGET on every count"

# --- time series: ALL rows are the sum of node rows, intervals sum to the totals --------
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
{
    key = $col["test"] "/" $col["interval"]
    ios = $col["read_ios"] + $col["write_ios"]
    if ($col["node"] == "ALL") { all[key] = ios; tot[$col["test"]] += ios } else node[key] += ios
}
END { for (k in all) if (all[k] != node[k]) { print "interval " k ": ALL " all[k] " != nodes " node[k]; bad = 1 }
      for (t in tot) print t, tot[t] > "/dev/stderr"; exit bad }' "$out-ts.csv" 2>"$T/ts-totals" ||
    fail "time series checks"
while read -r t ios; do
    want=$(awk -F, -v t="$t" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        $col["test"] == t && $col["row_type"] == "ALL" { print $col["read_ios"] + $col["write_ios"] }' "$out.csv")
    [ "$ios" = "$want" ] || fail "test $t: intervals sum to $ios, the result says $want"
done <"$T/ts-totals"
ok "time series: intervals sum exactly to each test's totals"

# --- Iometer CSV -------------------------------------------------------------------------
iom_header="'Target Type,Target Name,Access Specification Name,# Managers,# Workers,# Disks,IOps,Read IOps,Write IOps,MiBps (Binary),Read MiBps (Binary),Write MiBps (Binary),MBps (Decimal),Read MBps (Decimal),Write MBps (Decimal),Transactions per Second,Connections per Second,Average Response Time,Average Read Response Time,Average Write Response Time,Average Transaction Time,Average Connection Time,Maximum Response Time,Maximum Read Response Time,Maximum Write Response Time,Maximum Transaction Time,Maximum Connection Time,Errors,Read Errors,Write Errors,Bytes Read,Bytes Written,Read I/Os,Write I/Os,Connections,Transactions per Connection,Total Raw Read Response Time,Total Raw Write Response Time,Total Raw Transaction Time,Total Raw Connection Time,Maximum Raw Read Response Time,Maximum Raw Write Response Time,Maximum Raw Transaction Time,Maximum Raw Connection Time,Total Raw Run Time,Starting Sector,Maximum Size,Queue Depth,% CPU Utilization,% User Time,% Privileged Time,% DPC Time,% Interrupt Time,Processor Speed,Interrupts per Second,CPU Effectiveness,Packets/Second,Packet Errors,Segments Retransmitted/Second,0 to 50 uS,50 to 100 uS,100 to 200 uS,200 to 500 uS,0.5 to 1 mS,1 to 2 mS,2 to 5 mS,5 to 10 mS,10 to 15 mS,15 to 20 mS,20 to 30 mS,30 to 50 mS,50 to 100 mS,100 to 200 mS,200 to 500 mS,0.5 to 1 S,1 to 2 s,2 to 4.7 s,4.7 to 5 s,5 to 10 s, >= 10 s"
[ "$(tr -d '\r' <"$out-iom.csv" | grep -c -xF "$iom_header")" = 2 ] || fail "Iometer header missing or different"
tr -d '\r' <"$out-iom.csv" | awk -F, '/^(ALL|MANAGER|WORKER|DISK),/ {
    if (NF != 80) { print "row with " NF " fields: " $1; bad = 1 }
    bins = 0; for (i = 60; i <= 80; i++) bins += $i
    if (bins != $33 + $34) { print $1 " " $2 ": bins " bins " != I/Os " $33 + $34; bad = 1 }
    if ($1 == "ALL") all += $33 + $34; if ($1 == "MANAGER") mgr += $33 + $34; rows++
} END { if (!rows || all != mgr) { print "ALL " all " != sum MANAGER " mgr; bad = 1 } exit bad }' ||
    fail "Iometer CSV checks"
ok "Iometer CSV: 1.1.0 header, 80 columns, bins sum to the I/Os, ALL = sum MANAGER"
# The ALL row's CPU and network columns are the aggregate's (one rule for every
# file): on a real run still what this file always held, the mean of its MANAGER
# rows, each node figure only when every MANAGER row has it.
tr -d '\r' <"$out-iom.csv" | awk -F, '
/^.Results/ { inb = 1; m = 0; split("", sum); split("", cnt); allrow = ""; next }
inb && /^ALL,/ { allrow = $0; next }
inb && /^MANAGER,/ { m++; for (c = 49; c <= 59; c++) if ($c != "") { sum[c] += $c; cnt[c]++ } next }
inb && /^.Time Stamp/ {
    inb = 0; tests++; split(allrow, a, ",")
    for (c = 49; c <= 59; c++) {
        if (c == 54 || c == 56) continue  # Processor Speed, CPU Effectiveness
        if (cnt[c] == m && m > 0) {
            d = a[c] - sum[c] / m
            if (a[c] == "" || d > 2e-6 || d < -2e-6) { print "test " tests " column " c ": ALL " a[c] " != mean " sum[c] / m; bad = 1 }
        } else if (a[c] != "") { print "test " tests " column " c ": ALL " a[c] " without every node"; bad = 1 }
    }
    if (cnt[49] != 2) { print "test " tests ": " cnt[49] " MANAGER rows with CPU"; bad = 1 }
}
END { if (tests != 2) { print tests " tests"; bad = 1 } exit bad }' ||
    fail "Iometer CSV: the ALL row's CPU is not the mean of the MANAGER rows"
ok "Iometer CSV: the ALL row's CPU and node figures are the means of the MANAGER rows"

# --- JSON ----------------------------------------------------------------------------------
jq -e '.tests | length == 2' "$out.json" >/dev/null || fail "JSON: expected 2 tests"
jq -e '[.agents[].name] | sort == ["alpha", "beta"]' "$out.json" >/dev/null || fail "JSON: agents"
jq -e 'all(.tests[]; ([.results[] | select(.row_type == "ALL") | .read_ios + .write_ios] | add)
        == ([.results[] | select(.row_type == "NODE") | .read_ios + .write_ios] | add))' "$out.json" >/dev/null ||
    fail "JSON: ALL != sum NODE"
jq -e 'all(.tests[].results[]; (.latency.read.buckets | map(.[2]) | add // 0) == .read_ios)' "$out.json" >/dev/null ||
    fail "JSON: histogram counts != read_ios"
ok "JSON: both tests, agents, ALL = sum NODE, histograms hold every I/O"

# --- one name per figure: CSV = JSON = time series; Iometer as docs/results.md maps it ---
names() { # CSV JSON TS IOM
    python3 "$IOF_SRC/tests/integration/lib/names_check.py" "$IOF_SRC/docs/results.md" "$@" \
        >"$T/names" 2>"$T/names.err"
}
names "$out.csv" "$out.json" "$out-ts.csv" "$out-iom.csv" ||
    { cat "$T/names" "$T/names.err"; fail "the result files name a figure differently"; }
summary=$(cat "$T/names.err")
# Not blind: a JSON key under another name, an Iometer worker called w0, a figure that
# differs are each found.
jq -c '.tests[].results[] |= (.n_nodes = .nodes | del(.nodes))' "$out.json" >"$T/bad.json"
if names "$out.csv" "$T/bad.json" "$out-ts.csv" "$out-iom.csv"; then fail "n_nodes not found"; fi
expect_in "$T/names" "csv column 'nodes': no JSON key 'nodes' in its row"
sed 's/^WORKER,Worker 1,/WORKER,w0,/' "$out-iom.csv" >"$T/bad-iom.csv"
if names "$out.csv" "$out.json" "$out-ts.csv" "$T/bad-iom.csv"; then fail "Iometer w0 not found"; fi
expect_in "$T/names" "iometer WORKER w0: Target Name is not 'Worker 1'"
jq -c '.tests[0].results[0].read_ios += 1' "$out.json" >"$T/bad2.json"
if names "$out.csv" "$T/bad2.json" "$out-ts.csv" "$out-iom.csv"; then fail "a wrong figure not found"; fi
expect_in "$T/names" "'read_ios' = "
ok "one name per figure across CSV, JSON, time series and Iometer CSV: $summary"

# --- an interrupted run keeps every finished test -----------------------------------------
sed 's/"duration": "1s"/"duration": "3s"/' "$T/p.json" >"$T/long.json"
"$IOFLEET" run "$T/long.json" "${AGENTS[@]}" --quiet --csv "${out}2.csv" --json "${out}2.json" \
    --timeseries "${out}2-ts.csv" >"$T/int.out" 2>"$T/int.err" &
mpid=$!
iof_on_exit "kill -9 $mpid 2>/dev/null"
for _ in $(seq 200); do grep -q '^== test 1/2' "$T/int.out" && break; sleep 0.05; done
sleep 1
kill -INT "$mpid"
rc=0
wait "$mpid" || rc=$?
[ "$rc" = 130 ] || fail "interrupted run exited $rc"
[ "$(awk -F, '$4 == "ALL"' "${out}2.csv" | wc -l)" -ge 1 ] || fail "no ALL row after the interrupt"
awk -F, '$1 == 1 && $4 == "NODE"' "${out}2.csv" | grep -q . || fail "test 1 rows missing after the interrupt"
jq -e '.tests[0].complete == true and .run.exit_code == 130' "${out}2.json" >/dev/null ||
    fail "JSON after the interrupt: $(head -c 300 "${out}2.json")"
[ "$(wc -l <"${out}2-ts.csv")" -gt 1 ] || fail "no time series after the interrupt"
ok "Ctrl-C: exit 130, files valid with the finished test"

# --- unwritable path: refused before anything runs -----------------------------------------
expect_rc 2 "$IOFLEET" run "$T/p.json" "${AGENTS[@]}" --quiet --csv "$T/no/such/dir/x.csv"
expect_in "$T/err" "--csv $T/no/such/dir/x.csv: cannot create: No such file or directory"
if grep -q '^== test' "$T/out"; then fail "a test ran despite the unwritable path"; fi
ok "unwritable result path refused before the run"
