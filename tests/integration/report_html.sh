# SPDX-License-Identifier: Apache-2.0
# iofleet report (docs/history.md): a real two-run comparison on two loopback
# agents (null engine), loaded from its file in headless Chromium over the
# DevTools protocol (lib/report_check.py): no console error, no request of any
# kind, every chart canvas drawn with data (its data-points and its painted
# pixels), the B/A ratios equal the ones computed from the runs' CSV files,
# the inlined Chart.js version is the installed package's. A single-run
# report draws its summary charts too; the checker itself is shown to catch a
# request and a console error on a doctored page; a queue-depth cycle gets its
# latency-against-IOPS curves. Also: --format md, a RUN
# given as a --json file, a missing Chart.js. IOF_REPORT_SHOTS=DIR keeps one
# screenshot per report section there (docs/images/report-SECTION.png).
source "$(dirname "$0")/lib/cluster.bash"
command -v jq >/dev/null || skip "jq not installed"
command -v python3 >/dev/null || skip "python3 not installed"
command -v chromium >/dev/null || skip "chromium not installed (Debian package chromium)"
CHECK="python3 $(dirname "$0")/lib/report_check.py"

cl_start_agents 2 node
plan p.json <<'P'
{"name": "compare", "run": {"ramp": "300ms", "duration": "1500ms", "interval": "250ms"},
 "specs": [{"name": "4k random read", "lines": [{"size": "4k", "read": 100, "random": 100, "burst": 32, "delay": "1ms"}]},
           {"name": "64k seq write", "lines": [{"size": "64k", "read": 0, "random": 0, "burst": 32, "delay": "1ms"}]}],
 "workers": [{"count": 2, "engine": "null", "queue_depth": 4, "targets": [{"path": "t.dat", "size": "16m"}]}]}
P
db=$T/h.db
expect_rc 0 "$IOFLEET" run "$T/p.json" "${CL_AGENT_ARGS[@]}" --quiet --db "$db" --tag base \
    --csv "$T/a.csv" --json "$T/a.json"
expect_rc 0 "$IOFLEET" run "$T/p.json" "${CL_AGENT_ARGS[@]}" --quiet --db "$db" --tag deeper \
    --set workers[0].queue_depth=16 --set 'specs[0].lines[0].burst=64' --csv "$T/b.csv"

expect_rc 0 "$IOFLEET" report base deeper --db "$db" -o "$T/cmp.html"
expect_rc 2 "$IOFLEET" report base deeper --db "$db" -o "$T/cmp.html"
expect_in "$T/err" "exists; give --force"
! grep -qiE '(src|href)="(https?:)?//' "$T/cmp.html" || fail "the report links to the network"

shots=${IOF_REPORT_SHOTS:-$T/shots}
$CHECK "$T/cmp.html" "$T/cmp.json" "$shots" || fail "chromium could not load the report"
jq -e '.ready' "$T/cmp.json" >/dev/null || fail "the page's script did not finish: $(cat "$T/cmp.json")"
jq -e '.console_errors == []' "$T/cmp.json" >/dev/null ||
    fail "console errors: $(jq -c .console_errors "$T/cmp.json")"
jq -e '.requests == []' "$T/cmp.json" >/dev/null || fail "requests: $(jq -c .requests "$T/cmp.json")"
# 6 comparison bars, 2 runs x 2 tests x (IOPS, p99) time series, 2 percentile curves.
jq -e '(.canvases | length) == 16 and all(.canvases[]; .points > 0 and .painted > 2000)' \
    "$T/cmp.json" >/dev/null || fail "a chart is empty: $(jq -c '.canvases' "$T/cmp.json")"
ver=$(dpkg-query -W -f '${Version}' libjs-chart.js 2>/dev/null | sed 's/[+~-].*//')
jq -e --arg v "Chart.js $ver" '.chartjs == $v' "$T/cmp.json" >/dev/null ||
    fail "Chart.js version in the report: $(jq .chartjs "$T/cmp.json"), installed $ver"
ok "comparison in Chromium: no console error, no request, 16 charts drawn, Chart.js $ver"

# The ratios against the CSVs: B/A of each ALL figure. A CSV value is rounded
# to its last printed digit, so the allowed difference is what that rounding
# can make of a ratio.
python3 - "$T/a.csv" "$T/b.csv" "$T/cmp.json" <<'PY' || fail "ratios differ from the CSVs"
import csv, json, sys
def all_rows(path):
    out = {}
    for r in csv.DictReader(open(path)):
        if r["row_type"] == "ALL":
            out[r["spec"]] = r
    return out
a, b = all_rows(sys.argv[1]), all_rows(sys.argv[2])
page = json.load(open(sys.argv[3]))
seen = 0
for r in page["ratios"]:
    va, vb = a[r["test"]][r["metric"]], b[r["test"]][r["metric"]]
    half = lambda s: 0.5 * 10 ** -(len(s.split(".")[1]) if "." in s else 0)
    fa, fb = float(va), float(vb)
    want = fb / fa
    tol = want * (half(va) / fa + half(vb) / fb) * 1.01 + 1e-12
    if abs(r["ratio"] - want) > tol:
        print(f"{r['test']} {r['metric']}: page {r['ratio']} CSV {want} (tolerance {tol})")
        sys.exit(1)
    lower_better = r["metric"].endswith("_ms")
    good = want < 1 if lower_better else want > 1
    if abs(want - 1) > 0.01 + 2 * tol / want and r["cls"] != ("better" if good else "worse"):
        print(f"{r['test']} {r['metric']}: ratio {want} coloured {r['cls']}")
        sys.exit(1)
    seen += 1
if seen != 2 * 6:
    print(f"{seen} ratios on the page, expected 12")
    sys.exit(1)
PY
ok "the 12 B/A ratios equal the CSVs' and are coloured better/worse by direction"

# One run: the summary charts.
expect_rc 0 "$IOFLEET" report base --db "$db" -o "$T/one.html"
$CHECK "$T/one.html" "$T/one.json" "$shots/single" || fail "chromium could not load the single-run report"
jq -e '.console_errors == [] and .requests == [] and
       ([.canvases[] | select(.id | startswith("sum-"))] | length) == 3 and
       all(.canvases[]; .points > 0 and .painted > 2000)' "$T/one.json" >/dev/null ||
    fail "single-run report: $(jq -c '{console_errors, requests, canvases}' "$T/one.json")"
ok "single-run report: summary, time series and percentile charts drawn"

# A queue-depth cycle: the curves section, latency against IOPS per spec.
expect_rc 0 "$IOFLEET" run "$T/p.json" "${CL_AGENT_ARGS[@]}" --quiet --db "$db" --tag qd \
    --set run.duration=500ms --set 'cycle={"queue_depth":{"from":1,"to":4,"step":"x2"}}'
expect_rc 0 "$IOFLEET" report qd --db "$db" -o "$T/qd.html"
$CHECK "$T/qd.html" "$T/qd.json" "$shots/curves" || fail "chromium could not load the cycle report"
# 2 specs x 3 steps: a curve per spec, p99 and avg, 3 points each.
jq -e '.console_errors == [] and .requests == [] and
       ([.canvases[] | select(.id | startswith("curve-"))] | length) == 2 and
       all(.canvases[] | select(.id | startswith("curve-")); .points == 6 and .painted > 2000) and
       all(.canvases[]; .points > 0)' "$T/qd.json" >/dev/null ||
    fail "cycle report: $(jq -c '{console_errors, requests, canvases}' "$T/qd.json")"
ok "a queue-depth cycle draws latency against IOPS, one curve per spec (3 steps each)"

# The checker sees a request and a console error when there are some.
sed -e '/Content-Security-Policy/d' \
    -e 's|<body>|<body><img src="file:///nonexistent/iofleet-probe.png"><script>console.error("probe")</script>|' \
    "$T/one.html" >"$T/doctored.html"
$CHECK "$T/doctored.html" "$T/doctored.json" || fail "chromium could not load the doctored page"
jq -e '(.requests | any(test("iofleet-probe"))) and (.console_errors | any(test("probe")))' \
    "$T/doctored.json" >/dev/null || fail "the checker missed a request or an error: $(cat "$T/doctored.json")"
ok "the checker reports a request and a console error on a doctored page"

# Markdown; a RUN given as a --json file next to a tagged one.
expect_rc 0 "$IOFLEET" report "$T/a.json" deeper --db "$db" --format md -o "$T/cmp.md"
expect_in "$T/cmp.md" "# iofleet comparison"
expect_in "$T/cmp.md" "| a.json |"
want=$(python3 -c 'import csv,sys
a={r["spec"]:r for r in csv.DictReader(open(sys.argv[1])) if r["row_type"]=="ALL"}
b={r["spec"]:r for r in csv.DictReader(open(sys.argv[2])) if r["row_type"]=="ALL"}
print("%.3f" % (float(b["4k random read"]["iops"]) / float(a["4k random read"]["iops"])))' "$T/a.csv" "$T/b.csv")
grep -F '| 4k random read |' "$T/cmp.md" | grep -qF "| $want" ||
    fail "markdown IOPS ratio is not $want: $(grep -F '| 4k random read |' "$T/cmp.md")"
ok "--format md from a --json file and a tag: IOPS ratio $want as from the CSVs"

IOF_CHARTJS=$T/nowhere.js expect_rc 1 "$IOFLEET" report base --db "$db" -o "$T/x.html"
expect_in "$T/err" "cannot read Chart.js at $T/nowhere.js"
expect_in "$T/err" "libjs-chart.js"
expect_rc 1 "$IOFLEET" report nosuchtag --db "$db" -o "$T/y.html"
expect_in "$T/err" "no run with id or tag 'nosuchtag'"
ok "a missing Chart.js and an unknown run are clear errors"
