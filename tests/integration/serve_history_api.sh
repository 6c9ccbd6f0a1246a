# SPDX-License-Identifier: Apache-2.0
# The run history through iofleet serve's API (docs/api.md, "Run history"):
# four runs recorded by `iofleet run --db`, then GET /api/v1/runs with tag,
# q, since, limit and offset answering what `iofleet runs --json` lists,
# filtered the same way, with the total for paging, and each bad parameter
# a 400 naming it and why.
source "$(dirname "$0")/lib/cluster.bash"
command -v curl >/dev/null || skip "curl not installed"
command -v jq >/dev/null || skip "jq not installed"

db=$T/runs.db
# hist_run NAME [TAG]: a 1 s run of the null engine recorded in db, named
# through its plan.
hist_run() {
    local name=$1 tag=${2:-}
    plan "$name.json" <<JSON
{"name": "$name", "specs": [{"name": "4k", "lines": [{"size": "4k", "read": 70}]}],
 "run": {"duration": "1s"},
 "workers": [{"engine": "null", "targets": [{"path": "q.dat", "size": "4m"}]}]}
JSON
    expect_rc 0 "$IOFLEET" run "$T/$name.json" --workdir "$T/w" --db "$db" -q ${tag:+--tag "$tag"}
}
hist_run alpha-seq base
hist_run Alpha-rand base
hist_run beta-seq tuned
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

kill -TERM "$srv"
cl_wait_exit "$srv" 20 rc
[ "$rc" = 0 ] || fail "serve exited $rc after SIGTERM"
