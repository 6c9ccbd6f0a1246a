# SPDX-License-Identifier: Apache-2.0
# A run of several tests ends with one summary table of every test on stdout
# (after the last test's table): per test its spec, the ALL row's IOPS, MiB/s,
# read and write mean and p99 latency, and how it ended (ok, interrupted);
# a test the run did not reach is counted. Not with --quiet, not for a run
# of one test. Null engine, the local agent.
source "$(dirname "$0")/lib/common.bash"

RUNOPTS=(--no-db --set run.duration=300ms --set run.ramp=0s --set run.interval=100ms
    --workdir "$T/w")

plan p.json <<'EOF'
{
  "name": "summary",
  "specs": [{"name": "4k read", "lines": [{"size": "4k", "read": 100, "random": 100}]},
            {"name": "64k write", "lines": [{"size": "64k", "read": 0, "random": 0}]},
            {"name": "8k mix", "lines": [{"size": "8k", "read": 50, "random": 100}]}],
  "workers": [{"count": 2, "engine": "null", "queue_depth": 2,
               "targets": [{"path": "s.dat", "size": "4m"}]}]
}
EOF

# summary FILE: the summary's lines after its header, as "test|spec|IOPS|status".
summary() {
    awk '/^== summary: / { on = 1; next }
         on && $1 == "test" { next }
         on && /^[0-9]+ / { spec = $0; sub(/^[0-9]+ +/, "", spec); sub(/  +[-0-9.]+ .*$/, "", spec)
                                 for (i = 2; i <= NF; i++) if ($i ~ /^([0-9]+\.[0-9]|-)$/) { iops = $i; break }
                                 print $1 "|" spec "|" iops "|" $NF }' "$1"
}

# --- three tests: the summary after the last table, one line each, the tables' IOPS.
expect_rc 0 "$IOFLEET" run "$T/p.json" "${RUNOPTS[@]}"
cp "$T/out" "$T/three.out"
grep -q '^== summary: 3 tests$' "$T/three.out" || { cat "$T/three.out"; fail "no summary of 3 tests"; }
[ "$(grep -n '^== ' "$T/three.out" | tail -n1 | cut -d: -f2-)" = "== summary: 3 tests" ] ||
    { cat "$T/three.out"; fail "the summary is not after the last table"; }
grep -q '^test  *spec  *IOPS  *MiB/s  *r_avg  *r_p99  *w_avg  *w_p99  *status$' "$T/three.out" ||
    { cat "$T/three.out"; fail "the summary's header is not every column"; }
tables=$(awk '/^== test [0-9]+\/3: / { split($3, a, "/"); t = a[1] + 0; spec = $0
                                      sub(/^== test [0-9]+\/3: /, "", spec); sub(/  measured .*/, "", spec) }
              $1 == "ALL" { print t "|" spec "|" $3 "|ok" }' "$T/three.out")
got=$(summary "$T/three.out")
[ "$got" = "$tables" ] || { cat "$T/three.out"; echo "--- tables:"; echo "$tables"; echo "--- summary:"; echo "$got"; fail "the summary does not repeat the tables' ALL rows"; }
[ "$(printf '%s\n' "$got" | wc -l)" = 3 ] || fail "the summary has not 3 tests: $got"
# Reads only in test 1: no write latency; writes only in test 2: no read latency.
awk '/^== summary/ { on = 1 } on && $1 == "1" && $(NF-2) == "-" && $(NF-4) != "-" { f1 = 1 }
     on && $1 == "2" && $(NF-4) == "-" && $(NF-2) != "-" { f2 = 1 } END { exit !(f1 && f2) }' \
    "$T/three.out" || { cat "$T/three.out"; fail "read / write latencies not where the I/O was"; }
if grep -q 'tests ran' "$T/three.out"; then fail "every test ran, but the summary says some did not"; fi
ok "3 tests: the summary repeats each table's ALL row: $(printf '%s\n' "$got" | tr '\n' ' ')"

# --- --quiet: the tables, no summary; one test: no summary.
expect_rc 0 "$IOFLEET" run "$T/p.json" "${RUNOPTS[@]}" --quiet
[ "$(grep -c '^== test' "$T/out")" = 3 ] || fail "--quiet: not 3 tables"
if grep -q '^== summary' "$T/out"; then fail "--quiet: a summary was printed"; fi
jq '.specs = [.specs[0]]' "$T/p.json" >"$T/one.json"
expect_rc 0 "$IOFLEET" run "$T/one.json" "${RUNOPTS[@]}"
if grep -q '^== summary' "$T/out"; then fail "one test: a summary was printed"; fi
ok "no summary with --quiet or for a single test"

# --- interrupted in test 2 (of 3; tests 2 and 3 last 60 s): test 1 ok, test 2
# interrupted, test 3 counted as not run; exit 130.
jq '.specs[1].duration = "60s" | .specs[2].duration = "60s"' "$T/p.json" >"$T/long.json"
"$IOFLEET" run "$T/long.json" "${RUNOPTS[@]}" >"$T/int.out" 2>"$T/int.err" &
RUN=$!
iof_on_exit "kill $RUN 2>/dev/null; wait $RUN 2>/dev/null"
for _ in $(seq 600); do
    grep -q '^\[run\] test 2/3' "$T/int.err" && break
    kill -0 "$RUN" 2>/dev/null || break
    sleep 0.1
done
grep -q '^\[run\] test 2/3' "$T/int.err" || fail "test 2 did not start: $(cat "$T/int.err")"
kill -INT "$RUN"
rc=0
wait "$RUN" || rc=$?
[ "$rc" = 130 ] || fail "interrupted run exited $rc: $(cat "$T/int.err")"
got=$(summary "$T/int.out" | cut -d'|' -f1,2,4 | tr '\n' ' ')
[ "$got" = "1|4k read|ok 2|64k write|interrupted " ] ||
    { cat "$T/int.out"; fail "interrupted run's summary: $got"; }
expect_in "$T/int.out" "  2 of the plan's 3 tests ran"
ok "interrupted in test 2: $got; 2 of 3 tests ran"
