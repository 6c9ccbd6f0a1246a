# SPDX-License-Identifier: Apache-2.0
# scripts/test: the default run is the default build's unit and integration tests
# without the `long`, `package`, `browser` and `slow` ones; --full (what .ci/run runs) has
# the stages lint, hog, asan, tsan, fuzz, builds, browser, package and windows: its `hog`
# stage the default run's tests and the `long` ones (beside busy loops), its `asan` stage
# the same less the `static` checks, its `browser` stage the browser tests alone. Checked
# with --list (the stages and their tests, from build/).
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
[ "$stages" = "lint hog asan tsan fuzz builds browser package windows " ] || fail "--full stages: $stages"
# The tests under each stage heading.
under() { awk -v s="$1:" '/^[a-z]/ { on = ($1 == s) } on && /^    / { print $1 }' "$T/out"; }
under hog >"$T/hog"
under package >"$T/package"
under browser >"$T/browser"
[ -s "$T/hog" ] || fail "--full's hog stage lists no test"
for t in history report_html results_stream clang_tidy; do
    grep -qx "integration.$t" "$T/hog" || fail "--full's hog stage lacks the long test $t"
done
# The asan stage (build-asan/ may not be configured yet): the hog stage's filter and `static`.
expect_in "$T/out" "hog: ctest -LE ^(package|browser|slow)\$"
expect_in "$T/out" "asan: ctest -LE ^(package|browser|static|slow)\$"
ctest --test-dir "$IOF_SRC/build" -N -L '^static$' | sed -n 's/^ *Test *#[0-9]*: //p' | sort >"$T/static"
printf 'integration.%s\n' clang_tidy cppcheck doc_audience doc_paths layering shellcheck source_style |
    cmp -s - "$T/static" || fail "the static checks are: $(tr '\n' ' ' <"$T/static")"
grep -qx integration.package_deb "$T/package" || fail "the package stage lacks package_deb"
if grep -qx integration.package_systemd "$T/package"; then fail "package_systemd (slow) runs without --slow"; fi
if grep -q integration.package_ "$T/hog"; then fail "--full's hog stage runs package tests"; fi
grep -qx browser.live_page "$T/browser" || fail "the browser stage lacks browser.live_page"
if grep -v '^browser\.' "$T/browser"; then fail "the browser stage runs other tests"; fi
if grep -q '^browser\.' "$T/hog" "$T/package"; then fail "browser tests outside the browser stage"; fi
ok "--full: $stages; long tests in hog, static checks not under asan, package tests in package only, browser tests in browser only"

grep -q 'exec scripts/test --full "\$@"' "$IOF_SRC/.ci/run" || fail ".ci/run does not run scripts/test --full"
ok ".ci/run runs scripts/test --full"
