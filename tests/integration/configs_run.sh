# SPDX-License-Identifier: Apache-2.0
# Every shipped plan (configs/*.json) validates and runs end to end, made
# cheap: null engine in every worker group, 4m test files, a short measured
# window, at most 3 cycle steps. The run prints one "== test" table per test
# that `iofleet validate` expands.
source "$(dirname "$0")/lib/common.bash"
command -v jq >/dev/null || skip "jq not installed"

started=$SECONDS
nplans=0
ntests=0
for f in "$IOF_SRC"/configs/*.json; do
    name=$(basename "$f" .json)
    expect_rc 0 "$IOFLEET" validate "$f"
    expect_in "$T/out" "tests:"

    # Overrides generated from the plan itself.
    sets=()
    ngroups=$(jq '.workers | length' "$f")
    for ((g = 0; g < ngroups; g++)); do
        sets+=(--set "workers[$g].engine=null")
        ntargets=$(jq ".workers[$g].targets | length" "$f")
        for ((i = 0; i < ntargets; i++)); do
            tpath=$(jq -r ".workers[$g].targets[$i].path" "$f")
            if [ "${tpath#/}" != "$tpath" ]; then
                # An absolute path (device or file) becomes a small test file.
                sets+=(--set "workers[$g].targets[$i].path=abs-$g-$i.dat")
            fi
            sets+=(--set "workers[$g].targets[$i].size=4m")
            if [ "$(jq ".workers[$g].targets[$i] | has(\"range\")" "$f")" = true ]; then
                sets+=(--set "workers[$g].targets[$i].range={\"offset\":0,\"size\":\"2m\"}")
            fi
        done
    done
    # A cycle runs its first 3 steps only.
    cparam=$(jq -r '.cycle // {} | keys - ["size", "read", "random"] | .[0] // empty' "$f")
    if [ -n "$cparam" ]; then
        read -r from to step < <(jq -r ".cycle.$cparam | \"\(.from) \(.to) \(.step)\"" "$f")
        n=${step:1}
        case $step in
            +*) third=$((from + 2 * n)) ;;
            *) third=$((from * n * n)) ;;
        esac
        if [ "$third" -lt "$to" ]; then sets+=(--set "cycle.$cparam.to=$third"); fi
    fi

    expect_rc 0 "$IOFLEET" validate "$f" "${sets[@]}"
    want=$(awk '$1=="tests:" {print $2; exit}' "$T/out")
    if [ -z "$want" ] || [ "$want" -le 0 ]; then fail "$name: no 'tests: N' line in validate output"; fi

    # A 500 ms ramp: on a busy machine a start can reach the agent after its measured
    # window would have begun without one, and the agent refuses a cut window.
    expect_rc 0 "$IOFLEET" run "$f" "${sets[@]}" \
        --set run.duration=300ms --set run.ramp=500ms --set run.interval=100ms \
        --workdir "$T/w" --quiet
    got=$(grep -c '^== test' "$T/out" || true)
    [ "$got" = "$want" ] || { cat "$T/out"; fail "$name: $got result tables, validate expands $want tests"; }
    # No table reports errors in its ALL row (last column).
    awk '$1=="ALL" && $NF != 0 { print "errors in: " $0; bad=1 } END { exit bad }' "$T/out" ||
        fail "$name: I/O errors"
    ok "$name: $got tests ran"
    nplans=$((nplans + 1))
    ntests=$((ntests + got))
    rm -rf "$T/w"
done
[ "$nplans" -gt 0 ] || fail "no plans in configs/"
elapsed=$((SECONDS - started))
# The cost is counted in tests (each 300 ms measured), not in seconds of a machine
# that may be busy: at most 100 tests keep the shipped plans cheap to check.
[ "$ntests" -le 100 ] || fail "$ntests tests (${elapsed}s): keep the shipped plans cheap to check (at most 100 tests)"
ok "$nplans plans, $ntests tests in ${elapsed}s"
