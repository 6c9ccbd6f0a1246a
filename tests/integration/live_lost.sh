# SPDX-License-Identifier: Apache-2.0
# iofleet run --http with an agent lost mid-test (SIGKILL): the live view
# flags it while the run goes on (/api/run "up": false, then "lost": true
# once its partial rows are in; /metrics iofleet_agent_up 0) and keeps the
# survivor up; the run still ends with exit code 1.
source "$(dirname "$0")/lib/cluster.bash"
command -v curl >/dev/null || skip "curl not installed"
command -v jq >/dev/null || skip "jq not installed"

hb=500
cl_start_agents 2 node --heartbeat-ms $hb
plan p.json <<'P'
{"name": "lost", "run": {"ramp": "300ms", "duration": "5s", "interval": "500ms"},
 "specs": [{"name": "4k", "lines": [{"size": "4k", "read": 70, "burst": 16, "delay": "1ms"}]}],
 "workers": [{"count": 1, "engine": "null", "queue_depth": 2, "targets": [{"path": "n", "size": "16m"}]}]}
P
cl_spawn mgr "$T/m.out" "$T/m.err" "$IOFLEET" run "$T/p.json" "${CL_AGENT_ARGS[@]}" --no-db \
    --heartbeat-ms $hb --wait 10 --http 0 --http-linger 5
cl_wait_log "$T/m.err" "live view on http://127.0.0.1:" 10
url=$(sed -n 's|.*live view on \(http://127\.0\.0\.1:[0-9]*/\).*|\1|p' "$T/m.err")
cl_wait_log_count "$T/m.err" "[run] test 1/1" 2 10
victim=${CL_NAMES[1]} survivor=${CL_NAMES[0]}
curl -sf "${url}api/run" >"$T/a0.json" || cl_fail "/api/run failed"
jq -e '[.nodes[] | select(.up)] | length == 2' "$T/a0.json" >/dev/null ||
    cl_fail "both agents should be up: $(cat "$T/a0.json")"

kill -KILL "${CL_PIDS[1]}"
cl_wait_cmd 5 "the live view flags $victim as down" \
    sh -c "curl -sf '${url}api/run' | jq -e --arg v '$victim' '.nodes[] | select(.name == \$v) | .up == false' >/dev/null"
curl -sf "${url}metrics" >"$T/m.txt" || cl_fail "/metrics failed"
grep -qx "iofleet_agent_up{node=\"$victim\"} 0" "$T/m.txt" || cl_fail "$victim not down in /metrics: $(grep agent_up "$T/m.txt")"
grep -qx "iofleet_agent_up{node=\"$survivor\"} 1" "$T/m.txt" || cl_fail "$survivor not up in /metrics: $(grep agent_up "$T/m.txt")"
ok "$victim flagged down in /api/run and /metrics while the run goes on; $survivor up"

cl_wait_cmd 20 "the run ends (served for --http-linger)" \
    sh -c "curl -sf '${url}api/run' | jq -e '.state == \"done\"' >/dev/null"
curl -sf "${url}api/run" >"$T/a1.json" || cl_fail "/api/run failed after the run"
jq -e --arg v "$victim" --arg s "$survivor" '.exit_code == 1 and
    (.nodes[] | select(.name == $v) | .lost and (.up | not)) and
    (.nodes[] | select(.name == $s) | .up and (.lost | not))' "$T/a1.json" >/dev/null ||
    cl_fail "after the run: $(jq -c '{exit_code, nodes: [.nodes[] | {name, up, lost}]}' "$T/a1.json")"
cl_wait_exit "$mgr" 20 rc
[ "$rc" = 1 ] || cl_fail "manager exited $rc after losing an agent, expected 1"
ok "$victim marked lost once its partial rows were in; exit code 1"
cl_done
