# SPDX-License-Identifier: Apache-2.0
# iofleet validate checks a plan against what the agents will accept: their
# budget and their --allow lists (a target outside them is refused, exit 1,
# as the run would be), takes --agents-file as run does, and without agents
# says what it could not check.
source "$(dirname "$0")/lib/common.bash"

mkdir -p "$T/allowed" "$T/other"
truncate -s 4m "$T/img.dat"
iof_start_agent node1 --name node1 --allow "$T/allowed" --allow "$T/img.dat"
EP=$AGENT_EP
echo "# the fleet" >"$T/agents.txt"
echo "$EP" >>"$T/agents.txt"

mkplan() {
    plan "$1" <<P
{"name": "allow", "run": {"duration": "300ms", "interval": "150ms"},
 "specs": [{"name": "r", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "sync", "targets": [{"path": "t.dat", "size": "1m"}, $2]}]}
P
}
mkplan good.json "{\"path\": \"$T/allowed/x.dat\", \"size\": \"1m\"}, {\"path\": \"$T/img.dat\"}"
mkplan bad.json "{\"path\": \"$T/other/x.dat\", \"size\": \"1m\"}"

expect_rc 0 "$IOFLEET" validate "$T/good.json" --insecure --agent "$EP"
expect_in "$T/out" "targets: the plan's 2 absolute paths are allowed by the agent's --allow list"
expect_in "$T/out" "fits (as the agent's host stands now)"
expect_in "$T/out" "not checked here: other names of allowed devices or files"
ok "validate: paths inside the --allow list fit"

expect_rc 1 "$IOFLEET" validate "$T/bad.json" --insecure --agent "$EP"
expect_in "$T/out" "$T/other/x.dat: REFUSED unless it is another name of an allowed device or file"
expect_in "$T/out" "does not fit: the agent will refuse this plan at prepare"
if grep -q "^  fits" "$T/out"; then fail "validate said fits for a path the agent refuses"; fi
# ... and the agent does refuse it.
rc=0
"$IOFLEET" run "$T/bad.json" --insecure --agent "$EP" --no-db >"$T/run.out" 2>"$T/run.err" || rc=$?
[ "$rc" != 0 ] || fail "the run of a path outside --allow succeeded"
grep -q "$T/other/x.dat" "$T/run.err" || { cat "$T/run.err"; fail "the run's refusal does not name the path"; }
ok "validate: a path outside the --allow list is refused (exit 1), as the run is (exit $rc)"

expect_rc 1 "$IOFLEET" validate "$T/bad.json" --insecure --agents-file "$T/agents.txt"
expect_in "$T/out" "agent node1 ($EP)"
expect_in "$T/out" "$T/other/x.dat: REFUSED"
expect_rc 0 "$IOFLEET" validate "$T/good.json" --insecure --agents-file "$T/agents.txt"
ok "validate --agents-file: every listed agent checked"

expect_rc 0 "$IOFLEET" validate "$T/bad.json"
expect_in "$T/err" "not checked without --agent or --agents-file: the agents' budgets and whether their --allow lists admit the plan's absolute paths ($T/other/x.dat...)"
ok "validate without agents says what it did not check"

# A mounted device in the --allow list: validate refuses a plan that writes
# to it (the agent always does) and lets one that only reads it pass.
if ! command -v mkfs.ext4 >/dev/null || [ "$(id -u)" != 0 ]; then
    echo "mounted device not checked: needs root and mkfs.ext4 (e2fsprogs)"
    exit 0
fi
iof_shm validate
truncate -s 32M "$shm/m.img"
loopm=$(losetup --find --show "$shm/m.img") || { echo "mounted device not checked: no loop device"; exit 0; }
mkfs.ext4 -q "$loopm" || { losetup -d "$loopm"; fail "mkfs.ext4 $loopm"; }
mkdir -p "$T/mnt"
mount "$loopm" "$T/mnt" || { losetup -d "$loopm"; fail "mount $loopm"; }
iof_on_exit "umount '$T/mnt'; losetup -d $loopm"
iof_start_agent node2 --name node2 --allow "$loopm"
plan mounted.json <<P
{"name": "mounted", "run": {"duration": "1s"},
 "specs": [{"name": "write", "lines": [{"size": "4k", "read": 0}]}],
 "workers": [{"engine": "libaio", "targets": [{"path": "$loopm"}]}]}
P
expect_rc 1 "$IOFLEET" validate "$T/mounted.json" --insecure --agent "$AGENT_EP"
expect_in "$T/out" "$loopm: REFUSED for the plan's writes: the device is mounted at $T/mnt"
sed -i 's/"read": 0/"read": 100/' "$T/mounted.json"
expect_rc 0 "$IOFLEET" validate "$T/mounted.json" --insecure --agent "$AGENT_EP"
expect_in "$T/out" "fits (as the agent's host stands now)"
ok "a mounted device: writes refused by validate, reads fit"
