# SPDX-License-Identifier: Apache-2.0
# Every file or folder the contributor guide (CONTRIBUTING.md) and the
# performance page name exists: words with a '/' in code blocks, words with a
# '/' or a file name extension in `code` spans, and path/like/this.md in prose
# (links too), from the top of the tree or from the page's folder. A
# placeholder such as test_<name>.c or a glob such as out_*.c must match at
# least one file; build/ outputs are not checked.
source "$(dirname "$0")/lib/common.bash"
[ -r "$IOF_SRC/CONTRIBUTING.md" ] || fail "CONTRIBUTING.md not found in $IOF_SRC"

# paths DOC: the path-like words DOC names, one a line.
paths() {
    local doc=$1
    {
        awk '/^```/ { f = !f; next } f' "$doc" | tr -s ' \t' '\n' | grep '/' || true
        awk '/^```/ { f = !f; next } !f' "$doc" | tr '\n' ' ' | grep -oE '`[^`]+`' |
            tr -d '`' | tr -s ' ' '\n' | grep -E '/|^[.]?[A-Za-z0-9_<>-]*[.][A-Za-z-]+$' || true
        awk '/^```/ { f = !f; next } !f' "$doc" | sed 's/`[^`]*`//g' |
            grep -oE '([A-Za-z0-9_.-]+/)+[A-Za-z0-9_<>*.-]*\.(md|c|h|sh|bash|json|[158])\b' || true
    } | sed -E 's/^[(]+//; s/[.,;:)]+$//' |
        grep -vE '[()=:%",;'\''$]|^[-/~]|^build(-[a-z]+)?/|^https?' | grep -E '[A-Za-z]' |
        sed -E 's/<[^>]*>/*/g' | sort -u
}

cd "$IOF_SRC" || exit 1
shopt -s nullglob
# check DOC: fails naming every path DOC names that does not exist.
check() {
    local doc=$1 p m f found missing=()
    paths "$doc" >"$T/paths"
    [ -s "$T/paths" ] || fail "$doc: no file names found (is the extraction broken?)"
    while IFS= read -r p; do
        # shellcheck disable=SC2206 # p may be a glob: let it expand
        m=($p ${doc%/*}/$p)
        found=0
        for f in "${m[@]}"; do [ -e "$f" ] && found=1; done
        [ $found -eq 1 ] || missing+=("$p")
    done <"$T/paths"
    [ ${#missing[@]} -eq 0 ] || fail "$doc names files that do not exist: ${missing[*]}"
    ok "$doc: the $(wc -l <"$T/paths") files and folders it names exist"
}
check CONTRIBUTING.md
check docs/performance.md
