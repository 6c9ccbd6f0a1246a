# SPDX-License-Identifier: Apache-2.0
# dynamo.service under a real systemd (label `package`): this machine's PID 1
# is not systemd, so a Debian 12 system is made with mmdebstrap (systemd and the
# iofleet .deb, installed by its own postinst) and booted with systemd-nspawn.
# There: the postinst enabled the unit and systemd started it at boot; the
# agent runs with no capability, no new privileges and the system-call filter;
# libaio (and io_uring where the kernel has it) tests run through the unit's
# socket under the sandbox; `systemd-analyze security` rates the unit; a loop
# device named by --allow is refused until a DeviceAllow= drop-in grants it
# (where the container's systemd can enforce device policies; not under hybrid
# cgroups, which is said), and used once it does; SIGKILL restarts the agent (Restart=on-failure), a
# usage error (exit 2) does not; `systemctl stop` in the middle of a test stops
# it with exit 0; `dpkg --purge` inside leaves no file named after iofleet or
# dynamo. Skips, saying why, without root, mmdebstrap, systemd-nspawn or
# Debian's mirror. The container is powered off and its files removed whatever
# happens.
source "$(dirname "$0")/lib/common.bash"
[ "$(id -u)" -eq 0 ] || skip "needs root (mmdebstrap, systemd-nspawn)"
for t in mmdebstrap systemd-nspawn nsenter dpkg-deb cpack losetup; do
    command -v "$t" >/dev/null 2>&1 || skip "$t is not installed (scripts/deps package)"
done

machine=iofleet-test-$$
root=$T/root
had_nspawn_dir=0
[ -d /run/systemd/nspawn ] && had_nspawn_dir=1
stop_container() {
    if [ -n "${NSPAWN_PID:-}" ] && kill -0 "$NSPAWN_PID" 2>/dev/null; then
        kill -TERM "$NSPAWN_PID" 2>/dev/null # nspawn --boot: an orderly poweroff
        for _ in $(seq 100); do kill -0 "$NSPAWN_PID" 2>/dev/null || break; sleep 0.2; done
        kill -KILL "$NSPAWN_PID" 2>/dev/null
    fi
    [ -n "${LOOP:-}" ] && losetup -d "$LOOP" 2>/dev/null
    [ "$had_nspawn_dir" = 1 ] || rm -rf /run/systemd/nspawn
    # Nothing may still be mounted under the root before it is removed.
    if grep -q " $root" /proc/mounts; then
        echo "note: mounts left under $root; not removing it" >&2
        T=/nonexistent # keep iof_run_cleanup's rm -rf away from it
    fi
}
iof_on_exit stop_container

t0=$SECONDS
IOF_PKG_WINDOWS=0 "$IOF_SRC/scripts/package" "$T/pkg" >"$T/package.out" 2>&1 || { cat "$T/package.out"; fail "scripts/package"; }
deb=$(ls "$T"/pkg/iofleet_*.deb | head -n 1)
if ! mmdebstrap --quiet --variant=minbase --include=systemd,systemd-sysv,dbus --include="$deb" \
    --hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    bookworm "$root" "${MIRROR:-http://deb.debian.org/debian}" >"$T/mmdebstrap.out" 2>&1; then
    if grep -qiE 'could not resolve|temporary failure|failed to fetch|connection' "$T/mmdebstrap.out"; then
        skip "Debian's mirror is not reachable: $(grep -m1 -iE 'resolve|failure|fetch|connection' "$T/mmdebstrap.out")"
    fi
    cat "$T/mmdebstrap.out"
    fail "mmdebstrap"
fi
# mmdebstrap's hook bind-mounted the .deb at its own path inside the root: drop
# the empty mount point and the directories made for it.
rm -f "$root$deb"
rmdir -p "$(dirname "$root$deb")" 2>/dev/null || true
ok "a Debian 12 root with systemd and ${deb##*/} in $((SECONDS - t0)) s"

# A 64 MiB loop device for the device-policy check, bound into the container.
truncate -s 64M "$T/disk.img"
LOOP=$(losetup --find --show "$T/disk.img") || skip "no loop device here"

systemd-nspawn --quiet -D "$root" --boot --register=no --keep-unit --private-network \
    -M "$machine" --bind="$LOOP" >"$T/nspawn.log" 2>&1 </dev/null &
NSPAWN_PID=$!
leader=
for _ in $(seq 300); do
    leader=$(cat /proc/"$NSPAWN_PID"/task/*/children 2>/dev/null | awk '{print $1}' | head -n 1)
    if [ -n "$leader" ]; then
        state=$(nsenter -t "$leader" -a systemctl is-system-running 2>/dev/null || true)
        case "$state" in running | degraded) break ;; esac
    fi
    kill -0 "$NSPAWN_PID" 2>/dev/null || { cat "$T/nspawn.log"; skip "systemd-nspawn cannot boot a container here"; }
    sleep 0.2
done
[ "$state" = running ] || [ "$state" = degraded ] || { cat "$T/nspawn.log"; fail "the container did not boot ($state)"; }
# A command in the container, with the container's own environment, not this test's.
in_ctr() { nsenter -t "$leader" -a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }
ok "systemd booted in the container ($state)"

# Enabled by the postinst, started at boot.
in_ctr systemctl is-active --quiet dynamo || {
    in_ctr systemctl status dynamo --no-pager
    fail "dynamo.service is not active after boot"
}
pid=$(in_ctr systemctl show -p MainPID --value dynamo)
in_ctr grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' "/proc/$pid/status" >"$T/status"
for want in 'CapEff:	0000000000000000' 'CapBnd:	0000000000000000' 'NoNewPrivs:	1' 'Seccomp:	2'; do
    grep -qF "$want" "$T/status" || { cat "$T/status"; fail "dynamo.service: not '$want'"; }
done
ok "dynamo.service active at boot: no capability, no new privileges, seccomp filter"

# Tests through the unit's socket, with real I/O under the sandbox.
run_in() {
    in_ctr /usr/bin/iofleet run /usr/share/iofleet/configs/quickstart.json \
        --agent unix:/run/iofleet/dynamo.sock --set run.duration=2s --set run.ramp=0s \
        --quiet --no-db "$@"
}
run_in --json /tmp/libaio.json >"$T/out" 2>&1 || { cat "$T/out"; fail "libaio run through dynamo.service"; }
iops=$(in_ctr cat /tmp/libaio.json | jq '[.tests[].results[] | select(.row_type == "ALL") | .iops] | min')
in_ctr stat -c '%a %n' /var/lib/iofleet /var/lib/iofleet/iofleet-quickstart.dat >"$T/modes"
grep -qx '700 /var/lib/iofleet' "$T/modes" && grep -qx '600 /var/lib/iofleet/iofleet-quickstart.dat' "$T/modes" ||
    { cat "$T/modes"; fail "workdir or test file modes"; }
ok "libaio through the unit: ALL IOPS >= $iops; workdir 0700, test file 0600"
if run_in --set 'workers[0].engine=io_uring' >"$T/out" 2>&1; then
    ok "io_uring through the unit (the system-call filter lets it through)"
elif grep -q 'io_uring is not available' "$T/out"; then
    echo "note: io_uring not available on this kernel: $(grep -m1 'not available' "$T/out")"
else
    cat "$T/out"
    fail "io_uring run through dynamo.service"
fi
score=$(in_ctr systemd-analyze security dynamo --no-pager 2>/dev/null |
    sed -n 's/.*Overall exposure level for dynamo.service: \([0-9.]*\).*/\1/p')
[ -n "$score" ] || fail "systemd-analyze security gave no score"
awk -v s="$score" 'BEGIN { exit !(s <= 2.5) }' || fail "exposure level $score is above 2.5"
ok "systemd-analyze security: exposure $score"

# Devices: --allow names the loop device; DevicePolicy=closed refuses it until a
# drop-in's DeviceAllow= grants it.
in_ctr sed -i "s|^DYNAMO_ALLOW=.*|DYNAMO_ALLOW=\"--allow $LOOP\"|" /etc/default/dynamo
in_ctr systemctl restart dynamo
dev_plan='workers[0].targets[0]={"path":"'$LOOP'"}'
# systemd enforces DevicePolicy= through the cgroup devices controller (v1) or
# a BPF program on the service's cgroup (v2); under nspawn on a host with
# hybrid cgroups the v1 controllers are mounted read-only in the container, so
# the refusal can only be checked where the container's systemd can write them.
if in_ctr awk '$5 == "/sys/fs/cgroup/devices" && $6 ~ /^ro/ { f = 1 } END { exit !f }' /proc/self/mountinfo; then
    echo "note: the cgroup devices controller is read-only in this container (hybrid cgroups): DevicePolicy=closed cannot be enforced here, the refusal is not checked"
else
    run_in --set "$dev_plan" --set 'specs=[{"name":"r","lines":[{"size":"4k","read":100}]}]' >"$T/out" 2>&1 &&
        fail "the loop device was usable without a DeviceAllow= drop-in"
    grep -qi 'permitted\|denied' "$T/out" || { cat "$T/out"; fail "refusal without DeviceAllow= does not say why"; }
    ok "without a drop-in the device is refused: $(grep -m1 -i 'permitted\|denied' "$T/out" | cut -c1-110)"
fi
in_ctr mkdir -p /etc/systemd/system/dynamo.service.d
printf '[Service]\nDeviceAllow=%s rw\n' "$LOOP" | in_ctr tee /etc/systemd/system/dynamo.service.d/devices.conf >/dev/null
in_ctr systemctl daemon-reload
in_ctr systemctl restart dynamo
run_in --set "$dev_plan" --set 'specs=[{"name":"r","lines":[{"size":"4k","read":100}]}]' >"$T/out" 2>&1 ||
    { cat "$T/out"; fail "the loop device with DeviceAllow=$LOOP"; }
ok "with DeviceAllow=$LOOP rw the agent reads it"
in_ctr rm -rf /etc/systemd/system/dynamo.service.d
in_ctr sed -i 's|^DYNAMO_ALLOW=.*|DYNAMO_ALLOW=""|' /etc/default/dynamo
in_ctr systemctl daemon-reload

# Restart=on-failure: SIGKILL restarts; exit 2 (usage) does not.
in_ctr systemctl restart dynamo
in_ctr sh -c 'kill -KILL $(systemctl show -p MainPID --value dynamo)'
for _ in $(seq 50); do
    [ "$(in_ctr systemctl show -p NRestarts --value dynamo)" = 1 ] &&
        in_ctr systemctl is-active --quiet dynamo && break
    sleep 0.2
done
[ "$(in_ctr systemctl show -p NRestarts --value dynamo)" = 1 ] || fail "not restarted after SIGKILL"
ok "SIGKILL: restarted (NRestarts=1)"

# systemctl stop in the middle of a test: exit 0, socket directory gone.
in_ctr sh -c '/usr/bin/iofleet run /usr/share/iofleet/configs/quickstart.json \
    --agent unix:/run/iofleet/dynamo.sock --set "workers[0].engine=null" \
    --set run.duration=30s --set run.ramp=0s --quiet --no-db >/dev/null 2>&1; echo $? >/tmp/mgr.rc' &
MGR=$!
sleep 3
t1=$(date +%s%N)
in_ctr systemctl stop dynamo
ms=$((($(date +%s%N) - t1) / 1000000))
wait "$MGR" || true
[ "$(in_ctr systemctl show -p Result --value dynamo)" = success ] &&
    [ "$(in_ctr systemctl show -p ExecMainStatus --value dynamo)" = 0 ] ||
    fail "systemctl stop: $(in_ctr systemctl show -p Result -p ExecMainStatus dynamo | tr '\n' ' ')"
[ "$(in_ctr cat /tmp/mgr.rc)" = 1 ] || fail "the manager exited $(in_ctr cat /tmp/mgr.rc), expected 1"
in_ctr test ! -e /run/iofleet || fail "/run/iofleet left after stop"
ok "systemctl stop mid-test: exit 0 in $ms ms, manager exit 1, /run/iofleet removed"

in_ctr sed -i 's|^DYNAMO_OPTS=.*|DYNAMO_OPTS="--no-such-option"|' /etc/default/dynamo
in_ctr systemctl start dynamo || true
sleep 3
[ "$(in_ctr systemctl show -p ExecMainStatus --value dynamo)" = 2 ] &&
    [ "$(in_ctr systemctl show -p NRestarts --value dynamo)" = 0 ] &&
    [ "$(in_ctr systemctl show -p ActiveState --value dynamo)" = failed ] ||
    fail "usage error: $(in_ctr systemctl show -p ExecMainStatus -p NRestarts -p ActiveState dynamo | tr '\n' ' ')"
ok "a usage error (exit 2) is not restarted"

# Purge with systemd running: the unit is gone, and every file named after it.
in_ctr dpkg --purge iofleet >"$T/purge" 2>&1 || { cat "$T/purge"; fail "dpkg --purge in the container"; }
in_ctr systemctl daemon-reload
left=$(in_ctr find / -xdev \( -name '*iofleet*' -o -name '*dynamo*' \) 2>/dev/null | grep -v '^/tmp/' || true)
[ -z "$left" ] || fail "left after purge: $left"
[ "$(in_ctr systemctl show -p LoadState --value dynamo)" = not-found ] || fail "dynamo.service still known"
ok "dpkg --purge under systemd: unit and files gone"
