# SPDX-License-Identifier: Apache-2.0
# `iofleet agents`: an agent's inventory as the user sees it (table and JSON),
# against loop devices with and without a filesystem; a device mounted after
# the agent started shows up as mounted on the next call; unreachable agents
# are named (exit 3); usage errors (exit 2).
source "$(dirname "$0")/lib/common.bash"

expect_rc 2 "$IOFLEET" agents
expect_in "$T/err" "iofleet agents: needs --agent or --agents-file"
expect_rc 2 "$IOFLEET" agents plan.json --agent unix:/nonexistent
expect_in "$T/err" "takes no plan, got 'plan.json'"
expect_rc 0 "$IOFLEET" agents --help
expect_in "$T/out" "usage: iofleet agents"
ok "usage"

expect_rc 3 "$IOFLEET" agents --agent "unix:$T/none.sock" --wait 1
expect_in "$T/err" "iofleet agents: unix:$T/none.sock: cannot connect"
expect_rc 3 "$IOFLEET" agents --agent "unix:$T/none.sock" --wait 1 --json
jq -e '.[0].reachable == false and (.[0].error | test("cannot connect"))' "$T/out" >/dev/null ||
    fail "unreachable agent not in the JSON: $(cat "$T/out")"
ok "an unreachable agent is named (exit 3)"

# An agent without --allow: its workdir's filesystem only.
"$IOF_BIN/dynamo" --listen "unix:$T/plain.sock" --workdir "$T/plain-work" 2>"$T/plain.log" &
pid=$!
iof_on_exit "kill $pid 2>/dev/null"
for _ in $(seq 100); do [ -S "$T/plain.sock" ] && break; sleep 0.05; done
expect_rc 0 "$IOFLEET" agents --agent "unix:$T/plain.sock" --json
jq -e --arg cpus "$(nproc)" '.[0].reachable and .[0].hello.inventory.cpus == ($cpus | tonumber)
    and (.[0].hello.inventory.targets | length) == 0
    and .[0].hello.inventory.workdir.free > 0
    and .[0].hello.inventory.workdir.size >= .[0].hello.inventory.workdir.free' "$T/out" \
    >/dev/null || fail "inventory of a plain agent: $(cat "$T/out")"
expect_rc 0 "$IOFLEET" agents --agent "unix:$T/plain.sock"
expect_in "$T/out" "no --allow entries: test files in the workdir only"
expect_in "$T/out" "workdir $T/plain-work:"
ok "an agent without --allow: CPUs, workdir filesystem and free space"

if [ "$(id -u)" != 0 ] || ! command -v losetup >/dev/null || ! command -v mkfs.ext4 >/dev/null; then
    echo "SKIP the device part: needs root, losetup and mkfs.ext4"
    exit 0
fi
shm=$(mktemp -d /dev/shm/iofleet-inv.XXXXXX)
iof_on_exit "rm -rf '$shm'"
truncate -s 48M "$shm/blank.img" "$shm/fs.img"
blank=$(losetup --find --show "$shm/blank.img") || skip "no loop device"
iof_on_exit "losetup -d $blank"
fsdev=$(losetup --find --show "$shm/fs.img") || skip "no second loop device"
iof_on_exit "losetup -d $fsdev"
mkfs.ext4 -q "$fsdev"
mkdir -p "$T/mnt"

"$IOF_BIN/dynamo" --listen "unix:$T/dev.sock" --workdir "$T/dev-work" \
    --allow "$blank" --allow "$fsdev" 2>"$T/dev.log" &
pid=$!
iof_on_exit "kill $pid 2>/dev/null"
for _ in $(seq 100); do [ -S "$T/dev.sock" ] && break; sleep 0.05; done

expect_rc 0 "$IOFLEET" agents --agent "unix:$T/dev.sock" --json
jq -e --arg b "$blank" --arg f "$fsdev" '
    .[0].hello.inventory.targets as $t
    | ($t | length) == 2
    and $t[0].path == $b and $t[0].kind == "block" and $t[0].size == 50331648
    and $t[0].logical_block_size == 512 and $t[0].physical_block_size >= 512
    and $t[0].signature == null and $t[0].in_use == false and $t[0].mountpoint == null
    and $t[0].ram_backed == true and $t[0].device == ($b | ltrimstr("/dev/"))
    and $t[1].path == $f and $t[1].signature == "ext4" and $t[1].in_use == false' "$T/out" \
    >/dev/null || fail "device inventory: $(cat "$T/out")"
ok "loop devices: kind, size, block sizes, signature, free, RAM-backed (on /dev/shm)"

# Mounted after the agent started: the next hello says so.
mount "$fsdev" "$T/mnt"
iof_on_exit "umount '$T/mnt'"
expect_rc 0 "$IOFLEET" agents --agent "unix:$T/dev.sock" --json
jq -e --arg m "$T/mnt" '.[0].hello.inventory.targets[1] | .in_use == true and .mountpoint == $m' \
    "$T/out" >/dev/null || fail "mounted device not seen: $(cat "$T/out")"
expect_rc 0 "$IOFLEET" agents --agent "unix:$T/dev.sock"
expect_in "$T/out" "warning: $blank is RAM-backed"
awk -v f="$fsdev" -v m="$T/mnt" '$1 == f && /ext4/ && index($0, m) && / yes / { found = 1 }
    END { exit !found }' "$T/out" || fail "table row of the mounted device: $(cat "$T/out")"
ok "a device mounted after the agent started: in use, mount point, in the table too"

# Both agents in one call; one JSON array.
expect_rc 0 "$IOFLEET" agents --agent "unix:$T/plain.sock" --agent "unix:$T/dev.sock" --json
[ "$(jq length "$T/out")" = 2 ] || fail "two agents, one array: $(cat "$T/out")"
ok "several agents in one JSON array"
