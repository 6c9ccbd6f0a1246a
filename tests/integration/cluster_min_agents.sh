# SPDX-License-Identifier: Apache-2.0
# A missing agent: the manager says at once which agent it waits for and
# why, counts the wait down (a plain line a second off a terminal), and
# with --min-agents goes on with the agents that did connect, naming the
# one left out; without it the run fails within --wait, naming the missing
# agent and the reason.
source "$(dirname "$0")/lib/common.bash"

iof_start_agent live
live=$AGENT_EP
# A loopback port nothing listens on: bound once for a free number, closed.
dead=127.0.0.1:$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

plan p.json <<'P'
{"name": "p", "run": {"ramp": "0s", "duration": "400ms", "interval": "200ms"},
 "specs": [{"name": "one", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "null", "queue_depth": 4, "targets": [{"path": "n", "size": "1m"}]}]}
P

# Without --min-agents: fails (3) within the wait, naming agent and reason,
# and the first word about it comes at once, not after the wait.
"$IOFLEET" run "$T/p.json" --agent "$live" --agent "$dead" --insecure --wait 3 --no-db \
    >"$T/out" 2>"$T/err" &
pid=$!
iof_on_exit "kill $pid 2>/dev/null"
sleep 1
expect_in "$T/err" "waiting for agent at $dead: connection refused: is dynamo running there?"
expect_in "$T/err" "systemctl start dynamo"
rc=0
t0=$(date +%s%N)
wait "$pid" || rc=$?
t1=$(date +%s%N)
[ "$rc" = 3 ] || { cat "$T/out" "$T/err"; fail "exit $rc without --min-agents, expected 3"; }
[ $(( (t1 - t0) / 1000000 )) -lt 6000 ] || fail "took $(( (t1 - t0) / 1000000 )) ms after the first second"
expect_in "$T/err" "agent at $dead: not connected after 3.0 s: connection refused"
expect_in "$T/err" "1 of 2 agents connected; --min-agents 1 would go on without the others"
n=$(grep -c "^\[wait\] agents 1/2  waiting for $dead (connection refused)  retrying, [0-9]*s left" "$T/err" || true)
[ "$n" -ge 2 ] || { cat "$T/err"; fail "$n countdown lines, expected one a second"; }
if grep -q "== test" "$T/out"; then fail "a test ran without --min-agents"; fi
ok "without --min-agents: exit 3 within the wait, $dead named at once with its reason, $n countdown lines"

# With --min-agents 1: the run goes on with the live agent and names the one left out.
expect_rc 0 "$IOFLEET" run "$T/p.json" --agent "$live" --agent "$dead" --insecure --wait 2 \
    --no-db --min-agents 1 --csv "$T/r.csv"
expect_in "$T/err" "agent at $dead: not connected after 2.0 s: connection refused"
expect_in "$T/err" "going on without 1 agent (--min-agents 1: 1 of 2 connected): $dead"
expect_in "$T/err" "1 agent ready: "
expect_in "$T/out" "== test 1/1: one"
nodes=$(awk -F, 'NR > 1 && $4 == "NODE"' "$T/r.csv" | wc -l)
[ "$nodes" = 1 ] || fail "$nodes NODE rows, expected the live agent's only"
ok "--min-agents 1: ran on the live agent, $dead left out and named"

# --min-agents above the agents given is a usage error.
expect_rc 2 "$IOFLEET" run "$T/p.json" --agent "$live" --insecure --min-agents 2
expect_in "$T/err" "--min-agents 2: more than the 1 agents given"
expect_rc 2 "$IOFLEET" run "$T/p.json" --min-agents 1
expect_in "$T/err" "--min-agents needs --agent, --agents-file or --listen"
ok "--min-agents beyond the agents, or without any, is refused"

# On a terminal the countdown is one line redrawn in place (tmux as the
# terminal; the rest of the test ran without one: a line a second).
if command -v tmux >/dev/null; then
    SOCK=$T/tmux.sock
    iof_on_exit "tmux -S '$SOCK' kill-server 2>/dev/null"
    printf '%s\n' "cd '$T' && '$IOFLEET' run '$T/p.json' --agent '$live' --agent '$dead' --insecure --wait 3 --no-db --min-agents 1; echo \$? >'$T/tty.rc'" >"$T/tty.sh"
    tmux -S "$SOCK" new-session -d -s tty -x 160 -y 50 -c "$T" "env LANG=C.UTF-8 bash --norc --noprofile"
    tmux -S "$SOCK" send-keys -t tty "bash $T/tty.sh" Enter
    for _ in $(seq 300); do
        [ -s "$T/tty.rc" ] && break
        sleep 0.1
    done
    [ -s "$T/tty.rc" ] || fail "the run in tmux did not finish within 30 s"
    tmux -S "$SOCK" capture-pane -p -J -S - -t tty >"$T/tty.screen"
    [ "$(cat "$T/tty.rc")" = 0 ] || { cat "$T/tty.screen"; fail "exit $(cat "$T/tty.rc") in tmux"; }
    n=$(grep -c "^\[wait\] agents 1/2  waiting for $dead" "$T/tty.screen" || true)
    [ "$n" = 1 ] || { cat "$T/tty.screen"; fail "$n countdown lines on the terminal, expected one redrawn"; }
    grep -q "^\[wait\] .*retrying, 1s left$" "$T/tty.screen" || { cat "$T/tty.screen"; fail "the countdown did not reach 1s"; }
    grep -q "^iofleet: agent at $dead: not connected after 3.0 s" "$T/tty.screen" ||
        { cat "$T/tty.screen"; fail "the agent's failure does not start its own line after the countdown"; }
    grep -q "^iofleet: going on without 1 agent" "$T/tty.screen" || { cat "$T/tty.screen"; fail "no left-out line"; }
    ok "on a terminal: one countdown line, redrawn down to 1s, then the left-out agent named"
else
    echo "tmux not installed: the terminal's countdown not checked"
fi
