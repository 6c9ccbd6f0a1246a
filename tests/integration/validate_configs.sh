# SPDX-License-Identifier: Apache-2.0
# Every shipped plan validates.
source "$(dirname "$0")/lib/common.bash"
n=0
for f in "$IOF_SRC"/configs/*.json; do
    expect_rc 0 "$IOFLEET" validate "$f"
    expect_in "$T/out" "tests:"
    n=$((n + 1))
done
[ "$n" -gt 0 ] || fail "no plans in configs/"
ok "$n plans validate"
