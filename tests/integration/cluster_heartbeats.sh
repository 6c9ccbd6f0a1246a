# SPDX-License-Identifier: Apache-2.0
# Heartbeats only where they buy something: a relay between a manager and a
# real agent (lib/frame_count.py) logs every frame of the session, and the
# frames written while a test streams stats are counted by direction.
# - The agent reports every interval, so it writes no heartbeat while it
#   does (any frame counts as one for the manager's silence rule).
# - The manager sends nothing else during a test, so its heartbeats keep
#   coming, one per heartbeat period of the session.
source "$(dirname "$0")/lib/cluster.bash"

command -v python3 >/dev/null || skip "python3 runs the frame-counting relay"

plan p.json <<'P'
{"name": "hb", "run": {"ramp": "0s", "duration": "7s", "interval": "500ms"},
 "specs": [{"name": "slow", "lines": [{"size": "4k", "burst": 1, "delay": "5ms"}]}],
 "workers": [{"count": 1, "engine": "null", "targets": [{"path": "n", "size": "1m"}]}]}
P

# session NAME AGENT_INDEX [IOFLEET ARGS...]: runs the plan with the agent
# through a frame-counting relay; the frames in $T/NAME.frames.
session() {
    local name=$1 i=$2 rport relay
    shift 2
    rport=$(cl_random_port)
    cl_spawn relay "$T/$name.relay.out" "$T/$name.relay.err" python3 \
        "$(dirname "$0")/lib/frame_count.py" "$rport" "${CL_PORTS[$i]}" "$T/$name.frames"
    cl_wait_log "$T/$name.relay.out" listening 10
    expect_rc 0 "$IOFLEET" run "$T/p.json" --insecure --agent "127.0.0.1:$rport" --wait 10 --quiet "$@"
    cl_stop "$relay"
}

# count NAME: "STATS SECONDS BACK_HB OUT_HB" over the time the agent
# streamed stats (its first to its last report): its reports, the window's
# length, the heartbeats the agent wrote and those the manager wrote.
count() {
    awk '$3 == "stats" && $2 == "back" { if (!n++) t0 = $1; t1 = $1 }
         { t[NR] = $1; d[NR] = $2; y[NR] = $3 }
         END { for (k = 1; k <= NR; k++)
                   if (y[k] == "heartbeat" && t[k] >= t0 && t[k] <= t1) { if (d[k] == "back") b++; else o++ }
               printf "%d %.1f %d %d\n", n, (t1 - t0) / 1000, b, o }' "$T/$1.frames"
}

cl_start_agent node-1

# --- the agent's heartbeats stop while it reports -----------------------------
session plain 0
read -r nstats secs back out < <(count plain)
if [ "$nstats" -lt 10 ] || ! awk -v s="$secs" 'BEGIN { exit !(s >= 5) }'; then
    cl_fail "the relay saw $nstats stats over $secs s: too few to judge ($(awk '{print $2, $3}' "$T/plain.frames" | sort | uniq -c | tr '\n' ';'))"
fi
[ "$back" -le 1 ] ||
    cl_fail "the agent wrote $back heartbeats in $secs s while it sent $nstats stats (any frame counts as one: expected none)"
# A period of 1 s: a heartbeat from the manager every second, give or take one.
if [ "$out" -lt 3 ] || [ "$out" -gt 8 ]; then
    cl_fail "the manager wrote $out heartbeats in $secs s of a test (a period of 1 s: about one a second)"
fi
ok "while the agent streamed $nstats stats over $secs s: $back heartbeats from it, $out from the manager"

cl_done
