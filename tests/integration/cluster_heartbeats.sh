# SPDX-License-Identifier: Apache-2.0
# Heartbeats only where they buy something: a relay between a manager and a
# real agent (lib/frame_count.py) logs every frame of the session, and the
# frames written while a test streams stats are counted by direction.
# - The agent reports every interval, so it writes no heartbeat while it
#   does (any frame counts as one for the manager's silence rule).
# - The manager sends nothing else during a test, so its heartbeats keep
#   coming, one per heartbeat period of the session: 4 s with a 9 s limit
#   when both sides speak protocol 1.8 and the manager has no --heartbeat-ms
#   (its sparse offer), 3 s when either is of 1.5-1.7 (its 1.5 offer), 1 s
#   when either is older (IOF_PROTO_MINOR=4) or the manager sets 1000.
# - The dead-man rule: SIGSTOP the manager mid-test and every agent (a 1.8
#   one at 4 s with its 9 s limit, a 1.7 one at 3 s, a 1.4 one at 1 s) stops
#   its I/O within 10 s: at the limit after the manager's last frame.
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

# hb_of LOG: the period of the agent's last session, from its log.
hb_of() { sed -n "s/.*session with manager 'iofleet' (.*), heartbeat \([0-9]*\) ms\(, limit \([0-9]*\) ms\)\{0,1\}$/\1\3/p" "$1" | tail -n1; }

# check NAME PERIOD_MS AGENT_LOG [LIMIT_MS]: the session NAME agreed
# PERIOD_MS and LIMIT_MS (none: 3 periods; the agent's log), the agent wrote
# no heartbeat while it reported, the manager about one per period.
check() {
    local name=$1 period=$2 log=$3 limit=${4:-} nstats secs back out got lo hi
    got=$(hb_of "$log")
    [ "$got" = "$period$limit" ] ||
        cl_fail "$name: the session agreed '$got' (period, limit), expected $period ms${limit:+, limit $limit ms}"
    read -r nstats secs back out < <(count "$name")
    if [ "$nstats" -lt 10 ] || ! awk -v s="$secs" 'BEGIN { exit !(s >= 5) }'; then
        cl_fail "$name: the relay saw $nstats stats over $secs s: too few to judge ($(awk '{print $2, $3}' "$T/$name.frames" | sort | uniq -c | tr '\n' ';'))"
    fi
    [ "$back" -le 1 ] ||
        cl_fail "$name: the agent wrote $back heartbeats in $secs s while it sent $nstats stats (any frame counts as one: expected none)"
    # One per period, give or take one (the window's ends).
    lo=$(awk -v s="$secs" -v p="$period" 'BEGIN { n = int(s * 1000 / p) - 1; print n < 1 ? 1 : n }')
    hi=$(awk -v s="$secs" -v p="$period" 'BEGIN { print int(s * 1000 / p) + 2 }')
    if [ "$out" -lt "$lo" ] || [ "$out" -gt "$hi" ]; then
        cl_fail "$name: the manager wrote $out heartbeats in $secs s of a test (a period of $period ms: $lo..$hi)"
    fi
    ok "$name: period $period ms; while the agent streamed $nstats stats over $secs s: $back heartbeats from it, $out from the manager"
}

cl_start_agent node-new
IOF_PROTO_MINOR=4 cl_start_agent node-old
IOF_PROTO_MINOR=7 cl_start_agent node-mid

# --- 1.8 on both sides: the manager's sparse offer, 4 s with a 9 s limit -----------------
session new 0
check new 4000 "${CL_LOGS[0]}" 9000
# --- an agent of 1.7 takes the 1.5 offer, 3 s ----------------------------------------------
session mid-agent 2
check mid-agent 3000 "${CL_LOGS[2]}"
# --- a manager of 1.7 makes no sparse offer: 3 s -------------------------------------------
IOF_PROTO_MINOR=7 session mid-manager 0
check mid-manager 3000 "${CL_LOGS[0]}"
# --- an agent of 1.4 keeps 1 s ------------------------------------------------------------
session old-agent 1
check old-agent 1000 "${CL_LOGS[1]}"
# --- a manager of 1.4 makes no offer: 1 s --------------------------------------------------
IOF_PROTO_MINOR=4 session old-manager 0
check old-manager 1000 "${CL_LOGS[0]}"
# --- a manager's own period is no offer: what it asks for --------------------------------
session set 0 --heartbeat-ms 1000
check set 1000 "${CL_LOGS[0]}"

# --- a silent manager: every agent stops its I/O within 10 s ------------------------------
plan long.json <<'P'
{"name": "hb-silent", "run": {"ramp": "0s", "duration": "60s", "interval": "500ms"},
 "specs": [{"name": "spin", "lines": [{"size": "4k", "read": 100}]}],
 "workers": [{"count": 1, "engine": "null", "queue_depth": 4, "targets": [{"path": "n", "size": "64m"}]}]}
P
hz=$(getconf CLK_TCK)
# busy_pct PID SECONDS: the process's CPU use over SECONDS, in % of one core.
busy_pct() {
    local a b t0 t1
    a=$(cl_cpu_ticks "$1")
    t0=$(cl_now_ms)
    sleep "$2"
    b=$(cl_cpu_ticks "$1")
    t1=$(cl_now_ms)
    echo $(((b - a) * 100 * 1000 / hz / (t1 - t0)))
}
lost="manager 'iofleet' lost (no message or heartbeat for "
cl_spawn mgr "$T/silent.out" "$T/silent.err" "$IOFLEET" run "$T/long.json" "${CL_AGENT_ARGS[@]}" --wait 10
cl_wait_log_count "$T/silent.err" "[run] test 1/1" 3 10
for i in 0 1 2; do
    b=$(busy_pct "${CL_PIDS[$i]}" 0.3)
    [ "$b" -ge 5 ] || cl_fail "${CL_NAMES[$i]} used only $b% CPU while running: the check below would prove nothing"
done
kill -STOP "$mgr"
t0=$(cl_now_ms)
# All logs polled together: each agent's own time.
dt=("" "" "")
while [ -z "${dt[0]}" ] || [ -z "${dt[1]}" ] || [ -z "${dt[2]}" ]; do
    for i in 0 1 2; do
        if [ -z "${dt[i]}" ] && grep -qF "$lost" "${CL_LOGS[$i]}"; then dt[i]=$(($(cl_now_ms) - t0)); fi
    done
    [ $(($(cl_now_ms) - t0)) -lt $((30000 * CL_WAIT_SCALE)) ] ||
        cl_fail "not every agent noticed its silent manager within $((30 * CL_WAIT_SCALE)) s (${dt[*]} ms)"
    sleep 0.02
done
# The reason each gives: the 1.8 session's own limit, 3 periods on the others.
why=("(the limit, 9.0 s, at a heartbeat every 4.0 s)): stopping all I/O"
    "(3 heartbeats missed)): stopping all I/O" "(3 heartbeats missed)): stopping all I/O")
for i in 0 1 2; do
    grep -F "$lost" "${CL_LOGS[$i]}" | tail -n1 | grep -qF "${why[i]}" ||
        cl_fail "${CL_NAMES[$i]}: $(grep -F "$lost" "${CL_LOGS[$i]}" | tail -n1)"
done
# node-new: its 9 s limit after the manager's last heartbeat, which came at
# most 4 s before the signal (the limit alone says at least 5 s); node-mid:
# 3 periods of 3 s, the last heartbeat at most 3 s before (at least 6 s):
# never past 10 s, and more than a 1 s period would allow.
for i in 0 1 2; do
    [ "${dt[i]}" -le 10000 ] || cl_fail "${CL_NAMES[$i]} stopped ${dt[i]} ms after the manager went silent, over 10 s"
done
[ "${dt[0]}" -ge 4500 ] || cl_fail "node-new stopped ${dt[0]} ms after the manager went silent: not a 9 s limit"
[ "${dt[2]}" -ge 5500 ] || cl_fail "node-mid stopped ${dt[2]} ms after the manager went silent: not a 3 s period"
for i in 0 1 2; do
    b=$(busy_pct "${CL_PIDS[$i]}" 1)
    [ "$b" -lt 5 ] || cl_fail "${CL_NAMES[$i]} still uses $b% CPU after its manager went silent"
done
kill -KILL "$mgr"
cl_wait_exit "$mgr" 5 rc
ok "a silent manager: node-new (4 s period, 9 s limit) stopped its I/O after ${dt[0]} ms, node-mid (3 s) after ${dt[2]} ms, node-old (1 s) after ${dt[1]} ms"

cl_done
