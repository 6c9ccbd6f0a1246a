# SPDX-License-Identifier: Apache-2.0
# A target that starts failing mid-run.
# Agent n1 reads two block devices with one worker: BAD and GOOD; agent n2
# reads a third, OTHER. ~2 s into the test BAD starts failing every I/O past
# a point:
#  - device-mapper (preferred): BAD is a dm `linear` table over a loop device,
#    reloaded to an `error` table mid-run (dmsetup reload + resume);
#  - otherwise (no dmsetup, or no dm driver in the kernel): BAD is a loop
#    device whose backing file is truncated to a quarter mid-run, so reads past
#    the new end fail with EIO.
# IOF_FAULT_IO_MODE=dm|truncate forces one (dm skips when it cannot work).
# Expected: errors counted on BAD's TARGET row (errors, read_errors in --csv),
# stderr names node, target, error count, first error text and offset; the
# test runs to its end; exit 1; GOOD and OTHER keep their numbers (no errors,
# I/O in every interval after the fault).
# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck source=lib/common.bash
source "$(dirname "$0")/lib/common.bash"
# The first cleanup hook: a second INT/TERM must not cut the cleanup short.
iof_on_exit "trap '' INT TERM"
# shellcheck source=lib/cluster.bash
source "$(dirname "$0")/lib/cluster.bash"
# INT/TERM (a ctest timeout) end the script at once, so the EXIT cleanup runs.
trap 'echo "interrupted" >&2; exit 130' INT
trap 'echo "terminated" >&2; exit 143' TERM

[ "$(id -u)" = 0 ] || skip "needs root for loop devices (and device-mapper)"
for cmd in losetup truncate fallocate; do
    command -v "$cmd" >/dev/null || skip "'$cmd' not installed (util-linux / coreutils)"
done
command -v python3 >/dev/null || skip "python3 not installed (reads the --json file)"

SIZE_MIB=64
mode=${IOF_FAULT_IO_MODE:-}
dm_works() {
    command -v dmsetup >/dev/null && [ -e /dev/mapper/control ] &&
        timeout 10 dmsetup version 2>/dev/null | grep -q '^Driver version'
}
if [ -z "$mode" ]; then
    if dm_works; then mode=dm; else mode=truncate; fi
elif [ "$mode" = dm ]; then
    dm_works || skip "IOF_FAULT_IO_MODE=dm, but dmsetup or the kernel's device-mapper is not available"
elif [ "$mode" != truncate ]; then
    fail "IOF_FAULT_IO_MODE must be dm or truncate, got '$mode'"
fi

# --- devices: three loop devices on files in a private /dev/shm directory ------------------
SHM=$(mktemp -d /dev/shm/iof-fault-io.XXXXXX)
LOOPS=()
DM_NAME=''
cleanup_dm() {
    local i
    [ -n "$DM_NAME" ] && timeout 10 dmsetup info "$DM_NAME" >/dev/null 2>&1 || return 0
    for ((i = 0; i < 20; i++)); do
        timeout 10 dmsetup remove "$DM_NAME" >/dev/null 2>&1 && break
        sleep 0.1
    done
    timeout 10 dmsetup info "$DM_NAME" >/dev/null 2>&1 && echo "cannot remove device-mapper $DM_NAME" >&2
    return 0
}
cleanup_devices() {
    local dev i
    cleanup_dm
    # The loop devices we attached, and any other still backed by our files.
    for dev in "${LOOPS[@]}" $(losetup -n -O NAME -j "$SHM/bad.img" 2>/dev/null) \
        $(losetup -n -O NAME -j "$SHM/good.img" 2>/dev/null) $(losetup -n -O NAME -j "$SHM/other.img" 2>/dev/null); do
        [ -b "$dev" ] || continue
        losetup -n -O BACK-FILE "$dev" 2>/dev/null | grep -qF -- "$SHM/" || continue
        for ((i = 0; i < 20; i++)); do
            losetup -d "$dev" 2>/dev/null && break
            sleep 0.1
        done
    done
    rm -rf -- "$SHM"
}
# Registered after cluster.bash's hook: the agents are stopped before their
# devices go away.
iof_on_exit cleanup_devices
attach() { # NAME -> the loop device
    local out
    fallocate -l "${SIZE_MIB}M" "$SHM/$1.img" 2>/dev/null || truncate -s "${SIZE_MIB}M" "$SHM/$1.img"
    out=$(timeout 30 losetup --find --show -- "$SHM/$1.img" 2>&1) || skip "cannot attach a loop device: $out"
    LOOPS+=("$out")
    echo "$out"
}
bad_loop=$(attach bad)
good=$(attach good)
other=$(attach other)
sectors=$((SIZE_MIB * 2048))
if [ "$mode" = dm ]; then
    DM_NAME=iof-fault-io-$$-$RANDOM
    if ! out=$(timeout 10 dmsetup create "$DM_NAME" --table "0 $sectors linear $bad_loop 0" 2>&1); then
        cleanup_dm # a create cut short by the timeout may have left it
        DM_NAME=''
        [ -n "${IOF_FAULT_IO_MODE:-}" ] && skip "dmsetup create failed: $out"
        echo "note: dmsetup create failed ($out): using a truncated loop device instead"
        mode=truncate
    fi
fi
if [ "$mode" = dm ]; then
    timeout 10 udevadm settle 2>/dev/null || true
    bad=/dev/mapper/$DM_NAME
    for ((i = 0; i < 50; i++)); do [ -b "$bad" ] && break; sleep 0.1; done
    [ -b "$bad" ] || fail "no $bad after dmsetup create"
else
    bad=$bad_loop
fi
echo "mode $mode: BAD $bad, GOOD $good (n1), OTHER $other (n2)"

cl_start_agent n1 --allow "$bad" --allow "$good"
cl_start_agent n2 --allow "$other"

# Reads only (a write past the end of a truncated backing file would extend
# it again); rate-capped so parallel tests share the CPU.
line='{"size": "4k", "read": 100, "random": 100, "align": "4k", "burst": 8, "delay": "1ms"}'
plan p.json <<P
{"name": "io-errors", "run": {"ramp": "500ms", "duration": "5s", "interval": "500ms"},
 "specs": [{"name": "4k-read", "lines": [$line]}],
 "workers": [
  {"nodes": ["n1"], "engine": "libaio", "queue_depth": 4, "targets": [{"path": "$bad"}, {"path": "$good"}]},
  {"nodes": ["n2"], "engine": "libaio", "queue_depth": 4, "targets": [{"path": "$other"}]}]}
P

mgr=''
cl_spawn mgr "$T/m.out" "$T/m.err" "$IOFLEET" run "$T/p.json" "${CL_AGENT_ARGS[@]}" --wait 10 \
    --csv "$T/r.csv" --timeseries "$T/ts.csv" --json "$T/r.json"
t_start=$(cl_now_ms)
cl_wait_log_count "$T/m.err" "[run] test 1/1" 4 20 # ~2 s in: 4 intervals of 0.5 s measured
# The interval the fault falls in: the last one printed, plus one.
fault_iv=$(grep -c '^\[run\] test 1/1' "$T/m.err")
if [ "$mode" = dm ]; then
    timeout 10 dmsetup reload "$DM_NAME" --table "0 $sectors error" || cl_fail "dmsetup reload failed"
    timeout 10 dmsetup resume "$DM_NAME" || cl_fail "dmsetup resume failed"
    cut=0
else
    cut=$((SIZE_MIB * 1024 * 1024 / 4))
    truncate -s "$cut" "$SHM/bad.img"
fi
ok "$bad fails from now on ($mode), after interval $fault_iv"
cl_wait_exit "$mgr" 30 rc
t_end=$(cl_now_ms)
out=$T/m.out err=$T/m.err
[ "$rc" = 1 ] || cl_fail "iofleet run exited $rc after I/O errors, expected 1"
cat "$out"
# The run went on to its end: the whole window measured, every interval printed.
[ $((t_end - t_start)) -ge 5500 ] || cl_fail "run ended after $((t_end - t_start)) ms, before the test's end"
case "$(cl_header "$out")" in *"measured 5.000 s  2 nodes"*) ;; *) cl_fail "header: $(cl_header "$out")" ;; esac
[ "$(grep -c '^\[run\] test 1/1' "$err")" = 10 ] || cl_fail "expected 10 live lines"
grep -q 'lost' "$err" && cl_fail "an agent was reported lost"

# stderr: node, target, count, first error text and offset.
msg=$(grep -F "iofleet: node n1: target $bad: " "$err") || cl_fail "stderr does not name node n1 and target $bad"
[ "$(grep -c ' I/O errors, first at offset ' "$err")" = 1 ] || cl_fail "expected exactly one I/O error line (only $bad fails)"
nerr=$(sed -n 's/.*: \([0-9][0-9]*\) I\/O errors, first at offset \([0-9][0-9]*\): \(.*\)$/\1/p' <<<"$msg")
off=$(sed -n 's/.* I\/O errors, first at offset \([0-9][0-9]*\): .*$/\1/p' <<<"$msg")
text=$(sed -n 's/.* I\/O errors, first at offset [0-9][0-9]*: \(.*\)$/\1/p' <<<"$msg")
if [ -z "$nerr" ] || [ -z "$off" ] || [ -z "$text" ]; then cl_fail "unexpected error line: $msg"; fi
[ "$nerr" -gt 0 ] || cl_fail "error count $nerr"
case "$text" in *"Input/output error"* | *EIO*) ;; *) cl_fail "first error text '$text', expected EIO" ;; esac
if [ "$off" -lt "$cut" ] || [ "$off" -ge $((SIZE_MIB * 1024 * 1024)) ] || [ $((off % 4096)) != 0 ]; then
    cl_fail "first error offset $off outside [$cut, end of device) or not 4k-aligned"
fi
ok "stderr: $msg"

# --csv: BAD's TARGET row holds the errors (reads only), the others none.
awk -F, -v bad="$bad" -v good="$good" -v other="$other" -v nerr="$nerr" '
    NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i
              split("errors read_errors write_errors target row_type node iops read_ios", need, " ")
              for (k in need) if (!(need[k] in c)) { print "no column " need[k]; bad_ = 1 }
              next }
    { e = $c["errors"]; re = $c["read_errors"]; we = $c["write_errors"]; rt = $c["row_type"]; tg = $c["target"] }
    e != re + we { printf "%s %s %s: errors %s != read_errors %s + write_errors %s\n", rt, $c["node"], tg, e, re, we; bad_ = 1 }
    rt == "ALL"    { all = e }
    rt == "NODE"   { nodes += e; if ($c["node"] == "n2" && e != 0) { print "NODE n2 has errors"; bad_ = 1 } }
    rt == "TARGET" { targets += e
        if (tg == bad) { seen_b = 1
            if (e != nerr) { printf "TARGET %s: %s errors, stderr said %s\n", bad, e, nerr; bad_ = 1 }
            if (re <= 0 || we != 0) { printf "TARGET %s: read_errors %s write_errors %s\n", bad, re, we; bad_ = 1 } }
        else if (tg == good || tg == other) { seen[tg] = 1
            if (e != 0) { printf "TARGET %s: %s errors\n", tg, e; bad_ = 1 }
            if ($c["iops"] <= 0 || $c["read_ios"] <= 0) { printf "TARGET %s: no I/O\n", tg; bad_ = 1 } }
        else { printf "unexpected TARGET %s\n", tg; bad_ = 1 } }
    END {
        if (!seen_b || !seen[good] || !seen[other]) { print "missing TARGET rows"; bad_ = 1 }
        if (all != nodes || all != targets || all != nerr) { printf "errors: ALL %s, NODE sum %s, TARGET sum %s, stderr %s\n", all, nodes, targets, nerr; bad_ = 1 }
        exit bad_
    }' "$T/r.csv" || { cat "$T/r.csv"; cl_fail "--csv error columns wrong"; }
ok "--csv: TARGET $bad errors=read_errors=$nerr, write_errors=0; $good and $other 0; ALL = sum NODE = sum TARGET"

# --timeseries: n2 (OTHER only) keeps its rate after the fault, without errors;
# n1 has errors only from the fault's interval on.
awk -F, -v f="$fault_iv" '
    NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { iv = $c["interval"] + 0; n = $c["node"]; e = $c["errors"]; io = $c["iops"] }
    n == "n2" { if (e != 0) { printf "n2 interval %d: %s errors\n", iv, e; bad = 1 }
                if (io <= 0) { printf "n2 interval %d: no I/O\n", iv; bad = 1 }
                if (iv < f) { sb += io; nb++ } else if (iv > f + 1) { sa += io; na++ } }
    n == "n1" { if (e > 0 && iv < f) { printf "n1 interval %d: errors before the fault\n", iv; bad = 1 }
                if (e > 0) ne++ }
    END {
        if (!nb || !na) { print "too few n2 intervals"; exit 1 }
        if (!ne) { print "no n1 interval with errors"; bad = 1 }
        printf "n2 IOPS: %.0f before the fault, %.0f after (mean)\n", sb / nb, sa / na
        if (sa / na < 0.3 * sb / nb) { print "n2 lost most of its rate after the fault on n1"; bad = 1 }
        exit bad
    }' "$T/ts.csv" || { cat "$T/ts.csv"; cl_fail "--timeseries figures wrong"; }
# --json: the TARGET row carries the first error (code, message, offset).
python3 - "$T/r.json" "$bad" "$nerr" "$off" <<'PY' || cl_fail "--json first_error wrong"
import json, sys
d = json.load(open(sys.argv[1]))
bad, nerr, off = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
assert d["run"]["exit_code"] == 1, d["run"]
rows = d["tests"][0]["results"]
for r in rows:
    fe = r["first_error"]
    if r["row_type"] == "TARGET" and r["target"] == bad:
        assert r["errors"] == nerr and r["read_errors"] == nerr, r
        assert fe and fe["code"] == "EIO" and fe["offset"] == off, fe
    elif r["row_type"] == "TARGET":
        assert r["errors"] == 0 and fe is None, r
print("json: first_error of %s: %s" % (bad, [r["first_error"] for r in rows if r["target"] == bad][0]))
PY
ok "I/O errors on $bad: counted, named, run to the end ($((t_end - t_start)) ms), exit 1"
cl_done
