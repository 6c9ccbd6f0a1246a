# SPDX-License-Identifier: Apache-2.0
# Garbage after the session is established (issue 6, "Bad input"): a fake
# manager on bash /dev/tcp completes the hello exchange with a listening
# agent (its hello, the agent's hello and welcome; heartbeat_ms 60000, which
# the agent caps at its maximum of 5000 ms: 15 s of silence, longer than any
# fake session here), then sends:
# - frames over the 1 MiB established limit (0xFFFFFFF0, 1 MiB + 1), 1 MiB
#   of junk (at the limit: read, then refused), invalid JSON, an unknown
#   type, 4 KiB of /dev/urandom: the agent drops the session, logging why;
# - messages only an agent may send (stats, welcome, clock_reply): the
#   agent must refuse them (error, bye) and drop the session too;
# - invalid JSON in the middle of a running test (plan, prepare, start,
#   stats flowing): the agent stops its I/O and drops the session.
# After each, the agent accepts the next manager; at the end a real
# `iofleet run` succeeds and the agent's fds are back to the baseline.
source "$(dirname "$0")/lib/cluster.bash"

plan p.json <<'P'
{"name": "garbage", "run": {"ramp": "200ms", "duration": "1s", "interval": "500ms"},
 "specs": [{"name": "4k", "lines": [{"size": "4k", "burst": 16, "delay": "1ms"}]}],
 "workers": [{"engine": "null", "queue_depth": 2, "targets": [{"path": "n", "size": "64m"}]}]}
P
LONG_PLAN='{"name":"long","run":{"ramp":"100ms","duration":"30s","interval":"200ms"},"specs":[{"name":"4k","lines":[{"size":"4k","burst":16,"delay":"1ms"}]}],"workers":[{"engine":"null","queue_depth":2,"targets":[{"path":"n","size":"64m"}]}]}'
HELLO='{"type":"hello","v":[1,0],"role":"manager","name":"fake-mgr","software":"x","heartbeat_ms":60000}'
ENDED="dynamo: info: session with manager 'fake-mgr' ended ("
LOST="dynamo: warning: manager 'fake-mgr' lost ("

nfds() { ls "/proc/$1/fd" | wc -l; }
nthreads() { ls "/proc/$1/task" | wc -l; }

cl_start_agent est-1
ap=${CL_PORTS[0]} apid=${CL_PIDS[0]} alog=${CL_LOGS[0]}
expect_rc 0 "$IOFLEET" run "$T/p.json" "${CL_AGENT_ARGS[@]}" --wait 10 --quiet
fd0=$(nfds "$apid") th0=$(nthreads "$apid")

# fake_mgr TAG SECS SCRIPT: a fake manager session. SCRIPT runs with
# fm_send CMD (CMD's output on the socket), fm_frame JSON and fm_await TEXT [S] (waits for
# TEXT in what the agent sent, 5 s by default); then we wait up to SECS for
# the agent to close. $T/TAG.reply: what the agent sent; $T/TAG.ms: ms from
# the end of SCRIPT to the agent's close, or "open"; $T/TAG.fail: why
# SCRIPT failed. The connection is closed at the end in any case.
fake_mgr() {
    local tag=$1 secs=$2 script=$3 rc=0
    rm -f "$T/$tag".*
    (
        trap 'kill $(jobs -p) 2>/dev/null; exit 1' TERM
        trap '' PIPE
        exec 3<>"/dev/tcp/127.0.0.1/$ap" || exit 1
        timeout 60 cat <&3 >"$T/$tag.reply" 2>/dev/null &
        reader=$!
        fm_send() { (eval "$1") >&3 2>/dev/null || true; }
        fm_frame() { cl_frame "$1" >&3 2>/dev/null || true; }
        fm_await() {
            local dl=$(($(cl_now_ms) + ${2:-5} * CL_WAIT_SCALE * 1000))
            until grep -aqF -- "$1" "$T/$tag.reply" 2>/dev/null; do
                if [ "$(cl_now_ms)" -ge "$dl" ] || ! cl_alive "$reader"; then
                    echo "no '$1' from the agent" >"$T/$tag.fail"
                    exit 2
                fi
                sleep 0.02
            done
        }
        eval "$script"
        t0=$(cl_now_ms)
        while cl_alive "$reader" && [ $(($(cl_now_ms) - t0)) -lt $((secs * 1000)) ]; do sleep 0.02; done
        if cl_alive "$reader"; then echo open >"$T/$tag.ms"; else echo $(($(cl_now_ms) - t0)) >"$T/$tag.ms"; fi
        exec 3>&-
        kill "$reader" 2>/dev/null || true
        wait
    ) || rc=$?
    if [ "$rc" != 0 ]; then
        tail -n 20 "$alog" >&2
        fail "fake manager '$tag' failed (rc $rc): $(cat "$T/$tag.fail" 2>/dev/null)"
    fi
}
nsess=0
drop_s=$((2 * CL_WAIT_SCALE))
# established TAG BAD-SENDER LOG-TEXT: a session, then BAD-SENDER's output;
# the agent must drop the session within $drop_s s, logging LOG-TEXT as why.
established() {
    local tag=$1 bad=$2 text=$3
    fake_mgr "$tag" "$drop_s" "fm_send \"cl_frame '\$HELLO'\"; fm_await '{\"type\":\"welcome\"'; fm_send \"\$bad\""
    nsess=$((nsess + 1))
    cl_wait_log_count "$alog" "$ENDED" "$nsess" 5 # (ends at our close, at the latest)
    [ "$(cat "$T/$tag.ms")" != open ] || return 1
    grep -F -- "$ENDED" "$alog" | tail -n1 | grep -qF -- "$text" || return 1
    ok "$tag: session dropped $(cat "$T/$tag.ms") ms after the bad input: $(grep -F -- "$ENDED" "$alog" | tail -n1)"
}
must_drop() {
    established "$@" || {
        tail -n 20 "$alog" >&2
        fail "$1: the agent did not drop the session within $drop_s s with '$3' (after the bad input: $(cat "$T/$1.ms"))"
    }
}

must_drop huge "printf 'IF\\x01\\x00\\xff\\xff\\xff\\xf0'" "frame of 4294967280 bytes exceeds the limit of 1048576)"
must_drop over-by-1 "printf 'IF\\x01\\x00\\x00\\x10\\x00\\x01'" "frame of 1048577 bytes exceeds the limit of 1048576)"
must_drop at-limit "printf 'IF\\x01\\x00\\x00\\x10\\x00\\x00'; head -c 1048576 /dev/zero | tr '\\0' x" \
    "bad message: message is not valid JSON (error at byte 0 of 1048576))"
must_drop notjson "cl_frame '{\"type\":\"plan\",\"plan\":{'" "bad message: message is not valid JSON"
must_drop unknown "cl_frame '{\"type\":\"frobnicate\",\"n\":1}'" 'bad message: unknown message type "frobnicate")'
must_drop urandom "head -c 4096 /dev/urandom" ""
line=$(grep -F -- "$ENDED" "$alog" | tail -n1)
grep -qE "bad frame magic|TLS (handshake|record)|frame version|frame flags|exceeds the limit" <<<"$line" ||
    fail "random bytes: unexpected reason: $line"

# Messages only an agent sends (proto_msg_may_send): refused with an error
# and bye, and the session dropped.
kept=()
for t in stats welcome clock_reply; do
    case $t in
    stats) m='{"type":"stats","test":0,"interval":0,"workers":[]}' ;;
    welcome) m='{"type":"welcome"}' ;;
    clock_reply) m='{"type":"clock_reply","seq":0,"t0_ns":1,"agent_ns":1}' ;;
    esac
    dropped=yes
    established "wrong-way-$t" "cl_frame '$m'" "$t" || dropped=no
    reply=$(tr -c '[:print:]' . <"$T/wrong-way-$t.reply" | sed 's/IF\.\.\.\.\.\./ /g')
    grep -q "\"type\":\"error\",\"code\":\"IOF_EPROTO\",\"message\":\"[^\"]*$t" <<<"$reply" ||
        fail "wrong-way-$t: no IOF_EPROTO error naming $t: $reply"
    ok "wrong-way-$t: answered with an error; dropped within $drop_s s: $dropped; log at our close: $(grep -F -- "$ENDED" "$alog" | tail -n1)"
    [ "$dropped" = yes ] && grep -q '"type":"bye"' <<<"$reply" || kept+=("$t")
done
cl_expect_fixed "the agent drops a session whose manager sends a message only agents send, with error + bye and a log line naming it: for ${kept[*]:-} it only answered with an error (IOF_EPROTO 'est-1: unexpected TYPE') and kept the session (still open $drop_s s later)" \
    test ${#kept[@]} = 0

# Invalid JSON in the middle of a running test.
PLAN_MSG="{\"type\":\"plan\",\"plan\":$LONG_PLAN}"
# start_at_ns on the agent's clock (offset 0): a clock probe tells its time.
midrun() {
    local now
    fm_frame "$HELLO"
    fm_await '{"type":"welcome"'
    fm_frame "$PLAN_MSG"
    fm_frame '{"type":"prepare"}'
    fm_await '{"type":"prepared"}' 20
    fm_frame '{"type":"clock_probe","seq":0,"t0_ns":1}'
    fm_await '{"type":"clock_reply"'
    now=$(grep -ao '"agent_ns":[0-9]*' "$T/midrun.reply" | tail -n1 | cut -d: -f2)
    # 1 s ahead: this shell's polling between the clock reply and the start
    # can take hundreds of ms on a machine with every CPU busy.
    fm_frame "{\"type\":\"start\",\"test\":0,\"start_at_ns\":$((now + 1000000000))}"
    fm_await '{"type":"stats","test":0,"interval":1,' 10
    nthreads "$apid" >"$T/midrun.threads"
    fm_frame 'garbage {'
}
fake_mgr midrun 3 midrun
nsess=$((nsess + 1))
cl_wait_log "$alog" "${LOST}bad message: message is not valid JSON (error at byte 0 of 9)): stopping all I/O" 5
[ "$(cat "$T/midrun.ms")" != open ] || fail "midrun: the agent kept the session after garbage during a test"
ok "midrun: garbage during test 1 (after 2 intervals): session dropped $(cat "$T/midrun.ms") ms later, $(grep -F -- "$LOST" "$alog" | tail -n1)"
if grep -aq '"type":"result"' "$T/midrun.reply"; then fail "midrun: the agent sent a result to the manager it dropped"; fi
# Its workers are gone (I/O stopped): back to the threads it had at rest.
cl_wait_cmd 10 "midrun: agent back to its $th0 threads at rest (workers still running?)" \
    eval '[ "$(nthreads "$apid")" -le "$th0" ]'
ok "midrun: agent threads $th0 at rest, $(cat "$T/midrun.threads") during the test, $(nthreads "$apid") after the drop"

# The agent accepts the next manager and runs; nothing left open.
expect_rc 0 "$IOFLEET" run "$T/p.json" "${CL_AGENT_ARGS[@]}" --wait 10 --quiet
[ "$(cl_rows "$T/out" NODE)" = 1 ] || fail "no NODE row after the garbage"
awk '$1=="ALL" && $3 > 0 {f=1} END{exit !f}' "$T/out" || fail "no I/O after the garbage"
cl_alive "$apid" || fail "agent died"
cl_wait_cmd 10 "agent fds back to $fd0" eval '[ "$(nfds "$apid")" -le "$fd0" ]'
[ "$(nfds "$apid")" = "$fd0" ] || fail "agent has $(nfds "$apid") fds, $fd0 at the baseline"
c=$(grep -cF "dynamo: info: session with manager 'fake-mgr' (127.0.0.1:" "$alog" || true)
[ "$c" = "$nsess" ] || fail "$c fake sessions started, expected $nsess"
ok "after $nsess bad sessions a normal run succeeded; agent fds back to $fd0"
cl_done
