# SPDX-License-Identifier: Apache-2.0
# An agent lost mid-test: the manager names it within 3 heartbeats, finishes
# the test on the others and exits 1; the table has the survivors' NODE rows
# and the lost node's rows marked partial (what its intervals measured), a
# line saying it had no result, and in the result files ALL = the sum of
# every NODE exactly and the time series adds up to ALL exactly.
# 1. SIGKILL (the connection drops): reported at once.
# 2. SIGSTOP (the connection stays open, the agent goes silent): reported
#    after 3 missed heartbeats; resumed later, the agent serves again.
source "$(dirname "$0")/lib/cluster.bash"

hb=500
cl_start_agents 3 node --heartbeat-ms $hb

plan p.json <<'P'
{"name": "killed", "run": {"ramp": "300ms", "duration": "6s", "interval": "500ms"},
 "specs": [{"name": "4k", "lines": [{"size": "4k", "read": 70, "burst": 16, "delay": "1ms"}]}],
 "workers": [{"count": 2, "engine": "null", "queue_depth": 2, "targets": [{"path": "n", "size": "64m"}]}]}
P

# --- SIGKILL -----------------------------------------------------------------------------
t_start=$(cl_now_ms)
cl_spawn mgr "$T/k.out" "$T/k.err" "$IOFLEET" run "$T/p.json" "${CL_AGENT_ARGS[@]}" \
    --heartbeat-ms $hb --wait 10 --rows worker --csv "$T/k.csv" --timeseries "$T/k.ts" \
    --iometer-csv "$T/k.iom" --json "$T/k.json"
cl_wait_log_count "$T/k.err" "[run] test 1/1" 3 10 # ~2 s in
victim=${CL_NAMES[1]} vport=${CL_PORTS[1]}
kill -KILL "${CL_PIDS[1]}"
t0=$(cl_now_ms)
cl_wait_log "$T/k.err" "iofleet: agent $victim (127.0.0.1:$vport): lost: " 5
t1=$(cl_now_ms)
[ $((t1 - t0)) -lt $((3 * hb)) ] || cl_fail "lost agent reported $((t1 - t0)) ms after the kill (> 3 heartbeats)"
cl_wait_exit "$mgr" 20 rc
t_end=$(cl_now_ms)
[ "$rc" = 1 ] || cl_fail "manager exited $rc after losing an agent, expected 1"
# The test ran to its end on the others: ~0.3 + 6 s, not cut short, not hung.
[ $((t_end - t_start)) -ge 6000 ] || cl_fail "run ended after $((t_end - t_start)) ms, before the test's end"
[ $((t_end - t_start)) -lt 12000 ] || cl_fail "run took $((t_end - t_start)) ms"
out=$T/k.out
hdr=$(cl_header "$out")
case "$hdr" in *"== test 1/1: 4k"*"measured 6.000 s  2 nodes, start skew "*" ms, agents lost: yes"*) ;; *) cl_fail "header: $hdr" ;; esac
[ "$(cl_rows "$out" NODE)" = 3 ] || cl_fail "expected 3 NODE rows (one partial), got $(cl_rows "$out" NODE)"
[ "$(cl_rows "$out" WORKER)" = 6 ] || cl_fail "expected 6 WORKER rows"
awk -v v="$victim" '$1 == "NODE" && $2 == v "(partial)" && $3 > 0 {f=1} END{exit !f}' "$out" ||
    cl_fail "the lost node's measured I/O is not in the table as a partial NODE row"
# Exact sums from the files: ALL = sum of NODE (partial included), and the
# time series' ALL intervals = the final ALL.
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    $c["row_type"] == "ALL" { ar = $c["read_ios"]; aw = $c["write_ios"] }
    $c["row_type"] == "NODE" { nr += $c["read_ios"]; nw += $c["write_ios"]; if ($c["status"] == "partial") p++ }
    END { if (ar != nr || aw != nw || p != 1 || ar + aw == 0) { printf "csv: ALL %s/%s NODE sum %s/%s partial %d\n", ar, aw, nr, nw, p; exit 1 }
          print ar + aw > "/dev/stderr" }' "$T/k.csv" 2>"$T/k.all" || cl_fail "--csv: ALL != sum of NODE"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    $c["node"] == "ALL" { s += $c["read_ios"] + $c["write_ios"] } END { print s }' "$T/k.ts" >"$T/k.tsall"
[ "$(cat "$T/k.tsall")" = "$(cat "$T/k.all")" ] ||
    cl_fail "--timeseries: ALL intervals add up to $(cat "$T/k.tsall"), the final ALL is $(cat "$T/k.all")"
for n in "${CL_NAMES[0]}" "${CL_NAMES[2]}"; do
    awk -v n="$n" '$1=="NODE" && $2==n && $3 > 0 {f=1} END{exit !f}' "$out" || cl_fail "no I/O on $n"
done
expect_in "$out" "  node $victim: no result (lost: connection closed by the peer)"
sums=$(cl_check_sums "$out") || { echo "$sums"; cl_fail "table sums"; }
# Every file and report gives the lost node's rows the same status and the
# same figures, rated over the part of the window that arrived (docs/results.md).
awk -F, -v v="$victim" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    $c["row_type"] == "NODE" && $c["node"] == v { print $c["iops"], $c["duration_s"], $c["status"] }' \
    "$T/k.csv" >"$T/k.victim"
read -r viops vdur vstatus <"$T/k.victim"
[ "$vstatus" = partial ] || cl_fail "--csv: $victim is '$vstatus', not partial"
awk "BEGIN { exit !($vdur > 0 && $vdur < 6) }" || cl_fail "--csv: $victim's duration_s $vdur"
jq -e --arg v "$victim" --argjson i "$viops" '.tests[0].results[] | select(.row_type == "NODE" and
    .node == $v) | .status == "partial" and (.iops - $i | fabs) < 0.001' "$T/k.json" >/dev/null ||
    cl_fail "--json: $victim's row is not the CSV's ($viops IOPS, partial)"
vs=$(printf '%.3f' "$vdur")
expect_in "$T/k.iom" "'Status: ALL All partial: a node was lost during the test"
expect_in "$T/k.iom" "'Status: MANAGER $victim partial: lost during the test: its rows hold the $vs s of the 6.000 s window"
awk -F, -v v="$victim" -v i="$viops" '$1 == "MANAGER" && $2 == v { f = 1; d = $7 - i; if (d < -0.001 || d > 0.001) bad = 1 }
    END { exit !f || bad }' "$T/k.iom" || cl_fail "--iometer-csv: $victim's MANAGER IOps is not the CSV's $viops"
expect_rc 0 "$IOFLEET" report "$T/k.json" --format md -o "$T/k.md"
grep -E "^\| $victim \|  \|.* \| partial \|$" "$T/k.md" >/dev/null ||
    cl_fail "report: no partial NODE row for $victim: $(cat "$T/k.md")"
expect_in "$T/k.md" "- node $victim: partial: lost during the test: its rows hold the $vs s of the 6.000 s window"
expect_in "$T/k.md" "- ALL: partial: a node was lost during the test"
grep -E '^\| 4k \|.* \| partial \|$' "$T/k.md" >/dev/null || cl_fail "report: the test's ALL row is not partial"
ok "$victim partial ($vs s, $viops IOPS) in --csv, --json, --iometer-csv and the report"

# Live lines: 3/3 before the kill, 2/3 after, one per interval.
[ "$(grep -c '^\[run\] test 1/1 ' "$T/k.err")" = 12 ] || cl_fail "expected 12 live lines"
grep -q 'agents 3/3$' "$T/k.err" || cl_fail "no live line with 3/3 agents"
tail_live=$(grep '^\[run\]' "$T/k.err" | tail -n1)
case "$tail_live" in *"agents 2/3") ;; *) cl_fail "last live line: $tail_live" ;; esac
ok "SIGKILL $victim: reported after $((t1 - t0)) ms, exit 1 after $((t_end - t_start)) ms; $sums"

# --- SIGSTOP: silent, connection open ------------------------------------------------------
survivors=(--insecure --agent "127.0.0.1:${CL_PORTS[0]}" --insecure --agent "127.0.0.1:${CL_PORTS[2]}")
t_start=$(cl_now_ms)
cl_spawn mgr "$T/s.out" "$T/s.err" "$IOFLEET" run "$T/p.json" "${survivors[@]}" \
    --heartbeat-ms $hb --wait 10 --rows worker --set run.duration=4s
cl_wait_log_count "$T/s.err" "[run] test 1/1" 2 10
victim=${CL_NAMES[2]} vport=${CL_PORTS[2]} vpid=${CL_PIDS[2]}
kill -STOP "$vpid"
t0=$(cl_now_ms)
cl_wait_log "$T/s.err" "iofleet: agent $victim (127.0.0.1:$vport): lost: no message or heartbeat for " 6
t1=$(cl_now_ms)
# 3 heartbeats of silence, checked once per heartbeat: 1.5 .. 2 s, plus margin.
[ $((t1 - t0)) -ge $((2 * hb)) ] || cl_fail "declared lost after only $((t1 - t0)) ms of silence"
[ $((t1 - t0)) -le $((5 * hb + 100)) ] || cl_fail "silent agent reported $((t1 - t0)) ms after it stopped"
expect_in "$T/s.err" "(3 heartbeats missed)"
cl_wait_exit "$mgr" 20 rc
[ "$rc" = 1 ] || cl_fail "manager exited $rc after a silent agent, expected 1"
out=$T/s.out
[ "$(cl_rows "$out" NODE)" = 2 ] || cl_fail "expected 2 NODE rows (one partial)"
expect_in "$out" "  node $victim: no result (lost: no message or heartbeat for "
case "$(cl_header "$out")" in *"1 node, start skew"*"agents lost: yes"*) ;; *) cl_fail "header: $(cl_header "$out")" ;; esac
sums=$(cl_check_sums "$out") || { echo "$sums"; cl_fail "ALL != NODE after a silent agent"; }
ok "SIGSTOP $victim: reported after $((t1 - t0)) ms of silence, exit 1; $sums"

# Resumed, the agent finds its manager gone (connection closed, or silent
# for 3 heartbeats: whichever it notices first), drops the session and
# serves again.
kill -CONT "$vpid"
session_over() {
    [ "$(grep -cE "manager 'iofleet' lost \(|session with manager 'iofleet' ended \(" "${CL_LOGS[2]}")" -ge 2 ]
}
cl_wait_cmd 5 "$victim logs the end of its second session" session_over
expect_rc 0 "$IOFLEET" run "$T/p.json" "${survivors[@]}" --heartbeat-ms $hb --wait 10 \
    --set run.duration=1s --set run.ramp=200ms
[ "$(cl_rows "$T/out" NODE)" = 2 ] || cl_fail "after SIGCONT: expected 2 NODE rows"
ok "resumed agent served a new run"
