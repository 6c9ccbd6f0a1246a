# SPDX-License-Identifier: Apache-2.0
# A worker group whose plan names no engine runs each agent's own default
# (libaio on Linux, windows on Windows), and the manager says so instead of
# naming libaio: `iofleet validate` prints "each agent's default engine" for
# such a group (a group naming one keeps its name), and `validate --agent`
# names the engine each group runs on that agent, from the system its hello
# names; a group naming an engine of the other system is refused there, as
# the agent would refuse it at prepare. (tests/windows/agent_e2e.sh: a
# Windows agent's default is windows.)
source "$(dirname "$0")/lib/common.bash"

plan p.json <<'P'
{"name": "dflt", "run": {"ramp": "100ms", "duration": "1s", "interval": "500ms"},
 "specs": [{"name": "4k", "lines": [{"size": "4k", "read": 70, "random": 100}]}],
 "workers": [{"name": "plain", "queue_depth": 4, "targets": [{"path": "a.dat", "size": "8m"}]},
             {"name": "named", "engine": "sync", "targets": [{"path": "b.dat", "size": "8m"}]}]}
P
expect_rc 0 "$IOFLEET" validate "$T/p.json"
expect_in "$T/out" "workers[0]: nodes *, 1 worker, each agent's default engine (libaio on Linux, windows on Windows), qd 4, 1 target: 'a.dat'"
expect_in "$T/out" "workers[1]: nodes *, 1 worker, sync, qd 1, 1 target: 'b.dat'"
if grep -F "workers[0]:" "$T/out" | grep -qF "1 worker, libaio,"; then
    fail "validate names libaio for a group without an engine: $(grep -F 'workers[0]:' "$T/out")"
fi
ok "validate: $(grep -F 'workers[0]: nodes' "$T/out" | head -n1)"

iof_start_agent lnx --name lnx
expect_rc 0 "$IOFLEET" validate "$T/p.json" --insecure --agent "$AGENT_EP"
expect_in "$T/out" "  plain: engine libaio (the agent's default: it runs Linux; the plan names none)"
expect_in "$T/out" "  named: engine sync"
ok "validate --agent: $(grep -F '  plain: engine' "$T/out")"

plan w.json <<'P'
{"name": "w", "run": {"ramp": "100ms", "duration": "1s", "interval": "500ms"},
 "specs": [{"name": "4k", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "windows", "targets": [{"path": "w.dat", "size": "8m"}]}]}
P
expect_rc 1 "$IOFLEET" validate "$T/w.json" --insecure --agent "$AGENT_EP"
expect_in "$T/out" "  workers[0]: engine windows: REFUSED at prepare: an engine of Windows agents, and this one runs Linux"
expect_in "$T/out" "does not fit: the agent will refuse this plan at prepare"
ok "validate --agent, the windows engine on a Linux agent: $(grep -F 'REFUSED' "$T/out")"
