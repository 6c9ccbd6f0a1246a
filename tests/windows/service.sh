#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/windows/service.sh - dynamo.exe as the Windows service "iofleet-dynamo", under
# Wine's Service Control Manager: bad options are refused at install, the service
# installed with an agent's options and `--log-file dynamo-service.log` starts, listens
# (the Linux `iofleet agents` sees it, Windows on Wine), is stopped through the service
# manager in the middle of a test (the agent logs the stop and how long it took in that
# file, beside dynamo.exe; its I/O ends before the service is reported stopped, within
# IOF_STOP_BOUND_MS, default 3000, of the request, measured on the test file and printed
# beside the product's bound, 1 s; the manager names the agent lost and keeps its partial
# NODE row) and is uninstalled; a
# second install and a start after the uninstall are refused. Installed again without
# --log-file, it logs to the event log (Wine keeps none to read back: the service runs,
# answers, stops, and writes no log file). Registered by cmake/windows.cmake:
#     service.sh DYNAMO_EXE
# The service is uninstalled and a Wine server this test started winds down, even on
# failure; one left registered by an earlier run that was killed is removed first. Skips (77) without the Linux build's iofleet ($IOF_LINUX_BIN, default build/bin).
set -euo pipefail

exe=${1:?usage: service.sh DYNAMO_EXE}
# shellcheck source=tests/windows/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
win_init svc
log=$(dirname "$exe")/dynamo-service.log
server_pid=''
mgr_pid=''
installed=false
bound=${IOF_STOP_BOUND_MS:-3000}
cleanup() {
    if [[ -n $mgr_pid ]]; then
        kill -KILL "$mgr_pid" 2>/dev/null || true
        wait "$mgr_pid" 2>/dev/null || true
    fi
    if $installed; then
        wine "$exe" service uninstall >/dev/null 2>&1 || true
    fi
    if [[ -n $server_pid ]]; then
        # As in agent_e2e.sh: our server ends Wine's own processes and exits by itself.
        for _ in $(seq 300); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -f "$log"
    rm -rf "$T"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*" >&2
    for f in "$T"/*.out "$T"/*.err "$log"; do [[ -e $f ]] && { echo "--- $f"; tail -n 20 "$f"; } >&2; done
    exit 1
}
ok() { echo "ok: $*"; }

wineserver -f -p5 </dev/null >/dev/null 2>&1 &
server_pid=$!
sleep 1
if ! kill -0 "$server_pid" 2>/dev/null; then
    wait "$server_pid" 2>/dev/null || true
    server_pid=''
fi

# svc NAME ARGS...: `dynamo.exe service ARGS`, output in $T/NAME.out, sets rc.
svc() {
    local name=$1
    shift
    rc=0
    wine "$exe" service "$@" </dev/null >"$T/$name.out" 2>&1 || rc=$?
}

port=''
for _ in $(seq 50); do
    p=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
    printf -v hex '%04X' "$p"
    if ! grep -q ":$hex " /proc/net/tcp /proc/net/tcp6 2>/dev/null; then
        port=$p
        break
    fi
done
[[ -n $port ]] || fail "no free port"
rm -f "$log"

# A run killed before its cleanup (this Wine prefix is the project's cache, shared by
# every checkout) leaves the service registered, and every later install is refused:
# remove it first and say so.
svc stale uninstall
[[ $rc != 0 ]] || echo "note: removed a service iofleet-dynamo left registered by an earlier run"

svc bad install --listen "127.0.0.1:$port" --insecure --bogus
[[ $rc == 2 ]] || fail "install with a bad option exited $rc, expected 2"
grep -q -- "--bogus" "$T/bad.out" || fail "install with a bad option did not name it"
svc nothing start
[[ $rc == 2 ]] && grep -q "does not exist" "$T/nothing.out" ||
    fail "start before install: exit $rc, expected 2 with 'does not exist'"
ok "bad options refused at install, nothing installed"

svc nolog install --log-file --listen "127.0.0.1:$port" --insecure
[[ $rc == 2 ]] && grep -q -- "--log-file needs a file name" "$T/nolog.out" ||
    fail "install with --log-file and no name: exit $rc"
svc install install --listen "127.0.0.1:$port" --insecure --name svcnode --workdir "$T/work" \
    --log-file dynamo-service.log
[[ $rc == 0 ]] || fail "install exited $rc"
installed=true
grep -q "service iofleet-dynamo installed" "$T/install.out" || fail "install said nothing"
grep -qF -- 'service run "--log-file" "dynamo-service.log" "--listen"' "$T/install.out" ||
    fail "the service's command line does not keep --log-file: $(cat "$T/install.out")"
svc again install --listen "127.0.0.1:$port" --insecure --name svcnode
[[ $rc == 2 ]] || fail "a second install exited $rc, expected 2"
svc start start
[[ $rc == 0 ]] && grep -q "service iofleet-dynamo running" "$T/start.out" || fail "start exited $rc"
for _ in $(seq 300); do
    grep -q "agent 'svcnode' listening on 127.0.0.1:$port" "$log" 2>/dev/null && break
    sleep 0.1
done
"$iofleet" agents --insecure --agent "127.0.0.1:$port" >"$T/agents.out" 2>&1 ||
    fail "iofleet agents cannot reach the service"
grep -q "^svcnode .*Windows NT" "$T/agents.out" || fail "iofleet agents does not see svcnode on Windows"
ok "installed, started, seen by iofleet agents: $(head -n1 "$T/agents.out")"

# Stopped in the middle of a test (4k random, half writes): the agent ends its I/O before
# the service is reported stopped, which `service stop` waits for; the manager names the
# agent lost and keeps what it measured.
dat=$T/work/iofleet-svc.dat
cat >"$T/plan.json" <<'P'
{"name": "svc-stop", "run": {"ramp": "300ms", "duration": "60s", "interval": "500ms"},
 "specs": [{"name": "4k rand 50r", "lines": [{"size": "4k", "read": 50, "random": 100}]}],
 "workers": [{"nodes": ["*"], "count": 1, "queue_depth": 16,
              "targets": [{"path": "iofleet-svc.dat", "size": "8m"}]}]}
P
"$iofleet" run "$T/plan.json" --insecure --agent "127.0.0.1:$port" --wait 60 --json "$T/run.json" \
    >"$T/run.out" 2>"$T/run.err" &
mgr_pid=$!
for _ in $(seq 600); do
    [[ $(grep -c '\[run\] test 1/' "$T/run.err" 2>/dev/null || true) -ge 2 ]] && break
    kill -0 "$mgr_pid" 2>/dev/null || fail "the manager exited before the test ran: $(cat "$T/run.err")"
    sleep 0.1
done
m=$(date -r "$dat" +%s%N)
sleep 1
[[ $(date -r "$dat" +%s%N) != "$m" ]] || fail "the test file is not being written"
t0=$(date +%s%N)
svc stop stop
t1=$(date +%s%N)
last=$(date -r "$dat" +%s%N)
[[ $rc == 0 ]] && grep -q "service iofleet-dynamo stopped (.* ms after the stop request)" "$T/stop.out" ||
    fail "stop exited $rc"
sleep 1
[[ $(date -r "$dat" +%s%N) == "$last" ]] || fail "the test file is written after the service stopped"
ms=$(((last - t0) / 1000000))
((ms < 0)) && ms=0
((ms <= bound)) || fail "the test file was last written $ms ms after \`service stop\` was started (bound $bound ms)"
grep -qF "dynamo: info: the service's stop: stopping all I/O and shutting down" "$log" ||
    fail "the agent did not log the service's stop"
own=$(sed -n "s/.*dynamo: info: stopped \([0-9]*\) ms after the service's stop: every test's I\/O ended.*/\1/p" "$log")
[[ -n $own ]] || fail "the agent did not log how long its stop took"
win_expect_lost "the service stopped" svcnode "$T/run.err" "$T/run.json" both
ok "the service stopped mid-test: its I/O ended $ms ms after \`dynamo.exe service stop\` was started (Wine starting that program included; measured on the test file; $( ((ms <= 1000)) && echo within || echo OVER) the product's 1 s, asserted <= $bound ms), the agent's own figure $own ms, \`service stop\` done $(((t1 - t0) / 1000000)) ms after its start ($(cat "$T/stop.out")); the manager: $(grep -F "iofleet: agent svcnode (" "$T/run.err" | head -n1)"
if "$iofleet" agents --insecure --agent "127.0.0.1:$port" >"$T/gone.out" 2>&1; then
    fail "the agent still answers after the stop"
fi
svc uninstall uninstall
[[ $rc == 0 ]] || fail "uninstall exited $rc"
installed=false
svc after start
[[ $rc == 2 ]] || fail "start after uninstall exited $rc, expected 2"
ok "stopped through the service manager (logged), uninstalled"

# The event log: installed without --log-file, the service runs and logs nowhere else.
svc install2 install --listen "127.0.0.1:$port" --insecure --name svcnode --workdir "$T/work"
[[ $rc == 0 ]] || fail "install without --log-file exited $rc"
installed=true
rm -f "$log"
svc start2 start
[[ $rc == 0 ]] && grep -q "its log: the Application event log (source iofleet-dynamo)" "$T/start2.out" ||
    fail "start (event log) exited $rc: $(cat "$T/start2.out")"
seen=false
for _ in $(seq 100); do
    if "$iofleet" agents --insecure --agent "127.0.0.1:$port" >"$T/agents2.out" 2>&1; then
        seen=true
        break
    fi
    sleep 0.3
done
$seen || fail "iofleet agents cannot reach the service that logs to the event log"
svc stop2 stop
[[ $rc == 0 ]] || fail "stop (event log) exited $rc"
[[ ! -e $log ]] || fail "the service wrote $log without --log-file: $(cat "$log")"
svc uninstall2 uninstall
[[ $rc == 0 ]] || fail "uninstall (event log) exited $rc"
installed=false
ok "without --log-file: the service runs, answers, stops, and writes no log file (event log)"
