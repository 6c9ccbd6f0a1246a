# SPDX-License-Identifier: Apache-2.0
# Ctrl-C in a terminal signals the whole foreground process group. A local
# run (no --agent, no --listen) starts its own agent, in a process group of
# its own within the run's session: that agent must not take the terminal's
# SIGINT as its own, or the run reports it lost with an
# ALL row that is not its only NODE row and no percentiles. The run stops
# cleanly (exit 130), every figure consistent; Ctrl-Z stops the agent with
# the manager; and the local agent still ends when the manager is killed
# outright.
source "$(dirname "$0")/lib/common.bash"
command -v setsid >/dev/null || skip "setsid (util-linux) is not installed"

plan long.json <<'P'
{"name": "long", "run": {"ramp": "0s", "duration": "60s", "interval": "200ms"},
 "specs": [{"name": "first", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "null", "queue_depth": 8, "targets": [{"path": "n", "size": "1g"}]}]}
P

# A process group of its own, as a shell's job control gives each job: the
# group's id is iofleet's pid (setsid makes it a session and group leader).
setsid "$IOFLEET" run "$T/long.json" --workdir "$T/w" --no-db --csv "$T/r.csv" \
    --json "$T/r.json" >"$T/out" 2>"$T/err" &
pid=$!
iof_on_exit "kill -9 -- -$pid 2>/dev/null; kill -9 $pid 2>/dev/null"
for _ in $(seq 100); do
    grep -q "running\|interval\|IOPS" "$T/err" 2>/dev/null && break
    sleep 0.1
done
sleep 1
# Ctrl-Z and fg: the agent, out of the terminal's group, stops and goes on
# with its manager.
agent=$(pgrep -P "$pid" dynamo || true)
[ -n "$agent" ] || { cat "$T/err"; fail "no local agent under iofleet $pid"; }
state() { awk '{ print $3 }' "/proc/$1/stat"; }
# The agent: a process group of its own (the terminal's Ctrl-C is not its),
# in the session the run was started in (scheduled as that command's).
# Fields 5 and 6 of /proc/PID/stat (the name, field 2, is "(dynamo)").
read -r apgid asid < <(awk '{ print $5, $6 }' "/proc/$agent/stat" 2>/dev/null) ||
    fail "the local agent $agent is gone"
[ "$apgid" = "$agent" ] || fail "the local agent's process group is $apgid, expected its own ($agent)"
[ "$asid" = "$pid" ] || fail "the local agent's session is $asid, expected iofleet's ($pid)"
ok "the local agent is a process group of its own in iofleet's session"
kill -TSTP -- "-$pid"
for _ in $(seq 50); do
    [ "$(state "$pid")$(state "$agent")" = TT ] && break
    sleep 0.05
done
[ "$(state "$pid")$(state "$agent")" = TT ] || fail "after SIGTSTP: manager $(state "$pid"), agent $(state "$agent"), expected both stopped (T)"
kill -CONT -- "-$pid"
for _ in $(seq 50); do
    [ "$(state "$agent")" != T ] && [ "$(state "$pid")" != T ] && break
    sleep 0.05
done
[ "$(state "$agent")" != T ] || fail "after SIGCONT the agent is still stopped"
ok "SIGTSTP to the run's group stops the local agent with the manager, SIGCONT continues both"
sleep 0.5
kill -INT -- "-$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" = 130 ] || { cat "$T/out" "$T/err"; fail "exit $rc, expected 130"; }
if grep -qi "lost" "$T/out" "$T/err"; then
    cat "$T/out" "$T/err"
    fail "the local agent was lost on the terminal's SIGINT"
fi
expect_in "$T/err" "interrupted: stopping the agents and collecting results"
python3 - "$T" <<'PY' || { cat "$T/out" "$T/err"; fail "ALL is not the only NODE, or percentiles missing"; }
import csv, json, sys
T = sys.argv[1]
rows = list(csv.DictReader(open(T + "/r.csv")))
all_ = [r for r in rows if r["row_type"] == "ALL"]
node = [r for r in rows if r["row_type"] == "NODE"]
assert len(all_) == 1 and len(node) == 1, (len(all_), len(node))
a, n = all_[0], node[0]
assert n["status"] == "ok", n["status"]
for k in ("read_ios", "write_ios", "bytes_read", "bytes_written", "errors", "iops",
          "p50_lat_ms", "p99_lat_ms", "p999_lat_ms", "max_lat_ms", "duration_s"):
    assert a[k] == n[k], (k, a[k], n[k])
for k in ("p50_lat_ms", "p99_lat_ms", "p9999_lat_ms"):
    assert a[k] not in ("", "-") and float(a[k]) > 0, (k, a[k])
assert int(a["read_ios"]) > 0
doc = json.load(open(T + "/r.json"))
res = doc["tests"][0]["results"]
ja = [r for r in res if r["row_type"] == "ALL"][0]
jn = [r for r in res if r["row_type"] == "NODE"][0]
assert doc["tests"][0]["interrupted"] is True
for k in ("read_ios", "write_ios", "errors"):
    assert ja[k] == jn[k], (k, ja[k], jn[k])
assert ja.get("p99_lat_ms") is not None and ja["p99_lat_ms"] == jn["p99_lat_ms"], (ja.get("p99_lat_ms"), jn.get("p99_lat_ms"))
print("ok: ALL = NODE, %s I/Os, p99 %s ms" % (a["read_ios"], a["p99_lat_ms"]))
PY
p99=$(row_field "$T/out" ALL 6)
if [ -z "$p99" ] || [ "$p99" = "-" ]; then cat "$T/out"; fail "the table's ALL row has no p99"; fi
ok "SIGINT to the run's process group: exit 130, local agent kept, ALL = NODE with percentiles"

# Out of the terminal's group, the local agent still ends with its manager.
setsid "$IOFLEET" run "$T/long.json" --workdir "$T/w2" --no-db >"$T/out2" 2>"$T/err2" &
pid=$!
iof_on_exit "kill -9 -- -$pid 2>/dev/null; kill -9 $pid 2>/dev/null"
agent=
for _ in $(seq 100); do
    agent=$(pgrep -P "$pid" dynamo || true)
    [ -n "$agent" ] && break
    sleep 0.1
done
[ -n "$agent" ] || { cat "$T/err2"; fail "no local agent under iofleet $pid"; }
iof_on_exit "kill -9 $agent 2>/dev/null"
sleep 1
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
for _ in $(seq 50); do
    kill -0 "$agent" 2>/dev/null || break
    sleep 0.1
done
if kill -0 "$agent" 2>/dev/null; then fail "the local agent $agent outlived its killed manager"; fi
ok "the local agent ends when its manager is killed"
