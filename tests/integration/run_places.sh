# SPDX-License-Identifier: Apache-2.0
# Where each target lives: the JSON result names the device and filesystem
# under every TARGET row as the agent found them at preparation, and the run
# warns on the terminal about RAM-backed targets (tmpfs, a loop device on
# tmpfs) while it goes on; a target on a disk gets no warning.
source "$(dirname "$0")/lib/common.bash"

if [ "$(id -u)" != 0 ] || ! command -v losetup >/dev/null || ! command -v findmnt >/dev/null; then
    skip "needs root, losetup and findmnt"
fi
iof_shm places
iof_loop loop "$shm/loop.img" 8M
head -c 4M /dev/urandom >"$shm/file.dat"

iof_start_agent node1 --name node1 --allow "$loop" --allow "$shm"
plan p.json <<JSON
{"name": "places", "specs": [{"name": "4k-read", "lines": [{"size": "4k", "read": 100, "random": 100}]}],
 "workers": [{"engine": "libaio", "queue_depth": 2,
   "targets": [{"path": "disk.dat", "size": "4m"}, {"path": "$loop"},
               {"path": "$shm/file.dat"}]}],
 "run": {"duration": "1s", "ramp": "0s"}}
JSON
expect_rc 0 "$IOFLEET" run "$T/p.json" --agent "$AGENT_EP" --insecure --json "$T/r.json" \
    --no-db
cp "$T/err" "$T/run.err"

# What the system says of the workdir's filesystem, independently of dynamo.
fstype=$(findmnt -n -o FSTYPE --target "$T")
majmin=$(findmnt -n -o MAJ:MIN --target "$T" | tr -d ' ')
disk=$(basename "$(readlink "/sys/dev/block/$majmin" 2>/dev/null)" 2>/dev/null || true)
jq -e --arg loop "${loop#/dev/}" --arg f "$shm/file.dat" --arg lp "$loop" '
    [.tests[0].results[] | select(.row_type == "TARGET")] as $t
    | ($t | length) == 3
    and ($t[] | select(.target == $lp) | .device == $loop and .fstype == null
         and .ram_backed == true)
    and ($t[] | select(.target == $f) | .fstype == "tmpfs" and .device == null
         and .ram_backed == true)
    and ([.tests[0].results[] | select(.row_type != "TARGET")
          | .device == null and .fstype == null and .ram_backed == null] | all)' "$T/r.json" \
    >/dev/null || fail "places of the RAM-backed targets: $(jq -c '.tests[0].results[]
        | select(.row_type == "TARGET") | {target, device, fstype, ram_backed}' "$T/r.json")"
ok "a loop device on tmpfs and a file on tmpfs: device, filesystem, RAM-backed"

# The test file in the workdir: the filesystem and device findmnt names.
want_fs=$fstype
[ "$fstype" = ext3 ] || [ "$fstype" = ext2 ] && want_fs=ext4 # one statfs magic for all three
jq -e --arg fs "$want_fs" --arg dev "$disk" '
    .tests[0].results[] | select(.row_type == "TARGET" and .target == "disk.dat")
    | .fstype == $fs and (if $dev == "" then .device == null else .device == $dev end)
    and (.ram_backed == (if $fs == "tmpfs" then true else .ram_backed end))' "$T/r.json" \
    >/dev/null || fail "place of disk.dat (findmnt: $fstype on $majmin = '$disk'): $(jq -c '
        .tests[0].results[] | select(.target == "disk.dat")' "$T/r.json")"
ok "a test file in the workdir: $fstype on ${disk:-no device}"

# The warnings, during the run (before the result table), one per RAM-backed target.
expect_in "$T/run.err" "warning: node1: target $loop is RAM-backed (${loop#/dev/}): its numbers are memory numbers, not storage numbers"
expect_in "$T/run.err" "warning: node1: target $shm/file.dat is RAM-backed (tmpfs)"
if [ "$fstype" != tmpfs ]; then
    ! grep -q "target disk.dat is RAM-backed" "$T/run.err" || fail "disk.dat warned as RAM-backed"
fi
ok "warnings for the RAM-backed targets only"

# The local agent of a run without --agent: the same warning.
expect_rc 0 "$IOFLEET" run --spec 4k --target q.dat:4m --duration 1s --ramp 0s \
    --workdir "$shm/work" --no-db --quiet
expect_in "$T/err" "warning: local: target q.dat is RAM-backed (tmpfs)"
ok "the embedded agent's test file on tmpfs is warned about"
