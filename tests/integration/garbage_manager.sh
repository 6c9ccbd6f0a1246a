# SPDX-License-Identifier: Apache-2.0
# Garbage on the manager's --listen port (issue 6, "Bad input"), with fake
# peers on bash /dev/tcp; cluster_version.sh already sends one HTTP request
# and two bare connects, which this test does not repeat.
# A: `iofleet run --listen --expect 1 --wait 20` gets, before its agent:
#    4 KiB of /dev/urandom, a 0xFFFFFFF0 length, 65537 bytes announced,
#    65536 bytes of junk, frame version 2, an empty payload, truncated JSON,
#    an unknown type, agent hellos with wrong field types, a connection cut
#    mid-frame (one warning naming the peer and the reason each); two slow
#    senders (half a frame, nothing) dropped at the 10 s hello deadline;
#    1000 connections at once each sending an HTTP request; 1000 connects
#    closed at once. The real agent that dials in afterwards runs: exit 0,
#    one NODE row "real"; the manager's fds are back to their baseline.
# B: a connection that never finishes its hello is still open when --wait
#    ends: the run must go on with the agent that did connect.
# C: a stray peer whose first message is a valid frame but not an agent's
#    hello (a welcome, a manager's hello) must not spoil the run either.
source "$(dirname "$0")/lib/cluster.bash"
# 1000 connections at once: this shell and the daemon (which inherits the
# limit) each need more than 1000 descriptors.
[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -ge 2100 ] || ulimit -n 2100 2>/dev/null ||
    skip "open files limit $(ulimit -n) is below 2100 and cannot be raised"

plan p.json <<'P'
{"name": "garbage", "run": {"ramp": "200ms", "duration": "1s", "interval": "500ms"},
 "specs": [{"name": "4k", "lines": [{"size": "4k", "burst": 16, "delay": "1ms"}]}],
 "workers": [{"engine": "null", "queue_depth": 2, "targets": [{"path": "n", "size": "64m"}]}]}
P

DROP="dropped before its hello: "
gfail() {
    local f
    for f in "$T"/*.log "$T"/*.err; do
        [ -f "$f" ] || continue
        echo "--- $f (last 30 lines)"
        tail -n 30 "$f"
    done >&2
    fail "$*"
}
nfds() { ls "/proc/$1/fd" | wc -l; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
nodes() { awk '$1=="NODE" {printf "%s%s", s, $2; s=" "}' "$1"; }

# ====== A: the garbage, then the real agent ==============================================
port=''
# --wait 120: the garbage below takes seconds on a busy machine, the real agent comes last
cl_start_listen_manager mgr port "$T/a.out" "$T/a.err" "$T/p.json" --expect 1 --wait 120
mlog=$T/a.err
fd0=$(nfds "$mgr") rss0=$(rss_kb "$mgr")
t_start=$(cl_now_ms)

# Slow senders, in the background: connect, send SENDER's output, read until
# the manager closes (60 s max); $T/TAG.ms gets the connection's lifetime.
SLOW_PIDS=()
slow() {
    local tag=$1 send=$2
    (
        trap 'kill $(jobs -p) 2>/dev/null; exit 1' TERM
        exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
        t0=$(cl_now_ms)
        (eval "$send") >&3 2>/dev/null || true
        timeout 60 cat <&3 >"$T/$tag.reply" 2>/dev/null &
        wait $! || true
        echo $(($(cl_now_ms) - t0)) >"$T/$tag.ms"
    ) &
    CL_ALL_PIDS+=($!)
    SLOW_PIDS+=($!)
}
slow half "printf 'IF\\x01\\x00\\x00\\x00\\x00\\x40{\"type\":\"hello\",\"v\"'"
slow idle ":"
nbad=2

# garbage NAME SENDER LOG-TEXT: one connection; one more warning with the
# reason, naming the peer; the manager is still running.
garbage() {
    local before
    before=$(grep -cF -- "$DROP$3" "$mlog" || true)
    CL_SEND=$2
    cl_raw_session "$port" "$T/g.$1" 3
    nbad=$((nbad + 1))
    cl_wait_log_count "$mlog" "$DROP$3" $((before + 1)) 5
    cl_alive "$mgr" || gfail "manager exited after $1"
}
hello_a() { # an agent hello with field $1 set to $2 (raw JSON), as a cl_frame command
    local f=$1 v=$2 h='{"type":"hello"' k
    for k in v role name software heartbeat_ms inventory; do
        case $k in
        "$f") h+=",\"$k\":$v" ;;
        v) h+=',"v":[1,0]' ;;
        role) h+=',"role":"agent"' ;;
        name) h+=',"name":"fake"' ;;
        software) h+=',"software":"x"' ;;
        heartbeat_ms) h+=',"heartbeat_ms":1000' ;;
        inventory) h+=',"inventory":{"hostname":"h","cpus":1,"memory_bytes":1,"kernel":"k","targets":[]}' ;;
        esac
    done
    printf 'cl_frame %q' "$h}"
}
garbage urandom "head -c 4096 /dev/urandom" ""
line=$(grep -F -- "$DROP" "$mlog" | head -n1)
grep -qE "bad frame magic|TLS (handshake|record)|frame version|frame flags|exceeds the limit" <<<"$line" ||
    gfail "random bytes: unexpected reason: $line"
garbage huge "printf 'IF\\x01\\x00\\xff\\xff\\xff\\xf0'" "frame of 4294967280 bytes exceeds the limit of 65536"
garbage over-by-1 "printf 'IF\\x01\\x00\\x00\\x01\\x00\\x01'" "frame of 65537 bytes exceeds the limit of 65536"
garbage at-limit "printf 'IF\\x01\\x00\\x00\\x01\\x00\\x00'; head -c 65536 /dev/zero | tr '\\0' x" \
    "bad message: message is not valid JSON (error at byte 0 of 65536)"
garbage frame-v2 "printf 'IF\\x02\\x00\\x00\\x00\\x00\\x02{}'" "unsupported frame version 2 (this build speaks frame version 1)"
garbage empty "cl_frame ''" "bad message: message is empty"
garbage truncated "cl_frame '{\"type\":\"hello\",\"v\":[1,0]'" "bad message: message is not valid JSON (error at byte 24 of 25)"
garbage unknown "cl_frame '{\"type\":\"frobnicate\"}'" 'bad message: unknown message type "frobnicate"'
garbage hello-v "$(hello_a v '"1.0"')" "bad message: hello.v: must be [major, minor] with integers 0..65535"
garbage hello-name "$(hello_a name 42)" "bad message: hello.name: must be a string"
garbage hello-hb "$(hello_a heartbeat_ms '"fast"')" "bad message: hello.heartbeat_ms: must be an integer in 100..60000"
garbage hello-inv "$(hello_a inventory '{"hostname":"h","cpus":"many","memory_bytes":1,"kernel":"k","targets":[]}')" \
    "bad message: hello.inventory.cpus: "
garbage cut "printf 'IF\\x01\\x00\\x00\\x00\\x00\\x10{\"ty'" "connection closed in the middle of a frame"
# One snapshot of the log: slow connections' drop lines may still arrive.
grep -F -- "$DROP" "$mlog" >"$T/drops" || true
n=$(wc -l <"$T/drops")
c=$(grep -cE "^iofleet: warning: connection from 127\.0\.0\.1:[0-9]+ $DROP" "$T/drops" || true)
[ "$c" = "$n" ] || gfail "only $c of $n drop lines name the peer: $(head -n3 "$T/drops")"
ok "$((nbad - 2)) bad connections: one warning each, naming the peer"

# 1000 connections at once, each sending an HTTP request, held until
# $T/flood.go exists (30 s max).
(
    trap '' PIPE # the manager may have closed a connection already
    fds=()
    for ((i = 0; i < 1000; i++)); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$port" || break
        printf 'GET / HTTP/1.0\r\n\r\n' 1>&"$fd" 2>/dev/null || true
        fds+=("$fd")
    done
    echo "${#fds[@]}" >"$T/flood.opened"
    for ((i = 0; i < 600; i++)); do
        [ -e "$T/flood.go" ] && break
        sleep 0.05
    done
) &
flood=$!
CL_ALL_PIDS+=("$flood")
cl_wait_cmd 20 "1000 connections opened" test -s "$T/flood.opened"
[ "$(cat "$T/flood.opened")" = 1000 ] || gfail "opened only $(cat "$T/flood.opened") connections"
sleep 1
fd_flood=$(nfds "$mgr")
touch "$T/flood.go"
cl_wait_exit "$flood" 10 rc
cl_alive "$mgr" || gfail "manager exited after the flood"
sleep 0.5
# Each is logged: by its bad frame, or - when the connections waiting for
# their hello already fill the manager's slots - as dropped for that.
nmagic=$(grep -cF -- "${DROP}bad frame magic 0x4745 (not an iofleet peer? HTTP?)" "$mlog" || true)
nfull=$(grep -cF -- "agent slots are taken" "$mlog" || true)
nhttp=$((nmagic + nfull))
ok "1000 HTTP requests at once: $nhttp warnings; manager had $fd_flood fds (baseline $fd0)"
cl_expect_fixed "the manager logs each of 1000 simultaneous bad connections (got $nmagic 'bad frame magic' and $nfull 'slots are taken' warnings)" \
    test "$nhttp" -ge 1000

# 1000 connects closed at once, from 4 shells.
bpids=()
for _ in 1 2 3 4; do
    (
        for ((i = 0; i < 250; i++)); do
            exec {fd}<>"/dev/tcp/127.0.0.1/$port" || exit 1
            exec {fd}>&-
        done
    ) &
    bpids+=($!)
    CL_ALL_PIDS+=($!)
done
for p in "${bpids[@]}"; do
    cl_wait_exit "$p" 20 rc
    [ "$rc" = 0 ] || gfail "a burst shell could not connect (rc $rc)"
done
cl_alive "$mgr" || gfail "manager exited after 1000 connects"

# Everything closed but the slow senders still open (both, unless the garbage took
# longer than their 10 s hello deadline): fds back to the baseline + those.
slow_open() {
    local p n=0
    for p in "${SLOW_PIDS[@]}"; do cl_alive "$p" && n=$((n + 1)); done
    echo "$n"
}
fds_settled() { [ "$(nfds "$mgr")" -le $((fd0 + $(slow_open))) ]; }
cl_wait_cmd 10 "manager fds back to $fd0 + the open slow senders" fds_settled
fd1=$(nfds "$mgr") nslow=$(slow_open)
[ "$fd1" -le $((fd0 + nslow)) ] || gfail "manager has $fd1 fds after the garbage, expected at most $fd0 + $nslow slow senders"
ok "manager fds: $fd0 at the start, $fd_flood during the flood, $fd1 after it ($nslow slow senders open); VmRSS ${rss0} -> $(rss_kb "$mgr") kB"

# The real agent dials in.
t_dial=$(cl_now_ms)
cl_start_dialer d real "127.0.0.1:$port"
cl_wait_log "$T/real.log" "session with manager 'iofleet'" 10
t_sess=$(cl_now_ms)
cl_wait_log "$mlog" "iofleet: 1 agent ready: real" 20
t_ready=$(cl_now_ms)
cl_wait_exit "$mgr" 40 rc
t_end=$(cl_now_ms)
[ "$rc" = 0 ] || gfail "manager exited $rc with the real agent after the garbage, expected 0"
[ "$(nodes "$T/a.out")" = real ] || gfail "NODE rows: '$(nodes "$T/a.out")', expected only 'real'"
expect_in "$mlog" "iofleet: 1 agent ready: real"
cl_stop "$d"
ok "the real agent ran after the garbage: exit 0, NODE real (dialled $((t_dial - t_start)) ms after the start; welcomed after $((t_sess - t_dial)) ms, the run began $((t_ready - t_sess)) ms later (the slow senders were pending), done $((t_end - t_ready)) ms after that)"

# The slow senders: they hold nothing up; they are dropped at the 10 s hello
# deadline (with a warning) or when the run, which did not wait for them,
# has ended - whichever comes first.
for p in "${SLOW_PIDS[@]}"; do cl_wait_exit "$p" 30 rc; done
late=0
for tag in half idle; do
    ms=$(cat "$T/$tag.ms")
    # 10 s, and time for a busy machine's loop to run the timer (our reader gives up at 60 s)
    [ "$ms" -le 30000 ] || gfail "slow sender '$tag' dropped after $ms ms, expected by the 10 s hello deadline"
    [ "$ms" -ge 9500 ] && late=$((late + 1))
done
c=$(grep -cF -- "${DROP}no hello and welcome from the agent within the deadline" "$mlog" || true)
[ "$c" = "$late" ] || gfail "$c deadline warnings, expected $late (the slow senders still open at the deadline)"
ok "slow senders dropped after $(cat "$T/half.ms") (half a frame) and $(cat "$T/idle.ms") ms (idle)"
# The live line counts agents, not stray connections.
live=$(grep -F '[run] test 1/1' "$mlog" | tail -n1)
cl_expect_fixed "the live line counts the run's agents, not the stray connections' slots: 'agents 1/1' (got: '$(grep -o 'agents [0-9]*/[0-9]*' <<<"$live" || true)')" \
    grep -q 'agents 1/1$' <<<"$live"

# ====== B: a pre-hello connection still open when --wait ends ============================
port=''
cl_start_listen_manager mgr port "$T/b.out" "$T/b.err" "$T/p.json" --expect 1 --wait 4
(
    exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
    printf 'IF\x01\x00\x00\x00\x00\x40{"type"' >&3
    exec sleep 15
) &
holder=$!
CL_ALL_PIDS+=("$holder")
cl_start_dialer d real-b "127.0.0.1:$port"
t0=$(cl_now_ms)
cl_wait_log "$T/real-b.log" "session with manager 'iofleet'" 5
cl_wait_exit "$mgr" 15 rc
t1=$(cl_now_ms)
cl_stop "$holder"
cl_stop "$d"
ok "B: exit $rc after $((t1 - t0)) ms"
cl_expect_fixed "B: a connection whose hello is still half-sent when --wait (4 s) ends neither holds nor fails a run whose expected agent is connected: expected exit 0 with NODE real-b soon after the agent's welcome; got exit $rc after $((t1 - t0)) ms, NODE rows '$(nodes "$T/b.out")', $(grep -F 'iofleet: agent at' "$T/b.err" | head -n1)" \
    test "$rc" = 0 -a "$(nodes "$T/b.out")" = real-b -a $((t1 - t0)) -lt 3500

# ====== C: a valid frame that is not an agent's hello, before the agent ===================
spoiled=()
for first in welcome manager-hello; do
    case $first in
    welcome) CL_SEND="cl_frame '{\"type\":\"welcome\"}'" ;;
    manager-hello) CL_SEND="cl_frame '{\"type\":\"hello\",\"v\":[1,0],\"role\":\"manager\",\"name\":\"other-mgr\",\"software\":\"x\",\"heartbeat_ms\":1000}'" ;;
    esac
    port=''
    cl_start_listen_manager mgr port "$T/c-$first.out" "$T/c-$first.err" "$T/p.json" --expect 1 --wait 10
    cl_raw_session "$port" "$T/c-$first.reply" 2
    cl_start_dialer d "real-$first" "127.0.0.1:$port"
    cl_wait_exit "$mgr" 20 rc
    cl_stop "$d"
    why=$(grep -F 'iofleet: agent at' "$T/c-$first.err" | head -n1 || true)
    ok "C ($first first): exit $rc; $why"
    [ "$rc" = 0 ] && [ "$(nodes "$T/c-$first.out")" = "real-$first" ] || spoiled+=("$first first: exit $rc, NODE rows '$(nodes "$T/c-$first.out")', $why")
done
cl_expect_fixed "C: a stray peer whose first message is valid but not an agent's hello is dropped with a log line and the run goes on with the real agent (exit 0); instead: $(printf '%s; ' "${spoiled[@]:-}")" \
    test ${#spoiled[@]} = 0
cl_done
