# SPDX-License-Identifier: Apache-2.0
# --iometer-csv-append and --iometer-instant, read by a reader written to
# Iometer's own format (lib/iometer_read.py, not to ours): two runs appended
# to one results file, the first run's bytes untouched and both runs whole;
# a planted symbolic link at the name refused and not followed; the
# instantaneous file's TimeStamp-led rows, one per node per interval, adding
# up to the test's ALL row; the node's % DPC (softirq), % Interrupt (irq),
# interrupt and network columns numeric and consistent in both files, equal
# to the JSON's and CSV's node figures, and empty, not 0 (null in the JSON),
# from an agent of protocol 1.5.
source "$(dirname "$0")/lib/common.bash"
command -v python3 >/dev/null || skip "python3 not installed"
command -v jq >/dev/null || skip "jq not installed"
READ=$IOF_SRC/tests/integration/lib/iometer_read.py
cd "$T"

plan p.json <<'P'
{"name": "iometer files", "run": {"ramp": "0s", "duration": "2s", "interval": "500ms"},
 "specs": [{"name": "4k read", "lines": [{"size": "4k", "read": 100, "random": 100, "burst": 32, "delay": "1ms"}]},
           {"name": "64k write", "lines": [{"size": "64k", "read": 0, "random": 0, "burst": 32, "delay": "1ms"}]}],
 "workers": [{"count": 2, "engine": "null", "queue_depth": 4, "targets": [{"path": "a.dat", "size": "1m"}]}]}
P

# --- two runs appended to one file, as Iometer does -------------------------------------
expect_rc 0 "$IOFLEET" run p.json --no-db --quiet --iometer-csv-append all.csv
cp all.csv first.csv
python3 "$READ" results all.csv >one.json || fail "run 1: $(cat one.json)"
expect_rc 0 "$IOFLEET" run p.json --no-db --quiet --iometer-csv-append all.csv
cmp -n "$(stat -c %s first.csv)" first.csv all.csv || fail "the second run rewrote the first"
[ "$(stat -c %s all.csv)" -gt "$(stat -c %s first.csv)" ] || fail "the second run added nothing"
python3 "$READ" results all.csv >two.json || fail "after run 2: not Iometer's format"
jq -e 'length == 2 and all(.[]; .end_test and (.tests | length) == 2)' two.json >/dev/null ||
    fail "not 2 whole runs of 2 tests: $(jq -c '[.[] | {end_test, n: (.tests | length)}]' two.json)"
# What tools written for Iometer read: specs with Iometer's trailing comma and
# default assignment 0, a PROCESSOR row after the MANAGER row, raw run time /
# Processor Speed = the run time in seconds (10 MHz ticks).
jq -e '.[0].tests[0].specs[0] | .default_assignment == 0 and .lines == [[4096,100,100,100,1,32,4096,0]]' \
    two.json >/dev/null || fail "access spec: $(jq -c '.[0].tests[0].specs' two.json)"
jq -e '[.[0].tests[0].rows[].type] | index("PROCESSOR") == index("MANAGER") + 1' two.json >/dev/null ||
    fail "no PROCESSOR row after the MANAGER row: $(jq -c '[.[0].tests[0].rows[].type]' two.json)"
jq -e 'all(.[].tests[].rows[] | select(.type == "MANAGER"); .speed == 10000000 and
    (.run_s - 2 | fabs) < 0.2 and .bins == .ios)' two.json >/dev/null ||
    fail "MANAGER rows: $(jq -c '[.[].tests[].rows[] | select(.type == "MANAGER")]' two.json)"
ok "--iometer-csv-append: run 2 added after run 1's bytes; both runs whole in Iometer's format"

# --- a planted link at the name: refused, never followed ---------------------------------
ln -s "$T/victim.csv" planted.csv
expect_rc 2 "$IOFLEET" run p.json --no-db --quiet --iometer-csv-append planted.csv --force
expect_in "$T/err" "planted.csv: is a symbolic link, which is never followed"
[ ! -e victim.csv ] || fail "the link's target was created"
[ -L planted.csv ] || fail "the link was replaced"
ok "--iometer-csv-append refuses a planted symbolic link (with --force too), target untouched"

# --- the instantaneous file ---------------------------------------------------------------
expect_rc 0 "$IOFLEET" run p.json --no-db --quiet --iometer-instant inst.csv --json run.json \
    --iometer-csv res.csv --csv run.csv
python3 "$READ" instant inst.csv >inst.json || fail "not Iometer's instantaneous format"
jq -e '.end_test and (.tests | length) == 2' inst.json >/dev/null || fail "not 2 tests and 'End Test"
for t in 0 1; do
    n=$(jq ".tests[$t].updates | length" inst.json)
    lost=$(jq ".tests[$t].lost" inst.json)
    [ "$((n + lost))" = 4 ] || fail "test $t: $n rows + $lost lost for 4 intervals of 500 ms"
    jq -e --argjson t "$t" '.tests[$t] | all(.updates[]; .type == "MANAGER" and .speed == 10000000
        and .run_s > 0 and .run_s <= 0.6 and .bins == .ios) and ([.updates[].time] | . == sort)' \
        inst.json >/dev/null || fail "test $t: interval rows: $(jq -c ".tests[$t].updates" inst.json)"
    # The intervals add up to the test's ALL row (no interval lost), which is the JSON's.
    if [ "$lost" = 0 ]; then
        jq -e --argjson t "$t" '.tests[$t] | ([.updates[].ios] | add) == .all.ios' inst.json >/dev/null ||
            fail "test $t: the intervals do not add up to the ALL row"
    fi
    want=$(jq ".tests[$t].results[] | select(.row_type == \"ALL\") | .read_ios + .write_ios" run.json)
    jq -e --argjson t "$t" --argjson w "$want" '.tests[$t].all.ios == $w and
        (.tests[$t].workers | length) == 2' inst.json >/dev/null ||
        fail "test $t: ALL row is not the run's $want I/Os, or not 2 WORKER rows"
done
ok "--iometer-instant: TimeStamp-led MANAGER rows per 500 ms interval, WORKER and ALL rows per test"

# --- the node's CPU and network columns --------------------------------------------------
# From this agent (Linux, protocol 1.7): numbers, none negative, softirq + irq
# within the busy share; on MANAGER and PROCESSOR rows of both files and ALL.
node_ok='.cpu != null and .dpc != null and .irq != null and .intr_s != null and
    .packets_s != null and .packet_errors != null and .retrans_s != null and
    .dpc >= 0 and .irq >= 0 and .intr_s >= 0 and .packets_s >= 0 and .packet_errors >= 0 and
    .retrans_s >= 0 and .dpc + .irq <= .cpu + 0.02 and .dpc + .irq <= .sys + 0.02'
# A PROCESSOR row has the CPU figures only; its network fields stay empty, as Iometer's;
# one per CPU has no interrupts (not counted per CPU), the node-wide one has them.
cpu_ok='.cpu != null and .dpc != null and .irq != null and .dpc >= 0 and .irq >= 0 and
    .dpc + .irq <= .cpu + 0.02 and .packets_s == null and
    (if .name == "All CPUs" then .intr_s != null and .intr_s >= 0 else .intr_s == null end)'
jq -e "all(.[].tests[].rows[] | select(.type == \"MANAGER\" or .type == \"ALL\"); $node_ok) and
    all(.[].tests[].rows[] | select(.type == \"PROCESSOR\"); $cpu_ok)" two.json >/dev/null ||
    fail "results: CPU columns $(jq -c '[.[0].tests[0].rows[] | select(.type != "WORKER" and .type != "DISK")]' two.json)"
jq -e "all(.tests[].updates[]; $node_ok) and all(.tests[].all; $node_ok)" inst.json >/dev/null ||
    fail "instant: CPU columns $(jq -c '.tests[0].updates' inst.json)"
# The same run's JSON and CSV carry the same node figures as its Iometer CSV, on
# the NODE (MANAGER) and ALL rows of each test.
python3 "$READ" results res.csv >res.json || fail "res.csv: not Iometer's format"
python3 - res.json run.json run.csv <<'PY' || fail "the JSON, CSV and Iometer CSV node figures differ"
import csv, json, sys
iom, js = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
rows = list(csv.DictReader(open(sys.argv[3], newline="")))
keys = {"dpc": "dpc_pct", "irq": "irq_pct", "intr_s": "intr_per_s", "packets_s": "packets_per_s",
        "packet_errors": "packet_errors", "retrans_s": "retrans_per_s"}
n = 0
for t, test in enumerate(iom[0]["tests"]):
    for r in test["rows"]:
        if r["type"] not in ("ALL", "MANAGER"):
            continue
        kind, node = ("ALL", None) if r["type"] == "ALL" else ("NODE", r["name"])
        jr = [x for x in js["tests"][t]["results"] if x["row_type"] == kind and x["node"] == node]
        cr = [x for x in rows if x["test"] == str(t + 1) and x["row_type"] == kind
              and x["node"] == (node or "")]
        assert len(jr) == 1 and len(cr) == 1, (t, kind, node)
        for ik, jk in keys.items():
            a, b, c = r[ik], jr[0]["cpu"][jk], cr[0][jk]
            if a is None or b is None or c == "" or abs(a - b) > 1e-5 + 1e-9 * abs(b) or \
                    abs(float(c) - b) > 5e-4 + 1e-9 * abs(b):
                sys.exit(f"test {t + 1} {kind} {node}: {jk}: Iometer {a}, JSON {b}, CSV {c!r}")
            n += 1
print(f"{n} node figures equal", file=sys.stderr)
PY
ok "the node figures of the JSON and CSV equal the Iometer CSV's, ALL and NODE rows"
# One PROCESSOR row per CPU (protocol 1.7), named by the kernel's numbers as
# /proc/stat lists them, their mean busy % within a few points of the node's;
# the JSON's NODE rows carry the same CPUs.
ids=$(awk '/^cpu[0-9]/ { sub("cpu", "", $1); printf "%s%s", s, $1; s = "," }' /proc/stat)
python3 - res.json run.json "$ids" <<'PY' || fail "PROCESSOR rows per CPU"
import json, sys
iom, js, ids = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3].split(",")
for t, test in enumerate(iom[0]["tests"]):
    rows = test["rows"]
    m = [i for i, r in enumerate(rows) if r["type"] == "MANAGER"]
    assert len(m) == 1, f"test {t + 1}: {len(m)} MANAGER rows"
    procs = []
    for r in rows[m[0] + 1:]:
        if r["type"] != "PROCESSOR":
            break
        procs.append(r)
    names = [p["name"] for p in procs]
    if names != ["CPU " + i for i in ids]:
        sys.exit(f"test {t + 1}: PROCESSOR rows {names}, /proc/stat has cpu {ids}")
    mean, node = sum(p["cpu"] for p in procs) / len(procs), rows[m[0]]["cpu"]
    if abs(mean - node) > 5:
        sys.exit(f"test {t + 1}: the CPUs' mean busy {mean:.2f} % is not the node's {node:.2f} %")
    jn = [r for r in js["tests"][t]["results"] if r["row_type"] == "NODE"][0]
    if [str(c["id"]) for c in jn["cpus"]] != ids or \
            any(abs(c["busy_pct"] - p["cpu"]) > 1e-5 for c, p in zip(jn["cpus"], procs)):
        sys.exit(f"test {t + 1}: JSON cpus {jn['cpus']} differ from the PROCESSOR rows")
    print(f"test {t + 1}: {len(procs)} CPUs, mean busy {mean:.2f} %, node {node:.2f} %",
          file=sys.stderr)
PY
ok "a PROCESSOR row per CPU ($(echo "$ids" | tr ',' ' ')), their mean busy near the node's, the JSON's cpus the same"
# An agent and manager of 1.6 send no per-CPU figures: one node-wide row, with
# the node figures.
IOF_PROTO_MINOR=6 expect_rc 0 "$IOFLEET" run p.json --no-db --quiet --iometer-csv six.csv --json six-run.json
python3 "$READ" results six.csv >six.json || fail "1.6: not Iometer's format"
jq -e '[.[].tests[].rows[] | select(.type == "PROCESSOR")] | length == 2 and
    all(.[]; .name == "All CPUs" and .dpc != null and .intr_s != null)' six.json >/dev/null ||
    fail "1.6: PROCESSOR rows $(jq -c '[.[].tests[].rows[] | select(.type == "PROCESSOR")]' six.json)"
jq -e '[.tests[].results[] | select(.row_type == "NODE")] | all(.[]; .cpus == null and .cpu != null)' \
    six-run.json >/dev/null || fail "1.6: JSON cpus not null"
ok "protocol 1.6: one node-wide PROCESSOR row per node (All CPUs), cpus null in the JSON"
# An agent (and manager) of 1.5 sends no node figures: the columns are empty.
IOF_PROTO_MINOR=5 expect_rc 0 "$IOFLEET" run p.json --no-db --quiet --iometer-csv old.csv \
    --iometer-instant old-inst.csv --json old-run.json
python3 "$READ" results old.csv >old.json || fail "1.5: not Iometer's format"
python3 "$READ" instant old-inst.csv >old-inst.json || fail "1.5: not Iometer's instantaneous format"
none='.cpu != null and .dpc == null and .irq == null and .intr_s == null and .packets_s == null and
    .packet_errors == null and .retrans_s == null'
jq -e "all(.[].tests[].rows[] | select(.type == \"MANAGER\" or .type == \"PROCESSOR\"); $none)" \
    old.json >/dev/null || fail "1.5 results: $(jq -c '[.[0].tests[0].rows[] | select(.type == "MANAGER")]' old.json)"
jq -e "all(.tests[].updates[]; $none)" old-inst.json >/dev/null ||
    fail "1.5 instant: $(jq -c '.tests[0].updates' old-inst.json)"
jq -e '[.tests[].results[] | select(.row_type == "NODE" or .row_type == "ALL") | .cpu] |
    length > 0 and all(.[]; .busy_pct != null and .dpc_pct == null and .irq_pct == null and
    .intr_per_s == null and .packets_per_s == null and .packet_errors == null and
    .retrans_per_s == null)' old-run.json >/dev/null ||
    fail "1.5 JSON: $(jq -c '[.tests[0].results[] | select(.row_type == "NODE") | .cpu]' old-run.json)"
ok "% DPC, % Interrupt, interrupts, packets, errors, retransmissions: numbers from 1.6, empty from 1.5"
