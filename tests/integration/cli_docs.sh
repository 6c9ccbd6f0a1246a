# SPDX-License-Identifier: Apache-2.0
# The options each command's table defines (as its --help prints them, the
# help being generated from the table the parser uses) against the README's
# Usage section: every option is in the command's synopsis there, and the
# synopsis names no option the command does not have. Also: the docs' own
# "try it cheaply" example selects the null engine.
source "$(dirname "$0")/lib/common.bash"
README=$IOF_SRC/README.md
[ -r "$README" ] || skip "README.md not found at $README"

# The README's "## Usage" section.
awk '/^## /{u = ($0 == "## Usage")} u' "$README" >"$T/usage.md"
[ -s "$T/usage.md" ] || fail "README.md has no '## Usage' section"

# synopsis PREFIX: the option names in the README's code lines starting with
# PREFIX (and not with $SYN_NOT, a subcommand's) and their indented
# continuation lines, comments dropped.
synopsis() {
    awk -v pre="$1" -v not="${SYN_NOT:-}" '
        /^```/ { code = !code; on = 0; next }
        !code { next }
        index($0, pre) == 1 && (not == "" || index($0, not) != 1) { on = 1; sub(/#.*/, ""); print; next }
        on && $0 !~ /^[ \t]/ { on = 0 }
        on { sub(/#.*/, ""); print }' "$T/usage.md" |
        grep -oE -- '--[a-z][a-z-]*' | grep -vx -- '--help' | sort -u
}
# table CMD...: the long options CMD --help lists, --help itself left out.
table() {
    "$@" --help | grep -oE -- '^  (-[a-zA-Z], )?--[a-z][a-z-]*|^      --[a-z][a-z-]*' |
        grep -oE -- '--[a-z][a-z-]*' | grep -vx -- '--help' | sort -u
}

check() {
    local name=$1 prefix=$2
    shift 2
    table "$@" >"$T/table"
    synopsis "$prefix" >"$T/readme"
    [ -s "$T/table" ] || fail "$name: --help lists no options"
    [ -s "$T/readme" ] || fail "$name: no synopsis starting '$prefix' in README's Usage"
    missing=$(comm -23 "$T/table" "$T/readme" | tr '\n' ' ')
    extra=$(comm -13 "$T/table" "$T/readme" | tr '\n' ' ')
    [ -z "$missing" ] || fail "$name: options missing from README usage: $missing"
    [ -z "$extra" ] || fail "$name: README usage names options the command does not have: $extra"
    ok "$name: $(wc -l <"$T/table") options, README usage in line"
}
check "iofleet run" "iofleet run " "$IOFLEET" run
check "iofleet validate" "iofleet validate " "$IOFLEET" validate
check "iofleet agents" "iofleet agents " "$IOFLEET" agents
check "iofleet clean" "iofleet clean " "$IOFLEET" clean
check "iofleet pki init" "iofleet pki init " "$IOFLEET" pki init
SYN_NOT="iofleet runs export " check "iofleet runs" "iofleet runs " "$IOFLEET" runs
check "iofleet runs export" "iofleet runs export " "$IOFLEET" runs export
check "iofleet report" "iofleet report " "$IOFLEET" report
check "iofleet import" "iofleet import " "$IOFLEET" import
check "iofleet export" "iofleet export " "$IOFLEET" export
SYN_NOT="iofleet serve token " check "iofleet serve" "iofleet serve " "$IOFLEET" serve
check "iofleet serve token new" "iofleet serve token new " "$IOFLEET" serve token new
check "dynamo" "dynamo " "$IOF_BIN/dynamo"

# Every short option in a help is also in the README synopsis, as -x|--name.
for cmd in run validate "pki init" runs "runs export" report import export serve; do
    # shellcheck disable=SC2086
    "$IOFLEET" $cmd --help >"$T/help"
    { grep -oE '^  -[a-zA-Z], --[a-z-]+' "$T/help" || true; } | { grep -v -- '--help' || true; } |
        sed 's/^  //; s/, /|/' >"$T/shorts"
    while read -r s; do
        # [-x|--name] when optional, -x|--name when required (report -o).
        grep -qF -- "[$s]" "$T/usage.md" || grep -qF -- " $s " "$T/usage.md" ||
            fail "iofleet $cmd: '[$s]' not in README usage"
    done <"$T/shorts"
done
ok "short options shown as [-x|--name] (or -x|--name when required) in README usage"

# docs/workloads.md: the cheap-run example really is the null engine.
wl=$IOF_SRC/docs/workloads.md
ex=$(grep -oE -- "--set '?workers\[0\]\.engine=null'?" "$wl" | head -1 | tr -d "'")
[ -n "$ex" ] || fail "docs/workloads.md: the --set workers[0].engine=null example is gone"
expect_rc 0 "$IOFLEET" validate "$IOF_SRC/configs/quickstart.json" $ex
expect_in "$T/out" ", null,"
ok "docs/workloads.md's '$ex' selects the null engine"
