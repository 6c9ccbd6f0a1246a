#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/windows/agent_e2e.sh - the Linux manager drives dynamo.exe under Wine (`iofleet run`,
# the Linux build's, against dynamo.exe listening on 127.0.0.1), with test files in the
# agent's workdir:
# - a workdir Everyone may write (mode 0777, as Wine shows it) is refused at start-up, naming
#   the workdir, the account and the right;
# - plain TCP: a plan whose group names no engine runs the windows engine, a Windows
#   agent's default (Little's law at queue depth 16 holds, which the sync engine's one I/O
#   at a time could not), and `iofleet validate --agent` names windows as that group's
#   engine there; a test file planted in the workdir by another user is refused, naming it
#   and its owner, and left as it was; a plan naming libaio is refused at prepare, naming the engine and the
#   agent's system (validate --agent foresees it); the manager killed mid-test: the agent says so and its I/O stops
#   within 10 s (the test file no longer changes); a second run reuses the test file (same
#   file, not rewritten, kept by --cleanup since this run did not create it);
# - mutual TLS with a pki made here: the two-test plan (4k random 70 % read QD 16; 64k
#   sequential read QD 16) with the windows engine: each test has I/O, ALL = the NODE = the
#   WORKER = the TARGET row, Little's law IOPS x mean latency >= 0.9 x QD, the node's
#   software and system in the JSON; then the agent killed mid-test: the manager names it
#   lost, exits 1 and keeps the I/O it measured as a partial NODE row.
# Registered by cmake/windows.cmake, so `scripts/windows test` runs it:
#     agent_e2e.sh DYNAMO_EXE
# The Linux iofleet is $IOF_LINUX_BIN/iofleet (default build/bin of this checkout; the
# test skips, exit 77, when it is missing). dynamo.exe and the managers are stopped by
# their PIDs, and a Wine server this test started (none was running for $WINEPREFIX) by
# its PID, even on failure.
set -euo pipefail

exe=${1:?usage: agent_e2e.sh DYNAMO_EXE}
# shellcheck source=tests/windows/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
win_init e2e
agent_pid=''
server_pid=''
mgr_pid=''
cleanup() {
    if [[ -n $mgr_pid ]]; then
        kill -KILL "$mgr_pid" 2>/dev/null || true
        wait "$mgr_pid" 2>/dev/null || true
    fi
    if [[ -n $agent_pid ]]; then
        kill "$agent_pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$agent_pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$agent_pid" 2>/dev/null || true
        wait "$agent_pid" 2>/dev/null || true
    fi
    if [[ -n $server_pid ]]; then
        # Our server ends Wine's own processes (services.exe, explorer.exe...) and exits
        # 5 s after the last program; killed only if it has not within 30 s.
        for _ in $(seq 300); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$T"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*" >&2
    for f in "$T"/*.log "$T"/*.err; do [[ -e $f ]] && { echo "--- $f"; tail -n 40 "$f"; } >&2; done
    exit 1
}
ok() { echo "ok: $*"; }

# A Wine server of our own unless one runs for this prefix: started in the foreground
# (-f), its PID kept, lingering 5 s after the last program (-p5: the agent is restarted
# in between); one already running makes it exit at once.
wineserver -f -p5 </dev/null >/dev/null 2>&1 &
server_pid=$!
sleep 1
if ! kill -0 "$server_pid" 2>/dev/null; then
    wait "$server_pid" 2>/dev/null || true
    server_pid=''
fi

# start_agent LOG ARGS...: dynamo.exe listening on 127.0.0.1, port from its log.
start_agent() {
    local log=$1
    shift
    wine "$exe" --listen 127.0.0.1:0 --name winnode --workdir "$T/work" "$@" \
        </dev/null >/dev/null 2>"$log" &
    agent_pid=$!
    for _ in $(seq 600); do
        port=$(sed -n "s/.*agent 'winnode' listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p" "$log" |
            head -n1)
        [[ -n $port ]] && return 0
        kill -0 "$agent_pid" 2>/dev/null || fail "dynamo.exe exited: $(cat "$log")"
        sleep 0.1
    done
    fail "dynamo.exe did not listen within 60 s"
}

stop_agent() {
    kill "$agent_pid" 2>/dev/null || true
    wait "$agent_pid" 2>/dev/null || true
    agent_pid=''
}

# plan FILE ENGINE DURATION SPECS...: a plan of one group (1 worker, queue depth 16, the
# 8 MiB test file iofleet-e2e.dat), ENGINE "" for none, one test per spec (JSON objects).
plan() {
    local file=$1 engine=$2 duration=$3 specs e=''
    shift 3
    specs=$(IFS=,; echo "$*")
    [[ -z $engine ]] || e="\"engine\": \"$engine\", "
    cat >"$T/$file" <<P
{"name": "win-e2e", "run": {"ramp": "300ms", "duration": "$duration", "interval": "500ms"},
 "specs": [$specs],
 "workers": [{"nodes": ["*"], "count": 1, $e"queue_depth": 16,
              "targets": [{"path": "iofleet-e2e.dat", "size": "8m"}]}]}
P
}
rand4k='{"name": "4k rand 70r", "lines": [{"size": "4k", "read": 70, "random": 100}]}'
seq64k='{"name": "64k seq read", "lines": [{"size": "64k", "read": 100, "random": 0}]}'

# check JSON NTESTS: in each test I/O done without errors, one row of each kind and ALL =
# NODE = WORKER = TARGET, Little's law IOPS x mean latency >= 0.9 x 16 (the windows
# engine keeps the queue full), the agent's software and system named.
check() {
    python3 - "$1" "$2" <<'PY' || fail "results of $1 (above)"
import json, sys
doc = json.load(open(sys.argv[1]))
agents = doc["agents"]
assert len(agents) == 1, agents
a = agents[0]
assert a["name"] == "winnode", a["name"]
assert a["software"], a
assert "Windows NT" in (a["kernel"] or "") or "Wine" in (a["kernel"] or ""), a["kernel"]
assert len(doc["tests"]) == int(sys.argv[2]), len(doc["tests"])
for t in doc["tests"]:
    rows = t["results"]
    kind = {k: [r for r in rows if r["row_type"] == k] for k in ("ALL", "NODE", "WORKER", "TARGET")}
    for k, v in kind.items():
        assert len(v) == 1, (t.get("name"), k, len(v))
    al = kind["ALL"][0]
    for k in ("NODE", "WORKER", "TARGET"):
        for key in ("read_ios", "write_ios", "bytes_read", "bytes_written", "errors"):
            assert al[key] == kind[k][0][key], (k, key, al[key], kind[k][0][key])
    assert kind["NODE"][0]["node"] == "winnode", kind["NODE"][0]["node"]
    assert al["read_ios"] > 0 and al["errors"] == 0, al
    assert al["status"] == "ok", al["status"]
    n = al["iops"] * al["avg_lat_ms"] / 1000
    print("%s: %d reads, %d writes, IOPS %.0f x mean latency %.3f ms = %.2f outstanding (QD 16)"
          % (t.get("spec", "?"), al["read_ios"], al["write_ios"], al["iops"], al["avg_lat_ms"], n))
    assert n >= 0.9 * 16, "Little's law: %.2f < 0.9 x 16" % n
print("agent %s, %s" % (a["software"], a["kernel"]))
PY
}

# run NAME PLAN ARGS...: iofleet run against the agent, output in $T/NAME.{json,log,err};
# sets rc.
run() {
    local name=$1 planf=$2
    shift 2
    rc=0
    "$iofleet" run "$T/$planf" --agent "127.0.0.1:$port" --json "$T/$name.json" --wait 60 \
        "$@" >"$T/$name.log" 2>"$T/$name.err" || rc=$?
}

# mtime: the test file's modification time, to the nanosecond.
dat=$T/work/iofleet-e2e.dat
mtime() { stat -c %y "$dat"; }

# wait_running ERR: until the manager's stderr shows 2 live lines of test 1 (60 s at most)
# and the test file is being written.
wait_running() {
    local m
    for _ in $(seq 600); do
        [[ $(grep -c '\[run\] test 1/' "$1" 2>/dev/null || true) -ge 2 ]] && break
        kill -0 "$mgr_pid" 2>/dev/null || fail "the manager exited before the test ran"
        sleep 0.1
    done
    m=$(mtime)
    sleep 0.5
    [[ $(mtime) != "$m" ]] || fail "the test file is not being written while the test runs"
}

# --- the workdir's owner and ACL -------------------------------------------------------
# Mode 0777: Wine shows a DACL letting Everyone write; the agent refuses it at start-up.
mkdir -m 0777 "$T/open"
rc=0
timeout 30 wine "$exe" --listen 127.0.0.1:0 --insecure --name winnode --workdir "$T/open" \
    </dev/null >/dev/null 2>"$T/open.err" || rc=$?
[[ $rc != 0 && $rc != 124 ]] || fail "dynamo.exe on a workdir Everyone may write: exit $rc"
grep -q "workdir '.*open': Everyone may .* in it: only SYSTEM, Administrators and the agent's account (" \
    "$T/open.err" || fail "no refusal naming the workdir, Everyone and the right"
ok "a workdir Everyone may write refused: $(grep -o "workdir '.*open': Everyone may [^:]*" "$T/open.err")"

# --- plain TCP --------------------------------------------------------------------------
start_agent "$T/agent-tcp.log" --insecure
plan p-default.json "" 2s "$rand4k"
run tcp p-default.json --insecure
[[ $rc == 0 ]] || fail "iofleet run over TCP exited $rc"
check "$T/tcp.json" 1
ok "plain TCP: a group without an engine runs the windows engine on dynamo.exe (Wine)"
# The manager names that engine for the Windows node, not libaio: validate --agent says
# what each group runs there.
rc=0
"$iofleet" validate "$T/p-default.json" --insecure --agent "127.0.0.1:$port" \
    >"$T/validate.log" 2>"$T/validate.err" || rc=$?
[[ $rc == 0 ]] || fail "validate --agent exited $rc"
grep -qF "  workers[0]: engine windows (the agent's default: it runs Windows; the plan names none)" \
    "$T/validate.log" || fail "validate --agent does not name windows for the Windows node"
ok "validate --agent: $(grep -F '  workers[0]: engine' "$T/validate.log")"

# A test file planted in the workdir by another user (uid 65534, which Wine shows as an
# owner other than the agent's account) is refused, named with its owner, and left as it
# was: never reused, filled or removed.
foreign=$T/work/iofleet-foreign.dat
head -c 8388608 /dev/zero >"$foreign"
chown 65534:65534 "$foreign"
m=$(stat -c '%i %s %y' "$foreign")
sed 's/"iofleet-e2e.dat"/"iofleet-foreign.dat"/' "$T/p-default.json" >"$T/p-foreign.json"
run foreign p-foreign.json --insecure
[[ $rc == 1 ]] || fail "a planted test file of another owner: iofleet run exited $rc, expected 1"
grep -q "target 'iofleet-foreign.dat': not a plain file of the agent's user: owned by .*, not by SYSTEM, Administrators or the agent's account (" \
    "$T/foreign.err" || fail "a planted test file of another owner: no refusal naming it and its owner"
[[ $(stat -c '%i %s %y' "$foreign") == "$m" && $(stat -c %u "$foreign") == 65534 ]] ||
    fail "the planted test file was changed ($m -> $(stat -c '%i %s %y' "$foreign"))"
ok "a planted test file of another owner refused: $(grep -o "target 'iofleet-foreign.dat': [^:]*: owned by [^:]*" "$T/foreign.err" | head -n1)"

plan p-libaio.json libaio 2s "$rand4k"
run libaio p-libaio.json --insecure
[[ $rc == 1 ]] || fail "a plan naming libaio: iofleet run exited $rc, expected 1"
grep -qF "winnode: workers[0]: engine libaio is not available on this node: it is an engine of Linux agents, and this one runs Windows (its engines: windows, sync, null)" \
    "$T/libaio.err" || fail "a plan naming libaio: no refusal naming the engine and the system"
ok "libaio refused: $(grep -F 'not available' "$T/libaio.err" | head -n1)"
rc=0
"$iofleet" validate "$T/p-libaio.json" --insecure --agent "127.0.0.1:$port" \
    >"$T/validate-libaio.log" 2>"$T/validate-libaio.err" || rc=$?
[[ $rc == 1 ]] || fail "validate --agent of a plan naming libaio exited $rc, expected 1"
grep -qF "  workers[0]: engine libaio: REFUSED at prepare: an engine of Linux agents, and this one runs Windows" \
    "$T/validate-libaio.log" || fail "validate --agent does not foresee the refusal of libaio"
ok "validate --agent foresees it: $(grep -F 'REFUSED' "$T/validate-libaio.log")"

# The manager killed mid-test: the agent notices and its I/O stops within 10 s.
plan p-long.json windows 60s "$rand4k"
nlost=$(grep -c "manager 'iofleet' lost (" "$T/agent-tcp.log" || true)
"$iofleet" run "$T/p-long.json" --insecure --agent "127.0.0.1:$port" --wait 60 \
    >"$T/mgr-killed.log" 2>"$T/mgr-killed.err" &
mgr_pid=$!
wait_running "$T/mgr-killed.err"
kill -KILL "$mgr_pid"
wait "$mgr_pid" 2>/dev/null || true
mgr_pid=''
t0=$(date +%s%N)
for _ in $(seq 100); do
    [[ $(grep -c "manager 'iofleet' lost (" "$T/agent-tcp.log" || true) -gt $nlost ]] && break
    sleep 0.1
done
t1=$(date +%s%N)
grep "manager 'iofleet' lost (" "$T/agent-tcp.log" | tail -n1 | grep -qF "): stopping all I/O" ||
    fail "the agent did not say it stops its I/O within 10 s of the manager's kill"
m=$(mtime)
sleep 2
[[ $(mtime) == "$m" ]] || fail "the test file is still written 2 s after the agent said it stopped"
ok "manager killed: the agent stopped its I/O $(((t1 - t0) / 1000000)) ms later: $(grep "manager 'iofleet' lost (" "$T/agent-tcp.log" | tail -n1)"

# A second run reuses the test file: the same file, not rewritten (a read-only test leaves
# its modification time), and kept by --cleanup, which removes only what its run created.
plan p-reuse.json windows 1s "$seq64k"
id0=$(stat -c '%i %s' "$dat")
m=$(mtime)
run reuse p-reuse.json --insecure --cleanup
[[ $rc == 0 ]] || fail "the second run exited $rc"
[[ -e $dat ]] || fail "--cleanup removed the test file the run only reused"
[[ $(stat -c '%i %s' "$dat") == "$id0" && $(mtime) == "$m" ]] ||
    fail "the test file was made again ($id0 $m -> $(stat -c '%i %s' "$dat") $(mtime))"
ok "a second run reused the test file (inode and size $id0, unchanged)"
stop_agent

# --- mutual TLS ---------------------------------------------------------------------------
"$iofleet" pki init "$T/pki" --agent winnode >"$T/pki.log" 2>&1 || fail "pki init"
# A key others may read: Wine shows mode 0644 as a DACL granting Everyone read access,
# which the agent names (common/os/win.c, iof_os_key_exposed).
chmod 644 "$T/pki/winnode-key.pem"
start_agent "$T/agent-tls.log" --tls-ca "$T/pki/ca.pem" --tls-cert "$T/pki/winnode.pem" \
    --tls-key "$T/pki/winnode-key.pem"
grep -q "private key .*winnode-key.pem may be read by Everyone" "$T/agent-tls.log" ||
    fail "no warning for a key Everyone may read"
tls=(--tls-ca "$T/pki/ca.pem" --tls-cert "$T/pki/manager.pem" --tls-key "$T/pki/manager-key.pem")
plan p-two.json windows 2s "$rand4k" "$seq64k"
run tls p-two.json "${tls[@]}"
[[ $rc == 0 ]] || fail "iofleet run over TLS exited $rc"
check "$T/tls.json" 2
ok "mutual TLS: the two-test plan with the windows engine, certificates from iofleet pki init"

# The agent killed mid-test: lost, its measured I/O kept as a partial NODE row.
"$iofleet" run "$T/p-long.json" --agent "127.0.0.1:$port" "${tls[@]}" --wait 60 \
    --json "$T/killed.json" >"$T/killed.log" 2>"$T/killed.err" &
mgr_pid=$!
wait_running "$T/killed.err"
sleep 1
kill -KILL "$agent_pid"
wait "$agent_pid" 2>/dev/null || true
agent_pid=''
win_expect_lost "its only agent was killed" winnode "$T/killed.err" "$T/killed.json" any
ok "agent killed: the manager named it lost and kept its measured I/O as partial"
