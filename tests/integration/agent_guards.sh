# SPDX-License-Identifier: Apache-2.0
# The agent decides what it touches: --allow and the workdir bound every
# path (no symbolic link followed beneath them), devices with a partition table or filesystem are
# written only with --allow-destructive. Each refusal names the path and the
# reason, and no I/O reaches the protected file or device.
source "$(dirname "$0")/lib/common.bash"

# start_agent NAME [ARGS...]: a dynamo named NAME; sets AGENT_EP.
start_agent() {
    local name=$1
    shift
    iof_start_agent "$name" --name "$name" "$@"
}

run_plan() { # run_plan PLAN EXPECTED_RC AGENT_EP
    expect_rc "$2" "$IOFLEET" run "$T/$1" --insecure --agent "$3" --quiet --wait 5
}

mkdir -p "$T/allowed"
head -c 1048576 /dev/urandom >"$T/outside.dat"
sum_outside=$(md5sum <"$T/outside.dat")
ln -s "$T/outside.dat" "$T/allowed/link.dat"
start_agent guard --allow "$T/allowed"
ep=$AGENT_EP

# 1. A symlink under an allowed directory that leads outside it.
plan escape.json <<P
{"name": "escape", "run": {"ramp": "1s", "duration": "1s"},
 "specs": [{"name": "w", "lines": [{"size": "4k", "read": 0}]}],
 "workers": [{"engine": "sync", "targets": [{"path": "$T/allowed/link.dat"}]}]}
P
run_plan escape.json 1 "$ep"
expect_in "$T/err" "target '$T/allowed/link.dat': a symbolic link on the way; links are not followed under an --allow directory"
[ "$(md5sum <"$T/outside.dat")" = "$sum_outside" ] || fail "the file outside --allow was modified"
ok "symlink escape from --allow refused"

# 2. A path never allowed at all.
plan other.json <<P
{"name": "other", "run": {"ramp": "1s", "duration": "1s"},
 "specs": [{"name": "r", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "sync", "targets": [{"path": "$T/outside.dat"}]}]}
P
start_agent guard2 --allow "$T/allowed"
run_plan other.json 1 "$AGENT_EP"
expect_in "$T/err" "target '$T/outside.dat' is not inside this agent's --allow paths"
ok "path outside --allow refused"

# 3. A test file in the workdir that is a symbolic link to a file outside.
start_agent guard3
ln -s "$T/outside.dat" "$T/guard3-work/evil.dat"
plan evil.json <<'P'
{"name": "evil", "run": {"ramp": "1s", "duration": "1s"},
 "specs": [{"name": "w", "lines": [{"size": "4k", "read": 0}]}],
 "workers": [{"engine": "sync", "targets": [{"path": "evil.dat", "size": "1m"}]}]}
P
run_plan evil.json 1 "$AGENT_EP"
expect_in "$T/err" "target 'evil.dat': a symbolic link on the way; links are not followed in the workdir"
[ "$(md5sum <"$T/outside.dat")" = "$sum_outside" ] || fail "the symlinked file was modified"
ok "symlinked test file refused"

# 4. '..' never reaches an agent: the plan is refused first.
plan dotdot.json <<'P'
{"name": "dotdot", "run": {"ramp": "1s", "duration": "1s"},
 "specs": [{"name": "w", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "sync", "targets": [{"path": "../outside.dat", "size": "1m"}]}]}
P
expect_rc 2 "$IOFLEET" run "$T/dotdot.json" --insecure --agent "$AGENT_EP" --quiet
expect_in "$T/err" "dotdot.json: workers[0].targets[0].path"
ok "'..' refused by the plan check"

# 5. Filesystem signatures on a block device (root only).
if [ "$(id -u)" != 0 ] || ! command -v mkfs.ext4 >/dev/null || ! command -v losetup >/dev/null; then
    echo "SKIP part 5: needs root, losetup and mkfs.ext4 for the signature guard"
    exit 0
fi
shm=$(mktemp -d /dev/shm/iofleet-guard.XXXXXX)
iof_on_exit "rm -rf '$shm'"
truncate -s 32M "$shm/fs.img"
loop=$(losetup --find --show "$shm/fs.img") || { echo "SKIP part 5: no loop device"; exit 0; }
iof_on_exit "losetup -d $loop"
mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 "$loop"
sync
sum_fs=$(md5sum <"$shm/fs.img")
plan fswrite.json <<P
{"name": "fswrite", "run": {"ramp": "1s", "duration": "1s"},
 "specs": [{"name": "w", "lines": [{"size": "4k", "read": 0}]}],
 "workers": [{"engine": "libaio", "targets": [{"path": "$loop"}]}]}
P
start_agent careful --allow "$loop"
run_plan fswrite.json 1 "$AGENT_EP"
expect_in "$T/err" "target '$loop': refusing to write: it holds a signature (ext4); start the agent with --allow-destructive to overwrite it"
sync
[ "$(md5sum <"$shm/fs.img")" = "$sum_fs" ] || fail "the ext4 device was written"
ok "ext4 device refused for writes without --allow-destructive"

# A local run's agent names the flag of `iofleet run`, where its user passes it.
expect_rc 1 "$IOFLEET" run "$T/fswrite.json" --workdir "$T/localwork" --quiet
expect_in "$T/err" "it holds a signature (ext4); rerun \`iofleet run\` with --allow-destructive to overwrite it"
[ "$(md5sum <"$shm/fs.img")" = "$sum_fs" ] || fail "the ext4 device was written by a local run"
ok "a local run's refusal names iofleet run --allow-destructive"

sed 's/"read": 0/"read": 100/' "$T/fswrite.json" >"$T/fsread.json"
start_agent reader --allow "$loop"
run_plan fsread.json 0 "$AGENT_EP"
ok "reads of a device with a filesystem are allowed"

start_agent bold --allow "$loop" --allow-destructive
run_plan fswrite.json 0 "$AGENT_EP"
awk '$1=="ALL" { exit !($5 > 0) }' "$T/out" || fail "no writes with --allow-destructive"
ok "--allow-destructive lets the agent overwrite it"
