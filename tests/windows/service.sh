#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/windows/service.sh - dynamo.exe as the Windows service "iofleet-dynamo", under
# Wine's Service Control Manager: bad options are refused at install, the service
# installed with an agent's options and `--log-file dynamo-service.log` starts, listens
# (the Linux `iofleet agents` sees it, Windows on Wine), stops through the service manager
# (the agent logs the stop request in that file, beside dynamo.exe) and is uninstalled; a
# second install and a start after the uninstall are refused. Installed again without
# --log-file, it logs to the event log (Wine keeps none to read back: the service runs,
# answers, stops, and writes no log file). Registered by cmake/windows.cmake:
#     service.sh DYNAMO_EXE
# The service is uninstalled and a Wine server this test started winds down, even on
# failure. Skips (77) without the Linux build's iofleet ($IOF_LINUX_BIN, default build/bin).
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
exe=${1:?usage: service.sh DYNAMO_EXE}
iofleet=${IOF_LINUX_BIN:-$src/build/bin}/iofleet
if [[ ! -x $iofleet ]]; then
    echo "SKIP: no Linux iofleet at $iofleet (cmake --preset default && cmake --build build --target iofleet)" >&2
    exit 77
fi
command -v wine >/dev/null || { echo "SKIP: no wine" >&2; exit 77; }
export WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=" DISPLAY=
log=$(dirname "$exe")/dynamo-service.log

mkdir -p "${IOF_TEST_TMPDIR:-/tmp}"
T=$(mktemp -d "${IOF_TEST_TMPDIR:-/tmp}/win-svc.XXXXXX")
server_pid=''
installed=false
cleanup() {
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
    for f in "$T"/*.out "$log"; do [[ -e $f ]] && { echo "--- $f"; tail -n 20 "$f"; } >&2; done
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

svc stop stop
[[ $rc == 0 ]] && grep -q "service iofleet-dynamo stopped" "$T/stop.out" || fail "stop exited $rc"
grep -q "stop requested: shutting down" "$log" || fail "the agent did not log the stop request"
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
