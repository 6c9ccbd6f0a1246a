# SPDX-License-Identifier: Apache-2.0
# A find_max plan between peers that lay its tests out differently (protocol
# 1.4 changed the search to IOF_FIND_MAX_TESTS tests per spec; the start
# names a test by its index): refused on both sides, never run as another
# test (docs/protocol.md). IOF_PROTO_MINOR=3 makes a process announce 1.3,
# as an older build does.
# - a 1.3 agent: the manager fails it before sending the plan, naming both
#   versions, and exits 3;
# - a 1.3 manager: the agent refuses the plan with IOF_EVERSION;
# - a plan without find_max still runs with the 1.3 agent.
source "$(dirname "$0")/lib/common.bash"

plan fm.json <<'P'
{"name": "fm", "run": {"ramp": "100ms", "duration": "300ms", "interval": "100ms"},
 "specs": [{"name": "4k", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "null", "queue_depth": 2, "targets": [{"path": "n", "size": "1m"}]}],
 "cycle": {"rate": {"find_max": {"avg": "5ms"}}}}
P
plan curve.json <<'P'
{"name": "curve", "run": {"ramp": "100ms", "duration": "300ms", "interval": "100ms"},
 "specs": [{"name": "4k", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "null", "queue_depth": 2, "targets": [{"path": "n", "size": "1m"}]}],
 "cycle": {"rate": {"curve": [50]}}}
P

IOF_PROTO_MINOR=3 iof_start_agent old --name old
OLD=$AGENT_EP
expect_rc 3 "$IOFLEET" run "$T/fm.json" --insecure --agent "$OLD" --wait 10
expect_in "$T/err" "agent old ($OLD): speaks protocol 1.3: a find_max plan needs 1.4 on both sides"
if grep -q '^== test' "$T/out"; then fail "a test ran with the 1.3 agent"; fi
ok "a 1.3 agent is refused a find_max plan: $(grep -o "speaks protocol 1.3.*" "$T/err")"

expect_rc 0 "$IOFLEET" run "$T/curve.json" --insecure --agent "$OLD" --wait 10
expect_in "$T/out" "rate=50%"
ok "the 1.3 agent runs a plan without find_max"

iof_start_agent new --name new
NEW=$AGENT_EP
rc=0
IOF_PROTO_MINOR=3 "$IOFLEET" run "$T/fm.json" --insecure --agent "$NEW" --wait 10 \
    >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" != 0 ] || fail "a 1.3 manager ran a find_max plan on a 1.4 agent"
expect_in "$T/err" "new: a find_max plan needs protocol 1.4 on both sides (the manager speaks 1.3"
if grep -q '^== test' "$T/out"; then fail "a test ran under the 1.3 manager"; fi
ok "a 1.4 agent refuses a find_max plan from a 1.3 manager (exit $rc)"
