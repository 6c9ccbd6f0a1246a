# SPDX-License-Identifier: Apache-2.0
# Names and tags with control characters (docs/security.md, "Text"):
# 1. refused where they are given: a plan's name, spec and group names
#    (exit 2, the JSON path and the character escaped), `iofleet run --tag`
#    and `iofleet runs import --tag`, an imported fio job's name;
# 2. a history row that holds them anyway (written before the policy, put
#    there by hand) is printed escaped by `iofleet runs` (table, --json) and
#    by `iofleet report` (Markdown, HTML): no raw ESC, BEL or C1 is written.
source "$(dirname "$0")/lib/common.bash"
command -v python3 >/dev/null || skip "python3 not installed"

ESC=$'\e' BEL=$'\a'
# raw_free FILE: FILE holds no ESC, BEL, CSI (0x9b) or C1 CSI (U+009B).
raw_free() {
    python3 - "$1" <<'PY' || fail "raw control bytes in $1: $(od -c "$1" | head -20)"
import sys
b = open(sys.argv[1], "rb").read()
sys.exit(1 if any(c in b for c in (b"\x1b", b"\x07", b"\xc2\x9b")) or b"\x9b" in b.replace(b"\xc2\x9b", b"") else 0)
PY
}

plan good.json <<'P'
{"name": "names", "run": {"ramp": "1s", "duration": "200ms", "interval": "100ms"},
 "specs": [{"name": "4k", "lines": [{"size": "4k", "burst": 4, "delay": "1ms"}]}],
 "workers": [{"engine": "null", "targets": [{"path": "n", "size": "1m"}]}]}
P
DB=$T/runs.db
run() { "$IOFLEET" run "$T/good.json" --workdir "$T/work" --quiet --db "$DB" "$@"; }

# --- 1. refused where given ---------------------------------------------------------------
sed "s/\"names\"/\"t\\\\u001b]0;owned\\\\u0007\"/" "$T/good.json" >"$T/bad-plan.json"
expect_rc 2 "$IOFLEET" validate "$T/bad-plan.json"
expect_in "$T/err" "bad-plan.json: name: must not contain control characters, got \\x1b (a control character) at byte 1 of 't\\x1b]0;owned\\x07'"
raw_free "$T/err"
sed "s/\"4k\", \"lines\"/\"4k\\\\u009b2J\", \"lines\"/" "$T/good.json" >"$T/bad-spec.json"
expect_rc 2 "$IOFLEET" validate "$T/bad-spec.json"
expect_in "$T/err" "specs[0].name: must not contain control characters, got \\u009b (a C1 control character) at byte 2"
raw_free "$T/err"
ok "a plan or spec name with ESC or C1 CSI is refused, the character escaped"

expect_rc 2 run --tag "nightly${ESC}]2;x${BEL}"
expect_in "$T/err" "--tag must not contain control characters, got \\x1b (a control character) at byte 7"
raw_free "$T/err"
[ ! -e "$DB" ] || [ "$(sqlite3 "$DB" 'SELECT count(*) FROM runs')" = 0 ] ||
    fail "a refused run was recorded"
expect_rc 0 run --tag nightly --json "$T/r.json"
expect_rc 2 "$IOFLEET" runs import "$T/r.json" --db "$DB" --tag "x${ESC}[2J"
expect_in "$T/err" "--tag must not contain control characters, got \\x1b"
ok "--tag with ESC is refused by iofleet run and iofleet runs import"

printf '[job\033[31mred]\nrw=randread\nsize=1m\n' >"$T/j.fio"
expect_rc 2 "$IOFLEET" import "$T/j.fio" -o "$T/j.json"
expect_in "$T/err" "j.fio:1: error: section name 'job\\x1b[31mred': must not contain control characters"
raw_free "$T/err"
ok "an imported fio section name with ESC is refused with its line"

# --- 2. old rows are printed escaped ------------------------------------------------------
command -v sqlite3 >/dev/null || skip "sqlite3 not installed (part 2)"
sqlite3 "$DB" "UPDATE runs SET tag = 'pwn' || char(27) || ']0;owned' || char(7) || char(155),
                               plan_name = 'p' || char(27) || '[2J' WHERE tag = 'nightly';
              UPDATE tests SET spec = 's' || char(27) || '[5m' || char(7)"
[ "$(sqlite3 "$DB" "SELECT count(*) FROM runs WHERE instr(tag, char(27)) > 0")" = 1 ] ||
    fail "the ESC was not stored"
expect_rc 0 "$IOFLEET" runs --db "$DB"
raw_free "$T/out"
expect_in "$T/out" 'p\x1b[2J'
expect_in "$T/out" 'pwn\x1b]0;owne'
ok "iofleet runs prints a stored ESC, BEL and C1 as \\x1b, \\x07, \\u009b"
expect_rc 0 "$IOFLEET" runs --db "$DB" --json
raw_free "$T/out"
expect_in "$T/out" '"tag":"pwn\u001b]0;owned\u0007\u009b"'
ok "iofleet runs --json escapes them as JSON"
id=$(sqlite3 "$DB" 'SELECT id FROM runs LIMIT 1')
expect_rc 0 "$IOFLEET" report "$id" --db "$DB" --format md -o -
raw_free "$T/out"
expect_in "$T/out" '| p\x1b\[2J |'
expect_in "$T/out" '| s\x1b\[5m\x07 |'
ok "iofleet report --format md escapes them (and Markdown's [)"
expect_rc 0 "$IOFLEET" report "$id" --db "$DB" -o "$T/r.html"
raw_free "$T/r.html"
expect_in "$T/r.html" 'p\x1b[2J'
ok "iofleet report (HTML) shows them as \\x1b, never raw"
