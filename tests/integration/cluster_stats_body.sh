# SPDX-License-Identifier: Apache-2.0
# The stats body across protocol minors (docs/protocol.md, "Binary stats
# body"), with the real binaries; IOF_PROTO_MINOR=N makes a process announce
# protocol 1.N, as an older build does:
# - a 1.8 manager with a 1.8 agent, a 1.2 agent and a 1.0 agent in one run:
#   the first sends the binary body with a histogram per node (layout 3, from
#   1.3) and is set up by setup/ready (1.4) before its start, the others on it;
#   the second sends a histogram per target (layout 2), the third JSON; all
#   are counted, every interval of each arrives and the tables add up;
# - a 1.0 manager (which refuses the binary body) with a 1.8 agent: the
#   agent sends JSON, the run succeeds.
source "$(dirname "$0")/lib/cluster.bash"

plan p.json <<'P'
{"name": "stats-body", "run": {"ramp": "200ms", "duration": "1500ms", "interval": "500ms"},
 "specs": [{"name": "4k 70r", "lines": [{"size": "4k", "read": 70, "random": 100,
                                         "burst": 16, "delay": "1ms"}]}],
 "workers": [{"nodes": ["*"], "count": 2, "engine": "null", "queue_depth": 2,
              "targets": [{"path": "n1", "size": "64m"}, {"path": "n2", "size": "64m"}]}]}
P

cl_start_agent node-new
IOF_PROTO_MINOR=0 cl_start_agent node-old
IOF_PROTO_MINOR=2 cl_start_agent node-mid

# --- 1.8 manager: a binary agent per layout, one JSON agent ----------------------------
expect_rc 0 "$IOFLEET" run "$T/p.json" "${CL_AGENT_ARGS[@]}" --wait 10 --verbose \
    --rows worker --timeseries "$T/ts.csv"
out=$T/out err=$T/err
expect_in "$err" "agent node-new (127.0.0.1:${CL_PORTS[0]}): protocol 1.8, stats body binary, a histogram per node"
expect_in "$err" "agent node-old (127.0.0.1:${CL_PORTS[1]}): protocol 1.0, stats body JSON"
expect_in "$err" "agent node-mid (127.0.0.1:${CL_PORTS[2]}): protocol 1.2, stats body binary"
if grep -q "node-mid .*histogram per node" "$err"; then
    cl_fail "the 1.2 agent was taken for a 1.3 or later one"
fi
if grep -q "lost\|did not negotiate\|bad message" "$err"; then
    cl_fail "a stats message was refused: $(grep "lost\|negotiate\|bad message" "$err")"
fi
for n in node-new node-old node-mid; do
    awk -v n="$n" '$1=="NODE" && $2==n && $3 > 0 {f=1} END{exit !f}' "$out" ||
        cl_fail "no I/O in the NODE row of $n"
    # Each node's three intervals reached the time series with I/O in them.
    k=$(grep -c ",$n," "$T/ts.csv" || true)
    [ "$k" -ge 3 ] || cl_fail "$k time-series rows for $n, expected 3: $(cat "$T/ts.csv")"
done
sums=$(cl_check_sums "$out") || { echo "$sums"; cl_fail "sums do not add up"; }
ok "1.8 manager: node-new binary per node, node-mid binary per target, node-old JSON, $sums"

# --- 1.0 manager: the 1.8 agent falls back to JSON -------------------------------------
IOF_PROTO_MINOR=0 expect_rc 0 "$IOFLEET" run "$T/p.json" --insecure \
    --agent "127.0.0.1:${CL_PORTS[0]}" --wait 10 --verbose
expect_in "$T/err" "agent node-new (127.0.0.1:${CL_PORTS[0]}): protocol 1.8, stats body JSON"
if grep -q "lost\|did not negotiate\|bad message" "$T/err"; then
    cl_fail "a stats message was refused: $(grep "lost\|negotiate\|bad message" "$T/err")"
fi
awk '$1=="NODE" && $2=="node-new" && $3 > 0 {f=1} END{exit !f}' "$T/out" ||
    cl_fail "no I/O from node-new under a 1.0 manager"
ok "1.0 manager: the 1.8 agent sent JSON"
cl_done
