# SPDX-License-Identifier: Apache-2.0
# An engine of the other system: a plan may name the windows engine (the
# manager validates it, fio's ioengine=windowsaio imports to it), and a Linux
# agent given it refuses the test at prepare, before any file is written, with
# the node, the group, the engine, the agent's system and the engines it has.
# (tests/windows/agent_e2e.sh: dynamo.exe refuses libaio the same way.)
source "$(dirname "$0")/lib/common.bash"
command -v jq >/dev/null || skip "jq not installed"

plan win.json <<'P'
{"name": "win", "run": {"ramp": "100ms", "duration": "1s", "interval": "500ms"},
 "specs": [{"name": "4k", "lines": [{"size": "4k", "read": 70, "random": 100}]}],
 "workers": [{"engine": "windows", "queue_depth": 4, "targets": [{"path": "win.dat", "size": "8m"}]}]}
P
expect_rc 0 "$IOFLEET" validate "$T/win.json"
ok "a plan naming the windows engine validates"

expect_rc 1 "$IOFLEET" run "$T/win.json" --workdir "$T/w" --quiet
expect_in "$T/err" "local: workers[0]: engine windows is not available on this node: it is an engine of Windows agents, and this one runs Linux (its engines: libaio, io_uring, sync, null)"
[ ! -e "$T/w/win.dat" ] || fail "the refused test wrote its file"
ok "a Linux agent refuses it: $(grep -F 'not available' "$T/err" | head -n1)"

cat >"$T/w.fio" <<'F'
[w]
ioengine=windowsaio
direct=1
rw=randread
bs=4k
size=8m
filename=win.dat
runtime=1s
time_based
F
expect_rc 0 "$IOFLEET" import "$T/w.fio" -o "$T/w.json"
[ "$(jq -r '.workers[0].engine' "$T/w.json")" = windows ] ||
    fail "fio's windowsaio imported as $(jq -c '.workers[0]' "$T/w.json")"
ok "fio's ioengine=windowsaio imports to the windows engine"
