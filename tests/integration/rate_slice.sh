# SPDX-License-Identifier: Apache-2.0
# A rated worker asks the scheduler for a short slice (dynamo/run.c,
# docs/workloads.md "Rates"): on a kernel whose fair scheduler takes a slice
# request (Linux 6.12+), a waking rated worker preempts a longer-slice task
# instead of waiting up to a whole slice for the CPU, time it would report
# as its own lateness. Real binaries: one rated group of 2 workers and one
# unrated worker on a file. While the test runs, dynamo's threads are named
# "worker N" and /proc/PID/task/TID/sched gives each one's slice:
#   - 3 worker threads, named by their index;
#   - the rated workers' slice is 100 us (100000 ns), the unrated one's the
#     kernel's default (not 100 us): the request is per rated worker only.
# On older kernels the slice line is absent or the request is refused:
# only the names are checked then.
source "$(dirname "$0")/lib/common.bash"

iof_start_agent a --name a
A=$AGENT_EP
DPID=$AGENT_PID

plan slice.json <<'P'
{"name": "slice", "run": {"ramp": "0s", "duration": "6s", "interval": "1s"},
 "specs": [{"name": "4k", "lines": [{"size": "4k", "read": 100, "random": 100}]}],
 "workers": [{"name": "rated", "engine": "sync", "count": 2, "queue_depth": 1,
              "targets": [{"path": "slice.dat", "size": "1m"}],
              "rate": {"iops": 200}},
             {"name": "free", "engine": "sync", "count": 1, "queue_depth": 1,
              "targets": [{"path": "slice2.dat", "size": "1m"}]}]}
P

"$IOFLEET" run "$T/slice.json" --insecure --agent "$A" --wait 10 >"$T/run.out" 2>"$T/run.err" &
RUN=$!
iof_on_exit "kill $RUN 2>/dev/null"

# Poll dynamo's threads until the three workers are there (bounded: 30 s).
declare -A slice=()
for _ in $(seq 600); do
    slice=()
    for d in /proc/"$DPID"/task/*; do
        comm=$(cat "$d/comm" 2>/dev/null) || continue
        [[ $comm == "worker "* ]] || continue
        s=$(awk '$1 == "se.slice" { print $3 }' "$d/sched" 2>/dev/null || true)
        slice[${comm#worker }]=${s:--}
    done
    ((${#slice[@]} >= 3)) && break
    kill -0 "$RUN" 2>/dev/null || break
    sleep 0.05
done
((${#slice[@]} == 3)) || fail "not 3 worker threads named 'worker N' in dynamo: ${!slice[*]}; $(cat "$T/run.err")"
for i in 0 1 2; do
    [[ -n ${slice[$i]:-} ]] || fail "no thread 'worker $i': ${!slice[*]}"
done
ok "dynamo's worker threads are named worker 0, worker 1, worker 2"

wait "$RUN" || fail "the run failed: $(cat "$T/run.err")"

read -r kmaj kmin _ <<<"$(uname -r | tr '.-' '  ')"
if [[ ${slice[0]} == - ]] || ((kmaj < 6 || (kmaj == 6 && kmin < 12))); then
    ok "kernel $(uname -r) takes no slice request: names only (slices ${slice[*]})"
    exit 0
fi
[[ ${slice[0]} == 100000 && ${slice[1]} == 100000 ]] ||
    fail "the rated workers' slices are ${slice[0]} and ${slice[1]} ns, not 100000"
[[ ${slice[2]} != 100000 ]] || fail "the unrated worker asked for a short slice too"
ok "rated workers' slices 100 us, the unrated worker's ${slice[2]} ns (the default)"
