# SPDX-License-Identifier: Apache-2.0
# iofleet run --http: the live page in headless Chromium during a real run
# (null engine, the local agent, 1 s intervals): it loads, fills in from the
# event stream and changes between two intervals (DOM text), with no console
# error and no request outside the served origin, and is no wider than a
# 390 px phone. Its first HTML, before any script runs, holds the run's
# state, with the <script> in the spec's name escaped. The checker itself
# is shown to see an off-site request and a console error.
source "$(dirname "$0")/lib/common.bash"
PY=$(command -v /usr/bin/python3 || command -v python3) || skip "python3 not installed"
command -v chromium >/dev/null || skip "chromium not installed (Debian package chromium)"
command -v jq >/dev/null || skip "jq not installed"
CHECK="$PY $(dirname "$0")/lib/live_page.py"

plan p.json <<'P'
{"name": "live page", "run": {"ramp": "500ms", "duration": "5m", "interval": "1s"},
 "specs": [{"name": "4k <script>alert(1)</script> mixed", "lines": [{"size": "4k", "read": 70, "random": 100, "burst": 64, "delay": "1ms"}]}],
 "workers": [{"count": 1, "engine": "null", "queue_depth": 4, "targets": [{"path": "t.dat", "size": "16m"}]}]}
P
iof_run_live "$T/p.json" --no-db --quiet --workdir "$T/work" --http 0

# The first HTML (no script run): the state as it is, the spec's name escaped.
for _ in $(seq 600); do
    curl -sf "${url}api/run" >"$T/api.json" && jq -e '.test != null' "$T/api.json" >/dev/null && break
    sleep 0.1
done
curl -sf "$url" >"$T/first.html" || fail "GET / failed"
if grep -q connecting "$T/first.html"; then fail "the first HTML says 'connecting'"; fi
grep -qF '<span id="state">running</span>' "$T/first.html" ||
    fail "the first HTML does not say the run is running: $(grep -o '<span id="state">[^<]*' "$T/first.html")"
grep -qF '<span id="spec">4k &lt;script&gt;alert(1)&lt;/script&gt; mixed</span>' "$T/first.html" ||
    fail "the first HTML does not hold the test's spec, escaped"
[ "$(grep -o '<script' "$T/first.html" | wc -l)" = 1 ] || fail "the first HTML has a <script> of a name"
grep -qF '<td class="name">local</td>' "$T/first.html" || fail "the first HTML has no row for the node"
# No fixed width above a phone's 390 px (max-width only bounds).
wide=$(grep -oE '(max-)?width:[0-9.]+(px|em|rem)' "$T/first.html" | grep -v '^max-' |
    awk -F: '{ v = $2 + 0; if ($2 ~ /em$/) v *= 16; if (v > 390) print $0 }')
[ -z "$wide" ] || fail "fixed widths above 390 px: $wide"
ok "the first HTML: running, $(grep -o '<span id="test">[^<]*' "$T/first.html" | cut -d'>' -f2), the spec escaped, no width above 390 px"

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
jq -e '.second.text | contains("<script>alert(1)</script>")' "$T/page.json" >/dev/null ||
    fail "the page does not show the spec's name as text: $(jq -c .second.text "$T/page.json")"
jq -e '.phone_scroll_width <= 390' "$T/page.json" >/dev/null ||
    fail "the page is $(jq .phone_scroll_width "$T/page.json") px wide on a 390 px phone"
ok "the live page updates between intervals $(jq -r '.first.interval + " and " + .second.interval' "$T/page.json"), no console error, only $(jq -r '.requests | unique | join(" ")' "$T/page.json"), $(jq .phone_scroll_width "$T/page.json") px wide on a phone"

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
