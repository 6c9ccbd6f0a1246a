# SPDX-License-Identifier: Apache-2.0
# packaging/systemd/iofleet-serve.service as the build configured it:
# systemd-analyze verify accepts it (the binary path pointed at this build), and
# its ExecStart, run as package_deb.sh runs dynamo's (EnvironmentFile sourced,
# WorkingDirectory, the state directory made), starts iofleet serve with TLS
# from the shipped settings' --pki: the API answers and SIGTERM ends it with
# exit 0. With the shipped settings and no /etc/iofleet/pki it refuses to
# start with exit 2 (RestartPreventExitStatus), naming the missing file.
source "$(dirname "$0")/lib/cluster.bash"
command -v curl >/dev/null || skip "curl not installed"
unit=$IOF_BIN/../packaging/iofleet-serve.service
default=$IOF_SRC/packaging/systemd/iofleet-serve.default
[ -r "$unit" ] || fail "no configured unit at $unit (packaging/package.cmake)"
[ -r "$default" ] || fail "no $default"

exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
bin=${exec_start%% *}
[ "${bin##*/}" = iofleet ] || fail "ExecStart runs $bin, not iofleet"
case "$exec_start" in *" serve "*) ;; *) fail "ExecStart is not iofleet serve: $exec_start" ;; esac
grep -qx 'RestartPreventExitStatus=2' "$unit" || fail "exit 2 (a usage error) would be restarted"
grep -qx 'StateDirectory=iofleet-serve' "$unit" || fail "no StateDirectory=iofleet-serve"

if command -v systemd-analyze >/dev/null; then
    sed "s|^ExecStart=$bin |ExecStart=$IOFLEET |; s|^EnvironmentFile=.*|EnvironmentFile=-$default|" \
        "$unit" >"$T/iofleet-serve.service"
    systemd-analyze verify --man=no "$T/iofleet-serve.service" >"$T/verify" 2>&1 ||
        { cat "$T/verify"; fail "systemd-analyze verify"; }
    ok "systemd-analyze verify accepts iofleet-serve.service"
else
    echo "note: systemd-analyze not installed: the unit is not verified"
fi

# start_unit SETTINGS OUT ERR: the unit's ExecStart with SETTINGS sourced, the
# state directory in $T/state; PID in SRV.
start_unit() {
    local settings=$1 out=$2 err=$3 cmd
    [ -d "$T/state" ] || mkdir -m 0700 "$T/state"
    cmd=${exec_start//\/var\/lib\/iofleet-serve/$T/state}
    cmd=$IOFLEET${cmd#"$bin"}
    (
        set -a
        # shellcheck disable=SC1090
        . "$settings"
        set +a
        cd "$T/state" || exit 1
        eval "exec $cmd"
    ) >"$out" 2>"$err" &
    SRV=$!
    CL_ALL_PIDS+=("$SRV")
}

if [ ! -e /etc/iofleet/pki ]; then
    start_unit "$default" "$T/o0" "$T/e0"
    cl_wait_exit "$SRV" 20 rc
    [ "$rc" = 2 ] || fail "the shipped settings without /etc/iofleet/pki: exit $rc, expected 2: $(cat "$T/e0")"
    expect_in "$T/e0" "/etc/iofleet/pki/ca.pem"
    expect_in "$T/e0" "iofleet pki init"
    ok "shipped settings without a pki: exit 2 ($(head -n1 "$T/e0"))"
fi

"$IOFLEET" pki init "$T/pki" --agent node1 >/dev/null || fail "iofleet pki init"
sed -e "s|^SERVE_HTTP=.*|SERVE_HTTP=\"--http 127.0.0.1:0\"|" \
    -e "s|^SERVE_LISTEN=.*|SERVE_LISTEN=\"--listen 127.0.0.1:0\"|" \
    -e "s|/etc/iofleet/pki|$T/pki|" "$default" >"$T/settings"
start_unit "$T/settings" "$T/o1" "$T/e1"
cl_wait_log "$T/e1" "iofleet serve: API on http://127.0.0.1:" 20
expect_in "$T/e1" "(TLS)"
api=$(sed -n 's/.*API on \(http:[^ ]*\) .*/\1/p' "$T/e1" | head -n1)
curl -sf "${api}version" | grep -q '"api":"v1"' || fail "the unit's serve does not answer ${api}version"
[ -f "$T/state/runs.db" ] || fail "no run history in the state directory"
kill -TERM "$SRV"
cl_wait_exit "$SRV" 20 rc
[ "$rc" = 0 ] || fail "SIGTERM: exit $rc"
ok "the unit's ExecStart with its settings: TLS from --pki, the API answers, history in the state directory, SIGTERM exit 0"
