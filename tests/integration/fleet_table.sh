# SPDX-License-Identifier: Apache-2.0
# A fleet's final table: 40 simulated agents (iof_simagent, one process)
# dial a --listen manager that writes --csv. The terminal shows ALL, the 5
# slowest and 5 fastest nodes, how many nodes and rows it hides and the CSV's
# path; the CSV keeps every NODE, WORKER and TARGET row. Two real agents
# (below the size) still get the full table.
source "$(dirname "$0")/lib/cluster.bash"

SIM=$IOF_BIN/iof_simagent
[ -x "$SIM" ] || skip "no iof_simagent at $SIM (build the tests)"
N=40

plan p.json <<'P'
{"name": "fleet", "run": {"ramp": "200ms", "duration": "1s", "interval": "500ms"},
 "specs": [{"name": "4k read", "lines": [{"size": "4k", "burst": 16, "delay": "1ms"}]}],
 "workers": [{"nodes": ["*"], "count": 2, "engine": "null", "queue_depth": 1,
              "targets": [{"path": "sim.dat", "size": "1m"}]}]}
P

port=''
cl_start_listen_manager mgr port "$T/m.out" "$T/m.err" "$T/p.json" --expect $N --wait 30 \
    --rows worker,target --csv "$T/r.csv"
cl_spawn sim "$T/sim.out" "$T/sim.err" "$SIM" --manager "127.0.0.1:$port" --count $N \
    --name-prefix fleet --connect-timeout 30
cl_wait_exit "$mgr" 60 rc
[ "$rc" = 0 ] || { cat "$T/m.err" >&2; cl_fail "manager exited $rc, expected 0"; }
out=$T/m.out
[ "$(cl_rows "$out" ALL)" = 1 ] || cl_fail "expected 1 ALL row"
[ "$(cl_rows "$out" NODE)" = 10 ] || cl_fail "expected 10 NODE rows (5 slowest, 5 fastest), got $(cl_rows "$out" NODE)"
[ "$(cl_rows "$out" WORKER)" = 0 ] || cl_fail "WORKER rows printed for a fleet"
[ "$(cl_rows "$out" TARGET)" = 0 ] || cl_fail "TARGET rows printed for a fleet"
expect_in "$out" "the 5 slowest nodes (by IOPS):"
expect_in "$out" "the 5 fastest nodes:"
# 40 nodes x (1 NODE + 2 WORKER + 2 TARGET) rows = 200.
expect_in "$out" "10 of $N nodes shown and 190 of 200 NODE/WORKER/TARGET rows hidden"
expect_in "$out" "every row is in $T/r.csv"
[ "$(wc -l <"$out")" -lt 30 ] || cl_fail "the table took $(wc -l <"$out") lines"
for t in NODE WORKER TARGET; do
    want=$N
    [ $t = NODE ] || want=$((2 * N))
    got=$(awk -F, -v t=$t '$4 == t' "$T/r.csv" | wc -l)
    [ "$got" = "$want" ] || { head -3 "$T/r.csv" >&2; cl_fail "CSV: $got $t rows, expected $want"; }
done
ok "$N nodes: $(grep -c . "$out") lines on the terminal, every row in the CSV"

# Below the size, the full table as before.
port=''
cl_start_listen_manager mgr port "$T/m2.out" "$T/m2.err" "$T/p.json" --expect 2 --wait 15 \
    --rows worker,target
cl_start_dialer a1 small-1 "127.0.0.1:$port"
cl_start_dialer a2 small-2 "127.0.0.1:$port"
cl_wait_exit "$mgr" 20 rc
[ "$rc" = 0 ] || cl_fail "2-agent manager exited $rc"
[ "$(cl_rows "$T/m2.out" NODE)" = 2 ] || cl_fail "2 agents: expected 2 NODE rows"
[ "$(cl_rows "$T/m2.out" WORKER)" = 4 ] || cl_fail "2 agents: expected 4 WORKER rows"
if grep -q "nodes shown" "$T/m2.out"; then cl_fail "2 agents: the table was summarised"; fi
ok "2 nodes: the full table"
cl_done
