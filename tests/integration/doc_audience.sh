# SPDX-License-Identifier: Apache-2.0
# Every doc page opens with who it is for: in README.md, CONTRIBUTING.md,
# docs/*.md and docs/bench-log/*.md the title is followed by one line of its
# own that starts "For " (e.g. "For operators who ..."), then a blank line.
source "$(dirname "$0")/lib/common.bash"
cd "$IOF_SRC" || exit 1
[ -r README.md ] || skip "README.md not found in $IOF_SRC"

bad=()
n=0
for f in README.md CONTRIBUTING.md docs/*.md docs/bench-log/*.md; do
    [ -f "$f" ] || continue
    n=$((n + 1))
    awk 'NR == 1 && !/^# / { exit 1 }
         NR == 2 && !/^$/ { exit 1 }
         NR == 3 && !/^For / { exit 1 }
         NR == 4 { exit !/^$/ }
         END { if (NR < 4) exit 1 }' "$f" || bad+=("$f")
done
[ ${#bad[@]} -eq 0 ] ||
    fail "no one-line 'For ...' (who the page is for) under the title of: ${bad[*]}"
ok "all $n doc pages say under their title who they are for"
