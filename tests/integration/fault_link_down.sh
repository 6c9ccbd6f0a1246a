# SPDX-License-Identifier: Apache-2.0
# The network link of one node goes down mid-test and comes back.
# 3 namespaces on a bridge, one dynamo each on its own loop device (libaio),
# the manager in the hub namespace, heartbeats every 500 ms, a plan of 3 tests.
# ~2 s into test 1 node2's eth0 is set down:
#  - the manager names node2 as lost within 3 heartbeats (+ margin);
#  - node2's agent notices its silent manager by the dead-man rule, says it
#    stops all I/O, and its loop device's I/O counters stop growing;
#  - test 1 finishes on node1 and node3: 2 NODE rows, ALL = sum of NODE, a
#    "no result" line for node2;
# the link is brought back once node2 is declared lost: the manager redials
# it ("is back; it takes part from the next test") and node2 runs the last
# test again. The run exits 1, and --csv and --json hold all 3 tests.
# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck source=lib/common.bash
source "$(dirname "$0")/lib/common.bash"
# The first cleanup hook: a second INT/TERM must not cut the cleanup short.
iof_on_exit "trap '' INT TERM"
# shellcheck source=lib/netns.bash
source "$(dirname "$0")/lib/netns.bash"
# shellcheck source=lib/cluster.bash
source "$(dirname "$0")/lib/cluster.bash"

NODES=3
VICTIM=2
PORT=7066
HB=500
command -v timeout >/dev/null || skip "timeout (coreutils) not installed"
command -v python3 >/dev/null || skip "python3 not installed (reads the --json file)"

netns_setup "$NODES" 64 # skips (77) when not root or without netns support
echo "namespaces $NETNS_HUB + ${NETNS_NS[*]}, loop devices ${NETNS_LOOP[*]}"

agents=()
for ((k = 1; k <= NODES; k++)); do
    mkdir -p "$T/work$k"
    netns_bg "$k" "$T/dynamo$k.log" timeout -k 5 55 "$DYNAMO" \
        --listen "${NETNS_ADDR[k]}:$PORT" --name "node$k" --allow "${NETNS_LOOP[k]}" \
        --workdir "$T/work$k" --insecure --heartbeat-ms $HB >/dev/null
    agents+=(--agent "${NETNS_ADDR[k]}:$PORT")
done
for ((k = 1; k <= NODES; k++)); do
    netns_wait_port "$k" "$PORT" 10 || { cat "$T/dynamo$k.log" >&2; fail "dynamo node$k did not listen"; }
done

# One worker group per node (each node has its own loop device path); the
# I/O rate is capped (bursts of 8, 1 ms apart) so parallel tests share the CPU.
groups=''
for ((k = 1; k <= NODES; k++)); do
    groups+="${groups:+,
}  {\"nodes\": [\"node$k\"], \"count\": 1, \"engine\": \"libaio\", \"queue_depth\": 4,
   \"targets\": [{\"path\": \"${NETNS_LOOP[k]}\"}], \"pattern\": \"random\", \"seed\": $k}"
done
line='{"size": "4k", "share": 100, "read": 70, "random": 100, "align": "4k", "burst": 8, "delay": "1ms"}'
plan p.json <<P
{"name": "link-down",
 "run": {"ramp": "500ms", "duration": "6s", "interval": "500ms"},
 "specs": [{"name": "during", "lines": [$line]},
           {"name": "after", "lines": [$line]},
           {"name": "last", "lines": [$line]}],
 "workers": [
$groups]}
P

vname=node$VICTIM
vep=${NETNS_ADDR[VICTIM]}:$PORT
vlog=$T/dynamo$VICTIM.log
vloop=$(basename "${NETNS_LOOP[VICTIM]}")
show() {
    local f
    for f in "$T/out" "$T/err" "$T"/dynamo*.log; do echo "--- $f"; cat "$f"; done >&2
}
lfail() { show; fail "$*"; }
# Reads + writes completed on the victim's loop device.
loop_ios() { awk '{print $1 + $5}' "/sys/block/$vloop/stat"; }

# The manager in the hub namespace, in the background (bounded by timeout).
ip netns exec "$NETNS_HUB" timeout -k 5 50 "$IOFLEET" run "$T/p.json" "${agents[@]}" \
    --insecure --heartbeat-ms $HB --wait 10 --rows worker --csv "$T/r.csv" --json "$T/r.json" \
    >"$T/out" 2>"$T/err" </dev/null &
mgr=$!
NETNS_PIDS+=("$mgr") # the teardown kills it if we fail or are interrupted
t_run=$(cl_now_ms)

# ~2 s into test 1 (4 interval lines; ramp 0.5 s), the victim is busy.
cl_wait_log_count "$T/err" "[run] test 1/3" 3 20
io0=$(loop_ios)
sleep 0.3
io1=$(loop_ios)
[ "$io1" -gt "$io0" ] || lfail "$vname's loop device $vloop does no I/O before the fault ($io0 -> $io1): the checks below would prove nothing"

# --- link down ---------------------------------------------------------------------------
netns_exec "$VICTIM" ip link set eth0 down
t0=$(cl_now_ms)
lost_re="iofleet: agent $vname ($vep): lost: no message or heartbeat for "
cl_wait_log "$T/err" "$lost_re" 8
t1=$(cl_now_ms)
dt_mgr=$((t1 - t0))
# 3 heartbeats of silence, checked once per heartbeat; the last message may
# have come up to a heartbeat before the link went down.
[ "$dt_mgr" -ge $((2 * HB - 100)) ] || lfail "$vname declared lost only $dt_mgr ms after its link went down"
[ "$dt_mgr" -le $((5 * HB + 500)) ] || lfail "$vname declared lost $dt_mgr ms after its link went down (> 3 heartbeats + margin)"
expect_in "$T/err" "(3 heartbeats missed)"
ok "manager: $(grep -F "$lost_re" "$T/err" | head -n1) — $dt_mgr ms after link down"

# The agent side: its manager went silent, the dead-man rule stops its I/O.
dm_text="manager 'iofleet' lost (no message or heartbeat for "
cl_wait_log "$vlog" "$dm_text" 8
t2=$(cl_now_ms)
dt_agent=$((t2 - t0))
[ "$dt_agent" -le $((5 * HB + 500)) ] || lfail "$vname's agent noticed the silence $dt_agent ms after link down"
grep -F "$dm_text" "$vlog" | head -n1 | grep -qF "heartbeats missed)): stopping all I/O" ||
    lfail "$vname's agent did not say it stops all I/O: $(grep -F "$dm_text" "$vlog" | head -n1)"
# Allow in-flight I/Os to complete, then the counters must stand still.
sleep 0.2
s0=$(loop_ios)
sleep 0.8
s1=$(loop_ios)
[ "$s1" = "$s0" ] || lfail "$vname's loop device $vloop still does I/O after the dead-man rule ($s0 -> $s1 in 0.8 s)"
ok "agent $vname stopped I/O $dt_agent ms after link down ($vloop: $s0 -> $s1 I/Os over 0.8 s)"

# --- link back ---------------------------------------------------------------------------
netns_exec "$VICTIM" ip link set eth0 up
t3=$(cl_now_ms)
for ((i = 0; i < 50; i++)); do
    ip -n "$NETNS_HUB" -d link show "veth$VICTIM" 2>/dev/null | grep -q 'state forwarding' && break
    sleep 0.1
done
echo "link of $vname back up $((t3 - t0)) ms after it went down"
cl_wait_log "$T/err" "iofleet: agent $vname ($vep) is back; it takes part from the next test" 15
ok "manager: $vname is back $(($(cl_now_ms) - t3)) ms after the link came up"

# --- the end -----------------------------------------------------------------------------
deadline=$(($(cl_now_ms) + 40000))
while kill -0 "$mgr" 2>/dev/null; do
    [ "$(cl_now_ms)" -lt "$deadline" ] || lfail "manager still running 40 s after the link came back"
    sleep 0.05
done
rc=0
wait "$mgr" || rc=$?
netns_forget "$mgr"
t_end=$(cl_now_ms)
[ "$rc" = 1 ] || lfail "iofleet run exited $rc, expected 1 (an agent was lost)"
cat "$T/out"

# Tables per test: NODE rows and "no result" lines.
rows_of() { # TEST: the NODE names of test TEST with a result, sorted (not "NAME(partial)")
    awk -v t="$1" '/^== test / { split($3, a, "/"); cur = a[1] + 0 } $1 == "NODE" && cur == t && $2 !~ /\(/ { print $2 }' "$T/out" | sort | tr '\n' ' '
}
[ "$(grep -c '^== test' "$T/out")" = 3 ] || lfail "expected 3 test tables"
[ "$(rows_of 1)" = "node1 node3 " ] || lfail "test 1: NODE rows '$(rows_of 1)', expected node1 node3"
case "$(cl_header "$T/out" 1)" in *"2 nodes, start skew "*"agents lost: yes"*) ;; *) lfail "test 1 header: $(cl_header "$T/out" 1)" ;; esac
expect_in "$T/out" "  node $vname: no result (lost: no message or heartbeat for "
sums=$(cl_check_sums "$T/out") || { echo "$sums"; lfail "ALL != sum of NODE rows"; }
for n in node1 node3; do
    awk -v n="$n" '/^== test 1\// { t = 1 } /^== test 2\// { t = 0 } t && $1 == "NODE" && $2 == n && $3 > 0 { f = 1 } END { exit !f }' "$T/out" ||
        lfail "test 1: no I/O on $n"
done
[ "$(rows_of 3)" = "node1 node2 node3 " ] || lfail "test 3: NODE rows '$(rows_of 3)', expected node1 node2 node3 ($vname back)"
ok "test 1 on node1+node3 only; test 2 on: $(rows_of 2); test 3 on: $(rows_of 3); $sums"

# --csv: every test, ALL = sum of NODE exactly (the victim's partial rows
# included), the victim without a result (status ok) only in test 1.
awk -F, '
    NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { t = $c["test"] }
    $c["row_type"] == "ALL"  { na[t]++; ar[t] = $c["read_ios"]; aw[t] = $c["write_ios"]; ae[t] = $c["errors"] }
    $c["row_type"] == "NODE" { sr[t] += $c["read_ios"]; sw[t] += $c["write_ios"]; se[t] += $c["errors"] }
    $c["row_type"] == "NODE" && $c["status"] == "ok" { nn[t]++; if ($c["node"] == "'"$vname"'") v[t] = 1 }
    END {
        for (t = 1; t <= 3; t++) {
            if (na[t] != 1) { printf "test %d: %d ALL rows\n", t, na[t]; bad = 1 }
            if (ar[t] != sr[t] || aw[t] != sw[t] || ae[t] != se[t]) {
                printf "test %d: ALL %s/%s/%s != NODE sum %s/%s/%s (read_ios/write_ios/errors)\n", t, ar[t], aw[t], ae[t], sr[t], sw[t], se[t]; bad = 1 }
            if (ar[t] + aw[t] <= 0) { printf "test %d: no I/O\n", t; bad = 1 }
        }
        if (nn[1] != 2 || v[1]) { printf "test 1: %d NODE rows (victim present: %d)\n", nn[1], v[1]; bad = 1 }
        if (nn[3] != 3 || !v[3]) { printf "test 3: %d NODE rows (victim present: %d)\n", nn[3], v[3]; bad = 1 }
        exit bad
    }' "$T/r.csv" || { cat "$T/r.csv"; lfail "--csv does not hold every test as expected"; }
ok "--csv: 3 tests, ALL = sum of NODE exactly"

# --json: a complete document with all 3 tests and exit code 1.
python3 - "$T/r.json" <<'PY' || lfail "--json does not hold every test as expected"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["run"]
assert r["finished"] is True, r
assert r["exit_code"] == 1, r
assert r["tests_planned"] == 3 and r["tests_written"] == 3, r
assert len(d["tests"]) == 3, len(d["tests"])
for t in d["tests"]:
    assert t["intervals"], "test %s has no intervals" % t["index"]
    assert t["results"], "test %s has no results" % t["index"]
print("json: %d tests, %s intervals" % (len(d["tests"]), [len(t["intervals"]) for t in d["tests"]]))
PY
ok "--json: complete, 3 tests, exit_code 1"
ok "link down/up on $vname: run of $((t_end - t_run)) ms, exit 1"
