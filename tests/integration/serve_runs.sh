# SPDX-License-Identifier: Apache-2.0
# iofleet serve's run history endpoints (docs/api.md): a run recorded by
# `iofleet run --db` is listed by GET /api/v1/runs as `iofleet runs --json`
# lists it, and GET /api/v1/runs/ID gives its tests' final rows with the
# figures of the run's own --json result file; an unknown id is a JSON 404,
# a word a 400; an --db that cannot be opened is refused at the start.
source "$(dirname "$0")/lib/cluster.bash"
command -v curl >/dev/null || skip "curl not installed"
command -v jq >/dev/null || skip "jq not installed"

db=$T/runs.db
expect_rc 0 "$IOFLEET" run --spec 4k,read=70 --spec 64k,random=0 --engine null --duration 1s \
    --target q.dat:4m --workdir "$T/w" --json "$T/r.json" --db "$db" -q
"$IOFLEET" runs --db "$db" --json >"$T/cli-runs.json"
[ "$(jq length "$T/cli-runs.json")" = 1 ] || fail "iofleet runs lists: $(cat "$T/cli-runs.json")"

# An --db that cannot be opened: exit 2 before anything listens.
: >"$T/file"
expect_rc 2 "$IOFLEET" serve --http 127.0.0.1:0 --listen 127.0.0.1:0 --insecure --db "$T/file/runs.db"
expect_in "$T/err" "$T/file/runs.db"
ok "unusable --db refused: $(head -n1 "$T/err")"

cl_spawn srv "$T/serve.out" "$T/serve.err" "$IOFLEET" serve --http 127.0.0.1:0 \
    --listen 127.0.0.1:0 --insecure --db "$db"
cl_wait_log "$T/serve.err" "iofleet serve: API on http://127.0.0.1:" 20
api=$(sed -n 's/.*API on \(http:[^ ]*\) .*/\1/p' "$T/serve.err" | head -n1)
[ -n "$api" ] || fail "no API URL in: $(cat "$T/serve.err")"

curl -sf "${api}runs" >"$T/runs.json" || fail "GET ${api}runs failed"
jq -e --slurpfile cli "$T/cli-runs.json" '.runs == $cli[0]' "$T/runs.json" >/dev/null ||
    fail "GET /api/v1/runs differs from iofleet runs --json: $(cat "$T/runs.json") vs $(cat "$T/cli-runs.json")"
id=$(jq '.runs[0].id' "$T/runs.json")
ok "GET /api/v1/runs: what iofleet runs --json lists ($(jq -c '.runs[0] | {id, status, tests}' "$T/runs.json"))"

curl -sf "${api}runs/$id" >"$T/run.json" || fail "GET ${api}runs/$id failed"
jq -e --argjson id "$id" '.id == $id and .status == "finished" and .exit_code == 0 and (.tests | length) == 2' \
    "$T/run.json" >/dev/null || fail "run $id: $(head -c 600 "$T/run.json")"
# Every ALL and NODE figure the API gives is the result file's.
for t in 0 1; do
    for f in iops mibps avg_lat_ms p50_lat_ms p99_lat_ms p999_lat_ms max_lat_ms errors; do
        for rt in ALL NODE; do
            a=$(jq --argjson t "$t" --arg f "$f" --arg rt "$rt" '.tests[$t].results[] | select(.row_type == $rt) | .[$f]' "$T/run.json")
            j=$(jq --argjson t "$t" --arg f "$f" --arg rt "$rt" '.tests[$t].results[] | select(.row_type == $rt) | .[$f]' "$T/r.json")
            [ -n "$a" ] && [ "$a" = "$j" ] || fail "test $((t + 1)) $rt $f: API $a, result file $j"
        done
    done
done
ok "GET /api/v1/runs/$id: both tests' ALL and NODE figures equal the --json file's ($(jq -c '[.tests[] | .results[] | select(.row_type == "ALL") | .iops]' "$T/run.json") IOPS)"

code=$(curl -s -o "$T/e404" -w '%{http_code}' "${api}runs/999")
[ "$code" = 404 ] && jq -e '.error.status == 404 and (.error.message | contains("no run 999"))' "$T/e404" >/dev/null ||
    fail "unknown run: $code $(cat "$T/e404")"
code=$(curl -s -o "$T/e400" -w '%{http_code}' "${api}runs/latest")
[ "$code" = 400 ] && jq -e '.error.status == 400 and (.error.message | contains("latest"))' "$T/e400" >/dev/null ||
    fail "run id 'latest': $code $(cat "$T/e400")"
ok "unknown run 404, a word for an id 400, both JSON"

kill -TERM "$srv"
cl_wait_exit "$srv" 20 rc
[ "$rc" = 0 ] || fail "serve exited $rc after SIGTERM"
