# SPDX-License-Identifier: Apache-2.0
# iofleet serve's plan endpoints (docs/api.md, Plans): POST /api/v1/plans/
# import answers, for a fio job file, an Iometer .icf and a vdbench file, the
# very bytes `iofleet import` writes and the notes it prints; a file the
# importer refuses is a 400 naming its line, a bad parameter a 400 naming it;
# POST /api/v1/plans/export answers the bytes of `iofleet export`, a bad plan
# a 400 with the plan loader's message.
source "$(dirname "$0")/lib/cluster.bash"
command -v curl >/dev/null || skip "curl not installed"
command -v jq >/dev/null || skip "jq not installed"

FIO=$IOF_SRC/configs/fio/four-corners.fio
ICF=$IOF_SRC/tests/data/iometer/two-workers.icf
VDB=$IOF_SRC/tests/data/vdbench/curve.vdb
HCI=$IOF_SRC/tests/data/vdbench/vdb-10vmdk-10ws-4k-70rdpct-50randompct-2threads

cl_spawn srv "$T/serve.out" "$T/serve.err" "$IOFLEET" serve --http 127.0.0.1:0 \
    --listen 127.0.0.1:0 --insecure --db "$T/runs.db"
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
