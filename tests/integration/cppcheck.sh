# SPDX-License-Identifier: Apache-2.0
# cppcheck (warning and portability checks) on the product sources: common/, proto/,
# dynamo/, manager/. Any finding fails but those waived, each with its reason, in
# tests/cppcheck-suppressions.
source "$(dirname "$0")/lib/common.bash"
command -v cppcheck >/dev/null || skip "cppcheck not installed (Debian package cppcheck)"

cd "$IOF_SRC"
rc=0
cppcheck --enable=warning,portability --inline-suppr -q -j2 -D_GNU_SOURCE \
    -I common -I proto -I dynamo -I manager -I . \
    --suppress=missingIncludeSystem --suppress=missingInclude \
    --suppressions-list=tests/cppcheck-suppressions --error-exitcode=1 \
    --template='{file}:{line}: {severity}: {id}: {message}' \
    common proto dynamo manager >"$T/out" 2>&1 || rc=$?
if [ "$rc" != 0 ] || [ -s "$T/out" ]; then
    cat "$T/out" >&2
    fail "cppcheck findings (fix them, or waive one in tests/cppcheck-suppressions saying why)"
fi
ok "cppcheck: no finding in common, proto, dynamo and manager but those waived"
