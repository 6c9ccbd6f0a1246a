# SPDX-License-Identifier: Apache-2.0
# The container image (labels `package` and `slow`: it downloads Debian packages
# with mmdebstrap, about two minutes): scripts/package and
# packaging/container/build-image build it without any registry but Debian's;
# podman runs it with dynamo as PID 1 on a unix socket in a volume; the build
# tree's iofleet runs a test through that socket with the libaio engine on the
# container's /var/lib/iofleet (a volume); `podman stop` in the middle of the
# next test (SIGTERM to PID 1) ends it with exit 0 and the manager keeps what
# was measured. Skips, saying why, without root, podman, mmdebstrap or the
# Debian mirror; crun cannot run on hybrid cgroup hosts, so runc is used where
# it is installed. Removes its container and image whatever happens.
source "$(dirname "$0")/lib/common.bash"
[ "$(id -u)" -eq 0 ] || skip "needs root (mmdebstrap, podman)"
for t in podman mmdebstrap dpkg-deb cpack; do
    command -v "$t" >/dev/null 2>&1 || skip "$t is not installed (scripts/deps container)"
done
podman=(podman)
command -v runc >/dev/null 2>&1 && podman+=(--runtime runc)
# No more than the current limits: raising them needs CAP_SYS_RESOURCE.
lim_n=$(ulimit -n)
lim_p=$(ulimit -u)
[ "$lim_n" = unlimited ] && lim_n=1048576
[ "$lim_p" = unlimited ] || [ "$lim_p" -gt 4096 ] && lim_p=4096
[ "$lim_n" -gt 65536 ] && lim_n=65536
image=localhost/iofleet-test:$$
ctr=iofleet-test-$$
iof_on_exit "${podman[*]} rm -f $ctr >/dev/null 2>&1; podman rmi -f $image >/dev/null 2>&1"

t0=$SECONDS
IOF_PKG_WINDOWS=0 "$IOF_SRC/scripts/package" "$T/pkg" >"$T/package.out" 2>&1 || { cat "$T/package.out"; fail "scripts/package"; }
deb=$(ls "$T"/pkg/iofleet_*.deb | head -n 1)
if ! "$IOF_SRC/packaging/container/build-image" "$deb" "$image" >"$T/image.out" 2>&1; then
    if grep -qiE 'could not resolve|temporary failure|failed to fetch|connection' "$T/image.out"; then
        skip "the Debian mirror is not reachable: $(grep -m1 -iE 'resolve|failure|fetch|connection' "$T/image.out")"
    fi
    cat "$T/image.out"
    fail "build-image"
fi
size=$(podman image inspect "$image" --format '{{.Size}}')
ok "image $image built in $((SECONDS - t0)) s, $((size / 1000000)) MB"

mkdir -p "$T/sock" "$T/work"
"${podman[@]}" run -d --name "$ctr" --network=none \
    --ulimit "nofile=$lim_n:$lim_n" --ulimit "nproc=$lim_p:$lim_p" \
    -v "$T/sock:/sock" -v "$T/work:/var/lib/iofleet" "$image" \
    --listen unix:/sock/dynamo.sock --name ctr1 >"$T/run.out" 2>&1 || {
    cat "$T/run.out"
    fail "podman run"
}
for _ in $(seq 200); do [ -S "$T/sock/dynamo.sock" ] && break; sleep 0.05; done
[ -S "$T/sock/dynamo.sock" ] || { "${podman[@]}" logs "$ctr"; fail "dynamo in the container did not listen"; }
pid1=$("${podman[@]}" top "$ctr" pid comm | awk '$2 == "dynamo" {print $1}')
[ "$pid1" = 1 ] || fail "dynamo is PID '$pid1' in the container, not 1"

plan run.json <<'P'
{"name": "container", "run": {"ramp": "0s", "duration": "30s", "interval": "500ms"},
 "specs": [{"name": "4k random 70% read", "lines": [{"size": "4k", "read": 70}]}],
 "workers": [{"engine": "libaio", "queue_depth": 4, "targets": [{"path": "c.dat", "size": "16m"}]}]}
P
"$IOFLEET" run "$T/run.json" --agent "unix:$T/sock/dynamo.sock" --json "$T/r.json" \
    >"$T/mgr.out" 2>"$T/mgr.err" &
MGR=$!
iof_on_exit "kill $MGR 2>/dev/null"
# Stop the container once the measured window has started and reported.
for _ in $(seq 600); do grep -q 'IOPS\|iops' "$T/mgr.err" 2>/dev/null && break; sleep 0.05; done
sleep 1.5
t1=$(date +%s%N)
"${podman[@]}" stop -t 20 "$ctr" >/dev/null
ms=$((($(date +%s%N) - t1) / 1000000))
code=$("${podman[@]}" inspect "$ctr" --format '{{.State.ExitCode}}')
"${podman[@]}" logs "$ctr" >"$T/dynamo.log" 2>&1 || true
[ "$code" = 0 ] || { cat "$T/dynamo.log"; fail "dynamo as PID 1 exited $code on podman stop"; }
grep -q 'signal 15' "$T/dynamo.log" || { cat "$T/dynamo.log"; fail "dynamo did not see SIGTERM"; }
rc=0
wait "$MGR" || rc=$?
[ "$rc" = 1 ] || { cat "$T/mgr.err"; fail "iofleet run exited $rc, expected 1 (agent lost)"; }
ios=$(jq '[.tests[0].results[] | select(.row_type == "ALL") | .read_ios + .write_ios] | add' "$T/r.json")
[ "${ios:-0}" -gt 0 ] || fail "no measured I/O kept ($ios)"
[ -f "$T/work/c.dat" ] || fail "the test file is not in the container's workdir volume"
ok "podman stop mid-test: dynamo (PID 1) exit 0 after $ms ms; manager exit 1 with $ios libaio I/Os kept"
