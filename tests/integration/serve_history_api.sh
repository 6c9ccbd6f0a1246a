# SPDX-License-Identifier: Apache-2.0
# The run history through iofleet serve's API (docs/api.md, "Run history"):
# four runs recorded by `iofleet run --db`, then GET /api/v1/runs with tag,
# q, since, limit and offset answering what `iofleet runs --json` lists,
# filtered the same way, with the total for paging, and each bad parameter
# a 400 naming it and why. POST /api/v1/runs/ID/tag sets and removes a tag
# as `iofleet runs tag` does, DELETE /api/v1/runs/ID removes a run as `runs
# rm`, POST /api/v1/runs/prune picks what `runs prune` picks; each with the
# CSRF rules (a form's POST 415, a foreign Origin 403), 404 for an unknown
# run, 400 for a bad body; a run under way in serve (on a dynamo agent dialled
# in) cannot be deleted (409) and a prune skips it. GET
# /api/v1/runs/compare?a=&b= answers the bytes `iofleet report A B --format
# json` writes: the plan's changes, each run's figures and the B/A ratios;
# a missing or bad id 400 naming the parameter, an unknown run 404. GET
# /api/v1/runs/ID/report.html is the page `iofleet report ID` writes (both
# under one SOURCE_DATE_EPOCH), as a download, and runs/ID/results.csv,
# results.json, iometer.csv and timeseries.csv the files `iofleet runs export
# ID` writes (a viewer's token reads them on a serve with tokens).
source "$(dirname "$0")/lib/cluster.bash"
command -v curl >/dev/null || skip "curl not installed"
command -v jq >/dev/null || skip "jq not installed"

db=$T/runs.db
# The report's "Written" time, the same for serve's and the CLI's.
export SOURCE_DATE_EPOCH=1800000000
# hist_run NAME [TAG [SIZE]]: a 1 s run of the null engine recorded in db,
# named through its plan, of 4k transfers unless SIZE.
hist_run() {
    local name=$1 tag=${2:-} size=${3:-4k}
    plan "$name.json" <<JSON
{"name": "$name", "specs": [{"name": "4k", "lines": [{"size": "$size", "read": 70}]}],
 "run": {"ramp": "1s", "duration": "1s"},
 "workers": [{"engine": "null", "targets": [{"path": "q.dat", "size": "4m"}]}]}
JSON
    expect_rc 0 "$IOFLEET" run "$T/$name.json" --workdir "$T/w" --db "$db" -q ${tag:+--tag "$tag"}
}
hist_run alpha-seq base
hist_run Alpha-rand base
hist_run beta-seq tuned 8k
hist_run gamma
"$IOFLEET" runs --db "$db" --json >"$T/cli-runs.json"
[ "$(jq length "$T/cli-runs.json")" = 4 ] || fail "iofleet runs lists: $(cat "$T/cli-runs.json")"

cl_spawn srv "$T/serve.out" "$T/serve.err" "$IOFLEET" serve --http 127.0.0.1:0 \
    --listen 127.0.0.1:0 --insecure --db "$db"
cl_wait_log "$T/serve.err" "iofleet serve: API on http://127.0.0.1:" 20
api=$(sed -n 's/.*API on \(http:[^ ]*\) .*/\1/p' "$T/serve.err" | head -n1)
[ -n "$api" ] || fail "no API URL in: $(cat "$T/serve.err")"

# get_list QUERY JQ-FILTER: GET /api/v1/runs?QUERY equals the CLI's list
# passed through JQ-FILTER (the same selection), with its total.
get_list() {
    local query=$1 filter=$2 want
    curl -sf "${api}runs?$query" >"$T/list.json" || fail "GET runs?$query failed"
    want=$(jq -c "$filter" "$T/cli-runs.json")
    jq -e --argjson want "$want" '.runs == $want' "$T/list.json" >/dev/null ||
        fail "runs?$query: $(jq -c '[.runs[].id]' "$T/list.json"), want $(jq -c '[.[].id]' <<<"$want")"
}
get_list "" '.'
jq -e '.total == 4 and .offset == 0 and .limit == null' "$T/list.json" >/dev/null ||
    fail "no filter: $(jq -c 'del(.runs)' "$T/list.json")"
get_list "tag=base" '[.[] | select(.tag == "base")]'
jq -e '.total == 2' "$T/list.json" >/dev/null || fail "tag=base total: $(jq -c 'del(.runs)' "$T/list.json")"
get_list "q=ALPHA" '[.[] | select(.plan | ascii_downcase | contains("alpha"))]'
get_list "q=tun" '[.[] | select((.tag // "") | contains("tun"))]'
get_list "tag=base&q=rand" '[.[] | select(.tag == "base" and (.plan | contains("rand")))]'
ok "tag and q select as the CLI's list filtered so: $(jq -c '[.runs[].id]' "$T/list.json")"

since=$(jq -r '.[2].start_time' "$T/cli-runs.json")
get_list "since=$since" '.[2:]'
get_list "since=1h" '.'
get_list "since=2099-01-01" '[]'
jq -e '.total == 0' "$T/list.json" >/dev/null || fail "since 2099: $(cat "$T/list.json")"
ok "since=$since: the runs started then or later; since=1h all, a future day none"

get_list "limit=2" '.[0:2]'
jq -e '.total == 4 and .limit == 2' "$T/list.json" >/dev/null || fail "limit=2: $(jq -c 'del(.runs)' "$T/list.json")"
get_list "limit=2&offset=2" '.[2:4]'
get_list "limit=2&offset=3" '.[3:4]'
get_list "offset=9" '[]'
jq -e '.total == 4 and .offset == 9' "$T/list.json" >/dev/null || fail "offset=9: $(jq -c 'del(.runs)' "$T/list.json")"
get_list "tag=base&limit=1&offset=1" '[.[] | select(.tag == "base")] | .[1:2]'
jq -e '.total == 2' "$T/list.json" >/dev/null || fail "tag, limit, offset: $(jq -c 'del(.runs)' "$T/list.json")"
ok "limit and offset page through them, total counts every run the filter picks"

# bad QUERY WORDS...: a 400 whose message has every word.
bad() {
    local query=$1 code w
    shift
    code=$(curl -s -o "$T/e400" -w '%{http_code}' "${api}runs?$query")
    [ "$code" = 400 ] || fail "runs?$query: $code $(cat "$T/e400")"
    for w in "$@"; do
        jq -e --arg w "$w" '.error.status == 400 and (.error.message | contains($w))' "$T/e400" >/dev/null ||
            fail "runs?$query: no '$w' in $(cat "$T/e400")"
    done
}
bad "limit=0" "parameter 'limit'" "1..10000" "'0'"
bad "limit=ten" "parameter 'limit'" "'ten'"
bad "offset=-1" "parameter 'offset'" "'-1'"
bad "since=yesterday" "parameter 'since'" "'yesterday'"
bad "since=2026-13-01" "parameter 'since'"
bad "tag=7" "parameter 'tag'" "numbers are run ids"
bad "tag=a%1bb" "parameter 'tag'" "control characters"
bad "q=" "parameter 'q'" "empty"
bad "limit" "parameter 'limit'" "needs a value"
bad "limit=1&limit=2" "parameter 'limit'" "twice"
bad "sort=id" "unknown parameter 'sort'" "tag, q, since, limit and offset"
ok "bad parameters: 400 naming the parameter and why ($(jq -r .error.message "$T/e400"))"

# send METHOD PATH BODY OUT [CURL ARGS...]: the status; BODY "" sends none;
# a body goes as application/json unless CTYPE names another type.
send() {
    local method=$1 path=$2 body=$3 out=$4
    shift 4
    if [ -n "$body" ]; then
        curl -s -o "$out" -w '%{http_code}' -X "$method" \
            -H "Content-Type: ${CTYPE:-application/json}" "$@" --data-binary "$body" "${api}$path"
    else
        curl -s -o "$out" -w '%{http_code}' -X "$method" "$@" "${api}$path"
    fi
}
# expect_err CODE WORD OUT: OUT is a JSON error CODE whose message has WORD.
expect_err() {
    jq -e --argjson c "$1" --arg w "$2" '.error.status == $c and (.error.message | contains($w))' "$3" \
        >/dev/null || fail "want $1 with '$2': $(cat "$3")"
}
cli_list() { "$IOFLEET" runs --db "$db" --json >"$T/cli-runs.json"; }

# --- compare ----------------------------------------------------------------------------

expect_rc 0 "$IOFLEET" report 1 3 --db "$db" --format json -o "$T/cli-cmp.json"
code=$(curl -s -o "$T/cmp.json" -w '%{http_code}' "${api}runs/compare?a=1&b=3")
[ "$code" = 200 ] || fail "GET runs/compare?a=1&b=3: $code $(cat "$T/cmp.json")"
cmp -s "$T/cli-cmp.json" "$T/cmp.json" ||
    fail "runs/compare differs from iofleet report --format json: $(diff "$T/cli-cmp.json" "$T/cmp.json" | head -n 20)"
jq -e '[.runs[] | {id: .id, label: .label}] == [{"id": 1, "label": "run 1 (base)"}, {"id": 3, "label": "run 3 (tuned)"}]
       and .runs[0].plan_changes == null
       and .runs[1].plan_changes == [{"path": "$.name", "a": "alpha-seq", "b": "beta-seq"},
                                     {"path": "$.specs[0].lines[0].size", "a": "4k", "b": "8k"}]' \
    "$T/cmp.json" >/dev/null || fail "compare's runs and plan changes: $(jq -c .runs "$T/cmp.json")"
# The figures are the ALL rows GET /api/v1/runs/ID shows, the ratio B/A.
curl -sf "${api}runs/1" >"$T/r1.json" || fail "GET runs/1"
curl -sf "${api}runs/3" >"$T/r3.json" || fail "GET runs/3"
jq -e --slurpfile r1 "$T/r1.json" --slurpfile r3 "$T/r3.json" '
    def all(r): r[0].tests[0].results[] | select(.row_type == "ALL");
    (.tests | length) == 1 and .tests[0].name == "4k"
    and .tests[0].runs[0].iops == all($r1).iops and .tests[0].runs[1].iops == all($r3).iops
    and .tests[0].runs[1].p99_lat_ms == all($r3).p99_lat_ms
    and .tests[0].runs[0].read_iops > 0 and .tests[0].runs[0].write_iops > 0
    and ((.tests[0].runs[0].read_iops + .tests[0].runs[0].write_iops) / .tests[0].runs[0].iops - 1
         | fabs) < 0.01
    and ((.tests[0].ratios[1].iops.ratio - all($r3).iops / all($r1).iops) | fabs) < 1e-9
    and ((.tests[0].ratios[1].mibps.ratio - all($r3).mibps / all($r1).mibps) | fabs) < 1e-9
    and (.tests[0].ratios[1].iops.change | IN("better", "worse", "same"))
    and .tests[0].ratios[0] == null and .metrics[0] == "iops"' "$T/cmp.json" >/dev/null ||
    fail "compare's figures: $(jq -c .tests "$T/cmp.json")"
ok "runs/compare?a=1&b=3 is the bytes of iofleet report 1 3 --format json: size 4k -> 8k, MiB/s x$(jq '.tests[0].ratios[1].mibps.ratio * 100 | round / 100' "$T/cmp.json")"

# cmp_err QUERY CODE WORDS...: GET runs/compare?QUERY answers CODE, its
# message with every word.
cmp_err() {
    local query=$1 want=$2 w
    shift 2
    code=$(curl -s -o "$T/e.json" -w '%{http_code}' "${api}runs/compare?$query")
    [ "$code" = "$want" ] || fail "runs/compare?$query: $code $(cat "$T/e.json")"
    for w in "$@"; do expect_err "$want" "$w" "$T/e.json"; done
}
cmp_err "a=1" 400 "parameter 'b' is missing"
cmp_err "b=1" 400 "parameter 'a' is missing"
cmp_err "a=x&b=1" 400 "parameter 'a'" "a run is named by its id" "'x'"
cmp_err "a=1&b=0" 400 "parameter 'b'" "'0'"
cmp_err "a=1&b=-2" 400 "parameter 'b'" "'-2'"
cmp_err "a=1&b" 400 "parameter 'b' needs a value"
cmp_err "a=1&a=2&b=3" 400 "parameter 'a' is given twice"
cmp_err "a=1&b=2&c=3" 400 "unknown parameter 'c'"
cmp_err "a=1&b=99" 404 "parameter 'b'" "no run 99"
cmp_err "a=98&b=1" 404 "parameter 'a'" "no run 98"
code=$(curl -s -o "$T/e.json" -w '%{http_code}' -X DELETE "${api}runs/compare?a=1&b=2")
[ "$code" = 405 ] || fail "DELETE runs/compare: $code $(cat "$T/e.json")"
expect_rc 2 "$IOFLEET" report 1 --db "$db" --format json -o "$T/one.json"
expect_in "$T/err" "needs two or more RUNs"
[ ! -e "$T/one.json" ] || fail "iofleet report --format json of one run wrote $T/one.json"
ok "compare: a missing or bad id 400 naming a or b, an unknown run 404, one run for the CLI a usage error"

# --- a stored run's report ---------------------------------------------------------------

if [ -r "${IOF_CHARTJS:-/usr/share/javascript/chart.js/chart.min.js}" ]; then
    expect_rc 0 "$IOFLEET" report 3 --db "$db" -o "$T/cli-report.html"
    code=$(curl -s -D "$T/rh.txt" -o "$T/report.html" -w '%{http_code}' "${api}runs/3/report.html")
    [ "$code" = 200 ] || fail "GET runs/3/report.html: $code $(head -c 300 "$T/report.html")"
    cmp -s "$T/cli-report.html" "$T/report.html" ||
        fail "runs/3/report.html differs from iofleet report 3: $(cmp "$T/cli-report.html" "$T/report.html")"
    grep -qi '^content-disposition: attachment; filename="iofleet-run-3.html"' "$T/rh.txt" ||
        fail "runs/3/report.html headers: $(cat "$T/rh.txt")"
    grep -qi '^content-type: text/html; charset=utf-8' "$T/rh.txt" ||
        fail "runs/3/report.html headers: $(cat "$T/rh.txt")"
    expect_in "$T/report.html" "Written 2027-01-15 08:00:00 UTC"
    code=$(curl -s -o "$T/e.json" -w '%{http_code}' "${api}runs/99/report.html")
    [ "$code" = 404 ] && expect_err 404 "no run with id or tag '99'" "$T/e.json"
    code=$(curl -s -o "$T/e.json" -w '%{http_code}' "${api}runs/x/report.html")
    [ "$code" = 400 ] || fail "runs/x/report.html: $code $(cat "$T/e.json")"
    code=$(curl -s -o "$T/e.json" -w '%{http_code}' -X DELETE "${api}runs/3/report.html")
    [ "$code" = 405 ] || fail "DELETE runs/3/report.html: $code $(cat "$T/e.json")"
    ok "runs/3/report.html is the bytes of iofleet report 3 ($(wc -c <"$T/report.html") B), an attachment; unknown run 404"
else
    echo "note: no Chart.js: GET runs/ID/report.html not checked"
fi

# --- a stored run's result files ----------------------------------------------------------

# PATH OPTION TYPE NAME: GET runs/3/PATH is the file `iofleet runs export 3 OPTION` writes.
while read -r path opt type name; do
    rm -f "$T/cli-$path"
    expect_rc 0 "$IOFLEET" runs export 3 --db "$db" "$opt" "$T/cli-$path"
    code=$(curl -s -D "$T/fh.txt" -o "$T/api-$path" -w '%{http_code}' "${api}runs/3/$path")
    [ "$code" = 200 ] || fail "GET runs/3/$path: $code $(head -c 300 "$T/api-$path")"
    cmp "$T/cli-$path" "$T/api-$path" || fail "runs/3/$path differs from iofleet runs export 3 $opt"
    grep -qi "^content-disposition: attachment; filename=\"$name\"" "$T/fh.txt" ||
        fail "runs/3/$path headers: $(cat "$T/fh.txt")"
    grep -qi "^content-type: $type" "$T/fh.txt" || fail "runs/3/$path headers: $(cat "$T/fh.txt")"
    code=$(curl -s -o "$T/e.json" -w '%{http_code}' "${api}runs/99/$path")
    [ "$code" = 404 ] && expect_err 404 "no run 99" "$T/e.json"
    code=$(curl -s -o "$T/e.json" -w '%{http_code}' -X DELETE "${api}runs/3/$path")
    [ "$code" = 405 ] || fail "DELETE runs/3/$path: $code $(cat "$T/e.json")"
done <<'FILES'
results.csv --csv text/csv iofleet-run-3.csv
results.json --json application/json iofleet-run-3.json
iometer.csv --iometer-csv text/csv iofleet-run-3-iometer.csv
timeseries.csv --timeseries text/csv iofleet-run-3-timeseries.csv
FILES
ok "runs/3/results.csv, results.json, iometer.csv, timeseries.csv: the bytes of iofleet runs export 3, attachments; unknown run 404"

# With tokens (a plain HTTP serve on loopback): a viewer's token reads them, none is refused.
"$IOFLEET" serve token new --http-tokens "$T/tokens" --scope viewer --name reader >"$T/view.tok" 2>"$T/tok.err" ||
    fail "serve token new failed"
cl_spawn srv2 "$T/serve2.out" "$T/serve2.err" "$IOFLEET" serve --http 127.0.0.1:0 \
    --listen 127.0.0.1:0 --insecure --db "$db" --http-tokens "$T/tokens"
cl_wait_log "$T/serve2.err" "iofleet serve: API on http://127.0.0.1:" 20
api2=$(sed -n 's/.*API on \(http:[^ ]*\) .*/\1/p' "$T/serve2.err" | head -n1)
code=$(curl -s -o "$T/e.json" -w '%{http_code}' "${api2}runs/3/results.csv")
[ "$code" = 401 ] || fail "runs/3/results.csv without a token: $code $(cat "$T/e.json")"
code=$(curl -s -o "$T/viewer.csv" -w '%{http_code}' -H "Authorization: Bearer $(cat "$T/view.tok")" \
    "${api2}runs/3/results.csv")
[ "$code" = 200 ] && cmp -s "$T/viewer.csv" "$T/cli-results.csv" ||
    fail "runs/3/results.csv with a viewer's token: $code $(head -c 300 "$T/viewer.csv")"
cl_stop "$srv2"
ok "with tokens: a viewer's token reads runs/3/results.csv, no token 401"

# --- tag, delete, prune ------------------------------------------------------------------

code=$(send POST runs/4/tag '{"tag": "nightly"}' "$T/t.json")
[ "$code" = 200 ] && jq -e '.id == 4 and .tag == "nightly"' "$T/t.json" >/dev/null ||
    fail "tag run 4: $code $(cat "$T/t.json")"
cli_list
jq -e '.[3].tag == "nightly"' "$T/cli-runs.json" >/dev/null || fail "iofleet runs after the tag: $(cat "$T/cli-runs.json")"
get_list "tag=nightly" '[.[] | select(.tag == "nightly")]'
code=$(send POST runs/4/tag '{"tag": null}' "$T/t.json")
[ "$code" = 200 ] && jq -e '.id == 4 and .tag == null' "$T/t.json" >/dev/null ||
    fail "untag run 4: $code $(cat "$T/t.json")"
cli_list
jq -e '.[3].tag == null' "$T/cli-runs.json" >/dev/null || fail "iofleet runs after the untag: $(cat "$T/cli-runs.json")"
code=$(send POST runs/4/tag '{"tag": "rc1"}' "$T/t.json")
code2=$(send POST runs/4/tag '{"tag": ""}' "$T/t2.json")
[ "$code" = 200 ] && [ "$code2" = 200 ] && jq -e '.tag == null' "$T/t2.json" >/dev/null ||
    fail "tag '' removes: $code2 $(cat "$T/t2.json")"
ok "POST runs/4/tag sets the tag iofleet runs then shows; null and \"\" remove it"

code=$(send POST runs/4/tag '{"tag": "7"}' "$T/e.json")
[ "$code" = 400 ] && expect_err 400 "numbers are run ids" "$T/e.json"
code=$(send POST runs/4/tag '{"tag": "a\u001bb"}' "$T/e.json")
[ "$code" = 400 ] && expect_err 400 "control characters" "$T/e.json"
code=$(send POST runs/4/tag '{"tag": 3}' "$T/e.json")
[ "$code" = 400 ] && expect_err 400 "tag: must be a string or null" "$T/e.json"
code=$(send POST runs/4/tag '{}' "$T/e.json")
[ "$code" = 400 ] && expect_err 400 "needs a tag" "$T/e.json"
code=$(send POST runs/4/tag '{"tags": "x"}' "$T/e.json")
[ "$code" = 400 ] && expect_err 400 "unknown member 'tags'" "$T/e.json"
code=$(send POST runs/4/tag 'tag=x' "$T/e.json")
[ "$code" = 400 ] && expect_err 400 "not a JSON object" "$T/e.json"
code=$(send POST runs/99/tag '{"tag": "x"}' "$T/e.json")
[ "$code" = 404 ] && expect_err 404 "no run 99" "$T/e.json"
code=$(CTYPE=application/x-www-form-urlencoded send POST runs/4/tag 'tag=x' "$T/e.json")
[ "$code" = 415 ] && expect_err 415 "Content-Type: application/json" "$T/e.json"
code=$(send POST runs/4/tag '{"tag": "x"}' "$T/e.json" -H 'Origin: http://evil.example')
[ "$code" = 403 ] && expect_err 403 "Origin" "$T/e.json"
code=$(send GET runs/4/tag "" "$T/e.json")
[ "$code" = 405 ] || fail "GET runs/4/tag: $code $(cat "$T/e.json")"
cli_list
jq -e '.[3].tag == null' "$T/cli-runs.json" >/dev/null || fail "a refused tag changed run 4: $(cat "$T/cli-runs.json")"
ok "tags refused as iofleet runs tag refuses them (400), unknown run 404, a form 415, a foreign Origin 403"

code=$(send DELETE runs/3 "" "$T/e.json" -H 'Origin: http://evil.example')
[ "$code" = 403 ] && expect_err 403 "Origin" "$T/e.json"
code=$(send DELETE runs/3 "" "$T/d.json")
[ "$code" = 200 ] && jq -e '.id == 3 and .removed == 1 and .compacted == true' "$T/d.json" >/dev/null ||
    fail "DELETE runs/3: $code $(cat "$T/d.json")"
cli_list
jq -e '[.[].id] == [1, 2, 4]' "$T/cli-runs.json" >/dev/null || fail "iofleet runs after the delete: $(cat "$T/cli-runs.json")"
get_list "" '.'
code=$(send DELETE runs/3 "" "$T/e.json")
[ "$code" = 404 ] && expect_err 404 "no run with id or tag '3'" "$T/e.json"
code=$(send DELETE runs/abc "" "$T/e.json")
[ "$code" = 400 ] && expect_err 400 "a run is named by its id" "$T/e.json"
code=$(send PUT runs/2 "" "$T/e.json")
[ "$code" = 405 ] || fail "PUT runs/2: $code"
ok "DELETE runs/3: gone from iofleet runs ($(jq -c '{bytes_before, bytes_after}' "$T/d.json")); again 404, a word 400, a foreign Origin 403"

"$IOFLEET" runs prune --keep 1 -n --db "$db" >"$T/prune-cli.txt"
want=$(sed -n 's/^would remove run \([0-9]*\)$/\1/p' "$T/prune-cli.txt" | jq -cs .)
code=$(send POST runs/prune '{"keep": 1, "dry_run": true}' "$T/p.json")
[ "$code" = 200 ] && jq -e --argjson w "$want" '.dry_run == true and .runs == $w and .removed == 0' "$T/p.json" >/dev/null ||
    fail "prune keep 1 dry run: $code $(cat "$T/p.json"), iofleet runs prune -n: $want"
cli_list
[ "$(jq length "$T/cli-runs.json")" = 3 ] || fail "a dry run removed runs: $(cat "$T/cli-runs.json")"
code=$(send POST runs/prune '{"older_than": "1w"}' "$T/p.json")
[ "$code" = 200 ] && jq -e '.runs == [] and .removed == 0' "$T/p.json" >/dev/null ||
    fail "prune older than 1w: $code $(cat "$T/p.json")"
code=$(send POST runs/prune '{"keep": 1, "tag": "base"}' "$T/p.json")
[ "$code" = 200 ] && jq -e '.runs == [1] and .removed == 1 and .dry_run == false' "$T/p.json" >/dev/null ||
    fail "prune keep 1 of base: $code $(cat "$T/p.json")"
cli_list
jq -e '[.[].id] == [2, 4]' "$T/cli-runs.json" >/dev/null || fail "iofleet runs after the prune: $(cat "$T/cli-runs.json")"
ok "prune: the dry run picks what iofleet runs prune -n picks ($want), keep 1 of tag base removed run 1"

code=$(send POST runs/prune '{}' "$T/e.json")
[ "$code" = 400 ] && expect_err 400 "needs older_than" "$T/e.json"
code=$(send POST runs/prune '{"keep": -1}' "$T/e.json")
[ "$code" = 400 ] && expect_err 400 "keep: must be a number 0.." "$T/e.json"
code=$(send POST runs/prune '{"keep": "2"}' "$T/e.json")
[ "$code" = 400 ] && expect_err 400 "keep: must be a whole number" "$T/e.json"
code=$(send POST runs/prune '{"older_than": "30x"}' "$T/e.json")
[ "$code" = 400 ] && expect_err 400 "older_than: must be a number and s, m, h, d or w" "$T/e.json"
code=$(send POST runs/prune '{"keep": 1, "dry_run": "yes"}' "$T/e.json")
[ "$code" = 400 ] && expect_err 400 "dry_run: must be true or false" "$T/e.json"
code=$(send POST runs/prune '{"keep": 1, "force": true}' "$T/e.json")
[ "$code" = 400 ] && expect_err 400 "unknown member 'force'" "$T/e.json"
code=$(CTYPE=text/plain send POST runs/prune '{"keep": 0}' "$T/e.json")
[ "$code" = 415 ] || fail "prune as text/plain: $code $(cat "$T/e.json")"
code=$(send GET runs/prune "" "$T/e.json")
[ "$code" = 405 ] || fail "GET runs/prune: $code"
cli_list
[ "$(jq length "$T/cli-runs.json")" = 2 ] || fail "a refused prune removed runs: $(cat "$T/cli-runs.json")"
ok "prune bodies refused naming the member (400), a text/plain POST 415"

# A run under way in serve: not deleted (409), skipped by a prune.
aport=$(sed -n 's/.*agents on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$T/serve.err" | head -n1)
[ -n "$aport" ] || fail "no agent port in: $(cat "$T/serve.err")"
cl_start_dialer ag hist-1 "127.0.0.1:$aport"
connected() {
    curl -sf "${api}agents" >"$T/agents.json" &&
        jq -e '[.agents[] | select(.status == "connected")] | length == 1' "$T/agents.json" >/dev/null
}
cl_wait_cmd 20 "hist-1 connected" connected
plan long.json <<'P'
{"name": "long", "run": {"ramp": "1s", "duration": "120s", "interval": "1s"},
 "specs": [{"name": "4k", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "null", "targets": [{"path": "f", "size": "1m"}]}]}
P
code=$(send POST runs "$(cat "$T/long.json")" "$T/start.json")
[ "$code" = 202 ] || fail "start a run: $code $(cat "$T/start.json")"
rid=$(jq .id "$T/start.json")
running() { [ "$(curl -s -o /dev/null -w '%{http_code}' "${api}runs/current")" = 200 ]; }
cl_wait_cmd 20 "run $rid under way" running
code=$(send DELETE "runs/$rid" "" "$T/e.json")
[ "$code" = 409 ] && expect_err 409 "run $rid is under way" "$T/e.json"
code=$(send POST runs/prune '{"keep": 0, "dry_run": true}' "$T/p.json")
[ "$code" = 200 ] && jq -e --argjson r "$rid" '.skipped_running == $r and .runs == [2, 4]' "$T/p.json" >/dev/null ||
    fail "prune keep 0 during run $rid: $code $(cat "$T/p.json")"
# The console confirms a dry run's list with "runs": only those of them the
# rules still pick go, never a run recorded since (here the one under way).
code=$(send POST runs/prune '{"keep": 0, "dry_run": true, "runs": [4, 99]}' "$T/p.json")
[ "$code" = 200 ] && jq -e '.skipped_running == null and .runs == [4]' "$T/p.json" >/dev/null ||
    fail "prune keep 0 of runs [4, 99]: $code $(cat "$T/p.json")"
code=$(send POST runs/prune '{"keep": 0, "runs": []}' "$T/p.json")
[ "$code" = 200 ] && jq -e '.runs == [] and .removed == 0' "$T/p.json" >/dev/null ||
    fail "prune keep 0 of runs []: $code $(cat "$T/p.json")"
for bad in '"4"' '[0]' '[1.5]' '[1, "2"]' '[[1]]' '[-3]'; do
    code=$(send POST runs/prune "{\"keep\": 0, \"runs\": $bad}" "$T/e.json")
    [ "$code" = 400 ] && expect_err 400 "runs: must be an array of run ids" "$T/e.json"
done
code=$(send POST runs/current/stop '{}' "$T/s.json")
[ "$code" = 202 ] || fail "stop run $rid: $code $(cat "$T/s.json")"
idle() { [ "$(curl -s -o /dev/null -w '%{http_code}' "${api}runs/current")" = 404 ]; }
cl_wait_cmd 30 "run $rid over" idle
code=$(send DELETE "runs/$rid" "" "$T/d.json")
[ "$code" = 200 ] && jq -e --argjson r "$rid" '.id == $r and .removed == 1' "$T/d.json" >/dev/null ||
    fail "DELETE run $rid once over: $code $(cat "$T/d.json")"
ok "run $rid under way: DELETE 409, a prune skips it; once stopped it is deleted"

kill -TERM "$srv"
cl_wait_exit "$srv" 20 rc
[ "$rc" = 0 ] || fail "serve exited $rc after SIGTERM"
