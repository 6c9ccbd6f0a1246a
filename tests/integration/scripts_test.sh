# SPDX-License-Identifier: Apache-2.0
# scripts/test: the default run is the default build's unit and integration tests
# without the `long`, `package`, `browser` and `slow` ones; --full (what .ci/run runs) has
# every stage but `hog`, its `default` stage the `long` tests too, its `browser` stage the
# browser tests alone; the `hog` stage, run when named, has the default run's tests. Checked with --list (the stages and their tests,
# from build/).
source "$(dirname "$0")/lib/common.bash"

[ -f "$IOF_SRC/build/CTestTestfile.cmake" ] || skip "build/ is not configured (cmake --preset default)"
export IOF_SKIP_DEPS=1
unset IOF_STAGES # the stages of a scripts/test that runs this test are not the defaults

expect_rc 0 "$IOF_SRC/scripts/test" --list
[ "$(grep -c '^[a-z]' "$T/out")" = 1 ] || fail "the default run is not one stage: $(cat "$T/out")"
expect_in "$T/out" "default: ctest -LE ^(package|browser|long|slow)\$"
grep -q '^    unit\.' "$T/out" || fail "no unit test in the default run"
grep -q '^    integration\.' "$T/out" || fail "no integration test in the default run"
for t in history report_html results_stream package_deb package_systemd container_image rate_stall_slow; do
    if grep -qx "    integration\.$t" "$T/out"; then fail "the default run has integration.$t"; fi
done
if grep -q '^    browser\.' "$T/out"; then fail "the default run has browser tests"; fi
ok "default run: $(grep -c '^    ' "$T/out") tests, none labelled long, package, browser or slow"

expect_rc 0 "$IOF_SRC/scripts/test" --full --list
stages=$(grep -o '^[a-z]*' "$T/out" | tr '\n' ' ')
[ "$stages" = "lint default asan tsan fuzz builds browser package windows " ] || fail "--full stages: $stages"
# The tests under each stage heading.
under() { awk -v s="$1:" '/^[a-z]/ { on = ($1 == s) } on && /^    / { print $1 }' "$T/out"; }
under default >"$T/full-default"
under package >"$T/package"
under browser >"$T/browser"
cp "$T/out" "$T/full"
IOF_STAGES=hog expect_rc 0 "$IOF_SRC/scripts/test" --full --list
under hog >"$T/hog"
[ -s "$T/hog" ] || fail "IOF_STAGES=hog lists no test under hog"
cp "$T/full" "$T/out"
for t in history report_html results_stream; do
    grep -qx "integration.$t" "$T/full-default" || fail "--full's default stage lacks the long test $t"
    if grep -qx "integration.$t" "$T/hog"; then fail "the hog stage runs the long test $t"; fi
done
grep -qx integration.package_deb "$T/package" || fail "the package stage lacks package_deb"
if grep -qx integration.package_systemd "$T/package"; then fail "package_systemd (slow) runs without --slow"; fi
if grep -q integration.package_ "$T/full-default"; then fail "--full's default stage runs package tests"; fi
grep -qx browser.live_page "$T/browser" || fail "the browser stage lacks browser.live_page"
if grep -v '^browser\.' "$T/browser"; then fail "the browser stage runs other tests"; fi
if grep -q '^browser\.' "$T/full-default" "$T/package"; then fail "browser tests outside the browser stage"; fi
ok "--full: $stages; long tests in default only, package tests in package only, browser tests in browser only"

grep -q 'exec scripts/test --full "\$@"' "$IOF_SRC/.ci/run" || fail ".ci/run does not run scripts/test --full"
ok ".ci/run runs scripts/test --full"
