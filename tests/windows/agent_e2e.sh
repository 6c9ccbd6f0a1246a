#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/windows/agent_e2e.sh - the Linux manager drives dynamo.exe under Wine: `iofleet run`
# (the Linux build's) runs a small plan (4k random 50 % read, 2 workers, queue depth 4, 2 s,
# a test file in the agent's workdir) against dynamo.exe listening on 127.0.0.1, over
# plain TCP, then over mutual TLS with a pki made here. The results have I/O, ALL = the
# sum of the NODE rows, and the node's software version and system in the JSON.
# Registered by cmake/windows.cmake, so `scripts/windows test` runs it:
#     agent_e2e.sh DYNAMO_EXE
# The Linux iofleet is $IOF_LINUX_BIN/iofleet (default build/bin of this checkout; the
# test skips, exit 77, when it is missing). dynamo.exe is stopped by its PID, and a Wine
# server this test started (none was running for $WINEPREFIX) by its PID, even on failure.
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
exe=${1:?usage: agent_e2e.sh DYNAMO_EXE}
iofleet=${IOF_LINUX_BIN:-$src/build/bin}/iofleet
if [[ ! -x $iofleet ]]; then
    echo "SKIP: no Linux iofleet at $iofleet (cmake --preset default && cmake --build build --target iofleet)" >&2
    exit 77
fi
command -v wine >/dev/null || { echo "SKIP: no wine" >&2; exit 77; }
export WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=" DISPLAY=

mkdir -p "${IOF_TEST_TMPDIR:-/tmp}"
T=$(mktemp -d "${IOF_TEST_TMPDIR:-/tmp}/win-e2e.XXXXXX")
export XDG_DATA_HOME=$T/xdg-data
agent_pid=''
server_pid=''
cleanup() {
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

cat >"$T/plan.json" <<'P'
{"name": "win-e2e", "run": {"ramp": "200ms", "duration": "2s", "interval": "500ms"},
 "specs": [{"name": "4k rand 50r", "lines": [{"size": "4k", "read": 50, "random": 100}]}],
 "workers": [{"nodes": ["*"], "count": 2, "engine": "sync", "queue_depth": 4,
              "targets": [{"path": "iofleet-e2e.dat", "size": "8m"}]}]}
P

# check JSON: I/O done, ALL = sum of NODE, the agent's software and system named.
check() {
    python3 - "$1" <<'PY' || fail "results of $1 (above)"
import json, sys
doc = json.load(open(sys.argv[1]))
agents = doc["agents"]
assert len(agents) == 1, agents
a = agents[0]
assert a["name"] == "winnode", a["name"]
assert a["software"], a
assert "Windows NT" in (a["kernel"] or "") or "Wine" in (a["kernel"] or ""), a["kernel"]
rows = [r for t in doc["tests"] for r in t["results"]]
def kind(k): return [r for r in rows if r["row_type"] == k]
alls, nodes = kind("ALL"), kind("NODE")
assert len(alls) == 1 and len(nodes) == 1, (len(alls), len(nodes))
for key in ("read_ios", "write_ios", "bytes_read", "bytes_written", "errors"):
    assert alls[0][key] == sum(n[key] for n in nodes), key
assert alls[0]["read_ios"] > 0 and alls[0]["write_ios"] > 0, alls[0]
assert alls[0]["errors"] == 0, alls[0]
print("I/O: %d reads, %d writes; agent %s, %s" % (alls[0]["read_ios"], alls[0]["write_ios"],
                                               a["software"], a["kernel"]))
PY
}

# --- plain TCP --------------------------------------------------------------------------
start_agent "$T/agent-tcp.log" --insecure
"$iofleet" run "$T/plan.json" --insecure --agent "127.0.0.1:$port" --json "$T/tcp.json" \
    --wait 60 >"$T/run-tcp.log" 2>"$T/run-tcp.err" || fail "iofleet run over TCP exited $?"
check "$T/tcp.json"
stop_agent
ok "plain TCP: iofleet (Linux) ran the plan on dynamo.exe (Wine)"

# --- mutual TLS ---------------------------------------------------------------------------
"$iofleet" pki init "$T/pki" --agent winnode >"$T/pki.log" 2>&1 || fail "pki init"
# A key others may read: Wine shows mode 0644 as a DACL granting Everyone read access,
# which the agent names (common/os/win.c, iof_os_key_exposed).
chmod 644 "$T/pki/winnode-key.pem"
start_agent "$T/agent-tls.log" --tls-ca "$T/pki/ca.pem" --tls-cert "$T/pki/winnode.pem" \
    --tls-key "$T/pki/winnode-key.pem"
grep -q "private key .*winnode-key.pem may be read by Everyone" "$T/agent-tls.log" ||
    fail "no warning for a key Everyone may read"
"$iofleet" run "$T/plan.json" --agent "127.0.0.1:$port" --tls-ca "$T/pki/ca.pem" \
    --tls-cert "$T/pki/manager.pem" --tls-key "$T/pki/manager-key.pem" --json "$T/tls.json" \
    --wait 60 >"$T/run-tls.log" 2>"$T/run-tls.err" || fail "iofleet run over TLS exited $?"
check "$T/tls.json"
stop_agent
ok "mutual TLS: the same plan, certificates from iofleet pki init"
