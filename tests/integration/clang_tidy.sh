# SPDX-License-Identifier: Apache-2.0
# clang-tidy with the curated checks of .clang-tidy on every product C file
# (common/, proto/, dynamo/, manager/), compiled as build/compile_commands.json says:
# no finding but those waived in tests/clang-tidy-waivers, and no stale waiver.
source "$(dirname "$0")/lib/common.bash"
command -v clang-tidy >/dev/null || skip "clang-tidy not installed (Debian package clang-tidy)"
command -v git >/dev/null && git -C "$IOF_SRC" rev-parse >/dev/null 2>&1 || skip "not a git checkout"
db=$IOF_BIN/..
[ -f "$db/compile_commands.json" ] || skip "no compile_commands.json beside $IOF_BIN"

cd "$IOF_SRC"
git ls-files 'common/*.c' 'proto/*.c' 'dynamo/*.c' 'dynamo/engines/*.c' 'manager/*.c' |
    xargs -P2 -n8 clang-tidy -p "$db" --quiet >"$T/tidy" 2>&1 || true
grep -F ': warning: ' "$T/tidy" | sed "s|^$IOF_SRC/||" >"$T/findings" || true
grep -F ': error: ' "$T/tidy" && fail "clang-tidy could not compile a file (see above)"
waivers=$(awk '!/^#/ && NF { print $1 " " $2 }' tests/clang-tidy-waivers)
left=()
while IFS= read -r line; do
    file=${line%%:*}
    check=$(sed -n 's/.*\[\([a-z0-9.-]*\)\]$/\1/p' <<<"$line")
    grep -qxF "$file $check" <<<"$waivers" || left+=("$line")
done <"$T/findings"
if [ ${#left[@]} -gt 0 ]; then
    printf '%s\n' "${left[@]}" >&2
    fail "${#left[@]} clang-tidy findings (fix them, or waive one in tests/clang-tidy-waivers saying why)"
fi
while read -r file check; do
    [ -n "$file" ] || continue
    grep -q "^$file:.*\[$check\]\$" "$T/findings" || fail "stale waiver: $file $check matches no finding"
done <<<"$waivers"
ok "clang-tidy ($(grep -c '^  [a-z]' .clang-tidy) checks): no finding but the $(wc -l <<<"$waivers") waived"
