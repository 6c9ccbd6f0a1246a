# SPDX-License-Identifier: Apache-2.0
# iofleet run --http: the live page in headless Chromium during a real run
# (null engine, the local agent, 1 s intervals): it loads, fills in from the
# event stream and changes between two intervals (DOM text), with no console
# error and no request outside the served origin. The checker itself is
# shown to see an off-site request and a console error.
source "$(dirname "$0")/lib/common.bash"
PY=$(command -v /usr/bin/python3 || command -v python3) || skip "python3 not installed"
command -v chromium >/dev/null || skip "chromium not installed (Debian package chromium)"
command -v jq >/dev/null || skip "jq not installed"
CHECK="$PY $(dirname "$0")/lib/live_page.py"

plan p.json <<'P'
{"name": "live page", "run": {"ramp": "500ms", "duration": "5m", "interval": "1s"},
 "specs": [{"name": "4k mixed", "lines": [{"size": "4k", "read": 70, "random": 100, "burst": 64, "delay": "1ms"}]}],
 "workers": [{"count": 1, "engine": "null", "queue_depth": 4, "targets": [{"path": "t.dat", "size": "16m"}]}]}
P
iof_run_live "$T/p.json" --no-db --quiet --workdir "$T/work" --http 0

$CHECK "$url" "$T/page.json" || fail "chromium could not load $url"
jq -e '.changed' "$T/page.json" >/dev/null ||
    fail "the page did not change between two intervals: $(jq -c '{first, second}' "$T/page.json")"
jq -e '.console_errors == []' "$T/page.json" >/dev/null ||
    fail "console errors: $(jq -c .console_errors "$T/page.json")"
jq -e '.offsite == [] and (.requests | any(endswith("/events")))' "$T/page.json" >/dev/null ||
    fail "requests: $(jq -c .requests "$T/page.json")"
jq -e '.second.test == "1/1" and (.second.nodes | length) == 2 and
       (.second.nodes[1] | startswith("local"))' "$T/page.json" >/dev/null ||
    fail "the page does not show the test and the node: $(jq -c .second "$T/page.json")"
ok "the live page updates between intervals $(jq -r '.first.interval + " and " + .second.interval' "$T/page.json"), no console error, only $(jq -r '.requests | unique | join(" ")' "$T/page.json")"

# The checker sees what it must: a page with an off-site request and an error.
cat >"$T/bad.html" <<'H'
<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head><body>
<span id="interval">1</span><img src="http://127.0.0.2:9/probe.png">
<script>console.error("probe"); setTimeout(function(){document.getElementById("interval").textContent="2";}, 300);</script>
</body></html>
H
$CHECK "file://$T/bad.html" "$T/bad.json" || fail "chromium could not load the probe page"
jq -e '(.offsite | any(test("127.0.0.2"))) and (.console_errors | any(test("probe")))' "$T/bad.json" >/dev/null ||
    fail "the checker missed an off-site request or an error: $(cat "$T/bad.json")"
ok "the checker reports an off-site request and a console error on a probe page"
# The run lasts until the checks are done (however long chromium takes to start on a
# busy machine), then is interrupted: SIGINT ends it with status 130.
kill -INT "$RUN"
rc=0
wait "$RUN" || rc=$?
[ "$rc" = 130 ] || fail "iofleet run exited $rc after SIGINT, expected 130: $(cat "$T/run.err")"
