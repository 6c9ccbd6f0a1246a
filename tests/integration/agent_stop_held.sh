# SPDX-License-Identifier: Apache-2.0
# A stop reaches a test the agent holds but does not run (a scripted manager,
# lib/fake_manager.py, speaking the protocol to a real dynamo):
# 1. a test set up (`ready` sent) and not started is dropped at the stop: its
#    target is closed at once, not kept open until the session ends;
# 2. a setup refused busy while a test is starting does not cancel a stop
#    sent before it: the test, once started, stops (result interrupted)
#    instead of running its 10 s.
source "$(dirname "$0")/lib/common.bash"
FM=$(dirname "$0")/lib/fake_manager.py

iof_start_agent held --name held
wd=$T/held-work

plan held.json <<'P'
{"name": "held", "run": {"ramp": "0s", "duration": "10s", "interval": "1s"},
 "specs": [{"name": "r", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "sync", "queue_depth": 1, "targets": [{"path": "held.dat", "size": "4m"}]}]}
P
expect_rc 0 python3 "$FM" "${AGENT_EP##*:}" "$AGENT_PID" "$T/held.json" "$wd/held.dat" held-stop
cat "$T/out"
ok "a stop drops a set-up test: its target closed"

plan busy.json <<'P'
{"name": "busy", "run": {"ramp": "0s", "duration": "10s", "interval": "1s"},
 "specs": [{"name": "r", "lines": [{"size": "256k"}]}],
 "workers": [{"engine": "null", "count": 2, "queue_depth": 32,
              "targets": [{"path": "busy.dat", "size": "64m"}]}]}
P
expect_rc 0 python3 "$FM" "${AGENT_EP##*:}" "$AGENT_PID" "$T/busy.json" "$wd/busy.dat" busy-stop
cat "$T/out"
ok "a setup refused busy keeps the pending stop"
