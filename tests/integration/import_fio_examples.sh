# SPDX-License-Identifier: Apache-2.0
# iofleet import on every job file of a directory of fio examples (fio's own
# examples/ folder: IOF_FIO_EXAMPLES=/path/to/fio/examples; skipped without
# it, fio's files are not part of iofleet). Each file is either exact (exit
# 0 without --approximate; a note printed, such as where a test file goes,
# is kept in the plan's notes), approximated (refused, but imported with --approximate with
# every note printed and kept in the plan's notes) or refused (exit 2 with at
# least one "FILE:LINE: error:" and no output written). Prints the counts,
# and checks them against IOF_FIO_EXAMPLES_EXPECT ("CLEAN NOTED REFUSED")
# when given.
source "$(dirname "$0")/lib/common.bash"
[ -n "${IOF_FIO_EXAMPLES:-}" ] || skip "IOF_FIO_EXAMPLES (a directory of fio job files) not set"
[ -d "$IOF_FIO_EXAMPLES" ] || fail "IOF_FIO_EXAMPLES=$IOF_FIO_EXAMPLES is not a directory"
command -v jq >/dev/null || skip "jq not installed"
cd "$T"

clean=0 noted=0 refused=0 total=0
for f in "$IOF_FIO_EXAMPLES"/*.fio; do
    [ -e "$f" ] || continue
    name=$(basename "$f")
    total=$((total + 1))
    rm -f plan.json
    rc=0
    "$IOFLEET" import "$f" -o plan.json >out 2>err || rc=$?
    if [ "$rc" = 0 ]; then
        # Without --approximate a note only says where a file goes or why a
        # setting is what fio does (a synchronous engine's depth of 1); it is
        # kept in the plan's notes like any other.
        grep -E "^$name:[0-9]+: note: " err >printed || true
        jq -r '(.notes // [])[]' plan.json >kept
        diff printed kept >/dev/null || fail "$name: the printed notes are not the plan's notes"
        clean=$((clean + 1))
        echo "clean    $name$([ -s printed ] && echo " ($(wc -l <printed) note(s))")"
        continue
    fi
    [ "$rc" = 2 ] || fail "$name: exit $rc (expected 0 or 2)"
    [ ! -e plan.json ] || fail "$name: refused but wrote its output"
    grep -qE "^$name:[0-9]+: error: |^iofleet import: the imported plan is not valid: " err ||
        fail "$name: refused without a FILE:LINE error: $(head -3 err)"
    why=$(grep -m1 -E ': error: |not valid: ' err)
    if "$IOFLEET" import "$f" -o plan.json --approximate >out 2>err; then
        grep -q ": note: " err || fail "$name: refused, but --approximate imports it without a note"
        # every note printed is in the plan's notes, in order
        grep -E "^$name:[0-9]+: note: " err >printed || true
        jq -r '.notes[]' plan.json >kept
        diff printed kept >/dev/null ||
            fail "$name: the printed notes are not the plan's notes"
        noted=$((noted + 1))
        echo "noted    $name"
    else
        refused=$((refused + 1))
        echo "refused  $name: ${why#*: }"
    fi
done
[ "$total" -gt 0 ] || fail "no *.fio in $IOF_FIO_EXAMPLES"
ok "$total fio job files: $clean exact, $noted approximated with notes (--approximate), $refused refused with FILE:LINE"
if [ -n "${IOF_FIO_EXAMPLES_EXPECT:-}" ]; then
    [ "$clean $noted $refused" = "$IOF_FIO_EXAMPLES_EXPECT" ] ||
        fail "counts '$clean $noted $refused', expected '$IOF_FIO_EXAMPLES_EXPECT'"
    ok "the counts are the expected ones"
fi
