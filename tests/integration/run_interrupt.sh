# SIGINT mid-test: the run stops promptly, prints what was measured, exits 130.
source "$(dirname "$0")/lib/common.bash"

plan long.json <<'P'
{"name": "long", "run": {"ramp": "0s", "duration": "60s", "interval": "200ms"},
 "specs": [{"name": "first", "lines": [{"size": "4k"}]}, {"name": "never", "lines": [{"size": "4k"}]}],
 "workers": [{"engine": "null", "queue_depth": 8, "targets": [{"path": "n", "size": "1g"}]}]}
P
"$IOFLEET" run "$T/long.json" --workdir "$T/w" >"$T/out" 2>"$T/err" &
pid=$!
iof_on_exit "kill -9 $pid 2>/dev/null"
sleep 1.5
t0=$(date +%s%N)
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
t1=$(date +%s%N)
[ "$rc" = 130 ] || { cat "$T/out" "$T/err"; fail "exit $rc, expected 130"; }
[ $(( (t1 - t0) / 1000000 )) -lt 3000 ] || fail "took $(( (t1 - t0) / 1000000 )) ms to stop"
expect_in "$T/out" "== test 1/2: first"
expect_in "$T/out" "INTERRUPTED"
if grep -q "test 2/2" "$T/out"; then fail "second test started after interrupt"; fi
measured=$(sed -n 's/.*measured \([0-9.]*\) s.*/\1/p' "$T/out")
awk -v m="$measured" 'BEGIN { exit !(m > 0.5 && m < 5) }' || fail "measured window $measured s"
iops=$(row_field "$T/out" ALL 3)
awk -v i="$iops" 'BEGIN { exit !(i > 0) }' || fail "no I/O counted"
ok "interrupted after ${measured}s with $iops IOPS recorded, exit 130"
