# SPDX-License-Identifier: Apache-2.0
# Different workloads at once (Iometer's per-worker assignment): two worker
# groups with their own specs run on two loopback agents. Test 1 runs a 4k
# 70 % read random mix in group "oltp" beside a 64k sequential read in group
# "backup"; test 2 runs only "backup"'s second spec ("oltp"'s list ended:
# it idles). The GROUP rows of each test add up to ALL exactly (I/O and byte
# counts in the CSV and JSON; rates in the table), ALL = sum of NODE still
# holds, and each group's bytes per I/O show it ran its own spec.
source "$(dirname "$0")/lib/cluster.bash"

cl_start_agents 2 node

# burst/delay keep the workers from burning every core of a small machine.
plan groups.json <<'P'
{"name": "groups", "run": {"ramp": "200ms", "duration": "2s", "interval": "500ms"},
 "specs": [{"name": "4k-70r", "lines": [{"size": "4k", "read": 70, "random": 100,
                                          "burst": 32, "delay": "1ms"}]},
           {"name": "64k-seq-read", "lines": [{"size": "64k", "read": 100, "random": 0,
                                                "burst": 32, "delay": "1ms"}]},
           {"name": "8k-write", "lines": [{"size": "8k", "read": 0, "random": 100,
                                            "burst": 32, "delay": "1ms"}]}],
 "workers": [{"name": "oltp", "specs": ["4k-70r"], "nodes": ["*"], "count": 2,
              "engine": "null", "queue_depth": 4, "targets": [{"path": "oltp", "size": "1g"}]},
             {"name": "backup", "specs": ["64k-seq-read", "8k-write"], "nodes": ["*"],
              "engine": "null", "queue_depth": 2, "targets": [{"path": "bk", "size": "1g"}]}]}
P
expect_rc 0 "$IOFLEET" validate "$T/groups.json"
expect_in "$T/out" "test 2/2: spec position 1"
expect_in "$T/out" "  workers[0]: 'oltp' idle"

expect_rc 0 "$IOFLEET" run "$T/groups.json" "${CL_AGENT_ARGS[@]}" --wait 10 \
    --rows group,worker --csv "$T/g.csv" --json "$T/g.json"
out=$T/out
[ "$(grep -c '^== test' "$out")" = 2 ] || cl_fail "expected 2 result tables"
case "$(cl_header "$out" 1)" in *"== test 1/2: 4k-70r + 64k-seq-read "*) ;;
*) cl_fail "test 1 header: $(cl_header "$out" 1)" ;; esac
case "$(cl_header "$out" 2)" in *"== test 2/2: 8k-write "*) ;;
*) cl_fail "test 2 header: $(cl_header "$out" 2)" ;; esac
sums=$(cl_check_sums "$out") || { echo "$sums"; cl_fail "ALL, NODE and WORKER rows do not add up"; }

# The table: test 1 has both GROUP rows, test 2 only backup's; GROUP IOPS,
# read and write IOPS add up to ALL's (rates: to the table's 0.1 IOPS).
awk '
    function abs(x) { return x < 0 ? -x : x }
    function check() {
        if (!nt) return
        if (ng != want[nt]) { printf "test %d: %d GROUP rows, want %d\n", nt, ng, want[nt]; bad = 1 }
        for (f = 3; f <= 5; f++)
            if (abs(all[f] - grp[f]) > 0.5) { printf "test %d: ALL col %d %.1f != sum of GROUP %.1f\n", nt, f, all[f], grp[f]; bad = 1 }
    }
    BEGIN { want[1] = 2; want[2] = 1 }
    /^== test/ { check(); nt++; ng = 0; for (f = 3; f <= 5; f++) { all[f] = 0; grp[f] = 0 } }
    $1 == "ALL" { for (f = 3; f <= 5; f++) all[f] = $f }
    $1 == "GROUP" { ng++; for (f = 3; f <= 5; f++) grp[f] += $f
                    if (nt == 2 && $2 != "backup") { print "test 2: GROUP " $2; bad = 1 } }
    END { check(); exit bad }' "$out" || cl_fail "GROUP rows of the table do not add up to ALL"

# The CSV: exact counts. Columns by name from the header.
awk -F, '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    {
        t = $col["test"]; ty = $col["row_type"]; g = $col["group"]
        r = $col["read_ios"]; w = $col["write_ios"]; b = $col["bytes_read"] + $col["bytes_written"]
        if (ty == "ALL") { ar[t] = r; aw[t] = w; ab[t] = b }
        if (ty == "GROUP") { gr[t] += r; gw[t] += w; gb[t] += b; n[t]++
            if (r + w == 0) { print "test " t ": GROUP " g " did no I/O"; bad = 1 }
            bpio[t, g] = b / (r + w) }
        if (ty == "NODE") { nr[t] += r; nw[t] += w }
        if ((ty == "WORKER" || ty == "TARGET") && g == "") { print "test " t ": " ty " row without a group"; bad = 1 }
        if ((ty == "ALL" || ty == "NODE") && g != "") { print "test " t ": " ty " row with group " g; bad = 1 }
        if (ty == "WORKER") nwk[t, g]++
    }
    END {
        for (t = 1; t <= 2; t++) {
            if (gr[t] != ar[t] || gw[t] != aw[t] || gb[t] != ab[t]) {
                printf "test %d: GROUP reads %d writes %d bytes %d != ALL %d %d %d\n", t, gr[t], gw[t], gb[t], ar[t], aw[t], ab[t]; bad = 1 }
            if (nr[t] != ar[t] || nw[t] != aw[t]) { printf "test %d: NODE sums differ from ALL\n", t; bad = 1 }
        }
        if (n[1] != 2 || n[2] != 1) { printf "GROUP rows: %d and %d, want 2 and 1\n", n[1], n[2]; bad = 1 }
        if (bpio[1, "oltp"] != 4096) { print "test 1: oltp bytes per I/O " bpio[1, "oltp"]; bad = 1 }
        if (bpio[1, "backup"] != 65536) { print "test 1: backup bytes per I/O " bpio[1, "backup"]; bad = 1 }
        if (bpio[2, "backup"] != 8192) { print "test 2: backup bytes per I/O " bpio[2, "backup"]; bad = 1 }
        if (nwk[1, "oltp"] != 4 || nwk[1, "backup"] != 2 || nwk[2, "oltp"] != 0 || nwk[2, "backup"] != 2) {
            print "WORKER rows per group: " nwk[1, "oltp"] " " nwk[1, "backup"] " " nwk[2, "oltp"] " " nwk[2, "backup"]; bad = 1 }
        exit bad
    }' "$T/g.csv" || cl_fail "the CSV's GROUP rows do not add up to ALL"

# The JSON: the same rows, GROUP with its group name.
python3 - "$T/g.json" <<'PY' || cl_fail "the JSON's GROUP rows do not add up to ALL"
import json, sys
d = json.load(open(sys.argv[1]))
for t in d["tests"]:
    rows = t["results"]
    allr = [r for r in rows if r["row_type"] == "ALL"][0]
    grp = [r for r in rows if r["row_type"] == "GROUP"]
    for k in ("read_ios", "write_ios", "bytes_read", "bytes_written"):
        if sum(r[k] for r in grp) != allr[k]:
            sys.exit("test %d: GROUP %s do not add up to ALL" % (t["index"], k))
    names = [r["group"] for r in grp]
    want = ["oltp", "backup"] if t["index"] == 1 else ["backup"]
    if names != want:
        sys.exit("test %d: GROUP rows %s, want %s" % (t["index"], names, want))
PY
ok "two groups, two specs at once: $sums"
cl_done
