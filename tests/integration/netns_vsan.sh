# SPDX-License-Identifier: Apache-2.0
# Multi-host run: 5 network namespaces on a bridge (198.18.0.0/24), one dynamo
# per namespace on its own loop device (/dev/shm), the manager in the hub
# namespace, running the vSAN IOMeter spec "4K 70% read 100% random"
# (shared/seeds/003): 5 NODE rows, ALL = sum of NODE, ~70 % reads, start skew.
# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck source=lib/common.bash
source "$(dirname "$0")/lib/common.bash"
# shellcheck source=lib/netns.bash
source "$(dirname "$0")/lib/netns.bash"

NODES=5
PORT=7066
DYNAMO=$IOF_BIN/dynamo
{ [ -x "$IOFLEET" ] && [ -x "$DYNAMO" ]; } || fail "binaries not found in $IOF_BIN"
command -v timeout >/dev/null || skip "timeout (coreutils) not installed"

netns_setup "$NODES" 256 # skips (77) when not root or without netns support
echo "namespaces ${NETNS_HUB} + ${NETNS_NS[*]}, loop devices ${NETNS_LOOP[*]}"

agents=()
for ((k = 1; k <= NODES; k++)); do
    mkdir -p "$T/work$k"
    netns_bg "$k" "$T/dynamo$k.log" timeout -k 5 50 "$DYNAMO" \
        --listen "${NETNS_ADDR[k]}:$PORT" --name "node$k" --allow "${NETNS_LOOP[k]}" \
        --workdir "$T/work$k" --insecure >/dev/null
    agents+=(--agent "${NETNS_ADDR[k]}:$PORT")
done
for ((k = 1; k <= NODES; k++)); do
    netns_wait_port "$k" "$PORT" 10 || { cat "$T/dynamo$k.log" >&2; fail "dynamo node$k did not listen"; }
done

# One worker group per node: each node has its own loop device path.
groups=''
for ((k = 1; k <= NODES; k++)); do
    groups+="${groups:+,
}  {\"nodes\": [\"node$k\"], \"count\": 1, \"engine\": \"libaio\", \"queue_depth\": 16,
   \"targets\": [{\"path\": \"${NETNS_LOOP[k]}\"}], \"pattern\": \"random\", \"seed\": $k}"
done
plan vsan.json <<P
{"name": "vsan-4k-70-30",
 "run": {"ramp": "500ms", "duration": "3s", "interval": "500ms"},
 "specs": [{"name": "4K 70% read 100% random",
            "lines": [{"size": "4k", "share": 100, "read": 70, "random": 100,
                       "align": "4k", "delay": "0ms", "burst": 1}]}],
 "workers": [
$groups]}
P

# The manager runs in the hub namespace (198.18.0.1), bounded in time; run
# in the background so an INT/TERM to this script is handled at once.
run_manager() {
    local mgr
    rc=0
    ip netns exec "$NETNS_HUB" timeout -k 5 40 "$IOFLEET" run "$T/vsan.json" "${agents[@]}" \
        --insecure "$@" >"$T/out" 2>"$T/err" &
    mgr=$!
    NETNS_PIDS+=("$mgr") # killed by the teardown if we are interrupted
    wait "$mgr" || rc=$?
    netns_forget "$mgr"
}
# With --csv for the exact I/O counts; a build whose CLI refuses --csv before
# anything runs (result writers not there yet) is run again without it.
csv=1
run_manager --csv "$T/vsan.csv"
if [ "$rc" = 2 ] && grep -q -- '--csv is not available' "$T/err"; then
    csv=''
    run_manager
fi
show() { echo "--- stdout"; cat "$T/out"; echo "--- stderr"; cat "$T/err"; }
[ "$rc" = 0 ] || { show; for f in "$T"/dynamo*.log; do echo "--- $f"; cat "$f"; done; fail "iofleet run exited $rc"; }
cat "$T/out"

# Header: "== test 1/1: ... (5 nodes, start skew X ms)"
hdr=$(grep -m1 '^== test' "$T/out") || { show; fail "no test header"; }
grep -qF "5 nodes" <<<"$hdr" || { show; fail "header does not say 5 nodes: $hdr"; }
skew=$(sed -n 's/.*start skew \([0-9.]*\) ms.*/\1/p' <<<"$hdr")
[ -n "$skew" ] || { show; fail "no start skew in the header: $hdr"; }
awk -v s="$skew" 'BEGIN { exit !(s < 50) }' || fail "start skew $skew ms >= 50 ms"
ok "header: $hdr"

# Exactly the 5 NODE rows node1..node5.
names=$(awk '$1=="NODE"{print $2}' "$T/out" | sort | tr '\n' ' ')
want=$(for ((k = 1; k <= NODES; k++)); do echo "node$k"; done | sort | tr '\n' ' ')
[ "$names" = "$want" ] || { show; fail "NODE rows '$names', expected '$want'"; }
ok "NODE rows: $names"

# Table columns: row name IOPS read write MiB/s avg p50 p99 p99.9 max errors
# ALL IOPS = sum of NODE IOPS (printed values, rounding), reads ~70 %, no errors.
awk -v n="$NODES" '
    $1 == "ALL"  { all = $3; rd = $4; wr = $5; err = $12; na++ }
    $1 == "NODE" { sum += $3; srd += $4; swr += $5; nerr += $12
                   if ($3 <= 0) { printf "node %s did no I/O\n", $2; bad = 1 } }
    END {
        if (na != 1) { print "expected 1 ALL row, got " na; exit 1 }
        tol = 0.05 * n + 1e-6 * all   # printed with 1 decimal per row
        if (all <= 0) { print "ALL IOPS is " all; bad = 1 }
        if (sum - all > tol || all - sum > tol) { printf "ALL IOPS %s != sum of NODE IOPS %.1f\n", all, sum; bad = 1 }
        if (srd - rd > tol || rd - srd > tol) { printf "ALL read %s != sum of NODE read %.1f\n", rd, srd; bad = 1 }
        if (swr - wr > tol || wr - swr > tol) { printf "ALL write %s != sum of NODE write %.1f\n", wr, swr; bad = 1 }
        if (rd + wr - all > tol || all - rd - wr > tol) { printf "ALL read+write %s+%s != IOPS %s\n", rd, wr, all; bad = 1 }
        share = all > 0 ? rd / all : 0
        if (share < 0.68 || share > 0.72) { printf "read share %.4f outside 0.68..0.72\n", share; bad = 1 }
        if (err != 0 || nerr != 0) { printf "errors: ALL %s, NODE sum %s\n", err, nerr; bad = 1 }
        printf "ALL %s IOPS = sum of NODE %.1f; read share %.4f; errors %s\n", all, sum, share, err
        exit bad
    }' "$T/out" || { show; fail "cluster figures do not add up"; }
ok "aggregation: $(awk '$1=="ALL"{print $3 " IOPS, " $4 " read, " $5 " write"}' "$T/out")"

# Exact counts in the CSV: ALL read_ios/write_ios = sum over NODE rows.
if [ -n "$csv" ]; then
    [ -s "$T/vsan.csv" ] || fail "--csv $T/vsan.csv was accepted but not written"
    awk -F, '
        NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $c["row_type"] == "ALL"  { ar = $c["read_ios"]; aw = $c["write_ios"]; na++ }
        $c["row_type"] == "NODE" { sr += $c["read_ios"]; sw += $c["write_ios"]; nn++ }
        END {
            if (na != 1 || nn != 5) { print "CSV: " na " ALL and " nn " NODE rows"; exit 1 }
            if (ar != sr || aw != sw) { printf "CSV: ALL %d/%d I/Os != NODE sum %d/%d\n", ar, aw, sr, sw; exit 1 }
        }' "$T/vsan.csv" || { cat "$T/vsan.csv"; fail "CSV counts do not add up"; }
    ok "CSV: ALL read_ios/write_ios = sum of NODE rows exactly"
else
    echo "note: --csv not available in this build: exact CSV counts not checked"
fi

# No error, lost agent or failure on stderr; every live line with all 5 agents.
grep -vE '^\[' "$T/err" | grep -qiE 'error|lost|fail|refused|timeout' && { show; fail "errors reported on stderr"; }
grep -oE 'agents [0-9]+/[0-9]+' "$T/err" | grep -vqx "agents $NODES/$NODES" &&
    { show; fail "a live interval line shows fewer than $NODES agents"; }
ok "5-node vSAN 4K 70/30 random over $NETNS_HUB"
