# SPDX-License-Identifier: Apache-2.0
# Connection setup.
# Iometer-style topology: the manager listens (--listen --expect N) and the
# agents dial in (dynamo --manager). Two agents and --expect 2 run; --expect 3
# with only two agents gives up after --wait with exit 3 and says how many of
# how many connected; a port that is taken is refused with exit 3.
# An --agent nobody listens on: exit 3 with the reason. Two agents with the
# same name: the second is refused.
source "$(dirname "$0")/lib/cluster.bash"

plan p.json <<'P'
{"name": "listen", "run": {"ramp": "200ms", "duration": "1s", "interval": "500ms"},
 "specs": [{"name": "4k read", "lines": [{"size": "4k", "burst": 16, "delay": "1ms"}]}],
 "workers": [{"engine": "null", "queue_depth": 2, "targets": [{"path": "n", "size": "64m"}]}]}
P

port=''
cl_start_listen_manager mgr port "$T/m1.out" "$T/m1.err" "$T/p.json" --expect 2 --wait 15 --rows worker
cl_start_dialer a1 dial-1 "127.0.0.1:$port"
cl_start_dialer a2 dial-2 "127.0.0.1:$port"
cl_wait_exit "$mgr" 20 rc
[ "$rc" = 0 ] || cl_fail "manager with --expect 2 exited $rc, expected 0"
out=$T/m1.out
expect_in "$T/m1.err" "iofleet: 2 agents ready: "
expect_in "$T/m1.err" "dial-1"
expect_in "$T/m1.err" "dial-2"
case "$(cl_header "$out")" in *"  2 nodes, start skew "*) ;; *) cl_fail "header: $(cl_header "$out")" ;; esac
[ "$(cl_rows "$out" NODE)" = 2 ] || cl_fail "expected 2 NODE rows"
for n in dial-1 dial-2; do
    awk -v n="$n" '$1=="NODE" && $2==n && $3 > 0 {f=1} END{exit !f}' "$out" || cl_fail "no I/O on NODE $n"
    expect_in "$T/$n.log" "session with manager 'iofleet' (127.0.0.1:"
done
sums=$(cl_check_sums "$out") || { echo "$sums"; cl_fail "sums"; }
ok "--listen 127.0.0.1:$port --expect 2: ran on dial-1 and dial-2 ($sums)"

# The agents go back to dialling; a manager waiting for 3 gets only 2.
t0=$(cl_now_ms)
# --wait 10: time for both agents' redial back-off on a busy machine.
cl_start_listen_manager mgr port "$T/m2.out" "$T/m2.err" "$T/p.json" --expect 3 --wait 10
cl_wait_exit "$mgr" 30 rc
t1=$(cl_now_ms)
[ "$rc" = 3 ] || cl_fail "manager with --expect 3 and 2 agents exited $rc, expected 3"
expect_in "$T/m2.err" "iofleet: 2 of 3 expected agents connected within 10.0 s"
if grep -q '^== test' "$T/m2.out"; then cl_fail "a test ran without the expected agents"; fi
[ $((t1 - t0)) -ge 9900 ] || cl_fail "gave up after $((t1 - t0)) ms, before --wait 10"
[ $((t1 - t0)) -lt $((10000 + 4000 * CL_WAIT_SCALE)) ] || cl_fail "gave up after $((t1 - t0)) ms, --wait was 10 s"
ok "--expect 3 with 2 agents: exit 3 after $((t1 - t0)) ms: $(grep 'expected agents' "$T/m2.err")"

# The agents were not harmed: a third manager on the same port runs again.
cl_start_listen_manager mgr port "$T/m3.out" "$T/m3.err" "$T/p.json" --expect 2 --wait 15
cl_wait_exit "$mgr" 25 rc
[ "$rc" = 0 ] || cl_fail "third manager exited $rc, expected 0"
[ "$(cl_rows "$T/m3.out" NODE)" = 2 ] || cl_fail "third run: expected 2 NODE rows"
ok "agents served a third manager after the refused run"

# A listen port that is taken: exit 3 with the reason.
cl_start_agent holder
hp=${CL_PORTS[0]}
expect_rc 3 "$IOFLEET" run "$T/p.json" --listen "127.0.0.1:$hp" --insecure --expect 1 --wait 2
expect_in "$T/err" "cannot listen on 127.0.0.1:$hp"
ok "taken port: $(head -n1 "$T/err")"

# An --agent nobody listens on: exit 3 after --wait, saying why.
dead=$(cl_random_port)
[ -n "$dead" ] || fail "no free port"
t0=$(cl_now_ms)
expect_rc 3 "$IOFLEET" run "$T/p.json" --insecure --agent "127.0.0.1:$dead" --wait 2
t1=$(cl_now_ms)
if [ $((t1 - t0)) -lt 1900 ] || [ $((t1 - t0)) -ge 6000 ]; then cl_fail "unreachable agent: gave up after $((t1 - t0)) ms (--wait 2)"; fi
expect_in "$T/err" "iofleet: agent at 127.0.0.1:$dead: not connected after 2.0 s"
# Said at once (waiting for it, why), then its failure at the end of the wait.
expect_in "$T/err" "iofleet: waiting for agent at 127.0.0.1:$dead: connection refused"
msg=$(grep -F "agent at 127.0.0.1:$dead: not connected" "$T/err")
ok "unreachable agent: exit 3 after $((t1 - t0)) ms"
# The reason must be the last connection error, said once.
cl_expect_fixed "unreachable --agent: message garbled, expected '...not connected after 2.0 s: connection refused', got '$msg'" \
    test "$msg" = "iofleet: agent at 127.0.0.1:$dead: not connected after 2.0 s: connection refused"

# Two agents with the same name: node names identify rows and plan nodes, so
# the second one must be refused. Made deterministic with a fake agent
# 'twin' that sends its hello, then waits until the real 'twin' has joined
# before it sends its welcome.
port=''
cl_start_listen_manager mgr port "$T/m5.out" "$T/m5.err" "$T/p.json" --expect 2 --wait 8
inv='"inventory":{"hostname":"fake","cpus":1,"memory_bytes":1048576,"kernel":"9","targets":[]}'
CL_SEND="cl_frame '{\"type\":\"hello\",\"v\":[1,0],\"role\":\"agent\",\"name\":\"twin\",\"software\":\"0.1.0\",\"heartbeat_ms\":1000,$inv}'; sleep 1.5; cl_frame '{\"type\":\"welcome\"}'"
cl_raw_session "$port" "$T/r5" 1 &
fake=$!
CL_ALL_PIDS+=("$fake")
sleep 0.3
cl_start_dialer d5 twin "127.0.0.1:$port"
cl_wait_exit "$fake" 10 frc
cl_wait_exit "$mgr" 15 rc
ok "two agents named twin: exit $rc"
cl_expect_fixed "a second agent named 'twin' was accepted ($(grep 'agents ready' "$T/m5.err"); exit $rc; expected 'another agent already uses the name' and exit 3)" \
    grep -qF "another agent already uses the name 'twin'" "$T/m5.err"
cl_done
