# SPDX-License-Identifier: Apache-2.0
# Protocol version negotiation and strangers, with fake peers on bash
# /dev/tcp:
# - a fake agent speaking protocol 2.0 is refused by the manager, with both
#   versions in the message, and the run exits 3;
# - a fake agent speaking 1.9 with unknown fields is accepted (same major);
# - garbage on an agent's port (random bytes, an HTTP request, a TLS
#   ClientHello, an oversized frame, a 2.0 manager) is logged by the agent,
#   which keeps serving: a normal run afterwards succeeds;
# - a stray connection on the manager's --listen port does not spoil the run.
source "$(dirname "$0")/lib/cluster.bash"

plan p.json <<'P'
{"name": "version", "run": {"ramp": "200ms", "duration": "1s", "interval": "500ms"},
 "specs": [{"name": "4k", "lines": [{"size": "4k", "burst": 16, "delay": "1ms"}]}],
 "workers": [{"engine": "null", "queue_depth": 2, "targets": [{"path": "n", "size": "64m"}]}]}
P
inv='"inventory":{"hostname":"fake-host","cpus":1,"memory_bytes":1048576,"kernel":"9.9.9","targets":[]}'

# --- a 2.0 agent dials a manager ------------------------------------------------------
port=''
# --wait 15: the refusal below must come while the manager still waits, on a busy machine too.
cl_start_listen_manager mgr port "$T/m1.out" "$T/m1.err" "$T/p.json" --expect 1 --wait 15
t0=$(cl_now_ms)
CL_SEND="cl_frame '{\"type\":\"hello\",\"v\":[2,0],\"role\":\"agent\",\"name\":\"future\",\"software\":\"9.9\",\"heartbeat_ms\":1000,$inv}'"
cl_raw_session "$port" "$T/r1" 4
cl_wait_log "$T/m1.err" "protocol 2.0 is not compatible with this build's 1.8" 3
t1=$(cl_now_ms)
cl_wait_exit "$mgr" 20 rc
[ "$rc" = 3 ] || cl_fail "manager exited $rc after a 2.0 agent, expected 3"
msg=$(grep "protocol 2.0" "$T/m1.err")
case "$msg" in
"iofleet: agent "*" (127.0.0.1:"*"): protocol 2.0 is not compatible with this build's 1.8 (the peer is newer: upgrade this side)") ;;
*) cl_fail "refusal message: $msg" ;;
esac
expect_in "$T/m1.err" "iofleet: 0 of 1 expected agents connected within 15.0 s"
if grep -q '^== test' "$T/m1.out"; then cl_fail "a test ran"; fi
# Our fake agent got the manager's hello (so it could see the version too).
expect_in "$T/r1" '{"type":"hello","v":[1,8],"role":"manager","name":"iofleet"'
ok "2.0 agent refused within $((t1 - t0)) ms, exit 3: $msg"
# docs/protocol.md: "the peer's role and name are kept when readable so it
# can be named", and "A refusal is an error (IOF_EVERSION ...) followed by
# bye, then the sender closes."
cl_expect_fixed "manager names the refused 2.0 agent 'future' (got: $msg)" \
    grep -qF "agent future (" "$T/m1.err"
cl_expect_fixed "manager sends error IOF_EVERSION + bye to a 2.0 agent (got: $(cat "$T/r1"))" \
    grep -q '"type":"error","code":"IOF_EVERSION".*2\.0.*1\.8.*"type":"bye"' "$T/r1"

# --- a 1.9 agent with unknown fields is compatible --------------------------------------
port=''
cl_start_listen_manager mgr port "$T/m2.out" "$T/m2.err" "$T/p.json" --expect 1 --wait 60
CL_SEND="cl_frame '{\"type\":\"hello\",\"v\":[1,9],\"role\":\"agent\",\"name\":\"newer\",\"software\":\"1.9\",\"heartbeat_ms\":1000,\"colour\":\"blue\",${inv%\}},\"gpu\":{\"n\":1}}}'; cl_frame '{\"type\":\"welcome\",\"since\":\"1.9\"}'"
cl_raw_session "$port" "$T/r2" 1
cl_wait_exit "$mgr" 10 rc
expect_in "$T/m2.err" "iofleet: 1 agent ready: newer"
expect_in "$T/r2" '{"type":"plan","plan":{"name":"version"'
expect_in "$T/r2" '{"type":"prepare"}'
# We hung up during preparation: the agent is lost, exit 1.
[ "$rc" = 1 ] || cl_fail "manager exited $rc after losing the 1.9 agent, expected 1"
expect_in "$T/m2.err" "iofleet: agent newer (127.0.0.1:"
# Our side hung up with the plan unread or read: the kernel ends the
# connection with a reset or a close, both the loss this checks.
grep -qE "\): lost: (connection closed by the peer|Connection reset by peer)" "$T/m2.err" ||
    { cat "$T/m2.err"; cl_fail "the 1.9 agent's hang-up was not reported as its loss"; }
ok "1.9 agent with unknown fields accepted: got plan and prepare"

# --- garbage on an agent's port ---------------------------------------------------------
cl_start_agent target-1
ap=${CL_PORTS[0]} alog=${CL_LOGS[0]}
n=0
garbage() { # NAME SENDER EXPECTED-LOG-TEXT
    CL_SEND=$2
    cl_raw_session "$ap" "$T/g.$1" 3
    n=$((n + 1))
    cl_wait_log_count "$alog" " dropped before its session started: " $n 3
    expect_in "$alog" "$3"
    cl_alive "${CL_PIDS[0]}" || cl_fail "agent died after $1"
    # It answered with its hello only (sent at once), nothing else.
    if grep -q '"type":"welcome"' "$T/g.$1"; then cl_fail "agent welcomed $1"; fi
}
garbage http "printf 'GET / HTTP/1.1\r\nHost: x\r\n\r\n'" \
    " dropped before its session started: bad frame magic 0x4745 (not an iofleet peer? HTTP?)"
garbage random "printf '\\x00\\x01'; head -c 512 /dev/urandom" \
    " dropped before its session started: bad frame magic 0x0001 (not an iofleet peer?)"
garbage tls "printf '\\x16\\x03\\x01\\x02\\x00\\x01\\x00\\x01\\xfc\\x03\\x03'; head -c 64 /dev/urandom" \
    " dropped before its session started: TLS handshake received on a plain connection"
garbage huge "printf 'IF\\x01\\x00\\xff\\xff\\xff\\xff'" \
    " dropped before its session started: frame of 4294967295 bytes exceeds the limit of 65536"
garbage flags "printf 'IF\\x01\\x80\\x00\\x00\\x00\\x02{}'" \
    " dropped before its session started: reserved frame flags 0x80 set"
garbage notjson "cl_frame 'not json at all'" \
    " dropped before its session started: bad message: "
garbage mgr2 "cl_frame '{\"type\":\"hello\",\"v\":[2,0],\"role\":\"manager\",\"name\":\"future-mgr\",\"software\":\"9.9\",\"heartbeat_ms\":1000}'" \
    " dropped before its session started: protocol 2.0 is not compatible with this build's 1.8"
ok "agent logged and dropped $n bad peers"
cl_expect_fixed "agent answers a 2.0 manager with error IOF_EVERSION naming 2.0 and 1.8, then bye (got: $(cat "$T/g.mgr2"))" \
    grep -q '"type":"error","code":"IOF_EVERSION".*2\.0.*1\.8.*"type":"bye"' "$T/g.mgr2"

expect_rc 0 "$IOFLEET" run "$T/p.json" "${CL_AGENT_ARGS[@]}" --wait 10
[ "$(cl_rows "$T/out" NODE)" = 1 ] || cl_fail "no NODE row after the garbage"
awk '$1=="ALL" && $3 > 0 {f=1} END{exit !f}' "$T/out" || cl_fail "no I/O after the garbage"
ok "agent still serves: a normal run succeeded"

# --- a stray connection on the manager's --listen port ---------------------------------
# A port probe or an HTTP request is not an agent: the run should go on with
# the agent that does connect.
port=''
cl_start_listen_manager mgr port "$T/m3.out" "$T/m3.err" "$T/p.json" --expect 1 --wait 60
CL_SEND="printf 'GET / HTTP/1.0\r\n\r\n'"
cl_raw_session "$port" "$T/r3" 2
cl_wait_log "$T/m3.err" "bad frame magic 0x4745" 3
cl_start_dialer d1 dialer-1 "127.0.0.1:$port"
cl_wait_exit "$mgr" 30 rc
cl_expect_fixed "a stray HTTP connection on the manager's --listen port makes the run exit $rc (expected 0 with the real agent's table)" \
    test "$rc" = 0
cl_expect_fixed "the run with --expect 1 ran on dialer-1 despite the stray connection" \
    grep -q '^NODE    dialer-1 ' "$T/m3.out"

# Two bare connects (port probes) exhaust the manager's agent slots.
port=''
cl_start_listen_manager mgr port "$T/m4.out" "$T/m4.err" "$T/p.json" --expect 1 --wait 60
CL_SEND=":"
cl_raw_session "$port" "$T/r4a" 0.2
cl_raw_session "$port" "$T/r4b" 0.2
cl_start_dialer d2 dialer-2 "127.0.0.1:$port"
cl_wait_exit "$mgr" 30 rc
cl_expect_fixed "two port probes on the manager's --listen port lock the real agent out (exit $rc, expected 0): $(tr '\n' ' ' <"$T/m4.err")" \
    test "$rc" = 0
cl_done
