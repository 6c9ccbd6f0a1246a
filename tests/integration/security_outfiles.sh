# SPDX-License-Identifier: Apache-2.0
# Files the manager writes for the user are never written through a
# symbolic link (docs/security.md, "Files the manager writes"). Someone who
# can write the directory plants links where a root-run iofleet will write:
#  1. a dangling link at each result file (--csv, --json, --timeseries,
#     --iometer-csv): refused (exit 2, naming the path and the link) before
#     anything runs; the link's target is never created;
#  2. the same with --force, and a link to an existing file: the link is
#     replaced by the results, the file it pointed to is untouched;
#  3. report -o, import -o, export -o and pki init: the same rules;
#  4. a run refused after a result file was opened (another one cannot be
#     created) leaves neither that file nor its temporary file.
source "$(dirname "$0")/lib/common.bash"
command -v jq >/dev/null || skip "jq not installed"
cd "$T" || exit 1

plan p.json <<'P'
{"name": "links", "run": {"duration": "1s", "interval": "500ms"},
 "specs": [{"name": "s", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "null", "targets": [{"path": "f.dat", "size": "1m"}]}]}
P
mkdir -p "$T/victims"
# precious: a file the links point to; its content must survive.
precious() { printf 'precious\n' >"$T/victims/$1"; }
untouched() { [ "$(cat "$T/victims/$1")" = precious ] || fail "$2: $T/victims/$1 was written through"; }
absent() { if [ -e "$T/victims/$1" ] || [ -L "$T/victims/$1" ]; then fail "$2: $T/victims/$1 was created"; fi; }
regular() { if [ ! -f "$1" ] || [ -L "$1" ]; then fail "$2: $1 is not a regular file"; fi; }
no_tmp() {
    local left
    left=$(find "$T" -maxdepth 1 -name '*.tmp-*')
    [ -z "$left" ] || fail "$1: temporary files left: $left"
}

# --- 1. dangling links at result files ----------------------------------------------------
for opt in --csv --json --timeseries --iometer-csv --iometer-instant; do
    name=out$opt
    rm -f "$name"
    ln -s "$T/victims/$name" "$name"
    expect_rc 2 "$IOFLEET" run p.json --workdir "$T/w" --no-db --quiet "$opt" "$name"
    expect_in "$T/err" "$opt $name: exists as a symbolic link, which is never followed; give --force"
    absent "$name" "$opt"
    [ -L "$name" ] || fail "$opt: the link was removed without --force"
done
[ ! -e "$T/w" ] || fail "the run started before the refusal"
no_tmp "dangling links"
ok "a dangling link at --csv, --json, --timeseries, --iometer-csv, --iometer-instant: refused, its target not created"

# --- 2. --force replaces the link; links to existing files --------------------------------
args=()
for opt in --csv --json --timeseries --iometer-csv --iometer-instant; do
    args+=("$opt" "out$opt")
done
ln -sf "$T/victims/hist.db" hist.db
expect_rc 0 "$IOFLEET" run p.json --workdir "$T/w" --no-db --quiet --force "${args[@]}"
for opt in --csv --json --timeseries --iometer-csv --iometer-instant; do
    name=out$opt
    absent "$name" "$opt --force"
    regular "$name" "$opt --force"
done
expect_in out--csv row_type
jq -e '.run.finished == true' out--json >/dev/null || fail "--json: the document is not finished"
for opt in --csv --json; do
    name=out$opt
    precious "$name"
    rm -f "$name"
    ln -s "$T/victims/$name" "$name"
    expect_rc 2 "$IOFLEET" run p.json --workdir "$T/w" --no-db --quiet "$opt" "$name"
    untouched "$name" "$opt"
    expect_rc 0 "$IOFLEET" run p.json --workdir "$T/w" --no-db --quiet --force "$opt" "$name"
    untouched "$name" "$opt --force"
    regular "$name" "$opt --force"
done
no_tmp "--force"
ok "--force replaces a link (dangling or to a file) with the results; its target untouched"

# --- 3. report, import, export, pki --------------------------------------------------------
ln -s "$T/victims/r.html" r.html
expect_rc 2 "$IOFLEET" report out--json -o r.html
expect_in "$T/err" "r.html: exists as a symbolic link"
absent r.html "report -o"
precious r.md
rm r.html
ln -s "$T/victims/r.md" r.md
expect_rc 0 "$IOFLEET" report out--json -o r.md --format md --force
untouched r.md "report -o --force"
expect_in r.md links

ln -s "$T/victims/plan.json" plan.json
expect_rc 2 "$IOFLEET" import "$IOF_SRC/configs/fio/four-corners.fio" -o plan.json
expect_in "$T/err" "plan.json: exists as a symbolic link"
absent plan.json "import -o"
ln -s "$T/victims/q.icf" q.icf
expect_rc 2 "$IOFLEET" export p.json -o q.icf
absent q.icf "export -o"
precious q.icf
expect_rc 0 "$IOFLEET" export p.json -o q.icf --force
untouched q.icf "export -o --force"
expect_in q.icf "Version 1.1.0"

mkdir -m 0700 pki
ln -s "$T/victims/ca-key.pem" pki/ca-key.pem
expect_rc 1 "$IOFLEET" pki init pki --agent node1
expect_in "$T/err" "pki/ca-key.pem: already exists"
absent ca-key.pem "pki init"
no_tmp "report, import, export"
ok "report -o, import -o, export -o, pki init: links refused, replaced only with --force"

# --- 4. a run refused after one file was opened leaves nothing -----------------------------
expect_rc 2 "$IOFLEET" run p.json --workdir "$T/w" --no-db --quiet --csv fresh.csv \
    --timeseries "$T/no/such/dir/ts.csv"
expect_in "$T/err" "--timeseries $T/no/such/dir/ts.csv: cannot create: No such file or directory"
[ ! -e fresh.csv ] || fail "the refused run left fresh.csv"
no_tmp "refused run"
ok "a run refused before it began leaves no result file and no temporary file"
