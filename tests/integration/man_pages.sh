# SPDX-License-Identifier: Apache-2.0
# The man pages under man/ against the programs: every command that
# `iofleet --help` lists has its own section in iofleet(1), and every option
# its --help table defines (the table the parser uses) is a tagged entry in
# that section; every dynamo option is one in dynamo(8) (the plan keys of
# iofleet-plan(5): tests/unit/proto/test_plan_keys.c). The pages format without a
# warning.
source "$(dirname "$0")/lib/common.bash"
MAN=$IOF_SRC/man
for p in iofleet.1 dynamo.8 iofleet-plan.5; do
    [ -r "$MAN/$p" ] || fail "man/$p is missing"
done

# Formatting: groff's own warnings (what lintian's man page check runs).
if command -v groff >/dev/null 2>&1; then
    for p in iofleet.1 dynamo.8 iofleet-plan.5; do
        LC_ALL=C.UTF-8 groff -man -ww -z -K utf8 "$MAN/$p" 2>"$T/groff" || true
        [ ! -s "$T/groff" ] || { cat "$T/groff"; fail "man/$p: groff warnings"; }
    done
    ok "groff -ww formats the three pages without a warning"
else
    echo "note: groff not installed, formatting not checked"
fi

# tags FILE [SECTION-PREFIX]: the tag lines (the line after each .TP) of FILE,
# or only of the .SS section whose title starts with SECTION-PREFIX, with
# roff's \- turned into -.
tags() {
    awk -v sec="${2:-}" '
        /^\.S[SH] / {
            t = $0; sub(/^\.S[SH] "?/, "", t)
            in_sec = (sec == "" || index(t, sec) == 1)
            next
        }
        !in_sec { next }
        tp { print; tp = 0; next }
        /^\.TP/ { tp = 1 }' "$1" | sed 's/\\-/-/g'
}
# help_opts CMD...: "--name" and "-x" of every option CMD --help lists.
help_opts() {
    "$@" --help | grep -oE -- '^  (-[a-zA-Z], )?--[a-z][a-z-]*|^      --[a-z][a-z-]*' |
        grep -oE -- '-[a-zA-Z]\b|--[a-z][a-z-]*' | sort -u
}
# check_opts NAME PAGE SECTION CMD...: every option of CMD's table is in a tag
# of SECTION of PAGE.
check_opts() {
    local name=$1 page=$2 sec=$3 o n=0
    shift 3
    tags "$page" "$sec" >"$T/tags"
    # -h/--help of each command is said once, in DESCRIPTION and OPTIONS.
    help_opts "$@" | { if [ "${sec#iofleet }" != "$sec" ]; then grep -vxE -- '-h|--help'; else cat; fi; } >"$T/opts"
    [ -s "$T/opts" ] || fail "$name: --help lists no options"
    while read -r o; do
        grep -qE -- "(^|[^a-z-])$o([^a-z-]|$)" "$T/tags" ||
            fail "$name: option $o is not documented in man/${page##*/} ('$sec')"
        n=$((n + 1))
    done <"$T/opts"
    ok "$name: all $n options in man/${page##*/}"
}

# The commands of the overview ("  run        run every test ..."; "pki init"
# is two words, the description follows two or more spaces).
"$IOFLEET" --help | awk '/^commands:/ { c = 1; next } c && /^$/ { exit } c' |
    sed -E 's/^  ([a-z][a-z ]*[a-z])  .*/\1/' >"$T/commands"
[ -s "$T/commands" ] || fail "iofleet --help lists no commands"
while read -r cmd; do
    grep -qE "^\.SS \"iofleet $cmd( |\")" "$MAN/iofleet.1" ||
        fail "iofleet $cmd has no section (.SS \"iofleet $cmd ...\") in man/iofleet.1"
    [ "$cmd" = help ] && continue
    # shellcheck disable=SC2086
    check_opts "iofleet $cmd" "$MAN/iofleet.1" "iofleet $cmd" "$IOFLEET" $cmd
done <"$T/commands"
check_opts "iofleet runs export" "$MAN/iofleet.1" "iofleet runs export" "$IOFLEET" runs export
check_opts "iofleet" "$MAN/iofleet.1" "OPTIONS" "$IOFLEET"
check_opts "dynamo" "$MAN/dynamo.8" "OPTIONS" "$IOF_BIN/dynamo"

# The plan keys against iofleet-plan(5): tests/unit/proto/test_plan_keys.c walks the
# schema table itself (proto_plan_keys()).
