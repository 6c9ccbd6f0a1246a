# SPDX-License-Identifier: Apache-2.0
# Security (issue 17, "Paths: check what was opened, not a name"): a root
# agent writes only inside its workdir and what --allow names, whatever a
# local user does to the paths in between. Each part is an attack that
# wrote outside the allowed paths before targets were opened from
# descriptors; each checks that the protected file or device is untouched
# and that the refusal names the target.
#   1. /proc/PID/root magic link into a user+mount namespace whose tmpfs
#      hides the allowed directory and holds a symlink to a root-only file
#   2. a symlink in an allowed directory re-pointed outside after the check
#   3. workdir/sub swapped for a symlink to another directory
#   4. a hard link in the workdir to a file outside (same size: reused)
#   5. a block-device node made with mknod in an allowed directory, and one
#      put in place of a prepared test file
#   6. start without a successful prepare of the same plan
source "$(dirname "$0")/lib/cluster.bash"

start_agent() { # start_agent NAME [ARGS...]: sets AGENT_EP, AGENT_PID
    local name=$1
    shift
    iof_start_agent "$name" --name "$name" "$@"
}

# run_bg PLAN AGENT_EP: iofleet run in the background (stdout/stderr to
# $T/bg.out, $T/bg.err); RUN_PID.
run_bg() {
    cl_spawn RUN_PID "$T/bg.out" "$T/bg.err" "$IOFLEET" run "$T/$1" --insecure --agent "$2" --wait 5
}

# wait_for SECS CMD...: until CMD succeeds or the run ended; 1 if it never did.
wait_for() {
    local dl=$(($(cl_now_ms) + $1 * 1000))
    shift
    until "$@"; do
        [ "$(cl_now_ms)" -lt "$dl" ] && cl_alive "$RUN_PID" || return 1
        sleep 0.02
    done
}

run_rc() { cl_wait_exit "$RUN_PID" 60 rc; } # waits for the background run; sets rc

same() { [ "$(md5sum <"$1")" = "$2" ] || fail "$3: $1 was modified"; }

write_plan() { # write_plan FILE TARGET_JSON [SPECS]: a write plan, sync engine, 1 s per spec
    local specs=${3:-1} s='' i
    for ((i = 1; i <= specs; i++)); do
        s+="${s:+, }{\"name\": \"w$i\", \"lines\": [{\"size\": \"4k\", \"read\": 0}]}"
    done
    plan "$1" <<P
{"name": "attack", "run": {"duration": "1s", "interval": "500ms"},
 "specs": [$s],
 "workers": [{"engine": "sync", "targets": [$2]}]}
P
}

head -c 1048576 /dev/urandom >"$T/outside.dat"
chmod 600 "$T/outside.dat"
sum_outside=$(md5sum <"$T/outside.dat")
mkdir -p "$T/allowed"

# --- 1. /proc/PID/root magic link --------------------------------------------------
part1() {
    local ns pid sum_secret target rc
    if [ "$(id -u)" != 0 ]; then
        echo "SKIP part 1: needs root to reach another user's /proc/PID/root"
        return
    fi
    if ! command -v setpriv >/dev/null || ! command -v unshare >/dev/null; then
        echo "SKIP part 1: needs setpriv and unshare (util-linux)"
        return
    fi
    ns=$(mktemp -d /tmp/iofleet-sec.XXXXXX)
    iof_on_exit "rm -rf '$ns'"
    chmod 755 "$ns"
    mkdir -m 755 "$ns/A"
    head -c 1048576 /dev/zero >"$ns/A/f" # the file the plan seems to name
    head -c 1048576 /dev/urandom >"$ns/secret"
    chmod 600 "$ns/secret" # root-only, outside every allowed path
    sum_secret=$(md5sum <"$ns/secret")
    # The attacker: uid 65534 in its own user and mount namespace, a tmpfs
    # over the allowed directory, and in it f -> the secret.
    setpriv --reuid=65534 --regid=65534 --clear-groups \
        unshare -Urm sh -c "mount -t tmpfs none '$ns/A' && ln -s '$ns/secret' '$ns/A/f' && exec sleep 60" \
        >/dev/null 2>"$T/ns.err" &
    pid=$!
    iof_on_exit "kill $pid 2>/dev/null"
    for _ in $(seq 250); do
        [ -L "/proc/$pid/root$ns/A/f" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.02
    done
    if ! [ -L "/proc/$pid/root$ns/A/f" ]; then
        echo "SKIP part 1: unprivileged user namespaces unavailable ($(cat "$T/ns.err"))"
        return
    fi
    target=/proc/$pid/root$ns/A/f
    write_plan magic.json "{\"path\": \"$target\"}"
    start_agent magic --allow "$ns/A"
    rc=0
    "$IOFLEET" run "$T/magic.json" --insecure --agent "$AGENT_EP" --quiet --wait 5 >"$T/out" 2>"$T/err" || rc=$?
    same "$ns/secret" "$sum_secret" "/proc/$pid/root magic link"
    [ "$rc" = 1 ] || fail "magic link: iofleet exited $rc, expected 1 (refused)"
    expect_in "$T/err" "target '$target'"
    expect_in "$T/err" "not inside this agent's --allow paths"
    ok "/proc/PID/root magic link into a user namespace refused, the root-only file untouched"
}
part1

# --- 2. a symlink in an allowed directory re-pointed after the check ---------------
head -c 1048576 /dev/zero >"$T/allowed/in.dat"
ln -s "$T/allowed/in.dat" "$T/allowed/link"
write_plan repoint.json "{\"path\": \"$T/allowed/link\"}" 2
start_agent repoint --allow "$T/allowed"
sum_in=$(md5sum <"$T/allowed/in.dat")
run_bg repoint.json "$AGENT_EP"
# Once test 1 writes through the link (it pointed inside), point it outside.
if wait_for 20 eval '[ "$(md5sum <"$T/allowed/in.dat")" != "$sum_in" ]'; then
    ln -sfn "$T/outside.dat" "$T/allowed/link"
fi
run_rc
same "$T/outside.dat" "$sum_outside" "re-pointed symlink"
[ "$rc" = 1 ] || fail "re-pointed symlink: iofleet exited $rc, expected 1"
expect_in "$T/bg.err" "target '$T/allowed/link': a symbolic link"
ok "a symlink under an --allow directory is never followed (re-pointing it after the check changes nothing)"

# --- 3. workdir/sub swapped for a symlink --------------------------------------------
start_agent swap
mkdir -p "$T/swap-work/sub" "$T/outdir"
cp "$T/outside.dat" "$T/outdir/f.dat"
write_plan swap.json '{"path": "sub/f.dat", "size": "1m"}' 2
run_bg swap.json "$AGENT_EP"
# The plan was checked once the test file exists; then sub becomes a symlink.
if wait_for 20 test -f "$T/swap-work/sub/f.dat"; then
    mv "$T/swap-work/sub" "$T/swap-work/sub.old"
    ln -s "$T/outdir" "$T/swap-work/sub"
fi
run_rc
same "$T/outdir/f.dat" "$sum_outside" "workdir/sub swapped for a symlink"
[ "$rc" = 1 ] || fail "swapped directory: iofleet exited $rc, expected 1"
# The swap is two steps (mv, ln -s): a test that opens in between finds no
# file, which is refused too; either way nothing is written outside.
grep -qE "target 'sub/f.dat': (a symbolic link|.*No such file or directory)" "$T/bg.err" ||
    { cat "$T/bg.err"; fail "swapped directory: no refusal naming sub/f.dat"; }
ok "workdir/sub swapped for a symlink after preparation: refused, nothing written outside"

# --- 4. a hard link in the workdir to a file outside --------------------------------
start_agent hard
for size in 1m 2m; do
    rm -f "$T/hard-work/hl.dat"
    ln "$T/outside.dat" "$T/hard-work/hl.dat"
    write_plan hard.json "{\"path\": \"hl.dat\", \"size\": \"$size\"}"
    expect_rc 1 "$IOFLEET" run "$T/hard.json" --insecure --agent "$AGENT_EP" --quiet --wait 5
    same "$T/outside.dat" "$sum_outside" "hard link ($size)"
    expect_in "$T/err" "target 'hl.dat': has 2 links"
done
ok "a hard link in the workdir to a file outside is refused (same size and other size)"

# --- 5. block-device nodes made with mknod ----------------------------------------------
part5() {
    local shm loop mm sum_dev rc
    if [ "$(id -u)" != 0 ] || ! command -v losetup >/dev/null; then
        echo "SKIP part 5: needs root and losetup for a loop device"
        return
    fi
    shm=$(mktemp -d /dev/shm/iofleet-sec.XXXXXX)
    iof_on_exit "rm -rf '$shm'"
    truncate -s 8M "$shm/never.img"
    if ! loop=$(losetup --find --show "$shm/never.img"); then
        echo "SKIP part 5: cannot attach a loop device"
        return
    fi
    iof_on_exit "losetup -d $loop"
    mm=$(stat -c '%t %T' "$loop") # hex major, minor
    sum_dev=$(md5sum <"$shm/never.img")
    # In an allowed directory.
    mknod "$T/allowed/disk" b $((16#${mm% *})) $((16#${mm#* }))
    write_plan node.json "{\"path\": \"$T/allowed/disk\"}"
    start_agent node --allow "$T/allowed"
    expect_rc 1 "$IOFLEET" run "$T/node.json" --insecure --agent "$AGENT_EP" --quiet --wait 5
    sync
    same "$shm/never.img" "$sum_dev" "mknod in an allowed directory"
    expect_in "$T/err" "target '$T/allowed/disk': block device"
    expect_in "$T/err" "is not one this agent's --allow names"
    # In place of a prepared test file in the workdir.
    start_agent nodew
    write_plan nodew.json '{"path": "dev.dat", "size": "1m"}' 2
    run_bg nodew.json "$AGENT_EP"
    if wait_for 20 test -f "$T/nodew-work/dev.dat"; then
        # Made aside and renamed over the file: the swap is atomic, so the
        # agent meets the node, never a missing file.
        mknod "$T/nodew-work/.dev.node" b $((16#${mm% *})) $((16#${mm#* }))
        mv -f "$T/nodew-work/.dev.node" "$T/nodew-work/dev.dat"
    fi
    run_rc
    sync
    same "$shm/never.img" "$sum_dev" "mknod in the workdir"
    [ "$rc" = 1 ] || fail "device node in the workdir: iofleet exited $rc, expected 1"
    expect_in "$T/bg.err" "target 'dev.dat': not a regular file"
    ok "block-device nodes (mknod) in an allowed directory or the workdir are refused; $loop untouched"
}
part5

# --- 6. start without a successful prepare ------------------------------------------
HELLO='{"type":"hello","v":[1,0],"role":"manager","name":"fake-mgr","software":"x","heartbeat_ms":60000}'
head -c 1048576 /dev/zero >"$T/allowed/noprep.dat"
sum_np=$(md5sum <"$T/allowed/noprep.dat")
NP_PLAN="{\"type\":\"plan\",\"plan\":{\"name\":\"np\",\"run\":{\"duration\":\"1s\",\"interval\":\"500ms\"},\"specs\":[{\"name\":\"w\",\"lines\":[{\"size\":\"4k\",\"read\":0}]}],\"workers\":[{\"engine\":\"sync\",\"targets\":[{\"path\":\"$T/allowed/noprep.dat\"}]}]}}"
start_agent noprep --allow "$T/allowed"
np_port=${AGENT_EP##*:}
# np_session TAG FRAMES...: hello, then each frame ("start" asks the
# agent's clock first, "prepare" waits for "prepared"), then 2 s of what the
# agent sends, in $T/TAG.reply; the connection is closed at the end.
np_session() {
    local tag=$1 f now reader ended
    shift
    ended=$(grep -c "session with manager 'fake-mgr' ended" "$T/noprep.log" || true)
    exec 3<>"/dev/tcp/127.0.0.1/$np_port" || fail "cannot connect to the agent on port $np_port"
    timeout 10 cat <&3 >"$T/$tag.reply" 2>/dev/null &
    reader=$!
    cl_frame "$HELLO" >&3
    for f in "$@"; do
        case $f in
        start)
            cl_frame '{"type":"clock_probe","seq":0,"t0_ns":1}' >&3
            for _ in $(seq 100); do
                grep -aq '"agent_ns"' "$T/$tag.reply" && break
                sleep 0.02
            done
            now=$(grep -ao '"agent_ns":[0-9]*' "$T/$tag.reply" | tail -n1 | cut -d: -f2)
            cl_frame "{\"type\":\"start\",\"test\":0,\"start_at_ns\":$((now + 100000000))}" >&3
            ;;
        prepare)
            cl_frame '{"type":"prepare"}' >&3
            for _ in $(seq 250); do
                grep -aq '"type":"prepared"' "$T/$tag.reply" && break
                sleep 0.02
            done
            ;;
        *) cl_frame "$f" >&3 ;;
        esac
    done
    sleep 2
    exec 3>&-
    kill "$reader" 2>/dev/null || true
    wait "$reader" 2>/dev/null || true
    # The agent takes the next manager once it has seen this one go.
    for _ in $(seq 250); do
        [ "$(grep -c "session with manager 'fake-mgr' ended" "$T/noprep.log" || true)" -gt "$ended" ] && break
        sleep 0.02
    done
}
np_session np1 "$NP_PLAN" start
np_session np2 "$NP_PLAN" prepare "$NP_PLAN" start
for tag in np1 np2; do
    if grep -aq '"type":"stats"' "$T/$tag.reply"; then
        fail "$tag: the agent ran a test that was never prepared"
    fi
    grep -aqF 'start of test 1 without a successful prepare of this plan' "$T/$tag.reply" ||
        { cat -v "$T/$tag.reply"; fail "$tag: no refusal naming the missing prepare"; }
done
same "$T/allowed/noprep.dat" "$sum_np" "start without prepare"
ok "start without a successful prepare of the same plan is refused (no plan prepared; plan replaced after prepare)"
