# SPDX-License-Identifier: Apache-2.0
# iofleet serve's plan endpoints (docs/api.md, Plans): POST /api/v1/plans/
# import answers, for a fio job file, an Iometer .icf and a vdbench file, the
# very bytes `iofleet import` writes and the notes it prints; a file the
# importer refuses is a 400 naming its line, a bad parameter a 400 naming it;
# POST /api/v1/plans/export answers the bytes of `iofleet export`, a bad plan
# a 400 with the plan loader's message. The plan library: GET /api/v1/plans
# lists the shipped configs and the user's plans (a folder beside --db, made
# 0700); PUT writes a plan the loader accepts (0600), refuses a bad one with
# its message, a bad name and a symbolic link planted in the folder; DELETE
# removes a user's plan, never a shipped one; with tokens a viewer may read
# the library and not change it.
source "$(dirname "$0")/lib/cluster.bash"
command -v curl >/dev/null || skip "curl not installed"
command -v jq >/dev/null || skip "jq not installed"

FIO=$IOF_SRC/configs/fio/four-corners.fio
ICF=$IOF_SRC/tests/data/iometer/two-workers.icf
VDB=$IOF_SRC/tests/data/vdbench/curve.vdb
HCI=$IOF_SRC/tests/data/vdbench/vdb-10vmdk-10ws-4k-70rdpct-50randompct-2threads

cl_spawn srv "$T/serve.out" "$T/serve.err" env IOFLEET_CONFIGS="$IOF_SRC/configs" \
    "$IOFLEET" serve --http 127.0.0.1:0 --listen 127.0.0.1:0 --insecure --db "$T/runs.db"
cl_wait_log "$T/serve.err" "iofleet serve: API on http://127.0.0.1:" 20
api=$(sed -n 's/.*API on \(http:[^ ]*\) .*/\1/p' "$T/serve.err" | head -n1)
[ -n "$api" ] || fail "no API URL in: $(cat "$T/serve.err")"

uri() { jq -rn --arg v "$1" '$v | @uri'; }
# import FILE QUERY OUT: uploads FILE to plans/import?QUERY; prints the status.
import() {
    curl -s -o "$3" -w '%{http_code}' -H 'Content-Type: application/octet-stream' \
        --data-binary "@$1" "${api}plans/import?$2"
}
# post URL FILE OUT: POSTs FILE as JSON; prints the status.
post() {
    curl -s -o "$3" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "@$2" "$1"
}

# same NAME FILE QUERY CLI-OPTION...: the API's plan is the bytes the CLI
# writes, and its notes are the lines the CLI prints about the file.
same() {
    local name=$1 file=$2 query=$3 code
    shift 3
    expect_rc 0 "$IOFLEET" import "$file" -o "$T/$name.cli.json" "$@"
    code=$(import "$file" "$query" "$T/$name.api")
    [ "$code" = 200 ] || fail "import $name: $code $(cat "$T/$name.api")"
    jq -j .plan "$T/$name.api" >"$T/$name.api.json"
    cmp "$T/$name.cli.json" "$T/$name.api.json" || fail "import $name: the API's plan is not the CLI's"
    local base
    base=$(basename "$file")
    grep -c "^$base:[0-9]*: " "$T/err" >"$T/$name.nlines" || true
    [ "$(jq '[.notes[] | select(.line != null)] | length' "$T/$name.api")" = "$(cat "$T/$name.nlines")" ] ||
        fail "import $name: notes $(jq -c .notes "$T/$name.api"), the CLI printed: $(cat "$T/err")"
    jq -r '.notes[] | select(.line != null) | "\(.line): \(.message)"' "$T/$name.api" >"$T/$name.notes"
    sed -n "s/^$base:\([0-9]*\): /\1: /p" "$T/err" | cmp - "$T/$name.notes" ||
        fail "import $name: the notes are not the CLI's lines"
}

same fio "$FIO" "name=four-corners.fio"
jq -e '.format == "fio" and .name == "four-corners.fio"' "$T/fio.api" >/dev/null ||
    fail "import fio: $(jq -c 'del(.plan)' "$T/fio.api")"
same icf "$ICF" "name=two-workers.icf&map=$(uri '1:=disk1.dat')&sector-size=512" \
    --map '1:=disk1.dat' --sector-size 512
jq -e '.format == "icf" and (.notes | length) > 0' "$T/icf.api" >/dev/null ||
    fail "import icf: no notes: $(jq -c 'del(.plan)' "$T/icf.api")"
same vdb "$VDB" "name=curve.vdb"
same hci "$HCI" "name=$(basename "$HCI")"
# A name that does not tell: the format from the text (vdbench) or given.
cp "$VDB" "$T/curve.txt"
cp "$FIO" "$T/job.txt"
same vdbtext "$T/curve.txt" "name=curve.txt"
same fiofmt "$T/job.txt" "format=fio&name=job.txt" --format fio
ok "plans/import: fio, icf (map, sector-size), vdbench: the bytes iofleet import writes, its notes"

# A file the importer refuses: 400 naming the file's line.
printf '[job]\nbs=4k\nrw=trim\nfilename=f\n' >"$T/trim.fio"
code=$(import "$T/trim.fio" "name=trim.fio" "$T/trim.out")
[ "$code" = 400 ] && jq -e '.error.message | contains("trim.fio:3: error: cannot map rw=trim")' "$T/trim.out" >/dev/null ||
    fail "rw=trim: $code $(cat "$T/trim.out")"
head -c 4096 /dev/urandom | tr -d '\000' >"$T/garbage.icf"
code=$(import "$T/garbage.icf" "name=garbage.icf" "$T/garbage.out")
[ "$code" = 400 ] && jq -e '.error.message | test("garbage.icf(:[0-9]+)?: ")' "$T/garbage.out" >/dev/null ||
    fail "garbage: $code $(cat "$T/garbage.out")"
ok "plans/import: refused files name their line: $(jq -r .error.message "$T/trim.out")"

# Parameters as the CLI's options, with its rules.
bad() {
    local query=$1 want=$2 code
    code=$(import "$FIO" "$query" "$T/bad.out")
    [ "$code" = 400 ] && jq -e --arg w "$want" '.error.message | contains($w)' "$T/bad.out" >/dev/null ||
        fail "import?$query: $code $(cat "$T/bad.out"), expected 400 with '$want'"
}
bad "format=xls" "unknown format 'xls' (expected fio, icf or vdbench)"
bad "name=a.fio&map=$(uri 'C:=/dev/sdb')" "map is for Iometer configuration files"
bad "name=a.fio&sector-size=520" "sector-size takes 512 or 4096 (bytes), got '520'"
bad "name=a.fio&var=a=1&var=a=2" "var a is given twice"
bad "name=a.fio&approximate=yes" "approximate takes 1 or 0"
bad "name=a.fio&colour=red" "unknown parameter 'colour'"
bad "name=../a.fio" "name takes the file's name"
bad "name=a.txt" "cannot tell the format of 'a.txt'"
code=$(curl -s -o "$T/415" -w '%{http_code}' -H 'Content-Type: text/plain' --data-binary "@$FIO" \
    "${api}plans/import?name=a.fio")
[ "$code" = 415 ] || fail "import as text/plain: $code $(cat "$T/415")"
code=$(curl -s -o "$T/405" -w '%{http_code}' "${api}plans/import")
[ "$code" = 405 ] || fail "GET plans/import: $code $(cat "$T/405")"
ok "plans/import: bad parameters 400 naming them, text/plain 415, GET 405"

# Export: the bytes `iofleet export` writes.
expect_rc 0 "$IOFLEET" export "$T/icf.cli.json" -o "$T/cli.icf"
code=$(post "${api}plans/export?format=icf" "$T/icf.cli.json" "$T/api.icf")
[ "$code" = 200 ] || fail "export: $code $(cat "$T/api.icf")"
cmp "$T/cli.icf" "$T/api.icf" || fail "export: the API's .icf is not iofleet export's"
curl -s -D "$T/export.h" -o /dev/null -H 'Content-Type: application/json' \
    --data-binary "@$T/icf.cli.json" "${api}plans/export"
grep -qi '^Content-Disposition: attachment; filename="plan.icf"' "$T/export.h" ||
    fail "export headers: $(cat "$T/export.h")"
jq '.specs[0].lines[0].size = "4q"' "$T/icf.cli.json" >"$T/badplan.json"
expect_rc 2 "$IOFLEET" validate "$T/badplan.json"
why=$(sed -n 's/^.*badplan.json: //p' "$T/err" | head -n1)
[ -n "$why" ] || why=$(head -n1 "$T/err")
code=$(post "${api}plans/export?format=icf" "$T/badplan.json" "$T/badplan.out")
[ "$code" = 400 ] && jq -e --arg w "${why:0:40}" '.error.message | contains($w)' "$T/badplan.out" >/dev/null ||
    fail "export of a bad plan: $code $(cat "$T/badplan.out"), validate says: $(cat "$T/err")"
code=$(post "${api}plans/export?format=csv" "$T/icf.cli.json" "$T/csv.out")
[ "$code" = 400 ] && jq -e '.error.message | contains("icf only")' "$T/csv.out" >/dev/null ||
    fail "export?format=csv: $code $(cat "$T/csv.out")"
ok "plans/export: the bytes iofleet export writes; a bad plan 400: $(jq -r .error.message "$T/badplan.out")"

# The console's library controls: /library.js, the source's file, loaded by the page,
# writing no HTML from data.
root=${api%api/v1/}
curl -sf -D "$T/lib.head" "${root}library.js" -o "$T/library.js" || fail "GET /library.js"
cmp "$T/library.js" "$IOF_SRC/manager/console/library.js" || fail "/library.js is not the source's"
grep -qi '^content-type: text/javascript' "$T/lib.head" || fail "/library.js: $(cat "$T/lib.head")"
! grep -n 'innerHTML\|outerHTML\|insertAdjacentHTML\|document.write' "$T/library.js" ||
    fail "library.js writes HTML"
curl -sf "$root" | grep -qF '<script src="/library.js"></script>' || fail "the page loads no /library.js"
ok "console: /library.js served and loaded by the page"

# The library: the shipped configs, and a plans folder beside --db, 0700.
[ "$(stat -c %a "$T/plans")" = 700 ] || fail "plans folder: $(ls -ld "$T/plans")"
curl -sf "${api}plans" >"$T/list.json" || fail "GET plans failed"
for f in "$IOF_SRC"/configs/*.json; do
    n=$(basename "$f" .json)
    want=$("$IOFLEET" validate "$f" 2>/dev/null | grep -c '^test [0-9]*/' || true)
    jq -e --arg n "$n" --argjson t "$want" '[.[] | select(.name == $n and .source == "shipped" and
        .tests == $t and (.modified | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$")))] | length == 1' \
        "$T/list.json" >/dev/null || fail "shipped $n ($want tests) not listed: $(cat "$T/list.json")"
done
[ "$(jq length "$T/list.json")" = "$(find "$IOF_SRC/configs" -maxdepth 1 -name '*.json' | wc -l)" ] ||
    fail "list: $(jq -c '[.[].name]' "$T/list.json")"
curl -sf "${api}plans/quickstart?source=shipped" -o "$T/qs.json" || fail "GET plans/quickstart"
cmp "$T/qs.json" "$IOF_SRC/configs/quickstart.json" || fail "GET plans/quickstart is not the file"
code=$(curl -s -o "$T/nope" -w '%{http_code}' "${api}plans/nowhere")
[ "$code" = 404 ] || fail "GET plans/nowhere: $code $(cat "$T/nope")"
ok "plans: $(jq length "$T/list.json") shipped configs listed with their test counts; a plan's text"

# put NAME FILE OUT [CURL-ARGS...]: PUTs FILE as plan NAME; prints the status.
put() {
    local name=$1 file=$2 out=$3
    shift 3
    curl -s -o "$out" -w '%{http_code}' -X PUT -H "Content-Type: ${ctype:-application/json}" "$@" \
        --data-binary "@$file" --path-as-is "${api}plans/$name"
}
code=$(put mine "$IOF_SRC/configs/quickstart.json" "$T/put1")
[ "$code" = 201 ] && jq -e '.name == "mine" and .source == "user" and .tests == 2 and .created' "$T/put1" >/dev/null ||
    fail "PUT mine: $code $(cat "$T/put1")"
cmp "$T/plans/mine.json" "$IOF_SRC/configs/quickstart.json" || fail "plans/mine.json is not the body"
[ "$(stat -c %a "$T/plans/mine.json")" = 600 ] || fail "mine.json: $(ls -l "$T/plans/mine.json")"
code=$(put mine "$T/icf.cli.json" "$T/put2")
[ "$code" = 200 ] && jq -e '.created == false' "$T/put2" >/dev/null || fail "PUT mine again: $code $(cat "$T/put2")"
curl -sf "${api}plans/mine" -o "$T/mine.json" && cmp "$T/mine.json" "$T/icf.cli.json" || fail "GET plans/mine"
curl -sf "${api}plans" | jq -e --arg d "$(jq -r .name "$T/icf.cli.json")" '[.[] | select(.source == "user")] ==
    [{"name": "mine", "source": "user", "description": $d, "tests": 2, "modified": .[-1].modified}]' >/dev/null ||
    fail "list after PUT: $(curl -s "${api}plans")"
stray=$(find "$T/plans" -mindepth 1 ! -name mine.json)
[ -z "$stray" ] || fail "left in the plans folder: $stray"
ok "PUT plans/mine: 201 then 200, written 0600 as sent, listed as the user's"

code=$(put bad "$T/badplan.json" "$T/put3")
[ "$code" = 400 ] && jq -e --arg w "${why:0:40}" '.error.message | contains($w)' "$T/put3" >/dev/null ||
    fail "PUT a bad plan: $code $(cat "$T/put3")"
[ ! -e "$T/plans/bad.json" ] || fail "a bad plan was written"
long=$(printf 'x%.0s' $(seq 65))
for n in '..%2Fx' '%2E%2E%2Fx' '.x' "$long" 'a%20b' 'a:b'; do
    code=$(put "$n" "$IOF_SRC/configs/quickstart.json" "$T/put4")
    [ "$code" = 400 ] && jq -e '.error.message | contains("1 to 64 letters, digits")' "$T/put4" >/dev/null ||
        fail "PUT plans/$n: $code $(cat "$T/put4")"
done
code=$(put import "$IOF_SRC/configs/quickstart.json" "$T/put4")
[ "$code" = 405 ] || fail "PUT plans/import: $code $(cat "$T/put4")"
[ ! -e "$T/x.json" ] && [ "$(ls "$T/plans")" = mine.json ] || fail "a bad name wrote: $(ls -a "$T" "$T/plans")"
echo precious >"$T/target"
ln -s "$T/target" "$T/plans/evil.json"
code=$(put evil "$IOF_SRC/configs/quickstart.json" "$T/put5")
[ "$code" = 409 ] && jq -e '.error.message | contains("is a symbolic link")' "$T/put5" >/dev/null ||
    fail "PUT over a symbolic link: $code $(cat "$T/put5")"
[ "$(cat "$T/target")" = precious ] && [ -L "$T/plans/evil.json" ] || fail "the link's target was written"
code=$(curl -s -o "$T/get5" -w '%{http_code}' "${api}plans/evil")
[ "$code" = 409 ] || fail "GET through a symbolic link: $code $(cat "$T/get5")"
curl -sf "${api}plans" | jq -e 'all(.name != "evil")' >/dev/null || fail "a link listed as a plan"
code=$(ctype=text/plain put form "$IOF_SRC/configs/quickstart.json" "$T/put6")
[ "$code" = 415 ] || fail "PUT as text/plain: $code $(cat "$T/put6")"
ok "PUT refused: a bad plan ($(jq -r .error.message "$T/put3" | cut -c1-60)...), bad names, a symbolic link, a form"

# del NAME OUT [CURL-ARGS...]: DELETEs plan NAME; prints the status.
del() {
    local name=$1 out=$2
    shift 2
    curl -s -o "$out" -w '%{http_code}' -X DELETE "$@" "${api}plans/$name"
}
code=$(del quickstart "$T/del1")
[ "$code" = 403 ] && jq -e '.error.message | contains("shipped plans are read-only")' "$T/del1" >/dev/null ||
    fail "DELETE a shipped plan: $code $(cat "$T/del1")"
code=$(del mine "$T/del2" -H 'Origin: http://evil.example')
[ "$code" = 403 ] && [ -e "$T/plans/mine.json" ] || fail "DELETE from another Origin: $code $(cat "$T/del2")"
code=$(del mine "$T/del3")
[ "$code" = 200 ] && [ ! -e "$T/plans/mine.json" ] || fail "DELETE mine: $code $(cat "$T/del3")"
code=$(del mine "$T/del4")
[ "$code" = 404 ] || fail "DELETE mine again: $code $(cat "$T/del4")"
ok "DELETE: a shipped plan 403, another Origin 403, the user's 200 then 404"

# With tokens: a viewer reads the library, only an operator changes it.
"$IOFLEET" serve token new --http-tokens "$T/tokens" --scope operator --name alice >"$T/op.tok" 2>/dev/null
"$IOFLEET" serve token new --http-tokens "$T/tokens" --scope viewer --name bob >"$T/view.tok" 2>/dev/null
OP=$(cat "$T/op.tok")
VIEW=$(cat "$T/view.tok")
cl_spawn srv2 "$T/serve2.out" "$T/serve2.err" env IOFLEET_CONFIGS="$IOF_SRC/configs" \
    "$IOFLEET" serve --http 127.0.0.1:0 --listen 127.0.0.1:0 --insecure --db "$T/runs2.db" \
    --plans "$T/lib2" --http-tokens "$T/tokens"
cl_wait_log "$T/serve2.err" "iofleet serve: API on http://127.0.0.1:" 20
api=$(sed -n 's/.*API on \(http:[^ ]*\) .*/\1/p' "$T/serve2.err" | head -n1)
[ "$(stat -c %a "$T/lib2")" = 700 ] || fail "--plans folder: $(ls -ld "$T/lib2")"
code=$(curl -s -o "$T/v1" -w '%{http_code}' -H "Authorization: Bearer $VIEW" "${api}plans")
[ "$code" = 200 ] || fail "viewer GET plans: $code $(cat "$T/v1")"
code=$(put v "$IOF_SRC/configs/quickstart.json" "$T/v2" -H "Authorization: Bearer $VIEW")
[ "$code" = 403 ] && [ ! -e "$T/lib2/v.json" ] || fail "viewer PUT: $code $(cat "$T/v2")"
code=$(put o "$IOF_SRC/configs/quickstart.json" "$T/v3" -H "Authorization: Bearer $OP")
[ "$code" = 201 ] && [ -e "$T/lib2/o.json" ] || fail "operator PUT: $code $(cat "$T/v3")"
code=$(del o "$T/v4" -H "Authorization: Bearer $VIEW")
[ "$code" = 403 ] && [ -e "$T/lib2/o.json" ] || fail "viewer DELETE: $code $(cat "$T/v4")"
code=$(curl -s -o "$T/v5" -w '%{http_code}' -H "Authorization: Bearer $VIEW" \
    -H 'Content-Type: application/octet-stream' --data-binary "@$FIO" "${api}plans/import?name=a.fio")
[ "$code" = 403 ] || fail "viewer import: $code $(cat "$T/v5")"
code=$(del o "$T/v6" -H "Authorization: Bearer $OP")
[ "$code" = 200 ] && [ ! -e "$T/lib2/o.json" ] || fail "operator DELETE: $code $(cat "$T/v6")"
ok "tokens: a viewer lists the library, its PUT, DELETE and import 403; an operator's go through"
