# SPDX-License-Identifier: Apache-2.0
# House rules a script can check (docs/architecture.md, CONTRIBUTING.md):
# every source file carries the licence's SPDX line, every C source then
# opens with a comment saying what it is for, and nothing writes to stderr
# but common/log.h, usage text and the live line.
source "$(dirname "$0")/lib/common.bash"
[ -d "$IOF_SRC/common" ] || skip "sources not found at $IOF_SRC"
cd "$IOF_SRC"

[ -f LICENSE ] && grep -q "Apache License" LICENSE || fail "LICENSE (Apache-2.0) is missing"
spdx="SPDX-License-Identifier: Apache-2.0"
bad=()
while IFS= read -r f; do
    head -n 2 "$f" | grep -qF "$spdx" || bad+=("$f")
done < <(find common proto dynamo manager tests scripts packaging deploy man .ci \
    -type f \( -name '*.[ch]' -o -name '*.sh' -o -name '*.bash' -o -name '*.py' \
    -o -name '*.yaml' -o -name 'CMakeLists.txt' -o -name '*.cmake' -o -name '*.[158]' \) \
    -not -path '*/corpus/*' | sort)
[ ${#bad[@]} -eq 0 ] || fail "no '$spdx' in the first two lines: ${bad[*]}"
ok "every source file carries the SPDX licence line"

bad=()
while IFS= read -r f; do
    sed -n 2p "$f" | grep -q '^/\*' || bad+=("$f")
done < <(find common proto dynamo manager tests -name '*.[ch]' | sort)
[ ${#bad[@]} -eq 0 ] || fail "no opening comment after the SPDX line: ${bad[*]}"
ok "every C file opens with a comment"

# Files stay small enough to read in one sitting (CONTRIBUTING.md): no
# product C file is over 1,500 lines.
long=$(find common proto dynamo manager -name '*.[ch]' -print0 | sort -z |
    xargs -0 awk 'FNR == 1 && prev && n > 1500 { print prev " (" n " lines)" }
        { prev = FILENAME; n = FNR }
        END { if (n > 1500) print prev " (" n " lines)" }')
[ -z "$long" ] || fail "product C files over 1,500 lines (split them along their parts): $long"
ok "no product C file is over 1,500 lines"

# Direct writes to stderr outside common/log.c may only print usage text
# (the format starts "usage: ") or the live line (manager/console.c).
direct=$(find common proto dynamo manager -name '*.c' | sort |
    grep -v -e '^common/log.c$' -e '^manager/console.c$' |
    xargs awk '
        FNR == 1 { pending = 0 }
        pending { if ($0 ~ /"/) { if ($0 !~ /^[ \t]*"usage: /) print FILENAME ":" FNR - 1; pending = 0 }; next }
        /v?fprintf\(stderr|fputs\(.*stderr|fputc\(.*stderr/ {
            line = $0; sub(/.*stderr,?/, "", line)
            if (line ~ /"/) { if (line !~ /^[ \t]*"usage: /) print FILENAME ":" FNR }
            else pending = 1
        }')
[ -z "$direct" ] || fail "stderr written directly, not usage text: $direct (log through common/log.h: IOF_ERROR, IOF_WARN, IOF_USER...)"
ok "stderr is written through common/log.h but for usage text and the live line"

# One naming style for unit tests (CONTRIBUTING.md): a cmocka case, a static
# void function of void **state, is test_<what>; helpers have other signatures.
cases=$(grep -nE '^static void [A-Za-z_0-9#]+\(void \*\*[a-z]*\)' tests/unit/*/test_*.c |
    grep -vE '^[^:]+:[0-9]+:static void test_' || true)
[ -z "$cases" ] || fail "cmocka cases not named test_<what>: $cases"
ok "every cmocka case is named test_<what>"
