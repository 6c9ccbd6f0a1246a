# SPDX-License-Identifier: Apache-2.0
# The agent's budget: a plan that needs more worker threads, I/O buffer
# memory or AIO events than the agent allows is refused at prepare, before
# anything is written, opened or started, with a message naming the limit
# and both numbers. The budget comes from the agent's own flags (or the
# host's free resources), never from the manager. A plan within it runs.
source "$(dirname "$0")/lib/cluster.bash"

cpus=$(getconf _NPROCESSORS_ONLN)

# refused NAME PLAN TEXT: the run fails with TEXT, nothing was created in the
# agent's workdir and the agent started no thread.
refused() {
    local what=$1 plan=$2 text=$3 wd=$4 pid=$5 threads
    expect_rc 1 "$IOFLEET" run "$T/$plan" --insecure --agent "$6" --wait 5
    expect_in "$T/err" "$text"
    [ ! -e "$wd/f.dat" ] || fail "$what: the test file was created before the refusal"
    threads=$(awk '/^Threads:/{print $2}' "/proc/$pid/status")
    [ "$threads" -le 8 ] || fail "$what: the agent has $threads threads after refusing"
    cl_alive "$pid" || fail "$what: the agent died"
    ok "$what: $(grep -F "$text" "$T/err" | head -n1)"
}

cl_start_agent capped --max-workers 4 --max-buffer-mem 64m --max-aio-events 100
cap_ep=127.0.0.1:${CL_PORTS[0]} cap_pid=${CL_PIDS[0]} cap_wd=${CL_WORKDIRS[0]}
cl_start_agent plain
def_ep=127.0.0.1:${CL_PORTS[1]} def_pid=${CL_PIDS[1]} def_wd=${CL_WORKDIRS[1]}

# 1. Threads: 5 workers against --max-workers 4.
plan workers5.json <<'P'
{"name": "w5", "run": {"duration": "1s"},
 "specs": [{"name": "r", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "sync", "count": 5, "targets": [{"path": "f.dat", "size": "1m"}]}]}
P
refused "--max-workers" workers5.json \
    "test 1 (spec 'r'): needs 5 worker threads, the agent's limit is 4 (--max-workers)" \
    "$cap_wd" "$cap_pid" "$cap_ep"

# 2. The default: 2 x 256 workers of one target (the most the loader allows
#    one node: 512 targets) against 8 x online CPUs.
if [ $((8 * cpus)) -lt 512 ]; then
    plan workers512.json <<'P'
{"name": "w512", "run": {"duration": "1s"},
 "specs": [{"name": "r", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "null", "count": 256, "targets": [{"path": "n", "size": "1m"}]},
             {"engine": "sync", "count": 256, "targets": [{"path": "f.dat", "size": "1m"}]}]}
P
    refused "default worker limit" workers512.json \
        "needs 512 worker threads, the agent's limit is $((8 * cpus)) (8 x $cpus online CPUs; raise it with dynamo --max-workers)" \
        "$def_wd" "$def_pid" "$def_ep"
else
    echo "ok: $cpus CPUs: the default worker limit ($((8 * cpus))) is not below the 512 workers a plan can ask of one node; not checked"
fi

# 3. Buffer memory: QD 64 x 16 MiB (+ the write source) against 64 MiB.
plan mem.json <<'P'
{"name": "mem", "run": {"duration": "1s"},
 "specs": [{"name": "big", "lines": [{"size": "16m"}]}],
 "workers": [{"engine": "sync", "queue_depth": 64, "pattern": "repeat",
              "targets": [{"path": "f.dat", "size": "64m"}]}]}
P
refused "--max-buffer-mem" mem.json \
    "needs 1.0 GiB of I/O buffers (queue depth x transfer size x workers), the agent's limit is 64.0 MiB (--max-buffer-mem)" \
    "$cap_wd" "$cap_pid" "$cap_ep"

# 4. The default memory limit: 16 workers x QD 4096 x 64 MiB is far beyond
#    any host's free memory (4 TiB).
plan memhost.json <<'P'
{"name": "memhost", "run": {"duration": "1s"},
 "specs": [{"name": "huge", "lines": [{"size": "64m"}]}],
 "workers": [{"engine": "sync", "count": 16, "queue_depth": 4096, "pattern": "repeat",
              "targets": [{"path": "f.dat", "size": "64m"}]}]}
P
refused "default memory limit" memhost.json \
    "(half of the memory free: MemAvailable and the cgroup limit)" "$def_wd" "$def_pid" "$def_ep"
expect_in "$T/err" "needs 4.0 TiB of I/O buffers"

# 5. AIO events: libaio QD 128 against --max-aio-events 100 ...
plan aio128.json <<'P'
{"name": "aio", "run": {"duration": "1s"},
 "specs": [{"name": "r", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "libaio", "queue_depth": 128, "targets": [{"path": "f.dat", "size": "1m"}]}]}
P
refused "--max-aio-events" aio128.json \
    "needs 128 AIO events (libaio queue depth x targets x workers), the agent's limit is 100 (--max-aio-events)" \
    "$cap_wd" "$cap_pid" "$cap_ep"

# ... and 15 workers x QD 4096 against what the host has free (the default).
aio_max=$(cat /proc/sys/fs/aio-max-nr) aio_nr=$(cat /proc/sys/fs/aio-nr)
plan aio61440.json <<'P'
{"name": "aio", "run": {"duration": "1s"},
 "specs": [{"name": "r", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "libaio", "count": 15, "queue_depth": 4096,
              "targets": [{"path": "f.dat", "size": "1m"}]}]}
P
if [ $((aio_max - aio_nr - aio_max / 8)) -lt 61440 ]; then
    refused "default AIO limit" aio61440.json \
        "needs 61440 AIO events (libaio queue depth x targets x workers), the agent's limit is" \
        "$def_wd" "$def_pid" "$def_ep"
    expect_in "$T/err" "(/proc/sys/fs/aio-max-nr - aio-nr, less 1/8 of aio-max-nr kept for the host)"
else
    echo "note: part 5b not run: this host has $((aio_max - aio_nr)) AIO events free (aio-max-nr $aio_max)"
fi

# 6. Within the budget, a plan runs (on the capped agent too).
plan fits.json <<'P'
{"name": "fits", "run": {"duration": "1s", "interval": "500ms"},
 "specs": [{"name": "r", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "null", "count": 4, "queue_depth": 4, "targets": [{"path": "n", "size": "1m"}]}]}
P
expect_rc 0 "$IOFLEET" run "$T/fits.json" --insecure --agent "$cap_ep" --wait 5 --json "$T/fits-json"
awk '$1=="ALL" && $3 > 0 {f=1} END{exit !f}' "$T/out" || fail "no I/O in the plan that fits"
ok "a plan within the budget runs"

# 7. The budget is visible: the agent's hello carries it, the JSON report
#    shows it per agent (flags, or what the host had free at the hello).
budget=$(jq -c '.agents[0].budget' "$T/fits-json")
[ "$(jq '.agents[0].budget.workers' "$T/fits-json")" = 4 ] &&
    [ "$(jq '.agents[0].budget.buffer_mem' "$T/fits-json")" = $((64 << 20)) ] &&
    [ "$(jq '.agents[0].budget.aio_events' "$T/fits-json")" = 100 ] &&
    [ "$(jq '.agents[0].budget.fds' "$T/fits-json")" -gt 0 ] ||
    fail "the JSON report does not show the agent's budget: $budget"
ok "the agent's budget is in its hello and the JSON report: $budget"

# 8. iofleet validate --agent shows the budget beside what the plan needs
#    on that node, before anything is sent to it.
expect_rc 1 "$IOFLEET" validate "$T/workers5.json" --insecure --agent "$cap_ep"
expect_in "$T/out" "agent capped ($cap_ep): the plan's largest test there needs, of the agent's budget:"
grep -qE "^  worker threads +5 of 4 +EXCEEDS$" "$T/out" || fail "validate: $(cat "$T/out")"
expect_in "$T/out" "does not fit: the agent will refuse this plan at prepare"
line=$(grep -E "worker threads" "$T/out" | tr -s ' ')
expect_rc 0 "$IOFLEET" validate "$T/fits.json" --insecure --agent "$cap_ep"
grep -qE "^  I/O buffer memory +[0-9.]+ KiB of 64.0 MiB +ok$" "$T/out" || fail "validate: $(cat "$T/out")"
expect_in "$T/out" "fits (as the agent's host stands now)"
if grep -q "dropped before its session started" "${CL_LOGS[0]}"; then
    fail "validate's probe left a warning in the agent's log: $(grep dropped "${CL_LOGS[0]}")"
fi
expect_rc 3 "$IOFLEET" validate "$T/fits.json" --insecure --agent 127.0.0.1:1 --wait 2
expect_in "$T/err" "iofleet: agent 127.0.0.1:1: cannot connect to 127.0.0.1:1"
ok "iofleet validate --agent:$line"

# 9. The flags are checked.
expect_rc 2 "$DYNAMO" --listen 127.0.0.1:0 --insecure --max-workers 0
expect_in "$T/err" "dynamo: --max-workers must be 1..1000000000, got '0'"
expect_rc 2 "$DYNAMO" --listen 127.0.0.1:0 --insecure --max-buffer-mem 4KBs
expect_in "$T/err" "dynamo: --max-buffer-mem must be a size like 512m or 4g, got '4KBs'"
ok "budget flags are checked"
cl_done
