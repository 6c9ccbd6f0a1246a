# SPDX-License-Identifier: Apache-2.0
# Never stuck: whatever a plan or a device does, the agent's loop keeps
# answering, and stop, the dead-man rule and SIGTERM end a test at once.
# 1. A plan with ramp 1h and a burst delay of 1h, then its manager killed:
#    the agent stops its workers (their sleeps are interruptible) and a new
#    manager runs at once.
# 2. The same plan, then SIGTERM to the agent: it exits promptly.
# 3. A node with no worker in the test (its groups select other nodes):
#    one empty interval per interval, as the clock reaches it (no flood),
#    and the result at the end of the window (not a fake result at once).
# 4. A start time in the past: refused with an error naming the clock
#    difference (not 0 I/O reported as a full result).
# 5. A device whose I/O hangs (a loop device over a FUSE file, made to stall
#    on demand): starting a test on it and tearing a test down while it hangs
#    happen off the event loop, so heartbeats keep flowing (the manager does
#    not declare the agent lost) and a new connection gets an answer.
source "$(dirname "$0")/lib/cluster.bash"

hb=500
nthreads() { ls "/proc/$1/task" | wc -l; }

plan stuck.json <<'P'
{"name": "stuck", "run": {"ramp": "1h", "duration": "10s", "interval": "1s"},
 "specs": [{"name": "slow", "lines": [{"size": "4k", "delay": "1h"}]}],
 "workers": [{"engine": "null", "count": 2, "targets": [{"path": "n", "size": "1m"}]}]}
P
plan short.json <<'P'
{"name": "after", "run": {"duration": "1s", "interval": "500ms"},
 "specs": [{"name": "4k", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "null", "queue_depth": 2, "targets": [{"path": "n", "size": "1m"}]}]}
P

cl_start_agent stuck --heartbeat-ms $hb
apid=${CL_PIDS[0]} alog=${CL_LOGS[0]} ep=127.0.0.1:${CL_PORTS[0]}
# A first run creates the agent's thread pool: the baseline counts it.
expect_rc 0 "$IOFLEET" run "$T/short.json" --insecure --agent "$ep" --wait 10
th0=$(nthreads "$apid")
workers_up() { [ "$(nthreads "$apid")" -ge $((th0 + 2)) ]; }

# start_stuck VAR TAG: a manager running stuck.json; returns once the
# agent's two workers exist (they sleep in the ramp and the delay).
start_stuck() {
    local __pid
    cl_spawn __pid "$T/$2.out" "$T/$2.err" "$IOFLEET" run "$T/stuck.json" --insecure --agent "$ep" \
        --heartbeat-ms $hb --wait 10
    cl_wait_cmd 10 "the agent's worker threads for $2" workers_up
    sleep 0.5 # the workers are past the start barrier, asleep
    printf -v "$1" '%s' "$__pid"
}

# 1. Manager killed during a 1 h ramp with 1 h delays.
start_stuck mgr killed
kill -KILL "$mgr"
cl_wait_exit "$mgr" 5 rc
t0=$(cl_now_ms)
expect_rc 0 timeout 60 "$IOFLEET" run "$T/short.json" --insecure --agent "$ep" --heartbeat-ms $hb --wait 10
t1=$(cl_now_ms)
awk '$1=="ALL" && $3 > 0 {f=1} END{exit !f}' "$T/out" || fail "no I/O in the run after the killed manager"
# Far below the 1 h the workers would sleep, with room for a busy machine.
[ $((t1 - t0)) -lt $((6000 * CL_WAIT_SCALE)) ] || fail "the next manager's 1 s run took $((t1 - t0)) ms"
ok "manager killed in a 1h ramp with 1h delays: the next manager ran at once ($((t1 - t0)) ms for a 1 s test)"

# 2. SIGTERM during the same sleeps.
start_stuck mgr sigterm
kill -TERM "$apid"
t0=$(cl_now_ms)
while cl_alive "$apid" && [ $(($(cl_now_ms) - t0)) -lt $((3000 * CL_WAIT_SCALE)) ]; do sleep 0.02; done
t1=$(cl_now_ms)
cl_alive "$apid" && fail "the agent still runs $((t1 - t0)) ms after SIGTERM (workers asleep in ramp and delay)"
ok "SIGTERM during a 1h ramp with 1h delays: the agent exited in $((t1 - t0)) ms"
cl_wait_exit "$mgr" 10 rc

# A fake manager on bash /dev/tcp for parts 3 and 4 (offset 0: start times
# are on the agent's clock, read from a clock probe).
HELLO='{"type":"hello","v":[1,0],"role":"manager","name":"fake-mgr","software":"x","heartbeat_ms":60000}'
cl_start_agent idle
iport=${CL_PORTS[1]} ilog=${CL_LOGS[1]} ipid=${CL_PIDS[1]}
# fake_mgr TAG PLAN START_DELTA_NS AWAIT TIMEOUT_S: hello, plan, prepare,
# clock probe, start at the agent's now + START_DELTA_NS, then waits for
# AWAIT in the reply; $T/TAG.reply holds what the agent sent, $T/TAG.ms the
# ms from the start message to AWAIT.
fake_mgr() {
    local tag=$1 planjson=$2 delta=$3 await=$4 secs=$5
    rm -f "$T/$tag".*
    (
        trap '' PIPE
        exec 3<>"/dev/tcp/127.0.0.1/$iport" || exit 1
        timeout 60 cat <&3 >"$T/$tag.reply" 2>/dev/null &
        reader=$!
        frame() { cl_frame "$1" >&3 2>/dev/null || true; }
        wait_for() {
            local dl=$(($(cl_now_ms) + $2 * CL_WAIT_SCALE * 1000))
            until grep -aqF -- "$1" "$T/$tag.reply" 2>/dev/null; do
                [ "$(cl_now_ms)" -lt "$dl" ] && cl_alive "$reader" ||
                    { echo "no '$1' from the agent within $2 s" >"$T/$tag.fail"; exit 2; }
                sleep 0.02
            done
        }
        frame "$HELLO"
        wait_for '{"type":"welcome"' 5
        frame "{\"type\":\"plan\",\"plan\":$planjson}"
        frame '{"type":"prepare"}'
        wait_for '{"type":"prepared"}' 10
        frame '{"type":"clock_probe","seq":0,"t0_ns":1}'
        wait_for '{"type":"clock_reply"' 5
        now=$(grep -ao '"agent_ns":[0-9]*' "$T/$tag.reply" | tail -n1 | cut -d: -f2)
        frame "{\"type\":\"start\",\"test\":0,\"start_at_ns\":$((now + delta))}"
        t0=$(cl_now_ms)
        wait_for "$await" "$secs"
        echo $(($(cl_now_ms) - t0)) >"$T/$tag.ms"
        sleep 0.3 # anything sent after AWAIT
        frame '{"type":"bye"}'
        exec 3>&-
        kill "$reader" 2>/dev/null || true
        wait
    ) || fail "fake manager '$tag': $(cat "$T/$tag.fail" 2>/dev/null); the agent sent: $(tr -c '[:print:]' . <"$T/$tag.reply" | tail -c 600); its log: $(tail -n 5 "$ilog")"
}

# 3. No worker here: 2 s window in 500 ms intervals.
OTHER='{"name":"other-nodes","run":{"ramp":"0s","duration":"2s","interval":"500ms"},"specs":[{"name":"4k","lines":[{"size":"4k"}]}],"workers":[{"nodes":["other"],"engine":"null","targets":[{"path":"n","size":"1m"}]}]}'
c0=$(cl_cpu_ticks "$ipid")
# The start 3 s ahead: this shell's polling between the clock reply and the
# start can take a second on a machine with every CPU busy.
fake_mgr nowork "$OTHER" 3000000000 '"type":"result"' 10
c1=$(cl_cpu_ticks "$ipid")
nstats=$(grep -ao '"type":"stats"' "$T/nowork.reply" | wc -l)
ms=$(cat "$T/nowork.ms")
[ "$nstats" = 4 ] || fail "idle node: $nstats stats messages for a 2 s window of 500 ms intervals (expected 4)"
[ "$ms" -ge 2000 ] || fail "idle node: result $ms ms after the start, before the 2.2 s window ended"
[ $((c1 - c0)) -le 50 ] || fail "idle node: the agent used $((c1 - c0)) CPU ticks during an idle test (3 s wait, 2 s window)"
grep -aq '"workers":\[\]' "$T/nowork.reply" || fail "idle node: the result does not say it had no workers"
expect_in "$ilog" "test 1: no worker group selects node 'idle': idle until the test ends, reporting no I/O"
ok "node without workers: $nstats empty intervals, result after $ms ms, $((c1 - c0)) CPU ticks"

# 4. A start 5 s in the past (ramp 0): refused, naming the difference.
fake_mgr past "$(sed 's/"nodes":\["other"\],//' <<<"$OTHER")" -5000000000 '"type":"error"' 5
grep -aqE "test 1: the start time is ([5-9]|[1-9][0-9]+)\.[0-9]* s in the past on this node's clock" "$T/past.reply" ||
    fail "start in the past: $(tr -c '[:print:]' . <"$T/past.reply")"
if grep -aq '"type":"result"' "$T/past.reply"; then fail "start in the past: a result was sent"; fi
ok "start time in the past refused: $(grep -ao "the start time is [^\"]*" "$T/past.reply" | cut -c1-120)"

# 5. A device that hangs (root, /dev/fuse, losetup, python3-fuse).
if [ "$(id -u)" != 0 ] || [ ! -c /dev/fuse ] || ! command -v losetup >/dev/null ||
    ! command -v fusermount >/dev/null || ! /usr/bin/python3 -c 'import fuse' 2>/dev/null; then
    echo "SKIP part 5: needs root, /dev/fuse, losetup, fusermount and python3-fuse (scripts/deps)"
    cl_done
    exit 0
fi
mnt=$T/fuse stall=$T/STALL
mkdir -p "$mnt"
/usr/bin/python3 "$IOF_SRC/tests/integration/lib/stallfs.py" "$mnt" -f \
    -o "direct_io,size=$((64 << 20)),stall=$stall" 2>"$T/stallfs.log" &
fspid=$!
# Cleanup, first of all (an agent waiting on the hung device cannot exit):
# the device comes back; last: unmounted.
iof_cleanup_hooks=("rm -f '$stall'" "${iof_cleanup_hooks[@]}")
# A loop device over the FUSE file keeps it busy: detach first, then unmount.
iof_on_exit "losetup -j '$mnt/disk.img' -n -O NAME 2>/dev/null | xargs -r -n1 losetup -d; fusermount -u '$mnt' 2>/dev/null || fusermount -uz '$mnt' 2>/dev/null; kill $fspid 2>/dev/null"
for ((i = 0; i < 100; i++)); do [ -e "$mnt/disk.img" ] && break; sleep 0.05; done
[ -e "$mnt/disk.img" ] || { cat "$T/stallfs.log" >&2; echo "SKIP part 5: the FUSE filesystem did not mount"; cl_done; exit 0; }
loop=$(losetup --find --show "$mnt/disk.img") || { echo "SKIP part 5: no loop device"; cl_done; exit 0; }
iof_on_exit "losetup -d $loop"
cl_start_agent hang --heartbeat-ms $hb --allow "$loop"
hport=${CL_PORTS[2]} hlog=${CL_LOGS[2]}
plan dev.json <<P
{"name": "dev", "run": {"duration": "30s", "interval": "500ms"},
 "specs": [{"name": "r", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "libaio", "queue_depth": 4, "targets": [{"path": "$loop"}]}]}
P
plan dev2s.json <<P
{"name": "dev2s", "run": {"duration": "2s", "interval": "500ms"},
 "specs": [{"name": "r", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "libaio", "queue_depth": 4, "targets": [{"path": "$loop"}]}]}
P
# answered WHAT: a second manager gets an answer (busy) within 3 s (x IOF_WAIT_SCALE).
answered() {
    local t0 t1 rc=0
    t0=$(cl_now_ms)
    timeout 30 "$IOFLEET" run "$T/short.json" --insecure --agent "127.0.0.1:$hport" --wait 5 \
        >"$T/second.out" 2>"$T/second.err" || rc=$?
    t1=$(cl_now_ms)
    [ "$rc" != 0 ] || fail "$1: the second manager ran a test on a busy agent"
    grep -q "busy" "$T/second.err" && [ $((t1 - t0)) -lt $((3000 * CL_WAIT_SCALE)) ] ||
        fail "$1: a new connection got no answer within $((3 * CL_WAIT_SCALE)) s ($((t1 - t0)) ms, rc $rc): $(cat "$T/second.err")"
    ok "$1: a new connection was answered in $((t1 - t0)) ms: $(grep -m1 busy "$T/second.err")"
}

# 5a. The device hangs before the test starts: opening and probing it blocks
#     the start, the loop goes on.
touch "$stall"
cl_spawn mgr "$T/dev.out" "$T/dev.err" "$IOFLEET" run "$T/dev2s.json" --insecure --agent "127.0.0.1:$hport" \
    --heartbeat-ms $hb --wait 10
sleep 3 # 6 heartbeats, twice the dead-man limit
cl_alive "$mgr" || fail "5a: the manager ended during the stall: $(cat "$T/dev.err")"
if grep -q "lost" "$T/dev.err"; then fail "5a: the manager lost the agent while its device hung: $(cat "$T/dev.err")"; fi
answered "5a: test start on a hung device"
rm -f "$stall"
cl_wait_exit "$mgr" 20 rc
[ "$rc" = 0 ] || fail "5a: the run ended with status $rc once the device came back: $(cat "$T/dev.err")"
ok "5a: heartbeats flowed for 3 s while the start waited on the device; the test ran once it came back"

# 5b. The device hangs mid-test and the manager is killed: the teardown
#     (drain, join, io_destroy) waits on the device, the loop does not.
cl_spawn mgr "$T/dev5b.out" "$T/dev5b.err" "$IOFLEET" run "$T/dev.json" --insecure --agent "127.0.0.1:$hport" \
    --heartbeat-ms $hb --wait 10
cl_wait_log_count "$T/dev5b.err" "[run] test 1/1" 2 15
touch "$stall"
sleep 0.5
kill -KILL "$mgr"
cl_wait_exit "$mgr" 5 rc
cl_wait_log "$hlog" "manager 'iofleet' lost (" 5 || true
answered "5b: teardown on a hung device"
rm -f "$stall"
cl_wait_cmd 35 "a new manager runs once the device is back" \
    "$IOFLEET" run "$T/short.json" --insecure --agent "127.0.0.1:$hport" --wait 2 --quiet
ok "5b: the agent answered during the hung teardown and ran again once the device came back"
cl_done
