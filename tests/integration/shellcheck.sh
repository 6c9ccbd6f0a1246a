# SPDX-License-Identifier: Apache-2.0
# Runs shellcheck on every shell script of the repository (the tracked *.sh and *.bash files,
# scripts/, .ci/run, the bash completion, the .deb's maintainer scripts, the container
# build and the benches), with the settings of .shellcheckrc: no finding but those
# waived in tests/shellcheck-waivers, and no waiver left that matches nothing.
source "$(dirname "$0")/lib/common.bash"
command -v shellcheck >/dev/null || skip "shellcheck not installed (Debian package shellcheck)"
command -v git >/dev/null && git -C "$IOF_SRC" rev-parse >/dev/null 2>&1 || skip "not a git checkout"

cd "$IOF_SRC"
mapfile -t files < <(
    {
        git ls-files '*.sh' '*.bash' .ci/run scripts packaging/bash-completion \
            packaging/deb/postinst packaging/deb/postrm packaging/deb/prerm \
            packaging/container/build-image
        git ls-files tests/bench | while read -r f; do
            head -n1 "$f" | grep -q '^#!.*sh' && echo "$f"
        done
    } | sort -u
)
[ "${#files[@]}" -gt 50 ] || fail "only ${#files[@]} shell scripts found"

shellcheck -f gcc "${files[@]}" >"$T/findings" 2>&1 || true
waivers=$(awk '!/^#/ && NF { print $1 " " $2 }' tests/shellcheck-waivers)
left=()
while IFS= read -r line; do
    file=${line%%:*}
    code=$(sed -n 's/.*\[\(SC[0-9]*\)\]$/\1/p' <<<"$line")
    grep -qxF "$file $code" <<<"$waivers" || left+=("$line")
done <"$T/findings"
if [ ${#left[@]} -gt 0 ]; then
    printf '%s\n' "${left[@]}" >&2
    fail "${#left[@]} shellcheck findings (fix them, or waive one in tests/shellcheck-waivers saying why)"
fi
while read -r file code; do
    [ -n "$file" ] || continue
    grep -q "^$file:.*\[$code\]\$" "$T/findings" || fail "stale waiver: $file $code matches no finding"
done <<<"$waivers"
ok "${#files[@]} shell scripts: no finding but the $(wc -l <<<"$waivers") waived"
